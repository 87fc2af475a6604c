/// legalize-tf: fake quantization, what quantization-aware training writes
/// (tf.quantization.fake_quant_with_min_max_args and _vars, Keras QAT
/// wrappers): FakeQuantWithMinMaxArgs and FakeQuantWithMinMaxVars, and
/// their gradients FakeQuantWithMinMaxArgsGradient and
/// FakeQuantWithMinMaxVarsGradient, with core ops in f32 in TensorFlow's
/// kernels' order of operations.
///
/// The range [min, max] is first nudged so that zero is exactly
/// representable: with q_min = narrow_range ? 1 : 0, q_max = 2^num_bits - 1
/// and scale = (max - min) / (q_max - q_min), the zero point q_min - min /
/// scale is clamped to [q_min, q_max] and rounded (half away from zero);
/// nudged_min = (q_min - zp) * scale, nudged_max = (q_max - zp) * scale.
/// Then out = floor((clamp(x, nudged_min, nudged_max) - nudged_min) *
/// (1 / scale) + 0.5) * scale + nudged_min. The gradient passes dy where
/// nudged_min <= x <= nudged_max; the Vars gradient also sums dy below the
/// range (d min) and above it (d max).
#include "lower/tf/tf_lower_internal.h"

#include <math.h>
#include <string.h>

static const char *const QUANT_OPS[] = {
    "FakeQuantWithMinMaxArgs",
    "FakeQuantWithMinMaxArgsGradient",
    "FakeQuantWithMinMaxVars",
    "FakeQuantWithMinMaxVarsGradient",
};

void eddy_tfl_quant_ops_each(void (*fn)(const char *name, void *user),
                             void *user) {
  for (size_t i = 0; i < sizeof QUANT_OPS / sizeof QUANT_OPS[0]; i++)
    fn(QUANT_OPS[i], user);
}

/// The nudged range and scale, f32 scalars.
typedef struct nudged {
  eddy_value_t *min, *max, *scale;
} nudged_t;

static eddy_status_t f32(eddy_tfl_t *z, double x, eddy_value_t **out) {
  return eddy_tfl_splat(z, EDDY_DT_F32, 0, NULL, x, out);
}

/// The number of bits and the narrow range of op, as q_min and q_max.
static eddy_status_t quant_range(const eddy_op_t *op, float *qmin,
                                 float *qmax) {
  int64_t bits = eddy_ir_op_attr_int(op, "num_bits", 8);
  if (bits < 2 || bits > 16)
    return eddy_tfl_error(op, "num_bits must be in [2, 16], got %lld",
                          (long long)bits);
  *qmin = eddy_ir_op_attr_bool(op, "narrow_range", false) ? 1.0f : 0.0f;
  *qmax = (float)((1 << bits) - 1);
  return NULL;
}

/// Args: min and max are attributes; the nudge is computed here, in f32.
static eddy_status_t nudge_const(eddy_tfl_t *z, const eddy_op_t *op,
                                 nudged_t *n) {
  float qmin = 0.0f, qmax = 0.0f;
  EDDY_RETURN_IF_ERROR(quant_range(op, &qmin, &qmax));
  float lo = (float)eddy_ir_op_attr_float(op, "min", -6.0),
        hi = (float)eddy_ir_op_attr_float(op, "max", 6.0);
  if (!(lo < hi))
    return eddy_tfl_error(op, "min (%g) must be smaller than max (%g)",
                          (double)lo, (double)hi);
  float scale = (hi - lo) / (qmax - qmin);
  float zp0 = qmin - lo / scale;
  float zp = zp0 < qmin ? qmin : zp0 > qmax ? qmax : roundf(zp0);
  EDDY_RETURN_IF_ERROR(f32(z, (qmin - zp) * scale, &n->min));
  EDDY_RETURN_IF_ERROR(f32(z, (qmax - zp) * scale, &n->max));
  return f32(z, scale, &n->scale);
}

/// Vars: min and max are run-time scalars (operands 1 and 2 of the op,
/// from `first`); the same nudge with core ops.
static eddy_status_t nudge_vars(eddy_tfl_t *z, const eddy_op_t *op,
                                uint32_t first, nudged_t *n) {
  float qmin = 0.0f, qmax = 0.0f;
  EDDY_RETURN_IF_ERROR(quant_range(op, &qmin, &qmax));
  eddy_value_t *lo = NULL, *hi = NULL, *qlo = NULL, *qhi = NULL, *d = NULL,
               *zp = NULL, *t = NULL, *half = NULL, *fl = NULL, *up = NULL,
               *one = NULL, *r = NULL;
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_cast(z, op, tfl_in(z, op, first), EDDY_DT_F32, &lo));
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_cast(z, op, tfl_in(z, op, first + 1), EDDY_DT_F32, &hi));
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, lo, NULL, 0, &lo));
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, hi, NULL, 0, &hi));
  EDDY_RETURN_IF_ERROR(f32(z, qmin, &qlo));
  EDDY_RETURN_IF_ERROR(f32(z, qmax, &qhi));
  EDDY_RETURN_IF_ERROR(f32(z, qmax - qmin, &d));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.sub", hi, lo, &n->scale));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.div", n->scale, d, &n->scale));
  // zp = clamp(q_min - min / scale, q_min, q_max), rounded half away from
  // zero (it is >= 0 there: floor, plus 1 from a half up).
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.div", lo, n->scale, &t));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.sub", qlo, t, &zp));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.maximum", zp, qlo, &zp));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.minimum", zp, qhi, &zp));
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build(z, op, "core.floor", &zp, 1, NULL, 0, &fl));
  EDDY_RETURN_IF_ERROR(f32(z, 0.5, &half));
  EDDY_RETURN_IF_ERROR(f32(z, 1.0, &one));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.sub", zp, fl, &t));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.ge", t, half, &up));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.add", fl, one, &r));
  EDDY_RETURN_IF_ERROR(tfl_sel(z, op, up, r, fl, &zp));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.sub", qlo, zp, &t));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.mul", t, n->scale, &n->min));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.sub", qhi, zp, &t));
  return tfl_bin(z, op, "core.mul", t, n->scale, &n->max);
}

/// floor((clamp(x) - nudged_min) * (1 / scale) + 0.5) * scale + nudged_min.
static eddy_status_t fake_quant(eddy_tfl_t *z, const eddy_op_t *op,
                                eddy_value_t *x, const nudged_t *n,
                                eddy_value_t **out) {
  eddy_value_t *v = NULL, *one = NULL, *inv = NULL, *half = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, x, EDDY_DT_F32, &v));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.maximum", v, n->min, &v));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.minimum", v, n->max, &v));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.sub", v, n->min, &v));
  EDDY_RETURN_IF_ERROR(f32(z, 1.0, &one));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.div", one, n->scale, &inv));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.mul", v, inv, &v));
  EDDY_RETURN_IF_ERROR(f32(z, 0.5, &half));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.add", v, half, &v));
  eddy_value_t *f = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.floor", &v, 1, NULL, 0, &f));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.mul", f, n->scale, &v));
  return tfl_bin(z, op, "core.add", v, n->min, out);
}

/// The masks of x below, inside and above the nudged range.
static eddy_status_t ranges(eddy_tfl_t *z, const eddy_op_t *op,
                            eddy_value_t *x, const nudged_t *n,
                            eddy_value_t **below, eddy_value_t **inside,
                            eddy_value_t **above) {
  eddy_value_t *v = NULL, *ge = NULL, *le = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, x, EDDY_DT_F32, &v));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.lt", v, n->min, below));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.gt", v, n->max, above));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.ge", v, n->min, &ge));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.le", v, n->max, &le));
  return tfl_bin(z, op, "core.and", ge, le, inside);
}

/// dy where the mask holds, 0 elsewhere; *sum: its sum over all elements.
static eddy_status_t masked(eddy_tfl_t *z, const eddy_op_t *op,
                            eddy_value_t *dy, eddy_value_t *mask,
                            eddy_value_t **out, eddy_value_t **sum) {
  eddy_value_t *zero = NULL;
  EDDY_RETURN_IF_ERROR(tfl_scalar_like(z, dy, 0.0, &zero));
  EDDY_RETURN_IF_ERROR(tfl_sel(z, op, mask, dy, zero, out));
  if (!sum)
    return NULL;
  const eddy_type_t *t = (*out)->type;
  if (t->rank == EDDY_RANK_UNKNOWN || t->rank > EDDY_TFL_MAX_RANK)
    return eddy_tfl_error(op, "the gradient needs a known rank");
  int64_t axes[EDDY_TFL_MAX_RANK];
  for (int32_t i = 0; i < t->rank; i++)
    axes[i] = i;
  return eddy_tfl_reduce(z, op, "core.reduce_sum", *out, axes,
                         (size_t)t->rank, false, sum);
}

eddy_status_t eddy_tfl_lower_quant_op(eddy_tfl_t *z, const eddy_op_t *op,
                                      bool *handled) {
  const char *t = op->name->str + 3;
  size_t i = 0;
  while (i < sizeof QUANT_OPS / sizeof QUANT_OPS[0] &&
         strcmp(t, QUANT_OPS[i]) != 0)
    i++;
  *handled = i < sizeof QUANT_OPS / sizeof QUANT_OPS[0];
  if (!*handled)
    return NULL;
  // QUANT_OPS: Args, ArgsGradient, Vars, VarsGradient.
  bool vars = i >= 2, grad = i % 2 == 1;
  nudged_t n = {0};
  // (inputs[, min, max]) or (gradients, inputs[, min, max]).
  uint32_t xi = grad ? 1 : 0;
  if (vars)
    EDDY_RETURN_IF_ERROR(nudge_vars(z, op, xi + 1, &n));
  else
    EDDY_RETURN_IF_ERROR(nudge_const(z, op, &n));
  eddy_value_t *x = tfl_in(z, op, xi), *r = NULL;
  if (x->type->dtype != EDDY_DT_F32)
    return eddy_tfl_error(op, "only f32 inputs are supported");
  if (!grad) {
    EDDY_RETURN_IF_ERROR(fake_quant(z, op, x, &n, &r));
    tfl_out1(z, op, r);
    return NULL;
  }
  eddy_value_t *below = NULL, *inside = NULL, *above = NULL, *dy = NULL,
               *dmin = NULL, *dmax = NULL, *unused = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, tfl_in(z, op, 0), EDDY_DT_F32, &dy));
  EDDY_RETURN_IF_ERROR(ranges(z, op, x, &n, &below, &inside, &above));
  EDDY_RETURN_IF_ERROR(masked(z, op, dy, inside, &r, NULL));
  eddy_tfl_set(z, &op->results[0], r);
  if (vars) {
    EDDY_RETURN_IF_ERROR(masked(z, op, dy, below, &unused, &dmin));
    EDDY_RETURN_IF_ERROR(masked(z, op, dy, above, &unused, &dmax));
    eddy_tfl_set(z, &op->results[1], dmin);
    eddy_tfl_set(z, &op->results[2], dmax);
  }
  return NULL;
}

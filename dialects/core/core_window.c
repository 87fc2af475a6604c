/// Shape functions of the sliding-window ops over NHWC tensors: conv2d, its
/// input and filter gradients, max_pool, avg_pool and their gradients
/// (semantics in docs/dialects/core.md). Every size follows
/// eddy_scalar_window_out, which the kernels and the emitter share.
#include "dialects/core/core_internal.h"
#include "dialects/dialects_internal.h"
#include "runtime/scalar.h"

#include <string.h>

/// Reads an optional attribute of exactly n integers, each >= lo (dflt when
/// absent).
static eddy_status_t read_ints(eddy_infer_ctx_t *ic, const char *name,
                               bool optional, int32_t n, int64_t dflt,
                               int64_t lo, int64_t *out) {
  int64_t v[EDDY_CORE_MAX_RANK];
  int32_t len;
  EDDY_RETURN_IF_ERROR(eddy_core_attr_ints(ic, name, optional, v, &len));
  if (len < 0) {
    for (int32_t i = 0; i < n; i++)
      out[i] = dflt;
    return NULL;
  }
  if (len != n)
    return eddy_ir_infer_error(ic, "attribute '%s' must have %d entries, got %d",
                               name, n, len);
  for (int32_t i = 0; i < n; i++) {
    if (v[i] < lo || v[i] > ((int64_t)1 << 40))
      return eddy_ir_infer_error(ic, "attribute '%s' entry %d is %lld, out of "
                                     "range",
                                 name, i, (long long)v[i]);
    out[i] = v[i];
  }
  return NULL;
}

/// Operand i: a rank-4 float tensor (unranked is refused: NHWC needs the
/// dims' positions).
static eddy_status_t rank4(eddy_infer_ctx_t *ic, size_t i, const char *what) {
  EDDY_RETURN_IF_ERROR(eddy_core_check_dtype(ic, i, EDDY_CORE_DT_FLOAT));
  const eddy_type_t *t = ic->operand_types[i];
  if (t->rank != 4)
    return eddy_ir_infer_error(ic, "the %s must be a rank-4 tensor, got rank "
                                   "%d",
                               what, (int)t->rank);
  return NULL;
}

/// Two dims that must agree where both are static.
static eddy_status_t same_dim(eddy_infer_ctx_t *ic, int64_t a, int64_t b,
                              const char *what) {
  if (a != EDDY_DIM_DYNAMIC && b != EDDY_DIM_DYNAMIC && a != b)
    return eddy_ir_infer_error(ic, "%s: %lld and %lld differ", what,
                               (long long)a, (long long)b);
  return NULL;
}

/// The number of window positions along spatial dim j (0: height, 1:
/// width) of an input dim n; dynamic when n is.
static eddy_status_t positions(eddy_infer_ctx_t *ic,
                               const eddy_core_window_t *w, int j, int64_t n,
                               int64_t *out) {
  if (n == EDDY_DIM_DYNAMIC) {
    *out = EDDY_DIM_DYNAMIC;
    return NULL;
  }
  *out = eddy_scalar_window_out(n, w->pads[2 * j], w->pads[2 * j + 1],
                                w->size[j], w->dilations[j], w->strides[j]);
  if (*out < 0)
    return eddy_ir_infer_error(ic,
                               "the %s (%lld, padded by %lld and %lld) is "
                               "shorter than the window (%lld taps, "
                               "dilation %lld)",
                               j ? "width" : "height", (long long)n,
                               (long long)w->pads[2 * j],
                               (long long)w->pads[2 * j + 1],
                               (long long)w->size[j],
                               (long long)w->dilations[j]);
  return NULL;
}

/// Checks an adjoint's spatial dims (dy, dims 1 and 2) against the window
/// positions of an input of spatial dims hw.
static eddy_status_t check_dy(eddy_infer_ctx_t *ic,
                              const eddy_core_window_t *w, const int64_t *hw,
                              const eddy_type_t *dy) {
  for (int j = 0; j < 2; j++) {
    int64_t p;
    EDDY_RETURN_IF_ERROR(positions(ic, w, j, hw[j], &p));
    EDDY_RETURN_IF_ERROR(same_dim(ic, dy->dims[1 + j], p,
                                  j ? "the adjoint's width and the window "
                                      "positions"
                                    : "the adjoint's height and the window "
                                      "positions"));
  }
  return NULL;
}

eddy_status_t eddy_core_infer_window(eddy_infer_ctx_t *ic) {
  EDDY_RETURN_IF_ERROR(eddy_core_check_operands(ic));
  eddy_core_op_kind_t k = eddy_core_op_kind(ic->def);
  bool conv = k == EDDY_CORE_OP_CONV2D || k == EDDY_CORE_OP_CONV2D_INPUT_GRAD ||
              k == EDDY_CORE_OP_CONV2D_FILTER_GRAD;
  eddy_core_window_t w;
  EDDY_RETURN_IF_ERROR(read_ints(ic, "strides", true, 2, 1, 1, w.strides));
  EDDY_RETURN_IF_ERROR(read_ints(ic, "pads", true, 4, 0, 0, w.pads));
  if (conv)
    EDDY_RETURN_IF_ERROR(
        read_ints(ic, "dilations", true, 2, 1, 1, w.dilations));
  else {
    w.dilations[0] = w.dilations[1] = 1;
    EDDY_RETURN_IF_ERROR(read_ints(ic, "window", false, 2, 1, 1, w.size));
  }
  for (size_t i = 0; i < ic->num_operands; i++)
    EDDY_RETURN_IF_ERROR(rank4(ic, i, i ? "second operand" : "first operand"));
  if (ic->num_operands == 2)
    EDDY_RETURN_IF_ERROR(eddy_core_check_same_dtype(ic, 0, 1));
  const eddy_type_t *a = ic->operand_types[0];
  const eddy_type_t *b = ic->num_operands > 1 ? ic->operand_types[1] : NULL;
  eddy_dtype_t dt = a->dtype;
  int64_t out[4], hw[2];
  switch (k) {
  case EDDY_CORE_OP_CONV2D:
  case EDDY_CORE_OP_CONV2D_INPUT_GRAD: {
    // b is the filter [KH, KW, C, O].
    if (b->dims[0] == EDDY_DIM_DYNAMIC || b->dims[1] == EDDY_DIM_DYNAMIC)
      return eddy_ir_infer_error(ic, "the filter's height and width must be "
                                     "static");
    w.size[0] = b->dims[0];
    w.size[1] = b->dims[1];
    if (k == EDDY_CORE_OP_CONV2D) {
      EDDY_RETURN_IF_ERROR(same_dim(ic, a->dims[3], b->dims[2],
                                    "the input's channels and the filter's"));
      out[0] = a->dims[0];
      EDDY_RETURN_IF_ERROR(positions(ic, &w, 0, a->dims[1], &out[1]));
      EDDY_RETURN_IF_ERROR(positions(ic, &w, 1, a->dims[2], &out[2]));
      out[3] = b->dims[3];
      break;
    }
    EDDY_RETURN_IF_ERROR(read_ints(ic, "input_size", false, 2, 0, 0, hw));
    EDDY_RETURN_IF_ERROR(same_dim(ic, a->dims[3], b->dims[3],
                                  "the adjoint's channels and the filter's "
                                  "outputs"));
    EDDY_RETURN_IF_ERROR(check_dy(ic, &w, hw, a));
    out[0] = a->dims[0];
    out[1] = hw[0];
    out[2] = hw[1];
    out[3] = b->dims[2];
    break;
  }
  case EDDY_CORE_OP_CONV2D_FILTER_GRAD:
    // a is the input, b the adjoint of the output.
    EDDY_RETURN_IF_ERROR(read_ints(ic, "filter_size", false, 2, 0, 1, w.size));
    EDDY_RETURN_IF_ERROR(same_dim(ic, a->dims[0], b->dims[0],
                                  "the input's batch and the adjoint's"));
    EDDY_RETURN_IF_ERROR(check_dy(ic, &w, &a->dims[1], b));
    out[0] = w.size[0];
    out[1] = w.size[1];
    out[2] = a->dims[3];
    out[3] = b->dims[3];
    break;
  case EDDY_CORE_OP_MAX_POOL:
  case EDDY_CORE_OP_AVG_POOL:
    if (k == EDDY_CORE_OP_MAX_POOL && ic->num_operands > 2)
      return eddy_ir_infer_error(ic, "takes one or two operands, got %zu",
                                 ic->num_operands);
    for (int j = 0; b && j < 4; j++)
      EDDY_RETURN_IF_ERROR(same_dim(ic, a->dims[j], b->dims[j],
                                    "the input's dims and the selected "
                                    "operand's"));
    out[0] = a->dims[0];
    EDDY_RETURN_IF_ERROR(positions(ic, &w, 0, a->dims[1], &out[1]));
    EDDY_RETURN_IF_ERROR(positions(ic, &w, 1, a->dims[2], &out[2]));
    out[3] = a->dims[3];
    break;
  case EDDY_CORE_OP_MAX_POOL_GRAD:
    // a is the pool's input, b the adjoint of its output.
    EDDY_RETURN_IF_ERROR(same_dim(ic, a->dims[0], b->dims[0],
                                  "the input's batch and the adjoint's"));
    EDDY_RETURN_IF_ERROR(same_dim(ic, a->dims[3], b->dims[3],
                                  "the input's channels and the adjoint's"));
    EDDY_RETURN_IF_ERROR(check_dy(ic, &w, &a->dims[1], b));
    memcpy(out, a->dims, sizeof out);
    break;
  case EDDY_CORE_OP_AVG_POOL_GRAD:
    EDDY_RETURN_IF_ERROR(read_ints(ic, "input_size", false, 2, 0, 0, hw));
    EDDY_RETURN_IF_ERROR(check_dy(ic, &w, hw, a));
    out[0] = a->dims[0];
    out[1] = hw[0];
    out[2] = hw[1];
    out[3] = a->dims[3];
    break;
  default:
    return eddy_ir_infer_error(ic, "is not a sliding-window op");
  }
  eddy_core_push(ic, dt, 4, out);
  return NULL;
}

bool eddy_core_window_get(const eddy_op_t *op, eddy_core_window_t *out) {
  eddy_core_op_kind_t k = eddy_core_op_kind(op->def);
  bool conv = k == EDDY_CORE_OP_CONV2D || k == EDDY_CORE_OP_CONV2D_INPUT_GRAD ||
              k == EDDY_CORE_OP_CONV2D_FILTER_GRAD;
  bool pool = k == EDDY_CORE_OP_MAX_POOL || k == EDDY_CORE_OP_AVG_POOL ||
              k == EDDY_CORE_OP_MAX_POOL_GRAD ||
              k == EDDY_CORE_OP_AVG_POOL_GRAD;
  if (!conv && !pool)
    return false;
  static const struct {
    const char *name;
    int n;
    int64_t dflt;
    size_t off;
  } fields[] = {
      {"strides", 2, 1, offsetof(eddy_core_window_t, strides)},
      {"dilations", 2, 1, offsetof(eddy_core_window_t, dilations)},
      {"pads", 4, 0, offsetof(eddy_core_window_t, pads)},
      {"window", 2, 1, offsetof(eddy_core_window_t, size)},
      {"filter_size", 2, 1, offsetof(eddy_core_window_t, size)},
  };
  for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) {
    int64_t *dst = (int64_t *)((char *)out + fields[f].off);
    const eddy_attr_t *a = eddy_ir_op_attr(op, fields[f].name);
    if (f < 4 || a) // filter_size only where present
      if (!a || eddy_ir_attr_as_i64_array(a, dst, fields[f].n) != fields[f].n)
        for (int i = 0; i < fields[f].n; i++)
          dst[i] = fields[f].dflt;
  }
  if (k == EDDY_CORE_OP_CONV2D || k == EDDY_CORE_OP_CONV2D_INPUT_GRAD) {
    const eddy_type_t *f = eddy_ir_op_operand((eddy_op_t *)op, 1)->type;
    out->size[0] = f->dims[0];
    out->size[1] = f->dims[1];
  }
  return true;
}

size_t eddy_core_window_attrs(eddy_ctx_t *ctx, const char *name,
                              const eddy_core_window_t *w,
                              const char *size_name, const int64_t *size,
                              eddy_named_attr_t *out) {
  bool conv = strncmp(name, "core.conv2d", 11) == 0;
  size_t n = 0;
#define ARR(nm, v, k)                                                          \
  out[n++] = eddy_ir_named_attr(ctx, nm, eddy_ir_i64_array_attr_get(ctx, v, k))
  if (conv)
    ARR("dilations", w->dilations, 2);
  ARR("pads", w->pads, 4);
  ARR("strides", w->strides, 2);
  if (!conv)
    ARR("window", w->size, 2);
  if (size_name)
    ARR(size_name, size, 2);
#undef ARR
  return n;
}

/// legalize-tf: the rules for TensorFlow's sliding-window ops, Conv2D,
/// MaxPool and AvgPool, and their gradients Conv2DBackpropInput,
/// Conv2DBackpropFilter, MaxPoolGrad and AvgPoolGrad (what Keras' Conv1D,
/// Conv2D and pooling layers and their gradients write; Conv1D and the 1-D
/// pools reach them through ExpandDims and Squeeze). Each becomes one core
/// op of docs/dialects/core.md: NHWC only, TensorFlow's SAME, VALID and
/// EXPLICIT paddings as explicit pads.
#include "lower/tf/tf_lower_internal.h"

#include "dialects/core/core.h"
#include "runtime/scalar.h"

#include <string.h>

static const char *const WINDOW_OPS[] = {
    "Conv2D",  "Conv2DBackpropInput", "Conv2DBackpropFilter",
    "MaxPool", "AvgPool",             "MaxPoolGrad",
    "AvgPoolGrad",
};

void eddy_tfl_window_ops_each(void (*fn)(const char *name, void *user),
                              void *user) {
  for (size_t i = 0; i < sizeof WINDOW_OPS / sizeof WINDOW_OPS[0]; i++)
    fn(WINDOW_OPS[i], user);
}

/// A string attribute of op, or dflt when absent.
static const char *str_attr(const eddy_op_t *op, const char *name,
                            const char *dflt) {
  const eddy_attr_t *a = eddy_ir_op_attr(op, name);
  return a && a->kind == EDDY_ATTR_STRING ? a->u.str.data : dflt;
}

/// A list(int) attribute of exactly n entries (dflt, when given, if
/// absent).
static eddy_status_t ints_attr(const eddy_op_t *op, const char *name, int n,
                               const int64_t *dflt, int64_t *out) {
  const eddy_attr_t *a = eddy_ir_op_attr(op, name);
  if (!a && dflt) {
    memcpy(out, dflt, (size_t)n * sizeof *out);
    return NULL;
  }
  int64_t v[8];
  if (!a || eddy_ir_attr_as_i64_array(a, v, 8) != n)
    return eddy_tfl_error(op, "attribute '%s' must be a list of %d integers",
                          name, n);
  memcpy(out, v, (size_t)n * sizeof *out);
  return NULL;
}

/// The window's strides, dilations and pads from TensorFlow's attributes
/// (w->size already set: the filter's or ksize's spatial entries); in[j]
/// is the windowed input's spatial dim j (EDDY_DIM_DYNAMIC when unknown),
/// which SAME padding with a stride above 1 needs.
static eddy_status_t read_window(const eddy_op_t *op, const int64_t *in,
                                 eddy_core_window_t *w) {
  const char *fmt = str_attr(op, "data_format", "NHWC");
  if (strcmp(fmt, "NHWC") != 0)
    return eddy_tfl_error(op, "data_format \"%s\" is not supported (only "
                              "NHWC)",
                          fmt);
  static const int64_t ones[4] = {1, 1, 1, 1};
  int64_t s[4], d[4];
  EDDY_RETURN_IF_ERROR(ints_attr(op, "strides", 4, NULL, s));
  EDDY_RETURN_IF_ERROR(ints_attr(op, "dilations", 4, ones, d));
  if (s[0] != 1 || s[3] != 1 || d[0] != 1 || d[3] != 1)
    return eddy_tfl_error(op, "strides and dilations along the batch and the "
                              "channels must be 1");
  for (int j = 0; j < 2; j++) {
    if (s[1 + j] < 1 || d[1 + j] < 1)
      return eddy_tfl_error(op, "strides and dilations must be >= 1");
    w->strides[j] = s[1 + j];
    w->dilations[j] = d[1 + j];
  }
  const char *pad = str_attr(op, "padding", "");
  if (strcmp(pad, "VALID") == 0) {
    memset(w->pads, 0, sizeof w->pads);
    return NULL;
  }
  if (strcmp(pad, "EXPLICIT") == 0) {
    int64_t p[8];
    EDDY_RETURN_IF_ERROR(ints_attr(op, "explicit_paddings", 8, NULL, p));
    if (p[0] || p[1] || p[6] || p[7])
      return eddy_tfl_error(op, "explicit_paddings of the batch and the "
                                "channels must be 0");
    for (int k = 0; k < 4; k++) {
      if (p[2 + k] < 0)
        return eddy_tfl_error(op, "explicit_paddings must be >= 0");
      w->pads[k] = p[2 + k];
    }
    return NULL;
  }
  if (strcmp(pad, "SAME") != 0)
    return eddy_tfl_error(op, "padding \"%s\" is not supported (SAME, VALID "
                              "or EXPLICIT)",
                          pad);
  for (int j = 0; j < 2; j++) {
    int64_t eff = (w->size[j] - 1) * w->dilations[j] + 1;
    if (in[j] != EDDY_DIM_DYNAMIC) {
      eddy_scalar_window_same(in[j], w->size[j], w->dilations[j],
                              w->strides[j], &w->pads[2 * j],
                              &w->pads[2 * j + 1]);
    } else if (w->strides[j] == 1) {
      // ceil(n / 1) = n positions whatever n: the pads do not depend on it.
      w->pads[2 * j] = (eff - 1) / 2;
      w->pads[2 * j + 1] = eff - 1 - w->pads[2 * j];
    } else {
      return eddy_tfl_error(op, "SAME padding with a stride above 1 needs a "
                                "static %s",
                            j ? "width" : "height");
    }
  }
  return NULL;
}

/// The input's spatial size [H, W] an input-gradient op (or
/// Conv2DBackpropFilter's filter size [KH, KW], first = 0) must produce:
/// its shape operand when constant, else the result type's static dims,
/// else the static dims of the value whose core.shape it is (through
/// casts).
static eddy_status_t sizes(eddy_tfl_t *z, const eddy_op_t *op,
                           eddy_value_t *shape, int first, int64_t *out) {
  int64_t v[4];
  if (eddy_tfl_const_ints(z, shape, v, 4) == 4) {
    out[0] = v[first];
    out[1] = v[first + 1];
    return NULL;
  }
  const eddy_type_t *rt = op->results[0].type;
  if (rt->rank == 4 && rt->dims[first] >= 0 && rt->dims[first + 1] >= 0) {
    out[0] = rt->dims[first];
    out[1] = rt->dims[first + 1];
    return NULL;
  }
  const eddy_op_t *d = shape->def;
  while (d && tfl_is(d, "core.cast"))
    d = eddy_ir_op_operand((eddy_op_t *)d, 0)->def;
  if (tfl_is(d, "core.shape")) {
    const eddy_type_t *t = eddy_ir_op_operand((eddy_op_t *)d, 0)->type;
    if (t->rank == 4 && t->dims[first] >= 0 && t->dims[first + 1] >= 0) {
      out[0] = t->dims[first];
      out[1] = t->dims[first + 1];
      return NULL;
    }
  }
  return eddy_tfl_error(op, "the %s size must be known statically (a "
                            "constant, or the shape of a value with static "
                            "%s)",
                        first ? "input's" : "filter's",
                        first ? "height and width" : "kernel dims");
}

/// Builds core op `name` with w's attributes (and size_name = size).
static eddy_status_t build(eddy_tfl_t *z, const eddy_op_t *op,
                           const char *name, eddy_value_t *a, eddy_value_t *b,
                           const eddy_core_window_t *w, const char *size_name,
                           const int64_t *size) {
  eddy_named_attr_t at[5];
  size_t n = eddy_core_window_attrs(z->ctx, name, w, size_name, size, at);
  eddy_value_t *ops[2] = {a, b}, *r = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, name, ops, b ? 2 : 1, at, n, &r));
  tfl_out1(z, op, r);
  return NULL;
}

/// Operand v must be a rank-4 tensor (what the error names it by).
static eddy_status_t rank4(const eddy_op_t *op, eddy_value_t *v,
                           const char *what) {
  if (v->type->rank != 4)
    return eddy_tfl_error(op, "the %s must have rank 4 (NHWC)", what);
  return NULL;
}

/// The filter's static [KH, KW].
static eddy_status_t filter_taps(const eddy_op_t *op, eddy_value_t *f,
                                 eddy_core_window_t *w) {
  EDDY_RETURN_IF_ERROR(rank4(op, f, "filter"));
  if (f->type->dims[0] < 0 || f->type->dims[1] < 0)
    return eddy_tfl_error(op, "the filter's height and width must be static");
  w->size[0] = f->type->dims[0];
  w->size[1] = f->type->dims[1];
  return NULL;
}

/// ksize's spatial entries (the batch and channel entries must be 1).
static eddy_status_t ksize(const eddy_op_t *op, eddy_core_window_t *w) {
  int64_t k[4];
  EDDY_RETURN_IF_ERROR(ints_attr(op, "ksize", 4, NULL, k));
  if (k[0] != 1 || k[3] != 1 || k[1] < 1 || k[2] < 1)
    return eddy_tfl_error(op, "ksize must be [1, height, width, 1] with "
                              "height and width >= 1");
  w->size[0] = k[1];
  w->size[1] = k[2];
  w->dilations[0] = w->dilations[1] = 1;
  return NULL;
}

eddy_status_t eddy_tfl_lower_window_op(eddy_tfl_t *z, const eddy_op_t *op,
                                       bool *handled) {
  const char *t = op->name->str + 3;
  *handled = true;
  eddy_core_window_t w;
  int64_t hw[2];
  if (strcmp(t, "Conv2D") == 0) {
    eddy_value_t *x = tfl_in(z, op, 0), *f = tfl_in(z, op, 1);
    EDDY_RETURN_IF_ERROR(rank4(op, x, "input"));
    EDDY_RETURN_IF_ERROR(filter_taps(op, f, &w));
    EDDY_RETURN_IF_ERROR(read_window(op, &x->type->dims[1], &w));
    return build(z, op, "core.conv2d", x, f, &w, NULL, NULL);
  }
  if (strcmp(t, "Conv2DBackpropInput") == 0) {
    eddy_value_t *f = tfl_in(z, op, 1), *dy = tfl_in(z, op, 2);
    EDDY_RETURN_IF_ERROR(filter_taps(op, f, &w));
    EDDY_RETURN_IF_ERROR(rank4(op, dy, "out_backprop"));
    EDDY_RETURN_IF_ERROR(sizes(z, op, tfl_in(z, op, 0), 1, hw));
    EDDY_RETURN_IF_ERROR(read_window(op, hw, &w));
    return build(z, op, "core.conv2d_input_grad", dy, f, &w, "input_size",
                 hw);
  }
  if (strcmp(t, "Conv2DBackpropFilter") == 0) {
    eddy_value_t *x = tfl_in(z, op, 0), *dy = tfl_in(z, op, 2);
    EDDY_RETURN_IF_ERROR(rank4(op, x, "input"));
    EDDY_RETURN_IF_ERROR(rank4(op, dy, "out_backprop"));
    EDDY_RETURN_IF_ERROR(sizes(z, op, tfl_in(z, op, 1), 0, w.size));
    EDDY_RETURN_IF_ERROR(read_window(op, &x->type->dims[1], &w));
    return build(z, op, "core.conv2d_filter_grad", x, dy, &w, "filter_size",
                 w.size);
  }
  bool max = strncmp(t, "MaxPool", 7) == 0;
  if (strcmp(t, "MaxPool") == 0 || strcmp(t, "AvgPool") == 0) {
    eddy_value_t *x = tfl_in(z, op, 0);
    EDDY_RETURN_IF_ERROR(rank4(op, x, "input"));
    EDDY_RETURN_IF_ERROR(ksize(op, &w));
    EDDY_RETURN_IF_ERROR(read_window(op, &x->type->dims[1], &w));
    return build(z, op, max ? "core.max_pool" : "core.avg_pool", x, NULL, &w,
                 NULL, NULL);
  }
  if (strcmp(t, "MaxPoolGrad") == 0) {
    // (orig_input, orig_output, grad): the maxima are found again in
    // orig_input, so orig_output is not read.
    eddy_value_t *x = tfl_in(z, op, 0), *dy = tfl_in(z, op, 2);
    EDDY_RETURN_IF_ERROR(rank4(op, x, "orig_input"));
    EDDY_RETURN_IF_ERROR(rank4(op, dy, "grad"));
    EDDY_RETURN_IF_ERROR(ksize(op, &w));
    EDDY_RETURN_IF_ERROR(read_window(op, &x->type->dims[1], &w));
    return build(z, op, "core.max_pool_grad", x, dy, &w, NULL, NULL);
  }
  if (strcmp(t, "AvgPoolGrad") == 0) {
    eddy_value_t *dy = tfl_in(z, op, 1);
    EDDY_RETURN_IF_ERROR(rank4(op, dy, "grad"));
    EDDY_RETURN_IF_ERROR(ksize(op, &w));
    EDDY_RETURN_IF_ERROR(sizes(z, op, tfl_in(z, op, 0), 1, hw));
    EDDY_RETURN_IF_ERROR(read_window(op, hw, &w));
    return build(z, op, "core.avg_pool_grad", dy, NULL, &w, "input_size", hw);
  }
  *handled = false;
  return NULL;
}

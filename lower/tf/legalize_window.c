/// legalize-tf: the rules for TensorFlow's sliding-window ops, Conv2D,
/// MaxPool and AvgPool, and their gradients Conv2DBackpropInput,
/// Conv2DBackpropFilter, MaxPoolGrad and AvgPoolGrad (MaxPoolV2 and
/// MaxPoolGradV2: ksize and strides as constant operands) (what Keras' Conv1D,
/// Conv2D and pooling layers and their gradients write; Conv1D and the 1-D
/// pools reach them through ExpandDims and Squeeze). Each becomes one core
/// op of docs/dialects/core.md: NHWC only, TensorFlow's SAME, VALID and
/// EXPLICIT paddings as explicit pads. Around them, what Keras' other
/// convolution and image layers write, with the same core ops:
/// DepthwiseConv2dNative and its gradients (a conv2d with a block-diagonal
/// filter), and ResizeBilinear, ResizeBicubic,
/// ResizeNearestNeighbor, ResizeArea and the gradients of the first three
/// (products with constant interpolation matrices), and Conv3D and its
/// gradients Conv3DBackpropInputV2 and Conv3DBackpropFilterV2 (NDHWC: one
/// conv2d over the depth taps stacked along the channels), and LRN and
/// LRNGrad (a product with a band matrix over the channels).
#include "lower/tf/tf_lower_internal.h"

#include "dialects/core/core.h"
#include "runtime/scalar.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const WINDOW_OPS[] = {
    "Conv2D",
    "Conv2DBackpropInput",
    "Conv2DBackpropFilter",
    "MaxPool",
    "AvgPool",
    "MaxPoolGrad",
    "MaxPoolV2",
    "MaxPoolGradV2",
    "AvgPoolGrad",
    "DepthwiseConv2dNative",
    "DepthwiseConv2dNativeBackpropInput",
    "DepthwiseConv2dNativeBackpropFilter",
    "ResizeBilinear",
    "ResizeBilinearGrad",
    "ResizeNearestNeighbor",
    "ResizeNearestNeighborGrad",
    "ResizeBicubic",
    "ResizeBicubicGrad",
    "ResizeArea",
    "Conv3D",
    "Conv3DBackpropInputV2",
    "Conv3DBackpropFilterV2",
    "MaxPool3D",
    "MaxPool3DGrad",
    "AvgPool3D",
    "AvgPool3DGrad",
    "LRN",
    "LRNGrad",
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

/// The names of nsp spatial dims (2: height, width; 3: depth too).
static const char *spatial_name(int nsp, int j) {
  static const char *const names[3] = {"depth", "height", "width"};
  return names[3 - nsp + j];
}

/// op's data_format must be layout (its default).
static eddy_status_t check_layout(const eddy_op_t *op, const char *layout) {
  const char *fmt = str_attr(op, "data_format", layout);
  if (strcmp(fmt, layout) != 0)
    return eddy_tfl_error(op,
                          "data_format \"%s\" is not supported (only "
                          "%s)",
                          fmt, layout);
  return NULL;
}

/// The strides, dilations and pads (lo, hi per dim) of a window over nsp
/// spatial dims (2: NHWC, 3: NDHWC) from TensorFlow's attributes; size[j]
/// is the window's taps along spatial dim j, in[j] the windowed input's
/// size (EDDY_DIM_DYNAMIC when unknown), which SAME padding with a stride
/// above 1 needs. The strides are given's where not NULL (MaxPoolV2's
/// operand), else the attribute's. EXPLICIT padding is TensorFlow's 2-D
/// ops' only.
static eddy_status_t read_window_nd(const eddy_op_t *op, int nsp,
                                    const int64_t *given, const int64_t *in,
                                    const int64_t *size, int64_t *strides,
                                    int64_t *dilations, int64_t *pads) {
  EDDY_RETURN_IF_ERROR(check_layout(op, nsp == 3 ? "NDHWC" : "NHWC"));
  static const int64_t ones[5] = {1, 1, 1, 1, 1};
  int64_t s[5] = {0}, d[5] = {0};
  if (given)
    memcpy(s, given, (size_t)(nsp + 2) * sizeof *s);
  else
    EDDY_RETURN_IF_ERROR(ints_attr(op, "strides", nsp + 2, NULL, s));
  EDDY_RETURN_IF_ERROR(ints_attr(op, "dilations", nsp + 2, ones, d));
  if (s[0] != 1 || s[nsp + 1] != 1 || d[0] != 1 || d[nsp + 1] != 1)
    return eddy_tfl_error(op, "strides and dilations along the batch and the "
                              "channels must be 1");
  for (int j = 0; j < nsp; j++) {
    if (s[1 + j] < 1 || d[1 + j] < 1)
      return eddy_tfl_error(op, "strides and dilations must be >= 1");
    strides[j] = s[1 + j];
    dilations[j] = d[1 + j];
  }
  const char *pad = str_attr(op, "padding", "");
  if (strcmp(pad, "VALID") == 0) {
    memset(pads, 0, (size_t)(2 * nsp) * sizeof *pads);
    return NULL;
  }
  if (nsp == 2 && strcmp(pad, "EXPLICIT") == 0) {
    int64_t p[8] = {0};
    EDDY_RETURN_IF_ERROR(ints_attr(op, "explicit_paddings", 8, NULL, p));
    if (p[0] || p[1] || p[6] || p[7])
      return eddy_tfl_error(op, "explicit_paddings of the batch and the "
                                "channels must be 0");
    for (int k = 0; k < 4; k++) {
      if (p[2 + k] < 0)
        return eddy_tfl_error(op, "explicit_paddings must be >= 0");
      pads[k] = p[2 + k];
    }
    return NULL;
  }
  if (strcmp(pad, "SAME") != 0)
    return eddy_tfl_error(op,
                          "padding \"%s\" is not supported (SAME, "
                          "VALID%s)",
                          pad, nsp == 2 ? " or EXPLICIT" : "");
  for (int j = 0; j < nsp; j++) {
    int64_t eff = (size[j] - 1) * dilations[j] + 1;
    if (in[j] != EDDY_DIM_DYNAMIC) {
      eddy_scalar_window_same(in[j], size[j], dilations[j], strides[j],
                              &pads[2 * j], &pads[2 * j + 1]);
    } else if (strides[j] == 1) {
      // ceil(n / 1) = n positions whatever n: the pads do not depend on it.
      pads[2 * j] = (eff - 1) / 2;
      pads[2 * j + 1] = eff - 1 - pads[2 * j];
    } else {
      return eddy_tfl_error(op,
                            "SAME padding with a stride above 1 needs a "
                            "static %s",
                            spatial_name(nsp, j));
    }
  }
  return NULL;
}

/// The window's strides, dilations and pads from TensorFlow's attributes
/// of a 2-D op (w->size already set: the filter's or ksize's spatial
/// entries), the strides from given where not NULL (MaxPoolV2's operand);
/// in[j] is the windowed input's spatial dim j.
static eddy_status_t window_from(const eddy_op_t *op, const int64_t *given,
                                 const int64_t *in, eddy_core_window_t *w) {
  return read_window_nd(op, 2, given, in, w->size, w->strides, w->dilations,
                        w->pads);
}

/// The window of the strides attribute (window_from).
static eddy_status_t read_window(const eddy_op_t *op, const int64_t *in,
                                 eddy_core_window_t *w) {
  return window_from(op, NULL, in, w);
}

/// The n spatial sizes an input-gradient op must produce (first = 1: the
/// input's [H, W] or [D, H, W]) or a filter-gradient op (first = 0: the
/// filter's [KH, KW] or [KD, KH, KW]), of a rank n + 2 shape: its shape
/// operand when constant, else the result type's static dims, else the
/// static dims of the value whose core.shape it is (through casts).
static eddy_status_t sizes(eddy_tfl_t *z, const eddy_op_t *op,
                           eddy_value_t *shape, int first, int n,
                           int64_t *out) {
  int64_t v[5];
  if (eddy_tfl_const_ints(z, shape, v, 5) == n + 2) {
    memcpy(out, v + first, (size_t)n * sizeof *out);
    return NULL;
  }
  const eddy_type_t *types[2] = {op->results[0].type, NULL};
  const eddy_op_t *d = shape->def;
  while (d && tfl_is(d, "core.cast"))
    d = eddy_ir_op_operand((eddy_op_t *)d, 0)->def;
  if (tfl_is(d, "core.shape"))
    types[1] = eddy_ir_op_operand((eddy_op_t *)d, 0)->type;
  for (int k = 0; k < 2; k++) {
    const eddy_type_t *t = types[k];
    bool known = t && t->rank == n + 2;
    for (int j = 0; known && j < n; j++)
      known = t->dims[first + j] >= 0;
    if (known) {
      memcpy(out, t->dims + first, (size_t)n * sizeof *out);
      return NULL;
    }
  }
  return eddy_tfl_error(op,
                        "the %s size must be known statically (a "
                        "constant, or the shape of a value with static "
                        "%s)",
                        first ? "input's" : "filter's",
                        !first   ? "kernel dims"
                        : n == 3 ? "depth, height and width"
                                 : "height and width");
}

/// Core op `name` of a and b (when not NULL) with w's attributes (and
/// size_name = size).
static eddy_status_t window_op(eddy_tfl_t *z, const eddy_op_t *op,
                               const char *name, eddy_value_t *a,
                               eddy_value_t *b, const eddy_core_window_t *w,
                               const char *size_name, const int64_t *size,
                               eddy_value_t **out) {
  eddy_named_attr_t at[5];
  size_t n = eddy_core_window_attrs(z->ctx, name, w, size_name, size, at);
  eddy_value_t *ops[2] = {a, b};
  return eddy_tfl_build(z, op, name, ops, b ? 2 : 1, at, n, out);
}

/// Builds core op `name` with w's attributes (and size_name = size) as
/// op's result.
static eddy_status_t build(eddy_tfl_t *z, const eddy_op_t *op, const char *name,
                           eddy_value_t *a, eddy_value_t *b,
                           const eddy_core_window_t *w, const char *size_name,
                           const int64_t *size) {
  eddy_value_t *r = NULL;
  EDDY_RETURN_IF_ERROR(window_op(z, op, name, a, b, w, size_name, size, &r));
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

/// ksize's spatial entries (the batch and channel entries must be 1): the
/// attribute's, or given's where not NULL (MaxPoolV2's operand).
static eddy_status_t ksize(const eddy_op_t *op, const int64_t *given,
                           eddy_core_window_t *w) {
  int64_t k[4] = {0};
  if (given)
    memcpy(k, given, sizeof k);
  else
    EDDY_RETURN_IF_ERROR(ints_attr(op, "ksize", 4, NULL, k));
  if (k[0] != 1 || k[3] != 1 || k[1] < 1 || k[2] < 1)
    return eddy_tfl_error(op, "ksize must be [1, height, width, 1] with "
                              "height and width >= 1");
  w->size[0] = k[1];
  w->size[1] = k[2];
  w->dilations[0] = w->dilations[1] = 1;
  return NULL;
}

/// MaxPoolV2's and MaxPoolGradV2's ksize and strides (operands i and
/// i + 1): constants of 4 integers each, as the attributes of MaxPool.
static eddy_status_t window_operands(eddy_tfl_t *z, const eddy_op_t *op,
                                     size_t i, int64_t *k, int64_t *s) {
  static const char *const names[2] = {"ksize", "strides"};
  for (size_t j = 0; j < 2; j++)
    if (eddy_tfl_const_ints(z, tfl_in(z, op, i + j), j ? s : k, 4) != 4)
      return eddy_tfl_error(op,
                            "%s (operand %zu) must be a constant of 4 "
                            "integers",
                            names[j], i + j);
  return NULL;
}

/// ---- Depthwise convolutions --------------------------------------------

/// The mask i == j of the filter's channels, shaped [1, 1, C, C, 1] (i32):
/// a depthwise filter w [KH, KW, C, M] is the conv2d filter
/// select(mask, w[:, :, None], 0) reshaped to [KH, KW, C, C * M], block
/// diagonal: output channel c * M + m reads input channel c only.
static eddy_status_t channel_mask(eddy_tfl_t *z, const eddy_op_t *op, int64_t c,
                                  eddy_value_t **out) {
  int64_t dims[5] = {1, 1, c, c, 1};
  const eddy_type_t *t = eddy_ir_tensor_type_get(z->ctx, EDDY_DT_I32, 5, dims);
  eddy_value_t *io[2];
  for (int k = 0; k < 2; k++) {
    eddy_named_attr_t da = eddy_tfl_int_attr(z, "dimension", 2 + k);
    eddy_op_t *o = NULL;
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build_typed(z, op, "core.iota", NULL, 0, &da, 1, &t, 1, &o));
    io[k] = eddy_ir_op_result(o, 0);
  }
  return tfl_bin(z, op, "core.eq", io[0], io[1], out);
}

/// The static [KH, KW, C, M] of a depthwise filter value f.
static eddy_status_t depthwise_dims(const eddy_op_t *op, eddy_value_t *f,
                                    int64_t *fd) {
  EDDY_RETURN_IF_ERROR(rank4(op, f, "filter"));
  for (int k = 0; k < 4; k++) {
    fd[k] = f->type->dims[k];
    if (fd[k] < 0)
      return eddy_tfl_error(op, "the depthwise filter's shape must be static");
  }
  return NULL;
}

/// The block-diagonal conv2d filter [KH, KW, C, C * M] of depthwise filter f.
static eddy_status_t depthwise_filter(eddy_tfl_t *z, const eddy_op_t *op,
                                      eddy_value_t *f, const int64_t *fd,
                                      eddy_value_t **out) {
  eddy_value_t *mask = NULL, *w5 = NULL, *zero = NULL, *sel = NULL;
  EDDY_RETURN_IF_ERROR(channel_mask(z, op, fd[2], &mask));
  int64_t d5[5] = {fd[0], fd[1], 1, fd[2], fd[3]};
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, f, d5, 5, &w5));
  EDDY_RETURN_IF_ERROR(tfl_scalar_like(z, f, 0.0, &zero));
  EDDY_RETURN_IF_ERROR(tfl_sel(z, op, mask, w5, zero, &sel));
  int64_t d4[4] = {fd[0], fd[1], fd[2], fd[2] * fd[3]};
  return eddy_tfl_reshape(z, op, sel, d4, 4, out);
}

/// DepthwiseConv2dNative(x, w) = conv2d(x, the block-diagonal filter of
/// w); its input gradient conv2d_input_grad with that filter; its filter
/// gradient the diagonal blocks of conv2d_filter_grad. Each costs C times
/// the depthwise convolution's products (C input channels).
static eddy_status_t lower_depthwise(eddy_tfl_t *z, const eddy_op_t *op,
                                     const char *t) {
  eddy_core_window_t w;
  int64_t fd[4], hw[2];
  if (strcmp(t, "DepthwiseConv2dNative") == 0) {
    eddy_value_t *x = tfl_in(z, op, 0), *f = tfl_in(z, op, 1), *bf = NULL;
    EDDY_RETURN_IF_ERROR(rank4(op, x, "input"));
    EDDY_RETURN_IF_ERROR(depthwise_dims(op, f, fd));
    EDDY_RETURN_IF_ERROR(filter_taps(op, f, &w));
    EDDY_RETURN_IF_ERROR(read_window(op, &x->type->dims[1], &w));
    EDDY_RETURN_IF_ERROR(depthwise_filter(z, op, f, fd, &bf));
    return build(z, op, "core.conv2d", x, bf, &w, NULL, NULL);
  }
  if (strcmp(t, "DepthwiseConv2dNativeBackpropInput") == 0) {
    eddy_value_t *f = tfl_in(z, op, 1), *dy = tfl_in(z, op, 2), *bf = NULL;
    EDDY_RETURN_IF_ERROR(depthwise_dims(op, f, fd));
    EDDY_RETURN_IF_ERROR(filter_taps(op, f, &w));
    EDDY_RETURN_IF_ERROR(rank4(op, dy, "out_backprop"));
    EDDY_RETURN_IF_ERROR(sizes(z, op, tfl_in(z, op, 0), 1, 2, hw));
    EDDY_RETURN_IF_ERROR(read_window(op, hw, &w));
    EDDY_RETURN_IF_ERROR(depthwise_filter(z, op, f, fd, &bf));
    return build(z, op, "core.conv2d_input_grad", dy, bf, &w, "input_size", hw);
  }
  // DepthwiseConv2dNativeBackpropFilter(x, filter_sizes, dy).
  eddy_value_t *x = tfl_in(z, op, 0), *dy = tfl_in(z, op, 2);
  EDDY_RETURN_IF_ERROR(rank4(op, x, "input"));
  EDDY_RETURN_IF_ERROR(rank4(op, dy, "out_backprop"));
  int64_t c = x->type->dims[3], cm = dy->type->dims[3];
  if (c < 0 || cm < 0 || c == 0 || cm % c != 0)
    return eddy_tfl_error(op, "the input's and out_backprop's channels must "
                              "be static, the latter a multiple of the "
                              "former");
  EDDY_RETURN_IF_ERROR(sizes(z, op, tfl_in(z, op, 1), 0, 2, w.size));
  EDDY_RETURN_IF_ERROR(read_window(op, &x->type->dims[1], &w));
  eddy_named_attr_t at[5];
  size_t na = eddy_core_window_attrs(z->ctx, "core.conv2d_filter_grad", &w,
                                     "filter_size", w.size, at);
  eddy_value_t *ops[2] = {x, dy}, *g = NULL, *g5 = NULL, *mask = NULL,
               *zero = NULL, *sel = NULL, *r = NULL;
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build(z, op, "core.conv2d_filter_grad", ops, 2, at, na, &g));
  int64_t d5[5] = {w.size[0], w.size[1], c, c, cm / c};
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, g, d5, 5, &g5));
  EDDY_RETURN_IF_ERROR(channel_mask(z, op, c, &mask));
  EDDY_RETURN_IF_ERROR(tfl_scalar_like(z, g5, 0.0, &zero));
  EDDY_RETURN_IF_ERROR(tfl_sel(z, op, mask, g5, zero, &sel));
  int64_t axis = 2;
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_reduce(z, op, "core.reduce_sum", sel, &axis, 1, false, &r));
  tfl_out1(z, op, r);
  return NULL;
}

/// ---- 3-D convolutions ---------------------------------------------------

/// A Conv3D's window (NDHWC, filter [KD, KH, KW, C, O]): one conv2d over
/// height and width reads every depth tap at once, the taps stacked along
/// its channels; along depth, the stride, the pads and the positions.
typedef struct conv3d {
  eddy_core_window_t w; ///< over height and width
  int64_t in[3];        ///< the input's D, H, W
  int64_t f[5];         ///< the filter's KD, KH, KW, C, O
  int64_t out[3];       ///< the output's D, H, W
  int64_t sd, lo, hi;   ///< depth stride and pads
} conv3d_t;

/// c's window from op's attributes (c->in and c->f already set).
static eddy_status_t conv3d_window(const eddy_op_t *op, conv3d_t *c) {
  int64_t s[3], d[3], p[6];
  EDDY_RETURN_IF_ERROR(read_window_nd(op, 3, NULL, c->in, c->f, s, d, p));
  if (d[0] != 1 || d[1] != 1 || d[2] != 1)
    return eddy_tfl_error(op, "dilations other than 1 are not supported "
                              "(TensorFlow's CPU kernels have none)");
  c->sd = s[0];
  c->lo = p[0];
  c->hi = p[1];
  for (int j = 0; j < 2; j++) {
    c->w.size[j] = c->f[1 + j];
    c->w.strides[j] = s[1 + j];
    c->w.dilations[j] = 1;
    c->w.pads[2 * j] = p[2 + 2 * j];
    c->w.pads[2 * j + 1] = p[3 + 2 * j];
  }
  for (int j = 0; j < 3; j++) {
    c->out[j] = eddy_scalar_window_out(c->in[j], p[2 * j], p[2 * j + 1],
                                       c->f[j], 1, s[j]);
    if (c->out[j] < 1)
      return eddy_tfl_error(op,
                            "the padded input's %s (%lld) is shorter "
                            "than the filter's (%lld)",
                            spatial_name(3, j),
                            (long long)(c->in[j] + p[2 * j] + p[2 * j + 1]),
                            (long long)c->f[j]);
  }
  // Each factor at most 2^24: the products below cannot overflow.
  const int64_t lim = (int64_t)1 << 24;
  if (c->f[0] > lim || c->f[3] > lim || c->out[0] > lim ||
      c->f[0] * c->out[0] > lim || c->f[0] * c->f[3] > lim)
    return eddy_tfl_error(op,
                          "the filter's depth (%lld) times the output's "
                          "depth (%lld) or the channels (%lld) is above "
                          "2^24",
                          (long long)c->f[0], (long long)c->out[0],
                          (long long)c->f[3]);
  return NULL;
}

/// Operand v must be a rank-5 tensor (NDHWC, or the filter) whose dims
/// from `from` on are static; they go to dims (what names it).
static eddy_status_t rank5(const eddy_op_t *op, eddy_value_t *v,
                           const char *what, int from, int64_t *dims) {
  if (v->type->rank != 5)
    return eddy_tfl_error(op, "the %s must have rank 5%s", what,
                          from ? " (NDHWC)" : "");
  for (int k = 0; k < 5; k++) {
    dims[k] = v->type->dims[k];
    if (k >= from && dims[k] < 0)
      return eddy_tfl_error(op, "the %s's %s must be static", what,
                            from ? "depth, height, width and channels"
                                 : "shape");
  }
  return NULL;
}

/// The depth of the padded input that tap kd of output position j reads,
/// kd + j * sd, for all taps: an i64 vector [KD * Dout], kd major.
static eddy_status_t depth_index(eddy_tfl_t *z, const conv3d_t *c,
                                 eddy_value_t **out) {
  int64_t n = c->f[0] * c->out[0];
  int64_t *at = malloc((size_t)n * sizeof *at);
  if (!at)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  for (int64_t kd = 0; kd < c->f[0]; kd++)
    for (int64_t j = 0; j < c->out[0]; j++)
      at[kd * c->out[0] + j] = kd + j * c->sd;
  eddy_status_t st = eddy_tfl_int_constant(z, EDDY_DT_I64, at, n, out);
  free(at);
  return st;
}

/// core.gather of v along axis at indices idx.
static eddy_status_t gather(eddy_tfl_t *z, const eddy_op_t *op, eddy_value_t *v,
                            eddy_value_t *idx, int64_t axis,
                            eddy_value_t **out) {
  eddy_value_t *ops[2] = {v, idx};
  eddy_named_attr_t a = eddy_tfl_int_attr(z, "axis", axis);
  return eddy_tfl_build(z, op, "core.gather", ops, 2, &a, 1, out);
}

/// x [N, D, H, W, C] as the input of the one conv2d: [N * Dout, H, W,
/// KD * C], whose row n * Dout + j holds in channel kd * C + c the depth
/// tap kd of output position j, x[n, j * sd + kd - lo, ., ., c] (`pad` in
/// the padding).
static eddy_status_t stack_taps(eddy_tfl_t *z, const eddy_op_t *op,
                                eddy_value_t *x, const conv3d_t *c, double pad,
                                eddy_value_t **out) {
  eddy_value_t *v = x, *idx = NULL;
  if (c->lo || c->hi) {
    eddy_value_t *zero = NULL;
    EDDY_RETURN_IF_ERROR(tfl_scalar_like(z, x, pad, &zero));
    int64_t lo[5] = {0, c->lo, 0, 0, 0}, hi[5] = {0, c->hi, 0, 0, 0};
    eddy_value_t *pops[2] = {x, zero};
    eddy_named_attr_t pa[2] = {eddy_tfl_ints_attr(z, "low", lo, 5),
                               eddy_tfl_ints_attr(z, "high", hi, 5)};
    EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.pad", pops, 2, pa, 2, &v));
  }
  EDDY_RETURN_IF_ERROR(depth_index(z, c, &idx));
  EDDY_RETURN_IF_ERROR(gather(z, op, v, idx, 1, &v));
  // The batch, and the batch times Dout, are inferred (-1), static or not.
  int64_t d6[6] = {-1, c->f[0], c->out[0], c->in[1], c->in[2], c->f[3]};
  static const int64_t perm[6] = {0, 2, 3, 4, 1, 5};
  int64_t d4[4] = {-1, c->in[1], c->in[2], c->f[0] * c->f[3]};
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, v, d6, 6, &v));
  EDDY_RETURN_IF_ERROR(eddy_tfl_transpose(z, op, v, perm, 6, &v));
  return eddy_tfl_reshape(z, op, v, d4, 4, out);
}

/// The filter f [KD, KH, KW, C, O] as the one conv2d's [KH, KW, KD * C, O].
static eddy_status_t stack_filter(eddy_tfl_t *z, const eddy_op_t *op,
                                  eddy_value_t *f, const conv3d_t *c,
                                  eddy_value_t **out) {
  static const int64_t perm[5] = {1, 2, 0, 3, 4};
  int64_t d4[4] = {c->f[1], c->f[2], c->f[0] * c->f[3], c->f[4]};
  eddy_value_t *v = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_transpose(z, op, f, perm, 5, &v));
  return eddy_tfl_reshape(z, op, v, d4, 4, out);
}

/// dy [N, Dout, Ho, Wo, O] as the one conv2d's [N * Dout, Ho, Wo, O].
static eddy_status_t flat_dy(eddy_tfl_t *z, const eddy_op_t *op,
                             eddy_value_t *dy, const conv3d_t *c,
                             eddy_value_t **out) {
  int64_t d4[4] = {-1, c->out[1], c->out[2], c->f[4]};
  return eddy_tfl_reshape(z, op, dy, d4, 4, out);
}

/// The transpose of stack_taps: v [N * Dout, H, W, KD * C] (gradients of
/// the stacked taps) added back at the depths the taps read (core.scatter,
/// the gather's transpose), the depth padding cut off: [N, D, H, W, C].
static eddy_status_t unstack_taps(eddy_tfl_t *z, const eddy_op_t *op,
                                  eddy_value_t *v, const conv3d_t *c,
                                  eddy_value_t **out) {
  int64_t d6[6] = {-1, c->out[0], c->in[1], c->in[2], c->f[0], c->f[3]};
  static const int64_t perm[6] = {0, 4, 1, 2, 3, 5};
  int64_t d5[5] = {-1, c->f[0] * c->out[0], c->in[1], c->in[2], c->f[3]};
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, v, d6, 6, &v));
  EDDY_RETURN_IF_ERROR(eddy_tfl_transpose(z, op, v, perm, 6, &v));
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, v, d5, 5, &v));
  eddy_value_t *idx = NULL;
  EDDY_RETURN_IF_ERROR(depth_index(z, c, &idx));
  eddy_value_t *sops[2] = {idx, v};
  eddy_named_attr_t sa[2] = {
      eddy_tfl_int_attr(z, "axis", 1),
      eddy_tfl_int_attr(z, "size", c->in[0] + c->lo + c->hi)};
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.scatter", sops, 2, sa, 2, &v));
  if (c->lo || c->hi) {
    int64_t *at = malloc((size_t)c->in[0] * sizeof *at);
    if (!at)
      return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
    for (int64_t k = 0; k < c->in[0]; k++)
      at[k] = c->lo + k;
    eddy_status_t st = eddy_tfl_int_constant(z, EDDY_DT_I64, at, c->in[0], &idx);
    free(at);
    EDDY_RETURN_IF_ERROR(st);
    EDDY_RETURN_IF_ERROR(gather(z, op, v, idx, 1, &v));
  }
  *out = v;
  return NULL;
}

/// Conv3D(x, f) = the conv2d of stack_taps(x) and stack_filter(f), shaped
/// back to [N, Dout, Ho, Wo, O]: the sum over the depth taps of 2-D
/// convolutions. Conv3DBackpropInputV2(input_sizes, f, dy): that conv2d's
/// input gradient, unstacked and added back at the depths the taps read
/// (core.scatter, the gather's transpose), the depth padding cut off.
/// Conv3DBackpropFilterV2(x, filter_sizes, dy): that conv2d's filter
/// gradient, unstacked to [KD, KH, KW, C, O].
static eddy_status_t lower_conv3d(eddy_tfl_t *z, const eddy_op_t *op,
                                  const char *t) {
  conv3d_t c;
  int64_t xd[5], dyd[5];
  eddy_value_t *v = NULL, *wf = NULL;
  EDDY_RETURN_IF_ERROR(check_layout(op, "NDHWC"));
  if (strcmp(t, "Conv3D") == 0) {
    eddy_value_t *x = tfl_in(z, op, 0), *f = tfl_in(z, op, 1);
    EDDY_RETURN_IF_ERROR(rank5(op, x, "input", 1, xd));
    EDDY_RETURN_IF_ERROR(rank5(op, f, "filter", 0, c.f));
    if (xd[4] != c.f[3])
      return eddy_tfl_error(op,
                            "the input has %lld channels, the filter "
                            "%lld",
                            (long long)xd[4], (long long)c.f[3]);
    memcpy(c.in, xd + 1, sizeof c.in);
    EDDY_RETURN_IF_ERROR(conv3d_window(op, &c));
    EDDY_RETURN_IF_ERROR(stack_taps(z, op, x, &c, 0.0, &v));
    EDDY_RETURN_IF_ERROR(stack_filter(z, op, f, &c, &wf));
    EDDY_RETURN_IF_ERROR(
        window_op(z, op, "core.conv2d", v, wf, &c.w, NULL, NULL, &v));
    int64_t d5[5] = {-1, c.out[0], c.out[1], c.out[2], c.f[4]};
    EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, v, d5, 5, &v));
    tfl_out1(z, op, v);
    return NULL;
  }
  eddy_value_t *dy = tfl_in(z, op, 2);
  EDDY_RETURN_IF_ERROR(rank5(op, dy, "out_backprop", 5, dyd));
  if (strcmp(t, "Conv3DBackpropInputV2") == 0) {
    eddy_value_t *f = tfl_in(z, op, 1);
    EDDY_RETURN_IF_ERROR(rank5(op, f, "filter", 0, c.f));
    EDDY_RETURN_IF_ERROR(sizes(z, op, tfl_in(z, op, 0), 1, 3, c.in));
    EDDY_RETURN_IF_ERROR(conv3d_window(op, &c));
    EDDY_RETURN_IF_ERROR(flat_dy(z, op, dy, &c, &v));
    EDDY_RETURN_IF_ERROR(stack_filter(z, op, f, &c, &wf));
    EDDY_RETURN_IF_ERROR(window_op(z, op, "core.conv2d_input_grad", v, wf, &c.w,
                                   "input_size", c.in + 1, &v));
    EDDY_RETURN_IF_ERROR(unstack_taps(z, op, v, &c, &v));
    tfl_out1(z, op, v);
    return NULL;
  }
  // Conv3DBackpropFilterV2(x, filter_sizes, dy).
  eddy_value_t *x = tfl_in(z, op, 0);
  EDDY_RETURN_IF_ERROR(rank5(op, x, "input", 1, xd));
  EDDY_RETURN_IF_ERROR(sizes(z, op, tfl_in(z, op, 1), 0, 3, c.f));
  memcpy(c.in, xd + 1, sizeof c.in);
  c.f[3] = xd[4];
  c.f[4] = dyd[4];
  if (c.f[4] < 0)
    return eddy_tfl_error(op, "the out_backprop's channels must be static");
  EDDY_RETURN_IF_ERROR(conv3d_window(op, &c));
  EDDY_RETURN_IF_ERROR(stack_taps(z, op, x, &c, 0.0, &v));
  EDDY_RETURN_IF_ERROR(flat_dy(z, op, dy, &c, &wf));
  EDDY_RETURN_IF_ERROR(window_op(z, op, "core.conv2d_filter_grad", v, wf, &c.w,
                                 "filter_size", c.f + 1, &v));
  int64_t d5[5] = {c.f[1], c.f[2], c.f[0], c.f[3], c.f[4]};
  static const int64_t perm[5] = {2, 0, 1, 3, 4};
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, v, d5, 5, &v));
  EDDY_RETURN_IF_ERROR(eddy_tfl_transpose(z, op, v, perm, 5, &v));
  tfl_out1(z, op, v);
  return NULL;
}

/// ---- Local response normalization --------------------------------------

/// LRN(x) = x / (bias + alpha * S)^beta, S[..., c] the sum of x^2 over the
/// channels within depth_radius of c: x^2 times a constant band matrix [C,
/// C] (a core.matmul over the last dim). LRNGrad(dy, x, y) = dy / N^beta -
/// 2 alpha beta x * band(dy * y / N), N = bias + alpha * S (the band is
/// symmetric). The channels must be static.
static eddy_status_t lower_lrn(eddy_tfl_t *z, const eddy_op_t *op, bool grad) {
  eddy_value_t *x = tfl_in(z, op, grad ? 1 : 0);
  const eddy_type_t *t = x->type;
  if (t->kind != EDDY_TYPE_TENSOR || t->rank != 4 || t->dims[3] < 0)
    return eddy_tfl_error(op, "the input must have rank 4 and static "
                              "channels");
  int64_t c = t->dims[3], r = eddy_ir_op_attr_int(op, "depth_radius", 5);
  if (r < 0 || c > 4096)
    return eddy_tfl_error(op, "depth_radius must be >= 0 and the channels "
                              "at most 4096");
  double bias = eddy_ir_op_attr_float(op, "bias", 1.0),
         alpha = eddy_ir_op_attr_float(op, "alpha", 1.0),
         beta = eddy_ir_op_attr_float(op, "beta", 0.5);
  double *band = malloc((size_t)(c * c) * sizeof *band);
  if (!band)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  for (int64_t i = 0; i < c; i++)
    for (int64_t j = 0; j < c; j++)
      band[i * c + j] = llabs(i - j) <= r ? 1.0 : 0.0;
  int64_t bd[2] = {c, c};
  const eddy_type_t *bt = eddy_ir_tensor_type_get(z->ctx, t->dtype, 2, bd);
  eddy_value_t *bm = NULL, *sq = NULL, *s = NULL, *n = NULL, *k = NULL,
               *nb = NULL, *y = NULL;
  eddy_status_t st = eddy_ir_build_constant(
      &z->b, eddy_ir_dense_attr_from_f64(z->ctx, bt, band, (size_t)(c * c)),
      &bm);
  free(band);
  EDDY_RETURN_IF_ERROR(st);
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.mul", x, x, &sq));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.matmul", sq, bm, &s));
  EDDY_RETURN_IF_ERROR(tfl_scalar_like(z, x, alpha, &k));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.mul", k, s, &n));
  EDDY_RETURN_IF_ERROR(tfl_scalar_like(z, x, bias, &k));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.add", k, n, &n));
  EDDY_RETURN_IF_ERROR(tfl_scalar_like(z, x, beta, &k));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.pow", n, k, &nb));
  if (!grad) {
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.div", x, nb, &y));
    tfl_out1(z, op, y);
    return NULL;
  }
  eddy_value_t *dy = tfl_in(z, op, 0), *yv = tfl_in(z, op, 2), *a = NULL,
               *b = NULL;
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.div", dy, nb, &a));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.mul", dy, yv, &b));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.div", b, n, &b));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.matmul", b, bm, &b));
  EDDY_RETURN_IF_ERROR(tfl_scalar_like(z, x, 2.0 * alpha * beta, &k));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.mul", k, x, &y));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.mul", y, b, &b));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.sub", a, b, &y));
  tfl_out1(z, op, y);
  return NULL;
}

/// ---- Image resizing -----------------------------------------------------

/// TensorFlow's scale from the resized size back to the original
/// (CalculateResizeScale), in f32 as its kernels compute it.
static float resize_scale(int64_t in, int64_t out, bool align) {
  return align && out > 1 ? (float)(in - 1) / (float)(out - 1)
                          : (float)in / (float)out;
}

typedef enum resize_mode {
  RESIZE_BILINEAR,
  RESIZE_NEAREST,
  RESIZE_BICUBIC,
  RESIZE_AREA,
} resize_mode_t;

/// TensorFlow's bicubic kernel at distance d of the sample (0 <= d < 1 for
/// the two nearest, 1 <= d < 2 for the two outer), Keys' cubic with
/// parameter a (in double, rounded once, as TensorFlow fills its table).
static float cubic(double a, float d) {
  if (d < 1.0f)
    return (float)(((a + 2) * d - (a + 3)) * d * d + 1);
  return (float)(((a * d - 5 * a) * d + 8 * a) * d - 4 * a);
}

/// Row o of a bicubic resize: the four samples around position v, with the
/// weights of TensorFlow's kernel, which reads them from a table of 1024
/// steps (the fraction rounded to a step). half: Keys' a = -0.5, samples
/// outside the image weigh 0 and the rest are renormalized; otherwise
/// a = -0.75 and the outer samples are clamped to the edge.
static void bicubic_row(int64_t in, float v, bool half, double *row) {
  const int64_t steps = 1024;
  double a = half ? -0.5 : -0.75;
  int64_t base = (int64_t)floorf(v);
  int64_t off = lrintf((v - (float)base) * (float)steps);
  float t = (float)off / (float)steps, u = (float)(steps - off) / (float)steps;
  float w[4] = {cubic(a, t + 1.0f), cubic(a, t), cubic(a, u),
                cubic(a, u + 1.0f)};
  int64_t idx[4];
  float sum = 0.0f;
  for (int k = 0; k < 4; k++) {
    int64_t i = base - 1 + k;
    idx[k] = i < 0 ? 0 : i > in - 1 ? in - 1 : i;
    if (half && idx[k] != i)
      w[k] = 0.0f;
    sum += w[k];
  }
  // (TensorFlow leaves a sum of about zero as it is.)
  float norm =
      half && fabsf(sum) >= 1000.0f * 1.17549435e-38f ? 1.0f / sum : 1.0f;
  for (int k = 0; k < 4; k++)
    row[idx[k]] += (double)(w[k] * norm);
}

/// Row o of an area resize: the input cells the output cell
/// [o * scale, (o + 1) * scale) covers, each weighted by the length it
/// covers over the scale (cells past the edge read the last one).
static void area_row(int64_t in, int64_t o, float scale, double *row) {
  float lo = (float)o * scale, hi = (float)(o + 1) * scale;
  int64_t first = (int64_t)floorf(lo), end = (int64_t)ceilf(hi);
  for (int64_t i = first; i < end; i++) {
    float fi = (float)i;
    float len = fi < lo ? (fi + 1.0f > hi ? scale : fi + 1.0f - lo)
                        : (fi + 1.0f > hi ? hi - fi : 1.0f);
    int64_t k = i < 0 ? 0 : i > in - 1 ? in - 1 : i;
    row[k] += (double)len / (double)scale;
  }
}

/// The [out, in] matrix of one axis of a resize (row o: the weights of
/// the original positions output o reads), TensorFlow's kernels'
/// arithmetic: bilinear, a position (o + 0.5) * scale - 0.5 (half-pixel
/// centers) or o * scale, split between its floor and ceiling (clamped);
/// bicubic, the same position between four samples (bicubic_row);
/// nearest, (o + 0.5) * scale or o * scale rounded (align_corners) or
/// floored, clamped; area, the cells covered (area_row).
static void resize_matrix(int64_t in, int64_t out, bool align, bool half,
                          resize_mode_t mode, double *a) {
  float scale = resize_scale(in, out, align);
  memset(a, 0, (size_t)(in * out) * sizeof *a);
  for (int64_t o = 0; o < out; o++) {
    double *row = a + o * in;
    if (mode == RESIZE_NEAREST) {
      float v = half ? ((float)o + 0.5f) * scale : (float)o * scale;
      int64_t k = (int64_t)(align ? roundf(v) : floorf(v));
      k = k > in - 1 ? in - 1 : k;
      row[k < 0 ? 0 : k] = 1.0;
      continue;
    }
    if (mode == RESIZE_AREA) {
      area_row(in, o, scale, row);
      continue;
    }
    float v = half ? ((float)o + 0.5f) * scale - 0.5f : (float)o * scale;
    if (mode == RESIZE_BICUBIC) {
      bicubic_row(in, v, half, row);
      continue;
    }
    float fl = floorf(v);
    int64_t lo = fl < 0 ? 0 : (int64_t)fl;
    int64_t hi = (int64_t)ceilf(v);
    hi = hi > in - 1 ? in - 1 : hi;
    lo = lo > in - 1 ? in - 1 : lo;
    float lerp = v - fl;
    row[lo] += 1.0 - (double)lerp;
    row[hi] += (double)lerp;
  }
}

/// x [N, H, W, C] resized to [N, OH, OW, C] (grad: the transpose, from
/// [N, OH, OW, C] back to [N, H, W, C]) by the interpolation matrices of
/// both axes, as two core.matmuls over x transposed to [N, C, H, W].
static eddy_status_t resize(eddy_tfl_t *z, const eddy_op_t *op, eddy_value_t *x,
                            const int64_t *in, const int64_t *out,
                            resize_mode_t mode, bool grad, eddy_value_t **res) {
  bool align = eddy_ir_op_attr_bool(op, "align_corners", false);
  bool half = eddy_ir_op_attr_bool(op, "half_pixel_centers", false);
  if (align && half)
    return eddy_tfl_error(op, "align_corners and half_pixel_centers cannot "
                              "both be true");
  eddy_value_t *mat[2];
  for (int k = 0; k < 2; k++) {
    if (in[k] < 1 || out[k] < 1 || in[k] > (int64_t)1 << 24 ||
        out[k] > (int64_t)1 << 24 || in[k] * out[k] > (int64_t)1 << 24)
      return eddy_tfl_error(op,
                            "sizes %lld -> %lld are not supported (each "
                            "at least 1, their product at most 2^24)",
                            (long long)in[k], (long long)out[k]);
    double *a = malloc((size_t)(in[k] * out[k]) * sizeof *a);
    if (!a)
      return eddy_tfl_error(op, "out of memory");
    resize_matrix(in[k], out[k], align, half, mode, a);
    int64_t dims[2] = {out[k], in[k]};
    const eddy_type_t *t =
        eddy_ir_tensor_type_get(z->ctx, x->type->dtype, 2, dims);
    eddy_status_t st = eddy_ir_build_constant(
        &z->b,
        eddy_ir_dense_attr_from_f64(z->ctx, t, a, (size_t)(in[k] * out[k])),
        &mat[k]);
    free(a);
    EDDY_RETURN_IF_ERROR(st);
  }
  static const int64_t to_nchw[4] = {0, 3, 1, 2}, to_nhwc[4] = {0, 2, 3, 1};
  eddy_value_t *v = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_transpose(z, op, x, to_nchw, 4, &v));
  // Along H: A v (forward) or A^T v (grad); along W: v A^T or v A.
  eddy_value_t *hops[2] = {mat[0], v};
  eddy_named_attr_t ta = eddy_ir_named_attr(
      z->ctx, "transpose_a", eddy_ir_bool_attr_get(z->ctx, grad));
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build(z, op, "core.matmul", hops, 2, &ta, 1, &v));
  eddy_value_t *wops[2] = {v, mat[1]};
  eddy_named_attr_t tb = eddy_ir_named_attr(
      z->ctx, "transpose_b", eddy_ir_bool_attr_get(z->ctx, !grad));
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build(z, op, "core.matmul", wops, 2, &tb, 1, &v));
  return eddy_tfl_transpose(z, op, v, to_nhwc, 4, res);
}

/// The static [H, W] of a rank-4 NHWC value v (what names it).
static eddy_status_t static_hw(const eddy_op_t *op, eddy_value_t *v,
                               const char *what, int64_t *hw) {
  EDDY_RETURN_IF_ERROR(rank4(op, v, what));
  hw[0] = v->type->dims[1];
  hw[1] = v->type->dims[2];
  if (hw[0] < 0 || hw[1] < 0)
    return eddy_tfl_error(op, "the height and width of %s must be static",
                          what);
  return NULL;
}

/// ResizeBilinear / ResizeBicubic / ResizeNearestNeighbor / ResizeArea
/// (images, size), and the gradients of the first three: (grads,
/// original_image) / (grads, size).
static eddy_status_t lower_resize(eddy_tfl_t *z, const eddy_op_t *op,
                                  const char *t) {
  resize_mode_t mode = strncmp(t, "ResizeNearest", 13) == 0   ? RESIZE_NEAREST
                       : strncmp(t, "ResizeBicubic", 13) == 0 ? RESIZE_BICUBIC
                       : strncmp(t, "ResizeArea", 10) == 0    ? RESIZE_AREA
                                                              : RESIZE_BILINEAR;
  bool nearest = mode == RESIZE_NEAREST;
  bool grad = strcmp(t + strlen(t) - 4, "Grad") == 0;
  eddy_value_t *x = tfl_in(z, op, 0), *r = NULL;
  int64_t in[2], out[2];
  if (grad)
    EDDY_RETURN_IF_ERROR(static_hw(op, x, "grads", out));
  else
    EDDY_RETURN_IF_ERROR(static_hw(op, x, "images", in));
  int64_t *other = grad ? in : out;
  if (grad && !nearest) {
    EDDY_RETURN_IF_ERROR(static_hw(op, tfl_in(z, op, 1), "original_image", in));
  } else if (eddy_tfl_const_ints(z, tfl_in(z, op, 1), other, 2) != 2) {
    return eddy_tfl_error(op, "size must be a constant [height, width]");
  }
  // The interpolating resizes' output is f32 whatever T; their gradients'
  // is T (the original image's dtype); the nearest ops keep their input's.
  eddy_dtype_t want = x->type->dtype;
  if (!nearest && !grad)
    want = EDDY_DT_F32;
  else if (!nearest && !eddy_tfl_attr_dtype(op, "T", &want))
    return eddy_tfl_error(op, "attribute 'T' is missing");
  if (!eddy_dtype_is_float(want))
    return eddy_tfl_error(op, "only floating-point results are supported");
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, x, want, &x));
  EDDY_RETURN_IF_ERROR(resize(z, op, x, in, out, mode, grad, &r));
  tfl_out1(z, op, r);
  return NULL;
}

/// A 3-D pool's window (ksize and strides [1, kd, kh, kw, 1]) over an input
/// of depth, height and width in[3] and ch channels, as a conv3d_t.
static eddy_status_t pool3d_window(const eddy_op_t *op, const int64_t *in,
                                   int64_t ch, conv3d_t *c) {
  int64_t k[5] = {0};
  EDDY_RETURN_IF_ERROR(ints_attr(op, "ksize", 5, NULL, k));
  if (k[0] != 1 || k[4] != 1 || k[1] < 1 || k[2] < 1 || k[3] < 1)
    return eddy_tfl_error(op, "ksize must be [1, kd, kh, kw, 1] with "
                              "positive sizes");
  memcpy(c->in, in, sizeof c->in);
  int64_t f[5] = {k[1], k[2], k[3], ch, ch};
  memcpy(c->f, f, sizeof c->f);
  return conv3d_window(op, c);
}

/// The number of taps of each output depth j inside the input (j * sd + kd
/// - lo in [0, D)), of dtype dt, shaped [1, Dout, 1, 1, 1].
static eddy_status_t depth_counts(eddy_tfl_t *z, const eddy_op_t *op,
                                  const conv3d_t *c, eddy_dtype_t dt,
                                  eddy_value_t **out) {
  int64_t *cnt = malloc((size_t)c->out[0] * sizeof *cnt);
  if (!cnt)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  for (int64_t j = 0; j < c->out[0]; j++) {
    cnt[j] = 0;
    for (int64_t kd = 0; kd < c->f[0]; kd++) {
      int64_t at = j * c->sd + kd - c->lo;
      cnt[j] += at >= 0 && at < c->in[0];
    }
  }
  eddy_status_t st = eddy_tfl_int_constant(z, EDDY_DT_I64, cnt, c->out[0], out);
  free(cnt);
  EDDY_RETURN_IF_ERROR(st);
  int64_t cd[5] = {1, c->out[0], 1, 1, 1};
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, *out, dt, out));
  return eddy_tfl_reshape(z, op, *out, cd, 5, out);
}

/// MaxPool3D / AvgPool3D (NDHWC): the depth taps of each output depth
/// stacked along the channels as for Conv3D (stack_taps, the depth padding
/// -inf for max), one 2-D pool over height and width of every tap and
/// channel, then the max over the taps, or their sum divided by the number
/// of taps inside the input: TensorFlow averages over the window's
/// elements inside the input, which core.avg_pool does over height and
/// width, and a padded tap adds 0.
///
/// Their gradients go back the same way, through unstack_taps.
/// MaxPool3DGrad(orig_input, orig_output, grad) finds the maxima again in
/// orig_input: dy goes to the first tap holding its window's maximum, then
/// through core.max_pool_grad of the stacked taps. AvgPool3DGrad(
/// orig_input_shape, grad): dy divided by the taps' count, to every tap,
/// then through core.avg_pool_grad.
static eddy_status_t lower_pool3d(eddy_tfl_t *z, const eddy_op_t *op,
                                  const char *t) {
  bool max = t[0] == 'M', grad = strstr(t, "Grad") != NULL;
  eddy_value_t *x = max || !grad ? tfl_in(z, op, 0) : NULL, *v = NULL;
  eddy_value_t *dy = grad ? tfl_in(z, op, max ? 2 : 1) : NULL;
  int64_t xd[5], dyd[5], in[3];
  conv3d_t c;
  if (x) {
    EDDY_RETURN_IF_ERROR(rank5(op, x, "input", 1, xd));
    memcpy(in, xd + 1, sizeof in);
  }
  if (dy) {
    EDDY_RETURN_IF_ERROR(rank5(op, dy, "grad", 5, dyd));
    if (dyd[4] < 0)
      return eddy_tfl_error(op, "the grad's channels must be static");
    if (!x) {
      EDDY_RETURN_IF_ERROR(sizes(z, op, tfl_in(z, op, 0), 1, 3, in));
      xd[4] = dyd[4];
    }
  }
  eddy_dtype_t dt = (x ? x : dy)->type->dtype;
  if (!eddy_dtype_is_float(dt))
    return eddy_tfl_error(op, "the %s must be a float tensor",
                          x ? "input" : "grad");
  EDDY_RETURN_IF_ERROR(pool3d_window(op, in, xd[4], &c));
  int64_t d6[6] = {-1, c.out[0], c.out[1], c.out[2], c.f[0], c.f[3]};
  int64_t g6[6] = {-1, c.out[0], c.out[1], c.out[2], 1, c.f[3]};
  int64_t g4[4] = {-1, c.out[1], c.out[2], c.f[0] * c.f[3]};
  const int64_t taps = 4;
  eddy_value_t *cnt = NULL;
  if (!max)
    EDDY_RETURN_IF_ERROR(depth_counts(z, op, &c, dt, &cnt));
  if (!grad) {
    EDDY_RETURN_IF_ERROR(stack_taps(z, op, x, &c, max ? -INFINITY : 0.0, &v));
    EDDY_RETURN_IF_ERROR(window_op(z, op,
                                   max ? "core.max_pool" : "core.avg_pool", v,
                                   NULL, &c.w, NULL, NULL, &v));
    EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, v, d6, 6, &v));
    EDDY_RETURN_IF_ERROR(eddy_tfl_reduce(
        z, op, max ? "core.reduce_max" : "core.reduce_sum", v, &taps, 1,
        false, &v));
    if (!max)
      EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.div", v, cnt, &v));
    tfl_out1(z, op, v);
    return NULL;
  }
  eddy_value_t *g = NULL;
  if (max) {
    // The first tap holding the maximum of its window: equal to the max
    // over the taps, and the first such (an inclusive count of 1).
    eddy_value_t *p = NULL, *m = NULL, *eq = NULL, *n = NULL, *one = NULL,
                 *first = NULL, *zero = NULL;
    EDDY_RETURN_IF_ERROR(stack_taps(z, op, x, &c, -INFINITY, &v));
    EDDY_RETURN_IF_ERROR(
        window_op(z, op, "core.max_pool", v, NULL, &c.w, NULL, NULL, &p));
    EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, p, d6, 6, &p));
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_reduce(z, op, "core.reduce_max", p, &taps, 1, true, &m));
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.eq", p, m, &eq));
    EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, eq, EDDY_DT_I32, &n));
    eddy_named_attr_t cs[3] = {eddy_tfl_int_attr(z, "axis", 4),
                               eddy_tfl_bool_attr(z, "exclusive", false),
                               eddy_tfl_bool_attr(z, "reverse", false)};
    EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.cumsum", &n, 1, cs, 3, &n));
    EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I32, 0, NULL, 1, &one));
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.eq", n, one, &first));
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.and", first, eq, &first));
    EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, dy, g6, 6, &g));
    EDDY_RETURN_IF_ERROR(tfl_scalar_like(z, g, 0.0, &zero));
    EDDY_RETURN_IF_ERROR(tfl_sel(z, op, first, g, zero, &g));
    EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, g, g4, 4, &g));
    EDDY_RETURN_IF_ERROR(window_op(z, op, "core.max_pool_grad", v, g, &c.w,
                                   NULL, NULL, &v));
  } else {
    eddy_value_t *copies[EDDY_TFL_MAX_RANK];
    if (c.f[0] > EDDY_TFL_MAX_RANK)
      return eddy_tfl_error(op, "a window deeper than %d is not supported",
                            EDDY_TFL_MAX_RANK);
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.div", dy, cnt, &g));
    EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, g, g6, 6, &g));
    for (int64_t kd = 0; kd < c.f[0]; kd++)
      copies[kd] = g;
    eddy_named_attr_t ax = eddy_tfl_int_attr(z, "axis", 4);
    EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.concat", copies,
                                        (size_t)c.f[0], &ax, 1, &g));
    EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, g, g4, 4, &g));
    EDDY_RETURN_IF_ERROR(window_op(z, op, "core.avg_pool_grad", g, NULL, &c.w,
                                   "input_size", c.in + 1, &v));
  }
  EDDY_RETURN_IF_ERROR(unstack_taps(z, op, v, &c, &v));
  tfl_out1(z, op, v);
  return NULL;
}

eddy_status_t eddy_tfl_lower_window_op(eddy_tfl_t *z, const eddy_op_t *op,
                                       bool *handled) {
  const char *t = op->name->str + 3;
  *handled = true;
  if (strncmp(t, "DepthwiseConv2dNative", 21) == 0)
    return lower_depthwise(z, op, t);
  if (strncmp(t, "Resize", 6) == 0)
    return lower_resize(z, op, t);
  if (strncmp(t, "Conv3D", 6) == 0)
    return lower_conv3d(z, op, t);
  if (strncmp(t, "MaxPool3D", 9) == 0 || strncmp(t, "AvgPool3D", 9) == 0)
    return lower_pool3d(z, op, t);
  if (strncmp(t, "LRN", 3) == 0)
    return lower_lrn(z, op, t[3] == 'G');
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
    EDDY_RETURN_IF_ERROR(sizes(z, op, tfl_in(z, op, 0), 1, 2, hw));
    EDDY_RETURN_IF_ERROR(read_window(op, hw, &w));
    return build(z, op, "core.conv2d_input_grad", dy, f, &w, "input_size", hw);
  }
  if (strcmp(t, "Conv2DBackpropFilter") == 0) {
    eddy_value_t *x = tfl_in(z, op, 0), *dy = tfl_in(z, op, 2);
    EDDY_RETURN_IF_ERROR(rank4(op, x, "input"));
    EDDY_RETURN_IF_ERROR(rank4(op, dy, "out_backprop"));
    EDDY_RETURN_IF_ERROR(sizes(z, op, tfl_in(z, op, 1), 0, 2, w.size));
    EDDY_RETURN_IF_ERROR(read_window(op, &x->type->dims[1], &w));
    return build(z, op, "core.conv2d_filter_grad", x, dy, &w, "filter_size",
                 w.size);
  }
  bool max = strncmp(t, "MaxPool", 7) == 0;
  // MaxPoolV2 and MaxPoolGradV2: MaxPool's ksize and strides as operands.
  bool v2 = max && t[strlen(t) - 2] == 'V' && t[strlen(t) - 1] == '2';
  int64_t kv[4], sv[4];
  if (strcmp(t, "MaxPool") == 0 || strcmp(t, "AvgPool") == 0 ||
      strcmp(t, "MaxPoolV2") == 0) {
    eddy_value_t *x = tfl_in(z, op, 0);
    EDDY_RETURN_IF_ERROR(rank4(op, x, "input"));
    if (v2)
      EDDY_RETURN_IF_ERROR(window_operands(z, op, 1, kv, sv));
    EDDY_RETURN_IF_ERROR(ksize(op, v2 ? kv : NULL, &w));
    EDDY_RETURN_IF_ERROR(
        window_from(op, v2 ? sv : NULL, &x->type->dims[1], &w));
    return build(z, op, max ? "core.max_pool" : "core.avg_pool", x, NULL, &w,
                 NULL, NULL);
  }
  if (strcmp(t, "MaxPoolGrad") == 0 || strcmp(t, "MaxPoolGradV2") == 0) {
    // (orig_input, orig_output, grad[, ksize, strides]): the maxima are
    // found again in orig_input, so orig_output is not read.
    eddy_value_t *x = tfl_in(z, op, 0), *dy = tfl_in(z, op, 2);
    EDDY_RETURN_IF_ERROR(rank4(op, x, "orig_input"));
    EDDY_RETURN_IF_ERROR(rank4(op, dy, "grad"));
    if (v2)
      EDDY_RETURN_IF_ERROR(window_operands(z, op, 3, kv, sv));
    EDDY_RETURN_IF_ERROR(ksize(op, v2 ? kv : NULL, &w));
    EDDY_RETURN_IF_ERROR(
        window_from(op, v2 ? sv : NULL, &x->type->dims[1], &w));
    return build(z, op, "core.max_pool_grad", x, dy, &w, NULL, NULL);
  }
  if (strcmp(t, "AvgPoolGrad") == 0) {
    eddy_value_t *dy = tfl_in(z, op, 1);
    EDDY_RETURN_IF_ERROR(rank4(op, dy, "grad"));
    EDDY_RETURN_IF_ERROR(ksize(op, NULL, &w));
    EDDY_RETURN_IF_ERROR(sizes(z, op, tfl_in(z, op, 0), 1, 2, hw));
    EDDY_RETURN_IF_ERROR(read_window(op, hw, &w));
    return build(z, op, "core.avg_pool_grad", dy, NULL, &w, "input_size", hw);
  }
  *handled = false;
  return NULL;
}

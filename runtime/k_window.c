/// Kernels of the sliding-window ops over NHWC tensors: conv2d, its input
/// and filter gradients, max_pool, avg_pool and their gradients. Each
/// output element is one sum (or max) in f64 over its taps in row-major tap
/// order, rounded once to the dtype; the CPU emitter
/// (backend-cpu/emit_window.c) computes the same elements in the same order.
#include "runtime/rt_internal.h"
#include "runtime/scalar.h"

#include <inttypes.h>
#include <math.h>

static const char *const k_names[] = {
    [EDDY_RT_CONV2D] = "core.conv2d",
    [EDDY_RT_CONV2D_INPUT_GRAD] = "core.conv2d_input_grad",
    [EDDY_RT_CONV2D_FILTER_GRAD] = "core.conv2d_filter_grad",
    [EDDY_RT_MAX_POOL] = "core.max_pool",
    [EDDY_RT_AVG_POOL] = "core.avg_pool",
    [EDDY_RT_MAX_POOL_GRAD] = "core.max_pool_grad",
    [EDDY_RT_AVG_POOL_GRAD] = "core.avg_pool_grad",
};

/// What one element's computation reads.
typedef struct win {
  const eddy_rt_tensor_t *a, *b;
  const eddy_rt_window_t *w;
  int64_t in[2];  ///< spatial size of the op's input (the one windowed)
  int64_t out[2]; ///< window positions per spatial dim
} win_t;

static int64_t at4(const int64_t *d, int64_t i0, int64_t i1, int64_t i2,
                   int64_t i3) {
  return ((i0 * d[1] + i1) * d[2] + i2) * d[3] + i3;
}

/// The input coordinate of tap t of window position p along spatial dim j,
/// or -1 when it falls in the padding.
static int64_t tap(const win_t *c, int j, int64_t p, int64_t t) {
  const eddy_rt_window_t *w = c->w;
  int64_t i = p * w->strides[j] - w->pads[2 * j] + t * w->dilations[j];
  return i >= 0 && i < c->in[j] ? i : -1;
}

/// The window position whose tap t reads input coordinate i along dim j, or
/// -1 when none does.
static int64_t position(const win_t *c, int j, int64_t i, int64_t t) {
  const eddy_rt_window_t *w = c->w;
  int64_t q = i + w->pads[2 * j] - t * w->dilations[j];
  if (q < 0 || q % w->strides[j] != 0 || q / w->strides[j] >= c->out[j])
    return -1;
  return q / w->strides[j];
}

/// The number of input elements the window at (p0, p1) covers.
static int64_t count(const win_t *c, int64_t p0, int64_t p1) {
  int64_t n[2];
  for (int j = 0; j < 2; j++) {
    int64_t lo = (j ? p1 : p0) * c->w->strides[j] - c->w->pads[2 * j];
    int64_t hi = lo + c->w->size[j];
    n[j] = (hi < c->in[j] ? hi : c->in[j]) - (lo > 0 ? lo : 0);
  }
  return n[0] * n[1];
}

/// The tap (t0, t1) of the window at (p0, p1) over channel ch of batch
/// element bn that holds its maximum: the first in tap order, replaced by a
/// later one only when strictly larger. False when the window covers no
/// input element.
static bool argmax(const win_t *c, int64_t bn, int64_t p0, int64_t p1,
                   int64_t ch, int64_t *t0, int64_t *t1) {
  const int64_t *d = c->a->dims;
  bool any = false;
  double best = 0;
  for (int64_t k0 = 0; k0 < c->w->size[0]; k0++) {
    int64_t i0 = tap(c, 0, p0, k0);
    for (int64_t k1 = 0; i0 >= 0 && k1 < c->w->size[1]; k1++) {
      int64_t i1 = tap(c, 1, p1, k1);
      if (i1 < 0)
        continue;
      double v = eddy_rt_tensor_get_f64(c->a, at4(d, bn, i0, i1, ch));
      if (!any || v > best) {
        best = v;
        *t0 = k0;
        *t1 = k1;
      }
      any = true;
    }
  }
  return any;
}

/// Element o = (o0, o1, o2, o3) of the result.
static double element(eddy_rt_window_op_t kind, const win_t *c,
                      const int64_t *o) {
  const eddy_rt_tensor_t *a = c->a, *b = c->b;
  const eddy_rt_window_t *w = c->w;
  double acc = 0;
  switch (kind) {
  case EDDY_RT_CONV2D: // a: x [N, H, W, C], b: filter [KH, KW, C, O]
    for (int64_t k0 = 0; k0 < w->size[0]; k0++) {
      int64_t i0 = tap(c, 0, o[1], k0);
      for (int64_t k1 = 0; i0 >= 0 && k1 < w->size[1]; k1++) {
        int64_t i1 = tap(c, 1, o[2], k1);
        for (int64_t ch = 0; i1 >= 0 && ch < a->dims[3]; ch++)
          acc += eddy_rt_tensor_get_f64(a, at4(a->dims, o[0], i0, i1, ch)) *
                 eddy_rt_tensor_get_f64(b, at4(b->dims, k0, k1, ch, o[3]));
      }
    }
    return acc;
  case EDDY_RT_CONV2D_INPUT_GRAD: // a: dy [N, OH, OW, O], b: the filter
    for (int64_t k0 = 0; k0 < w->size[0]; k0++) {
      int64_t p0 = position(c, 0, o[1], k0);
      for (int64_t k1 = 0; p0 >= 0 && k1 < w->size[1]; k1++) {
        int64_t p1 = position(c, 1, o[2], k1);
        for (int64_t f = 0; p1 >= 0 && f < a->dims[3]; f++)
          acc += eddy_rt_tensor_get_f64(a, at4(a->dims, o[0], p0, p1, f)) *
                 eddy_rt_tensor_get_f64(b, at4(b->dims, k0, k1, o[3], f));
      }
    }
    return acc;
  case EDDY_RT_CONV2D_FILTER_GRAD: // a: x, b: dy; o = (k0, k1, ch, f)
    for (int64_t n = 0; n < a->dims[0]; n++)
      for (int64_t p0 = 0; p0 < c->out[0]; p0++) {
        int64_t i0 = tap(c, 0, p0, o[0]);
        for (int64_t p1 = 0; i0 >= 0 && p1 < c->out[1]; p1++) {
          int64_t i1 = tap(c, 1, p1, o[1]);
          if (i1 >= 0)
            acc += eddy_rt_tensor_get_f64(a, at4(a->dims, n, i0, i1, o[2])) *
                   eddy_rt_tensor_get_f64(b, at4(b->dims, n, p0, p1, o[3]));
        }
      }
    return acc;
  case EDDY_RT_MAX_POOL: { // b, when given: the values selected
    int64_t t0, t1;
    if (!argmax(c, o[0], o[1], o[2], o[3], &t0, &t1))
      return b ? 0.0 : -INFINITY;
    return eddy_rt_tensor_get_f64(
        b ? b : a,
        at4(a->dims, o[0], tap(c, 0, o[1], t0), tap(c, 1, o[2], t1), o[3]));
  }
  case EDDY_RT_AVG_POOL: {
    for (int64_t k0 = 0; k0 < w->size[0]; k0++) {
      int64_t i0 = tap(c, 0, o[1], k0);
      for (int64_t k1 = 0; i0 >= 0 && k1 < w->size[1]; k1++) {
        int64_t i1 = tap(c, 1, o[2], k1);
        if (i1 >= 0)
          acc += eddy_rt_tensor_get_f64(a, at4(a->dims, o[0], i0, i1, o[3]));
      }
    }
    int64_t n = count(c, o[1], o[2]);
    return n > 0 ? acc / (double)n : NAN;
  }
  case EDDY_RT_MAX_POOL_GRAD: // a: the pool's input, b: dy
  case EDDY_RT_AVG_POOL_GRAD: // a: dy
    for (int64_t k0 = 0; k0 < w->size[0]; k0++) {
      int64_t p0 = position(c, 0, o[1], k0);
      for (int64_t k1 = 0; p0 >= 0 && k1 < w->size[1]; k1++) {
        int64_t p1 = position(c, 1, o[2], k1);
        if (p1 < 0)
          continue;
        if (kind == EDDY_RT_AVG_POOL_GRAD) {
          acc += eddy_rt_tensor_get_f64(a, at4(a->dims, o[0], p0, p1, o[3])) /
                 (double)count(c, p0, p1);
          continue;
        }
        int64_t t0, t1;
        if (argmax(c, o[0], p0, p1, o[3], &t0, &t1) && t0 == k0 && t1 == k1)
          acc += eddy_rt_tensor_get_f64(b, at4(b->dims, o[0], p0, p1, o[3]));
      }
    }
    return acc;
  }
  return NAN;
}

eddy_rt_status_t eddy_rt_window(eddy_rt_ctx_t *ctx, eddy_rt_window_op_t kind,
                                const eddy_rt_tensor_t *a,
                                const eddy_rt_tensor_t *b,
                                const eddy_rt_window_t *w,
                                const int64_t *input_size,
                                eddy_rt_tensor_t *out_t) {
  *out_t = eddy_rt_tensor_empty();
  if ((int)kind < 0 || kind > EDDY_RT_AVG_POOL_GRAD)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, "core.conv2d",
                  "unknown sliding-window op %d", (int)kind);
  const char *op = k_names[kind];
  bool two = kind == EDDY_RT_CONV2D || kind == EDDY_RT_CONV2D_INPUT_GRAD ||
             kind == EDDY_RT_CONV2D_FILTER_GRAD ||
             kind == EDDY_RT_MAX_POOL_GRAD || (kind == EDDY_RT_MAX_POOL && b);
  EDDY_RT_RETURN_IF_ERROR(rt_check_operand(a, op, 0));
  if (two)
    EDDY_RT_RETURN_IF_ERROR(rt_check_operand(b, op, 1));
  char sa[RT_SHAPE_BUF], sb[RT_SHAPE_BUF];
  if (a->rank != 4 || (two && b->rank != 4))
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "the operands must have rank 4, got shapes %s and %s",
                  rt_shape_str(a, sa), two ? rt_shape_str(b, sb) : "none");
  if (!eddy_rt_dtype_is_float(a->dtype) || (two && b->dtype != a->dtype))
    return rt_err_dtype(op, "the operands", a->dtype, "one float dtype");
  eddy_rt_window_t ww = *w;
  win_t c = {.a = a, .b = b, .w = &ww};
  // The windowed input's spatial size, the window positions and the
  // result's dims; sizes given by the op are checked against its operands.
  const eddy_rt_tensor_t *dy = NULL;
  int64_t dims[4];
  switch (kind) {
  case EDDY_RT_CONV2D:
  case EDDY_RT_CONV2D_INPUT_GRAD:
    ww.size[0] = b->dims[0];
    ww.size[1] = b->dims[1];
    if (kind == EDDY_RT_CONV2D) {
      c.in[0] = a->dims[1];
      c.in[1] = a->dims[2];
      dims[0] = a->dims[0];
      dims[3] = b->dims[3];
      if (a->dims[3] != b->dims[2])
        return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                      "the input %s and the filter %s differ in channels",
                      rt_shape_str(a, sa), rt_shape_str(b, sb));
    } else {
      c.in[0] = input_size[0];
      c.in[1] = input_size[1];
      dy = a;
      dims[0] = a->dims[0];
      dims[3] = b->dims[2];
      if (a->dims[3] != b->dims[3])
        return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                      "the adjoint %s and the filter %s differ in outputs",
                      rt_shape_str(a, sa), rt_shape_str(b, sb));
    }
    break;
  case EDDY_RT_CONV2D_FILTER_GRAD:
  case EDDY_RT_MAX_POOL_GRAD:
    c.in[0] = a->dims[1];
    c.in[1] = a->dims[2];
    dy = b;
    if (a->dims[0] != b->dims[0] ||
        (kind == EDDY_RT_MAX_POOL_GRAD && a->dims[3] != b->dims[3]))
      return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                    "the input %s and the adjoint %s do not fit",
                    rt_shape_str(a, sa), rt_shape_str(b, sb));
    if (kind == EDDY_RT_MAX_POOL_GRAD) {
      for (int j = 0; j < 4; j++)
        dims[j] = a->dims[j];
    } else {
      dims[0] = ww.size[0];
      dims[1] = ww.size[1];
      dims[2] = a->dims[3];
      dims[3] = b->dims[3];
    }
    break;
  case EDDY_RT_MAX_POOL:
  case EDDY_RT_AVG_POOL:
    for (int j = 0; b && j < 4; j++)
      if (a->dims[j] != b->dims[j])
        return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                      "the input %s and the selected operand %s differ in "
                      "shape",
                      rt_shape_str(a, sa), rt_shape_str(b, sb));
    c.in[0] = a->dims[1];
    c.in[1] = a->dims[2];
    dims[0] = a->dims[0];
    dims[3] = a->dims[3];
    break;
  case EDDY_RT_AVG_POOL_GRAD:
    c.in[0] = input_size[0];
    c.in[1] = input_size[1];
    dy = a;
    dims[0] = a->dims[0];
    dims[3] = a->dims[3];
    break;
  }
  for (int j = 0; j < 2; j++) {
    c.out[j] = eddy_scalar_window_out(c.in[j], ww.pads[2 * j],
                                      ww.pads[2 * j + 1], ww.size[j],
                                      ww.dilations[j], ww.strides[j]);
    if (c.out[j] < 0)
      return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                    "the %s %" PRId64 " (padded by %" PRId64 " and %" PRId64
                    ") is shorter than the window of %" PRId64
                    " taps (dilation %" PRId64 ", stride %" PRId64 ")",
                    j ? "width" : "height", c.in[j], ww.pads[2 * j],
                    ww.pads[2 * j + 1], ww.size[j], ww.dilations[j],
                    ww.strides[j]);
    if (dy && dy->dims[1 + j] != c.out[j])
      return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                    "the adjoint %s has %" PRId64 " window positions along "
                    "the %s, expected %" PRId64,
                    rt_shape_str(dy, sa), dy->dims[1 + j],
                    j ? "width" : "height", c.out[j]);
  }
  if (kind == EDDY_RT_CONV2D || kind == EDDY_RT_MAX_POOL ||
      kind == EDDY_RT_AVG_POOL) {
    dims[1] = c.out[0];
    dims[2] = c.out[1];
  } else if (kind == EDDY_RT_CONV2D_INPUT_GRAD ||
             kind == EDDY_RT_AVG_POOL_GRAD) {
    dims[1] = c.in[0];
    dims[2] = c.in[1];
  }
  EDDY_RT_RETURN_IF_ERROR(rt_alloc_tensor(ctx, op, a->dtype, 4, dims, out_t));
  int64_t n = eddy_rt_tensor_numel(out_t), o[4];
  for (int64_t i = 0; i < n; i++) {
    int64_t r = i;
    for (int j = 3; j >= 0; j--) {
      o[j] = r % dims[j];
      r /= dims[j];
    }
    eddy_rt_tensor_set_f64(out_t, i, element(kind, &c, o));
  }
  return NULL;
}

/// Kernels of the ops that index along an axis: reverse (a strided view
/// with negative strides, copied), argmax / argmin and the scans cumsum /
/// cumprod; and scatter, topk and where. Each output element is computed exactly as the constant folder
/// does (dialects/core/core_index.c): float scans accumulate in f64 and
/// round each output once, integer scans wrap.
#include "runtime/rt_internal.h"

#include <inttypes.h>
#include <math.h>

eddy_rt_status_t eddy_rt_reverse(eddy_rt_ctx_t *ctx, const eddy_rt_tensor_t *x,
                                 const int64_t *axes, int32_t n,
                                 eddy_rt_tensor_t *out_t) {
  const char *op = "core.reverse";
  *out_t = eddy_rt_tensor_empty();
  EDDY_RT_RETURN_IF_ERROR(rt_check_operand(x, op, 0));
  if (n < 0 || n > EDDY_RT_MAX_RANK)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "axes has %d entries, expected 0..%d", (int)n,
                  EDDY_RT_MAX_RANK);
  int64_t strides[EDDY_RT_MAX_RANK];
  bool seen[EDDY_RT_MAX_RANK] = {false};
  for (int32_t i = 0; i < x->rank; i++)
    strides[i] = x->strides[i];
  EDDY_RT_RETURN_IF_ERROR(
      rt_alloc_tensor(ctx, op, x->dtype, x->rank, x->dims, out_t));
  if (eddy_rt_tensor_numel(out_t) == 0) {
    for (int32_t i = 0; i < n; i++) {
      int32_t a;
      eddy_rt_status_t st = rt_norm_axis(op, "axis", axes[i], x->rank, &a);
      if (st) {
        eddy_rt_tensor_release(out_t);
        return st;
      }
    }
    return NULL;
  }
  int64_t off = 0;
  for (int32_t i = 0; i < n; i++) {
    int32_t a;
    eddy_rt_status_t st = rt_norm_axis(op, "axis", axes[i], x->rank, &a);
    if (!st && seen[a])
      st = rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "axes name dimension %d more than once", (int)a);
    if (st) {
      eddy_rt_tensor_release(out_t);
      return st;
    }
    seen[a] = true;
    off += (x->dims[a] - 1) * x->strides[a];
    strides[a] = -x->strides[a];
  }
  eddy_rt_tensor_t view =
      rt_view(x, x->rank, x->dims, strides,
              (char *)x->data + off * (int64_t)eddy_rt_dtype_size(x->dtype));
  rt_copy_into(ctx, out_t, &view);
  return NULL;
}

/// outer x n x inner around axis ax of a contiguous tensor.
static void rt_axis_split(const eddy_rt_tensor_t *x, int32_t ax,
                          int64_t *outer, int64_t *n, int64_t *inner) {
  *outer = 1;
  *inner = 1;
  for (int32_t i = 0; i < x->rank; i++) {
    if (i < ax)
      *outer *= x->dims[i];
    else if (i > ax)
      *inner *= x->dims[i];
  }
  *n = x->dims[ax];
}

/// NaN beats everything but NaN; the first of equals is kept.
static bool rt_arg_better_f(double a, double b, bool mx) {
  if (isnan(b))
    return false;
  if (isnan(a))
    return true;
  return mx ? a > b : a < b;
}

eddy_rt_status_t eddy_rt_arg(eddy_rt_ctx_t *ctx, bool is_max,
                             const eddy_rt_tensor_t *x, int64_t axis,
                             int32_t dtype, eddy_rt_tensor_t *out_t) {
  const char *op = is_max ? "core.argmax" : "core.argmin";
  *out_t = eddy_rt_tensor_empty();
  EDDY_RT_RETURN_IF_ERROR(rt_check_operand(x, op, 0));
  if (dtype != EDDY_RT_I32 && dtype != EDDY_RT_I64)
    return rt_err_dtype(op, "the index dtype", dtype, "i32 or i64");
  if (x->dtype == EDDY_RT_I1)
    return rt_err_dtype(op, "operand 0", x->dtype, "a numeric dtype");
  if (x->rank < 1)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "operand 0 is a scalar; expected rank >= 1");
  int32_t ax;
  EDDY_RT_RETURN_IF_ERROR(rt_norm_axis(op, "axis", axis, x->rank, &ax));
  if (x->dims[ax] == 0) {
    char sx[RT_SHAPE_BUF];
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "dimension %d of operand 0 of shape %s is empty", (int)ax,
                  rt_shape_str(x, sx));
  }
  int64_t dims[EDDY_RT_MAX_RANK];
  int32_t r = 0;
  for (int32_t i = 0; i < x->rank; i++)
    if (i != ax)
      dims[r++] = x->dims[i];
  EDDY_RT_RETURN_IF_ERROR(rt_alloc_tensor(ctx, op, dtype, r, dims, out_t));
  if (eddy_rt_tensor_numel(out_t) == 0)
    return NULL;
  eddy_rt_tensor_t src;
  eddy_rt_status_t st = rt_make_owned_contiguous(ctx, op, x, &src);
  if (st) {
    eddy_rt_tensor_release(out_t);
    return st;
  }
  bool fl = eddy_rt_dtype_is_float(x->dtype);
  int64_t outer, n, inner;
  rt_axis_split(&src, ax, &outer, &n, &inner);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      int64_t base = o * n * inner + i, best = 0;
      if (fl) {
        double b = eddy_rt_tensor_get_f64(&src, base);
        for (int64_t k = 1; k < n; k++) {
          double v = eddy_rt_tensor_get_f64(&src, base + k * inner);
          if (rt_arg_better_f(v, b, is_max)) {
            b = v;
            best = k;
          }
        }
      } else {
        int64_t b = eddy_rt_tensor_get_i64(&src, base);
        for (int64_t k = 1; k < n; k++) {
          int64_t v = eddy_rt_tensor_get_i64(&src, base + k * inner);
          if (is_max ? v > b : v < b) {
            b = v;
            best = k;
          }
        }
      }
      eddy_rt_tensor_set_i64(out_t, o * inner + i, best);
    }
  eddy_rt_tensor_release(&src);
  return NULL;
}

eddy_rt_status_t eddy_rt_cumulative(eddy_rt_ctx_t *ctx, bool is_prod,
                                    const eddy_rt_tensor_t *x, int64_t axis,
                                    bool exclusive, bool reverse,
                                    eddy_rt_tensor_t *out_t) {
  const char *op = is_prod ? "core.cumprod" : "core.cumsum";
  *out_t = eddy_rt_tensor_empty();
  EDDY_RT_RETURN_IF_ERROR(rt_check_operand(x, op, 0));
  if (x->dtype == EDDY_RT_I1)
    return rt_err_dtype(op, "operand 0", x->dtype, "a numeric dtype");
  if (x->rank < 1)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "operand 0 is a scalar; expected rank >= 1");
  int32_t ax;
  EDDY_RT_RETURN_IF_ERROR(rt_norm_axis(op, "axis", axis, x->rank, &ax));
  EDDY_RT_RETURN_IF_ERROR(
      rt_alloc_tensor(ctx, op, x->dtype, x->rank, x->dims, out_t));
  if (eddy_rt_tensor_numel(out_t) == 0)
    return NULL;
  eddy_rt_tensor_t src;
  eddy_rt_status_t st = rt_make_owned_contiguous(ctx, op, x, &src);
  if (st) {
    eddy_rt_tensor_release(out_t);
    return st;
  }
  bool fl = eddy_rt_dtype_is_float(x->dtype);
  int64_t outer, n, inner;
  rt_axis_split(&src, ax, &outer, &n, &inner);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      double fa = is_prod ? 1.0 : 0.0;
      uint64_t ia = is_prod ? 1 : 0;
      for (int64_t s = 0; s < n; s++) {
        int64_t k = reverse ? n - 1 - s : s;
        int64_t p = o * n * inner + k * inner + i;
        if (exclusive) {
          if (fl)
            eddy_rt_tensor_set_f64(out_t, p, fa);
          else
            eddy_rt_tensor_set_i64(out_t, p, (int64_t)ia);
        }
        if (fl) {
          double v = eddy_rt_tensor_get_f64(&src, p);
          fa = is_prod ? fa * v : fa + v;
        } else {
          uint64_t v = (uint64_t)eddy_rt_tensor_get_i64(&src, p);
          ia = is_prod ? ia * v : ia + v;
        }
        if (!exclusive) {
          if (fl)
            eddy_rt_tensor_set_f64(out_t, p, fa);
          else
            eddy_rt_tensor_set_i64(out_t, p, (int64_t)ia);
        }
      }
    }
  eddy_rt_tensor_release(&src);
  return NULL;
}

eddy_rt_status_t eddy_rt_scatter(eddy_rt_ctx_t *ctx,
                                 const eddy_rt_tensor_t *indices,
                                 const eddy_rt_tensor_t *updates, int64_t axis,
                                 int64_t size, eddy_rt_tensor_t *out_t) {
  const char *op = "core.scatter";
  *out_t = eddy_rt_tensor_empty();
  EDDY_RT_RETURN_IF_ERROR(rt_check_operand(indices, op, 0));
  EDDY_RT_RETURN_IF_ERROR(rt_check_operand(updates, op, 1));
  if (!eddy_rt_dtype_is_int(indices->dtype))
    return rt_err_dtype(op, "the indices (operand 0)", indices->dtype,
                        "i8, i32 or i64");
  if (updates->dtype == EDDY_RT_I1)
    return rt_err_dtype(op, "the updates (operand 1)", updates->dtype,
                        "a numeric dtype");
  char si[RT_SHAPE_BUF], su[RT_SHAPE_BUF];
  bool fit = axis >= 0 && size >= 0 && axis + indices->rank <= updates->rank;
  for (int32_t i = 0; fit && i < indices->rank; i++)
    fit = indices->dims[i] == updates->dims[axis + i];
  if (!fit)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "indices of shape %s do not fit updates of shape %s at axis "
                  "%" PRId64 " (or size %" PRId64 " is negative)",
                  rt_shape_str(indices, si), rt_shape_str(updates, su), axis,
                  size);
  int64_t nidx = eddy_rt_tensor_numel(indices);
  for (int64_t t = 0; t < nidx; t++) {
    int64_t v = eddy_rt_tensor_get_i64(indices, t);
    if (v < 0 || v >= size)
      return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                    "index %" PRId64 " (element %" PRId64
                    " of indices of shape %s) is out of range (expected 0 "
                    "<= index < %" PRId64 ")",
                    v, t, rt_shape_str(indices, si), size);
  }
  int64_t dims[EDDY_RT_MAX_RANK], pre = 1, post = 1;
  int32_t r = 0;
  for (int32_t i = 0; i < axis; i++) {
    dims[r++] = updates->dims[i];
    pre *= updates->dims[i];
  }
  dims[r++] = size;
  for (int32_t i = (int32_t)axis + indices->rank; i < updates->rank; i++) {
    dims[r++] = updates->dims[i];
    post *= updates->dims[i];
  }
  EDDY_RT_RETURN_IF_ERROR(
      rt_alloc_tensor(ctx, op, updates->dtype, r, dims, out_t));
  int64_t n = eddy_rt_tensor_numel(out_t);
  bool fl = eddy_rt_dtype_is_float(updates->dtype);
  for (int64_t i = 0; i < n; i++)
    eddy_rt_tensor_set_i64(out_t, i, 0);
  if (n == 0 || eddy_rt_tensor_numel(updates) == 0)
    return NULL;
  eddy_rt_tensor_t src;
  eddy_rt_status_t st = rt_make_owned_contiguous(ctx, op, updates, &src);
  if (st) {
    eddy_rt_tensor_release(out_t);
    return st;
  }
  for (int64_t p = 0; p < pre; p++)
    for (int64_t j = 0; j < nidx; j++) {
      int64_t k = eddy_rt_tensor_get_i64(indices, j);
      for (int64_t q = 0; q < post; q++) {
        int64_t from = (p * nidx + j) * post + q, to = (p * size + k) * post + q;
        if (fl)
          eddy_rt_tensor_set_f64(out_t, to,
                                 eddy_rt_tensor_get_f64(out_t, to) +
                                     eddy_rt_tensor_get_f64(&src, from));
        else
          eddy_rt_tensor_set_i64(
              out_t, to,
              (int64_t)((uint64_t)eddy_rt_tensor_get_i64(out_t, to) +
                        (uint64_t)eddy_rt_tensor_get_i64(&src, from)));
      }
    }
  eddy_rt_tensor_release(&src);
  return NULL;
}

/// a comes before b in topk's order: larger first (NaN largest), then the
/// lower index.
static bool rt_topk_before(double a, int64_t ia, double b, int64_t ib) {
  bool na = isnan(a), nb = isnan(b);
  if (na != nb)
    return na;
  if (!na && a != b)
    return a > b;
  return ia < ib;
}

eddy_rt_status_t eddy_rt_topk(eddy_rt_ctx_t *ctx, const eddy_rt_tensor_t *x,
                              int64_t k, eddy_rt_tensor_t *out_ts) {
  const char *op = "core.topk";
  out_ts[0] = eddy_rt_tensor_empty();
  out_ts[1] = eddy_rt_tensor_empty();
  EDDY_RT_RETURN_IF_ERROR(rt_check_operand(x, op, 0));
  if (x->dtype == EDDY_RT_I1)
    return rt_err_dtype(op, "operand 0", x->dtype, "a numeric dtype");
  char sx[RT_SHAPE_BUF];
  if (x->rank < 1 || k < 0 || x->dims[x->rank - 1] < k)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "operand 0 of shape %s needs a last dimension of at least "
                  "k = %" PRId64,
                  rt_shape_str(x, sx), k);
  int64_t dims[EDDY_RT_MAX_RANK];
  for (int32_t i = 0; i < x->rank; i++)
    dims[i] = x->dims[i];
  dims[x->rank - 1] = k;
  EDDY_RT_RETURN_IF_ERROR(
      rt_alloc_tensor(ctx, op, x->dtype, x->rank, dims, &out_ts[0]));
  eddy_rt_status_t st =
      rt_alloc_tensor(ctx, op, EDDY_RT_I32, x->rank, dims, &out_ts[1]);
  if (st) {
    eddy_rt_tensor_release(&out_ts[0]);
    return st;
  }
  if (eddy_rt_tensor_numel(&out_ts[0]) == 0)
    return NULL;
  eddy_rt_tensor_t src;
  st = rt_make_owned_contiguous(ctx, op, x, &src);
  if (st) {
    eddy_rt_tensor_release(&out_ts[0]);
    eddy_rt_tensor_release(&out_ts[1]);
    return st;
  }
  bool fl = eddy_rt_dtype_is_float(x->dtype);
  int64_t n = x->dims[x->rank - 1], rows = eddy_rt_tensor_numel(&src) / n;
  for (int64_t row = 0; row < rows; row++) {
    // Selection: each step takes the first element, in topk's order, that
    // comes after the one taken before (ints compare as int64, exactly).
    double pv = 0;
    int64_t pi = -1, piv = 0;
    for (int64_t r = 0; r < k; r++) {
      double bv = 0;
      int64_t bi = -1, biv = 0;
      for (int64_t j = 0; j < n; j++) {
        int64_t at = row * n + j;
        bool after, better;
        if (fl) {
          double v = eddy_rt_tensor_get_f64(&src, at);
          after = pi < 0 || rt_topk_before(pv, pi, v, j);
          better = bi < 0 || rt_topk_before(v, j, bv, bi);
          if (after && better) {
            bv = v;
            bi = j;
          }
        } else {
          int64_t v = eddy_rt_tensor_get_i64(&src, at);
          after = pi < 0 || piv > v || (piv == v && pi < j);
          better = bi < 0 || v > biv || (v == biv && j < bi);
          if (after && better) {
            biv = v;
            bi = j;
          }
        }
      }
      int64_t to = row * k + r;
      if (fl)
        eddy_rt_tensor_set_f64(&out_ts[0], to, bv);
      else
        eddy_rt_tensor_set_i64(&out_ts[0], to, biv);
      eddy_rt_tensor_set_i64(&out_ts[1], to, bi);
      pv = bv;
      piv = biv;
      pi = bi;
    }
  }
  eddy_rt_tensor_release(&src);
  return NULL;
}

/// Element flat of x is nonzero (NaN is; -0.0 is not).
static bool rt_nonzero(const eddy_rt_tensor_t *x, bool fl, int64_t flat) {
  if (fl)
    return eddy_rt_tensor_get_f64(x, flat) != 0.0;
  return eddy_rt_tensor_get_i64(x, flat) != 0;
}

eddy_rt_status_t eddy_rt_where(eddy_rt_ctx_t *ctx, const eddy_rt_tensor_t *x,
                               const eddy_rt_tensor_t *n,
                               eddy_rt_tensor_t *out_t) {
  const char *op = "core.where";
  *out_t = eddy_rt_tensor_empty();
  EDDY_RT_RETURN_IF_ERROR(rt_check_operand(x, op, 0));
  EDDY_RT_RETURN_IF_ERROR(rt_check_operand(n, op, 1));
  if (!eddy_rt_dtype_is_int(n->dtype) || n->rank != 0)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "the count (operand 1) must be an integer scalar");
  bool fl = eddy_rt_dtype_is_float(x->dtype);
  int64_t total = eddy_rt_tensor_numel(x), count = 0;
  for (int64_t i = 0; i < total; i++)
    count += rt_nonzero(x, fl, i);
  int64_t want = eddy_rt_tensor_get_i64(n, 0);
  if (want != count)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "the count (operand 1) is %" PRId64 ", but operand 0 has %"
                  PRId64 " nonzero elements",
                  want, count);
  int64_t dims[2] = {count, x->rank};
  EDDY_RT_RETURN_IF_ERROR(rt_alloc_tensor(ctx, op, EDDY_RT_I64, 2, dims, out_t));
  int64_t row = 0;
  for (int64_t i = 0; i < total && row < count; i++) {
    if (!rt_nonzero(x, fl, i))
      continue;
    int64_t rest = i;
    for (int32_t d = x->rank - 1; d >= 0; d--) {
      eddy_rt_tensor_set_i64(out_t, row * x->rank + d, rest % x->dims[d]);
      rest /= x->dims[d];
    }
    row++;
  }
  return NULL;
}

/// Data movement kernels (reshape, transpose, broadcast_to, concat, split,
/// slice, gather, pad) and shape queries (shape, dim). They move element
/// bytes, so they are exact for every dtype; each builds a strided view and
/// lets the copy engine (rt_copy_into) do the work.
#include "runtime/rt_internal.h"

#include <inttypes.h>

static eddy_rt_status_t rt_check_count(const char *op, const char *what,
                                       int32_t n) {
  if (n < 0 || n > EDDY_RT_MAX_RANK)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "%s has %d entries, expected 0..%d", what, (int)n,
                  EDDY_RT_MAX_RANK);
  return NULL;
}

eddy_rt_status_t eddy_rt_reshape(eddy_rt_ctx_t *ctx, const eddy_rt_tensor_t *x,
                                 const int64_t *shape, int32_t n,
                                 eddy_rt_tensor_t *out_t) {
  const char *op = "core.reshape";
  *out_t = eddy_rt_tensor_empty();
  EDDY_RT_RETURN_IF_ERROR(rt_check_operand(x, op, 0));
  EDDY_RT_RETURN_IF_ERROR(rt_check_count(op, "shape", n));
  int32_t infer_at = -1;
  int64_t known = 1; // product of the entries other than -1
  bool overflow = false;
  for (int32_t i = 0; i < n; i++) {
    if (shape[i] == -1) {
      if (infer_at >= 0)
        return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                      "shape may contain -1 only once");
      infer_at = i;
    } else if (shape[i] < 0) {
      return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                    "shape entry %d is %" PRId64 ", expected >= 0 or -1",
                    (int)i, shape[i]);
    } else if (shape[i] != 0 && known > INT64_MAX / shape[i]) {
      overflow = true;
    } else {
      known *= shape[i];
    }
  }
  int64_t count = eddy_rt_tensor_numel(x);
  int64_t dims[EDDY_RT_MAX_RANK];
  for (int32_t i = 0; i < n; i++)
    dims[i] = shape[i];
  char sx[RT_SHAPE_BUF], ss[RT_SHAPE_BUF];
  if (infer_at >= 0) {
    if (overflow || known == 0 || count % known != 0)
      return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                    "cannot reshape %s into %s (-1 cannot be inferred)",
                    rt_shape_str(x, sx),
                    eddy_rt_shape_format(n, shape, ss, sizeof(ss)));
    dims[infer_at] = count / known;
  } else if (overflow || known != count) {
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "cannot reshape %s into %s (element counts differ)",
                  rt_shape_str(x, sx),
                  eddy_rt_shape_format(n, shape, ss, sizeof(ss)));
  }
  EDDY_RT_RETURN_IF_ERROR(rt_make_owned_contiguous(ctx, op, x, out_t));
  out_t->rank = n;
  for (int32_t i = 0; i < n; i++)
    out_t->dims[i] = dims[i];
  rt_set_contiguous_strides(out_t);
  return NULL;
}

eddy_rt_status_t eddy_rt_transpose(eddy_rt_ctx_t *ctx,
                                   const eddy_rt_tensor_t *x,
                                   const int64_t *perm, int32_t n,
                                   eddy_rt_tensor_t *out_t) {
  const char *op = "core.transpose";
  *out_t = eddy_rt_tensor_empty();
  EDDY_RT_RETURN_IF_ERROR(rt_check_operand(x, op, 0));
  char sp[RT_SHAPE_BUF], sx[RT_SHAPE_BUF];
  if (n != x->rank)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "perm %s has %d entries; operand 0 of shape %s has rank %d",
                  eddy_rt_shape_format(n < 0 ? 0 : n, perm, sp, sizeof(sp)),
                  (int)n, rt_shape_str(x, sx), (int)x->rank);
  bool seen[EDDY_RT_MAX_RANK] = {false};
  int64_t dims[EDDY_RT_MAX_RANK], strides[EDDY_RT_MAX_RANK];
  for (int32_t i = 0; i < n; i++) {
    if (perm[i] < 0 || perm[i] >= n || seen[perm[i]])
      return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                    "perm %s is not a permutation of 0..%d",
                    eddy_rt_shape_format(n, perm, sp, sizeof(sp)), (int)n - 1);
    seen[perm[i]] = true;
    dims[i] = x->dims[perm[i]];
    strides[i] = x->strides[perm[i]];
  }
  eddy_rt_tensor_t view = rt_view(x, n, dims, strides, x->data);
  EDDY_RT_RETURN_IF_ERROR(rt_alloc_tensor(ctx, op, x->dtype, n, dims, out_t));
  rt_copy_into(ctx, out_t, &view);
  return NULL;
}

eddy_rt_status_t eddy_rt_broadcast_to(eddy_rt_ctx_t *ctx,
                                      const eddy_rt_tensor_t *x,
                                      const int64_t *shape, int32_t n,
                                      eddy_rt_tensor_t *out_t) {
  const char *op = "core.broadcast_to";
  *out_t = eddy_rt_tensor_empty();
  EDDY_RT_RETURN_IF_ERROR(rt_check_operand(x, op, 0));
  EDDY_RT_RETURN_IF_ERROR(rt_check_count(op, "shape", n));
  bool ok = x->rank <= n;
  for (int32_t i = 0; i < n; i++)
    ok = ok && shape[i] >= 0;
  for (int32_t i = 0; ok && i < x->rank; i++) {
    int64_t d = x->dims[i], t = shape[n - x->rank + i];
    ok = d == 1 || d == t;
  }
  if (!ok) {
    char sx[RT_SHAPE_BUF], ss[RT_SHAPE_BUF];
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "cannot broadcast operand 0 of shape %s to shape %s",
                  rt_shape_str(x, sx),
                  eddy_rt_shape_format(n, shape, ss, sizeof(ss)));
  }
  EDDY_RT_RETURN_IF_ERROR(rt_alloc_tensor(ctx, op, x->dtype, n, shape, out_t));
  rt_copy_into(ctx, out_t, x);
  return NULL;
}

eddy_rt_status_t eddy_rt_concat(eddy_rt_ctx_t *ctx,
                                const eddy_rt_tensor_t *const *xs, int32_t n,
                                int64_t axis, eddy_rt_tensor_t *out_t) {
  const char *op = "core.concat";
  *out_t = eddy_rt_tensor_empty();
  if (n < 1)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "got %d operands, expected at least 1", (int)n);
  for (int32_t k = 0; k < n; k++)
    EDDY_RT_RETURN_IF_ERROR(rt_check_operand(xs[k], op, k));
  const eddy_rt_tensor_t *first = xs[0];
  char s0[RT_SHAPE_BUF], sk[RT_SHAPE_BUF];
  if (first->rank < 1)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "operand 0 is a scalar; expected rank >= 1");
  int32_t ax;
  EDDY_RT_RETURN_IF_ERROR(rt_norm_axis(op, "axis", axis, first->rank, &ax));
  int64_t dims[EDDY_RT_MAX_RANK];
  for (int32_t i = 0; i < first->rank; i++)
    dims[i] = first->dims[i];
  dims[ax] = 0;
  for (int32_t k = 0; k < n; k++) {
    const eddy_rt_tensor_t *t = xs[k];
    if (t->dtype != first->dtype || t->rank != first->rank)
      return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                    "operand %d is %s but operand 0 is %s; expected the same "
                    "dtype and rank",
                    (int)k, rt_type_str(t, sk), rt_type_str(first, s0));
    for (int32_t i = 0; i < t->rank; i++) {
      if (i != ax && t->dims[i] != first->dims[i])
        return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                      "operand %d of shape %s and operand 0 of shape %s "
                      "differ at dimension %d (only axis %d may differ)",
                      (int)k, rt_shape_str(t, sk), rt_shape_str(first, s0),
                      (int)i, (int)ax);
    }
    if (t->dims[ax] > INT64_MAX - dims[ax])
      return rt_err(EDDY_RT_ERR_RESOURCE, op,
                    "concatenated dimension overflows int64");
    dims[ax] += t->dims[ax];
  }
  EDDY_RT_RETURN_IF_ERROR(
      rt_alloc_tensor(ctx, op, first->dtype, first->rank, dims, out_t));
  int64_t pos = 0;
  size_t es = eddy_rt_dtype_size(first->dtype);
  for (int32_t k = 0; k < n; k++) {
    const eddy_rt_tensor_t *t = xs[k];
    eddy_rt_tensor_t dst =
        rt_view(out_t, t->rank, t->dims, out_t->strides,
                (char *)out_t->data + pos * out_t->strides[ax] * (int64_t)es);
    rt_copy_into(ctx, &dst, t);
    pos += t->dims[ax];
  }
  return NULL;
}

eddy_rt_status_t eddy_rt_split(eddy_rt_ctx_t *ctx, const eddy_rt_tensor_t *x,
                               int64_t axis, int32_t num_splits,
                               eddy_rt_tensor_t *out_ts) {
  const char *op = "core.split";
  for (int32_t k = 0; k < num_splits; k++)
    out_ts[k] = eddy_rt_tensor_empty();
  EDDY_RT_RETURN_IF_ERROR(rt_check_operand(x, op, 0));
  if (num_splits < 1)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "num_splits is %d, expected >= 1", (int)num_splits);
  if (x->rank < 1)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "operand 0 is a scalar; expected rank >= 1");
  int32_t ax;
  EDDY_RT_RETURN_IF_ERROR(rt_norm_axis(op, "axis", axis, x->rank, &ax));
  if (x->dims[ax] % num_splits != 0) {
    char sx[RT_SHAPE_BUF];
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "dimension %d of operand 0 of shape %s (size %" PRId64
                  ") is not divisible by num_splits %d",
                  (int)ax, rt_shape_str(x, sx), x->dims[ax], (int)num_splits);
  }
  int64_t dims[EDDY_RT_MAX_RANK];
  for (int32_t i = 0; i < x->rank; i++)
    dims[i] = x->dims[i];
  int64_t part = x->dims[ax] / num_splits;
  dims[ax] = part;
  size_t es = eddy_rt_dtype_size(x->dtype);
  for (int32_t k = 0; k < num_splits; k++) {
    eddy_rt_status_t st =
        rt_alloc_tensor(ctx, op, x->dtype, x->rank, dims, &out_ts[k]);
    if (st) {
      for (int32_t j = 0; j < k; j++)
        eddy_rt_tensor_release(&out_ts[j]);
      return st;
    }
    eddy_rt_tensor_t src =
        rt_view(x, x->rank, dims, x->strides,
                (char *)x->data + k * part * x->strides[ax] * (int64_t)es);
    rt_copy_into(ctx, &out_ts[k], &src);
  }
  return NULL;
}

eddy_rt_status_t eddy_rt_slice(eddy_rt_ctx_t *ctx, const eddy_rt_tensor_t *x,
                               const int64_t *start, const int64_t *limit,
                               const int64_t *strides, int32_t n,
                               eddy_rt_tensor_t *out_t) {
  const char *op = "core.slice";
  *out_t = eddy_rt_tensor_empty();
  EDDY_RT_RETURN_IF_ERROR(rt_check_operand(x, op, 0));
  char sx[RT_SHAPE_BUF];
  if (n != x->rank)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "start/limit have %d entries; operand 0 of shape %s has "
                  "rank %d",
                  (int)n, rt_shape_str(x, sx), (int)x->rank);
  int64_t dims[EDDY_RT_MAX_RANK], vstrides[EDDY_RT_MAX_RANK];
  int64_t off = 0;
  for (int32_t i = 0; i < n; i++) {
    int64_t step = strides ? strides[i] : 1;
    if (step < 1)
      return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                    "stride %" PRId64 " of dimension %d must be >= 1", step,
                    (int)i);
    if (start[i] < 0 || start[i] > limit[i] || limit[i] > x->dims[i])
      return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                    "slice [%" PRId64 ", %" PRId64 ") of dimension %d is out "
                    "of range for operand 0 of shape %s (need 0 <= start <= "
                    "limit <= size)",
                    start[i], limit[i], (int)i, rt_shape_str(x, sx));
    int64_t len = limit[i] - start[i];
    dims[i] = len / step + (len % step != 0);
    // With two or more elements step < size, so the product cannot overflow.
    vstrides[i] = dims[i] > 1 ? x->strides[i] * step : x->strides[i];
    if (dims[i] > 0)
      off += start[i] * x->strides[i];
  }
  EDDY_RT_RETURN_IF_ERROR(rt_alloc_tensor(ctx, op, x->dtype, n, dims, out_t));
  if (eddy_rt_tensor_numel(out_t) == 0)
    return NULL;
  eddy_rt_tensor_t view =
      rt_view(x, n, dims, vstrides,
              (char *)x->data + off * (int64_t)eddy_rt_dtype_size(x->dtype));
  rt_copy_into(ctx, out_t, &view);
  return NULL;
}

eddy_rt_status_t eddy_rt_gather(eddy_rt_ctx_t *ctx,
                                const eddy_rt_tensor_t *params,
                                const eddy_rt_tensor_t *indices, int64_t axis,
                                eddy_rt_tensor_t *out_t) {
  const char *op = "core.gather";
  *out_t = eddy_rt_tensor_empty();
  EDDY_RT_RETURN_IF_ERROR(rt_check_operand(params, op, 0));
  EDDY_RT_RETURN_IF_ERROR(rt_check_operand(indices, op, 1));
  if (!eddy_rt_dtype_is_int(indices->dtype))
    return rt_err_dtype(op, "the indices (operand 1)", indices->dtype,
                        "i8, i32 or i64");
  if (params->rank < 1)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "params (operand 0) is a scalar; expected rank >= 1");
  int32_t ax;
  EDDY_RT_RETURN_IF_ERROR(rt_norm_axis(op, "axis", axis, params->rank, &ax));
  int32_t rank = params->rank - 1 + indices->rank;
  if (rank > EDDY_RT_MAX_RANK)
    return rt_err(EDDY_RT_ERR_UNSUPPORTED, op,
                  "result rank %d is above the runtime's maximum %d",
                  (int)rank, EDDY_RT_MAX_RANK);
  int64_t nidx = eddy_rt_tensor_numel(indices), size = params->dims[ax];
  for (int64_t t = 0; t < nidx; t++) {
    int64_t v = eddy_rt_tensor_get_i64(indices, t);
    if (v < 0 || v >= size) {
      char si[RT_SHAPE_BUF], sp[RT_SHAPE_BUF];
      return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                    "index %" PRId64 " (element %" PRId64
                    " of indices of shape %s) is out of range for axis %d of "
                    "params of shape %s (expected 0 <= index < %" PRId64 ")",
                    v, t, rt_shape_str(indices, si), (int)ax,
                    rt_shape_str(params, sp), size);
    }
  }
  int64_t dims[EDDY_RT_MAX_RANK];
  int32_t r = 0;
  for (int32_t i = 0; i < ax; i++)
    dims[r++] = params->dims[i];
  for (int32_t i = 0; i < indices->rank; i++)
    dims[r++] = indices->dims[i];
  for (int32_t i = ax + 1; i < params->rank; i++)
    dims[r++] = params->dims[i];
  EDDY_RT_RETURN_IF_ERROR(
      rt_alloc_tensor(ctx, op, params->dtype, rank, dims, out_t));
  if (eddy_rt_tensor_numel(out_t) == 0)
    return NULL;
  // The output is non-empty, so these products are bounded by its size.
  int64_t outer = 1, inner = 1;
  for (int32_t i = 0; i < ax; i++)
    outer *= params->dims[i];
  for (int32_t i = ax + 1; i < params->rank; i++)
    inner *= params->dims[i];
  // Rows of `inner` contiguous elements: copy them with memcpy.
  eddy_rt_tensor_t src;
  eddy_rt_status_t st = rt_make_owned_contiguous(ctx, op, params, &src);
  if (st) {
    eddy_rt_tensor_release(out_t);
    return st;
  }
  size_t row = (size_t)inner * eddy_rt_dtype_size(params->dtype);
  const char *p = src.data;
  char *o = out_t->data;
  for (int64_t a = 0; a < outer; a++) {
    for (int64_t t = 0; t < nidx; t++) {
      int64_t v = eddy_rt_tensor_get_i64(indices, t);
      memcpy(o, p + (size_t)(a * size + v) * row, row);
      o += row;
    }
  }
  eddy_rt_tensor_release(&src);
  return NULL;
}

eddy_rt_status_t eddy_rt_pad(eddy_rt_ctx_t *ctx, const eddy_rt_tensor_t *x,
                             const eddy_rt_tensor_t *value,
                             const int64_t *low, const int64_t *high,
                             int32_t n, eddy_rt_tensor_t *out_t) {
  const char *op = "core.pad";
  *out_t = eddy_rt_tensor_empty();
  EDDY_RT_RETURN_IF_ERROR(rt_check_operand(x, op, 0));
  EDDY_RT_RETURN_IF_ERROR(rt_check_operand(value, op, 1));
  char sx[RT_SHAPE_BUF], sv[RT_SHAPE_BUF];
  if (value->rank != 0 || value->dtype != x->dtype)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "padding value is %s; expected a scalar of operand 0's dtype "
                  "%s",
                  rt_type_str(value, sv), eddy_rt_dtype_name(x->dtype));
  if (n != x->rank)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "low/high have %d entries; operand 0 of shape %s has rank %d",
                  (int)n, rt_shape_str(x, sx), (int)x->rank);
  int64_t dims[EDDY_RT_MAX_RANK];
  int64_t off = 0;
  for (int32_t i = 0; i < n; i++) {
    if (low[i] < 0 || high[i] < 0)
      return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                    "padding of dimension %d must be non-negative, got low %" PRId64
                    " and high %" PRId64,
                    (int)i, low[i], high[i]);
    if (low[i] > INT64_MAX - x->dims[i] ||
        high[i] > INT64_MAX - x->dims[i] - low[i])
      return rt_err(EDDY_RT_ERR_RESOURCE, op,
                    "padded dimension %d overflows int64", (int)i);
    dims[i] = x->dims[i] + low[i] + high[i];
  }
  EDDY_RT_RETURN_IF_ERROR(rt_alloc_tensor(ctx, op, x->dtype, n, dims, out_t));
  if (eddy_rt_tensor_numel(out_t) == 0)
    return NULL;
  rt_copy_into(ctx, out_t, value);
  for (int32_t i = 0; i < n; i++)
    off += low[i] * out_t->strides[i];
  eddy_rt_tensor_t dst =
      rt_view(x, n, x->dims, out_t->strides,
              (char *)out_t->data + off * (int64_t)eddy_rt_dtype_size(x->dtype));
  rt_copy_into(ctx, &dst, x);
  return NULL;
}

eddy_rt_status_t eddy_rt_shape(eddy_rt_ctx_t *ctx, const eddy_rt_tensor_t *x,
                               eddy_rt_tensor_t *out_t) {
  const char *op = "core.shape";
  *out_t = eddy_rt_tensor_empty();
  EDDY_RT_RETURN_IF_ERROR(rt_check_operand(x, op, 0));
  int64_t n = x->rank;
  EDDY_RT_RETURN_IF_ERROR(rt_alloc_tensor(ctx, op, EDDY_RT_I64, 1, &n, out_t));
  if (n > 0)
    memcpy(out_t->data, x->dims, (size_t)n * sizeof(int64_t));
  return NULL;
}

eddy_rt_status_t eddy_rt_dim(eddy_rt_ctx_t *ctx, const eddy_rt_tensor_t *x,
                             int64_t index, eddy_rt_tensor_t *out_t) {
  const char *op = "core.dim";
  *out_t = eddy_rt_tensor_empty();
  EDDY_RT_RETURN_IF_ERROR(rt_check_operand(x, op, 0));
  int32_t ax;
  EDDY_RT_RETURN_IF_ERROR(rt_norm_axis(op, "index", index, x->rank, &ax));
  EDDY_RT_RETURN_IF_ERROR(rt_alloc_tensor(ctx, op, EDDY_RT_I64, 0, NULL, out_t));
  memcpy(out_t->data, &x->dims[ax], sizeof(int64_t));
  return NULL;
}

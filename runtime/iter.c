/// The strided elementwise iteration engine: broadcasting, dim coalescing,
/// and splitting the work into fixed chunks for the thread pool.
#include "runtime/rt_internal.h"

#include <assert.h>

eddy_rt_status_t rt_broadcast_shapes(const char *op, int32_t n,
                                     const eddy_rt_tensor_t *const *ins,
                                     int32_t *out_rank, int64_t *out_dims) {
  int32_t rank = 0;
  for (int32_t k = 0; k < n; k++)
    rank = ins[k]->rank > rank ? ins[k]->rank : rank;
  for (int32_t d = 0; d < rank; d++) {
    int64_t dim = 1;
    bool bad = false;
    for (int32_t k = 0; k < n; k++) {
      int32_t di = d - (rank - ins[k]->rank);
      if (di < 0)
        continue;
      int64_t v = ins[k]->dims[di];
      if (v == 1)
        continue;
      if (dim == 1)
        dim = v;
      else if (dim != v)
        bad = true;
    }
    if (bad) {
      char msg[RT_SHAPE_BUF * 3 + 16] = "";
      size_t pos = 0;
      for (int32_t k = 0; k < n; k++) {
        char buf[RT_SHAPE_BUF];
        rt_shape_str(ins[k], buf);
        size_t len = strlen(buf);
        const char *sep = k == 0 ? "" : (k + 1 == n ? " and " : ", ");
        size_t slen = strlen(sep);
        if (pos + slen + len + 1 > sizeof(msg))
          break;
        memcpy(msg + pos, sep, slen);
        memcpy(msg + pos + slen, buf, len + 1);
        pos += slen + len;
      }
      return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                    "cannot broadcast shapes %s (dimension %d from the end "
                    "differs)",
                    msg, (int)(rank - d));
    }
    out_dims[d] = dim;
  }
  *out_rank = rank;
  return NULL;
}

void rt_ew_init(rt_ew_t *it, const eddy_rt_tensor_t *out, int32_t nin,
                const eddy_rt_tensor_t *const *ins) {
  assert(nin + 1 <= RT_EW_MAX_OPS);
  memset(it, 0, sizeof(*it));
  it->nops = nin + 1;
  int32_t rank = out->rank;
  int64_t dims[EDDY_RT_MAX_RANK];
  int64_t strides[RT_EW_MAX_OPS][EDDY_RT_MAX_RANK];
  for (int32_t k = 0; k < it->nops; k++) {
    const eddy_rt_tensor_t *t = k == 0 ? out : ins[k - 1];
    it->base[k] = t->data;
    it->esize[k] = (int64_t)eddy_rt_dtype_size(t->dtype);
    for (int32_t d = 0; d < rank; d++) {
      int32_t di = d - (rank - t->rank);
      strides[k][d] = (di < 0 || t->dims[di] == 1) ? 0 : t->strides[di];
    }
  }
  it->total = eddy_rt_tensor_numel(out);
  if (it->total == 0) { // nothing to visit; skip merging the (maybe huge) dims
    it->rank = 1;
    return;
  }
  for (int32_t d = 0; d < rank; d++)
    dims[d] = out->dims[d];
  // Drop size-1 dims, then merge a dim into the next one when every operand
  // steps through both as through one.
  int32_t r = 0;
  for (int32_t d = 0; d < rank; d++) {
    if (dims[d] == 1)
      continue;
    if (r > 0) {
      bool merge = true;
      for (int32_t k = 0; k < it->nops; k++) {
        if (it->strides[k][r - 1] != strides[k][d] * dims[d])
          merge = false;
      }
      if (merge) {
        it->dims[r - 1] *= dims[d];
        for (int32_t k = 0; k < it->nops; k++)
          it->strides[k][r - 1] = strides[k][d];
        continue;
      }
    }
    it->dims[r] = dims[d];
    for (int32_t k = 0; k < it->nops; k++)
      it->strides[k][r] = strides[k][d];
    r++;
  }
  if (r == 0) {
    it->dims[0] = 1;
    for (int32_t k = 0; k < it->nops; k++)
      it->strides[k][0] = 0;
    r = 1;
  }
  it->rank = r;
}

static void rt_ew_range(const rt_ew_t *it, int64_t b, int64_t e,
                        rt_ew_row_fn fn, void *arg) {
  int32_t r = it->rank;
  int64_t idx[EDDY_RT_MAX_RANK];
  int64_t rem = b;
  for (int32_t d = r - 1; d >= 0; d--) {
    idx[d] = rem % it->dims[d];
    rem /= it->dims[d];
  }
  int64_t inner[RT_EW_MAX_OPS];
  for (int32_t k = 0; k < it->nops; k++)
    inner[k] = it->strides[k][r - 1];
  char *ptrs[RT_EW_MAX_OPS];
  while (b < e) {
    for (int32_t k = 0; k < it->nops; k++) {
      int64_t off = 0;
      for (int32_t d = 0; d < r; d++)
        off += idx[d] * it->strides[k][d];
      ptrs[k] = it->base[k] + off * it->esize[k];
    }
    int64_t n = it->dims[r - 1] - idx[r - 1];
    if (n > e - b)
      n = e - b;
    fn(arg, ptrs, inner, n);
    b += n;
    idx[r - 1] += n;
    for (int32_t d = r - 1; d > 0 && idx[d] == it->dims[d]; d--) {
      idx[d] = 0;
      idx[d - 1]++;
    }
  }
}

typedef struct rt_ew_job {
  const rt_ew_t *it;
  rt_ew_row_fn fn;
  void *arg;
} rt_ew_job_t;

static void rt_ew_task(void *arg, int64_t task) {
  rt_ew_job_t *job = arg;
  int64_t b = task * RT_PAR_CHUNK;
  int64_t e = b + RT_PAR_CHUNK;
  if (e > job->it->total)
    e = job->it->total;
  rt_ew_range(job->it, b, e, job->fn, job->arg);
}

void rt_ew_run(eddy_rt_ctx_t *ctx, const rt_ew_t *it, rt_ew_row_fn fn,
               void *arg) {
  if (it->total == 0)
    return;
  eddy_rt_pool_t *pool = ctx ? eddy_rt_ctx_pool(ctx) : NULL;
  if (!pool || it->total < RT_PAR_MIN_ELEMS) {
    rt_ew_range(it, 0, it->total, fn, arg);
    return;
  }
  rt_ew_job_t job = {it, fn, arg};
  int64_t ntasks = (it->total + RT_PAR_CHUNK - 1) / RT_PAR_CHUNK;
  eddy_rt_pool_parallel_for(pool, ntasks, rt_ew_task, &job);
}

/// ---- Copies -------------------------------------------------------------------------

#define RT_COPY_ROW(NAME, T)                                                   \
  static void NAME(void *arg, char *const *ptrs, const int64_t *st,           \
                   int64_t n) {                                               \
    (void)arg;                                                                \
    T *o = (T *)(void *)ptrs[0];                                              \
    const T *a = (const T *)(const void *)ptrs[1];                            \
    int64_t so = st[0], sa = st[1];                                           \
    if (so == 1 && sa == 1) {                                                 \
      memcpy(o, a, (size_t)n * sizeof(T));                                    \
    } else if (so == 1 && sa == 0) {                                          \
      T v = a[0];                                                             \
      for (int64_t i = 0; i < n; i++)                                         \
        o[i] = v;                                                             \
    } else {                                                                  \
      for (int64_t i = 0; i < n; i++)                                         \
        o[i * so] = a[i * sa];                                                \
    }                                                                         \
  }
RT_COPY_ROW(rt_copy_row1, uint8_t)
RT_COPY_ROW(rt_copy_row2, uint16_t)
RT_COPY_ROW(rt_copy_row4, uint32_t)
RT_COPY_ROW(rt_copy_row8, uint64_t)

void rt_copy_into(eddy_rt_ctx_t *ctx, const eddy_rt_tensor_t *dst,
                  const eddy_rt_tensor_t *src) {
  rt_ew_t it;
  const eddy_rt_tensor_t *ins[1] = {src};
  rt_ew_init(&it, dst, 1, ins);
  rt_ew_row_fn fn;
  switch (eddy_rt_dtype_size(dst->dtype)) {
  case 1:
    fn = rt_copy_row1;
    break;
  case 2:
    fn = rt_copy_row2;
    break;
  case 4:
    fn = rt_copy_row4;
    break;
  default:
    fn = rt_copy_row8;
    break;
  }
  rt_ew_run(ctx, &it, fn, NULL);
}

eddy_rt_tensor_t rt_view(const eddy_rt_tensor_t *x, int32_t rank,
                         const int64_t *dims, const int64_t *strides,
                         void *data) {
  eddy_rt_tensor_t v = eddy_rt_tensor_empty();
  v.dtype = x->dtype;
  v.rank = rank;
  v.data = data;
  for (int32_t i = 0; i < rank; i++) {
    v.dims[i] = dims[i];
    v.strides[i] = strides[i];
  }
  return v;
}

eddy_rt_status_t rt_make_owned_contiguous(eddy_rt_ctx_t *ctx, const char *op,
                                          const eddy_rt_tensor_t *x,
                                          eddy_rt_tensor_t *out_t) {
  if (x->owner && eddy_rt_tensor_is_contiguous(x)) {
    eddy_rt_tensor_share(x, out_t);
    rt_set_contiguous_strides(out_t);
    return NULL;
  }
  EDDY_RT_RETURN_IF_ERROR(
      rt_alloc_tensor(ctx, op, x->dtype, x->rank, x->dims, out_t));
  rt_copy_into(ctx, out_t, x);
  return NULL;
}

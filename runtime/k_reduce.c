/// Reductions: sum, mean, max, min, prod over a set of axes.
///
/// Each output element reduces its K input elements sequentially, in
/// row-major order of the reduced axes, exactly as the constant folder does:
/// floats accumulate in f64 (starting from +0 for sums) and round once to
/// the dtype; integers accumulate in 64 bits, wrapping, and wrap to the
/// dtype at the end. Empty reductions give the identity (max: -inf or the
/// dtype's minimum; min: +inf or its maximum), as TensorFlow and the folder. Work is split over output elements only, so the
/// result does not depend on the thread count.
#include "runtime/rt_internal.h"

#include <inttypes.h>

typedef union rt_acc {
  double d;
  int64_t i;
} rt_acc_t;

typedef void (*rt_red_row_fn)(rt_acc_t *acc, const char *p, int64_t s,
                              int64_t n);

#define RT_RED_ROW(NAME, T, LOAD, AT, FIELD, STEP)                             \
  static void NAME(rt_acc_t *acc, const char *p_, int64_t s, int64_t n) {      \
    const T *p = (const T *)(const void *)p_;                                  \
    AT a = acc->FIELD;                                                         \
    for (int64_t i = 0; i < n; i++) {                                          \
      AT x = (AT)LOAD(p[i * s]);                                               \
      STEP;                                                                    \
    }                                                                          \
    acc->FIELD = a;                                                            \
  }

#define RT_LD(v) (v)
#define RT_STEP_SUM a += x
#define RT_STEP_PROD a *= x
// NaN is sticky and wins; +0 counts as above -0 (as core.maximum).
#define RT_STEP_FMAX                                                           \
  if (a == a && (x != x || x > a || (x == a && !signbit(x))))                  \
  a = x
#define RT_STEP_FMIN                                                           \
  if (a == a && (x != x || x < a || (x == a && signbit(x))))                   \
  a = x
#define RT_STEP_IMAX                                                           \
  if (x > a)                                                                   \
  a = x
#define RT_STEP_IMIN                                                           \
  if (x < a)                                                                   \
  a = x
#define RT_STEP_ISUM a = eddy_scalar_wrap_i64((uint64_t)a + (uint64_t)x)
#define RT_STEP_IPROD a = eddy_scalar_wrap_i64((uint64_t)a * (uint64_t)x)

#define RT_RED_FLOAT(SUF, T, LOAD)                                             \
  RT_RED_ROW(rt_red_sum_##SUF, T, LOAD, double, d, RT_STEP_SUM)                \
  RT_RED_ROW(rt_red_prod_##SUF, T, LOAD, double, d, RT_STEP_PROD)              \
  RT_RED_ROW(rt_red_max_##SUF, T, LOAD, double, d, RT_STEP_FMAX)               \
  RT_RED_ROW(rt_red_min_##SUF, T, LOAD, double, d, RT_STEP_FMIN)
#define RT_RED_INT(SUF, T)                                                     \
  RT_RED_ROW(rt_red_sum_##SUF, T, RT_LD, int64_t, i, RT_STEP_ISUM)             \
  RT_RED_ROW(rt_red_prod_##SUF, T, RT_LD, int64_t, i, RT_STEP_IPROD)           \
  RT_RED_ROW(rt_red_max_##SUF, T, RT_LD, int64_t, i, RT_STEP_IMAX)             \
  RT_RED_ROW(rt_red_min_##SUF, T, RT_LD, int64_t, i, RT_STEP_IMIN)

RT_RED_FLOAT(f16, uint16_t, eddy_scalar_f16_to_f32)
RT_RED_FLOAT(bf16, uint16_t, eddy_scalar_bf16_to_f32)
RT_RED_FLOAT(f32, float, RT_LD)
RT_RED_FLOAT(f64, double, RT_LD)
RT_RED_INT(i8, int8_t)
RT_RED_INT(i32, int32_t)
RT_RED_INT(i64, int64_t)

#define RT_RED_FNS(OP)                                                         \
  {[EDDY_RT_F16] = rt_red_##OP##_f16, [EDDY_RT_BF16] = rt_red_##OP##_bf16,     \
   [EDDY_RT_F32] = rt_red_##OP##_f32, [EDDY_RT_F64] = rt_red_##OP##_f64,       \
   [EDDY_RT_I8] = rt_red_##OP##_i8,   [EDDY_RT_I32] = rt_red_##OP##_i32,       \
   [EDDY_RT_I64] = rt_red_##OP##_i64}
static const rt_red_row_fn
    rt_red_table[EDDY_RT_REDUCE_COUNT_][EDDY_RT_DTYPE_COUNT_] = {
        [EDDY_RT_REDUCE_SUM] = RT_RED_FNS(sum),
        [EDDY_RT_REDUCE_MEAN] = RT_RED_FNS(sum),
        [EDDY_RT_REDUCE_MAX] = RT_RED_FNS(max),
        [EDDY_RT_REDUCE_MIN] = RT_RED_FNS(min),
        [EDDY_RT_REDUCE_PROD] = RT_RED_FNS(prod),
};

static const char *const rt_red_names[EDDY_RT_REDUCE_COUNT_] = {
    "core.reduce_sum", "core.reduce_mean", "core.reduce_max",
    "core.reduce_min", "core.reduce_prod"};

const char *eddy_rt_reduce_op_name(eddy_rt_reduce_op_t op) {
  return ((int)op >= 0 && op < EDDY_RT_REDUCE_COUNT_) ? rt_red_names[op] : "?";
}

bool eddy_rt_reduce_op_lookup(const char *name, eddy_rt_reduce_op_t *out_op) {
  for (int i = 0; i < EDDY_RT_REDUCE_COUNT_; i++) {
    if (strcmp(name, rt_red_names[i]) == 0) {
      if (out_op)
        *out_op = (eddy_rt_reduce_op_t)i;
      return true;
    }
  }
  return false;
}

static int64_t rt_int_min(int32_t dt) {
  return dt == EDDY_RT_I8 ? INT8_MIN : dt == EDDY_RT_I32 ? INT32_MIN : INT64_MIN;
}

static int64_t rt_int_max(int32_t dt) {
  return dt == EDDY_RT_I8 ? INT8_MAX : dt == EDDY_RT_I32 ? INT32_MAX : INT64_MAX;
}

static int64_t rt_wrap_to(int32_t dt, int64_t v) {
  switch (dt) {
  case EDDY_RT_I8:
    return eddy_scalar_wrap_i8((uint64_t)v);
  case EDDY_RT_I32:
    return eddy_scalar_wrap_i32((uint64_t)v);
  default:
    return v;
  }
}

/// ---- The reduction plan ------------------------------------------------------------

typedef struct rt_red {
  eddy_rt_reduce_op_t op;
  bool is_float;
  rt_red_row_fn fn;
  int32_t dtype;
  int64_t es;
  const char *base;
  int32_t krank; // kept dims (the output, row-major)
  int64_t kdims[EDDY_RT_MAX_RANK];
  int64_t kstrides[EDDY_RT_MAX_RANK];
  int32_t rrank; // reduced dims, coalesced, >= 1
  int64_t rdims[EDDY_RT_MAX_RANK];
  int64_t rstrides[EDDY_RT_MAX_RANK];
  int64_t M, K;
  char *out;
  int64_t out_per_task;
} rt_red_t;

static rt_acc_t rt_red_identity(const rt_red_t *r) {
  rt_acc_t a;
  switch (r->op) {
  case EDDY_RT_REDUCE_PROD:
    if (r->is_float)
      a.d = 1.0;
    else
      a.i = 1;
    break;
  case EDDY_RT_REDUCE_MAX:
    if (r->is_float)
      a.d = -INFINITY;
    else
      a.i = rt_int_min(r->dtype);
    break;
  case EDDY_RT_REDUCE_MIN:
    if (r->is_float)
      a.d = INFINITY;
    else
      a.i = rt_int_max(r->dtype);
    break;
  default:
    if (r->is_float)
      a.d = 0.0;
    else
      a.i = 0;
    break;
  }
  return a;
}

// Reduces output element j: its reduced elements row by row.
static void rt_red_one(const rt_red_t *r, int64_t j) {
  int64_t off = 0, rem = j;
  for (int32_t d = r->krank - 1; d >= 0; d--) {
    off += (rem % r->kdims[d]) * r->kstrides[d];
    rem /= r->kdims[d];
  }
  const char *base = r->base + off * r->es;
  rt_acc_t a = rt_red_identity(r);
  int32_t rr = r->rrank;
  int64_t idx[EDDY_RT_MAX_RANK] = {0};
  int64_t rows = r->K ? r->K / r->rdims[rr - 1] : 0;
  for (int64_t row = 0; row < rows; row++) {
    int64_t roff = 0;
    for (int32_t d = 0; d < rr - 1; d++)
      roff += idx[d] * r->rstrides[d];
    r->fn(&a, base + roff * r->es, r->rstrides[rr - 1], r->rdims[rr - 1]);
    for (int32_t d = rr - 2; d >= 0; d--) {
      if (++idx[d] < r->rdims[d])
        break;
      idx[d] = 0;
    }
  }
  char *p = r->out + j * r->es;
  if (r->is_float) {
    if (r->op == EDDY_RT_REDUCE_MEAN)
      a.d /= (double)r->K; // 0 / 0 is NaN for an empty mean
    rt_store_f64(r->dtype, p, a.d);
    return;
  }
  int64_t v = rt_wrap_to(r->dtype, a.i);
  if (r->op == EDDY_RT_REDUCE_MEAN) // truncating, as TensorFlow's Mean; 0 if empty
    v = r->K ? v / r->K : 0;
  rt_store_i64(r->dtype, p, v);
}

static void rt_red_task(void *arg, int64_t task) {
  const rt_red_t *r = arg;
  int64_t jb = task * r->out_per_task;
  int64_t je = jb + r->out_per_task < r->M ? jb + r->out_per_task : r->M;
  for (int64_t j = jb; j < je; j++)
    rt_red_one(r, j);
}

eddy_rt_status_t eddy_rt_reduce(eddy_rt_ctx_t *ctx, eddy_rt_reduce_op_t op,
                                const eddy_rt_tensor_t *x, const int64_t *axes,
                                int32_t naxes, bool keepdims,
                                eddy_rt_tensor_t *out_t) {
  *out_t = eddy_rt_tensor_empty();
  if ((int)op < 0 || op >= EDDY_RT_REDUCE_COUNT_)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, "eddy_rt_reduce",
                  "unknown reduction %d", (int)op);
  const char *name = rt_red_names[op];
  EDDY_RT_RETURN_IF_ERROR(rt_check_operand(x, name, 0));
  rt_red_row_fn fn = rt_red_table[op][x->dtype];
  if (!fn)
    return rt_err_dtype(name, "operand 0", x->dtype,
                        "f16, bf16, f32, f64, i8, i32 or i64");
  bool reduced[EDDY_RT_MAX_RANK] = {false};
  if (!axes) {
    for (int32_t d = 0; d < x->rank; d++)
      reduced[d] = true;
  } else {
    if (naxes < 0)
      return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, name,
                    "axis count is %d, expected >= 0", (int)naxes);
    for (int32_t i = 0; i < naxes; i++) {
      int32_t a;
      EDDY_RT_RETURN_IF_ERROR(rt_norm_axis(name, "axis", axes[i], x->rank, &a));
      if (reduced[a])
        return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, name,
                      "axes name dimension %d more than once (axis %" PRId64
                      ")",
                      (int)a, axes[i]);
      reduced[a] = true;
    }
  }
  rt_red_t r;
  memset(&r, 0, sizeof(r));
  r.op = op;
  r.is_float = eddy_rt_dtype_is_float(x->dtype);
  r.fn = fn;
  r.dtype = x->dtype;
  r.es = (int64_t)eddy_rt_dtype_size(x->dtype);
  r.base = x->data;
  r.M = r.K = 1;
  int32_t orank = 0;
  int64_t odims[EDDY_RT_MAX_RANK];
  bool empty = eddy_rt_tensor_numel(x) == 0;
  for (int32_t d = 0; d < x->rank; d++) {
    if (!reduced[d]) {
      odims[orank++] = x->dims[d];
      r.kdims[r.krank] = x->dims[d];
      r.kstrides[r.krank++] = x->strides[d];
      r.M = rt_mul_sat(r.M, x->dims[d]);
      continue;
    }
    if (keepdims)
      odims[orank++] = 1;
    r.K = rt_mul_sat(r.K, x->dims[d]);
    if (x->dims[d] == 1)
      continue;
    // Merge with the previous reduced dim when they step as one: the
    // visiting order stays row-major over the reduced axes. (An empty x is
    // never iterated; its dims may be huge, so it is not merged.)
    if (r.rrank > 0 && !empty &&
        r.rstrides[r.rrank - 1] == x->strides[d] * x->dims[d]) {
      r.rdims[r.rrank - 1] *= x->dims[d];
      r.rstrides[r.rrank - 1] = x->strides[d];
    } else {
      r.rdims[r.rrank] = x->dims[d];
      r.rstrides[r.rrank++] = x->strides[d];
    }
  }
  if (r.rrank == 0) {
    r.rdims[0] = 1;
    r.rstrides[0] = 0;
    r.rrank = 1;
  }
  EDDY_RT_RETURN_IF_ERROR(
      rt_alloc_tensor(ctx, name, x->dtype, orank, odims, out_t));
  r.out = out_t->data;
  if (r.M == 0)
    return NULL;
  eddy_rt_pool_t *pool = eddy_rt_ctx_pool(ctx);
  int64_t per = RT_PAR_CHUNK / (r.K ? r.K : 1);
  r.out_per_task = per < 1 ? 1 : per;
  if (pool && r.M > 1 && r.M * (r.K ? r.K : 1) >= RT_PAR_MIN_ELEMS) {
    int64_t ntasks = (r.M + r.out_per_task - 1) / r.out_per_task;
    eddy_rt_pool_parallel_for(pool, ntasks, rt_red_task, &r);
  } else {
    r.out_per_task = r.M;
    rt_red_task(&r, 0);
  }
  return NULL;
}

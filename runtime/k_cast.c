/// core.cast, core.iota and copies (core.constant materialization).
#include "runtime/rt_internal.h"

#include <inttypes.h>
#include <math.h>

/// Loads give each source dtype its natural C type; the RT_TO_* macros
/// convert from any natural type with the cast rules of rt_internal.h.
#define RT_LD_F16(v) eddy_scalar_f16_to_f32(v)
#define RT_LD_BF16(v) eddy_scalar_bf16_to_f32(v)
#define RT_LD_ID(v) (v)
#define RT_LD_I1(v) ((uint8_t)((v) != 0))

#define RT_TO_F16(v) eddy_scalar_f32_to_f16((float)(v))
#define RT_TO_BF16(v) eddy_scalar_f32_to_bf16((float)(v))
#define RT_TO_F32(v) ((float)(v))
#define RT_TO_F64(v) ((double)(v))
#define RT_TO_I1(v) ((uint8_t)((v) != 0))
#define RT_TO_INT(v, SAT, WRAP)                                                \
  _Generic((v), float: SAT((double)(v)), double: SAT((double)(v)),             \
           default: WRAP((uint64_t)(int64_t)(v)))
#define RT_TO_I8(v) RT_TO_INT(v, eddy_scalar_sat_i8, eddy_scalar_wrap_i8)
#define RT_TO_I32(v) RT_TO_INT(v, eddy_scalar_sat_i32, eddy_scalar_wrap_i32)
#define RT_TO_I64(v) RT_TO_INT(v, eddy_scalar_sat_i64, eddy_scalar_wrap_i64)

#define RT_CAST_DEF(NAME, ST, LOAD, DT, TO)                                    \
  static void NAME(char *o_, const char *a_, int64_t sa, int64_t n) {          \
    DT *restrict o = (DT *)(void *)o_;                                         \
    const ST *a = (const ST *)(const void *)a_;                                \
    for (int64_t i = 0; i < n; i++)                                            \
      o[i] = TO(LOAD(a[i * sa]));                                              \
  }

/// One source dtype to every destination dtype.
#define RT_CAST_FROM(SN, ST, LOAD)                                             \
  RT_CAST_DEF(rt_cast_##SN##_f16, ST, LOAD, uint16_t, RT_TO_F16)               \
  RT_CAST_DEF(rt_cast_##SN##_bf16, ST, LOAD, uint16_t, RT_TO_BF16)             \
  RT_CAST_DEF(rt_cast_##SN##_f32, ST, LOAD, float, RT_TO_F32)                  \
  RT_CAST_DEF(rt_cast_##SN##_f64, ST, LOAD, double, RT_TO_F64)                 \
  RT_CAST_DEF(rt_cast_##SN##_i1, ST, LOAD, uint8_t, RT_TO_I1)                  \
  RT_CAST_DEF(rt_cast_##SN##_i8, ST, LOAD, int8_t, RT_TO_I8)                   \
  RT_CAST_DEF(rt_cast_##SN##_i32, ST, LOAD, int32_t, RT_TO_I32)                \
  RT_CAST_DEF(rt_cast_##SN##_i64, ST, LOAD, int64_t, RT_TO_I64)
RT_CAST_FROM(f16, uint16_t, RT_LD_F16)
RT_CAST_FROM(bf16, uint16_t, RT_LD_BF16)
RT_CAST_FROM(f32, float, RT_LD_ID)
RT_CAST_FROM(f64, double, RT_LD_ID)
RT_CAST_FROM(i1, uint8_t, RT_LD_I1)
RT_CAST_FROM(i8, int8_t, RT_LD_ID)
RT_CAST_FROM(i32, int32_t, RT_LD_ID)
RT_CAST_FROM(i64, int64_t, RT_LD_ID)

#define RT_CAST_ROW(SN)                                                        \
  {rt_cast_##SN##_f16, rt_cast_##SN##_bf16, rt_cast_##SN##_f32,                \
   rt_cast_##SN##_f64, rt_cast_##SN##_i1,   rt_cast_##SN##_i8,                 \
   rt_cast_##SN##_i32, rt_cast_##SN##_i64}
static const rt_un_fn rt_cast_table[EDDY_RT_DTYPE_COUNT_][EDDY_RT_DTYPE_COUNT_] =
    {RT_CAST_ROW(f16), RT_CAST_ROW(bf16), RT_CAST_ROW(f32), RT_CAST_ROW(f64),
     RT_CAST_ROW(i1),  RT_CAST_ROW(i8),   RT_CAST_ROW(i32), RT_CAST_ROW(i64)};

eddy_rt_status_t eddy_rt_cast(eddy_rt_ctx_t *ctx, const eddy_rt_tensor_t *x,
                              int32_t dtype, eddy_rt_tensor_t *out_t) {
  const char *op = "core.cast";
  *out_t = eddy_rt_tensor_empty();
  EDDY_RT_RETURN_IF_ERROR(rt_check_operand(x, op, 0));
  if (dtype < 0 || dtype >= EDDY_RT_DTYPE_COUNT_)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "target dtype %d is not a dtype", (int)dtype);
  if (dtype == x->dtype && x->dtype != EDDY_RT_I1)
    return eddy_rt_copy(ctx, x, out_t);
  return rt_ew_unary(ctx, op, rt_cast_table[x->dtype][dtype], dtype, x, out_t);
}

eddy_rt_status_t eddy_rt_copy(eddy_rt_ctx_t *ctx, const eddy_rt_tensor_t *x,
                              eddy_rt_tensor_t *out_t) {
  const char *op = "core.constant";
  *out_t = eddy_rt_tensor_empty();
  EDDY_RT_RETURN_IF_ERROR(rt_check_operand(x, op, 0));
  EDDY_RT_RETURN_IF_ERROR(
      rt_alloc_tensor(ctx, op, x->dtype, x->rank, x->dims, out_t));
  rt_copy_into(ctx, out_t, x);
  return NULL;
}

eddy_rt_status_t eddy_rt_iota(eddy_rt_ctx_t *ctx, int32_t dtype, int32_t rank,
                              const int64_t *dims, int64_t dimension,
                              eddy_rt_tensor_t *out_t) {
  const char *op = "core.iota";
  *out_t = eddy_rt_tensor_empty();
  if (rank < 1)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "result rank is %d, expected >= 1", (int)rank);
  int32_t dim = 0;
  if (rank <= EDDY_RT_MAX_RANK)
    EDDY_RT_RETURN_IF_ERROR(rt_norm_axis(op, "dimension", dimension, rank, &dim));
  EDDY_RT_RETURN_IF_ERROR(rt_alloc_tensor(ctx, op, dtype, rank, dims, out_t));
  int64_t n = eddy_rt_tensor_numel(out_t);
  if (n == 0)
    return NULL;
  int64_t inner = 1;
  for (int32_t d = dim + 1; d < rank; d++)
    inner *= dims[d];
  size_t es = eddy_rt_dtype_size(dtype);
  char *p = out_t->data;
  for (int64_t i = 0; i < n; i++)
    rt_store_i64(dtype, p + (size_t)i * es, (i / inner) % dims[dim]);
  return NULL;
}

eddy_rt_status_t eddy_rt_range(eddy_rt_ctx_t *ctx,
                               const eddy_rt_tensor_t *start,
                               const eddy_rt_tensor_t *limit,
                               const eddy_rt_tensor_t *delta,
                               eddy_rt_tensor_t *out_t) {
  const char *op = "core.range";
  *out_t = eddy_rt_tensor_empty();
  const eddy_rt_tensor_t *in[3] = {start, limit, delta};
  static const char *const names[3] = {"start", "limit", "delta"};
  for (int i = 0; i < 3; i++) {
    EDDY_RT_RETURN_IF_ERROR(rt_check_operand(in[i], op, i));
    if (in[i]->rank != 0)
      return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                    "%s must be a scalar, got rank %d", names[i],
                    (int)in[i]->rank);
    if (in[i]->dtype != start->dtype)
      return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                    "%s has dtype %s, start %s", names[i],
                    eddy_rt_dtype_name(in[i]->dtype),
                    eddy_rt_dtype_name(start->dtype));
  }
  int32_t dt = start->dtype;
  bool fl = eddy_rt_dtype_is_float(dt);
  int64_t n = 0;
  if (fl) {
    double s = rt_load_f64(dt, start->data), l = rt_load_f64(dt, limit->data);
    double d = rt_load_f64(dt, delta->data);
    if (d == 0 || (d > 0 && s > l) || (d < 0 && s < l) || isnan(s) ||
        isnan(l) || isnan(d))
      return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                    "start %g, limit %g and delta %g give no range (delta "
                    "must be nonzero and point from start towards limit)",
                    s, l, d);
    double c = ceil(fabs((l - s) / d));
    if (!(c < 9.0e18))
      return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                    "the range from %g to %g by %g is too long", s, l, d);
    n = (int64_t)c;
  } else {
    int64_t s = rt_load_i64(dt, start->data), l = rt_load_i64(dt, limit->data);
    int64_t d = rt_load_i64(dt, delta->data);
    if (d == 0 || (d > 0 && s > l) || (d < 0 && s < l))
      return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                    "start %" PRId64 ", limit %" PRId64 " and delta %" PRId64
                    " give no range (delta must be nonzero and point from "
                    "start towards limit)",
                    s, l, d);
    uint64_t span = d > 0 ? (uint64_t)l - (uint64_t)s : (uint64_t)s - (uint64_t)l;
    uint64_t step = d > 0 ? (uint64_t)d : 0 - (uint64_t)d;
    n = (int64_t)(span / step + (span % step != 0));
  }
  EDDY_RT_RETURN_IF_ERROR(rt_alloc_tensor(ctx, op, dt, 1, &n, out_t));
  size_t es = eddy_rt_dtype_size(dt);
  char *p = out_t->data;
  if (fl) {
    double s = rt_load_f64(dt, start->data), d = rt_load_f64(dt, delta->data);
    for (int64_t i = 0; i < n; i++)
      rt_store_f64(dt, p + (size_t)i * es, s + (double)i * d);
  } else {
    int64_t s = rt_load_i64(dt, start->data), d = rt_load_i64(dt, delta->data);
    for (int64_t i = 0; i < n; i++)
      rt_store_i64(dt, p + (size_t)i * es,
                   (int64_t)((uint64_t)s + (uint64_t)i * (uint64_t)d));
  }
  return NULL;
}

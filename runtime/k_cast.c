/// core.cast, core.iota and copies (core.constant materialization).
#include "runtime/rt_internal.h"

#include <inttypes.h>

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

/// core.matmul: batched, with transpose flags and broadcast batch dims.
///
/// Blocked for cache: per task (one batch, up to RT_MM_MC rows) the
/// operands are packed block by block into contiguous compute-type scratch
/// (which also absorbs transposes and strides), and the innermost loop is a
/// unit-stride axpy over a row of the packed B, which compilers vectorize.
/// Every output element sums its K products in order k = 0, 1, ..., so the
/// result does not depend on the blocking or the thread count. Floats
/// accumulate in f64 and round once (the constant folder's arithmetic, bit
/// for bit); integers in 64 bits, wrapping (which equals wrapping in the
/// narrow type).
#include "runtime/rt_internal.h"

#include <inttypes.h>
#include <stdatomic.h>

#define RT_MM_MC ((int64_t)64)
#define RT_MM_KC ((int64_t)256)
#define RT_MM_NC ((int64_t)256)

typedef struct rt_mm {
  eddy_rt_ctx_t *ctx;
  int32_t dtype;
  int64_t es, cs; // element size of the dtype / of the compute type (8)
  int64_t M, N, K;
  int32_t brank;
  int64_t bdims[EDDY_RT_MAX_RANK];
  int64_t a_bstr[EDDY_RT_MAX_RANK], b_bstr[EDDY_RT_MAX_RANK];
  const char *a, *b;
  int64_t a_rs, a_cs; // A(i, k) at a + (i * a_rs + k * a_cs) * es
  int64_t b_rs, b_cs; // B(k, j) at b + (k * b_rs + j * b_cs) * es
  char *out;
  int64_t nmb; // row blocks per batch
  _Atomic int failed;
  eddy_rt_status_t status; // the first failure (scratch allocation)
} rt_mm_t;

typedef void (*rt_mm_block_fn)(const rt_mm_t *r, const char *a, const char *b,
                               char *o, int64_t i0, int64_t mc, void *ap,
                               void *bp, void *cc);

#define RT_MM_LD_INT(v) ((uint64_t)(int64_t)(v))
#define RT_MM_ID(v) (v)

#define RT_MM_DEF(SUF, ST, CT, LOAD, STORE)                                    \
  static void rt_mm_block_##SUF(const rt_mm_t *r, const char *a_,              \
                                const char *b_, char *o_, int64_t i0,          \
                                int64_t mc, void *ap_, void *bp_, void *cc_) { \
    const ST *a = (const ST *)(const void *)a_;                                \
    const ST *b = (const ST *)(const void *)b_;                                \
    ST *o = (ST *)(void *)o_;                                                  \
    CT *restrict ap = ap_, *restrict bp = bp_, *restrict cc = cc_;             \
    int64_t N = r->N, K = r->K;                                                \
    for (int64_t nb = 0; nb < N; nb += RT_MM_NC) {                             \
      int64_t nc = N - nb < RT_MM_NC ? N - nb : RT_MM_NC;                      \
      for (int64_t x = 0; x < mc * nc; x++)                                    \
        cc[x] = 0;                                                             \
      for (int64_t kb = 0; kb < K; kb += RT_MM_KC) {                           \
        int64_t kc = K - kb < RT_MM_KC ? K - kb : RT_MM_KC;                    \
        for (int64_t i = 0; i < mc; i++)                                       \
          for (int64_t k = 0; k < kc; k++)                                     \
            ap[i * kc + k] =                                                   \
                (CT)LOAD(a[(i0 + i) * r->a_rs + (kb + k) * r->a_cs]);          \
        for (int64_t k = 0; k < kc; k++)                                       \
          for (int64_t j = 0; j < nc; j++)                                     \
            bp[k * nc + j] =                                                   \
                (CT)LOAD(b[(kb + k) * r->b_rs + (nb + j) * r->b_cs]);          \
        for (int64_t i = 0; i < mc; i++) {                                     \
          CT *restrict crow = cc + i * nc;                                     \
          for (int64_t k = 0; k < kc; k++) {                                   \
            CT av = ap[i * kc + k];                                            \
            const CT *restrict brow = bp + k * nc;                             \
            for (int64_t j = 0; j < nc; j++)                                   \
              crow[j] += av * brow[j];                                         \
          }                                                                    \
        }                                                                      \
      }                                                                        \
      for (int64_t i = 0; i < mc; i++)                                         \
        for (int64_t j = 0; j < nc; j++)                                       \
          o[(i0 + i) * N + nb + j] = STORE(cc[i * nc + j]);                    \
    }                                                                          \
  }

#define RT_MM_TO_F16(d) eddy_scalar_f32_to_f16((float)(d))
#define RT_MM_TO_BF16(d) eddy_scalar_f32_to_bf16((float)(d))
#define RT_MM_TO_F32(d) ((float)(d))
RT_MM_DEF(f16, uint16_t, double, eddy_scalar_f16_to_f32, RT_MM_TO_F16)
RT_MM_DEF(bf16, uint16_t, double, eddy_scalar_bf16_to_f32, RT_MM_TO_BF16)
RT_MM_DEF(f32, float, double, RT_MM_ID, RT_MM_TO_F32)
RT_MM_DEF(f64, double, double, RT_MM_ID, RT_MM_ID)
RT_MM_DEF(i8, int8_t, uint64_t, RT_MM_LD_INT, eddy_scalar_wrap_i8)
RT_MM_DEF(i32, int32_t, uint64_t, RT_MM_LD_INT, eddy_scalar_wrap_i32)
RT_MM_DEF(i64, int64_t, uint64_t, RT_MM_LD_INT, eddy_scalar_wrap_i64)

static const rt_mm_block_fn rt_mm_table[EDDY_RT_DTYPE_COUNT_] = {
    [EDDY_RT_F16] = rt_mm_block_f16, [EDDY_RT_BF16] = rt_mm_block_bf16,
    [EDDY_RT_F32] = rt_mm_block_f32, [EDDY_RT_F64] = rt_mm_block_f64,
    [EDDY_RT_I8] = rt_mm_block_i8,   [EDDY_RT_I32] = rt_mm_block_i32,
    [EDDY_RT_I64] = rt_mm_block_i64};

static void rt_mm_task(void *arg, int64_t task) {
  rt_mm_t *r = arg;
  if (atomic_load(&r->failed))
    return;
  int64_t batch = task / r->nmb, mb = task % r->nmb;
  int64_t aoff = 0, boff = 0, rem = batch;
  for (int32_t d = r->brank - 1; d >= 0; d--) {
    int64_t i = rem % r->bdims[d];
    rem /= r->bdims[d];
    aoff += i * r->a_bstr[d];
    boff += i * r->b_bstr[d];
  }
  int64_t i0 = mb * RT_MM_MC;
  int64_t mc = r->M - i0 < RT_MM_MC ? r->M - i0 : RT_MM_MC;
  int64_t kc = r->K < RT_MM_KC ? r->K : RT_MM_KC;
  int64_t nc = r->N < RT_MM_NC ? r->N : RT_MM_NC;
  int64_t bytes = (mc * kc + kc * nc + mc * nc) * r->cs;
  void *scratch;
  eddy_rt_status_t st = eddy_rt_alloc(r->ctx, bytes, "core.matmul", &scratch);
  if (st) {
    int expected = 0;
    if (atomic_compare_exchange_strong(&r->failed, &expected, 1))
      r->status = st;
    else
      eddy_rt_status_destroy(st);
    return;
  }
  char *ap = scratch, *bp = ap + mc * kc * r->cs, *cc = bp + kc * nc * r->cs;
  rt_mm_table[r->dtype](r, r->a + aoff * r->es, r->b + boff * r->es,
                        r->out + batch * r->M * r->N * r->es, i0, mc, ap, bp,
                        cc);
  eddy_rt_free(r->ctx, scratch, bytes);
}

eddy_rt_status_t eddy_rt_matmul(eddy_rt_ctx_t *ctx, const eddy_rt_tensor_t *a,
                                const eddy_rt_tensor_t *b, bool transpose_a,
                                bool transpose_b, eddy_rt_tensor_t *out_t) {
  const char *op = "core.matmul";
  *out_t = eddy_rt_tensor_empty();
  EDDY_RT_RETURN_IF_ERROR(rt_check_operand(a, op, 0));
  EDDY_RT_RETURN_IF_ERROR(rt_check_operand(b, op, 1));
  if (a->dtype != b->dtype)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "operands have dtypes %s and %s; expected one dtype",
                  eddy_rt_dtype_name(a->dtype), eddy_rt_dtype_name(b->dtype));
  if (!rt_mm_table[a->dtype])
    return rt_err_dtype(op, "operand 0", a->dtype,
                        "f16, bf16, f32, f64, i8, i32 or i64");
  char sa[RT_SHAPE_BUF], sb[RT_SHAPE_BUF];
  if (a->rank < 2 || b->rank < 2)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "operands have shapes %s and %s; expected rank >= 2 for both",
                  rt_shape_str(a, sa), rt_shape_str(b, sb));
  int32_t ra = a->rank, rb = b->rank;
  rt_mm_t r;
  memset(&r, 0, sizeof(r));
  r.ctx = ctx;
  r.dtype = a->dtype;
  r.es = (int64_t)eddy_rt_dtype_size(a->dtype);
  r.cs = 8; // f64 or uint64 accumulators
  r.M = transpose_a ? a->dims[ra - 1] : a->dims[ra - 2];
  int64_t ka = transpose_a ? a->dims[ra - 2] : a->dims[ra - 1];
  int64_t kb = transpose_b ? b->dims[rb - 1] : b->dims[rb - 2];
  r.N = transpose_b ? b->dims[rb - 2] : b->dims[rb - 1];
  if (ka != kb)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "contraction sizes differ: operand 0 of shape %s gives %" PRId64
                  " (transpose_a = %s), operand 1 of shape %s gives %" PRId64
                  " (transpose_b = %s)",
                  rt_shape_str(a, sa), ka, transpose_a ? "true" : "false",
                  rt_shape_str(b, sb), kb, transpose_b ? "true" : "false");
  r.K = ka;
  r.a_rs = transpose_a ? a->strides[ra - 1] : a->strides[ra - 2];
  r.a_cs = transpose_a ? a->strides[ra - 2] : a->strides[ra - 1];
  r.b_rs = transpose_b ? b->strides[rb - 1] : b->strides[rb - 2];
  r.b_cs = transpose_b ? b->strides[rb - 2] : b->strides[rb - 1];
  // Batch dims broadcast like elementwise operands.
  r.brank = (ra > rb ? ra : rb) - 2;
  int64_t odims[EDDY_RT_MAX_RANK];
  int64_t batches = 1;
  for (int32_t d = 0; d < r.brank; d++) {
    int32_t da = d - (r.brank - (ra - 2)), db = d - (r.brank - (rb - 2));
    int64_t xa = da >= 0 ? a->dims[da] : 1, xb = db >= 0 ? b->dims[db] : 1;
    if (xa != xb && xa != 1 && xb != 1)
      return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                    "batch dims of shapes %s and %s do not broadcast "
                    "(dimension %d: %" PRId64 " vs %" PRId64 ")",
                    rt_shape_str(a, sa), rt_shape_str(b, sb), (int)d, xa, xb);
    r.bdims[d] = xa == 1 ? xb : xa;
    r.a_bstr[d] = (da >= 0 && xa != 1) ? a->strides[da] : 0;
    r.b_bstr[d] = (db >= 0 && xb != 1) ? b->strides[db] : 0;
    odims[d] = r.bdims[d];
    batches = rt_mul_sat(batches, r.bdims[d]);
  }
  odims[r.brank] = r.M;
  odims[r.brank + 1] = r.N;
  EDDY_RT_RETURN_IF_ERROR(
      rt_alloc_tensor(ctx, op, a->dtype, r.brank + 2, odims, out_t));
  if (eddy_rt_tensor_numel(out_t) == 0)
    return NULL;
  r.a = a->data;
  r.b = b->data;
  r.out = out_t->data;
  r.nmb = (r.M + RT_MM_MC - 1) / RT_MM_MC;
  atomic_init(&r.failed, 0);
  int64_t ntasks = batches * r.nmb;
  // Work estimate without overflow: M * N * K could exceed int64 only for
  // absurd sizes, and then it is certainly big.
  double work = (double)batches * (double)r.M * (double)r.N * (double)r.K;
  eddy_rt_pool_t *pool = eddy_rt_ctx_pool(ctx);
  if (pool && work >= (double)RT_PAR_MIN_ELEMS * 8) {
    eddy_rt_pool_parallel_for(pool, ntasks, rt_mm_task, &r);
  } else {
    for (int64_t t = 0; t < ntasks && !atomic_load(&r.failed); t++)
      rt_mm_task(&r, t);
  }
  if (atomic_load(&r.failed)) {
    eddy_rt_tensor_release(out_t);
    return r.status;
  }
  return NULL;
}

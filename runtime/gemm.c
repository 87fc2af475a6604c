/// f32 matrix multiplication for compiled code (core.matmul above the size
/// that backend-cpu emits inline): a CBLAS (OpenBLAS) when libeddyrt is
/// built with one (EDDY_RT_HAVE_CBLAS), else, and on request, a tiled kernel
/// of our own.
///
/// The tiled kernel is the usual three-level blocking: C is computed in
/// panels of NC columns; for each block of KC of the inner dimension, B's
/// KC x NC block is packed into strips of NR columns and, for each block of
/// MC rows, A's MC x KC block into strips of MR rows; a micro-kernel then
/// computes each MR x NR tile of C with its accumulators in registers, from
/// the two packed strips read contiguously. The micro-kernel is written with
/// GCC vector types and compiled for AVX-512 (NR = 32), AVX2+FMA (NR = 16)
/// and baseline x86-64, picked at run time from the CPU's features. Packing
/// buffers come from the runtime context's allocator; when that fails the
/// product is computed by a plain loop that needs no memory.
///
/// Accumulation is in f32 and its order is unspecified, as the numeric
/// contract of compiled f32 matmul allows (docs/dialects/core.md).
#include "runtime/eddyrt.h"

#include <limits.h>
#include <string.h>

#if defined(EDDY_RT_HAVE_CBLAS)
#include <cblas.h>
#endif

enum { MR = 6, MC = 96, KC = 256, NC = 4096, NR_MAX = 32 };

/// The element (i, p) of op(A) and (p, j) of op(B).
static inline float at_a(const float *a, int64_t lda, bool ta, int64_t i,
                         int64_t p) {
  return ta ? a[p * lda + i] : a[i * lda + p];
}
static inline float at_b(const float *b, int64_t ldb, bool tb, int64_t p,
                         int64_t j) {
  return tb ? b[j * ldb + p] : b[p * ldb + j];
}

/// C = op(A) op(B) by a plain loop (no memory needed).
static void gemm_plain(bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                       const float *a, int64_t lda, const float *b,
                       int64_t ldb, float *c, int64_t ldc) {
  for (int64_t i = 0; i < m; i++) {
    for (int64_t j = 0; j < n; j++)
      c[i * ldc + j] = 0.0f;
    for (int64_t p = 0; p < k; p++) {
      float x = at_a(a, lda, ta, i, p);
      for (int64_t j = 0; j < n; j++)
        c[i * ldc + j] += x * at_b(b, ldb, tb, p, j);
    }
  }
}

/// Packs op(A)[i0.., p0..] (mc x kc) into strips of MR rows: strip s holds,
/// for each p, the MR values of rows s*MR.. (zero past the last row).
static void pack_a(bool ta, const float *a, int64_t lda, int64_t i0,
                   int64_t p0, int64_t mc, int64_t kc, float *out) {
  for (int64_t s = 0; s < mc; s += MR) {
    int64_t rows = mc - s < MR ? mc - s : MR;
    for (int64_t p = 0; p < kc; p++) {
      for (int64_t r = 0; r < rows; r++)
        out[r] = at_a(a, lda, ta, i0 + s + r, p0 + p);
      for (int64_t r = rows; r < MR; r++)
        out[r] = 0.0f;
      out += MR;
    }
  }
}

/// Packs op(B)[p0.., j0..] (kc x nc) into strips of nr columns.
static void pack_b(bool tb, const float *b, int64_t ldb, int64_t p0,
                   int64_t j0, int64_t kc, int64_t nc, int64_t nr,
                   float *out) {
  for (int64_t s = 0; s < nc; s += nr) {
    int64_t cols = nc - s < nr ? nc - s : nr;
    for (int64_t p = 0; p < kc; p++) {
      if (!tb && cols == nr) {
        memcpy(out, b + (p0 + p) * ldb + j0 + s, sizeof(float) * (size_t)nr);
      } else {
        for (int64_t q = 0; q < cols; q++)
          out[q] = at_b(b, ldb, tb, p0 + p, j0 + s + q);
        for (int64_t q = cols; q < nr; q++)
          out[q] = 0.0f;
      }
      out += nr;
    }
  }
}

/// The macro-kernel of one ISA: every MR x NR tile of the mc x nc block of C
/// at c from the packed strips; `first` stores, otherwise adds to C. VT is
/// a vector of VL floats; a tile row is two of them (NR = 2 * VL).
#define EDDY_RT_GEMM_MACRO(NAME, ATTR, VT, VL)                                 \
  ATTR static void NAME(int64_t mc, int64_t nc, int64_t kc, const float *pa,   \
                        const float *pb, float *c, int64_t ldc, bool first) {  \
    for (int64_t js = 0; js < nc; js += 2 * (VL)) {                            \
      int64_t cols = nc - js < 2 * (VL) ? nc - js : 2 * (VL);                  \
      const float *bs = pb + js * kc;                                          \
      for (int64_t is = 0; is < mc; is += MR) {                                \
        int64_t rows = mc - is < MR ? mc - is : MR;                            \
        const float *as = pa + is * kc;                                        \
        VT acc[MR][2];                                                         \
        memset(acc, 0, sizeof acc);                                            \
        for (int64_t p = 0; p < kc; p++) {                                     \
          VT b0, b1;                                                           \
          memcpy(&b0, bs + p * 2 * (VL), sizeof b0);                           \
          memcpy(&b1, bs + p * 2 * (VL) + (VL), sizeof b1);                    \
          const float *ap = as + p * MR;                                       \
          for (int r = 0; r < MR; r++) {                                       \
            VT x = ap[r] - (VT){0};                                             \
            acc[r][0] += x * b0;                                               \
            acc[r][1] += x * b1;                                               \
          }                                                                    \
        }                                                                      \
        float *ct = c + is * ldc + js;                                         \
        if (rows == MR && cols == 2 * (VL)) {                                  \
          for (int r = 0; r < MR; r++) {                                       \
            float *row = ct + r * ldc;                                         \
            if (!first) {                                                      \
              VT o0, o1;                                                       \
              memcpy(&o0, row, sizeof o0);                                     \
              memcpy(&o1, row + (VL), sizeof o1);                              \
              acc[r][0] += o0;                                                 \
              acc[r][1] += o1;                                                 \
            }                                                                  \
            memcpy(row, &acc[r][0], sizeof acc[r][0]);                         \
            memcpy(row + (VL), &acc[r][1], sizeof acc[r][1]);                  \
          }                                                                    \
        } else {                                                               \
          float tile[MR][2 * (VL)];                                            \
          memcpy(tile, acc, sizeof tile);                                      \
          for (int64_t r = 0; r < rows; r++)                                   \
            for (int64_t q = 0; q < cols; q++)                                 \
              ct[r * ldc + q] =                                                \
                  first ? tile[r][q] : ct[r * ldc + q] + tile[r][q];           \
        }                                                                      \
      }                                                                        \
    }                                                                          \
  }

typedef float rt_v4f __attribute__((vector_size(16)));
typedef float rt_v8f __attribute__((vector_size(32)));
EDDY_RT_GEMM_MACRO(macro_base, , rt_v4f, 4)

#if defined(__x86_64__) && defined(__GNUC__)
#define EDDY_RT_GEMM_X86 1
typedef float rt_v16f __attribute__((vector_size(64)));
EDDY_RT_GEMM_MACRO(macro_avx2, __attribute__((target("avx2,fma"))), rt_v8f, 8)
EDDY_RT_GEMM_MACRO(macro_avx512,
                   __attribute__((target("avx512f,avx512vl,avx2,fma"))),
                   rt_v16f, 16)
#endif

typedef void (*rt_macro_fn)(int64_t, int64_t, int64_t, const float *,
                            const float *, float *, int64_t, bool);

/// The widest micro-kernel this CPU runs, and its NR.
static rt_macro_fn pick_macro(int64_t *nr) {
#if defined(EDDY_RT_GEMM_X86)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) {
    *nr = 32;
    return macro_avx512;
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    *nr = 16;
    return macro_avx2;
  }
#endif
  *nr = 8;
  return macro_base;
}

static void gemm_tiled(eddy_rt_ctx_t *rt, bool ta, bool tb, int64_t m,
                       int64_t n, int64_t k, const float *a, int64_t lda,
                       const float *b, int64_t ldb, float *c, int64_t ldc) {
  int64_t nr;
  rt_macro_fn macro = pick_macro(&nr);
  int64_t kcap = k < KC ? k : KC;
  int64_t mcap = m < MC ? m : MC;
  int64_t ncap = n < NC ? n : NC;
  mcap = (mcap + MR - 1) / MR * MR;
  ncap = (ncap + nr - 1) / nr * nr;
  int64_t abytes = (int64_t)sizeof(float) * mcap * kcap;
  int64_t bbytes = (int64_t)sizeof(float) * ncap * kcap;
  void *pa = NULL, *pb = NULL;
  eddy_rt_status_t st = eddy_rt_alloc(rt, abytes, "core.matmul", &pa);
  if (!st)
    st = eddy_rt_alloc(rt, bbytes, "core.matmul", &pb);
  if (st) {
    // No memory for the packed blocks (memory limit): the same product
    // without them.
    eddy_rt_status_destroy(st);
    eddy_rt_free(rt, pa, abytes);
    gemm_plain(ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
    return;
  }
  for (int64_t j0 = 0; j0 < n; j0 += NC) {
    int64_t nc = n - j0 < NC ? n - j0 : NC;
    for (int64_t p0 = 0; p0 < k; p0 += KC) {
      int64_t kc = k - p0 < KC ? k - p0 : KC;
      pack_b(tb, b, ldb, p0, j0, kc, nc, nr, pb);
      for (int64_t i0 = 0; i0 < m; i0 += MC) {
        int64_t mc = m - i0 < MC ? m - i0 : MC;
        pack_a(ta, a, lda, i0, p0, mc, kc, pa);
        macro(mc, nc, kc, pa, pb, c + i0 * ldc + j0, ldc, p0 == 0);
      }
    }
  }
  eddy_rt_free(rt, pb, bbytes);
  eddy_rt_free(rt, pa, abytes);
}

bool eddy_rt_gemm_has_blas(void) {
#if defined(EDDY_RT_HAVE_CBLAS)
  return true;
#else
  return false;
#endif
}

#if defined(EDDY_RT_HAVE_CBLAS)
/// A product with one row or one column, C = op(A) op(B) with m == 1 or
/// n == 1, as a matrix-vector product: sgemm would pack the whole matrix
/// for one vector (a fixed-point loop's W x spent most of its time there).
static void gemv_blas(bool ta, bool tb, int m, int n, int k, const float *a,
                      int lda, const float *b, int ldb, float *c, int ldc) {
  if (n == 1) {
    // c[:, 0] = op(A) x, x = op(B)'s column: B's column 0 (stride ldb) or
    // B's row 0 when B is transposed.
    cblas_sgemv(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, ta ? k : m,
                ta ? m : k, 1.0f, a, lda, b, tb ? 1 : ldb, 0.0f, c, ldc);
    return;
  }
  // c[0, :] = op(B)^T x, x = op(A)'s row: A's row 0, or A's column 0
  // (stride lda) when A is transposed.
  cblas_sgemv(CblasRowMajor, tb ? CblasNoTrans : CblasTrans, tb ? n : k,
              tb ? k : n, 1.0f, b, ldb, a, ta ? lda : 1, 0.0f, c, 1);
}
#endif

int32_t eddy_rt_sgemm(eddy_rt_ctx_t *rt, int32_t impl, int32_t trans,
                      int64_t m, int64_t n, int64_t k, const float *a,
                      int64_t lda, const float *b, int64_t ldb, float *c,
                      int64_t ldc) {
  bool ta = (trans & 1) != 0, tb = (trans & 2) != 0;
  if (m <= 0 || n <= 0)
    return impl == EDDY_RT_GEMM_PLAIN ? EDDY_RT_GEMM_PLAIN : EDDY_RT_GEMM_TILED;
  if (k <= 0) {
    for (int64_t i = 0; i < m; i++)
      memset(c + i * ldc, 0, sizeof(float) * (size_t)n);
    return impl == EDDY_RT_GEMM_PLAIN ? EDDY_RT_GEMM_PLAIN : EDDY_RT_GEMM_TILED;
  }
  if (impl == EDDY_RT_GEMM_PLAIN) {
    gemm_plain(ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
    return EDDY_RT_GEMM_PLAIN;
  }
#if defined(EDDY_RT_HAVE_CBLAS)
  // CBLAS sizes are int.
  bool fits = m <= INT_MAX && n <= INT_MAX && k <= INT_MAX && lda <= INT_MAX &&
              ldb <= INT_MAX && ldc <= INT_MAX;
  if (impl != EDDY_RT_GEMM_TILED && fits && (m == 1 || n == 1)) {
    gemv_blas(ta, tb, (int)m, (int)n, (int)k, a, (int)lda, b, (int)ldb, c,
              (int)ldc);
    return EDDY_RT_GEMM_BLAS;
  }
  if (impl != EDDY_RT_GEMM_TILED && fits) {
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
                tb ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k, 1.0f, a,
                (int)lda, b, (int)ldb, 0.0f, c, (int)ldc);
    return EDDY_RT_GEMM_BLAS;
  }
#endif
  gemm_tiled(rt, ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
  return EDDY_RT_GEMM_TILED;
}

void eddy_rt_entry_sgemm(eddy_rt_ctx_t *rt, int32_t trans, int64_t m,
                         int64_t n, int64_t k, const float *a, int64_t lda,
                         const float *b, int64_t ldb, float *c, int64_t ldc) {
  eddy_rt_sgemm(rt, EDDY_RT_GEMM_AUTO, trans, m, n, k, a, lda, b, ldb, c, ldc);
}

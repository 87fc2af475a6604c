/// f32 matrix multiplication for compiled code (core.matmul above the size
/// that backend-cpu emits inline): a CBLAS (OpenBLAS) when libeddyrt is
/// built with one (EDDY_RT_HAVE_CBLAS), or a tiled kernel of our own; AUTO
/// picks between them by a rule decided once per process from the CPU's
/// feature flags and OpenBLAS's core (eddy_rt_gemm_plan_decide).
///
/// The tiled kernel is the usual three-level blocking: C is computed in
/// panels of NC columns; for each block of KC of the inner dimension, B's
/// KC x NC block is packed into strips of NR columns and, for each block of
/// MC rows, A's MC x KC block into strips of MR rows; a micro-kernel then
/// computes each MR x NR tile of C with its accumulators in registers, from
/// the two packed strips read contiguously. The micro-kernel is written with
/// GCC vector types and compiled for AVX-512 (NR = 32, MR = 8), AVX2+FMA
/// (NR = 16, MR = 6) and baseline x86-64; the widest the CPU runs is used
/// (EDDY_RT_GEMM_ISA caps it). Packing buffers come from the runtime
/// context's allocator; when that fails the product is computed by a plain
/// loop that needs no memory.
///
/// Threads: a product large enough is split into parts (strips of C's rows
/// or columns) on the context's pool, OpenBLAS's products too (each part one
/// single-threaded call). A packed-B cache (eddy_rt_gemm_cache_t) keeps B's
/// packed form across the products of a loop whose weight does not change.
///
/// Accumulation is in f32 and its order is unspecified, as the numeric
/// contract of compiled f32 matmul allows (docs/dialects/core.md).
#include "runtime/rt_internal.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(EDDY_RT_HAVE_CBLAS)
#include <cblas.h>
#endif

/// MR is each micro-kernel's own (rows of a tile): 8 for AVX-512, which has
/// 32 vector registers (16 accumulators), 6 for the others (12 of 16).
enum { MC = 96, KC = 256, NC = 4096, NR_MAX = 32 };

/// The element (i, p) of op(A) and (p, j) of op(B).
static inline float at_a(const float *a, int64_t lda, bool ta, int64_t i,
                         int64_t p) {
  return ta ? a[p * lda + i] : a[i * lda + p];
}
static inline float at_b(const float *b, int64_t ldb, bool tb, int64_t p,
                         int64_t j) {
  return tb ? b[j * ldb + p] : b[p * ldb + j];
}

/// C = op(A) op(B) (acc: C += op(A) op(B)) by a plain loop (no memory
/// needed).
static void gemm_plain(bool ta, bool tb, bool acc, int64_t m, int64_t n,
                       int64_t k, const float *a, int64_t lda, const float *b,
                       int64_t ldb, float *c, int64_t ldc) {
  for (int64_t i = 0; i < m; i++) {
    for (int64_t j = 0; !acc && j < n; j++)
      c[i * ldc + j] = 0.0f;
    for (int64_t p = 0; p < k; p++) {
      float x = at_a(a, lda, ta, i, p);
      for (int64_t j = 0; j < n; j++)
        c[i * ldc + j] += x * at_b(b, ldb, tb, p, j);
    }
  }
}

/// Packs op(A)[i0.., p0..] (mc x kc) into strips of mr rows: strip s holds,
/// for each p, the mr values of rows s*mr.. (zero past the last row).
static void pack_a(bool ta, const float *a, int64_t lda, int64_t i0,
                   int64_t p0, int64_t mc, int64_t kc, int64_t mr,
                   float *out) {
  for (int64_t s = 0; s < mc; s += mr) {
    int64_t rows = mc - s < mr ? mc - s : mr;
    for (int64_t p = 0; p < kc; p++) {
      for (int64_t r = 0; r < rows; r++)
        out[r] = at_a(a, lda, ta, i0 + s + r, p0 + p);
      for (int64_t r = rows; r < mr; r++)
        out[r] = 0.0f;
      out += mr;
    }
  }
}

/// Packs op(B)[p0.., j0..] (kc x nc) into strips of nr columns.
static void pack_b(bool tb, const float *b, int64_t ldb, int64_t p0,
                   int64_t j0, int64_t kc, int64_t nc, int64_t nr,
                   float *out) {
  if (tb) {
    // B stored transposed: each column of op(B) is a contiguous row of B,
    // read once and written down the strip (a strip of KC x NR floats stays
    // in L1), rather than one strided read per element.
    for (int64_t s = 0; s < nc; s += nr) {
      int64_t cols = nc - s < nr ? nc - s : nr;
      for (int64_t q = 0; q < cols; q++) {
        const float *src = b + (j0 + s + q) * ldb + p0;
        for (int64_t p = 0; p < kc; p++)
          out[p * nr + q] = src[p];
      }
      for (int64_t p = 0; p < kc; p++)
        for (int64_t q = cols; q < nr; q++)
          out[p * nr + q] = 0.0f;
      out += kc * nr;
    }
    return;
  }
  for (int64_t s = 0; s < nc; s += nr) {
    int64_t cols = nc - s < nr ? nc - s : nr;
    for (int64_t p = 0; p < kc; p++) {
      if (cols == nr) {
        // Eight floats at a time (nr is a multiple of 8): a memcpy of a
        // size known only at run time became `rep movsq`, slow for 32-128
        // bytes.
        const float *src = b + (p0 + p) * ldb + j0 + s;
        for (int64_t q = 0; q < nr; q += 8)
          memcpy(out + q, src + q, 8 * sizeof(float));
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

/// Where the macro-kernel reads op(A)'s block: element (r, p) of the strip
/// of rows starting at row `is` is p[is * strip + r * row + p * col]. Packed
/// (pack_a): strip = kc, row = 1, col = MR. In place, for a block of whole
/// strips: strip = row = the stride between rows of op(A), col = the
/// stride between its columns (lda and 1, or 1 and lda when A is stored
/// transposed).
typedef struct {
  const float *p;
  int64_t strip, row, col;
} rt_a_view_t;

/// Where the macro-kernel reads op(B)'s block: the NR columns of the strip
/// starting at column js, row p, are the 2 VL floats at p[js * strip + p *
/// row]. Packed (pack_b): strip = kc, row = NR. In place, for a block of
/// whole strips of B stored by rows: strip = 1, row = ldb.
typedef struct {
  const float *p;
  int64_t strip, row;
} rt_b_view_t;

/// The macro-kernel of one ISA: every MR x NR tile of the mc x nc block of C
/// at c from the strips of A and B its views give (packed or in place);
/// `first` stores, otherwise adds to C. VT is
/// a vector of VL floats; a tile row is two of them (NR = 2 * VL).
/// NAME##_sum is a tile's k loop. Whole tiles and the partial ones at the
/// edges each inline their own copy of it, so that a whole tile's
/// accumulators stay in registers up to their store into C (with one copy
/// shared, the edge tiles' copy through memory made the compiler spill and
/// reload all of them after every tile: a tenth of a product of k = 32).
#define EDDY_RT_GEMM_MACRO(NAME, ATTR, VT, VL, MR)                             \
  ATTR static inline __attribute__((always_inline)) void NAME##_sum(           \
      int64_t kc, const float *const *ar, int64_t col, const float *bs,        \
      int64_t brow, VT acc[MR][2]) {                                           \
    for (int r = 0; r < MR; r++)                                               \
      acc[r][0] = acc[r][1] = (VT){0};                                         \
    for (int64_t p = 0, off = 0; p < kc; p++, off += col) {                    \
      VT b0, b1;                                                               \
      memcpy(&b0, bs + p * brow, sizeof b0);                                   \
      memcpy(&b1, bs + p * brow + (VL), sizeof b1);                            \
      for (int r = 0; r < MR; r++) {                                           \
        VT x = ar[r][off] - (VT){0};                                           \
        acc[r][0] += x * b0;                                                   \
        acc[r][1] += x * b1;                                                   \
      }                                                                        \
    }                                                                          \
  }                                                                            \
  ATTR static void NAME(int64_t mc, int64_t nc, int64_t kc, rt_a_view_t av,    \
                        rt_b_view_t bv, float *c, int64_t ldc, bool first) {   \
    for (int64_t js = 0; js < nc; js += 2 * (VL)) {                            \
      int64_t cols = nc - js < 2 * (VL) ? nc - js : 2 * (VL);                  \
      const float *bs = bv.p + js * bv.strip;                                  \
      for (int64_t is = 0; is < mc; is += MR) {                                \
        int64_t rows = mc - is < MR ? mc - is : MR;                            \
        const float *ar[MR];                                                   \
        for (int r = 0; r < MR; r++)                                           \
          ar[r] = av.p + is * av.strip + r * av.row;                           \
        float *ct = c + is * ldc + js;                                         \
        if (rows == MR && cols == 2 * (VL)) {                                  \
          VT acc[MR][2];                                                       \
          NAME##_sum(kc, ar, av.col, bs, bv.row, acc);                         \
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
          VT acc[MR][2];                                                       \
          NAME##_sum(kc, ar, av.col, bs, bv.row, acc);                         \
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
EDDY_RT_GEMM_MACRO(macro_base, , rt_v4f, 4, 6)

#if defined(__x86_64__) && defined(__GNUC__)
#define EDDY_RT_GEMM_X86 1
typedef float rt_v16f __attribute__((vector_size(64)));
EDDY_RT_GEMM_MACRO(macro_avx2, __attribute__((target("avx2,fma"))), rt_v8f, 8,
                   6)
EDDY_RT_GEMM_MACRO(macro_avx512,
                   __attribute__((target("avx512f,avx512vl,avx2,fma"))),
                   rt_v16f, 16, 8)
#endif

typedef void (*rt_macro_fn)(int64_t, int64_t, int64_t, rt_a_view_t, rt_b_view_t,
                            float *, int64_t, bool);

/// The micro-kernel of level isa (which the CPU runs), its NR and MR.
static rt_macro_fn pick_macro(int32_t isa, int64_t *nr, int64_t *mr) {
#if defined(EDDY_RT_GEMM_X86)
  if (isa >= EDDY_RT_ISA_AVX512) {
    *nr = 32;
    *mr = 8;
    return macro_avx512;
  }
  if (isa >= EDDY_RT_ISA_AVX2) {
    *nr = 16;
    *mr = 6;
    return macro_avx2;
  }
#else
  (void)isa;
#endif
  *nr = 8;
  *mr = 6;
  return macro_base;
}

/// eddy's matrix-vector products (m == 1 or n == 1), for a BLAS whose own
/// run without FMA (rt_gemm_plan_t.vec): two loops over the rows of the
/// matrix, each element of the result summed in the same order whatever
/// the split. `dot`: out[i * inco] (+)= sum_p r[i * ldr + p] v[p], i <
/// rows, v contiguous (four rows at a time, VL products per row and step,
/// the lanes added in order at the end). `axpy`: out[j] (+)= sum_p v[p *
/// incv] r[p * ldr + j], j < len, out contiguous (4 VL columns of out held
/// in registers across all the rows, then one vector's, then one).
#define EDDY_RT_GEMV(NAME, ATTR, VT, VL)                                       \
  ATTR static float NAME##_hsum(VT x) {                                        \
    float l[VL], s = 0.0f;                                                     \
    memcpy(l, &x, sizeof l);                                                   \
    for (int q = 0; q < (VL); q++)                                             \
      s += l[q];                                                               \
    return s;                                                                  \
  }                                                                            \
  ATTR static void NAME##_dot(int64_t rows, int64_t len, const float *r,       \
                              int64_t ldr, const float *v, float *out,         \
                              int64_t inco, bool acc) {                        \
    int64_t i = 0;                                                             \
    for (; i < rows; i += 4) {                                                 \
      int n = rows - i < 4 ? (int)(rows - i) : 4;                              \
      const float *rr[4];                                                      \
      for (int q = 0; q < 4; q++)                                              \
        rr[q] = r + (i + (q < n ? q : 0)) * ldr;                               \
      VT sum[4];                                                               \
      memset(sum, 0, sizeof sum);                                              \
      int64_t p = 0;                                                           \
      for (; p + (VL) <= len; p += (VL)) {                                     \
        VT x;                                                                  \
        memcpy(&x, v + p, sizeof x);                                           \
        for (int q = 0; q < 4; q++) {                                          \
          VT y;                                                                \
          memcpy(&y, rr[q] + p, sizeof y);                                     \
          sum[q] += y * x;                                                     \
        }                                                                      \
      }                                                                        \
      for (int q = 0; q < n; q++) {                                            \
        float t = NAME##_hsum(sum[q]);                                         \
        for (int64_t e = p; e < len; e++)                                      \
          t += rr[q][e] * v[e];                                                \
        float *o = out + (i + q) * inco;                                       \
        *o = acc ? *o + t : t;                                                 \
      }                                                                        \
    }                                                                          \
  }                                                                            \
  ATTR static void NAME##_axpy(int64_t rows, int64_t len, const float *r,      \
                               int64_t ldr, const float *v, int64_t incv,      \
                               float *out, bool acc) {                         \
    int64_t j = 0;                                                             \
    for (; j + 4 * (VL) <= len; j += 4 * (VL)) {                               \
      VT o[4];                                                                 \
      if (acc)                                                                 \
        memcpy(o, out + j, sizeof o);                                          \
      else                                                                     \
        memset(o, 0, sizeof o);                                                \
      for (int64_t p = 0; p < rows; p++) {                                     \
        VT c = v[p * incv] - (VT){0};                                          \
        const float *rp = r + p * ldr + j;                                     \
        for (int q = 0; q < 4; q++) {                                          \
          VT y;                                                                \
          memcpy(&y, rp + q * (VL), sizeof y);                                 \
          o[q] += c * y;                                                       \
        }                                                                      \
      }                                                                        \
      memcpy(out + j, o, sizeof o);                                            \
    }                                                                          \
    for (; j + (VL) <= len; j += (VL)) {                                       \
      VT o = {0};                                                              \
      if (acc)                                                                 \
        memcpy(&o, out + j, sizeof o);                                         \
      for (int64_t p = 0; p < rows; p++) {                                     \
        VT y;                                                                  \
        memcpy(&y, r + p * ldr + j, sizeof y);                                 \
        o += (v[p * incv] - (VT){0}) * y;                                      \
      }                                                                        \
      memcpy(out + j, &o, sizeof o);                                           \
    }                                                                          \
    for (; j < len; j++) {                                                     \
      float t = acc ? out[j] : 0.0f;                                           \
      for (int64_t p = 0; p < rows; p++)                                       \
        t += v[p * incv] * r[p * ldr + j];                                     \
      out[j] = t;                                                              \
    }                                                                          \
  }

EDDY_RT_GEMV(gemv_base, , rt_v4f, 4)
#if defined(EDDY_RT_GEMM_X86)
EDDY_RT_GEMV(gemv_avx2, __attribute__((target("avx2,fma"))), rt_v8f, 8)
EDDY_RT_GEMV(gemv_avx512, __attribute__((target("avx512f,avx512vl,avx2,fma"))),
             rt_v16f, 16)
#endif

typedef void (*rt_dot_fn)(int64_t, int64_t, const float *, int64_t,
                          const float *, float *, int64_t, bool);
typedef void (*rt_axpy_fn)(int64_t, int64_t, const float *, int64_t,
                           const float *, int64_t, float *, bool);

/// The matrix-vector loops of level isa (which the CPU runs).
static void pick_gemv(int32_t isa, rt_dot_fn *dot, rt_axpy_fn *axpy) {
#if defined(EDDY_RT_GEMM_X86)
  if (isa >= EDDY_RT_ISA_AVX512) {
    *dot = gemv_avx512_dot;
    *axpy = gemv_avx512_axpy;
    return;
  }
  if (isa >= EDDY_RT_ISA_AVX2) {
    *dot = gemv_avx2_dot;
    *axpy = gemv_avx2_axpy;
    return;
  }
#else
  (void)isa;
#endif
  *dot = gemv_base_dot;
  *axpy = gemv_base_axpy;
}

/// dot with v read at stride incv: a contiguous copy of v first (on the
/// stack up to 1024 floats), or the plain loop when there is no memory.
static void gemv_dot(int32_t isa, int64_t rows, int64_t len, const float *r,
                     int64_t ldr, const float *v, int64_t incv, float *out,
                     int64_t inco, bool acc) {
  float small[1024], *tmp = NULL;
  if (incv != 1) {
    tmp = len <= 1024 ? small : malloc(sizeof(float) * (size_t)len);
    if (!tmp) {
      for (int64_t i = 0; i < rows; i++) {
        float t = 0.0f;
        for (int64_t p = 0; p < len; p++)
          t += r[i * ldr + p] * v[p * incv];
        out[i * inco] = acc ? out[i * inco] + t : t;
      }
      return;
    }
    for (int64_t p = 0; p < len; p++)
      tmp[p] = v[p * incv];
    v = tmp;
  }
  rt_dot_fn dot;
  rt_axpy_fn axpy;
  pick_gemv(isa, &dot, &axpy);
  dot(rows, len, r, ldr, v, out, inco, acc);
  if (tmp && tmp != small)
    free(tmp);
}

static void gemv_axpy(int32_t isa, int64_t rows, int64_t len, const float *r,
                      int64_t ldr, const float *v, int64_t incv, float *out,
                      bool acc) {
  rt_dot_fn dot;
  rt_axpy_fn axpy;
  pick_gemv(isa, &dot, &axpy);
  axpy(rows, len, r, ldr, v, incv, out, acc);
}

/// C (+)= op(A) op(B) for m == 1 or n == 1 with eddy's loops: a dot product
/// per element of C where the matrix's rows run along the sum, else the
/// matrix's rows scaled and added (C's row or column must then be
/// contiguous; otherwise the plain loop).
static void gemv_tiled(int32_t isa, bool ta, bool tb, bool acc, int64_t m,
                       int64_t n, int64_t k, const float *a, int64_t lda,
                       const float *b, int64_t ldb, float *c, int64_t ldc) {
  if (n == 1) { // c[:, 0] = op(A) x, x = op(B)'s column
    int64_t incx = tb ? 1 : ldb;
    if (!ta)
      gemv_dot(isa, m, k, a, lda, b, incx, c, ldc, acc);
    else if (ldc == 1 || m == 1)
      gemv_axpy(isa, k, m, a, lda, b, incx, c, acc);
    else
      gemm_plain(ta, tb, acc, m, n, k, a, lda, b, ldb, c, ldc);
    return;
  }
  // c[0, :] = x op(B), x = op(A)'s row
  int64_t incx = ta ? lda : 1;
  if (tb)
    gemv_dot(isa, n, k, b, ldb, a, incx, c, 1, acc);
  else
    gemv_axpy(isa, k, n, b, ldb, a, incx, c, acc);
}

/// The packed form of all of op(B) (k x n) for the micro-kernel with strips
/// of nr columns: for each block of NC columns (j0), for each block of KC
/// rows (p0), the strips pack_b writes. The block (j0, p0) starts at
/// j0 * k + p0 * round_up(nc, nr) floats, and a strip s of it s * kc later.
static int64_t packed_b_floats(int64_t n, int64_t k, int64_t nr) {
  return (n + nr - 1) / nr * nr * k;
}

static void pack_b_all(bool tb, const float *b, int64_t ldb, int64_t n,
                       int64_t k, int64_t nr, float *out) {
  for (int64_t j0 = 0; j0 < n; j0 += NC) {
    int64_t nc = n - j0 < NC ? n - j0 : NC;
    int64_t ncr = (nc + nr - 1) / nr * nr;
    for (int64_t p0 = 0; p0 < k; p0 += KC) {
      int64_t kc = k - p0 < KC ? k - p0 : KC;
      pack_b(tb, b, ldb, p0, j0, kc, nc, nr, out + j0 * k + p0 * ncr);
    }
  }
}

/// Rows [*lo, *hi) of units of `unit` of part t of `parts` over `total`.
static void part_range(int64_t total, int64_t unit, int64_t parts, int64_t t,
                       int64_t *lo, int64_t *hi) {
  int64_t units = (total + unit - 1) / unit;
  int64_t u0 = units * t / parts, u1 = units * (t + 1) / parts;
  *lo = u0 * unit < total ? u0 * unit : total;
  *hi = u1 * unit < total ? u1 * unit : total;
}

/// The packed form of all of op(A) (m x k) in strips of mr rows, laid out
/// as pack_b_all lays out B: the block (i0, p0) of MC rows and KC depth
/// starts at i0 * k + p0 * round_up(mc, mr) floats. Part t of `parts`
/// packs its share of each block's strips (a strip s of a block starts
/// s * mr * kc later).
typedef struct {
  bool ta;
  const float *a;
  int64_t lda, m, k, mr, parts;
  float *out;
} pack_a_job_t;

static void pack_a_part(void *arg, int64_t t) {
  const pack_a_job_t *g = arg;
  for (int64_t i0 = 0; i0 < g->m; i0 += MC) {
    int64_t mc = g->m - i0 < MC ? g->m - i0 : MC;
    int64_t mcr = (mc + g->mr - 1) / g->mr * g->mr;
    int64_t lo, hi; // rows of the block, on strip bounds
    part_range(mc, g->mr, g->parts, t, &lo, &hi);
    if (lo >= hi)
      continue;
    for (int64_t p0 = 0; p0 < g->k; p0 += KC) {
      int64_t kc = g->k - p0 < KC ? g->k - p0 : KC;
      pack_a(g->ta, g->a, g->lda, i0 + lo, p0, hi - lo, kc, g->mr,
             g->out + i0 * g->k + p0 * mcr + lo * kc);
    }
  }
}

/// One product of the tiled kernel, split into parts that run on the
/// context's threads: part t computes the rows [i0[t], i1[t]) of C's
/// columns [j0[t], j1[t]) (column bounds on strips of nr), so every element
/// of C sums its k products in the same order whatever the split.
typedef struct {
  eddy_rt_ctx_t *rt;
  rt_macro_fn macro;
  int64_t nr, mr;
  bool ta, tb;
  bool acc; ///< C += the product
  int64_t m, n, k;
  const float *a, *b;
  int64_t lda, ldb, ldc;
  float *c;
  const float *packed; ///< all of op(B) packed (pack_b_all), or NULL
  const float *packed_a; ///< all of op(A) packed (pack_a_part), or NULL
  /// op(A) read in place, not packed (at most MC rows or KC depth).
  bool direct_a;
  /// B read in place, not packed (stored by rows, whole strips, at most MC
  /// rows of A).
  bool direct_b;
  int64_t parts;
  bool split_n; ///< parts split the columns, else the rows
} gemm_job_t;

static void gemm_part(void *arg, int64_t t) {
  gemm_job_t *g = arg;
  int64_t ilo = 0, ihi = g->m, jlo = 0, jhi = g->n;
  if (g->split_n)
    part_range(g->n, g->nr, g->parts, t, &jlo, &jhi);
  else
    part_range(g->m, g->mr, g->parts, t, &ilo, &ihi);
  if (ilo >= ihi || jlo >= jhi)
    return;
  int64_t k = g->k, nr = g->nr;
  int64_t kcap = k < KC ? k : KC;
  int64_t mcap = ihi - ilo < MC ? ihi - ilo : MC;
  int64_t ncap = jhi - jlo < NC ? jhi - jlo : NC;
  mcap = (mcap + g->mr - 1) / g->mr * g->mr;
  ncap = (ncap + nr - 1) / nr * nr;
  // (In place: room for the rows past the last whole strip.)
  int64_t abytes = g->packed_a ? 0
                   : g->direct_a ? (int64_t)sizeof(float) * g->mr * kcap
                                 : (int64_t)sizeof(float) * mcap * kcap;
  int64_t bbytes =
      g->packed || g->direct_b ? 0 : (int64_t)sizeof(float) * ncap * kcap;
  void *pa = NULL, *pb = NULL;
  eddy_rt_status_t st =
      abytes ? eddy_rt_alloc(g->rt, abytes, "core.matmul", &pa) : NULL;
  if (!st && bbytes)
    st = eddy_rt_alloc(g->rt, bbytes, "core.matmul", &pb);
  if (st) {
    // No memory for the packing buffers (memory limit): this part without
    // them.
    eddy_rt_status_destroy(st);
    eddy_rt_free(g->rt, pa, abytes);
    const float *a = g->ta ? g->a + ilo : g->a + ilo * g->lda;
    const float *b = g->tb ? g->b + jlo * g->ldb : g->b + jlo;
    gemm_plain(g->ta, g->tb, g->acc, ihi - ilo, jhi - jlo, k, a, g->lda, b,
               g->ldb, g->c + ilo * g->ldc + jlo, g->ldc);
    return;
  }
  // Blocks of NC columns from jlo: inside the packed B they must not cross
  // its own NC blocks, so they stop at the next multiple of NC.
  for (int64_t j0 = jlo; j0 < jhi;) {
    int64_t bj = j0 / NC * NC; // the packed block holding j0
    int64_t jend = bj + NC < jhi ? bj + NC : jhi;
    int64_t nc = jend - j0;
    int64_t bnc = g->n - bj < NC ? g->n - bj : NC;
    int64_t bncr = (bnc + nr - 1) / nr * nr;
    for (int64_t p0 = 0; p0 < k; p0 += KC) {
      int64_t kc = k - p0 < KC ? k - p0 : KC;
      bool first = p0 == 0 && !g->acc; // stores C, else adds to it
      rt_b_view_t bp = {pb, kc, nr};
      if (g->packed) {
        bp.p = g->packed + bj * k + p0 * bncr + (j0 - bj) * kc;
      } else if (g->direct_b) {
        bp = (rt_b_view_t){g->b + p0 * g->ldb + j0, 1, g->ldb};
      } else {
        pack_b(g->tb, g->b, g->ldb, p0, j0, kc, nc, nr, pb);
      }
      for (int64_t i0 = ilo; i0 < ihi; i0 += MC) {
        int64_t mc = ihi - i0 < MC ? ihi - i0 : MC;
        float *ct = g->c + i0 * g->ldc + j0;
        int64_t mr = g->mr;
        rt_a_view_t av = {pa, kc, 1, mr};
        if (g->packed_a) {
          // (Parts split by columns: i0 runs over all rows from 0.)
          av.p = g->packed_a + i0 * k + p0 * ((mc + mr - 1) / mr * mr);
        } else if (g->direct_a) {
          // Whole strips read in place; the rows past the last whole strip
          // packed.
          int64_t whole = mc / mr * mr;
          int64_t rs = g->ta ? 1 : g->lda, cs = g->ta ? g->lda : 1;
          rt_a_view_t in_place = {g->a + i0 * rs + p0 * cs, rs, rs, cs};
          if (whole)
            g->macro(whole, nc, kc, in_place, bp, ct, g->ldc, first);
          if (whole == mc)
            continue;
          pack_a(g->ta, g->a, g->lda, i0 + whole, p0, mc - whole, kc, mr,
                 pa);
          g->macro(mc - whole, nc, kc, av, bp, ct + whole * g->ldc, g->ldc,
                   first);
          continue;
        } else {
          pack_a(g->ta, g->a, g->lda, i0, p0, mc, kc, mr, pa);
        }
        g->macro(mc, nc, kc, av, bp, ct, g->ldc, first);
      }
    }
    j0 = jend;
  }
  eddy_rt_free(g->rt, pb, bbytes);
  eddy_rt_free(g->rt, pa, abytes);
}

/// AUTO's small products (tiny_work, small_work] run the tiled kernel when
/// op(B) is cached or wider than this; narrower uncached ones run OpenBLAS
/// split across the threads, which was faster there (bench/README.md: 2
/// threads, 256x256x32: 216 against 170 GFLOP/s; 256x1024x32: 99 against
/// 171).
#define RT_GEMM_BLAS_MAX_N 512

/// Products with fewer multiply-adds run on the calling thread alone: below
/// this, handing half to another thread costs about what it saves.
#define RT_GEMM_PAR_WORK ((int64_t)1 << 17)
/// Parts per thread of a split product whose parts repeat no packing, and
/// the fewest multiply-adds a part gets. Products below RT_GEMM_FEW_PARTS_WORK
/// get one part per thread: each part claimed is a lock taken across cores,
/// which on the benchmark VM cost 7% of nested's 32x128x128 steps.
#define RT_GEMM_PARTS_PER_THREAD 4
#define RT_GEMM_PART_WORK ((int64_t)1 << 16)
#define RT_GEMM_FEW_PARTS_WORK ((int64_t)1 << 21)

/// Far cores. When the pool's workers take longer than this to pick up a
/// task (rt_pool_handoff_ns: the cores are far apart, as a virtual machine's
/// can be, at times, or the other core is busy), a split moves each
/// product's operands and results between caches slowly enough that
/// products under RT_GEMM_FAR_WORK multiply-adds run faster on the calling
/// thread (bench/README.md, "Two cores, near and far"). The pool forgets a
/// hand-off time after 50 ms, so such products split again then and the
/// time is measured anew: a move of the cores back together is seen.
#define RT_GEMM_FAR_HANDOFF_NS 600
#define RT_GEMM_FAR_WORK ((int64_t)1 << 21)
/// A matrix-vector product moves only its two vectors between the cores
/// when split, and its time is the reading of the matrix, whose halves stay
/// in the two cores' caches from one call to the next. It gains from the
/// second core from a smaller size even when the cores are far apart: from
/// 2^18 multiply-adds (a 512x512 matrix, 13.7 us on one thread, 9.6 us on
/// two, bench/README.md "Matrix-vector products across far cores").
#define RT_GEMV_FAR_WORK ((int64_t)1 << 18)

/// Whether a product of `work` multiply-adds may split across pool's
/// `threads`: large enough (RT_GEMM_PAR_WORK), and not kept on the calling
/// thread because the cores are far apart, which products of at least
/// far_work multiply-adds ignore.
static bool gemm_may_split(const eddy_rt_pool_t *pool, int64_t threads,
                           double work, int64_t far_work) {
  if (threads < 2 || work < (double)RT_GEMM_PAR_WORK)
    return false;
  return work >= (double)far_work ||
         rt_pool_handoff_ns(pool) <= RT_GEMM_FAR_HANDOFF_NS;
}

/// The layout of eddy_rt_gemm_cache_t's words.
typedef struct {
  const float *b;  ///< the B packed, NULL when none
  float *packed;   ///< pack_b_all's output
  int64_t bytes;   ///< packed's size
  int64_t n, k, ldb;
  int64_t form;    ///< trans_b | nr << 1
  int64_t unused;
} rt_gemm_cache_words_t;
_Static_assert(sizeof(rt_gemm_cache_words_t) == sizeof(eddy_rt_gemm_cache_t),
               "eddy_rt_gemm_cache_t holds the cache's fields");

/// cache's packed B for op(B) (packing it on a miss), or NULL when there is
/// no cache or no memory for it.
static const float *cache_lookup(eddy_rt_ctx_t *rt, eddy_rt_gemm_cache_t *cache,
                                 bool tb, const float *b, int64_t ldb,
                                 int64_t n, int64_t k, int64_t nr) {
  if (!cache)
    return NULL;
  rt_gemm_cache_words_t *w = (rt_gemm_cache_words_t *)cache->words;
  int64_t form = (tb ? 1 : 0) | nr << 1;
  if (w->b == b && w->n == n && w->k == k && w->ldb == ldb && w->form == form)
    return w->packed;
  int64_t bytes = (int64_t)sizeof(float) * packed_b_floats(n, k, nr);
  w->b = NULL;
  if (w->bytes != bytes) {
    eddy_rt_free(rt, w->packed, w->bytes);
    w->packed = NULL;
    w->bytes = 0;
    void *p = NULL;
    eddy_rt_status_t st = eddy_rt_alloc(rt, bytes, "core.matmul", &p);
    if (st) {
      eddy_rt_status_destroy(st);
      return NULL;
    }
    w->packed = p;
    w->bytes = bytes;
  }
  pack_b_all(tb, b, ldb, n, k, nr, w->packed);
  w->b = b;
  w->n = n;
  w->k = k;
  w->ldb = ldb;
  w->form = form;
  return w->packed;
}

static void gemm_tiled(eddy_rt_ctx_t *rt, int32_t isa, bool ta, bool tb,
                       bool acc, int64_t m, int64_t n, int64_t k,
                       const float *a, int64_t lda, const float *b,
                       int64_t ldb, float *c, int64_t ldc,
                       eddy_rt_gemm_cache_t *cache) {
  gemm_job_t g = {.rt = rt, .ta = ta, .tb = tb, .acc = acc, .m = m, .n = n,
                  .k = k, .a = a, .b = b, .lda = lda, .ldb = ldb, .ldc = ldc,
                  .c = c};
  g.macro = pick_macro(isa, &g.nr, &g.mr);
  g.packed = cache_lookup(rt, cache, tb, b, ldb, n, k, g.nr);
  eddy_rt_pool_t *pool = rt ? eddy_rt_ctx_pool(rt) : NULL;
  int64_t threads = eddy_rt_pool_num_threads(pool);
  double work = (double)m * (double)n * (double)k;
  // How to split. A part packs the A rows and B columns it reads. With B
  // in the cache, by columns: each thread then reads its own columns of B
  // at every step of a loop (they stay in its core's cache), and A is packed
  // once, before the split, for all the parts. Otherwise by rows when every
  // thread gets a strip of them and op(B) is no larger than op(A) (each
  // part packs all of B), else by columns with A packed once (or read in
  // place): a gradient's 32x256x256 dy U^T or 256x1024x32 x^T dz would
  // otherwise pack its whole B, the larger operand, once per thread.
  int64_t col_units = (n + g.nr - 1) / g.nr, row_units = (m + g.mr - 1) / g.mr;
  g.split_n = g.packed ? col_units >= threads
                       : row_units < threads || (n > m && col_units >= threads);
  int64_t units = g.split_n ? col_units : row_units;
  // Several parts per thread when no part repeats another's packing,
  // claimed as threads come free: a thread that the OS preempts in a busy
  // machine then holds up a small part, not half the product. Each part
  // keeps at least RT_GEMM_PART_WORK multiply-adds.
  bool no_repeat = g.split_n || g.packed;
  bool many = no_repeat && work >= (double)RT_GEMM_FEW_PARTS_WORK;
  int64_t parts = threads * (many ? RT_GEMM_PARTS_PER_THREAD : 1);
  double most = work / (double)RT_GEMM_PART_WORK;
  if ((double)parts > most)
    parts = most < 1.0 ? 1 : (int64_t)most;
  if (parts > units)
    parts = units;
  g.parts = gemm_may_split(pool, threads, work, RT_GEMM_FAR_WORK) ? parts : 1;
  // A product of at most one block of rows, or of one block of depth,
  // reads op(A) in place: a strip of its rows (MR x at most KC) is read
  // again for every strip of B's columns while it stays in the level-1
  // cache, so packing it costs more than it saves (256^3 on two threads:
  // 158 against 131 us; the RNN's hoisted 32000x256x256 spent a fifth of
  // its time packing A). Only products deeper than KC with more than MC
  // rows pack it, where a block is reused over the most columns.
  g.direct_a = m <= MC || k <= KC;
  // B read in place when it is stored by rows and splits into whole strips
  // of NR columns, and A has at most one block of rows: a strip of B (kc
  // rows of NR floats) is then read by at most MC / MR row tiles, from the
  // level-1 cache after the first, and packing it would cost about as
  // much as the product (map_fn's 64x64x64 items: 15% of the case's time
  // in pack_b).
  g.direct_b = !g.packed && !tb && n % g.nr == 0 && m <= MC;
  void *pa = NULL;
  int64_t abytes = 0;
  if (g.parts > 1 && g.split_n && !g.direct_a) {
    abytes = (int64_t)sizeof(float) * ((m + g.mr - 1) / g.mr * g.mr) * k;
    eddy_rt_status_t st = eddy_rt_alloc(rt, abytes, "core.matmul", &pa);
    if (st) { // each part packs A itself
      eddy_rt_status_destroy(st);
      pa = NULL;
      abytes = 0;
    } else {
      // Packed by all the threads first (a second, short fork).
      pack_a_job_t pj = {.ta = ta, .a = a, .lda = lda, .m = m, .k = k,
                         .mr = g.mr, .parts = threads, .out = pa};
      eddy_rt_pool_parallel_for(pool, threads, pack_a_part, &pj);
      g.packed_a = pa;
    }
  }
  eddy_rt_pool_parallel_for(pool, g.parts, gemm_part, &g);
  eddy_rt_free(rt, pa, abytes);
}

bool eddy_rt_gemm_has_blas(void) {
#if defined(EDDY_RT_HAVE_CBLAS)
  return true;
#else
  return false;
#endif
}

void rt_sgemm_tiled(eddy_rt_ctx_t *rt, int32_t isa, int32_t trans, int64_t m,
                    int64_t n, int64_t k, const float *a, int64_t lda,
                    const float *b, int64_t ldb, float *c, int64_t ldc) {
  gemm_tiled(rt, isa, (trans & EDDY_RT_SGEMM_TRANS_A) != 0,
             (trans & EDDY_RT_SGEMM_TRANS_B) != 0,
             (trans & EDDY_RT_SGEMM_ACCUMULATE) != 0, m, n, k, a, lda, b, ldb,
             c, ldc, NULL);
}

// ---- Which implementation AUTO runs ----------------------------------------
//
// OpenBLAS picks its kernels from the CPU's model, and a virtual machine
// that masks the model makes it fall back to old ones (Debian's 0.3.21
// says "Prescott" and runs SSE3 kernels on AVX-512 CPUs). So the CPU's
// feature flags are read here, OpenBLAS's core name is mapped to the level
// of the kernels it runs, and when those have no FMA (SSE or AVX) while
// eddy's have, eddy's are used. Small products run eddy's kernel on the
// calling thread whatever OpenBLAS's core (all but the tiniest, which
// OpenBLAS itself keeps on one thread): OpenBLAS wakes its threads for
// them, which costs more than the product (bench/README.md, "f32 matmul:
// AUTO's rule", has the measurements).

/// Products up to this many multiply-adds (m * n * k) run eddy's kernel on
/// the calling thread (the default of EDDY_RT_GEMM_SMALL): 2^23, the LSTM's
/// 32x1024x256 and the RNN's 32x256x256 products, but not 256^3, where
/// OpenBLAS's threads may pay off on an idle machine (not measured).
#define RT_GEMM_SMALL_WORK ((int64_t)32 * 1024 * 256)
/// ... and above this many: OpenBLAS computes products up to 2^18
/// multiply-adds on the calling thread by its own rule (65536 times its
/// GEMM_MULTITHREAD_THRESHOLD, 4), and there it was faster than the tiled
/// kernel (64^3: 4.6 us against 7.0 us).
#define RT_GEMM_TINY_WORK ((int64_t)1 << 18)

const char *eddy_rt_isa_name(int32_t isa) {
  switch (isa) {
  case EDDY_RT_ISA_SSE:
    return "sse";
  case EDDY_RT_ISA_AVX:
    return "avx";
  case EDDY_RT_ISA_AVX2:
    return "avx2";
  case EDDY_RT_ISA_AVX512:
    return "avx512";
  default:
    return "unknown";
  }
}

/// ASCII case-insensitive equality.
static bool same_name(const char *x, const char *y) {
  for (; *x && *y; x++, y++) {
    char cx = *x >= 'A' && *x <= 'Z' ? (char)(*x - 'A' + 'a') : *x;
    char cy = *y >= 'A' && *y <= 'Z' ? (char)(*y - 'A' + 'a') : *y;
    if (cx != cy)
      return false;
  }
  return *x == *y;
}

/// OpenBLAS's x86-64 core names (openblas_get_corename) and the level of
/// the sgemm kernels each runs: the AMD cores up to Excavator have AVX
/// (and FMA4 or FMA3) kernels but no AVX2; Zen runs Haswell's.
static const struct {
  const char *name;
  int32_t isa;
} k_cores[] = {
    {"katmai", EDDY_RT_ISA_SSE},        {"coppermine", EDDY_RT_ISA_SSE},
    {"northwood", EDDY_RT_ISA_SSE},     {"prescott", EDDY_RT_ISA_SSE},
    {"banias", EDDY_RT_ISA_SSE},        {"atom", EDDY_RT_ISA_SSE},
    {"core2", EDDY_RT_ISA_SSE},         {"penryn", EDDY_RT_ISA_SSE},
    {"dunnington", EDDY_RT_ISA_SSE},    {"nehalem", EDDY_RT_ISA_SSE},
    {"athlon", EDDY_RT_ISA_SSE},        {"opteron", EDDY_RT_ISA_SSE},
    {"opteron_sse3", EDDY_RT_ISA_SSE},  {"barcelona", EDDY_RT_ISA_SSE},
    {"nano", EDDY_RT_ISA_SSE},          {"bobcat", EDDY_RT_ISA_SSE},
    {"sandybridge", EDDY_RT_ISA_AVX},   {"bulldozer", EDDY_RT_ISA_AVX},
    {"piledriver", EDDY_RT_ISA_AVX},    {"steamroller", EDDY_RT_ISA_AVX},
    {"excavator", EDDY_RT_ISA_AVX},     {"haswell", EDDY_RT_ISA_AVX2},
    {"zen", EDDY_RT_ISA_AVX2},          {"skylakex", EDDY_RT_ISA_AVX512},
    {"cooperlake", EDDY_RT_ISA_AVX512}, {"sapphirerapids", EDDY_RT_ISA_AVX512},
};

int32_t eddy_rt_gemm_core_isa(const char *core) {
  if (!core)
    return EDDY_RT_ISA_UNKNOWN;
  for (size_t i = 0; i < sizeof k_cores / sizeof k_cores[0]; i++)
    if (same_name(core, k_cores[i].name))
      return k_cores[i].isa;
  return EDDY_RT_ISA_UNKNOWN;
}

/// The widest level this CPU and its OS run (GCC's checks include the OS's
/// saving of the AVX and AVX-512 registers).
static int32_t cpu_isa(void) {
#if defined(EDDY_RT_GEMM_X86)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl"))
    return EDDY_RT_ISA_AVX512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return EDDY_RT_ISA_AVX2;
  if (__builtin_cpu_supports("avx"))
    return EDDY_RT_ISA_AVX;
#endif
  return EDDY_RT_ISA_SSE;
}

void eddy_rt_gemm_plan_decide(int32_t cpu, bool has_blas,
                              const char *blas_core, const char *env_impl,
                              const char *env_isa, const char *env_small,
                              eddy_rt_gemm_plan_t *out_plan) {
  eddy_rt_gemm_plan_t *p = out_plan;
  memset(p, 0, sizeof *p);
  p->cpu_isa = cpu;
  // eddy's micro-kernels: AVX-512, AVX2+FMA, and the baseline one.
  p->tiled_isa = cpu >= EDDY_RT_ISA_AVX512 ? EDDY_RT_ISA_AVX512
                 : cpu >= EDDY_RT_ISA_AVX2 ? EDDY_RT_ISA_AVX2
                                           : EDDY_RT_ISA_SSE;
  char ignored[96] = "";
  if (env_isa) {
    int32_t cap = same_name(env_isa, "sse")      ? EDDY_RT_ISA_SSE
                  : same_name(env_isa, "avx2")   ? EDDY_RT_ISA_AVX2
                  : same_name(env_isa, "avx512") ? EDDY_RT_ISA_AVX512
                                                 : EDDY_RT_ISA_UNKNOWN;
    if (cap == EDDY_RT_ISA_UNKNOWN)
      snprintf(ignored, sizeof ignored, "; EDDY_RT_GEMM_ISA ignored");
    else if (cap < p->tiled_isa)
      p->tiled_isa = cap;
  }
  p->tiny_work = RT_GEMM_TINY_WORK;
  p->small_work = RT_GEMM_SMALL_WORK;
  if (env_small) {
    char *end;
    long long v = strtoll(env_small, &end, 10);
    if (end != env_small && *end == '\0' && v >= 0)
      p->small_work = v;
    else
      snprintf(ignored + strlen(ignored), sizeof ignored - strlen(ignored),
               "; EDDY_RT_GEMM_SMALL ignored");
  }
  p->blas_isa =
      has_blas ? eddy_rt_gemm_core_isa(blas_core) : EDDY_RT_ISA_UNKNOWN;
  if (has_blas && blas_core)
    snprintf(p->blas_core, sizeof p->blas_core, "%s", blas_core);
  bool want_blas = env_impl && same_name(env_impl, "blas");
  bool want_tiled = env_impl && same_name(env_impl, "tiled");
  if (env_impl && !want_blas && !want_tiled && !same_name(env_impl, "auto"))
    snprintf(ignored + strlen(ignored), sizeof ignored - strlen(ignored),
             "; EDDY_RT_GEMM ignored");
  const char *tiled = eddy_rt_isa_name(p->tiled_isa);
  if (!has_blas) {
    p->large = p->vec = EDDY_RT_GEMM_TILED;
    snprintf(p->reason, sizeof p->reason, "no BLAS linked: eddy's %s kernel%s",
             tiled, ignored);
  } else if (want_blas) {
    p->large = p->vec = EDDY_RT_GEMM_BLAS;
    p->small_work = 0;
    snprintf(p->reason, sizeof p->reason, "EDDY_RT_GEMM=blas: OpenBLAS%s",
             ignored);
  } else if (want_tiled) {
    p->large = p->vec = EDDY_RT_GEMM_TILED;
    snprintf(p->reason, sizeof p->reason,
             "EDDY_RT_GEMM=tiled: eddy's %s kernel%s", tiled, ignored);
  } else if (p->blas_isa != EDDY_RT_ISA_UNKNOWN && p->blas_isa < p->tiled_isa &&
             p->blas_isa < EDDY_RT_ISA_AVX2) {
    // Only kernels without FMA are replaced: OpenBLAS's AVX2 (Haswell)
    // kernels beat eddy's AVX-512 one on the AVX-512 CPU measured
    // (bench/README.md), so an AVX2 core on an AVX-512 CPU keeps them.
    // Its matrix-vector products go too: they are bound by memory where the
    // kernels are fast, but OpenBLAS's SSE3 sgemv ran at 5-7 GFLOP/s on a
    // 512x512 matrix in the cache of the Xeon measured (bench/README.md),
    // where eddy's own loops (gemv_tiled, no packing) are several times
    // faster.
    p->large = p->vec = EDDY_RT_GEMM_TILED;
    snprintf(p->reason, sizeof p->reason,
             "OpenBLAS runs %s kernels (core %s) on a %s CPU: eddy's %s "
             "kernel%s",
             eddy_rt_isa_name(p->blas_isa), p->blas_core,
             eddy_rt_isa_name(cpu), tiled, ignored);
  } else {
    p->large = p->vec = EDDY_RT_GEMM_BLAS;
    snprintf(p->reason, sizeof p->reason,
             "OpenBLAS (core %s), but eddy's %s kernel from %lld to %lld "
             "multiply-adds%s",
             p->blas_core[0] ? p->blas_core : "unknown", tiled,
             (long long)p->tiny_work + 1, (long long)p->small_work, ignored);
  }
}

// Computed once per process: the CPU, the BLAS linked and the environment
// do not change while it runs.
static pthread_once_t g_plan_once = PTHREAD_ONCE_INIT;
static eddy_rt_gemm_plan_t g_plan;

static void plan_init(void) {
  const char *core = NULL;
#if defined(EDDY_RT_HAVE_CBLAS)
  core = openblas_get_corename();
  // eddy runs the threads: a product is split across the context's pool
  // and each part is one single-threaded OpenBLAS call. OpenBLAS's own
  // workers would compete with the pool's for the same cores (and its
  // concurrent multithreaded calls are serialized).
  openblas_set_num_threads(1);
#endif
  eddy_rt_gemm_plan_decide(cpu_isa(), eddy_rt_gemm_has_blas(), core,
                           getenv("EDDY_RT_GEMM"), getenv("EDDY_RT_GEMM_ISA"),
                           getenv("EDDY_RT_GEMM_SMALL"), &g_plan);
}

static const eddy_rt_gemm_plan_t *plan_get(void) {
  pthread_once(&g_plan_once, plan_init);
  return &g_plan;
}

void eddy_rt_gemm_plan_get(eddy_rt_gemm_plan_t *out_plan) {
  *out_plan = *plan_get();
}

#if defined(EDDY_RT_HAVE_CBLAS)
/// A product with one row or one column, C = op(A) op(B) with m == 1 or
/// n == 1, as a matrix-vector product: sgemm would pack the whole matrix
/// for one vector (a fixed-point loop's W x spent most of its time there).
static void gemv_blas(bool ta, bool tb, float beta, int m, int n, int k,
                      const float *a, int lda, const float *b, int ldb,
                      float *c, int ldc) {
  if (n == 1) {
    // c[:, 0] = op(A) x, x = op(B)'s column: B's column 0 (stride ldb) or
    // B's row 0 when B is transposed.
    cblas_sgemv(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, ta ? k : m,
                ta ? m : k, 1.0f, a, lda, b, tb ? 1 : ldb, beta, c, ldc);
    return;
  }
  // c[0, :] = op(B)^T x, x = op(A)'s row: A's row 0, or A's column 0
  // (stride lda) when A is transposed.
  cblas_sgemv(CblasRowMajor, tb ? CblasNoTrans : CblasTrans, tb ? n : k,
              tb ? k : n, 1.0f, b, ldb, a, ta ? lda : 1, beta, c, 1);
}
#endif

/// The rows or columns of C that one part of a split BLAS call or
/// matrix-vector product takes: a multiple of this.
#define RT_BLAS_UNIT 32

#if defined(EDDY_RT_HAVE_CBLAS)
/// One OpenBLAS product split into parts on the context's pool: rows or
/// columns of C in blocks of RT_BLAS_UNIT, one single-threaded cblas_sgemm
/// each.
typedef struct {
  bool ta, tb, split_n;
  float beta; ///< 1: C += the product
  int64_t m, n, k, lda, ldb, ldc, parts;
  const float *a, *b;
  float *c;
} blas_job_t;

static void blas_part(void *arg, int64_t t) {
  const blas_job_t *g = arg;
  int64_t lo, hi;
  part_range(g->split_n ? g->n : g->m, RT_BLAS_UNIT, g->parts, t, &lo, &hi);
  if (lo >= hi)
    return;
  int64_t m = g->split_n ? g->m : hi - lo, n = g->split_n ? hi - lo : g->n;
  const float *a = g->a, *b = g->b;
  float *c = g->c;
  if (g->split_n) {
    b += g->tb ? lo * g->ldb : lo;
    c += lo;
  } else {
    a += g->ta ? lo : lo * g->lda;
    c += lo * g->ldc;
  }
  cblas_sgemm(CblasRowMajor, g->ta ? CblasTrans : CblasNoTrans,
              g->tb ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)g->k,
              1.0f, a, (int)g->lda, b, (int)g->ldb, g->beta, c, (int)g->ldc);
}

/// cblas_sgemm of the whole product, split across rt's threads when it is
/// large enough (each part computes its elements as the whole call would).
static void sgemm_blas(eddy_rt_ctx_t *rt, bool ta, bool tb, bool acc,
                       int64_t m, int64_t n, int64_t k, const float *a,
                       int64_t lda, const float *b, int64_t ldb, float *c,
                       int64_t ldc) {
  eddy_rt_pool_t *pool = rt ? eddy_rt_ctx_pool(rt) : NULL;
  int64_t threads = eddy_rt_pool_num_threads(pool);
  blas_job_t g = {.ta = ta, .tb = tb, .beta = acc ? 1.0f : 0.0f, .m = m,
                  .n = n, .k = k, .lda = lda, .ldb = ldb, .ldc = ldc, .a = a,
                  .b = b, .c = c};
  // The longer side, so that each part still makes a large product.
  g.split_n = n > m;
  int64_t units = ((g.split_n ? n : m) + RT_BLAS_UNIT - 1) / RT_BLAS_UNIT;
  double work = (double)m * (double)n * (double)k;
  g.parts = threads * 2 < units ? threads * 2 : units;
  if (g.parts < 2 || !gemm_may_split(pool, threads, work, RT_GEMM_FAR_WORK))
    g.parts = 1;
  eddy_rt_pool_parallel_for(pool, g.parts, blas_part, &g);
}
#endif

/// A matrix-vector product (m == 1 or n == 1) split across rt's threads by
/// blocks of the result, one single-threaded sgemv (or eddy's loops, when
/// `own`) each: bound by reading the matrix, it needs both cores'
/// bandwidth as much as their arithmetic.
typedef struct {
  bool ta, tb, own;
  int32_t isa; ///< own: the loops' level
  float beta;  ///< 1: C += the product
  int64_t m, n, k, lda, ldb, ldc, parts;
  const float *a, *b;
  float *c;
} gemv_job_t;

/// The matrix-vector product of one block of the result.
static void gemv_block(const gemv_job_t *g, int64_t m, int64_t n,
                       const float *a, const float *b, float *c) {
  if (g->own) {
    gemv_tiled(g->isa, g->ta, g->tb, g->beta != 0.0f, m, n, g->k, a, g->lda, b,
               g->ldb, c, g->ldc);
    return;
  }
#if defined(EDDY_RT_HAVE_CBLAS)
  gemv_blas(g->ta, g->tb, g->beta, (int)m, (int)n, (int)g->k, a, (int)g->lda, b,
            (int)g->ldb, c, (int)g->ldc);
#endif
}

static void gemv_part(void *arg, int64_t t) {
  const gemv_job_t *g = arg;
  int64_t lo, hi;
  if (g->n == 1) { // rows of op(A)
    part_range(g->m, RT_BLAS_UNIT, g->parts, t, &lo, &hi);
    if (lo < hi)
      gemv_block(g, hi - lo, 1, g->ta ? g->a + lo : g->a + lo * g->lda, g->b,
                 g->c + lo * g->ldc);
    return;
  }
  part_range(g->n, RT_BLAS_UNIT, g->parts, t, &lo, &hi); // columns of op(B)
  if (lo < hi)
    gemv_block(g, 1, hi - lo, g->a, g->tb ? g->b + lo * g->ldb : g->b + lo,
               g->c + lo);
}

static void gemv_split(eddy_rt_ctx_t *rt, bool own, int32_t isa, bool ta,
                       bool tb, bool acc, int64_t m, int64_t n, int64_t k,
                       const float *a, int64_t lda, const float *b, int64_t ldb,
                       float *c, int64_t ldc) {
  eddy_rt_pool_t *pool = rt ? eddy_rt_ctx_pool(rt) : NULL;
  int64_t threads = eddy_rt_pool_num_threads(pool);
  gemv_job_t g = {.ta = ta, .tb = tb, .own = own, .isa = isa,
                  .beta = acc ? 1.0f : 0.0f, .m = m, .n = n, .k = k,
                  .lda = lda, .ldb = ldb, .ldc = ldc, .a = a, .b = b, .c = c};
  int64_t units = ((n == 1 ? m : n) + RT_BLAS_UNIT - 1) / RT_BLAS_UNIT;
  double work = (double)m * (double)n * (double)k;
  g.parts = threads < units ? threads : units;
  if (g.parts < 2 || !gemm_may_split(pool, threads, work, RT_GEMV_FAR_WORK))
    g.parts = 1;
  eddy_rt_pool_parallel_for(pool, g.parts, gemv_part, &g);
}

/// eddy_rt_sgemm, with op(B)'s packed form kept in cache (may be NULL) when
/// the tiled kernel runs.
static int32_t sgemm(eddy_rt_ctx_t *rt, int32_t impl, int32_t trans, int64_t m,
                     int64_t n, int64_t k, const float *a, int64_t lda,
                     const float *b, int64_t ldb, float *c, int64_t ldc,
                     eddy_rt_gemm_cache_t *cache) {
  bool ta = (trans & EDDY_RT_SGEMM_TRANS_A) != 0,
       tb = (trans & EDDY_RT_SGEMM_TRANS_B) != 0,
       acc = (trans & EDDY_RT_SGEMM_ACCUMULATE) != 0;
  if (m <= 0 || n <= 0)
    return impl == EDDY_RT_GEMM_PLAIN ? EDDY_RT_GEMM_PLAIN : EDDY_RT_GEMM_TILED;
  if (k <= 0) {
    for (int64_t i = 0; !acc && i < m; i++)
      memset(c + i * ldc, 0, sizeof(float) * (size_t)n);
    return impl == EDDY_RT_GEMM_PLAIN ? EDDY_RT_GEMM_PLAIN : EDDY_RT_GEMM_TILED;
  }
  if (impl == EDDY_RT_GEMM_PLAIN) {
    gemm_plain(ta, tb, acc, m, n, k, a, lda, b, ldb, c, ldc);
    return EDDY_RT_GEMM_PLAIN;
  }
  const eddy_rt_gemm_plan_t *plan = plan_get();
  if (impl == EDDY_RT_GEMM_AUTO) {
    if (m == 1 || n == 1)
      impl = plan->vec;
    else if ((double)m * (double)n * (double)k > (double)plan->tiny_work &&
             (double)m * (double)n * (double)k <= (double)plan->small_work &&
             (cache || n > RT_GEMM_BLAS_MAX_N))
      impl = EDDY_RT_GEMM_TILED;
    else
      impl = plan->large;
  }
#if defined(EDDY_RT_HAVE_CBLAS)
  // CBLAS sizes are int.
  bool fits = m <= INT_MAX && n <= INT_MAX && k <= INT_MAX && lda <= INT_MAX &&
              ldb <= INT_MAX && ldc <= INT_MAX;
  if (impl == EDDY_RT_GEMM_BLAS && fits && (m == 1 || n == 1)) {
    gemv_split(rt, false, plan->tiled_isa, ta, tb, acc, m, n, k, a, lda, b, ldb,
               c, ldc);
    return EDDY_RT_GEMM_BLAS;
  }
  if (impl == EDDY_RT_GEMM_BLAS && fits) {
    sgemm_blas(rt, ta, tb, acc, m, n, k, a, lda, b, ldb, c, ldc);
    return EDDY_RT_GEMM_BLAS;
  }
#endif
  if (m == 1 || n == 1)
    gemv_split(rt, true, plan->tiled_isa, ta, tb, acc, m, n, k, a, lda, b, ldb,
               c, ldc);
  else
    gemm_tiled(rt, plan->tiled_isa, ta, tb, acc, m, n, k, a, lda, b, ldb, c,
               ldc, cache);
  return EDDY_RT_GEMM_TILED;
}

int32_t eddy_rt_sgemm(eddy_rt_ctx_t *rt, int32_t impl, int32_t trans,
                      int64_t m, int64_t n, int64_t k, const float *a,
                      int64_t lda, const float *b, int64_t ldb, float *c,
                      int64_t ldc) {
  return sgemm(rt, impl, trans, m, n, k, a, lda, b, ldb, c, ldc, NULL);
}

void eddy_rt_gemm_cache_init(eddy_rt_gemm_cache_t *cache) {
  memset(cache, 0, sizeof *cache);
}

void eddy_rt_gemm_cache_reset(eddy_rt_gemm_cache_t *cache) {
  ((rt_gemm_cache_words_t *)cache->words)->b = NULL;
}

void eddy_rt_gemm_cache_release(eddy_rt_ctx_t *rt,
                                eddy_rt_gemm_cache_t *cache) {
  rt_gemm_cache_words_t *w = (rt_gemm_cache_words_t *)cache->words;
  eddy_rt_free(rt, w->packed, w->bytes);
  eddy_rt_gemm_cache_init(cache);
}

int32_t eddy_rt_sgemm_cached(eddy_rt_ctx_t *rt, eddy_rt_gemm_cache_t *cache,
                             int32_t trans, int64_t m, int64_t n, int64_t k,
                             const float *a, int64_t lda, const float *b,
                             int64_t ldb, float *c, int64_t ldc) {
  return sgemm(rt, EDDY_RT_GEMM_AUTO, trans, m, n, k, a, lda, b, ldb, c, ldc,
               cache);
}

void eddy_rt_entry_sgemm(eddy_rt_ctx_t *rt, int32_t trans, int64_t m,
                         int64_t n, int64_t k, const float *a, int64_t lda,
                         const float *b, int64_t ldb, float *c, int64_t ldc) {
  eddy_rt_sgemm(rt, EDDY_RT_GEMM_AUTO, trans, m, n, k, a, lda, b, ldb, c, ldc);
}

/// A batch of products divided among the pool's threads.
typedef struct {
  eddy_rt_ctx_t *rt;
  int32_t trans;
  int64_t batch, parts, m, n, k, lda, ldb, ldc, sa, sb, sc;
  const float *a, *b;
  float *c;
} gemm_batch_job_t;

static void gemm_batch_part(void *arg, int64_t part) {
  const gemm_batch_job_t *g = arg;
  int64_t lo = g->batch * part / g->parts,
          hi = g->batch * (part + 1) / g->parts;
  for (int64_t i = lo; i < hi; i++)
    eddy_rt_sgemm(g->rt, EDDY_RT_GEMM_AUTO, g->trans, g->m, g->n, g->k,
                  g->a + i * g->sa, g->lda, g->b + i * g->sb, g->ldb,
                  g->c + i * g->sc, g->ldc);
}

void eddy_rt_entry_sgemm_batch(eddy_rt_ctx_t *rt, int32_t trans, int64_t batch,
                               int64_t m, int64_t n, int64_t k, const float *a,
                               int64_t lda, int64_t stride_a, const float *b,
                               int64_t ldb, int64_t stride_b, float *c,
                               int64_t ldc, int64_t stride_c) {
  gemm_batch_job_t g = {.rt = rt,
                        .trans = trans,
                        .batch = batch,
                        .parts = 1,
                        .m = m,
                        .n = n,
                        .k = k,
                        .lda = lda,
                        .ldb = ldb,
                        .ldc = ldc,
                        .sa = stride_a,
                        .sb = stride_b,
                        .sc = stride_c,
                        .a = a,
                        .b = b,
                        .c = c};
  eddy_rt_pool_t *pool = rt ? eddy_rt_ctx_pool(rt) : NULL;
  int64_t threads = eddy_rt_pool_num_threads(pool);
  double work = (double)batch * (double)m * (double)n * (double)k;
  // Whole products per part, several parts per thread (claimed as threads
  // come free), each of at least RT_GEMM_PART_WORK multiply-adds. A part's
  // products run on its thread alone: a product called from inside the
  // pool's tasks does not split again. No operand moves between the cores
  // but the part's own matrices, so the far-core rule is that of one
  // product of the whole batch's size.
  if (batch >= 2 && gemm_may_split(pool, threads, work, RT_GEMM_FAR_WORK)) {
    int64_t parts = threads * RT_GEMM_PARTS_PER_THREAD;
    double most = work / (double)RT_GEMM_PART_WORK;
    if ((double)parts > most)
      parts = most < 1.0 ? 1 : (int64_t)most;
    g.parts = parts < batch ? parts : batch;
  }
  // One part runs on the calling thread (and its products may split).
  eddy_rt_pool_parallel_for(pool, g.parts, gemm_batch_part, &g);
}

void eddy_rt_entry_sgemm_cached(eddy_rt_ctx_t *rt, eddy_rt_gemm_cache_t *cache,
                                int32_t trans, int64_t m, int64_t n, int64_t k,
                                const float *a, int64_t lda, const float *b,
                                int64_t ldb, float *c, int64_t ldc) {
  sgemm(rt, EDDY_RT_GEMM_AUTO, trans, m, n, k, a, lda, b, ldb, c, ldc, cache);
}

void eddy_rt_entry_gemm_caches_init(eddy_rt_gemm_cache_t *caches, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    eddy_rt_gemm_cache_init(&caches[i]);
}

void eddy_rt_entry_gemm_caches_release(eddy_rt_ctx_t *rt,
                                       eddy_rt_gemm_cache_t *caches,
                                       int64_t n) {
  for (int64_t i = 0; i < n; i++)
    eddy_rt_gemm_cache_release(rt, &caches[i]);
}

void eddy_rt_entry_gemm_cache_reset(eddy_rt_gemm_cache_t *cache) {
  eddy_rt_gemm_cache_reset(cache);
}

/// eddy_rt_sgemm (runtime/gemm.c), the f32 matmul that compiled code calls
/// for large matmuls: every implementation built here (OpenBLAS when
/// libeddyrt has it, the tiled kernel, the plain loop) on odd sizes, both
/// transposes and row strides wider than the matrix, against an f64
/// reference with the contract's bound
///   |c - exact| <= gamma_K * sum_k |a_ik| |b_kj|,  gamma_K = K u / (1 - K u).
/// Each micro-kernel this CPU runs (AVX-512, AVX2+FMA, baseline) on sizes
/// at and around its tile, block and panel edges; and AUTO's rule
/// (eddy_rt_gemm_plan_decide) with injected CPUs, BLAS cores and
/// environments.
#include "tests/unit/runtime/rt_test.h"

#include "runtime/rt_internal.h"

/// A reproducible value in [-1, 1).
static float rnd(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (float)((double)(*s >> 40) / 8388608.0 - 1.0);
}

typedef struct gemm_case {
  int64_t m, n, k;
  int32_t trans;
  int64_t pad; ///< extra elements at the end of each stored row
} gemm_case_t;

/// impl for check_case: the tiled kernel with the micro-kernel of level
/// impl - TILED_ISA (rt_sgemm_tiled).
enum { TILED_ISA = 100 };

/// Runs one case through impl; fails the test when an element is outside
/// the bound. Returns the implementation eddy_rt_sgemm reported. With
/// EDDY_RT_SGEMM_ACCUMULATE in c->trans, C starts with values of its own
/// that the product is added to (one more term of the sum).
static int32_t check_case(eddy_rt_ctx_t *ctx, int32_t impl,
                          const gemm_case_t *c) {
  bool ta = c->trans & EDDY_RT_SGEMM_TRANS_A,
       tb = c->trans & EDDY_RT_SGEMM_TRANS_B,
       acc = c->trans & EDDY_RT_SGEMM_ACCUMULATE;
  // Stored shapes: A is m x k (k x m when transposed), B k x n (n x k).
  int64_t arows = ta ? c->k : c->m, acols = ta ? c->m : c->k;
  int64_t brows = tb ? c->n : c->k, bcols = tb ? c->k : c->n;
  int64_t lda = acols + c->pad, ldb = bcols + c->pad, ldc = c->n + c->pad;
  float *a = calloc((size_t)(arows * lda + 1), sizeof(float));
  float *b = calloc((size_t)(brows * ldb + 1), sizeof(float));
  float *out = calloc((size_t)(c->m * ldc + 1), sizeof(float));
  float *init = calloc((size_t)(c->m * ldc + 1), sizeof(float));
  assert_non_null(a);
  assert_non_null(b);
  assert_non_null(out);
  assert_non_null(init);
  uint64_t s = (uint64_t)(c->m * 1000003 + c->n * 1009 + c->k + c->trans);
  for (int64_t i = 0; i < arows * lda; i++)
    a[i] = rnd(&s);
  for (int64_t i = 0; i < brows * ldb; i++)
    b[i] = rnd(&s);
  // Row padding of C must be left alone.
  for (int64_t i = 0; i < c->m * ldc; i++)
    out[i] = init[i] = acc && i % ldc < c->n ? rnd(&s) : 12345.0f;
  int32_t used = impl;
  if (impl >= TILED_ISA)
    rt_sgemm_tiled(ctx, impl - TILED_ISA, c->trans, c->m, c->n, c->k, a, lda,
                   b, ldb, out, ldc);
  else
    used = eddy_rt_sgemm(ctx, impl, c->trans, c->m, c->n, c->k, a, lda, b,
                         ldb, out, ldc);
  const double u = ldexp(1.0, -24);
  int64_t terms = c->k + (acc ? 1 : 0);
  double gamma = (double)terms * u / (1.0 - (double)terms * u);
  for (int64_t i = 0; i < c->m; i++) {
    for (int64_t j = 0; j < c->n; j++) {
      double exact = acc ? init[i * ldc + j] : 0, mag = fabs(exact);
      for (int64_t p = 0; p < c->k; p++) {
        double x = ta ? a[p * lda + i] : a[i * lda + p];
        double y = tb ? b[j * ldb + p] : b[p * ldb + j];
        exact += x * y;
        mag += fabs(x * y);
      }
      double got = out[i * ldc + j];
      // The final rounding to f32 of the exact value is allowed too.
      double bound = gamma * mag + fabs(exact) * u;
      if (!(fabs(got - exact) <= bound)) {
        fail_msg("impl %d %lldx%lldx%lld trans %d: c[%lld,%lld] = %.9g, "
                 "exact %.9g, bound %.3g",
                 impl, (long long)c->m, (long long)c->n, (long long)c->k,
                 c->trans, (long long)i, (long long)j, got, exact, bound);
      }
    }
    for (int64_t j = c->n; j < ldc; j++)
      assert_true(out[i * ldc + j] == 12345.0f);
  }
  free(a);
  free(b);
  free(out);
  free(init);
  return used;
}

static const gemm_case_t k_cases[] = {
    {1, 1, 1, 0, 0},     {7, 13, 5, 0, 0},   {7, 13, 5, 1, 0},
    {7, 13, 5, 2, 3},    {7, 13, 5, 3, 1},   {6, 32, 256, 0, 0},
    {257, 129, 65, 0, 0}, {257, 129, 65, 1, 2}, {257, 129, 65, 2, 0},
    {257, 129, 65, 3, 5}, {100, 70, 600, 0, 0}, {5, 4200, 3, 2, 0},
    {1, 300, 300, 0, 0}, {300, 1, 300, 3, 0},
    // One row or one column (BLAS: a matrix-vector product), every
    // transpose, padded rows.
    {1, 300, 300, 1, 2}, {1, 300, 300, 2, 0}, {1, 300, 300, 3, 3},
    {300, 1, 300, 0, 1}, {300, 1, 300, 1, 0}, {300, 1, 300, 2, 2},
    {1, 1, 700, 3, 1},
    // C += the product (EDDY_RT_SGEMM_ACCUMULATE = 8): depths past one
    // block of KC, every transpose, matrix-vector products.
    {7, 13, 5, 8, 0},    {257, 129, 65, 9, 2}, {64, 64, 32, 10, 0},
    {100, 70, 600, 11, 3}, {256, 256, 32, 9, 0}, {1, 300, 300, 9, 1},
    {300, 1, 300, 10, 0},
};

/// What AUTO runs for c by the process's plan.
static int32_t auto_impl(const gemm_case_t *c) {
  eddy_rt_gemm_plan_t p;
  eddy_rt_gemm_plan_get(&p);
  if (c->m == 1 || c->n == 1)
    return p.vec;
  int64_t work = c->m * c->n * c->k;
  // (Uncached: products up to 512 columns wide go to p.large.)
  if (work > p.tiny_work && work <= p.small_work && c->n > 512)
    return EDDY_RT_GEMM_TILED;
  return p.large;
}

/// expect < 0: what the plan says AUTO runs.
static void run_all(int32_t impl, int32_t expect) {
  eddy_rt_ctx_t *ctx = rtt_ctx(1);
  for (size_t i = 0; i < sizeof k_cases / sizeof k_cases[0]; i++)
    assert_int_equal(check_case(ctx, impl, &k_cases[i]),
                     expect < 0 ? auto_impl(&k_cases[i]) : expect);
  // Everything the kernel allocated was given back.
  assert_int_equal(eddy_rt_ctx_bytes_in_use(ctx), 0);
  eddy_rt_ctx_destroy(ctx);
}

static void test_tiled(void **state) {
  (void)state;
  run_all(EDDY_RT_GEMM_TILED, EDDY_RT_GEMM_TILED);
}

static void test_plain(void **state) {
  (void)state;
  run_all(EDDY_RT_GEMM_PLAIN, EDDY_RT_GEMM_PLAIN);
}

/// The BLAS when libeddyrt was built with one; AUTO by its plan.
static void test_blas(void **state) {
  (void)state;
  int32_t want = eddy_rt_gemm_has_blas() ? EDDY_RT_GEMM_BLAS : EDDY_RT_GEMM_TILED;
  run_all(EDDY_RT_GEMM_BLAS, want);
  run_all(EDDY_RT_GEMM_AUTO, -1);
}

/// Every micro-kernel this CPU runs, on sizes around its edges: rows around
/// MR (6; 8 for AVX-512) and MC (96), columns around each NR (8, 16, 32) and NC (4096),
/// depths around KC (256); every transpose, padded rows.
static void test_micro_kernels(void **state) {
  (void)state;
  eddy_rt_gemm_plan_t p;
  eddy_rt_gemm_plan_get(&p);
  static const int64_t ms[] = {1, 2, 5, 6, 7, 8, 9, 12, 16, 95, 96, 97, 193};
  static const int64_t ns[] = {1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 65};
  static const int64_t ks[] = {1, 3, 255, 256, 257, 513};
  static const int32_t isas[] = {EDDY_RT_ISA_SSE, EDDY_RT_ISA_AVX2,
                                 EDDY_RT_ISA_AVX512};
  eddy_rt_ctx_t *ctx = rtt_ctx(1);
  int ran = 0;
  for (size_t v = 0; v < sizeof isas / sizeof isas[0]; v++) {
    if (isas[v] > p.cpu_isa) {
      print_message("skipping the %s micro-kernel: this CPU runs up to %s\n",
                    eddy_rt_isa_name(isas[v]), eddy_rt_isa_name(p.cpu_isa));
      continue;
    }
    // Every m and n, with a depth, transpose and padding that vary with
    // them (all six depths and all four transposes are reached).
    size_t q = 0;
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++)
      for (size_t j = 0; j < sizeof ns / sizeof ns[0]; j++, q++) {
        gemm_case_t c = {ms[i], ns[j], ks[q % 6], (int32_t)(q % 4),
                         (int64_t)(q % 3)};
        check_case(ctx, TILED_ISA + isas[v], &c);
        ran++;
      }
    // Past one panel of NC columns, and a wide block of rows.
    gemm_case_t wide = {7, 4097, 19, 2, 1}, tall = {300, 40, 300, 1, 0};
    check_case(ctx, TILED_ISA + isas[v], &wide);
    check_case(ctx, TILED_ISA + isas[v], &tall);
  }
  assert_true(ran >= 110);
  assert_int_equal(eddy_rt_ctx_bytes_in_use(ctx), 0);
  eddy_rt_ctx_destroy(ctx);
}

/// Seeded A and B of case c (no padding; B offset by b_bump).
static void fill_ab(const gemm_case_t *c, float *a, float *b, float b_bump) {
  uint64_t s = (uint64_t)(c->m * 7 + c->n * 11 + c->k);
  for (int64_t i = 0; i < c->m * c->k; i++)
    a[i] = rnd(&s);
  for (int64_t i = 0; i < c->k * c->n; i++)
    b[i] = rnd(&s) + b_bump;
}

/// C of case c (no padding) from a and b: through cache when not NULL
/// (AUTO), else the plan's tiled kernel.
static void product(eddy_rt_ctx_t *ctx, eddy_rt_gemm_cache_t *cache,
                    const gemm_case_t *c, const float *a, const float *b,
                    float *out) {
  int64_t lda = c->trans & 1 ? c->m : c->k;
  int64_t ldb = c->trans & 2 ? c->k : c->n;
  if (cache) {
    eddy_rt_sgemm_cached(ctx, cache, c->trans, c->m, c->n, c->k, a, lda, b,
                         ldb, out, c->n);
    return;
  }
  eddy_rt_gemm_plan_t p;
  eddy_rt_gemm_plan_get(&p);
  rt_sgemm_tiled(ctx, p.tiled_isa, c->trans, c->m, c->n, c->k, a, lda, b, ldb,
                 out, c->n);
}

/// Products large enough to be split across threads: split by columns, by
/// rows (few columns), and by columns across an NC panel's edge; an LSTM
/// gradient's x^T dz (split by columns, the 256 rows of A read in place).
static const gemm_case_t k_par_cases[] = {
    {32, 256, 256, 0, 0},  {32, 256, 256, 3, 0}, {300, 40, 300, 1, 0},
    {97, 33, 513, 2, 0},   {7, 8200, 19, 2, 0},  {64, 300, 200, 0, 0},
    {256, 1024, 32, 1, 0},
};

/// The tiled kernel on 2 and 3 threads gives the bits it gives on one
/// (each element sums in the same order), within the bound, and frees its
/// buffers; OpenBLAS's products split across 3 threads are within the
/// bound.
static void test_threads(void **state) {
  (void)state;
  eddy_rt_ctx_t *one = rtt_ctx(1), *two = rtt_ctx(2), *three = rtt_ctx(3);
  for (size_t i = 0; i < sizeof k_par_cases / sizeof k_par_cases[0]; i++) {
    const gemm_case_t *c = &k_par_cases[i];
    size_t an = (size_t)(c->m * c->k), bn = (size_t)(c->k * c->n),
           cn = (size_t)(c->m * c->n);
    float *a = malloc(sizeof(float) * an), *b = malloc(sizeof(float) * bn);
    float *c1 = malloc(sizeof(float) * cn), *c2 = malloc(sizeof(float) * cn),
          *c3 = malloc(sizeof(float) * cn);
    assert_true(a && b && c1 && c2 && c3);
    fill_ab(c, a, b, 0.0f);
    product(one, NULL, c, a, b, c1);
    product(two, NULL, c, a, b, c2);
    product(three, NULL, c, a, b, c3);
    assert_memory_equal(c1, c2, sizeof(float) * cn);
    assert_memory_equal(c1, c3, sizeof(float) * cn);
    check_case(three, EDDY_RT_GEMM_TILED, c);
    // OpenBLAS split the same way (single-threaded calls on the parts).
    check_case(three, EDDY_RT_GEMM_BLAS, c);
    free(a);
    free(b);
    free(c1);
    free(c2);
    free(c3);
  }
  // Padded rows, every transpose, split by rows and by columns.
  // One row or one column, large enough to split (OpenBLAS: sgemv).
  static const gemm_case_t padded[] = {
      {300, 97, 65, 3, 5}, {97, 300, 65, 1, 3},  {200, 130, 40, 2, 1},
      {1, 2000, 300, 1, 3}, {1, 2000, 300, 2, 0}, {2000, 1, 300, 2, 1},
      {2000, 1, 300, 1, 2}};
  for (size_t i = 0; i < sizeof padded / sizeof padded[0]; i++) {
    check_case(three, EDDY_RT_GEMM_TILED, &padded[i]);
    check_case(three, EDDY_RT_GEMM_BLAS, &padded[i]);
  }
  assert_int_equal(eddy_rt_ctx_bytes_in_use(two), 0);
  assert_int_equal(eddy_rt_ctx_bytes_in_use(three), 0);
  // No memory for the packing buffers: each part without them.
  eddy_rt_ctx_set_memory_limit(three, 64);
  gemm_case_t lim = {300, 40, 300, 1, 0};
  check_case(three, EDDY_RT_GEMM_TILED, &lim);
  assert_int_equal(eddy_rt_ctx_bytes_in_use(three), 0);
  eddy_rt_ctx_destroy(one);
  eddy_rt_ctx_destroy(two);
  eddy_rt_ctx_destroy(three);
}

/// eddy_rt_entry_sgemm_batch: on 3 threads (the batch divided among them)
/// and on one, each product has the bits of one eddy_rt_sgemm call on its
/// own, for batched and shared (stride 0) operands and every transpose,
/// and the result's padding between matrices is left alone.
static void test_batch(void **state) {
  (void)state;
  eddy_rt_ctx_t *one = rtt_ctx(1), *three = rtt_ctx(3);
  enum { B = 16, M = 64, N = 48, K = 64, LDC = N + 3 };
  const int64_t sc = (int64_t)M * LDC;
  float *a = malloc(sizeof(float) * B * M * K),
        *b = malloc(sizeof(float) * B * K * N),
        *ref = malloc(sizeof(float) * B * sc),
        *c1 = malloc(sizeof(float) * B * sc),
        *c3 = malloc(sizeof(float) * B * sc);
  assert_true(a && b && ref && c1 && c3);
  uint64_t s = 77;
  for (int64_t i = 0; i < (int64_t)B * M * K; i++)
    a[i] = rnd(&s);
  for (int64_t i = 0; i < (int64_t)B * K * N; i++)
    b[i] = rnd(&s);
  for (int32_t trans = 0; trans < 4; trans++)
    for (int shared = 0; shared < 2; shared++) {
      int64_t lda = trans & 1 ? M : K, ldb = trans & 2 ? K : N;
      int64_t sa = shared == 1 ? 0 : (int64_t)M * K, sb = (int64_t)K * N;
      for (int64_t i = 0; i < (int64_t)B * sc; i++)
        ref[i] = c1[i] = c3[i] = -7.0f;
      for (int64_t i = 0; i < B; i++)
        eddy_rt_sgemm(one, EDDY_RT_GEMM_AUTO, trans, M, N, K, a + i * sa, lda,
                      b + i * sb, ldb, ref + i * sc, LDC);
      eddy_rt_entry_sgemm_batch(one, trans, B, M, N, K, a, lda, sa, b, ldb, sb,
                                c1, LDC, sc);
      eddy_rt_entry_sgemm_batch(three, trans, B, M, N, K, a, lda, sa, b, ldb,
                                sb, c3, LDC, sc);
      assert_memory_equal(ref, c1, sizeof(float) * B * sc);
      assert_memory_equal(ref, c3, sizeof(float) * B * sc);
    }
  assert_int_equal(eddy_rt_ctx_bytes_in_use(three), 0);
  free(a);
  free(b);
  free(ref);
  free(c1);
  free(c3);
  eddy_rt_ctx_destroy(one);
  eddy_rt_ctx_destroy(three);
}

/// A cached B gives the bits of the uncached product; a new B at another
/// address, or at the same address after a reset, is packed again; a
/// release gives the memory back.
static void test_cache(void **state) {
  (void)state;
  eddy_rt_ctx_t *ctx = rtt_ctx(2);
  int ran = 0;
  for (size_t i = 0; i < sizeof k_par_cases / sizeof k_par_cases[0]; i++) {
    const gemm_case_t *c = &k_par_cases[i];
    eddy_rt_gemm_plan_t plan;
    eddy_rt_gemm_plan_get(&plan);
    int64_t work = c->m * c->n * c->k;
    if (plan.large != EDDY_RT_GEMM_TILED &&
        (work <= plan.tiny_work || work > plan.small_work))
      continue; // AUTO runs the BLAS: the cache is not used
    size_t an = (size_t)(c->m * c->k), bn = (size_t)(c->k * c->n),
           cn = (size_t)(c->m * c->n);
    float *a = malloc(sizeof(float) * an), *b = malloc(sizeof(float) * bn),
          *b2 = malloc(sizeof(float) * bn);
    float *want = malloc(sizeof(float) * cn), *got = malloc(sizeof(float) * cn);
    assert_true(a && b && b2 && want && got);
    eddy_rt_gemm_cache_t cache;
    eddy_rt_gemm_cache_init(&cache);
    fill_ab(c, a, b, 0.0f);
    product(ctx, NULL, c, a, b, want);
    for (int rep = 0; rep < 2; rep++) { // packs, then reuses
      product(ctx, &cache, c, a, b, got);
      assert_memory_equal(want, got, sizeof(float) * cn);
    }
    assert_true(eddy_rt_ctx_bytes_in_use(ctx) > 0); // the packed B
    // Another B at another address.
    fill_ab(c, a, b2, 0.5f);
    product(ctx, NULL, c, a, b2, want);
    product(ctx, &cache, c, a, b2, got);
    assert_memory_equal(want, got, sizeof(float) * cn);
    // Other data at the first address, after a reset.
    fill_ab(c, a, b, -0.25f);
    product(ctx, NULL, c, a, b, want);
    eddy_rt_gemm_cache_reset(&cache);
    product(ctx, &cache, c, a, b, got);
    assert_memory_equal(want, got, sizeof(float) * cn);
    eddy_rt_gemm_cache_release(ctx, &cache);
    assert_int_equal(eddy_rt_ctx_bytes_in_use(ctx), 0);
    free(a);
    free(b);
    free(b2);
    free(want);
    free(got);
    ran++;
  }
  if (!ran)
    print_message("no case runs the tiled kernel under AUTO here\n");
  // A cache with no memory for the packed B: the product without it.
  eddy_rt_gemm_cache_t cache;
  eddy_rt_gemm_cache_init(&cache);
  eddy_rt_ctx_set_memory_limit(ctx, 64);
  float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1}, c[4];
  eddy_rt_sgemm_cached(ctx, &cache, 0, 2, 2, 3, a, 3, b, 2, c, 2);
  eddy_rt_gemm_cache_release(ctx, &cache);
  assert_int_equal(eddy_rt_ctx_bytes_in_use(ctx), 0);
  eddy_rt_ctx_destroy(ctx);
}

/// OpenBLAS's core names map to the level of their kernels, in any case.
static void test_core_isa(void **state) {
  (void)state;
  assert_int_equal(eddy_rt_gemm_core_isa("Prescott"), EDDY_RT_ISA_SSE);
  assert_int_equal(eddy_rt_gemm_core_isa("NEHALEM"), EDDY_RT_ISA_SSE);
  assert_int_equal(eddy_rt_gemm_core_isa("Sandybridge"), EDDY_RT_ISA_AVX);
  assert_int_equal(eddy_rt_gemm_core_isa("haswell"), EDDY_RT_ISA_AVX2);
  assert_int_equal(eddy_rt_gemm_core_isa("Zen"), EDDY_RT_ISA_AVX2);
  assert_int_equal(eddy_rt_gemm_core_isa("SkylakeX"), EDDY_RT_ISA_AVX512);
  assert_int_equal(eddy_rt_gemm_core_isa("Cooperlake"), EDDY_RT_ISA_AVX512);
  assert_int_equal(eddy_rt_gemm_core_isa("Zen5"), EDDY_RT_ISA_UNKNOWN);
  assert_int_equal(eddy_rt_gemm_core_isa("Unknown"), EDDY_RT_ISA_UNKNOWN);
  assert_int_equal(eddy_rt_gemm_core_isa(NULL), EDDY_RT_ISA_UNKNOWN);
  assert_string_equal(eddy_rt_isa_name(EDDY_RT_ISA_AVX512), "avx512");
}

/// The rule with no environment: (CPU level, core) -> large, tiled level.
static void test_plan_rule(void **state) {
  (void)state;
  enum { B = EDDY_RT_GEMM_BLAS, T = EDDY_RT_GEMM_TILED };
  static const struct {
    int32_t cpu;
    bool blas;
    const char *core;
    int32_t large, tiled;
  } rows[] = {
      // A masked CPU model: old kernels on a new CPU.
      {EDDY_RT_ISA_AVX512, true, "Prescott", T, EDDY_RT_ISA_AVX512},
      {EDDY_RT_ISA_AVX2, true, "Core2", T, EDDY_RT_ISA_AVX2},
      {EDDY_RT_ISA_AVX2, true, "Sandybridge", T, EDDY_RT_ISA_AVX2},
      // OpenBLAS's kernels as wide as eddy's, or with FMA (AVX2 kernels
      // beat eddy's AVX-512 one where measured).
      {EDDY_RT_ISA_AVX512, true, "Haswell", B, EDDY_RT_ISA_AVX512},
      {EDDY_RT_ISA_AVX512, true, "Cooperlake", B, EDDY_RT_ISA_AVX512},
      {EDDY_RT_ISA_AVX2, true, "Zen", B, EDDY_RT_ISA_AVX2},
      {EDDY_RT_ISA_AVX, true, "Sandybridge", B, EDDY_RT_ISA_SSE},
      {EDDY_RT_ISA_SSE, true, "Prescott", B, EDDY_RT_ISA_SSE},
      // A core not known: OpenBLAS is trusted.
      {EDDY_RT_ISA_AVX512, true, "Zen5", B, EDDY_RT_ISA_AVX512},
      {EDDY_RT_ISA_AVX512, true, NULL, B, EDDY_RT_ISA_AVX512},
      // No BLAS.
      {EDDY_RT_ISA_AVX2, false, NULL, T, EDDY_RT_ISA_AVX2},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    eddy_rt_gemm_plan_t p;
    eddy_rt_gemm_plan_decide(rows[i].cpu, rows[i].blas, rows[i].core, NULL,
                             NULL, NULL, &p);
    print_message("%s on %s: %s\n", rows[i].core ? rows[i].core : "(none)",
                  eddy_rt_isa_name(rows[i].cpu), p.reason);
    assert_int_equal(p.cpu_isa, rows[i].cpu);
    assert_int_equal(p.large, rows[i].large);
    assert_int_equal(p.tiled_isa, rows[i].tiled);
    // Matrix-vector products go where the other products go: to eddy's
    // own loops too when the BLAS's kernels have no FMA.
    assert_int_equal(p.vec, rows[i].large);
    assert_true(p.small_work == (int64_t)32 * 1024 * 256);
    assert_true(p.tiny_work == (int64_t)64 * 64 * 64);
    assert_int_equal(p.blas_isa, rows[i].blas
                                     ? eddy_rt_gemm_core_isa(rows[i].core)
                                     : EDDY_RT_ISA_UNKNOWN);
  }
}

/// EDDY_RT_GEMM, EDDY_RT_GEMM_ISA and EDDY_RT_GEMM_SMALL override the rule;
/// values not understood are ignored and said so.
static void test_plan_env(void **state) {
  (void)state;
  eddy_rt_gemm_plan_t p;
  const int32_t avx512 = EDDY_RT_ISA_AVX512;
  eddy_rt_gemm_plan_decide(avx512, true, "Cooperlake", "tiled", NULL, NULL, &p);
  assert_int_equal(p.large, EDDY_RT_GEMM_TILED);
  assert_int_equal(p.vec, EDDY_RT_GEMM_TILED);
  eddy_rt_gemm_plan_decide(avx512, true, "Prescott", "BLAS", NULL, NULL, &p);
  assert_int_equal(p.large, EDDY_RT_GEMM_BLAS);
  assert_int_equal(p.vec, EDDY_RT_GEMM_BLAS);
  assert_true(p.small_work == 0);
  eddy_rt_gemm_plan_decide(avx512, false, NULL, "blas", NULL, NULL, &p);
  assert_int_equal(p.large, EDDY_RT_GEMM_TILED);
  eddy_rt_gemm_plan_decide(avx512, true, "Prescott", "auto", "avx2", "1000",
                           &p);
  assert_int_equal(p.large, EDDY_RT_GEMM_TILED);
  assert_int_equal(p.tiled_isa, EDDY_RT_ISA_AVX2);
  assert_true(p.small_work == 1000);
  // A cap above the CPU changes nothing.
  eddy_rt_gemm_plan_decide(EDDY_RT_ISA_AVX2, true, "Haswell", NULL, "avx512",
                           NULL, &p);
  assert_int_equal(p.tiled_isa, EDDY_RT_ISA_AVX2);
  assert_int_equal(p.large, EDDY_RT_GEMM_BLAS);
  // Capped at sse, the tiled kernel is no wider than Sandybridge's.
  eddy_rt_gemm_plan_decide(avx512, true, "Sandybridge", NULL, "sse", NULL, &p);
  assert_int_equal(p.tiled_isa, EDDY_RT_ISA_SSE);
  assert_int_equal(p.large, EDDY_RT_GEMM_BLAS);
  eddy_rt_gemm_plan_decide(avx512, true, "Cooperlake", "fast", "avx3", "-4",
                           &p);
  assert_int_equal(p.large, EDDY_RT_GEMM_BLAS);
  assert_int_equal(p.tiled_isa, avx512);
  assert_true(p.small_work == (int64_t)32 * 1024 * 256);
  assert_non_null(strstr(p.reason, "EDDY_RT_GEMM ignored"));
  assert_non_null(strstr(p.reason, "EDDY_RT_GEMM_ISA ignored"));
  assert_non_null(strstr(p.reason, "EDDY_RT_GEMM_SMALL ignored"));
}

/// AUTO follows the process's plan: small products on the tiled kernel,
/// tiny and large ones as the plan says.
static void test_auto_small(void **state) {
  (void)state;
  eddy_rt_gemm_plan_t p;
  eddy_rt_gemm_plan_get(&p);
  eddy_rt_ctx_t *ctx = rtt_ctx(1);
  gemm_case_t rnn = {32, 256, 256, 2, 0}, wide = {32, 1024, 256, 0, 0},
              big = {256, 256, 257, 0, 0}, tiny = {64, 64, 64, 1, 0};
  assert_int_equal(check_case(ctx, EDDY_RT_GEMM_AUTO, &rnn), auto_impl(&rnn));
  assert_int_equal(check_case(ctx, EDDY_RT_GEMM_AUTO, &wide),
                   auto_impl(&wide));
  assert_int_equal(check_case(ctx, EDDY_RT_GEMM_AUTO, &big), p.large);
  assert_int_equal(check_case(ctx, EDDY_RT_GEMM_AUTO, &tiny), p.large);
  if (p.tiny_work < 32 * 256 * 256 && p.small_work >= 32 * 1024 * 256) {
    // Wide products run the tiled kernel; narrow ones when their B is
    // cached (otherwise the large products' implementation).
    assert_int_equal(auto_impl(&wide), EDDY_RT_GEMM_TILED);
    assert_int_equal(auto_impl(&rnn), p.large);
    float *a = calloc(32 * 256, sizeof(float));
    float *b = calloc(256 * 256, sizeof(float));
    float *c = calloc(32 * 256, sizeof(float));
    assert_true(a && b && c);
    eddy_rt_gemm_cache_t cache;
    eddy_rt_gemm_cache_init(&cache);
    assert_int_equal(eddy_rt_sgemm_cached(ctx, &cache, 0, 32, 256, 256, a,
                                          256, b, 256, c, 256),
                     EDDY_RT_GEMM_TILED);
    eddy_rt_gemm_cache_release(ctx, &cache);
    free(a);
    free(b);
    free(c);
  }
  eddy_rt_ctx_destroy(ctx);
}

/// K = 0 gives zeros; M or N = 0 touches nothing.
static void test_empty(void **state) {
  (void)state;
  eddy_rt_ctx_t *ctx = rtt_ctx(1);
  float a[4] = {1, 2, 3, 4}, b[4] = {1, 2, 3, 4}, c[4] = {9, 9, 9, 9};
  eddy_rt_sgemm(ctx, EDDY_RT_GEMM_AUTO, 0, 2, 2, 0, a, 2, b, 2, c, 2);
  for (int i = 0; i < 4; i++)
    assert_true(c[i] == 0.0f);
  c[0] = 9;
  eddy_rt_sgemm(ctx, EDDY_RT_GEMM_TILED, 0, 0, 2, 2, a, 2, b, 2, c, 2);
  eddy_rt_sgemm(ctx, EDDY_RT_GEMM_TILED, 0, 2, 0, 2, a, 2, b, 2, c, 2);
  assert_true(c[0] == 9.0f);
  // k = 0 adds nothing to C.
  for (int32_t impl = EDDY_RT_GEMM_AUTO; impl <= EDDY_RT_GEMM_PLAIN; impl++) {
    eddy_rt_sgemm(ctx, impl, EDDY_RT_SGEMM_ACCUMULATE, 2, 2, 0, a, 2, b, 2, c,
                  2);
    assert_true(c[0] == 9.0f && c[3] == 0.0f);
  }
  eddy_rt_ctx_destroy(ctx);
}

/// With no memory for the packing buffers the tiled kernel still computes
/// the product (without them).
static void test_memory_limit(void **state) {
  (void)state;
  eddy_rt_ctx_t *ctx = rtt_ctx(1);
  eddy_rt_ctx_set_memory_limit(ctx, 64);
  gemm_case_t c = {257, 129, 65, 3, 1};
  assert_int_equal(check_case(ctx, EDDY_RT_GEMM_TILED, &c), EDDY_RT_GEMM_TILED);
  assert_int_equal(eddy_rt_ctx_bytes_in_use(ctx), 0);
  eddy_rt_ctx_destroy(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tiled),        cmocka_unit_test(test_plain),
      cmocka_unit_test(test_blas),         cmocka_unit_test(test_empty),
      cmocka_unit_test(test_memory_limit), cmocka_unit_test(test_micro_kernels),
      cmocka_unit_test(test_core_isa),     cmocka_unit_test(test_plan_rule),
      cmocka_unit_test(test_plan_env),     cmocka_unit_test(test_auto_small),
      cmocka_unit_test(test_threads),      cmocka_unit_test(test_cache),
      cmocka_unit_test(test_batch),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

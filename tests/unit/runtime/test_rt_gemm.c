/// eddy_rt_sgemm (runtime/gemm.c), the f32 matmul that compiled code calls
/// for large matmuls: every implementation built here (OpenBLAS when
/// libeddyrt has it, the tiled kernel, the plain loop) on odd sizes, both
/// transposes and row strides wider than the matrix, against an f64
/// reference with the contract's bound
///   |c - exact| <= gamma_K * sum_k |a_ik| |b_kj|,  gamma_K = K u / (1 - K u).
#include "tests/unit/runtime/rt_test.h"

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

/// Runs one case through impl; fails the test when an element is outside
/// the bound. Returns the implementation eddy_rt_sgemm reported.
static int32_t check_case(eddy_rt_ctx_t *ctx, int32_t impl,
                          const gemm_case_t *c) {
  bool ta = c->trans & 1, tb = c->trans & 2;
  // Stored shapes: A is m x k (k x m when transposed), B k x n (n x k).
  int64_t arows = ta ? c->k : c->m, acols = ta ? c->m : c->k;
  int64_t brows = tb ? c->n : c->k, bcols = tb ? c->k : c->n;
  int64_t lda = acols + c->pad, ldb = bcols + c->pad, ldc = c->n + c->pad;
  float *a = calloc((size_t)(arows * lda + 1), sizeof(float));
  float *b = calloc((size_t)(brows * ldb + 1), sizeof(float));
  float *out = calloc((size_t)(c->m * ldc + 1), sizeof(float));
  assert_non_null(a);
  assert_non_null(b);
  assert_non_null(out);
  uint64_t s = (uint64_t)(c->m * 1000003 + c->n * 1009 + c->k + c->trans);
  for (int64_t i = 0; i < arows * lda; i++)
    a[i] = rnd(&s);
  for (int64_t i = 0; i < brows * ldb; i++)
    b[i] = rnd(&s);
  // Row padding of C must be left alone.
  for (int64_t i = 0; i < c->m * ldc; i++)
    out[i] = 12345.0f;
  int32_t used = eddy_rt_sgemm(ctx, impl, c->trans, c->m, c->n, c->k, a, lda,
                               b, ldb, out, ldc);
  const double u = ldexp(1.0, -24);
  double gamma = (double)c->k * u / (1.0 - (double)c->k * u);
  for (int64_t i = 0; i < c->m; i++) {
    for (int64_t j = 0; j < c->n; j++) {
      double exact = 0, mag = 0;
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
};

static void run_all(int32_t impl, int32_t expect) {
  eddy_rt_ctx_t *ctx = rtt_ctx(1);
  for (size_t i = 0; i < sizeof k_cases / sizeof k_cases[0]; i++)
    assert_int_equal(check_case(ctx, impl, &k_cases[i]), expect);
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

/// The BLAS when libeddyrt was built with one; AUTO picks it.
static void test_blas(void **state) {
  (void)state;
  int32_t want = eddy_rt_gemm_has_blas() ? EDDY_RT_GEMM_BLAS : EDDY_RT_GEMM_TILED;
  run_all(EDDY_RT_GEMM_BLAS, want);
  run_all(EDDY_RT_GEMM_AUTO, want);
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
      cmocka_unit_test(test_tiled),  cmocka_unit_test(test_plain),
      cmocka_unit_test(test_blas),   cmocka_unit_test(test_empty),
      cmocka_unit_test(test_memory_limit),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

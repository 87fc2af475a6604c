/// matmul (transposes, batch broadcasting, blocking, integer wraparound)
/// and reductions (axes, keepdims, negative axes, empty reductions, NaN,
/// integer mean), against hand-computed values.
#include "rt_test.h"

static eddy_rt_ctx_t *g_ctx;

static int setup(void **state) {
  (void)state;
  g_ctx = rtt_ctx(1);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  assert_int_equal(eddy_rt_ctx_bytes_in_use(g_ctx), 0);
  eddy_rt_ctx_destroy(g_ctx);
  return 0;
}

#define F32 EDDY_RT_F32
#define F64 EDDY_RT_F64
#define F16 EDDY_RT_F16
#define I1 EDDY_RT_I1
#define I8 EDDY_RT_I8
#define I32 EDDY_RT_I32
#define I64 EDDY_RT_I64

static eddy_rt_tensor_t mm(eddy_rt_tensor_t a, eddy_rt_tensor_t b, bool ta,
                           bool tb) {
  eddy_rt_tensor_t out;
  RTT_OK(eddy_rt_matmul(g_ctx, &a, &b, ta, tb, &out));
  eddy_rt_tensor_release(&a);
  eddy_rt_tensor_release(&b);
  return out;
}

static eddy_rt_tensor_t red(eddy_rt_reduce_op_t op, eddy_rt_tensor_t x,
                            const int64_t *axes, int32_t n, bool keep) {
  eddy_rt_tensor_t out;
  RTT_OK(eddy_rt_reduce(g_ctx, op, &x, axes, n, keep, &out));
  eddy_rt_tensor_release(&x);
  return out;
}

#define CHECK_F(expr, dt, shape, ...)                                          \
  do {                                                                         \
    eddy_rt_tensor_t r_ = (expr);                                              \
    RTT_EXPECT_F(&r_, dt, shape, __VA_ARGS__);                                 \
    eddy_rt_tensor_release(&r_);                                               \
  } while (0)
#define CHECK_I(expr, dt, shape, ...)                                          \
  do {                                                                         \
    eddy_rt_tensor_t r_ = (expr);                                              \
    RTT_EXPECT_I(&r_, dt, shape, __VA_ARGS__);                                 \
    eddy_rt_tensor_release(&r_);                                               \
  } while (0)
#define AX(...) (int64_t[]){__VA_ARGS__}, (int32_t)(sizeof((int64_t[]){__VA_ARGS__}) / 8)

static void test_matmul_basic(void **state) {
  (void)state;
  eddy_rt_ctx_t *c = g_ctx;
  // [[1,2,3],[4,5,6]] x [[7,8],[9,10],[11,12]] = [[58,64],[139,154]].
  CHECK_F(mm(RTT_F(c, F32, "2x3", 1, 2, 3, 4, 5, 6),
             RTT_F(c, F32, "3x2", 7, 8, 9, 10, 11, 12), false, false),
          F32, "2x2", 58, 64, 139, 154);
  CHECK_F(mm(RTT_F(c, F32, "3x2", 1, 4, 2, 5, 3, 6),
             RTT_F(c, F32, "3x2", 7, 8, 9, 10, 11, 12), true, false),
          F32, "2x2", 58, 64, 139, 154);
  CHECK_F(mm(RTT_F(c, F64, "2x3", 1, 2, 3, 4, 5, 6),
             RTT_F(c, F64, "2x3", 7, 9, 11, 8, 10, 12), false, true),
          F64, "2x2", 58, 64, 139, 154);
  CHECK_F(mm(RTT_F(c, F32, "3x2", 1, 4, 2, 5, 3, 6),
             RTT_F(c, F32, "2x3", 7, 9, 11, 8, 10, 12), true, true),
          F32, "2x2", 58, 64, 139, 154);
  // Integers wrap like the narrow type: 100*2 + 100*1 = 300 -> 44.
  CHECK_I(mm(RTT_I(c, I8, "1x2", 100, 100), RTT_I(c, I8, "2x1", 2, 1), false,
             false),
          I8, "1x1", 44);
  CHECK_I(mm(RTT_I(c, I32, "1x2", 65536, 3), RTT_I(c, I32, "2x1", 65536, -4),
             false, false),
          I32, "1x1", -12);
  CHECK_I(mm(RTT_I(c, I64, "2x2", 1, 2, 3, 4), RTT_I(c, I64, "2x2", -1, 0, 0, -1),
             false, false),
          I64, "2x2", -1, -2, -3, -4);
  // f16 accumulates in f64 and rounds once: 1 + 2048 = 2049 -> tie -> 2048;
  // 1 + 1 + 2048 = 2050 exactly (stepwise f16 adds would give 2048).
  CHECK_F(mm(RTT_F(c, F16, "2x3", 1, 2048, 0, 1, 1, 2048),
             RTT_F(c, F16, "3x1", 1, 1, 1), false, false),
          F16, "2x1", 2048, 2050);
  // K = 0 gives zeros; M = 0 an empty result.
  CHECK_F(mm(rtt_f(c, F32, "2x0", NULL), rtt_f(c, F32, "0x3", NULL), false,
             false),
          F32, "2x3", 0, 0, 0, 0, 0, 0);
  CHECK_F(mm(rtt_f(c, F32, "0x3", NULL), rtt_f(c, F32, "3x2", NULL), false,
             false),
          F32, "0x2", 0);
  CHECK_F(mm(rtt_f(c, F32, "0x2x3", NULL), rtt_f(c, F32, "3x2", NULL), false,
             false),
          F32, "0x2x2", 0);
}

static void test_matmul_batched(void **state) {
  (void)state;
  eddy_rt_ctx_t *c = g_ctx;
  // a: [2,1,2,2] = {I, 2I}; b: [3,2,2]; out[i][j] = (i+1) * b[j].
  CHECK_F(mm(RTT_F(c, F32, "2x1x2x2", 1, 0, 0, 1, 2, 0, 0, 2),
             RTT_F(c, F32, "3x2x2", 1, 2, 3, 4, 0, 1, 1, 0, 1, 1, 1, 1), false,
             false),
          F32, "2x3x2x2", 1, 2, 3, 4, 0, 1, 1, 0, 1, 1, 1, 1, 2, 4, 6, 8, 0, 2,
          2, 0, 2, 2, 2, 2);
  // A rank-2 operand broadcasts against a batch.
  CHECK_F(mm(RTT_F(c, F32, "2x1x2", 1, 1, 2, 2), RTT_F(c, F32, "2x1", 3, 4),
             false, false),
          F32, "2x1x1", 7, 14);
  eddy_rt_tensor_t a = rtt_f(c, F32, "2x2x3", NULL),
                   b = rtt_f(c, F32, "3x3x2", NULL), v = rtt_f(c, F32, "3", NULL),
                   k = rtt_f(c, F32, "4x2", NULL), i = rtt_i(c, I1, "3x2", NULL),
                   d = rtt_f(c, F64, "3x2", NULL), out;
  RTT_ERR(eddy_rt_matmul(c, &a, &b, false, false, &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "core.matmul", "batch dims",
          "[2, 2, 3]", "[3, 3, 2]");
  RTT_ERR(eddy_rt_matmul(c, &a, &k, false, false, &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "core.matmul",
          "contraction sizes differ", "gives 3", "gives 4");
  RTT_ERR(eddy_rt_matmul(c, &a, &v, false, false, &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "core.matmul", "rank >= 2");
  RTT_ERR(eddy_rt_matmul(c, &i, &i, false, true, &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "core.matmul", "i1");
  RTT_ERR(eddy_rt_matmul(c, &k, &d, false, false, &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "core.matmul", "f32 and f64");
  eddy_rt_tensor_t *all[] = {&a, &b, &v, &k, &i, &d};
  for (size_t j = 0; j < 6; j++)
    eddy_rt_tensor_release(all[j]);
}

/// Sizes that cross every block boundary, integer-valued f64 so the naive
/// product is exact, strided operands, and 1 vs 4 threads.
static void test_matmul_blocked(void **state) {
  (void)state;
  eddy_rt_ctx_t *c1 = g_ctx, *c4 = rtt_ctx(4);
  const int64_t M = 70, K = 300, N = 260;
  int64_t ad[2] = {K, M}, bd[2] = {N, K}; // stored transposed
  eddy_rt_tensor_t at, bt;
  RTT_OK(eddy_rt_tensor_create(c1, F64, 2, ad, "t", &at));
  RTT_OK(eddy_rt_tensor_create(c1, F64, 2, bd, "t", &bt));
  for (int64_t i = 0; i < K * M; i++)
    eddy_rt_tensor_set_f64(&at, i, (double)((i * 7) % 13) - 6);
  for (int64_t i = 0; i < N * K; i++)
    eddy_rt_tensor_set_f64(&bt, i, (double)((i * 5) % 11) - 5);
  // A strided view of b: [K, N] with strides (1, K).
  eddy_rt_tensor_t bv = bt;
  bv.dims[0] = K, bv.dims[1] = N, bv.strides[0] = 1, bv.strides[1] = K;
  eddy_rt_tensor_t o1, o4;
  RTT_OK(eddy_rt_matmul(c1, &at, &bv, true, false, &o1));
  RTT_OK(eddy_rt_matmul(c4, &at, &bt, true, true, &o4));
  rtt_shape(&o1, F64, "70x260");
  assert_true(rtt_same(&o1, &o4));
  for (int64_t i = 0; i < M; i += 3) {
    for (int64_t j = 0; j < N; j += 7) {
      double s = 0;
      for (int64_t k = 0; k < K; k++)
        s += eddy_rt_tensor_get_f64(&at, k * M + i) *
             eddy_rt_tensor_get_f64(&bt, j * K + k);
      assert_true(eddy_rt_tensor_get_f64(&o1, i * N + j) == s);
    }
  }
  eddy_rt_tensor_release(&o1);
  eddy_rt_tensor_release(&o4);
  // f32 with non-integer values: thread count does not change the bits.
  eddy_rt_tensor_t af, bf;
  RTT_OK(eddy_rt_cast(c1, &at, F32, &af));
  RTT_OK(eddy_rt_cast(c1, &bt, F32, &bf));
  eddy_rt_tensor_t half = RTT_F(c1, F32, "", 0.3), as;
  RTT_OK(eddy_rt_binary(c1, EDDY_RT_BINARY_MUL, &af, &half, &as));
  RTT_OK(eddy_rt_matmul(c1, &as, &bf, true, true, &o1));
  RTT_OK(eddy_rt_matmul(c4, &as, &bf, true, true, &o4));
  assert_true(rtt_same(&o1, &o4));
  eddy_rt_tensor_t *all[] = {&at, &bt, &o1, &o4, &af, &bf, &half, &as};
  for (size_t j = 0; j < 8; j++)
    eddy_rt_tensor_release(all[j]);
  eddy_rt_ctx_destroy(c4);
}

static void test_matmul_memory_limit(void **state) {
  (void)state;
  eddy_rt_ctx_options_t o = eddy_rt_ctx_options_default();
  o.memory_limit = 1 << 16;
  eddy_rt_ctx_t *c;
  RTT_OK(eddy_rt_ctx_create(&o, &c));
  // The output fits; the packing scratch does not.
  eddy_rt_tensor_t a = rtt_f(c, F32, "64x40", NULL),
                   b = rtt_f(c, F32, "40x64", NULL), out;
  RTT_ERR(eddy_rt_matmul(c, &a, &b, false, false, &out), EDDY_RT_ERR_RESOURCE,
          "core.matmul", "memory limit");
  assert_null(out.data);
  eddy_rt_tensor_release(&a);
  eddy_rt_tensor_release(&b);
  assert_int_equal(eddy_rt_ctx_bytes_in_use(c), 0);
  eddy_rt_ctx_destroy(c);
}

static void test_reduce_axes(void **state) {
  (void)state;
  eddy_rt_ctx_t *c = g_ctx;
#define X23 RTT_F(c, F32, "2x3", 1, 2, 3, 4, 5, 6)
  CHECK_F(red(EDDY_RT_REDUCE_SUM, X23, AX(1), false), F32, "2", 6, 15);
  CHECK_F(red(EDDY_RT_REDUCE_SUM, X23, AX(0), false), F32, "3", 5, 7, 9);
  CHECK_F(red(EDDY_RT_REDUCE_SUM, X23, AX(-1), true), F32, "2x1", 6, 15);
  CHECK_F(red(EDDY_RT_REDUCE_SUM, X23, AX(-2), true), F32, "1x3", 5, 7, 9);
  CHECK_F(red(EDDY_RT_REDUCE_SUM, X23, NULL, 0, false), F32, "", 21);
  CHECK_F(red(EDDY_RT_REDUCE_SUM, X23, NULL, 0, true), F32, "1x1", 21);
  CHECK_F(red(EDDY_RT_REDUCE_SUM, X23, (int64_t[]){0}, 0, false), F32, "2x3",
          1, 2, 3, 4, 5, 6);
  CHECK_F(red(EDDY_RT_REDUCE_MEAN, X23, AX(0, 1), false), F32, "", 3.5);
  CHECK_F(red(EDDY_RT_REDUCE_MAX, X23, AX(1, 0), false), F32, "", 6);
  CHECK_F(red(EDDY_RT_REDUCE_MIN, X23, AX(1), false), F32, "2", 1, 4);
  CHECK_F(red(EDDY_RT_REDUCE_PROD, X23, AX(1), false), F32, "2", 6, 120);
  // Middle axis of a rank-3 tensor, and two non-adjacent axes.
  CHECK_I(red(EDDY_RT_REDUCE_SUM,
              RTT_I(c, I64, "2x2x2", 1, 2, 3, 4, 5, 6, 7, 8), AX(1), false),
          I64, "2x2", 4, 6, 12, 14);
  CHECK_I(red(EDDY_RT_REDUCE_SUM,
              RTT_I(c, I64, "2x2x2", 1, 2, 3, 4, 5, 6, 7, 8), AX(0, 2), true),
          I64, "1x2x1", 14, 22);
  // A transposed (strided) input.
  eddy_rt_tensor_t x = X23, t = x, out;
  t.dims[0] = 3, t.dims[1] = 2, t.strides[0] = 1, t.strides[1] = 3;
  RTT_OK(eddy_rt_reduce(c, EDDY_RT_REDUCE_SUM, &t, AX(1), false, &out));
  RTT_EXPECT_F(&out, F32, "3", 5, 7, 9);
  eddy_rt_tensor_release(&out);
  RTT_ERR(eddy_rt_reduce(c, EDDY_RT_REDUCE_SUM, &x, AX(2), false, &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "core.reduce_sum",
          "axis 2 is out of range for rank 2");
  RTT_ERR(eddy_rt_reduce(c, EDDY_RT_REDUCE_SUM, &x, AX(1, -1), false, &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "core.reduce_sum", "more than once");
  eddy_rt_tensor_t b = rtt_i(c, I1, "2", NULL);
  RTT_ERR(eddy_rt_reduce(c, EDDY_RT_REDUCE_MAX, &b, NULL, 0, false, &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "core.reduce_max", "i1");
  eddy_rt_tensor_release(&b);
  eddy_rt_tensor_release(&x);
#undef X23
}

static void test_reduce_edges(void **state) {
  (void)state;
  eddy_rt_ctx_t *c = g_ctx;
  // NaN propagates through max/min; +0 is above -0.
  CHECK_F(red(EDDY_RT_REDUCE_MAX, RTT_F(c, F32, "3", 1, NAN, 3), NULL, 0, false),
          F32, "", NAN);
  CHECK_F(red(EDDY_RT_REDUCE_MIN, RTT_F(c, F64, "3", NAN, 1, 3), NULL, 0, false),
          F64, "", NAN);
  CHECK_F(red(EDDY_RT_REDUCE_MAX, RTT_F(c, F32, "2", -0.0, 0.0), NULL, 0, false),
          F32, "", 0.0);
  CHECK_F(red(EDDY_RT_REDUCE_MIN, RTT_F(c, F32, "2", 0.0, -0.0), NULL, 0, false),
          F32, "", -0.0);
  CHECK_F(red(EDDY_RT_REDUCE_MAX, RTT_F(c, F32, "2", -INFINITY, -INFINITY),
              NULL, 0, false),
          F32, "", -INFINITY);
  CHECK_I(red(EDDY_RT_REDUCE_MAX, RTT_I(c, I64, "2", INT64_MIN, INT64_MIN),
              NULL, 0, false),
          I64, "", INT64_MIN);
  // Empty reductions give the identity: sum 0, prod 1, max -inf (ints: the
  // dtype's minimum), min +inf; mean NaN for floats, 0 for ints.
  CHECK_F(red(EDDY_RT_REDUCE_SUM, rtt_f(c, F32, "2x0", NULL), AX(1), false),
          F32, "2", 0, 0);
  CHECK_F(red(EDDY_RT_REDUCE_PROD, rtt_f(c, F64, "0", NULL), NULL, 0, false),
          F64, "", 1);
  CHECK_F(red(EDDY_RT_REDUCE_MEAN, rtt_f(c, F32, "0x3", NULL), AX(0), false),
          F32, "3", NAN, NAN, NAN);
  CHECK_I(red(EDDY_RT_REDUCE_MEAN, rtt_i(c, I32, "0", NULL), NULL, 0, false),
          I32, "", 0);
  CHECK_I(red(EDDY_RT_REDUCE_SUM, rtt_i(c, I8, "0x2", NULL), AX(0), true), I8,
          "1x2", 0, 0);
  // Reducing an empty axis with an empty output is fine for max too.
  CHECK_F(red(EDDY_RT_REDUCE_MAX, rtt_f(c, F32, "0x0", NULL), AX(1), false),
          F32, "0", 0);
  CHECK_F(red(EDDY_RT_REDUCE_MAX, rtt_f(c, F32, "2x0", NULL), AX(1), false),
          F32, "2", -INFINITY, -INFINITY);
  CHECK_F(red(EDDY_RT_REDUCE_MIN, rtt_f(c, F16, "0", NULL), NULL, 0, false),
          F16, "", INFINITY);
  CHECK_I(red(EDDY_RT_REDUCE_MAX, rtt_i(c, I8, "0x2", NULL), AX(0), false), I8,
          "2", -128, -128);
  CHECK_I(red(EDDY_RT_REDUCE_MIN, rtt_i(c, I32, "0", NULL), NULL, 0, false),
          I32, "", INT32_MAX);
  // Integers wrap; the mean truncates the dtype-wrapped sum toward zero
  // (TensorFlow's Mean, unlike core.div's floor division).
  CHECK_I(red(EDDY_RT_REDUCE_SUM, RTT_I(c, I8, "2", 100, 100), NULL, 0, false),
          I8, "", -56);
  CHECK_I(red(EDDY_RT_REDUCE_PROD, RTT_I(c, I32, "2", 65536, 65536), NULL, 0,
              false),
          I32, "", 0);
  CHECK_I(red(EDDY_RT_REDUCE_MEAN, RTT_I(c, I32, "2x2", -3, 0, 7, 8), AX(1),
              false),
          I32, "2", -1, 7);
  CHECK_I(red(EDDY_RT_REDUCE_MEAN, RTT_I(c, I8, "2", 100, 100), NULL, 0, false),
          I8, "", -28);
  CHECK_I(red(EDDY_RT_REDUCE_MEAN, RTT_I(c, I64, "3", -1, -1, 1), NULL, 0,
              false),
          I64, "", 0);
  // Floats accumulate in f64 and round once.
  CHECK_F(red(EDDY_RT_REDUCE_SUM, RTT_F(c, F16, "3", 2048, 1, 1), NULL, 0,
              false),
          F16, "", 2050);
  CHECK_F(red(EDDY_RT_REDUCE_SUM, RTT_F(c, F32, "3", 16777216, 1, 1), NULL, 0,
              false),
          F32, "", 16777218);
  CHECK_F(red(EDDY_RT_REDUCE_MEAN, RTT_F(c, F16, "2", 1, 2), NULL, 0, false),
          F16, "", 1.5);
}

static void test_reduce_threads(void **state) {
  (void)state;
  eddy_rt_ctx_t *c1 = g_ctx, *c4 = rtt_ctx(4);
  int64_t dims[2] = {500, 700};
  eddy_rt_tensor_t x;
  RTT_OK(eddy_rt_tensor_create(c1, F32, 2, dims, "t", &x));
  for (int64_t i = 0; i < 500 * 700; i++)
    eddy_rt_tensor_set_f64(&x, i, cos((double)i) * 3.3);
  for (int a = -1; a <= 1; a++) {
    for (int op = 0; op < EDDY_RT_REDUCE_COUNT_; op++) {
      eddy_rt_tensor_t o1, o4;
      int64_t axes[1] = {a};
      RTT_OK(eddy_rt_reduce(c1, (eddy_rt_reduce_op_t)op, &x, a < 0 ? NULL : axes,
                            1, false, &o1));
      RTT_OK(eddy_rt_reduce(c4, (eddy_rt_reduce_op_t)op, &x, a < 0 ? NULL : axes,
                            1, false, &o4));
      assert_true(rtt_same(&o1, &o4));
      eddy_rt_tensor_release(&o1);
      eddy_rt_tensor_release(&o4);
    }
  }
  // The sum over axis 1 is the sequential f64 sum, rounded once.
  eddy_rt_tensor_t o;
  RTT_OK(eddy_rt_reduce(c4, EDDY_RT_REDUCE_SUM, &x, AX(1), false, &o));
  for (int64_t r = 0; r < 500; r += 37) {
    double s = 0;
    for (int64_t k = 0; k < 700; k++)
      s += eddy_rt_tensor_get_f64(&x, r * 700 + k);
    assert_true(eddy_rt_tensor_get_f64(&o, r) == (double)(float)s);
  }
  eddy_rt_tensor_release(&o);
  eddy_rt_tensor_release(&x);
  eddy_rt_ctx_destroy(c4);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_matmul_basic),
      cmocka_unit_test(test_matmul_batched),
      cmocka_unit_test(test_matmul_blocked),
      cmocka_unit_test(test_matmul_memory_limit),
      cmocka_unit_test(test_reduce_axes),
      cmocka_unit_test(test_reduce_edges),
      cmocka_unit_test(test_reduce_threads),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}

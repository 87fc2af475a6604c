/// Elementwise kernels against hand-computed values: unary math, binary
/// arithmetic with broadcasting, comparisons, logical ops, select, cast,
/// iota, copy; edge cases (NaN, signed zeros, integer wraparound, floor
/// division, division by zero, empty tensors); thread-count independence.
#include "rt_test.h"

static eddy_rt_ctx_t *g_ctx;

static int setup(void **state) {
  (void)state;
  g_ctx = rtt_ctx(1);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  assert_int_equal(eddy_rt_ctx_bytes_in_use(g_ctx), 0); // nothing leaked
  eddy_rt_ctx_destroy(g_ctx);
  return 0;
}

/// out = op(x); x released.
static eddy_rt_tensor_t un(eddy_rt_unary_op_t op, eddy_rt_tensor_t x) {
  eddy_rt_tensor_t out;
  RTT_OK(eddy_rt_unary(g_ctx, op, &x, &out));
  eddy_rt_tensor_release(&x);
  return out;
}

static eddy_rt_tensor_t bin(eddy_rt_binary_op_t op, eddy_rt_tensor_t a,
                            eddy_rt_tensor_t b) {
  eddy_rt_tensor_t out;
  RTT_OK(eddy_rt_binary(g_ctx, op, &a, &b, &out));
  eddy_rt_tensor_release(&a);
  eddy_rt_tensor_release(&b);
  return out;
}

static eddy_rt_tensor_t cmp(eddy_rt_compare_op_t op, eddy_rt_tensor_t a,
                            eddy_rt_tensor_t b) {
  eddy_rt_tensor_t out;
  RTT_OK(eddy_rt_compare(g_ctx, op, &a, &b, &out));
  eddy_rt_tensor_release(&a);
  eddy_rt_tensor_release(&b);
  return out;
}

static eddy_rt_tensor_t cast(eddy_rt_tensor_t x, int32_t dt) {
  eddy_rt_tensor_t out;
  RTT_OK(eddy_rt_cast(g_ctx, &x, dt, &out));
  eddy_rt_tensor_release(&x);
  return out;
}

#define F32 EDDY_RT_F32
#define F64 EDDY_RT_F64
#define F16 EDDY_RT_F16
#define BF16 EDDY_RT_BF16
#define I1 EDDY_RT_I1
#define I8 EDDY_RT_I8
#define I32 EDDY_RT_I32
#define I64 EDDY_RT_I64

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

static void test_unary_float(void **state) {
  (void)state;
  eddy_rt_ctx_t *c = g_ctx;
  CHECK_F(un(EDDY_RT_UNARY_NEG, RTT_F(c, F32, "3", 1, -2, 0)), F32, "3", -1, 2,
          -0.0);
  CHECK_F(un(EDDY_RT_UNARY_ABS, RTT_F(c, F32, "2", -0.0, -2.5)), F32, "2", 0.0,
          2.5);
  CHECK_F(un(EDDY_RT_UNARY_EXP, RTT_F(c, F64, "2", 0, 1)), F64, "2", 1.0,
          2.718281828459045);
  // f32 math is computed in f64 and rounded once.
  CHECK_F(un(EDDY_RT_UNARY_EXP, RTT_F(c, F32, "1", 1)), F32, "1",
          (double)(float)2.718281828459045);
  // f16/bf16: e rounds to 2.71875 in both.
  CHECK_F(un(EDDY_RT_UNARY_EXP, RTT_F(c, F16, "2", 0, 1)), F16, "2", 1.0,
          2.71875);
  CHECK_F(un(EDDY_RT_UNARY_EXP, RTT_F(c, BF16, "1", 1)), BF16, "1", 2.71875);
  CHECK_F(un(EDDY_RT_UNARY_LOG, RTT_F(c, F32, "3", 1, 0, -1)), F32, "3", 0.0,
          -INFINITY, NAN);
  CHECK_F(un(EDDY_RT_UNARY_LOG1P, RTT_F(c, F64, "2", 0, -1)), F64, "2", 0.0,
          -INFINITY);
  CHECK_F(un(EDDY_RT_UNARY_TANH, RTT_F(c, F32, "3", 0, INFINITY, -INFINITY)),
          F32, "3", 0.0, 1.0, -1.0);
  CHECK_F(un(EDDY_RT_UNARY_SIGMOID,
             RTT_F(c, F64, "5", 0, -INFINITY, INFINITY, -1000, 1000)),
          F64, "5", 0.5, 0.0, 1.0, 0.0, 1.0);
  // relu: NaN passes through, relu(-0) = +0.
  CHECK_F(un(EDDY_RT_UNARY_RELU, RTT_F(c, F32, "4", -1, NAN, -0.0, 2)), F32,
          "4", 0.0, NAN, 0.0, 2.0);
  CHECK_F(un(EDDY_RT_UNARY_SQRT, RTT_F(c, F32, "3", 4, -1, 0)), F32, "3", 2.0,
          NAN, 0.0);
  CHECK_F(un(EDDY_RT_UNARY_RSQRT, RTT_F(c, F64, "3", 4, 0, INFINITY)), F64, "3",
          0.5, INFINITY, 0.0);
  CHECK_F(un(EDDY_RT_UNARY_SQUARE, RTT_F(c, F16, "2", 3, -300)), F16, "2", 9.0,
          INFINITY); // 90000 overflows f16
  CHECK_F(un(EDDY_RT_UNARY_FLOOR, RTT_F(c, F32, "4", -1.5, 2.5, -0.0, NAN)),
          F32, "4", -2.0, 2.0, -0.0, NAN);
  // sign(+-0) = +0, sign(NaN) = NaN.
  CHECK_F(un(EDDY_RT_UNARY_SIGN,
             RTT_F(c, F32, "6", -3, 0, -0.0, NAN, 5, -INFINITY)),
          F32, "6", -1.0, 0.0, 0.0, NAN, 1.0, -1.0);
  // Empty tensors.
  CHECK_F(un(EDDY_RT_UNARY_EXP, rtt_f(c, F32, "0x3", NULL)), F32, "0x3", 0);
}

static void test_unary_int(void **state) {
  (void)state;
  eddy_rt_ctx_t *c = g_ctx;
  CHECK_I(un(EDDY_RT_UNARY_NEG, RTT_I(c, I8, "3", -128, 5, 0)), I8, "3", -128,
          -5, 0);
  CHECK_I(un(EDDY_RT_UNARY_ABS, RTT_I(c, I32, "3", INT32_MIN, -3, 4)), I32, "3",
          INT32_MIN, 3, 4);
  CHECK_I(un(EDDY_RT_UNARY_ABS, RTT_I(c, I64, "1", INT64_MIN)), I64, "1",
          INT64_MIN);
  CHECK_I(un(EDDY_RT_UNARY_RELU, RTT_I(c, I32, "2", -5, 5)), I32, "2", 0, 5);
  CHECK_I(un(EDDY_RT_UNARY_SQUARE, RTT_I(c, I8, "3", 16, 12, -11)), I8, "3", 0,
          -112, 121);
  CHECK_I(un(EDDY_RT_UNARY_SQUARE, RTT_I(c, I32, "1", 65536)), I32, "1", 0);
  CHECK_I(un(EDDY_RT_UNARY_SIGN, RTT_I(c, I64, "3", -7, 0, 9)), I64, "3", -1, 0,
          1);
  eddy_rt_tensor_t x = RTT_I(c, I32, "2", 1, 2), out;
  RTT_ERR(eddy_rt_unary(c, EDDY_RT_UNARY_EXP, &x, &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "core.exp", "i32", "float dtype");
  RTT_ERR(eddy_rt_unary(c, EDDY_RT_UNARY_FLOOR, &x, &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "core.floor");
  eddy_rt_tensor_release(&x);
  x = RTT_I(c, I1, "1", 1);
  RTT_ERR(eddy_rt_unary(c, EDDY_RT_UNARY_NEG, &x, &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "core.neg", "i1");
  eddy_rt_tensor_release(&x);
  assert_null(out.data);
}

static void test_binary_broadcast(void **state) {
  (void)state;
  eddy_rt_ctx_t *c = g_ctx;
  CHECK_F(bin(EDDY_RT_BINARY_ADD, RTT_F(c, F32, "2x3", 1, 2, 3, 4, 5, 6),
              RTT_F(c, F32, "3", 10, 20, 30)),
          F32, "2x3", 11, 22, 33, 14, 25, 36);
  CHECK_F(bin(EDDY_RT_BINARY_SUB, RTT_F(c, F64, "3", 10, 20, 30),
              RTT_F(c, F64, "2x1", 1, 2)),
          F64, "2x3", 9, 19, 29, 8, 18, 28);
  CHECK_F(bin(EDDY_RT_BINARY_MUL, RTT_F(c, F32, "3x1", 1, 2, 3),
              RTT_F(c, F32, "1x2", 10, 20)),
          F32, "3x2", 10, 20, 20, 40, 30, 60);
  CHECK_F(bin(EDDY_RT_BINARY_ADD, RTT_F(c, F32, "", 5),
              RTT_F(c, F32, "", 0.25)),
          F32, "", 5.25);
  // A scalar against an empty tensor, and a zero-size dim against a 1.
  CHECK_F(bin(EDDY_RT_BINARY_ADD, RTT_F(c, F32, "", 1), rtt_f(c, F32, "0x3", 0)),
          F32, "0x3", 0);
  CHECK_F(bin(EDDY_RT_BINARY_ADD, rtt_f(c, F32, "2x0", 0),
              RTT_F(c, F32, "2x1", 1, 2)),
          F32, "2x0", 0);
  eddy_rt_tensor_t a = RTT_F(c, F32, "2x3", 1, 2, 3, 4, 5, 6);
  eddy_rt_tensor_t b = RTT_F(c, F32, "2", 1, 2), d = RTT_F(c, F64, "3", 1, 2, 3);
  eddy_rt_tensor_t out;
  RTT_ERR(eddy_rt_binary(c, EDDY_RT_BINARY_ADD, &a, &b, &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "core.add",
          "cannot broadcast shapes [2, 3] and [2]");
  RTT_ERR(eddy_rt_binary(c, EDDY_RT_BINARY_MUL, &a, &d, &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "core.mul", "f32 and f64");
  eddy_rt_tensor_t z = rtt_f(c, F32, "0", 0);
  RTT_ERR(eddy_rt_binary(c, EDDY_RT_BINARY_ADD, &a, &z, &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "[2, 3] and [0]");
  eddy_rt_tensor_t l = RTT_I(c, I1, "1", 1);
  RTT_ERR(eddy_rt_binary(c, EDDY_RT_BINARY_ADD, &l, &l, &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "core.add", "i1");
  // A strided (transposed) operand.
  eddy_rt_tensor_t t = a;
  t.dims[0] = 3, t.dims[1] = 2, t.strides[0] = 1, t.strides[1] = 3;
  eddy_rt_tensor_t one = RTT_F(c, F32, "", 100);
  RTT_OK(eddy_rt_binary(c, EDDY_RT_BINARY_ADD, &t, &one, &out));
  RTT_EXPECT_F(&out, F32, "3x2", 101, 104, 102, 105, 103, 106);
  eddy_rt_tensor_release(&out);
  eddy_rt_tensor_release(&one);
  eddy_rt_tensor_release(&a);
  eddy_rt_tensor_release(&b);
  eddy_rt_tensor_release(&d);
  eddy_rt_tensor_release(&z);
  eddy_rt_tensor_release(&l);
}

static void test_binary_int_edges(void **state) {
  (void)state;
  eddy_rt_ctx_t *c = g_ctx;
  // Two's complement wraparound.
  CHECK_I(bin(EDDY_RT_BINARY_ADD, RTT_I(c, I8, "2", 127, -128),
              RTT_I(c, I8, "2", 1, -1)),
          I8, "2", -128, 127);
  CHECK_I(bin(EDDY_RT_BINARY_ADD, RTT_I(c, I32, "1", INT32_MAX),
              RTT_I(c, I32, "1", 1)),
          I32, "1", INT32_MIN);
  CHECK_I(bin(EDDY_RT_BINARY_ADD, RTT_I(c, I64, "1", INT64_MAX),
              RTT_I(c, I64, "1", 1)),
          I64, "1", INT64_MIN);
  CHECK_I(bin(EDDY_RT_BINARY_SUB, RTT_I(c, I64, "1", INT64_MIN),
              RTT_I(c, I64, "1", 1)),
          I64, "1", INT64_MAX);
  CHECK_I(bin(EDDY_RT_BINARY_MUL, RTT_I(c, I32, "2", 65536, -3),
              RTT_I(c, I32, "2", 65536, 7)),
          I32, "2", 0, -21);
  CHECK_I(bin(EDDY_RT_BINARY_MUL, RTT_I(c, I8, "1", 16), RTT_I(c, I8, "1", 9)),
          I8, "1", -112);
  // Floor division; x // 0 = 0; MIN // -1 wraps.
  CHECK_I(bin(EDDY_RT_BINARY_DIV, RTT_I(c, I32, "8", 7, -7, 7, -7, 5, 0, -6, INT32_MIN),
              RTT_I(c, I32, "8", 2, 2, -2, -2, 0, 0, 3, -1)),
          I32, "8", 3, -4, -4, 3, 0, 0, -2, INT32_MIN);
  CHECK_I(bin(EDDY_RT_BINARY_DIV, RTT_I(c, I8, "3", -128, -128, 1),
              RTT_I(c, I8, "3", -1, 3, -3)),
          I8, "3", -128, -43, -1);
  CHECK_I(bin(EDDY_RT_BINARY_DIV, RTT_I(c, I64, "2", INT64_MIN, -9),
              RTT_I(c, I64, "2", -1, 4)),
          I64, "2", INT64_MIN, -3);
  CHECK_I(bin(EDDY_RT_BINARY_MAXIMUM, RTT_I(c, I8, "2", -128, 5),
              RTT_I(c, I8, "2", 127, 3)),
          I8, "2", 127, 5);
  CHECK_I(bin(EDDY_RT_BINARY_MINIMUM, RTT_I(c, I64, "2", INT64_MIN, 5),
              RTT_I(c, I64, "", 0)),
          I64, "2", INT64_MIN, 0);
  eddy_rt_tensor_t a = RTT_I(c, I32, "1", 2), out;
  RTT_ERR(eddy_rt_binary(c, EDDY_RT_BINARY_POW, &a, &a, &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "core.pow", "i32");
  eddy_rt_tensor_release(&a);
}

static void test_binary_float_edges(void **state) {
  (void)state;
  eddy_rt_ctx_t *c = g_ctx;
  CHECK_F(bin(EDDY_RT_BINARY_DIV, RTT_F(c, F32, "4", 1, -1, 0, 1),
              RTT_F(c, F32, "4", 0, 0, 0, -0.0)),
          F32, "4", INFINITY, -INFINITY, NAN, -INFINITY);
  CHECK_F(bin(EDDY_RT_BINARY_POW, RTT_F(c, F32, "4", 2, 4, -8, 0),
              RTT_F(c, F32, "4", 10, 0.5, 0.5, 0)),
          F32, "4", 1024, 2, NAN, 1);
  CHECK_F(bin(EDDY_RT_BINARY_POW, RTT_F(c, F64, "1", 2), RTT_F(c, F64, "1", -1)),
          F64, "1", 0.5);
  // NaN propagates; +0 is above -0 whatever the order.
  CHECK_F(bin(EDDY_RT_BINARY_MAXIMUM, RTT_F(c, F32, "6", 1, NAN, 3, 0.0, -0.0, -INFINITY),
              RTT_F(c, F32, "6", 2, 1, NAN, -0.0, 0.0, -5)),
          F32, "6", 2, NAN, NAN, 0.0, 0.0, -5);
  CHECK_F(bin(EDDY_RT_BINARY_MINIMUM, RTT_F(c, F64, "6", 1, NAN, 3, 0.0, -0.0, INFINITY),
              RTT_F(c, F64, "6", 2, 1, NAN, -0.0, 0.0, 5)),
          F64, "6", 1, NAN, NAN, -0.0, -0.0, 5);
  // f16: 2048 + 1 and 2048 + 3 are ties (spacing 2): round to even.
  CHECK_F(bin(EDDY_RT_BINARY_ADD, RTT_F(c, F16, "2", 2048, 2048),
              RTT_F(c, F16, "2", 1, 3)),
          F16, "2", 2048, 2052);
  CHECK_F(bin(EDDY_RT_BINARY_ADD, RTT_F(c, BF16, "2", 256, 256),
              RTT_F(c, BF16, "2", 1, 3)),
          BF16, "2", 256, 260);
  CHECK_F(bin(EDDY_RT_BINARY_MUL, RTT_F(c, F16, "1", 300), RTT_F(c, F16, "1", 300)),
          F16, "1", INFINITY);
}

static void test_compare_logical_select(void **state) {
  (void)state;
  eddy_rt_ctx_t *c = g_ctx;
  CHECK_I(cmp(EDDY_RT_COMPARE_LT, RTT_F(c, F32, "3", 1, NAN, 3),
              RTT_F(c, F32, "3", 2, 2, 3)),
          I1, "3", 1, 0, 0);
  CHECK_I(cmp(EDDY_RT_COMPARE_NE, RTT_F(c, F64, "2", NAN, 1),
              RTT_F(c, F64, "2", NAN, 1)),
          I1, "2", 1, 0);
  CHECK_I(cmp(EDDY_RT_COMPARE_EQ, RTT_F(c, F16, "2", 0.0, 1),
              RTT_F(c, F16, "2", -0.0, 2)),
          I1, "2", 1, 0);
  CHECK_I(cmp(EDDY_RT_COMPARE_GE, RTT_I(c, I64, "3", INT64_MIN, 0, INT64_MAX),
              RTT_I(c, I64, "", 0)),
          I1, "3", 0, 1, 1);
  CHECK_I(cmp(EDDY_RT_COMPARE_GT, RTT_I(c, I8, "2x1", -1, 1),
              RTT_I(c, I8, "2", 0, -2)),
          I1, "2x2", 0, 1, 1, 1);
  CHECK_I(cmp(EDDY_RT_COMPARE_LE, RTT_I(c, I32, "2", 3, 4),
              RTT_I(c, I32, "2", 3, 3)),
          I1, "2", 1, 0);
  CHECK_I(cmp(EDDY_RT_COMPARE_EQ, RTT_I(c, I1, "2", 1, 0),
              RTT_I(c, I1, "2x1", 1, 0)),
          I1, "2x2", 1, 0, 0, 1);
  CHECK_I(cmp(EDDY_RT_COMPARE_LT, RTT_F(c, BF16, "1", 1), RTT_F(c, BF16, "1", 2)),
          I1, "1", 1);
  eddy_rt_tensor_t t = RTT_I(c, I1, "2x1", 1, 0), f = RTT_I(c, I1, "2", 1, 0);
  eddy_rt_tensor_t out;
  RTT_OK(eddy_rt_logical(c, EDDY_RT_LOGICAL_AND, &t, &f, &out));
  RTT_EXPECT_I(&out, I1, "2x2", 1, 0, 0, 0);
  eddy_rt_tensor_release(&out);
  RTT_OK(eddy_rt_logical(c, EDDY_RT_LOGICAL_OR, &t, &f, &out));
  RTT_EXPECT_I(&out, I1, "2x2", 1, 1, 1, 0);
  eddy_rt_tensor_release(&out);
  RTT_OK(eddy_rt_logical_not(c, &f, &out));
  RTT_EXPECT_I(&out, I1, "2", 0, 1);
  eddy_rt_tensor_release(&out);
  eddy_rt_tensor_t x = RTT_F(c, F32, "2", 1, 2), y = RTT_F(c, F32, "", -1);
  RTT_ERR(eddy_rt_logical(c, EDDY_RT_LOGICAL_AND, &t, &x, &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "core.and", "operand 1", "f32",
          "expected i1");
  RTT_ERR(eddy_rt_logical_not(c, &x, &out), EDDY_RT_ERR_INVALID_ARGUMENT,
          "core.not");
  RTT_ERR(eddy_rt_compare(c, EDDY_RT_COMPARE_EQ, &t, &x, &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "core.eq", "i1 and f32");
  // select: the three operands broadcast together.
  RTT_OK(eddy_rt_select(c, &t, &x, &y, &out));
  RTT_EXPECT_F(&out, F32, "2x2", 1, 2, -1, -1);
  eddy_rt_tensor_release(&out);
  RTT_ERR(eddy_rt_select(c, &x, &x, &y, &out), EDDY_RT_ERR_INVALID_ARGUMENT,
          "core.select", "condition", "expected i1");
  eddy_rt_tensor_t yi = RTT_I(c, I32, "", 0);
  RTT_ERR(eddy_rt_select(c, &t, &x, &yi, &out), EDDY_RT_ERR_INVALID_ARGUMENT,
          "core.select", "f32 and i32");
  eddy_rt_tensor_t x3 = RTT_F(c, F32, "3", 1, 2, 3);
  RTT_ERR(eddy_rt_select(c, &t, &x3, &x, &out), EDDY_RT_ERR_INVALID_ARGUMENT,
          "core.select", "cannot broadcast shapes [2, 1], [3] and [2]");
  eddy_rt_tensor_t ci = RTT_I(c, I1, "3", 0, 1, 0), a8 = RTT_I(c, I8, "3", 1, 2, 3),
                   b8 = RTT_I(c, I8, "3", -1, -2, -3);
  RTT_OK(eddy_rt_select(c, &ci, &a8, &b8, &out));
  RTT_EXPECT_I(&out, I8, "3", -1, 2, -3);
  eddy_rt_tensor_release(&out);
  eddy_rt_tensor_t *all[] = {&t, &f, &x, &y, &yi, &x3, &ci, &a8, &b8};
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
    eddy_rt_tensor_release(all[i]);
}

static void test_cast(void **state) {
  (void)state;
  eddy_rt_ctx_t *c = g_ctx;
  // Float to int: truncate, saturate, NaN -> 0.
  CHECK_I(cast(RTT_F(c, F32, "6", 1.9, -1.9, NAN, 3e9, -3e9, INFINITY), I32),
          I32, "6", 1, -1, 0, INT32_MAX, INT32_MIN, INT32_MAX);
  CHECK_I(cast(RTT_F(c, F64, "3", 200, -200, 127.9), I8), I8, "3", 127, -128,
          127);
  CHECK_I(cast(RTT_F(c, F64, "2", 1e19, -1e19), I64), I64, "2", INT64_MAX,
          INT64_MIN);
  // Int to int wraps.
  CHECK_I(cast(RTT_I(c, I32, "3", 300, -129, 255), I8), I8, "3", 44, 127, -1);
  CHECK_I(cast(RTT_I(c, I64, "1", INT64_C(0x100000005)), I32), I32, "1", 5);
  CHECK_I(cast(RTT_I(c, I8, "1", -1), I64), I64, "1", -1);
  // To i1: nonzero (NaN included) is true.
  CHECK_I(cast(RTT_I(c, I64, "3", 0, 5, -1), I1), I1, "3", 0, 1, 1);
  CHECK_I(cast(RTT_F(c, F32, "4", 0, -0.0, NAN, 0.5), I1), I1, "4", 0, 0, 1, 1);
  CHECK_F(cast(RTT_I(c, I1, "2", 1, 0), F32), F32, "2", 1, 0);
  // Float to float rounds to nearest even.
  CHECK_F(cast(RTT_F(c, F32, "3", 65520, 1 + 0x1p-11, 65504), F16), F16, "3",
          INFINITY, 1, 65504);
  CHECK_F(cast(RTT_F(c, F64, "1", 0.1), F32), F32, "1", (double)0.1f);
  CHECK_F(cast(RTT_I(c, I64, "2", 16777217, -16777219), F32), F32, "2",
          16777216, -16777220);
  CHECK_F(cast(RTT_F(c, F16, "1", 1 + 0x1p-10), BF16), BF16, "1", 1);
  // f64 -> f16 goes through f32, as the constant folder does: here the
  // first rounding makes a tie that the second breaks to even.
  CHECK_F(cast(RTT_F(c, F64, "1", 1 + 0x1p-11 + 0x1p-40), F16), F16, "1", 1);
  CHECK_F(cast(RTT_F(c, F32, "2", NAN, -INFINITY), BF16), BF16, "2", NAN,
          -INFINITY);
  CHECK_F(cast(RTT_F(c, F32, "2", 1.5, -2), F32), F32, "2", 1.5, -2);
  CHECK_F(cast(rtt_f(c, F32, "0x2", NULL), I8), I8, "0x2", 0);
  eddy_rt_tensor_t x = RTT_F(c, F32, "1", 1), out;
  RTT_ERR(eddy_rt_cast(c, &x, 12, &out), EDDY_RT_ERR_INVALID_ARGUMENT,
          "core.cast", "not a dtype");
  eddy_rt_tensor_release(&x);
}

static void test_iota_copy(void **state) {
  (void)state;
  eddy_rt_ctx_t *c = g_ctx;
  int64_t dims[2] = {2, 3};
  eddy_rt_tensor_t out;
  RTT_OK(eddy_rt_iota(c, I32, 2, dims, 1, &out));
  RTT_EXPECT_I(&out, I32, "2x3", 0, 1, 2, 0, 1, 2);
  eddy_rt_tensor_release(&out);
  RTT_OK(eddy_rt_iota(c, F16, 2, dims, -2, &out));
  RTT_EXPECT_F(&out, F16, "2x3", 0, 0, 0, 1, 1, 1);
  eddy_rt_tensor_release(&out);
  int64_t d300 = 300;
  RTT_OK(eddy_rt_iota(c, I8, 1, &d300, 0, &out));
  assert_int_equal(eddy_rt_tensor_get_i64(&out, 299), 43); // 299 wraps
  eddy_rt_tensor_release(&out);
  int64_t dz[2] = {0, 4};
  RTT_OK(eddy_rt_iota(c, F32, 2, dz, 1, &out));
  rtt_shape(&out, F32, "0x4");
  eddy_rt_tensor_release(&out);
  RTT_ERR(eddy_rt_iota(c, F32, 2, dims, 2, &out), EDDY_RT_ERR_INVALID_ARGUMENT,
          "core.iota", "dimension 2 is out of range for rank 2");
  RTT_ERR(eddy_rt_iota(c, F32, 0, NULL, 0, &out), EDDY_RT_ERR_INVALID_ARGUMENT,
          "core.iota", "rank");
  int64_t data[3] = {7, 8, 9};
  int64_t d3 = 3;
  eddy_rt_tensor_t w;
  RTT_OK(eddy_rt_tensor_wrap(I64, 1, &d3, data, &w));
  RTT_OK(eddy_rt_copy(c, &w, &out));
  data[0] = 0; // the copy owns its data
  RTT_EXPECT_I(&out, I64, "3", 7, 8, 9);
  assert_non_null(out.owner);
  eddy_rt_tensor_release(&out);
}

static void test_names(void **state) {
  (void)state;
  eddy_rt_unary_op_t u;
  assert_true(eddy_rt_unary_op_lookup("core.rsqrt", &u));
  assert_int_equal(u, EDDY_RT_UNARY_RSQRT);
  assert_false(eddy_rt_unary_op_lookup("core.add", NULL));
  eddy_rt_binary_op_t b;
  assert_true(eddy_rt_binary_op_lookup("core.minimum", &b));
  assert_int_equal(b, EDDY_RT_BINARY_MINIMUM);
  eddy_rt_compare_op_t k;
  assert_true(eddy_rt_compare_op_lookup("core.ge", &k));
  assert_int_equal(k, EDDY_RT_COMPARE_GE);
  eddy_rt_logical_op_t l;
  assert_true(eddy_rt_logical_op_lookup("core.or", &l));
  assert_int_equal(l, EDDY_RT_LOGICAL_OR);
  eddy_rt_reduce_op_t r;
  assert_true(eddy_rt_reduce_op_lookup("core.reduce_mean", &r));
  assert_int_equal(r, EDDY_RT_REDUCE_MEAN);
  assert_string_equal(eddy_rt_unary_op_name(EDDY_RT_UNARY_SIGN), "core.sign");
  assert_string_equal(eddy_rt_binary_op_name(EDDY_RT_BINARY_POW), "core.pow");
  assert_string_equal(eddy_rt_compare_op_name(EDDY_RT_COMPARE_NE), "core.ne");
  assert_string_equal(eddy_rt_logical_op_name(EDDY_RT_LOGICAL_AND), "core.and");
  assert_string_equal(eddy_rt_reduce_op_name(EDDY_RT_REDUCE_PROD),
                      "core.reduce_prod");
  assert_string_equal(eddy_rt_unary_op_name((eddy_rt_unary_op_t)99), "?");
}

/// Big enough to be split into many parallel tasks.
static void test_threads_same_result(void **state) {
  (void)state;
  eddy_rt_ctx_t *c1 = rtt_ctx(1), *c4 = rtt_ctx(4);
  int64_t dims[2] = {300, 1001};
  eddy_rt_tensor_t a1, a4, b1, b4, o1, o4;
  RTT_OK(eddy_rt_tensor_create(c1, F32, 2, dims, "t", &a1));
  RTT_OK(eddy_rt_tensor_create(c4, F32, 2, dims, "t", &a4));
  for (int64_t i = 0; i < 300 * 1001; i++) {
    double v = sin((double)i) * 100.0;
    eddy_rt_tensor_set_f64(&a1, i, v);
    eddy_rt_tensor_set_f64(&a4, i, v);
  }
  int64_t bd[2] = {300, 1};
  RTT_OK(eddy_rt_tensor_create(c1, F32, 2, bd, "t", &b1));
  RTT_OK(eddy_rt_tensor_create(c4, F32, 2, bd, "t", &b4));
  for (int64_t i = 0; i < 300; i++) {
    eddy_rt_tensor_set_f64(&b1, i, i * 0.5);
    eddy_rt_tensor_set_f64(&b4, i, i * 0.5);
  }
  RTT_OK(eddy_rt_binary(c1, EDDY_RT_BINARY_POW, &a1, &b1, &o1));
  RTT_OK(eddy_rt_binary(c4, EDDY_RT_BINARY_POW, &a4, &b4, &o4));
  assert_true(rtt_same(&o1, &o4));
  eddy_rt_tensor_release(&o1);
  eddy_rt_tensor_release(&o4);
  // A transposed operand through the copy engine.
  eddy_rt_tensor_t t1 = a1, t4 = a4;
  int64_t perm[2] = {1, 0};
  RTT_OK(eddy_rt_transpose(c1, &t1, perm, 2, &o1));
  RTT_OK(eddy_rt_transpose(c4, &t4, perm, 2, &o4));
  assert_true(rtt_same(&o1, &o4));
  assert_true(eddy_rt_tensor_get_f64(&o1, 1 * 300 + 2) ==
              eddy_rt_tensor_get_f64(&a1, 2 * 1001 + 1));
  eddy_rt_tensor_t *all[] = {&a1, &a4, &b1, &b4, &o1, &o4};
  for (size_t i = 0; i < 6; i++)
    eddy_rt_tensor_release(all[i]);
  eddy_rt_ctx_destroy(c1);
  eddy_rt_ctx_destroy(c4);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_unary_float),
      cmocka_unit_test(test_unary_int),
      cmocka_unit_test(test_binary_broadcast),
      cmocka_unit_test(test_binary_int_edges),
      cmocka_unit_test(test_binary_float_edges),
      cmocka_unit_test(test_compare_logical_select),
      cmocka_unit_test(test_cast),
      cmocka_unit_test(test_iota_copy),
      cmocka_unit_test(test_names),
      cmocka_unit_test(test_threads_same_result),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}

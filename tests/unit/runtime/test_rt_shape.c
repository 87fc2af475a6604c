/// Data movement kernels: reshape, transpose, broadcast_to, concat, split,
/// slice, gather, pad, shape, dim; where.
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
#define I1 EDDY_RT_I1
#define I8 EDDY_RT_I8
#define I32 EDDY_RT_I32
#define I64 EDDY_RT_I64
#define V(...) (int64_t[]){__VA_ARGS__}
#define N(...) (int32_t)(sizeof((int64_t[]){__VA_ARGS__}) / 8)
#define VN(...) V(__VA_ARGS__), N(__VA_ARGS__)

static void test_reshape(void **state) {
  (void)state;
  eddy_rt_ctx_t *c = g_ctx;
  eddy_rt_tensor_t x = RTT_I(c, I32, "2x3", 1, 2, 3, 4, 5, 6), out;
  RTT_OK(eddy_rt_reshape(c, &x, VN(3, -1), &out));
  RTT_EXPECT_I(&out, I32, "3x2", 1, 2, 3, 4, 5, 6);
  assert_ptr_equal(out.owner, x.owner); // contiguous and owned: shared
  assert_ptr_equal(out.data, x.data);
  eddy_rt_tensor_release(&out);
  RTT_OK(eddy_rt_reshape(c, &x, VN(6), &out));
  RTT_EXPECT_I(&out, I32, "6", 1, 2, 3, 4, 5, 6);
  eddy_rt_tensor_release(&out);
  // A transposed view is copied in logical order.
  eddy_rt_tensor_t t = x;
  t.dims[0] = 3, t.dims[1] = 2, t.strides[0] = 1, t.strides[1] = 3;
  RTT_OK(eddy_rt_reshape(c, &t, VN(-1), &out));
  RTT_EXPECT_I(&out, I32, "6", 1, 4, 2, 5, 3, 6);
  assert_ptr_not_equal(out.owner, x.owner);
  eddy_rt_tensor_release(&out);
  // A borrowed tensor is copied, so the result owns its data.
  int32_t raw[2] = {7, 8};
  eddy_rt_tensor_t w;
  RTT_OK(eddy_rt_tensor_wrap(I32, 1, V(2), raw, &w));
  RTT_OK(eddy_rt_reshape(c, &w, VN(1, 2), &out));
  assert_non_null(out.owner);
  RTT_EXPECT_I(&out, I32, "1x2", 7, 8);
  eddy_rt_tensor_release(&out);
  RTT_ERR(eddy_rt_reshape(c, &x, VN(-1, -1), &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "core.reshape", "-1 only once");
  RTT_ERR(eddy_rt_reshape(c, &x, VN(4, -1), &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "cannot reshape [2, 3] into [4, -1]");
  RTT_ERR(eddy_rt_reshape(c, &x, VN(5), &out), EDDY_RT_ERR_INVALID_ARGUMENT,
          "element counts differ");
  RTT_ERR(eddy_rt_reshape(c, &x, VN(-2, 3), &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "entry 0 is -2");
  eddy_rt_tensor_release(&x);
  // Zero-size and scalar reshapes.
  x = rtt_f(c, F32, "0x3", NULL);
  RTT_OK(eddy_rt_reshape(c, &x, VN(-1, 3), &out));
  rtt_shape(&out, F32, "0x3");
  eddy_rt_tensor_release(&out);
  RTT_ERR(eddy_rt_reshape(c, &x, VN(-1, 0), &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "-1 cannot be inferred");
  eddy_rt_tensor_release(&x);
  x = RTT_F(c, F32, "", 4.5);
  RTT_OK(eddy_rt_reshape(c, &x, VN(1, 1), &out));
  RTT_EXPECT_F(&out, F32, "1x1", 4.5);
  eddy_rt_tensor_t back;
  RTT_OK(eddy_rt_reshape(c, &out, NULL, 0, &back));
  RTT_EXPECT_F(&back, F32, "", 4.5);
  eddy_rt_tensor_release(&back);
  eddy_rt_tensor_release(&out);
  eddy_rt_tensor_release(&x);
}

static void test_transpose_broadcast(void **state) {
  (void)state;
  eddy_rt_ctx_t *c = g_ctx;
  eddy_rt_tensor_t x = RTT_I(c, I8, "2x3", 1, 2, 3, 4, 5, 6), out;
  RTT_OK(eddy_rt_transpose(c, &x, VN(1, 0), &out));
  RTT_EXPECT_I(&out, I8, "3x2", 1, 4, 2, 5, 3, 6);
  eddy_rt_tensor_release(&out);
  RTT_ERR(eddy_rt_transpose(c, &x, VN(0, 0), &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "core.transpose", "not a permutation");
  RTT_ERR(eddy_rt_transpose(c, &x, VN(0, 1, 2), &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "has 3 entries", "rank 2");
  eddy_rt_tensor_release(&x);
  // [2,3,2] -> perm [2,0,1] -> [2,2,3]: out[a][b][c] = x[b][c][a].
  x = RTT_I(c, I64, "2x3x2", 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11);
  RTT_OK(eddy_rt_transpose(c, &x, VN(2, 0, 1), &out));
  RTT_EXPECT_I(&out, I64, "2x2x3", 0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11);
  eddy_rt_tensor_release(&out);
  eddy_rt_tensor_release(&x);

  x = RTT_F(c, F32, "3", 1, 2, 3);
  RTT_OK(eddy_rt_broadcast_to(c, &x, VN(2, 3), &out));
  RTT_EXPECT_F(&out, F32, "2x3", 1, 2, 3, 1, 2, 3);
  eddy_rt_tensor_release(&out);
  RTT_OK(eddy_rt_broadcast_to(c, &x, VN(0, 3), &out));
  rtt_shape(&out, F32, "0x3");
  eddy_rt_tensor_release(&out);
  RTT_ERR(eddy_rt_broadcast_to(c, &x, VN(2, 2), &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "core.broadcast_to",
          "shape [3] to shape [2, 2]");
  RTT_ERR(eddy_rt_broadcast_to(c, &x, NULL, 0, &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "to shape []");
  eddy_rt_tensor_release(&x);
  x = RTT_I(c, I1, "2x1", 1, 0);
  RTT_OK(eddy_rt_broadcast_to(c, &x, VN(2, 2, 3), &out));
  RTT_EXPECT_I(&out, I1, "2x2x3", 1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0);
  eddy_rt_tensor_release(&out);
  eddy_rt_tensor_release(&x);
  x = RTT_F(c, F32, "", 7);
  RTT_OK(eddy_rt_broadcast_to(c, &x, VN(2, 2), &out));
  RTT_EXPECT_F(&out, F32, "2x2", 7, 7, 7, 7);
  eddy_rt_tensor_release(&out);
  eddy_rt_tensor_release(&x);
}

static void test_concat_split(void **state) {
  (void)state;
  eddy_rt_ctx_t *c = g_ctx;
  eddy_rt_tensor_t a = RTT_I(c, I32, "2x2", 1, 2, 3, 4),
                   b = RTT_I(c, I32, "2x1", 5, 6),
                   e = rtt_i(c, I32, "2x0", NULL),
                   r = RTT_I(c, I32, "1x2", 7, 8), out;
  const eddy_rt_tensor_t *ab[] = {&a, &b, &e};
  RTT_OK(eddy_rt_concat(c, ab, 3, 1, &out));
  RTT_EXPECT_I(&out, I32, "2x3", 1, 2, 5, 3, 4, 6);
  eddy_rt_tensor_release(&out);
  const eddy_rt_tensor_t *ar[] = {&a, &r};
  RTT_OK(eddy_rt_concat(c, ar, 2, -2, &out));
  RTT_EXPECT_I(&out, I32, "3x2", 1, 2, 3, 4, 7, 8);
  eddy_rt_tensor_release(&out);
  RTT_OK(eddy_rt_concat(c, ar, 1, 0, &out));
  RTT_EXPECT_I(&out, I32, "2x2", 1, 2, 3, 4);
  eddy_rt_tensor_release(&out);
  RTT_ERR(eddy_rt_concat(c, ab, 2, 0, &out), EDDY_RT_ERR_INVALID_ARGUMENT,
          "core.concat", "differ at dimension 1");
  RTT_ERR(eddy_rt_concat(c, ab, 0, 0, &out), EDDY_RT_ERR_INVALID_ARGUMENT,
          "at least 1");
  RTT_ERR(eddy_rt_concat(c, ab, 2, 2, &out), EDDY_RT_ERR_INVALID_ARGUMENT,
          "axis 2 is out of range");
  eddy_rt_tensor_t f = rtt_f(c, F32, "2x2", NULL), v = rtt_i(c, I32, "2", NULL);
  const eddy_rt_tensor_t *af[] = {&a, &f}, *av[] = {&a, &v}, *vv[] = {&v, &v};
  RTT_ERR(eddy_rt_concat(c, af, 2, 0, &out), EDDY_RT_ERR_INVALID_ARGUMENT,
          "operand 1 is f32[2, 2]", "i32[2, 2]");
  RTT_ERR(eddy_rt_concat(c, av, 2, 0, &out), EDDY_RT_ERR_INVALID_ARGUMENT,
          "same dtype and rank");
  RTT_OK(eddy_rt_concat(c, vv, 2, 0, &out));
  rtt_shape(&out, I32, "4");
  eddy_rt_tensor_release(&out);
  eddy_rt_tensor_t s = RTT_I(c, I32, "", 1);
  const eddy_rt_tensor_t *ss[] = {&s};
  RTT_ERR(eddy_rt_concat(c, ss, 1, 0, &out), EDDY_RT_ERR_INVALID_ARGUMENT,
          "scalar");

  eddy_rt_tensor_t x = RTT_I(c, I64, "2x4", 1, 2, 3, 4, 5, 6, 7, 8);
  eddy_rt_tensor_t parts[4];
  RTT_OK(eddy_rt_split(c, &x, -1, 2, parts));
  RTT_EXPECT_I(&parts[0], I64, "2x2", 1, 2, 5, 6);
  RTT_EXPECT_I(&parts[1], I64, "2x2", 3, 4, 7, 8);
  eddy_rt_tensor_release(&parts[0]);
  eddy_rt_tensor_release(&parts[1]);
  RTT_OK(eddy_rt_split(c, &x, 0, 2, parts));
  RTT_EXPECT_I(&parts[1], I64, "1x4", 5, 6, 7, 8);
  eddy_rt_tensor_release(&parts[0]);
  eddy_rt_tensor_release(&parts[1]);
  RTT_OK(eddy_rt_split(c, &x, 1, 4, parts));
  RTT_EXPECT_I(&parts[3], I64, "2x1", 4, 8);
  for (int i = 0; i < 4; i++)
    eddy_rt_tensor_release(&parts[i]);
  RTT_ERR(eddy_rt_split(c, &x, 1, 3, parts), EDDY_RT_ERR_INVALID_ARGUMENT,
          "core.split", "size 4", "not divisible by num_splits 3");
  RTT_ERR(eddy_rt_split(c, &x, 1, 0, parts), EDDY_RT_ERR_INVALID_ARGUMENT,
          "num_splits is 0");
  eddy_rt_tensor_t z = rtt_f(c, F32, "0x2", NULL);
  RTT_OK(eddy_rt_split(c, &z, 0, 3, parts));
  rtt_shape(&parts[2], F32, "0x2");
  for (int i = 0; i < 3; i++)
    eddy_rt_tensor_release(&parts[i]);
  eddy_rt_tensor_t *all[] = {&a, &b, &e, &r, &f, &v, &s, &x, &z};
  for (size_t i = 0; i < 9; i++)
    eddy_rt_tensor_release(all[i]);
}

static void test_slice(void **state) {
  (void)state;
  eddy_rt_ctx_t *c = g_ctx;
  eddy_rt_tensor_t x = RTT_I(c, I32, "5", 0, 1, 2, 3, 4), out;
  RTT_OK(eddy_rt_slice(c, &x, V(1), V(4), NULL, 1, &out));
  RTT_EXPECT_I(&out, I32, "3", 1, 2, 3);
  eddy_rt_tensor_release(&out);
  RTT_OK(eddy_rt_slice(c, &x, V(0), V(5), V(2), 1, &out));
  RTT_EXPECT_I(&out, I32, "3", 0, 2, 4);
  eddy_rt_tensor_release(&out);
  RTT_OK(eddy_rt_slice(c, &x, V(1), V(5), V(3), 1, &out));
  RTT_EXPECT_I(&out, I32, "2", 1, 4);
  eddy_rt_tensor_release(&out);
  RTT_OK(eddy_rt_slice(c, &x, V(2), V(2), NULL, 1, &out));
  rtt_shape(&out, I32, "0");
  eddy_rt_tensor_release(&out);
  RTT_OK(eddy_rt_slice(c, &x, V(4), V(5), V(INT64_C(1) << 62), 1, &out));
  RTT_EXPECT_I(&out, I32, "1", 4);
  eddy_rt_tensor_release(&out);
  RTT_ERR(eddy_rt_slice(c, &x, V(1), V(6), NULL, 1, &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "core.slice", "[1, 6)",
          "need 0 <= start <= limit <= size");
  RTT_ERR(eddy_rt_slice(c, &x, V(3), V(2), NULL, 1, &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "[3, 2)");
  RTT_ERR(eddy_rt_slice(c, &x, V(-1), V(2), NULL, 1, &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "[-1, 2)");
  RTT_ERR(eddy_rt_slice(c, &x, V(0), V(2), V(0), 1, &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "stride 0");
  RTT_ERR(eddy_rt_slice(c, &x, V(0, 0), V(1, 1), NULL, 2, &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "rank 1");
  eddy_rt_tensor_release(&x);
  // 2-D with strides: rows 0 and 2, columns 1 and 3.
  x = RTT_I(c, I32, "3x4", 0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23);
  RTT_OK(eddy_rt_slice(c, &x, V(0, 1), V(3, 4), V(2, 2), 2, &out));
  RTT_EXPECT_I(&out, I32, "2x2", 1, 3, 21, 23);
  eddy_rt_tensor_release(&out);
  eddy_rt_tensor_release(&x);
}

static void test_gather(void **state) {
  (void)state;
  eddy_rt_ctx_t *c = g_ctx;
  eddy_rt_tensor_t p = RTT_F(c, F32, "3x2", 1, 2, 3, 4, 5, 6), out;
  eddy_rt_tensor_t i32 = RTT_I(c, I32, "2", 2, 0);
  RTT_OK(eddy_rt_gather(c, &p, &i32, 0, &out));
  RTT_EXPECT_F(&out, F32, "2x2", 5, 6, 1, 2);
  eddy_rt_tensor_release(&out);
  eddy_rt_tensor_t i64 = RTT_I(c, I64, "2x2", 1, 0, 0, 1);
  RTT_OK(eddy_rt_gather(c, &p, &i64, -1, &out));
  RTT_EXPECT_F(&out, F32, "3x2x2", 2, 1, 1, 2, 4, 3, 3, 4, 6, 5, 5, 6);
  eddy_rt_tensor_release(&out);
  eddy_rt_tensor_t i8 = RTT_I(c, I8, "", 1);
  RTT_OK(eddy_rt_gather(c, &p, &i8, 0, &out));
  RTT_EXPECT_F(&out, F32, "2", 3, 4);
  eddy_rt_tensor_release(&out);
  eddy_rt_tensor_t none = rtt_i(c, I32, "0", NULL);
  RTT_OK(eddy_rt_gather(c, &p, &none, 1, &out));
  rtt_shape(&out, F32, "3x0");
  eddy_rt_tensor_release(&out);
  // A strided params operand.
  eddy_rt_tensor_t pt = p;
  pt.dims[0] = 2, pt.dims[1] = 3, pt.strides[0] = 1, pt.strides[1] = 2;
  RTT_OK(eddy_rt_gather(c, &pt, &i32, 1, &out));
  RTT_EXPECT_F(&out, F32, "2x2", 5, 1, 6, 2);
  eddy_rt_tensor_release(&out);
  eddy_rt_tensor_t bad = RTT_I(c, I32, "3", 0, 3, 1);
  RTT_ERR(eddy_rt_gather(c, &p, &bad, 0, &out), EDDY_RT_ERR_INVALID_ARGUMENT,
          "core.gather", "index 3", "element 1", "axis 0",
          "0 <= index < 3");
  eddy_rt_tensor_t neg = RTT_I(c, I64, "1", -1);
  RTT_ERR(eddy_rt_gather(c, &p, &neg, 1, &out), EDDY_RT_ERR_INVALID_ARGUMENT,
          "index -1");
  eddy_rt_tensor_t fi = RTT_F(c, F32, "1", 0);
  RTT_ERR(eddy_rt_gather(c, &p, &fi, 0, &out), EDDY_RT_ERR_INVALID_ARGUMENT,
          "indices", "f32");
  RTT_ERR(eddy_rt_gather(c, &p, &i32, 2, &out), EDDY_RT_ERR_INVALID_ARGUMENT,
          "axis 2");
  eddy_rt_tensor_t sc = RTT_F(c, F32, "", 1);
  RTT_ERR(eddy_rt_gather(c, &sc, &i32, 0, &out), EDDY_RT_ERR_INVALID_ARGUMENT,
          "scalar");
  assert_null(out.data);
  eddy_rt_tensor_t *all[] = {&p, &i32, &i64, &i8, &none, &bad, &neg, &fi, &sc};
  for (size_t i = 0; i < 9; i++)
    eddy_rt_tensor_release(all[i]);
}

static void test_pad_shape_dim(void **state) {
  (void)state;
  eddy_rt_ctx_t *c = g_ctx;
  eddy_rt_tensor_t x = RTT_I(c, I32, "2x2", 1, 2, 3, 4), v = RTT_I(c, I32, "", 9);
  eddy_rt_tensor_t out;
  RTT_OK(eddy_rt_pad(c, &x, &v, V(1, 0), V(0, 1), 2, &out));
  RTT_EXPECT_I(&out, I32, "3x3", 9, 9, 9, 1, 2, 9, 3, 4, 9);
  eddy_rt_tensor_release(&out);
  RTT_OK(eddy_rt_pad(c, &x, &v, V(0, 0), V(0, 0), 2, &out));
  RTT_EXPECT_I(&out, I32, "2x2", 1, 2, 3, 4);
  eddy_rt_tensor_release(&out);
  eddy_rt_tensor_t e = rtt_i(c, I32, "0x1", NULL);
  RTT_OK(eddy_rt_pad(c, &e, &v, V(1, 1), V(0, 0), 2, &out));
  RTT_EXPECT_I(&out, I32, "1x2", 9, 9);
  eddy_rt_tensor_release(&out);
  RTT_ERR(eddy_rt_pad(c, &x, &v, V(-1, 0), V(0, 0), 2, &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "core.pad", "non-negative");
  RTT_ERR(eddy_rt_pad(c, &x, &x, V(0, 0), V(0, 0), 2, &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "padding value is i32[2, 2]");
  eddy_rt_tensor_t vf = RTT_F(c, F32, "", 0);
  RTT_ERR(eddy_rt_pad(c, &x, &vf, V(0, 0), V(0, 0), 2, &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "f32[]");
  RTT_ERR(eddy_rt_pad(c, &x, &v, V(0), V(0), 1, &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "rank 2");
  RTT_ERR(eddy_rt_pad(c, &x, &v, V(0, INT64_MAX), V(0, 1), 2, &out),
          EDDY_RT_ERR_RESOURCE, "overflows");

  eddy_rt_tensor_t z = rtt_f(c, F32, "2x0x3", NULL);
  RTT_OK(eddy_rt_shape(c, &z, &out));
  RTT_EXPECT_I(&out, I64, "3", 2, 0, 3);
  eddy_rt_tensor_release(&out);
  RTT_OK(eddy_rt_shape(c, &v, &out));
  rtt_shape(&out, I64, "0");
  eddy_rt_tensor_release(&out);
  RTT_OK(eddy_rt_dim(c, &z, -1, &out));
  RTT_EXPECT_I(&out, I64, "", 3);
  eddy_rt_tensor_release(&out);
  RTT_OK(eddy_rt_dim(c, &z, 1, &out));
  RTT_EXPECT_I(&out, I64, "", 0);
  eddy_rt_tensor_release(&out);
  RTT_ERR(eddy_rt_dim(c, &z, 3, &out), EDDY_RT_ERR_INVALID_ARGUMENT,
          "core.dim", "index 3 is out of range for rank 3");
  RTT_ERR(eddy_rt_dim(c, &v, 0, &out), EDDY_RT_ERR_INVALID_ARGUMENT,
          "rank 0");
  eddy_rt_tensor_t *all[] = {&x, &v, &e, &vf, &z};
  for (size_t i = 0; i < 5; i++)
    eddy_rt_tensor_release(all[i]);
}

static void test_where(void **state) {
  (void)state;
  eddy_rt_ctx_t *c = g_ctx;
  // NaN is nonzero, -0.0 is not; rows in row-major order.
  eddy_rt_tensor_t x = RTT_F(c, F32, "2x3", 0.0, NAN, -0.0, 2.5, 0.0, -1.0);
  eddy_rt_tensor_t n3 = RTT_I(c, I64, "", 3), n0 = RTT_I(c, I64, "", 0);
  eddy_rt_tensor_t out;
  RTT_OK(eddy_rt_where(c, &x, &n3, &out));
  RTT_EXPECT_I(&out, I64, "3x2", 0, 1, 1, 0, 1, 2);
  eddy_rt_tensor_release(&out);
  eddy_rt_tensor_t b = RTT_I(c, I1, "2x2x1", 0, 0, 0, 0);
  RTT_OK(eddy_rt_where(c, &b, &n0, &out));
  rtt_shape(&out, I64, "0x3");
  eddy_rt_tensor_release(&out);
  eddy_rt_tensor_t s = RTT_I(c, I32, "", 7), n1 = RTT_I(c, I32, "", 1);
  RTT_OK(eddy_rt_where(c, &s, &n1, &out));
  rtt_shape(&out, I64, "1x0");
  eddy_rt_tensor_release(&out);
  RTT_ERR(eddy_rt_where(c, &x, &n0, &out), EDDY_RT_ERR_INVALID_ARGUMENT,
          "core.where", "the count (operand 1) is 0, but operand 0 has 3");
  RTT_ERR(eddy_rt_where(c, &x, &x, &out), EDDY_RT_ERR_INVALID_ARGUMENT,
          "must be an integer scalar");
  eddy_rt_tensor_t *all[] = {&x, &n3, &n0, &b, &s, &n1};
  for (size_t i = 0; i < 6; i++)
    eddy_rt_tensor_release(all[i]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reshape),
      cmocka_unit_test(test_transpose_broadcast),
      cmocka_unit_test(test_concat_split),
      cmocka_unit_test(test_slice),
      cmocka_unit_test(test_gather),
      cmocka_unit_test(test_pad_shape_dim),
      cmocka_unit_test(test_where),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}

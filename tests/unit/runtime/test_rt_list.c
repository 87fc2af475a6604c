/// TensorList storage and the tl kernels: element-shape rules, stacking,
/// unset items of reserved lists, out-of-range errors, copy-on-write, growth
/// and the memory limit.
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

#define F32 EDDY_RT_F32
#define I1 EDDY_RT_I1
#define I8 EDDY_RT_I8
#define I32 EDDY_RT_I32
#define I64 EDDY_RT_I64

static eddy_rt_elem_shape_t shape_of(int32_t rank, const int64_t *dims) {
  eddy_rt_elem_shape_t s;
  assert_true(eddy_rt_elem_shape_make(rank, dims, &s));
  return s;
}

static eddy_rt_tensor_t idx(int64_t i) {
  return rtt_i(g_ctx, I64, "", (int64_t[]){i});
}

/// push x (released) onto l (consumed); returns the new list.
static eddy_rt_list_t *push(eddy_rt_list_t *l, eddy_rt_tensor_t x) {
  eddy_rt_list_t *out;
  RTT_OK(eddy_rt_list_push_back(g_ctx, l, &x, &out));
  eddy_rt_tensor_release(&x);
  return out;
}

static int64_t length(const eddy_rt_list_t *l) {
  eddy_rt_tensor_t n;
  RTT_OK(eddy_rt_list_length(g_ctx, l, &n));
  int64_t v = eddy_rt_tensor_get_i64(&n, 0);
  rtt_shape(&n, I64, "");
  eddy_rt_tensor_release(&n);
  assert_int_equal(v, eddy_rt_list_size(l));
  return v;
}

static void test_push_get_stack(void **state) {
  (void)state;
  eddy_rt_ctx_t *c = g_ctx;
  eddy_rt_elem_shape_t es = shape_of(2, (int64_t[]){-1, 2});
  eddy_rt_list_t *l;
  RTT_OK(eddy_rt_list_empty(c, F32, &es, -1, &l));
  assert_int_equal(eddy_rt_list_dtype(l), F32);
  assert_int_equal(eddy_rt_list_elem_shape(l)->dims[0], -1);
  assert_int_equal(eddy_rt_list_max_elements(l), -1);
  assert_int_equal(length(l), 0);
  l = push(l, RTT_F(c, F32, "1x2", 1, 2));
  l = push(l, RTT_F(c, F32, "1x2", 3, 4));
  assert_int_equal(length(l), 2);
  eddy_rt_tensor_t i1 = idx(1), out;
  RTT_OK(eddy_rt_list_get_item(c, l, &i1, &out));
  RTT_EXPECT_F(&out, F32, "1x2", 3, 4);
  eddy_rt_tensor_release(&out);
  RTT_OK(eddy_rt_list_stack(c, l, &out));
  RTT_EXPECT_F(&out, F32, "2x1x2", 1, 2, 3, 4);
  eddy_rt_tensor_release(&out);
  // Items may differ in their unknown dim, but then they do not stack.
  l = push(l, RTT_F(c, F32, "2x2", 5, 6, 7, 8));
  RTT_ERR(eddy_rt_list_stack(c, l, &out), EDDY_RT_ERR_INVALID_ARGUMENT,
          "tl.stack", "item 0 has shape [1, 2]", "item 2 has shape [2, 2]");
  // An item that does not match the element shape, or the dtype; push
  // consumes the list even on error, so keep a reference.
  eddy_rt_list_retain(l);
  eddy_rt_tensor_t bad = RTT_F(c, F32, "1x3", 0, 0, 0);
  eddy_rt_list_t *l2;
  RTT_ERR(eddy_rt_list_push_back(c, l, &bad, &l2), EDDY_RT_ERR_INVALID_ARGUMENT,
          "tl.push_back", "item is f32[1, 3]", "the list holds f32[?, 2]");
  assert_null(l2);
  eddy_rt_tensor_release(&bad);
  eddy_rt_list_retain(l);
  bad = rtt_i(c, I32, "1x2", NULL);
  RTT_ERR(eddy_rt_list_push_back(c, l, &bad, &l2), EDDY_RT_ERR_INVALID_ARGUMENT,
          "i32[1, 2]");
  eddy_rt_tensor_release(&bad);
  assert_int_equal(length(l), 3);
  assert_true(eddy_rt_list_is_unique(l));
  // Out of range reads are errors, not crashes.
  eddy_rt_tensor_t i3 = idx(3), im = idx(-1);
  RTT_ERR(eddy_rt_list_get_item(c, l, &i3, &out), EDDY_RT_ERR_INVALID_ARGUMENT,
          "tl.get_item", "index 3 is out of range for a list of length 3");
  RTT_ERR(eddy_rt_list_get_item(c, l, &im, &out), EDDY_RT_ERR_INVALID_ARGUMENT,
          "index -1");
  eddy_rt_tensor_t fidx = RTT_F(c, F32, "", 0), vidx = RTT_I(c, I32, "1", 0);
  RTT_ERR(eddy_rt_list_get_item(c, l, &fidx, &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "index is f32[]", "integer scalar");
  RTT_ERR(eddy_rt_list_get_item(c, l, &vidx, &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "i32[1]");
  eddy_rt_tensor_t i8 = RTT_I(c, I8, "", 2);
  RTT_OK(eddy_rt_list_get_item(c, l, &i8, &out));
  RTT_EXPECT_F(&out, F32, "2x2", 5, 6, 7, 8);
  eddy_rt_tensor_release(&out);
  eddy_rt_tensor_t *all[] = {&i1, &i3, &im, &fidx, &vidx, &i8};
  for (size_t i = 0; i < 6; i++)
    eddy_rt_tensor_release(all[i]);
  eddy_rt_list_release(l);
}

static void test_pop_set(void **state) {
  (void)state;
  eddy_rt_ctx_t *c = g_ctx;
  eddy_rt_elem_shape_t es = shape_of(1, (int64_t[]){2});
  eddy_rt_list_t *l, *l2;
  RTT_OK(eddy_rt_list_empty(c, I32, &es, -1, &l));
  l = push(l, RTT_I(c, I32, "2", 1, 2));
  l = push(l, RTT_I(c, I32, "2", 3, 4));
  eddy_rt_tensor_t x, i0 = idx(0), i2 = idx(2);
  RTT_OK(eddy_rt_list_pop_back(c, l, &l2, &x));
  l = l2;
  RTT_EXPECT_I(&x, I32, "2", 3, 4);
  eddy_rt_tensor_release(&x);
  assert_int_equal(length(l), 1);
  eddy_rt_tensor_t y = RTT_I(c, I32, "2", 9, 8);
  RTT_OK(eddy_rt_list_set_item(c, l, &i0, &y, &l2));
  l = l2;
  eddy_rt_list_retain(l);
  RTT_ERR(eddy_rt_list_set_item(c, l, &i2, &y, &l2),
          EDDY_RT_ERR_INVALID_ARGUMENT, "tl.set_item",
          "index 2 is out of range for a list of length 1");
  eddy_rt_list_retain(l);
  eddy_rt_tensor_t z = RTT_I(c, I32, "3", 0, 0, 0);
  RTT_ERR(eddy_rt_list_set_item(c, l, &i0, &z, &l2),
          EDDY_RT_ERR_INVALID_ARGUMENT, "tl.set_item", "i32[3]", "i32[2]");
  RTT_OK(eddy_rt_list_stack(c, l, &x));
  RTT_EXPECT_I(&x, I32, "1x2", 9, 8);
  eddy_rt_tensor_release(&x);
  RTT_OK(eddy_rt_list_pop_back(c, l, &l2, &x));
  l = l2;
  eddy_rt_tensor_release(&x);
  RTT_ERR(eddy_rt_list_pop_back(c, l, &l2, &x), EDDY_RT_ERR_INVALID_ARGUMENT,
          "tl.pop_back", "empty list");
  assert_null(l2);
  assert_null(x.data);
  // The empty list with a fully known element shape stacks to [0, 2].
  RTT_OK(eddy_rt_list_empty(c, I32, &es, -1, &l));
  RTT_OK(eddy_rt_list_stack(c, l, &x));
  rtt_shape(&x, I32, "0x2");
  eddy_rt_tensor_release(&x);
  eddy_rt_list_release(l);
  // Unknown dims or rank: stacking the empty list is an error.
  eddy_rt_elem_shape_t part = shape_of(1, (int64_t[]){-1});
  RTT_OK(eddy_rt_list_empty(c, F32, &part, -1, &l));
  RTT_ERR(eddy_rt_list_stack(c, l, &x), EDDY_RT_ERR_INVALID_ARGUMENT,
          "tl.stack", "element shape [?] is not fully known");
  eddy_rt_list_release(l);
  RTT_OK(eddy_rt_list_empty(c, F32, NULL, -1, &l));
  RTT_ERR(eddy_rt_list_stack(c, l, &x), EDDY_RT_ERR_INVALID_ARGUMENT,
          "<unknown rank>");
  // Unknown rank accepts anything, but stacking needs one shape.
  l = push(l, RTT_F(c, F32, "", 1));
  l = push(l, RTT_F(c, F32, "", 2));
  RTT_OK(eddy_rt_list_stack(c, l, &x));
  RTT_EXPECT_F(&x, F32, "2", 1, 2);
  eddy_rt_tensor_release(&x);
  eddy_rt_list_release(l);
  eddy_rt_tensor_release(&y);
  eddy_rt_tensor_release(&z);
  eddy_rt_tensor_release(&i0);
  eddy_rt_tensor_release(&i2);
}

static void test_reserve(void **state) {
  (void)state;
  eddy_rt_ctx_t *c = g_ctx;
  eddy_rt_elem_shape_t es = shape_of(1, (int64_t[]){2});
  eddy_rt_tensor_t n3 = RTT_I(c, I32, "", 3), i1 = idx(1), x;
  eddy_rt_list_t *l, *l2;
  RTT_OK(eddy_rt_list_reserve(c, F32, &es, &n3, &l));
  assert_int_equal(length(l), 3);
  // Unset items read as zeros of the (fully known) element shape.
  RTT_OK(eddy_rt_list_get_item(c, l, &i1, &x));
  RTT_EXPECT_F(&x, F32, "2", 0, 0);
  eddy_rt_tensor_release(&x);
  eddy_rt_tensor_t v = RTT_F(c, F32, "2", 5, 6);
  RTT_OK(eddy_rt_list_set_item(c, l, &i1, &v, &l2));
  l = l2;
  RTT_OK(eddy_rt_list_stack(c, l, &x));
  RTT_EXPECT_F(&x, F32, "3x2", 0, 0, 5, 6, 0, 0);
  eddy_rt_tensor_release(&x);
  RTT_OK(eddy_rt_list_pop_back(c, l, &l2, &x));
  l = l2;
  RTT_EXPECT_F(&x, F32, "2", 0, 0);
  eddy_rt_tensor_release(&x);
  eddy_rt_list_release(l);
  // Unknown element dims: reading an unset item is an error; stacking uses
  // the shape of the set items.
  eddy_rt_elem_shape_t part = shape_of(1, (int64_t[]){-1});
  RTT_OK(eddy_rt_list_reserve(c, F32, &part, &n3, &l));
  RTT_ERR(eddy_rt_list_get_item(c, l, &i1, &x), EDDY_RT_ERR_INVALID_ARGUMENT,
          "tl.get_item", "item 1 was never set", "[?]");
  RTT_ERR(eddy_rt_list_stack(c, l, &x), EDDY_RT_ERR_INVALID_ARGUMENT,
          "tl.stack", "no set items");
  RTT_OK(eddy_rt_list_set_item(c, l, &i1, &v, &l2));
  l = l2;
  RTT_OK(eddy_rt_list_stack(c, l, &x));
  RTT_EXPECT_F(&x, F32, "3x2", 0, 0, 5, 6, 0, 0);
  eddy_rt_tensor_release(&x);
  eddy_rt_list_release(l);
  eddy_rt_tensor_t neg = RTT_I(c, I64, "", -2);
  RTT_ERR(eddy_rt_list_reserve(c, F32, &es, &neg, &l),
          EDDY_RT_ERR_INVALID_ARGUMENT, "tl.reserve", "-2");
  eddy_rt_tensor_t garbage;
  memset(&garbage, 0, sizeof(garbage));
  RTT_ERR(eddy_rt_list_reserve(c, F32, &es, &garbage, &l),
          EDDY_RT_ERR_INVALID_ARGUMENT, "tl.reserve", "ABI mismatch");
  eddy_rt_tensor_t zero = RTT_I(c, I64, "", 0);
  RTT_OK(eddy_rt_list_reserve(c, F32, &es, &zero, &l));
  RTT_OK(eddy_rt_list_stack(c, l, &x));
  rtt_shape(&x, F32, "0x2");
  eddy_rt_tensor_release(&x);
  eddy_rt_list_release(l);
  eddy_rt_tensor_t *all[] = {&n3, &i1, &v, &neg, &zero};
  for (size_t i = 0; i < 5; i++)
    eddy_rt_tensor_release(all[i]);
}

/// Compiled code's tl.stack (eddy_rt_entry_list_stack) writes the items
/// straight into the result's memory, unset ones as zeros, after checking
/// the stacked dims against the compiled type.
static void test_entry_stack_into_result(void **state) {
  (void)state;
  eddy_rt_ctx_t *c = g_ctx;
  eddy_rt_elem_shape_t es = shape_of(1, (int64_t[]){2});
  eddy_rt_tensor_t n3 = RTT_I(c, I32, "", 3), i2 = idx(2);
  eddy_rt_tensor_t v = RTT_F(c, F32, "2", 7, 8);
  eddy_rt_list_t *l, *l2;
  RTT_OK(eddy_rt_list_reserve(c, F32, &es, &n3, &l));
  RTT_OK(eddy_rt_list_set_item(c, l, &i2, &v, &l2));
  l = l2;
  float out[6] = {-1, -1, -1, -1, -1, -1};
  int32_t code = 0;
  char err[256] = "";
  eddy_rt_entry_list_stack(c, l, out, F32, 2, (int64_t[]){3, 2}, &code, err,
                           sizeof err);
  assert_int_equal(code, 0);
  const float want[6] = {0, 0, 0, 0, 7, 8};
  for (int i = 0; i < 6; i++)
    assert_true(out[i] == want[i]);
  // Dims other than the compiled ones: an error, and out is not written.
  float small[4] = {-1, -1, -1, -1};
  eddy_rt_entry_list_stack(c, l, small, F32, 2, (int64_t[]){2, 2}, &code, err,
                           sizeof err);
  assert_int_not_equal(code, 0);
  assert_non_null(strstr(err, "tl.stack: expected"));
  for (int i = 0; i < 4; i++)
    assert_true(small[i] == -1);
  eddy_rt_list_release(l);
  eddy_rt_tensor_t *all[] = {&n3, &i2, &v};
  for (size_t i = 0; i < 3; i++)
    eddy_rt_tensor_release(all[i]);
}

static void test_copy_on_write(void **state) {
  (void)state;
  eddy_rt_ctx_t *c = g_ctx;
  eddy_rt_list_t *l0, *l1, *l2, *l3;
  RTT_OK(eddy_rt_list_empty(c, I64, NULL, -1, &l0));
  // A dead old value: the push happens in place.
  l1 = push(l0, RTT_I(c, I64, "", 1));
  assert_ptr_equal(l1, l0);
  // A live old value: the push copies, the old value is unchanged.
  eddy_rt_list_retain(l1);
  assert_false(eddy_rt_list_is_unique(l1));
  l2 = push(l1, RTT_I(c, I64, "", 2));
  assert_ptr_not_equal(l2, l1);
  assert_true(eddy_rt_list_is_unique(l1));
  assert_int_equal(length(l1), 1);
  assert_int_equal(length(l2), 2);
  // The same for set_item and pop_back.
  eddy_rt_list_retain(l2);
  eddy_rt_tensor_t i0 = idx(0), v = RTT_I(c, I64, "", 7), x;
  RTT_OK(eddy_rt_list_set_item(c, l2, &i0, &v, &l3));
  assert_ptr_not_equal(l3, l2);
  RTT_OK(eddy_rt_list_get_item(c, l2, &i0, &x));
  RTT_EXPECT_I(&x, I64, "", 1);
  eddy_rt_tensor_release(&x);
  RTT_OK(eddy_rt_list_get_item(c, l3, &i0, &x));
  RTT_EXPECT_I(&x, I64, "", 7);
  eddy_rt_tensor_release(&x);
  eddy_rt_list_retain(l3);
  eddy_rt_list_t *l4;
  RTT_OK(eddy_rt_list_pop_back(c, l3, &l4, &x));
  RTT_EXPECT_I(&x, I64, "", 2);
  eddy_rt_tensor_release(&x);
  assert_int_equal(length(l3), 2);
  assert_int_equal(length(l4), 1);
  // Items are shared, not copied: get_item hands out the item's buffer.
  eddy_rt_tensor_t a, b;
  RTT_OK(eddy_rt_list_get_item(c, l2, &i0, &a));
  RTT_OK(eddy_rt_list_get_item(c, l3, &i0, &b));
  assert_ptr_not_equal(a.data, b.data);
  eddy_rt_tensor_release(&b);
  RTT_OK(eddy_rt_list_get_item(c, l1, &i0, &b));
  assert_ptr_equal(a.data, b.data);
  eddy_rt_tensor_release(&a);
  eddy_rt_tensor_release(&b);
  eddy_rt_list_release(l1);
  eddy_rt_list_release(l2);
  eddy_rt_list_release(l3);
  eddy_rt_list_release(l4);
  eddy_rt_list_release(NULL);
  eddy_rt_tensor_release(&i0);
  eddy_rt_tensor_release(&v);
}

static void test_items_own_their_data(void **state) {
  (void)state;
  eddy_rt_ctx_t *c = g_ctx;
  eddy_rt_list_t *l;
  RTT_OK(eddy_rt_list_empty(c, I32, NULL, -1, &l));
  int32_t raw[4] = {1, 2, 3, 4};
  int64_t d[2] = {2, 2};
  eddy_rt_tensor_t w, tv;
  RTT_OK(eddy_rt_tensor_wrap(I32, 2, d, raw, &w));
  tv = w; // a transposed view
  tv.strides[0] = 1, tv.strides[1] = 2;
  eddy_rt_list_t *l2;
  RTT_OK(eddy_rt_list_push_back(c, l, &w, &l2));
  RTT_OK(eddy_rt_list_push_back(c, l2, &tv, &l));
  raw[0] = 100; // the borrowed data was copied
  eddy_rt_tensor_t x;
  RTT_OK(eddy_rt_list_stack(c, l, &x));
  RTT_EXPECT_I(&x, I32, "2x2x2", 1, 2, 3, 4, 1, 3, 2, 4);
  eddy_rt_tensor_release(&x);
  eddy_rt_list_release(l);
}

static void test_from_tensor(void **state) {
  (void)state;
  eddy_rt_ctx_t *c = g_ctx;
  eddy_rt_tensor_t x = RTT_F(c, F32, "3x2", 1, 2, 3, 4, 5, 6), y, i1 = idx(1);
  eddy_rt_list_t *l;
  RTT_OK(eddy_rt_list_from_tensor(c, &x, NULL, &l));
  assert_int_equal(length(l), 3);
  assert_int_equal(eddy_rt_list_elem_shape(l)->rank, 1);
  RTT_OK(eddy_rt_list_get_item(c, l, &i1, &y));
  RTT_EXPECT_F(&y, F32, "2", 3, 4);
  assert_ptr_equal(y.data, (float *)x.data + 2); // shares x's buffer
  eddy_rt_tensor_release(&y);
  RTT_OK(eddy_rt_list_stack(c, l, &y));
  assert_true(rtt_same(&x, &y));
  eddy_rt_tensor_release(&y);
  eddy_rt_list_release(l);
  eddy_rt_elem_shape_t any = shape_of(1, (int64_t[]){-1});
  eddy_rt_elem_shape_t three = shape_of(1, (int64_t[]){3});
  RTT_OK(eddy_rt_list_from_tensor(c, &x, &any, &l));
  assert_int_equal(eddy_rt_list_elem_shape(l)->dims[0], -1);
  eddy_rt_list_release(l);
  RTT_ERR(eddy_rt_list_from_tensor(c, &x, &three, &l),
          EDDY_RT_ERR_INVALID_ARGUMENT, "tl.from_tensor", "items of shape [2]",
          "element shape is [3]");
  eddy_rt_tensor_t s = RTT_F(c, F32, "", 1);
  RTT_ERR(eddy_rt_list_from_tensor(c, &s, NULL, &l),
          EDDY_RT_ERR_INVALID_ARGUMENT, "scalar");
  eddy_rt_tensor_t e = rtt_i(c, I1, "0x3", NULL);
  RTT_OK(eddy_rt_list_from_tensor(c, &e, NULL, &l));
  assert_int_equal(length(l), 0);
  RTT_OK(eddy_rt_list_stack(c, l, &y));
  rtt_shape(&y, I1, "0x3");
  eddy_rt_tensor_release(&y);
  eddy_rt_list_release(l);
  eddy_rt_tensor_t *all[] = {&x, &i1, &s, &e};
  for (size_t i = 0; i < 4; i++)
    eddy_rt_tensor_release(all[i]);
}

static void test_growth_and_limits(void **state) {
  (void)state;
  eddy_rt_ctx_t *c = g_ctx;
  eddy_rt_list_t *l;
  eddy_rt_elem_shape_t scalar = shape_of(0, NULL);
  RTT_OK(eddy_rt_list_empty(c, I32, &scalar, -1, &l));
  eddy_rt_list_t *first = l;
  for (int64_t i = 0; i < 5000; i++)
    l = push(l, RTT_I(c, I32, "", i * 3));
  assert_ptr_equal(l, first); // every push was in place
  eddy_rt_tensor_t x;
  RTT_OK(eddy_rt_list_stack(c, l, &x));
  rtt_shape(&x, I32, "5000");
  for (int64_t i = 0; i < 5000; i += 499)
    assert_int_equal(eddy_rt_tensor_get_i64(&x, i), i * 3);
  eddy_rt_tensor_release(&x);
  eddy_rt_list_release(l);
  // max_elements bounds the length.
  RTT_OK(eddy_rt_list_empty(c, I32, &scalar, 2, &l));
  assert_int_equal(eddy_rt_list_max_elements(l), 2);
  l = push(l, RTT_I(c, I32, "", 1));
  l = push(l, RTT_I(c, I32, "", 2));
  eddy_rt_tensor_t one = RTT_I(c, I32, "", 3);
  eddy_rt_list_t *l2;
  RTT_ERR(eddy_rt_list_push_back(c, l, &one, &l2), EDDY_RT_ERR_INVALID_ARGUMENT,
          "tl.push_back", "full", "max_elements 2");
  eddy_rt_tensor_release(&one);
  // The memory limit applies to list storage and names the op.
  eddy_rt_ctx_options_t o = eddy_rt_ctx_options_default();
  o.memory_limit = 4096;
  eddy_rt_ctx_t *lc;
  RTT_OK(eddy_rt_ctx_create(&o, &lc));
  RTT_OK(eddy_rt_list_empty(lc, I32, &scalar, -1, &l));
  eddy_rt_status_t st = NULL;
  eddy_rt_tensor_t v = RTT_I(c, I32, "", 5);
  for (int i = 0; i < 10000 && !st; i++) {
    st = eddy_rt_list_push_back(lc, l, &v, &l2);
    l = l2;
  }
  RTT_ERR(st, EDDY_RT_ERR_RESOURCE, "tl.push_back", "memory limit");
  assert_null(l);
  eddy_rt_tensor_t n = RTT_I(c, I64, "", INT64_C(1) << 60);
  RTT_ERR(eddy_rt_list_reserve(lc, I32, &scalar, &n, &l), EDDY_RT_ERR_RESOURCE,
          "tl.reserve");
  assert_int_equal(eddy_rt_ctx_bytes_in_use(lc), 0);
  eddy_rt_ctx_destroy(lc);
  eddy_rt_tensor_release(&v);
  eddy_rt_tensor_release(&n);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_push_get_stack),
      cmocka_unit_test(test_pop_set),
      cmocka_unit_test(test_reserve),
      cmocka_unit_test(test_entry_stack_into_result),
      cmocka_unit_test(test_copy_on_write),
      cmocka_unit_test(test_items_own_their_data),
      cmocka_unit_test(test_from_tensor),
      cmocka_unit_test(test_growth_and_limits),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}

/// Lists of lists: push, pop, get, set and length of list items, reference
/// counting shared between lists (copy-on-write keeps every value
/// unchanged), unset items of a reserved nested list, and the errors:
/// stacking a list of lists, a tensor into a list of lists (and back), an
/// item list of the wrong depth, dtype or element shape.
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
#define I64 EDDY_RT_I64

static eddy_rt_elem_shape_t vec_shape(void) {
  eddy_rt_elem_shape_t s;
  assert_true(eddy_rt_elem_shape_make(1, (int64_t[]){-1}, &s));
  return s;
}

static eddy_rt_tensor_t idx(int64_t i) {
  return rtt_i(g_ctx, I64, "", (int64_t[]){i});
}

/// An inner list of f32[?] holding n items [k], [k, k+1], ... (ragged).
static eddy_rt_list_t *inner(int n, double k) {
  eddy_rt_elem_shape_t es = vec_shape();
  eddy_rt_list_t *l;
  RTT_OK(eddy_rt_list_empty(g_ctx, F32, &es, -1, &l));
  for (int i = 0; i < n; i++) {
    double v[4] = {k, k + 1, k + 2, k + 3};
    char shape[16];
    snprintf(shape, sizeof shape, "%d", i + 1);
    eddy_rt_tensor_t x = rtt_f(g_ctx, F32, shape, v);
    eddy_rt_list_t *l2;
    RTT_OK(eddy_rt_list_push_back(g_ctx, l, &x, &l2));
    eddy_rt_tensor_release(&x);
    l = l2;
  }
  return l;
}

static eddy_rt_list_t *outer(int32_t depth) {
  eddy_rt_elem_shape_t es = vec_shape();
  eddy_rt_list_t *l;
  RTT_OK(eddy_rt_list_empty_nested(g_ctx, depth, F32, &es, -1, &l));
  assert_int_equal(eddy_rt_list_depth(l), depth);
  assert_int_equal(eddy_rt_list_dtype(l), F32);
  return l;
}

static void test_push_pop_get(void **state) {
  (void)state;
  eddy_rt_ctx_t *c = g_ctx;
  eddy_rt_list_t *o = outer(1);
  eddy_rt_list_t *a = inner(2, 1.0), *b = inner(3, 10.0);
  RTT_OK(eddy_rt_list_push_back_list(c, o, a, &o));
  RTT_OK(eddy_rt_list_push_back_list(c, o, b, &o));
  // The outer list holds its own references: ours can go.
  assert_false(eddy_rt_list_is_unique(a));
  eddy_rt_list_release(a);
  eddy_rt_list_release(b);
  eddy_rt_tensor_t n;
  RTT_OK(eddy_rt_list_length(c, o, &n));
  assert_int_equal(eddy_rt_tensor_get_i64(&n, 0), 2);
  eddy_rt_tensor_release(&n);
  // get_item shares the item: the same list, one more reference.
  eddy_rt_tensor_t i0 = idx(0), i1 = idx(1), i2 = idx(2);
  eddy_rt_list_t *g = NULL;
  RTT_OK(eddy_rt_list_get_item_list(c, o, &i1, &g));
  assert_int_equal(eddy_rt_list_size(g), 3);
  assert_int_equal(eddy_rt_list_depth(g), 0);
  eddy_rt_tensor_t x;
  RTT_OK(eddy_rt_list_get_item(c, g, &i2, &x));
  RTT_EXPECT_F(&x, F32, "3", 10, 11, 12);
  eddy_rt_tensor_release(&x);
  // Extending the item copies it (the outer list still holds it).
  eddy_rt_list_t *g2 = NULL;
  RTT_OK(eddy_rt_list_pop_back(c, g, &g2, &x));
  eddy_rt_tensor_release(&x);
  assert_int_equal(eddy_rt_list_size(g2), 2);
  eddy_rt_list_release(g2);
  // pop_back of a shared outer list copies it and leaves the original.
  eddy_rt_list_retain(o);
  eddy_rt_list_t *o2 = NULL, *p = NULL;
  RTT_OK(eddy_rt_list_pop_back_list(c, o, &o2, &p));
  assert_ptr_not_equal(o2, o);
  assert_int_equal(eddy_rt_list_size(o2), 1);
  assert_int_equal(eddy_rt_list_size(o), 2);
  assert_int_equal(eddy_rt_list_size(p), 3);
  eddy_rt_list_release(p);
  // pop_back of a unique list is in place.
  eddy_rt_list_t *o3 = NULL;
  RTT_OK(eddy_rt_list_pop_back_list(c, o2, &o3, &p));
  assert_int_equal(eddy_rt_list_size(o3), 0);
  RTT_OK(eddy_rt_list_get_item(c, p, &i1, &x));
  RTT_EXPECT_F(&x, F32, "2", 1, 2);
  eddy_rt_tensor_release(&x);
  eddy_rt_list_release(p);
  // Popping an empty list of lists is an error; the list is consumed.
  RTT_ERR(eddy_rt_list_pop_back_list(c, o3, &o2, &p),
          EDDY_RT_ERR_INVALID_ARGUMENT, "tl.pop_back", "empty list");
  assert_null(p);
  RTT_ERR(eddy_rt_list_get_item_list(c, o, &i2, &g),
          EDDY_RT_ERR_INVALID_ARGUMENT, "tl.get_item", "out of range");
  eddy_rt_list_release(o);
  eddy_rt_tensor_release(&i0);
  eddy_rt_tensor_release(&i1);
  eddy_rt_tensor_release(&i2);
}

static void test_pushing_a_list_onto_itself(void **state) {
  (void)state;
  eddy_rt_ctx_t *c = g_ctx;
  // Depth 1 list pushed into a depth-2 list that is then pushed into
  // itself is a depth error; a list never ends up containing itself.
  eddy_rt_list_t *o = outer(1);
  eddy_rt_list_retain(o);
  eddy_rt_list_t *o2 = NULL;
  RTT_ERR(eddy_rt_list_push_back_list(c, o, o, &o2),
          EDDY_RT_ERR_INVALID_ARGUMENT, "tl.push_back", "depth 2",
          "lists of depth 1");
  eddy_rt_list_release(o);
}

static void test_reserve_set(void **state) {
  (void)state;
  eddy_rt_ctx_t *c = g_ctx;
  eddy_rt_elem_shape_t es = vec_shape();
  eddy_rt_tensor_t n3 = idx(3), i0 = idx(0), i2 = idx(2);
  eddy_rt_list_t *o = NULL;
  RTT_OK(eddy_rt_list_reserve_nested(c, 1, F32, &es, &n3, &o));
  assert_int_equal(eddy_rt_list_size(o), 3);
  // An unset item reads as a new empty list of the inner type.
  eddy_rt_list_t *g = NULL;
  RTT_OK(eddy_rt_list_get_item_list(c, o, &i0, &g));
  assert_int_equal(eddy_rt_list_size(g), 0);
  assert_int_equal(eddy_rt_list_depth(g), 0);
  assert_int_equal(eddy_rt_list_dtype(g), F32);
  eddy_rt_list_release(g);
  // set_item replaces (and releases) the old item; a shared list copies.
  eddy_rt_list_t *a = inner(1, 5.0), *b = inner(2, 7.0);
  RTT_OK(eddy_rt_list_set_item_list(c, o, &i2, a, &o));
  eddy_rt_list_retain(o);
  eddy_rt_list_t *o2 = NULL;
  RTT_OK(eddy_rt_list_set_item_list(c, o, &i2, b, &o2));
  assert_ptr_not_equal(o, o2);
  RTT_OK(eddy_rt_list_get_item_list(c, o, &i2, &g));
  assert_ptr_equal(g, a);
  eddy_rt_list_release(g);
  RTT_OK(eddy_rt_list_get_item_list(c, o2, &i2, &g));
  assert_ptr_equal(g, b);
  eddy_rt_list_release(g);
  eddy_rt_list_release(a);
  eddy_rt_list_release(b);
  eddy_rt_list_release(o);
  // Depth 2: a list of lists of lists.
  eddy_rt_list_t *d2 = outer(2);
  RTT_OK(eddy_rt_list_push_back_list(c, d2, o2, &d2));
  eddy_rt_list_release(o2);
  RTT_OK(eddy_rt_list_get_item_list(c, d2, &i0, &g));
  assert_int_equal(eddy_rt_list_depth(g), 1);
  assert_int_equal(eddy_rt_list_size(g), 3);
  eddy_rt_list_release(g);
  eddy_rt_list_release(d2);
  eddy_rt_tensor_release(&n3);
  eddy_rt_tensor_release(&i0);
  eddy_rt_tensor_release(&i2);
}

static void test_errors(void **state) {
  (void)state;
  eddy_rt_ctx_t *c = g_ctx;
  eddy_rt_tensor_t i0 = idx(0), x = rtt_f(c, F32, "2", (double[]){1, 2}),
                   t = eddy_rt_tensor_empty();
  eddy_rt_list_t *o = outer(1), *a = inner(1, 0.0), *l2 = NULL, *g = NULL;
  RTT_OK(eddy_rt_list_push_back_list(c, o, a, &o));
  // Stacking a list of lists names the op.
  RTT_ERR(eddy_rt_list_stack(c, o, &t), EDDY_RT_ERR_INVALID_ARGUMENT,
          "tl.stack", "cannot stack a list of lists");
  // Tensor forms on a list of lists (each consumes the list it is given).
  eddy_rt_list_retain(o);
  RTT_ERR(eddy_rt_list_push_back(c, o, &x, &l2), EDDY_RT_ERR_INVALID_ARGUMENT,
          "tl.push_back", "the list holds lists");
  RTT_ERR(eddy_rt_list_get_item(c, o, &i0, &t), EDDY_RT_ERR_INVALID_ARGUMENT,
          "tl.get_item", "the list holds lists");
  eddy_rt_list_retain(o);
  RTT_ERR(eddy_rt_list_pop_back(c, o, &l2, &t), EDDY_RT_ERR_INVALID_ARGUMENT,
          "tl.pop_back", "the list holds lists");
  eddy_rt_list_retain(o);
  RTT_ERR(eddy_rt_list_set_item(c, o, &i0, &x, &l2),
          EDDY_RT_ERR_INVALID_ARGUMENT, "tl.set_item", "the list holds lists");
  // List forms on a list of tensors.
  eddy_rt_list_retain(a);
  RTT_ERR(eddy_rt_list_push_back_list(c, a, a, &l2),
          EDDY_RT_ERR_INVALID_ARGUMENT, "tl.push_back",
          "the list holds f32 tensors, not lists");
  RTT_ERR(eddy_rt_list_get_item_list(c, a, &i0, &g),
          EDDY_RT_ERR_INVALID_ARGUMENT, "tl.get_item", "not lists");
  // Item lists of another dtype or element shape.
  eddy_rt_list_t *wrong = NULL;
  RTT_OK(eddy_rt_list_empty(c, I64, NULL, -1, &wrong));
  eddy_rt_list_retain(o);
  RTT_ERR(eddy_rt_list_push_back_list(c, o, wrong, &l2),
          EDDY_RT_ERR_INVALID_ARGUMENT, "tl.push_back",
          "item is a list of depth 1 of i64");
  eddy_rt_list_release(wrong);
  eddy_rt_elem_shape_t mat;
  assert_true(eddy_rt_elem_shape_make(2, (int64_t[]){2, 2}, &mat));
  RTT_OK(eddy_rt_list_empty(c, F32, &mat, -1, &wrong));
  eddy_rt_list_retain(o);
  RTT_ERR(eddy_rt_list_set_item_list(c, o, &i0, wrong, &l2),
          EDDY_RT_ERR_INVALID_ARGUMENT, "tl.set_item", "f32[2, 2]",
          "f32[?]");
  eddy_rt_list_release(wrong);
  // A depth beyond the runtime's limit.
  RTT_ERR(eddy_rt_list_empty_nested(c, EDDY_RT_MAX_LIST_DEPTH + 1, F32, NULL,
                                    -1, &wrong),
          EDDY_RT_ERR_INVALID_ARGUMENT, "tl.empty", "nesting depth");
  // max_elements holds for lists of lists too.
  eddy_rt_list_t *full = NULL;
  RTT_OK(eddy_rt_list_empty_nested(c, 1, F32, NULL, 0, &full));
  RTT_ERR(eddy_rt_list_push_back_list(c, full, a, &l2),
          EDDY_RT_ERR_INVALID_ARGUMENT, "tl.push_back", "max_elements");
  eddy_rt_list_release(a);
  eddy_rt_list_release(o);
  eddy_rt_tensor_release(&i0);
  eddy_rt_tensor_release(&x);
}

static void test_memory_limit(void **state) {
  (void)state;
  // Growth of a list of lists past the memory limit fails cleanly.
  eddy_rt_ctx_options_t opt = eddy_rt_ctx_options_default();
  opt.num_threads = 1;
  opt.memory_limit = 4096;
  eddy_rt_ctx_t *lc = NULL;
  RTT_OK(eddy_rt_ctx_create(&opt, &lc));
  eddy_rt_list_t *o = NULL, *a = NULL;
  RTT_OK(eddy_rt_list_empty_nested(lc, 1, F32, NULL, -1, &o));
  RTT_OK(eddy_rt_list_empty(lc, F32, NULL, -1, &a));
  eddy_rt_status_t st = NULL;
  for (int i = 0; i < 1000 && !st; i++) {
    eddy_rt_list_t *o2 = NULL;
    st = eddy_rt_list_push_back_list(lc, o, a, &o2);
    o = o2;
  }
  RTT_ERR(st, EDDY_RT_ERR_RESOURCE, "tl.push_back", "memory limit");
  assert_null(o);
  eddy_rt_list_release(a);
  assert_int_equal(eddy_rt_ctx_bytes_in_use(lc), 0);
  eddy_rt_ctx_destroy(lc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_push_pop_get),
      cmocka_unit_test(test_pushing_a_list_onto_itself),
      cmocka_unit_test(test_reserve_set),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_memory_limit),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}

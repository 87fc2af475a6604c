/// runtime/cuda_list_nested.c (tl.add, tl.zeros_like and lists of lists in
/// device memory) against the fake CUDA driver
/// (tests/unit/runtime/fake_cuda.c). Every sequence runs on the host
/// helpers (eddy_rt_entry_list_*) too, with the same arguments: results,
/// lengths, codes and messages must agree (tests/unit/runtime/
/// cuda_list_test.h); after each test every device block, pinned block and
/// event is freed.
#define _POSIX_C_SOURCE 200809L // setenv

#include "tests/unit/runtime/cuda_list_test.h"

/// ---- tl.add and tl.zeros_like: host and device agree -----------------------

static pair_t p_add(pair_t l, int32_t moved, pair_t other, res_t *r) {
  slots_t s = slots();
  pair_t p = {
      eddy_rt_entry_list_add(g_ctx, l.h, moved, other.h, &s.hc, s.he, ERRLEN),
      eddy_rt_entry_cuda_list_add(g_ctx, l.d, moved, other.d, &s.dc, s.de,
                                  ERRLEN)};
  *r = agree(&s, p.h, p.d, true);
  if (p.h)
    same_length(p);
  return p;
}

static pair_t p_zeros_like(pair_t l, res_t *r) {
  slots_t s = slots();
  pair_t p = {
      eddy_rt_entry_list_zeros_like(g_ctx, l.h, &s.hc, s.he, ERRLEN),
      eddy_rt_entry_cuda_list_zeros_like(g_ctx, l.d, &s.dc, s.de, ERRLEN)};
  *r = agree(&s, p.h, p.d, true);
  if (p.h)
    same_length(p);
  return p;
}

/// tl.add: items of different shapes; an item set in one list is taken,
/// one set in both is summed (through host memory on the device), one set
/// in neither stays unset; a shared operand keeps its items; a list added
/// to itself doubles; lengths and shapes that differ fail. tl.zeros_like:
/// zeros of each item's shape.
static void test_add(void **state) {
  (void)state;
  res_t r;
  const int64_t k1[] = {-1}, k2[] = {2}, k3[] = {3};
  float x[3] = {1, 2, 3}, y[3] = {10, 20, 30}, out[3];
  pair_t a = p_reserve(F32, 1, k1, 3, &r);
  a = p_set(a, 1, 0, x, F32, 1, k2, &r);
  a = p_set(a, 1, 1, x, F32, 1, k3, &r);
  pair_t b = p_reserve(F32, 1, k1, 3, &r);
  b = p_set(b, 1, 1, y, F32, 1, k3, &r);
  b = p_set(b, 1, 2, y, F32, 1, k2, &r);
  OK(r);
  pair_t c = p_add(a, 0, b, &r); // a kept: the sum copies its item table
  OK(r);
  p_get(c, 0, out, F32, 1, k2, &r);
  OK(r);
  assert_true(out[0] == 1 && out[1] == 2);
  p_get(c, 1, out, F32, 1, k3, &r);
  OK(r);
  assert_true(out[0] == 11 && out[1] == 22 && out[2] == 33);
  p_get(c, 2, out, F32, 1, k2, &r);
  OK(r);
  assert_true(out[0] == 10 && out[1] == 20);
  p_get(a, 1, out, F32, 1, k3, &r); // the operand keeps its item
  OK(r);
  assert_true(out[0] == 1 && out[1] == 2 && out[2] == 3);
  p_release(a);
  pair_t d = p_add(c, 0, c, &r); // c + c, c kept
  OK(r);
  p_get(d, 1, out, F32, 1, k3, &r);
  OK(r);
  assert_true(out[0] == 22 && out[1] == 44 && out[2] == 66);
  p_release(d);
  pair_t u = p_reserve(F32, 1, k1, 3, &r); // all unset: nothing changes
  c = p_add(c, 1, u, &r);
  OK(r);
  p_get(c, 2, out, F32, 1, k2, &r);
  OK(r);
  assert_true(out[0] == 10 && out[1] == 20);
  p_release(u);
  // zeros_like: zeros of each item's shape, unset where c's is unset.
  pair_t z = p_zeros_like(c, &r);
  OK(r);
  p_get(z, 1, out, F32, 1, k3, &r);
  OK(r);
  assert_true(out[0] == 0 && out[1] == 0 && out[2] == 0);
  p_get(z, 0, out, F32, 1, k2, &r);
  OK(r);
  assert_true(out[0] == 0 && out[1] == 0);
  z = p_add(z, 1, c, &r); // 0 + c is c
  OK(r);
  p_get(z, 1, out, F32, 1, k3, &r);
  OK(r);
  assert_true(out[0] == 11 && out[1] == 22 && out[2] == 33);
  p_release(z);
  pair_t v = p_reserve(F32, 1, k1, 2, &r);
  u = p_zeros_like(v, &r); // unset stays unset
  OK(r);
  p_release(v);
  p_get(u, 0, out, F32, 1, k2, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.get_item: item 0 was never set and the element shape [?] is "
             "not fully known, so it cannot be read as zeros");
  p_release(u);
  pair_t e = p_reserve(F32, 1, k1, 2, &r);
  e = p_add(e, 1, c, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.add: cannot add lists of lengths 2 and 3: item-wise sums "
             "need one length");
  pair_t f = p_reserve(F32, 1, k1, 3, &r);
  f = p_set(f, 1, 0, x, F32, 1, k3, &r);
  f = p_add(f, 1, c, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.add: item 0 is f32[3] in one list and f32[2] in the other: "
             "items set in both must have one shape");
  p_release(c);
  p_release(b);
}

/// ---- Lists of lists: host and device agree ---------------------------------

static pair_t pn_empty(int32_t depth, int32_t dtype, int32_t rank,
                       const int64_t *dims, int64_t max, res_t *r) {
  slots_t s = slots();
  pair_t p = {eddy_rt_entry_list_empty_nested(g_ctx, depth, dtype, rank, dims,
                                              max, &s.hc, s.he, ERRLEN),
              eddy_rt_entry_cuda_list_empty_nested(
                  g_ctx, depth, dtype, rank, dims, max, &s.dc, s.de, ERRLEN)};
  *r = agree(&s, p.h, p.d, true);
  return p;
}

static pair_t pn_reserve(int32_t depth, int32_t dtype, int32_t rank,
                         const int64_t *dims, int64_t n, res_t *r) {
  slots_t s = slots();
  pair_t p = {eddy_rt_entry_list_reserve_nested(g_ctx, depth, dtype, rank, dims,
                                                n, &s.hc, s.he, ERRLEN),
              eddy_rt_entry_cuda_list_reserve_nested(
                  g_ctx, depth, dtype, rank, dims, n, &s.dc, s.de, ERRLEN)};
  *r = agree(&s, p.h, p.d, true);
  if (p.h)
    same_length(p);
  return p;
}

static pair_t pn_push(pair_t l, int32_t moved, pair_t item, res_t *r) {
  slots_t s = slots();
  pair_t p = {eddy_rt_entry_list_push_list(g_ctx, l.h, moved, item.h, &s.hc,
                                           s.he, ERRLEN),
              eddy_rt_entry_cuda_list_push_list(g_ctx, l.d, moved, item.d,
                                                &s.dc, s.de, ERRLEN)};
  *r = agree(&s, p.h, p.d, true);
  if (p.h)
    same_length(p);
  return p;
}

static pair_t pn_pop(pair_t l, int32_t moved, pair_t *item, res_t *r) {
  slots_t s = slots();
  // Garbage in the outputs: a failure must clear them.
  item->h = item->d = (void *)&s;
  pair_t p = {eddy_rt_entry_list_pop_list(g_ctx, l.h, moved, &item->h, &s.hc,
                                          s.he, ERRLEN),
              eddy_rt_entry_cuda_list_pop_list(g_ctx, l.d, moved, &item->d,
                                               &s.dc, s.de, ERRLEN)};
  *r = agree(&s, p.h, p.d, true);
  if ((item->h == NULL) != (item->d == NULL) || (r->code != 0 && item->d))
    fail_msg("popped item: host %p, device %p", item->h, item->d);
  if (p.h)
    same_length(p);
  if (item->h)
    same_length(*item);
  return p;
}

static pair_t pn_get(pair_t l, int64_t index, res_t *r) {
  slots_t s = slots();
  pair_t p = {
      eddy_rt_entry_list_get_list(g_ctx, l.h, index, &s.hc, s.he, ERRLEN),
      eddy_rt_entry_cuda_list_get_list(g_ctx, l.d, index, &s.dc, s.de, ERRLEN)};
  *r = agree(&s, p.h, p.d, true);
  if (p.h)
    same_length(p);
  return p;
}

static pair_t pn_set(pair_t l, int32_t moved, int64_t index, pair_t item,
                     res_t *r) {
  slots_t s = slots();
  pair_t p = {eddy_rt_entry_list_set_list(g_ctx, l.h, moved, index, item.h,
                                          &s.hc, s.he, ERRLEN),
              eddy_rt_entry_cuda_list_set_list(g_ctx, l.d, moved, index, item.d,
                                               &s.dc, s.de, ERRLEN)};
  *r = agree(&s, p.h, p.d, true);
  if (p.h)
    same_length(p);
  return p;
}

/// eddy_rt_entry_list_dims on both sides: codes and messages agree, and
/// both give all zeros for a read of an item that is a list.
static res_t pn_dims(pair_t l, int32_t what, int64_t index, int32_t rank) {
  slots_t s = slots();
  int64_t hd[4], dd[4];
  memset(hd, 0x55, sizeof hd);
  memset(dd, 0x55, sizeof dd);
  eddy_rt_entry_list_dims(g_ctx, l.h, what, index, rank, hd, &s.hc, s.he,
                          ERRLEN);
  eddy_rt_entry_cuda_list_dims(g_ctx, l.d, what, index, rank, dd, &s.dc, s.de,
                               ERRLEN);
  res_t r = agree(&s, NULL, NULL, false);
  if (what == 0)
    for (int32_t i = 0; i < rank; i++) {
      assert_int_equal(hd[i], 0);
      assert_int_equal(dd[i], 0);
    }
  return r;
}

/// A list of tensors holding copies of v[0..n), each f32[2, 3].
static pair_t tensors(const float (*v)[6], int n) {
  res_t r;
  pair_t l = p_empty(F32, 2, k23, -1, 0, &r);
  for (int i = 0; i < n; i++)
    l = p_push(l, 1, v[i], F32, 2, k23, &r);
  OK(r);
  return l;
}

/// Item i of the list of tensors l (a kept reference) is v.
static void item_is(pair_t l, int64_t i, const float *v) {
  res_t r;
  float out[6];
  p_get(l, i, out, F32, 2, k23, &r);
  OK(r);
  assert_memory_equal(out, v, sizeof out);
}

static void test_nested_push_pop_get(void **state) {
  (void)state;
  res_t r;
  float v[4][6], out[6];
  for (int i = 0; i < 4; i++)
    fill(v[i], 6, (float)(10 * i));
  pair_t a = tensors(v, 2), b = tensors(v + 2, 1);
  long allocs = cuda_stat("live_allocs");
  pair_t o = pn_empty(1, F32, 2, k23, -1, &r);
  OK(r);
  o = pn_push(o, 1, a, &r);
  o = pn_push(o, 1, b, &r);
  OK(r);
  // The outer list holds the item lists by reference: no device memory.
  assert_int_equal(cuda_stat("live_allocs"), allocs);
  assert_int_equal(eddy_rt_entry_cuda_list_length(o.d), 2);
  p_release(a);
  p_release(b);
  pair_t g = pn_get(o, 0, &r);
  OK(r);
  assert_ptr_equal(g.d, a.d); // the same list, a new reference
  assert_int_equal(eddy_rt_entry_cuda_list_length(g.d), 2);
  item_is(g, 0, v[0]);
  item_is(g, 1, v[1]);
  p_release(g);
  g = pn_get(o, 1, &r);
  item_is(g, 0, v[2]);
  p_release(g);
  // Depth 2: a list of lists of lists.
  pair_t o2 = pn_empty(2, F32, 2, k23, -1, &r);
  o2 = pn_push(o2, 1, o, &r);
  OK(r);
  pair_t g1 = pn_get(o2, 0, &r);
  pair_t g0 = pn_get(g1, 1, &r);
  OK(r);
  item_is(g0, 0, v[2]);
  p_release(g0);
  p_release(g1);
  // Popping moves the last item list out; the outer list gets shorter.
  pair_t it;
  o = pn_pop(o, 1, &it, &r);
  OK(r);
  assert_int_equal(eddy_rt_entry_cuda_list_length(o.d), 1);
  it = p_pop(it, 1, out, F32, 2, k23, &r);
  OK(r);
  assert_memory_equal(out, v[2], sizeof out);
  assert_int_equal(eddy_rt_entry_cuda_list_length(it.d), 0);
  p_release(it);
  p_release(o);
  // o2 still holds the list o was before the pop.
  g1 = pn_get(o2, 0, &r);
  assert_int_equal(eddy_rt_entry_cuda_list_length(g1.d), 2);
  p_release(g1);
  // Releasing the outermost list frees the whole tree.
  p_release(o2);
  end_ok();
  begin_ok();
  assert_int_equal(cuda_stat("live_allocs"), g_allocs);
}

static void test_nested_reserve_set(void **state) {
  (void)state;
  res_t r;
  float v[3][6], st[6];
  for (int i = 0; i < 3; i++)
    fill(v[i], 6, (float)(-7 * i));
  pair_t o = pn_reserve(1, F32, 2, k23, 3, &r);
  OK(r);
  // An unset item reads as a new empty list of the element shape.
  pair_t g = pn_get(o, 1, &r);
  OK(r);
  assert_int_equal(eddy_rt_entry_cuda_list_length(g.d), 0);
  p_stack(g, st, F32, 3, (int64_t[]){0, 2, 3}, &r);
  OK(r);
  g = p_push(g, 1, v[0], F32, 2, k23, &r); // it is a list of tensors
  OK(r);
  p_release(g);
  pair_t a = tensors(v, 1), b = tensors(v + 1, 2);
  o = pn_set(o, 1, 2, a, &r);
  o = pn_set(o, 1, 0, b, &r);
  OK(r);
  g = pn_get(o, 2, &r);
  item_is(g, 0, v[0]);
  p_release(g);
  o = pn_set(o, 1, 2, b, &r); // replaces the item
  OK(r);
  p_release(a);
  g = pn_get(o, 2, &r);
  assert_int_equal(eddy_rt_entry_cuda_list_length(g.d), 2);
  item_is(g, 1, v[2]);
  p_release(g);
  pair_t it;
  o = pn_pop(o, 1, &it, &r);
  OK(r);
  assert_ptr_equal(it.d, b.d);
  p_release(it);
  o = pn_pop(o, 1, &it, &r); // an unset item
  OK(r);
  assert_int_equal(eddy_rt_entry_cuda_list_length(it.d), 0);
  p_release(it);
  p_release(b);
  assert_int_equal(eddy_rt_entry_cuda_list_length(o.d), 1);
  p_release(o);
}

static void test_nested_value_semantics(void **state) {
  (void)state;
  res_t r;
  float v[3][6];
  for (int i = 0; i < 3; i++)
    fill(v[i], 6, (float)(3 * i + 1));
  pair_t a = tensors(v, 1), b = tensors(v + 1, 1);
  pair_t o1 = pn_empty(1, F32, 2, k23, -1, &r);
  o1 = pn_push(o1, 1, a, &r);
  OK(r);
  // A push onto a list with another reference leaves the other one as it
  // was.
  pair_t o2 = pn_push(o1, 0, b, &r);
  OK(r);
  assert_ptr_not_equal(o2.d, o1.d);
  assert_int_equal(eddy_rt_entry_cuda_list_length(o1.d), 1);
  assert_int_equal(eddy_rt_entry_cuda_list_length(o2.d), 2);
  // set on the copy (retained, then moved): o2 keeps its item 0.
  p_retain(o2);
  pair_t o3 = pn_set(o2, 1, 0, b, &r);
  OK(r);
  assert_ptr_not_equal(o3.d, o2.d);
  pair_t g = pn_get(o2, 0, &r);
  assert_ptr_equal(g.d, a.d);
  p_release(g);
  g = pn_get(o3, 0, &r);
  assert_ptr_equal(g.d, b.d);
  p_release(g);
  // pop of a kept list: o1 keeps its item.
  pair_t it, o4 = pn_pop(o1, 0, &it, &r);
  OK(r);
  assert_int_equal(eddy_rt_entry_cuda_list_length(o1.d), 1);
  assert_int_equal(eddy_rt_entry_cuda_list_length(o4.d), 0);
  assert_ptr_equal(it.d, a.d);
  p_release(it);
  // A list taken out and changed does not change the list it came from.
  g = pn_get(o3, 1, &r);
  g = p_push(g, 1, v[2], F32, 2, k23, &r);
  OK(r);
  assert_int_equal(eddy_rt_entry_cuda_list_length(g.d), 2);
  pair_t g2 = pn_get(o3, 1, &r);
  assert_int_equal(eddy_rt_entry_cuda_list_length(g2.d), 1);
  item_is(g2, 0, v[1]);
  p_release(g2);
  p_release(g);
  // A unique list is changed in place.
  pair_t o5 = pn_push(o4, 1, a, &r);
  assert_ptr_equal(o5.d, o4.d);
  // A list never holds itself: its depth is not its items' depth.
  pair_t o6 = pn_push(o5, 0, o5, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.push_back: item is a list of depth 2 of f32[2, 3]; the list "
             "holds lists of depth 1 of f32[2, 3]");
  assert_null(o6.d);
  assert_int_equal(eddy_rt_entry_cuda_list_length(o5.d), 1);
  p_release(o5);
  p_release(o3);
  p_release(o2);
  p_release(o1);
  p_release(a);
  p_release(b);
  end_ok();
  begin_ok();
  assert_int_equal(cuda_stat("live_allocs"), g_allocs);
}

static void test_nested_errors(void **state) {
  (void)state;
  res_t r;
  float a[6], out[24];
  fill(a, 6, 2);
  const int64_t k3[] = {3};
  pair_t t = tensors((const float(*)[6]) & a, 1);
  pair_t o = pn_empty(1, F32, 2, k23, 1, &r);
  o = pn_push(o, 1, t, &r);
  OK(r);
  // The tensor helpers refuse a list of lists.
  pair_t bad = p_push(o, 0, a, F32, 2, k23, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.push_back: the list holds lists (of f32), not tensors");
  assert_null(bad.d);
  bad = p_pop(o, 0, out, F32, 2, k23, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.pop_back: the list holds lists (of f32), not tensors");
  bad = p_set(o, 0, 5, a, F32, 2, k23, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.set_item: the list holds lists (of f32), not tensors");
  p_get(o, 7, out, F32, 2, k23, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.get_item: the list holds lists (of f32), not tensors");
  p_stack(o, out, F32, 3, (int64_t[]){1, 2, 3}, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.stack: cannot stack a list of lists (nesting depth 2): only "
             "a list of tensors stacks into a tensor");
  r = pn_dims(o, 1, 0, 3);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.stack: cannot stack a list of lists (nesting depth 2): only "
             "a list of tensors stacks into a tensor");
  r = pn_dims(o, 0, 0, 2);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.get_item: the list holds lists (of f32), not tensors");
  // The list helpers refuse a list of tensors.
  bad = pn_push(t, 0, t, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.push_back: the list holds f32 tensors, not lists");
  pair_t it;
  bad = pn_pop(t, 0, &it, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.pop_back: the list holds f32 tensors, not lists");
  bad = pn_get(t, 0, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.get_item: the list holds f32 tensors, not lists");
  bad = pn_set(t, 0, 0, t, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.set_item: the list holds f32 tensors, not lists");
  // Items of another dtype, depth or element shape; a full list; indices.
  pair_t ti = p_empty(I32, 2, k23, -1, 0, &r);
  bad = pn_set(o, 0, 0, ti, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.set_item: item is a list of depth 1 of i32[2, 3]; the list "
             "holds lists of depth 1 of f32[2, 3]");
  pair_t t3 = p_empty(F32, 1, k3, -1, 0, &r);
  bad = pn_set(o, 0, 0, t3, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.set_item: item is a list of depth 1 of f32[3]; the list "
             "holds lists of depth 1 of f32[2, 3]");
  bad = pn_push(o, 0, t, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.push_back: the list is full: length 1 reached max_elements 1");
  bad = pn_get(o, 1, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.get_item: index 1 is out of range for a list of length 1 "
             "(expected 0 <= index < 1)");
  bad = pn_set(o, 0, -1, t, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.set_item: index -1 is out of range for a list of length 1 "
             "(expected 0 <= index < 1)");
  // An item of unknown rank is compatible with any element shape.
  pair_t tu = p_empty(F32, -1, NULL, -1, 0, &r);
  pair_t o2 = pn_set(o, 0, 0, tu, &r);
  OK(r);
  p_release(o2);
  // Kept lists survive the failed ops on them.
  assert_int_equal(eddy_rt_entry_cuda_list_length(o.d), 1);
  pair_t g = pn_get(o, 0, &r);
  OK(r);
  assert_ptr_equal(g.d, t.d);
  item_is(g, 0, a);
  p_release(g);
  // A moved list is consumed by a failure; pop of an empty list.
  o = pn_pop(o, 1, &it, &r);
  OK(r);
  p_release(it);
  o = pn_pop(o, 1, &it, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.pop_back: cannot pop from an empty list");
  assert_null(o.d);
  assert_null(it.d);
  // Creation.
  o = pn_empty(17, F32, 2, k23, -1, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.empty: list nesting depth 17 is outside 0..16");
  o = pn_empty(-1, F32, 2, k23, -1, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.empty: list nesting depth -1 is outside 0..16");
  o = pn_empty(1, 42, 2, k23, -1, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.empty: element dtype 42 is not a dtype");
  o = pn_empty(1, F32, 17, k23, -1, &r);
  expect_err(&r, -EDDY_RT_ERR_INTERNAL, "tl.empty: bad element rank 17");
  o = pn_reserve(20, F32, 2, k23, 2, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.reserve: list nesting depth 20 is outside 0..16");
  o = pn_reserve(1, F32, 2, k23, -2, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.reserve: length is -2, expected >= 0");
  o = pn_reserve(1, -1, 2, k23, 2, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.reserve: element dtype -1 is not a dtype");
  // NULL: an earlier failure, passed on silently; a moved list that comes
  // with a NULL item is consumed (the fake's counts and the leak checker
  // see to that).
  o = pn_empty(1, F32, 2, k23, -1, &r);
  OK(r);
  slots_t s = slots();
  void *item = &s;
  assert_null(eddy_rt_entry_cuda_list_push_list(g_ctx, NULL, 1, t.d, &s.dc,
                                                s.de, ERRLEN));
  assert_null(eddy_rt_entry_cuda_list_pop_list(g_ctx, NULL, 1, &item, &s.dc,
                                               s.de, ERRLEN));
  assert_null(item);
  assert_null(
      eddy_rt_entry_cuda_list_get_list(g_ctx, NULL, 0, &s.dc, s.de, ERRLEN));
  assert_null(eddy_rt_entry_cuda_list_set_list(g_ctx, NULL, 1, 0, t.d, &s.dc,
                                               s.de, ERRLEN));
  eddy_rt_entry_cuda_list_retain(o.d);
  assert_null(eddy_rt_entry_cuda_list_push_list(g_ctx, o.d, 1, NULL, &s.dc,
                                                s.de, ERRLEN));
  eddy_rt_entry_cuda_list_retain(o.d);
  assert_null(eddy_rt_entry_cuda_list_set_list(g_ctx, o.d, 1, 0, NULL, &s.dc,
                                               s.de, ERRLEN));
  assert_null(eddy_rt_entry_cuda_list_push_list(g_ctx, o.d, 0, NULL, &s.dc,
                                                s.de, ERRLEN));
  assert_int_equal(s.dc, 0);
  assert_string_equal(s.de, "");
  r = pn_dims(o, 0, -1, 2); // popping an empty list: the pop reports it
  OK(r);
  p_release(o);
  p_release(tu);
  p_release(t3);
  p_release(ti);
  p_release(t);
}

int main(void) {
  cuda_list_test_init();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_add, setup, teardown),
      cmocka_unit_test_setup_teardown(test_nested_push_pop_get, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_nested_reserve_set, setup, teardown),
      cmocka_unit_test_setup_teardown(test_nested_value_semantics, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_nested_errors, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

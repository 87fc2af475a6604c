/// runtime/cuda_list.c (TensorLists in device memory) against the fake CUDA
/// driver (tests/unit/runtime/fake_cuda.c: host memory, tagged blocks,
/// events that can be held incomplete). Every sequence runs on the host
/// helpers (eddy_rt_entry_list_*) too, with the same arguments: results,
/// lengths, codes and messages must agree (tests/unit/runtime/
/// cuda_list_test.h). Then what only the device has: items shared between
/// list copies, swap_memory lists (pinned memory, the swap stream, deferred
/// frees), driver failures, threads; and after each test every device
/// block, pinned block and event is freed. tl.add, tl.zeros_like and lists
/// of lists: test_rt_cuda_list_nested.c.
#define _POSIX_C_SOURCE 200809L // setenv

#include "tests/unit/runtime/cuda_list_test.h"

#include <pthread.h>

/// The fake driver's knobs only these tests use.
static void (*cuda_fail_alloc)(int result);
static void (*cuda_fail_alloc_host)(int result);
static void (*cuda_fail_launch)(int result);
static void (*cuda_hold_events)(int on);
static void *(*cuda_last_dtoh_stream)(void);

/// ---- Host and device side by side: the ops of lists of tensors ------------

static pair_t p_from_tensor(const void *data, int32_t dtype, int32_t rank,
                            const int64_t *dims, res_t *r) {
  slots_t s = slots();
  size_t bytes = nbytes(dtype, rank, dims);
  void *d = dput(data, bytes);
  pair_t p = {eddy_rt_entry_list_from_tensor(g_ctx, (void *)data, dtype, rank,
                                             dims, &s.hc, s.he, ERRLEN),
              eddy_rt_entry_cuda_list_from_tensor(g_ctx, d, dtype, rank, dims,
                                                  &s.dc, s.de, ERRLEN)};
  // The list holds its own copy.
  memset(g_err, 0, sizeof g_err);
  eddy_rt_entry_cuda_to_device(d, g_err, (int64_t)bytes);
  dfree(d, bytes);
  *r = agree(&s, p.h, p.d, true);
  if (p.h)
    same_length(p);
  return p;
}

static pair_t p_resize(pair_t l, int32_t moved, int64_t n, res_t *r) {
  slots_t s = slots();
  pair_t p = {eddy_rt_entry_list_resize(g_ctx, l.h, moved, n, &s.hc, s.he,
                                        ERRLEN),
              eddy_rt_entry_cuda_list_resize(g_ctx, l.d, moved, n, &s.dc, s.de,
                                             ERRLEN)};
  *r = agree(&s, p.h, p.d, true);
  if (p.h)
    same_length(p);
  return p;
}

static pair_t p_scatter(pair_t l, int32_t moved, const int64_t *idx,
                        int64_t n, const void *data, int32_t dtype,
                        int32_t rank, const int64_t *dims, res_t *r) {
  slots_t s = slots();
  size_t bytes = nbytes(dtype, rank, dims), ib = (size_t)n * sizeof(int64_t);
  void *d = dput(data, bytes), *di = dput(idx, ib);
  pair_t p = {eddy_rt_entry_list_scatter(g_ctx, l.h, moved, (void *)idx,
                                         EDDY_RT_I64, n, (void *)data, dtype,
                                         rank, dims, &s.hc, s.he, ERRLEN),
              eddy_rt_entry_cuda_list_scatter(g_ctx, l.d, moved, di,
                                              EDDY_RT_I64, n, d, dtype, rank,
                                              dims, &s.dc, s.de, ERRLEN)};
  dfree(d, bytes);
  dfree(di, ib);
  *r = agree(&s, p.h, p.d, true);
  if (p.h)
    same_length(p);
  return p;
}

static pair_t p_split(const void *data, int32_t rank, const int64_t *dims,
                      const int64_t *lens, int64_t n, res_t *r) {
  slots_t s = slots();
  size_t bytes = nbytes(F32, rank, dims), lb = (size_t)n * sizeof(int64_t);
  void *d = dput(data, bytes), *dl = dput(lens, lb);
  int64_t edims[2] = {-1, dims[1]};
  pair_t p = {eddy_rt_entry_list_split(g_ctx, (void *)data, F32, rank, dims,
                                       (void *)lens, EDDY_RT_I64, n, rank,
                                       edims, &s.hc, s.he, ERRLEN),
              eddy_rt_entry_cuda_list_split(g_ctx, d, F32, rank, dims, dl,
                                            EDDY_RT_I64, n, rank, edims, &s.dc,
                                            s.de, ERRLEN)};
  dfree(d, bytes);
  dfree(dl, lb);
  *r = agree(&s, p.h, p.d, true);
  if (p.h)
    same_length(p);
  return p;
}

/// ---- Host and device agree -------------------------------------------------

static void test_push_pop_get(void **state) {
  (void)state;
  res_t r;
  float a[6], b[6], c[6], out[6];
  fill(a, 6, 1);
  fill(b, 6, 10);
  fill(c, 6, -5);
  pair_t l = p_empty(F32, 2, k23, -1, 0, &r);
  OK(r);
  l = p_push(l, 1, a, F32, 2, k23, &r);
  OK(r);
  l = p_push(l, 1, b, F32, 2, k23, &r);
  l = p_push(l, 1, c, F32, 2, k23, &r);
  OK(r);
  assert_int_equal(eddy_rt_entry_cuda_list_length(l.d), 3);
  for (int64_t i = 0; i < 3; i++) {
    p_get(l, i, out, F32, 2, k23, &r);
    OK(r);
  }
  assert_memory_equal(out, c, sizeof c);
  l = p_pop(l, 1, out, F32, 2, k23, &r);
  OK(r);
  assert_memory_equal(out, c, sizeof c);
  float st[12];
  p_stack(l, st, F32, 3, (int64_t[]){2, 2, 3}, &r);
  OK(r);
  assert_memory_equal(st, a, sizeof a);
  assert_memory_equal(st + 6, b, sizeof b);
  l = p_pop(l, 1, out, F32, 2, k23, &r);
  l = p_pop(l, 1, out, F32, 2, k23, &r);
  OK(r);
  assert_memory_equal(out, a, sizeof a);
  assert_int_equal(eddy_rt_entry_cuda_list_length(l.d), 0);
  // Stacking an empty list of a known element shape gives [0, 2, 3].
  p_stack(l, st, F32, 3, (int64_t[]){0, 2, 3}, &r);
  OK(r);
  p_release(l);
  // Scalars and empty items.
  int32_t i1 = 7, i2 = -3, iout = 0;
  l = p_empty(I32, 0, NULL, 2, 0, &r);
  l = p_push(l, 1, &i1, I32, 0, NULL, &r);
  l = p_push(l, 1, &i2, I32, 0, NULL, &r);
  OK(r);
  l = p_pop(l, 1, &iout, I32, 0, NULL, &r);
  OK(r);
  assert_int_equal(iout, -3);
  p_release(l);
  const int64_t k0[] = {0, 4};
  l = p_empty(F32, 2, k0, -1, 0, &r);
  l = p_push(l, 1, a, F32, 2, k0, &r);
  l = p_push(l, 1, a, F32, 2, k0, &r);
  OK(r);
  p_stack(l, st, F32, 3, (int64_t[]){2, 0, 4}, &r);
  OK(r);
  l = p_pop(l, 1, out, F32, 2, k0, &r);
  OK(r);
  p_release(l);
}

static void test_value_semantics(void **state) {
  (void)state;
  res_t r;
  float a[6], b[6], c[6], out[6];
  fill(a, 6, 1);
  fill(b, 6, 2);
  fill(c, 6, 3);
  pair_t l1 = p_empty(F32, 2, k23, -1, 0, &r);
  l1 = p_push(l1, 1, a, F32, 2, k23, &r);
  l1 = p_push(l1, 1, b, F32, 2, k23, &r);
  OK(r);
  // A push onto a list with another reference copies the item table only:
  // one new block, one copy (the pushed item).
  long allocs = cuda_stat("live_allocs"), dtod = cuda_stat("dtod_copies");
  pair_t l2 = p_push(l1, 0, c, F32, 2, k23, &r);
  OK(r);
  assert_int_equal(cuda_stat("live_allocs"), allocs + 1);
  assert_int_equal(cuda_stat("dtod_copies"), dtod + 1);
  assert_ptr_not_equal(l2.d, l1.d);
  assert_int_equal(eddy_rt_entry_cuda_list_length(l1.d), 2);
  assert_int_equal(eddy_rt_entry_cuda_list_length(l2.d), 3);
  // set on the copy (retained, then moved): the original keeps its item 0.
  p_retain(l2);
  pair_t l3 = p_set(l2, 1, 0, c, F32, 2, k23, &r);
  OK(r);
  p_get(l1, 0, out, F32, 2, k23, &r);
  assert_memory_equal(out, a, sizeof a);
  p_get(l2, 0, out, F32, 2, k23, &r);
  assert_memory_equal(out, a, sizeof a);
  p_get(l3, 0, out, F32, 2, k23, &r);
  assert_memory_equal(out, c, sizeof c);
  p_release(l2);
  // pop of a kept list: the original keeps its length and last item.
  pair_t l4 = p_pop(l1, 0, out, F32, 2, k23, &r);
  OK(r);
  assert_memory_equal(out, b, sizeof b);
  assert_int_equal(eddy_rt_entry_cuda_list_length(l1.d), 2);
  assert_int_equal(eddy_rt_entry_cuda_list_length(l4.d), 1);
  p_get(l1, 1, out, F32, 2, k23, &r);
  OK(r);
  assert_memory_equal(out, b, sizeof b);
  // A unique list is changed in place.
  pair_t l5 = p_push(l4, 1, c, F32, 2, k23, &r);
  assert_ptr_equal(l5.d, l4.d);
  p_release(l5);
  p_release(l3);
  p_release(l1);
  // The items shared by all those lists are gone with the last of them
  // (once the stream has passed their last reads).
  end_ok();
  begin_ok();
  assert_int_equal(cuda_stat("live_allocs"), g_allocs);
}

static void test_reserve_set_stack(void **state) {
  (void)state;
  res_t r;
  const int64_t k2[] = {2};
  float x[2] = {4, 5}, y[2] = {-1, 8}, out[2], st[8];
  pair_t l = p_reserve(F32, 1, k2, 4, &r);
  OK(r);
  // Unset items read as zeros of the element shape.
  long memsets = cuda_stat("memsets");
  p_get(l, 2, out, F32, 1, k2, &r);
  OK(r);
  assert_true(out[0] == 0.0f && out[1] == 0.0f);
  assert_int_equal(cuda_stat("memsets"), memsets + 1);
  l = p_set(l, 1, 1, x, F32, 1, k2, &r);
  l = p_set(l, 1, 3, y, F32, 1, k2, &r);
  OK(r);
  p_stack(l, st, F32, 2, (int64_t[]){4, 2}, &r);
  OK(r);
  const float want[8] = {0, 0, 4, 5, 0, 0, -1, 8};
  assert_memory_equal(st, want, sizeof want);
  l = p_set(l, 1, 1, y, F32, 1, k2, &r); // replaces the item
  p_get(l, 1, out, F32, 1, k2, &r);
  assert_memory_equal(out, y, sizeof y);
  l = p_pop(l, 1, out, F32, 1, k2, &r);
  l = p_pop(l, 1, out, F32, 1, k2, &r); // an unset item
  OK(r);
  assert_true(out[0] == 0.0f && out[1] == 0.0f);
  p_release(l);
}

/// tl.resize and tl.scatter: lists cut, grown (the new items unset) and
/// scattered into past their end; a shared list is left as it was.
static void test_resize_scatter(void **state) {
  (void)state;
  res_t r;
  const int64_t k2[] = {2}, k22[] = {2, 2};
  float x[4] = {1, 2, 3, 4}, st[10], out[2];
  pair_t l = p_reserve(F32, 1, k2, 3, &r);
  OK(r);
  l = p_set(l, 1, 0, x, F32, 1, k2, &r);
  l = p_resize(l, 1, 1, &r); // cut to the set item
  OK(r);
  l = p_resize(l, 1, 3, &r);
  OK(r);
  p_stack(l, st, F32, 2, (int64_t[]){3, 2}, &r);
  OK(r);
  const float want3[6] = {1, 2, 0, 0, 0, 0};
  assert_memory_equal(st, want3, sizeof want3);
  p_retain(l); // shared: the scatter copies
  const int64_t idx[2] = {4, 0};
  pair_t m = p_scatter(l, 0, idx, 2, x, F32, 2, k22, &r);
  OK(r);
  p_stack(m, st, F32, 2, (int64_t[]){5, 2}, &r);
  OK(r);
  const float want5[10] = {3, 4, 0, 0, 0, 0, 0, 0, 1, 2};
  assert_memory_equal(st, want5, sizeof want5);
  p_get(l, 0, out, F32, 1, k2, &r); // the original keeps its item
  OK(r);
  assert_true(out[0] == 1.0f && out[1] == 2.0f);
  p_release(l);
  const int64_t neg[2] = {1, -3};
  m = p_scatter(m, 1, neg, 2, x, F32, 2, k22, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.scatter: index -3 (at 1) is negative");
  m = p_resize(p_reserve(F32, 1, k2, 1, &r), 1, -1, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.resize: length is -1, expected >= 0");
  p_release(p_scatter(p_reserve(F32, 1, k2, 0, &r), 1, idx, 2, x, F32, 1,
                      (int64_t[]){4}, &r));
  assert_int_not_equal(r.code, 0);
  p_release(l); // (the original reference)
}

static void p_concat(pair_t l, void *out, int32_t rank, const int64_t *dims,
                     int64_t *lens, int64_t n, res_t *r) {
  slots_t s = slots();
  size_t bytes = nbytes(F32, rank, dims), lb = (size_t)n * sizeof(int64_t);
  memset(out, 0x55, bytes);
  void *d = dput(out, bytes), *dl = dput(lens, lb);
  eddy_rt_entry_list_concat(g_ctx, l.h, out, F32, rank, dims, lens, &s.hc,
                            s.he, ERRLEN);
  eddy_rt_entry_cuda_list_concat(g_ctx, l.d, d, F32, rank, dims, dl, &s.dc,
                                 s.de, ERRLEN);
  *r = agree(&s, NULL, NULL, false);
  int64_t back[8];
  assert_true(lb <= sizeof back);
  eddy_rt_entry_cuda_to_host(back, dl, (int64_t)lb);
  dfree(dl, lb);
  if (r->code == 0 && lb > 0)
    assert_memory_equal(back, lens, lb);
  same_output(r, out, d, bytes);
}

/// tl.split and tl.concat: items of 2, 0 and 1 rows, joined again; lengths
/// that do not add up and items that differ past their first dim fail.
static void test_split_concat(void **state) {
  (void)state;
  res_t r;
  const int64_t k32[] = {3, 2}, lens[3] = {2, 0, 1};
  float x[6] = {1, 2, 3, 4, 5, 6}, out[6];
  int64_t got[3];
  pair_t l = p_split(x, 2, k32, lens, 3, &r);
  OK(r);
  l = p_set(l, 1, 1, (float[]){7, 8}, F32, 2, (int64_t[]){1, 2}, &r);
  OK(r);
  float all[8];
  p_concat(l, all, 2, (int64_t[]){4, 2}, got, 3, &r);
  OK(r);
  const float want[8] = {1, 2, 3, 4, 7, 8, 5, 6};
  const int64_t wl[3] = {2, 1, 1};
  assert_memory_equal(all, want, sizeof want);
  assert_memory_equal(got, wl, sizeof wl);
  l = p_push(l, 1, x, F32, 2, (int64_t[]){1, 3}, &r); // [?, 2] list: refused
  assert_int_not_equal(r.code, 0);
  const int64_t bad[2] = {2, 2};
  p_release(p_split(x, 2, k32, bad, 2, &r));
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.split: length 2 (at 1) is negative or runs past the 3 rows "
             "of f32[3, 2]");
  (void)out;
}

static void test_from_tensor(void **state) {
  (void)state;
  res_t r;
  float x[12], out[4], st[12];
  fill(x, 12, 3);
  const int64_t k34[] = {3, 4}, k4[] = {4};
  long allocs = cuda_stat("live_allocs");
  pair_t l = p_from_tensor(x, F32, 2, k34, &r);
  OK(r);
  // One block for the whole tensor, sliced into the items.
  assert_int_equal(cuda_stat("live_allocs"), allocs + 1);
  for (int64_t i = 0; i < 3; i++) {
    p_get(l, i, out, F32, 1, k4, &r);
    OK(r);
    assert_memory_equal(out, x + 4 * i, sizeof out);
  }
  p_stack(l, st, F32, 2, k34, &r);
  assert_memory_equal(st, x, sizeof x);
  // The items outlive the list they came from.
  pair_t l2 = p_pop(l, 0, out, F32, 1, k4, &r);
  p_release(l);
  l2 = p_push(l2, 1, x, F32, 1, k4, &r);
  OK(r);
  p_stack(l2, st, F32, 2, k34, &r);
  OK(r);
  assert_memory_equal(st, x, 8 * sizeof(float));
  assert_memory_equal(st + 8, x, 4 * sizeof(float));
  p_release(l2);
  end_ok();
  begin_ok();
  assert_int_equal(cuda_stat("live_allocs"), allocs);
  // An empty tensor.
  l = p_from_tensor(x, F32, 2, (int64_t[]){0, 4}, &r);
  OK(r);
  p_stack(l, st, F32, 2, (int64_t[]){0, 4}, &r);
  OK(r);
  p_release(l);
}

static void test_errors(void **state) {
  (void)state;
  res_t r;
  const int64_t k2[] = {2}, k3[] = {3}, kq[] = {-1};
  float a[3] = {1, 2, 3}, out[8];
  pair_t l = p_empty(F32, 1, k2, 2, 0, &r);
  l = p_push(l, 1, a, F32, 1, k2, &r);
  l = p_push(l, 1, a, F32, 1, k2, &r);
  OK(r);
  p_get(l, 5, out, F32, 1, k2, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.get_item: index 5 is out of range for a list of length 2 "
             "(expected 0 <= index < 2)");
  p_get(l, -1, out, F32, 1, k2, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.get_item: index -1 is out of range for a list of length 2 "
             "(expected 0 <= index < 2)");
  p_get(l, 0, out, F32, 1, k3, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.get_item: expected f32[3], got f32[2]");
  p_stack(l, out, F32, 2, (int64_t[]){3, 2}, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.stack: expected f32[3,2], got f32[2,2]");
  // Kept lists survive failed ops on them.
  pair_t bad = p_push(l, 0, a, F32, 1, k2, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.push_back: the list is full: length 2 reached max_elements 2");
  assert_null(bad.d);
  bad = p_set(l, 0, 2, a, F32, 1, k2, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.set_item: index 2 is out of range for a list of length 2 "
             "(expected 0 <= index < 2)");
  bad = p_set(l, 0, 0, a, F32, 1, k3, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.set_item: item is f32[3]; the list holds f32[2]");
  bad = p_set(l, 0, 0, a, I32, 1, k2, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.set_item: item is i32[2]; the list holds f32[2]");
  bad = p_pop(l, 0, out, F32, 1, k3, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.pop_back: expected f32[3], got f32[2]");
  assert_int_equal(eddy_rt_entry_cuda_list_length(l.d), 2);
  p_get(l, 1, out, F32, 1, k2, &r);
  OK(r);
  assert_true(out[0] == 1.0f && out[1] == 2.0f);
  // A moved list is consumed by a failure.
  l = p_pop(l, 1, out, F32, 1, k3, &r);
  assert_null(l.d);
  // NULL: an earlier failure, passed on silently.
  slots_t s = slots();
  assert_null(eddy_rt_entry_cuda_list_push(g_ctx, NULL, 1, a, F32, 1, k2, &s.dc,
                                           s.de, ERRLEN));
  assert_null(eddy_rt_entry_cuda_list_pop(g_ctx, NULL, 1, out, F32, 1, k2,
                                          &s.dc, s.de, ERRLEN));
  assert_null(eddy_rt_entry_cuda_list_set(g_ctx, NULL, 1, 0, a, F32, 1, k2,
                                          &s.dc, s.de, ERRLEN));
  eddy_rt_entry_cuda_list_get(g_ctx, NULL, 0, out, F32, 1, k2, &s.dc, s.de,
                              ERRLEN);
  eddy_rt_entry_cuda_list_stack(g_ctx, NULL, out, F32, 1, k2, &s.dc, s.de,
                                ERRLEN);
  assert_int_equal(s.dc, 0);
  assert_string_equal(s.de, "");
  assert_int_equal(eddy_rt_entry_cuda_list_length(NULL), 0);
  eddy_rt_entry_cuda_list_retain(NULL);
  eddy_rt_entry_cuda_list_release(NULL);

  l = p_empty(F32, 1, k2, -1, 0, &r);
  l = p_pop(l, 1, out, F32, 1, k2, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.pop_back: cannot pop from an empty list");
  assert_null(l.d);
  // An element shape that is not fully known.
  l = p_reserve(F32, 1, kq, 2, &r);
  p_get(l, 1, out, F32, 1, k2, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.get_item: item 1 was never set and the element shape [?] is "
             "not fully known, so it cannot be read as zeros");
  p_stack(l, out, F32, 2, (int64_t[]){2, 2}, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.stack: cannot stack a list of length 2 with no set items: "
             "the element shape [?] is not fully known");
  l = p_set(l, 1, 0, a, F32, 1, k2, &r);
  l = p_set(l, 1, 1, a, F32, 1, k3, &r);
  OK(r);
  p_stack(l, out, F32, 2, (int64_t[]){2, 2}, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.stack: items must all have one shape, but item 0 has shape "
             "[2] and item 1 has shape [3]");
  p_release(l);
  l = p_empty(F32, -1, NULL, -1, 0, &r); // unknown rank
  l = p_push(l, 1, a, F32, 1, k3, &r);
  l = p_push(l, 1, a, F32, 0, NULL, &r);
  OK(r);
  pair_t l2 = p_pop(l, 0, out, F32, 0, NULL, &r);
  OK(r);
  assert_true(out[0] == 1.0f);
  p_release(l2);
  p_release(l);

  l = p_reserve(F32, 1, k2, -3, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.reserve: length is -3, expected >= 0");
  l = p_empty(42, 1, k2, -1, 0, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.empty: element dtype 42 is not a dtype");
  l = p_empty(F32, 17, k2, -1, 0, &r);
  expect_err(&r, -EDDY_RT_ERR_INTERNAL, "tl.empty: bad element rank 17");
  l = p_from_tensor(a, F32, 0, NULL, &r);
  expect_err(&r, -EDDY_RT_ERR_INVALID_ARGUMENT,
             "tl.from_tensor: operand 0 is a scalar; expected rank >= 1");
  // The first failure stays in the slot.
  slots_t s2 = slots();
  void *d = eddy_rt_entry_cuda_list_reserve(g_ctx, F32, 1, k2, -1, &s2.dc,
                                            s2.de, ERRLEN);
  assert_null(d);
  d = eddy_rt_entry_cuda_list_reserve(g_ctx, F32, 1, k2, -2, &s2.dc, s2.de,
                                      ERRLEN);
  assert_int_equal(s2.dc, -EDDY_RT_ERR_INVALID_ARGUMENT);
  assert_string_equal(s2.de, "tl.reserve: length is -1, expected >= 0");
}

/// ---- Device only -----------------------------------------------------------

static void test_swap_memory(void **state) {
  (void)state;
  res_t r;
  float v[5][6], out[6], st[30];
  for (int i = 0; i < 5; i++)
    fill(v[i], 6, (float)(10 * i));
  long host_allocs = cuda_stat("host_allocs");
  long waits = cuda_stat("stream_waits");
  // Held events: every swap-out stays in flight, so each device block waits.
  cuda_hold_events(1);
  pair_t l = p_empty(F32, 2, k23, -1, 1, &r);
  OK(r);
  for (int i = 0; i < 3; i++)
    l = p_push(l, 1, v[i], F32, 2, k23, &r);
  OK(r);
  assert_int_equal(cuda_stat("host_allocs"), host_allocs + 3);
  assert_int_equal(cuda_stat("live_host_allocs"), g_host + 3);
  assert_int_equal(cuda_stat("live_allocs"), g_allocs + 3);
  // The swap stream waited for each push's copy, and moved it.
  assert_int_equal(cuda_stat("stream_waits"), waits + 3);
  void *swap_stream = cuda_last_dtoh_stream();
  assert_non_null(swap_stream);
  assert_ptr_not_equal(swap_stream, mgpuStreamCreate());
  // The items come back right (the stream waits for each swap-out).
  waits = cuda_stat("stream_waits");
  long htod = cuda_stat("htod_copies");
  p_get(l, 1, out, F32, 2, k23, &r);
  OK(r);
  assert_memory_equal(out, v[1], sizeof out);
  assert_int_equal(cuda_stat("stream_waits"), waits + 1);
  assert_int_equal(cuda_stat("htod_copies"), htod + 2); // dput, the item
  p_stack(l, st, F32, 3, (int64_t[]){3, 2, 3}, &r);
  assert_memory_equal(st, v, 3 * sizeof v[0]);
  cuda_hold_events(0);
  // eddy_rt_entry_cuda_end waits for the swap stream and frees the device
  // blocks of finished swap-outs.
  end_ok();
  assert_int_equal(cuda_stat("live_allocs"), g_allocs);
  assert_int_equal(cuda_stat("live_host_allocs"), g_host + 3);
  begin_ok();
  // Without held events a push frees the block of the last one: at most
  // one device block in flight.
  for (int i = 3; i < 5; i++) {
    l = p_push(l, 1, v[i], F32, 2, k23, &r);
    assert_int_equal(cuda_stat("live_allocs"), g_allocs + 1);
  }
  for (int i = 4; i >= 0; i--) {
    l = p_pop(l, 1, out, F32, 2, k23, &r);
    OK(r);
    assert_memory_equal(out, v[i], sizeof out);
  }
  end_ok();
  assert_int_equal(cuda_stat("live_host_allocs"), g_host);
  begin_ok();
  // Copies share the pinned items; set swaps out too.
  l = p_push(l, 1, v[0], F32, 2, k23, &r);
  pair_t l2 = p_set(l, 0, 0, v[1], F32, 2, k23, &r);
  OK(r);
  assert_int_equal(cuda_stat("live_host_allocs"), g_host + 2);
  p_get(l, 0, out, F32, 2, k23, &r);
  assert_memory_equal(out, v[0], sizeof out);
  p_get(l2, 0, out, F32, 2, k23, &r);
  assert_memory_equal(out, v[1], sizeof out);
  p_release(l2);
  p_release(l);
  end_ok();
  assert_int_equal(cuda_stat("live_host_allocs"), g_host);
  begin_ok();
}

static void test_deferred_frees(void **state) {
  (void)state;
  res_t r;
  float a[6], out[6];
  fill(a, 6, 1);
  // A pop issues a read of the item, so its block waits for the stream to
  // get past it before it is freed.
  pair_t l = p_empty(F32, 2, k23, -1, 0, &r);
  l = p_push(l, 1, a, F32, 2, k23, &r);
  l = p_push(l, 1, a, F32, 2, k23, &r);
  OK(r);
  cuda_hold_events(1);
  l = p_pop(l, 1, out, F32, 2, k23, &r);
  OK(r);
  assert_int_equal(cuda_stat("live_allocs"), g_allocs + 2);
  assert_int_equal(cuda_stat("live_events"), g_events + 1);
  cuda_hold_events(0);
  p_release(l);
  // end waits for the stream, then frees.
  end_ok();
  assert_int_equal(cuda_stat("live_allocs"), g_allocs);
  assert_int_equal(cuda_stat("live_events"), g_events);
  begin_ok();
  // After end the streams are idle: a release frees at once.
  l = p_empty(F32, 2, k23, -1, 1, &r);
  l = p_push(l, 1, a, F32, 2, k23, &r);
  end_ok();
  begin_ok();
  p_release(l);
  assert_int_equal(cuda_stat("live_allocs"), g_allocs);
  assert_int_equal(cuda_stat("live_host_allocs"), g_host);
}

static void test_driver_failures(void **state) {
  (void)state;
  const int64_t k2[] = {2};
  float a[2] = {1, 2};
  int32_t code = 0;
  char err[ERRLEN] = "";
  void *d = dput(a, sizeof a);
  void *l = eddy_rt_entry_cuda_list_empty(g_ctx, F32, 1, k2, -1, &code, err,
                                          ERRLEN, 0);
  l = eddy_rt_entry_cuda_list_push(g_ctx, l, 1, d, F32, 1, k2, &code, err,
                                   ERRLEN);
  assert_non_null(l);
  eddy_rt_entry_cuda_list_retain(l);
  // An allocation failure is the op's (not recorded for end).
  cuda_fail_alloc(2);
  void *l2 = eddy_rt_entry_cuda_list_push(g_ctx, l, 0, d, F32, 1, k2, &code,
                                          err, ERRLEN);
  cuda_fail_alloc(0);
  assert_null(l2);
  assert_int_equal(code, -EDDY_RT_ERR_RESOURCE);
  assert_string_equal(err, "tl.push_back: cannot allocate 8 bytes of device "
                           "memory: CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
  end_ok();
  begin_ok();
  code = 0;
  void *s = eddy_rt_entry_cuda_list_empty(g_ctx, F32, 1, k2, -1, &code, err,
                                          ERRLEN, 1);
  cuda_fail_alloc_host(2);
  s = eddy_rt_entry_cuda_list_push(g_ctx, s, 1, d, F32, 1, k2, &code, err,
                                   ERRLEN);
  cuda_fail_alloc_host(0);
  assert_null(s);
  assert_string_equal(err, "tl.push_back: cannot allocate 8 bytes of pinned "
                           "host memory: CUDA_ERROR_OUT_OF_MEMORY (out of "
                           "memory)");
  // A recorded error (a failed launch): copying helpers fail with it, and
  // end reports it; releases still free.
  static const char image[] = "FAKECUBIN k";
  void *m = mgpuModuleLoad((void *)image, sizeof image);
  void *f = mgpuModuleGetFunction(m, "k");
  cuda_fail_launch(719);
  mgpuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL, 0);
  cuda_fail_launch(0);
  code = 0;
  float out[2];
  eddy_rt_entry_cuda_list_get(g_ctx, l, 0, d, F32, 1, k2, &code, err, ERRLEN);
  assert_int_equal(code, -EDDY_RT_ERR_INTERNAL);
  assert_string_equal(err, "tl.get_item: cuLaunchKernel(k): "
                           "CUDA_ERROR_LAUNCH_FAILED (unspecified launch "
                           "failure)");
  eddy_rt_entry_cuda_list_release(l);
  eddy_rt_entry_cuda_list_release(l);
  assert_int_equal(eddy_rt_entry_cuda_end(NULL, err, ERRLEN),
                   EDDY_RT_ERR_INTERNAL);
  assert_string_equal(err, "cuLaunchKernel(k): CUDA_ERROR_LAUNCH_FAILED "
                           "(unspecified launch failure)");
  begin_ok();
  eddy_rt_entry_cuda_to_host(out, d, sizeof out);
  assert_true(out[0] == 1.0f && out[1] == 2.0f); // not overwritten
  dfree(d, sizeof a);
}

/// A thread that uses a swap list and exits: its swap stream goes with it.
static void *swap_worker(void *arg) {
  int *ok = arg;
  char err[ERRLEN];
  int32_t code = 0;
  const int64_t k2[] = {2};
  float a[2] = {3, 4}, back[2] = {0, 0};
  if (eddy_rt_entry_cuda_begin(NULL, err, ERRLEN) != 0)
    return NULL;
  void *d = eddy_rt_entry_cuda_alloc(NULL, sizeof a, err, ERRLEN);
  eddy_rt_entry_cuda_to_device(d, a, sizeof a);
  void *l = eddy_rt_entry_cuda_list_empty(NULL, F32, 1, k2, -1, &code, err,
                                          ERRLEN, 1);
  l = eddy_rt_entry_cuda_list_push(NULL, l, 1, d, F32, 1, k2, &code, err,
                                   ERRLEN);
  eddy_rt_entry_cuda_to_device(d, back, sizeof back);
  l = eddy_rt_entry_cuda_list_pop(NULL, l, 1, d, F32, 1, k2, &code, err,
                                  ERRLEN);
  eddy_rt_entry_cuda_to_host(back, d, sizeof back);
  eddy_rt_entry_cuda_list_release(l);
  eddy_rt_entry_cuda_free(NULL, d, sizeof a);
  *ok = code == 0 && back[0] == 3.0f && back[1] == 4.0f &&
        eddy_rt_entry_cuda_end(NULL, err, ERRLEN) == 0;
  return NULL;
}

static void test_threads(void **state) {
  (void)state;
  long streams = cuda_stat("live_streams");
  int ok[2] = {0, 0};
  pthread_t th[2];
  for (int i = 0; i < 2; i++)
    assert_int_equal(pthread_create(&th[i], NULL, swap_worker, &ok[i]), 0);
  for (int i = 0; i < 2; i++)
    assert_int_equal(pthread_join(th[i], NULL), 0);
  assert_true(ok[0] && ok[1]);
  assert_int_equal(cuda_stat("live_streams"), streams);
}

static void *idle_worker(void *arg) {
  char *err = arg;
  int32_t code = 0;
  const int64_t k2[] = {2};
  float a[2] = {1, 2};
  void *l = eddy_rt_entry_cuda_list_empty(NULL, F32, 1, k2, -1, &code, err,
                                          ERRLEN, 0);
  l = eddy_rt_entry_cuda_list_push(NULL, l, 1, a, F32, 1, k2, &code, err,
                                   ERRLEN);
  return (void *)(intptr_t)(l == NULL && code == -EDDY_RT_ERR_INTERNAL);
}

static void test_not_begun(void **state) {
  (void)state;
  char err[ERRLEN] = "";
  pthread_t th;
  void *ret = NULL;
  assert_int_equal(pthread_create(&th, NULL, idle_worker, err), 0);
  assert_int_equal(pthread_join(th, &ret), 0);
  assert_true(ret != NULL);
  assert_string_equal(err, "tl.push_back: eddy_rt_entry_cuda_begin has not "
                           "succeeded on this thread");
}

int main(void) {
  void *cuda = cuda_list_test_init();
  knob(cuda, "fake_cuda_fail_alloc", &cuda_fail_alloc);
  knob(cuda, "fake_cuda_fail_alloc_host", &cuda_fail_alloc_host);
  knob(cuda, "fake_cuda_fail_launch", &cuda_fail_launch);
  knob(cuda, "fake_cuda_hold_events", &cuda_hold_events);
  knob(cuda, "fake_cuda_last_dtoh_stream", &cuda_last_dtoh_stream);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_push_pop_get, setup, teardown),
      cmocka_unit_test_setup_teardown(test_value_semantics, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reserve_set_stack, setup, teardown),
      cmocka_unit_test_setup_teardown(test_from_tensor, setup, teardown),
      cmocka_unit_test_setup_teardown(test_resize_scatter, setup, teardown),
      cmocka_unit_test_setup_teardown(test_split_concat, setup, teardown),
      cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_swap_memory, setup, teardown),
      cmocka_unit_test_setup_teardown(test_deferred_frees, setup, teardown),
      cmocka_unit_test_setup_teardown(test_driver_failures, setup, teardown),
      cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
      cmocka_unit_test_setup_teardown(test_not_begun, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

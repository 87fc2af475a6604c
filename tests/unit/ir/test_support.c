/// Unit tests for ir/support.h and ir/status.h: arena, pointer map, byte
/// buffer, checked arithmetic, hashing and statuses.
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "ir/status.h"
#include "ir/support.h"

#include <stdlib.h>
#include <string.h>

static void test_arena_alignment_and_zero(void **state) {
  (void)state;
  eddy_arena_t *a = eddy_arena_create();
  assert_non_null(a);
  for (size_t size = 1; size < 200; size += 7) {
    unsigned char *p = eddy_arena_alloc(a, size);
    assert_int_equal((uintptr_t)p % 16, 0);
    for (size_t i = 0; i < size; i++)
      assert_int_equal(p[i], 0);
    memset(p, 0xab, size); /* must not disturb other allocations */
  }
  /* zero-size allocations are valid and distinct */
  void *z1 = eddy_arena_alloc(a, 0);
  void *z2 = eddy_arena_alloc(a, 0);
  assert_non_null(z1);
  assert_ptr_not_equal(z1, z2);
  eddy_arena_destroy(a);
}

static void test_arena_many_and_large(void **state) {
  (void)state;
  eddy_arena_t *a = eddy_arena_create();
  /* many small allocations across several chunks keep their contents */
  enum { N = 20000 };
  uint32_t **ptrs = malloc(N * sizeof(*ptrs));
  for (uint32_t i = 0; i < N; i++) {
    ptrs[i] = eddy_arena_alloc(a, sizeof(uint32_t) * 3);
    ptrs[i][0] = i;
    ptrs[i][2] = ~i;
  }
  /* a large allocation gets its own chunk and is zeroed */
  size_t big = 10u << 20;
  unsigned char *b = eddy_arena_alloc(a, big);
  assert_int_equal(b[0], 0);
  assert_int_equal(b[big - 1], 0);
  memset(b, 1, big);
  /* small allocations after a large one still work */
  uint32_t *after = eddy_arena_alloc(a, 4);
  *after = 77;
  for (uint32_t i = 0; i < N; i++) {
    assert_int_equal(ptrs[i][0], i);
    assert_int_equal(ptrs[i][1], 0);
    assert_int_equal(ptrs[i][2], ~i);
  }
  assert_int_equal(*after, 77);
  assert_true(eddy_arena_bytes_used(a) >= big + N * 12);
  free(ptrs);

  eddy_arena_reset(a);
  assert_int_equal(eddy_arena_bytes_used(a), 0);
  unsigned char *p = eddy_arena_alloc(a, 64);
  for (int i = 0; i < 64; i++)
    assert_int_equal(p[i], 0); /* reused memory is zeroed again */
  eddy_arena_destroy(a);
}

static void test_arena_dup(void **state) {
  (void)state;
  eddy_arena_t *a = eddy_arena_create();
  const char *s = "hello world";
  char *d = eddy_arena_strndup(a, s, 5);
  assert_string_equal(d, "hello");
  int v[3] = {1, 2, 3};
  int *c = eddy_arena_dup(a, v, sizeof(v));
  assert_ptr_not_equal(c, v);
  assert_memory_equal(c, v, sizeof(v));
  assert_non_null(eddy_arena_dup(a, NULL, 0));
  char *e = eddy_arena_strndup(a, "", 0);
  assert_string_equal(e, "");
  assert_int_equal(eddy_arena_bytes_used(a), 6 + sizeof(v) + 1 + 1);
  eddy_arena_destroy(a);
}

static void test_ptrmap_basic(void **state) {
  (void)state;
  eddy_ptrmap_t m;
  eddy_ptrmap_init(&m);
  int a, b, c;
  assert_null(eddy_ptrmap_get(&m, &a));
  assert_false(eddy_ptrmap_has(&m, &a));
  eddy_ptrmap_put(&m, &a, &b);
  eddy_ptrmap_put(&m, &b, NULL); /* a NULL value is still present */
  assert_ptr_equal(eddy_ptrmap_get(&m, &a), &b);
  assert_true(eddy_ptrmap_has(&m, &b));
  assert_null(eddy_ptrmap_get(&m, &b));
  assert_false(eddy_ptrmap_has(&m, &c));
  eddy_ptrmap_put(&m, &a, &c); /* overwrite keeps len */
  assert_ptr_equal(eddy_ptrmap_get(&m, &a), &c);
  assert_int_equal(m.len, 2);
  eddy_ptrmap_clear(&m);
  assert_int_equal(m.len, 0);
  assert_false(eddy_ptrmap_has(&m, &a));
  eddy_ptrmap_put(&m, &c, &a);
  assert_ptr_equal(eddy_ptrmap_get(&m, &c), &a);
  eddy_ptrmap_destroy(&m);
  assert_int_equal(m.cap, 0);
}

static void test_ptrmap_growth(void **state) {
  (void)state;
  enum { N = 100000 };
  /* keys from one array: adjacent addresses stress the hash */
  char *keys = malloc(N);
  eddy_ptrmap_t m;
  eddy_ptrmap_init(&m);
  for (size_t i = 0; i < N; i++)
    eddy_ptrmap_put(&m, keys + i, (void *)(uintptr_t)(i + 1));
  assert_int_equal(m.len, N);
  assert_true(m.cap >= N);
  assert_int_equal(m.cap & (m.cap - 1), 0);
  for (size_t i = 0; i < N; i++)
    assert_int_equal((uintptr_t)eddy_ptrmap_get(&m, keys + i), i + 1);
  assert_false(eddy_ptrmap_has(&m, keys + N));
  /* overwrite half */
  for (size_t i = 0; i < N; i += 2)
    eddy_ptrmap_put(&m, keys + i, NULL);
  assert_int_equal(m.len, N);
  for (size_t i = 0; i < N; i++)
    assert_int_equal((uintptr_t)eddy_ptrmap_get(&m, keys + i),
                     i % 2 ? i + 1 : 0);
  eddy_ptrmap_destroy(&m);
  free(keys);
}

static void test_buf(void **state) {
  (void)state;
  eddy_buf_t b;
  eddy_buf_init(&b);
  eddy_buf_puts(&b, "ab");
  eddy_buf_putc(&b, 'c');
  eddy_buf_append(&b, "dexx", 2);
  eddy_buf_printf(&b, "-%d-%s", 42, "z");
  assert_string_equal(b.data, "abcde-42-z");
  assert_int_equal(b.len, 10);
  eddy_buf_append(&b, "\0q", 2); /* embedded NUL is kept */
  assert_int_equal(b.len, 12);
  assert_int_equal(b.data[11], 'q');
  eddy_buf_clear(&b);
  assert_int_equal(b.len, 0);
  assert_string_equal(b.data, "");
  /* growth through printf of a long string */
  char big[5000];
  memset(big, 'x', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';
  eddy_buf_printf(&b, "%s%s", big, big);
  assert_int_equal(b.len, 2 * (sizeof(big) - 1));
  assert_int_equal(strlen(b.data), b.len);
  char *s = eddy_buf_take(&b);
  assert_int_equal(strlen(s), 2 * (sizeof(big) - 1));
  assert_null(b.data);
  assert_int_equal(b.len, 0);
  free(s);
  /* take on an empty buffer gives "" */
  s = eddy_buf_take(&b);
  assert_string_equal(s, "");
  free(s);
  eddy_buf_printf(&b, "%s", "");
  assert_non_null(b.data);
  assert_string_equal(b.data, "");
  eddy_buf_destroy(&b);
}

static void test_checked_arith(void **state) {
  (void)state;
  int64_t r = 7;
  assert_true(eddy_checked_mul_i64(3, 4, &r));
  assert_int_equal(r, 12);
  assert_true(eddy_checked_mul_i64(INT64_MAX, 1, &r));
  assert_int_equal(r, INT64_MAX);
  assert_true(eddy_checked_mul_i64(INT64_MIN, 1, &r));
  assert_int_equal(r, INT64_MIN);
  assert_true(eddy_checked_mul_i64(0, INT64_MIN, &r));
  assert_int_equal(r, 0);
  r = 7;
  assert_false(eddy_checked_mul_i64(INT64_MIN, -1, &r));
  assert_int_equal(r, 7); /* untouched on overflow */
  assert_false(eddy_checked_mul_i64(INT64_MAX, 2, &r));
  assert_false(eddy_checked_mul_i64((int64_t)1 << 32, (int64_t)1 << 31, &r));
  assert_true(eddy_checked_mul_i64((int64_t)1 << 31, (int64_t)1 << 31, &r));
  assert_int_equal(r, (int64_t)1 << 62);
  assert_true(eddy_checked_mul_i64(-((int64_t)1 << 31), (int64_t)1 << 32, &r));
  assert_int_equal(r, INT64_MIN);
  assert_true(eddy_checked_add_i64(INT64_MAX, 0, &r));
  assert_false(eddy_checked_add_i64(INT64_MAX, 1, &r));
  assert_false(eddy_checked_add_i64(INT64_MIN, -1, &r));
  assert_true(eddy_checked_add_i64(INT64_MIN, INT64_MAX, &r));
  assert_int_equal(r, -1);
}

static void test_hash(void **state) {
  (void)state;
  uint64_t h1 = eddy_hash_bytes("abc", 3, 0);
  assert_int_equal(h1, eddy_hash_bytes("abc", 3, 0));
  assert_int_not_equal(h1, eddy_hash_bytes("abd", 3, 0));
  assert_int_not_equal(h1, eddy_hash_bytes("abc", 3, 1));
  assert_int_not_equal(h1, eddy_hash_bytes("abc", 2, 0));
  /* combine is order sensitive */
  assert_int_not_equal(eddy_hash_combine(eddy_hash_combine(0, 1), 2),
                       eddy_hash_combine(eddy_hash_combine(0, 2), 1));
}

static void test_status(void **state) {
  (void)state;
  assert_int_equal(eddy_status_code(NULL), EDDY_OK);
  assert_string_equal(eddy_status_message(NULL), "");
  assert_null(eddy_status_location(NULL));
  eddy_status_t st = eddy_status_create(EDDY_ERR_PARSE, "bad %s %d", "x", 3);
  assert_non_null(st);
  assert_int_equal(eddy_status_code(st), EDDY_ERR_PARSE);
  assert_string_equal(eddy_status_message(st), "bad x 3");
  assert_null(eddy_status_location(st));
  assert_string_equal(eddy_status_notes(st), "");
  eddy_status_append_note(st, "note %d", 1);
  eddy_status_append_note(st, "second\n");
  assert_string_equal(eddy_status_notes(st), "note 1\nsecond\n");

  char *out = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&out, &len);
  eddy_status_print(st, f);
  fclose(f);
  assert_string_equal(out, "error: bad x 3\nnote 1\nsecond\n");
  free(out);
  eddy_status_destroy(st);

  st = eddy_status_create_at(EDDY_ERR_VERIFY, "a.eddy:3:7", "'x.y' op %s",
                             "broken");
  assert_string_equal(eddy_status_location(st), "a.eddy:3:7");
  f = open_memstream(&out, &len);
  eddy_status_print(st, f);
  fclose(f);
  assert_string_equal(out, "a.eddy:3:7: error: 'x.y' op broken\n");
  free(out);
  eddy_status_destroy(st);
  assert_string_equal(eddy_status_code_name(EDDY_ERR_NOT_FOUND), "not found");
  eddy_status_destroy(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_arena_alignment_and_zero),
      cmocka_unit_test(test_arena_many_and_large),
      cmocka_unit_test(test_arena_dup),
      cmocka_unit_test(test_ptrmap_basic),
      cmocka_unit_test(test_ptrmap_growth),
      cmocka_unit_test(test_buf),
      cmocka_unit_test(test_checked_arith),
      cmocka_unit_test(test_hash),
      cmocka_unit_test(test_status),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/// The runtime context's block cache (runtime/alloc.c): freed blocks of 4
/// KiB or more are reused by allocations of the same size, the context
/// never holds more than its peak use, small blocks and a disabled cache go
/// straight back to the allocator, and the memory limit and the accounting
/// are those of live bytes. A counting allocator sees every call.
#define _POSIX_C_SOURCE 200809L

#include "rt_test.h"

#include <pthread.h>

#define KIB 1024

typedef struct counting {
  pthread_mutex_t lock;
  int allocs, frees;
  int64_t live; // bytes the allocator has handed out and not got back
} counting_t;

static void *count_alloc(void *user, size_t size, size_t align) {
  counting_t *c = user;
  void *p = NULL;
  if (posix_memalign(&p, align, size ? size : 1) != 0)
    return NULL;
  pthread_mutex_lock(&c->lock);
  c->allocs++;
  c->live += (int64_t)size;
  pthread_mutex_unlock(&c->lock);
  return p;
}

static void count_free(void *user, void *ptr, size_t size) {
  counting_t *c = user;
  pthread_mutex_lock(&c->lock);
  c->frees++;
  c->live -= (int64_t)size;
  pthread_mutex_unlock(&c->lock);
  free(ptr);
}

static eddy_rt_ctx_t *counted_ctx(counting_t *c, int64_t limit) {
  memset(c, 0, sizeof *c);
  pthread_mutex_init(&c->lock, NULL);
  eddy_rt_ctx_options_t o = eddy_rt_ctx_options_default();
  o.allocator = (eddy_rt_allocator_t){count_alloc, count_free, c};
  o.memory_limit = limit;
  eddy_rt_ctx_t *ctx = NULL;
  RTT_OK(eddy_rt_ctx_create(&o, &ctx));
  eddy_rt_ctx_set_block_cache(ctx, true); // whatever the environment says
  return ctx;
}

static void destroy(eddy_rt_ctx_t *ctx, counting_t *c) {
  eddy_rt_ctx_destroy(ctx);
  assert_int_equal(c->live, 0); // cached blocks are given back too
  assert_int_equal(c->allocs, c->frees);
  pthread_mutex_destroy(&c->lock);
}

static void *alloc_ok(eddy_rt_ctx_t *ctx, int64_t size) {
  void *p = NULL;
  RTT_OK(eddy_rt_alloc(ctx, size, "test", &p));
  assert_non_null(p);
  assert_int_equal((uintptr_t)p % EDDY_RT_ALIGN, 0);
  return p;
}

static void test_same_size_is_reused(void **state) {
  (void)state;
  counting_t c;
  eddy_rt_ctx_t *ctx = counted_ctx(&c, 0);
  void *a = alloc_ok(ctx, 256 * KIB);
  eddy_rt_free(ctx, a, 256 * KIB);
  assert_int_equal(c.frees, 0);
  assert_int_equal(eddy_rt_ctx_bytes_in_use(ctx), 0);
  assert_int_equal(eddy_rt_ctx_cached_bytes(ctx), 256 * KIB);
  void *b = alloc_ok(ctx, 256 * KIB);
  assert_ptr_equal(a, b);
  assert_int_equal(c.allocs, 1);
  assert_int_equal(eddy_rt_ctx_cached_bytes(ctx), 0);
  assert_int_equal(eddy_rt_ctx_bytes_in_use(ctx), 256 * KIB);
  // Another size is a fresh block.
  void *d = alloc_ok(ctx, 128 * KIB);
  assert_int_equal(c.allocs, 2);
  eddy_rt_free(ctx, b, 256 * KIB);
  eddy_rt_free(ctx, d, 128 * KIB);
  assert_int_equal(eddy_rt_ctx_cached_bytes(ctx), 384 * KIB);
  destroy(ctx, &c);
}

static void test_small_blocks_are_not_cached(void **state) {
  (void)state;
  counting_t c;
  eddy_rt_ctx_t *ctx = counted_ctx(&c, 0);
  void *a = alloc_ok(ctx, 4 * KIB - 1);
  eddy_rt_free(ctx, a, 4 * KIB - 1);
  assert_int_equal(c.frees, 1);
  assert_int_equal(eddy_rt_ctx_cached_bytes(ctx), 0);
  destroy(ctx, &c);
}

/// A thousand blocks of one size, as the items of a TensorList: all are
/// reused by the next "call", the most recently freed first.
static void test_many_blocks_of_one_size(void **state) {
  (void)state;
  counting_t c;
  eddy_rt_ctx_t *ctx = counted_ctx(&c, 0);
  enum { N = 1000 };
  void **held = calloc(N, sizeof *held);
  assert_non_null(held);
  for (int call = 0; call < 3; call++) {
    for (int i = 0; i < N; i++) {
      held[i] = alloc_ok(ctx, 16 * KIB);
      memset(held[i], call, 16 * KIB); // addressable (ASan)
    }
    assert_int_equal(eddy_rt_ctx_cached_bytes(ctx), 0);
    for (int i = 0; i < N; i++)
      eddy_rt_free(ctx, held[i], 16 * KIB);
    assert_int_equal(eddy_rt_ctx_cached_bytes(ctx), (int64_t)N * 16 * KIB);
  }
  assert_int_equal(c.allocs, N);
  assert_int_equal(c.frees, 0);
  void *last = held[N - 1];
  assert_ptr_equal(alloc_ok(ctx, 16 * KIB), last);
  eddy_rt_free(ctx, last, 16 * KIB);
  free(held);
  destroy(ctx, &c);
}

/// Blocks of more sizes than the cache keeps: a new size takes the place
/// of the least recently cached one, whose blocks go back.
static void test_more_sizes_than_entries(void **state) {
  (void)state;
  counting_t c;
  eddy_rt_ctx_t *ctx = counted_ctx(&c, 0);
  enum { SIZES = 80 };
  void *held[SIZES];
  for (int i = 0; i < SIZES; i++)
    held[i] = alloc_ok(ctx, (4 + i) * KIB);
  for (int i = 0; i < SIZES; i++)
    eddy_rt_free(ctx, held[i], (4 + i) * KIB);
  // The first 16 sizes were the least recently cached: given back.
  assert_int_equal(c.frees, 16);
  int64_t kept = 0;
  for (int i = 16; i < SIZES; i++)
    kept += (4 + i) * KIB;
  assert_int_equal(eddy_rt_ctx_cached_bytes(ctx), kept);
  assert_int_equal(c.live, kept);
  // A kept size is reused; a dropped one is fresh.
  void *a = alloc_ok(ctx, (4 + SIZES - 1) * KIB);
  assert_ptr_equal(a, held[SIZES - 1]);
  int allocs = c.allocs;
  void *b = alloc_ok(ctx, 4 * KIB);
  assert_int_equal(c.allocs, allocs + 1);
  eddy_rt_free(ctx, a, (4 + SIZES - 1) * KIB);
  eddy_rt_free(ctx, b, 4 * KIB);
  destroy(ctx, &c);
}

static void test_never_above_the_peak(void **state) {
  (void)state;
  counting_t c;
  eddy_rt_ctx_t *ctx = counted_ctx(&c, 0);
  void *a = alloc_ok(ctx, 1024 * KIB);
  eddy_rt_free(ctx, a, 1024 * KIB);
  // 512 KiB fresh with 1 MiB cached would hold 1.5 MiB, past the 1 MiB
  // peak: the cached block goes back first.
  void *b = alloc_ok(ctx, 512 * KIB);
  assert_int_equal(c.frees, 1);
  assert_int_equal(eddy_rt_ctx_cached_bytes(ctx), 0);
  assert_true(c.live <= eddy_rt_ctx_peak_bytes(ctx));
  // Two 256 KiB blocks and the 512 KiB one fit under the peak together.
  void *d = alloc_ok(ctx, 256 * KIB), *e = alloc_ok(ctx, 256 * KIB);
  eddy_rt_free(ctx, d, 256 * KIB);
  eddy_rt_free(ctx, e, 256 * KIB);
  eddy_rt_free(ctx, b, 512 * KIB);
  assert_int_equal(eddy_rt_ctx_cached_bytes(ctx), 1024 * KIB);
  assert_int_equal(c.live, 1024 * KIB);
  assert_true(c.live <= eddy_rt_ctx_peak_bytes(ctx));
  destroy(ctx, &c);
}

/// A few bytes past the peak give back a small block that covers them, not
/// the large one cached longer (a call's result, against a loop step's
/// blocks of the next call).
static void test_small_blocks_go_first(void **state) {
  (void)state;
  counting_t c;
  eddy_rt_ctx_t *ctx = counted_ctx(&c, 0);
  void *big = alloc_ok(ctx, 1024 * KIB), *small[4];
  for (int i = 0; i < 4; i++)
    small[i] = alloc_ok(ctx, 16 * KIB);
  eddy_rt_free(ctx, big, 1024 * KIB); // the least recently cached
  for (int i = 0; i < 4; i++)
    eddy_rt_free(ctx, small[i], 16 * KIB);
  // The next call: two of the small blocks again, then 8 KiB of a new
  // size, 8 KiB past the peak with everything cached.
  for (int i = 0; i < 2; i++)
    small[i] = alloc_ok(ctx, 16 * KIB);
  void *fresh = alloc_ok(ctx, 8 * KIB);
  assert_int_equal(c.allocs, 6);
  assert_int_equal(c.frees, 1);
  assert_int_equal(eddy_rt_ctx_cached_bytes(ctx), 1024 * KIB + 16 * KIB);
  assert_true(c.live <= eddy_rt_ctx_peak_bytes(ctx));
  assert_ptr_equal(alloc_ok(ctx, 1024 * KIB), big); // still cached
  assert_int_equal(c.allocs, 6);
  eddy_rt_free(ctx, big, 1024 * KIB);
  eddy_rt_free(ctx, fresh, 8 * KIB);
  for (int i = 0; i < 2; i++)
    eddy_rt_free(ctx, small[i], 16 * KIB);
  destroy(ctx, &c);
}

static void test_trim_and_disable(void **state) {
  (void)state;
  counting_t c;
  eddy_rt_ctx_t *ctx = counted_ctx(&c, 0);
  void *a = alloc_ok(ctx, 128 * KIB);
  eddy_rt_free(ctx, a, 128 * KIB);
  eddy_rt_ctx_trim(ctx);
  assert_int_equal(c.live, 0);
  assert_int_equal(eddy_rt_ctx_cached_bytes(ctx), 0);
  a = alloc_ok(ctx, 128 * KIB);
  eddy_rt_free(ctx, a, 128 * KIB);
  eddy_rt_ctx_set_block_cache(ctx, false);
  assert_int_equal(c.live, 0);
  a = alloc_ok(ctx, 128 * KIB);
  eddy_rt_free(ctx, a, 128 * KIB);
  assert_int_equal(c.live, 0);
  assert_int_equal(c.allocs, 3);
  destroy(ctx, &c);
}

static void test_limit_counts_live_bytes(void **state) {
  (void)state;
  counting_t c;
  eddy_rt_ctx_t *ctx = counted_ctx(&c, 1024 * KIB);
  void *a = alloc_ok(ctx, 1024 * KIB);
  eddy_rt_free(ctx, a, 1024 * KIB);
  a = alloc_ok(ctx, 1024 * KIB); // cached bytes are not live
  void *b = NULL;
  RTT_ERR(eddy_rt_alloc(ctx, 1024 * KIB, "test", &b),
          EDDY_RT_ERR_RESOURCE, "memory limit");
  assert_null(b);
  eddy_rt_free(ctx, a, 1024 * KIB);
  destroy(ctx, &c);
}

static void test_reused_tensor_is_zeroed(void **state) {
  (void)state;
  counting_t c;
  eddy_rt_ctx_t *ctx = counted_ctx(&c, 0);
  int64_t n = 64 * KIB;
  eddy_rt_tensor_t t;
  RTT_OK(eddy_rt_tensor_create(ctx, EDDY_RT_F32, 1, &n, "test", &t));
  float *x = t.data;
  for (int64_t i = 0; i < n; i++)
    x[i] = 7.0f;
  eddy_rt_tensor_release(&t);
  RTT_OK(eddy_rt_tensor_create(ctx, EDDY_RT_F32, 1, &n, "test", &t));
  assert_int_equal(c.allocs, 1); // the same block
  x = t.data;
  for (int64_t i = 0; i < n; i++)
    assert_true(x[i] == 0.0f);
  eddy_rt_tensor_release(&t);
  destroy(ctx, &c);
}

typedef struct churn {
  eddy_rt_ctx_t *ctx;
  unsigned seed;
  int failures;
} churn_t;

static void *churn(void *arg) {
  churn_t *ch = arg;
  void *held[8] = {0};
  int64_t sizes[8] = {0};
  for (int i = 0; i < 4000; i++) {
    int k = (int)(rand_r(&ch->seed) % 8);
    if (held[k]) {
      eddy_rt_free(ch->ctx, held[k], sizes[k]);
      held[k] = NULL;
      continue;
    }
    sizes[k] = (int64_t)(1 + rand_r(&ch->seed) % 4) * 64 * KIB;
    if (eddy_rt_alloc(ch->ctx, sizes[k], "churn", &held[k]) || !held[k]) {
      ch->failures++;
      continue;
    }
    memset(held[k], i & 0xff, (size_t)sizes[k]);
  }
  for (int k = 0; k < 8; k++)
    if (held[k])
      eddy_rt_free(ch->ctx, held[k], sizes[k]);
  return NULL;
}

static void test_threads(void **state) {
  (void)state;
  counting_t c;
  eddy_rt_ctx_t *ctx = counted_ctx(&c, 0);
  churn_t ch[3] = {{ctx, 1, 0}, {ctx, 2, 0}, {ctx, 3, 0}};
  pthread_t th[3];
  for (int i = 0; i < 3; i++)
    assert_int_equal(pthread_create(&th[i], NULL, churn, &ch[i]), 0);
  for (int i = 0; i < 3; i++) {
    assert_int_equal(pthread_join(th[i], NULL), 0);
    assert_int_equal(ch[i].failures, 0);
  }
  assert_int_equal(eddy_rt_ctx_bytes_in_use(ctx), 0);
  assert_int_equal(c.live, eddy_rt_ctx_cached_bytes(ctx));
  assert_true(c.live <= eddy_rt_ctx_peak_bytes(ctx));
  destroy(ctx, &c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_same_size_is_reused),
      cmocka_unit_test(test_small_blocks_are_not_cached),
      cmocka_unit_test(test_many_blocks_of_one_size),
      cmocka_unit_test(test_more_sizes_than_entries),
      cmocka_unit_test(test_never_above_the_peak),
      cmocka_unit_test(test_small_blocks_go_first),
      cmocka_unit_test(test_trim_and_disable),
      cmocka_unit_test(test_limit_counts_live_bytes),
      cmocka_unit_test(test_reused_tensor_is_zeroed),
      cmocka_unit_test(test_threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

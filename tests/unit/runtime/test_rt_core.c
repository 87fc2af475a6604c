/// libeddyrt basics: status, context, allocation and the memory limit,
/// buffers, tensor descriptors, f16/bf16 conversion, the thread pool.
#define _POSIX_C_SOURCE 200809L // posix_memalign
#include "rt_test.h"
#include "runtime/rt_internal.h"

#include <stdatomic.h>

static void test_status(void **state) {
  (void)state;
  assert_int_equal(eddy_rt_status_code(NULL), EDDY_RT_OK);
  assert_string_equal(eddy_rt_status_message(NULL), "");
  eddy_rt_status_t st =
      eddy_rt_status_create(EDDY_RT_ERR_INVALID_ARGUMENT, "x is %d", 42);
  assert_int_equal(eddy_rt_status_code(st), EDDY_RT_ERR_INVALID_ARGUMENT);
  assert_string_equal(eddy_rt_status_message(st), "x is 42");
  eddy_rt_status_destroy(st);
  eddy_rt_status_destroy(NULL);
  // Same numbering as the IR's eddy_status_code_t.
  assert_int_equal(EDDY_RT_ERR_RESOURCE, 7);
  assert_int_equal(EDDY_RT_ERR_INTERNAL, 8);
  assert_int_equal(eddy_rt_abi_version(), EDDY_RT_ABI_VERSION);
}

static void test_dtypes(void **state) {
  (void)state;
  assert_string_equal(eddy_rt_dtype_name(EDDY_RT_BF16), "bf16");
  assert_string_equal(eddy_rt_dtype_name(EDDY_RT_I1), "i1");
  assert_string_equal(eddy_rt_dtype_name(99), "?");
  assert_int_equal(eddy_rt_dtype_size(EDDY_RT_I1), 1);
  assert_int_equal(eddy_rt_dtype_size(EDDY_RT_F16), 2);
  assert_int_equal(eddy_rt_dtype_size(EDDY_RT_I64), 8);
  assert_int_equal(eddy_rt_dtype_size(-1), 0);
  assert_true(eddy_rt_dtype_is_float(EDDY_RT_BF16));
  assert_false(eddy_rt_dtype_is_int(EDDY_RT_I1));
  assert_true(eddy_rt_dtype_is_int(EDDY_RT_I8));
}

static void test_half_conversions(void **state) {
  (void)state;
  assert_int_equal(eddy_rt_f32_to_f16(1.0f), 0x3c00);
  assert_int_equal(eddy_rt_f32_to_f16(-2.0f), 0xc000);
  assert_int_equal(eddy_rt_f32_to_f16(65504.0f), 0x7bff);
  assert_int_equal(eddy_rt_f32_to_f16(65519.0f), 0x7bff);
  assert_int_equal(eddy_rt_f32_to_f16(65520.0f), 0x7c00); // rounds up to inf
  assert_int_equal(eddy_rt_f32_to_f16(INFINITY), 0x7c00);
  assert_int_equal(eddy_rt_f32_to_f16(-0.0f), 0x8000);
  assert_int_equal(eddy_rt_f32_to_f16(0x1p-24f), 0x0001); // smallest subnormal
  assert_int_equal(eddy_rt_f32_to_f16(0x1p-25f), 0x0000); // tie to even: 0
  assert_int_equal(eddy_rt_f32_to_f16(0x1.8p-24f), 0x0002); // tie to even: 2
  assert_int_equal(eddy_rt_f32_to_f16(0x1p-14f), 0x0400);   // smallest normal
  // Ties to even at 1.0: ulp 2^-10.
  assert_int_equal(eddy_rt_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);
  assert_int_equal(eddy_rt_f32_to_f16(1.0f + 0x3p-11f), 0x3c02);
  assert_int_equal(eddy_rt_f32_to_f16(1.0f + 0x1.2p-11f), 0x3c01);
  uint16_t nan = eddy_rt_f32_to_f16(NAN);
  assert_int_equal(nan & 0x7c00, 0x7c00);
  assert_true((nan & 0x3ff) != 0);
  assert_true(eddy_rt_f16_to_f32(0x3c00) == 1.0f);
  assert_true(eddy_rt_f16_to_f32(0x0001) == 0x1p-24f);
  assert_true(eddy_rt_f16_to_f32(0x7bff) == 65504.0f);
  assert_true(isinf(eddy_rt_f16_to_f32(0xfc00)));
  assert_true(isnan(eddy_rt_f16_to_f32(0x7e00)));
  // Every finite f16 round-trips through f32.
  for (uint32_t h = 0; h < 0x10000; h++) {
    if ((h & 0x7c00) == 0x7c00)
      continue;
    assert_int_equal(eddy_rt_f32_to_f16(eddy_rt_f16_to_f32((uint16_t)h)), h);
  }
  assert_int_equal(eddy_rt_f32_to_bf16(1.0f), 0x3f80);
  assert_int_equal(eddy_rt_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80); // tie: even
  assert_int_equal(eddy_rt_f32_to_bf16(1.0f + 0x3p-8f), 0x3f82); // tie: even
  assert_int_equal(eddy_rt_f32_to_bf16(1.0f + 0x1.2p-8f), 0x3f81);
  assert_true(isnan(eddy_rt_bf16_to_f32(eddy_rt_f32_to_bf16(NAN))));
  assert_true(eddy_rt_bf16_to_f32(0xc040) == -3.0f);
}

typedef struct counting_alloc {
  int allocs, frees;
  size_t live;
} counting_alloc_t;

static void *counting_alloc_fn(void *user, size_t size, size_t align) {
  counting_alloc_t *c = user;
  c->allocs++;
  c->live += size;
  void *p = NULL;
  if (posix_memalign(&p, align, size ? size : 1) != 0)
    return NULL;
  return p;
}

static void counting_free_fn(void *user, void *ptr, size_t size) {
  counting_alloc_t *c = user;
  c->frees++;
  c->live -= size;
  free(ptr);
}

static void test_allocator_hook_and_alignment(void **state) {
  (void)state;
  counting_alloc_t c = {0, 0, 0};
  eddy_rt_ctx_options_t o = eddy_rt_ctx_options_default();
  o.allocator.alloc = counting_alloc_fn;
  o.allocator.free = counting_free_fn;
  o.allocator.user = &c;
  eddy_rt_ctx_t *ctx;
  RTT_OK(eddy_rt_ctx_create(&o, &ctx));
  int64_t dims[2] = {3, 5};
  eddy_rt_tensor_t t;
  RTT_OK(eddy_rt_tensor_create(ctx, EDDY_RT_F32, 2, dims, "test", &t));
  assert_int_equal((uintptr_t)t.data % EDDY_RT_ALIGN, 0);
  assert_int_equal(c.allocs, 1);
  assert_true(eddy_rt_ctx_bytes_in_use(ctx) >= 60);
  assert_int_equal((size_t)eddy_rt_ctx_bytes_in_use(ctx), c.live);
  assert_true(eddy_rt_tensor_is_contiguous(&t));
  assert_int_equal(t.strides[0], 5);
  assert_int_equal(t.strides[1], 1);
  for (int64_t i = 0; i < 15; i++)
    assert_true(eddy_rt_tensor_get_f64(&t, i) == 0.0); // zero-filled
  eddy_rt_tensor_release(&t);
  assert_int_equal(c.frees, 1);
  assert_int_equal(eddy_rt_ctx_bytes_in_use(ctx), 0);
  assert_true(eddy_rt_ctx_peak_bytes(ctx) >= 60);
  eddy_rt_ctx_destroy(ctx);

  // An allocator with only one hook is refused.
  o.allocator.free = NULL;
  RTT_ERR(eddy_rt_ctx_create(&o, &ctx), EDDY_RT_ERR_INVALID_ARGUMENT,
          "both alloc and free");
  o = eddy_rt_ctx_options_default();
  o.struct_size = 3;
  RTT_ERR(eddy_rt_ctx_create(&o, &ctx), EDDY_RT_ERR_INVALID_ARGUMENT,
          "ABI mismatch");
}

static void test_memory_limit(void **state) {
  (void)state;
  eddy_rt_ctx_options_t o = eddy_rt_ctx_options_default();
  o.memory_limit = 4096;
  eddy_rt_ctx_t *ctx;
  RTT_OK(eddy_rt_ctx_create(&o, &ctx));
  assert_int_equal(eddy_rt_ctx_memory_limit(ctx), 4096);
  int64_t big = 2000; // 8000 bytes of f32
  eddy_rt_tensor_t t;
  RTT_ERR(eddy_rt_tensor_create(ctx, EDDY_RT_F32, 1, &big, "my.op", &t),
          EDDY_RT_ERR_RESOURCE, "my.op", "memory limit of 4096 bytes");
  assert_null(t.data);
  assert_int_equal(eddy_rt_ctx_bytes_in_use(ctx), 0);
  // A kernel names itself.
  eddy_rt_tensor_t a = rtt_f(ctx, EDDY_RT_F32, "500", NULL), b;
  RTT_ERR(eddy_rt_unary(ctx, EDDY_RT_UNARY_EXP, &a, &b), EDDY_RT_ERR_RESOURCE,
          "core.exp", "memory limit");
  eddy_rt_ctx_set_memory_limit(ctx, 0); // unlimited
  RTT_OK(eddy_rt_unary(ctx, EDDY_RT_UNARY_EXP, &a, &b));
  eddy_rt_tensor_release(&a);
  eddy_rt_tensor_release(&b);
  assert_int_equal(eddy_rt_ctx_bytes_in_use(ctx), 0);
  // Raw allocation.
  void *p;
  eddy_rt_ctx_set_memory_limit(ctx, 100);
  RTT_ERR(eddy_rt_alloc(ctx, 101, "raw", &p), EDDY_RT_ERR_RESOURCE, "raw");
  RTT_OK(eddy_rt_alloc(ctx, 0, "raw", &p));
  assert_non_null(p);
  eddy_rt_free(ctx, p, 0);
  eddy_rt_ctx_destroy(ctx);
}

static void test_size_overflow(void **state) {
  (void)state;
  eddy_rt_ctx_t *ctx = rtt_ctx(1);
  int64_t dims[3] = {INT64_C(1) << 32, INT64_C(1) << 32, 2};
  eddy_rt_tensor_t t;
  RTT_ERR(eddy_rt_tensor_create(ctx, EDDY_RT_F32, 3, dims, "my.op", &t),
          EDDY_RT_ERR_RESOURCE, "my.op", "too large");
  // Element count fits, byte size does not.
  int64_t d1 = INT64_C(1) << 61;
  RTT_ERR(eddy_rt_tensor_create(ctx, EDDY_RT_F64, 1, &d1, "x", &t),
          EDDY_RT_ERR_RESOURCE, "overflows");
  // A zero dim makes any other dims fine.
  int64_t dz[3] = {INT64_C(1) << 40, 0, INT64_C(1) << 40};
  RTT_OK(eddy_rt_tensor_create(ctx, EDDY_RT_F32, 3, dz, "x", &t));
  assert_int_equal(eddy_rt_tensor_numel(&t), 0);
  eddy_rt_tensor_release(&t);
  // broadcast_to to a huge shape names the op.
  eddy_rt_tensor_t one = RTT_F(ctx, EDDY_RT_F32, "", 1.0), out;
  int64_t huge[2] = {INT64_C(1) << 40, INT64_C(1) << 40};
  RTT_ERR(eddy_rt_broadcast_to(ctx, &one, huge, 2, &out), EDDY_RT_ERR_RESOURCE,
          "core.broadcast_to", "too large");
  eddy_rt_tensor_release(&one);
  int64_t neg = -1;
  RTT_ERR(eddy_rt_tensor_create(ctx, EDDY_RT_F32, 1, &neg, "x", &t),
          EDDY_RT_ERR_INVALID_ARGUMENT, "expected >= 0");
  int64_t many[EDDY_RT_MAX_RANK + 1] = {0};
  RTT_ERR(eddy_rt_tensor_create(ctx, EDDY_RT_F32, EDDY_RT_MAX_RANK + 1, many,
                                "x", &t),
          EDDY_RT_ERR_UNSUPPORTED, "rank 17");
  assert_int_equal(eddy_rt_ctx_bytes_in_use(ctx), 0);
  eddy_rt_ctx_destroy(ctx);
}

/// An empty tensor may have huge other dims; no kernel may overflow on them.
static void test_empty_with_huge_dims(void **state) {
  (void)state;
  eddy_rt_ctx_t *ctx = rtt_ctx(2);
  const int64_t H = INT64_C(1) << 40;
  int64_t d[3] = {H, H, 0};
  eddy_rt_tensor_t x, out;
  RTT_OK(eddy_rt_tensor_create(ctx, EDDY_RT_F32, 3, d, "x", &x));
  RTT_OK(eddy_rt_unary(ctx, EDDY_RT_UNARY_EXP, &x, &out));
  eddy_rt_tensor_release(&out);
  RTT_OK(eddy_rt_binary(ctx, EDDY_RT_BINARY_ADD, &x, &x, &out));
  eddy_rt_tensor_release(&out);
  RTT_OK(eddy_rt_transpose(ctx, &x, (int64_t[]){2, 0, 1}, 3, &out));
  eddy_rt_tensor_release(&out);
  RTT_ERR(eddy_rt_reshape(ctx, &x, (int64_t[]){0, -1}, 2, &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "-1 cannot be inferred");
  RTT_OK(eddy_rt_reshape(ctx, &x, (int64_t[]){H, 0, H}, 3, &out));
  eddy_rt_tensor_release(&out);
  RTT_OK(eddy_rt_reduce(ctx, EDDY_RT_REDUCE_SUM, &x, (int64_t[]){0, 1}, 2,
                        false, &out));
  assert_int_equal(out.rank, 1);
  assert_int_equal(out.dims[0], 0);
  eddy_rt_tensor_release(&out);
  RTT_ERR(eddy_rt_reduce(ctx, EDDY_RT_REDUCE_SUM, &x, (int64_t[]){2}, 1, false,
                         &out),
          EDDY_RT_ERR_RESOURCE, "core.reduce_sum", "too large");
  RTT_OK(eddy_rt_iota(ctx, EDDY_RT_I64, 3, d, 0, &out));
  eddy_rt_tensor_release(&out);
  eddy_rt_tensor_t idx = RTT_I(ctx, EDDY_RT_I32, "2", 0, 1);
  RTT_OK(eddy_rt_gather(ctx, &x, &idx, 0, &out));
  assert_int_equal(out.rank, 3);
  assert_int_equal(out.dims[0], 2);
  eddy_rt_tensor_release(&out);
  eddy_rt_tensor_release(&idx);
  int64_t ad[2] = {0, H}, bd[2] = {H, 0};
  eddy_rt_tensor_t a, b;
  RTT_OK(eddy_rt_tensor_create(ctx, EDDY_RT_F32, 2, ad, "a", &a));
  RTT_OK(eddy_rt_tensor_create(ctx, EDDY_RT_F32, 2, bd, "b", &b));
  RTT_OK(eddy_rt_matmul(ctx, &a, &b, false, false, &out));
  eddy_rt_tensor_release(&out);
  RTT_ERR(eddy_rt_matmul(ctx, &b, &a, false, false, &out),
          EDDY_RT_ERR_RESOURCE, "core.matmul", "too large");
  eddy_rt_elem_shape_t es;
  assert_true(eddy_rt_elem_shape_make(2, (int64_t[]){H, H}, &es));
  eddy_rt_list_t *l;
  RTT_OK(eddy_rt_list_empty(ctx, EDDY_RT_F32, &es, -1, &l));
  RTT_OK(eddy_rt_list_stack(ctx, l, &out));
  assert_int_equal(out.dims[0], 0);
  eddy_rt_tensor_release(&out);
  eddy_rt_list_release(l);
  eddy_rt_tensor_release(&a);
  eddy_rt_tensor_release(&b);
  eddy_rt_tensor_release(&x);
  assert_int_equal(eddy_rt_ctx_bytes_in_use(ctx), 0);
  eddy_rt_ctx_destroy(ctx);
}

static void test_descriptors(void **state) {
  (void)state;
  eddy_rt_ctx_t *ctx = rtt_ctx(1);
  float data[6] = {1, 2, 3, 4, 5, 6};
  int64_t dims[2] = {2, 3};
  eddy_rt_tensor_t w;
  RTT_OK(eddy_rt_tensor_wrap(EDDY_RT_F32, 2, dims, data, &w));
  assert_null(w.owner);
  RTT_OK(eddy_rt_tensor_validate(&w, "op", "w"));
  assert_true(eddy_rt_tensor_get_f64(&w, 4) == 5.0);
  // A transposed view: strides (1, 3).
  eddy_rt_tensor_t v = w;
  v.dims[0] = 3, v.dims[1] = 2, v.strides[0] = 1, v.strides[1] = 3;
  assert_false(eddy_rt_tensor_is_contiguous(&v));
  assert_true(eddy_rt_tensor_get_f64(&v, 1) == 4.0); // v[0][1] = data[3]
  eddy_rt_tensor_t c;
  RTT_OK(eddy_rt_copy(ctx, &v, &c));
  RTT_EXPECT_F(&c, EDDY_RT_F32, "3x2", 1, 4, 2, 5, 3, 6);
  assert_non_null(c.owner);
  assert_true(eddy_rt_buffer_is_unique(c.owner));
  eddy_rt_tensor_t s;
  eddy_rt_tensor_share(&c, &s);
  assert_false(eddy_rt_buffer_is_unique(c.owner));
  eddy_rt_tensor_release(&s);
  assert_true(eddy_rt_buffer_is_unique(c.owner));
  eddy_rt_tensor_release(&c);
  eddy_rt_tensor_release(&c); // released descriptors are empty: no-op
  eddy_rt_tensor_release(NULL);
  // Validation catches a bad descriptor.
  eddy_rt_tensor_t bad = w;
  bad.version = 99;
  RTT_ERR(eddy_rt_tensor_validate(&bad, "core.add", "operand 0"),
          EDDY_RT_ERR_INVALID_ARGUMENT, "core.add", "operand 0",
          "ABI mismatch");
  bad = w;
  bad.dtype = 42;
  RTT_ERR(eddy_rt_tensor_validate(&bad, "op", "x"),
          EDDY_RT_ERR_INVALID_ARGUMENT, "invalid dtype");
  bad = w;
  bad.data = NULL;
  RTT_ERR(eddy_rt_tensor_validate(&bad, "op", "x"),
          EDDY_RT_ERR_INVALID_ARGUMENT, "NULL data");
  bad = w;
  bad.dims[1] = -3;
  eddy_rt_tensor_t out;
  RTT_ERR(eddy_rt_unary(ctx, EDDY_RT_UNARY_NEG, &bad, &out),
          EDDY_RT_ERR_INVALID_ARGUMENT, "core.neg", "operand 0",
          "size -3");
  RTT_ERR(eddy_rt_tensor_wrap(EDDY_RT_F32, 2, dims, NULL, &w),
          EDDY_RT_ERR_INVALID_ARGUMENT, "NULL");
  char buf[64];
  assert_string_equal(eddy_rt_shape_format(2, dims, buf, sizeof(buf)),
                      "[2, 3]");
  assert_string_equal(eddy_rt_shape_format(0, dims, buf, sizeof(buf)), "[]");
  assert_int_equal(eddy_rt_ctx_bytes_in_use(ctx), 0);
  eddy_rt_ctx_destroy(ctx);
}

static void test_element_access(void **state) {
  (void)state;
  eddy_rt_ctx_t *ctx = rtt_ctx(1);
  eddy_rt_tensor_t t = RTT_I(ctx, EDDY_RT_I8, "3", 127, 128, -129);
  RTT_EXPECT_I(&t, EDDY_RT_I8, "3", 127, -128, 127); // set_i64 wraps
  eddy_rt_tensor_release(&t);
  t = RTT_F(ctx, EDDY_RT_I32, "4", 1e10, -1e10, NAN, -2.7);
  RTT_EXPECT_I(&t, EDDY_RT_I32, "4", INT32_MAX, INT32_MIN, 0, -2);
  eddy_rt_tensor_release(&t);
  t = RTT_F(ctx, EDDY_RT_I1, "3", 0.0, 2.0, NAN);
  RTT_EXPECT_I(&t, EDDY_RT_I1, "3", 0, 1, 1);
  eddy_rt_tensor_release(&t);
  eddy_rt_ctx_destroy(ctx);
}

/// ---- Thread pool ----------------------------------------------------------------

typedef struct pool_job {
  _Atomic int hits[1000];
  eddy_rt_pool_t *pool;
  _Atomic int nested;
} pool_job_t;

static void pool_task(void *arg, int64_t t) {
  pool_job_t *j = arg;
  atomic_fetch_add(&j->hits[t], 1);
}

static void nested_inner(void *arg, int64_t t) {
  (void)t;
  atomic_fetch_add(&((pool_job_t *)arg)->nested, 1);
}

static void nested_task(void *arg, int64_t t) {
  pool_job_t *j = arg;
  atomic_fetch_add(&j->hits[t], 1);
  // A parallel_for from inside a task must not deadlock.
  eddy_rt_pool_parallel_for(j->pool, 10, nested_inner, j);
}

static void test_pool(void **state) {
  (void)state;
  eddy_rt_pool_t *pool;
  RTT_OK(eddy_rt_pool_create(4, &pool));
  assert_int_equal(eddy_rt_pool_num_threads(pool), 4);
  assert_int_equal(eddy_rt_pool_num_threads(NULL), 1);
  static pool_job_t job;
  for (int round = 0; round < 50; round++) {
    memset(&job, 0, sizeof(job));
    job.pool = pool;
    eddy_rt_pool_parallel_for(pool, 1000, pool_task, &job);
    for (int i = 0; i < 1000; i++)
      assert_int_equal(atomic_load(&job.hits[i]), 1);
  }
  memset(&job, 0, sizeof(job));
  job.pool = pool;
  eddy_rt_pool_parallel_for(pool, 20, nested_task, &job);
  for (int i = 0; i < 20; i++)
    assert_int_equal(atomic_load(&job.hits[i]), 1);
  assert_int_equal(atomic_load(&job.nested), 200);
  // NULL pool and zero tasks.
  memset(&job, 0, sizeof(job));
  eddy_rt_pool_parallel_for(NULL, 5, pool_task, &job);
  eddy_rt_pool_parallel_for(pool, 0, pool_task, &job);
  assert_int_equal(atomic_load(&job.hits[4]), 1);
  // The hand-off time: none without workers; with them, within its cap
  // (2 us per measurement), whatever the machine.
  assert_int_equal(rt_pool_handoff_ns(NULL), 0);
  for (int round = 0; round < 200; round++) {
    memset(&job, 0, sizeof(job));
    eddy_rt_pool_parallel_for(pool, 4, pool_task, &job);
  }
  int64_t handoff = rt_pool_handoff_ns(pool);
  assert_true(handoff >= 0 && handoff <= 2000);
  eddy_rt_pool_destroy(pool);
  eddy_rt_pool_destroy(NULL);
  RTT_OK(eddy_rt_pool_create(1, &pool));
  eddy_rt_pool_parallel_for(pool, 4, pool_task, &job);
  assert_int_equal(rt_pool_handoff_ns(pool), 0);
  eddy_rt_pool_destroy(pool);

  eddy_rt_ctx_t *ctx = rtt_ctx(4);
  assert_non_null(eddy_rt_ctx_pool(ctx));
  eddy_rt_ctx_destroy(ctx);
  ctx = rtt_ctx(1);
  assert_null(eddy_rt_ctx_pool(ctx));
  eddy_rt_ctx_destroy(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_status),
      cmocka_unit_test(test_dtypes),
      cmocka_unit_test(test_half_conversions),
      cmocka_unit_test(test_allocator_hook_and_alignment),
      cmocka_unit_test(test_memory_limit),
      cmocka_unit_test(test_size_overflow),
      cmocka_unit_test(test_empty_with_huge_dims),
      cmocka_unit_test(test_descriptors),
      cmocka_unit_test(test_element_access),
      cmocka_unit_test(test_pool),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/// Helpers shared by the runtime's cmocka tests: build tensors from literal
/// values, compare results, check errors.
#ifndef EDDY_TESTS_UNIT_RUNTIME_RT_TEST_H
#define EDDY_TESTS_UNIT_RUNTIME_RT_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "runtime/eddyrt.h"
#include "runtime/kernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/// Parses "2x3" (or "" for a scalar) into dims; returns the rank.
static inline int32_t rtt_dims(const char *s, int64_t *dims) {
  int32_t r = 0;
  while (*s) {
    char *end;
    dims[r++] = strtoll(s, &end, 10);
    s = *end == 'x' ? end + 1 : end;
  }
  return r;
}

static inline eddy_rt_ctx_t *rtt_ctx(int threads) {
  eddy_rt_ctx_options_t o = eddy_rt_ctx_options_default();
  o.num_threads = threads;
  eddy_rt_ctx_t *ctx = NULL;
  eddy_rt_status_t st = eddy_rt_ctx_create(&o, &ctx);
  assert_null(st);
  return ctx;
}

/// A new tensor of shape `shape` with values v[0..n) (converted like a cast
/// from f64; n may be 0 to leave zeros).
static inline eddy_rt_tensor_t rtt_f(eddy_rt_ctx_t *ctx, int32_t dt,
                                     const char *shape, const double *v) {
  int64_t dims[EDDY_RT_MAX_RANK];
  int32_t r = rtt_dims(shape, dims);
  eddy_rt_tensor_t t;
  eddy_rt_status_t st = eddy_rt_tensor_create(ctx, dt, r, dims, "test", &t);
  assert_null(st);
  if (v) {
    for (int64_t i = 0; i < eddy_rt_tensor_numel(&t); i++)
      eddy_rt_tensor_set_f64(&t, i, v[i]);
  }
  return t;
}

/// The same with exact int64 values (wrapped to the dtype).
static inline eddy_rt_tensor_t rtt_i(eddy_rt_ctx_t *ctx, int32_t dt,
                                     const char *shape, const int64_t *v) {
  int64_t dims[EDDY_RT_MAX_RANK] = {0};
  int32_t r = rtt_dims(shape, dims);
  eddy_rt_tensor_t t;
  eddy_rt_status_t st = eddy_rt_tensor_create(ctx, dt, r, dims, "test", &t);
  assert_null(st);
  if (v) {
    for (int64_t i = 0; i < eddy_rt_tensor_numel(&t); i++)
      eddy_rt_tensor_set_i64(&t, i, v[i]);
  }
  return t;
}

#define RTT_F(ctx, dt, shape, ...) rtt_f(ctx, dt, shape, (double[]){__VA_ARGS__})
#define RTT_I(ctx, dt, shape, ...)                                             \
  rtt_i(ctx, dt, shape, (int64_t[]){__VA_ARGS__})

static inline void rtt_shape(const eddy_rt_tensor_t *t, int32_t dt,
                             const char *shape) {
  int64_t dims[EDDY_RT_MAX_RANK];
  int32_t r = rtt_dims(shape, dims);
  assert_int_equal(t->dtype, dt);
  assert_int_equal(t->rank, r);
  for (int32_t i = 0; i < r; i++)
    assert_int_equal(t->dims[i], dims[i]);
}

/// Checks shape and values exactly (NaN equals NaN; -0 differs from +0).
static inline void rtt_expect_f(const eddy_rt_tensor_t *t, int32_t dt,
                                const char *shape, const double *v) {
  rtt_shape(t, dt, shape);
  for (int64_t i = 0; i < eddy_rt_tensor_numel(t); i++) {
    double got = eddy_rt_tensor_get_f64(t, i);
    if (isnan(v[i]) && isnan(got))
      continue;
    if (got != v[i] || signbit(got) != signbit(v[i])) {
      print_error("element %lld: got %.17g, expected %.17g\n", (long long)i,
                  got, v[i]);
      fail();
    }
  }
}

static inline void rtt_expect_i(const eddy_rt_tensor_t *t, int32_t dt,
                                const char *shape, const int64_t *v) {
  rtt_shape(t, dt, shape);
  for (int64_t i = 0; i < eddy_rt_tensor_numel(t); i++) {
    int64_t got = eddy_rt_tensor_get_i64(t, i);
    if (got != v[i]) {
      print_error("element %lld: got %lld, expected %lld\n", (long long)i,
                  (long long)got, (long long)v[i]);
      fail();
    }
  }
}

#define RTT_EXPECT_F(t, dt, shape, ...)                                        \
  rtt_expect_f(t, dt, shape, (double[]){__VA_ARGS__})
#define RTT_EXPECT_I(t, dt, shape, ...)                                        \
  rtt_expect_i(t, dt, shape, (int64_t[]){__VA_ARGS__})

/// Asserts st is an error with code whose message contains each of the
/// NULL-terminated substrings; destroys it.
static inline void rtt_expect_err(eddy_rt_status_t st, eddy_rt_code_t code,
                                  ...) {
  assert_non_null(st);
  const char *msg = eddy_rt_status_message(st);
  if (eddy_rt_status_code(st) != code) {
    print_error("code %d, expected %d: %s\n", (int)eddy_rt_status_code(st),
                (int)code, msg);
    fail();
  }
  va_list ap;
  va_start(ap, code);
  for (const char *s = va_arg(ap, const char *); s;
       s = va_arg(ap, const char *)) {
    if (!strstr(msg, s)) {
      print_error("message \"%s\" lacks \"%s\"\n", msg, s);
      fail();
    }
  }
  va_end(ap);
  eddy_rt_status_destroy(st);
}

#define RTT_ERR(st, code, ...) rtt_expect_err(st, code, __VA_ARGS__, NULL)
#define RTT_OK(st)                                                             \
  do {                                                                         \
    eddy_rt_status_t rtt_st_ = (st);                                           \
    if (rtt_st_) {                                                             \
      print_error("unexpected error: %s\n", eddy_rt_status_message(rtt_st_)); \
      eddy_rt_status_destroy(rtt_st_);                                         \
      fail();                                                                  \
    }                                                                          \
  } while (0)

/// Same dtype, shape and bytes.
static inline bool rtt_same(const eddy_rt_tensor_t *a,
                            const eddy_rt_tensor_t *b) {
  if (!eddy_rt_tensor_same_shape(a, b))
    return false;
  size_t es = eddy_rt_dtype_size(a->dtype);
  for (int64_t i = 0; i < eddy_rt_tensor_numel(a); i++) {
    if (memcmp(eddy_rt_tensor_elem_ptr(a, i), eddy_rt_tensor_elem_ptr(b, i),
               es) != 0)
      return false;
  }
  return true;
}

#endif

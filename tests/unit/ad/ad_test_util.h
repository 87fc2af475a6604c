/// Plumbing shared by the autodiff tests (tests/unit/ad/test_*.c): the
/// fixture (an IR context with every dialect and the generic passes, a
/// runtime context, the module under test and a scratch module), parsing
/// and verifying a module, and tensors made from doubles. Static inline
/// functions, since every tests/unit/*/test_*.c is built on its own;
/// include it after <cmocka.h>, with _POSIX_C_SOURCE 200809L defined.
#ifndef EDDY_TESTS_UNIT_AD_AD_TEST_UTIL_H
#define EDDY_TESTS_UNIT_AD_AD_TEST_UTIL_H

#include "dialects/dialects.h"
#include "ir/ir.h"
#include "ir/passes/passes.h"
#include "runtime/eval/eval.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fixture {
  eddy_ctx_t *ctx;
  eddy_rt_ctx_t *rt;
  eddy_module_t *m;   ///< the module under test (parse)
  eddy_module_t *m64; ///< a second module a test may create
} fixture_t;

static inline int setup(void **state) {
  fixture_t *f = calloc(1, sizeof(*f));
  assert_non_null(f);
  f->ctx = eddy_ir_ctx_create();
  eddy_dialects_register_all(f->ctx);
  eddy_passes_register_all(f->ctx);
  assert_null(eddy_rt_ctx_create(NULL, &f->rt));
  *state = f;
  return 0;
}

static inline int teardown(void **state) {
  fixture_t *f = *state;
  if (f->m)
    eddy_ir_module_destroy(f->m);
  if (f->m64)
    eddy_ir_module_destroy(f->m64);
  eddy_rt_ctx_destroy(f->rt);
  eddy_ir_ctx_destroy(f->ctx);
  free(f);
  return 0;
}

static inline void expect_ok(eddy_status_t st) {
  if (st) {
    eddy_status_print(st, stderr);
    eddy_status_destroy(st);
    fail();
  }
}

static inline void parse(fixture_t *f, const char *text) {
  expect_ok(eddy_ir_parse_module(f->ctx, "test", text, strlen(text), &f->m));
  expect_ok(eddy_ir_verify_module(f->m));
}

/// A tensor of dtype (an eddy_rt_dtype_t) from v[0..numel), rounded to it.
static inline eddy_eval_value_t tensor_of(fixture_t *f, int32_t dtype,
                                          int32_t rank, const int64_t *dims,
                                          const double *v) {
  eddy_rt_tensor_t t = eddy_rt_tensor_empty();
  assert_null(eddy_rt_tensor_create(f->rt, dtype, rank, dims, "test", &t));
  int64_t n = eddy_rt_tensor_numel(&t);
  for (int64_t i = 0; i < n; i++)
    eddy_rt_tensor_set_f64(&t, i, v[i]);
  return eddy_eval_value_from_tensor(&t);
}

#endif

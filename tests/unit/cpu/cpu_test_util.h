/// Plumbing shared by the CPU backend's tests (tests/unit/cpu/test_*.c):
/// the fixture (an IR context with every dialect and a runtime context,
/// which must hold no memory at teardown), parsing and verifying a module,
/// and running a function in the reference evaluator on tensors the caller
/// keeps. Each test keeps its own inputs and its own comparison. Static
/// inline functions, since every tests/unit/*/test_*.c is built on its own;
/// include it after <cmocka.h>, with _POSIX_C_SOURCE 200809L defined.
#ifndef EDDY_TESTS_UNIT_CPU_CPU_TEST_UTIL_H
#define EDDY_TESTS_UNIT_CPU_CPU_TEST_UTIL_H

#include "dialects/dialects.h"
#include "ir/ir.h"
#include "runtime/eval/eval.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fixture {
  eddy_ctx_t *ctx;
  eddy_rt_ctx_t *rt;
} fixture_t;

static inline int setup(void **state) {
  fixture_t *f = calloc(1, sizeof(*f));
  assert_non_null(f);
  f->ctx = eddy_ir_ctx_create();
  assert_non_null(f->ctx);
  eddy_dialects_register_all(f->ctx);
  assert_null(eddy_rt_ctx_create(NULL, &f->rt));
  *state = f;
  return 0;
}

/// setup, with a runtime context that keeps IEEE subnormals in compiled
/// code (which flushes them by default, as TensorFlow's kernels do), for
/// tests that compare compiled results bit for bit with the C library or
/// runtime/scalar.h.
static inline int setup_ieee(void **state) {
  setup(state);
  eddy_rt_ctx_set_flush_denormals(((fixture_t *)*state)->rt, false);
  return 0;
}

/// Fails the test when runtime memory is left (a tensor or list, outer or
/// inner, that was not released).
static inline int teardown(void **state) {
  fixture_t *f = *state;
  assert_int_equal(eddy_rt_ctx_bytes_in_use(f->rt), 0);
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

/// text parsed (as "test.eddy") and verified.
static inline eddy_module_t *parse(fixture_t *f, const char *text) {
  eddy_module_t *m = NULL;
  expect_ok(eddy_ir_parse_module(f->ctx, "test.eddy", text, strlen(text), &m));
  expect_ok(eddy_ir_verify_module(m));
  return m;
}

/// The most arguments run_evaluator passes.
#define CPU_TEST_MAX_ARGS 8

/// Runs func in the evaluator on args[0..n) (shared: the caller keeps its
/// references) into out[0..nres); the evaluator's status.
static inline eddy_status_t run_evaluator(fixture_t *f, const eddy_op_t *func,
                                          const eddy_rt_tensor_t *args,
                                          uint32_t n, eddy_eval_value_t *out,
                                          uint32_t nres) {
  assert_true(n <= CPU_TEST_MAX_ARGS);
  eddy_eval_value_t eargs[CPU_TEST_MAX_ARGS];
  for (uint32_t i = 0; i < n; i++) {
    eddy_rt_tensor_t copy;
    eddy_rt_tensor_share(&args[i], &copy);
    eargs[i] = eddy_eval_value_from_tensor(&copy);
  }
  eddy_status_t st = eddy_eval_func(f->rt, func, NULL, eargs, n, out, nres);
  for (uint32_t i = 0; i < n; i++)
    eddy_eval_value_release(&eargs[i]);
  return st;
}

#endif

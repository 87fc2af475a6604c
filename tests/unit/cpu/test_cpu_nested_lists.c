/// Lists of lists in compiled code (backend-cpu/emit_list.c with
/// runtime/entry_nested.c): every tl op on a `!tl.list<!tl.list<...>>`,
/// in and out of loops, and the gradient of nested loops, JIT-compiled and
/// compared with the reference evaluator; a failing op; and no runtime
/// memory left afterwards (teardown checks the context's bytes in use).
#define _POSIX_C_SOURCE 200809L
#include "autodiff/ad.h"
#include "backend-cpu/cpu.h"
#include "dialects/dialects.h"
#include "ir/ir.h"
#include "runtime/eval/eval.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cpu_test_util.h"

#define LL "!tl.list<!tl.list<tensor<3xf32>>>"
#define L "!tl.list<tensor<3xf32>>"
#define T "tensor<3xf32>"
#define I "tensor<i64>"

/// A loop pushes a two-item list per iteration onto a list of lists; then
/// get, pop, reserve, set and length on it, and a list of lists carried
/// through a second loop that pops it empty.
static const char k_ops[] =
    "module {\nfunc.func @f(%arg0: " T ") -> (" T ", " I ", " T ", " I ") {\n"
    "%z = \"core.constant\"() {value = dense<0> : " I "} : () -> " I "\n"
    "%one = \"core.constant\"() {value = dense<1> : " I "} : () -> " I "\n"
    "%e = \"tl.empty\"() : () -> " LL "\n"
    "%w:2 = \"ctl.while\"(%z, %e) ({\n"
    "^bb0(%t: " I ", %l: " LL "):\n"
    "%n = \"core.constant\"() {value = dense<3> : " I "} : () -> " I "\n"
    "%p = \"core.lt\"(%t, %n) : (" I ", " I ") -> tensor<i1>\n"
    "\"ctl.condition\"(%p) : (tensor<i1>) -> ()\n"
    "}, {\n"
    "^bb0(%t2: " I ", %l2: " LL "):\n"
    "%tf = \"core.cast\"(%t2) {dtype = \"f32\"} : (" I ") -> tensor<f32>\n"
    "%a = \"core.mul\"(%arg0, %tf) : (" T ", tensor<f32>) -> " T "\n"
    "%b = \"core.add\"(%arg0, %tf) : (" T ", tensor<f32>) -> " T "\n"
    "%in0 = \"tl.empty\"() : () -> " L "\n"
    "%in1 = \"tl.push_back\"(%in0, %a) : (" L ", " T ") -> " L "\n"
    "%in2 = \"tl.push_back\"(%in1, %b) : (" L ", " T ") -> " L "\n"
    "%l3 = \"tl.push_back\"(%l2, %in2) : (" LL ", " L ") -> " LL "\n"
    "%tn = \"core.add\"(%t2, %one) : (" I ", " I ") -> " I "\n"
    "\"ctl.yield\"(%tn, %l3) : (" I ", " LL ") -> ()\n"
    "}) : (" I ", " LL ") -> (" I ", " LL ")\n"
    // item 1 of the list of lists, its last tensor (x + 1)
    "%g = \"tl.get_item\"(%w#1, %one) : (" LL ", " I ") -> " L "\n"
    "%gp:2 = \"tl.pop_back\"(%g) : (" L ") -> (" L ", " T ")\n"
    // the last list pushed, its first tensor (2 x)
    "%q:2 = \"tl.pop_back\"(%w#1) : (" LL ") -> (" LL ", " L ")\n"
    "%y = \"tl.get_item\"(%q#1, %z) : (" L ", " I ") -> " T "\n"
    "%s = \"core.add\"(%gp#1, %y) : (" T ", " T ") -> " T "\n"
    // reserve 2, set item 0 to g (still two items), read back both
    "%two = \"core.constant\"() {value = dense<2> : " I "} : () -> " I "\n"
    "%r = \"tl.reserve\"(%two) : (" I ") -> " LL "\n"
    "%r2 = \"tl.set_item\"(%r, %z, %g) : (" LL ", " I ", " L ") -> " LL "\n"
    "%r0 = \"tl.get_item\"(%r2, %z) : (" LL ", " I ") -> " L "\n"
    "%r1 = \"tl.get_item\"(%r2, %one) : (" LL ", " I ") -> " L "\n"
    "%n0 = \"tl.length\"(%r0) : (" L ") -> " I "\n"
    "%n1 = \"tl.length\"(%r1) : (" L ") -> " I "\n"
    "%nr = \"tl.length\"(%r2) : (" LL ") -> " I "\n"
    "%c0 = \"core.mul\"(%n0, %two) : (" I ", " I ") -> " I "\n"
    "%c1 = \"core.add\"(%c0, %n1) : (" I ", " I ") -> " I "\n"
    "%c2 = \"core.mul\"(%c1, %two) : (" I ", " I ") -> " I "\n"
    "%cnt = \"core.add\"(%c2, %nr) : (" I ", " I ") -> " I "\n"
    // pop the remaining two lists in a loop, summing their first items
    "%zero = \"core.constant\"() {value = dense<0.0> : " T "} : () -> " T "\n"
    "%u:3 = \"ctl.while\"(%q#0, %zero, %z) ({\n"
    "^bb0(%m: " LL ", %acc: " T ", %k: " I "):\n"
    "%len = \"tl.length\"(%m) : (" LL ") -> " I "\n"
    "%more = \"core.gt\"(%len, %z) : (" I ", " I ") -> tensor<i1>\n"
    "\"ctl.condition\"(%more) : (tensor<i1>) -> ()\n"
    "}, {\n"
    "^bb0(%m2: " LL ", %acc2: " T ", %k2: " I "):\n"
    "%pp:2 = \"tl.pop_back\"(%m2) : (" LL ") -> (" LL ", " L ")\n"
    "%v = \"tl.get_item\"(%pp#1, %z) : (" L ", " I ") -> " T "\n"
    "%acc3 = \"core.add\"(%acc2, %v) : (" T ", " T ") -> " T "\n"
    "%k3 = \"core.add\"(%k2, %one) : (" I ", " I ") -> " I "\n"
    "\"ctl.yield\"(%pp#0, %acc3, %k3) : (" LL ", " T ", " I ") -> ()\n"
    "}) : (" LL ", " T ", " I ") -> (" LL ", " T ", " I ")\n"
    "\"func.return\"(%s, %cnt, %u#1, %u#2) : (" T ", " I ", " T ", " I
    ") -> ()\n}\n}\n";

/// Popping an empty list of lists fails at run time.
static const char k_pop_empty[] =
    "module {\nfunc.func @f(%arg0: " T ") -> " T " {\n"
    "%e = \"tl.empty\"() : () -> " LL "\n"
    "%in0 = \"tl.empty\"() : () -> " L "\n"
    "%in1 = \"tl.push_back\"(%in0, %arg0) : (" L ", " T ") -> " L "\n"
    "%l1 = \"tl.push_back\"(%e, %in1) : (" LL ", " L ") -> " LL "\n"
    "%p:2 = \"tl.pop_back\"(%l1) : (" LL ") -> (" LL ", " L ")\n"
    "%q:2 = \"tl.pop_back\"(%p#0) : (" LL ") -> (" LL ", " L ")\n"
    "%z = \"core.constant\"() {value = dense<0> : " I "} : () -> " I "\n"
    "%x = \"tl.get_item\"(%q#1, %z) : (" L ", " I ") -> " T "\n"
    "\"func.return\"(%x) : (" T ") -> ()\n}\n}\n";

/// Nested loops (an inner loop whose trip count depends on the outer
/// counter); their gradient accumulates a list of lists.
static const char k_nested[] =
    "module {\nfunc.func @nested(%arg0: tensor<2x2xf64>, %arg1: "
    "tensor<2x2xf64>) -> tensor<2x2xf64> {\n"
    "%z = \"core.constant\"() {value = dense<0> : " I "} : () -> " I "\n"
    "%r:2 = \"ctl.while\"(%z, %arg1) ({\n"
    "^bb0(%j: " I ", %s: tensor<2x2xf64>):\n"
    "%n = \"core.constant\"() {value = dense<3> : " I "} : () -> " I "\n"
    "%p = \"core.lt\"(%j, %n) : (" I ", " I ") -> tensor<i1>\n"
    "\"ctl.condition\"(%p) : (tensor<i1>) -> ()\n"
    "}, {\n"
    "^bb0(%j2: " I ", %s2: tensor<2x2xf64>):\n"
    "%one = \"core.constant\"() {value = dense<1> : " I "} : () -> " I "\n"
    "%jn = \"core.add\"(%j2, %one) : (" I ", " I ") -> " I "\n"
    "%in:2 = \"ctl.while\"(%z, %s2) ({\n"
    "^bb0(%k: " I ", %m: tensor<2x2xf64>):\n"
    "%q = \"core.lt\"(%k, %jn) : (" I ", " I ") -> tensor<i1>\n"
    "\"ctl.condition\"(%q) : (tensor<i1>) -> ()\n"
    "}, {\n"
    "^bb0(%k2: " I ", %m2: tensor<2x2xf64>):\n"
    "%mm = \"core.matmul\"(%m2, %arg0) : (tensor<2x2xf64>, tensor<2x2xf64>) "
    "-> tensor<2x2xf64>\n"
    "%th = \"core.tanh\"(%mm) : (tensor<2x2xf64>) -> tensor<2x2xf64>\n"
    "%kn = \"core.add\"(%k2, %one) : (" I ", " I ") -> " I "\n"
    "\"ctl.yield\"(%kn, %th) : (" I ", tensor<2x2xf64>) -> ()\n"
    "}) : (" I ", tensor<2x2xf64>) -> (" I ", tensor<2x2xf64>)\n"
    "\"ctl.yield\"(%jn, %in#1) : (" I ", tensor<2x2xf64>) -> ()\n"
    "}) : (" I ", tensor<2x2xf64>) -> (" I ", tensor<2x2xf64>)\n"
    "\"func.return\"(%r#1) : (tensor<2x2xf64>) -> ()\n}\n}\n";

/// Runs @entry of m compiled and in the evaluator on reproducible inputs in
/// [-0.5, 0.5); results must agree within 8 ulp (exactly for ints).
static void compare_with_eval(fixture_t *f, eddy_module_t *m,
                              const char *entry) {
  eddy_op_t *func = eddy_ir_module_lookup_func(m, entry);
  assert_non_null(func);
  const eddy_type_t *ft = eddy_ir_func_type(func);
  assert_true(ft->num_inputs <= 8 && ft->num_outputs <= 8);
  eddy_cpu_jit_t *jit = NULL;
  expect_ok(eddy_cpu_jit_create(m, entry, NULL, &jit));
  eddy_rt_tensor_t args[8], got[8];
  eddy_eval_value_t want[8];
  uint64_t seed = 11;
  for (uint32_t i = 0; i < ft->num_inputs; i++) {
    const eddy_type_t *t = ft->inputs[i];
    assert_null(eddy_rt_tensor_create(f->rt, (int32_t)t->dtype, t->rank,
                                      t->dims, "test", &args[i]));
    for (int64_t k = 0; k < eddy_rt_tensor_numel(&args[i]); k++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      eddy_rt_tensor_set_f64(&args[i], k,
                             (double)(seed >> 40) / 16777216.0 - 0.5);
    }
  }
  expect_ok(
      run_evaluator(f, func, args, ft->num_inputs, want, ft->num_outputs));
  expect_ok(eddy_cpu_jit_run(jit, f->rt, args, got));
  for (uint32_t r = 0; r < ft->num_outputs; r++) {
    const eddy_rt_tensor_t *w = &want[r].tensor;
    assert_int_equal(w->dtype, got[r].dtype);
    int64_t n = eddy_rt_tensor_numel(w);
    assert_int_equal(n, eddy_rt_tensor_numel(&got[r]));
    double ulp = w->dtype == EDDY_RT_F64 ? 0x1p-52 : 0x1p-23;
    for (int64_t i = 0; i < n; i++) {
      double a = eddy_rt_tensor_get_f64(w, i);
      double b = eddy_rt_tensor_get_f64(&got[r], i);
      bool fl = eddy_rt_dtype_is_float(w->dtype);
      if (fl ? !(fabs(a - b) <= 8 * ulp * fmax(fabs(a), 1e-300)) : a != b) {
        print_error("%s: result %u element %lld: evaluator %.17g, compiled "
                    "%.17g\n",
                    entry, r, (long long)i, a, b);
        fail();
      }
    }
    eddy_eval_value_release(&want[r]);
    eddy_rt_tensor_release(&got[r]);
  }
  for (uint32_t i = 0; i < ft->num_inputs; i++)
    eddy_rt_tensor_release(&args[i]);
  eddy_cpu_jit_destroy(jit);
}

static void test_ops(void **state) {
  fixture_t *f = *state;
  eddy_module_t *m = parse(f, k_ops);
  compare_with_eval(f, m, "f");
  eddy_ir_module_destroy(m);
}

static void test_pop_empty_fails(void **state) {
  fixture_t *f = *state;
  eddy_module_t *m = parse(f, k_pop_empty);
  eddy_cpu_jit_t *jit = NULL;
  expect_ok(eddy_cpu_jit_create(m, "f", NULL, &jit));
  float x[3] = {1, 2, 3};
  int64_t d = 3;
  eddy_rt_tensor_t arg, res[1];
  assert_null(eddy_rt_tensor_wrap(EDDY_RT_F32, 1, &d, x, &arg));
  char err[256] = "";
  int32_t code = eddy_cpu_jit_entry(jit)(f->rt, &arg, res, err, sizeof err);
  assert_int_not_equal(code, 0);
  if (!strstr(err, "tl.pop_back") || !strstr(err, "empty list")) {
    print_error("unexpected message: %s\n", err);
    fail();
  }
  eddy_cpu_jit_destroy(jit);
  eddy_ir_module_destroy(m);
}

/// The gradient of nested loops, and its own gradient (lists of lists in
/// loops of the first gradient), compiled.
static void test_nested_loop_gradients(void **state) {
  fixture_t *f = *state;
  eddy_module_t *m = parse(f, k_nested);
  size_t wrt[2] = {0, 1};
  expect_ok(eddy_ad_grad(m, "nested", wrt, 2, NULL, NULL));
  expect_ok(eddy_ir_verify_module(m));
  compare_with_eval(f, m, "nested_grad");
  expect_ok(eddy_ad_grad(m, "nested_grad", wrt, 2, NULL, NULL));
  expect_ok(eddy_ir_verify_module(m));
  compare_with_eval(f, m, "nested_grad_grad");
  eddy_ir_module_destroy(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_ops, setup, teardown),
      cmocka_unit_test_setup_teardown(test_pop_empty_fails, setup, teardown),
      cmocka_unit_test_setup_teardown(test_nested_loop_gradients, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

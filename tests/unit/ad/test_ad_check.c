/// The gradient checker on programs that compute in f32 and f16: the f64
/// copy it checks them through (types, constants, casts, lists, loops,
/// conditionals and calls promoted, results kept), the least precise dtype
/// it derives the tolerance from, a wrong gradient of an f32 program caught
/// by the comparison with the f64 one, per-argument reports, and the
/// arguments it refuses.
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "autodiff/ad.h"
#include "dialects/dialects.h"
#include "ir/ir.h"

#include "tests/unit/ad/ad_test_util.h"

static eddy_op_t *func(fixture_t *f, const char *name) {
  eddy_op_t *fn = eddy_ir_module_lookup_func(f->m, name);
  assert_non_null(fn);
  return fn;
}

static void release(eddy_eval_value_t *v, size_t n) {
  for (size_t i = 0; i < n; i++)
    eddy_eval_value_release(&v[i]);
}

/// An f32 program with every construct the promotion has to reach: a loop
/// over a TensorList read from an argument, writing another, a call, an if
/// in the loop body, float constants, a cast from an integer argument.
static const char k_program[] =
    "module {\n"
    "  func.func @cell(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>) -> tensor<3xf32> {\n"
    "    %0 = \"core.mul\"(%arg0, %arg1) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>\n"
    "    %1 = \"core.tanh\"(%0) : (tensor<3xf32>) -> tensor<3xf32>\n"
    "    \"func.return\"(%1) : (tensor<3xf32>) -> ()\n"
    "  }\n"
    "  func.func @f(%arg0: tensor<4x3xf32>, %arg1: tensor<3xf32>, %arg2: tensor<i32>) -> (tensor<3xf32>, tensor<f32>) {\n"
    "    %xs = \"tl.from_tensor\"(%arg0) : (tensor<4x3xf32>) -> !tl.list<tensor<3xf32>>\n"
    "    %z = \"core.constant\"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>\n"
    "    %n = \"core.constant\"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>\n"
    "    %o0 = \"tl.reserve\"(%n) : (tensor<i64>) -> !tl.list<tensor<3xf32>>\n"
    "    %r:3 = \"ctl.while\"(%z, %arg1, %o0) ({\n"
    "    ^bb0(%t: tensor<i64>, %h: tensor<3xf32>, %o: !tl.list<tensor<3xf32>>):\n"
    "      %p = \"core.lt\"(%t, %n) : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
    "      \"ctl.condition\"(%p) : (tensor<i1>) -> ()\n"
    "    }, {\n"
    "    ^bb0(%t2: tensor<i64>, %h2: tensor<3xf32>, %o2: !tl.list<tensor<3xf32>>):\n"
    "      %x = \"tl.get_item\"(%xs, %t2) : (!tl.list<tensor<3xf32>>, tensor<i64>) -> tensor<3xf32>\n"
    "      %c = \"ctl.call\"(%h2, %x) {callee = @cell} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>\n"
    "      %s = \"core.reduce_sum\"(%c) {axes = [0]} : (tensor<3xf32>) -> tensor<f32>\n"
    "      %zero = \"core.constant\"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>\n"
    "      %q = \"core.gt\"(%s, %zero) : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
    "      %y = \"ctl.if\"(%q) ({\n"
    "        %k = \"core.constant\"() {value = dense<[0.5, 0.25, 2.0]> : tensor<3xf32>} : () -> tensor<3xf32>\n"
    "        %a = \"core.mul\"(%c, %k) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>\n"
    "        \"ctl.yield\"(%a) : (tensor<3xf32>) -> ()\n"
    "      }, {\n"
    "        %b = \"core.add\"(%c, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>\n"
    "        \"ctl.yield\"(%b) : (tensor<3xf32>) -> ()\n"
    "      }) : (tensor<i1>) -> tensor<3xf32>\n"
    "      %o3 = \"tl.set_item\"(%o2, %t2, %y) : (!tl.list<tensor<3xf32>>, tensor<i64>, tensor<3xf32>) -> !tl.list<tensor<3xf32>>\n"
    "      %one = \"core.constant\"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>\n"
    "      %tn = \"core.add\"(%t2, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>\n"
    "      \"ctl.yield\"(%tn, %y, %o3) : (tensor<i64>, tensor<3xf32>, !tl.list<tensor<3xf32>>) -> ()\n"
    "    }) : (tensor<i64>, tensor<3xf32>, !tl.list<tensor<3xf32>>) -> (tensor<i64>, tensor<3xf32>, !tl.list<tensor<3xf32>>)\n"
    "    %st = \"tl.stack\"(%r#2) : (!tl.list<tensor<3xf32>>) -> tensor<4x3xf32>\n"
    "    %sum = \"core.reduce_sum\"(%st) {axes = [0, 1]} : (tensor<4x3xf32>) -> tensor<f32>\n"
    "    %sc = \"core.cast\"(%arg2) {dtype = \"f32\"} : (tensor<i32>) -> tensor<f32>\n"
    "    %w = \"core.mul\"(%sum, %sc) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n"
    "    \"func.return\"(%r#1, %w) : (tensor<3xf32>, tensor<f32>) -> ()\n"
    "  }\n"
    "  func.func @half(%arg0: tensor<3xf64>) -> tensor<3xf64> {\n"
    "    %0 = \"core.cast\"(%arg0) {dtype = \"f16\"} : (tensor<3xf64>) -> tensor<3xf16>\n"
    "    %1 = \"core.tanh\"(%0) : (tensor<3xf16>) -> tensor<3xf16>\n"
    "    %2 = \"core.cast\"(%1) {dtype = \"f64\"} : (tensor<3xf16>) -> tensor<3xf64>\n"
    "    %3 = \"core.mul\"(%2, %arg0) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>\n"
    "    \"func.return\"(%3) : (tensor<3xf64>) -> ()\n"
    "  }\n"
    "  func.func @brain(%arg0: tensor<2xbf16>) -> tensor<2xf32> {\n"
    "    %0 = \"core.cast\"(%arg0) {dtype = \"f32\"} : (tensor<2xbf16>) -> tensor<2xf32>\n"
    "    \"func.return\"(%0) : (tensor<2xf32>) -> ()\n"
    "  }\n"
    "  func.func @wide(%arg0: tensor<2xf64>) -> tensor<2xf64> {\n"
    "    %0 = \"core.exp\"(%arg0) : (tensor<2xf64>) -> tensor<2xf64>\n"
    "    \"func.return\"(%0) : (tensor<2xf64>) -> ()\n"
    "  }\n"
    "}\n";

static const int64_t k_xs_dims[2] = {4, 3}, k_h_dims[1] = {3};
static const double k_xs[12] = {0.3,  -0.7, 0.9, 0.45, 0.2,  -0.6,
                                -0.8, 0.35, 0.6, 0.1,  -0.4, 0.75};
static const double k_h[3] = {0.5, -0.25, 0.8};

/// f's arguments in f32 (xs, h, and the integer scale 3).
static void f_args(fixture_t *f, eddy_eval_value_t *args) {
  double three = 3;
  args[0] = tensor_of(f, EDDY_RT_F32, 2, k_xs_dims, k_xs);
  args[1] = tensor_of(f, EDDY_RT_F32, 1, k_h_dims, k_h);
  args[2] = tensor_of(f, EDDY_RT_I32, 0, NULL, &three);
}

static void test_float_dtype(void **state) {
  fixture_t *f = *state;
  parse(f, k_program);
  assert_int_equal(eddy_ad_func_float_dtype(func(f, "f")), EDDY_DT_F32);
  assert_int_equal(eddy_ad_func_float_dtype(func(f, "cell")), EDDY_DT_F32);
  /* f64 at the boundary, f16 inside (a cast target and a value) */
  assert_int_equal(eddy_ad_func_float_dtype(func(f, "half")), EDDY_DT_F16);
  assert_int_equal(eddy_ad_func_float_dtype(func(f, "brain")), EDDY_DT_BF16);
  assert_int_equal(eddy_ad_func_float_dtype(func(f, "wide")), EDDY_DT_F64);
  assert_true(eddy_ad_dtype_epsilon(EDDY_DT_F32) == 0x1p-23);
  assert_true(eddy_ad_dtype_epsilon(EDDY_DT_I32) == 0.0);
}

/// The copy has no f32 left anywhere (nested regions, lists, the callee, the
/// cast's target), verifies, and computes what the f32 program computes.
static void test_promote(void **state) {
  fixture_t *f = *state;
  parse(f, k_program);
  f->m64 = eddy_ir_module_create(f->ctx, NULL);
  eddy_op_t *f64 = NULL;
  expect_ok(eddy_ad_promote_f64(func(f, "f"), f->m64, &f64));
  assert_non_null(f64);
  assert_string_equal(eddy_ir_func_name(f64), "f");
  assert_non_null(eddy_ir_module_lookup_func(f->m64, "cell"));
  assert_null(eddy_ir_module_lookup_func(f->m64, "half")); // not called
  eddy_buf_t text;
  eddy_buf_init(&text);
  eddy_print_opts_t po = {0};
  eddy_ir_module_print(f->m64, &po, &text);
  assert_null(strstr(text.data, "f32"));
  assert_non_null(strstr(text.data, "!tl.list<tensor<3xf64>>"));
  assert_non_null(strstr(text.data, "{dtype = \"f64\"} : (tensor<i32>)"));
  assert_non_null(
      strstr(text.data, "dense<[5.0e-01, 2.5e-01, 2.0]> : tensor<3xf64>") ||
      strstr(text.data, "dense<[0.5, 0.25, 2.0]> : tensor<3xf64>"));
  eddy_buf_destroy(&text);
  /* The original is untouched. */
  assert_int_equal(eddy_ir_func_type(func(f, "f"))->inputs[0]->dtype,
                   EDDY_DT_F32);
  assert_int_equal(eddy_ad_func_float_dtype(f64), EDDY_DT_F64);

  /* A name the destination already has is an error. */
  eddy_op_t *again = NULL;
  eddy_status_t st = eddy_ad_promote_f64(func(f, "f"), f->m64, &again);
  assert_non_null(st);
  assert_non_null(strstr(eddy_status_message(st), "@f"));
  eddy_status_destroy(st);
  assert_null(again);

  eddy_eval_value_t args[3], args64[3], r[2] = {{0}}, r64[2] = {{0}};
  f_args(f, args);
  double three = 3;
  args64[0] = tensor_of(f, EDDY_RT_F64, 2, k_xs_dims, k_xs);
  args64[1] = tensor_of(f, EDDY_RT_F64, 1, k_h_dims, k_h);
  args64[2] = tensor_of(f, EDDY_RT_I32, 0, NULL, &three);
  expect_ok(eddy_eval_func(f->rt, func(f, "f"), NULL, args, 3, r, 2));
  expect_ok(eddy_eval_func(f->rt, f64, NULL, args64, 3, r64, 2));
  for (int k = 0; k < 2; k++) {
    assert_int_equal(r[k].tensor.dtype, EDDY_RT_F32);
    assert_int_equal(r64[k].tensor.dtype, EDDY_RT_F64);
    int64_t n = eddy_rt_tensor_numel(&r64[k].tensor);
    assert_int_equal(eddy_rt_tensor_numel(&r[k].tensor), n);
    for (int64_t i = 0; i < n; i++) {
      double a = eddy_rt_tensor_get_f64(&r[k].tensor, i);
      double b = eddy_rt_tensor_get_f64(&r64[k].tensor, i);
      assert_true(fabs(a - b) <= 1e-5 * (1 + fabs(b)));
    }
  }
  release(args, 3);
  release(args64, 3);
  release(r, 2);
  release(r64, 2);
}

/// An f32 program passes, through its f64 copy; its own f32 gradient agrees
/// with the f64 one to about f32's precision, not exactly.
static void test_check_f32_program(void **state) {
  fixture_t *f = *state;
  parse(f, k_program);
  size_t wrt[2] = {0, 1};
  eddy_op_t *gf = NULL;
  expect_ok(eddy_ad_grad(f->m, "f", wrt, 2, NULL, &gf));
  eddy_eval_value_t args[3];
  f_args(f, args);
  eddy_ad_check_result_t res;
  expect_ok(eddy_ad_check(f->rt, func(f, "f"), gf, wrt, 2, args, NULL, &res));
  assert_true(res.promoted);
  assert_int_equal(res.dtype, EDDY_DT_F32);
  assert_true(fabs(res.low_rtol - sqrt(0x1p-23)) < 1e-12);
  assert_int_equal(res.num_args, 2);
  for (size_t w = 0; w < 2; w++) {
    const eddy_ad_check_arg_t *a = &res.args[w];
    if (!a->ok)
      fprintf(stderr, "arg %zu: fd %.3g low %.3g\n", a->arg, a->fd_rel_err,
              a->low_rel_err);
    assert_int_equal(a->arg, wrt[w]);
    assert_true(a->ok);
    assert_true(a->fd_rel_err < 1e-8); // finite differences of the f64 copy
    assert_true(a->low_rel_err < 1e-5);
    assert_true(a->low_abs_err > 0); // f32 rounding is there to see
  }
  assert_true(res.ok);
  eddy_ad_check_result_destroy(&res);

  /* The integer argument is not differentiable: an error naming it. */
  size_t bad[2] = {0, 2};
  eddy_status_t st =
      eddy_ad_check(f->rt, func(f, "f"), gf, bad, 2, args, NULL, &res);
  assert_non_null(st);
  assert_non_null(strstr(eddy_status_message(st), "argument 2 'arg2'"));
  assert_non_null(strstr(eddy_status_message(st), "no gradient"));
  eddy_status_destroy(st);
  eddy_ad_check_result_destroy(&res);
  release(args, 3);
}

/// f16 inside an f64 function: the copy computes tanh in f64, and f16's
/// tolerance (sqrt(2^-10)) covers the rounding of the original.
static void test_check_f16_inside(void **state) {
  fixture_t *f = *state;
  parse(f, k_program);
  size_t wrt[1] = {0};
  eddy_op_t *gf = NULL;
  expect_ok(eddy_ad_grad(f->m, "half", wrt, 1, NULL, &gf));
  double x[3] = {0.3, -0.9, 1.2};
  eddy_eval_value_t args[1] = {tensor_of(f, EDDY_RT_F64, 1, k_h_dims, x)};
  eddy_ad_check_result_t res;
  expect_ok(
      eddy_ad_check(f->rt, func(f, "half"), gf, wrt, 1, args, NULL, &res));
  assert_true(res.promoted);
  assert_int_equal(res.dtype, EDDY_DT_F16);
  assert_true(res.ok);
  assert_true(res.args[0].fd_rel_err < 1e-8);
  assert_true(res.args[0].low_rel_err > 1e-5); // f16 rounding
  assert_true(res.args[0].low_rel_err < res.low_rtol);
  eddy_ad_check_result_destroy(&res);
  release(args, 1);
}

static const char k_scaled[] =
    "module {\n"
    "  func.func @g(%arg0: tensor<3xf32>) -> tensor<f32> {\n"
    "    %0 = \"core.mul\"(%arg0, %arg0) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>\n"
    "    %1 = \"core.reduce_sum\"(%0) {axes = [0]} : (tensor<3xf32>) -> tensor<f32>\n"
    "    \"func.return\"(%1) : (tensor<f32>) -> ()\n"
    "  }\n"
    "  func.func @off(%arg0: tensor<3xf32>) -> tensor<f32> {\n"
    "    %c = \"core.constant\"() {value = dense<1.001> : tensor<f32>} : () -> tensor<f32>\n"
    "    %0 = \"core.mul\"(%arg0, %arg0) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>\n"
    "    %1 = \"core.reduce_sum\"(%0) {axes = [0]} : (tensor<3xf32>) -> tensor<f32>\n"
    "    %2 = \"core.mul\"(%1, %c) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n"
    "    \"func.return\"(%2) : (tensor<f32>) -> ()\n"
    "  }\n"
    "  func.func @near(%arg0: tensor<3xf32>) -> tensor<f32> {\n"
    "    %c = \"core.constant\"() {value = dense<1.000001> : tensor<f32>} : () -> tensor<f32>\n"
    "    %0 = \"core.mul\"(%arg0, %arg0) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>\n"
    "    %1 = \"core.reduce_sum\"(%0) {axes = [0]} : (tensor<3xf32>) -> tensor<f32>\n"
    "    %2 = \"core.mul\"(%1, %c) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n"
    "    \"func.return\"(%2) : (tensor<f32>) -> ()\n"
    "  }\n"
    "  func.func @two(%arg0: tensor<f64>, %arg1: tensor<f64>) -> tensor<f64> {\n"
    "    %0 = \"core.mul\"(%arg0, %arg1) : (tensor<f64>, tensor<f64>) -> tensor<f64>\n"
    "    \"func.return\"(%0) : (tensor<f64>) -> ()\n"
    "  }\n"
    "  func.func @two_off(%arg0: tensor<f64>, %arg1: tensor<f64>) -> tensor<f64> {\n"
    "    %c = \"core.constant\"() {value = dense<0.01> : tensor<f64>} : () -> tensor<f64>\n"
    "    %0 = \"core.mul\"(%arg0, %arg1) : (tensor<f64>, tensor<f64>) -> tensor<f64>\n"
    "    %1 = \"core.mul\"(%arg1, %c) : (tensor<f64>, tensor<f64>) -> tensor<f64>\n"
    "    %2 = \"core.add\"(%0, %1) : (tensor<f64>, tensor<f64>) -> tensor<f64>\n"
    "    \"func.return\"(%2) : (tensor<f64>) -> ()\n"
    "  }\n"
    "}\n";

/// A wrong f32 gradient cannot hide behind the f64 copy: the gradient of
/// x.x * 1.001, given as the gradient of x.x, passes the finite differences
/// (they check the copy's own gradient) but not the comparison with it. Off
/// by 1e-6 relative, below what f32 can resolve over a program, it passes.
static void test_wrong_f32_gradient(void **state) {
  fixture_t *f = *state;
  parse(f, k_scaled);
  size_t wrt[1] = {0};
  eddy_op_t *g_off = NULL, *g_near = NULL;
  expect_ok(eddy_ad_grad(f->m, "off", wrt, 1, NULL, &g_off));
  expect_ok(eddy_ad_grad(f->m, "near", wrt, 1, NULL, &g_near));
  double x[3] = {0.7, -1.1, 0.4};
  eddy_eval_value_t args[1] = {tensor_of(f, EDDY_RT_F32, 1, k_h_dims, x)};
  eddy_ad_check_result_t res;
  expect_ok(eddy_ad_check(f->rt, func(f, "g"), g_off, wrt, 1, args, NULL, &res));
  assert_false(res.ok);
  assert_false(res.args[0].ok);
  assert_true(res.args[0].fd_rel_err < 1e-8);
  assert_true(res.args[0].low_rel_err > 5e-4);
  assert_true(res.args[0].low_rel_err < 2e-3);
  eddy_ad_check_result_destroy(&res);

  expect_ok(
      eddy_ad_check(f->rt, func(f, "g"), g_near, wrt, 1, args, NULL, &res));
  assert_true(res.ok);
  assert_true(res.args[0].low_rel_err > 1e-7);
  eddy_ad_check_result_destroy(&res);

  /* Tighter than f32 can be (an explicit tolerance): caught again. */
  eddy_ad_check_opts_t o = eddy_ad_check_opts_default();
  o.low_rtol = 1e-9;
  expect_ok(eddy_ad_check(f->rt, func(f, "g"), g_near, wrt, 1, args, &o, &res));
  assert_false(res.ok);
  eddy_ad_check_result_destroy(&res);
  release(args, 1);
}

/// Each argument is checked on its own: a gradient wrong only for the
/// second argument fails that argument alone.
static void test_per_argument(void **state) {
  fixture_t *f = *state;
  parse(f, k_scaled);
  size_t wrt[2] = {0, 1};
  eddy_op_t *g_off = NULL;
  expect_ok(eddy_ad_grad(f->m, "two_off", wrt, 2, NULL, &g_off));
  double a = 0.8, b = -1.3;
  eddy_eval_value_t args[2] = {tensor_of(f, EDDY_RT_F64, 0, NULL, &a),
                               tensor_of(f, EDDY_RT_F64, 0, NULL, &b)};
  eddy_ad_check_result_t res;
  expect_ok(
      eddy_ad_check(f->rt, func(f, "two"), g_off, wrt, 2, args, NULL, &res));
  assert_false(res.promoted);
  assert_false(res.ok);
  assert_int_equal(res.num_args, 2);
  assert_true(res.args[0].ok);
  assert_true(res.args[0].fd_rel_err < 1e-9);
  assert_false(res.args[1].ok);
  /* d/db is a + 0.01 instead of a: off by 0.01 / 0.81 */
  assert_true(fabs(res.args[1].fd_rel_err - 0.01 / 0.81) < 1e-3);
  assert_true(res.max_rel_err == res.args[1].fd_rel_err);
  eddy_ad_check_result_destroy(&res);
  release(args, 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_float_dtype, setup, teardown),
      cmocka_unit_test_setup_teardown(test_promote, setup, teardown),
      cmocka_unit_test_setup_teardown(test_check_f32_program, setup, teardown),
      cmocka_unit_test_setup_teardown(test_check_f16_inside, setup, teardown),
      cmocka_unit_test_setup_teardown(test_wrong_f32_gradient, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_per_argument, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/// autodiff through the C API: gradients of loops checked against finite
/// differences at explicit inputs (broadcasting dynamic shapes and reshapes
/// with run-time dims included),
/// gradients of gradients, the checker catching a wrong gradient, argument
/// errors, statistics, and the gradient surviving the optimization passes.
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
#include "ir/pass.h"
#include "ir/passes/passes.h"

#include "tests/unit/ad/ad_test_util.h"

static eddy_eval_value_t tensor(fixture_t *f, int32_t rank,
                                const int64_t *dims, const double *v) {
  return tensor_of(f, EDDY_RT_F64, rank, dims, v);
}

/// Differentiates `entry` for wrt and checks it at args.
static eddy_op_t *grad_and_check(fixture_t *f, const char *entry,
                                 const size_t *wrt, size_t nw,
                                 const eddy_eval_value_t *args) {
  eddy_op_t *gf = NULL;
  expect_ok(eddy_ad_grad(f->m, entry, wrt, nw, NULL, &gf));
  assert_non_null(gf);
  expect_ok(eddy_ir_verify_module(f->m));
  eddy_ad_check_result_t res;
  expect_ok(eddy_ad_check(f->rt, eddy_ir_module_lookup_func(f->m, entry), gf,
                          wrt, nw, args, NULL, &res));
  if (!res.ok)
    fprintf(stderr, "%s: fd %.17g vjp %.17g rel %.3g\n", entry, res.fd,
            res.vjp, res.max_rel_err);
  assert_true(res.ok);
  assert_true(res.max_rel_err < 1e-6);
  assert_false(res.promoted); // an f64 program is checked as it is
  eddy_ad_check_result_destroy(&res);
  return gf;
}

static const char k_poly[] =
    "module {\n"
    "  func.func @f(%arg0: tensor<f64>) -> tensor<f64> {\n"
    "    %0 = \"ctl.while\"(%arg0) ({\n"
    "    ^bb0(%arg1: tensor<f64>):\n"
    "      %1 = \"core.constant\"() {value = dense<8.0> : tensor<f64>} : () -> tensor<f64>\n"
    "      %2 = \"core.lt\"(%arg1, %1) : (tensor<f64>, tensor<f64>) -> tensor<i1>\n"
    "      \"ctl.condition\"(%2) : (tensor<i1>) -> ()\n"
    "    }, {\n"
    "    ^bb0(%arg2: tensor<f64>):\n"
    "      %3 = \"core.mul\"(%arg2, %arg2) : (tensor<f64>, tensor<f64>) -> tensor<f64>\n"
    "      \"ctl.yield\"(%3) : (tensor<f64>) -> ()\n"
    "    }) : (tensor<f64>) -> tensor<f64>\n"
    "    \"func.return\"(%0) : (tensor<f64>) -> ()\n"
    "  }\n"
    "}\n";

/// x = x * x while x < 8 from x = 1.5: 1.5 -> 2.25 -> 5.06 -> 25.6, so
/// y = x^8 and dy/dx = 8 x^7; and the second derivative 56 x^6.
static void test_poly_exact(void **state) {
  fixture_t *f = *state;
  parse(f, k_poly);
  size_t wrt[1] = {0};
  eddy_ad_stats_t stats;
  eddy_ad_stats_init(&stats);
  eddy_op_t *gf = NULL;
  expect_ok(eddy_ad_grad(f->m, "f", wrt, 1, &stats, &gf));
  assert_int_equal(stats.num_loops, 1);
  assert_int_equal(stats.loops[0].num_lists, 1);
  assert_int_equal(stats.loops[0].bytes_per_iteration, 8);
  eddy_ad_stats_destroy(&stats);

  double x = 1.5, one = 1.0;
  eddy_eval_value_t args[2] = {tensor(f, 0, NULL, &x), tensor(f, 0, NULL, &one)};
  eddy_eval_value_t res[2] = {{0}, {0}};
  expect_ok(eddy_eval_func(f->rt, gf, NULL, args, 2, res, 2));
  double x7 = x * x * x * x * x * x * x;
  assert_true(fabs(eddy_rt_tensor_get_f64(&res[0].tensor, 0) - x7 * x) < 1e-9);
  assert_true(fabs(eddy_rt_tensor_get_f64(&res[1].tensor, 0) - 8 * x7) < 1e-9);
  for (int i = 0; i < 2; i++)
    eddy_eval_value_release(&res[i]);

  /* second order: d/dx of f_grad's gradient output, seeds (0, 1) */
  size_t wrt2[1] = {0};
  eddy_op_t *ggf = NULL;
  expect_ok(eddy_ad_grad(f->m, "f_grad", wrt2, 1, NULL, &ggf));
  double zero = 0.0;
  eddy_eval_value_t a2[4] = {{0}, {0}, tensor(f, 0, NULL, &zero),
                             tensor(f, 0, NULL, &one)};
  eddy_eval_value_share(&args[0], &a2[0]);
  eddy_eval_value_share(&args[1], &a2[1]);
  eddy_eval_value_t r2[3] = {{0}, {0}, {0}};
  expect_ok(eddy_eval_func(f->rt, ggf, NULL, a2, 4, r2, 3));
  double x6 = x7 / x;
  assert_true(fabs(eddy_rt_tensor_get_f64(&r2[2].tensor, 0) - 56 * x6) < 1e-8);
  for (int i = 0; i < 4; i++)
    eddy_eval_value_release(&a2[i]);
  for (int i = 0; i < 3; i++)
    eddy_eval_value_release(&r2[i]);
  for (int i = 0; i < 2; i++)
    eddy_eval_value_release(&args[i]);
}

/// The checker reports a wrong gradient: f_grad of x*x used as the gradient
/// of the loop function.
static void test_checker_catches_mismatch(void **state) {
  fixture_t *f = *state;
  parse(f, "module {\n"
           "  func.func @sq(%arg0: tensor<f64>) -> tensor<f64> {\n"
           "    %0 = \"core.mul\"(%arg0, %arg0) : (tensor<f64>, tensor<f64>) -> tensor<f64>\n"
           "    \"func.return\"(%0) : (tensor<f64>) -> ()\n"
           "  }\n"
           "  func.func @cube(%arg0: tensor<f64>) -> tensor<f64> {\n"
           "    %0 = \"core.mul\"(%arg0, %arg0) : (tensor<f64>, tensor<f64>) -> tensor<f64>\n"
           "    %1 = \"core.mul\"(%0, %arg0) : (tensor<f64>, tensor<f64>) -> tensor<f64>\n"
           "    \"func.return\"(%1) : (tensor<f64>) -> ()\n"
           "  }\n"
           "}\n");
  size_t wrt[1] = {0};
  eddy_op_t *gsq = NULL;
  expect_ok(eddy_ad_grad(f->m, "sq", wrt, 1, NULL, &gsq));
  double x = 1.3;
  eddy_eval_value_t args[1] = {tensor(f, 0, NULL, &x)};
  eddy_ad_check_result_t res;
  expect_ok(eddy_ad_check(f->rt, eddy_ir_module_lookup_func(f->m, "cube"), gsq,
                          wrt, 1, args, NULL, &res));
  assert_false(res.ok);
  assert_false(res.args[0].ok);
  eddy_ad_check_result_destroy(&res);
  expect_ok(eddy_ad_check(f->rt, eddy_ir_module_lookup_func(f->m, "sq"), gsq,
                          wrt, 1, args, NULL, &res));
  assert_true(res.ok);
  eddy_ad_check_result_destroy(&res);
  eddy_eval_value_release(&args[0]);
}

/// Dynamic shapes with run-time broadcasting: b (?x1) and c (?) broadcast
/// against x (?x3) with ? = 1 for b and c and 2 for x.
static void test_dynamic_broadcast(void **state) {
  fixture_t *f = *state;
  parse(f,
        "module {\n"
        "  func.func @f(%arg0: tensor<?x3xf64>, %arg1: tensor<?x?xf64>, %arg2: tensor<?xf64>) -> tensor<?x3xf64> {\n"
        "    %0 = \"core.add\"(%arg0, %arg1) : (tensor<?x3xf64>, tensor<?x?xf64>) -> tensor<?x3xf64>\n"
        "    %1 = \"core.mul\"(%0, %arg2) : (tensor<?x3xf64>, tensor<?xf64>) -> tensor<?x3xf64>\n"
        "    %2 = \"core.tanh\"(%1) : (tensor<?x3xf64>) -> tensor<?x3xf64>\n"
        "    \"func.return\"(%2) : (tensor<?x3xf64>) -> ()\n"
        "  }\n"
        "}\n");
  int64_t dx[2] = {2, 3}, db[2] = {1, 1}, dc[1] = {1};
  double vx[6] = {0.1, -0.2, 0.3, 0.4, -0.5, 0.6}, vb[1] = {0.25},
         vc[1] = {0.7};
  eddy_eval_value_t args[3] = {tensor(f, 2, dx, vx), tensor(f, 2, db, vb),
                               tensor(f, 1, dc, vc)};
  size_t wrt[3] = {0, 1, 2};
  grad_and_check(f, "f", wrt, 3, args);
  for (int i = 0; i < 3; i++)
    eddy_eval_value_release(&args[i]);
}

/// core.reshape with dim operands (two dynamic dims) in a loop body: the
/// gradient reshapes back to the operand's run-time dims.
static void test_reshape_dim_operands(void **state) {
  fixture_t *f = *state;
  parse(f,
        "module {\n"
        "  func.func @f(%arg0: tensor<?x?xf64>) -> tensor<?x?xf64> {\n"
        "    %c0 = \"core.constant\"() {value = dense<0.0> : tensor<f64>} : () -> tensor<f64>\n"
        "    %0:2 = \"ctl.while\"(%c0, %arg0) ({\n"
        "    ^bb0(%i: tensor<f64>, %v: tensor<?x?xf64>):\n"
        "      %n = \"core.constant\"() {value = dense<2.0> : tensor<f64>} : () -> tensor<f64>\n"
        "      %p = \"core.lt\"(%i, %n) : (tensor<f64>, tensor<f64>) -> tensor<i1>\n"
        "      \"ctl.condition\"(%p) : (tensor<i1>) -> ()\n"
        "    }, {\n"
        "    ^bb0(%i: tensor<f64>, %v: tensor<?x?xf64>):\n"
        "      %d0 = \"core.dim\"(%v) {index = 0} : (tensor<?x?xf64>) -> tensor<i64>\n"
        "      %d1 = \"core.dim\"(%v) {index = 1} : (tensor<?x?xf64>) -> tensor<i64>\n"
        "      %r = \"core.reshape\"(%v, %d1, %d0) {shape = [-1, 1, -1]} : (tensor<?x?xf64>, tensor<i64>, tensor<i64>) -> tensor<?x1x?xf64>\n"
        "      %t = \"core.tanh\"(%r) : (tensor<?x1x?xf64>) -> tensor<?x1x?xf64>\n"
        "      %b = \"core.reshape\"(%t, %d0, %d1) {shape = [-1, -1]} : (tensor<?x1x?xf64>, tensor<i64>, tensor<i64>) -> tensor<?x?xf64>\n"
        "      %w = \"core.mul\"(%b, %v) : (tensor<?x?xf64>, tensor<?x?xf64>) -> tensor<?x?xf64>\n"
        "      %one = \"core.constant\"() {value = dense<1.0> : tensor<f64>} : () -> tensor<f64>\n"
        "      %j = \"core.add\"(%i, %one) : (tensor<f64>, tensor<f64>) -> tensor<f64>\n"
        "      \"ctl.yield\"(%j, %w) : (tensor<f64>, tensor<?x?xf64>) -> ()\n"
        "    }) : (tensor<f64>, tensor<?x?xf64>) -> (tensor<f64>, tensor<?x?xf64>)\n"
        "    \"func.return\"(%0#1) : (tensor<?x?xf64>) -> ()\n"
        "  }\n"
        "}\n");
  int64_t dx[2] = {2, 3};
  double vx[6] = {0.1, -0.2, 0.3, 0.4, -0.5, 0.6};
  eddy_eval_value_t args[1] = {tensor(f, 2, dx, vx)};
  size_t wrt[1] = {0};
  grad_and_check(f, "f", wrt, 1, args);
  eddy_eval_value_release(&args[0]);
}

/// reverse, cumsum and cumprod (exclusive and reverse too) on a dynamic
/// shape, against finite differences; argmax passes no gradient.
static void test_index_ops(void **state) {
  fixture_t *f = *state;
  parse(f,
        "module {\n"
        "  func.func @f(%arg0: tensor<?x3xf64>, %arg1: tensor<3xf64>) -> (tensor<?x3xf64>, tensor<3xi64>) {\n"
        "    %0 = \"core.reverse\"(%arg0) {axes = [0, 1]} : (tensor<?x3xf64>) -> tensor<?x3xf64>\n"
        "    %1 = \"core.mul\"(%0, %arg1) : (tensor<?x3xf64>, tensor<3xf64>) -> tensor<?x3xf64>\n"
        "    %2 = \"core.cumsum\"(%1) {axis = 0, exclusive = true, reverse = true} : (tensor<?x3xf64>) -> tensor<?x3xf64>\n"
        "    %3 = \"core.cumprod\"(%arg0) {axis = 1} : (tensor<?x3xf64>) -> tensor<?x3xf64>\n"
        "    %4 = \"core.cumprod\"(%1) {axis = -2, exclusive = true, reverse = true} : (tensor<?x3xf64>) -> tensor<?x3xf64>\n"
        "    %5 = \"core.cumsum\"(%3) {axis = 1} : (tensor<?x3xf64>) -> tensor<?x3xf64>\n"
        "    %6 = \"core.add\"(%2, %4) : (tensor<?x3xf64>, tensor<?x3xf64>) -> tensor<?x3xf64>\n"
        "    %7 = \"core.add\"(%6, %5) : (tensor<?x3xf64>, tensor<?x3xf64>) -> tensor<?x3xf64>\n"
        "    %8 = \"core.tanh\"(%7) : (tensor<?x3xf64>) -> tensor<?x3xf64>\n"
        "    %9 = \"core.argmax\"(%8) {axis = 0, dtype = \"i64\"} : (tensor<?x3xf64>) -> tensor<3xi64>\n"
        "    \"func.return\"(%8, %9) : (tensor<?x3xf64>, tensor<3xi64>) -> ()\n"
        "  }\n"
        "}\n");
  int64_t dx[2] = {3, 3}, dw[1] = {3};
  double vx[9] = {0.9, -0.7, 1.3, 0.4, -1.1, 0.6, 1.2, 0.8, -0.5},
         vw[3] = {0.5, -1.5, 0.75};
  eddy_eval_value_t args[2] = {tensor(f, 2, dx, vx), tensor(f, 1, dw, vw)};
  size_t wrt[2] = {0, 1};
  grad_and_check(f, "f", wrt, 2, args);
  for (int i = 0; i < 2; i++)
    eddy_eval_value_release(&args[i]);
}

/// scatter (duplicate indices, a dynamic dim before the axis) against
/// finite differences: its gradient gathers the adjoint back.
static void test_scatter(void **state) {
  fixture_t *f = *state;
  parse(f,
        "module {\n"
        "  func.func @f(%arg0: tensor<?x3x2xf64>) -> tensor<?x4x2xf64> {\n"
        "    %i = \"core.constant\"() {value = dense<[2, 0, 2]> : tensor<3xi32>} : () -> tensor<3xi32>\n"
        "    %0 = \"core.tanh\"(%arg0) : (tensor<?x3x2xf64>) -> tensor<?x3x2xf64>\n"
        "    %1 = \"core.scatter\"(%i, %0) {axis = 1, size = 4} : (tensor<3xi32>, tensor<?x3x2xf64>) -> tensor<?x4x2xf64>\n"
        "    %2 = \"core.mul\"(%1, %1) : (tensor<?x4x2xf64>, tensor<?x4x2xf64>) -> tensor<?x4x2xf64>\n"
        "    \"func.return\"(%2) : (tensor<?x4x2xf64>) -> ()\n"
        "  }\n"
        "}\n");
  int64_t dx[3] = {2, 3, 2};
  double vx[12] = {0.9, -0.7, 1.3, 0.4, -1.1, 0.6,
                   1.2, 0.8, -0.5, 0.3, -0.2, 0.7};
  eddy_eval_value_t args[1] = {tensor(f, 3, dx, vx)};
  size_t wrt[1] = {0};
  grad_and_check(f, "f", wrt, 1, args);
  eddy_eval_value_release(&args[0]);
}

/// scatter with a run-time size operand (core.dim of an argument), and a
/// gather along a dynamic axis whose gradient is such a scatter, to second
/// order: the updates' gradient gathers the adjoint back; the gather's
/// scatters it into the params' run-time size.
static void test_scatter_size(void **state) {
  fixture_t *f = *state;
  parse(f,
        "module {\n"
        "  func.func @f(%arg0: tensor<?x3x2xf64>, %arg1: tensor<?x5xf64>) -> (tensor<?x?x2xf64>, tensor<2x2xf64>) {\n"
        "    %i = \"core.constant\"() {value = dense<[2, 0, 2]> : tensor<3xi32>} : () -> tensor<3xi32>\n"
        "    %n = \"core.dim\"(%arg1) {index = 1} : (tensor<?x5xf64>) -> tensor<i64>\n"
        "    %0 = \"core.tanh\"(%arg0) : (tensor<?x3x2xf64>) -> tensor<?x3x2xf64>\n"
        "    %1 = \"core.scatter\"(%i, %0, %n) {axis = 1, size = -1} : (tensor<3xi32>, tensor<?x3x2xf64>, tensor<i64>) -> tensor<?x?x2xf64>\n"
        "    %2 = \"core.mul\"(%1, %1) : (tensor<?x?x2xf64>, tensor<?x?x2xf64>) -> tensor<?x?x2xf64>\n"
        "    %j = \"core.constant\"() {value = dense<[1, 1]> : tensor<2xi64>} : () -> tensor<2xi64>\n"
        "    %3 = \"core.gather\"(%arg1, %j) {axis = 0} : (tensor<?x5xf64>, tensor<2xi64>) -> tensor<2x5xf64>\n"
        "    %4 = \"core.slice\"(%3) {limit = [2, 4], start = [0, 2]} : (tensor<2x5xf64>) -> tensor<2x2xf64>\n"
        "    %5 = \"core.sin\"(%4) : (tensor<2x2xf64>) -> tensor<2x2xf64>\n"
        "    \"func.return\"(%2, %5) : (tensor<?x?x2xf64>, tensor<2x2xf64>) -> ()\n"
        "  }\n"
        "}\n");
  int64_t dx[3] = {2, 3, 2}, dw[2] = {3, 5};
  double vx[12] = {0.9, -0.7, 1.3, 0.4, -1.1, 0.6,
                   1.2, 0.8, -0.5, 0.3, -0.2, 0.7};
  double vw[15] = {0.1, 0.2, 0.3, 0.4, 0.5, -0.6, 0.7, -0.8,
                   0.9, 1.0, -1.1, 1.2, 1.3, 1.4, -1.5};
  eddy_eval_value_t args[2] = {tensor(f, 3, dx, vx), tensor(f, 2, dw, vw)};
  size_t wrt[2] = {0, 1};
  eddy_op_t *gf = grad_and_check(f, "f", wrt, 2, args);
  assert_string_equal(eddy_ir_func_name(gf), "f_grad");
  // f_grad(x, w, seeds): its gradient again.
  int64_t ds0[3] = {2, 5, 2}, ds1[2] = {2, 2};
  double vs0[20], vs1[4] = {0.5, -0.25, 1.0, 0.75};
  for (int i = 0; i < 20; i++)
    vs0[i] = 0.1 * (i % 7) - 0.3;
  eddy_eval_value_t args2[4] = {tensor(f, 3, dx, vx), tensor(f, 2, dw, vw),
                                tensor(f, 3, ds0, vs0),
                                tensor(f, 2, ds1, vs1)};
  grad_and_check(f, "f_grad", wrt, 2, args2);
  for (int i = 0; i < 2; i++)
    eddy_eval_value_release(&args[i]);
  for (int i = 0; i < 4; i++)
    eddy_eval_value_release(&args2[i]);
}

/// topk's values against finite differences (distinct inputs, so the
/// selection does not change under the perturbation), a dynamic row count.
static void test_topk(void **state) {
  fixture_t *f = *state;
  parse(f,
        "module {\n"
        "  func.func @f(%arg0: tensor<?x5xf64>) -> (tensor<?x3xf64>, tensor<?x3xi32>) {\n"
        "    %0:2 = \"core.topk\"(%arg0) {k = 3} : (tensor<?x5xf64>) -> (tensor<?x3xf64>, tensor<?x3xi32>)\n"
        "    %1 = \"core.mul\"(%0#0, %0#0) : (tensor<?x3xf64>, tensor<?x3xf64>) -> tensor<?x3xf64>\n"
        "    \"func.return\"(%1, %0#1) : (tensor<?x3xf64>, tensor<?x3xi32>) -> ()\n"
        "  }\n"
        "}\n");
  int64_t dx[2] = {2, 5};
  double vx[10] = {0.9, -0.7, 1.3, 0.4, -1.1, 0.6, 1.2, 0.8, -0.5, 0.3};
  eddy_eval_value_t args[1] = {tensor(f, 2, dx, vx)};
  size_t wrt[1] = {0};
  grad_and_check(f, "f", wrt, 1, args);
  eddy_eval_value_release(&args[0]);
}

/// Values i * 0.37 mod 1.9 - 0.9, spread and distinct (so no window's
/// maximum changes under the finite differences' steps).
static void spread(double *v, int n, double phase) {
  for (int i = 0; i < n; i++)
    v[i] = fmod(i * 0.37 + phase, 1.9) - 0.9;
}

/// conv2d with strides, dilations and uneven pads, and the two pools, on a
/// dynamic batch: first-order gradients against finite differences, and
/// second-order ones of the conv2d family (closed under differentiation),
/// of avg_pool and of max_pool.
static void test_window(void **state) {
  fixture_t *f = *state;
  parse(f,
        "module {\n"
        "  func.func @f(%arg0: tensor<?x5x6x2xf64>, %arg1: tensor<2x3x2x3xf64>) -> (tensor<?x3x3x3xf64>, tensor<?x3x3x2xf64>, tensor<?x3x2x2xf64>) {\n"
        "    %0 = \"core.conv2d\"(%arg0, %arg1) {strides = [2, 2], dilations = [1, 2], pads = [1, 0, 2, 1]} : (tensor<?x5x6x2xf64>, tensor<2x3x2x3xf64>) -> tensor<?x3x3x3xf64>\n"
        "    %1 = \"core.tanh\"(%0) : (tensor<?x3x3x3xf64>) -> tensor<?x3x3x3xf64>\n"
        "    %2 = \"core.max_pool\"(%arg0) {window = [2, 3], strides = [2, 2], pads = [0, 1, 1, 1]} : (tensor<?x5x6x2xf64>) -> tensor<?x3x3x2xf64>\n"
        "    %3 = \"core.mul\"(%2, %2) : (tensor<?x3x3x2xf64>, tensor<?x3x3x2xf64>) -> tensor<?x3x3x2xf64>\n"
        "    %4 = \"core.avg_pool\"(%arg0) {window = [3, 2], strides = [2, 3], pads = [1, 1, 1, 0]} : (tensor<?x5x6x2xf64>) -> tensor<?x3x2x2xf64>\n"
        "    %5 = \"core.mul\"(%4, %4) : (tensor<?x3x2x2xf64>, tensor<?x3x2x2xf64>) -> tensor<?x3x2x2xf64>\n"
        "    \"func.return\"(%1, %3, %5) : (tensor<?x3x3x3xf64>, tensor<?x3x3x2xf64>, tensor<?x3x2x2xf64>) -> ()\n"
        "  }\n"
        "  func.func @g(%arg0: tensor<2x5x6x2xf64>, %arg1: tensor<2x3x2x3xf64>) -> tensor<2x3x3x2xf64> {\n"
        "    %0 = \"core.conv2d\"(%arg0, %arg1) {strides = [2, 2], dilations = [1, 2], pads = [1, 0, 2, 1]} : (tensor<2x5x6x2xf64>, tensor<2x3x2x3xf64>) -> tensor<2x3x3x3xf64>\n"
        "    %1 = \"core.mul\"(%0, %0) : (tensor<2x3x3x3xf64>, tensor<2x3x3x3xf64>) -> tensor<2x3x3x3xf64>\n"
        "    %2 = \"core.avg_pool\"(%arg0) {window = [3, 2], strides = [2, 2], pads = [1, 1, 1, 0]} : (tensor<2x5x6x2xf64>) -> tensor<2x3x3x2xf64>\n"
        "    %3 = \"core.mul\"(%2, %2) : (tensor<2x3x3x2xf64>, tensor<2x3x3x2xf64>) -> tensor<2x3x3x2xf64>\n"
        "    %4 = \"core.reduce_sum\"(%1) {axes = [3]} : (tensor<2x3x3x3xf64>) -> tensor<2x3x3xf64>\n"
        "    %5 = \"core.reshape\"(%4) {shape = [2, 3, 3, 1]} : (tensor<2x3x3xf64>) -> tensor<2x3x3x1xf64>\n"
        "    %6 = \"core.mul\"(%3, %5) : (tensor<2x3x3x2xf64>, tensor<2x3x3x1xf64>) -> tensor<2x3x3x2xf64>\n"
        "    \"func.return\"(%6) : (tensor<2x3x3x2xf64>) -> ()\n"
        "  }\n"
        "  func.func @h(%arg0: tensor<2x5x6x2xf64>) -> tensor<2x3x3x2xf64> {\n"
        "    %0 = \"core.max_pool\"(%arg0) {window = [2, 3], strides = [2, 2], pads = [0, 1, 1, 1]} : (tensor<2x5x6x2xf64>) -> tensor<2x3x3x2xf64>\n"
        "    %1 = \"core.mul\"(%0, %0) : (tensor<2x3x3x2xf64>, tensor<2x3x3x2xf64>) -> tensor<2x3x3x2xf64>\n"
        "    \"func.return\"(%1) : (tensor<2x3x3x2xf64>) -> ()\n"
        "  }\n"
        "}\n");
  int64_t dx[4] = {2, 5, 6, 2}, dw[4] = {2, 3, 2, 3};
  double vx[120], vw[36];
  spread(vx, 120, 0.11);
  spread(vw, 36, 0.53);
  eddy_eval_value_t args[2] = {tensor(f, 4, dx, vx), tensor(f, 4, dw, vw)};
  size_t wrt[2] = {0, 1};
  grad_and_check(f, "f", wrt, 2, args);
  // g's gradient, then the gradient of that (its seed an argument too).
  grad_and_check(f, "g", wrt, 2, args);
  int64_t ds[4] = {2, 3, 3, 2};
  double vs[36];
  spread(vs, 36, 0.71);
  eddy_eval_value_t args2[3] = {args[0], args[1], tensor(f, 4, ds, vs)};
  size_t wrt2[3] = {0, 1, 2};
  grad_and_check(f, "g_grad", wrt2, 3, args2);
  // max_pool twice: max_pool_grad, then the two-operand max_pool (the
  // seed's elements at the maxima).
  grad_and_check(f, "h", wrt, 1, args);
  eddy_eval_value_t args3[2] = {args[0], args2[2]};
  grad_and_check(f, "h_grad", wrt2, 2, args3);
  eddy_eval_value_release(&args2[2]);
  for (int i = 0; i < 2; i++)
    eddy_eval_value_release(&args[i]);
}

/// An RNN-like loop with a captured weight, its gradient optimized by the
/// generic passes, and checked before and after.
static void test_optimized_loop(void **state) {
  fixture_t *f = *state;
  parse(f,
        "module {\n"
        "  func.func @f(%arg0: tensor<2x2xf64>, %arg1: tensor<2xf64>) -> tensor<2xf64> {\n"
        "    %0 = \"core.constant\"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>\n"
        "    %1:2 = \"ctl.while\"(%0, %arg1) ({\n"
        "    ^bb0(%arg2: tensor<i64>, %arg3: tensor<2xf64>):\n"
        "      %2 = \"core.constant\"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>\n"
        "      %3 = \"core.lt\"(%arg2, %2) : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
        "      \"ctl.condition\"(%3) : (tensor<i1>) -> ()\n"
        "    }, {\n"
        "    ^bb0(%arg4: tensor<i64>, %arg5: tensor<2xf64>):\n"
        "      %4 = \"core.reshape\"(%arg5) {shape = [2, 1]} : (tensor<2xf64>) -> tensor<2x1xf64>\n"
        "      %5 = \"core.matmul\"(%arg0, %4) : (tensor<2x2xf64>, tensor<2x1xf64>) -> tensor<2x1xf64>\n"
        "      %6 = \"core.reshape\"(%5) {shape = [2]} : (tensor<2x1xf64>) -> tensor<2xf64>\n"
        "      %7 = \"core.tanh\"(%6) : (tensor<2xf64>) -> tensor<2xf64>\n"
        "      %8 = \"core.constant\"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>\n"
        "      %9 = \"core.add\"(%arg4, %8) : (tensor<i64>, tensor<i64>) -> tensor<i64>\n"
        "      \"ctl.yield\"(%9, %7) : (tensor<i64>, tensor<2xf64>) -> ()\n"
        "    }) : (tensor<i64>, tensor<2xf64>) -> (tensor<i64>, tensor<2xf64>)\n"
        "    \"func.return\"(%1#1) : (tensor<2xf64>) -> ()\n"
        "  }\n"
        "}\n");
  int64_t dw[2] = {2, 2}, dh[1] = {2};
  double vw[4] = {0.5, -0.3, 0.2, 0.8}, vh[2] = {0.4, -0.6};
  eddy_eval_value_t args[2] = {tensor(f, 2, dw, vw), tensor(f, 1, dh, vh)};
  size_t wrt[2] = {0, 1};
  eddy_op_t *gf = grad_and_check(f, "f", wrt, 2, args);
  (void)gf;
  eddy_pm_opts_t po;
  eddy_ir_pm_opts_default(&po);
  po.verify_each = true;
  eddy_pass_manager_t *pm = eddy_ir_pm_create(f->ctx, &po);
  expect_ok(eddy_ir_pm_add_pipeline(pm, "shape-infer,canonicalize,cse,licm,dce"));
  expect_ok(eddy_ir_pm_run(pm, f->m));
  eddy_ir_pm_destroy(pm);
  eddy_ad_check_result_t res;
  expect_ok(eddy_ad_check(f->rt, eddy_ir_module_lookup_func(f->m, "f"),
                          eddy_ir_module_lookup_func(f->m, "f_grad"), wrt, 2,
                          args, NULL, &res));
  assert_true(res.ok);
  eddy_ad_check_result_destroy(&res);
  for (int i = 0; i < 2; i++)
    eddy_eval_value_release(&args[i]);
}

static void test_argument_errors(void **state) {
  fixture_t *f = *state;
  parse(f, "module {\n"
           "  func.func @f(%arg0: tensor<f64>, %arg1: tensor<i32>) -> tensor<f64> {\n"
           "    \"func.return\"(%arg0) : (tensor<f64>) -> ()\n"
           "  }\n"
           "}\n");
  size_t wrt[1] = {1};
  eddy_status_t st = eddy_ad_grad(f->m, "f", wrt, 1, NULL, NULL);
  assert_non_null(st);
  assert_int_equal(eddy_status_code(st), EDDY_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(eddy_status_message(st), "argument 1 'arg1'"));
  eddy_status_destroy(st);
  assert_null(eddy_ir_module_lookup_func(f->m, "f_grad"));
  size_t out[4], n = 0;
  eddy_op_t *fn = eddy_ir_module_lookup_func(f->m, "f");
  expect_ok(eddy_ad_parse_wrt("arg0,%arg1,1", fn, out, 4, &n));
  assert_int_equal(n, 3);
  assert_int_equal(out[1], 1);
  st = eddy_ad_parse_wrt("arg2", fn, out, 4, &n);
  assert_non_null(st);
  eddy_status_destroy(st);
  // "all": the float arguments only.
  expect_ok(eddy_ad_parse_wrt("all", fn, out, 4, &n));
  assert_int_equal(n, 1);
  assert_int_equal(out[0], 0);
  // Sampling fills what is not given and keeps what is.
  double given = 0.25;
  eddy_eval_value_t vals[2] = {tensor(f, 0, NULL, &given), {0}};
  expect_ok(eddy_ad_sample_args(f->rt, fn, 0.5, 1.5, 3, 7, 1, vals));
  assert_true(eddy_rt_tensor_get_f64(&vals[0].tensor, 0) == 0.25);
  assert_int_equal(vals[1].kind, EDDY_EVAL_TENSOR);
  assert_int_equal(eddy_rt_tensor_get_i64(&vals[1].tensor, 0), 7);
  for (int i = 0; i < 2; i++)
    eddy_eval_value_release(&vals[i]);
  // Names from arg_names work too.
  const char *names[2] = {"w", "x"};
  eddy_ir_func_set_names(fn, "arg_names", names, 2);
  expect_ok(eddy_ad_parse_wrt("x,w,arg0", fn, out, 4, &n));
  assert_int_equal(n, 3);
  assert_int_equal(out[0], 1);
  assert_int_equal(out[1], 0);
  st = eddy_ad_parse_wrt("y", fn, out, 4, &n);
  assert_non_null(st);
  assert_non_null(strstr(eddy_status_message(st), "'y' is not an argument"));
  eddy_status_destroy(st);
  // An argument named "all" is that argument.
  const char *all_names[2] = {"w", "all"};
  eddy_ir_func_set_names(fn, "arg_names", all_names, 2);
  expect_ok(eddy_ad_parse_wrt("all", fn, out, 4, &n));
  assert_int_equal(n, 1);
  assert_int_equal(out[0], 1);
  /* f_grad exists once made: a second request is an error */
  wrt[0] = 0;
  expect_ok(eddy_ad_grad(f->m, "f", wrt, 1, NULL, NULL));
  st = eddy_ad_grad(f->m, "f", wrt, 1, NULL, NULL);
  assert_non_null(st);
  eddy_status_destroy(st);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_poly_exact, setup, teardown),
      cmocka_unit_test_setup_teardown(test_checker_catches_mismatch, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_index_ops, setup, teardown),
      cmocka_unit_test_setup_teardown(test_scatter, setup, teardown),
      cmocka_unit_test_setup_teardown(test_scatter_size, setup, teardown),
      cmocka_unit_test_setup_teardown(test_topk, setup, teardown),
      cmocka_unit_test_setup_teardown(test_window, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dynamic_broadcast, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reshape_dim_operands, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_optimized_loop, setup, teardown),
      cmocka_unit_test_setup_teardown(test_argument_errors, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

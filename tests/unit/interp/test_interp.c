/// Unit tests of the dataflow interpreter: the "Implementation of Control Flow
/// in TensorFlow" note's evaluation rules one by one on small hand-written df
/// graphs (switch with dead data, merge of two dead inputs, exit from a nested
/// frame, next_iteration over 10^5 iterations in bounded memory), deadlock and
/// limit errors, results that do not depend on the number of workers, and
/// TensorList updates that do not copy the list they grow.
#include "dialects/dialects.h"
#include "ir/ir.h"
#include "lower/lower.h"
#include "runtime/eval/eval.h"
#include "runtime/interp/interp.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

typedef struct fixture {
  eddy_ctx_t *ctx;
  eddy_module_t *m;
  eddy_rt_ctx_t *rt;
} fixture_t;

static int setup(void **state) {
  fixture_t *f = calloc(1, sizeof(*f));
  assert_non_null(f);
  f->ctx = eddy_ir_ctx_create();
  assert_non_null(f->ctx);
  eddy_dialects_register_all(f->ctx);
  assert_null(eddy_rt_ctx_create(NULL, &f->rt));
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture_t *f = *state;
  eddy_ir_module_destroy(f->m);
  // Every value the runs made was released.
  assert_int_equal(eddy_rt_ctx_bytes_in_use(f->rt), 0);
  eddy_rt_ctx_destroy(f->rt);
  eddy_ir_ctx_destroy(f->ctx);
  free(f);
  return 0;
}

/// Parses and verifies text, lowers ctl to df, returns the function.
static const eddy_op_t *load(fixture_t *f, const char *text,
                             const char *name) {
  eddy_ir_module_destroy(f->m);
  f->m = NULL;
  eddy_status_t st =
      eddy_ir_parse_module(f->ctx, "test.eddy", text, strlen(text), &f->m);
  if (st)
    eddy_status_print(st, stderr);
  assert_null(st);
  assert_null(eddy_ir_verify_module(f->m));
  eddy_op_t *func = eddy_ir_module_lookup_func(f->m, name);
  assert_non_null(func);
  assert_null(eddy_lower_to_dataflow_func(func));
  st = eddy_ir_verify_op(func);
  if (st)
    eddy_status_print(st, stderr);
  assert_null(st);
  return func;
}

static eddy_eval_value_t scalar(fixture_t *f, eddy_dtype_t dt,
                                const char *text) {
  eddy_eval_value_t v;
  assert_null(eddy_eval_scalar_from_text(f->rt, dt, text, &v));
  return v;
}

/// Runs func with `workers` on args; returns the status, results in out.
static eddy_status_t run(fixture_t *f, const eddy_op_t *func, int32_t workers,
                         eddy_eval_value_t *args, size_t nargs,
                         eddy_eval_value_t *out, size_t nout,
                         eddy_interp_stats_t *stats) {
  eddy_interp_opts_t o = eddy_interp_opts_default();
  o.num_workers = workers;
  return eddy_interp_func(f->rt, func, &o, args, nargs, out, nout, stats);
}

static int64_t as_i64(const eddy_eval_value_t *v) {
  assert_int_equal(v->kind, EDDY_EVAL_TENSOR);
  return eddy_rt_tensor_get_i64(&v->tensor, 0);
}

static void release_all(eddy_eval_value_t *v, size_t n) {
  for (size_t i = 0; i < n; i++)
    eddy_eval_value_release(&v[i]);
}

static void assert_error_contains(eddy_status_t st, const char *text) {
  assert_non_null(st);
  if (!strstr(eddy_status_message(st), text)) {
    fprintf(stderr, "message: %s\nexpected: %s\n", eddy_status_message(st),
            text);
    fail();
  }
  eddy_status_destroy(st);
}

/// ---- Switch with dead data --------------------------------------------------

static const char k_switch_dead[] =
    "module {\n"
    "  func.func @f(%arg0: tensor<i64>, %arg1: tensor<i1>) -> (tensor<i64>, tensor<i32>) {\n"
    "    %0 = \"core.constant\"() {value = dense<false> : tensor<i1>} : () -> tensor<i1>\n"
    "    %1:2 = \"df.switch\"(%arg0, %0) : (tensor<i64>, tensor<i1>) -> (tensor<i64>, tensor<i64>)\n"
    "    %2:2 = \"df.switch\"(%1#1, %arg1) : (tensor<i64>, tensor<i1>) -> (tensor<i64>, tensor<i64>)\n"
    "    %3 = \"core.add\"(%2#1, %2#1) : (tensor<i64>, tensor<i64>) -> tensor<i64>\n"
    "    %4:2 = \"df.merge\"(%2#0, %3, %1#0) : (tensor<i64>, tensor<i64>, tensor<i64>) -> (tensor<i64>, tensor<i32>)\n"
    "    \"func.return\"(%4#0, %4#1) : (tensor<i64>, tensor<i32>) -> ()\n"
    "  }\n"
    "  func.func @g(%arg0: tensor<i64>, %arg1: tensor<i1>) -> tensor<i64> {\n"
    "    %0 = \"core.constant\"() {value = dense<false> : tensor<i1>} : () -> tensor<i1>\n"
    "    %1:2 = \"df.switch\"(%arg0, %0) : (tensor<i64>, tensor<i1>) -> (tensor<i64>, tensor<i64>)\n"
    "    %2:2 = \"df.switch\"(%1#1, %arg1) : (tensor<i64>, tensor<i1>) -> (tensor<i64>, tensor<i64>)\n"
    "    \"func.return\"(%2#0) : (tensor<i64>) -> ()\n"
    "  }\n"
    "}\n";

/// A switch whose data is dead makes both outputs dead whatever the
/// predicate: the add on its true side does not run, the merge takes its
/// third input.
static void test_switch_dead_data(void **state) {
  fixture_t *f = *state;
  const eddy_op_t *fn = load(f, k_switch_dead, "f");
  for (int p = 0; p < 2; p++) {
    eddy_eval_value_t args[2] = {scalar(f, EDDY_DT_I64, "7"),
                                 scalar(f, EDDY_DT_I1, p ? "true" : "false")};
    eddy_eval_value_t out[2];
    eddy_interp_stats_t stats;
    assert_null(run(f, fn, 1, args, 2, out, 2, &stats));
    assert_int_equal(as_i64(&out[0]), 7);
    assert_int_equal(as_i64(&out[1]), 2);
    // the inner switch and the add ran dead (no kernel)
    assert_true(stats.ops_dead >= 2);
    release_all(args, 2);
    release_all(out, 2);
  }
  const eddy_op_t *g = load(f, k_switch_dead, "g");
  eddy_eval_value_t args[2] = {scalar(f, EDDY_DT_I64, "7"),
                               scalar(f, EDDY_DT_I1, "false")};
  eddy_eval_value_t out[1];
  assert_error_contains(run(f, g, 1, args, 2, out, 1, NULL),
                        "result #0 of @g is dead");
  assert_int_equal(out[0].kind, EDDY_EVAL_NONE);
  release_all(args, 2);
}

/// ---- Merge of two dead inputs ---------------------------------------------

static const char k_merge_dead[] =
    "module {\n"
    "  func.func @f(%arg0: tensor<i64>, %arg1: tensor<i1>) -> (tensor<i64>, tensor<i32>) {\n"
    "    %0:2 = \"df.switch\"(%arg0, %arg1) : (tensor<i64>, tensor<i1>) -> (tensor<i64>, tensor<i64>)\n"
    "    %1 = \"core.neg\"(%0#0) : (tensor<i64>) -> tensor<i64>\n"
    "    %2:2 = \"df.merge\"(%0#0, %1) : (tensor<i64>, tensor<i64>) -> (tensor<i64>, tensor<i32>)\n"
    "    %3 = \"core.add\"(%2#0, %2#0) : (tensor<i64>, tensor<i64>) -> tensor<i64>\n"
    "    %4:2 = \"df.merge\"(%3, %0#1) : (tensor<i64>, tensor<i64>) -> (tensor<i64>, tensor<i32>)\n"
    "    \"func.return\"(%4#0, %4#1) : (tensor<i64>, tensor<i32>) -> ()\n"
    "  }\n"
    "}\n";

/// With the predicate true both inputs of the first merge are dead: it
/// fires dead (value_index dead too), the add after it runs dead, and the
/// second merge forwards the live true side. With false both inputs of the
/// first merge are live: TensorFlow would forward whichever came first (a
/// race), the interpreter refuses it, naming the merge.
static void test_merge_two_dead(void **state) {
  fixture_t *f = *state;
  const eddy_op_t *fn = load(f, k_merge_dead, "f");
  eddy_eval_value_t args[2] = {scalar(f, EDDY_DT_I64, "5"),
                               scalar(f, EDDY_DT_I1, "true")};
  eddy_eval_value_t out[2];
  assert_null(run(f, fn, 2, args, 2, out, 2, NULL));
  assert_int_equal(as_i64(&out[0]), 5);
  assert_int_equal(as_i64(&out[1]), 1);
  release_all(out, 2);
  eddy_eval_value_release(&args[1]);
  args[1] = scalar(f, EDDY_DT_I1, "false");
  assert_error_contains(run(f, fn, 2, args, 2, out, 2, NULL),
                        "'df.merge' op at test.eddy:5:5: inputs #0 and #1 are "
                        "both live in the function's root frame");
  release_all(args, 2);
}

/// ---- Exit from a nested frame -------------------------------------------------

static const char k_nested[] =
    "module {\n"
    "  func.func @f(%arg0: tensor<i64>) -> (tensor<i64>, tensor<i64>) {\n"
    "    %0 = \"core.constant\"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>\n"
    "    %1:2 = \"ctl.while\"(%0, %0) ({\n"
    "    ^bb0(%arg1: tensor<i64>, %arg2: tensor<i64>):\n"
    "      %2 = \"core.lt\"(%arg1, %arg0) : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
    "      \"ctl.condition\"(%2) : (tensor<i1>) -> ()\n"
    "    }, {\n"
    "    ^bb0(%arg3: tensor<i64>, %arg4: tensor<i64>):\n"
    "      %3:2 = \"ctl.while\"(%0, %arg4) ({\n"
    "      ^bb0(%arg5: tensor<i64>, %arg6: tensor<i64>):\n"
    "        %4 = \"core.le\"(%arg5, %arg3) : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
    "        \"ctl.condition\"(%4) : (tensor<i1>) -> ()\n"
    "      }, {\n"
    "      ^bb0(%arg7: tensor<i64>, %arg8: tensor<i64>):\n"
    "        %5 = \"core.constant\"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>\n"
    "        %6 = \"core.add\"(%arg7, %5) : (tensor<i64>, tensor<i64>) -> tensor<i64>\n"
    "        %7 = \"core.add\"(%arg8, %arg7) : (tensor<i64>, tensor<i64>) -> tensor<i64>\n"
    "        \"ctl.yield\"(%6, %7) : (tensor<i64>, tensor<i64>) -> ()\n"
    "      }) {parallel_iterations = 2} : (tensor<i64>, tensor<i64>) -> (tensor<i64>, tensor<i64>)\n"
    "      %8 = \"core.constant\"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>\n"
    "      %9 = \"core.add\"(%arg3, %8) : (tensor<i64>, tensor<i64>) -> tensor<i64>\n"
    "      \"ctl.yield\"(%9, %3#1) : (tensor<i64>, tensor<i64>) -> ()\n"
    "    }) {parallel_iterations = 3} : (tensor<i64>, tensor<i64>) -> (tensor<i64>, tensor<i64>)\n"
    "    \"func.return\"(%1#0, %1#1) : (tensor<i64>, tensor<i64>) -> ()\n"
    "  }\n"
    "}\n";

/// The inner loop's exits carry its results into the outer frame's
/// iteration that entered it (one inner frame instance per outer
/// iteration), and the outer exits carry them to the root.
static void test_exit_nested_frame(void **state) {
  fixture_t *f = *state;
  const eddy_op_t *fn = load(f, k_nested, "f");
  for (int32_t w = 1; w <= 4; w += 3) {
    eddy_eval_value_t args[1] = {scalar(f, EDDY_DT_I64, "6")};
    eddy_eval_value_t out[2];
    eddy_interp_stats_t stats;
    assert_null(run(f, fn, w, args, 1, out, 2, &stats));
    // sum over i < 6 of (0 + 1 + .. + i) = 0 + 1 + 3 + 6 + 10 + 15
    assert_int_equal(as_i64(&out[0]), 6);
    assert_int_equal(as_i64(&out[1]), 35);
    // the outer frame, one inner frame per outer iteration that ran the
    // body, and one (dead) for the last test
    assert_int_equal(stats.frames, 1 + 6 + 1);
    assert_true(stats.max_live_frames >= 2);
    release_all(args, 1);
    release_all(out, 2);
  }
}

/// ---- next_iteration over 10^5 iterations ---------------------------------------

static const char k_long[] =
    "module {\n"
    "  func.func @f(%arg0: tensor<i64>, %arg1: tensor<f32>) -> (tensor<i64>, tensor<4xf32>) {\n"
    "    %0 = \"core.constant\"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>\n"
    "    %1 = \"core.broadcast_to\"(%arg1) {shape = [4]} : (tensor<f32>) -> tensor<4xf32>\n"
    "    %2:2 = \"ctl.while\"(%0, %1) ({\n"
    "    ^bb0(%arg2: tensor<i64>, %arg3: tensor<4xf32>):\n"
    "      %3 = \"core.lt\"(%arg2, %arg0) : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
    "      \"ctl.condition\"(%3) : (tensor<i1>) -> ()\n"
    "    }, {\n"
    "    ^bb0(%arg4: tensor<i64>, %arg5: tensor<4xf32>):\n"
    "      %4 = \"core.constant\"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>\n"
    "      %5 = \"core.add\"(%arg4, %4) : (tensor<i64>, tensor<i64>) -> tensor<i64>\n"
    "      %6 = \"core.mul\"(%arg5, %arg1) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>\n"
    "      \"ctl.yield\"(%5, %6) : (tensor<i64>, tensor<4xf32>) -> ()\n"
    "    }) {parallel_iterations = 8} : (tensor<i64>, tensor<4xf32>) -> (tensor<i64>, tensor<4xf32>)\n"
    "    \"func.return\"(%2#0, %2#1) : (tensor<i64>, tensor<4xf32>) -> ()\n"
    "  }\n"
    "}\n";

/// Iterations are freed as they finish: 10^5 iterations keep at most
/// parallel_iterations (8) alive. With one worker the schedule is fixed and
/// the tensor memory peak is exactly that of 10^3 iterations; with two it
/// stays far below what 10^5 live iterations would take (each holds tensors
/// of 64-byte-aligned buffers, so 10^5 of them would be megabytes).
static void test_next_iteration_bounded_memory(void **state) {
  fixture_t *f = *state;
  const eddy_op_t *fn = load(f, k_long, "f");
  int64_t peaks[3];
  const char *counts[3] = {"1000", "100000", "100000"};
  const int32_t workers[3] = {1, 1, 2};
  for (int k = 0; k < 3; k++) {
    eddy_rt_ctx_destroy(f->rt);
    assert_null(eddy_rt_ctx_create(NULL, &f->rt));
    eddy_eval_value_t args[2] = {scalar(f, EDDY_DT_I64, counts[k]),
                                 scalar(f, EDDY_DT_F32, "1.0")};
    eddy_eval_value_t out[2];
    eddy_interp_stats_t stats;
    assert_null(run(f, fn, workers[k], args, 2, out, 2, &stats));
    int64_t n = k ? 100000 : 1000;
    assert_int_equal(as_i64(&out[0]), n);
    assert_int_equal(stats.iterations, n + 1);
    // the loop's iterations plus the root's one
    assert_true(stats.max_live_iterations <= 8 + 1);
    release_all(args, 2);
    release_all(out, 2);
    assert_int_equal(eddy_rt_ctx_bytes_in_use(f->rt), 0);
    peaks[k] = eddy_rt_ctx_peak_bytes(f->rt);
  }
  assert_int_equal(peaks[0], peaks[1]);
  assert_true(peaks[2] < 64 * 1024);
}

/// ---- Workers, deadlocks, limits ---------------------------------------------------

/// The same results with 1, 2 and 8 workers, bit for bit, and equal to the
/// evaluator's on the structured program.
static void test_workers_do_not_change_results(void **state) {
  fixture_t *f = *state;
  const eddy_op_t *fn = load(f, k_long, "f");
  eddy_eval_value_t args[2] = {scalar(f, EDDY_DT_I64, "37"),
                               scalar(f, EDDY_DT_F32, "1.25")};
  eddy_eval_value_t ref[2];
  assert_null(run(f, fn, 1, args, 2, ref, 2, NULL));
  int32_t ws[2] = {2, 8};
  for (int k = 0; k < 2; k++) {
    eddy_eval_value_t out[2];
    assert_null(run(f, fn, ws[k], args, 2, out, 2, NULL));
    assert_int_equal(as_i64(&out[0]), as_i64(&ref[0]));
    assert_memory_equal(out[1].tensor.data, ref[1].tensor.data, 4 * sizeof(float));
    release_all(out, 2);
  }
  // The evaluator on the structured form agrees.
  eddy_module_t *m = NULL;
  assert_null(eddy_ir_parse_module(f->ctx, "t", k_long, strlen(k_long), &m));
  eddy_eval_value_t ev[2];
  assert_null(eddy_eval_func(f->rt, eddy_ir_module_lookup_func(m, "f"), NULL,
                             args, 2, ev, 2));
  assert_memory_equal(ev[1].tensor.data, ref[1].tensor.data, 4 * sizeof(float));
  eddy_ir_module_destroy(m);
  release_all(ev, 2);
  release_all(ref, 2);
  release_all(args, 2);
}

static const char k_deadlock[] =
    "module {\n"
    "  func.func @f(%arg0: tensor<i64>) -> tensor<i64> {\n"
    "    %0 = \"df.enter\"(%arg0) {frame_name = \"w/\", is_constant = false, parallel_iterations = 10} : (tensor<i64>) -> tensor<i64>\n"
    "    %1 = \"df.enter\"(%arg0) {frame_name = \"w/\", is_constant = false, parallel_iterations = 10} : (tensor<i64>) -> tensor<i64>\n"
    "    %2:2 = \"df.merge\"(%0, %6) : (tensor<i64>, tensor<i64>) -> (tensor<i64>, tensor<i32>)\n"
    "    %3 = \"core.gt\"(%2#0, %1) : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
    "    %4:2 = \"df.switch\"(%2#0, %3) : (tensor<i64>, tensor<i1>) -> (tensor<i64>, tensor<i64>)\n"
    "    %5 = \"core.add\"(%4#0, %4#0) : (tensor<i64>, tensor<i64>) -> tensor<i64>\n"
    "    %6 = \"df.next_iteration\"(%5) : (tensor<i64>) -> tensor<i64>\n"
    "    %7 = \"df.exit\"(%4#1) : (tensor<i64>) -> tensor<i64>\n"
    "    \"func.return\"(%7) : (tensor<i64>) -> ()\n"
    "  }\n"
    "}\n";

/// The loop test compares with a value entered into iteration 0 only: in
/// iteration 1 it never arrives. The run ends with an error naming the op
/// and the frame instead of hanging, with any number of workers.
static void test_deadlock_is_an_error(void **state) {
  fixture_t *f = *state;
  const eddy_op_t *fn = load(f, k_deadlock, "f");
  for (int32_t w = 1; w <= 3; w += 2) {
    eddy_eval_value_t args[1] = {scalar(f, EDDY_DT_I64, "3")};
    eddy_eval_value_t out[1];
    assert_error_contains(run(f, fn, w, args, 1, out, 1, NULL),
                          "deadlock: 'core.gt' op at test.eddy:6:5 in frame "
                          "'w/' iteration 1 waits for operand #1");
    release_all(args, 1);
  }
}

static void test_iteration_and_time_limits(void **state) {
  fixture_t *f = *state;
  const eddy_op_t *fn = load(f, k_long, "f");
  eddy_eval_value_t args[2] = {scalar(f, EDDY_DT_I64, "1000000000"),
                               scalar(f, EDDY_DT_F32, "1.0")};
  eddy_eval_value_t out[2];
  eddy_interp_opts_t o = eddy_interp_opts_default();
  o.num_workers = 2;
  o.max_iterations = 50;
  assert_error_contains(
      eddy_interp_func(f->rt, fn, &o, args, 2, out, 2, NULL),
      "frame 'while_0/' iteration 51: the loop ran past the limit of 50 "
      "iterations");
  o.max_iterations = 0;
  o.timeout_ms = 50;
  assert_error_contains(
      eddy_interp_func(f->rt, fn, &o, args, 2, out, 2, NULL),
      "time limit of 50 ms");
  release_all(args, 2);
}

/// Structured ops must be lowered first.
static void test_ctl_needs_lowering(void **state) {
  fixture_t *f = *state;
  eddy_module_t *m = NULL;
  assert_null(eddy_ir_parse_module(f->ctx, "t.eddy", k_nested,
                                   strlen(k_nested), &m));
  eddy_eval_value_t args[1] = {scalar(f, EDDY_DT_I64, "2")};
  eddy_eval_value_t out[2];
  assert_error_contains(run(f, eddy_ir_module_lookup_func(m, "f"), 1, args, 1,
                            out, 2, NULL),
                        "must be lowered to dataflow first");
  eddy_ir_module_destroy(m);
  release_all(args, 1);
}

/// ---- TensorLists grown in place ----------------------------------------------------

/// n pushes (tl.push_back) and n writes (tl.set_item into a tl.reserve'd
/// list) of [i, i] in a loop; both lists are stacked. In @shared the list
/// has a second reader in the body that runs after the push (it resizes
/// the list to the length the push's result gives less one, a no-op).
static const char k_lists[] =
    "module {\n"
    "  func.func @f(%n: tensor<i64>) -> (tensor<?x2xf32>, tensor<?x2xf32>) {\n"
    "    %z = \"core.constant\"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>\n"
    "    %l0 = \"tl.empty\"() : () -> !tl.list<tensor<2xf32>>\n"
    "    %r0 = \"tl.reserve\"(%n) : (tensor<i64>) -> !tl.list<tensor<2xf32>>\n"
    "    %q:3 = \"ctl.while\"(%z, %l0, %r0) ({\n"
    "    ^bb0(%i: tensor<i64>, %l: !tl.list<tensor<2xf32>>, %r: !tl.list<tensor<2xf32>>):\n"
    "      %c = \"core.lt\"(%i, %n) : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
    "      \"ctl.condition\"(%c) : (tensor<i1>) -> ()\n"
    "    }, {\n"
    "    ^bb0(%i: tensor<i64>, %l: !tl.list<tensor<2xf32>>, %r: !tl.list<tensor<2xf32>>):\n"
    "      %one = \"core.constant\"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>\n"
    "      %i2 = \"core.add\"(%i, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>\n"
    "      %fi = \"core.cast\"(%i) {dtype = \"f32\"} : (tensor<i64>) -> tensor<f32>\n"
    "      %x = \"core.broadcast_to\"(%fi) {shape = [2]} : (tensor<f32>) -> tensor<2xf32>\n"
    "      %l2 = \"tl.push_back\"(%l, %x) : (!tl.list<tensor<2xf32>>, tensor<2xf32>) -> !tl.list<tensor<2xf32>>\n"
    "      %r2 = \"tl.set_item\"(%r, %i, %x) : (!tl.list<tensor<2xf32>>, tensor<i64>, tensor<2xf32>) -> !tl.list<tensor<2xf32>>\n"
    "      \"ctl.yield\"(%i2, %l2, %r2) : (tensor<i64>, !tl.list<tensor<2xf32>>, !tl.list<tensor<2xf32>>) -> ()\n"
    "    }) : (tensor<i64>, !tl.list<tensor<2xf32>>, !tl.list<tensor<2xf32>>) -> (tensor<i64>, !tl.list<tensor<2xf32>>, !tl.list<tensor<2xf32>>)\n"
    "    %a = \"tl.stack\"(%q#1) : (!tl.list<tensor<2xf32>>) -> tensor<?x2xf32>\n"
    "    %b = \"tl.stack\"(%q#2) : (!tl.list<tensor<2xf32>>) -> tensor<?x2xf32>\n"
    "    \"func.return\"(%a, %b) : (tensor<?x2xf32>, tensor<?x2xf32>) -> ()\n"
    "  }\n"
    "  func.func @shared(%n: tensor<i64>) -> (tensor<?x2xf32>, tensor<i64>) {\n"
    "    %z = \"core.constant\"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>\n"
    "    %l0 = \"tl.empty\"() : () -> !tl.list<tensor<2xf32>>\n"
    "    %q:3 = \"ctl.while\"(%z, %l0, %z) ({\n"
    "    ^bb0(%i: tensor<i64>, %l: !tl.list<tensor<2xf32>>, %s: tensor<i64>):\n"
    "      %c = \"core.lt\"(%i, %n) : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
    "      \"ctl.condition\"(%c) : (tensor<i1>) -> ()\n"
    "    }, {\n"
    "    ^bb0(%i: tensor<i64>, %l: !tl.list<tensor<2xf32>>, %s: tensor<i64>):\n"
    "      %one = \"core.constant\"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>\n"
    "      %i2 = \"core.add\"(%i, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>\n"
    "      %fi = \"core.cast\"(%i) {dtype = \"f32\"} : (tensor<i64>) -> tensor<f32>\n"
    "      %x = \"core.broadcast_to\"(%fi) {shape = [2]} : (tensor<f32>) -> tensor<2xf32>\n"
    "      %l2 = \"tl.push_back\"(%l, %x) : (!tl.list<tensor<2xf32>>, tensor<2xf32>) -> !tl.list<tensor<2xf32>>\n"
    "      %n2 = \"tl.length\"(%l2) : (!tl.list<tensor<2xf32>>) -> tensor<i64>\n"
    "      %sz = \"core.sub\"(%n2, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>\n"
    "      %lr = \"tl.resize\"(%l, %sz) : (!tl.list<tensor<2xf32>>, tensor<i64>) -> !tl.list<tensor<2xf32>>\n"
    "      %len = \"tl.length\"(%lr) : (!tl.list<tensor<2xf32>>) -> tensor<i64>\n"
    "      %s2 = \"core.add\"(%s, %len) : (tensor<i64>, tensor<i64>) -> tensor<i64>\n"
    "      \"ctl.yield\"(%i2, %l2, %s2) : (tensor<i64>, !tl.list<tensor<2xf32>>, tensor<i64>) -> ()\n"
    "    }) : (tensor<i64>, !tl.list<tensor<2xf32>>, tensor<i64>) -> (tensor<i64>, !tl.list<tensor<2xf32>>, tensor<i64>)\n"
    "    %a = \"tl.stack\"(%q#1) : (!tl.list<tensor<2xf32>>) -> tensor<?x2xf32>\n"
    "    \"func.return\"(%a, %q#2) : (tensor<?x2xf32>, tensor<i64>) -> ()\n"
    "  }\n"
    "}\n";

/// Row i of a stacked [n, 2] f32 result is [i, i].
static void assert_rows(const eddy_eval_value_t *v, int64_t n) {
  assert_int_equal(v->kind, EDDY_EVAL_TENSOR);
  assert_int_equal(v->tensor.rank, 2);
  assert_int_equal(v->tensor.dims[0], n);
  for (int64_t i = 0; i < 2 * n; i++)
    if (eddy_rt_tensor_get_f64(&v->tensor, i) != (double)(i / 2))
      fail_msg("element %lld is %g", (long long)i,
               eddy_rt_tensor_get_f64(&v->tensor, i));
}

/// A list carried by a loop moves through merge, switch, the update and
/// next_iteration with one reference, so tl.push_back and tl.set_item
/// grow it in place: over 10^4 and 10^5 iterations the updates copy at
/// most a few (empty) lists, not one per update (that was N(N-1)/2 items,
/// time quadratic in N). The statistics count the copies, not the clock.
/// A reader that has not run yet when the update runs keeps the list
/// shared: that update copies (and the last reader takes the list).
/// The results are exact (row i is [i, i]) with 1 and 2 workers.
static void test_list_updates_in_place(void **state) {
  fixture_t *f = *state;
  const eddy_op_t *fn = load(f, k_lists, "f");
  const char *counts[2] = {"10000", "100000"};
  for (int k = 0; k < 2; k++) {
    int64_t n = k ? 100000 : 10000;
    for (int32_t w = 1; w <= 2; w++) {
      eddy_eval_value_t args[1] = {scalar(f, EDDY_DT_I64, counts[k])};
      eddy_eval_value_t out[2];
      eddy_interp_stats_t stats;
      assert_null(run(f, fn, w, args, 1, out, 2, &stats));
      assert_rows(&out[0], n);
      assert_rows(&out[1], n);
      // The lists made before the loop (tl.empty has no operands: one
      // value read from every frame, so its first push copies it).
      assert_true(stats.list_copies <= 2);
      assert_true(stats.list_items_copied <= n);
      release_all(out, 2);
      release_all(args, 1);
    }
  }
  // In @shared the resize reads the list after the push (it needs the
  // push's result): each push copies the list (copy on write), the resize
  // then takes the original, and the results do not change. The counts are
  // exact with one worker; with two they depend on which op a worker runs
  // first (a reader still running elsewhere makes an update copy), so there
  // only the results are checked.
  const eddy_op_t *sh = load(f, k_lists, "shared");
  for (int32_t w = 1; w <= 2; w++) {
    eddy_eval_value_t args[1] = {scalar(f, EDDY_DT_I64, "100")};
    eddy_eval_value_t out[2];
    eddy_interp_stats_t stats;
    assert_null(run(f, sh, w, args, 1, out, 2, &stats));
    assert_rows(&out[0], 100);
    assert_int_equal(as_i64(&out[1]), 99 * 100 / 2);
    if (w == 1) {
      assert_true(stats.list_copies >= 100 && stats.list_copies <= 101);
      assert_int_equal(stats.list_items_copied, 99 * 100 / 2);
    }
    release_all(out, 2);
    release_all(args, 1);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_switch_dead_data, setup, teardown),
      cmocka_unit_test_setup_teardown(test_merge_two_dead, setup, teardown),
      cmocka_unit_test_setup_teardown(test_exit_nested_frame, setup, teardown),
      cmocka_unit_test_setup_teardown(test_next_iteration_bounded_memory,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_workers_do_not_change_results,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_deadlock_is_an_error, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_iteration_and_time_limits, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_ctl_needs_lowering, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_list_updates_in_place, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

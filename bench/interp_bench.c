/// Benchmarks of the dataflow interpreter (not a test; target
/// eddy_interp_bench, not built by default):
/// - per-op overhead: a chain of 2000 scalar adds, no control flow, in the
///   interpreter and in the reference evaluator (µs per op);
/// - per-iteration overhead: a counting loop of 10^5 iterations (µs per
///   iteration, about 8 df and core ops each);
/// - parallel iterations: a map_fn-like loop of 1000 iterations, each a
///   64x64 f32 matmul independent of the others (parallel_iterations = 32),
///   with 1 and with 2 workers: the speed-up (target >= 1.7x on 2 cores);
/// - list pushes: a loop pushing a 4-element tensor onto a TensorList
///   10^4 and 10^5 times (µs per push, and the items the list updates
///   copied: linear when the list moves into each push, quadratic when
///   every push copies a shared list).
/// Each number is the best of 5 runs. Results go in bench/README.md.
/// `eddy_interp_bench NAME` runs one of them (chain, count, map, push), e.g.
/// under perf.
#define _POSIX_C_SOURCE 200809L

#include "dialects/dialects.h"
#include "ir/ir.h"
#include "lower/lower.h"
#include "runtime/eval/eval.h"
#include "runtime/interp/interp.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RUNS 5
#define CHAIN 2000
#define COUNT 100000

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/// CPU time of the process (all threads).
static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int fail(eddy_status_t st) {
  eddy_status_print(st, stderr);
  eddy_status_destroy(st);
  return 1;
}

/// Parses text; *structured is the function as written, *lowered a copy of
/// the module with it lowered to df.
static eddy_status_t load(eddy_ctx_t *ctx, const char *text,
                          eddy_module_t **ms, eddy_module_t **md) {
  EDDY_RETURN_IF_ERROR(
      eddy_ir_parse_module(ctx, "bench.eddy", text, strlen(text), ms));
  EDDY_RETURN_IF_ERROR(eddy_ir_verify_module(*ms));
  EDDY_RETURN_IF_ERROR(
      eddy_ir_parse_module(ctx, "bench.eddy", text, strlen(text), md));
  EDDY_RETURN_IF_ERROR(
      eddy_lower_to_dataflow_func(eddy_ir_module_lookup_func(*md, "f")));
  return eddy_ir_verify_module(*md);
}

/// Best wall time of RUNS runs: the interpreter with `workers` (0: the
/// evaluator on the structured function).
static eddy_status_t time_runs(eddy_rt_ctx_t *rt, const eddy_op_t *func,
                               int workers, const eddy_eval_value_t *args,
                               size_t nargs, double *best) {
  *best = 1e30;
  for (int r = 0; r < RUNS; r++) {
    eddy_eval_value_t res[1];
    memset(res, 0, sizeof res);
    double t0 = now_s();
    eddy_status_t st;
    if (workers == 0) {
      st = eddy_eval_func(rt, func, NULL, args, nargs, res, 1);
    } else {
      eddy_interp_opts_t o = eddy_interp_opts_default();
      o.num_workers = workers;
      st = eddy_interp_func(rt, func, &o, args, nargs, res, 1, NULL);
    }
    double t = now_s() - t0;
    eddy_eval_value_release(&res[0]);
    EDDY_RETURN_IF_ERROR(st);
    if (t < *best)
      *best = t;
  }
  return NULL;
}

static char *chain_program(void) {
  eddy_buf_t b;
  eddy_buf_init(&b);
  eddy_buf_printf(&b, "module {\n  func.func @f(%%arg0: tensor<f32>) -> "
                      "tensor<f32> {\n");
  eddy_buf_printf(&b, "    %%0 = \"core.add\"(%%arg0, %%arg0) : (tensor<f32>, "
                      "tensor<f32>) -> tensor<f32>\n");
  for (int i = 1; i < CHAIN; i++)
    eddy_buf_printf(&b, "    %%%d = \"core.add\"(%%%d, %%arg0) : "
                        "(tensor<f32>, tensor<f32>) -> tensor<f32>\n",
                    i, i - 1);
  eddy_buf_printf(&b, "    \"func.return\"(%%%d) : (tensor<f32>) -> ()\n  }\n}\n",
                  CHAIN - 1);
  char *s = strdup(b.data);
  eddy_buf_destroy(&b);
  return s;
}

static const char k_count[] =
    "module {\n"
    "  func.func @f(%n: tensor<i64>) -> tensor<i64> {\n"
    "    %zero = \"core.constant\"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>\n"
    "    %r = \"ctl.while\"(%zero) ({\n"
    "    ^bb0(%i: tensor<i64>):\n"
    "      %c = \"core.lt\"(%i, %n) : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
    "      \"ctl.condition\"(%c) : (tensor<i1>) -> ()\n"
    "    }, {\n"
    "    ^bb0(%i: tensor<i64>):\n"
    "      %one = \"core.constant\"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>\n"
    "      %i2 = \"core.add\"(%i, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>\n"
    "      \"ctl.yield\"(%i2) : (tensor<i64>) -> ()\n"
    "    }) : (tensor<i64>) -> tensor<i64>\n"
    "    \"func.return\"(%r) : (tensor<i64>) -> ()\n"
    "  }\n"
    "}\n";

/// 1000 iterations, each a 64x64 matmul of its own (the iteration's scale
/// of A times A); only the counter and a cheap sum are carried.
static const char k_map[] =
    "module {\n"
    "  func.func @f(%n: tensor<i64>) -> tensor<f32> {\n"
    "    %io = \"core.iota\"() {dimension = 0} : () -> tensor<4096xf32>\n"
    "    %sc = \"core.constant\"() {value = dense<0.0001> : tensor<f32>} : () -> tensor<f32>\n"
    "    %io2 = \"core.mul\"(%io, %sc) : (tensor<4096xf32>, tensor<f32>) -> tensor<4096xf32>\n"
    "    %a = \"core.reshape\"(%io2) {shape = [64, 64]} : (tensor<4096xf32>) -> tensor<64x64xf32>\n"
    "    %zero = \"core.constant\"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>\n"
    "    %fz = \"core.constant\"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>\n"
    "    %r:2 = \"ctl.while\"(%zero, %fz) ({\n"
    "    ^bb0(%i: tensor<i64>, %s: tensor<f32>):\n"
    "      %c = \"core.lt\"(%i, %n) : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
    "      \"ctl.condition\"(%c) : (tensor<i1>) -> ()\n"
    "    }, {\n"
    "    ^bb0(%i: tensor<i64>, %s: tensor<f32>):\n"
    "      %one = \"core.constant\"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>\n"
    "      %i2 = \"core.add\"(%i, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>\n"
    "      %fi = \"core.cast\"(%i) {dtype = \"f32\"} : (tensor<i64>) -> tensor<f32>\n"
    "      %ai = \"core.mul\"(%a, %fi) : (tensor<64x64xf32>, tensor<f32>) -> tensor<64x64xf32>\n"
    "      %m = \"core.matmul\"(%ai, %a) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>\n"
    "      %t = \"core.reduce_sum\"(%m) {axes = [0, 1]} : (tensor<64x64xf32>) -> tensor<f32>\n"
    "      %s2 = \"core.add\"(%s, %t) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n"
    "      \"ctl.yield\"(%i2, %s2) : (tensor<i64>, tensor<f32>) -> ()\n"
    "    }) {parallel_iterations = 32} : (tensor<i64>, tensor<f32>) -> (tensor<i64>, tensor<f32>)\n"
    "    \"func.return\"(%r#1) : (tensor<f32>) -> ()\n"
    "  }\n"
    "}\n";

/// n pushes of the same 4-element tensor onto a list carried by the loop.
static const char k_push[] =
    "module {\n"
    "  func.func @f(%n: tensor<i64>) -> tensor<i64> {\n"
    "    %x = \"core.constant\"() {value = dense<1.0> : tensor<4xf32>} : () -> tensor<4xf32>\n"
    "    %l0 = \"tl.empty\"() : () -> !tl.list<tensor<4xf32>>\n"
    "    %zero = \"core.constant\"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>\n"
    "    %r:2 = \"ctl.while\"(%zero, %l0) ({\n"
    "    ^bb0(%i: tensor<i64>, %l: !tl.list<tensor<4xf32>>):\n"
    "      %c = \"core.lt\"(%i, %n) : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
    "      \"ctl.condition\"(%c) : (tensor<i1>) -> ()\n"
    "    }, {\n"
    "    ^bb0(%i: tensor<i64>, %l: !tl.list<tensor<4xf32>>):\n"
    "      %one = \"core.constant\"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>\n"
    "      %i2 = \"core.add\"(%i, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>\n"
    "      %l2 = \"tl.push_back\"(%l, %x) : (!tl.list<tensor<4xf32>>, tensor<4xf32>) -> !tl.list<tensor<4xf32>>\n"
    "      \"ctl.yield\"(%i2, %l2) : (tensor<i64>, !tl.list<tensor<4xf32>>) -> ()\n"
    "    }) : (tensor<i64>, !tl.list<tensor<4xf32>>) -> (tensor<i64>, !tl.list<tensor<4xf32>>)\n"
    "    %len = \"tl.length\"(%r#1) : (!tl.list<tensor<4xf32>>) -> tensor<i64>\n"
    "    \"func.return\"(%len) : (tensor<i64>) -> ()\n"
    "  }\n"
    "}\n";

/// Per-op overhead: the chain in the interpreter (1 worker) and in the
/// evaluator.
static eddy_status_t bench_chain(eddy_ctx_t *ctx, eddy_rt_ctx_t *rt) {
  eddy_module_t *ms = NULL, *md = NULL;
  eddy_eval_value_t arg;
  memset(&arg, 0, sizeof arg);
  double te = 0, t1 = 0;
  char *chain = chain_program();
  eddy_status_t st = load(ctx, chain, &ms, &md);
  free(chain);
  if (!st)
    st = eddy_eval_scalar_from_text(rt, EDDY_DT_F32, "1.0", &arg);
  if (!st)
    st = time_runs(rt, eddy_ir_module_lookup_func(ms, "f"), 0, &arg, 1, &te);
  if (!st)
    st = time_runs(rt, eddy_ir_module_lookup_func(md, "f"), 1, &arg, 1, &t1);
  if (!st)
    printf("per-op overhead (%d scalar adds): interpreter %.2f us/op, "
           "evaluator %.2f us/op\n",
           CHAIN, 1e6 * t1 / CHAIN, 1e6 * te / CHAIN);
  eddy_eval_value_release(&arg);
  eddy_ir_module_destroy(ms);
  eddy_ir_module_destroy(md);
  return st;
}

/// Per-iteration overhead: the counting loop, 1 worker.
static eddy_status_t bench_count(eddy_ctx_t *ctx, eddy_rt_ctx_t *rt) {
  eddy_module_t *ms = NULL, *md = NULL;
  eddy_eval_value_t arg;
  memset(&arg, 0, sizeof arg);
  double te = 0, t1 = 0;
  char n[32];
  snprintf(n, sizeof n, "%d", COUNT);
  eddy_status_t st = load(ctx, k_count, &ms, &md);
  if (!st)
    st = eddy_eval_scalar_from_text(rt, EDDY_DT_I64, n, &arg);
  if (!st)
    st = time_runs(rt, eddy_ir_module_lookup_func(ms, "f"), 0, &arg, 1, &te);
  if (!st)
    st = time_runs(rt, eddy_ir_module_lookup_func(md, "f"), 1, &arg, 1, &t1);
  if (!st)
    printf("per-iteration overhead (counting loop, %d iterations): "
           "interpreter %.2f us/iteration, evaluator %.2f us/iteration\n",
           COUNT, 1e6 * t1 / COUNT, 1e6 * te / COUNT);
  eddy_eval_value_release(&arg);
  eddy_ir_module_destroy(ms);
  eddy_ir_module_destroy(md);
  return st;
}

/// Parallel iterations: the map-like loop with 1 and 2 workers, and the
/// CPU time of the 2-worker runs (to tell a loaded machine from a slow
/// executor: with another core free it is about twice the wall time).
static eddy_status_t bench_map(eddy_ctx_t *ctx, eddy_rt_ctx_t *rt) {
  eddy_module_t *ms = NULL, *md = NULL;
  eddy_eval_value_t arg;
  memset(&arg, 0, sizeof arg);
  double te = 0, t1 = 0, t2 = 0;
  eddy_status_t st = load(ctx, k_map, &ms, &md);
  if (!st)
    st = eddy_eval_scalar_from_text(rt, EDDY_DT_I64, "1000", &arg);
  const eddy_op_t *f = md ? eddy_ir_module_lookup_func(md, "f") : NULL;
  if (!st)
    st = time_runs(rt, eddy_ir_module_lookup_func(ms, "f"), 0, &arg, 1, &te);
  if (!st)
    st = time_runs(rt, f, 1, &arg, 1, &t1);
  double c0 = cpu_s(), w0 = now_s();
  if (!st)
    st = time_runs(rt, f, 2, &arg, 1, &t2);
  double cpu = cpu_s() - c0, wall = now_s() - w0;
  if (!st)
    printf("parallel iterations (1000 independent 64x64 matmuls): "
           "1 worker %.1f ms, 2 workers %.1f ms, speed-up %.2fx "
           "(evaluator %.1f ms; 2-worker runs used %.2f cores)\n",
           1e3 * t1, 1e3 * t2, t1 / t2, 1e3 * te, cpu / wall);
  eddy_eval_value_release(&arg);
  eddy_ir_module_destroy(ms);
  eddy_ir_module_destroy(md);
  return st;
}

/// List pushes: the push loop for 10^4 and 10^5 pushes, 1 worker, and the
/// evaluator; the items copied come from one more run's statistics.
static eddy_status_t bench_push(eddy_ctx_t *ctx, eddy_rt_ctx_t *rt) {
  eddy_module_t *ms = NULL, *md = NULL;
  eddy_status_t st = load(ctx, k_push, &ms, &md);
  static const int counts[2] = {10000, 100000};
  for (int k = 0; k < 2 && !st; k++) {
    eddy_eval_value_t arg, res;
    memset(&arg, 0, sizeof arg);
    memset(&res, 0, sizeof res);
    double te = 0, t1 = 0;
    char n[32];
    snprintf(n, sizeof n, "%d", counts[k]);
    st = eddy_eval_scalar_from_text(rt, EDDY_DT_I64, n, &arg);
    if (!st)
      st = time_runs(rt, eddy_ir_module_lookup_func(ms, "f"), 0, &arg, 1,
                     &te);
    if (!st)
      st = time_runs(rt, eddy_ir_module_lookup_func(md, "f"), 1, &arg, 1,
                     &t1);
    eddy_interp_stats_t stats;
    eddy_interp_opts_t o = eddy_interp_opts_default();
    o.num_workers = 1;
    if (!st)
      st = eddy_interp_func(rt, eddy_ir_module_lookup_func(md, "f"), &o, &arg,
                            1, &res, 1, &stats);
    if (!st)
      printf("list pushes (%d): interpreter %.1f ms (%.2f us/push, %" PRId64
             " list copies of %" PRId64 " items), evaluator %.1f ms\n",
             counts[k], 1e3 * t1, 1e6 * t1 / counts[k], stats.list_copies,
             stats.list_items_copied, 1e3 * te);
    eddy_eval_value_release(&res);
    eddy_eval_value_release(&arg);
  }
  eddy_ir_module_destroy(ms);
  eddy_ir_module_destroy(md);
  return st;
}

int main(int argc, char **argv) {
  const char *only = argc > 1 ? argv[1] : NULL;
  bool chain_on = !only || strcmp(only, "chain") == 0;
  bool count_on = !only || strcmp(only, "count") == 0;
  bool map_on = !only || strcmp(only, "map") == 0;
  bool push_on = !only || strcmp(only, "push") == 0;
  if (!chain_on && !count_on && !map_on && !push_on) {
    fprintf(stderr, "usage: eddy_interp_bench [chain|count|map|push]\n");
    return 2;
  }
  eddy_ctx_t *ctx = eddy_ir_ctx_create();
  eddy_dialects_register_all(ctx);
  eddy_rt_ctx_options_t ro = eddy_rt_ctx_options_default();
  eddy_rt_ctx_t *rt = NULL;
  if (eddy_rt_ctx_create(&ro, &rt)) {
    fprintf(stderr, "no runtime context\n");
    return 1;
  }
  eddy_status_t st = NULL;
  if (chain_on)
    st = bench_chain(ctx, rt);
  if (!st && count_on)
    st = bench_count(ctx, rt);
  if (!st && map_on)
    st = bench_map(ctx, rt);
  if (!st && push_on)
    st = bench_push(ctx, rt);
  eddy_rt_ctx_destroy(rt);
  eddy_ir_ctx_destroy(ctx);
  return st ? fail(st) : 0;
}

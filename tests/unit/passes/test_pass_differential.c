/// Differential testing of the optimization passes against the reference
/// evaluator.
///
/// A deterministic generator (diff_gen.h) builds random well-typed
/// functions through the builder API: small static f32/f64/i32/i1 tensors
/// (now and then f16/bf16/i8/i64, empty dims) with broadcasting, most core
/// ops, constants with special values (-0.0, NaN, inf, rounding edges,
/// extreme ints), ctl.if with captured values, bounded ctl.while loops (zero
/// trips included, nested, loop values whose shape grows, matmuls of rows
/// read at the counter: gemm-hoist's pattern and near misses; map_fn
/// loops over items read at the counter: map-batch's, and near misses),
/// ctl.call, duplicate and loop-invariant subexpressions, dead values, ops that
/// fail at run time in loops that never run, and types made dynamic afterwards
/// so that shape-infer has work. Each program is evaluated on fixed random
/// inputs, then every pass alone and the whole pipeline run on a copy (printed
/// and parsed back, which also checks the round trip), the result is verified
/// and evaluated again, and the results must be identical: bitwise, except that
/// two NaNs match whatever their payloads. The pipeline must also be a
/// fixpoint.
///
/// EDDY_DIFF_SEED and EDDY_DIFF_COUNT change the seed and program count for
/// longer local runs; EDDY_DIFF_KEEP_GOING=1 reports every mismatch instead
/// of stopping at the first; EDDY_DIFF_ONLY=N checks and prints program N
/// alone (for reducing); EDDY_DIFF_RARE=P makes P percent of the dtypes
/// f16/bf16/i8/i64. Programs whose original evaluation fails are skipped.
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dialects/dialects.h"
#include "ir/ir.h"
#include "ir/pass.h"
#include "ir/passes/passes.h"
#include "runtime/eval/eval.h"
#include "diff_gen.h"

/// ---- Running and comparing --------------------------------------------------

typedef struct diff_env {
  eddy_ctx_t *ctx;
  eddy_rt_ctx_t *rt;
  bool keep_going;
  int failures;
  int hoisted; ///< checked programs that gemm-hoist changed
  int batched; ///< checked programs that map-batch changed
} diff_env_t;

enum { NUM_INPUT_SETS = 2, MAX_RESULTS = 3 };

/// Inputs of the static argument types (the declared ones may be dynamic).
static void random_inputs(rng_t *r, eddy_rt_ctx_t *rt,
                          const eddy_type_t *const *types, size_t n_args,
                          eddy_eval_value_t *args) {
  for (size_t i = 0; i < n_args; i++) {
    const eddy_type_t *t = types[i];
    eddy_rt_tensor_t x;
    assert_null(eddy_rt_tensor_create(rt, (int32_t)t->dtype, t->rank, t->dims,
                                      "input", &x));
    int64_t n = eddy_rt_tensor_numel(&x);
    for (int64_t k = 0; k < n; k++) {
      if (eddy_dtype_is_float(t->dtype))
        eddy_rt_tensor_set_f64(&x, k, special_float(r));
      else if (t->dtype == EDDY_DT_I1)
        eddy_rt_tensor_set_i64(&x, k, rng_below(r, 2));
      else
        eddy_rt_tensor_set_i64(&x, k, special_int(r));
    }
    args[i] = eddy_eval_value_from_tensor(&x);
  }
}

static bool is_nan_elem(const eddy_rt_tensor_t *t, int64_t k) {
  const void *p = eddy_rt_tensor_elem_ptr(t, k);
  if (t->dtype == EDDY_RT_F16 || t->dtype == EDDY_RT_BF16) {
    uint16_t h;
    memcpy(&h, p, sizeof h);
    return isnan(t->dtype == EDDY_RT_F16 ? eddy_rt_f16_to_f32(h)
                                         : eddy_rt_bf16_to_f32(h));
  }
  if (t->dtype == EDDY_RT_F32) {
    float f;
    memcpy(&f, p, sizeof f);
    return isnan(f);
  }
  if (t->dtype == EDDY_RT_F64) {
    double d;
    memcpy(&d, p, sizeof d);
    return isnan(d);
  }
  return false;
}

/// Bitwise equality, NaN matching NaN; a description of the first
/// difference in *why.
static bool same_value(const eddy_eval_value_t *a, const eddy_eval_value_t *b,
                       eddy_buf_t *why) {
  if (a->kind != EDDY_EVAL_TENSOR || b->kind != EDDY_EVAL_TENSOR ||
      !eddy_rt_tensor_same_shape(&a->tensor, &b->tensor)) {
    eddy_buf_puts(why, "kind/shape differs: ");
    eddy_eval_value_describe(a, why);
    eddy_buf_puts(why, " vs ");
    eddy_eval_value_describe(b, why);
    return false;
  }
  int64_t n = eddy_rt_tensor_numel(&a->tensor);
  size_t es = eddy_rt_dtype_size(a->tensor.dtype);
  for (int64_t k = 0; k < n; k++) {
    const void *pa = eddy_rt_tensor_elem_ptr(&a->tensor, k);
    const void *pb = eddy_rt_tensor_elem_ptr(&b->tensor, k);
    if (memcmp(pa, pb, es) == 0)
      continue;
    if (is_nan_elem(&a->tensor, k) && is_nan_elem(&b->tensor, k))
      continue;
    eddy_buf_printf(why, "element %lld differs: ", (long long)k);
    eddy_eval_value_preview(a, -1, why);
    eddy_buf_puts(why, " vs ");
    eddy_eval_value_preview(b, -1, why);
    return false;
  }
  return true;
}

static char *module_text(const eddy_module_t *m) {
  eddy_buf_t b;
  eddy_buf_init(&b);
  eddy_print_opts_t o = {0};
  eddy_ir_module_print(m, &o, &b);
  return eddy_buf_take(&b);
}

static eddy_module_t *parse_text(diff_env_t *env, const char *text) {
  eddy_module_t *m = NULL;
  eddy_status_t st =
      eddy_ir_parse_module(env->ctx, "gen", text, strlen(text), &m);
  if (st) {
    fprintf(stderr, "parse failed: %s\n%s\n", eddy_status_message(st), text);
    eddy_status_destroy(st);
    fail_msg("printed program does not parse");
  }
  return m;
}

/// Runs pipeline on m in place; returns the error text or NULL.
static char *run_pipeline(diff_env_t *env, eddy_module_t *m,
                          const char *pipeline) {
  eddy_pm_opts_t o;
  eddy_ir_pm_opts_default(&o);
  o.verify_each = true;
  eddy_status_t st = eddy_ir_pm_run_pipeline(env->ctx, m, pipeline, &o);
  if (!st)
    return NULL;
  eddy_buf_t b;
  eddy_buf_init(&b);
  eddy_buf_printf(&b, "%s %s", eddy_status_message(st),
                  eddy_status_notes(st));
  eddy_status_destroy(st);
  return eddy_buf_take(&b);
}

/// Evaluates @f; on error returns false with the message in *why.
static bool eval_f(diff_env_t *env, const eddy_module_t *m,
                   const eddy_eval_value_t *args, size_t nargs,
                   eddy_eval_value_t *out, size_t nres, eddy_buf_t *why) {
  const eddy_op_t *f = eddy_ir_module_lookup_func(m, "f");
  eddy_eval_opts_t o = eddy_eval_opts_default();
  o.max_iterations = 1000;
  eddy_status_t st = eddy_eval_func(env->rt, f, &o, args, nargs, out, nres);
  if (!st)
    return true;
  eddy_buf_puts(why, eddy_status_message(st));
  eddy_status_destroy(st);
  return false;
}

static void report(diff_env_t *env, uint64_t seed, int index,
                   const char *pipeline, const char *text, const char *after,
                   const char *what) {
  fprintf(stderr,
          "MISMATCH seed=%llu program=%d passes=%s: %s\n--- before\n%s"
          "--- after\n%s\n",
          (unsigned long long)seed, index, pipeline, what, text,
          after ? after : "(none)");
  env->failures++;
  if (!env->keep_going)
    fail_msg("pass changed program semantics (see above)");
}

/// Each pass alone, the default pipeline, and two other orders (passes
/// must not rely on running in one order).
static const char *const k_pipelines[] = {
    "shape-infer",
    "canonicalize",
    "licm",
    "cse",
    "dce",
    "shape-infer,canonicalize,licm,cse,dce",
    "cse,licm,dce,canonicalize,shape-infer,licm",
    "dce,licm,cse,shape-infer,canonicalize,cse",
    "gemm-hoist",
    "shape-infer,canonicalize,gemm-hoist,licm,cse,dce",
    // (Its analysis runs on every loop; the generator's batches are too
    // small to split: tests/lit/passes/row-split-run.eddy checks splits.)
    "row-split",
    "map-batch",
    "map-batch,gemm-hoist,scatter-sink,dce,row-split",
};
enum { NUM_PIPELINES = 13 };
#define FULL_PIPELINE "shape-infer,canonicalize,licm,cse,dce"

static uint64_t env_u64(const char *name, uint64_t dflt) {
  const char *s = getenv(name);
  return s && *s ? strtoull(s, NULL, 0) : dflt;
}

/// Generates program `index` of the run with `seed` and checks it. Returns
/// false when the original program fails to evaluate (skipped).
static bool check_program(diff_env_t *env, uint64_t seed, int index) {
  gen_t *g = calloc(1, sizeof *g);
  assert_non_null(g);
  g->rng.s = seed * 0x100000001b3ull + (uint64_t)index * 0x9e3779b97f4a7c15ull;
  g->ctx = env->ctx;
  g->budget = 8 + rng_below(&g->rng, 40);
  g->reuse = rng_chance(&g->rng, 40) ? 10 : 70;
  g->rare = (int)env_u64("EDDY_DIFF_RARE", 8);
  eddy_ir_builder_init(&g->b, env->ctx);
  eddy_module_t *m = eddy_ir_module_create(env->ctx, NULL);
  eddy_op_t *callee = NULL;
  if (rng_chance(&g->rng, 25)) {
    int budget = g->budget;
    g->budget = budget / 2;
    callee = gen_function(g, m, "g", NULL);
    g->budget = budget - budget / 2;
  }
  eddy_op_t *f = gen_function(g, m, "f", callee);
  const eddy_type_t *arg_types[3];
  for (uint32_t i = 0; i < eddy_ir_func_entry(f)->num_args; i++)
    arg_types[i] = eddy_ir_func_entry(f)->args[i]->type;
  if (rng_chance(&g->rng, 40))
    forget_shapes(g, f);
  if (callee && rng_chance(&g->rng, 40))
    forget_shapes(g, callee);
  eddy_status_t vst = eddy_ir_verify_module(m);
  char *text = module_text(m);
  if (getenv("EDDY_DIFF_ONLY"))
    fprintf(stderr, "%s", text);
  if (vst) {
    fprintf(stderr, "%s\n%s\n", eddy_status_message(vst), text);
    fail_msg("generated program does not verify");
  }
  // Round trip: print(parse(print(x))) == print(x).
  eddy_module_t *rt_mod = parse_text(env, text);
  char *text2 = module_text(rt_mod);
  if (strcmp(text, text2) != 0) {
    fprintf(stderr, "--- printed\n%s--- reprinted\n%s", text, text2);
    fail_msg("print(parse(print(x))) != print(x)");
  }
  free(text2);
  eddy_ir_module_destroy(rt_mod);

  size_t nargs = eddy_ir_func_entry(f)->num_args;
  size_t nres = eddy_ir_func_type(f)->num_outputs;
  eddy_eval_value_t args[NUM_INPUT_SETS][3];
  eddy_eval_value_t ref[NUM_INPUT_SETS][MAX_RESULTS];
  bool ref_ok[NUM_INPUT_SETS];
  memset(args, 0, sizeof args);
  memset(ref, 0, sizeof ref);
  rng_t ir = {g->rng.s ^ 0x5bd1e995ull};
  bool any_ok = false;
  for (int s = 0; s < NUM_INPUT_SETS; s++) {
    random_inputs(&ir, env->rt, arg_types, nargs, args[s]);
    eddy_buf_t why;
    eddy_buf_init(&why);
    ref_ok[s] = eval_f(env, m, args[s], nargs, ref[s], nres, &why);
    any_ok |= ref_ok[s];
    eddy_buf_destroy(&why);
  }

  for (int p = 0; p < NUM_PIPELINES && any_ok; p++) {
    eddy_module_t *c = parse_text(env, text);
    char *err = run_pipeline(env, c, k_pipelines[p]);
    char *after = module_text(c);
    if (strcmp(k_pipelines[p], "gemm-hoist") == 0 && strcmp(text, after) != 0)
      env->hoisted++;
    if (strcmp(k_pipelines[p], "map-batch") == 0 && strcmp(text, after) != 0)
      env->batched++;
    if (err) {
      report(env, seed, index, k_pipelines[p], text, after, err);
      free(err);
      free(after);
      eddy_ir_module_destroy(c);
      continue;
    }
    for (int s = 0; s < NUM_INPUT_SETS; s++) {
      if (!ref_ok[s])
        continue;
      eddy_eval_value_t out[MAX_RESULTS];
      memset(out, 0, sizeof out);
      eddy_buf_t why;
      eddy_buf_init(&why);
      if (!eval_f(env, c, args[s], nargs, out, nres, &why)) {
        report(env, seed, index, k_pipelines[p], text, after, why.data ? why.data : "");
      } else {
        for (size_t i = 0; i < nres; i++) {
          eddy_buf_clear(&why);
          if (!same_value(&ref[s][i], &out[i], &why)) {
            eddy_buf_t msg;
            eddy_buf_init(&msg);
            eddy_buf_printf(&msg, "input set %d result %zu: %s", s, i,
                            why.data ? why.data : "");
            report(env, seed, index, k_pipelines[p], text, after, msg.data);
            eddy_buf_destroy(&msg);
            break;
          }
        }
      }
      for (size_t i = 0; i < nres; i++)
        eddy_eval_value_release(&out[i]);
      eddy_buf_destroy(&why);
    }
    // Fixpoint: the full pipeline changes nothing the second time.
    if (strcmp(k_pipelines[p], FULL_PIPELINE) == 0) {
      char *err2 = run_pipeline(env, c, FULL_PIPELINE);
      char *again = module_text(c);
      if (err2 || strcmp(after, again) != 0)
        report(env, seed, index, "pipeline twice", after, again,
               err2 ? err2 : "not a fixpoint");
      free(err2);
      free(again);
    }
    free(after);
    eddy_ir_module_destroy(c);
  }

  for (int s = 0; s < NUM_INPUT_SETS; s++)
    for (size_t i = 0; i < 3; i++) {
      eddy_eval_value_release(&args[s][i]);
      eddy_eval_value_release(&ref[s][i]);
    }
  free(text);
  eddy_ir_module_destroy(m);
  free(g);
  return any_ok;
}


static void test_differential(void **state) {
  (void)state;
  uint64_t seed = env_u64("EDDY_DIFF_SEED", 1);
  int count = (int)env_u64("EDDY_DIFF_COUNT", 400);
  diff_env_t env = {.keep_going = env_u64("EDDY_DIFF_KEEP_GOING", 0) != 0};
  int skipped = 0;
  // EDDY_DIFF_ONLY=N checks program N alone and prints it (for reducing).
  int only = (int)env_u64("EDDY_DIFF_ONLY", (uint64_t)-1);
  for (int i = 0; i < count; i++) {
    if (only >= 0 && i != only)
      continue;
    // A fresh context per program keeps memory flat over long runs.
    env.ctx = eddy_ir_ctx_create();
    assert_non_null(env.ctx);
    eddy_dialects_register_all(env.ctx);
    eddy_passes_register_all(env.ctx);
    assert_null(eddy_rt_ctx_create(NULL, &env.rt));
    skipped += !check_program(&env, seed, i);
    eddy_rt_ctx_destroy(env.rt);
    eddy_ir_ctx_destroy(env.ctx);
  }
  fprintf(stderr,
          "differential: seed %llu, %d programs, %d skipped, %d "
          "mismatches, %d changed by gemm-hoist, %d by map-batch\n",
          (unsigned long long)seed, count, skipped, env.failures, env.hoisted,
          env.batched);
  // The generator must mostly produce programs that run, and some that
  // gemm-hoist and map-batch rewrite (their patterns are planted).
  assert_true(skipped * 4 < count);
  assert_true(only >= 0 || count < 100 || env.hoisted * 50 >= count);
  assert_true(only >= 0 || count < 100 || env.batched * 50 >= count);
  assert_int_equal(env.failures, 0);
}

/// ---- gemm-sink --------------------------------------------------------------
///
/// gemm-sink reassociates sums, so it cannot be held to bitwise equality on
/// the programs above. Here it gets programs of its own pattern on inputs
/// that are small integers: every product and partial sum is an integer
/// that the dtype holds exactly (f32, f16 up to 2048, bf16 up to 256), so
/// any summation order gives the same bits. Random sizes, dtypes, trip
/// counts (zero included), operand order of the add, and two sums sharing
/// a factor; the loop's other values change between iterations.

/// The program: @f(xs [L,R,P], ys [L,R,Q], acc0 [P,Q], h0 [R,Q]) ->
/// (acc1, acc2, h) with acc1 += x_t^T (y_t - h), acc2 += (x_t x_t)^T
/// (y_t - h) or (x_t x_t)^T h (a loop value as a factor), h += y_t, for t
/// from start while t < bound.
static char *sink_program(rng_t *r, const char **out_dt, int64_t *dims) {
  static const char *const dts[] = {"f32", "f32", "f16", "bf16"};
  const char *dt = dts[rng_below(r, 4)];
  int64_t start = rng_below(r, 3), bound = rng_below(r, 5);
  int64_t R = 1 + rng_below(r, 3), P = 1 + rng_below(r, 3),
          Q = 1 + rng_below(r, 3), L = bound > 1 ? bound : 1;
  bool swap = rng_chance(r, 50), harg = rng_chance(r, 50);
  char xs[64], ys[64], pq[64], rq[64], rp[64];
  snprintf(xs, sizeof xs, "tensor<%lldx%lldx%lldx%s>", (long long)L,
           (long long)R, (long long)P, dt);
  snprintf(ys, sizeof ys, "tensor<%lldx%lldx%lldx%s>", (long long)L,
           (long long)R, (long long)Q, dt);
  snprintf(pq, sizeof pq, "tensor<%lldx%lldx%s>", (long long)P, (long long)Q,
           dt);
  snprintf(rq, sizeof rq, "tensor<%lldx%lldx%s>", (long long)R, (long long)Q,
           dt);
  snprintf(rp, sizeof rp, "tensor<%lldx%lldx%s>", (long long)R, (long long)P,
           dt);
  eddy_buf_t b;
  eddy_buf_init(&b);
  eddy_buf_printf(
      &b,
      "func.func @f(%%xs: %s, %%ys: %s, %%acc0: %s, %%h0: %s) -> (%s, %s, %s) "
      "{\n"
      "  %%z = \"core.constant\"() {value = dense<%lld> : tensor<i32>} : () -> "
      "tensor<i32>\n"
      "  %%r:4 = \"ctl.while\"(%%z, %%acc0, %%acc0, %%h0) ({\n"
      "  ^bb0(%%t: tensor<i32>, %%a1: %s, %%a2: %s, %%h: %s):\n"
      "    %%n = \"core.constant\"() {value = dense<%lld> : tensor<i32>} : () "
      "-> tensor<i32>\n"
      "    %%more = \"core.lt\"(%%t, %%n) : (tensor<i32>, tensor<i32>) -> "
      "tensor<i1>\n"
      "    \"ctl.condition\"(%%more) : (tensor<i1>) -> ()\n"
      "  }, {\n"
      "  ^bb0(%%t: tensor<i32>, %%a1: %s, %%a2: %s, %%h: %s):\n"
      "    %%one = \"core.constant\"() {value = dense<1> : tensor<i32>} : () -> "
      "tensor<i32>\n"
      "    %%next = \"core.add\"(%%t, %%one) : (tensor<i32>, tensor<i32>) -> "
      "tensor<i32>\n"
      "    %%x = \"core.gather\"(%%xs, %%t) {axis = 0} : (%s, tensor<i32>) -> "
      "%s\n"
      "    %%y = \"core.gather\"(%%ys, %%t) {axis = 0} : (%s, tensor<i32>) -> "
      "%s\n"
      "    %%b = \"core.sub\"(%%y, %%h) : (%s, %s) -> %s\n"
      "    %%xx = \"core.mul\"(%%x, %%x) : (%s, %s) -> %s\n"
      "    %%m1 = \"core.matmul\"(%%x, %%b) {transpose_a = true} : (%s, %s) -> "
      "%s\n"
      "    %%m2 = \"core.matmul\"(%%xx, %s) {transpose_a = true} : (%s, %s) "
      "-> %s\n"
      "    %%s1 = \"core.add\"(%s, %s) : (%s, %s) -> %s\n"
      "    %%s2 = \"core.add\"(%%a2, %%m2) : (%s, %s) -> %s\n"
      "    %%h2 = \"core.add\"(%%h, %%y) : (%s, %s) -> %s\n"
      "    \"ctl.yield\"(%%next, %%s1, %%s2, %%h2) : (tensor<i32>, %s, %s, %s) "
      "-> ()\n"
      "  }) : (tensor<i32>, %s, %s, %s) -> (tensor<i32>, %s, %s, %s)\n"
      "  \"func.return\"(%%r#1, %%r#2, %%r#3) : (%s, %s, %s) -> ()\n"
      "}\n",
      xs, ys, pq, rq, pq, pq, rq, (long long)start, pq, pq, rq,
      (long long)bound, pq, pq, rq, xs, rp, ys, rq, rq, rq, rq, rp, rp, rp, rp,
      rq, pq, harg ? "%h" : "%b", rp, rq, pq, swap ? "%m1" : "%a1", swap ? "%a1" : "%m1", pq, pq,
      pq, pq, pq, pq, rq, rq, rq, pq, pq, rq, pq, pq, rq, pq, pq, rq, pq, pq,
      rq);
  *out_dt = dt;
  int64_t d[] = {L, R, P, Q};
  memcpy(dims, d, sizeof d);
  return eddy_buf_take(&b);
}

static void test_gemm_sink_exact(void **state) {
  (void)state;
  uint64_t seed = env_u64("EDDY_DIFF_SEED", 1);
  int count = (int)env_u64("EDDY_DIFF_COUNT", 400) / 4;
  int changed = 0, failures = 0;
  for (int i = 0; i < count; i++) {
    rng_t r = {seed * 0x2545f4914f6cdd1dull + (uint64_t)i * 0x9e3779b97f4a7c15ull};
    diff_env_t env = {.keep_going = true};
    env.ctx = eddy_ir_ctx_create();
    eddy_dialects_register_all(env.ctx);
    eddy_passes_register_all(env.ctx);
    assert_null(eddy_rt_ctx_create(NULL, &env.rt));
    const char *dt = NULL;
    int64_t d[4]; // L, R, P, Q
    char *text = sink_program(&r, &dt, d);
    eddy_dtype_t dtype;
    assert_true(eddy_dtype_from_name(dt, strlen(dt), &dtype));
    // bf16 holds integers exactly only up to 256: smaller inputs there.
    int span = dtype == EDDY_DT_BF16 ? 1 : 2;
    int64_t shapes[4][3] = {{d[0], d[1], d[2]}, {d[0], d[1], d[3]},
                            {d[2], d[3]}, {d[1], d[3]}};
    int32_t ranks[4] = {3, 3, 2, 2};
    eddy_eval_value_t args[4], ref[3], out[3];
    memset(ref, 0, sizeof ref);
    memset(out, 0, sizeof out);
    for (int a = 0; a < 4; a++) {
      eddy_rt_tensor_t x;
      assert_null(eddy_rt_tensor_create(env.rt, (int32_t)dtype, ranks[a],
                                        shapes[a], "input", &x));
      for (int64_t k = 0; k < eddy_rt_tensor_numel(&x); k++)
        eddy_rt_tensor_set_f64(&x, k, rng_below(&r, 2 * span + 1) - span);
      args[a] = eddy_eval_value_from_tensor(&x);
    }
    eddy_module_t *m = parse_text(&env, text);
    eddy_buf_t why;
    eddy_buf_init(&why);
    assert_true(eval_f(&env, m, args, 4, ref, 3, &why));
    const char *pipeline = i % 2 ? "gemm-sink" : "gemm-hoist,gemm-sink,licm,cse,dce";
    char *err = run_pipeline(&env, m, pipeline);
    char *after = module_text(m);
    changed += strstr(after, "tl.push_back") != NULL;
    if (err || !eval_f(&env, m, args, 4, out, 3, &why)) {
      report(&env, seed, i, pipeline, text, after, err ? err : why.data);
    } else {
      for (int k = 0; k < 3; k++) {
        eddy_buf_clear(&why);
        if (!same_value(&ref[k], &out[k], &why)) {
          report(&env, seed, i, pipeline, text, after, why.data);
          break;
        }
      }
    }
    failures += env.failures;
    free(err);
    free(after);
    free(text);
    eddy_buf_destroy(&why);
    for (int k = 0; k < 4; k++)
      eddy_eval_value_release(&args[k]);
    for (int k = 0; k < 3; k++) {
      eddy_eval_value_release(&ref[k]);
      eddy_eval_value_release(&out[k]);
    }
    eddy_ir_module_destroy(m);
    eddy_rt_ctx_destroy(env.rt);
    eddy_ir_ctx_destroy(env.ctx);
  }
  fprintf(stderr, "gemm-sink: %d programs, %d rewritten, %d mismatches\n",
          count, changed, failures);
  assert_int_equal(changed, count); // every program has the pattern
  assert_int_equal(failures, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_differential),
      cmocka_unit_test(test_gemm_sink_exact),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/// The three-way differential test (docs/reliability.md, "Differential
/// testing of the executions").
///
///   difftest [--count N] [--seed S] [--grad-every K] [--budget B]
///            [--out DIR] [--only I] [--emit] [--keep-going] [--quiet]
///
/// Program I of a run is generated (gen.h) from the seed mix(S, I) and
/// printed as IR text; the text is parsed back and run on random inputs by
/// the evaluator (the reference), the dataflow interpreter with 1 and with
/// 2 workers, compiled CPU code (JIT) and the GPU target's kernels form on
/// the CPU, and, when the passes `eddy compile` runs for each target change
/// the program, both compiled forms again after them. Every result must
/// match the evaluator's: integers exactly,
/// floats within |got - ref| <= rtol * (1 + max|ref|) over the result, with
/// rtol = 8 eps(dtype) per op of the function (as `eddy run
/// --mode=compare`, but absolute near zero; eddy_rt_compare_tensor). Every
/// K-th program is generated smooth and also differentiated (eddy_ad_grad):
/// its gradient must pass eddy_ad_check's finite differences, and the
/// gradient function runs through the same executions.
///
/// A failure is shrunk (ops replaced by an operand, an argument or a
/// constant, loops by their initial values, dead ops erased, while it still
/// fails the same way) and the reproducer, with its inputs, is printed and
/// written to DIR/difftest-S-I.eddy. --only I runs program I alone; --emit
/// prints the generated program and stops. The exit status is 1 when a program
/// failed.
#define _POSIX_C_SOURCE 200809L

#include "autodiff/ad.h"
#include "backend-cpu/cpu.h"
#include "dialects/dialects.h"
#include "ir/ir.h"
#include "ir/pass.h"
#include "ir/passes/passes.h"
#include "lower/lower.h"
#include "runtime/eval/eval.h"
#include "runtime/interp/interp.h"
#include "tests/difftest/gen.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MAX_ARGS = 16, MAX_RES = 16 };

#define ALL 0xffffffffu ///< every execution

typedef enum exec {
  X_EVAL,
  X_INTERP1,
  X_INTERP2,
  X_CPU,
  X_KERNELS,
  X_CPU_PASSES,     ///< X_CPU after the passes of `eddy compile`
  X_KERNELS_PASSES, ///< X_KERNELS after those of `eddy compile --target=cuda`
  X_COUNT_
} exec_t;

static const char *const k_exec[X_COUNT_] = {
    "eval",    "interp-1",   "interp-2",      "cpu",
    "kernels", "cpu+passes", "kernels+passes"};

/// How often a statistic of the compile pipeline's passes was counted.
typedef struct pass_stat {
  char name[48];
  int64_t total, programs;
} pass_stat_t;

enum { MAX_PASS_STATS = 16 };

typedef struct opts {
  uint64_t seed;
  int64_t count, only;
  int grad_every, budget;
  const char *out_dir;
  bool emit, keep_going, quiet;
} opts_t;

typedef struct stats {
  int64_t programs, ops, grads, grad_ops, failures, unsupported, skipped;
  int64_t changed[X_COUNT_]; ///< programs the passes changed (X_*_PASSES)
  double ms[X_COUNT_], gen_ms, grad_ms;
  pass_stat_t pass[MAX_PASS_STATS];
  size_t num_pass;
} stats_t;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static uint64_t program_seed(uint64_t seed, int64_t i) {
  uint64_t s = seed ^ ((uint64_t)i * 0x9e3779b97f4a7c15ull);
  return dt_rng_next(&s);
}

/// ---- Inputs -----------------------------------------------------------------

typedef struct inputs {
  eddy_eval_value_t v[MAX_ARGS];
  size_t n;
} inputs_t;

static void inputs_release(inputs_t *in) {
  for (size_t i = 0; i < in->n; i++)
    eddy_eval_value_release(&in->v[i]);
  in->n = 0;
}

/// Random inputs of func's argument types: every `?` dim is D (1 to 3);
/// floats are multiples of 1/16 in [-2, 2] (p: multiples of 1/8 in [-1,
/// 1], never a threshold of gen.c's predicates); integers 0 to 3.
static eddy_status_t make_inputs(eddy_rt_ctx_t *rt, const eddy_op_t *func,
                                 uint64_t seed, inputs_t *in) {
  const eddy_type_t *ft = eddy_ir_func_type(func);
  uint64_t s = seed ^ 0x5bd1e995ull;
  int64_t d = 1 + (int64_t)(dt_rng_next(&s) % 3);
  in->n = 0;
  for (uint32_t i = 0; i < ft->num_inputs && i < MAX_ARGS; i++) {
    const eddy_type_t *t = ft->inputs[i];
    int64_t dims[8];
    for (int32_t k = 0; k < t->rank && k < 8; k++)
      dims[k] = t->dims[k] == EDDY_DIM_DYNAMIC ? d : t->dims[k];
    eddy_rt_tensor_t x;
    if (eddy_rt_tensor_create(rt, (int32_t)t->dtype, t->rank, dims, "input",
                              &x) != EDDY_RT_OK)
      return eddy_status_create(EDDY_ERR_RESOURCE, "cannot allocate input");
    int64_t n = eddy_rt_tensor_numel(&x);
    for (int64_t k = 0; k < n; k++) {
      uint64_t r = dt_rng_next(&s);
      if (!eddy_dtype_is_float(t->dtype))
        eddy_rt_tensor_set_i64(&x, k, (int64_t)(r % 4));
      else if (i == DT_ARG_PRED)
        eddy_rt_tensor_set_f64(&x, k, ((double)(r % 17) - 8) / 8.0);
      else
        eddy_rt_tensor_set_f64(&x, k, ((double)(r % 65) - 32) / 16.0);
    }
    in->v[in->n++] = eddy_eval_value_from_tensor(&x);
  }
  return NULL;
}

static void describe_inputs(const inputs_t *in, eddy_buf_t *out) {
  for (size_t i = 0; i < in->n; i++) {
    eddy_buf_printf(out, "// input arg%zu: ", i);
    eddy_eval_value_preview(&in->v[i], 64, out);
    eddy_buf_puts(out, "\n");
  }
}

/// ---- Running the executions ---------------------------------------------------

typedef struct outcome {
  bool ran[X_COUNT_];
  bool unsupported[X_COUNT_]; ///< the compiled target refused the program
  bool skipped[X_COUNT_];     ///< not asked for; X_*_PASSES: nothing changed
  char *error[X_COUNT_];      ///< malloc'ed message, or NULL
  char *stats[X_COUNT_];      ///< the passes' statistics (X_*_PASSES)
  eddy_eval_value_t res[X_COUNT_][MAX_RES];
  size_t nres;
  double ms[X_COUNT_];
} outcome_t;

static void outcome_destroy(outcome_t *o) {
  for (int x = 0; x < X_COUNT_; x++) {
    free(o->error[x]);
    free(o->stats[x]);
    for (size_t k = 0; o->ran[x] && k < o->nres; k++)
      eddy_eval_value_release(&o->res[x][k]);
  }
  memset(o, 0, sizeof *o);
}

static char *status_take(eddy_status_t st) {
  eddy_buf_t b;
  eddy_buf_init(&b);
  eddy_buf_puts(&b, eddy_status_message(st));
  eddy_status_destroy(st);
  return eddy_buf_take(&b);
}

static eddy_status_t parse(eddy_ctx_t *ctx, const char *text,
                           eddy_module_t **out) {
  EDDY_RETURN_IF_ERROR(
      eddy_ir_parse_module(ctx, "difftest", text, strlen(text), out));
  eddy_status_t st = eddy_ir_verify_module(*out);
  if (st) {
    eddy_ir_module_destroy(*out);
    *out = NULL;
  }
  return st;
}

static char *module_text(const eddy_module_t *m) {
  eddy_buf_t b;
  eddy_buf_init(&b);
  eddy_print_opts_t o = {0};
  eddy_ir_module_print(m, &o, &b);
  return eddy_buf_take(&b);
}

static void run_compiled(eddy_rt_ctx_t *rt, const eddy_module_t *m,
                         const char *entry, exec_t x, const inputs_t *in,
                         outcome_t *o) {
  eddy_cpu_opts_t co = eddy_cpu_opts_default();
  co.prefix = "difftest";
  co.opt_level = 1;
  if (x == X_KERNELS || x == X_KERNELS_PASSES)
    co.form = EDDY_CPU_FORM_KERNELS;
  eddy_cpu_jit_t *jit = NULL;
  eddy_status_t st = eddy_cpu_jit_create(m, entry, &co, &jit);
  if (st) {
    o->unsupported[x] = eddy_status_code(st) == EDDY_ERR_UNSUPPORTED;
    o->error[x] = status_take(st);
    return;
  }
  eddy_rt_tensor_t ts[MAX_ARGS + MAX_RES];
  for (size_t i = 0; i < in->n; i++)
    ts[i] = in->v[i].tensor;
  st = eddy_cpu_jit_run(jit, rt, ts, ts + in->n);
  eddy_cpu_jit_destroy(jit);
  if (st) {
    o->error[x] = status_take(st);
    return;
  }
  for (size_t k = 0; k < o->nres; k++)
    o->res[x][k] = eddy_eval_value_from_tensor(&ts[in->n + k]);
  o->ran[x] = true;
}

/// Runs pipeline on m; its statistics go to *stats (malloc'ed) when not
/// NULL.
static eddy_status_t run_passes(eddy_ctx_t *ctx, eddy_module_t *m,
                                const char *pipeline, char **stats) {
  eddy_pm_opts_t po;
  eddy_ir_pm_opts_default(&po);
  po.verify_each = true;
  size_t len = 0;
  FILE *fp = stats ? open_memstream(stats, &len) : NULL;
  po.stats = fp != NULL;
  po.dump = fp;
  eddy_status_t st = eddy_ir_pm_run_pipeline(ctx, m, pipeline, &po);
  if (fp)
    fclose(fp);
  return st;
}

/// Execution x (X_CPU_PASSES or X_KERNELS_PASSES): text after the passes
/// `eddy compile` runs for the target, compiled, when they change the
/// program; otherwise it is the program X_CPU or X_KERNELS ran, and x is
/// skipped. dce aside: the generator leaves dead values, which dce alone
/// would erase.
static void run_after_passes(eddy_rt_ctx_t *rt, eddy_ctx_t *ctx,
                             const char *text, const char *entry, exec_t x,
                             const inputs_t *in, outcome_t *o) {
  const char *pipeline = x == X_CPU_PASSES ? EDDY_PASSES_COMPILE_PIPELINE_CPU
                                           : EDDY_PASSES_COMPILE_PIPELINE;
  eddy_module_t *base = NULL, *m = NULL;
  eddy_status_t st = parse(ctx, text, &base);
  if (!st)
    st = run_passes(ctx, base, "dce", NULL);
  if (!st)
    st = parse(ctx, text, &m);
  if (!st)
    st = run_passes(ctx, m, pipeline, &o->stats[x]);
  if (st) {
    o->error[x] = status_take(st);
  } else {
    char *before = module_text(base), *after = module_text(m);
    if (strcmp(before, after) == 0)
      o->skipped[x] = true;
    else
      run_compiled(rt, m, entry, x, in, o);
    free(before);
    free(after);
  }
  if (m)
    eddy_ir_module_destroy(m);
  if (base)
    eddy_ir_module_destroy(base);
}

/// Runs @entry of text in the executions of mask (bit x: execution x; the
/// evaluator always runs). An error of the text itself (it does not parse
/// or verify) comes back as the status.
static eddy_status_t run_all(eddy_rt_ctx_t *rt, const char *text,
                             const char *entry, const inputs_t *in,
                             unsigned mask, outcome_t *o) {
  memset(o, 0, sizeof *o);
  for (int x = 1; x < X_COUNT_; x++)
    o->skipped[x] = !(mask & (1u << x));
  eddy_ctx_t *ctx = eddy_ir_ctx_create();
  eddy_dialects_register_all(ctx);
  eddy_passes_register_all(ctx);
  eddy_module_t *m = NULL;
  eddy_status_t st = parse(ctx, text, &m);
  if (st) {
    eddy_ir_ctx_destroy(ctx);
    return st;
  }
  eddy_op_t *f = eddy_ir_module_lookup_func(m, entry);
  o->nres = eddy_ir_func_type(f)->num_outputs;
  eddy_eval_opts_t eo = eddy_eval_opts_default();
  eo.max_iterations = 1000;
  for (int x = 0; x < X_COUNT_; x++) {
    double t0 = now_ms();
    if (x == X_EVAL) {
      st = eddy_eval_func(rt, f, &eo, in->v, in->n, o->res[x], o->nres);
      if (st) {
        // No reference: the others need not run (a shrinking candidate
        // whose loop no longer ends would not end in compiled code).
        o->error[x] = status_take(st);
        break;
      }
      o->ran[x] = true;
    } else if ((x == X_CPU || x == X_KERNELS) && (mask & (1u << x))) {
      run_compiled(rt, m, entry, (exec_t)x, in, o);
    } else if ((x == X_CPU_PASSES || x == X_KERNELS_PASSES) &&
               (mask & (1u << x))) {
      run_after_passes(rt, ctx, text, entry, (exec_t)x, in, o);
    } else {
      continue; // the interpreter lowers f in place: after the others
    }
    o->ms[x] = now_ms() - t0;
  }
  // The interpreter, twice on one lowered copy (1 and 2 workers).
  bool interp = mask & ((1u << X_INTERP1) | (1u << X_INTERP2));
  st = o->ran[X_EVAL] && interp
           ? eddy_lower_to_dataflow_func(f)
           : eddy_status_create(EDDY_ERR_INTERNAL, "not run");
  if (!st)
    st = eddy_ir_verify_op(f);
  for (int x = X_INTERP1; x <= X_INTERP2; x++) {
    if (!(mask & (1u << x)))
      continue;
    double t0 = now_ms();
    if (st) {
      o->error[x] = strdup(eddy_status_message(st));
      continue;
    }
    eddy_interp_opts_t io = eddy_interp_opts_default();
    io.num_workers = x == X_INTERP1 ? 1 : 2;
    io.max_iterations = 1000;
    io.timeout_ms = 20000;
    eddy_status_t is =
        eddy_interp_func(rt, f, &io, in->v, in->n, o->res[x], o->nres, NULL);
    if (is)
      o->error[x] = status_take(is);
    else
      o->ran[x] = true;
    o->ms[x] = now_ms() - t0;
  }
  eddy_status_destroy(st);
  eddy_ir_module_destroy(m);
  eddy_ir_ctx_destroy(ctx);
  return NULL;
}

/// ---- Comparing --------------------------------------------------------------

/// Whether got matches ref; else a description in why. Floats within
/// 8 eps(dtype) per op, relative to 1 + max|ref| (an absolute part near 0).
static bool close_enough(const eddy_eval_value_t *ref,
                         const eddy_eval_value_t *got, size_t num_ops,
                         eddy_buf_t *why) {
  eddy_buf_t a, b;
  eddy_buf_init(&a);
  eddy_buf_init(&b);
  eddy_eval_value_describe(ref, &a);
  eddy_eval_value_describe(got, &b);
  bool same = strcmp(a.data, b.data) == 0;
  if (!same)
    eddy_buf_printf(why, "type or shape %s, expected %s", b.data, a.data);
  eddy_buf_destroy(&a);
  eddy_buf_destroy(&b);
  if (!same || ref->kind != EDDY_EVAL_TENSOR)
    return same;
  const eddy_rt_tensor_t *r = &ref->tensor, *g = &got->tensor;
  eddy_rt_compare_opts_t o = eddy_rt_compare_opts_default();
  o.rtol = o.atol =
      8 * eddy_rt_dtype_eps(r->dtype) * (double)(num_ops ? num_ops : 1);
  eddy_rt_compare_result_t c;
  eddy_rt_status_t st = eddy_rt_compare_tensor(r, g, &o, &c);
  if (st) {
    eddy_buf_printf(why, "%s", eddy_rt_status_message(st));
    eddy_rt_status_destroy(st);
    return false;
  }
  if (c.ok)
    return true;
  int64_t k = c.worst;
  if (eddy_rt_dtype_is_float(r->dtype))
    eddy_buf_printf(why, "element %" PRId64 ": %.17g, expected %.17g "
                         "(tolerance %.3g)",
                    k, eddy_rt_tensor_get_f64(g, k),
                    eddy_rt_tensor_get_f64(r, k), c.tolerance);
  else
    eddy_buf_printf(why, "element %" PRId64 ": %" PRId64 ", expected %" PRId64,
                    k, eddy_rt_tensor_get_i64(g, k),
                    eddy_rt_tensor_get_i64(r, k));
  return false;
}

static eddy_walk_result_t count_op(eddy_op_t *op, void *user) {
  (void)op;
  (*(size_t *)user)++;
  return EDDY_WALK_ADVANCE;
}

static size_t count_ops(const char *text, const char *entry) {
  eddy_ctx_t *ctx = eddy_ir_ctx_create();
  eddy_dialects_register_all(ctx);
  eddy_module_t *m = NULL;
  size_t n = 0;
  if (!parse(ctx, text, &m)) {
    eddy_ir_walk_pre(eddy_ir_module_lookup_func(m, entry), count_op, &n);
    eddy_ir_module_destroy(m);
  }
  eddy_ir_ctx_destroy(ctx);
  return n;
}

/// What went wrong, per execution: a mismatch, or an error whose message
/// starts with `error` (the first 12 bytes, enough to tell a deadlock from
/// an index error); shrinking keeps it.
typedef struct failure {
  unsigned bad; ///< bit x: execution x failed (the evaluator: failed itself)
  char error[X_COUNT_][13];
} failure_t;

static bool same_failure(const failure_t *want, const failure_t *got) {
  if ((got->bad & want->bad) != want->bad ||
      (got->bad & ((1u << X_EVAL) | (1u << X_COUNT_))))
    return false;
  for (int x = 0; x < X_COUNT_; x++)
    if ((want->bad & (1u << x)) && strcmp(want->error[x], got->error[x]) != 0)
      return false;
  return true;
}

/// The failing executions as a bit set (bit x: x failed, or, for the
/// evaluator, failed itself); descriptions in why when not NULL.
static unsigned failures(const outcome_t *o, size_t num_ops, eddy_buf_t *why,
                         failure_t *fl) {
  unsigned bad = 0;
  if (!o->ran[X_EVAL]) {
    if (why)
      eddy_buf_printf(why, "  eval: error: %s\n", o->error[X_EVAL]);
    return 1u << X_EVAL;
  }
  for (int x = 1; x < X_COUNT_; x++) {
    if (o->unsupported[x] || o->skipped[x])
      continue;
    if (!o->ran[x]) {
      bad |= 1u << x;
      if (fl)
        snprintf(fl->error[x], sizeof fl->error[x], "%s", o->error[x]);
      if (why)
        eddy_buf_printf(why, "  %s: error: %s\n", k_exec[x], o->error[x]);
      continue;
    }
    for (size_t k = 0; k < o->nres; k++) {
      eddy_buf_t w;
      eddy_buf_init(&w);
      if (!close_enough(&o->res[X_EVAL][k], &o->res[x][k], num_ops, &w)) {
        bad |= 1u << x;
        if (why)
          eddy_buf_printf(why, "  %s: result %zu: %s\n", k_exec[x], k, w.data);
      }
      eddy_buf_destroy(&w);
    }
  }
  return bad;
}

/// Adds the lines `NAME = COUNT` of a pass manager's statistics to s.
static void add_pass_stats(stats_t *s, const char *text) {
  for (const char *line = text; line && *line;) {
    char name[48];
    long long count;
    if (sscanf(line, "%47s = %lld", name, &count) == 2 && count > 0) {
      size_t i = 0;
      while (i < s->num_pass && strcmp(s->pass[i].name, name) != 0)
        i++;
      if (i == s->num_pass && i < MAX_PASS_STATS)
        snprintf(s->pass[s->num_pass++].name, sizeof s->pass[i].name, "%s",
                 name);
      if (i < s->num_pass) {
        s->pass[i].total += count;
        s->pass[i].programs++;
      }
    }
    line = strchr(line, '\n');
    line = line ? line + 1 : NULL;
  }
}

/// Runs text and returns its failure set (0: all agree), described in *fl
/// when not NULL. *unsupported: a compiled target refused it.
static unsigned check_text(eddy_rt_ctx_t *rt, const char *text,
                           const char *entry, const inputs_t *in,
                           eddy_buf_t *why, bool *unsupported, stats_t *s,
                           failure_t *fl, unsigned mask) {
  outcome_t o;
  if (fl)
    memset(fl, 0, sizeof *fl);
  eddy_status_t st = run_all(rt, text, entry, in, mask, &o);
  if (st) {
    if (why)
      eddy_buf_printf(why, "  the program does not verify: %s %s\n",
                      eddy_status_message(st), eddy_status_notes(st));
    eddy_status_destroy(st);
    if (fl)
      fl->bad = 1u << X_COUNT_;
    return 1u << X_COUNT_;
  }
  if (unsupported) {
    *unsupported = false;
    for (int x = X_CPU; x < X_COUNT_; x++) {
      if (o.unsupported[x] && !*unsupported && why)
        eddy_buf_printf(why, "  unsupported: %s\n", o.error[x]);
      *unsupported |= o.unsupported[x];
    }
  }
  if (s) {
    for (int x = 0; x < X_COUNT_; x++) {
      s->ms[x] += o.ms[x];
      if (x >= X_CPU_PASSES)
        s->changed[x] += o.ran[x] || o.error[x] != NULL;
      if (x == X_CPU_PASSES && o.stats[x] && (o.ran[x] || o.error[x]))
        add_pass_stats(s, o.stats[x]);
    }
  }
  unsigned bad = failures(&o, count_ops(text, entry), why, fl);
  if (fl)
    fl->bad = bad;
  outcome_destroy(&o);
  return bad;
}

/// ---- Shrinking -------------------------------------------------------------

typedef struct walk_pick {
  int64_t want, seen;
  eddy_op_t *op;
} walk_pick_t;

static eddy_walk_result_t pick_op(eddy_op_t *op, void *user) {
  walk_pick_t *w = user;
  if (eddy_ir_op_is(op, "func.func") ||
      eddy_ir_op_has_trait(op, EDDY_TRAIT_TERMINATOR))
    return EDDY_WALK_ADVANCE;
  if (w->seen++ == w->want) {
    w->op = op;
    return EDDY_WALK_INTERRUPT;
  }
  return EDDY_WALK_ADVANCE;
}

/// A zero (or one) constant of static type t before op; NULL otherwise.
static eddy_value_t *const_like(eddy_ctx_t *ctx, eddy_op_t *before,
                                const eddy_type_t *t, double x) {
  if (t->kind != EDDY_TYPE_TENSOR || t->rank < 0)
    return NULL;
  for (int32_t i = 0; i < t->rank; i++)
    if (t->dims[i] == EDDY_DIM_DYNAMIC)
      return NULL;
  eddy_builder_t b;
  eddy_ir_builder_init(&b, ctx);
  eddy_ir_builder_set_before(&b, before);
  const eddy_attr_t *a =
      eddy_dtype_is_float(t->dtype)
          ? eddy_ir_dense_attr_from_f64(ctx, t, &x, 1)
          : eddy_ir_dense_attr_from_i64(ctx, t, (int64_t[]){(int64_t)x}, 1);
  eddy_value_t *v = NULL;
  if (eddy_ir_build_constant(&b, a, &v))
    return NULL;
  return v;
}

/// Mutation `kind` of op: 0 its results replaced by same-typed operands
/// (a loop by its initial values), 1 by zeros, 2 by ones, 3 by a function
/// argument of the same type (kind 4, erasing a dead op, is mutant's).
/// False when it does not apply.
static bool mutate(eddy_ctx_t *ctx, eddy_op_t *f, eddy_op_t *op, int kind) {
  eddy_block_t *entry = eddy_ir_func_entry(f);
  bool any = false;
  for (uint32_t r = 0; r < op->num_results; r++) {
    eddy_value_t *res = &op->results[r];
    if (!eddy_ir_value_has_uses(res))
      continue;
    eddy_value_t *to = NULL;
    if (kind == 0) {
      if (eddy_ir_op_is(op, "ctl.while") && r < op->num_operands) {
        to = eddy_ir_op_operand(op, r);
      } else {
        for (uint32_t k = 0; k < op->num_operands && !to; k++)
          if (eddy_ir_op_operand(op, k)->type == res->type)
            to = eddy_ir_op_operand(op, k);
      }
    } else if (kind == 1 || kind == 2) {
      if (eddy_ir_op_is(op, "core.constant"))
        return false;
      to = const_like(ctx, op, res->type, kind == 1 ? 0.0 : 1.0);
    } else {
      for (size_t k = 0; k < entry->num_args && !to; k++)
        if (entry->args[k]->type == res->type)
          to = entry->args[k];
    }
    if (!to || to->type != res->type)
      continue;
    eddy_ir_value_replace_all_uses(res, to);
    any = true;
  }
  return any;
}

/// The text of mutation (op index j, kind) of text, the op erased when it
/// is dead then; NULL when it does not apply or does not verify.
static char *mutant(const char *text, const char *entry, int64_t j, int kind,
                    bool *out_past_end) {
  eddy_ctx_t *ctx = eddy_ir_ctx_create();
  eddy_dialects_register_all(ctx);
  eddy_module_t *m = NULL;
  char *res = NULL;
  *out_past_end = false;
  if (parse(ctx, text, &m)) {
    eddy_ir_ctx_destroy(ctx);
    return NULL;
  }
  eddy_op_t *f = eddy_ir_module_lookup_func(m, entry);
  walk_pick_t w = {.want = j};
  eddy_ir_walk_pre(f, pick_op, &w);
  if (!w.op) {
    *out_past_end = true;
  } else if (kind == 4 || mutate(ctx, f, w.op, kind)) {
    // The op goes when nothing uses it any more; other dead ops stay
    // (a dead use may be what makes the program fail), until their turn.
    bool used = false;
    for (uint32_t r = 0; r < w.op->num_results; r++)
      used = used || eddy_ir_value_has_uses(&w.op->results[r]);
    if (!used)
      eddy_ir_op_erase(w.op);
    eddy_status_t st =
        kind == 4 && used ? eddy_status_create(EDDY_ERR_INTERNAL, "used")
                          : eddy_ir_verify_module(m);
    if (!st) {
      eddy_buf_t b;
      eddy_buf_init(&b);
      eddy_print_opts_t o = {0};
      eddy_ir_module_print(m, &o, &b);
      res = eddy_buf_take(&b);
    }
    eddy_status_destroy(st);
  }
  eddy_ir_module_destroy(m);
  eddy_ir_ctx_destroy(ctx);
  return res;
}

/// Whether a shrinking candidate still fails the way the original did.
typedef bool (*still_fails_fn)(eddy_rt_ctx_t *rt, const char *text,
                               const char *entry, const inputs_t *in,
                               const void *user);

static bool same_executions_fail(eddy_rt_ctx_t *rt, const char *text,
                                 const char *entry, const inputs_t *in,
                                 const void *user) {
  const failure_t *target = user;
  failure_t got;
  check_text(rt, text, entry, in, NULL, NULL, NULL, &got, target->bad);
  return same_failure(target, &got);
}

/// Shrinks text while still_fails says it fails. Returns the smallest text
/// (malloc'ed).
static char *shrink(eddy_rt_ctx_t *rt, const char *text, const char *entry,
                    const inputs_t *in, still_fails_fn still_fails,
                    const void *user, bool quiet) {
  char *cur = strdup(text);
  int tries = 0;
  bool progress = true;
  while (progress && tries < 600) {
    progress = false;
    for (int64_t j = 0; tries < 600; j++) {
      bool past_end = false;
      for (int kind = 0; kind < 5 && !past_end; kind++) {
        char *cand = mutant(cur, entry, j, kind, &past_end);
        if (!cand)
          continue;
        tries++;
        if (still_fails(rt, cand, entry, in, user)) {
          free(cur);
          cur = cand;
          progress = true;
          j--; // the same position again: another op is there now
          break;
        }
        free(cand);
      }
      if (past_end)
        break;
    }
  }
  if (!quiet)
    fprintf(stderr, "difftest: shrinking took %d tries\n", tries);
  return cur;
}

/// ---- One program -----------------------------------------------------------

static void write_reproducer(const opts_t *op, int64_t index,
                             const char *suffix, const char *text) {
  if (!op->out_dir)
    return;
  char path[1024];
  snprintf(path, sizeof path, "%s/difftest-%" PRIu64 "-%" PRId64 "%s.eddy",
           op->out_dir, op->seed, index, suffix);
  FILE *fp = fopen(path, "w");
  if (fp) {
    fputs(text, fp);
    fclose(fp);
    fprintf(stderr, "difftest: reproducer written to %s\n", path);
  }
}

static void report(const opts_t *op, eddy_rt_ctx_t *rt, int64_t index,
                   const char *what, const char *text, const char *entry,
                   const inputs_t *in, const failure_t *fl, const char *why) {
  fprintf(stderr, "difftest: FAIL seed=%" PRIu64 " program=%" PRId64
                  " (%s):\n%s",
          op->seed, index, what, why);
  char *small = fl->bad & ((1u << X_EVAL) | (1u << X_COUNT_))
                    ? strdup(text)
                    : shrink(rt, text, entry, in, same_executions_fail, fl,
                             op->quiet);
  eddy_buf_t b;
  eddy_buf_init(&b);
  eddy_buf_printf(&b, "// difftest --seed %" PRIu64 " --only %" PRId64
                      " (%s), shrunk\n",
                  op->seed, index, what);
  eddy_buf_t w;
  eddy_buf_init(&w);
  check_text(rt, small, entry, in, &w, NULL, NULL, NULL, ALL);
  for (char *line = w.data; line && *line;) {
    char *nl = strchr(line, '\n');
    eddy_buf_printf(&b, "//%.*s\n", (int)(nl ? nl - line : (long)strlen(line)),
                    line);
    line = nl ? nl + 1 : NULL;
  }
  eddy_buf_destroy(&w);
  describe_inputs(in, &b);
  eddy_buf_puts(&b, small);
  fprintf(stderr, "%s", b.data);
  write_reproducer(op, index, strcmp(what, "gradient") == 0 ? "-grad" : "",
                   b.data);
  eddy_buf_destroy(&b);
  free(small);
}

/// Differentiates @f of text with respect to its float arguments but p
/// and checks the gradient with eddy_ad_check at in. On success, and when
/// out_gtext is not NULL, *out_gtext is the module with @f_grad
/// (malloc'ed); on failure, why says what failed.
static bool grad_fd_ok(eddy_rt_ctx_t *rt, const char *text, const inputs_t *in,
                       uint64_t seed, eddy_buf_t *why, char **out_gtext) {
  eddy_ctx_t *ctx = eddy_ir_ctx_create();
  eddy_dialects_register_all(ctx);
  eddy_module_t *m = NULL;
  bool ok = true;
  eddy_status_t st = parse(ctx, text, &m);
  eddy_op_t *f = st ? NULL : eddy_ir_module_lookup_func(m, "f");
  size_t wrt[MAX_ARGS], nwrt = 0;
  const eddy_type_t *ft = f ? eddy_ir_func_type(f) : NULL;
  for (uint32_t i = 0; f && i < ft->num_inputs; i++)
    if (i != DT_ARG_PRED && eddy_dtype_is_float(ft->inputs[i]->dtype))
      wrt[nwrt++] = i;
  eddy_op_t *gf = NULL;
  if (!st)
    st = eddy_ad_grad(m, "f", wrt, nwrt, NULL, &gf);
  if (!st)
    st = eddy_ir_verify_module(m);
  eddy_ad_check_result_t res = {0};
  if (!st) {
    eddy_ad_check_opts_t co = eddy_ad_check_opts_default();
    co.num_directions = 2;
    co.seed = seed;
    co.rtol = 1e-5;
    st = eddy_ad_check(rt, f, gf, wrt, nwrt, in->v, &co, &res);
  }
  if (st) {
    eddy_buf_printf(why, "  autodiff: error: %s %s\n", eddy_status_message(st),
                    eddy_status_notes(st));
    ok = false;
  } else if (!res.ok) {
    for (size_t i = 0; i < res.num_args; i++)
      if (!res.args[i].ok)
        eddy_buf_printf(why, "  gradient of arg%zu: finite differences %.9g, "
                             "vjp %.9g (relative error %.3g)\n",
                        res.args[i].arg, res.args[i].fd, res.args[i].vjp,
                        res.args[i].fd_rel_err);
    ok = false;
  }
  eddy_ad_check_result_destroy(&res);
  eddy_status_destroy(st);
  if (ok && out_gtext)
    *out_gtext = module_text(m);
  if (m)
    eddy_ir_module_destroy(m);
  eddy_ir_ctx_destroy(ctx);
  return ok;
}

typedef struct grad_failure {
  uint64_t seed;
  char why[41]; ///< the start of the original's description
} grad_failure_t;

static bool same_grad_failure(eddy_rt_ctx_t *rt, const char *text,
                              const char *entry, const inputs_t *in,
                              const void *user) {
  (void)entry;
  const grad_failure_t *gf = user;
  // The forward program must still run.
  failure_t fw;
  check_text(rt, text, "f", in, NULL, NULL, NULL, &fw, 0);
  if (fw.bad)
    return false;
  eddy_buf_t why;
  eddy_buf_init(&why);
  bool fails = !grad_fd_ok(rt, text, in, gf->seed, &why, NULL) &&
               strncmp(why.data, gf->why, strlen(gf->why)) == 0;
  eddy_buf_destroy(&why);
  return fails;
}

/// The gradient of a smooth program: eddy_ad_check against finite
/// differences, then the gradient function through every execution.
/// Returns whether it passed.
static bool check_grad(const opts_t *op, eddy_rt_ctx_t *rt, int64_t index,
                       const char *text, const inputs_t *in, stats_t *s) {
  eddy_buf_t why;
  eddy_buf_init(&why);
  char *gtext = NULL;
  uint64_t seed = program_seed(op->seed, index);
  bool ok = grad_fd_ok(rt, text, in, seed, &why, &gtext);
  if (!ok) {
    fprintf(stderr, "difftest: FAIL seed=%" PRIu64 " program=%" PRId64
                    " (gradient check):\n%s",
            op->seed, index, why.data);
    grad_failure_t gfl = {.seed = seed};
    snprintf(gfl.why, sizeof gfl.why, "%s", why.data);
    char *small =
        shrink(rt, text, "f", in, same_grad_failure, &gfl, op->quiet);
    eddy_buf_t b, w;
    eddy_buf_init(&b);
    eddy_buf_init(&w);
    grad_fd_ok(rt, small, in, seed, &w, NULL);
    eddy_buf_printf(&b, "// difftest --seed %" PRIu64 " --only %" PRId64
                        " (gradient check), shrunk\n",
                    op->seed, index);
    for (char *line = w.data; line && *line;) {
      char *nl = strchr(line, '\n');
      eddy_buf_printf(&b, "//%.*s\n",
                      (int)(nl ? nl - line : (long)strlen(line)), line);
      line = nl ? nl + 1 : NULL;
    }
    describe_inputs(in, &b);
    eddy_buf_puts(&b, small);
    fprintf(stderr, "%s", b.data);
    write_reproducer(op, index, "-gradcheck", b.data);
    eddy_buf_destroy(&b);
    eddy_buf_destroy(&w);
    free(small);
  }
  eddy_buf_destroy(&why);
  eddy_ctx_t *ctx = eddy_ir_ctx_create();
  eddy_dialects_register_all(ctx);
  eddy_module_t *m = NULL;
  eddy_op_t *gf = NULL;
  if (ok && !parse(ctx, gtext, &m))
    gf = eddy_ir_module_lookup_func(m, "f_grad");
  // The gradient function as a program of its own: seeds of ones.
  if (ok && gf) {
    inputs_t gin = {.n = 0};
    const eddy_type_t *gt = eddy_ir_func_type(gf);
    for (size_t i = 0; i < in->n; i++)
      eddy_eval_value_share(&in->v[i], &gin.v[gin.n++]);
    bool fine = true;
    for (uint32_t i = (uint32_t)in->n; i < gt->num_inputs && fine; i++) {
      // a seed of f's result i - n: its shape is the reference's result
      eddy_rt_tensor_t t;
      const eddy_type_t *ty = gt->inputs[i];
      int64_t dims[8];
      for (int32_t k = 0; k < ty->rank && k < 8; k++)
        dims[k] = ty->dims[k] == EDDY_DIM_DYNAMIC
                      ? in->v[0].tensor.dims[0]
                      : ty->dims[k];
      fine = eddy_rt_tensor_create(rt, (int32_t)ty->dtype, ty->rank, dims,
                                   "seed", &t) == EDDY_RT_OK;
      for (int64_t k = 0; fine && k < eddy_rt_tensor_numel(&t); k++)
        eddy_rt_tensor_set_f64(&t, k, 1.0 - 0.25 * (double)(k % 3));
      if (fine)
        gin.v[gin.n++] = eddy_eval_value_from_tensor(&t);
    }
    if (fine) {
      eddy_buf_t w;
      eddy_buf_init(&w);
      bool unsup = false;
      char name[64];
      snprintf(name, sizeof name, "%s", eddy_ir_func_name(gf));
      failure_t fl;
      unsigned bad = check_text(rt, gtext, name, &gin, &w, &unsup, s, &fl, ALL);
      s->grad_ops += (int64_t)count_ops(gtext, name);
      if (unsup)
        s->unsupported++;
      // a seed of a wrong shape (a result whose `?` is not D) is the
      // evaluator's error: not this test's business.
      if (bad & (1u << X_EVAL))
        s->skipped++;
      else if (bad) {
        report(op, rt, index, "gradient", gtext, name, &gin, &fl, w.data);
        ok = false;
      }
      eddy_buf_destroy(&w);
    }
    inputs_release(&gin);
  }
  free(gtext);
  if (m)
    eddy_ir_module_destroy(m);
  eddy_ir_ctx_destroy(ctx);
  return ok;
}

/// Generates, runs and checks program `index`; false when it failed.
static bool one_program(const opts_t *op, eddy_rt_ctx_t *rt, int64_t index,
                        stats_t *s) {
  uint64_t seed = program_seed(op->seed, index);
  bool smooth = op->grad_every > 0 && index % op->grad_every == 0;
  dt_gen_opts_t go = {.smooth = smooth, .budget = op->budget};
  double t0 = now_ms();
  eddy_ctx_t *ctx = eddy_ir_ctx_create();
  eddy_dialects_register_all(ctx);
  eddy_module_t *m = eddy_ir_module_create(ctx, NULL);
  eddy_status_t st = dt_generate(m, "f", seed, &go);
  char *text = st ? NULL : module_text(m);
  inputs_t in = {.n = 0};
  if (!st)
    st = make_inputs(rt, eddy_ir_module_lookup_func(m, "f"), seed, &in);
  eddy_ir_module_destroy(m);
  eddy_ir_ctx_destroy(ctx);
  s->gen_ms += now_ms() - t0;
  if (st) {
    fprintf(stderr, "difftest: program %" PRId64 ": the generator failed: %s\n",
            index, eddy_status_message(st));
    eddy_status_destroy(st);
    free(text);
    inputs_release(&in);
    return false;
  }
  if (op->emit) {
    eddy_buf_t b;
    eddy_buf_init(&b);
    describe_inputs(&in, &b);
    printf("%s%s", b.data, text);
    eddy_buf_destroy(&b);
    free(text);
    inputs_release(&in);
    return true;
  }
  s->programs++;
  s->ops += (int64_t)count_ops(text, "f");
  eddy_buf_t why;
  eddy_buf_init(&why);
  bool unsup = false;
  failure_t fl;
  unsigned bad = check_text(rt, text, "f", &in, &why, &unsup, s, &fl, ALL);
  bool ok = !bad;
  if (unsup) {
    s->unsupported++;
    if (!op->quiet)
      fprintf(stderr, "difftest: program %" PRId64 ": %s", index, why.data);
  }
  if (bad)
    report(op, rt, index, "executions", text, "f", &in, &fl, why.data);
  eddy_buf_destroy(&why);
  if (ok && smooth) {
    double g0 = now_ms();
    s->grads++;
    ok = check_grad(op, rt, index, text, &in, s);
    s->grad_ms += now_ms() - g0;
  }
  free(text);
  inputs_release(&in);
  return ok;
}

/// ---- Main -------------------------------------------------------------------

static int usage(void) {
  fprintf(stderr,
          "usage: difftest [--count N] [--seed S] [--grad-every K] "
          "[--budget B] [--out DIR] [--only I] [--emit] [--keep-going] "
          "[--quiet]\n");
  return 2;
}

int main(int argc, char **argv) {
  opts_t op = {.seed = 1, .count = 100, .only = -1, .grad_every = 10};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--emit") == 0)
      op.emit = true;
    else if (strcmp(a, "--keep-going") == 0)
      op.keep_going = true;
    else if (strcmp(a, "--quiet") == 0)
      op.quiet = true;
    else if (!v)
      return usage();
    else if (strcmp(a, "--count") == 0)
      op.count = strtoll(v, NULL, 10), i++;
    else if (strcmp(a, "--seed") == 0)
      op.seed = strtoull(v, NULL, 10), i++;
    else if (strcmp(a, "--grad-every") == 0)
      op.grad_every = atoi(v), i++;
    else if (strcmp(a, "--budget") == 0)
      op.budget = atoi(v), i++;
    else if (strcmp(a, "--only") == 0)
      op.only = strtoll(v, NULL, 10), i++;
    else if (strcmp(a, "--out") == 0)
      op.out_dir = v, i++;
    else
      return usage();
  }
  eddy_rt_ctx_t *rt = NULL;
  if (eddy_rt_ctx_create(NULL, &rt) != EDDY_RT_OK) {
    fprintf(stderr, "difftest: cannot create the runtime context\n");
    return 1;
  }
  stats_t s = {0};
  double t0 = now_ms();
  int64_t first = op.only >= 0 ? op.only : 0;
  int64_t last = op.only >= 0 ? op.only + 1 : op.count;
  for (int64_t i = first; i < last; i++) {
    if (!one_program(&op, rt, i, &s)) {
      s.failures++;
      if (!op.keep_going)
        break;
    }
  }
  if (!op.emit)
    printf("difftest: seed %" PRIu64 ": %" PRId64 " programs (%" PRId64
           " ops), %" PRId64 " gradients (%" PRId64 " ops), %" PRId64
           " failed, %" PRId64 " unsupported by a compiled target, %" PRId64
           " gradient runs skipped; %.1f s (generate %.1f, eval %.1f, "
           "interp %.1f + %.1f, cpu %.1f, kernels %.1f, cpu+passes %.1f, "
           "kernels+passes %.1f, gradients %.1f)\n",
           op.seed, s.programs, s.ops, s.grads, s.grad_ops, s.failures,
           s.unsupported, s.skipped, (now_ms() - t0) / 1e3, s.gen_ms / 1e3,
           s.ms[X_EVAL] / 1e3, s.ms[X_INTERP1] / 1e3, s.ms[X_INTERP2] / 1e3,
           s.ms[X_CPU] / 1e3, s.ms[X_KERNELS] / 1e3, s.ms[X_CPU_PASSES] / 1e3,
           s.ms[X_KERNELS_PASSES] / 1e3, s.grad_ms / 1e3);
  if (!op.emit) {
    // What the compile pipeline's passes did (gradients included).
    printf("difftest: the passes changed %" PRId64 " functions for cpu+passes "
           "and %" PRId64 " for kernels+passes:",
           s.changed[X_CPU_PASSES], s.changed[X_KERNELS_PASSES]);
    for (size_t i = 0; i < s.num_pass; i++)
      printf(" %s %" PRId64 " (in %" PRId64 ")", s.pass[i].name,
             s.pass[i].total, s.pass[i].programs);
    printf("\n");
  }
  eddy_rt_ctx_destroy(rt);
  return s.failures ? 1 : 0;
}

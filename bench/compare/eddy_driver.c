/// eddy's side of the side-by-side benchmarks (bench/compare, bench/README.md):
/// runs one model on .npy inputs and times it by the rule bench/compare/worker.py
/// applies to TensorFlow and JAX, so that the numbers compare.
///
///   eddy_compare_driver --mode=jit|interp --ir FILE --entry F [options]
///   eddy_compare_aot --mode=aot [options]     (one binary per model)
///
/// options: --input FILE.npy (one per argument, in order), --out DIR,
/// --min-runs N (3), --max-runs N (10), --budget-s S (20), --warmup-s S (1).
///
/// - jit: the CPU backend's JIT (eddy_cpu_jit_create; its time is compile_s);
/// - interp: the function lowered to dataflow and run by the interpreter
///   (runtime/interp, every core);
/// - aot: built by bench/compare/run.py with -DEDDY_BENCH_AOT against the
///   header and object `eddy compile --prefix bench_model` wrote, and the
///   in-tree runtime; the call is bench_model_run, as an application's.
///
/// The first call (first_call_s) starts the warm-up; its results go to
/// DIR/out_<i>.npy. Untimed calls follow until the warm-up has lasted
/// warmup-s seconds (warmup_calls counts them all, the first included): on
/// the benchmark machine the first tenth of a second of a multithreaded run
/// can be up to twice as slow as the rest (bench/README.md). Then calls are
/// timed until there are at least min-runs and either max-runs or budget-s
/// seconds of timed calls. Each call's
/// results are released after its time is taken. DIR/result.json gets the
/// times, their median, the process's peak resident memory and the runtime
/// context's peak tensor and list bytes (eddy_rt_ctx_peak_bytes); a failure
/// writes {"error": ...} there and exits 1.
#define _POSIX_C_SOURCE 200809L

#include "runtime/eddyrt.h"
#include "runtime/npy.h"

#ifdef EDDY_BENCH_AOT
#include "bench_model.h"
#else
#include "backend-cpu/cpu.h"
#include "dialects/dialects.h"
#include "ir/ir.h"
#include "lower/lower.h"
#include "runtime/eval/eval.h"
#include "runtime/interp/interp.h"
#endif

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define MAX_INPUTS 64
#define ERRLEN 8192

typedef struct opts {
  const char *mode, *ir, *entry, *out;
  const char *inputs[MAX_INPUTS];
  int num_inputs;
  int min_runs, max_runs;
  double budget_s, warmup_s;
} opts_t;

/// A generated entry point (docs/cpu.md, "The generated interface").
typedef int32_t (*entry_fn_t)(eddy_rt_ctx_t *rt, const eddy_rt_tensor_t *args,
                              eddy_rt_tensor_t *results, char *err,
                              size_t errlen);

/// What one call needs; filled by load().
typedef struct model {
  entry_fn_t fn; // aot, jit: the generated entry point
  size_t num_args, num_results;
  double compile_s; // jit: eddy_cpu_jit_create; else 0
#ifndef EDDY_BENCH_AOT
  eddy_ctx_t *ctx;
  eddy_module_t *module;
  eddy_cpu_jit_t *jit;
  eddy_op_t *func; // interp: lowered to dataflow
  eddy_interp_opts_t interp;
#endif
} model_t;

static char g_err[ERRLEN];
static const char *g_out;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/// Writes s as a JSON string (quotes, backslashes and control characters
/// escaped).
static void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c < 0x20)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

static FILE *open_result(void) {
  char path[4096];
  snprintf(path, sizeof path, "%s/result.json", g_out);
  FILE *f = fopen(path, "w");
  if (!f)
    fprintf(stderr, "eddy_compare_driver: cannot write %s\n", path);
  return f;
}

/// Reports the failure on stderr and in result.json; returns the exit code.
static int fail(const char *what) {
  fprintf(stderr, "eddy_compare_driver: %s\n", what);
  FILE *f = g_out ? open_result() : NULL;
  if (f) {
    fprintf(f, "{\"error\": ");
    json_string(f, what);
    fprintf(f, "}\n");
    fclose(f);
  }
  return 1;
}

#ifndef EDDY_BENCH_AOT
/// Moves a status's message into g_err; true when there was one.
static bool failed(eddy_status_t st) {
  if (!st)
    return false;
  snprintf(g_err, sizeof g_err, "%s", eddy_status_message(st));
  eddy_status_destroy(st);
  return true;
}
#endif

static bool load(const opts_t *o, model_t *m) {
  memset(m, 0, sizeof *m);
#ifdef EDDY_BENCH_AOT
  if (strcmp(o->mode, "aot") != 0) {
    snprintf(g_err, sizeof g_err, "this build runs --mode=aot only");
    return false;
  }
  m->fn = bench_model_run;
  m->num_args = bench_model_NUM_ARGS;
  m->num_results = bench_model_NUM_RESULTS;
  return true;
#else
  bool jit = strcmp(o->mode, "jit") == 0;
  if (!jit && strcmp(o->mode, "interp") != 0) {
    snprintf(g_err, sizeof g_err,
             "--mode must be jit or interp (aot is a separate build)");
    return false;
  }
  if (!o->ir || !o->entry) {
    snprintf(g_err, sizeof g_err, "--mode=%s needs --ir FILE and --entry F",
             o->mode);
    return false;
  }
  m->ctx = eddy_ir_ctx_create();
  eddy_dialects_register_all(m->ctx);
  if (failed(eddy_ir_parse_file(m->ctx, o->ir, &m->module)) ||
      failed(eddy_ir_verify_module(m->module)))
    return false;
  m->func = eddy_ir_module_lookup_func(m->module, o->entry);
  if (!m->func) {
    snprintf(g_err, sizeof g_err, "%s: no function '%s'", o->ir, o->entry);
    return false;
  }
  const eddy_type_t *ft = eddy_ir_func_type(m->func);
  m->num_args = ft->num_inputs;
  m->num_results = ft->num_outputs;
  if (jit) {
    eddy_cpu_opts_t co = eddy_cpu_opts_default();
    co.prefix = "bench_model";
    double t0 = now_s();
    if (failed(eddy_cpu_jit_create(m->module, o->entry, &co, &m->jit)))
      return false;
    m->compile_s = now_s() - t0;
    m->fn = eddy_cpu_jit_entry(m->jit);
    return true;
  }
  m->interp = eddy_interp_opts_default();
  return !failed(eddy_lower_to_dataflow_func(m->func)) &&
         !failed(eddy_ir_verify_op(m->func));
#endif
}

static void unload(model_t *m) {
#ifndef EDDY_BENCH_AOT
  eddy_cpu_jit_destroy(m->jit);
  if (m->module)
    eddy_ir_module_destroy(m->module);
  if (m->ctx)
    eddy_ir_ctx_destroy(m->ctx);
#endif
  (void)m;
}

static void release_all(eddy_rt_tensor_t *ts, size_t n) {
  for (size_t i = 0; i < n; i++)
    eddy_rt_tensor_release(&ts[i]);
}

/// One call: args borrowed, results owned by the caller afterwards (all
/// empty when it fails).
static bool call(model_t *m, eddy_rt_ctx_t *rt, const eddy_rt_tensor_t *args,
                 eddy_rt_tensor_t *results) {
  if (m->fn)
    return m->fn(rt, args, results, g_err, sizeof g_err) == 0;
#ifndef EDDY_BENCH_AOT
  eddy_eval_value_t ev[MAX_INPUTS], out[MAX_INPUTS];
  for (size_t i = 0; i < m->num_args; i++) {
    eddy_rt_tensor_t t;
    eddy_rt_tensor_share(&args[i], &t);
    ev[i] = eddy_eval_value_from_tensor(&t);
  }
  memset(out, 0, sizeof out);
  eddy_status_t st = eddy_interp_func(rt, m->func, &m->interp, ev, m->num_args,
                                      out, m->num_results, NULL);
  for (size_t i = 0; i < m->num_args; i++)
    eddy_eval_value_release(&ev[i]);
  bool ok = !failed(st);
  for (size_t i = 0; i < m->num_results; i++) {
    if (ok && out[i].kind != EDDY_EVAL_TENSOR) {
      snprintf(g_err, sizeof g_err, "result %zu is not a tensor", i);
      ok = false;
    }
    results[i] = eddy_rt_tensor_empty();
    if (ok) {
      results[i] = out[i].tensor; // the reference moves
      out[i].tensor = eddy_rt_tensor_empty();
    }
    eddy_eval_value_release(&out[i]);
  }
  if (!ok)
    release_all(results, m->num_results);
  return ok;
#else
  return false;
#endif
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static bool parse_int(const char *s, int *out) {
  char *end = NULL;
  long v = s ? strtol(s, &end, 10) : 0;
  if (!s || end == s || *end || v < 1 || v > 100000)
    return false;
  *out = (int)v;
  return true;
}

static int usage(const char *msg) {
  fprintf(stderr,
          "eddy_compare_driver: %s\n"
          "usage: eddy_compare_driver --mode=jit|interp|aot [--ir FILE "
          "--entry F] --input FILE.npy... --out DIR [--min-runs N] "
          "[--max-runs N] [--budget-s S] [--warmup-s S]\n",
          msg);
  return 2;
}

static int parse_args(int argc, char **argv, opts_t *o) {
  memset(o, 0, sizeof *o);
  o->min_runs = 3;
  o->max_runs = 10;
  o->budget_s = 20;
  o->warmup_s = 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strncmp(a, "--mode=", 7) == 0) {
      o->mode = a + 7;
      continue;
    }
    if (!v)
      return usage("a flag needs a value");
    i++;
    if (strcmp(a, "--ir") == 0) {
      o->ir = v;
    } else if (strcmp(a, "--entry") == 0) {
      o->entry = v;
    } else if (strcmp(a, "--out") == 0) {
      o->out = v;
    } else if (strcmp(a, "--input") == 0) {
      if (o->num_inputs == MAX_INPUTS)
        return usage("too many --input");
      o->inputs[o->num_inputs++] = v;
    } else if (strcmp(a, "--min-runs") == 0) {
      if (!parse_int(v, &o->min_runs))
        return usage("--min-runs needs a count");
    } else if (strcmp(a, "--max-runs") == 0) {
      if (!parse_int(v, &o->max_runs))
        return usage("--max-runs needs a count");
    } else if (strcmp(a, "--budget-s") == 0) {
      char *end = NULL;
      o->budget_s = strtod(v, &end);
      if (end == v || *end || !(o->budget_s >= 0))
        return usage("--budget-s needs seconds");
    } else if (strcmp(a, "--warmup-s") == 0) {
      char *end = NULL;
      o->warmup_s = strtod(v, &end);
      if (end == v || *end || !(o->warmup_s >= 0))
        return usage("--warmup-s needs seconds");
    } else {
      return usage("unknown flag");
    }
  }
  if (!o->mode || !o->out)
    return usage("--mode and --out are required");
  if (o->max_runs < o->min_runs)
    o->max_runs = o->min_runs;
  return 0;
}

static void write_result(FILE *f, const opts_t *o, const model_t *m,
                         const eddy_rt_ctx_t *rt, double first,
                         int warmup_calls, const double *times, int n) {
  double *sorted = malloc((size_t)n * sizeof *sorted);
  double median = 0;
  if (sorted && n > 0) {
    memcpy(sorted, times, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_double);
    median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  }
  free(sorted);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  fprintf(f, "{\"system\": \"eddy-%s\", \"times_s\": [", o->mode);
  for (int i = 0; i < n; i++)
    fprintf(f, "%s%.9g", i ? ", " : "", times[i]);
  fprintf(f,
          "], \"median_s\": %.9g, \"first_call_s\": %.9g, "
          "\"warmup_calls\": %d, \"compile_s\": ",
          median, first, warmup_calls);
  if (strcmp(o->mode, "jit") == 0)
    fprintf(f, "%.9g, \"compile_note\": \"eddy_cpu_jit_create\"", m->compile_s);
  else
    fprintf(f, "null");
  fprintf(f,
          ", \"peak_rss_mb\": %.1f, \"peak_tensor_mb\": %.1f, "
          "\"version\": \"eddy (runtime ABI %u)\"}\n",
          (double)ru.ru_maxrss / 1024.0,
          (double)eddy_rt_ctx_peak_bytes(rt) / (1024.0 * 1024.0),
          (unsigned)eddy_rt_abi_version());
}

int main(int argc, char **argv) {
  opts_t o;
  int rc = parse_args(argc, argv, &o);
  if (rc)
    return rc;
  g_out = o.out;
  eddy_rt_ctx_options_t ro = eddy_rt_ctx_options_default();
  eddy_rt_ctx_t *rt = NULL;
  eddy_rt_status_t rst = eddy_rt_ctx_create(&ro, &rt);
  if (rst) {
    snprintf(g_err, sizeof g_err, "runtime context: %s",
             eddy_rt_status_message(rst));
    eddy_rt_status_destroy(rst);
    return fail(g_err);
  }
  model_t m;
  eddy_rt_tensor_t args[MAX_INPUTS], results[MAX_INPUTS];
  int num_loaded = 0;
  bool ok = load(&o, &m);
  if (ok && (m.num_args != (size_t)o.num_inputs ||
             m.num_results > MAX_INPUTS)) {
    snprintf(g_err, sizeof g_err,
             "the model takes %zu arguments and returns %zu results; "
             "%d --input given",
             m.num_args, m.num_results, o.num_inputs);
    ok = false;
  }
  for (int i = 0; ok && i < o.num_inputs; i++, num_loaded++) {
    rst = eddy_rt_npy_read_file(rt, o.inputs[i], &args[i]);
    if (rst) {
      snprintf(g_err, sizeof g_err, "--input %s: %s", o.inputs[i],
               eddy_rt_status_message(rst));
      eddy_rt_status_destroy(rst);
      ok = false;
    }
  }
  // Warm-up; its results are the ones compared with the other systems.
  double first = 0;
  if (ok) {
    double t0 = now_s();
    ok = call(&m, rt, args, results);
    first = now_s() - t0;
  }
  for (size_t i = 0; ok && i < m.num_results; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/out_%zu.npy", o.out, i);
    rst = eddy_rt_npy_write_file(path, &results[i], 0);
    if (rst) {
      snprintf(g_err, sizeof g_err, "%s: %s", path,
               eddy_rt_status_message(rst));
      eddy_rt_status_destroy(rst);
      ok = false;
    }
  }
  if (ok)
    release_all(results, m.num_results);
  int warmup_calls = 1;
  for (double spent = first; ok && spent < o.warmup_s; warmup_calls++) {
    double t0 = now_s();
    ok = call(&m, rt, args, results);
    spent += now_s() - t0;
    if (ok)
      release_all(results, m.num_results);
  }
  double *times = calloc((size_t)o.max_runs, sizeof *times);
  int n = 0;
  double spent = 0;
  while (ok && times && n < o.max_runs &&
         (n < o.min_runs || spent < o.budget_s)) {
    double t0 = now_s();
    ok = call(&m, rt, args, results);
    times[n] = now_s() - t0;
    spent += times[n++];
    if (ok)
      release_all(results, m.num_results);
  }
  if (!times && ok) {
    snprintf(g_err, sizeof g_err, "out of memory");
    ok = false;
  }
  release_all(args, (size_t)num_loaded);
  if (ok) {
    FILE *f = open_result();
    ok = f != NULL;
    if (f) {
      write_result(f, &o, &m, rt, first, warmup_calls, times, n);
      fclose(f);
    }
    if (!ok)
      snprintf(g_err, sizeof g_err, "cannot write %s/result.json", o.out);
  }
  free(times);
  unload(&m);
  eddy_rt_ctx_destroy(rt);
  return ok ? 0 : fail(g_err);
}

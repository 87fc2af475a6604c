/// `eddy run --mode=interp|compare`: the dataflow interpreter, and the
/// comparison of the evaluator with it.
#define _POSIX_C_SOURCE 200809L

#include "tools/eddy/run_interp.h"

#include "lower/lower.h"
#include "runtime/interp/interp.h"
#include "tools/eddy/cli.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char eddy_cli_interp_help[] =
    "  --workers N            interp/compare: threads running ready ops\n"
    "                         (default: the cores)\n"
    "  --timeout-ms N         interp, compare, compiled: wall-clock limit\n"
    "                         of the run (compiled code checks it in its\n"
    "                         loops, every 64 iterations)\n"
    "  --rtol X, --atol X     compare: tolerance for floats, |a - b| <=\n"
    "                         atol + rtol * max|ref| (default rtol: 4 ulp\n"
    "                         per op of the function; integers: exact)\n"
    "  --stats                interp/compare: print interpreter statistics\n"
    "  --trace                interp/compare: print each op the interpreter\n"
    "                         runs, with its tag (frame:iteration) and\n"
    "                         whether its outputs are live or dead\n"
    "  --from=v1|ctl          interp/compare, FILE.pb: v1 runs the GraphDef's\n"
    "                         v1 control flow (Switch, Merge, Enter, Exit,\n"
    "                         NextIteration, stacks, TensorArrays) as it is;\n"
    "                         ctl (default) functionalizes it and lowers the\n"
    "                         structured program to dataflow\n";

void eddy_cli_interp_opts_init(eddy_cli_interp_opts_t *o) {
  memset(o, 0, sizeof(*o));
  o->rtol = -1;
  o->atol = -1;
}

static bool parse_i64(const char *s, int64_t *out) {
  if (!s || !*s)
    return false;
  char *end = NULL;
  long long v = strtoll(s, &end, 10);
  if (*end || v < 0)
    return false;
  *out = v;
  return true;
}

static bool parse_f64(const char *s, double *out) {
  if (!s || !*s)
    return false;
  char *end = NULL;
  double v = strtod(s, &end);
  if (*end || !(v >= 0) || isinf(v))
    return false;
  *out = v;
  return true;
}

int eddy_cli_interp_flag(int argc, char **argv, int *i,
                         eddy_cli_interp_opts_t *o) {
  const char *val = NULL;
  int64_t n = 0;
  if (strcmp(argv[*i], "--stats") == 0) {
    o->stats = true;
    return 1;
  }
  if (strcmp(argv[*i], "--trace") == 0) {
    o->trace = true;
    return 1;
  }
  if (eddy_cli_flag_value(argc, argv, i, "--from", &val)) {
    if (!val || (strcmp(val, "v1") != 0 && strcmp(val, "ctl") != 0))
      return eddy_cli_usage_error("run", "flag '--from' needs 'v1' or 'ctl', "
                                         "got '%s'",
                                  val ? val : "") + 1;
    o->from_v1 = strcmp(val, "v1") == 0;
    return 1;
  }
  if (eddy_cli_flag_value(argc, argv, i, "--workers", &val)) {
    if (!parse_i64(val, &n) || n < 1 || n > 1024)
      return eddy_cli_usage_error("run", "flag '--workers' needs a count in "
                                         "[1, 1024], got '%s'",
                                  val ? val : "") + 1;
    o->workers = (int32_t)n;
    return 1;
  }
  if (eddy_cli_flag_value(argc, argv, i, "--timeout-ms", &val)) {
    if (!parse_i64(val, &n))
      return eddy_cli_usage_error("run", "flag '--timeout-ms' needs a count "
                                         ">= 0, got '%s'",
                                  val ? val : "") + 1;
    o->timeout_ms = n;
    return 1;
  }
  bool rtol = eddy_cli_flag_value(argc, argv, i, "--rtol", &val);
  if (rtol || eddy_cli_flag_value(argc, argv, i, "--atol", &val)) {
    double x = 0;
    if (!parse_f64(val, &x))
      return eddy_cli_usage_error("run", "flag '%s' needs a number >= 0, got "
                                         "'%s'",
                                  rtol ? "--rtol" : "--atol", val ? val : "") +
             1;
    *(rtol ? &o->rtol : &o->atol) = x;
    return 1;
  }
  return 0;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double dtype_eps(int32_t dt) {
  switch (dt) {
  case EDDY_RT_F16:
    return 9.765625e-4;
  case EDDY_RT_BF16:
    return 7.8125e-3;
  case EDDY_RT_F32:
    return FLT_EPSILON;
  default:
    return DBL_EPSILON;
  }
}

/// Compares one result; prints a line; true when within tolerance.
static bool compare_one(size_t i, const eddy_eval_value_t *ref,
                        const eddy_eval_value_t *got,
                        const eddy_cli_interp_opts_t *o, size_t num_ops) {
  eddy_buf_t a, b;
  eddy_buf_init(&a);
  eddy_buf_init(&b);
  eddy_eval_value_describe(ref, &a);
  eddy_eval_value_describe(got, &b);
  bool ok = strcmp(a.data, b.data) == 0;
  double max_abs = 0, max_rel = 0, tol = 0;
  if (!ok) {
    printf("compare result %zu: MISMATCH: eval gives %s, interp %s\n", i,
           a.data, b.data);
  } else if (ref->kind == EDDY_EVAL_TENSOR) {
    const eddy_rt_tensor_t *r = &ref->tensor, *g = &got->tensor;
    int64_t n = eddy_rt_tensor_numel(r);
    bool is_float = eddy_rt_dtype_is_float(r->dtype);
    double ref_max = 0;
    for (int64_t k = 0; k < n; k++) {
      double d = 0, rel = 0;
      if (is_float) {
        double x = eddy_rt_tensor_get_f64(r, k), y = eddy_rt_tensor_get_f64(g, k);
        if (isfinite(x) && fabs(x) > ref_max)
          ref_max = fabs(x);
        if (isnan(x) || isnan(y))
          d = isnan(x) && isnan(y) ? 0 : INFINITY;
        else if (x == y)
          d = 0;
        else
          d = fabs(x - y);
        rel = d == 0 ? 0 : d / (fabs(x) > 0 ? fabs(x) : DBL_MIN);
      } else {
        int64_t x = eddy_rt_tensor_get_i64(r, k), y = eddy_rt_tensor_get_i64(g, k);
        d = x == y ? 0 : fabs((double)x - (double)y);
        rel = d == 0 ? 0 : d / (x ? fabs((double)x) : 1.0);
      }
      max_abs = d > max_abs ? d : max_abs;
      max_rel = rel > max_rel ? rel : max_rel;
    }
    if (is_float) {
      double rtol = o->rtol >= 0 ? o->rtol
                                 : 4 * dtype_eps(r->dtype) *
                                       (double)(num_ops ? num_ops : 1);
      double atol = o->atol >= 0 ? o->atol : 0;
      tol = atol + rtol * ref_max;
      ok = max_abs <= tol;
    } else {
      ok = max_abs == 0;
    }
    printf("compare result %zu: %s max_abs_diff %.9g max_rel_diff %.9g "
           "(tolerance %.9g): %s\n",
           i, a.data, max_abs, max_rel, tol, ok ? "ok" : "MISMATCH");
  } else {
    printf("compare result %zu: %s: ok\n", i, a.data);
  }
  eddy_buf_destroy(&a);
  eddy_buf_destroy(&b);
  return ok;
}

static eddy_status_t lower_and_verify(eddy_op_t *func) {
  EDDY_RETURN_IF_ERROR(eddy_lower_to_dataflow_func(func));
  return eddy_ir_verify_op(func);
}

static size_t count_ops(const eddy_op_t *func) {
  size_t n = 0;
  eddy_block_t *b = eddy_ir_func_entry(func);
  for (const eddy_op_t *op = b ? b->first : NULL; op; op = op->next)
    n++;
  return n;
}

static void print_trace(void *user, const char *line) {
  (void)user;
  fprintf(stderr, "trace: %s\n", line);
}

static void print_stats(const eddy_interp_stats_t *s) {
  fprintf(stderr,
          "interp stats: ops_run %" PRId64 ", ops_dead %" PRId64
          ", frames %" PRId64 ", iterations %" PRId64
          ", max_live_iterations %" PRId64 ", max_live_frames %" PRId64 "\n",
          s->ops_run, s->ops_dead, s->frames, s->iterations,
          s->max_live_iterations, s->max_live_frames);
}

eddy_status_t eddy_cli_run_interp(eddy_rt_ctx_t *rt, eddy_op_t *func,
                                  eddy_op_t *v1_func, const char *mode,
                                  const eddy_eval_opts_t *eval_opts,
                                  const eddy_cli_interp_opts_t *o,
                                  const eddy_eval_value_t *args, size_t nin,
                                  eddy_eval_value_t *out_results, size_t nout,
                                  bool *out_differs) {
  *out_differs = false;
  eddy_interp_opts_t io = eddy_interp_opts_default();
  io.num_workers = o->workers;
  io.timeout_ms = o->timeout_ms;
  if (o->trace)
    io.trace = print_trace;
  if (eval_opts->max_iterations > 0)
    io.max_iterations = eval_opts->max_iterations;
  eddy_interp_stats_t stats;
  eddy_op_t *ifunc = v1_func ? v1_func : func;
  if (strcmp(mode, "interp") == 0) {
    EDDY_RETURN_IF_ERROR(lower_and_verify(ifunc));
    eddy_status_t st = eddy_interp_func(rt, ifunc, &io, args, nin,
                                        out_results, nout, &stats);
    if (o->stats)
      print_stats(&stats);
    return st;
  }
  double t0 = now_ms();
  EDDY_RETURN_IF_ERROR(
      eddy_eval_func(rt, func, eval_opts, args, nin, out_results, nout));
  double t1 = now_ms();
  EDDY_RETURN_IF_ERROR(lower_and_verify(ifunc));
  eddy_eval_value_t *got = calloc(nout ? nout : 1, sizeof(*got));
  if (!got)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  double t2 = now_ms();
  eddy_status_t st =
      eddy_interp_func(rt, ifunc, &io, args, nin, got, nout, &stats);
  double t3 = now_ms();
  if (o->stats)
    print_stats(&stats);
  if (!st) {
    size_t ops = count_ops(ifunc);
    for (size_t i = 0; i < nout; i++)
      if (!compare_one(i, &out_results[i], &got[i], o, ops))
        *out_differs = true;
    printf("compare time: eval %.3f ms, interp %.3f ms\n", t1 - t0, t3 - t2);
  }
  for (size_t i = 0; i < nout; i++)
    eddy_eval_value_release(&got[i]);
  free(got);
  return st;
}

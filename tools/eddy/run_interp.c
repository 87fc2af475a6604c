/// `eddy run --mode=interp`: the dataflow interpreter, and the flags it
/// shares with --mode=compare.
#define _POSIX_C_SOURCE 200809L

#include "tools/eddy/run_interp.h"

#include "lower/lower.h"
#include "runtime/interp/interp.h"
#include "tools/eddy/cli.h"
#include "tools/eddy/run_compare.h"
#include "tools/eddy/run_compiled.h"

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
    "  --compare=LIST         compare: the executions to run, the first the\n"
    "                         reference: eval, interp, cpu, kernels, cuda\n"
    "                         (default: eval,interp,cpu,kernels, and cuda\n"
    "                         when a device answers)\n"
    "  --report FILE          compare: also write the comparison as JSON\n"
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
    "                         structured program to dataflow\n"
    "  --placement FILE       distributed: node-name patterns to ranks, one\n"
    "                         'PATTERN RANK' a line ('*' matches any run of\n"
    "                         characters); overrides the GraphDef's device\n"
    "                         fields (/job:J/task:T/...: rank T)\n"
    "  --placement=random:SEED  distributed: every op on a rank drawn from\n"
    "                         SEED (for testing)\n"
    "  --ranks N              distributed without mpirun: N ranks on threads\n"
    "                         of this process (default 1)\n";

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
  if (eddy_cli_flag_value(argc, argv, i, "--compare", &val)) {
    char why[256];
    if (!val || !eddy_cli_compare_list_valid(val, why))
      return eddy_cli_usage_error("run", "flag '--compare': %s",
                                  val ? why : "needs a list") + 1;
    o->compare = val;
    return 1;
  }
  if (eddy_cli_flag_value(argc, argv, i, "--report", &val)) {
    if (!val || !*val)
      return eddy_cli_usage_error("run", "flag '--report' needs a file "
                                         "name") + 1;
    o->report = val;
    return 1;
  }
  if (eddy_cli_flag_value(argc, argv, i, "--placement", &val)) {
    if (!val || !*val)
      return eddy_cli_usage_error("run", "flag '--placement' needs a file "
                                         "or random:SEED") + 1;
    o->placement = val;
    return 1;
  }
  if (eddy_cli_flag_value(argc, argv, i, "--ranks", &val)) {
    if (!parse_i64(val, &n) || n < 1 || n > 1024)
      return eddy_cli_usage_error("run", "flag '--ranks' needs a count in "
                                         "[1, 1024], got '%s'",
                                  val ? val : "") + 1;
    o->ranks = (int32_t)n;
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

static eddy_status_t lower_and_verify(eddy_op_t *func) {
  EDDY_RETURN_IF_ERROR(eddy_lower_to_dataflow_func(func));
  return eddy_ir_verify_op(func);
}

static void print_trace(void *user, const char *line) {
  (void)user;
  fprintf(stderr, "trace: %s\n", line);
}

static void print_stats(const eddy_interp_stats_t *s) {
  fprintf(stderr,
          "interp stats: ops_run %" PRId64 ", ops_dead %" PRId64
          ", frames %" PRId64 ", iterations %" PRId64
          ", max_live_iterations %" PRId64 ", max_live_frames %" PRId64
          ", list_copies %" PRId64 " (%" PRId64 " items)\n",
          s->ops_run, s->ops_dead, s->frames, s->iterations,
          s->max_live_iterations, s->max_live_frames, s->list_copies,
          s->list_items_copied);
}

eddy_status_t eddy_cli_run_interp(eddy_rt_ctx_t *rt, eddy_op_t *func,
                                  eddy_op_t *v1_func,
                                  const eddy_eval_opts_t *eval_opts,
                                  const eddy_cli_interp_opts_t *o,
                                  const eddy_eval_value_t *args, size_t nin,
                                  eddy_eval_value_t *out_results, size_t nout,
                                  double *out_ms) {
  eddy_interp_opts_t io = eddy_interp_opts_default();
  io.num_workers = o->workers;
  io.timeout_ms = o->timeout_ms;
  if (o->trace)
    io.trace = print_trace;
  if (eval_opts->max_iterations > 0)
    io.max_iterations = eval_opts->max_iterations;
  eddy_interp_stats_t stats;
  eddy_op_t *ifunc = v1_func ? v1_func : func;
  if (out_ms)
    *out_ms = -1;
  EDDY_RETURN_IF_ERROR(lower_and_verify(ifunc));
  double t0 = eddy_cli_now_ms();
  eddy_status_t st = eddy_interp_func(rt, ifunc, &io, args, nin, out_results,
                                      nout, &stats);
  if (out_ms)
    *out_ms = eddy_cli_now_ms() - t0;
  if (o->stats)
    print_stats(&stats);
  return st;
}

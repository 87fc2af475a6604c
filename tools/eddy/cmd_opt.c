/// `eddy opt`: read textual IR, verify it, run a pass pipeline, verify the
/// result and print it.
#include "ir/ir.h"
#include "ir/pass.h"
#include "tools/eddy/cli.h"

#include <stdio.h>
#include <string.h>

typedef struct opt_args {
  const char *input;    ///< "-" for stdin
  const char *output;   ///< NULL for stdout
  const char *pipeline; ///< NULL for none
  bool help;
  bool print_locations;
  eddy_pm_opts_t pm;
} opt_args_t;

static void print_pass(const eddy_pass_t *p, void *user) {
  FILE *f = user;
  fprintf(f, "  %-14s %s\n", p->name, p->summary ? p->summary : "");
}

static int print_help(void) {
  printf(
      "usage: eddy opt FILE [options]\n"
      "\n"
      "Parses FILE ('-' for standard input), verifies it, runs the passes of\n"
      "--passes in order, verifies the result and prints it.\n"
      "\n"
      "options:\n"
      "  --passes=LIST          comma-separated pass names, run in order\n"
      "  -o FILE, --output=FILE write the result to FILE (default: stdout)\n"
      "  --print-ir-after-all   print the IR to stderr after every pass\n"
      "  --print-ir-after=NAME  print the IR to stderr after each run of pass NAME\n"
      "  --time-passes          print wall time per pass to stderr\n"
      "  --stats                print pass statistics to stderr\n"
      "  --verify-each          verify the IR after every pass%s\n"
      "  --no-verify-each       only verify the input and the final result\n"
      "  --print-locations      print loc(...) after every op\n"
      "  -h, --help             show this help\n"
      "\n"
      "passes:\n",
#ifdef EDDY_DEBUG
      " (default in this build)"
#else
      ""
#endif
  );
  // The pass list comes from the registry, so it cannot go stale.
  eddy_ctx_t *ctx = eddy_ir_ctx_create();
  if (!ctx) {
    fprintf(stderr, "eddy opt: out of memory\n");
    return EDDY_CLI_EXIT_ERROR;
  }
  eddy_cli_register_all(ctx);
  eddy_ir_pass_each(ctx, print_pass, stdout);
  eddy_ir_ctx_destroy(ctx);
  return EDDY_CLI_EXIT_OK;
}

/// Returns -1 when the arguments are fine, else the exit code to return.
static int parse_args(int argc, char **argv, opt_args_t *a) {
  memset(a, 0, sizeof *a);
  eddy_ir_pm_opts_default(&a->pm);
  bool only_positional = false;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    const char *val = NULL;
    if (only_positional || arg[0] != '-' || strcmp(arg, "-") == 0) {
      if (a->input)
        return eddy_cli_usage_error(
            "opt", "more than one input file ('%s' and '%s')", a->input, arg);
      a->input = arg;
    } else if (strcmp(arg, "--") == 0) {
      only_positional = true;
    } else if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
      a->help = true;
    } else if (eddy_cli_flag_value(argc, argv, &i, "--passes", &val)) {
      if (!val)
        return eddy_cli_usage_error("opt", "flag '--passes' needs a value");
      a->pipeline = val;
    } else if (eddy_cli_flag_value(argc, argv, &i, "-o", &val) ||
               eddy_cli_flag_value(argc, argv, &i, "--output", &val)) {
      if (!val || !*val)
        return eddy_cli_usage_error("opt", "flag '%s' needs a file name",
                                    arg[1] == 'o' ? "-o" : "--output");
      a->output = val;
    } else if (strcmp(arg, "--print-ir-after-all") == 0) {
      a->pm.print_after_all = true;
    } else if (eddy_cli_flag_value(argc, argv, &i, "--print-ir-after", &val)) {
      if (!val || !*val)
        return eddy_cli_usage_error(
            "opt", "flag '--print-ir-after' needs a pass name");
      a->pm.print_after = val;
    } else if (strcmp(arg, "--time-passes") == 0) {
      a->pm.time_passes = true;
    } else if (strcmp(arg, "--stats") == 0) {
      a->pm.stats = true;
    } else if (strcmp(arg, "--verify-each") == 0) {
      a->pm.verify_each = true;
    } else if (strcmp(arg, "--no-verify-each") == 0) {
      a->pm.verify_each = false;
    } else if (strcmp(arg, "--print-locations") == 0) {
      a->print_locations = true;
    } else {
      return eddy_cli_usage_error("opt", "unknown flag '%s'", arg);
    }
  }
  if (a->help)
    return -1;
  if (!a->input)
    return eddy_cli_usage_error(
        "opt", "missing input file (use '-' for standard input)");
  a->pm.dump = stderr;
  a->pm.print_locations = a->print_locations;
  return -1;
}

static void append_pass_name(const eddy_pass_t *p, void *user) {
  eddy_buf_t *b = user;
  if (b->len)
    eddy_buf_puts(b, ", ");
  eddy_buf_puts(b, p->name);
}

static eddy_status_t unknown_pass_flag(eddy_ctx_t *ctx, const char *flag,
                                       const char *name) {
  eddy_buf_t known;
  eddy_buf_init(&known);
  eddy_ir_pass_each(ctx, append_pass_name, &known);
  eddy_status_t st = eddy_status_create(
      EDDY_ERR_INVALID_ARGUMENT, "unknown pass '%s' in %s (known: %s)", name,
      flag, known.len ? known.data : "none");
  eddy_buf_destroy(&known);
  return st;
}

/// The work of `eddy opt` once the flags are known; the printed module is
/// appended to out.
static eddy_status_t run_opt(eddy_ctx_t *ctx, const opt_args_t *a,
                             eddy_buf_t *out) {
  eddy_cli_register_all(ctx);

  // A misspelled --print-ir-after would otherwise print nothing, silently.
  if (a->pm.print_after &&
      !eddy_ir_pass_lookup(ctx, a->pm.print_after, strlen(a->pm.print_after)))
    return unknown_pass_flag(ctx, "--print-ir-after", a->pm.print_after);

  // Build the pipeline first: a misspelled pass name should not have to
  // wait for a large input to parse.
  eddy_pass_manager_t *pm = eddy_ir_pm_create(ctx, &a->pm);
  if (!pm)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  eddy_status_t st = NULL;
  if (a->pipeline)
    st = eddy_ir_pm_add_pipeline(pm, a->pipeline);

  eddy_module_t *m = NULL;
  if (!st)
    st = eddy_ir_parse_file(ctx, a->input, &m);
  if (!st)
    st = eddy_ir_verify_module(m);
  if (!st)
    st = eddy_ir_pm_run(pm, m);
  // Verify the result even when verify_each is off: never print broken IR.
  if (!st && !a->pm.verify_each)
    st = eddy_ir_verify_module(m);
  if (!st) {
    eddy_print_opts_t po = {.locations = a->print_locations};
    eddy_ir_module_print(m, &po, out);
  }
  if (m)
    eddy_ir_module_destroy(m);
  eddy_ir_pm_destroy(pm);
  return st;
}

/// Adapts run_opt to eddy_cli_render_fn_t.
static eddy_status_t render(eddy_ctx_t *ctx, const void *args,
                            eddy_buf_t *out) {
  return run_opt(ctx, (const opt_args_t *)args, out);
}

int eddy_cli_opt_main(int argc, char **argv) {
  opt_args_t a;
  int rc = parse_args(argc, argv, &a);
  if (rc >= 0)
    return rc;
  if (a.help)
    return print_help();

  return eddy_cli_render_and_write(a.output, render, &a);
}

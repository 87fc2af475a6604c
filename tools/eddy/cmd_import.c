/// `eddy import`: read a TensorFlow GraphDef and print it as tf-dialect IR.
#include "dialects/tf/tf.h"
#include "ir/ir.h"
#include "lower/tf/tf_lower.h"
#include "tools/eddy/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct import_args {
  const char *input;
  const char *output; ///< NULL for stdout
  const char **feeds;
  size_t num_feeds;
  const char **fetches;
  size_t num_fetches;
  const char *func_name;
  bool prune;
  bool print_locations;
  bool list_ops;
  bool help;
} import_args_t;

static int print_help(void) {
  printf("usage: eddy import MODEL.pb [options]\n"
         "\n"
         "Reads a binary TensorFlow GraphDef (with its function library) and\n"
         "prints it as eddy IR in the tf dialect: one op per node, one\n"
         "func.func per library function the graph uses.\n"
         "\n"
         "options:\n"
         "  --feed NAME            a Placeholder that becomes an argument, in\n"
         "                         order (repeatable; default: every\n"
         "                         Placeholder)\n"
         "  --fetch NAME[:i]       a tensor that becomes a result, in order\n"
         "                         (repeatable; default: every output of\n"
         "                         every node whose outputs no node reads)\n"
         "  --func-name NAME       name of the graph's function (default: "
         "main)\n"
         "  --prune                import only the nodes the fetches need\n"
         "  -o FILE, --output=FILE write the IR to FILE (default: stdout)\n"
         "  --print-locations      print loc(\"node name\") after every op\n"
         "  --list-ops             print the TensorFlow ops eddy imports and\n"
         "                         lowers, one per line, and exit\n"
         "  -h, --help             show this help\n");
  return EDDY_CLI_EXIT_OK;
}

/// Appends v to a malloc'ed list; false on out of memory.
static bool push(const char ***list, size_t *n, const char *v) {
  const char **p = realloc(*list, (*n + 1) * sizeof *p);
  if (!p)
    return false;
  p[(*n)++] = v;
  *list = p;
  return true;
}

/// Returns -1 when the arguments are fine, else the exit code to return.
static int parse_args(int argc, char **argv, import_args_t *a) {
  bool only_positional = false;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    const char *val = NULL;
    if (only_positional || arg[0] != '-') {
      if (a->input)
        return eddy_cli_usage_error("import",
                                    "more than one input file ('%s' and '%s')",
                                    a->input, arg);
      a->input = arg;
    } else if (strcmp(arg, "--") == 0) {
      only_positional = true;
    } else if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
      a->help = true;
    } else if (eddy_cli_flag_value(argc, argv, &i, "--feed", &val)) {
      if (!val || !*val)
        return eddy_cli_usage_error("import",
                                    "flag '--feed' needs a node name");
      if (!push(&a->feeds, &a->num_feeds, val))
        return eddy_cli_usage_error("import", "out of memory");
    } else if (eddy_cli_flag_value(argc, argv, &i, "--fetch", &val)) {
      if (!val || !*val)
        return eddy_cli_usage_error("import",
                                    "flag '--fetch' needs a tensor name");
      if (!push(&a->fetches, &a->num_fetches, val))
        return eddy_cli_usage_error("import", "out of memory");
    } else if (eddy_cli_flag_value(argc, argv, &i, "--func-name", &val)) {
      if (!val || !*val)
        return eddy_cli_usage_error("import",
                                    "flag '--func-name' needs a name");
      a->func_name = val;
    } else if (eddy_cli_flag_value(argc, argv, &i, "-o", &val) ||
               eddy_cli_flag_value(argc, argv, &i, "--output", &val)) {
      if (!val || !*val)
        return eddy_cli_usage_error("import", "flag '%s' needs a file name",
                                    arg[1] == 'o' ? "-o" : "--output");
      a->output = val;
    } else if (strcmp(arg, "--prune") == 0) {
      a->prune = true;
    } else if (strcmp(arg, "--print-locations") == 0) {
      a->print_locations = true;
    } else if (strcmp(arg, "--list-ops") == 0) {
      a->list_ops = true;
    } else {
      return eddy_cli_usage_error("import", "unknown flag '%s'", arg);
    }
  }
  if (!a->help && !a->list_ops && !a->input)
    return eddy_cli_usage_error("import", "missing input file (MODEL.pb)");
  return -1;
}

static eddy_status_t run_import(eddy_ctx_t *ctx, const import_args_t *a,
                                eddy_buf_t *out) {
  eddy_tf_import_opts_t opts = {
      .feeds = a->feeds,
      .num_feeds = a->num_feeds,
      .fetches = a->fetches,
      .num_fetches = a->num_fetches,
      .func_name = a->func_name,
      .prune = a->prune,
  };
  eddy_module_t *m = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tf_import_graphdef(ctx, a->input, &opts, &m));
  eddy_print_opts_t po = {.locations = a->print_locations};
  eddy_ir_module_print(m, &po, out);
  eddy_ir_module_destroy(m);
  return NULL;
}

/// Adapts run_import to eddy_cli_render_fn_t.
static eddy_status_t render(eddy_ctx_t *ctx, const void *args,
                            eddy_buf_t *out) {
  return run_import(ctx, (const import_args_t *)args, out);
}

static void print_op(const char *name, void *user) {
  (void)user;
  printf("%s\n", name);
}

int eddy_cli_import_main(int argc, char **argv) {
  import_args_t a = {0};
  int rc = parse_args(argc, argv, &a);
  if (rc < 0 && a.help)
    rc = print_help();
  if (rc < 0 && a.list_ops) {
    eddy_tf_supported_ops_each(print_op, NULL);
    rc = EDDY_CLI_EXIT_OK;
  }
  if (rc >= 0) {
    free(a.feeds);
    free(a.fetches);
    return rc;
  }
  int rc_run = eddy_cli_render_and_write(a.output, render, &a);
  free(a.feeds);
  free(a.fetches);
  return rc_run;
}

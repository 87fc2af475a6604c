/// `eddy grad`: add the reverse-mode gradient function F_grad of a function
/// F to a module (autodiff/ad.h), optionally check it against finite
/// differences on the reference evaluator, and print the module. FILE may be
/// a TensorFlow GraphDef, imported and lowered as `eddy run` does.
#define _POSIX_C_SOURCE 200809L

#include "autodiff/ad.h"
#include "dialects/tf/tf.h"
#include "ir/ir.h"
#include "ir/pass.h"
#include "lower/tf/tf_lower.h"
#include "tools/eddy/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GRAD_MAX_WRT 256

typedef struct grad_args {
  const char *input;
  const char *output;
  const char *entry;
  const char *wrt;
  const char *pipeline;
  eddy_ad_options_t ad_opts;
  bool check, stats, help;
  double lo, hi;
  int64_t dyn_dim, int_value, directions;
  uint64_t seed;
  eddy_cli_input_t *inputs; ///< --input: check at these values
  size_t num_inputs;
  const char **feeds, **fetches; ///< FILE.pb: --feed, --fetch
  size_t num_feeds, num_fetches;
} grad_args_t;

static int print_help(void) {
  printf(
      "usage: eddy grad FILE --wrt LIST [--entry F] [options]\n"
      "\n"
      "Adds F_grad to the module: it takes F's arguments plus one seed (the\n"
      "gradient of each result) and returns F's results followed by the\n"
      "gradients of the --wrt arguments (a vector-Jacobian product). The\n"
      "module, with F_grad appended, is printed.\n"
      "\n"
      "options:\n"
      "  FILE.pb                a TensorFlow GraphDef: imported, functionalized,\n"
      "                         legalized and shape-inferred first\n"
      "  --feed NAME            (.pb) a Placeholder that becomes an argument\n"
      "                         (default: every Placeholder the fetches need)\n"
      "  --fetch NAME[:i]       (.pb) a tensor that becomes a result (default:\n"
      "                         the sinks)\n"
      "  --entry F              the function (default: the module's only one)\n"
      "  --wrt LIST             arguments to differentiate, by position: the\n"
      "                         text format renames arguments to %%argN, so\n"
      "                         they are named arg0,arg1 (or %%arg0, or 0);\n"
      "                         or by the function's arg_names (an imported\n"
      "                         graph's Placeholders); 'all': every float\n"
      "                         argument\n"
      "  -o FILE                write the module to FILE (default: stdout)\n"
      "  --passes=LIST          run these passes after adding F_grad\n"
      "  --loop-memory=POLICY   how loop gradients keep the forward iterations'\n"
      "                         values: store (default: every iteration's),\n"
      "                         checkpoint (the loop state once per segment of\n"
      "                         1, 2, 3, ... iterations; each segment is run\n"
      "                         again in the gradient) or checkpoint:SLOTS\n"
      "                         (at most SLOTS snapshots of the state; the\n"
      "                         gradient rebuilds each step's state from them\n"
      "                         on the binomial schedule), reversible (only\n"
      "                         the state after the loop; the gradient inverts\n"
      "                         each iteration: for bodies that update each\n"
      "                         value by adding terms computed without it, as\n"
      "                         RevNet's coupling) or auto (checkpoint:SLOTS\n"
      "                         with as many snapshots as\n"
      "                         --loop-memory-budget holds). A loop's\n"
      "                         eddy.loop_memory attribute takes precedence\n"
      "  --loop-memory-budget SIZE\n"
      "                         bytes of snapshots per loop for auto (K, M, G\n"
      "                         suffixes)\n"
      "  --reversible           --loop-memory=reversible\n"
      "  --stats                print what each loop accumulates per iteration\n"
      "                         (to stderr)\n"
      "  --check                compare F_grad with central differences in f64\n"
      "                         at sampled inputs, one line per argument (to\n"
      "                         stderr; exit 1 on a mismatch). A program that\n"
      "                         computes in f16, bf16 or f32 is checked through\n"
      "                         an f64 copy, and its own gradient is compared\n"
      "                         with the copy's\n"
      "  --input NAME=VALUE     check at this value of an argument (a scalar or\n"
      "                         a .npy file); the others are sampled\n"
      "  --check-directions N   random seeds, each with one random direction\n"
      "                         per argument (default 3)\n"
      "  --check-range LO,HI    float inputs are sampled in [LO, HI] (default\n"
      "                         0.5,1.5)\n"
      "  --check-int N          value of integer inputs (default 3)\n"
      "  --check-dim N          size of dynamic dimensions (default 3)\n"
      "  --check-seed N         random seed (default 1)\n"
      "  -h, --help             show this help\n");
  return EDDY_CLI_EXIT_OK;
}

static int parse_args(int argc, char **argv, grad_args_t *a) {
  memset(a, 0, sizeof(*a));
  a->lo = 0.5;
  a->hi = 1.5;
  a->dyn_dim = 3;
  a->int_value = 3;
  a->directions = 3;
  a->seed = 1;
  a->ad_opts = eddy_ad_options_default();
  a->inputs = calloc((size_t)argc + 1, sizeof(*a->inputs));
  a->feeds = calloc((size_t)argc + 1, sizeof(*a->feeds));
  a->fetches = calloc((size_t)argc + 1, sizeof(*a->fetches));
  if (!a->inputs || !a->feeds || !a->fetches) {
    fprintf(stderr, "eddy grad: out of memory\n");
    return EDDY_CLI_EXIT_ERROR;
  }
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i], *val = NULL;
    if (arg[0] != '-' || strcmp(arg, "-") == 0) {
      if (a->input)
        return eddy_cli_usage_error(
            "grad", "more than one input file ('%s' and '%s')", a->input, arg);
      a->input = arg;
    } else if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
      a->help = true;
    } else if (eddy_cli_flag_value(argc, argv, &i, "--entry", &val)) {
      if (!val || !*val)
        return eddy_cli_usage_error("grad", "flag '--entry' needs a name");
      a->entry = val[0] == '@' ? val + 1 : val;
    } else if (eddy_cli_flag_value(argc, argv, &i, "--loop-memory-budget",
                                   &val)) {
      if (!eddy_cli_parse_count(val, true, &a->ad_opts.memory_budget) ||
          a->ad_opts.memory_budget <= 0)
        return eddy_cli_usage_error(
            "grad", "flag '--loop-memory-budget' needs a size in bytes > 0 "
                    "(e.g. 65536, 512M, 2G), got '%s'",
            val ? val : "");
    } else if (strcmp(arg, "--reversible") == 0) {
      a->ad_opts.loop_memory = EDDY_AD_LOOP_REVERSIBLE;
    } else if (eddy_cli_flag_value(argc, argv, &i, "--loop-memory", &val)) {
      eddy_status_t st = eddy_ad_parse_loop_memory(
          val, &a->ad_opts.loop_memory, &a->ad_opts.checkpoint_slots);
      if (st) {
        int rc = eddy_cli_usage_error("grad", "flag '--loop-memory': %s",
                                      eddy_status_message(st));
        eddy_status_destroy(st);
        return rc;
      }
    } else if (eddy_cli_flag_value(argc, argv, &i, "--wrt", &val)) {
      if (!val || !*val)
        return eddy_cli_usage_error("grad", "flag '--wrt' needs a list");
      a->wrt = val;
    } else if (eddy_cli_flag_value(argc, argv, &i, "-o", &val) ||
               eddy_cli_flag_value(argc, argv, &i, "--output", &val)) {
      if (!val || !*val)
        return eddy_cli_usage_error("grad", "flag '-o' needs a file name");
      a->output = val;
    } else if (eddy_cli_flag_value(argc, argv, &i, "--passes", &val)) {
      if (!val)
        return eddy_cli_usage_error("grad", "flag '--passes' needs a value");
      a->pipeline = val;
    } else if (eddy_cli_flag_value(argc, argv, &i, "--check-range", &val)) {
      char *end = NULL;
      if (val) {
        a->lo = strtod(val, &end);
        if (*end == ',')
          a->hi = strtod(end + 1, &end);
      }
      if (!val || *end || !(a->lo <= a->hi))
        return eddy_cli_usage_error("grad",
                                    "flag '--check-range' needs LO,HI");
    } else if (eddy_cli_flag_value(argc, argv, &i, "--check-int", &val)) {
      char *end = NULL;
      a->int_value = val ? strtoll(val, &end, 10) : 0;
      if (!val || *end)
        return eddy_cli_usage_error("grad", "flag '--check-int' needs N");
    } else if (eddy_cli_flag_value(argc, argv, &i, "--check-dim", &val)) {
      char *end = NULL;
      a->dyn_dim = val ? strtoll(val, &end, 10) : 0;
      if (!val || *end || a->dyn_dim < 0)
        return eddy_cli_usage_error("grad", "flag '--check-dim' needs N >= 0");
    } else if (eddy_cli_flag_value(argc, argv, &i, "--input", &val)) {
      if (!eddy_cli_input_parse(val, &a->inputs[a->num_inputs++]))
        return eddy_cli_usage_error(
            "grad", "flag '--input' needs NAME=VALUE (e.g. x=x.npy), got '%s'",
            val ? val : "");
    } else if (eddy_cli_flag_value(argc, argv, &i, "--feed", &val)) {
      if (!val || !*val)
        return eddy_cli_usage_error("grad", "flag '--feed' needs a name");
      a->feeds[a->num_feeds++] = val;
    } else if (eddy_cli_flag_value(argc, argv, &i, "--fetch", &val)) {
      if (!val || !*val)
        return eddy_cli_usage_error("grad", "flag '--fetch' needs a name");
      a->fetches[a->num_fetches++] = val;
    } else if (eddy_cli_flag_value(argc, argv, &i, "--check-directions",
                                   &val)) {
      char *end = NULL;
      a->directions = val ? strtoll(val, &end, 10) : 0;
      if (!val || *end || a->directions < 1 || a->directions > 1000)
        return eddy_cli_usage_error(
            "grad", "flag '--check-directions' needs N in 1..1000");
    } else if (eddy_cli_flag_value(argc, argv, &i, "--check-seed", &val)) {
      char *end = NULL;
      a->seed = val ? strtoull(val, &end, 10) : 0;
      if (!val || *end)
        return eddy_cli_usage_error("grad", "flag '--check-seed' needs N");
    } else if (strcmp(arg, "--check") == 0) {
      a->check = true;
    } else if (strcmp(arg, "--stats") == 0) {
      a->stats = true;
    } else {
      return eddy_cli_usage_error("grad", "unknown flag '%s'", arg);
    }
  }
  if (a->help)
    return -1;
  if (!a->input)
    return eddy_cli_usage_error(
        "grad", "missing input file (use '-' for standard input)");
  if (!a->wrt)
    return eddy_cli_usage_error("grad", "missing --wrt");
  return -1;
}

static eddy_status_t find_entry(eddy_module_t *m, const char *name,
                                eddy_op_t **out) {
  if (name) {
    *out = eddy_ir_module_lookup_func(m, name);
    if (!*out)
      return eddy_status_create(EDDY_ERR_NOT_FOUND,
                                "no function @%s in the module", name);
    return NULL;
  }
  *out = NULL;
  for (eddy_op_t *op = eddy_ir_module_body(m)->first; op; op = op->next)
    if (eddy_ir_op_is(op, "func.func")) {
      if (*out)
        return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                                  "the module has several functions; name "
                                  "one with --entry");
      *out = op;
    }
  if (!*out)
    return eddy_status_create(EDDY_ERR_NOT_FOUND, "the module has no function");
  return NULL;
}

/// One line per argument of F: what was checked, and how far off it was.
static void print_report(const eddy_op_t *f, const eddy_op_t *gf,
                         const size_t *wrt, size_t nw,
                         const eddy_ad_check_result_t *res,
                         const eddy_ad_check_opts_t *o) {
  if (res->without_stops)
    fprintf(stderr,
            "gradient check @%s: @%s holds stop_gradient, which finite "
            "differences do not see: the check differentiates a copy with "
            "each taken as the identity\n",
            eddy_ir_func_name(gf), eddy_ir_func_name(f));
  if (res->promoted)
    fprintf(stderr,
            "gradient check @%s: @%s computes in %s, so it is checked through "
            "an f64 copy, and its own gradient is compared with the copy's "
            "(tolerance %.2g of the largest element)\n",
            eddy_ir_func_name(gf), eddy_ir_func_name(f),
            eddy_dtype_name(res->dtype), res->low_rtol);
  fprintf(stderr,
          "gradient check @%s: %d seeds, each with one random direction per "
          "argument; central differences in f64 (tolerance %.2g)\n",
          eddy_ir_func_name(gf), o->num_directions, o->rtol);
  const eddy_type_t *ft = eddy_ir_func_type(f);
  eddy_buf_t ty;
  eddy_buf_init(&ty);
  for (size_t i = 0; i < ft->num_inputs; i++) {
    size_t w = 0;
    while (w < nw && wrt[w] != i)
      w++;
    char pos[32];
    eddy_buf_clear(&ty);
    eddy_ir_type_print(ft->inputs[i], &ty);
    fprintf(stderr, "  argument %zu '%s' (%s): ", i,
            eddy_ir_func_arg_label(f, i, pos, sizeof pos), ty.data);
    const eddy_type_t *t = ft->inputs[i];
    if (w == nw) {
      bool diff = t->kind == EDDY_TYPE_TENSOR && eddy_dtype_is_float(t->dtype);
      fprintf(stderr, "not checked (%s)\n",
              diff ? "not in --wrt" : "not a float tensor: no gradient");
      continue;
    }
    const eddy_ad_check_arg_t *r = &res->args[w];
    fprintf(stderr,
            "finite differences: max abs err %.3g, max rel err %.3g",
            r->fd_abs_err, r->fd_rel_err);
    if (res->promoted)
      fprintf(stderr,
              "; %s gradient vs f64: max abs err %.3g, max rel err %.3g",
              eddy_dtype_name(res->dtype), r->low_abs_err, r->low_rel_err);
    fprintf(stderr, ": %s\n", r->ok ? "ok" : "MISMATCH");
  }
  eddy_buf_destroy(&ty);
}

static eddy_status_t run_check(const grad_args_t *a, eddy_op_t *f,
                               eddy_op_t *gf, const size_t *wrt, size_t nw) {
  eddy_rt_ctx_t *rt = NULL;
  eddy_rt_status_t rs = eddy_rt_ctx_create(NULL, &rt);
  if (rs) {
    eddy_rt_status_destroy(rs);
    return eddy_status_create(EDDY_ERR_RESOURCE, "cannot create a runtime");
  }
  size_t nin = eddy_ir_func_type(f)->num_inputs;
  eddy_eval_value_t *args = calloc(nin ? nin : 1, sizeof(*args));
  eddy_status_t st = NULL;
  if (!args)
    st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  if (!st)
    st = eddy_cli_inputs_load(rt, a->inputs, a->num_inputs, f, false, args);
  if (!st)
    st = eddy_ad_sample_args(rt, f, a->lo, a->hi, a->dyn_dim, a->int_value,
                             a->seed, args);
  eddy_ad_check_result_t res = {0};
  eddy_ad_check_opts_t o = eddy_ad_check_opts_default();
  o.seed = a->seed;
  o.num_directions = (int32_t)a->directions;
  if (!st)
    st = eddy_ad_check(rt, f, gf, wrt, nw, args, &o, &res);
  if (!st) {
    print_report(f, gf, wrt, nw, &res, &o);
    fprintf(stderr,
            "gradient check @%s: %s (max relative error %.3g; finite "
            "differences %.17g, vjp %.17g)\n",
            eddy_ir_func_name(gf), res.ok ? "ok" : "MISMATCH",
            res.max_rel_err, res.fd, res.vjp);
    if (!res.ok)
      st = eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                              "gradient check of @%s failed",
                              eddy_ir_func_name(gf));
  }
  eddy_ad_check_result_destroy(&res);
  if (args) {
    for (size_t i = 0; i < nin; i++)
      eddy_eval_value_release(&args[i]);
    free(args);
  }
  eddy_rt_ctx_destroy(rt);
  return st;
}

/// FILE.pb is imported (pruned to the fetches), functionalized, legalized
/// and shape-inferred: autodiff needs the ranks that shape inference finds
/// for TensorFlow's lists of unknown element shape. Other files are IR text.
static eddy_status_t load_module(eddy_ctx_t *ctx, const grad_args_t *a,
                                 eddy_module_t **out) {
  if (!eddy_cli_is_graphdef(a->input)) {
    if (a->num_feeds || a->num_fetches)
      return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                                "--feed and --fetch need a TensorFlow "
                                "GraphDef (FILE.pb), got '%s'",
                                a->input);
    EDDY_RETURN_IF_ERROR(eddy_ir_parse_file(ctx, a->input, out));
    return eddy_ir_verify_module(*out);
  }
  eddy_tf_import_opts_t io = {.feeds = a->num_feeds ? a->feeds : NULL,
                              .num_feeds = a->num_feeds,
                              .fetches = a->num_fetches ? a->fetches : NULL,
                              .num_fetches = a->num_fetches,
                              .prune = true};
  EDDY_RETURN_IF_ERROR(eddy_tf_import_graphdef(ctx, a->input, &io, out));
  eddy_status_t st = eddy_tf_functionalize(*out);
  if (!st)
    st = eddy_tf_legalize(*out);
  if (!st)
    st = eddy_ir_verify_module(*out);
  if (!st)
    st = eddy_cli_run_passes(ctx, *out, "shape-infer,canonicalize");
  return st;
}

static eddy_status_t run_grad(eddy_ctx_t *ctx, const grad_args_t *a,
                              eddy_buf_t *out) {
  eddy_cli_register_all(ctx);
  eddy_module_t *m = NULL;
  eddy_status_t st = load_module(ctx, a, &m);
  eddy_op_t *f = NULL, *gf = NULL;
  if (!st)
    st = find_entry(m, a->entry, &f);
  size_t wrt[GRAD_MAX_WRT], nw = 0;
  if (!st)
    st = eddy_ad_parse_wrt(a->wrt, f, wrt, GRAD_MAX_WRT, &nw);
  eddy_ad_stats_t stats;
  eddy_ad_stats_init(&stats);
  if (!st)
    st = eddy_ad_grad_opts(m, eddy_ir_func_name(f), wrt, nw, &a->ad_opts,
                           &stats, &gf);
  if (!st && a->pipeline) {
    st = eddy_cli_run_passes(ctx, m, a->pipeline);
    if (!st) {
      char buf[512];
      snprintf(buf, sizeof buf, "%s_grad", eddy_ir_func_name(f));
      gf = eddy_ir_module_lookup_func(m, buf);
    }
  }
  if (!st && a->stats) {
    eddy_buf_t sb;
    eddy_buf_init(&sb);
    eddy_ad_stats_format(&stats, &sb);
    fputs(sb.data ? sb.data : "", stderr);
    eddy_buf_destroy(&sb);
  }
  if (!st && a->check && gf)
    st = run_check(a, f, gf, wrt, nw);
  if (!st) {
    eddy_print_opts_t po = {0};
    eddy_ir_module_print(m, &po, out);
  }
  eddy_ad_stats_destroy(&stats);
  if (m)
    eddy_ir_module_destroy(m);
  return st;
}

/// Adapts run_grad to eddy_cli_render_fn_t.
static eddy_status_t render(eddy_ctx_t *ctx, const void *args,
                            eddy_buf_t *out) {
  return run_grad(ctx, (const grad_args_t *)args, out);
}

int eddy_cli_grad_main(int argc, char **argv) {
  grad_args_t a;
  int rc = parse_args(argc, argv, &a);
  if (rc < 0 && a.help)
    rc = print_help();
  if (rc < 0)
    rc = eddy_cli_render_and_write(a.output, render, &a);
  free(a.inputs);
  free(a.feeds);
  free(a.fetches);
  return rc;
}

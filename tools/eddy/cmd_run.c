/// `eddy run`: run a function of a module on inputs given on the command
/// line (.npy files or scalars), print its results and optionally write them
/// as .npy files. --mode=eval uses the reference evaluator (runtime/eval);
/// the other modes run the dataflow interpreter, compiled code, all of them
/// side by side (compare) or ranks of a partitioned graph (distributed).
#define _POSIX_C_SOURCE 200809L

#include "ir/ir.h"
#include "ir/pass.h"
#include "dialects/tf/tf.h"
#include "lower/tf/tf_lower.h"
#include "runtime/eval/eval.h"
#include "runtime/npy.h"
#include "tools/eddy/cli.h"
#include "tools/eddy/run_compare.h"
#include "tools/eddy/run_interp.h"
#include "tools/eddy/run_compiled.h"
#include "tools/eddy/run_dist.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RUN_DEFAULT_PREVIEW 8

typedef struct run_args {
  const char *input;    ///< the module file, "-" for stdin
  const char *entry;    ///< NULL: the module's only function
  const char *mode;     ///< "eval"
  const char *target;   ///< --mode=compiled: "cpu" (default), "kernels", "cuda"
  const char *precision; ///< --gpu-matmul-precision, or NULL
  /// --gpu-matmul-precision=tf32, --libm-math, --fp-contract=fast,
  /// --outline-ops
  eddy_cli_compiled_opts_t compiled;
  bool fp_contract_set; ///< --fp-contract given (either value)
  const char *out_dir;  ///< NULL: write no files
  const char *inputs_dir; ///< --write-inputs: the arguments as .npy, or NULL
  const char *pipeline; ///< passes to run before evaluating, or NULL
  eddy_cli_input_t *inputs;
  size_t num_inputs;
  eddy_eval_opts_t eval;
  int64_t memory_limit; ///< bytes; 0 = unlimited; -1: the default
  int64_t preview;      ///< elements printed per result; -1 = all
  bool help;
  eddy_cli_interp_opts_t interp; ///< --mode=interp / compare (run_interp.c)
  /// A TensorFlow GraphDef (FILE ends in .pb): --feed / --fetch names, and
  /// "argN" names the --input NAMEs are rewritten to.
  const char **feeds, **fetches;
  size_t num_feeds, num_fetches;
  char (*arg_names)[24];
} run_args_t;

static int print_help(void) {
  printf(
      "usage: eddy run FILE [--entry F] [--input NAME=VALUE ...] [options]\n"
      "\n"
      "Parses FILE ('-' for standard input), verifies it, runs function F on\n"
      "the inputs and prints each result: its index, dtype and shape, and\n"
      "its first elements.\n"
      "\n"
      "options:\n"
      "  FILE.pb                a TensorFlow GraphDef: imported, functionalized\n"
      "                         and legalized; --input NAME names a Placeholder\n"
      "  --feed NAME            (.pb) a Placeholder that becomes an argument\n"
      "                         (default: the --input names, in order)\n"
      "  --fetch NAME[:i]       (.pb) a tensor to compute (default: the sinks)\n"
      "  --entry F              the function to run (default: the module's only\n"
      "                         function); '@F' is accepted too\n"
      "  --input NAME=VALUE     one argument of F. NAME is its position: arg0,\n"
      "                         %%arg0 or 0. VALUE is a scalar of the argument's\n"
      "                         dtype (5, -1.5, true, inf) or the path of a .npy\n"
      "                         file (a path that starts like a number needs ./)\n"
      "  --mode=MODE            eval: the reference evaluator (default);\n"
      "                         interp: lower to dataflow and interpret;\n"
      "                         compare: several of them (--compare), each\n"
      "                         compared with the first (exit 1 when one\n"
      "                         fails or differs beyond the tolerance);\n"
      "                         compiled:\n"
      "                         JIT-compile with the CPU backend and run;\n"
      "                         distributed: partition the dataflow graph\n"
      "                         over the ranks of `mpirun -n N` (or --ranks N\n"
      "                         threads) and interpret one part per rank;\n"
      "                         rank 0 prints (docs/distributed.md)\n"
      "  --target=T             --mode=compiled: cpu (default); cuda: the GPU\n"
      "                         target (needs a CUDA device); kernels: the GPU\n"
      "                         target's program with its kernels run on the\n"
      "                         CPU (docs/gpu.md)\n"
      "  --gpu-matmul-precision=highest|tf32\n"
      "                         --target=cuda: cuBLAS products in FP32\n"
      "                         (default) or TF32 arithmetic (docs/gpu.md)\n"
      "  --libm-math            --mode=compiled: exp, expm1, log, tanh and\n"
      "                         sigmoid of f32/f16/bf16 as libm calls, not\n"
      "                         inline approximations (docs/cpu.md; the GPU\n"
      "                         target always calls its library)\n"
      "  --fp-contract=off|fast --mode=compiled: fast lets multiplies and\n"
      "                         adds fuse into FMAs (one rounding; results\n"
      "                         then depend on the CPU; default off;\n"
      "                         docs/cpu.md, \"Numerics\")\n"
      "  --outline-ops=N        --mode=compiled: split a function of N MLIR\n"
      "                         ops or more into functions (default 8000;\n"
      "                         docs/cpu.md, \"Compile times\")\n"
      "  --output-dir DIR       write result i to DIR/i.npy (DIR and its missing\n"
      "                         parents are created)\n"
      "  --write-inputs DIR     write argument i, as F receives it, to\n"
      "                         DIR/argi.npy before running (DIR is created)\n"
      "  --passes=LIST          run these passes before running F\n"
      "  --max-iterations N     iterations one ctl.while may run before it is\n"
      "                         an error, in every mode (default %" PRId64 ")\n"
      "  --max-call-depth N     nested ctl.call levels allowed (default %d)\n"
      "  --memory-limit SIZE    bytes of tensor data live at once, with an\n"
      "                         optional K, M or G suffix, or 'none' (default:\n"
      "                         three quarters of physical memory)\n"
      "  --preview N            elements printed per result, or 'all' "
      "(default %d)\n"
      "%s"
      "  -h, --help             show this help\n",
      (int64_t)EDDY_EVAL_DEFAULT_MAX_ITERATIONS,
      EDDY_EVAL_DEFAULT_MAX_CALL_DEPTH, RUN_DEFAULT_PREVIEW,
      eddy_cli_interp_help);
  return EDDY_CLI_EXIT_OK;
}

/// The memory limit without --memory-limit: three quarters of physical
/// memory, so that a program whose data grows without end (a list pushed
/// in an endless loop) stops with an error naming the op before the
/// system runs out of memory; 0 (no limit) where the size is unknown.
static int64_t default_memory_limit(void) {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || size <= 0 || pages > INT64_MAX / 4 / size)
    return 0;
  return (int64_t)pages * size / 4 * 3;
}

/// Returns -1 when the arguments are fine, else the exit code to return.
static int parse_args(int argc, char **argv, run_args_t *a) {
  memset(a, 0, sizeof *a);
  a->mode = "eval";
  a->eval = eddy_eval_opts_default();
  a->preview = RUN_DEFAULT_PREVIEW;
  a->memory_limit = -1;
  eddy_cli_interp_opts_init(&a->interp);
  a->inputs = calloc((size_t)argc + 1, sizeof(*a->inputs));
  a->feeds = calloc((size_t)argc + 1, sizeof(*a->feeds));
  a->fetches = calloc((size_t)argc + 1, sizeof(*a->fetches));
  a->arg_names = calloc((size_t)argc + 1, sizeof(*a->arg_names));
  if (!a->inputs || !a->feeds || !a->fetches || !a->arg_names) {
    fprintf(stderr, "eddy run: out of memory\n");
    return EDDY_CLI_EXIT_ERROR;
  }
  bool only_positional = false;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    const char *val = NULL;
    int64_t n = 0;
    if (only_positional || arg[0] != '-' || strcmp(arg, "-") == 0) {
      if (a->input)
        return eddy_cli_usage_error(
            "run", "more than one input file ('%s' and '%s')", a->input, arg);
      a->input = arg;
    } else if (strcmp(arg, "--") == 0) {
      only_positional = true;
    } else if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
      a->help = true;
    } else if (eddy_cli_flag_value(argc, argv, &i, "--entry", &val)) {
      if (!val || !*val)
        return eddy_cli_usage_error("run", "flag '--entry' needs a function "
                                           "name");
      a->entry = val[0] == '@' ? val + 1 : val;
    } else if (eddy_cli_flag_value(argc, argv, &i, "--input", &val)) {
      if (!eddy_cli_input_parse(val, &a->inputs[a->num_inputs++]))
        return eddy_cli_usage_error(
            "run", "flag '--input' needs NAME=VALUE (e.g. arg0=x.npy), got "
                   "'%s'",
            val ? val : "");
    } else if (eddy_cli_flag_value(argc, argv, &i, "--feed", &val)) {
      if (!val || !*val)
        return eddy_cli_usage_error("run", "flag '--feed' needs a name");
      a->feeds[a->num_feeds++] = val;
    } else if (eddy_cli_flag_value(argc, argv, &i, "--fetch", &val)) {
      if (!val || !*val)
        return eddy_cli_usage_error("run", "flag '--fetch' needs a name");
      a->fetches[a->num_fetches++] = val;
    } else if (eddy_cli_flag_value(argc, argv, &i, "--mode", &val)) {
      if (!val || !*val)
        return eddy_cli_usage_error("run", "flag '--mode' needs a value "
                                           "(eval, interp or compiled)");
      if (strcmp(val, "eval") != 0 && strcmp(val, "interp") != 0 &&
          strcmp(val, "compare") != 0 && strcmp(val, "compiled") != 0 &&
          strcmp(val, "distributed") != 0)
        return eddy_cli_usage_error(
            "run", "unknown mode '%s' (known: eval, interp, compare, "
                   "compiled, distributed)",
            val);
      a->mode = val;
    } else if (eddy_cli_flag_value(argc, argv, &i, "--target", &val)) {
      if (!val || (strcmp(val, "cpu") != 0 && strcmp(val, "kernels") != 0 &&
                   strcmp(val, "cuda") != 0))
        return eddy_cli_usage_error(
            "run", "unknown target '%s' (known: cpu, cuda, kernels)",
            val ? val : "");
      a->target = val;
    } else if (eddy_cli_flag_value(argc, argv, &i, "--gpu-matmul-precision",
                                   &val)) {
      if (!eddy_cli_gpu_matmul_tf32(val, &a->compiled.matmul_tf32))
        return eddy_cli_usage_error("run",
                                    "unknown --gpu-matmul-precision '%s' "
                                    "(known: highest, tf32)",
                                    val ? val : "");
      a->precision = val;
    } else if (strcmp(arg, "--libm-math") == 0) {
      a->compiled.libm_math = true;
    } else if (eddy_cli_flag_value(argc, argv, &i, "--fp-contract", &val)) {
      if (!eddy_cli_fp_contract(val, &a->compiled.fp_contract))
        return eddy_cli_usage_error("run",
                                    "unknown --fp-contract '%s' (known: off, "
                                    "fast)",
                                    val ? val : "");
      a->fp_contract_set = true;
    } else if (eddy_cli_flag_value(argc, argv, &i, "--outline-ops", &val)) {
      if (!eddy_cli_outline_ops(val, &a->compiled.outline_ops))
        return eddy_cli_usage_error("run", "--outline-ops needs a count of "
                                           "at least 1, not '%s'",
                                    val ? val : "");
    } else if (eddy_cli_flag_value(argc, argv, &i, "--output-dir", &val)) {
      if (!val || !*val)
        return eddy_cli_usage_error("run", "flag '--output-dir' needs a "
                                           "directory");
      a->out_dir = val;
    } else if (eddy_cli_flag_value(argc, argv, &i, "--write-inputs", &val)) {
      if (!val || !*val)
        return eddy_cli_usage_error("run", "flag '--write-inputs' needs a "
                                           "directory");
      a->inputs_dir = val;
    } else if (eddy_cli_flag_value(argc, argv, &i, "--passes", &val)) {
      if (!val)
        return eddy_cli_usage_error("run", "flag '--passes' needs a value");
      a->pipeline = val;
    } else if (eddy_cli_flag_value(argc, argv, &i, "--max-iterations", &val)) {
      if (!eddy_cli_parse_count(val, false, &a->eval.max_iterations))
        return eddy_cli_usage_error(
            "run", "flag '--max-iterations' needs a count >= 0, got '%s'",
            val ? val : "");
    } else if (eddy_cli_flag_value(argc, argv, &i, "--max-call-depth", &val)) {
      if (!eddy_cli_parse_count(val, false, &n) || n > INT32_MAX)
        return eddy_cli_usage_error(
            "run", "flag '--max-call-depth' needs a count >= 0, got '%s'",
            val ? val : "");
      a->eval.max_call_depth = (int32_t)n;
    } else if (eddy_cli_flag_value(argc, argv, &i, "--memory-limit", &val)) {
      if (val && strcmp(val, "none") == 0)
        a->memory_limit = 0;
      else if (!eddy_cli_parse_count(val, true, &a->memory_limit))
        return eddy_cli_usage_error(
            "run", "flag '--memory-limit' needs a size in bytes (e.g. 4096, "
                   "512M, 2G) or 'none', got '%s'",
            val ? val : "");
    } else if (eddy_cli_flag_value(argc, argv, &i, "--preview", &val)) {
      if (val && strcmp(val, "all") == 0)
        a->preview = -1;
      else if (!eddy_cli_parse_count(val, false, &a->preview))
        return eddy_cli_usage_error(
            "run", "flag '--preview' needs a count or 'all', got '%s'",
            val ? val : "");
    } else if ((n = eddy_cli_interp_flag(argc, argv, &i, &a->interp)) != 0) {
      if (n > 1)
        return (int)n - 1;
    } else {
      return eddy_cli_usage_error("run", "unknown flag '%s'", arg);
    }
  }
  if (a->help)
    return -1;
  if (!a->input)
    return eddy_cli_usage_error(
        "run", "missing input file (use '-' for standard input)");
  return -1;
}

/// ---- Running ----------------------------------------------------------------------

static eddy_status_t find_entry(const eddy_module_t *m, const char *entry,
                                const eddy_op_t **out_func) {
  *out_func = NULL;
  eddy_buf_t names;
  eddy_buf_init(&names);
  size_t count = 0;
  const eddy_op_t *only = NULL;
  for (const eddy_op_t *op = eddy_ir_module_body(m)->first; op; op = op->next) {
    if (!eddy_ir_op_is(op, "func.func"))
      continue;
    count++;
    only = op;
    eddy_buf_printf(&names, "%s@%s", names.len ? ", " : "",
                    eddy_ir_func_name(op));
  }
  eddy_status_t st = NULL;
  if (entry) {
    *out_func = eddy_ir_module_lookup_func(m, entry);
    if (!*out_func)
      st = eddy_status_create(EDDY_ERR_NOT_FOUND,
                              "no function @%s in the module (it has: %s)",
                              entry, count ? names.data : "no functions");
  } else if (count == 1) {
    *out_func = only;
  } else {
    st = eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                            "the module has %zu functions (%s); choose one "
                            "with --entry",
                            count, count ? names.data : "none");
  }
  eddy_buf_destroy(&names);
  return st;
}

/// Makes sure `path`, a prefix of the directory `dir` given to `flag`, is a
/// directory, creating it when missing.
static eddy_status_t ensure_one_dir(const char *path, const char *flag,
                                    const char *dir) {
  struct stat sb;
  if (stat(path, &sb) != 0) {
    if (mkdir(path, 0777) == 0)
      return NULL;
    // Another process may have made it in between; then it is checked below.
    if (errno != EEXIST || stat(path, &sb) != 0)
      return eddy_status_create(EDDY_ERR_IO,
                                "cannot create %s '%s': cannot create "
                                "directory '%s': %s",
                                flag, dir, path, strerror(errno));
  }
  if (S_ISDIR(sb.st_mode))
    return NULL;
  return eddy_status_create(EDDY_ERR_IO,
                            "cannot create %s '%s': '%s' exists and is not a "
                            "directory",
                            flag, dir, path);
}

/// Creates DIR (the value of `flag`) and any of its parents that are
/// missing, as `mkdir -p`.
static eddy_status_t ensure_dir(const char *flag, const char *dir) {
  size_t n = strlen(dir);
  if (n == 0)
    return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT, "%s is empty", flag);
  char *path = strdup(dir);
  if (!path)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  eddy_status_t st = NULL;
  // Each prefix that ends a component: before a '/' that follows a name
  // (not the root, not a repeated or trailing '/'), and the whole path.
  for (size_t i = 1; i <= n && !st; i++) {
    if ((i < n && path[i] != '/') || path[i - 1] == '/')
      continue;
    char c = path[i];
    path[i] = 0;
    st = ensure_one_dir(path, flag, dir);
    path[i] = c;
  }
  free(path);
  return st;
}

/// Writes vals[i] to DIR/<file_prefix>i.npy: the results (--output-dir,
/// "result", no prefix) or the arguments (--write-inputs, "argument",
/// "arg").
static eddy_status_t write_values(const char *flag, const char *dir,
                                  const char *what, const char *file_prefix,
                                  const eddy_eval_value_t *vals, size_t n) {
  EDDY_RETURN_IF_ERROR(ensure_dir(flag, dir));
  for (size_t i = 0; i < n; i++) {
    if (vals[i].kind != EDDY_EVAL_TENSOR) {
      fprintf(stderr,
              "eddy run: note: %s %zu is a TensorList; no .npy file is "
              "written for it\n",
              what, i);
      continue;
    }
    size_t len = strlen(dir) + strlen(file_prefix) + 32;
    char *path = malloc(len);
    if (!path)
      return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
    snprintf(path, len, "%s/%s%zu.npy", dir, file_prefix, i);
    eddy_rt_status_t rs = eddy_rt_npy_write_file(path, &vals[i].tensor, 0);
    if (rs) {
      eddy_status_t st = eddy_status_create(
          (eddy_status_code_t)eddy_rt_status_code(rs),
          "cannot write %s %zu to '%s': %s", what, i, path,
          eddy_rt_status_message(rs));
      eddy_rt_status_destroy(rs);
      free(path);
      return st;
    }
    free(path);
  }
  return NULL;
}

static void print_results(const eddy_eval_value_t *vals, size_t n,
                          int64_t preview) {
  eddy_buf_t line;
  eddy_buf_init(&line);
  for (size_t i = 0; i < n; i++) {
    eddy_buf_clear(&line);
    eddy_buf_printf(&line, "result %zu: ", i);
    eddy_eval_value_describe(&vals[i], &line);
    if (vals[i].kind == EDDY_EVAL_TENSOR) {
      eddy_buf_puts(&line, " = ");
      eddy_eval_value_preview(&vals[i], preview, &line);
    }
    printf("%s\n", line.data);
  }
  fflush(stdout);
  eddy_buf_destroy(&line);
}

/// FILE.pb: imported (feeds: --feed, else the --input names in order),
/// functionalized and legalized; the --input names become argument indices.
/// --from=v1: the v1 graph as dataflow instead (interp), or in *out_v1 as
/// well (compare: a second import).
static eddy_status_t load_graphdef(eddy_ctx_t *ctx, run_args_t *a,
                                   eddy_module_t **out,
                                   eddy_module_t **out_v1) {
  const char **feeds = a->feeds;
  size_t nf = a->num_feeds;
  if (nf == 0) {
    for (size_t i = 0; i < a->num_inputs; i++) {
      eddy_cli_input_t *in = &a->inputs[i];
      char *name = calloc(in->name_len + 1, 1);
      if (!name)
        return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
      memcpy(name, in->name, in->name_len);
      feeds[nf++] = name;
    }
  }
  eddy_tf_import_opts_t io = {.feeds = nf ? feeds : NULL,
                              .num_feeds = nf,
                              .fetches = a->num_fetches ? a->fetches : NULL,
                              .num_fetches = a->num_fetches,
                              .prune = true};
  eddy_status_t st = eddy_tf_import_graphdef(ctx, a->input, &io, out);
  bool v1_only = a->interp.from_v1 && strcmp(a->mode, "compare") != 0;
  if (!st && a->interp.from_v1 && !v1_only)
    st = eddy_tf_import_graphdef(ctx, a->input, &io, out_v1);
  if (!st && a->interp.from_v1)
    st = eddy_tf_legalize_dataflow(v1_only ? *out : *out_v1);
  for (size_t i = 0; i < a->num_inputs; i++) {
    eddy_cli_input_t *in = &a->inputs[i];
    size_t k = 0;
    while (k < nf && (strlen(feeds[k]) != in->name_len ||
                      strncmp(feeds[k], in->name, in->name_len) != 0))
      k++;
    if (k == nf) {
      if (!st)
        st = eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                                "--input %s: '%.*s' is not a fed Placeholder",
                                in->arg, (int)in->name_len, in->name);
      continue;
    }
    snprintf(a->arg_names[i], sizeof a->arg_names[i], "arg%zu", k);
    in->name = a->arg_names[i];
    in->name_len = strlen(a->arg_names[i]);
  }
  if (a->num_feeds == 0)
    for (size_t i = 0; i < nf; i++)
      free((void *)feeds[i]);
  if (!st && !v1_only)
    st = eddy_tf_functionalize(*out);
  if (!st && !v1_only)
    st = eddy_tf_legalize(*out);
  return st;
}

static eddy_status_t run_eval(eddy_ctx_t *ctx, run_args_t *a) {
  eddy_cli_register_all(ctx);
  eddy_module_t *m = NULL, *m_v1 = NULL;
  if (a->interp.from_v1 && strcmp(a->mode, "interp") != 0 &&
      strcmp(a->mode, "compare") != 0)
    return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                              "--from=v1 applies to --mode=interp and "
                              "--mode=compare, not --mode=%s", a->mode);
  if (a->target && strcmp(a->mode, "compiled") != 0)
    return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                              "--target applies to --mode=compiled, not "
                              "--mode=%s", a->mode);
  if ((a->compiled.libm_math || a->compiled.outline_ops ||
       a->fp_contract_set) &&
      strcmp(a->mode, "compiled") != 0)
    return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                              "--libm-math, --fp-contract and --outline-ops "
                              "apply to --mode=compiled, not --mode=%s",
                              a->mode);
  if (a->precision && (!a->target || strcmp(a->target, "cuda") != 0))
    return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                              "--gpu-matmul-precision needs --mode=compiled "
                              "--target=cuda");
  if (a->compiled.fp_contract && a->target && strcmp(a->target, "cuda") == 0)
    return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                              "--fp-contract=fast applies to the CPU target "
                              "(--target=cpu or kernels), not cuda");
  if (a->interp.from_v1 && !eddy_cli_is_graphdef(a->input))
    return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                              "--from=v1 needs a TensorFlow GraphDef "
                              "(FILE.pb), got '%s'", a->input);
  if (eddy_cli_is_graphdef(a->input)) {
    eddy_status_t gs = load_graphdef(ctx, a, &m, &m_v1);
    if (!gs && m_v1)
      gs = eddy_ir_verify_module(m_v1);
    if (gs) {
      eddy_ir_module_destroy(m);
      eddy_ir_module_destroy(m_v1);
      return gs;
    }
  } else {
    EDDY_RETURN_IF_ERROR(eddy_ir_parse_file(ctx, a->input, &m));
  }
  eddy_status_t st = eddy_ir_verify_module(m);
  // Compiled code needs the types that an imported graph leaves open
  // (TensorFlow lists of unknown element shape): the pipeline
  // eddy_add_model runs on a GraphDef (cmake/EddyModel.cmake).
  if (!st && eddy_cli_is_graphdef(a->input) &&
      (strcmp(a->mode, "compiled") == 0 || strcmp(a->mode, "compare") == 0))
    st = eddy_cli_run_passes(ctx, m, "shape-infer,canonicalize");
  if (!st && a->pipeline)
    st = eddy_cli_run_passes(ctx, m, a->pipeline);
  const eddy_op_t *func = NULL;
  if (!st)
    st = find_entry(m, a->entry, &func);

  eddy_rt_ctx_t *rt = NULL;
  if (!st) {
    eddy_rt_ctx_options_t ro = eddy_rt_ctx_options_default();
    ro.memory_limit =
        a->memory_limit < 0 ? default_memory_limit() : a->memory_limit;
    eddy_rt_status_t rs = eddy_rt_ctx_create(&ro, &rt);
    if (!rs) {
      // Compiled code's loop budgets (the evaluator and the interpreter
      // take theirs from their own options).
      eddy_rt_ctx_set_max_iterations(rt, a->eval.max_iterations);
      eddy_rt_ctx_set_timeout_ms(rt, a->interp.timeout_ms);
    }
    if (rs) {
      st = eddy_status_create((eddy_status_code_t)eddy_rt_status_code(rs),
                              "%s", eddy_rt_status_message(rs));
      eddy_rt_status_destroy(rs);
    }
  }
  size_t nin = func ? eddy_ir_func_type(func)->num_inputs : 0;
  size_t nout = func ? eddy_ir_func_type(func)->num_outputs : 0;
  eddy_eval_value_t *vals = calloc(nin + nout + 1, sizeof(*vals));
  if (!st && !vals)
    st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  if (!st)
    st = eddy_cli_inputs_load(rt, a->inputs, a->num_inputs, func, true,
                              vals);
  if (!st && a->inputs_dir)
    st = write_values("--write-inputs", a->inputs_dir, "argument", "arg", vals,
                      nin);
  bool differs = false;
  const eddy_op_t *v1_func = NULL;
  if (!st && m_v1)
    st = find_entry(m_v1, a->entry, &v1_func);
  bool print = true;
  if (!st && strcmp(a->mode, "compiled") == 0)
    st = eddy_cli_run_compiled(rt, m, func, a->target, &a->compiled, vals,
                               nin, vals + nin, nout, NULL, NULL);
  else if (!st && strcmp(a->mode, "compare") == 0)
    st = eddy_cli_run_compare(rt, m, (eddy_op_t *)func, (eddy_op_t *)v1_func,
                              &a->eval, &a->interp, vals, nin, vals + nin,
                              nout, &differs);
  else if (!st && strcmp(a->mode, "distributed") == 0)
    st = eddy_cli_run_dist(rt, m, (eddy_op_t *)func,
                           eddy_cli_is_graphdef(a->input) ? a->input : NULL,
                           &a->eval, &a->interp, vals, nin, vals + nin, nout,
                           &print);
  else if (!st && strcmp(a->mode, "interp") == 0)
    st = eddy_cli_run_interp(rt, (eddy_op_t *)func, (eddy_op_t *)v1_func,
                             &a->eval, &a->interp, vals, nin, vals + nin,
                             nout, NULL);
  else if (!st)
    st = eddy_eval_func(rt, func, &a->eval, vals, nin, vals + nin, nout);
  if (!print) { // another rank than 0: rank 0 reports results and errors
    bool failed = st != NULL;
    eddy_status_destroy(st);
    st = eddy_status_create(EDDY_ERR_CANCELLED, failed ? "-" : "");
  } else if (!st) {
    print_results(vals + nin, nout, a->preview);
    if (a->out_dir)
      st = write_values("--output-dir", a->out_dir, "result", "", vals + nin,
                        nout);
  }
  if (!st && differs)
    st = eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                            "--mode=compare: an execution failed or its "
                            "results differ from the reference's beyond the "
                            "tolerance (see above)");
  if (vals) {
    for (size_t i = 0; i < nin + nout; i++)
      eddy_eval_value_release(&vals[i]);
    free(vals);
  }
  if (rt)
    eddy_rt_ctx_destroy(rt);
  eddy_ir_module_destroy(m);
  eddy_ir_module_destroy(m_v1);
  return st;
}

int eddy_cli_run_main(int argc, char **argv) {
  run_args_t a;
  int rc = parse_args(argc, argv, &a);
  if (rc < 0 && a.help)
    rc = print_help();
  if (rc >= 0) {
    free(a.inputs);
    free(a.feeds);
    free(a.fetches);
    free(a.arg_names);
    return rc;
  }
  eddy_status_t st = NULL;
  eddy_ctx_t *ctx = eddy_ir_ctx_create();
  if (!ctx) {
    st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  } else {
    st = run_eval(ctx, &a);
    eddy_ir_ctx_destroy(ctx);
  }
  free(a.inputs);
  free(a.feeds);
  free(a.fetches);
  free(a.arg_names);
  if (st && eddy_status_code(st) == EDDY_ERR_CANCELLED &&
      (!strcmp(eddy_status_message(st), "") ||
       !strcmp(eddy_status_message(st), "-"))) {
    // a distributed rank other than 0: quiet, rank 0 reports
    bool failed = !strcmp(eddy_status_message(st), "-");
    eddy_status_destroy(st);
    return failed ? EDDY_CLI_EXIT_ERROR : EDDY_CLI_EXIT_OK;
  }
  if (st)
    return eddy_cli_report(st);
  return EDDY_CLI_EXIT_OK;
}

/// Internal interface of the `eddy` command-line tool: the subcommand table
/// and helpers shared by the subcommands. Not installed.
///
/// Exit codes of every subcommand: 0 success, 1 an error in the input or
/// while compiling (the status is printed to stderr), 2 a usage error.
#ifndef EDDY_TOOLS_EDDY_CLI_H
#define EDDY_TOOLS_EDDY_CLI_H

#include "ir/ir.h"
#include "runtime/eval/eval.h"

#include <stdbool.h>
#include <stddef.h>

enum {
  EDDY_CLI_EXIT_OK = 0,
  EDDY_CLI_EXIT_ERROR = 1,
  EDDY_CLI_EXIT_USAGE = 2,
};

#ifndef EDDY_VERSION
#define EDDY_VERSION "0.1.0"
#endif

/// One subcommand: `eddy NAME ARGS...`. main receives argv starting at the
/// subcommand name (argv[0] == NAME).
typedef struct eddy_cli_cmd {
  const char *name;
  const char *summary; ///< one line for `eddy --help`
  int (*main)(int argc, char **argv);
} eddy_cli_cmd_t;

/// `eddy opt`: parse, verify, run a pass pipeline, print.
int eddy_cli_opt_main(int argc, char **argv);
/// `eddy import`: read a TensorFlow GraphDef, print it as tf-dialect IR.
int eddy_cli_import_main(int argc, char **argv);
/// `eddy compile`: an entry function to an object file and a C header
/// (cmd_compile.c).
int eddy_cli_compile_main(int argc, char **argv);
/// `eddy run`: run a function on inputs and print its results (cmd_run.c).
int eddy_cli_run_main(int argc, char **argv);
/// `eddy dot`: Graphviz dot of a function or of its dataflow lowering
/// (cmd_dot.c).
int eddy_cli_dot_main(int argc, char **argv);

/// `eddy grad`: add the reverse-mode gradient of a function (cmd_grad.c).
int eddy_cli_grad_main(int argc, char **argv);

/// Parses a count: decimal digits, with an optional K, M or G suffix
/// (powers of 1024) when suffixes; false on anything else or overflow.
bool eddy_cli_parse_count(const char *s, bool suffixes, int64_t *out);

/// Prints "eddy CMD: MESSAGE" and a hint to use --help to stderr; returns
/// EDDY_CLI_EXIT_USAGE so callers can `return eddy_cli_usage_error(...)`.
int eddy_cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/// Prints the status to stderr, destroys it, returns EDDY_CLI_EXIT_ERROR.
int eddy_cli_report(eddy_status_t st);

/// Matches a flag that takes a value, in the forms `--flag=VALUE` and
/// `--flag VALUE`. Returns true when argv[*i] is that flag; then *out_value
/// is the value (NULL when it is missing) and *i is advanced past a separate
/// value.
bool eddy_cli_flag_value(int argc, char **argv, int *i, const char *flag,
                         const char **out_value);

/// The value of --gpu-matmul-precision: "highest" (FP32 arithmetic, false)
/// or "tf32" (true). Returns false for anything else.
bool eddy_cli_gpu_matmul_tf32(const char *value, bool *out_tf32);

/// The value of --fp-contract: "off" (false) or "fast" (true). Returns
/// false for anything else.
bool eddy_cli_fp_contract(const char *value, bool *out_contract);

/// The value of --outline-ops: a decimal count of at least 1. Returns false
/// for anything else.
bool eddy_cli_outline_ops(const char *value, size_t *out_ops);

/// Registers every dialect (core, ctl, tl, df, tf) and every pass (generic,
/// lowering, TensorFlow lowering) in ctx, so that each command reads the same
/// IR and accepts the same --passes. Idempotent.
void eddy_cli_register_all(eddy_ctx_t *ctx);

/// Runs the passes of pipeline (a --passes list, names as
/// eddy_cli_register_all registers them) on m and verifies the result;
/// reports of the passes go to stderr. A pipeline with no pass name does
/// nothing.
eddy_status_t eddy_cli_run_passes(eddy_ctx_t *ctx, eddy_module_t *m,
                                  const char *pipeline);

/// The body of a command whose result is one text: appends it to out.
typedef eddy_status_t (*eddy_cli_render_fn_t)(eddy_ctx_t *ctx,
                                              const void *args,
                                              eddy_buf_t *out);

/// Runs a rendering command: creates a context, calls render, ends the text
/// with a newline, writes it with eddy_cli_write_output and reports any
/// error. Returns the exit status.
int eddy_cli_render_and_write(const char *output, eddy_cli_render_fn_t render,
                              const void *args);

/// Writes data to path, or to stdout when path is NULL or "-". A file is
/// written to "PATH.tmp" first and renamed over PATH, so that a failed run
/// never leaves a truncated output behind; a device or pipe is written in
/// place.
eddy_status_t eddy_cli_write_output(const char *path, const char *data,
                                    size_t len);

/// One `--input NAME=VALUE` flag (cli_inputs.c).
typedef struct eddy_cli_input {
  const char *arg;   ///< the whole NAME=VALUE text, for messages
  const char *name;  ///< points into arg
  size_t name_len;
  const char *value; ///< points into arg
} eddy_cli_input_t;

/// Splits text (borrowed) at its first '='; false when there is none or the
/// name before it is empty.
bool eddy_cli_input_parse(const char *text, eddy_cli_input_t *out);

/// Loads func's arguments from inputs[0..num): each names an argument (a
/// name of its arg_names or its position, arg0, %arg0 or 0) and gives a
/// scalar of its dtype (5, -1.5, true, inf) or a .npy file. vals has one
/// entry per argument, zeroed by the caller; it owns what is loaded, also
/// after an error. An unknown name or an argument given twice is an error;
/// so is an argument with no input when all_required, else its entry is
/// left EDDY_EVAL_NONE.
eddy_status_t eddy_cli_inputs_load(eddy_rt_ctx_t *rt,
                                   const eddy_cli_input_t *inputs, size_t num,
                                   const eddy_op_t *func, bool all_required,
                                   eddy_eval_value_t *vals);

/// PATH names a TensorFlow GraphDef (it ends in .pb).
bool eddy_cli_is_graphdef(const char *path);

#endif

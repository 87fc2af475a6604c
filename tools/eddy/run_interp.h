/// The dataflow-interpreter side of `eddy run`: --mode=interp and
/// --mode=compare (evaluator against interpreter), and their flags. Kept out
/// of cmd_run.c so that the evaluator's command stays small.
#ifndef EDDY_TOOLS_EDDY_RUN_INTERP_H
#define EDDY_TOOLS_EDDY_RUN_INTERP_H

#include "ir/ir.h"
#include "runtime/eval/eval.h"

#include <stdbool.h>

typedef struct eddy_cli_interp_opts {
  int32_t workers;    ///< <= 0: the cores
  int64_t timeout_ms; ///< 0: none
  double rtol, atol;  ///< < 0: the defaults (a few ulp per op; exact ints)
  bool stats;         ///< print the interpreter's statistics to stderr
  bool trace;         ///< print one line per op run to stderr
  /// --from=v1: a GraphDef's v1 control flow runs in the interpreter as
  /// it is (eddy_tf_legalize_dataflow), not functionalized and lowered
  /// again; compare still evaluates the functionalized graph.
  bool from_v1;
  const char *compare; ///< --compare=LIST (run_compare.h); NULL: default
  const char *report;  ///< --report FILE: compare's JSON; NULL: none
  /// --mode=distributed (run_dist.c): --placement FILE or random:SEED
  /// (NULL: the GraphDef's device fields and the defaults), --ranks N (the
  /// ranks on threads of this process when not started by mpirun).
  const char *placement;
  int32_t ranks;
} eddy_cli_interp_opts_t;

/// Defaults: every core, no time limit, default tolerances, no stats.
void eddy_cli_interp_opts_init(eddy_cli_interp_opts_t *o);

/// Parses one of --workers N, --timeout-ms N, --rtol X, --atol X, --stats,
/// --trace, --from=v1|ctl, --compare=LIST, --report FILE at argv[*i].
/// Returns 0 when it is not one of them, 1 when it was parsed
/// (advancing *i past a separate value), or EDDY_CLI_EXIT_USAGE + 1 after
/// printing a usage error for a bad value.
int eddy_cli_interp_flag(int argc, char **argv, int *i,
                         eddy_cli_interp_opts_t *o);

/// The help lines of those flags.
extern const char eddy_cli_interp_help[];

/// Runs func for `eddy run --mode=interp`: lowers func to dataflow in
/// place and interprets it; results go to out_results. v1_func, when not
/// NULL, is what the interpreter runs instead of func lowered (a v1 graph
/// as dataflow, same signature). *out_ms (may be NULL): the interpreter's
/// wall-clock time, -1 when lowering failed.
eddy_status_t eddy_cli_run_interp(eddy_rt_ctx_t *rt, eddy_op_t *func,
                                  eddy_op_t *v1_func,
                                  const eddy_eval_opts_t *eval_opts,
                                  const eddy_cli_interp_opts_t *o,
                                  const eddy_eval_value_t *args, size_t nin,
                                  eddy_eval_value_t *out_results, size_t nout,
                                  double *out_ms);

#endif

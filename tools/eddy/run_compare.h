/// `eddy run --mode=compare`: one program run by several of eddy's
/// executions (the evaluator, the dataflow interpreter, compiled CPU code,
/// the GPU target's kernels form, CUDA), each compared with the first.
#ifndef EDDY_TOOLS_EDDY_RUN_COMPARE_H
#define EDDY_TOOLS_EDDY_RUN_COMPARE_H

#include "ir/ir.h"
#include "runtime/eval/eval.h"
#include "tools/eddy/run_interp.h"

#include <stdbool.h>

/// Runs func of m on args in each execution that o->compare lists
/// ("eval,interp,cpu,kernels,cuda", any order; NULL: eval, interp, cpu and
/// kernels, and cuda when a device answers). The first listed is the
/// reference: its results go to out_results, and an error of its is the
/// call's. Prints to stdout, per other execution and result, the largest
/// absolute and relative differences and distance in ulps against the
/// reference, and each execution's time; writes the same as JSON to
/// o->report when set. An execution that does not apply (an op the
/// compiled targets do not support, no CUDA device) is reported as skipped.
/// *out_differs: an execution failed or a result differs beyond the
/// tolerance. The interpreter lowers func in place, so it runs last;
/// v1_func, when not NULL, is what it runs instead (see
/// eddy_cli_run_interp).
eddy_status_t eddy_cli_run_compare(eddy_rt_ctx_t *rt, const eddy_module_t *m,
                                   eddy_op_t *func, eddy_op_t *v1_func,
                                   const eddy_eval_opts_t *eval_opts,
                                   const eddy_cli_interp_opts_t *o,
                                   const eddy_eval_value_t *args, size_t nin,
                                   eddy_eval_value_t *out_results, size_t nout,
                                   bool *out_differs);

/// The executions --compare knows, in their default order, and whether
/// `list` names only them, each once, at least two (else a message in
/// why, which has room for 256 bytes).
bool eddy_cli_compare_list_valid(const char *list, char *why);

#endif

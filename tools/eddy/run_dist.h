/// `eddy run --mode=distributed` (run_dist.c): the program lowered to
/// dataflow, placed, partitioned (lower/partition.h) and run one partition
/// per MPI rank when started by mpirun, else on --ranks threads of this
/// process. docs/distributed.md.
#ifndef EDDY_TOOLS_EDDY_RUN_DIST_H
#define EDDY_TOOLS_EDDY_RUN_DIST_H

#include "lower/partition.h"
#include "tools/eddy/run_interp.h"

/// Lowers func to dataflow in place, places it over n ranks (placement: a
/// --placement FILE, "random:SEED", or NULL for the defaults; graphdef: the
/// .pb func came from, for its device fields, or NULL) and partitions it:
/// the ranks' functions are added to m, parts[R] (room for n). `eddy run
/// --mode=distributed` and `eddy dot --ranks` share it.
eddy_status_t eddy_cli_dist_partition(eddy_module_t *m, eddy_op_t *func,
                                      const char *graphdef,
                                      const char *placement, int32_t n,
                                      eddy_op_t **parts,
                                      eddy_partition_info_t *info);

/// Runs func (lowered in place; its partitions are added to m). graphdef:
/// the .pb it was imported from (for its device fields), or NULL. Rank 0's
/// results go to out_results and *out_print is true there only: the other
/// ranks print nothing, errors included (*out_print false), since rank 0
/// reports the first error of any rank.
eddy_status_t eddy_cli_run_dist(eddy_rt_ctx_t *rt, eddy_module_t *m,
                                eddy_op_t *func, const char *graphdef,
                                const eddy_eval_opts_t *eval_opts,
                                const eddy_cli_interp_opts_t *o,
                                const eddy_eval_value_t *args, size_t nin,
                                eddy_eval_value_t *out_results, size_t nout,
                                bool *out_print);

#endif

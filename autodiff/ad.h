/// eddy autodiff: reverse-mode differentiation as an IR-to-IR transformation.
///
/// eddy_ad_grad adds a function F_grad next to F that computes F's results
/// and a vector-Jacobian product: it takes F's arguments plus one seed (the
/// gradient of each result) and returns F's results followed by the
/// gradients of the chosen arguments. Control flow is differentiated the
/// while_v2 way (seed 000, docs/autodiff.md): a ctl.if gets a gradient if on
/// the same predicate, a ctl.while gets a trip counter and TensorList
/// accumulators in its forward body and a reverse gradient loop that pops
/// them. The result is ordinary IR: it verifies, optimizes and can be
/// differentiated again.
#ifndef EDDY_AUTODIFF_AD_H
#define EDDY_AUTODIFF_AD_H

#include "dialects/dialects.h"
#include "ir/ir.h"
#include "runtime/eval/eval.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What one differentiated ctl.while stores per forward iteration.
typedef struct eddy_ad_loop_stat {
  const eddy_loc_t *loc; ///< the forward loop's location (may be NULL)
  int32_t depth;         ///< 0 for a loop at function level, 1 inside one loop...
  int32_t num_lists;     ///< TensorLists added to the forward loop
  /// Bytes pushed per iteration when every accumulated value has a static
  /// type; -1 ("dynamic") otherwise.
  int64_t bytes_per_iteration;
} eddy_ad_loop_stat_t;

/// Statistics of one eddy_ad_grad call. Owned by the caller: release with
/// eddy_ad_stats_destroy.
typedef struct eddy_ad_stats {
  eddy_ad_loop_stat_t *loops; ///< malloc'ed, num_loops entries
  size_t num_loops, cap_loops;
  int64_t num_ops_before; ///< ops in F
  int64_t num_ops_after;  ///< ops in F_grad
} eddy_ad_stats_t;

void eddy_ad_stats_init(eddy_ad_stats_t *s);
void eddy_ad_stats_destroy(eddy_ad_stats_t *s);

/// Differentiates the func.func `entry` of m with respect to its arguments
/// wrt[0..num_wrt) (positions) and appends `<entry>_grad` to m (an error if
/// that name is taken). F_grad's arguments: F's arguments, then one seed per
/// F result (of the result's type; seeds of non-float results are ignored).
/// Its results: F's results, then one gradient per wrt entry, of that
/// argument's type. Asking for an argument that is out of range or not of a
/// float dtype is an INVALID_ARGUMENT error naming it ("argument 1 'arg1'").
/// stats may be NULL. *out_func (may be NULL) receives F_grad. F itself is
/// left unchanged. On error m may hold a partial F_grad, which is removed.
eddy_status_t eddy_ad_grad(eddy_module_t *m, const char *entry,
                           const size_t *wrt, size_t num_wrt,
                           eddy_ad_stats_t *stats, eddy_op_t **out_func);

/// Parses a --wrt list of func's arguments: comma-separated names of its
/// arg_names attribute, or positions "arg0", "%arg0" or "0". Writes at most
/// cap positions to out and the count to *out_n. An unknown name or a
/// position past the last argument is an error naming it.
eddy_status_t eddy_ad_parse_wrt(const char *list, const eddy_op_t *func,
                                size_t *out, size_t cap, size_t *out_n);

/// Appends a human-readable report of stats (one line per loop).
void eddy_ad_stats_format(const eddy_ad_stats_t *s, eddy_buf_t *out);

/// True when autodiff has a gradient rule for ops of opcode code; when it
/// has none, *out_reason (out_reason may be NULL) says why (the op passes no
/// gradient, or the reverse walk never meets it), or is NULL when the rule
/// table has no entry for code (a gap that tests/unit/ad/test_ad_table.c
/// reports).
bool eddy_ad_opcode_has_rule(eddy_opcode_t code, const char **out_reason);

/// ===========================================================================
/// Gradient checker
/// ===========================================================================

typedef struct eddy_ad_check_opts {
  int32_t num_directions; ///< random directions tried (default 3)
  uint64_t seed;          ///< random seed (default 1)
  double step;            ///< finite-difference step (default 1e-3)
  double rtol;            ///< relative tolerance (default 1e-6)
  double atol;            ///< absolute tolerance (default 1e-9)
} eddy_ad_check_opts_t;

eddy_ad_check_opts_t eddy_ad_check_opts_default(void);

typedef struct eddy_ad_check_result {
  double max_rel_err; ///< worst relative error over the directions
  double fd;          ///< finite difference <t, J v> of the worst direction
  double vjp;         ///< <J^T t, v> of the worst direction
  bool ok;            ///< max_rel_err within tolerance
} eddy_ad_check_result_t;

/// Checks grad_func (made by eddy_ad_grad from func for wrt) at the point
/// args (func's arguments, borrowed): for random directions v (over the wrt
/// arguments) and random seeds t, compares <t, J v> estimated by central
/// differences in f64 (Richardson-extrapolated) with <J^T t, v> from
/// grad_func. Only f64 arguments and results are supported. A mismatch is
/// not an error: it is reported in *out.
eddy_status_t eddy_ad_check(eddy_rt_ctx_t *rt, const eddy_op_t *func,
                            const eddy_op_t *grad_func, const size_t *wrt,
                            size_t num_wrt, const eddy_eval_value_t *args,
                            const eddy_ad_check_opts_t *opts,
                            eddy_ad_check_result_t *out);

/// Samples arguments for func: float tensors uniform in [lo, hi] (dynamic
/// dims take dyn_dim), integer scalars int_value, i1 false. Each out value is
/// owned by the caller.
eddy_status_t eddy_ad_sample_args(eddy_rt_ctx_t *rt, const eddy_op_t *func,
                                  double lo, double hi, int64_t dyn_dim,
                                  int64_t int_value, uint64_t seed,
                                  eddy_eval_value_t *out_args);

#ifdef __cplusplus
}
#endif
#endif

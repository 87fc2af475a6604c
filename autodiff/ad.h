/// eddy autodiff: reverse-mode differentiation as an IR-to-IR transformation.
///
/// eddy_ad_grad adds a function F_grad next to F that computes F's results
/// and a vector-Jacobian product: it takes F's arguments plus one seed (the
/// gradient of each result) and returns F's results followed by the
/// gradients of the chosen arguments. Control flow is differentiated the
/// while_v2 way (the "Functional while_loop" RFC, docs/autodiff.md): a ctl.if
/// gets a gradient if on the same predicate, a ctl.while gets a trip counter
/// and TensorList accumulators in its forward body and a reverse gradient loop
/// that pops them. The result is ordinary IR: it verifies, optimizes and can be
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

/// How the gradient of a loop keeps what the forward iterations computed
/// (docs/autodiff.md, "Loop memory").
typedef enum eddy_ad_loop_memory {
  /// Push every intermediate the gradient needs, each iteration, on a
  /// TensorList (while_v2): memory grows with the trip count.
  EDDY_AD_LOOP_STORE,
  /// Store only the loop state, once per segment of iterations; the
  /// gradient re-runs each segment forward, storing its intermediates, just
  /// before running that segment's gradient.
  EDDY_AD_LOOP_CHECKPOINT,
  /// Store only the state after the loop: the gradient loop inverts each
  /// iteration to rebuild the state before it. For bodies that update each
  /// loop value by adding (or subtracting) terms computed without it, as
  /// RevNet's additive coupling y1 = x1 + F(x2), y2 = x2 + G(y1) and
  /// counters do; other bodies are refused, naming the op.
  EDDY_AD_LOOP_REVERSIBLE,
  /// CHECKPOINT with as many snapshots as memory_budget holds: SLOTS =
  /// budget / the bytes of the loop state (a static shape is needed).
  EDDY_AD_LOOP_AUTO,
} eddy_ad_loop_memory_t;

typedef struct eddy_ad_options {
  /// For loops without an eddy.loop_memory attribute (whose value,
  /// "store", "checkpoint" or "checkpoint:SLOTS", takes precedence).
  eddy_ad_loop_memory_t loop_memory;
  /// CHECKPOINT: 0 cuts a loop into segments of 1, 2, 3, ... iterations as
  /// it runs (about sqrt(2T) snapshots for T iterations, intermediates of
  /// at most about sqrt(2T) iterations at a time, one more forward run);
  /// SLOTS > 0 stores no iteration: the gradient loop rebuilds each state
  /// from at most SLOTS snapshots of the loop state, on the binomial
  /// (revolve) schedule, which runs the fewest forward steps possible.
  int64_t checkpoint_slots;
  /// AUTO: bytes the snapshots of each loop may take (one step's
  /// intermediates come on top). 0: none given, an error for AUTO.
  int64_t memory_budget;
} eddy_ad_options_t;

/// store, slots 0.
eddy_ad_options_t eddy_ad_options_default(void);

/// Parses "store", "checkpoint", "checkpoint:SLOTS" (1 <= SLOTS <= 2^31),
/// "reversible" or "auto" into *mem and *slots (0 but for
/// checkpoint:SLOTS). Anything
/// else is an INVALID_ARGUMENT error quoting it.
eddy_status_t eddy_ad_parse_loop_memory(const char *text,
                                        eddy_ad_loop_memory_t *mem,
                                        int64_t *slots);

/// eddy_ad_grad with options (NULL: eddy_ad_options_default()). A loop
/// whose eddy.loop_memory attribute does not parse is an error naming it.
eddy_status_t eddy_ad_grad_opts(eddy_module_t *m, const char *entry,
                                const size_t *wrt, size_t num_wrt,
                                const eddy_ad_options_t *opts,
                                eddy_ad_stats_t *stats, eddy_op_t **out_func);

/// Parses a --wrt list of func's arguments: comma-separated names of its
/// arg_names attribute, or positions "arg0", "%arg0" or "0"; or "all", every
/// float tensor argument (unless an argument is named "all"). Writes at most
/// cap positions to out and the count to *out_n. An unknown name, a
/// position past the last argument, or "all" of a function without a float
/// argument is an error naming them.
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
  /// Random seeds, each with one random direction per argument (default 3).
  int32_t num_directions;
  uint64_t seed; ///< random seed (default 1)
  double step;   ///< finite-difference step (default 1e-3)
  /// Finite differences: relative and absolute tolerance (1e-6, 1e-9).
  double rtol, atol;
  /// F's own gradient against the f64 one, when F computes in a lower
  /// precision: relative (to max |g64|) and absolute tolerance. 0 (the
  /// default) derives them from the machine epsilon of F's least precise
  /// float dtype: sqrt(eps) and eps (3.5e-4 and 1.2e-7 for f32).
  double low_rtol, low_atol;
} eddy_ad_check_opts_t;

eddy_ad_check_opts_t eddy_ad_check_opts_default(void);

/// The check of one differentiated argument.
typedef struct eddy_ad_check_arg {
  size_t arg; ///< its position in F
  /// Finite differences of F64 against F64's gradient, over the directions:
  /// the largest |fd - vjp|, the largest |fd - vjp| / max(|fd|, |vjp|), and
  /// fd and vjp of the direction with that relative error.
  double fd_abs_err, fd_rel_err, fd, vjp;
  /// F's own gradient g against F64's g64 (0 when F is F64), over the
  /// seeds: the largest max|g - g64|, and the largest ratio of that to
  /// max|g64| (both maxima over the argument's elements).
  double low_abs_err, low_rel_err;
  bool ok; ///< every comparison within its tolerance
} eddy_ad_check_arg_t;

typedef struct eddy_ad_check_result {
  /// F's least precise float dtype. F64: F is checked as it is (F64 is F);
  /// else through a copy promoted to f64 (F64, eddy_ad_promote_f64) and its
  /// own gradient, and F's gradient is compared with F64's.
  eddy_dtype_t dtype;
  bool promoted;
  /// F holds core.stop_gradient: finite differences do not see it, so F
  /// and F64 are checked with each taken as the identity (a copy of F
  /// without them, differentiated again; the zero derivative of
  /// stop_gradient itself is not checked).
  bool without_stops;
  double low_rtol, low_atol; ///< the tolerances used for F's own gradient
  double max_rel_err;        ///< the worst fd_rel_err over the arguments
  double fd, vjp;            ///< of that argument's worst direction
  bool ok;                   ///< every argument ok
  eddy_ad_check_arg_t *args; ///< one per wrt entry, in order (malloc'ed)
  size_t num_args;
} eddy_ad_check_result_t;

/// Frees r->args (r itself is the caller's). r may be NULL.
void eddy_ad_check_result_destroy(eddy_ad_check_result_t *r);

/// Checks grad_func (made by eddy_ad_grad from func for wrt) at the point
/// args (func's arguments, borrowed; the wrt ones float tensors of func's
/// dtypes). For each of num_directions random seeds t (one per result):
///  - F64's gradient J^T t is compared, for each wrt argument on its own,
///    with central differences of F64 in f64 (Richardson-extrapolated)
///    along a random direction v: <t, J v> = <J^T t, v>;
///  - when F computes in f16, bf16 or f32 anywhere (F64 is then its f64
///    copy, differentiated too), grad_func's gradient, evaluated in F's own
///    precision with the same seed, is compared with F64's.
/// A mismatch is not an error: it is in *out (release with
/// eddy_ad_check_result_destroy, also after an error). An argument that
/// cannot be checked is an error naming it.
eddy_status_t eddy_ad_check(eddy_rt_ctx_t *rt, const eddy_op_t *func,
                            const eddy_op_t *grad_func, const size_t *wrt,
                            size_t num_wrt, const eddy_eval_value_t *args,
                            const eddy_ad_check_opts_t *opts,
                            eddy_ad_check_result_t *out);

/// Machine epsilon of a float dtype (0x1p-23 for f32); 0 for the others.
double eddy_ad_dtype_epsilon(eddy_dtype_t dt);

/// The least precise float dtype among the types of func and of the
/// functions it calls (arguments, results, values in nested regions, list
/// elements, cast targets); EDDY_DT_F64 when none is below f64.
eddy_dtype_t eddy_ad_func_float_dtype(const eddy_op_t *func);

/// Appends to dst (a module of func's context) a copy of func and of every
/// function it calls, under the same names, in which every f16, bf16 and
/// f32 type is f64: arguments, results, values in nested ctl.while /
/// ctl.if regions, TensorList elements, constants (converted exactly) and
/// the targets of casts. *out_func receives func's copy; the copies are
/// verified. A name dst already has is an error.
/// eddy_ad_copy_for_check(func, dst, true, false, out_func).
eddy_status_t eddy_ad_promote_f64(const eddy_op_t *func, eddy_module_t *dst,
                                  eddy_op_t **out_func);
/// The copy above, with its types promoted (to_f64) and/or every
/// core.stop_gradient replaced by its operand (without_stops).
eddy_status_t eddy_ad_copy_for_check(const eddy_op_t *func, eddy_module_t *dst,
                                     bool to_f64, bool without_stops,
                                     eddy_op_t **out_func);
/// True when func or a function it calls holds a core.stop_gradient.
bool eddy_ad_reaches_stop_gradient(const eddy_op_t *func);

/// Samples the arguments of func that out_args (one entry per argument)
/// leaves EDDY_EVAL_NONE: float tensors uniform in [lo, hi] (dynamic dims
/// take dyn_dim), integers int_value, i1 false. The entries that hold a
/// value are kept. Each out value is owned by the caller, also after an
/// error.
eddy_status_t eddy_ad_sample_args(eddy_rt_ctx_t *rt, const eddy_op_t *func,
                                  double lo, double hi, int64_t dyn_dim,
                                  int64_t int_value, uint64_t seed,
                                  eddy_eval_value_t *out_args);

#ifdef __cplusplus
}
#endif
#endif

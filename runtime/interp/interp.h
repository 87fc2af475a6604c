/// The dataflow interpreter: runs a func.func whose body is a df graph (the
/// output of lower/to-dataflow, or an imported TensorFlow v1 graph) by the
/// executor rules of the "Implementation of Control Flow in TensorFlow" note.
/// Every value at run time is (value, is_dead, tag), the tag being a frame
/// instance and an iteration. Ready ops run on a thread pool; ordinary ops call
/// the runtime kernels through the reference evaluator's one-op entry point
/// (eddy_eval_op_run), so no op has a second implementation.
/// docs/interpreter.md describes the rules in prose.
///
/// The IR must be verified and is only read. Structured control flow
/// (ctl.while / ctl.if) must be lowered first (eddy_lower_to_dataflow_func);
/// running a ctl op is an error naming it.
#ifndef EDDY_RUNTIME_INTERP_INTERP_H
#define EDDY_RUNTIME_INTERP_INTERP_H

#include "ir/ir.h"
#include "runtime/eddyrt.h"
#include "runtime/eval/eval.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct eddy_interp_opts {
  /// Threads that run ready ops, the caller included; <= 0: the number of
  /// online cores. Results do not depend on it.
  int32_t num_workers;
  /// One frame instance (one execution of a loop) may start at most this
  /// many iterations; one more ends the run with an error naming the frame.
  /// <= 0: EDDY_EVAL_DEFAULT_MAX_ITERATIONS.
  int64_t max_iterations;
  /// Wall-clock limit of the run in milliseconds; 0: none. Past it the run
  /// ends with a RESOURCE error (ops already running finish first).
  int64_t timeout_ms;
  /// When set, called once per op run, in the order the executor retires
  /// them (serialized), with one line: "TAG OP (LOC): OUTPUTS", TAG being
  /// "root" or "while_1/:0/while_0/:2" (frame:iteration from the outside
  /// in) and OUTPUTS "live", "dead" or one word per result. For debugging
  /// and teaching; it slows the run down.
  void (*trace)(void *user, const char *line);
  void *trace_user;
} eddy_interp_opts_t;

/// Default workers, iteration limit and no time limit.
eddy_interp_opts_t eddy_interp_opts_default(void);

/// What a run did (for tests, benchmarks and --stats).
typedef struct eddy_interp_stats {
  int64_t ops_run;        ///< ops executed with live inputs (kernels called)
  int64_t ops_dead;       ///< ops that only propagated dead outputs
  int64_t frames;         ///< frame instances created (root excluded)
  int64_t iterations;     ///< iterations started, over all frames
  int64_t max_live_iterations; ///< most iterations alive at once, all frames
  int64_t max_live_frames;     ///< most frame instances alive at once
} eddy_interp_stats_t;

/// Runs func on args (borrowed; checked like eddy_eval_check_args) and
/// writes its results to out_results[0..num_results) (owned by the caller).
/// opts and out_stats may be NULL. On error every result is zeroed and the
/// status says what happened; a deadlock (an op whose inputs can never all
/// arrive) is an error naming the op, its location and its frame.
eddy_status_t eddy_interp_func(eddy_rt_ctx_t *rt, const eddy_op_t *func,
                               const eddy_interp_opts_t *opts,
                               const eddy_eval_value_t *args, size_t num_args,
                               eddy_eval_value_t *out_results,
                               size_t num_results,
                               eddy_interp_stats_t *out_stats);

#ifdef __cplusplus
}
#endif
#endif

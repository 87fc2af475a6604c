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

/// ---- Distributed runs (docs/distributed.md) ------------------------------------
///
/// A partition (lower/partition.h) of a program runs on each rank in its own
/// interpreter. Its df.send ops call opts.send with a rendezvous key: the
/// edge's key attribute and the tag of the frame and iteration the send ran
/// in ("12@while_0/:3/while_1/:0", or "12@root"). Its df.recv ops take
/// their messages, by the same key, from opts.rendezvous, where the
/// transport (MPI in tools/eddy, threads in tests) puts what arrives, before
/// or after the recv is ready: a recv is a source that may run early, and
/// waits without holding a worker.

typedef struct eddy_interp_rendezvous eddy_interp_rendezvous_t;

eddy_interp_rendezvous_t *eddy_interp_rendezvous_create(void);
/// Releases the messages still held.
void eddy_interp_rendezvous_destroy(eddy_interp_rendezvous_t *r);
/// A message arrived: takes *owned over. Thread-safe; may run the waiting
/// recv's consumers' bookkeeping.
void eddy_interp_rendezvous_put(eddy_interp_rendezvous_t *r, const char *key,
                                eddy_eval_value_t *owned, bool dead);
/// Another rank failed: the run that uses r (now or when it starts) stops
/// with st (taken over).
void eddy_interp_rendezvous_fail(eddy_interp_rendezvous_t *r,
                                 eddy_status_t st);
/// No more messages will come (every other rank has finished): a recv
/// that waits now or later fails the run as a deadlock naming the recv.
void eddy_interp_rendezvous_close(eddy_interp_rendezvous_t *r);
/// Messages that arrived and were never taken; the first one's key is
/// appended to out (may be NULL). A complete run of a correct partition
/// leaves none.
size_t eddy_interp_rendezvous_leftover(eddy_interp_rendezvous_t *r,
                                       eddy_buf_t *out);

/// Sends v (borrowed; EDDY_EVAL_NONE for a token or a dead value) to rank
/// `to` under key. Called from worker threads, several at once.
typedef eddy_status_t (*eddy_interp_send_fn)(void *user, int32_t to,
                                             const char *key,
                                             const eddy_eval_value_t *v,
                                             bool dead);

/// A message's bytes: the dead flag and the value (a tensor's dtype, dims
/// and elements; a list's element shape, depth and items, nested lists
/// included; nothing for a token). Appends to out.
eddy_status_t eddy_interp_value_encode(const eddy_eval_value_t *v, bool dead,
                                       eddy_buf_t *out);
/// The inverse; errors say what is malformed.
eddy_status_t eddy_interp_value_decode(eddy_rt_ctx_t *rt, const void *data,
                                       size_t len, eddy_eval_value_t *out,
                                       bool *out_dead);

typedef struct eddy_interp_opts {
  /// Threads that run ready ops, the caller included; <= 0: the number of
  /// online cores. Results do not depend on it.
  int32_t num_workers;
  /// One frame instance (one execution of a loop) may start at most this
  /// many iterations; one more ends the run with an error naming the frame.
  /// <= 0: EDDY_EVAL_DEFAULT_MAX_ITERATIONS.
  int64_t max_iterations;
  /// Wall-clock limit of the run in milliseconds; 0: none. Past it the run
  /// ends with a RESOURCE error (ops already running finish first), also
  /// while it only waits for messages (the error then names a waiting
  /// df.recv).
  int64_t timeout_ms;
  /// When set, called once per op run, in the order the executor retires
  /// them (serialized), with one line: "TAG OP (LOC): OUTPUTS", TAG being
  /// "root" or "while_1/:0/while_0/:2" (frame:iteration from the outside
  /// in) and OUTPUTS "live", "dead" or one word per result. For debugging
  /// and teaching; it slows the run down.
  void (*trace)(void *user, const char *line);
  void *trace_user;
  /// A partition's df.send / df.recv ops (NULL: a graph with them is an
  /// error naming the op).
  eddy_interp_send_fn send;
  void *send_user;
  eddy_interp_rendezvous_t *rendezvous;
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
  int64_t sends, recvs;        ///< df.send / df.recv ops run (dead ones too)
  int64_t dead_sends;          ///< of the sends: dead values
  /// TensorList updates that found their list shared and copied its item
  /// table first, and the items copied (eddy_eval_op_stats_t): a loop
  /// that pushes N items onto a list carried from iteration to iteration
  /// copies O(1) lists, not N (the list moves into its only reader).
  int64_t list_copies, list_items_copied;
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

/// Messages of a distributed run, per rank (what its sends carried).
typedef struct eddy_interp_traffic {
  int64_t messages, bytes;
} eddy_interp_traffic_t;

/// Runs the partitions funcs[0..n) of one program (lower/partition.h), each
/// in its own interpreter on its own thread, in one process: a message goes
/// through eddy_interp_value_encode and _decode as it would between
/// processes. opts' send and rendezvous are replaced. Rank 0's results go
/// to out_results; an error on one rank stops the others and is returned
/// as "rank R: ...". out_traffic: n entries, or NULL. For tests, and for
/// `eddy run --mode=distributed` without MPI.
eddy_status_t eddy_interp_run_local(eddy_rt_ctx_t *rt,
                                    const eddy_op_t *const *funcs, int32_t n,
                                    const eddy_interp_opts_t *opts,
                                    const eddy_eval_value_t *args,
                                    size_t num_args,
                                    eddy_eval_value_t *out_results,
                                    size_t num_results,
                                    eddy_interp_traffic_t *out_traffic);

#ifdef __cplusplus
}
#endif
#endif

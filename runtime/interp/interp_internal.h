/// Internal interface of the dataflow interpreter: the prepared graph
/// (interp_graph.c) that the executor (interp.c) runs.
#ifndef EDDY_RUNTIME_INTERP_INTERP_INTERNAL_H
#define EDDY_RUNTIME_INTERP_INTERP_INTERNAL_H

#include "runtime/eval/eval.h"
#include "runtime/interp/interp.h"

#include <pthread.h>
#include <time.h>

/// How the executor treats an op (the "Implementation of Control Flow in
/// TensorFlow" note's rules).
typedef enum interp_kind {
  IK_NORMAL,   ///< a kernel through eddy_eval_op_run; dead in, dead out
  IK_FREE,     ///< no operands: computed once, visible in every frame
  IK_SWITCH,
  IK_SWITCH_N, ///< df.switch_n: output `index` live (the last if out of range)
  IK_MERGE,
  IK_ENTER,
  IK_EXIT,
  IK_NEXT,
  IK_FORWARD,  ///< df.loop_cond, df.after: forwards operand 0
  IK_CONTROL,  ///< df.control: a token
  IK_RESOURCE, ///< a v1 stack or TensorArray op (interp_resource.c)
  IK_TRIGGER,  ///< tf.ControlTrigger: a token, live even from dead inputs
  IK_SEND,     ///< df.send: runs for dead inputs too (a transfer)
  IK_RECV,     ///< df.recv: waits in the rendezvous, not on a worker
} interp_kind_t;

/// A consumer of a value: operand `operand` of node `node`.
typedef struct interp_use {
  uint32_t node, operand;
} interp_use_t;

/// A frame as the graph names it (one per df.enter frame_name). Frame
/// instances at run time are one per execution of the loop.
typedef struct interp_sframe {
  const char *name;
  int32_t parent;     ///< static frame id; -1: the function's root frame
  int32_t num_enters; ///< df.enter ops into this frame
  int32_t num_exits;  ///< df.exit ops out of it
  int64_t parallel;   ///< parallel_iterations of its first enter
  int32_t depth;      ///< 1 for a frame in the root frame, and so on
  const eddy_op_t *enter; ///< its first df.enter (errors name the loop by it)
} interp_sframe_t;

/// Deepest loop frame nesting the interpreter accepts (as functionalize):
/// a frame's end is handled recursively, and no real model nests loops
/// this deep.
#define INTERP_MAX_FRAME_DEPTH 64

/// Elements from which an op's tensor makes it worth another worker's
/// wake-up (a few microseconds on a loaded machine).
#define INTERP_EXPENSIVE_ELEMS 1024

typedef struct interp_node {
  const eddy_op_t *op;
  interp_kind_t kind;
  uint32_t num_in, num_out;
  uint32_t *in;         ///< value index per operand
  uint32_t out;         ///< value index of result 0 (results are consecutive)
  uint32_t num_tagged;  ///< operands not produced by IK_FREE nodes
  int32_t frame;        ///< static frame the node runs in (-1: root)
  /// IK_MERGE: inputs that must arrive (live or dead) before it fires dead,
  /// in iteration 0 and in later ones: a loop merge's back edge (from a
  /// df.next_iteration) cannot arrive in iteration 0, its enter input in no
  /// later iteration.
  uint32_t merge_need0, merge_need_n;
  /// IK_ENTER: the frame entered; IK_EXIT: the frame left.
  int32_t target_frame;
  bool is_constant;    ///< IK_ENTER
  int32_t exit_index;  ///< IK_EXIT: ordinal among its frame's exits
  bool has_kernel;     ///< IK_NORMAL, IK_FREE: run by eddy_eval_op_run
  /// IK_NORMAL with a tensor operand or result of INTERP_EXPENSIVE_ELEMS
  /// elements or more (or of unknown size): worth waking an idle worker for
  /// (interp_enqueue). Cheap ops run on the worker that made them ready.
  bool expensive;
  int32_t res_op;      ///< IK_RESOURCE: interp_resource_op_code
  /// Operands (bit k for operand k < 64) whose value the node reads
  /// (interp_graph_build: not a df.control's, not a token).
  uint64_t reads;
  /// Of those, the ones whose value the node may move out of its slot
  /// instead of sharing it when it is the last of the value's readers in
  /// the iteration to run (slot_t.readers_left), so that a TensorList
  /// reaches its update with one reference and the kernel grows it in
  /// place. Not the values of IK_FREE nodes or the function's results.
  uint64_t take;
  int64_t key;         ///< IK_SEND, IK_RECV: the edge's key attribute
  int32_t peer;        ///< IK_SEND: to; IK_RECV: from
} interp_node_t;

typedef struct interp_graph {
  const eddy_op_t *func;
  interp_node_t *nodes;
  uint32_t num_nodes;
  uint32_t num_values;  ///< function arguments first, then results
  bool *value_free;     ///< produced by an IK_FREE node
  uint32_t *use_start;  ///< num_values + 1 offsets into uses
  interp_use_t *uses;
  const eddy_value_t **values; ///< index -> IR value
  interp_sframe_t *frames;
  int32_t num_frames;
  uint32_t *readers;    ///< per value: the operands that read it (reads)
  uint32_t *ret;        ///< value index of each func.return operand
  uint32_t num_ret;
  eddy_ptrmap_t value_index; ///< eddy_value_t* -> index + 1
} interp_graph_t;

/// Builds the graph of func (a verified func.func whose body is a df
/// graph). Errors name the op that cannot be run.
eddy_status_t interp_graph_build(const eddy_op_t *func, interp_graph_t *g);
void interp_graph_destroy(interp_graph_t *g);

/// "'core.add' op at FILE:L:C" for diagnostics.
void interp_describe_op(const eddy_op_t *op, eddy_buf_t *out);

/// ---- The executor's state (interp.c runs it, interp_frames.c keeps the
/// frame and iteration bookkeeping; all of it under interp_t.mu) -----------

/// Iterations alive at once per frame, whatever parallel_iterations says.
#define INTERP_MAX_PARALLEL 1024

typedef struct slot {
  eddy_eval_value_t v;
  bool set, dead;
  /// Readers of the value in this iteration that have not completed
  /// (interp_graph_t.readers when it arrives): one that runs when it is
  /// the last may take the value (interp_node_t.take).
  uint32_t readers_left;
} slot_t;

typedef struct nstate {
  uint32_t pending; ///< tagged inputs still to arrive
  uint32_t dead_in; ///< df.merge: inputs that arrived dead
  int32_t live_in;  ///< df.merge: the live input it fires with, or -1
  bool any_dead, fired;
} nstate_t;

typedef struct frame frame_t;

typedef struct iter {
  int64_t n;
  slot_t *slots;       ///< one per value of the graph
  nstate_t *ns;        ///< one per node
  int64_t outstanding; ///< nodes ready or running, plus live child frames
  frame_t *children;
  struct iter *next_free; ///< in interp_t.free_iters
} iter_t;

/// A value kept for later delivery: a constant df.enter's value (for every
/// iteration) or a deferred df.next_iteration value.
typedef struct held {
  uint32_t value;
  eddy_eval_value_t v;
  bool dead;
} held_t;

struct frame {
  int32_t sid; ///< static frame; -1 for the root
  frame_t *parent;
  iter_t *parent_iter;
  frame_t *next_sibling;
  int64_t parallel;
  int64_t first, last; ///< live iterations [first, last]
  iter_t **ring;       ///< parallel entries: iteration n at n % parallel
  int32_t enters_left;
  bool *exit_live;
  held_t *consts;
  size_t num_consts, cap_consts;
  held_t *deferred;
  size_t num_deferred, cap_deferred;
};

typedef struct item {
  uint32_t node;
  frame_t *f;
  iter_t *it;
} item_t;

typedef struct interp_res interp_res_t;

typedef struct interp {
  eddy_rt_ctx_t *rt;
  const interp_graph_t *g;
  eddy_interp_opts_t opts;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  item_t *q;
  size_t q_head, q_len, q_cap;
  int64_t running;
  int64_t recv_waiting; ///< df.recv ops waiting in the rendezvous
  int32_t idle; ///< workers waiting on cv
  bool stop;
  eddy_status_t error;
  frame_t *root;
  iter_t *free_iters;   ///< freed iterations, kept for reuse
  slot_t *free_vals;
  uint32_t *exit_nodes; ///< per static frame, its exits by ordinal
  uint32_t *exit_start;
  eddy_eval_op_runner_t **runners; ///< one per worker
  int32_t num_workers;
  int32_t next_worker;
  eddy_interp_stats_t stats;
  int64_t live_iters, live_frames;
  struct timespec deadline;
  bool has_deadline;
  /// The run's stacks and TensorArrays, by handle id; their ops run under
  /// res_mu (not mu: they run outside the bookkeeping lock like kernels).
  pthread_mutex_t res_mu;
  interp_res_t **res;
  size_t num_res, cap_res;
} interp_t;

/// Records the first error and stops the run. Takes st over.
void interp_fail(interp_t *I, eddy_status_t st);
/// Appends "frame 'w/' iteration 3 (in frame 'v/')" or "the function's
/// root frame".
void interp_frame_describe(const interp_t *I, const frame_t *f, int64_t n,
                           eddy_buf_t *out);
/// Creates a frame instance (sid -1: the root) with its iteration 0, linked
/// into pit's children. NULL on error (recorded with interp_fail).
frame_t *interp_frame_create(interp_t *I, frame_t *parent, iter_t *pit,
                             int32_t sid);
/// Frees f, its iterations and their child frames.
void interp_frame_free(interp_t *I, frame_t *f);
/// Frees the iterations kept for reuse.
void interp_iters_destroy(interp_t *I);
/// Makes node ready in (f, it).
void interp_enqueue(interp_t *I, uint32_t node, frame_t *f, iter_t *it);
/// Sets value vi in iteration it (taking *owned over) and notifies its
/// consumers.
void interp_deliver(interp_t *I, frame_t *f, iter_t *it, uint32_t vi,
                    eddy_eval_value_t *owned, bool dead);
/// Routes the outputs of a node that ran (taking outs over), then retires
/// it from its iteration.
void interp_complete(interp_t *I, const item_t *item, eddy_eval_value_t *outs,
                     const bool *dead);
/// Describes a node of (f, it) that received some inputs but not all.
bool interp_describe_partial(const interp_t *I, const frame_t *f,
                             const iter_t *it, eddy_buf_t *out);

/// ---- Sends and recvs (interp_rendezvous.c) --------------------------------------

/// Appends the rendezvous key of node (IK_SEND / IK_RECV) in (f, n).
void interp_transfer_key(const interp_t *I, const interp_node_t *nd,
                         const frame_t *f, int64_t n, eddy_buf_t *out);
/// Takes the message of key, or registers item as its waiter (then false:
/// interp_recv_arrived completes it later). Called without I->mu.
bool interp_rendezvous_take(eddy_interp_rendezvous_t *r, const char *key,
                            interp_t *I, const item_t *item,
                            eddy_eval_value_t *out, bool *out_dead);
/// Binds r to the run (a failure put before is recorded) / unbinds it and
/// drops its waiters. Without I->mu.
void interp_rendezvous_attach(eddy_interp_rendezvous_t *r, interp_t *I);
void interp_rendezvous_detach(eddy_interp_rendezvous_t *r, interp_t *I);
/// Appends "'df.recv' op at LOC in FRAME waits for message KEY from rank
/// R" for one recv of I that waits in r; false when none waits. Without
/// I->mu.
bool interp_rendezvous_describe_waiting(eddy_interp_rendezvous_t *r,
                                        const interp_t *I, eddy_buf_t *out);
/// A waiting recv's message: completes it (takes *owned over).
void interp_recv_arrived(interp_t *I, const item_t *item,
                         eddy_eval_value_t *owned, bool dead);

/// ---- v1 stacks and TensorArrays (interp_resource.c) --------------------------

/// The resource op code of a tf op name ("tf.StackPushV2"), or -1.
int32_t interp_resource_op_code(const char *name);
/// How many leading operands of the op are data (the rest: control tokens).
uint32_t interp_resource_op_num_data(int32_t code);
/// The results such an op has (TensorFlow's outputs).
uint32_t interp_resource_op_num_results(int32_t code);
/// Runs a resource op: in[0..num_data) borrowed, out zeroed and filled.
eddy_status_t interp_resource_exec(interp_t *I, const interp_node_t *nd,
                                   const eddy_eval_value_t *const *in,
                                   eddy_eval_value_t *out);
/// Frees every resource of the run.
void interp_resources_free(interp_t *I);

#endif

/// The reference evaluator: runs a func.func of the structured IR (core,
/// ctl, tl) on runtime tensors by walking its ops in order and calling the
/// host kernels of runtime/kernels.h. ctl.while is a C loop, ctl.if a
/// branch, ctl.call a recursive call. Simple over fast: it is the oracle
/// that the dataflow interpreter and the compiled code are compared against.
/// docs/evaluator.md describes the rules in prose.
///
/// The IR must be verified (eddy_ir_verify_module) and is only read. df ops
/// are not evaluated here (they need the dataflow interpreter): running one
/// is an error naming it.
#ifndef EDDY_RUNTIME_EVAL_EVAL_H
#define EDDY_RUNTIME_EVAL_EVAL_H

#include "dialects/dialects.h"
#include "ir/ir.h"
#include "runtime/eddyrt.h"
#include "runtime/rt_ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/// ===========================================================================
/// Values
/// ===========================================================================

typedef enum eddy_eval_kind {
  EDDY_EVAL_NONE = 0, ///< holds nothing (a zeroed value)
  EDDY_EVAL_TENSOR,
  EDDY_EVAL_LIST,
  /// A resource handle (a v1 TensorFlow stack or TensorArray in the
  /// dataflow interpreter): an id in the running interpreter's resource
  /// table. It holds no reference; the table owns the resource for the run.
  EDDY_EVAL_RESOURCE,
} eddy_eval_kind_t;

/// One runtime value: a tensor or a TensorList. A value owns what it holds
/// (one tensor buffer reference, or one list reference); a zeroed value is
/// EDDY_EVAL_NONE and releasing it is a no-op.
typedef struct eddy_eval_value {
  eddy_eval_kind_t kind;
  eddy_rt_tensor_t tensor; ///< TENSOR
  eddy_rt_list_t *list;    ///< LIST
  int64_t resource;        ///< RESOURCE
} eddy_eval_value_t;

/// Takes over the tensor (its reference moves into the value; *owned_t is
/// reset to eddy_rt_tensor_empty()).
eddy_eval_value_t eddy_eval_value_from_tensor(eddy_rt_tensor_t *owned_t);
/// Takes over one reference to the list.
eddy_eval_value_t eddy_eval_value_from_list(eddy_rt_list_t *owned_list);
/// *out = v with one more reference (no copy).
void eddy_eval_value_share(const eddy_eval_value_t *v, eddy_eval_value_t *out);
/// Drops the reference and zeroes *v. v may be NULL.
void eddy_eval_value_release(eddy_eval_value_t *v);

/// Appends a short description: "f32[3, 5]" for a tensor, "list<f32>[4
/// items]" for a list, "resource #3" for a handle, "none" for an empty
/// value.
void eddy_eval_value_describe(const eddy_eval_value_t *v, eddy_buf_t *out);
/// Appends the first max_elems elements of a tensor in row-major order,
/// "[1.5, 2, -3]" (a scalar prints bare: "7"), with ", ..." when more
/// follow; max_elems < 0 prints all. Lists print their description.
void eddy_eval_value_preview(const eddy_eval_value_t *v, int64_t max_elems,
                             eddy_buf_t *out);
/// True when the runtime value could have IR type t: same kind and dtype,
/// and for a ranked t the same rank and every static dim equal.
bool eddy_eval_value_matches(const eddy_eval_value_t *v, const eddy_type_t *t);

/// A rank-0 tensor of dtype dt from text: integers ("-3", "0x10") for int
/// dtypes, within the dtype's range; numbers ("1.5", "-2", "inf", "nan")
/// for float dtypes, rounded to the dtype; "true"/"false"/"1"/"0" for i1.
/// A text that is not such a number is an INVALID_ARGUMENT error.
eddy_status_t eddy_eval_scalar_from_text(eddy_rt_ctx_t *rt, eddy_dtype_t dt,
                                         const char *text,
                                         eddy_eval_value_t *out_value);

/// ===========================================================================
/// Running functions
/// ===========================================================================

/// Default limit of iterations of one ctl.while execution.
#define EDDY_EVAL_DEFAULT_MAX_ITERATIONS 100000000
/// Default limit of nested ctl.call levels.
#define EDDY_EVAL_DEFAULT_MAX_CALL_DEPTH 256

typedef struct eddy_eval_opts {
  /// One execution of a ctl.while may run at most this many iterations
  /// (body runs); one more is an error naming the loop, never an endless
  /// loop. A loop's own maximum_iterations attribute is not an error: it
  /// stops the loop (TensorFlow semantics). Must be >= 0.
  int64_t max_iterations;
  /// Nested ctl.call levels allowed (the entry function is level 0).
  int32_t max_call_depth;
} eddy_eval_opts_t;

/// The defaults above.
eddy_eval_opts_t eddy_eval_opts_default(void);

/// Checks args[0..num_args) against func's argument types. Errors
/// (INVALID_ARGUMENT) name the argument, what was expected and what was
/// given: "@f: argument 1 'arg1': expected tensor<4x?xf32>, got f32[3, 5]".
/// Arguments are named by position, "arg0", "arg1", ...: the text format
/// renames arguments to %argN, so positions are the names that survive.
eddy_status_t eddy_eval_check_args(const eddy_op_t *func,
                                   const eddy_eval_value_t *args,
                                   size_t num_args);

/// Runs func (a verified func.func) on args (borrowed; checked with
/// eddy_eval_check_args) and writes its results to
/// out_results[0..num_results), which must equal the function's result
/// count; each is owned by the caller. Tensors and lists are allocated
/// through rt (its memory limit applies). opts may be NULL (defaults).
/// On error every out_results entry is zeroed, and the status names the op
/// (its location) and what happened, with notes for the enclosing loop
/// iterations, branches and calls.
eddy_status_t eddy_eval_func(eddy_rt_ctx_t *rt, const eddy_op_t *func,
                             const eddy_eval_opts_t *opts,
                             const eddy_eval_value_t *args, size_t num_args,
                             eddy_eval_value_t *out_results,
                             size_t num_results);

/// ===========================================================================
/// Running one op
/// ===========================================================================

/// Evaluator state for running single ops, one at a time, outside
/// eddy_eval_func: the dataflow interpreter runs every ordinary op of its
/// graph through one of these per worker thread, so that no op has a
/// second implementation. It caches per-op data (constants, which operands
/// an op may consume); not thread-safe: one per thread.
typedef struct eddy_eval_op_runner eddy_eval_op_runner_t;

/// Creates a runner allocating through rt. func is the function the ops
/// belong to (ctl.call resolves callees in its module). NULL on out of
/// memory.
eddy_eval_op_runner_t *eddy_eval_op_runner_create(eddy_rt_ctx_t *rt,
                                                  const eddy_op_t *func);
/// Frees the runner and what it cached. r may be NULL.
void eddy_eval_op_runner_destroy(eddy_eval_op_runner_t *r);

/// True when the evaluator has a kernel for op (by its opcode; regions are
/// not looked at).
bool eddy_eval_op_is_supported(const eddy_op_t *op);
/// True when the evaluator runs ops of opcode code; when it does not,
/// *out_reason (out_reason may be NULL) says why, or is NULL when its table
/// has no entry for code (a gap that tests/unit/eval/test_eval_table.c
/// reports).
bool eddy_eval_opcode_supported(eddy_opcode_t code, const char **out_reason);

/// Runs op on operands[0..op->num_operands) (borrowed; none is changed:
/// list operands are copied on write) and writes its results to
/// out_results[0..op->num_results) (owned by the caller). Each result is
/// checked against its declared type. On error every result is zeroed and
/// the status is located at op. An op with regions other than ctl.call's
/// callees (ctl.while, ctl.if) reads values from above through its
/// operands only: run ops of a dataflow graph, not of structured bodies.
eddy_status_t eddy_eval_op_run(eddy_eval_op_runner_t *r, const eddy_op_t *op,
                               const eddy_eval_value_t *const *operands,
                               eddy_eval_value_t *out_results);

/// As eddy_eval_op_run, but the caller gives over its reference to each
/// TensorList operand k whose bit (1 << k, k < 64) is set in take: that
/// value is moved out of *operands[k], which is left zeroed, so that a
/// kernel updating the list (tl.push_back, tl.set_item, tl.pop_back, ...)
/// does it in place when the caller's reference was the only one. Bits of
/// other operands are ignored, and so are those of a list whose IR value
/// is also another operand of op (that one stays the caller's).
eddy_status_t eddy_eval_op_run_take(eddy_eval_op_runner_t *r,
                                    const eddy_op_t *op,
                                    eddy_eval_value_t *const *operands,
                                    uint64_t take,
                                    eddy_eval_value_t *out_results);

/// What the ops a runner ran cost in copies.
typedef struct eddy_eval_op_stats {
  /// List updates that found their list shared (another reference held
  /// it), so that the kernel copied the list's item table first
  /// (copy-on-write), and the items those copies held: pushing N items
  /// onto a list that is moved into each push costs no copy; one that is
  /// shared at every push costs N(N-1)/2 items.
  int64_t list_copies, list_items_copied;
} eddy_eval_op_stats_t;

/// The counts since the runner was created.
void eddy_eval_op_runner_stats(const eddy_eval_op_runner_t *r,
                               eddy_eval_op_stats_t *out_stats);

/// Converts a runtime status into an eddy status (same code numbering) and
/// destroys it; NULL for NULL. No location.
eddy_status_t eddy_eval_from_rt(eddy_rt_status_t st);
/// The same, located at op: "LOC: error: 'core.add' op MESSAGE", where the
/// kernel's own "core.add: " prefix is dropped. NULL for NULL.
eddy_status_t eddy_eval_op_rt_error(const eddy_op_t *op, eddy_rt_status_t st);

#ifdef __cplusplus
}
#endif
#endif

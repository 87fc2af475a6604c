/// Internal interface of the reference evaluator, shared by eval.c (blocks,
/// frames, control flow) and eval_ops.c (the core and tl op handlers).
#ifndef EDDY_RUNTIME_EVAL_EVAL_INTERNAL_H
#define EDDY_RUNTIME_EVAL_EVAL_INTERNAL_H

#include "runtime/eval/eval.h"
#include "runtime/kernels.h"

/// The values computed by one execution of one block. Nested regions get a
/// frame whose parent is the enclosing one, so values captured from above
/// are found by walking up; a called function starts a frame with no parent.
typedef struct eval_frame {
  struct eval_frame *parent;
  eddy_ptrmap_t map;        ///< eddy_value_t* -> slot index + 1
  eddy_eval_value_t *slots; ///< owned values
  size_t len, cap;
} eval_frame_t;

typedef struct eval_state eval_state_t;

/// Runs one op. operands[i] are borrowed; results[0..op->num_results) are
/// zeroed on entry and filled with owned values on success (on error the
/// caller releases whatever was filled). Errors are located at the op
/// (eddy_eval_op_error, eddy_eval_op_rt_error); the caller checks results
/// against the declared types.
typedef struct eval_handler eval_handler_t;
typedef eddy_status_t (*eval_handler_fn)(eval_state_t *s, eval_frame_t *f,
                                         const eval_handler_t *h,
                                         const eddy_op_t *op,
                                         const eddy_eval_value_t *const *operands,
                                         eddy_eval_value_t *results);

struct eval_handler {
  eval_handler_fn fn; ///< NULL: the evaluator does not run the op
  int code;           ///< the kernel family's op enum, for shared handlers
  const char *none;   ///< without fn: why
};

struct eval_state {
  eddy_rt_ctx_t *rt;
  eddy_eval_opts_t opts;
  int32_t call_depth;
  int32_t nesting; ///< regions and calls entered (bounds C recursion)
  const eddy_op_t **calls; ///< the ctl.call ops on the stack, call_depth of them
  const eddy_op_t *entry;  ///< the function eddy_eval_func runs
  uintptr_t stack_base;    ///< frame address of eddy_eval_func
  eddy_ptrmap_t consts;    ///< core.constant op -> eddy_rt_tensor_t* (owned)
  eddy_ptrmap_t takes;     ///< op -> bit mask + 1 of operands it may consume
  /// Lists taken (eddy_eval_take_list) while another reference held them,
  /// so that the kernel updating them copied their item table first, and
  /// the items of those tables (eddy_eval_op_runner_stats).
  int64_t list_copies, list_items_copied;
};

/// Releases what s holds: the cached constants, its maps and its call stack
/// (eval.c; also for the op runner of eval_op.c).
void eddy_eval_state_destroy(eval_state_t *s);

/// op's handler, from the table indexed by opcode (eval_ops.c); NULL when
/// the evaluator does not run op.
const eval_handler_t *eddy_eval_handler(const eddy_op_t *op);

/// Handlers of the ctl ops (eval.c).
eddy_status_t eddy_eval_ctl_while(eval_state_t *s, eval_frame_t *f,
    const eval_handler_t *h,
                                  const eddy_op_t *op,
                                  const eddy_eval_value_t *const *operands,
                                  eddy_eval_value_t *results);
eddy_status_t eddy_eval_ctl_if(eval_state_t *s, eval_frame_t *f,
    const eval_handler_t *h,
                               const eddy_op_t *op,
                               const eddy_eval_value_t *const *operands,
                               eddy_eval_value_t *results);
eddy_status_t eddy_eval_ctl_call(eval_state_t *s, eval_frame_t *f,
    const eval_handler_t *h,
                                 const eddy_op_t *op,
                                 const eddy_eval_value_t *const *operands,
                                 eddy_eval_value_t *results);

/// An owned reference to the list operand i of op: moved out of the frame
/// when this is the value's last use in its block (so that the kernel can
/// update the list in place), else a new reference. A list that is still
/// shared then (the kernel will copy it) is counted in s->list_copies.
eddy_status_t eddy_eval_take_list(eval_state_t *s, eval_frame_t *f,
                                  const eddy_op_t *op, uint32_t i,
                                  eddy_rt_list_t **out_list);

/// eddy_eval_from_rt and eddy_eval_op_rt_error are public (eval.h).

/// An error at op: "LOC: error: 'NAME' op MESSAGE" with the given code.
eddy_status_t eddy_eval_op_error(const eddy_op_t *op, eddy_status_code_t code,
                                 const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/// Appends "f32[3, 5]" for a tensor.
void eddy_eval_tensor_describe(const eddy_rt_tensor_t *t, eddy_buf_t *out);

#endif

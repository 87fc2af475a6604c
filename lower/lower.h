/// Lowerings between levels of the IR. For now: to-dataflow, which turns
/// the structured control flow of ctl (ctl.while, ctl.if) into the dataflow
/// primitives of df exactly as TensorFlow compiles tf.while_loop and tf.cond
/// (the "Implementation of Control Flow in TensorFlow" note). docs/lowering.md
/// describes the mapping.
#ifndef EDDY_LOWER_LOWER_H
#define EDDY_LOWER_LOWER_H

#include "ir/pass.h"

#ifdef __cplusplus
extern "C" {
#endif

/// The `to-dataflow` pass: lowers every ctl.while and ctl.if of every
/// function of the module (nested to any depth). ctl.call is left alone.
extern const eddy_pass_t eddy_lower_pass_to_dataflow;

/// Lowers the ctl.while / ctl.if ops of one func.func in place. Frame names
/// ("while_0/", "while_1/", ...) are unique within the function. Fails
/// (leaving the function partly lowered) on a construct it cannot lower,
/// e.g. a ctl.while with no loop values.
eddy_status_t eddy_lower_to_dataflow_func(eddy_op_t *func);

/// Registers the lowering passes in ctx (idempotent).
void eddy_lower_passes_register(eddy_ctx_t *ctx);

#ifdef __cplusplus
}
#endif
#endif

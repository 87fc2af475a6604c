/// The ctl dialect: structured control flow (while, if, call and the
/// terminators yield and condition). See docs/dialects/ctl.md.
///
/// Builders here create the ops with their regions laid out as the verifier
/// expects; the caller fills the blocks and adds the terminators.
#ifndef EDDY_DIALECTS_CTL_CTL_H
#define EDDY_DIALECTS_CTL_CTL_H

#include "ir/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Every ctl op, in table order: X(ENUM_SUFFIX, "name without ctl."); it
/// numbers their opcodes (eddy_opcode_t in dialects/dialects.h).
#define EDDY_CTL_OP_LIST(X)                                                    \
  X(WHILE, "while")                                                            \
  X(IF, "if")                                                                  \
  X(CALL, "call")                                                              \
  X(YIELD, "yield")                                                            \
  X(CONDITION, "condition")

extern const eddy_dialect_t eddy_ctl_dialect;

/// Creates "ctl.while"(inits...) at the builder's insertion point, with
/// result types equal to the init types and two regions (cond, body) of one
/// block each whose arguments have those types. The blocks are left empty:
/// the caller adds ops and the terminators (ctl.condition in cond, ctl.yield
/// in body). Attributes (parallel_iterations...) may be set afterwards.
eddy_status_t eddy_ctl_build_while(eddy_builder_t *b,
                                   eddy_value_t *const *inits, size_t n,
                                   eddy_op_t **out_op);

/// Creates "ctl.if"(pred) with the given result types and two regions
/// (then, else) of one empty block each, with no arguments.
eddy_status_t eddy_ctl_build_if(eddy_builder_t *b, eddy_value_t *pred,
                                const eddy_type_t *const *result_types,
                                size_t num_results, eddy_op_t **out_op);

/// Creates "ctl.yield"(values...). out_op may be NULL.
eddy_status_t eddy_ctl_build_yield(eddy_builder_t *b,
                                   eddy_value_t *const *values, size_t n,
                                   eddy_op_t **out_op);

/// Creates "ctl.condition"(pred). out_op may be NULL.
eddy_status_t eddy_ctl_build_condition(eddy_builder_t *b, eddy_value_t *pred,
                                       eddy_op_t **out_op);

/// Creates "ctl.call"(args...) {callee = @NAME} calling the func.func
/// `callee`, with result types taken from its function type.
eddy_status_t eddy_ctl_build_call(eddy_builder_t *b, const eddy_op_t *callee,
                                  eddy_value_t *const *args, size_t n,
                                  eddy_op_t **out_op);

/// Region blocks of a ctl.while / ctl.if (NULL when the region is empty or
/// missing). The op must be of the named kind (asserted).
eddy_block_t *eddy_ctl_while_cond(const eddy_op_t *op);
eddy_block_t *eddy_ctl_while_body(const eddy_op_t *op);
eddy_block_t *eddy_ctl_if_then(const eddy_op_t *op);
eddy_block_t *eddy_ctl_if_else(const eddy_op_t *op);

/// The callee name of a ctl.call (NUL-terminated, borrowed), or NULL when
/// the attribute is missing.
const char *eddy_ctl_call_callee(const eddy_op_t *op);
/// The func.func a ctl.call names, looked up in the enclosing module; NULL
/// when there is no enclosing module or no such function.
eddy_op_t *eddy_ctl_call_resolve(const eddy_op_t *op);

#ifdef __cplusplus
}
#endif
#endif

/// The tl dialect: TensorLists as immutable SSA values (push returns a new
/// list). See docs/dialects/tl.md.
#ifndef EDDY_DIALECTS_TL_TL_H
#define EDDY_DIALECTS_TL_TL_H

#include "ir/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Every tl op, in table order: X(ENUM_SUFFIX, "name without tl."); it
/// numbers their opcodes (eddy_opcode_t in dialects/dialects.h).
#define EDDY_TL_OP_LIST(X)                                                     \
  X(EMPTY, "empty")                                                            \
  X(RESERVE, "reserve")                                                        \
  X(PUSH_BACK, "push_back")                                                    \
  X(POP_BACK, "pop_back")                                                      \
  X(GET_ITEM, "get_item")                                                      \
  X(SET_ITEM, "set_item")                                                      \
  X(LENGTH, "length")                                                          \
  X(STACK, "stack")                                                            \
  X(FROM_TENSOR, "from_tensor")                                                \
  X(RESIZE, "resize")                                                          \
  X(SCATTER, "scatter")                                                        \
  X(CONCAT, "concat")                                                          \
  X(SPLIT, "split")                                                            \
  X(ADD, "add")                                                                \
  X(ZEROS_LIKE, "zeros_like")

extern const eddy_dialect_t eddy_tl_dialect;

/// The type tl.stack gives for a list of element type elem:
/// tensor<?x(elem dims)>, or unranked when elem is unranked. NULL when elem
/// is not a tensor type or its rank cannot grow by one.
const eddy_type_t *eddy_tl_stacked_type(eddy_ctx_t *ctx,
                                        const eddy_type_t *elem);

/// The list type tl.from_tensor gives for a tensor of type t:
/// !tl.list<tensor<(t dims without the first)>>. NULL when t is not a tensor
/// of rank >= 1 (an unranked t gives a list of unranked elements).
const eddy_type_t *eddy_tl_unstacked_type(eddy_ctx_t *ctx,
                                          const eddy_type_t *t);

#ifdef __cplusplus
}
#endif
#endif

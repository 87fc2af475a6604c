/// Helpers shared by the generic passes (internal to ir/passes).
#ifndef EDDY_IR_PASSES_PASS_UTIL_H
#define EDDY_IR_PASSES_PASS_UTIL_H

#include "ir/pass.h"

/// The op is marked PURE (no side effects).
bool eddy_passes_op_is_pure(const eddy_op_t *op);
/// Some result of op has a use.
bool eddy_passes_op_has_used_result(const eddy_op_t *op);
/// Every op nested in op's regions is PURE or a terminator, recursively: the
/// op as a whole has no side effects besides those of op itself.
bool eddy_passes_regions_are_pure(const eddy_op_t *op);
/// op has no side effects of its own nor in its regions: a PURE op
/// without regions, or a ctl.if / ctl.while (or PURE op) whose regions are
/// pure. Terminators never qualify.
bool eddy_passes_op_is_effect_free(const eddy_op_t *op);
/// op can be erased without changing the program: no result is used, it is
/// not a terminator, and it is PURE; an op with regions (ctl.if, ctl.while)
/// qualifies when everything inside it is pure too.
bool eddy_passes_op_is_dead(const eddy_op_t *op);
/// op might fail at run time even though the IR verified: core.gather (its
/// indices are checked when it runs), ops with a non-tensor result (list
/// ops can fail on their contents), and ops with an operand that is not a
/// static tensor (broadcasts, reshapes, slices, matmuls and splits on
/// dynamic shapes are checked at run time) unless they are elementwise
/// without broadcasting or shape queries. Conservative: false means it
/// cannot fail.
bool eddy_passes_op_may_fail(const eddy_op_t *op);
/// The op that defines v or owns v's block (NULL for a detached value).
eddy_op_t *eddy_passes_value_owner(const eddy_value_t *v);
/// v is defined outside `op` (not by op nor anywhere inside its regions).
bool eddy_passes_value_defined_outside(const eddy_value_t *v,
                                       const eddy_op_t *op);
/// The DENSE constant that v holds when its defining op is CONSTANT-like,
/// else NULL.
const eddy_attr_t *eddy_passes_value_const(const eddy_value_t *v);
/// Every element of the tensor v is zero (of either sign), as far as its
/// definition shows: a constant, or a cast, broadcast or reshape of such a
/// value, or an integer product with such a factor (the zeros that
/// TensorFlow's ZerosLike of a run-time shape legalizes to).
/// Conservative: false when not shown.
bool eddy_passes_value_zero(const eddy_value_t *v);
/// v is an integer tensor whose elements are all >= 0, as far as its
/// definition shows: a constant, a shape or dim query, a sum, product,
/// maximum or minimum of such values, a widening cast, reshape, slice,
/// transpose or broadcast of one, or a loop
/// value of a ctl.while whose init and next value are such values (the
/// next value assuming the loop value is: induction over the iterations).
/// Integer overflow is not modelled: a loop counter is taken to stay below
/// its type's maximum. Conservative: false when not shown.
bool eddy_passes_value_nonneg(const eddy_value_t *v);
/// Erases dead ops (eddy_passes_op_is_dead) in every block of region,
/// innermost and last first, so chains of dead ops go in one call. Returns
/// the number erased.
int64_t eddy_passes_erase_dead_in_region(eddy_region_t *r);
/// Same for one block.
int64_t eddy_passes_erase_dead_in_block(eddy_block_t *b);

/// Replaces op by a copy that keeps only the results, operands and entry
/// block arguments whose flags are set (NULL: keep all); the regions' ops
/// are moved over. Kept results and block args are RAUW'ed to the new op's;
/// the dropped ones must be unused. The old op is erased. Each region must
/// have a single block. Returns the new op in *out_op.
eddy_status_t eddy_passes_rebuild_op(eddy_op_t *op, const bool *keep_results,
                                     const bool *keep_operands,
                                     const bool *keep_args,
                                     eddy_op_t **out_op);

/// The value that v holds in every iteration of the ctl.while `loop`, as a
/// value defined outside it: v itself when it is defined outside the loop;
/// loop operand i when v is argument i of the cond or body block and the
/// body yields its argument i unchanged (a pass-through loop value, as
/// TensorFlow's functional While carries its captured tensors). NULL when v
/// may change between iterations.
eddy_value_t *eddy_passes_loop_invariant_source(const eddy_op_t *loop,
                                                eddy_value_t *v);

/// The value the loop index v is computed from, through what TensorFlow's
/// `x[t]` puts between a counter and the read: reshapes between
/// one-element shapes, integer casts, and the count from the end of a
/// negative index (select(lt(x, 0), add(x, n), x)). These keep the index
/// the counter's value wherever the counter is not negative.
eddy_value_t *eddy_passes_index_source(eddy_value_t *v);
/// v is a counter of the ctl.while `loop`: an argument of its body block
/// whose initial value is an integer scalar constant and which the body
/// yields plus 1.
bool eddy_passes_loop_counter(const eddy_op_t *loop, const eddy_value_t *v);

/// Builds, at b's insertion point, the core.slice of rows [lo, lo + n) of
/// the static tensor v (its leading dimension; every other one whole), in
/// *out. v's rank is at most 16.
eddy_status_t eddy_passes_slice_rows(eddy_builder_t *b, eddy_value_t *v,
                                     int64_t lo, int64_t n, eddy_value_t **out);

/// Every ctl.while of m's functions, inner loops before the loops that
/// contain them (post-order), in *out_loops (malloc'ed; the caller frees
/// it), *out_n of them.
eddy_status_t eddy_passes_collect_loops(eddy_module_t *m,
                                        eddy_op_t ***out_loops,
                                        size_t *out_n);

/// Replaces the ctl.while `loop` by one with n more loop values, whose
/// initial values are inits (their types become the new result and block
/// argument types); both regions get the new block arguments last, the
/// regions' ops move over and the old results are RAUW'ed. The body's
/// yield is left as it was: the caller appends one operand per new loop
/// value. Returns the new loop in *out_loop.
eddy_status_t eddy_passes_while_add_values(eddy_op_t *loop,
                                           eddy_value_t *const *inits,
                                           size_t n, eddy_op_t **out_loop);

/// shape-infer's list step (list_types.c): gives every web of list values
/// in func (lists derived from one another through tl ops, ctl.while and
/// ctl.if) the element type that covers all items written into it, when
/// no list of the web leaves func's sight. *out_updates: values retyped.
eddy_status_t eddy_passes_refine_list_types(eddy_ctx_t *ctx, eddy_op_t *func,
                                            int64_t *out_updates);

#endif

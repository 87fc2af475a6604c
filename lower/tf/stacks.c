/// functionalize, first step: v1 stacks become loop values.
///
/// tf.gradients of a v1 while_loop saves forward values on a stack: a
/// StackV2 made before the loops, entered as a constant into the forward
/// frame (StackPushV2 there) and into the backward frame (StackPopV2
/// there). The pushes and pops are ordered by control edges only. To give
/// them SSA form, the stack becomes a loop value of each frame, built from
/// the same v1 primitives functionalize then raises: in the forward frame
/// Enter(stack) -> Merge -> Switch on the frame's LoopCond, whose true side
/// feeds a TensorListPushBack and whose NextIteration takes the pushed
/// list, and an Exit; in the backward frame the same around a
/// TensorListPopBack, starting from the forward Exit. Only the simple shape
/// is threaded: one push frame and one pop frame, each entering the stack
/// directly, pushes and pops not inside a cond. Other stacks are left as
/// they are (legalize-tf then reports StackPushV2 / StackPopV2).
#include "lower/tf/tf_lower_internal.h"

#include <string.h>

static bool is(const eddy_op_t *op, const char *name) {
  return op && eddy_ir_op_is(op, name);
}

/// The LoopCond of the frame an Enter belongs to: the one driving the
/// Switch of a Merge of an Enter with the same frame_name.
static eddy_op_t *frame_loopcond(eddy_block_t *b, const eddy_attr_t *frame) {
  for (eddy_op_t *op = b->first; op; op = op->next) {
    if (!is(op, "tf.Switch"))
      continue;
    eddy_op_t *lc = eddy_ir_op_operand(op, 1)->def;
    eddy_op_t *m = eddy_ir_op_operand(op, 0)->def;
    if (!is(lc, "tf.LoopCond") || !is(m, "tf.Merge"))
      continue;
    for (uint32_t i = 0; i < m->num_operands; i++) {
      eddy_op_t *e = eddy_ir_op_operand(m, i)->def;
      if (is(e, "tf.Enter") && eddy_ir_op_attr(e, "frame_name") == frame)
        return lc;
    }
  }
  return NULL;
}

static eddy_status_t make(eddy_builder_t *bb, const char *name,
                          eddy_value_t **ops, size_t n,
                          const eddy_named_attr_t *attrs, size_t na,
                          const eddy_type_t **types, size_t nt,
                          const eddy_loc_t *loc, eddy_op_t **out) {
  eddy_op_state_t st = {.name = name,
                        .operands = ops,
                        .num_operands = n,
                        .attrs = attrs,
                        .num_attrs = na,
                        .result_types = types,
                        .num_results = nt,
                        .loc = loc};
  return eddy_ir_build(bb, &st, out);
}

/// Builds the loop value for a stack in the frame of `enter` (a constant
/// Enter of the stack), starting from `init`: returns the Switch's true
/// output (the list inside an iteration) in *cur and the Exit's result in
/// *exit_out; *next_op is the NextIteration, whose operand the caller sets.
static eddy_status_t thread_frame(eddy_ctx_t *ctx, eddy_block_t *b,
                                  eddy_op_t *enter, eddy_value_t *init,
                                  eddy_op_t *lc, eddy_value_t **cur,
                                  eddy_op_t **next_op,
                                  eddy_value_t **exit_out) {
  eddy_builder_t bb;
  eddy_ir_builder_init(&bb, ctx);
  eddy_ir_builder_set_before(&bb, enter);
  const eddy_type_t *lt = init->type;
  eddy_named_attr_t ea[2] = {
      eddy_ir_named_attr(ctx, "frame_name",
                         eddy_ir_op_attr(enter, "frame_name")),
      eddy_ir_named_attr(ctx, "is_constant", eddy_ir_bool_attr_get(ctx, false))};
  eddy_op_t *e = NULL, *m = NULL, *sw = NULL, *nx = NULL, *x = NULL;
  EDDY_RETURN_IF_ERROR(
      make(&bb, "tf.Enter", &init, 1, ea, 2, &lt, 1, enter->loc, &e));
  // The Merge must come after the LoopCond's Switches' inputs; putting it
  // right before the LoopCond's first Switch user keeps the order valid.
  eddy_op_t *at = lc->next ? lc->next : lc;
  eddy_ir_builder_set_before(&bb, at);
  eddy_value_t *mops[2] = {eddy_ir_op_result(e, 0), eddy_ir_op_result(e, 0)};
  const eddy_type_t *mt[2] = {lt, eddy_ir_scalar_type_get(ctx, EDDY_DT_I32)};
  EDDY_RETURN_IF_ERROR(
      make(&bb, "tf.Merge", mops, 2, NULL, 0, mt, 2, enter->loc, &m));
  eddy_value_t *sops[2] = {eddy_ir_op_result(m, 0), eddy_ir_op_result(lc, 0)};
  const eddy_type_t *st[2] = {lt, lt};
  EDDY_RETURN_IF_ERROR(
      make(&bb, "tf.Switch", sops, 2, NULL, 0, st, 2, enter->loc, &sw));
  eddy_value_t *f = eddy_ir_op_result(sw, 0);
  EDDY_RETURN_IF_ERROR(make(&bb, "tf.Exit", &f, 1, NULL, 0, &lt, 1,
                            enter->loc, &x));
  // The NextIteration goes at the end of the block; its operand is set by
  // the caller once the push or pop exists.
  eddy_op_t *last = eddy_ir_block_terminator(b);
  eddy_ir_builder_set_before(&bb, last);
  eddy_value_t *t = eddy_ir_op_result(sw, 1);
  EDDY_RETURN_IF_ERROR(make(&bb, "tf.NextIteration", &t, 1, NULL, 0, &lt, 1,
                            enter->loc, &nx));
  eddy_ir_op_set_operand(m, 1, eddy_ir_op_result(nx, 0));
  *cur = eddy_ir_op_result(sw, 1);
  *next_op = nx;
  *exit_out = eddy_ir_op_result(x, 0);
  return NULL;
}

/// Threads one stack when it has the simple shape; *done tells.
static eddy_status_t thread_stack(eddy_ctx_t *ctx, eddy_block_t *b,
                                  eddy_op_t *stack, bool *done) {
  *done = false;
  eddy_op_t *push = NULL, *pop = NULL, *push_enter = NULL, *pop_enter = NULL;
  for (eddy_use_t *u = stack->results[0].uses; u; u = u->next) {
    eddy_op_t *e = u->owner;
    if (!is(e, "tf.Enter") || e->block != b)
      return NULL;
    for (eddy_use_t *w = e->results[0].uses; w; w = w->next) {
      eddy_op_t *o = w->owner;
      while (is(o, "df.after") && o->results[0].uses &&
             !o->results[0].uses->next)
        o = o->results[0].uses->owner;
      if (is(o, "tf.StackPushV2") && !push) {
        push = o;
        push_enter = e;
      } else if (is(o, "tf.StackPopV2") && !pop) {
        pop = o;
        pop_enter = e;
      } else {
        return NULL;
      }
    }
  }
  if (!push || !pop || push_enter == pop_enter || push->block != b ||
      pop->block != b)
    return NULL;
  eddy_op_t *lc1 =
      frame_loopcond(b, eddy_ir_op_attr(push_enter, "frame_name"));
  eddy_op_t *lc2 = frame_loopcond(b, eddy_ir_op_attr(pop_enter, "frame_name"));
  if (!lc1 || !lc2)
    return NULL;
  // Forward: push onto the loop value.
  eddy_value_t *cur = NULL, *fwd_exit = NULL, *bwd_exit = NULL;
  eddy_op_t *nx = NULL;
  EDDY_RETURN_IF_ERROR(thread_frame(ctx, b, push_enter,
                                    &stack->results[0], lc1, &cur, &nx,
                                    &fwd_exit));
  eddy_builder_t bb;
  eddy_ir_builder_init(&bb, ctx);
  eddy_ir_builder_set_after(&bb, push);
  eddy_value_t *pops[2] = {cur, eddy_ir_op_operand(push, 1)};
  const eddy_type_t *lt = stack->results[0].type;
  eddy_named_attr_t da = eddy_ir_named_attr(
      ctx, "element_dtype", eddy_ir_op_attr(stack, "elem_type"));
  eddy_op_t *np = NULL;
  EDDY_RETURN_IF_ERROR(make(&bb, "tf.TensorListPushBack", pops, 2, &da, 1,
                            &lt, 1, push->loc, &np));
  eddy_ir_op_set_operand(nx, 0, eddy_ir_op_result(np, 0));
  // The push's result is the pushed value.
  eddy_ir_value_replace_all_uses(&push->results[0], eddy_ir_op_operand(push, 1));
  // Backward: pop from the loop value that starts at the forward exit.
  EDDY_RETURN_IF_ERROR(thread_frame(ctx, b, pop_enter, fwd_exit, lc2, &cur,
                                    &nx, &bwd_exit));
  (void)bwd_exit;
  eddy_ir_builder_set_after(&bb, pop);
  eddy_value_t *shape = NULL;
  eddy_op_t *c = NULL;
  int32_t m1 = -1;
  const eddy_type_t *it = eddy_ir_scalar_type_get(ctx, EDDY_DT_I32);
  eddy_named_attr_t ca = eddy_ir_named_attr(
      ctx, "value", eddy_ir_dense_attr_get(ctx, it, &m1, sizeof m1));
  EDDY_RETURN_IF_ERROR(make(&bb, "tf.Const", NULL, 0, &ca, 1, &it, 1,
                            pop->loc, &c));
  shape = eddy_ir_op_result(c, 0);
  eddy_value_t *qops[2] = {cur, shape};
  const eddy_type_t *qt[2] = {lt, pop->results[0].type};
  eddy_op_t *nq = NULL;
  EDDY_RETURN_IF_ERROR(make(&bb, "tf.TensorListPopBack", qops, 2, &da, 1, qt,
                            2, pop->loc, &nq));
  eddy_ir_op_set_operand(nx, 0, eddy_ir_op_result(nq, 0));
  eddy_ir_value_replace_all_uses(&pop->results[0], eddy_ir_op_result(nq, 1));
  // The old push and pop go; their handles' Enters die with them.
  eddy_ir_op_set_operands(push, NULL, 0);
  eddy_ir_op_set_operands(pop, NULL, 0);
  // A token of the push/pop (an ordering edge) now waits on the new op.
  if (eddy_ir_value_has_uses(&push->results[0]) ||
      eddy_ir_value_has_uses(&pop->results[0]))
    return eddy_status_create(EDDY_ERR_INTERNAL,
                              "a stack push or pop is still used");
  eddy_ir_op_erase(push);
  eddy_ir_op_erase(pop);
  *done = true;
  return NULL;
}

eddy_status_t eddy_tfl_thread_stacks(eddy_ctx_t *ctx, eddy_block_t *b) {
  for (eddy_op_t *op = b->first; op; op = op->next) {
    if (!is(op, "tf.StackV2"))
      continue;
    bool done = false;
    EDDY_RETURN_IF_ERROR(thread_stack(ctx, b, op, &done));
  }
  return NULL;
}

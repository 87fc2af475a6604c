/// functionalize, second step: v1 stacks become loop values.
///
/// tf.gradients of a v1 while_loop saves forward values on a stack: a
/// StackV2 made before the loops, entered as a constant into the forward
/// frame (StackPushV2 there) and into the backward frame (StackPopV2
/// there). The pushes and pops are ordered by control edges only. To give
/// them SSA form, the stack becomes a loop value of each frame, built from
/// the same v1 primitives functionalize then raises: per frame
/// Enter -> Merge -> Switch on the frame's LoopCond, whose true side goes
/// on inward and whose NextIteration takes the list coming back out, and
/// an Exit; per cond (a push or pop in a branch: its handle goes through a
/// Switch on the cond's predicate) that Switch switches the list, and a new
/// Merge joins the branch's new list with the other branch's untouched one.
/// The push becomes a TensorListPushBack, the pop a TensorListPopBack on
/// the list that starts from the push side's outermost Exit. Handled: one
/// push and one pop per stack, each reached through Enters and Switches.
/// Other stacks are left as they are (legalize-tf reports StackPushV2 /
/// StackPopV2, naming the node).
///
/// Two shapes come from a loop inside a cond ("Implementation of Control
/// Flow in TensorFlow": the gradient of a cond is a cond on the same
/// predicate, built around the gradient of the loop). The pop is guarded
/// by a Switch on the cond's predicate entered into the gradient frame:
/// as a level it is moved out of that frame, next to the predicate (and
/// dropped when the handle already went through a Switch on it there), so
/// that the gradient frame lies inside the branch instead of holding one.
/// And the push and the pop may share the Switch that brings the stack
/// into the branch: the pop side then gets a Switch of its own, of the
/// list the forward cond joins. Once stacks are values, the ControlTriggers
/// that ordered their pushes and pops (f_sync, b_sync) are dropped.
#include "lower/tf/tf_lower_internal.h"

#include <stdlib.h>
#include <string.h>

/// The LoopCond of the frame an Enter belongs to: the one driving the
/// Switch of a Merge of an Enter with the same frame_name.
static eddy_op_t *frame_loopcond(eddy_block_t *b, const eddy_attr_t *frame) {
  for (eddy_op_t *op = b->first; op; op = op->next) {
    if (!tfl_is(op, "tf.Switch"))
      continue;
    eddy_op_t *lc = eddy_ir_op_operand(op, 1)->def;
    eddy_op_t *m = eddy_ir_op_operand(op, 0)->def;
    if (!tfl_is(lc, "tf.LoopCond") || !tfl_is(m, "tf.Merge"))
      continue;
    for (uint32_t i = 0; i < m->num_operands; i++) {
      eddy_op_t *e = eddy_ir_op_operand(m, i)->def;
      if (tfl_is(e, "tf.Enter") && eddy_ir_op_attr(e, "frame_name") == frame)
        return lc;
    }
  }
  return NULL;
}

eddy_status_t eddy_tfl_make(eddy_builder_t *bb, const char *name,
                            eddy_value_t *const *ops, size_t n,
                            const eddy_named_attr_t *attrs, size_t na,
                            const eddy_type_t *const *types, size_t nt,
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
      eddy_ir_named_attr(ctx, "is_constant",
                         eddy_ir_bool_attr_get(ctx, false))};
  eddy_op_t *e = NULL, *m = NULL, *sw = NULL, *nx = NULL, *x = NULL;
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_make(&bb, "tf.Enter", &init, 1, ea, 2, &lt, 1, enter->loc, &e));
  // The Merge must come after the LoopCond's Switches' inputs; putting it
  // right before the LoopCond's first Switch user keeps the order valid.
  eddy_op_t *at = lc->next ? lc->next : lc;
  eddy_ir_builder_set_before(&bb, at);
  eddy_value_t *mops[2] = {eddy_ir_op_result(e, 0), eddy_ir_op_result(e, 0)};
  const eddy_type_t *mt[2] = {lt, eddy_ir_scalar_type_get(ctx, EDDY_DT_I32)};
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_make(&bb, "tf.Merge", mops, 2, NULL, 0, mt, 2, enter->loc, &m));
  eddy_value_t *sops[2] = {eddy_ir_op_result(m, 0), eddy_ir_op_result(lc, 0)};
  const eddy_type_t *st[2] = {lt, lt};
  EDDY_RETURN_IF_ERROR(eddy_tfl_make(&bb, "tf.Switch", sops, 2, NULL, 0, st, 2,
                                     enter->loc, &sw));
  eddy_value_t *f = eddy_ir_op_result(sw, 0);
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_make(&bb, "tf.Exit", &f, 1, NULL, 0, &lt, 1, enter->loc, &x));
  // The NextIteration goes at the end of the block; its operand is set by
  // the caller once the push or pop exists.
  eddy_op_t *last = eddy_ir_block_terminator(b);
  eddy_ir_builder_set_before(&bb, last);
  eddy_value_t *t = eddy_ir_op_result(sw, 1);
  EDDY_RETURN_IF_ERROR(eddy_tfl_make(&bb, "tf.NextIteration", &t, 1, NULL, 0,
                                     &lt, 1, enter->loc, &nx));
  eddy_ir_op_set_operand(m, 1, eddy_ir_op_result(nx, 0));
  *cur = eddy_ir_op_result(sw, 1);
  *next_op = nx;
  *exit_out = eddy_ir_op_result(x, 0);
  return NULL;
}

/// One level between a stack and its push or pop: an Enter into a loop
/// frame, or a Switch of a cond (output k taken). A Switch level with no op
/// yet is made by descend(), on `pred`.
typedef struct level {
  eddy_op_t *op;
  uint32_t k;
  eddy_value_t *pred; ///< a Switch to make: its predicate
  eddy_op_t *nx;      ///< frame: the NextIteration made
  eddy_value_t *exit; ///< frame: the Exit made
} level_t;

enum { MAX_LEVELS = 8 };

static bool is_switch_level(const level_t *l) {
  return l->op ? tfl_is(l->op, "tf.Switch") : l->pred != NULL;
}

static eddy_value_t *level_pred(const level_t *l) {
  return l->op ? eddy_ir_op_operand(l->op, 1) : l->pred;
}

/// v without the Identity and df.after ops that pass it on.
static eddy_value_t *skip_ids(eddy_value_t *v) {
  for (int i = 0; i < 64 && v->def &&
                  (tfl_is(v->def, "tf.Identity") || tfl_is(v->def, "df.after"));
       i++)
    v = eddy_ir_op_operand(v->def, 0);
  return v;
}

/// The value a cond's predicate tests: without Identity, df.after and the
/// Enters that bring it into inner frames.
static eddy_value_t *pred_root(eddy_value_t *v) {
  for (int i = 0; i < 64; i++) {
    v = skip_ids(v);
    if (!v->def || !tfl_is(v->def, "tf.Enter"))
      break;
    v = eddy_ir_op_operand(v->def, 0);
  }
  return v;
}

/// A Switch level whose predicate is entered into the frames around it
/// (TensorFlow guards a pop in a gradient frame that lies in a branch of
/// a cond with a Switch on that cond's predicate) moves out past the Enter
/// levels of those frames, next to the predicate itself, and is dropped
/// when the level before it already takes the same side of a Switch on the
/// same predicate. The Switches so replaced go to guards[*ng] (erased once
/// unused). Returns the new number of levels.
static size_t hoist_guards(level_t *lv, size_t n, eddy_op_t **guards,
                           size_t *ng) {
  for (size_t i = 0; i < n; i++) {
    eddy_op_t *sw = lv[i].op;
    if (!sw || !tfl_is(sw, "tf.Switch") || *ng == MAX_LEVELS ||
        eddy_ir_value_has_uses(&sw->results[1 - lv[i].k]))
      continue;
    // The predicate's Enters, innermost first, are those of the levels
    // before the Switch.
    eddy_value_t *p = skip_ids(eddy_ir_op_operand(sw, 1));
    size_t j = i;
    bool ok = true, any = false;
    while (ok && p->def && tfl_is(p->def, "tf.Enter")) {
      while (j > 0 && !tfl_is(lv[j - 1].op, "tf.Enter"))
        j--;
      ok = j > 0 && eddy_ir_op_attr(lv[j - 1].op, "frame_name") ==
                        eddy_ir_op_attr(p->def, "frame_name");
      if (ok) {
        j--;
        p = skip_ids(eddy_ir_op_operand(p->def, 0));
        any = true;
      }
    }
    if (!ok || !any)
      continue;
    level_t moved = {NULL, lv[i].k, p, NULL, NULL};
    guards[(*ng)++] = sw;
    memmove(&lv[j + 1], &lv[j], (i - j) * sizeof *lv);
    if (j > 0 && is_switch_level(&lv[j - 1]) && lv[j - 1].k == moved.k &&
        pred_root(level_pred(&lv[j - 1])) == pred_root(p)) {
      memmove(&lv[j], &lv[j + 1], (n - 1 - j) * sizeof *lv);
      n--;
      i--; // the level now at i has not been looked at
    } else {
      lv[j] = moved;
    }
  }
  return n;
}

/// A Switch level whose predicate is computed inside a branch of another
/// cond lies in that branch too, though the handle need not go through a
/// Switch on that cond's predicate: TensorFlow guards the pop of a cond
/// nested in a cond, in a gradient frame, by a Switch on the inner
/// predicate alone (popped in the outer branch, it is dead when the outer
/// branch is not taken). As a list, the value must come out of both conds:
/// a Switch level on the outer predicate, the same side, goes before the
/// level, unless a level since the frame's Enter already takes it; outer
/// conds of that one in turn. *n grows; false when the levels would
/// overflow.
static bool enclose_levels(level_t *lv, size_t *n) {
  for (size_t i = 0; i < *n; i++) {
    if (!is_switch_level(&lv[i]))
      continue;
    eddy_value_t *outer = NULL;
    int side = 0;
    if (!eddy_tfl_branch_of(level_pred(&lv[i]), &outer, &side))
      continue;
    bool taken = false;
    for (size_t j = i; j-- > 0 && is_switch_level(&lv[j]) && !taken;)
      taken = pred_root(level_pred(&lv[j])) == pred_root(outer);
    if (taken)
      continue;
    if (*n == MAX_LEVELS)
      return false;
    memmove(&lv[i + 1], &lv[i], (*n - i) * sizeof *lv);
    lv[i] = (level_t){NULL, (uint32_t)side, outer, NULL, NULL};
    (*n)++;
    i--; // the new level may lie in a cond of its own
  }
  return true;
}

/// The levels, outermost first, through which a push or pop reaches its
/// stack (looking through df.after); 0 when the handle comes any other way.
static size_t chain_of(eddy_op_t *user, eddy_op_t *stack, level_t *out) {
  level_t rev[MAX_LEVELS];
  size_t n = 0;
  eddy_value_t *v = eddy_ir_op_operand(user, 0);
  for (int i = 0; i < 64 && v->def != stack; i++) {
    while (v->def && tfl_is(v->def, "df.after"))
      v = eddy_ir_op_operand(v->def, 0);
    if (v->def == stack)
      break;
    eddy_op_t *d = v->def;
    bool sw = tfl_is(d, "tf.Switch") && d->num_operands == 2 &&
              d->num_results == 2 &&
              !tfl_is(eddy_ir_op_operand(d, 1)->def, "tf.LoopCond");
    if ((!tfl_is(d, "tf.Enter") && !sw) || n == MAX_LEVELS)
      return 0;
    rev[n++] =
        (level_t){d, sw && v == &d->results[1] ? 1u : 0u, NULL, NULL, NULL};
    v = eddy_ir_op_operand(d, 0);
  }
  bool frame = false;
  for (size_t i = 0; i < n; i++)
    frame = frame || tfl_is(rev[i].op, "tf.Enter");
  if (v->def != stack || !frame)
    return 0;
  for (size_t i = 0; i < n; i++)
    out[i] = rev[n - 1 - i];
  return n;
}

/// The pushes and pops of a stack, through Enters, Switches and df.after;
/// false when the handle has any other use.
static bool find_push_pop(eddy_value_t *v, eddy_op_t **push, eddy_op_t **pop,
                          int depth) {
  for (eddy_use_t *u = v->uses; u; u = u->next) {
    eddy_op_t *o = u->owner;
    if (depth < 16 && u->index == 0 &&
        (tfl_is(o, "tf.Enter") || tfl_is(o, "df.after") ||
         tfl_is(o, "tf.Switch"))) {
      for (uint32_t r = 0; r < o->num_results; r++)
        if (!find_push_pop(&o->results[r], push, pop, depth + 1))
          return false;
    } else if (tfl_is(o, "tf.StackPushV2") && u->index == 0 && !*push) {
      *push = o;
    } else if (tfl_is(o, "tf.StackPopV2") && u->index == 0 && !*pop) {
      *pop = o;
    } else if (!tfl_is(o, "df.control")) {
      return false;
    }
  }
  return true;
}

static bool frames_known(eddy_block_t *b, const level_t *lv, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (lv[i].op && tfl_is(lv[i].op, "tf.Enter") &&
        !frame_loopcond(b, eddy_ir_op_attr(lv[i].op, "frame_name")))
      return false;
  return true;
}

/// Down the levels from init: each frame gets a loop value, each cond's
/// Switch now switches the list. Returns the list at the push or pop.
static eddy_status_t descend(eddy_ctx_t *ctx, eddy_block_t *b, level_t *lv,
                             size_t n, eddy_value_t *init,
                             const eddy_loc_t *loc, eddy_value_t **cur) {
  eddy_value_t *v = init;
  for (size_t i = 0; i < n; i++) {
    if (!lv[i].op) { // a Switch of its own; eddy_tfl_block_sort places it
      eddy_builder_t bb;
      eddy_ir_builder_init(&bb, ctx);
      eddy_ir_builder_set_before(&bb, eddy_ir_block_terminator(b));
      eddy_value_t *ops[2] = {v, lv[i].pred};
      const eddy_type_t *st[2] = {v->type, v->type};
      EDDY_RETURN_IF_ERROR(eddy_tfl_make(&bb, "tf.Switch", ops, 2, NULL, 0, st,
                                         2, loc, &lv[i].op));
    }
    if (tfl_is(lv[i].op, "tf.Switch")) {
      eddy_ir_op_set_operand(lv[i].op, 0, v);
      v = &lv[i].op->results[lv[i].k];
      continue;
    }
    eddy_op_t *lc = frame_loopcond(b, eddy_ir_op_attr(lv[i].op, "frame_name"));
    EDDY_RETURN_IF_ERROR(
        thread_frame(ctx, b, lv[i].op, v, lc, &v, &lv[i].nx, &lv[i].exit));
  }
  *cur = v;
  return NULL;
}

/// Back up from `out`, the list after the push or pop (made by `after`):
/// a cond joins it with the Switch's other output in a Merge, a frame
/// makes it the next iteration and goes on with its Exit. *result is the
/// list after the outermost level.
static eddy_status_t ascend(eddy_ctx_t *ctx, level_t *lv, size_t n,
                            eddy_value_t *out, eddy_op_t *after,
                            eddy_value_t **result) {
  eddy_builder_t bb;
  eddy_ir_builder_init(&bb, ctx);
  for (size_t i = n; i-- > 0;) {
    if (tfl_is(lv[i].op, "tf.Enter")) {
      eddy_ir_op_set_operand(lv[i].nx, 0, out);
      out = lv[i].exit;
      continue;
    }
    eddy_op_t *sw = lv[i].op, *m = NULL;
    eddy_ir_builder_set_after(&bb, after);
    eddy_value_t *ins[2] = {out, &sw->results[1 - lv[i].k]};
    const eddy_type_t *mt[2] = {out->type,
                                eddy_ir_scalar_type_get(ctx, EDDY_DT_I32)};
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_make(&bb, "tf.Merge", ins, 2, NULL, 0, mt, 2, sw->loc, &m));
    after = m;
    out = &m->results[0];
  }
  *result = out;
  return NULL;
}

/// The ControlTriggers of stacks (TensorFlow's f_sync and b_sync: a push
/// or pop in a cond's branch, or an inner loop's end, must happen before
/// the loop's next iteration) order nothing once the stacks are values:
/// each goes, with the control edges to and from it.
static void drop_stack_syncs(eddy_block_t *b) {
  size_t n = 0;
  for (eddy_op_t *op = b->first; op; op = op->next)
    n += tfl_is(op, "tf.ControlTrigger");
  eddy_op_t **syncs = n ? malloc(n * sizeof *syncs) : NULL;
  if (!syncs)
    return; // nothing to drop, or no memory to do it: the syncs stay
  n = 0;
  for (eddy_op_t *op = b->first; op; op = op->next) {
    if (!tfl_is(op, "tf.ControlTrigger") || op->num_results != 1)
      continue;
    bool only_tokens = true;
    for (eddy_use_t *u = op->results[0].uses; u; u = u->next)
      only_tokens =
          only_tokens && ((tfl_is(u->owner, "df.after") && u->index > 0) ||
                          tfl_is(u->owner, "df.control"));
    if (only_tokens)
      syncs[n++] = op;
  }
  for (size_t i = 0; i < n; i++) {
    eddy_op_t *op = syncs[i];
    while (op->results[0].uses)
      eddy_tfl_drop_token_use(op->results[0].uses->owner,
                              op->results[0].uses->index, 0);
    for (bool last = false; !last;) {
      uint32_t k = op->num_operands;
      if (k == 0) {
        eddy_ir_op_erase(op);
        break;
      }
      eddy_op_t *d = eddy_ir_op_operand(op, k - 1)->def;
      last = k == 1;
      eddy_tfl_drop_token_use(op, k - 1, 0); // the last one erases op
      if (d && tfl_is(d, "df.control") &&
          !eddy_ir_value_has_uses(&d->results[0]))
        eddy_ir_op_erase(d);
    }
  }
  free(syncs);
}

/// Erases the unused Enter / Switch / df.after chain that led to a removed
/// op.
static void erase_dead_chain(eddy_value_t *v, eddy_op_t *stack) {
  while (v->def && v->def != stack &&
         (tfl_is(v->def, "tf.Enter") || tfl_is(v->def, "df.after"))) {
    eddy_op_t *d = v->def;
    if (eddy_ir_value_has_uses(&d->results[0]))
      return;
    eddy_value_t *next = eddy_ir_op_operand(d, 0);
    eddy_ir_op_erase(d);
    v = next;
  }
}

/// Threads one stack when it has a shape handled here; *done tells.
static eddy_status_t thread_stack(eddy_ctx_t *ctx, eddy_block_t *b,
                                  eddy_op_t *stack, bool *done,
                                  bool *placed_anywhere) {
  *done = false;
  eddy_op_t *push = NULL, *pop = NULL;
  if (stack->num_results != 1 ||
      !find_push_pop(&stack->results[0], &push, &pop, 0) || !push || !pop ||
      push->block != b || pop->block != b || push->num_operands != 2 ||
      push->num_results != 1 || pop->num_results != 1)
    return NULL;
  level_t pl[MAX_LEVELS], ql[MAX_LEVELS];
  eddy_op_t *guards[2 * MAX_LEVELS];
  size_t ng = 0, ngp = 0;
  size_t np = chain_of(push, stack, pl);
  size_t nq = chain_of(pop, stack, ql);
  if (np == 0 || nq == 0 || !frames_known(b, pl, np) ||
      !frames_known(b, ql, nq))
    return NULL;
  np = hoist_guards(pl, np, guards, &ngp);
  nq = hoist_guards(ql, nq, guards + ngp, &ng);
  ng += ngp;
  if (!enclose_levels(pl, &np) || !enclose_levels(ql, &nq))
    return NULL;
  for (size_t i = 0; i < np; i++)
    *placed_anywhere = *placed_anywhere || !pl[i].op;
  // Push and pop may reach the stack through the same Switches into
  // branches (a loop in a cond, in a cond...): the pop side switches the
  // list the forward conds join with Switches of its own.
  for (size_t i = 0; i < np && i < nq && pl[i].op && pl[i].op == ql[i].op;
       i++) {
    if (!tfl_is(ql[i].op, "tf.Switch"))
      return NULL;
    ql[i].pred = eddy_ir_op_operand(ql[i].op, 1);
    ql[i].op = NULL;
  }
  for (size_t i = 0; i < nq; i++)
    *placed_anywhere = *placed_anywhere || !ql[i].op;
  // Forward: push onto the loop value.
  eddy_value_t *cur = NULL, *fwd_exit = NULL, *bwd_exit = NULL;
  EDDY_RETURN_IF_ERROR(
      descend(ctx, b, pl, np, &stack->results[0], push->loc, &cur));
  eddy_builder_t bb;
  eddy_ir_builder_init(&bb, ctx);
  eddy_ir_builder_set_after(&bb, push);
  eddy_value_t *pops[2] = {cur, eddy_ir_op_operand(push, 1)};
  const eddy_type_t *lt = stack->results[0].type;
  eddy_named_attr_t da = eddy_ir_named_attr(
      ctx, "element_dtype", eddy_ir_op_attr(stack, "elem_type"));
  eddy_op_t *np_op = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_make(&bb, "tf.TensorListPushBack", pops, 2, &da,
                                     1, &lt, 1, push->loc, &np_op));
  EDDY_RETURN_IF_ERROR(
      ascend(ctx, pl, np, eddy_ir_op_result(np_op, 0), np_op, &fwd_exit));
  // The push's result is the pushed value.
  eddy_ir_value_replace_all_uses(&push->results[0],
                                 eddy_ir_op_operand(push, 1));
  // Backward: pop from the loop value that starts at the forward exit.
  EDDY_RETURN_IF_ERROR(descend(ctx, b, ql, nq, fwd_exit, pop->loc, &cur));
  eddy_ir_builder_set_after(&bb, pop);
  eddy_op_t *c = NULL;
  int32_t m1 = -1;
  const eddy_type_t *it = eddy_ir_scalar_type_get(ctx, EDDY_DT_I32);
  eddy_named_attr_t ca = eddy_ir_named_attr(
      ctx, "value", eddy_ir_dense_attr_get(ctx, it, &m1, sizeof m1));
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_make(&bb, "tf.Const", NULL, 0, &ca, 1, &it, 1, pop->loc, &c));
  eddy_value_t *qops[2] = {cur, eddy_ir_op_result(c, 0)};
  const eddy_type_t *qt[2] = {lt, pop->results[0].type};
  eddy_op_t *nq_op = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_make(&bb, "tf.TensorListPopBack", qops, 2, &da,
                                     1, qt, 2, pop->loc, &nq_op));
  EDDY_RETURN_IF_ERROR(
      ascend(ctx, ql, nq, eddy_ir_op_result(nq_op, 0), nq_op, &bwd_exit));
  (void)bwd_exit;
  eddy_ir_value_replace_all_uses(&pop->results[0], eddy_ir_op_result(nq_op, 1));
  // The old push and pop go, and the Enters that led to them.
  eddy_value_t *ph = eddy_ir_op_operand(push, 0);
  eddy_value_t *qh = eddy_ir_op_operand(pop, 0);
  eddy_ir_op_set_operands(push, NULL, 0);
  eddy_ir_op_set_operands(pop, NULL, 0);
  if (eddy_ir_value_has_uses(&push->results[0]) ||
      eddy_ir_value_has_uses(&pop->results[0]))
    return eddy_status_create(EDDY_ERR_INTERNAL,
                              "a stack push or pop is still used");
  eddy_ir_op_erase(push);
  eddy_ir_op_erase(pop);
  erase_dead_chain(ph, stack);
  erase_dead_chain(qh, stack);
  // Enters whose Switch now takes the loop value.
  for (size_t i = np; i-- > 0;)
    if (tfl_is(pl[i].op, "tf.Enter") && pl[i].op->block &&
        !eddy_ir_value_has_uses(&pl[i].op->results[0]))
      erase_dead_chain(&pl[i].op->results[0], stack);
  for (size_t i = nq; i-- > 0;)
    if (tfl_is(ql[i].op, "tf.Enter") && ql[i].op->block &&
        !eddy_ir_value_has_uses(&ql[i].op->results[0]))
      erase_dead_chain(&ql[i].op->results[0], stack);
  // The guards moved out, with the Enters of their handle and predicate.
  for (size_t i = 0; i < ng; i++) {
    eddy_op_t *g = guards[i];
    if (eddy_ir_value_has_uses(&g->results[0]) ||
        eddy_ir_value_has_uses(&g->results[1]))
      continue;
    eddy_value_t *h = eddy_ir_op_operand(g, 0), *p = eddy_ir_op_operand(g, 1);
    eddy_ir_op_erase(g);
    erase_dead_chain(h, stack);
    erase_dead_chain(p, NULL);
  }
  *done = true;
  return NULL;
}

eddy_status_t eddy_tfl_thread_stacks(eddy_ctx_t *ctx, eddy_block_t *b) {
  bool any = false;
  for (eddy_op_t *op = b->first; op && !any; op = op->next)
    any = tfl_is(op, "tf.StackV2");
  if (!any)
    return NULL;
  drop_stack_syncs(b);
  bool placed_anywhere = false; // a Switch made at the end of the block
  for (eddy_op_t *op = b->first; op; op = op->next) {
    if (!tfl_is(op, "tf.StackV2"))
      continue;
    bool done = false;
    EDDY_RETURN_IF_ERROR(thread_stack(ctx, b, op, &done, &placed_anywhere));
  }
  if (placed_anywhere)
    eddy_tfl_block_sort(b);
  return NULL;
}

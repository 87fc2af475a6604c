/// Preparing the gradient function before it is reversed: calls are
/// inlined, and an activity analysis finds the values that depend on the
/// differentiated arguments (only those get adjoints, so nothing is stored
/// for gradients nobody asked for).
#include "autodiff/ad_internal.h"

#include "dialects/ctl/ctl.h"

/* ---- Activity ------------------------------------------------------------------ */

typedef struct ad_act_walk {
  ad_t *ad;
  bool changed;
} ad_act_walk_t;

static bool ad_mark(ad_act_walk_t *w, eddy_value_t *v) {
  if (!ad_is_diff(v->type) || eddy_ptrmap_has(&w->ad->active, v))
    return false;
  eddy_ptrmap_put(&w->ad->active, v, v);
  w->changed = true;
  return true;
}

static bool ad_is_marked(ad_t *ad, eddy_value_t *v) {
  return eddy_ptrmap_has(&ad->active, v);
}

static eddy_walk_result_t ad_act_op(eddy_op_t *op, void *user) {
  ad_act_walk_t *w = user;
  if (eddy_ir_op_is(op, "ctl.while")) {
    eddy_block_t *c = eddy_ctl_while_cond(op), *b = eddy_ctl_while_body(op);
    eddy_op_t *y = b ? eddy_ir_block_terminator(b) : NULL;
    for (uint32_t k = 0; k < op->num_results; k++) {
      bool act = ad_is_marked(w->ad, eddy_ir_op_operand(op, k)) ||
                 (y && k < y->num_operands &&
                  ad_is_marked(w->ad, eddy_ir_op_operand(y, k)));
      if (!act)
        continue;
      ad_mark(w, eddy_ir_op_result(op, k));
      if (c && k < c->num_args)
        ad_mark(w, c->args[k]);
      if (b && k < b->num_args)
        ad_mark(w, b->args[k]);
    }
    return EDDY_WALK_ADVANCE;
  }
  if (eddy_ir_op_is(op, "ctl.if")) {
    for (int r = 0; r < 2; r++) {
      eddy_block_t *b = r ? eddy_ctl_if_else(op) : eddy_ctl_if_then(op);
      eddy_op_t *y = b ? eddy_ir_block_terminator(b) : NULL;
      for (uint32_t k = 0; y && k < op->num_results && k < y->num_operands;
           k++)
        if (ad_is_marked(w->ad, eddy_ir_op_operand(y, k)))
          ad_mark(w, eddy_ir_op_result(op, k));
    }
    return EDDY_WALK_ADVANCE;
  }
  bool any = false;
  for (uint32_t i = 0; i < op->num_operands && !any; i++)
    any = ad_is_marked(w->ad, eddy_ir_op_operand(op, i));
  if (any)
    for (uint32_t k = 0; k < op->num_results; k++)
      ad_mark(w, eddy_ir_op_result(op, k));
  return EDDY_WALK_ADVANCE;
}

static eddy_walk_result_t ad_known_op(eddy_op_t *op, void *user) {
  ad_t *ad = user;
  for (uint32_t k = 0; k < op->num_results; k++)
    eddy_ptrmap_put(&ad->known, eddy_ir_op_result(op, k), op);
  for (uint32_t r = 0; r < op->num_regions; r++)
    for (eddy_block_t *b = op->regions[r].first; b; b = b->next)
      for (uint32_t i = 0; i < b->num_args; i++)
        eddy_ptrmap_put(&ad->known, b->args[i], op);
  return EDDY_WALK_ADVANCE;
}

void ad_activity(ad_t *ad, eddy_op_t *func, const size_t *wrt, size_t n) {
  ad_act_walk_t w = {.ad = ad};
  eddy_block_t *entry = eddy_ir_func_entry(func);
  for (size_t i = 0; i < n; i++)
    ad_mark(&w, entry->args[wrt[i]]);
  /* Loops feed activity back from their yields: repeat to a fixpoint. */
  do {
    w.changed = false;
    eddy_ir_walk_pre(func, ad_act_op, &w);
  } while (w.changed);
  eddy_ir_walk_pre(func, ad_known_op, ad);
  ad->active_done = true;
}

bool ad_active(ad_t *ad, const eddy_value_t *v) {
  if (!ad_is_diff(v->type))
    return false;
  if (!ad->active_done || eddy_ptrmap_has(&ad->active, v))
    return true;
  /* Values made by the transform itself (rebuilt ops) were not analysed. */
  return !eddy_ptrmap_has(&ad->known, v);
}

/* ---- Calls -------------------------------------------------------------------- */

/// Finds the first ctl.call under root.
static eddy_walk_result_t ad_find_call(eddy_op_t *op, void *user) {
  if (!eddy_ir_op_is(op, "ctl.call"))
    return EDDY_WALK_ADVANCE;
  *(eddy_op_t **)user = op;
  return EDDY_WALK_INTERRUPT;
}

/// Calls are differentiated by inlining their callees into the gradient
/// function first (the callee itself is left alone). Recursion is an error.
eddy_status_t ad_inline_calls(ad_t *ad, eddy_op_t *gf) {
  for (int n = 0;; n++) {
    eddy_op_t *call = NULL;
    eddy_ir_walk_pre(gf, ad_find_call, &call);
    if (!call)
      return NULL;
    if (n >= 1000)
      return eddy_ir_op_error(call, "autodiff: too many calls to inline "
                                    "(a recursive function?)");
    const char *name = eddy_ctl_call_callee(call);
    eddy_op_t *callee = name ? eddy_ir_module_lookup_func(ad->m, name) : NULL;
    if (!callee)
      return eddy_ir_op_error(call, "autodiff: unknown callee");
    eddy_block_t *body = eddy_ir_func_entry(callee);
    eddy_ptrmap_t map;
    eddy_ptrmap_init(&map);
    for (uint32_t i = 0; i < body->num_args && i < call->num_operands; i++)
      eddy_ptrmap_put(&map, body->args[i], eddy_ir_op_operand(call, i));
    eddy_op_t *ret = NULL;
    for (eddy_op_t *op = body->first; op; op = op->next) {
      if (eddy_ir_op_is(op, "func.return")) {
        ret = op;
        break;
      }
      eddy_ir_op_insert_before(eddy_ir_op_clone(op, &map), call);
    }
    for (uint32_t k = 0; ret && k < call->num_results; k++) {
      eddy_value_t *v = eddy_ir_op_operand(ret, k);
      eddy_value_t *m = eddy_ptrmap_get(&map, v);
      eddy_ir_value_replace_all_uses(eddy_ir_op_result(call, k), m ? m : v);
    }
    eddy_ptrmap_destroy(&map);
    if (!ret)
      return eddy_ir_op_error(call, "autodiff: callee has no func.return");
    eddy_ir_op_erase(call);
  }
}


/// Reversible loop gradients: rebuild each iteration's state by inverting
/// the iteration, as RevNet's backward pass does ("The Reversible Residual
/// Network: Backpropagation Without Storing Activations").
///
/// An additive coupling y1 = x1 + F(x2), y2 = x2 + G(y1) is inverted by
/// x2 = y2 - G(y1), x1 = y1 - F(x2). In general: a loop value k whose next
/// value is x_k + H or x_k - H (H any pure computation) is recovered as
/// y_k - H or y_k + H once H can be computed from what is known: the values
/// after the iteration, the loop values recovered so far, and values from
/// outside the loop. The loop values are solved in whatever order this
/// allows (the counter first, then x2 from y1 and the counter, then x1), a
/// value passed through unchanged is its own inverse, and a value that
/// cannot be solved so is an error naming the op that updates it: its
/// update is not additive, or its other term depends on it.
///
/// ad_checkpoint_loops then cuts the loop into single steps (the outer loop
/// over steps, marked ad.reversible, around a one-step loop marked
/// ad.remat). In the gradient, the outer gradient loop carries the state
/// after the step it reverses, from the forward loop's results, and runs
/// the inverse to get the state before it (ad_reversible_state): nothing is
/// stored per iteration. Floating-point inversion is not exact: x1 + F(x2)
/// - F(x2) may differ from x1 in its last bits, and the error of each step
/// carries into the ones before it (docs/autodiff.md measures it).
#include "autodiff/ad_internal.h"

#include "dialects/ctl/ctl.h"

#include <stdlib.h>
#include <string.h>

#define TRY EDDY_RETURN_IF_ERROR

typedef struct inv {
  ad_t *ad;
  eddy_block_t *body; ///< the forward body
  eddy_block_t *blk;  ///< the inverse being built
  eddy_value_t **got; ///< recovered loop values (in blk), per position
  eddy_ptrmap_t memo; ///< forward value -> its value in blk
  eddy_ptrmap_t fail; ///< forward values not computable this round
} inv_t;

/// The value v of the forward body computed in the inverse from what is
/// known, or NULL when it needs an unrecovered loop value (or an op with
/// regions, or one with effects).
static eddy_value_t *inv_value(inv_t *iv, eddy_value_t *v, int depth) {
  if (!ad_in_block(v, iv->body))
    return v; /* from outside the loop: read as it is */
  eddy_value_t *m = eddy_ptrmap_get(&iv->memo, v);
  if (m)
    return m;
  if (!v->def && v->block == iv->body)
    return iv->got[v->index];
  if (!v->def || v->def->block != iv->body || v->def->num_regions ||
      !eddy_ir_op_has_trait(v->def, EDDY_TRAIT_PURE) || depth > 512 ||
      eddy_ptrmap_has(&iv->fail, v))
    return NULL;
  eddy_op_t *op = v->def;
  eddy_ptrmap_t map;
  eddy_ptrmap_init(&map);
  bool ok = true;
  for (uint32_t i = 0; i < op->num_operands && ok; i++) {
    eddy_value_t *o = eddy_ir_op_operand(op, i);
    eddy_value_t *c = inv_value(iv, o, depth + 1);
    if (c)
      eddy_ptrmap_put(&map, o, c);
    ok = c != NULL;
  }
  if (!ok) {
    eddy_ptrmap_destroy(&map);
    eddy_ptrmap_put(&iv->fail, v, v);
    return NULL;
  }
  eddy_op_t *copy = eddy_ir_op_clone(op, &map);
  eddy_ptrmap_destroy(&map);
  eddy_ir_op_insert_before(copy, eddy_ir_block_terminator(iv->blk));
  for (uint32_t r = 0; r < op->num_results; r++)
    eddy_ptrmap_put(&iv->memo, eddy_ir_op_result(op, r),
                    eddy_ir_op_result(copy, r));
  return eddy_ir_op_result(copy, v->index);
}

/// Tries to recover loop value k from y = its next value; true on success.
static eddy_status_t inv_solve(inv_t *iv, uint32_t k, eddy_value_t *out_k,
                               bool *solved) {
  *solved = false;
  eddy_value_t *x = iv->body->args[k];
  eddy_value_t *y = eddy_ir_op_operand(eddy_ir_block_terminator(iv->body), k);
  if (y == x) {
    iv->got[k] = out_k;
    *solved = true;
    return NULL;
  }
  eddy_op_t *op = y->def;
  if (!op || op->block != iv->body || op->num_operands != 2 ||
      y->type != x->type)
    return NULL;
  bool add = eddy_ir_op_is(op, "core.add"), sub = eddy_ir_op_is(op, "core.sub");
  eddy_value_t *a = eddy_ir_op_operand(op, 0), *b = eddy_ir_op_operand(op, 1);
  eddy_value_t *term = NULL;
  const char *undo = NULL;
  if ((add || sub) && a == x && b != x) {
    term = b; /* y = x + h: x = y - h;  y = x - h: x = y + h */
    undo = add ? "core.sub" : "core.add";
  } else if (add && b == x && a != x) {
    term = a;
    undo = "core.sub";
  }
  if (!term)
    return NULL;
  eddy_value_t *h = inv_value(iv, term, 0);
  if (!h)
    return NULL;
  eddy_builder_t bld;
  eddy_ir_builder_init(&bld, iv->ad->ctx);
  eddy_ir_builder_set_before(&bld, eddy_ir_block_terminator(iv->blk));
  eddy_value_t *ops[2] = {out_k, h};
  TRY(eddy_ir_build_simple(&bld, undo, ops, 2, NULL, 0, &iv->got[k]));
  if (iv->got[k]->type != x->type)
    return eddy_ir_op_error(op, "reversible: the inverse of this update has "
                                "another type than the loop value");
  *solved = true;
  return NULL;
}

/// Loop value k's update is x_k + h, h + x_k or x_k - h.
static bool inv_is_coupling(const inv_t *iv, uint32_t k) {
  eddy_value_t *x = iv->body->args[k];
  eddy_value_t *y = eddy_ir_op_operand(eddy_ir_block_terminator(iv->body), k);
  eddy_op_t *op = y->def;
  if (!op || op->block != iv->body || op->num_operands != 2)
    return false;
  eddy_value_t *a = eddy_ir_op_operand(op, 0), *b = eddy_ir_op_operand(op, 1);
  return (eddy_ir_op_is(op, "core.add") && (a == x || b == x)) ||
         (eddy_ir_op_is(op, "core.sub") && a == x);
}

/// Why loop value k could not be recovered, as an error at its update.
static eddy_status_t inv_refuse(inv_t *iv, eddy_op_t *w, uint32_t k) {
  eddy_value_t *y = eddy_ir_op_operand(eddy_ir_block_terminator(iv->body), k);
  eddy_op_t *op = y->def;
  if (!op || op->block != iv->body)
    return eddy_ir_op_error(
        w, "reversible: loop value #%u becomes another loop value or a value "
           "from outside the loop, which does not determine it",
        k);
  if (inv_is_coupling(iv, k))
    return eddy_ir_op_error(
        op, "reversible: loop value #%u is updated by adding a term that "
            "depends on it (or on a value not recoverable before it), so the "
            "update cannot be inverted",
        k);
  return eddy_ir_op_error(
      op, "reversible: loop value #%u is updated by this op, not by adding "
          "or subtracting a term computed without it, so the update cannot "
          "be inverted",
      k);
}

eddy_status_t ad_reversible_inverse(ad_t *ad, eddy_op_t *w,
                                    eddy_block_t **out_block) {
  *out_block = NULL;
  eddy_block_t *body = eddy_ctl_while_body(w);
  eddy_op_t *y = body ? eddy_ir_block_terminator(body) : NULL;
  uint32_t n = w->num_results;
  if (!y || y->num_operands != n || body->num_args != n)
    return eddy_ir_op_error(w, "reversible: malformed loop");
  inv_t iv = {.ad = ad, .body = body};
  TRY(ad_scratch_block(ad, &iv.blk));
  for (uint32_t k = 0; k < n; k++)
    eddy_ir_block_add_arg(iv.blk, body->args[k]->type);
  iv.got = calloc(n ? n : 1, sizeof(*iv.got));
  if (!iv.got)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  eddy_ptrmap_init(&iv.memo);
  eddy_ptrmap_init(&iv.fail);
  /* The values after the iteration are known: a next value that other ops
     of the body read (y1 in G(y1)) is read from the block's arguments. */
  for (uint32_t k = 0; k < n; k++) {
    eddy_value_t *next = eddy_ir_op_operand(y, k);
    if (ad_in_block(next, body) && next->def)
      eddy_ptrmap_put(&iv.memo, next, iv.blk->args[k]);
  }
  eddy_builder_t b;
  eddy_ir_builder_init(&b, ad->ctx);
  eddy_ir_builder_set_end(&b, iv.blk);
  eddy_status_t st = eddy_ctl_build_yield(&b, iv.blk->args, n, NULL);
  uint32_t left = n;
  bool progress = true;
  while (!st && left && progress) {
    progress = false;
    eddy_ptrmap_clear(&iv.fail);
    for (uint32_t k = 0; k < n && !st; k++) {
      if (iv.got[k])
        continue;
      bool solved = false;
      st = inv_solve(&iv, k, iv.blk->args[k], &solved);
      if (solved) {
        left--;
        progress = true;
      }
    }
  }
  /* Name an update that is no coupling first: the couplings left may only
     wait for the value it updates. */
  for (uint32_t k = 0; k < n && !st && left; k++)
    if (!iv.got[k] && !inv_is_coupling(&iv, k))
      st = inv_refuse(&iv, w, k);
  for (uint32_t k = 0; k < n && !st && left; k++)
    if (!iv.got[k])
      st = inv_refuse(&iv, w, k);
  if (!st)
    eddy_ir_op_set_operands(eddy_ir_block_terminator(iv.blk), iv.got, n);
  eddy_ptrmap_destroy(&iv.memo);
  eddy_ptrmap_destroy(&iv.fail);
  free(iv.got);
  if (!st)
    *out_block = iv.blk;
  return st;
}

eddy_status_t ad_reversible_state(ad_scope_t *s) {
  ad_t *ad = s->ad;
  eddy_op_t *w = s->fwd_op;
  eddy_block_t *fb = s->fwd, *inv = eddy_ptrmap_get(&ad->inverse, w);
  size_t n = fb->num_args;
  eddy_op_t *iy = inv ? eddy_ir_block_terminator(inv) : NULL;
  /* The loop over steps has the original loop values and the segment
     length, which the inverse does not need. */
  if (!iy || iy->num_operands + 1 != n)
    return eddy_ir_op_error(w, "autodiff: malformed reversible loop");
  size_t *comp = malloc(n * sizeof(*comp));
  eddy_value_t **fixed = calloc(n, sizeof(*fixed));
  eddy_value_t **after = calloc(n, sizeof(*after));
  eddy_status_t st = NULL;
  if (!comp || !fixed || !after)
    st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  size_t nc = 0;
  if (!st)
    st = ad_loop_state(s, comp, &nc, fixed);
  /* The state after the step reversed: from the forward loop's results. */
  for (size_t c = 0; c < nc && !st; c++)
    after[comp[c]] = ad_rev_arg(s, fb->args[comp[c]]->type, AD_REV_FINAL,
                                eddy_ir_op_result(w, comp[c]));
  eddy_ptrmap_t map;
  eddy_ptrmap_init(&map);
  for (uint32_t k = 0; k < inv->num_args && !st; k++)
    eddy_ptrmap_put(&map, inv->args[k], after[k] ? after[k] : fixed[k]);
  for (eddy_op_t *op = inv->first; op && op != iy && !st; op = op->next)
    st = ad_map_free(s, op, inv, &map);
  eddy_op_t *first = s->bwd->first;
  for (eddy_op_t *op = inv->first; op && op != iy && !st; op = op->next) {
    eddy_op_t *copy = eddy_ir_op_clone(op, &map);
    if (first)
      eddy_ir_op_insert_before(copy, first);
    else
      eddy_ir_op_append(copy, s->bwd);
  }
  for (size_t c = 0; c < nc && !st; c++) {
    eddy_value_t *v = eddy_ir_op_operand(iy, comp[c]);
    eddy_value_t *before = eddy_ptrmap_get(&map, v);
    if (!before)
      before = v; /* an argument of the inverse is in the map; else outside */
    ad_rev_set_next(s, after[comp[c]], before);
    eddy_ptrmap_put(&s->vis, fb->args[comp[c]], before);
  }
  for (size_t k = 0; k < n && !st; k++)
    if (fixed[k])
      eddy_ptrmap_put(&s->vis, fb->args[k], fixed[k]);
  eddy_ptrmap_destroy(&map);
  free(comp);
  free(fixed);
  free(after);
  return st;
}

/// functionalize of df frames: the patterns to-dataflow adds that the
/// shared raising (functionalize.c) does not know, undone so that
/// functionalize(to-dataflow(f)) prints as f (docs/lowering.md, "Round
/// trip"):
/// - control pivots: a constant c of a region comes out as c at function
///   level and `df.after(c, token)` in the frame; raising clones the
///   df.after into the region, and here it becomes a clone of c again (c
///   itself is erased once unused). Tokens left without users go too.
/// - the maximum_iterations counter: one more loop value entering at 0,
///   `add(counter, after(1))` in the body and `and(lt(counter, after(M)),
///   p)` as the predicate.
#include "lower/tf/tf_lower_internal.h"

#include <stdlib.h>

/// The scalar integer constant v holds (through df.after when `after`).
static bool const_int(eddy_value_t *v, bool after, int64_t *out) {
  eddy_op_t *d = v->def;
  if (after && !tfl_is(d, "df.after"))
    return false;
  // An enclosing if or loop may have pivoted it again.
  while (tfl_is(d, "df.after"))
    d = eddy_ir_op_operand(d, 0)->def;
  if (!tfl_is(d, "core.constant") || d->num_operands != 0)
    return false;
  const eddy_attr_t *a = eddy_ir_op_attr(d, "value");
  const eddy_type_t *t = eddy_ir_op_result(d, 0)->type;
  if (!a || a->kind != EDDY_ATTR_DENSE || t->kind != EDDY_TYPE_TENSOR ||
      t->rank != 0 || t->dtype != EDDY_DT_I64)
    return false;
  *out = eddy_ir_dense_attr_i64(a, 0);
  return true;
}

bool eddy_tfl_df_counter(eddy_op_t *loopcond, eddy_op_t *enter,
                         eddy_op_t *merge, eddy_op_t *sw, eddy_op_t *next,
                         eddy_op_t *exit, int64_t *max, eddy_value_t **pred,
                         eddy_op_t **skip) {
  int64_t k = -1;
  if (exit || !sw || !const_int(eddy_ir_op_operand(enter, 0), false, &k) ||
      k != 0)
    return false;
  eddy_op_t *add = eddy_ir_op_operand(next, 0)->def;
  if (!tfl_is(add, "core.add") ||
      eddy_ir_op_operand(add, 0) != &sw->results[1] ||
      !const_int(eddy_ir_op_operand(add, 1), true, &k) || k != 1)
    return false;
  eddy_op_t *andp = eddy_ir_op_operand(loopcond, 0)->def;
  if (!tfl_is(andp, "core.and"))
    return false;
  eddy_op_t *lt = eddy_ir_op_operand(andp, 0)->def;
  if (!tfl_is(lt, "core.lt") ||
      eddy_ir_op_operand(lt, 0) != &merge->results[0] ||
      !const_int(eddy_ir_op_operand(lt, 1), true, max))
    return false;
  // Nothing else may read the counter or the ops made for it.
  if (eddy_ir_value_num_uses(&andp->results[0]) != 1 ||
      eddy_ir_value_num_uses(&lt->results[0]) != 1 ||
      eddy_ir_value_num_uses(&add->results[0]) != 1 ||
      eddy_ir_value_num_uses(&sw->results[1]) != 1 ||
      eddy_ir_value_num_uses(&sw->results[0]) != 0)
    return false;
  *pred = eddy_ir_op_operand(andp, 1);
  skip[0] = andp;
  skip[1] = lt;
  skip[2] = eddy_ir_op_operand(lt, 1)->def;
  skip[3] = add;
  skip[4] = eddy_ir_op_operand(add, 1)->def;
  return true;
}

typedef struct pivots {
  eddy_op_t **afters;
  size_t n, cap;
} pivots_t;

static bool list_push(pivots_t *p, eddy_op_t *op) {
  if (p->n == p->cap) {
    size_t nc = p->cap ? p->cap * 2 : 16;
    eddy_op_t **nv = realloc(p->afters, nc * sizeof(*nv));
    if (!nv)
      return false;
    p->afters = nv;
    p->cap = nc;
  }
  p->afters[p->n++] = op;
  return true;
}

static eddy_walk_result_t collect_after(eddy_op_t *op, void *user) {
  pivots_t *p = user;
  if (!tfl_is(op, "df.after") || op->num_operands != 2)
    return EDDY_WALK_ADVANCE;
  return list_push(p, op) ? EDDY_WALK_ADVANCE : EDDY_WALK_INTERRUPT;
}

static eddy_walk_result_t collect_tokens(eddy_op_t *op, void *user) {
  pivots_t *p = user;
  if (!tfl_is(op, "df.control"))
    return EDDY_WALK_ADVANCE;
  return list_push(p, op) ? EDDY_WALK_ADVANCE : EDDY_WALK_INTERRUPT;
}

eddy_status_t eddy_tfl_df_unpivot(eddy_op_t *func) {
  pivots_t p = {0}, consts = {0};
  eddy_ptrmap_t seen;
  eddy_ptrmap_init(&seen);
  eddy_status_t st = NULL;
  if (eddy_ir_walk_pre(func, collect_after, &p) == EDDY_WALK_INTERRUPT)
    goto oom;
  for (size_t i = 0; i < p.n; i++) {
    eddy_op_t *after = p.afters[i];
    eddy_op_t *c = eddy_ir_op_operand(after, 0)->def;
    if (!c || c->num_operands != 0 || c->num_regions != 0 ||
        c->num_results != 1)
      continue; // not a pivoted constant
    if (!eddy_ptrmap_has(&seen, c)) {
      eddy_ptrmap_put(&seen, c, c);
      if (!list_push(&consts, c))
        goto oom;
    }
    eddy_ptrmap_t cm;
    eddy_ptrmap_init(&cm);
    eddy_op_t *copy = eddy_ir_op_clone(c, &cm);
    eddy_ptrmap_destroy(&cm);
    eddy_ir_op_insert_before(copy, after);
    eddy_ir_value_replace_all_uses(eddy_ir_op_result(after, 0),
                                   eddy_ir_op_result(copy, 0));
    eddy_ir_op_erase(after);
  }
  // The constants that only fed pivots.
  for (size_t i = 0; i < consts.n; i++)
    if (!eddy_ir_value_has_uses(eddy_ir_op_result(consts.afters[i], 0)))
      eddy_ir_op_erase(consts.afters[i]);
  // Tokens nothing waits on any more (pivots, raised constructs' tokens).
  p.n = 0;
  if (eddy_ir_walk_pre(func, collect_tokens, &p) == EDDY_WALK_INTERRUPT)
    goto oom;
  for (size_t i = p.n; i-- > 0;)
    if (!eddy_ir_value_has_uses(eddy_ir_op_result(p.afters[i], 0)))
      eddy_ir_op_erase(p.afters[i]);
  goto done;
oom:
  st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
done:
  free(p.afters);
  free(consts.afters);
  eddy_ptrmap_destroy(&seen);
  return st;
}

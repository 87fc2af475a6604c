/// Helpers shared by the generic passes.
#include "ir/passes/pass_util.h"
#include "dialects/ctl/ctl.h"

#include <assert.h>
#include <stdlib.h>

bool eddy_passes_op_is_pure(const eddy_op_t *op) {
  return op->def && (op->def->traits & EDDY_TRAIT_PURE);
}

bool eddy_passes_op_has_used_result(const eddy_op_t *op) {
  for (uint32_t i = 0; i < op->num_results; i++)
    if (op->results[i].uses)
      return true;
  return false;
}

bool eddy_passes_regions_are_pure(const eddy_op_t *op) {
  for (uint32_t r = 0; r < op->num_regions; r++)
    for (eddy_block_t *b = op->regions[r].first; b; b = b->next)
      for (eddy_op_t *o = b->first; o; o = o->next) {
        bool term = eddy_ir_op_has_trait(o, EDDY_TRAIT_TERMINATOR);
        if (!term && !eddy_passes_op_is_pure(o) &&
            !(o->num_regions > 0 && (eddy_ir_op_is(o, "ctl.if") ||
                                     eddy_ir_op_is(o, "ctl.while"))))
          return false;
        if (!eddy_passes_regions_are_pure(o))
          return false;
      }
  return true;
}

bool eddy_passes_op_is_effect_free(const eddy_op_t *op) {
  if (eddy_ir_op_has_trait(op, EDDY_TRAIT_TERMINATOR))
    return false;
  if (op->num_regions == 0)
    return eddy_passes_op_is_pure(op);
  // Structured control flow has no effect of its own: it is effect-free
  // when its regions are.
  bool structured =
      eddy_ir_op_is(op, "ctl.if") || eddy_ir_op_is(op, "ctl.while");
  return (structured || eddy_passes_op_is_pure(op)) &&
         eddy_passes_regions_are_pure(op);
}

bool eddy_passes_op_is_dead(const eddy_op_t *op) {
  // A pure loop that might not terminate is dropped too, as MLIR and XLA
  // do: see docs/passes.md.
  return !eddy_passes_op_has_used_result(op) &&
         eddy_passes_op_is_effect_free(op);
}

static bool is_static_tensor(const eddy_type_t *t) {
  return eddy_ir_type_is_tensor(t) && eddy_ir_type_is_static(t);
}

bool eddy_passes_op_may_fail(const eddy_op_t *op) {
  if (eddy_ir_op_is(op, "core.gather"))
    return true;
  for (uint32_t i = 0; i < op->num_results; i++)
    if (!eddy_ir_type_is_tensor(op->results[i].type))
      return true;
  // Elementwise ops without broadcasting (unary math, cast, not) and shape
  // queries work on any shape.
  if ((eddy_ir_op_has_trait(op, EDDY_TRAIT_ELEMENTWISE) &&
       !eddy_ir_op_has_trait(op, EDDY_TRAIT_BROADCAST)) ||
      eddy_ir_op_is(op, "core.shape") || eddy_ir_op_is(op, "core.dim"))
    return false;
  // Otherwise the verifier checked every shape rule when the operands are
  // static; with a dynamic one the kernel checks at run time.
  for (uint32_t i = 0; i < op->num_operands; i++)
    if (!is_static_tensor(op->operands[i].value->type))
      return true;
  return false;
}

eddy_op_t *eddy_passes_value_owner(const eddy_value_t *v) {
  if (v->def)
    return v->def;
  return v->block ? eddy_ir_block_parent_op(v->block) : NULL;
}

bool eddy_passes_value_defined_outside(const eddy_value_t *v,
                                       const eddy_op_t *op) {
  eddy_op_t *owner = eddy_passes_value_owner(v);
  return !owner || !eddy_ir_op_is_ancestor(op, owner);
}

const eddy_attr_t *eddy_passes_value_const(const eddy_value_t *v) {
  if (!v->def || !eddy_ir_op_has_trait(v->def, EDDY_TRAIT_CONSTANT))
    return NULL;
  const eddy_attr_t *a = eddy_ir_op_attr(v->def, "value");
  return a && a->kind == EDDY_ATTR_DENSE ? a : NULL;
}

bool eddy_passes_value_zero(const eddy_value_t *v) {
  for (int depth = 0; depth < 16 && v->type->kind == EDDY_TYPE_TENSOR;
       depth++) {
    const eddy_attr_t *k = eddy_passes_value_const(v);
    if (k) {
      bool fl = eddy_dtype_is_float(v->type->dtype);
      int64_t n = eddy_ir_type_num_elements(k->type);
      for (int64_t i = 0; i < (k->u.dense.splat ? 1 : n); i++)
        if (fl ? eddy_ir_dense_attr_f64(k, i) != 0.0
               : eddy_ir_dense_attr_i64(k, i) != 0)
          return false;
      return true;
    }
    const eddy_op_t *d = v->def;
    if (!d)
      return false;
    if (eddy_ir_op_is(d, "core.cast") ||
        eddy_ir_op_is(d, "core.broadcast_to") ||
        eddy_ir_op_is(d, "core.reshape")) {
      v = d->operands[0].value;
      continue;
    }
    // x * 0 is 0 for integers only (inf * 0 is NaN).
    if (eddy_ir_op_is(d, "core.mul") && eddy_dtype_is_int(v->type->dtype) &&
        d->num_operands == 2) {
      if (eddy_passes_value_zero(d->operands[1].value))
        return true;
      v = d->operands[0].value;
      continue;
    }
    return false;
  }
  return false;
}

/// Loop values assumed non-negative while their loop is being proved so.
typedef struct nonneg_ctx {
  const eddy_value_t *assumed[16];
  int n;
} nonneg_ctx_t;

static bool is_int_dtype(eddy_dtype_t dt) {
  return dt == EDDY_DT_I1 || dt == EDDY_DT_I8 || dt == EDDY_DT_I32 ||
         dt == EDDY_DT_I64;
}

static bool nonneg(nonneg_ctx_t *c, const eddy_value_t *v, int depth) {
  if (depth > 32 || v->type->kind != EDDY_TYPE_TENSOR ||
      !is_int_dtype(v->type->dtype))
    return false;
  if (v->type->dtype == EDDY_DT_I1)
    return true;
  const eddy_attr_t *k = eddy_passes_value_const(v);
  if (k) {
    int64_t n = eddy_ir_type_num_elements(k->type);
    for (int64_t i = 0; i < (k->u.dense.splat ? 1 : n); i++)
      if (eddy_ir_dense_attr_i64(k, i) < 0)
        return false;
    return true;
  }
  const eddy_op_t *d = v->def;
  if (d) {
    if (eddy_ir_op_is(d, "core.dim") || eddy_ir_op_is(d, "core.shape"))
      return true;
    // Ops that only move elements.
    if (eddy_ir_op_is(d, "core.reshape") || eddy_ir_op_is(d, "core.slice") ||
        eddy_ir_op_is(d, "core.transpose") ||
        eddy_ir_op_is(d, "core.broadcast_to"))
      return d->num_operands >= 1 && nonneg(c, d->operands[0].value, depth + 1);
    if (eddy_ir_op_is(d, "core.cast")) {
      const eddy_value_t *x = d->operands[0].value;
      return x->type->kind == EDDY_TYPE_TENSOR &&
             is_int_dtype(x->type->dtype) &&
             eddy_dtype_size(x->type->dtype) <=
                 eddy_dtype_size(v->type->dtype) &&
             nonneg(c, x, depth + 1);
    }
    bool both = eddy_ir_op_is(d, "core.add") || eddy_ir_op_is(d, "core.mul") ||
                eddy_ir_op_is(d, "core.minimum");
    if (both || eddy_ir_op_is(d, "core.maximum")) {
      if (d->num_operands != 2)
        return false;
      bool a = nonneg(c, d->operands[0].value, depth + 1);
      if (!both && a)
        return true;
      bool b = nonneg(c, d->operands[1].value, depth + 1);
      return both ? a && b : b;
    }
    return false;
  }
  // A block argument: a loop value of a ctl.while.
  const eddy_block_t *blk = v->block;
  const eddy_op_t *loop = blk ? eddy_passes_value_owner(v) : NULL;
  if (!loop || !eddy_ir_op_is(loop, "ctl.while") ||
      loop->num_regions != 2 || v->index >= loop->num_operands)
    return false;
  const eddy_block_t *body = eddy_ir_region_entry(&loop->regions[1]);
  const eddy_op_t *y = body ? eddy_ir_block_terminator(body) : NULL;
  if (!y || v->index >= y->num_operands || body->num_args <= v->index)
    return false;
  const eddy_value_t *arg = body->args[v->index];
  for (int i = 0; i < c->n; i++)
    if (c->assumed[i] == arg)
      return true;
  if (c->n == 16 || !nonneg(c, loop->operands[v->index].value, depth + 1))
    return false;
  c->assumed[c->n++] = arg;
  bool ok = nonneg(c, y->operands[v->index].value, depth + 1);
  c->n--;
  return ok;
}

bool eddy_passes_value_nonneg(const eddy_value_t *v) {
  nonneg_ctx_t c = {.n = 0};
  return nonneg(&c, v, 0);
}

int64_t eddy_passes_erase_dead_in_block(eddy_block_t *b) {
  int64_t n = 0;
  eddy_op_t *op = b->last;
  while (op) {
    eddy_op_t *prev = op->prev;
    for (uint32_t r = 0; r < op->num_regions; r++)
      n += eddy_passes_erase_dead_in_region(&op->regions[r]);
    if (eddy_passes_op_is_dead(op)) {
      eddy_ir_op_erase(op);
      n++;
    }
    op = prev;
  }
  return n;
}

int64_t eddy_passes_erase_dead_in_region(eddy_region_t *r) {
  int64_t n = 0;
  for (eddy_block_t *b = r->last; b; b = b->prev)
    n += eddy_passes_erase_dead_in_block(b);
  return n;
}

eddy_status_t eddy_passes_rebuild_op(eddy_op_t *op, const bool *keep_results,
                                     const bool *keep_operands,
                                     const bool *keep_args,
                                     eddy_op_t **out_op) {
  eddy_ctx_t *ctx = op->ctx;
  size_t n = op->num_operands + op->num_results + 1;
  eddy_value_t **operands = calloc(n, sizeof *operands);
  const eddy_type_t **types = calloc(n, sizeof *types);
  if (!operands || !types) {
    free(operands);
    free(types);
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  }
  size_t num_operands = 0, num_results = 0;
  for (uint32_t i = 0; i < op->num_operands; i++)
    if (!keep_operands || keep_operands[i])
      operands[num_operands++] = eddy_ir_op_operand(op, i);
  for (uint32_t i = 0; i < op->num_results; i++)
    if (!keep_results || keep_results[i])
      types[num_results++] = op->results[i].type;
  eddy_op_state_t st = {
      .name = op->name->str,
      .operands = operands,
      .num_operands = num_operands,
      .attrs = op->attrs,
      .num_attrs = op->num_attrs,
      .result_types = types,
      .num_results = num_results,
      .num_regions = op->num_regions,
      .loc = op->loc,
  };
  eddy_op_t *nop = NULL;
  eddy_status_t s = eddy_ir_op_create(ctx, &st, &nop);
  free(operands);
  free(types);
  if (s)
    return s;
  eddy_ir_op_insert_before(nop, op);
  for (uint32_t r = 0; r < op->num_regions; r++) {
    eddy_block_t *ob = eddy_ir_region_entry(&op->regions[r]);
    if (!ob)
      continue;
    assert(ob->next == NULL && "rebuild_op handles single-block regions");
    eddy_block_t *nb = eddy_ir_region_add_block(&nop->regions[r]);
    for (uint32_t i = 0; i < ob->num_args; i++) {
      eddy_value_t *oa = ob->args[i];
      if (keep_args && !keep_args[i]) {
        assert(!oa->uses && "a dropped block argument is still used");
        continue;
      }
      eddy_value_t *na = eddy_ir_block_add_arg(nb, oa->type);
      eddy_ir_value_replace_all_uses(oa, na);
    }
    while (ob->first) {
      eddy_op_t *o = ob->first;
      eddy_ir_op_remove(o);
      eddy_ir_op_append(o, nb);
    }
  }
  size_t k = 0;
  for (uint32_t i = 0; i < op->num_results; i++) {
    if (keep_results && !keep_results[i]) {
      assert(!op->results[i].uses && "a dropped result is still used");
      continue;
    }
    eddy_ir_value_replace_all_uses(&op->results[i], &nop->results[k++]);
  }
  eddy_ir_op_erase(op);
  *out_op = nop;
  return NULL;
}

eddy_value_t *eddy_passes_loop_invariant_source(const eddy_op_t *loop,
                                                eddy_value_t *v) {
  if (eddy_passes_value_defined_outside(v, loop))
    return v;
  if (v->def || !v->block || eddy_ir_block_parent_op(v->block) != loop)
    return NULL;
  eddy_block_t *body = eddy_ir_region_entry(&loop->regions[1]);
  eddy_op_t *yield = body ? eddy_ir_block_terminator(body) : NULL;
  uint32_t i = v->index;
  if (!yield || i >= yield->num_operands || i >= body->num_args ||
      i >= loop->num_operands ||
      yield->operands[i].value != body->args[i])
    return NULL;
  return loop->operands[i].value;
}

typedef struct loop_list {
  eddy_op_t **loops;
  size_t len, cap;
  bool oom;
} loop_list_t;

static eddy_walk_result_t collect_loop(eddy_op_t *op, void *user) {
  loop_list_t *s = user;
  if (!eddy_ir_op_is(op, "ctl.while"))
    return EDDY_WALK_ADVANCE;
  if (s->len == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 16;
    eddy_op_t **l = realloc(s->loops, cap * sizeof *l);
    if (!l) {
      s->oom = true;
      return EDDY_WALK_INTERRUPT;
    }
    s->loops = l;
    s->cap = cap;
  }
  s->loops[s->len++] = op;
  return EDDY_WALK_ADVANCE;
}

eddy_status_t eddy_passes_collect_loops(eddy_module_t *m,
                                        eddy_op_t ***out_loops,
                                        size_t *out_n) {
  loop_list_t s = {0};
  for (eddy_op_t *f = eddy_ir_module_body(m)->first; f && !s.oom; f = f->next)
    eddy_ir_walk_post(f, collect_loop, &s);
  if (s.oom) {
    free(s.loops);
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  }
  *out_loops = s.loops;
  *out_n = s.len;
  return NULL;
}

eddy_status_t eddy_passes_while_add_values(eddy_op_t *loop,
                                           eddy_value_t *const *inits,
                                           size_t n, eddy_op_t **out_loop) {
  size_t old = loop->num_operands, total = old + n;
  eddy_value_t **operands = calloc(total ? total : 1, sizeof *operands);
  const eddy_type_t **types = calloc(total ? total : 1, sizeof *types);
  if (!operands || !types) {
    free(operands);
    free(types);
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  }
  for (size_t i = 0; i < old; i++) {
    operands[i] = eddy_ir_op_operand(loop, i);
    types[i] = loop->results[i].type;
  }
  for (size_t i = 0; i < n; i++) {
    operands[old + i] = inits[i];
    types[old + i] = inits[i]->type;
  }
  eddy_op_state_t st = {
      .name = loop->name->str,
      .operands = operands,
      .num_operands = total,
      .attrs = loop->attrs,
      .num_attrs = loop->num_attrs,
      .result_types = types,
      .num_results = total,
      .num_regions = loop->num_regions,
      .loc = loop->loc,
  };
  eddy_op_t *nop = NULL;
  eddy_status_t s = eddy_ir_op_create(loop->ctx, &st, &nop);
  free(operands);
  if (s) {
    free(types);
    return s;
  }
  eddy_ir_op_insert_before(nop, loop);
  for (uint32_t r = 0; r < loop->num_regions; r++) {
    eddy_block_t *ob = eddy_ir_region_entry(&loop->regions[r]);
    if (!ob)
      continue;
    assert(ob->next == NULL && "ctl.while regions have one block");
    eddy_block_t *nb = eddy_ir_region_add_block(&nop->regions[r]);
    for (uint32_t i = 0; i < ob->num_args; i++)
      eddy_ir_value_replace_all_uses(ob->args[i],
                                     eddy_ir_block_add_arg(nb, ob->args[i]->type));
    for (size_t i = 0; i < n; i++)
      eddy_ir_block_add_arg(nb, types[old + i]);
    while (ob->first) {
      eddy_op_t *o = ob->first;
      eddy_ir_op_remove(o);
      eddy_ir_op_append(o, nb);
    }
  }
  free(types);
  for (size_t i = 0; i < old; i++)
    eddy_ir_value_replace_all_uses(&loop->results[i], &nop->results[i]);
  eddy_ir_op_erase(loop);
  *out_loop = nop;
  return NULL;
}

/// v holds the integer scalar constant c.
static bool pu_is_int(const eddy_value_t *v, int64_t c) {
  const eddy_attr_t *a = eddy_passes_value_const(v);
  return a && eddy_ir_type_is_scalar(a->type) &&
         eddy_dtype_is_int(a->type->dtype) && eddy_ir_dense_attr_i64(a, 0) == c;
}

/// With v = select(lt(x, 0), add(x, n), x), TensorFlow's count from the end
/// of a negative index as legalize-tf writes `x[i]`: x; else NULL.
static eddy_value_t *pu_unwrap_negative(eddy_value_t *v) {
  const eddy_op_t *sel = v->def;
  if (!sel || !eddy_ir_op_is(sel, "core.select"))
    return NULL;
  eddy_value_t *x = sel->operands[2].value;
  const eddy_op_t *lt = sel->operands[0].value->def;
  const eddy_op_t *add = sel->operands[1].value->def;
  if (!lt || !eddy_ir_op_is(lt, "core.lt") || lt->operands[0].value != x ||
      !pu_is_int(lt->operands[1].value, 0) || !add ||
      !eddy_ir_op_is(add, "core.add") || add->operands[0].value != x)
    return NULL;
  return x;
}

/// The value the index v is computed from, through what TensorFlow's `x[t]`
/// puts between the counter and the read: reshapes between one-element
/// shapes (to [1] and back), integer casts, and the count from the end of
/// a negative index. These keep the index the counter's value wherever the
/// counter is not negative; where it is, the rewrite stays exact (the loop
/// reads with the same index expression as before) and only the argument
/// that every hoisted row is read once weakens.
eddy_value_t *eddy_passes_index_source(eddy_value_t *v) {
  for (;;) {
    const eddy_op_t *d = v->def;
    eddy_value_t *x;
    if (d && eddy_ir_op_is(d, "core.reshape") &&
        eddy_ir_type_num_elements(v->type) == 1 &&
        eddy_ir_type_num_elements(d->operands[0].value->type) == 1)
      v = d->operands[0].value;
    else if (d && eddy_ir_op_is(d, "core.cast") &&
             eddy_dtype_is_int(v->type->dtype) &&
             eddy_dtype_is_int(d->operands[0].value->type->dtype))
      v = d->operands[0].value;
    else if ((x = pu_unwrap_negative(v)))
      v = x;
    else
      return v;
  }
}

/// v is the loop's counter: an argument of its body block whose initial
/// value is an integer scalar constant and which the body yields plus 1.
bool eddy_passes_loop_counter(const eddy_op_t *loop, const eddy_value_t *v) {
  eddy_block_t *body = eddy_ctl_while_body(loop);
  if (v->def || v->block != body || !eddy_ir_type_is_scalar(v->type) ||
      !eddy_dtype_is_int(v->type->dtype))
    return false;
  uint32_t i = v->index;
  const eddy_attr_t *init = eddy_passes_value_const(loop->operands[i].value);
  if (!init || !eddy_ir_type_is_scalar(init->type))
    return false;
  eddy_op_t *yield = eddy_ir_block_terminator(body);
  const eddy_value_t *next = yield->operands[i].value;
  const eddy_op_t *add = next->def;
  if (!add || !eddy_ir_op_is(add, "core.add") || next->type != v->type)
    return false;
  const eddy_value_t *a = add->operands[0].value, *b = add->operands[1].value;
  return (a == v && pu_is_int(b, 1)) || (b == v && pu_is_int(a, 1));
}

eddy_status_t eddy_passes_slice_rows(eddy_builder_t *b, eddy_value_t *v,
                                     int64_t lo, int64_t n,
                                     eddy_value_t **out) {
  enum { MAX_RANK = 16 };
  const eddy_type_t *t = v->type;
  assert(t->rank >= 1 && t->rank <= MAX_RANK);
  int64_t start[MAX_RANK], limit[MAX_RANK], step[MAX_RANK];
  for (int32_t d = 0; d < t->rank; d++) {
    start[d] = 0;
    limit[d] = t->dims[d];
    step[d] = 1;
  }
  start[0] = lo;
  limit[0] = lo + n;
  eddy_ctx_t *ctx = b->ctx;
  eddy_named_attr_t attrs[3] = {
      eddy_ir_named_attr(ctx, "start",
                         eddy_ir_i64_array_attr_get(ctx, start, t->rank)),
      eddy_ir_named_attr(ctx, "limit",
                         eddy_ir_i64_array_attr_get(ctx, limit, t->rank)),
      eddy_ir_named_attr(ctx, "strides",
                         eddy_ir_i64_array_attr_get(ctx, step, t->rank)),
  };
  return eddy_ir_build_simple(b, "core.slice", &v, 1, attrs, 3, out);
}

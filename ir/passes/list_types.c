/// List element types from what is written into the lists (a step of
/// shape-infer).
///
/// A list created with an unknown element shape (TensorFlow's
/// TensorListReserve / EmptyTensorList with element_shape -1, imported as
/// !tl.list<tensor<*xf32>>) often only ever receives items of one static
/// shape. Forward inference cannot see that: a tl.set_item's result holds
/// the items of its operand list too. This step looks at whole webs instead:
/// the list values connected by the ops that derive one list from another
/// (push_back, pop_back, set_item, resize, scatter, add: its two operands
/// and its result, zeros_like: its items have the operand's shapes), by
/// ctl.while (operand,
/// cond and body arguments, body yield, result) and by ctl.if (the yields
/// and the result). Every item of every list in a web was written into it by
/// a push_back, a set_item, a scatter (its tensor's rows) or a from_tensor
/// of the web (the items a resize adds are unset), so the least refined
/// type covering all the written items' types is a type of every item; the
/// web's values get that element type (refined with what they declare).
///
/// Lists of lists work the same way one level at a time: a list pushed or
/// set as an item is written with its own (refined) type; a list taken out
/// of a list of lists (tl.pop_back's item, tl.get_item) starts a web whose
/// items include those it came with, so its declared element type counts
/// as written. Each refinement can enable the next on a later round.
///
/// A web is left alone when a list of it leaves what can be seen: a function
/// argument or result, an operand of ctl.call or of any op not named above,
/// or a list produced by an op not named above.
///
/// One change in behaviour: a tl.reserve item that is never written reads
/// as zeros when the element shape is static and is an error when it is not
/// (docs/runtime.md), so a program that reads an unwritten item of such a
/// list no longer fails once its element type is refined (TensorFlow reads
/// zeros when TensorListGetItem's element_shape is known).
#include "ir/passes/pass_util.h"

#include <stdint.h>
#include <stdlib.h>

typedef struct lt_state {
  eddy_ctx_t *ctx;
  eddy_ptrmap_t index; ///< value -> 1 + its position in vals
  eddy_value_t **vals;
  int32_t *parent;     ///< union-find over vals
  bool *opaque;        ///< per value: its list leaves the function's sight
  const eddy_type_t **written; ///< per root: the generalized item type
  bool *no_join;       ///< per root: two written types could not be joined
  size_t n, cap;
  bool oom;
} lt_state_t;

static bool is_list(const eddy_value_t *v) {
  return v->type->kind == EDDY_TYPE_LIST;
}

static int32_t lt_find(lt_state_t *s, int32_t i) {
  while (s->parent[i] != i) {
    s->parent[i] = s->parent[s->parent[i]];
    i = s->parent[i];
  }
  return i;
}

/// The position of a list value, registering it on first sight; -1 when
/// out of memory.
static int32_t lt_id(lt_state_t *s, eddy_value_t *v) {
  void *p = eddy_ptrmap_get(&s->index, v);
  if (p)
    return (int32_t)((uintptr_t)p - 1);
  if (s->n == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 64;
    eddy_value_t **vals = realloc(s->vals, cap * sizeof *vals);
    if (vals)
      s->vals = vals;
    int32_t *parent = realloc(s->parent, cap * sizeof *parent);
    if (parent)
      s->parent = parent;
    bool *opaque = realloc(s->opaque, cap * sizeof *opaque);
    if (opaque)
      s->opaque = opaque;
    if (!vals || !parent || !opaque || cap > INT32_MAX) {
      s->oom = true;
      return -1;
    }
    s->cap = cap;
  }
  int32_t i = (int32_t)s->n++;
  s->vals[i] = v;
  s->parent[i] = i;
  s->opaque[i] = false;
  eddy_ptrmap_put(&s->index, v, (void *)(uintptr_t)(i + 1));
  return i;
}

static void lt_union(lt_state_t *s, eddy_value_t *a, eddy_value_t *b) {
  if (!is_list(a) || !is_list(b))
    return;
  int32_t x = lt_id(s, a), y = lt_id(s, b);
  if (x < 0 || y < 0)
    return;
  x = lt_find(s, x);
  y = lt_find(s, y);
  if (x != y)
    s->parent[x] = y;
}

static void lt_opaque(lt_state_t *s, eddy_value_t *v) {
  if (!is_list(v))
    return;
  int32_t i = lt_id(s, v);
  if (i >= 0)
    s->opaque[i] = true;
}

/// The ops through which a list operand (#0) stays in sight.
static bool reads_list_operand0(const eddy_op_t *op) {
  static const char *const names[] = {"tl.push_back", "tl.pop_back",
                                      "tl.set_item",  "tl.get_item",
                                      "tl.length",    "tl.stack",
                                      "tl.resize",    "tl.scatter",
                                      "tl.add",       "tl.zeros_like"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (eddy_ir_op_is(op, names[i]))
      return true;
  return false;
}

/// A list operand that is written as an item of another list.
static bool is_item_operand(const eddy_op_t *op, uint32_t i) {
  return (eddy_ir_op_is(op, "tl.push_back") && i == 1) ||
         (eddy_ir_op_is(op, "tl.set_item") && i == 2);
}

/// A list result taken out of a list of lists.
static bool is_item_result(const eddy_op_t *op, uint32_t i) {
  return (eddy_ir_op_is(op, "tl.pop_back") && i == 1) ||
         (eddy_ir_op_is(op, "tl.get_item") && i == 0);
}

/// Marks the list operands of op that leave sight as opaque.
static void lt_operands(lt_state_t *s, eddy_op_t *op) {
  bool yield_in_cf = false;
  if (eddy_ir_op_is(op, "ctl.yield") && op->block && op->block->region) {
    const eddy_op_t *parent = op->block->region->parent;
    yield_in_cf = parent && (eddy_ir_op_is(parent, "ctl.while") ||
                             eddy_ir_op_is(parent, "ctl.if"));
  }
  bool in_sight_op0 = reads_list_operand0(op);
  for (uint32_t i = 0; i < op->num_operands; i++) {
    eddy_value_t *v = eddy_ir_op_operand(op, i);
    if (!is_list(v))
      continue;
    if ((i == 0 && in_sight_op0) || yield_in_cf ||
        (i == 1 && eddy_ir_op_is(op, "tl.add")) ||
        eddy_ir_op_is(op, "ctl.while") || is_item_operand(op, i))
      (void)lt_id(s, v); // unioned where its op is visited
    else
      lt_opaque(s, v);
  }
}

static void lt_block(lt_state_t *s, eddy_block_t *b, bool entry_of_func);

static void lt_while(lt_state_t *s, eddy_op_t *op) {
  if (op->num_regions != 2 || !op->regions[0].first || !op->regions[1].first)
    return;
  eddy_block_t *cond = op->regions[0].first, *body = op->regions[1].first;
  eddy_op_t *yield = body->last;
  for (uint32_t i = 0; i < op->num_operands; i++) {
    eddy_value_t *init = eddy_ir_op_operand(op, i);
    if (!is_list(init))
      continue;
    if (i < op->num_results)
      lt_union(s, init, &op->results[i]);
    if (i < cond->num_args)
      lt_union(s, init, cond->args[i]);
    if (i < body->num_args)
      lt_union(s, init, body->args[i]);
    if (yield && eddy_ir_op_is(yield, "ctl.yield") && i < yield->num_operands)
      lt_union(s, init, eddy_ir_op_operand(yield, i));
  }
}

static void lt_if(lt_state_t *s, eddy_op_t *op) {
  for (uint32_t r = 0; r < op->num_regions; r++) {
    eddy_block_t *b = op->regions[r].first;
    eddy_op_t *yield = b ? b->last : NULL;
    if (!yield || !eddy_ir_op_is(yield, "ctl.yield"))
      continue;
    for (uint32_t i = 0; i < op->num_results && i < yield->num_operands; i++)
      lt_union(s, &op->results[i], eddy_ir_op_operand(yield, i));
  }
}

/// The results of op: unioned with their list operand, creators, or opaque.
static void lt_results(lt_state_t *s, eddy_op_t *op) {
  if (eddy_ir_op_is(op, "ctl.while"))
    lt_while(s, op);
  else if (eddy_ir_op_is(op, "ctl.if"))
    lt_if(s, op);
  bool derives = eddy_ir_op_is(op, "tl.push_back") ||
                 eddy_ir_op_is(op, "tl.pop_back") ||
                 eddy_ir_op_is(op, "tl.set_item") ||
                 eddy_ir_op_is(op, "tl.resize") ||
                 eddy_ir_op_is(op, "tl.scatter") ||
                 eddy_ir_op_is(op, "tl.add") ||
                 eddy_ir_op_is(op, "tl.zeros_like");
  bool creates = eddy_ir_op_is(op, "tl.empty") ||
                 eddy_ir_op_is(op, "tl.reserve") ||
                 eddy_ir_op_is(op, "tl.from_tensor");
  bool cf = eddy_ir_op_is(op, "ctl.while") || eddy_ir_op_is(op, "ctl.if");
  for (uint32_t i = 0; i < op->num_results; i++) {
    eddy_value_t *r = &op->results[i];
    if (!is_list(r))
      continue;
    if (derives && i == 0 && op->num_operands > 0) {
      lt_union(s, eddy_ir_op_operand(op, 0), r);
      if (eddy_ir_op_is(op, "tl.add") && op->num_operands == 2)
        lt_union(s, eddy_ir_op_operand(op, 1), r);
    }
    else if ((creates && i == 0) || cf || is_item_result(op, i))
      (void)lt_id(s, r);
    else
      lt_opaque(s, r); // a call, a tf op...
  }
}

static void lt_block(lt_state_t *s, eddy_block_t *b, bool entry_of_func) {
  for (uint32_t i = 0; i < b->num_args; i++) {
    if (!is_list(b->args[i]))
      continue;
    if (entry_of_func)
      lt_opaque(s, b->args[i]);
    else
      (void)lt_id(s, b->args[i]); // ctl.while arguments, unioned there
  }
  for (eddy_op_t *op = b->first; op; op = op->next) {
    lt_operands(s, op);
    lt_results(s, op);
    for (uint32_t r = 0; r < op->num_regions; r++)
      for (eddy_block_t *rb = op->regions[r].first; rb; rb = rb->next)
        lt_block(s, rb, false);
  }
}

/// The type of an item that op writes into its list, or NULL if op writes
/// none. A list taken out of a list of lists comes with items of its
/// declared element type.
static const eddy_type_t *written_type(lt_state_t *s, eddy_op_t *op,
                                       uint32_t result, eddy_value_t **list) {
  if (result < op->num_results && is_item_result(op, result) &&
      op->results[result].type->kind == EDDY_TYPE_LIST) {
    *list = &op->results[result];
    return op->results[result].type->elem;
  }
  if (result > 0)
    return NULL;
  if (eddy_ir_op_is(op, "tl.push_back") && op->num_operands == 2) {
    *list = eddy_ir_op_operand(op, 0);
    return eddy_ir_op_operand(op, 1)->type;
  }
  if (eddy_ir_op_is(op, "tl.set_item") && op->num_operands == 3) {
    *list = eddy_ir_op_operand(op, 0);
    return eddy_ir_op_operand(op, 2)->type;
  }
  bool scatter = eddy_ir_op_is(op, "tl.scatter") && op->num_operands == 3;
  if ((scatter || (eddy_ir_op_is(op, "tl.from_tensor") &&
                   op->num_operands == 1)) &&
      op->num_results == 1) {
    *list = scatter ? eddy_ir_op_operand(op, 0) : &op->results[0];
    const eddy_type_t *x = eddy_ir_op_operand(op, scatter ? 2 : 0)->type;
    if (x->kind != EDDY_TYPE_TENSOR || x->rank == 0)
      return NULL;
    if (x->rank == EDDY_RANK_UNKNOWN)
      return x;
    return eddy_ir_tensor_type_get(s->ctx, x->dtype, x->rank - 1, x->dims + 1);
  }
  return NULL;
}

static void lt_writes(lt_state_t *s, eddy_block_t *b) {
  for (eddy_op_t *op = b->first; op; op = op->next) {
    for (uint32_t r = 0; r < 2; r++) {
      eddy_value_t *list = NULL;
      const eddy_type_t *t = written_type(s, op, r, &list);
      void *p = list ? eddy_ptrmap_get(&s->index, list) : NULL;
      if (!t || !p)
        continue;
      int32_t root = lt_find(s, (int32_t)((uintptr_t)p - 1));
      if (s->no_join[root])
        continue;
      const eddy_type_t *w =
          s->written[root]
              ? eddy_ir_type_generalize(s->ctx, s->written[root], t)
              : t;
      if (!w)
        s->no_join[root] = true;
      s->written[root] = w;
    }
    for (uint32_t r = 0; r < op->num_regions; r++)
      for (eddy_block_t *rb = op->regions[r].first; rb; rb = rb->next)
        lt_writes(s, rb);
  }
}

/// Refines each web's element type; the number of values retyped.
static int64_t lt_apply(lt_state_t *s) {
  // Per root: the declared element types refined together, and opaqueness.
  const eddy_type_t **declared = calloc(s->n + 1, sizeof *declared);
  bool *bad = calloc(s->n + 1, sizeof *bad);
  int64_t updates = 0;
  if (!declared || !bad) {
    free(declared);
    free(bad);
    return 0;
  }
  for (size_t i = 0; i < s->n; i++) {
    int32_t root = lt_find(s, (int32_t)i);
    const eddy_type_t *elem = s->vals[i]->type->elem;
    if (s->opaque[i])
      bad[root] = true;
    else if (!bad[root])
      declared[root] =
          declared[root] ? eddy_ir_type_refine(s->ctx, declared[root], elem)
                         : elem;
    if (!declared[root])
      bad[root] = true;
  }
  for (size_t i = 0; i < s->n; i++) {
    int32_t root = lt_find(s, (int32_t)i);
    if (bad[root] || s->no_join[root] || !s->written[root])
      continue;
    const eddy_type_t *elem =
        eddy_ir_type_refine(s->ctx, declared[root], s->written[root]);
    if (!elem)
      continue; // a write that does not fit: the verifier reports it
    const eddy_type_t *t = eddy_ir_list_type_get(s->ctx, elem);
    if (s->vals[i]->type != t) {
      eddy_ir_value_set_type(s->vals[i], t);
      updates++;
    }
  }
  free(declared);
  free(bad);
  return updates;
}

eddy_status_t eddy_passes_refine_list_types(eddy_ctx_t *ctx, eddy_op_t *func,
                                            int64_t *out_updates) {
  *out_updates = 0;
  eddy_block_t *entry = eddy_ir_func_entry(func);
  if (!entry)
    return NULL;
  lt_state_t s = {.ctx = ctx};
  eddy_ptrmap_init(&s.index);
  eddy_status_t st = NULL;
  for (eddy_block_t *b = entry; b; b = b->next)
    lt_block(&s, b, b == entry);
  if (!s.oom && s.n > 0) {
    // Written types live at the roots from here on.
    s.written = calloc(s.n, sizeof *s.written);
    s.no_join = calloc(s.n, sizeof *s.no_join);
    if (s.written && s.no_join) {
      for (eddy_block_t *b = entry; b; b = b->next)
        lt_writes(&s, b);
      *out_updates = lt_apply(&s);
    } else {
      s.oom = true;
    }
  }
  if (s.oom)
    st = eddy_status_create(EDDY_ERR_RESOURCE,
                            "shape-infer: out of memory typing lists");
  free(s.written);
  free(s.no_join);
  free(s.vals);
  free(s.parent);
  free(s.opaque);
  eddy_ptrmap_destroy(&s.index);
  return st;
}

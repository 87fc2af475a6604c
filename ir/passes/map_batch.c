/// map-batch: a ctl.while whose iterations are independent becomes batched
/// ops (docs/passes.md).
///
/// TensorFlow's map_fn (and a TensorArray loop written by hand) is a loop
///
///   for i in 0..T-1: out[i] = f(xs[i], ys[i], W)
///
/// reading item i of lists made from tensors, writing item i of a list
/// reserved for T items and stacked after the loop. Nothing carries from
/// one iteration to the next but the counters, so when f is made of ops
/// that take a leading batch dimension as they are (elementwise ops, with
/// the invariant operands broadcast from the trailing dimensions, and
/// core.matmul, whose batch dimensions broadcast the same way), or with
/// their axes moved past it (reductions, transposes), the loop is f
/// applied once to all of xs and ys: `stack(out) = f(xs, ys, W)`.
/// The backends then see one batched op instead of T small ones and T
/// list writes (a batched matmul is split across the threads by the CPU
/// runtime: docs/cpu.md).
///
/// Every element is computed by the same ops from the same elements as
/// in the loop, so the results are the same (a matmul's order of summation
/// is its kernel's, as for any product). The trip count must be known:
/// the condition is a conjunction of `counter < constant` over counters
/// that start at constants and step by one; every read is in range and
/// every written item is set once, so nothing the loop could fail on is
/// lost, and a loop of zero iterations is left alone.
#include "dialects/ctl/ctl.h"
#include "dialects/tl/tl.h"
#include "ir/passes/pass_util.h"
#include "ir/passes/passes.h"

#include <stdlib.h>
#include <string.h>

/// What a loop value (or body value) is to the rewrite.
enum {
  MB_OTHER = 0, ///< not seen (an op of the body not yet classified)
  MB_INVARIANT, ///< the same in every iteration: computed before the loop
  MB_BATCHED,   ///< one value per iteration: computed for all of them
  MB_COUNTER,   ///< a counter, or derived from one for an index
  MB_OUT,       ///< a list the loop writes item i of
};

#define MB_MAX_RANK 16

typedef struct mb {
  eddy_op_t *loop;
  eddy_block_t *body;
  int64_t trips;     ///< T
  int64_t *start;    ///< per loop value: a counter's initial value
  uint8_t *kind;     ///< per loop value: MB_*
  eddy_ptrmap_t cls; ///< body value -> MB_* (as a pointer-sized int)
  eddy_ptrmap_t map; ///< body value -> the value before the loop
} mb_t;

static int mb_kind(const mb_t *s, const eddy_value_t *v) {
  if (!eddy_passes_value_defined_outside(v, s->loop))
    return (int)(intptr_t)eddy_ptrmap_get(&s->cls, v);
  return MB_INVARIANT;
}

static void mb_set(mb_t *s, const eddy_value_t *v, int kind) {
  eddy_ptrmap_put(&s->cls, v, (void *)(intptr_t)kind);
}

static bool mb_static(const eddy_type_t *t) {
  return eddy_ir_type_is_tensor(t) && eddy_ir_type_is_static(t) &&
         t->rank < MB_MAX_RANK;
}

/// The integer scalar constant v holds, as a loop-invariant value of loop.
static bool mb_const_int(const eddy_op_t *loop, eddy_value_t *v, int64_t *out) {
  const eddy_attr_t *a = eddy_passes_value_const(v);
  eddy_value_t *src = a ? NULL : eddy_passes_loop_invariant_source(loop, v);
  if (src)
    a = eddy_passes_value_const(src);
  if (!a || !eddy_ir_type_is_scalar(a->type) ||
      !eddy_dtype_is_int(a->type->dtype))
    return false;
  *out = eddy_ir_dense_attr_i64(a, 0);
  return true;
}

/// The trip count bounded by the condition p: a conjunction of
/// `core.lt(counter, constant)`; *trips is lowered to each bound's.
/// False when some part of p is anything else.
static bool mb_cond(mb_t *s, eddy_value_t *p, int64_t *trips) {
  const eddy_op_t *d = p->def;
  if (!d || d->block != eddy_ctl_while_cond(s->loop))
    return false;
  if (eddy_ir_op_is(d, "core.and"))
    return mb_cond(s, d->operands[0].value, trips) &&
           mb_cond(s, d->operands[1].value, trips);
  if (!eddy_ir_op_is(d, "core.lt"))
    return false;
  const eddy_value_t *c = d->operands[0].value;
  int64_t bound;
  if (c->def || c->block != eddy_ctl_while_cond(s->loop) ||
      s->kind[c->index] != MB_COUNTER ||
      !mb_const_int(s->loop, d->operands[1].value, &bound))
    return false;
  int64_t t = bound - s->start[c->index];
  if (t < *trips)
    *trips = t < 0 ? 0 : t;
  return true;
}

/// The counter (loop value index) an index value is computed from, or -1.
static int64_t mb_index_counter(const mb_t *s, eddy_value_t *index) {
  eddy_value_t *c = eddy_passes_index_source(index);
  if (c->def || c->block != s->body || s->kind[c->index] != MB_COUNTER)
    return -1;
  return (int64_t)c->index;
}

/// Marks the ops between a counter and an index read from it (reshapes,
/// casts, the count from the end of a negative index) as counter values:
/// they are not computed after the rewrite. Constants stay invariant.
static void mb_mark_index(mb_t *s, eddy_value_t *v) {
  eddy_op_t *d = v->def;
  if (!d || d->block != s->body || eddy_ir_op_has_trait(d, EDDY_TRAIT_CONSTANT))
    return;
  for (uint32_t r = 0; r < d->num_results; r++)
    mb_set(s, &d->results[r], MB_COUNTER);
  for (uint32_t o = 0; o < d->num_operands; o++)
    mb_mark_index(s, d->operands[o].value);
}

/// An item read `get_item(list, i)` or `gather(x, i) {axis = 0}` with i a
/// counter's value: the tensor read (with T rows from the counter's start
/// in range), or NULL.
static eddy_value_t *mb_read_rows(const mb_t *s, eddy_op_t *op,
                                  int64_t *counter) {
  eddy_value_t *rows = NULL;
  if (eddy_ir_op_is(op, "tl.get_item")) {
    eddy_value_t *l =
        eddy_passes_loop_invariant_source(s->loop, op->operands[0].value);
    if (!l || !l->def || !eddy_ir_op_is(l->def, "tl.from_tensor"))
      return NULL;
    rows = l->def->operands[0].value;
  } else if (eddy_ir_op_is(op, "core.gather")) {
    rows = eddy_passes_loop_invariant_source(s->loop, op->operands[0].value);
    int64_t axis = eddy_ir_op_attr_int(op, "axis", -1);
    if (!rows || !eddy_ir_type_is_tensor(rows->type) || rows->type->rank < 1 ||
        (axis != 0 && axis != -(int64_t)rows->type->rank))
      return NULL;
  } else {
    return NULL;
  }
  const eddy_type_t *rt = rows->type, *it = op->results[0].type;
  if (!mb_static(rt) || !mb_static(it) || rt->rank != it->rank + 1 ||
      rt->dtype != it->dtype ||
      !eddy_ir_type_is_scalar(op->operands[1].value->type))
    return NULL;
  for (int32_t d = 0; d < it->rank; d++)
    if (rt->dims[d + 1] != it->dims[d])
      return NULL;
  *counter = mb_index_counter(s, op->operands[1].value);
  if (*counter < 0)
    return NULL;
  int64_t lo = s->start[*counter];
  if (lo < 0 || lo + s->trips > rt->dims[0])
    return NULL;
  return rows;
}

/// Reductions and transposes name their operand's axes: batched, the same
/// op on the axes after the batch's (mb_attrs).
static bool mb_axis_op(const eddy_op_t *op) {
  static const char *const names[] = {"core.reduce_sum",  "core.reduce_mean",
                                      "core.reduce_max",  "core.reduce_min",
                                      "core.reduce_prod", "core.transpose"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (eddy_ir_op_is(op, names[i]))
      return true;
  return false;
}

/// op's attributes for the batched op, into out (op->num_attrs of them):
/// a reduction's non-negative axes and a transpose's permutation moved past
/// the batch dimension, which a transpose keeps in front. Negative axes
/// count from the end, which the batch does not change.
static void mb_attrs(const eddy_op_t *op, eddy_named_attr_t *out) {
  eddy_ctx_t *ctx = op->ctx;
  for (uint32_t i = 0; i < op->num_attrs; i++) {
    out[i] = op->attrs[i];
    const char *name = op->attrs[i].name->str;
    bool perm = strcmp(name, "perm") == 0;
    if (!mb_axis_op(op) || (!perm && strcmp(name, "axes") != 0))
      continue;
    int64_t v[MB_MAX_RANK + 1];
    int64_t n =
        eddy_ir_attr_as_i64_array(op->attrs[i].value, v + 1, MB_MAX_RANK);
    if (n < 0)
      continue;
    for (int64_t j = 1; j <= n; j++)
      if (v[j] >= 0)
        v[j]++;
    v[0] = 0;
    out[i].value = perm ? eddy_ir_i64_array_attr_get(ctx, v, (size_t)n + 1)
                        : eddy_ir_i64_array_attr_get(ctx, v + 1, (size_t)n);
  }
}

/// The op computes one item from items with the batch dimension added in
/// front: a reduction or transpose of a batched value (mb_axis_op), or an
/// elementwise op or core.matmul, whose operands broadcast from the
/// trailing dimensions. Every batched operand of those has the rank of the
/// result (so its leading dimension lines up with the result's) and every
/// invariant one at most that rank.
static bool mb_batchable(const mb_t *s, const eddy_op_t *op) {
  if (op->num_regions || op->num_results != 1 ||
      !eddy_ir_op_has_trait(op, EDDY_TRAIT_PURE) || eddy_passes_op_may_fail(op))
    return false;
  const eddy_type_t *rt = op->results[0].type;
  if (!mb_static(rt) || rt->rank + 1 >= MB_MAX_RANK)
    return false;
  if (mb_axis_op(op))
    return op->num_operands == 1 &&
           mb_kind(s, op->operands[0].value) == MB_BATCHED &&
           mb_static(op->operands[0].value->type) &&
           op->operands[0].value->type->rank + 1 < MB_MAX_RANK;
  if (!eddy_ir_op_has_trait(op, EDDY_TRAIT_ELEMENTWISE) &&
      !eddy_ir_op_is(op, "core.matmul"))
    return false;
  for (uint32_t i = 0; i < op->num_operands; i++) {
    const eddy_value_t *x = op->operands[i].value;
    int k = mb_kind(s, x);
    if (!mb_static(x->type) || x->type->rank > rt->rank ||
        (k == MB_BATCHED && x->type->rank != rt->rank) ||
        (k != MB_BATCHED && k != MB_INVARIANT))
      return false;
  }
  return true;
}

/// Every stack of out list i after the loop is [T, item dims...].
static bool mb_stacks_fit(const mb_t *s, uint32_t i, const eddy_type_t *item) {
  for (const eddy_use_t *u = s->loop->results[i].uses; u; u = u->next) {
    const eddy_type_t *st = u->owner->results[0].type;
    if (!mb_static(st) || st->rank != item->rank + 1 ||
        st->dims[0] != s->trips || st->dtype != item->dtype)
      return false;
    for (int32_t d = 0; d < item->rank; d++)
      if (st->dims[d + 1] != item->dims[d])
        return false;
  }
  return true;
}

/// The body's ops, classified; false when some op keeps the loop.
static bool mb_body(mb_t *s) {
  eddy_op_t *yield = eddy_ir_block_terminator(s->body);
  // Counter values: the increments the body yields, and the index chains
  // of the reads and writes.
  for (uint32_t i = 0; i < s->loop->num_operands; i++)
    if (s->kind[i] == MB_COUNTER) {
      mb_set(s, s->body->args[i], MB_COUNTER);
      eddy_value_t *next = yield->operands[i].value;
      if (next->def && next->def->block == s->body)
        mb_set(s, next, MB_COUNTER);
    } else if (s->kind[i] == MB_INVARIANT) {
      mb_set(s, s->body->args[i], MB_INVARIANT);
    } else if (s->kind[i] == MB_OUT) {
      mb_set(s, s->body->args[i], MB_OUT);
    }
  for (eddy_op_t *op = s->body->first; op != yield; op = op->next)
    if (eddy_ir_op_is(op, "tl.get_item") || eddy_ir_op_is(op, "tl.set_item") ||
        eddy_ir_op_is(op, "core.gather"))
      if (mb_index_counter(s, op->operands[1].value) >= 0)
        mb_mark_index(s, op->operands[1].value);
  for (eddy_op_t *op = s->body->first; op != yield; op = op->next) {
    int64_t counter;
    if (op->num_results == 1 && mb_kind(s, &op->results[0]) == MB_COUNTER) {
      // A counter value is read only by the chains of reads and writes
      // and by the yield (an increment).
      for (eddy_use_t *u = op->results[0].uses; u; u = u->next) {
        eddy_op_t *user = u->owner;
        bool index_use = u->index == 1 && (eddy_ir_op_is(user, "tl.get_item") ||
                                           eddy_ir_op_is(user, "tl.set_item") ||
                                           eddy_ir_op_is(user, "core.gather"));
        if (user != yield && !index_use &&
            !(user->num_results == 1 &&
              mb_kind(s, &user->results[0]) == MB_COUNTER))
          return false;
      }
      if (!eddy_ir_op_has_trait(op, EDDY_TRAIT_PURE) || op->num_regions ||
          eddy_passes_op_may_fail(op))
        return false;
      continue;
    }
    if (eddy_ir_op_is(op, "tl.set_item")) {
      // out[i] = v, the only use of the list argument, yielded in its place.
      const eddy_value_t *l = op->operands[0].value;
      int64_t at = mb_index_counter(s, op->operands[1].value);
      if (l->def || l->block != s->body || s->kind[l->index] != MB_OUT ||
          yield->operands[l->index].value != &op->results[0] ||
          mb_kind(s, op->operands[2].value) != MB_BATCHED || at < 0 ||
          s->start[at] != 0 ||
          !mb_stacks_fit(s, l->index, op->operands[2].value->type))
        return false;
      mb_set(s, &op->results[0], MB_OUT);
      continue;
    }
    if (mb_read_rows(s, op, &counter)) {
      mb_set(s, &op->results[0], MB_BATCHED);
      continue;
    }
    bool any_batched = false, all_invariant = true;
    for (uint32_t i = 0; i < op->num_operands; i++) {
      int k = mb_kind(s, op->operands[i].value);
      any_batched |= k == MB_BATCHED;
      all_invariant &= k == MB_INVARIANT;
    }
    if (all_invariant && !op->num_regions &&
        eddy_ir_op_has_trait(op, EDDY_TRAIT_PURE) &&
        !eddy_passes_op_may_fail(op)) {
      for (uint32_t r = 0; r < op->num_results; r++)
        mb_set(s, &op->results[r], MB_INVARIANT);
      continue;
    }
    if (!any_batched || !mb_batchable(s, op))
      return false;
    mb_set(s, &op->results[0], MB_BATCHED);
  }
  // The out lists: written once per iteration, read by nothing else in the
  // loop, stacked after it.
  for (uint32_t i = 0; i < s->loop->num_operands; i++) {
    if (s->kind[i] != MB_OUT)
      continue;
    const eddy_value_t *arg = s->body->args[i];
    const eddy_op_t *set = yield->operands[i].value->def;
    if (!set || !eddy_ir_op_is(set, "tl.set_item") || !arg->uses ||
        arg->uses->next || arg->uses->owner != set ||
        eddy_ctl_while_cond(s->loop)->args[i]->uses)
      return false;
  }
  return true;
}

/// Classifies the loop values; false when one keeps the loop.
static bool mb_values(mb_t *s) {
  eddy_op_t *yield = eddy_ir_block_terminator(s->body);
  for (uint32_t i = 0; i < s->loop->num_operands; i++) {
    eddy_value_t *arg = s->body->args[i];
    eddy_value_t *init = s->loop->operands[i].value;
    const eddy_value_t *next = yield->operands[i].value;
    if (next == arg) {
      s->kind[i] = MB_INVARIANT;
    } else if (eddy_passes_loop_counter(s->loop, arg)) {
      s->kind[i] = MB_COUNTER;
      s->start[i] = eddy_ir_dense_attr_i64(eddy_passes_value_const(init), 0);
    } else if (init->def && eddy_ir_op_is(init->def, "tl.reserve") &&
               arg->type->kind == EDDY_TYPE_LIST && arg->type->elem &&
               mb_static(arg->type->elem)) {
      // Every use after the loop stacks it.
      for (const eddy_use_t *u = s->loop->results[i].uses; u; u = u->next)
        if (!eddy_ir_op_is(u->owner, "tl.stack"))
          return false;
      s->kind[i] = MB_OUT;
    } else {
      return false;
    }
  }
  // A loop that writes no list is left to the other passes.
  for (uint32_t i = 0; i < s->loop->num_operands; i++)
    if (s->kind[i] == MB_OUT)
      return true;
  return false;
}

/// A reserve for exactly T items.
static bool mb_out_sizes(const mb_t *s) {
  for (uint32_t i = 0; i < s->loop->num_operands; i++) {
    if (s->kind[i] != MB_OUT)
      continue;
    int64_t n;
    if (!mb_const_int(s->loop,
                      s->loop->operands[i].value->def->operands[0].value, &n) ||
        n != s->trips)
      return false;
  }
  return true;
}

/// The loop matches (see the file comment).
static bool mb_match(mb_t *s) {
  eddy_block_t *cond = eddy_ctl_while_cond(s->loop);
  if (!s->body || !cond || s->body->num_args != s->loop->num_operands ||
      !eddy_passes_regions_are_pure(s->loop) || !mb_values(s))
    return false;
  eddy_op_t *term = eddy_ir_block_terminator(cond);
  s->trips = INT64_MAX;
  if (!term || term->num_operands != 1 ||
      !mb_cond(s, term->operands[0].value, &s->trips))
    return false;
  // `maximum_iterations` stops the loop after that many iterations too.
  if (eddy_ir_op_attr(s->loop, "maximum_iterations")) {
    int64_t m = eddy_ir_op_attr_int(s->loop, "maximum_iterations", 0);
    if (m < s->trips)
      s->trips = m;
  }
  if (s->trips < 1 || s->trips == INT64_MAX)
    return false;
  // The stacks' types are checked with the writes (mb_stacks_fit).
  return mb_out_sizes(s) && mb_body(s);
}

static eddy_value_t *mb_get(const mb_t *s, eddy_value_t *v) {
  eddy_value_t *m = eddy_ptrmap_get(&s->map, v);
  return m ? m : v;
}

/// rows [lo, lo + T) of x (x itself when that is all of it).
static eddy_status_t mb_rows(mb_t *s, eddy_builder_t *b, eddy_value_t *x,
                             int64_t lo, eddy_value_t **out) {
  if (lo == 0 && x->type->dims[0] == s->trips) {
    *out = x;
    return NULL;
  }
  return eddy_passes_slice_rows(b, x, lo, s->trips, out);
}

/// Builds the batched ops before the loop and replaces its results.
static eddy_status_t mb_rewrite(mb_t *s) {
  eddy_ctx_t *ctx = s->loop->ctx;
  eddy_builder_t b;
  eddy_ir_builder_init(&b, ctx);
  eddy_ir_builder_set_before(&b, s->loop);
  eddy_op_t *yield = eddy_ir_block_terminator(s->body);
  for (uint32_t i = 0; i < s->loop->num_operands; i++)
    if (s->kind[i] == MB_INVARIANT)
      eddy_ptrmap_put(&s->map, s->body->args[i], s->loop->operands[i].value);
  for (eddy_op_t *op = s->body->first; op != yield; op = op->next) {
    if (!op->num_results)
      continue;
    int k = mb_kind(s, &op->results[0]);
    b.loc = op->loc;
    int64_t counter;
    eddy_value_t *rows, *nv = NULL;
    if (k == MB_COUNTER || k == MB_OUT) {
      continue;
    } else if (k == MB_INVARIANT) {
      eddy_op_t *c = eddy_ir_op_clone(op, &s->map);
      eddy_ir_op_insert_before(c, s->loop);
      continue;
    } else if ((rows = mb_read_rows(s, op, &counter))) {
      EDDY_RETURN_IF_ERROR(mb_rows(s, &b, rows, s->start[counter], &nv));
    } else {
      eddy_value_t *ops[8];
      eddy_named_attr_t attrs[8];
      if (op->num_operands > 8 || op->num_attrs > 8)
        return eddy_status_create(EDDY_ERR_INTERNAL,
                                  "map-batch: too many operands");
      for (uint32_t i = 0; i < op->num_operands; i++)
        ops[i] = mb_get(s, op->operands[i].value);
      mb_attrs(op, attrs);
      EDDY_RETURN_IF_ERROR(eddy_ir_build_simple(
          &b, op->name->str, ops, op->num_operands, attrs, op->num_attrs, &nv));
    }
    // The batched value is [T, item dims...].
    const eddy_type_t *it = op->results[0].type, *bt = nv->type;
    bool ok = bt->rank == it->rank + 1 && bt->dims[0] == s->trips &&
              bt->dtype == it->dtype;
    for (int32_t d = 0; ok && d < it->rank; d++)
      ok = bt->dims[d + 1] == it->dims[d];
    if (!ok)
      return eddy_status_create(EDDY_ERR_INTERNAL,
                                "map-batch: a batched op's type is not its "
                                "item's with the batch in front");
    eddy_ptrmap_put(&s->map, &op->results[0], nv);
  }
  for (uint32_t i = 0; i < s->loop->num_operands; i++) {
    eddy_value_t *res = &s->loop->results[i];
    if (s->kind[i] == MB_INVARIANT) {
      eddy_ir_value_replace_all_uses(res, s->loop->operands[i].value);
    } else if (s->kind[i] == MB_COUNTER) {
      if (!res->uses)
        continue;
      int64_t last = s->start[i] + s->trips;
      const eddy_attr_t *a =
          eddy_ir_dense_attr_from_i64(ctx, res->type, &last, 1);
      eddy_value_t *c = NULL;
      b.loc = s->loop->loc;
      EDDY_RETURN_IF_ERROR(eddy_ir_build_constant(&b, a, &c));
      eddy_ir_value_replace_all_uses(res, c);
    } else {
      eddy_value_t *item =
          mb_get(s, yield->operands[i].value->def->operands[2].value);
      while (res->uses) {
        eddy_op_t *stack = res->uses->owner;
        if (stack->results[0].type != item->type)
          return eddy_status_create(EDDY_ERR_INTERNAL,
                                    "map-batch: a stack's type differs from "
                                    "the batched items'");
        eddy_ir_value_replace_all_uses(&stack->results[0], item);
        eddy_ir_op_erase(stack);
      }
    }
  }
  eddy_ir_op_erase(s->loop);
  return NULL;
}

static eddy_status_t mb_loop(eddy_op_t *loop, int64_t *batched) {
  uint32_t n = loop->num_operands;
  mb_t s = {.loop = loop, .body = eddy_ctl_while_body(loop)};
  s.start = calloc(n ? n : 1, sizeof *s.start);
  s.kind = calloc(n ? n : 1, sizeof *s.kind);
  if (!s.start || !s.kind) {
    free(s.start);
    free(s.kind);
    return eddy_status_create(EDDY_ERR_RESOURCE, "map-batch: out of memory");
  }
  eddy_ptrmap_init(&s.cls);
  eddy_ptrmap_init(&s.map);
  eddy_status_t st = NULL;
  if (mb_match(&s)) {
    st = mb_rewrite(&s);
    (*batched)++;
  }
  eddy_ptrmap_destroy(&s.cls);
  eddy_ptrmap_destroy(&s.map);
  free(s.start);
  free(s.kind);
  return st;
}

static eddy_status_t mb_run(eddy_pass_ctx_t *pc, eddy_module_t *m) {
  // Inner loops first: a batched inner loop becomes ops of the outer body,
  // which may then batch too.
  eddy_op_t **loops = NULL;
  size_t n = 0;
  EDDY_RETURN_IF_ERROR(eddy_passes_collect_loops(m, &loops, &n));
  int64_t batched = 0;
  eddy_status_t st = NULL;
  for (size_t i = 0; i < n && !st; i++)
    st = mb_loop(loops[i], &batched);
  free(loops);
  if (batched) {
    eddy_ir_pass_stat_add(pc, "batched-loops", batched);
    eddy_ir_pass_mark_changed(pc);
  }
  return st;
}

const eddy_pass_t eddy_pass_map_batch = {
    .name = "map-batch",
    .summary = "run a ctl.while whose iterations are independent (a map_fn) "
               "as batched ops",
    .run = mb_run,
};

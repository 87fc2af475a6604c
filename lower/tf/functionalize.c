/// functionalize: raises TensorFlow v1 control flow to ctl.while / ctl.if.
///
/// The v1 gradients' resources get SSA form first: TensorArray gradient
/// flows carry their lists (tensor_arrays.c), stacks become values threaded
/// through the frames and conds they are used in (stacks.c), and a lowered
/// Case (_SwitchN, Merges of N inputs) becomes two-way Switches and Merges
/// (switch_n.c). Then diamonds
/// and frames, the innermost construct of either kind first (a loop may sit
/// in a branch, a cond in a loop body). Switch/Merge diamonds: the switches
/// that share a predicate (not a LoopCond) open a diamond; the ops
/// reachable from their true outputs up to the Merges form the then branch,
/// from the false outputs the else branch; each Merge becomes a result of a
/// ctl.if whose regions capture the switched values. A cond and the
/// gradient cond on its predicate are told apart first (cond_stages.c).
/// Loop frames: the ops reachable from a frame's Enters up to its Exits
/// form the frame; each Merge/Switch/NextIteration/Exit chain is one loop
/// value; the ops the LoopCond depends on are cloned into the cond region,
/// all other ops of the frame into the body; Enters with is_constant become
/// captured values. Control tokens inside a frame are cloned with it; a token of a
/// frame used outside becomes the df.control of the loop's results.
///
/// The same code raises df frames (to-dataflow's output) through a table of
/// op names; the few differences that make the round trip exact are marked
/// `nm->df` here and in functionalize_df.c (docs/lowering.md).
#include "lower/tf/tf_lower_internal.h"

#include <stdlib.h>
#include <string.h>

/// ---- Small helpers -----------------------------------------------------------

/// The names of the five primitives (and the predicate's Identity) in the
/// dialect being raised: tf (an imported v1 graph) or df (to-dataflow's
/// output). The raising is the same; df adds the normalizations of
/// functionalize_df.c so that functionalize(to-dataflow(f)) prints as f.
typedef struct cf_names {
  const char *sw, *merge, *enter, *exit, *next, *loop_cond, *identity;
  bool df;
} cf_names_t;

static const cf_names_t tf_names = {"tf.Switch", "tf.Merge", "tf.Enter",
                                    "tf.Exit", "tf.NextIteration",
                                    "tf.LoopCond", "tf.Identity", false};
static const cf_names_t df_names = {"df.switch", "df.merge", "df.enter",
                                    "df.exit", "df.next_iteration",
                                    "df.loop_cond", "df.identity", true};

typedef struct oplist {
  eddy_op_t **v;
  size_t n, cap;
} oplist_t;

static void ol_push(oplist_t *l, eddy_op_t *op) {
  if (l->n == l->cap) {
    size_t nc = l->cap ? l->cap * 2 : 32;
    eddy_op_t **nv = realloc(l->v, nc * sizeof(*nv));
    if (!nv)
      abort(); // like the arena: the IR cannot go on without memory
    l->v = nv;
    l->cap = nc;
  }
  l->v[l->n++] = op;
}

static void ol_free(oplist_t *l) {
  free(l->v);
  memset(l, 0, sizeof *l);
}

static const char *node(const eddy_op_t *op) {
  return op->loc && op->loc->file ? op->loc->file->str : "?";
}

static eddy_status_t err_at(const eddy_op_t *op, const char *fmt,
                            const char *a, const char *b) {
  char msg[512];
  snprintf(msg, sizeof msg, fmt, a, b);
  eddy_buf_t loc;
  eddy_buf_init(&loc);
  eddy_ir_loc_format(op->loc, &loc);
  eddy_status_t st = eddy_status_create_at(EDDY_ERR_UNSUPPORTED, loc.data,
                                           "%s", msg);
  eddy_buf_destroy(&loc);
  return st;
}

static bool op_after(const eddy_op_t *point, const eddy_op_t *op) {
  for (const eddy_op_t *p = point; p; p = p->next)
    if (p == op)
      return true;
  return false;
}

/// ---- Block order -------------------------------------------------------------

typedef struct sort_deps {
  eddy_block_t *b;
  eddy_ptrmap_t *index; ///< op -> position + 1
  size_t *edges;        ///< pairs (from, to)
  size_t n, cap;
  size_t to;
  bool oom;
} sort_deps_t;

static eddy_walk_result_t sort_walk(eddy_op_t *op, void *user) {
  sort_deps_t *sd = user;
  bool merge = tfl_is(op, "tf.Merge") || tfl_is(op, "df.merge");
  for (uint32_t k = 0; k < op->num_operands; k++) {
    eddy_op_t *d = eddy_ir_op_operand(op, k)->def;
    d = d ? tfl_in_block(d, sd->b) : NULL;
    if (!d || (merge && (tfl_is(d, "tf.NextIteration") ||
                         tfl_is(d, "df.next_iteration"))))
      continue; // a back edge
    size_t from = (size_t)(uintptr_t)eddy_ptrmap_get(sd->index, d) - 1;
    if (from == sd->to)
      continue; // a value of a region of the op itself
    if (sd->n == sd->cap) {
      size_t nc = sd->cap ? sd->cap * 2 : 256;
      size_t *ne = realloc(sd->edges, nc * 2 * sizeof(*ne));
      if (!ne) {
        sd->oom = true;
        return EDDY_WALK_INTERRUPT;
      }
      sd->edges = ne;
      sd->cap = nc;
    }
    sd->edges[2 * sd->n] = from;
    sd->edges[2 * sd->n + 1] = sd->to;
    sd->n++;
  }
  return EDDY_WALK_ADVANCE;
}

/// Min-heap of positions.
static void heap_push(size_t *h, size_t *n, size_t v) {
  size_t i = (*n)++;
  for (; i > 0 && h[(i - 1) / 2] > v; i = (i - 1) / 2)
    h[i] = h[(i - 1) / 2];
  h[i] = v;
}

static size_t heap_pop(size_t *h, size_t *n) {
  size_t top = h[0], v = h[--*n], i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= *n)
      break;
    if (c + 1 < *n && h[c + 1] < h[c])
      c++;
    if (h[c] >= v)
      break;
    h[i] = h[c];
    i = c;
  }
  h[i] = v;
  return top;
}

void eddy_tfl_block_sort(eddy_block_t *b) {
  eddy_op_t *term = eddy_ir_block_terminator(b);
  size_t n = 0;
  for (eddy_op_t *op = b->first; op && op != term; op = op->next)
    n++;
  if (n < 2)
    return;
  eddy_ptrmap_t index;
  eddy_ptrmap_init(&index);
  sort_deps_t sd = {.b = b, .index = &index};
  eddy_op_t **ops = malloc(n * sizeof(*ops));
  size_t *indeg = calloc(n, sizeof(*indeg)),
         *start = calloc(n + 1, sizeof(*start));
  size_t *succ = NULL, *placed = NULL, *heap = malloc(n * sizeof(*heap));
  size_t i = 0, nh = 0, emitted = 0;
  if (!ops || !indeg || !start || !heap)
    goto out;
  for (eddy_op_t *op = b->first; op != term; op = op->next, i++) {
    ops[i] = op;
    eddy_ptrmap_put(&index, op, (void *)(uintptr_t)(i + 1));
  }
  for (i = 0; i < n && !sd.oom; i++) {
    sd.to = i;
    eddy_ir_walk_pre(ops[i], sort_walk, &sd);
  }
  succ = malloc((sd.n + 1) * sizeof(*succ));
  if (sd.oom || !succ)
    goto out;
  for (size_t e = 0; e < sd.n; e++) {
    start[sd.edges[2 * e] + 1]++;
    indeg[sd.edges[2 * e + 1]]++;
  }
  for (i = 0; i < n; i++)
    start[i + 1] += start[i];
  placed = malloc(n * sizeof(*placed));
  if (!placed)
    goto out;
  for (i = 0; i < n; i++) // placed[] is the fill cursor per op here
    placed[i] = start[i];
  for (size_t e = 0; e < sd.n; e++)
    succ[placed[sd.edges[2 * e]]++] = sd.edges[2 * e + 1];
  for (i = 0; i < n; i++)
    if (!indeg[i])
      heap_push(heap, &nh, i);
  // Of the ops whose operands are placed, the first by position goes next.
  while (nh) {
    size_t v = heap_pop(heap, &nh);
    placed[emitted++] = v;
    for (size_t e = start[v]; e < start[v + 1]; e++)
      if (--indeg[succ[e]] == 0)
        heap_push(heap, &nh, succ[e]);
  }
  if (emitted == n) {
    eddy_op_t **sorted = malloc(n * sizeof(*sorted));
    if (sorted) {
      for (i = 0; i < n; i++)
        sorted[i] = ops[placed[i]];
      for (i = 0; i < n; i++) {
        eddy_ir_op_remove(sorted[i]);
        if (term)
          eddy_ir_op_insert_before(sorted[i], term);
        else
          eddy_ir_op_append(sorted[i], b);
      }
      free(sorted);
    }
  }
out:
  free(placed);
  free(ops);
  free(indeg);
  free(start);
  free(succ);
  free(heap);
  free(sd.edges);
  eddy_ptrmap_destroy(&index);
}

void eddy_tfl_drop_token_use(eddy_op_t *op, uint32_t index, int depth) {
  bool after = tfl_is(op, "df.after");
  uint32_t left = op->num_operands - 1;
  if (after && left == 1 && index == 1) {
    eddy_ir_value_replace_all_uses(&op->results[0], eddy_ir_op_operand(op, 0));
    eddy_ir_op_erase(op);
    return;
  }
  if (!after && left == 0 && op->num_results == 1 && depth <= 16) {
    eddy_value_t *t = &op->results[0];
    while (t->uses)
      eddy_tfl_drop_token_use(t->uses->owner, t->uses->index, depth + 1);
    eddy_ir_op_erase(op);
    return;
  }
  eddy_value_t **keep = malloc((left + 1) * sizeof(*keep));
  if (!keep)
    abort(); // like the arena: the IR cannot go on without memory
  for (uint32_t i = 0, n = 0; i < op->num_operands; i++)
    if (i != index)
      keep[n++] = eddy_ir_op_operand(op, i);
  eddy_ir_op_set_operands(op, keep, left);
  free(keep);
}

/// Forward closure from the results of the seed ops (not included unless
/// they are reached), within block b; ops for which stop() is true are
/// included but not gone through.
typedef bool (*stop_fn_t)(const eddy_op_t *op, const void *user);

static void reach_from_value(eddy_value_t *v, eddy_block_t *b,
                             eddy_ptrmap_t *set, oplist_t *work) {
  for (eddy_use_t *u = v->uses; u; u = u->next) {
    eddy_op_t *o = tfl_in_block(u->owner, b);
    if (o && !eddy_ptrmap_has(set, o)) {
      eddy_ptrmap_put(set, o, o);
      ol_push(work, o);
    }
  }
}

static void close_forward(eddy_block_t *b, eddy_ptrmap_t *set, oplist_t *work,
                          stop_fn_t stop, const void *user) {
  while (work->n) {
    eddy_op_t *op = work->v[--work->n];
    if (stop && stop(op, user))
      continue;
    for (uint32_t i = 0; i < op->num_results; i++)
      reach_from_value(&op->results[i], b, set, work);
  }
}

/// The ops of the set in block order.
static void in_order(eddy_block_t *b, eddy_ptrmap_t *set, oplist_t *out) {
  for (eddy_op_t *op = b->first; op; op = op->next)
    if (eddy_ptrmap_has(set, op))
      ol_push(out, op);
}

/// Moves the definitions of values used in `root` (and in its regions)
/// that come after `root` in its block to before it, with what they use.
static void hoist_value(const cf_names_t *nm, eddy_value_t *v,
                        eddy_op_t *root, int depth) {
  eddy_op_t *d = v->def ? tfl_in_block(v->def, root->block) : NULL;
  // A Merge closes a loop cycle: it is never moved (nor anything through
  // it).
  if (!d || d == root || depth > 256 || eddy_ir_op_is(d, nm->merge) ||
      !op_after(root, d))
    return;
  eddy_ir_op_move_before(d, root);
  for (uint32_t i = 0; i < d->num_operands; i++)
    hoist_value(nm, eddy_ir_op_operand(d, i), d, depth + 1);
}

typedef struct hoist_ctx {
  const cf_names_t *nm;
  eddy_op_t *root;
} hoist_ctx_t;

static eddy_walk_result_t hoist_walk(eddy_op_t *op, void *user) {
  hoist_ctx_t *h = user;
  for (uint32_t i = 0; i < op->num_operands; i++)
    hoist_value(h->nm, eddy_ir_op_operand(op, i), h->root, 0);
  return EDDY_WALK_ADVANCE;
}

/// Erases the ops of a set: operands dropped first (back edges), ops with
/// regions before the others (their regions may use the others).
static eddy_status_t erase_all(oplist_t *ops) {
  for (size_t i = 0; i < ops->n; i++)
    eddy_ir_op_set_operands(ops->v[i], NULL, 0);
  // Nested ops of region ops may still use the set's values; once the
  // region ops are gone nothing else may.
  for (size_t i = 0; i < ops->n; i++)
    for (uint32_t r = 0; r < ops->v[i]->num_results; r++)
      for (eddy_use_t *u = ops->v[i]->results[r].uses; u; u = u->next) {
        bool inside = false;
        for (size_t k = 0; k < ops->n && !inside; k++)
          inside = ops->v[k]->num_regions &&
                   eddy_ir_op_is_ancestor(ops->v[k], u->owner);
        if (!inside)
          return err_at(ops->v[i], "internal: '%s' is still used by '%s'",
                        node(ops->v[i]), node(u->owner));
      }
  // The ops with regions go last to first: a region may use the results
  // of an earlier op with regions (the list is in block order).
  for (int pass = 0; pass < 2; pass++)
    for (size_t k = 0; k < ops->n; k++) {
      size_t i = pass == 0 ? ops->n - 1 - k : k;
      if (!ops->v[i] || (pass == 0) != (ops->v[i]->num_regions > 0))
        continue;
      eddy_ir_op_erase(ops->v[i]);
      ops->v[i] = NULL;
    }
  return NULL;
}

/// Redirects the uses outside `set` of the set's values: results listed in
/// from[] go to to[]; tokens go to `token` (built on demand by the caller:
/// NULL means none may be used); anything else is an error.
static eddy_status_t redirect_outside(eddy_block_t *b, oplist_t *ops,
                                      eddy_ptrmap_t *set,
                                      eddy_value_t *const *from,
                                      eddy_value_t *const *to, size_t n,
                                      eddy_value_t *token,
                                      const char *what) {
  for (size_t i = 0; i < n; i++)
    if (from[i])
      eddy_ir_value_replace_all_uses(from[i], to[i]);
  for (size_t k = 0; k < ops->n; k++) {
    eddy_op_t *op = ops->v[k];
    for (uint32_t r = 0; r < op->num_results; r++) {
      eddy_value_t *v = &op->results[r];
      eddy_use_t *u = v->uses;
      while (u) {
        eddy_use_t *next = u->next;
        eddy_op_t *o = tfl_in_block(u->owner, b);
        if (o && !eddy_ptrmap_has(set, o)) {
          if (v->type->kind == EDDY_TYPE_TOKEN && token)
            eddy_ir_op_set_operand(u->owner, u->index, token);
          else
            return err_at(op, "a value of this %s is used outside it "
                              "(by node '%s') other than through its exits",
                          what, node(u->owner));
        }
        u = next;
      }
    }
  }
  return NULL;
}

/// Clones ops (block order) to the end of dst with map.
static void clone_into(oplist_t *ops, eddy_block_t *dst, eddy_ptrmap_t *map) {
  for (size_t i = 0; i < ops->n; i++)
    eddy_ir_op_append(eddy_ir_op_clone(ops->v[i], map), dst);
}

static eddy_value_t *mapped(eddy_ptrmap_t *map, eddy_value_t *v) {
  eddy_value_t *r = eddy_ptrmap_get(map, v);
  return r ? r : v;
}

static eddy_status_t build_term(eddy_ctx_t *ctx, eddy_block_t *b,
                                const char *name, eddy_value_t **vals,
                                size_t n, const eddy_loc_t *loc) {
  eddy_builder_t bb;
  eddy_ir_builder_init(&bb, ctx);
  eddy_ir_builder_set_end(&bb, b);
  eddy_op_state_t st = {
      .name = name, .operands = vals, .num_operands = n, .loc = loc};
  eddy_op_t *t = NULL;
  return eddy_ir_build(&bb, &st, &t);
}

/// A df.control token of vals, after `after`.
static eddy_status_t token_of(eddy_ctx_t *ctx, eddy_op_t *after,
                              eddy_value_t **vals, size_t n,
                              eddy_value_t **out) {
  *out = NULL;
  if (n == 0)
    return NULL;
  eddy_builder_t bb;
  eddy_ir_builder_init(&bb, ctx);
  eddy_ir_builder_set_after(&bb, after);
  const eddy_type_t *tt = eddy_ir_token_type_get(ctx);
  eddy_op_state_t st = {.name = "df.control",
                        .operands = vals,
                        .num_operands = n,
                        .result_types = &tt,
                        .num_results = 1,
                        .loc = after->loc};
  eddy_op_t *t = NULL;
  EDDY_RETURN_IF_ERROR(eddy_ir_build(&bb, &st, &t));
  *out = eddy_ir_op_result(t, 0);
  return NULL;
}

/// Where a raised construct goes: before the first op outside the set that
/// uses one of its values, else after its last op.
static eddy_op_t *insertion_point(eddy_block_t *b, oplist_t *ops,
                                  eddy_ptrmap_t *set, bool *at_end) {
  *at_end = false;
  eddy_ptrmap_t users;
  eddy_ptrmap_init(&users);
  for (size_t k = 0; k < ops->n; k++)
    for (uint32_t r = 0; r < ops->v[k]->num_results; r++)
      for (eddy_use_t *u = ops->v[k]->results[r].uses; u; u = u->next) {
        eddy_op_t *o = tfl_in_block(u->owner, b);
        if (o && !eddy_ptrmap_has(set, o))
          eddy_ptrmap_put(&users, o, o);
      }
  eddy_op_t *found = NULL;
  for (eddy_op_t *op = ops->v[0]; op && !found && users.len; op = op->next)
    if (eddy_ptrmap_has(&users, op))
      found = op;
  eddy_ptrmap_destroy(&users);
  if (found)
    return found;
  eddy_op_t *last = ops->v[ops->n - 1];
  if (last->next)
    return last->next;
  *at_end = true;
  return last;
}

/// ---- Diamonds -----------------------------------------------------------------

static bool stop_at_merge(const eddy_op_t *op, const void *user) {
  const cf_names_t *nm = user;
  return tfl_is(op, nm->merge);
}

/// A cond's switches test the predicate directly or through Identity
/// (TensorFlow's pred_id): they belong together.
static eddy_value_t *pred_root(const cf_names_t *nm, eddy_value_t *v) {
  for (int i = 0; i < 64 && v->def && tfl_is(v->def, nm->identity); i++)
    v = eddy_ir_op_operand(v->def, 0);
  return v;
}

static eddy_value_t *switch_pred(const cf_names_t *nm,
                                 const eddy_op_t *sw) {
  return pred_root(nm, eddy_ir_op_operand(sw, 1));
}

static bool is_loop_switch(const cf_names_t *nm, const eddy_op_t *sw) {
  eddy_value_t *p = eddy_ir_op_operand(sw, 1);
  return p->def && tfl_is(p->def, nm->loop_cond);
}

/// df: the switch to-dataflow makes first for each ctl.if, switch(p, p),
/// whose outputs are the branches' pivots (df.control).
static bool is_pred_switch(const cf_names_t *nm, const eddy_op_t *op) {
  if (!nm->df || !tfl_is(op, nm->sw) || is_loop_switch(nm, op) ||
      eddy_ir_op_operand(op, 0) != eddy_ir_op_operand(op, 1))
    return false;
  for (eddy_use_t *u = op->results[1].uses; u; u = u->next)
    if (tfl_is(u->owner, "df.control"))
      return true;
  return false;
}

/// Every use of a becomes a use of b and the other way round.
static void swap_result_uses(eddy_value_t *a, eddy_value_t *b) {
  size_t na = eddy_ir_value_num_uses(a), nb = eddy_ir_value_num_uses(b);
  eddy_use_t **ua = calloc(na + nb + 1, sizeof(*ua));
  if (!ua)
    return;
  size_t n = 0;
  for (eddy_use_t *u = a->uses; u; u = u->next)
    ua[n++] = u;
  for (eddy_use_t *u = b->uses; u; u = u->next)
    ua[n++] = u;
  for (size_t i = 0; i < n; i++) {
    eddy_op_t *o = ua[i]->owner;
    uint32_t k = ua[i]->index;
    eddy_ir_op_set_operand(o, k, i < na ? b : a);
  }
  free(ua);
}

/// The value_index of cond Merge m, raised to ifop: pred ? (index of the
/// then input) : (index of the else input), as tf ops after ifop.
static eddy_status_t merge_value_index(eddy_ctx_t *ctx, eddy_op_t *ifop,
                                       eddy_value_t *pred, eddy_op_t *m,
                                       eddy_value_t *then_in) {
  int32_t k_then = eddy_ir_op_operand(m, 0) == then_in ? 0 : 1;
  int32_t idx[2] = {k_then, 1 - k_then};
  const eddy_type_t *it = eddy_ir_scalar_type_get(ctx, EDDY_DT_I32);
  eddy_builder_t bb;
  eddy_ir_builder_init(&bb, ctx);
  eddy_ir_builder_set_after(&bb, ifop);
  eddy_value_t *sel[3] = {pred, NULL, NULL};
  for (int i = 0; i < 2; i++) {
    eddy_named_attr_t ca = eddy_ir_named_attr(
        ctx, "value", eddy_ir_dense_attr_get(ctx, it, &idx[i], sizeof idx[i]));
    eddy_op_t *c = NULL;
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_make(&bb, "tf.Const", NULL, 0, &ca, 1, &it, 1, m->loc, &c));
    sel[1 + i] = eddy_ir_op_result(c, 0);
  }
  eddy_op_t *s = NULL;
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_make(&bb, "tf.SelectV2", sel, 3, NULL, 0, &it, 1, m->loc, &s));
  eddy_ir_value_replace_all_uses(&m->results[1], eddy_ir_op_result(s, 0));
  return NULL;
}

/// A Switch on `pred` inside the branch of the cond on `pred` that is
/// taken when pred is `side` (TensorFlow's gradient of the gradient's
/// Switch, in a second-order gradient of a cond, switches a value of the
/// branch on the same predicate again): its output `side` is its input,
/// the other output is never taken. The switch goes when nothing reads
/// that other output.
static void fold_inner_switches(const cf_names_t *nm, eddy_block_t *blk,
                                eddy_value_t *pred, uint32_t side) {
  for (eddy_op_t *op = blk->first, *next; op; op = next) {
    next = op->next;
    if (!tfl_is(op, nm->sw) || is_loop_switch(nm, op) ||
        switch_pred(nm, op) != pred ||
        eddy_ir_value_has_uses(&op->results[1 - side]))
      continue;
    eddy_ir_value_replace_all_uses(&op->results[side],
                                   eddy_ir_op_operand(op, 0));
    eddy_ir_op_erase(op);
  }
}

/// Raises the diamond of the switches on predicate `pred` in block b;
/// *raised false when it is not innermost (another diamond's switch is
/// inside it).
static eddy_status_t raise_diamond(eddy_ctx_t *ctx, const cf_names_t *nm,
                                   eddy_block_t *b, eddy_value_t *pred,
                                   eddy_op_t *start, bool *raised) {
  *raised = false;
  eddy_ptrmap_t tset, eset, all;
  eddy_ptrmap_init(&tset);
  eddy_ptrmap_init(&eset);
  eddy_ptrmap_init(&all);
  oplist_t work = {0}, sws = {0}, tops = {0}, eops = {0}, merges = {0},
           allops = {0};
  eddy_status_t st = NULL;
  // df: the ifs on one predicate are told apart by position: each starts
  // at its own predicate switch (`start`), and its switches come before the
  // next one's.
  for (eddy_op_t *op = start ? start : b->first; op; op = op->next) {
    if (start && op != start && is_pred_switch(nm, op) &&
        switch_pred(nm, op) == pred)
      break;
    if (tfl_is(op, nm->sw) && switch_pred(nm, op) == pred)
      ol_push(&sws, op);
  }
  for (size_t i = 0; i < sws.n; i++) {
    reach_from_value(&sws.v[i]->results[1], b, &tset, &work);
    close_forward(b, &tset, &work, stop_at_merge, nm);
    reach_from_value(&sws.v[i]->results[0], b, &eset, &work);
    close_forward(b, &eset, &work, stop_at_merge, nm);
  }
  // An inner diamond, or a loop inside a branch, is raised first.
  for (eddy_op_t *op = b->first; op; op = op->next)
    if ((eddy_ptrmap_has(&tset, op) || eddy_ptrmap_has(&eset, op)) &&
        ((tfl_is(op, nm->sw) && !is_loop_switch(nm, op) &&
          switch_pred(nm, op) != pred) ||
         tfl_is(op, nm->enter)))
      goto done;
  // tf: a cond and the gradient cond on the same predicate are two.
  if (!nm->df) {
    st = eddy_tfl_cond_first_stage(ctx, b, pred, sws.v, &sws.n, &tset, &eset);
    if (st)
      goto done;
  }
  // The merges reached from either side close the diamond.
  for (eddy_op_t *op = b->first; op; op = op->next) {
    bool t = eddy_ptrmap_has(&tset, op), e = eddy_ptrmap_has(&eset, op);
    if (!t && !e)
      continue;
    if (tfl_is(op, nm->merge)) {
      ol_push(&merges, op);
      continue;
    }
    if (op == eddy_ir_block_terminator(b)) {
      st = err_at(op, "a branch of the cond on '%s' reaches the end of the "
                      "function without a Merge%s",
                  pred->def ? node(pred->def) : "?", "");
      goto done;
    }
    if (t && e) {
      st = err_at(op, "node '%s' is reached from both branches of the cond "
                      "on '%s'",
                  node(op), pred->def ? node(pred->def) : "?");
      goto done;
    }
    ol_push(t ? &tops : &eops, op);
  }
  if (merges.n == 0 && !nm->df) { // df: an if with no results
    st = err_at(sws.v[0], "the switch '%s' has no Merge closing its cond%s",
                node(sws.v[0]), "");
    goto done;
  }
  // Then/else inputs of each merge.
  eddy_value_t **tv = calloc(merges.n + 1, sizeof(*tv));
  eddy_value_t **ev = calloc(merges.n + 1, sizeof(*ev));
  const eddy_type_t **types = calloc(merges.n + 1, sizeof(*types));
  if (!tv || !ev || !types) {
    free(tv);
    free(ev);
    free(types);
    st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < merges.n && !st; i++) {
    eddy_op_t *m = merges.v[i];
    if (m->num_operands != 2) {
      st = err_at(m, "the Merge '%s' of a cond has %s inputs, expected 2",
                  node(m), "more or fewer");
      break;
    }
    for (uint32_t k = 0; k < 2; k++) {
      eddy_value_t *v = eddy_ir_op_operand(m, k);
      eddy_op_t *d = v->def ? tfl_in_block(v->def, b) : NULL;
      bool t =
          d &&
          (eddy_ptrmap_has(&tset, d) ||
           (tfl_is(d, nm->sw) && v->index == 1 && switch_pred(nm, d) == pred));
      bool e =
          d &&
          (eddy_ptrmap_has(&eset, d) ||
           (tfl_is(d, nm->sw) && v->index == 0 && switch_pred(nm, d) == pred));
      if (t && !tv[i])
        tv[i] = v;
      else if (e && !ev[i])
        ev[i] = v;
    }
    if (!tv[i] || !ev[i])
      st = err_at(m, "the Merge '%s' does not join the two branches of the "
                     "cond on '%s'",
                  node(m), pred->def ? node(pred->def) : "?");
    else if (nm->df) // the if's declared type, as to-dataflow wrote it
      types[i] = m->results[0].type;
    else
      types[i] = eddy_ir_type_generalize(ctx, tv[i]->type, ev[i]->type);
    if (!st && !types[i])
      types[i] = m->results[0].type;
    if (!st && nm->df && eddy_ir_value_has_uses(&m->results[1]))
      st = err_at(m, "the value_index of the Merge '%s' is used%s", node(m),
                  "");
  }
  if (!st) {
    for (size_t i = 0; i < sws.n; i++)
      eddy_ptrmap_put(&all, sws.v[i], sws.v[i]);
    for (size_t i = 0; i < tops.n; i++)
      eddy_ptrmap_put(&all, tops.v[i], tops.v[i]);
    for (size_t i = 0; i < eops.n; i++)
      eddy_ptrmap_put(&all, eops.v[i], eops.v[i]);
    for (size_t i = 0; i < merges.n; i++)
      eddy_ptrmap_put(&all, merges.v[i], merges.v[i]);
    in_order(b, &all, &allops);
    bool at_end = true;
    eddy_op_t *point = allops.v[allops.n - 1];
    if (!nm->df) // df: where to-dataflow left it, after the last merge
      point = insertion_point(b, &allops, &all, &at_end);
    eddy_builder_t bb;
    eddy_ir_builder_init(&bb, ctx);
    if (at_end)
      eddy_ir_builder_set_after(&bb, point);
    else
      eddy_ir_builder_set_before(&bb, point);
    eddy_value_t *p = pred;
    eddy_op_state_t s = {.name = "ctl.if",
                         .operands = &p,
                         .num_operands = 1,
                         .result_types = types,
                         .num_results = merges.n,
                         .num_regions = 2,
                         .loc = merges.n ? merges.v[0]->loc : sws.v[0]->loc};
    eddy_op_t *ifop = NULL;
    st = eddy_ir_build(&bb, &s, &ifop);
    for (int r = 0; r < 2 && !st; r++) {
      eddy_block_t *blk = eddy_ir_region_add_block(&ifop->regions[r]);
      eddy_ptrmap_t map;
      eddy_ptrmap_init(&map);
      for (size_t i = 0; i < sws.n; i++)
        eddy_ptrmap_put(&map, &sws.v[i]->results[r == 0 ? 1 : 0],
                        eddy_ir_op_operand(sws.v[i], 0));
      clone_into(r == 0 ? &tops : &eops, blk, &map);
      eddy_value_t **ys = calloc(merges.n + 1, sizeof(*ys));
      for (size_t i = 0; ys && i < merges.n; i++)
        ys[i] = mapped(&map, r == 0 ? tv[i] : ev[i]);
      st = ys ? build_term(ctx, blk, "ctl.yield", ys, merges.n, ifop->loc)
              : eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
      if (!st && !nm->df)
        fold_inner_switches(nm, blk, pred, r == 0 ? 1 : 0);
      free(ys);
      eddy_ptrmap_destroy(&map);
    }
    // A Merge's value_index (second-order gradients of a cond read it): the
    // index of the input the taken branch reached it by.
    for (size_t i = 0; i < merges.n && !st; i++)
      if (eddy_ir_value_has_uses(&merges.v[i]->results[1]))
        st = merge_value_index(ctx, ifop, pred, merges.v[i], tv[i]);
    if (!st) {
      hoist_ctx_t hc = {nm, ifop};
      eddy_ir_walk_pre(ifop, hoist_walk, &hc);
      eddy_value_t **from = calloc(merges.n + 1, sizeof(*from));
      eddy_value_t **to = calloc(merges.n + 1, sizeof(*to));
      for (size_t i = 0; from && to && i < merges.n; i++) {
        from[i] = &merges.v[i]->results[0];
        to[i] = eddy_ir_op_result(ifop, i);
      }
      eddy_value_t *tok = NULL;
      st = token_of(ctx, ifop, to, merges.n, &tok);
      if (!st)
        st = redirect_outside(b, &allops, &all, from, to, merges.n, tok,
                              "cond");
      free(from);
      free(to);
    }
    if (!st) {
      st = erase_all(&allops);
      *raised = !st;
    }
  }
  free(tv);
  free(ev);
  free(types);
done:
  ol_free(&work);
  ol_free(&sws);
  ol_free(&tops);
  ol_free(&eops);
  ol_free(&merges);
  ol_free(&allops);
  eddy_ptrmap_destroy(&tset);
  eddy_ptrmap_destroy(&eset);
  eddy_ptrmap_destroy(&all);
  return st;
}

static eddy_status_t raise_diamonds(eddy_ctx_t *ctx, const cf_names_t *nm,
                                    eddy_block_t *b) {
  for (;;) {
    bool any = false, progress = false;
    for (eddy_op_t *op = b->first; op && !progress; op = op->next) {
      if (!tfl_is(op, nm->sw) || is_loop_switch(nm, op))
        continue;
      any = true;
      EDDY_RETURN_IF_ERROR(
          raise_diamond(ctx, nm, b, switch_pred(nm, op), NULL, &progress));
    }
    if (!any)
      return NULL;
    if (!progress) {
      for (eddy_op_t *op = b->first; op; op = op->next)
        if (tfl_is(op, nm->sw) && !is_loop_switch(nm, op))
          return err_at(op, "the conds around the switch '%s' cannot be "
                            "raised (they are not nested properly)%s",
                        node(op), "");
    }
  }
}

/// ---- Loop frames -------------------------------------------------------------

static const char *frame_of(const eddy_op_t *enter, size_t *len) {
  const eddy_attr_t *a = eddy_ir_op_attr(enter, "frame_name");
  if (!a || a->kind != EDDY_ATTR_STRING) {
    *len = 0;
    return "";
  }
  *len = a->u.str.len;
  return a->u.str.data;
}

static bool same_frame(const eddy_op_t *enter, const char *f, size_t len) {
  size_t l = 0;
  const char *g = frame_of(enter, &l);
  return l == len && memcmp(f, g, len) == 0;
}

static bool stop_at_exit(const eddy_op_t *op, const void *user) {
  const cf_names_t *nm = user;
  return tfl_is(op, nm->exit);
}

typedef struct loopvar {
  eddy_op_t *enter, *merge, *sw, *next, *exit;
} loopvar_t;

typedef struct need_ctx {
  eddy_block_t *b;
  eddy_ptrmap_t *need;
} need_ctx_t;

/// Marks the ops (of block b) defining the operands of op and its nested
/// ops.
static eddy_walk_result_t need_walk(eddy_op_t *op, void *user) {
  need_ctx_t *nc = user;
  for (uint32_t k = 0; k < op->num_operands; k++) {
    eddy_op_t *d = eddy_ir_op_operand(op, k)->def;
    d = d ? tfl_in_block(d, nc->b) : NULL;
    if (d)
      eddy_ptrmap_put(nc->need, d, d);
  }
  return EDDY_WALK_ADVANCE;
}

typedef struct cond_ctx {
  eddy_block_t *b;
  eddy_ptrmap_t *set, *cset;
  oplist_t *work;
} cond_ctx_t;

/// Adds to cset (and work) the ops of set (in block b) defining the
/// operands of op and of its nested ops.
static eddy_walk_result_t cond_walk(eddy_op_t *op, void *user) {
  cond_ctx_t *cc = user;
  for (uint32_t k = 0; k < op->num_operands; k++) {
    eddy_op_t *d = eddy_ir_op_operand(op, k)->def;
    d = d ? tfl_in_block(d, cc->b) : NULL;
    if (d && eddy_ptrmap_has(cc->set, d) && !eddy_ptrmap_has(cc->cset, d)) {
      eddy_ptrmap_put(cc->cset, d, d);
      ol_push(cc->work, d);
    }
  }
  return EDDY_WALK_ADVANCE;
}

static eddy_status_t raise_frame(eddy_ctx_t *ctx, const cf_names_t *nm,
                                 eddy_block_t *b,
                                 const char *frame, size_t flen,
                                 bool *raised) {
  *raised = false;
  eddy_ptrmap_t set;
  eddy_ptrmap_init(&set);
  oplist_t work = {0}, ops = {0}, enters = {0};
  loopvar_t *vars = NULL;
  size_t nv = 0;
  eddy_status_t st = NULL;
  eddy_op_t *loopcond = NULL;
  for (eddy_op_t *op = b->first; op; op = op->next)
    if (tfl_is(op, nm->enter) && same_frame(op, frame, flen)) {
      ol_push(&enters, op);
      eddy_ptrmap_put(&set, op, op);
      ol_push(&work, op);
    }
  close_forward(b, &set, &work, stop_at_exit, nm);
  in_order(b, &set, &ops);
  for (size_t i = 0; i < ops.n; i++) {
    eddy_op_t *op = ops.v[i];
    if (tfl_is(op, nm->enter) && !same_frame(op, frame, flen))
      goto done; // an inner frame: raise it first
    if (tfl_is(op, nm->sw) && !is_loop_switch(nm, op))
      goto done; // an if inside the loop is raised first
    if (eddy_ir_op_has_trait(op, EDDY_TRAIT_TERMINATOR)) {
      // A fetch of a value of the frame: only an Exit leaves a loop.
      for (uint32_t k = 0; k < op->num_operands; k++) {
        eddy_op_t *d = eddy_ir_op_operand(op, k)->def;
        if (d && eddy_ptrmap_has(&set, d) && !tfl_is(d, nm->exit)) {
          st = err_at(d, "'%s' is fetched from inside loop frame '%s' "
                         "(a value leaves a loop only through an Exit)",
                      node(d), frame);
          goto done;
        }
      }
    }
    if (tfl_is(op, nm->loop_cond)) {
      if (loopcond) {
        st = err_at(op, "the frame has two LoopConds ('%s' and '%s')",
                    node(loopcond), node(op));
        goto done;
      }
      loopcond = op;
    }
  }
  if (!loopcond) {
    st = err_at(enters.v[0], "the frame of Enter '%s' has no LoopCond%s",
                node(enters.v[0]), "");
    goto done;
  }
  vars = calloc(ops.n + 1, sizeof(*vars));
  if (!vars) {
    st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < ops.n && !st; i++) {
    eddy_op_t *m = ops.v[i];
    if (!tfl_is(m, nm->merge))
      continue;
    loopvar_t lv = {0};
    for (uint32_t k = 0; k < m->num_operands; k++) {
      eddy_op_t *d = eddy_ir_op_operand(m, k)->def;
      if (tfl_is(d, nm->enter) && d->block == b && same_frame(d, frame, flen))
        lv.enter = d;
      else if (tfl_is(d, nm->next))
        lv.next = d;
    }
    if (!lv.enter)
      continue; // a merge of something else (it stays in the body)
    if (!lv.next) {
      st = err_at(m, "the loop Merge '%s' has no NextIteration input%s",
                  node(m), "");
      break;
    }
    if (!eddy_ptrmap_has(&set, lv.next)) {
      st = err_at(m, "the Merge '%s' takes the NextIteration '%s' of "
                     "another frame",
                  node(m), node(lv.next));
      break;
    }
    lv.merge = m;
    for (eddy_use_t *u = m->results[0].uses; u; u = u->next)
      if (tfl_is(u->owner, nm->sw) &&
          eddy_ir_op_operand(u->owner, 1)->def == loopcond)
        lv.sw = u->owner;
    if (lv.sw)
      for (eddy_use_t *u = lv.sw->results[0].uses; u; u = u->next)
        if (tfl_is(u->owner, nm->exit))
          lv.exit = u->owner;
    vars[nv++] = lv;
  }
  // Exits that no loop value explains.
  for (size_t i = 0; i < ops.n && !st; i++) {
    eddy_op_t *x = ops.v[i];
    if (!tfl_is(x, nm->exit))
      continue;
    bool ok = false;
    for (size_t k = 0; k < nv; k++)
      ok = ok || vars[k].exit == x;
    if (!ok)
      st = err_at(x, "the Exit '%s' has no matching Enter (its input is not "
                     "a loop Switch of frame '%s')",
                  node(x), frame);
  }
  if (st)
    goto done;
  // df: to-dataflow's maximum_iterations counter (the last loop value)
  // goes back into the attribute.
  eddy_value_t *cpred = eddy_ir_op_operand(loopcond, 0);
  int64_t max_iters = -1;
  eddy_op_t *skip[8] = {0}, *counter_consts[3] = {0};
  if (nm->df && nv > 1) {
    loopvar_t *c = &vars[nv - 1];
    if (eddy_tfl_df_counter(loopcond, c->enter, c->merge, c->sw, c->next,
                            c->exit, &max_iters, &cpred, skip)) {
      skip[5] = c->merge;
      skip[6] = c->sw;
      skip[7] = c->next;
      nv--;
      counter_consts[0] = eddy_ir_op_operand(c->enter, 0)->def;
      counter_consts[1] = eddy_ir_op_operand(skip[2], 0)->def;
      counter_consts[2] = eddy_ir_op_operand(skip[4], 0)->def;
    }
  }
  {
    const eddy_type_t **types = calloc(nv + 1, sizeof(*types));
    eddy_value_t **inits = calloc(nv + 1, sizeof(*inits));
    eddy_value_t **vals = calloc(nv + 1, sizeof(*vals));
    eddy_value_t **from = calloc(nv + 1, sizeof(*from));
    if (!types || !inits || !vals || !from) {
      st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
    }
    for (size_t k = 0; !st && k < nv; k++) {
      loopvar_t *lv = &vars[k];
      inits[k] = eddy_ir_op_operand(lv->enter, 0);
      const eddy_type_t *t = eddy_ir_type_generalize(
          ctx, inits[k]->type, lv->merge->results[0].type);
      if (t)
        t = eddy_ir_type_generalize(
            ctx, t, eddy_ir_op_operand(lv->next, 0)->type);
      types[k] = t ? t : inits[k]->type;
      if (nm->df) // the loop's declared type, as to-dataflow wrote it
        types[k] = lv->merge->results[0].type;
    }
    eddy_op_t *w = NULL;
    if (!st) {
      bool at_end = false;
      eddy_op_t *point = NULL;
      if (nm->df) { // where to-dataflow left it: after the frame's last op
        point = ops.v[ops.n - 1];
        at_end = true;
      } else {
        point = insertion_point(b, &ops, &set, &at_end);
      }
      eddy_builder_t bb;
      eddy_ir_builder_init(&bb, ctx);
      if (at_end)
        eddy_ir_builder_set_after(&bb, point);
      else
        eddy_ir_builder_set_before(&bb, point);
      int64_t pi = eddy_ir_op_attr_int(enters.v[0], "parallel_iterations", 10);
      eddy_named_attr_t a[3];
      size_t na = 0;
      if (max_iters >= 0)
        a[na++] = eddy_ir_named_attr(
            ctx, "maximum_iterations",
            eddy_ir_int_attr_get(ctx, max_iters, EDDY_DT_I64));
      // df: the attribute only when to-dataflow had one to copy.
      if (!nm->df || eddy_ir_op_attr(enters.v[0], "parallel_iterations"))
        a[na++] = eddy_ir_named_attr(
            ctx, "parallel_iterations",
            eddy_ir_int_attr_get(ctx, pi > 0 ? pi : 10, EDDY_DT_I64));
      const eddy_attr_t *swap =
          nm->df && nv > 0 ? eddy_ir_op_attr(vars[0].enter, "swap_memory")
                           : NULL;
      if (swap)
        a[na++] = eddy_ir_named_attr(ctx, "swap_memory", swap);
      eddy_op_state_t s = {.name = "ctl.while",
                           .operands = inits,
                           .num_operands = nv,
                           .attrs = a,
                           .num_attrs = na,
                           .result_types = types,
                           .num_results = nv,
                           .num_regions = 2,
                           .loc = loopcond->loc};
      st = eddy_ir_build(&bb, &s, &w);
    }
    // Cond: the ops the LoopCond's predicate depends on, inside the frame.
    eddy_ptrmap_t cset;
    eddy_ptrmap_init(&cset);
    oplist_t cwork = {0}, cops = {0}, bops = {0};
    if (!st) {
      eddy_value_t *pred = cpred;
      if (pred->def && eddy_ptrmap_has(&set, pred->def)) {
        eddy_ptrmap_put(&cset, pred->def, pred->def);
        ol_push(&cwork, pred->def);
      }
      // The operands of an op and of the ops nested in it (a cond raised
      // in the loop's condition captures the frame's values in its
      // branches).
      while (cwork.n) {
        eddy_op_t *op = cwork.v[--cwork.n];
        if (tfl_is(op, nm->merge) || tfl_is(op, nm->enter))
          continue;
        cond_ctx_t cc = {b, &set, &cset, &cwork};
        eddy_ir_walk_pre(op, cond_walk, &cc);
      }
      for (size_t i = 0; i < ops.n; i++) {
        eddy_op_t *op = ops.v[i];
        bool structural = tfl_is(op, nm->enter) || tfl_is(op, nm->loop_cond) ||
                          tfl_is(op, nm->exit);
        bool var = false;
        for (size_t k = 0; k < nv; k++)
          var = var || op == vars[k].merge || op == vars[k].sw ||
                op == vars[k].next;
        for (size_t k = 0; k < 8; k++)
          var = var || op == skip[k];
        if (structural || var)
          continue;
        if (eddy_ptrmap_has(&cset, op))
          ol_push(&cops, op);
        ol_push(&bops, op);
      }
      // The body needs the cond's ops only where its own ops use them.
      eddy_ptrmap_t need;
      eddy_ptrmap_init(&need);
      for (size_t i = bops.n; i-- > 0;) {
        eddy_op_t *op = bops.v[i];
        if (eddy_ptrmap_has(&cset, op) && !eddy_ptrmap_has(&need, op))
          continue;
        eddy_ptrmap_put(&need, op, op);
        need_ctx_t nc = {b, &need};
        eddy_ir_walk_pre(op, need_walk, &nc);
      }
      size_t kept = 0;
      for (size_t i = 0; i < bops.n; i++)
        if (eddy_ptrmap_has(&need, bops.v[i]))
          bops.v[kept++] = bops.v[i];
      bops.n = kept;
      eddy_ptrmap_destroy(&need);
    }
    for (int r = 0; r < 2 && !st; r++) {
      eddy_block_t *blk = eddy_ir_region_add_block(&w->regions[r]);
      eddy_ptrmap_t map;
      eddy_ptrmap_init(&map);
      for (size_t k = 0; k < nv; k++) {
        eddy_value_t *arg = eddy_ir_block_add_arg(blk, types[k]);
        eddy_ptrmap_put(&map, &vars[k].merge->results[0], arg);
        // value_index only ever feeds control tokens (df.control of the
        // Merge, TensorFlow's control dependency on it).
        eddy_ptrmap_put(&map, &vars[k].merge->results[1], arg);
        if (vars[k].sw)
          eddy_ptrmap_put(&map, &vars[k].sw->results[1], arg);
      }
      for (size_t i = 0; i < enters.n; i++)
        eddy_ptrmap_put(&map, &enters.v[i]->results[0],
                        eddy_ir_op_operand(enters.v[i], 0));
      oplist_t *region_ops = r == 0 ? &cops : &bops;
      if (nm->df) {
        // df: an inner loop's value from above this loop, tied to this
        // loop's token (df.after(enter, token), to_dataflow.c), is the
        // value itself in structured form.
        size_t kept = 0;
        for (size_t i = 0; i < region_ops->n; i++) {
          eddy_op_t *op = region_ops->v[i];
          eddy_op_t *d =
              tfl_is(op, "df.after") ? eddy_ir_op_operand(op, 0)->def : NULL;
          if (d && tfl_is(d, nm->enter) && d->block == b &&
              same_frame(d, frame, flen) &&
              eddy_ir_op_attr_bool(d, "is_constant", false))
            eddy_ptrmap_put(&map, &op->results[0],
                            eddy_ir_op_operand(d, 0));
          else
            region_ops->v[kept++] = op;
        }
        region_ops->n = kept;
      }
      clone_into(region_ops, blk, &map);
      if (r == 0) {
        eddy_value_t *p = mapped(&map, cpred);
        st = build_term(ctx, blk, "ctl.condition", &p, 1, loopcond->loc);
      } else {
        for (size_t k = 0; k < nv; k++)
          vals[k] = mapped(&map, eddy_ir_op_operand(vars[k].next, 0));
        st = build_term(ctx, blk, "ctl.yield", vals, nv, loopcond->loc);
      }
      eddy_ptrmap_destroy(&map);
    }
    if (!st) {
      hoist_ctx_t hc = {nm, w};
      eddy_ir_walk_pre(w, hoist_walk, &hc);
      for (size_t k = 0; k < nv; k++) {
        from[k] = vars[k].exit ? &vars[k].exit->results[0] : NULL;
        vals[k] = eddy_ir_op_result(w, k);
      }
      eddy_value_t *tok = NULL;
      st = token_of(ctx, w, vals, nv, &tok);
      if (!st)
        st = redirect_outside(b, &ops, &set, from, vals, nv, tok,
                              "loop frame");
    }
    if (!st) {
      st = erase_all(&ops);
      *raised = !st;
    }
    // The counter's constants (and pivots of them) nothing uses any more.
    for (int k = 0; k < 3 && !st; k++)
      for (eddy_op_t *c = counter_consts[k], *nx = NULL;
           c && !eddy_ir_value_has_uses(eddy_ir_op_result(c, 0)); c = nx) {
        nx = tfl_is(c, "df.after") ? eddy_ir_op_operand(c, 0)->def : NULL;
        eddy_ir_op_erase(c);
      }
    eddy_ptrmap_destroy(&cset);
    ol_free(&cwork);
    ol_free(&cops);
    ol_free(&bops);
    free(types);
    free(inits);
    free(vals);
    free(from);
  }
done:
  free(vars);
  ol_free(&work);
  ol_free(&ops);
  ol_free(&enters);
  eddy_ptrmap_destroy(&set);
  return st;
}

static eddy_status_t raise_frames(eddy_ctx_t *ctx, const cf_names_t *nm,
                                  eddy_block_t *b) {
  for (;;) {
    bool any = false, progress = false;
    for (eddy_op_t *op = b->first; op && !progress; op = op->next) {
      if (!tfl_is(op, nm->enter))
        continue;
      any = true;
      size_t len = 0;
      const char *f = frame_of(op, &len);
      EDDY_RETURN_IF_ERROR(raise_frame(ctx, nm, b, f, len, &progress));
    }
    if (!any)
      break;
    if (!progress) {
      for (eddy_op_t *op = b->first; op; op = op->next)
        if (tfl_is(op, nm->enter))
          return err_at(op, "the loop frames around the Enter '%s' cannot "
                            "be raised (they are not nested properly)%s",
                        node(op), "");
    }
  }
  // Leftovers of v1 control flow outside any frame.
  for (eddy_op_t *op = b->first; op; op = op->next) {
    if (tfl_is(op, nm->exit))
      return err_at(op, "the Exit '%s' has no matching Enter%s", node(op), "");
    if (tfl_is(op, nm->next) || tfl_is(op, nm->loop_cond))
      return err_at(op, "the node '%s' is outside every loop frame%s",
                    node(op), "");
  }
  return NULL;
}

/// Loop frames, and conds, nested deeper than this are refused: raising
/// each walks the ones inside it, and real graphs nest a few levels.
#define MAX_NEST_DEPTH 64
#define STR_(x) #x
#define STR(x) STR_(x)

/// The Switch that opens a cond: its predicate is not a LoopCond (df: the
/// switch of the predicate itself that to-dataflow makes for each ctl.if).
static bool is_cond_switch(const cf_names_t *nm, const eddy_op_t *op) {
  return nm->df ? is_pred_switch(nm, op)
                : tfl_is(op, nm->sw) && !is_loop_switch(nm, op);
}

/// The Merge that closes a cond: none of its inputs is a NextIteration.
static bool is_cond_merge(const cf_names_t *nm, const eddy_op_t *op) {
  if (!tfl_is(op, nm->merge))
    return false;
  for (uint32_t i = 0; i < op->num_operands; i++)
    if (tfl_is(eddy_ir_op_operand(op, i)->def, nm->next))
      return false;
  return true;
}

/// The nesting depth of every op of block b, of loop frames or of conds,
/// into *depth (op -> depth + 1), and the deepest opening op's in *out_max,
/// in one pass: an op is as deep as its deepest operand; an Enter's (a cond
/// Switch's) results are one deeper, an Exit's (a cond Merge's) one
/// shallower; a Merge's back edge, defined later, does not count. An op
/// that opens more than MAX_NEST_DEPTH levels is an error naming it.
static eddy_status_t nest_depths(const cf_names_t *nm, eddy_block_t *b,
                                 bool conds, eddy_ptrmap_t *depth,
                                 uintptr_t *out_max) {
  *out_max = 0;
  for (eddy_op_t *op = b->first; op; op = op->next) {
    uintptr_t d = 0;
    for (uint32_t i = 0; i < op->num_operands; i++) {
      eddy_op_t *def = eddy_ir_op_operand(op, i)->def;
      uintptr_t od = def ? (uintptr_t)eddy_ptrmap_get(depth, def) : 0;
      if (od > d + 1)
        d = od - 1;
    }
    bool opens = conds ? is_cond_switch(nm, op) : tfl_is(op, nm->enter);
    bool closes = conds ? is_cond_merge(nm, op) : tfl_is(op, nm->exit);
    if (opens && ++d > MAX_NEST_DEPTH)
      return err_at(op,
                    conds ? "the Switch '%s' opens a cond nested in more than "
                            STR(MAX_NEST_DEPTH) " conds%s"
                          : "the Enter '%s' opens a loop frame nested more "
                            "than " STR(MAX_NEST_DEPTH) " frames deep%s",
                    node(op), "");
    if (opens && d > *out_max)
      *out_max = d;
    if (closes && d > 0)
      d--;
    eddy_ptrmap_put(depth, op, (void *)(d + 1));
  }
  return NULL;
}

/// Raises one cond (conds) or loop frame of block b, the deepest first:
/// nothing of the kind is nested in those, so one is raised at the first
/// try. (Trying them in block order instead, every one around the innermost
/// is tried and refused first, at a cost cubic in the nesting depth: a
/// GraphDef of 400 nested loops, or of 1000 nested conds, took minutes.)
/// Then, as a fallback, every one in block order.
static eddy_status_t raise_deepest(eddy_ctx_t *ctx, const cf_names_t *nm,
                                   eddy_block_t *b, bool conds,
                                   bool *progress) {
  eddy_ptrmap_t depth;
  eddy_ptrmap_init(&depth);
  uintptr_t max = 0;
  eddy_status_t st = nest_depths(nm, b, conds, &depth, &max);
  for (int pass = 0; pass < 2 && !st && !*progress; pass++) {
    for (eddy_op_t *op = b->first; op && !st; op = op->next) {
      if (!(conds ? is_cond_switch(nm, op) : tfl_is(op, nm->enter)) ||
          (pass == 0 && (uintptr_t)eddy_ptrmap_get(&depth, op) != max + 1))
        continue;
      if (conds) {
        st = raise_diamond(ctx, nm, b, switch_pred(nm, op),
                           nm->df ? op : NULL, progress);
      } else {
        size_t len = 0;
        const char *f = frame_of(op, &len);
        st = raise_frame(ctx, nm, b, f, len, progress);
      }
      if (*progress)
        break;
    }
  }
  eddy_ptrmap_destroy(&depth);
  return st;
}

/// Conds and loops nest either way (a loop in a branch, a cond in a loop
/// body), so the innermost construct of either kind goes first. df: each if
/// starts at its own predicate switch (to-dataflow lowers innermost first).
static eddy_status_t raise_nested(eddy_ctx_t *ctx, const cf_names_t *nm,
                                  eddy_block_t *b) {
  for (;;) {
    bool progress = false;
    EDDY_RETURN_IF_ERROR(raise_deepest(ctx, nm, b, true, &progress));
    if (!progress)
      EDDY_RETURN_IF_ERROR(raise_deepest(ctx, nm, b, false, &progress));
    if (!progress)
      break;
  }
  // What is left could not be raised; the shared drivers name it.
  EDDY_RETURN_IF_ERROR(raise_diamonds(ctx, nm, b));
  return raise_frames(ctx, nm, b);
}

/// True when block b holds df control flow to raise.
static bool has_df_frames(eddy_block_t *b) {
  for (eddy_op_t *op = b->first; op; op = op->next)
    if (tfl_is(op, "df.switch") || tfl_is(op, "df.enter"))
      return true;
  return false;
}

bool eddy_tfl_branch_of(eddy_value_t *v, eddy_value_t **out_pred,
                        int *out_branch) {
  eddy_value_t *work[512];
  size_t n = 0, seen = 0;
  work[n++] = v;
  while (seen < n) {
    eddy_value_t *x = work[seen++];
    eddy_op_t *d = x->def;
    if (!d || tfl_is(d, "tf.Merge") || tfl_is(d, "tf.Enter"))
      continue;
    if (tfl_is(d, "tf.Switch") && !is_loop_switch(&tf_names, d)) {
      *out_pred = switch_pred(&tf_names, d);
      *out_branch = (int)x->index;
      return true;
    }
    for (uint32_t i = 0; i < d->num_operands && n < 512; i++)
      work[n++] = eddy_ir_op_operand(d, i);
  }
  return false;
}

/// TensorFlow's gradient of a cond's Merge (second-order gradients of a
/// cond build one) switches on Equal(value_index, k) for each input k: that
/// is the cond's own predicate (k = the then input) or its negation.
/// Switching on the predicate itself, the outputs swapped for the negation,
/// makes these switches one more cond on that predicate, which the raising
/// of the conds on one predicate handles (cond_stages.c).
static void switch_on_merge_preds(eddy_block_t *b) {
  for (eddy_op_t *m = b->first; m; m = m->next) {
    if (!tfl_is(m, "tf.Merge") || m->num_operands != 2 ||
        !eddy_ir_value_has_uses(&m->results[1]))
      continue;
    eddy_value_t *pred = NULL;
    int br = 0;
    if (!eddy_tfl_branch_of(eddy_ir_op_operand(m, 0), &pred, &br))
      continue;
    int64_t k_then = br == 1 ? 0 : 1; // the input that comes from "then"
    for (eddy_use_t *u = m->results[1].uses; u; u = u->next) {
      eddy_op_t *eq = u->owner;
      if (!tfl_is(eq, "tf.Equal") || eq->num_operands != 2)
        continue;
      eddy_value_t *other = eddy_ir_op_operand(eq, 1 - u->index);
      const eddy_attr_t *cv = tfl_is(other->def, "tf.Const")
                                  ? eddy_ir_op_attr(other->def, "value")
                                  : NULL;
      int64_t k = cv && cv->kind == EDDY_ATTR_DENSE &&
                          eddy_ir_type_num_elements(cv->type) == 1
                      ? eddy_ir_dense_attr_i64(cv, 0)
                      : -1;
      if (k != 0 && k != 1)
        continue;
      for (eddy_use_t *w = eq->results[0].uses, *wn; w; w = wn) {
        wn = w->next;
        eddy_op_t *sw = w->owner;
        if (!tfl_is(sw, "tf.Switch") || w->index != 1)
          continue;
        eddy_ir_op_set_operand(sw, 1, pred);
        if (k != k_then)
          swap_result_uses(&sw->results[0], &sw->results[1]);
      }
    }
  }
}

/// A Merge that raising left: no Switch chooses between its inputs, so
/// more than one may be live, and TensorFlow forwards whichever comes first
/// (a race; the v1 interpreter reports it when it happens).
static eddy_walk_result_t find_merge(eddy_op_t *op, void *user) {
  if (!tfl_is(op, tf_names.merge))
    return EDDY_WALK_ADVANCE;
  *(eddy_op_t **)user = op;
  return EDDY_WALK_INTERRUPT;
}

eddy_status_t eddy_tf_functionalize(eddy_module_t *m) {
  for (eddy_op_t *f = eddy_ir_module_body(m)->first; f; f = f->next) {
    if (!eddy_ir_op_is(f, "func.func"))
      continue;
    eddy_block_t *b = eddy_ir_func_entry(f);
    if (!b)
      continue;
    EDDY_RETURN_IF_ERROR(eddy_tfl_thread_tensor_arrays(m->ctx, b));
    EDDY_RETURN_IF_ERROR(eddy_tfl_thread_stacks(m->ctx, b));
    EDDY_RETURN_IF_ERROR(eddy_tfl_split_switch_n(m->ctx, b));
    switch_on_merge_preds(b);
    EDDY_RETURN_IF_ERROR(raise_nested(m->ctx, &tf_names, b));
    if (has_df_frames(b))
      EDDY_RETURN_IF_ERROR(raise_nested(m->ctx, &df_names, b));
    // A constant with a control input (a df.after of it) may have been
    // raised into a frame while the constant stayed behind, after the
    // frame's op: each df.after of a constant becomes a copy of it in place.
    EDDY_RETURN_IF_ERROR(eddy_tfl_df_unpivot(f));
    eddy_op_t *merge = NULL;
    eddy_ir_walk_pre(f, find_merge, &merge);
    if (merge)
      return err_at(merge, "the Merge '%s' is part of no loop or cond: no "
                           "Switch chooses between its inputs, so several "
                           "may be live%s",
                    node(merge), "");
  }
  // legalize-tf translates ops in order and needs every value defined
  // before its uses: a frame raised wrongly is an error here, naming the
  // node, not a broken translation later.
  return eddy_ir_verify_module(m);
}

/// functionalize: the conds on one predicate, told apart.
///
/// The gradient of a v1 cond is a cond on the same predicate
/// ("Implementation of Control Flow in TensorFlow"), and TensorFlow lets
/// values of a forward branch flow into the matching branch of the
/// gradient without a Merge: the gradient of a loop in a branch reads that
/// loop's trip count, gradient ops read the forward branch's switched
/// inputs, a gradient constant waits on the forward branch's pivot. Such a
/// value is dead exactly when the gradient's branch is not taken, so only
/// that branch reads it. Grouped by predicate, the switches of both conds
/// reach the ops of both, and some of those depend on the Merges of the
/// forward cond.
///
/// Each op reached gets a stage: its depth is the number of the group's
/// Merges on the longest path to it; a Merge's stage is the depth of its
/// inputs, an other op's is the least stage of the ops reading it, but not
/// less than its depth (an op only feeding the gradient belongs to it). The
/// first stage is one cond; the rest is raised after it. What crosses from
/// the first stage into a later one is made to look like what the raising
/// expects, in v1 terms: a value of branch k goes out through a new
/// Merge(v, zero) and comes back through a new Switch on the predicate,
/// output k (the zero is never read: the reader is in branch k of a cond
/// on the same predicate); a switch read by both gets a copy for the later
/// stages; a control edge is dropped (once control flow is structured,
/// legalize-tf drops every control edge anyway).
#include "lower/tf/tf_lower_internal.h"

#include <stdlib.h>

/// Small counts kept in a pointer map as value + 1 (absent reads as dflt).
static size_t num_get(const eddy_ptrmap_t *m, const void *k, size_t dflt) {
  uintptr_t v = (uintptr_t)eddy_ptrmap_get(m, k);
  return v ? (size_t)v - 1 : dflt;
}

static void num_put(eddy_ptrmap_t *m, const void *k, size_t v) {
  eddy_ptrmap_put(m, k, (void *)(uintptr_t)(v + 1));
}

typedef struct stages {
  eddy_block_t *b;
  eddy_ptrmap_t *tset, *eset;
  eddy_ptrmap_t merges; ///< the group's Merges
  eddy_ptrmap_t depth;  ///< op of b -> depth
  eddy_ptrmap_t stage;  ///< op reached (switches included) -> stage
  size_t d;             ///< depth_walk's result
} stages_t;

static bool reached(const stages_t *s, const eddy_op_t *op) {
  return eddy_ptrmap_has(s->tset, op) || eddy_ptrmap_has(s->eset, op);
}

/// The depth an operand's definition gives its user.
static size_t depth_in(const stages_t *s, eddy_value_t *v) {
  eddy_op_t *d = v->def ? tfl_in_block(v->def, s->b) : NULL;
  if (!d)
    return 0;
  return num_get(&s->depth, d, 0) + (eddy_ptrmap_has(&s->merges, d) ? 1 : 0);
}

static eddy_walk_result_t depth_walk(eddy_op_t *op, void *user) {
  stages_t *s = user;
  bool merge = tfl_is(op, "tf.Merge");
  for (uint32_t k = 0; k < op->num_operands; k++) {
    eddy_value_t *v = eddy_ir_op_operand(op, k);
    if (merge && v->def && tfl_is(v->def, "tf.NextIteration"))
      continue; // the back edge of a loop not raised yet
    size_t d = depth_in(s, v);
    if (d > s->d)
      s->d = d;
  }
  return EDDY_WALK_ADVANCE;
}

/// The least stage of the users of op's results that have one; `none`
/// when no user has.
static size_t least_user_stage(const stages_t *s, const eddy_op_t *op,
                               size_t none) {
  size_t best = none;
  for (uint32_t r = 0; r < op->num_results; r++)
    for (eddy_use_t *u = op->results[r].uses; u; u = u->next) {
      eddy_op_t *o = tfl_in_block(u->owner, s->b);
      size_t st = o ? num_get(&s->stage, o, SIZE_MAX) : SIZE_MAX;
      if (st < best)
        best = st;
    }
  return best;
}

/// A value of type t that is never read: zero, with each unknown dim 0 and
/// an unknown rank a scalar; an empty list for a list.
static eddy_status_t zero_of(eddy_ctx_t *ctx, eddy_builder_t *bb,
                             const eddy_type_t *t, const eddy_loc_t *loc,
                             eddy_value_t **out) {
  if (t->kind == EDDY_TYPE_LIST) {
    eddy_op_t *op = NULL;
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_make(bb, "tl.empty", NULL, 0, NULL, 0, &t, 1, loc, &op));
    *out = eddy_ir_op_result(op, 0);
    return NULL;
  }
  if (t->kind != EDDY_TYPE_TENSOR)
    return eddy_status_create(EDDY_ERR_UNSUPPORTED,
                              "no zero of this type for the other branch");
  int32_t rank = t->rank == EDDY_RANK_UNKNOWN ? 0 : t->rank;
  int64_t *dims = rank ? malloc((size_t)rank * sizeof(*dims)) : NULL;
  if (rank && !dims)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  for (int32_t i = 0; i < rank; i++)
    dims[i] = t->dims[i] == EDDY_DIM_DYNAMIC ? 0 : t->dims[i];
  const eddy_type_t *zt = eddy_ir_tensor_type_get(ctx, t->dtype, rank, dims);
  free(dims);
  double zero = 0;
  const eddy_attr_t *a = eddy_ir_dense_attr_from_f64(ctx, zt, &zero, 1);
  EDDY_RETURN_IF_ERROR(eddy_ir_build_constant(bb, a, out));
  (*out)->def->loc = loc;
  return NULL;
}

/// A value v of branch `side` read by a later stage: Merge(v, zero) in
/// this stage, a Switch on pred outside it. *out is the Switch's output
/// `side`, for the readers.
static eddy_status_t export_value(eddy_ctx_t *ctx, stages_t *s,
                                  eddy_value_t *pred, eddy_op_t *sw0,
                                  size_t first, eddy_value_t *v, uint32_t side,
                                  const eddy_loc_t *loc, eddy_value_t **out) {
  eddy_builder_t bb;
  eddy_ir_builder_init(&bb, ctx);
  eddy_ir_builder_set_before(&bb, eddy_ir_block_terminator(s->b));
  // The zero is a constant of the other branch: it waits on a switch
  // output of that side, as TensorFlow's branch constants wait on a pivot.
  eddy_value_t *zero = NULL, *other = &sw0->results[1 - side];
  EDDY_RETURN_IF_ERROR(zero_of(ctx, &bb, v->type, loc, &zero));
  const eddy_type_t *tt = eddy_ir_token_type_get(ctx);
  eddy_op_t *tok = NULL, *after = NULL, *m = NULL, *sw = NULL;
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_make(&bb, "df.control", &other, 1, NULL, 0, &tt, 1, loc, &tok));
  eddy_value_t *aops[2] = {zero, eddy_ir_op_result(tok, 0)};
  EDDY_RETURN_IF_ERROR(eddy_tfl_make(&bb, "df.after", aops, 2, NULL, 0,
                                     &zero->type, 1, loc, &after));
  eddy_value_t *z = eddy_ir_op_result(after, 0);
  eddy_value_t *mops[2] = {side ? z : v, side ? v : z};
  const eddy_type_t *mt[2] = {v->type,
                              eddy_ir_scalar_type_get(ctx, EDDY_DT_I32)};
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_make(&bb, "tf.Merge", mops, 2, NULL, 0, mt, 2, loc, &m));
  eddy_value_t *sops[2] = {eddy_ir_op_result(m, 0), pred};
  const eddy_type_t *st[2] = {v->type, v->type};
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_make(&bb, "tf.Switch", sops, 2, NULL, 0, st, 2, loc, &sw));
  eddy_ptrmap_t *zset = side ? s->eset : s->tset;
  eddy_ptrmap_put(zset, tok, tok);
  eddy_ptrmap_put(zset, after, after);
  eddy_ptrmap_put(s->tset, m, m);
  num_put(&s->stage, tok, first);
  num_put(&s->stage, after, first);
  num_put(&s->stage, m, first);
  *out = eddy_ir_op_result(sw, side);
  return NULL;
}

/// The uses of op's results by ops of a later stage than `first`.
static bool used_later(const stages_t *s, const eddy_op_t *op, size_t first) {
  for (uint32_t r = 0; r < op->num_results; r++)
    for (eddy_use_t *u = op->results[r].uses; u; u = u->next) {
      eddy_op_t *o = tfl_in_block(u->owner, s->b);
      if (o && num_get(&s->stage, o, first) > first)
        return true;
    }
  return false;
}

/// Moves the uses of v by later stages to `to`.
static void move_later_uses(const stages_t *s, eddy_value_t *v,
                            eddy_value_t *to, size_t first) {
  eddy_use_t *u = v->uses;
  while (u) {
    eddy_use_t *next = u->next;
    eddy_op_t *o = tfl_in_block(u->owner, s->b);
    if (o && num_get(&s->stage, o, first) > first)
      eddy_ir_op_set_operand(u->owner, u->index, to);
    u = next;
  }
}

/// The first stage's values read by later stages leave it (export_value),
/// or their control edges are dropped.
static eddy_status_t cut_crossings(eddy_ctx_t *ctx, stages_t *s,
                                   eddy_value_t *pred, eddy_op_t *sw0,
                                   eddy_op_t *op, size_t first) {
  uint32_t side = eddy_ptrmap_has(s->tset, op) ? 1 : 0;
  for (uint32_t r = 0; r < op->num_results; r++) {
    eddy_value_t *v = &op->results[r], *back = NULL;
    eddy_use_t *u = v->uses;
    while (u) {
      eddy_use_t *next = u->next;
      eddy_op_t *o = tfl_in_block(u->owner, s->b);
      if (!o || num_get(&s->stage, o, first) <= first) {
        u = next;
        continue;
      }
      if (v->type->kind == EDDY_TYPE_TOKEN || tfl_is(u->owner, "df.control")) {
        // The consumer may go with the operand: start over.
        eddy_tfl_drop_token_use(u->owner, u->index, 0);
        u = v->uses;
        continue;
      }
      if (!back) {
        eddy_status_t st =
            export_value(ctx, s, pred, sw0, first, v, side, op->loc, &back);
        if (st) {
          char msg[256];
          snprintf(msg, sizeof msg, "%s", eddy_status_message(st));
          eddy_status_destroy(st);
          eddy_buf_t loc;
          eddy_buf_init(&loc);
          eddy_ir_loc_format(op->loc, &loc);
          st = eddy_status_create_at(
              EDDY_ERR_UNSUPPORTED, loc.data,
              "a value of a branch of a cond is read by the next cond on "
              "the same predicate (its gradient), and %s",
              msg);
          eddy_buf_destroy(&loc);
          return st;
        }
      }
      eddy_ir_op_set_operand(u->owner, u->index, back);
      u = next;
    }
  }
  return NULL;
}

/// Keeps in *set only the ops of stage `first`.
static void keep_stage(const stages_t *s, eddy_ptrmap_t *set, size_t first) {
  eddy_ptrmap_t kept;
  eddy_ptrmap_init(&kept);
  for (eddy_op_t *op = s->b->first; op; op = op->next)
    if (eddy_ptrmap_has(set, op) && num_get(&s->stage, op, first) == first)
      eddy_ptrmap_put(&kept, op, op);
  eddy_ptrmap_destroy(set);
  *set = kept;
}

eddy_status_t eddy_tfl_cond_first_stage(eddy_ctx_t *ctx, eddy_block_t *b,
                                        eddy_value_t *pred, eddy_op_t **sws,
                                        size_t *nsw, eddy_ptrmap_t *tset,
                                        eddy_ptrmap_t *eset) {
  stages_t s = {.b = b, .tset = tset, .eset = eset};
  eddy_ptrmap_init(&s.merges);
  eddy_ptrmap_init(&s.depth);
  eddy_ptrmap_init(&s.stage);
  eddy_ptrmap_t is_sw;
  eddy_ptrmap_init(&is_sw);
  eddy_status_t st = NULL;
  for (size_t i = 0; i < *nsw; i++)
    eddy_ptrmap_put(&is_sw, sws[i], sws[i]);
  for (eddy_op_t *op = b->first; op; op = op->next)
    if (reached(&s, op) && tfl_is(op, "tf.Merge"))
      eddy_ptrmap_put(&s.merges, op, op);
  // Depths, then stages, each to a fixed point: raising earlier constructs
  // may have left a definition after its use (captured values are moved
  // before the op that captures them, Merges are not).
  bool deeper = false;
  for (int pass = 0, changed = 1; changed && pass < 64; pass++) {
    changed = 0;
    for (eddy_op_t *op = b->first; op; op = op->next) {
      s.d = 0;
      eddy_ir_walk_pre(op, depth_walk, &s);
      changed |= num_get(&s.depth, op, 0) != s.d;
      num_put(&s.depth, op, s.d);
    }
  }
  for (eddy_op_t *op = b->first; op; op = op->next)
    deeper = deeper || (num_get(&s.depth, op, 0) > 0 &&
                        (reached(&s, op) || eddy_ptrmap_has(&is_sw, op)));
  if (!deeper)
    goto done; // one cond
  // A Merge's stage is the depth of its inputs; an other op's the least
  // stage of its users, but not less than its depth.
  size_t first = SIZE_MAX;
  for (int pass = 0, changed = 1; changed && pass < 64; pass++) {
    changed = 0;
    first = SIZE_MAX;
    for (eddy_op_t *op = b->last; op; op = op->prev) {
      bool sw = eddy_ptrmap_has(&is_sw, op);
      if (!sw && !reached(&s, op))
        continue;
      size_t depth = num_get(&s.depth, op, 0), stage = depth;
      if (eddy_ptrmap_has(&s.merges, op)) {
        for (uint32_t k = 0; k < op->num_operands; k++) {
          size_t d = depth_in(&s, eddy_ir_op_operand(op, k));
          if (d > stage)
            stage = d;
        }
      } else {
        size_t least = least_user_stage(&s, op, depth);
        stage = least > depth ? least : depth;
      }
      changed |= num_get(&s.stage, op, SIZE_MAX) != stage;
      num_put(&s.stage, op, stage);
      if (stage < first)
        first = stage;
    }
  }
  // The first cond closes with Merges of its own; without one, its ops
  // only feed later conds, and the conds on pred are not one after the
  // other (a cond on another predicate holds parts of two of them).
  eddy_op_t *merge0 = NULL, *op0 = NULL;
  for (eddy_op_t *op = b->first; op && !merge0; op = op->next) {
    bool in0 = reached(&s, op) && num_get(&s.stage, op, first) == first;
    if (in0 && !op0)
      op0 = op;
    if (in0 && eddy_ptrmap_has(&s.merges, op))
      merge0 = op;
  }
  if (!merge0 && op0) {
    char msg[512];
    snprintf(msg, sizeof msg,
             "the conds on '%s' cannot be raised one after the other: "
             "node '%s' of the first reaches only later ones",
             pred->def && pred->def->loc && pred->def->loc->file
                 ? pred->def->loc->file->str
                 : "?",
             op0->loc && op0->loc->file ? op0->loc->file->str : "?");
    eddy_buf_t loc;
    eddy_buf_init(&loc);
    eddy_ir_loc_format(op0->loc, &loc);
    st = eddy_status_create_at(EDDY_ERR_UNSUPPORTED, loc.data, "%s", msg);
    eddy_buf_destroy(&loc);
    goto done;
  }
  // A switch of the first stage, for the zeros' pivots.
  eddy_op_t *sw0 = NULL;
  for (size_t i = 0; i < *nsw && !sw0; i++)
    if (num_get(&s.stage, sws[i], first) == first)
      sw0 = sws[i];
  if (!sw0)
    goto done; // no first cond to raise: the caller reports the switches
  size_t nc = 0;
  for (eddy_op_t *op = b->first; op; op = op->next)
    nc += reached(&s, op);
  eddy_op_t **cross = malloc((nc + 1) * sizeof(*cross));
  if (!cross) {
    st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
    goto done;
  }
  nc = 0;
  for (eddy_op_t *op = b->first; op; op = op->next)
    if (reached(&s, op) && !eddy_ptrmap_has(&s.merges, op) &&
        !eddy_ptrmap_has(&is_sw, op) && num_get(&s.stage, op, first) == first &&
        used_later(&s, op, first))
      cross[nc++] = op;
  for (size_t i = 0; i < nc && !st; i++)
    st = cut_crossings(ctx, &s, pred, sw0, cross[i], first);
  free(cross);
  // Switches: a copy for the later stages' uses.
  size_t kept = 0;
  for (size_t i = 0; i < *nsw && !st; i++) {
    eddy_op_t *sw = sws[i];
    if (!used_later(&s, sw, first)) {
      sws[kept++] = sw;
      continue;
    }
    if (least_user_stage(&s, sw, SIZE_MAX) > first)
      continue; // only later stages read it: it stays for them
    eddy_ptrmap_t none;
    eddy_ptrmap_init(&none);
    eddy_op_t *copy = eddy_ir_op_clone(sw, &none);
    eddy_ptrmap_destroy(&none);
    eddy_ir_op_insert_after(copy, sw);
    for (uint32_t r = 0; r < sw->num_results; r++)
      move_later_uses(&s, &sw->results[r], &copy->results[r], first);
    sws[kept++] = sw;
  }
  if (!st) {
    *nsw = kept;
    keep_stage(&s, tset, first);
    keep_stage(&s, eset, first);
    eddy_tfl_block_sort(b);
  }
done:
  eddy_ptrmap_destroy(&is_sw);
  eddy_ptrmap_destroy(&s.merges);
  eddy_ptrmap_destroy(&s.depth);
  eddy_ptrmap_destroy(&s.stage);
  return st;
}

/// Checkpointed loop gradients: trade recomputation for memory.
///
/// The gradient of a ctl.while stores, per iteration, every forward value
/// its gradient body needs (ad_while.c). For a loop marked checkpoint, this
/// file first rewrites
///
///   x = while (c(x)) { x = f(x) }
///
/// into a loop over segments around a loop over the iterations of one
/// segment:
///
///   k = 1
///   x, k = while (c(x)) {
///     x = while (c(x) && t < k) { x = f(x); t += 1 }   [ad.remat]
///     k = k + 1          (growing segments; with SLOTS, k stays 1)
///   }
///
/// which computes the same values. The ordinary rule then differentiates
/// it. The inner loop is marked ad.remat, so the outer gradient body does
/// not store its accumulator lists per segment but re-runs it from its
/// operands (ad.c, ad_remat_loop): one segment's intermediates exist at a
/// time, during that segment's gradient. The forward copy's lists become
/// dead and are dropped (dce).
///
/// checkpoint (no SLOTS): the outer gradient stores per segment what its
/// body reads, the state at the segment's start. T iterations take about
/// sqrt(2T) segments of at most about sqrt(2T) iterations; nothing needs T
/// in advance; one more forward run.
///
/// checkpoint:SLOTS: segments of one step, and the outer loop is marked
/// ad.revolve = SLOTS: its states are not stored per step but rebuilt in
/// the gradient loop from at most SLOTS snapshots, taken while advancing on
/// Griewank's binomial schedule (ad_revolve_state below), which runs the
/// fewest forward steps possible with SLOTS snapshots once T is known (the
/// gradient loop starts after the forward loop, so T is its trip count).
#include "autodiff/ad_internal.h"

#include "dialects/ctl/ctl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define TRY EDDY_RETURN_IF_ERROR

eddy_ad_options_t eddy_ad_options_default(void) {
  return (eddy_ad_options_t){
      .loop_memory = EDDY_AD_LOOP_STORE, .checkpoint_slots = 0,
      .memory_budget = 0};
}

eddy_status_t eddy_ad_parse_loop_memory(const char *text,
                                        eddy_ad_loop_memory_t *mem,
                                        int64_t *slots) {
  *mem = EDDY_AD_LOOP_STORE;
  *slots = 0;
  if (text && strcmp(text, "store") == 0)
    return NULL;
  if (text && strcmp(text, "reversible") == 0) {
    *mem = EDDY_AD_LOOP_REVERSIBLE;
    return NULL;
  }
  if (text && strcmp(text, "auto") == 0) {
    *mem = EDDY_AD_LOOP_AUTO;
    return NULL;
  }
  static const char k_ckpt[] = "checkpoint";
  size_t nc = sizeof k_ckpt - 1;
  if (text && strncmp(text, k_ckpt, nc) == 0) {
    if (text[nc] == '\0') {
      *mem = EDDY_AD_LOOP_CHECKPOINT;
      return NULL;
    }
    if (text[nc] == ':' && text[nc + 1] >= '0' && text[nc + 1] <= '9') {
      char *end = NULL;
      errno = 0;
      long long v = strtoll(text + nc + 1, &end, 10);
      if (errno == 0 && *end == '\0' && v >= 1 && v <= (1LL << 31)) {
        *mem = EDDY_AD_LOOP_CHECKPOINT;
        *slots = v;
        return NULL;
      }
    }
  }
  return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                            "loop memory '%s': expected store, checkpoint, "
                            "checkpoint:SLOTS with 1 <= SLOTS <= 2^31, "
                            "reversible or auto",
                            text ? text : "");
}

/// auto: checkpoint with the snapshots of w's state that the budget holds.
static eddy_status_t ckpt_auto(const ad_t *ad, const eddy_op_t *w,
                               eddy_ad_loop_memory_t *mem, int64_t *slots) {
  int64_t budget = ad->opts->memory_budget, state = 0;
  if (budget <= 0)
    return eddy_ir_op_error(w, "loop memory auto needs a memory budget "
                               "(eddy grad --loop-memory-budget SIZE)");
  eddy_block_t *body = eddy_ctl_while_body(w);
  eddy_op_t *y = body ? eddy_ir_block_terminator(body) : NULL;
  for (uint32_t k = 0; y && k < w->num_results; k++) {
    if (k < y->num_operands && eddy_ir_op_operand(y, k) == body->args[k])
      continue; /* passed through: never snapshotted */
    const eddy_type_t *t = eddy_ir_op_result((eddy_op_t *)w, k)->type;
    int64_t n = t->kind == EDDY_TYPE_TENSOR ? eddy_ir_type_num_elements(t) : -1,
            b = 0;
    if (n < 0 || !eddy_checked_mul_i64(n, (int64_t)eddy_dtype_size(t->dtype),
                                       &b) ||
        !eddy_checked_add_i64(state, b, &state))
      return eddy_ir_op_error(
          w, "loop memory auto: loop value #%u is not a tensor of a static "
             "shape, so the size of a snapshot is not known; use "
             "checkpoint:SLOTS",
          k);
  }
  int64_t n = state > 0 ? budget / state : ((int64_t)1 << 31);
  if (n < 1)
    return eddy_ir_op_error(
        w, "loop memory auto: the budget of %lld bytes holds no snapshot of "
           "the loop state (%lld bytes)",
        (long long)budget, (long long)state);
  *mem = EDDY_AD_LOOP_CHECKPOINT;
  *slots = n < ((int64_t)1 << 31) ? n : ((int64_t)1 << 31);
  return NULL;
}

/// The policy of loop w: its eddy.loop_memory attribute, else the options.
static eddy_status_t ckpt_policy(const ad_t *ad, const eddy_op_t *w,
                                 eddy_ad_loop_memory_t *mem, int64_t *slots) {
  const eddy_attr_t *a = eddy_ir_op_attr(w, "eddy.loop_memory");
  if (!a) {
    *mem = ad->opts->loop_memory;
    *slots = ad->opts->checkpoint_slots;
    return NULL;
  }
  eddy_status_t st =
      a->kind == EDDY_ATTR_STRING
          ? eddy_ad_parse_loop_memory(a->u.str.data, mem, slots)
          : eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                               "loop memory: not a string");
  if (st) {
    eddy_status_t e = eddy_ir_op_error(
        w, "attribute eddy.loop_memory: %s", eddy_status_message(st));
    eddy_status_destroy(st);
    return e;
  }
  return NULL;
}

static eddy_status_t ckpt_i64(eddy_builder_t *b, ad_t *ad, int64_t v,
                              eddy_value_t **out) {
  const eddy_type_t *i64 = eddy_ir_scalar_type_get(ad->ctx, EDDY_DT_I64);
  return eddy_ir_build_constant(
      b, eddy_ir_dense_attr_from_i64(ad->ctx, i64, &v, 1), out);
}

static eddy_status_t ckpt_bin(eddy_builder_t *b, const char *name,
                              eddy_value_t *x, eddy_value_t *y,
                              eddy_value_t **out) {
  eddy_value_t *ops[2] = {x, y};
  return eddy_ir_build_simple(b, name, ops, 2, NULL, 0, out);
}

void ad_clone_block(const eddy_block_t *src, eddy_block_t *dst) {
  eddy_ptrmap_t map;
  eddy_ptrmap_init(&map);
  for (uint32_t i = 0; i < src->num_args; i++)
    eddy_ptrmap_put(&map, src->args[i], dst->args[i]);
  for (eddy_op_t *op = src->first; op; op = op->next)
    eddy_ir_op_append(eddy_ir_op_clone(op, &map), dst);
  eddy_ptrmap_destroy(&map);
}

/// Moves the ops of src to the end of dst, src's arguments replaced by
/// dst's first src->num_args arguments.
static void ckpt_move_block(eddy_block_t *src, eddy_block_t *dst) {
  for (uint32_t i = 0; i < src->num_args; i++)
    eddy_ir_value_replace_all_uses(src->args[i], dst->args[i]);
  ad_move_ops(src, dst);
}

/// Types of w's loop values followed by one i64.
static const eddy_type_t **ckpt_types(ad_t *ad, eddy_op_t *w) {
  size_t n = w->num_results;
  const eddy_type_t **t = malloc((n + 1) * sizeof(*t));
  if (!t)
    return NULL;
  for (size_t k = 0; k < n; k++)
    t[k] = eddy_ir_op_result(w, k)->type;
  t[n] = eddy_ir_scalar_type_get(ad->ctx, EDDY_DT_I64);
  return t;
}

/// The yield of body gets `extra` as one more operand.
static void ckpt_yield_append(eddy_block_t *body, eddy_value_t *extra) {
  eddy_op_t *y = eddy_ir_block_terminator(body);
  size_t n = y->num_operands;
  eddy_value_t *small[16], **v = n + 1 <= 16 ? small : malloc((n + 1) *
                                                               sizeof(*v));
  if (!v)
    abort();
  for (size_t i = 0; i < n; i++)
    v[i] = eddy_ir_op_operand(y, i);
  v[n] = extra;
  eddy_ir_op_set_operands(y, v, n + 1);
  if (v != small)
    free(v);
}

/// Rewrites w as described at the top: segments of one step (one_step) or
/// of 1, 2, 3, ... steps. *out_outer receives the loop over segments.
static eddy_status_t ckpt_split(ad_t *ad, eddy_op_t *w, bool one_step,
                                eddy_op_t **out_outer) {
  size_t n = w->num_results;
  eddy_block_t *wc = eddy_ctl_while_cond(w), *wb = eddy_ctl_while_body(w);
  eddy_op_t *wy = eddy_ir_block_terminator(wb);
  if (!wc || !wb || !wy || wy->num_operands != n)
    return eddy_ir_op_error(w, "checkpoint: malformed loop");
  eddy_value_t **inits = malloc((n + 1) * sizeof(*inits));
  bool *pass = calloc(n ? n : 1, sizeof(*pass));
  const eddy_type_t **types = ckpt_types(ad, w);
  eddy_status_t st = NULL;
  if (!inits || !pass || !types)
    st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  for (size_t k = 0; k < n && !st; k++) {
    inits[k] = eddy_ir_op_operand(w, k);
    pass[k] = eddy_ir_op_operand(wy, k) == wb->args[k];
  }
  eddy_builder_t b;
  eddy_ir_builder_init(&b, ad->ctx);
  eddy_ir_builder_set_before(&b, w);
  /* The first segment's length: 1 (growing segments, or revolve's single
     steps). */
  if (!st)
    st = ckpt_i64(&b, ad, 1, &inits[n]);
  eddy_op_t *ow = NULL, *iw = NULL;
  if (!st)
    st = ad_build_while(&b, inits, types, n + 1, &ow);
  if (!st) {
    ow->loc = w->loc;
    for (uint32_t a = 0; a < w->num_attrs; a++)
      if (strcmp(w->attrs[a].name->str, "eddy.loop_memory") != 0)
        eddy_ir_op_set_attr(ow, w->attrs[a].name->str, w->attrs[a].value);
    /* Outer cond: a copy of w's. */
    ad_clone_block(wc, eddy_ctl_while_cond(ow));
    /* Outer body: the inner loop, then the next segment length. */
    eddy_block_t *ob = eddy_ctl_while_body(ow);
    eddy_ir_builder_set_end(&b, ob);
    for (size_t j = 0; j < n; j++)
      inits[j] = ob->args[j];
    st = ckpt_i64(&b, ad, 0, &inits[n]);
    if (!st)
      st = ad_build_while(&b, inits, types, n + 1, &iw);
  }
  if (!st) {
    iw->loc = w->loc;
    for (uint32_t a = 0; a < w->num_attrs; a++)
      if (strcmp(w->attrs[a].name->str, "eddy.loop_memory") != 0)
        eddy_ir_op_set_attr(iw, w->attrs[a].name->str, w->attrs[a].value);
    eddy_ir_op_set_attr(iw, AD_REMAT_ATTR,
                        eddy_ir_bool_attr_get(ad->ctx, true));
    eddy_block_t *ob = eddy_ctl_while_body(ow);
    eddy_value_t *k = ob->args[n];
    /* Inner cond: w's cond and t < k. */
    eddy_block_t *ic = eddy_ctl_while_cond(iw), *ib = eddy_ctl_while_body(iw);
    ckpt_move_block(wc, ic);
    eddy_op_t *cond = eddy_ir_block_terminator(ic);
    eddy_builder_t cb;
    eddy_ir_builder_init(&cb, ad->ctx);
    eddy_ir_builder_set_before(&cb, cond);
    eddy_value_t *lt = NULL, *both = NULL;
    st = ckpt_bin(&cb, "core.lt", ic->args[n], k, &lt);
    if (!st)
      st = ckpt_bin(&cb, "core.and", eddy_ir_op_operand(cond, 0), lt, &both);
    if (!st)
      eddy_ir_op_set_operand(cond, 0, both);
    /* Inner body: w's body and t + 1. */
    ckpt_move_block(wb, ib);
    eddy_ir_builder_set_before(&cb, eddy_ir_block_terminator(ib));
    eddy_value_t *one = NULL, *inc = NULL;
    if (!st)
      st = ckpt_i64(&cb, ad, 1, &one);
    if (!st)
      st = ckpt_bin(&cb, "core.add", ib->args[n], one, &inc);
    if (!st)
      ckpt_yield_append(ib, inc);
    /* Outer yield: the inner loop's values (a value w passes through
       unchanged stays the outer body's own argument, so that the gradient
       reads it from the init instead of storing it per segment), then the
       next segment length. */
    eddy_ir_builder_set_end(&b, ob);
    eddy_value_t *next_k = k, *kone = NULL;
    if (!st && !one_step) {
      st = ckpt_i64(&b, ad, 1, &kone);
      if (!st)
        st = ckpt_bin(&b, "core.add", k, kone, &next_k);
    }
    eddy_value_t **yv = inits; /* reused: n + 1 entries */
    for (size_t j = 0; j < n; j++)
      yv[j] = pass[j] ? ob->args[j] : eddy_ir_op_result(iw, j);
    yv[n] = next_k;
    if (!st)
      st = eddy_ctl_build_yield(&b, yv, n + 1, NULL);
  }
  if (!st) {
    for (size_t j = 0; j < n; j++)
      eddy_ir_value_replace_all_uses(eddy_ir_op_result(w, j),
                                     eddy_ir_op_result(ow, j));
    eddy_ir_op_erase(w);
    ad->num_checkpointed++;
    *out_outer = ow;
  }
  free(inits);
  free(pass);
  free(types);
  return st;
}

typedef struct ckpt_collect {
  eddy_op_t **loops;
  size_t n, cap;
  bool oom;
} ckpt_collect_t;

static eddy_walk_result_t ckpt_collect_fn(eddy_op_t *op, void *user) {
  ckpt_collect_t *c = user;
  if (!eddy_ir_op_is(op, "ctl.while"))
    return EDDY_WALK_ADVANCE;
  if (c->n == c->cap) {
    size_t cap = c->cap ? c->cap * 2 : 8;
    eddy_op_t **l = realloc(c->loops, cap * sizeof(*l));
    if (!l) {
      c->oom = true;
      return EDDY_WALK_INTERRUPT;
    }
    c->loops = l;
    c->cap = cap;
  }
  c->loops[c->n++] = op;
  return EDDY_WALK_ADVANCE;
}

eddy_status_t ad_checkpoint_loops(ad_t *ad, eddy_op_t *func) {
  ckpt_collect_t c = {0};
  eddy_ir_walk_post(func, ckpt_collect_fn, &c);
  eddy_status_t st =
      c.oom ? eddy_status_create(EDDY_ERR_RESOURCE, "out of memory") : NULL;
  /* Inner loops first: splitting an outer loop moves them, unchanged, into
     its inner segment loop. */
  for (size_t i = 0; i < c.n && !st; i++) {
    eddy_ad_loop_memory_t mem;
    int64_t slots;
    st = ckpt_policy(ad, c.loops[i], &mem, &slots);
    if (!st && mem == EDDY_AD_LOOP_AUTO)
      st = ckpt_auto(ad, c.loops[i], &mem, &slots);
    eddy_block_t *inverse = NULL;
    eddy_op_t *outer = NULL;
    if (!st && mem == EDDY_AD_LOOP_REVERSIBLE)
      st = ad_reversible_inverse(ad, c.loops[i], &inverse);
    if (!st && mem != EDDY_AD_LOOP_STORE)
      st = ckpt_split(ad, c.loops[i],
                      mem == EDDY_AD_LOOP_REVERSIBLE || slots > 0, &outer);
    if (!st && mem == EDDY_AD_LOOP_REVERSIBLE) {
      eddy_ir_op_set_attr(outer, AD_REVERSIBLE_ATTR,
                          eddy_ir_bool_attr_get(ad->ctx, true));
      eddy_ptrmap_put(&ad->inverse, outer, inverse);
    } else if (!st && mem == EDDY_AD_LOOP_CHECKPOINT && slots > 0) {
      eddy_ir_op_set_attr(outer, AD_REVOLVE_ATTR,
                          eddy_ir_int_attr_get(ad->ctx, slots, EDDY_DT_I64));
    }
  }
  free(c.loops);
  return st;
}

/* ---- Revolve: loop states rebuilt from snapshots -------------------------- */

static eddy_status_t rev_simple(eddy_builder_t *b, const char *name,
                                eddy_value_t *x, eddy_value_t **out) {
  return eddy_ir_build_simple(b, name, &x, 1, NULL, 0, out);
}

/// Builds at b the number of steps to advance before the next snapshot,
/// when l steps (from the current snapshot to the step to reverse,
/// inclusive) are left and s snapshots are free:
///   m = max(1, l - beta(S-1, r), beta(S, r-2)),  S = s + 1,
/// where beta(S, r) = C(S + r, r) is the most steps S snapshots reverse
/// with each step run at most r times, and r is the least with
/// beta(S, r) >= l (Griewank's binomial checkpointing: the left part, m
/// steps, is reversed later with S snapshots and r - 1 more runs, the right
/// part with S - 1 and r). beta(S-1, r) = beta(S, r) - beta(S, r-1).
/// This m is optimal: with it, the total of steps run equals the optimum
/// of the recursion T(l, s) = min_m [m + T(m, s) + T(l - m, s - 1)] (checked
/// against that recursion for s < 9, l < 260; docs/autodiff.md).
static eddy_status_t rev_split(ad_t *ad, eddy_builder_t *b, eddy_value_t *l,
                               eddy_value_t *s, eddy_value_t **out_m) {
  const eddy_type_t *i64 = eddy_ir_scalar_type_get(ad->ctx, EDDY_DT_I64);
  eddy_value_t *zero = NULL, *one = NULL, *big_s = NULL;
  TRY(ckpt_i64(b, ad, 0, &zero));
  TRY(ckpt_i64(b, ad, 1, &one));
  TRY(ckpt_bin(b, "core.add", s, one, &big_s));
  /* (r, beta(S, r), beta(S, r-1), beta(S, r-2)) from (0, 1, 0, 0). */
  eddy_value_t *inits[4] = {zero, one, zero, zero};
  const eddy_type_t *types[4] = {i64, i64, i64, i64};
  eddy_op_t *lw = NULL;
  TRY(ad_build_while(b, inits, types, 4, &lw));
  eddy_block_t *cb = eddy_ctl_while_cond(lw), *bb = eddy_ctl_while_body(lw);
  eddy_builder_t ib;
  eddy_ir_builder_init(&ib, ad->ctx);
  eddy_ir_builder_set_end(&ib, cb);
  eddy_value_t *p = NULL;
  TRY(ckpt_bin(&ib, "core.lt", cb->args[1], l, &p));
  TRY(eddy_ctl_build_condition(&ib, p, NULL));
  eddy_ir_builder_set_end(&ib, bb);
  eddy_value_t *one_in = NULL, *r1 = NULL, *sr = NULL, *prod = NULL,
               *next = NULL;
  TRY(ckpt_i64(&ib, ad, 1, &one_in));
  TRY(ckpt_bin(&ib, "core.add", bb->args[0], one_in, &r1));
  TRY(ckpt_bin(&ib, "core.add", big_s, r1, &sr));
  TRY(ckpt_bin(&ib, "core.mul", bb->args[1], sr, &prod));
  TRY(ckpt_bin(&ib, "core.div", prod, r1, &next));
  eddy_value_t *y[4] = {r1, next, bb->args[1], bb->args[2]};
  TRY(eddy_ctl_build_yield(&ib, y, 4, NULL));
  eddy_value_t *right = NULL, *rest = NULL, *m1 = NULL;
  TRY(ckpt_bin(b, "core.sub", eddy_ir_op_result(lw, 1),
               eddy_ir_op_result(lw, 2), &right));
  TRY(ckpt_bin(b, "core.sub", l, right, &rest));
  TRY(ckpt_bin(b, "core.maximum", rest, one, &m1));
  return ckpt_bin(b, "core.maximum", m1, eddy_ir_op_result(lw, 3), out_m);
}

/// Builds at b a loop that runs the forward body fb m times from the
/// values x (one per state component comp[c]; the other loop values read
/// fixed[k]); out_x receives the values after the last run.
static eddy_status_t rev_steps(ad_scope_t *s, eddy_builder_t *b,
                               eddy_value_t *m, const size_t *comp, size_t nc,
                               eddy_value_t *const *x, eddy_value_t **fixed,
                               eddy_value_t **out_x) {
  ad_t *ad = s->ad;
  eddy_block_t *fb = s->fwd;
  eddy_op_t *fy = eddy_ir_block_terminator(fb);
  eddy_value_t **inits = malloc((nc + 1) * sizeof(*inits));
  const eddy_type_t **types = malloc((nc + 1) * sizeof(*types));
  eddy_value_t **yv = malloc((nc + 1) * sizeof(*yv));
  eddy_status_t st = NULL;
  if (!inits || !types || !yv)
    st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  if (!st)
    st = ckpt_i64(b, ad, 0, &inits[0]);
  types[0] = eddy_ir_scalar_type_get(ad->ctx, EDDY_DT_I64);
  for (size_t c = 0; c < nc && !st; c++) {
    inits[1 + c] = x[c];
    types[1 + c] = fb->args[comp[c]]->type;
  }
  eddy_op_t *sw = NULL;
  if (!st)
    st = ad_build_while(b, inits, types, nc + 1, &sw);
  eddy_ptrmap_t map;
  eddy_ptrmap_init(&map);
  if (!st) {
    eddy_block_t *cb = eddy_ctl_while_cond(sw), *bb = eddy_ctl_while_body(sw);
    eddy_builder_t ib;
    eddy_ir_builder_init(&ib, ad->ctx);
    eddy_ir_builder_set_end(&ib, cb);
    eddy_value_t *p = NULL;
    st = ckpt_bin(&ib, "core.lt", cb->args[0], m, &p);
    if (!st)
      st = eddy_ctl_build_condition(&ib, p, NULL);
    /* The body: fb's ops on the loop's values, outside values visible. */
    for (uint32_t k = 0; k < fb->num_args; k++)
      if (fixed[k])
        eddy_ptrmap_put(&map, fb->args[k], fixed[k]);
    for (size_t c = 0; c < nc; c++)
      eddy_ptrmap_put(&map, fb->args[comp[c]], bb->args[1 + c]);
    for (eddy_op_t *op = fb->first; op && op != fy && !st; op = op->next)
      st = ad_map_free(s, op, fb, &map);
    for (eddy_op_t *op = fb->first; op && op != fy && !st; op = op->next)
      eddy_ir_op_append(eddy_ir_op_clone(op, &map), bb);
    eddy_ir_builder_set_end(&ib, bb);
    eddy_value_t *one = NULL;
    if (!st)
      st = ckpt_i64(&ib, ad, 1, &one);
    if (!st)
      st = ckpt_bin(&ib, "core.add", bb->args[0], one, &yv[0]);
    for (size_t c = 0; c < nc && !st; c++) {
      eddy_value_t *v = eddy_ir_op_operand(fy, comp[c]);
      eddy_value_t *mv = eddy_ptrmap_get(&map, v);
      yv[1 + c] = mv ? mv : v;
    }
    if (!st)
      st = eddy_ctl_build_yield(&ib, yv, nc + 1, NULL);
  }
  for (size_t c = 0; c < nc && !st; c++)
    out_x[c] = eddy_ir_op_result(sw, 1 + c);
  eddy_ptrmap_destroy(&map);
  free(inits);
  free(types);
  free(yv);
  return st;
}

/// Builds at b "if (pred) {then} else {lists unchanged}" over nl lists:
/// then pushes item[i] on lists[i] (push) or pops every list (!push).
/// out receives the lists after it.
static eddy_status_t rev_lists_if(ad_t *ad, eddy_builder_t *b,
                                  eddy_value_t *pred, bool push,
                                  eddy_value_t *const *lists,
                                  eddy_value_t *const *items, size_t nl,
                                  eddy_value_t **out) {
  const eddy_type_t **types = calloc(nl, sizeof(*types));
  eddy_value_t **yv = malloc(nl * sizeof(*yv));
  eddy_status_t st = NULL;
  if (!types || !yv)
    st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  for (size_t i = 0; i < nl && !st; i++)
    types[i] = lists[i]->type;
  eddy_op_t *iff = NULL;
  if (!st)
    st = eddy_ctl_build_if(b, pred, types, nl, &iff);
  if (!st) {
    eddy_builder_t tb;
    eddy_ir_builder_init(&tb, ad->ctx);
    eddy_ir_builder_set_end(&tb, eddy_ctl_if_then(iff));
    for (size_t i = 0; i < nl && !st; i++) {
      if (push) {
        eddy_value_t *ops[2] = {lists[i], items[i]};
        st = eddy_ir_build_simple(&tb, "tl.push_back", ops, 2, NULL, 0,
                                  &yv[i]);
      } else {
        const eddy_type_t *pt[2] = {types[i], types[i]->elem};
        eddy_op_state_t ps = {.name = "tl.pop_back",
                              .operands = &lists[i],
                              .num_operands = 1,
                              .result_types = pt,
                              .num_results = 2};
        eddy_op_t *pop = NULL;
        st = eddy_ir_build(&tb, &ps, &pop);
        if (!st)
          yv[i] = eddy_ir_op_result(pop, 0);
      }
    }
    if (!st)
      st = eddy_ctl_build_yield(&tb, yv, nl, NULL);
    eddy_ir_builder_set_end(&tb, eddy_ctl_if_else(iff));
    if (!st)
      st = eddy_ctl_build_yield(&tb, lists, nl, NULL);
  }
  for (size_t i = 0; i < nl && !st; i++)
    out[i] = eddy_ir_op_result(iff, i);
  free(types);
  free(yv);
  return st;
}


void ad_rev_set_next(ad_scope_t *s, eddy_value_t *arg, eddy_value_t *v) {
  for (size_t i = 0; i < s->args.len; i++)
    if (s->args.data[i] == arg)
      s->next.data[i] = v;
}

/// The gradient loop of a revolve loop reverses step i = T - 1 - j in its
/// iteration j. It carries T, a stack of snapshots (the loop state at
/// positions p_0 = 0 < p_1 < ... , at most SLOTS) and their positions. At
/// the top of its body: from the last snapshot, advance to step i, taking
/// a snapshot wherever rev_split says while slots are free; the state at i
/// is then what the gradient of step i reads; the snapshot at i, if any, is
/// dropped. The first iteration advances from the loop's init (the first
/// snapshot) to step T - 1.
eddy_status_t ad_revolve_state(ad_scope_t *s) {
  ad_t *ad = s->ad;
  eddy_op_t *w = s->fwd_op;
  eddy_block_t *fb = s->fwd;
  eddy_op_t *fy = eddy_ir_block_terminator(fb);
  int64_t slots = eddy_ir_op_attr_int(w, AD_REVOLVE_ATTR, 1);
  size_t n = fb->num_args;
  if (s->args.len < 1 || n == 0 || !fy || fy->num_operands != n)
    return eddy_ir_op_error(w, "autodiff: malformed revolve loop");
  size_t *comp = malloc(n * sizeof(*comp));
  eddy_value_t **fixed = calloc(n, sizeof(*fixed));
  /* x, x0, xi; lists (positions first, then one per component), their
     states after the advance and after the final pop; items. */
  eddy_value_t **buf = calloc(8 * (n + 1), sizeof(*buf));
  eddy_status_t st = NULL;
  if (!comp || !fixed || !buf)
    st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  size_t nc = 0;
  if (!st)
    st = ad_loop_state(s, comp, &nc, fixed);
  eddy_value_t **x0 = buf, **xi = buf + (n + 1), **lists = buf + 2 * (n + 1),
               **adv = buf + 3 * (n + 1), **popped = buf + 4 * (n + 1),
               **items = buf + 5 * (n + 1), **bx = buf + 6 * (n + 1),
               **lx = buf + 7 * (n + 1);
  const eddy_type_t *i64 = eddy_ir_scalar_type_get(ad->ctx, EDDY_DT_I64);
  eddy_value_t *count = NULL;
  if (!st) {
    count = ad_rev_arg(s, i64, AD_REV_COUNT, NULL);
    lists[0] = ad_rev_arg(s, eddy_ir_list_type_get(ad->ctx, i64),
                       AD_REV_POSITIONS, NULL);
    for (size_t c = 0; c < nc; c++)
      lists[1 + c] = ad_rev_arg(
          s, eddy_ir_list_type_get(ad->ctx, fb->args[comp[c]]->type),
          AD_REV_SNAPSHOTS, eddy_ir_op_operand(w, comp[c]));
  }
  eddy_builder_t b;
  eddy_ir_builder_init(&b, ad->ctx);
  if (s->bwd->first)
    eddy_ir_builder_set_before(&b, s->bwd->first);
  else
    eddy_ir_builder_set_end(&b, s->bwd);
  eddy_value_t *one = NULL, *tm1 = NULL, *i = NULL, *d = NULL, *top = NULL,
               *p0 = NULL;
  if (!st)
    st = ckpt_i64(&b, ad, 1, &one);
  if (!st)
    st = ckpt_bin(&b, "core.sub", count, one, &tm1);
  if (!st)
    st = ckpt_bin(&b, "core.sub", tm1, s->args.data[0], &i);
  /* The last snapshot. */
  if (!st)
    st = rev_simple(&b, "tl.length", lists[0], &d);
  if (!st)
    st = ckpt_bin(&b, "core.sub", d, one, &top);
  if (!st)
    st = ckpt_bin(&b, "tl.get_item", lists[0], top, &p0);
  for (size_t c = 0; c < nc && !st; c++)
    st = ckpt_bin(&b, "tl.get_item", lists[1 + c], top, &x0[c]);
  /* Advance: (pos, state..., lists...) while pos < i. */
  size_t na = 1 + nc + 1 + nc;
  eddy_value_t **ainit = calloc(na, sizeof(*ainit));
  const eddy_type_t **atypes = calloc(na, sizeof(*atypes));
  if (!st && (!ainit || !atypes))
    st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  eddy_op_t *aw = NULL;
  if (!st) {
    ainit[0] = p0;
    atypes[0] = i64;
    for (size_t c = 0; c < nc; c++) {
      ainit[1 + c] = x0[c];
      atypes[1 + c] = fb->args[comp[c]]->type;
    }
    for (size_t c = 0; c <= nc; c++) {
      ainit[1 + nc + c] = lists[c];
      atypes[1 + nc + c] = lists[c]->type;
    }
    st = ad_build_while(&b, ainit, atypes, na, &aw);
  }
  if (!st) {
    eddy_block_t *cb = eddy_ctl_while_cond(aw), *bb = eddy_ctl_while_body(aw);
    eddy_builder_t ib;
    eddy_ir_builder_init(&ib, ad->ctx);
    eddy_ir_builder_set_end(&ib, cb);
    eddy_value_t *p = NULL;
    st = ckpt_bin(&ib, "core.lt", cb->args[0], i, &p);
    if (!st)
      st = eddy_ctl_build_condition(&ib, p, NULL);
    eddy_ir_builder_set_end(&ib, bb);
    eddy_value_t *pos = bb->args[0], *gap = NULL, *l = NULL, *dl = NULL,
                 *cap = NULL, *sfree = NULL, *m = NULL, *npos = NULL,
                 *more = NULL;
    for (size_t c = 0; c < nc; c++)
      bx[c] = bb->args[1 + c];
    for (size_t c = 0; c <= nc; c++)
      lx[c] = bb->args[1 + nc + c];
    if (!st)
      st = ckpt_bin(&ib, "core.sub", i, pos, &gap);
    if (!st)
      st = ckpt_bin(&ib, "core.add", gap, one, &l);
    if (!st)
      st = rev_simple(&ib, "tl.length", lx[0], &dl);
    if (!st)
      st = ckpt_i64(&ib, ad, slots, &cap);
    if (!st)
      st = ckpt_bin(&ib, "core.sub", cap, dl, &sfree);
    if (!st)
      st = rev_split(ad, &ib, l, sfree, &m);
    if (!st)
      st = rev_steps(s, &ib, m, comp, nc, bx, fixed, &items[1]);
    if (!st)
      st = ckpt_bin(&ib, "core.add", pos, m, &npos);
    items[0] = npos;
    if (!st)
      st = ckpt_bin(&ib, "core.lt", npos, i, &more);
    eddy_value_t **after = adv; /* reused as the lists after the push */
    if (!st)
      st = rev_lists_if(ad, &ib, more, true, lx, items, nc + 1, after);
    eddy_value_t **yv = ainit; /* reused: na entries */
    if (!st) {
      yv[0] = npos;
      for (size_t c = 0; c < nc; c++)
        yv[1 + c] = items[1 + c];
      for (size_t c = 0; c <= nc; c++)
        yv[1 + nc + c] = after[c];
      st = eddy_ctl_build_yield(&ib, yv, na, NULL);
    }
  }
  /* The state at i, and the snapshot at i dropped. */
  eddy_value_t *d2 = NULL, *top2 = NULL, *ptop = NULL, *at = NULL;
  if (!st) {
    for (size_t c = 0; c < nc; c++)
      xi[c] = eddy_ir_op_result(aw, 1 + c);
    for (size_t c = 0; c <= nc; c++)
      adv[c] = eddy_ir_op_result(aw, 1 + nc + c);
    st = rev_simple(&b, "tl.length", adv[0], &d2);
  }
  if (!st)
    st = ckpt_bin(&b, "core.sub", d2, one, &top2);
  if (!st)
    st = ckpt_bin(&b, "tl.get_item", adv[0], top2, &ptop);
  if (!st)
    st = ckpt_bin(&b, "core.eq", ptop, i, &at);
  if (!st)
    st = rev_lists_if(ad, &b, at, false, adv, NULL, nc + 1, popped);
  for (size_t c = 0; c <= nc && !st; c++)
    ad_rev_set_next(s, lists[c], popped[c]);
  for (size_t c = 0; c < nc && !st; c++)
    eddy_ptrmap_put(&s->vis, fb->args[comp[c]], xi[c]);
  for (size_t k = 0; k < n && !st; k++)
    if (fixed[k])
      eddy_ptrmap_put(&s->vis, fb->args[k], fixed[k]);
  free(ainit);
  free(atypes);
  free(comp);
  free(fixed);
  free(buf);
  return st;
}

eddy_status_t ad_loop_state(ad_scope_t *s, size_t *comp, size_t *nc,
                            eddy_value_t **fixed) {
  eddy_block_t *fb = s->fwd;
  eddy_op_t *fy = eddy_ir_block_terminator(fb);
  *nc = 0;
  for (uint32_t k = 0; k < fb->num_args; k++) {
    if (eddy_ir_op_operand(fy, k) == fb->args[k])
      TRY(ad_fwd(s->parent, eddy_ir_op_operand(s->fwd_op, k), &fixed[k]));
    else
      comp[(*nc)++] = k;
  }
  return NULL;
}

eddy_value_t *ad_rev_arg(ad_scope_t *s, const eddy_type_t *t, int k,
                         eddy_value_t *val) {
  eddy_value_t *a = eddy_ir_block_add_arg(s->bwd, t);
  ad_vec_push(&s->args, a);
  ad_vec_push(&s->next, a);
  ad_vec_push(&s->rev_arg, a);
  ad_vec_push(&s->rev_kind, (void *)(intptr_t)k);
  ad_vec_push(&s->rev_val, val);
  return a;
}

eddy_status_t ad_revolve_init(ad_scope_t *s, ad_scope_t *bs, size_t r,
                              eddy_value_t *count, eddy_value_t **out) {
  int kind = (int)(intptr_t)bs->rev_kind.data[r];
  if (kind == AD_REV_COUNT) {
    *out = count;
    return NULL;
  }
  if (kind == AD_REV_FINAL)
    return ad_fwd(s, ad_resolve(s->ad, bs->rev_val.data[r]), out);
  const eddy_type_t *lt = ((eddy_value_t *)bs->rev_arg.data[r])->type;
  eddy_value_t *first = NULL;
  if (kind == AD_REV_POSITIONS)
    TRY(ad_scalar(s, EDDY_DT_I64, 0.0, &first));
  else
    TRY(ad_fwd(s, bs->rev_val.data[r], &first));
  eddy_op_t *e = NULL;
  TRY(ad_emit_typed(s, "tl.empty", NULL, 0, NULL, 0, &lt, 1, &e));
  eddy_value_t *ops[2] = {eddy_ir_op_result(e, 0), first};
  return ad_emit(s, "tl.push_back", ops, 2, NULL, 0, out);
}

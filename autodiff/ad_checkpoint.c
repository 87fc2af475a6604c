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
///   k = K0
///   x, k = while (c(x)) {
///     x = while (c(x) && t < k) { x = f(x); t += 1 }   [ad.remat]
///     k = next(k)
///   }
///
/// which computes the same values. The ordinary rule then differentiates
/// it. The outer loop stores per segment only what its body reads: the
/// loop state at the segment's start (and k). The inner loop is marked
/// ad.remat, so the outer gradient body does not store its accumulator
/// lists per segment but re-runs it from the stored state (ad.c,
/// ad_remat_loop): one segment's intermediates exist at a time, during
/// that segment's gradient. The forward copy's lists become dead and are
/// dropped (dce).
///
/// Segments: with SLOTS, a first run of the loop that stores nothing counts
/// the trip count T and k = max(ceil(T / SLOTS), 1) throughout. Without,
/// k = 1, 2, 3, ...: T iterations take about sqrt(2T) segments of at most
/// about sqrt(2T) iterations, and nothing needs T in advance.
///
/// Memory for T iterations, state of S bytes and B bytes stored per
/// iteration: store T*B; checkpoint (SLOTS) SLOTS*S + ceil(T/SLOTS)*B;
/// checkpoint (growing) about sqrt(2T)*(S + B). Time: one more forward
/// run (two with SLOTS).
#include "autodiff/ad_internal.h"

#include "dialects/ctl/ctl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define TRY EDDY_RETURN_IF_ERROR

eddy_ad_options_t eddy_ad_options_default(void) {
  return (eddy_ad_options_t){.loop_memory = EDDY_AD_LOOP_STORE,
                             .checkpoint_slots = 0};
}

eddy_status_t eddy_ad_parse_loop_memory(const char *text,
                                        eddy_ad_loop_memory_t *mem,
                                        int64_t *slots) {
  *mem = EDDY_AD_LOOP_STORE;
  *slots = 0;
  if (text && strcmp(text, "store") == 0)
    return NULL;
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
                            "loop memory '%s': expected store, checkpoint or "
                            "checkpoint:SLOTS with 1 <= SLOTS <= 2^31",
                            text ? text : "");
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

/// Copies the ops of src into dst (at its end), src's arguments read as
/// dst's first src->num_args arguments.
static void ckpt_clone_block(const eddy_block_t *src, eddy_block_t *dst) {
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

/// Builds, before w, a copy of w counting its iterations; *out_count is
/// the count.
static eddy_status_t ckpt_count(ad_t *ad, eddy_op_t *w, eddy_value_t **inits,
                                const eddy_type_t **types,
                                eddy_value_t **out_count) {
  size_t n = w->num_results;
  eddy_builder_t b;
  eddy_ir_builder_init(&b, ad->ctx);
  eddy_ir_builder_set_before(&b, w);
  TRY(ckpt_i64(&b, ad, 0, &inits[n]));
  eddy_op_t *cw = NULL;
  TRY(ad_build_while(&b, inits, types, n + 1, &cw));
  cw->loc = w->loc;
  eddy_block_t *cb = eddy_ctl_while_cond(cw), *bb = eddy_ctl_while_body(cw);
  ckpt_clone_block(eddy_ctl_while_cond(w), cb);
  ckpt_clone_block(eddy_ctl_while_body(w), bb);
  eddy_builder_t yb;
  eddy_ir_builder_init(&yb, ad->ctx);
  eddy_ir_builder_set_before(&yb, eddy_ir_block_terminator(bb));
  eddy_value_t *one = NULL, *inc = NULL;
  TRY(ckpt_i64(&yb, ad, 1, &one));
  TRY(ckpt_bin(&yb, "core.add", bb->args[n], one, &inc));
  ckpt_yield_append(bb, inc);
  *out_count = eddy_ir_op_result(cw, n);
  return NULL;
}

/// Rewrites w (policy checkpoint with `slots`) as described at the top.
static eddy_status_t ckpt_split(ad_t *ad, eddy_op_t *w, int64_t slots) {
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
  /* The segment length before the first segment. */
  if (!st && slots > 0) {
    eddy_value_t *count = NULL, *s1 = NULL, *s = NULL, *one = NULL,
                 *sum = NULL, *q = NULL;
    st = ckpt_count(ad, w, inits, types, &count);
    if (!st)
      st = ckpt_i64(&b, ad, slots - 1, &s1);
    if (!st)
      st = ckpt_i64(&b, ad, slots, &s);
    if (!st)
      st = ckpt_i64(&b, ad, 1, &one);
    if (!st)
      st = ckpt_bin(&b, "core.add", count, s1, &sum);
    if (!st)
      st = ckpt_bin(&b, "core.div", sum, s, &q);
    if (!st)
      st = ckpt_bin(&b, "core.maximum", q, one, &inits[n]);
  } else if (!st) {
    st = ckpt_i64(&b, ad, 1, &inits[n]);
  }
  eddy_op_t *ow = NULL, *iw = NULL;
  if (!st)
    st = ad_build_while(&b, inits, types, n + 1, &ow);
  if (!st) {
    ow->loc = w->loc;
    for (uint32_t a = 0; a < w->num_attrs; a++)
      if (strcmp(w->attrs[a].name->str, "eddy.loop_memory") != 0)
        eddy_ir_op_set_attr(ow, w->attrs[a].name->str, w->attrs[a].value);
    /* Outer cond: a copy of w's. */
    ckpt_clone_block(wc, eddy_ctl_while_cond(ow));
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
    if (!st && slots == 0) {
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
    if (!st && mem == EDDY_AD_LOOP_CHECKPOINT)
      st = ckpt_split(ad, c.loops[i], slots);
  }
  free(c.loops);
  return st;
}

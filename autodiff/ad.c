/// The autodiff driver and the machinery every rule uses: scopes, making
/// forward values visible in the backward code, adjoint accumulation and
/// the reduction that undoes broadcasting.
#include "autodiff/ad_internal.h"
#include "ir/passes/passes.h"

#include "dialects/ctl/ctl.h"
#include "dialects/tl/tl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/// Ranks handled when undoing broadcasting (the core dialect's limit).
#define AD_MAX_RANK 64

/* ---- Small helpers --------------------------------------------------------- */

void ad_vec_push(ad_vec_t *v, void *p) {
  if (v->len == v->cap) {
    size_t cap = v->cap ? v->cap * 2 : 8;
    void **d = realloc(v->data, cap * sizeof(*d));
    if (!d)
      abort(); /* out of memory: the IR arena aborts the same way */
    v->data = d;
    v->cap = cap;
  }
  v->data[v->len++] = p;
}

void ad_vec_free(ad_vec_t *v) {
  free(v->data);
  v->data = NULL;
  v->len = v->cap = 0;
}

void ad_scope_init(ad_scope_t *s, ad_t *ad, ad_scope_t *parent,
                   ad_scope_kind_t kind) {
  memset(s, 0, sizeof(*s));
  s->ad = ad;
  s->parent = parent;
  s->kind = kind;
  s->depth = parent ? parent->depth + (kind == AD_SCOPE_WHILE) : 0;
  eddy_ptrmap_init(&s->adj);
  eddy_ptrmap_init(&s->vis);
}

void ad_scope_destroy(ad_scope_t *s) {
  eddy_ptrmap_destroy(&s->adj);
  eddy_ptrmap_destroy(&s->vis);
  ad_vec_t *vecs[] = {&s->exp_fwd, &s->exp_bwd, &s->exp_list, &s->exp_next,
                      &s->cap_fwd, &s->cap_cur, &s->cap_arg,  &s->args,
                      &s->next,    &s->rev_arg, &s->rev_kind, &s->rev_val};
  for (size_t i = 0; i < sizeof vecs / sizeof vecs[0]; i++)
    ad_vec_free(vecs[i]);
}

eddy_status_t ad_scratch_block(ad_t *ad, eddy_block_t **out_block) {
  /* A detached op with one region holds the block; it never joins the IR. */
  eddy_op_state_t st = {.name = "ctl.if", .num_regions = 1};
  eddy_op_t *holder = NULL;
  EDDY_RETURN_IF_ERROR(eddy_ir_op_create(ad->ctx, &st, &holder));
  *out_block = eddy_ir_region_add_block(&holder->regions[0]);
  return NULL;
}

void ad_move_ops(eddy_block_t *from, eddy_block_t *to) {
  while (from->first) {
    eddy_op_t *op = from->first;
    eddy_ir_op_remove(op);
    eddy_ir_op_append(op, to);
  }
}

eddy_value_t *ad_resolve(ad_t *ad, eddy_value_t *v) {
  eddy_value_t *n;
  while ((n = eddy_ptrmap_get(&ad->repl, v)))
    v = n;
  return v;
}

void ad_replace(ad_t *ad, eddy_value_t *from, eddy_value_t *to) {
  eddy_ir_value_replace_all_uses(from, to);
  eddy_ptrmap_put(&ad->repl, from, to);
}

bool ad_is_diff(const eddy_type_t *t) {
  while (t->kind == EDDY_TYPE_LIST) // lists of lists included
    t = t->elem;
  return t->kind == EDDY_TYPE_TENSOR && eddy_dtype_is_float(t->dtype);
}

bool ad_defined_in(const eddy_value_t *v, const eddy_block_t *b) {
  return v->def ? v->def->block == b : v->block == b;
}

/* ---- Building ---------------------------------------------------------------- */

static void ad_builder(ad_scope_t *s, eddy_builder_t *b) {
  eddy_ir_builder_init(b, s->ad->ctx);
  if (s->bwd_before)
    eddy_ir_builder_set_before(b, s->bwd_before);
  else
    eddy_ir_builder_set_end(b, s->bwd);
}

eddy_status_t ad_emit(ad_scope_t *s, const char *name,
                      eddy_value_t *const *operands, size_t n,
                      const eddy_named_attr_t *attrs, size_t na,
                      eddy_value_t **out) {
  eddy_builder_t b;
  ad_builder(s, &b);
  /* out may alias an operand slot: write it only after the op is built */
  eddy_value_t *r = NULL;
  eddy_status_t st = eddy_ir_build_simple(&b, name, operands, n, attrs, na, &r);
  *out = r;
  return st;
}

eddy_status_t ad_emit_typed(ad_scope_t *s, const char *name,
                            eddy_value_t *const *operands, size_t n,
                            const eddy_named_attr_t *attrs, size_t na,
                            const eddy_type_t *const *types, size_t nt,
                            eddy_op_t **out_op) {
  eddy_builder_t b;
  ad_builder(s, &b);
  eddy_op_state_t st = {.name = name,
                        .operands = operands,
                        .num_operands = n,
                        .attrs = attrs,
                        .num_attrs = na,
                        .result_types = types,
                        .num_results = nt};
  return eddy_ir_build(&b, &st, out_op);
}

eddy_status_t ad_un(ad_scope_t *s, const char *name, eddy_value_t *x,
                    eddy_value_t **out) {
  return ad_emit(s, name, &x, 1, NULL, 0, out);
}

eddy_status_t ad_bin(ad_scope_t *s, const char *name, eddy_value_t *a,
                     eddy_value_t *b, eddy_value_t **out) {
  eddy_value_t *ops[2] = {a, b};
  return ad_emit(s, name, ops, 2, NULL, 0, out);
}

static const eddy_attr_t *ad_zero_attr(eddy_ctx_t *ctx,
                                       const eddy_type_t *t) {
  uint64_t zero[2] = {0, 0};
  return eddy_ir_dense_splat_attr_get(ctx, t, zero);
}

eddy_status_t ad_scalar(ad_scope_t *s, eddy_dtype_t dt, double v,
                        eddy_value_t **out) {
  const eddy_type_t *t = eddy_ir_scalar_type_get(s->ad->ctx, dt);
  eddy_builder_t b;
  ad_builder(s, &b);
  return eddy_ir_build_constant(
      &b, eddy_ir_dense_attr_from_f64(s->ad->ctx, t, &v, 1), out);
}

eddy_status_t ad_attr_i64s(ad_t *ad, const char *name, const int64_t *v,
                           size_t n, eddy_named_attr_t *out) {
  *out = eddy_ir_named_attr(ad->ctx, name,
                            eddy_ir_i64_array_attr_get(ad->ctx, v, n));
  return NULL;
}

static eddy_named_attr_t ad_str_attr(ad_t *ad, const char *name,
                                     const char *s) {
  return eddy_ir_named_attr(
      ad->ctx, name, eddy_ir_string_attr_get(ad->ctx, s, strlen(s)));
}

/// A list of tensors whose shape is not static: its zero adjoint is
/// tl.zeros_like of the list (an unset item of a tl.reserve cannot be read
/// as zeros without a static shape, and the items may differ in shape).
static bool ad_items_dynamic(const eddy_type_t *t) {
  return t->kind == EDDY_TYPE_LIST && t->elem->kind == EDDY_TYPE_TENSOR &&
         !eddy_ir_type_is_static(t->elem);
}

eddy_status_t ad_zeros(ad_scope_t *s, const eddy_type_t *t, eddy_value_t *src,
                       eddy_value_t **out) {
  ad_t *ad = s->ad;
  if (ad_items_dynamic(t)) {
    eddy_op_t *op = NULL;
    EDDY_RETURN_IF_ERROR(
        ad_emit_typed(s, "tl.zeros_like", &src, 1, NULL, 0, &t, 1, &op));
    *out = eddy_ir_op_result(op, 0);
    return NULL;
  }
  if (t->kind == EDDY_TYPE_LIST) {
    /* A reserved list reads as zeros (static elements): a zero adjoint of
       the same length as the list. */
    eddy_value_t *n = NULL;
    EDDY_RETURN_IF_ERROR(ad_un(s, "tl.length", src, &n));
    eddy_op_t *op = NULL;
    EDDY_RETURN_IF_ERROR(
        ad_emit_typed(s, "tl.reserve", &n, 1, NULL, 0, &t, 1, &op));
    *out = eddy_ir_op_result(op, 0);
    return NULL;
  }
  if (eddy_ir_type_is_static(t)) {
    eddy_builder_t b;
    ad_builder(s, &b);
    return eddy_ir_build_constant(&b, ad_zero_attr(ad->ctx, t), out);
  }
  /* Dynamic shape: src * 0 through an integer cast, so that inf and NaN in
     src still give exact zeros. */
  eddy_value_t *x = src, *z = NULL, *m = NULL;
  if (eddy_dtype_is_float(src->type->dtype)) {
    eddy_named_attr_t a = ad_str_attr(ad, "dtype", "i32");
    EDDY_RETURN_IF_ERROR(ad_emit(s, "core.cast", &src, 1, &a, 1, &x));
  }
  EDDY_RETURN_IF_ERROR(ad_scalar(s, x->type->dtype, 0.0, &z));
  EDDY_RETURN_IF_ERROR(ad_bin(s, "core.mul", x, z, &m));
  eddy_named_attr_t a = ad_str_attr(ad, "dtype", eddy_dtype_name(t->dtype));
  return ad_emit(s, "core.cast", &m, 1, &a, 1, out);
}

eddy_status_t ad_zeros_like_fwd(ad_scope_t *s, eddy_value_t *v,
                                eddy_value_t **out) {
  if (v->type->kind == EDDY_TYPE_TENSOR && eddy_ir_type_is_static(v->type))
    return ad_zeros(s, v->type, NULL, out);
  eddy_value_t *src = NULL;
  if (v->type->kind == EDDY_TYPE_LIST && !ad_items_dynamic(v->type)) {
    eddy_value_t *n = NULL;
    EDDY_RETURN_IF_ERROR(ad_fwd_len(s, v, &n));
    eddy_op_t *op = NULL;
    EDDY_RETURN_IF_ERROR(
        ad_emit_typed(s, "tl.reserve", &n, 1, NULL, 0, &v->type, 1, &op));
    *out = eddy_ir_op_result(op, 0);
    return NULL;
  }
  EDDY_RETURN_IF_ERROR(ad_fwd(s, v, &src));
  return ad_zeros(s, v->type, src, out);
}

/* ---- Forward values in the backward code ------------------------------------ */

/// Ops that can be re-created where they are needed instead of carried:
/// pure, no operands, no regions (constants, iota, empty lists).
static bool ad_is_recreatable(const eddy_op_t *op) {
  return op && op->num_operands == 0 && op->num_regions == 0 &&
         eddy_ir_op_has_trait(op, EDDY_TRAIT_PURE);
}

static void ad_builder_top(ad_scope_t *s, eddy_builder_t *b) {
  eddy_ir_builder_init(b, s->ad->ctx);
  if (s->bwd->first)
    eddy_ir_builder_set_before(b, s->bwd->first);
  else
    eddy_ir_builder_set_end(b, s->bwd);
}

/// Data movement that is cheaper to redo in the gradient body than to store
/// per iteration, when its operands are there anyway.
static bool ad_is_cheap(const eddy_op_t *op) {
  static const char *const k_cheap[] = {
      "core.reshape", "core.transpose", "core.broadcast_to", "core.cast",
      "core.slice",   "core.gather",    "core.concat"};
  if (!op || op->num_results != 1 || op->num_regions)
    return false;
  for (size_t i = 0; i < sizeof k_cheap / sizeof k_cheap[0]; i++)
    if (eddy_ir_op_is(op, k_cheap[i]))
      return true;
  return false;
}

/// Bytes of one value of type t; INT64_MAX when not static.
static int64_t ad_bytes(const eddy_type_t *t) {
  int64_t n = t->kind == EDDY_TYPE_TENSOR ? eddy_ir_type_num_elements(t) : -1;
  int64_t b;
  if (n < 0 || !eddy_checked_mul_i64(n, (int64_t)eddy_dtype_size(t->dtype), &b))
    return INT64_MAX;
  return b;
}

/// v is a loop value of s's forward loop that its body yields unchanged:
/// the loop's init in every iteration.
static bool ad_is_pass_through(const ad_scope_t *s, const eddy_value_t *v) {
  if (v->def || v->block != s->fwd || s->kind != AD_SCOPE_WHILE)
    return false;
  eddy_op_t *y = eddy_ir_block_terminator(s->fwd);
  return v->index < y->num_operands && eddy_ir_op_operand(y, v->index) == v;
}

/// Bytes per iteration it would take to make v available in the gradient
/// body of s: 0 when it is free there (defined outside the loop, a loop
/// value passed through unchanged, a constant, already carried), the cost
/// of its operands when it is cheap to recompute, else its own size.
static int64_t ad_cost(ad_scope_t *s, eddy_value_t *v, int depth) {
  if (!ad_defined_in(v, s->fwd) || ad_is_recreatable(v->def) ||
      eddy_ptrmap_has(&s->vis, v) || ad_is_pass_through(s, v))
    return 0;
  if (depth < 4 && ad_is_cheap(v->def)) {
    int64_t sum = 0;
    for (uint32_t i = 0; i < v->def->num_operands; i++) {
      int64_t c = ad_cost(s, eddy_ir_op_operand(v->def, i), depth + 1);
      if (c == INT64_MAX || !eddy_checked_add_i64(sum, c, &sum))
        return INT64_MAX;
    }
    if (sum < ad_bytes(v->type))
      return sum;
  }
  return ad_bytes(v->type);
}

/// Clones op into the gradient body of s with its values read through map
/// (forward value -> value visible there), after the last op of that body
/// that defines one of them.
static eddy_op_t *ad_place_copy(ad_scope_t *s, const eddy_op_t *op,
                                eddy_ptrmap_t *map) {
  eddy_ptrmap_t defs;
  eddy_ptrmap_init(&defs);
  for (size_t i = 0; i < map->cap; i++)
    if (map->keys && map->keys[i] && map->vals[i])
      eddy_ptrmap_put(&defs, map->vals[i], map->vals[i]);
  eddy_op_t *after = NULL;
  for (eddy_op_t *b = s->bwd->first; b; b = b->next)
    for (uint32_t r = 0; r < b->num_results; r++)
      if (eddy_ptrmap_has(&defs, eddy_ir_op_result(b, r)))
        after = b;
  eddy_ptrmap_destroy(&defs);
  eddy_op_t *copy = eddy_ir_op_clone(op, map);
  if (after)
    eddy_ir_op_insert_after(copy, after);
  else if (s->bwd->first)
    eddy_ir_op_insert_before(copy, s->bwd->first);
  else
    eddy_ir_op_append(copy, s->bwd);
  return copy;
}

/// Recomputes v = op(operands) in the gradient body when that stores less
/// per iteration than carrying v (its operands are free there or smaller);
/// *out stays NULL otherwise.
static eddy_status_t ad_recompute(ad_scope_t *s, eddy_value_t *v,
                                  eddy_value_t **out) {
  *out = NULL;
  eddy_op_t *op = v->def;
  if (!ad_is_cheap(op))
    return NULL;
  int64_t sum = 0;
  for (uint32_t i = 0; i < op->num_operands; i++) {
    int64_t c = ad_cost(s, eddy_ir_op_operand(op, i), 1);
    if (c == INT64_MAX || !eddy_checked_add_i64(sum, c, &sum))
      return NULL;
  }
  if (sum >= ad_bytes(v->type))
    return NULL;
  eddy_ptrmap_t map;
  eddy_ptrmap_init(&map);
  eddy_status_t st = NULL;
  for (uint32_t i = 0; i < op->num_operands && !st; i++) {
    eddy_value_t *o = eddy_ir_op_operand(op, i), *c = NULL;
    st = ad_fwd(s, o, &c);
    if (!st)
      eddy_ptrmap_put(&map, o, c);
  }
  if (st) {
    eddy_ptrmap_destroy(&map);
    return st;
  }
  eddy_op_t *copy = ad_place_copy(s, op, &map);
  eddy_ptrmap_destroy(&map);
  *out = eddy_ir_op_result(copy, 0);
  return NULL;
}

bool ad_in_block(const eddy_value_t *v, const eddy_block_t *b) {
  for (eddy_block_t *vb = eddy_ir_value_block(v); vb;) {
    if (vb == b)
      return true;
    eddy_op_t *p = eddy_ir_block_parent_op(vb);
    vb = p ? p->block : NULL;
  }
  return false;
}

/// True when v is defined in one of op's regions, at any depth.
static bool ad_inside(const eddy_value_t *v, const eddy_op_t *op) {
  eddy_block_t *b = eddy_ir_value_block(v);
  eddy_op_t *p = b ? eddy_ir_block_parent_op(b) : NULL;
  return p && eddy_ir_op_is_ancestor(op, p);
}

typedef struct ad_free_walk {
  ad_scope_t *s;
  const eddy_op_t *root;
  const eddy_block_t *home;
  eddy_ptrmap_t *map;
  eddy_status_t st;
} ad_free_walk_t;

static eddy_walk_result_t ad_free_visit(eddy_op_t *op, void *user) {
  ad_free_walk_t *w = user;
  for (uint32_t i = 0; i < op->num_operands && !w->st; i++) {
    eddy_value_t *u = eddy_ir_op_operand(op, i), *c = NULL;
    if (!u || eddy_ptrmap_has(w->map, u) || ad_inside(u, w->root) ||
        (w->home && ad_in_block(u, w->home)))
      continue;
    w->st = ad_fwd(w->s, u, &c);
    if (!w->st)
      eddy_ptrmap_put(w->map, u, c);
  }
  return w->st ? EDDY_WALK_INTERRUPT : EDDY_WALK_ADVANCE;
}

eddy_status_t ad_map_free(ad_scope_t *s, eddy_op_t *op,
                          const eddy_block_t *home, eddy_ptrmap_t *map) {
  ad_free_walk_t w = {.s = s, .root = op, .home = home, .map = map};
  eddy_ir_walk_pre(op, ad_free_visit, &w);
  return w.st;
}

/// Re-runs the loop op (marked AD_REMAT_ATTR, defined in the forward body
/// of s) in the gradient body of s, from its operands and the outside
/// values its regions read, all made visible there; records every result
/// of the copy as the visible value of op's result.
static eddy_status_t ad_remat_loop(ad_scope_t *s, eddy_op_t *op) {
  eddy_ptrmap_t map;
  eddy_ptrmap_init(&map);
  eddy_status_t st = ad_map_free(s, op, NULL, &map);
  if (st) {
    eddy_ptrmap_destroy(&map);
    return st;
  }
  eddy_op_t *copy = ad_place_copy(s, op, &map);
  eddy_ptrmap_destroy(&map);
  for (uint32_t r = 0; r < op->num_results; r++)
    eddy_ptrmap_put(&s->vis, eddy_ir_op_result(op, r),
                    eddy_ir_op_result(copy, r));
  return NULL;
}

static eddy_status_t ad_export_while(ad_scope_t *s, eddy_value_t *v,
                                     eddy_value_t **out) {
  ad_t *ad = s->ad;
  if (v->def && eddy_ir_op_is(v->def, "ctl.while") &&
      eddy_ir_op_attr_bool(v->def, AD_REMAT_ATTR, false)) {
    EDDY_RETURN_IF_ERROR(ad_remat_loop(s, v->def));
    *out = eddy_ptrmap_get(&s->vis, v);
    return NULL;
  }
  EDDY_RETURN_IF_ERROR(ad_recompute(s, v, out));
  if (*out)
    return NULL;
  /* A loop value passed through unchanged is its init in every iteration. */
  if (ad_is_pass_through(s, v))
    return ad_fwd(s->parent, eddy_ir_op_operand(s->fwd_op, v->index), out);
  if (!v->def && v->block == s->fwd) {
    /* The loop values of a revolve loop are rebuilt from snapshots, those
       of a reversible one by inverting the steps. */
    if (eddy_ir_op_attr(s->fwd_op, AD_REVOLVE_ATTR) ||
        eddy_ptrmap_has(&s->ad->inverse, s->fwd_op)) {
      EDDY_RETURN_IF_ERROR(eddy_ir_op_attr(s->fwd_op, AD_REVOLVE_ATTR)
                               ? ad_revolve_state(s)
                               : ad_reversible_state(s));
      *out = eddy_ptrmap_get(&s->vis, v);
      return NULL;
    }
  }
  /* A list (an inner loop's accumulator, a TensorArray) is pushed as it
     is: the accumulator becomes a list of lists, so its elements keep
     their dynamic shapes (the "Functional while_loop" RFC: nested loops accumulate into nested
     lists). */
  const eddy_type_t *elem = v->type;
  if (elem->kind != EDDY_TYPE_TENSOR && elem->kind != EDDY_TYPE_LIST)
    return eddy_status_create(EDDY_ERR_UNSUPPORTED,
                              "autodiff: cannot accumulate a value of this "
                              "type across loop iterations");
  const eddy_type_t *lt = eddy_ir_list_type_get(ad->ctx, elem);
  eddy_value_t *larg = eddy_ir_block_add_arg(s->bwd, lt);
  eddy_builder_t b;
  ad_builder_top(s, &b);
  const eddy_type_t *types[2] = {lt, elem};
  eddy_op_state_t st = {.name = "tl.pop_back",
                        .operands = &larg,
                        .num_operands = 1,
                        .result_types = types,
                        .num_results = 2};
  eddy_op_t *pop = NULL;
  EDDY_RETURN_IF_ERROR(eddy_ir_build(&b, &st, &pop));
  eddy_value_t *x = eddy_ir_op_result(pop, 1);
  ad_vec_push(&s->args, larg);
  ad_vec_push(&s->next, eddy_ir_op_result(pop, 0));
  ad_vec_push(&s->exp_fwd, v);
  ad_vec_push(&s->exp_bwd, x);
  ad_vec_push(&s->exp_list, larg);
  *out = x;
  return NULL;
}

eddy_status_t ad_fwd(ad_scope_t *s, eddy_value_t *v, eddy_value_t **out) {
  *out = NULL;
  if (s->kind == AD_SCOPE_FUNC) {
    *out = v;
    return NULL;
  }
  eddy_value_t *c = eddy_ptrmap_get(&s->vis, v);
  if (c) {
    *out = c;
    return NULL;
  }
  if (!ad_defined_in(v, s->fwd)) {
    EDDY_RETURN_IF_ERROR(ad_fwd(s->parent, v, &c));
  } else if (ad_is_recreatable(v->def)) {
    eddy_ptrmap_t map;
    eddy_ptrmap_init(&map);
    eddy_op_t *copy = eddy_ir_op_clone(v->def, &map);
    eddy_ptrmap_destroy(&map);
    if (s->bwd->first)
      eddy_ir_op_insert_before(copy, s->bwd->first);
    else
      eddy_ir_op_append(copy, s->bwd);
    c = eddy_ir_op_result(copy, v->index);
  } else if (s->kind == AD_SCOPE_IF) {
    /* A placeholder, replaced by the forward if's new result when the
       branch is finished (ad_if.c). */
    eddy_block_t *ph = NULL;
    EDDY_RETURN_IF_ERROR(ad_scratch_block(s->ad, &ph));
    c = eddy_ir_block_add_arg(ph, v->type);
    ad_vec_push(&s->exp_fwd, v);
    ad_vec_push(&s->exp_bwd, c);
  } else {
    EDDY_RETURN_IF_ERROR(ad_export_while(s, v, &c));
  }
  eddy_ptrmap_put(&s->vis, v, c);
  *out = c;
  return NULL;
}

/// Builds a one-operand op in the forward code right after v is defined.
static eddy_status_t ad_fwd_after(ad_t *ad, eddy_value_t *v, const char *name,
                                  const eddy_named_attr_t *attrs, size_t na,
                                  eddy_value_t **out) {
  eddy_builder_t b;
  eddy_ir_builder_init(&b, ad->ctx);
  if (v->def)
    eddy_ir_builder_set_after(&b, v->def);
  else if (v->block->first)
    eddy_ir_builder_set_before(&b, v->block->first);
  else
    eddy_ir_builder_set_end(&b, v->block);
  return eddy_ir_build_simple(&b, name, &v, 1, attrs, na, out);
}

eddy_status_t ad_fwd_dim(ad_scope_t *s, eddy_value_t *v, int64_t index,
                         eddy_value_t **out) {
  eddy_named_attr_t a = eddy_ir_named_attr(
      s->ad->ctx, "index", eddy_ir_int_attr_get(s->ad->ctx, index, EDDY_DT_I64));
  eddy_value_t *d = NULL;
  EDDY_RETURN_IF_ERROR(ad_fwd_after(s->ad, v, "core.dim", &a, 1, &d));
  return ad_fwd(s, d, out);
}

eddy_status_t ad_fwd_len(ad_scope_t *s, eddy_value_t *list,
                         eddy_value_t **out) {
  eddy_value_t *n = NULL;
  EDDY_RETURN_IF_ERROR(ad_fwd_after(s->ad, list, "tl.length", NULL, 0, &n));
  return ad_fwd(s, n, out);
}

/* ---- Adjoints ------------------------------------------------------------------ */

eddy_value_t *ad_adj_get(ad_scope_t *s, eddy_value_t *v) {
  return eddy_ptrmap_get(&s->adj, v);
}

static eddy_status_t ad_sum(ad_scope_t *s, eddy_value_t *a, eddy_value_t *b,
                            eddy_value_t **out) {
  if (a->type->kind != EDDY_TYPE_LIST)
    return ad_bin(s, "core.add", a, b, out);
  /* Two list adjoints add item by item (tl.add): an item only one of them
     set is that item, as TensorFlow's AddN of TensorLists treats an unset
     item as zeros of the other's shape. The items may differ in shape from
     one another, and lists of lists add one level down. */
  eddy_value_t *ops[2] = {a, b};
  eddy_op_t *sum = NULL;
  EDDY_RETURN_IF_ERROR(
      ad_emit_typed(s, "tl.add", ops, 2, NULL, 0, &a->type, 1, &sum));
  *out = eddy_ir_op_result(sum, 0);
  return NULL;
}

eddy_status_t ad_adj_add(ad_scope_t *s, eddy_value_t *v, eddy_value_t *g) {
  if (!g || !ad_active(s->ad, v))
    return NULL;
  if (s->kind == AD_SCOPE_FUNC || ad_defined_in(v, s->fwd)) {
    eddy_value_t *cur = eddy_ptrmap_get(&s->adj, v);
    if (cur)
      EDDY_RETURN_IF_ERROR(ad_sum(s, cur, g, &g));
    eddy_ptrmap_put(&s->adj, v, g);
    return NULL;
  }
  for (size_t i = 0; i < s->cap_fwd.len; i++)
    if (s->cap_fwd.data[i] == v) {
      eddy_value_t *sum = NULL;
      EDDY_RETURN_IF_ERROR(ad_sum(s, s->cap_cur.data[i], g, &sum));
      s->cap_cur.data[i] = sum;
      return NULL;
    }
  if (s->kind == AD_SCOPE_WHILE) {
    /* A value captured by the loop: its adjoint is summed over the
       iterations in a loop value of the gradient loop. */
    eddy_value_t *arg = eddy_ir_block_add_arg(s->bwd, v->type);
    ad_vec_push(&s->args, arg);
    ad_vec_push(&s->next, NULL); /* set when the loop is finished */
    ad_vec_push(&s->cap_arg, arg);
    EDDY_RETURN_IF_ERROR(ad_sum(s, arg, g, &g));
  } else {
    ad_vec_push(&s->cap_arg, NULL);
  }
  ad_vec_push(&s->cap_fwd, v);
  ad_vec_push(&s->cap_cur, g);
  return NULL;
}

eddy_status_t ad_adj_take(ad_scope_t *s, eddy_value_t *v,
                          eddy_value_t **out) {
  *out = NULL;
  if (!ad_active(s->ad, v))
    return NULL;
  if (s->kind == AD_SCOPE_FUNC || ad_defined_in(v, s->fwd)) {
    *out = eddy_ptrmap_get(&s->adj, v);
    return NULL;
  }
  for (size_t i = 0; i < s->cap_fwd.len; i++)
    if (s->cap_fwd.data[i] == v) {
      *out = s->cap_cur.data[i];
      return NULL;
    }
  if (s->kind != AD_SCOPE_WHILE)
    return NULL;
  /* The accumulator over s's iterations, with nothing added yet. */
  eddy_value_t *arg = eddy_ir_block_add_arg(s->bwd, v->type);
  ad_vec_push(&s->args, arg);
  ad_vec_push(&s->next, NULL);
  ad_vec_push(&s->cap_arg, arg);
  ad_vec_push(&s->cap_fwd, v);
  ad_vec_push(&s->cap_cur, arg);
  *out = arg;
  return NULL;
}

void ad_adj_set(ad_scope_t *s, eddy_value_t *v, eddy_value_t *g) {
  if (s->kind == AD_SCOPE_FUNC || ad_defined_in(v, s->fwd)) {
    eddy_ptrmap_put(&s->adj, v, g);
    return;
  }
  for (size_t i = 0; i < s->cap_fwd.len; i++)
    if (s->cap_fwd.data[i] == v)
      s->cap_cur.data[i] = g;
}

/// Sums g over the axes in which v was broadcast, so that the result has
/// v's shape. Dims that are dynamic in v may or may not have been broadcast;
/// that is decided at run time with a ctl.if on dim(v) == 1.
static eddy_status_t ad_reduce_to(ad_scope_t *s, eddy_value_t *g,
                                  eddy_value_t *v, eddy_value_t **out) {
  ad_t *ad = s->ad;
  *out = g;
  const eddy_type_t *gt = g->type, *vt = v->type;
  if (gt == vt || vt->kind != EDDY_TYPE_TENSOR)
    return NULL;
  if (gt->rank == EDDY_RANK_UNKNOWN || vt->rank == EDDY_RANK_UNKNOWN) {
    if (eddy_ir_type_is_compatible(gt, vt))
      return NULL;
    return eddy_status_create(EDDY_ERR_UNSUPPORTED,
                              "autodiff: cannot undo broadcasting to an "
                              "unranked operand");
  }
  if (gt->rank > AD_MAX_RANK)
    return eddy_status_create(EDDY_ERR_UNSUPPORTED, "autodiff: rank too large");
  if (gt->rank < vt->rank)
    return eddy_status_create(EDDY_ERR_INTERNAL,
                              "autodiff: gradient of rank %d for an operand "
                              "of rank %d",
                              (int)gt->rank, (int)vt->rank);
  int32_t lead = gt->rank - vt->rank;
  if (lead > 0) {
    int64_t axes[AD_MAX_RANK];
    if (lead > (int32_t)(sizeof axes / sizeof axes[0]))
      return eddy_status_create(EDDY_ERR_UNSUPPORTED, "autodiff: rank too large");
    for (int32_t i = 0; i < lead; i++)
      axes[i] = i;
    eddy_named_attr_t a;
    ad_attr_i64s(ad, "axes", axes, (size_t)lead, &a);
    EDDY_RETURN_IF_ERROR(ad_emit(s, "core.reduce_sum", &g, 1, &a, 1, &g));
  }
  int64_t axes[AD_MAX_RANK];
  size_t na = 0;
  for (int32_t i = 0; i < vt->rank && i < g->type->rank; i++) {
    int64_t vd = vt->dims[i], gd = g->type->dims[i];
    if (vd == 1 && gd != 1 && na < sizeof axes / sizeof axes[0])
      axes[na++] = i;
  }
  if (na) {
    eddy_named_attr_t a[2];
    ad_attr_i64s(ad, "axes", axes, na, &a[0]);
    a[1] = eddy_ir_named_attr(ad->ctx, "keepdims",
                              eddy_ir_bool_attr_get(ad->ctx, true));
    EDDY_RETURN_IF_ERROR(ad_emit(s, "core.reduce_sum", &g, 1, a, 2, &g));
  }
  for (int32_t i = 0; i < vt->rank; i++) {
    if (vt->dims[i] != EDDY_DIM_DYNAMIC || g->type->dims[i] == 1)
      continue;
    /* if dim(v, i) == 1: sum over axis i, else keep g. */
    eddy_value_t *d = NULL, *one = NULL, *pred = NULL;
    EDDY_RETURN_IF_ERROR(ad_fwd_dim(s, v, i, &d));
    EDDY_RETURN_IF_ERROR(ad_scalar(s, EDDY_DT_I64, 1.0, &one));
    EDDY_RETURN_IF_ERROR(ad_bin(s, "core.eq", d, one, &pred));
    int64_t dims[AD_MAX_RANK];
    const eddy_type_t *git = g->type;
    memcpy(dims, git->dims, (size_t)git->rank * sizeof(int64_t));
    dims[i] = 1;
    const eddy_type_t *st =
        eddy_ir_tensor_type_get(ad->ctx, git->dtype, git->rank, dims);
    const eddy_type_t *rt = eddy_ir_type_generalize(ad->ctx, st, git);
    eddy_builder_t b;
    ad_builder(s, &b);
    eddy_op_t *iff = NULL;
    EDDY_RETURN_IF_ERROR(eddy_ctl_build_if(&b, pred, &rt, 1, &iff));
    eddy_builder_t tb;
    eddy_ir_builder_init(&tb, ad->ctx);
    eddy_ir_builder_set_end(&tb, eddy_ctl_if_then(iff));
    eddy_named_attr_t a[2];
    int64_t ax = i;
    ad_attr_i64s(ad, "axes", &ax, 1, &a[0]);
    a[1] = eddy_ir_named_attr(ad->ctx, "keepdims",
                              eddy_ir_bool_attr_get(ad->ctx, true));
    eddy_value_t *r = NULL;
    EDDY_RETURN_IF_ERROR(
        eddy_ir_build_simple(&tb, "core.reduce_sum", &g, 1, a, 2, &r));
    EDDY_RETURN_IF_ERROR(eddy_ctl_build_yield(&tb, &r, 1, NULL));
    eddy_ir_builder_set_end(&tb, eddy_ctl_if_else(iff));
    EDDY_RETURN_IF_ERROR(eddy_ctl_build_yield(&tb, &g, 1, NULL));
    g = eddy_ir_op_result(iff, 0);
  }
  *out = g;
  return NULL;
}

eddy_status_t ad_adj_add_reduced(ad_scope_t *s, eddy_value_t *v,
                                 eddy_value_t *g) {
  if (!g || !ad_active(s->ad, v))
    return NULL;
  EDDY_RETURN_IF_ERROR(ad_reduce_to(s, g, v, &g));
  return ad_adj_add(s, v, g);
}

/* ---- The reverse walk -------------------------------------------------------- */

eddy_status_t ad_reverse_block(ad_scope_t *s) {
  eddy_op_t *prev = NULL;
  for (eddy_op_t *op = s->fwd->last; op; op = prev) {
    prev = op->prev;
    if (eddy_ir_op_has_trait(op, EDDY_TRAIT_TERMINATOR) || !op->num_results)
      continue;
    eddy_value_t *small[8];
    eddy_value_t **g = small;
    if (op->num_results > 8) {
      g = malloc(op->num_results * sizeof(*g));
      if (!g)
        return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
    }
    bool any = false;
    for (uint32_t i = 0; i < op->num_results; i++) {
      g[i] = ad_adj_get(s, eddy_ir_op_result(op, i));
      any |= g[i] != NULL;
    }
    eddy_status_t st = NULL;
    if (any) {
      bool known = false;
      ad_rule_fn fn = ad_rule_lookup(op, &known);
      if (fn)
        st = fn(s, op, g);
      else if (!known)
        st = eddy_ir_op_error(op, "has no gradient rule (autodiff)");
    }
    if (g != small)
      free(g);
    EDDY_RETURN_IF_ERROR(st);
  }
  return NULL;
}

/* ---- Driver ---------------------------------------------------------------------- */

void eddy_ad_stats_init(eddy_ad_stats_t *s) { memset(s, 0, sizeof(*s)); }

void eddy_ad_stats_destroy(eddy_ad_stats_t *s) {
  if (!s)
    return;
  free(s->loops);
  memset(s, 0, sizeof(*s));
}

void eddy_ad_stats_format(const eddy_ad_stats_t *s, eddy_buf_t *out) {
  eddy_buf_printf(out, "ad.ops-before = %lld\nad.ops-after = %lld\n",
                  (long long)s->num_ops_before, (long long)s->num_ops_after);
  eddy_buf_printf(out, "ad.loops = %zu\n", s->num_loops);
  for (size_t i = 0; i < s->num_loops; i++) {
    const eddy_ad_loop_stat_t *l = &s->loops[i];
    eddy_buf_printf(out, "ad.loop[%zu] ", i);
    if (l->loc) {
      eddy_ir_loc_format(l->loc, out);
      eddy_buf_putc(out, ' ');
    }
    eddy_buf_printf(out, "depth %d: %d lists, ", (int)l->depth,
                    (int)l->num_lists);
    if (l->bytes_per_iteration < 0)
      eddy_buf_puts(out, "dynamic bytes per iteration\n");
    else
      eddy_buf_printf(out, "%lld bytes per iteration\n",
                      (long long)l->bytes_per_iteration);
  }
}

static eddy_walk_result_t ad_count_op(eddy_op_t *op, void *user) {
  (void)op;
  (*(int64_t *)user)++;
  return EDDY_WALK_ADVANCE;
}

static int64_t ad_count_ops(eddy_op_t *func) {
  int64_t n = 0;
  eddy_ir_walk_pre(func, ad_count_op, &n);
  return n - 1;
}

/// When f names its arguments or results (arg_names / result_names), names
/// gf's too: f's arguments, then `d_R` per result R (its seed); f's
/// results, then `d_A` per differentiated argument A. Unnamed ones are
/// called by position (argN, resultN).
static void ad_name_gradient(const eddy_op_t *f, eddy_op_t *gf,
                             const size_t *wrt, size_t num_wrt) {
  const eddy_type_t *ft = eddy_ir_func_type(f);
  uint32_t ni = ft->num_inputs, no = ft->num_outputs;
  bool named = false;
  for (uint32_t i = 0; i < ni && !named; i++)
    named = eddy_ir_func_arg_name(f, i) != NULL;
  for (uint32_t i = 0; i < no && !named; i++)
    named = eddy_ir_func_result_name(f, i) != NULL;
  if (!named)
    return;
  eddy_arena_t *a = eddy_arena_create();
  if (!a)
    return; // the names are only for people
  const char **in = eddy_arena_alloc(a, (ni + no + 1) * sizeof *in);
  const char **out = eddy_arena_alloc(a, (no + num_wrt + 1) * sizeof *out);
  eddy_buf_t b;
  eddy_buf_init(&b);
  char pos[32];
  for (uint32_t i = 0; i < ni; i++) {
    const char *an = eddy_ir_func_arg_label(f, i, pos, sizeof pos);
    in[i] = eddy_arena_strndup(a, an, strlen(an));
  }
  for (uint32_t r = 0; r < no; r++) {
    const char *rn = eddy_ir_func_result_name(f, r);
    eddy_buf_clear(&b);
    if (rn)
      eddy_buf_puts(&b, rn);
    else
      eddy_buf_printf(&b, "result%u", r);
    out[r] = eddy_arena_strndup(a, b.data, b.len);
    eddy_buf_clear(&b);
    eddy_buf_printf(&b, "d_%s", out[r]); // the seed of result R
    in[ni + r] = eddy_arena_strndup(a, b.data, b.len);
  }
  for (size_t w = 0; w < num_wrt; w++) {
    eddy_buf_clear(&b);
    eddy_buf_printf(&b, "d_%s", in[wrt[w]]); // the gradient of argument A
    out[no + w] = eddy_arena_strndup(a, b.data, b.len);
  }
  eddy_ir_func_set_names(gf, "arg_names", in, (size_t)ni + no);
  eddy_ir_func_set_names(gf, "result_names", out, no + num_wrt);
  eddy_buf_destroy(&b);
  eddy_arena_destroy(a);
}

static eddy_status_t ad_check_wrt(const eddy_op_t *f, const size_t *wrt,
                                  size_t num_wrt) {
  const eddy_type_t *ft = eddy_ir_func_type(f);
  for (size_t i = 0; i < num_wrt; i++) {
    if (wrt[i] >= ft->num_inputs)
      return eddy_status_create(
          EDDY_ERR_INVALID_ARGUMENT,
          "@%s has %u arguments; there is no argument %zu 'arg%zu'",
          eddy_ir_func_name(f), ft->num_inputs, wrt[i], wrt[i]);
    const eddy_type_t *t = ft->inputs[wrt[i]];
    if (t->kind != EDDY_TYPE_TENSOR || !eddy_dtype_is_float(t->dtype)) {
      eddy_buf_t b;
      eddy_buf_init(&b);
      eddy_ir_type_print(t, &b);
      char pos[32];
      eddy_status_t st = eddy_status_create(
          EDDY_ERR_INVALID_ARGUMENT,
          "@%s: argument %zu '%s' has type %s, which has no gradient "
          "(only float tensors are differentiable)",
          eddy_ir_func_name(f), wrt[i],
          eddy_ir_func_arg_label(f, wrt[i], pos, sizeof pos), b.data);
      eddy_buf_destroy(&b);
      return st;
    }
  }
  return NULL;
}

static eddy_status_t ad_grad_body(ad_t *ad, eddy_op_t *f, eddy_op_t *gf,
                                  const size_t *wrt, size_t num_wrt) {
  eddy_block_t *src = eddy_ir_func_entry(f);
  eddy_block_t *dst = eddy_ir_func_entry(gf);
  const eddy_type_t *ft = eddy_ir_func_type(f);
  ad_clone_block(src, dst);
  EDDY_RETURN_IF_ERROR(ad_inline_calls(ad, gf));
  EDDY_RETURN_IF_ERROR(ad_checkpoint_loops(ad, gf));
  ad_activity(ad, gf, wrt, num_wrt);

  eddy_op_t *ret = eddy_ir_block_terminator(dst);
  if (!ret || !eddy_ir_op_is(ret, "func.return"))
    return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                              "@%s does not end in func.return",
                              eddy_ir_func_name(f));
  ad_scope_t s;
  ad_scope_init(&s, ad, NULL, AD_SCOPE_FUNC);
  s.fwd = s.bwd = dst;
  s.bwd_before = ret;
  eddy_status_t st = NULL;
  for (uint32_t k = 0; k < ft->num_outputs && !st; k++)
    st = ad_adj_add(&s, eddy_ir_op_operand(ret, k),
                    dst->args[ft->num_inputs + k]);
  if (!st)
    st = ad_reverse_block(&s);
  size_t nres = ft->num_outputs + num_wrt;
  eddy_value_t **vals = calloc(nres ? nres : 1, sizeof(*vals));
  if (!vals && !st)
    st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  for (uint32_t k = 0; k < ft->num_outputs && !st; k++)
    vals[k] = eddy_ir_op_operand(ret, k);
  for (size_t i = 0; i < num_wrt && !st; i++) {
    eddy_value_t *arg = dst->args[wrt[i]];
    eddy_value_t *g = ad_adj_get(&s, arg);
    if (!g)
      st = ad_zeros(&s, arg->type, arg, &g);
    vals[ft->num_outputs + i] = g;
  }
  if (!st)
    eddy_ir_op_set_operands(ret, vals, nres);
  free(vals);
  ad_scope_destroy(&s);
  return st;
}

eddy_status_t eddy_ad_grad(eddy_module_t *m, const char *entry,
                           const size_t *wrt, size_t num_wrt,
                           eddy_ad_stats_t *stats, eddy_op_t **out_func) {
  return eddy_ad_grad_opts(m, entry, wrt, num_wrt, NULL, stats, out_func);
}

eddy_status_t eddy_ad_grad_opts(eddy_module_t *m, const char *entry,
                                const size_t *wrt, size_t num_wrt,
                                const eddy_ad_options_t *opts,
                                eddy_ad_stats_t *stats, eddy_op_t **out_func) {
  eddy_ad_options_t dflt = eddy_ad_options_default();
  if (!opts)
    opts = &dflt;
  if (out_func)
    *out_func = NULL;
  eddy_op_t *f = eddy_ir_module_lookup_func(m, entry);
  if (!f)
    return eddy_status_create(EDDY_ERR_NOT_FOUND,
                              "no function @%s in the module", entry);
  EDDY_RETURN_IF_ERROR(ad_check_wrt(f, wrt, num_wrt));
  const eddy_type_t *ft = eddy_ir_func_type(f);
  size_t nin = ft->num_inputs + ft->num_outputs;
  size_t nout = ft->num_outputs + num_wrt;
  const eddy_type_t **ins = malloc((nin ? nin : 1) * sizeof(*ins));
  const eddy_type_t **outs = malloc((nout ? nout : 1) * sizeof(*outs));
  char *name = malloc(strlen(entry) + 6);
  if (!ins || !outs || !name) {
    free(ins);
    free(outs);
    free(name);
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  }
  for (uint32_t i = 0; i < ft->num_inputs; i++)
    ins[i] = ft->inputs[i];
  for (uint32_t k = 0; k < ft->num_outputs; k++) {
    ins[ft->num_inputs + k] = ft->outputs[k];
    outs[k] = ft->outputs[k];
  }
  for (size_t i = 0; i < num_wrt; i++)
    outs[ft->num_outputs + i] = ft->inputs[wrt[i]];
  strcpy(name, entry);
  strcat(name, "_grad");
  eddy_op_t *gf = NULL;
  eddy_status_t st = NULL;
  if (eddy_ir_module_lookup_func(m, name))
    st = eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                            "the module already has a function @%s", name);
  if (!st)
    st = eddy_ir_func_create(m, name, ins, nin, outs, nout, f->loc, &gf);
  free(ins);
  free(outs);
  free(name);
  EDDY_RETURN_IF_ERROR(st);

  ad_t ad = {.ctx = m->ctx, .m = m, .stats = stats, .opts = opts};
  eddy_ptrmap_init(&ad.repl);
  eddy_ptrmap_init(&ad.active);
  eddy_ptrmap_init(&ad.known);
  eddy_ptrmap_init(&ad.inverse);
  st = ad_grad_body(&ad, f, gf, wrt, num_wrt);
  /* A checkpointed loop's forward segment loop still pushes what its
     recomputed copy in the gradient stores: drop those lists. */
  if (!st && ad.num_checkpointed)
    st = eddy_passes_dce_func(gf);
  eddy_ptrmap_destroy(&ad.repl);
  eddy_ptrmap_destroy(&ad.active);
  eddy_ptrmap_destroy(&ad.known);
  eddy_ptrmap_destroy(&ad.inverse);
  if (!st) {
    st = eddy_ir_verify_op(gf);
    if (st)
      eddy_status_append_note(st, "in the gradient function made by autodiff "
                                  "(a bug in eddy)");
  }
  if (st) {
    eddy_ir_op_erase(gf);
    return st;
  }
  if (stats) {
    stats->num_ops_before = ad_count_ops(f);
    stats->num_ops_after = ad_count_ops(gf);
  }
  ad_name_gradient(f, gf, wrt, num_wrt);
  if (out_func)
    *out_func = gf;
  return NULL;
}

/// --wrt all: every float tensor argument.
static eddy_status_t ad_wrt_all(const eddy_op_t *func, size_t *out, size_t cap,
                                size_t *out_n) {
  const eddy_type_t *ft = eddy_ir_func_type(func);
  eddy_buf_t others;
  eddy_buf_init(&others);
  for (size_t i = 0; i < ft->num_inputs; i++) {
    const eddy_type_t *t = ft->inputs[i];
    if (t->kind == EDDY_TYPE_TENSOR && eddy_dtype_is_float(t->dtype)) {
      if (*out_n == cap) {
        eddy_buf_destroy(&others);
        return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                                  "--wrt all: too many arguments");
      }
      out[(*out_n)++] = i;
      continue;
    }
    char pos[32];
    eddy_buf_printf(&others, "%s%zu '%s' ", others.len ? ", " : "", i,
                    eddy_ir_func_arg_label(func, i, pos, sizeof pos));
    eddy_ir_type_print(t, &others);
  }
  eddy_status_t st = NULL;
  if (*out_n == 0)
    st = eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                            "--wrt all: @%s has no float tensor argument to "
                            "differentiate (%s%s)",
                            eddy_ir_func_name(func),
                            others.len ? "its arguments: " : "it has none",
                            others.len ? others.data : "");
  eddy_buf_destroy(&others);
  return st;
}

eddy_status_t eddy_ad_parse_wrt(const char *list, const eddy_op_t *func,
                                size_t *out, size_t cap, size_t *out_n) {
  *out_n = 0;
  const eddy_type_t *ft = eddy_ir_func_type(func);
  size_t num_args = ft->num_inputs;
  if (strcmp(list, "all") == 0 && eddy_ir_func_arg_index(func, "all", 3) < 0)
    return ad_wrt_all(func, out, cap, out_n);
  const char *p = list;
  while (*p) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    int64_t at = eddy_ir_func_arg_index(func, p, len);
    if (at < 0)
      return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                                "--wrt: '%.*s' is not an argument name "
                                "(a name of the function's arg_names, or "
                                "arg0, %%arg0 or 0)",
                                (int)len, p);
    size_t idx = (size_t)at;
    if (idx >= num_args)
      return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                                "--wrt: there is no argument '%.*s' (the "
                                "function has %zu)",
                                (int)len, p, num_args);
    if (*out_n == cap)
      return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                                "--wrt: too many arguments");
    out[(*out_n)++] = idx;
    if (!e)
      break;
    p = e + 1;
  }
  if (*out_n == 0)
    return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                              "--wrt: no argument named");
  return NULL;
}

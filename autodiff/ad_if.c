/// The gradient of ctl.if: a gradient if on the same predicate whose
/// branches are the reversed forward branches. Forward values a gradient
/// branch needs leave the forward if as extra results (the other branch
/// yields a zero or an empty list of the same type); adjoints of values
/// captured from above leave the gradient if as its results.
#include "autodiff/ad_internal.h"

#include "dialects/ctl/ctl.h"

#include <stdlib.h>
#include <string.h>

#define TRY EDDY_RETURN_IF_ERROR

/// A stand-in of v's type for the branch that did not compute v, built
/// before `before`: a zero tensor (dynamic dims become 0) or an empty list.
static eddy_status_t ad_dummy(ad_t *ad, const eddy_type_t *t,
                              eddy_op_t *before, eddy_value_t **out) {
  eddy_builder_t b;
  eddy_ir_builder_init(&b, ad->ctx);
  eddy_ir_builder_set_before(&b, before);
  if (t->kind == EDDY_TYPE_LIST) {
    eddy_op_state_t st = {.name = "tl.empty", .result_types = &t,
                          .num_results = 1};
    eddy_op_t *op = NULL;
    TRY(eddy_ir_build(&b, &st, &op));
    *out = eddy_ir_op_result(op, 0);
    return NULL;
  }
  if (t->kind != EDDY_TYPE_TENSOR || t->rank == EDDY_RANK_UNKNOWN ||
      t->rank > 64)
    return eddy_status_create(EDDY_ERR_UNSUPPORTED,
                              "autodiff: cannot return an unranked value "
                              "from a ctl.if branch for its gradient");
  int64_t dims[64];
  for (int32_t i = 0; i < t->rank; i++)
    dims[i] = t->dims[i] == EDDY_DIM_DYNAMIC ? 0 : t->dims[i];
  const eddy_type_t *ct = eddy_ir_tensor_type_get(ad->ctx, t->dtype, t->rank,
                                                  dims);
  uint64_t zero[2] = {0, 0};
  return eddy_ir_build_constant(
      &b, eddy_ir_dense_splat_attr_get(ad->ctx, ct, zero), out);
}

/// Rebuilds the forward if with the exports of both branch scopes as extra
/// results (then's first, after the original ones).
static eddy_status_t ad_if_rebuild(ad_t *ad, eddy_op_t *op, ad_scope_t *br,
                                   eddy_op_t **out_new) {
  size_t nold = op->num_results;
  size_t ne[2] = {br[0].exp_fwd.len, br[1].exp_fwd.len};
  size_t n = nold + ne[0] + ne[1];
  const eddy_type_t **types = malloc(n * sizeof(*types));
  eddy_value_t **vals[2] = {calloc(n, sizeof(eddy_value_t *)),
                            calloc(n, sizeof(eddy_value_t *))};
  eddy_status_t st = NULL;
  if (!types || !vals[0] || !vals[1])
    st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  eddy_block_t *blk[2] = {eddy_ctl_if_then(op), eddy_ctl_if_else(op)};
  for (int b = 0; b < 2 && !st; b++) {
    eddy_op_t *y = eddy_ir_block_terminator(blk[b]);
    for (size_t k = 0; k < nold; k++)
      vals[b][k] = eddy_ir_op_operand(y, k);
  }
  for (size_t k = 0; k < nold && !st; k++)
    types[k] = eddy_ir_op_result(op, k)->type;
  /* exports of branch e: branch e yields the value, the other a dummy */
  size_t pos = nold;
  for (int e = 0; e < 2 && !st; e++)
    for (size_t i = 0; i < ne[e] && !st; i++, pos++) {
      eddy_value_t *v = ad_resolve(ad, br[e].exp_fwd.data[i]);
      eddy_value_t *d = NULL;
      st = ad_dummy(ad, v->type, eddy_ir_block_terminator(blk[1 - e]), &d);
      if (st)
        break;
      vals[e][pos] = v;
      vals[1 - e][pos] = d;
      types[pos] = eddy_ir_type_generalize(ad->ctx, v->type, d->type);
      if (!types[pos])
        types[pos] = v->type;
    }
  eddy_op_t *nop = NULL;
  if (!st) {
    eddy_builder_t b;
    eddy_ir_builder_init(&b, ad->ctx);
    eddy_ir_builder_set_before(&b, op);
    st = eddy_ctl_build_if(&b, eddy_ir_op_operand(op, 0), types, n, &nop);
  }
  if (!st) {
    nop->loc = op->loc;
    eddy_block_t *nblk[2] = {eddy_ctl_if_then(nop), eddy_ctl_if_else(nop)};
    for (int b = 0; b < 2; b++) {
      ad_move_ops(blk[b], nblk[b]);
      eddy_ir_op_set_operands(eddy_ir_block_terminator(nblk[b]), vals[b], n);
    }
    for (size_t k = 0; k < nold; k++)
      ad_replace(ad, eddy_ir_op_result(op, k), eddy_ir_op_result(nop, k));
    eddy_ir_op_erase(op);
    *out_new = nop;
  }
  free(types);
  free(vals[0]);
  free(vals[1]);
  return st;
}

static bool ad_vec_has(const ad_vec_t *v, const void *p) {
  for (size_t i = 0; i < v->len; i++)
    if (v->data[i] == p)
      return true;
  return false;
}

static eddy_value_t *ad_cap_of(const ad_scope_t *s, const eddy_value_t *c) {
  for (size_t i = 0; i < s->cap_fwd.len; i++)
    if (s->cap_fwd.data[i] == c)
      return s->cap_cur.data[i];
  return NULL;
}

static eddy_status_t ad_if_grad_impl(ad_scope_t *s, eddy_op_t *op,
                                     eddy_value_t **g, ad_scope_t *br,
                                     ad_vec_t *caps) {
  ad_t *ad = s->ad;
  eddy_block_t *fwd[2] = {eddy_ctl_if_then(op), eddy_ctl_if_else(op)};
  eddy_value_t *pred = eddy_ir_op_operand(op, 0);
  for (int b = 0; b < 2; b++) {
    br[b].fwd = fwd[b];
    br[b].fwd_op = op;
    TRY(ad_scratch_block(ad, &br[b].bwd));
    eddy_op_t *y = eddy_ir_block_terminator(fwd[b]);
    for (uint32_t k = 0; k < op->num_results; k++)
      if (g[k])
        TRY(ad_adj_add(&br[b], eddy_ir_op_operand(y, k), g[k]));
    TRY(ad_reverse_block(&br[b]));
  }
  for (int b = 0; b < 2; b++)
    for (size_t i = 0; i < br[b].cap_fwd.len; i++)
      if (!ad_vec_has(caps, br[b].cap_fwd.data[i]))
        ad_vec_push(caps, br[b].cap_fwd.data[i]);

  /* Forward values the gradient branches use become results of the
     forward if; the placeholders are replaced by them. */
  size_t nold = op->num_results;
  if (br[0].exp_fwd.len + br[1].exp_fwd.len) {
    eddy_op_t *nop = NULL;
    TRY(ad_if_rebuild(ad, op, br, &nop));
    size_t pos = nold;
    for (int e = 0; e < 2; e++)
      for (size_t i = 0; i < br[e].exp_fwd.len; i++, pos++) {
        eddy_value_t *q = NULL;
        TRY(ad_fwd(s, eddy_ir_op_result(nop, pos), &q));
        eddy_ir_value_replace_all_uses(br[e].exp_bwd.data[i], q);
      }
  }

  /* The gradient if: yields the adjoints of captured values. */
  size_t nc = caps->len;
  eddy_value_t *vpred = NULL;
  TRY(ad_fwd(s, pred, &vpred));
  const eddy_type_t **types = malloc((nc ? nc : 1) * sizeof(*types));
  eddy_value_t **yv[2] = {calloc(nc ? nc : 1, sizeof(eddy_value_t *)),
                          calloc(nc ? nc : 1, sizeof(eddy_value_t *))};
  eddy_status_t st = NULL;
  if (!types || !yv[0] || !yv[1])
    st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  for (size_t i = 0; i < nc && !st; i++) {
    eddy_value_t *c = caps->data[i];
    const eddy_type_t *t = c->type;
    for (int b = 0; b < 2 && !st; b++) {
      yv[b][i] = ad_cap_of(&br[b], c);
      if (!yv[b][i])
        st = ad_zeros_like_fwd(s, c, &yv[b][i]);
      else
        t = eddy_ir_type_generalize(ad->ctx, t, yv[b][i]->type);
      if (!t)
        t = c->type;
    }
    types[i] = t;
  }
  eddy_op_t *gif = NULL;
  if (!st) {
    eddy_builder_t b;
    eddy_ir_builder_init(&b, ad->ctx);
    if (s->bwd_before)
      eddy_ir_builder_set_before(&b, s->bwd_before);
    else
      eddy_ir_builder_set_end(&b, s->bwd);
    st = eddy_ctl_build_if(&b, vpred, types, nc, &gif);
  }
  for (int b = 0; b < 2 && !st; b++) {
    eddy_block_t *blk = b ? eddy_ctl_if_else(gif) : eddy_ctl_if_then(gif);
    ad_move_ops(br[b].bwd, blk);
    eddy_builder_t yb;
    eddy_ir_builder_init(&yb, ad->ctx);
    eddy_ir_builder_set_end(&yb, blk);
    st = eddy_ctl_build_yield(&yb, yv[b], nc, NULL);
  }
  for (size_t i = 0; i < nc && !st; i++)
    st = ad_adj_add(s, caps->data[i], eddy_ir_op_result(gif, i));
  free(types);
  free(yv[0]);
  free(yv[1]);
  return st;
}

eddy_status_t ad_if_grad(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  ad_scope_t br[2];
  ad_scope_init(&br[0], s->ad, s, AD_SCOPE_IF);
  ad_scope_init(&br[1], s->ad, s, AD_SCOPE_IF);
  ad_vec_t caps = {0};
  eddy_status_t st = ad_if_grad_impl(s, op, g, br, &caps);
  ad_vec_free(&caps);
  ad_scope_destroy(&br[0]);
  ad_scope_destroy(&br[1]);
  return st;
}

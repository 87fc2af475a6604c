/// The gradient of ctl.while (the "Functional while_loop" RFC, the while_v2
/// design).
///
/// The forward loop is rebuilt with a trip counter as its first loop value
/// and one TensorList per forward value the gradient body needs; its body
/// pushes those values. The gradient loop runs the counted number of
/// iterations; its loop values are the counter, the adjoints of the
/// differentiable loop values, the adjoints of captured values (summed over
/// the iterations) and the lists, which its body pops in reverse order.
/// Constants are re-created and pass-through loop values read from the
/// loop's init instead of being accumulated (ad.c, ad_fwd).
#include "autodiff/ad_internal.h"

#include "dialects/ctl/ctl.h"
#include "dialects/tl/tl.h"

#include <stdlib.h>
#include <string.h>

#define TRY EDDY_RETURN_IF_ERROR

static size_t ad_index_of(const ad_vec_t *v, const void *p) {
  for (size_t i = 0; i < v->len; i++)
    if (v->data[i] == p)
      return i;
  return (size_t)-1;
}

eddy_status_t ad_build_while(eddy_builder_t *b,
                                    eddy_value_t *const *inits,
                                    const eddy_type_t *const *types, size_t n,
                                    eddy_op_t **out_op) {
  eddy_op_state_t st = {.name = "ctl.while",
                        .operands = inits,
                        .num_operands = n,
                        .result_types = types,
                        .num_results = n,
                        .num_regions = 2};
  TRY(eddy_ir_build(b, &st, out_op));
  for (uint32_t r = 0; r < 2; r++) {
    eddy_block_t *blk = eddy_ir_region_add_block(&(*out_op)->regions[r]);
    for (size_t i = 0; i < n; i++)
      eddy_ir_block_add_arg(blk, types[i]);
  }
  return NULL;
}

static void ad_record_stats(ad_scope_t *s, eddy_op_t *w, ad_scope_t *bs) {
  eddy_ad_stats_t *stats = s->ad->stats;
  if (!stats)
    return;
  if (stats->num_loops == stats->cap_loops) {
    size_t cap = stats->cap_loops ? stats->cap_loops * 2 : 4;
    eddy_ad_loop_stat_t *l = realloc(stats->loops, cap * sizeof(*l));
    if (!l)
      return; /* statistics are best effort */
    stats->loops = l;
    stats->cap_loops = cap;
  }
  eddy_ad_loop_stat_t *l = &stats->loops[stats->num_loops++];
  l->loc = w->loc;
  l->depth = s->depth;
  l->num_lists = (int32_t)bs->exp_fwd.len;
  int64_t bytes = 0;
  for (size_t i = 0; i < bs->exp_fwd.len && bytes >= 0; i++) {
    const eddy_value_t *v = bs->exp_fwd.data[i];
    int64_t n = eddy_ir_type_num_elements(v->type);
    int64_t nb;
    if (v->type->kind != EDDY_TYPE_TENSOR || n < 0 ||
        !eddy_checked_mul_i64(n, (int64_t)eddy_dtype_size(v->type->dtype),
                              &nb) ||
        !eddy_checked_add_i64(bytes, nb, &bytes))
      bytes = -1;
  }
  l->bytes_per_iteration = bytes;
}

/// Rebuilds the forward loop w with a counter first and one list per
/// export of bs last; the body counts and pushes.
static eddy_status_t ad_while_rebuild(ad_t *ad, eddy_op_t *w, ad_scope_t *bs,
                                      eddy_op_t **out_new) {
  size_t n = w->num_results, nl = bs->exp_fwd.len, nn = 1 + n + nl;
  eddy_value_t **inits = calloc(nn, sizeof(*inits));
  const eddy_type_t **types = calloc(nn, sizeof(*types));
  eddy_value_t **yv = calloc(nn, sizeof(*yv));
  eddy_status_t st = NULL;
  if (!inits || !types || !yv)
    st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  eddy_builder_t b;
  eddy_ir_builder_init(&b, ad->ctx);
  eddy_ir_builder_set_before(&b, w);
  const eddy_type_t *i64 = eddy_ir_scalar_type_get(ad->ctx, EDDY_DT_I64);
  if (!st) {
    int64_t zero = 0;
    types[0] = i64;
    st = eddy_ir_build_constant(
        &b, eddy_ir_dense_attr_from_i64(ad->ctx, i64, &zero, 1), &inits[0]);
  }
  for (size_t k = 0; k < n && !st; k++) {
    inits[1 + k] = eddy_ir_op_operand(w, k);
    types[1 + k] = eddy_ir_op_result(w, k)->type;
  }
  for (size_t i = 0; i < nl && !st; i++) {
    const eddy_type_t *lt = ((eddy_value_t *)bs->exp_list.data[i])->type;
    types[1 + n + i] = lt;
    eddy_op_state_t es = {.name = "tl.empty", .result_types = &lt,
                          .num_results = 1};
    eddy_op_t *e = NULL;
    st = eddy_ir_build(&b, &es, &e);
    if (!st)
      inits[1 + n + i] = eddy_ir_op_result(e, 0);
  }
  eddy_op_t *nw = NULL;
  if (!st)
    st = ad_build_while(&b, inits, types, nn, &nw);
  if (!st) {
    nw->loc = w->loc;
    for (uint32_t a = 0; a < w->num_attrs; a++)
      eddy_ir_op_set_attr(nw, w->attrs[a].name->str, w->attrs[a].value);
    eddy_block_t *oc = eddy_ctl_while_cond(w), *ob = eddy_ctl_while_body(w);
    eddy_block_t *nc = eddy_ctl_while_cond(nw), *nb = eddy_ctl_while_body(nw);
    ad_move_ops(oc, nc);
    ad_move_ops(ob, nb);
    for (size_t k = 0; k < n; k++) {
      ad_replace(ad, oc->args[k], nc->args[1 + k]);
      ad_replace(ad, ob->args[k], nb->args[1 + k]);
    }
    eddy_op_t *y = eddy_ir_block_terminator(nb);
    eddy_ir_builder_set_before(&b, y);
    eddy_value_t *one = NULL;
    int64_t v1 = 1;
    st = eddy_ir_build_constant(
        &b, eddy_ir_dense_attr_from_i64(ad->ctx, i64, &v1, 1), &one);
    if (!st) {
      eddy_value_t *ops[2] = {nb->args[0], one};
      st = eddy_ir_build_simple(&b, "core.add", ops, 2, NULL, 0, &yv[0]);
    }
    for (size_t k = 0; k < n; k++)
      yv[1 + k] = eddy_ir_op_operand(y, k);
    for (size_t i = 0; i < nl && !st; i++) {
      eddy_value_t *v = ad_resolve(ad, bs->exp_fwd.data[i]);
      const eddy_type_t *lt = types[1 + n + i];
      eddy_value_t *ops[2] = {nb->args[1 + n + i], v};
      eddy_op_state_t ps = {.name = "tl.push_back", .operands = ops,
                            .num_operands = 2, .result_types = &lt,
                            .num_results = 1};
      eddy_op_t *po = NULL;
      st = eddy_ir_build(&b, &ps, &po);
      if (!st)
        yv[1 + n + i] = eddy_ir_op_result(po, 0);
    }
    if (!st) {
      eddy_ir_op_set_operands(y, yv, nn);
      for (size_t k = 0; k < n; k++)
        ad_replace(ad, eddy_ir_op_result(w, k), eddy_ir_op_result(nw, 1 + k));
      eddy_ir_op_erase(w);
      *out_new = nw;
    }
  }
  free(inits);
  free(types);
  free(yv);
  return st;
}

static eddy_status_t ad_while_grad_impl(ad_scope_t *s, eddy_op_t *w,
                                        eddy_value_t **g, ad_scope_t *bs,
                                        eddy_value_t **gk_arg,
                                        eddy_value_t **w_inits) {
  ad_t *ad = s->ad;
  size_t n = w->num_results;
  eddy_block_t *body = eddy_ctl_while_body(w);
  bs->fwd = body;
  bs->fwd_op = w;
  TRY(ad_scratch_block(ad, &bs->bwd));
  const eddy_type_t *i64 = eddy_ir_scalar_type_get(ad->ctx, EDDY_DT_I64);
  eddy_value_t *i_arg = eddy_ir_block_add_arg(bs->bwd, i64);
  ad_vec_push(&bs->args, i_arg);
  ad_vec_push(&bs->next, NULL);
  for (size_t k = 0; k < n; k++) {
    w_inits[k] = eddy_ir_op_operand(w, k);
    const eddy_type_t *t = eddy_ir_op_result(w, k)->type;
    if (!ad_active(ad, eddy_ir_op_result(w, k)))
      continue;
    gk_arg[k] = eddy_ir_block_add_arg(bs->bwd, t);
    ad_vec_push(&bs->args, gk_arg[k]);
    ad_vec_push(&bs->next, NULL);
  }
  eddy_op_t *y = eddy_ir_block_terminator(body);
  for (size_t k = 0; k < n; k++)
    if (gk_arg[k])
      TRY(ad_adj_add(bs, eddy_ir_op_operand(y, k), gk_arg[k]));
  TRY(ad_reverse_block(bs));

  /* What the gradient body yields. */
  eddy_value_t *one = NULL;
  TRY(ad_scalar(bs, EDDY_DT_I64, 1.0, &one));
  eddy_value_t *inc = NULL;
  TRY(ad_bin(bs, "core.add", i_arg, one, &inc));
  bs->next.data[0] = inc;
  for (size_t k = 0; k < n; k++) {
    if (!gk_arg[k])
      continue;
    eddy_value_t *nx = ad_adj_get(bs, body->args[k]);
    if (!nx)
      TRY(ad_zeros(bs, gk_arg[k]->type, gk_arg[k], &nx));
    bs->next.data[ad_index_of(&bs->args, gk_arg[k])] = nx;
  }
  for (size_t i = 0; i < bs->cap_fwd.len; i++)
    bs->next.data[ad_index_of(&bs->args, bs->cap_arg.data[i])] =
        bs->cap_cur.data[i];
  {
    eddy_builder_t yb;
    eddy_ir_builder_init(&yb, ad->ctx);
    eddy_ir_builder_set_end(&yb, bs->bwd);
    TRY(eddy_ctl_build_yield(&yb, (eddy_value_t *const *)bs->next.data,
                             bs->next.len, NULL));
  }

  ad_record_stats(s, w, bs);
  eddy_op_t *nw = NULL;
  TRY(ad_while_rebuild(ad, w, bs, &nw));

  /* Inits of the gradient loop, in the order of its loop values. */
  size_t na = bs->args.len;
  eddy_value_t **inits = calloc(na, sizeof(*inits));
  const eddy_type_t **types = calloc(na, sizeof(*types));
  bool *cont = calloc(bs->cap_fwd.len + 1, sizeof(*cont));
  eddy_status_t st = NULL;
  if (!inits || !types || !cont)
    st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  eddy_value_t *count = NULL;
  if (!st)
    st = ad_fwd(s, eddy_ir_op_result(nw, 0), &count);
  if (!st)
    st = ad_scalar(s, EDDY_DT_I64, 0.0, &inits[0]);
  for (size_t j = 1; j < na && !st; j++) {
    eddy_value_t *arg = bs->args.data[j];
    types[j] = arg->type;
    size_t k, c, l;
    for (k = 0; k < n && gk_arg[k] != arg; k++)
      ;
    if (k < n) {
      inits[j] = g[k];
      if (!inits[j])
        st = ad_zeros_like_fwd(s, eddy_ir_op_result(nw, 1 + k), &inits[j]);
    } else if ((c = ad_index_of(&bs->cap_arg, arg)) != (size_t)-1) {
      /* Go on summing the captured value's adjoint where s is: no zeros
         to fill and no sum to add per execution of this loop. */
      eddy_value_t *cur = NULL;
      st = ad_adj_take(s, bs->cap_fwd.data[c], &cur);
      if (!st && cur && cur->type == arg->type) {
        inits[j] = cur;
        cont[c] = true;
      } else if (!st) {
        st = ad_zeros_like_fwd(s, bs->cap_fwd.data[c], &inits[j]);
      }
    } else if ((l = ad_index_of(&bs->exp_list, arg)) != (size_t)-1) {
      st = ad_fwd(s, eddy_ir_op_result(nw, 1 + n + l), &inits[j]);
    } else if ((l = ad_index_of(&bs->rev_arg, arg)) != (size_t)-1) {
      st = ad_revolve_init(s, bs, l, count, &inits[j]);
    } else {
      st = eddy_status_create(EDDY_ERR_INTERNAL,
                              "autodiff: unclassified gradient loop value");
    }
  }
  types[0] = i64;
  eddy_op_t *gw = NULL;
  if (!st) {
    eddy_builder_t b;
    eddy_ir_builder_init(&b, ad->ctx);
    if (s->bwd_before)
      eddy_ir_builder_set_before(&b, s->bwd_before);
    else
      eddy_ir_builder_set_end(&b, s->bwd);
    st = ad_build_while(&b, inits, types, na, &gw);
  }
  if (!st) {
    gw->loc = nw->loc;
    eddy_block_t *cb = eddy_ctl_while_cond(gw), *bb = eddy_ctl_while_body(gw);
    eddy_builder_t cbld;
    eddy_ir_builder_init(&cbld, ad->ctx);
    eddy_ir_builder_set_end(&cbld, cb);
    eddy_value_t *ops[2] = {cb->args[0], count}, *pred = NULL;
    st = eddy_ir_build_simple(&cbld, "core.lt", ops, 2, NULL, 0, &pred);
    if (!st)
      st = eddy_ctl_build_condition(&cbld, pred, NULL);
    ad_move_ops(bs->bwd, bb);
    for (size_t j = 0; j < na; j++)
      eddy_ir_value_replace_all_uses(bs->args.data[j], bb->args[j]);
  }
  for (size_t i = 0; i < bs->cap_fwd.len && !st; i++) {
    eddy_value_t *r =
        eddy_ir_op_result(gw, ad_index_of(&bs->args, bs->cap_arg.data[i]));
    if (cont[i])
      ad_adj_set(s, bs->cap_fwd.data[i], r);
    else
      st = ad_adj_add(s, bs->cap_fwd.data[i], r);
  }
  /* After the captured values' sums replaced their adjoints: an init may
     be one of them. */
  for (size_t k = 0; k < n && !st; k++)
    if (gk_arg[k])
      st = ad_adj_add(
          s, w_inits[k],
          eddy_ir_op_result(gw, ad_index_of(&bs->args, gk_arg[k])));
  free(inits);
  free(types);
  free(cont);
  return st;
}

eddy_status_t ad_while_grad(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  size_t n = op->num_results;
  eddy_value_t **gk_arg = calloc(n ? n : 1, sizeof(*gk_arg));
  eddy_value_t **w_inits = calloc(n ? n : 1, sizeof(*w_inits));
  if (!gk_arg || !w_inits) {
    free(gk_arg);
    free(w_inits);
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  }
  ad_scope_t bs;
  ad_scope_init(&bs, s->ad, s, AD_SCOPE_WHILE);
  eddy_status_t st = ad_while_grad_impl(s, op, g, &bs, gk_arg, w_inits);
  ad_scope_destroy(&bs);
  free(gk_arg);
  free(w_inits);
  return st;
}

/// functionalize, before the raising (switch_n.c): a lowered Case as
/// two-way conds.
///
/// Freezing a tf.function that calls another inlines the callee and lowers
/// its Case: the branch index goes through `_SwitchN(data, index)` for each
/// input (output k carries the data when index == k; an index out of range
/// goes to the last output, as TensorFlow's kernel does), and each result
/// of the Case is a Merge of N inputs, input k from branch k. That is the
/// chain of ifs eddy makes of a Case (legalize-tf: `if index == 0 ... else
/// if index == 1 ... else <last>`), written in Switch and Merge: each
/// _SwitchN becomes the Switches
///
///   s_0 = Switch(data, index == 0)      output 0 is s_0's true side
///   s_k = Switch(s_{k-1}#0, index == k) output k is s_k's true side
///                                       (k < N - 1); output N - 1 is
///                                       s_{N-2}'s false side
///
/// and each Merge of N inputs the Merges m_k = Merge(in_k, m_{k+1}), the
/// last m_{N-2} = Merge(in_{N-2}, in_{N-1}), in the order TensorFlow gives
/// the inputs (branch k's output is input k). The predicates `index == k`
/// are made once per index value, so the switches of one Case share them
/// (and a Case and its gradient Case on the same index are told apart as
/// a cond and its gradient are, cond_stages.c). The diamonds then nest as
/// the branches of the chain do, and the raising of two-way conds makes
/// them nested ctl.ifs. The raising finds which input of each Merge of two
/// comes from which branch, so a raised Case picks the right one whatever
/// the order; a Merge whose inputs are out of order in a way the nesting
/// cannot join (branch 1 at input 0, say) is refused, naming it.
#include "lower/tf/tf_lower_internal.h"

#include <stdlib.h>
#include <string.h>

static eddy_status_t err_at(const eddy_op_t *op, const char *msg) {
  eddy_buf_t loc;
  eddy_buf_init(&loc);
  eddy_ir_loc_format(op->loc, &loc);
  eddy_status_t st =
      eddy_status_create_at(EDDY_ERR_UNSUPPORTED, loc.data, "%s", msg);
  eddy_buf_destroy(&loc);
  return st;
}

static eddy_status_t oom(void) {
  return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
}

/// The predicates index == k of one index value, k < n.
typedef struct preds {
  eddy_value_t **v;
  size_t n;
} preds_t;

/// Predicate index == k, made before `at` (the first _SwitchN on the
/// index) when it is not there yet.
static eddy_status_t pred_k(eddy_ctx_t *ctx, eddy_ptrmap_t *cache,
                            eddy_op_t *at, eddy_value_t *index, size_t k,
                            eddy_value_t **out) {
  preds_t *p = eddy_ptrmap_get(cache, index);
  if (!p) {
    p = calloc(1, sizeof(*p));
    if (!p)
      return oom();
    eddy_ptrmap_put(cache, index, p);
  }
  if (k >= p->n) {
    eddy_value_t **nv = realloc(p->v, (k + 1) * sizeof(*nv));
    if (!nv)
      return oom();
    for (size_t i = p->n; i <= k; i++)
      nv[i] = NULL;
    p->v = nv;
    p->n = k + 1;
  }
  if (!p->v[k]) {
    // Placed after the index's definition (and the predicates made
    // already), before its first reader here.
    eddy_op_t *d = k > 0 && p->v[k - 1] ? p->v[k - 1]->def
                   : index->def && index->def->block == at->block ? index->def
                                                                  : NULL;
    eddy_builder_t bb;
    eddy_ir_builder_init(&bb, ctx);
    if (d)
      eddy_ir_builder_set_after(&bb, d);
    else
      eddy_ir_builder_set_before(&bb, at->block->first);
    const eddy_type_t *it = eddy_ir_scalar_type_get(ctx, EDDY_DT_I32);
    const eddy_type_t *bt = eddy_ir_scalar_type_get(ctx, EDDY_DT_I1);
    int32_t kv = (int32_t)k;
    eddy_named_attr_t ca[2] = {
        eddy_ir_named_attr(ctx, "dtype",
                           eddy_ir_string_attr_get(ctx, "i32", 3)),
        eddy_ir_named_attr(ctx, "value",
                           eddy_ir_dense_attr_get(ctx, it, &kv, sizeof kv))};
    eddy_op_t *c = NULL, *eq = NULL;
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_make(&bb, "tf.Const", NULL, 0, ca, 2, &it, 1, at->loc, &c));
    eddy_value_t *ops[2] = {index, eddy_ir_op_result(c, 0)};
    eddy_named_attr_t ta =
        eddy_ir_named_attr(ctx, "T", eddy_ir_string_attr_get(ctx, "i32", 3));
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_make(&bb, "tf.Equal", ops, 2, &ta, 1, &bt, 1, at->loc, &eq));
    p->v[k] = eddy_ir_op_result(eq, 0);
  }
  *out = p->v[k];
  return NULL;
}

/// The named attribute `T` of op, when it has one (n: 0 or 1).
static size_t attr_T(const eddy_op_t *op, eddy_named_attr_t *out) {
  const eddy_attr_t *t = eddy_ir_op_attr(op, "T");
  if (!t)
    return 0;
  *out = eddy_ir_named_attr(op->ctx, "T", t);
  return 1;
}

/// One _SwitchN as a chain of Switches.
static eddy_status_t split_switch(eddy_ctx_t *ctx, eddy_ptrmap_t *cache,
                                  eddy_op_t *sn) {
  uint32_t n = sn->num_results;
  if (n == 0 || sn->results[0].type->kind == EDDY_TYPE_TOKEN)
    return err_at(sn, "a _SwitchN needs num_outs >= 1");
  eddy_value_t *data = eddy_ir_op_operand(sn, 0);
  eddy_value_t *index = eddy_ir_op_operand(sn, 1);
  if (index->type->kind != EDDY_TYPE_TENSOR ||
      index->type->dtype != EDDY_DT_I32)
    return err_at(sn, "the output_index of a _SwitchN must be an int32 "
                      "scalar");
  eddy_named_attr_t ta;
  size_t nta = attr_T(sn, &ta);
  eddy_value_t *rest = data;
  for (uint32_t k = 0; k + 1 < n; k++) {
    eddy_value_t *p = NULL;
    EDDY_RETURN_IF_ERROR(pred_k(ctx, cache, sn, index, k, &p));
    eddy_builder_t bb;
    eddy_ir_builder_init(&bb, ctx);
    eddy_ir_builder_set_before(&bb, sn);
    const eddy_type_t *types[2] = {sn->results[k].type, sn->results[k].type};
    eddy_value_t *ops[2] = {rest, p};
    eddy_op_t *sw = NULL;
    EDDY_RETURN_IF_ERROR(eddy_tfl_make(&bb, "tf.Switch", ops, 2, &ta, nta,
                                       types, 2, sn->loc, &sw));
    eddy_ir_value_replace_all_uses(&sn->results[k], eddy_ir_op_result(sw, 1));
    rest = eddy_ir_op_result(sw, 0);
  }
  eddy_ir_value_replace_all_uses(&sn->results[n - 1], rest);
  eddy_ir_op_erase(sn);
  return NULL;
}

static bool is_loop_merge(const eddy_op_t *m) {
  for (uint32_t i = 0; i < m->num_operands; i++)
    if (tfl_is(eddy_ir_op_operand(m, i)->def, "tf.NextIteration"))
      return true;
  return false;
}

/// One Merge of n > 2 inputs as nested Merges of two.
static eddy_status_t split_merge(eddy_ctx_t *ctx, eddy_op_t *m) {
  uint32_t n = m->num_operands;
  // Its value_index can only order control edges: the nested Merges'
  // indices do not say which of the n inputs came.
  for (eddy_use_t *u = m->results[1].uses; u; u = u->next)
    if (!tfl_is(u->owner, "df.control"))
      return err_at(m, "the value_index of a Merge of more than two inputs "
                       "is read");
  eddy_named_attr_t attrs[2];
  size_t na = attr_T(m, &attrs[0]);
  attrs[na++] =
      eddy_ir_named_attr(ctx, "N", eddy_ir_int_attr_get(ctx, 2, EDDY_DT_I64));
  const eddy_type_t *types[2] = {m->results[0].type, m->results[1].type};
  eddy_builder_t bb;
  eddy_ir_builder_init(&bb, ctx);
  eddy_ir_builder_set_before(&bb, m);
  eddy_value_t *rest = eddy_ir_op_operand(m, n - 1);
  eddy_op_t *inner = NULL;
  for (uint32_t k = n - 1; k-- > 0;) {
    eddy_value_t *ops[2] = {eddy_ir_op_operand(m, k), rest};
    EDDY_RETURN_IF_ERROR(eddy_tfl_make(&bb, "tf.Merge", ops, 2, attrs, na,
                                       types, 2, m->loc, &inner));
    rest = eddy_ir_op_result(inner, 0);
  }
  eddy_ir_value_replace_all_uses(&m->results[0], rest);
  eddy_ir_value_replace_all_uses(&m->results[1], eddy_ir_op_result(inner, 1));
  eddy_ir_op_erase(m);
  return NULL;
}

/// The control inputs of a cond Merge: the importer makes input 0 wait on
/// them (df.after). TensorFlow's lowering of If and Case gives its
/// `branch_executed` Merge (of the branches' pivots) a control input from
/// each branch, which TensorFlow's executor waits for dead or alive; as
/// values of every branch they would put the Merge's input 0 in all of
/// them. A raised cond orders its ops by data, so they go.
static void drop_merge_controls(eddy_op_t *m) {
  for (uint32_t i = 0; i < m->num_operands; i++) {
    eddy_value_t *v = eddy_ir_op_operand(m, i);
    eddy_op_t *a = v->def;
    if (!tfl_is(a, "df.after"))
      continue;
    eddy_ir_op_set_operand(m, i, eddy_ir_op_operand(a, 0));
    if (!eddy_ir_value_has_uses(&a->results[0]))
      eddy_ir_op_erase(a);
  }
}

eddy_status_t eddy_tfl_split_switch_n(eddy_ctx_t *ctx, eddy_block_t *b) {
  for (eddy_op_t *op = b->first; op; op = op->next)
    if (tfl_is(op, "tf.Merge") && !is_loop_merge(op))
      drop_merge_controls(op);
  bool any = false;
  for (eddy_op_t *op = b->first; op && !any; op = op->next)
    any = tfl_is(op, "tf._SwitchN");
  if (!any)
    return NULL;
  eddy_ptrmap_t cache;
  eddy_ptrmap_init(&cache);
  eddy_status_t st = NULL;
  for (eddy_op_t *op = b->first, *next; op && !st; op = next) {
    next = op->next;
    if (tfl_is(op, "tf._SwitchN"))
      st = split_switch(ctx, &cache, op);
    else if (tfl_is(op, "tf.Merge") && op->num_operands > 2 &&
             !is_loop_merge(op))
      st = split_merge(ctx, op);
  }
  for (size_t i = 0; i < cache.cap; i++)
    if (cache.keys[i]) {
      preds_t *p = cache.vals[i];
      free(p->v);
      free(p);
    }
  eddy_ptrmap_destroy(&cache);
  return st;
}

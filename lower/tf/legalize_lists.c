/// legalize-tf: the TensorList and TensorArray rules beyond the basic ones
/// of legalize_ops.c: lists that change length (TensorListResize, a
/// TensorListSetItem that resizes, writes to a dynamic_size TensorArray:
/// tl.resize), gathers (tl.stack and core.gather), scatters (tl.scatter),
/// concatenations and splits of items of several lengths (tl.concat,
/// tl.split), reads of arrays of unranked items, and Range of run-time
/// operands (core.range), which the stack and the gradient of a
/// dynamic-size TensorArray read.
///
/// A vector of B lists (a variant tensor of shape [B], made by Pack of
/// lists; TensorListPushBackBatch pushes row b of a tensor onto list b, and
/// Unpack takes the lists apart) is one list whose items are the B lists'
/// items stacked, [B, ...]: the B lists have one length. Pack of empty lists
/// is an empty list of such items; Pack of others and Unpack stack the
/// items (every one set).
#include "lower/tf/tf_lower_internal.h"

#include "dialects/dialects.h"

#include <string.h>

static const char *const NAMES[] = {
    "TensorListResize",
    "TensorListGather",
    "TensorListScatterIntoExistingList",
    "TensorListScatterV2",
    "TensorListScatter",
    "TensorListConcat",
    "TensorListConcatV2",
    "TensorListSplit",
    "TensorArrayConcatV3",
    "TensorArraySplitV3",
    "TensorListPushBackBatch",
};

void eddy_tfl_list_ops_each(void (*fn)(const char *name, void *user),
                            void *user) {
  for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++)
    fn(NAMES[i], user);
}

bool eddy_tfl_is_list_op(const char *t) {
  for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++)
    if (strcmp(t, NAMES[i]) == 0)
      return true;
  return false;
}

/// The attribute functionalize's first step puts on a write to a
/// TensorArray made with dynamic_size = true (eddy_tfl_mark_growing_writes).
#define GROWS_ATTR "_eddy_grows"

/// The TensorArrayV3 a handle comes from (through Identity, Enter,
/// df.after, Switch and Merge), NULL when not found.
static const eddy_op_t *array_of_handle(eddy_value_t *h) {
  for (int i = 0; i < 256 && h && h->def; i++) {
    eddy_op_t *d = h->def;
    if (tfl_is(d, "tf.TensorArrayV3"))
      return d;
    if ((tfl_is(d, "tf.Identity") || tfl_is(d, "tf.Enter") ||
         tfl_is(d, "df.after") || tfl_is(d, "tf.Switch") ||
         tfl_is(d, "tf.Merge")) &&
        d->num_operands > 0)
      h = eddy_ir_op_operand(d, 0);
    else
      return NULL;
  }
  return NULL;
}

void eddy_tfl_mark_growing_writes(eddy_ctx_t *ctx, eddy_block_t *b) {
  for (eddy_op_t *op = b->first; op; op = op->next) {
    if (!tfl_is(op, "tf.TensorArrayWriteV3") || op->num_operands < 4)
      continue;
    const eddy_op_t *ta = array_of_handle(eddy_ir_op_operand(op, 0));
    if (ta && eddy_ir_op_attr_bool(ta, "dynamic_size", false))
      eddy_ir_op_set_attr(op, GROWS_ATTR, eddy_ir_bool_attr_get(ctx, true));
  }
}

/// True when v is the constant 0, 1, ..., n-1 (the whole-array scatter
/// legalize_ops.c lowers to tl.from_tensor).
static bool is_const_iota(eddy_tfl_t *z, eddy_value_t *v) {
  const eddy_attr_t *a = eddy_tfl_const(z, v);
  if (!a || a->type->rank != 1)
    return false;
  for (int64_t i = 0; i < a->type->dims[0]; i++)
    if (eddy_ir_dense_attr_i64(a, i) != i)
      return false;
  return true;
}

/// True when op is one of the forms of ops with basic rules that this file
/// lowers instead: a TensorListSetItem with resize_if_index_out_of_bounds,
/// a write to a growing TensorArray, a scatter to other indices than 0, 1,
/// ..., n-1, a read
/// of an array of unranked elements whose result TensorFlow knows.
bool eddy_tfl_is_list_form(eddy_tfl_t *z, const eddy_op_t *op) {
  if (tfl_is(op, "tf.TensorArrayScatterV3") && op->num_operands >= 4)
    return !is_const_iota(z, tfl_in(z, op, 1));
  if (tfl_is(op, "tf.TensorListSetItem"))
    return eddy_ir_op_attr_bool(op, "resize_if_index_out_of_bounds", false);
  if (tfl_is(op, "tf.TensorArrayWriteV3"))
    return eddy_ir_op_attr_bool(op, GROWS_ATTR, false);
  return false;
}

static eddy_status_t build1(eddy_tfl_t *z, const eddy_op_t *op,
                            const char *name, eddy_value_t *a,
                            eddy_value_t *b, eddy_value_t **out) {
  eddy_value_t *ops[2] = {a, b};
  return eddy_tfl_build(z, op, name, ops, b ? 2 : 1, NULL, 0, out);
}

/// tl.set_item of l at index i after growing l to i + 1 items when it is
/// shorter (the new items unset). A negative index is tl.set_item's error.
static eddy_status_t set_growing(eddy_tfl_t *z, const eddy_op_t *op,
                                 eddy_value_t *l, eddy_value_t *i,
                                 eddy_value_t *x) {
  if (l->type->kind != EDDY_TYPE_LIST)
    return eddy_tfl_error(op, "the list operand is not a TensorList");
  eddy_value_t *n = NULL, *i64 = NULL, *one = NULL, *need = NULL, *r = NULL;
  EDDY_RETURN_IF_ERROR(build1(z, op, "tl.length", l, NULL, &n));
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, i, EDDY_DT_I64, &i64));
  if (!eddy_ir_type_is_scalar(i64->type))
    EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, i64, NULL, 0, &i64));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, 1, &one));
  EDDY_RETURN_IF_ERROR(build1(z, op, "core.add", i64, one, &need));
  EDDY_RETURN_IF_ERROR(build1(z, op, "core.maximum", n, need, &need));
  eddy_op_t *rs = NULL;
  eddy_value_t *rops[2] = {l, need};
  EDDY_RETURN_IF_ERROR(eddy_tfl_build_typed(z, op, "tl.resize", rops, 2, NULL,
                                            0, &l->type, 1, &rs));
  eddy_value_t *sops[3] = {eddy_ir_op_result(rs, 0), i64, x};
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build(z, op, "tl.set_item", sops, 3, NULL, 0, &r));
  tfl_out1(z, op, r);
  return NULL;
}

/// The list's items stacked; the element_shape operand (when given and
/// static) types a stack of a list of unranked elements.
static eddy_status_t stack_shaped(eddy_tfl_t *z, const eddy_op_t *op,
                                  eddy_value_t *l, eddy_value_t *shape,
                                  eddy_value_t **out) {
  EDDY_RETURN_IF_ERROR(build1(z, op, "tl.stack", l, NULL, out));
  int64_t dims[65];
  int64_t n = shape ? eddy_tfl_const_ints(z, shape, dims + 1, 64) : -1;
  if (n < 0 || (*out)->type->rank != EDDY_RANK_UNKNOWN ||
      shape->type->rank == 0)
    return NULL;
  for (int64_t k = 1; k <= n; k++)
    if (dims[k] < 0)
      return NULL;
  dims[0] = -1;
  return eddy_tfl_reshape(z, op, *out, dims, (size_t)n + 1, out);
}

/// The element type an element_shape operand describes: unranked when it
/// is not a constant or is the scalar -1; -1 dims are dynamic.
static const eddy_type_t *elem_type_of_shape(eddy_tfl_t *z,
                                             eddy_value_t *shape,
                                             eddy_dtype_t dt) {
  int64_t dims[64];
  int64_t n = eddy_tfl_const_ints(z, shape, dims, 64);
  if (n < 0 || shape->type->rank == 0)
    return eddy_ir_tensor_type_get(z->ctx, dt, EDDY_RANK_UNKNOWN, NULL);
  for (int64_t i = 0; i < n; i++)
    if (dims[i] < 0)
      dims[i] = EDDY_DIM_DYNAMIC;
  return eddy_ir_tensor_type_get(z->ctx, dt, (int32_t)n, dims);
}

/// tl.scatter of the rows of x to indices idx (made a vector of i64) of
/// list l.
static eddy_status_t scatter(eddy_tfl_t *z, const eddy_op_t *op,
                             eddy_value_t *l, eddy_value_t *idx,
                             eddy_value_t *x) {
  if (l->type->kind != EDDY_TYPE_LIST)
    return eddy_tfl_error(op, "the list operand is not a TensorList");
  if (!eddy_ir_type_is_tensor(idx->type) ||
      (idx->type->rank != 1 && idx->type->rank != EDDY_RANK_UNKNOWN))
    return eddy_tfl_error(op, "the indices must be a vector");
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, idx, EDDY_DT_I64, &idx));
  if (idx->type->rank != 1) {
    int64_t m1 = -1;
    EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, idx, &m1, 1, &idx));
  }
  eddy_value_t *ops[3] = {l, idx, x}, *r = NULL;
  eddy_op_t *o = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_build_typed(z, op, "tl.scatter", ops, 3, NULL,
                                            0, &l->type, 1, &o));
  r = eddy_ir_op_result(o, 0);
  tfl_out1(z, op, r);
  return NULL;
}

/// The list type whose items are those of lt with a leading dim of b
/// (b < 0: dynamic); NULL when lt's items have no known rank.
static const eddy_type_t *batch_type(eddy_tfl_t *z, const eddy_type_t *lt,
                                     int64_t b) {
  const eddy_type_t *et = lt->elem;
  if (lt->kind != EDDY_TYPE_LIST || et->kind != EDDY_TYPE_TENSOR ||
      et->rank == EDDY_RANK_UNKNOWN || et->rank >= EDDY_TFL_MAX_RANK)
    return NULL;
  int64_t dims[EDDY_TFL_MAX_RANK];
  dims[0] = b;
  for (int32_t i = 0; i < et->rank; i++)
    dims[i + 1] = et->dims[i];
  return eddy_ir_list_type_get(
      z->ctx, eddy_ir_tensor_type_get(z->ctx, et->dtype, et->rank + 1, dims));
}

eddy_status_t eddy_tfl_lower_list_pack(eddy_tfl_t *z, const eddy_op_t *op) {
  if (eddy_ir_op_attr_int(op, "axis", 0) != 0)
    return eddy_tfl_error(op, "lists are packed along axis 0 only");
  eddy_value_t *ls[256];
  uint32_t n = 0;
  bool empty = true;
  for (uint32_t i = 0; i < op->num_operands; i++) {
    eddy_value_t *l = tfl_in(z, op, i);
    if (l->type->kind == EDDY_TYPE_TOKEN)
      continue;
    if (n == 256 || l->type != tfl_in(z, op, 0)->type)
      return eddy_tfl_error(op, "the packed lists are not all of one type "
                                "(or more than 256)");
    empty = empty && l->def && tfl_is(l->def, "tl.empty");
    ls[n++] = l;
  }
  const eddy_type_t *bt = batch_type(z, ls[0]->type, n);
  if (!bt)
    return eddy_tfl_error(op, "the packed lists' element shape is not "
                              "known (give element_shape a rank)");
  eddy_op_t *o = NULL;
  if (empty) {
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build_typed(z, op, "tl.empty", NULL, 0, NULL, 0, &bt, 1, &o));
    tfl_out1(z, op, eddy_ir_op_result(o, 0));
    return NULL;
  }
  // [n, B, ...]: each list stacked to [n, ...], a new axis 1, concatenated.
  eddy_value_t *rows[256], *r = NULL;
  int32_t er = bt->elem->rank;
  int64_t dims[EDDY_TFL_MAX_RANK + 1], from[EDDY_TFL_MAX_RANK + 1];
  for (uint32_t i = 0; i < n; i++) {
    eddy_value_t *st = NULL;
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "tl.stack", &ls[i], 1, NULL, 0, &st));
    dims[0] = st->type->dims[0];
    from[0] = 0;
    dims[1] = 1;
    from[1] = 0;
    for (int32_t k = 1; k < er; k++) {
      dims[k + 1] = bt->elem->dims[k];
      from[k + 1] = k;
    }
    EDDY_RETURN_IF_ERROR(eddy_tfl_reshape_keep(z, op, st, dims,
                                               (size_t)er + 1, from, &rows[i]));
  }
  eddy_named_attr_t a = eddy_ir_named_attr(
      z->ctx, "axis", eddy_ir_int_attr_get(z->ctx, 1, EDDY_DT_I64));
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.concat", rows, n, &a, 1, &r));
  EDDY_RETURN_IF_ERROR(eddy_tfl_build_typed(z, op, "tl.from_tensor", &r, 1,
                                            NULL, 0, &bt, 1, &o));
  tfl_out1(z, op, eddy_ir_op_result(o, 0));
  return NULL;
}

/// The item type of the vector of lists that source value v carries, when
/// its translation does not say (a v1 graph kept as dataflow leaves the
/// lists through its frames unranked): that of the Pack v comes from,
/// through identities, frames and TensorListPushBackBatch; NULL when not
/// found.
static const eddy_type_t *batch_elem_of(eddy_tfl_t *z, eddy_value_t *v) {
  static const char *const through[] = {
      "tf.Identity", "tf.Enter",         "tf.Exit",
      "tf.Switch",   "tf.Merge",         "df.enter",
      "df.exit",     "df.switch",        "df.merge",
      "df.after",    "tf.NextIteration", "df.next_iteration",
      "tf._SwitchN", "df.switch_n",      "tf.TensorListPushBackBatch"};
  for (int i = 0; i < 256 && v; i++) {
    const eddy_type_t *t = eddy_tfl_get(z, v)->type;
    if (t->kind == EDDY_TYPE_LIST && t->elem->kind == EDDY_TYPE_TENSOR &&
        t->elem->rank != EDDY_RANK_UNKNOWN)
      return t->elem;
    eddy_op_t *d = v->def;
    bool next = false;
    for (size_t k = 0; d && !next && k < sizeof through / sizeof *through; k++)
      next = tfl_is(d, through[k]) && d->num_operands > 0;
    v = next ? eddy_ir_op_operand(d, 0) : NULL;
  }
  return NULL;
}

eddy_status_t eddy_tfl_lower_list_unpack(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_value_t *l = tfl_in(z, op, 0);
  const eddy_type_t *et = l->type->elem;
  if (et->kind == EDDY_TYPE_TENSOR && et->rank == EDDY_RANK_UNKNOWN) {
    const eddy_type_t *bt = batch_elem_of(z, eddy_ir_op_operand(op, 0));
    et = bt ? bt : et;
  }
  int64_t num = op->num_results;
  if (eddy_ir_op_attr_int(op, "axis", 0) != 0)
    return eddy_tfl_error(op, "a vector of lists is unpacked along axis 0 "
                              "only");
  if (et->kind != EDDY_TYPE_TENSOR || et->rank == EDDY_RANK_UNKNOWN ||
      et->rank < 1 || (et->dims[0] >= 0 && et->dims[0] != num))
    return eddy_tfl_error(op, "the vector of lists does not hold %lld lists "
                              "of items of known rank",
                          (long long)num);
  int64_t dims[EDDY_TFL_MAX_RANK], from[EDDY_TFL_MAX_RANK];
  for (int32_t k = 1; k < et->rank; k++)
    dims[k - 1] = et->dims[k];
  const eddy_type_t *lt = eddy_ir_list_type_get(
      z->ctx, eddy_ir_tensor_type_get(z->ctx, et->dtype, et->rank - 1, dims));
  eddy_op_t *o = NULL;
  if (l->def && tfl_is(l->def, "tl.empty")) {
    for (int64_t i = 0; i < num; i++) {
      EDDY_RETURN_IF_ERROR(eddy_tfl_build_typed(z, op, "tl.empty", NULL, 0,
                                                NULL, 0, &lt, 1, &o));
      eddy_tfl_set(z, &op->results[i], eddy_ir_op_result(o, 0));
    }
    return NULL;
  }
  // [n, B, ...] split along axis 1, each [n, ...] a list again.
  eddy_value_t *st = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "tl.stack", &l, 1, NULL, 0, &st));
  if (st->type->rank == EDDY_RANK_UNKNOWN) {
    if (!eddy_ir_type_is_static(et))
      return eddy_tfl_error(op, "the lists' items need a static shape");
    int64_t sd[EDDY_TFL_MAX_RANK + 1];
    sd[0] = -1;
    for (int32_t k = 0; k < et->rank; k++)
      sd[k + 1] = et->dims[k];
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_reshape(z, op, st, sd, (size_t)et->rank + 1, &st));
  }
  eddy_named_attr_t a[2] = {
      eddy_ir_named_attr(z->ctx, "axis",
                         eddy_ir_int_attr_get(z->ctx, 1, EDDY_DT_I64)),
      eddy_ir_named_attr(z->ctx, "num_splits",
                         eddy_ir_int_attr_get(z->ctx, num, EDDY_DT_I64))};
  eddy_op_t *s = NULL;
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build_typed(z, op, "core.split", &st, 1, a, 2, NULL, 0, &s));
  dims[0] = st->type->dims[0];
  from[0] = 0;
  for (int32_t k = 1; k < et->rank; k++) {
    dims[k] = et->dims[k];
    from[k] = k + 1;
  }
  for (int64_t i = 0; i < num && (uint32_t)i < s->num_results; i++) {
    eddy_value_t *r = NULL;
    EDDY_RETURN_IF_ERROR(eddy_tfl_reshape_keep(z, op, eddy_ir_op_result(s, i),
                                               dims, (size_t)et->rank, from,
                                               &r));
    EDDY_RETURN_IF_ERROR(eddy_tfl_build_typed(z, op, "tl.from_tensor", &r, 1,
                                              NULL, 0, &lt, 1, &o));
    eddy_tfl_set(z, &op->results[i], eddy_ir_op_result(o, 0));
  }
  return NULL;
}

eddy_status_t eddy_tfl_lower_list_op(eddy_tfl_t *z, const eddy_op_t *op) {
  const char *t = op->name->str + 3;
  eddy_value_t *r = NULL;
  if (strcmp(t, "TensorListPushBackBatch") == 0) {
    // Row b of the tensor onto list b: one push of the whole tensor onto
    // the list of stacked items.
    eddy_value_t *ops[2] = {tfl_in(z, op, 0), tfl_in(z, op, 1)};
    if (ops[0]->type->kind != EDDY_TYPE_LIST)
      return eddy_tfl_error(op, "the handles are not a vector of lists");
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "tl.push_back", ops, 2, NULL, 0, &r));
    tfl_out1(z, op, r);
    return NULL;
  }
  if (strcmp(t, "TensorListSetItem") == 0)
    return set_growing(z, op, tfl_in(z, op, 0), tfl_in(z, op, 1),
                       tfl_in(z, op, 2));
  if (strcmp(t, "TensorArrayWriteV3") == 0)
    return set_growing(z, op, tfl_in(z, op, 3), tfl_in(z, op, 1),
                       tfl_in(z, op, 2));
  if (strcmp(t, "TensorArrayScatterV3") == 0)
    return scatter(z, op, tfl_in(z, op, 3), tfl_in(z, op, 1), tfl_in(z, op, 2));
  if (strcmp(t, "TensorListScatterIntoExistingList") == 0)
    return scatter(z, op, tfl_in(z, op, 0), tfl_in(z, op, 2), tfl_in(z, op, 1));
  if (strcmp(t, "TensorListScatterV2") == 0 ||
      strcmp(t, "TensorListScatter") == 0) {
    // A new list of the element_shape operand's type and the tensor's
    // dtype: at least num_elements long (V2; -1: no minimum), grown to the
    // largest index + 1.
    eddy_value_t *x = tfl_in(z, op, 0);
    if (!eddy_ir_type_is_tensor(x->type))
      return eddy_tfl_error(op, "the scattered operand is not a tensor");
    const eddy_type_t *lt = eddy_ir_list_type_get(
        z->ctx, elem_type_of_shape(z, tfl_in(z, op, 2), x->type->dtype));
    eddy_op_t *o = NULL;
    if (strcmp(t, "TensorListScatterV2") == 0) {
      eddy_value_t *n = NULL, *zero = NULL;
      EDDY_RETURN_IF_ERROR(
          eddy_tfl_cast(z, op, tfl_in(z, op, 3), EDDY_DT_I64, &n));
      if (!eddy_ir_type_is_scalar(n->type))
        EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, n, NULL, 0, &n));
      EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, 0, &zero));
      EDDY_RETURN_IF_ERROR(build1(z, op, "core.maximum", n, zero, &n));
      EDDY_RETURN_IF_ERROR(
          eddy_tfl_build_typed(z, op, "tl.reserve", &n, 1, NULL, 0, &lt, 1, &o));
    } else {
      EDDY_RETURN_IF_ERROR(
          eddy_tfl_build_typed(z, op, "tl.empty", NULL, 0, NULL, 0, &lt, 1, &o));
    }
    return scatter(z, op, eddy_ir_op_result(o, 0), tfl_in(z, op, 1), x);
  }
  if (strcmp(t, "TensorArrayReadV3") == 0) {
    // The list's elements are unranked; TensorFlow knew the item's shape.
    eddy_value_t *ops[2] = {tfl_in(z, op, 2), tfl_in(z, op, 1)};
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "tl.get_item", ops, 2, NULL, 0, &r));
    const eddy_type_t *rt = op->results[0].type;
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_reshape(z, op, r, rt->dims, (size_t)rt->rank, &r));
    tfl_out1(z, op, r);
    return NULL;
  }
  if (strcmp(t, "TensorListResize") == 0) {
    eddy_value_t *l = tfl_in(z, op, 0), *n = tfl_in(z, op, 1);
    if (l->type->kind != EDDY_TYPE_LIST)
      return eddy_tfl_error(op, "the list operand is not a TensorList");
    if (!eddy_ir_type_is_scalar(n->type))
      EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, n, NULL, 0, &n));
    eddy_value_t *ops[2] = {l, n};
    eddy_op_t *o = NULL;
    EDDY_RETURN_IF_ERROR(eddy_tfl_build_typed(z, op, "tl.resize", ops, 2,
                                              NULL, 0, &l->type, 1, &o));
    tfl_out1(z, op, eddy_ir_op_result(o, 0));
    return NULL;
  }
  if (strcmp(t, "TensorListGather") == 0) {
    // The items at the indices, stacked: a stack, then a gather on axis 0
    // (an index out of range is core.gather's error).
    eddy_value_t *l = tfl_in(z, op, 0), *idx = tfl_in(z, op, 1);
    if (l->type->kind != EDDY_TYPE_LIST)
      return eddy_tfl_error(op, "the list operand is not a TensorList");
    EDDY_RETURN_IF_ERROR(stack_shaped(z, op, l, tfl_in(z, op, 2), &r));
    eddy_value_t *ops[2] = {r, idx};
    eddy_named_attr_t a = eddy_ir_named_attr(
        z->ctx, "axis", eddy_ir_int_attr_get(z->ctx, 0, EDDY_DT_I64));
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "core.gather", ops, 2, &a, 1, &r));
    tfl_out1(z, op, r);
    return NULL;
  }
  if (strcmp(t, "TensorListConcat") == 0 ||
      strcmp(t, "TensorListConcatV2") == 0 ||
      strcmp(t, "TensorArrayConcatV3") == 0) {
    bool ta = strcmp(t, "TensorArrayConcatV3") == 0;
    eddy_value_t *l = tfl_in(z, op, ta ? 1 : 0);
    if (l->type->kind != EDDY_TYPE_LIST)
      return eddy_tfl_error(op, "the list operand is not a TensorList");
    eddy_op_t *o = NULL;
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build_typed(z, op, "tl.concat", &l, 1, NULL, 0, NULL, 0, &o));
    r = eddy_ir_op_result(o, 0);
    // The element shape past the first dim, as the op states it
    // (TensorArrayConcatV3's element_shape_except0, TensorListConcat's
    // element_shape), types a concatenation of unranked items.
    int64_t dims[65];
    int64_t n = -1;
    if (ta) {
      n = eddy_ir_attr_as_i64_array(
          eddy_ir_op_attr(op, "element_shape_except0"), dims + 1, 64);
    } else if (strcmp(t, "TensorListConcat") == 0) {
      n = eddy_ir_attr_as_i64_array(eddy_ir_op_attr(op, "element_shape"),
                                    dims, 64);
      n = n >= 1 ? n - 1 : -1;
    }
    bool known = n >= 0 && r->type->rank == EDDY_RANK_UNKNOWN;
    for (int64_t k = 1; known && k <= n; k++)
      known = dims[k] >= 0;
    if (known) {
      dims[0] = -1;
      EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, r, dims, (size_t)n + 1, &r));
    }
    tfl_out1(z, op, r);
    eddy_tfl_set(z, &op->results[1], eddy_ir_op_result(o, 1));
    return NULL;
  }
  if (strcmp(t, "TensorListSplit") == 0 ||
      strcmp(t, "TensorArraySplitV3") == 0) {
    bool ta = strcmp(t, "TensorArraySplitV3") == 0;
    eddy_value_t *x = tfl_in(z, op, ta ? 1 : 0), *lens = tfl_in(z, op, 2);
    if (!eddy_ir_type_is_tensor(x->type))
      return eddy_tfl_error(op, "the value to split is not a tensor");
    if (!eddy_ir_type_is_tensor(lens->type) || lens->type->rank != 1)
      return eddy_tfl_error(op, "the lengths must be a vector");
    const eddy_type_t *lt = NULL;
    if (ta) {
      // The array's list, its items written anew.
      lt = tfl_in(z, op, 3)->type;
      if (lt->kind != EDDY_TYPE_LIST)
        return eddy_tfl_error(op, "the flow input is not a TensorArray");
    } else {
      lt = eddy_ir_list_type_get(
          z->ctx, elem_type_of_shape(z, tfl_in(z, op, 1), x->type->dtype));
    }
    eddy_value_t *ops[2] = {x, lens};
    eddy_op_t *o = NULL;
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build_typed(z, op, "tl.split", ops, 2, NULL, 0, &lt, 1, &o));
    tfl_out1(z, op, eddy_ir_op_result(o, 0));
    return NULL;
  }
  return eddy_tfl_error(op, "no TensorList rule for this op");
}

eddy_status_t eddy_tfl_lower_range_dynamic(eddy_tfl_t *z,
                                           const eddy_op_t *op) {
  eddy_dtype_t dt = EDDY_DT_I32;
  eddy_tfl_attr_dtype(op, "Tidx", &dt);
  eddy_value_t *ops[3];
  for (size_t i = 0; i < 3; i++) {
    eddy_value_t *v = tfl_in(z, op, i);
    if (!eddy_ir_type_is_tensor(v->type) ||
        (v->type->rank != 0 && v->type->rank != EDDY_RANK_UNKNOWN))
      return eddy_tfl_error(op, "start, limit and delta must be scalars");
    EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, v, dt, &v));
    if (v->type->rank != 0)
      EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, v, NULL, 0, &v));
    ops[i] = v;
  }
  eddy_value_t *r = NULL;
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build(z, op, "core.range", ops, 3, NULL, 0, &r));
  tfl_out1(z, op, r);
  return NULL;
}

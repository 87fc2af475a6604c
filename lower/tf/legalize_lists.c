/// legalize-tf: the TensorList and TensorArray rules beyond the basic ones
/// of legalize_ops.c: lists that change length (TensorListResize, a
/// TensorListSetItem that resizes, writes to a dynamic_size TensorArray),
/// TensorListGather, and Range of run-time operands (core.range), which
/// gathers and scatters of a whole dynamic array read.
#include "lower/tf/tf_lower_internal.h"

#include "dialects/dialects.h"

#include <string.h>

static const char *const NAMES[] = {
    "TensorListResize",
    "TensorListGather",
};

bool eddy_tfl_is_list_op(const char *t) {
  for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++)
    if (strcmp(t, NAMES[i]) == 0)
      return true;
  return false;
}

/// The attribute functionalize's first step puts on a write to a
/// TensorArray made with dynamic_size = true (eddy_tfl_mark_growing_writes).
#define GROWS_ATTR "_eddy_grows"

static bool is(const eddy_op_t *op, const char *name) {
  return op && eddy_ir_op_is(op, name);
}

static eddy_value_t *in(eddy_tfl_t *z, const eddy_op_t *op, size_t i) {
  return eddy_tfl_get(z, eddy_ir_op_operand(op, i));
}

static void out1(eddy_tfl_t *z, const eddy_op_t *op, eddy_value_t *v) {
  eddy_tfl_set(z, &op->results[0], v);
}

/// The TensorArrayV3 a handle comes from (through Identity, Enter,
/// df.after, Switch and Merge), NULL when not found.
static const eddy_op_t *array_of_handle(eddy_value_t *h) {
  for (int i = 0; i < 256 && h && h->def; i++) {
    eddy_op_t *d = h->def;
    if (is(d, "tf.TensorArrayV3"))
      return d;
    if ((is(d, "tf.Identity") || is(d, "tf.Enter") || is(d, "df.after") ||
         is(d, "tf.Switch") || is(d, "tf.Merge")) &&
        d->num_operands > 0)
      h = eddy_ir_op_operand(d, 0);
    else
      return NULL;
  }
  return NULL;
}

void eddy_tfl_mark_growing_writes(eddy_ctx_t *ctx, eddy_block_t *b) {
  for (eddy_op_t *op = b->first; op; op = op->next) {
    if (!is(op, "tf.TensorArrayWriteV3") || op->num_operands < 4)
      continue;
    const eddy_op_t *ta = array_of_handle(eddy_ir_op_operand(op, 0));
    if (ta && eddy_ir_op_attr_bool(ta, "dynamic_size", false))
      eddy_ir_op_set_attr(op, GROWS_ATTR, eddy_ir_bool_attr_get(ctx, true));
  }
}

/// True when v is core.range(0, n, 1): the indices of a whole array.
static bool is_counting(eddy_tfl_t *z, eddy_value_t *v) {
  if (!v->def || eddy_dialects_opcode(v->def) != EDDY_OP_CORE_RANGE)
    return false;
  int64_t s = -1, d = -1;
  return eddy_tfl_const_ints(z, eddy_ir_op_operand(v->def, 0), &s, 1) == 1 &&
         eddy_tfl_const_ints(z, eddy_ir_op_operand(v->def, 2), &d, 1) == 1 &&
         s == 0 && d == 1;
}

/// True when op is one of the forms of ops with basic rules that this file
/// lowers instead: a TensorListSetItem with resize_if_index_out_of_bounds,
/// a write to a growing TensorArray, a scatter of a whole TensorArray
/// (indices Range(0, n, 1) of a run-time n).
bool eddy_tfl_is_list_form(eddy_tfl_t *z, const eddy_op_t *op) {
  if (is(op, "tf.TensorArrayScatterV3") && op->num_operands >= 4)
    return is_counting(z, in(z, op, 1));
  if (is(op, "tf.TensorListSetItem"))
    return eddy_ir_op_attr_bool(op, "resize_if_index_out_of_bounds", false);
  if (is(op, "tf.TensorArrayWriteV3"))
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
  out1(z, op, r);
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

eddy_status_t eddy_tfl_lower_list_op(eddy_tfl_t *z, const eddy_op_t *op) {
  const char *t = op->name->str + 3;
  eddy_value_t *r = NULL;
  if (strcmp(t, "TensorListSetItem") == 0)
    return set_growing(z, op, in(z, op, 0), in(z, op, 1), in(z, op, 2));
  if (strcmp(t, "TensorArrayWriteV3") == 0)
    return set_growing(z, op, in(z, op, 3), in(z, op, 1), in(z, op, 2));
  if (strcmp(t, "TensorArrayScatterV3") == 0) {
    // Indices 0, 1, ..., n-1: the rows of the value are the array (as the
    // constant indices of legalize_ops.c).
    eddy_value_t *x = in(z, op, 2);
    EDDY_RETURN_IF_ERROR(build1(z, op, "tl.from_tensor", x, NULL, &r));
    out1(z, op, r);
    return NULL;
  }
  if (strcmp(t, "TensorListResize") == 0) {
    eddy_value_t *l = in(z, op, 0), *n = in(z, op, 1);
    if (l->type->kind != EDDY_TYPE_LIST)
      return eddy_tfl_error(op, "the list operand is not a TensorList");
    if (!eddy_ir_type_is_scalar(n->type))
      EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, n, NULL, 0, &n));
    eddy_value_t *ops[2] = {l, n};
    eddy_op_t *o = NULL;
    EDDY_RETURN_IF_ERROR(eddy_tfl_build_typed(z, op, "tl.resize", ops, 2,
                                              NULL, 0, &l->type, 1, &o));
    out1(z, op, eddy_ir_op_result(o, 0));
    return NULL;
  }
  if (strcmp(t, "TensorListGather") == 0) {
    // The items at the indices, stacked: a stack, then a gather on axis 0
    // (an index out of range is core.gather's error).
    eddy_value_t *l = in(z, op, 0), *idx = in(z, op, 1);
    if (l->type->kind != EDDY_TYPE_LIST)
      return eddy_tfl_error(op, "the list operand is not a TensorList");
    EDDY_RETURN_IF_ERROR(stack_shaped(z, op, l, in(z, op, 2), &r));
    eddy_value_t *ops[2] = {r, idx};
    eddy_named_attr_t a = eddy_ir_named_attr(
        z->ctx, "axis", eddy_ir_int_attr_get(z->ctx, 0, EDDY_DT_I64));
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "core.gather", ops, 2, &a, 1, &r));
    out1(z, op, r);
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
    eddy_value_t *v = in(z, op, i);
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
  out1(z, op, r);
  return NULL;
}

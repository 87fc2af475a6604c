/// legalize-tf: the rules for math, comparison, gradient, reduction and
/// TensorList ops. Shape and data-movement ops are in legalize_shape.c and
/// legalize_slice.c.
#include "lower/tf/tf_lower_internal.h"

#include <string.h>

typedef struct simple_rule {
  const char *tf;   ///< TensorFlow op (without "tf.")
  const char *core; ///< the core op taking the same operands
} simple_rule_t;

/// Ops that map 1:1 onto a core op with the same operands.
static const simple_rule_t SIMPLE[] = {
    {"Abs", "core.abs"},         {"Exp", "core.exp"},
    {"Floor", "core.floor"},     {"Log", "core.log"},
    {"Log1p", "core.log1p"},     {"Neg", "core.neg"},
    {"Relu", "core.relu"},       {"Rsqrt", "core.rsqrt"},
    {"Sigmoid", "core.sigmoid"}, {"Sign", "core.sign"},
    {"Sqrt", "core.sqrt"},       {"Square", "core.square"},
    {"Tanh", "core.tanh"},       {"Add", "core.add"},
    {"AddV2", "core.add"},       {"BiasAdd", "core.add"},
    {"Sub", "core.sub"},         {"Mul", "core.mul"},
    {"RealDiv", "core.div"},     {"Div", "core.div"},
    {"Maximum", "core.maximum"}, {"Minimum", "core.minimum"},
    {"Pow", "core.pow"},         {"Equal", "core.eq"},
    {"NotEqual", "core.ne"},     {"Less", "core.lt"},
    {"LessEqual", "core.le"},    {"Greater", "core.gt"},
    {"GreaterEqual", "core.ge"}, {"LogicalAnd", "core.and"},
    {"LogicalOr", "core.or"},    {"LogicalNot", "core.not"},
    {"SelectV2", "core.select"}, {"BitwiseAnd", "core.bitand"},
    {"BitwiseOr", "core.bitor"}, {"BitwiseXor", "core.bitxor"},
    {"Invert", "core.bitnot"},   {"LeftShift", "core.shift_left"},
    {"RightShift", "core.shift_right"},
};

/// Ops with a rule in this file or legalize_shape.c beyond SIMPLE.
static const char *const OTHER[] = {
    "Const", "Identity", "IdentityN", "StopGradient", "Snapshot",
    "PlaceholderWithDefault", "NoOp", "ControlTrigger", "Assert", "Cast",
    "MatMul", "BatchMatMulV2", "Reciprocal", "SquaredDifference", "FloorDiv",
    "TanhGrad", "SigmoidGrad", "ReluGrad", "AddN", "Select", "Sum", "Mean",
    "Max", "Min", "Prod", "BiasAddGrad", "EmptyTensorList",
    "TensorListReserve", "TensorListPushBack", "TensorListPopBack",
    "TensorListGetItem", "TensorListSetItem", "TensorListStack",
    "TensorListFromTensor", "TensorListLength", "TensorListElementShape",
    "StackV2", "StackPushV2", "StackPopV2", "StackCloseV2", "TensorArrayV3",
    "TensorArrayWriteV3", "TensorArrayReadV3", "TensorArrayGatherV3",
    "TensorArrayScatterV3", "TensorArraySizeV3", "TensorArrayCloseV3", "TensorArrayGradV3",
    "OptionalFromValue", "OptionalNone", "OptionalGetValue",
    "OptionalHasValue",
    // Functional ops, handled by the driver.
    "While", "StatelessWhile", "If", "StatelessIf", "Case", "StatelessCase",
    "PartitionedCall", "StatefulPartitionedCall", "LegacyCall",
};

static void shape_ops_each(void (*fn)(const char *name, void *user),
                           void *user) {
  for (const char *const *t = eddy_tfl_shape_ops; *t; t++)
    fn(*t, user);
}

/// The ops of the other legalize files.
static void (*const EACH[])(void (*fn)(const char *name, void *user),
                            void *user) = {shape_ops_each,
                                           eddy_tfl_math_ops_each,
                                           eddy_tfl_list_ops_each,
                                           eddy_tfl_index_ops_each,
                                           eddy_tfl_window_ops_each,
                                           eddy_tfl_special_ops_each,
                                           eddy_tfl_linalg_ops_each,
                                           eddy_tfl_crop_ops_each,
                                           eddy_tfl_space_ops_each,
                                           eddy_tfl_quant_ops_each,
                                           eddy_tfl_random_ops_each,
                                           eddy_tfl_ctc_ops_each,
                                           eddy_tfl_ragged_ops_each,
                                           eddy_tfl_unique_ops_each};

void eddy_tfl_supported_each(void (*fn)(const char *name, void *user),
                             void *user) {
  for (size_t i = 0; i < sizeof SIMPLE / sizeof SIMPLE[0]; i++)
    fn(SIMPLE[i].tf, user);
  for (size_t i = 0; i < sizeof OTHER / sizeof OTHER[0]; i++)
    fn(OTHER[i], user);
  for (size_t k = 0; k < sizeof EACH / sizeof EACH[0]; k++)
    EACH[k](fn, user);
}

typedef struct find {
  const char *name;
  bool found;
} find_t;

static void find_name(const char *name, void *user) {
  find_t *f = user;
  f->found = f->found || strcmp(name, f->name) == 0;
}

bool eddy_tfl_is_supported(const char *t) {
  find_t f = {t, false};
  eddy_tfl_supported_each(find_name, &f);
  return f.found;
}

static eddy_status_t lower_reduce(eddy_tfl_t *z, const eddy_op_t *op,
                                  const char *name) {
  eddy_value_t *x = tfl_in(z, op, 0);
  int64_t axes[64];
  int64_t n = eddy_tfl_const_ints(z, tfl_in(z, op, 1), axes, 64);
  eddy_value_t *av = eddy_ir_op_operand(op, 1);
  if (n < 0 && strcmp(name, "core.reduce_sum") == 0 && av->def &&
      eddy_ir_op_is(av->def, "tf.BroadcastGradientArgs")) {
    eddy_value_t *r = NULL;
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_sum_broadcast(z, op, av->def, av->index, &r));
    tfl_out1(z, op, r);
    return NULL;
  }
  if (n < 0)
    return eddy_tfl_error(op, "the reduction axes must be a constant");
  eddy_value_t *r = NULL;
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_reduce(z, op, name, x, axes, (size_t)n,
                      eddy_ir_op_attr_bool(op, "keep_dims", false), &r));
  tfl_out1(z, op, r);
  return NULL;
}

/// The element type a TensorList op's element_shape operand describes.
static const eddy_type_t *list_elem_type(eddy_tfl_t *z, const eddy_op_t *op,
                                         eddy_value_t *shape,
                                         eddy_dtype_t dt) {
  int64_t dims[64];
  int64_t n = shape ? eddy_tfl_const_ints(z, shape, dims, 64) : -1;
  if (n < 0 || (n == 1 && dims[0] == -1 && shape->type->rank == 0))
    return eddy_ir_tensor_type_get(z->ctx, dt, EDDY_RANK_UNKNOWN, NULL);
  for (int64_t i = 0; i < n; i++)
    if (dims[i] < 0)
      dims[i] = EDDY_DIM_DYNAMIC;
  (void)op;
  return eddy_ir_tensor_type_get(z->ctx, dt, (int32_t)n, dims);
}

static eddy_status_t list_op(eddy_tfl_t *z, const eddy_op_t *op,
                             const char *name, eddy_value_t *const *ops,
                             size_t n, const eddy_type_t *result) {
  eddy_op_t *o = NULL;
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build_typed(z, op, name, ops, n, NULL, 0, &result, 1, &o));
  tfl_out1(z, op, eddy_ir_op_result(o, 0));
  return NULL;
}

/// True when v is the constant 0, 1, ..., n-1 (n = *out_n).
static bool is_iota(eddy_tfl_t *z, eddy_value_t *v, int64_t *out_n) {
  const eddy_attr_t *a = eddy_tfl_const(z, v);
  if (!a || a->type->rank != 1)
    return false;
  int64_t n = a->type->dims[0];
  for (int64_t i = 0; i < n; i++)
    if (eddy_ir_dense_attr_i64(a, i) != i)
      return false;
  *out_n = n;
  return true;
}

/// v1 TensorArrays. A TensorArray is a handle plus a "flow" value that
/// orders its reads and writes; eddy threads the list itself through the
/// flow: TensorArrayV3 makes a list (both outputs map to it), a write or
/// scatter returns the new list as its flow, a read, gather or size reads
/// the list its flow input carries. The handle is never read.
static eddy_status_t lower_tensor_array(eddy_tfl_t *z, const eddy_op_t *op,
                                        const char *t, bool *handled) {
  *handled = true;
  eddy_value_t *r = NULL;
  if (strcmp(t, "TensorArrayV3") == 0) {
    eddy_dtype_t dt;
    if (!eddy_tfl_attr_dtype(op, "dtype", &dt))
      return eddy_tfl_error(op, "attribute 'dtype' is not an eddy dtype");
    const eddy_type_t *et =
        eddy_ir_tensor_type_get(z->ctx, dt, EDDY_RANK_UNKNOWN, NULL);
    int64_t dims[64];
    int64_t rk = eddy_ir_attr_as_i64_array(eddy_ir_op_attr(op, "element_shape"),
                                           dims, 64);
    if (rk >= 0 && rk <= 64) {
      for (int64_t i = 0; i < rk; i++)
        if (dims[i] < 0)
          dims[i] = EDDY_DIM_DYNAMIC;
      et = eddy_ir_tensor_type_get(z->ctx, dt, (int32_t)rk, dims);
    }
    eddy_value_t *n = NULL;
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_cast(z, op, tfl_in(z, op, 0), EDDY_DT_I64, &n));
    if (!eddy_ir_type_is_scalar(n->type))
      EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, n, NULL, 0, &n));
    const eddy_type_t *lt = eddy_ir_list_type_get(z->ctx, et);
    eddy_op_t *o = NULL;
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build_typed(z, op, "tl.reserve", &n, 1, NULL, 0, &lt, 1, &o));
    eddy_tfl_set(z, &op->results[0], eddy_ir_op_result(o, 0));
    eddy_tfl_set(z, &op->results[1], eddy_ir_op_result(o, 0));
    return NULL;
  }
  if (strcmp(t, "TensorArrayWriteV3") == 0) {
    eddy_value_t *ops[3] = {tfl_in(z, op, 3), tfl_in(z, op, 1),
                            tfl_in(z, op, 2)};
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "tl.set_item", ops, 3, NULL, 0, &r));
    tfl_out1(z, op, r);
    return NULL;
  }
  if (strcmp(t, "TensorArrayReadV3") == 0) {
    eddy_value_t *ops[2] = {tfl_in(z, op, 2), tfl_in(z, op, 1)};
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "tl.get_item", ops, 2, NULL, 0, &r));
    tfl_out1(z, op, r);
    return NULL;
  }
  if (strcmp(t, "TensorArrayGatherV3") == 0) {
    eddy_value_t *l = tfl_in(z, op, 2), *idx = tfl_in(z, op, 1);
    EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "tl.stack", &l, 1, NULL, 0, &r));
    int64_t es[65];
    int64_t ne = eddy_ir_attr_as_i64_array(eddy_ir_op_attr(op, "element_shape"),
                                           es + 1, 64);
    bool known = ne >= 0 && r->type->rank == EDDY_RANK_UNKNOWN;
    for (int64_t i = 1; known && i <= ne; i++)
      known = es[i] >= 0;
    if (known) {
      es[0] = -1;
      EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, r, es, (size_t)ne + 1, &r));
    }
    int64_t n = 0;
    if (!is_iota(z, idx, &n)) {
      eddy_value_t *ops[2] = {r, idx};
      eddy_named_attr_t a = eddy_ir_named_attr(
          z->ctx, "axis", eddy_ir_int_attr_get(z->ctx, 0, EDDY_DT_I64));
      EDDY_RETURN_IF_ERROR(
          eddy_tfl_build(z, op, "core.gather", ops, 2, &a, 1, &r));
    }
    tfl_out1(z, op, r);
    return NULL;
  }
  if (strcmp(t, "TensorArrayScatterV3") == 0) {
    int64_t n = 0;
    if (!is_iota(z, tfl_in(z, op, 1), &n))
      return eddy_tfl_error(op, "only scatters to indices 0, 1, ..., n-1 "
                                "are supported");
    eddy_value_t *x = tfl_in(z, op, 2);
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "tl.from_tensor", &x, 1, NULL, 0, &r));
    tfl_out1(z, op, r);
    return NULL;
  }
  if (strcmp(t, "TensorArraySizeV3") == 0) {
    eddy_value_t *l = tfl_in(z, op, 1);
    EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "tl.length", &l, 1, NULL, 0, &r));
    EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, r, EDDY_DT_I32, &r));
    tfl_out1(z, op, r);
    return NULL;
  }
  if (strcmp(t, "TensorArrayGradV3") == 0) {
    // A new array of the forward one's size and element type; both the
    // handle and the flow of the gradient array are that list (later
    // writes take the flow). Its items are unset, or zeros like the
    // forward ones where functionalize made the writes add up (a gradient
    // array of a loop; tensor_arrays.c). Elsewhere writes to one index are
    // not accumulated: the gradients TensorFlow builds outside loops write
    // each index once.
    eddy_value_t *fwd = tfl_in(z, op, 1), *n = NULL;
    if (fwd->type->kind != EDDY_TYPE_LIST)
      return eddy_tfl_error(op, "the flow input is not a TensorArray");
    const eddy_type_t *lt = fwd->type;
    eddy_op_t *o = NULL;
    if (eddy_ir_op_attr_bool(op, EDDY_TFL_ZEROS_ATTR, false)) {
      EDDY_RETURN_IF_ERROR(eddy_tfl_build_typed(z, op, "tl.zeros_like", &fwd, 1,
                                                NULL, 0, &lt, 1, &o));
      eddy_tfl_set(z, &op->results[0], eddy_ir_op_result(o, 0));
      eddy_tfl_set(z, &op->results[1], eddy_ir_op_result(o, 0));
      return NULL;
    }
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "tl.length", &fwd, 1, NULL, 0, &n));
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build_typed(z, op, "tl.reserve", &n, 1, NULL, 0, &lt, 1, &o));
    eddy_tfl_set(z, &op->results[0], eddy_ir_op_result(o, 0));
    eddy_tfl_set(z, &op->results[1], eddy_ir_op_result(o, 0));
    return NULL;
  }
  if (strcmp(t, "TensorArrayCloseV3") == 0) {
    for (uint32_t i = 0; i < op->num_results; i++)
      eddy_tfl_set(z, &op->results[i], NULL);
    return NULL;
  }
  *handled = false;
  return NULL;
}

static eddy_status_t lower_list(eddy_tfl_t *z, const eddy_op_t *op,
                                const char *t, bool *handled) {
  *handled = true;
  eddy_dtype_t dt = EDDY_DT_F32;
  bool has_dt = eddy_tfl_attr_dtype(op, "element_dtype", &dt) ||
                eddy_tfl_attr_dtype(op, "elem_type", &dt);
  eddy_value_t *r = NULL;
  // A list of lists or of Optionals (element_dtype variant): the importer
  // typed it (dialects/tf/tf_variant.c).
  const eddy_type_t *rt0 = op->num_results ? op->results[0].type : NULL;
  bool nested = rt0 && rt0->kind == EDDY_TYPE_LIST &&
                rt0->elem->kind == EDDY_TYPE_LIST;
  if (nested && strcmp(t, "EmptyTensorList") == 0)
    return list_op(z, op, "tl.empty", NULL, 0, rt0);
  if (nested && strcmp(t, "TensorListReserve") == 0) {
    eddy_value_t *n = NULL;
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_cast(z, op, tfl_in(z, op, 1), EDDY_DT_I64, &n));
    return list_op(z, op, "tl.reserve", &n, 1, rt0);
  }
  // An Optional is a list of at most one element.
  if (strcmp(t, "OptionalNone") == 0)
    return list_op(z, op, "tl.empty", NULL, 0, rt0);
  if (strcmp(t, "OptionalFromValue") == 0) {
    if (op->num_operands != 1)
      return eddy_tfl_error(op, "an Optional of %u components is not "
                                "supported (only one)",
                            op->num_operands);
    eddy_op_t *e = NULL;
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build_typed(z, op, "tl.empty", NULL, 0, NULL, 0, &rt0, 1, &e));
    eddy_value_t *ops[2] = {eddy_ir_op_result(e, 0), tfl_in(z, op, 0)};
    return list_op(z, op, "tl.push_back", ops, 2, rt0);
  }
  if (strcmp(t, "OptionalGetValue") == 0) {
    // Getting the value of an empty Optional is an error (tl.get_item's
    // index check), as in TensorFlow.
    const eddy_type_t *i64 = eddy_ir_scalar_type_get(z->ctx, EDDY_DT_I64);
    int64_t zero = 0;
    eddy_value_t *ops[2] = {tfl_in(z, op, 0), NULL};
    EDDY_RETURN_IF_ERROR(eddy_ir_build_constant(
        &z->b, eddy_ir_dense_attr_from_i64(z->ctx, i64, &zero, 1), &ops[1]));
    return list_op(z, op, "tl.get_item", ops, 2, rt0);
  }
  if (strcmp(t, "OptionalHasValue") == 0) {
    eddy_value_t *o = tfl_in(z, op, 0), *ops[2] = {NULL, NULL};
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "tl.length", &o, 1, NULL, 0, &ops[0]));
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_splat(z, ops[0]->type->dtype, 0, NULL, 0, &ops[1]));
    EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.gt", ops, 2, NULL, 0, &r));
    tfl_out1(z, op, r);
    return NULL;
  }
  if (strcmp(t, "EmptyTensorList") == 0 || strcmp(t, "StackV2") == 0) {
    // A list (or stack) of lists or Optionals: the importer's type.
    if (op->results[0].type->kind == EDDY_TYPE_LIST &&
        op->results[0].type->elem->kind == EDDY_TYPE_LIST)
      return list_op(z, op, "tl.empty", NULL, 0, op->results[0].type);
    if (!has_dt)
      return eddy_tfl_error(op, "no element dtype");
    const eddy_type_t *lt = eddy_ir_list_type_get(
        z->ctx,
        strcmp(t, "StackV2") == 0
            ? eddy_ir_tensor_type_get(z->ctx, dt, EDDY_RANK_UNKNOWN, NULL)
            : list_elem_type(z, op, tfl_in(z, op, 0), dt));
    return list_op(z, op, "tl.empty", NULL, 0, lt);
  }
  if (strcmp(t, "TensorListReserve") == 0) {
    if (!has_dt)
      return eddy_tfl_error(op, "no element dtype");
    eddy_value_t *n = NULL;
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_cast(z, op, tfl_in(z, op, 1), EDDY_DT_I64, &n));
    const eddy_type_t *lt = eddy_ir_list_type_get(
        z->ctx, list_elem_type(z, op, tfl_in(z, op, 0), dt));
    return list_op(z, op, "tl.reserve", &n, 1, lt);
  }
  if (strcmp(t, "StackPushV2") == 0 || strcmp(t, "StackPopV2") == 0)
    return eddy_tfl_error(op, "this stack could not be made a loop value "
                              "(functionalize threads a stack with one push "
                              "and one pop, each reached from the stack "
                              "through the Enters of its frames and the "
                              "Switches of its conds)");
  if (strcmp(t, "TensorListPushBack") == 0) {
    eddy_value_t *ops[2] = {tfl_in(z, op, 0), tfl_in(z, op, 1)};
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "tl.push_back", ops, 2, NULL, 0, &r));
    tfl_out1(z, op, r);
    return NULL;
  }
  if (strcmp(t, "TensorListPopBack") == 0) {
    eddy_value_t *l = tfl_in(z, op, 0);
    eddy_op_t *o = NULL;
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build_typed(z, op, "tl.pop_back", &l, 1, NULL, 0, NULL, 0,
                             &o));
    eddy_tfl_set(z, &op->results[0], eddy_ir_op_result(o, 0));
    eddy_tfl_set(z, &op->results[1], eddy_ir_op_result(o, 1));
    return NULL;
  }
  if (strcmp(t, "StackCloseV2") == 0) {
    for (uint32_t i = 0; i < op->num_results; i++)
      eddy_tfl_set(z, &op->results[i], NULL);
    return NULL;
  }
  if (strcmp(t, "TensorListGetItem") == 0) {
    eddy_value_t *ops[2] = {tfl_in(z, op, 0), tfl_in(z, op, 1)};
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "tl.get_item", ops, 2, NULL, 0, &r));
    tfl_out1(z, op, r);
    return NULL;
  }
  if (strcmp(t, "TensorListSetItem") == 0) {
    eddy_value_t *ops[3] = {tfl_in(z, op, 0), tfl_in(z, op, 1),
                            tfl_in(z, op, 2)};
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "tl.set_item", ops, 3, NULL, 0, &r));
    tfl_out1(z, op, r);
    return NULL;
  }
  if (strcmp(t, "TensorListStack") == 0) {
    eddy_value_t *l = tfl_in(z, op, 0);
    EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "tl.stack", &l, 1, NULL, 0, &r));
    // num_elements (when not -1) is the length the list must have: the
    // stacked type's first dim, which every execution checks at run time
    // (and compiled code then stacks straight into a result).
    int64_t n = eddy_ir_op_attr_int(op, "num_elements", -1);
    const eddy_type_t *rt = r->type;
    if (n >= 0 && rt->rank != EDDY_RANK_UNKNOWN && rt->rank >= 1 &&
        rt->rank <= 64 && rt->dims[0] == EDDY_DIM_DYNAMIC) {
      int64_t dims[65];
      memcpy(dims, rt->dims, sizeof(int64_t) * (size_t)rt->rank);
      dims[0] = n;
      eddy_ir_value_set_type(
          r, eddy_ir_tensor_type_get(z->ctx, rt->dtype, rt->rank, dims));
    }
    // The element shape operand can say more than the list type.
    const eddy_type_t *et = list_elem_type(z, op, tfl_in(z, op, 1), dt);
    if (et->rank != EDDY_RANK_UNKNOWN && r->type->rank == EDDY_RANK_UNKNOWN &&
        eddy_ir_type_is_static(et)) {
      int64_t dims[65];
      dims[0] = n >= 0 ? n : -1;
      for (int32_t i = 0; i < et->rank && i < 64; i++)
        dims[i + 1] = et->dims[i];
      EDDY_RETURN_IF_ERROR(
          eddy_tfl_reshape(z, op, r, dims, (size_t)et->rank + 1, &r));
    }
    tfl_out1(z, op, r);
    return NULL;
  }
  if (strcmp(t, "TensorListFromTensor") == 0) {
    eddy_value_t *x = tfl_in(z, op, 0);
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "tl.from_tensor", &x, 1, NULL, 0, &r));
    tfl_out1(z, op, r);
    return NULL;
  }
  if (strcmp(t, "TensorListLength") == 0) {
    eddy_value_t *l = tfl_in(z, op, 0);
    EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "tl.length", &l, 1, NULL, 0, &r));
    EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, r, EDDY_DT_I32, &r));
    tfl_out1(z, op, r);
    return NULL;
  }
  if (strcmp(t, "TensorListElementShape") == 0) {
    eddy_dtype_t st = EDDY_DT_I32;
    eddy_tfl_attr_dtype(op, "shape_type", &st);
    const eddy_type_t *lt = tfl_in(z, op, 0)->type;
    const eddy_type_t *et = lt->kind == EDDY_TYPE_LIST ? lt->elem : NULL;
    if (!et || et->kind != EDDY_TYPE_TENSOR || et->rank > 64)
      return eddy_tfl_error(op, "the operand is not a list of tensors");
    // The list's declared element shape, as TensorFlow gives it: -1 for an
    // unknown dim, a scalar -1 for an unknown rank.
    int64_t dims[64] = {-1};
    for (int32_t i = 0; i < et->rank; i++)
      dims[i] = et->dims[i] == EDDY_DIM_DYNAMIC ? -1 : et->dims[i];
    int64_t rk = et->rank < 0 ? 1 : et->rank;
    const eddy_type_t *vt = eddy_ir_tensor_type_get(
        z->ctx, st, et->rank < 0 ? 0 : 1, &rk);
    EDDY_RETURN_IF_ERROR(eddy_ir_build_constant(
        &z->b, eddy_ir_dense_attr_from_i64(z->ctx, vt, dims, (size_t)rk), &r));
    tfl_out1(z, op, r);
    return NULL;
  }
  return lower_tensor_array(z, op, t, handled);
}

eddy_status_t eddy_tfl_lower_op(eddy_tfl_t *z, const eddy_op_t *op,
                                bool *handled) {
  const char *t = op->name->str + 3;
  *handled = true;
  eddy_value_t *r = NULL, *c = NULL, *d = NULL;
  if ((strcmp(t, "AddV2") == 0 || strcmp(t, "Add") == 0) &&
      (tfl_in(z, op, 0)->type->kind == EDDY_TYPE_LIST ||
       tfl_in(z, op, 1)->type->kind == EDDY_TYPE_LIST)) {
    // A sum of TensorArray flows (gradients accumulate the flow of an
    // entered TensorArray): the flow's only meaning is the list it
    // carries, the newer operand's.
    tfl_out1(z, op,
             tfl_in(z, op, 1)->type->kind == EDDY_TYPE_LIST ? tfl_in(z, op, 1)
                                                            : tfl_in(z, op, 0));
    return NULL;
  }
  for (size_t i = 0; i < sizeof SIMPLE / sizeof SIMPLE[0]; i++) {
    if (strcmp(t, SIMPLE[i].tf) != 0)
      continue;
    eddy_value_t *ops[3];
    size_t n = op->num_operands < 3 ? op->num_operands : 3;
    for (size_t k = 0; k < n; k++)
      ops[k] = tfl_in(z, op, k);
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, SIMPLE[i].core, ops, n, NULL, 0, &r));
    tfl_out1(z, op, r);
    return NULL;
  }
  if (strcmp(t, "Const") == 0) {
    const eddy_attr_t *v = eddy_ir_op_attr(op, "value");
    if (!v || v->kind != EDDY_ATTR_DENSE)
      return eddy_tfl_error(op, "no dense 'value'");
    z->b.loc = op->loc;
    EDDY_RETURN_IF_ERROR(eddy_ir_build_constant(&z->b, v, &r));
    tfl_out1(z, op, r);
    return NULL;
  }
  if (strcmp(t, "StopGradient") == 0) {
    // core.stop_gradient of a tensor; a list passes as it is.
    eddy_value_t *x = tfl_in(z, op, 0);
    if (x->type->kind != EDDY_TYPE_TENSOR) {
      tfl_out1(z, op, x);
      return NULL;
    }
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "core.stop_gradient", &x, 1, NULL, 0, &r));
    tfl_out1(z, op, r);
    return NULL;
  }
  if (strcmp(t, "Identity") == 0 || strcmp(t, "IdentityN") == 0 ||
      strcmp(t, "Snapshot") == 0 ||
      strcmp(t, "PlaceholderWithDefault") == 0) {
    for (uint32_t i = 0; i < op->num_results && i < op->num_operands; i++)
      eddy_tfl_set(z, &op->results[i], tfl_in(z, op, i));
    return NULL;
  }
  if (strcmp(t, "Cast") == 0) {
    eddy_dtype_t dt;
    if (!eddy_tfl_attr_dtype(op, "DstT", &dt))
      return eddy_tfl_error(op, "attribute 'DstT' is not an eddy dtype");
    EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, tfl_in(z, op, 0), dt, &r));
    tfl_out1(z, op, r);
    return NULL;
  }
  if (strcmp(t, "MatMul") == 0 || strcmp(t, "BatchMatMulV2") == 0) {
    bool mm = strcmp(t, "MatMul") == 0;
    eddy_named_attr_t a[2] = {
        eddy_ir_named_attr(
            z->ctx, "transpose_a",
            eddy_ir_bool_attr_get(z->ctx, eddy_ir_op_attr_bool(
                                              op, mm ? "transpose_a" : "adj_x",
                                              false))),
        eddy_ir_named_attr(
            z->ctx, "transpose_b",
            eddy_ir_bool_attr_get(z->ctx, eddy_ir_op_attr_bool(
                                              op, mm ? "transpose_b" : "adj_y",
                                              false)))};
    eddy_value_t *ops[2] = {tfl_in(z, op, 0), tfl_in(z, op, 1)};
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "core.matmul", ops, 2, a, 2, &r));
    tfl_out1(z, op, r);
    return NULL;
  }
  if (strcmp(t, "Reciprocal") == 0) {
    eddy_value_t *x = tfl_in(z, op, 0);
    EDDY_RETURN_IF_ERROR(tfl_scalar_like(z, x, 1.0, &c));
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.div", c, x, &r));
    tfl_out1(z, op, r);
    return NULL;
  }
  if (strcmp(t, "SquaredDifference") == 0) {
    EDDY_RETURN_IF_ERROR(
        tfl_bin(z, op, "core.sub", tfl_in(z, op, 0), tfl_in(z, op, 1), &d));
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.mul", d, d, &r));
    tfl_out1(z, op, r);
    return NULL;
  }
  if (strcmp(t, "FloorDiv") == 0) {
    // core.div on integers is floor division already.
    eddy_value_t *x = tfl_in(z, op, 0);
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.div", x, tfl_in(z, op, 1), &d));
    if (!eddy_dtype_is_float(d->type->dtype)) {
      tfl_out1(z, op, d);
      return NULL;
    }
    EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.floor", &d, 1, NULL, 0, &r));
    tfl_out1(z, op, r);
    return NULL;
  }
  if (strcmp(t, "TanhGrad") == 0) {
    // dy * (1 - y^2)
    eddy_value_t *y = tfl_in(z, op, 0), *dy = tfl_in(z, op, 1), *yy = NULL;
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.mul", y, y, &yy));
    EDDY_RETURN_IF_ERROR(tfl_scalar_like(z, y, 1.0, &c));
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.sub", c, yy, &d));
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.mul", dy, d, &r));
    tfl_out1(z, op, r);
    return NULL;
  }
  if (strcmp(t, "SigmoidGrad") == 0) {
    // dy * y * (1 - y)
    eddy_value_t *y = tfl_in(z, op, 0), *dy = tfl_in(z, op, 1), *e = NULL;
    EDDY_RETURN_IF_ERROR(tfl_scalar_like(z, y, 1.0, &c));
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.sub", c, y, &d));
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.mul", y, d, &e));
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.mul", dy, e, &r));
    tfl_out1(z, op, r);
    return NULL;
  }
  if (strcmp(t, "ReluGrad") == 0) {
    // dy where x > 0, else 0
    eddy_value_t *dy = tfl_in(z, op, 0), *x = tfl_in(z, op, 1), *p = NULL;
    EDDY_RETURN_IF_ERROR(tfl_scalar_like(z, x, 0.0, &c));
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.gt", x, c, &p));
    eddy_value_t *ops[3] = {p, dy, c};
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "core.select", ops, 3, NULL, 0, &r));
    tfl_out1(z, op, r);
    return NULL;
  }
  if (strcmp(t, "AddN") == 0 &&
      tfl_in(z, op, 0)->type->kind == EDDY_TYPE_LIST) {
    // Lists add item by item, pairwise (tl.add: TensorFlow's
    // TensorListBinaryAdd, an unset item taken as the zero of the other's;
    // the items may differ in shape from one another).
    const eddy_type_t *lt = tfl_in(z, op, 0)->type;
    for (uint32_t i = 0; i < op->num_operands; i++) {
      eddy_value_t *l = tfl_in(z, op, i);
      if (l->type->kind == EDDY_TYPE_TOKEN)
        continue;
      if (l->type->kind != EDDY_TYPE_LIST)
        return eddy_tfl_error(op, "operand #%u is not a list like operand "
                                  "#0",
                              (unsigned)i);
      if (!r) {
        r = l;
        continue;
      }
      eddy_value_t *ops[2] = {r, l};
      eddy_op_t *o = NULL;
      EDDY_RETURN_IF_ERROR(eddy_tfl_build_typed(z, op, "tl.add", ops, 2, NULL,
                                                0, &lt, 1, &o));
      r = eddy_ir_op_result(o, 0);
    }
    tfl_out1(z, op, r);
    return NULL;
  }
  if (strcmp(t, "AddN") == 0) {
    r = tfl_in(z, op, 0);
    for (uint32_t i = 1; i < op->num_operands; i++) {
      eddy_value_t *v = tfl_in(z, op, i);
      if (v->type->kind == EDDY_TYPE_TOKEN)
        continue;
      EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.add", r, v, &r));
    }
    tfl_out1(z, op, r);
    return NULL;
  }
  if (strcmp(t, "Select") == 0) {
    // v1 Select: a vector condition picks rows of x and y.
    eddy_value_t *p = tfl_in(z, op, 0), *x = tfl_in(z, op, 1);
    if (p->type->rank == 1 && x->type->rank > 1) {
      int64_t dims[64];
      dims[0] = -1;
      for (int32_t i = 1; i < x->type->rank && i < 64; i++)
        dims[i] = 1;
      EDDY_RETURN_IF_ERROR(
          eddy_tfl_reshape(z, op, p, dims, (size_t)x->type->rank, &p));
    }
    eddy_value_t *ops[3] = {p, x, tfl_in(z, op, 2)};
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "core.select", ops, 3, NULL, 0, &r));
    tfl_out1(z, op, r);
    return NULL;
  }
  if (strcmp(t, "Sum") == 0)
    return lower_reduce(z, op, "core.reduce_sum");
  if (strcmp(t, "Mean") == 0)
    return lower_reduce(z, op, "core.reduce_mean");
  if (strcmp(t, "Max") == 0)
    return lower_reduce(z, op, "core.reduce_max");
  if (strcmp(t, "Min") == 0)
    return lower_reduce(z, op, "core.reduce_min");
  if (strcmp(t, "Prod") == 0)
    return lower_reduce(z, op, "core.reduce_prod");
  if (strcmp(t, "BiasAddGrad") == 0) {
    eddy_value_t *x = tfl_in(z, op, 0);
    if (x->type->rank == EDDY_RANK_UNKNOWN)
      return eddy_tfl_error(op, "the operand's rank is unknown");
    int64_t axes[64];
    for (int32_t i = 0; i + 1 < x->type->rank && i < 64; i++)
      axes[i] = i;
    eddy_named_attr_t a = eddy_ir_named_attr(
        z->ctx, "axes",
        eddy_ir_i64_array_attr_get(z->ctx, axes, (size_t)x->type->rank - 1));
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "core.reduce_sum", &x, 1, &a, 1, &r));
    tfl_out1(z, op, r);
    return NULL;
  }
  if (eddy_tfl_is_list_op(t) || eddy_tfl_is_list_form(z, op))
    return eddy_tfl_lower_list_op(z, op);
  EDDY_RETURN_IF_ERROR(lower_list(z, op, t, handled));
  if (*handled)
    return NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_lower_math_op(z, op, handled));
  if (*handled)
    return NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_lower_index_op(z, op, handled));
  if (*handled)
    return NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_lower_window_op(z, op, handled));
  if (*handled)
    return NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_lower_special_op(z, op, handled));
  if (*handled)
    return NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_lower_linalg_op(z, op, handled));
  if (*handled)
    return NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_lower_crop_op(z, op, handled));
  if (*handled)
    return NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_lower_space_op(z, op, handled));
  if (*handled)
    return NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_lower_quant_op(z, op, handled));
  if (*handled)
    return NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_lower_random_op(z, op, handled));
  if (*handled)
    return NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_lower_ctc_op(z, op, handled));
  if (*handled)
    return NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_lower_ragged_op(z, op, handled));
  if (*handled)
    return NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_lower_unique_op(z, op, handled));
  if (*handled)
    return NULL;
  return eddy_tfl_lower_shape_op(z, op, handled);
}

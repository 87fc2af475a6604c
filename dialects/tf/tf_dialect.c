/// The tf dialect's op table: the TensorFlow ops whose structure the IR must
/// know (the v1 control-flow primitives, the functional control-flow and
/// call ops, Const, NoOp). Every other "tf.X" is accepted unchecked
/// (allow_unknown_ops), which is how the importer keeps TensorFlow's op set
/// open.
///
/// The attribute specs list TensorFlow's attributes of each op. The
/// importer renames an attribute these specs do not know (one a newer
/// TensorFlow added) to "tf.<name>", a discardable attribute, so that
/// imported IR always verifies.
#include "dialects/tf/tf.h"

#include "dialects/dialects.h"
#include "dialects/dialects_internal.h"

#include <stdio.h>
#include <string.h>

/// ---- Helpers ----

/// Same kind and element dtype: the part of a type TensorFlow fixes.
static bool same_elem(const eddy_type_t *a, const eddy_type_t *b) {
  if (!a || !b || a->kind != b->kind)
    return false;
  if (a->kind == EDDY_TYPE_TENSOR)
    return a->dtype == b->dtype;
  if (a->kind == EDDY_TYPE_LIST)
    return a->elem->dtype == b->elem->dtype;
  return true;
}

static eddy_status_t expect_same_elem(const eddy_op_t *op, const char *what,
                                      const eddy_type_t *got,
                                      const eddy_type_t *want) {
  if (same_elem(got, want))
    return NULL;
  eddy_tt_t tt = {0};
  eddy_status_t st =
      eddy_ir_op_error(op, "%s has type %s, which does not match %s", what,
                       eddy_tt(&tt, got), eddy_tt(&tt, want));
  eddy_tt_free(&tt);
  return st;
}

/// The func.func named by symbol attribute `attr` of op; NULL (and no
/// error) when op is not inside a module yet.
static eddy_status_t find_callee(const eddy_op_t *op, const eddy_attr_t *sym,
                                 const char *what, eddy_op_t **out) {
  *out = NULL;
  const eddy_op_t *m = op;
  while (m && !eddy_ir_op_is(m, "builtin.module"))
    m = eddy_ir_op_parent_op(m);
  if (!m)
    return NULL;
  eddy_module_t mod = {op->ctx, (eddy_op_t *)m};
  eddy_op_t *f = eddy_ir_module_lookup_func(&mod, sym->u.str.data);
  if (!f)
    return eddy_ir_op_error(op, "%s '@%s' does not name a function", what,
                            sym->u.str.data);
  *out = f;
  return NULL;
}

/// Checks that sym names a function taking nargs values and returning
/// nresults (-1: any).
static eddy_status_t check_callee(const eddy_op_t *op, const eddy_attr_t *sym,
                                  const char *what, uint32_t nargs,
                                  int64_t nresults) {
  eddy_op_t *f;
  EDDY_RETURN_IF_ERROR(find_callee(op, sym, what, &f));
  if (!f)
    return NULL;
  const eddy_type_t *ft = eddy_ir_func_type(f);
  if (ft->num_inputs != nargs)
    return eddy_ir_op_error(op, "%s '@%s' takes %u argument%s, the op passes "
                            "%u",
                            what, sym->u.str.data, ft->num_inputs,
                            ft->num_inputs == 1 ? "" : "s", nargs);
  if (nresults >= 0 && ft->num_outputs != (uint32_t)nresults)
    return eddy_ir_op_error(op, "%s '@%s' returns %u value%s, expected %lld",
                            what, sym->u.str.data, ft->num_outputs,
                            ft->num_outputs == 1 ? "" : "s",
                            (long long)nresults);
  return NULL;
}

/// ---- Verifiers ----

static eddy_status_t verify_const(const eddy_op_t *op) {
  const eddy_attr_t *v = eddy_ir_op_attr(op, "value");
  if (!eddy_ir_type_is_compatible(op->results[0].type, v->type)) {
    eddy_tt_t tt = {0};
    eddy_status_t st = eddy_ir_op_error(
        op, "result type %s does not match the value's type %s",
        eddy_tt(&tt, op->results[0].type), eddy_tt(&tt, v->type));
    eddy_tt_free(&tt);
    return st;
  }
  return NULL;
}

/// NoOp and ControlTrigger: control inputs in, a control output out.
static eddy_status_t verify_control_only(const eddy_op_t *op) {
  for (uint32_t i = 0; i < op->num_operands; i++)
    if (op->operands[i].value->type->kind != EDDY_TYPE_TOKEN)
      return eddy_ir_op_error(op, "operand #%u must be a !df.token", i);
  if (op->results[0].type->kind != EDDY_TYPE_TOKEN)
    return eddy_ir_op_error(op, "result must be a !df.token");
  return NULL;
}

static eddy_status_t verify_switch(const eddy_op_t *op) {
  if (!eddy_dialects_is_pred_type(op->operands[1].value->type))
    return eddy_ir_op_error(op, "predicate (operand #1) must be tensor<i1>");
  const eddy_type_t *data = op->operands[0].value->type;
  EDDY_RETURN_IF_ERROR(
      expect_same_elem(op, "result #0", op->results[0].type, data));
  return expect_same_elem(op, "result #1", op->results[1].type, data);
}

/// _SwitchN(data, output_index): num_outs outputs of the data's type, the
/// index an i32 scalar.
static eddy_status_t verify_switch_n(const eddy_op_t *op) {
  const eddy_type_t *idx = op->operands[1].value->type;
  if (idx->kind != EDDY_TYPE_TENSOR || idx->dtype != EDDY_DT_I32 ||
      (idx->rank != 0 && idx->rank != EDDY_RANK_UNKNOWN))
    return eddy_ir_op_error(op, "output_index (operand #1) must be "
                                "tensor<i32>");
  int64_t n = eddy_ir_op_attr_int(op, "num_outs", op->num_results);
  if (op->num_results == 0 || op->results[0].type->kind == EDDY_TYPE_TOKEN)
    return eddy_ir_op_error(op, "num_outs must be at least 1");
  if (n != (int64_t)op->num_results)
    return eddy_ir_op_error(op, "num_outs is %lld but the op has %u results",
                            (long long)n, op->num_results);
  const eddy_type_t *data = op->operands[0].value->type;
  for (uint32_t i = 0; i < op->num_results; i++) {
    char what[32];
    snprintf(what, sizeof what, "result #%u", i);
    EDDY_RETURN_IF_ERROR(expect_same_elem(op, what, op->results[i].type, data));
  }
  return NULL;
}

static eddy_status_t verify_merge(const eddy_op_t *op) {
  const eddy_type_t *idx = op->results[1].type;
  if (idx->kind != EDDY_TYPE_TENSOR || idx->dtype != EDDY_DT_I32 ||
      idx->rank != 0)
    return eddy_ir_op_error(op, "result #1 (value_index) must be "
                                "tensor<i32>");
  for (uint32_t i = 0; i < op->num_operands; i++) {
    const eddy_value_t *v = op->operands[i].value;
    char what[32];
    snprintf(what, sizeof what, "input #%u", i);
    EDDY_RETURN_IF_ERROR(
        expect_same_elem(op, what, v->type, op->results[0].type));
    EDDY_RETURN_IF_ERROR(
        eddy_dialects_verify_merge_input(op, i, "tf.NextIteration", false));
  }
  return NULL;
}

static eddy_status_t verify_same_as_input(const eddy_op_t *op) {
  return expect_same_elem(op, "result", op->results[0].type,
                          op->operands[0].value->type);
}

static eddy_status_t verify_enter(const eddy_op_t *op) {
  if (eddy_ir_op_attr(op, "frame_name")->u.str.len == 0)
    return eddy_ir_op_error(op, "frame_name must not be empty");
  if (eddy_ir_op_attr_int(op, "parallel_iterations", 10) <= 0)
    return eddy_ir_op_error(op, "parallel_iterations must be positive");
  return verify_same_as_input(op);
}

static eddy_status_t verify_loop_cond(const eddy_op_t *op) {
  if (!eddy_dialects_is_pred_type(op->operands[0].value->type))
    return eddy_ir_op_error(op, "operand must be tensor<i1>");
  return verify_same_as_input(op);
}

static eddy_status_t verify_while(const eddy_op_t *op) {
  if (op->num_results != op->num_operands)
    return eddy_ir_op_error(op, "has %u loop values but %u results",
                            op->num_operands, op->num_results);
  EDDY_RETURN_IF_ERROR(check_callee(op, eddy_ir_op_attr(op, "cond"), "cond",
                                    op->num_operands, 1));
  return check_callee(op, eddy_ir_op_attr(op, "body"), "body",
                      op->num_operands, op->num_operands);
}

static eddy_status_t verify_if(const eddy_op_t *op) {
  EDDY_RETURN_IF_ERROR(check_callee(op, eddy_ir_op_attr(op, "then_branch"),
                                    "then_branch", op->num_operands - 1,
                                    op->num_results));
  return check_callee(op, eddy_ir_op_attr(op, "else_branch"), "else_branch",
                      op->num_operands - 1, op->num_results);
}

static eddy_status_t verify_case(const eddy_op_t *op) {
  const eddy_attr_t *br = eddy_ir_op_attr(op, "branches");
  if (br->u.array.len == 0)
    return eddy_ir_op_error(op, "branches must not be empty");
  for (size_t i = 0; i < br->u.array.len; i++) {
    const eddy_attr_t *b = br->u.array.elems[i];
    if (b->kind != EDDY_ATTR_SYMBOL)
      return eddy_ir_op_error(op, "branches[%zu] must be a symbol", i);
    EDDY_RETURN_IF_ERROR(check_callee(op, b, "branch", op->num_operands - 1,
                                      op->num_results));
  }
  return NULL;
}

static eddy_status_t verify_call(const eddy_op_t *op) {
  return check_callee(op, eddy_ir_op_attr(op, "f"), "f", op->num_operands,
                      op->num_results);
}

/// ---- The table ----

#define SPEC_END {NULL, EDDY_ATTR_INT, false}

static const eddy_attr_spec_t a_const[] = {
    {"dtype", EDDY_ATTR_STRING, true},
    {"value", EDDY_ATTR_DENSE, false},
    SPEC_END,
};
static const eddy_attr_spec_t a_T[] = {
    {"T", EDDY_ATTR_STRING, true},
    SPEC_END,
};
static const eddy_attr_spec_t a_merge[] = {
    {"N", EDDY_ATTR_INT, true},
    {"T", EDDY_ATTR_STRING, true},
    SPEC_END,
};
static const eddy_attr_spec_t a_switch_n[] = {
    {"T", EDDY_ATTR_STRING, true},
    {"num_outs", EDDY_ATTR_INT, true},
    SPEC_END,
};
static const eddy_attr_spec_t a_enter[] = {
    {"T", EDDY_ATTR_STRING, true},
    {"frame_name", EDDY_ATTR_STRING, false},
    {"is_constant", EDDY_ATTR_BOOL, true},
    {"parallel_iterations", EDDY_ATTR_INT, true},
    SPEC_END,
};
static const eddy_attr_spec_t a_while[] = {
    {"T", EDDY_ATTR_ARRAY, true},
    {"body", EDDY_ATTR_SYMBOL, false},
    {"cond", EDDY_ATTR_SYMBOL, false},
    {"output_shapes", EDDY_ATTR_ARRAY, true},
    {"parallel_iterations", EDDY_ATTR_INT, true},
    SPEC_END,
};
static const eddy_attr_spec_t a_if[] = {
    {"Tcond", EDDY_ATTR_STRING, true},
    {"Tin", EDDY_ATTR_ARRAY, true},
    {"Tout", EDDY_ATTR_ARRAY, true},
    {"else_branch", EDDY_ATTR_SYMBOL, false},
    {"output_shapes", EDDY_ATTR_ARRAY, true},
    {"then_branch", EDDY_ATTR_SYMBOL, false},
    SPEC_END,
};
static const eddy_attr_spec_t a_case[] = {
    {"Tin", EDDY_ATTR_ARRAY, true},
    {"Tout", EDDY_ATTR_ARRAY, true},
    {"branches", EDDY_ATTR_ARRAY, false},
    {"output_shapes", EDDY_ATTR_ARRAY, true},
    SPEC_END,
};
static const eddy_attr_spec_t a_call[] = {
    {"Tin", EDDY_ATTR_ARRAY, true},
    {"Tout", EDDY_ATTR_ARRAY, true},
    {"config", EDDY_ATTR_STRING, true},
    {"config_proto", EDDY_ATTR_STRING, true},
    {"executor_type", EDDY_ATTR_STRING, true},
    {"f", EDDY_ATTR_SYMBOL, false},
    SPEC_END,
};
static const eddy_attr_spec_t a_legacy_call[] = {
    {"f", EDDY_ATTR_SYMBOL, false},
    SPEC_END,
};

#define UNARY(n, v)                                                            \
  {                                                                            \
    .name = n, .num_operands = 1, .num_results = 1, .attrs = a_T, .verify = v \
  }
#define CONTROL_ONLY(n)                                                        \
  {                                                                            \
    .name = n, .num_operands = EDDY_VARIADIC, .min_operands = 0,               \
    .num_results = 1, .verify = verify_control_only                            \
  }
#define WHILE(n)                                                               \
  {                                                                            \
    .name = n, .num_operands = EDDY_VARIADIC, .min_operands = 0,               \
    .num_results = EDDY_VARIADIC, .attrs = a_while, .verify = verify_while    \
  }
#define IF(n)                                                                  \
  {                                                                            \
    .name = n, .num_operands = EDDY_VARIADIC, .min_operands = 1,               \
    .num_results = EDDY_VARIADIC, .attrs = a_if, .verify = verify_if          \
  }
#define CASE(n)                                                                \
  {                                                                            \
    .name = n, .num_operands = EDDY_VARIADIC, .min_operands = 1,               \
    .num_results = EDDY_VARIADIC, .attrs = a_case, .verify = verify_case      \
  }
#define CALL(n, a)                                                             \
  {                                                                            \
    .name = n, .num_operands = EDDY_VARIADIC, .min_operands = 0,               \
    .num_results = EDDY_VARIADIC, .attrs = a, .verify = verify_call           \
  }

/// No op here is PURE except Const: in a v1 graph every value may be dead
/// and belongs to a frame, so passes must not move or merge these ops.
static const eddy_op_def_t tf_ops[] = {
    {
        .name = "tf.Const",
        .num_operands = 0,
        .num_results = 1,
        .traits = EDDY_TRAIT_PURE | EDDY_TRAIT_CONSTANT,
        .attrs = a_const,
        .verify = verify_const,
    },
    CONTROL_ONLY("tf.NoOp"),
    CONTROL_ONLY("tf.ControlTrigger"),
    {
        .name = "tf.Switch",
        .num_operands = 2,
        .num_results = 2,
        .attrs = a_T,
        .verify = verify_switch,
    },
    {
        .name = "tf._SwitchN",
        .num_operands = 2,
        .num_results = EDDY_VARIADIC,
        .attrs = a_switch_n,
        .verify = verify_switch_n,
    },
    {
        .name = "tf.Merge",
        .num_operands = EDDY_VARIADIC,
        .min_operands = 1,
        .num_results = 2,
        .traits = EDDY_TRAIT_BACKEDGE,
        .attrs = a_merge,
        .verify = verify_merge,
    },
    {
        .name = "tf.Enter",
        .num_operands = 1,
        .num_results = 1,
        .attrs = a_enter,
        .verify = verify_enter,
    },
    UNARY("tf.Exit", verify_same_as_input),
    UNARY("tf.NextIteration", verify_same_as_input),
    {
        .name = "tf.LoopCond",
        .num_operands = 1,
        .num_results = 1,
        .verify = verify_loop_cond,
    },
    WHILE("tf.While"),
    WHILE("tf.StatelessWhile"),
    IF("tf.If"),
    IF("tf.StatelessIf"),
    CASE("tf.Case"),
    CASE("tf.StatelessCase"),
    CALL("tf.PartitionedCall", a_call),
    CALL("tf.StatefulPartitionedCall", a_call),
    CALL("tf.LegacyCall", a_legacy_call),
};

const eddy_dialect_t eddy_tf_dialect = {
    .name = "tf",
    .ops = tf_ops,
    .num_ops = sizeof(tf_ops) / sizeof(tf_ops[0]),
    .allow_unknown_ops = true,
};

void eddy_tf_dialect_register(eddy_ctx_t *ctx) {
  eddy_dialects_register_all(ctx);
  eddy_ir_ctx_register_dialect(ctx, &eddy_tf_dialect);
}

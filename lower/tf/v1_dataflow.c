/// v1 control flow as dataflow: the six tf control-flow ops and _SwitchN
/// (a lowered Case) become the df primitives in place, so that an imported v1
/// graph runs in the dataflow interpreter as TensorFlow's executor would run it
/// (no functionalize). The v1 stack and TensorArray ops stay as they are
/// (legalize-tf keeps them, eddy_tfl_keep_dataflow_op): the interpreter runs
/// them on resource handles (runtime/interp/interp_resource.c). So does
/// tf.ControlTrigger, whose token is live even when its inputs are dead (the
/// gradient of a loop syncs on one fed from both branches of a cond).
#include "lower/tf/tf_lower_internal.h"

#include <stdlib.h>
#include <string.h>

static const struct {
  const char *tf, *df;
} k_names[] = {
    {"tf.Switch", "df.switch"},      {"tf._SwitchN", "df.switch_n"},
    {"tf.Merge", "df.merge"},        {"tf.Enter", "df.enter"},
    {"tf.Exit", "df.exit"},          {"tf.NextIteration", "df.next_iteration"},
    {"tf.LoopCond", "df.loop_cond"},
};

static const char *df_name(const eddy_op_t *op) {
  for (size_t i = 0; i < sizeof k_names / sizeof k_names[0]; i++)
    if (eddy_ir_op_is(op, k_names[i].tf))
      return k_names[i].df;
  return NULL;
}

/// The df op for one tf op, before it, taking over its uses.
static eddy_status_t convert(eddy_ctx_t *ctx, eddy_op_t *op, const char *name) {
  eddy_builder_t b;
  eddy_ir_builder_init(&b, ctx);
  eddy_ir_builder_set_before(&b, op);
  eddy_named_attr_t attrs[3];
  size_t na = 0;
  if (strcmp(name, "df.enter") == 0) {
    const eddy_attr_t *f = eddy_ir_op_attr(op, "frame_name");
    if (!f || f->kind != EDDY_ATTR_STRING || f->u.str.len == 0)
      return eddy_ir_op_error(op, "Enter without a frame_name");
    attrs[na++] = eddy_ir_named_attr(ctx, "frame_name", f);
    attrs[na++] = eddy_ir_named_attr(
        ctx, "is_constant",
        eddy_ir_bool_attr_get(ctx,
                              eddy_ir_op_attr_bool(op, "is_constant", false)));
    int64_t pi = eddy_ir_op_attr_int(op, "parallel_iterations", 10);
    attrs[na++] = eddy_ir_named_attr(
        ctx, "parallel_iterations",
        eddy_ir_int_attr_get(ctx, pi > 0 ? pi : 10, EDDY_DT_I64));
  }
  // Merge's and Switch's results are two (a Merge's index), _SwitchN's
  // num_outs.
  const eddy_type_t *types[64] = {NULL};
  uint32_t nres = strcmp(name, "df.switch_n") == 0 ? op->num_results
                  : op->num_results < 2            ? op->num_results
                                                   : 2;
  if (op->num_operands > 64 || nres > 64)
    return eddy_ir_op_error(op, "too many inputs or outputs");
  for (uint32_t i = 0; i < nres; i++)
    types[i] = op->results[i].type;
  eddy_value_t *ins[64];
  uint32_t n = 0;
  for (uint32_t i = 0; i < op->num_operands; i++) {
    eddy_value_t *v = eddy_ir_op_operand(op, i);
    if (v->type->kind != EDDY_TYPE_TOKEN) // control inputs: not df operands
      ins[n++] = v;
  }
  eddy_op_state_t st = {.name = name,
                        .operands = ins,
                        .num_operands = n,
                        .attrs = attrs,
                        .num_attrs = na,
                        .result_types = types,
                        .num_results = nres,
                        .loc = op->loc};
  eddy_op_t *d = NULL;
  EDDY_RETURN_IF_ERROR(eddy_ir_build(&b, &st, &d));
  for (uint32_t i = 0; i < d->num_results; i++)
    eddy_ir_value_replace_all_uses(&op->results[i], &d->results[i]);
  return NULL;
}

eddy_status_t eddy_tf_v1_to_dataflow(eddy_module_t *m) {
  for (eddy_op_t *f = eddy_ir_module_body(m)->first; f; f = f->next) {
    eddy_block_t *b =
        eddy_ir_op_is(f, "func.func") ? eddy_ir_func_entry(f) : NULL;
    if (!b)
      continue;
    // Build every replacement first (merges read next_iterations defined
    // after them), then erase the tf ops, operands dropped first.
    for (eddy_op_t *op = b->first; op; op = op->next) {
      const char *name = df_name(op);
      if (name)
        EDDY_RETURN_IF_ERROR(convert(m->ctx, op, name));
    }
    for (eddy_op_t *op = b->first; op; op = op->next)
      if (df_name(op))
        eddy_ir_op_set_operands(op, NULL, 0);
    for (eddy_op_t *op = b->first; op;) {
      eddy_op_t *next = op->next;
      if (df_name(op))
        eddy_ir_op_erase(op);
      op = next;
    }
  }
  return NULL;
}

/// The stateful ops on v1 resources that the dataflow interpreter runs, and
/// ControlTrigger.
static const char *const k_kept_ops[] = {
    "tf.ControlTrigger",
    "tf.StackV2",           "tf.StackPushV2",         "tf.StackPopV2",
    "tf.StackCloseV2",      "tf.TensorArrayV3",       "tf.TensorArrayWriteV3",
    "tf.TensorArrayReadV3", "tf.TensorArrayGatherV3", "tf.TensorArrayScatterV3",
    "tf.TensorArraySizeV3", "tf.TensorArrayCloseV3",  "tf.TensorArrayGradV3",
    "tf.TensorArrayConcatV3", "tf.TensorArraySplitV3",
};

eddy_status_t eddy_tfl_keep_dataflow_op(eddy_tfl_t *z, const eddy_op_t *op,
                                        bool *handled) {
  *handled = false;
  for (size_t i = 0; i < sizeof k_kept_ops / sizeof k_kept_ops[0]; i++)
    *handled = *handled || eddy_ir_op_is(op, k_kept_ops[i]);
  if (!*handled)
    return NULL;
  // The copy: data operands mapped, then the control tokens that still
  // stand for something (a dropped node's token is left out).
  eddy_value_t **ins = calloc(op->num_operands + 1, sizeof(*ins));
  if (!ins)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  size_t n = 0;
  eddy_status_t st = NULL;
  for (uint32_t i = 0; i < op->num_operands && !st; i++) {
    eddy_value_t *src = eddy_ir_op_operand(op, i);
    eddy_value_t *v = eddy_tfl_get(z, src);
    bool token = src->type->kind == EDDY_TYPE_TOKEN;
    if (!v || v == &z->none) {
      if (!token)
        st = eddy_tfl_error(op, "input #%u has no value", i);
      continue;
    }
    ins[n++] = v;
  }
  if (!st && n == 0 && eddy_ir_op_is(op, "tf.ControlTrigger")) {
    // Waits for nothing: no token at all.
    for (uint32_t i = 0; i < op->num_results; i++)
      eddy_tfl_set(z, &op->results[i], NULL);
    free(ins);
    return NULL;
  }
  const eddy_type_t **types =
      calloc(op->num_results + 1, sizeof(*types));
  if (!st && !types)
    st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  for (uint32_t i = 0; !st && i < op->num_results; i++)
    types[i] = op->results[i].type;
  if (!st && op->num_results > 0)
    st = eddy_tfl_v1_read_type(z, op, &types[0]);
  eddy_op_t *c = NULL;
  if (!st)
    st = eddy_tfl_build_typed(z, op, op->name->str, ins, n, op->attrs,
                              op->num_attrs, types, op->num_results, &c);
  for (uint32_t i = 0; !st && i < op->num_results; i++)
    eddy_tfl_set(z, &op->results[i], eddy_ir_op_result(c, i));
  free(ins);
  free(types);
  return st;
}

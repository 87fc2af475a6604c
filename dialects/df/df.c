/// The df dialect: switch, switch_n, merge, enter, exit, next_iteration,
/// loop_cond, control, after, and send / recv between ranks.
///
/// No df op is PURE: every df value may be dead (the "Implementation of Control
/// Flow in TensorFlow" note's (value, is_dead, tag) tensors), and where an op
/// sits in the graph decides its frame and iteration, so passes must not CSE,
/// hoist or drop them.
#include "dialects/df/df.h"

#include "dialects/dialects_internal.h"

#include <string.h>

/// ---- Shape functions ----

static eddy_status_t infer_same(eddy_infer_ctx_t *ic) {
  if (ic->num_operands < 1)
    return eddy_ir_infer_error(ic, "expects an operand");
  eddy_ir_infer_push(ic, ic->operand_types[0]);
  return NULL;
}

static eddy_status_t infer_switch(eddy_infer_ctx_t *ic) {
  if (ic->num_operands < 1)
    return eddy_ir_infer_error(ic, "expects a data operand");
  eddy_ir_infer_push(ic, ic->operand_types[0]);
  eddy_ir_infer_push(ic, ic->operand_types[0]);
  return NULL;
}

/// The output covers every input: shapes that differ between the entry
/// value and the back edge become dynamic.
static eddy_status_t infer_merge(eddy_infer_ctx_t *ic) {
  if (ic->num_operands < 1)
    return eddy_ir_infer_error(ic, "expects at least one input");
  const eddy_type_t *t = ic->operand_types[0];
  for (size_t i = 1; i < ic->num_operands && t; i++) {
    const eddy_type_t *u = ic->operand_types[i];
    const eddy_type_t *g = eddy_ir_type_generalize(ic->ctx, t, u);
    if (!g) {
      eddy_tt_t tt = {0};
      eddy_status_t st = eddy_ir_infer_error(
          ic, "input #%zu has type %s, which cannot merge with %s", i,
          eddy_tt(&tt, u), eddy_tt(&tt, t));
      eddy_tt_free(&tt);
      return st;
    }
    t = g;
  }
  eddy_ir_infer_push(ic, t);
  eddy_ir_infer_push(ic, eddy_ir_scalar_type_get(ic->ctx, EDDY_DT_I32));
  return NULL;
}

static eddy_status_t infer_control(eddy_infer_ctx_t *ic) {
  eddy_ir_infer_push(ic, eddy_ir_token_type_get(ic->ctx));
  return NULL;
}

/// ---- Verifiers ----

static eddy_status_t expect_pred(const eddy_op_t *op, uint32_t i,
                                 const char *what) {
  const eddy_type_t *t = op->operands[i].value->type;
  if (eddy_dialects_is_pred_type(t))
    return NULL;
  eddy_tt_t tt = {0};
  eddy_status_t st = eddy_ir_op_error(op, "%s must be tensor<i1>, found %s",
                                      what, eddy_tt(&tt, t));
  eddy_tt_free(&tt);
  return st;
}

static eddy_status_t verify_switch(const eddy_op_t *op) {
  return expect_pred(op, 1, "predicate (operand #1)");
}

/// df.switch_n(data, index): one result per output, each of the data's
/// type; the index an i32 scalar.
static eddy_status_t verify_switch_n(const eddy_op_t *op) {
  const eddy_type_t *idx = op->operands[1].value->type;
  if (idx->kind != EDDY_TYPE_TENSOR || idx->dtype != EDDY_DT_I32 ||
      (idx->rank != 0 && idx->rank != EDDY_RANK_UNKNOWN)) {
    eddy_tt_t tt = {0};
    eddy_status_t st =
        eddy_ir_op_error(op, "index (operand #1) must be tensor<i32>, found %s",
                         eddy_tt(&tt, idx));
    eddy_tt_free(&tt);
    return st;
  }
  if (op->num_results == 0)
    return eddy_ir_op_error(op, "needs at least one result");
  const eddy_type_t *data = op->operands[0].value->type;
  for (uint32_t i = 0; i < op->num_results; i++)
    if (!eddy_ir_type_is_compatible(op->results[i].type, data)) {
      eddy_tt_t tt = {0};
      eddy_status_t st = eddy_ir_op_error(
          op, "result #%u has type %s, incompatible with the data's type %s", i,
          eddy_tt(&tt, op->results[i].type), eddy_tt(&tt, data));
      eddy_tt_free(&tt);
      return st;
    }
  return NULL;
}

static eddy_status_t verify_loop_cond(const eddy_op_t *op) {
  return expect_pred(op, 0, "operand");
}

/// Whether `def` comes before `op` in their common block. Searches both
/// ways at once and stops when either way reaches the end of the block
/// (def is then the other way), so the cost is the distance between them
/// or to the nearer end, whichever is less: a merge and its entry value are
/// near, and the merges of deeply nested conds, far from their switches,
/// are near the end.
static bool comes_before(const eddy_op_t *def, const eddy_op_t *op) {
  const eddy_op_t *back = op->prev, *fwd = op->next;
  for (;;) {
    if (back == def || !fwd)
      return true;
    if (fwd == def || !back)
      return false;
    back = back->prev;
    fwd = fwd->next;
  }
}

static eddy_status_t verify_merge(const eddy_op_t *op) {
  const eddy_type_t *out = op->results[0].type;
  for (uint32_t i = 0; i < op->num_operands; i++) {
    const eddy_value_t *v = op->operands[i].value;
    if (!eddy_ir_type_is_compatible(v->type, out)) {
      eddy_tt_t tt = {0};
      eddy_status_t st = eddy_ir_op_error(
          op, "input #%u has type %s, incompatible with the output type %s", i,
          eddy_tt(&tt, v->type), eddy_tt(&tt, out));
      eddy_tt_free(&tt);
      return st;
    }
    EDDY_RETURN_IF_ERROR(
        eddy_dialects_verify_merge_input(op, i, "df.next_iteration", true));
  }
  return NULL;
}

eddy_status_t eddy_dialects_verify_merge_input(const eddy_op_t *merge,
                                               uint32_t i,
                                               const char *next_iteration,
                                               bool own_result_apart) {
  // The generic verifier let operands defined later in this block through
  // (BACKEDGE); only a next_iteration may close such a cycle.
  const eddy_op_t *d = merge->operands[i].value->def;
  if (!d || d->block != merge->block || eddy_ir_op_is(d, next_iteration))
    return NULL;
  if (d == merge && own_result_apart)
    return eddy_ir_op_error(merge,
                            "input #%u is this op's own result; only a '%s' "
                            "result may form a cycle",
                            i, next_iteration);
  if (d == merge || !comes_before(d, merge))
    return eddy_ir_op_error(merge,
                            "input #%u is defined after this op by '%s'; only "
                            "a '%s' result may flow back to a '%s'",
                            i, d->name->str, next_iteration, merge->name->str);
  return NULL;
}

static eddy_status_t verify_enter(const eddy_op_t *op) {
  const eddy_attr_t *f = eddy_ir_op_attr(op, "frame_name");
  if (f->u.str.len == 0)
    return eddy_ir_op_error(op, "frame_name must not be empty");
  const eddy_attr_t *pi = eddy_ir_op_attr(op, "parallel_iterations");
  if (pi && pi->u.i <= 0)
    return eddy_ir_op_error(op,
                            "parallel_iterations must be positive, found "
                            "%lld",
                            (long long)pi->u.i);
  return NULL;
}

static eddy_status_t verify_after(const eddy_op_t *op) {
  for (uint32_t i = 1; i < op->num_operands; i++) {
    const eddy_type_t *t = op->operands[i].value->type;
    if (t->kind != EDDY_TYPE_TOKEN) {
      eddy_tt_t tt = {0};
      eddy_status_t st = eddy_ir_op_error(
          op, "operand #%u must be a !df.token, found %s", i, eddy_tt(&tt, t));
      eddy_tt_free(&tt);
      return st;
    }
  }
  return NULL;
}

static const eddy_attr_spec_t enter_attrs[] = {
    {"frame_name", EDDY_ATTR_STRING, false},
    {"is_constant", EDDY_ATTR_BOOL, true},
    {"parallel_iterations", EDDY_ATTR_INT, true},
    // The swap_memory of the ctl.while it came from (a hint; kept so that
    // functionalize can give it back).
    {"swap_memory", EDDY_ATTR_BOOL, true},
    {NULL, EDDY_ATTR_INT, false},
};

/// df.send / df.recv (lower/partition): the two ends of a graph edge cut
/// between ranks. `key` numbers the edge (one per value and receiving
/// rank); at run time the interpreter adds the frame and iteration tag.
static const eddy_attr_spec_t send_attrs[] = {
    {"key", EDDY_ATTR_INT, false},
    {"to", EDDY_ATTR_INT, false},
    {NULL, EDDY_ATTR_INT, false},
};

static const eddy_attr_spec_t recv_attrs[] = {
    {"key", EDDY_ATTR_INT, false},
    {"from", EDDY_ATTR_INT, false},
    {NULL, EDDY_ATTR_INT, false},
};

/// Operands after the first (send) or all of them (recv) are !df.token:
/// control inputs that give the op its frame and iteration.
static eddy_status_t verify_tokens_from(const eddy_op_t *op, uint32_t first) {
  for (uint32_t i = first; i < op->num_operands; i++) {
    const eddy_type_t *t = op->operands[i].value->type;
    if (t->kind != EDDY_TYPE_TOKEN) {
      eddy_tt_t tt = {0};
      eddy_status_t st = eddy_ir_op_error(
          op, "operand #%u must be a !df.token, found %s", i, eddy_tt(&tt, t));
      eddy_tt_free(&tt);
      return st;
    }
  }
  return NULL;
}

static eddy_status_t verify_send(const eddy_op_t *op) {
  if (eddy_ir_op_attr_int(op, "to", -1) < 0)
    return eddy_ir_op_error(op, "'to' must be a rank >= 0");
  return verify_tokens_from(op, 1);
}

static eddy_status_t verify_recv(const eddy_op_t *op) {
  if (eddy_ir_op_attr_int(op, "from", -1) < 0)
    return eddy_ir_op_error(op, "'from' must be a rank >= 0");
  return verify_tokens_from(op, 0);
}

static const eddy_op_def_t df_ops[] = {
    {
        .name = "df.switch",
        .num_operands = 2,
        .num_results = 2,
        .verify = verify_switch,
        .infer = infer_switch,
    },
    {
        .name = "df.switch_n",
        .num_operands = 2,
        .num_results = EDDY_VARIADIC,
        .verify = verify_switch_n,
    },
    {
        .name = "df.merge",
        .num_operands = EDDY_VARIADIC,
        .min_operands = 1,
        .num_results = 2,
        .traits = EDDY_TRAIT_BACKEDGE,
        .verify = verify_merge,
        .infer = infer_merge,
    },
    {
        .name = "df.enter",
        .num_operands = 1,
        .num_results = 1,
        .attrs = enter_attrs,
        .verify = verify_enter,
        .infer = infer_same,
    },
    {
        .name = "df.exit",
        .num_operands = 1,
        .num_results = 1,
        .infer = infer_same,
    },
    {
        .name = "df.next_iteration",
        .num_operands = 1,
        .num_results = 1,
        .infer = infer_same,
    },
    {
        .name = "df.loop_cond",
        .num_operands = 1,
        .num_results = 1,
        .verify = verify_loop_cond,
        .infer = infer_same,
    },
    {
        .name = "df.control",
        .num_operands = EDDY_VARIADIC,
        .min_operands = 0,
        .num_results = 1,
        .infer = infer_control,
    },
    {
        .name = "df.after",
        .num_operands = EDDY_VARIADIC,
        .min_operands = 1,
        .num_results = 1,
        .verify = verify_after,
        .infer = infer_same,
    },
    {
        .name = "df.send",
        .num_operands = EDDY_VARIADIC,
        .min_operands = 1,
        .num_results = 0,
        .attrs = send_attrs,
        .verify = verify_send,
    },
    {
        .name = "df.recv",
        .num_operands = EDDY_VARIADIC,
        .min_operands = 0,
        .num_results = 1,
        .attrs = recv_attrs,
        .verify = verify_recv,
    },
};

const eddy_dialect_t eddy_df_dialect = {
    .name = "df",
    .ops = df_ops,
    .num_ops = sizeof(df_ops) / sizeof(df_ops[0]),
    .allow_unknown_ops = false,
};

/// ---- Builders ----

eddy_status_t eddy_df_build_enter(eddy_builder_t *b, eddy_value_t *data,
                                  const eddy_df_enter_attrs_t *attrs,
                                  eddy_value_t **out_value) {
  eddy_ctx_t *ctx = b->ctx;
  const char *name = attrs->frame_name ? attrs->frame_name : "";
  eddy_named_attr_t na[3] = {
      eddy_ir_named_attr(ctx, "frame_name",
                         eddy_ir_string_attr_get(ctx, name, strlen(name))),
      eddy_ir_named_attr(ctx, "is_constant",
                         eddy_ir_bool_attr_get(ctx, attrs->is_constant)),
      eddy_ir_named_attr(ctx, "parallel_iterations",
                         eddy_ir_int_attr_get(ctx,
                                              attrs->parallel_iterations > 0
                                                  ? attrs->parallel_iterations
                                                  : 10,
                                              EDDY_DT_I64)),
  };
  eddy_value_t *ops[1] = {data};
  return eddy_ir_build_simple(b, "df.enter", ops, 1, na, 3, out_value);
}

eddy_status_t eddy_df_build_merge(eddy_builder_t *b,
                                  eddy_value_t *const *inputs, size_t n,
                                  eddy_op_t **out_op) {
  eddy_op_state_t st = {
      .name = "df.merge",
      .operands = inputs,
      .num_operands = n,
  };
  return eddy_ir_build(b, &st, out_op);
}

/// The ctl dialect: ctl.while, ctl.if, ctl.call, ctl.yield, ctl.condition.
///
/// None of these ops is PURE: their regions (or callees) may hold ops with
/// effects, so passes that move or drop ops look into them explicitly.
#include "dialects/ctl/ctl.h"
#include "dialects/dialects.h"

#include "dialects/dialects_internal.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

static eddy_block_t *region_block(const eddy_op_t *op, uint32_t r) {
  if (r >= op->num_regions)
    return NULL;
  return eddy_ir_region_entry(&op->regions[r]);
}

/// The terminator of block b when it is an op named `name`, else an error
/// at op naming the region and what was found.
static eddy_status_t expect_terminator(const eddy_op_t *op, const char *region,
                                       const eddy_block_t *b, const char *name,
                                       const eddy_op_t **out_term) {
  const eddy_op_t *t = b ? eddy_ir_block_terminator(b) : NULL;
  if (!t || !eddy_ir_op_is(t, name))
    return eddy_ir_op_error(op, "%s region must end with '%s', found %s%s%s",
                            region, name, t ? "'" : "",
                            t ? t->name->str : "an empty block", t ? "'" : "");
  *out_term = t;
  return NULL;
}

/// Checks that the values yielded by `term` match the op's result types.
static eddy_status_t check_yield_types(const eddy_op_t *op, const char *region,
                                       const eddy_op_t *term) {
  if (term->num_operands != op->num_results)
    return eddy_ir_op_error(op, "%s region yields %u value%s, expected %u",
                            region, term->num_operands,
                            term->num_operands == 1 ? "" : "s",
                            op->num_results);
  for (uint32_t i = 0; i < op->num_results; i++) {
    const eddy_type_t *y = term->operands[i].value->type;
    const eddy_type_t *r = op->results[i].type;
    if (!eddy_ir_type_is_compatible(y, r)) {
      eddy_tt_t tt = {0};
      eddy_status_t st = eddy_ir_op_error(
          op,
          "%s region yields value #%u of type %s, incompatible with "
          "result type %s",
          region, i, eddy_tt(&tt, y), eddy_tt(&tt, r));
      eddy_tt_free(&tt);
      return st;
    }
  }
  return NULL;
}

/// Loop regions carry the loop values as block arguments of exactly the
/// result types.
static eddy_status_t check_loop_args(const eddy_op_t *op, const char *region,
                                     const eddy_block_t *b) {
  if (b->num_args != op->num_results)
    return eddy_ir_op_error(op,
                            "%s region has %u block argument%s, expected "
                            "%u (one per loop value)",
                            region, b->num_args, b->num_args == 1 ? "" : "s",
                            op->num_results);
  for (uint32_t i = 0; i < b->num_args; i++) {
    const eddy_type_t *a = b->args[i]->type;
    const eddy_type_t *r = op->results[i].type;
    if (a != r) {
      eddy_tt_t tt = {0};
      eddy_status_t st = eddy_ir_op_error(
          op,
          "%s region argument #%u has type %s, expected the result "
          "type %s",
          region, i, eddy_tt(&tt, a), eddy_tt(&tt, r));
      eddy_tt_free(&tt);
      return st;
    }
  }
  return NULL;
}

static eddy_status_t verify_while(const eddy_op_t *op) {
  if (op->num_operands != op->num_results)
    return eddy_ir_op_error(op,
                            "has %u init value%s but %u result%s; they "
                            "must correspond one to one",
                            op->num_operands, op->num_operands == 1 ? "" : "s",
                            op->num_results, op->num_results == 1 ? "" : "s");
  for (uint32_t i = 0; i < op->num_operands; i++) {
    const eddy_type_t *in = op->operands[i].value->type;
    const eddy_type_t *r = op->results[i].type;
    if (!eddy_ir_type_is_compatible(in, r)) {
      eddy_tt_t tt = {0};
      eddy_status_t st = eddy_ir_op_error(
          op, "init value #%u has type %s, incompatible with result type %s", i,
          eddy_tt(&tt, in), eddy_tt(&tt, r));
      eddy_tt_free(&tt);
      return st;
    }
  }
  const eddy_block_t *cond = region_block(op, 0);
  const eddy_block_t *body = region_block(op, 1);
  EDDY_RETURN_IF_ERROR(check_loop_args(op, "cond", cond));
  EDDY_RETURN_IF_ERROR(check_loop_args(op, "body", body));
  const eddy_op_t *term = NULL;
  EDDY_RETURN_IF_ERROR(
      expect_terminator(op, "cond", cond, "ctl.condition", &term));
  EDDY_RETURN_IF_ERROR(expect_terminator(op, "body", body, "ctl.yield", &term));
  EDDY_RETURN_IF_ERROR(check_yield_types(op, "body", term));
  const eddy_attr_t *pi = eddy_ir_op_attr(op, "parallel_iterations");
  if (pi && pi->u.i <= 0)
    return eddy_ir_op_error(op,
                            "parallel_iterations must be positive, found "
                            "%lld",
                            (long long)pi->u.i);
  const eddy_attr_t *mi = eddy_ir_op_attr(op, "maximum_iterations");
  if (mi && mi->u.i < 0)
    return eddy_ir_op_error(op,
                            "maximum_iterations must be non-negative, "
                            "found %lld",
                            (long long)mi->u.i);
  return NULL;
}

static eddy_status_t verify_if(const eddy_op_t *op) {
  const eddy_type_t *p = op->operands[0].value->type;
  if (!eddy_dialects_is_pred_type(p)) {
    eddy_tt_t tt = {0};
    eddy_status_t st = eddy_ir_op_error(
        op, "predicate must be tensor<i1>, found %s", eddy_tt(&tt, p));
    eddy_tt_free(&tt);
    return st;
  }
  static const char *const names[2] = {"then", "else"};
  for (uint32_t r = 0; r < 2; r++) {
    const eddy_block_t *b = region_block(op, r);
    if (b->num_args != 0)
      return eddy_ir_op_error(op,
                              "%s region must have no block arguments, "
                              "found %u",
                              names[r], b->num_args);
    const eddy_op_t *term = NULL;
    EDDY_RETURN_IF_ERROR(
        expect_terminator(op, names[r], b, "ctl.yield", &term));
    EDDY_RETURN_IF_ERROR(check_yield_types(op, names[r], term));
  }
  return NULL;
}

static eddy_status_t verify_yield(const eddy_op_t *op) {
  const eddy_op_t *parent = eddy_ir_op_parent_op(op);
  if (!parent ||
      (!eddy_ir_op_is(parent, "ctl.while") && !eddy_ir_op_is(parent, "ctl.if")))
    return eddy_ir_op_error(op,
                            "must be the terminator of a 'ctl.while' "
                            "body or a 'ctl.if' branch, found it in %s%s%s",
                            parent ? "'" : "",
                            parent ? parent->name->str : "no op",
                            parent ? "'" : "");
  return NULL;
}

static eddy_status_t verify_condition(const eddy_op_t *op) {
  const eddy_op_t *parent = eddy_ir_op_parent_op(op);
  if (!parent || !eddy_ir_op_is(parent, "ctl.while") ||
      op->block->region != &parent->regions[0])
    return eddy_ir_op_error(op, "must be the terminator of a 'ctl.while' "
                                "cond region");
  const eddy_type_t *p = op->operands[0].value->type;
  if (!eddy_dialects_is_pred_type(p)) {
    eddy_tt_t tt = {0};
    eddy_status_t st = eddy_ir_op_error(
        op, "operand must be tensor<i1>, found %s", eddy_tt(&tt, p));
    eddy_tt_free(&tt);
    return st;
  }
  return NULL;
}

static const eddy_op_t *enclosing_module(const eddy_op_t *op) {
  for (const eddy_op_t *a = eddy_ir_op_parent_op(op); a;
       a = eddy_ir_op_parent_op(a))
    if (eddy_ir_op_is(a, "builtin.module"))
      return a;
  return NULL;
}

const char *eddy_ctl_call_callee(const eddy_op_t *op) {
  const eddy_attr_t *a = eddy_ir_op_attr(op, "callee");
  return a && a->kind == EDDY_ATTR_SYMBOL ? a->u.str.data : NULL;
}

eddy_op_t *eddy_ctl_call_resolve(const eddy_op_t *op) {
  const char *name = eddy_ctl_call_callee(op);
  const eddy_op_t *mod = enclosing_module(op);
  if (!name || !mod)
    return NULL;
  eddy_module_t m = {.ctx = op->ctx, .op = (eddy_op_t *)mod};
  return eddy_ir_module_lookup_func(&m, name);
}

static eddy_status_t check_call_types(const eddy_op_t *op, const char *what,
                                      const eddy_type_t *const *want,
                                      uint32_t n_want, uint32_t n_have,
                                      bool operands) {
  if (n_have != n_want)
    return eddy_ir_op_error(op, "has %u %s%s, but @%s takes %u", n_have, what,
                            n_have == 1 ? "" : "s", eddy_ctl_call_callee(op),
                            n_want);
  for (uint32_t i = 0; i < n_want; i++) {
    const eddy_type_t *have =
        operands ? op->operands[i].value->type : op->results[i].type;
    if (!eddy_ir_type_is_compatible(have, want[i])) {
      eddy_tt_t tt = {0};
      eddy_status_t st = eddy_ir_op_error(
          op, "%s #%u has type %s, incompatible with %s of @%s", what, i,
          eddy_tt(&tt, have), eddy_tt(&tt, want[i]), eddy_ctl_call_callee(op));
      eddy_tt_free(&tt);
      return st;
    }
  }
  return NULL;
}

static eddy_status_t verify_call(const eddy_op_t *op) {
  const char *name = eddy_ctl_call_callee(op);
  if (!enclosing_module(op))
    return eddy_ir_op_error(op,
                            "is not inside a module, so @%s cannot be "
                            "resolved",
                            name);
  const eddy_op_t *f = eddy_ctl_call_resolve(op);
  if (!f)
    return eddy_ir_op_error(op,
                            "calls @%s, which is not a function of the "
                            "module",
                            name);
  const eddy_type_t *fty = eddy_ir_func_type(f);
  if (!fty || fty->kind != EDDY_TYPE_FUNC)
    return eddy_ir_op_error(op, "calls @%s, which has no function type", name);
  EDDY_RETURN_IF_ERROR(check_call_types(
      op, "argument", fty->inputs, fty->num_inputs, op->num_operands, true));
  return check_call_types(op, "result", fty->outputs, fty->num_outputs,
                          op->num_results, false);
}

static const eddy_attr_spec_t while_attrs[] = {
    {"maximum_iterations", EDDY_ATTR_INT, true},
    {"parallel_iterations", EDDY_ATTR_INT, true},
    {"swap_memory", EDDY_ATTR_BOOL, true},
    {NULL, EDDY_ATTR_INT, false},
};

static const eddy_attr_spec_t call_attrs[] = {
    {"callee", EDDY_ATTR_SYMBOL, false},
    {NULL, EDDY_ATTR_INT, false},
};

static const eddy_op_def_t ctl_ops[] = {
    {
        .name = "ctl.while",
        .opcode = EDDY_OP_CTL_WHILE,
        .num_operands = EDDY_VARIADIC,
        .min_operands = 0,
        .num_results = EDDY_VARIADIC,
        .num_regions = 2,
        .traits = EDDY_TRAIT_SINGLE_BLOCK,
        .attrs = while_attrs,
        .verify = verify_while,
    },
    {
        .name = "ctl.if",
        .opcode = EDDY_OP_CTL_IF,
        .num_operands = 1,
        .num_results = EDDY_VARIADIC,
        .num_regions = 2,
        .traits = EDDY_TRAIT_SINGLE_BLOCK,
        .verify = verify_if,
    },
    {
        .name = "ctl.call",
        .opcode = EDDY_OP_CTL_CALL,
        .num_operands = EDDY_VARIADIC,
        .min_operands = 0,
        .num_results = EDDY_VARIADIC,
        .num_regions = 0,
        .attrs = call_attrs,
        .verify = verify_call,
    },
    {
        .name = "ctl.yield",
        .opcode = EDDY_OP_CTL_YIELD,
        .num_operands = EDDY_VARIADIC,
        .min_operands = 0,
        .num_results = 0,
        .num_regions = 0,
        .traits = EDDY_TRAIT_TERMINATOR,
        .verify = verify_yield,
    },
    {
        .name = "ctl.condition",
        .opcode = EDDY_OP_CTL_CONDITION,
        .num_operands = 1,
        .num_results = 0,
        .num_regions = 0,
        .traits = EDDY_TRAIT_TERMINATOR,
        .verify = verify_condition,
    },
};

const eddy_dialect_t eddy_ctl_dialect = {
    .name = "ctl",
    .ops = ctl_ops,
    .num_ops = sizeof(ctl_ops) / sizeof(ctl_ops[0]),
    .allow_unknown_ops = false,
};

/// ---- Builders ----

eddy_status_t eddy_ctl_build_while(eddy_builder_t *b,
                                   eddy_value_t *const *inits, size_t n,
                                   eddy_op_t **out_op) {
  const eddy_type_t **types = malloc((n ? n : 1) * sizeof(*types));
  if (!types)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  for (size_t i = 0; i < n; i++)
    types[i] = inits[i]->type;
  eddy_op_state_t st = {
      .name = "ctl.while",
      .operands = inits,
      .num_operands = n,
      .result_types = types,
      .num_results = n,
      .num_regions = 2,
  };
  eddy_op_t *op = NULL;
  eddy_status_t s = eddy_ir_build(b, &st, &op);
  if (!s) {
    for (uint32_t r = 0; r < 2; r++) {
      eddy_block_t *blk = eddy_ir_region_add_block(&op->regions[r]);
      for (size_t i = 0; i < n; i++)
        eddy_ir_block_add_arg(blk, types[i]);
    }
    *out_op = op;
  }
  free(types);
  return s;
}

eddy_status_t eddy_ctl_build_if(eddy_builder_t *b, eddy_value_t *pred,
                                const eddy_type_t *const *result_types,
                                size_t num_results, eddy_op_t **out_op) {
  eddy_value_t *ops[1] = {pred};
  eddy_op_state_t st = {
      .name = "ctl.if",
      .operands = ops,
      .num_operands = 1,
      .result_types = result_types,
      .num_results = num_results,
      .num_regions = 2,
  };
  // A NULL result_types would ask for inference, which ctl.if has none of.
  static const eddy_type_t *const no_types[1] = {NULL};
  if (num_results == 0)
    st.result_types = no_types;
  eddy_op_t *op = NULL;
  EDDY_RETURN_IF_ERROR(eddy_ir_build(b, &st, &op));
  eddy_ir_region_add_block(&op->regions[0]);
  eddy_ir_region_add_block(&op->regions[1]);
  *out_op = op;
  return NULL;
}

static eddy_status_t build_terminator(eddy_builder_t *b, const char *name,
                                      eddy_value_t *const *values, size_t n,
                                      eddy_op_t **out_op) {
  static const eddy_type_t *const no_types[1] = {NULL};
  eddy_op_state_t st = {
      .name = name,
      .operands = values,
      .num_operands = n,
      .result_types = no_types,
      .num_results = 0,
  };
  eddy_op_t *op = NULL;
  EDDY_RETURN_IF_ERROR(eddy_ir_build(b, &st, &op));
  if (out_op)
    *out_op = op;
  return NULL;
}

eddy_status_t eddy_ctl_build_yield(eddy_builder_t *b,
                                   eddy_value_t *const *values, size_t n,
                                   eddy_op_t **out_op) {
  return build_terminator(b, "ctl.yield", values, n, out_op);
}

eddy_status_t eddy_ctl_build_condition(eddy_builder_t *b, eddy_value_t *pred,
                                       eddy_op_t **out_op) {
  eddy_value_t *ops[1] = {pred};
  return build_terminator(b, "ctl.condition", ops, 1, out_op);
}

eddy_status_t eddy_ctl_build_call(eddy_builder_t *b, const eddy_op_t *callee,
                                  eddy_value_t *const *args, size_t n,
                                  eddy_op_t **out_op) {
  const eddy_type_t *fty = eddy_ir_func_type(callee);
  const char *name = eddy_ir_func_name(callee);
  if (!fty || !name)
    return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                              "ctl.call: callee is not a func.func");
  eddy_named_attr_t attr = eddy_ir_named_attr(
      b->ctx, "callee", eddy_ir_symbol_attr_get(b->ctx, name, strlen(name)));
  static const eddy_type_t *const no_types[1] = {NULL};
  eddy_op_state_t st = {
      .name = "ctl.call",
      .operands = args,
      .num_operands = n,
      .attrs = &attr,
      .num_attrs = 1,
      .result_types = fty->num_outputs ? fty->outputs : no_types,
      .num_results = fty->num_outputs,
  };
  return eddy_ir_build(b, &st, out_op);
}

/// ---- Accessors ----

eddy_block_t *eddy_ctl_while_cond(const eddy_op_t *op) {
  assert(eddy_ir_op_is(op, "ctl.while"));
  return region_block(op, 0);
}

eddy_block_t *eddy_ctl_while_body(const eddy_op_t *op) {
  assert(eddy_ir_op_is(op, "ctl.while"));
  return region_block(op, 1);
}

eddy_block_t *eddy_ctl_if_then(const eddy_op_t *op) {
  assert(eddy_ir_op_is(op, "ctl.if"));
  return region_block(op, 0);
}

eddy_block_t *eddy_ctl_if_else(const eddy_op_t *op) {
  assert(eddy_ir_op_is(op, "ctl.if"));
  return region_block(op, 1);
}

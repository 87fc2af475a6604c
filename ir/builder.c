/// The builder: creates ops at an insertion point.
#include "ir/ir_internal.h"

#include <assert.h>
#include <string.h>

void eddy_ir_builder_init(eddy_builder_t *b, eddy_ctx_t *ctx) {
  memset(b, 0, sizeof(*b));
  b->ctx = ctx;
}

void eddy_ir_builder_set_end(eddy_builder_t *b, eddy_block_t *block) {
  b->block = block;
  b->before = NULL;
}

void eddy_ir_builder_set_before(eddy_builder_t *b, eddy_op_t *op) {
  assert(op->block);
  b->block = op->block;
  b->before = op;
}

void eddy_ir_builder_set_after(eddy_builder_t *b, eddy_op_t *op) {
  assert(op->block);
  /* Inserting before op's current successor keeps later builds in order. */
  b->block = op->block;
  b->before = op->next;
}

eddy_status_t eddy_ir_build(eddy_builder_t *b, const eddy_op_state_t *st,
                            eddy_op_t **out_op) {
  eddy_op_state_t s = *st;
  if (!s.loc)
    s.loc = b->loc;
  eddy_op_t *op;
  *out_op = NULL;
  EDDY_RETURN_IF_ERROR(eddy_ir_op_create(b->ctx, &s, &op));
  if (b->before)
    eddy_ir_op_insert_before(op, b->before);
  else if (b->block)
    eddy_ir_op_append(op, b->block);
  *out_op = op;
  return NULL;
}

eddy_status_t eddy_ir_build_simple(eddy_builder_t *b, const char *name,
                                   eddy_value_t *const *operands,
                                   size_t num_operands,
                                   const eddy_named_attr_t *attrs,
                                   size_t num_attrs, eddy_value_t **out_value) {
  eddy_op_state_t st = {0};
  st.name = name;
  st.operands = operands;
  st.num_operands = num_operands;
  st.attrs = attrs;
  st.num_attrs = num_attrs;
  eddy_op_t *op = NULL;
  // *out_value is written only once the op is built: it may alias an
  // operand (x = f(x)).
  eddy_status_t s = eddy_ir_build(b, &st, &op);
  if (out_value)
    *out_value = !s && op->num_results ? &op->results[0] : NULL;
  return s;
}

eddy_status_t eddy_ir_build_constant(eddy_builder_t *b,
                                     const eddy_attr_t *value,
                                     eddy_value_t **out_value) {
  *out_value = NULL;
  if (!value || value->kind != EDDY_ATTR_DENSE)
    return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                              "a constant needs a dense attribute");
  static const char name[] = "core.constant";
  if (!eddy_ir_ctx_lookup_op(b->ctx, name, sizeof(name) - 1))
    return eddy_status_create(EDDY_ERR_NOT_FOUND,
                              "unknown op '%s' (is the core dialect "
                              "registered?)",
                              name);
  eddy_named_attr_t attr = eddy_ir_named_attr(b->ctx, "value", value);
  const eddy_type_t *type = value->type;
  eddy_op_state_t st = {0};
  st.name = name;
  st.attrs = &attr;
  st.num_attrs = 1;
  st.result_types = &type;
  st.num_results = 1;
  eddy_op_t *op;
  EDDY_RETURN_IF_ERROR(eddy_ir_build(b, &st, &op));
  *out_value = &op->results[0];
  return NULL;
}

eddy_named_attr_t eddy_ir_named_attr(eddy_ctx_t *ctx, const char *name,
                                     const eddy_attr_t *value) {
  eddy_named_attr_t a;
  a.name = eddy_ir_ident_cstr(ctx, name);
  a.value = value;
  return a;
}

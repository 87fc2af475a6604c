/// The builtin dialect (builtin.module) and the func dialect (func.func,
/// func.return), registered by every context, and the module / function
/// helpers of ir.h.
#include "ir/ir_internal.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Op definitions ------------------------------------------------------- */

/// The FUNC type of a func.func, or NULL when its attribute is missing or
/// malformed (the generic verifier reports that).
static const eddy_type_t *eddy_func_type_of(const eddy_op_t *func) {
  const eddy_attr_t *a = eddy_ir_op_attr(func, "function_type");
  if (!a || a->kind != EDDY_ATTR_TYPE || a->type->kind != EDDY_TYPE_FUNC)
    return NULL;
  return a->type;
}

/// arg_names / result_names, when present: one non-empty string per input
/// or result, none containing a NUL or a quote (they are printed inside
/// quotes in messages and generated headers).
static eddy_status_t eddy_func_verify_names(const eddy_op_t *op,
                                            const char *attr, uint32_t n,
                                            const char *what) {
  const eddy_attr_t *a = eddy_ir_op_attr(op, attr);
  if (!a)
    return NULL;
  if (a->kind != EDDY_ATTR_ARRAY || a->u.array.len != n)
    return eddy_ir_op_error(op,
                            "'%s' must be an array of %u strings, one per "
                            "%s",
                            attr, (unsigned)n, what);
  for (size_t i = 0; i < n; i++) {
    const eddy_attr_t *e = a->u.array.elems[i];
    if (e->kind != EDDY_ATTR_STRING || e->u.str.len == 0 ||
        memchr(e->u.str.data, '\0', e->u.str.len) ||
        memchr(e->u.str.data, '\'', e->u.str.len) ||
        memchr(e->u.str.data, '"', e->u.str.len) ||
        memchr(e->u.str.data, '\n', e->u.str.len))
      return eddy_ir_op_error(op,
                              "'%s' element %zu must be a non-empty string "
                              "without quotes, newlines or NULs",
                              attr, i);
  }
  return NULL;
}

static eddy_status_t eddy_func_verify(const eddy_op_t *op) {
  const eddy_type_t *fty = eddy_func_type_of(op);
  if (!fty)
    return eddy_ir_op_error(op, "requires a 'function_type' attribute of "
                                "function type");
  const eddy_attr_t *name = eddy_ir_op_attr(op, "sym_name");
  if (!name || name->kind != EDDY_ATTR_STRING)
    return eddy_ir_op_error(op, "requires a 'sym_name' string attribute");
  if (op->num_regions != 1 || !op->regions[0].first)
    return eddy_ir_op_error(op, "requires a body with an entry block");
  const eddy_block_t *entry = op->regions[0].first;
  if (entry->num_args != fty->num_inputs)
    return eddy_ir_op_error(op,
                            "entry block has %u arguments but the function "
                            "type has %u inputs",
                            (unsigned)entry->num_args,
                            (unsigned)fty->num_inputs);
  for (uint32_t i = 0; i < entry->num_args; i++)
    if (entry->args[i]->type != fty->inputs[i]) {
      eddy_buf_t want, got;
      eddy_buf_init(&want);
      eddy_buf_init(&got);
      eddy_ir_type_print(fty->inputs[i], &want);
      eddy_ir_type_print(entry->args[i]->type, &got);
      eddy_status_t st = eddy_ir_op_error(
          op, "entry block argument %u has type %s but the function type "
              "says %s",
          (unsigned)i, got.data, want.data);
      eddy_buf_destroy(&want);
      eddy_buf_destroy(&got);
      return st;
    }
  const eddy_op_t *term = eddy_ir_block_terminator(entry);
  if (!term || !eddy_ir_op_is(term, "func.return"))
    return eddy_ir_op_error(op, "body must end in 'func.return'");
  EDDY_RETURN_IF_ERROR(eddy_func_verify_names(op, "arg_names", fty->num_inputs,
                                              "input"));
  return eddy_func_verify_names(op, "result_names", fty->num_outputs,
                                "result");
}

static eddy_status_t eddy_return_verify(const eddy_op_t *op) {
  const eddy_op_t *func = eddy_ir_op_parent_op(op);
  if (!func || !eddy_ir_op_is(func, "func.func"))
    return eddy_ir_op_error(op, "expects parent op 'func.func'");
  const eddy_type_t *fty = eddy_func_type_of(func);
  if (!fty)
    return NULL; /* reported on the func */
  if (op->num_operands != fty->num_outputs)
    return eddy_ir_op_error(op,
                            "has %u operands but the function returns %u "
                            "values",
                            (unsigned)op->num_operands,
                            (unsigned)fty->num_outputs);
  for (uint32_t i = 0; i < op->num_operands; i++) {
    const eddy_value_t *v = op->operands[i].value;
    if (v && !eddy_ir_type_is_compatible(v->type, fty->outputs[i])) {
      eddy_buf_t want, got;
      eddy_buf_init(&want);
      eddy_buf_init(&got);
      eddy_ir_type_print(fty->outputs[i], &want);
      eddy_ir_type_print(v->type, &got);
      eddy_status_t st = eddy_ir_op_error(
          op, "operand %u has type %s, incompatible with the function "
              "result type %s",
          (unsigned)i, got.data, want.data);
      eddy_buf_destroy(&want);
      eddy_buf_destroy(&got);
      return st;
    }
  }
  return NULL;
}

static const eddy_attr_spec_t eddy_module_attrs[] = {{NULL, 0, false}};

static const eddy_attr_spec_t eddy_func_attrs[] = {
    {"arg_names", EDDY_ATTR_ARRAY, true},
    {"function_type", EDDY_ATTR_TYPE, false},
    {"result_names", EDDY_ATTR_ARRAY, true},
    {"sym_name", EDDY_ATTR_STRING, false},
    {NULL, 0, false},
};

static const eddy_op_def_t eddy_builtin_ops[] = {
    {
        .name = "builtin.module",
        .num_operands = 0,
        .num_results = 0,
        .num_regions = 1,
        .traits = EDDY_TRAIT_SINGLE_BLOCK,
        .attrs = eddy_module_attrs,
    },
};

static const eddy_op_def_t eddy_func_ops[] = {
    {
        .name = "func.func",
        .num_operands = 0,
        .num_results = 0,
        .num_regions = 1,
        .traits = EDDY_TRAIT_ISOLATED | EDDY_TRAIT_SINGLE_BLOCK,
        .attrs = eddy_func_attrs,
        .verify = eddy_func_verify,
    },
    {
        .name = "func.return",
        .num_operands = EDDY_VARIADIC,
        .min_operands = 0,
        .num_results = 0,
        .num_regions = 0,
        .traits = EDDY_TRAIT_TERMINATOR,
        .attrs = eddy_module_attrs,
        .verify = eddy_return_verify,
    },
};

static const eddy_dialect_t eddy_builtin_dialect = {
    .name = "builtin",
    .ops = eddy_builtin_ops,
    .num_ops = sizeof(eddy_builtin_ops) / sizeof(eddy_builtin_ops[0]),
};

static const eddy_dialect_t eddy_func_dialect = {
    .name = "func",
    .ops = eddy_func_ops,
    .num_ops = sizeof(eddy_func_ops) / sizeof(eddy_func_ops[0]),
};

void eddy_ir_builtin_register(eddy_ctx_t *ctx) {
  eddy_ir_ctx_register_dialect(ctx, &eddy_builtin_dialect);
  eddy_ir_ctx_register_dialect(ctx, &eddy_func_dialect);
}

/* ---- Modules -------------------------------------------------------------- */

eddy_module_t *eddy_ir_module_create(eddy_ctx_t *ctx, const eddy_loc_t *loc) {
  eddy_module_t *m = malloc(sizeof(*m));
  if (!m)
    return NULL;
  eddy_op_state_t st = {0};
  st.name = "builtin.module";
  st.num_regions = 1;
  st.loc = loc;
  eddy_op_t *op;
  eddy_status_t err = eddy_ir_op_create(ctx, &st, &op);
  /* builtin.module is always registered and needs no inference */
  assert(!err);
  (void)err;
  eddy_ir_region_add_block(&op->regions[0]);
  m->ctx = ctx;
  m->op = op;
  return m;
}

void eddy_ir_module_destroy(eddy_module_t *m) { free(m); }

eddy_block_t *eddy_ir_module_body(const eddy_module_t *m) {
  return m->op->regions[0].first;
}

eddy_op_t *eddy_ir_module_lookup_func(const eddy_module_t *m,
                                      const char *name) {
  eddy_block_t *body = eddy_ir_module_body(m);
  if (!body)
    return NULL;
  for (eddy_op_t *op = body->first; op; op = op->next) {
    if (!eddy_ir_op_is(op, "func.func"))
      continue;
    const eddy_attr_t *a = eddy_ir_op_attr(op, "sym_name");
    if (a && a->kind == EDDY_ATTR_STRING && strcmp(a->u.str.data, name) == 0 &&
        strlen(name) == a->u.str.len)
      return op;
  }
  return NULL;
}

/* ---- Functions ------------------------------------------------------------ */

eddy_status_t eddy_ir_func_create(eddy_module_t *m, const char *name,
                                  const eddy_type_t *const *inputs,
                                  size_t num_inputs,
                                  const eddy_type_t *const *outputs,
                                  size_t num_outputs, const eddy_loc_t *loc,
                                  eddy_op_t **out_func) {
  *out_func = NULL;
  if (eddy_ir_module_lookup_func(m, name))
    return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                              "function '@%s' is already defined", name);
  eddy_ctx_t *ctx = m->ctx;
  const eddy_type_t *fty =
      eddy_ir_func_type_get(ctx, inputs, num_inputs, outputs, num_outputs);
  eddy_named_attr_t attrs[2] = {
      eddy_ir_named_attr(ctx, "sym_name",
                         eddy_ir_string_attr_get(ctx, name, strlen(name))),
      eddy_ir_named_attr(ctx, "function_type", eddy_ir_type_attr_get(ctx, fty)),
  };
  eddy_op_state_t st = {0};
  st.name = "func.func";
  st.attrs = attrs;
  st.num_attrs = 2;
  st.num_regions = 1;
  st.loc = loc;
  eddy_op_t *func;
  EDDY_RETURN_IF_ERROR(eddy_ir_op_create(ctx, &st, &func));
  eddy_block_t *entry = eddy_ir_region_add_block(&func->regions[0]);
  for (size_t i = 0; i < num_inputs; i++)
    eddy_ir_block_add_arg(entry, inputs[i]);
  eddy_ir_op_append(func, eddy_ir_module_body(m));
  *out_func = func;
  return NULL;
}

const char *eddy_ir_func_name(const eddy_op_t *func) {
  const eddy_attr_t *a = eddy_ir_op_attr(func, "sym_name");
  return a && a->kind == EDDY_ATTR_STRING ? a->u.str.data : NULL;
}

const eddy_type_t *eddy_ir_func_type(const eddy_op_t *func) {
  return eddy_func_type_of(func);
}

void eddy_ir_func_set_type(eddy_op_t *func, const eddy_type_t *fty) {
  assert(fty && fty->kind == EDDY_TYPE_FUNC);
  eddy_ir_op_set_attr(func, "function_type",
                      eddy_ir_type_attr_get(func->ctx, fty));
}

eddy_block_t *eddy_ir_func_entry(const eddy_op_t *func) {
  return func->num_regions ? func->regions[0].first : NULL;
}

/// Name i of the func's arg_names / result_names attribute, or NULL.
static const char *eddy_func_name_at(const eddy_op_t *func, const char *attr,
                                     size_t i) {
  const eddy_attr_t *a = func ? eddy_ir_op_attr(func, attr) : NULL;
  if (!a || a->kind != EDDY_ATTR_ARRAY || i >= a->u.array.len)
    return NULL;
  const eddy_attr_t *e = a->u.array.elems[i];
  return e->kind == EDDY_ATTR_STRING ? e->u.str.data : NULL;
}

const char *eddy_ir_func_arg_name(const eddy_op_t *func, size_t i) {
  return eddy_func_name_at(func, "arg_names", i);
}

const char *eddy_ir_func_result_name(const eddy_op_t *func, size_t i) {
  return eddy_func_name_at(func, "result_names", i);
}

const char *eddy_ir_func_arg_label(const eddy_op_t *func, size_t i, char *buf,
                                   size_t size) {
  const char *n = eddy_ir_func_arg_name(func, i);
  if (n)
    return n;
  snprintf(buf, size, "arg%zu", i);
  return buf;
}

int64_t eddy_ir_func_arg_index(const eddy_op_t *func, const char *name,
                               size_t len) {
  const eddy_type_t *fty = eddy_ir_func_type(func);
  for (size_t i = 0; fty && i < fty->num_inputs; i++) {
    const char *an = eddy_ir_func_arg_name(func, i);
    if (an && strlen(an) == len && strncmp(an, name, len) == 0)
      return (int64_t)i;
  }
  if (len > 0 && name[0] == '%') {
    name++;
    len--;
  }
  if (len > 3 && strncmp(name, "arg", 3) == 0) {
    name += 3;
    len -= 3;
  }
  if (len == 0 || len > 9)
    return -1;
  int64_t v = 0;
  for (size_t i = 0; i < len; i++) {
    if (name[i] < '0' || name[i] > '9')
      return -1;
    v = v * 10 + (name[i] - '0');
  }
  return v;
}

void eddy_ir_func_set_names(eddy_op_t *func, const char *attr,
                            const char *const *names, size_t n) {
  eddy_ctx_t *ctx = func->ctx;
  const eddy_attr_t **elems = calloc(n + 1, sizeof *elems);
  if (!elems) {
    fprintf(stderr, "eddy: out of memory (function names)\n");
    abort();
  }
  for (size_t i = 0; i < n; i++)
    elems[i] = eddy_ir_string_attr_get(ctx, names[i], strlen(names[i]));
  eddy_ir_op_set_attr(func, attr, eddy_ir_array_attr_get(ctx, elems, n));
  free(elems);
}

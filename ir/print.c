/// The printer of the textual IR: MLIR's generic op syntax, plus the custom
/// form of func.func. The output is canonical (values renumbered, attributes
/// sorted, fixed spacing), so that print(parse(text)) == text for printed
/// text; docs/ir.md has the grammar.
#include "ir/lex.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* ---- Types ---------------------------------------------------------------- */

static void eddy_print_type_list(const eddy_type_t *const *types, size_t n,
                                 eddy_buf_t *out) {
  for (size_t i = 0; i < n; i++) {
    if (i)
      eddy_buf_puts(out, ", ");
    eddy_ir_type_print(types[i], out);
  }
}

/// Result types after "->": bare for one (unless it is itself a function
/// type, which would be ambiguous), parenthesized otherwise.
static void eddy_print_results(const eddy_type_t *const *types, size_t n,
                               eddy_buf_t *out) {
  if (n == 1 && types[0] && types[0]->kind != EDDY_TYPE_FUNC) {
    eddy_ir_type_print(types[0], out);
    return;
  }
  eddy_buf_putc(out, '(');
  eddy_print_type_list(types, n, out);
  eddy_buf_putc(out, ')');
}

void eddy_ir_type_print(const eddy_type_t *t, eddy_buf_t *out) {
  if (!t) {
    eddy_buf_puts(out, "<<NULL TYPE>>");
    return;
  }
  switch (t->kind) {
  case EDDY_TYPE_TENSOR:
    eddy_buf_puts(out, "tensor<");
    if (t->rank == EDDY_RANK_UNKNOWN) {
      eddy_buf_puts(out, "*x");
    } else {
      for (int32_t i = 0; i < t->rank; i++) {
        if (t->dims[i] == EDDY_DIM_DYNAMIC)
          eddy_buf_puts(out, "?x");
        else
          eddy_buf_printf(out, "%lldx", (long long)t->dims[i]);
      }
    }
    eddy_buf_puts(out, eddy_dtype_name(t->dtype));
    eddy_buf_putc(out, '>');
    return;
  case EDDY_TYPE_LIST:
    eddy_buf_puts(out, "!tl.list<");
    eddy_ir_type_print(t->elem, out);
    eddy_buf_putc(out, '>');
    return;
  case EDDY_TYPE_TOKEN:
    eddy_buf_puts(out, "!df.token");
    return;
  case EDDY_TYPE_FUNC:
    eddy_buf_putc(out, '(');
    eddy_print_type_list(t->inputs, t->num_inputs, out);
    eddy_buf_puts(out, ") -> ");
    eddy_print_results(t->outputs, t->num_outputs, out);
    return;
  }
  eddy_buf_puts(out, "<<BAD TYPE>>");
}

/* ---- Attributes ----------------------------------------------------------- */

/// @name when name is a bare identifier, else @"quoted".
static void eddy_print_symbol(const char *s, size_t len, eddy_buf_t *out) {
  eddy_buf_putc(out, '@');
  if (eddy_lex_is_bare_ident(s, len))
    eddy_buf_append(out, s, len);
  else
    eddy_text_print_string(s, len, out);
}

static uint64_t eddy_print_load_le(const unsigned char *p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/// Prints one dense element (at p) of dtype dt.
static void eddy_print_dense_elem(const unsigned char *p, eddy_dtype_t dt,
                                  eddy_buf_t *out) {
  size_t size = eddy_dtype_size(dt);
  uint64_t bits = eddy_print_load_le(p, size);
  switch (dt) {
  case EDDY_DT_I1:
    eddy_buf_puts(out, bits ? "true" : "false");
    return;
  case EDDY_DT_I8:
    eddy_buf_printf(out, "%d", (int)(int8_t)(uint8_t)bits);
    return;
  case EDDY_DT_I32:
    eddy_buf_printf(out, "%ld", (long)(int32_t)(uint32_t)bits);
    return;
  case EDDY_DT_I64:
    eddy_buf_printf(out, "%lld", (long long)(int64_t)bits);
    return;
  default: {
    double v = eddy_text_float_from_bits(bits, dt);
    if (v != v) {
      /* Print a NaN's own bits rather than re-deriving them from v. */
      eddy_buf_printf(out, "0x%0*llX", (int)(eddy_text_float_width(dt) / 4),
                      (unsigned long long)bits);
      return;
    }
    eddy_text_print_float(v, dt, out);
    return;
  }
  }
}

/// Prints the elements of dimension d onward as nested lists; *index is the
/// flat index of the next element.
static void eddy_print_dense_dims(const eddy_attr_t *a, int32_t d,
                                  int64_t *index, eddy_buf_t *out) {
  const eddy_type_t *t = a->type;
  size_t size = eddy_dtype_size(t->dtype);
  if (d == t->rank) {
    const unsigned char *base = a->u.dense.data;
    eddy_print_dense_elem(base + (size_t)*index * size, t->dtype, out);
    (*index)++;
    return;
  }
  eddy_buf_putc(out, '[');
  for (int64_t i = 0; i < t->dims[d]; i++) {
    if (i)
      eddy_buf_puts(out, ", ");
    eddy_print_dense_dims(a, d + 1, index, out);
  }
  eddy_buf_putc(out, ']');
}

static void eddy_print_dense(const eddy_attr_t *a, eddy_buf_t *out) {
  eddy_buf_puts(out, "dense<");
  const eddy_type_t *t = a->type;
  int64_t n = eddy_ir_type_num_elements(t);
  if (n > 0 && a->u.dense.nbytes > 0) {
    if (a->u.dense.splat || t->rank == 0) {
      eddy_print_dense_elem(a->u.dense.data, t->dtype, out);
    } else {
      int64_t index = 0;
      eddy_print_dense_dims(a, 0, &index, out);
    }
  }
  eddy_buf_puts(out, "> : ");
  eddy_ir_type_print(t, out);
}

void eddy_ir_attr_print(const eddy_attr_t *a, eddy_buf_t *out) {
  if (!a) {
    eddy_buf_puts(out, "<<NULL ATTRIBUTE>>");
    return;
  }
  switch (a->kind) {
  case EDDY_ATTR_INT:
    eddy_buf_printf(out, "%lld", (long long)a->u.i);
    if (a->dtype != EDDY_DT_I64)
      eddy_buf_printf(out, " : %s", eddy_dtype_name(a->dtype));
    return;
  case EDDY_ATTR_FLOAT:
    eddy_text_print_float(a->u.f, a->dtype, out);
    /* A hex pattern without a type would read back as an integer. */
    if (a->dtype != EDDY_DT_F64 || !isfinite(a->u.f))
      eddy_buf_printf(out, " : %s", eddy_dtype_name(a->dtype));
    return;
  case EDDY_ATTR_BOOL:
    eddy_buf_puts(out, a->u.b ? "true" : "false");
    return;
  case EDDY_ATTR_STRING:
    eddy_text_print_string(a->u.str.data, a->u.str.len, out);
    return;
  case EDDY_ATTR_TYPE:
    eddy_ir_type_print(a->type, out);
    return;
  case EDDY_ATTR_ARRAY:
    eddy_buf_putc(out, '[');
    for (size_t i = 0; i < a->u.array.len; i++) {
      if (i)
        eddy_buf_puts(out, ", ");
      eddy_ir_attr_print(a->u.array.elems[i], out);
    }
    eddy_buf_putc(out, ']');
    return;
  case EDDY_ATTR_DENSE:
    eddy_print_dense(a, out);
    return;
  case EDDY_ATTR_SYMBOL:
    eddy_print_symbol(a->u.str.data, a->u.str.len, out);
    return;
  }
  eddy_buf_puts(out, "<<BAD ATTRIBUTE>>");
}

/// {a = 1, b = "x"}, skipping the attributes named in `skip` (NULL-ended).
static void eddy_print_attr_dict(const eddy_named_attr_t *attrs, size_t n,
                                 const char *const *skip, eddy_buf_t *out) {
  bool first = true;
  for (size_t i = 0; i < n; i++) {
    const char *name = attrs[i].name->str;
    bool skipped = false;
    for (size_t k = 0; skip && skip[k]; k++)
      if (strcmp(skip[k], name) == 0)
        skipped = true;
    if (skipped)
      continue;
    eddy_buf_puts(out, first ? "{" : ", ");
    first = false;
    if (eddy_lex_is_bare_ident(name, attrs[i].name->len))
      eddy_buf_append(out, name, attrs[i].name->len);
    else
      eddy_text_print_string(name, attrs[i].name->len, out);
    eddy_buf_puts(out, " = ");
    eddy_ir_attr_print(attrs[i].value, out);
  }
  if (!first)
    eddy_buf_putc(out, '}');
}

static size_t eddy_print_count_attrs(const eddy_op_t *op,
                                     const char *const *skip) {
  size_t n = 0;
  for (uint32_t i = 0; i < op->num_attrs; i++) {
    bool skipped = false;
    for (size_t k = 0; skip && skip[k]; k++)
      if (strcmp(skip[k], op->attrs[i].name->str) == 0)
        skipped = true;
    n += !skipped;
  }
  return n;
}

/* ---- Value numbering ------------------------------------------------------- */

/// A value-name scope: the names of one isolated region tree (a function).
/// Keys are ops (for their result group, %N) and block arguments (%argN);
/// the stored number is tagged in its low bits so that it is never NULL.
typedef struct eddy_printer {
  eddy_buf_t *out;
  bool locs;
  eddy_ptrmap_t names;
  uint64_t next_result, next_arg, next_ext;
} eddy_printer_t;

enum { EDDY_NAME_RESULT = 1, EDDY_NAME_ARG = 2, EDDY_NAME_EXT = 3 };

static void eddy_printer_name(eddy_printer_t *pr, const void *key,
                              uint64_t kind, uint64_t n) {
  eddy_ptrmap_put(&pr->names, key, (void *)(uintptr_t)((n << 2) | kind));
}

static bool eddy_print_is_isolated(const eddy_op_t *op) {
  return eddy_text_is_isolated(op->def, op->name->str);
}

/// Numbers every value in region r in print order, leaving isolated ops'
/// regions for their own scope.
static void eddy_print_number_region(eddy_printer_t *pr,
                                     const eddy_region_t *r) {
  for (const eddy_block_t *b = r->first; b; b = b->next) {
    for (uint32_t i = 0; i < b->num_args; i++)
      eddy_printer_name(pr, b->args[i], EDDY_NAME_ARG, pr->next_arg++);
    for (const eddy_op_t *op = b->first; op; op = op->next) {
      if (op->num_results)
        eddy_printer_name(pr, op, EDDY_NAME_RESULT, pr->next_result++);
      if (!eddy_print_is_isolated(op))
        for (uint32_t k = 0; k < op->num_regions; k++)
          eddy_print_number_region(pr, &op->regions[k]);
    }
  }
}

/// The tag stored for key; a value defined outside what is being printed
/// (eddy_ir_op_print of a nested op, or broken IR) gets a name of its own.
static uintptr_t eddy_print_lookup(eddy_printer_t *pr, const void *key) {
  uintptr_t tag = (uintptr_t)eddy_ptrmap_get(&pr->names, key);
  if (!tag) {
    eddy_printer_name(pr, key, EDDY_NAME_EXT, pr->next_ext++);
    tag = (uintptr_t)eddy_ptrmap_get(&pr->names, key);
  }
  return tag;
}

static void eddy_print_name(eddy_printer_t *pr, uintptr_t tag) {
  unsigned long long n = (unsigned long long)(tag >> 2);
  switch (tag & 3) {
  case EDDY_NAME_RESULT:
    eddy_buf_printf(pr->out, "%%%llu", n);
    return;
  case EDDY_NAME_ARG:
    eddy_buf_printf(pr->out, "%%arg%llu", n);
    return;
  default:
    eddy_buf_printf(pr->out, "%%ext%llu", n);
    return;
  }
}

static void eddy_print_value(eddy_printer_t *pr, const eddy_value_t *v) {
  if (!v) {
    eddy_buf_puts(pr->out, "%<<NULL VALUE>>");
    return;
  }
  uintptr_t tag = eddy_print_lookup(pr, v->def ? (const void *)v->def
                                               : (const void *)v);
  eddy_print_name(pr, tag);
  if (v->def && v->def->num_results > 1)
    eddy_buf_printf(pr->out, "#%u", (unsigned)v->index);
}

/* ---- Ops -------------------------------------------------------------------- */

static void eddy_print_indent(eddy_printer_t *pr, unsigned indent) {
  for (unsigned i = 0; i < indent; i++)
    eddy_buf_putc(pr->out, ' ');
}

static void eddy_print_loc(eddy_printer_t *pr, const eddy_loc_t *loc) {
  if (!pr->locs)
    return;
  eddy_buf_puts(pr->out, " loc(");
  if (!loc) {
    eddy_buf_puts(pr->out, "unknown");
  } else {
    eddy_text_print_string(loc->file->str, loc->file->len, pr->out);
    if (loc->line)
      eddy_buf_printf(pr->out, ":%u:%u", (unsigned)loc->line,
                      (unsigned)loc->col);
  }
  eddy_buf_putc(pr->out, ')');
}

static void eddy_print_op(eddy_printer_t *pr, const eddy_op_t *op,
                          unsigned indent);

static void eddy_print_block_args(eddy_printer_t *pr, const eddy_block_t *b) {
  for (uint32_t i = 0; i < b->num_args; i++) {
    if (i)
      eddy_buf_puts(pr->out, ", ");
    eddy_print_value(pr, b->args[i]);
    eddy_buf_puts(pr->out, ": ");
    eddy_ir_type_print(b->args[i]->type, pr->out);
  }
}

/// Prints the blocks of r; ops at indent + 2, labels and the closing brace
/// at indent. With skip_entry_label the entry block never gets a label (a
/// function's entry block takes its arguments from the signature).
static void eddy_print_region(eddy_printer_t *pr, const eddy_region_t *r,
                              unsigned indent, bool skip_entry_label) {
  eddy_buf_puts(pr->out, "{\n");
  unsigned label = 0;
  for (const eddy_block_t *b = r->first; b; b = b->next, label++) {
    bool entry = b == r->first;
    /* An empty entry block keeps its label so that it reads back as a
       block, not as a region without blocks. */
    bool print_label = !entry || (!skip_entry_label &&
                                  (b->num_args > 0 || !b->first));
    if (print_label) {
      eddy_print_indent(pr, indent);
      eddy_buf_printf(pr->out, "^bb%u", label);
      if (b->num_args) {
        eddy_buf_putc(pr->out, '(');
        eddy_print_block_args(pr, b);
        eddy_buf_putc(pr->out, ')');
      }
      eddy_buf_puts(pr->out, ":\n");
    }
    for (const eddy_op_t *op = b->first; op; op = op->next)
      eddy_print_op(pr, op, indent + 2);
  }
  eddy_print_indent(pr, indent);
  eddy_buf_putc(pr->out, '}');
}

/// Prints an isolated op's regions in a fresh value-name scope.
static void eddy_print_regions(eddy_printer_t *pr, const eddy_op_t *op,
                               unsigned indent, bool func_form) {
  eddy_printer_t inner = {pr->out, pr->locs, {0}, 0, 0, 0};
  eddy_printer_t *use = pr;
  if (eddy_print_is_isolated(op)) {
    eddy_ptrmap_init(&inner.names);
    for (uint32_t k = 0; k < op->num_regions; k++)
      eddy_print_number_region(&inner, &op->regions[k]);
    use = &inner;
  }
  if (func_form) {
    eddy_print_region(use, &op->regions[0], indent, true);
  } else {
    eddy_buf_puts(pr->out, " (");
    for (uint32_t k = 0; k < op->num_regions; k++) {
      if (k)
        eddy_buf_puts(pr->out, ", ");
      eddy_print_region(use, &op->regions[k], indent, false);
    }
    eddy_buf_putc(pr->out, ')');
  }
  if (use == &inner)
    eddy_ptrmap_destroy(&inner.names);
}

static const char *const eddy_func_own_attrs[] = {"sym_name", "function_type",
                                                  NULL};

/// True when func.func can use its custom form: a name, a function type
/// matching the entry block, one region with an entry block.
static bool eddy_print_func_form_ok(const eddy_op_t *op) {
  if (!eddy_ir_op_is(op, "func.func") || op->num_regions != 1 ||
      op->num_results || op->num_operands || !op->regions[0].first)
    return false;
  const eddy_attr_t *name = eddy_ir_op_attr(op, "sym_name");
  const eddy_type_t *fty = eddy_ir_func_type(op);
  if (!name || name->kind != EDDY_ATTR_STRING || !fty)
    return false;
  return op->regions[0].first->num_args == fty->num_inputs;
}

static void eddy_print_func(eddy_printer_t *pr, const eddy_op_t *op,
                            unsigned indent) {
  const eddy_attr_t *name = eddy_ir_op_attr(op, "sym_name");
  const eddy_type_t *fty = eddy_ir_func_type(op);
  const eddy_block_t *entry = op->regions[0].first;
  eddy_buf_puts(pr->out, "func.func ");
  eddy_print_symbol(name->u.str.data, name->u.str.len, pr->out);
  /* The arguments are numbered in the function's own scope, so print the
     whole signature from inside it. */
  eddy_buf_putc(pr->out, '(');
  for (uint32_t i = 0; i < entry->num_args; i++) {
    if (i)
      eddy_buf_puts(pr->out, ", ");
    eddy_buf_printf(pr->out, "%%arg%u: ", (unsigned)i);
    eddy_ir_type_print(entry->args[i]->type, pr->out);
  }
  eddy_buf_putc(pr->out, ')');
  if (fty->num_outputs) {
    eddy_buf_puts(pr->out, " -> ");
    eddy_print_results(fty->outputs, fty->num_outputs, pr->out);
  }
  if (eddy_print_count_attrs(op, eddy_func_own_attrs)) {
    eddy_buf_puts(pr->out, " attributes ");
    eddy_print_attr_dict(op->attrs, op->num_attrs, eddy_func_own_attrs,
                         pr->out);
  }
  eddy_buf_putc(pr->out, ' ');
  eddy_print_regions(pr, op, indent, true);
  eddy_print_loc(pr, op->loc);
  eddy_buf_putc(pr->out, '\n');
}

static void eddy_print_op(eddy_printer_t *pr, const eddy_op_t *op,
                          unsigned indent) {
  eddy_print_indent(pr, indent);
  if (eddy_print_func_form_ok(op)) {
    eddy_print_func(pr, op, indent);
    return;
  }
  eddy_buf_t *out = pr->out;
  if (op->num_results) {
    eddy_print_name(pr, eddy_print_lookup(pr, op));
    if (op->num_results > 1)
      eddy_buf_printf(out, ":%u", (unsigned)op->num_results);
    eddy_buf_puts(out, " = ");
  }
  eddy_text_print_string(op->name->str, op->name->len, out);
  eddy_buf_putc(out, '(');
  for (uint32_t i = 0; i < op->num_operands; i++) {
    if (i)
      eddy_buf_puts(out, ", ");
    eddy_print_value(pr, op->operands[i].value);
  }
  eddy_buf_putc(out, ')');
  if (op->num_regions)
    eddy_print_regions(pr, op, indent, false);
  if (op->num_attrs) {
    eddy_buf_putc(out, ' ');
    eddy_print_attr_dict(op->attrs, op->num_attrs, NULL, out);
  }
  eddy_buf_puts(out, " : (");
  for (uint32_t i = 0; i < op->num_operands; i++) {
    if (i)
      eddy_buf_puts(out, ", ");
    const eddy_value_t *v = op->operands[i].value;
    eddy_ir_type_print(v ? v->type : NULL, out);
  }
  eddy_buf_puts(out, ") -> ");
  if (op->num_results == 1 && op->results[0].type &&
      op->results[0].type->kind != EDDY_TYPE_FUNC) {
    eddy_ir_type_print(op->results[0].type, out);
  } else {
    eddy_buf_putc(out, '(');
    for (uint32_t i = 0; i < op->num_results; i++) {
      if (i)
        eddy_buf_puts(out, ", ");
      eddy_ir_type_print(op->results[i].type, out);
    }
    eddy_buf_putc(out, ')');
  }
  eddy_print_loc(pr, op->loc);
  eddy_buf_putc(out, '\n');
}

/// `module [attributes {..}] {` ... `}`.
static void eddy_print_module_op(eddy_printer_t *pr, const eddy_op_t *op) {
  eddy_buf_puts(pr->out, "module ");
  if (op->num_attrs) {
    eddy_buf_puts(pr->out, "attributes ");
    eddy_print_attr_dict(op->attrs, op->num_attrs, NULL, pr->out);
    eddy_buf_putc(pr->out, ' ');
  }
  eddy_buf_puts(pr->out, "{\n");
  eddy_printer_t inner = {pr->out, pr->locs, {0}, 0, 0, 0};
  eddy_ptrmap_init(&inner.names);
  const eddy_region_t *r = op->num_regions ? &op->regions[0] : NULL;
  if (r)
    eddy_print_number_region(&inner, r);
  for (const eddy_block_t *b = r ? r->first : NULL; b; b = b->next)
    for (const eddy_op_t *o = b->first; o; o = o->next)
      eddy_print_op(&inner, o, 2);
  eddy_ptrmap_destroy(&inner.names);
  eddy_buf_putc(pr->out, '}');
  eddy_print_loc(pr, op->loc);
  eddy_buf_putc(pr->out, '\n');
}

static bool eddy_print_module_form_ok(const eddy_op_t *op) {
  return eddy_ir_op_is(op, "builtin.module") && op->num_regions == 1 &&
         op->num_results == 0 && op->num_operands == 0 &&
         (!op->regions[0].first || !op->regions[0].first->next) &&
         (!op->regions[0].first || op->regions[0].first->num_args == 0);
}

void eddy_ir_module_print(const eddy_module_t *m, const eddy_print_opts_t *o,
                          eddy_buf_t *out) {
  eddy_printer_t pr = {out, o && o->locations, {0}, 0, 0, 0};
  eddy_print_module_op(&pr, m->op);
}

void eddy_ir_op_print(const eddy_op_t *op, const eddy_print_opts_t *o,
                      eddy_buf_t *out) {
  eddy_printer_t pr = {out, o && o->locations, {0}, 0, 0, 0};
  eddy_ptrmap_init(&pr.names);
  if (eddy_print_module_form_ok(op)) {
    eddy_print_module_op(&pr, op);
  } else {
    /* Number the op's own results and, unless it is isolated, everything
       nested in it, the same way a function body is numbered. */
    if (op->num_results)
      eddy_printer_name(&pr, op, EDDY_NAME_RESULT, pr.next_result++);
    if (!eddy_print_is_isolated(op))
      for (uint32_t k = 0; k < op->num_regions; k++)
        eddy_print_number_region(&pr, &op->regions[k]);
    eddy_print_op(&pr, op, 0);
  }
  eddy_ptrmap_destroy(&pr.names);
}

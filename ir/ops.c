/// Ops, use lists, attributes, blocks and regions.
#include "ir/ir_internal.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Use lists ------------------------------------------------------------ */

static void eddy_use_link(eddy_use_t *u, eddy_value_t *v) {
  u->value = v;
  u->prev = NULL;
  u->next = NULL;
  if (!v)
    return;
  u->next = v->uses;
  if (v->uses)
    v->uses->prev = u;
  v->uses = u;
}

static void eddy_use_unlink(eddy_use_t *u) {
  if (!u->value)
    return;
  if (u->prev)
    u->prev->next = u->next;
  else
    u->value->uses = u->next;
  if (u->next)
    u->next->prev = u->prev;
  u->value = NULL;
  u->prev = u->next = NULL;
}

/* ---- Creation ------------------------------------------------------------- */

static void eddy_infer_oom(void) {
  fprintf(stderr, "eddy: out of memory (shape inference)\n");
  abort();
}

void eddy_ir_infer_push(eddy_infer_ctx_t *ic, const eddy_type_t *t) {
  assert(t);
  if (ic->num_results == ic->cap_results) {
    size_t cap = ic->cap_results ? ic->cap_results * 2 : 4;
    const eddy_type_t **r = realloc((void *)ic->results, cap * sizeof(*r));
    if (!r)
      eddy_infer_oom();
    ic->results = r;
    ic->cap_results = cap;
  }
  ic->results[ic->num_results++] = t;
}

const eddy_attr_t *eddy_ir_infer_attr(const eddy_infer_ctx_t *ic,
                                      const char *name) {
  for (size_t i = 0; i < ic->num_attrs; i++)
    if (strcmp(ic->attrs[i].name->str, name) == 0)
      return ic->attrs[i].value;
  return NULL;
}

/// "'NAME' op MESSAGE" located at loc (no location when NULL).
static eddy_status_t eddy_op_errorv(const eddy_loc_t *loc, const char *name,
                                    const char *fmt, va_list ap) {
  eddy_buf_t where;
  eddy_buf_init(&where);
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  char *text = malloc(n > 0 ? (size_t)n + 1 : 1);
  if (!text)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  if (n > 0)
    vsnprintf(text, (size_t)n + 1, fmt, ap);
  else
    text[0] = '\0';
  if (loc)
    eddy_ir_loc_format(loc, &where);
  eddy_status_t st = eddy_status_create_at(
      EDDY_ERR_VERIFY, loc ? where.data : NULL, "'%s' op %s", name, text);
  free(text);
  eddy_buf_destroy(&where);
  return st;
}

static eddy_status_t eddy_op_error_at(const eddy_loc_t *loc, const char *name,
                                      const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static eddy_status_t eddy_op_error_at(const eddy_loc_t *loc, const char *name,
                                      const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  eddy_status_t st = eddy_op_errorv(loc, name, fmt, ap);
  va_end(ap);
  return st;
}

eddy_status_t eddy_ir_infer_error(const eddy_infer_ctx_t *ic, const char *fmt,
                                  ...) {
  va_list ap;
  va_start(ap, fmt);
  eddy_status_t st = eddy_op_errorv(ic->loc, ic->def->name, fmt, ap);
  va_end(ap);
  return st;
}

eddy_status_t eddy_ir_op_error(const eddy_op_t *op, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  eddy_status_t st = eddy_op_errorv(op->loc, op->name->str, fmt, ap);
  va_end(ap);
  return st;
}

static int eddy_named_attr_cmp(const void *a, const void *b) {
  const eddy_named_attr_t *x = a, *y = b;
  return strcmp(x->name->str, y->name->str);
}

eddy_status_t eddy_ir_op_create(eddy_ctx_t *ctx, const eddy_op_state_t *st,
                                eddy_op_t **out_op) {
  *out_op = NULL;
  assert(st->name);
  assert(st->num_operands == 0 || st->operands);
  assert(st->num_attrs == 0 || st->attrs);
  size_t name_len = strlen(st->name);
  const eddy_op_def_t *def = eddy_ir_ctx_lookup_op(ctx, st->name, name_len);
  if (!def) {
    eddy_buf_t where;
    eddy_buf_init(&where);
    if (st->loc)
      eddy_ir_loc_format(st->loc, &where);
    eddy_status_t err = eddy_status_create_at(
        EDDY_ERR_NOT_FOUND, st->loc ? where.data : NULL, "unknown op '%s'",
        st->name);
    eddy_buf_destroy(&where);
    return err;
  }
  if (st->num_operands > UINT32_MAX || st->num_attrs > UINT32_MAX ||
      st->num_regions > UINT32_MAX || st->num_results > UINT32_MAX)
    return eddy_status_create(EDDY_ERR_RESOURCE, "'%s' op is too large",
                              st->name);

  /* Sorted copy of the attributes; a duplicate name is an error. */
  eddy_named_attr_t *attrs = NULL;
  if (st->num_attrs) {
    attrs = eddy_arena_dup(ctx->arena, st->attrs,
                           st->num_attrs * sizeof(eddy_named_attr_t));
    qsort(attrs, st->num_attrs, sizeof(*attrs), eddy_named_attr_cmp);
    for (size_t i = 1; i < st->num_attrs; i++)
      if (attrs[i].name == attrs[i - 1].name ||
          strcmp(attrs[i].name->str, attrs[i - 1].name->str) == 0) {
        return eddy_op_error_at(st->loc, st->name,
                                "has duplicate attribute '%s'",
                                attrs[i].name->str);
      }
  }

  const eddy_type_t *const *result_types = st->result_types;
  size_t num_results = st->num_results;
  eddy_infer_ctx_t ic = {0};
  if (!result_types) {
    if (!def->infer && st->num_results == 0 &&
        (def->num_results == 0 || def->num_results == EDDY_VARIADIC)) {
      /* Nothing to infer: an op that may have no results is built with
         none (e.g. an unknown TensorFlow op with no outputs). */
      num_results = 0;
    } else if (!def->infer) {
      return eddy_op_error_at(st->loc, st->name, "result types must be given");
    } else {
      const eddy_type_t *small[8];
      const eddy_type_t **types = small;
      if (st->num_operands > 8) {
        types = malloc(st->num_operands * sizeof(*types));
        if (!types)
          eddy_infer_oom();
      }
      for (size_t i = 0; i < st->num_operands; i++)
        types[i] = st->operands[i] ? st->operands[i]->type : NULL;
      ic.ctx = ctx;
      ic.def = def;
      ic.operand_types = types;
      ic.num_operands = st->num_operands;
      ic.attrs = attrs;
      ic.num_attrs = st->num_attrs;
      ic.loc = st->loc;
      ic.op = NULL;
      eddy_status_t err = def->infer(&ic);
      if (types != small)
        free(types);
      if (err) {
        free((void *)ic.results);
        return err;
      }
      result_types = ic.results;
      num_results = ic.num_results;
    }
  }

  eddy_op_t *op = eddy_arena_alloc(ctx->arena, sizeof(*op));
  op->ctx = ctx;
  op->def = def;
  op->name = eddy_ir_ident_get(ctx, st->name, name_len);
  op->loc = st->loc;
  op->num_operands = (uint32_t)st->num_operands;
  op->cap_operands = (uint32_t)st->num_operands;
  if (st->num_operands) {
    op->operands = eddy_arena_alloc(ctx->arena,
                                    st->num_operands * sizeof(eddy_use_t));
    for (size_t i = 0; i < st->num_operands; i++) {
      op->operands[i].owner = op;
      op->operands[i].index = (uint32_t)i;
      eddy_use_link(&op->operands[i], st->operands[i]);
    }
  }
  op->num_results = (uint32_t)num_results;
  if (num_results) {
    op->results =
        eddy_arena_alloc(ctx->arena, num_results * sizeof(eddy_value_t));
    for (size_t i = 0; i < num_results; i++) {
      assert(result_types[i] && "a result type is NULL");
      op->results[i].type = result_types[i];
      op->results[i].def = op;
      op->results[i].index = (uint32_t)i;
    }
  }
  free((void *)ic.results);
  op->attrs = attrs;
  op->num_attrs = (uint32_t)st->num_attrs;
  op->num_regions = (uint32_t)st->num_regions;
  if (st->num_regions) {
    op->regions =
        eddy_arena_alloc(ctx->arena, st->num_regions * sizeof(eddy_region_t));
    for (size_t i = 0; i < st->num_regions; i++)
      op->regions[i].parent = op;
  }
  *out_op = op;
  return NULL;
}

/* ---- Operands and results -------------------------------------------------- */

eddy_value_t *eddy_ir_op_result(eddy_op_t *op, size_t i) {
  assert(i < op->num_results);
  return &op->results[i];
}

eddy_value_t *eddy_ir_op_operand(const eddy_op_t *op, size_t i) {
  assert(i < op->num_operands);
  return op->operands[i].value;
}

void eddy_ir_op_set_operand(eddy_op_t *op, size_t i, eddy_value_t *v) {
  assert(i < op->num_operands);
  eddy_use_t *u = &op->operands[i];
  if (u->value == v)
    return;
  eddy_use_unlink(u);
  eddy_use_link(u, v);
}

void eddy_ir_op_set_operands(eddy_op_t *op, eddy_value_t *const *vals,
                             size_t n) {
  assert(n <= UINT32_MAX && (n == 0 || vals));
  for (uint32_t i = 0; i < op->num_operands; i++)
    eddy_use_unlink(&op->operands[i]);
  if (n > op->cap_operands) {
    /* uses are linked by address, so grow only after unlinking them all */
    op->operands = eddy_arena_alloc(op->ctx->arena, n * sizeof(eddy_use_t));
    op->cap_operands = (uint32_t)n;
  }
  op->num_operands = (uint32_t)n;
  for (size_t i = 0; i < n; i++) {
    op->operands[i].owner = op;
    op->operands[i].index = (uint32_t)i;
    eddy_use_link(&op->operands[i], vals[i]);
  }
}

void eddy_ir_value_set_type(eddy_value_t *v, const eddy_type_t *t) {
  assert(t);
  v->type = t;
}

/* ---- Attributes ----------------------------------------------------------- */

/// Index of the attribute named `name`, or where it would be inserted
/// (with *found false).
static uint32_t eddy_op_attr_find(const eddy_op_t *op, const char *name,
                                  bool *found) {
  uint32_t lo = 0, hi = op->num_attrs;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    int c = strcmp(op->attrs[mid].name->str, name);
    if (c == 0) {
      *found = true;
      return mid;
    }
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  *found = false;
  return lo;
}

const eddy_attr_t *eddy_ir_op_attr(const eddy_op_t *op, const char *name) {
  bool found;
  uint32_t i = eddy_op_attr_find(op, name, &found);
  return found ? op->attrs[i].value : NULL;
}

void eddy_ir_op_set_attr(eddy_op_t *op, const char *name,
                         const eddy_attr_t *value) {
  assert(value);
  bool found;
  uint32_t i = eddy_op_attr_find(op, name, &found);
  if (found) {
    op->attrs[i].value = value;
    return;
  }
  /* The list has no spare capacity: allocate the next one. */
  eddy_named_attr_t *attrs = eddy_arena_alloc(
      op->ctx->arena, ((size_t)op->num_attrs + 1) * sizeof(*attrs));
  if (i)
    memcpy(attrs, op->attrs, i * sizeof(*attrs));
  attrs[i].name = eddy_ir_ident_cstr(op->ctx, name);
  attrs[i].value = value;
  if (op->num_attrs > i)
    memcpy(attrs + i + 1, op->attrs + i, (op->num_attrs - i) * sizeof(*attrs));
  op->attrs = attrs;
  op->num_attrs++;
}

bool eddy_ir_op_remove_attr(eddy_op_t *op, const char *name) {
  bool found;
  uint32_t i = eddy_op_attr_find(op, name, &found);
  if (!found)
    return false;
  memmove(op->attrs + i, op->attrs + i + 1,
          (op->num_attrs - i - 1) * sizeof(*op->attrs));
  op->num_attrs--;
  return true;
}

int64_t eddy_ir_op_attr_int(const eddy_op_t *op, const char *name,
                            int64_t dflt) {
  const eddy_attr_t *a = eddy_ir_op_attr(op, name);
  return a && a->kind == EDDY_ATTR_INT ? a->u.i : dflt;
}

bool eddy_ir_op_attr_bool(const eddy_op_t *op, const char *name, bool dflt) {
  const eddy_attr_t *a = eddy_ir_op_attr(op, name);
  return a && a->kind == EDDY_ATTR_BOOL ? a->u.b : dflt;
}

double eddy_ir_op_attr_float(const eddy_op_t *op, const char *name,
                             double dflt) {
  const eddy_attr_t *a = eddy_ir_op_attr(op, name);
  return a && a->kind == EDDY_ATTR_FLOAT ? a->u.f : dflt;
}

/* ---- Queries -------------------------------------------------------------- */

bool eddy_ir_op_is(const eddy_op_t *op, const char *name) {
  return op && strcmp(op->name->str, name) == 0;
}

bool eddy_ir_op_has_trait(const eddy_op_t *op, uint32_t trait) {
  return (op->def->traits & trait) == trait;
}

eddy_op_t *eddy_ir_op_parent_op(const eddy_op_t *op) {
  return op->block ? eddy_ir_block_parent_op(op->block) : NULL;
}

bool eddy_ir_op_is_ancestor(const eddy_op_t *ancestor, const eddy_op_t *op) {
  for (const eddy_op_t *p = op; p; p = eddy_ir_op_parent_op(p))
    if (p == ancestor)
      return true;
  return false;
}

/* ---- Linking -------------------------------------------------------------- */

/// Drops the operand uses of op and of every op nested in it.
static void eddy_op_drop_uses(eddy_op_t *op) {
  for (uint32_t i = 0; i < op->num_operands; i++)
    eddy_use_unlink(&op->operands[i]);
  for (uint32_t r = 0; r < op->num_regions; r++)
    for (eddy_block_t *b = op->regions[r].first; b; b = b->next)
      for (eddy_op_t *o = b->first; o; o = o->next)
        eddy_op_drop_uses(o);
}

void eddy_ir_op_remove(eddy_op_t *op) {
  eddy_block_t *b = op->block;
  if (!b)
    return;
  if (op->prev)
    op->prev->next = op->next;
  else
    b->first = op->next;
  if (op->next)
    op->next->prev = op->prev;
  else
    b->last = op->prev;
  op->prev = op->next = NULL;
  op->block = NULL;
}

void eddy_ir_op_erase(eddy_op_t *op) {
  for (uint32_t i = 0; i < op->num_results; i++)
    assert(!op->results[i].uses && "erasing an op whose results are used");
  eddy_ir_op_remove(op);
  eddy_op_drop_uses(op);
}

void eddy_ir_op_insert_before(eddy_op_t *op, eddy_op_t *before) {
  assert(!op->block && "op is already in a block");
  eddy_block_t *b = before->block;
  assert(b);
  op->block = b;
  op->next = before;
  op->prev = before->prev;
  if (before->prev)
    before->prev->next = op;
  else
    b->first = op;
  before->prev = op;
}

void eddy_ir_op_insert_after(eddy_op_t *op, eddy_op_t *after) {
  assert(!op->block && "op is already in a block");
  eddy_block_t *b = after->block;
  assert(b);
  op->block = b;
  op->prev = after;
  op->next = after->next;
  if (after->next)
    after->next->prev = op;
  else
    b->last = op;
  after->next = op;
}

void eddy_ir_op_append(eddy_op_t *op, eddy_block_t *block) {
  assert(!op->block && "op is already in a block");
  op->block = block;
  op->next = NULL;
  op->prev = block->last;
  if (block->last)
    block->last->next = op;
  else
    block->first = op;
  block->last = op;
}

void eddy_ir_op_move_before(eddy_op_t *op, eddy_op_t *before) {
  if (op == before)
    return;
  eddy_ir_op_remove(op);
  eddy_ir_op_insert_before(op, before);
}

/* ---- Values --------------------------------------------------------------- */

bool eddy_ir_value_has_uses(const eddy_value_t *v) { return v->uses != NULL; }

size_t eddy_ir_value_num_uses(const eddy_value_t *v) {
  size_t n = 0;
  for (const eddy_use_t *u = v->uses; u; u = u->next)
    n++;
  return n;
}

void eddy_ir_value_replace_all_uses(eddy_value_t *from, eddy_value_t *to) {
  if (from == to)
    return;
  while (from->uses) {
    eddy_use_t *u = from->uses;
    eddy_use_unlink(u);
    eddy_use_link(u, to);
  }
}

eddy_block_t *eddy_ir_value_block(const eddy_value_t *v) {
  return v->def ? v->def->block : v->block;
}

/* ---- Blocks and regions --------------------------------------------------- */

eddy_block_t *eddy_ir_region_add_block(eddy_region_t *r) {
  assert(r->parent && "a region belongs to an op");
  eddy_block_t *b = eddy_arena_alloc(r->parent->ctx->arena, sizeof(*b));
  b->region = r;
  b->prev = r->last;
  if (r->last)
    r->last->next = b;
  else
    r->first = b;
  r->last = b;
  return b;
}

eddy_block_t *eddy_ir_region_entry(const eddy_region_t *r) { return r->first; }

eddy_value_t *eddy_ir_block_add_arg(eddy_block_t *b, const eddy_type_t *t) {
  assert(t && b->region && b->region->parent);
  eddy_arena_t *a = b->region->parent->ctx->arena;
  assert(b->num_args < UINT32_MAX);
  b->args = (eddy_value_t **)eddy_ir_arena_grow_ptrs(
      a, (void **)b->args, b->num_args, &b->cap_args, b->num_args + 1);
  eddy_value_t *v = eddy_arena_alloc(a, sizeof(*v));
  v->type = t;
  v->block = b;
  v->index = b->num_args;
  b->args[b->num_args++] = v;
  return v;
}

void eddy_ir_block_erase_arg(eddy_block_t *b, size_t i) {
  assert(i < b->num_args);
  assert(!b->args[i]->uses && "erasing a used block argument");
  b->args[i]->block = NULL;
  for (size_t j = i + 1; j < b->num_args; j++) {
    b->args[j - 1] = b->args[j];
    b->args[j - 1]->index = (uint32_t)(j - 1);
  }
  b->num_args--;
}

eddy_op_t *eddy_ir_block_terminator(const eddy_block_t *b) { return b->last; }

eddy_op_t *eddy_ir_block_parent_op(const eddy_block_t *b) {
  return b->region ? b->region->parent : NULL;
}

/// A structure-aware mutator for the IR text fuzz targets (ir_text, grad,
/// compile; docs/reliability.md, "Mutating IR as IR").
///
/// Byte changes to IR text mostly make text that does not parse, and the
/// grad and compile targets go no further than the verifier with it. This
/// mutator parses the input, changes the module as IR and prints it again:
/// an operand replaced by another value in scope (of the same type three
/// times in four), two operands swapped, an op erased (its uses given
/// another value of its type), an op cloned and one use moved to the copy,
/// an op renamed to another of its kind (add to maximum, tanh to exp,
/// reduce_sum to reduce_prod, lt to ge), an attribute set to an edge value
/// of its kind. Most results still parse and many still verify, so the
/// verifier, autodiff and the backends see programs the corpus does not
/// have.
#include "tests/fuzz/fuzz.h"

#include <stdlib.h>
#include <string.h>

enum { MAX_OPS = 4096, MAX_VALUES = 1024 };

typedef struct irm {
  uint64_t rng;
  eddy_ctx_t *ctx;
  eddy_op_t *ops[MAX_OPS];
  size_t num_ops;
} irm_t;

static uint64_t next(irm_t *m) { return eddy_fuzz_rng(&m->rng); }

static size_t below(irm_t *m, size_t n) { return n ? next(m) % n : 0; }

static eddy_walk_result_t collect(eddy_op_t *op, void *user) {
  irm_t *m = user;
  if (!eddy_ir_op_is(op, "builtin.module") && !eddy_ir_op_is(op, "func.func") &&
      m->num_ops < MAX_OPS)
    m->ops[m->num_ops++] = op;
  return EDDY_WALK_ADVANCE;
}

static eddy_op_t *some_op(irm_t *m) {
  return m->num_ops ? m->ops[below(m, m->num_ops)] : NULL;
}

/// The values in scope at op x: the block arguments and earlier results of
/// its block and of the blocks around it, up to its function.
static size_t in_scope(eddy_op_t *x, eddy_value_t **out) {
  size_t n = 0;
  for (eddy_op_t *cur = x; cur && cur->block; cur = eddy_ir_op_parent_op(cur)) {
    eddy_block_t *b = cur->block;
    for (uint32_t i = 0; i < b->num_args && n < MAX_VALUES; i++)
      out[n++] = b->args[i];
    for (eddy_op_t *p = b->first; p && p != cur; p = p->next)
      for (uint32_t r = 0; r < p->num_results && n < MAX_VALUES; r++)
        out[n++] = &p->results[r];
    eddy_op_t *parent = eddy_ir_op_parent_op(cur);
    if (!parent || eddy_ir_op_is(parent, "func.func") ||
        eddy_ir_op_has_trait(parent, EDDY_TRAIT_ISOLATED))
      break;
  }
  return n;
}

/// A value in scope at x for v's place: of v's type (always when
/// same_type, else three times in four; NULL when there is none), or any.
static eddy_value_t *other_value(irm_t *m, eddy_op_t *x, const eddy_value_t *v,
                                 bool same_type) {
  static eddy_value_t *vals[MAX_VALUES];
  size_t n = in_scope(x, vals);
  if (!n)
    return NULL;
  if (same_type || below(m, 4)) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
      if (vals[i]->type == v->type && vals[i] != v)
        vals[k++] = vals[i];
    n = k;
  }
  return n ? vals[below(m, n)] : NULL;
}

/// ---- Mutations -------------------------------------------------------------

static bool replace_operand(irm_t *m) {
  eddy_op_t *op = some_op(m);
  if (!op || !op->num_operands)
    return false;
  size_t i = below(m, op->num_operands);
  eddy_value_t *v = other_value(m, op, eddy_ir_op_operand(op, i), false);
  if (!v)
    return false;
  eddy_ir_op_set_operand(op, i, v);
  return true;
}

static bool swap_operands(irm_t *m) {
  eddy_op_t *op = some_op(m);
  if (!op || op->num_operands < 2)
    return false;
  size_t i = below(m, op->num_operands), j = below(m, op->num_operands);
  eddy_value_t *a = eddy_ir_op_operand(op, i), *b = eddy_ir_op_operand(op, j);
  eddy_ir_op_set_operand(op, i, b);
  eddy_ir_op_set_operand(op, j, a);
  return i != j;
}

static bool erase_op(irm_t *m) {
  eddy_op_t *op = some_op(m);
  if (!op || eddy_ir_op_has_trait(op, EDDY_TRAIT_TERMINATOR))
    return false;
  eddy_value_t *to[16] = {0};
  if (op->num_results > 16)
    return false;
  for (uint32_t r = 0; r < op->num_results; r++)
    if (op->results[r].uses &&
        !(to[r] = other_value(m, op, &op->results[r], true)))
      return false;
  for (uint32_t r = 0; r < op->num_results; r++)
    if (to[r])
      eddy_ir_value_replace_all_uses(&op->results[r], to[r]);
  // ops nested in op leave the list with it
  size_t k = 0;
  for (size_t i = 0; i < m->num_ops; i++)
    if (!eddy_ir_op_is_ancestor(op, m->ops[i]))
      m->ops[k++] = m->ops[i];
  m->num_ops = k;
  eddy_ir_op_erase(op);
  return true;
}

static bool clone_op(irm_t *m) {
  eddy_op_t *op = some_op(m);
  if (!op || !op->num_results || !op->results[0].uses ||
      eddy_ir_op_has_trait(op, EDDY_TRAIT_TERMINATOR))
    return false;
  eddy_ptrmap_t map;
  eddy_ptrmap_init(&map);
  eddy_op_t *c = eddy_ir_op_clone(op, &map);
  eddy_ptrmap_destroy(&map);
  if (!c)
    return false;
  eddy_ir_op_insert_after(c, op);
  // one use of the result moves to the copy (which comes before it: the
  // use is after op, or a back edge, which the verifier judges)
  eddy_use_t *u = op->results[0].uses;
  eddy_ir_op_set_operand(u->owner, (size_t)(u - u->owner->operands),
                         &c->results[0]);
  if (m->num_ops < MAX_OPS)
    m->ops[m->num_ops++] = c;
  return true;
}

/// Ops of one kind: a name from the op's row replaces it.
static const char *const k_kinds[][10] = {
    {"core.add", "core.sub", "core.mul", "core.div", "core.maximum",
     "core.minimum", "core.pow", "core.atan2", "core.rem", NULL},
    {"core.neg", "core.exp", "core.log", "core.tanh", "core.sigmoid",
     "core.relu", "core.sqrt", "core.abs", "core.rsqrt", "core.square"},
    {"core.eq", "core.ne", "core.lt", "core.le", "core.gt", "core.ge", NULL},
    {"core.reduce_sum", "core.reduce_mean", "core.reduce_max",
     "core.reduce_min", "core.reduce_prod", NULL},
    {"core.and", "core.or", NULL},
    {"tl.push_back", "tl.set_item", NULL},
};

static bool rename_op(irm_t *m) {
  eddy_op_t *op = some_op(m);
  if (!op || op->num_regions)
    return false;
  const char *name = op->name->str, *to = NULL;
  for (size_t k = 0; k < sizeof k_kinds / sizeof *k_kinds && !to; k++)
    for (size_t i = 0; i < 10 && k_kinds[k][i] && !to; i++)
      if (strcmp(k_kinds[k][i], name) == 0) {
        size_t n = 0;
        while (n < 10 && k_kinds[k][n])
          n++;
        to = k_kinds[k][below(m, n)];
      }
  if (!to || strcmp(to, name) == 0)
    return false;
  eddy_value_t *ops[16];
  const eddy_type_t *types[16];
  if (op->num_operands > 16 || op->num_results > 16)
    return false;
  for (uint32_t i = 0; i < op->num_operands; i++)
    ops[i] = eddy_ir_op_operand(op, i);
  for (uint32_t i = 0; i < op->num_results; i++)
    types[i] = op->results[i].type;
  eddy_op_state_t st = {.name = to,
                        .operands = ops,
                        .num_operands = op->num_operands,
                        .attrs = op->attrs,
                        .num_attrs = op->num_attrs,
                        .result_types = types,
                        .num_results = op->num_results,
                        .loc = op->loc};
  eddy_op_t *c = NULL;
  eddy_status_t s = eddy_ir_op_create(m->ctx, &st, &c);
  if (s) {
    eddy_fuzz_ignore(s);
    return false;
  }
  eddy_ir_op_insert_before(c, op);
  for (uint32_t i = 0; i < op->num_results; i++)
    eddy_ir_value_replace_all_uses(&op->results[i], &c->results[i]);
  for (size_t i = 0; i < m->num_ops; i++)
    if (m->ops[i] == op)
      m->ops[i] = c;
  eddy_ir_op_erase(op);
  return true;
}

static int64_t edge_int(irm_t *m) {
  static const int64_t v[] = {-1, 0,  1,   2,         3,         -2,
                              7,  64, 257, INT32_MAX, INT64_MAX, INT64_MIN};
  return v[below(m, sizeof v / sizeof *v)];
}

static bool tweak_attr(irm_t *m) {
  eddy_op_t *op = some_op(m);
  if (!op || !op->num_attrs)
    return false;
  eddy_named_attr_t *na = &op->attrs[below(m, op->num_attrs)];
  const eddy_attr_t *a = na->value, *to = NULL;
  switch (a->kind) {
  case EDDY_ATTR_INT:
    to = eddy_ir_int_attr_get(m->ctx, edge_int(m), a->dtype);
    break;
  case EDDY_ATTR_BOOL:
    to = eddy_ir_bool_attr_get(m->ctx, !a->u.b);
    break;
  case EDDY_ATTR_FLOAT: {
    static const double f[] = {0.0, -0.0, 1e30, -1.0, 1.0 / 0.0, 0.0 / 0.0};
    to = eddy_ir_float_attr_get(m->ctx, f[below(m, 6)], a->dtype);
    break;
  }
  case EDDY_ATTR_ARRAY: { // an i64 array: one element changed, or one fewer
    size_t n = a->u.array.len;
    int64_t v[16];
    if (n > 16)
      return false;
    for (size_t i = 0; i < n; i++) {
      if (a->u.array.elems[i]->kind != EDDY_ATTR_INT)
        return false;
      v[i] = a->u.array.elems[i]->u.i;
    }
    if (n && below(m, 3))
      v[below(m, n)] = edge_int(m);
    else if (n)
      n--;
    else
      v[n++] = edge_int(m);
    to = eddy_ir_i64_array_attr_get(m->ctx, v, n);
    break;
  }
  default:
    return false;
  }
  if (!to)
    return false;
  char name[128];
  size_t len = strlen(na->name->str);
  if (len >= sizeof name)
    return false;
  memcpy(name, na->name->str, len + 1);
  eddy_ir_op_set_attr(op, name, to);
  return true;
}

/// ---- Entry -----------------------------------------------------------------

size_t eddy_fuzz_mutate(uint8_t *data, size_t size, size_t max_size,
                        uint64_t seed) {
  eddy_ctx_t *ctx = eddy_fuzz_ctx_create();
  if (!ctx)
    return 0;
  eddy_module_t *mod = NULL;
  eddy_status_t st =
      eddy_ir_parse_module(ctx, "fuzz.eddy", (const char *)data, size, &mod);
  size_t out = 0;
  irm_t *m = st ? NULL : calloc(1, sizeof *m);
  if (m) {
    m->rng = seed;
    m->ctx = ctx;
    eddy_ir_walk_pre(mod->op, collect, m);
    bool (*const kinds[])(irm_t *) = {
        replace_operand, replace_operand, swap_operands, erase_op,
        clone_op,        rename_op,       rename_op,     tweak_attr};
    size_t nk = sizeof kinds / sizeof *kinds;
    bool changed = false;
    for (size_t k = 0, want = 1 + below(m, 3), tries = 0;
         k < want && tries < 16; tries++)
      if (kinds[below(m, nk)](m)) {
        changed = true;
        k++;
      }
    if (changed) {
      eddy_buf_t b;
      eddy_buf_init(&b);
      eddy_print_opts_t po = {0};
      eddy_ir_module_print(mod, &po, &b);
      if (b.data && b.len <= max_size) {
        memcpy(data, b.data, b.len);
        out = b.len;
      }
      eddy_buf_destroy(&b);
    }
    free(m);
  }
  eddy_fuzz_ignore(st);
  if (mod)
    eddy_ir_module_destroy(mod);
  eddy_ir_ctx_destroy(ctx);
  return out;
}

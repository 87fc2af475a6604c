/// The generic verifier: the checks every op gets from its definition
/// (counts, attributes, shape function, op verifier) and the structural
/// invariants of the IR (terminators, single-block regions, isolation, SSA
/// dominance).
///
/// Dominance is checked in one pre-order walk that keeps the set of values
/// visible at the current point: a block's arguments enter the set when the
/// block is entered, an op's results after the op (and its regions) have been
/// checked, and everything a block defined leaves the set when the block is
/// done. An operand is legal when it is in the set, so each operand costs one
/// hash lookup and the whole walk is linear in the size of the IR. Each
/// visible value remembers the region depth it was defined at; an ISOLATED op
/// raises a floor below which values may not be used.
///
/// The nested content of an op is verified before the op's own verifier runs,
/// so op verifiers (ctl.while inspecting its terminators, say) may rely on
/// well-formed children.
#include "ir/ir.h"

#include <stdlib.h>
#include <string.h>

typedef struct verifier {
  /// value -> (uintptr_t) region depth (>= 1) at which it became visible;
  /// NULL when not visible (the map cannot delete, so leaving a scope
  /// overwrites with NULL).
  eddy_ptrmap_t scope;
  uint32_t depth;
  /// Values visible at a depth below this are outside the innermost
  /// ISOLATED op (0 when there is none).
  uint32_t floor;
  const eddy_op_t *isolated; ///< the innermost ISOLATED ancestor, or NULL
  eddy_buf_t t1, t2;         ///< scratch for type text in messages
} verifier_t;

static const char *type_str(eddy_buf_t *b, const eddy_type_t *t) {
  eddy_buf_clear(b);
  if (t)
    eddy_ir_type_print(t, b);
  else
    eddy_buf_puts(b, "<null type>");
  return b->data ? b->data : "";
}

static const char *attr_kind_name(eddy_attr_kind_t k) {
  switch (k) {
  case EDDY_ATTR_INT:
    return "an integer";
  case EDDY_ATTR_FLOAT:
    return "a float";
  case EDDY_ATTR_BOOL:
    return "a bool";
  case EDDY_ATTR_STRING:
    return "a string";
  case EDDY_ATTR_TYPE:
    return "a type";
  case EDDY_ATTR_ARRAY:
    return "an array";
  case EDDY_ATTR_DENSE:
    return "a dense tensor";
  case EDDY_ATTR_SYMBOL:
    return "a symbol";
  }
  return "an unknown kind of";
}

static const char *plural(long n) { return n == 1 ? "" : "s"; }

/// A definition created on the fly for an unknown op of a dialect that
/// allows them: nothing about it is known, so nothing is checked. The
/// context makes those with a variadic region count, which no registered
/// definition has (region counts are exact).
static bool def_is_permissive(const eddy_op_def_t *def) {
  return def->dialect && def->dialect->allow_unknown_ops &&
         def->num_regions == EDDY_VARIADIC;
}

static void scope_put(verifier_t *v, const eddy_value_t *val, uint32_t depth) {
  eddy_ptrmap_put(&v->scope, val, (void *)(uintptr_t)depth);
}

static void scope_drop(verifier_t *v, const eddy_value_t *val) {
  if (eddy_ptrmap_has(&v->scope, val))
    eddy_ptrmap_put(&v->scope, val, NULL);
}

/// ---- Checks that need only the op and its definition ----

static eddy_status_t check_counts(const eddy_op_t *op) {
  const eddy_op_def_t *def = op->def;
  if (def->num_operands == EDDY_VARIADIC) {
    if (op->num_operands <
        (uint32_t)(def->min_operands < 0 ? 0 : def->min_operands))
      return eddy_ir_op_error(op, "expects at least %d operand%s, found %u",
                              def->min_operands, plural(def->min_operands),
                              op->num_operands);
  } else if (op->num_operands != (uint32_t)def->num_operands) {
    return eddy_ir_op_error(op, "expects %d operand%s, found %u",
                            def->num_operands, plural(def->num_operands),
                            op->num_operands);
  }
  if (def->num_results != EDDY_VARIADIC &&
      op->num_results != (uint32_t)def->num_results)
    return eddy_ir_op_error(op, "expects %d result%s, found %u",
                            def->num_results, plural(def->num_results),
                            op->num_results);
  if (def->num_regions != EDDY_VARIADIC &&
      op->num_regions != (uint32_t)def->num_regions)
    return eddy_ir_op_error(op, "expects %d region%s, found %u",
                            def->num_regions, plural(def->num_regions),
                            op->num_regions);
  return NULL;
}

static const eddy_attr_spec_t *find_spec(const eddy_op_def_t *def,
                                         const char *name) {
  if (!def->attrs)
    return NULL;
  for (const eddy_attr_spec_t *s = def->attrs; s->name; s++)
    if (strcmp(s->name, name) == 0)
      return s;
  return NULL;
}

static eddy_status_t check_attrs(const eddy_op_t *op) {
  const eddy_op_def_t *def = op->def;
  for (uint32_t i = 0; i < op->num_attrs; i++) {
    const char *name = op->attrs[i].name->str;
    if (strchr(name, '.'))
      continue; // discardable ("tf.device"): allowed anywhere
    const eddy_attr_spec_t *s = find_spec(def, name);
    if (!s)
      return eddy_ir_op_error(op, "has unknown attribute '%s'", name);
    const eddy_attr_t *a = op->attrs[i].value;
    if (!a)
      return eddy_ir_op_error(op, "attribute '%s' has no value", name);
    if (a->kind != s->kind)
      return eddy_ir_op_error(op, "attribute '%s' must be %s, found %s", name,
                              attr_kind_name(s->kind), attr_kind_name(a->kind));
  }
  if (def->attrs)
    for (const eddy_attr_spec_t *s = def->attrs; s->name; s++)
      if (!s->optional && !eddy_ir_op_attr(op, s->name))
        return eddy_ir_op_error(op, "requires attribute '%s' (%s)", s->name,
                                attr_kind_name(s->kind));
  return NULL;
}

/// Runs the shape function on the op's operands and attributes and checks
/// that every declared result type could be the inferred one.
static eddy_status_t check_inferred(verifier_t *v, const eddy_op_t *op) {
  const eddy_op_def_t *def = op->def;
  const eddy_type_t *small[8];
  const eddy_type_t **types = small;
  if (op->num_operands > 8) {
    types = malloc(op->num_operands * sizeof(*types));
    if (!types)
      return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  }
  for (uint32_t i = 0; i < op->num_operands; i++)
    types[i] = op->operands[i].value->type;
  eddy_infer_ctx_t ic = {
      .ctx = op->ctx,
      .def = def,
      .operand_types = types,
      .num_operands = op->num_operands,
      .attrs = op->attrs,
      .num_attrs = op->num_attrs,
      .loc = op->loc,
      .op = op,
  };
  eddy_status_t st = def->infer(&ic);
  if (!st && ic.num_results != op->num_results)
    st = eddy_ir_op_error(op, "shape function gives %zu result%s, op has %u",
                          ic.num_results, plural((long)ic.num_results),
                          op->num_results);
  for (uint32_t i = 0; !st && i < op->num_results; i++) {
    const eddy_type_t *declared = op->results[i].type;
    const eddy_type_t *inferred = ic.results[i];
    if (!declared || !inferred ||
        !eddy_ir_type_is_compatible(declared, inferred))
      st = eddy_ir_op_error(op,
                            "result #%u has type %s, incompatible with the "
                            "inferred type %s",
                            i, type_str(&v->t1, declared),
                            type_str(&v->t2, inferred));
  }
  free((void *)ic.results); // grown with realloc by eddy_ir_infer_push
  if (types != small)
    free(types);
  return st;
}

/// ---- Dominance ----

/// Explains why operand #i (val) of op is not visible.
static eddy_status_t not_visible(const eddy_op_t *op, uint32_t i,
                                 const eddy_value_t *val) {
  const eddy_block_t *vb = eddy_ir_value_block(val);
  if (!vb)
    return eddy_ir_op_error(op,
                            "operand #%u is defined by an op that is not "
                            "in any block",
                            i);
  for (const eddy_op_t *a = op; a; a = eddy_ir_op_parent_op(a))
    if (a->block == vb)
      return eddy_ir_op_error(op, "operand #%u does not dominate this use", i);
  const eddy_op_t *owner = eddy_ir_block_parent_op(vb);
  if (owner && owner != op && eddy_ir_op_is_ancestor(owner, op))
    return eddy_ir_op_error(op,
                            "operand #%u is defined in another block of "
                            "a region of '%s' that does not enclose "
                            "this use",
                            i, owner->name->str);
  return eddy_ir_op_error(op,
                          "operand #%u is defined inside a region of '%s' "
                          "and is not visible here",
                          i, owner ? owner->name->str : "<detached op>");
}

static eddy_status_t check_operands(verifier_t *v, const eddy_op_t *op) {
  for (uint32_t i = 0; i < op->num_operands; i++) {
    const eddy_value_t *val = op->operands[i].value;
    if (!val)
      return eddy_ir_op_error(op, "operand #%u is null", i);
    if (!op->block)
      continue; // a detached root: there is no scope to check against
    uintptr_t d = (uintptr_t)eddy_ptrmap_get(&v->scope, val);
    if (d) {
      if (d < v->floor)
        return eddy_ir_op_error(op,
                                "operand #%u uses a value defined "
                                "outside the isolated '%s' that "
                                "encloses it",
                                i, v->isolated->name->str);
      continue;
    }
    // A dataflow back edge: its op verifier says which later values it
    // may use; here it suffices that the value is in this same block.
    if (eddy_ir_op_has_trait(op, EDDY_TRAIT_BACKEDGE) && val->def &&
        val->def->block == op->block)
      continue;
    return not_visible(op, i, val);
  }
  return NULL;
}

/// ---- The walk ----

static eddy_status_t verify_rec(verifier_t *v, const eddy_op_t *op);

static bool region_needs_terminator(const eddy_op_t *parent) {
  // The module body is a symbol table, not code: nothing ends it.
  return !eddy_ir_op_is(parent, "builtin.module");
}

/// check_terms: terminators must be last (unless the parent is permissive);
/// need_term: the block must also end with one (not in a module body).
static eddy_status_t verify_block(verifier_t *v, const eddy_op_t *parent,
                                  uint32_t region_index, uint32_t block_index,
                                  const eddy_block_t *b, bool check_terms,
                                  bool need_term) {
  for (uint32_t i = 0; i < b->num_args; i++)
    scope_put(v, b->args[i], v->depth);
  eddy_status_t st = NULL;
  for (const eddy_op_t *o = b->first; o && !st; o = o->next) {
    st = verify_rec(v, o);
    if (st)
      break;
    if (check_terms && eddy_ir_op_has_trait(o, EDDY_TRAIT_TERMINATOR) &&
        o->next)
      st = eddy_ir_op_error(o,
                            "is a terminator but is followed by '%s' in "
                            "its block",
                            o->next->name->str);
    for (uint32_t r = 0; !st && r < o->num_results; r++)
      scope_put(v, &o->results[r], v->depth);
  }
  if (!st && need_term && b->last &&
      !eddy_ir_op_has_trait(b->last, EDDY_TRAIT_TERMINATOR) &&
      !def_is_permissive(b->last->def))
    st = eddy_ir_op_error(parent,
                          "block #%u of region #%u must end with a "
                          "terminator, found '%s'",
                          block_index, region_index, b->last->name->str);
  // Leave the block's scope; nested blocks have already cleaned up.
  for (uint32_t i = 0; i < b->num_args; i++)
    scope_drop(v, b->args[i]);
  for (const eddy_op_t *o = b->first; o; o = o->next)
    for (uint32_t r = 0; r < o->num_results; r++)
      scope_drop(v, &o->results[r]);
  return st;
}

static eddy_status_t verify_regions(verifier_t *v, const eddy_op_t *op,
                                    bool permissive) {
  bool single =
      !permissive && eddy_ir_op_has_trait(op, EDDY_TRAIT_SINGLE_BLOCK);
  bool isolated = eddy_ir_op_has_trait(op, EDDY_TRAIT_ISOLATED);
  bool need_term = !permissive && region_needs_terminator(op);
  uint32_t saved_floor = v->floor;
  const eddy_op_t *saved_isolated = v->isolated;
  eddy_status_t st = NULL;
  v->depth++;
  if (isolated) {
    v->floor = v->depth;
    v->isolated = op;
  }
  for (uint32_t r = 0; r < op->num_regions && !st; r++) {
    const eddy_region_t *reg = &op->regions[r];
    if (single) {
      size_t n = 0;
      for (const eddy_block_t *b = reg->first; b; b = b->next)
        n++;
      if (n != 1) {
        st = eddy_ir_op_error(op,
                              "region #%u must have exactly one block, "
                              "found %zu",
                              r, n);
        break;
      }
    }
    uint32_t bi = 0;
    for (const eddy_block_t *b = reg->first; b && !st; b = b->next, bi++)
      st = verify_block(v, op, r, bi, b, !permissive, need_term);
  }
  v->depth--;
  v->floor = saved_floor;
  v->isolated = saved_isolated;
  return st;
}

static eddy_status_t verify_rec(verifier_t *v, const eddy_op_t *op) {
  if (!op->def)
    return eddy_ir_op_error(op, "has no definition");
  bool permissive = def_is_permissive(op->def);
  if (!permissive) {
    EDDY_RETURN_IF_ERROR(check_counts(op));
    EDDY_RETURN_IF_ERROR(check_attrs(op));
  }
  EDDY_RETURN_IF_ERROR(check_operands(v, op));
  for (uint32_t i = 0; i < op->num_results; i++)
    if (!op->results[i].type)
      return eddy_ir_op_error(op, "result #%u has no type", i);
  EDDY_RETURN_IF_ERROR(verify_regions(v, op, permissive));
  if (permissive)
    return NULL;
  if (op->def->verify)
    EDDY_RETURN_IF_ERROR(op->def->verify(op));
  if (op->def->infer)
    EDDY_RETURN_IF_ERROR(check_inferred(v, op));
  return NULL;
}

/// Makes visible what an attached op sees from its enclosing blocks, as
/// if the walk had started at the outermost op.
static void seed_scope(verifier_t *v, const eddy_op_t *op) {
  size_t n = 0;
  for (const eddy_op_t *a = eddy_ir_op_parent_op(op); a;
       a = eddy_ir_op_parent_op(a))
    n++;
  if (n == 0) {
    // At top level or detached: the op sees only its own block (if any).
    if (op->block) {
      v->depth = 1;
      for (uint32_t i = 0; i < op->block->num_args; i++)
        scope_put(v, op->block->args[i], 1);
      for (const eddy_op_t *o = op->block->first; o && o != op; o = o->next)
        for (uint32_t r = 0; r < o->num_results; r++)
          scope_put(v, &o->results[r], 1);
    }
    return;
  }
  // Ancestors from the outermost in: chain[0] is the root, chain[n] is op.
  const eddy_op_t **chain = malloc((n + 1) * sizeof(*chain));
  if (!chain)
    return; // then only the dominance of op's own operands goes unchecked
  size_t k = n;
  for (const eddy_op_t *a = op; a; a = eddy_ir_op_parent_op(a))
    chain[k--] = a;
  for (size_t d = 1; d <= n; d++) {
    const eddy_op_t *parent = chain[d - 1];
    const eddy_op_t *inner = chain[d];
    if (eddy_ir_op_has_trait(parent, EDDY_TRAIT_ISOLATED)) {
      v->floor = (uint32_t)d;
      v->isolated = parent;
    }
    const eddy_block_t *b = inner->block;
    for (uint32_t i = 0; i < b->num_args; i++)
      scope_put(v, b->args[i], (uint32_t)d);
    for (const eddy_op_t *o = b->first; o && o != inner; o = o->next)
      for (uint32_t r = 0; r < o->num_results; r++)
        scope_put(v, &o->results[r], (uint32_t)d);
  }
  v->depth = (uint32_t)n;
  free(chain);
}

eddy_status_t eddy_ir_verify_op(const eddy_op_t *op) {
  verifier_t v;
  memset(&v, 0, sizeof(v));
  eddy_ptrmap_init(&v.scope);
  eddy_buf_init(&v.t1);
  eddy_buf_init(&v.t2);
  seed_scope(&v, op);
  eddy_status_t st = verify_rec(&v, op);
  eddy_buf_destroy(&v.t1);
  eddy_buf_destroy(&v.t2);
  eddy_ptrmap_destroy(&v.scope);
  return st;
}

eddy_status_t eddy_ir_verify_module(const eddy_module_t *m) {
  if (!m || !m->op)
    return eddy_status_create(EDDY_ERR_VERIFY, "no module to verify");
  if (!eddy_ir_op_is(m->op, "builtin.module"))
    return eddy_ir_op_error(m->op, "expected 'builtin.module' at top level");
  return eddy_ir_verify_op(m->op);
}

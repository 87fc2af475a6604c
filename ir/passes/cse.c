/// cse: common subexpression elimination.
///
/// A scoped hash table over the region tree: an op seen in a block is
/// visible to the rest of that block and to the regions nested in it, never
/// to enclosing regions (their values would not dominate) nor across an
/// ISOLATED op. Only PURE ops without regions take part; two are equal when
/// their names, operands (unordered for COMMUTATIVE binary ops), attributes
/// and result types are the same pointers (everything is interned).
#include "ir/passes/pass_util.h"
#include "ir/passes/passes.h"

#include <stdlib.h>

typedef struct cse_entry {
  eddy_op_t *op;
  uint64_t hash;
  uint32_t depth; ///< scope depth at insertion
  struct cse_entry *next; ///< bucket chain
} cse_entry_t;

typedef struct cse_table {
  eddy_pass_ctx_t *pc;
  eddy_arena_t *arena;
  cse_entry_t **buckets;
  size_t num_buckets; ///< power of two
  /// Insertion order, to pop a scope's entries when it ends.
  cse_entry_t **stack;
  size_t len, cap;
  uint32_t depth;
  uint32_t visible_from; ///< entries below this depth are hidden (isolation)
  int64_t erased;
} cse_table_t;

static bool is_commutative_pair(const eddy_op_t *op) {
  return op->num_operands == 2 &&
         eddy_ir_op_has_trait(op, EDDY_TRAIT_COMMUTATIVE);
}

static uint64_t op_hash(const eddy_op_t *op) {
  uint64_t h = eddy_hash_combine(0x9e3779b97f4a7c15ull, (uintptr_t)op->name);
  if (is_commutative_pair(op)) {
    // Order-independent combination so that add(a, b) meets add(b, a).
    uintptr_t a = (uintptr_t)op->operands[0].value;
    uintptr_t b = (uintptr_t)op->operands[1].value;
    h = eddy_hash_combine(h, a < b ? a : b);
    h = eddy_hash_combine(h, a < b ? b : a);
  } else {
    for (uint32_t i = 0; i < op->num_operands; i++)
      h = eddy_hash_combine(h, (uintptr_t)op->operands[i].value);
  }
  for (uint32_t i = 0; i < op->num_attrs; i++) {
    h = eddy_hash_combine(h, (uintptr_t)op->attrs[i].name);
    h = eddy_hash_combine(h, (uintptr_t)op->attrs[i].value);
  }
  for (uint32_t i = 0; i < op->num_results; i++)
    h = eddy_hash_combine(h, (uintptr_t)op->results[i].type);
  return h;
}

static bool op_equal(const eddy_op_t *a, const eddy_op_t *b) {
  if (a->name != b->name || a->num_operands != b->num_operands ||
      a->num_attrs != b->num_attrs || a->num_results != b->num_results)
    return false;
  bool same_order = true;
  for (uint32_t i = 0; i < a->num_operands && same_order; i++)
    same_order = a->operands[i].value == b->operands[i].value;
  if (!same_order) {
    if (!is_commutative_pair(a) ||
        a->operands[0].value != b->operands[1].value ||
        a->operands[1].value != b->operands[0].value)
      return false;
  }
  for (uint32_t i = 0; i < a->num_attrs; i++)
    if (a->attrs[i].name != b->attrs[i].name ||
        a->attrs[i].value != b->attrs[i].value)
      return false;
  for (uint32_t i = 0; i < a->num_results; i++)
    if (a->results[i].type != b->results[i].type)
      return false;
  return true;
}

static bool is_candidate(const eddy_op_t *op) {
  return op->num_regions == 0 && op->num_results > 0 &&
         eddy_passes_op_is_pure(op) &&
         !eddy_ir_op_has_trait(op, EDDY_TRAIT_TERMINATOR);
}

static eddy_op_t *table_find(const cse_table_t *t, const eddy_op_t *op,
                             uint64_t h) {
  for (cse_entry_t *e = t->buckets[h & (t->num_buckets - 1)]; e; e = e->next)
    if (e->hash == h && e->depth >= t->visible_from && op_equal(e->op, op))
      return e->op;
  return NULL;
}

static eddy_status_t table_grow(cse_table_t *t) {
  size_t nb = t->num_buckets * 2;
  cse_entry_t **b = calloc(nb, sizeof *b);
  if (!b)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  // Re-insert in stack order so each chain stays newest-first.
  for (size_t i = 0; i < t->len; i++) {
    cse_entry_t *e = t->stack[i];
    e->next = b[e->hash & (nb - 1)];
    b[e->hash & (nb - 1)] = e;
  }
  free(t->buckets);
  t->buckets = b;
  t->num_buckets = nb;
  return NULL;
}

static eddy_status_t table_insert(cse_table_t *t, eddy_op_t *op, uint64_t h) {
  if (t->len == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 64;
    cse_entry_t **s = realloc(t->stack, cap * sizeof *s);
    if (!s)
      return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
    t->stack = s;
    t->cap = cap;
  }
  if (t->len >= t->num_buckets)
    EDDY_RETURN_IF_ERROR(table_grow(t));
  cse_entry_t *e = eddy_arena_alloc(t->arena, sizeof *e);
  *e = (cse_entry_t){.op = op, .hash = h, .depth = t->depth};
  size_t slot = h & (t->num_buckets - 1);
  e->next = t->buckets[slot];
  t->buckets[slot] = e;
  t->stack[t->len++] = e;
  return NULL;
}

/// Removes the entries of the innermost scope. Chains are newest-first, so
/// each popped entry is the head of its chain.
static void table_pop_scope(cse_table_t *t) {
  while (t->len > 0 && t->stack[t->len - 1]->depth == t->depth) {
    cse_entry_t *e = t->stack[--t->len];
    size_t slot = e->hash & (t->num_buckets - 1);
    t->buckets[slot] = e->next;
  }
  t->depth--;
}

static eddy_status_t cse_region(cse_table_t *t, eddy_region_t *r,
                                bool isolated);

static eddy_status_t cse_block(cse_table_t *t, eddy_block_t *b) {
  for (eddy_op_t *op = b->first, *next; op; op = next) {
    next = op->next;
    bool isolated = eddy_ir_op_has_trait(op, EDDY_TRAIT_ISOLATED);
    for (uint32_t r = 0; r < op->num_regions; r++)
      EDDY_RETURN_IF_ERROR(cse_region(t, &op->regions[r], isolated));
    if (!is_candidate(op))
      continue;
    uint64_t h = op_hash(op);
    eddy_op_t *prior = table_find(t, op, h);
    if (!prior) {
      EDDY_RETURN_IF_ERROR(table_insert(t, op, h));
      continue;
    }
    for (uint32_t i = 0; i < op->num_results; i++)
      eddy_ir_value_replace_all_uses(&op->results[i], &prior->results[i]);
    eddy_ir_op_erase(op);
    t->erased++;
  }
  return NULL;
}

static eddy_status_t cse_region(cse_table_t *t, eddy_region_t *r,
                                bool isolated) {
  uint32_t saved_visible = t->visible_from;
  // Each block is its own scope: without dominance information a value of
  // one block may not be visible in a sibling block.
  for (eddy_block_t *b = r->first; b; b = b->next) {
    t->depth++;
    if (isolated)
      t->visible_from = t->depth;
    eddy_status_t st = cse_block(t, b);
    table_pop_scope(t);
    t->visible_from = saved_visible;
    if (st)
      return st;
  }
  return NULL;
}

static eddy_status_t cse_run(eddy_pass_ctx_t *pc, eddy_module_t *m) {
  cse_table_t t = {.pc = pc, .arena = eddy_ir_pass_scratch(pc)};
  t.num_buckets = 256;
  t.buckets = calloc(t.num_buckets, sizeof *t.buckets);
  if (!t.buckets)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  eddy_status_t st = NULL;
  // Functions are isolated from each other and from the module.
  for (eddy_op_t *f = eddy_ir_module_body(m)->first; f && !st; f = f->next)
    for (uint32_t r = 0; r < f->num_regions && !st; r++)
      st = cse_region(&t, &f->regions[r], true);
  free(t.buckets);
  free(t.stack);
  if (t.erased) {
    eddy_ir_pass_stat_add(pc, "erased-ops", t.erased);
    eddy_ir_pass_mark_changed(pc);
  }
  return st;
}

const eddy_pass_t eddy_pass_cse = {
    .name = "cse",
    .summary = "merge identical side-effect-free ops (scoped by region)",
    .run = cse_run,
};

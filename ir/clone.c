/// Deep copies of ops and regions.
#include "ir/ir_internal.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/// Operands that were not in the map when their op was copied. They may
/// name a value defined later in the copied region (a back edge, as in
/// df.merge), so they are looked up again once everything is copied.
typedef struct eddy_clone_state {
  eddy_ptrmap_t *map;
  eddy_use_t **pending;
  size_t num_pending, cap_pending;
} eddy_clone_state_t;

static void eddy_clone_pending_push(eddy_clone_state_t *cs, eddy_use_t *u) {
  if (cs->num_pending == cs->cap_pending) {
    size_t cap = cs->cap_pending ? cs->cap_pending * 2 : 16;
    eddy_use_t **p = realloc(cs->pending, cap * sizeof(*p));
    if (!p) {
      fprintf(stderr, "eddy: out of memory (clone)\n");
      abort();
    }
    cs->pending = p;
    cs->cap_pending = cap;
  }
  cs->pending[cs->num_pending++] = u;
}

static void eddy_clone_region_into(eddy_clone_state_t *cs,
                                   const eddy_region_t *src,
                                   eddy_region_t *dst);

static eddy_op_t *eddy_clone_op(eddy_clone_state_t *cs, const eddy_op_t *op) {
  eddy_ctx_t *ctx = op->ctx;
  eddy_arena_t *a = ctx->arena;
  eddy_op_t *c = eddy_arena_alloc(a, sizeof(*c));
  c->ctx = ctx;
  c->def = op->def;
  c->name = op->name;
  c->loc = op->loc;
  /* operands */
  eddy_value_t *small[8];
  eddy_value_t **vals = small;
  if (op->num_operands > 8) {
    vals = malloc(op->num_operands * sizeof(*vals));
    if (!vals) {
      fprintf(stderr, "eddy: out of memory (clone)\n");
      abort();
    }
  }
  for (uint32_t i = 0; i < op->num_operands; i++) {
    eddy_value_t *v = op->operands[i].value;
    eddy_value_t *m = v ? eddy_ptrmap_get(cs->map, v) : NULL;
    vals[i] = m ? m : v;
  }
  eddy_ir_op_set_operands(c, vals, op->num_operands);
  for (uint32_t i = 0; i < op->num_operands; i++)
    if (op->operands[i].value && vals[i] == op->operands[i].value)
      eddy_clone_pending_push(cs, &c->operands[i]);
  if (vals != small)
    free(vals);
  /* results */
  c->num_results = op->num_results;
  if (op->num_results) {
    c->results = eddy_arena_alloc(a, op->num_results * sizeof(eddy_value_t));
    for (uint32_t i = 0; i < op->num_results; i++) {
      c->results[i].type = op->results[i].type;
      c->results[i].def = c;
      c->results[i].index = i;
      eddy_ptrmap_put(cs->map, &op->results[i], &c->results[i]);
    }
  }
  /* attributes: the op owns its list, so copy it */
  c->num_attrs = op->num_attrs;
  if (op->num_attrs)
    c->attrs = eddy_arena_dup(a, op->attrs,
                              op->num_attrs * sizeof(eddy_named_attr_t));
  /* regions */
  c->num_regions = op->num_regions;
  if (op->num_regions) {
    c->regions = eddy_arena_alloc(a, op->num_regions * sizeof(eddy_region_t));
    for (uint32_t i = 0; i < op->num_regions; i++) {
      c->regions[i].parent = c;
      eddy_clone_region_into(cs, &op->regions[i], &c->regions[i]);
    }
  }
  return c;
}

static void eddy_clone_region_into(eddy_clone_state_t *cs,
                                   const eddy_region_t *src,
                                   eddy_region_t *dst) {
  /* All blocks and their arguments first: an op may use the arguments of
     a later block. */
  size_t n = 0;
  for (const eddy_block_t *b = src->first; b; b = b->next)
    n++;
  if (!n)
    return;
  eddy_block_t **copies = malloc(n * sizeof(*copies));
  if (!copies) {
    fprintf(stderr, "eddy: out of memory (clone)\n");
    abort();
  }
  size_t k = 0;
  for (const eddy_block_t *b = src->first; b; b = b->next, k++) {
    eddy_block_t *nb = eddy_ir_region_add_block(dst);
    copies[k] = nb;
    for (uint32_t i = 0; i < b->num_args; i++) {
      eddy_value_t *arg = eddy_ir_block_add_arg(nb, b->args[i]->type);
      eddy_ptrmap_put(cs->map, b->args[i], arg);
    }
  }
  k = 0;
  for (const eddy_block_t *b = src->first; b; b = b->next, k++)
    for (const eddy_op_t *op = b->first; op; op = op->next)
      eddy_ir_op_append(eddy_clone_op(cs, op), copies[k]);
  free(copies);
}

static void eddy_clone_finish(eddy_clone_state_t *cs) {
  for (size_t i = 0; i < cs->num_pending; i++) {
    eddy_use_t *u = cs->pending[i];
    eddy_value_t *m = eddy_ptrmap_get(cs->map, u->value);
    if (m)
      eddy_ir_op_set_operand(u->owner, u->index, m);
  }
  free(cs->pending);
}

eddy_op_t *eddy_ir_op_clone(const eddy_op_t *op, eddy_ptrmap_t *map) {
  eddy_clone_state_t cs = {map, NULL, 0, 0};
  eddy_op_t *c = eddy_clone_op(&cs, op);
  eddy_clone_finish(&cs);
  return c;
}

void eddy_ir_region_clone_into(const eddy_region_t *src, eddy_region_t *dst,
                               eddy_ptrmap_t *map) {
  eddy_clone_state_t cs = {map, NULL, 0, 0};
  eddy_clone_region_into(&cs, src, dst);
  eddy_clone_finish(&cs);
}

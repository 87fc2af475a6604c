/// dce: dead code elimination.
///
/// Erases ops with no used results and no side effects (PURE ops, and
/// ctl.if / ctl.while whose regions are pure), innermost and last first so
/// chains go at once. Also drops unused results of ctl.if, and loop values
/// of ctl.while that nothing outside their own update chain reads.
#include "ir/passes/pass_util.h"
#include "ir/passes/passes.h"

#include <stdlib.h>

typedef struct dce_state {
  eddy_pass_ctx_t *pc;
  bool changed;
} dce_state_t;

/// v is only used, directly or through effect-free ops of the yield's
/// block (a use inside a nested region counts as a use by the op of that
/// block holding it), to compute operand `index` of the terminator `yield`.
/// Such a value can be dropped together with that operand. `proven` holds
/// the ops already shown to only feed it, so shared subexpressions are
/// visited once.
static void dce_stat(dce_state_t *s, const char *stat, int64_t n) {
  if (s->pc)
    eddy_ir_pass_stat_add(s->pc, stat, n);
}

static bool only_feeds(const eddy_value_t *v, const eddy_op_t *yield,
                       uint32_t index, eddy_ptrmap_t *proven, int depth) {
  if (depth > 256)
    return false; // long chains: give up rather than recurse deeply
  for (const eddy_use_t *u = v->uses; u; u = u->next) {
    const eddy_op_t *user = u->owner;
    if (user == yield) {
      if (u->index != index)
        return false;
      continue;
    }
    while (user && user->block != yield->block)
      user = eddy_ir_op_parent_op(user);
    if (!user || user == yield || !eddy_passes_op_is_effect_free(user))
      return false;
    if (eddy_ptrmap_has(proven, user))
      continue;
    for (uint32_t r = 0; r < user->num_results; r++)
      if (!only_feeds(&user->results[r], yield, index, proven, depth + 1))
        return false;
    eddy_ptrmap_put(proven, user, (void *)user);
  }
  return true;
}

/// Drops the loop values of a ctl.while that are dead: result unused, cond
/// argument unused, body argument only feeding its own next value.
static eddy_status_t dce_while(dce_state_t *s, eddy_op_t *op,
                               eddy_op_t **out_op) {
  *out_op = op;
  if (op->num_regions != 2)
    return NULL;
  eddy_block_t *cond = eddy_ir_region_entry(&op->regions[0]);
  eddy_block_t *body = eddy_ir_region_entry(&op->regions[1]);
  if (!cond || !body || cond->next || body->next)
    return NULL;
  eddy_op_t *yield = eddy_ir_block_terminator(body);
  uint32_t n = op->num_results;
  if (!yield || yield->num_operands != n || cond->num_args != n ||
      body->num_args != n || op->num_operands != n)
    return NULL;
  bool *keep = malloc(n ? n : 1);
  if (!keep)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  uint32_t dropped = 0;
  eddy_ptrmap_t proven;
  eddy_ptrmap_init(&proven);
  for (uint32_t i = 0; i < n; i++) {
    eddy_ptrmap_clear(&proven);
    keep[i] = op->results[i].uses || cond->args[i]->uses ||
              !only_feeds(body->args[i], yield, i, &proven, 0);
    dropped += !keep[i];
  }
  eddy_ptrmap_destroy(&proven);
  if (dropped == 0) {
    free(keep);
    return NULL;
  }
  // Cut the yield operands, then the chains that computed them go.
  eddy_value_t **next = malloc((n - dropped + 1) * sizeof *next);
  if (!next) {
    free(keep);
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  }
  size_t k = 0;
  for (uint32_t i = 0; i < n; i++)
    if (keep[i])
      next[k++] = eddy_ir_op_operand(yield, i);
  eddy_ir_op_set_operands(yield, next, k);
  free(next);
  dce_stat(s, "erased-ops",
                        eddy_passes_erase_dead_in_block(body));
  eddy_status_t st = eddy_passes_rebuild_op(op, keep, keep, keep, out_op);
  free(keep);
  if (st)
    return st;
  dce_stat(s, "dropped-loop-values", dropped);
  s->changed = true;
  return NULL;
}

/// Drops the unused results of a ctl.if.
static eddy_status_t dce_if(dce_state_t *s, eddy_op_t *op,
                            eddy_op_t **out_op) {
  *out_op = op;
  uint32_t n = op->num_results;
  uint32_t dropped = 0;
  for (uint32_t i = 0; i < n; i++)
    dropped += op->results[i].uses == NULL;
  if (dropped == 0 || op->num_regions != 2)
    return NULL;
  eddy_op_t *yields[2];
  for (int r = 0; r < 2; r++) {
    eddy_block_t *b = eddy_ir_region_entry(&op->regions[r]);
    yields[r] = b && !b->next ? eddy_ir_block_terminator(b) : NULL;
    if (!yields[r] || yields[r]->num_operands != n)
      return NULL;
  }
  bool *keep = malloc(n);
  eddy_value_t **vals = malloc(n * sizeof *vals);
  if (!keep || !vals) {
    free(keep);
    free(vals);
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  }
  for (uint32_t i = 0; i < n; i++)
    keep[i] = op->results[i].uses != NULL;
  for (int r = 0; r < 2; r++) {
    size_t k = 0;
    for (uint32_t i = 0; i < n; i++)
      if (keep[i])
        vals[k++] = eddy_ir_op_operand(yields[r], i);
    eddy_ir_op_set_operands(yields[r], vals, k);
    dce_stat(s, "erased-ops",
                          eddy_passes_erase_dead_in_region(&op->regions[r]));
  }
  free(vals);
  eddy_status_t st = eddy_passes_rebuild_op(op, keep, NULL, NULL, out_op);
  free(keep);
  if (st)
    return st;
  dce_stat(s, "dropped-if-results", dropped);
  s->changed = true;
  return NULL;
}

static eddy_status_t dce_block(dce_state_t *s, eddy_block_t *b);

static eddy_status_t dce_region(dce_state_t *s, eddy_region_t *r) {
  for (eddy_block_t *b = r->last; b; b = b->prev)
    EDDY_RETURN_IF_ERROR(dce_block(s, b));
  return NULL;
}

static eddy_status_t dce_block(dce_state_t *s, eddy_block_t *b) {
  eddy_op_t *op = b->last;
  while (op) {
    eddy_op_t *prev = op->prev;
    if (eddy_passes_op_is_dead(op)) {
      eddy_ir_op_erase(op);
      dce_stat(s, "erased-ops", 1);
      s->changed = true;
      op = prev;
      continue;
    }
    for (uint32_t r = 0; r < op->num_regions; r++)
      EDDY_RETURN_IF_ERROR(dce_region(s, &op->regions[r]));
    if (eddy_ir_op_is(op, "ctl.while"))
      EDDY_RETURN_IF_ERROR(dce_while(s, op, &op));
    else if (eddy_ir_op_is(op, "ctl.if"))
      EDDY_RETURN_IF_ERROR(dce_if(s, op, &op));
    if (eddy_passes_op_is_dead(op)) { // its regions may have emptied
      eddy_ir_op_erase(op);
      dce_stat(s, "erased-ops", 1);
      s->changed = true;
    }
    op = prev;
  }
  return NULL;
}

/// Sweeps the bodies of the functions from `first` on (only `first` when
/// one_func) until nothing changes.
static eddy_status_t dce_funcs(dce_state_t *s, eddy_op_t *first,
                               bool one_func) {
  // Dropping a loop value can make values from before the loop dead, so
  // repeat; each round only removes, hence the bound is generous.
  for (int round = 0; round < 16; round++) {
    s->changed = false;
    // Functions themselves are never dropped: only their bodies are swept.
    for (eddy_op_t *f = first; f; f = one_func ? NULL : f->next)
      for (uint32_t r = 0; r < f->num_regions; r++)
        EDDY_RETURN_IF_ERROR(dce_region(s, &f->regions[r]));
    if (!s->changed)
      break;
    if (s->pc)
      eddy_ir_pass_mark_changed(s->pc);
  }
  return NULL;
}

static eddy_status_t dce_run(eddy_pass_ctx_t *pc, eddy_module_t *m) {
  dce_state_t s = {.pc = pc};
  return dce_funcs(&s, eddy_ir_module_body(m)->first, false);
}

eddy_status_t eddy_passes_dce_func(eddy_op_t *func) {
  dce_state_t s = {.pc = NULL};
  return dce_funcs(&s, func, true);
}

const eddy_pass_t eddy_pass_dce = {
    .name = "dce",
    .summary = "remove side-effect-free ops whose results are unused, "
               "unused ctl.if results and dead ctl.while loop values",
    .run = dce_run,
};

/// licm: loop-invariant code motion for ctl.while.
///
/// Moves PURE ops without regions from the top level of a loop's cond and
/// body blocks to right before the loop when every operand is defined
/// outside the loop. From the body (which may run zero times) only ops that
/// cannot fail at run time move. Ops are visited in order, so a chain of
/// invariant ops moves together; loops are handled innermost first, so an
/// op can leave several loops in one run.
#include "ir/passes/pass_util.h"
#include "ir/passes/passes.h"

#include <stdlib.h>

/// `speculative`: the op's block may not run at all (the body of a loop
/// that may run zero times). Hoisting an op that can fail out of it would
/// turn a working program into a failing one, so those stay. The cond
/// block runs at least once whenever the loop is reached.
static bool is_invariant(const eddy_op_t *op, const eddy_op_t *loop,
                         bool speculative) {
  if (op->num_regions > 0 || !eddy_passes_op_is_pure(op) ||
      eddy_ir_op_has_trait(op, EDDY_TRAIT_TERMINATOR) ||
      (speculative && eddy_passes_op_may_fail(op)))
    return false;
  for (uint32_t i = 0; i < op->num_operands; i++)
    if (!eddy_passes_value_defined_outside(op->operands[i].value, loop))
      return false;
  return true;
}

static int64_t hoist_from(eddy_op_t *loop) {
  int64_t moved = 0;
  for (uint32_t r = 0; r < loop->num_regions; r++)
    for (eddy_block_t *b = loop->regions[r].first; b; b = b->next)
      for (eddy_op_t *op = b->first, *next; op; op = next) {
        next = op->next;
        if (is_invariant(op, loop, r == 1)) {
          eddy_ir_op_move_before(op, loop);
          moved++;
        }
      }
  return moved;
}

static eddy_status_t licm_run(eddy_pass_ctx_t *pc, eddy_module_t *m) {
  // Post-order puts inner loops before the loops that contain them.
  eddy_op_t **loops = NULL;
  size_t n = 0;
  EDDY_RETURN_IF_ERROR(eddy_passes_collect_loops(m, &loops, &n));
  int64_t moved = 0;
  for (size_t i = 0; i < n; i++)
    moved += hoist_from(loops[i]);
  free(loops);
  if (moved) {
    eddy_ir_pass_stat_add(pc, "hoisted-ops", moved);
    eddy_ir_pass_mark_changed(pc);
  }
  return NULL;
}

const eddy_pass_t eddy_pass_licm = {
    .name = "licm",
    .summary = "hoist loop-invariant side-effect-free ops out of ctl.while",
    .run = licm_run,
};

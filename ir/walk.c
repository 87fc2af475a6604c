/// Pre- and post-order walks over nested ops.
#include "ir/ir_internal.h"

eddy_walk_result_t eddy_ir_walk_pre(eddy_op_t *root, eddy_walk_fn_t fn,
                                    void *user) {
  eddy_walk_result_t r = fn(root, user);
  if (r == EDDY_WALK_INTERRUPT)
    return r;
  if (r == EDDY_WALK_SKIP)
    return EDDY_WALK_ADVANCE;
  for (uint32_t i = 0; i < root->num_regions; i++)
    for (eddy_block_t *b = root->regions[i].first; b; b = b->next)
      for (eddy_op_t *op = b->first, *next; op; op = next) {
        next = op->next;
        if (eddy_ir_walk_pre(op, fn, user) == EDDY_WALK_INTERRUPT)
          return EDDY_WALK_INTERRUPT;
      }
  return EDDY_WALK_ADVANCE;
}

eddy_walk_result_t eddy_ir_walk_post(eddy_op_t *root, eddy_walk_fn_t fn,
                                     void *user) {
  for (uint32_t i = 0; i < root->num_regions; i++)
    for (eddy_block_t *b = root->regions[i].first, *nb; b; b = nb) {
      nb = b->next;
      /* `next` is read before the visit: the callback may erase op. */
      for (eddy_op_t *op = b->first, *next; op; op = next) {
        next = op->next;
        if (eddy_ir_walk_post(op, fn, user) == EDDY_WALK_INTERRUPT)
          return EDDY_WALK_INTERRUPT;
      }
    }
  return fn(root, user) == EDDY_WALK_INTERRUPT ? EDDY_WALK_INTERRUPT
                                               : EDDY_WALK_ADVANCE;
}

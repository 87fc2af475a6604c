/// Helpers shared by the op verifiers and shape functions of eddy's
/// dialects (not a public API).
#ifndef EDDY_DIALECTS_DIALECTS_INTERNAL_H
#define EDDY_DIALECTS_DIALECTS_INTERNAL_H

#include "ir/ir.h"

/// Holds the text of a few types for one diagnostic, so that a verifier can
/// write
///   eddy_tt_t tt = {0};
///   st = eddy_ir_op_error(op, "... %s ... %s", eddy_tt(&tt, a), eddy_tt(&tt,
///   b)); eddy_tt_free(&tt);
typedef struct eddy_tt {
  char *text[4];
  int n;
} eddy_tt_t;

/// Borrowed text of t (valid until eddy_tt_free); "?" when out of memory
/// or past the four slots, "<null type>" for NULL.
const char *eddy_tt(eddy_tt_t *tt, const eddy_type_t *t);
void eddy_tt_free(eddy_tt_t *tt);

/// A type that can hold a boolean predicate: tensor<i1>, or an unranked
/// tensor<*xi1>.
bool eddy_dialects_is_pred_type(const eddy_type_t *t);
/// A scalar integer tensor (i8, i32 or i64; rank 0 or unranked): indices
/// and sizes.
bool eddy_dialects_is_index_type(const eddy_type_t *t);

/// Checks input #i of a merge (df.merge, tf.Merge): the BACKEDGE trait lets
/// values defined later in the merge's block through, and only a result of
/// the `next_iteration` op (its name) may flow back like that. With
/// own_result_apart, the merge's own result as an input gets its own
/// message. Defined in df/df.c.
eddy_status_t eddy_dialects_verify_merge_input(const eddy_op_t *merge,
                                               uint32_t i,
                                               const char *next_iteration,
                                               bool own_result_apart);

#endif

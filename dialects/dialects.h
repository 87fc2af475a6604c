/// eddy's dialects: core (tensor math), ctl (structured control flow), tl
/// (TensorLists) and df (the dataflow primitives). Each is a table of op
/// definitions served by the generic IR machinery; the ops of core, ctl and
/// tl also have opcodes.
#ifndef EDDY_DIALECTS_DIALECTS_H
#define EDDY_DIALECTS_DIALECTS_H

#include "dialects/core/core.h"
#include "dialects/ctl/ctl.h"
#include "dialects/tl/tl.h"
#include "ir/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const eddy_dialect_t eddy_core_dialect;
extern const eddy_dialect_t eddy_ctl_dialect;
extern const eddy_dialect_t eddy_tl_dialect;
extern const eddy_dialect_t eddy_df_dialect;

/// Registers core, ctl, tl and df in ctx.
void eddy_dialects_register_all(eddy_ctx_t *ctx);

/// Every op of core, ctl and tl, numbered from their op lists. Each table
/// entry carries its opcode (eddy_op_def_t.opcode), and the parts of eddy
/// that handle ops one by one (the evaluator, autodiff, the CPU backend)
/// keep tables indexed by it, each with an entry for every opcode: a
/// handler, or the reason there is none (docs/development.md, "Adding an
/// op").
typedef enum eddy_opcode {
  EDDY_OP_NONE = 0, ///< an op of another dialect (builtin, df, tf)
#define EDDY_OPCODE_CORE(e, n) EDDY_OP_CORE_##e,
  EDDY_CORE_OP_LIST(EDDY_OPCODE_CORE)
#undef EDDY_OPCODE_CORE
#define EDDY_OPCODE_CTL(e, n) EDDY_OP_CTL_##e,
  EDDY_CTL_OP_LIST(EDDY_OPCODE_CTL)
#undef EDDY_OPCODE_CTL
#define EDDY_OPCODE_TL(e, n) EDDY_OP_TL_##e,
  EDDY_TL_OP_LIST(EDDY_OPCODE_TL)
#undef EDDY_OPCODE_TL
  EDDY_OP_COUNT_,
} eddy_opcode_t;

/// The opcode of op (EDDY_OP_NONE outside core, ctl and tl), always a
/// valid index of a table of EDDY_OP_COUNT_ entries.
static inline eddy_opcode_t eddy_dialects_opcode(const eddy_op_t *op) {
  uint16_t code = op->def ? op->def->opcode : 0;
  return code < EDDY_OP_COUNT_ ? (eddy_opcode_t)code : EDDY_OP_NONE;
}

/// "core.add" for EDDY_OP_CORE_ADD; "?" outside (0, EDDY_OP_COUNT_).
const char *eddy_dialects_opcode_name(eddy_opcode_t code);

#ifdef __cplusplus
}
#endif
#endif

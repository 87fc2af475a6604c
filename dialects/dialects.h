/// eddy's dialects: core (tensor math), ctl (structured control flow), tl
/// (TensorLists) and df (the dataflow primitives). Each is a table of op
/// definitions served by the generic IR machinery.
#ifndef EDDY_DIALECTS_DIALECTS_H
#define EDDY_DIALECTS_DIALECTS_H

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

#ifdef __cplusplus
}
#endif
#endif

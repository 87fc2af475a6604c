/// The generic IR passes: canonicalize, cse, dce, shape-infer, licm,
/// map-batch, gemm-hoist, gemm-sink, scatter-sink, row-split.
#ifndef EDDY_IR_PASSES_PASSES_H
#define EDDY_IR_PASSES_PASSES_H

#include "ir/pass.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const eddy_pass_t eddy_pass_canonicalize;
extern const eddy_pass_t eddy_pass_cse;
extern const eddy_pass_t eddy_pass_dce;
extern const eddy_pass_t eddy_pass_shape_infer;
extern const eddy_pass_t eddy_pass_licm;
extern const eddy_pass_t eddy_pass_gemm_hoist;
extern const eddy_pass_t eddy_pass_gemm_sink;
extern const eddy_pass_t eddy_pass_scatter_sink;
extern const eddy_pass_t eddy_pass_map_batch;
extern const eddy_pass_t eddy_pass_row_split;

/// The passes a backend's input gets after import, differentiation and the
/// user's pipeline (`eddy compile` runs them unless --passes says
/// otherwise; eddy_add_model and the benchmarks compile through it):
/// target-independent rewrites that pay on every backend (docs/passes.md).
/// dce drops the loop values that gemm-hoist leaves unused (a pass-through
/// input the loop no longer reads would still be copied in).
#define EDDY_PASSES_COMPILE_PIPELINE "map-batch,gemm-hoist,scatter-sink,dce"
/// The CPU target's: row-split last, so that a loop's parts run on two
/// threads (a GPU runs a loop's rows in parallel already).
#define EDDY_PASSES_COMPILE_PIPELINE_CPU                                       \
  EDDY_PASSES_COMPILE_PIPELINE ",row-split"

/// Runs dce on one function's body alone (the rest of its module is left
/// as it is), outside a pass pipeline.
eddy_status_t eddy_passes_dce_func(eddy_op_t *func);

/// Registers every pass above in ctx.
void eddy_passes_register_all(eddy_ctx_t *ctx);

#ifdef __cplusplus
}
#endif
#endif

/// Registration of the generic IR passes.
#include "ir/passes/passes.h"

void eddy_passes_register_all(eddy_ctx_t *ctx) {
  eddy_ir_pass_register(ctx, &eddy_pass_canonicalize);
  eddy_ir_pass_register(ctx, &eddy_pass_cse);
  eddy_ir_pass_register(ctx, &eddy_pass_dce);
  eddy_ir_pass_register(ctx, &eddy_pass_shape_infer);
  eddy_ir_pass_register(ctx, &eddy_pass_licm);
  eddy_ir_pass_register(ctx, &eddy_pass_map_batch);
  eddy_ir_pass_register(ctx, &eddy_pass_gemm_hoist);
  eddy_ir_pass_register(ctx, &eddy_pass_gemm_sink);
  eddy_ir_pass_register(ctx, &eddy_pass_scatter_sink);
  eddy_ir_pass_register(ctx, &eddy_pass_row_split);
}

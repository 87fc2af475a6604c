/// Fuzz target: a binary TensorFlow GraphDef through every path that reads
/// one. The functional path (v2, and v1 loops raised): import,
/// functionalize, legalize-tf, verify, shape-infer and canonicalize, as
/// `eddy grad` and compiled `eddy run` do; the v1 dataflow path: import,
/// legalize to dataflow, verify, as `eddy run --mode=interp --from=v1`
/// does. The functional path imports every node (as `eddy import`), the
/// dataflow path only what the sinks need (as `eddy run`, --prune).
/// Its mutator changes GraphDefs as graphs (graphdef_mutate.c).
#include "tests/fuzz/fuzz.h"

#include "dialects/tf/tf.h"
#include "ir/pass.h"
#include "lower/tf/tf_lower.h"

static void functional_path(const uint8_t *data, size_t size) {
  eddy_ctx_t *ctx = eddy_fuzz_ctx_create();
  if (!ctx)
    return;
  eddy_module_t *m = NULL;
  eddy_status_t st =
      eddy_tf_import_graphdef_bytes(ctx, "fuzz.pb", data, size, NULL, &m);
  if (!st)
    st = eddy_ir_verify_module(m);
  if (!st)
    st = eddy_tf_functionalize(m);
  if (!st)
    st = eddy_tf_legalize(m);
  if (!st)
    st = eddy_ir_verify_module(m);
  if (!st)
    st = eddy_ir_pm_run_pipeline(ctx, m, "shape-infer,canonicalize", NULL);
  eddy_fuzz_ignore(st);
  if (m)
    eddy_ir_module_destroy(m);
  eddy_ir_ctx_destroy(ctx);
}

static void dataflow_path(const uint8_t *data, size_t size) {
  eddy_ctx_t *ctx = eddy_fuzz_ctx_create();
  if (!ctx)
    return;
  eddy_tf_import_opts_t io = {.prune = true};
  eddy_module_t *m = NULL;
  eddy_status_t st =
      eddy_tf_import_graphdef_bytes(ctx, "fuzz.pb", data, size, &io, &m);
  if (!st)
    st = eddy_tf_legalize_dataflow(m);
  if (!st)
    st = eddy_ir_verify_module(m);
  eddy_fuzz_ignore(st);
  if (m)
    eddy_ir_module_destroy(m);
  eddy_ir_ctx_destroy(ctx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  functional_path(data, size);
  dataflow_path(data, size);
  return 0;
}

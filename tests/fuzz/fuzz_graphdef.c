/// Fuzz target: a binary TensorFlow GraphDef through every path that reads
/// one. The functional path (v2, and v1 loops raised): import,
/// functionalize, legalize-tf, verify, shape-infer and canonicalize, as
/// `eddy grad` and compiled `eddy run` do; the v1 dataflow path: import,
/// legalize to dataflow, verify, as `eddy run --mode=interp --from=v1`
/// does. The functional path imports every node (as `eddy import`), the
/// dataflow path only what the sinks need (as `eddy run`, --prune).
/// Three mutations in four change the GraphDef as a graph
/// (graphdef_mutate.c), the fourth is libFuzzer's own, on its bytes.
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

size_t eddy_fuzz_mutate(uint8_t *data, size_t size, size_t max_size,
                        uint64_t seed) {
  return eddy_fuzz_graphdef_mutate(data, size, max_size, seed);
}

#ifdef EDDY_FUZZ_LIBFUZZER
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
                               unsigned int seed);

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
                               unsigned int seed) {
  if (seed % 4) {
    size_t n = eddy_fuzz_mutate(data, size, max_size, seed);
    if (n)
      return n;
  }
  return LLVMFuzzerMutate(data, size, max_size);
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  functional_path(data, size);
  dataflow_path(data, size);
  return 0;
}

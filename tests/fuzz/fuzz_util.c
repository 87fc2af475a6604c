/// Helpers shared by the fuzz targets.
#include "tests/fuzz/fuzz.h"

#include "dialects/dialects.h"
#include "dialects/tf/tf.h"
#include "ir/passes/passes.h"
#include "lower/lower.h"
#include "lower/tf/tf_lower.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void eddy_fuzz_fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("fuzz: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  abort();
}

eddy_ctx_t *eddy_fuzz_ctx_create(void) {
  eddy_ctx_t *ctx = eddy_ir_ctx_create();
  if (!ctx)
    return NULL;
  eddy_dialects_register_all(ctx);
  eddy_tf_dialect_register(ctx);
  eddy_passes_register_all(ctx);
  eddy_lower_passes_register(ctx);
  eddy_tf_lower_passes_register(ctx);
  return ctx;
}

eddy_module_t *eddy_fuzz_parse(eddy_ctx_t *ctx, const uint8_t *data,
                               size_t size) {
  eddy_module_t *m = NULL;
  eddy_status_t st =
      eddy_ir_parse_module(ctx, "fuzz.eddy", (const char *)data, size, &m);
  if (!st)
    st = eddy_ir_verify_module(m);
  if (!st)
    return m;
  eddy_status_destroy(st);
  if (m)
    eddy_ir_module_destroy(m);
  return NULL;
}

uint64_t eddy_fuzz_rng(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void eddy_fuzz_ignore(eddy_status_t st) {
  if (st)
    eddy_status_destroy(st);
}

#if defined(EDDY_FUZZ_LIBFUZZER) && defined(EDDY_FUZZ_MUTATOR)
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
                               unsigned int seed);

/// Three mutations in four are the target's own (eddy_fuzz_mutate), the
/// fourth, and any it cannot make, libFuzzer's byte-level ones (which also
/// reach the strings and numbers inside the structure). With
/// EDDY_FUZZ_BYTES_ONLY set, all are libFuzzer's (to compare the two).
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
                               unsigned int seed) {
  static int bytes_only = -1;
  if (bytes_only < 0)
    bytes_only = getenv("EDDY_FUZZ_BYTES_ONLY") != NULL;
  if (!bytes_only && seed % 4) {
    size_t n = eddy_fuzz_mutate(data, size, max_size, seed);
    if (n)
      return n;
  }
  return LLVMFuzzerMutate(data, size, max_size);
}
#endif

/// Fuzz target: NumPy .npy bytes. Read (under a memory limit, as
/// `eddy run --memory-limit` reads its inputs); a file that reads is written
/// back in every format version, and each written file must read back as
/// the same tensor: dtype, dims and bytes.
#include "tests/fuzz/fuzz.h"

#include "runtime/npy.h"

#include <stdlib.h>
#include <string.h>

/// The limit is far above the seeds' sizes and far below the fuzzer's RSS
/// limit: a header that promises more is refused without allocating it.
#define FUZZ_NPY_MEMORY_LIMIT (64 << 20)

static void check_same(const eddy_rt_tensor_t *a, const eddy_rt_tensor_t *b,
                       int version) {
  if (a->dtype != b->dtype || a->rank != b->rank)
    eddy_fuzz_fail("npy version %d: dtype %d rank %d read back as dtype %d "
                   "rank %d",
                   version, a->dtype, a->rank, b->dtype, b->rank);
  for (int32_t i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i])
      eddy_fuzz_fail("npy version %d: dim %d is %lld, read back as %lld",
                     version, i, (long long)a->dims[i], (long long)b->dims[i]);
  size_t bytes =
      (size_t)eddy_rt_tensor_numel(a) * eddy_rt_dtype_size(a->dtype);
  if (bytes && memcmp(a->data, b->data, bytes) != 0)
    eddy_fuzz_fail("npy version %d: the data reads back different", version);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  eddy_rt_ctx_options_t ro = eddy_rt_ctx_options_default();
  ro.memory_limit = FUZZ_NPY_MEMORY_LIMIT;
  eddy_rt_ctx_t *rt = NULL;
  eddy_rt_status_t rs = eddy_rt_ctx_create(&ro, &rt);
  if (rs) {
    eddy_rt_status_destroy(rs);
    return 0;
  }
  eddy_rt_tensor_t t = eddy_rt_tensor_empty();
  rs = eddy_rt_npy_read_memory(rt, data, size, &t);
  for (int version = 0; !rs && version <= 3; version++) {
    void *out = NULL;
    size_t out_size = 0;
    eddy_rt_status_t ws = eddy_rt_npy_write_memory(&t, version, &out, &out_size);
    if (ws) { // bf16, or a header too long for version 1: refused, fine
      eddy_rt_status_destroy(ws);
      continue;
    }
    eddy_rt_tensor_t back = eddy_rt_tensor_empty();
    eddy_rt_status_t rs2 = eddy_rt_npy_read_memory(rt, out, out_size, &back);
    if (rs2)
      eddy_fuzz_fail("npy version %d: the written file does not read back: "
                     "%s",
                     version, eddy_rt_status_message(rs2));
    check_same(&t, &back, version);
    eddy_rt_tensor_release(&back);
    free(out);
  }
  if (rs)
    eddy_rt_status_destroy(rs);
  eddy_rt_tensor_release(&t);
  eddy_rt_ctx_destroy(rt);
  return 0;
}

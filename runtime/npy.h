/// NumPy .npy files: read and write tensors.
///
/// Supported: format versions 1.0, 2.0 and 3.0; C order; little-endian (or
/// byte-order-free) dtypes <f2 <f4 <f8 |b1 |i1 <i4 <i8 (f16 f32 f64 i1 i8
/// i32 i64). Everything else (Fortran order, big-endian, object or
/// structured arrays, unsigned and complex dtypes) is a clear error, as is a
/// malformed or truncated file; a malformed file never crashes the reader.
/// bf16 has no numpy dtype and cannot be written.
#ifndef EDDY_RUNTIME_NPY_H
#define EDDY_RUNTIME_NPY_H

#include "runtime/eddyrt.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Reads the .npy file at path into a new contiguous tensor owned by the
/// caller (allocated through ctx, so the memory limit applies).
eddy_rt_status_t eddy_rt_npy_read_file(eddy_rt_ctx_t *ctx, const char *path,
                                       eddy_rt_tensor_t *out_t);
/// The same from the size bytes at data (borrowed).
eddy_rt_status_t eddy_rt_npy_read_memory(eddy_rt_ctx_t *ctx, const void *data,
                                         size_t size, eddy_rt_tensor_t *out_t);

/// Writes t (any strides) to path. version: 1, 2 or 3 for that format
/// version, 0 for the smallest that fits (1.0 unless the header needs more
/// than 65535 bytes).
eddy_rt_status_t eddy_rt_npy_write_file(const char *path,
                                        const eddy_rt_tensor_t *t,
                                        int version);
/// The same into a new malloc'd buffer (*out_data; release it with free()).
eddy_rt_status_t eddy_rt_npy_write_memory(const eddy_rt_tensor_t *t,
                                          int version, void **out_data,
                                          size_t *out_size);

#ifdef __cplusplus
}
#endif
#endif

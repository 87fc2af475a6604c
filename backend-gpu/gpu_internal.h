/// backend-gpu's own declarations, shared by its files.
#ifndef EDDY_GPU_INTERNAL_H
#define EDDY_GPU_INTERNAL_H

#include "ir/status.h"

#include <mlir-c/IR.h>

#include <stdbool.h>
#include <string.h>

static inline MlirStringRef gpu_sref(const char *s) {
  return mlirStringRefCreate(s, strlen(s));
}

/// op's name is `name` ("gpu.binary").
static inline bool gpu_op_is(MlirOperation op, const char *name) {
  MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(op));
  return n.length == strlen(name) && memcmp(n.data, name, n.length) == 0;
}

/// Makes the host code of module (in the LLVM dialect, before translation)
/// use a constant amount of stack whatever its loops' trip counts: moves
/// constant-size stack slots to their function's entry block and releases
/// what each kernel launch allocates right after it (host_stack.c). Errors
/// when a stack allocation of a run-time size sits outside an entry block.
eddy_status_t gpu_bound_host_stack(MlirModule module);

/// Moves every kernel that gpu-kernel-outlining put in a gpu.module of its
/// own into one gpu.module, renamed after the module it came from, and
/// points the gpu.launch_func ops at them (merge_kernels.c).
void gpu_merge_kernel_modules(MlirModule module);

#endif

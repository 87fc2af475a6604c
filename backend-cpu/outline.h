/// Outlining of a large emitted function into kernel functions before it is
/// lowered (backend-cpu/outline.c, docs/cpu.md, "Compile times").
#ifndef EDDY_BACKEND_CPU_OUTLINE_H
#define EDDY_BACKEND_CPU_OUTLINE_H

#include "ir/status.h"

#include <mlir-c/IR.h>
#include <stdbool.h>
#include <stddef.h>

/// In every func.func of module with at least fn_ops ops (nested ops
/// counted), each run of consecutive ops of about part_ops ops becomes a
/// call of a private, internal, noinline function @__eddy_<func>_part<N>.
/// Ops of more than max_ops are split inside their regions instead; stack
/// allocations and terminators stay where they are. kernels_whole (the
/// CUDA form, whose scf.parallel nests become GPU kernels): an
/// scf.parallel counts as one op and is never split, so that each kernel
/// stays whole in one function and only the host code is divided.
eddy_status_t eddy_cpu_outline(MlirModule module, size_t fn_ops,
                               size_t part_ops, size_t max_ops,
                               bool kernels_whole);

#endif

/// Outlining of a large emitted function into kernel functions before it is
/// lowered (backend-cpu/outline.c, docs/cpu.md, "Compile times").
#ifndef EDDY_BACKEND_CPU_OUTLINE_H
#define EDDY_BACKEND_CPU_OUTLINE_H

#include "ir/status.h"

#include <mlir-c/IR.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

static inline MlirStringRef cpu_sref(const char *s) {
  return mlirStringRefCreate(s, strlen(s));
}

/// op is named name (e.g. "func.call").
static inline bool cpu_op_is(MlirOperation op, const char *name) {
  MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(op));
  return n.length == strlen(name) && memcmp(n.data, name, n.length) == 0;
}

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

/// Moves the ops first .. last (consecutive, in one block) into a new
/// private, internal, noinline function @name appended to module, which
/// takes the values they use from outside as arguments (constants are
/// copied in) and returns those of their results used after them; a call
/// of it replaces them (*out_call).
eddy_status_t cpu_outline_span(MlirModule module, MlirOperation first,
                               MlirOperation last, const char *name,
                               MlirOperation *out_call);

/// Turns each group of tasks the emitter marked (emit.c, k_cpu_task_marks)
/// into one call of the runtime's pool: every task's code becomes a
/// function (cpu_outline_span), a dispatch function @__eddy_tasksN_run(env,
/// i) calls task i with its arguments read from an environment, and
/// @__eddy_tasksN stores the arguments there, runs the tasks on the pool
/// (eddy_rt_entry_run_tasks) and returns their results (backend-cpu/
/// tasks.c). Values cross through the environment as their LLVM forms (a
/// memref as its descriptor). Without marks, nothing changes.
eddy_status_t cpu_tasks_outline(MlirModule module);

/// The calls that mark the plan's tasks in the emitted code: before the
/// first, between two, after the last.
extern const char *const k_cpu_task_marks[3];

#endif

/// Constant stack use in the GPU target's host code, whatever the trip
/// counts of its loops.
///
/// The host code runs `ctl.while` and `ctl.if` as native branches. Two kinds
/// of stack allocation would otherwise happen once per loop iteration and
/// never be released before the function returns:
/// - gpu.launch_func is turned into a kernel launch when the module is
///   translated to LLVM IR, and that translation allocates the kernel's
///   argument array on the stack where the launch is (inside the loop);
/// - the LLVM-dialect lowerings (memref copies and descriptors passed to
///   calls, for instance) put `llvm.alloca` of a constant size where the op
///   was, which may be a loop body.
/// Either way the stack grew by about a kilobyte per iteration, and a loop
/// of some thousands of iterations ran off the end of a thread's stack.
///
/// The remedy, on the module in the LLVM dialect (after the pass pipeline,
/// before translation, so it serves the object file and the JIT alike):
/// - every constant-size `llvm.alloca` outside its function's entry block
///   moves to the entry block. The generated code uses such slots only
///   until the op that needed them returns, so one slot per function serves
///   every iteration;
/// - every gpu.launch_func is bracketed by llvm.intr.stacksave and
///   llvm.intr.stackrestore, which release what its translation allocates.
/// A dynamic-size `llvm.alloca` outside the entry block is refused, as its
/// growth could not be bounded.
#include "backend-gpu/gpu_internal.h"

#include <mlir-c/IR.h>

#include <stdlib.h>
#include <string.h>

typedef struct {
  MlirOperation *ops;
  size_t len, cap;
  bool oom;
} op_list_t;

typedef struct {
  op_list_t allocas, launches;
} stack_walk_t;

static void list_push(op_list_t *l, MlirOperation op) {
  if (l->len == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 64;
    MlirOperation *ops = realloc(l->ops, cap * sizeof *ops);
    if (!ops) {
      l->oom = true;
      return;
    }
    l->ops = ops;
    l->cap = cap;
  }
  l->ops[l->len++] = op;
}

static MlirWalkResult collect(MlirOperation op, void *user) {
  stack_walk_t *w = user;
  // Kernels run on the device: their code is not the host's.
  if (gpu_op_is(op, "gpu.module") || gpu_op_is(op, "gpu.binary"))
    return MlirWalkResultSkip;
  if (gpu_op_is(op, "llvm.alloca"))
    list_push(&w->allocas, op);
  else if (gpu_op_is(op, "gpu.launch_func"))
    list_push(&w->launches, op);
  return MlirWalkResultAdvance;
}

/// The llvm.func that holds op, or a null operation.
static MlirOperation enclosing_func(MlirOperation op) {
  for (MlirOperation p = mlirOperationGetParentOperation(op);
       !mlirOperationIsNull(p); p = mlirOperationGetParentOperation(p))
    if (gpu_op_is(p, "llvm.func"))
      return p;
  return (MlirOperation){NULL};
}

static eddy_status_t hoist_alloca(MlirOperation alloca) {
  MlirOperation fn = enclosing_func(alloca);
  if (mlirOperationIsNull(fn))
    return NULL;
  MlirBlock entry = mlirRegionGetFirstBlock(mlirOperationGetRegion(fn, 0));
  if (mlirBlockEqual(mlirOperationGetBlock(alloca), entry))
    return NULL;
  MlirValue size = mlirOperationGetOperand(alloca, 0);
  MlirOperation def = mlirValueIsAOpResult(size)
                          ? mlirOpResultGetOwner(size)
                          : (MlirOperation){NULL};
  if (mlirOperationIsNull(def) || !gpu_op_is(def, "llvm.mlir.constant"))
    return eddy_status_create(EDDY_ERR_UNSUPPORTED,
                              "gpu backend: the host code allocates stack "
                              "memory of a run-time size inside a loop or "
                              "branch; its stack use would grow with the "
                              "trip count");
  MlirOperation first = mlirBlockGetFirstOperation(entry);
  MlirOperation c = mlirOperationClone(def);
  mlirBlockInsertOwnedOperationBefore(entry, first, c);
  mlirOperationSetOperand(alloca, 0, mlirOperationGetResult(c, 0));
  mlirOperationMoveAfter(alloca, c);
  return NULL;
}

static void bracket_launch(MlirOperation launch, MlirType ptr) {
  MlirLocation loc = mlirOperationGetLocation(launch);
  MlirOperationState ss =
      mlirOperationStateGet(gpu_sref("llvm.intr.stacksave"), loc);
  mlirOperationStateAddResults(&ss, 1, &ptr);
  MlirOperation save = mlirOperationCreate(&ss);
  MlirBlock b = mlirOperationGetBlock(launch);
  mlirBlockInsertOwnedOperationBefore(b, launch, save);
  MlirValue saved = mlirOperationGetResult(save, 0);
  MlirOperationState rs =
      mlirOperationStateGet(gpu_sref("llvm.intr.stackrestore"), loc);
  mlirOperationStateAddOperands(&rs, 1, &saved);
  mlirBlockInsertOwnedOperationAfter(b, launch, mlirOperationCreate(&rs));
}

eddy_status_t gpu_bound_host_stack(MlirModule module) {
  stack_walk_t w = {{NULL, 0, 0, false}, {NULL, 0, 0, false}};
  MlirOperation top = mlirModuleGetOperation(module);
  mlirOperationWalk(top, collect, &w, MlirWalkPreOrder);
  eddy_status_t st = NULL;
  if (w.allocas.oom || w.launches.oom)
    st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  for (size_t i = 0; !st && i < w.allocas.len; i++)
    st = hoist_alloca(w.allocas.ops[i]);
  if (!st && w.launches.len) {
    MlirType ptr =
        mlirTypeParseGet(mlirOperationGetContext(top), gpu_sref("!llvm.ptr"));
    for (size_t i = 0; i < w.launches.len; i++)
      bracket_launch(w.launches.ops[i], ptr);
  }
  free(w.allocas.ops);
  free(w.launches.ops);
  return st;
}

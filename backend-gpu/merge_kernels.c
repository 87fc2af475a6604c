/// One GPU module for all of a program's kernels.
///
/// gpu-kernel-outlining puts each kernel in a gpu.module of its own, and
/// each gpu.module is then translated to PTX and linked with libdevice,
/// assembled by ptxas and wrapped by fatbinary on its own, and loaded on its
/// own when the program starts: for a program of hundreds of kernels, that
/// is hundreds of LLVM modules and child processes at compile time and of
/// module loads at start-up. After outlining, this moves every kernel into
/// the first kernel's module. A kernel is renamed after the module it came
/// from (module names are distinct symbols of the top-level module; the
/// kernel names inside them need not be), and every gpu.launch_func is
/// pointed at its kernel's new place. A gpu.module that holds anything but
/// one gpu.func is left as it is.
#include "backend-gpu/gpu_internal.h"

#include "ir/support.h"

#include <mlir-c/BuiltinAttributes.h>

/// The module's one gpu.func, or a null operation when it holds anything
/// else (its terminator aside).
static MlirOperation only_kernel(MlirOperation mod) {
  MlirOperation fn = {NULL};
  MlirBlock b = mlirRegionGetFirstBlock(mlirOperationGetRegion(mod, 0));
  if (mlirBlockIsNull(b))
    return fn;
  for (MlirOperation op = mlirBlockGetFirstOperation(b);
       !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
    if (gpu_op_is(op, "gpu.func") && mlirOperationIsNull(fn))
      fn = op;
    else if (!gpu_op_is(op, "gpu.module_end"))
      return (MlirOperation){NULL};
  }
  return fn;
}

typedef struct retarget {
  MlirContext ctx;
  MlirAttribute into;   ///< the module that holds the kernels (its name)
  eddy_ptrmap_t merged; ///< names (uniqued StringAttrs) of the modules merged
} retarget_t;

static MlirWalkResult retarget_launch(MlirOperation op, void *user) {
  retarget_t *t = user;
  if (gpu_op_is(op, "gpu.module"))
    return MlirWalkResultSkip;
  if (!gpu_op_is(op, "gpu.launch_func"))
    return MlirWalkResultAdvance;
  MlirAttribute k = mlirOperationGetAttributeByName(op, gpu_sref("kernel"));
  if (mlirAttributeIsNull(k) || !mlirAttributeIsASymbolRef(k))
    return MlirWalkResultAdvance;
  MlirStringRef root = mlirSymbolRefAttrGetRootReference(k);
  if (!eddy_ptrmap_has(&t->merged, mlirStringAttrGet(t->ctx, root).ptr))
    return MlirWalkResultAdvance;
  // @module::@kernel -> @into::@module (the kernel's new name).
  MlirAttribute leaf = mlirFlatSymbolRefAttrGet(t->ctx, root);
  mlirOperationSetAttributeByName(
      op, gpu_sref("kernel"),
      mlirSymbolRefAttrGet(t->ctx, mlirStringAttrGetValue(t->into), 1, &leaf));
  return MlirWalkResultAdvance;
}

void gpu_merge_kernel_modules(MlirModule module) {
  MlirContext ctx = mlirModuleGetContext(module);
  MlirBlock top = mlirModuleGetBody(module);
  retarget_t t = {.ctx = ctx};
  eddy_ptrmap_init(&t.merged);
  MlirBlock into = {NULL};
  MlirOperation last = {NULL}; // the last kernel moved into it
  MlirOperation op = mlirBlockGetFirstOperation(top);
  while (!mlirOperationIsNull(op)) {
    MlirOperation next = mlirOperationGetNextInBlock(op);
    MlirOperation fn = gpu_op_is(op, "gpu.module") ? only_kernel(op)
                                                    : (MlirOperation){NULL};
    if (mlirOperationIsNull(fn)) {
      op = next;
      continue;
    }
    MlirAttribute name =
        mlirOperationGetAttributeByName(op, gpu_sref("sym_name"));
    mlirOperationSetAttributeByName(fn, gpu_sref("sym_name"), name);
    eddy_ptrmap_put(&t.merged, name.ptr, (void *)1);
    if (mlirBlockIsNull(into)) {
      into = mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0));
      t.into = name;
    } else {
      MlirOperation end = mlirBlockGetTerminator(into);
      if (!mlirOperationIsNull(end))
        mlirOperationMoveBefore(fn, end);
      else
        mlirOperationMoveAfter(fn, last);
      mlirOperationRemoveFromParent(op);
      mlirOperationDestroy(op);
    }
    last = fn;
    op = next;
  }
  if (!mlirBlockIsNull(into))
    mlirOperationWalk(mlirModuleGetOperation(module), retarget_launch, &t,
                      MlirWalkPreOrder);
  eddy_ptrmap_destroy(&t.merged);
}

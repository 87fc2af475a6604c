/// The MLIR -> LLVM -> object half of backend-cpu (compile.c), shared with
/// backend-gpu: the emitted module is lowered with a given pass pipeline (in
/// two stages, with a hook between), a hook may rewrite the lowered module,
/// and the result is translated to LLVM IR, optimized and written as an
/// x86-64 object (the host code; a GPU module's kernels are embedded in it
/// as data).
#ifndef EDDY_BACKEND_CPU_CODEGEN_H
#define EDDY_BACKEND_CPU_CODEGEN_H

#include "backend-cpu/cpu.h"

#include <mlir-c/IR.h>

typedef eddy_status_t (*eddy_cpu_module_hook_t)(MlirModule module,
                                                void *user);

typedef struct eddy_cpu_codegen {
  /// Passes run first (textual form; may be NULL), and a hook called on
  /// the module after them (may be NULL).
  const char *prelude;
  eddy_cpu_module_hook_t after_prelude;
  /// The pass pipeline from the emitted MLIR (or the prelude's result) to
  /// the LLVM dialect (textual form); NULL: the CPU target's (docs/cpu.md).
  const char *pipeline;
  /// Called on the lowered module before translation (may be NULL).
  eddy_cpu_module_hook_t hook;
  void *user;
} eddy_cpu_codegen_t;

/// Emits @entry of m with opts (opts->form chooses the program's form),
/// lowers it as cg says (NULL: the CPU target), translates and optimizes it
/// for the host or opts->cpu, then writes an object to obj_path and/or
/// appends the optimized LLVM IR to out_ir (with both NULL it stops after
/// the hook).
eddy_status_t eddy_cpu_codegen(const eddy_module_t *m, const char *entry,
                               const eddy_cpu_opts_t *opts,
                               const eddy_cpu_codegen_t *cg,
                               const char *obj_path, eddy_buf_t *out_ir);

/// eddy_cpu_jit_create with the lowering cg says (NULL: the CPU target's).
/// libeddyrt's entry helpers, its CUDA layer and the GPU runtime ABI are the
/// symbols the JIT-compiled code can call.
eddy_status_t eddy_cpu_jit_create_with(const eddy_module_t *m,
                                       const char *entry,
                                       const eddy_cpu_opts_t *opts,
                                       const eddy_cpu_codegen_t *cg,
                                       eddy_cpu_jit_t **out_jit);

#endif

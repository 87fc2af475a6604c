/// backend-cpu: compiles one entry function of an eddy module to native
/// x86-64 code. The function is emitted as MLIR (func, scf, arith, math,
/// memref, llvm), lowered with upstream passes to the LLVM dialect,
/// translated to LLVM IR, optimized, and either written as an object file
/// with a C header or JIT-compiled in-process. docs/cpu.md has the details.
///
/// The generated entry point (same ABI for objects and the JIT):
///   int32_t PREFIX_run(eddy_rt_ctx_t *rt, const eddy_rt_tensor_t *args,
///                      eddy_rt_tensor_t *results, char *err, size_t errlen);
/// It checks every argument (dtype, rank, dims, contiguity), allocates the
/// results through rt (owned by the caller: eddy_rt_tensor_release), and
/// returns 0 or an eddy_rt_code_t with a message in err.
#ifndef EDDY_BACKEND_CPU_CPU_H
#define EDDY_BACKEND_CPU_CPU_H

#include "dialects/dialects.h"
#include "ir/ir.h"
#include "runtime/eddyrt.h"
#include "runtime/rt_ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/// How the emitter lays out memory and loop nests. The CPU target uses
/// EDDY_CPU_FORM_HOST; the other two are the GPU target's program
/// (backend-gpu, docs/gpu.md).
typedef enum eddy_cpu_form {
  /// scf.for loop nests over host memory (the CPU target).
  EDDY_CPU_FORM_HOST = 0,
  /// The GPU target's program on the host: every loop nest over tensor
  /// elements is a 1-D scf.parallel kernel (one element per iteration),
  /// no tensor lives on the stack, and host code reads tensor memory only
  /// for loop and branch predicates. Runs on the CPU: it checks the GPU
  /// kernels' arithmetic where no GPU is present.
  EDDY_CPU_FORM_KERNELS = 1,
  /// The same with tensors in CUDA device memory: arguments are copied to
  /// the device and results back, predicates are copied to the host, f32
  /// matmuls call cuBLAS (libeddyrt's eddy_rt_entry_cuda_*). Only
  /// backend-gpu's pipeline can lower it.
  EDDY_CPU_FORM_CUDA = 2,
} eddy_cpu_form_t;

typedef struct eddy_cpu_opts {
  /// Symbol prefix: the entry is PREFIX_run. NULL: the entry's name.
  const char *prefix;
  /// LLVM CPU name ("x86-64-v3", "skylake"...). NULL: the host CPU.
  const char *cpu;
  /// LLVM optimization level 0..3.
  int opt_level;
  /// Fuse elementwise chains into one loop nest (default true).
  bool fuse;
  /// f32 matmuls with M*N*K at least this call libeddyrt's sgemm
  /// (OpenBLAS or eddy's tiled kernel, f32 accumulation); smaller ones and
  /// other dtypes are inline loops accumulating exactly in order. 0: the
  /// default (docs/cpu.md, "matmul"); 1: every f32 matmul; INT64_MAX: none.
  int64_t matmul_call_min;
  /// Memory and loop-nest layout (default EDDY_CPU_FORM_HOST).
  eddy_cpu_form_t form;
  /// EDDY_CPU_FORM_CUDA: cuBLAS products may round their inputs to TF32
  /// (EDDY_RT_SGEMM_TF32). Default false: FP32 arithmetic.
  bool matmul_tf32;
  /// exp, expm1, log, tanh and sigmoid of f32, f16 and bf16 as the math
  /// ops (libm calls, which keep loops scalar) instead of the inline
  /// approximations that vectorize (docs/cpu.md, "Numerics"). Default
  /// false. The GPU target's forms always use the math ops.
  bool libm_math;
  /// Floating-point multiplies and adds may contract into fused
  /// multiply-adds (LLVM's `contract`, as clang's -ffp-contract=fast and
  /// XLA's CPU backend): one rounding instead of two where the code
  /// generator fuses them, so results may differ from the evaluator's
  /// and between CPUs with and without FMA (docs/cpu.md, "Numerics").
  /// Default false: every op rounds, the same on every x86-64 CPU.
  bool fp_contract;
  /// A function of at least this many MLIR ops is split: its structured
  /// ops of moderate size become noinline functions, which keeps LLVM's
  /// compile time linear (docs/cpu.md, "Compile times"). 0: the default
  /// (EDDY_CPU_OUTLINE_OPS); SIZE_MAX: never.
  size_t outline_ops;
} eddy_cpu_opts_t;

/// The default of eddy_cpu_opts_t.outline_ops.
#define EDDY_CPU_OUTLINE_OPS 8000

/// prefix NULL, host CPU, -O3, fusion on.
eddy_cpu_opts_t eddy_cpu_opts_default(void);

/// The signature of a generated entry point.
typedef int32_t (*eddy_cpu_entry_fn_t)(eddy_rt_ctx_t *rt,
                                       const eddy_rt_tensor_t *args,
                                       eddy_rt_tensor_t *results, char *err,
                                       size_t errlen);

/// Appends the MLIR text emitted for func @entry of m (before any lowering).
/// m must be verified. UNSUPPORTED for ops, dtypes or dynamic shapes the
/// backend does not handle yet, naming the op and its location.
eddy_status_t eddy_cpu_emit_mlir(const eddy_module_t *m, const char *entry,
                                 const eddy_cpu_opts_t *opts, eddy_buf_t *out);

/// Appends the kernel plan of func @entry of m as text: the steps the
/// emitter will write (kernels with the ops fused into each, library and
/// list calls, host loops and branches), what each reads and writes, and
/// when each buffer dies (docs/cpu.md, "The kernel plan"). UNSUPPORTED, as
/// eddy_cpu_emit_mlir, for an op the backend cannot compile.
eddy_status_t eddy_cpu_emit_plan(const eddy_module_t *m, const char *entry,
                                 const eddy_cpu_opts_t *opts, eddy_buf_t *out);

/// Appends the C99 header declaring PREFIX_run for @entry.
eddy_status_t eddy_cpu_emit_header(const eddy_module_t *m, const char *entry,
                                   const eddy_cpu_opts_t *opts,
                                   eddy_buf_t *out);

/// Compiles @entry of m and writes an ELF object to obj_path.
eddy_status_t eddy_cpu_compile_object(const eddy_module_t *m, const char *entry,
                                      const eddy_cpu_opts_t *opts,
                                      const char *obj_path);

/// Appends the optimized LLVM IR of @entry (what compile_object turns into
/// machine code), for inspection.
eddy_status_t eddy_cpu_emit_llvm_ir(const eddy_module_t *m, const char *entry,
                                    const eddy_cpu_opts_t *opts,
                                    eddy_buf_t *out);

/// An in-process compiled entry point.
typedef struct eddy_cpu_jit eddy_cpu_jit_t;

/// Owned. JIT-compiles @entry of m (opts->cpu is ignored: the host CPU).
eddy_status_t eddy_cpu_jit_create(const eddy_module_t *m, const char *entry,
                                  const eddy_cpu_opts_t *opts,
                                  eddy_cpu_jit_t **out_jit);
void eddy_cpu_jit_destroy(eddy_cpu_jit_t *jit);
/// Borrowed; valid until the jit is destroyed.
eddy_cpu_entry_fn_t eddy_cpu_jit_entry(const eddy_cpu_jit_t *jit);
/// Calls the entry and turns a failure into a status. results must hold the
/// function's result count; on success each is owned by the caller.
eddy_status_t eddy_cpu_jit_run(const eddy_cpu_jit_t *jit, eddy_rt_ctx_t *rt,
                               const eddy_rt_tensor_t *args,
                               eddy_rt_tensor_t *results);

/// True when the CPU backend emits ops of opcode code (the GPU target
/// shares its emitter); when it does not, *out_reason (out_reason may be
/// NULL) says why, or is NULL when the backend's op table has no entry for
/// code (a gap that tests/unit/cpu/test_cpu_table.c reports).
bool eddy_cpu_opcode_supported(eddy_opcode_t code, const char **out_reason);

#ifdef __cplusplus
}
#endif
#endif

/// backend-gpu: compiles one entry function of an eddy module for NVIDIA
/// GPUs. The program is backend-cpu's emitter output in its CUDA form
/// (eddy_cpu_form_t): every loop nest over tensor elements is an
/// scf.parallel kernel over device buffers, and the host code around the
/// kernels (loops, branches, copies, cuBLAS calls) runs natively. Kernels
/// are mapped to gpu.launch, outlined, lowered to NVVM and PTX (LLVM's
/// NVPTX backend), assembled with ptxas for one architecture and bundled
/// with their PTX by fatbinary; the fatbin is embedded in the x86-64 object
/// that holds the host code. docs/gpu.md has the details.
///
/// The generated entry point has the CPU target's ABI and header (host
/// tensors in and out; cpu.h). It loads the CUDA driver at run time
/// (libeddyrt, runtime/cuda.c): without a device it returns
/// EDDY_RT_ERR_UNSUPPORTED with "no CUDA device: ...".
#ifndef EDDY_BACKEND_GPU_GPU_H
#define EDDY_BACKEND_GPU_GPU_H

#include "backend-cpu/cpu.h"
#include "ir/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct eddy_gpu_opts {
  /// Symbol prefix: the entry is PREFIX_run. NULL: the entry's name.
  const char *prefix;
  /// GPU architecture: "sm_80" or "sm_90" (NULL: sm_90).
  const char *arch;
  /// The CUDA toolkit's root (ptxas, fatbinary, nvvm/libdevice). NULL: the
  /// EDDY_CUDA_TOOLKIT environment variable, else the directory found when
  /// eddy was configured (/usr/local/cuda).
  const char *toolkit;
  /// LLVM CPU name for the host code (NULL: the host CPU).
  const char *cpu;
  /// LLVM optimization level 0..3, for the host code and the kernels.
  int opt_level;
  /// Fuse elementwise chains into one kernel (default true).
  bool fuse;
  /// f32 matmuls with M*N*K at least this call cuBLAS; smaller ones, and
  /// other dtypes, are kernels with one thread per result element. 0: the
  /// CPU target's default threshold.
  int64_t matmul_call_min;
  /// cuBLAS products may round their inputs to TF32 (tensor cores: faster,
  /// about 1e-3 relative error). Default false: FP32 arithmetic, as on the
  /// CPU ("highest" precision).
  bool matmul_tf32;
  /// The host code of a program of at least this many MLIR ops (a kernel
  /// counted as one) is split into functions of bounded size; kernels stay
  /// whole (eddy_cpu_opts_t.outline_ops, docs/gpu.md). 0: the default;
  /// SIZE_MAX: never.
  size_t outline_ops;
} eddy_gpu_opts_t;

/// prefix NULL, sm_90, the configured toolkit, host CPU, -O3, fusion on.
eddy_gpu_opts_t eddy_gpu_opts_default(void);

/// The CUDA toolkit's root that opts select (see eddy_gpu_opts_t.toolkit).
const char *eddy_gpu_toolkit(const eddy_gpu_opts_t *opts);

/// INVALID_ARGUMENT unless arch is an architecture the GPU target knows.
eddy_status_t eddy_gpu_check_arch(const char *arch);

/// Appends the MLIR emitted for @entry (its CUDA form, before GPU mapping).
eddy_status_t eddy_gpu_emit_mlir(const eddy_module_t *m, const char *entry,
                                 const eddy_gpu_opts_t *opts, eddy_buf_t *out);

/// Appends the kernel plan of @entry in its CUDA form (eddy_cpu_emit_plan).
eddy_status_t eddy_gpu_emit_plan(const eddy_module_t *m, const char *entry,
                                 const eddy_gpu_opts_t *opts, eddy_buf_t *out);

/// Appends the PTX of @entry's kernels (one module per gpu.module).
eddy_status_t eddy_gpu_emit_ptx(const eddy_module_t *m, const char *entry,
                                const eddy_gpu_opts_t *opts, eddy_buf_t *out);

/// Appends the C99 header of @entry (the CPU target's API).
eddy_status_t eddy_gpu_emit_header(const eddy_module_t *m, const char *entry,
                                   const eddy_gpu_opts_t *opts,
                                   eddy_buf_t *out);

/// Compiles @entry of m: kernels through ptxas for opts->arch (an error
/// from ptxas names the kernel module and quotes ptxas), bundled with
/// their PTX; writes the host object, with the fatbin embedded, to
/// obj_path.
eddy_status_t eddy_gpu_compile_object(const eddy_module_t *m,
                                      const char *entry,
                                      const eddy_gpu_opts_t *opts,
                                      const char *obj_path);

/// JIT-compiles @entry of m in-process (kernels as for compile_object); run
/// it with eddy_cpu_jit_run / eddy_cpu_jit_entry, destroy it with
/// eddy_cpu_jit_destroy. Without a device, running it returns
/// EDDY_ERR_UNSUPPORTED "no CUDA device: ...".
eddy_status_t eddy_gpu_jit_create(const eddy_module_t *m, const char *entry,
                                  const eddy_gpu_opts_t *opts,
                                  eddy_cpu_jit_t **out_jit);

#ifdef __cplusplus
}
#endif
#endif

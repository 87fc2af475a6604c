/// `eddy run --mode=compiled`: JIT-compile the entry with backend-cpu and run
/// it in-process on the evaluator's input values.
#ifndef EDDY_TOOLS_EDDY_RUN_COMPILED_H
#define EDDY_TOOLS_EDDY_RUN_COMPILED_H

#include "runtime/eval/eval.h"

/// What `eddy run --mode=compiled` passes to the compiler (each one of
/// eddy_cpu_opts_t's, or eddy_gpu_opts_t's for matmul_tf32; all zero: the
/// defaults).
typedef struct eddy_cli_compiled_opts {
  bool matmul_tf32;   ///< (cuda) cuBLAS products with TF32 inputs
  bool libm_math;     ///< exp, expm1, log, tanh, sigmoid as libm calls
  bool fp_contract;   ///< multiplies and adds may fuse into FMAs
  size_t outline_ops; ///< split past this many ops (0: the default)
} eddy_cli_compiled_opts_t;

/// Compiles func of m (a verified module) and runs it on args (borrowed
/// tensors); writes owned results to out_results[0..num_results). target:
/// NULL or "cpu"; "kernels", the GPU target's program run on the CPU
/// (EDDY_CPU_FORM_KERNELS); "cuda", the GPU target (backend-gpu). opts
/// may be NULL (the defaults). out_compile_ms and out_run_ms (each may be
/// NULL) get the wall-clock time of the JIT compilation and of the call;
/// an error of the compilation comes back with *out_run_ms < 0.
eddy_status_t eddy_cli_run_compiled(eddy_rt_ctx_t *rt, const eddy_module_t *m,
                                    const eddy_op_t *func, const char *target,
                                    const eddy_cli_compiled_opts_t *opts,
                                    const eddy_eval_value_t *args,
                                    size_t num_args,
                                    eddy_eval_value_t *out_results,
                                    size_t num_results, double *out_compile_ms,
                                    double *out_run_ms);

/// Milliseconds of the monotonic clock.
double eddy_cli_now_ms(void);

#endif

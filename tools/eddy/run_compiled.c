/// `eddy run --mode=compiled` (see run_compiled.h).
#define _POSIX_C_SOURCE 200809L

#include "tools/eddy/run_compiled.h"

#include "backend-cpu/cpu.h"
#include "backend-gpu/gpu.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

double eddy_cli_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

eddy_status_t eddy_cli_run_compiled(eddy_rt_ctx_t *rt, const eddy_module_t *m,
                                    const eddy_op_t *func, const char *target,
                                    const eddy_cli_compiled_opts_t *opts,
                                    const eddy_eval_value_t *args,
                                    size_t num_args,
                                    eddy_eval_value_t *out_results,
                                    size_t num_results, double *out_compile_ms,
                                    double *out_run_ms) {
  double t0 = eddy_cli_now_ms();
  if (out_run_ms)
    *out_run_ms = -1;
  if (out_compile_ms)
    *out_compile_ms = 0;
  for (size_t i = 0; i < num_args; i++)
    if (args[i].kind != EDDY_EVAL_TENSOR)
      return eddy_status_create(EDDY_ERR_UNSUPPORTED,
                                "--mode=compiled: argument %zu is not a tensor",
                                i);
  eddy_cpu_jit_t *jit = NULL;
  // A fixed prefix: function names need not be C identifiers.
  eddy_cpu_opts_t o = eddy_cpu_opts_default();
  o.prefix = "eddy_jit";
  eddy_cli_compiled_opts_t none = {0};
  if (!opts)
    opts = &none;
  o.libm_math = opts->libm_math;
  o.fp_contract = opts->fp_contract;
  o.outline_ops = opts->outline_ops;
  if (target && strcmp(target, "kernels") == 0)
    o.form = EDDY_CPU_FORM_KERNELS;
  if (target && strcmp(target, "cuda") == 0) {
    eddy_gpu_opts_t g = eddy_gpu_opts_default();
    g.prefix = o.prefix;
    g.matmul_tf32 = opts->matmul_tf32;
    g.outline_ops = opts->outline_ops;
    EDDY_RETURN_IF_ERROR(
        eddy_gpu_jit_create(m, eddy_ir_func_name(func), &g, &jit));
  } else {
    EDDY_RETURN_IF_ERROR(
        eddy_cpu_jit_create(m, eddy_ir_func_name(func), &o, &jit));
  }
  double t1 = eddy_cli_now_ms();
  if (out_compile_ms)
    *out_compile_ms = t1 - t0;
  eddy_rt_tensor_t *ts = calloc(num_args + num_results + 1, sizeof(*ts));
  if (!ts) {
    eddy_cpu_jit_destroy(jit);
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  }
  for (size_t i = 0; i < num_args; i++)
    ts[i] = args[i].tensor; // borrowed: the entry only reads
  eddy_status_t st = eddy_cpu_jit_run(jit, rt, ts, ts + num_args);
  if (out_run_ms)
    *out_run_ms = eddy_cli_now_ms() - t1;
  for (size_t i = 0; !st && i < num_results; i++)
    out_results[i] = eddy_eval_value_from_tensor(&ts[num_args + i]);
  free(ts);
  eddy_cpu_jit_destroy(jit);
  return st;
}

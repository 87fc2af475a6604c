/// The targets of the shared emitter (emit_internal.h, "The target"): what
/// each form of the program changes, in one table, so that the emitter asks
/// its target and never the form.
#include "backend-cpu/emit_internal.h"

static const cpu_target_t k_targets[] = {
    [EDDY_CPU_FORM_HOST] =
        {
            .name = "host",
            .kernels = false,
            .device_memory = false,
            .mem = "",
            .module_open = "module {\n",
        },
    [EDDY_CPU_FORM_KERNELS] =
        {
            .name = "kernels",
            .kernels = true,
            .device_memory = false,
            .mem = "",
            .module_open = "module {\n",
        },
    [EDDY_CPU_FORM_CUDA] =
        {
            .name = "cuda",
            .kernels = true,
            .device_memory = true,
            .mem = "cuda_",
            .module_open = "module attributes {gpu.container_module} {\n",
        },
};

const cpu_target_t *cpu_target_for(eddy_cpu_form_t form) {
  if ((unsigned)form >= sizeof k_targets / sizeof k_targets[0])
    return &k_targets[EDDY_CPU_FORM_HOST];
  return &k_targets[form];
}

void cpu_target_copy_n(cpu_emit_t *e, bool to_device, int dst, int src,
                       int n) {
  if (!e->tgt->device_memory)
    return;
  cpu_p(e,
        "func.call @eddy_rt_entry_cuda_%s(%%t%d, %%t%d, %%t%d) : (!llvm.ptr, "
        "!llvm.ptr, i64) -> ()\n",
        to_device ? "to_device" : "to_host", dst, src, n);
}

void cpu_target_copy(cpu_emit_t *e, bool to_device, int dst, int src,
                     int64_t bytes) {
  int n = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.constant %lld : i64\n", n, (long long)bytes);
  cpu_target_copy_n(e, to_device, dst, src, n);
}

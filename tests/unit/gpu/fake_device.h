/// The GPU target's compiled host code run against the fake driver
/// (tests/unit/runtime/fake_cuda.c), for the tests in this folder. Include
/// after cmocka.h and backend-gpu/gpu.h.
#ifndef EDDY_TESTS_UNIT_GPU_FAKE_DEVICE_H
#define EDDY_TESTS_UNIT_GPU_FAKE_DEVICE_H

#include "tests/unit/runtime/cuda_test.h"

#include <stdio.h>
#include <unistd.h>

/// Skips the test where the toolkit's ptxas is missing (the kernels are
/// still built); else loads the fake driver and cuBLAS, the driver taking
/// any module image (the compiled code's real fatbins) as one that has
/// every kernel asked of it.
static inline void fake_device_open(void **cuda, void **cublas) {
  eddy_gpu_opts_t g = eddy_gpu_opts_default();
  char ptxas[4096];
  snprintf(ptxas, sizeof ptxas, "%s/bin/ptxas", eddy_gpu_toolkit(&g));
  if (access(ptxas, X_OK) != 0) {
    printf("skipped: no %s to build the kernels\n", ptxas);
    skip();
  }
  cuda_test_load_fakes(cuda, cublas);
  void (*accept_any)(int);
  knob(*cuda, "fake_cuda_accept_any_image", &accept_any);
  accept_any(1);
}

#endif

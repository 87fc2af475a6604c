/// What the tests of libeddyrt's CUDA layer share: loading the fake driver
/// and fake cuBLAS (fake_cuda.c, fake_cublas.c) that libeddyrt then loads
/// too, finding their test knobs, and checked calls of begin and end.
#ifndef EDDY_TESTS_UNIT_RUNTIME_CUDA_TEST_H
#define EDDY_TESTS_UNIT_RUNTIME_CUDA_TEST_H

#include "tests/unit/runtime/rt_test.h"

#include <dlfcn.h>

/// Points libeddyrt at the fakes (EDDY_CUDA_DRIVER, EDDY_CUBLAS, device 0)
/// and loads them here too; exits when they cannot be loaded.
static inline void cuda_test_load_fakes(void **cuda, void **cublas) {
  setenv("EDDY_CUDA_DRIVER", EDDY_FAKE_CUDA, 1);
  setenv("EDDY_CUBLAS", EDDY_FAKE_CUBLAS, 1);
  unsetenv("EDDY_CUDA_DEVICE");
  *cuda = dlopen(EDDY_FAKE_CUDA, RTLD_NOW | RTLD_LOCAL);
  *cublas = dlopen(EDDY_FAKE_CUBLAS, RTLD_NOW | RTLD_LOCAL);
  if (!*cuda || !*cublas) {
    fprintf(stderr, "cannot load the fakes: %s\n", dlerror());
    exit(1);
  }
}

/// *slot = the fake library's test knob `name` (exits when it has none).
static inline void knob(void *lib, const char *name, void *slot) {
  void *p = dlsym(lib, name);
  if (!p) {
    fprintf(stderr, "the fake library has no %s\n", name);
    exit(1);
  }
  memcpy(slot, &p, sizeof p);
}

#define CUDA_TEST_ERRLEN 512
static char g_err[CUDA_TEST_ERRLEN];

static inline void begin_ok(void) {
  int32_t code = eddy_rt_entry_cuda_begin(NULL, g_err, sizeof g_err);
  if (code != 0)
    fail_msg("eddy_rt_entry_cuda_begin: %d %s", code, g_err);
  assert_string_equal(g_err, "");
}

static inline void end_ok(void) {
  int32_t code = eddy_rt_entry_cuda_end(NULL, g_err, sizeof g_err);
  if (code != 0)
    fail_msg("eddy_rt_entry_cuda_end: %d %s", code, g_err);
}

#endif

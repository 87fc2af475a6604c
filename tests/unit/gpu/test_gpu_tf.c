/// TensorFlow fixtures on the GPU target, checked where there is no GPU:
/// each GraphDef goes through eddy_add_model's pipeline (functionalize,
/// legalize, shape-infer, canonicalize); the GPU target's program with its
/// kernels run on the CPU (EDDY_CPU_FORM_KERNELS) must match TensorFlow's
/// outputs within the manifest's tolerance, and the CUDA object (every
/// kernel through ptxas for sm_90) must build (where the CUDA toolkit is;
/// of a model with v1 and v2 fixtures, the v2 form's; of a forward model
/// with a gradient fixture, the gradient's).
#define _POSIX_C_SOURCE 200809L

#include "backend-gpu/gpu.h"
#include "dialects/dialects.h"
#include "dialects/tf/tf.h"
#include "runtime/eval/eval.h"

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/unit/common/tf_fixtures.h"
#include "tests/unit/common/tf_compiled.h"

/// Where the CUDA objects go, and whether ptxas is there to build them.
static char g_obj[64];
static bool g_toolkit;

/// Whether the fixture path dir/stem + suffix exists.
static bool fixture_exists(const char *dir, const char *stem, size_t len,
                           const char *suffix) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%.*s%s", dir, (int)len, stem, suffix);
  return access(path, F_OK) == 0;
}

/// Whether another fixture's CUDA object holds name's kernels, so that only
/// that one is built (a few seconds each): the v2 form of a model with v1
/// and v2 fixtures (the two import to the same structured IR), and the
/// gradient fixture of a forward one (it computes the forward outputs too,
/// with the same fused kernels).
static bool kernels_covered(const char *dir, const char *name) {
  size_t n = strlen(name);
  if (n < 3)
    return false;
  if (strcmp(name + n - 3, "_v1") == 0)
    return fixture_exists(dir, name, n - 3, "_v2");
  return strcmp(name + n - 3, "_v2") == 0 &&
         fixture_exists(dir, name, n - 3, "_grad_v2");
}

/// Runs one fixture in the kernels form and builds its CUDA object; true
/// when it matches TensorFlow and the object builds.
static bool run_fixture(const char *dir, const char *name) {
  tf_fixture_run_t r;
  eddy_status_t st = tf_fixture_open_legalized(&r, dir, name, NULL);
  if (!st)
    st = tf_fixture_prepare(&r);
  eddy_cpu_opts_t o = eddy_cpu_opts_default();
  o.form = EDDY_CPU_FORM_KERNELS;
  // The kernels form stands in for the device here; LLVM's -O1 runs it
  // (the host form's -O3 is tested by test_tf_compiled), at about half the
  // compile time.
  o.opt_level = 1;
  if (!st)
    st = tf_fixture_run_jit(&r, o);
  bool ok = !st && tf_fixture_check(&r);
  if (ok && g_toolkit && !kernels_covered(dir, name)) {
    eddy_gpu_opts_t g = eddy_gpu_opts_default();
    g.prefix = "fixture";
    st = eddy_gpu_compile_object(r.m, "main", &g, g_obj);
  }
  return tf_fixture_close(&r, st, ok);
}

static void test_fixtures_on_the_gpu_target(void **state) {
  (void)state;
  snprintf(g_obj, sizeof g_obj, "/tmp/eddy-gpu-tf-%ld.o", (long)getpid());
  eddy_gpu_opts_t g = eddy_gpu_opts_default();
  char ptxas[4096];
  snprintf(ptxas, sizeof ptxas, "%s/bin/ptxas", eddy_gpu_toolkit(&g));
  g_toolkit = access(ptxas, X_OK) == 0;
  if (!g_toolkit)
    printf("no %s: the CUDA objects are not built\n", ptxas);
#ifdef TF_FIXTURES_NO_CUDA_OBJECTS
  // The sanitizer build (tests/CMakeLists.txt).
  g_toolkit = false;
  printf("sanitizer build: the CUDA objects are not built\n");
#endif
  tf_fixtures_expect_all(__FILE__, "tests/unit/gpu/test_gpu_tf.c", "gpu",
                         run_fixture);
  unlink(g_obj);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fixtures_on_the_gpu_target),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

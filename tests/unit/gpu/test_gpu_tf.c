/// TensorFlow fixtures on the GPU target, checked where there is no GPU:
/// each GraphDef goes through eddy_add_model's pipeline (functionalize,
/// legalize, shape-infer, canonicalize); the GPU target's program with its
/// kernels run on the CPU (EDDY_CPU_FORM_KERNELS) must match TensorFlow's
/// outputs within the manifest's tolerance, and the CUDA object (every
/// kernel through ptxas for sm_90) must build. All 36 do (a fixture the GPU
/// target refused would be counted and reported).
#define _POSIX_C_SOURCE 200809L

#include "backend-cpu/cpu.h"
#include "backend-gpu/gpu.h"
#include "dialects/dialects.h"
#include "dialects/tf/tf.h"
#include "ir/passes/passes.h"
#include "lower/tf/tf_lower.h"
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

static eddy_status_t optimize(eddy_ctx_t *ctx, eddy_module_t *m) {
  eddy_passes_register_all(ctx);
  eddy_pm_opts_t po;
  eddy_ir_pm_opts_default(&po);
  po.verify_each = true;
  eddy_pass_manager_t *pm = eddy_ir_pm_create(ctx, &po);
  if (!pm)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  eddy_status_t st = eddy_ir_pm_add_pipeline(pm, "shape-infer,canonicalize");
  if (!st)
    st = eddy_ir_pm_run(pm, m);
  eddy_ir_pm_destroy(pm);
  return st;
}

/// The kernels form of @main JIT-compiled and run on args.
static eddy_status_t run_kernels(const eddy_module_t *m, eddy_rt_ctx_t *rt,
                                 const eddy_eval_value_t *args, size_t nargs,
                                 eddy_eval_value_t *res, size_t nres) {
  eddy_cpu_opts_t o = eddy_cpu_opts_default();
  o.prefix = "fixture";
  o.form = EDDY_CPU_FORM_KERNELS;
  eddy_cpu_jit_t *jit = NULL;
  EDDY_RETURN_IF_ERROR(eddy_cpu_jit_create(m, "main", &o, &jit));
  eddy_rt_tensor_t ts[2 * 64];
  for (size_t i = 0; i < nargs; i++)
    ts[i] = args[i].tensor;
  eddy_status_t st = eddy_cpu_jit_run(jit, rt, ts, ts + nargs);
  for (size_t i = 0; !st && i < nres; i++)
    res[i] = eddy_eval_value_from_tensor(&ts[nargs + i]);
  eddy_cpu_jit_destroy(jit);
  return st;
}

typedef enum { FIX_OK, FIX_REFUSED, FIX_FAILED } fix_result_t;

static bool refused(eddy_status_t st) {
  return st && eddy_status_code(st) == EDDY_ERR_UNSUPPORTED &&
         strstr(eddy_status_message(st), "by the GPU target yet");
}

static fix_result_t run_fixture(const char *dir, const char *name,
                                const char *obj) {
  tf_fixture_run_t r;
  eddy_status_t st = tf_fixture_open(&r, dir, name);
  if (!st)
    st = eddy_tf_functionalize(r.m);
  if (!st)
    st = eddy_tf_legalize(r.m);
  if (!st)
    st = optimize(r.ctx, r.m);
  if (!st)
    st = run_kernels(r.m, r.rt, r.args, r.mf.num_feeds, r.res,
                     r.mf.num_fetches);
  if (refused(st)) {
    printf("%-24s %-10s %s\n", name, "gpu", eddy_status_message(st));
    eddy_status_destroy(st);
    tf_fixture_close(&r, NULL, true);
    return FIX_REFUSED;
  }
  bool ok = !st && tf_fixture_check(&r);
  if (ok) {
    eddy_gpu_opts_t g = eddy_gpu_opts_default();
    g.prefix = "fixture";
    st = eddy_gpu_compile_object(r.m, "main", &g, obj);
  }
  ok = tf_fixture_close(&r, st, ok);
  printf("%-24s %-10s %s\n", name, "gpu", ok ? "ok" : "FAIL");
  return ok ? FIX_OK : FIX_FAILED;
}

static void test_fixtures_on_the_gpu_target(void **state) {
  (void)state;
  char *names[256];
  size_t n;
  char *dir =
      tf_fixtures_list(__FILE__, "tests/unit/gpu/test_gpu_tf.c", names, 256, &n);
  char obj[64];
  snprintf(obj, sizeof obj, "/tmp/eddy-gpu-tf-%ld.o", (long)getpid());
  size_t count[3] = {0, 0, 0};
  for (size_t i = 0; i < n; i++) {
    count[run_fixture(dir, names[i], obj)]++;
    free(names[i]);
  }
  free(dir);
  unlink(obj);
  printf("gpu target: %zu fixtures match TensorFlow, %zu refused, %zu failed\n",
         count[FIX_OK], count[FIX_REFUSED], count[FIX_FAILED]);
  assert_int_equal(n, 36);
  assert_int_equal(count[FIX_FAILED], 0);
  assert_int_equal(count[FIX_OK], 36);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fixtures_on_the_gpu_target),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

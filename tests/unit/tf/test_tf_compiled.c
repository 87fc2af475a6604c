/// TensorFlow fixtures compiled: each GraphDef is imported, functionalized,
/// legalized, run through shape-infer and canonicalize (the pipeline of
/// eddy_add_model), JIT-compiled by the CPU backend and run on the
/// fixture's inputs; the results must match TensorFlow's outputs within
/// the manifest's tolerance. shape-infer gives TensorFlow's lists of unknown
/// element shape the element type of what is written into them, which the
/// CPU backend needs.
#define _POSIX_C_SOURCE 200809L

#include "backend-cpu/cpu.h"
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

/// JIT-compiles @main of m and runs it on args; results in res.
static eddy_status_t run_compiled(const eddy_module_t *m, eddy_rt_ctx_t *rt,
                                  const eddy_eval_value_t *args, size_t nargs,
                                  eddy_eval_value_t *res, size_t nres) {
  eddy_cpu_opts_t o = eddy_cpu_opts_default();
  o.prefix = "fixture";
  eddy_cpu_jit_t *jit = NULL;
  EDDY_RETURN_IF_ERROR(eddy_cpu_jit_create(m, "main", &o, &jit));
  eddy_rt_tensor_t ts[2 * 64]; // tf_fixture_run_t holds 64 of each
  for (size_t i = 0; i < nargs; i++)
    ts[i] = args[i].tensor;
  eddy_status_t st = eddy_cpu_jit_run(jit, rt, ts, ts + nargs);
  for (size_t i = 0; !st && i < nres; i++)
    res[i] = eddy_eval_value_from_tensor(&ts[nargs + i]);
  eddy_cpu_jit_destroy(jit);
  return st;
}

/// Runs one fixture compiled; true when it matches TensorFlow.
static bool run_fixture(const char *dir, const char *name) {
  tf_fixture_run_t r;
  eddy_status_t st = tf_fixture_open(&r, dir, name);
  if (!st)
    st = eddy_tf_functionalize(r.m);
  if (!st)
    st = eddy_tf_legalize(r.m);
  if (!st)
    st = optimize(r.ctx, r.m);
  if (!st)
    st = run_compiled(r.m, r.rt, r.args, r.mf.num_feeds, r.res,
                      r.mf.num_fetches);
  return tf_fixture_close(&r, st, !st && tf_fixture_check(&r));
}

static void test_fixtures_compiled_match_tensorflow(void **state) {
  (void)state;
  tf_fixtures_expect_all(__FILE__, "tests/unit/tf/test_tf_compiled.c",
                         "compiled", run_fixture);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fixtures_compiled_match_tensorflow),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

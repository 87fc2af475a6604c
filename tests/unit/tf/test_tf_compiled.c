/// TensorFlow fixtures compiled: each GraphDef is imported, functionalized,
/// legalized, run through shape-infer and canonicalize (the pipeline of
/// eddy_add_model), JIT-compiled by the CPU backend and run on the
/// fixture's inputs; the results must match TensorFlow's outputs within
/// the manifest's tolerance. shape-infer gives TensorFlow's lists of unknown
/// element shape the element type of what is written into them, which the
/// CPU backend needs.
#define _POSIX_C_SOURCE 200809L

#include "dialects/dialects.h"
#include "dialects/tf/tf.h"
#include "runtime/eval/eval.h"

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "tests/unit/common/tf_fixtures.h"
#include "tests/unit/common/tf_compiled.h"

/// Runs one fixture compiled; true when it matches TensorFlow.
static bool run_fixture(const char *dir, const char *name) {
  tf_fixture_run_t r;
  eddy_status_t st = tf_fixture_open(&r, dir, name);
  if (!st)
    st = tf_fixture_prepare(&r);
  if (!st)
    st = tf_fixture_run_jit(&r, eddy_cpu_opts_default());
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

/// Every TensorFlow fixture (tests/fixtures/tf/<name>/) goes through import
/// (the manifest's feeds and fetches), functionalize, legalize-tf and the
/// verifier, runs in the reference evaluator on the fixture's inputs, and
/// must match TensorFlow's outputs within the manifest's tolerance. Fixtures
/// that cannot do so yet are listed with the reason; they must still fail
/// (so that one that starts to pass is taken off the list).
#define _POSIX_C_SOURCE 200809L

#include "dialects/tf/tf.h"
#include "runtime/eval/eval.h"

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/unit/common/tf_fixtures.h"

/// Runs one fixture in the evaluator; true when it matches TensorFlow.
static bool run_fixture(const char *dir, const char *name) {
  tf_fixture_run_t r;
  eddy_op_t *func;
  eddy_status_t st = tf_fixture_open_legalized(&r, dir, name, &func);
  if (!st)
    st = eddy_ir_verify_module(r.m);
  if (!st)
    st = eddy_eval_func(r.rt, func, NULL, r.args, r.mf.num_feeds, r.res,
                        r.mf.num_fetches);
  return tf_fixture_close(&r, st, !st && tf_fixture_check(&r));
}

static void test_fixtures_match_tensorflow(void **state) {
  (void)state;
  tf_fixtures_expect_all(__FILE__, "tests/unit/tf/test_tf_legalize.c",
                         "evaluated", run_fixture);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fixtures_match_tensorflow),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

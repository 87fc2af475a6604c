/// TensorFlow fixtures in the dataflow interpreter, two ways: (1) import,
/// functionalize, legalize-tf, then to-dataflow lowers ctl back to df; (2)
/// straight from the v1 form: the v1 control-flow ops become df ops as they
/// are (eddy_tf_legalize_dataflow), no functionalize. Each runs in the
/// interpreter with 1 and with 2 workers and must match TensorFlow's outputs
/// within the manifest's tolerance; every fixture must.
#define _POSIX_C_SOURCE 200809L

#include "dialects/tf/tf.h"
#include "lower/lower.h"
#include "lower/tf/tf_lower.h"
#include "runtime/eval/eval.h"
#include "runtime/interp/interp.h"

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/unit/common/tf_fixtures.h"

/// Runs one fixture; true when it matches TensorFlow. straight: the v1
/// control-flow ops become df ops as they are (the graph TensorFlow's
/// executor runs), v1 stacks and TensorArrays stay resource ops; else
/// functionalize raises them to ctl, legalize-tf lowers the rest and
/// to-dataflow lowers ctl again (v2 graphs always go that way).
static bool run_fixture(const char *dir, const char *name, bool straight) {
  tf_fixture_run_t r;
  eddy_op_t *func = NULL;
  eddy_status_t st;
  if (straight) {
    st = tf_fixture_open(&r, dir, name);
    if (!st)
      st = eddy_tf_legalize_dataflow(r.m);
    if (!st)
      st = tf_fixture_main(&r, &func);
  } else {
    st = tf_fixture_open_legalized(&r, dir, name, &func);
  }
  if (!st)
    st = eddy_lower_to_dataflow_func(func);
  if (!st)
    st = eddy_ir_verify_module(r.m);
  // The same answer with one worker and with two.
  bool ok = !st;
  for (int workers = 1; ok && workers <= 2; workers++) {
    eddy_interp_opts_t io = eddy_interp_opts_default();
    io.num_workers = workers;
    st = eddy_interp_func(r.rt, func, &io, r.args, r.mf.num_feeds, r.res,
                          r.mf.num_fetches, NULL);
    ok = !st && tf_fixture_check(&r);
  }
  return tf_fixture_close(&r, st, ok);
}

static bool run_from_ctl(const char *dir, const char *name) {
  return run_fixture(dir, name, false);
}

static bool run_straight(const char *dir, const char *name) {
  return run_fixture(dir, name, true);
}

static void test_fixtures_interpreted_match_tensorflow(void **state) {
  (void)state;
  tf_fixtures_expect_all(__FILE__,
                         "tests/unit/interp/test_interp_tf_fixtures.c",
                         "from-ctl", run_from_ctl);
}

static void test_fixtures_straight_from_v1(void **state) {
  (void)state;
  tf_fixtures_expect_all(__FILE__,
                         "tests/unit/interp/test_interp_tf_fixtures.c",
                         "v1-as-df", run_straight);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fixtures_interpreted_match_tensorflow),
      cmocka_unit_test(test_fixtures_straight_from_v1),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

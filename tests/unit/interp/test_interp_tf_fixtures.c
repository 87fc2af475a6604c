/// TensorFlow fixtures in the dataflow interpreter, two ways: (1) import,
/// functionalize, legalize-tf, then to-dataflow lowers ctl back to df; (2)
/// straight from the v1 form: the v1 control-flow ops become df ops as they
/// are (eddy_tf_legalize_dataflow), no functionalize. Each runs in the
/// interpreter with 1 and with 2 workers and must match TensorFlow's outputs
/// within the manifest's tolerance. Fixtures that cannot are listed with the
/// reason and must still fail.
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

static const tf_known_failure_t k_known_failures[] = {
    // The evaluator's known failures (test_tf_legalize.c): they do not get
    // as far as a structured program. None today.
    {NULL, NULL},
};

/// Running the v1 graph as it is (eddy_tf_legalize_dataflow: v1 ops mapped
/// to df, v1 stacks and TensorArrays kept as resource ops, then
/// interpreted; v2 graphs go through ctl and to-dataflow). Every fixture
/// runs this way; the table stays for a fixture that cannot.
static const tf_known_failure_t k_known_failures_straight[] = {
    {NULL, NULL},
};

/// Runs one fixture; true when it matches TensorFlow.
static bool run_fixture(const char *dir, const char *name, bool straight,
                        bool quiet) {
  tf_manifest_t mf;
  if (!tf_manifest_read(dir, name, &mf))
    return false;
  eddy_ctx_t *ctx = eddy_ir_ctx_create();
  eddy_tf_import_opts_t opts = tf_manifest_import_opts(&mf, true);
  char path[1024];
  snprintf(path, sizeof path, "%s/%s/model.pb", dir, name);
  eddy_module_t *m = NULL;
  eddy_status_t st = eddy_tf_import_graphdef(ctx, path, &opts, &m);
  // straight: the v1 control-flow ops become df ops as they are (the
  // graph TensorFlow's executor runs); else functionalize raises them to
  // ctl, legalize-tf lowers the rest and to-dataflow lowers ctl again.
  if (!st && !straight)
    st = eddy_tf_functionalize(m);
  if (!st)
    st = straight ? eddy_tf_legalize_dataflow(m) : eddy_tf_legalize(m);
  eddy_op_t *func = m ? eddy_ir_module_lookup_func(m, "main") : NULL;
  if (!st && !func)
    st = eddy_status_create(EDDY_ERR_NOT_FOUND, "no @main");
  if (!st)
    st = eddy_lower_to_dataflow_func(func);
  if (!st)
    st = eddy_ir_verify_module(m);
  eddy_rt_ctx_t *rt = NULL;
  eddy_rt_ctx_options_t ro = eddy_rt_ctx_options_default();
  if (!st && eddy_rt_ctx_create(&ro, &rt))
    st = eddy_status_create(EDDY_ERR_RESOURCE, "no runtime context");
  eddy_eval_value_t args[64], res[64];
  memset(args, 0, sizeof args);
  memset(res, 0, sizeof res);
  bool ok = !st;
  if (ok)
    ok = tf_fixtures_load_inputs(rt, dir, name, mf.num_feeds, args);
  // The same answer with one worker and with two.
  for (int workers = 1; ok && workers <= 2; workers++) {
    eddy_interp_opts_t io = eddy_interp_opts_default();
    io.num_workers = workers;
    st = eddy_interp_func(rt, func, &io, args, mf.num_feeds, res,
                          mf.num_fetches, NULL);
    ok = !st;
    if (ok)
      ok = tf_fixtures_check_outputs(rt, dir, name, res, mf.num_fetches,
                                     mf.rtol, mf.atol);
    for (size_t i = 0; i < mf.num_fetches; i++)
      eddy_eval_value_release(&res[i]);
  }
  if (st) {
    if (!quiet)
      tf_fixtures_report("%s: %s\n", name, eddy_status_message(st));
    eddy_status_destroy(st);
  }
  for (size_t i = 0; i < 64; i++) {
    eddy_eval_value_release(&args[i]);
    eddy_eval_value_release(&res[i]);
  }
  if (rt)
    eddy_rt_ctx_destroy(rt);
  eddy_ir_module_destroy(m);
  eddy_ir_ctx_destroy(ctx);
  tf_manifest_free(&mf);
  return ok;
}

/// One run over every fixture; known[0..num_known) lists the expected
/// failures.
static void check_all(bool straight, const tf_known_failure_t *known,
                      size_t num_known) {
  char *names[256];
  size_t n;
  char *dir = tf_fixtures_list(
      __FILE__, "tests/unit/interp/test_interp_tf_fixtures.c", names, 256, &n);
  size_t failed = 0, unexpected = 0;
  for (size_t i = 0; i < n; i++) {
    const char *why = tf_known_failure_find(known, num_known, names[i]);
    bool ok = run_fixture(dir, names[i], straight, why != NULL);
    printf("%-24s %-10s %s%s%s%s\n", names[i], straight ? "v1-as-df" : "from-ctl",
           ok ? "ok" : "FAIL", why ? "  (known: " : "", why ? why : "",
           why ? ")" : "");
    if (ok && why)
      unexpected++;
    else if (!ok && !why)
      failed++;
    free(names[i]);
  }
  free(dir);
  assert_int_equal(n, 36);
  assert_int_equal(failed, 0);
  assert_int_equal(unexpected, 0); // take it off the known failures
}

static void test_fixtures_interpreted_match_tensorflow(void **state) {
  (void)state;
  check_all(false, k_known_failures,
            sizeof k_known_failures / sizeof k_known_failures[0]);
}

static void test_fixtures_straight_from_v1(void **state) {
  (void)state;
  check_all(true, k_known_failures_straight, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fixtures_interpreted_match_tensorflow),
      cmocka_unit_test(test_fixtures_straight_from_v1),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/// Every TensorFlow fixture (tests/fixtures/tf/<name>/) goes through import
/// (the manifest's feeds and fetches), functionalize, legalize-tf and the
/// verifier, runs in the reference evaluator on the fixture's inputs, and
/// must match TensorFlow's outputs within the manifest's tolerance. Fixtures
/// that cannot do so yet are listed with the reason; they must still fail
/// (so that one that starts to pass is taken off the list).
#define _POSIX_C_SOURCE 200809L

#include "dialects/tf/tf.h"
#include "lower/tf/tf_lower.h"
#include "runtime/eval/eval.h"

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/unit/common/tf_fixtures.h"

/// Runs one fixture; true when it matches TensorFlow.
static bool run_fixture(const char *dir, const char *name) {
  tf_manifest_t mf;
  if (!tf_manifest_read(dir, name, &mf))
    return false;
  eddy_ctx_t *ctx = eddy_ir_ctx_create();
  eddy_tf_import_opts_t opts = tf_manifest_import_opts(&mf, true);
  char path[1024];
  snprintf(path, sizeof path, "%s/%s/model.pb", dir, name);
  eddy_module_t *m = NULL;
  eddy_status_t st = eddy_tf_import_graphdef(ctx, path, &opts, &m);
  if (!st)
    st = eddy_tf_functionalize(m);
  if (!st)
    st = eddy_tf_legalize(m);
  if (!st)
    st = eddy_ir_verify_module(m);
  eddy_op_t *func = m ? eddy_ir_module_lookup_func(m, "main") : NULL;
  if (!st && !func)
    st = eddy_status_create(EDDY_ERR_NOT_FOUND, "no @main");
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
  if (ok) {
    st =
        eddy_eval_func(rt, func, NULL, args, mf.num_feeds, res, mf.num_fetches);
    ok = !st;
  }
  if (ok)
    ok = tf_fixtures_check_outputs(rt, dir, name, res, mf.num_fetches, mf.rtol,
                                   mf.atol);
  if (st) {
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

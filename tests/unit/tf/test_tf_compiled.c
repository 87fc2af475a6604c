/// TensorFlow fixtures compiled: each GraphDef is imported, functionalized,
/// legalized, run through shape-infer and canonicalize and the passes of
/// `eddy compile` (the pipeline of eddy_add_model), JIT-compiled by the CPU
/// backend and run on the fixture's inputs; the results must match
/// TensorFlow's outputs within the manifest's tolerance. shape-infer gives
/// TensorFlow's lists of unknown element shape the element type of what is
/// written into them, which the CPU backend needs. In the RNN and LSTM
/// fixtures (their gradients included) gemm-hoist must have taken the
/// input's matmul out of the loop; in map_fn_v2, map-batch must have made
/// the loop batched ops.
#define _POSIX_C_SOURCE 200809L

#include "dialects/dialects.h"
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
#include "tests/unit/common/tf_compiled.h"

/// The passes' statistics written to f, as a string (malloc'ed).
static char *read_stats(FILE *f) {
  long n = ftell(f);
  char *s = calloc(1, n > 0 ? (size_t)n + 1 : 1);
  rewind(f);
  if (s && n > 0 && fread(s, 1, (size_t)n, f) != (size_t)n)
    s[0] = '\0';
  return s;
}

/// Runs one fixture compiled; true when it matches TensorFlow (and, for a
/// recurrent model, when its input matmul was hoisted; for keras_rnn_rows,
/// when row-split divided its loop, which then runs as two tasks; for
/// map_fn_v2, when map-batch replaced its loop).
static bool run_fixture(const char *dir, const char *name) {
  tf_fixture_run_t r;
  FILE *stats = tmpfile();
  eddy_status_t st = tf_fixture_open_legalized(&r, dir, name, NULL);
  if (!st)
    st = tf_fixture_prepare_stats(&r, stats, true);
  bool passes_ok = true;
  if (!st && (strncmp(name, "rnn", 3) == 0 || strncmp(name, "lstm", 4) == 0)) {
    char *text = stats ? read_stats(stats) : NULL;
    passes_ok = text && strstr(text, "gemm-hoist.hoisted-matmuls = ");
    if (!passes_ok)
      tf_fixtures_report("%s: gemm-hoist left the input matmul in the loop\n",
                         name);
    free(text);
  }
  if (!st && strncmp(name, "keras_rnn_rows", 14) == 0) {
    char *text = stats ? read_stats(stats) : NULL;
    passes_ok = passes_ok && text && strstr(text, "row-split.split-loops = ");
    if (!passes_ok)
      tf_fixtures_report("%s: row-split left the loop whole\n", name);
    free(text);
  }
  if (!st && strcmp(name, "map_fn_v2") == 0) {
    char *text = stats ? read_stats(stats) : NULL;
    passes_ok = passes_ok && text && strstr(text, "map-batch.batched-loops = ");
    if (!passes_ok)
      tf_fixtures_report("%s: map-batch left the loop\n", name);
    free(text);
  }
  if (stats)
    fclose(stats);
  if (!st)
    st = tf_fixture_run_jit(&r, eddy_cpu_opts_default());
  return tf_fixture_close(&r, st, !st && tf_fixture_check(&r) && passes_ok);
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

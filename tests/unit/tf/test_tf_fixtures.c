/// Every TensorFlow fixture (tests/fixtures/tf/<name>/, written by
/// tools/tf_fixtures.py) imports with the feeds and fetches of its
/// manifest, verifies, and prints text that parses back to the same text.
/// Running the imported models and comparing with TensorFlow's outputs
/// comes with the evaluator.
#define _POSIX_C_SOURCE 200809L

#include "dialects/tf/tf.h"

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/unit/common/tf_fixtures.h"

/// Fixtures that cannot be imported yet, and why (a part of the message).
/// A fixture that starts to import must be taken off this list. Every
/// fixture imports now (lists of lists and Optionals included); the list
/// ends with a NULL name.
static const tf_known_failure_t k_known_failures[] = {
    {NULL, NULL},
};

#define THIS_FILE "tests/unit/tf/test_tf_fixtures.c"

/// Imports one fixture and checks it; returns false (after printing why)
/// when it fails.
static bool check_fixture(const char *dir, const char *name) {
  tf_manifest_t mf;
  if (!tf_manifest_read(dir, name, &mf)) {
    print_error("%s: cannot read %s/%s/manifest.json\n", name, dir, name);
    return false;
  }
  size_t nfeeds = mf.num_feeds, nfetches = mf.num_fetches;
  bool ok = nfeeds > 0 && nfetches > 0;
  if (!ok)
    print_error("%s: the manifest lists no feeds or no fetches\n", name);

  eddy_ctx_t *ctx = eddy_ir_ctx_create();
  eddy_tf_import_opts_t opts = tf_manifest_import_opts(&mf, false);
  char path[1024];
  snprintf(path, sizeof path, "%s/%s/model.pb", dir, name);
  eddy_module_t *m = NULL;
  eddy_status_t st = ok ? eddy_tf_import_graphdef(ctx, path, &opts, &m) : NULL;
  const char *expected = tf_known_failure_find(
      k_known_failures, sizeof k_known_failures / sizeof k_known_failures[0],
      name);
  if (ok && expected) {
    if (!st) {
      print_error("%s: imports now; take it off k_known_failures\n", name);
      ok = false;
    } else if (!strstr(eddy_status_message(st), expected)) {
      print_error("%s: fails with '%s', expected '%s'\n", name,
                  eddy_status_message(st), expected);
      ok = false;
    }
  } else if (ok && st) {
    print_error("%s: %s: %s\n", name, eddy_status_location(st),
                eddy_status_message(st));
    ok = false;
  }
  eddy_status_destroy(st);
  if (ok && m) {
    const eddy_type_t *ft =
        eddy_ir_func_type(eddy_ir_module_lookup_func(m, "main"));
    if (ft->num_inputs != nfeeds || ft->num_outputs != nfetches) {
      print_error("%s: @main has %u arguments and %u results, the manifest "
                  "%zu feeds and %zu fetches\n",
                  name, ft->num_inputs, ft->num_outputs, nfeeds, nfetches);
      ok = false;
    }
    eddy_buf_t text, again;
    eddy_buf_init(&text);
    eddy_buf_init(&again);
    eddy_print_opts_t po = {.locations = true};
    eddy_ir_module_print(m, &po, &text);
    eddy_module_t *m2 = NULL;
    st = eddy_ir_parse_module(ctx, path, text.data, text.len, &m2);
    if (!st)
      st = eddy_ir_verify_module(m2);
    if (st) {
      print_error("%s: the printed IR does not read back: %s\n", name,
                  eddy_status_message(st));
      eddy_status_destroy(st);
      ok = false;
    } else {
      eddy_ir_module_print(m2, &po, &again);
      if (strcmp(text.data, again.data) != 0) {
        print_error("%s: print(parse(print(m))) differs from print(m)\n",
                    name);
        ok = false;
      }
    }
    if (m2)
      eddy_ir_module_destroy(m2);
    eddy_buf_destroy(&text);
    eddy_buf_destroy(&again);
  }
  if (m)
    eddy_ir_module_destroy(m);
  eddy_ir_ctx_destroy(ctx);
  tf_manifest_free(&mf);
  return ok;
}

static void test_fixtures(void **state) {
  (void)state;
  char *names[512];
  size_t n;
  char *dir = tf_fixtures_list(__FILE__, THIS_FILE, names, 512, &n);
  size_t failed = 0;
  for (size_t i = 0; i < n; i++) {
    if (!check_fixture(dir, names[i]))
      failed++;
    free(names[i]);
  }
  free(dir);
  assert_int_equal(n, TF_FIXTURES_COUNT);
  assert_int_equal(failed, 0);
}

/// Reads a whole binary file; NULL on failure.
static unsigned char *read_bytes(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  unsigned char *data = NULL;
  size_t cap = 0, n = 0, got;
  unsigned char chunk[4096];
  while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
    if (n + got > cap) {
      cap = 2 * (n + got);
      unsigned char *p = realloc(data, cap);
      if (!p)
        break;
      data = p;
    }
    memcpy(data + n, chunk, got);
    n += got;
  }
  fclose(f);
  *len = n;
  return data;
}

/// Damaged fixtures (cut short, bytes flipped) import or fail with a
/// located message; never crash or leak (this test runs under the
/// sanitizers in a sanitizer build).
static void test_damaged_fixtures(void **state) {
  (void)state;
  char *dir = tf_fixtures_dir(__FILE__, THIS_FILE);
  if (!dir)
    skip();
  static const char *const models[] = {"count_v1", "cond_in_while_v2",
                                       "rnn_grad_v1", "lstm_grad_v2",
                                       "map_fn_grad_v1", "nested_v2"};
  uint32_t seed = 12345;
  size_t imported = 0, failed = 0;
  for (size_t k = 0; k < sizeof models / sizeof models[0]; k++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s/model.pb", dir, models[k]);
    size_t len = 0;
    unsigned char *orig = read_bytes(path, &len);
    assert_non_null(orig);
    unsigned char *data = malloc(len);
    assert_non_null(data);
    for (int round = 0; round < 40; round++) {
      memcpy(data, orig, len);
      size_t n = len;
      seed = seed * 1103515245u + 12345u;
      if (round % 2 == 0) {
        n = (seed >> 8) % len; // cut short
      } else {
        for (int i = 0; i < 4; i++) { // flip bytes
          seed = seed * 1103515245u + 12345u;
          data[(seed >> 8) % len] ^= (unsigned char)(1u << (seed % 8));
        }
      }
      eddy_ctx_t *ctx = eddy_ir_ctx_create();
      eddy_module_t *m = NULL;
      eddy_status_t st =
          eddy_tf_import_graphdef_bytes(ctx, "damaged.pb", data, n, NULL, &m);
      if (st) {
        assert_null(m);
        assert_non_null(eddy_status_location(st));
        assert_true(eddy_status_message(st)[0] != 0);
        eddy_status_destroy(st);
        failed++;
      } else {
        assert_null(eddy_ir_verify_module(m));
        eddy_ir_module_destroy(m);
        imported++;
      }
      eddy_ir_ctx_destroy(ctx);
    }
    free(data);
    free(orig);
  }
  free(dir);
  assert_int_equal(imported + failed, 240);
  assert_true(failed > 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fixtures),
      cmocka_unit_test(test_damaged_fixtures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

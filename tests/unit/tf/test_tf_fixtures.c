/// Every TensorFlow fixture (tests/fixtures/tf/<name>/, written by
/// tools/tf_fixtures.py) imports with the feeds and fetches of its
/// manifest, verifies, and prints text that parses back to the same text.
/// Running the imported models and comparing with TensorFlow's outputs
/// comes with the evaluator.
#define _POSIX_C_SOURCE 200809L

#include "dialects/tf/tf.h"

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/// Fixtures that cannot be imported yet, and why (a part of the message).
/// A fixture that starts to import must be taken off this list. Every
/// fixture imports now (lists of lists and Optionals included); the list
/// ends with a NULL name.
static const struct {
  const char *name, *message;
} k_known_failures[] = {
    {NULL, NULL},
};

static const char *known_failure(const char *name) {
  for (size_t i = 0; k_known_failures[i].name; i++)
    if (strcmp(k_known_failures[i].name, name) == 0)
      return k_known_failures[i].message;
  return NULL;
}

/// tests/fixtures/tf in the source tree, found from this file's path.
static char *fixtures_dir(void) {
  const char *env = getenv("EDDY_SOURCE_DIR");
  const char *file = __FILE__;
  const char *tail = "tests/unit/tf/test_tf_fixtures.c";
  size_t root_len;
  const char *root;
  if (env) {
    root = env;
    root_len = strlen(env);
  } else {
    size_t n = strlen(file), t = strlen(tail);
    if (n < t || strcmp(file + n - t, tail) != 0)
      return NULL;
    root = file;
    root_len = n - t;
  }
  char *dir = malloc(root_len + 32);
  if (!dir)
    return NULL;
  snprintf(dir, root_len + 32, "%.*s%stests/fixtures/tf", (int)root_len, root,
           root_len && root[root_len - 1] != '/' ? "/" : "");
  return dir;
}

static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 4096, len = 0;
  char *s = malloc(cap);
  size_t n;
  while (s && (n = fread(s + len, 1, cap - len - 1, f)) > 0) {
    len += n;
    if (len + 1 == cap) {
      char *p = realloc(s, cap *= 2);
      if (!p) {
        free(s);
        s = NULL;
      }
      s = p;
    }
  }
  fclose(f);
  if (s)
    s[len] = 0;
  return s;
}

/// The "name" values of the objects in the manifest's array `key`
/// (malloc'ed strings, *n of them). The manifest is tools/tf_fixtures.py's
/// json.dump output; this reads just enough JSON for it.
static char **manifest_names(const char *json, const char *key, size_t *n) {
  *n = 0;
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\": [", key);
  const char *p = strstr(json, pat);
  if (!p)
    return NULL;
  p += strlen(pat);
  char **names = calloc(64, sizeof *names);
  int depth = 1;
  while (*p && depth > 0 && *n < 64) {
    if (*p == '"') {
      const char *end = strchr(p + 1, '"');
      if (!end)
        break;
      if ((size_t)(end - p - 1) == 4 && memcmp(p + 1, "name", 4) == 0 &&
          strncmp(end + 1, ": \"", 3) == 0) {
        const char *v = end + 4, *ve = strchr(v, '"');
        if (!ve)
          break;
        names[*n] = strndup(v, (size_t)(ve - v));
        (*n)++;
        p = ve + 1;
        continue;
      }
      p = end + 1;
      continue;
    }
    if (*p == '[' || *p == '{')
      depth++;
    if (*p == ']' || *p == '}')
      depth--;
    p++;
  }
  return names;
}

static void free_names(char **names, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(names[i]);
  free(names);
}

/// Imports one fixture and checks it; returns false (after printing why)
/// when it fails.
static bool check_fixture(const char *dir, const char *name) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s/manifest.json", dir, name);
  char *manifest = read_text(path);
  if (!manifest) {
    print_error("%s: cannot read %s\n", name, path);
    return false;
  }
  size_t nfeeds, nfetches;
  char **feeds = manifest_names(manifest, "feeds", &nfeeds);
  char **fetches = manifest_names(manifest, "fetches", &nfetches);
  free(manifest);
  bool ok = nfeeds > 0 && nfetches > 0;
  if (!ok)
    print_error("%s: the manifest lists no feeds or no fetches\n", name);

  eddy_ctx_t *ctx = eddy_ir_ctx_create();
  eddy_tf_import_opts_t opts = {
      .feeds = (const char *const *)feeds,
      .num_feeds = nfeeds,
      .fetches = (const char *const *)fetches,
      .num_fetches = nfetches,
  };
  snprintf(path, sizeof path, "%s/%s/model.pb", dir, name);
  eddy_module_t *m = NULL;
  eddy_status_t st = ok ? eddy_tf_import_graphdef(ctx, path, &opts, &m) : NULL;
  const char *expected = known_failure(name);
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
  free_names(feeds, nfeeds);
  free_names(fetches, nfetches);
  return ok;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_fixtures(void **state) {
  (void)state;
  char *dir = fixtures_dir();
  if (!dir)
    skip(); // not built from a source tree we can find
  DIR *d = opendir(dir);
  if (!d) {
    free(dir);
    fail_msg("cannot open the fixtures directory");
  }
  char *names[256];
  size_t n = 0;
  struct dirent *e;
  while ((e = readdir(d)) && n < 256)
    if (e->d_name[0] != '.')
      names[n++] = strdup(e->d_name);
  closedir(d);
  qsort(names, n, sizeof *names, cmp_str);
  size_t failed = 0;
  for (size_t i = 0; i < n; i++) {
    if (!check_fixture(dir, names[i]))
      failed++;
    free(names[i]);
  }
  free(dir);
  // tools/tf_fixtures.py writes 9 models x {forward, gradient} x {v1, v2}.
  assert_int_equal(n, 36);
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
  char *dir = fixtures_dir();
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
    size_t len;
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

/// Plumbing shared by the tests that run the TensorFlow fixtures
/// (tests/fixtures/tf/<name>/, written by tools/tf_fixtures.py): finding
/// and listing them, reading a manifest's feeds, fetches and tolerances,
/// loading in_*.npy and comparing results with TensorFlow's out_*.npy.
/// Each test keeps its own known failures and assertions. Static inline
/// functions, since every tests/unit/*/test_*.c is built on its own;
/// include it after <cmocka.h>, with _POSIX_C_SOURCE 200809L defined.
#ifndef EDDY_TESTS_UNIT_COMMON_TF_FIXTURES_H
#define EDDY_TESTS_UNIT_COMMON_TF_FIXTURES_H

#include "dialects/dialects.h"
#include "dialects/tf/tf.h"
#include "lower/tf/tf_lower.h"
#include "runtime/eval/eval.h"
#include "runtime/npy.h"

#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/// How many fixtures tests/fixtures/tf holds: those tools/tf_fixtures.py
/// writes (each model forward and with its gradients, v1 and v2, less the
/// gradients of its forward-only models and the forms its ONLY_FORMS models
/// leave out, plus its second-order gradients) and those of
/// tools/tf_corpus.py. A test that finds another number fails
/// (a fixture lost, or one added without updating this).
#define TF_FIXTURES_COUNT 294

/// A fixture that is expected to fail, and why.
typedef struct tf_known_failure {
  const char *name, *reason;
} tf_known_failure_t;

/// The reason name is in list[0..n) (which may also end early with a NULL
/// name); NULL when it is not.
static inline const char *tf_known_failure_find(const tf_known_failure_t *list,
                                                size_t n, const char *name) {
  for (size_t i = 0; i < n && list[i].name; i++)
    if (strcmp(list[i].name, name) == 0)
      return list[i].reason;
  return NULL;
}

/// tests/fixtures/tf in the source tree (malloc'ed): under
/// $EDDY_SOURCE_DIR, else found from `file`, the test's __FILE__, which
/// must end with `tail`, its path in the tree. NULL when neither works.
static inline char *tf_fixtures_dir(const char *file, const char *tail) {
  const char *env = getenv("EDDY_SOURCE_DIR");
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

static inline int tf_fixtures_cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/// The fixtures directory (malloc'ed, as tf_fixtures_dir) and its fixture
/// names in order (malloc'ed, at most cap, *out_n of them). Skips the test
/// when the source tree is not found and fails it when the directory
/// cannot be opened.
static inline char *tf_fixtures_list(const char *file, const char *tail,
                                     char **names, size_t cap, size_t *out_n) {
  char *dir = tf_fixtures_dir(file, tail);
  if (!dir)
    skip(); // not built from a source tree we can find
  DIR *d = opendir(dir);
  if (!d) {
    free(dir);
    fail_msg("cannot open the fixtures directory");
  }
  size_t n = 0;
  struct dirent *e;
  while ((e = readdir(d)) && n < cap)
    if (e->d_name[0] != '.')
      names[n++] = strdup(e->d_name);
  closedir(d);
  qsort(names, n, sizeof *names, tf_fixtures_cmp_str);
  *out_n = n;
  return dir;
}

/// Whether a and b are the v1 and v2 forms of one model (names that differ
/// only in a last "_v1" / "_v2").
static inline bool tf_fixtures_twins(const char *a, const char *b) {
  size_t n = strlen(a);
  return n > 3 && strlen(b) == n && strncmp(a, b, n - 3) == 0 &&
         (strcmp(a + n - 3, "_v1") == 0 || strcmp(a + n - 3, "_v2") == 0) &&
         (strcmp(b + n - 3, "_v1") == 0 || strcmp(b + n - 3, "_v2") == 0);
}

static inline char *tf_fixtures_read_text(const char *path);

/// Seconds on a monotonic clock.
static inline double tf_fixtures_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/// The cost of fixture `name` in tests/fixtures/tf-costs.txt (lines "NAME
/// SECONDS": what the slowest sharded test took on it, as it prints them),
/// or dflt when the table does not list it.
static inline double tf_fixtures_cost(const char *costs, const char *name,
                                      double dflt) {
  size_t n = strlen(name);
  for (const char *p = costs; p && *p;) {
    const char *e = strchr(p, '\n');
    if (strncmp(p, name, n) == 0 && (p[n] == ' ' || p[n] == '\t'))
      return atof(p + n);
    p = e ? e + 1 : NULL;
  }
  return dflt;
}

/// Runs run(dir, name) on every fixture, printing "name  label  ok|FAIL
/// seconds"; asserts that all TF_FIXTURES_COUNT fixtures were found and
/// that every one passed. EDDY_TF_FIXTURES_SHARD=K/N in the environment
/// runs shard K of N (0 <= K < N) only, a model's v1 and v2 forms together
/// (tests/CMakeLists.txt runs the slowest test as three shards; it builds
/// the CUDA object of a model's v2 form only, so the shards share out
/// models, not fixtures). The models go to the shards by their cost in
/// tests/fixtures/tf-costs.txt, the dearest first, each to the shard with
/// the least cost so far (a fixture the table does not list costs one
/// second), so that the shards take about as long.
#ifndef TF_FIXTURES_STRIDE
#define TF_FIXTURES_STRIDE 1
#endif
#ifndef TF_FIXTURES_OFFSET
#define TF_FIXTURES_OFFSET 0
#endif

enum { TF_FIXTURES_MAX = 512 };

static inline void tf_fixtures_expect_all(const char *file, const char *tail,
                                          const char *label,
                                          bool (*run)(const char *dir,
                                                      const char *name)) {
  char *names[TF_FIXTURES_MAX];
  size_t n;
  char *dir = tf_fixtures_list(file, tail, names, TF_FIXTURES_MAX, &n);
  size_t failed = 0;
  unsigned shard = 0, shards = 1;
  const char *env = getenv("EDDY_TF_FIXTURES_SHARD");
  if (env && (sscanf(env, "%u/%u", &shard, &shards) != 2 || shards == 0 ||
              shard >= shards))
    fail_msg("EDDY_TF_FIXTURES_SHARD=%s: expected K/N with 0 <= K < N", env);
  // The model of each fixture run (twins count once) and its cost.
  static size_t model_of[TF_FIXTURES_MAX];
  static double cost[TF_FIXTURES_MAX];
  static unsigned shard_of[TF_FIXTURES_MAX];
  char path[4096];
  snprintf(path, sizeof path, "%s/../tf-costs.txt", dir);
  char *costs = tf_fixtures_read_text(path);
  size_t models = 0;
  const char *prev = NULL;
  for (size_t i = 0; i < n; i++) {
    /* TF_FIXTURES_STRIDE k > 1 (the sanitizer build of the slowest of these
       tests, tests/CMakeLists.txt): every k-th fixture only, from
       TF_FIXTURES_OFFSET; the normal build runs them all. */
    if (i % TF_FIXTURES_STRIDE != TF_FIXTURES_OFFSET)
      continue;
    if (!prev || !tf_fixtures_twins(prev, names[i]))
      cost[models++] = 0;
    prev = names[i];
    model_of[i] = models - 1;
    cost[models - 1] += tf_fixtures_cost(costs, names[i], 1.0);
  }
  free(costs);
  double load[64] = {0};
  if (shards > 64)
    fail_msg("EDDY_TF_FIXTURES_SHARD=%s: at most 64 shards", env);
  for (size_t k = 0; k < models; k++) {
    size_t dearest = SIZE_MAX;
    for (size_t j = 0; j < models; j++)
      if (cost[j] >= 0 && (dearest == SIZE_MAX || cost[j] > cost[dearest]))
        dearest = j;
    unsigned least = 0;
    for (unsigned s = 1; s < shards; s++)
      if (load[s] < load[least])
        least = s;
    shard_of[dearest] = least;
    load[least] += cost[dearest];
    cost[dearest] = -1; // taken
  }
  for (size_t i = 0; i < n; i++) {
    if (i % TF_FIXTURES_STRIDE != TF_FIXTURES_OFFSET ||
        shard_of[model_of[i]] != shard)
      continue;
    double t0 = tf_fixtures_now();
    bool ok = run(dir, names[i]);
    printf("%-24s %-10s %-4s %8.2f\n", names[i], label, ok ? "ok" : "FAIL",
           tf_fixtures_now() - t0);
    failed += !ok;
  }
  for (size_t i = 0; i < n; i++)
    free(names[i]);
  free(dir);
  assert_int_equal(n, TF_FIXTURES_COUNT);
  assert_int_equal(failed, 0); // every fixture matches TensorFlow
}

/// A whole text file (malloc'ed); NULL when it cannot be read.
static inline char *tf_fixtures_read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (s) {
    size_t got = fread(s, 1, (size_t)n, f);
    s[got] = 0;
  }
  fclose(f);
  return s;
}

/// The "name" values of the objects in the manifest's array `key`
/// (malloc'ed, at most cap). The manifest is tools/tf_fixtures.py's
/// json.dump output; this reads just enough JSON for it.
static inline size_t tf_manifest_names(const char *json, const char *key,
                                       char **names, size_t cap) {
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\": [", key);
  const char *p = strstr(json, pat);
  size_t n = 0;
  if (!p)
    return 0;
  p += strlen(pat);
  int depth = 1;
  while (*p && depth > 0 && n < cap) {
    if (strncmp(p, "\"name\": \"", 9) == 0) {
      const char *v = p + 9, *e = strchr(v, '"');
      if (!e)
        break;
      names[n++] = strndup(v, (size_t)(e - v));
      p = e + 1;
      continue;
    }
    if (*p == '[' || *p == '{')
      depth++;
    if (*p == ']' || *p == '}')
      depth--;
    p++;
  }
  return n;
}

static inline double tf_manifest_number(const char *json, const char *key,
                                        double dflt) {
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\": ", key);
  const char *p = strstr(json, pat);
  return p ? strtod(p + strlen(pat), NULL) : dflt;
}

/// What a fixture's manifest.json says.
typedef struct tf_manifest {
  char *feeds[64], *fetches[64]; ///< malloc'ed names
  size_t num_feeds, num_fetches;
  double rtol, atol; ///< 1e-5 and 1e-6 when not given
} tf_manifest_t;

/// Reads dir/name/manifest.json into *out; false when it cannot be read
/// (then *out holds nothing to free).
static inline bool tf_manifest_read(const char *dir, const char *name,
                                    tf_manifest_t *out) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s/manifest.json", dir, name);
  memset(out, 0, sizeof *out);
  char *json = tf_fixtures_read_text(path);
  if (!json)
    return false;
  out->num_feeds = tf_manifest_names(json, "feeds", out->feeds, 64);
  out->num_fetches = tf_manifest_names(json, "fetches", out->fetches, 64);
  out->rtol = tf_manifest_number(json, "rtol", 1e-5);
  out->atol = tf_manifest_number(json, "atol", 1e-6);
  free(json);
  return true;
}

static inline void tf_manifest_free(tf_manifest_t *m) {
  for (size_t i = 0; i < m->num_feeds; i++)
    free(m->feeds[i]);
  for (size_t i = 0; i < m->num_fetches; i++)
    free(m->fetches[i]);
}

/// Import options with the manifest's feeds and fetches (borrowed from m).
static inline eddy_tf_import_opts_t
tf_manifest_import_opts(const tf_manifest_t *m, bool prune) {
  eddy_tf_import_opts_t opts = {.feeds = (const char *const *)m->feeds,
                                .num_feeds = m->num_feeds,
                                .fetches = (const char *const *)m->fetches,
                                .num_fetches = m->num_fetches,
                                .prune = prune};
  return opts;
}

static inline void tf_fixtures_report(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
}

static inline bool tf_fixtures_load_npy(eddy_rt_ctx_t *rt, const char *path,
                                        eddy_rt_tensor_t *t) {
  *t = eddy_rt_tensor_empty();
  eddy_rt_status_t rs = eddy_rt_npy_read_file(rt, path, t);
  if (rs) {
    tf_fixtures_report("%s: %s\n", path, eddy_rt_status_message(rs));
    eddy_rt_status_destroy(rs);
    return false;
  }
  return true;
}

/// Compares result i with TensorFlow's output, within atol + rtol * |want|.
static inline bool tf_fixtures_same_values(const char *name, size_t i,
                                           const eddy_eval_value_t *v,
                                           const eddy_rt_tensor_t *want,
                                           double rtol, double atol) {
  if (v->kind != EDDY_EVAL_TENSOR) {
    tf_fixtures_report("%s: result %zu is not a tensor\n", name, i);
    return false;
  }
  const eddy_rt_tensor_t *got = &v->tensor;
  bool shape_ok = got->rank == want->rank;
  for (int32_t d = 0; shape_ok && d < got->rank; d++)
    shape_ok = got->dims[d] == want->dims[d];
  if (!shape_ok) {
    char a[128], b[128];
    tf_fixtures_report(
        "%s: result %zu has shape %s, TensorFlow's %s\n", name, i,
        eddy_rt_shape_format(got->rank, got->dims, a, sizeof a),
        eddy_rt_shape_format(want->rank, want->dims, b, sizeof b));
    return false;
  }
  int64_t n = eddy_rt_tensor_numel(want);
  for (int64_t k = 0; k < n; k++) {
    double g = eddy_rt_tensor_get_f64(got, k);
    double w = eddy_rt_tensor_get_f64(want, k);
    if (!(fabs(g - w) <= atol + rtol * fabs(w))) {
      tf_fixtures_report(
          "%s: result %zu element %lld is %.9g, TensorFlow's %.9g\n", name, i,
          (long long)k, g, w);
      return false;
    }
  }
  return true;
}

/// Loads dir/name/in_<i>.npy into args[i] for each of the n feeds; false
/// (after printing why) at the first that cannot be read.
static inline bool tf_fixtures_load_inputs(eddy_rt_ctx_t *rt, const char *dir,
                                           const char *name, size_t n,
                                           eddy_eval_value_t *args) {
  char path[1024];
  bool ok = true;
  for (size_t i = 0; ok && i < n; i++) {
    eddy_rt_tensor_t t;
    snprintf(path, sizeof path, "%s/%s/in_%zu.npy", dir, name, i);
    ok = tf_fixtures_load_npy(rt, path, &t);
    if (ok)
      args[i] = eddy_eval_value_from_tensor(&t);
  }
  return ok;
}

/// Compares res[0..n) with dir/name/out_<i>.npy; false (after printing
/// why) at the first mismatch.
static inline bool tf_fixtures_check_outputs(eddy_rt_ctx_t *rt, const char *dir,
                                             const char *name,
                                             const eddy_eval_value_t *res,
                                             size_t n, double rtol,
                                             double atol) {
  char path[1024];
  bool ok = true;
  for (size_t i = 0; ok && i < n; i++) {
    eddy_rt_tensor_t want;
    snprintf(path, sizeof path, "%s/%s/out_%zu.npy", dir, name, i);
    ok = tf_fixtures_load_npy(rt, path, &want);
    if (ok)
      ok = tf_fixtures_same_values(name, i, &res[i], &want, rtol, atol);
    eddy_rt_tensor_release(&want);
  }
  return ok;
}

/// One fixture being run: its manifest, its model.pb imported (pruned to
/// the manifest's feeds and fetches), a runtime context and its inputs.
/// A test transforms r->m, runs it into r->res, then calls
/// tf_fixture_check and tf_fixture_close.
typedef struct tf_fixture_run {
  const char *dir, *name;
  tf_manifest_t mf;
  eddy_ctx_t *ctx;
  eddy_module_t *m;
  eddy_rt_ctx_t *rt;
  eddy_eval_value_t args[64], res[64];
} tf_fixture_run_t;

static inline eddy_status_t tf_fixture_open(tf_fixture_run_t *r,
                                            const char *dir,
                                            const char *name) {
  memset(r, 0, sizeof *r);
  r->dir = dir;
  r->name = name;
  if (!tf_manifest_read(dir, name, &r->mf))
    return eddy_status_create(EDDY_ERR_IO, "cannot read its manifest.json");
  r->ctx = eddy_ir_ctx_create();
  eddy_dialects_register_all(r->ctx);
  eddy_tf_import_opts_t opts = tf_manifest_import_opts(&r->mf, true);
  char path[1024];
  snprintf(path, sizeof path, "%s/%s/model.pb", dir, name);
  eddy_status_t st = eddy_tf_import_graphdef(r->ctx, path, &opts, &r->m);
  eddy_rt_ctx_options_t ro = eddy_rt_ctx_options_default();
  if (!st && eddy_rt_ctx_create(&ro, &r->rt))
    st = eddy_status_create(EDDY_ERR_RESOURCE, "no runtime context");
  if (!st && !tf_fixtures_load_inputs(r->rt, dir, name, r->mf.num_feeds,
                                      r->args))
    st = eddy_status_create(EDDY_ERR_IO, "cannot load its inputs");
  return st;
}

/// r->m's @main in *out_func; an error when it has none.
static inline eddy_status_t tf_fixture_main(tf_fixture_run_t *r,
                                            eddy_op_t **out_func) {
  *out_func = eddy_ir_module_lookup_func(r->m, "main");
  return *out_func ? NULL : eddy_status_create(EDDY_ERR_NOT_FOUND, "no @main");
}

/// tf_fixture_open, then what eddy_add_model runs first on a GraphDef:
/// functionalize (v1 control flow raised to ctl) and legalize-tf. When
/// out_func is not NULL, *out_func is the module's @main (NULL after a
/// failure; a module without one is a failure).
static inline eddy_status_t tf_fixture_open_legalized(tf_fixture_run_t *r,
                                                      const char *dir,
                                                      const char *name,
                                                      eddy_op_t **out_func) {
  if (out_func)
    *out_func = NULL;
  EDDY_RETURN_IF_ERROR(tf_fixture_open(r, dir, name));
  EDDY_RETURN_IF_ERROR(eddy_tf_functionalize(r->m));
  EDDY_RETURN_IF_ERROR(eddy_tf_legalize(r->m));
  return out_func ? tf_fixture_main(r, out_func) : NULL;
}

/// Compares r->res with TensorFlow's outputs and releases the results, so
/// that the model can run again.
static inline bool tf_fixture_check(tf_fixture_run_t *r) {
  bool ok = tf_fixtures_check_outputs(r->rt, r->dir, r->name, r->res,
                                      r->mf.num_fetches, r->mf.rtol,
                                      r->mf.atol);
  for (size_t i = 0; i < 64; i++)
    eddy_eval_value_release(&r->res[i]);
  return ok;
}

/// Reports st (and destroys it) and frees everything r holds; returns ok
/// when st is NULL.
static inline bool tf_fixture_close(tf_fixture_run_t *r, eddy_status_t st,
                                    bool ok) {
  if (st) {
    tf_fixtures_report("%s: %s\n", r->name, eddy_status_message(st));
    eddy_status_destroy(st);
    ok = false;
  }
  for (size_t i = 0; i < 64; i++) {
    eddy_eval_value_release(&r->args[i]);
    eddy_eval_value_release(&r->res[i]);
  }
  if (r->rt)
    eddy_rt_ctx_destroy(r->rt);
  eddy_ir_module_destroy(r->m);
  if (r->ctx)
    eddy_ir_ctx_destroy(r->ctx);
  tf_manifest_free(&r->mf);
  return ok;
}

#endif

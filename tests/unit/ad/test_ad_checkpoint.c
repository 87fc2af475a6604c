/// Checkpointed loop gradients (eddy_ad_options_t.loop_memory, the
/// eddy.loop_memory attribute): the gradient of every policy equals the
/// stored one at every trip count (none, one, a partial last segment, many),
/// nested loops included, and holds less memory while it runs.
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "autodiff/ad.h"
#include "dialects/dialects.h"
#include "ir/ir.h"
#include "ir/passes/passes.h"

#include "tests/unit/ad/ad_test_util.h"

#include <math.h>

/// h = tanh(W h + x_t) for t < n (n from an argument), with an inner loop
/// that applies 0.9 * tanh j times, j = t mod 3, to the state's copy: an
/// outer loop of data-dependent trip count around one with zero trips.
static const char k_prog[] =
    "module {\n"
    "  func.func @f(%xs: tensor<?x4xf64>, %w: tensor<4x4xf64>, %h0: tensor<4xf64>, %n: tensor<i64>) -> tensor<4xf64> {\n"
    "    %z = \"core.constant\"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>\n"
    "    %r:2 = \"ctl.while\"(%z, %h0) ({\n"
    "    ^bb0(%t: tensor<i64>, %h: tensor<4xf64>):\n"
    "      %p = \"core.lt\"(%t, %n) : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
    "      \"ctl.condition\"(%p) : (tensor<i1>) -> ()\n"
    "    }, {\n"
    "    ^bb0(%t2: tensor<i64>, %h2: tensor<4xf64>):\n"
    "      %d = \"core.dim\"(%xs) {index = 0} : (tensor<?x4xf64>) -> tensor<i64>\n"
    "      %ti = \"core.rem\"(%t2, %d) : (tensor<i64>, tensor<i64>) -> tensor<i64>\n"
    "      %xt = \"core.gather\"(%xs, %ti) {axis = 0} : (tensor<?x4xf64>, tensor<i64>) -> tensor<4xf64>\n"
    "      %hc = \"core.reshape\"(%h2) {shape = [4, 1]} : (tensor<4xf64>) -> tensor<4x1xf64>\n"
    "      %wh = \"core.matmul\"(%w, %hc) : (tensor<4x4xf64>, tensor<4x1xf64>) -> tensor<4x1xf64>\n"
    "      %wv = \"core.reshape\"(%wh) {shape = [4]} : (tensor<4x1xf64>) -> tensor<4xf64>\n"
    "      %s = \"core.add\"(%wv, %xt) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>\n"
    "      %hn = \"core.tanh\"(%s) : (tensor<4xf64>) -> tensor<4xf64>\n"
    "      %three = \"core.constant\"() {value = dense<3> : tensor<i64>} : () -> tensor<i64>\n"
    "      %jn = \"core.rem\"(%t2, %three) : (tensor<i64>, tensor<i64>) -> tensor<i64>\n"
    "      %q:2 = \"ctl.while\"(%z, %hn) ({\n"
    "      ^bb0(%j: tensor<i64>, %y: tensor<4xf64>):\n"
    "        %pj = \"core.lt\"(%j, %jn) : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
    "        \"ctl.condition\"(%pj) : (tensor<i1>) -> ()\n"
    "      }, {\n"
    "      ^bb0(%j2: tensor<i64>, %y2: tensor<4xf64>):\n"
    "        %k = \"core.constant\"() {value = dense<0.9> : tensor<f64>} : () -> tensor<f64>\n"
    "        %ty = \"core.tanh\"(%y2) : (tensor<4xf64>) -> tensor<4xf64>\n"
    "        %yn = \"core.mul\"(%ty, %k) : (tensor<4xf64>, tensor<f64>) -> tensor<4xf64>\n"
    "        %one = \"core.constant\"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>\n"
    "        %jj = \"core.add\"(%j2, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>\n"
    "        \"ctl.yield\"(%jj, %yn) : (tensor<i64>, tensor<4xf64>) -> ()\n"
    "      }) %ATTR : (tensor<i64>, tensor<4xf64>) -> (tensor<i64>, tensor<4xf64>)\n"
    "      %one2 = \"core.constant\"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>\n"
    "      %tn = \"core.add\"(%t2, %one2) : (tensor<i64>, tensor<i64>) -> tensor<i64>\n"
    "      \"ctl.yield\"(%tn, %q#1) : (tensor<i64>, tensor<4xf64>) -> ()\n"
    "    }) : (tensor<i64>, tensor<4xf64>) -> (tensor<i64>, tensor<4xf64>)\n"
    "    \"func.return\"(%r#1) : (tensor<4xf64>) -> ()\n"
    "  }\n"
    "}\n";

/// tmpl with its one `mark` replaced by value, parsed into f->m (replacing
/// any earlier module).
static void parse_subst(fixture_t *f, const char *tmpl, const char *mark,
                        const char *value) {
  const char *at = strstr(tmpl, mark);
  assert_non_null(at);
  size_t len = strlen(tmpl) + strlen(value) + 1;
  char *text = malloc(len);
  assert_non_null(text);
  int n = snprintf(text, len, "%.*s%s%s", (int)(at - tmpl), tmpl, value,
                   at + strlen(mark));
  assert_true(n > 0 && (size_t)n < len);
  if (f->m)
    eddy_ir_module_destroy(f->m);
  f->m = NULL;
  parse(f, text);
  free(text);
}

/// k_prog with the inner loop's attribute dictionary set to attr ("" for
/// none).
static void parse_prog(fixture_t *f, const char *attr) {
  parse_subst(f, k_prog, "%ATTR", attr);
}

/// Arguments of @f_grad: xs [5x4], w, h0, n, seed.
static void make_args(fixture_t *f, int64_t n, eddy_eval_value_t *a) {
  double xs[20], w[16], h0[4], seed[4] = {1.0, -0.5, 0.25, 2.0};
  for (int i = 0; i < 20; i++)
    xs[i] = sin(0.7 * i + 0.3);
  for (int i = 0; i < 16; i++)
    w[i] = 0.4 * cos(1.3 * i);
  for (int i = 0; i < 4; i++)
    h0[i] = 0.1 * (i + 1);
  int64_t dx[2] = {5, 4}, dw[2] = {4, 4}, dv[1] = {4};
  double nn = (double)n;
  a[0] = tensor_of(f, EDDY_RT_F64, 2, dx, xs);
  a[1] = tensor_of(f, EDDY_RT_F64, 2, dw, w);
  a[2] = tensor_of(f, EDDY_RT_F64, 1, dv, h0);
  a[3] = tensor_of(f, EDDY_RT_I64, 0, NULL, &nn);
  a[4] = tensor_of(f, EDDY_RT_F64, 1, dv, seed);
}

/// Differentiates @f w.r.t. xs, w, h0 with opts and evaluates the gradient
/// at trip count n: out[0] the result, out[1..3] the gradients. Returns
/// the runtime context's peak bytes during the call.
static int64_t grad_eval(fixture_t *f, const eddy_ad_options_t *opts,
                         const char *attr, int64_t n, eddy_eval_value_t *out) {
  parse_prog(f, attr);
  size_t wrt[3] = {0, 1, 2};
  eddy_op_t *gf = NULL;
  expect_ok(eddy_ad_grad_opts(f->m, "f", wrt, 3, opts, NULL, &gf));
  expect_ok(eddy_ir_verify_module(f->m));
  eddy_eval_value_t a[5];
  make_args(f, n, a);
  eddy_rt_ctx_t *rt = NULL;
  assert_null(eddy_rt_ctx_create(NULL, &rt));
  for (int i = 0; i < 4; i++)
    out[i] = (eddy_eval_value_t){0};
  expect_ok(eddy_eval_func(rt, gf, NULL, a, 5, out, 4));
  int64_t peak = eddy_rt_ctx_peak_bytes(rt);
  for (int i = 0; i < 5; i++)
    eddy_eval_value_release(&a[i]);
  /* The results keep their buffers; rt must outlive them, so copy. */
  for (int i = 0; i < 4; i++) {
    eddy_rt_tensor_t *t = &out[i].tensor;
    int64_t numel = eddy_rt_tensor_numel(t);
    double v[20];
    assert_true(numel <= 20);
    for (int64_t k = 0; k < numel; k++)
      v[k] = eddy_rt_tensor_get_f64(t, k);
    eddy_eval_value_t c =
        tensor_of(f, EDDY_RT_F64, t->rank, t->dims, v);
    eddy_eval_value_release(&out[i]);
    out[i] = c;
  }
  eddy_rt_ctx_destroy(rt);
  return peak;
}

static void expect_close(const eddy_eval_value_t *a, const eddy_eval_value_t *b,
                         const char *what, int64_t n) {
  for (int i = 0; i < 4; i++) {
    int64_t numel = eddy_rt_tensor_numel(&a[i].tensor);
    assert_int_equal(numel, eddy_rt_tensor_numel(&b[i].tensor));
    for (int64_t k = 0; k < numel; k++) {
      double x = eddy_rt_tensor_get_f64(&a[i].tensor, k);
      double y = eddy_rt_tensor_get_f64(&b[i].tensor, k);
      if (fabs(x - y) > 1e-12 * (1.0 + fabs(x))) {
        fprintf(stderr, "%s, n = %lld: result %d[%lld]: %.17g vs %.17g\n",
                what, (long long)n, i, (long long)k, x, y);
        fail();
      }
    }
  }
}

static void release4(eddy_eval_value_t *v) {
  for (int i = 0; i < 4; i++)
    eddy_eval_value_release(&v[i]);
}

/// Every policy gives the stored gradient, at trip counts 0, 1, 2, 7, 23.
static void test_policies_agree(void **state) {
  fixture_t *f = *state;
  static const int64_t trips[] = {0, 1, 2, 7, 23};
  static const int64_t slots[] = {0, 1, 3, 5, 100};
  for (size_t t = 0; t < sizeof trips / sizeof trips[0]; t++) {
    eddy_ad_options_t store = eddy_ad_options_default();
    eddy_eval_value_t ref[4];
    grad_eval(f, &store, "", trips[t], ref);
    for (size_t s = 0; s < sizeof slots / sizeof slots[0]; s++) {
      eddy_ad_options_t o = {.loop_memory = EDDY_AD_LOOP_CHECKPOINT,
                             .checkpoint_slots = slots[s]};
      eddy_eval_value_t got[4];
      grad_eval(f, &o, "", trips[t], got);
      char what[64];
      snprintf(what, sizeof what, "checkpoint:%lld", (long long)slots[s]);
      expect_close(ref, got, what, trips[t]);
      release4(got);
    }
    /* Only the inner loop, by its attribute. */
    eddy_eval_value_t got[4];
    grad_eval(f, &store, "{eddy.loop_memory = \"checkpoint:2\"}", trips[t],
              got);
    expect_close(ref, got, "inner loop checkpoint:2", trips[t]);
    release4(got);
    release4(ref);
  }
}

/// The checkpointed gradient of a long loop holds a fraction of the stored
/// one's memory at its peak.
static void test_less_memory(void **state) {
  fixture_t *f = *state;
  eddy_ad_options_t store = eddy_ad_options_default();
  eddy_ad_options_t ck = {.loop_memory = EDDY_AD_LOOP_CHECKPOINT};
  eddy_ad_options_t ck8 = {.loop_memory = EDDY_AD_LOOP_CHECKPOINT,
                           .checkpoint_slots = 8};
  eddy_eval_value_t a[4], b[4], c[4];
  int64_t p_store = grad_eval(f, &store, "", 2000, a);
  int64_t p_ck = grad_eval(f, &ck, "", 2000, b);
  int64_t p_ck8 = grad_eval(f, &ck8, "", 2000, c);
  expect_close(a, b, "checkpoint", 2000);
  expect_close(a, c, "checkpoint:8", 2000);
  fprintf(stderr, "peak bytes: store %lld, checkpoint %lld, checkpoint:8 %lld\n",
          (long long)p_store, (long long)p_ck, (long long)p_ck8);
  /* 2000 steps: about 63 segments of at most 63 steps; 8 of 250. */
  assert_true(p_ck * 8 < p_store);
  assert_true(p_ck8 * 4 < p_store);
  release4(a);
  release4(b);
  release4(c);
}

/// A loop_memory value that does not parse is an error naming the loop.
static void test_bad_policy(void **state) {
  fixture_t *f = *state;
  parse_prog(f, "{eddy.loop_memory = \"sometimes\"}");
  size_t wrt[1] = {1};
  eddy_op_t *gf = NULL;
  eddy_status_t st = eddy_ad_grad_opts(f->m, "f", wrt, 1, NULL, NULL, &gf);
  assert_non_null(st);
  assert_null(gf);
  const char *msg = eddy_status_message(st);
  assert_non_null(strstr(msg, "eddy.loop_memory"));
  assert_non_null(strstr(msg, "'sometimes'"));
  assert_non_null(strstr(msg, "ctl.while"));
  eddy_status_destroy(st);
  assert_null(eddy_ir_module_lookup_func(f->m, "f_grad"));

  static const char *const bad[] = {"",           "checkpoint:",
                                    "checkpoint:0", "checkpoint:-1",
                                    "checkpoint:2x", "checkpoint:99999999999",
                                    "storing",    "checkpoint2"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    eddy_ad_loop_memory_t mem;
    int64_t slots;
    st = eddy_ad_parse_loop_memory(bad[i], &mem, &slots);
    assert_non_null(st);
    eddy_status_destroy(st);
  }
  eddy_ad_loop_memory_t mem;
  int64_t slots;
  expect_ok(eddy_ad_parse_loop_memory("checkpoint:12", &mem, &slots));
  assert_int_equal(mem, EDDY_AD_LOOP_CHECKPOINT);
  assert_int_equal(slots, 12);
  expect_ok(eddy_ad_parse_loop_memory("store", &mem, &slots));
  assert_int_equal(mem, EDDY_AD_LOOP_STORE);
}


/// RevNet's coupling over a depth from the weights' first dimension:
/// y1 = x1 + tanh(x2 Wf[t]), y2 = x2 + tanh(y1 Wg[t]).
static const char k_revnet[] =
    "module {\n"
    "  func.func @r(%x1: tensor<2x3xf64>, %x2: tensor<2x3xf64>, %wf: tensor<?x3x3xf64>, %wg: tensor<?x3x3xf64>) -> (tensor<2x3xf64>, tensor<2x3xf64>) {\n"
    "    %z = \"core.constant\"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>\n"
    "    %d = \"core.dim\"(%wf) {index = 0} : (tensor<?x3x3xf64>) -> tensor<i64>\n"
    "    %r:3 = \"ctl.while\"(%z, %x1, %x2) ({\n"
    "    ^bb0(%t: tensor<i64>, %a: tensor<2x3xf64>, %c: tensor<2x3xf64>):\n"
    "      %p = \"core.lt\"(%t, %d) : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
    "      \"ctl.condition\"(%p) : (tensor<i1>) -> ()\n"
    "    }, {\n"
    "    ^bb0(%t2: tensor<i64>, %a2: tensor<2x3xf64>, %c2: tensor<2x3xf64>):\n"
    "      %wft = \"core.gather\"(%wf, %t2) {axis = 0} : (tensor<?x3x3xf64>, tensor<i64>) -> tensor<3x3xf64>\n"
    "      %fm = \"core.matmul\"(%c2, %wft) : (tensor<2x3xf64>, tensor<3x3xf64>) -> tensor<2x3xf64>\n"
    "      %f = \"core.tanh\"(%fm) : (tensor<2x3xf64>) -> tensor<2x3xf64>\n"
    "      %y1 = \"core.add\"(%a2, %f) : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>\n"
    "      %wgt = \"core.gather\"(%wg, %t2) {axis = 0} : (tensor<?x3x3xf64>, tensor<i64>) -> tensor<3x3xf64>\n"
    "      %gm = \"core.matmul\"(%y1, %wgt) : (tensor<2x3xf64>, tensor<3x3xf64>) -> tensor<2x3xf64>\n"
    "      %g = \"core.tanh\"(%gm) : (tensor<2x3xf64>) -> tensor<2x3xf64>\n"
    "      %y2 = \"%OP\"(%c2, %g) : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>\n"
    "      %one = \"core.constant\"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>\n"
    "      %tn = \"core.add\"(%t2, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>\n"
    "      \"ctl.yield\"(%tn, %y1, %y2) : (tensor<i64>, tensor<2x3xf64>, tensor<2x3xf64>) -> ()\n"
    "    }) : (tensor<i64>, tensor<2x3xf64>, tensor<2x3xf64>) -> (tensor<i64>, tensor<2x3xf64>, tensor<2x3xf64>)\n"
    "    \"func.return\"(%r#1, %r#2) : (tensor<2x3xf64>, tensor<2x3xf64>) -> ()\n"
    "  }\n"
    "}\n";

/// k_revnet with the update of x2 by op (core.add, core.sub, core.mul).
static void parse_revnet(fixture_t *f, const char *op) {
  parse_subst(f, k_revnet, "%OP", op);
}

/// The gradient of @r (w.r.t. everything) under opts at depth d: out[0..5]
/// the two results and four gradients. Returns the peak bytes.
static int64_t revnet_eval(fixture_t *f, const char *op,
                           const eddy_ad_options_t *opts, int64_t d,
                           eddy_eval_value_t *out) {
  parse_revnet(f, op);
  size_t wrt[4] = {0, 1, 2, 3};
  eddy_op_t *gf = NULL;
  expect_ok(eddy_ad_grad_opts(f->m, "r", wrt, 4, opts, NULL, &gf));
  expect_ok(eddy_ir_verify_module(f->m));
  double x1[6], x2[6], wf[9 * 64], wg[9 * 64], s1[6], s2[6];
  for (int i = 0; i < 6; i++) {
    x1[i] = sin(1.1 * i + 0.2);
    x2[i] = cos(0.9 * i);
    s1[i] = 1.0 - 0.1 * i;
    s2[i] = 0.5 + 0.2 * i;
  }
  for (int i = 0; i < 9 * 64; i++) {
    wf[i] = 0.5 * sin(0.37 * i + 1.0);
    wg[i] = 0.5 * cos(0.53 * i);
  }
  assert_true(d <= 64);
  int64_t dx[2] = {2, 3}, dw[3] = {d, 3, 3};
  eddy_eval_value_t a[6] = {
      tensor_of(f, EDDY_RT_F64, 2, dx, x1), tensor_of(f, EDDY_RT_F64, 2, dx, x2),
      tensor_of(f, EDDY_RT_F64, 3, dw, wf), tensor_of(f, EDDY_RT_F64, 3, dw, wg),
      tensor_of(f, EDDY_RT_F64, 2, dx, s1), tensor_of(f, EDDY_RT_F64, 2, dx, s2)};
  eddy_rt_ctx_t *rt = NULL;
  assert_null(eddy_rt_ctx_create(NULL, &rt));
  eddy_eval_value_t res[6] = {{0}};
  expect_ok(eddy_eval_func(rt, gf, NULL, a, 6, res, 6));
  int64_t peak = eddy_rt_ctx_peak_bytes(rt);
  for (int i = 0; i < 6; i++) {
    eddy_eval_value_release(&a[i]);
    eddy_rt_tensor_t *t = &res[i].tensor;
    int64_t numel = eddy_rt_tensor_numel(t);
    double *v = malloc((size_t)(numel ? numel : 1) * sizeof(*v));
    assert_non_null(v);
    for (int64_t k = 0; k < numel; k++)
      v[k] = eddy_rt_tensor_get_f64(t, k);
    out[i] = tensor_of(f, EDDY_RT_F64, t->rank, t->dims, v);
    free(v);
    eddy_eval_value_release(&res[i]);
  }
  eddy_rt_ctx_destroy(rt);
  return peak;
}

/// The largest |a - b| / max |a| over the six results.
static double revnet_diff(const eddy_eval_value_t *a,
                          const eddy_eval_value_t *b) {
  double worst = 0;
  for (int i = 0; i < 6; i++) {
    int64_t numel = eddy_rt_tensor_numel(&a[i].tensor);
    assert_int_equal(numel, eddy_rt_tensor_numel(&b[i].tensor));
    double big = 0, diff = 0;
    for (int64_t k = 0; k < numel; k++) {
      double x = eddy_rt_tensor_get_f64(&a[i].tensor, k);
      double y = eddy_rt_tensor_get_f64(&b[i].tensor, k);
      big = fmax(big, fabs(x));
      diff = fmax(diff, fabs(x - y));
    }
    if (big > 0)
      worst = fmax(worst, diff / big);
  }
  return worst;
}

/// Reversible: the gradient of RevNet's coupling equals the stored one
/// (within 1e-6, the RevNet write-up's check; in f64 far closer), with
/// either sign of update, at depths 0 to 48, and its memory does not grow
/// with the depth.
static void test_reversible(void **state) {
  fixture_t *f = *state;
  eddy_ad_options_t store = eddy_ad_options_default();
  eddy_ad_options_t rev = {.loop_memory = EDDY_AD_LOOP_REVERSIBLE};
  static const int64_t depths[] = {0, 1, 2, 7, 48};
  static const char *const ops[] = {"core.add", "core.sub"};
  int64_t peak_rev[2] = {0, 0}, peak_store[2] = {0, 0};
  for (size_t o = 0; o < 2; o++)
    for (size_t i = 0; i < sizeof depths / sizeof depths[0]; i++) {
      eddy_eval_value_t a[6], b[6];
      int64_t ps = revnet_eval(f, ops[o], &store, depths[i], a);
      int64_t pr = revnet_eval(f, ops[o], &rev, depths[i], b);
      double d = revnet_diff(a, b);
      if (d > 1e-10)
        fprintf(stderr, "%s, depth %lld: reversible differs by %.3g\n",
                ops[o], (long long)depths[i], d);
      assert_true(d <= 1e-10);
      if (depths[i] == 7) {
        peak_store[0] = ps;
        peak_rev[0] = pr;
      } else if (depths[i] == 48) {
        peak_store[1] = ps;
        peak_rev[1] = pr;
      }
      for (int k = 0; k < 6; k++) {
        eddy_eval_value_release(&a[k]);
        eddy_eval_value_release(&b[k]);
      }
    }
  /* From depth 7 to 48, the reversible gradient's peak grows by what is
     proportional to the depth anyway: the weights (41 * 2 * 72 bytes),
     their gradients and sums of them; store's by that and, per block, its
     stored intermediates (at least four 2x3 tensors: 192 bytes). */
  fprintf(stderr, "peak bytes, depth 7 / 48: store %lld / %lld, "
                  "reversible %lld / %lld\n",
          (long long)peak_store[0], (long long)peak_store[1],
          (long long)peak_rev[0], (long long)peak_rev[1]);
  assert_true(peak_rev[1] - peak_rev[0] <= 6 * 41 * 2 * 72);
  assert_true((peak_store[1] - peak_store[0]) - (peak_rev[1] - peak_rev[0]) >=
              41 * 192);
}

/// A body that does not update each value by an invertible addition is
/// refused, naming the op.
static void test_reversible_refused(void **state) {
  fixture_t *f = *state;
  eddy_ad_options_t rev = {.loop_memory = EDDY_AD_LOOP_REVERSIBLE};
  parse_revnet(f, "core.mul");
  size_t wrt[1] = {0};
  eddy_op_t *gf = NULL;
  eddy_status_t st = eddy_ad_grad_opts(f->m, "r", wrt, 1, &rev, NULL, &gf);
  assert_non_null(st);
  const char *msg = eddy_status_message(st);
  assert_non_null(strstr(msg, "'core.mul' op reversible: loop value #2"));
  assert_non_null(strstr(msg, "cannot be inverted"));
  eddy_status_destroy(st);
  /* y1 = x1 + tanh(x1 Wf): the term of x1's update depends on x1. */
  static char text[sizeof k_revnet + 64];
  const char *mm = strstr(k_revnet, "(%c2, %wft)");
  const char *opp = strstr(k_revnet, "%OP");
  assert_true(mm && opp && mm < opp);
  int n = snprintf(text, sizeof text, "%.*s(%%a2, %%wft)%.*score.add%s",
                   (int)(mm - k_revnet), k_revnet,
                   (int)(opp - (mm + strlen("(%c2, %wft)"))),
                   mm + strlen("(%c2, %wft)"), opp + 3);
  assert_true(n > 0 && (size_t)n < sizeof text);
  eddy_ir_module_destroy(f->m);
  f->m = NULL;
  parse(f, text);
  st = eddy_ad_grad_opts(f->m, "r", wrt, 1, &rev, NULL, &gf);
  assert_non_null(st);
  msg = eddy_status_message(st);
  assert_non_null(strstr(msg, "'core.add' op reversible: loop value #1"));
  assert_non_null(strstr(msg, "depends on it"));
  eddy_status_destroy(st);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_policies_agree, setup, teardown),
      cmocka_unit_test_setup_teardown(test_less_memory, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bad_policy, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reversible, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reversible_refused, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

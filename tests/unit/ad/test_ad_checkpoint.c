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

/// k_prog with the inner loop's attribute dictionary set to attr ("" for
/// none), parsed into f->m (replacing any earlier module).
static void parse_prog(fixture_t *f, const char *attr) {
  static char text[sizeof k_prog + 256];
  const char *at = strstr(k_prog, "%ATTR");
  assert_non_null(at);
  size_t head = (size_t)(at - k_prog);
  int n = snprintf(text, sizeof text, "%.*s%s%s", (int)head, k_prog, attr,
                   at + 5);
  assert_true(n > 0 && (size_t)n < sizeof text);
  if (f->m)
    eddy_ir_module_destroy(f->m);
  f->m = NULL;
  parse(f, text);
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_policies_agree, setup, teardown),
      cmocka_unit_test_setup_teardown(test_less_memory, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bad_policy, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

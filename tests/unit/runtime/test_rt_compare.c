/// Comparing results with references (runtime/compare.c): the measures,
/// the tolerance rule, an entry checked against references, the JSON.
#include "rt_test.h"

#include <float.h>

static void test_eps(void **state) {
  (void)state;
  assert_true(eddy_rt_dtype_eps(EDDY_RT_F16) == 0x1p-10);
  assert_true(eddy_rt_dtype_eps(EDDY_RT_BF16) == 0x1p-7);
  assert_true(eddy_rt_dtype_eps(EDDY_RT_F32) == FLT_EPSILON);
  assert_true(eddy_rt_dtype_eps(EDDY_RT_F64) == DBL_EPSILON);
  assert_true(eddy_rt_dtype_eps(EDDY_RT_I32) == 0);
  assert_true(eddy_rt_dtype_eps(99) == 0);
}

static void test_floats(void **state) {
  (void)state;
  eddy_rt_ctx_t *ctx = rtt_ctx(1);
  double rv[4] = {1, -2, 4, 0};
  eddy_rt_tensor_t ref = rtt_f(ctx, EDDY_RT_F32, "2x2", rv);
  eddy_rt_compare_result_t c;
  // Equal: nothing measured, worst -1; the default tolerance is 4 eps per op
  // relative to max|ref|.
  assert_null(eddy_rt_compare_tensor(&ref, &ref, NULL, &c));
  assert_true(c.ok && c.same_type);
  assert_true(c.max_abs == 0 && c.max_rel == 0 && c.max_ulp == 0);
  assert_int_equal(c.worst, -1);
  assert_true(c.tolerance == 4 * FLT_EPSILON * 4);

  // One ulp off at 4 (ulp 2^-21) and two at -2 (2^-22 each).
  double gv[4] = {1, -2 - 0x1p-21, 4 + 0x1p-21, 0};
  eddy_rt_tensor_t got = rtt_f(ctx, EDDY_RT_F32, "2x2", gv);
  eddy_rt_compare_opts_t o = eddy_rt_compare_opts_default();
  o.num_ops = 10;
  assert_null(eddy_rt_compare_tensor(&ref, &got, &o, &c));
  assert_true(c.ok);
  assert_true(c.max_abs == 0x1p-21);
  assert_true(c.max_rel == 0x1p-22); // at -2
  assert_true(c.max_ulp == 2);
  assert_int_equal(c.worst, 1); // the first of the two largest
  assert_true(c.tolerance == 4 * FLT_EPSILON * 10 * 4);
  // A tolerance of 0 fails it; atol alone passes it.
  o.rtol = 0;
  assert_null(eddy_rt_compare_tensor(&ref, &got, &o, &c));
  assert_false(c.ok);
  assert_true(c.tolerance == 0);
  o.atol = 0x1p-21;
  assert_null(eddy_rt_compare_tensor(&ref, &got, &o, &c));
  assert_true(c.ok);

  // NaN matches NaN only; infinity the same infinity only.
  double nv[4] = {NAN, INFINITY, 4, 0};
  eddy_rt_tensor_t nref = rtt_f(ctx, EDDY_RT_F32, "2x2", nv);
  assert_null(eddy_rt_compare_tensor(&nref, &nref, NULL, &c));
  assert_true(c.ok);
  double nv2[4] = {NAN, -INFINITY, 4, 0};
  eddy_rt_tensor_t ngot = rtt_f(ctx, EDDY_RT_F32, "2x2", nv2);
  assert_null(eddy_rt_compare_tensor(&nref, &ngot, NULL, &c));
  assert_false(c.ok);
  assert_true(isinf(c.max_abs));
  assert_int_equal(c.worst, 1);
  nv2[0] = 1;
  nv2[1] = INFINITY;
  eddy_rt_tensor_release(&ngot);
  ngot = rtt_f(ctx, EDDY_RT_F32, "2x2", nv2);
  assert_null(eddy_rt_compare_tensor(&nref, &ngot, NULL, &c));
  assert_false(c.ok);
  assert_int_equal(c.worst, 0);

  // f16 ulps are the f16 mantissa's: 1 + 2^-10 is one ulp from 1.
  double hv[1] = {1}, hv2[1] = {1 + 0x1p-10};
  eddy_rt_tensor_t h = rtt_f(ctx, EDDY_RT_F16, "1", hv);
  eddy_rt_tensor_t h2 = rtt_f(ctx, EDDY_RT_F16, "1", hv2);
  assert_null(eddy_rt_compare_tensor(&h, &h2, NULL, &c));
  assert_true(c.max_ulp == 1);
  assert_true(c.tolerance == 4 * 0x1p-10);
  assert_true(c.ok);
  eddy_rt_tensor_release(&h);
  eddy_rt_tensor_release(&h2);
  eddy_rt_tensor_release(&ref);
  eddy_rt_tensor_release(&got);
  eddy_rt_tensor_release(&nref);
  eddy_rt_tensor_release(&ngot);
  eddy_rt_ctx_destroy(ctx);
}

static void test_ints_shapes_strides(void **state) {
  (void)state;
  eddy_rt_ctx_t *ctx = rtt_ctx(1);
  int64_t a[3] = {1, 2, 3}, b[3] = {1, 2, 5};
  eddy_rt_tensor_t ta = rtt_i(ctx, EDDY_RT_I32, "3", a);
  eddy_rt_tensor_t tb = rtt_i(ctx, EDDY_RT_I32, "3", b);
  eddy_rt_compare_result_t c;
  eddy_rt_compare_opts_t o = eddy_rt_compare_opts_default();
  o.atol = 10; // integers are exact whatever the tolerance
  assert_null(eddy_rt_compare_tensor(&ta, &tb, &o, &c));
  assert_false(c.ok);
  assert_true(c.max_abs == 2 && c.tolerance == 0);
  assert_int_equal(c.worst, 2);

  // Another dtype or shape: same_type false, nothing measured.
  eddy_rt_tensor_t tc = rtt_i(ctx, EDDY_RT_I64, "3", a);
  assert_null(eddy_rt_compare_tensor(&ta, &tc, NULL, &c));
  assert_false(c.same_type || c.ok);
  eddy_rt_tensor_t td = rtt_i(ctx, EDDY_RT_I32, "1x3", a);
  assert_null(eddy_rt_compare_tensor(&ta, &td, NULL, &c));
  assert_false(c.same_type);

  // Strides: a reversed view of b compared with {5, 2, 1}.
  int64_t r[3] = {5, 2, 1};
  eddy_rt_tensor_t tr = rtt_i(ctx, EDDY_RT_I32, "3", r);
  eddy_rt_tensor_t rev = tb;
  rev.owner = NULL;
  rev.data = (int32_t *)tb.data + 2;
  rev.strides[0] = -1;
  assert_null(eddy_rt_compare_tensor(&tr, &rev, NULL, &c));
  assert_true(c.ok);

  // A descriptor that does not validate is an error naming it.
  eddy_rt_tensor_t bad = ta;
  bad.dtype = 42;
  eddy_rt_status_t st = eddy_rt_compare_tensor(&ta, &bad, NULL, &c);
  assert_int_equal(eddy_rt_status_code(st), EDDY_RT_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(eddy_rt_status_message(st), "result"));
  eddy_rt_status_destroy(st);
  eddy_rt_tensor_release(&ta);
  eddy_rt_tensor_release(&tb);
  eddy_rt_tensor_release(&tc);
  eddy_rt_tensor_release(&td);
  eddy_rt_tensor_release(&tr);
  eddy_rt_ctx_destroy(ctx);
}

/// An entry with the generated signature: results[0] = 2 * args[0] (f32,
/// any length) plus `bias`, results[1] = its length (i64); fails on an
/// empty argument.
static float g_bias;

static int32_t twice(eddy_rt_ctx_t *rt, const eddy_rt_tensor_t *args,
                     eddy_rt_tensor_t *results, char *err, size_t errlen) {
  int32_t code = eddy_rt_entry_begin(rt, args, 1, results, 2, err, errlen);
  if (code)
    return code;
  int64_t n = args[0].dims[0];
  if (n == 0) {
    snprintf(err, errlen, "argument 0 is empty");
    return EDDY_RT_ERR_INVALID_ARGUMENT;
  }
  code = eddy_rt_entry_alloc_result(rt, results, 0, EDDY_RT_F32, 1, &n, err,
                                    errlen);
  if (!code)
    code = eddy_rt_entry_alloc_result(rt, results, 1, EDDY_RT_I64, 0, NULL,
                                      err, errlen);
  if (code)
    return code;
  for (int64_t i = 0; i < n; i++)
    ((float *)results[0].data)[i] =
        2 * ((const float *)args[0].data)[i] + g_bias;
  *(int64_t *)results[1].data = n;
  return 0;
}

static void test_entry(void **state) {
  (void)state;
  eddy_rt_ctx_t *ctx = rtt_ctx(1);
  float x[3] = {1, 2, 3};
  int64_t n = 3;
  eddy_rt_tensor_t arg;
  assert_null(eddy_rt_tensor_wrap(EDDY_RT_F32, 1, &n, x, &arg));
  double want[3] = {2, 4, 6};
  int64_t len = 3;
  eddy_rt_tensor_t refs[2] = {rtt_f(ctx, EDDY_RT_F32, "3", want),
                              rtt_i(ctx, EDDY_RT_I64, "", &len)};
  eddy_rt_compare_result_t rep[2];
  bool ok = false;
  g_bias = 0;
  assert_null(eddy_rt_compare_entry(ctx, twice, &arg, refs, 2, NULL, rep, &ok));
  assert_true(ok && rep[0].ok && rep[1].ok);
  // The results are released: nothing stays allocated but the references.
  int64_t in_use = eddy_rt_ctx_bytes_in_use(ctx);

  // Off by 1e-3 at every element: beyond 4 eps, within an atol of 1e-3.
  g_bias = 1e-3f;
  assert_null(eddy_rt_compare_entry(ctx, twice, &arg, refs, 2, NULL, rep, &ok));
  assert_false(ok);
  assert_false(rep[0].ok);
  assert_true(rep[1].ok);
  assert_true(fabs(rep[0].max_abs - 1e-3) < 1e-6);
  eddy_rt_compare_opts_t o = eddy_rt_compare_opts_default();
  o.atol = 2e-3;
  assert_null(eddy_rt_compare_entry(ctx, twice, &arg, refs, 2, &o, rep, &ok));
  assert_true(ok);
  assert_int_equal(eddy_rt_ctx_bytes_in_use(ctx), in_use);

  // A failing call is an error with the entry's code and message.
  n = 0;
  assert_null(eddy_rt_tensor_wrap(EDDY_RT_F32, 1, &n, x, &arg));
  eddy_rt_status_t st =
      eddy_rt_compare_entry(ctx, twice, &arg, refs, 2, NULL, rep, &ok);
  assert_int_equal(eddy_rt_status_code(st), EDDY_RT_ERR_INVALID_ARGUMENT);
  assert_string_equal(eddy_rt_status_message(st),
                      "the entry failed: argument 0 is empty");
  assert_false(ok);
  eddy_rt_status_destroy(st);
  st = eddy_rt_compare_entry(ctx, NULL, &arg, refs, 2, NULL, rep, &ok);
  assert_int_equal(eddy_rt_status_code(st), EDDY_RT_ERR_INVALID_ARGUMENT);
  eddy_rt_status_destroy(st);
  eddy_rt_tensor_release(&refs[0]);
  eddy_rt_tensor_release(&refs[1]);
  assert_int_equal(eddy_rt_ctx_bytes_in_use(ctx), 0);
  eddy_rt_ctx_destroy(ctx);
}

static void test_json(void **state) {
  (void)state;
  eddy_rt_compare_result_t r[3] = {
      {.same_type = true, .ok = true, .tolerance = 1.5e-6, .worst = -1},
      {.same_type = true, .max_abs = INFINITY, .max_rel = INFINITY,
       .max_ulp = 3, .worst = 0},
      {.same_type = false, .worst = -1},
  };
  const char *want =
      "[\n"
      "  {\"index\": 0, \"ok\": true, \"same_type\": true, \"max_abs\": 0, "
      "\"max_rel\": 0, \"max_ulp\": 0, \"tolerance\": 1.5e-06},\n"
      "  {\"index\": 1, \"ok\": false, \"same_type\": true, \"max_abs\": "
      "null, \"max_rel\": null, \"max_ulp\": 3, \"tolerance\": 0},\n"
      "  {\"index\": 2, \"ok\": false, \"same_type\": false}\n"
      "]";
  size_t len = eddy_rt_compare_json(r, 3, NULL, 0);
  assert_int_equal(len, strlen(want));
  char buf[512];
  assert_int_equal(eddy_rt_compare_json(r, 3, buf, sizeof buf), len);
  assert_string_equal(buf, want);
  // Truncated as snprintf truncates; the length is still the whole text's.
  char small[8];
  assert_int_equal(eddy_rt_compare_json(r, 3, small, sizeof small), len);
  assert_string_equal(small, "[\n  {\"i");
  assert_int_equal(eddy_rt_compare_json(r, 0, buf, sizeof buf), 2);
  assert_string_equal(buf, "[]");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_eps),
      cmocka_unit_test(test_floats),
      cmocka_unit_test(test_ints_shapes_strides),
      cmocka_unit_test(test_entry),
      cmocka_unit_test(test_json),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

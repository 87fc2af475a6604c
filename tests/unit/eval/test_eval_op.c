/// Unit tests of the evaluator's one-op entry point (eddy_eval_op_run, what
/// the dataflow interpreter runs every ordinary op through): results, the
/// operands left as they were (a list operand is copied on write), the
/// declared result types checked, and ops it has no kernel for.
#include "dialects/dialects.h"
#include "ir/ir.h"
#include "runtime/eval/eval.h"
#include "runtime/kernels.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

typedef struct fixture {
  eddy_ctx_t *ctx;
  eddy_module_t *m;
  eddy_rt_ctx_t *rt;
  eddy_eval_op_runner_t *r;
} fixture_t;

static const char k_module[] =
    "module {\n"
    "  func.func @f(%a: tensor<3xf32>, %l: !tl.list<tensor<f32>>,\n"
    "               %s: tensor<f32>, %p: tensor<i1>) -> tensor<3xf32> {\n"
    "    %0 = \"core.add\"(%a, %a) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>\n"
    "    %1 = \"tl.push_back\"(%l, %s) : (!tl.list<tensor<f32>>, tensor<f32>) -> !tl.list<tensor<f32>>\n"
    "    %2 = \"core.reshape\"(%a) {shape = [3, 1]} : (tensor<3xf32>) -> tensor<3x1xf32>\n"
    "    %3:2 = \"df.switch\"(%a, %p) : (tensor<3xf32>, tensor<i1>) -> (tensor<3xf32>, tensor<3xf32>)\n"
    "    %4 = \"core.constant\"() {value = dense<[1.0, 2.0, 4.0]> : tensor<3xf32>} : () -> tensor<3xf32>\n"
    "    \"func.return\"(%0) : (tensor<3xf32>) -> ()\n"
    "  }\n"
    "}\n";

static int setup(void **state) {
  fixture_t *f = calloc(1, sizeof(*f));
  assert_non_null(f);
  f->ctx = eddy_ir_ctx_create();
  eddy_dialects_register_all(f->ctx);
  assert_null(eddy_ir_parse_module(f->ctx, "test.eddy", k_module,
                                   strlen(k_module), &f->m));
  assert_null(eddy_ir_verify_module(f->m));
  assert_null(eddy_rt_ctx_create(NULL, &f->rt));
  f->r = eddy_eval_op_runner_create(f->rt, eddy_ir_module_lookup_func(f->m, "f"));
  assert_non_null(f->r);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture_t *f = *state;
  eddy_eval_op_runner_destroy(f->r);
  assert_int_equal(eddy_rt_ctx_bytes_in_use(f->rt), 0);
  eddy_rt_ctx_destroy(f->rt);
  eddy_ir_module_destroy(f->m);
  eddy_ir_ctx_destroy(f->ctx);
  free(f);
  return 0;
}

/// The n-th op of @f's body.
static const eddy_op_t *nth_op(fixture_t *f, int n) {
  const eddy_op_t *op =
      eddy_ir_func_entry(eddy_ir_module_lookup_func(f->m, "f"))->first;
  while (n-- > 0)
    op = op->next;
  return op;
}

static eddy_eval_value_t vec(fixture_t *f, int64_t n, float base) {
  eddy_rt_tensor_t t = eddy_rt_tensor_empty();
  assert_null(eddy_rt_tensor_create(f->rt, EDDY_RT_F32, 1, &n, "test", &t));
  for (int64_t i = 0; i < n; i++)
    ((float *)t.data)[i] = base + (float)i;
  return eddy_eval_value_from_tensor(&t);
}

static void test_runs_a_kernel(void **state) {
  fixture_t *f = *state;
  eddy_eval_value_t a = vec(f, 3, 1.0f), out;
  const eddy_eval_value_t *ops[2] = {&a, &a};
  assert_true(eddy_eval_op_is_supported(nth_op(f, 0)));
  // Twice: the second run takes the cached kernel.
  for (int k = 0; k < 2; k++) {
    assert_null(eddy_eval_op_run(f->r, nth_op(f, 0), ops, &out));
    assert_int_equal(out.kind, EDDY_EVAL_TENSOR);
    const float *y = out.tensor.data;
    assert_true(y[0] == 2.0f && y[1] == 4.0f && y[2] == 6.0f);
    eddy_eval_value_release(&out);
  }
  // An op with no operands (a constant).
  assert_null(eddy_eval_op_run(f->r, nth_op(f, 4), NULL, &out));
  assert_true(((const float *)out.tensor.data)[2] == 4.0f);
  eddy_eval_value_release(&out);
  eddy_eval_value_release(&a);
}

static void test_list_operand_is_not_changed(void **state) {
  fixture_t *f = *state;
  eddy_rt_list_t *l = NULL;
  eddy_rt_elem_shape_t es;
  assert_true(eddy_rt_elem_shape_make(0, NULL, &es));
  assert_null(eddy_rt_list_empty(f->rt, EDDY_RT_F32, &es, -1, &l));
  eddy_eval_value_t lv = eddy_eval_value_from_list(l), s, out;
  assert_null(eddy_eval_scalar_from_text(f->rt, EDDY_DT_F32, "7", &s));
  const eddy_eval_value_t *ops[2] = {&lv, &s};
  assert_null(eddy_eval_op_run(f->r, nth_op(f, 1), ops, &out));
  assert_int_equal(out.kind, EDDY_EVAL_LIST);
  assert_int_equal(eddy_rt_list_size(out.list), 1);
  assert_int_equal(eddy_rt_list_size(lv.list), 0); // the caller's list
  eddy_eval_value_release(&out);
  eddy_eval_value_release(&lv);
  eddy_eval_value_release(&s);
}

static void test_result_must_match_declared_type(void **state) {
  fixture_t *f = *state;
  // 4 elements where the op says tensor<3xf32>: reshape to [3, 1] fails in
  // the kernel; add succeeds and its f32[4] result is refused.
  eddy_eval_value_t a = vec(f, 4, 0.0f), out;
  const eddy_eval_value_t *ops[2] = {&a, &a};
  eddy_status_t st = eddy_eval_op_run(f->r, nth_op(f, 0), ops, &out);
  assert_non_null(st);
  assert_non_null(strstr(eddy_status_message(st),
                         "result #0: f32[4] does not match the declared "
                         "type tensor<3xf32>"));
  assert_int_equal(out.kind, EDDY_EVAL_NONE);
  eddy_status_destroy(st);
  st = eddy_eval_op_run(f->r, nth_op(f, 2), ops, &out);
  assert_non_null(st);
  assert_int_equal(out.kind, EDDY_EVAL_NONE);
  eddy_status_destroy(st);
  eddy_eval_value_release(&a);
}

static void test_op_without_kernel(void **state) {
  fixture_t *f = *state;
  const eddy_op_t *sw = nth_op(f, 3);
  assert_false(eddy_eval_op_is_supported(sw));
  eddy_eval_value_t a = vec(f, 3, 0.0f), p, out[2];
  assert_null(eddy_eval_scalar_from_text(f->rt, EDDY_DT_I1, "true", &p));
  const eddy_eval_value_t *ops[2] = {&a, &p};
  eddy_status_t st = eddy_eval_op_run(f->r, sw, ops, out);
  assert_non_null(st);
  assert_int_equal(eddy_status_code(st), EDDY_ERR_UNSUPPORTED);
  assert_non_null(strstr(eddy_status_message(st), "df.switch"));
  assert_int_equal(out[0].kind, EDDY_EVAL_NONE);
  eddy_status_destroy(st);
  eddy_eval_value_release(&a);
  eddy_eval_value_release(&p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_runs_a_kernel, setup, teardown),
      cmocka_unit_test_setup_teardown(test_list_operand_is_not_changed, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_result_must_match_declared_type,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_op_without_kernel, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/// core.matmul in compiled code, both size classes (backend-cpu/
/// emit_matmul.c), each program compiled twice: every f32 matmul as a call
/// of the runtime's sgemm (matmul_call_min = 1) and every matmul inline
/// (matmul_call_min = INT64_MAX). Checked against the reference evaluator:
/// - inline: bit-identical (f64 accumulation in order, as the evaluator);
/// - call, random inputs: the relaxed contract's bound, per element,
///     |c - c_eval| <= gamma_K * sum_k |a_ik| |b_kj| + 2 u |c_eval|,
///   where sum_k |a_ik||b_kj| is the evaluator's result on |a| and |b|;
/// - call, small integer inputs (every product and sum exact in f32):
///   bit-identical, also for a matmul inside a loop.
/// Plus: which class the emitter picked, from the emitted MLIR.
#define _POSIX_C_SOURCE 200809L
#include "backend-cpu/cpu.h"
#include "dialects/dialects.h"
#include "ir/ir.h"
#include "runtime/eval/eval.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cpu_test_util.h"

typedef struct mm_program {
  const char *name;
  const char *text; ///< @f; its results are matmuls of its arguments
                    ///< (bound check) unless `loop`
  int64_t k;        ///< the inner dimension (for the bound)
  bool loop;        ///< only checked with integer inputs
} mm_program_t;

#define F "func.func @f"

static const mm_program_t k_programs[] = {
    {"odd_sizes",
     "module {\n" F "(%arg0: tensor<33x17xf32>, %arg1: tensor<17x29xf32>) -> "
     "tensor<33x29xf32> {\n"
     "%0 = \"core.matmul\"(%arg0, %arg1) : (tensor<33x17xf32>, "
     "tensor<17x29xf32>) -> tensor<33x29xf32>\n"
     "\"func.return\"(%0) : (tensor<33x29xf32>) -> ()\n}\n}\n",
     17, false},
    {"transposes_broadcast_batch",
     "module {\n" F "(%arg0: tensor<2x1x17x33xf32>, %arg1: "
     "tensor<3x29x17xf32>) -> tensor<2x3x33x29xf32> {\n"
     "%0 = \"core.matmul\"(%arg0, %arg1) {transpose_a = true, transpose_b = "
     "true} : (tensor<2x1x17x33xf32>, tensor<3x29x17xf32>) -> "
     "tensor<2x3x33x29xf32>\n"
     "\"func.return\"(%0) : (tensor<2x3x33x29xf32>) -> ()\n}\n}\n",
     17, false},
    {"matrix_times_batch_transpose_b",
     "module {\n" F "(%arg0: tensor<40x65xf32>, %arg1: tensor<4x31x65xf32>) -> "
     "tensor<4x40x31xf32> {\n"
     "%0 = \"core.matmul\"(%arg0, %arg1) {transpose_b = true} : "
     "(tensor<40x65xf32>, tensor<4x31x65xf32>) -> tensor<4x40x31xf32>\n"
     "\"func.return\"(%0) : (tensor<4x40x31xf32>) -> ()\n}\n}\n",
     65, false},
    {"vector_times_matrix",
     "module {\n" F "(%arg0: tensor<1x300xf32>, %arg1: tensor<300x70xf32>) -> "
     "tensor<1x70xf32> {\n"
     "%0 = \"core.matmul\"(%arg0, %arg1) : (tensor<1x300xf32>, "
     "tensor<300x70xf32>) -> tensor<1x70xf32>\n"
     "\"func.return\"(%0) : (tensor<1x70xf32>) -> ()\n}\n}\n",
     300, false},
    // A splat constant operand has no buffer: it is materialized first.
    {"splat_constant_operand",
     "module {\n" F "(%arg0: tensor<20x24xf32>) -> tensor<20x16xf32> {\n"
     "%c = \"core.constant\"() {value = dense<0.5> : tensor<24x16xf32>} : () "
     "-> tensor<24x16xf32>\n"
     "%0 = \"core.matmul\"(%arg0, %c) : (tensor<20x24xf32>, "
     "tensor<24x16xf32>) -> tensor<20x16xf32>\n"
     "\"func.return\"(%0) : (tensor<20x16xf32>) -> ()\n}\n}\n",
     24, false},
    // h <- h W twice, in a loop, then an elementwise op on the result.
    {"loop",
     "module {\n" F "(%arg0: tensor<16x24xf32>, %arg1: tensor<24x24xf32>) -> "
     "tensor<16x24xf32> {\n"
     "%z = \"core.constant\"() {value = dense<0> : tensor<i64>} : () -> "
     "tensor<i64>\n"
     "%r:2 = \"ctl.while\"(%z, %arg0) ({\n"
     "^bb0(%t: tensor<i64>, %h: tensor<16x24xf32>):\n"
     "%n = \"core.constant\"() {value = dense<2> : tensor<i64>} : () -> "
     "tensor<i64>\n"
     "%p = \"core.lt\"(%t, %n) : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
     "\"ctl.condition\"(%p) : (tensor<i1>) -> ()\n"
     "}, {\n"
     "^bb0(%t2: tensor<i64>, %h2: tensor<16x24xf32>):\n"
     "%m = \"core.matmul\"(%h2, %arg1) : (tensor<16x24xf32>, "
     "tensor<24x24xf32>) -> tensor<16x24xf32>\n"
     "%one = \"core.constant\"() {value = dense<1> : tensor<i64>} : () -> "
     "tensor<i64>\n"
     "%tn = \"core.add\"(%t2, %one) : (tensor<i64>, tensor<i64>) -> "
     "tensor<i64>\n"
     "\"ctl.yield\"(%tn, %m) : (tensor<i64>, tensor<16x24xf32>) -> ()\n"
     "}) : (tensor<i64>, tensor<16x24xf32>) -> (tensor<i64>, "
     "tensor<16x24xf32>)\n"
     "%o = \"core.neg\"(%r#1) : (tensor<16x24xf32>) -> tensor<16x24xf32>\n"
     "\"func.return\"(%o) : (tensor<16x24xf32>) -> ()\n}\n}\n",
     24, true},
};

/// Inputs: integers in [-3, 3] (ints = true; the loop's matrix in [-1, 1])
/// or reals in [-2, 2).
static void make_inputs(fixture_t *f, const eddy_type_t *ft, bool ints,
                        uint64_t seed, eddy_rt_tensor_t *args,
                        eddy_rt_tensor_t *abs_args) {
  for (uint32_t i = 0; i < ft->num_inputs; i++) {
    const eddy_type_t *t = ft->inputs[i];
    assert_null(eddy_rt_tensor_create(f->rt, (int32_t)t->dtype, t->rank,
                                      t->dims, "test", &args[i]));
    assert_null(eddy_rt_tensor_create(f->rt, (int32_t)t->dtype, t->rank,
                                      t->dims, "test", &abs_args[i]));
    int64_t n = eddy_rt_tensor_numel(&args[i]);
    for (int64_t k = 0; k < n; k++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      uint64_t r = seed >> 33;
      double v = ints ? (double)((int64_t)(r % (i ? 3 : 7)) - (i ? 1 : 3))
                      : (double)(r % 1000000) / 250000.0 - 2.0;
      eddy_rt_tensor_set_f64(&args[i], k, v);
      eddy_rt_tensor_set_f64(&abs_args[i], k, fabs(v));
    }
  }
}

/// Compares got with want element by element: exactly when mag is NULL,
/// else within the contract's bound from mag = the evaluator on |inputs|.
static void check(const mm_program_t *p, const char *how,
                  const eddy_rt_tensor_t *want, const eddy_rt_tensor_t *got,
                  const eddy_rt_tensor_t *mag) {
  assert_int_equal(want->rank, got->rank);
  int64_t n = eddy_rt_tensor_numel(want);
  assert_int_equal(n, eddy_rt_tensor_numel(got));
  const double u = ldexp(1.0, -24);
  double gamma = (double)p->k * u / (1.0 - (double)p->k * u);
  for (int64_t i = 0; i < n; i++) {
    double w = eddy_rt_tensor_get_f64(want, i);
    double g = eddy_rt_tensor_get_f64(got, i);
    // 2u|w|: the evaluator's rounding of the exact value to f32, and ours.
    double bound =
        mag ? gamma * eddy_rt_tensor_get_f64(mag, i) + 2 * u * fabs(w) : 0;
    if (!(fabs(g - w) <= bound)) {
      print_error("%s (%s): element %lld: evaluator %.9g, compiled %.9g, "
                  "allowed difference %.3g\n",
                  p->name, how, (long long)i, w, g, bound);
      fail();
    }
  }
}

static bool calls_sgemm(fixture_t *f, eddy_module_t *m,
                        const eddy_cpu_opts_t *o) {
  eddy_buf_t out;
  eddy_buf_init(&out);
  expect_ok(eddy_cpu_emit_mlir(m, "f", o, &out));
  bool calls = strstr(out.data, "func.call @eddy_rt_entry_sgemm") != NULL;
  eddy_buf_destroy(&out);
  (void)f;
  return calls;
}

static void run_program(fixture_t *f, const mm_program_t *p, bool call) {
  eddy_module_t *m = parse(f, p->text);
  eddy_op_t *func = eddy_ir_module_lookup_func(m, "f");
  const eddy_type_t *ft = eddy_ir_func_type(func);
  assert_true(ft->num_inputs <= 4 && ft->num_outputs == 1);
  eddy_cpu_opts_t o = eddy_cpu_opts_default();
  o.matmul_call_min = call ? 1 : INT64_MAX;
  assert_true(calls_sgemm(f, m, &o) == call);
  eddy_cpu_jit_t *jit = NULL;
  expect_ok(eddy_cpu_jit_create(m, "f", &o, &jit));
  for (int round = 0; round < 3; round++) {
    bool ints = round == 0 || p->loop;
    eddy_rt_tensor_t args[4], abs_args[4], got[1];
    eddy_eval_value_t want[1], mag[1];
    make_inputs(f, ft, ints, (uint64_t)round * 977 + 5, args, abs_args);
    expect_ok(run_evaluator(f, func, args, ft->num_inputs, want, 1));
    expect_ok(eddy_cpu_jit_run(jit, f->rt, args, got));
    const char *how = call ? (ints ? "call, integers" : "call, bound")
                           : "inline, exact";
    if (call && !ints) {
      expect_ok(run_evaluator(f, func, abs_args, ft->num_inputs, mag, 1));
      check(p, how, &want[0].tensor, &got[0], &mag[0].tensor);
      eddy_eval_value_release(&mag[0]);
    } else {
      check(p, how, &want[0].tensor, &got[0], NULL);
    }
    eddy_eval_value_release(&want[0]);
    eddy_rt_tensor_release(&got[0]);
    for (uint32_t i = 0; i < ft->num_inputs; i++) {
      eddy_rt_tensor_release(&args[i]);
      eddy_rt_tensor_release(&abs_args[i]);
    }
  }
  eddy_cpu_jit_destroy(jit);
  eddy_ir_module_destroy(m);
}

static void test_call_class(void **state) {
  fixture_t *f = *state;
  for (size_t i = 0; i < sizeof k_programs / sizeof k_programs[0]; i++)
    run_program(f, &k_programs[i], true);
}

static void test_inline_class(void **state) {
  fixture_t *f = *state;
  for (size_t i = 0; i < sizeof k_programs / sizeof k_programs[0]; i++)
    run_program(f, &k_programs[i], false);
}

/// The default threshold: a tiny f32 matmul stays inline, a large one is a
/// call; an f64 matmul stays inline even with every f32 one a call (exact).
static void test_default_classes(void **state) {
  fixture_t *f = *state;
  static const char *small =
      "module {\n" F "(%arg0: tensor<4x4xf32>) -> tensor<4x4xf32> {\n"
      "%0 = \"core.matmul\"(%arg0, %arg0) : (tensor<4x4xf32>, "
      "tensor<4x4xf32>) -> tensor<4x4xf32>\n"
      "\"func.return\"(%0) : (tensor<4x4xf32>) -> ()\n}\n}\n";
  static const char *f64 =
      "module {\n" F "(%arg0: tensor<64x64xf64>) -> tensor<64x64xf64> {\n"
      "%0 = \"core.matmul\"(%arg0, %arg0) : (tensor<64x64xf64>, "
      "tensor<64x64xf64>) -> tensor<64x64xf64>\n"
      "\"func.return\"(%0) : (tensor<64x64xf64>) -> ()\n}\n}\n";
  eddy_cpu_opts_t o = eddy_cpu_opts_default();
  eddy_module_t *m = parse(f, small);
  assert_false(calls_sgemm(f, m, &o));
  eddy_ir_module_destroy(m);
  m = parse(f, k_programs[0].text);
  assert_true(calls_sgemm(f, m, &o));
  eddy_ir_module_destroy(m);
  m = parse(f, f64);
  o.matmul_call_min = 1;
  assert_false(calls_sgemm(f, m, &o));
  eddy_ir_module_destroy(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_call_class, setup, teardown),
      cmocka_unit_test_setup_teardown(test_inline_class, setup, teardown),
      cmocka_unit_test_setup_teardown(test_default_classes, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

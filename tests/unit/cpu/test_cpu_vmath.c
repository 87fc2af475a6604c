/// The CPU backend's inline f32 exp, expm1, log, tanh and sigmoid
/// (backend-cpu/emit_vmath.c) against the C library in double, which is
/// what the evaluator computes them with: over 2^24 f32 inputs spread over
/// the whole range (every exponent and sign, 256 mantissas each) and the
/// special values, the compiled results must be within the error bound
/// docs/cpu.md ("Numerics") gives for each function, in units of the f32
/// ulp of the exact result; NaN, infinities, overflow, underflow and signed
/// zeros must be what the evaluator gives. Each function is one compiled
/// call on one large buffer. EDDY_TEST_VMATH_ALL=1 checks every f32 bit
/// pattern instead (256 calls per function; minutes, for measuring the
/// bounds). Also: every f16 and bf16 value (computed in f32) within one
/// unit of the evaluator's result, and eddy_cpu_opts_t.libm_math bringing
/// back the math ops. These run with IEEE subnormals kept; one test checks
/// that by default they are flushed.
#define _POSIX_C_SOURCE 200809L
#include "backend-cpu/cpu.h"
#include "dialects/dialects.h"
#include "ir/ir.h"
#include "runtime/eval/eval.h"
#include "runtime/scalar.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/unit/cpu/cpu_test_util.h"

/// Inputs per compiled call.
#define CHUNK ((int64_t)1 << 24)

static double ref_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

/// One function: its op, the evaluator's formula in double (runtime/
/// k_elementwise.c) and the bound of docs/cpu.md in ulp.
typedef struct vm_fn {
  const char *op;
  double (*ref)(double);
  double bound;
} vm_fn_t;

static const vm_fn_t k_exp = {"core.exp", exp, 1.0};
static const vm_fn_t k_expm1 = {"core.expm1", expm1, 2.0};
static const vm_fn_t k_log = {"core.log", log, 1.0};
static const vm_fn_t k_tanh = {"core.tanh", tanh, 3.0};
static const vm_fn_t k_sigmoid = {"core.sigmoid", ref_sigmoid, 3.0};

/// Where the functions change behaviour: zeros, infinities, NaN, the
/// overflow and underflow thresholds of exp and their neighbours, the
/// limits of the range reductions, the smallest and largest values.
static const float k_special[] = {
    0.0f,          -0.0f,         INFINITY,      -INFINITY,
    NAN,           -NAN,          0x1p-149f,     -0x1p-149f,
    0x1p-126f,     -0x1p-126f,    0x1.fffffep-127f, 0x1.fffffep127f,
    -0x1.fffffep127f, 88.72283f,  88.722839f,    88.72284f,
    89.0f,         -87.33654f,    -87.33655f,    -103.27893f,
    -103.97208f,   -103.9721f,    -104.0f,       -30.0f,
    -17.0f,        0x1p-24f,      -0x1p-24f,     0x1.000002p-24f,
    0x1p-25f,      0.34657359f,   -0.34657359f,  1.0f,
    -1.0f,         0.70710677f,   1.4142135f,    9.0f,
    -9.0f,         9.1f,          -9.1f,         1e-30f,
    -1e-30f,       2.0f,          0.5f,          4.0f};

#define NSPECIAL (int64_t)(sizeof k_special / sizeof k_special[0])

/// |got - want| in units of the f32 ulp at want (2^-149 for subnormal and
/// zero want); 0 where both are the same NaN, infinity or signed zero,
/// INFINITY where one of them is special and the other is not what the
/// evaluator's rounding of want is.
static double ulp_error(float got, double want) {
  float w = (float)want;
  if (isnan(w) || isnan(got))
    return isnan(w) && isnan(got) ? 0 : INFINITY;
  if (isinf(w) || isinf(got))
    return w == got ? 0 : INFINITY;
  if (got == 0 && w == 0)
    return !signbit(got) == !signbit(w) ? 0 : INFINITY;
  int ex = -126;
  if (want != 0) {
    frexp(want, &ex); // |want| in [2^(ex-1), 2^ex)
    ex = ex - 1 < -126 ? -126 : ex - 1;
  }
  return fabs((double)got - want) / ldexp(1.0, ex - 23);
}

/// The JIT-compiled @f(x) = op(x) over n elements of dtype dt.
static eddy_cpu_jit_t *compile_op(fixture_t *f, const char *op, int64_t n,
                                  eddy_dtype_t dt, const eddy_cpu_opts_t *o,
                                  eddy_module_t **out_m) {
  char text[512], ty[64];
  snprintf(ty, sizeof ty, "tensor<%lldx%s>", (long long)n,
           eddy_dtype_name(dt));
  snprintf(text, sizeof text,
           "module {\nfunc.func @f(%%arg0: %s) -> (%s) {\n"
           "%%0 = \"%s\"(%%arg0) : (%s) -> %s\n"
           "\"func.return\"(%%0) : (%s) -> ()\n}\n}\n",
           ty, ty, op, ty, ty, ty);
  eddy_module_t *m = parse(f, text);
  eddy_cpu_jit_t *jit = NULL;
  expect_ok(eddy_cpu_jit_create(m, "f", o, &jit));
  *out_m = m;
  return jit;
}

/// Input i of chunk c: every bit pattern when all, else 256 mantissas per
/// exponent and sign (the high 24 bits are i, the low 8 a hash of i), so
/// that 2^24 inputs cover every binade.
static uint32_t input_bits(int64_t c, int64_t i, bool all) {
  if (all)
    return (uint32_t)(c * CHUNK + i);
  uint32_t h = (uint32_t)i * 2654435761u;
  return (uint32_t)i << 8 | h >> 24;
}

/// The worst error of fn over the inputs, compiled against the C library;
/// fails past fn's bound, naming the input.
static void check_fn(fixture_t *f, const vm_fn_t *fn) {
  const char *env = getenv("EDDY_TEST_VMATH_ALL");
  bool all = env && strcmp(env, "1") == 0;
  int64_t chunks = all ? 256 : 1, n = CHUNK + NSPECIAL;
  float *x = malloc((size_t)n * sizeof *x);
  assert_non_null(x);
  eddy_module_t *m;
  eddy_cpu_jit_t *jit = compile_op(f, fn->op, n, EDDY_DT_F32, NULL, &m);
  double worst = 0;
  float worst_x = 0;
  for (int64_t c = 0; c < chunks; c++) {
    for (int64_t i = 0; i < CHUNK; i++) {
      uint32_t b = input_bits(c, i, all);
      memcpy(&x[i], &b, 4);
    }
    memcpy(&x[CHUNK], k_special, sizeof k_special);
    eddy_rt_tensor_t arg, got;
    assert_null(eddy_rt_tensor_wrap((int32_t)EDDY_DT_F32, 1, &n, x, &arg));
    expect_ok(eddy_cpu_jit_run(jit, f->rt, &arg, &got));
    const float *g = got.data;
    for (int64_t i = 0; i < n; i++) {
      double want = fn->ref((double)x[i]);
      // The correctly rounded result is within 0.5 ulp (the common case,
      // skipped once the worst error is larger).
      if (g[i] == (float)want && g[i] != 0 && worst >= 0.5)
        continue;
      double err = ulp_error(g[i], want);
      if (err > fn->bound)
        fail_msg("%s(%a = %.9g): got %a, the C library %a (%g ulp, bound "
                 "%g)",
                 fn->op, (double)x[i], (double)x[i], (double)g[i], want, err,
                 fn->bound);
      if (err > worst)
        worst = err, worst_x = x[i];
    }
    eddy_rt_tensor_release(&got);
  }
  print_message("%s: at most %.3f ulp (at %a) over %lld inputs\n", fn->op,
                worst, (double)worst_x, (long long)(chunks * n));
  eddy_cpu_jit_destroy(jit);
  eddy_ir_module_destroy(m);
  free(x);
}

/// By default compiled code runs with subnormals flushed to zero: a result
/// that would be subnormal is 0, a subnormal operand reads as 0. The
/// caller's floating-point mode is the same after the call, and a context
/// that keeps subnormals gets them.
static void test_flush_denormals(void **state) {
  fixture_t *f = *state;
  int64_t n = 3;
  float x[3] = {-87.3395386f, 0x1.9ep-141f, 1.0f};
  eddy_module_t *m;
  eddy_cpu_jit_t *jit = compile_op(f, "core.exp", n, EDDY_DT_F32, NULL, &m);
  eddy_rt_tensor_t arg, got;
  assert_null(eddy_rt_tensor_wrap((int32_t)EDDY_DT_F32, 1, &n, x, &arg));
  assert_true(eddy_rt_ctx_flush_denormals(f->rt));
#if defined(__x86_64__)
  unsigned before = __builtin_ia32_stmxcsr();
#endif
  expect_ok(eddy_cpu_jit_run(jit, f->rt, &arg, &got));
#if defined(__x86_64__)
  // FTZ and DAZ as they were (the exception flags the call raised stay).
  assert_int_equal(__builtin_ia32_stmxcsr() & 0x8040, before & 0x8040);
  assert_int_equal(before & 0x8040, 0); // the test's own thread keeps IEEE
#endif
  const float *g = got.data;
  assert_true(g[0] == 0.0f); // exp(-87.34) = 0x1.fe78p-127, flushed
  assert_true(g[1] == 1.0f); // exp(subnormal read as 0)
  eddy_rt_tensor_release(&got);
  eddy_rt_ctx_set_flush_denormals(f->rt, false);
  expect_ok(eddy_cpu_jit_run(jit, f->rt, &arg, &got));
  g = got.data;
  assert_true(g[0] > 0.0f && g[0] < 0x1p-126f);
  eddy_rt_tensor_release(&got);
  eddy_cpu_jit_destroy(jit);
  eddy_ir_module_destroy(m);
}

static void test_exp(void **state) { check_fn(*state, &k_exp); }
static void test_expm1(void **state) { check_fn(*state, &k_expm1); }
static void test_log(void **state) { check_fn(*state, &k_log); }
static void test_tanh(void **state) { check_fn(*state, &k_tanh); }
static void test_sigmoid(void **state) { check_fn(*state, &k_sigmoid); }

/// The position of 16-bit float bits h on the number line (adjacent values
/// differ by 1; -0 and +0 are both 0).
static int32_t half_order(uint16_t h) {
  return h & 0x8000 ? -(int32_t)(h & 0x7fff) : (int32_t)h;
}

static bool half_is_nan(uint16_t h, bool bf) {
  return bf ? (h & 0x7fff) > 0x7f80 : (h & 0x7fff) > 0x7c00;
}

/// Every f16 and bf16 value through each function: computed in f32 and
/// rounded, so within one unit of the evaluator's result (f32 from double,
/// then rounded), NaN where it is NaN, and infinities and zeros (with
/// their signs) exactly where the evaluator's are.
static void test_half(void **state) {
  fixture_t *f = *state;
  const vm_fn_t *fns[] = {&k_exp, &k_expm1, &k_log, &k_tanh, &k_sigmoid};
  int64_t n = 65536;
  uint16_t *h = malloc((size_t)n * sizeof *h);
  assert_non_null(h);
  for (int64_t i = 0; i < n; i++)
    h[i] = (uint16_t)i;
  for (int fmt = 0; fmt < 2; fmt++) {
    bool bf = fmt == 1;
    eddy_dtype_t dt = bf ? EDDY_DT_BF16 : EDDY_DT_F16;
    uint16_t inf = bf ? 0x7f80 : 0x7c00;
    for (size_t k = 0; k < sizeof fns / sizeof fns[0]; k++) {
      eddy_module_t *m;
      eddy_cpu_jit_t *jit = compile_op(f, fns[k]->op, n, dt, NULL, &m);
      eddy_rt_tensor_t arg, got;
      assert_null(eddy_rt_tensor_wrap((int32_t)dt, 1, &n, h, &arg));
      expect_ok(eddy_cpu_jit_run(jit, f->rt, &arg, &got));
      eddy_eval_value_t ev;
      expect_ok(run_evaluator(f, eddy_ir_module_lookup_func(m, "f"), &arg, 1,
                              &ev, 1));
      const uint16_t *g = got.data, *w = ev.tensor.data;
      for (int64_t i = 0; i < n; i++) {
        bool ok = half_is_nan(w[i], bf)
                      ? half_is_nan(g[i], bf)
                  : (w[i] & 0x7fff) == inf || (g[i] & 0x7fff) == inf ||
                          (w[i] & 0x7fff) == 0 || (g[i] & 0x7fff) == 0
                      ? g[i] == w[i]
                      : abs(half_order(g[i]) - half_order(w[i])) <= 1 &&
                            !half_is_nan(g[i], bf);
        if (!ok)
          fail_msg("%s %s(0x%04x): got 0x%04x, the evaluator 0x%04x",
                   eddy_dtype_name(dt), fns[k]->op, (unsigned)h[i],
                   (unsigned)g[i], (unsigned)w[i]);
      }
      eddy_eval_value_release(&ev);
      eddy_rt_tensor_release(&got);
      eddy_cpu_jit_destroy(jit);
      eddy_ir_module_destroy(m);
    }
  }
  free(h);
}

/// With libm_math the functions are the math ops again (scalar libm calls
/// after lowering), and without it no math op is left for them; both agree
/// with the C library within the bound on values in [-3.75, 7.5] (log:
/// NaN below 0, where the C library's is NaN too).
static void test_libm_switch(void **state) {
  fixture_t *f = *state;
  const vm_fn_t *fns[] = {&k_exp, &k_expm1, &k_log, &k_tanh, &k_sigmoid};
  const char *math[] = {"math.exp", "math.expm1", "math.log", "math.tanh",
                        "math.exp"};
  for (size_t k = 0; k < 5; k++) {
    for (int libm = 0; libm < 2; libm++) {
      eddy_cpu_opts_t o = eddy_cpu_opts_default();
      o.libm_math = libm;
      char text[512];
      snprintf(text, sizeof text,
               "module {\nfunc.func @f(%%arg0: tensor<16xf32>) -> "
               "(tensor<16xf32>) {\n%%0 = \"%s\"(%%arg0) : (tensor<16xf32>) "
               "-> tensor<16xf32>\n\"func.return\"(%%0) : (tensor<16xf32>) "
               "-> ()\n}\n}\n",
               fns[k]->op);
      eddy_module_t *m = parse(f, text);
      eddy_buf_t mlir;
      eddy_buf_init(&mlir);
      expect_ok(eddy_cpu_emit_mlir(m, "f", &o, &mlir));
      bool has = strstr(mlir.data, math[k]) != NULL;
      if (has != (libm == 1))
        fail_msg("%s with libm_math = %d: %s %s", fns[k]->op, libm, math[k],
                 has ? "emitted" : "missing");
      eddy_buf_destroy(&mlir);
      eddy_cpu_jit_t *jit = NULL;
      expect_ok(eddy_cpu_jit_create(m, "f", &o, &jit));
      float x[16];
      for (int i = 0; i < 16; i++)
        x[i] = (float)(i - 5) * 0.75f;
      int64_t n = 16;
      eddy_rt_tensor_t arg, got;
      assert_null(eddy_rt_tensor_wrap((int32_t)EDDY_DT_F32, 1, &n, x, &arg));
      expect_ok(eddy_cpu_jit_run(jit, f->rt, &arg, &got));
      for (int i = 0; i < 16; i++) {
        double want = fns[k]->ref((double)x[i]);
        double err = ulp_error(((const float *)got.data)[i], want);
        if (err > fns[k]->bound)
          fail_msg("%s(%g) with libm_math = %d: %g ulp", fns[k]->op, (double)x[i],
                   libm, err);
      }
      eddy_rt_tensor_release(&got);
      eddy_cpu_jit_destroy(jit);
      eddy_ir_module_destroy(m);
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_flush_denormals, setup, teardown),
      cmocka_unit_test_setup_teardown(test_exp, setup_ieee, teardown),
      cmocka_unit_test_setup_teardown(test_expm1, setup_ieee, teardown),
      cmocka_unit_test_setup_teardown(test_log, setup_ieee, teardown),
      cmocka_unit_test_setup_teardown(test_tanh, setup_ieee, teardown),
      cmocka_unit_test_setup_teardown(test_sigmoid, setup_ieee, teardown),
      cmocka_unit_test_setup_teardown(test_half, setup_ieee, teardown),
      cmocka_unit_test_setup_teardown(test_libm_switch, setup_ieee, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/// The scalar semantics of runtime/scalar.h. First against definitions of
/// their own (exhaustively for f16, bf16 and i8 floor division), then
/// against each place that computes them: the constant folder, the runtime
/// kernels (through the evaluator) and the CPU backend's arith/math text
/// (JIT-compiled), on the edge cases: negative operands, MIN // -1, division
/// by zero, NaN, infinities, signed zeros, f16 and bf16 ties, the double
/// rounding of f64 -> f32 -> f16, and saturating casts. A consumer that
/// drifts from the header fails here, naming the element.
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

/// ---- The header on its own -------------------------------------------------

/// The value of f16 bits h, from the format's definition.
static double f16_value(uint16_t h) {
  int sign = h >> 15, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double v = exp == 0 ? ldexp(mant, -24) : ldexp(1024 + mant, exp - 25);
  if (exp == 31)
    v = mant ? NAN : INFINITY;
  return sign ? -v : v;
}

static double bf16_value(uint16_t h) {
  int sign = h >> 15, exp = (h >> 7) & 0xff, mant = h & 0x7f;
  double v = exp == 0 ? ldexp(mant, -133) : ldexp(128 + mant, exp - 134);
  if (exp == 255)
    v = mant ? NAN : INFINITY;
  return sign ? -v : v;
}

/// The value halfway between bits lo and lo + 1 of a 16-bit format; above
/// the largest finite value (lo + 1 is inf), half an ulp above it. Exact in
/// f32.
static float midpoint(double (*value)(uint16_t), uint16_t lo, uint16_t inf) {
  double vlo = value(lo);
  double vhi = lo + 1 == inf ? 2 * vlo - value((uint16_t)(lo - 1))
                             : value((uint16_t)(lo + 1));
  float mid = (float)((vlo + vhi) / 2);
  assert_true((double)mid == (vlo + vhi) / 2);
  return mid;
}

/// For every pair of neighbouring non-negative values (lo, lo + 1) of a
/// 16-bit format: widening is exact, the f32 midpoint rounds to the even one
/// (so 65520 rounds to inf in f16), and one f32 ulp either side of it rounds
/// to the nearer one. Negative values mirror through the sign bit.
static void check_narrowing(double (*value)(uint16_t), float (*widen)(uint16_t),
                            uint16_t (*narrow)(float), uint16_t inf) {
  for (uint32_t h = 0; h <= 0xffff; h++) {
    double v = value((uint16_t)h);
    float w = widen((uint16_t)h);
    if (isnan(v)) {
      assert_true(isnan(w));
      assert_true(isnan(widen(narrow(w))));
      continue;
    }
    if ((double)w != v || !signbit(w) != !signbit(v))
      fail_msg("0x%04x widens to %a, not %a", h, (double)w, v);
    assert_int_equal(narrow(w), h);
  }
  for (uint16_t lo = 0; lo < inf; lo++) {
    uint16_t hi = (uint16_t)(lo + 1);
    float mid = midpoint(value, lo, inf);
    uint16_t even = (lo & 1) ? hi : lo;
    for (int s = 0; s < 2; s++) {
      uint16_t sb = s ? 0x8000 : 0;
      float m = s ? -mid : mid;
      if (narrow(m) != (uint16_t)(even | sb))
        fail_msg("midpoint %a rounds to 0x%04x", (double)m, narrow(m));
      assert_int_equal(narrow(nextafterf(m, 0)), lo | sb);
      assert_int_equal(narrow(nextafterf(m, s ? -INFINITY : INFINITY)),
                       hi | sb);
    }
  }
}

static void test_f16_bf16(void **state) {
  (void)state;
  check_narrowing(f16_value, eddy_scalar_f16_to_f32, eddy_scalar_f32_to_f16,
                  0x7c00);
  check_narrowing(bf16_value, eddy_scalar_bf16_to_f32, eddy_scalar_f32_to_bf16,
                  0x7f80);
  assert_int_equal(eddy_scalar_f32_to_f16(1e10f), 0x7c00);
  assert_int_equal(eddy_scalar_f32_to_f16(-INFINITY), 0xfc00);
  assert_int_equal(eddy_scalar_f32_to_bf16(-INFINITY), 0xff80);
  assert_int_equal(eddy_scalar_f32_to_f16(0x1p-26f), 0);
  assert_int_equal(eddy_scalar_f32_to_f16(-0x1p-26f), 0x8000);
  assert_true(isnan(eddy_scalar_f16_to_f32(eddy_scalar_f32_to_f16(NAN))));
}

/// q is the floor of x / y when r = x - q * y lies in [0, y) for y > 0 and
/// in (y, 0] for y < 0 (computed wide, so nothing overflows).
static bool is_floor_quotient(__int128 x, __int128 y, __int128 q) {
  __int128 r = x - q * y;
  return y > 0 ? (r >= 0 && r < y) : (r <= 0 && r > y);
}

static const int32_t k_i32[] = {
    INT32_MIN, INT32_MIN + 1, -65537, -7, -2, -1, 0, 1, 2, 3, 7, 65536,
    -987654321, 123456789, INT32_MAX - 1, INT32_MAX};
static const int64_t k_i64[] = {
    INT64_MIN, INT64_MIN + 1, -4294967296LL, -7, -2, -1, 0, 1, 2, 3, 7,
    4294967297LL, INT64_MAX - 1, INT64_MAX};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static void test_floor_division(void **state) {
  (void)state;
  for (int x = INT8_MIN; x <= INT8_MAX; x++)
    for (int y = INT8_MIN; y <= INT8_MAX; y++) {
      int8_t q = eddy_scalar_floordiv_i8((int8_t)x, (int8_t)y);
      if (y == 0)
        assert_int_equal(q, 0);
      else if (x == INT8_MIN && y == -1)
        assert_int_equal(q, INT8_MIN);
      else if (!is_floor_quotient(x, y, q))
        fail_msg("%d // %d gave %d", x, y, q);
    }
  for (size_t i = 0; i < COUNT(k_i32); i++)
    for (size_t j = 0; j < COUNT(k_i32); j++) {
      int32_t x = k_i32[i], y = k_i32[j];
      int32_t q = eddy_scalar_floordiv_i32(x, y);
      bool wraps = y == 0 || (x == INT32_MIN && y == -1);
      assert_true(wraps ? q == (y ? INT32_MIN : 0)
                        : is_floor_quotient(x, y, q));
    }
  for (size_t i = 0; i < COUNT(k_i64); i++)
    for (size_t j = 0; j < COUNT(k_i64); j++) {
      int64_t x = k_i64[i], y = k_i64[j];
      int64_t q = eddy_scalar_floordiv_i64(x, y);
      bool wraps = y == 0 || (x == INT64_MIN && y == -1);
      assert_true(wraps ? q == (y ? INT64_MIN : 0)
                        : is_floor_quotient(x, y, q));
    }
}

static void test_wrap_and_saturate(void **state) {
  (void)state;
  assert_int_equal(eddy_scalar_wrap_i8(128), -128);
  assert_int_equal(eddy_scalar_wrap_i8(0x1ff), -1);
  assert_int_equal(eddy_scalar_wrap_i32(0x80000000u), INT32_MIN);
  assert_int_equal(eddy_scalar_wrap_i64(UINT64_MAX), -1);
  assert_int_equal(eddy_scalar_sat_i8(NAN), 0);
  assert_int_equal(eddy_scalar_sat_i8(-128.9), -128);
  assert_int_equal(eddy_scalar_sat_i8(127.9), 127);
  assert_int_equal(eddy_scalar_sat_i8(-1.9), -1);
  assert_int_equal(eddy_scalar_sat_i32(-INFINITY), INT32_MIN);
  assert_int_equal(eddy_scalar_sat_i32(2147483647.5), INT32_MAX);
  assert_true(eddy_scalar_sat_i64(0x1p63) == INT64_MAX);
  assert_true(eddy_scalar_sat_i64(-0x1p63) == INT64_MIN);
  assert_true(eddy_scalar_sat_i64(0x1p62) == (int64_t)1 << 62);
}

static void test_nan_and_signed_zero(void **state) {
  (void)state;
  assert_true(isnan(eddy_scalar_max_f64(NAN, 1)));
  assert_true(isnan(eddy_scalar_min_f32(1, NAN)));
  assert_false(signbit(eddy_scalar_max_f64(-0.0, 0.0)));
  assert_false(signbit(eddy_scalar_max_f32(0.0f, -0.0f)));
  assert_true(signbit(eddy_scalar_min_f64(0.0, -0.0)));
  assert_true(signbit(eddy_scalar_min_f32(-0.0f, 0.0f)));
  assert_false(signbit(eddy_scalar_relu_f64(-0.0)));
  assert_true(isnan(eddy_scalar_relu_f32(NAN)));
  assert_false(signbit(eddy_scalar_sign_f32(-0.0f)));
  assert_true(isnan(eddy_scalar_sign_f64(NAN)));
  assert_true(eddy_scalar_sign_f64(-INFINITY) == -1);
}

/// ---- The consumers against the header --------------------------------------

/// One elementwise op over n elements: inputs a (and b) of dtype in, the
/// header's results in want, of dtype out.
typedef struct scal_case {
  const char *name; ///< for messages
  const char *op;   ///< "core.div"
  const char *attr; ///< attribute dictionary text, or ""
  eddy_dtype_t in, out;
  int nin;
  int64_t n;
  const void *a, *b, *want;
} scal_case_t;

/// Element i of the dtype dt array p, as double (for messages and NaN).
static double elem_f64(eddy_dtype_t dt, const void *p, int64_t i) {
  eddy_rt_tensor_t t;
  char *c = (char *)p + i * (int64_t)eddy_dtype_size(dt);
  assert_null(eddy_rt_tensor_wrap((int32_t)dt, 0, NULL, c, &t));
  return eddy_rt_tensor_get_f64(&t, 0);
}

/// got (elements at got + i * stride bytes) against c->want: the same
/// bits, except that any NaN matches any NaN (payloads are unspecified).
static void compare(const scal_case_t *c, const char *who, const void *got,
                    size_t stride) {
  size_t es = eddy_dtype_size(c->out);
  for (int64_t i = 0; i < c->n; i++) {
    const char *g = (const char *)got + (size_t)i * stride;
    const char *w = (const char *)c->want + (size_t)i * es;
    if (memcmp(g, w, es) == 0)
      continue;
    if (eddy_dtype_is_float(c->out) && isnan(elem_f64(c->out, g, 0)) &&
        isnan(elem_f64(c->out, w, 0)))
      continue;
    fail_msg("%s (%s): element %lld of %s(%.17g%s%.17g): got %.17g, header "
             "%.17g",
             c->name, who, (long long)i, c->op, elem_f64(c->in, c->a, i),
             c->nin > 1 ? ", " : "", c->nin > 1 ? elem_f64(c->in, c->b, i) : 0,
             elem_f64(c->out, g, 0), elem_f64(c->out, w, 0));
  }
}

static void run_case(fixture_t *f, const scal_case_t *c) {
  char text[1024], tin[64], tout[64];
  snprintf(tin, sizeof tin, "tensor<%lldx%s>", (long long)c->n,
           eddy_dtype_name(c->in));
  snprintf(tout, sizeof tout, "tensor<%lldx%s>", (long long)c->n,
           eddy_dtype_name(c->out));
  bool two = c->nin > 1;
  snprintf(text, sizeof text,
           "module {\nfunc.func @f(%%arg0: %s%s%s) -> (%s) {\n"
           "%%0 = \"%s\"(%%arg0%s) %s : (%s%s%s) -> %s\n"
           "\"func.return\"(%%0) : (%s) -> ()\n}\n}\n",
           tin, two ? ", %arg1: " : "", two ? tin : "", tout, c->op,
           two ? ", %arg1" : "", c->attr, tin, two ? ", " : "", two ? tin : "",
           tout, tout);
  eddy_module_t *m = parse(f, text);
  eddy_op_t *func = eddy_ir_module_lookup_func(m, "f");
  eddy_rt_tensor_t args[2];
  const void *in[2] = {c->a, c->b};
  for (int k = 0; k < c->nin; k++)
    assert_null(
        eddy_rt_tensor_wrap((int32_t)c->in, 1, &c->n, (void *)in[k], &args[k]));

  // The runtime kernels, through the evaluator.
  eddy_eval_value_t ev;
  expect_ok(run_evaluator(f, func, args, (uint32_t)c->nin, &ev, 1));
  compare(c, "runtime kernel", ev.tensor.data, eddy_dtype_size(c->out));
  eddy_eval_value_release(&ev);

  // The CPU backend's code.
  eddy_cpu_jit_t *jit = NULL;
  expect_ok(eddy_cpu_jit_create(m, "f", NULL, &jit));
  eddy_rt_tensor_t got;
  expect_ok(eddy_cpu_jit_run(jit, f->rt, args, &got));
  compare(c, "CPU backend", got.data, eddy_dtype_size(c->out));
  eddy_rt_tensor_release(&got);
  eddy_cpu_jit_destroy(jit);

  // The folder, on constant operands.
  eddy_op_t *op = eddy_ir_func_entry(func)->first;
  const eddy_attr_t *consts[2];
  for (int k = 0; k < c->nin; k++)
    consts[k] =
        eddy_ir_dense_attr_get(f->ctx, eddy_ir_op_operand(op, (size_t)k)->type,
                               in[k], (size_t)c->n * eddy_dtype_size(c->in));
  eddy_fold_result_t res = {0};
  eddy_fold_ctx_t fc = {
      .ctx = f->ctx, .op = op, .operand_consts = consts, .results = &res};
  assert_true(op->def->fold(&fc));
  assert_non_null(res.attr);
  compare(c, "folder", res.attr->u.dense.data,
          res.attr->u.dense.splat ? 0 : eddy_dtype_size(c->out));
  eddy_ir_module_destroy(m);
}

/// core.div on i8 (every pair), i32 and i64 (edge values).
static void test_consumers_floor_division(void **state) {
  fixture_t *f = *state;
  enum { N8 = 256 * 256 };
  int8_t *a = malloc(N8), *b = malloc(N8), *q = malloc(N8);
  for (int i = 0; i < N8; i++) {
    a[i] = eddy_scalar_wrap_i8((uint64_t)i >> 8);
    b[i] = eddy_scalar_wrap_i8((uint64_t)i);
    q[i] = eddy_scalar_floordiv_i8(a[i], b[i]);
  }
  run_case(f, &(scal_case_t){"i8 pairs", "core.div", "", EDDY_DT_I8, EDDY_DT_I8,
                             2, N8, a, b, q});
  free(a), free(b), free(q);

  enum { N32 = COUNT(k_i32) * COUNT(k_i32), N64 = COUNT(k_i64) * COUNT(k_i64) };
  int32_t a32[N32], b32[N32], q32[N32];
  for (size_t i = 0; i < N32; i++) {
    a32[i] = k_i32[i / COUNT(k_i32)], b32[i] = k_i32[i % COUNT(k_i32)];
    q32[i] = eddy_scalar_floordiv_i32(a32[i], b32[i]);
  }
  run_case(f, &(scal_case_t){"i32 edges", "core.div", "", EDDY_DT_I32,
                             EDDY_DT_I32, 2, N32, a32, b32, q32});
  int64_t a64[N64], b64[N64], q64[N64];
  for (size_t i = 0; i < N64; i++) {
    a64[i] = k_i64[i / COUNT(k_i64)], b64[i] = k_i64[i % COUNT(k_i64)];
    q64[i] = eddy_scalar_floordiv_i64(a64[i], b64[i]);
  }
  run_case(f, &(scal_case_t){"i64 edges", "core.div", "", EDDY_DT_I64,
                             EDDY_DT_I64, 2, N64, a64, b64, q64});
}

/// Shifts: the count clamped to [0, bits - 1], the left shift wrapping, the
/// right shift arithmetic; each against the bits written out by hand.
static void test_shifts(void **state) {
  (void)state;
  for (int x = INT8_MIN; x <= INT8_MAX; x++)
    for (int n = INT8_MIN; n <= INT8_MAX; n++) {
      int c = n < 0 ? 0 : n > 7 ? 7 : n;
      uint8_t bits = (uint8_t)((unsigned)(uint8_t)x << c);
      int8_t l = eddy_scalar_wrap_i8(
          (uint64_t)eddy_scalar_shl_i64(x, n, 8));
      int8_t r = (int8_t)eddy_scalar_shr_i64(x, n, 8);
      int floor_div = x >= 0 ? x / (1 << c)
                             : -((-x + (1 << c) - 1) / (1 << c));
      if (l != eddy_scalar_wrap_i8(bits) || r != floor_div)
        fail_msg("%d shifted by %d gave %d and %d", x, n, l, r);
    }
  assert_int_equal(eddy_scalar_wrap_i32((uint64_t)eddy_scalar_shl_i64(1, 40, 32)),
                   INT32_MIN);
  assert_true(eddy_scalar_shl_i64(5, 64, 64) == INT64_MIN);
  assert_true(eddy_scalar_shr_i64(INT64_MIN, 99, 64) == -1);
  assert_true(eddy_scalar_shr_i64(INT64_MAX, -5, 64) == INT64_MAX);
}

/// core.shift_left and core.shift_right on i8 (every pair) and i32 and
/// i64 edge values, counts out of range included, in every consumer.
static void test_consumers_shifts(void **state) {
  fixture_t *f = *state;
  enum { N8 = 256 * 256 };
  static const char *const ops[2] = {"core.shift_left", "core.shift_right"};
  for (int k = 0; k < 2; k++) {
    int8_t *a = malloc(N8), *b = malloc(N8), *q = malloc(N8);
    for (int i = 0; i < N8; i++) {
      a[i] = eddy_scalar_wrap_i8((uint64_t)i >> 8);
      b[i] = eddy_scalar_wrap_i8((uint64_t)i);
      q[i] = eddy_scalar_wrap_i8((uint64_t)(k ? eddy_scalar_shr_i64(a[i], b[i], 8)
                                              : eddy_scalar_shl_i64(a[i], b[i], 8)));
    }
    run_case(f, &(scal_case_t){"i8 pairs", ops[k], "", EDDY_DT_I8, EDDY_DT_I8,
                               2, N8, a, b, q});
    free(a), free(b), free(q);
    enum { N32 = COUNT(k_i32) * COUNT(k_i32), N64 = COUNT(k_i64) * COUNT(k_i64) };
    int32_t a32[N32], b32[N32], q32[N32];
    for (size_t i = 0; i < N32; i++) {
      a32[i] = k_i32[i / COUNT(k_i32)], b32[i] = k_i32[i % COUNT(k_i32)];
      q32[i] = eddy_scalar_wrap_i32((uint64_t)(
          k ? eddy_scalar_shr_i64(a32[i], b32[i], 32)
            : eddy_scalar_shl_i64(a32[i], b32[i], 32)));
    }
    run_case(f, &(scal_case_t){"i32 edges", ops[k], "", EDDY_DT_I32,
                               EDDY_DT_I32, 2, N32, a32, b32, q32});
    int64_t a64[N64], b64[N64], q64[N64];
    for (size_t i = 0; i < N64; i++) {
      a64[i] = k_i64[i / COUNT(k_i64)], b64[i] = k_i64[i % COUNT(k_i64)];
      q64[i] = k ? eddy_scalar_shr_i64(a64[i], b64[i], 64)
                 : eddy_scalar_shl_i64(a64[i], b64[i], 64);
    }
    run_case(f, &(scal_case_t){"i64 edges", ops[k], "", EDDY_DT_I64,
                               EDDY_DT_I64, 2, N64, a64, b64, q64});
  }
}

/// core.rem on i8 (every pair), i32 and i64 (edge values: MIN rem -1 and
/// x rem 0 are 0); core.rem (fmod) and core.round (ties to even, signed
/// zeros kept) on float specials, halves and large values.
static void test_consumers_rem_and_round(void **state) {
  fixture_t *f = *state;
  enum { N8 = 256 * 256 };
  int8_t *a = malloc(N8), *b = malloc(N8), *q = malloc(N8);
  for (int i = 0; i < N8; i++) {
    a[i] = eddy_scalar_wrap_i8((uint64_t)i >> 8);
    b[i] = eddy_scalar_wrap_i8((uint64_t)i);
    q[i] = eddy_scalar_rem_i8(a[i], b[i]);
  }
  run_case(f, &(scal_case_t){"i8 pairs", "core.rem", "", EDDY_DT_I8, EDDY_DT_I8,
                             2, N8, a, b, q});
  free(a), free(b), free(q);
  enum { N32 = COUNT(k_i32) * COUNT(k_i32), N64 = COUNT(k_i64) * COUNT(k_i64) };
  int32_t a32[N32], b32[N32], q32[N32];
  for (size_t i = 0; i < N32; i++) {
    a32[i] = k_i32[i / COUNT(k_i32)], b32[i] = k_i32[i % COUNT(k_i32)];
    q32[i] = eddy_scalar_rem_i32(a32[i], b32[i]);
  }
  run_case(f, &(scal_case_t){"i32 edges", "core.rem", "", EDDY_DT_I32,
                             EDDY_DT_I32, 2, N32, a32, b32, q32});
  int64_t a64[N64], b64[N64], q64[N64];
  for (size_t i = 0; i < N64; i++) {
    a64[i] = k_i64[i / COUNT(k_i64)], b64[i] = k_i64[i % COUNT(k_i64)];
    q64[i] = eddy_scalar_rem_i64(a64[i], b64[i]);
  }
  run_case(f, &(scal_case_t){"i64 edges", "core.rem", "", EDDY_DT_I64,
                             EDDY_DT_I64, 2, N64, a64, b64, q64});

  static const double k_round[] = {
      NAN,  INFINITY, -INFINITY, 0.0,  -0.0,  0.5,        -0.5,       1.5,
      -1.5, 2.5,      -2.5,      0.49, -0.49, 3.7,        -3.7,       1e300,
      8388607.5, -8388607.5, 4503599627370495.5, 16777217.0, 7.0, -2.0, 0.75,
      -7.5};
  enum { R = COUNT(k_round), RR = R * R };
  float f32[RR], g32[RR], w32[RR];
  double f64[RR], g64[RR], w64[RR];
  for (size_t i = 0; i < R; i++) {
    f64[i] = k_round[i], f32[i] = (float)k_round[i];
    w64[i] = eddy_scalar_round_f64(f64[i]);
    w32[i] = eddy_scalar_round_f32(f32[i]);
  }
  assert_true(w64[5] == 0.0 && !signbit(w64[5]) && w64[6] == 0.0 &&
              signbit(w64[6]) && w64[7] == 2.0 && w64[9] == 2.0 &&
              w64[10] == -2.0 && w32[16] == 8388608.0f &&
              w64[18] == 4503599627370496.0);
  run_case(f, &(scal_case_t){"f32 halves", "core.round", "", EDDY_DT_F32,
                             EDDY_DT_F32, 1, R, f32, NULL, w32});
  run_case(f, &(scal_case_t){"f64 halves", "core.round", "", EDDY_DT_F64,
                             EDDY_DT_F64, 1, R, f64, NULL, w64});
  for (size_t i = 0; i < RR; i++) {
    f64[i] = k_round[i / R], g64[i] = k_round[i % R];
    f32[i] = (float)f64[i], g32[i] = (float)g64[i];
    w64[i] = fmod(f64[i], g64[i]);
    w32[i] = fmodf(f32[i], g32[i]);
  }
  run_case(f, &(scal_case_t){"f32 pairs", "core.rem", "", EDDY_DT_F32,
                             EDDY_DT_F32, 2, RR, f32, g32, w32});
  run_case(f, &(scal_case_t){"f64 pairs", "core.rem", "", EDDY_DT_F64,
                             EDDY_DT_F64, 2, RR, f64, g64, w64});
}

/// f32 values around the f16 or bf16 roundings: every 3rd midpoint between
/// neighbouring values and one f32 ulp either side, of both signs, and the
/// specials. Returns the count written to out (cap entries).
static size_t narrowing_inputs(double (*value)(uint16_t), uint16_t inf,
                               float *out, size_t cap) {
  static const float k_special[] = {
      0.0f, -0.0f, INFINITY, -INFINITY, NAN, 65504.0f, 65520.0f, 1e-8f, 3e38f};
  size_t n = 0;
  for (size_t i = 0; i < COUNT(k_special) && n < cap; i++)
    out[n++] = k_special[i];
  for (uint16_t lo = 0; lo < inf && n + 6 <= cap; lo = (uint16_t)(lo + 3)) {
    float mid = midpoint(value, lo, inf);
    for (int s = 0; s < 2; s++) {
      float m = s ? -mid : mid;
      out[n++] = m;
      out[n++] = nextafterf(m, 0);
      out[n++] = nextafterf(m, s ? -INFINITY : INFINITY);
    }
  }
  return n;
}

/// core.cast between f32/f64 and f16/bf16: every f16 and bf16 value widened,
/// and f32 and f64 values around the roundings narrowed.
static void test_consumers_f16_bf16_casts(void **state) {
  fixture_t *f = *state;
  enum { CAP = 65536 };
  float *x = malloc(CAP * sizeof *x);
  double *d = malloc(CAP * sizeof *d);
  uint16_t *h = malloc(CAP * sizeof *h);
  for (int fmt = 0; fmt < 2; fmt++) {
    bool bf = fmt == 1;
    for (size_t i = 0; i < CAP; i++) {
      h[i] = (uint16_t)i;
      x[i] = bf ? eddy_scalar_bf16_to_f32(h[i]) : eddy_scalar_f16_to_f32(h[i]);
    }
    run_case(f, &(scal_case_t){"all values", "core.cast", "{dtype = \"f32\"}",
                               bf ? EDDY_DT_BF16 : EDDY_DT_F16, EDDY_DT_F32, 1,
                               CAP, h, NULL, x});
    uint16_t (*narrow)(float) =
        bf ? eddy_scalar_f32_to_bf16 : eddy_scalar_f32_to_f16;
    size_t n = narrowing_inputs(bf ? bf16_value : f16_value,
                                bf ? 0x7f80 : 0x7c00, x, CAP);
    for (size_t i = 0; i < n; i++)
      h[i] = narrow(x[i]);
    eddy_dtype_t to = bf ? EDDY_DT_BF16 : EDDY_DT_F16;
    const char *attr = bf ? "{dtype = \"bf16\"}" : "{dtype = \"f16\"}";
    run_case(f, &(scal_case_t){"f32 ties", "core.cast", attr, EDDY_DT_F32, to,
                               1, (int64_t)n, x, NULL, h});
    // From f64 through f32: a double a little off a midpoint rounds to the
    // midpoint in f32 first, then to even, which rounding once would not.
    for (size_t i = 0; i < n; i++) {
      d[i] = isfinite(x[i]) && x[i] != 0 ? (double)x[i] * (1 + 0x1p-40)
                                         : (double)x[i];
      h[i] = narrow((float)d[i]);
    }
    run_case(f, &(scal_case_t){"f64 through f32", "core.cast", attr,
                               EDDY_DT_F64, to, 1, (int64_t)n, d, NULL, h});
  }
  free(x), free(d), free(h);
}

static const double k_to_int[] = {
    NAN,    INFINITY, -INFINITY, 0.0,          -0.0,         0.5,
    -0.5,   1.5,      -1.5,      127.5,        128.0,        -128.5,
    -129.0, 300.0,    -300.0,    2147483520.0, 2147483648.0, -2147483648.0,
    -3e9,   0x1p62,   0x1p63,    -0x1p63,      1e30,         -1e30};

static void test_consumers_saturating_casts(void **state) {
  fixture_t *f = *state;
  enum { N = COUNT(k_to_int) };
  float x[N];
  for (size_t i = 0; i < N; i++)
    x[i] = (float)k_to_int[i];
  int8_t w8[N];
  int32_t w32[N];
  int64_t w64[N], d64[N];
  for (size_t i = 0; i < N; i++) {
    w8[i] = eddy_scalar_sat_i8(x[i]);
    w32[i] = eddy_scalar_sat_i32(x[i]);
    w64[i] = eddy_scalar_sat_i64(x[i]);
    d64[i] = eddy_scalar_sat_i64(k_to_int[i]);
  }
  run_case(f, &(scal_case_t){"f32 to i8", "core.cast", "{dtype = \"i8\"}",
                             EDDY_DT_F32, EDDY_DT_I8, 1, N, x, NULL, w8});
  run_case(f, &(scal_case_t){"f32 to i32", "core.cast", "{dtype = \"i32\"}",
                             EDDY_DT_F32, EDDY_DT_I32, 1, N, x, NULL, w32});
  run_case(f, &(scal_case_t){"f32 to i64", "core.cast", "{dtype = \"i64\"}",
                             EDDY_DT_F32, EDDY_DT_I64, 1, N, x, NULL, w64});
  run_case(f,
           &(scal_case_t){"f64 to i64", "core.cast", "{dtype = \"i64\"}",
                          EDDY_DT_F64, EDDY_DT_I64, 1, N, k_to_int, NULL, d64});
}

static const double k_special[] = {NAN,  INFINITY, -INFINITY, 0.0,
                                   -0.0, 1.0,      -1.0,      2.5};

/// maximum and minimum over every pair of specials, relu and sign over each,
/// in f32 and f64.
static void test_consumers_nan_and_signed_zero(void **state) {
  fixture_t *f = *state;
  enum { S = COUNT(k_special), N = S * S };
  float a32[N], b32[N], w32[N];
  double a64[N], b64[N], w64[N];
  for (size_t i = 0; i < N; i++) {
    a64[i] = k_special[i / S], b64[i] = k_special[i % S];
    a32[i] = (float)a64[i], b32[i] = (float)b64[i];
  }
  for (int k = 0; k < 4; k++) {
    static const char *const ops[] = {"core.maximum", "core.minimum",
                                      "core.relu", "core.sign"};
    for (size_t i = 0; i < N; i++) {
      switch (k) {
      case 0:
        w32[i] = eddy_scalar_max_f32(a32[i], b32[i]);
        w64[i] = eddy_scalar_max_f64(a64[i], b64[i]);
        break;
      case 1:
        w32[i] = eddy_scalar_min_f32(a32[i], b32[i]);
        w64[i] = eddy_scalar_min_f64(a64[i], b64[i]);
        break;
      case 2:
        w32[i] = eddy_scalar_relu_f32(a32[i]);
        w64[i] = eddy_scalar_relu_f64(a64[i]);
        break;
      default:
        w32[i] = eddy_scalar_sign_f32(a32[i]);
        w64[i] = eddy_scalar_sign_f64(a64[i]);
        break;
      }
    }
    int nin = k < 2 ? 2 : 1;
    run_case(f, &(scal_case_t){"f32 specials", ops[k], "", EDDY_DT_F32,
                               EDDY_DT_F32, nin, N, a32, b32, w32});
    run_case(f, &(scal_case_t){"f64 specials", ops[k], "", EDDY_DT_F64,
                               EDDY_DT_F64, nin, N, a64, b64, w64});
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_f16_bf16),
      cmocka_unit_test(test_floor_division),
      cmocka_unit_test(test_wrap_and_saturate),
      cmocka_unit_test(test_shifts),
      cmocka_unit_test(test_nan_and_signed_zero),
      cmocka_unit_test_setup_teardown(test_consumers_floor_division, setup_ieee,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_consumers_shifts, setup_ieee,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_consumers_rem_and_round, setup_ieee,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_consumers_f16_bf16_casts, setup_ieee,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_consumers_saturating_casts,
                                      setup_ieee, teardown),
      cmocka_unit_test_setup_teardown(test_consumers_nan_and_signed_zero,
                                      setup_ieee, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/// Folders of the core dialect, called through def->fold: constant folding
/// in each dtype class (rounding, wraparound, floor division, NaN and
/// signed zeros), data movement, shape queries, the element limit, and the
/// algebraic simplifications that return an existing value.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>

#include "core_test_util.h"
#include "dialects/core/core.h"

static core_fx_t *F;

static int setup(void **state) {
  (void)state;
  F = core_fx_create();
  return 0;
}

static int teardown(void **state) {
  (void)state;
  core_fx_destroy(F);
  return 0;
}

/// Dense constants from doubles / int64s; n == 1 makes a splat.
static const eddy_attr_t *df(const char *type, size_t n, const double *v) {
  return eddy_ir_dense_attr_from_f64(F->ctx, core_ty(F, type), v, n);
}
static const eddy_attr_t *di(const char *type, size_t n, const int64_t *v) {
  return eddy_ir_dense_attr_from_i64(F->ctx, core_ty(F, type), v, n);
}
#define DF(type, ...)                                                          \
  df(type, sizeof((double[]){__VA_ARGS__}) / sizeof(double),                   \
     (const double[]){__VA_ARGS__})
#define DI(type, ...)                                                          \
  di(type, sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t),                 \
     (const int64_t[]){__VA_ARGS__})

typedef struct folded {
  eddy_op_t *op;
  bool ok;
  eddy_fold_result_t res[8];
} folded_t;

/// Builds `name` over the given operand values (with their constants, NULL
/// for non-constants) and runs its folder.
static folded_t fold_values(const char *name, const char *attrs,
                            eddy_value_t *const *vals,
                            const eddy_attr_t *const *consts, size_t n) {
  folded_t r = {0};
  eddy_named_attr_t na[8];
  size_t nattrs = core_attrs(F, attrs, na, 8);
  eddy_op_state_t st = {.name = name,
                        .operands = vals,
                        .num_operands = n,
                        .attrs = na,
                        .num_attrs = nattrs};
  eddy_status_t s = eddy_ir_op_create(F->ctx, &st, &r.op);
  if (s) {
    eddy_status_print(s, stderr);
    eddy_status_destroy(s);
    fail_msg("cannot build %s", name);
  }
  assert_true(r.op->num_results <= 8);
  assert_non_null(r.op->def->fold);
  eddy_fold_ctx_t fc = {
      .ctx = F->ctx, .op = r.op, .operand_consts = consts, .results = r.res};
  r.ok = r.op->def->fold(&fc);
  return r;
}

/// Folds `name` over constant operands (NULL ends the list); returns the
/// constant result 0, or NULL when the folder gave up.
static const eddy_attr_t *cfold(const char *name, const char *attrs,
                                const eddy_attr_t *c0, const eddy_attr_t *c1,
                                const eddy_attr_t *c2) {
  const eddy_attr_t *cs[3] = {c0, c1, c2};
  eddy_value_t *vals[3];
  size_t n = 0;
  while (n < 3 && cs[n]) {
    vals[n] = eddy_ir_block_add_arg(F->entry, cs[n]->type);
    n++;
  }
  folded_t r = fold_values(name, attrs, vals, cs, n);
  if (!r.ok)
    return NULL;
  assert_null(r.res[0].value);
  assert_non_null(r.res[0].attr);
  assert_ptr_equal(r.res[0].attr->type, r.op->results[0].type);
  return r.res[0].attr;
}

static void expect_f(const eddy_attr_t *a, const char *type, size_t n,
                     const double *v) {
  assert_non_null(a);
  assert_ptr_equal(a->type, core_ty(F, type));
  for (size_t i = 0; i < n; i++) {
    double got = eddy_ir_dense_attr_f64(a, a->u.dense.splat ? 0 : (int64_t)i);
    bool same =
        isnan(v[i]) ? isnan(got) : got == v[i] && signbit(got) == signbit(v[i]);
    if (!same)
      fail_msg("element %zu: expected %.17g, got %.17g", i, v[i], got);
  }
}

static void expect_i(const eddy_attr_t *a, const char *type, size_t n,
                     const int64_t *v) {
  assert_non_null(a);
  assert_ptr_equal(a->type, core_ty(F, type));
  for (size_t i = 0; i < n; i++) {
    int64_t got = eddy_ir_dense_attr_i64(a, a->u.dense.splat ? 0 : (int64_t)i);
    if (got != v[i])
      fail_msg("element %zu: expected %lld, got %lld", i, (long long)v[i],
               (long long)got);
  }
}
#define EXPECT_F(a, type, ...)                                                 \
  expect_f(a, type, sizeof((double[]){__VA_ARGS__}) / sizeof(double),          \
           (const double[]){__VA_ARGS__})
#define EXPECT_I(a, type, ...)                                                 \
  expect_i(a, type, sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t),        \
           (const int64_t[]){__VA_ARGS__})

/// ---- Arithmetic in each dtype class ----------------------------------------

static void test_float_rounding(void **state) {
  (void)state;
  /* f32: 2^24 + 1 rounds back to 2^24; f64 keeps 0.1 + 0.2's error. */
  EXPECT_F(cfold("core.add", "", DF("2xf32", 16777216.0, 1.5),
                 DF("2xf32", 1.0, 0.25), NULL),
           "2xf32", 16777216.0, 1.75);
  EXPECT_F(cfold("core.add", "", DF("f64", 0.1), DF("f64", 0.2), NULL), "f64",
           0.30000000000000004);
  /* f16 has 11 significant bits, bf16 8. */
  EXPECT_F(cfold("core.add", "", DF("f16", 2048.0), DF("f16", 1.0), NULL),
           "f16", 2048.0);
  EXPECT_F(cfold("core.add", "", DF("bf16", 256.0), DF("bf16", 1.0), NULL),
           "bf16", 256.0);
  EXPECT_F(cfold("core.mul", "", DF("f16", 300.0), DF("f16", 300.0), NULL),
           "f16", INFINITY);
  EXPECT_F(cfold("core.div", "", DF("3xf32", 1.0, -1.0, 0.0),
                 DF("3xf32", 0.0, 0.0, 0.0), NULL),
           "3xf32", INFINITY, -INFINITY, NAN);
  EXPECT_F(cfold("core.pow", "", DF("3xf32", 2.0, -8.0, 0.0),
                 DF("3xf32", 10.0, 0.5, 0.0), NULL),
           "3xf32", 1024.0, NAN, 1.0);
  EXPECT_F(cfold("core.sub", "", DF("f32", 1.0), DF("f32", 1.0), NULL), "f32",
           0.0);
}

static void test_int_wraparound(void **state) {
  (void)state;
  EXPECT_I(cfold("core.add", "", DI("3xi8", 127, -128, 100),
                 DI("3xi8", 1, -1, 100), NULL),
           "3xi8", -128, 127, -56);
  EXPECT_I(cfold("core.mul", "", DI("i8", 16), DI("i8", 16), NULL), "i8", 0);
  EXPECT_I(cfold("core.add", "", DI("i32", INT32_MAX), DI("i32", 1), NULL),
           "i32", INT32_MIN);
  EXPECT_I(cfold("core.sub", "", DI("i64", INT64_MIN), DI("i64", 1), NULL),
           "i64", INT64_MAX);
  EXPECT_I(cfold("core.mul", "", DI("i64", INT64_MAX), DI("i64", 2), NULL),
           "i64", -2);
  EXPECT_I(cfold("core.neg", "", DI("2xi8", -128, 5), NULL, NULL), "2xi8", -128,
           -5);
  EXPECT_I(cfold("core.abs", "", DI("2xi8", -128, -5), NULL, NULL), "2xi8",
           -128, 5);
  EXPECT_I(cfold("core.square", "", DI("2xi32", 65536, -3), NULL, NULL),
           "2xi32", 0, 9);
  EXPECT_I(cfold("core.sign", "", DI("3xi32", -7, 0, 9), NULL, NULL), "3xi32",
           -1, 0, 1);
  EXPECT_I(cfold("core.relu", "", DI("2xi64", -7, 9), NULL, NULL), "2xi64", 0,
           9);
  EXPECT_I(
      cfold("core.maximum", "", DI("2xi32", -7, 9), DI("2xi32", 3, 3), NULL),
      "2xi32", 3, 9);
}

static void test_floor_division(void **state) {
  (void)state;
  EXPECT_I(cfold("core.div", "", DI("6xi32", -7, 7, -7, 7, 5, 6),
                 DI("6xi32", 2, -2, -2, 2, 0, 3), NULL),
           "6xi32", -4, -4, 3, 3, 0, 2);
  EXPECT_I(cfold("core.div", "", DI("i8", -128), DI("i8", -1), NULL), "i8",
           -128);
  EXPECT_I(cfold("core.div", "", DI("i64", INT64_MIN), DI("i64", -1), NULL),
           "i64", INT64_MIN);
}

static void test_nan_and_signed_zero(void **state) {
  (void)state;
  EXPECT_F(cfold("core.maximum", "", DF("4xf32", NAN, 1.0, -0.0, 0.0),
                 DF("4xf32", 1.0, NAN, 0.0, -0.0), NULL),
           "4xf32", NAN, NAN, 0.0, 0.0);
  EXPECT_F(cfold("core.minimum", "", DF("4xf32", NAN, 1.0, -0.0, 0.0),
                 DF("4xf32", 1.0, NAN, 0.0, -0.0), NULL),
           "4xf32", NAN, NAN, -0.0, -0.0);
  EXPECT_F(cfold("core.sign", "", DF("5xf32", -2.0, 0.0, -0.0, NAN, 3.0), NULL,
                 NULL),
           "5xf32", -1.0, 0.0, 0.0, NAN, 1.0);
  EXPECT_F(
      cfold("core.relu", "", DF("4xf32", NAN, -1.0, 2.0, -0.0), NULL, NULL),
      "4xf32", NAN, 0.0, 2.0, 0.0);
  EXPECT_I(cfold("core.lt", "", DF("3xf32", NAN, 1.0, 1.0),
                 DF("3xf32", 1.0, NAN, 2.0), NULL),
           "3xi1", 0, 0, 1);
  EXPECT_I(
      cfold("core.ne", "", DF("2xf32", NAN, -0.0), DF("2xf32", NAN, 0.0), NULL),
      "2xi1", 1, 0);
}

static void test_unary_math(void **state) {
  (void)state;
  EXPECT_F(cfold("core.exp", "", DF("2xf64", 0.0, 1.0), NULL, NULL), "2xf64",
           1.0, exp(1.0));
  EXPECT_F(cfold("core.exp", "", DF("f16", 1.0), NULL, NULL), "f16",
           2.71875); /* e rounded to f16 */
  EXPECT_F(cfold("core.log", "", DF("3xf32", 1.0, 0.0, -1.0), NULL, NULL),
           "3xf32", 0.0, -INFINITY, NAN);
  EXPECT_F(cfold("core.log1p", "", DF("f64", 1e-20), NULL, NULL), "f64", 1e-20);
  EXPECT_F(cfold("core.tanh", "", DF("2xf32", 0.0, 100.0), NULL, NULL), "2xf32",
           0.0, 1.0);
  EXPECT_F(
      cfold("core.sigmoid", "", DF("3xf32", 0.0, -1000.0, 1000.0), NULL, NULL),
      "3xf32", 0.5, 0.0, 1.0);
  EXPECT_F(cfold("core.sqrt", "", DF("2xf32", 4.0, -1.0), NULL, NULL), "2xf32",
           2.0, NAN);
  EXPECT_F(cfold("core.rsqrt", "", DF("2xf32", 4.0, 0.0), NULL, NULL), "2xf32",
           0.5, INFINITY);
  EXPECT_F(cfold("core.floor", "", DF("3xbf16", -1.5, 2.5, -0.0), NULL, NULL),
           "3xbf16", -2.0, 2.0, -0.0);
  EXPECT_F(cfold("core.square", "", DF("f32", -3.0), NULL, NULL), "f32", 9.0);
  EXPECT_F(cfold("core.neg", "", DF("2xf32", 0.0, -2.0), NULL, NULL), "2xf32",
           -0.0, 2.0);
  EXPECT_F(cfold("core.abs", "", DF("2xf32", -0.0, -2.0), NULL, NULL), "2xf32",
           0.0, 2.0);
  EXPECT_F(cfold("core.sin", "", DF("2xf64", 0.0, 1.0), NULL, NULL), "2xf64",
           0.0, sin(1.0));
  EXPECT_F(cfold("core.cos", "", DF("f64", 1.0), NULL, NULL), "f64", cos(1.0));
  EXPECT_F(cfold("core.tan", "", DF("f64", 0.5), NULL, NULL), "f64", tan(0.5));
  EXPECT_F(cfold("core.asin", "", DF("3xf64", 1.0, 2.0, -0.5), NULL, NULL),
           "3xf64", asin(1.0), NAN, asin(-0.5));
  EXPECT_F(cfold("core.acos", "", DF("2xf64", -1.0, 0.25), NULL, NULL), "2xf64",
           acos(-1.0), acos(0.25));
  EXPECT_F(cfold("core.atan", "", DF("2xf64", INFINITY, -0.0), NULL, NULL),
           "2xf64", atan(INFINITY), -0.0);
  EXPECT_F(cfold("core.sinh", "", DF("f64", -0.75), NULL, NULL), "f64",
           sinh(-0.75));
  EXPECT_F(cfold("core.cosh", "", DF("f64", -0.75), NULL, NULL), "f64",
           cosh(-0.75));
  EXPECT_F(cfold("core.erf", "", DF("3xf64", 0.5, -10.0, -0.0), NULL, NULL),
           "3xf64", erf(0.5), -1.0, -0.0);
  EXPECT_F(cfold("core.expm1", "", DF("f64", 1e-20), NULL, NULL), "f64", 1e-20);
  EXPECT_F(cfold("core.stop_gradient", "", DF("2xf32", -0.0, 2.5), NULL, NULL),
           "2xf32", -0.0, 2.5);
  EXPECT_F(cfold("core.ceil", "", DF("3xf32", -0.5, 2.5, 3.0), NULL, NULL),
           "3xf32", -0.0, 3.0, 3.0);
  EXPECT_F(cfold("core.round", "", DF("5xf32", 0.5, 1.5, -2.5, -0.4, 2.6), NULL,
                 NULL),
           "5xf32", 0.0, 2.0, -2.0, -0.0, 3.0);
  EXPECT_F(cfold("core.atan2", "", DF("3xf64", 1.0, -0.0, 1.0),
                 DF("3xf64", -1.0, -1.0, 0.0), NULL),
           "3xf64", atan2(1.0, -1.0), atan2(-0.0, -1.0), atan2(1.0, 0.0));
  EXPECT_F(cfold("core.rem", "", DF("3xf32", -7.5, 7.5, 1.0),
                 DF("3xf32", 2.0, -2.0, 0.0), NULL),
           "3xf32", -1.5, 1.5, NAN);
  EXPECT_I(cfold("core.rem", "", DI("4xi8", -7, 7, -128, 5),
                 DI("4xi8", 2, -2, -1, 0), NULL),
           "4xi8", -1, 1, 0, 0);
}

static void test_broadcast_compare_logical(void **state) {
  (void)state;
  EXPECT_F(cfold("core.add", "", DF("2x1xf32", 1.0, 2.0),
                 DF("3xf32", 10.0, 20.0, 30.0), NULL),
           "2x3xf32", 11.0, 21.0, 31.0, 12.0, 22.0, 32.0);
  EXPECT_I(cfold("core.ge", "", DI("2x1xi32", 1, 2), DI("2xi32", 2, 1), NULL),
           "2x2xi1", 0, 1, 1, 1);
  EXPECT_I(cfold("core.eq", "", DI("2xi1", 1, 0), DI("i1", 1), NULL), "2xi1", 1,
           0);
  EXPECT_I(cfold("core.and", "", DI("4xi1", 0, 0, 1, 1), DI("4xi1", 0, 1, 0, 1),
                 NULL),
           "4xi1", 0, 0, 0, 1);
  EXPECT_I(cfold("core.or", "", DI("4xi1", 0, 0, 1, 1), DI("4xi1", 0, 1, 0, 1),
                 NULL),
           "4xi1", 0, 1, 1, 1);
  EXPECT_I(cfold("core.not", "", DI("2xi1", 0, 1), NULL, NULL), "2xi1", 1, 0);
  EXPECT_F(cfold("core.select", "", DI("2x1xi1", 1, 0),
                 DF("3xf32", 1.0, 2.0, 3.0), DF("f32", -1.0)),
           "2x3xf32", 1.0, 2.0, 3.0, -1.0, -1.0, -1.0);
}

static void test_cast(void **state) {
  (void)state;
  EXPECT_I(cfold("core.cast", "dtype=\"i32\"",
                 DF("6xf32", 1.9, -1.9, NAN, 1e10, -1e10, -0.5), NULL, NULL),
           "6xi32", 1, -1, 0, INT32_MAX, INT32_MIN, 0);
  EXPECT_I(cfold("core.cast", "dtype=\"i8\"", DI("3xi32", 300, -129, 127), NULL,
                 NULL),
           "3xi8", 44, 127, 127);
  EXPECT_I(cfold("core.cast", "dtype=\"i64\"", DF("2xf64", 1e300, -1e300), NULL,
                 NULL),
           "2xi64", INT64_MAX, INT64_MIN);
  EXPECT_I(cfold("core.cast", "dtype=\"i1\"", DF("3xf32", 0.0, NAN, -2.0), NULL,
                 NULL),
           "3xi1", 0, 1, 1);
  EXPECT_I(
      cfold("core.cast", "dtype=\"i1\"", DI("3xi32", 0, 256, -1), NULL, NULL),
      "3xi1", 0, 1, 1);
  EXPECT_F(cfold("core.cast", "dtype=\"f32\"", DI("2xi1", 0, 1), NULL, NULL),
           "2xf32", 0.0, 1.0);
  EXPECT_F(cfold("core.cast", "dtype=\"f32\"", DI("i64", 16777217), NULL, NULL),
           "f32", 16777216.0);
  EXPECT_F(cfold("core.cast", "dtype=\"f16\"", DF("2xf64", 65520.0, 0.1), NULL,
                 NULL),
           "2xf16", INFINITY, 0.0999755859375);
  EXPECT_F(cfold("core.cast", "dtype=\"f64\"", DF("bf16", 1.5), NULL, NULL),
           "f64", 1.5);
}

/// ---- Reductions, matmul, data movement -------------------------------------

static void test_reductions(void **state) {
  (void)state;
  const eddy_attr_t *x = DF("2x3xf32", 1.0, 2.0, 3.0, 4.0, 5.0, 6.0);
  EXPECT_F(cfold("core.reduce_sum", "axes=[1]", x, NULL, NULL), "2xf32", 6.0,
           15.0);
  EXPECT_F(cfold("core.reduce_sum", "axes=[0]; keepdims=true", x, NULL, NULL),
           "1x3xf32", 5.0, 7.0, 9.0);
  EXPECT_F(cfold("core.reduce_mean", "axes=[0, -1]", x, NULL, NULL), "f32",
           3.5);
  EXPECT_F(cfold("core.reduce_prod", "axes=[1]", x, NULL, NULL), "2xf32", 6.0,
           120.0);
  EXPECT_F(cfold("core.reduce_max", "axes=[1]",
                 DF("2x2xf32", NAN, 1.0, -0.0, 0.0), NULL, NULL),
           "2xf32", NAN, 0.0);
  EXPECT_F(cfold("core.reduce_min", "axes=[1]",
                 DF("2x2xf32", 1.0, NAN, 0.0, -0.0), NULL, NULL),
           "2xf32", NAN, -0.0);
  EXPECT_F(cfold("core.reduce_sum", "axes=[]", x, NULL, NULL), "2x3xf32", 1.0,
           2.0, 3.0, 4.0, 5.0, 6.0);
  /* Integer mean truncates toward zero (-7 / 2 = -3); sums and products
     wrap. */
  EXPECT_I(
      cfold("core.reduce_mean", "axes=[0]", DI("2xi32", -3, -4), NULL, NULL),
      "i32", -3);
  EXPECT_I(
      cfold("core.reduce_sum", "axes=[0]", DI("2xi8", 100, 100), NULL, NULL),
      "i8", -56);
  EXPECT_I(
      cfold("core.reduce_prod", "axes=[0]", DI("2xi8", 16, 16), NULL, NULL),
      "i8", 0);
  EXPECT_I(cfold("core.reduce_max", "axes=[1]", DI("2x2xi64", -5, -9, 3, 2),
                 NULL, NULL),
           "2xi64", -5, 3);
  /* Empty reductions give the identities. */
  const eddy_attr_t *e = DF("0x2xf32", 0.0);
  EXPECT_F(cfold("core.reduce_sum", "axes=[0]", e, NULL, NULL), "2xf32", 0.0,
           0.0);
  EXPECT_F(cfold("core.reduce_max", "axes=[0]", e, NULL, NULL), "2xf32",
           -INFINITY, -INFINITY);
  EXPECT_F(cfold("core.reduce_prod", "axes=[0]", e, NULL, NULL), "2xf32", 1.0,
           1.0);
  EXPECT_F(cfold("core.reduce_mean", "axes=[0]", e, NULL, NULL), "2xf32", NAN,
           NAN);
  EXPECT_I(cfold("core.reduce_min", "axes=[0]", DI("0xi8", 0), NULL, NULL),
           "i8", 127);
  EXPECT_I(cfold("core.reduce_mean", "axes=[0]", DI("0xi32", 0), NULL, NULL),
           "i32", 0);
}

static void test_matmul(void **state) {
  (void)state;
  const eddy_attr_t *a = DF("2x3xf32", 1.0, 2.0, 3.0, 4.0, 5.0, 6.0);
  const eddy_attr_t *b = DF("3x2xf32", 7.0, 8.0, 9.0, 10.0, 11.0, 12.0);
  EXPECT_F(cfold("core.matmul", "", a, b, NULL), "2x2xf32", 58.0, 64.0, 139.0,
           154.0);
  /* a^T (3x2) @ a (2x3) */
  EXPECT_F(cfold("core.matmul", "transpose_a=true", a, a, NULL), "3x3xf32",
           17.0, 22.0, 27.0, 22.0, 29.0, 36.0, 27.0, 36.0, 45.0);
  /* b broadcast over a batch of two (the second batch is 2 * a). */
  const eddy_attr_t *ab = DF("2x2x3xf32", 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 2.0,
                             4.0, 6.0, 8.0, 10.0, 12.0);
  EXPECT_F(cfold("core.matmul", "transpose_b=true", ab,
                 DF("1x2x3xf32", 1.0, 0.0, 0.0, 0.0, 0.0, 1.0), NULL),
           "2x2x2xf32", 1.0, 3.0, 4.0, 6.0, 2.0, 6.0, 8.0, 12.0);
  EXPECT_I(cfold("core.matmul", "", DI("1x2xi8", 100, 100), DI("2x1xi8", 2, 1),
                 NULL),
           "1x1xi8", 44);
}

static void test_data_movement(void **state) {
  (void)state;
  const eddy_attr_t *x = DF("2x3xf32", 1.0, 2.0, 3.0, 4.0, 5.0, 6.0);
  EXPECT_F(cfold("core.reshape", "shape=[3, -1]", x, NULL, NULL), "3x2xf32",
           1.0, 2.0, 3.0, 4.0, 5.0, 6.0);
  EXPECT_F(cfold("core.transpose", "perm=[1, 0]", x, NULL, NULL), "3x2xf32",
           1.0, 4.0, 2.0, 5.0, 3.0, 6.0);
  EXPECT_F(cfold("core.broadcast_to", "shape=[2, 2, 3]",
                 DF("1x3xf32", 1.0, 2.0, 3.0), NULL, NULL),
           "2x2x3xf32", 1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 1.0, 2.0,
           3.0);
  const eddy_attr_t *bs =
      cfold("core.broadcast_to", "shape=[4, 4]", DF("f32", 7.0), NULL, NULL);
  assert_true(bs->u.dense.splat);
  EXPECT_F(cfold("core.concat", "axis=1", x, DF("2x1xf32", 9.0), NULL),
           "2x4xf32", 1.0, 2.0, 3.0, 9.0, 4.0, 5.0, 6.0, 9.0);
  EXPECT_I(cfold("core.concat", "axis=0", DI("2xi8", 1, 2), DI("1xi8", 3),
                 DI("2xi8", 4, 5)),
           "5xi8", 1, 2, 3, 4, 5);
  EXPECT_F(cfold("core.slice", "start=[0, 1]; limit=[2, 3]; strides=[1, 1]", x,
                 NULL, NULL),
           "2x2xf32", 2.0, 3.0, 5.0, 6.0);
  EXPECT_F(cfold("core.slice", "start=[1, 0]; limit=[2, 3]; strides=[1, 2]", x,
                 NULL, NULL),
           "1x2xf32", 4.0, 6.0);
  EXPECT_F(
      cfold("core.pad", "low=[0, 1]; high=[1, 0]", x, DF("f32", -1.0), NULL),
      "3x4xf32", -1.0, 1.0, 2.0, 3.0, -1.0, 4.0, 5.0, 6.0, -1.0, -1.0, -1.0,
      -1.0);
  /* split gives every result. */
  const eddy_attr_t *c = x;
  eddy_value_t *v = eddy_ir_block_add_arg(F->entry, c->type);
  folded_t r = fold_values("core.split", "axis=1; num_splits=3", &v, &c, 1);
  assert_true(r.ok);
  EXPECT_F(r.res[0].attr, "2x1xf32", 1.0, 4.0);
  EXPECT_F(r.res[1].attr, "2x1xf32", 2.0, 5.0);
  EXPECT_F(r.res[2].attr, "2x1xf32", 3.0, 6.0);
}

static void test_shape_queries(void **state) {
  (void)state;
  eddy_value_t *x = core_arg(F, "2x3xf32");
  const eddy_attr_t *none = NULL;
  folded_t r = fold_values("core.shape", "", &x, &none, 1);
  assert_true(r.ok);
  EXPECT_I(r.res[0].attr, "2xi64", 2, 3);
  eddy_value_t *y = core_arg(F, "2x?xf32");
  r = fold_values("core.shape", "", &y, &none, 1);
  assert_false(r.ok);
  r = fold_values("core.dim", "index=0", &y, &none, 1);
  assert_true(r.ok);
  EXPECT_I(r.res[0].attr, "i64", 2);
  r = fold_values("core.dim", "index=-1", &y, &none, 1);
  assert_false(r.ok);
  eddy_value_t *s = core_arg(F, "f32");
  r = fold_values("core.shape", "", &s, &none, 1);
  assert_true(r.ok);
  assert_ptr_equal(r.res[0].attr->type, core_ty(F, "0xi64"));
}

static void test_element_limit(void **state) {
  (void)state;
  assert_non_null(
      cfold("core.add", "", DF("65536xf32", 1.0), DF("65536xf32", 2.0), NULL));
  assert_null(
      cfold("core.add", "", DF("65537xf32", 1.0), DF("65537xf32", 2.0), NULL));
  assert_null(cfold("core.broadcast_to", "shape=[300, 300]", DF("f32", 1.0),
                    NULL, NULL));
  /* A reduction of a huge splat would take too long: left alone. */
  assert_null(cfold("core.reduce_sum", "axes=[0, 1]",
                    DF("100000x100000xf32", 1.0), NULL, NULL));
  assert_non_null(cfold("core.reduce_sum", "axes=[0, 1]",
                        DF("1000x1000xf32", 1.0), NULL, NULL));
  /* No elements, but strides that would overflow int64: left alone. */
  const eddy_attr_t *huge = DF("0x4294967296x4294967296xf32", 0.0);
  assert_null(cfold("core.reduce_sum", "axes=[1, 2]", huge, NULL, NULL));
  assert_null(cfold("core.transpose", "perm=[2, 1, 0]", huge, NULL, NULL));
  assert_null(cfold("core.slice", "start=[0, 1, 1]; limit=[0, 2, 2]", huge,
                    NULL, NULL));
}

/// ---- Simplifications returning an existing value ---------------------------

/// Folds `name`(v0, v1) where c0/c1 are the operands' constants (NULL when
/// not constant) and returns the value result 0 was replaced by.
static eddy_value_t *vfold(const char *name, const char *attrs,
                           eddy_value_t *v0, const eddy_attr_t *c0,
                           eddy_value_t *v1, const eddy_attr_t *c1) {
  eddy_value_t *vals[2] = {v0, v1};
  const eddy_attr_t *cs[2] = {c0, c1};
  folded_t r = fold_values(name, attrs, vals, cs, v1 ? 2 : 1);
  if (!r.ok)
    return NULL;
  assert_null(r.res[0].attr);
  return r.res[0].value;
}

static eddy_value_t *cval(const eddy_attr_t *c) {
  return eddy_ir_block_add_arg(F->entry, c->type);
}

static void test_identities(void **state) {
  (void)state;
  eddy_value_t *x = core_arg(F, "4xf32");
  const eddy_attr_t *nz = DF("f32", -0.0), *pz = DF("f32", 0.0),
                    *one = DF("4xf32", 1.0);
  /* x + 0.0 is not x for x = -0.0; x + -0.0 is. Scalars broadcast to x's
     own type here, so nothing is hidden. */
  assert_ptr_equal(vfold("core.add", "", x, NULL, cval(nz), nz), x);
  assert_ptr_equal(vfold("core.add", "", cval(nz), nz, x, NULL), x);
  assert_null(vfold("core.add", "", x, NULL, cval(pz), pz));
  assert_ptr_equal(vfold("core.sub", "", x, NULL, cval(pz), pz), x);
  assert_null(vfold("core.sub", "", x, NULL, cval(nz), nz));
  assert_ptr_equal(vfold("core.mul", "", x, NULL, cval(one), one), x);
  assert_ptr_equal(vfold("core.mul", "", cval(one), one, x, NULL), x);
  assert_ptr_equal(vfold("core.div", "", x, NULL, cval(one), one), x);
  assert_null(vfold("core.div", "", cval(one), one, x, NULL));
  /* Integers: x + 0 either side, x - 0, x * 1, x / 1. */
  eddy_value_t *k = core_arg(F, "3xi32");
  const eddy_attr_t *z = DI("i32", 0), *o = DI("i32", 1);
  assert_ptr_equal(vfold("core.add", "", k, NULL, cval(z), z), k);
  assert_ptr_equal(vfold("core.add", "", cval(z), z, k, NULL), k);
  assert_ptr_equal(vfold("core.sub", "", k, NULL, cval(z), z), k);
  assert_ptr_equal(vfold("core.mul", "", cval(o), o, k, NULL), k);
  assert_ptr_equal(vfold("core.div", "", k, NULL, cval(o), o), k);
  assert_null(vfold("core.sub", "", cval(z), z, k, NULL));
  /* A broadcast would be hidden: 1xf32 + zeros(4) is not the operand. */
  eddy_value_t *s = core_arg(F, "1xf32");
  const eddy_attr_t *nz4 = DF("4xf32", -0.0);
  assert_null(vfold("core.add", "", s, NULL, cval(nz4), nz4));
  /* and/or of a value with itself. */
  eddy_value_t *p = core_arg(F, "2xi1");
  assert_ptr_equal(vfold("core.and", "", p, NULL, p, NULL), p);
  assert_ptr_equal(vfold("core.or", "", p, NULL, p, NULL), p);
  /* cast to the same dtype, reshape / broadcast_to to the same type,
     identity transpose. */
  eddy_value_t *m = core_arg(F, "2x3xf32");
  assert_ptr_equal(vfold("core.cast", "dtype=\"f32\"", m, NULL, NULL, NULL), m);
  assert_null(vfold("core.cast", "dtype=\"f64\"", m, NULL, NULL, NULL));
  assert_ptr_equal(vfold("core.reshape", "shape=[2, 3]", m, NULL, NULL, NULL),
                   m);
  assert_ptr_equal(vfold("core.reshape", "shape=[-1, 3]", m, NULL, NULL, NULL),
                   m);
  assert_null(vfold("core.reshape", "shape=[3, 2]", m, NULL, NULL, NULL));
  assert_ptr_equal(
      vfold("core.broadcast_to", "shape=[2, 3]", m, NULL, NULL, NULL), m);
  eddy_value_t *dyn = core_arg(F, "?x3xf32");
  assert_null(
      vfold("core.broadcast_to", "shape=[4, 3]", dyn, NULL, NULL, NULL));
  assert_ptr_equal(vfold("core.transpose", "perm=[0, 1]", m, NULL, NULL, NULL),
                   m);
  assert_null(vfold("core.transpose", "perm=[1, 0]", m, NULL, NULL, NULL));
}

static void test_involutions_and_select(void **state) {
  (void)state;
  eddy_value_t *x = core_arg(F, "4xi32");
  eddy_op_t *inner;
  eddy_op_state_t st = {.name = "core.neg", .operands = &x, .num_operands = 1};
  assert_null(eddy_ir_op_create(F->ctx, &st, &inner));
  eddy_value_t *nx = eddy_ir_op_result(inner, 0);
  assert_ptr_equal(vfold("core.neg", "", nx, NULL, NULL, NULL), x);
  assert_null(vfold("core.abs", "", nx, NULL, NULL, NULL));
  eddy_value_t *p = core_arg(F, "3xi1");
  st.name = "core.not";
  st.operands = &p;
  assert_null(eddy_ir_op_create(F->ctx, &st, &inner));
  assert_ptr_equal(
      vfold("core.not", "", eddy_ir_op_result(inner, 0), NULL, NULL, NULL), p);
  /* select with a constant predicate that is the same everywhere. */
  eddy_value_t *a = core_arg(F, "4xf32"), *b = core_arg(F, "4xf32");
  const eddy_attr_t *t = DI("i1", 1), *f = DI("4xi1", 0),
                    *mixed = DI("4xi1", 1, 0, 1, 0);
  eddy_value_t *vals[3] = {cval(t), a, b};
  const eddy_attr_t *cs[3] = {t, NULL, NULL};
  folded_t r = fold_values("core.select", "", vals, cs, 3);
  assert_true(r.ok);
  assert_ptr_equal(r.res[0].value, a);
  vals[0] = cval(f);
  cs[0] = f;
  r = fold_values("core.select", "", vals, cs, 3);
  assert_true(r.ok);
  assert_ptr_equal(r.res[0].value, b);
  vals[0] = cval(mixed);
  cs[0] = mixed;
  r = fold_values("core.select", "", vals, cs, 3);
  assert_false(r.ok);
  /* A scalar branch would be broadcast: not returned as is. */
  eddy_value_t *sc = core_arg(F, "f32");
  vals[0] = cval(t);
  cs[0] = t;
  vals[1] = sc;
  r = fold_values("core.select", "", vals, cs, 3);
  assert_false(r.ok);
}

static void test_no_fold_without_constants(void **state) {
  (void)state;
  eddy_value_t *x = core_arg(F, "4xf32"), *y = core_arg(F, "4xf32");
  assert_null(vfold("core.add", "", x, NULL, y, NULL));
  assert_null(vfold("core.exp", "", x, NULL, NULL, NULL));
  eddy_value_t *d = core_arg(F, "?xf32");
  const eddy_attr_t *c = DF("f32", 2.0);
  /* Constant operands, but the result type is not static. */
  eddy_value_t *vals[2] = {d, cval(c)};
  const eddy_attr_t *cs[2] = {NULL, c};
  folded_t r = fold_values("core.mul", "", vals, cs, 2);
  assert_false(r.ok);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_float_rounding),
      cmocka_unit_test(test_int_wraparound),
      cmocka_unit_test(test_floor_division),
      cmocka_unit_test(test_nan_and_signed_zero),
      cmocka_unit_test(test_unary_math),
      cmocka_unit_test(test_broadcast_compare_logical),
      cmocka_unit_test(test_cast),
      cmocka_unit_test(test_reductions),
      cmocka_unit_test(test_matmul),
      cmocka_unit_test(test_data_movement),
      cmocka_unit_test(test_shape_queries),
      cmocka_unit_test(test_element_limit),
      cmocka_unit_test(test_identities),
      cmocka_unit_test(test_involutions_and_select),
      cmocka_unit_test(test_no_fold_without_constants),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}

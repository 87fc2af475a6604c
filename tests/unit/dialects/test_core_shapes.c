/// Shape functions and dtype rules of the core dialect, called through
/// eddy_ir_op_create with no result types, plus the op table's traits and
/// the verifier hooks.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core_test_util.h"
#include "dialects/core/core.h"
#include "dialects/core/core_internal.h"

/// One case: the op, its operand types, attributes, and either the result
/// types or "!" followed by a substring of the error message.
typedef struct shape_case {
  const char *op;
  const char *operands;
  const char *attrs;
  const char *expect;
} shape_case_t;

static void run_cases(const shape_case_t *cases, size_t n) {
  core_fx_t *f = core_fx_create();
  int failures = 0;
  for (size_t i = 0; i < n; i++) {
    const shape_case_t *c = &cases[i];
    eddy_status_t st = NULL;
    eddy_op_t *op = core_make(f, c->op, c->operands, c->attrs, &st);
    if (c->expect[0] == '!') {
      const char *msg = eddy_status_message(st);
      if (!st || !strstr(msg, c->expect + 1)) {
        fprintf(stderr, "case %zu %s(%s) {%s}: expected error '%s', got '%s'\n",
                i, c->op, c->operands, c->attrs, c->expect + 1,
                st ? msg : "success");
        failures++;
      }
    } else if (st) {
      fprintf(stderr, "case %zu %s(%s) {%s}: unexpected error: %s\n", i, c->op,
              c->operands, c->attrs, eddy_status_message(st));
      failures++;
    } else {
      char *got = core_result_text(op);
      if (strcmp(got, c->expect) != 0) {
        fprintf(stderr, "case %zu %s(%s) {%s}: expected %s, got %s\n", i, c->op,
                c->operands, c->attrs, c->expect, got);
        failures++;
      }
      free(got);
    }
    eddy_status_destroy(st);
  }
  core_fx_destroy(f);
  assert_int_equal(failures, 0);
}

#define RUN(cases) run_cases(cases, sizeof(cases) / sizeof(cases[0]))

static void test_broadcast_binary(void **state) {
  (void)state;
  static const shape_case_t cases[] = {
      {"core.add", "4xf32; 4xf32", "", "tensor<4xf32>"},
      {"core.add", "2x1x3xf32; 4x1xf32", "", "tensor<2x4x3xf32>"},
      {"core.sub", "?x3xf32; 1x3xf32", "", "tensor<?x3xf32>"},
      {"core.mul", "?xf32; 5xf32", "", "tensor<5xf32>"},
      {"core.mul", "5xf32; ?xf32", "", "tensor<5xf32>"},
      {"core.div", "?xf32; 1xf32", "", "tensor<?xf32>"},
      {"core.div", "1xf32; ?xf32", "", "tensor<?xf32>"},
      {"core.add", "?x?xi32; ?xi32", "", "tensor<?x?xi32>"},
      {"core.add", "*xf32; 4xf32", "", "tensor<*xf32>"},
      {"core.add", "4xf32; *xf32", "", "tensor<*xf32>"},
      {"core.add", "f32; 2x3xf32", "", "tensor<2x3xf32>"},
      {"core.add", "f64; f64", "", "tensor<f64>"},
      {"core.add", "0x3xf32; 1x3xf32", "", "tensor<0x3xf32>"},
      {"core.add", "4xf32; 3xf32", "",
       "!'core.add' op operands have incompatible shapes tensor<4xf32> and "
       "tensor<3xf32>"},
      {"core.maximum", "2x3xi32; 3x3xi32", "",
       "!operands have incompatible shapes tensor<2x3xi32> and "
       "tensor<3x3xi32>"},
      {"core.add", "4xf32; 4xi32", "",
       "!operands must have the same dtype, got tensor<4xf32> and "
       "tensor<4xi32>"},
      {"core.add", "4xi1; 4xi1", "", "!operand #0 must have a numeric dtype"},
      {"core.pow", "4xf32; 4xf32", "", "tensor<4xf32>"},
      {"core.pow", "4xi32; 4xi32", "", "!operand #0 must have a float dtype"},
      {"core.maximum", "4xi8; 4xi8", "", "tensor<4xi8>"},
      {"core.minimum", "4xbf16; 1xbf16", "", "tensor<4xbf16>"},
      {"core.atan2", "2x1xf32; 3xf32", "", "tensor<2x3xf32>"},
      {"core.atan2", "4xi32; 4xi32", "", "!operand #0 must have a float dtype"},
      {"core.rem", "?x4xi64; 4xi64", "", "tensor<?x4xi64>"},
      {"core.rem", "4xf64; f64", "", "tensor<4xf64>"},
      {"core.rem", "4xi1; 4xi1", "", "!operand #0 must have a numeric dtype"},
      {"core.add", "4xf32", "", "!expected 2 operands, got 1"},
  };
  RUN(cases);
}

static void test_unary(void **state) {
  (void)state;
  static const shape_case_t cases[] = {
      {"core.neg", "2x?xi32", "", "tensor<2x?xi32>"},
      {"core.abs", "*xi8", "", "tensor<*xi8>"},
      {"core.sign", "f16", "", "tensor<f16>"},
      {"core.square", "3xi64", "", "tensor<3xi64>"},
      {"core.relu", "3xbf16", "", "tensor<3xbf16>"},
      {"core.relu", "3xi1", "", "!operand #0 must have a numeric dtype"},
      {"core.exp", "3xf32", "", "tensor<3xf32>"},
      {"core.exp", "3xi32", "",
       "!'core.exp' op operand #0 must have a float dtype (f16, bf16, f32, "
       "f64), got tensor<3xi32>"},
      {"core.log", "3xi8", "", "!must have a float dtype"},
      {"core.log1p", "3xf64", "", "tensor<3xf64>"},
      {"core.tanh", "3xi64", "", "!must have a float dtype"},
      {"core.sigmoid", "3xf16", "", "tensor<3xf16>"},
      {"core.sqrt", "3xi1", "", "!must have a float dtype"},
      {"core.rsqrt", "3xf32", "", "tensor<3xf32>"},
      {"core.floor", "3xi32", "", "!must have a float dtype"},
      {"core.sin", "2x?xf32", "", "tensor<2x?xf32>"},
      {"core.acos", "3xf16", "", "tensor<3xf16>"},
      {"core.erf", "3xi32", "", "!must have a float dtype"},
      {"core.expm1", "*xbf16", "", "tensor<*xbf16>"},
      {"core.ceil", "3xi8", "", "!must have a float dtype"},
      {"core.round", "3xf64", "", "tensor<3xf64>"},
      {"core.stop_gradient", "2x?xi1", "", "tensor<2x?xi1>"},
      {"core.stop_gradient", "*xf32", "", "tensor<*xf32>"},
      {"core.neg", "", "", "!expected 1 operand, got 0"},
  };
  RUN(cases);
}

static void test_compare_logical_select(void **state) {
  (void)state;
  static const shape_case_t cases[] = {
      {"core.eq", "2x3xf32; 3xf32", "", "tensor<2x3xi1>"},
      {"core.lt", "?xi32; 1xi32", "", "tensor<?xi1>"},
      {"core.ne", "i1; i1", "", "tensor<i1>"},
      {"core.ge", "*xf16; f16", "", "tensor<*xi1>"},
      {"core.gt", "4xf32; 4xi32", "", "!operands must have the same dtype"},
      {"core.le", "4xf32; 5xf32", "", "!incompatible shapes"},
      {"core.and", "4xi1; 1xi1", "", "tensor<4xi1>"},
      {"core.or", "4xi32; 4xi32", "",
       "!operand #0 must have dtype i1, got tensor<4xi32>"},
      {"core.not", "?xi1", "", "tensor<?xi1>"},
      {"core.not", "2xf32", "", "!must have dtype i1"},
      {"core.select", "2x1xi1; 1x3xf32; 2x3xf32", "", "tensor<2x3xf32>"},
      {"core.select", "i1; 4xi32; 4xi32", "", "tensor<4xi32>"},
      {"core.select", "*xi1; 4xf32; 4xf32", "", "tensor<*xf32>"},
      {"core.select", "4xf32; 4xf32; 4xf32", "",
       "!operand #0 must have dtype i1"},
      {"core.select", "4xi1; 4xf32; 4xi32", "",
       "!operands must have the same dtype"},
      {"core.select", "4xi1; 3xf32; 3xf32", "",
       "!operands have incompatible shapes tensor<4xi1> and tensor<3xf32>"},
      {"core.select", "3xi1; 3xf32; 2x1xf32", "", "tensor<2x3xf32>"},
      {"core.select", "4xi1; 4xf32; 3xf32", "",
       "!operands have incompatible shapes tensor<4xf32> and tensor<3xf32>"},
  };
  RUN(cases);
}

static void test_cast_constant(void **state) {
  (void)state;
  static const shape_case_t cases[] = {
      {"core.cast", "2x?xf32", "dtype=\"i32\"", "tensor<2x?xi32>"},
      {"core.cast", "*xi1", "dtype=\"bf16\"", "tensor<*xbf16>"},
      {"core.cast", "f64", "dtype=\"f64\"", "tensor<f64>"},
      {"core.cast", "2xf32", "dtype=\"f128\"", "!unknown dtype \"f128\""},
      {"core.cast", "2xf32", "", "!requires attribute 'dtype'"},
  };
  RUN(cases);
  core_fx_t *f = core_fx_create();
  double v[2] = {1, 2};
  const eddy_attr_t *dense =
      eddy_ir_dense_attr_from_f64(f->ctx, core_ty(f, "2xf32"), v, 2);
  eddy_named_attr_t na = eddy_ir_named_attr(f->ctx, "value", dense);
  eddy_op_state_t st = {.name = "core.constant", .attrs = &na, .num_attrs = 1};
  eddy_op_t *op = NULL;
  assert_null(eddy_ir_op_create(f->ctx, &st, &op));
  assert_ptr_equal(op->results[0].type, core_ty(f, "2xf32"));
  assert_null(eddy_ir_verify_op(op));
  /* A non-dense value is refused by the shape function. */
  na.value = eddy_ir_int_attr_get(f->ctx, 3, EDDY_DT_I64);
  eddy_status_t err = eddy_ir_op_create(f->ctx, &st, &op);
  assert_non_null(err);
  assert_non_null(strstr(eddy_status_message(err), "dense 'value'"));
  eddy_status_destroy(err);
  core_fx_destroy(f);
}

/// iota has no shape function: its result type is given and verified.
static eddy_status_t make_iota(core_fx_t *f, const char *type, int64_t dim) {
  const eddy_type_t *t = core_ty(f, type);
  eddy_named_attr_t na = eddy_ir_named_attr(
      f->ctx, "dimension", eddy_ir_int_attr_get(f->ctx, dim, EDDY_DT_I64));
  eddy_op_state_t st = {.name = "core.iota",
                        .attrs = &na,
                        .num_attrs = 1,
                        .result_types = &t,
                        .num_results = 1};
  eddy_op_t *op = NULL;
  eddy_status_t s = eddy_ir_op_create(f->ctx, &st, &op);
  if (s)
    return s;
  return eddy_ir_verify_op(op);
}

static void expect_err(eddy_status_t st, const char *sub) {
  assert_non_null(st);
  if (!strstr(eddy_status_message(st), sub))
    fail_msg("expected '%s' in '%s'", sub, eddy_status_message(st));
  eddy_status_destroy(st);
}

static void test_iota(void **state) {
  (void)state;
  core_fx_t *f = core_fx_create();
  assert_null(make_iota(f, "4x3xi32", 0));
  assert_null(make_iota(f, "4x3xf32", 1));
  assert_null(make_iota(f, "4x3xf32", -1));
  expect_err(make_iota(f, "4x3xf32", 2),
             "dimension 2 is out of range for tensor<4x3xf32>");
  expect_err(make_iota(f, "4x?xf32", 0), "result must be a static tensor");
  expect_err(make_iota(f, "4xi1", 0), "result must have a numeric dtype");
  expect_err(make_iota(f, "f32", 0), "out of range");
  /* Without result types the op cannot be built. */
  eddy_named_attr_t na = eddy_ir_named_attr(
      f->ctx, "dimension", eddy_ir_int_attr_get(f->ctx, 0, EDDY_DT_I64));
  eddy_op_state_t st = {.name = "core.iota", .attrs = &na, .num_attrs = 1};
  eddy_op_t *op;
  expect_err(eddy_ir_op_create(f->ctx, &st, &op), "result types must be given");
  core_fx_destroy(f);
}

static void test_matmul(void **state) {
  (void)state;
  static const shape_case_t cases[] = {
      {"core.matmul", "2x3xf32; 3x4xf32", "", "tensor<2x4xf32>"},
      {"core.matmul", "3x2xf32; 3x4xf32", "transpose_a=true",
       "tensor<2x4xf32>"},
      {"core.matmul", "2x3xf32; 4x3xf32", "transpose_b=true",
       "tensor<2x4xf32>"},
      {"core.matmul", "3x2xf32; 4x3xf32", "transpose_a=true; transpose_b=true",
       "tensor<2x4xf32>"},
      {"core.matmul", "5x1x2x3xf32; 7x3x4xf32", "", "tensor<5x7x2x4xf32>"},
      {"core.matmul", "?x2x3xi32; 3x4xi32", "", "tensor<?x2x4xi32>"},
      {"core.matmul", "?x3xf32; ?x4xf32", "", "tensor<?x4xf32>"},
      {"core.matmul", "2x?xf32; 5x4xf32", "", "tensor<2x4xf32>"},
      {"core.matmul", "*xf32; 3x4xf32", "", "tensor<*xf32>"},
      {"core.matmul", "2x3xf32; 4x5xf32", "",
       "!'core.matmul' op contracting dimensions 3 and 4 do not match"},
      {"core.matmul", "3x2xf32; 4x5xf32", "transpose_a=true",
       "!contracting dimensions 3 and 4 do not match"},
      {"core.matmul", "3xf32; 3x4xf32", "",
       "!operand #0 must have rank >= 2, got tensor<3xf32>"},
      {"core.matmul", "2x3xf32; 3xf32", "", "!operand #1 must have rank >= 2"},
      {"core.matmul", "2x2x3xf32; 3x3x4xf32", "",
       "!batch dimensions of tensor<2x2x3xf32> and tensor<3x3x4xf32> are not "
       "broadcast-compatible"},
      {"core.matmul", "2x3xf32; 3x4xf64", "",
       "!operands must have the same dtype"},
      {"core.matmul", "2x3xi1; 3x4xi1", "", "!must have a numeric dtype"},
  };
  RUN(cases);
}

static void test_reduce(void **state) {
  (void)state;
  static const shape_case_t cases[] = {
      {"core.reduce_sum", "2x3x4xf32", "axes=[1]", "tensor<2x4xf32>"},
      {"core.reduce_sum", "2x3x4xf32", "axes=[1]; keepdims=true",
       "tensor<2x1x4xf32>"},
      {"core.reduce_max", "2x3x4xi32", "axes=[-1, 0]", "tensor<3xi32>"},
      {"core.reduce_min", "2x3x4xf32", "axes=[]", "tensor<2x3x4xf32>"},
      {"core.reduce_prod", "2x3x4xf32", "axes=[0, 1, 2]", "tensor<f32>"},
      {"core.reduce_mean", "2x3x4xf32", "axes=[0, 1, 2]; keepdims=true",
       "tensor<1x1x1xf32>"},
      {"core.reduce_sum", "?x4xf32", "axes=[0]", "tensor<4xf32>"},
      {"core.reduce_sum", "?x4xf32", "axes=[1]", "tensor<?xf32>"},
      {"core.reduce_sum", "*xf32", "axes=[0]", "tensor<*xf32>"},
      {"core.reduce_sum", "2x3x4xf32", "axes=[1, -2]",
       "!axes name dimension 1 more than once"},
      {"core.reduce_sum", "2x3x4xf32", "axes=[3]",
       "!axis 3 is out of range for tensor<2x3x4xf32>"},
      {"core.reduce_sum", "2x3x4xf32", "axes=[-4]", "!axis -4 is out of range"},
      {"core.reduce_sum", "2xi1", "axes=[0]", "!must have a numeric dtype"},
      {"core.reduce_sum", "2xf32", "", "!requires attribute 'axes'"},
  };
  RUN(cases);
}

static void test_reshape_transpose_broadcast(void **state) {
  (void)state;
  static const shape_case_t cases[] = {
      {"core.reshape", "2x3xf32", "shape=[3, 2]", "tensor<3x2xf32>"},
      {"core.reshape", "2x3xf32", "shape=[-1]", "tensor<6xf32>"},
      {"core.reshape", "2x3xf32", "shape=[-1, 2]", "tensor<3x2xf32>"},
      {"core.reshape", "f32", "shape=[1, 1]", "tensor<1x1xf32>"},
      {"core.reshape", "1x1xf32", "shape=[]", "tensor<f32>"},
      {"core.reshape", "2x3xf32", "shape=[4, -1]",
       "!cannot reshape tensor<2x3xf32> into [4, -1] (-1 cannot be inferred)"},
      {"core.reshape", "2x3xf32", "shape=[4, 2]",
       "!cannot reshape tensor<2x3xf32> into [4, 2] (element counts differ)"},
      {"core.reshape", "?x3xf32", "shape=[-1, 3]", "tensor<?x3xf32>"},
      {"core.reshape", "?x3xf32", "shape=[2, 3]", "tensor<2x3xf32>"},
      {"core.reshape", "*xf32", "shape=[2, -1]", "tensor<2x?xf32>"},
      {"core.reshape", "2x3xf32", "shape=[-1, -1]", "!-1 only once"},
      {"core.reshape", "2x3xf32", "shape=[-2, 3]",
       "!shape entry -2 is negative"},
      {"core.reshape", "0x3xf32", "shape=[0, -1]", "!-1 cannot be inferred"},
      {"core.reshape", "0x3xf32", "shape=[3, 0]", "tensor<3x0xf32>"},
      // Dim operands: one i32/i64 scalar per -1, any number of them.
      {"core.reshape", "?x?xf32; i64; i64", "shape=[-1, 1, -1]",
       "tensor<?x1x?xf32>"},
      {"core.reshape", "2x3xf32; i32", "shape=[-1, 2]", "tensor<3x2xf32>"},
      {"core.reshape", "2x3xf32; i64; i64", "shape=[-1, -1]",
       "tensor<?x?xf32>"},
      {"core.reshape", "2x3xf32; i64; i64", "shape=[4, -1, -1]",
       "!cannot reshape tensor<2x3xf32> into [4, -1, -1] (element counts "
       "differ)"},
      {"core.reshape", "?x?xf32; i64", "shape=[-1, -1]",
       "!shape has 2 entries -1 but 1 dim operands are given"},
      {"core.reshape", "?x?xf32; i64; 2xi64", "shape=[-1, -1]",
       "!dim operand #2 must be an i32 or i64 scalar, got tensor<2xi64>"},
      {"core.reshape", "?x?xf32; f32; i64", "shape=[-1, -1]",
       "!dim operand #1 must be an i32 or i64 scalar"},
      {"core.transpose", "2x3x4xf32", "perm=[2, 0, 1]", "tensor<4x2x3xf32>"},
      {"core.transpose", "2x?xf32", "perm=[1, 0]", "tensor<?x2xf32>"},
      {"core.transpose", "*xf32", "perm=[1, 0]", "tensor<?x?xf32>"},
      {"core.transpose", "2x3x4xf32", "perm=[0, 0, 1]",
       "!perm [0, 0, 1] is not a permutation"},
      {"core.transpose", "2x3x4xf32", "perm=[0, 1, 3]",
       "!is not a permutation"},
      {"core.transpose", "2x3x4xf32", "perm=[1, 0]",
       "!perm for tensor<2x3x4xf32> must have one entry per dimension"},
      {"core.broadcast_to", "3xf32", "shape=[2, 3]", "tensor<2x3xf32>"},
      {"core.broadcast_to", "1x3xf32", "shape=[4, 3]", "tensor<4x3xf32>"},
      {"core.broadcast_to", "?x3xf32", "shape=[5, 3]", "tensor<5x3xf32>"},
      {"core.broadcast_to", "*xf32", "shape=[2, 2]", "tensor<2x2xf32>"},
      {"core.broadcast_to", "f32", "shape=[]", "tensor<f32>"},
      {"core.broadcast_to", "2x3xf32", "shape=[4, 3]",
       "!cannot broadcast tensor<2x3xf32> to shape [4, 3]"},
      {"core.broadcast_to", "2x3xf32", "shape=[3]", "!cannot broadcast"},
      {"core.broadcast_to", "3xf32", "shape=[-1, 3]",
       "!shape entry -1 is negative"},
  };
  RUN(cases);
}

static void test_concat_split(void **state) {
  (void)state;
  static const shape_case_t cases[] = {
      {"core.concat", "2x3xf32; 4x3xf32", "axis=0", "tensor<6x3xf32>"},
      {"core.concat", "2x3xf32; ?x3xf32", "axis=0", "tensor<?x3xf32>"},
      {"core.concat", "2x3xf32; 2x4xf32; 2x1xf32", "axis=-1",
       "tensor<2x8xf32>"},
      {"core.concat", "?x3xf32; 2x?xf32", "axis=0", "tensor<?x3xf32>"},
      {"core.concat", "?x?xf32; 2x?xf32", "axis=1", "tensor<2x?xf32>"},
      {"core.concat", "*xf32; 2x3xf32", "axis=0", "tensor<?x3xf32>"},
      {"core.concat", "*xf32; *xf32", "axis=0", "tensor<*xf32>"},
      {"core.concat", "2x3xi32", "axis=1", "tensor<2x3xi32>"},
      {"core.concat", "2x3xf32; 3x3xf32", "axis=1",
       "!operands have incompatible shapes tensor<2x3xf32> and tensor<3x3xf32> "
       "at dimension 0"},
      {"core.concat", "2x3xf32; 3xf32", "axis=0",
       "!operands must have the same rank"},
      {"core.concat", "2x3xf32; 2x3xi32", "axis=0",
       "!operands must have the same dtype"},
      {"core.concat", "2x3xf32; 2x3xf32", "axis=2",
       "!axis 2 is out of range for tensor<2x3xf32>"},
      {"core.concat", "f32; f32", "axis=0", "!axis 0 is out of range"},
      {"core.concat", "", "axis=0", "!expected at least 1 operand, got 0"},
      {"core.split", "6x4xf32", "axis=0; num_splits=3",
       "tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>"},
      {"core.split", "6x4xf32", "axis=-1; num_splits=2",
       "tensor<6x2xf32>, tensor<6x2xf32>"},
      {"core.split", "?x4xf32", "axis=0; num_splits=2",
       "tensor<?x4xf32>, tensor<?x4xf32>"},
      {"core.split", "*xf32", "axis=0; num_splits=2",
       "tensor<*xf32>, tensor<*xf32>"},
      {"core.split", "5x4xf32", "axis=0; num_splits=2",
       "!dimension 0 of tensor<5x4xf32> (size 5) is not divisible by "
       "num_splits 2"},
      {"core.split", "6x4xf32", "axis=0; num_splits=0",
       "!num_splits must be in [1, 65536], got 0"},
      {"core.split", "6x4xf32", "axis=2; num_splits=1",
       "!axis 2 is out of range"},
  };
  RUN(cases);
}

static void test_slice_gather_pad(void **state) {
  (void)state;
  static const shape_case_t cases[] = {
      {"core.slice", "10x8xf32", "start=[1, 0]; limit=[7, 8]; strides=[2, 3]",
       "tensor<3x3xf32>"},
      {"core.slice", "10x8xf32", "start=[2, 0]; limit=[5, 8]",
       "tensor<3x8xf32>"},
      {"core.slice", "10x8xf32", "start=[3, 0]; limit=[3, 8]",
       "tensor<0x8xf32>"},
      {"core.slice", "?x8xf32", "start=[0, 0]; limit=[100, 8]",
       "tensor<100x8xf32>"},
      {"core.slice", "*xf32", "start=[0]; limit=[5]", "tensor<5xf32>"},
      {"core.slice", "10x8xf32", "start=[0, 0]; limit=[11, 8]",
       "!slice [0, 11) of dimension 0 is out of range for tensor<10x8xf32>"},
      {"core.slice", "10x8xf32", "start=[5, 0]; limit=[4, 8]", "!out of range"},
      {"core.slice", "10x8xf32", "start=[-1, 0]; limit=[4, 8]",
       "!out of range"},
      {"core.slice", "10x8xf32", "start=[0, 0]; limit=[4, 8]; strides=[0, 1]",
       "!stride 0 of dimension 0 must be >= 1"},
      {"core.slice", "10x8xf32", "start=[0]; limit=[4, 8]",
       "!start, limit and strides must have the same length"},
      {"core.slice", "10x8xf32", "start=[0]; limit=[4]",
       "!start for tensor<10x8xf32> must have one entry per dimension"},
      {"core.gather", "5x4xf32; 2x3xi32", "axis=0", "tensor<2x3x4xf32>"},
      {"core.gather", "5x4xf32; 2x3xi64", "axis=1", "tensor<5x2x3xf32>"},
      {"core.gather", "5x4xf32; 2xi8", "axis=-1", "tensor<5x2xf32>"},
      {"core.gather", "5x4xf32; i64", "axis=0", "tensor<4xf32>"},
      {"core.gather", "5x4xf32; *xi32", "axis=0", "tensor<*xf32>"},
      {"core.gather", "*xf32; 2xi32", "axis=3", "tensor<*xf32>"},
      {"core.gather", "5x4xf32; 2xf32", "axis=0",
       "!operand #1 must have an integer dtype"},
      {"core.gather", "5x4xf32; 2xi32", "axis=2",
       "!axis 2 is out of range for tensor<5x4xf32>"},
      {"core.pad", "2x3xf32; f32", "low=[1, 0]; high=[1, 2]",
       "tensor<4x5xf32>"},
      {"core.pad", "?x3xf32; f32", "low=[1, 0]; high=[1, 2]",
       "tensor<?x5xf32>"},
      {"core.pad", "*xi32; i32", "low=[1]; high=[1]", "tensor<?xi32>"},
      {"core.pad", "2x3xf32; 2xf32", "low=[1, 0]; high=[1, 2]",
       "!padding value must be a scalar of the operand's dtype, got "
       "tensor<2xf32> for tensor<2x3xf32>"},
      {"core.pad", "2x3xf32; i32", "low=[1, 0]; high=[1, 2]",
       "!padding value must be a scalar"},
      {"core.pad", "2x3xf32; f32", "low=[-1, 0]; high=[1, 2]",
       "!padding of dimension 0 must be non-negative"},
      {"core.pad", "2x3xf32; f32", "low=[1]; high=[1, 2]",
       "!low and high must have the same length"},
      {"core.pad", "2x3xf32; f32", "low=[1]; high=[1]",
       "!low for tensor<2x3xf32> must have one entry per dimension"},
  };
  RUN(cases);
}

static void test_shape_dim(void **state) {
  (void)state;
  static const shape_case_t cases[] = {
      {"core.shape", "2x?xf32", "", "tensor<2xi64>"},
      {"core.shape", "*xf32", "", "tensor<?xi64>"},
      {"core.shape", "f32", "", "tensor<0xi64>"},
      {"core.dim", "2x3xf32", "index=1", "tensor<i64>"},
      {"core.dim", "2x3xf32", "index=-2", "tensor<i64>"},
      {"core.dim", "*xf32", "index=7", "tensor<i64>"},
      {"core.dim", "2x3xf32", "index=2",
       "!index 2 is out of range for tensor<2x3xf32>"},
  };
  RUN(cases);
}

static void test_where(void **state) {
  (void)state;
  static const shape_case_t cases[] = {
      {"core.where", "2x?xi1; i64", "", "tensor<?x2xi64>"},
      {"core.where", "4xf32; i64", "", "tensor<?x1xi64>"},
      {"core.where", "i32; i64", "", "tensor<?x0xi64>"},
      {"core.where", "*xf32; i64", "", "!the operand's rank must be known"},
      {"core.where", "3xf32; i32", "", "!must be an i64 scalar"},
      {"core.where", "3xf32; 1xi64", "", "!must be an i64 scalar"},
  };
  RUN(cases);
}

/// The sliding-window ops: window positions with pads, strides and
/// dilations, dynamic batch and spatial dims, and the checks of their
/// operands.
static void test_window(void **state) {
  (void)state;
  static const shape_case_t cases[] = {
      {"core.conv2d", "2x5x6x3xf32; 2x3x3x4xf32",
       "strides=[2, 2]; dilations=[1, 2]; pads=[1, 0, 2, 1]",
       "tensor<2x3x3x4xf32>"},
      {"core.conv2d", "?x1x?x3xf64; 1x3x3x4xf64", "pads=[0, 0, 1, 1]",
       "tensor<?x1x?x4xf64>"},
      {"core.conv2d", "2x5x6x3xf32; 2x3x2x4xf32", "",
       "!the input's channels and the filter's: 3 and 2 differ"},
      {"core.conv2d", "2x1x2x3xf32; 1x3x3x4xf32", "",
       "!the width (2, padded by 0 and 0) is shorter than the window"},
      {"core.conv2d", "2x5x3xf32; 1x3x3x4xf32", "",
       "!the first operand must be a rank-4 tensor"},
      {"core.conv2d", "2x5x6x3xi32; 1x3x3x4xi32", "",
       "!operand #0 must have a float dtype"},
      {"core.conv2d", "2x5x6x3xf32; ?x3x3x4xf32", "",
       "!the filter's height and width must be static"},
      {"core.conv2d", "2x5x6x3xf32; 1x3x3x4xf32", "strides=[0, 1]",
       "!attribute 'strides' entry 0 is 0, out of range"},
      {"core.conv2d_input_grad", "2x3x3x4xf32; 2x3x3x4xf32",
       "strides=[2, 2]; dilations=[1, 2]; pads=[1, 0, 2, 1]; "
       "input_size=[5, 6]",
       "tensor<2x5x6x3xf32>"},
      {"core.conv2d_input_grad", "2x4x3x4xf32; 2x3x3x4xf32",
       "strides=[2, 2]; dilations=[1, 2]; pads=[1, 0, 2, 1]; "
       "input_size=[5, 6]",
       "!the adjoint's height and the window positions: 4 and 3 differ"},
      {"core.conv2d_filter_grad", "2x5x6x3xf32; 2x3x3x4xf32",
       "strides=[2, 2]; dilations=[1, 2]; pads=[1, 0, 2, 1]; "
       "filter_size=[2, 3]",
       "tensor<2x3x3x4xf32>"},
      {"core.max_pool", "2x5x7x3xf32", "window=[2, 3]; strides=[2, 2]",
       "tensor<2x2x3x3xf32>"},
      {"core.avg_pool", "?x5x7x3xf32",
       "window=[3, 2]; strides=[2, 3]; pads=[1, 1, 1, 0]",
       "tensor<?x3x3x3xf32>"},
      {"core.max_pool", "2x5x7x3xf32", "", "!requires attribute 'window'"},
      {"core.max_pool", "2x5x7x3xf32", "window=[2]",
       "!attribute 'window' must have 2 entries, got 1"},
      {"core.max_pool_grad", "2x5x7x3xf32; 2x2x3x3xf32",
       "window=[2, 3]; strides=[2, 2]", "tensor<2x5x7x3xf32>"},
      {"core.max_pool_grad", "2x5x7x3xf32; 2x2x3x2xf32",
       "window=[2, 3]; strides=[2, 2]",
       "!the input's channels and the adjoint's: 3 and 2 differ"},
      {"core.avg_pool_grad", "?x3x3x3xf64",
       "window=[3, 2]; strides=[2, 3]; pads=[1, 1, 1, 0]; input_size=[5, 7]",
       "tensor<?x5x7x3xf64>"},
  };
  RUN(cases);
}

static void test_non_tensor_operand(void **state) {
  (void)state;
  core_fx_t *f = core_fx_create();
  const eddy_type_t *lt = eddy_ir_list_type_get(f->ctx, core_ty(f, "4xf32"));
  eddy_value_t *l = eddy_ir_block_add_arg(f->entry, lt);
  eddy_value_t *ops[2] = {l, l};
  eddy_op_state_t st = {.name = "core.add", .operands = ops, .num_operands = 2};
  eddy_op_t *op;
  expect_err(eddy_ir_op_create(f->ctx, &st, &op),
             "operand #0 must be a tensor, got !tl.list<tensor<4xf32>>");
  core_fx_destroy(f);
}

/// Declared result types are checked against the shape function: a more
/// general type is fine, a contradicting one is not.
static void test_verify_declared_types(void **state) {
  (void)state;
  core_fx_t *f = core_fx_create();
  eddy_value_t *ops[2] = {core_arg(f, "4xf32"), core_arg(f, "4xf32")};
  const eddy_type_t *rt = core_ty(f, "?xf32");
  eddy_op_state_t st = {.name = "core.add",
                        .operands = ops,
                        .num_operands = 2,
                        .result_types = &rt,
                        .num_results = 1};
  eddy_op_t *op;
  assert_null(eddy_ir_op_create(f->ctx, &st, &op));
  assert_null(eddy_ir_verify_op(op));
  rt = core_ty(f, "3xf32");
  assert_null(eddy_ir_op_create(f->ctx, &st, &op));
  expect_err(eddy_ir_verify_op(op), "incompatible with the inferred type");
  core_fx_destroy(f);
}

static void test_table_traits(void **state) {
  (void)state;
  static const char *const names[] = {
#define EDDY_CORE_X(e, n) "core." n,
      EDDY_CORE_OP_LIST(EDDY_CORE_X)
#undef EDDY_CORE_X
  };
  assert_int_equal(eddy_core_dialect.num_ops, EDDY_CORE_OP_COUNT_);
  for (size_t k = 0; k < EDDY_CORE_OP_COUNT_; k++) {
    const eddy_op_def_t *d = &eddy_core_dialect.ops[k];
    assert_non_null(d->name);
    assert_string_equal(d->name, names[k]);
    assert_true(d->traits & EDDY_TRAIT_PURE);
    assert_int_equal(eddy_core_op_kind(d), (int)k);
  }
  core_fx_t *f = core_fx_create();
  struct {
    const char *name;
    uint32_t traits;
  } expect[] = {
      {"core.add",
       EDDY_TRAIT_ELEMENTWISE | EDDY_TRAIT_BROADCAST | EDDY_TRAIT_COMMUTATIVE},
      {"core.sub", EDDY_TRAIT_ELEMENTWISE | EDDY_TRAIT_BROADCAST},
      {"core.maximum",
       EDDY_TRAIT_ELEMENTWISE | EDDY_TRAIT_BROADCAST | EDDY_TRAIT_COMMUTATIVE},
      {"core.eq",
       EDDY_TRAIT_ELEMENTWISE | EDDY_TRAIT_BROADCAST | EDDY_TRAIT_COMMUTATIVE},
      {"core.lt", EDDY_TRAIT_ELEMENTWISE | EDDY_TRAIT_BROADCAST},
      {"core.or",
       EDDY_TRAIT_ELEMENTWISE | EDDY_TRAIT_BROADCAST | EDDY_TRAIT_COMMUTATIVE},
      {"core.not", EDDY_TRAIT_ELEMENTWISE},
      {"core.exp", EDDY_TRAIT_ELEMENTWISE},
      {"core.select", EDDY_TRAIT_ELEMENTWISE | EDDY_TRAIT_BROADCAST},
      {"core.cast", EDDY_TRAIT_ELEMENTWISE},
      {"core.constant", EDDY_TRAIT_CONSTANT},
      {"core.matmul", 0},
      {"core.reshape", 0},
  };
  for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
    const eddy_op_def_t *d =
        eddy_ir_ctx_lookup_op(f->ctx, expect[i].name, strlen(expect[i].name));
    assert_non_null(d);
    assert_int_equal(d->traits, EDDY_TRAIT_PURE | expect[i].traits);
  }
  core_fx_destroy(f);
}

static void test_broadcast_helper(void **state) {
  (void)state;
  int64_t a[] = {EDDY_DIM_DYNAMIC, 1, 3}, b[] = {4, EDDY_DIM_DYNAMIC, 1};
  int64_t out[3];
  assert_true(eddy_core_broadcast_dims(a, 3, b, 3, out));
  assert_int_equal(out[0], 4);
  assert_int_equal(out[1], EDDY_DIM_DYNAMIC);
  assert_int_equal(out[2], 3);
  int64_t c[] = {2}, d[] = {3};
  assert_false(eddy_core_broadcast_dims(c, 1, d, 1, out));
  int64_t ax;
  assert_true(eddy_core_normalize_axis(-1, 3, &ax));
  assert_int_equal(ax, 2);
  assert_false(eddy_core_normalize_axis(3, 3, &ax));
  assert_false(eddy_core_normalize_axis(-4, 3, &ax));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_broadcast_binary),
      cmocka_unit_test(test_unary),
      cmocka_unit_test(test_compare_logical_select),
      cmocka_unit_test(test_cast_constant),
      cmocka_unit_test(test_iota),
      cmocka_unit_test(test_matmul),
      cmocka_unit_test(test_reduce),
      cmocka_unit_test(test_reshape_transpose_broadcast),
      cmocka_unit_test(test_concat_split),
      cmocka_unit_test(test_slice_gather_pad),
      cmocka_unit_test(test_shape_dim),
      cmocka_unit_test(test_where),
      cmocka_unit_test(test_window),
      cmocka_unit_test(test_non_tensor_operand),
      cmocka_unit_test(test_verify_declared_types),
      cmocka_unit_test(test_table_traits),
      cmocka_unit_test(test_broadcast_helper),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

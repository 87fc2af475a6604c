/// The textual IR: printer and parser round trips, number and string
/// formats, diagnostics with exact locations, and robustness against
/// truncated and corrupted input.
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dialects/dialects.h"
#include "ir/ir.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/// "test.anything": ops with no checks, so that parser tests do not depend
/// on the verifiers of the real dialects.
static const eddy_dialect_t test_dialect = {
    .name = "test",
    .ops = NULL,
    .num_ops = 0,
    .allow_unknown_ops = true,
};

static eddy_ctx_t *new_ctx(void) {
  eddy_ctx_t *ctx = eddy_ir_ctx_create();
  assert_non_null(ctx);
  eddy_dialects_register_all(ctx);
  eddy_ir_ctx_register_dialect(ctx, &test_dialect);
  return ctx;
}

/// Parses text; fails the test with the diagnostic when it does not parse.
static eddy_module_t *parse_ok(eddy_ctx_t *ctx, const char *text) {
  eddy_module_t *m = NULL;
  eddy_status_t st = eddy_ir_parse_module(ctx, "t.eddy", text, strlen(text), &m);
  if (st) {
    eddy_status_print(st, stderr);
    eddy_status_destroy(st);
    fail_msg("parse failed");
  }
  assert_non_null(m);
  return m;
}

/// The printed module (caller frees).
static char *print_module(const eddy_module_t *m, bool locs) {
  eddy_buf_t b;
  eddy_buf_init(&b);
  eddy_print_opts_t o = {locs};
  eddy_ir_module_print(m, &o, &b);
  return eddy_buf_take(&b);
}

/// print(parse(text)) must equal `expect` (text itself when NULL), and
/// printing is a fixed point.
static void check_roundtrip(const char *text, const char *expect) {
  eddy_ctx_t *ctx = new_ctx();
  eddy_module_t *m = parse_ok(ctx, text);
  char *out = print_module(m, false);
  assert_string_equal(out, expect ? expect : text);
  eddy_module_t *m2 = parse_ok(ctx, out);
  char *out2 = print_module(m2, false);
  assert_string_equal(out2, out);
  free(out);
  free(out2);
  eddy_ir_module_destroy(m);
  eddy_ir_module_destroy(m2);
  eddy_ir_ctx_destroy(ctx);
}

/* ---- Round trips ------------------------------------------------------------ */

static const char *const brief_example =
    "module {\n"
    "  func.func @f(%arg0: tensor<4xf32>, %arg1: tensor<i64>) -> tensor<4xf32> {\n"
    "    %0 = \"core.add\"(%arg0, %arg0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
    "    %1:2 = \"ctl.while\"(%arg1, %0) ({\n"
    "    ^bb0(%arg2: tensor<i64>, %arg3: tensor<4xf32>):\n"
    "      %2 = \"core.constant\"() {value = dense<10> : tensor<i64>} : () -> tensor<i64>\n"
    "      %3 = \"core.lt\"(%arg2, %2) : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
    "      \"ctl.condition\"(%3) : (tensor<i1>) -> ()\n"
    "    }, {\n"
    "    ^bb0(%arg4: tensor<i64>, %arg5: tensor<4xf32>):\n"
    "      %4 = \"core.constant\"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>\n"
    "      %5 = \"core.add\"(%arg4, %4) : (tensor<i64>, tensor<i64>) -> tensor<i64>\n"
    "      %6 = \"core.mul\"(%arg5, %arg5) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
    "      \"ctl.yield\"(%5, %6) : (tensor<i64>, tensor<4xf32>) -> ()\n"
    "    }) {parallel_iterations = 10} : (tensor<i64>, tensor<4xf32>) -> (tensor<i64>, tensor<4xf32>)\n"
    "    \"func.return\"(%1#1) : (tensor<4xf32>) -> ()\n"
    "  }\n"
    "}\n";

static void test_roundtrip_brief_example(void **state) {
  (void)state;
  check_roundtrip(brief_example, NULL);
  /* The example also verifies with the real dialects. */
  eddy_ctx_t *ctx = new_ctx();
  eddy_module_t *m = parse_ok(ctx, brief_example);
  eddy_status_t st = eddy_ir_verify_module(m);
  if (st)
    eddy_status_print(st, stderr);
  assert_null(st);
  eddy_ir_module_destroy(m);
  eddy_ir_ctx_destroy(ctx);
}

static void test_roundtrip_empty(void **state) {
  (void)state;
  check_roundtrip("module {\n}\n", NULL);
  check_roundtrip("", "module {\n}\n");
  check_roundtrip("  // only a comment\n", "module {\n}\n");
  check_roundtrip("module{}", "module {\n}\n");
}

static void test_roundtrip_renames(void **state) {
  (void)state;
  /* Any names, whitespace and comments in; canonical numbering out. */
  check_roundtrip(
      "// leading comment\n"
      "func.func @g(%x: tensor<f32>, %foo_1: tensor<2x?xi32>) -> (tensor<f32>, tensor<2x?xi32>) {\n"
      "  %a   =   \"test.op\"( %x )   : ( tensor<f32> ) -> tensor<f32>  // trailing\n"
      "  %b, %c:2 = \"test.multi\"(%a, %x) {z = 1, a = 2} : (tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<i1>, tensor<*xf32>)\n"
      "  \"test.use\"(%b, %c#0, %c#1, %c) : (tensor<f32>, tensor<i1>, tensor<*xf32>, tensor<i1>) -> ()\n"
      "  \"func.return\"(%a, %foo_1) : (tensor<f32>, tensor<2x?xi32>) -> ()\n"
      "}\n",
      "module {\n"
      "  func.func @g(%arg0: tensor<f32>, %arg1: tensor<2x?xi32>) -> (tensor<f32>, tensor<2x?xi32>) {\n"
      "    %0 = \"test.op\"(%arg0) : (tensor<f32>) -> tensor<f32>\n"
      "    %1:3 = \"test.multi\"(%0, %arg0) {a = 2, z = 1} : (tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<i1>, tensor<*xf32>)\n"
      "    \"test.use\"(%1#0, %1#1, %1#2, %1#1) : (tensor<f32>, tensor<i1>, tensor<*xf32>, tensor<i1>) -> ()\n"
      "    \"func.return\"(%0, %arg1) : (tensor<f32>, tensor<2x?xi32>) -> ()\n"
      "  }\n"
      "}\n");
}

static void test_roundtrip_regions_and_blocks(void **state) {
  (void)state;
  /* Empty regions, an empty labelled entry block, several blocks, numbering
     across functions, nested regions capturing values from above. */
  check_roundtrip(
      "module attributes {test.version = 2} {\n"
      "  func.func @a() {\n"
      "    \"test.r\"() ({\n"
      "    }, {\n"
      "    ^bb0:\n"
      "    }, {\n"
      "      \"test.x\"() : () -> ()\n"
      "    ^bb1(%arg0: tensor<i1>):\n"
      "      \"test.y\"(%arg0) : (tensor<i1>) -> ()\n"
      "    }) : () -> ()\n"
      "    \"func.return\"() : () -> ()\n"
      "  }\n"
      "  func.func @b(%arg0: tensor<i1>) -> tensor<i1> attributes {test.note = \"x\"} {\n"
      "    %0 = \"ctl.if\"(%arg0) ({\n"
      "      %1 = \"core.not\"(%arg0) : (tensor<i1>) -> tensor<i1>\n"
      "      \"ctl.yield\"(%1) : (tensor<i1>) -> ()\n"
      "    }, {\n"
      "      \"ctl.yield\"(%arg0) : (tensor<i1>) -> ()\n"
      "    }) : (tensor<i1>) -> tensor<i1>\n"
      "    \"func.return\"(%0) : (tensor<i1>) -> ()\n"
      "  }\n"
      "}\n",
      NULL);
}

static void test_roundtrip_types_and_attrs(void **state) {
  (void)state;
  check_roundtrip(
      "module {\n"
      "  func.func @t(%arg0: !tl.list<tensor<?x4xf32>>, %arg1: !df.token, %arg2: tensor<0x3xbf16>) {\n"
      "    \"test.a\"(%arg0, %arg1) {arr = [1, 2 : i32, \"s\", [true, false], @f, @\"with space\"], "
      "f = (tensor<f32>, tensor<i8>) -> (), g = (tensor<f32>) -> tensor<f32>, h = () -> (tensor<f32>, tensor<f64>), "
      "i = 127 : i8, i1v = 1 : i1, neg = -9223372036854775808, s = \"\", t = tensor<*xf16>, "
      "\"weird name\" = 0 : i32} : (!tl.list<tensor<?x4xf32>>, !df.token) -> ()\n"
      "    \"func.return\"() : () -> ()\n"
      "  }\n"
      "}\n",
      NULL);
}

static void test_roundtrip_backedge(void **state) {
  (void)state;
  /* df.merge's back edge: a use before the definition in the same block. */
  const char *text =
      "module {\n"
      "  func.func @loop(%arg0: tensor<f32>) -> tensor<f32> {\n"
      "    %0:2 = \"df.merge\"(%arg0, %2) : (tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<i32>)\n"
      "    %1 = \"core.neg\"(%0#0) : (tensor<f32>) -> tensor<f32>\n"
      "    %2 = \"df.next_iteration\"(%1) : (tensor<f32>) -> tensor<f32>\n"
      "    \"func.return\"(%0#0) : (tensor<f32>) -> ()\n"
      "  }\n"
      "}\n";
  check_roundtrip(text, NULL);
  eddy_ctx_t *ctx = new_ctx();
  eddy_module_t *m = parse_ok(ctx, text);
  eddy_op_t *f = eddy_ir_module_lookup_func(m, "loop");
  eddy_op_t *merge = eddy_ir_func_entry(f)->first;
  eddy_op_t *next = merge->next->next;
  assert_true(eddy_ir_op_is(next, "df.next_iteration"));
  assert_ptr_equal(eddy_ir_op_operand(merge, 1), eddy_ir_op_result(next, 0));
  assert_int_equal(eddy_ir_value_num_uses(eddy_ir_op_result(next, 0)), 1);
  eddy_ir_module_destroy(m);
  eddy_ir_ctx_destroy(ctx);
}

/// Builds the brief's while loop through the API and checks the printed
/// text, then that it reads back to the same text.
static void test_roundtrip_built_with_api(void **state) {
  (void)state;
  eddy_ctx_t *ctx = new_ctx();
  eddy_module_t *m = eddy_ir_module_create(ctx, NULL);
  const eddy_type_t *i64 = eddy_ir_scalar_type_get(ctx, EDDY_DT_I64);
  int64_t four = 4;
  const eddy_type_t *v4 = eddy_ir_tensor_type_get(ctx, EDDY_DT_F32, 1, &four);
  const eddy_type_t *ins[2] = {v4, i64};
  eddy_op_t *f;
  assert_null(eddy_ir_func_create(m, "f", ins, 2, &v4, 1, NULL, &f));
  eddy_block_t *entry = eddy_ir_func_entry(f);
  eddy_builder_t b;
  eddy_ir_builder_init(&b, ctx);
  eddy_ir_builder_set_end(&b, entry);
  eddy_value_t *x = entry->args[0], *n = entry->args[1];
  eddy_value_t *dbl;
  eddy_value_t *xx[2] = {x, x};
  assert_null(eddy_ir_build_simple(&b, "core.add", xx, 2, NULL, 0, &dbl));

  eddy_value_t *inits[2] = {n, dbl};
  const eddy_type_t *loop_types[2] = {i64, v4};
  eddy_named_attr_t pi =
      eddy_ir_named_attr(ctx, "parallel_iterations",
                         eddy_ir_int_attr_get(ctx, 10, EDDY_DT_I64));
  eddy_op_state_t ws = {0};
  ws.name = "ctl.while";
  ws.operands = inits;
  ws.num_operands = 2;
  ws.attrs = &pi;
  ws.num_attrs = 1;
  ws.result_types = loop_types;
  ws.num_results = 2;
  ws.num_regions = 2;
  eddy_op_t *w;
  assert_null(eddy_ir_build(&b, &ws, &w));

  eddy_block_t *cond = eddy_ir_region_add_block(&w->regions[0]);
  eddy_value_t *ci = eddy_ir_block_add_arg(cond, i64);
  eddy_ir_block_add_arg(cond, v4);
  eddy_ir_builder_set_end(&b, cond);
  int64_t ten = 10, one = 1;
  eddy_value_t *lim, *pred, *c1, *inc, *sq;
  assert_null(eddy_ir_build_constant(
      &b, eddy_ir_dense_attr_from_i64(ctx, i64, &ten, 1), &lim));
  eddy_value_t *lt_args[2] = {ci, lim};
  assert_null(eddy_ir_build_simple(&b, "core.lt", lt_args, 2, NULL, 0, &pred));
  assert_null(eddy_ir_build_simple(&b, "ctl.condition", &pred, 1, NULL, 0,
                                   NULL));

  eddy_block_t *body = eddy_ir_region_add_block(&w->regions[1]);
  eddy_value_t *bi = eddy_ir_block_add_arg(body, i64);
  eddy_value_t *bx = eddy_ir_block_add_arg(body, v4);
  eddy_ir_builder_set_end(&b, body);
  assert_null(eddy_ir_build_constant(
      &b, eddy_ir_dense_attr_from_i64(ctx, i64, &one, 1), &c1));
  eddy_value_t *add_args[2] = {bi, c1};
  assert_null(eddy_ir_build_simple(&b, "core.add", add_args, 2, NULL, 0, &inc));
  eddy_value_t *mul_args[2] = {bx, bx};
  assert_null(eddy_ir_build_simple(&b, "core.mul", mul_args, 2, NULL, 0, &sq));
  eddy_value_t *next[2] = {inc, sq};
  assert_null(eddy_ir_build_simple(&b, "ctl.yield", next, 2, NULL, 0, NULL));

  eddy_ir_builder_set_end(&b, entry);
  eddy_value_t *res = eddy_ir_op_result(w, 1);
  assert_null(eddy_ir_build_simple(&b, "func.return", &res, 1, NULL, 0, NULL));

  char *out = print_module(m, false);
  assert_string_equal(out, brief_example);
  free(out);
  eddy_ir_module_destroy(m);
  eddy_ir_ctx_destroy(ctx);
}

static void test_locations(void **state) {
  (void)state;
  eddy_ctx_t *ctx = new_ctx();
  eddy_module_t *m = parse_ok(
      ctx, "module {\n"
           "  func.func @f() {\n"
           "    %x = \"test.a\"() : () -> tensor<f32>\n"
           "      \"test.b\"(%x) : (tensor<f32>) -> () loc(\"orig.py\":7:9)\n"
           "    \"test.c\"() : () -> () loc(\"rnn/while/Exit_2\")\n"
           "    \"test.d\"() : () -> () loc(unknown)\n"
           "  }\n"
           "}\n");
  eddy_op_t *f = eddy_ir_module_lookup_func(m, "f");
  eddy_buf_t b;
  eddy_buf_init(&b);
  eddy_ir_loc_format(f->loc, &b);
  assert_string_equal(b.data, "t.eddy:2:3");
  eddy_op_t *op = eddy_ir_func_entry(f)->first;
  const char *want[] = {"t.eddy:3:5", "orig.py:7:9", "node 'rnn/while/Exit_2'",
                        "<unknown>"};
  for (int i = 0; i < 4; i++, op = op->next) {
    eddy_buf_clear(&b);
    eddy_ir_loc_format(op->loc, &b);
    assert_string_equal(b.data, want[i]);
  }
  eddy_buf_destroy(&b);
  char *with = print_module(m, true);
  assert_non_null(strstr(with, "%0 = \"test.a\"() : () -> tensor<f32> "
                               "loc(\"t.eddy\":3:5)\n"));
  assert_non_null(strstr(with, " loc(\"rnn/while/Exit_2\")\n"));
  assert_non_null(strstr(with, " loc(unknown)\n"));
  assert_non_null(strstr(with, "  } loc(\"t.eddy\":2:3)\n"));
  /* Printed locations read back as themselves. */
  eddy_module_t *m2 = parse_ok(ctx, with);
  char *with2 = print_module(m2, true);
  assert_string_equal(with, with2);
  free(with);
  free(with2);
  eddy_ir_module_destroy(m);
  eddy_ir_module_destroy(m2);
  eddy_ir_ctx_destroy(ctx);
}

static void test_op_print(void **state) {
  (void)state;
  eddy_ctx_t *ctx = new_ctx();
  eddy_module_t *m = parse_ok(
      ctx, "func.func @f(%a: tensor<i1>) {\n"
           "  %r = \"test.w\"(%a) ({\n"
           "  ^bb0(%b: tensor<i1>):\n"
           "    %c = \"test.n\"(%a, %b) : (tensor<i1>, tensor<i1>) -> tensor<i1>\n"
           "  }) : (tensor<i1>) -> tensor<i1>\n"
           "}\n");
  eddy_op_t *w = eddy_ir_func_entry(eddy_ir_module_lookup_func(m, "f"))->first;
  eddy_buf_t b;
  eddy_buf_init(&b);
  eddy_ir_op_print(w, NULL, &b);
  assert_string_equal(b.data,
                      "%0 = \"test.w\"(%ext0) ({\n"
                      "^bb0(%arg0: tensor<i1>):\n"
                      "  %1 = \"test.n\"(%ext0, %arg0) : (tensor<i1>, tensor<i1>) -> tensor<i1>\n"
                      "}) : (tensor<i1>) -> tensor<i1>\n");
  eddy_buf_destroy(&b);
  eddy_ir_module_destroy(m);
  eddy_ir_ctx_destroy(ctx);
}

/// A func.func the custom form cannot express (no body) prints in the
/// generic form, which reads back.
static void test_func_without_body(void **state) {
  (void)state;
  eddy_ctx_t *ctx = new_ctx();
  eddy_module_t *m = eddy_ir_module_create(ctx, NULL);
  const eddy_type_t *f32 = eddy_ir_scalar_type_get(ctx, EDDY_DT_F32);
  eddy_named_attr_t attrs[2] = {
      eddy_ir_named_attr(ctx, "sym_name", eddy_ir_string_attr_get(ctx, "d", 1)),
      eddy_ir_named_attr(ctx, "function_type",
                         eddy_ir_type_attr_get(
                             ctx, eddy_ir_func_type_get(ctx, &f32, 1, NULL, 0))),
  };
  eddy_op_state_t st = {0};
  st.name = "func.func";
  st.attrs = attrs;
  st.num_attrs = 2;
  st.num_regions = 1;
  eddy_op_t *f;
  assert_null(eddy_ir_op_create(ctx, &st, &f));
  eddy_ir_op_append(f, eddy_ir_module_body(m));
  const char *want = "module {\n"
                     "  \"func.func\"() ({\n"
                     "  }) {function_type = (tensor<f32>) -> (), sym_name = \"d\"} : () -> ()\n"
                     "}\n";
  char *out = print_module(m, false);
  assert_string_equal(out, want);
  free(out);
  eddy_ir_module_destroy(m);
  check_roundtrip(want, NULL);
  eddy_ir_ctx_destroy(ctx);
}

/* ---- Numbers and strings ------------------------------------------------------ */

/// Prints a float attribute of dtype dt holding v.
static void check_float(eddy_ctx_t *ctx, double v, eddy_dtype_t dt,
                        const char *want) {
  const eddy_attr_t *a = eddy_ir_float_attr_get(ctx, v, dt);
  eddy_buf_t b;
  eddy_buf_init(&b);
  eddy_ir_attr_print(a, &b);
  assert_string_equal(b.data, want);
  /* And it reads back as the same (interned) attribute. */
  char text[256];
  snprintf(text, sizeof(text),
           "\"test.c\"() {v = %s} : () -> ()\n", b.data);
  eddy_module_t *m = parse_ok(ctx, text);
  const eddy_attr_t *back =
      eddy_ir_op_attr(eddy_ir_module_body(m)->first, "v");
  if (v == v)
    assert_ptr_equal(back, a);
  else
    assert_true(back->kind == EDDY_ATTR_FLOAT && back->u.f != back->u.f);
  eddy_ir_module_destroy(m);
  eddy_buf_destroy(&b);
}

static void test_float_format(void **state) {
  (void)state;
  eddy_ctx_t *ctx = new_ctx();
  /* f64: shortest round trip, always a '.', exponent past 1e16 / below 1e-4. */
  check_float(ctx, 1.0, EDDY_DT_F64, "1.0");
  check_float(ctx, 0.1, EDDY_DT_F64, "0.1");
  check_float(ctx, 1e20, EDDY_DT_F64, "1.0e+20");
  check_float(ctx, -2.5e-8, EDDY_DT_F64, "-2.5e-08");
  check_float(ctx, -0.0, EDDY_DT_F64, "-0.0");
  check_float(ctx, 0.0, EDDY_DT_F64, "0.0");
  check_float(ctx, 123.456, EDDY_DT_F64, "123.456");
  check_float(ctx, 0.0001, EDDY_DT_F64, "0.0001");
  check_float(ctx, 0.00001, EDDY_DT_F64, "1.0e-05");
  check_float(ctx, 1e15, EDDY_DT_F64, "1000000000000000.0");
  check_float(ctx, 1e16, EDDY_DT_F64, "1.0e+16");
  check_float(ctx, 1.0 / 3.0, EDDY_DT_F64, "0.3333333333333333");
  check_float(ctx, 1.7976931348623157e308, EDDY_DT_F64,
              "1.7976931348623157e+308");
  check_float(ctx, 4.9406564584124654e-324, EDDY_DT_F64, "5.0e-324");
  check_float(ctx, INFINITY, EDDY_DT_F64, "0x7FF0000000000000 : f64");
  check_float(ctx, -INFINITY, EDDY_DT_F64, "0xFFF0000000000000 : f64");
  check_float(ctx, NAN, EDDY_DT_F64, "0x7FF8000000000000 : f64");
  /* f32 */
  check_float(ctx, 0.1, EDDY_DT_F32, "0.1 : f32");
  check_float(ctx, 1.0 / 3.0, EDDY_DT_F32, "0.33333334 : f32");
  check_float(ctx, 16777216.0, EDDY_DT_F32, "16777216.0 : f32");
  check_float(ctx, 3.4028234663852886e38, EDDY_DT_F32, "3.4028235e+38 : f32");
  check_float(ctx, 1.401298464324817e-45, EDDY_DT_F32, "1.0e-45 : f32");
  check_float(ctx, -0.0, EDDY_DT_F32, "-0.0 : f32");
  check_float(ctx, INFINITY, EDDY_DT_F32, "0x7F800000 : f32");
  check_float(ctx, -INFINITY, EDDY_DT_F32, "0xFF800000 : f32");
  /* f16 */
  check_float(ctx, 0.1, EDDY_DT_F16, "0.1 : f16");
  check_float(ctx, 65504.0, EDDY_DT_F16, "65500.0 : f16");
  check_float(ctx, 2048.0, EDDY_DT_F16, "2048.0 : f16");
  check_float(ctx, 5.960464477539063e-08, EDDY_DT_F16, "6.0e-08 : f16");
  check_float(ctx, 1.0 / 3.0, EDDY_DT_F16, "0.3333 : f16");
  check_float(ctx, INFINITY, EDDY_DT_F16, "0x7C00 : f16");
  check_float(ctx, -INFINITY, EDDY_DT_F16, "0xFC00 : f16");
  check_float(ctx, -0.0, EDDY_DT_F16, "-0.0 : f16");
  /* bf16 */
  check_float(ctx, 0.1, EDDY_DT_BF16, "0.1 : bf16");
  check_float(ctx, 1.0 / 3.0, EDDY_DT_BF16, "0.334 : bf16");
  check_float(ctx, 3.0e38, EDDY_DT_BF16, "3.0e+38 : bf16");
  check_float(ctx, INFINITY, EDDY_DT_BF16, "0x7F80 : bf16");
  check_float(ctx, 1.5, EDDY_DT_BF16, "1.5 : bf16");
  eddy_ir_ctx_destroy(ctx);
}

/// Every f16 and bf16 bit pattern and a sweep of f32/f64 values print and
/// read back to the same value.
static void test_float_exhaustive_roundtrip(void **state) {
  (void)state;
  eddy_ctx_t *ctx = new_ctx();
  eddy_buf_t text;
  eddy_buf_init(&text);
  for (int k = 0; k < 2; k++) {
    eddy_dtype_t dt = k ? EDDY_DT_BF16 : EDDY_DT_F16;
    for (uint32_t bits = 0; bits < 0x10000; bits++) {
      float f = k ? eddy_bf16_to_f32((uint16_t)bits)
                  : eddy_f16_to_f32((uint16_t)bits);
      if (f != f)
        continue;
      const eddy_attr_t *a = eddy_ir_float_attr_get(ctx, f, dt);
      eddy_buf_clear(&text);
      eddy_buf_puts(&text, "\"test.c\"() {v = ");
      eddy_ir_attr_print(a, &text);
      eddy_buf_puts(&text, "} : () -> ()");
      eddy_module_t *m = parse_ok(ctx, text.data);
      assert_ptr_equal(eddy_ir_op_attr(eddy_ir_module_body(m)->first, "v"),
                       a);
      eddy_ir_module_destroy(m);
    }
  }
  uint64_t seed = 12345;
  for (int i = 0; i < 20000; i++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    double d;
    uint64_t bits = seed;
    memcpy(&d, &bits, sizeof(d));
    if (d != d)
      continue;
    eddy_dtype_t dt = (i & 1) ? EDDY_DT_F32 : EDDY_DT_F64;
    const eddy_attr_t *a = eddy_ir_float_attr_get(ctx, d, dt);
    eddy_buf_clear(&text);
    eddy_buf_puts(&text, "\"test.c\"() {v = ");
    eddy_ir_attr_print(a, &text);
    eddy_buf_puts(&text, "} : () -> ()");
    eddy_module_t *m = parse_ok(ctx, text.data);
    assert_ptr_equal(eddy_ir_op_attr(eddy_ir_module_body(m)->first, "v"), a);
    eddy_ir_module_destroy(m);
  }
  eddy_buf_destroy(&text);
  eddy_ir_ctx_destroy(ctx);
}

static void test_string_escapes(void **state) {
  (void)state;
  eddy_ctx_t *ctx = new_ctx();
  const char raw[] = "a\"b\\c\nd\te\x01\x7f\xc3\xa9";
  const eddy_attr_t *a = eddy_ir_string_attr_get(ctx, raw, sizeof(raw) - 1);
  eddy_buf_t b;
  eddy_buf_init(&b);
  eddy_ir_attr_print(a, &b);
  assert_string_equal(b.data, "\"a\\\"b\\\\c\\nd\\te\\01\\7F\\C3\\A9\"");
  eddy_buf_destroy(&b);
  /* Every byte value, NUL included, survives print and parse. */
  char all[256];
  for (int i = 0; i < 256; i++)
    all[i] = (char)i;
  const eddy_attr_t *s = eddy_ir_string_attr_get(ctx, all, sizeof(all));
  eddy_buf_init(&b);
  eddy_buf_puts(&b, "\"test.c\"() {v = ");
  eddy_ir_attr_print(s, &b);
  eddy_buf_puts(&b, "} : () -> ()");
  eddy_module_t *m = parse_ok(ctx, b.data);
  assert_ptr_equal(eddy_ir_op_attr(eddy_ir_module_body(m)->first, "v"), s);
  eddy_ir_module_destroy(m);
  eddy_buf_destroy(&b);
  /* Lower-case hex escapes are accepted too. */
  m = parse_ok(ctx, "\"test.c\"() {v = \"\\0a\\ff\"} : () -> ()");
  const eddy_attr_t *v = eddy_ir_op_attr(eddy_ir_module_body(m)->first, "v");
  assert_int_equal(v->u.str.len, 2);
  assert_memory_equal(v->u.str.data, "\n\xff", 2);
  eddy_ir_module_destroy(m);
  eddy_ir_ctx_destroy(ctx);
}

/// A dense attribute's printed form, and that it reads back interned.
static void check_dense(eddy_ctx_t *ctx, const eddy_attr_t *a,
                        const char *want) {
  eddy_buf_t b;
  eddy_buf_init(&b);
  eddy_ir_attr_print(a, &b);
  assert_string_equal(b.data, want);
  char *text = malloc(b.len + 64);
  sprintf(text, "\"test.c\"() {v = %s} : () -> ()", b.data);
  eddy_module_t *m = parse_ok(ctx, text);
  assert_ptr_equal(eddy_ir_op_attr(eddy_ir_module_body(m)->first, "v"), a);
  eddy_ir_module_destroy(m);
  free(text);
  eddy_buf_destroy(&b);
}

static void test_dense_every_dtype(void **state) {
  (void)state;
  eddy_ctx_t *ctx = new_ctx();
  int64_t d22[2] = {2, 2}, d3 = 3, d0[2] = {0, 3}, d231[3] = {2, 3, 1};
  double fv[4] = {1.0, -2.5, 0.1, 1e20};
  int64_t iv[4] = {1, -2, 127, -128};
  struct {
    eddy_dtype_t dt;
    const char *full, *splat;
  } cases[] = {
      {EDDY_DT_F64, "dense<[[1.0, -2.5], [0.1, 1.0e+20]]> : tensor<2x2xf64>",
       "dense<-2.5> : tensor<3xf64>"},
      {EDDY_DT_F32, "dense<[[1.0, -2.5], [0.1, 1.0e+20]]> : tensor<2x2xf32>",
       "dense<-2.5> : tensor<3xf32>"},
      {EDDY_DT_F16, "dense<[[1.0, -2.5], [0.1, 0x7C00]]> : tensor<2x2xf16>",
       "dense<-2.5> : tensor<3xf16>"},
      {EDDY_DT_BF16, "dense<[[1.0, -2.5], [0.1, 1.0e+20]]> : tensor<2x2xbf16>",
       "dense<-2.5> : tensor<3xbf16>"},
      {EDDY_DT_I8, "dense<[[1, -2], [127, -128]]> : tensor<2x2xi8>",
       "dense<-2> : tensor<3xi8>"},
      {EDDY_DT_I32, "dense<[[1, -2], [127, -128]]> : tensor<2x2xi32>",
       "dense<-2> : tensor<3xi32>"},
      {EDDY_DT_I64, "dense<[[1, -2], [127, -128]]> : tensor<2x2xi64>",
       "dense<-2> : tensor<3xi64>"},
      {EDDY_DT_I1, "dense<[[true, false], [true, false]]> : tensor<2x2xi1>",
       "dense<false> : tensor<3xi1>"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    eddy_dtype_t dt = cases[i].dt;
    const eddy_type_t *t22 = eddy_ir_tensor_type_get(ctx, dt, 2, d22);
    const eddy_type_t *t3 = eddy_ir_tensor_type_get(ctx, dt, 1, &d3);
    const eddy_attr_t *full, *splat;
    if (eddy_dtype_is_float(dt)) {
      full = eddy_ir_dense_attr_from_f64(ctx, t22, fv, 4);
      splat = eddy_ir_dense_attr_from_f64(ctx, t3, &fv[1], 1);
    } else if (dt == EDDY_DT_I1) {
      int64_t bv[4] = {1, 0, 1, 0}, z = 0;
      full = eddy_ir_dense_attr_from_i64(ctx, t22, bv, 4);
      splat = eddy_ir_dense_attr_from_i64(ctx, t3, &z, 1);
    } else {
      full = eddy_ir_dense_attr_from_i64(ctx, t22, iv, 4);
      splat = eddy_ir_dense_attr_from_i64(ctx, t3, &iv[1], 1);
    }
    check_dense(ctx, full, cases[i].full);
    check_dense(ctx, splat, cases[i].splat);
    /* Empty and scalar forms. */
    const eddy_type_t *t0 = eddy_ir_tensor_type_get(ctx, dt, 2, d0);
    const eddy_attr_t *empty = eddy_ir_dense_attr_get(ctx, t0, "", 0);
    eddy_buf_t want;
    eddy_buf_init(&want);
    eddy_buf_printf(&want, "dense<> : tensor<0x3x%s>", eddy_dtype_name(dt));
    check_dense(ctx, empty, want.data);
    eddy_buf_destroy(&want);
  }
  /* Nesting follows the shape, rank 0 has no brackets. */
  const eddy_type_t *t231 = eddy_ir_tensor_type_get(ctx, EDDY_DT_I32, 3, d231);
  int64_t six[6] = {1, 2, 3, 4, 5, 6};
  check_dense(ctx, eddy_ir_dense_attr_from_i64(ctx, t231, six, 6),
              "dense<[[[1], [2], [3]], [[4], [5], [6]]]> : tensor<2x3x1xi32>");
  int64_t seven = 7;
  check_dense(ctx,
              eddy_ir_dense_attr_from_i64(
                  ctx, eddy_ir_scalar_type_get(ctx, EDDY_DT_I64), &seven, 1),
              "dense<7> : tensor<i64>");
  check_dense(ctx, eddy_ir_dense_attr_from_i64(ctx, t231, &seven, 1),
              "dense<7> : tensor<2x3x1xi32>");
  /* Non-finite elements print as bit patterns; those read back too. */
  double nf[3] = {INFINITY, -INFINITY, -0.0};
  const eddy_type_t *f3 = eddy_ir_tensor_type_get(ctx, EDDY_DT_F32, 1, &d3);
  check_dense(ctx, eddy_ir_dense_attr_from_f64(ctx, f3, nf, 3),
              "dense<[0x7F800000, 0xFF800000, -0.0]> : tensor<3xf32>");
  eddy_ir_ctx_destroy(ctx);
}

static void test_dense_parse_forms(void **state) {
  (void)state;
  /* Forms accepted on input that print differently. */
  check_roundtrip("\"test.c\"() {a = dense<[1.0, 1.0]> : tensor<2xf32>, "
                  "b = dense<[0, 1]> : tensor<2xi1>, c = dense<[]> : tensor<0xi32>, "
                  "d = dense<[[], []]> : tensor<2x0xf64>, e = dense<0x3F800000> : tensor<f32>, "
                  "f = 0x10 : i32, g = 0xFF : i8, h = 2.5e0 : f64}"
                  " : () -> ()\n",
                  "module {\n"
                  "  \"test.c\"() {a = dense<1.0> : tensor<2xf32>, "
                  "b = dense<[false, true]> : tensor<2xi1>, c = dense<> : tensor<0xi32>, "
                  "d = dense<> : tensor<2x0xf64>, e = dense<1.0> : tensor<f32>, "
                  "f = 16 : i32, g = -1 : i8, h = 2.5} : () -> ()\n"
                  "}\n");
}

/* ---- Diagnostics -------------------------------------------------------------- */

typedef struct error_case {
  const char *text;
  const char *where; ///< "line:col"
  const char *message;
} error_case_t;

static const error_case_t error_cases[] = {
    {"func.func @f(%a: tensor<f32>) {\n"
     "  %1 = \"test.add\"(%5, %a) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n"
     "}\n",
     "2:19", "use of undefined value '%5'"},
    {"func.func @f(%a: tensor<f32>) {\n  %a = \"test.x\"() : () -> tensor<f32>\n}",
     "2:3", "redefinition of value '%a'"},
    {"func.func @f(%a: tensor<f32>) {\n  \"test.x\"(%a) : (tensor<i32>) -> ()\n}",
     "2:12", "use of value '%a' expects type 'tensor<i32>' but it has type "
             "'tensor<f32>'"},
    {"func.func @f(%a: tensor<4xf33>) {\n}", "1:27",
     "unknown element type 'f33'"},
    {"func.func @f() {\n  \"test.x\"() {s = \"abc} : () -> ()\n}", "2:19",
     "unterminated string literal"},
    {"func.func @f() {\n  \"test.x\"() {s = \"a\\zb\"} : () -> ()\n}", "2:21",
     "invalid escape sequence in string: '\\' followed by 'z'"},
    {"func.func @f() {\n  \"test.x\"( : () -> ()\n}", "2:13",
     "expected an operand (%name), found ':'"},
    {"func.func @f() {\n  %r = \"test.x\"() : () -> (tensor<f32>, tensor<f32>)\n}",
     "2:3", "op defines 1 result but its signature lists 2 result types"},
    {"func.func @f() {\n  %r = \"nope.x\"() : () -> tensor<f32>\n}", "2:8",
     "unknown op 'nope.x'"},
    {"\"test.x\"() {v = 128 : i8} : () -> ()", "1:17",
     "integer '128' is out of range for i8"},
    {"\"test.x\"() {v = dense<[1.0, 2.0, 3.0]> : tensor<2xf32>} : () -> ()",
     "1:17", "dense attribute has 3 elements but type 'tensor<2xf32>' needs 2"},
    {"module {\n}\n}\n", "3:1",
     "expected end of file after the module, found '}'"},
    {"func.func @f() {\n\t\"test.x\"() : () -> tensor<f32 x>\n}", "2:32",
     "expected '>' to end the tensor type, found 'x'"},
    {"\"test.x\"() {v = \x01} : () -> ()", "1:17",
     "unexpected character '\\01'"},
    {"func.func @f(%a: tensor<i1>) {\n"
     "  \"test.if\"(%a) ({\n"
     "    %x = \"test.n\"() : () -> tensor<i1>\n"
     "  }) : (tensor<i1>) -> ()\n"
     "  \"test.u\"(%x) : (tensor<i1>) -> ()\n"
     "}\n",
     "5:12", "use of undefined value '%x'"},
};

static void test_error_messages(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof(error_cases) / sizeof(error_cases[0]); i++) {
    const error_case_t *c = &error_cases[i];
    eddy_ctx_t *ctx = new_ctx();
    eddy_module_t *m = NULL;
    eddy_status_t st =
        eddy_ir_parse_module(ctx, "t.eddy", c->text, strlen(c->text), &m);
    if (!st)
      fail_msg("case %zu parsed", i);
    assert_null(m);
    assert_int_equal(eddy_status_code(st), EDDY_ERR_PARSE);
    char where[64];
    snprintf(where, sizeof(where), "t.eddy:%s", c->where);
    if (strcmp(eddy_status_location(st), where) != 0 ||
        strcmp(eddy_status_message(st), c->message) != 0)
      fail_msg("case %zu: got %s: %s", i, eddy_status_location(st),
               eddy_status_message(st));
    /* The notes: the source line, then the caret under the column. */
    const char *notes = eddy_status_notes(st);
    const char *nl = strchr(notes, '\n');
    assert_non_null(nl);
    const char *caret = strchr(nl + 1, '^');
    assert_non_null(caret);
    int col = atoi(strchr(c->where, ':') + 1);
    assert_int_equal(caret - (nl + 1), col - 1);
    eddy_status_destroy(st);
    eddy_ir_ctx_destroy(ctx);
  }
}

static void test_error_caret_note(void **state) {
  (void)state;
  eddy_ctx_t *ctx = new_ctx();
  const char *text = "module {\n"
                     "  func.func @f(%arg0: tensor<f32>) {\n"
                     "    %1 = \"core.add\"(%5, %arg0) : (tensor<f32>, "
                     "tensor<f32>) -> tensor<f32>\n"
                     "  }\n"
                     "}\n";
  eddy_module_t *m;
  eddy_status_t st = eddy_ir_parse_module(ctx, "t.eddy", text, strlen(text), &m);
  assert_non_null(st);
  assert_string_equal(eddy_status_location(st), "t.eddy:3:21");
  assert_string_equal(eddy_status_message(st), "use of undefined value '%5'");
  assert_string_equal(eddy_status_notes(st),
                      "    %1 = \"core.add\"(%5, %arg0) : (tensor<f32>, "
                      "tensor<f32>) -> tensor<f32>\n"
                      "                    ^\n");
  eddy_status_destroy(st);
  eddy_ir_ctx_destroy(ctx);
}

static void test_parse_file(void **state) {
  (void)state;
  eddy_ctx_t *ctx = new_ctx();
  eddy_module_t *m;
  eddy_status_t st =
      eddy_ir_parse_file(ctx, "/nonexistent/dir/x.eddy", &m);
  assert_non_null(st);
  assert_int_equal(eddy_status_code(st), EDDY_ERR_IO);
  assert_string_equal(eddy_status_message(st),
                      "cannot open '/nonexistent/dir/x.eddy': No such file or "
                      "directory");
  eddy_status_destroy(st);
  char path[] = "/tmp/eddy_test_text_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fputs(brief_example, f);
  fclose(f);
  assert_null(eddy_ir_parse_file(ctx, path, &m));
  char *out = print_module(m, false);
  assert_string_equal(out, brief_example);
  free(out);
  eddy_ir_module_destroy(m);
  unlink(path);
  eddy_ir_ctx_destroy(ctx);
}

/* ---- Robustness --------------------------------------------------------------- */

static const char *const robust_input =
    "module attributes {test.v = [1, 2.5 : f32, \"s\\n\", @g]} {\n"
    "  func.func @f(%arg0: tensor<4x?xf32>, %arg1: !tl.list<tensor<*xi8>>) -> (tensor<4x?xf32>, !df.token) attributes {x = true} {\n"
    "    %0:2 = \"df.merge\"(%arg0, %2) : (tensor<4x?xf32>, tensor<4x?xf32>) -> (tensor<4x?xf32>, tensor<i32>)\n"
    "    %1 = \"test.k\"() {d = dense<[[1.0, 0x7C00], [-0.0, 2.5e-08]]> : tensor<2x2xf16>, e = dense<> : tensor<0xi1>} : () -> !df.token loc(\"a.py\":3:4)\n"
    "    %2 = \"df.next_iteration\"(%0#0) : (tensor<4x?xf32>) -> tensor<4x?xf32> loc(\"node\")\n"
    "    \"test.r\"(%1) ({\n"
    "    ^bb0(%arg2: tensor<i1>):  // comment\n"
    "      \"test.y\"(%arg2, %arg0) : (tensor<i1>, tensor<4x?xf32>) -> ()\n"
    "    }, {\n"
    "    }) {f = (tensor<f32>) -> (tensor<i64>, tensor<bf16>)} : (!df.token) -> ()\n"
    "    \"func.return\"(%0#0, %1) : (tensor<4x?xf32>, !df.token) -> ()\n"
    "  }\n"
    "}\n";

/// Parses text[0..len) from a heap copy of exactly len bytes (so that ASan
/// catches any read past the end) and checks the outcome is sane.
static void parse_must_not_crash(eddy_ctx_t *ctx, const char *text,
                                 size_t len) {
  char *copy = malloc(len ? len : 1);
  memcpy(copy, text, len);
  eddy_module_t *m = NULL;
  eddy_status_t st = eddy_ir_parse_module(ctx, "t.eddy", copy, len, &m);
  if (st) {
    assert_null(m);
    assert_int_equal(eddy_status_code(st), EDDY_ERR_PARSE);
    assert_non_null(eddy_status_location(st));
    eddy_status_destroy(st);
  } else {
    assert_non_null(m);
    eddy_ir_module_destroy(m);
  }
  free(copy);
}

static void test_every_truncation(void **state) {
  (void)state;
  eddy_ctx_t *ctx = new_ctx();
  size_t len = strlen(robust_input);
  parse_must_not_crash(ctx, robust_input, len);
  eddy_module_t *m = parse_ok(ctx, robust_input);
  eddy_ir_module_destroy(m);
  for (size_t n = 0; n < len; n++)
    parse_must_not_crash(ctx, robust_input, n);
  eddy_ir_ctx_destroy(ctx);
}

static void test_corruptions(void **state) {
  (void)state;
  eddy_ctx_t *ctx = new_ctx();
  size_t len = strlen(robust_input);
  char *buf = malloc(len);
  const char repl[] = {'\0', '{', '}', '(', '"', '%', '#', '9', '-', '\n'};
  for (size_t i = 0; i < len; i++) {
    for (size_t r = 0; r < sizeof(repl); r++) {
      memcpy(buf, robust_input, len);
      buf[i] = repl[r];
      parse_must_not_crash(ctx, buf, len);
    }
  }
  free(buf);
  eddy_ir_ctx_destroy(ctx);
}

static void test_hostile_input(void **state) {
  (void)state;
  eddy_ctx_t *ctx = new_ctx();
  size_t n = 100000;
  char *s = malloc(n * 2 + 64);
  /* Deep brackets of every kind stop at the nesting limit. */
  const char *opens[] = {"(", "[", "{", "!tl.list<", "\"test.x\"() ({"};
  for (size_t k = 0; k < sizeof(opens) / sizeof(opens[0]); k++) {
    size_t len = 0;
    len += (size_t)sprintf(s, "\"test.x\"() {a = ");
    size_t w = strlen(opens[k]);
    while (len + w < n) {
      memcpy(s + len, opens[k], w);
      len += w;
    }
    parse_must_not_crash(ctx, s, len);
  }
  /* A nesting depth just at the limit is fine; one more is an error. */
  for (int depth = 250; depth <= 260; depth++) {
    size_t len = (size_t)sprintf(s, "\"test.x\"() {a = ");
    for (int i = 0; i < depth; i++)
      s[len++] = '[';
    for (int i = 0; i < depth; i++)
      s[len++] = ']';
    len += (size_t)sprintf(s + len, "} : () -> ()");
    eddy_module_t *m = NULL;
    eddy_status_t st = eddy_ir_parse_module(ctx, "t", s, len, &m);
    if (depth <= 256) {
      assert_null(st);
      eddy_ir_module_destroy(m);
    } else {
      assert_non_null(st);
      assert_non_null(strstr(eddy_status_message(st), "nesting is too deep"));
      eddy_status_destroy(st);
    }
  }
  /* Huge numbers and dims. */
  const char *bad[] = {
      "\"test.x\"() {a = 99999999999999999999999999999} : () -> ()",
      "\"test.x\"() {a = 0x10000000000000000} : () -> ()",
      "\"test.x\"() {a = 0x100000000 : f32} : () -> ()",
      "\"test.x\"() {a = 1.0e400} : () -> ()",
      "\"test.x\"() {a = dense<1.0> : tensor<4611686018427387904xf32>} : () -> ()",
      "\"test.x\"() {a = dense<1.0> : tensor<2147483648x2147483648x8xf32>} : () -> ()",
      "\"test.x\"() {a = dense<1.0> : tensor<?xf32>} : () -> ()",
      "%0:4294967296 = \"test.x\"() : () -> ()",
      "\"test.x\"(%a#99999999999) : (tensor<f32>) -> ()",
      "\"test.x\"() : () -> () loc(\"f\":0:1)",
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    eddy_module_t *m = NULL;
    eddy_status_t st = eddy_ir_parse_module(ctx, "t", bad[i], strlen(bad[i]), &m);
    if (!st)
      fail_msg("hostile case %zu parsed", i);
    eddy_status_destroy(st);
  }
  /* A long line: the note shows a window around the column. */
  size_t len = (size_t)sprintf(s, "\"test.x\"() {a = [");
  for (int i = 0; i < 5000; i++)
    len += (size_t)sprintf(s + len, "1, ");
  len += (size_t)sprintf(s + len, "$]} : () -> ()");
  eddy_module_t *m = NULL;
  eddy_status_t st = eddy_ir_parse_module(ctx, "t", s, len, &m);
  assert_non_null(st);
  assert_true(strlen(eddy_status_notes(st)) < 400);
  eddy_status_destroy(st);
  free(s);
  eddy_ir_ctx_destroy(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_roundtrip_brief_example),
      cmocka_unit_test(test_roundtrip_empty),
      cmocka_unit_test(test_roundtrip_renames),
      cmocka_unit_test(test_roundtrip_regions_and_blocks),
      cmocka_unit_test(test_roundtrip_types_and_attrs),
      cmocka_unit_test(test_roundtrip_backedge),
      cmocka_unit_test(test_roundtrip_built_with_api),
      cmocka_unit_test(test_locations),
      cmocka_unit_test(test_op_print),
      cmocka_unit_test(test_func_without_body),
      cmocka_unit_test(test_float_format),
      cmocka_unit_test(test_float_exhaustive_roundtrip),
      cmocka_unit_test(test_string_escapes),
      cmocka_unit_test(test_dense_every_dtype),
      cmocka_unit_test(test_dense_parse_forms),
      cmocka_unit_test(test_error_messages),
      cmocka_unit_test(test_error_caret_note),
      cmocka_unit_test(test_parse_file),
      cmocka_unit_test(test_every_truncation),
      cmocka_unit_test(test_corruptions),
      cmocka_unit_test(test_hostile_input),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

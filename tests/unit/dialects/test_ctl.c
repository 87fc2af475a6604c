/// Unit tests of the generic verifier and of the ctl, tl and df dialects,
/// building IR through the C API: every verifier rule is broken once and
/// must be reported with its message.
#include "dialects/ctl/ctl.h"
#include "dialects/df/df.h"
#include "dialects/dialects.h"
#include "dialects/tl/tl.h"
#include "ir/ir.h"

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
  eddy_op_t *func;
  eddy_builder_t b;
  const eddy_type_t *i64, *i1, *i32, *f32, *v4f32, *vdynf32;
} fixture_t;

static int setup(void **state) {
  fixture_t *f = calloc(1, sizeof(*f));
  assert_non_null(f);
  f->ctx = eddy_ir_ctx_create();
  assert_non_null(f->ctx);
  eddy_dialects_register_all(f->ctx);
  f->m = eddy_ir_module_create(f->ctx, NULL);
  assert_non_null(f->m);
  f->i64 = eddy_ir_scalar_type_get(f->ctx, EDDY_DT_I64);
  f->i32 = eddy_ir_scalar_type_get(f->ctx, EDDY_DT_I32);
  f->i1 = eddy_ir_scalar_type_get(f->ctx, EDDY_DT_I1);
  f->f32 = eddy_ir_scalar_type_get(f->ctx, EDDY_DT_F32);
  int64_t four = 4, dyn = EDDY_DIM_DYNAMIC;
  f->v4f32 = eddy_ir_tensor_type_get(f->ctx, EDDY_DT_F32, 1, &four);
  f->vdynf32 = eddy_ir_tensor_type_get(f->ctx, EDDY_DT_F32, 1, &dyn);
  eddy_ir_builder_init(&f->b, f->ctx);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture_t *f = *state;
  eddy_ir_module_destroy(f->m);
  eddy_ir_ctx_destroy(f->ctx);
  free(f);
  return 0;
}

/// func.func @NAME(inputs) -> outputs, with the builder at its entry's end.
static eddy_block_t *make_func(fixture_t *f, const char *name,
                               const eddy_type_t *const *in, size_t nin,
                               const eddy_type_t *const *out, size_t nout) {
  assert_null(
      eddy_ir_func_create(f->m, name, in, nin, out, nout, NULL, &f->func));
  eddy_block_t *entry = eddy_ir_func_entry(f->func);
  eddy_ir_builder_set_end(&f->b, entry);
  return entry;
}

static eddy_value_t *const_i64(fixture_t *f, int64_t v) {
  const eddy_attr_t *a = eddy_ir_dense_attr_from_i64(f->ctx, f->i64, &v, 1);
  eddy_value_t *out = NULL;
  assert_null(eddy_ir_build_constant(&f->b, a, &out));
  return out;
}

static eddy_value_t *const_i1(fixture_t *f, bool v) {
  int64_t x = v;
  const eddy_attr_t *a = eddy_ir_dense_attr_from_i64(f->ctx, f->i1, &x, 1);
  eddy_value_t *out = NULL;
  assert_null(eddy_ir_build_constant(&f->b, a, &out));
  return out;
}

static eddy_value_t *binary(fixture_t *f, const char *name, eddy_value_t *a,
                            eddy_value_t *b) {
  eddy_value_t *ops[2] = {a, b};
  eddy_value_t *out = NULL;
  assert_null(eddy_ir_build_simple(&f->b, name, ops, 2, NULL, 0, &out));
  return out;
}

static eddy_op_t *build_op(fixture_t *f, const char *name,
                           eddy_value_t *const *ops, size_t n,
                           const eddy_type_t *const *types, size_t nres) {
  static const eddy_type_t *const none[1] = {NULL};
  eddy_op_state_t st = {
      .name = name,
      .operands = ops,
      .num_operands = n,
      .result_types = nres ? types : none,
      .num_results = nres,
  };
  eddy_op_t *op = NULL;
  assert_null(eddy_ir_build(&f->b, &st, &op));
  return op;
}

static eddy_op_t *build_return(fixture_t *f, eddy_value_t *const *vals,
                               size_t n) {
  return build_op(f, "func.return", vals, n, NULL, 0);
}

/// Asserts that verification fails with a message containing `want`.
static void expect_error(const fixture_t *f, const char *want) {
  eddy_status_t st = eddy_ir_verify_module(f->m);
  if (!st)
    fail_msg("expected an error containing \"%s\", got success", want);
  const char *msg = eddy_status_message(st);
  if (!strstr(msg, want))
    fail_msg("expected an error containing \"%s\", got \"%s\"", want, msg);
  assert_int_equal(eddy_status_code(st), EDDY_ERR_VERIFY);
  eddy_status_destroy(st);
}

static void expect_ok(const fixture_t *f) {
  eddy_status_t st = eddy_ir_verify_module(f->m);
  if (st)
    fail_msg("expected success, got \"%s\"", eddy_status_message(st));
}

/// The loop of the text-format example:
///   while (i < 10) { i = i + 1; x = x * x }  return x
typedef struct loop {
  eddy_op_t *w;
  eddy_op_t *cond_term, *body_term, *ret;
  eddy_value_t *lt, *next_i, *next_x;
} loop_t;

static loop_t build_loop(fixture_t *f) {
  const eddy_type_t *in[2] = {f->i64, f->v4f32};
  eddy_block_t *entry = make_func(f, "f", in, 2, &f->v4f32, 1);
  eddy_value_t *x0 = binary(f, "core.add", entry->args[1], entry->args[1]);
  eddy_value_t *inits[2] = {entry->args[0], x0};
  loop_t l = {0};
  assert_null(eddy_ctl_build_while(&f->b, inits, 2, &l.w));
  eddy_ir_op_set_attr(l.w, "parallel_iterations",
                      eddy_ir_int_attr_get(f->ctx, 10, EDDY_DT_I64));
  eddy_block_t *cond = eddy_ctl_while_cond(l.w);
  eddy_block_t *body = eddy_ctl_while_body(l.w);
  assert_int_equal(cond->num_args, 2);
  assert_ptr_equal(body->args[1]->type, f->v4f32);

  eddy_ir_builder_set_end(&f->b, cond);
  l.lt = binary(f, "core.lt", cond->args[0], const_i64(f, 10));
  assert_null(eddy_ctl_build_condition(&f->b, l.lt, &l.cond_term));

  eddy_ir_builder_set_end(&f->b, body);
  l.next_i = binary(f, "core.add", body->args[0], const_i64(f, 1));
  l.next_x = binary(f, "core.mul", body->args[1], body->args[1]);
  eddy_value_t *ys[2] = {l.next_i, l.next_x};
  assert_null(eddy_ctl_build_yield(&f->b, ys, 2, &l.body_term));

  eddy_ir_builder_set_end(&f->b, entry);
  eddy_value_t *r = eddy_ir_op_result(l.w, 1);
  l.ret = build_return(f, &r, 1);
  return l;
}

/// ---- ctl ----

static void test_while_ok(void **state) {
  fixture_t *f = *state;
  loop_t l = build_loop(f);
  expect_ok(f);
  assert_false(eddy_ir_op_has_trait(l.w, EDDY_TRAIT_PURE));
  // Verifying a nested op alone sees what it sees from its enclosing blocks.
  assert_null(eddy_ir_verify_op(l.body_term));
  assert_null(eddy_ir_verify_op(l.w));
}

static void test_while_region_signature(void **state) {
  fixture_t *f = *state;
  loop_t l = build_loop(f);
  eddy_ir_block_add_arg(eddy_ctl_while_cond(l.w), f->i64);
  expect_error(f, "cond region has 3 block arguments, expected 2");
}

static void test_while_arg_type(void **state) {
  fixture_t *f = *state;
  loop_t l = build_loop(f);
  eddy_ir_value_set_type(eddy_ctl_while_body(l.w)->args[1], f->vdynf32);
  expect_error(f, "body region argument #1 has type tensor<?xf32>, expected "
                  "the result type tensor<4xf32>");
}

static void test_while_yield_count(void **state) {
  fixture_t *f = *state;
  loop_t l = build_loop(f);
  eddy_ir_op_set_operands(l.body_term, &l.next_i, 1);
  expect_error(f, "'ctl.while' op body region yields 1 value, expected 2");
}

static void test_while_yield_type(void **state) {
  fixture_t *f = *state;
  loop_t l = build_loop(f);
  eddy_value_t *ys[2] = {l.next_i, l.next_i};
  eddy_ir_op_set_operands(l.body_term, ys, 2);
  expect_error(f, "body region yields value #1 of type tensor<i64>, "
                  "incompatible with result type tensor<4xf32>");
}

static void test_while_init_type(void **state) {
  fixture_t *f = *state;
  loop_t l = build_loop(f);
  eddy_ir_op_set_operand(l.w, 1, eddy_ir_func_entry(f->func)->args[0]);
  expect_error(f, "init value #1 has type tensor<i64>, incompatible with "
                  "result type tensor<4xf32>");
}

static void test_while_condition_not_i1(void **state) {
  fixture_t *f = *state;
  loop_t l = build_loop(f);
  eddy_ir_op_set_operand(l.cond_term, 0, eddy_ctl_while_cond(l.w)->args[0]);
  expect_error(f, "'ctl.condition' op operand must be tensor<i1>, found "
                  "tensor<i64>");
}

static void test_while_wrong_terminator(void **state) {
  fixture_t *f = *state;
  loop_t l = build_loop(f);
  eddy_ir_op_erase(l.cond_term);
  eddy_ir_builder_set_end(&f->b, eddy_ctl_while_cond(l.w));
  eddy_value_t *args[2] = {eddy_ctl_while_cond(l.w)->args[0],
                           eddy_ctl_while_cond(l.w)->args[1]};
  assert_null(eddy_ctl_build_yield(&f->b, args, 2, NULL));
  expect_error(f, "cond region must end with 'ctl.condition', found "
                  "'ctl.yield'");
}

static void test_while_attrs(void **state) {
  fixture_t *f = *state;
  loop_t l = build_loop(f);
  eddy_ir_op_set_attr(l.w, "parallel_iterations",
                      eddy_ir_int_attr_get(f->ctx, 0, EDDY_DT_I64));
  expect_error(f, "parallel_iterations must be positive, found 0");
  eddy_ir_op_set_attr(l.w, "parallel_iterations",
                      eddy_ir_int_attr_get(f->ctx, 4, EDDY_DT_I64));
  eddy_ir_op_set_attr(l.w, "maximum_iterations",
                      eddy_ir_int_attr_get(f->ctx, -1, EDDY_DT_I64));
  expect_error(f, "maximum_iterations must be non-negative, found -1");
  eddy_ir_op_set_attr(l.w, "maximum_iterations",
                      eddy_ir_int_attr_get(f->ctx, 0, EDDY_DT_I64));
  eddy_ir_op_set_attr(l.w, "swap_memory", eddy_ir_bool_attr_get(f->ctx, true));
  expect_ok(f);
}

/// if (p) { yield a + a } else { yield a * a }
static eddy_op_t *build_if(fixture_t *f, eddy_value_t *pred,
                           eddy_op_t **then_term) {
  const eddy_type_t *in[1] = {f->v4f32};
  eddy_block_t *entry = make_func(f, "g", in, 1, &f->v4f32, 1);
  if (!pred)
    pred = const_i1(f, true);
  eddy_op_t *op = NULL;
  assert_null(eddy_ctl_build_if(&f->b, pred, &f->v4f32, 1, &op));
  eddy_value_t *a = entry->args[0];
  eddy_ir_builder_set_end(&f->b, eddy_ctl_if_then(op));
  eddy_value_t *t = binary(f, "core.add", a, a);
  assert_null(eddy_ctl_build_yield(&f->b, &t, 1, then_term));
  eddy_ir_builder_set_end(&f->b, eddy_ctl_if_else(op));
  eddy_value_t *e = binary(f, "core.mul", a, a);
  assert_null(eddy_ctl_build_yield(&f->b, &e, 1, NULL));
  eddy_ir_builder_set_end(&f->b, entry);
  eddy_value_t *r = eddy_ir_op_result(op, 0);
  build_return(f, &r, 1);
  return op;
}

static void test_if_ok_and_branch_types(void **state) {
  fixture_t *f = *state;
  eddy_op_t *then_term = NULL;
  eddy_op_t *op = build_if(f, NULL, &then_term);
  expect_ok(f);
  eddy_ir_op_set_operand(then_term, 0, op->operands[0].value);
  expect_error(f, "then region yields value #0 of type tensor<i1>, "
                  "incompatible with result type tensor<4xf32>");
}

static void test_if_pred_type(void **state) {
  fixture_t *f = *state;
  eddy_op_t *then_term = NULL;
  eddy_op_t *op = build_if(f, NULL, &then_term);
  eddy_ir_op_set_operand(op, 0, eddy_ir_func_entry(f->func)->args[0]);
  expect_error(f, "predicate must be tensor<i1>, found tensor<4xf32>");
}

static void test_if_block_args(void **state) {
  fixture_t *f = *state;
  eddy_op_t *then_term = NULL;
  eddy_op_t *op = build_if(f, NULL, &then_term);
  eddy_ir_block_add_arg(eddy_ctl_if_else(op), f->i1);
  expect_error(f, "else region must have no block arguments, found 1");
}

static void test_yield_parent(void **state) {
  fixture_t *f = *state;
  make_func(f, "h", NULL, 0, NULL, 0);
  build_op(f, "ctl.yield", NULL, 0, NULL, 0);
  expect_error(f, "'ctl.yield' op must be the terminator of a 'ctl.while' "
                  "body or a 'ctl.if' branch, found it in 'func.func'");
}

static void test_call(void **state) {
  fixture_t *f = *state;
  const eddy_type_t *in[2] = {f->v4f32, f->i64};
  eddy_block_t *e = make_func(f, "callee", in, 2, &f->v4f32, 1);
  build_return(f, &e->args[0], 1);
  eddy_op_t *callee = f->func;

  eddy_block_t *entry = make_func(f, "caller", in, 2, &f->vdynf32, 1);
  eddy_op_t *call = NULL;
  assert_null(eddy_ctl_build_call(&f->b, callee, entry->args, 2, &call));
  assert_ptr_equal(eddy_ctl_call_resolve(call), callee);
  assert_string_equal(eddy_ctl_call_callee(call), "callee");
  eddy_value_t *r = eddy_ir_op_result(call, 0);
  build_return(f, &r, 1);
  expect_ok(f);

  eddy_value_t *swapped[2] = {entry->args[1], entry->args[0]};
  eddy_ir_op_set_operands(call, swapped, 2);
  expect_error(f, "argument #0 has type tensor<i64>, incompatible with "
                  "tensor<4xf32> of @callee");
  eddy_ir_op_set_operands(call, entry->args, 1);
  expect_error(f, "has 1 argument, but @callee takes 2");
  eddy_ir_op_set_operands(call, entry->args, 2);
  eddy_ir_op_set_attr(call, "callee",
                      eddy_ir_symbol_attr_get(f->ctx, "nope", 4));
  expect_error(f, "'ctl.call' op calls @nope, which is not a function of "
                  "the module");
}

/// ---- generic rules ----

static void test_operand_count(void **state) {
  fixture_t *f = *state;
  const eddy_type_t *in[1] = {f->v4f32};
  eddy_block_t *e = make_func(f, "f", in, 1, NULL, 0);
  eddy_value_t *ops[3] = {e->args[0], e->args[0], e->args[0]};
  build_op(f, "core.add", ops, 3, &f->v4f32, 1);
  build_return(f, NULL, 0);
  expect_error(f, "'core.add' op expects 2 operands, found 3");
}

static void test_attrs_generic(void **state) {
  fixture_t *f = *state;
  const eddy_type_t *in[1] = {f->v4f32};
  eddy_block_t *e = make_func(f, "f", in, 1, NULL, 0);
  eddy_value_t *x = e->args[0];
  eddy_value_t *enter = NULL;
  eddy_df_enter_attrs_t ea = {.frame_name = "loop"};
  assert_null(eddy_df_build_enter(&f->b, x, &ea, &enter));
  eddy_op_t *op = enter->def;
  build_return(f, NULL, 0);
  expect_ok(f);
  assert_int_equal(eddy_ir_op_attr_int(op, "parallel_iterations", 0), 10);

  eddy_ir_op_set_attr(op, "tf.device", eddy_ir_bool_attr_get(f->ctx, true));
  expect_ok(f); // discardable
  eddy_ir_op_set_attr(op, "bogus", eddy_ir_bool_attr_get(f->ctx, true));
  expect_error(f, "'df.enter' op has unknown attribute 'bogus'");
  eddy_ir_op_remove_attr(op, "bogus");
  eddy_ir_op_set_attr(op, "is_constant",
                      eddy_ir_int_attr_get(f->ctx, 1, EDDY_DT_I64));
  expect_error(f, "attribute 'is_constant' must be a bool, found an integer");
  eddy_ir_op_set_attr(op, "is_constant", eddy_ir_bool_attr_get(f->ctx, true));
  eddy_ir_op_remove_attr(op, "frame_name");
  expect_error(f, "'df.enter' op requires attribute 'frame_name'");
}

static void test_terminators(void **state) {
  fixture_t *f = *state;
  const eddy_type_t *in[1] = {f->v4f32};
  eddy_block_t *e = make_func(f, "f", in, 1, NULL, 0);
  eddy_op_t *ret = build_return(f, NULL, 0);
  eddy_value_t *x = binary(f, "core.add", e->args[0], e->args[0]);
  (void)x;
  expect_error(f, "'func.return' op is a terminator but is followed by "
                  "'core.add'");
  eddy_ir_op_erase(ret);
  expect_error(f, "'func.func' op block #0 of region #0 must end with a "
                  "terminator, found 'core.add'");
}

static void test_dominance(void **state) {
  fixture_t *f = *state;
  const eddy_type_t *in[1] = {f->v4f32};
  eddy_block_t *e = make_func(f, "f", in, 1, NULL, 0);
  eddy_value_t *a = binary(f, "core.add", e->args[0], e->args[0]);
  eddy_value_t *b = binary(f, "core.mul", a, a);
  build_return(f, NULL, 0);
  expect_ok(f);
  eddy_ir_op_set_operand(a->def, 1, b);
  expect_error(f, "'core.add' op operand #1 does not dominate this use");
}

static void test_region_escape(void **state) {
  fixture_t *f = *state;
  loop_t l = build_loop(f);
  eddy_ir_op_set_operand(l.ret, 0, l.next_x);
  expect_error(f, "'func.return' op operand #0 is defined inside a region "
                  "of 'ctl.while' and is not visible here");
}

static void test_use_after_in_enclosing_block(void **state) {
  fixture_t *f = *state;
  loop_t l = build_loop(f);
  // A value of the function body defined after the loop, used inside it.
  eddy_ir_builder_set_before(&f->b, l.ret);
  eddy_value_t *late = const_i64(f, 3);
  eddy_ir_op_set_operand(l.next_i->def, 1, late);
  expect_error(f, "'core.add' op operand #1 does not dominate this use");
}

static void test_isolation(void **state) {
  fixture_t *f = *state;
  const eddy_type_t *in[1] = {f->v4f32};
  eddy_block_t *outer = make_func(f, "outer", in, 1, NULL, 0);
  eddy_op_t *outer_func = f->func;
  // A func.func nested in another one may not see the outer arguments.
  eddy_op_t *inner = NULL;
  assert_null(
      eddy_ir_func_create(f->m, "inner", NULL, 0, &f->v4f32, 1, NULL, &inner));
  eddy_ir_op_remove(inner);
  eddy_ir_op_append(inner, outer);
  eddy_ir_builder_set_end(&f->b, eddy_ir_func_entry(inner));
  build_return(f, &outer->args[0], 1);
  eddy_ir_builder_set_end(&f->b, outer);
  build_return(f, NULL, 0);
  (void)outer_func;
  expect_error(f, "'func.return' op operand #0 uses a value defined outside "
                  "the isolated 'func.func' that encloses it");
}

static void test_shape_function_mismatch(void **state) {
  fixture_t *f = *state;
  const eddy_type_t *in[1] = {f->v4f32};
  eddy_block_t *e = make_func(f, "f", in, 1, NULL, 0);
  eddy_value_t *ops[2] = {e->args[0], e->args[0]};
  int64_t five = 5;
  const eddy_type_t *v5 =
      eddy_ir_tensor_type_get(f->ctx, EDDY_DT_F32, 1, &five);
  build_op(f, "core.add", ops, 2, &v5, 1);
  build_return(f, NULL, 0);
  expect_error(f, "'core.add' op result #0 has type tensor<5xf32>, "
                  "incompatible with the inferred type tensor<4xf32>");
}

static void test_single_block(void **state) {
  fixture_t *f = *state;
  loop_t l = build_loop(f);
  eddy_ir_region_add_block(&l.w->regions[1]);
  expect_error(f, "'ctl.while' op region #1 must have exactly one block, "
                  "found 2");
}

/// Unknown ops of a dialect that allows them get no checks of their own
/// (counts, attributes, terminators of their regions), but dominance still
/// holds for their operands.
static const eddy_dialect_t permissive_dialect = {
    .name = "tst",
    .allow_unknown_ops = true,
};

static void test_permissive(void **state) {
  fixture_t *f = *state;
  eddy_ir_ctx_register_dialect(f->ctx, &permissive_dialect);
  const eddy_type_t *in[1] = {f->v4f32};
  eddy_block_t *e = make_func(f, "f", in, 1, NULL, 0);
  eddy_named_attr_t a = eddy_ir_named_attr(f->ctx, "whatever",
                                           eddy_ir_bool_attr_get(f->ctx, true));
  eddy_value_t *ops[3] = {e->args[0], e->args[0], e->args[0]};
  eddy_op_state_t st = {.name = "tst.thing",
                        .operands = ops,
                        .num_operands = 3,
                        .attrs = &a,
                        .num_attrs = 1,
                        .result_types = &f->f32,
                        .num_results = 1,
                        .num_regions = 1};
  eddy_op_t *op = NULL;
  assert_null(eddy_ir_build(&f->b, &st, &op));
  eddy_block_t *inner = eddy_ir_region_add_block(&op->regions[0]);
  eddy_ir_builder_set_end(&f->b, inner);
  eddy_value_t *x = binary(f, "core.add", e->args[0], e->args[0]);
  eddy_ir_builder_set_end(&f->b, e);
  build_return(f, NULL, 0);
  expect_ok(f);
  eddy_ir_op_set_operand(op, 1, x);
  expect_error(f, "'tst.thing' op operand #1 is defined inside a region of "
                  "'tst.thing' and is not visible here");
}

/// ---- tl ----

static void test_tl(void **state) {
  fixture_t *f = *state;
  int64_t dims[2] = {3, 4};
  const eddy_type_t *m34 =
      eddy_ir_tensor_type_get(f->ctx, EDDY_DT_F32, 2, dims);
  const eddy_type_t *in[2] = {m34, f->v4f32};
  eddy_block_t *e = make_func(f, "f", in, 2, NULL, 0);
  eddy_value_t *l0 = NULL;
  assert_null(eddy_ir_build_simple(&f->b, "tl.from_tensor", &e->args[0], 1,
                                   NULL, 0, &l0));
  assert_int_equal(l0->type->kind, EDDY_TYPE_LIST);
  assert_ptr_equal(l0->type->elem, f->v4f32);
  eddy_value_t *l1 = binary(f, "tl.push_back", l0, e->args[1]);
  assert_ptr_equal(l1->type, l0->type);
  eddy_value_t *st = NULL;
  assert_null(eddy_ir_build_simple(&f->b, "tl.stack", &l1, 1, NULL, 0, &st));
  assert_int_equal(st->type->rank, 2);
  assert_int_equal(st->type->dims[0], EDDY_DIM_DYNAMIC);
  assert_int_equal(st->type->dims[1], 4);
  eddy_value_t *len = NULL;
  assert_null(eddy_ir_build_simple(&f->b, "tl.length", &l1, 1, NULL, 0, &len));
  assert_ptr_equal(len->type, f->i64);
  eddy_value_t *item = binary(f, "tl.get_item", l1, len);
  assert_ptr_equal(item->type, f->v4f32);
  eddy_value_t *pop_in[1] = {l1};
  eddy_op_state_t ps = {
      .name = "tl.pop_back", .operands = pop_in, .num_operands = 1};
  eddy_op_t *pop = NULL;
  assert_null(eddy_ir_build(&f->b, &ps, &pop));
  assert_int_equal(pop->num_results, 2);
  assert_ptr_equal(pop->results[1].type, f->v4f32);
  eddy_value_t *set_in[3] = {l1, len, item};
  eddy_op_t *set = build_op(f, "tl.set_item", set_in, 3, &l1->type, 1);
  const eddy_type_t *lt = eddy_ir_list_type_get(f->ctx, f->vdynf32);
  eddy_op_t *empty = build_op(f, "tl.empty", NULL, 0, &lt, 1);
  eddy_op_t *res = build_op(f, "tl.reserve", &len, 1, &lt, 1);
  build_return(f, NULL, 0);
  expect_ok(f);
  assert_true(eddy_ir_op_has_trait(set, EDDY_TRAIT_PURE));

  eddy_ir_op_set_operand(set, 2, len);
  expect_error(f, "'tl.set_item' op element has type tensor<i64>, "
                  "incompatible with the list's element type tensor<4xf32>");
  eddy_ir_op_set_operand(set, 2, item);
  eddy_ir_op_set_operand(set, 1, item);
  expect_error(f, "index must be a scalar integer tensor, found "
                  "tensor<4xf32>");
  eddy_ir_op_set_operand(set, 1, len);
  eddy_ir_op_set_attr(empty, "max_elements",
                      eddy_ir_int_attr_get(f->ctx, -2, EDDY_DT_I64));
  expect_error(f, "max_elements must be non-negative");
  eddy_ir_op_remove_attr(empty, "max_elements");
  eddy_ir_op_set_operand(res, 0, item);
  expect_error(f, "'tl.reserve' op size must be a scalar integer tensor");
  eddy_ir_op_set_operand(res, 0, len);
  eddy_ir_op_set_operand(pop, 0, item);
  expect_error(f, "'tl.pop_back' op operand #0 must be a !tl.list, found "
                  "tensor<4xf32>");
}

/// ---- df ----

/// The dataflow form of `while (i < n) i = i + 1` in one block:
///   enter, merge(enter, next), lt, loop_cond, switch, add, next, exit.
typedef struct dfloop {
  eddy_op_t *merge, *next, *add;
  eddy_value_t *enter;
} dfloop_t;

static dfloop_t build_df_loop(fixture_t *f) {
  const eddy_type_t *in[2] = {f->i64, f->i64};
  eddy_block_t *e = make_func(f, "f", in, 2, &f->i64, 1);
  dfloop_t d = {0};
  eddy_df_enter_attrs_t ea = {.frame_name = "while", .parallel_iterations = 4};
  assert_null(eddy_df_build_enter(&f->b, e->args[0], &ea, &d.enter));
  ea.is_constant = true;
  eddy_value_t *n = NULL;
  assert_null(eddy_df_build_enter(&f->b, e->args[1], &ea, &n));
  // The back edge does not exist yet: start with the enter twice.
  eddy_value_t *ins[2] = {d.enter, d.enter};
  assert_null(eddy_df_build_merge(&f->b, ins, 2, &d.merge));
  assert_ptr_equal(d.merge->results[1].type, f->i32);
  eddy_value_t *m = eddy_ir_op_result(d.merge, 0);
  eddy_value_t *lt = binary(f, "core.lt", m, n);
  eddy_value_t *pred = NULL;
  assert_null(
      eddy_ir_build_simple(&f->b, "df.loop_cond", &lt, 1, NULL, 0, &pred));
  eddy_value_t *sw_in[2] = {m, pred};
  eddy_op_state_t ss = {
      .name = "df.switch", .operands = sw_in, .num_operands = 2};
  eddy_op_t *sw = NULL;
  assert_null(eddy_ir_build(&f->b, &ss, &sw));
  eddy_value_t *one = const_i64(f, 1);
  eddy_value_t *sum = binary(f, "core.add", eddy_ir_op_result(sw, 1), one);
  d.add = sum->def;
  eddy_value_t *next = NULL;
  assert_null(eddy_ir_build_simple(&f->b, "df.next_iteration", &sum, 1, NULL, 0,
                                   &next));
  d.next = next->def;
  eddy_ir_op_set_operand(d.merge, 1, next);
  eddy_value_t *out = NULL;
  eddy_value_t *f_out = eddy_ir_op_result(sw, 0);
  assert_null(eddy_ir_build_simple(&f->b, "df.exit", &f_out, 1, NULL, 0, &out));
  // A control edge: the result waits for a token made from the add.
  eddy_value_t *tok = NULL;
  assert_null(
      eddy_ir_build_simple(&f->b, "df.control", &sum, 1, NULL, 0, &tok));
  assert_int_equal(tok->type->kind, EDDY_TYPE_TOKEN);
  eddy_value_t *after_in[2] = {out, tok};
  eddy_value_t *after = NULL;
  assert_null(
      eddy_ir_build_simple(&f->b, "df.after", after_in, 2, NULL, 0, &after));
  build_return(f, &after, 1);
  return d;
}

static void test_df_loop_ok(void **state) {
  fixture_t *f = *state;
  dfloop_t d = build_df_loop(f);
  expect_ok(f);
  assert_false(eddy_ir_op_has_trait(d.merge, EDDY_TRAIT_PURE));
  assert_true(eddy_ir_op_has_trait(d.merge, EDDY_TRAIT_BACKEDGE));
}

static void test_df_illegal_cycle(void **state) {
  fixture_t *f = *state;
  dfloop_t d = build_df_loop(f);
  eddy_ir_op_set_operand(d.merge, 1, eddy_ir_op_result(d.add, 0));
  expect_error(f, "'df.merge' op input #1 is defined after this op by "
                  "'core.add'; only a 'df.next_iteration' result may flow "
                  "back to a 'df.merge'");
  eddy_ir_op_set_operand(d.merge, 1, eddy_ir_op_result(d.merge, 0));
  expect_error(f, "'df.merge' op input #1 is this op's own result");
  // Any other op using a later value is a plain dominance error.
  eddy_ir_op_set_operand(d.merge, 1, eddy_ir_op_result(d.next, 0));
  eddy_ir_op_set_operand(d.add, 1, eddy_ir_op_result(d.next, 0));
  expect_error(f, "'core.add' op operand #1 does not dominate this use");
}

static void test_df_checks(void **state) {
  fixture_t *f = *state;
  dfloop_t d = build_df_loop(f);
  eddy_ir_op_set_attr(d.enter->def, "frame_name",
                      eddy_ir_string_attr_get(f->ctx, "", 0));
  expect_error(f, "'df.enter' op frame_name must not be empty");
  eddy_ir_op_set_attr(d.enter->def, "frame_name",
                      eddy_ir_string_attr_get(f->ctx, "w", 1));
  eddy_ir_op_set_attr(d.enter->def, "parallel_iterations",
                      eddy_ir_int_attr_get(f->ctx, 0, EDDY_DT_I64));
  expect_error(f, "'df.enter' op parallel_iterations must be positive");
  eddy_ir_op_remove_attr(d.enter->def, "parallel_iterations");
  expect_ok(f);
  // A merge of an i64 with an i1 input.
  eddy_ir_builder_set_before(&f->b, d.merge);
  eddy_value_t *c1 = const_i1(f, false);
  eddy_ir_op_set_operand(d.merge, 0, c1);
  expect_error(f, "'df.merge' op input #0 has type tensor<i1>, incompatible "
                  "with the output type tensor<i64>");
}

static void test_df_switch_after(void **state) {
  fixture_t *f = *state;
  const eddy_type_t *in[2] = {f->v4f32, f->i64};
  eddy_block_t *e = make_func(f, "f", in, 2, NULL, 0);
  eddy_value_t *ops[2] = {e->args[0], e->args[1]};
  const eddy_type_t *two[2] = {f->v4f32, f->v4f32};
  build_op(f, "df.switch", ops, 2, two, 2);
  build_return(f, NULL, 0);
  expect_error(f, "'df.switch' op predicate (operand #1) must be tensor<i1>, "
                  "found tensor<i64>");
  eddy_ir_op_erase(e->last);
  eddy_ir_op_erase(e->last);
  build_op(f, "df.after", ops, 2, &f->v4f32, 1);
  build_return(f, NULL, 0);
  expect_error(f, "'df.after' op operand #1 must be a !df.token, found "
                  "tensor<i64>");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_while_ok, setup, teardown),
      cmocka_unit_test_setup_teardown(test_while_region_signature, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_while_arg_type, setup, teardown),
      cmocka_unit_test_setup_teardown(test_while_yield_count, setup, teardown),
      cmocka_unit_test_setup_teardown(test_while_yield_type, setup, teardown),
      cmocka_unit_test_setup_teardown(test_while_init_type, setup, teardown),
      cmocka_unit_test_setup_teardown(test_while_condition_not_i1, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_while_wrong_terminator, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_while_attrs, setup, teardown),
      cmocka_unit_test_setup_teardown(test_if_ok_and_branch_types, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_if_pred_type, setup, teardown),
      cmocka_unit_test_setup_teardown(test_if_block_args, setup, teardown),
      cmocka_unit_test_setup_teardown(test_yield_parent, setup, teardown),
      cmocka_unit_test_setup_teardown(test_call, setup, teardown),
      cmocka_unit_test_setup_teardown(test_operand_count, setup, teardown),
      cmocka_unit_test_setup_teardown(test_attrs_generic, setup, teardown),
      cmocka_unit_test_setup_teardown(test_terminators, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dominance, setup, teardown),
      cmocka_unit_test_setup_teardown(test_region_escape, setup, teardown),
      cmocka_unit_test_setup_teardown(test_use_after_in_enclosing_block, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_isolation, setup, teardown),
      cmocka_unit_test_setup_teardown(test_shape_function_mismatch, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_single_block, setup, teardown),
      cmocka_unit_test_setup_teardown(test_permissive, setup, teardown),
      cmocka_unit_test_setup_teardown(test_tl, setup, teardown),
      cmocka_unit_test_setup_teardown(test_df_loop_ok, setup, teardown),
      cmocka_unit_test_setup_teardown(test_df_illegal_cycle, setup, teardown),
      cmocka_unit_test_setup_teardown(test_df_checks, setup, teardown),
      cmocka_unit_test_setup_teardown(test_df_switch_after, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

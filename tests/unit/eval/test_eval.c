/// Unit tests of the reference evaluator: programs built with the IR API
/// (loops, lists, conditionals, calls) run on runtime tensors, and every
/// kind of error it reports.
#include "dialects/ctl/ctl.h"
#include "dialects/dialects.h"
#include "dialects/tl/tl.h"
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
  eddy_op_t *func;
  eddy_builder_t b;
  eddy_rt_ctx_t *rt;
  const eddy_type_t *i64, *i1, *f32, *v2f32, *vdynf32, *m2dynf32;
  eddy_eval_value_t args[4];
  eddy_eval_value_t res[4];
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
  f->i1 = eddy_ir_scalar_type_get(f->ctx, EDDY_DT_I1);
  f->f32 = eddy_ir_scalar_type_get(f->ctx, EDDY_DT_F32);
  int64_t two = 2, dyn = EDDY_DIM_DYNAMIC, m2[2] = {EDDY_DIM_DYNAMIC, 2};
  f->v2f32 = eddy_ir_tensor_type_get(f->ctx, EDDY_DT_F32, 1, &two);
  f->vdynf32 = eddy_ir_tensor_type_get(f->ctx, EDDY_DT_F32, 1, &dyn);
  f->m2dynf32 = eddy_ir_tensor_type_get(f->ctx, EDDY_DT_F32, 2, m2);
  eddy_ir_builder_init(&f->b, f->ctx);
  assert_null(eddy_rt_ctx_create(NULL, &f->rt));
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture_t *f = *state;
  for (size_t i = 0; i < 4; i++) {
    eddy_eval_value_release(&f->args[i]);
    eddy_eval_value_release(&f->res[i]);
  }
  // Every tensor and list was released: nothing is left allocated.
  assert_int_equal(eddy_rt_ctx_bytes_in_use(f->rt), 0);
  eddy_rt_ctx_destroy(f->rt);
  eddy_ir_module_destroy(f->m);
  eddy_ir_ctx_destroy(f->ctx);
  free(f);
  return 0;
}

/// ---- Building ---------------------------------------------------------------

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

static eddy_value_t *const_f32(fixture_t *f, double v) {
  const eddy_attr_t *a = eddy_ir_dense_attr_from_f64(f->ctx, f->f32, &v, 1);
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

static eddy_value_t *unary_attr(fixture_t *f, const char *name,
                                eddy_value_t *x, const char *attr,
                                const eddy_attr_t *value) {
  eddy_named_attr_t na = eddy_ir_named_attr(f->ctx, attr, value);
  eddy_value_t *out = NULL;
  assert_null(eddy_ir_build_simple(&f->b, name, &x, 1, &na, 1, &out));
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

static void build_return(fixture_t *f, eddy_value_t *const *vals, size_t n) {
  build_op(f, "func.return", vals, n, NULL, 0);
}

/// A ctl.while under construction: begin_while leaves the builder in the
/// cond block, end_cond moves it to the body, end_body after the loop.
static eddy_op_t *begin_while(fixture_t *f, eddy_value_t *const *inits,
                              size_t n) {
  eddy_op_t *op = NULL;
  assert_null(eddy_ctl_build_while(&f->b, inits, n, &op));
  eddy_ir_builder_set_end(&f->b, eddy_ctl_while_cond(op));
  return op;
}

static void end_cond(fixture_t *f, eddy_op_t *loop, eddy_value_t *pred) {
  assert_null(eddy_ctl_build_condition(&f->b, pred, NULL));
  eddy_ir_builder_set_end(&f->b, eddy_ctl_while_body(loop));
}

static void end_body(fixture_t *f, eddy_op_t *loop, eddy_value_t *const *next,
                     size_t n) {
  assert_null(eddy_ctl_build_yield(&f->b, next, n, NULL));
  eddy_ir_builder_set_after(&f->b, loop);
}

static eddy_value_t *cond_arg(eddy_op_t *loop, size_t i) {
  return eddy_ctl_while_cond(loop)->args[i];
}

static eddy_value_t *body_arg(eddy_op_t *loop, size_t i) {
  return eddy_ctl_while_body(loop)->args[i];
}

/// The loop `while (i < n) { i += 1; acc = acc * 2 }` with i from 0 and acc
/// from 1.0; n is a value defined above (captured by the cond region).
static eddy_op_t *counting_loop(fixture_t *f, eddy_value_t *n) {
  eddy_value_t *inits[2] = {const_i64(f, 0), const_f32(f, 1.0)};
  eddy_op_t *loop = begin_while(f, inits, 2);
  end_cond(f, loop, binary(f, "core.lt", cond_arg(loop, 0), n));
  eddy_value_t *next[2] = {
      binary(f, "core.add", body_arg(loop, 0), const_i64(f, 1)),
      binary(f, "core.mul", body_arg(loop, 1), const_f32(f, 2.0)),
  };
  end_body(f, loop, next, 2);
  return loop;
}

/// ---- Running ------------------------------------------------------------------

static eddy_eval_value_t scalar(fixture_t *f, eddy_dtype_t dt,
                                const char *text) {
  eddy_eval_value_t v;
  assert_null(eddy_eval_scalar_from_text(f->rt, dt, text, &v));
  return v;
}

/// Verifies the module and runs f->func on f->args[0..nargs) into f->res.
static eddy_status_t run_with(fixture_t *f, size_t nargs,
                              const eddy_eval_opts_t *opts) {
  eddy_status_t vst = eddy_ir_verify_module(f->m);
  if (vst)
    fail_msg("test program does not verify: %s", eddy_status_message(vst));
  size_t nres = eddy_ir_func_type(f->func)->num_outputs;
  return eddy_eval_func(f->rt, f->func, opts, f->args, nargs, f->res, nres);
}

static void run_ok(fixture_t *f, size_t nargs) {
  eddy_status_t st = run_with(f, nargs, NULL);
  if (st)
    fail_msg("evaluation failed: %s %s", eddy_status_message(st),
             eddy_status_notes(st));
}

static int64_t res_i64(const fixture_t *f, size_t i) {
  assert_int_equal(f->res[i].kind, EDDY_EVAL_TENSOR);
  assert_int_equal(eddy_rt_tensor_numel(&f->res[i].tensor), 1);
  return eddy_rt_tensor_get_i64(&f->res[i].tensor, 0);
}

static double res_f64(const fixture_t *f, size_t i, int64_t k) {
  assert_int_equal(f->res[i].kind, EDDY_EVAL_TENSOR);
  return eddy_rt_tensor_get_f64(&f->res[i].tensor, k);
}

/// Asserts an error with code `code` whose message contains `want` (and
/// whose notes contain `note` when not NULL); destroys it.
static void expect_error(eddy_status_t st, eddy_status_code_t code,
                         const char *want, const char *note) {
  if (!st)
    fail_msg("expected an error containing \"%s\", got success", want);
  const char *msg = eddy_status_message(st);
  if (!strstr(msg, want))
    fail_msg("expected an error containing \"%s\", got \"%s\"", want, msg);
  if (note && !strstr(eddy_status_notes(st), note))
    fail_msg("expected a note containing \"%s\", got \"%s\"", note,
             eddy_status_notes(st));
  assert_int_equal(eddy_status_code(st), code);
  eddy_status_destroy(st);
}

/// ---- Loops ------------------------------------------------------------------------

static void test_counting_loop(void **state) {
  fixture_t *f = *state;
  const eddy_type_t *in[1] = {f->i64}, *out[2] = {f->i64, f->f32};
  eddy_block_t *entry = make_func(f, "count", in, 1, out, 2);
  eddy_op_t *loop = counting_loop(f, entry->args[0]);
  eddy_value_t *r[2] = {eddy_ir_op_result(loop, 0), eddy_ir_op_result(loop, 1)};
  build_return(f, r, 2);
  f->args[0] = scalar(f, EDDY_DT_I64, "5");
  run_ok(f, 1);
  assert_int_equal(res_i64(f, 0), 5);
  assert_true(res_f64(f, 1, 0) == 32.0);
}

static void test_zero_iteration_loop(void **state) {
  fixture_t *f = *state;
  const eddy_type_t *in[1] = {f->i64}, *out[2] = {f->i64, f->f32};
  eddy_block_t *entry = make_func(f, "count", in, 1, out, 2);
  eddy_op_t *loop = counting_loop(f, entry->args[0]);
  eddy_value_t *r[2] = {eddy_ir_op_result(loop, 0), eddy_ir_op_result(loop, 1)};
  build_return(f, r, 2);
  const char *const ns[2] = {"0", "-3"};
  for (size_t k = 0; k < 2; k++) {
    f->args[0] = scalar(f, EDDY_DT_I64, ns[k]);
    run_ok(f, 1);
    // The body never ran: the inits come back.
    assert_int_equal(res_i64(f, 0), 0);
    assert_true(res_f64(f, 1, 0) == 1.0);
    for (size_t i = 0; i < 2; i++)
      eddy_eval_value_release(&f->res[i]);
    eddy_eval_value_release(&f->args[0]);
  }
}

/// while (i < n) { l = push_back(l, broadcast_to(cast(i), [2])) }; stack(l).
static void build_list_loop(fixture_t *f, eddy_value_t *n) {
  const eddy_type_t *lt = eddy_ir_list_type_get(f->ctx, f->v2f32);
  eddy_op_t *empty = build_op(f, "tl.empty", NULL, 0, &lt, 1);
  eddy_value_t *inits[2] = {const_i64(f, 0), eddy_ir_op_result(empty, 0)};
  eddy_op_t *loop = begin_while(f, inits, 2);
  end_cond(f, loop, binary(f, "core.lt", cond_arg(loop, 0), n));
  eddy_value_t *fi =
      unary_attr(f, "core.cast", body_arg(loop, 0), "dtype",
                 eddy_ir_string_attr_get(f->ctx, "f32", 3));
  int64_t shape[1] = {2};
  eddy_value_t *x = unary_attr(f, "core.broadcast_to", fi, "shape",
                               eddy_ir_i64_array_attr_get(f->ctx, shape, 1));
  eddy_value_t *next[2] = {
      binary(f, "core.add", body_arg(loop, 0), const_i64(f, 1)),
      binary(f, "tl.push_back", body_arg(loop, 1), x),
  };
  end_body(f, loop, next, 2);
  eddy_value_t *l = eddy_ir_op_result(loop, 1);
  eddy_value_t *stacked = NULL;
  assert_null(eddy_ir_build_simple(&f->b, "tl.stack", &l, 1, NULL, 0,
                                   &stacked));
  build_return(f, &stacked, 1);
}

static void test_list_loop_stack(void **state) {
  fixture_t *f = *state;
  const eddy_type_t *in[1] = {f->i64}, *out[1] = {f->m2dynf32};
  eddy_block_t *entry = make_func(f, "stack", in, 1, out, 1);
  build_list_loop(f, entry->args[0]);
  f->args[0] = scalar(f, EDDY_DT_I64, "3");
  run_ok(f, 1);
  const eddy_rt_tensor_t *t = &f->res[0].tensor;
  assert_int_equal(t->rank, 2);
  assert_int_equal(t->dims[0], 3);
  assert_int_equal(t->dims[1], 2);
  const double want[6] = {0, 0, 1, 1, 2, 2};
  for (int64_t k = 0; k < 6; k++)
    assert_true(res_f64(f, 0, k) == want[k]);
}

static void test_list_loop_empty_stack(void **state) {
  fixture_t *f = *state;
  const eddy_type_t *in[1] = {f->i64}, *out[1] = {f->m2dynf32};
  eddy_block_t *entry = make_func(f, "stack", in, 1, out, 1);
  build_list_loop(f, entry->args[0]);
  f->args[0] = scalar(f, EDDY_DT_I64, "0");
  run_ok(f, 1);
  // The element shape is known, so an empty list stacks to [0, 2].
  const eddy_rt_tensor_t *t = &f->res[0].tensor;
  assert_int_equal(t->rank, 2);
  assert_int_equal(t->dims[0], 0);
  assert_int_equal(t->dims[1], 2);
}

static void test_list_loop_long(void **state) {
  // 20000 pushes. The evaluator hands the list to push_back when it is the
  // value's last use, so the list grows in place; copying it at every push
  // makes this test take seconds instead of milliseconds.
  fixture_t *f = *state;
  const eddy_type_t *in[1] = {f->i64}, *out[1] = {f->m2dynf32};
  eddy_block_t *entry = make_func(f, "stack", in, 1, out, 1);
  build_list_loop(f, entry->args[0]);
  f->args[0] = scalar(f, EDDY_DT_I64, "20000");
  run_ok(f, 1);
  assert_int_equal(f->res[0].tensor.dims[0], 20000);
  assert_true(res_f64(f, 0, 2 * 19999 + 1) == 19999.0);
}

/// A list argument is a value: pushing onto it inside the function leaves
/// the caller's list as it was.
static void test_list_argument_unchanged(void **state) {
  fixture_t *f = *state;
  const eddy_type_t *lt = eddy_ir_list_type_get(f->ctx, f->v2f32);
  const eddy_type_t *in[2] = {lt, f->v2f32}, *out[2] = {f->i64, f->i64};
  eddy_block_t *entry = make_func(f, "push", in, 2, out, 2);
  eddy_value_t *l2 = binary(f, "tl.push_back", entry->args[0], entry->args[1]);
  eddy_value_t *len2 = NULL, *len1 = NULL;
  assert_null(eddy_ir_build_simple(&f->b, "tl.length", &l2, 1, NULL, 0, &len2));
  assert_null(eddy_ir_build_simple(&f->b, "tl.length", &entry->args[0], 1,
                                   NULL, 0, &len1));
  eddy_value_t *r[2] = {len2, len1};
  build_return(f, r, 2);

  int64_t two = 2;
  eddy_rt_elem_shape_t es;
  assert_true(eddy_rt_elem_shape_make(1, &two, &es));
  eddy_rt_list_t *l = NULL;
  assert_null(eddy_rt_list_empty(f->rt, EDDY_RT_F32, &es, -1, &l));
  eddy_rt_tensor_t x = eddy_rt_tensor_empty();
  assert_null(eddy_rt_tensor_create(f->rt, EDDY_RT_F32, 1, &two, "test", &x));
  f->args[0] = eddy_eval_value_from_list(l);
  f->args[1] = eddy_eval_value_from_tensor(&x);
  run_ok(f, 2);
  assert_int_equal(res_i64(f, 0), 1);
  assert_int_equal(res_i64(f, 1), 0);
  assert_int_equal(eddy_rt_list_size(f->args[0].list), 0);
}

static void test_nested_loops(void **state) {
  // for i < 3: for j < 4: c += 1  => c == 12, i == 3
  fixture_t *f = *state;
  const eddy_type_t *out[2] = {f->i64, f->i64};
  make_func(f, "nested", NULL, 0, out, 2);
  eddy_value_t *three = const_i64(f, 3), *four = const_i64(f, 4);
  eddy_value_t *inits[2] = {const_i64(f, 0), const_i64(f, 0)};
  eddy_op_t *outer = begin_while(f, inits, 2);
  end_cond(f, outer, binary(f, "core.lt", cond_arg(outer, 0), three));
  eddy_value_t *inner_inits[2] = {const_i64(f, 0), body_arg(outer, 1)};
  eddy_op_t *inner = begin_while(f, inner_inits, 2);
  end_cond(f, inner, binary(f, "core.lt", cond_arg(inner, 0), four));
  eddy_value_t *one = const_i64(f, 1);
  eddy_value_t *inner_next[2] = {
      binary(f, "core.add", body_arg(inner, 0), one),
      binary(f, "core.add", body_arg(inner, 1), one),
  };
  end_body(f, inner, inner_next, 2);
  eddy_value_t *outer_next[2] = {
      binary(f, "core.add", body_arg(outer, 0), const_i64(f, 1)),
      eddy_ir_op_result(inner, 1),
  };
  end_body(f, outer, outer_next, 2);
  eddy_value_t *r[2] = {eddy_ir_op_result(outer, 0),
                        eddy_ir_op_result(outer, 1)};
  build_return(f, r, 2);
  run_ok(f, 0);
  assert_int_equal(res_i64(f, 0), 3);
  assert_int_equal(res_i64(f, 1), 12);
}

static void test_if_inside_while(void **state) {
  // for i < 6: acc += (i < 3) ? 1 : 10  => 3 * 1 + 3 * 10 = 33
  fixture_t *f = *state;
  const eddy_type_t *out[1] = {f->i64};
  make_func(f, "ifloop", NULL, 0, out, 1);
  eddy_value_t *inits[2] = {const_i64(f, 0), const_i64(f, 0)};
  eddy_op_t *loop = begin_while(f, inits, 2);
  end_cond(f, loop, binary(f, "core.lt", cond_arg(loop, 0), const_i64(f, 6)));
  eddy_value_t *p =
      binary(f, "core.lt", body_arg(loop, 0), const_i64(f, 3));
  eddy_op_t *branch = NULL;
  assert_null(eddy_ctl_build_if(&f->b, p, &f->i64, 1, &branch));
  eddy_ir_builder_set_end(&f->b, eddy_ctl_if_then(branch));
  eddy_value_t *a = binary(f, "core.add", body_arg(loop, 1), const_i64(f, 1));
  assert_null(eddy_ctl_build_yield(&f->b, &a, 1, NULL));
  eddy_ir_builder_set_end(&f->b, eddy_ctl_if_else(branch));
  eddy_value_t *b = binary(f, "core.add", body_arg(loop, 1), const_i64(f, 10));
  assert_null(eddy_ctl_build_yield(&f->b, &b, 1, NULL));
  eddy_ir_builder_set_after(&f->b, branch);
  eddy_value_t *next[2] = {
      binary(f, "core.add", body_arg(loop, 0), const_i64(f, 1)),
      eddy_ir_op_result(branch, 0),
  };
  end_body(f, loop, next, 2);
  eddy_value_t *r = eddy_ir_op_result(loop, 1);
  build_return(f, &r, 1);
  run_ok(f, 0);
  assert_int_equal(res_i64(f, 0), 33);
}

static void test_while_inside_if(void **state) {
  // p ? (count to 7) : 100
  fixture_t *f = *state;
  const eddy_type_t *in[1] = {f->i1}, *out[1] = {f->i64};
  eddy_block_t *entry = make_func(f, "ifwhile", in, 1, out, 1);
  eddy_value_t *seven = const_i64(f, 7);
  eddy_op_t *branch = NULL;
  assert_null(eddy_ctl_build_if(&f->b, entry->args[0], &f->i64, 1, &branch));
  eddy_ir_builder_set_end(&f->b, eddy_ctl_if_then(branch));
  eddy_value_t *zero = const_i64(f, 0);
  eddy_op_t *loop = begin_while(f, &zero, 1);
  end_cond(f, loop, binary(f, "core.lt", cond_arg(loop, 0), seven));
  eddy_value_t *next = binary(f, "core.add", body_arg(loop, 0), const_i64(f, 1));
  end_body(f, loop, &next, 1);
  eddy_value_t *lr = eddy_ir_op_result(loop, 0);
  assert_null(eddy_ctl_build_yield(&f->b, &lr, 1, NULL));
  eddy_ir_builder_set_end(&f->b, eddy_ctl_if_else(branch));
  eddy_value_t *hundred = const_i64(f, 100);
  assert_null(eddy_ctl_build_yield(&f->b, &hundred, 1, NULL));
  eddy_ir_builder_set_after(&f->b, branch);
  eddy_value_t *r = eddy_ir_op_result(branch, 0);
  build_return(f, &r, 1);

  f->args[0] = scalar(f, EDDY_DT_I1, "true");
  run_ok(f, 1);
  assert_int_equal(res_i64(f, 0), 7);
  eddy_eval_value_release(&f->res[0]);
  eddy_eval_value_release(&f->args[0]);
  f->args[0] = scalar(f, EDDY_DT_I1, "false");
  run_ok(f, 1);
  assert_int_equal(res_i64(f, 0), 100);
}

static void test_call(void **state) {
  // @square(x) = x * x; @main(x) = square(square(x)) + 1
  fixture_t *f = *state;
  const eddy_type_t *in[1] = {f->f32}, *out[1] = {f->f32};
  eddy_block_t *sq = make_func(f, "square", in, 1, out, 1);
  eddy_op_t *square = f->func;
  eddy_value_t *p = binary(f, "core.mul", sq->args[0], sq->args[0]);
  build_return(f, &p, 1);
  eddy_block_t *entry = make_func(f, "main", in, 1, out, 1);
  eddy_op_t *c1 = NULL, *c2 = NULL;
  assert_null(eddy_ctl_build_call(&f->b, square, &entry->args[0], 1, &c1));
  eddy_value_t *r1 = eddy_ir_op_result(c1, 0);
  assert_null(eddy_ctl_build_call(&f->b, square, &r1, 1, &c2));
  eddy_value_t *r = binary(f, "core.add", eddy_ir_op_result(c2, 0),
                           const_f32(f, 1.0));
  build_return(f, &r, 1);
  f->args[0] = scalar(f, EDDY_DT_F32, "3");
  run_ok(f, 1);
  assert_true(res_f64(f, 0, 0) == 82.0);
}

static void test_call_depth_limit(void **state) {
  // @rec calls itself forever: the depth limit stops it, naming the chain.
  fixture_t *f = *state;
  const eddy_type_t *in[1] = {f->f32}, *out[1] = {f->f32};
  eddy_block_t *body = make_func(f, "rec", in, 1, out, 1);
  eddy_op_t *rec = f->func;
  eddy_op_t *c = NULL;
  assert_null(eddy_ctl_build_call(&f->b, rec, &body->args[0], 1, &c));
  eddy_value_t *r = eddy_ir_op_result(c, 0);
  build_return(f, &r, 1);
  f->args[0] = scalar(f, EDDY_DT_F32, "1");
  eddy_eval_opts_t o = eddy_eval_opts_default();
  o.max_call_depth = 3;
  expect_error(run_with(f, 1, &o), EDDY_ERR_RESOURCE,
               "call depth limit of 3 reached (--max-call-depth): @rec -> "
               "@rec -> @rec -> @rec -> @rec",
               "in @rec called");
  // Deep chains keep their ends.
  o.max_call_depth = 200;
  expect_error(run_with(f, 1, &o), EDDY_ERR_RESOURCE, "more) ...", NULL);
  // Without a useful depth limit the evaluator still stops before the C
  // stack runs out.
  o.max_call_depth = 1000000;
  // The notes keep the innermost calls only.
  expect_error(run_with(f, 1, &o), EDDY_ERR_RESOURCE,
               "evaluation is nested too deeply",
               "... (outer loops and calls omitted)");
}

static void test_maximum_iterations(void **state) {
  // The condition is always true; maximum_iterations stops the loop after
  // that many body runs without an error (TensorFlow semantics).
  fixture_t *f = *state;
  const eddy_type_t *out[1] = {f->i64};
  make_func(f, "capped", NULL, 0, out, 1);
  eddy_value_t *zero = const_i64(f, 0);
  eddy_op_t *loop = begin_while(f, &zero, 1);
  end_cond(f, loop, const_i1(f, true));
  eddy_value_t *next = binary(f, "core.add", body_arg(loop, 0), const_i64(f, 1));
  end_body(f, loop, &next, 1);
  eddy_value_t *r = eddy_ir_op_result(loop, 0);
  build_return(f, &r, 1);
  const int64_t caps[3] = {4, 0, 1};
  for (size_t k = 0; k < 3; k++) {
    eddy_ir_op_set_attr(loop, "maximum_iterations",
                        eddy_ir_int_attr_get(f->ctx, caps[k], EDDY_DT_I64));
    eddy_eval_opts_t o = eddy_eval_opts_default();
    o.max_iterations = 4; // the cap is not an error even at the limit
    eddy_status_t st = run_with(f, 0, &o);
    assert_null(st);
    assert_int_equal(res_i64(f, 0), caps[k]);
    eddy_eval_value_release(&f->res[0]);
  }
}

static void test_iteration_limit(void **state) {
  fixture_t *f = *state;
  const eddy_type_t *out[1] = {f->i64};
  make_func(f, "endless", NULL, 0, out, 1);
  eddy_value_t *zero = const_i64(f, 0);
  f->b.loc = eddy_ir_loc_file(f->ctx, "endless.eddy", 3, 5);
  eddy_op_t *loop = begin_while(f, &zero, 1);
  f->b.loc = NULL;
  end_cond(f, loop, const_i1(f, true));
  eddy_value_t *next = binary(f, "core.add", body_arg(loop, 0), const_i64(f, 1));
  end_body(f, loop, &next, 1);
  eddy_value_t *r = eddy_ir_op_result(loop, 0);
  build_return(f, &r, 1);
  eddy_eval_opts_t o = eddy_eval_opts_default();
  o.max_iterations = 10;
  eddy_status_t st = run_with(f, 0, &o);
  assert_non_null(st);
  assert_string_equal(eddy_status_location(st), "endless.eddy:3:5");
  expect_error(st, EDDY_ERR_RESOURCE,
               "'ctl.while' op did not finish within 10 iterations", NULL);
  // Exactly at the limit is fine.
  eddy_ir_op_set_attr(loop, "maximum_iterations",
                      eddy_ir_int_attr_get(f->ctx, 10, EDDY_DT_I64));
  assert_null(run_with(f, 0, &o));
  assert_int_equal(res_i64(f, 0), 10);
}

static void test_df_op_error(void **state) {
  fixture_t *f = *state;
  const eddy_type_t *in[1] = {f->f32}, *out[1] = {f->f32};
  eddy_block_t *entry = make_func(f, "dataflow", in, 1, out, 1);
  f->b.loc = eddy_ir_loc_name(f->ctx, "while/Exit_1");
  eddy_op_t *ex = build_op(f, "df.exit", &entry->args[0], 1, &f->f32, 1);
  f->b.loc = NULL;
  eddy_value_t *r = eddy_ir_op_result(ex, 0);
  build_return(f, &r, 1);
  f->args[0] = scalar(f, EDDY_DT_F32, "1");
  // Not verified on purpose: a lone df.exit is not valid dataflow either.
  eddy_status_t st =
      eddy_eval_func(f->rt, f->func, NULL, f->args, 1, f->res, 1);
  assert_non_null(st);
  assert_non_null(strstr(eddy_status_location(st), "while/Exit_1"));
  expect_error(st, EDDY_ERR_UNSUPPORTED,
               "the evaluator runs structured IR; 'df.exit' needs the "
               "dataflow interpreter",
               NULL);
  assert_int_equal(f->res[0].kind, EDDY_EVAL_NONE);
}

static void test_wrong_inputs(void **state) {
  fixture_t *f = *state;
  int64_t dims[2] = {4, EDDY_DIM_DYNAMIC};
  const eddy_type_t *m = eddy_ir_tensor_type_get(f->ctx, EDDY_DT_F32, 2, dims);
  const eddy_type_t *in[2] = {f->i64, m}, *out[1] = {m};
  eddy_block_t *entry = make_func(f, "g", in, 2, out, 1);
  build_return(f, &entry->args[1], 1);

  f->args[0] = scalar(f, EDDY_DT_I64, "1");
  expect_error(run_with(f, 1, NULL), EDDY_ERR_INVALID_ARGUMENT,
               "@g takes 2 arguments, got 1", NULL);

  int64_t bad[2] = {3, 5};
  eddy_rt_tensor_t t = eddy_rt_tensor_empty();
  assert_null(eddy_rt_tensor_create(f->rt, EDDY_RT_F32, 2, bad, "test", &t));
  f->args[1] = eddy_eval_value_from_tensor(&t);
  expect_error(run_with(f, 2, NULL), EDDY_ERR_INVALID_ARGUMENT,
               "@g: argument 1 'arg1': expected tensor<4x?xf32>, got f32[3, 5]",
               NULL);
  eddy_eval_value_release(&f->args[1]);

  int64_t good[2] = {4, 5};
  assert_null(eddy_rt_tensor_create(f->rt, EDDY_RT_F64, 2, good, "test", &t));
  f->args[1] = eddy_eval_value_from_tensor(&t);
  expect_error(run_with(f, 2, NULL), EDDY_ERR_INVALID_ARGUMENT,
               "argument 1 'arg1': expected tensor<4x?xf32>, got f64[4, 5]",
               NULL);
  eddy_eval_value_release(&f->args[1]);

  assert_null(eddy_rt_tensor_create(f->rt, EDDY_RT_F32, 1, good, "test", &t));
  f->args[1] = eddy_eval_value_from_tensor(&t);
  expect_error(run_with(f, 2, NULL), EDDY_ERR_INVALID_ARGUMENT,
               "expected tensor<4x?xf32>, got f32[4]", NULL);
  eddy_eval_value_release(&f->args[1]);

  assert_null(eddy_rt_tensor_create(f->rt, EDDY_RT_F32, 2, good, "test", &t));
  f->args[1] = eddy_eval_value_from_tensor(&t);
  run_ok(f, 2);
  assert_int_equal(f->res[0].tensor.dims[1], 5);
}

/// ---- Errors inside programs -----------------------------------------------------------

static void test_kernel_error_located(void **state) {
  // Reading element i + 1 of a list of i + 1 items fails in iteration 0,
  // at the tl.get_item, with the loop named in a note.
  fixture_t *f = *state;
  const eddy_type_t *lt = eddy_ir_list_type_get(f->ctx, f->f32);
  const eddy_type_t *out[1] = {f->f32};
  make_func(f, "oob", NULL, 0, out, 1);
  f->b.loc = eddy_ir_loc_file(f->ctx, "oob.eddy", 2, 3);
  eddy_op_t *empty = build_op(f, "tl.empty", NULL, 0, &lt, 1);
  eddy_value_t *inits[2] = {const_i64(f, 0), eddy_ir_op_result(empty, 0)};
  f->b.loc = eddy_ir_loc_file(f->ctx, "oob.eddy", 4, 7);
  eddy_op_t *loop = begin_while(f, inits, 2);
  f->b.loc = NULL;
  end_cond(f, loop, binary(f, "core.lt", cond_arg(loop, 0), const_i64(f, 5)));
  eddy_value_t *pushed =
      binary(f, "tl.push_back", body_arg(loop, 1), const_f32(f, 1.0));
  eddy_value_t *i1 = binary(f, "core.add", body_arg(loop, 0), const_i64(f, 1));
  f->b.loc = eddy_ir_loc_file(f->ctx, "oob.eddy", 9, 11);
  eddy_value_t *item = binary(f, "tl.get_item", pushed, i1);
  f->b.loc = NULL;
  (void)item;
  eddy_value_t *next[2] = {i1, pushed};
  end_body(f, loop, next, 2);
  eddy_value_t *r = const_f32(f, 0.0);
  build_return(f, &r, 1);
  eddy_status_t st = run_with(f, 0, NULL);
  assert_non_null(st);
  assert_string_equal(eddy_status_location(st), "oob.eddy:9:11");
  expect_error(st, EDDY_ERR_INVALID_ARGUMENT, "'tl.get_item' op ",
               "in iteration 0 of 'ctl.while' at oob.eddy:4:7");
}

static void test_declared_type_contradicted(void **state) {
  // add of two tensor<?xf32> declared as tensor<2xf32>: given 3 elements,
  // the program's own declaration is wrong (not a bug in eddy).
  fixture_t *f = *state;
  const eddy_type_t *in[1] = {f->vdynf32}, *out[1] = {f->v2f32};
  eddy_block_t *entry = make_func(f, "narrow", in, 1, out, 1);
  eddy_value_t *ops[2] = {entry->args[0], entry->args[0]};
  eddy_op_t *add = build_op(f, "core.add", ops, 2, &f->v2f32, 1);
  eddy_value_t *r = eddy_ir_op_result(add, 0);
  build_return(f, &r, 1);
  int64_t three = 3;
  eddy_rt_tensor_t t = eddy_rt_tensor_empty();
  assert_null(eddy_rt_tensor_create(f->rt, EDDY_RT_F32, 1, &three, "t", &t));
  f->args[0] = eddy_eval_value_from_tensor(&t);
  expect_error(run_with(f, 1, NULL), EDDY_ERR_INVALID_ARGUMENT,
               "'core.add' op result #0 is f32[3] for the operands' run-time "
               "shapes, but the IR declares tensor<2xf32>",
               NULL);
}

static void test_memory_limit(void **state) {
  fixture_t *f = *state;
  const eddy_type_t *out[1] = {f->m2dynf32};
  int64_t dims[2] = {1000, 2};
  const eddy_type_t *big = eddy_ir_tensor_type_get(f->ctx, EDDY_DT_F32, 2, dims);
  make_func(f, "big", NULL, 0, out, 1);
  eddy_named_attr_t na = eddy_ir_named_attr(
      f->ctx, "dimension", eddy_ir_int_attr_get(f->ctx, 0, EDDY_DT_I64));
  eddy_op_state_t st = {.name = "core.iota",
                        .attrs = &na,
                        .num_attrs = 1,
                        .result_types = &big,
                        .num_results = 1};
  eddy_op_t *iota = NULL;
  assert_null(eddy_ir_build(&f->b, &st, &iota));
  eddy_value_t *r = eddy_ir_op_result(iota, 0);
  build_return(f, &r, 1);
  eddy_rt_ctx_set_memory_limit(f->rt, 1024);
  expect_error(run_with(f, 0, NULL), EDDY_ERR_RESOURCE, "'core.iota' op ",
               NULL);
  eddy_rt_ctx_set_memory_limit(f->rt, 0);
  run_ok(f, 0);
  assert_true(res_f64(f, 0, 2 * 999) == 999.0);
}

/// ---- Values ---------------------------------------------------------------------

static void test_scalar_from_text(void **state) {
  fixture_t *f = *state;
  eddy_eval_value_t v;
  assert_null(eddy_eval_scalar_from_text(f->rt, EDDY_DT_I8, "-128", &v));
  assert_int_equal(eddy_rt_tensor_get_i64(&v.tensor, 0), -128);
  assert_int_equal(v.tensor.rank, 0);
  eddy_eval_value_release(&v);
  assert_null(eddy_eval_scalar_from_text(f->rt, EDDY_DT_I32, "0x10", &v));
  assert_int_equal(eddy_rt_tensor_get_i64(&v.tensor, 0), 16);
  eddy_eval_value_release(&v);
  assert_null(eddy_eval_scalar_from_text(f->rt, EDDY_DT_I64, "010", &v));
  assert_int_equal(eddy_rt_tensor_get_i64(&v.tensor, 0), 10);
  eddy_eval_value_release(&v);
  assert_null(eddy_eval_scalar_from_text(f->rt, EDDY_DT_F16, "-1.5", &v));
  assert_true(eddy_rt_tensor_get_f64(&v.tensor, 0) == -1.5);
  eddy_eval_value_release(&v);
  assert_null(eddy_eval_scalar_from_text(f->rt, EDDY_DT_I1, "true", &v));
  assert_int_equal(eddy_rt_tensor_get_i64(&v.tensor, 0), 1);
  eddy_eval_value_release(&v);
  expect_error(eddy_eval_scalar_from_text(f->rt, EDDY_DT_I8, "128", &v),
               EDDY_ERR_INVALID_ARGUMENT, "128 is out of range for i8", NULL);
  expect_error(eddy_eval_scalar_from_text(f->rt, EDDY_DT_I32, "1.5", &v),
               EDDY_ERR_INVALID_ARGUMENT, "'1.5' is not an integer", NULL);
  expect_error(eddy_eval_scalar_from_text(f->rt, EDDY_DT_F32, "1.5x", &v),
               EDDY_ERR_INVALID_ARGUMENT, "'1.5x' is not a number", NULL);
  expect_error(eddy_eval_scalar_from_text(f->rt, EDDY_DT_I1, "yes", &v),
               EDDY_ERR_INVALID_ARGUMENT, "not an i1 value", NULL);
  assert_int_equal(v.kind, EDDY_EVAL_NONE);
}

static void test_preview(void **state) {
  fixture_t *f = *state;
  int64_t n = 5;
  eddy_rt_tensor_t t = eddy_rt_tensor_empty();
  assert_null(eddy_rt_iota(f->rt, EDDY_RT_F32, 1, &n, 0, &t));
  eddy_rt_tensor_set_f64(&t, 1, 0.1);
  eddy_rt_tensor_set_f64(&t, 2, -1e20);
  eddy_eval_value_t v = eddy_eval_value_from_tensor(&t);
  eddy_buf_t b;
  eddy_buf_init(&b);
  eddy_eval_value_describe(&v, &b);
  eddy_buf_puts(&b, " ");
  eddy_eval_value_preview(&v, 4, &b);
  assert_string_equal(b.data, "f32[5] [0.0, 0.1, -1e+20, 3.0, ...]");
  eddy_buf_clear(&b);
  eddy_eval_value_preview(&v, -1, &b);
  assert_string_equal(b.data, "[0.0, 0.1, -1e+20, 3.0, 4.0]");
  eddy_eval_value_release(&v);
  eddy_buf_destroy(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_counting_loop, setup, teardown),
      cmocka_unit_test_setup_teardown(test_zero_iteration_loop, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_list_loop_stack, setup, teardown),
      cmocka_unit_test_setup_teardown(test_list_loop_empty_stack, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_list_loop_long, setup, teardown),
      cmocka_unit_test_setup_teardown(test_list_argument_unchanged, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_nested_loops, setup, teardown),
      cmocka_unit_test_setup_teardown(test_if_inside_while, setup, teardown),
      cmocka_unit_test_setup_teardown(test_while_inside_if, setup, teardown),
      cmocka_unit_test_setup_teardown(test_call, setup, teardown),
      cmocka_unit_test_setup_teardown(test_call_depth_limit, setup, teardown),
      cmocka_unit_test_setup_teardown(test_maximum_iterations, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_iteration_limit, setup, teardown),
      cmocka_unit_test_setup_teardown(test_df_op_error, setup, teardown),
      cmocka_unit_test_setup_teardown(test_wrong_inputs, setup, teardown),
      cmocka_unit_test_setup_teardown(test_kernel_error_located, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_declared_type_contradicted, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_memory_limit, setup, teardown),
      cmocka_unit_test_setup_teardown(test_scalar_from_text, setup, teardown),
      cmocka_unit_test_setup_teardown(test_preview, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/// Unit tests for ops, use lists, blocks, the builder, walks, cloning and
/// the builtin func ops. Uses only builtin ops and a test dialect defined
/// here, so that it does not depend on the real dialects.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "ir/ir.h"

#include <string.h>

/* ---- The test dialect ----------------------------------------------------- */

/// test.src: no operands, one tensor<4xf32> result.
static eddy_status_t src_infer(eddy_infer_ctx_t *ic) {
  int64_t d = 4;
  eddy_ir_infer_push(ic, eddy_ir_tensor_type_get(ic->ctx, EDDY_DT_F32, 1, &d));
  return NULL;
}

/// test.add: both operands must have the same type; the result has it too.
static eddy_status_t add_infer(eddy_infer_ctx_t *ic) {
  if (ic->num_operands != 2)
    return eddy_ir_infer_error(ic, "expects 2 operands, got %zu",
                               ic->num_operands);
  if (ic->operand_types[0] != ic->operand_types[1])
    return eddy_ir_infer_error(ic, "operand types differ");
  eddy_ir_infer_push(ic, ic->operand_types[0]);
  return NULL;
}

/// test.pair: two results whose types come from the `n` attribute.
static eddy_status_t pair_infer(eddy_infer_ctx_t *ic) {
  const eddy_attr_t *n = eddy_ir_infer_attr(ic, "n");
  if (!n)
    return eddy_ir_infer_error(ic, "needs 'n'");
  int64_t d = n->u.i;
  const eddy_type_t *t = eddy_ir_tensor_type_get(ic->ctx, EDDY_DT_I32, 1, &d);
  eddy_ir_infer_push(ic, t);
  eddy_ir_infer_push(ic, t);
  return NULL;
}

static const eddy_attr_spec_t id_attrs[] = {{"id", EDDY_ATTR_INT, true},
                                            {NULL, 0, false}};

static const eddy_op_def_t test_ops[] = {
    {.name = "test.src", .num_operands = 0, .num_results = 1,
     .traits = EDDY_TRAIT_PURE, .attrs = id_attrs, .infer = src_infer},
    {.name = "test.add", .num_operands = 2, .num_results = 1,
     .traits = EDDY_TRAIT_PURE | EDDY_TRAIT_COMMUTATIVE, .attrs = id_attrs,
     .infer = add_infer},
    {.name = "test.pair", .num_operands = 0, .num_results = 2,
     .infer = pair_infer},
    /* any operands, results given, one region */
    {.name = "test.region", .num_operands = EDDY_VARIADIC,
     .num_results = EDDY_VARIADIC, .num_regions = 1, .attrs = id_attrs},
    /* sink: any operands, no results, nothing to infer */
    {.name = "test.use", .num_operands = EDDY_VARIADIC, .num_results = 0,
     .attrs = id_attrs},
    {.name = "test.noinfer", .num_operands = 0, .num_results = 1},
};

static const eddy_dialect_t test_dialect = {
    .name = "test", .ops = test_ops,
    .num_ops = sizeof(test_ops) / sizeof(test_ops[0])};

static const eddy_dialect_t open_dialect = {
    .name = "open", .ops = NULL, .num_ops = 0, .allow_unknown_ops = true};

typedef struct fixture {
  eddy_ctx_t *ctx;
  eddy_module_t *m;
  eddy_builder_t b;
  const eddy_type_t *t4; ///< tensor<4xf32>
} fixture_t;

static fixture_t fx_storage;

static int setup(void **state) {
  fixture_t *f = &fx_storage;
  memset(f, 0, sizeof(*f));
  f->ctx = eddy_ir_ctx_create();
  if (!f->ctx)
    return -1;
  eddy_ir_ctx_register_dialect(f->ctx, &test_dialect);
  eddy_ir_ctx_register_dialect(f->ctx, &test_dialect); /* idempotent */
  eddy_ir_ctx_register_dialect(f->ctx, &open_dialect);
  f->m = eddy_ir_module_create(f->ctx, NULL);
  eddy_ir_builder_init(&f->b, f->ctx);
  int64_t d = 4;
  f->t4 = eddy_ir_tensor_type_get(f->ctx, EDDY_DT_F32, 1, &d);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture_t *f = *state;
  eddy_ir_module_destroy(f->m);
  eddy_ir_ctx_destroy(f->ctx);
  return 0;
}

/// Builds an op that must succeed.
static eddy_value_t *build(fixture_t *f, const char *name,
                           eddy_value_t *const *operands, size_t n) {
  eddy_value_t *v = NULL;
  eddy_status_t st =
      eddy_ir_build_simple(&f->b, name, operands, n, NULL, 0, &v);
  if (st)
    fail_msg("building %s: %s", name, eddy_status_message(st));
  return v;
}

static eddy_op_t *build_with_id(fixture_t *f, const char *name,
                                eddy_value_t *const *operands, size_t n,
                                int64_t id) {
  eddy_named_attr_t a = eddy_ir_named_attr(
      f->ctx, "id", eddy_ir_int_attr_get(f->ctx, id, EDDY_DT_I64));
  eddy_op_state_t st = {.name = name, .operands = operands, .num_operands = n,
                        .attrs = &a, .num_attrs = 1};
  eddy_op_t *op = NULL;
  eddy_status_t err = eddy_ir_build(&f->b, &st, &op);
  if (err)
    fail_msg("building %s: %s", name, eddy_status_message(err));
  return op;
}

/// Ops of a block as a string of their ids ("1 2 3").
static const char *block_ids(const eddy_block_t *b, char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  for (const eddy_op_t *op = b->first; op; op = op->next) {
    len += (size_t)snprintf(buf + len, cap - len, "%s%lld", len ? " " : "",
                            (long long)eddy_ir_op_attr_int(op, "id", -1));
    /* the back links must agree with the forward ones */
    assert_ptr_equal(op->block, b);
    if (op->next)
      assert_ptr_equal(op->next->prev, op);
    else
      assert_ptr_equal(b->last, op);
  }
  if (!b->first)
    assert_null(b->last);
  return buf;
}

/// Checks that every use in v's list points back at v from its owner.
static void check_uses(const eddy_value_t *v) {
  const eddy_use_t *prev = NULL;
  for (const eddy_use_t *u = v->uses; u; u = u->next) {
    assert_ptr_equal(u->value, v);
    assert_ptr_equal(u->prev, prev);
    assert_ptr_equal(&u->owner->operands[u->index], u);
    prev = u;
  }
}

/* ---- Creation ------------------------------------------------------------- */

static void test_create_errors(void **state) {
  fixture_t *f = *state;
  eddy_op_t *op = (eddy_op_t *)1;
  eddy_op_state_t st = {.name = "nope.op"};
  eddy_status_t err = eddy_ir_op_create(f->ctx, &st, &op);
  assert_int_equal(eddy_status_code(err), EDDY_ERR_NOT_FOUND);
  assert_string_equal(eddy_status_message(err), "unknown op 'nope.op'");
  assert_null(op);
  assert_null(eddy_status_location(err));
  eddy_status_destroy(err);
  st.name = "test.bogus"; /* known dialect, unknown op */
  st.loc = eddy_ir_loc_file(f->ctx, "u.eddy", 4, 2);
  err = eddy_ir_op_create(f->ctx, &st, &op);
  assert_int_equal(eddy_status_code(err), EDDY_ERR_NOT_FOUND);
  assert_string_equal(eddy_status_location(err), "u.eddy:4:2");
  assert_string_equal(eddy_status_message(err), "unknown op 'test.bogus'");
  eddy_status_destroy(err);

  /* duplicate attribute, given out of order */
  eddy_named_attr_t attrs[] = {
      eddy_ir_named_attr(f->ctx, "id", eddy_ir_bool_attr_get(f->ctx, true)),
      eddy_ir_named_attr(f->ctx, "a", eddy_ir_bool_attr_get(f->ctx, true)),
      eddy_ir_named_attr(f->ctx, "id", eddy_ir_bool_attr_get(f->ctx, false)),
  };
  st = (eddy_op_state_t){.name = "test.src", .attrs = attrs, .num_attrs = 3,
                         .loc = eddy_ir_loc_file(f->ctx, "x.eddy", 2, 5)};
  err = eddy_ir_op_create(f->ctx, &st, &op);
  assert_int_equal(eddy_status_code(err), EDDY_ERR_VERIFY);
  assert_string_equal(eddy_status_location(err), "x.eddy:2:5");
  assert_string_equal(eddy_status_message(err),
                      "'test.src' op has duplicate attribute 'id'");
  eddy_status_destroy(err);

  /* no shape function and no result types */
  st = (eddy_op_state_t){.name = "test.noinfer"};
  err = eddy_ir_op_create(f->ctx, &st, &op);
  assert_int_equal(eddy_status_code(err), EDDY_ERR_VERIFY);
  assert_string_equal(eddy_status_message(err),
                      "'test.noinfer' op result types must be given");
  assert_null(eddy_status_location(err));
  eddy_status_destroy(err);

  /* the shape function's error is located at the would-be op */
  eddy_value_t *a = build(f, "test.src", NULL, 0);
  eddy_value_t *ops2[] = {a, a};
  eddy_value_t *p = NULL;
  assert_null(eddy_ir_build_simple(&f->b, "test.pair", NULL, 0,
                                   (eddy_named_attr_t[]){eddy_ir_named_attr(
                                       f->ctx, "n",
                                       eddy_ir_int_attr_get(f->ctx, 3,
                                                            EDDY_DT_I64))},
                                   1, &p));
  eddy_value_t *mixed[] = {a, p};
  f->b.loc = eddy_ir_loc_name(f->ctx, "node1");
  err = eddy_ir_build_simple(&f->b, "test.add", mixed, 2, NULL, 0, &p);
  assert_non_null(err);
  assert_string_equal(eddy_status_location(err), "node 'node1'");
  assert_string_equal(eddy_status_message(err),
                      "'test.add' op operand types differ");
  assert_null(p);
  eddy_status_destroy(err);
  /* the failed build created nothing; the good one has the builder loc */
  eddy_value_t *s = build(f, "test.add", ops2, 2);
  assert_ptr_equal(s->def->loc, eddy_ir_loc_name(f->ctx, "node1"));
  assert_ptr_equal(s->type, f->t4);
  assert_int_equal(eddy_ir_value_num_uses(a), 2);
  /* the result may be written over an operand: x = f(x, x) */
  eddy_value_t *x[2] = {a, a};
  assert_null(eddy_ir_build_simple(&f->b, "test.add", x, 2, NULL, 0, &x[0]));
  assert_ptr_equal(eddy_ir_op_operand(x[0]->def, 0), a);
  assert_ptr_equal(eddy_ir_op_operand(x[0]->def, 1), a);
}

static void test_create_attrs_and_results(void **state) {
  fixture_t *f = *state;
  eddy_named_attr_t attrs[] = {
      eddy_ir_named_attr(f->ctx, "zeta", eddy_ir_bool_attr_get(f->ctx, true)),
      eddy_ir_named_attr(f->ctx, "n",
                         eddy_ir_int_attr_get(f->ctx, 7, EDDY_DT_I64)),
      eddy_ir_named_attr(f->ctx, "alpha",
                         eddy_ir_string_attr_get(f->ctx, "s", 1)),
  };
  eddy_op_state_t st = {.name = "test.pair", .attrs = attrs, .num_attrs = 3};
  eddy_op_t *op;
  assert_null(eddy_ir_op_create(f->ctx, &st, &op));
  assert_null(op->block);
  assert_int_equal(op->num_attrs, 3);
  assert_string_equal(op->attrs[0].name->str, "alpha");
  assert_string_equal(op->attrs[1].name->str, "n");
  assert_string_equal(op->attrs[2].name->str, "zeta");
  assert_string_equal(attrs[0].name->str, "zeta"); /* input untouched */
  assert_int_equal(op->num_results, 2);
  for (uint32_t i = 0; i < 2; i++) {
    eddy_value_t *r = eddy_ir_op_result(op, i);
    assert_ptr_equal(r->def, op);
    assert_int_equal(r->index, i);
    assert_null(r->block);
    assert_int_equal(r->type->dims[0], 7);
  }
  assert_true(eddy_ir_op_is(op, "test.pair"));
  assert_false(eddy_ir_op_is(op, "test.pai"));
  assert_ptr_equal(op->name, eddy_ir_ident_cstr(f->ctx, "test.pair"));
  assert_ptr_equal(op->def->dialect, &test_dialect);
  assert_string_equal(op->def->name, "test.pair");

  /* get / set / remove keep the list sorted */
  assert_int_equal(eddy_ir_op_attr_int(op, "n", -1), 7);
  assert_int_equal(eddy_ir_op_attr_int(op, "zeta", -1), -1); /* a bool */
  assert_true(eddy_ir_op_attr_bool(op, "zeta", false));
  assert_false(eddy_ir_op_attr_bool(op, "missing", false));
  eddy_ir_op_set_attr(op, "m", eddy_ir_bool_attr_get(f->ctx, false));
  eddy_ir_op_set_attr(op, "zz", eddy_ir_bool_attr_get(f->ctx, false));
  eddy_ir_op_set_attr(op, "a", eddy_ir_bool_attr_get(f->ctx, false));
  eddy_ir_op_set_attr(op, "n", eddy_ir_int_attr_get(f->ctx, 8, EDDY_DT_I64));
  const char *want[] = {"a", "alpha", "m", "n", "zeta", "zz"};
  assert_int_equal(op->num_attrs, 6);
  for (int i = 0; i < 6; i++)
    assert_string_equal(op->attrs[i].name->str, want[i]);
  assert_int_equal(eddy_ir_op_attr_int(op, "n", -1), 8);
  assert_true(eddy_ir_op_remove_attr(op, "m"));
  assert_false(eddy_ir_op_remove_attr(op, "m"));
  assert_true(eddy_ir_op_remove_attr(op, "zz"));
  assert_true(eddy_ir_op_remove_attr(op, "a"));
  assert_int_equal(op->num_attrs, 3);
  assert_null(eddy_ir_op_attr(op, "m"));
  assert_non_null(eddy_ir_op_attr(op, "alpha"));
  assert_non_null(eddy_ir_op_attr(op, "zeta"));

  /* explicit result types */
  const eddy_type_t *types[] = {f->t4, eddy_ir_token_type_get(f->ctx),
                                f->t4};
  st = (eddy_op_state_t){.name = "test.region", .result_types = types,
                         .num_results = 3, .num_regions = 2};
  assert_null(eddy_ir_op_create(f->ctx, &st, &op));
  assert_int_equal(op->num_results, 3);
  assert_ptr_equal(op->results[1].type, types[1]);
  assert_int_equal(op->num_regions, 2);
  assert_ptr_equal(op->regions[1].parent, op);
  assert_null(eddy_ir_region_entry(&op->regions[0]));
  assert_null(op->loc);
  /* an op with no results and no shape function needs no result types */
  st = (eddy_op_state_t){.name = "test.use"};
  assert_null(eddy_ir_op_create(f->ctx, &st, &op));
  assert_int_equal(op->num_results, 0);
}

static void test_lookup_and_registry(void **state) {
  fixture_t *f = *state;
  const eddy_op_def_t *d = eddy_ir_ctx_lookup_op(f->ctx, "test.add", 8);
  assert_non_null(d);
  assert_ptr_equal(d, eddy_ir_ctx_lookup_op(f->ctx, "test.addxyz", 8));
  assert_true((d->traits & EDDY_TRAIT_COMMUTATIVE) != 0);
  assert_null(eddy_ir_ctx_lookup_op(f->ctx, "test.ad", 7));
  assert_non_null(eddy_ir_ctx_lookup_op(f->ctx, "func.func", 9));
  assert_non_null(eddy_ir_ctx_lookup_op(f->ctx, "func.return", 11));
  assert_non_null(eddy_ir_ctx_lookup_op(f->ctx, "builtin.module", 14));
  /* permissive definitions for a dialect that allows unknown ops */
  const eddy_op_def_t *p = eddy_ir_ctx_lookup_op(f->ctx, "open.Whatever", 13);
  assert_non_null(p);
  assert_ptr_equal(p, eddy_ir_ctx_lookup_op(f->ctx, "open.Whatever", 13));
  assert_ptr_not_equal(p, eddy_ir_ctx_lookup_op(f->ctx, "open.Other", 10));
  assert_string_equal(p->name, "open.Whatever");
  assert_int_equal(p->num_operands, EDDY_VARIADIC);
  assert_int_equal(p->num_results, EDDY_VARIADIC);
  assert_ptr_equal(p->dialect, &open_dialect);
  assert_null(eddy_ir_ctx_lookup_op(f->ctx, "open.", 5));
  assert_null(eddy_ir_ctx_lookup_op(f->ctx, "opener.x", 8));
  /* an unknown op of an open dialect is created with given result types */
  const eddy_type_t *ty = f->t4;
  eddy_op_state_t st = {.name = "open.Foo", .result_types = &ty,
                        .num_results = 1, .num_regions = 1};
  eddy_op_t *op;
  assert_null(eddy_ir_op_create(f->ctx, &st, &op));
  assert_int_equal(op->num_regions, 1);
}

static int count_names(const char *names, const char *name) {
  int n = 0;
  for (const char *p = names; (p = strstr(p, name)); p++)
    n++;
  return n;
}

static void collect_def(const eddy_op_def_t *def, void *user) {
  eddy_buf_t *b = user;
  eddy_buf_printf(b, "%s,", def->name);
}

static void test_each_op_def(void **state) {
  fixture_t *f = *state;
  eddy_buf_t b;
  eddy_buf_init(&b);
  eddy_ir_ctx_each_op_def(f->ctx, collect_def, &b);
  assert_string_equal(b.data, "builtin.module,func.func,func.return,test.src,"
                              "test.add,test.pair,test.region,test.use,"
                              "test.noinfer,");
  assert_int_equal(count_names(b.data, "test.add"), 1);
  eddy_buf_destroy(&b);
}

static int ext_dtor_calls;
static void ext_dtor(void *v) {
  ext_dtor_calls += *(int *)v;
}

static void test_ctx_ext(void **state) {
  (void)state;
  eddy_ctx_t *ctx = eddy_ir_ctx_create();
  static int one = 1, ten = 10, hundred = 100;
  ext_dtor_calls = 0;
  assert_null(eddy_ir_ctx_get_ext(ctx, "k"));
  eddy_ir_ctx_set_ext(ctx, "k", &one, ext_dtor);
  char key[] = "k";
  assert_ptr_equal(eddy_ir_ctx_get_ext(ctx, key), &one); /* by content */
  eddy_ir_ctx_set_ext(ctx, "k", &ten, ext_dtor); /* replaces, runs dtor */
  assert_int_equal(ext_dtor_calls, 1);
  assert_ptr_equal(eddy_ir_ctx_get_ext(ctx, "k"), &ten);
  eddy_ir_ctx_set_ext(ctx, "other", &hundred, NULL);
  eddy_ir_ctx_destroy(ctx);
  assert_int_equal(ext_dtor_calls, 11);
}

/* ---- Functions and the builtin verifiers ----------------------------------- */

static void test_func_and_builtin_verifiers(void **state) {
  fixture_t *f = *state;
  const eddy_type_t *in[] = {f->t4, f->t4};
  const eddy_type_t *out[] = {f->t4};
  eddy_op_t *fn;
  assert_null(eddy_ir_func_create(f->m, "f", in, 2, out, 1, NULL, &fn));
  assert_ptr_equal(fn->block, eddy_ir_module_body(f->m));
  assert_string_equal(eddy_ir_func_name(fn), "f");
  assert_ptr_equal(eddy_ir_module_lookup_func(f->m, "f"), fn);
  assert_null(eddy_ir_module_lookup_func(f->m, "g"));
  assert_null(eddy_ir_module_lookup_func(f->m, "ff"));
  const eddy_type_t *fty = eddy_ir_func_type(fn);
  assert_ptr_equal(fty, eddy_ir_func_type_get(f->ctx, in, 2, out, 1));
  eddy_block_t *entry = eddy_ir_func_entry(fn);
  assert_non_null(entry);
  assert_int_equal(entry->num_args, 2);
  assert_ptr_equal(entry->args[1]->type, f->t4);
  assert_int_equal(entry->args[1]->index, 1);
  assert_ptr_equal(entry->args[1]->block, entry);
  assert_null(entry->args[1]->def);
  assert_ptr_equal(eddy_ir_block_parent_op(entry), fn);
  assert_ptr_equal(eddy_ir_op_parent_op(fn), f->m->op);
  assert_true(eddy_ir_op_has_trait(fn, EDDY_TRAIT_ISOLATED));

  eddy_op_t *dup = (eddy_op_t *)1;
  eddy_status_t err = eddy_ir_func_create(f->m, "f", NULL, 0, NULL, 0, NULL,
                                          &dup);
  assert_int_equal(eddy_status_code(err), EDDY_ERR_INVALID_ARGUMENT);
  assert_string_equal(eddy_status_message(err),
                      "function '@f' is already defined");
  assert_null(dup);
  eddy_status_destroy(err);

  eddy_ir_builder_set_end(&f->b, entry);
  eddy_value_t *sum =
      build(f, "test.add", (eddy_value_t *[]){entry->args[0], entry->args[1]},
            2);
  eddy_op_t *ret;
  eddy_op_state_t rs = {.name = "func.return", .operands = &sum,
                        .num_operands = 1};
  assert_null(eddy_ir_build(&f->b, &rs, &ret));
  assert_ptr_equal(eddy_ir_block_terminator(entry), ret);
  assert_true(eddy_ir_op_has_trait(ret, EDDY_TRAIT_TERMINATOR));

  /* the verifier hooks of the builtin defs (the generic verifier calls them) */
  assert_null(fn->def->verify(fn));
  assert_null(ret->def->verify(ret));
  /* return: wrong count */
  eddy_ir_op_set_operands(ret, (eddy_value_t *[]){sum, sum}, 2);
  err = ret->def->verify(ret);
  assert_non_null(err);
  assert_int_equal(eddy_status_code(err), EDDY_ERR_VERIFY);
  assert_string_equal(eddy_status_message(err),
                      "'func.return' op has 2 operands but the function "
                      "returns 1 values");
  eddy_status_destroy(err);
  /* return: incompatible type; a compatible (dynamic) one is accepted */
  eddy_value_t *p = NULL;
  assert_null(eddy_ir_build_simple(
      &f->b, "test.pair", NULL, 0,
      (eddy_named_attr_t[]){eddy_ir_named_attr(
          f->ctx, "n", eddy_ir_int_attr_get(f->ctx, 4, EDDY_DT_I64))},
      1, &p));
  eddy_ir_op_move_before(p->def, ret);
  eddy_ir_op_set_operands(ret, &p, 1);
  err = ret->def->verify(ret);
  assert_non_null(err);
  assert_non_null(strstr(eddy_status_message(err), "operand 0 has type"));
  eddy_status_destroy(err);
  int64_t dyn = EDDY_DIM_DYNAMIC;
  eddy_ir_func_set_type(
      fn, eddy_ir_func_type_get(
              f->ctx, in, 2,
              (const eddy_type_t *[]){eddy_ir_tensor_type_get(
                  f->ctx, EDDY_DT_F32, 1, &dyn)},
              1));
  eddy_ir_op_set_operands(ret, &sum, 1);
  assert_null(ret->def->verify(ret));
  assert_int_equal(eddy_ir_func_type(fn)->outputs[0]->dims[0],
                   EDDY_DIM_DYNAMIC);
  eddy_ir_func_set_type(fn, fty);

  /* func: entry arguments must match the inputs exactly */
  eddy_value_t *extra = eddy_ir_block_add_arg(entry, f->t4);
  err = fn->def->verify(fn);
  assert_non_null(err);
  assert_string_equal(eddy_status_message(err),
                      "'func.func' op entry block has 3 arguments but the "
                      "function type has 2 inputs");
  eddy_status_destroy(err);
  eddy_ir_block_erase_arg(entry, 2);
  assert_null(extra->block);
  assert_null(fn->def->verify(fn));
  eddy_ir_func_set_type(
      fn, eddy_ir_func_type_get(
              f->ctx,
              (const eddy_type_t *[]){
                  f->t4, eddy_ir_tensor_type_get(f->ctx, EDDY_DT_F32, 1, &dyn)},
              2, out, 1));
  err = fn->def->verify(fn);
  assert_non_null(err);
  assert_non_null(strstr(eddy_status_message(err), "entry block argument 1"));
  eddy_status_destroy(err);
  eddy_ir_func_set_type(fn, fty);
  /* func: body must end in func.return */
  eddy_ir_op_remove(ret);
  err = fn->def->verify(fn);
  assert_non_null(err);
  assert_string_equal(eddy_status_message(err),
                      "'func.func' op body must end in 'func.return'");
  eddy_status_destroy(err);
  /* return outside a function */
  err = ret->def->verify(ret);
  assert_non_null(err);
  assert_string_equal(eddy_status_message(err),
                      "'func.return' op expects parent op 'func.func'");
  eddy_status_destroy(err);

  /* a second function; lookup finds each */
  eddy_op_t *g;
  assert_null(eddy_ir_func_create(f->m, "g", NULL, 0, NULL, 0,
                                  eddy_ir_loc_file(f->ctx, "m.eddy", 9, 1),
                                  &g));
  assert_ptr_equal(eddy_ir_module_lookup_func(f->m, "g"), g);
  assert_ptr_equal(eddy_ir_module_lookup_func(f->m, "f"), fn);
  assert_ptr_equal(fn->next, g);
  assert_int_equal(eddy_ir_func_entry(g)->num_args, 0);
  err = eddy_ir_op_error(g, "bad %d", 3);
  assert_string_equal(eddy_status_location(err), "m.eddy:9:1");
  assert_string_equal(eddy_status_message(err), "'func.func' op bad 3");
  eddy_status_destroy(err);
}

/* ---- Use lists ------------------------------------------------------------- */

static void test_rauw_and_set_operand(void **state) {
  fixture_t *f = *state;
  eddy_block_t *body = eddy_ir_module_body(f->m);
  eddy_ir_builder_set_end(&f->b, body);
  eddy_value_t *a = build(f, "test.src", NULL, 0);
  eddy_value_t *b = build(f, "test.src", NULL, 0);
  eddy_value_t *s1 = build(f, "test.add", (eddy_value_t *[]){a, a}, 2);
  eddy_value_t *s2 = build(f, "test.add", (eddy_value_t *[]){a, b}, 2);
  assert_int_equal(eddy_ir_value_num_uses(a), 3);
  assert_int_equal(eddy_ir_value_num_uses(b), 1);
  assert_false(eddy_ir_value_has_uses(s1));
  check_uses(a);

  eddy_ir_value_replace_all_uses(a, b);
  assert_false(eddy_ir_value_has_uses(a));
  assert_int_equal(eddy_ir_value_num_uses(b), 4);
  assert_ptr_equal(eddy_ir_op_operand(s1->def, 0), b);
  assert_ptr_equal(eddy_ir_op_operand(s1->def, 1), b);
  assert_ptr_equal(eddy_ir_op_operand(s2->def, 0), b);
  check_uses(b);
  eddy_ir_value_replace_all_uses(b, b); /* no-op */
  assert_int_equal(eddy_ir_value_num_uses(b), 4);

  eddy_ir_op_set_operand(s2->def, 1, a);
  assert_int_equal(eddy_ir_value_num_uses(a), 1);
  assert_int_equal(eddy_ir_value_num_uses(b), 3);
  assert_ptr_equal(a->uses->owner, s2->def);
  assert_int_equal(a->uses->index, 1);
  check_uses(a);
  check_uses(b);
  eddy_ir_op_set_operand(s2->def, 1, a); /* same value: unchanged */
  assert_int_equal(eddy_ir_value_num_uses(a), 1);

  /* set_operands grows the operand storage and relinks all uses */
  eddy_op_t *u = build_with_id(f, "test.use", (eddy_value_t *[]){a}, 1, 1);
  eddy_value_t *many[] = {b, a, s1, b, s2, a};
  eddy_ir_op_set_operands(u, many, 6);
  assert_int_equal(u->num_operands, 6);
  assert_true(u->cap_operands >= 6);
  for (int i = 0; i < 6; i++) {
    assert_ptr_equal(eddy_ir_op_operand(u, (size_t)i), many[i]);
    assert_int_equal(u->operands[i].index, i);
    assert_ptr_equal(u->operands[i].owner, u);
  }
  assert_int_equal(eddy_ir_value_num_uses(a), 3);
  assert_int_equal(eddy_ir_value_num_uses(b), 5);
  assert_int_equal(eddy_ir_value_num_uses(s1), 1);
  check_uses(a);
  check_uses(b);
  check_uses(s1);
  check_uses(s2);
  /* shrinking drops the uses of the removed operands */
  eddy_ir_op_set_operands(u, (eddy_value_t *[]){s2}, 1);
  assert_int_equal(eddy_ir_value_num_uses(a), 1);
  assert_int_equal(eddy_ir_value_num_uses(b), 3);
  assert_false(eddy_ir_value_has_uses(s1));
  assert_int_equal(eddy_ir_value_num_uses(s2), 1);
  eddy_ir_op_set_operands(u, NULL, 0);
  assert_false(eddy_ir_value_has_uses(s2));
  assert_int_equal(u->num_operands, 0);
  check_uses(a);
  check_uses(b);

  /* value helpers */
  assert_ptr_equal(eddy_ir_value_block(a), body);
  int64_t d = 2;
  eddy_ir_value_set_type(a, eddy_ir_tensor_type_get(f->ctx, EDDY_DT_F32, 1, &d));
  assert_int_equal(a->type->dims[0], 2);
}

/* ---- Erase, remove, insert, move ------------------------------------------- */

static void test_erase_move_insert(void **state) {
  fixture_t *f = *state;
  char buf[128];
  eddy_block_t *body = eddy_ir_module_body(f->m);
  eddy_ir_builder_set_end(&f->b, body);
  eddy_op_t *o1 = build_with_id(f, "test.src", NULL, 0, 1);
  eddy_op_t *o2 = build_with_id(f, "test.src", NULL, 0, 2);
  eddy_op_t *o3 = build_with_id(f, "test.src", NULL, 0, 3);
  assert_string_equal(block_ids(body, buf, sizeof(buf)), "1 2 3");
  /* builder insertion points */
  eddy_ir_builder_set_before(&f->b, o2);
  build_with_id(f, "test.src", NULL, 0, 4);
  eddy_ir_builder_set_after(&f->b, o3);
  build_with_id(f, "test.src", NULL, 0, 5);
  build_with_id(f, "test.src", NULL, 0, 6); /* after 5, in build order */
  eddy_ir_builder_set_after(&f->b, o1);
  build_with_id(f, "test.src", NULL, 0, 7);
  build_with_id(f, "test.src", NULL, 0, 8);
  assert_string_equal(block_ids(body, buf, sizeof(buf)), "1 7 8 4 2 3 5 6");

  eddy_ir_op_move_before(o3, o1);
  assert_string_equal(block_ids(body, buf, sizeof(buf)), "3 1 7 8 4 2 5 6");
  eddy_ir_op_remove(o2);
  assert_null(o2->block);
  assert_null(o2->next);
  assert_string_equal(block_ids(body, buf, sizeof(buf)), "3 1 7 8 4 5 6");
  eddy_ir_op_insert_after(o2, body->last);
  assert_string_equal(block_ids(body, buf, sizeof(buf)), "3 1 7 8 4 5 6 2");
  eddy_ir_op_remove(o3);
  eddy_ir_op_insert_before(o3, o2);
  assert_string_equal(block_ids(body, buf, sizeof(buf)), "1 7 8 4 5 6 3 2");
  eddy_ir_op_move_before(o2, body->first);
  assert_string_equal(block_ids(body, buf, sizeof(buf)), "2 1 7 8 4 5 6 3");

  /* erase an op with a region whose ops use values from outside */
  eddy_value_t *v1 = &o1->results[0], *v2 = &o2->results[0];
  eddy_op_state_t rs = {.name = "test.region", .operands = &v1,
                        .num_operands = 1, .num_regions = 1};
  eddy_op_t *reg;
  eddy_ir_builder_set_end(&f->b, body);
  assert_null(eddy_ir_build(&f->b, &rs, &reg));
  eddy_block_t *inner = eddy_ir_region_add_block(&reg->regions[0]);
  eddy_value_t *arg = eddy_ir_block_add_arg(inner, f->t4);
  eddy_ir_builder_set_end(&f->b, inner);
  eddy_value_t *x = build(f, "test.add", (eddy_value_t *[]){v2, arg}, 2);
  build(f, "test.use", (eddy_value_t *[]){x, v1, v2}, 3);
  assert_int_equal(eddy_ir_value_num_uses(v1), 2);
  assert_int_equal(eddy_ir_value_num_uses(v2), 2);
  assert_ptr_equal(eddy_ir_op_parent_op(x->def), reg);
  assert_true(eddy_ir_op_is_ancestor(reg, x->def));
  assert_true(eddy_ir_op_is_ancestor(f->m->op, x->def));
  assert_true(eddy_ir_op_is_ancestor(x->def, x->def));
  assert_false(eddy_ir_op_is_ancestor(x->def, reg));
  assert_false(eddy_ir_op_is_ancestor(o1, x->def));
  assert_ptr_equal(eddy_ir_value_block(arg), inner);
  assert_ptr_equal(eddy_ir_value_block(x), inner);
  eddy_ir_op_erase(reg);
  assert_null(reg->block);
  assert_false(eddy_ir_value_has_uses(v1));
  assert_false(eddy_ir_value_has_uses(v2));
  assert_string_equal(block_ids(body, buf, sizeof(buf)), "2 1 7 8 4 5 6 3");
  /* erase first, middle, last */
  eddy_ir_op_erase(o2);
  eddy_ir_op_erase(o3);
  eddy_ir_op_erase(body->first->next->next); /* 8 */
  assert_string_equal(block_ids(body, buf, sizeof(buf)), "1 7 4 5 6");
  while (body->first)
    eddy_ir_op_erase(body->first);
  assert_string_equal(block_ids(body, buf, sizeof(buf)), "");
  /* append into the now empty block */
  eddy_ir_op_append(o2, body);
  assert_string_equal(block_ids(body, buf, sizeof(buf)), "2");
}

static void test_blocks_and_args(void **state) {
  fixture_t *f = *state;
  const eddy_type_t *ty = f->t4;
  eddy_op_state_t rs = {.name = "test.region", .num_regions = 1};
  eddy_op_t *reg;
  assert_null(eddy_ir_op_create(f->ctx, &rs, &reg));
  eddy_region_t *r = &reg->regions[0];
  eddy_block_t *b0 = eddy_ir_region_add_block(r);
  eddy_block_t *b1 = eddy_ir_region_add_block(r);
  assert_ptr_equal(eddy_ir_region_entry(r), b0);
  assert_ptr_equal(b0->next, b1);
  assert_ptr_equal(b1->prev, b0);
  assert_ptr_equal(r->last, b1);
  assert_ptr_equal(eddy_ir_block_parent_op(b1), reg);
  assert_null(eddy_ir_block_terminator(b0));

  eddy_value_t *args[10];
  for (int i = 0; i < 10; i++)
    args[i] = eddy_ir_block_add_arg(b0, ty);
  assert_int_equal(b0->num_args, 10);
  for (int i = 0; i < 10; i++) {
    /* adding args never moves earlier ones */
    assert_ptr_equal(b0->args[i], args[i]);
    assert_int_equal(args[i]->index, i);
  }
  /* a user of arg 9, to check that erasing arg 3 keeps uses intact */
  eddy_ir_builder_set_end(&f->b, b0);
  eddy_op_t *u = build_with_id(f, "test.use", &args[9], 1, 1);
  assert_ptr_equal(eddy_ir_block_terminator(b0), u);
  eddy_ir_block_erase_arg(b0, 3);
  eddy_ir_block_erase_arg(b0, 0);
  eddy_ir_block_erase_arg(b0, 6); /* the old arg 8 */
  assert_int_equal(b0->num_args, 7);
  const int kept[] = {1, 2, 4, 5, 6, 7, 9};
  for (int i = 0; i < 7; i++) {
    assert_ptr_equal(b0->args[i], args[kept[i]]);
    assert_int_equal(b0->args[i]->index, i);
  }
  assert_ptr_equal(eddy_ir_op_operand(u, 0), args[9]);
  assert_int_equal(eddy_ir_value_num_uses(args[9]), 1);
}

/* ---- Walks ----------------------------------------------------------------- */

typedef struct walk_log {
  char text[256];
  size_t len;
  int64_t stop_at; ///< interrupt on this id
  int64_t skip_at; ///< skip this id's regions
  bool erase;      ///< erase test.use ops (post-order only)
} walk_log_t;

static eddy_walk_result_t log_op(eddy_op_t *op, void *user) {
  walk_log_t *l = user;
  int64_t id = eddy_ir_op_attr_int(op, "id", 0);
  l->len += (size_t)snprintf(l->text + l->len, sizeof(l->text) - l->len,
                             "%s%lld", l->len ? " " : "", (long long)id);
  if (id == l->stop_at)
    return EDDY_WALK_INTERRUPT;
  if (id == l->skip_at)
    return EDDY_WALK_SKIP;
  if (l->erase && eddy_ir_op_is(op, "test.use"))
    eddy_ir_op_erase(op);
  return EDDY_WALK_ADVANCE;
}

/// Builds: 1 { 2 { 3 ; 4 } ; 5 ; 6 { 7 | 8 } } under the builder's block;
/// region ops hold test.use leaves (3, 5, 7, 8 are test.use; 4 too).
static eddy_op_t *build_tree(fixture_t *f) {
  eddy_block_t *saved = f->b.block;
  eddy_op_state_t rs = {.name = "test.region", .num_regions = 1,
                        .attrs = (eddy_named_attr_t[]){eddy_ir_named_attr(
                            f->ctx, "id",
                            eddy_ir_int_attr_get(f->ctx, 1, EDDY_DT_I64))},
                        .num_attrs = 1};
  eddy_op_t *o1, *o2, *o6;
  assert_null(eddy_ir_build(&f->b, &rs, &o1));
  eddy_block_t *b1 = eddy_ir_region_add_block(&o1->regions[0]);
  eddy_ir_builder_set_end(&f->b, b1);
  rs.attrs = (eddy_named_attr_t[]){eddy_ir_named_attr(
      f->ctx, "id", eddy_ir_int_attr_get(f->ctx, 2, EDDY_DT_I64))};
  assert_null(eddy_ir_build(&f->b, &rs, &o2));
  build_with_id(f, "test.use", NULL, 0, 5);
  rs.num_regions = 2;
  rs.attrs = (eddy_named_attr_t[]){eddy_ir_named_attr(
      f->ctx, "id", eddy_ir_int_attr_get(f->ctx, 6, EDDY_DT_I64))};
  assert_null(eddy_ir_build(&f->b, &rs, &o6));
  eddy_ir_builder_set_end(&f->b, eddy_ir_region_add_block(&o2->regions[0]));
  build_with_id(f, "test.use", NULL, 0, 3);
  build_with_id(f, "test.use", NULL, 0, 4);
  eddy_ir_builder_set_end(&f->b, eddy_ir_region_add_block(&o6->regions[0]));
  build_with_id(f, "test.use", NULL, 0, 7);
  eddy_ir_builder_set_end(&f->b, eddy_ir_region_add_block(&o6->regions[1]));
  build_with_id(f, "test.use", NULL, 0, 8);
  eddy_ir_builder_set_end(&f->b, saved);
  return o1;
}

static void test_walks(void **state) {
  fixture_t *f = *state;
  eddy_ir_builder_set_end(&f->b, eddy_ir_module_body(f->m));
  eddy_op_t *root = build_tree(f);
  walk_log_t l = {.stop_at = -1, .skip_at = -1};
  assert_int_equal(eddy_ir_walk_pre(root, log_op, &l), EDDY_WALK_ADVANCE);
  assert_string_equal(l.text, "1 2 3 4 5 6 7 8");
  l = (walk_log_t){.stop_at = -1, .skip_at = -1};
  assert_int_equal(eddy_ir_walk_post(root, log_op, &l), EDDY_WALK_ADVANCE);
  assert_string_equal(l.text, "3 4 2 5 7 8 6 1");
  /* interrupt stops everything, in both orders */
  l = (walk_log_t){.stop_at = 4, .skip_at = -1};
  assert_int_equal(eddy_ir_walk_pre(root, log_op, &l), EDDY_WALK_INTERRUPT);
  assert_string_equal(l.text, "1 2 3 4");
  l = (walk_log_t){.stop_at = 2, .skip_at = -1};
  assert_int_equal(eddy_ir_walk_post(root, log_op, &l), EDDY_WALK_INTERRUPT);
  assert_string_equal(l.text, "3 4 2");
  l = (walk_log_t){.stop_at = 1, .skip_at = -1};
  assert_int_equal(eddy_ir_walk_pre(root, log_op, &l), EDDY_WALK_INTERRUPT);
  assert_string_equal(l.text, "1");
  /* skip does not enter regions but goes on with siblings */
  l = (walk_log_t){.stop_at = -1, .skip_at = 2};
  assert_int_equal(eddy_ir_walk_pre(root, log_op, &l), EDDY_WALK_ADVANCE);
  assert_string_equal(l.text, "1 2 5 6 7 8");
  /* the whole module */
  l = (walk_log_t){.stop_at = -1, .skip_at = -1};
  eddy_ir_walk_pre(f->m->op, log_op, &l);
  assert_string_equal(l.text, "0 1 2 3 4 5 6 7 8");

  /* post-order walks may erase the op they are given */
  l = (walk_log_t){.stop_at = -1, .skip_at = -1, .erase = true};
  assert_int_equal(eddy_ir_walk_post(root, log_op, &l), EDDY_WALK_ADVANCE);
  assert_string_equal(l.text, "3 4 2 5 7 8 6 1");
  l = (walk_log_t){.stop_at = -1, .skip_at = -1};
  eddy_ir_walk_pre(root, log_op, &l);
  assert_string_equal(l.text, "1 2 6");
  /* erasing the root itself from a post walk */
  l = (walk_log_t){.stop_at = -1, .skip_at = -1, .erase = true};
  eddy_ir_builder_set_end(&f->b, eddy_ir_module_body(f->m));
  eddy_op_t *lone = build_with_id(f, "test.use", NULL, 0, 9);
  eddy_ir_walk_post(lone, log_op, &l);
  assert_null(lone->block);
  assert_ptr_equal(eddy_ir_module_body(f->m)->last, root);
}

/* ---- Clone ----------------------------------------------------------------- */

static void test_clone(void **state) {
  fixture_t *f = *state;
  char buf[128];
  eddy_block_t *body = eddy_ir_module_body(f->m);
  eddy_ir_builder_set_end(&f->b, body);
  eddy_value_t *outer = build(f, "test.src", NULL, 0);
  eddy_value_t *other = build(f, "test.src", NULL, 0);
  eddy_value_t *kept = build(f, "test.src", NULL, 0);
  /* %r = test.region(%outer, %kept) ({ ^bb0(%a): %x = add(%a, %outer);
     %y = add(%x, %kept); use(%y, %z_later); %z_later = src }) */
  const eddy_type_t *rt[] = {f->t4, f->t4};
  eddy_named_attr_t id = eddy_ir_named_attr(
      f->ctx, "id", eddy_ir_int_attr_get(f->ctx, 42, EDDY_DT_I64));
  eddy_op_state_t rs = {.name = "test.region",
                        .operands = (eddy_value_t *[]){outer, kept},
                        .num_operands = 2, .attrs = &id, .num_attrs = 1,
                        .result_types = rt, .num_results = 2,
                        .num_regions = 1,
                        .loc = eddy_ir_loc_name(f->ctx, "n")};
  eddy_op_t *reg;
  assert_null(eddy_ir_build(&f->b, &rs, &reg));
  eddy_block_t *inner = eddy_ir_region_add_block(&reg->regions[0]);
  eddy_value_t *a = eddy_ir_block_add_arg(inner, f->t4);
  eddy_ir_builder_set_end(&f->b, inner);
  eddy_op_t *xo = build_with_id(f, "test.add", (eddy_value_t *[]){a, outer},
                                2, 1);
  eddy_value_t *x = &xo->results[0];
  eddy_value_t *y = build(f, "test.add", (eddy_value_t *[]){x, kept}, 2);
  eddy_op_t *use = build_with_id(f, "test.use", (eddy_value_t *[]){y, y}, 2, 3);
  eddy_value_t *z = build(f, "test.src", NULL, 0);
  eddy_ir_op_set_operand(use, 1, z); /* a forward reference (a back edge) */
  eddy_block_t *second = eddy_ir_region_add_block(&reg->regions[0]);
  eddy_value_t *sa = eddy_ir_block_add_arg(second, f->t4);
  eddy_ir_builder_set_end(&f->b, second);
  build(f, "test.use", (eddy_value_t *[]){sa, a, x}, 3);

  size_t uses_outer = eddy_ir_value_num_uses(outer);
  size_t uses_kept = eddy_ir_value_num_uses(kept);
  eddy_ptrmap_t map;
  eddy_ptrmap_init(&map);
  eddy_ptrmap_put(&map, outer, other);
  eddy_op_t *c = eddy_ir_op_clone(reg, &map);

  assert_null(c->block);
  assert_ptr_not_equal(c, reg);
  assert_ptr_equal(c->def, reg->def);
  assert_ptr_equal(c->loc, reg->loc);
  assert_int_equal(eddy_ir_op_attr_int(c, "id", 0), 42);
  assert_ptr_not_equal(c->attrs, reg->attrs); /* own list */
  eddy_ir_op_set_attr(c, "id", eddy_ir_int_attr_get(f->ctx, 43, EDDY_DT_I64));
  assert_int_equal(eddy_ir_op_attr_int(reg, "id", 0), 42);
  /* operands: mapped or kept */
  assert_ptr_equal(eddy_ir_op_operand(c, 0), other);
  assert_ptr_equal(eddy_ir_op_operand(c, 1), kept);
  /* results mapped */
  assert_int_equal(c->num_results, 2);
  assert_ptr_equal(eddy_ptrmap_get(&map, &reg->results[0]), &c->results[0]);
  assert_ptr_equal(eddy_ptrmap_get(&map, &reg->results[1]), &c->results[1]);
  assert_ptr_equal(c->results[1].def, c);
  assert_ptr_equal(c->results[1].type, f->t4);
  /* region structure */
  eddy_block_t *ci = eddy_ir_region_entry(&c->regions[0]);
  assert_non_null(ci);
  assert_ptr_not_equal(ci, inner);
  assert_ptr_equal(ci->region, &c->regions[0]);
  assert_ptr_equal(c->regions[0].parent, c);
  assert_int_equal(ci->num_args, 1);
  eddy_value_t *ca = ci->args[0];
  assert_ptr_equal(eddy_ptrmap_get(&map, a), ca);
  assert_ptr_equal(ca->block, ci);
  eddy_op_t *cx = ci->first;
  assert_true(eddy_ir_op_is(cx, "test.add"));
  assert_ptr_not_equal(cx, xo);
  assert_ptr_equal(eddy_ir_op_operand(cx, 0), ca);
  assert_ptr_equal(eddy_ir_op_operand(cx, 1), other);
  assert_ptr_equal(eddy_ptrmap_get(&map, x), &cx->results[0]);
  eddy_op_t *cy = cx->next;
  assert_ptr_equal(eddy_ir_op_operand(cy, 0), &cx->results[0]);
  assert_ptr_equal(eddy_ir_op_operand(cy, 1), kept);
  eddy_op_t *cuse = cy->next;
  eddy_op_t *cz = cuse->next;
  assert_ptr_equal(eddy_ir_op_operand(cuse, 0), &cy->results[0]);
  /* the forward reference points at the copy, not the original */
  assert_ptr_equal(eddy_ir_op_operand(cuse, 1), &cz->results[0]);
  assert_ptr_equal(cz->block, ci);
  assert_ptr_equal(ci->last, cz);
  assert_string_equal(block_ids(ci, buf, sizeof(buf)), "1 -1 3 -1");
  eddy_block_t *cs = ci->next;
  assert_non_null(cs);
  assert_null(cs->next);
  assert_int_equal(cs->num_args, 1);
  eddy_op_t *cu2 = cs->first;
  assert_ptr_equal(eddy_ir_op_operand(cu2, 0), cs->args[0]);
  assert_ptr_equal(eddy_ir_op_operand(cu2, 1), ca);
  assert_ptr_equal(eddy_ir_op_operand(cu2, 2), &cx->results[0]);
  /* use lists: the original is untouched, the clone adds its uses */
  assert_int_equal(eddy_ir_value_num_uses(outer), uses_outer);
  assert_int_equal(eddy_ir_value_num_uses(kept), uses_kept + 2);
  assert_int_equal(eddy_ir_value_num_uses(other), 2);
  assert_int_equal(eddy_ir_value_num_uses(x), 2);
  assert_int_equal(eddy_ir_value_num_uses(&cx->results[0]), 2);
  assert_int_equal(eddy_ir_value_num_uses(z), 1);
  check_uses(kept);
  check_uses(other);
  check_uses(&cx->results[0]);
  assert_ptr_equal(eddy_ir_op_operand(use, 1), z); /* original unchanged */

  /* the clone can be inserted and erased without touching the original */
  eddy_ir_op_insert_after(c, reg);
  assert_ptr_equal(reg->next, c);
  eddy_ir_op_erase(c);
  assert_int_equal(eddy_ir_value_num_uses(kept), uses_kept);
  assert_false(eddy_ir_value_has_uses(other));
  eddy_ptrmap_destroy(&map);

  /* region_clone_into appends to an existing region */
  eddy_ptrmap_init(&map);
  eddy_op_state_t es = {.name = "test.region", .num_regions = 1};
  eddy_op_t *dst;
  assert_null(eddy_ir_op_create(f->ctx, &es, &dst));
  eddy_block_t *pre = eddy_ir_region_add_block(&dst->regions[0]);
  eddy_ir_region_clone_into(&reg->regions[0], &dst->regions[0], &map);
  assert_ptr_equal(dst->regions[0].first, pre);
  assert_non_null(pre->next);
  assert_int_equal(pre->next->num_args, 1);
  assert_ptr_equal(eddy_ptrmap_get(&map, a), pre->next->args[0]);
  assert_ptr_equal(eddy_ir_op_operand(pre->next->first, 1), outer);
  assert_ptr_equal(eddy_ir_block_parent_op(pre->next), dst);
  eddy_ptrmap_destroy(&map);
}

/* ---- Builder odds and ends -------------------------------------------------- */

static const eddy_attr_spec_t const_attrs[] = {{"value", EDDY_ATTR_DENSE, false},
                                               {NULL, 0, false}};
static const eddy_op_def_t fake_core_ops[] = {
    {.name = "core.constant", .num_operands = 0, .num_results = 1,
     .traits = EDDY_TRAIT_CONSTANT | EDDY_TRAIT_PURE, .attrs = const_attrs},
};
static const eddy_dialect_t fake_core = {.name = "core", .ops = fake_core_ops,
                                         .num_ops = 1};

static void test_build_constant(void **state) {
  (void)state;
  eddy_ctx_t *ctx = eddy_ir_ctx_create();
  eddy_module_t *m = eddy_ir_module_create(ctx, NULL);
  eddy_builder_t b;
  eddy_ir_builder_init(&b, ctx);
  eddy_ir_builder_set_end(&b, eddy_ir_module_body(m));
  const eddy_type_t *t = eddy_ir_scalar_type_get(ctx, EDDY_DT_I64);
  const eddy_attr_t *v = eddy_ir_dense_attr_from_i64(ctx, t, (int64_t[]){5}, 1);
  eddy_value_t *out = (eddy_value_t *)1;
  eddy_status_t err = eddy_ir_build_constant(&b, v, &out);
  assert_non_null(err); /* core.constant is not registered */
  assert_int_equal(eddy_status_code(err), EDDY_ERR_NOT_FOUND);
  assert_null(out);
  assert_null(eddy_ir_module_body(m)->first);
  eddy_status_destroy(err);
  err = eddy_ir_build_constant(&b, eddy_ir_bool_attr_get(ctx, true), &out);
  assert_int_equal(eddy_status_code(err), EDDY_ERR_INVALID_ARGUMENT);
  eddy_status_destroy(err);

  eddy_ir_ctx_register_dialect(ctx, &fake_core);
  assert_null(eddy_ir_build_constant(&b, v, &out));
  assert_non_null(out);
  assert_ptr_equal(out->type, t);
  assert_true(eddy_ir_op_is(out->def, "core.constant"));
  assert_ptr_equal(eddy_ir_op_attr(out->def, "value"), v);
  assert_ptr_equal(eddy_ir_module_body(m)->first, out->def);
  eddy_ir_module_destroy(m);
  eddy_ir_ctx_destroy(ctx);
}

static void test_detached_builder(void **state) {
  fixture_t *f = *state;
  eddy_builder_t b;
  eddy_ir_builder_init(&b, f->ctx);
  eddy_value_t *v = NULL;
  assert_null(eddy_ir_build_simple(&b, "test.src", NULL, 0, NULL, 0, &v));
  assert_non_null(v);
  assert_null(v->def->block); /* no insertion point: detached */
  assert_null(eddy_ir_build_simple(&b, "test.use", &v, 1, NULL, 0, &v));
  assert_null(v); /* no results */
}

int main(void) {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
  const struct CMUnitTest tests[] = {
      T(test_create_errors),
      T(test_create_attrs_and_results),
      T(test_lookup_and_registry),
      T(test_each_op_def),
      cmocka_unit_test(test_ctx_ext),
      T(test_func_and_builtin_verifiers),
      T(test_rauw_and_set_operand),
      T(test_erase_move_insert),
      T(test_blocks_and_args),
      T(test_walks),
      T(test_clone),
      cmocka_unit_test(test_build_constant),
      T(test_detached_builder),
  };
#undef T
  return cmocka_run_group_tests(tests, NULL, NULL);
}

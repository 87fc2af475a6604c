/// Unit tests of the GraphDef importer (dialects/tf/tf_import.c,
/// tf_graph.c): graphs built in memory, imported, verified, printed, parsed
/// back; and the errors of each kind of broken graph.
#include "tests/unit/tf/tf_test_util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#define DT(x) TENSORFLOW__DATA_TYPE__DT_##x

typedef struct fixture {
  eddy_ctx_t *ctx;
  gb_t b;
  eddy_buf_t text;
} fixture_t;

static int setup(void **state) {
  fixture_t *f = calloc(1, sizeof *f);
  assert_non_null(f);
  f->ctx = eddy_ir_ctx_create();
  assert_non_null(f->ctx);
  gb_init(&f->b);
  eddy_buf_init(&f->text);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture_t *f = *state;
  eddy_buf_destroy(&f->text);
  gb_free(&f->b);
  eddy_ir_ctx_destroy(f->ctx);
  free(f);
  return 0;
}

static eddy_status_t import(fixture_t *f, const eddy_tf_import_opts_t *o,
                            eddy_module_t **m) {
  size_t len;
  uint8_t *data = gb_pack(&f->b, &len);
  return eddy_tf_import_graphdef_bytes(f->ctx, "g.pb", data, len, o, m);
}

/// Imports, checks that the text parses back to the same text, and returns
/// the text.
static const char *import_ok(fixture_t *f, const eddy_tf_import_opts_t *o) {
  eddy_module_t *m = NULL;
  eddy_status_t st = import(f, o, &m);
  if (st)
    fail_msg("import failed: %s: %s", eddy_status_location(st),
             eddy_status_message(st));
  eddy_buf_clear(&f->text);
  eddy_ir_module_print(m, NULL, &f->text);
  eddy_module_t *m2 = NULL;
  st = eddy_ir_parse_module(f->ctx, "printed", f->text.data, f->text.len, &m2);
  if (st)
    fail_msg("reparse failed: %s\n%s", eddy_status_message(st), f->text.data);
  assert_null(eddy_ir_verify_module(m2));
  eddy_buf_t again;
  eddy_buf_init(&again);
  eddy_ir_module_print(m2, NULL, &again);
  assert_string_equal(again.data, f->text.data);
  eddy_buf_destroy(&again);
  eddy_ir_module_destroy(m2);
  eddy_ir_module_destroy(m);
  return f->text.data;
}

static void expect_in(const char *text, const char *want) {
  if (!strstr(text, want))
    fail_msg("missing '%s' in:\n%s", want, text);
}

/// Imports and expects an error located at loc whose message has want.
static void import_fails(fixture_t *f, const eddy_tf_import_opts_t *o,
                         const char *loc, const char *want) {
  eddy_module_t *m = (eddy_module_t *)1;
  eddy_status_t st = import(f, o, &m);
  assert_non_null(st);
  assert_null(m);
  if (!strstr(eddy_status_message(st), want))
    fail_msg("message '%s' lacks '%s'", eddy_status_message(st), want);
  assert_string_equal(eddy_status_location(st), loc);
  eddy_status_destroy(st);
}

static const int64_t k3[] = {3};

static void test_simple(void **state) {
  fixture_t *f = *state;
  gb_placeholder(&f->b, "x", DT(FLOAT), k3, 1);
  Tensorflow__NodeDef *y = gb_op(&f->b, "y", "Tanh", "x", DT(FLOAT));
  gb_attr(&f->b, y, "_class", gb_string(&f->b, "loc:@x"));
  const char *t = import_ok(f, NULL);
  // The argument and result are named after the Placeholder and the fetch.
  expect_in(t, "func.func @main(%arg0: tensor<3xf32>) -> tensor<3xf32> "
               "attributes {arg_names = [\"x\"], result_names = "
               "[\"y:0\"]} {");
  expect_in(t, "%0 = \"tf.Tanh\"(%arg0) {T = \"f32\", tf._class = "
               "\"loc:@x\"} : (tensor<3xf32>) -> tensor<3xf32>");
  expect_in(t, "\"func.return\"(%0)");

  // Locations are the node names.
  eddy_module_t *m;
  assert_null(import(f, NULL, &m));
  eddy_print_opts_t po = {.locations = true};
  eddy_buf_clear(&f->text);
  eddy_ir_module_print(m, &po, &f->text);
  expect_in(f->text.data, "-> tensor<3xf32> loc(\"y\")");
  eddy_ir_module_destroy(m);
}

static void test_feeds_fetches(void **state) {
  fixture_t *f = *state;
  gb_placeholder(&f->b, "a", DT(FLOAT), k3, 1);
  gb_placeholder(&f->b, "b", DT(INT32), NULL, 0);
  gb_op(&f->b, "sw", "Switch", "a,p", DT(FLOAT));
  Tensorflow__NodeDef *p = gb_node(&f->b, "p", "Placeholder", "");
  gb_attr(&f->b, p, "dtype", gb_type(&f->b, DT(BOOL)));
  gb_op(&f->b, "u", "Neg", "sw:1", DT(FLOAT));

  // Default: every Placeholder, in node order; every sink output.
  const char *t = import_ok(f, NULL);
  expect_in(t, "@main(%arg0: tensor<3xf32>, %arg1: tensor<i32>, %arg2: "
               "tensor<*xi1>) -> tensor<3xf32>");
  // Explicit feeds and fetches, in the given order.
  const char *feeds[] = {"p", "a"};
  const char *fetches[] = {"u", "sw:0", "sw:1"};
  eddy_tf_import_opts_t o = {.feeds = feeds,
                             .num_feeds = 2,
                             .fetches = fetches,
                             .num_fetches = 3,
                             .func_name = "g"};
  // b is a Placeholder but not fed: an error.
  import_fails(f, &o, "g.pb: node 'b'", "Placeholder is not fed");
  // With pruning, b is not needed.
  o.prune = true;
  t = import_ok(f, &o);
  expect_in(t, "func.func @g(%arg0: tensor<*xi1>, %arg1: tensor<3xf32>) -> "
               "(tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)");
  expect_in(t, "\"func.return\"(%1, %0#0, %0#1)");

  const char *bad_feed[] = {"u"};
  eddy_tf_import_opts_t o2 = {.feeds = bad_feed, .num_feeds = 1};
  import_fails(f, &o2, "g.pb: node 'u'",
               "feed 'u' is a Neg node; only Placeholders can be fed");
  bad_feed[0] = "nope";
  import_fails(f, &o2, "g.pb", "feed 'nope' names no node of the graph");
  const char *twice[] = {"a", "a"};
  o2.feeds = twice;
  o2.num_feeds = 2;
  import_fails(f, &o2, "g.pb: node 'a'", "'a' is fed twice");

  const char *bad_fetch[] = {"sw:2"};
  eddy_tf_import_opts_t o3 = {.fetches = bad_fetch, .num_fetches = 1};
  import_fails(f, &o3, "g.pb: node 'sw'",
               "fetch 'sw:2': the node (Switch) has 2 outputs");
  bad_fetch[0] = "sw:x";
  import_fails(f, &o3, "g.pb", "fetch 'sw:x' has a malformed output index");
  bad_fetch[0] = "zz";
  import_fails(f, &o3, "g.pb", "fetch 'zz' names no node of the graph");
}

static void test_control_edges(void **state) {
  fixture_t *f = *state;
  gb_placeholder(&f->b, "x", DT(FLOAT), k3, 1);
  gb_op(&f->b, "y", "Tanh", "x", DT(FLOAT));
  gb_node(&f->b, "n", "NoOp", "^y,^x");
  gb_const(&f->b, "c", DT(FLOAT), 2.0, "^n");
  gb_op(&f->b, "z", "Mul", "y,c,^n", DT(FLOAT));
  const char *t = import_ok(f, NULL);
  // NoOp: its control inputs as operands, a token as its result.
  expect_in(t, "%1 = \"df.control\"(%0) : (tensor<3xf32>) -> !df.token");
  expect_in(t, "%2 = \"df.control\"(%arg0) : (tensor<3xf32>) -> !df.token");
  expect_in(t, "%3 = \"tf.NoOp\"(%1, %2) : (!df.token, !df.token) -> "
               "!df.token");
  // Const has no data input: its output waits on the token.
  expect_in(t, "%5 = \"df.after\"(%4, %3) : (tensor<f32>, !df.token) -> "
               "tensor<f32>");
  // Mul waits through its first data input.
  expect_in(t, "%6 = \"df.after\"(%0, %3) : (tensor<3xf32>, !df.token) -> "
               "tensor<3xf32>");
  expect_in(t, "%7 = \"tf.Mul\"(%6, %5)");
  // The NoOp is no sink (it has no outputs), z is.
  expect_in(t, "\"func.return\"(%7)");
}

/// while (i < 5) i = i + 1, in v1 control flow.
static void build_v1_loop(gb_t *b) {
  gb_const(b, "i0", DT(INT32), 0, "");
  Tensorflow__NodeDef *e = gb_op(b, "w/Enter", "Enter", "i0", DT(INT32));
  gb_attr(b, e, "frame_name", gb_string(b, "w"));
  Tensorflow__NodeDef *m =
      gb_op(b, "w/Merge", "Merge", "w/Enter,w/NextIteration", DT(INT32));
  gb_attr(b, m, "N", gb_int(b, 2));
  gb_const(b, "w/limit", DT(INT32), 5, "^w/Merge");
  gb_op(b, "w/Less", "Less", "w/Merge,w/limit", DT(INT32));
  gb_node(b, "w/LoopCond", "LoopCond", "w/Less");
  gb_op(b, "w/Switch", "Switch", "w/Merge,w/LoopCond", DT(INT32));
  gb_op(b, "w/Identity", "Identity", "w/Switch:1", DT(INT32));
  gb_const(b, "w/one", DT(INT32), 1, "^w/Identity");
  gb_op(b, "w/add", "AddV2", "w/Identity,w/one", DT(INT32));
  gb_op(b, "w/NextIteration", "NextIteration", "w/add", DT(INT32));
  gb_op(b, "w/Exit", "Exit", "w/Switch", DT(INT32));
  gb_node(b, "w/sync", "NoOp", "^w/Switch");
}

static void test_v1_loop(void **state) {
  fixture_t *f = *state;
  build_v1_loop(&f->b);
  const char *t = import_ok(f, NULL);
  // The Merge reads the NextIteration defined after it: the back edge. With
  // no declared shapes, the loop value's shape is left open.
  expect_in(t, "%2:2 = \"tf.Merge\"(%1, %14) {N = 2, T = \"i32\"} : "
               "(tensor<i32>, tensor<*xi32>) -> (tensor<*xi32>, "
               "tensor<i32>)");
  expect_in(t, "%14 = \"tf.NextIteration\"(%13)");
  expect_in(t, "%15 = \"tf.Exit\"(%8#0)");
  // Control outputs: the Merge's outputs, the Identity's; the Switch's is
  // made from its inputs (one of its outputs is always dead).
  expect_in(t, "%3 = \"df.control\"(%2#0, %2#1)");
  expect_in(t, "%10 = \"df.control\"(%9)");
  expect_in(t, "%16 = \"df.control\"(%2#0, %7)");
  expect_in(t, "%17 = \"tf.NoOp\"(%16)");
}

/// "_output_shapes": n copies of the shape dims (the first), then scalars.
static Tensorflow__AttrValue *output_shapes(gb_t *b, const int64_t *dims,
                                            size_t rank, size_t n) {
  Tensorflow__AttrValue *v = gb_value(b, TENSORFLOW__ATTR_VALUE__VALUE_LIST);
  v->list = gb_alloc(b, sizeof *v->list);
  tensorflow__attr_value__list_value__init(v->list);
  v->list->shape = gb_alloc(b, n * sizeof(void *));
  for (size_t i = 0; i < n; i++)
    v->list->shape[i] = gb_shape_proto(b, dims, i == 0 ? rank : 0);
  v->list->n_shape = n;
  return v;
}

static void test_v1_loop_widens_merge(void **state) {
  fixture_t *f = *state;
  // x: [3] enters; the body concatenates, so the back edge is [?].
  gb_placeholder(&f->b, "x", DT(FLOAT), k3, 1);
  Tensorflow__NodeDef *e = gb_op(&f->b, "Enter", "Enter", "x", DT(FLOAT));
  gb_attr(&f->b, e, "frame_name", gb_string(&f->b, "w"));
  Tensorflow__NodeDef *m = gb_op(&f->b, "Merge", "Merge", "Enter,Next",
                                 DT(FLOAT));
  gb_placeholder(&f->b, "p", DT(BOOL), NULL, 0);
  gb_op(&f->b, "Switch", "Switch", "Merge,p", DT(FLOAT));
  Tensorflow__NodeDef *r = gb_op(&f->b, "Grow", "Reshape", "Switch:1,p",
                                 DT(FLOAT));
  int64_t dyn[] = {-1};
  gb_attr(&f->b, r, "_output_shapes", output_shapes(&f->b, dyn, 1, 1));
  // The Merge declares [3]: the back edge must widen it.
  gb_attr(&f->b, m, "_output_shapes", output_shapes(&f->b, k3, 1, 2));
  gb_op(&f->b, "Next", "NextIteration", "Grow", DT(FLOAT));
  gb_op(&f->b, "Exit", "Exit", "Switch", DT(FLOAT));
  const char *t = import_ok(f, NULL);
  expect_in(t, "%1:2 = \"tf.Merge\"(%0, %4) {T = \"f32\"} : "
               "(tensor<3xf32>, tensor<?xf32>) -> (tensor<?xf32>, "
               "tensor<i32>)");
  expect_in(t, "%3 = \"tf.Reshape\"(%2#1, %arg1) {T = \"f32\"} : "
               "(tensor<3xf32>, tensor<i1>) -> tensor<?xf32>");
  // _output_shapes is used for the type, not kept as an attribute.
  assert_null(strstr(t, "_output_shapes"));
}

static void test_graph_errors(void **state) {
  fixture_t *f = *state;
  gb_placeholder(&f->b, "x", DT(FLOAT), k3, 1);
  gb_op(&f->b, "a", "AddV2", "x,c", DT(FLOAT));
  gb_op(&f->b, "b", "Tanh", "a", DT(FLOAT));
  gb_op(&f->b, "c", "Sigmoid", "b", DT(FLOAT));
  import_fails(f, NULL, "g.pb: node 'a'",
               "cycle that does not pass through a NextIteration -> Merge "
               "back edge: 'a' -> 'b' -> 'c' -> 'a'");
  // A NextIteration -> Merge edge is a back edge, any other is not.
  f->b.g.node[3]->op = "NextIteration";
  import_fails(f, NULL, "g.pb: node 'a'", "'a' -> 'b' -> 'c' -> 'a'");
  f->b.g.node[1]->op = "Merge";
  assert_non_null(import_ok(f, NULL));

  f->b.g.node[2]->input[0] = "a:x";
  import_fails(f, NULL, "g.pb: node 'b'",
               "input 'a:x' has a malformed output index");
  f->b.g.node[2]->input[0] = "^a";
  f->b.g.node[2]->n_input = 2;
  f->b.g.node[2]->input[1] = "x";
  import_fails(f, NULL, "g.pb: node 'b'",
               "data input 'x' comes after a control input");
  f->b.g.node[2]->n_input = 1;
  f->b.g.node[2]->input[0] = "";
  import_fails(f, NULL, "g.pb: node 'b'", "input '' names no node");
  f->b.g.node[2]->input[0] = "a";
  f->b.g.node[2]->name = "";
  import_fails(f, NULL, "g.pb", "node #2 has no name");
  f->b.g.node[2]->name = "b";
  f->b.g.node[2]->op = "";
  import_fails(f, NULL, "g.pb: node 'b'", "the node has no op");
}

static void test_unsupported_ops(void **state) {
  fixture_t *f = *state;
  gb_placeholder(&f->b, "x", DT(FLOAT), k3, 1);
  char name[32];
  for (int i = 0; i < 10; i++) {
    snprintf(name, sizeof name, "f%d", i);
    gb_node(&f->b, name, "Fancy", "x");
  }
  gb_node(&f->b, "o", "Other", "x");
  import_fails(f, NULL, "g.pb",
               "unsupported TensorFlow ops: Fancy (nodes 'f0', 'f1', 'f2', "
               "'f3', 'f4', 'f5', 'f6', 'f7' and 2 more); Other (node 'o')");
}

static void test_types(void **state) {
  fixture_t *f = *state;
  gb_placeholder(&f->b, "x", DT(FLOAT), k3, 1);
  Tensorflow__NodeDef *s = gb_op(&f->b, "s", "Split", "d,x", DT(FLOAT));
  gb_attr(&f->b, s, "num_split", gb_int(&f->b, 3));
  gb_const(&f->b, "d", DT(INT32), 0, "");
  Tensorflow__NodeDef *l = gb_node(&f->b, "l", "TensorListFromTensor", "x,d");
  gb_attr(&f->b, l, "element_dtype", gb_type(&f->b, DT(FLOAT)));
  gb_attr(&f->b, l, "shape_type", gb_type(&f->b, DT(INT32)));
  Tensorflow__NodeDef *p = gb_node(&f->b, "p", "TensorListPopBack", "l,d");
  gb_attr(&f->b, p, "element_dtype", gb_type(&f->b, DT(FLOAT)));
  Tensorflow__NodeDef *st = gb_node(&f->b, "st", "StackV2", "d");
  gb_attr(&f->b, st, "elem_type", gb_type(&f->b, DT(FLOAT)));
  gb_op(&f->b, "push", "StackPushV2", "st,x", DT(FLOAT));
  Tensorflow__NodeDef *c = gb_op(&f->b, "c", "Cast", "x", -1);
  gb_attr(&f->b, c, "SrcT", gb_type(&f->b, DT(FLOAT)));
  gb_attr(&f->b, c, "DstT", gb_type(&f->b, DT(INT64)));
  const char *t = import_ok(f, NULL);
  expect_in(t, "\"tf.Split\"(%0, %arg0) {T = \"f32\", num_split = 3} : "
               "(tensor<i32>, tensor<3xf32>) -> (tensor<*xf32>, "
               "tensor<*xf32>, tensor<*xf32>)");
  expect_in(t, "-> !tl.list<tensor<*xf32>>");
  expect_in(t, "\"tf.TensorListPopBack\"(%2, %0) {element_dtype = \"f32\"} "
               ": (!tl.list<tensor<*xf32>>, tensor<i32>) -> "
               "(!tl.list<tensor<*xf32>>, tensor<*xf32>)");
  expect_in(t, "\"tf.StackPushV2\"(%4, %arg0) {T = \"f32\"} : "
               "(!tl.list<tensor<*xf32>>, tensor<3xf32>) -> tensor<3xf32>");
  expect_in(t, "\"tf.Cast\"(%arg0) {DstT = \"i64\", SrcT = \"f32\"} : "
               "(tensor<3xf32>) -> tensor<3xi64>");

  // A list of lists cannot be typed yet.
  gb_attr(&f->b, l, "element_dtype", gb_type(&f->b, DT(VARIANT)));
  import_fails(f, NULL, "g.pb: node 'l'",
               "TensorList of TensorLists or optionals");
  gb_attr(&f->b, l, "element_dtype", gb_type(&f->b, DT(FLOAT)));
  gb_attr(&f->b, s, "num_split", gb_int(&f->b, 1 << 20));
  import_fails(f, NULL, "g.pb: node 's'",
               "attribute 'num_split' is 1048576 (at most 65536)");
  gb_attr(&f->b, s, "num_split", gb_int(&f->b, 2));
  gb_attr(&f->b, c, "DstT", gb_type(&f->b, DT(STRING)));
  import_fails(f, NULL, "g.pb: node 'c'",
               "output #0 has dtype string, which eddy does not support");
  c->n_attr = 0;
  import_fails(f, NULL, "g.pb: node 'c'",
               "Cast needs the type attribute 'DstT'");
}

/// A FunctionDef library: main calls While(cond, body) and an If, and a
/// function called by name; body uses "node:out_arg:i" inputs.
static void build_functions(gb_t *b) {
  const char *in1[] = {"i", "v"};
  const int dt1[] = {DT(INT32), DT(FLOAT)};
  const char *out_c[] = {"r"};
  const int dt_c[] = {DT(BOOL)};
  Tensorflow__FunctionDef *cond =
      gb_function(b, "cond", in1, dt1, 2, out_c, dt_c, 1);
  gb_fnode(b, cond, "lim", "Const", "", -1);
  Tensorflow__NodeDef *lim = cond->node_def[0];
  gb_attr(b, lim, "dtype", gb_type(b, DT(INT32)));
  gb_attr(b, lim, "value", gb_scalar(b, DT(INT32), 4));
  gb_fnode(b, cond, "less", "Less", "i,lim:output:0", DT(INT32));
  gb_ret(b, cond, "r", "less:z:0");

  const char *out_b[] = {"i2", "v2"};
  Tensorflow__FunctionDef *body =
      gb_function(b, "body", in1, dt1, 2, out_b, dt1, 2);
  Tensorflow__NodeDef *one = gb_fnode(b, body, "one", "Const", "^v", -1);
  gb_attr(b, one, "dtype", gb_type(b, DT(INT32)));
  gb_attr(b, one, "value", gb_scalar(b, DT(INT32), 1));
  gb_fnode(b, body, "add", "AddV2", "i,one:output:0", DT(INT32));
  Tensorflow__NodeDef *sp = gb_fnode(b, body, "split", "Split",
                                     "one:output:0,v", DT(FLOAT));
  gb_attr(b, sp, "num_split", gb_int(b, 1));
  gb_fnode(b, body, "tanh", "helper", "split:output:0", -1);
  gb_ret(b, body, "i2", "add:z:0");
  gb_ret(b, body, "v2", "tanh:y:0");

  const char *in_h[] = {"a"};
  const int dt_h[] = {DT(FLOAT)};
  const char *out_h[] = {"y"};
  Tensorflow__FunctionDef *helper =
      gb_function(b, "helper", in_h, dt_h, 1, out_h, dt_h, 1);
  gb_fnode(b, helper, "t", "Tanh", "a", DT(FLOAT));
  gb_ret(b, helper, "y", "t:y:0");

  gb_placeholder(b, "x", DT(FLOAT), k3, 1);
  gb_const(b, "zero", DT(INT32), 0, "");
  Tensorflow__NodeDef *w = gb_node(b, "w", "StatelessWhile", "zero,x");
  const int types[] = {DT(INT32), DT(FLOAT)};
  gb_attr(b, w, "T", gb_type_list(b, types, 2));
  gb_attr(b, w, "cond", gb_func(b, "cond"));
  gb_attr(b, w, "body", gb_func(b, "body"));
  gb_attr(b, w, "parallel_iterations", gb_int(b, 10));
  gb_attr(b, w, "_lower_using_switch_merge", gb_value(b, 0));
}

static void test_functions(void **state) {
  fixture_t *f = *state;
  build_functions(&f->b);
  const char *t = import_ok(f, NULL);
  expect_in(t, "%1:2 = \"tf.StatelessWhile\"(%0, %arg0) {T = [\"i32\", "
               "\"f32\"], body = @body, cond = @cond, parallel_iterations = "
               "10} : (tensor<i32>, tensor<3xf32>) -> (tensor<i32>, "
               "tensor<3xf32>)");
  expect_in(t, "func.func @cond(%arg0: tensor<i32>, %arg1: tensor<3xf32>) "
               "-> tensor<*xi1>");
  expect_in(t, "func.func @body(%arg0: tensor<i32>, %arg1: tensor<3xf32>) "
               "-> (tensor<*xi32>, tensor<*xf32>)");
  // "^v": a control input from an argument.
  expect_in(t, "\"df.control\"(%arg1)");
  // A function called by name.
  expect_in(t, "\"tf.LegacyCall\"(%4) {f = @helper} : (tensor<*xf32>) -> "
               "tensor<*xf32>");
  expect_in(t, "func.func @helper(%arg0: tensor<*xf32>) -> tensor<*xf32>");
}

static void test_function_errors(void **state) {
  fixture_t *f = *state;
  build_functions(&f->b);
  Tensorflow__FunctionDef *body = f->b.lib.function[1];
  body->ret[1]->value = "tanh:out:0";
  import_fails(f, NULL, "g.pb: function 'body'",
               "output 'v2': input 'tanh:out:0': node 'tanh' (helper) has no "
               "output named 'out'");
  body->ret[1]->value = "tanh:y:1";
  import_fails(f, NULL, "g.pb: function 'body'",
               "input 'tanh:y:1': output 'y' of node 'tanh' has 1 element");
  body->n_ret = 1;
  import_fails(f, NULL, "g.pb: function 'body'",
               "output 'v2' has no entry in the function's ret map");
  body->n_ret = 2;
  body->ret[1]->value = "tanh:y:0";

  // Recursion: helper calls body, which calls helper.
  Tensorflow__FunctionDef *helper = f->b.lib.function[2];
  helper->node_def[0]->op = "body";
  import_fails(f, NULL, "g.pb: function 'body'",
               "functions call each other in a cycle (body -> helper -> "
               "body)");
  helper->node_def[0]->op = "helper";
  import_fails(f, NULL, "g.pb: function 'helper'",
               "the function calls itself (helper -> helper)");
  helper->node_def[0]->op = "Tanh";

  f->b.g.node[2]->attr[2]->value->func->name = "nobody";
  import_fails(f, NULL, "g.pb: node 'w'",
               "function 'nobody' (attribute 'body') is not in the graph's "
               "library");
  f->b.g.node[2]->attr[2]->value->func->name = "body";
  helper->signature->input_arg[0]->type_attr = "T";
  import_fails(f, NULL, "g.pb: function 'helper'",
               "argument 'a' has a polymorphic type");
  helper->signature->input_arg[0]->type_attr = "";
  f->b.g.node[2]->n_input = 1;
  import_fails(f, NULL, "g.pb: node 'w'",
               "function 'cond' takes 2 arguments, the node passes 1");
  f->b.g.node[2]->n_input = 2;

  const char *name[] = {"helper"};
  eddy_tf_import_opts_t o = {.func_name = name[0]};
  import_fails(f, &o, "g.pb",
               "the library has a function called 'helper', the name of the "
               "graph's function");
  Tensorflow__FunctionDef *dup = f->b.lib.function[0];
  f->b.lib.function[f->b.lib.n_function++] = dup;
  import_fails(f, NULL, "g.pb",
               "function 'cond' is defined twice in the library");
}

static void test_bad_bytes(void **state) {
  fixture_t *f = *state;
  eddy_module_t *m;
  eddy_status_t st =
      eddy_tf_import_graphdef_bytes(f->ctx, "e.pb", "", 0, NULL, &m);
  assert_non_null(st);
  assert_string_equal(eddy_status_message(st),
                      "the GraphDef has no nodes (empty file, or not a "
                      "GraphDef?)");
  eddy_status_destroy(st);
  st = eddy_tf_import_graphdef(f->ctx, "/nonexistent/model.pb", NULL, &m);
  assert_non_null(st);
  assert_int_equal(eddy_status_code(st), EDDY_ERR_IO);
  assert_string_equal(eddy_status_location(st), "/nonexistent/model.pb");
  eddy_status_destroy(st);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_simple, setup, teardown),
      cmocka_unit_test_setup_teardown(test_feeds_fetches, setup, teardown),
      cmocka_unit_test_setup_teardown(test_control_edges, setup, teardown),
      cmocka_unit_test_setup_teardown(test_v1_loop, setup, teardown),
      cmocka_unit_test_setup_teardown(test_v1_loop_widens_merge, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_graph_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unsupported_ops, setup, teardown),
      cmocka_unit_test_setup_teardown(test_types, setup, teardown),
      cmocka_unit_test_setup_teardown(test_functions, setup, teardown),
      cmocka_unit_test_setup_teardown(test_function_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bad_bytes, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

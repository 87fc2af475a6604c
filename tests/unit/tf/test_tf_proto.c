/// Unit tests of GraphDef reading (dialects/tf/tf_proto.c) and of the
/// importer's op table (dialects/tf/tf_ops.c).
#include "tests/unit/tf/tf_test_util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#define DT(x) TENSORFLOW__DATA_TYPE__DT_##x

static void expect_error(eddy_status_t st, const char *want) {
  assert_non_null(st);
  if (!strstr(eddy_status_message(st), want))
    fail_msg("message '%s' lacks '%s'", eddy_status_message(st), want);
  assert_string_equal(eddy_status_location(st), "g.pb");
  eddy_status_destroy(st);
}

static void test_op_table(void **state) {
  (void)state;
  size_t n;
  const eddy_tf_op_info_t *all = eddy_tf_op_info_all(&n);
  assert_true(n > 100);
  for (size_t i = 1; i < n; i++)
    if (strcmp(all[i - 1].name, all[i].name) >= 0)
      fail_msg("op table not sorted: '%s' before '%s'", all[i - 1].name,
               all[i].name);
  for (size_t i = 0; i < n; i++)
    assert_ptr_equal(eddy_tf_op_info(all[i].name), &all[i]);
  assert_null(eddy_tf_op_info("FancyOp"));
  assert_null(eddy_tf_op_info(""));

  const eddy_tf_op_info_t *m = eddy_tf_op_info("Merge");
  assert_non_null(m);
  assert_int_equal(m->num_outs, 2);
  assert_string_equal(m->outs[0].name, "output");
  assert_string_equal(m->outs[1].name, "value_index");
  const eddy_tf_op_info_t *pop = eddy_tf_op_info("TensorListPopBack");
  assert_string_equal(pop->outs[0].name, "output_handle");
  assert_int_equal(pop->outs[0].kind, EDDY_TF_OUT_LIST);
  assert_string_equal(pop->outs[1].name, "tensor");
  assert_int_equal(eddy_tf_op_info("StatelessWhile")->call, EDDY_TF_CALL_LOOP);
  assert_int_equal(eddy_tf_op_info("If")->call, EDDY_TF_CALL_BRANCH);
  assert_int_equal(eddy_tf_op_info("NoOp")->num_outs, 0);
}

static void test_unpack_roundtrip(void **state) {
  (void)state;
  gb_t b;
  gb_init(&b);
  int64_t dims[] = {3};
  gb_placeholder(&b, "x", DT(FLOAT), dims, 1);
  Tensorflow__NodeDef *y = gb_op(&b, "y", "Tanh", "x", DT(FLOAT));
  gb_attr(&b, y, "_class", gb_string(&b, "loc:@x"));
  size_t len;
  uint8_t *data = gb_pack(&b, &len);
  Tensorflow__GraphDef *gd;
  assert_null(eddy_tf_graphdef_unpack("g.pb", data, len, &gd));
  assert_int_equal(gd->n_node, 2);
  assert_string_equal(gd->node[1]->op, "Tanh");
  assert_string_equal(gd->node[1]->input[0], "x");
  const Tensorflow__AttrValue *t =
      eddy_tf_attr_find(gd->node[1]->attr, gd->node[1]->n_attr, "T");
  assert_non_null(t);
  assert_int_equal(t->type, DT(FLOAT));
  assert_null(eddy_tf_attr_find(gd->node[1]->attr, gd->node[1]->n_attr, "U"));
  eddy_tf_graphdef_free(gd);

  // Unknown fields (here field 15, a varint, and field 16, bytes, at the
  // top level) are skipped.
  uint8_t *more = gb_alloc(&b, len + 5);
  memcpy(more, data, len);
  memcpy(more + len, "\x78\x05\x82\x01\x00", 5);
  assert_null(eddy_tf_graphdef_unpack("g.pb", more, len + 5, &gd));
  assert_int_equal(gd->n_node, 2);
  eddy_tf_graphdef_free(gd);

  // A repeated key in an attribute map: the last entry wins.
  gb_attr(&b, y, "T", gb_type(&b, DT(DOUBLE)));
  data = gb_pack(&b, &len);
  assert_null(eddy_tf_graphdef_unpack("g.pb", data, len, &gd));
  t = eddy_tf_attr_find(gd->node[1]->attr, gd->node[1]->n_attr, "T");
  assert_int_equal(t->type, DT(DOUBLE));
  eddy_tf_graphdef_free(gd);
  gb_free(&b);
}

static void test_packed_and_unpacked_lists(void **state) {
  (void)state;
  // NodeDef{name: "n", op: "Op", attr{key: "a", value{list{i: [1, 2]}}}}
  // with the ints written unpacked (two varint fields), then packed.
  static const uint8_t unpacked[] = {
      0x0a, 0x14, 0x0a, 0x01, 'n',  0x12, 0x02, 'O',  'p',  0x2a, 0x0b,
      0x0a, 0x01, 'a',  0x12, 0x06, 0x0a, 0x04, 0x18, 0x01, 0x18, 0x02};
  static const uint8_t packed[] = {
      0x0a, 0x14, 0x0a, 0x01, 'n',  0x12, 0x02, 'O',  'p',  0x2a, 0x0b,
      0x0a, 0x01, 'a',  0x12, 0x06, 0x0a, 0x04, 0x1a, 0x02, 0x01, 0x02};
  const uint8_t *bufs[2] = {unpacked, packed};
  for (int k = 0; k < 2; k++) {
    Tensorflow__GraphDef *gd;
    assert_null(eddy_tf_graphdef_unpack("g.pb", bufs[k], sizeof unpacked, &gd));
    assert_string_equal(gd->node[0]->op, "Op");
    const Tensorflow__AttrValue *a =
        eddy_tf_attr_find(gd->node[0]->attr, gd->node[0]->n_attr, "a");
    assert_int_equal(a->value_case, TENSORFLOW__ATTR_VALUE__VALUE_LIST);
    assert_int_equal(a->list->n_i, 2);
    assert_int_equal(a->list->i[0], 1);
    assert_int_equal(a->list->i[1], 2);
    eddy_tf_graphdef_free(gd);
  }
}

static void test_malformed(void **state) {
  (void)state;
  Tensorflow__GraphDef *gd = (Tensorflow__GraphDef *)1;
  // A length that runs past the end.
  static const uint8_t trunc[] = {0x0a, 0x10, 0x0a, 0x01, 'n'};
  expect_error(eddy_tf_graphdef_unpack("g.pb", trunc, sizeof trunc, &gd),
               "at byte 0 of 5, field 1: its length runs past the end");
  assert_null(gd);
  // A varint that never ends.
  static const uint8_t endless[] = {0x18, 0xff, 0xff, 0xff};
  expect_error(eddy_tf_graphdef_unpack("g.pb", endless, sizeof endless, &gd),
               "field 3: the data ends inside a varint");
  // Field number 0 is not protobuf.
  static const uint8_t zero[] = {0x00, 0x01};
  expect_error(eddy_tf_graphdef_unpack("g.pb", zero, sizeof zero, &gd),
               "field number is out of range");
  // Wire types 3, 4 (groups) and 6, 7 do not occur in GraphDefs.
  static const uint8_t group[] = {0x0b, 0x0c};
  expect_error(eddy_tf_graphdef_unpack("g.pb", group, sizeof group, &gd),
               "field 1 (node of tensorflow.GraphDef) is an invalid wire "
               "type");
  // Another message: GraphDef.node (field 1) must be length-delimited.
  static const uint8_t other[] = {0x08, 0x01};
  expect_error(eddy_tf_graphdef_unpack("g.pb", other, sizeof other, &gd),
               "field 1 (node of tensorflow.GraphDef) is a varint, expected "
               "a length-delimited value");
  // A nested field with the wrong wire type: NodeDef.name as a fixed32.
  static const uint8_t inner[] = {0x0a, 0x05, 0x0d, 0x01, 0x02, 0x03, 0x04};
  expect_error(eddy_tf_graphdef_unpack("g.pb", inner, sizeof inner, &gd),
               "at byte 2 of 7, field 1 (name of tensorflow.NodeDef) is a "
               "32-bit value");
}

/// Appends a length-delimited field.
static size_t put_field(uint8_t *out, unsigned num, const uint8_t *payload,
                        size_t len) {
  size_t n = 0;
  out[n++] = (uint8_t)(num << 3 | 2);
  size_t l = len;
  do {
    out[n++] = (uint8_t)((l & 0x7f) | (l > 0x7f ? 0x80 : 0));
    l >>= 7;
  } while (l);
  memmove(out + n, payload, len);
  return n + len;
}

static void test_depth_limit(void **state) {
  (void)state;
  // AttrValue{func: NameAttrList{attr: AttrEntry{value: AttrValue{...}}}},
  // nested so deep that protobuf-c would recurse thousands of times.
  size_t cap = 1 << 16;
  uint8_t *a = calloc(1, cap), *b = calloc(1, cap);
  assert_non_null(a);
  assert_non_null(b);
  size_t len = 0;
  for (int level = 0; level < 2000; level++) {
    size_t n = put_field(b, 2, a, len);        // AttrEntry.value
    n = put_field(a, 2, b, n);                 // NameAttrList.attr
    len = put_field(b, 10, a, n);              // AttrValue.func
    memcpy(a, b, len);
    assert_true(len + 16 < cap);
  }
  size_t n = put_field(b, 2, a, len);          // AttrEntry.value
  n = put_field(a, 5, b, n);                   // NodeDef.attr
  len = put_field(b, 1, a, n);                 // GraphDef.node
  Tensorflow__GraphDef *gd;
  expect_error(eddy_tf_graphdef_unpack("g.pb", b, len, &gd),
               "messages are nested more than 64 deep");
  free(a);
  free(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_op_table),
      cmocka_unit_test(test_unpack_roundtrip),
      cmocka_unit_test(test_packed_and_unpacked_lists),
      cmocka_unit_test(test_malformed),
      cmocka_unit_test(test_depth_limit),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

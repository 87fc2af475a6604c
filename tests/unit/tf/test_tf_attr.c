/// Unit tests of the TensorFlow attribute, tensor and dtype conversion
/// (dialects/tf/tf_attr.c): each TensorFlow value kind once, and each way a
/// constant can be malformed.
#include "dialects/tf/tf_internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define DT(x) TENSORFLOW__DATA_TYPE__DT_##x

typedef struct fixture {
  eddy_ctx_t *ctx;
  eddy_buf_t text;
} fixture_t;

static int setup(void **state) {
  fixture_t *f = calloc(1, sizeof *f);
  assert_non_null(f);
  f->ctx = eddy_ir_ctx_create();
  assert_non_null(f->ctx);
  eddy_tf_dialect_register(f->ctx);
  eddy_buf_init(&f->text);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture_t *f = *state;
  eddy_buf_destroy(&f->text);
  eddy_ir_ctx_destroy(f->ctx);
  free(f);
  return 0;
}

/// The attribute's text.
static const char *text(fixture_t *f, const eddy_attr_t *a) {
  eddy_buf_clear(&f->text);
  eddy_ir_attr_print(a, &f->text);
  return f->text.data;
}

/// Converts v; asserts success and returns the attribute's text.
static const char *convert_ok(fixture_t *f, const Tensorflow__AttrValue *v) {
  const eddy_attr_t *a = NULL;
  eddy_status_t st = eddy_tf_attr_convert(f->ctx, v, &a);
  if (st)
    fail_msg("unexpected error: %s", eddy_status_message(st));
  assert_non_null(a);
  return text(f, a);
}

/// Converts v; asserts an error whose message contains want.
static void convert_fails(fixture_t *f, const Tensorflow__AttrValue *v,
                          const char *want) {
  const eddy_attr_t *a = NULL;
  eddy_status_t st = eddy_tf_attr_convert(f->ctx, v, &a);
  assert_non_null(st);
  if (!strstr(eddy_status_message(st), want))
    fail_msg("message '%s' lacks '%s'", eddy_status_message(st), want);
  eddy_status_destroy(st);
  assert_null(a);
}

/// A shape proto over dims (storage owned by the caller).
typedef struct shape_buf {
  Tensorflow__TensorShapeProto shape;
  Tensorflow__TensorShapeProto__Dim dims[4];
  Tensorflow__TensorShapeProto__Dim *ptrs[4];
} shape_buf_t;

static Tensorflow__TensorShapeProto *make_shape(shape_buf_t *s,
                                                const int64_t *dims,
                                                size_t n) {
  tensorflow__tensor_shape_proto__init(&s->shape);
  for (size_t i = 0; i < n; i++) {
    tensorflow__tensor_shape_proto__dim__init(&s->dims[i]);
    s->dims[i].size = dims[i];
    s->ptrs[i] = &s->dims[i];
  }
  s->shape.n_dim = n;
  s->shape.dim = s->ptrs;
  return &s->shape;
}

static void test_dtypes(void **state) {
  (void)state;
  eddy_dtype_t dt;
  assert_true(eddy_tf_dtype_to_eddy(DT(FLOAT), &dt));
  assert_int_equal(dt, EDDY_DT_F32);
  assert_true(eddy_tf_dtype_to_eddy(DT(BOOL), &dt));
  assert_int_equal(dt, EDDY_DT_I1);
  assert_true(eddy_tf_dtype_to_eddy(DT(HALF), &dt));
  assert_int_equal(dt, EDDY_DT_F16);
  // Reference types are their base type.
  assert_true(eddy_tf_dtype_to_eddy(100 + DT(INT64), &dt));
  assert_int_equal(dt, EDDY_DT_I64);
  assert_false(eddy_tf_dtype_to_eddy(DT(STRING), &dt));
  assert_false(eddy_tf_dtype_to_eddy(DT(VARIANT), &dt));
  assert_string_equal(eddy_tf_dtype_name(DT(INT32)), "i32");
  assert_string_equal(eddy_tf_dtype_name(DT(BFLOAT16)), "bf16");
  assert_string_equal(eddy_tf_dtype_name(DT(STRING)), "string");
  assert_string_equal(eddy_tf_dtype_name(DT(RESOURCE)), "resource");
  assert_string_equal(eddy_tf_dtype_name(DT(UINT8)), "uint8");
  assert_string_equal(eddy_tf_dtype_name(999), "unknown");
}

static void test_scalar_attrs(void **state) {
  fixture_t *f = *state;
  Tensorflow__AttrValue v;
  tensorflow__attr_value__init(&v);
  const eddy_attr_t *a;
  assert_null(eddy_tf_attr_convert(f->ctx, &v, &a));
  assert_null(a); // unset: no attribute

  v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_I;
  v.i = -7;
  assert_string_equal(convert_ok(f, &v), "-7");
  v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_F;
  v.f = 1.5f;
  assert_string_equal(convert_ok(f, &v), "1.5 : f32");
  v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_B;
  v.b = 1;
  assert_string_equal(convert_ok(f, &v), "true");
  v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_TYPE;
  v.type = DT(FLOAT);
  assert_string_equal(convert_ok(f, &v), "\"f32\"");
  v.type = DT(VARIANT);
  assert_string_equal(convert_ok(f, &v), "\"variant\"");

  // Strings are bytes: an embedded NUL survives.
  v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_S;
  v.s.data = (uint8_t *)"a\0b";
  v.s.len = 3;
  assert_null(eddy_tf_attr_convert(f->ctx, &v, &a));
  assert_int_equal(a->kind, EDDY_ATTR_STRING);
  assert_int_equal(a->u.str.len, 3);
  assert_memory_equal(a->u.str.data, "a\0b", 3);
}

static void test_shape_attrs(void **state) {
  fixture_t *f = *state;
  shape_buf_t sb;
  int64_t dims[] = {2, -1, 0};
  Tensorflow__AttrValue v;
  tensorflow__attr_value__init(&v);
  v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_SHAPE;
  v.shape = make_shape(&sb, dims, 3);
  assert_string_equal(convert_ok(f, &v), "[2, -1, 0]");
  v.shape = make_shape(&sb, dims, 0);
  assert_string_equal(convert_ok(f, &v), "[]"); // a scalar
  v.shape->unknown_rank = 1;
  assert_string_equal(convert_ok(f, &v), "\"*\"");

  int64_t bad[] = {4, -5};
  v.shape = make_shape(&sb, bad, 2);
  convert_fails(f, &v, "dimension 1 of the shape is -5");

  // Shapes as types.
  const eddy_type_t *t;
  v.shape = make_shape(&sb, dims, 2);
  assert_null(eddy_tf_shape_type(f->ctx, v.shape, EDDY_DT_F32, &t));
  eddy_buf_clear(&f->text);
  eddy_ir_type_print(t, &f->text);
  assert_string_equal(f->text.data, "tensor<2x?xf32>");
  assert_null(eddy_tf_shape_type(f->ctx, NULL, EDDY_DT_I1, &t));
  assert_int_equal(t->rank, EDDY_RANK_UNKNOWN);
}

static void test_func_and_placeholder(void **state) {
  fixture_t *f = *state;
  Tensorflow__NameAttrList fn;
  tensorflow__name_attr_list__init(&fn);
  fn.name = "while_body_12";
  Tensorflow__AttrValue v;
  tensorflow__attr_value__init(&v);
  v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_FUNC;
  v.func = &fn;
  assert_string_equal(convert_ok(f, &v), "@while_body_12");
  fn.name = "";
  convert_fails(f, &v, "names no function");

  v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_PLACEHOLDER;
  v.placeholder = "T";
  convert_fails(f, &v, "polymorphic function");
}

static void test_list_attrs(void **state) {
  fixture_t *f = *state;
  Tensorflow__AttrValue__ListValue l;
  tensorflow__attr_value__list_value__init(&l);
  Tensorflow__AttrValue v;
  tensorflow__attr_value__init(&v);
  v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_LIST;
  v.list = &l;
  assert_string_equal(convert_ok(f, &v), "[]");

  Tensorflow__DataType types[] = {DT(INT32), DT(FLOAT), DT(VARIANT)};
  l.n_type = 3;
  l.type = types;
  assert_string_equal(convert_ok(f, &v), "[\"i32\", \"f32\", \"variant\"]");

  int64_t ints[] = {1, -2};
  l.n_i = 2;
  l.i = ints;
  convert_fails(f, &v, "mixes values of different kinds");
  l.n_type = 0;
  assert_string_equal(convert_ok(f, &v), "[1, -2]");

  l.n_i = 0;
  shape_buf_t sb;
  int64_t dims[] = {3, -1};
  Tensorflow__TensorShapeProto *shapes[] = {make_shape(&sb, dims, 2)};
  l.n_shape = 1;
  l.shape = shapes;
  assert_string_equal(convert_ok(f, &v), "[[3, -1]]");

  l.n_shape = 0;
  Tensorflow__NameAttrList b0, b1;
  tensorflow__name_attr_list__init(&b0);
  tensorflow__name_attr_list__init(&b1);
  b0.name = "branch0";
  b1.name = "branch1";
  Tensorflow__NameAttrList *funcs[] = {&b0, &b1};
  l.n_func = 2;
  l.func = funcs;
  assert_string_equal(convert_ok(f, &v), "[@branch0, @branch1]");
}

/// A TensorProto of dtype over dims (storage owned by the caller).
static Tensorflow__AttrValue *tensor_attr(Tensorflow__AttrValue *v,
                                          Tensorflow__TensorProto *t,
                                          shape_buf_t *sb, int dtype,
                                          const int64_t *dims, size_t n) {
  tensorflow__tensor_proto__init(t);
  t->dtype = dtype;
  t->tensor_shape = make_shape(sb, dims, n);
  tensorflow__attr_value__init(v);
  v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_TENSOR;
  v->tensor = t;
  return v;
}

static void test_tensors(void **state) {
  fixture_t *f = *state;
  Tensorflow__AttrValue v;
  Tensorflow__TensorProto t;
  shape_buf_t sb;

  // One value fills the shape (a splat).
  int64_t d23[] = {2, 3};
  float one[] = {1.5f};
  tensor_attr(&v, &t, &sb, DT(FLOAT), d23, 2);
  t.n_float_val = 1;
  t.float_val = one;
  assert_string_equal(convert_ok(f, &v), "dense<1.5> : tensor<2x3xf32>");

  // Fewer values than elements: the last one repeats.
  int64_t d4[] = {4};
  float two[] = {1.0f, 2.0f};
  tensor_attr(&v, &t, &sb, DT(FLOAT), d4, 1);
  t.n_float_val = 2;
  t.float_val = two;
  assert_string_equal(convert_ok(f, &v),
                      "dense<[1.0, 2.0, 2.0, 2.0]> : tensor<4xf32>");

  // No values: zeros.
  t.n_float_val = 0;
  assert_string_equal(convert_ok(f, &v), "dense<0.0> : tensor<4xf32>");

  // tensor_content: raw little-endian bytes.
  int32_t raw[] = {3, -1, 7, 0};
  tensor_attr(&v, &t, &sb, DT(INT32), d4, 1);
  t.tensor_content.data = (uint8_t *)raw;
  t.tensor_content.len = sizeof raw;
  assert_string_equal(convert_ok(f, &v), "dense<[3, -1, 7, 0]> : tensor<4xi32>");

  // A scalar (no shape), int8 through int_val, bools, int64, halfs.
  int32_t i8[] = {-3};
  tensor_attr(&v, &t, &sb, DT(INT8), NULL, 0);
  t.tensor_shape = NULL;
  t.n_int_val = 1;
  t.int_val = i8;
  assert_string_equal(convert_ok(f, &v), "dense<-3> : tensor<i8>");
  int64_t d2[] = {2};
  protobuf_c_boolean bools[] = {1, 0};
  tensor_attr(&v, &t, &sb, DT(BOOL), d2, 1);
  t.n_bool_val = 2;
  t.bool_val = bools;
  assert_string_equal(convert_ok(f, &v), "dense<[true, false]> : tensor<2xi1>");
  int64_t big[] = {(int64_t)1 << 40, -5};
  tensor_attr(&v, &t, &sb, DT(INT64), d2, 1);
  t.n_int64_val = 2;
  t.int64_val = big;
  assert_string_equal(convert_ok(f, &v),
                      "dense<[1099511627776, -5]> : tensor<2xi64>");
  int32_t halfs[] = {0x3C00}; // 1.0 in f16
  tensor_attr(&v, &t, &sb, DT(HALF), d2, 1);
  t.n_half_val = 1;
  t.half_val = halfs;
  assert_string_equal(convert_ok(f, &v), "dense<1.0> : tensor<2xf16>");

  // An empty tensor.
  int64_t d0[] = {0, 3};
  tensor_attr(&v, &t, &sb, DT(FLOAT), d0, 2);
  assert_string_equal(convert_ok(f, &v), "dense<> : tensor<0x3xf32>");
}

static void test_bad_tensors(void **state) {
  fixture_t *f = *state;
  Tensorflow__AttrValue v;
  Tensorflow__TensorProto t;
  shape_buf_t sb;
  int64_t d2[] = {2};
  float vals[] = {1, 2, 3};
  int32_t ints[] = {1, 2};

  tensor_attr(&v, &t, &sb, DT(FLOAT), d2, 1);
  t.n_float_val = 3;
  t.float_val = vals;
  convert_fails(f, &v, "3 values in float_val for 2 elements");

  tensor_attr(&v, &t, &sb, DT(FLOAT), d2, 1);
  t.n_int_val = 2;
  t.int_val = ints;
  convert_fails(f, &v, "dtype f32 but its values are in int_val");

  tensor_attr(&v, &t, &sb, DT(FLOAT), d2, 1);
  t.tensor_content.data = (uint8_t *)vals;
  t.tensor_content.len = 7;
  convert_fails(f, &v, "tensor_content has 7 bytes, but 2 elements of f32 "
                       "take 8");
  t.tensor_content.len = 8;
  t.n_float_val = 1;
  t.float_val = vals;
  convert_fails(f, &v, "both tensor_content and float_val");

  int64_t neg[] = {2, -1};
  tensor_attr(&v, &t, &sb, DT(FLOAT), neg, 2);
  convert_fails(f, &v, "dimension 1 of the shape is -1");

  int64_t huge[] = {(int64_t)1 << 40, (int64_t)1 << 40};
  tensor_attr(&v, &t, &sb, DT(FLOAT), huge, 2);
  convert_fails(f, &v, "element count of the shape overflows");
  int64_t large[] = {(int64_t)1 << 61};
  tensor_attr(&v, &t, &sb, DT(INT64), large, 1);
  convert_fails(f, &v, "size in bytes of the tensor overflows");

  // Expanding two values over 2^31 elements would take 8 GiB: refused.
  int64_t wide[] = {(int64_t)1 << 31};
  tensor_attr(&v, &t, &sb, DT(FLOAT), wide, 1);
  t.n_float_val = 2;
  t.float_val = vals;
  convert_fails(f, &v, "once its 2 values are expanded");
  // ... but one value over the same shape is a splat and costs nothing.
  t.n_float_val = 1;
  assert_string_equal(convert_ok(f, &v), "dense<1.0> : tensor<2147483648xf32>");

  tensor_attr(&v, &t, &sb, DT(FLOAT), d2, 1);
  t.tensor_shape->unknown_rank = 1;
  convert_fails(f, &v, "unknown rank");

  tensor_attr(&v, &t, &sb, DT(STRING), d2, 1);
  const eddy_attr_t *a;
  eddy_status_t st = eddy_tf_attr_convert(f->ctx, &v, &a);
  assert_non_null(st);
  assert_int_equal(eddy_status_code(st), EDDY_ERR_UNSUPPORTED);
  assert_string_equal(eddy_status_message(st),
                      "tensors of dtype string are not supported");
  eddy_status_destroy(st);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dtypes),
      cmocka_unit_test_setup_teardown(test_scalar_attrs, setup, teardown),
      cmocka_unit_test_setup_teardown(test_shape_attrs, setup, teardown),
      cmocka_unit_test_setup_teardown(test_func_and_placeholder, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_list_attrs, setup, teardown),
      cmocka_unit_test_setup_teardown(test_tensors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bad_tensors, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

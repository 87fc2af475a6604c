/// Unit tests for dtypes, half-precision conversions, interned types and
/// attributes (ir/types.c, ir/attrs.c, ir/context.c).
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "ir/ir.h"

#include <math.h>
#include <string.h>

static int setup_ctx(void **state) {
  *state = eddy_ir_ctx_create();
  return *state ? 0 : -1;
}

static int teardown_ctx(void **state) {
  eddy_ir_ctx_destroy(*state);
  return 0;
}

static float f32_from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

static uint64_t f64_bits(double d) {
  uint64_t u;
  memcpy(&u, &d, 8);
  return u;
}

/* ---- dtypes --------------------------------------------------------------- */

static void test_dtypes(void **state) {
  (void)state;
  eddy_dtype_t dt;
  for (int i = 0; i < EDDY_DT_COUNT_; i++) {
    const char *n = eddy_dtype_name((eddy_dtype_t)i);
    assert_true(eddy_dtype_from_name(n, strlen(n), &dt));
    assert_int_equal(dt, i);
  }
  assert_true(eddy_dtype_from_name("bf16xyz", 4, &dt));
  assert_int_equal(dt, EDDY_DT_BF16);
  assert_false(eddy_dtype_from_name("f3", 2, &dt));
  assert_false(eddy_dtype_from_name("f322", 4, &dt));
  assert_int_equal(eddy_dtype_size(EDDY_DT_I1), 1);
  assert_int_equal(eddy_dtype_size(EDDY_DT_BF16), 2);
  assert_int_equal(eddy_dtype_size(EDDY_DT_F64), 8);
  assert_true(eddy_dtype_is_float(EDDY_DT_BF16));
  assert_false(eddy_dtype_is_float(EDDY_DT_I32));
  assert_true(eddy_dtype_is_int(EDDY_DT_I8));
  assert_false(eddy_dtype_is_int(EDDY_DT_I1));
}

/* ---- f16 / bf16 ----------------------------------------------------------- */

static void test_f16_conversions(void **state) {
  (void)state;
  assert_int_equal(eddy_f32_to_f16(1.0f), 0x3c00);
  assert_int_equal(eddy_f32_to_f16(-2.0f), 0xc000);
  assert_int_equal(eddy_f32_to_f16(0.0f), 0x0000);
  assert_int_equal(eddy_f32_to_f16(-0.0f), 0x8000);
  assert_int_equal(eddy_f32_to_f16(65504.0f), 0x7bff); /* max finite */
  /* halfway between 65504 and 65536 (=inf): ties to even -> inf */
  assert_int_equal(eddy_f32_to_f16(65520.0f), 0x7c00);
  assert_int_equal(eddy_f32_to_f16(65519.0f), 0x7bff);
  assert_int_equal(eddy_f32_to_f16(1e10f), 0x7c00);
  assert_int_equal(eddy_f32_to_f16(-1e10f), 0xfc00);
  assert_int_equal(eddy_f32_to_f16(INFINITY), 0x7c00);
  assert_int_equal(eddy_f32_to_f16(-INFINITY), 0xfc00);
  uint16_t nan = eddy_f32_to_f16(NAN);
  assert_int_equal(nan & 0x7c00, 0x7c00);
  assert_int_not_equal(nan & 0x3ff, 0);
  /* a NaN whose payload sits only in the low bits must stay a NaN */
  uint16_t nan2 = eddy_f32_to_f16(f32_from_bits(0x7f800001u));
  assert_int_equal(nan2 & 0x7c00, 0x7c00);
  assert_int_not_equal(nan2 & 0x3ff, 0);
  /* ties to even in the normal range */
  assert_int_equal(eddy_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);
  assert_int_equal(eddy_f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02);
  assert_int_equal(eddy_f32_to_f16(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);
  /* subnormals */
  assert_int_equal(eddy_f32_to_f16(0x1p-24f), 0x0001);
  assert_int_equal(eddy_f32_to_f16(0x1p-25f), 0x0000); /* tie -> even 0 */
  assert_int_equal(eddy_f32_to_f16(0x1.8p-25f), 0x0001);
  assert_int_equal(eddy_f32_to_f16(0x1.8p-24f), 0x0002); /* tie -> even 2 */
  assert_int_equal(eddy_f32_to_f16(0x1p-26f), 0x0000);
  assert_int_equal(eddy_f32_to_f16(-0x1p-24f), 0x8001);
  assert_int_equal(eddy_f32_to_f16(0x1p-14f), 0x0400); /* min normal */
  assert_int_equal(eddy_f32_to_f16(0x1p-14f - 0x1p-25f), 0x0400); /* carry */
  assert_int_equal(eddy_f32_to_f16(0x3ffp-24f), 0x03ff);
  assert_int_equal(eddy_f32_to_f16(1e-30f), 0x0000);

  assert_true(eddy_f16_to_f32(0x3c00) == 1.0f);
  assert_true(eddy_f16_to_f32(0x0001) == 0x1p-24f);
  assert_true(eddy_f16_to_f32(0x03ff) == 0x3ffp-24f);
  assert_true(eddy_f16_to_f32(0x7bff) == 65504.0f);
  assert_int_equal(f32_bits(eddy_f16_to_f32(0x8000)), 0x80000000u);
  assert_true(isinf(eddy_f16_to_f32(0x7c00)) && eddy_f16_to_f32(0x7c00) > 0);
  assert_true(isinf(eddy_f16_to_f32(0xfc00)) && eddy_f16_to_f32(0xfc00) < 0);
  assert_true(isnan(eddy_f16_to_f32(0x7e00)));
  assert_true(isnan(eddy_f16_to_f32(0x7c01)));

  /* every non-NaN half round-trips exactly */
  for (uint32_t h = 0; h <= 0xffff; h++) {
    if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff))
      continue;
    assert_int_equal(eddy_f32_to_f16(eddy_f16_to_f32((uint16_t)h)), h);
  }
  /* rounding agrees with the nearest of the two neighbours */
  for (uint32_t h = 0; h < 0x7bff; h++) {
    float lo = eddy_f16_to_f32((uint16_t)h);
    float hi = eddy_f16_to_f32((uint16_t)(h + 1));
    float just_above_mid = nextafterf(lo + (hi - lo) / 2, INFINITY);
    float just_below_mid = nextafterf(lo + (hi - lo) / 2, 0);
    assert_int_equal(eddy_f32_to_f16(just_above_mid), h + 1);
    assert_int_equal(eddy_f32_to_f16(just_below_mid), h);
  }
}

static void test_bf16_conversions(void **state) {
  (void)state;
  assert_int_equal(eddy_f32_to_bf16(1.0f), 0x3f80);
  assert_int_equal(eddy_f32_to_bf16(-1.0f), 0xbf80);
  assert_int_equal(eddy_f32_to_bf16(-0.0f), 0x8000);
  assert_int_equal(eddy_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80); /* tie, even */
  assert_int_equal(eddy_f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82);
  assert_int_equal(eddy_f32_to_bf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);
  assert_int_equal(eddy_f32_to_bf16(INFINITY), 0x7f80);
  assert_int_equal(eddy_f32_to_bf16(-INFINITY), 0xff80);
  assert_int_equal(eddy_f32_to_bf16(f32_from_bits(0x7f7fffffu)), 0x7f80);
  assert_int_equal(eddy_f32_to_bf16(f32_from_bits(0x00000001u)), 0x0000);
  assert_int_equal(eddy_f32_to_bf16(f32_from_bits(0x00018000u)), 0x0002);
  uint16_t nan = eddy_f32_to_bf16(f32_from_bits(0x7f800001u));
  assert_int_equal(nan & 0x7f80, 0x7f80);
  assert_int_not_equal(nan & 0x7f, 0);
  assert_true(eddy_bf16_to_f32(0x3f80) == 1.0f);
  assert_true(isnan(eddy_bf16_to_f32(0x7fc0)));
  for (uint32_t h = 0; h <= 0xffff; h++) {
    if ((h & 0x7f80) == 0x7f80 && (h & 0x7f))
      continue;
    assert_int_equal(eddy_f32_to_bf16(eddy_bf16_to_f32((uint16_t)h)), h);
  }
}

/* ---- Types ---------------------------------------------------------------- */

static void test_type_interning(void **state) {
  eddy_ctx_t *ctx = *state;
  int64_t d1[] = {4, EDDY_DIM_DYNAMIC};
  int64_t d2[] = {4, EDDY_DIM_DYNAMIC};
  int64_t d3[] = {4, 5};
  const eddy_type_t *a = eddy_ir_tensor_type_get(ctx, EDDY_DT_F32, 2, d1);
  const eddy_type_t *b = eddy_ir_tensor_type_get(ctx, EDDY_DT_F32, 2, d2);
  const eddy_type_t *c = eddy_ir_tensor_type_get(ctx, EDDY_DT_F32, 2, d3);
  const eddy_type_t *d = eddy_ir_tensor_type_get(ctx, EDDY_DT_I32, 2, d3);
  assert_ptr_equal(a, b);
  assert_ptr_not_equal(a, c);
  assert_ptr_not_equal(c, d);
  assert_ptr_not_equal(a->dims, d1); /* copied */
  d1[0] = 9;
  assert_int_equal(a->dims[0], 4);
  assert_ptr_equal(eddy_ir_type_with_dtype(ctx, d, EDDY_DT_F32), c);
  /* rank 1 of dims {4} differs from rank 2 of {4, ?} */
  assert_ptr_not_equal(eddy_ir_tensor_type_get(ctx, EDDY_DT_F32, 1, d3), c);

  const eddy_type_t *s = eddy_ir_scalar_type_get(ctx, EDDY_DT_F32);
  assert_ptr_equal(s, eddy_ir_tensor_type_get(ctx, EDDY_DT_F32, 0, NULL));
  assert_true(eddy_ir_type_is_scalar(s));
  const eddy_type_t *u =
      eddy_ir_tensor_type_get(ctx, EDDY_DT_F32, EDDY_RANK_UNKNOWN, NULL);
  assert_ptr_not_equal(u, s);
  assert_false(eddy_ir_type_is_scalar(u));
  assert_false(eddy_ir_type_is_static(u));

  const eddy_type_t *l1 = eddy_ir_list_type_get(ctx, a);
  assert_ptr_equal(l1, eddy_ir_list_type_get(ctx, b));
  assert_ptr_not_equal(l1, eddy_ir_list_type_get(ctx, c));
  assert_int_equal(l1->kind, EDDY_TYPE_LIST);
  assert_ptr_equal(eddy_ir_token_type_get(ctx), eddy_ir_token_type_get(ctx));

  const eddy_type_t *ins[] = {a, s};
  const eddy_type_t *outs[] = {c};
  const eddy_type_t *f1 = eddy_ir_func_type_get(ctx, ins, 2, outs, 1);
  const eddy_type_t *f2 = eddy_ir_func_type_get(ctx, ins, 2, outs, 1);
  const eddy_type_t *f3 = eddy_ir_func_type_get(ctx, ins, 1, outs, 1);
  const eddy_type_t *f4 = eddy_ir_func_type_get(ctx, ins, 2, NULL, 0);
  /* ((a), (s, c)) must differ from ((a, s), (c)) */
  const eddy_type_t *ins5[] = {a};
  const eddy_type_t *outs5[] = {s, c};
  const eddy_type_t *f5 = eddy_ir_func_type_get(ctx, ins5, 1, outs5, 2);
  assert_ptr_equal(f1, f2);
  assert_ptr_not_equal(f1, f3);
  assert_ptr_not_equal(f1, f4);
  assert_ptr_not_equal(f1, f5);
  assert_int_equal(f1->num_inputs, 2);
  assert_ptr_equal(f1->inputs[1], s);
  assert_ptr_equal(f1->outputs[0], c);

  /* many distinct types: the table grows and stays consistent */
  const eddy_type_t *ts[300];
  for (int64_t i = 0; i < 300; i++)
    ts[i] = eddy_ir_tensor_type_get(ctx, EDDY_DT_I64, 1, &i);
  for (int64_t i = 0; i < 300; i++) {
    assert_ptr_equal(ts[i], eddy_ir_tensor_type_get(ctx, EDDY_DT_I64, 1, &i));
    assert_int_equal(ts[i]->dims[0], i);
  }
}

static void test_num_elements(void **state) {
  eddy_ctx_t *ctx = *state;
  int64_t d[] = {2, 3, 4};
  assert_int_equal(eddy_ir_type_num_elements(
                       eddy_ir_tensor_type_get(ctx, EDDY_DT_F32, 3, d)),
                   24);
  assert_int_equal(
      eddy_ir_type_num_elements(eddy_ir_scalar_type_get(ctx, EDDY_DT_F32)),
      1);
  int64_t z[] = {0, 3};
  assert_int_equal(eddy_ir_type_num_elements(
                       eddy_ir_tensor_type_get(ctx, EDDY_DT_F32, 2, z)),
                   0);
  int64_t dyn[] = {2, EDDY_DIM_DYNAMIC};
  assert_int_equal(eddy_ir_type_num_elements(
                       eddy_ir_tensor_type_get(ctx, EDDY_DT_F32, 2, dyn)),
                   -1);
  assert_int_equal(eddy_ir_type_num_elements(eddy_ir_tensor_type_get(
                       ctx, EDDY_DT_F32, EDDY_RANK_UNKNOWN, NULL)),
                   -1);
  int64_t big[] = {(int64_t)1 << 32, (int64_t)1 << 32};
  assert_int_equal(eddy_ir_type_num_elements(
                       eddy_ir_tensor_type_get(ctx, EDDY_DT_F32, 2, big)),
                   -1);
  int64_t big_zero[] = {(int64_t)1 << 62, 4, 0};
  assert_int_equal(eddy_ir_type_num_elements(
                       eddy_ir_tensor_type_get(ctx, EDDY_DT_F32, 3, big_zero)),
                   0); /* a zero dim wins over huge ones */
  assert_int_equal(eddy_ir_type_num_elements(eddy_ir_token_type_get(ctx)), -1);
}

static const eddy_type_t *T(eddy_ctx_t *ctx, int32_t rank, int64_t d0,
                            int64_t d1) {
  int64_t d[] = {d0, d1};
  return eddy_ir_tensor_type_get(ctx, EDDY_DT_F32, rank, d);
}

enum { DYN = EDDY_DIM_DYNAMIC, UNR = EDDY_RANK_UNKNOWN };

static void test_compatible_refine_generalize(void **state) {
  eddy_ctx_t *ctx = *state;
  const eddy_type_t *t4x5 = T(ctx, 2, 4, 5), *t4xd = T(ctx, 2, 4, DYN),
                    *tdx5 = T(ctx, 2, DYN, 5), *tdxd = T(ctx, 2, DYN, DYN),
                    *t3x5 = T(ctx, 2, 3, 5), *t4 = T(ctx, 1, 4, 0),
                    *unr = T(ctx, UNR, 0, 0), *sc = T(ctx, 0, 0, 0);
  const eddy_type_t *i4x5 = eddy_ir_type_with_dtype(ctx, t4x5, EDDY_DT_I32);

  assert_true(eddy_ir_type_is_compatible(t4x5, t4xd));
  assert_true(eddy_ir_type_is_compatible(t4xd, tdx5));
  assert_true(eddy_ir_type_is_compatible(t4x5, unr));
  assert_true(eddy_ir_type_is_compatible(sc, unr));
  assert_false(eddy_ir_type_is_compatible(t4x5, t3x5));
  assert_false(eddy_ir_type_is_compatible(t4x5, t4));
  assert_false(eddy_ir_type_is_compatible(t4x5, i4x5));
  assert_false(eddy_ir_type_is_compatible(sc, t4));
  assert_false(eddy_ir_type_is_compatible(t4x5, eddy_ir_token_type_get(ctx)));
  assert_true(eddy_ir_type_is_compatible(eddy_ir_list_type_get(ctx, t4xd),
                                         eddy_ir_list_type_get(ctx, tdx5)));
  assert_false(eddy_ir_type_is_compatible(eddy_ir_list_type_get(ctx, t4x5),
                                          eddy_ir_list_type_get(ctx, t3x5)));
  assert_false(eddy_ir_type_is_compatible(eddy_ir_list_type_get(ctx, t4x5),
                                          t4x5));

  assert_ptr_equal(eddy_ir_type_refine(ctx, t4xd, tdx5), t4x5);
  assert_ptr_equal(eddy_ir_type_refine(ctx, tdxd, t4xd), t4xd);
  assert_ptr_equal(eddy_ir_type_refine(ctx, unr, t4xd), t4xd);
  assert_ptr_equal(eddy_ir_type_refine(ctx, t4xd, unr), t4xd);
  assert_ptr_equal(eddy_ir_type_refine(ctx, sc, sc), sc);
  assert_null(eddy_ir_type_refine(ctx, t4x5, t3x5));
  assert_null(eddy_ir_type_refine(ctx, t4x5, i4x5));
  assert_ptr_equal(eddy_ir_type_refine(ctx, eddy_ir_list_type_get(ctx, t4xd),
                                       eddy_ir_list_type_get(ctx, tdx5)),
                   eddy_ir_list_type_get(ctx, t4x5));

  assert_ptr_equal(eddy_ir_type_generalize(ctx, t4x5, t3x5), tdx5);
  assert_ptr_equal(eddy_ir_type_generalize(ctx, t4x5, t4x5), t4x5);
  assert_ptr_equal(eddy_ir_type_generalize(ctx, t4x5, t4xd), t4xd);
  assert_ptr_equal(eddy_ir_type_generalize(ctx, t4x5, t4), unr);
  assert_ptr_equal(eddy_ir_type_generalize(ctx, sc, t4), unr);
  assert_ptr_equal(eddy_ir_type_generalize(ctx, unr, t4), unr);
  assert_null(eddy_ir_type_generalize(ctx, t4x5, i4x5));
  assert_null(eddy_ir_type_generalize(ctx, t4x5, eddy_ir_token_type_get(ctx)));
  assert_ptr_equal(
      eddy_ir_type_generalize(ctx, eddy_ir_list_type_get(ctx, T(ctx, 1, 0, 0)),
                              eddy_ir_list_type_get(ctx, T(ctx, 1, 1, 0))),
      eddy_ir_list_type_get(ctx, T(ctx, 1, DYN, 0)));

  /* high ranks */
  int64_t h1[10], h2[10], h3[10], h4[10];
  for (int i = 0; i < 10; i++) {
    h1[i] = i % 2 ? DYN : i;
    h2[i] = i;
    h3[i] = i == 9 ? 99 : i;
    h4[i] = i == 9 ? DYN : i;
  }
  const eddy_type_t *th1 = eddy_ir_tensor_type_get(ctx, EDDY_DT_F32, 10, h1);
  const eddy_type_t *th2 = eddy_ir_tensor_type_get(ctx, EDDY_DT_F32, 10, h2);
  const eddy_type_t *th3 = eddy_ir_tensor_type_get(ctx, EDDY_DT_F32, 10, h3);
  assert_ptr_equal(eddy_ir_type_refine(ctx, th1, th2), th2);
  assert_ptr_equal(eddy_ir_type_generalize(ctx, th2, th3),
                   eddy_ir_tensor_type_get(ctx, EDDY_DT_F32, 10, h4));

  const eddy_type_t *in1[] = {t4xd}, *in2[] = {tdx5}, *in3[] = {t4x5};
  const eddy_type_t *f1 = eddy_ir_func_type_get(ctx, in1, 1, in1, 1);
  const eddy_type_t *f2 = eddy_ir_func_type_get(ctx, in2, 1, in2, 1);
  const eddy_type_t *f3 = eddy_ir_func_type_get(ctx, in3, 1, in3, 1);
  assert_true(eddy_ir_type_is_compatible(f1, f2));
  assert_ptr_equal(eddy_ir_type_refine(ctx, f1, f2), f3);
  assert_ptr_equal(eddy_ir_type_generalize(ctx, f3, f1), f1);
  assert_null(eddy_ir_type_refine(
      ctx, f1, eddy_ir_func_type_get(ctx, in1, 1, NULL, 0)));
}

/* ---- Identifiers and locations -------------------------------------------- */

static void test_idents_locs(void **state) {
  eddy_ctx_t *ctx = *state;
  const eddy_ident_t *a = eddy_ir_ident_cstr(ctx, "core.add");
  assert_ptr_equal(a, eddy_ir_ident_get(ctx, "core.addx", 8));
  assert_ptr_not_equal(a, eddy_ir_ident_cstr(ctx, "core.ad"));
  assert_string_equal(a->str, "core.add");
  assert_int_equal(a->len, 8);
  const eddy_ident_t *e = eddy_ir_ident_get(ctx, "", 0);
  assert_string_equal(e->str, "");

  const eddy_loc_t *l1 = eddy_ir_loc_file(ctx, "a.eddy", 3, 7);
  assert_ptr_equal(l1, eddy_ir_loc_file(ctx, "a.eddy", 3, 7));
  assert_ptr_not_equal(l1, eddy_ir_loc_file(ctx, "a.eddy", 3, 8));
  const eddy_loc_t *n = eddy_ir_loc_name(ctx, "rnn/while/Exit_2");
  assert_ptr_equal(n, eddy_ir_loc_name(ctx, "rnn/while/Exit_2"));
  assert_int_equal(n->line, 0);
  eddy_buf_t b;
  eddy_buf_init(&b);
  eddy_ir_loc_format(l1, &b);
  eddy_buf_puts(&b, "|");
  eddy_ir_loc_format(n, &b);
  eddy_buf_puts(&b, "|");
  eddy_ir_loc_format(NULL, &b);
  assert_string_equal(b.data, "a.eddy:3:7|node 'rnn/while/Exit_2'|<unknown>");
  eddy_buf_destroy(&b);
}

/* ---- Scalar attributes ---------------------------------------------------- */

static void test_scalar_attrs(void **state) {
  eddy_ctx_t *ctx = *state;
  const eddy_attr_t *i5 = eddy_ir_int_attr_get(ctx, 5, EDDY_DT_I64);
  assert_ptr_equal(i5, eddy_ir_int_attr_get(ctx, 5, EDDY_DT_I64));
  assert_ptr_not_equal(i5, eddy_ir_int_attr_get(ctx, 5, EDDY_DT_I32));
  assert_ptr_not_equal(i5, eddy_ir_int_attr_get(ctx, 6, EDDY_DT_I64));
  assert_int_equal(eddy_ir_int_attr_get(ctx, 300, EDDY_DT_I8)->u.i, 44);
  assert_int_equal(eddy_ir_int_attr_get(ctx, 200, EDDY_DT_I8)->u.i, -56);
  assert_int_equal(eddy_ir_int_attr_get(ctx, -1, EDDY_DT_I8)->u.i, -1);
  assert_int_equal(eddy_ir_int_attr_get(ctx, 3, EDDY_DT_I1)->u.i, 1);
  assert_int_equal(eddy_ir_int_attr_get(ctx, 2, EDDY_DT_I1)->u.i, 0);
  assert_int_equal(
      eddy_ir_int_attr_get(ctx, ((int64_t)1 << 32) + 1, EDDY_DT_I32)->u.i, 1);
  assert_int_equal(eddy_ir_int_attr_get(ctx, 0x80000000LL, EDDY_DT_I32)->u.i,
                   INT32_MIN);
  assert_ptr_equal(eddy_ir_int_attr_get(ctx, 300, EDDY_DT_I8),
                   eddy_ir_int_attr_get(ctx, 44, EDDY_DT_I8));
  assert_int_equal(eddy_ir_int_attr_get(ctx, INT64_MIN, EDDY_DT_I64)->u.i,
                   INT64_MIN);

  const eddy_attr_t *f = eddy_ir_float_attr_get(ctx, 0.1, EDDY_DT_F32);
  assert_true(f->u.f == (double)0.1f);
  assert_ptr_equal(f, eddy_ir_float_attr_get(ctx, (double)0.1f, EDDY_DT_F32));
  assert_ptr_not_equal(f, eddy_ir_float_attr_get(ctx, 0.1, EDDY_DT_F64));
  assert_true(eddy_ir_float_attr_get(ctx, 0.1, EDDY_DT_F64)->u.f == 0.1);
  /* f16: 0.1 -> 0x2e66 = 0.0999755859375 */
  assert_true(eddy_ir_float_attr_get(ctx, 0.1, EDDY_DT_F16)->u.f ==
              0.0999755859375);
  assert_true(isinf(eddy_ir_float_attr_get(ctx, 70000.0, EDDY_DT_F16)->u.f));
  /* bf16: 1 + 2^-8 ties to 1.0 */
  assert_true(eddy_ir_float_attr_get(ctx, 1.0 + 0x1p-8, EDDY_DT_BF16)->u.f ==
              1.0);
  /* rounded straight from the double: going through f32 would land on
     the midpoint and round to even */
  assert_true(eddy_ir_float_attr_get(ctx, 1.0 + 0x1p-11 + 0x1p-40,
                                     EDDY_DT_F16)->u.f == 1.0 + 0x1p-10);
  assert_true(eddy_ir_float_attr_get(ctx, 1.0 + 0x1p-8 + 0x1p-40,
                                     EDDY_DT_BF16)->u.f == 1.0 + 0x1p-7);
  assert_true(eddy_ir_float_attr_get(ctx, -(1.0 + 0x1p-11), EDDY_DT_F16)->u.f ==
              -1.0);
  assert_true(eddy_ir_float_attr_get(ctx, 0x1p-25 + 0x1p-60, EDDY_DT_F16)->u.f ==
              0x1p-24);
  assert_true(eddy_ir_float_attr_get(ctx, 0x1p-25, EDDY_DT_F16)->u.f == 0.0);
  assert_true(eddy_ir_float_attr_get(ctx, 0x1p-140, EDDY_DT_F16)->u.f == 0.0);
  assert_true(eddy_ir_float_attr_get(ctx, 0x1.8p-133, EDDY_DT_BF16)->u.f ==
              0x1p-132); /* bf16 subnormal tie -> even */
  assert_true(eddy_ir_float_attr_get(ctx, 0x1p-127 + 0x1p-140, EDDY_DT_BF16)->u.f ==
              0x1p-127);
  assert_true(eddy_ir_float_attr_get(ctx, 65519.99, EDDY_DT_F16)->u.f == 65504.0);
  assert_true(isinf(eddy_ir_float_attr_get(ctx, 1e300, EDDY_DT_BF16)->u.f));
  assert_true(isinf(eddy_ir_float_attr_get(ctx, -1e300, EDDY_DT_F32)->u.f));
  assert_true(eddy_ir_float_attr_get(ctx, 3.3895313892515355e38,
                                     EDDY_DT_BF16)->u.f == 3.3895313892515355e38);
  assert_true(isnan(eddy_ir_float_attr_get(ctx, NAN, EDDY_DT_F16)->u.f));
  const eddy_attr_t *pz = eddy_ir_float_attr_get(ctx, 0.0, EDDY_DT_F64);
  const eddy_attr_t *nz = eddy_ir_float_attr_get(ctx, -0.0, EDDY_DT_F64);
  assert_ptr_not_equal(pz, nz);
  assert_int_equal(f64_bits(nz->u.f), 0x8000000000000000ULL);
  const eddy_attr_t *n1 = eddy_ir_float_attr_get(ctx, NAN, EDDY_DT_F64);
  assert_ptr_equal(n1, eddy_ir_float_attr_get(ctx, NAN, EDDY_DT_F64));
  assert_true(isnan(n1->u.f));

  const eddy_attr_t *t = eddy_ir_bool_attr_get(ctx, true);
  assert_ptr_equal(t, eddy_ir_bool_attr_get(ctx, true));
  assert_ptr_not_equal(t, eddy_ir_bool_attr_get(ctx, false));
  assert_true(t->u.b);

  const eddy_attr_t *s = eddy_ir_string_attr_get(ctx, "a\0b", 3);
  assert_int_equal(s->u.str.len, 3);
  assert_memory_equal(s->u.str.data, "a\0b", 3);
  assert_int_equal(s->u.str.data[3], '\0');
  assert_ptr_equal(s, eddy_ir_string_attr_get(ctx, "a\0b", 3));
  assert_ptr_not_equal(s, eddy_ir_string_attr_get(ctx, "a\0c", 3));
  assert_ptr_not_equal(s, eddy_ir_string_attr_get(ctx, "a", 1));
  const eddy_attr_t *sym = eddy_ir_symbol_attr_get(ctx, "f", 1);
  assert_ptr_not_equal(sym, eddy_ir_string_attr_get(ctx, "f", 1));
  assert_int_equal(sym->kind, EDDY_ATTR_SYMBOL);
  assert_string_equal(eddy_ir_string_attr_get(ctx, NULL, 0)->u.str.data, "");

  const eddy_type_t *ty = eddy_ir_scalar_type_get(ctx, EDDY_DT_F32);
  assert_ptr_equal(eddy_ir_type_attr_get(ctx, ty),
                   eddy_ir_type_attr_get(ctx, ty));
  assert_ptr_equal(eddy_ir_type_attr_get(ctx, ty)->type, ty);
}

/// For f32 inputs, the f64 rounding of float attributes and the f32
/// conversions are two independent implementations of one function.
static void test_float_attr_rounding_agrees(void **state) {
  eddy_ctx_t *ctx = *state;
  uint32_t x = 12345;
  for (int i = 0; i < 40000; i++) {
    x = x * 1664525u + 1013904223u;
    /* bias exponents toward the f16 range half of the time */
    uint32_t bits = i % 2 ? x : (x & 0x807fffffu) | ((100u + (x >> 24) % 50u) << 23);
    float f = f32_from_bits(bits);
    if (isnan(f))
      continue;
    double h = eddy_ir_float_attr_get(ctx, f, EDDY_DT_F16)->u.f;
    double b = eddy_ir_float_attr_get(ctx, f, EDDY_DT_BF16)->u.f;
    assert_int_equal(f64_bits(h),
                     f64_bits((double)eddy_f16_to_f32(eddy_f32_to_f16(f))));
    assert_int_equal(f64_bits(b),
                     f64_bits((double)eddy_bf16_to_f32(eddy_f32_to_bf16(f))));
  }
}

static void test_array_attrs(void **state) {
  eddy_ctx_t *ctx = *state;
  int64_t v[] = {1, -2, 3};
  const eddy_attr_t *a = eddy_ir_i64_array_attr_get(ctx, v, 3);
  assert_int_equal(a->kind, EDDY_ATTR_ARRAY);
  assert_int_equal(a->u.array.len, 3);
  assert_ptr_equal(a, eddy_ir_i64_array_attr_get(ctx, v, 3));
  assert_ptr_not_equal(a, eddy_ir_i64_array_attr_get(ctx, v, 2));
  const eddy_attr_t *elems[] = {eddy_ir_int_attr_get(ctx, 1, EDDY_DT_I64),
                                eddy_ir_int_attr_get(ctx, -2, EDDY_DT_I64),
                                eddy_ir_int_attr_get(ctx, 3, EDDY_DT_I64)};
  assert_ptr_equal(a, eddy_ir_array_attr_get(ctx, elems, 3));
  assert_ptr_equal(eddy_ir_array_attr_get(ctx, NULL, 0),
                   eddy_ir_i64_array_attr_get(ctx, NULL, 0));

  int64_t out[3] = {0, 0, 99};
  assert_int_equal(eddy_ir_attr_as_i64_array(a, out, 2), 3);
  assert_int_equal(out[0], 1);
  assert_int_equal(out[1], -2);
  assert_int_equal(out[2], 99); /* beyond cap: untouched */
  const eddy_attr_t *mixed[] = {elems[0], eddy_ir_bool_attr_get(ctx, true)};
  assert_int_equal(
      eddy_ir_attr_as_i64_array(eddy_ir_array_attr_get(ctx, mixed, 2), out, 3),
      -1);
  assert_int_equal(eddy_ir_attr_as_i64_array(elems[0], out, 3), -1);
  assert_int_equal(eddy_ir_attr_as_i64_array(NULL, out, 3), -1);

  /* long arrays */
  int64_t many[100];
  for (int i = 0; i < 100; i++)
    many[i] = i * 7;
  const eddy_attr_t *m = eddy_ir_i64_array_attr_get(ctx, many, 100);
  int64_t back[100];
  assert_int_equal(eddy_ir_attr_as_i64_array(m, back, 100), 100);
  assert_memory_equal(back, many, sizeof(many));
}

/* ---- Dense attributes ----------------------------------------------------- */

static void test_dense_splat_detection(void **state) {
  eddy_ctx_t *ctx = *state;
  int64_t d[] = {2, 2};
  const eddy_type_t *t = eddy_ir_tensor_type_get(ctx, EDDY_DT_F32, 2, d);
  float same[] = {2.5f, 2.5f, 2.5f, 2.5f};
  float diff[] = {1.0f, 2.0f, 3.0f, 4.0f};
  float one = 2.5f;
  const eddy_attr_t *s1 = eddy_ir_dense_attr_get(ctx, t, same, sizeof(same));
  const eddy_attr_t *s2 = eddy_ir_dense_splat_attr_get(ctx, t, &one);
  assert_ptr_equal(s1, s2);
  assert_true(s1->u.dense.splat);
  assert_int_equal(s1->u.dense.nbytes, 4);
  assert_ptr_equal(s1->type, t);
  const eddy_attr_t *n = eddy_ir_dense_attr_get(ctx, t, diff, sizeof(diff));
  assert_false(n->u.dense.splat);
  assert_int_equal(n->u.dense.nbytes, 16);
  assert_ptr_equal(n, eddy_ir_dense_attr_get(ctx, t, diff, sizeof(diff)));
  assert_ptr_not_equal(n, s1);
  /* the same bytes under another shape are another attribute */
  int64_t d4[] = {4};
  const eddy_type_t *t4 = eddy_ir_tensor_type_get(ctx, EDDY_DT_F32, 1, d4);
  assert_ptr_not_equal(eddy_ir_dense_attr_get(ctx, t4, diff, sizeof(diff)), n);
  /* -0.0 and 0.0 are byte-different: not a splat */
  float zeros[] = {0.0f, -0.0f, 0.0f, 0.0f};
  assert_false(eddy_ir_dense_attr_get(ctx, t, zeros, sizeof(zeros))->u.dense.splat);
  /* one element is a splat */
  const eddy_type_t *sc = eddy_ir_scalar_type_get(ctx, EDDY_DT_F32);
  const eddy_attr_t *sca = eddy_ir_dense_attr_get(ctx, sc, &one, 4);
  assert_true(sca->u.dense.splat);
  assert_ptr_equal(sca, eddy_ir_dense_splat_attr_get(ctx, sc, &one));
  /* empty is not a splat, and both constructors agree */
  int64_t d0[] = {0, 3};
  const eddy_type_t *te = eddy_ir_tensor_type_get(ctx, EDDY_DT_F32, 2, d0);
  const eddy_attr_t *e1 = eddy_ir_dense_attr_get(ctx, te, NULL, 0);
  assert_false(e1->u.dense.splat);
  assert_int_equal(e1->u.dense.nbytes, 0);
  assert_ptr_equal(e1, eddy_ir_dense_splat_attr_get(ctx, te, &one));
  assert_ptr_equal(e1, eddy_ir_dense_attr_from_f64(ctx, te, NULL, 0));
  /* i1: any nonzero byte is true */
  int64_t d3[] = {3};
  const eddy_type_t *tb = eddy_ir_tensor_type_get(ctx, EDDY_DT_I1, 1, d3);
  unsigned char b1[] = {1, 0, 1}, b2[] = {7, 0, 255}, b3[] = {2, 1, 9};
  const eddy_attr_t *ab = eddy_ir_dense_attr_get(ctx, tb, b1, 3);
  assert_ptr_equal(ab, eddy_ir_dense_attr_get(ctx, tb, b2, 3));
  assert_memory_equal(ab->u.dense.data, b1, 3);
  const eddy_attr_t *all = eddy_ir_dense_attr_get(ctx, tb, b3, 3);
  assert_true(all->u.dense.splat);
  unsigned char t1 = 1;
  assert_ptr_equal(all, eddy_ir_dense_splat_attr_get(ctx, tb, &t1));
}

static void test_dense_accessors(void **state) {
  eddy_ctx_t *ctx = *state;
  int64_t d4[] = {4};
  /* i32 */
  const eddy_type_t *ti = eddy_ir_tensor_type_get(ctx, EDDY_DT_I32, 1, d4);
  int32_t iv[] = {-7, 0, 5, INT32_MAX};
  const eddy_attr_t *ai = eddy_ir_dense_attr_get(ctx, ti, iv, sizeof(iv));
  for (int i = 0; i < 4; i++) {
    assert_int_equal(eddy_ir_dense_attr_i64(ai, i), iv[i]);
    assert_true(eddy_ir_dense_attr_f64(ai, i) == (double)iv[i]);
  }
  /* data is little-endian row major */
  const unsigned char *raw = ai->u.dense.data;
  assert_int_equal(raw[0], 0xf9);
  assert_int_equal(raw[1], 0xff);
  /* f32 -> i64 truncates toward zero */
  const eddy_type_t *tf = eddy_ir_tensor_type_get(ctx, EDDY_DT_F32, 1, d4);
  float fv[] = {-2.75f, 2.75f, 0.5f, 1e30f};
  const eddy_attr_t *af = eddy_ir_dense_attr_get(ctx, tf, fv, sizeof(fv));
  assert_int_equal(eddy_ir_dense_attr_i64(af, 0), -2);
  assert_int_equal(eddy_ir_dense_attr_i64(af, 1), 2);
  assert_int_equal(eddy_ir_dense_attr_i64(af, 2), 0);
  assert_int_equal(eddy_ir_dense_attr_i64(af, 3), INT64_MAX); /* saturates */
  assert_true(eddy_ir_dense_attr_f64(af, 0) == -2.75);
  /* splat: every index reads the one element */
  const eddy_attr_t *sp =
      eddy_ir_dense_attr_from_f64(ctx, tf, (double[]){1.5}, 1);
  assert_true(sp->u.dense.splat);
  assert_true(eddy_ir_dense_attr_f64(sp, 3) == 1.5);
  /* from_f64 into ints truncates; into f16 / bf16 rounds */
  const eddy_attr_t *fi = eddy_ir_dense_attr_from_f64(
      ctx, ti, (double[]){1.9, -1.9, 3e9, NAN}, 4);
  assert_int_equal(eddy_ir_dense_attr_i64(fi, 0), 1);
  assert_int_equal(eddy_ir_dense_attr_i64(fi, 1), -1);
  assert_int_equal(eddy_ir_dense_attr_i64(fi, 3), 0);
  const eddy_type_t *th = eddy_ir_tensor_type_get(ctx, EDDY_DT_F16, 1, d4);
  const eddy_attr_t *ah = eddy_ir_dense_attr_from_f64(
      ctx, th, (double[]){1.0, 0.1, 65520.0, -0x1p-24}, 4);
  uint16_t hv[4];
  memcpy(hv, ah->u.dense.data, 8);
  assert_int_equal(hv[0], 0x3c00);
  assert_int_equal(hv[1], 0x2e66);
  assert_int_equal(hv[2], 0x7c00);
  assert_int_equal(hv[3], 0x8001);
  assert_true(eddy_ir_dense_attr_f64(ah, 1) == 0.0999755859375);
  const eddy_attr_t *ah2 = eddy_ir_dense_attr_from_f64(
      ctx, th, (double[]){1.0 + 0x1p-11 + 0x1p-40, 1.0 + 0x1p-11, 0, 0}, 4);
  assert_true(eddy_ir_dense_attr_f64(ah2, 0) == 1.0 + 0x1p-10);
  assert_true(eddy_ir_dense_attr_f64(ah2, 1) == 1.0);
  const eddy_type_t *tbf = eddy_ir_tensor_type_get(ctx, EDDY_DT_BF16, 1, d4);
  const eddy_attr_t *abf = eddy_ir_dense_attr_from_i64(
      ctx, tbf, (int64_t[]){1, 257, -3, 256}, 4);
  assert_true(eddy_ir_dense_attr_f64(abf, 0) == 1.0);
  assert_true(eddy_ir_dense_attr_f64(abf, 1) == 256.0); /* 257 -> tie -> 256 */
  assert_true(eddy_ir_dense_attr_f64(abf, 2) == -3.0);
  /* from_i64: i8 wraps, i1 is nonzero-ness, f64 exact */
  const eddy_type_t *t8 = eddy_ir_tensor_type_get(ctx, EDDY_DT_I8, 1, d4);
  const eddy_attr_t *a8 = eddy_ir_dense_attr_from_i64(
      ctx, t8, (int64_t[]){300, -1, 127, 128}, 4);
  assert_int_equal(eddy_ir_dense_attr_i64(a8, 0), 44);
  assert_int_equal(eddy_ir_dense_attr_i64(a8, 1), -1);
  assert_int_equal(eddy_ir_dense_attr_i64(a8, 2), 127);
  assert_int_equal(eddy_ir_dense_attr_i64(a8, 3), -128);
  const eddy_type_t *t1 = eddy_ir_tensor_type_get(ctx, EDDY_DT_I1, 1, d4);
  const eddy_attr_t *a1 = eddy_ir_dense_attr_from_i64(
      ctx, t1, (int64_t[]){0, 5, -1, 0}, 4);
  assert_int_equal(eddy_ir_dense_attr_i64(a1, 0), 0);
  assert_int_equal(eddy_ir_dense_attr_i64(a1, 1), 1);
  assert_int_equal(eddy_ir_dense_attr_i64(a1, 2), 1);
  assert_true(eddy_ir_dense_attr_f64(a1, 1) == 1.0);
  const eddy_type_t *t64 = eddy_ir_tensor_type_get(ctx, EDDY_DT_I64, 1, d4);
  const eddy_attr_t *a64 = eddy_ir_dense_attr_from_i64(
      ctx, t64, (int64_t[]){INT64_MIN, INT64_MAX, 0, 1}, 4);
  assert_int_equal(eddy_ir_dense_attr_i64(a64, 0), INT64_MIN);
  assert_int_equal(eddy_ir_dense_attr_i64(a64, 1), INT64_MAX);
  /* equal contents built two ways intern to one attribute */
  const eddy_attr_t *x1 =
      eddy_ir_dense_attr_from_i64(ctx, tf, (int64_t[]){3, 3, 3, 3}, 4);
  const eddy_attr_t *x2 = eddy_ir_dense_attr_from_f64(ctx, tf, (double[]){3.0}, 1);
  assert_ptr_equal(x1, x2);
  const eddy_type_t *t64f = eddy_ir_tensor_type_get(ctx, EDDY_DT_F64, 1, d4);
  const eddy_attr_t *af64 = eddy_ir_dense_attr_from_f64(
      ctx, t64f, (double[]){0.1, -0.0, INFINITY, 2.0}, 4);
  assert_true(eddy_ir_dense_attr_f64(af64, 0) == 0.1);
  assert_int_equal(f64_bits(eddy_ir_dense_attr_f64(af64, 1)),
                   0x8000000000000000ULL);
  assert_true(isinf(eddy_ir_dense_attr_f64(af64, 2)));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dtypes),
      cmocka_unit_test(test_f16_conversions),
      cmocka_unit_test(test_bf16_conversions),
      cmocka_unit_test_setup_teardown(test_type_interning, setup_ctx,
                                      teardown_ctx),
      cmocka_unit_test_setup_teardown(test_num_elements, setup_ctx,
                                      teardown_ctx),
      cmocka_unit_test_setup_teardown(test_compatible_refine_generalize,
                                      setup_ctx, teardown_ctx),
      cmocka_unit_test_setup_teardown(test_idents_locs, setup_ctx,
                                      teardown_ctx),
      cmocka_unit_test_setup_teardown(test_scalar_attrs, setup_ctx,
                                      teardown_ctx),
      cmocka_unit_test_setup_teardown(test_float_attr_rounding_agrees,
                                      setup_ctx, teardown_ctx),
      cmocka_unit_test_setup_teardown(test_array_attrs, setup_ctx,
                                      teardown_ctx),
      cmocka_unit_test_setup_teardown(test_dense_splat_detection, setup_ctx,
                                      teardown_ctx),
      cmocka_unit_test_setup_teardown(test_dense_accessors, setup_ctx,
                                      teardown_ctx),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

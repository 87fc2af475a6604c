/// Interned attributes and dense tensor constants.
#include "ir/ir_internal.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t eddy_f64_bits(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof(u));
  return u;
}

/// Interning key: the attribute's content; data for STRING, SYMBOL and DENSE
/// lives in u, elements for ARRAY in u.array.
static bool eddy_attr_eq(const void *item, const void *key) {
  const eddy_attr_t *a = item, *b = key;
  if (a->kind != b->kind)
    return false;
  switch (a->kind) {
  case EDDY_ATTR_INT:
    return a->dtype == b->dtype && a->u.i == b->u.i;
  case EDDY_ATTR_FLOAT:
    /* by bit pattern: -0.0 differs from 0.0, a NaN equals itself */
    return a->dtype == b->dtype && eddy_f64_bits(a->u.f) == eddy_f64_bits(b->u.f);
  case EDDY_ATTR_BOOL:
    return a->u.b == b->u.b;
  case EDDY_ATTR_STRING:
  case EDDY_ATTR_SYMBOL:
    return a->u.str.len == b->u.str.len &&
           memcmp(a->u.str.data, b->u.str.data, a->u.str.len) == 0;
  case EDDY_ATTR_TYPE:
    return a->type == b->type;
  case EDDY_ATTR_ARRAY:
    if (a->u.array.len != b->u.array.len)
      return false;
    for (size_t i = 0; i < a->u.array.len; i++)
      if (a->u.array.elems[i] != b->u.array.elems[i])
        return false;
    return true;
  case EDDY_ATTR_DENSE:
    return a->type == b->type && a->u.dense.splat == b->u.dense.splat &&
           a->u.dense.nbytes == b->u.dense.nbytes &&
           memcmp(a->u.dense.data, b->u.dense.data, a->u.dense.nbytes) == 0;
  }
  return false;
}

static uint64_t eddy_attr_hash(const eddy_attr_t *a) {
  uint64_t h = eddy_hash_combine(0xa7, (uint64_t)a->kind);
  switch (a->kind) {
  case EDDY_ATTR_INT:
    h = eddy_hash_combine(h, (uint64_t)a->dtype);
    return eddy_hash_combine(h, (uint64_t)a->u.i);
  case EDDY_ATTR_FLOAT:
    h = eddy_hash_combine(h, (uint64_t)a->dtype);
    return eddy_hash_combine(h, eddy_f64_bits(a->u.f));
  case EDDY_ATTR_BOOL:
    return eddy_hash_combine(h, a->u.b);
  case EDDY_ATTR_STRING:
  case EDDY_ATTR_SYMBOL:
    return eddy_hash_bytes(a->u.str.data, a->u.str.len, h);
  case EDDY_ATTR_TYPE:
    return eddy_hash_combine(h, a->type->hash);
  case EDDY_ATTR_ARRAY:
    h = eddy_hash_combine(h, a->u.array.len);
    for (size_t i = 0; i < a->u.array.len; i++)
      h = eddy_hash_combine(h, a->u.array.elems[i]->hash);
    return h;
  case EDDY_ATTR_DENSE:
    h = eddy_hash_combine(h, a->type->hash);
    h = eddy_hash_combine(h, a->u.dense.splat);
    return eddy_hash_bytes(a->u.dense.data, a->u.dense.nbytes, h);
  }
  return h;
}

/// Returns the interned copy of key, copying its payload into the arena.
static const eddy_attr_t *eddy_attr_intern(eddy_ctx_t *ctx,
                                           const eddy_attr_t *key) {
  uint64_t h = eddy_attr_hash(key);
  eddy_attr_t *a = eddy_intern_find(&ctx->attrs, h, eddy_attr_eq, key);
  if (a)
    return a;
  a = eddy_arena_alloc(ctx->arena, sizeof(*a));
  *a = *key;
  a->hash = h;
  switch (key->kind) {
  case EDDY_ATTR_STRING:
  case EDDY_ATTR_SYMBOL:
    a->u.str.data =
        eddy_arena_strndup(ctx->arena, key->u.str.data, key->u.str.len);
    break;
  case EDDY_ATTR_ARRAY:
    a->u.array.elems = eddy_arena_dup(
        ctx->arena, key->u.array.elems, key->u.array.len * sizeof(void *));
    break;
  case EDDY_ATTR_DENSE:
    a->u.dense.data =
        eddy_arena_dup(ctx->arena, key->u.dense.data, key->u.dense.nbytes);
    break;
  default:
    break;
  }
  eddy_intern_add(&ctx->attrs, h, a);
  return a;
}

/// Truncates v to the width of an integer dtype, sign-extending back (i1
/// keeps only the low bit, as 0 or 1).
static int64_t eddy_int_to_dtype(int64_t v, eddy_dtype_t dt) {
  switch (dt) {
  case EDDY_DT_I1:
    return v & 1;
  case EDDY_DT_I8:
    return (int8_t)(uint8_t)((uint64_t)v & 0xffu);
  case EDDY_DT_I32:
    return (int32_t)(uint32_t)((uint64_t)v & 0xffffffffu);
  default:
    return v;
  }
}

/// Rounds |v| (finite, nonzero) to a binary format with p significand bits,
/// minimum normal exponent emin and maximum exponent emax, ties to even.
/// Rounding through f32 first would be wrong: a double just above an f16
/// midpoint can round to the midpoint in f32, then to even in f16.
static double eddy_round_to_format(double v, int p, int emin, int emax) {
  int E;
  double f = frexp(fabs(v), &E); /* |v| = f * 2^E, f in [0.5, 1) */
  int e = E - 1;                 /* |v| = m * 2^(e - 52) */
  uint64_t m = (uint64_t)ldexp(f, 53);
  int bits = e >= emin ? p : p - (emin - e); /* precision left at e */
  int shift = 53 - bits;
  double r;
  if (shift > 53) {
    r = 0.0; /* below half the smallest subnormal */
  } else {
    uint64_t q = m >> shift;
    uint64_t rem = m & (((uint64_t)1 << shift) - 1);
    uint64_t half = (uint64_t)1 << (shift - 1);
    if (rem > half || (rem == half && (q & 1)))
      q++;
    r = ldexp((double)q, e + 1 - bits);
  }
  if (r >= ldexp(1.0, emax + 1))
    r = INFINITY;
  return v < 0 ? -r : r;
}

/// Rounds v to the nearest value of a float dtype (ties to even).
static double eddy_float_to_dtype(double v, eddy_dtype_t dt) {
  if (isnan(v)) {
    /* keep the payload bits that the dtype can hold */
    switch (dt) {
    case EDDY_DT_F16:
      return eddy_f16_to_f32(eddy_f32_to_f16((float)v));
    case EDDY_DT_BF16:
      return eddy_bf16_to_f32(eddy_f32_to_bf16((float)v));
    case EDDY_DT_F32:
      return (float)v;
    default:
      return v;
    }
  }
  if (v == 0 || isinf(v))
    return v;
  switch (dt) {
  case EDDY_DT_F16:
    return eddy_round_to_format(v, 11, -14, 15);
  case EDDY_DT_BF16:
    return eddy_round_to_format(v, 8, -126, 127);
  case EDDY_DT_F32:
    return (float)v;
  default:
    return v;
  }
}

const eddy_attr_t *eddy_ir_int_attr_get(eddy_ctx_t *ctx, int64_t v,
                                        eddy_dtype_t dt) {
  assert(dt == EDDY_DT_I1 || eddy_dtype_is_int(dt));
  eddy_attr_t key = {0};
  key.kind = EDDY_ATTR_INT;
  key.dtype = dt;
  key.u.i = eddy_int_to_dtype(v, dt);
  return eddy_attr_intern(ctx, &key);
}

const eddy_attr_t *eddy_ir_float_attr_get(eddy_ctx_t *ctx, double v,
                                          eddy_dtype_t dt) {
  assert(eddy_dtype_is_float(dt));
  eddy_attr_t key = {0};
  key.kind = EDDY_ATTR_FLOAT;
  key.dtype = dt;
  key.u.f = eddy_float_to_dtype(v, dt);
  return eddy_attr_intern(ctx, &key);
}

const eddy_attr_t *eddy_ir_bool_attr_get(eddy_ctx_t *ctx, bool v) {
  eddy_attr_t key = {0};
  key.kind = EDDY_ATTR_BOOL;
  key.u.b = v;
  return eddy_attr_intern(ctx, &key);
}

const eddy_attr_t *eddy_ir_string_attr_get(eddy_ctx_t *ctx, const char *s,
                                           size_t len) {
  eddy_attr_t key = {0};
  key.kind = EDDY_ATTR_STRING;
  key.u.str.data = len ? s : "";
  key.u.str.len = len;
  return eddy_attr_intern(ctx, &key);
}

const eddy_attr_t *eddy_ir_symbol_attr_get(eddy_ctx_t *ctx, const char *s,
                                           size_t len) {
  eddy_attr_t key = {0};
  key.kind = EDDY_ATTR_SYMBOL;
  key.u.str.data = len ? s : "";
  key.u.str.len = len;
  return eddy_attr_intern(ctx, &key);
}

const eddy_attr_t *eddy_ir_type_attr_get(eddy_ctx_t *ctx,
                                         const eddy_type_t *t) {
  assert(t);
  eddy_attr_t key = {0};
  key.kind = EDDY_ATTR_TYPE;
  key.type = t;
  return eddy_attr_intern(ctx, &key);
}

const eddy_attr_t *eddy_ir_array_attr_get(eddy_ctx_t *ctx,
                                          const eddy_attr_t *const *elems,
                                          size_t len) {
  assert(len == 0 || elems);
  eddy_attr_t key = {0};
  key.kind = EDDY_ATTR_ARRAY;
  key.u.array.elems = elems;
  key.u.array.len = len;
  return eddy_attr_intern(ctx, &key);
}

const eddy_attr_t *eddy_ir_i64_array_attr_get(eddy_ctx_t *ctx,
                                              const int64_t *v, size_t len) {
  const eddy_attr_t *small[16];
  const eddy_attr_t **elems = small;
  if (len > 16) {
    elems = malloc(len * sizeof(*elems));
    if (!elems) {
      fprintf(stderr, "eddy: out of memory (array attribute)\n");
      abort();
    }
  }
  for (size_t i = 0; i < len; i++)
    elems[i] = eddy_ir_int_attr_get(ctx, v[i], EDDY_DT_I64);
  const eddy_attr_t *a = eddy_ir_array_attr_get(ctx, elems, len);
  if (elems != small)
    free(elems);
  return a;
}

int64_t eddy_ir_attr_as_i64_array(const eddy_attr_t *a, int64_t *out,
                                  size_t cap) {
  if (!a || a->kind != EDDY_ATTR_ARRAY)
    return -1;
  for (size_t i = 0; i < a->u.array.len; i++)
    if (a->u.array.elems[i]->kind != EDDY_ATTR_INT)
      return -1;
  for (size_t i = 0; i < a->u.array.len && i < cap; i++)
    out[i] = a->u.array.elems[i]->u.i;
  return (int64_t)a->u.array.len;
}

/* ---- Dense ---------------------------------------------------------------- */

static const eddy_attr_t *eddy_dense_intern(eddy_ctx_t *ctx,
                                            const eddy_type_t *type,
                                            const void *data, size_t nbytes,
                                            bool splat) {
  eddy_attr_t key = {0};
  key.kind = EDDY_ATTR_DENSE;
  key.type = type;
  key.u.dense.data = data;
  key.u.dense.nbytes = nbytes;
  key.u.dense.splat = splat;
  return eddy_attr_intern(ctx, &key);
}

/// Normalizes i1 bytes to 0/1 in place.
static void eddy_dense_normalize_i1(unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    p[i] = p[i] != 0;
}

const eddy_attr_t *eddy_ir_dense_attr_get(eddy_ctx_t *ctx,
                                          const eddy_type_t *type,
                                          const void *data, size_t nbytes) {
  assert(eddy_ir_type_is_static(type));
  int64_t n = eddy_ir_type_num_elements(type);
  assert(n >= 0);
  size_t esize = eddy_dtype_size(type->dtype);
  assert((uint64_t)n <= SIZE_MAX / esize && (size_t)n * esize == nbytes);
  if (n == 0)
    return eddy_dense_intern(ctx, type, "", 0, false);
  unsigned char *norm = NULL;
  const unsigned char *p = data;
  if (type->dtype == EDDY_DT_I1) {
    norm = malloc(nbytes);
    if (!norm) {
      fprintf(stderr, "eddy: out of memory (dense attribute)\n");
      abort();
    }
    memcpy(norm, data, nbytes);
    eddy_dense_normalize_i1(norm, nbytes);
    p = norm;
  }
  bool splat = true;
  for (size_t i = esize; i < nbytes; i += esize)
    if (memcmp(p, p + i, esize) != 0) {
      splat = false;
      break;
    }
  const eddy_attr_t *a =
      eddy_dense_intern(ctx, type, p, splat ? esize : nbytes, splat);
  free(norm);
  return a;
}

const eddy_attr_t *eddy_ir_dense_splat_attr_get(eddy_ctx_t *ctx,
                                                const eddy_type_t *type,
                                                const void *elem) {
  assert(eddy_ir_type_is_static(type));
  int64_t n = eddy_ir_type_num_elements(type);
  assert(n >= 0);
  if (n == 0)
    return eddy_dense_intern(ctx, type, "", 0, false);
  size_t esize = eddy_dtype_size(type->dtype);
  unsigned char e[8];
  memcpy(e, elem, esize);
  if (type->dtype == EDDY_DT_I1)
    eddy_dense_normalize_i1(e, 1);
  return eddy_dense_intern(ctx, type, e, esize, true);
}

/// Pointer to element i (the only element of a splat).
static const unsigned char *eddy_dense_elem(const eddy_attr_t *a, int64_t i) {
  assert(a && a->kind == EDDY_ATTR_DENSE);
  size_t esize = eddy_dtype_size(a->type->dtype);
  assert(i >= 0);
  if (a->u.dense.splat)
    return a->u.dense.data;
  assert((uint64_t)i < a->u.dense.nbytes / esize);
  return (const unsigned char *)a->u.dense.data + (size_t)i * esize;
}

double eddy_ir_dense_attr_f64(const eddy_attr_t *a, int64_t i) {
  const unsigned char *p = eddy_dense_elem(a, i);
  switch (a->type->dtype) {
  case EDDY_DT_F16: {
    uint16_t h;
    memcpy(&h, p, 2);
    return eddy_f16_to_f32(h);
  }
  case EDDY_DT_BF16: {
    uint16_t h;
    memcpy(&h, p, 2);
    return eddy_bf16_to_f32(h);
  }
  case EDDY_DT_F32: {
    float f;
    memcpy(&f, p, 4);
    return f;
  }
  case EDDY_DT_F64: {
    double d;
    memcpy(&d, p, 8);
    return d;
  }
  case EDDY_DT_I1:
    return *p ? 1.0 : 0.0;
  case EDDY_DT_I8:
    return (int8_t)*p;
  case EDDY_DT_I32: {
    int32_t v;
    memcpy(&v, p, 4);
    return v;
  }
  case EDDY_DT_I64: {
    int64_t v;
    memcpy(&v, p, 8);
    return (double)v;
  }
  default:
    break;
  }
  assert(!"bad dtype");
  return 0;
}

/// double -> int64 truncating toward zero, saturating out of range; NaN
/// gives 0 (the C conversion is undefined there).
static int64_t eddy_f64_to_i64_sat(double d) {
  if (isnan(d))
    return 0;
  if (d >= 0x1p63)
    return INT64_MAX;
  if (d < -0x1p63)
    return INT64_MIN;
  return (int64_t)d;
}

int64_t eddy_ir_dense_attr_i64(const eddy_attr_t *a, int64_t i) {
  const unsigned char *p = eddy_dense_elem(a, i);
  switch (a->type->dtype) {
  case EDDY_DT_I1:
    return *p != 0;
  case EDDY_DT_I8:
    return (int8_t)*p;
  case EDDY_DT_I32: {
    int32_t v;
    memcpy(&v, p, 4);
    return v;
  }
  case EDDY_DT_I64: {
    int64_t v;
    memcpy(&v, p, 8);
    return v;
  }
  default:
    return eddy_f64_to_i64_sat(eddy_ir_dense_attr_f64(a, i));
  }
}

/// Writes v converted to dt at p.
static void eddy_dense_store_f64(unsigned char *p, eddy_dtype_t dt, double v) {
  switch (dt) {
  case EDDY_DT_F16: {
    /* exact once rounded in double, so the f32 steps do not round again */
    uint16_t h = eddy_f32_to_f16((float)eddy_float_to_dtype(v, dt));
    memcpy(p, &h, 2);
    break;
  }
  case EDDY_DT_BF16: {
    uint16_t h = eddy_f32_to_bf16((float)eddy_float_to_dtype(v, dt));
    memcpy(p, &h, 2);
    break;
  }
  case EDDY_DT_F32: {
    float f = (float)v;
    memcpy(p, &f, 4);
    break;
  }
  case EDDY_DT_F64:
    memcpy(p, &v, 8);
    break;
  case EDDY_DT_I1:
    *p = v != 0;
    break;
  case EDDY_DT_I8:
    *p = (unsigned char)(eddy_f64_to_i64_sat(v) & 0xff);
    break;
  case EDDY_DT_I32: {
    int32_t x = (int32_t)eddy_int_to_dtype(eddy_f64_to_i64_sat(v), dt);
    memcpy(p, &x, 4);
    break;
  }
  case EDDY_DT_I64: {
    int64_t x = eddy_f64_to_i64_sat(v);
    memcpy(p, &x, 8);
    break;
  }
  default:
    assert(!"bad dtype");
  }
}

static void eddy_dense_store_i64(unsigned char *p, eddy_dtype_t dt, int64_t v) {
  switch (dt) {
  case EDDY_DT_I1:
    *p = v != 0;
    break;
  case EDDY_DT_I8:
    *p = (unsigned char)((uint64_t)v & 0xff);
    break;
  case EDDY_DT_I32: {
    int32_t x = (int32_t)eddy_int_to_dtype(v, dt);
    memcpy(p, &x, 4);
    break;
  }
  case EDDY_DT_I64:
    memcpy(p, &v, 8);
    break;
  default:
    eddy_dense_store_f64(p, dt, (double)v);
  }
}

/// Shared body of from_f64 / from_i64: converts n values (n == 1: a splat).
static const eddy_attr_t *eddy_dense_from(eddy_ctx_t *ctx,
                                          const eddy_type_t *type,
                                          const void *v, size_t n,
                                          bool is_f64) {
  assert(eddy_ir_type_is_static(type));
  int64_t count = eddy_ir_type_num_elements(type);
  assert(count >= 0 && ((uint64_t)count == n || n == 1));
  eddy_dtype_t dt = type->dtype;
  size_t esize = eddy_dtype_size(dt);
  if (count == 0)
    return eddy_dense_intern(ctx, type, "", 0, false);
  if (n == 1 || count == 1) {
    unsigned char e[8];
    if (is_f64)
      eddy_dense_store_f64(e, dt, ((const double *)v)[0]);
    else
      eddy_dense_store_i64(e, dt, ((const int64_t *)v)[0]);
    return eddy_ir_dense_splat_attr_get(ctx, type, e);
  }
  assert(n <= SIZE_MAX / esize);
  unsigned char *buf = malloc(n * esize);
  if (!buf) {
    fprintf(stderr, "eddy: out of memory (dense attribute)\n");
    abort();
  }
  for (size_t i = 0; i < n; i++) {
    if (is_f64)
      eddy_dense_store_f64(buf + i * esize, dt, ((const double *)v)[i]);
    else
      eddy_dense_store_i64(buf + i * esize, dt, ((const int64_t *)v)[i]);
  }
  const eddy_attr_t *a = eddy_ir_dense_attr_get(ctx, type, buf, n * esize);
  free(buf);
  return a;
}

const eddy_attr_t *eddy_ir_dense_attr_from_f64(eddy_ctx_t *ctx,
                                               const eddy_type_t *type,
                                               const double *v, size_t n) {
  return eddy_dense_from(ctx, type, v, n, true);
}

const eddy_attr_t *eddy_ir_dense_attr_from_i64(eddy_ctx_t *ctx,
                                               const eddy_type_t *type,
                                               const int64_t *v, size_t n) {
  return eddy_dense_from(ctx, type, v, n, false);
}

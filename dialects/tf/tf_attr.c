/// TensorFlow types, shapes, tensors and attribute values as eddy types and
/// attributes. Everything here validates what it converts: the values come
/// from a file, so a negative dim, an element count that overflows or a
/// payload that does not fill its shape is an error, never an assert.
#include "dialects/tf/tf_internal.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DT(x) TENSORFLOW__DATA_TYPE__DT_##x

/// Names for the TensorFlow dtypes eddy has no tensors of (indexed by
/// DataType); eddy's own dtypes use eddy's names.
static const char *const k_tf_names[] = {
    "invalid", "float",     "double",  "int32",  "uint8",      "int16",
    "int8",    "string",    "complex64", "int64", "bool",      "qint8",
    "quint8",  "qint32",    "bfloat16", "qint16", "quint16",   "uint16",
    "complex128", "half",   "resource", "variant", "uint32",   "uint64",
};

int eddy_tf_dtype_base(int tf_dtype) {
  return tf_dtype > 100 ? tf_dtype - 100 : tf_dtype;
}

bool eddy_tf_dtype_to_eddy(int tf_dtype, eddy_dtype_t *out) {
  switch (eddy_tf_dtype_base(tf_dtype)) {
  case DT(FLOAT):
    *out = EDDY_DT_F32;
    return true;
  case DT(DOUBLE):
    *out = EDDY_DT_F64;
    return true;
  case DT(HALF):
    *out = EDDY_DT_F16;
    return true;
  case DT(BFLOAT16):
    *out = EDDY_DT_BF16;
    return true;
  case DT(BOOL):
    *out = EDDY_DT_I1;
    return true;
  case DT(INT8):
    *out = EDDY_DT_I8;
    return true;
  case DT(INT32):
    *out = EDDY_DT_I32;
    return true;
  case DT(INT64):
    *out = EDDY_DT_I64;
    return true;
  default:
    return false;
  }
}

const char *eddy_tf_dtype_name(int tf_dtype) {
  eddy_dtype_t dt;
  if (eddy_tf_dtype_to_eddy(tf_dtype, &dt))
    return eddy_dtype_name(dt);
  int base = eddy_tf_dtype_base(tf_dtype);
  if (base >= 0 && (size_t)base < sizeof k_tf_names / sizeof k_tf_names[0])
    return k_tf_names[base];
  return "unknown";
}

static eddy_status_t invalid(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static eddy_status_t invalid(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  eddy_status_t st = eddy_status_createv(EDDY_ERR_INVALID_ARGUMENT, fmt, ap);
  va_end(ap);
  return st;
}

/// Validates a shape's dims into dims[] (which holds EDDY_TF_MAX_RANK);
/// *rank is EDDY_RANK_UNKNOWN for an unknown rank. allow_unknown admits -1
/// dims and unknown ranks (attributes, not constants).
static eddy_status_t shape_dims(const Tensorflow__TensorShapeProto *s,
                                bool allow_unknown, int32_t *rank,
                                int64_t *dims) {
  *rank = 0;
  if (!s)
    return NULL;
  if (s->unknown_rank) {
    if (!allow_unknown)
      return invalid("the shape has an unknown rank");
    *rank = EDDY_RANK_UNKNOWN;
    return NULL;
  }
  if (s->n_dim > EDDY_TF_MAX_RANK)
    return invalid("the shape has %zu dimensions (at most %d)", s->n_dim,
                   EDDY_TF_MAX_RANK);
  int64_t numel = 1; // of the known dims: every size must fit int64
  for (size_t i = 0; i < s->n_dim; i++) {
    int64_t d = s->dim[i]->size;
    if (d < -1 || (d == -1 && !allow_unknown))
      return invalid("dimension %zu of the shape is %lld", i, (long long)d);
    dims[i] = d < 0 ? EDDY_DIM_DYNAMIC : d;
    if (d >= 0 && !eddy_checked_mul_i64(numel, d, &numel))
      return invalid("the element count of the shape overflows");
  }
  *rank = (int32_t)s->n_dim;
  return NULL;
}

eddy_status_t eddy_tf_shape_type(eddy_ctx_t *ctx,
                                 const Tensorflow__TensorShapeProto *shape,
                                 eddy_dtype_t dt, const eddy_type_t **out) {
  int64_t dims[EDDY_TF_MAX_RANK];
  int32_t rank;
  if (!shape) {
    *out = eddy_ir_tensor_type_get(ctx, dt, EDDY_RANK_UNKNOWN, NULL);
    return NULL;
  }
  EDDY_RETURN_IF_ERROR(shape_dims(shape, true, &rank, dims));
  *out = eddy_ir_tensor_type_get(ctx, dt, rank, rank > 0 ? dims : NULL);
  return NULL;
}

/// ---- Tensors ---------------------------------------------------------------

/// The repeated fields of a TensorProto, to find the one holding values.
typedef struct value_field {
  const char *name;
  size_t n;
} value_field_t;

static size_t value_fields(const Tensorflow__TensorProto *t,
                           value_field_t *f) {
  size_t k = 0;
  f[k++] = (value_field_t){"float_val", t->n_float_val};
  f[k++] = (value_field_t){"double_val", t->n_double_val};
  f[k++] = (value_field_t){"int_val", t->n_int_val};
  f[k++] = (value_field_t){"int64_val", t->n_int64_val};
  f[k++] = (value_field_t){"bool_val", t->n_bool_val};
  f[k++] = (value_field_t){"half_val", t->n_half_val};
  f[k++] = (value_field_t){"string_val", t->n_string_val};
  f[k++] = (value_field_t){"uint32_val", t->n_uint32_val};
  f[k++] = (value_field_t){"uint64_val", t->n_uint64_val};
  return k;
}

static const char *field_for(eddy_dtype_t dt) {
  switch (dt) {
  case EDDY_DT_F32:
    return "float_val";
  case EDDY_DT_F64:
    return "double_val";
  case EDDY_DT_I8:
  case EDDY_DT_I32:
    return "int_val";
  case EDDY_DT_I64:
    return "int64_val";
  case EDDY_DT_I1:
    return "bool_val";
  case EDDY_DT_F16:
  case EDDY_DT_BF16:
    return "half_val";
  case EDDY_DT_COUNT_:
    break;
  }
  return "";
}

/// Stores value i of the dtype's repeated field at p.
static void store_value(const Tensorflow__TensorProto *t, eddy_dtype_t dt,
                        size_t i, unsigned char *p) {
  switch (dt) {
  case EDDY_DT_F32:
    memcpy(p, &t->float_val[i], 4);
    break;
  case EDDY_DT_F64:
    memcpy(p, &t->double_val[i], 8);
    break;
  case EDDY_DT_I8: {
    int8_t v = (int8_t)t->int_val[i];
    memcpy(p, &v, 1);
    break;
  }
  case EDDY_DT_I32:
    memcpy(p, &t->int_val[i], 4);
    break;
  case EDDY_DT_I64:
    memcpy(p, &t->int64_val[i], 8);
    break;
  case EDDY_DT_I1:
    *p = t->bool_val[i] ? 1 : 0;
    break;
  case EDDY_DT_F16:
  case EDDY_DT_BF16: {
    uint16_t v = (uint16_t)t->half_val[i];
    memcpy(p, &v, 2);
    break;
  }
  case EDDY_DT_COUNT_:
    break;
  }
}

eddy_status_t eddy_tf_tensor_to_dense(eddy_ctx_t *ctx,
                                      const Tensorflow__TensorProto *t,
                                      const eddy_attr_t **out) {
  *out = NULL;
  eddy_dtype_t dt;
  if (!eddy_tf_dtype_to_eddy(t->dtype, &dt))
    return eddy_status_create(EDDY_ERR_UNSUPPORTED,
                              "tensors of dtype %s are not supported",
                              eddy_tf_dtype_name(t->dtype));
  int64_t dims[EDDY_TF_MAX_RANK];
  int32_t rank;
  EDDY_RETURN_IF_ERROR(shape_dims(t->tensor_shape, false, &rank, dims));
  int64_t numel = 1, nbytes;
  for (int32_t i = 0; i < rank; i++)
    if (!eddy_checked_mul_i64(numel, dims[i], &numel))
      return invalid("the element count of the shape overflows");
  size_t esize = eddy_dtype_size(dt);
  if (!eddy_checked_mul_i64(numel, (int64_t)esize, &nbytes) ||
      (uint64_t)nbytes > SIZE_MAX)
    return invalid("the size in bytes of the tensor overflows");
  const eddy_type_t *type =
      eddy_ir_tensor_type_get(ctx, dt, rank, rank > 0 ? dims : NULL);

  value_field_t fields[9];
  size_t nf = value_fields(t, fields);
  const char *want = field_for(dt);
  size_t n = 0;
  for (size_t i = 0; i < nf; i++) {
    if (strcmp(fields[i].name, want) == 0) {
      n = fields[i].n;
    } else if (fields[i].n > 0) {
      return invalid("the tensor has dtype %s but its values are in %s",
                     eddy_tf_dtype_name(t->dtype), fields[i].name);
    }
  }

  if (t->tensor_content.len > 0) {
    if (n > 0)
      return invalid("the tensor has both tensor_content and %s", want);
    if ((uint64_t)t->tensor_content.len != (uint64_t)nbytes)
      return invalid("tensor_content has %zu bytes, but %lld elements of %s "
                     "take %lld",
                     t->tensor_content.len, (long long)numel,
                     eddy_dtype_name(dt), (long long)nbytes);
    // tensor_content is little-endian, as eddy's dense data.
    *out = eddy_ir_dense_attr_get(ctx, type, t->tensor_content.data,
                                  (size_t)nbytes);
    return NULL;
  }
  if ((uint64_t)n > (uint64_t)numel)
    return invalid("the tensor has %zu values in %s for %lld elements", n,
                   want, (long long)numel);
  unsigned char elem[8] = {0};
  if (numel == 0) {
    *out = eddy_ir_dense_attr_get(ctx, type, elem, 0);
    return NULL;
  }
  // No values means zeros; one value, or a last value repeated, fills the
  // shape (TensorFlow's rule), so a splat needs no expansion.
  if (n <= 1) {
    if (n == 1)
      store_value(t, dt, 0, elem);
    *out = eddy_ir_dense_splat_attr_get(ctx, type, elem);
    return NULL;
  }
  if (nbytes > EDDY_TF_MAX_EXPANDED_BYTES)
    return eddy_status_create(EDDY_ERR_RESOURCE,
                              "the tensor would take %lld bytes once its %zu "
                              "values are expanded (at most %lld)",
                              (long long)nbytes, n,
                              (long long)EDDY_TF_MAX_EXPANDED_BYTES);
  unsigned char *buf = malloc((size_t)nbytes);
  if (!buf)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  for (int64_t i = 0; i < numel; i++)
    store_value(t, dt, (size_t)i < n ? (size_t)i : n - 1,
                buf + (size_t)i * esize);
  *out = eddy_ir_dense_attr_get(ctx, type, buf, (size_t)nbytes);
  free(buf);
  return NULL;
}

/// ---- Attribute values ------------------------------------------------------

static eddy_status_t shape_attr(eddy_ctx_t *ctx,
                                const Tensorflow__TensorShapeProto *s,
                                const eddy_attr_t **out) {
  int64_t dims[EDDY_TF_MAX_RANK];
  int32_t rank;
  EDDY_RETURN_IF_ERROR(shape_dims(s, true, &rank, dims));
  if (rank == EDDY_RANK_UNKNOWN) {
    *out = eddy_ir_string_attr_get(ctx, "*", 1);
    return NULL;
  }
  // Dynamic dims print as -1, TensorFlow's spelling.
  *out = eddy_ir_i64_array_attr_get(ctx, dims, (size_t)rank);
  return NULL;
}

static eddy_status_t func_attr(eddy_ctx_t *ctx,
                               const Tensorflow__NameAttrList *f,
                               const eddy_attr_t **out) {
  if (!f->name || !f->name[0])
    return invalid("a function attribute names no function");
  *out = eddy_ir_symbol_attr_get(ctx, f->name, strlen(f->name));
  return NULL;
}

static eddy_status_t list_attr(eddy_ctx_t *ctx,
                               const Tensorflow__AttrValue__ListValue *l,
                               const eddy_attr_t **out) {
  size_t counts[8] = {l->n_s,     l->n_i,     l->n_f,      l->n_b,
                      l->n_type,  l->n_shape, l->n_tensor, l->n_func};
  int kind = -1;
  for (int k = 0; k < 8; k++) {
    if (!counts[k])
      continue;
    if (kind >= 0)
      return invalid("a list attribute mixes values of different kinds");
    kind = k;
  }
  if (kind < 0) {
    *out = eddy_ir_array_attr_get(ctx, NULL, 0);
    return NULL;
  }
  size_t n = counts[kind];
  const eddy_attr_t **elems = calloc(n, sizeof *elems);
  if (!elems)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  eddy_status_t st = NULL;
  for (size_t i = 0; i < n && !st; i++) {
    switch (kind) {
    case 0:
      elems[i] = eddy_ir_string_attr_get(ctx, (const char *)l->s[i].data,
                                         l->s[i].len);
      break;
    case 1:
      elems[i] = eddy_ir_int_attr_get(ctx, l->i[i], EDDY_DT_I64);
      break;
    case 2:
      elems[i] = eddy_ir_float_attr_get(ctx, l->f[i], EDDY_DT_F32);
      break;
    case 3:
      elems[i] = eddy_ir_bool_attr_get(ctx, l->b[i]);
      break;
    case 4: {
      const char *name = eddy_tf_dtype_name(l->type[i]);
      elems[i] = eddy_ir_string_attr_get(ctx, name, strlen(name));
      break;
    }
    case 5:
      st = shape_attr(ctx, l->shape[i], &elems[i]);
      break;
    case 6:
      st = eddy_tf_tensor_to_dense(ctx, l->tensor[i], &elems[i]);
      break;
    default:
      st = func_attr(ctx, l->func[i], &elems[i]);
      break;
    }
  }
  if (!st)
    *out = eddy_ir_array_attr_get(ctx, elems, n);
  free(elems);
  return st;
}

eddy_status_t eddy_tf_attr_convert(eddy_ctx_t *ctx,
                                   const Tensorflow__AttrValue *v,
                                   const eddy_attr_t **out) {
  *out = NULL;
  switch (v->value_case) {
  case TENSORFLOW__ATTR_VALUE__VALUE__NOT_SET:
    return NULL;
  case TENSORFLOW__ATTR_VALUE__VALUE_LIST:
    return list_attr(ctx, v->list, out);
  case TENSORFLOW__ATTR_VALUE__VALUE_S:
    *out = eddy_ir_string_attr_get(ctx, (const char *)v->s.data, v->s.len);
    return NULL;
  case TENSORFLOW__ATTR_VALUE__VALUE_I:
    *out = eddy_ir_int_attr_get(ctx, v->i, EDDY_DT_I64);
    return NULL;
  case TENSORFLOW__ATTR_VALUE__VALUE_F:
    *out = eddy_ir_float_attr_get(ctx, v->f, EDDY_DT_F32);
    return NULL;
  case TENSORFLOW__ATTR_VALUE__VALUE_B:
    *out = eddy_ir_bool_attr_get(ctx, v->b);
    return NULL;
  case TENSORFLOW__ATTR_VALUE__VALUE_TYPE: {
    const char *name = eddy_tf_dtype_name(v->type);
    *out = eddy_ir_string_attr_get(ctx, name, strlen(name));
    return NULL;
  }
  case TENSORFLOW__ATTR_VALUE__VALUE_SHAPE:
    return shape_attr(ctx, v->shape, out);
  case TENSORFLOW__ATTR_VALUE__VALUE_TENSOR:
    return eddy_tf_tensor_to_dense(ctx, v->tensor, out);
  case TENSORFLOW__ATTR_VALUE__VALUE_PLACEHOLDER:
    return eddy_status_create(EDDY_ERR_UNSUPPORTED,
                              "the value is a placeholder for attribute '%s' "
                              "of a polymorphic function, which is not "
                              "supported",
                              v->placeholder ? v->placeholder : "");
  case TENSORFLOW__ATTR_VALUE__VALUE_FUNC:
    return func_attr(ctx, v->func, out);
  default:
    break;
  }
  return invalid("unknown kind of attribute value (%d)", (int)v->value_case);
}

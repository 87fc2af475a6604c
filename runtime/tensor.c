/// Dtypes, tensor descriptors and element access.
#include "runtime/rt_internal.h"

#include <inttypes.h>
#include <stdio.h>

static const char *const rt_dtype_names[EDDY_RT_DTYPE_COUNT_] = {
    "f16", "bf16", "f32", "f64", "i1", "i8", "i32", "i64"};
static const size_t rt_dtype_sizes[EDDY_RT_DTYPE_COUNT_] = {2, 2, 4, 8,
                                                            1, 1, 4, 8};

static bool rt_dtype_valid(int32_t dt) {
  return dt >= 0 && dt < EDDY_RT_DTYPE_COUNT_;
}

const char *eddy_rt_dtype_name(int32_t dtype) {
  return rt_dtype_valid(dtype) ? rt_dtype_names[dtype] : "?";
}

size_t eddy_rt_dtype_size(int32_t dtype) {
  return rt_dtype_valid(dtype) ? rt_dtype_sizes[dtype] : 0;
}

bool eddy_rt_dtype_is_float(int32_t dtype) {
  return dtype == EDDY_RT_F16 || dtype == EDDY_RT_BF16 ||
         dtype == EDDY_RT_F32 || dtype == EDDY_RT_F64;
}

bool eddy_rt_dtype_is_int(int32_t dtype) {
  return dtype == EDDY_RT_I8 || dtype == EDDY_RT_I32 || dtype == EDDY_RT_I64;
}

float eddy_rt_f16_to_f32(uint16_t h) { return eddy_scalar_f16_to_f32(h); }
uint16_t eddy_rt_f32_to_f16(float f) { return eddy_scalar_f32_to_f16(f); }
float eddy_rt_bf16_to_f32(uint16_t h) { return eddy_scalar_bf16_to_f32(h); }
uint16_t eddy_rt_f32_to_bf16(float f) { return eddy_scalar_f32_to_bf16(f); }

/// ---- Element conversions --------------------------------------------------------

double rt_load_f64(int32_t dtype, const void *p) {
  switch (dtype) {
  case EDDY_RT_F16: {
    uint16_t h;
    memcpy(&h, p, 2);
    return eddy_scalar_f16_to_f32(h);
  }
  case EDDY_RT_BF16: {
    uint16_t h;
    memcpy(&h, p, 2);
    return eddy_scalar_bf16_to_f32(h);
  }
  case EDDY_RT_F32: {
    float f;
    memcpy(&f, p, 4);
    return f;
  }
  case EDDY_RT_F64: {
    double d;
    memcpy(&d, p, 8);
    return d;
  }
  default:
    return (double)rt_load_i64(dtype, p);
  }
}

int64_t rt_load_i64(int32_t dtype, const void *p) {
  switch (dtype) {
  case EDDY_RT_I1:
    return *(const uint8_t *)p != 0;
  case EDDY_RT_I8:
    return *(const int8_t *)p;
  case EDDY_RT_I32: {
    int32_t v;
    memcpy(&v, p, 4);
    return v;
  }
  case EDDY_RT_I64: {
    int64_t v;
    memcpy(&v, p, 8);
    return v;
  }
  default:
    return eddy_scalar_sat_i64(rt_load_f64(dtype, p));
  }
}

void rt_store_f64(int32_t dtype, void *p, double v) {
  switch (dtype) {
  case EDDY_RT_F16: {
    uint16_t h = eddy_scalar_f32_to_f16((float)v);
    memcpy(p, &h, 2);
    break;
  }
  case EDDY_RT_BF16: {
    uint16_t h = eddy_scalar_f32_to_bf16((float)v);
    memcpy(p, &h, 2);
    break;
  }
  case EDDY_RT_F32: {
    float f = (float)v;
    memcpy(p, &f, 4);
    break;
  }
  case EDDY_RT_F64:
    memcpy(p, &v, 8);
    break;
  case EDDY_RT_I1:
    *(uint8_t *)p = v != 0;
    break;
  case EDDY_RT_I8:
    *(int8_t *)p = eddy_scalar_sat_i8(v);
    break;
  case EDDY_RT_I32: {
    int32_t x = eddy_scalar_sat_i32(v);
    memcpy(p, &x, 4);
    break;
  }
  case EDDY_RT_I64: {
    int64_t x = eddy_scalar_sat_i64(v);
    memcpy(p, &x, 8);
    break;
  }
  default:
    break;
  }
}

void rt_store_i64(int32_t dtype, void *p, int64_t v) {
  switch (dtype) {
  case EDDY_RT_I1:
    *(uint8_t *)p = v != 0;
    break;
  case EDDY_RT_I8:
    *(int8_t *)p = eddy_scalar_wrap_i8((uint64_t)v);
    break;
  case EDDY_RT_I32: {
    int32_t x = eddy_scalar_wrap_i32((uint64_t)v);
    memcpy(p, &x, 4);
    break;
  }
  case EDDY_RT_I64:
    memcpy(p, &v, 8);
    break;
  case EDDY_RT_F64: {
    double d = (double)v;
    memcpy(p, &d, 8);
    break;
  }
  default: // f16/bf16/f32: int -> f32 -> narrower, as the folder rounds
    rt_store_f64(dtype, p, (double)(float)v);
    break;
  }
}

/// ---- Descriptors ------------------------------------------------------------------

eddy_rt_tensor_t eddy_rt_tensor_empty(void) {
  eddy_rt_tensor_t t;
  memset(&t, 0, sizeof(t));
  t.struct_size = (uint32_t)sizeof(t);
  t.version = EDDY_RT_TENSOR_VERSION;
  return t;
}

bool rt_numel_checked(int32_t rank, const int64_t *dims, int64_t *out_n) {
  int64_t n = 1;
  bool overflow = false;
  for (int32_t i = 0; i < rank; i++) {
    if (dims[i] == 0) {
      *out_n = 0;
      return true; // an empty tensor is fine whatever the other dims are
    }
    if (!overflow && (dims[i] < 0 || n > INT64_MAX / dims[i]))
      overflow = true;
    else if (!overflow)
      n *= dims[i];
  }
  if (overflow)
    return false;
  *out_n = n;
  return true;
}

void rt_set_contiguous_strides(eddy_rt_tensor_t *t) {
  int64_t s = 1;
  for (int32_t i = t->rank - 1; i >= 0; i--) {
    t->strides[i] = s;
    s = rt_mul_sat(s, t->dims[i] > 0 ? t->dims[i] : 1);
  }
}

char *eddy_rt_shape_format(int32_t rank, const int64_t *dims, char *buf,
                           size_t size) {
  if (size == 0)
    return buf;
  size_t pos = 0;
  buf[0] = '\0';
  int n = snprintf(buf, size, "[");
  pos = n > 0 ? (size_t)n : 0;
  for (int32_t i = 0; i < rank && pos < size; i++) {
    n = snprintf(buf + pos, size - pos, "%s%" PRId64, i ? ", " : "", dims[i]);
    if (n < 0)
      break;
    pos += (size_t)n;
  }
  if (pos < size)
    snprintf(buf + pos, size - pos, "]");
  return buf;
}

char *rt_shape_str(const eddy_rt_tensor_t *t, char *buf) {
  return eddy_rt_shape_format(t->rank, t->dims, buf, RT_SHAPE_BUF);
}

char *rt_type_str(const eddy_rt_tensor_t *t, char *buf) {
  int n = snprintf(buf, RT_SHAPE_BUF, "%s", eddy_rt_dtype_name(t->dtype));
  eddy_rt_shape_format(t->rank, t->dims, buf + n, RT_SHAPE_BUF - (size_t)n);
  return buf;
}

static eddy_rt_status_t rt_tensor_init(int32_t dtype, int32_t rank,
                                       const int64_t *dims, const char *op,
                                       eddy_rt_tensor_t *t) {
  *t = eddy_rt_tensor_empty();
  if (!rt_dtype_valid(dtype))
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op, "invalid dtype %d",
                  (int)dtype);
  if (rank < 0 || rank > EDDY_RT_MAX_RANK)
    return rt_err(EDDY_RT_ERR_UNSUPPORTED, op,
                  "rank %d is outside what the runtime supports (0..%d)",
                  (int)rank, EDDY_RT_MAX_RANK);
  for (int32_t i = 0; i < rank; i++) {
    if (dims[i] < 0)
      return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                    "dimension %d is %" PRId64 ", expected >= 0", (int)i,
                    dims[i]);
  }
  int64_t n;
  if (!rt_numel_checked(rank, dims, &n) ||
      n > INT64_MAX / (int64_t)rt_dtype_sizes[dtype]) {
    char buf[RT_SHAPE_BUF];
    return rt_err(EDDY_RT_ERR_RESOURCE, op,
                  "a %s tensor of shape %s is too large (its byte size "
                  "overflows int64)",
                  rt_dtype_names[dtype],
                  eddy_rt_shape_format(rank, dims, buf, sizeof(buf)));
  }
  t->dtype = dtype;
  t->rank = rank;
  for (int32_t i = 0; i < rank; i++)
    t->dims[i] = dims[i];
  rt_set_contiguous_strides(t);
  return NULL;
}

eddy_rt_status_t rt_alloc_tensor(eddy_rt_ctx_t *ctx, const char *op,
                                 int32_t dtype, int32_t rank,
                                 const int64_t *dims, eddy_rt_tensor_t *out_t) {
  EDDY_RT_RETURN_IF_ERROR(rt_tensor_init(dtype, rank, dims, op, out_t));
  int64_t bytes = eddy_rt_tensor_numel(out_t) * (int64_t)rt_dtype_sizes[dtype];
  eddy_rt_buffer_t *buf;
  eddy_rt_status_t st = eddy_rt_buffer_create(ctx, bytes, op, &buf);
  if (st) {
    *out_t = eddy_rt_tensor_empty();
    return st;
  }
  out_t->owner = buf;
  out_t->data = eddy_rt_buffer_data(buf);
  return NULL;
}

eddy_rt_status_t eddy_rt_tensor_create(eddy_rt_ctx_t *ctx, int32_t dtype,
                                       int32_t rank, const int64_t *dims,
                                       const char *op,
                                       eddy_rt_tensor_t *out_t) {
  EDDY_RT_RETURN_IF_ERROR(rt_alloc_tensor(ctx, op ? op : "eddy_rt_tensor_create",
                                          dtype, rank, dims, out_t));
  memset(out_t->data, 0, (size_t)eddy_rt_buffer_size(out_t->owner));
  return NULL;
}

eddy_rt_status_t eddy_rt_tensor_wrap(int32_t dtype, int32_t rank,
                                     const int64_t *dims, void *data,
                                     eddy_rt_tensor_t *out_t) {
  EDDY_RT_RETURN_IF_ERROR(
      rt_tensor_init(dtype, rank, dims, "eddy_rt_tensor_wrap", out_t));
  if (!data && eddy_rt_tensor_numel(out_t) > 0) {
    *out_t = eddy_rt_tensor_empty();
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, "eddy_rt_tensor_wrap",
                  "data is NULL for a non-empty tensor");
  }
  out_t->data = data;
  return NULL;
}

void eddy_rt_tensor_release(eddy_rt_tensor_t *t) {
  if (!t)
    return;
  eddy_rt_buffer_release(t->owner);
  *t = eddy_rt_tensor_empty();
}

void eddy_rt_tensor_share(const eddy_rt_tensor_t *t, eddy_rt_tensor_t *out_t) {
  *out_t = *t;
  if (t->owner)
    eddy_rt_buffer_retain(t->owner);
}

eddy_rt_status_t eddy_rt_tensor_validate(const eddy_rt_tensor_t *t,
                                         const char *op, const char *what) {
  if (!t)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op, "%s is missing (NULL)",
                  what);
  if (t->struct_size != sizeof(eddy_rt_tensor_t) ||
      t->version != EDDY_RT_TENSOR_VERSION)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "%s has descriptor size %" PRIu32 " version %" PRIu32
                  ", expected size %zu version %u (ABI mismatch)",
                  what, t->struct_size, t->version, sizeof(eddy_rt_tensor_t),
                  EDDY_RT_TENSOR_VERSION);
  if (!rt_dtype_valid(t->dtype))
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op, "%s has invalid dtype %d",
                  what, (int)t->dtype);
  if (t->rank < 0 || t->rank > EDDY_RT_MAX_RANK)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "%s has rank %d, expected 0..%d", what, (int)t->rank,
                  EDDY_RT_MAX_RANK);
  for (int32_t i = 0; i < t->rank; i++) {
    if (t->dims[i] < 0)
      return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                    "%s has dimension %d of size %" PRId64 ", expected >= 0",
                    what, (int)i, t->dims[i]);
  }
  int64_t n;
  if (!rt_numel_checked(t->rank, t->dims, &n) ||
      n > INT64_MAX / (int64_t)rt_dtype_sizes[t->dtype]) {
    char buf[RT_SHAPE_BUF];
    return rt_err(EDDY_RT_ERR_RESOURCE, op,
                  "%s of shape %s is too large (its byte size overflows "
                  "int64)",
                  what, rt_shape_str(t, buf));
  }
  if (n > 0 && !t->data)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "%s has NULL data but %" PRId64 " elements", what, n);
  return NULL;
}

eddy_rt_status_t rt_check_operand(const eddy_rt_tensor_t *t, const char *op,
                                  int index) {
  char what[32];
  snprintf(what, sizeof(what), "operand %d", index);
  return eddy_rt_tensor_validate(t, op, what);
}

int64_t eddy_rt_tensor_numel(const eddy_rt_tensor_t *t) {
  // Saturating, so that the huge other dims of an empty tensor cannot
  // overflow before its zero is seen.
  int64_t n = 1;
  for (int32_t i = 0; i < t->rank; i++)
    n = rt_mul_sat(n, t->dims[i]);
  return n;
}

bool eddy_rt_tensor_is_contiguous(const eddy_rt_tensor_t *t) {
  // An empty tensor is, whatever its strides: look for a zero dim first,
  // since the inner dims of one may multiply past INT64_MAX (a .npy file of
  // shape (8430, 0, 5, 646668853801416, 20, ...)).
  for (int32_t i = 0; i < t->rank; i++)
    if (t->dims[i] == 0)
      return true;
  int64_t s = 1;
  for (int32_t i = t->rank - 1; i >= 0; i--) {
    if (t->dims[i] != 1 && t->strides[i] != s)
      return false;
    s = rt_mul_sat(s, t->dims[i]);
  }
  return true;
}

void *eddy_rt_tensor_elem_ptr(const eddy_rt_tensor_t *t, int64_t flat) {
  int64_t off = 0;
  for (int32_t i = t->rank - 1; i >= 0; i--) {
    int64_t d = t->dims[i];
    off += (flat % d) * t->strides[i];
    flat /= d;
  }
  return (char *)t->data + off * (int64_t)rt_dtype_sizes[t->dtype];
}

double eddy_rt_tensor_get_f64(const eddy_rt_tensor_t *t, int64_t flat) {
  return rt_load_f64(t->dtype, eddy_rt_tensor_elem_ptr(t, flat));
}

int64_t eddy_rt_tensor_get_i64(const eddy_rt_tensor_t *t, int64_t flat) {
  return rt_load_i64(t->dtype, eddy_rt_tensor_elem_ptr(t, flat));
}

void eddy_rt_tensor_set_f64(eddy_rt_tensor_t *t, int64_t flat, double v) {
  rt_store_f64(t->dtype, eddy_rt_tensor_elem_ptr(t, flat), v);
}

void eddy_rt_tensor_set_i64(eddy_rt_tensor_t *t, int64_t flat, int64_t v) {
  rt_store_i64(t->dtype, eddy_rt_tensor_elem_ptr(t, flat), v);
}

bool eddy_rt_tensor_same_shape(const eddy_rt_tensor_t *a,
                               const eddy_rt_tensor_t *b) {
  if (a->dtype != b->dtype || a->rank != b->rank)
    return false;
  for (int32_t i = 0; i < a->rank; i++) {
    if (a->dims[i] != b->dims[i])
      return false;
  }
  return true;
}

eddy_rt_status_t rt_norm_axis(const char *op, const char *what, int64_t axis,
                              int32_t rank, int32_t *out_axis) {
  if (axis < -(int64_t)rank || axis >= (int64_t)rank)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "%s %" PRId64 " is out of range for rank %d (expected %d..%d)",
                  what, axis, (int)rank, -(int)rank, (int)rank - 1);
  *out_axis = (int32_t)(axis < 0 ? axis + rank : axis);
  return NULL;
}

eddy_rt_status_t rt_read_index(const eddy_rt_tensor_t *t, const char *op,
                               const char *what, int64_t *out_v) {
  EDDY_RT_RETURN_IF_ERROR(eddy_rt_tensor_validate(t, op, what));
  if (t->rank != 0 || !eddy_rt_dtype_is_int(t->dtype)) {
    char buf[RT_SHAPE_BUF];
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "%s is %s, expected an integer scalar (i8, i32 or i64)",
                  what, rt_type_str(t, buf));
  }
  *out_v = rt_load_i64(t->dtype, t->data);
  return NULL;
}

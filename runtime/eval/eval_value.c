/// Evaluator values: ownership helpers, descriptions and previews for
/// messages and the CLI, type matching, and scalars parsed from text.
#include "runtime/eval/eval_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

eddy_eval_value_t eddy_eval_value_from_tensor(eddy_rt_tensor_t *owned_t) {
  eddy_eval_value_t v;
  memset(&v, 0, sizeof(v));
  v.kind = EDDY_EVAL_TENSOR;
  v.tensor = *owned_t;
  *owned_t = eddy_rt_tensor_empty();
  return v;
}

eddy_eval_value_t eddy_eval_value_from_list(eddy_rt_list_t *owned_list) {
  eddy_eval_value_t v;
  memset(&v, 0, sizeof(v));
  v.kind = EDDY_EVAL_LIST;
  v.tensor = eddy_rt_tensor_empty();
  v.list = owned_list;
  return v;
}

void eddy_eval_value_share(const eddy_eval_value_t *v, eddy_eval_value_t *out) {
  *out = *v;
  if (v->kind == EDDY_EVAL_TENSOR)
    eddy_rt_tensor_share(&v->tensor, &out->tensor);
  else if (v->kind == EDDY_EVAL_LIST)
    eddy_rt_list_retain(v->list);
}

void eddy_eval_value_release(eddy_eval_value_t *v) {
  if (!v)
    return;
  if (v->kind == EDDY_EVAL_TENSOR)
    eddy_rt_tensor_release(&v->tensor);
  else if (v->kind == EDDY_EVAL_LIST)
    eddy_rt_list_release(v->list);
  memset(v, 0, sizeof(*v));
}

void eddy_eval_tensor_describe(const eddy_rt_tensor_t *t, eddy_buf_t *out) {
  char shape[256];
  eddy_buf_printf(out, "%s%s", eddy_rt_dtype_name(t->dtype),
                  eddy_rt_shape_format(t->rank, t->dims, shape, sizeof shape));
}

void eddy_eval_value_describe(const eddy_eval_value_t *v, eddy_buf_t *out) {
  switch (v->kind) {
  case EDDY_EVAL_TENSOR:
    eddy_eval_tensor_describe(&v->tensor, out);
    return;
  case EDDY_EVAL_LIST:
    eddy_buf_puts(out, "list<");
    for (int32_t d = 0; d < eddy_rt_list_depth(v->list); d++)
      eddy_buf_puts(out, "list<");
    eddy_buf_puts(out, eddy_rt_dtype_name(eddy_rt_list_dtype(v->list)));
    for (int32_t d = 0; d < eddy_rt_list_depth(v->list); d++)
      eddy_buf_putc(out, '>');
    eddy_buf_printf(out, ", %" PRId64 " items>", eddy_rt_list_size(v->list));
    return;
  case EDDY_EVAL_RESOURCE:
    eddy_buf_printf(out, "resource #%" PRId64, v->resource);
    return;
  case EDDY_EVAL_NONE:
    break;
  }
  eddy_buf_puts(out, "none");
}

/// The float dtype's value of d (d is already exactly representable).
static bool roundtrips(int32_t dtype, double d, const char *text) {
  double back = strtod(text, NULL);
  switch (dtype) {
  case EDDY_RT_F64:
    return back == d;
  case EDDY_RT_F32:
    return (float)back == (float)d;
  case EDDY_RT_F16:
    return eddy_rt_f32_to_f16((float)back) == eddy_rt_f32_to_f16((float)d);
  case EDDY_RT_BF16:
    return eddy_rt_f32_to_bf16((float)back) == eddy_rt_f32_to_bf16((float)d);
  default:
    return back == d;
  }
}

/// Shortest text that reads back as the same value of the dtype, in
/// Python's style (always a '.' or an exponent, so floats look like floats).
static void format_float(int32_t dtype, double d, eddy_buf_t *out) {
  if (isnan(d)) {
    eddy_buf_puts(out, "nan");
    return;
  }
  if (isinf(d)) {
    eddy_buf_puts(out, d < 0 ? "-inf" : "inf");
    return;
  }
  char text[64];
  // Whole numbers print in full (65504.0, not 6.55e+04) while that stays
  // short; the rest gets the shortest text that reads back the same.
  if (d == floor(d) && fabs(d) < 1e16) {
    eddy_buf_printf(out, "%.0f.0", d);
    return;
  }
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(text, sizeof text, "%.*g", prec, d);
    if (roundtrips(dtype, d, text))
      break;
  }
  eddy_buf_puts(out, text);
  if (!strpbrk(text, ".e"))
    eddy_buf_puts(out, ".0");
}

static void format_elem(const eddy_rt_tensor_t *t, int64_t i,
                        eddy_buf_t *out) {
  if (t->dtype == EDDY_RT_I1)
    eddy_buf_puts(out, eddy_rt_tensor_get_i64(t, i) ? "true" : "false");
  else if (eddy_rt_dtype_is_float(t->dtype))
    format_float(t->dtype, eddy_rt_tensor_get_f64(t, i), out);
  else
    eddy_buf_printf(out, "%" PRId64, eddy_rt_tensor_get_i64(t, i));
}

void eddy_eval_value_preview(const eddy_eval_value_t *v, int64_t max_elems,
                             eddy_buf_t *out) {
  if (v->kind != EDDY_EVAL_TENSOR) {
    eddy_eval_value_describe(v, out);
    return;
  }
  const eddy_rt_tensor_t *t = &v->tensor;
  if (t->rank == 0) {
    format_elem(t, 0, out);
    return;
  }
  int64_t n = eddy_rt_tensor_numel(t);
  int64_t shown = (max_elems < 0 || max_elems > n) ? n : max_elems;
  eddy_buf_putc(out, '[');
  for (int64_t i = 0; i < shown; i++) {
    if (i)
      eddy_buf_puts(out, ", ");
    format_elem(t, i, out);
  }
  if (shown < n)
    eddy_buf_puts(out, shown ? ", ..." : "...");
  eddy_buf_putc(out, ']');
}

bool eddy_eval_value_matches(const eddy_eval_value_t *v,
                             const eddy_type_t *t) {
  if (!t)
    return false;
  if (t->kind == EDDY_TYPE_LIST) {
    if (v->kind != EDDY_EVAL_LIST)
      return false;
    // The nesting depth and the innermost dtype must agree.
    int32_t depth = 0;
    const eddy_type_t *e = t->elem;
    while (e && e->kind == EDDY_TYPE_LIST) {
      depth++;
      e = e->elem;
    }
    return e && depth == eddy_rt_list_depth(v->list) &&
           eddy_rt_list_dtype(v->list) == (int32_t)e->dtype;
  }
  if (t->kind != EDDY_TYPE_TENSOR || v->kind != EDDY_EVAL_TENSOR)
    return false;
  if (v->tensor.dtype != (int32_t)t->dtype)
    return false;
  if (t->rank == EDDY_RANK_UNKNOWN)
    return true;
  if (v->tensor.rank != t->rank)
    return false;
  for (int32_t i = 0; i < t->rank; i++) {
    if (t->dims[i] != EDDY_DIM_DYNAMIC && t->dims[i] != v->tensor.dims[i])
      return false;
  }
  return true;
}

/// ---- Scalars from text ---------------------------------------------------

static bool parse_int(const char *text, int64_t *out) {
  // Base 10, or hex with 0x; never octal, so "010" is ten.
  const char *p = text;
  bool neg = false;
  if (*p == '-' || *p == '+')
    neg = (*p++ == '-');
  int base = 10;
  if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
    base = 16;
    p += 2;
  }
  if (!*p || *p == '-' || *p == '+' || *p == ' ')
    return false;
  errno = 0;
  char *end = NULL;
  unsigned long long mag = strtoull(p, &end, base);
  if (errno || *end)
    return false;
  if (neg) {
    if (mag > (unsigned long long)INT64_MAX + 1ull)
      return false;
    *out = mag == (unsigned long long)INT64_MAX + 1ull ? INT64_MIN
                                                        : -(int64_t)mag;
  } else {
    if (mag > (unsigned long long)INT64_MAX)
      return false;
    *out = (int64_t)mag;
  }
  return true;
}

static bool parse_float(const char *text, double *out) {
  if (!*text || strchr(" \t\n", text[0]))
    return false;
  char *end = NULL;
  *out = strtod(text, &end);
  return *end == '\0';
}

eddy_status_t eddy_eval_scalar_from_text(eddy_rt_ctx_t *rt, eddy_dtype_t dt,
                                         const char *text,
                                         eddy_eval_value_t *out_value) {
  memset(out_value, 0, sizeof(*out_value));
  const char *dname = eddy_dtype_name(dt);
  int64_t iv = 0;
  double fv = 0;
  bool is_float = eddy_dtype_is_float(dt);
  if (dt == EDDY_DT_I1) {
    if (strcmp(text, "true") == 0 || strcmp(text, "1") == 0)
      iv = 1;
    else if (strcmp(text, "false") == 0 || strcmp(text, "0") == 0)
      iv = 0;
    else
      return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                                "'%s' is not an i1 value (true, false, 1, 0)",
                                text);
  } else if (is_float) {
    if (!parse_float(text, &fv))
      return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                                "'%s' is not a number (for %s)", text, dname);
  } else {
    if (!parse_int(text, &iv))
      return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                                "'%s' is not an integer (for %s)", text,
                                dname);
    int64_t lo = INT64_MIN, hi = INT64_MAX;
    if (dt == EDDY_DT_I8) {
      lo = INT8_MIN;
      hi = INT8_MAX;
    } else if (dt == EDDY_DT_I32) {
      lo = INT32_MIN;
      hi = INT32_MAX;
    }
    if (iv < lo || iv > hi)
      return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                                "%s is out of range for %s [%" PRId64
                                ", %" PRId64 "]",
                                text, dname, lo, hi);
  }
  eddy_rt_tensor_t t = eddy_rt_tensor_empty();
  eddy_rt_status_t rs =
      eddy_rt_tensor_create(rt, (int32_t)dt, 0, NULL, "input", &t);
  if (rs)
    return eddy_eval_from_rt(rs);
  if (is_float)
    eddy_rt_tensor_set_f64(&t, 0, fv);
  else
    eddy_rt_tensor_set_i64(&t, 0, iv);
  *out_value = eddy_eval_value_from_tensor(&t);
  return NULL;
}

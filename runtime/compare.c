/// Comparing results with references: the measures of `eddy run
/// --mode=compare`, for applications too (see eddyrt.h).
#include "runtime/rt_internal.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

double eddy_rt_dtype_eps(int32_t dtype) {
  switch (dtype) {
  case EDDY_RT_F16:
    return 9.765625e-4; // 2^-10
  case EDDY_RT_BF16:
    return 7.8125e-3; // 2^-7
  case EDDY_RT_F32:
    return FLT_EPSILON;
  case EDDY_RT_F64:
    return DBL_EPSILON;
  default:
    return 0;
  }
}

eddy_rt_compare_opts_t eddy_rt_compare_opts_default(void) {
  eddy_rt_compare_opts_t o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.rtol = -1;
  o.atol = -1;
  o.num_ops = 1;
  return o;
}

/// x's bits as a number that orders like x (negative values below 0).
static double ordered_f32(float x) {
  int32_t b;
  memcpy(&b, &x, sizeof b);
  return b < 0 ? -(double)(b & INT32_MAX) : (double)b;
}

static double ordered_f64(double x) {
  int64_t b;
  memcpy(&b, &x, sizeof b);
  return b < 0 ? -(double)(b & INT64_MAX) : (double)b;
}

/// Distance in units in the last place of the dtype between x and y
/// (f16 and bf16 through f32, scaled to their mantissas).
static double ulps(int32_t dt, double x, double y) {
  if (x == y)
    return 0;
  if (dt == EDDY_RT_F64)
    return fabs(ordered_f64(x) - ordered_f64(y));
  double d = fabs(ordered_f32((float)x) - ordered_f32((float)y));
  if (dt == EDDY_RT_F16)
    return d / 8192.0; // 23 - 10 mantissa bits
  if (dt == EDDY_RT_BF16)
    return d / 65536.0; // 23 - 7
  return d;
}

eddy_rt_status_t eddy_rt_compare_tensor(const eddy_rt_tensor_t *ref,
                                        const eddy_rt_tensor_t *got,
                                        const eddy_rt_compare_opts_t *opts,
                                        eddy_rt_compare_result_t *out_result) {
  eddy_rt_compare_result_t c;
  memset(&c, 0, sizeof c);
  c.worst = -1;
  *out_result = c;
  EDDY_RT_RETURN_IF_ERROR(eddy_rt_tensor_validate(ref, "compare", "reference"));
  EDDY_RT_RETURN_IF_ERROR(eddy_rt_tensor_validate(got, "compare", "result"));
  eddy_rt_compare_opts_t o = eddy_rt_compare_opts_default();
  if (opts && opts->struct_size >= sizeof o)
    o = *opts;
  c.same_type = eddy_rt_tensor_same_shape(ref, got);
  if (!c.same_type) {
    *out_result = c;
    return NULL;
  }
  int64_t n = eddy_rt_tensor_numel(ref);
  bool is_float = eddy_rt_dtype_is_float(ref->dtype);
  double ref_max = 0, worst = 0;
  for (int64_t k = 0; k < n; k++) {
    double d = 0, rel = 0, u = 0;
    if (is_float) {
      double x = eddy_rt_tensor_get_f64(ref, k);
      double y = eddy_rt_tensor_get_f64(got, k);
      if (isfinite(x) && fabs(x) > ref_max)
        ref_max = fabs(x);
      if (isnan(x) || isnan(y))
        d = u = isnan(x) && isnan(y) ? 0 : INFINITY;
      else if (x != y) {
        d = isinf(x) || isinf(y) ? INFINITY : fabs(x - y);
        u = ulps(ref->dtype, x, y);
      }
      rel = d == 0 ? 0 : d / (fabs(x) > 0 ? fabs(x) : DBL_MIN);
    } else {
      int64_t x = eddy_rt_tensor_get_i64(ref, k);
      int64_t y = eddy_rt_tensor_get_i64(got, k);
      d = u = x == y ? 0 : fabs((double)x - (double)y);
      rel = d == 0 ? 0 : d / (x ? fabs((double)x) : 1.0);
    }
    if (d > worst) {
      worst = d;
      c.worst = k;
    }
    c.max_abs = d > c.max_abs ? d : c.max_abs;
    c.max_rel = rel > c.max_rel ? rel : c.max_rel;
    c.max_ulp = u > c.max_ulp ? u : c.max_ulp;
  }
  if (is_float) {
    int64_t ops = o.num_ops > 0 ? o.num_ops : 1;
    double rtol =
        o.rtol >= 0 ? o.rtol : 4 * eddy_rt_dtype_eps(ref->dtype) * (double)ops;
    double atol = o.atol >= 0 ? o.atol : 0;
    c.tolerance = atol + rtol * ref_max;
    c.ok = c.max_abs <= c.tolerance;
  } else {
    c.ok = c.max_abs == 0;
  }
  *out_result = c;
  return NULL;
}

eddy_rt_status_t eddy_rt_compare_entry(eddy_rt_ctx_t *rt, eddy_rt_entry_fn run,
                                       const eddy_rt_tensor_t *args,
                                       const eddy_rt_tensor_t *refs,
                                       int64_t num_results,
                                       const eddy_rt_compare_opts_t *opts,
                                       eddy_rt_compare_result_t *out_results,
                                       bool *out_ok) {
  *out_ok = false;
  if (!run || num_results < 0 || (num_results > 0 && (!refs || !out_results)))
    return eddy_rt_status_create(EDDY_RT_ERR_INVALID_ARGUMENT,
                                 "compare: no entry, a negative result count, "
                                 "or no references or reports");
  if ((uint64_t)num_results > SIZE_MAX / sizeof(eddy_rt_tensor_t))
    return eddy_rt_status_create(EDDY_RT_ERR_RESOURCE,
                                 "compare: %" PRId64 " results are too many",
                                 num_results);
  eddy_rt_tensor_t *got =
      malloc((size_t)(num_results ? num_results : 1) * sizeof *got);
  if (!got)
    return eddy_rt_status_create(EDDY_RT_ERR_RESOURCE, "compare: out of memory");
  for (int64_t i = 0; i < num_results; i++)
    got[i] = eddy_rt_tensor_empty();
  char err[512] = "";
  int32_t code = run(rt, args, got, err, sizeof err);
  eddy_rt_status_t st = NULL;
  if (code != EDDY_RT_OK) {
    st = eddy_rt_status_create((eddy_rt_code_t)code, "the entry failed: %s",
                               err);
  } else {
    bool ok = true;
    for (int64_t i = 0; i < num_results && !st; i++) {
      st = eddy_rt_compare_tensor(&refs[i], &got[i], opts, &out_results[i]);
      ok = ok && out_results[i].ok;
    }
    *out_ok = ok && !st;
  }
  for (int64_t i = 0; i < num_results; i++)
    eddy_rt_tensor_release(&got[i]);
  free(got);
  return st;
}

/// snprintf onto the end of what is written so far; *len counts the whole
/// text, also what did not fit.
typedef struct json_out {
  char *buf;
  size_t size, len;
} json_out_t;

EDDY_RT_PRINTF(2, 3)
static void json_put(json_out_t *o, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *at = o->len < o->size ? o->buf + o->len : NULL;
  size_t room = o->len < o->size ? o->size - o->len : 0;
  int n = vsnprintf(at, room, fmt, ap);
  va_end(ap);
  if (n > 0)
    o->len += (size_t)n;
}

/// A number, or null when it is not finite (JSON has no inf or NaN).
static void json_num(json_out_t *o, const char *key, double x) {
  if (isfinite(x))
    json_put(o, ", \"%s\": %.9g", key, x);
  else
    json_put(o, ", \"%s\": null", key);
}

size_t eddy_rt_compare_json(const eddy_rt_compare_result_t *results,
                            int64_t num_results, char *buf, size_t size) {
  json_out_t o = {buf, buf ? size : 0, 0};
  if (o.size)
    buf[0] = '\0';
  json_put(&o, "[");
  for (int64_t k = 0; k < num_results; k++) {
    const eddy_rt_compare_result_t *c = &results[k];
    json_put(&o, "%s\n  {\"index\": %" PRId64 ", \"ok\": %s, \"same_type\": %s",
             k ? "," : "", k, c->ok ? "true" : "false",
             c->same_type ? "true" : "false");
    if (c->same_type) {
      json_num(&o, "max_abs", c->max_abs);
      json_num(&o, "max_rel", c->max_rel);
      json_num(&o, "max_ulp", c->max_ulp);
      json_num(&o, "tolerance", c->tolerance);
    }
    json_put(&o, "}");
  }
  json_put(&o, num_results ? "\n]" : "]");
  return o.len;
}

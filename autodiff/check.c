/// The gradient checker: compares the vector-Jacobian product of a gradient
/// function with central differences of the function itself, through
/// <t, J v> = <J^T t, v>, in f64, on the reference evaluator. A function
/// that computes in lower precision (a TensorFlow model in f32) is checked
/// through an f64 copy (promote.c), and its own gradient is compared with
/// the copy's.
#include "autodiff/ad.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TRY EDDY_RETURN_IF_ERROR

static eddy_status_t from_rt(eddy_rt_status_t st) {
  if (!st)
    return NULL;
  eddy_status_t out = eddy_status_create(
      (eddy_status_code_t)eddy_rt_status_code(st), "%s",
      eddy_rt_status_message(st));
  eddy_rt_status_destroy(st);
  return out;
}

/// xorshift64*: a small deterministic generator (no global state).
static double rng_uniform(uint64_t *state) {
  uint64_t x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return (double)((x * 2685821657736338717ull) >> 11) * 0x1.0p-53;
}

eddy_ad_check_opts_t eddy_ad_check_opts_default(void) {
  eddy_ad_check_opts_t o = {
      .num_directions = 3, .seed = 1, .step = 1e-3, .rtol = 1e-6,
      .atol = 1e-9, .low_rtol = 0, .low_atol = 0};
  return o;
}

static void release_all(eddy_eval_value_t *v, size_t n) {
  if (!v)
    return;
  for (size_t i = 0; i < n; i++)
    eddy_eval_value_release(&v[i]);
}

/// A tensor shaped like `like` (dtype dt) filled with uniform [lo, hi].
static eddy_status_t random_like(eddy_rt_ctx_t *rt, const eddy_rt_tensor_t *like,
                                 int32_t dt, double lo, double hi,
                                 uint64_t *state, eddy_eval_value_t *out) {
  eddy_rt_tensor_t t = eddy_rt_tensor_empty();
  TRY(from_rt(eddy_rt_tensor_create(rt, dt, like->rank, like->dims,
                                    "gradient check", &t)));
  int64_t n = eddy_rt_tensor_numel(&t);
  if (eddy_rt_dtype_is_float(dt))
    for (int64_t i = 0; i < n; i++)
      eddy_rt_tensor_set_f64(&t, i, lo + (hi - lo) * rng_uniform(state));
  *out = eddy_eval_value_from_tensor(&t);
  return NULL;
}

/// x + h * v, elementwise (same shapes).
static eddy_status_t axpy(eddy_rt_ctx_t *rt, const eddy_rt_tensor_t *x,
                          double h, const eddy_rt_tensor_t *v,
                          eddy_eval_value_t *out) {
  eddy_rt_tensor_t t = eddy_rt_tensor_empty();
  TRY(from_rt(eddy_rt_tensor_create(rt, x->dtype, x->rank, x->dims,
                                    "gradient check", &t)));
  int64_t n = eddy_rt_tensor_numel(&t);
  for (int64_t i = 0; i < n; i++)
    eddy_rt_tensor_set_f64(&t, i, eddy_rt_tensor_get_f64(x, i) +
                                      h * eddy_rt_tensor_get_f64(v, i));
  *out = eddy_eval_value_from_tensor(&t);
  return NULL;
}

static double dot(const eddy_rt_tensor_t *a, const eddy_rt_tensor_t *b) {
  int64_t n = eddy_rt_tensor_numel(a);
  double s = 0.0;
  for (int64_t i = 0; i < n; i++)
    s += eddy_rt_tensor_get_f64(a, i) * eddy_rt_tensor_get_f64(b, i);
  return s;
}

/// What one check works on: F and its gradient as given, and their f64
/// forms (the same functions when F computes in f64 throughout).
typedef struct check_state {
  eddy_rt_ctx_t *rt;
  const eddy_op_t *func, *grad;
  const eddy_op_t *func64, *grad64;
  bool promoted;
  size_t nin, nout;
  const size_t *wrt;
  size_t num_wrt;
  const eddy_eval_value_t *args; ///< F's arguments (borrowed)
  eddy_eval_value_t *args64;     ///< the same in f64, nin
  eddy_eval_value_t *y64;        ///< F64's results at args64, nout
  /// Seeds in the dtypes of F's results, and the same values in f64: they
  /// are drawn in F's dtype so that both gradients get the same seed.
  eddy_eval_value_t *seeds, *seeds64;
  eddy_eval_value_t *dir; ///< one direction, like args64[wrt[w]]
} check_state_t;

static bool is_low_float(int32_t dt) {
  return eddy_rt_dtype_is_float(dt) && dt != EDDY_RT_F64;
}

/// v in f64: a float tensor of a lower precision is converted (exactly);
/// anything else is shared.
static eddy_status_t to_f64(eddy_rt_ctx_t *rt, const eddy_eval_value_t *v,
                            eddy_eval_value_t *out) {
  if (v->kind != EDDY_EVAL_TENSOR || !is_low_float(v->tensor.dtype)) {
    eddy_eval_value_share(v, out);
    return NULL;
  }
  eddy_rt_tensor_t t = eddy_rt_tensor_empty();
  TRY(from_rt(eddy_rt_tensor_create(rt, EDDY_RT_F64, v->tensor.rank,
                                    v->tensor.dims, "gradient check", &t)));
  int64_t n = eddy_rt_tensor_numel(&t);
  for (int64_t i = 0; i < n; i++)
    eddy_rt_tensor_set_f64(&t, i, eddy_rt_tensor_get_f64(&v->tensor, i));
  *out = eddy_eval_value_from_tensor(&t);
  return NULL;
}

static eddy_status_t eval(check_state_t *cs, const eddy_op_t *fn,
                          const eddy_eval_value_t *args, size_t nargs,
                          eddy_eval_value_t *res, size_t nres) {
  return eddy_eval_func(cs->rt, fn, NULL, args, nargs, res, nres);
}

/// <t, F64(args64 + h v)> over the float results, v = cs->dir on argument
/// wrt[w] only.
static eddy_status_t probe(check_state_t *cs, size_t w, double h,
                           double *out) {
  eddy_eval_value_t *a = calloc(cs->nin ? cs->nin : 1, sizeof(*a));
  eddy_eval_value_t *r = calloc(cs->nout ? cs->nout : 1, sizeof(*r));
  eddy_status_t st = NULL;
  if (!a || !r)
    st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  size_t i = cs->wrt[w];
  for (size_t k = 0; k < cs->nin && !st; k++)
    if (k != i)
      eddy_eval_value_share(&cs->args64[k], &a[k]);
  if (!st)
    st = axpy(cs->rt, &cs->args64[i].tensor, h, &cs->dir->tensor, &a[i]);
  if (!st)
    st = eval(cs, cs->func64, a, cs->nin, r, cs->nout);
  double s = 0.0;
  for (size_t k = 0; k < cs->nout && !st; k++)
    if (r[k].kind == EDDY_EVAL_TENSOR &&
        eddy_rt_dtype_is_float(r[k].tensor.dtype))
      s += dot(&cs->seeds64[k].tensor, &r[k].tensor);
  *out = s;
  if (a)
    release_all(a, cs->nin);
  if (r)
    release_all(r, cs->nout);
  free(a);
  free(r);
  return st;
}

/// Folds one direction's <t, J v> (fd) and <J^T t, v> (vjp) into a.
static void note_fd(eddy_ad_check_arg_t *a, const eddy_ad_check_opts_t *o,
                    bool first, double fd, double vjp) {
  double diff = fabs(fd - vjp), scale = fmax(fabs(fd), fabs(vjp));
  double rel = scale > 0 ? diff / scale : diff;
  if (!(diff <= o->atol + o->rtol * scale))
    a->ok = false;
  if (first || diff > a->fd_abs_err || isnan(diff))
    a->fd_abs_err = diff;
  if (first || rel > a->fd_rel_err || isnan(rel)) {
    a->fd_rel_err = rel;
    a->fd = fd;
    a->vjp = vjp;
  }
}

/// Folds the comparison of F's own gradient g with the f64 one into a:
/// max |g - g64| over the elements, relative to max |g64|.
static eddy_status_t note_low(eddy_ad_check_arg_t *a,
                              const eddy_ad_check_result_t *res,
                              const eddy_rt_tensor_t *g,
                              const eddy_rt_tensor_t *g64) {
  int64_t n = eddy_rt_tensor_numel(g64);
  if (eddy_rt_tensor_numel(g) != n)
    return eddy_status_create(EDDY_ERR_INTERNAL,
                              "gradient check: the gradient of argument %zu "
                              "has %lld elements, its f64 form %lld",
                              a->arg, (long long)eddy_rt_tensor_numel(g),
                              (long long)n);
  double diff = 0.0, scale = 0.0;
  for (int64_t i = 0; i < n; i++) {
    double x = eddy_rt_tensor_get_f64(g, i), y = eddy_rt_tensor_get_f64(g64, i);
    double d = fabs(x - y);
    if (isnan(d) || d > diff) // a NaN stays: nothing compares above it
      diff = d;
    scale = fmax(scale, fabs(y));
  }
  double rel = scale > 0 ? diff / scale : diff;
  if (!(diff <= res->low_atol + res->low_rtol * scale))
    a->ok = false;
  if (diff > a->low_abs_err || isnan(diff))
    a->low_abs_err = diff;
  if (rel > a->low_rel_err || isnan(rel))
    a->low_rel_err = rel;
  return NULL;
}

/// Gradients of F and F64 at one random seed: F's gradient is compared
/// with F64's, and F64's with central differences along one random
/// direction per argument.
static eddy_status_t check_round(check_state_t *cs,
                                 const eddy_ad_check_opts_t *o, uint64_t *rng,
                                 bool first, eddy_ad_check_result_t *res) {
  const eddy_type_t *ft = eddy_ir_func_type(cs->func);
  eddy_status_t st = NULL;
  for (size_t k = 0; k < cs->nout && !st; k++) {
    st = random_like(cs->rt, &cs->y64[k].tensor, (int32_t)ft->outputs[k]->dtype,
                     -1.0, 1.0, rng, &cs->seeds[k]);
    if (!st)
      st = to_f64(cs->rt, &cs->seeds[k], &cs->seeds64[k]);
  }
  TRY(st);

  size_t gin = cs->nin + cs->nout, gout = cs->nout + cs->num_wrt;
  eddy_eval_value_t *ga = calloc(gin, sizeof(*ga));
  eddy_eval_value_t *g64 = calloc(gout, sizeof(*g64));
  eddy_eval_value_t *g = calloc(gout, sizeof(*g));
  if (!ga || !g64 || !g)
    st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  for (size_t i = 0; i < cs->nin && !st; i++)
    eddy_eval_value_share(&cs->args64[i], &ga[i]);
  for (size_t k = 0; k < cs->nout && !st; k++)
    eddy_eval_value_share(&cs->seeds64[k], &ga[cs->nin + k]);
  if (!st)
    st = eval(cs, cs->grad64, ga, gin, g64, gout);
  if (!st && cs->promoted) {
    release_all(ga, gin);
    for (size_t i = 0; i < cs->nin; i++)
      eddy_eval_value_share(&cs->args[i], &ga[i]);
    for (size_t k = 0; k < cs->nout; k++)
      eddy_eval_value_share(&cs->seeds[k], &ga[cs->nin + k]);
    st = eval(cs, cs->grad, ga, gin, g, gout);
    for (size_t w = 0; w < cs->num_wrt && !st; w++)
      st = note_low(&res->args[w], res, &g[cs->nout + w].tensor,
                    &g64[cs->nout + w].tensor);
  }

  /* Central differences at h and h/2, Richardson-extrapolated: the error is
     O(h^4) instead of O(h^2). */
  double h = o->step;
  for (size_t w = 0; w < cs->num_wrt && !st; w++) {
    const eddy_rt_tensor_t *x = &cs->args64[cs->wrt[w]].tensor;
    double p1, m1, p2, m2;
    st = random_like(cs->rt, x, x->dtype, -1.0, 1.0, rng, cs->dir);
    if (!st)
      st = probe(cs, w, h, &p1);
    if (!st)
      st = probe(cs, w, -h, &m1);
    if (!st)
      st = probe(cs, w, h / 2, &p2);
    if (!st)
      st = probe(cs, w, -h / 2, &m2);
    if (!st) {
      double d1 = (p1 - m1) / (2 * h), d2 = (p2 - m2) / h;
      note_fd(&res->args[w], o, first, (4 * d2 - d1) / 3,
              dot(&g64[cs->nout + w].tensor, &cs->dir->tensor));
    }
    eddy_eval_value_release(cs->dir);
  }
  if (ga)
    release_all(ga, gin);
  if (g64)
    release_all(g64, gout);
  if (g)
    release_all(g, gout);
  free(ga);
  free(g64);
  free(g);
  release_all(cs->seeds, cs->nout);
  release_all(cs->seeds64, cs->nout);
  return st;
}

/// The wrt arguments must be float tensors of F's declared dtypes, and the
/// other arguments of a promoted F tensors (a list cannot be promoted).
static eddy_status_t check_args(const check_state_t *cs) {
  const eddy_type_t *ft = eddy_ir_func_type(cs->func);
  char pos[32];
  for (size_t w = 0; w < cs->num_wrt; w++) {
    size_t i = cs->wrt[w];
    if (i >= cs->nin)
      return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                                "gradient check: @%s has %zu arguments; "
                                "there is no argument %zu",
                                eddy_ir_func_name(cs->func), cs->nin, i);
    const eddy_type_t *t = ft->inputs[i];
    const char *label = eddy_ir_func_arg_label(cs->func, i, pos, sizeof pos);
    if (t->kind != EDDY_TYPE_TENSOR || !eddy_dtype_is_float(t->dtype) ||
        cs->args[i].kind != EDDY_EVAL_TENSOR ||
        cs->args[i].tensor.dtype != (int32_t)t->dtype) {
      eddy_buf_t b;
      eddy_buf_init(&b);
      eddy_ir_type_print(t, &b);
      eddy_status_t st = eddy_status_create(
          EDDY_ERR_INVALID_ARGUMENT,
          "gradient check: argument %zu '%s' of @%s (%s) %s", i, label,
          eddy_ir_func_name(cs->func), b.data,
          t->kind == EDDY_TYPE_TENSOR && eddy_dtype_is_float(t->dtype)
              ? "is given a value of another kind or dtype"
              : "has no gradient: only float tensors are checked");
      eddy_buf_destroy(&b);
      return st;
    }
  }
  for (size_t i = 0; i < cs->nin && cs->promoted; i++)
    if (cs->args[i].kind != EDDY_EVAL_TENSOR)
      return eddy_status_create(
          EDDY_ERR_UNSUPPORTED,
          "gradient check: argument %zu '%s' of @%s is not a tensor; the f64 "
          "copy of a program that computes in lower precision takes only "
          "tensors",
          i, eddy_ir_func_arg_label(cs->func, i, pos, sizeof pos),
          eddy_ir_func_name(cs->func));
  for (size_t k = 0; k < cs->nout; k++)
    if (ft->outputs[k]->kind != EDDY_TYPE_TENSOR)
      return eddy_status_create(EDDY_ERR_UNSUPPORTED,
                                "gradient check: result %zu of @%s is not a "
                                "tensor, so it cannot be seeded",
                                k, eddy_ir_func_name(cs->func));
  return NULL;
}

/// F without its stop_gradient ops and that copy's gradient, in a scratch
/// module *out_m, replace F and F_grad in cs.
static eddy_status_t without_stops(check_state_t *cs, eddy_module_t **out_m) {
  eddy_module_t *m = eddy_ir_module_create(cs->func->ctx, cs->func->loc);
  if (!m)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  *out_m = m;
  eddy_op_t *f = NULL, *g = NULL;
  TRY(eddy_ad_copy_for_check(cs->func, m, false, true, &f));
  eddy_status_t st = eddy_ad_grad(m, eddy_ir_func_name(f), cs->wrt,
                                  cs->num_wrt, NULL, &g);
  if (st) {
    eddy_status_append_note(st, "while differentiating the copy of @%s "
                                "without stop_gradient made for the "
                                "gradient check",
                            eddy_ir_func_name(cs->func));
    return st;
  }
  cs->func = f;
  cs->grad = g;
  return NULL;
}

/// The f64 forms: F and F_grad themselves, or a promoted copy of F in a
/// scratch module *out_m and its gradient.
static eddy_status_t make_f64(check_state_t *cs, eddy_module_t **out_m) {
  *out_m = NULL;
  if (!cs->promoted) {
    cs->func64 = cs->func;
    cs->grad64 = cs->grad;
  } else {
    eddy_module_t *m = eddy_ir_module_create(cs->func->ctx, cs->func->loc);
    if (!m)
      return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
    *out_m = m;
    eddy_op_t *f64 = NULL, *g64 = NULL;
    TRY(eddy_ad_promote_f64(cs->func, m, &f64));
    eddy_status_t st = eddy_ad_grad(m, eddy_ir_func_name(f64), cs->wrt,
                                    cs->num_wrt, NULL, &g64);
    if (st) {
      eddy_status_append_note(st, "while differentiating the f64 copy of "
                                  "@%s made for the gradient check",
                              eddy_ir_func_name(cs->func));
      return st;
    }
    cs->func64 = f64;
    cs->grad64 = g64;
  }
  eddy_status_t st = NULL;
  for (size_t i = 0; i < cs->nin && !st; i++)
    st = to_f64(cs->rt, &cs->args[i], &cs->args64[i]);
  if (!st)
    st = eval(cs, cs->func64, cs->args64, cs->nin, cs->y64, cs->nout);
  for (size_t k = 0; k < cs->nout && !st; k++)
    if (cs->y64[k].kind != EDDY_EVAL_TENSOR)
      st = eddy_status_create(EDDY_ERR_UNSUPPORTED,
                              "gradient check: result %zu is not a tensor", k);
  return st;
}

void eddy_ad_check_result_destroy(eddy_ad_check_result_t *r) {
  if (!r)
    return;
  free(r->args);
  r->args = NULL;
  r->num_args = 0;
}

eddy_status_t eddy_ad_check(eddy_rt_ctx_t *rt, const eddy_op_t *func,
                            const eddy_op_t *grad_func, const size_t *wrt,
                            size_t num_wrt, const eddy_eval_value_t *args,
                            const eddy_ad_check_opts_t *opts,
                            eddy_ad_check_result_t *out) {
  eddy_ad_check_opts_t o = opts ? *opts : eddy_ad_check_opts_default();
  memset(out, 0, sizeof(*out));
  const eddy_type_t *ft = eddy_ir_func_type(func);
  eddy_dtype_t dt = eddy_ad_func_float_dtype(func);
  double eps = eddy_ad_dtype_epsilon(dt);
  out->dtype = dt;
  out->promoted = dt != EDDY_DT_F64;
  out->low_rtol = o.low_rtol > 0 ? o.low_rtol : sqrt(eps);
  out->low_atol = o.low_atol > 0 ? o.low_atol : eps;
  check_state_t cs = {.rt = rt, .func = func, .grad = grad_func,
                      .promoted = out->promoted, .nin = ft->num_inputs,
                      .nout = ft->num_outputs, .wrt = wrt,
                      .num_wrt = num_wrt, .args = args};
  TRY(check_args(&cs));
  eddy_module_t *ms = NULL;
  out->without_stops = eddy_ad_reaches_stop_gradient(func);
  eddy_status_t st = out->without_stops ? without_stops(&cs, &ms) : NULL;
  size_t n = cs.nin + 3 * cs.nout + 1;
  eddy_eval_value_t *vals = st ? NULL : calloc(n, sizeof(*vals));
  out->args = st ? NULL : calloc(num_wrt ? num_wrt : 1, sizeof(*out->args));
  if (st || !vals || !out->args) {
    if (ms)
      eddy_ir_module_destroy(ms);
    if (st)
      return st;
    free(vals);
    eddy_ad_check_result_destroy(out);
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  }
  cs.args64 = vals;
  cs.y64 = vals + cs.nin;
  cs.seeds = cs.y64 + cs.nout;
  cs.seeds64 = cs.seeds + cs.nout;
  cs.dir = cs.seeds64 + cs.nout;
  out->num_args = num_wrt;
  for (size_t w = 0; w < num_wrt; w++) {
    out->args[w].arg = wrt[w];
    out->args[w].ok = true;
  }
  eddy_module_t *m64 = NULL;
  st = make_f64(&cs, &m64);
  uint64_t rng = o.seed ? o.seed * 0x9E3779B97F4A7C15ull : 88172645463325252ull;
  for (int32_t d = 0; d < o.num_directions && !st; d++)
    st = check_round(&cs, &o, &rng, d == 0, out);
  release_all(vals, n);
  free(vals);
  if (m64)
    eddy_ir_module_destroy(m64);
  if (ms)
    eddy_ir_module_destroy(ms);
  out->ok = !st;
  for (size_t w = 0; w < num_wrt; w++) {
    const eddy_ad_check_arg_t *a = &out->args[w];
    out->ok = out->ok && a->ok;
    if (w == 0 || a->fd_rel_err > out->max_rel_err || isnan(a->fd_rel_err)) {
      out->max_rel_err = a->fd_rel_err;
      out->fd = a->fd;
      out->vjp = a->vjp;
    }
  }
  return st;
}

eddy_status_t eddy_ad_sample_args(eddy_rt_ctx_t *rt, const eddy_op_t *func,
                                  double lo, double hi, int64_t dyn_dim,
                                  int64_t int_value, uint64_t seed,
                                  eddy_eval_value_t *out_args) {
  const eddy_type_t *ft = eddy_ir_func_type(func);
  uint64_t rng = (seed ? seed : 1) * 0x9E3779B97F4A7C15ull;
  for (uint32_t i = 0; i < ft->num_inputs; i++) {
    const eddy_type_t *t = ft->inputs[i];
    if (out_args[i].kind != EDDY_EVAL_NONE)
      continue; // given
    if (t->kind != EDDY_TYPE_TENSOR || t->rank == EDDY_RANK_UNKNOWN ||
        t->rank > EDDY_RT_MAX_RANK) {
      char pos[32];
      return eddy_status_create(
          EDDY_ERR_UNSUPPORTED,
          "cannot sample argument %u '%s' of @%s: only ranked tensors are "
          "sampled; give it a value",
          i, eddy_ir_func_arg_label(func, i, pos, sizeof pos),
          eddy_ir_func_name(func));
    }
    int64_t dims[EDDY_RT_MAX_RANK];
    for (int32_t d = 0; d < t->rank; d++)
      dims[d] = t->dims[d] == EDDY_DIM_DYNAMIC ? dyn_dim : t->dims[d];
    eddy_rt_tensor_t x = eddy_rt_tensor_empty();
    TRY(from_rt(eddy_rt_tensor_create(rt, (int32_t)t->dtype, t->rank, dims,
                                      "gradient check", &x)));
    int64_t n = eddy_rt_tensor_numel(&x);
    for (int64_t e = 0; e < n; e++) {
      if (eddy_dtype_is_float(t->dtype))
        eddy_rt_tensor_set_f64(&x, e, lo + (hi - lo) * rng_uniform(&rng));
      else if (eddy_dtype_is_int(t->dtype))
        eddy_rt_tensor_set_i64(&x, e, int_value);
    }
    out_args[i] = eddy_eval_value_from_tensor(&x);
  }
  return NULL;
}

/// The gradient checker: compares the vector-Jacobian product of a gradient
/// function with central differences of the function itself, through
/// <t, J v> = <J^T t, v>, in f64, on the reference evaluator.
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
      .atol = 1e-9};
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

typedef struct check_state {
  eddy_rt_ctx_t *rt;
  const eddy_op_t *func;
  size_t nin, nout;
  const size_t *wrt;
  size_t num_wrt;
  const eddy_eval_value_t *args;
  eddy_eval_value_t *dirs; ///< num_wrt directions
  eddy_eval_value_t *seeds; ///< nout seeds
} check_state_t;

/// <t, F(args + h v)> summed over the float results.
static eddy_status_t probe(check_state_t *cs, double h, double *out) {
  eddy_eval_value_t *a = calloc(cs->nin ? cs->nin : 1, sizeof(*a));
  eddy_eval_value_t *r = calloc(cs->nout ? cs->nout : 1, sizeof(*r));
  eddy_status_t st = NULL;
  if (!a || !r)
    st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  for (size_t i = 0; i < cs->nin && !st; i++)
    eddy_eval_value_share(&cs->args[i], &a[i]);
  for (size_t w = 0; w < cs->num_wrt && !st; w++) {
    size_t i = cs->wrt[w];
    eddy_eval_value_t moved = {0};
    st = axpy(cs->rt, &cs->args[i].tensor, h, &cs->dirs[w].tensor, &moved);
    eddy_eval_value_release(&a[i]);
    a[i] = moved;
  }
  if (!st)
    st = eddy_eval_func(cs->rt, cs->func, NULL, a, cs->nin, r, cs->nout);
  double s = 0.0;
  for (size_t k = 0; k < cs->nout && !st; k++)
    if (r[k].kind == EDDY_EVAL_TENSOR &&
        eddy_rt_dtype_is_float(r[k].tensor.dtype))
      s += dot(&cs->seeds[k].tensor, &r[k].tensor);
  *out = s;
  release_all(a, cs->nin);
  release_all(r, cs->nout);
  free(a);
  free(r);
  return st;
}

static eddy_status_t check_one(check_state_t *cs, const eddy_op_t *grad_func,
                               const eddy_ad_check_opts_t *o, uint64_t *rng,
                               double *out_fd, double *out_vjp) {
  /* The directions, and seeds shaped like F's results. */
  eddy_status_t st = NULL;
  for (size_t w = 0; w < cs->num_wrt && !st; w++) {
    const eddy_rt_tensor_t *x = &cs->args[cs->wrt[w]].tensor;
    st = random_like(cs->rt, x, x->dtype, -1.0, 1.0, rng, &cs->dirs[w]);
  }
  eddy_eval_value_t *y = calloc(cs->nout ? cs->nout : 1, sizeof(*y));
  if (!y)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  if (!st)
    st = eddy_eval_func(cs->rt, cs->func, NULL, cs->args, cs->nin, y, cs->nout);
  for (size_t k = 0; k < cs->nout && !st; k++) {
    if (y[k].kind != EDDY_EVAL_TENSOR) {
      st = eddy_status_create(EDDY_ERR_UNSUPPORTED,
                              "gradient check: result %zu is not a tensor", k);
      break;
    }
    st = random_like(cs->rt, &y[k].tensor, y[k].tensor.dtype, -1.0, 1.0, rng,
                     &cs->seeds[k]);
  }
  release_all(y, cs->nout);
  free(y);
  TRY(st);

  /* <J^T t, v> from the gradient function. */
  size_t gin = cs->nin + cs->nout, gout = cs->nout + cs->num_wrt;
  eddy_eval_value_t *ga = calloc(gin, sizeof(*ga));
  eddy_eval_value_t *gr = calloc(gout, sizeof(*gr));
  if (!ga || !gr)
    st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  for (size_t i = 0; i < cs->nin && !st; i++)
    eddy_eval_value_share(&cs->args[i], &ga[i]);
  for (size_t k = 0; k < cs->nout && !st; k++)
    eddy_eval_value_share(&cs->seeds[k], &ga[cs->nin + k]);
  if (!st)
    st = eddy_eval_func(cs->rt, grad_func, NULL, ga, gin, gr, gout);
  double vjp = 0.0;
  for (size_t w = 0; w < cs->num_wrt && !st; w++)
    vjp += dot(&gr[cs->nout + w].tensor, &cs->dirs[w].tensor);
  release_all(ga, gin);
  release_all(gr, gout);
  free(ga);
  free(gr);
  TRY(st);

  /* Central differences at h and h/2, Richardson-extrapolated: the error is
     O(h^4) instead of O(h^2). */
  double p1, m1, p2, m2, h = o->step;
  TRY(probe(cs, h, &p1));
  TRY(probe(cs, -h, &m1));
  TRY(probe(cs, h / 2, &p2));
  TRY(probe(cs, -h / 2, &m2));
  double d1 = (p1 - m1) / (2 * h), d2 = (p2 - m2) / h;
  *out_fd = (4 * d2 - d1) / 3;
  *out_vjp = vjp;
  return NULL;
}

eddy_status_t eddy_ad_check(eddy_rt_ctx_t *rt, const eddy_op_t *func,
                            const eddy_op_t *grad_func, const size_t *wrt,
                            size_t num_wrt, const eddy_eval_value_t *args,
                            const eddy_ad_check_opts_t *opts,
                            eddy_ad_check_result_t *out) {
  eddy_ad_check_opts_t o = opts ? *opts : eddy_ad_check_opts_default();
  memset(out, 0, sizeof(*out));
  const eddy_type_t *ft = eddy_ir_func_type(func);
  check_state_t cs = {.rt = rt, .func = func, .nin = ft->num_inputs,
                      .nout = ft->num_outputs, .wrt = wrt,
                      .num_wrt = num_wrt, .args = args};
  for (size_t w = 0; w < num_wrt; w++)
    if (wrt[w] >= cs.nin || args[wrt[w]].kind != EDDY_EVAL_TENSOR ||
        args[wrt[w]].tensor.dtype != EDDY_RT_F64)
      return eddy_status_create(EDDY_ERR_UNSUPPORTED,
                                "gradient check: argument %zu 'arg%zu' must "
                                "be an f64 tensor",
                                wrt[w], wrt[w]);
  cs.dirs = calloc(num_wrt ? num_wrt : 1, sizeof(*cs.dirs));
  cs.seeds = calloc(cs.nout ? cs.nout : 1, sizeof(*cs.seeds));
  eddy_status_t st = NULL;
  if (!cs.dirs || !cs.seeds)
    st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  uint64_t rng = o.seed ? o.seed * 0x9E3779B97F4A7C15ull : 88172645463325252ull;
  out->ok = true;
  for (int32_t d = 0; d < o.num_directions && !st; d++) {
    double fd = 0, vjp = 0;
    st = check_one(&cs, grad_func, &o, &rng, &fd, &vjp);
    if (!st) {
      double diff = fabs(fd - vjp), scale = fmax(fabs(fd), fabs(vjp));
      double rel = scale > 0 ? diff / scale : diff;
      if (!(diff <= o.atol + o.rtol * scale))
        out->ok = false;
      if (d == 0 || rel > out->max_rel_err || isnan(rel)) {
        out->max_rel_err = rel;
        out->fd = fd;
        out->vjp = vjp;
      }
    }
    release_all(cs.dirs, num_wrt);
    release_all(cs.seeds, cs.nout);
  }
  free(cs.dirs);
  free(cs.seeds);
  if (st)
    out->ok = false;
  return st;
}

eddy_status_t eddy_ad_sample_args(eddy_rt_ctx_t *rt, const eddy_op_t *func,
                                  double lo, double hi, int64_t dyn_dim,
                                  int64_t int_value, uint64_t seed,
                                  eddy_eval_value_t *out_args) {
  const eddy_type_t *ft = eddy_ir_func_type(func);
  uint64_t rng = (seed ? seed : 1) * 0x9E3779B97F4A7C15ull;
  for (uint32_t i = 0; i < ft->num_inputs; i++)
    memset(&out_args[i], 0, sizeof(out_args[i]));
  for (uint32_t i = 0; i < ft->num_inputs; i++) {
    const eddy_type_t *t = ft->inputs[i];
    if (t->kind != EDDY_TYPE_TENSOR || t->rank == EDDY_RANK_UNKNOWN ||
        t->rank > EDDY_RT_MAX_RANK) {
      release_all(out_args, i);
      return eddy_status_create(EDDY_ERR_UNSUPPORTED,
                                "cannot sample argument %u 'arg%u': only "
                                "ranked tensors are sampled",
                                i, i);
    }
    int64_t dims[EDDY_RT_MAX_RANK];
    for (int32_t d = 0; d < t->rank; d++)
      dims[d] = t->dims[d] == EDDY_DIM_DYNAMIC ? dyn_dim : t->dims[d];
    eddy_rt_tensor_t x = eddy_rt_tensor_empty();
    eddy_status_t st = from_rt(eddy_rt_tensor_create(
        rt, (int32_t)t->dtype, t->rank, dims, "gradient check", &x));
    if (st) {
      release_all(out_args, i);
      return st;
    }
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

/// The gradient rule table: one entry per opcode (core, tl, ctl). A rule
/// gets the adjoints of the op's results (NULL where none) and adds
/// contributions to the adjoints of its operands with ad_adj_add /
/// ad_adj_add_reduced (the latter sums over broadcast axes). Forward values
/// a rule needs are made visible with ad_fwd. An op without a rule says why:
/// it passes no gradient, or the reverse walk never meets it.
#include "autodiff/ad_internal.h"

#include "dialects/core/core.h"
#include "dialects/dialects.h"
#include "dialects/tl/tl.h"

#include <stdlib.h>
#include <string.h>

#define TRY EDDY_RETURN_IF_ERROR
#define MAXR EDDY_CORE_MAX_RANK

static eddy_value_t *operand(eddy_op_t *op, size_t i) {
  return eddy_ir_op_operand(op, i);
}

static eddy_value_t *result(eddy_op_t *op, size_t i) {
  return eddy_ir_op_result(op, i);
}

static eddy_dtype_t dtype_of(eddy_op_t *op) {
  return eddy_ir_op_result(op, 0)->type->dtype;
}

static eddy_status_t cst(ad_scope_t *s, eddy_op_t *op, double v,
                         eddy_value_t **out) {
  return ad_scalar(s, dtype_of(op), v, out);
}

/// Visible forward operand i / result i.
static eddy_status_t fop(ad_scope_t *s, eddy_op_t *op, size_t i,
                         eddy_value_t **out) {
  return ad_fwd(s, operand(op, i), out);
}

static eddy_status_t fres(ad_scope_t *s, eddy_op_t *op, size_t i,
                          eddy_value_t **out) {
  return ad_fwd(s, result(op, i), out);
}

static eddy_status_t bin(ad_scope_t *s, const char *name, eddy_value_t *a,
                         eddy_value_t *b, eddy_value_t **out) {
  return ad_bin(s, name, a, b, out);
}

static eddy_status_t unop(ad_scope_t *s, const char *name, eddy_value_t *a,
                          eddy_value_t **out) {
  return ad_un(s, name, a, out);
}

/// Operand i may need an adjoint (activity analysis).
static bool act(ad_scope_t *s, eddy_op_t *op, size_t i) {
  return ad_active(s->ad, operand(op, i));
}

/// Adds g * factor to operand 0's adjoint.
static eddy_status_t scale_x(ad_scope_t *s, eddy_op_t *op, eddy_value_t *g,
                             eddy_value_t *factor) {
  eddy_value_t *r = NULL;
  TRY(bin(s, "core.mul", g, factor, &r));
  return ad_adj_add_reduced(s, operand(op, 0), r);
}

/* ---- Unary ------------------------------------------------------------------ */

static eddy_status_t r_neg(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  eddy_value_t *r = NULL;
  TRY(unop(s, "core.neg", g[0], &r));
  return ad_adj_add(s, operand(op, 0), r);
}

static eddy_status_t r_abs(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  eddy_value_t *x = NULL, *sg = NULL;
  TRY(fop(s, op, 0, &x));
  TRY(unop(s, "core.sign", x, &sg));
  return scale_x(s, op, g[0], sg);
}

static eddy_status_t r_exp(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  eddy_value_t *y = NULL;
  TRY(fres(s, op, 0, &y));
  return scale_x(s, op, g[0], y);
}

static eddy_status_t r_log(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  eddy_value_t *x = NULL, *r = NULL;
  TRY(fop(s, op, 0, &x));
  TRY(bin(s, "core.div", g[0], x, &r));
  return ad_adj_add(s, operand(op, 0), r);
}

static eddy_status_t r_log1p(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  eddy_value_t *x = NULL, *one = NULL, *d = NULL, *r = NULL;
  TRY(fop(s, op, 0, &x));
  TRY(cst(s, op, 1.0, &one));
  TRY(bin(s, "core.add", x, one, &d));
  TRY(bin(s, "core.div", g[0], d, &r));
  return ad_adj_add(s, operand(op, 0), r);
}

static eddy_status_t r_tanh(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  eddy_value_t *y = NULL, *yy = NULL, *one = NULL, *d = NULL;
  TRY(fres(s, op, 0, &y));
  TRY(bin(s, "core.mul", y, y, &yy));
  TRY(cst(s, op, 1.0, &one));
  TRY(bin(s, "core.sub", one, yy, &d));
  return scale_x(s, op, g[0], d);
}

static eddy_status_t r_sigmoid(ad_scope_t *s, eddy_op_t *op,
                               eddy_value_t **g) {
  eddy_value_t *y = NULL, *one = NULL, *d = NULL, *e = NULL;
  TRY(fres(s, op, 0, &y));
  TRY(cst(s, op, 1.0, &one));
  TRY(bin(s, "core.sub", one, y, &d));
  TRY(bin(s, "core.mul", y, d, &e));
  return scale_x(s, op, g[0], e);
}

static eddy_status_t r_relu(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  eddy_value_t *x = NULL, *zero = NULL, *m = NULL, *r = NULL;
  TRY(fop(s, op, 0, &x));
  TRY(cst(s, op, 0.0, &zero));
  TRY(bin(s, "core.gt", x, zero, &m));
  eddy_value_t *ops[3] = {m, g[0], zero};
  TRY(ad_emit(s, "core.select", ops, 3, NULL, 0, &r));
  return ad_adj_add_reduced(s, operand(op, 0), r);
}

static eddy_status_t r_sqrt(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  eddy_value_t *y = NULL, *two = NULL, *d = NULL, *r = NULL;
  TRY(fres(s, op, 0, &y));
  TRY(cst(s, op, 2.0, &two));
  TRY(bin(s, "core.mul", y, two, &d));
  TRY(bin(s, "core.div", g[0], d, &r));
  return ad_adj_add(s, operand(op, 0), r);
}

static eddy_status_t r_rsqrt(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  /* d/dx x^-1/2 = -1/2 y^3 */
  eddy_value_t *y = NULL, *y2 = NULL, *y3 = NULL, *h = NULL, *f = NULL;
  TRY(fres(s, op, 0, &y));
  TRY(bin(s, "core.mul", y, y, &y2));
  TRY(bin(s, "core.mul", y2, y, &y3));
  TRY(cst(s, op, -0.5, &h));
  TRY(bin(s, "core.mul", y3, h, &f));
  return scale_x(s, op, g[0], f);
}

static eddy_status_t r_square(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  eddy_value_t *x = NULL, *two = NULL, *f = NULL;
  TRY(fop(s, op, 0, &x));
  TRY(cst(s, op, 2.0, &two));
  TRY(bin(s, "core.mul", x, two, &f));
  return scale_x(s, op, g[0], f);
}

static eddy_status_t r_sin(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  eddy_value_t *x = NULL, *c = NULL;
  TRY(fop(s, op, 0, &x));
  TRY(unop(s, "core.cos", x, &c));
  return scale_x(s, op, g[0], c);
}

static eddy_status_t r_cos(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  eddy_value_t *x = NULL, *sn = NULL, *n = NULL;
  TRY(fop(s, op, 0, &x));
  TRY(unop(s, "core.sin", x, &sn));
  TRY(unop(s, "core.neg", sn, &n));
  return scale_x(s, op, g[0], n);
}

/// d tan x = 1 + tan^2 x (= 1 / cos^2 x).
static eddy_status_t r_tan(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  eddy_value_t *y = NULL, *yy = NULL, *one = NULL, *d = NULL;
  TRY(fres(s, op, 0, &y));
  TRY(bin(s, "core.mul", y, y, &yy));
  TRY(cst(s, op, 1.0, &one));
  TRY(bin(s, "core.add", one, yy, &d));
  return scale_x(s, op, g[0], d);
}

/// asin and acos: +-1 / sqrt(1 - x^2).
static eddy_status_t r_asin_acos(ad_scope_t *s, eddy_op_t *op,
                                 eddy_value_t **g, bool neg) {
  eddy_value_t *x = NULL, *xx = NULL, *one = NULL, *d = NULL, *r = NULL,
               *q = NULL;
  TRY(fop(s, op, 0, &x));
  TRY(bin(s, "core.mul", x, x, &xx));
  TRY(cst(s, op, 1.0, &one));
  TRY(bin(s, "core.sub", one, xx, &d));
  TRY(unop(s, "core.rsqrt", d, &r));
  if (neg)
    TRY(unop(s, "core.neg", r, &r));
  TRY(bin(s, "core.mul", g[0], r, &q));
  return ad_adj_add(s, operand(op, 0), q);
}

static eddy_status_t r_asin(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  return r_asin_acos(s, op, g, false);
}

static eddy_status_t r_acos(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  return r_asin_acos(s, op, g, true);
}

static eddy_status_t r_atan(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  eddy_value_t *x = NULL, *xx = NULL, *one = NULL, *d = NULL, *r = NULL;
  TRY(fop(s, op, 0, &x));
  TRY(bin(s, "core.mul", x, x, &xx));
  TRY(cst(s, op, 1.0, &one));
  TRY(bin(s, "core.add", one, xx, &d));
  TRY(bin(s, "core.div", g[0], d, &r));
  return ad_adj_add(s, operand(op, 0), r);
}

static eddy_status_t r_sinh(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  eddy_value_t *x = NULL, *c = NULL;
  TRY(fop(s, op, 0, &x));
  TRY(unop(s, "core.cosh", x, &c));
  return scale_x(s, op, g[0], c);
}

static eddy_status_t r_cosh(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  eddy_value_t *x = NULL, *c = NULL;
  TRY(fop(s, op, 0, &x));
  TRY(unop(s, "core.sinh", x, &c));
  return scale_x(s, op, g[0], c);
}

/// d erf x = 2/sqrt(pi) exp(-x^2).
static eddy_status_t r_erf(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  eddy_value_t *x = NULL, *xx = NULL, *n = NULL, *e = NULL, *k = NULL,
               *f = NULL;
  TRY(fop(s, op, 0, &x));
  TRY(bin(s, "core.mul", x, x, &xx));
  TRY(unop(s, "core.neg", xx, &n));
  TRY(unop(s, "core.exp", n, &e));
  TRY(cst(s, op, 1.1283791670955126, &k));
  TRY(bin(s, "core.mul", e, k, &f));
  return scale_x(s, op, g[0], f);
}

/// d expm1 x = exp x = expm1 x + 1.
static eddy_status_t r_expm1(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  eddy_value_t *x = NULL, *e = NULL;
  TRY(fop(s, op, 0, &x));
  TRY(unop(s, "core.exp", x, &e));
  return scale_x(s, op, g[0], e);
}

/* ---- Binary ------------------------------------------------------------------ */

static eddy_status_t r_add(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  TRY(ad_adj_add_reduced(s, operand(op, 0), g[0]));
  return ad_adj_add_reduced(s, operand(op, 1), g[0]);
}

static eddy_status_t r_sub(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  TRY(ad_adj_add_reduced(s, operand(op, 0), g[0]));
  if (!ad_is_diff(operand(op, 1)->type))
    return NULL;
  eddy_value_t *n = NULL;
  TRY(unop(s, "core.neg", g[0], &n));
  return ad_adj_add_reduced(s, operand(op, 1), n);
}

static eddy_status_t r_mul(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  eddy_value_t *a = NULL, *b = NULL, *ga = NULL, *gb = NULL;
  if (act(s, op, 0)) {
    TRY(fop(s, op, 1, &b));
    TRY(bin(s, "core.mul", g[0], b, &ga));
    TRY(ad_adj_add_reduced(s, operand(op, 0), ga));
  }
  if (!act(s, op, 1))
    return NULL;
  TRY(fop(s, op, 0, &a));
  TRY(bin(s, "core.mul", g[0], a, &gb));
  return ad_adj_add_reduced(s, operand(op, 1), gb);
}

static eddy_status_t r_div(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  if (!ad_is_diff(result(op, 0)->type))
    return NULL;
  eddy_value_t *b = NULL, *y = NULL, *ga = NULL, *t = NULL, *gb = NULL;
  TRY(fop(s, op, 1, &b));
  TRY(bin(s, "core.div", g[0], b, &ga));
  TRY(ad_adj_add_reduced(s, operand(op, 0), ga));
  if (!act(s, op, 1))
    return NULL;
  /* d(a/b)/db = -y/b */
  TRY(fres(s, op, 0, &y));
  TRY(bin(s, "core.mul", ga, y, &t));
  TRY(unop(s, "core.neg", t, &gb));
  return ad_adj_add_reduced(s, operand(op, 1), gb);
}

static eddy_status_t r_pow(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  eddy_value_t *a = NULL, *b = NULL, *y = NULL, *one = NULL, *bm1 = NULL,
               *p = NULL, *t = NULL, *ga = NULL;
  TRY(fop(s, op, 0, &a));
  if (act(s, op, 0)) {
    TRY(fop(s, op, 1, &b));
    TRY(cst(s, op, 1.0, &one));
    TRY(bin(s, "core.sub", b, one, &bm1));
    TRY(bin(s, "core.pow", a, bm1, &p));
    TRY(bin(s, "core.mul", b, p, &t));
    TRY(bin(s, "core.mul", g[0], t, &ga));
    TRY(ad_adj_add_reduced(s, operand(op, 0), ga));
  }
  if (!act(s, op, 1))
    return NULL;
  /* d/db = y log(a), taken as 0 where a <= 0 (as TensorFlow does). */
  eddy_value_t *zero = NULL, *pos = NULL, *la = NULL, *sl = NULL, *u = NULL,
               *gb = NULL;
  TRY(fres(s, op, 0, &y));
  TRY(cst(s, op, 0.0, &zero));
  TRY(bin(s, "core.gt", a, zero, &pos));
  TRY(unop(s, "core.log", a, &la));
  eddy_value_t *ops[3] = {pos, la, zero};
  TRY(ad_emit(s, "core.select", ops, 3, NULL, 0, &sl));
  TRY(bin(s, "core.mul", y, sl, &u));
  TRY(bin(s, "core.mul", g[0], u, &gb));
  return ad_adj_add_reduced(s, operand(op, 1), gb);
}

/// maximum / minimum: TensorFlow's rule, the gradient goes to x where
/// x >= y (maximum) or x <= y (minimum), ties included, else to y.
static eddy_status_t r_minmax(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g,
                              const char *cmp) {
  if (!ad_is_diff(result(op, 0)->type))
    return NULL;
  eddy_value_t *a = NULL, *b = NULL, *m = NULL, *zero = NULL, *ga = NULL,
               *gb = NULL;
  TRY(fop(s, op, 0, &a));
  TRY(fop(s, op, 1, &b));
  TRY(bin(s, cmp, a, b, &m));
  TRY(cst(s, op, 0.0, &zero));
  eddy_value_t *oa[3] = {m, g[0], zero};
  TRY(ad_emit(s, "core.select", oa, 3, NULL, 0, &ga));
  TRY(ad_adj_add_reduced(s, operand(op, 0), ga));
  eddy_value_t *ob[3] = {m, zero, g[0]};
  TRY(ad_emit(s, "core.select", ob, 3, NULL, 0, &gb));
  return ad_adj_add_reduced(s, operand(op, 1), gb);
}

static eddy_status_t r_maximum(ad_scope_t *s, eddy_op_t *op,
                               eddy_value_t **g) {
  return r_minmax(s, op, g, "core.ge");
}

static eddy_status_t r_minimum(ad_scope_t *s, eddy_op_t *op,
                               eddy_value_t **g) {
  return r_minmax(s, op, g, "core.le");
}

/// atan2(y, x): dy = x / (x^2 + y^2), dx = -y / (x^2 + y^2).
static eddy_status_t r_atan2(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  eddy_value_t *y = NULL, *x = NULL, *yy = NULL, *xx = NULL, *d = NULL,
               *q = NULL, *t = NULL;
  TRY(fop(s, op, 0, &y));
  TRY(fop(s, op, 1, &x));
  TRY(bin(s, "core.mul", y, y, &yy));
  TRY(bin(s, "core.mul", x, x, &xx));
  TRY(bin(s, "core.add", xx, yy, &d));
  TRY(bin(s, "core.div", g[0], d, &q));
  if (act(s, op, 0)) {
    TRY(bin(s, "core.mul", q, x, &t));
    TRY(ad_adj_add_reduced(s, operand(op, 0), t));
  }
  if (!act(s, op, 1))
    return NULL;
  TRY(bin(s, "core.mul", q, y, &t));
  TRY(unop(s, "core.neg", t, &t));
  return ad_adj_add_reduced(s, operand(op, 1), t);
}

/// rem(a, b) = a - trunc(a / b) b: da = 1, db = -trunc(a / b), with
/// trunc(a / b) = (a - rem(a, b)) / b.
static eddy_status_t r_rem(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  if (!ad_is_diff(result(op, 0)->type))
    return NULL;
  TRY(ad_adj_add_reduced(s, operand(op, 0), g[0]));
  if (!act(s, op, 1))
    return NULL;
  eddy_value_t *a = NULL, *b = NULL, *y = NULL, *d = NULL, *q = NULL,
               *t = NULL;
  TRY(fop(s, op, 0, &a));
  TRY(fop(s, op, 1, &b));
  TRY(fres(s, op, 0, &y));
  TRY(bin(s, "core.sub", a, y, &d));
  TRY(bin(s, "core.div", d, b, &q));
  TRY(bin(s, "core.mul", g[0], q, &t));
  TRY(unop(s, "core.neg", t, &t));
  return ad_adj_add_reduced(s, operand(op, 1), t);
}

static eddy_status_t r_select(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  eddy_value_t *c = NULL, *zero = NULL, *ga = NULL, *gb = NULL;
  TRY(fop(s, op, 0, &c));
  TRY(ad_scalar(s, g[0]->type->dtype, 0.0, &zero));
  eddy_value_t *oa[3] = {c, g[0], zero};
  TRY(ad_emit(s, "core.select", oa, 3, NULL, 0, &ga));
  TRY(ad_adj_add_reduced(s, operand(op, 1), ga));
  eddy_value_t *ob[3] = {c, zero, g[0]};
  TRY(ad_emit(s, "core.select", ob, 3, NULL, 0, &gb));
  return ad_adj_add_reduced(s, operand(op, 2), gb);
}

static eddy_status_t r_cast(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  eddy_value_t *x = operand(op, 0);
  if (!ad_is_diff(x->type) || !ad_is_diff(result(op, 0)->type))
    return NULL;
  const char *dt = eddy_dtype_name(x->type->dtype);
  eddy_named_attr_t a = eddy_ir_named_attr(
      s->ad->ctx, "dtype", eddy_ir_string_attr_get(s->ad->ctx, dt, strlen(dt)));
  eddy_value_t *r = NULL;
  TRY(ad_emit(s, "core.cast", &g[0], 1, &a, 1, &r));
  return ad_adj_add(s, x, r);
}

/* ---- matmul ------------------------------------------------------------------ */

eddy_status_t ad_matmul(ad_scope_t *s, eddy_value_t *a, eddy_value_t *b,
                        bool ta, bool tb, eddy_value_t **out) {
  eddy_named_attr_t at[2];
  size_t n = 0;
  if (ta)
    at[n++] = eddy_ir_named_attr(s->ad->ctx, "transpose_a",
                                 eddy_ir_bool_attr_get(s->ad->ctx, true));
  if (tb)
    at[n++] = eddy_ir_named_attr(s->ad->ctx, "transpose_b",
                                 eddy_ir_bool_attr_get(s->ad->ctx, true));
  eddy_value_t *ops[2] = {a, b};
  return ad_emit(s, "core.matmul", ops, 2, at, n, out);
}

static eddy_status_t r_matmul(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  if (!ad_is_diff(result(op, 0)->type))
    return NULL;
  bool ta = eddy_ir_op_attr_bool(op, "transpose_a", false);
  bool tb = eddy_ir_op_attr_bool(op, "transpose_b", false);
  eddy_value_t *a = NULL, *b = NULL, *ga = NULL, *gb = NULL, *gy = g[0];
  if (act(s, op, 0)) {
    TRY(fop(s, op, 1, &b));
    if (!ta)
      TRY(ad_matmul(s, gy, b, false, !tb, &ga)); /* g op(b)^T */
    else
      TRY(ad_matmul(s, b, gy, tb, true, &ga)); /* op(b) g^T */
    TRY(ad_adj_add_reduced(s, operand(op, 0), ga));
  }
  if (act(s, op, 1)) {
    TRY(fop(s, op, 0, &a));
    if (!tb)
      TRY(ad_matmul(s, a, gy, !ta, false, &gb)); /* op(a)^T g */
    else
      TRY(ad_matmul(s, gy, a, true, ta, &gb)); /* g^T op(a) */
    TRY(ad_adj_add_reduced(s, operand(op, 1), gb));
  }
  return NULL;
}

/* ---- Reductions ------------------------------------------------------------ */

typedef struct red_info {
  int32_t rank;
  bool reduced[MAXR];
  int64_t keep_dims[MAXR]; ///< x dims with reduced ones set to 1
} red_info_t;

static eddy_status_t red_info(eddy_op_t *op, red_info_t *ri) {
  const eddy_type_t *xt = operand(op, 0)->type;
  if (xt->rank == EDDY_RANK_UNKNOWN || xt->rank > MAXR)
    return eddy_ir_op_error(op, "autodiff needs a ranked operand of rank "
                                "<= %d",
                            MAXR);
  ri->rank = xt->rank;
  memset(ri->reduced, 0, sizeof ri->reduced);
  int64_t axes[MAXR];
  int64_t n = eddy_ir_attr_as_i64_array(eddy_ir_op_attr(op, "axes"), axes,
                                        MAXR);
  for (int64_t i = 0; i < n && i < MAXR; i++) {
    int64_t a;
    if (eddy_core_normalize_axis(axes[i], xt->rank, &a))
      ri->reduced[a] = true;
  }
  for (int32_t i = 0; i < xt->rank; i++)
    ri->keep_dims[i] = ri->reduced[i] ? 1 : xt->dims[i];
  return NULL;
}

/// The reduction result v (or its adjoint) reshaped to keepdims form.
static eddy_status_t keepdims(ad_scope_t *s, eddy_op_t *op,
                              const red_info_t *ri, eddy_value_t *v,
                              eddy_value_t **out) {
  if (eddy_ir_op_attr_bool(op, "keepdims", false)) {
    *out = v;
    return NULL;
  }
  int64_t shape[MAXR];
  int ndyn = 0;
  for (int32_t i = 0; i < ri->rank; i++) {
    shape[i] = ri->keep_dims[i];
    if (shape[i] == EDDY_DIM_DYNAMIC) {
      shape[i] = -1;
      ndyn++;
    }
  }
  if (ndyn > 1)
    return eddy_ir_op_error(op, "autodiff cannot restore the reduced axes "
                                "of an operand with %d dynamic kept "
                                "dimensions (use keepdims = true)",
                            ndyn);
  eddy_named_attr_t a;
  ad_attr_i64s(s->ad, "shape", shape, (size_t)ri->rank, &a);
  return ad_emit(s, "core.reshape", &v, 1, &a, 1, out);
}

/// gk (keepdims form) broadcast to the shape of operand 0.
static eddy_status_t spread(ad_scope_t *s, eddy_op_t *op, eddy_value_t *gk,
                            eddy_value_t **out) {
  eddy_value_t *x = operand(op, 0);
  if (eddy_ir_type_is_static(x->type)) {
    if (gk->type == x->type) {
      *out = gk;
      return NULL;
    }
    eddy_named_attr_t a;
    ad_attr_i64s(s->ad, "shape", x->type->dims, (size_t)x->type->rank, &a);
    return ad_emit(s, "core.broadcast_to", &gk, 1, &a, 1, out);
  }
  eddy_value_t *z = NULL;
  TRY(ad_zeros_like_fwd(s, x, &z));
  return bin(s, "core.add", gk, z, out);
}

/// Number of elements reduced, as a scalar of the op's dtype.
static eddy_status_t red_count(ad_scope_t *s, eddy_op_t *op,
                               const red_info_t *ri, eddy_value_t **out) {
  eddy_value_t *x = operand(op, 0);
  double stat = 1.0;
  eddy_value_t *dyn = NULL;
  for (int32_t i = 0; i < ri->rank; i++) {
    if (!ri->reduced[i])
      continue;
    int64_t d = x->type->dims[i];
    if (d != EDDY_DIM_DYNAMIC) {
      stat *= (double)d;
      continue;
    }
    eddy_value_t *dv = NULL, *df = NULL;
    TRY(ad_fwd_dim(s, x, i, &dv));
    const char *dt = eddy_dtype_name(dtype_of(op));
    eddy_named_attr_t a = eddy_ir_named_attr(
        s->ad->ctx, "dtype",
        eddy_ir_string_attr_get(s->ad->ctx, dt, strlen(dt)));
    TRY(ad_emit(s, "core.cast", &dv, 1, &a, 1, &df));
    if (dyn)
      TRY(bin(s, "core.mul", dyn, df, &dyn));
    else
      dyn = df;
  }
  eddy_value_t *c = NULL;
  TRY(cst(s, op, stat, &c));
  if (dyn)
    return bin(s, "core.mul", c, dyn, out);
  *out = c;
  return NULL;
}

static eddy_status_t r_reduce_sum_mean(ad_scope_t *s, eddy_op_t *op,
                                       eddy_value_t **g, bool mean) {
  if (!ad_is_diff(result(op, 0)->type))
    return NULL;
  red_info_t ri;
  TRY(red_info(op, &ri));
  eddy_value_t *gk = NULL, *r = NULL;
  TRY(keepdims(s, op, &ri, g[0], &gk));
  if (mean) {
    eddy_value_t *n = NULL;
    TRY(red_count(s, op, &ri, &n));
    TRY(bin(s, "core.div", gk, n, &gk));
  }
  TRY(spread(s, op, gk, &r));
  return ad_adj_add(s, operand(op, 0), r);
}

static eddy_status_t r_reduce_sum(ad_scope_t *s, eddy_op_t *op,
                                  eddy_value_t **g) {
  return r_reduce_sum_mean(s, op, g, false);
}

static eddy_status_t r_reduce_mean(ad_scope_t *s, eddy_op_t *op,
                                   eddy_value_t **g) {
  return r_reduce_sum_mean(s, op, g, true);
}

/// max / min: the gradient is shared equally by the elements equal to the
/// extremum (TensorFlow's rule).
static eddy_status_t r_reduce_extremum(ad_scope_t *s, eddy_op_t *op,
                                       eddy_value_t **g) {
  if (!ad_is_diff(result(op, 0)->type))
    return NULL;
  red_info_t ri;
  TRY(red_info(op, &ri));
  eddy_value_t *x = NULL, *y = NULL, *yk = NULL, *gk = NULL, *eq = NULL,
               *ind = NULL, *num = NULL, *t = NULL, *r = NULL;
  TRY(fop(s, op, 0, &x));
  TRY(fres(s, op, 0, &y));
  TRY(keepdims(s, op, &ri, y, &yk));
  TRY(keepdims(s, op, &ri, g[0], &gk));
  TRY(bin(s, "core.eq", x, yk, &eq));
  const char *dt = eddy_dtype_name(dtype_of(op));
  eddy_named_attr_t a = eddy_ir_named_attr(
      s->ad->ctx, "dtype", eddy_ir_string_attr_get(s->ad->ctx, dt, strlen(dt)));
  TRY(ad_emit(s, "core.cast", &eq, 1, &a, 1, &ind));
  int64_t axes[MAXR];
  size_t na = 0;
  for (int32_t i = 0; i < ri.rank; i++)
    if (ri.reduced[i])
      axes[na++] = i;
  eddy_named_attr_t ra[2];
  ad_attr_i64s(s->ad, "axes", axes, na, &ra[0]);
  ra[1] = eddy_ir_named_attr(s->ad->ctx, "keepdims",
                             eddy_ir_bool_attr_get(s->ad->ctx, true));
  TRY(ad_emit(s, "core.reduce_sum", &ind, 1, ra, 2, &num));
  TRY(bin(s, "core.div", gk, num, &t));
  TRY(bin(s, "core.mul", ind, t, &r));
  return ad_adj_add(s, operand(op, 0), r);
}

/// prod, correct where x has zeros. Per reduced group, with nz the number of
/// zeros and p the product of the non-zero elements: d y / d x_i is p / x_i
/// when nz == 0, p at the zero when nz == 1 (0 elsewhere), and 0 when
/// nz >= 2. Built from eq / select / reduce ops, so dynamic shapes work.
static eddy_status_t r_reduce_prod(ad_scope_t *s, eddy_op_t *op,
                                   eddy_value_t **g) {
  if (!ad_is_diff(result(op, 0)->type))
    return NULL;
  red_info_t ri;
  TRY(red_info(op, &ri));
  eddy_value_t *x = NULL, *gk = NULL, *zero = NULL, *one = NULL,
               *isz = NULL, *xs = NULL, *zf = NULL, *nz = NULL, *p = NULL,
               *nz0 = NULL, *nz1 = NULL, *only = NULL, *q = NULL, *at = NULL,
               *d = NULL, *r = NULL;
  TRY(fop(s, op, 0, &x));
  TRY(keepdims(s, op, &ri, g[0], &gk));
  TRY(cst(s, op, 0.0, &zero));
  TRY(cst(s, op, 1.0, &one));
  TRY(bin(s, "core.eq", x, zero, &isz));
  eddy_value_t *sel1[3] = {isz, one, x};
  TRY(ad_emit(s, "core.select", sel1, 3, NULL, 0, &xs)); /* x_safe */
  const char *dt = eddy_dtype_name(dtype_of(op));
  eddy_named_attr_t ca = eddy_ir_named_attr(
      s->ad->ctx, "dtype", eddy_ir_string_attr_get(s->ad->ctx, dt, strlen(dt)));
  TRY(ad_emit(s, "core.cast", &isz, 1, &ca, 1, &zf));
  int64_t axes[MAXR];
  size_t na = 0;
  for (int32_t i = 0; i < ri.rank; i++)
    if (ri.reduced[i])
      axes[na++] = i;
  eddy_named_attr_t ra[2];
  ad_attr_i64s(s->ad, "axes", axes, na, &ra[0]);
  ra[1] = eddy_ir_named_attr(s->ad->ctx, "keepdims",
                             eddy_ir_bool_attr_get(s->ad->ctx, true));
  TRY(ad_emit(s, "core.reduce_sum", &zf, 1, ra, 2, &nz));
  TRY(ad_emit(s, "core.reduce_prod", &xs, 1, ra, 2, &p));
  TRY(bin(s, "core.eq", nz, zero, &nz0));
  TRY(bin(s, "core.eq", nz, one, &nz1));
  TRY(bin(s, "core.and", nz1, isz, &only));
  TRY(bin(s, "core.div", p, xs, &q));
  eddy_value_t *sel2[3] = {only, p, zero};
  TRY(ad_emit(s, "core.select", sel2, 3, NULL, 0, &at));
  eddy_value_t *sel3[3] = {nz0, q, at};
  TRY(ad_emit(s, "core.select", sel3, 3, NULL, 0, &d));
  TRY(bin(s, "core.mul", gk, d, &r));
  return ad_adj_add(s, operand(op, 0), r);
}

/* ---- Data movement (concat, split, slice, pad, gather: rules_movement.c) --- */

static eddy_status_t r_reshape(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  eddy_value_t *x = operand(op, 0);
  if (!ad_is_diff(x->type))
    return NULL;
  if (x->type->rank == EDDY_RANK_UNKNOWN || x->type->rank > MAXR)
    return eddy_ir_op_error(op, "autodiff needs a ranked operand");
  int64_t shape[MAXR];
  int ndyn = 0;
  for (int32_t i = 0; i < x->type->rank; i++) {
    shape[i] = x->type->dims[i];
    if (shape[i] == EDDY_DIM_DYNAMIC) {
      shape[i] = -1;
      ndyn++;
    }
  }
  // Two or more dynamic dims: the operand's run-time dims as dim operands.
  eddy_value_t *ops[MAXR + 1] = {g[0]};
  size_t nops = 1;
  for (int32_t i = 0; ndyn > 1 && i < x->type->rank; i++)
    if (shape[i] == -1)
      TRY(ad_fwd_dim(s, x, i, &ops[nops++]));
  eddy_named_attr_t a;
  ad_attr_i64s(s->ad, "shape", shape, (size_t)x->type->rank, &a);
  eddy_value_t *r = NULL;
  TRY(ad_emit(s, "core.reshape", ops, nops, &a, 1, &r));
  return ad_adj_add(s, x, r);
}

static eddy_status_t r_transpose(ad_scope_t *s, eddy_op_t *op,
                                 eddy_value_t **g) {
  int64_t perm[MAXR], inv[MAXR];
  int64_t n = eddy_ir_attr_as_i64_array(eddy_ir_op_attr(op, "perm"), perm,
                                        MAXR);
  if (n < 0 || n > MAXR)
    return eddy_ir_op_error(op, "autodiff: bad perm");
  for (int64_t i = 0; i < n; i++)
    inv[perm[i]] = i;
  eddy_named_attr_t a;
  ad_attr_i64s(s->ad, "perm", inv, (size_t)n, &a);
  eddy_value_t *r = NULL;
  TRY(ad_emit(s, "core.transpose", &g[0], 1, &a, 1, &r));
  return ad_adj_add(s, operand(op, 0), r);
}

static eddy_status_t r_broadcast_to(ad_scope_t *s, eddy_op_t *op,
                                    eddy_value_t **g) {
  return ad_adj_add_reduced(s, operand(op, 0), g[0]);
}


/* ---- TensorLists (for gradients of gradients) ------------------------------- */

/// The adjoint gx read from an item of a list of lists' adjoint, for the
/// inner list x. An item that got no gradient is unset there and reads as
/// an empty list, but the gradients of x's own pushes pop one item each:
/// gx is resized to x's length (unset items read as zeros; a no-op when gx
/// has that length already).
static eddy_status_t inner_list_adjoint(ad_scope_t *s, eddy_value_t *x,
                                        eddy_value_t **gx) {
  if (x->type->kind != EDDY_TYPE_LIST)
    return NULL;
  eddy_value_t *n = NULL;
  TRY(ad_fwd_len(s, x, &n));
  eddy_value_t *ops[2] = {*gx, n};
  eddy_op_t *rs = NULL;
  TRY(ad_emit_typed(s, "tl.resize", ops, 2, NULL, 0, &x->type, 1, &rs));
  *gx = eddy_ir_op_result(rs, 0);
  return NULL;
}

static eddy_status_t r_push_back(ad_scope_t *s, eddy_op_t *op,
                                 eddy_value_t **g) {
  eddy_value_t *l = operand(op, 0), *x = operand(op, 1);
  const eddy_type_t *types[2] = {l->type, l->type->elem};
  eddy_op_t *pop = NULL;
  TRY(ad_emit_typed(s, "tl.pop_back", &g[0], 1, NULL, 0, types, 2, &pop));
  TRY(ad_adj_add(s, l, eddy_ir_op_result(pop, 0)));
  eddy_value_t *gx = eddy_ir_op_result(pop, 1);
  TRY(inner_list_adjoint(s, x, &gx));
  return ad_adj_add(s, x, gx);
}

static eddy_status_t r_pop_back(ad_scope_t *s, eddy_op_t *op,
                                eddy_value_t **g) {
  eddy_value_t *gl = g[0], *gx = g[1];
  if (!gl)
    TRY(ad_zeros_like_fwd(s, result(op, 0), &gl));
  if (!gx)
    TRY(ad_zeros_like_fwd(s, result(op, 1), &gx));
  eddy_value_t *ops[2] = {gl, gx};
  eddy_op_t *push = NULL;
  const eddy_type_t *lt = operand(op, 0)->type;
  TRY(ad_emit_typed(s, "tl.push_back", ops, 2, NULL, 0, &lt, 1, &push));
  return ad_adj_add(s, operand(op, 0), eddy_ir_op_result(push, 0));
}

static eddy_status_t r_stack(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  const eddy_type_t *lt = operand(op, 0)->type;
  eddy_op_t *from = NULL;
  TRY(ad_emit_typed(s, "tl.from_tensor", &g[0], 1, NULL, 0, &lt, 1, &from));
  return ad_adj_add(s, operand(op, 0), eddy_ir_op_result(from, 0));
}

static eddy_status_t r_from_tensor(ad_scope_t *s, eddy_op_t *op,
                                   eddy_value_t **g) {
  const eddy_type_t *t = operand(op, 0)->type;
  eddy_op_t *st = NULL;
  TRY(ad_emit_typed(s, "tl.stack", &g[0], 1, NULL, 0, &t, 1, &st));
  return ad_adj_add(s, operand(op, 0), eddy_ir_op_result(st, 0));
}

static eddy_status_t r_get_item(ad_scope_t *s, eddy_op_t *op,
                                eddy_value_t **g) {
  /* The list's adjoint: zeros everywhere but at i. */
  eddy_value_t *l = operand(op, 0), *zl = NULL, *i = NULL;
  if (!act(s, op, 0))
    return NULL;
  TRY(ad_zeros_like_fwd(s, l, &zl));
  TRY(fop(s, op, 1, &i));
  eddy_value_t *ops[3] = {zl, i, g[0]};
  eddy_op_t *set = NULL;
  TRY(ad_emit_typed(s, "tl.set_item", ops, 3, NULL, 0, &l->type, 1, &set));
  return ad_adj_add(s, l, eddy_ir_op_result(set, 0));
}

static eddy_status_t r_set_item(ad_scope_t *s, eddy_op_t *op,
                                eddy_value_t **g) {
  eddy_value_t *l = operand(op, 0), *x = operand(op, 2), *i = NULL;
  TRY(fop(s, op, 1, &i));
  if (act(s, op, 2)) {
    eddy_value_t *ops[2] = {g[0], i};
    eddy_op_t *get = NULL;
    TRY(ad_emit_typed(s, "tl.get_item", ops, 2, NULL, 0, &x->type, 1, &get));
    eddy_value_t *gx = eddy_ir_op_result(get, 0);
    TRY(inner_list_adjoint(s, x, &gx));
    TRY(ad_adj_add(s, x, gx));
  }
  if (!act(s, op, 0))
    return NULL;
  /* Element i was overwritten: its old value gets no gradient. */
  eddy_value_t *z = NULL;
  TRY(ad_zeros_like_fwd(s, x, &z));
  eddy_value_t *ops[3] = {g[0], i, z};
  eddy_op_t *set = NULL;
  TRY(ad_emit_typed(s, "tl.set_item", ops, 3, NULL, 0, &l->type, 1, &set));
  return ad_adj_add(s, l, eddy_ir_op_result(set, 0));
}

static eddy_status_t r_resize(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  /* Resized back: the items cut off get zeros (unset), the items added
     give nothing. */
  eddy_value_t *l = operand(op, 0), *fl = NULL, *n = NULL;
  if (!act(s, op, 0))
    return NULL;
  TRY(fop(s, op, 0, &fl));
  TRY(ad_emit(s, "tl.length", &fl, 1, NULL, 0, &n));
  eddy_value_t *ops[2] = {g[0], n};
  eddy_op_t *rs = NULL;
  TRY(ad_emit_typed(s, "tl.resize", ops, 2, NULL, 0, &l->type, 1, &rs));
  return ad_adj_add(s, l, eddy_ir_op_result(rs, 0));
}

static eddy_status_t r_tl_scatter(ad_scope_t *s, eddy_op_t *op,
                               eddy_value_t **g) {
  eddy_value_t *l = operand(op, 0), *x = operand(op, 2), *idx = NULL;
  TRY(fop(s, op, 1, &idx));
  if (act(s, op, 2)) {
    /* The rows: the adjoint's items at the indices, stacked. */
    eddy_value_t *st = NULL;
    TRY(ad_emit(s, "tl.stack", &g[0], 1, NULL, 0, &st));
    eddy_value_t *ops[2] = {st, idx};
    eddy_named_attr_t a = eddy_ir_named_attr(
        s->ad->ctx, "axis", eddy_ir_int_attr_get(s->ad->ctx, 0, EDDY_DT_I64));
    eddy_op_t *ga = NULL;
    TRY(ad_emit_typed(s, "core.gather", ops, 2, &a, 1, &x->type, 1, &ga));
    TRY(ad_adj_add(s, x, eddy_ir_op_result(ga, 0)));
  }
  if (!act(s, op, 0))
    return NULL;
  /* The items overwritten get no gradient; the list is cut back to its
     length before the scatter grew it. */
  eddy_value_t *z = NULL, *fl = NULL, *n = NULL;
  TRY(ad_zeros_like_fwd(s, x, &z));
  eddy_value_t *ops[3] = {g[0], idx, z};
  eddy_op_t *sc = NULL, *rs = NULL;
  TRY(ad_emit_typed(s, "tl.scatter", ops, 3, NULL, 0, &l->type, 1, &sc));
  TRY(fop(s, op, 0, &fl));
  TRY(ad_emit(s, "tl.length", &fl, 1, NULL, 0, &n));
  eddy_value_t *rops[2] = {eddy_ir_op_result(sc, 0), n};
  TRY(ad_emit_typed(s, "tl.resize", rops, 2, NULL, 0, &l->type, 1, &rs));
  return ad_adj_add(s, l, eddy_ir_op_result(rs, 0));
}

static eddy_status_t r_tl_concat(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  /* The tensor's adjoint split back into items of the forward lengths. */
  eddy_value_t *l = operand(op, 0), *lens = NULL;
  if (!g[0] || !act(s, op, 0))
    return NULL;
  TRY(fres(s, op, 1, &lens));
  eddy_value_t *ops[2] = {g[0], lens};
  eddy_op_t *sp = NULL;
  TRY(ad_emit_typed(s, "tl.split", ops, 2, NULL, 0, &l->type, 1, &sp));
  return ad_adj_add(s, l, eddy_ir_op_result(sp, 0));
}

static eddy_status_t r_tl_split(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  /* The items' adjoints joined again. */
  eddy_value_t *x = operand(op, 0);
  if (!act(s, op, 0))
    return NULL;
  int64_t q = EDDY_DIM_DYNAMIC;
  const eddy_type_t *types[2] = {
      x->type, eddy_ir_tensor_type_get(s->ad->ctx, EDDY_DT_I64, 1, &q)};
  eddy_op_t *c = NULL;
  TRY(ad_emit_typed(s, "tl.concat", &g[0], 1, NULL, 0, types, 2, &c));
  return ad_adj_add(s, x, eddy_ir_op_result(c, 0));
}

/// The sum passes its adjoint to both lists.
static eddy_status_t r_tl_add(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  TRY(ad_adj_add(s, operand(op, 0), g[0]));
  return ad_adj_add(s, operand(op, 1), g[0]);
}

/* ---- The table ------------------------------------------------------------------ */

/// One entry per opcode: the rule, or why there is none. `zero`: the op
/// passes no gradient to its operands (its results are not differentiable,
/// or do not depend on the operands' values); `elsewhere`: the reverse walk
/// never reaches it here (a terminator, a call inlined before), so meeting
/// it is an error like an op with no entry.
typedef struct ad_rule {
  ad_rule_fn fn;
  const char *zero;
  const char *elsewhere;
} ad_rule_t;

#define ZERO_PIECEWISE "piecewise constant: zero almost everywhere"
#define ZERO_BOOL "a boolean result"
#define ZERO_INT "an integer result"
#define ZERO_NO_OPERAND "no operands"
/* ---- Along an axis: reverse, scans ------------------------------------------ */

/// The gradient of a reverse is the same reverse.
static eddy_status_t r_reverse(ad_scope_t *s, eddy_op_t *op,
                               eddy_value_t **g) {
  eddy_named_attr_t a;
  int64_t axes[MAXR];
  int64_t n = eddy_ir_attr_as_i64_array(eddy_ir_op_attr(op, "axes"), axes,
                                        MAXR);
  if (n < 0 || n > MAXR)
    return eddy_ir_op_error(op, "autodiff: bad axes");
  ad_attr_i64s(s->ad, "axes", axes, (size_t)n, &a);
  eddy_value_t *r = NULL;
  TRY(ad_emit(s, "core.reverse", &g[0], 1, &a, 1, &r));
  return ad_adj_add(s, operand(op, 0), r);
}

/// A cumsum or cumprod like op's, along its axis, with exclusive as given
/// and reverse = op's reverse XOR flip.
static eddy_status_t scan_like(ad_scope_t *s, eddy_op_t *op, const char *name,
                               eddy_value_t *x, bool flip,
                               eddy_value_t **out) {
  eddy_named_attr_t a[3] = {
      eddy_ir_named_attr(s->ad->ctx, "axis",
                         eddy_ir_int_attr_get(
                             s->ad->ctx, eddy_ir_op_attr_int(op, "axis", 0),
                             EDDY_DT_I64)),
      eddy_ir_named_attr(
          s->ad->ctx, "exclusive",
          eddy_ir_bool_attr_get(s->ad->ctx,
                                eddy_ir_op_attr_bool(op, "exclusive", false))),
      eddy_ir_named_attr(
          s->ad->ctx, "reverse",
          eddy_ir_bool_attr_get(s->ad->ctx,
                                eddy_ir_op_attr_bool(op, "reverse", false) !=
                                    flip))};
  return ad_emit(s, name, &x, 1, a, 3, out);
}

/// d/dx of y_k = sum over the window of k: each x_j feeds the y_k whose
/// window holds it, so the gradient is the scan of g the other way.
static eddy_status_t r_cumsum(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  eddy_value_t *r = NULL;
  TRY(scan_like(s, op, "core.cumsum", g[0], true, &r));
  return ad_adj_add(s, operand(op, 0), r);
}

/// TensorFlow's rule: cumsum(g * y) the other way, divided by x, and 0
/// where x is 0 (its div_no_nan; exact only where x has no zeros, as
/// there).
static eddy_status_t r_cumprod(ad_scope_t *s, eddy_op_t *op,
                               eddy_value_t **g) {
  eddy_value_t *x = NULL, *y = NULL, *gy = NULL, *c = NULL, *q = NULL,
               *zero = NULL, *isz = NULL, *r = NULL;
  TRY(fop(s, op, 0, &x));
  TRY(fres(s, op, 0, &y));
  TRY(bin(s, "core.mul", g[0], y, &gy));
  TRY(scan_like(s, op, "core.cumsum", gy, true, &c));
  TRY(bin(s, "core.div", c, x, &q));
  TRY(cst(s, op, 0.0, &zero));
  TRY(bin(s, "core.eq", x, zero, &isz));
  eddy_value_t *ops[3] = {isz, zero, q};
  TRY(ad_emit(s, "core.select", ops, 3, NULL, 0, &r));
  return ad_adj_add(s, operand(op, 0), r);
}

/// scatter adds each update at its index: its gradient reads the adjoint
/// back at the same indices (a gather).
static eddy_status_t r_scatter(ad_scope_t *s, eddy_op_t *op,
                               eddy_value_t **g) {
  eddy_value_t *idx = NULL, *r = NULL;
  TRY(fop(s, op, 0, &idx));
  eddy_named_attr_t a = eddy_ir_named_attr(
      s->ad->ctx, "axis",
      eddy_ir_int_attr_get(s->ad->ctx, eddy_ir_op_attr_int(op, "axis", 0),
                           EDDY_DT_I64));
  eddy_value_t *ops[2] = {g[0], idx};
  TRY(ad_emit(s, "core.gather", ops, 2, &a, 1, &r));
  return ad_adj_add(s, operand(op, 1), r);
}

/// topk's values are elements of x: each adjoint goes back to the position
/// its index names, sum_r g[..., r] * (indices[..., r] == j), built from a
/// [..., k, n] comparison with iota (n static; at most one dynamic dim
/// before it, for the reshapes).
static eddy_status_t r_topk(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  if (!g[0])
    return NULL;
  eddy_value_t *x = operand(op, 0);
  const eddy_type_t *xt = x->type;
  int32_t rk = xt->rank;
  if (rk < 1 || rk >= MAXR || xt->dims[rk - 1] < 0)
    return eddy_ir_op_error(op, "autodiff needs a static last dimension");
  int64_t n = xt->dims[rk - 1], k = eddy_ir_op_attr_int(op, "k", 0);
  int64_t dims[MAXR];
  int ndyn = 0;
  for (int32_t i = 0; i + 1 < rk; i++) {
    dims[i] = xt->dims[i] < 0 ? -1 : xt->dims[i];
    ndyn += dims[i] < 0;
  }
  if (ndyn > 1)
    return eddy_ir_op_error(op, "autodiff supports at most one dynamic "
                                "dimension here");
  dims[rk - 1] = k;
  dims[rk] = 1;
  eddy_named_attr_t sa;
  ad_attr_i64s(s->ad, "shape", dims, (size_t)rk + 1, &sa);
  eddy_value_t *idx = NULL, *ir = NULL, *gr = NULL, *eq = NULL, *zero = NULL,
               *sel = NULL, *r = NULL;
  TRY(fres(s, op, 1, &idx));
  TRY(ad_emit(s, "core.reshape", &idx, 1, &sa, 1, &ir));
  TRY(ad_emit(s, "core.reshape", &g[0], 1, &sa, 1, &gr));
  const eddy_type_t *it =
      eddy_ir_tensor_type_get(s->ad->ctx, EDDY_DT_I32, 1, &n);
  eddy_named_attr_t da = eddy_ir_named_attr(
      s->ad->ctx, "dimension", eddy_ir_int_attr_get(s->ad->ctx, 0, EDDY_DT_I64));
  eddy_op_t *iota = NULL;
  TRY(ad_emit_typed(s, "core.iota", NULL, 0, &da, 1, &it, 1, &iota));
  TRY(bin(s, "core.eq", ir, result(iota, 0), &eq));
  TRY(cst(s, op, 0.0, &zero));
  eddy_value_t *ops[3] = {eq, gr, zero};
  TRY(ad_emit(s, "core.select", ops, 3, NULL, 0, &sel));
  int64_t ax = rk - 1;
  eddy_named_attr_t ra;
  ad_attr_i64s(s->ad, "axes", &ax, 1, &ra);
  TRY(ad_emit(s, "core.reduce_sum", &sel, 1, &ra, 1, &r));
  return ad_adj_add(s, x, r);
}

#define ZERO_SHAPE "an integer result that depends on shapes only"
#define TERMINATOR "a terminator: the rule of the op holding it reads it"

static const ad_rule_t k_rules[EDDY_OP_COUNT_] = {
    /* unary */
    [EDDY_OP_CORE_NEG] = {r_neg},
    [EDDY_OP_CORE_ABS] = {r_abs},
    [EDDY_OP_CORE_EXP] = {r_exp},
    [EDDY_OP_CORE_LOG] = {r_log},
    [EDDY_OP_CORE_LOG1P] = {r_log1p},
    [EDDY_OP_CORE_TANH] = {r_tanh},
    [EDDY_OP_CORE_SIGMOID] = {r_sigmoid},
    [EDDY_OP_CORE_RELU] = {r_relu},
    [EDDY_OP_CORE_SQRT] = {r_sqrt},
    [EDDY_OP_CORE_RSQRT] = {r_rsqrt},
    [EDDY_OP_CORE_SQUARE] = {r_square},
    [EDDY_OP_CORE_FLOOR] = {.zero = ZERO_PIECEWISE},
    [EDDY_OP_CORE_SIGN] = {.zero = ZERO_PIECEWISE},
    [EDDY_OP_CORE_SIN] = {r_sin},
    [EDDY_OP_CORE_COS] = {r_cos},
    [EDDY_OP_CORE_TAN] = {r_tan},
    [EDDY_OP_CORE_ASIN] = {r_asin},
    [EDDY_OP_CORE_ACOS] = {r_acos},
    [EDDY_OP_CORE_ATAN] = {r_atan},
    [EDDY_OP_CORE_SINH] = {r_sinh},
    [EDDY_OP_CORE_COSH] = {r_cosh},
    [EDDY_OP_CORE_ERF] = {r_erf},
    [EDDY_OP_CORE_EXPM1] = {r_expm1},
    [EDDY_OP_CORE_CEIL] = {.zero = ZERO_PIECEWISE},
    [EDDY_OP_CORE_ROUND] = {.zero = ZERO_PIECEWISE},
    [EDDY_OP_CORE_STOP_GRADIENT] = {.zero = "stop_gradient: zero by definition"},
    /* binary */
    [EDDY_OP_CORE_ADD] = {r_add},
    [EDDY_OP_CORE_SUB] = {r_sub},
    [EDDY_OP_CORE_MUL] = {r_mul},
    [EDDY_OP_CORE_DIV] = {r_div},
    [EDDY_OP_CORE_POW] = {r_pow},
    [EDDY_OP_CORE_MAXIMUM] = {r_maximum},
    [EDDY_OP_CORE_MINIMUM] = {r_minimum},
    [EDDY_OP_CORE_ATAN2] = {r_atan2},
    [EDDY_OP_CORE_REM] = {r_rem},
    /* compare and logical */
    [EDDY_OP_CORE_EQ] = {.zero = ZERO_BOOL},
    [EDDY_OP_CORE_NE] = {.zero = ZERO_BOOL},
    [EDDY_OP_CORE_LT] = {.zero = ZERO_BOOL},
    [EDDY_OP_CORE_LE] = {.zero = ZERO_BOOL},
    [EDDY_OP_CORE_GT] = {.zero = ZERO_BOOL},
    [EDDY_OP_CORE_GE] = {.zero = ZERO_BOOL},
    [EDDY_OP_CORE_AND] = {.zero = ZERO_BOOL},
    [EDDY_OP_CORE_OR] = {.zero = ZERO_BOOL},
    [EDDY_OP_CORE_NOT] = {.zero = ZERO_BOOL},
    [EDDY_OP_CORE_BITAND] = {.zero = ZERO_INT},
    [EDDY_OP_CORE_BITOR] = {.zero = ZERO_INT},
    [EDDY_OP_CORE_BITXOR] = {.zero = ZERO_INT},
    [EDDY_OP_CORE_BITNOT] = {.zero = ZERO_INT},
    [EDDY_OP_CORE_SHIFT_LEFT] = {.zero = ZERO_INT},
    [EDDY_OP_CORE_SHIFT_RIGHT] = {.zero = ZERO_INT},
    [EDDY_OP_CORE_SELECT] = {r_select},
    [EDDY_OP_CORE_CAST] = {r_cast},
    [EDDY_OP_CORE_MATMUL] = {r_matmul},
    /* reductions */
    [EDDY_OP_CORE_REDUCE_SUM] = {r_reduce_sum},
    [EDDY_OP_CORE_REDUCE_MEAN] = {r_reduce_mean},
    [EDDY_OP_CORE_REDUCE_MAX] = {r_reduce_extremum},
    [EDDY_OP_CORE_REDUCE_MIN] = {r_reduce_extremum},
    [EDDY_OP_CORE_REDUCE_PROD] = {r_reduce_prod},
    /* data movement */
    [EDDY_OP_CORE_RESHAPE] = {r_reshape},
    [EDDY_OP_CORE_TRANSPOSE] = {r_transpose},
    [EDDY_OP_CORE_BROADCAST_TO] = {r_broadcast_to},
    [EDDY_OP_CORE_CONCAT] = {ad_rule_concat},
    [EDDY_OP_CORE_SPLIT] = {ad_rule_split},
    [EDDY_OP_CORE_SLICE] = {ad_rule_slice},
    [EDDY_OP_CORE_GATHER] = {ad_rule_gather},
    [EDDY_OP_CORE_PAD] = {ad_rule_pad},
    /* no operands or integer results */
    [EDDY_OP_CORE_CONSTANT] = {.zero = ZERO_NO_OPERAND},
    [EDDY_OP_CORE_IOTA] = {.zero = ZERO_NO_OPERAND},
    [EDDY_OP_CORE_SHAPE] = {.zero = ZERO_SHAPE},
    [EDDY_OP_CORE_DIM] = {.zero = ZERO_SHAPE},
    [EDDY_OP_CORE_RANGE] = {.zero = "TensorFlow defines no gradient for "
                                    "Range: its operands set a length"},
    /* along an axis */
    [EDDY_OP_CORE_REVERSE] = {r_reverse},
    [EDDY_OP_CORE_ARGMAX] = {.zero = ZERO_PIECEWISE},
    [EDDY_OP_CORE_ARGMIN] = {.zero = ZERO_PIECEWISE},
    [EDDY_OP_CORE_CUMSUM] = {r_cumsum},
    [EDDY_OP_CORE_CUMPROD] = {r_cumprod},
    [EDDY_OP_CORE_SCATTER] = {r_scatter},
    [EDDY_OP_CORE_TOPK] = {r_topk},
    [EDDY_OP_CORE_WHERE] = {.zero = "an integer result: the coordinates of "
                                    "the nonzero elements"},
    /* sliding windows */
    [EDDY_OP_CORE_CONV2D] = {ad_rule_window},
    [EDDY_OP_CORE_CONV2D_INPUT_GRAD] = {ad_rule_window},
    [EDDY_OP_CORE_CONV2D_FILTER_GRAD] = {ad_rule_window},
    [EDDY_OP_CORE_MAX_POOL] = {ad_rule_window},
    [EDDY_OP_CORE_AVG_POOL] = {ad_rule_window},
    [EDDY_OP_CORE_MAX_POOL_GRAD] = {ad_rule_window},
    [EDDY_OP_CORE_AVG_POOL_GRAD] = {ad_rule_window},
    /* lists */
    [EDDY_OP_TL_EMPTY] = {.zero = ZERO_NO_OPERAND},
    [EDDY_OP_TL_RESERVE] = {.zero = "its operand is a length"},
    [EDDY_OP_TL_LENGTH] = {.zero = ZERO_SHAPE},
    [EDDY_OP_TL_PUSH_BACK] = {r_push_back},
    [EDDY_OP_TL_POP_BACK] = {r_pop_back},
    [EDDY_OP_TL_STACK] = {r_stack},
    [EDDY_OP_TL_FROM_TENSOR] = {r_from_tensor},
    [EDDY_OP_TL_GET_ITEM] = {r_get_item},
    [EDDY_OP_TL_SET_ITEM] = {r_set_item},
    [EDDY_OP_TL_RESIZE] = {r_resize},
    [EDDY_OP_TL_SCATTER] = {r_tl_scatter},
    [EDDY_OP_TL_CONCAT] = {r_tl_concat},
    [EDDY_OP_TL_SPLIT] = {r_tl_split},
    [EDDY_OP_TL_ADD] = {r_tl_add},
    [EDDY_OP_TL_ZEROS_LIKE] = {.zero = "zeros whatever the operand's values"},
    /* control flow */
    [EDDY_OP_CTL_IF] = {ad_if_grad},
    [EDDY_OP_CTL_WHILE] = {ad_while_grad},
    [EDDY_OP_CTL_CALL] = {.elsewhere = "inlined before the reverse walk "
                                       "(ad_inline_calls)"},
    [EDDY_OP_CTL_YIELD] = {.elsewhere = TERMINATOR},
    [EDDY_OP_CTL_CONDITION] = {.elsewhere = TERMINATOR},
};

ad_rule_fn ad_rule_lookup(const eddy_op_t *op, bool *known) {
  const ad_rule_t *r = &k_rules[eddy_dialects_opcode(op)];
  *known = r->fn || r->zero;
  return r->fn;
}

bool eddy_ad_opcode_has_rule(eddy_opcode_t code, const char **out_reason) {
  const ad_rule_t *r =
      code > EDDY_OP_NONE && code < EDDY_OP_COUNT_ ? &k_rules[code] : NULL;
  if (out_reason)
    *out_reason = !r || r->fn ? NULL : r->zero ? r->zero : r->elsewhere;
  return r && r->fn;
}

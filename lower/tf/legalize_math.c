/// legalize-tf: elementwise math and activations beyond the 1:1 rules of
/// legalize_ops.c: trigonometric and error functions, rounding, the
/// modulo and truncating divisions, the "no NaN" divisions and products,
/// xlogy / xdivy, the NaN and infinity tests, clipping, the activations
/// (softplus, softsign, elu, selu, leaky relu, relu6, softmax, log softmax)
/// and the gradient ops TensorFlow writes for them.
///
/// The composites are written so that their gradients, which autodiff takes
/// from the core ops, are TensorFlow's, and stay finite: a branch that a
/// select masks out is computed on a safe operand (the "double where"), so
/// that a zero adjoint never meets an infinite derivative.
#include "lower/tf/tf_lower_internal.h"

#include <math.h>
#include <string.h>

/// TensorFlow op -> the core op taking the same operand (float only).
typedef struct math_rule {
  const char *tf;
  const char *core;
} math_rule_t;

static const math_rule_t UNARY[] = {
    {"Sin", "core.sin"},     {"Cos", "core.cos"},   {"Tan", "core.tan"},
    {"Asin", "core.asin"},   {"Acos", "core.acos"}, {"Atan", "core.atan"},
    {"Sinh", "core.sinh"},   {"Cosh", "core.cosh"}, {"Erf", "core.erf"},
    {"Expm1", "core.expm1"}, {"Ceil", "core.ceil"}, {"Rint", "core.round"},
    {"Round", "core.round"},
};

/// Ops with a rule below beyond UNARY.
static const char *const OTHER[] = {
    "Atan2",         "Erfc",          "Softplus",      "Softsign",
    "Elu",           "Selu",          "LeakyRelu",     "Relu6",
    "Mod",           "FloorMod",      "TruncateDiv",   "TruncateMod",
    "DivNoNan",      "MulNoNan",      "Xlogy",         "Xdivy",
    "IsNan",         "IsInf",         "IsFinite",      "ClipByValue",
    "BiasAddV1",     "Softmax",       "LogSoftmax",    "Inv",
    "SoftplusGrad",  "SoftsignGrad",  "EluGrad",       "SeluGrad",
    "LeakyReluGrad", "Relu6Grad",     "SqrtGrad",      "RsqrtGrad",
    "ReciprocalGrad", "InvGrad",      "Xlog1py",
};

void eddy_tfl_math_ops_each(void (*fn)(const char *name, void *user),
                            void *user) {
  for (size_t i = 0; i < sizeof UNARY / sizeof UNARY[0]; i++)
    fn(UNARY[i].tf, user);
  for (size_t i = 0; i < sizeof OTHER / sizeof OTHER[0]; i++)
    fn(OTHER[i], user);
}

/// ---- Builders ---------------------------------------------------------------

typedef struct mb {
  eddy_tfl_t *z;
  const eddy_op_t *op;
} mb_t;

static eddy_value_t *in(mb_t *m, size_t i) { return tfl_in(m->z, m->op, i); }

static eddy_status_t un(mb_t *m, const char *name, eddy_value_t *a,
                        eddy_value_t **out) {
  return eddy_tfl_build(m->z, m->op, name, &a, 1, NULL, 0, out);
}

static eddy_status_t bin(mb_t *m, const char *name, eddy_value_t *a,
                         eddy_value_t *b, eddy_value_t **out) {
  return tfl_bin(m->z, m->op, name, a, b, out);
}

static eddy_status_t sel(mb_t *m, eddy_value_t *c, eddy_value_t *a,
                         eddy_value_t *b, eddy_value_t **out) {
  return tfl_sel(m->z, m->op, c, a, b, out);
}

/// A scalar constant of v's dtype.
static eddy_status_t k(mb_t *m, eddy_value_t *v, double x,
                       eddy_value_t **out) {
  return tfl_scalar_like(m->z, v, x, out);
}

#define TRY EDDY_RETURN_IF_ERROR

static eddy_status_t need_float(mb_t *m, eddy_value_t *v) {
  if (v->type->kind != EDDY_TYPE_TENSOR || !eddy_dtype_is_float(v->type->dtype))
    return eddy_tfl_error(m->op, "the operand must be a float tensor, not %s",
                          v->type->kind == EDDY_TYPE_TENSOR
                              ? eddy_dtype_name(v->type->dtype)
                              : "a list or token");
  return NULL;
}

static eddy_status_t need_numeric(mb_t *m, eddy_value_t *v) {
  if (v->type->kind != EDDY_TYPE_TENSOR || v->type->dtype == EDDY_DT_I1)
    return eddy_tfl_error(m->op, "the operand must be a numeric tensor");
  return NULL;
}

/// ---- Division and remainders -------------------------------------------------

/// TensorFlow's FloorMod: the remainder with the sign of the divisor,
/// rem(x, y) + y where the truncated remainder is nonzero and its sign is
/// not the divisor's.
static eddy_status_t floor_mod(mb_t *m, eddy_value_t *x, eddy_value_t *y,
                               eddy_value_t **out) {
  eddy_value_t *r = NULL, *z = NULL, *nz = NULL, *rn = NULL, *yn = NULL,
               *d = NULL, *c = NULL, *ry = NULL;
  TRY(bin(m, "core.rem", x, y, &r));
  TRY(k(m, x, 0, &z));
  TRY(bin(m, "core.ne", r, z, &nz));
  TRY(bin(m, "core.lt", r, z, &rn));
  TRY(bin(m, "core.lt", y, z, &yn));
  TRY(bin(m, "core.ne", rn, yn, &d));
  TRY(bin(m, "core.and", nz, d, &c));
  TRY(bin(m, "core.add", r, y, &ry));
  return sel(m, c, ry, r, out);
}

/// TensorFlow's TruncateDiv: the quotient rounded toward zero. Integers:
/// the floor quotient (core.div) plus 1 where the remainder is nonzero and
/// the signs differ; x / 0 is 0 (TensorFlow fails). Floats: trunc(x / y).
static eddy_status_t truncate_div(mb_t *m, eddy_value_t *x, eddy_value_t *y,
                                  eddy_value_t **out) {
  eddy_value_t *q = NULL, *z = NULL, *c = NULL;
  TRY(bin(m, "core.div", x, y, &q));
  TRY(k(m, x, 0, &z));
  if (eddy_dtype_is_float(x->type->dtype)) {
    eddy_value_t *f = NULL, *cl = NULL;
    TRY(bin(m, "core.lt", q, z, &c));
    TRY(un(m, "core.ceil", q, &cl));
    TRY(un(m, "core.floor", q, &f));
    return sel(m, c, cl, f, out);
  }
  eddy_value_t *r = NULL, *nz = NULL, *xn = NULL, *yn = NULL, *d = NULL,
               *one = NULL, *q1 = NULL;
  TRY(bin(m, "core.rem", x, y, &r));
  TRY(bin(m, "core.ne", r, z, &nz));
  TRY(bin(m, "core.lt", x, z, &xn));
  TRY(bin(m, "core.lt", y, z, &yn));
  TRY(bin(m, "core.ne", xn, yn, &d));
  TRY(bin(m, "core.and", nz, d, &c));
  TRY(k(m, x, 1, &one));
  TRY(bin(m, "core.add", q, one, &q1));
  return sel(m, c, q1, q, out);
}

/// x / y, or 0 where `zero` holds, with the division done on a safe
/// divisor there (so that neither the value nor the gradient is NaN).
static eddy_status_t div_masked(mb_t *m, eddy_value_t *zero,
                                eddy_value_t *x, eddy_value_t *y,
                                eddy_value_t **out) {
  eddy_value_t *z = NULL, *one = NULL, *ys = NULL, *q = NULL;
  TRY(k(m, x, 0, &z));
  TRY(k(m, x, 1, &one));
  TRY(sel(m, zero, one, y, &ys));
  TRY(bin(m, "core.div", x, ys, &q));
  return sel(m, zero, z, q, out);
}

/// DivNoNan: 0 where y == 0, else x / y.
static eddy_status_t div_no_nan(mb_t *m, eddy_value_t *x, eddy_value_t *y,
                                eddy_value_t **out) {
  eddy_value_t *z = NULL, *yz = NULL;
  TRY(k(m, y, 0, &z));
  TRY(bin(m, "core.eq", y, z, &yz));
  return div_masked(m, yz, x, y, out);
}

/// MulNoNan: 0 where y == 0 even if x is infinite or NaN, else x * y. x is
/// replaced by 0 where y == 0 and x is not finite, so that x * y is a zero
/// there and d/dy stays x (TensorFlow's gradient) wherever x is finite.
static eddy_status_t mul_no_nan(mb_t *m, eddy_value_t *x, eddy_value_t *y,
                                eddy_value_t **out) {
  eddy_value_t *z = NULL, *inf = NULL, *yz = NULL, *ax = NULL, *fin = NULL,
               *nf = NULL, *bad = NULL, *xs = NULL;
  TRY(k(m, x, 0, &z));
  TRY(k(m, x, INFINITY, &inf));
  TRY(bin(m, "core.eq", y, z, &yz));
  TRY(un(m, "core.abs", x, &ax));
  TRY(bin(m, "core.lt", ax, inf, &fin));
  TRY(un(m, "core.not", fin, &nf));
  TRY(bin(m, "core.and", yz, nf, &bad));
  TRY(sel(m, bad, z, x, &xs));
  return bin(m, "core.mul", xs, y, out);
}

/// Xlogy: 0 where x == 0 (y NaN excepted, as TensorFlow), else x log y;
/// log is taken of 1 where x == 0. Xlog1py (`log1p`): x log(1 + y), its
/// log1p taken of 0 there.
static eddy_status_t xlogy(mb_t *m, eddy_value_t *x, eddy_value_t *y,
                           bool log1p, eddy_value_t **out) {
  eddy_value_t *z = NULL, *one = NULL, *xz = NULL, *ynan = NULL, *nn = NULL,
               *c = NULL, *ys = NULL, *l = NULL, *p = NULL;
  TRY(k(m, x, 0, &z));
  TRY(k(m, x, 1, &one));
  TRY(bin(m, "core.eq", x, z, &xz));
  TRY(bin(m, "core.ne", y, y, &ynan));
  TRY(un(m, "core.not", ynan, &nn));
  TRY(bin(m, "core.and", xz, nn, &c));
  TRY(sel(m, c, log1p ? z : one, y, &ys));
  TRY(un(m, log1p ? "core.log1p" : "core.log", ys, &l));
  TRY(bin(m, "core.mul", x, l, &p));
  return sel(m, c, z, p, out);
}

/// Xdivy: 0 where x == 0, else x / y.
static eddy_status_t xdivy(mb_t *m, eddy_value_t *x, eddy_value_t *y,
                           eddy_value_t **out) {
  eddy_value_t *z = NULL, *xz = NULL;
  TRY(k(m, x, 0, &z));
  TRY(bin(m, "core.eq", x, z, &xz));
  return div_masked(m, xz, x, y, out);
}

/// ---- Activations --------------------------------------------------------------

/// softplus(x) = log(1 + exp(x)), as x + log1p(exp(-x)) for x >= 0 and
/// log1p(exp(x)) below, each on an operand clamped to its side of 0 (exp
/// never overflows, in the value or the gradient, which is sigmoid(x)).
static eddy_status_t softplus(mb_t *m, eddy_value_t *x, eddy_value_t **out) {
  eddy_value_t *z = NULL, *pos = NULL, *xp = NULL, *xn = NULL, *e = NULL,
               *l = NULL, *a = NULL, *b = NULL, *nx = NULL;
  TRY(k(m, x, 0, &z));
  TRY(bin(m, "core.ge", x, z, &pos));
  TRY(sel(m, pos, x, z, &xp));
  TRY(sel(m, pos, z, x, &xn));
  TRY(un(m, "core.neg", xp, &nx));
  TRY(un(m, "core.exp", nx, &e));
  TRY(un(m, "core.log1p", e, &l));
  TRY(bin(m, "core.add", xp, l, &a));
  TRY(un(m, "core.exp", xn, &e));
  TRY(un(m, "core.log1p", e, &b));
  return sel(m, pos, a, b, out);
}

/// x where x > 0, else scale_neg * expm1(min(x, 0)); times scale.
static eddy_status_t elu(mb_t *m, eddy_value_t *x, double alpha, double scale,
                         eddy_value_t **out) {
  eddy_value_t *z = NULL, *pos = NULL, *xn = NULL, *e = NULL, *a = NULL,
               *r = NULL, *s = NULL;
  TRY(k(m, x, 0, &z));
  TRY(bin(m, "core.gt", x, z, &pos));
  TRY(sel(m, pos, z, x, &xn));
  TRY(un(m, "core.expm1", xn, &e));
  if (alpha != 1.0) {
    TRY(k(m, x, alpha, &a));
    TRY(bin(m, "core.mul", e, a, &e));
  }
  TRY(sel(m, pos, x, e, &r));
  if (scale == 1.0) {
    *out = r;
    return NULL;
  }
  TRY(k(m, x, scale, &s));
  return bin(m, "core.mul", r, s, out);
}

static const double SELU_ALPHA = 1.6732632423543772848170429916717;
static const double SELU_SCALE = 1.0507009873554804934193349852946;

/// Softmax (log_softmax false) or LogSoftmax of the last axis, shifted by
/// the maximum so that exp never overflows.
static eddy_status_t softmax(mb_t *m, eddy_value_t *x, bool log_softmax,
                             eddy_value_t **out) {
  const eddy_type_t *t = x->type;
  if (t->kind != EDDY_TYPE_TENSOR || t->rank == EDDY_RANK_UNKNOWN ||
      t->rank < 1)
    return eddy_tfl_error(m->op, "the logits need a known rank of at least 1");
  int64_t axis = t->rank - 1;
  eddy_named_attr_t a[2] = {
      eddy_ir_named_attr(m->z->ctx, "axes",
                         eddy_ir_i64_array_attr_get(m->z->ctx, &axis, 1)),
      eddy_ir_named_attr(m->z->ctx, "keepdims",
                         eddy_ir_bool_attr_get(m->z->ctx, true))};
  eddy_value_t *mx = NULL, *d = NULL, *e = NULL, *s = NULL;
  TRY(eddy_tfl_build(m->z, m->op, "core.reduce_max", &x, 1, a, 2, &mx));
  TRY(bin(m, "core.sub", x, mx, &d));
  TRY(un(m, "core.exp", d, &e));
  TRY(eddy_tfl_build(m->z, m->op, "core.reduce_sum", &e, 1, a, 2, &s));
  if (!log_softmax)
    return bin(m, "core.div", e, s, out);
  eddy_value_t *l = NULL;
  TRY(un(m, "core.log", s, &l));
  return bin(m, "core.sub", d, l, out);
}

/// ---- The rules ------------------------------------------------------------------

static eddy_status_t lower(mb_t *m, const char *t, eddy_value_t **r) {
  eddy_value_t *c = NULL, *d = NULL, *e = NULL, *z = NULL, *p = NULL;
  for (size_t i = 0; i < sizeof UNARY / sizeof UNARY[0]; i++) {
    if (strcmp(t, UNARY[i].tf) != 0)
      continue;
    eddy_value_t *x = in(m, 0);
    if (strcmp(t, "Round") == 0 && x->type->kind == EDDY_TYPE_TENSOR &&
        eddy_dtype_is_int(x->type->dtype)) {
      *r = x; // integers are already round
      return NULL;
    }
    TRY(need_float(m, x));
    return un(m, UNARY[i].core, x, r);
  }
  eddy_value_t *x = in(m, 0);
  if (strcmp(t, "IsNan") == 0 || strcmp(t, "IsInf") == 0 ||
      strcmp(t, "IsFinite") == 0) {
    TRY(need_float(m, x));
    if (t[2] == 'N')
      return bin(m, "core.ne", x, x, r);
    TRY(un(m, "core.abs", x, &d));
    TRY(k(m, x, INFINITY, &c));
    return bin(m, t[2] == 'I' ? "core.eq" : "core.lt", d, c, r);
  }
  if (strcmp(t, "BiasAddV1") == 0)
    return bin(m, "core.add", x, in(m, 1), r);
  if (strcmp(t, "ClipByValue") == 0) {
    // min(max(t, lo), hi): the ties pass the gradient to t, as
    // TensorFlow's rule does.
    TRY(need_numeric(m, x));
    TRY(bin(m, "core.maximum", x, in(m, 1), &d));
    return bin(m, "core.minimum", d, in(m, 2), r);
  }
  if (strcmp(t, "Mod") == 0 || strcmp(t, "TruncateMod") == 0) {
    // TensorFlow's Mod is C's: truncated, the sign of the dividend.
    TRY(need_numeric(m, x));
    return bin(m, "core.rem", x, in(m, 1), r);
  }
  if (strcmp(t, "FloorMod") == 0) {
    TRY(need_numeric(m, x));
    return floor_mod(m, x, in(m, 1), r);
  }
  if (strcmp(t, "TruncateDiv") == 0) {
    TRY(need_numeric(m, x));
    return truncate_div(m, x, in(m, 1), r);
  }
  if (strcmp(t, "Inv") == 0) {
    TRY(need_float(m, x));
    TRY(k(m, x, 1, &c));
    return bin(m, "core.div", c, x, r);
  }
  // The rest are float only.
  TRY(need_float(m, x));
  if (strcmp(t, "Atan2") == 0)
    return bin(m, "core.atan2", x, in(m, 1), r);
  if (strcmp(t, "Erfc") == 0) {
    TRY(un(m, "core.erf", x, &d));
    TRY(k(m, x, 1, &c));
    return bin(m, "core.sub", c, d, r);
  }
  if (strcmp(t, "DivNoNan") == 0)
    return div_no_nan(m, x, in(m, 1), r);
  if (strcmp(t, "MulNoNan") == 0)
    return mul_no_nan(m, x, in(m, 1), r);
  if (strcmp(t, "Xlogy") == 0 || strcmp(t, "Xlog1py") == 0)
    return xlogy(m, x, in(m, 1), t[4] == '1', r);
  if (strcmp(t, "Xdivy") == 0)
    return xdivy(m, x, in(m, 1), r);
  if (strcmp(t, "Softplus") == 0)
    return softplus(m, x, r);
  if (strcmp(t, "Softsign") == 0) {
    // x / (1 + |x|)
    TRY(un(m, "core.abs", x, &d));
    TRY(k(m, x, 1, &c));
    TRY(bin(m, "core.add", c, d, &e));
    return bin(m, "core.div", x, e, r);
  }
  if (strcmp(t, "Elu") == 0)
    return elu(m, x, 1.0, 1.0, r);
  if (strcmp(t, "Selu") == 0)
    return elu(m, x, SELU_ALPHA, SELU_SCALE, r);
  if (strcmp(t, "LeakyRelu") == 0) {
    // x where x > 0, else alpha x (TensorFlow's kernel).
    double alpha = eddy_ir_op_attr_float(m->op, "alpha", 0.2);
    TRY(k(m, x, 0, &z));
    TRY(bin(m, "core.gt", x, z, &p));
    TRY(k(m, x, alpha, &c));
    TRY(bin(m, "core.mul", x, c, &d));
    return sel(m, p, x, d, r);
  }
  if (strcmp(t, "Relu6") == 0) {
    // 6 where x >= 6, else relu(x): no gradient at 0 and 6 (TensorFlow's
    // Relu6Grad), and NaN passes.
    TRY(k(m, x, 6, &c));
    TRY(bin(m, "core.ge", x, c, &p));
    TRY(un(m, "core.relu", x, &d));
    return sel(m, p, c, d, r);
  }
  if (strcmp(t, "Softmax") == 0 || strcmp(t, "LogSoftmax") == 0)
    return softmax(m, x, t[0] == 'L', r);

  // Gradient ops: (gradients, forward value) operands, as TensorFlow
  // writes them.
  eddy_value_t *g = x, *v = NULL;
  if (strcmp(t, "SoftplusGrad") == 0) {
    // g sigmoid(x)
    TRY(un(m, "core.sigmoid", in(m, 1), &d));
    return bin(m, "core.mul", g, d, r);
  }
  if (strcmp(t, "SoftsignGrad") == 0) {
    // g / (1 + |x|)^2
    TRY(un(m, "core.abs", in(m, 1), &d));
    TRY(k(m, g, 1, &c));
    TRY(bin(m, "core.add", c, d, &e));
    TRY(bin(m, "core.mul", e, e, &e));
    return bin(m, "core.div", g, e, r);
  }
  if (strcmp(t, "EluGrad") == 0 || strcmp(t, "SeluGrad") == 0) {
    // Operand 1 is the forward output y: where y < 0, g (y + alpha scale)
    // (Elu: alpha = scale = 1), else g scale.
    bool selu = t[0] == 'S';
    v = in(m, 1);
    TRY(k(m, g, 0, &z));
    TRY(bin(m, "core.lt", v, z, &p));
    TRY(k(m, g, selu ? SELU_ALPHA * SELU_SCALE : 1.0, &c));
    TRY(bin(m, "core.add", v, c, &d));
    TRY(bin(m, "core.mul", g, d, &d));
    if (selu) {
      TRY(k(m, g, SELU_SCALE, &c));
      TRY(bin(m, "core.mul", g, c, &e));
    } else {
      e = g;
    }
    return sel(m, p, d, e, r);
  }
  if (strcmp(t, "LeakyReluGrad") == 0) {
    double alpha = eddy_ir_op_attr_float(m->op, "alpha", 0.2);
    TRY(k(m, g, 0, &z));
    TRY(bin(m, "core.gt", in(m, 1), z, &p));
    TRY(k(m, g, alpha, &c));
    TRY(bin(m, "core.mul", g, c, &d));
    return sel(m, p, g, d, r);
  }
  if (strcmp(t, "Relu6Grad") == 0) {
    // g where 0 < x < 6, else 0
    v = in(m, 1);
    eddy_value_t *lo = NULL, *hi = NULL;
    TRY(k(m, g, 0, &z));
    TRY(k(m, g, 6, &c));
    TRY(bin(m, "core.gt", v, z, &lo));
    TRY(bin(m, "core.lt", v, c, &hi));
    TRY(bin(m, "core.and", lo, hi, &p));
    return sel(m, p, g, z, r);
  }
  // SqrtGrad, RsqrtGrad, ReciprocalGrad, InvGrad: (y, dy).
  eddy_value_t *y = x, *dy = in(m, 1);
  if (strcmp(t, "SqrtGrad") == 0) {
    // dy / (2 y)
    TRY(k(m, y, 2, &c));
    TRY(bin(m, "core.mul", y, c, &d));
    return bin(m, "core.div", dy, d, r);
  }
  if (strcmp(t, "RsqrtGrad") == 0) {
    // -dy y^3 / 2
    TRY(bin(m, "core.mul", y, y, &d));
    TRY(bin(m, "core.mul", d, y, &d));
    TRY(k(m, y, -0.5, &c));
    TRY(bin(m, "core.mul", d, c, &d));
    return bin(m, "core.mul", dy, d, r);
  }
  if (strcmp(t, "ReciprocalGrad") == 0 || strcmp(t, "InvGrad") == 0) {
    // -dy y^2
    TRY(bin(m, "core.mul", y, y, &d));
    TRY(bin(m, "core.mul", dy, d, &d));
    return un(m, "core.neg", d, r);
  }
  return eddy_tfl_error(m->op, "no rule (internal error)");
}

eddy_status_t eddy_tfl_lower_math_op(eddy_tfl_t *z, const eddy_op_t *op,
                                     bool *handled) {
  const char *t = op->name->str + 3;
  bool found = false;
  for (size_t i = 0; !found && i < sizeof UNARY / sizeof UNARY[0]; i++)
    found = strcmp(t, UNARY[i].tf) == 0;
  for (size_t i = 0; !found && i < sizeof OTHER / sizeof OTHER[0]; i++)
    found = strcmp(t, OTHER[i]) == 0;
  *handled = found;
  if (!*handled)
    return NULL;
  mb_t m = {z, op};
  eddy_value_t *r = NULL;
  TRY(lower(&m, t, &r));
  eddy_tfl_set(z, &op->results[0], r);
  return NULL;
}

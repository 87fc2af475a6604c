/// legalize-tf: the gamma family, Lgamma, Digamma, Polygamma and Zeta (the
/// Hurwitz zeta function), as compositions of core ops, the way XLA expands
/// them rather than as core ops of their own: the evaluator, both backends,
/// the dataflow interpreter and autodiff take them as they are.
///
/// Each is computed in f64 whatever the operands' float dtype and rounded
/// to it once at the end, so that an f32 result is TensorFlow's (which
/// calls the C library's lgammaf and Eigen's f32 series) to within a unit
/// or two in the last place. The special values are TensorFlow's, found by
/// running its kernels: lgamma is +inf at the poles and at +-inf; digamma is
/// NaN at the poles and at -inf; zeta(s, q) is +inf at s = 1, NaN for
/// s < 1 and for negative q with a non-integer s, and at a nonpositive
/// integer q +inf for an even s and NaN for any other; polygamma(n, x) is
/// NaN unless n is a nonnegative integer.
///
/// Every branch a select masks out is computed on a safe operand (the
/// "double where" of legalize_math.c), so that its derivative stays finite
/// where the branch is not taken.
#include "lower/tf/tf_lower_internal.h"

#include <math.h>
#include <string.h>

static const char *const OPS[] = {"Lgamma", "Digamma", "Polygamma", "Zeta"};

void eddy_tfl_special_ops_each(void (*fn)(const char *name, void *user),
                               void *user) {
  for (size_t i = 0; i < sizeof OPS / sizeof OPS[0]; i++)
    fn(OPS[i], user);
}

/// ---- An expression builder with a sticky error ---------------------------
/// Each builder returns NULL once an op failed (or an operand is NULL), and
/// the first error is kept in `err`: the formulas below read as formulas.

typedef struct sx {
  eddy_tfl_t *z;
  const eddy_op_t *op;
  eddy_status_t err;
} sx_t;

static eddy_value_t *op1(sx_t *s, const char *name, eddy_value_t *a) {
  eddy_value_t *r = NULL;
  if (s->err || !a)
    return NULL;
  s->err = eddy_tfl_build(s->z, s->op, name, &a, 1, NULL, 0, &r);
  return s->err ? NULL : r;
}

static eddy_value_t *op2(sx_t *s, const char *name, eddy_value_t *a,
                         eddy_value_t *b) {
  eddy_value_t *r = NULL;
  if (s->err || !a || !b)
    return NULL;
  s->err = tfl_bin(s->z, s->op, name, a, b, &r);
  return s->err ? NULL : r;
}

static eddy_value_t *sel(sx_t *s, eddy_value_t *c, eddy_value_t *a,
                         eddy_value_t *b) {
  eddy_value_t *r = NULL;
  if (s->err || !c || !a || !b)
    return NULL;
  s->err = tfl_sel(s->z, s->op, c, a, b, &r);
  return s->err ? NULL : r;
}

/// An f64 scalar constant.
static eddy_value_t *k(sx_t *s, double x) {
  eddy_value_t *r = NULL;
  if (s->err)
    return NULL;
  s->err = eddy_tfl_splat(s->z, EDDY_DT_F64, 0, NULL, x, &r);
  return s->err ? NULL : r;
}

#define ADD(a, b) op2(s, "core.add", a, b)
#define SUB(a, b) op2(s, "core.sub", a, b)
#define MUL(a, b) op2(s, "core.mul", a, b)
#define DIV(a, b) op2(s, "core.div", a, b)
#define LT(a, b) op2(s, "core.lt", a, b)
#define LE(a, b) op2(s, "core.le", a, b)
#define EQ(a, b) op2(s, "core.eq", a, b)
#define AND(a, b) op2(s, "core.and", a, b)
#define OR(a, b) op2(s, "core.or", a, b)
#define LOG(a) op1(s, "core.log", a)
#define FLOOR(a) op1(s, "core.floor", a)

static const double PI = 3.14159265358979323846;

/// x - round(x), in [-1/2, 1/2]: sin(pi x) and tan(pi x) up to sign and
/// period, computed where pi x has not lost x's fraction.
static eddy_value_t *frac(sx_t *s, eddy_value_t *x) {
  return SUB(x, op1(s, "core.round", x));
}

/// True where x is an integer (infinities included).
static eddy_value_t *is_int(sx_t *s, eddy_value_t *x) {
  return EQ(x, FLOOR(x));
}

/// True where the integer x is odd.
static eddy_value_t *is_odd(sx_t *s, eddy_value_t *x) {
  eddy_value_t *half = FLOOR(MUL(x, k(s, 0.5)));
  return EQ(SUB(x, MUL(half, k(s, 2))), k(s, 1));
}

/// ---- lgamma -------------------------------------------------------------

/// The Lanczos approximation with g = 7 and nine terms (the coefficients
/// published with it, good to about 1e-15 relative), for x >= 1/2:
/// lgamma(x) = log(2 pi)/2 + (x - 1/2) log(t) - t + log(A(x - 1)),
/// t = x + g - 1/2.
static eddy_value_t *lgamma_lanczos(sx_t *s, eddy_value_t *x) {
  static const double C[9] = {
      0.99999999999980993,  676.5203681218851,     -1259.1392167224028,
      771.32342877765313,   -176.61502916214059,   12.507343278686905,
      -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7};
  eddy_value_t *zz = SUB(x, k(s, 1));
  eddy_value_t *a = k(s, C[0]);
  for (int i = 1; i < 9; i++)
    a = ADD(a, DIV(k(s, C[i]), ADD(zz, k(s, i))));
  eddy_value_t *t = ADD(zz, k(s, 7.5));
  eddy_value_t *p = MUL(ADD(zz, k(s, 0.5)), LOG(t));
  return ADD(ADD(k(s, 0.5 * log(2 * PI)), SUB(p, t)), LOG(a));
}

/// lgamma(x) = log |Gamma(x)|. Below 1/2 by reflection:
/// lgamma(x) = log(pi) - log |sin(pi x)| - lgamma(1 - x).
static eddy_value_t *lgamma_of(sx_t *s, eddy_value_t *x) {
  eddy_value_t *refl = LT(x, k(s, 0.5));
  eddy_value_t *lg = lgamma_lanczos(s, sel(s, refl, SUB(k(s, 1), x), x));
  eddy_value_t *xr = sel(s, refl, x, k(s, 0.25));
  eddy_value_t *sn =
      op1(s, "core.abs", op1(s, "core.sin", MUL(k(s, PI), frac(s, xr))));
  eddy_value_t *r =
      sel(s, refl, SUB(SUB(k(s, log(PI)), LOG(sn)), lg), lg);
  // +-inf: +inf (the Lanczos sum reads inf - inf there).
  eddy_value_t *inf = k(s, INFINITY);
  return sel(s, EQ(op1(s, "core.abs", x), inf), inf, r);
}

/// ---- digamma ------------------------------------------------------------

/// digamma(x) for x >= 1/2: the recurrence digamma(x) = digamma(x + 10) -
/// sum_{i<10} 1/(x + i), then the asymptotic series at y = x + 10 >= 10.5,
/// log y - 1/(2y) - sum_j B_2j / (2j y^2j), to j = 7 (the first term left
/// out is below 1e-16 there).
static eddy_value_t *digamma_series(sx_t *s, eddy_value_t *x) {
  static const double B[7] = {1.0 / 12,  -1.0 / 120,       1.0 / 252, -1.0 / 240,
                              1.0 / 132, -691.0 / 32760.0, 1.0 / 12};
  eddy_value_t *acc = NULL;
  for (int i = 0; i < 10; i++) {
    eddy_value_t *t = DIV(k(s, 1), ADD(x, k(s, i)));
    acc = acc ? ADD(acc, t) : t;
  }
  eddy_value_t *y = ADD(x, k(s, 10));
  eddy_value_t *inv = DIV(k(s, 1), y);
  eddy_value_t *u = MUL(inv, inv);
  // Horner in u: u (B0 + u (B1 + u (... + u B6))).
  eddy_value_t *h = k(s, B[6]);
  for (int j = 5; j >= 0; j--)
    h = ADD(k(s, B[j]), MUL(u, h));
  eddy_value_t *series = MUL(u, h);
  eddy_value_t *r = SUB(LOG(y), MUL(k(s, 0.5), inv));
  return SUB(SUB(r, series), acc);
}

/// digamma(x); below 1/2 by reflection, digamma(x) = digamma(1 - x) -
/// pi / tan(pi x); NaN at the poles (0, -1, ...) and at -inf.
static eddy_value_t *digamma_of(sx_t *s, eddy_value_t *x) {
  eddy_value_t *refl = LT(x, k(s, 0.5));
  eddy_value_t *psi = digamma_series(s, sel(s, refl, SUB(k(s, 1), x), x));
  eddy_value_t *xr = sel(s, refl, x, k(s, 0.25));
  eddy_value_t *tn = op1(s, "core.tan", MUL(k(s, PI), frac(s, xr)));
  eddy_value_t *r = sel(s, refl, SUB(psi, DIV(k(s, PI), tn)), psi);
  eddy_value_t *pole = AND(LE(x, k(s, 0)), is_int(s, x));
  return sel(s, pole, k(s, NAN), r);
}

/// ---- zeta and polygamma ---------------------------------------------------

/// Terms summed before the Euler-Maclaurin tail. The tail needs q + N >= 9
/// to reach f64 rounding: q >= -7 here. Below, zeta is NaN (see docs/import.md).
enum { ZETA_TERMS = 16, ZETA_TAIL = 12 };

/// a^-s for a real a and an s that is an integer where a < 0.
static eddy_value_t *pow_neg(sx_t *s, eddy_value_t *a, eddy_value_t *sv,
                             eddy_value_t *odd) {
  eddy_value_t *m =
      op2(s, "core.pow", op1(s, "core.abs", a), op1(s, "core.neg", sv));
  eddy_value_t *neg = AND(LT(a, k(s, 0)), odd);
  return sel(s, neg, op1(s, "core.neg", m), m);
}

/// The Hurwitz zeta function zeta(s, q) = sum_{i >= 0} (q + i)^-s: the
/// first ZETA_TERMS terms, then at w = q + ZETA_TERMS the Euler-Maclaurin
/// tail w^(1-s)/(s-1) + w^-s/2 + sum_j B_2j/(2j)! s (s+1) ... (s+2j-2)
/// w^(-s-2j+1).
static eddy_value_t *zeta_of(sx_t *s, eddy_value_t *sv, eddy_value_t *q) {
  // (2j)! / B_2j, j = 1..12.
  static const double A[ZETA_TAIL] = {12.0,
                                      -720.0,
                                      30240.0,
                                      -1209600.0,
                                      47900160.0,
                                      -1.8924375803183791606e9,
                                      7.47242496e10,
                                      -2.950130727918164224e12,
                                      1.1646782814350067249e14,
                                      -4.5979787224074726105e15,
                                      1.8152105401943546773e17,
                                      -7.1661652561756670113e18};
  eddy_value_t *one = k(s, 1);
  // A safe exponent where the result is decided below (s <= 1).
  eddy_value_t *ss = sel(s, LE(sv, one), k(s, 2), sv);
  eddy_value_t *odd = is_odd(s, ss);
  eddy_value_t *sum = NULL;
  for (int i = 0; i < ZETA_TERMS; i++) {
    eddy_value_t *t = pow_neg(s, ADD(q, k(s, i)), ss, odd);
    sum = sum ? ADD(sum, t) : t;
  }
  // The tail, at w >= 9 (a safe 9 where q is out of range).
  eddy_value_t *low = LT(q, k(s, 9 - ZETA_TERMS));
  eddy_value_t *w = sel(s, low, k(s, 9), ADD(q, k(s, ZETA_TERMS)));
  eddy_value_t *ws = op2(s, "core.pow", w, op1(s, "core.neg", ss)); // w^-s
  sum = ADD(sum, DIV(MUL(ws, w), SUB(ss, one)));
  sum = ADD(sum, MUL(k(s, 0.5), ws));
  eddy_value_t *fac = ss;        // s (s+1) ... (s+2j-2)
  eddy_value_t *wp = DIV(ws, w); // w^(-s-2j+1)
  eddy_value_t *w2 = MUL(w, w);
  for (int j = 1; j <= ZETA_TAIL; j++) {
    if (j > 1) {
      fac = MUL(fac, MUL(ADD(ss, k(s, 2 * j - 3)), ADD(ss, k(s, 2 * j - 2))));
      wp = DIV(wp, w2);
    }
    sum = ADD(sum, DIV(MUL(fac, wp), k(s, A[j - 1])));
  }
  eddy_value_t *nan = k(s, NAN), *inf = k(s, INFINITY);
  eddy_value_t *sint = is_int(s, sv);
  eddy_value_t *even = AND(sint, op1(s, "core.not", is_odd(s, sv)));
  eddy_value_t *pole = AND(LE(q, k(s, 0)), is_int(s, q));
  eddy_value_t *r =
      sel(s, AND(LT(q, k(s, 0)), op1(s, "core.not", sint)), nan, sum);
  r = sel(s, low, nan, r);
  r = sel(s, pole, sel(s, even, inf, nan), r);
  r = sel(s, LT(sv, one), nan, r);
  return sel(s, EQ(sv, one), inf, r);
}

/// polygamma(n, x) = (-1)^(n+1) n! zeta(n + 1, x) for an integer n >= 1,
/// digamma(x) for n = 0, NaN for any other n.
static eddy_value_t *polygamma_of(sx_t *s, eddy_value_t *n, eddy_value_t *x) {
  eddy_value_t *zero = k(s, 0), *one = k(s, 1);
  eddy_value_t *bad = OR(LT(n, zero), op1(s, "core.not", is_int(s, n)));
  eddy_value_t *n0 = EQ(n, zero);
  eddy_value_t *n1 = sel(s, bad, one, ADD(n, one)); // n + 1, safe
  eddy_value_t *zt = zeta_of(s, sel(s, n0, k(s, 2), n1), x);
  eddy_value_t *fact = op1(s, "core.exp", lgamma_of(s, n1));
  eddy_value_t *sign = sel(s, is_odd(s, n1), k(s, -1), k(s, 1));
  eddy_value_t *pg = MUL(MUL(sign, fact), zt);
  eddy_value_t *r = sel(s, n0, digamma_of(s, x), pg);
  return sel(s, bad, k(s, NAN), r);
}

/// ---- The rules ----------------------------------------------------------

eddy_status_t eddy_tfl_lower_special_op(eddy_tfl_t *z, const eddy_op_t *op,
                                        bool *handled) {
  const char *t = op->name->str + 3;
  *handled = false;
  for (size_t i = 0; !*handled && i < sizeof OPS / sizeof OPS[0]; i++)
    *handled = strcmp(t, OPS[i]) == 0;
  if (!*handled)
    return NULL;
  size_t n = op->num_operands < 2 ? op->num_operands : 2;
  eddy_value_t *x[2] = {NULL, NULL};
  eddy_dtype_t dt = EDDY_DT_F64;
  for (size_t i = 0; i < n; i++) {
    eddy_value_t *v = tfl_in(z, op, i);
    if (v->type->kind != EDDY_TYPE_TENSOR ||
        !eddy_dtype_is_float(v->type->dtype))
      return eddy_tfl_error(op, "operand %zu must be a float tensor, not %s",
                            i,
                            v->type->kind == EDDY_TYPE_TENSOR
                                ? eddy_dtype_name(v->type->dtype)
                                : "a list or token");
    dt = v->type->dtype;
    EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, v, EDDY_DT_F64, &x[i]));
  }
  sx_t sx = {z, op, NULL}, *s = &sx;
  eddy_value_t *r = NULL;
  if (strcmp(t, "Lgamma") == 0)
    r = lgamma_of(s, x[0]);
  else if (strcmp(t, "Digamma") == 0)
    r = digamma_of(s, x[0]);
  else if (strcmp(t, "Polygamma") == 0)
    r = polygamma_of(s, x[0], x[1]);
  else
    r = zeta_of(s, x[0], x[1]);
  EDDY_RETURN_IF_ERROR(s->err);
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, r, dt, &r));
  tfl_out1(z, op, r);
  return NULL;
}

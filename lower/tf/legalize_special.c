/// legalize-tf: TensorFlow's special functions as compositions of core ops,
/// the way XLA expands them rather than as core ops of their own (the
/// evaluator, both backends, the dataflow interpreter and autodiff take
/// them as they are): the gamma family, Lgamma, Digamma, Polygamma and
/// Zeta (the Hurwitz zeta function); the normal quantile Ndtri and Erfinv;
/// the modified Bessel functions BesselI0, BesselI1 and their
/// exponentially scaled BesselI0e, BesselI1e; the regularized incomplete
/// gamma functions Igamma, Igammac and the incomplete beta function
/// Betainc, whose series and continued fractions are unrolled to a fixed
/// number of terms (docs/import.md gives the domain they cover).
///
/// Each is computed in f64 whatever the operands' float dtype and rounded
/// to it once at the end, so that an f32 result is TensorFlow's (which
/// calls the C library's lgammaf and Eigen's f32 series) to within a unit
/// or two in the last place. The special values are TensorFlow's, found by
/// running its kernels: lgamma is +inf at the poles and at +-inf; digamma is
/// NaN at the poles and at -inf; zeta(s, q) is +inf at s = 1, NaN for
/// s < 1 and for negative q with a non-integer s, and at a nonpositive
/// integer q +inf for an even s and NaN for any other; polygamma(n, x) is
/// NaN unless n is a nonnegative integer. Those of the others are given
/// with them below.
///
/// Every branch a select masks out is computed on a safe operand (the
/// "double where" of legalize_math.c), so that its derivative stays finite
/// where the branch is not taken.
#include "lower/tf/tf_lower_internal.h"

#include <math.h>
#include <string.h>

static const char *const OPS[] = {
    "Lgamma", "Digamma",   "Polygamma", "Zeta",     "Erfinv",
    "Ndtri",  "BesselI0e", "BesselI1e", "BesselI0", "BesselI1",
    "Igamma", "Igammac",   "Betainc"};

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

/// ---- ndtri and erfinv ----------------------------------------------------

/// Rational approximations of the normal quantile from the Cephes library
/// (S. L. Moshier, Methods and Programs for Mathematical Functions), the
/// algorithm TensorFlow's Ndtri runs: about 1e-16 relative over the whole
/// f64 range. Central: ndtri(1/2 + w) = sqrt(2 pi) (w + w^3 R(w^2)/S(w^2))
/// for |w| <= 1/2 - exp(-2). Tails, q = min(p, 1 - p) < exp(-2): with
/// t = sqrt(-2 log q), ndtri = -(t - log(t)/t - P(1/t)/(t Q(1/t))), one
/// rational function for t < 8 and another above.
static const double NDTRI_P0[5] = {
    -5.99633501014107895267E1, 9.80010754185999661536E1,
    -5.66762857469070293439E1, 1.39312609387279679503E1,
    -1.23916583867381258016E0};
static const double NDTRI_Q0[9] = {1.0,
                                   1.95448858338141759834E0,
                                   4.67627912898881538453E0,
                                   8.63602421390890590575E1,
                                   -2.25462687854119370527E2,
                                   2.00260212380060660359E2,
                                   -8.20372256168333339912E1,
                                   1.59056225126211695515E1,
                                   -1.18331621121330003142E0};
static const double NDTRI_P1[9] = {
    4.05544892305962419923E0,   3.15251094599893866154E1,
    5.71628192246421288162E1,   4.40805073893200834700E1,
    1.46849561928858024014E1,   2.18663306850790267539E0,
    -1.40256079171354495875E-1, -3.50424626827848203418E-2,
    -8.57456785154685413611E-4};
static const double NDTRI_Q1[9] = {1.0,
                                   1.57799883256466749731E1,
                                   4.53907635128879210584E1,
                                   4.13172038254672030440E1,
                                   1.50425385692907503408E1,
                                   2.50464946208309415979E0,
                                   -1.42182922854787788574E-1,
                                   -3.80806407691578277194E-2,
                                   -9.33259480895457427372E-4};
static const double NDTRI_P2[9] = {
    3.23774891776946035970E0,  6.91522889068984211695E0,
    3.93881025292474443415E0,  1.33303460815807542389E0,
    2.01485389549179081538E-1, 1.23716634817820021358E-2,
    3.01581553508235416007E-4, 2.65806974686737550832E-6,
    6.23974539184983293730E-9};
static const double NDTRI_Q2[9] = {1.0,
                                   6.02427039364742014255E0,
                                   3.67983563856160859403E0,
                                   1.37702099489081330271E0,
                                   2.16236993594496635890E-1,
                                   1.34204006088543189037E-2,
                                   3.28014464682127739104E-4,
                                   2.89247864745380683936E-6,
                                   6.79019408009981274425E-9};

/// c[0] x^(n-1) + c[1] x^(n-2) + ... + c[n-1], by Horner's rule.
static eddy_value_t *poly(sx_t *s, eddy_value_t *x, const double *c, int n) {
  eddy_value_t *h = k(s, c[0]);
  for (int i = 1; i < n; i++)
    h = ADD(MUL(h, x), k(s, c[i]));
  return h;
}

/// The normal quantile from its two exact forms: w = p - 1/2 (read where
/// |w| < 1/2 - exp(-2)) and q = min(p, 1 - p) (read elsewhere), so that
/// neither the center nor the tails lose digits to a rounded p; `upper`
/// is true where p > 1/2. The caller sets the values at q = 0 and off
/// the domain.
static eddy_value_t *ndtri_parts(sx_t *s, eddy_value_t *w, eddy_value_t *q,
                                 eddy_value_t *upper) {
  static const double E2 = 0.13533528323661269189; // exp(-2)
  eddy_value_t *central = LT(op1(s, "core.abs", w), k(s, 0.5 - E2));
  eddy_value_t *wc = sel(s, central, w, k(s, 0));
  eddy_value_t *w2 = MUL(wc, wc);
  eddy_value_t *r =
      DIV(MUL(w2, poly(s, w2, NDTRI_P0, 5)), poly(s, w2, NDTRI_Q0, 9));
  eddy_value_t *xc = MUL(ADD(wc, MUL(wc, r)), k(s, 2.50662827463100050242));
  // The tails, on q in (0, exp(-2)] (a safe 0.1 elsewhere).
  eddy_value_t *qs =
      sel(s, AND(LT(k(s, 0), q), op1(s, "core.not", central)), q, k(s, 0.1));
  eddy_value_t *t = op1(s, "core.sqrt", MUL(k(s, -2), LOG(qs)));
  eddy_value_t *x0 = SUB(t, DIV(LOG(t), t));
  eddy_value_t *near = LT(t, k(s, 8));
  eddy_value_t *z = DIV(k(s, 1), t);
  eddy_value_t *x1 =
      sel(s, near, DIV(poly(s, z, NDTRI_P1, 9), poly(s, z, NDTRI_Q1, 9)),
          DIV(poly(s, z, NDTRI_P2, 9), poly(s, z, NDTRI_Q2, 9)));
  eddy_value_t *xt = SUB(x0, MUL(z, x1));
  return sel(s, central, xc, sel(s, upper, xt, op1(s, "core.neg", xt)));
}

/// ndtri(p): -inf at 0, +inf at 1, NaN outside [0, 1] and at NaN.
static eddy_value_t *ndtri_of(sx_t *s, eddy_value_t *p) {
  eddy_value_t *half = k(s, 0.5), *one = k(s, 1), *zero = k(s, 0);
  eddy_value_t *upper = LT(half, p);
  eddy_value_t *q = sel(s, upper, SUB(one, p), p);
  eddy_value_t *r = ndtri_parts(s, SUB(p, half), q, upper);
  r = sel(s, EQ(p, zero), k(s, -INFINITY), r);
  r = sel(s, EQ(p, one), k(s, INFINITY), r);
  return sel(s, AND(LE(zero, p), LE(p, one)), r, k(s, NAN)); // NaN passes
}

/// erfinv(x) = ndtri((1 + x)/2) / sqrt(2), with w = x/2 and
/// q = (1 - |x|)/2 exact: +-inf at +-1, NaN outside [-1, 1].
static eddy_value_t *erfinv_of(sx_t *s, eddy_value_t *x) {
  eddy_value_t *one = k(s, 1), *half = k(s, 0.5);
  eddy_value_t *ax = op1(s, "core.abs", x);
  eddy_value_t *upper = LT(k(s, 0), x);
  eddy_value_t *r =
      ndtri_parts(s, MUL(x, half), MUL(SUB(one, ax), half), upper);
  r = MUL(r, k(s, 0.70710678118654752440));
  r = sel(s, EQ(ax, one), sel(s, upper, k(s, INFINITY), k(s, -INFINITY)), r);
  return sel(s, LE(ax, one), r, k(s, NAN)); // NaN passes
}

/// ---- Modified Bessel functions of the first kind ------------------------

/// Chebyshev expansions from the Cephes library, TensorFlow's algorithm
/// (about 1e-15 relative): exp(-x) I0(x) and exp(-x) I1(x)/x on [0, 8]
/// in y = x/2 - 2, exp(-x) sqrt(x) I0(x) and exp(-x) sqrt(x) I1(x) above
/// in y = 32/x - 2.
static const double I0_A[30] = {
    -4.41534164647933937950E-18, 3.33079451882223809783E-17,
    -2.43127984654795469359E-16, 1.71539128555513303061E-15,
    -1.16853328779934516808E-14, 7.67618549860493561688E-14,
    -4.85644678311192946090E-13, 2.95505266312963983461E-12,
    -1.72682629144155570723E-11, 9.67580903537323691224E-11,
    -5.18979560163526290666E-10, 2.65982372468238665035E-9,
    -1.30002500998624804212E-8,  6.04699502254191894932E-8,
    -2.67079385394061173391E-7,  1.11738753912010371815E-6,
    -4.41673835845875056359E-6,  1.64484480707288970893E-5,
    -5.75419501008210370398E-5,  1.88502885095841655729E-4,
    -5.76375574538582365885E-4,  1.63947561694133579842E-3,
    -4.32430999505057594430E-3,  1.05464603945949983183E-2,
    -2.37374148058994688156E-2,  4.93052842396707084878E-2,
    -9.49010970480476444210E-2,  1.71620901522208775349E-1,
    -3.04682672343198398683E-1,  6.76795274409476084995E-1};
static const double I0_B[25] = {
    -7.23318048787475395456E-18, -4.83050448594418207126E-18,
    4.46562142029675999901E-17,  3.46122286769746109310E-17,
    -2.82762398051658348494E-16, -3.42548561967721913462E-16,
    1.77256013305652638360E-15,  3.81168066935262242075E-15,
    -9.55484669882830764870E-15, -4.15056934728722208663E-14,
    1.54008621752140982691E-14,  3.85277838274214270114E-13,
    7.18012445138366623367E-13,  -1.79417853150680611778E-12,
    -1.32158118404477131188E-11, -3.14991652796324136454E-11,
    1.18891471078464383424E-11,  4.94060238822496958910E-10,
    3.39623202570838634515E-9,   2.26666899049817806459E-8,
    2.04891858946906374183E-7,   2.89137052083475648297E-6,
    6.88975834691682398426E-5,   3.36911647825569408990E-3,
    8.04490411014108831608E-1};
static const double I1_A[29] = {
    2.77791411276104639959E-18, -2.11142121435816608115E-17,
    1.55363195773620046921E-16, -1.10559694773538630805E-15,
    7.60068429473540693410E-15, -5.04218550472791168711E-14,
    3.22379336594557470981E-13, -1.98397439776494371520E-12,
    1.17361862988909016308E-11, -6.66348972350202774223E-11,
    3.62559028155211703701E-10, -1.88724975172282928790E-9,
    9.38153738649577178388E-9,  -4.44505912879632808065E-8,
    2.00329475355213526229E-7,  -8.56872026469545474066E-7,
    3.47025130813767847674E-6,  -1.32731636560394358279E-5,
    4.78156510755005422638E-5,  -1.61760815825896745588E-4,
    5.12285956168575772895E-4,  -1.51357245063125314899E-3,
    4.15642294431288815669E-3,  -1.05640848946261981558E-2,
    2.47264490306265168283E-2,  -5.29459812080949914269E-2,
    1.02643658689847095384E-1,  -1.76416518357834055153E-1,
    2.52587186443633654823E-1};
static const double I1_B[25] = {
    7.51729631084210481353E-18,  4.41434832307170791151E-18,
    -4.65030536848935832153E-17, -3.20952592199342395980E-17,
    2.96262899764595013876E-16,  3.30820231092092828324E-16,
    -1.88035477551078244854E-15, -3.81440307243700780478E-15,
    1.04202769841288027642E-14,  4.27244001671195135429E-14,
    -2.10154184277266431302E-14, -4.08355111109219731823E-13,
    -7.19855177624590851209E-13, 2.03562854414708950722E-12,
    1.41258074366137813316E-11,  3.25260358301548823856E-11,
    -1.89749581235054123450E-11, -5.58974346219658380687E-10,
    -3.83538038596423702205E-9,  -2.63146884688951950684E-8,
    -2.51223623787020892529E-7,  -3.88256480887769039346E-6,
    -1.10588938762623716291E-4,  -9.76109749136146840777E-3,
    7.78576235018280120474E-1};

/// The Chebyshev series sum' c_i T_i(y/2), Clenshaw's recurrence in the
/// Cephes convention (c[0] the highest order, half the last term).
static eddy_value_t *chebyshev(sx_t *s, eddy_value_t *y, const double *c,
                               int n) {
  eddy_value_t *b0 = k(s, c[0]), *b1 = k(s, 0), *b2 = NULL;
  for (int i = 1; i < n; i++) {
    b2 = b1;
    b1 = b0;
    b0 = ADD(SUB(MUL(y, b1), b2), k(s, c[i]));
  }
  return MUL(k(s, 0.5), SUB(b0, b2));
}

/// exp(-|x|) I_n(|x|) for n = 0 or 1 (the sign of I1 is the caller's).
static eddy_value_t *bessel_ie(sx_t *s, eddy_value_t *ax, int order) {
  eddy_value_t *small = LE(ax, k(s, 8));
  eddy_value_t *xs = sel(s, small, ax, k(s, 1));
  eddy_value_t *xl = sel(s, small, k(s, 9), ax);
  eddy_value_t *lo = chebyshev(s, SUB(MUL(xs, k(s, 0.5)), k(s, 2)),
                               order ? I1_A : I0_A, order ? 29 : 30);
  if (order)
    lo = MUL(lo, xs);
  eddy_value_t *hi =
      chebyshev(s, SUB(DIV(k(s, 32), xl), k(s, 2)), order ? I1_B : I0_B, 25);
  hi = DIV(hi, op1(s, "core.sqrt", xl));
  return sel(s, small, lo, hi);
}

/// BesselI0e, BesselI1e and BesselI0, BesselI1, the latter exp|x| times
/// the former as TensorFlow computes them: inf once exp|x| overflows
/// (|x| > 709.78 in f64), NaN at +-inf (inf times 0). I1 and I1e are odd,
/// the others even.
static eddy_value_t *bessel_of(sx_t *s, eddy_value_t *x, int order,
                               bool scaled) {
  eddy_value_t *ax = op1(s, "core.abs", x);
  eddy_value_t *r = bessel_ie(s, ax, order);
  if (!scaled)
    r = MUL(r, op1(s, "core.exp", ax));
  return order ? sel(s, LT(x, k(s, 0)), op1(s, "core.neg", r), r) : r;
}

/// ---- Counted loops ---------------------------------------------------------

enum { SX_LOOP_MAX = 4 };

/// One iteration: the iteration number i (an f64 scalar, 0, 1, ...) and
/// the loop values v[0..nv) in, their next values out.
typedef void (*sx_body_t)(sx_t *s, eddy_value_t *i, eddy_value_t *const *v,
                          eddy_value_t **next, const void *user);

/// n iterations of body over the loop values v[0..nv) (tensors of one
/// shape, replaced by their final values): a ctl.while, not n unrolled
/// copies, so that a series of a hundred terms stays a few ops for the
/// backends and autodiff.
static void sx_loop(sx_t *s, int n, eddy_value_t **v, size_t nv,
                    sx_body_t body, const void *user) {
  eddy_value_t *ops[SX_LOOP_MAX + 1];
  const eddy_type_t *types[SX_LOOP_MAX + 1];
  ops[0] = k(s, 0);
  for (size_t i = 0; i < nv; i++)
    ops[i + 1] = v[i];
  for (size_t i = 0; i <= nv; i++)
    if (!ops[i])
      return;
  for (size_t i = 0; i <= nv; i++)
    types[i] = ops[i]->type;
  eddy_tfl_t *z = s->z;
  eddy_named_attr_t pa = eddy_tfl_int_attr(z, "parallel_iterations", 1);
  eddy_op_state_t st = {.name = "ctl.while",
                        .operands = ops,
                        .num_operands = nv + 1,
                        .attrs = &pa,
                        .num_attrs = 1,
                        .result_types = types,
                        .num_results = nv + 1,
                        .num_regions = 2,
                        .loc = s->op->loc};
  eddy_op_t *w = NULL, *term = NULL;
  z->b.loc = s->op->loc;
  if ((s->err = eddy_ir_build(&z->b, &st, &w)))
    return;
  eddy_block_t *cb = eddy_ir_region_add_block(&w->regions[0]);
  eddy_block_t *bb = eddy_ir_region_add_block(&w->regions[1]);
  for (size_t i = 0; i <= nv; i++) {
    eddy_ir_block_add_arg(cb, types[i]);
    eddy_ir_block_add_arg(bb, types[i]);
  }
  eddy_builder_t saved = z->b;
  eddy_ir_builder_set_end(&z->b, cb);
  eddy_value_t *c = LT(cb->args[0], k(s, n));
  if (!s->err)
    s->err = eddy_tfl_build_typed(z, s->op, "ctl.condition", &c, 1, NULL, 0,
                                  NULL, 0, &term);
  eddy_ir_builder_set_end(&z->b, bb);
  eddy_value_t *next[SX_LOOP_MAX + 1] = {NULL};
  next[0] = ADD(bb->args[0], k(s, 1));
  if (!s->err)
    body(s, bb->args[0], &bb->args[1], &next[1], user);
  for (size_t i = 1; !s->err && i <= nv; i++)
    if (!next[i] || next[i]->type != types[i])
      s->err = eddy_tfl_error(s->op, "internal: loop value %zu changes type",
                              i - 1);
  if (!s->err)
    s->err = eddy_tfl_build_typed(z, s->op, "ctl.yield", next, nv + 1, NULL,
                                  0, NULL, 0, &term);
  z->b = saved;
  for (size_t i = 0; !s->err && i < nv; i++)
    v[i] = eddy_ir_op_result(w, (uint32_t)i + 1);
}

/// ---- The regularized incomplete gamma function -------------------------

/// Terms of the series and of the continued fractions (BETAINC_CF pairs),
/// each a ctl.while: Igamma to about 2e-12 relative for a, x up to 1000,
/// Betainc to 3e-11 for a, b up to 300 (docs/import.md).
enum { IGAMMA_SERIES = 256, IGAMMA_CF = 128, BETAINC_CF = 64 };

/// lgamma(v) for v > 0 as lgamma(v + 1) - log v, which the Lanczos sum
/// takes without a reflection.
static eddy_value_t *lgamma_pos(sx_t *s, eddy_value_t *v) {
  return SUB(lgamma_lanczos(s, ADD(v, k(s, 1))), LOG(v));
}

/// The series' step: (a + n, x^n / ((a+1) ... (a+n)), the sum to n) from
/// those at n - 1; user: x.
static void igamma_series_step(sx_t *s, eddy_value_t *i,
                               eddy_value_t *const *v, eddy_value_t **next,
                               const void *user) {
  (void)i;
  eddy_value_t *x = (eddy_value_t *)user;
  next[0] = ADD(v[0], k(s, 1));
  next[1] = MUL(v[1], DIV(x, next[0]));
  next[2] = ADD(v[2], next[1]);
}

/// The continued fraction's step, from its last term down: with
/// j = IGAMMA_CF - i, d = x - a + 2j - 1 - j (j - a) / d; user: {x - a, a}.
static void igamma_cf_step(sx_t *s, eddy_value_t *i, eddy_value_t *const *v,
                           eddy_value_t **next, const void *user) {
  eddy_value_t *const *xa = user;
  eddy_value_t *j = SUB(k(s, IGAMMA_CF), i);
  eddy_value_t *an = MUL(j, SUB(j, xa[1]));
  next[0] = SUB(ADD(xa[0], SUB(MUL(k(s, 2), j), k(s, 1))), DIV(an, v[0]));
}

/// P(a, x) and Q(a, x) = 1 - P(a, x): for x < a + 1 the series
/// P = x^a e^-x / Gamma(a + 1) sum_n x^n / ((a + 1) ... (a + n)), else the
/// continued fraction Q = x^a e^-x / Gamma(a) / (x + 1 - a - 1 (1 - a) /
/// (x + 3 - a - 2 (2 - a) / ...)), evaluated from its last term.
static eddy_value_t *igamma_of(sx_t *s, eddy_value_t *a, eddy_value_t *x,
                               bool upper) {
  eddy_value_t *zero = k(s, 0), *one = k(s, 1), *inf = k(s, INFINITY);
  eddy_value_t *ok =
      AND(AND(LT(zero, a), LT(a, inf)), AND(LT(zero, x), LT(x, inf)));
  eddy_value_t *series = LT(x, ADD(a, one));
  eddy_value_t *use_s = AND(ok, series);
  eddy_value_t *use_c = AND(ok, op1(s, "core.not", series));
  // The series, on a safe (1, 1/2) where it is not read.
  eddy_value_t *as = sel(s, use_s, a, one), *xs = sel(s, use_s, x, k(s, 0.5));
  eddy_value_t *sv[3] = {as, sel(s, use_s, one, one), NULL};
  sv[2] = sv[1];
  sx_loop(s, IGAMMA_SERIES - 1, sv, 3, igamma_series_step, xs);
  eddy_value_t *sum = sv[2];
  eddy_value_t *ls =
      SUB(SUB(MUL(as, LOG(xs)), xs), lgamma_lanczos(s, ADD(as, one)));
  eddy_value_t *ps = MUL(op1(s, "core.exp", ls), sum);
  // The continued fraction, on a safe (1, 3).
  eddy_value_t *ac = sel(s, use_c, a, one), *xc = sel(s, use_c, x, k(s, 3));
  eddy_value_t *xa = SUB(xc, ac);
  eddy_value_t *cv[1] = {ADD(xa, k(s, 2 * IGAMMA_CF + 1))};
  eddy_value_t *const cfx[2] = {xa, ac};
  sx_loop(s, IGAMMA_CF, cv, 1, igamma_cf_step, cfx);
  eddy_value_t *d = cv[0];
  eddy_value_t *lc = SUB(SUB(MUL(ac, LOG(xc)), xc), lgamma_pos(s, ac));
  eddy_value_t *qc = DIV(op1(s, "core.exp", lc), d);
  eddy_value_t *p = sel(s, series, ps, SUB(one, qc));
  eddy_value_t *q = sel(s, series, SUB(one, ps), qc);
  eddy_value_t *r = upper ? q : p;
  // TensorFlow's special values: P is 0 at x = 0 whatever a, then NaN for
  // x < 0, a <= 0 or a NaN; at a = inf P = 0 and Q = 1, but Q = 0 at
  // x = inf first.
  eddy_value_t *bad = OR(OR(LT(x, zero), LE(a, zero)),
                         OR(op2(s, "core.ne", a, a), op2(s, "core.ne", x, x)));
  eddy_value_t *ainf = EQ(a, inf), *xinf = EQ(x, inf), *x0 = EQ(x, zero);
  if (upper) {
    r = sel(s, x0, one, r);
    r = sel(s, ainf, one, r);
    r = sel(s, xinf, zero, r);
    return sel(s, bad, k(s, NAN), r);
  }
  r = sel(s, xinf, one, r);
  r = sel(s, ainf, zero, r);
  r = sel(s, bad, k(s, NAN), r);
  return sel(s, x0, zero, r);
}

/// ---- The regularized incomplete beta function --------------------------

/// Two steps of the continued fraction, from its last term down: with
/// m = BETAINC_CF - i, t = 1 + d_2m / t, then t = 1 + d_2m-1 / t;
/// user: {a, b, x}.
static void betainc_step(sx_t *s, eddy_value_t *i, eddy_value_t *const *v,
                         eddy_value_t **next, const void *user) {
  eddy_value_t *const *abx = user;
  eddy_value_t *a = abx[0], *b = abx[1], *x = abx[2], *one = k(s, 1);
  eddy_value_t *m = SUB(k(s, BETAINC_CF), i);
  eddy_value_t *am = ADD(a, MUL(k(s, 2), m)); // a + 2m
  eddy_value_t *d = DIV(MUL(MUL(m, SUB(b, m)), x), MUL(SUB(am, one), am));
  eddy_value_t *t = ADD(one, DIV(d, v[0]));
  eddy_value_t *m1 = SUB(m, one);
  eddy_value_t *am1 = SUB(am, k(s, 2)); // a + 2(m - 1)
  d = DIV(MUL(MUL(ADD(a, m1), ADD(ADD(a, b), m1)), x), MUL(am1, ADD(am1, one)));
  next[0] = ADD(one, DIV(op1(s, "core.neg", d), t));
}

/// I_x(a, b) by the continued fraction x^a (1-x)^b / (a B(a, b)) /
/// (1 + d1 / (1 + d2 / ...)), d_{2m+1} = -(a+m)(a+b+m) x / ((a+2m)(a+2m+1)),
/// d_{2m} = m (b-m) x / ((a+2m-1)(a+2m)), evaluated from its last term,
/// for x < (a+1)/(a+b+2), else as 1 - I_{1-x}(b, a). NaN for a or b <= 0
/// or x outside [0, 1]; 0 at x = 0, 1 at x = 1.
static eddy_value_t *betainc_of(sx_t *s, eddy_value_t *a, eddy_value_t *b,
                                eddy_value_t *x) {
  eddy_value_t *zero = k(s, 0), *one = k(s, 1), *inf = k(s, INFINITY);
  eddy_value_t *ab_ok =
      AND(AND(LT(zero, a), LT(a, inf)), AND(LT(zero, b), LT(b, inf)));
  eddy_value_t *ok = AND(ab_ok, AND(LT(zero, x), LT(x, one)));
  eddy_value_t *swap = LT(DIV(ADD(a, one), ADD(ADD(a, b), k(s, 2))), x);
  // The operands of the fraction (a safe (1, 1, 1/4) where not read).
  eddy_value_t *a2 = sel(s, ok, sel(s, swap, b, a), one);
  eddy_value_t *b2 = sel(s, ok, sel(s, swap, a, b), one);
  eddy_value_t *x2 = sel(s, ok, sel(s, swap, SUB(one, x), x), k(s, 0.25));
  eddy_value_t *ab = ADD(a2, b2);
  eddy_value_t *tv[1] = {sel(s, ok, one, one)};
  eddy_value_t *const abx[3] = {a2, b2, x2};
  sx_loop(s, BETAINC_CF, tv, 1, betainc_step, abx);
  eddy_value_t *t = tv[0];
  eddy_value_t *lbeta =
      SUB(ADD(lgamma_pos(s, a2), lgamma_pos(s, b2)), lgamma_pos(s, ab));
  eddy_value_t *lf =
      SUB(ADD(MUL(a2, LOG(x2)),
              MUL(b2, op1(s, "core.log1p", op1(s, "core.neg", x2)))),
          lbeta);
  eddy_value_t *f = DIV(DIV(op1(s, "core.exp", lf), a2), t);
  eddy_value_t *r = sel(s, swap, SUB(one, f), f);
  r = sel(s, AND(ab_ok, EQ(x, zero)), zero, r);
  r = sel(s, AND(ab_ok, EQ(x, one)), one, r);
  eddy_value_t *valid = AND(ab_ok, AND(LE(zero, x), LE(x, one)));
  return sel(s, valid, r, k(s, NAN));
}

/// ---- The rules ----------------------------------------------------------

/// Betainc's operands: TensorFlow's kernel takes a, b and x of one shape,
/// or scalars among them, and broadcasts nothing else.
static eddy_status_t betainc_shapes(eddy_tfl_t *z, const eddy_op_t *op) {
  const eddy_type_t *shaped = NULL;
  for (size_t i = 0; i < 3; i++) {
    const eddy_type_t *ty = tfl_in(z, op, i)->type;
    if (ty->rank == 0)
      continue;
    if (shaped && ty->rank != EDDY_RANK_UNKNOWN &&
        shaped->rank != EDDY_RANK_UNKNOWN &&
        !eddy_ir_type_is_compatible(
            shaped, eddy_ir_type_with_dtype(z->ctx, ty, shaped->dtype))) {
      eddy_buf_t b1, b2;
      eddy_buf_init(&b1);
      eddy_buf_init(&b2);
      eddy_ir_type_print(shaped, &b1);
      eddy_ir_type_print(ty, &b2);
      eddy_status_t st = eddy_tfl_error(
          op, "a, b and x must have one shape or be scalars, not %s and %s",
          b1.data, b2.data);
      eddy_buf_destroy(&b1);
      eddy_buf_destroy(&b2);
      return st;
    }
    shaped = shaped ? shaped : ty;
  }
  return NULL;
}

eddy_status_t eddy_tfl_lower_special_op(eddy_tfl_t *z, const eddy_op_t *op,
                                        bool *handled) {
  const char *t = op->name->str + 3;
  *handled = false;
  for (size_t i = 0; !*handled && i < sizeof OPS / sizeof OPS[0]; i++)
    *handled = strcmp(t, OPS[i]) == 0;
  if (!*handled)
    return NULL;
  size_t n = op->num_operands < 3 ? op->num_operands : 3;
  eddy_value_t *x[3] = {NULL, NULL, NULL};
  eddy_dtype_t dt = EDDY_DT_F64;
  for (size_t i = 0; i < n; i++) {
    eddy_value_t *v = tfl_in(z, op, i);
    if (v->type->kind != EDDY_TYPE_TENSOR ||
        !eddy_dtype_is_float(v->type->dtype))
      return eddy_tfl_error(op, "operand %zu must be a float tensor, not %s", i,
                            v->type->kind == EDDY_TYPE_TENSOR
                                ? eddy_dtype_name(v->type->dtype)
                                : "a list or token");
    dt = v->type->dtype;
    EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, v, EDDY_DT_F64, &x[i]));
  }
  if (strcmp(t, "Betainc") == 0)
    EDDY_RETURN_IF_ERROR(betainc_shapes(z, op));
  sx_t sx = {z, op, NULL}, *s = &sx;
  eddy_value_t *r = NULL;
  if (strcmp(t, "Lgamma") == 0)
    r = lgamma_of(s, x[0]);
  else if (strcmp(t, "Digamma") == 0)
    r = digamma_of(s, x[0]);
  else if (strcmp(t, "Polygamma") == 0)
    r = polygamma_of(s, x[0], x[1]);
  else if (strcmp(t, "Zeta") == 0)
    r = zeta_of(s, x[0], x[1]);
  else if (strcmp(t, "Erfinv") == 0)
    r = erfinv_of(s, x[0]);
  else if (strcmp(t, "Ndtri") == 0)
    r = ndtri_of(s, x[0]);
  else if (strncmp(t, "BesselI", 7) == 0)
    r = bessel_of(s, x[0], t[7] == '1', t[8] == 'e');
  else if (strcmp(t, "Igamma") == 0 || strcmp(t, "Igammac") == 0)
    r = igamma_of(s, x[0], x[1], t[6] == 'c');
  else
    r = betainc_of(s, x[0], x[1], x[2]);
  EDDY_RETURN_IF_ERROR(s->err);
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, r, dt, &r));
  tfl_out1(z, op, r);
  return NULL;
}

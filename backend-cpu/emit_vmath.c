/// exp, expm1, log, tanh and sigmoid of f32 as inline arith ops, for the
/// CPU target's host code. math.exp and its siblings become scalar libm
/// calls (convert-math-to-libm), and LLVM does not vectorize a loop that
/// calls them; these forms are plain arithmetic, selects and bit
/// manipulation, so the loops that use them vectorize.
///
/// The methods are the textbook ones (J.-M. Muller, "Elementary Functions:
/// Algorithms and Implementation", range reduction and polynomial
/// approximation): exp and expm1 reduce x = n ln2 + r with |r| <= ln2/2
/// (ln2 in two parts, Cody and Waite) and build 2^n from its bits; log
/// takes the exponent from the bits and approximates log1p of the mantissa
/// around 1; tanh and sigmoid are written with expm1 and exp. The
/// polynomials are minimax fits (relative error) made for eddy with
/// numpy; each coefficient is the f32 nearest the fit. docs/cpu.md,
/// "Numerics", gives the error bounds, which tests/unit/cpu/test_cpu_vmath.c
/// checks over the whole f32 range.
#include "backend-cpu/emit_elem.h"

#include <math.h>

bool cpu_vmath_applies(const cpu_emit_t *e, eddy_dtype_t dt) {
  return !e->tgt->kernels && e->kernel_depth == 0 && !e->opts->libm_math &&
         (dt == EDDY_DT_F32 || is_half(dt));
}

static int bitcast(cpu_emit_t *e, int v, const char *from, const char *to) {
  int t = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.bitcast %%t%d : %s to %s\n", t, v, from, to);
  return t;
}

static int fadd(cpu_emit_t *e, int a, int b) {
  return op2(e, "arith.addf", a, b, "f32");
}

static int fsub(cpu_emit_t *e, int a, int b) {
  return op2(e, "arith.subf", a, b, "f32");
}

static int fmul(cpu_emit_t *e, int a, int b) {
  return op2(e, "arith.mulf", a, b, "f32");
}

static int f32c(cpu_emit_t *e, double v) { return fconst(e, "f32", v); }

static int i32c(cpu_emit_t *e, int64_t v) { return iconst(e, "i32", v); }

/// c[0] + x (c[1] + x (... c[n-1])), Horner's scheme.
static int horner(cpu_emit_t *e, int x, const double *c, int n) {
  int p = f32c(e, c[n - 1]);
  for (int i = n - 2; i >= 0; i--)
    p = fadd(e, fmul(e, p, x), f32c(e, c[i]));
  return p;
}

/// x limited to [lo, hi] (to [lo, inf) when `below_only`: x is known not
/// to pass hi); NaN stays NaN.
static int clamp(cpu_emit_t *e, int x, double lo, double hi, bool below_only) {
  if (!below_only) {
    int h = f32c(e, hi);
    x = sel(e, cmp(e, "arith.cmpf", "ogt", x, h, "f32"), h, x, "f32");
  }
  int l = f32c(e, lo);
  return sel(e, cmp(e, "arith.cmpf", "olt", x, l, "f32"), l, x, "f32");
}

/// 2^n for an i32 n in [-126, 127], from its bits.
static int pow2(cpu_emit_t *e, int n) {
  int b = op2(e, "arith.shli", op2(e, "arith.addi", n, i32c(e, 127), "i32"),
              i32c(e, 23), "i32");
  return bitcast(e, b, "i32", "f32");
}

/// r = x - n ln2 with n = round(x / ln2), for |x| <= 150; *out_n gets n as
/// i32. n comes from adding 1.5 * 2^23, which leaves it in the low bits of
/// the sum (rounded to nearest); ln2 is split into a part with 15
/// significant bits, whose product with n is exact, and the rest.
static int reduce_ln2(cpu_emit_t *e, int x, int *out_n) {
  int magic = f32c(e, 0x1.8p23);
  int k = fadd(e, fmul(e, x, f32c(e, 0x1.715476p0)), magic);
  int nf = fsub(e, k, magic);
  *out_n = op2(e, "arith.subi", bitcast(e, k, "f32", "i32"),
               bitcast(e, magic, "f32", "i32"), "i32");
  int r = fsub(e, x, fmul(e, nf, f32c(e, 0x1.62e4p-1)));
  return fsub(e, r, fmul(e, nf, f32c(e, 0x1.7f7d1cp-20)));
}

/// expm1(r) for |r| <= ln2/2: r + r^2 P(r), P a degree-5 minimax fit of
/// (expm1(r) - r) / r^2 (relative error 2.4e-10 of the result; degree 4,
/// at 1.3e-8, took exp past 1 ulp).
static int expm1_reduced(cpu_emit_t *e, int r) {
  static const double k_p[] = {0x1p-1,        0x1.555554p-3,  0x1.5554b0p-5,
                               0x1.11118ap-7, 0x1.6d723ep-10, 0x1.a032c4p-13};
  int p = horner(e, r, k_p, 6);
  return fadd(e, fmul(e, fmul(e, r, r), p), r);
}

/// NaN where x is NaN, else v.
static int keep_nan(cpu_emit_t *e, int x, int v) {
  return sel(e, cmp(e, "arith.cmpf", "uno", x, x, "f32"), x, v, "f32");
}

/// exp(x) = 2^n exp(r). x is limited to [-104, 89] first: exp(89)
/// overflows to inf and exp(-104) is below half the least subnormal, so the
/// limits keep the results of larger |x|. 2^n is applied as two factors
/// 2^(n>>1) and 2^(n - (n>>1)), each a normal number for n in [-150, 128];
/// the first product is exact, so a subnormal result is rounded once.
/// `nonpos`: x is known to be <= 0 or NaN (sigmoid's -|x|), so the upper
/// limit cannot apply, and a NaN needs no select: it goes through r and p
/// into the result (r is NaN, whatever n its bits give).
static int exp_of(cpu_emit_t *e, int x, bool nonpos) {
  int n, r = reduce_ln2(e, clamp(e, x, -104.0, 89.0, nonpos), &n);
  int p = fadd(e, f32c(e, 1.0), expm1_reduced(e, r));
  int h = op2(e, "arith.shrsi", n, i32c(e, 1), "i32");
  int s1 = pow2(e, h), s2 = pow2(e, op2(e, "arith.subi", n, h, "i32"));
  int v = fmul(e, fmul(e, p, s1), s2);
  return nonpos ? v : keep_nan(e, x, v);
}

int cpu_vmath_exp(cpu_emit_t *e, int x) { return exp_of(e, x, false); }

/// expm1(x) = 2^n expm1(r) + (2^n - 1), computed as 2 (s q + (s - 1/2))
/// with s = 2^(n-1), so that n = 128 (just below the overflow to inf)
/// needs no 2^128; the doubling is exact. x is limited to [-30, 89]
/// (expm1(-30) rounds to -1 in f32); |x| < 2^-24 gives x itself (the
/// correctly rounded result, -0 kept). `nonpos` as for exp_of (tanh's
/// -2|x|).
static int expm1_of(cpu_emit_t *e, int x, bool nonpos) {
  int n, r = reduce_ln2(e, clamp(e, x, -30.0, 89.0, nonpos), &n);
  int q = expm1_reduced(e, r);
  int s = pow2(e, op2(e, "arith.subi", n, i32c(e, 1), "i32"));
  int v =
      fmul(e, fadd(e, fmul(e, s, q), fsub(e, s, f32c(e, 0.5))), f32c(e, 2.0));
  int tiny = cmp(e, "arith.cmpf", "olt", op1(e, "math.absf", x, "f32"),
                 f32c(e, 0x1p-24), "f32");
  v = sel(e, tiny, x, v, "f32");
  return nonpos ? v : keep_nan(e, x, v);
}

int cpu_vmath_expm1(cpu_emit_t *e, int x) { return expm1_of(e, x, false); }

/// tanh(x) = sign(x) * -m / (m + 2) with m = expm1(-2|x|) in (-1, 0]: no
/// cancellation for small |x| (m ~ -2|x| is accurate relative to itself),
/// and m = -1 gives the saturated 1 for large |x|. The sign is copied, so
/// tanh(-0) = -0 and NaN propagates through expm1.
int cpu_vmath_tanh(cpu_emit_t *e, int x) {
  int ax = op1(e, "math.absf", x, "f32");
  int m = expm1_of(e, fmul(e, ax, f32c(e, -2.0)), true);
  int t = op2(e, "arith.divf", op1(e, "arith.negf", m, "f32"),
              fadd(e, m, f32c(e, 2.0)), "f32");
  return op2(e, "math.copysign", t, x, "f32");
}

/// sigmoid(x) = 1 / (1 + exp(-x)) for x >= 0 and exp(x) / (1 + exp(x))
/// for x < 0: exp(-|x|) is in [0, 1], so nothing overflows, and for very
/// negative x the result is exp(x), subnormal where that is.
int cpu_vmath_sigmoid(cpu_emit_t *e, int x) {
  int m = exp_of(e, op1(e, "arith.negf", op1(e, "math.absf", x, "f32"), "f32"),
                 true);
  int one = f32c(e, 1.0);
  int neg = cmp(e, "arith.cmpf", "olt", x, f32c(e, 0.0), "f32");
  return op2(e, "arith.divf", sel(e, neg, m, one, "f32"), fadd(e, one, m),
             "f32");
}

/// log(x) = k ln2 + log1p(f): the bits of x less those of sqrt(1/2) give k
/// (the exponent) and a mantissa m = 1 + f in [sqrt(1/2), sqrt(2)), so f is
/// exact and |f| < 0.415. Subnormal x is scaled by 2^23 first.
/// log1p(f) = f + f^2 P(f), P a degree-8 minimax fit (relative error
/// 4.1e-9). log(+-0) = -inf, log(x < 0) = NaN, log(inf) = inf.
int cpu_vmath_log(cpu_emit_t *e, int x) {
  static const double k_p[] = {-0x1.fffff8p-2, 0x1.55555p-2,   -0x1.000428p-2,
                               0x1.99a4p-3,    -0x1.5426fep-3, 0x1.227054p-3,
                               -0x1.0f39fp-3,  0x1.08525p-3,   -0x1.383c4p-4};
  int sub = cmp(e, "arith.cmpf", "olt", x, f32c(e, 0x1p-126), "f32");
  int xs = sel(e, sub, fmul(e, x, f32c(e, 0x1p23)), x, "f32");
  int c = i32c(e, 0x3f3504f3); // the bits of sqrt(1/2)
  int ix = op2(e, "arith.subi", bitcast(e, xs, "f32", "i32"), c, "i32");
  int k = op2(e, "arith.shrsi", ix, i32c(e, 23), "i32");
  k = op2(e, "arith.subi", k, sel(e, sub, i32c(e, 23), i32c(e, 0), "i32"),
          "i32");
  int mb = op2(e, "arith.addi",
               op2(e, "arith.andi", ix, i32c(e, 0x7fffff), "i32"), c, "i32");
  int f = fsub(e, bitcast(e, mb, "i32", "f32"), f32c(e, 1.0));
  int kf = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.sitofp %%t%d : i32 to f32\n", kf, k);
  int p = horner(e, f, k_p, 9);
  int lo =
      fadd(e, fmul(e, fmul(e, f, f), p), fmul(e, kf, f32c(e, 0x1.7f7d1cp-20)));
  int v = fadd(e, fadd(e, lo, f), fmul(e, kf, f32c(e, 0x1.62e4p-1)));
  int zero = f32c(e, 0.0);
  v = sel(e, cmp(e, "arith.cmpf", "oeq", x, zero, "f32"), f32c(e, -INFINITY), v,
          "f32");
  v = sel(e, cmp(e, "arith.cmpf", "olt", x, zero, "f32"), f32c(e, NAN), v,
          "f32");
  v = sel(e, cmp(e, "arith.cmpf", "oeq", x, f32c(e, INFINITY), "f32"), x, v,
          "f32");
  return keep_nan(e, x, v);
}

/// legalize-tf: TensorFlow's stateless random ops (tf.random.stateless_*,
/// tf.nn.experimental.stateless_dropout), bit for bit: the same Philox
/// stream, and the same conversion of its words to each distribution, as
/// TensorFlow's CPU kernels.
///
/// The generator is Philox4x32-10 ("Parallel Random Numbers: As Easy as 1,
/// 2, 3", Salmon et al., SC 2011): a 128-bit counter of four 32-bit words
/// and a 64-bit key of two, ten rounds of
///   (c0, c1, c2, c3) <- (hi(B c2) ^ c1 ^ k0, lo(B c2), hi(A c0) ^ c3 ^ k1,
///                        lo(A c0))
/// with A = 0xD2511F53, B = 0xCD9E8D57, the key raised by (0x9E3779B9,
/// 0xBB67AE85) between rounds. Each call gives four 32-bit words; the k-th
/// call uses the counter plus k.
///
/// TensorFlow's streams:
/// - a seed (s0, s1) of two integers (sign-extended to 64 bits) gives the
///   key and counter by one Philox call on the counter (lo s0, hi s0, lo
///   s1, hi s1) with the key (0x3EC8F720, 0x02461E29): its words w give the
///   key (w0, w1) and the counter (0, 0, w2, w3). StatelessRandomGetKeyCounter
///   returns them packed in 64-bit words (key [1], counter [2]); the V2 ops
///   take them so (the algorithm must be Philox: 1, or 3, auto-select, which
///   picks Philox on the CPU).
/// - Element e of the output, in row-major order, is taken from call
///   e / n: n = 4 elements per call for f32 and i32, 2 for f64 and i64, the
///   words of the call used in order.
/// - Uniform f32 from word x: (x & 0x7FFFFF) 2^-23 (TensorFlow fills the
///   mantissa of 1.0 and subtracts 1: the same number, exactly); f64 from
///   words (x, y): ((x & 0xFFFFF) 2^32 + y) 2^-52.
/// - Normal (Box-Muller): words (x, y) of uniforms u1 = max(U(x), 1e-7)
///   and u2 = U(y) give sin(2 pi u2) r and cos(2 pi u2) r, r =
///   sqrt(-2 log u1); f32 takes two pairs of words per call (2 pi u2 in
///   f64, rounded to f32; the rest in f32), f64 one pair of pairs.
/// - Integers in [lo, hi): lo + x mod (hi - lo), x one word (i32) or the
///   64-bit word (y << 32 | x) of two (i64), the modulus unsigned.
///
/// Every word is held in i64 within [0, 2^32); a product of a 32-bit
/// multiplier and a word wraps in i64 to its exact low 64 bits. One call
/// is made per n elements (a core.range of the calls), its n values laid
/// out in order and gathered at each element's row-major index, so the
/// output's shape may be known only at run time.
#include "lower/tf/tf_lower_internal.h"

#include <math.h>
#include <string.h>

static const char *const RANDOM_OPS[] = {
    "StatelessRandomGetAlg",           "StatelessRandomGetKeyCounter",
    "StatelessRandomGetKeyCounterAlg", "StatelessRandomNormal",
    "StatelessRandomNormalV2",         "StatelessRandomUniform",
    "StatelessRandomUniformInt",       "StatelessRandomUniformIntV2",
    "StatelessRandomUniformV2",
};

void eddy_tfl_random_ops_each(void (*fn)(const char *name, void *user),
                              void *user) {
  for (size_t i = 0; i < sizeof RANDOM_OPS / sizeof RANDOM_OPS[0]; i++)
    fn(RANDOM_OPS[i], user);
}

/// ---- An expression builder with a sticky error ---------------------------

typedef struct rx {
  eddy_tfl_t *z;
  const eddy_op_t *op;
  eddy_status_t err;
} rx_t;

static eddy_value_t *bin(rx_t *r, const char *name, eddy_value_t *a,
                         eddy_value_t *b) {
  eddy_value_t *v = NULL;
  if (r->err || !a || !b)
    return NULL;
  r->err = tfl_bin(r->z, r->op, name, a, b, &v);
  return r->err ? NULL : v;
}

static eddy_value_t *un(rx_t *r, const char *name, eddy_value_t *a) {
  eddy_value_t *v = NULL;
  if (r->err || !a)
    return NULL;
  r->err = eddy_tfl_build(r->z, r->op, name, &a, 1, NULL, 0, &v);
  return r->err ? NULL : v;
}

static eddy_value_t *sel(rx_t *r, eddy_value_t *c, eddy_value_t *a,
                         eddy_value_t *b) {
  eddy_value_t *v = NULL;
  if (r->err || !c || !a || !b)
    return NULL;
  r->err = tfl_sel(r->z, r->op, c, a, b, &v);
  return r->err ? NULL : v;
}

/// A scalar constant of dtype dt (exact for the integers used here, all
/// below 2^53).
static eddy_value_t *kc(rx_t *r, eddy_dtype_t dt, double x) {
  eddy_value_t *v = NULL;
  if (r->err)
    return NULL;
  r->err = eddy_tfl_splat(r->z, dt, 0, NULL, x, &v);
  return r->err ? NULL : v;
}

static eddy_value_t *cast(rx_t *r, eddy_value_t *a, eddy_dtype_t dt) {
  eddy_value_t *v = NULL;
  if (r->err || !a)
    return NULL;
  r->err = eddy_tfl_cast(r->z, r->op, a, dt, &v);
  return r->err ? NULL : v;
}

#define K(x) kc(r, EDDY_DT_I64, (double)(x))
#define ADD(a, b) bin(r, "core.add", a, b)
#define SUB(a, b) bin(r, "core.sub", a, b)
#define MUL(a, b) bin(r, "core.mul", a, b)
#define XOR(a, b) bin(r, "core.bitxor", a, b)
#define ANDK(a, m) bin(r, "core.bitand", a, K(m))
#define SHR(a, n) bin(r, "core.shift_right", a, K(n))
#define SHL(a, n) bin(r, "core.shift_left", a, K(n))
#define LO32(a) ANDK(a, 0xFFFFFFFFll)
#define HI32(a) LO32(SHR(a, 32))

/// ---- Philox4x32-10 --------------------------------------------------------

/// The low and high words of m * x for a 32-bit constant m and a word x:
/// the product, below 2^64, wraps in i64 to its own low 64 bits (core.mul
/// of integers wraps), and the words are masked out of those.
static void mulhilo(rx_t *r, int64_t m, eddy_value_t *x, eddy_value_t **lo,
                    eddy_value_t **hi) {
  eddy_value_t *p = MUL(K(m), x);
  *lo = LO32(p);
  *hi = HI32(p);
}

/// One Philox call: the words out[4] of counter c[4] under key k[2].
static void philox(rx_t *r, eddy_value_t *const c_in[4],
                   eddy_value_t *const k_in[2], eddy_value_t *out[4]) {
  eddy_value_t *c[4] = {c_in[0], c_in[1], c_in[2], c_in[3]};
  eddy_value_t *k[2] = {k_in[0], k_in[1]};
  for (int round = 0; round < 10; round++) {
    eddy_value_t *lo0 = NULL, *hi0 = NULL, *lo1 = NULL, *hi1 = NULL;
    mulhilo(r, 0xD2511F53ll, c[0], &lo0, &hi0);
    mulhilo(r, 0xCD9E8D57ll, c[2], &lo1, &hi1);
    eddy_value_t *n0 = XOR(XOR(hi1, c[1]), k[0]);
    eddy_value_t *n2 = XOR(XOR(hi0, c[3]), k[1]);
    c[0] = n0, c[1] = lo1, c[2] = n2, c[3] = lo0;
    if (round < 9) {
      k[0] = LO32(ADD(k[0], K(0x9E3779B9ll)));
      k[1] = LO32(ADD(k[1], K(0xBB67AE85ll)));
    }
  }
  for (int i = 0; i < 4; i++)
    out[i] = c[i];
}

/// ---- Keys and counters ----------------------------------------------------

typedef struct stream {
  eddy_value_t *key[2], *ctr[4];
} stream_t;

/// Element i of the 1-D integer operand v (of n elements), as an i64
/// scalar.
static eddy_value_t *elem_i64(rx_t *r, eddy_value_t *v, int64_t i, int64_t n,
                              const char *what) {
  if (r->err)
    return NULL;
  const eddy_type_t *t = v->type;
  if (t->kind != EDDY_TYPE_TENSOR || eddy_dtype_is_float(t->dtype) ||
      t->rank != 1 || t->dims[0] != n) {
    r->err = eddy_tfl_error(r->op,
                            "%s must be an integer tensor of shape "
                            "[%lld]",
                            what, (long long)n);
    return NULL;
  }
  eddy_value_t *e = NULL;
  r->err = eddy_tfl_element(r->z, r->op, v, i, &e);
  return cast(r, r->err ? NULL : e, EDDY_DT_I64);
}

/// The key and counter TensorFlow derives from a seed of two integers.
static void from_seed(rx_t *r, eddy_value_t *seed, stream_t *s) {
  eddy_value_t *s0 = elem_i64(r, seed, 0, 2, "the seed");
  eddy_value_t *s1 = elem_i64(r, seed, 1, 2, "the seed");
  eddy_value_t *c[4] = {LO32(s0), HI32(s0), LO32(s1), HI32(s1)};
  eddy_value_t *k[2] = {K(0x3EC8F720ll), K(0x02461E29ll)}, *w[4];
  philox(r, c, k, w);
  s->key[0] = w[0], s->key[1] = w[1];
  s->ctr[0] = K(0), s->ctr[1] = K(0), s->ctr[2] = w[2], s->ctr[3] = w[3];
}

/// The key [1] and counter [2] operands of a V2 op (64-bit words, held in
/// i64), and its algorithm, which must be a constant naming Philox.
static void from_key_counter(rx_t *r, uint32_t first, stream_t *s) {
  eddy_value_t *alg = tfl_in(r->z, r->op, first + 2);
  int64_t a = -1;
  if (r->err)
    return;
  if (eddy_tfl_const_ints(r->z, alg, &a, 1) != 1 || (a != 1 && a != 3)) {
    r->err = eddy_tfl_error(
        r->op,
        "the algorithm (operand %u) must be a constant 1 (Philox) or "
        "3 (auto-select, Philox on the CPU); ThreeFry and run-time "
        "choices are not supported",
        first + 2);
    return;
  }
  eddy_value_t *k = elem_i64(r, tfl_in(r->z, r->op, first), 0, 1, "the key");
  eddy_value_t *c = tfl_in(r->z, r->op, first + 1);
  eddy_value_t *c0 = elem_i64(r, c, 0, 2, "the counter");
  eddy_value_t *c1 = elem_i64(r, c, 1, 2, "the counter");
  s->key[0] = LO32(k), s->key[1] = HI32(k);
  s->ctr[0] = LO32(c0), s->ctr[1] = HI32(c0);
  s->ctr[2] = LO32(c1), s->ctr[3] = HI32(c1);
}

/// The words w[4] of calls g (i64 call indices): the counter plus g,
/// carried through the four words.
static void call_words(rx_t *r, const stream_t *s, eddy_value_t *g,
                       eddy_value_t *w[4]) {
  eddy_value_t *carry = g, *c[4];
  for (int i = 0; i < 4; i++) {
    eddy_value_t *sum = ADD(s->ctr[i], carry);
    c[i] = LO32(sum);
    carry = SHR(sum, 32);
  }
  philox(r, c, s->key, w);
}

/// ---- Distributions --------------------------------------------------------

/// The uniform f32 in [0, 1) of a word: its low 23 bits times 2^-23.
static eddy_value_t *uniform_f32(rx_t *r, eddy_value_t *x) {
  return bin(r, "core.mul", cast(r, ANDK(x, 0x7FFFFF), EDDY_DT_F32),
             kc(r, EDDY_DT_F32, ldexp(1.0, -23)));
}

/// The uniform f64 in [0, 1) of words (x, y): 52 bits times 2^-52.
static eddy_value_t *uniform_f64(rx_t *r, eddy_value_t *x, eddy_value_t *y) {
  eddy_value_t *m = ADD(SHL(ANDK(x, 0xFFFFF), 32), y);
  return bin(r, "core.mul", cast(r, m, EDDY_DT_F64),
             kc(r, EDDY_DT_F64, ldexp(1.0, -52)));
}

/// Box-Muller: v[0] = sin(tp) r and v[1] = cos(tp) r, r = sqrt(-2 log
/// max(u1, 1e-7)), in dtype dt; tp = 2 pi u2, computed in f64.
static void box_muller(rx_t *r, eddy_dtype_t dt, eddy_value_t *u1,
                       eddy_value_t *tp, eddy_value_t *v[2]) {
  eddy_value_t *eps = kc(r, dt, 1e-7);
  u1 = sel(r, bin(r, "core.lt", u1, eps), eps, u1);
  eddy_value_t *rad =
      un(r, "core.sqrt", MUL(kc(r, dt, -2.0), un(r, "core.log", u1)));
  tp = cast(r, tp, dt);
  v[0] = MUL(un(r, "core.sin", tp), rad);
  v[1] = MUL(un(r, "core.cos", tp), rad);
}

/// x mod m of the unsigned 64-bit word x = (hi << 32 | lo), 0 < m < 2^61.
/// First h = hi mod m, so x mod m = (h 2^32 + lo) mod m. Below m = 2^31
/// that is below 2^63: a remainder of i64. From 2^31 up, the quotient
/// (below 2^32) is estimated in f64, where it is off by at most 2, and
/// h 2^32 + lo - q m, exact in wrapping i64 (it lies within (-2m, 3m)),
/// is brought into [0, m).
static eddy_value_t *mod_u64(rx_t *r, eddy_value_t *hi, eddy_value_t *lo,
                             eddy_value_t *m) {
  eddy_value_t *h = bin(r, "core.rem", hi, m);
  eddy_value_t *v = ADD(SHL(h, 32), lo);
  eddy_value_t *narrow = bin(r, "core.rem", v, m);
  eddy_value_t *vf =
      ADD(MUL(cast(r, h, EDDY_DT_F64), kc(r, EDDY_DT_F64, 4294967296.0)),
          cast(r, lo, EDDY_DT_F64));
  eddy_value_t *q = cast(
      r, un(r, "core.floor", bin(r, "core.div", vf, cast(r, m, EDDY_DT_F64))),
      EDDY_DT_I64);
  eddy_value_t *x = SUB(v, MUL(q, m));
  for (int i = 0; i < 2; i++)
    x = sel(r, bin(r, "core.lt", x, K(0)), ADD(x, m), x);
  for (int i = 0; i < 2; i++)
    x = sel(r, bin(r, "core.ge", x, m), SUB(x, m), x);
  return sel(r, bin(r, "core.lt", m, K(2147483648ll)), narrow, x);
}

typedef enum dist { DIST_UNIFORM, DIST_NORMAL, DIST_INT } dist_t;

/// The values of one Philox call per call index g, v[0..n): n = 4 for f32
/// and i32, 2 for f64 and i64. lo and hi bound the integers.
static void call_values(rx_t *r, const stream_t *s, dist_t d, eddy_dtype_t dt,
                       eddy_value_t *g, eddy_value_t *lo, eddy_value_t *hi,
                       eddy_value_t *v[4]) {
  eddy_value_t *w[4] = {NULL, NULL, NULL, NULL};
  call_words(r, s, g, w);
  const double two_pi = 6.28318530717958647692; // 2 pi, rounded to f64
  bool wide = dt == EDDY_DT_F64 || dt == EDDY_DT_I64;
  if (d == DIST_UNIFORM && !wide) {
    for (int i = 0; i < 4; i++)
      v[i] = uniform_f32(r, w[i]);
  } else if (d == DIST_UNIFORM) {
    v[0] = uniform_f64(r, w[0], w[1]);
    v[1] = uniform_f64(r, w[2], w[3]);
  } else if (d == DIST_NORMAL && !wide) {
    // Two pairs of words, (0, 1) and (2, 3), each two values.
    for (int p = 0; p < 2; p++) {
      eddy_value_t *u1 = uniform_f32(r, w[2 * p]);
      eddy_value_t *tp =
          MUL(kc(r, EDDY_DT_F64, two_pi),
              cast(r, uniform_f32(r, w[2 * p + 1]), EDDY_DT_F64));
      box_muller(r, dt, u1, tp, &v[2 * p]);
    }
  } else if (d == DIST_NORMAL) {
    eddy_value_t *u1 = uniform_f64(r, w[0], w[1]);
    eddy_value_t *tp =
        MUL(kc(r, EDDY_DT_F64, two_pi), uniform_f64(r, w[2], w[3]));
    box_muller(r, dt, u1, tp, v);
  } else {
    lo = cast(r, lo, EDDY_DT_I64);
    eddy_value_t *m = SUB(cast(r, hi, EDDY_DT_I64), lo);
    for (int i = 0; i < (wide ? 2 : 4); i++) {
      eddy_value_t *x = wide ? mod_u64(r, w[2 * i + 1], w[2 * i], m)
                             : bin(r, "core.rem", w[i], m);
      v[i] = cast(r, ADD(lo, x), dt);
    }
  }
}

/// The output: element e (its row-major index, in the i64 grid e of the
/// output's shape) is value e mod n of call e / n. One call per n elements,
/// the calls' values laid out in order [calls * n] and gathered at e.
static eddy_value_t *draw(rx_t *r, const stream_t *s, dist_t d, eddy_dtype_t dt,
                          eddy_value_t *e, eddy_value_t *lo, eddy_value_t *hi) {
  int n = dt == EDDY_DT_F64 || dt == EDDY_DT_I64 ? 2 : 4;
  const int64_t all = -1, col[2] = {-1, 1};
  eddy_value_t *flat = NULL, *count = NULL, *g = NULL;
  if (!r->err)
    r->err = eddy_tfl_reshape(r->z, r->op, e, &all, 1, &flat);
  if (!r->err)
    r->err = eddy_tfl_dim(r->z, r->op, flat, 0, &count);
  eddy_value_t *calls = bin(r, "core.div", ADD(count, K(n - 1)), K(n));
  eddy_value_t *rops[3] = {K(0), calls, K(1)};
  if (!r->err && rops[0] && rops[1] && rops[2])
    r->err = eddy_tfl_build(r->z, r->op, "core.range", rops, 3, NULL, 0, &g);
  eddy_value_t *v[4] = {NULL, NULL, NULL, NULL}, *cols[4] = {NULL};
  call_values(r, s, d, dt, g, lo, hi, v);
  for (int i = 0; i < n && !r->err; i++)
    r->err = eddy_tfl_reshape(r->z, r->op, v[i], col, 2, &cols[i]);
  eddy_value_t *laid = NULL, *out = NULL;
  if (!r->err) {
    eddy_named_attr_t ax = eddy_tfl_int_attr(r->z, "axis", 1);
    r->err = eddy_tfl_build(r->z, r->op, "core.concat", cols, (size_t)n, &ax, 1,
                            &laid);
  }
  if (!r->err)
    r->err = eddy_tfl_reshape(r->z, r->op, laid, &all, 1, &laid);
  if (!r->err) {
    eddy_value_t *gops[2] = {laid, e};
    eddy_named_attr_t ax = eddy_tfl_int_attr(r->z, "axis", 0);
    r->err = eddy_tfl_build(r->z, r->op, "core.gather", gops, 2, &ax, 1, &out);
  }
  return r->err ? NULL : out;
}

/// ---- The ops ------------------------------------------------------------

/// The range's bounds: scalars of the output's dtype; when both are
/// constants, lo < hi (TensorFlow's check, made here at compile time).
static void int_bounds(rx_t *r, uint32_t first, eddy_value_t **lo,
                       eddy_value_t **hi) {
  *lo = tfl_in(r->z, r->op, first);
  *hi = tfl_in(r->z, r->op, first + 1);
  int64_t a = 0, b = 0;
  if (r->err)
    return;
  for (int i = 0; i < 2; i++) {
    const eddy_type_t *t = (i ? *hi : *lo)->type;
    if (t->kind != EDDY_TYPE_TENSOR || t->rank != 0) {
      r->err =
          eddy_tfl_error(r->op, "%s must be a scalar", i ? "maxval" : "minval");
      return;
    }
  }
  if (eddy_tfl_const_ints(r->z, *lo, &a, 1) == 1 &&
      eddy_tfl_const_ints(r->z, *hi, &b, 1) == 1 && !(a < b))
    r->err = eddy_tfl_error(r->op, "needs minval < maxval, got [%lld, %lld)",
                            (long long)a, (long long)b);
}

static eddy_status_t lower_key_counter(rx_t *r, bool with_alg) {
  stream_t s = {{NULL}, {NULL}};
  from_seed(r, tfl_in(r->z, r->op, 0), &s);
  eddy_value_t *key = bin(r, "core.bitor", s.key[0], SHL(s.key[1], 32));
  eddy_value_t *c0 = bin(r, "core.bitor", s.ctr[0], SHL(s.ctr[1], 32));
  eddy_value_t *c1 = bin(r, "core.bitor", s.ctr[2], SHL(s.ctr[3], 32));
  int64_t one = 1;
  eddy_value_t *parts[2] = {NULL, NULL}, *ctr = NULL;
  if (!r->err)
    r->err = eddy_tfl_reshape(r->z, r->op, key, &one, 1, &key);
  if (!r->err)
    r->err = eddy_tfl_reshape(r->z, r->op, c0, &one, 1, &parts[0]);
  if (!r->err)
    r->err = eddy_tfl_reshape(r->z, r->op, c1, &one, 1, &parts[1]);
  if (!r->err) {
    eddy_named_attr_t ax = eddy_tfl_int_attr(r->z, "axis", 0);
    r->err = eddy_tfl_build(r->z, r->op, "core.concat", parts, 2, &ax, 1, &ctr);
  }
  EDDY_RETURN_IF_ERROR(r->err);
  eddy_tfl_set(r->z, &r->op->results[0], key);
  eddy_tfl_set(r->z, &r->op->results[1], ctr);
  if (with_alg) {
    eddy_value_t *alg = kc(r, EDDY_DT_I32, 1);
    EDDY_RETURN_IF_ERROR(r->err);
    eddy_tfl_set(r->z, &r->op->results[2], alg);
  }
  return NULL;
}

eddy_status_t eddy_tfl_lower_random_op(eddy_tfl_t *z, const eddy_op_t *op,
                                       bool *handled) {
  const char *t = op->name->str + 3;
  size_t i = 0;
  while (i < sizeof RANDOM_OPS / sizeof RANDOM_OPS[0] &&
         strcmp(t, RANDOM_OPS[i]) != 0)
    i++;
  *handled = i < sizeof RANDOM_OPS / sizeof RANDOM_OPS[0];
  if (!*handled)
    return NULL;
  rx_t rr = {z, op, NULL}, *r = &rr;
  if (strcmp(t, "StatelessRandomGetAlg") == 0) {
    eddy_value_t *alg = kc(r, EDDY_DT_I32, 1);
    EDDY_RETURN_IF_ERROR(r->err);
    tfl_out1(z, op, alg);
    return NULL;
  }
  if (strncmp(t, "StatelessRandomGetKeyCounter", 28) == 0)
    return lower_key_counter(r, t[28] == 'A');
  bool v2 = t[strlen(t) - 2] == 'V' && t[strlen(t) - 1] == '2';
  dist_t d = strstr(t, "Int")      ? DIST_INT
             : strstr(t, "Normal") ? DIST_NORMAL
                                   : DIST_UNIFORM;
  eddy_dtype_t dt = EDDY_DT_F32;
  if (!eddy_tfl_attr_dtype(op, "dtype", &dt) ||
      (d == DIST_INT ? dt != EDDY_DT_I32 && dt != EDDY_DT_I64
                     : dt != EDDY_DT_F32 && dt != EDDY_DT_F64))
    return eddy_tfl_error(op, "dtype must be %s",
                          d == DIST_INT ? "int32 or int64"
                                        : "float32 or float64 (the 16-bit "
                                          "floats are not supported)");
  // (shape, seed[, minval, maxval]) or (shape, key, counter, alg[, minval,
  // maxval]).
  stream_t s = {{NULL}, {NULL}};
  if (v2)
    from_key_counter(r, 1, &s);
  else
    from_seed(r, tfl_in(z, op, 1), &s);
  eddy_value_t *lo = NULL, *hi = NULL, *e = NULL, *out = NULL;
  if (d == DIST_INT)
    int_bounds(r, v2 ? 4 : 2, &lo, &hi);
  EDDY_RETURN_IF_ERROR(r->err);
  EDDY_RETURN_IF_ERROR(eddy_tfl_shape_grid(z, op, tfl_in(z, op, 0), &e));
  out = draw(r, &s, d, dt, e, lo, hi);
  EDDY_RETURN_IF_ERROR(r->err);
  tfl_out1(z, op, out);
  return NULL;
}

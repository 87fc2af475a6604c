/// The scalar semantics of eddy's numeric contract (docs/dialects/core.md),
/// written once: f16/bf16 conversions, integer floor division, remainder
/// and wraparound, float-to-integer casts, rounding ties to even, and the
/// NaN and signed-zero rules of maximum, minimum, relu and sign. The IR
/// (f16/bf16 attributes), the constant folder (dialects/core) and the
/// runtime kernels (runtime/) call these; the CPU backend, which writes the
/// same operations as arith/math text, is tested against them
/// (tests/unit/runtime/test_scalar.c).
///
/// Header only and dependency-free (C standard headers; signbit is a macro,
/// so not even libm), so that the IR, which does not depend on libeddyrt, and
/// libeddyrt, which does not depend on the IR, can both include it. It lives
/// in runtime/ because the runtime is the one part every other depends on at
/// run time; nothing here is part of the runtime's ABI (runtime/eddyrt.h).
#ifndef EDDY_RUNTIME_SCALAR_H
#define EDDY_RUNTIME_SCALAR_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/// ---- f16 and bf16 ----------------------------------------------------------

/// Widening is exact. Narrowing rounds to nearest, ties to even; a rounding
/// carry may reach infinity; a NaN stays a quiet NaN that keeps the top
/// payload bits. Values computed in double reach f16/bf16 through f32 (the
/// contract), so they are rounded twice: eddy_scalar_f32_to_f16((float)d).

static inline uint32_t eddy_scalar_f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static inline float eddy_scalar_f32_from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static inline float eddy_scalar_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    // Zero or subnormal: mant * 2^-24 is exact in f32.
    float v = (float)mant * 0x1p-24f;
    return eddy_scalar_f32_from_bits(eddy_scalar_f32_bits(v) | sign);
  }
  if (exp == 31)
    return eddy_scalar_f32_from_bits(sign | 0x7f800000u | (mant << 13));
  return eddy_scalar_f32_from_bits(sign | ((exp + 112u) << 23) | (mant << 13));
}

/// m >> shift (1 <= shift <= 31), rounded to nearest, ties to even.
static inline uint32_t eddy_scalar_shift_rne(uint32_t m, uint32_t shift) {
  uint32_t q = m >> shift;
  uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
  if (rem > half || (rem == half && (q & 1u)))
    q++;
  return q;
}

static inline uint16_t eddy_scalar_f32_to_f16(float f) {
  uint32_t x = eddy_scalar_f32_bits(f);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) // NaN
    return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x1ffu));
  if (ax >= 0x47800000u) // >= 2^16 (and inf): past the largest f16, 65504
    return (uint16_t)(sign | 0x7c00u);
  if (ax >= 0x38800000u) // >= 2^-14: normal in f16; the carry may reach inf
    return (uint16_t)(sign | eddy_scalar_shift_rne(ax - (112u << 23), 13));
  if (ax < 0x33000000u) // < 2^-25: below half the smallest subnormal
    return sign;
  // Subnormal: the 24-bit significand m times 2^(e - 150) in units of 2^-24.
  uint32_t e = ax >> 23, m = (ax & 0x7fffffu) | 0x800000u;
  return (uint16_t)(sign | eddy_scalar_shift_rne(m, 126u - e));
}

static inline float eddy_scalar_bf16_to_f32(uint16_t h) {
  return eddy_scalar_f32_from_bits((uint32_t)h << 16);
}

static inline uint16_t eddy_scalar_f32_to_bf16(float f) {
  uint32_t x = eddy_scalar_f32_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) // NaN
    return (uint16_t)((x >> 16) | 0x40u);
  // Adding 0x7fff plus the kept part's lowest bit rounds ties to even.
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}

/// ---- Integers --------------------------------------------------------------

/// Integers wrap around in two's complement of their width. The conversions
/// below avoid C's implementation-defined narrowing of signed values.

static inline int8_t eddy_scalar_wrap_i8(uint64_t u) {
  uint8_t b = (uint8_t)u;
  return b < 0x80u ? (int8_t)b : (int8_t)((int)b - 256);
}

static inline int32_t eddy_scalar_wrap_i32(uint64_t u) {
  uint32_t w = (uint32_t)u;
  return w < 0x80000000u ? (int32_t)w : (int32_t)(w - 0x80000000u) + INT32_MIN;
}

static inline int64_t eddy_scalar_wrap_i64(uint64_t u) {
  return u < 0x8000000000000000ull
             ? (int64_t)u
             : (int64_t)(u - 0x8000000000000000ull) + INT64_MIN;
}

/// Floor division (numpy's //): the quotient rounded toward -inf. x // 0 is
/// 0, and MIN // -1 wraps to MIN.
#define EDDY_SCALAR_FLOORDIV_DEF(NAME, T, UT, WRAP)                            \
  static inline T NAME(T x, T y) {                                             \
    if (y == 0)                                                                \
      return 0;                                                                \
    if (y == -1)                                                               \
      return WRAP((uint64_t)(UT)(0u - (UT)x));                                 \
    T q = (T)(x / y);                                                          \
    if ((T)(x % y) != 0 && ((x < 0) != (y < 0)))                               \
      q--;                                                                     \
    return q;                                                                  \
  }
EDDY_SCALAR_FLOORDIV_DEF(eddy_scalar_floordiv_i8, int8_t, uint8_t,
                         eddy_scalar_wrap_i8)
EDDY_SCALAR_FLOORDIV_DEF(eddy_scalar_floordiv_i32, int32_t, uint32_t,
                         eddy_scalar_wrap_i32)
EDDY_SCALAR_FLOORDIV_DEF(eddy_scalar_floordiv_i64, int64_t, uint64_t,
                         eddy_scalar_wrap_i64)
#undef EDDY_SCALAR_FLOORDIV_DEF

/// Truncated remainder (core.rem on integers, C's %): the sign of x. x rem 0
/// is 0 (like x // 0), and x rem -1 is 0 (MIN % -1 overflows in C).
#define EDDY_SCALAR_REM_DEF(NAME, T)                                           \
  static inline T NAME(T x, T y) {                                             \
    if (y == 0 || y == -1)                                                     \
      return 0;                                                                \
    return (T)(x % y);                                                         \
  }
EDDY_SCALAR_REM_DEF(eddy_scalar_rem_i8, int8_t)
EDDY_SCALAR_REM_DEF(eddy_scalar_rem_i32, int32_t)
EDDY_SCALAR_REM_DEF(eddy_scalar_rem_i64, int64_t)
#undef EDDY_SCALAR_REM_DEF

/// Shifts (core.shift_left, core.shift_right) of an integer of `bits` bits,
/// given as int64: the count is clamped to [0, bits - 1] (TensorFlow's
/// LeftShift and RightShift), the left shift moves the two's complement
/// bits (the caller wraps the result to its width), the right shift is
/// arithmetic.
static inline int eddy_scalar_shift_count(int64_t n, int bits) {
  return n < 0 ? 0 : n > bits - 1 ? bits - 1 : (int)n;
}

static inline int64_t eddy_scalar_shl_i64(int64_t x, int64_t n, int bits) {
  return eddy_scalar_wrap_i64((uint64_t)x << eddy_scalar_shift_count(n, bits));
}

static inline int64_t eddy_scalar_shr_i64(int64_t x, int64_t n, int bits) {
  int c = eddy_scalar_shift_count(n, bits);
  return x < 0 ? ~(~x >> c) : x >> c;
}

/// Float to integer (core.cast): truncated toward zero, saturated at the
/// dtype's range; NaN gives 0.
#define EDDY_SCALAR_SAT_DEF(NAME, T, LO, HI, TMIN, TMAX)                       \
  static inline T NAME(double v) {                                             \
    if (v != v)                                                                \
      return 0;                                                                \
    if (v >= (HI))                                                             \
      return TMAX;                                                             \
    if (v <= (LO))                                                             \
      return TMIN;                                                             \
    return (T)v;                                                               \
  }
EDDY_SCALAR_SAT_DEF(eddy_scalar_sat_i8, int8_t, -128.0, 127.0, INT8_MIN,
                    INT8_MAX)
EDDY_SCALAR_SAT_DEF(eddy_scalar_sat_i32, int32_t, -2147483648.0, 2147483647.0,
                    INT32_MIN, INT32_MAX)
// 2^63 is exact in double; INT64_MAX is not.
EDDY_SCALAR_SAT_DEF(eddy_scalar_sat_i64, int64_t, -9223372036854775808.0,
                    9223372036854775808.0, INT64_MIN, INT64_MAX)
#undef EDDY_SCALAR_SAT_DEF

/// ---- NaN and signed zeros --------------------------------------------------

/// maximum/minimum: a NaN operand wins (the first when both are); +0 counts as
/// above -0, so that the result does not depend on the operand order.
/// relu: NaN passes through, relu(-0) = +0. sign: sign(+-0) = +0, sign(NaN)
/// = NaN. Each comes for float and double, so that f32 kernels compute in f32
/// (the same bits: these are exact).

#define EDDY_SCALAR_FLOAT_DEFS(SUF, T)                                         \
  static inline T eddy_scalar_max_##SUF(T x, T y) {                            \
    if (x != x)                                                                \
      return x;                                                                \
    if (y != y)                                                                \
      return y;                                                                \
    if (x == y)                                                                \
      return signbit(x) ? y : x;                                               \
    return x > y ? x : y;                                                      \
  }                                                                            \
  static inline T eddy_scalar_min_##SUF(T x, T y) {                            \
    if (x != x)                                                                \
      return x;                                                                \
    if (y != y)                                                                \
      return y;                                                                \
    if (x == y)                                                                \
      return signbit(x) ? x : y;                                               \
    return x < y ? x : y;                                                      \
  }                                                                            \
  static inline T eddy_scalar_relu_##SUF(T x) {                                \
    return (x > 0 || x != x) ? x : (T)0;                                       \
  }                                                                            \
  static inline T eddy_scalar_sign_##SUF(T x) {                                \
    return x > 0 ? (T)1 : x < 0 ? (T)-1 : x == 0 ? (T)0 : x;                   \
  }
/// round (core.round): to the nearest integer, ties to even, as IEEE
/// roundToIntegralTiesToEven (and math.roundeven); the sign of a zero result
/// is the operand's, NaN and infinities pass through. Adding and
/// subtracting 2^(p-1) rounds in the default rounding mode, which is the
/// contract's; magnitudes from 2^(p-1) up are integers already.
#define EDDY_SCALAR_ROUND_DEFS(SUF, T, BIG)                                    \
  static inline T eddy_scalar_round_##SUF(T x) {                               \
    T a = x < 0 ? -x : x;                                                      \
    if (!(a < (BIG)))                                                          \
      return x;                                                                \
    T r = (T)((T)(a + (BIG)) - (BIG));                                         \
    return signbit(x) ? -r : r;                                                \
  }
EDDY_SCALAR_ROUND_DEFS(f32, float, 8388608.0f)
EDDY_SCALAR_ROUND_DEFS(f64, double, 4503599627370496.0)
#undef EDDY_SCALAR_ROUND_DEFS

EDDY_SCALAR_FLOAT_DEFS(f32, float)
EDDY_SCALAR_FLOAT_DEFS(f64, double)
#undef EDDY_SCALAR_FLOAT_DEFS

/// ---- Sliding windows (conv2d and the pools) ---------------------------------

/// The number of positions of a window of k taps, dilation d, stride s over
/// a dim of n padded by lo before and hi after: floor((n + lo + hi -
/// ((k - 1) * d + 1)) / s) + 1, as TensorFlow's VALID and EXPLICIT padding
/// (SAME is the padding eddy_scalar_window_same gives). -1 when the padded
/// dim is shorter than the window or a parameter is out of range (k, d,
/// s < 1, lo, hi < 0), or when the sum would overflow.
static inline int64_t eddy_scalar_window_out(int64_t n, int64_t lo,
                                             int64_t hi, int64_t k, int64_t d,
                                             int64_t s) {
  const int64_t big = (int64_t)1 << 40;
  if (n < 0 || lo < 0 || hi < 0 || k < 1 || d < 1 || s < 1 || n > big ||
      lo > big || hi > big || k > big || d > big)
    return -1;
  int64_t eff = (k - 1) * d + 1, span = n + lo + hi;
  return span < eff ? -1 : (span - eff) / s + 1;
}

/// TensorFlow's SAME padding of a dim of n: ceil(n / s) positions, padded by
/// max((out - 1) * s + eff - n, 0) in all, the smaller half before. Writes
/// the two pads; false on parameters out of range.
static inline int eddy_scalar_window_same(int64_t n, int64_t k, int64_t d,
                                          int64_t s, int64_t *lo,
                                          int64_t *hi) {
  const int64_t big = (int64_t)1 << 40;
  if (n < 0 || k < 1 || d < 1 || s < 1 || n > big || k > big || d > big)
    return 0;
  int64_t out = (n + s - 1) / s, eff = (k - 1) * d + 1;
  int64_t total = (out - 1) * s + eff - n;
  if (total < 0)
    total = 0;
  *lo = total / 2;
  *hi = total - *lo;
  return 1;
}

#ifdef __cplusplus
}
#endif
#endif

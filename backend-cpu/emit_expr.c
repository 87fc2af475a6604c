/// Per-element computations of the core ops as arith/math ops, following
/// the numeric contract of docs/dialects/core.md, and the loop-nest kernels
/// for the ops that are not pointwise (reductions, data movement; matmul is
/// in emit_matmul.c).
#include "backend-cpu/emit_elem.h"

#include <string.h>

int cpu_float_widen(cpu_emit_t *e, eddy_dtype_t from, const char *to, int v) {
  const char *cur = cpu_reg_type(from);
  if (is_half(from)) {
    int t = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.extf %%t%d : %s to f32\n", t, v, cur);
    v = t;
    cur = "f32";
  }
  if (strcmp(cur, to) == 0)
    return v;
  int t = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.extf %%t%d : %s to %s\n", t, v, cur, to);
  return t;
}

/// An f32 value rounded to bf16 as runtime/scalar.h does it, with integer
/// ops: arith.truncf to bf16 becomes x86's vcvtneps2bf16 on hosts that have
/// it, which flushes subnormals to zero.
static int narrow_bf16(cpu_emit_t *e, int v) {
  int b = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.bitcast %%t%d : f32 to i32\n", b, v);
  int c16 = iconst(e, "i32", 16);
  int hi = op2(e, "arith.shrui", b, c16, "i32");
  int lsb = op2(e, "arith.andi", hi, iconst(e, "i32", 1), "i32");
  int bias = op2(e, "arith.addi", lsb, iconst(e, "i32", 0x7fff), "i32");
  int r =
      op2(e, "arith.shrui", op2(e, "arith.addi", b, bias, "i32"), c16, "i32");
  int qnan = op2(e, "arith.ori", hi, iconst(e, "i32", 0x40), "i32");
  int nan = cmp(e, "arith.cmpf", "uno", v, v, "f32");
  int bits = sel(e, nan, qnan, r, "i32");
  int h = cpu_fresh(e), t = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.trunci %%t%d : i32 to i16\n", h, bits);
  cpu_p(e, "%%t%d = arith.bitcast %%t%d : i16 to bf16\n", t, h);
  return t;
}

int cpu_float_narrow(cpu_emit_t *e, const char *from, eddy_dtype_t to, int v) {
  if (to == EDDY_DT_F64 || strcmp(from, cpu_reg_type(to)) == 0)
    return v;
  if (strcmp(from, "f64") == 0) {
    int t = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.truncf %%t%d : f64 to f32\n", t, v);
    v = t;
  }
  if (to == EDDY_DT_F32)
    return v;
  if (to == EDDY_DT_BF16)
    return narrow_bf16(e, v);
  int t = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.truncf %%t%d : f32 to f16\n", t, v);
  return t;
}


int cpu_splat_const(cpu_emit_t *e, const eddy_attr_t *a) {
  eddy_dtype_t dt = a->type->dtype;
  const unsigned char *p = a->u.dense.data;
  int t = cpu_fresh(e);
  switch (dt) {
  case EDDY_DT_F16:
  case EDDY_DT_BF16: {
    uint16_t h;
    memcpy(&h, p, 2);
    cpu_p(e, "%%t%d = arith.constant 0x%04X : %s\n", t, h, cpu_reg_type(dt));
    break;
  }
  case EDDY_DT_F32: {
    uint32_t w;
    memcpy(&w, p, 4);
    cpu_p(e, "%%t%d = arith.constant 0x%08X : f32\n", t, w);
    break;
  }
  case EDDY_DT_F64: {
    uint64_t w;
    memcpy(&w, p, 8);
    cpu_p(e, "%%t%d = arith.constant 0x%016llX : f64\n", t,
          (unsigned long long)w);
    break;
  }
  case EDDY_DT_I1:
    cpu_p(e, "%%t%d = arith.constant %s\n", t,
          eddy_ir_dense_attr_i64(a, 0) ? "true" : "false");
    break;
  default:
    cpu_p(e, "%%t%d = arith.constant %lld : %s\n", t,
          (long long)eddy_ir_dense_attr_i64(a, 0), cpu_reg_type(dt));
    break;
  }
  return t;
}

/// Integer floor division with x // 0 = 0 and INT_MIN // -1 wrapping.
static int int_floordiv(cpu_emit_t *e, const char *ty, int a, int b) {
  int zero = iconst(e, ty, 0), one = iconst(e, ty, 1), mone = iconst(e, ty, -1);
  int bz = cmp(e, "arith.cmpi", "eq", b, zero, ty);
  int bm = cmp(e, "arith.cmpi", "eq", b, mone, ty);
  int special = op2(e, "arith.ori", bz, bm, "i1");
  int sb = sel(e, special, one, b, ty);
  int q = op2(e, "arith.divsi", a, sb, ty);
  int r = op2(e, "arith.remsi", a, sb, ty);
  int rnz = cmp(e, "arith.cmpi", "ne", r, zero, ty);
  int rneg = cmp(e, "arith.cmpi", "slt", r, zero, ty);
  int bneg = cmp(e, "arith.cmpi", "slt", sb, zero, ty);
  int diff = op2(e, "arith.xori", rneg, bneg, "i1");
  int adj = op2(e, "arith.andi", rnz, diff, "i1");
  int qm = op2(e, "arith.subi", q, one, ty);
  int fq = sel(e, adj, qm, q, ty);
  int neg = op2(e, "arith.subi", zero, a, ty);
  int r1 = sel(e, bm, neg, fq, ty);
  return sel(e, bz, zero, r1, ty);
}

static int int_width(eddy_dtype_t dt) {
  switch (dt) {
  case EDDY_DT_I1:
    return 1;
  case EDDY_DT_I8:
    return 8;
  case EDDY_DT_I32:
    return 32;
  default:
    return 64;
  }
}

/// core.cast of one element from dtype `from` to dtype `to`.
static int emit_cast(cpu_emit_t *e, eddy_dtype_t from, eddy_dtype_t to, int v) {
  const char *ft = cpu_reg_type(from), *tt = cpu_reg_type(to);
  if (from == to)
    return v;
  if (to == EDDY_DT_I1) { // x != 0, NaN -> true
    if (eddy_dtype_is_float(from)) {
      int c = to_calc(e, from, v);
      int z = fconst(e, calc_type(from), 0.0);
      return cmp(e, "arith.cmpf", "une", c, z, calc_type(from));
    }
    int z = iconst(e, ft, 0);
    return cmp(e, "arith.cmpi", "ne", v, z, ft);
  }
  if (eddy_dtype_is_float(from) && eddy_dtype_is_float(to)) {
    // Widening is exact; narrowing goes f64 -> f32 -> f16 (the contract's
    // rounding).
    if (to == EDDY_DT_F64)
      return cpu_float_widen(e, from, "f64", v);
    return cpu_float_narrow(e, calc_type(from), to, to_calc(e, from, v));
  }
  if (from == EDDY_DT_I1) { // 0 or 1
    int t = cpu_fresh(e);
    if (eddy_dtype_is_float(to)) {
      cpu_p(e, "%%t%d = arith.uitofp %%t%d : i1 to %s\n", t, v, tt);
    } else {
      cpu_p(e, "%%t%d = arith.extui %%t%d : i1 to %s\n", t, v, tt);
    }
    return t;
  }
  if (eddy_dtype_is_int(from) && eddy_dtype_is_int(to)) {
    int wf = int_width(from), wt = int_width(to);
    int t = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.%s %%t%d : %s to %s\n", t,
          wf < wt ? "extsi" : "trunci", v, ft, tt);
    return t;
  }
  if (eddy_dtype_is_int(from)) { // int -> float, to f16/bf16 through f32
    const char *mid = is_half(to) ? "f32" : tt;
    int t = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.sitofp %%t%d : %s to %s\n", t, v, ft, mid);
    return from_calc(e, to, t);
  }
  // float -> int: truncate toward zero, saturate, NaN -> 0. Compute in f64
  // so that the bounds 2^(w-1) are exact.
  int x = cpu_float_widen(e, from, "f64", v);
  int w = int_width(to);
  double hi = 1.0;
  for (int i = 0; i < w - 1; i++)
    hi *= 2.0;
  int chi = fconst(e, "f64", hi), clo = fconst(e, "f64", -hi);
  int imax = iconst(e, tt, (int64_t)(((uint64_t)1 << (w - 1)) - 1));
  int imin = iconst(e, tt, (int64_t)((uint64_t)-1 << (w - 1)));
  int zero = iconst(e, tt, 0);
  int fz = fconst(e, "f64", 0.0);
  // Clamp first so fptosi never sees an out-of-range value.
  int ge = cmp(e, "arith.cmpf", "oge", x, chi, "f64");
  int lt = cmp(e, "arith.cmpf", "olt", x, clo, "f64");
  int nan = cmp(e, "arith.cmpf", "uno", x, x, "f64");
  int bad = op2(e, "arith.ori", ge, lt, "i1");
  bad = op2(e, "arith.ori", bad, nan, "i1");
  int safe = sel(e, bad, fz, x, "f64");
  int c = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.fptosi %%t%d : f64 to %s\n", c, safe, tt);
  int r = sel(e, ge, imax, c, tt);
  r = sel(e, lt, imin, r, tt);
  return sel(e, nan, zero, r, tt);
}

/// ---- One element of a pointwise op

/// The signature of cpu_op_info_t.elem: x holds the operands' elements at
/// the result's index idx, dt is operand 0's dtype (the result's for iota).
#define ELEM_ARGS                                                              \
  cpu_emit_t *e, const eddy_op_t *op, const cpu_op_info_t *info,               \
      eddy_dtype_t dt, const int *x, const int *idx, int *out

static eddy_status_t no_dtype(const eddy_op_t *op, eddy_dtype_t dt) {
  return cpu_unsupported(op, "is not supported for %s by the CPU backend",
                         eddy_dtype_name(dt));
}

/// info->f on floats (computed in f32 for f16/bf16), info->i on integers
/// and i1: one operand (a math function) or two.
static eddy_status_t elem_arith(ELEM_ARGS) {
  (void)idx;
  bool one = op->num_operands == 1;
  if (eddy_dtype_is_float(dt) && info->f) {
    const char *ct = calc_type(dt);
    int a = to_calc(e, dt, x[0]);
    int r = one ? op1(e, info->f, a, ct)
                : op2(e, info->f, a, to_calc(e, dt, x[1]), ct);
    *out = from_calc(e, dt, r);
    return NULL;
  }
  if (eddy_dtype_is_float(dt) || !info->i || one)
    return no_dtype(op, dt);
  *out = op2(e, info->i, x[0], x[1], cpu_reg_type(dt));
  return NULL;
}

/// Comparisons: info->f is the float predicate, info->i the signed integer
/// one (i1 compares unsigned: false < true).
static eddy_status_t elem_compare(ELEM_ARGS) {
  (void)idx;
  if (eddy_dtype_is_float(dt)) {
    *out = cmp(e, "arith.cmpf", info->f, to_calc(e, dt, x[0]),
               to_calc(e, dt, x[1]), calc_type(dt));
    return NULL;
  }
  char pred[4];
  snprintf(pred, sizeof pred, "%s", info->i);
  if (dt == EDDY_DT_I1 && pred[0] == 's')
    pred[0] = 'u';
  *out = cmp(e, "arith.cmpi", pred, x[0], x[1], cpu_reg_type(dt));
  return NULL;
}

/// Integer negation wraps (MIN stays MIN), as runtime/scalar.h's ints do.
static eddy_status_t elem_neg(ELEM_ARGS) {
  if (eddy_dtype_is_float(dt))
    return elem_arith(e, op, info, dt, x, idx, out);
  const char *rt = cpu_reg_type(dt);
  *out = op2(e, "arith.subi", iconst(e, rt, 0), x[0], rt);
  return NULL;
}

static eddy_status_t elem_abs(ELEM_ARGS) {
  if (eddy_dtype_is_float(dt))
    return elem_arith(e, op, info, dt, x, idx, out);
  const char *rt = cpu_reg_type(dt);
  int zero = iconst(e, rt, 0);
  *out = sel(e, cmp(e, "arith.cmpi", "slt", x[0], zero, rt),
             op2(e, "arith.subi", zero, x[0], rt), x[0], rt);
  return NULL;
}

static eddy_status_t elem_square(ELEM_ARGS) {
  (void)info, (void)idx;
  if (!eddy_dtype_is_float(dt)) {
    *out = op2(e, "arith.muli", x[0], x[0], cpu_reg_type(dt));
    return NULL;
  }
  int a = to_calc(e, dt, x[0]);
  *out = from_calc(e, dt, op2(e, "arith.mulf", a, a, calc_type(dt)));
  return NULL;
}

/// exp, expm1, log and tanh: emit_vmath.c's inline forms where they apply
/// (f32, f16 and bf16 in the CPU target's host code), else the math op.
static eddy_status_t elem_vmath(ELEM_ARGS) {
  if (!cpu_vmath_applies(e, dt))
    return elem_arith(e, op, info, dt, x, idx, out);
  int a = to_calc(e, dt, x[0]), r;
  switch (eddy_dialects_opcode(op)) {
  case EDDY_OP_CORE_EXP:
    r = cpu_vmath_exp(e, a);
    break;
  case EDDY_OP_CORE_EXPM1:
    r = cpu_vmath_expm1(e, a);
    break;
  case EDDY_OP_CORE_LOG:
    r = cpu_vmath_log(e, a);
    break;
  default: // tanh
    r = cpu_vmath_tanh(e, a);
    break;
  }
  *out = from_calc(e, dt, r);
  return NULL;
}

/// 1 / (1 + exp(-x)), or emit_vmath.c's form where it applies.
static eddy_status_t elem_sigmoid(ELEM_ARGS) {
  (void)info, (void)idx;
  if (!eddy_dtype_is_float(dt))
    return no_dtype(op, dt);
  if (cpu_vmath_applies(e, dt)) {
    *out = from_calc(e, dt, cpu_vmath_sigmoid(e, to_calc(e, dt, x[0])));
    return NULL;
  }
  const char *ct = calc_type(dt);
  int a = to_calc(e, dt, x[0]), one = fconst(e, ct, 1.0);
  int ex = op1(e, "math.exp", op1(e, "arith.negf", a, ct), ct);
  *out = from_calc(
      e, dt, op2(e, "arith.divf", one, op2(e, "arith.addf", one, ex, ct), ct));
  return NULL;
}

/// runtime/scalar.h's relu: x if x > 0 or NaN ("ugt"), else +0.0.
static eddy_status_t elem_relu(ELEM_ARGS) {
  (void)info, (void)idx;
  if (!eddy_dtype_is_float(dt)) {
    const char *rt = cpu_reg_type(dt);
    *out = op2(e, "arith.maxsi", x[0], iconst(e, rt, 0), rt);
    return NULL;
  }
  const char *ct = calc_type(dt);
  int a = to_calc(e, dt, x[0]), zero = fconst(e, ct, 0.0);
  *out = from_calc(
      e, dt, sel(e, cmp(e, "arith.cmpf", "ugt", a, zero, ct), a, zero, ct));
  return NULL;
}

/// runtime/scalar.h's sign: sign(+-0) = +0, sign(NaN) = NaN.
static eddy_status_t elem_sign(ELEM_ARGS) {
  (void)info, (void)idx;
  if (!eddy_dtype_is_float(dt)) {
    const char *rt = cpu_reg_type(dt);
    int zero = iconst(e, rt, 0);
    *out = sel(e, cmp(e, "arith.cmpi", "sgt", x[0], zero, rt), iconst(e, rt, 1),
               sel(e, cmp(e, "arith.cmpi", "slt", x[0], zero, rt),
                   iconst(e, rt, -1), zero, rt),
               rt);
    return NULL;
  }
  const char *ct = calc_type(dt);
  int a = to_calc(e, dt, x[0]), zero = fconst(e, ct, 0.0);
  int nan = cmp(e, "arith.cmpf", "uno", a, a, ct);
  int r0 = sel(e, nan, a, zero, ct);
  int r1 = sel(e, cmp(e, "arith.cmpf", "olt", a, zero, ct), fconst(e, ct, -1.0),
               r0, ct);
  int r = sel(e, cmp(e, "arith.cmpf", "ogt", a, zero, ct), fconst(e, ct, 1.0),
              r1, ct);
  *out = from_calc(e, dt, r);
  return NULL;
}

static eddy_status_t elem_not(ELEM_ARGS) {
  (void)op, (void)info, (void)dt, (void)idx;
  *out = op2(e, "arith.xori", x[0], iconst(e, "i1", 1), "i1");
  return NULL;
}

/// Floats divide (IEEE); integers floor-divide (int_floordiv).
static eddy_status_t elem_div(ELEM_ARGS) {
  if (eddy_dtype_is_float(dt))
    return elem_arith(e, op, info, dt, x, idx, out);
  *out = int_floordiv(e, cpu_reg_type(dt), x[0], x[1]);
  return NULL;
}

/// Truncated remainder of integers (runtime/scalar.h): x rem 0 and
/// x rem -1 are 0, so remsi never traps.
/// bitnot: x xor -1.
static eddy_status_t elem_bitnot(ELEM_ARGS) {
  (void)op, (void)info, (void)idx;
  const char *ty = cpu_reg_type(dt);
  *out = op2(e, "arith.xori", x[0], iconst(e, ty, -1), ty);
  return NULL;
}

/// shift_left / shift_right (info->i: arith.shli / arith.shrsi), the count
/// clamped to [0, bits - 1] first (runtime/scalar.h), since arith's shifts
/// by the width or more are poison.
static eddy_status_t elem_shift(ELEM_ARGS) {
  (void)op, (void)idx;
  const char *ty = cpu_reg_type(dt);
  int bits = (int)eddy_dtype_size(dt) * 8;
  int c = op2(e, "arith.maxsi", x[1], iconst(e, ty, 0), ty);
  c = op2(e, "arith.minsi", c, iconst(e, ty, bits - 1), ty);
  *out = op2(e, info->i, x[0], c, ty);
  return NULL;
}

static eddy_status_t elem_rem(ELEM_ARGS) {
  if (eddy_dtype_is_float(dt))
    return elem_arith(e, op, info, dt, x, idx, out);
  const char *ty = cpu_reg_type(dt);
  int zero = iconst(e, ty, 0), one = iconst(e, ty, 1);
  int bz = cmp(e, "arith.cmpi", "eq", x[1], zero, ty);
  int bm = cmp(e, "arith.cmpi", "eq", x[1], iconst(e, ty, -1), ty);
  int special = op2(e, "arith.ori", bz, bm, "i1");
  int r = op2(e, "arith.remsi", x[0], sel(e, special, one, x[1], ty), ty);
  *out = sel(e, special, zero, r, ty);
  return NULL;
}

/// asin, acos, sinh and cosh: math ops, except in device code, where
/// MLIR 19's GPU lowering has no libdevice function for them (they would
/// become libm calls, which ptxas cannot resolve): there they are written
/// with the ones it has. asin x = atan2(x, sqrt((1-x)(1+x))), acos x =
/// atan2(sqrt((1-x)(1+x)), x), sinh x = (expm1 x - expm1 -x) / 2, cosh x =
/// (exp x + exp -x) / 2.
static eddy_status_t elem_device_math(ELEM_ARGS) {
  if (e->kernel_depth == 0 || !eddy_dtype_is_float(dt))
    return elem_arith(e, op, info, dt, x, idx, out);
  const char *ct = calc_type(dt);
  int a = to_calc(e, dt, x[0]), one = fconst(e, ct, 1.0),
      half = fconst(e, ct, 0.5), r = 0;
  int na = op1(e, "arith.negf", a, ct);
  switch (eddy_dialects_opcode(op)) {
  case EDDY_OP_CORE_ASIN:
  case EDDY_OP_CORE_ACOS: {
    int c = op1(e, "math.sqrt",
                op2(e, "arith.mulf", op2(e, "arith.subf", one, a, ct),
                    op2(e, "arith.addf", one, a, ct), ct),
                ct);
    r = eddy_dialects_opcode(op) == EDDY_OP_CORE_ASIN
            ? op2(e, "math.atan2", a, c, ct)
            : op2(e, "math.atan2", c, a, ct);
    break;
  }
  case EDDY_OP_CORE_SINH:
    r = op2(e, "arith.mulf",
            op2(e, "arith.subf", op1(e, "math.expm1", a, ct),
                op1(e, "math.expm1", na, ct), ct),
            half, ct);
    break;
  default: // cosh
    r = op2(e, "arith.mulf",
            op2(e, "arith.addf", op1(e, "math.exp", a, ct),
                op1(e, "math.exp", na, ct), ct),
            half, ct);
    break;
  }
  *out = from_calc(e, dt, r);
  return NULL;
}

/// C pow in double, rounded once (the contract).
static eddy_status_t elem_pow(ELEM_ARGS) {
  (void)info, (void)idx;
  if (!eddy_dtype_is_float(dt))
    return no_dtype(op, dt);
  int a = cpu_float_widen(e, dt, "f64", x[0]);
  int b = cpu_float_widen(e, dt, "f64", x[1]);
  *out = cpu_float_narrow(e, "f64", dt, op2(e, "math.powf", a, b, "f64"));
  return NULL;
}

static eddy_status_t elem_select(ELEM_ARGS) {
  (void)info, (void)dt, (void)idx;
  *out = sel(e, x[0], x[1], x[2], cpu_reg_type(op->results[0].type->dtype));
  return NULL;
}

static eddy_status_t elem_cast(ELEM_ARGS) {
  (void)info, (void)idx;
  *out = emit_cast(e, dt, op->results[0].type->dtype, x[0]);
  return NULL;
}

/// The operand's element: broadcast_to (the index map broadcasts) and
/// stop_gradient.
static eddy_status_t elem_identity(ELEM_ARGS) {
  (void)e, (void)op, (void)info, (void)dt, (void)idx;
  *out = x[0];
  return NULL;
}

static eddy_status_t elem_iota(ELEM_ARGS) {
  (void)info, (void)dt, (void)x;
  const eddy_type_t *rt = op->results[0].type;
  int64_t d = eddy_ir_op_attr_int(op, "dimension", 0);
  if (d < 0)
    d += rt->rank;
  int i64v = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.index_cast %%t%d : index to i64\n", i64v, idx[d]);
  *out = emit_cast(e, EDDY_DT_I64, rt->dtype, i64v);
  return NULL;
}

/// Index of operand v (broadcast to the shape of result r) from result
/// idx.
static eddy_status_t bcast_index(cpu_emit_t *e, eddy_value_t *r,
                                 eddy_value_t *v, const int *idx, int *oidx) {
  const eddy_type_t *ot = v->type, *rt = r->type;
  int32_t off = rt->rank - ot->rank;
  int od[EDDY_RT_MAX_RANK];
  // A `?` dim that is the result's (cpu_dims_same) reads the result's index.
  bool same[EDDY_RT_MAX_RANK], need = false;
  for (int32_t j = 0; j < ot->rank; j++) {
    same[j] = ot->dims[j] < 0 && cpu_dims_same(e, v, j, r, j + off);
    need |= ot->dims[j] < 0 && !same[j];
  }
  if (need)
    EDDY_RETURN_IF_ERROR(cpu_dims(e, v, false, od));
  for (int32_t j = 0; j < ot->rank; j++) {
    if (ot->dims[j] == 1 && rt->dims[j + off] != 1) {
      oidx[j] = cpu_index_const(e, 0);
    } else if (ot->dims[j] < 0 && !same[j]) {
      // A dynamic dim of 1 broadcasts: read index 0.
      int one = cpu_index_const(e, 1), zero = cpu_index_const(e, 0);
      int c = cpu_fresh(e), s = cpu_fresh(e);
      cpu_p(e, "%%t%d = arith.cmpi eq, %%t%d, %%t%d : index\n", c, od[j], one);
      cpu_p(e, "%%t%d = arith.select %%t%d, %%t%d, %%t%d : index\n", s, c,
            zero, idx[j + off]);
      oidx[j] = s;
    } else {
      oidx[j] = idx[j + off];
    }
  }
  return NULL;
}

bool cpu_op_is_pointwise(const eddy_op_t *op) {
  return cpu_op_info(op)->cls == CPU_OP_POINTWISE;
}

bool cpu_op_can_consume_fused(const eddy_op_t *op) {
  const cpu_op_info_t *info = cpu_op_info(op);
  return info->cls == CPU_OP_POINTWISE || info->reads_once;
}

eddy_status_t cpu_pointwise(cpu_emit_t *e, eddy_op_t *op, const int *idx,
                            int *out) {
  const cpu_op_info_t *info = cpu_op_info(op);
  const eddy_type_t *rt = op->results[0].type;
  int vals[3];
  if (info->cls != CPU_OP_POINTWISE || op->num_operands > 3)
    return cpu_unsupported(op, "is not supported by the CPU backend yet");
  for (uint32_t i = 0; i < op->num_operands; i++) {
    eddy_value_t *v = eddy_ir_op_operand(op, i);
    int oidx[EDDY_RT_MAX_RANK];
    EDDY_RETURN_IF_ERROR(bcast_index(e, &op->results[0], v, idx, oidx));
    EDDY_RETURN_IF_ERROR(cpu_expr(e, v, oidx, &vals[i]));
  }
  eddy_dtype_t odt =
      op->num_operands ? eddy_ir_op_operand(op, 0)->type->dtype : rt->dtype;
  return info->elem(e, op, info, odt, vals, idx, out);
}

/// ---- kernels

static eddy_status_t kernel_reduce(cpu_emit_t *e, eddy_op_t *op) {
  eddy_value_t *in = eddy_ir_op_operand(op, 0);
  const eddy_type_t *it = in->type, *rt = op->results[0].type;
  cpu_val_t *rv = cpu_val_get(e, &op->results[0]);
  const cpu_op_info_t *info = cpu_op_info(op);
  eddy_opcode_t k = eddy_dialects_opcode(op);
  bool prod = k == EDDY_OP_CORE_REDUCE_PROD,
       mean = k == EDDY_OP_CORE_REDUCE_MEAN;
  bool mx = k == EDDY_OP_CORE_REDUCE_MAX, mn = k == EDDY_OP_CORE_REDUCE_MIN;
  bool keep = eddy_ir_op_attr_bool(op, "keepdims", false);
  bool red[EDDY_RT_MAX_RANK] = {false};
  int64_t axes[EDDY_RT_MAX_RANK];
  const eddy_attr_t *ax = eddy_ir_op_attr(op, "axes");
  int64_t na = ax ? eddy_ir_attr_as_i64_array(ax, axes, EDDY_RT_MAX_RANK) : -1;
  if (na < 0 || na > EDDY_RT_MAX_RANK)
    return cpu_unsupported(op, "needs an 'axes' array of integers");
  int64_t count = 1;
  for (int64_t i = 0; i < na; i++) {
    int64_t a = axes[i] < 0 ? axes[i] + it->rank : axes[i];
    red[a] = true;
  }
  int64_t rdims[EDDY_RT_MAX_RANK];
  int32_t nr = 0;
  for (int32_t d = 0; d < it->rank; d++)
    if (red[d]) {
      rdims[nr++] = it->dims[d];
      count *= it->dims[d];
    }
  // Run-time dims (constants where static).
  bool dyn = cpu_type_is_dynamic(it) || cpu_type_is_dynamic(rt);
  int idims[EDDY_RT_MAX_RANK], odims[EDDY_RT_MAX_RANK];
  int rdv[EDDY_RT_MAX_RANK];
  if (dyn) {
    EDDY_RETURN_IF_ERROR(cpu_dims(e, in, false, idims));
    EDDY_RETURN_IF_ERROR(cpu_dims(e, &op->results[0], false, odims));
    for (int32_t d = 0, j = 0; d < it->rank; d++)
      if (red[d])
        rdv[j++] = idims[d];
  }
  eddy_dtype_t dt = it->dtype;
  bool fl = eddy_dtype_is_float(dt);
  bool sum_like = !mx && !mn;
  // Float sums, products and means accumulate in f64 (the contract).
  const char *acc_t =
      fl ? (sum_like ? "f64" : calc_type(dt)) : cpu_reg_type(dt);
  int oidx[EDDY_RT_MAX_RANK];
  if (dyn)
    cpu_loops_open_v(e, rt->rank, odims, oidx);
  else
    cpu_loops_open(e, rt->rank, rt->dims, oidx);
  int init;
  if (prod)
    init = fl ? fconst(e, acc_t, 1.0) : iconst(e, acc_t, 1);
  else if (mx || mn) {
    if (fl) {
      init = fconst(e, acc_t, mx ? -__builtin_inf() : __builtin_inf());
    } else {
      int w = int_width(dt);
      init = iconst(e, acc_t,
                    mx ? (int64_t)((uint64_t)-1 << (w - 1))
                       : (int64_t)(((uint64_t)1 << (w - 1)) - 1));
    }
  } else
    init = fl ? fconst(e, acc_t, 0.0) : iconst(e, acc_t, 0);
  // Reduction loops carry the accumulator in iter_args.
  int ridx[EDDY_RT_MAX_RANK], acc[EDDY_RT_MAX_RANK + 1], res[EDDY_RT_MAX_RANK];
  acc[0] = init;
  for (int32_t j = 0; j < nr; j++) {
    int lb = cpu_index_const(e, 0);
    int ub = dyn ? rdv[j] : cpu_index_const(e, rdims[j]);
    int st = cpu_index_const(e, 1);
    ridx[j] = cpu_fresh(e);
    acc[j + 1] = cpu_fresh(e);
    res[j] = cpu_fresh(e);
    cpu_p(e,
          "%%t%d = scf.for %%t%d = %%t%d to %%t%d step %%t%d iter_args(%%t%d "
          "= %%t%d) -> (%s) {\n",
          res[j], ridx[j], lb, ub, st, acc[j + 1], acc[j], acc_t);
  }
  int iidx[EDDY_RT_MAX_RANK];
  int32_t ro = 0, rr = 0;
  for (int32_t d = 0; d < it->rank; d++) {
    if (red[d]) {
      iidx[d] = ridx[rr++];
      if (keep)
        ro++;
    } else {
      iidx[d] = oidx[ro++];
    }
  }
  int x;
  EDDY_RETURN_IF_ERROR(cpu_expr(e, in, iidx, &x));
  int cur = acc[nr], nx;
  if (fl)
    x = cpu_float_widen(e, dt, acc_t, x);
  nx = op2(e, fl ? info->f : info->i, cur, x, acc_t);
  if (nr > 0)
    cpu_p(e, "scf.yield %%t%d : %s\n", nx, acc_t);
  for (int32_t j = nr - 1; j >= 0; j--) {
    cpu_p(e, "}\n");
    if (j > 0)
      cpu_p(e, "scf.yield %%t%d : %s\n", res[j], acc_t);
  }
  // No reduced axes: each result element is init (op) x.
  int r = nr ? res[0] : nx;
  if (mean && dyn) {
    // count = product of the reduced run-time dims; integer mean of
    // nothing is 0 (the contract), float mean of nothing is NaN (0/0).
    int c = cpu_index_const(e, 1);
    for (int32_t j = 0; j < nr; j++)
      c = op2(e, "arith.muli", c, rdv[j], "index");
    int ci = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.index_cast %%t%d : index to i64\n", ci, c);
    if (fl) {
      int cf = cpu_fresh(e);
      cpu_p(e, "%%t%d = arith.sitofp %%t%d : i64 to f64\n", cf, ci);
      r = op2(e, "arith.divf", r, cf, "f64");
    } else {
      int cw = ci;
      if (strcmp(acc_t, "i64") != 0) {
        cw = cpu_fresh(e);
        cpu_p(e, "%%t%d = arith.trunci %%t%d : i64 to %s\n", cw, ci, acc_t);
      }
      int z = iconst(e, acc_t, 0), one = iconst(e, acc_t, 1);
      int isz = cmp(e, "arith.cmpi", "eq", cw, z, acc_t);
      int safe = sel(e, isz, one, cw, acc_t);
      r = sel(e, isz, z, op2(e, "arith.divsi", r, safe, acc_t), acc_t);
    }
  } else if (mean) {
    if (fl) {
      r = op2(e, "arith.divf", r, fconst(e, "f64", (double)count), "f64");
    } else {
      int c = iconst(e, acc_t, count);
      r = count ? op2(e, "arith.divsi", r, c, acc_t) : iconst(e, acc_t, 0);
    }
  }
  if (fl)
    r = cpu_float_narrow(e, acc_t, dt, r);
  cpu_store(e, rv->buf, rt, oidx, r);
  cpu_loops_close(e, rt->rank);
  return NULL;
}

/// Unflattens the row-major index n over dims into idx.
static void unflatten(cpu_emit_t *e, int n, int32_t rank, const int64_t *dims,
                      int *idx) {
  int d[EDDY_RT_MAX_RANK];
  for (int32_t i = 0; i < rank; i++)
    d[i] = cpu_index_const(e, dims[i]);
  cpu_unflatten_v(e, n, rank, d, idx);
}

static eddy_status_t kernel_reshape(cpu_emit_t *e, eddy_op_t *op) {
  eddy_value_t *in = eddy_ir_op_operand(op, 0);
  const eddy_type_t *rt = op->results[0].type;
  cpu_val_t *rv = cpu_val_get(e, &op->results[0]);
  if (cpu_type_is_dynamic(rt) || cpu_type_is_dynamic(in->type)) {
    // Each result element (row-major) reads the input element of the same
    // flat position; a 0 dim means no iterations, so no division by 0.
    int od[EDDY_RT_MAX_RANK], id[EDDY_RT_MAX_RANK], oidx[EDDY_RT_MAX_RANK],
        iidx[EDDY_RT_MAX_RANK], x;
    EDDY_RETURN_IF_ERROR(cpu_dims(e, &op->results[0], false, od));
    EDDY_RETURN_IF_ERROR(cpu_dims(e, in, false, id));
    cpu_loops_open_v(e, rt->rank, od, oidx);
    int flat = cpu_index_const(e, 0);
    for (int32_t d = 0; d < rt->rank; d++)
      flat = op2(e, "arith.addi", op2(e, "arith.muli", flat, od[d], "index"),
                 oidx[d], "index");
    cpu_unflatten_v(e, flat, in->type->rank, id, iidx);
    EDDY_RETURN_IF_ERROR(cpu_expr(e, in, iidx, &x));
    cpu_store(e, rv->buf, rt, oidx, x);
    cpu_loops_close(e, rt->rank);
    return NULL;
  }
  int64_t n = eddy_ir_type_num_elements(rt);
  int flat[1];
  cpu_loops_open(e, 1, &n, flat);
  int iidx[EDDY_RT_MAX_RANK], oidx[EDDY_RT_MAX_RANK], x;
  unflatten(e, flat[0], in->type->rank, in->type->dims, iidx);
  unflatten(e, flat[0], rt->rank, rt->dims, oidx);
  EDDY_RETURN_IF_ERROR(cpu_expr(e, in, iidx, &x));
  cpu_store(e, rv->buf, rt, oidx, x);
  cpu_loops_close(e, 1);
  return NULL;
}

static eddy_status_t kernel_transpose(cpu_emit_t *e, eddy_op_t *op) {
  eddy_value_t *in = eddy_ir_op_operand(op, 0);
  const eddy_type_t *rt = op->results[0].type;
  cpu_val_t *rv = cpu_val_get(e, &op->results[0]);
  int64_t perm[EDDY_RT_MAX_RANK];
  const eddy_attr_t *pa = eddy_ir_op_attr(op, "perm");
  if (!pa || eddy_ir_attr_as_i64_array(pa, perm, EDDY_RT_MAX_RANK) != rt->rank)
    return cpu_unsupported(op, "needs a 'perm' of the result's rank");
  int oidx[EDDY_RT_MAX_RANK], iidx[EDDY_RT_MAX_RANK], x;
  EDDY_RETURN_IF_ERROR(loops_over(e, &op->results[0], oidx));
  for (int32_t j = 0; j < rt->rank; j++) {
    int64_t p = perm[j] < 0 ? perm[j] + rt->rank : perm[j];
    iidx[p] = oidx[j];
  }
  EDDY_RETURN_IF_ERROR(cpu_expr(e, in, iidx, &x));
  cpu_store(e, rv->buf, rt, oidx, x);
  cpu_loops_close(e, rt->rank);
  return NULL;
}

/// core.shape / core.dim of a static operand: constants.
static void shape_stores(cpu_emit_t *e, eddy_op_t *op, const eddy_type_t *it,
                         const eddy_type_t *rt, const cpu_val_t *rv,
                         const int *d);

static eddy_status_t kernel_shape(cpu_emit_t *e, eddy_op_t *op) {
  const eddy_type_t *it = eddy_ir_op_operand(op, 0)->type;
  const eddy_type_t *rt = op->results[0].type;
  cpu_val_t *rv = cpu_val_get(e, &op->results[0]);
  // The run-time dims are read on the host; the stores run there too, or in
  // the GPU target's forms in a one-element kernel.
  int d[EDDY_RT_MAX_RANK];
  if (cpu_type_is_dynamic(it))
    EDDY_RETURN_IF_ERROR(cpu_dims(e, eddy_ir_op_operand(op, 0), false, d));
  cpu_loops_open(e, 0, NULL, NULL);
  shape_stores(e, op, it, rt, rv, d);
  cpu_loops_close(e, 0);
  return NULL;
}

static void shape_stores(cpu_emit_t *e, eddy_op_t *op, const eddy_type_t *it,
                         const eddy_type_t *rt, const cpu_val_t *rv,
                         const int *d) {
  if (cpu_type_is_dynamic(it)) {
    int64_t one = eddy_ir_op_attr_int(op, "index", 0);
    if (one < 0)
      one += it->rank;
    for (int32_t k = 0; k < it->rank; k++) {
      bool dim = eddy_dialects_opcode(op) == EDDY_OP_CORE_DIM;
      if (dim && k != one)
        continue;
      int v = cpu_fresh(e);
      cpu_p(e, "%%t%d = arith.index_cast %%t%d : index to i64\n", v, d[k]);
      int i = cpu_index_const(e, k);
      cpu_store(e, rv->buf, rt, dim ? NULL : &i, v);
    }
    return;
  }
  if (eddy_dialects_opcode(op) == EDDY_OP_CORE_DIM) {
    int64_t k = eddy_ir_op_attr_int(op, "index", 0);
    if (k < 0)
      k += it->rank;
    cpu_store(e, rv->buf, rt, NULL, iconst(e, "i64", it->dims[k]));
    return;
  }
  for (int32_t k = 0; k < it->rank; k++) {
    int i = cpu_index_const(e, k);
    cpu_store(e, rv->buf, rt, &i, iconst(e, "i64", it->dims[k]));
  }
}

/// An int array attribute with one entry per dimension (or dflt when the
/// attribute is absent and dflt_ok).
static eddy_status_t dims_attr(const eddy_op_t *op, const char *name,
                               int32_t rank, bool dflt_ok, int64_t dflt,
                               int64_t *out) {
  const eddy_attr_t *a = eddy_ir_op_attr(op, name);
  if (!a && dflt_ok) {
    for (int32_t i = 0; i < rank; i++)
      out[i] = dflt;
    return NULL;
  }
  if (!a || eddy_ir_attr_as_i64_array(a, out, EDDY_RT_MAX_RANK) != rank)
    return cpu_unsupported(op, "needs '%s' with one entry per dimension", name);
  return NULL;
}

/// idx[d] * mul + add as an index value (constants folded away).
static int affine(cpu_emit_t *e, int idx, int64_t mul, int64_t add) {
  int v = idx;
  if (mul != 1)
    v = op2(e, "arith.muli", v, cpu_index_const(e, mul), "index");
  if (add != 0)
    v = op2(e, "arith.addi", v, cpu_index_const(e, add), "index");
  return v;
}

static eddy_status_t kernel_slice(cpu_emit_t *e, eddy_op_t *op) {
  eddy_value_t *in = eddy_ir_op_operand(op, 0);
  const eddy_type_t *rt = op->results[0].type;
  int64_t start[EDDY_RT_MAX_RANK], strides[EDDY_RT_MAX_RANK];
  EDDY_RETURN_IF_ERROR(dims_attr(op, "start", rt->rank, false, 0, start));
  EDDY_RETURN_IF_ERROR(dims_attr(op, "strides", rt->rank, true, 1, strides));
  int oidx[EDDY_RT_MAX_RANK], iidx[EDDY_RT_MAX_RANK], x;
  EDDY_RETURN_IF_ERROR(loops_over(e, &op->results[0], oidx));
  for (int32_t d = 0; d < rt->rank; d++)
    iidx[d] = affine(e, oidx[d], strides[d], start[d]);
  EDDY_RETURN_IF_ERROR(cpu_expr(e, in, iidx, &x));
  cpu_store(e, cpu_val_get(e, &op->results[0])->buf, rt, oidx, x);
  cpu_loops_close(e, rt->rank);
  return NULL;
}

/// Each result element is x[i - low] when that is inside x, else the
/// padding value; the load sits in an scf.if so it never reads outside x.
static eddy_status_t kernel_pad(cpu_emit_t *e, eddy_op_t *op) {
  eddy_value_t *in = eddy_ir_op_operand(op, 0);
  eddy_value_t *pv = eddy_ir_op_operand(op, 1);
  const eddy_type_t *it = in->type, *rt = op->results[0].type;
  int64_t low[EDDY_RT_MAX_RANK];
  EDDY_RETURN_IF_ERROR(dims_attr(op, "low", rt->rank, false, 0, low));
  const char *ty = cpu_reg_type(rt->dtype);
  int oidx[EDDY_RT_MAX_RANK], iidx[EDDY_RT_MAX_RANK], x, v;
  int idims[EDDY_RT_MAX_RANK];
  bool dyn = cpu_type_is_dynamic(it);
  if (dyn)
    EDDY_RETURN_IF_ERROR(cpu_dims(e, in, false, idims));
  EDDY_RETURN_IF_ERROR(loops_over(e, &op->results[0], oidx));
  int inb = iconst(e, "i1", 1);
  for (int32_t d = 0; d < rt->rank; d++) {
    int lo = cpu_index_const(e, low[d]);
    int hi = dyn ? op2(e, "arith.addi", idims[d], lo, "index")
                 : cpu_index_const(e, low[d] + it->dims[d]);
    int ge = cmp(e, "arith.cmpi", "uge", oidx[d], lo, "index");
    int lt = cmp(e, "arith.cmpi", "ult", oidx[d], hi, "index");
    inb = op2(e, "arith.andi", inb, op2(e, "arith.andi", ge, lt, "i1"), "i1");
  }
  int r = cpu_fresh(e);
  cpu_p(e, "%%t%d = scf.if %%t%d -> (%s) {\n", r, inb, ty);
  for (int32_t d = 0; d < rt->rank; d++)
    iidx[d] =
        op2(e, "arith.subi", oidx[d], cpu_index_const(e, low[d]), "index");
  EDDY_RETURN_IF_ERROR(cpu_expr(e, in, iidx, &x));
  cpu_p(e, "scf.yield %%t%d : %s\n} else {\n", x, ty);
  EDDY_RETURN_IF_ERROR(cpu_expr(e, pv, NULL, &v));
  cpu_p(e, "scf.yield %%t%d : %s\n}\n", v, ty);
  cpu_store(e, cpu_val_get(e, &op->results[0])->buf, rt, oidx, r);
  cpu_loops_close(e, rt->rank);
  return NULL;
}

static eddy_status_t kernel_concat(cpu_emit_t *e, eddy_op_t *op) {
  const eddy_type_t *rt = op->results[0].type;
  int64_t axis = eddy_ir_op_attr_int(op, "axis", 0);
  if (axis < 0)
    axis += rt->rank;
  int buf = cpu_val_get(e, &op->results[0])->buf;
  int64_t off = 0;
  bool dyn = false;
  for (uint32_t k = 0; k < op->num_operands; k++)
    dyn = dyn || cpu_type_is_dynamic(eddy_ir_op_operand(op, k)->type);
  int offv = cpu_index_const(e, 0);
  // One loop nest per operand, writing its block of the result.
  for (uint32_t k = 0; k < op->num_operands; k++) {
    eddy_value_t *in = eddy_ir_op_operand(op, k);
    const eddy_type_t *it = in->type;
    int iidx[EDDY_RT_MAX_RANK], oidx[EDDY_RT_MAX_RANK], x;
    int id[EDDY_RT_MAX_RANK];
    if (dyn) {
      EDDY_RETURN_IF_ERROR(cpu_dims(e, in, false, id));
      cpu_loops_open_v(e, it->rank, id, iidx);
    } else {
      cpu_loops_open(e, it->rank, it->dims, iidx);
    }
    for (int32_t d = 0; d < it->rank; d++)
      oidx[d] = d != axis ? iidx[d]
                : dyn     ? op2(e, "arith.addi", iidx[d], offv, "index")
                          : affine(e, iidx[d], 1, off);
    EDDY_RETURN_IF_ERROR(cpu_expr(e, in, iidx, &x));
    cpu_store(e, buf, rt, oidx, x);
    cpu_loops_close(e, it->rank);
    if (dyn)
      offv = op2(e, "arith.addi", offv, id[axis], "index");
    off += it->dims[axis];
  }
  return NULL;
}

static eddy_status_t kernel_split(cpu_emit_t *e, eddy_op_t *op) {
  eddy_value_t *in = eddy_ir_op_operand(op, 0);
  int64_t axis = eddy_ir_op_attr_int(op, "axis", 0);
  if (axis < 0)
    axis += in->type->rank;
  for (uint32_t k = 0; k < op->num_results; k++) {
    const eddy_type_t *rt = op->results[k].type;
    int oidx[EDDY_RT_MAX_RANK], iidx[EDDY_RT_MAX_RANK], x;
    if (cpu_type_is_dynamic(rt)) {
      int od[EDDY_RT_MAX_RANK];
      EDDY_RETURN_IF_ERROR(cpu_dims(e, &op->results[k], false, od));
      cpu_loops_open_v(e, rt->rank, od, oidx);
      int base = op2(e, "arith.muli", od[axis], cpu_index_const(e, (int64_t)k),
                     "index");
      for (int32_t d = 0; d < rt->rank; d++)
        iidx[d] = d == axis ? op2(e, "arith.addi", oidx[d], base, "index")
                            : oidx[d];
    } else {
      cpu_loops_open(e, rt->rank, rt->dims, oidx);
      for (int32_t d = 0; d < rt->rank; d++)
        iidx[d] = d == axis ? affine(e, oidx[d], 1, (int64_t)k * rt->dims[d])
                            : oidx[d];
    }
    EDDY_RETURN_IF_ERROR(cpu_expr(e, in, iidx, &x));
    cpu_store(e, cpu_val_get(e, &op->results[k])->buf, rt, oidx, x);
    cpu_loops_close(e, rt->rank);
  }
  return NULL;
}

eddy_status_t cpu_gather_row_view(cpu_emit_t *e, eddy_op_t *op) {
  eddy_value_t *params = eddy_ir_op_operand(op, 0);
  eddy_value_t *indices = eddy_ir_op_operand(op, 1);
  const eddy_type_t *pt = params->type, *it = indices->type;
  const eddy_type_t *rt = op->results[0].type;
  int site = cpu_error_site(e, op);
  int iv;
  EDDY_RETURN_IF_ERROR(cpu_expr(e, indices, NULL, &iv));
  if (it->dtype != EDDY_DT_I64) {
    int t = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.extsi %%t%d : %s to i64\n", t, iv,
          cpu_reg_type(it->dtype));
    iv = t;
  }
  int size = iconst(e, "i64", pt->dims[0]);
  int neg = cmp(e, "arith.cmpi", "slt", iv, iconst(e, "i64", 0), "i64");
  int big = cmp(e, "arith.cmpi", "sge", iv, size, "i64");
  int bad = op2(e, "arith.ori", neg, big, "i1");
  cpu_fail_if(e, bad, site, iv, size);
  int safe = sel(e, bad, iconst(e, "i64", 0), iv, "i64");
  int64_t row = eddy_ir_type_num_elements(rt) * (int64_t)eddy_dtype_size(rt->dtype);
  int off = op2(e, "arith.muli", safe, iconst(e, "i64", row), "i64");
  int base = cpu_buf_ptr(e, cpu_val_get(e, params)->buf, pt);
  int q = cpu_fresh(e);
  cpu_p(e,
        "%%t%d = llvm.getelementptr %%t%d[%%t%d] : (!llvm.ptr, i64) -> "
        "!llvm.ptr, i8\n",
        q, base, off);
  cpu_val_t *cv = cpu_val_new(e, &op->results[0]);
  cv->buf = cpu_memref_from_ptr(e, q, rt);
  if (e->dyn) {
    // Inside a gate: the address goes to a slot for cpu_view_rebind.
    const eddy_type_t *i64s = eddy_ir_scalar_type_get(e->ctx, EDDY_DT_I64);
    cv->vslot = cpu_alloc_slot(e, i64s);
    int a = cpu_fresh(e);
    cpu_p(e, "%%t%d = llvm.ptrtoint %%t%d : !llvm.ptr to i64\n", a, q);
    cpu_store(e, cv->vslot, i64s, NULL, a);
  }
  return NULL;
}

/// result[pre, j..., post] = params[pre, indices[j...], post]. An index
/// outside [0, dim) is a run-time error (reported by the entry at its end);
/// meanwhile 0 is stored and params is not read, so nothing outside it is
/// touched.
static eddy_status_t kernel_gather(cpu_emit_t *e, eddy_op_t *op) {
  eddy_value_t *params = eddy_ir_op_operand(op, 0);
  eddy_value_t *indices = eddy_ir_op_operand(op, 1);
  const eddy_type_t *pt = params->type, *it = indices->type;
  const eddy_type_t *rt = op->results[0].type;
  int64_t axis = eddy_ir_op_attr_int(op, "axis", 0);
  if (axis < 0)
    axis += pt->rank;
  int site = cpu_error_site(e, op);
  int oidx[EDDY_RT_MAX_RANK], pidx[EDDY_RT_MAX_RANK], iidx[EDDY_RT_MAX_RANK];
  int size;
  if (pt->dims[axis] < 0) {
    int pd[EDDY_RT_MAX_RANK];
    EDDY_RETURN_IF_ERROR(cpu_dims(e, params, false, pd));
    size = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.index_cast %%t%d : index to i64\n", size, pd[axis]);
  } else {
    size = iconst(e, "i64", pt->dims[axis]);
  }
  EDDY_RETURN_IF_ERROR(loops_over(e, &op->results[0], oidx));
  for (int32_t j = 0; j < it->rank; j++)
    iidx[j] = oidx[axis + j];
  int iv;
  EDDY_RETURN_IF_ERROR(cpu_expr(e, indices, iidx, &iv));
  const char *ity = cpu_reg_type(it->dtype);
  if (it->dtype != EDDY_DT_I64) {
    int t = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.extsi %%t%d : %s to i64\n", t, iv, ity);
    iv = t;
  }
  int neg = cmp(e, "arith.cmpi", "slt", iv, iconst(e, "i64", 0), "i64");
  int big = cmp(e, "arith.cmpi", "sge", iv, size, "i64");
  int bad = op2(e, "arith.ori", neg, big, "i1");
  cpu_fail_if(e, bad, site, iv, size);
  int safe = sel(e, bad, iconst(e, "i64", 0), iv, "i64");
  int ix = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.index_cast %%t%d : i64 to index\n", ix, safe);
  for (int32_t d = 0; d < pt->rank; d++) {
    if (d < axis)
      pidx[d] = oidx[d];
    else if (d == axis)
      pidx[d] = ix;
    else
      pidx[d] = oidx[d + it->rank - 1];
  }
  // params is read only at a valid index: with a bad one (also any index
  // when the gathered axis is 0, where params may have no storage at all)
  // the element is 0 and the error is reported.
  const char *rty = cpu_reg_type(rt->dtype);
  int x = cpu_fresh(e), v;
  cpu_p(e, "%%t%d = scf.if %%t%d -> (%s) {\n", x, bad, rty);
  int z;
  if (rt->dtype == EDDY_DT_I1) {
    z = iconst(e, "i1", 0);
  } else if (eddy_dtype_is_float(rt->dtype)) {
    z = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.constant 0.0 : %s\n", z, rty);
  } else {
    z = iconst(e, rty, 0);
  }
  cpu_p(e, "scf.yield %%t%d : %s\n} else {\n", z, rty);
  EDDY_RETURN_IF_ERROR(cpu_expr(e, params, pidx, &v));
  cpu_p(e, "scf.yield %%t%d : %s\n}\n", v, rty);
  cpu_store(e, cpu_val_get(e, &op->results[0])->buf, rt, oidx, x);
  cpu_loops_close(e, rt->rank);
  return NULL;
}

int cpu_emit_cast(cpu_emit_t *e, eddy_dtype_t from, eddy_dtype_t to, int v) {
  return emit_cast(e, from, to, v);
}

/// core.range: element i = start + i * delta, in f32 (f64 for f64) or i64.
/// Its length comes from infer_dims (emit_shape.c), which checks delta.
static eddy_status_t kernel_range(cpu_emit_t *e, eddy_op_t *op) {
  const eddy_type_t *rt = op->results[0].type;
  cpu_val_t *rv = cpu_val_get(e, &op->results[0]);
  eddy_dtype_t dt = rt->dtype;
  eddy_dtype_t wt = !eddy_dtype_is_float(dt) ? EDDY_DT_I64
                    : dt == EDDY_DT_F64      ? EDDY_DT_F64
                                             : EDDY_DT_F32;
  bool fl = wt != EDDY_DT_I64;
  int d[1], idx[1], s, dl;
  EDDY_RETURN_IF_ERROR(cpu_dims(e, &op->results[0], false, d));
  cpu_loops_open_v(e, 1, d, idx);
  EDDY_RETURN_IF_ERROR(cpu_expr(e, eddy_ir_op_operand(op, 0), NULL, &s));
  EDDY_RETURN_IF_ERROR(cpu_expr(e, eddy_ir_op_operand(op, 2), NULL, &dl));
  s = emit_cast(e, dt, wt, s);
  dl = emit_cast(e, dt, wt, dl);
  int i64v = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.index_cast %%t%d : index to i64\n", i64v, idx[0]);
  int iw = emit_cast(e, EDDY_DT_I64, wt, i64v);
  const char *ws = cpu_reg_type(wt);
  int m = op2(e, fl ? "arith.mulf" : "arith.muli", iw, dl, ws);
  int x = op2(e, fl ? "arith.addf" : "arith.addi", s, m, ws);
  cpu_store(e, rv->buf, rt, idx, emit_cast(e, wt, dt, x));
  cpu_loops_close(e, 1);
  return NULL;
}

static eddy_status_t kernel_matmul(cpu_emit_t *e, eddy_op_t *op) {
  return cpu_type_is_dynamic(op->results[0].type) ||
                 cpu_type_is_dynamic(eddy_ir_op_operand(op, 0)->type) ||
                 cpu_type_is_dynamic(eddy_ir_op_operand(op, 1)->type)
             ? cpu_matmul_dyn(e, op)
             : cpu_matmul(e, op);
}

eddy_status_t cpu_kernel(cpu_emit_t *e, eddy_op_t *op) {
  const cpu_op_info_t *info = cpu_op_info(op);
  if (info->cls != CPU_OP_KERNEL)
    return cpu_unsupported(op, "is not supported by the CPU backend yet");
  return info->kernel(e, op);
}

/// ---- The op table

/// Indexed by opcode: how the CPU backend emits each core, ctl and tl op
/// (and the GPU target, which shares this emitter), or why it does not
/// emit it on its own. tests/unit/cpu/test_cpu_table.c holds every opcode
/// to one or the other.
#define PW(E, FN, F, I)                                                        \
  [EDDY_OP_CORE_##E] = {.cls = CPU_OP_POINTWISE, .elem = FN, .f = F, .i = I}
#define KERNEL(E, FN, ONCE)                                                    \
  [EDDY_OP_CORE_##E] = {.cls = CPU_OP_KERNEL, .kernel = FN, .reads_once = ONCE}
#define REDUCE(E, F, I)                                                        \
  [EDDY_OP_CORE_REDUCE_##E] = {.cls = CPU_OP_KERNEL,                           \
                               .kernel = kernel_reduce,                        \
                               .f = F,                                         \
                               .i = I,                                         \
                               .reads_once = true}
#define LIST(E, FN)                                                            \
  [EDDY_OP_TL_##E] = {.cls = CPU_OP_LIST, .kernel = FN, .fallible = true}
#define TERMINATOR "a terminator: the op holding its region emits it"

static const cpu_op_info_t k_ops[EDDY_OP_COUNT_] = {
    [EDDY_OP_CORE_CONSTANT] = {.cls = CPU_OP_CONSTANT},
    PW(IOTA, elem_iota, NULL, NULL),
    PW(NEG, elem_neg, "arith.negf", NULL),
    PW(ABS, elem_abs, "math.absf", NULL),
    PW(EXP, elem_vmath, "math.exp", NULL),
    PW(LOG, elem_vmath, "math.log", NULL),
    PW(LOG1P, elem_arith, "math.log1p", NULL),
    PW(TANH, elem_vmath, "math.tanh", NULL),
    PW(SIGMOID, elem_sigmoid, NULL, NULL),
    PW(RELU, elem_relu, NULL, NULL),
    PW(SQRT, elem_arith, "math.sqrt", NULL),
    PW(RSQRT, elem_arith, "math.rsqrt", NULL),
    PW(SQUARE, elem_square, NULL, NULL),
    PW(FLOOR, elem_arith, "math.floor", NULL),
    PW(SIGN, elem_sign, NULL, NULL),
    PW(SIN, elem_arith, "math.sin", NULL),
    PW(COS, elem_arith, "math.cos", NULL),
    PW(TAN, elem_arith, "math.tan", NULL),
    PW(ASIN, elem_device_math, "math.asin", NULL),
    PW(ACOS, elem_device_math, "math.acos", NULL),
    PW(ATAN, elem_arith, "math.atan", NULL),
    PW(SINH, elem_device_math, "math.sinh", NULL),
    PW(COSH, elem_device_math, "math.cosh", NULL),
    PW(ERF, elem_arith, "math.erf", NULL),
    PW(EXPM1, elem_vmath, "math.expm1", NULL),
    PW(CEIL, elem_arith, "math.ceil", NULL),
    PW(ROUND, elem_arith, "math.roundeven", NULL),
    PW(STOP_GRADIENT, elem_identity, NULL, NULL),
    PW(ADD, elem_arith, "arith.addf", "arith.addi"),
    PW(SUB, elem_arith, "arith.subf", "arith.subi"),
    PW(MUL, elem_arith, "arith.mulf", "arith.muli"),
    PW(DIV, elem_div, "arith.divf", NULL),
    PW(POW, elem_pow, NULL, NULL),
    // arith's maximumf/minimumf: NaN wins, -0 < +0 (runtime/scalar.h).
    PW(MAXIMUM, elem_arith, "arith.maximumf", "arith.maxsi"),
    PW(MINIMUM, elem_arith, "arith.minimumf", "arith.minsi"),
    PW(ATAN2, elem_arith, "math.atan2", NULL),
    // Floats: C fmod; integers: int_rem (runtime/scalar.h).
    PW(REM, elem_rem, "arith.remf", NULL),
    PW(EQ, elem_compare, "oeq", "eq"),
    PW(NE, elem_compare, "une", "ne"),
    PW(LT, elem_compare, "olt", "slt"),
    PW(LE, elem_compare, "ole", "sle"),
    PW(GT, elem_compare, "ogt", "sgt"),
    PW(GE, elem_compare, "oge", "sge"),
    PW(AND, elem_arith, NULL, "arith.andi"),
    PW(OR, elem_arith, NULL, "arith.ori"),
    PW(NOT, elem_not, NULL, NULL),
    PW(BITAND, elem_arith, NULL, "arith.andi"),
    PW(BITOR, elem_arith, NULL, "arith.ori"),
    PW(BITXOR, elem_arith, NULL, "arith.xori"),
    PW(BITNOT, elem_bitnot, NULL, NULL),
    PW(SHIFT_LEFT, elem_shift, NULL, "arith.shli"),
    PW(SHIFT_RIGHT, elem_shift, NULL, "arith.shrsi"),
    PW(SELECT, elem_select, NULL, NULL),
    PW(CAST, elem_cast, NULL, NULL),
    KERNEL(MATMUL, kernel_matmul, false),
    // Float sums, means and products accumulate in f64 (the contract).
    REDUCE(SUM, "arith.addf", "arith.addi"),
    REDUCE(MEAN, "arith.addf", "arith.addi"),
    REDUCE(MAX, "arith.maximumf", "arith.maxsi"),
    REDUCE(MIN, "arith.minimumf", "arith.minsi"),
    REDUCE(PROD, "arith.mulf", "arith.muli"),
    KERNEL(RESHAPE, kernel_reshape, true),
    KERNEL(TRANSPOSE, kernel_transpose, true),
    PW(BROADCAST_TO, elem_identity, NULL, NULL),
    KERNEL(CONCAT, kernel_concat, true),
    KERNEL(SPLIT, kernel_split, true),
    KERNEL(SLICE, kernel_slice, true),
    [EDDY_OP_CORE_GATHER] = {.cls = CPU_OP_KERNEL,
                             .kernel = kernel_gather,
                             .fallible = true},
    KERNEL(PAD, kernel_pad, true),
    KERNEL(SHAPE, kernel_shape, false),
    KERNEL(DIM, kernel_shape, false),
    KERNEL(RANGE, kernel_range, false),
    KERNEL(REVERSE, cpu_kernel_reverse, true),
    KERNEL(ARGMAX, cpu_kernel_arg, true),
    KERNEL(ARGMIN, cpu_kernel_arg, true),
    KERNEL(CUMSUM, cpu_kernel_cumulative, true),
    KERNEL(CUMPROD, cpu_kernel_cumulative, true),
    KERNEL(TOPK, cpu_kernel_topk, false),
    [EDDY_OP_CORE_SCATTER] = {.cls = CPU_OP_KERNEL,
                              .kernel = cpu_kernel_scatter,
                              .fallible = true},
    [EDDY_OP_CORE_WHERE] = {.cls = CPU_OP_KERNEL,
                            .kernel = cpu_kernel_where,
                            .reads_once = true,
                            .fallible = true},
    // Sliding windows read each operand element once per tap: no fused
    // producer is recomputed there.
    KERNEL(CONV2D, cpu_kernel_window, false),
    KERNEL(CONV2D_INPUT_GRAD, cpu_kernel_window, false),
    KERNEL(CONV2D_FILTER_GRAD, cpu_kernel_window, false),
    KERNEL(MAX_POOL, cpu_kernel_window, false),
    KERNEL(AVG_POOL, cpu_kernel_window, false),
    KERNEL(MAX_POOL_GRAD, cpu_kernel_window, false),
    KERNEL(AVG_POOL_GRAD, cpu_kernel_window, false),
    [EDDY_OP_CTL_WHILE] = {.cls = CPU_OP_WHILE, .fallible = true},
    [EDDY_OP_CTL_IF] = {.cls = CPU_OP_IF},
    [EDDY_OP_CTL_CALL] = {.cls = CPU_OP_CALL},
    [EDDY_OP_CTL_YIELD] = {.none = TERMINATOR},
    [EDDY_OP_CTL_CONDITION] = {.none = TERMINATOR},
    LIST(EMPTY, cpu_list_empty),
    LIST(RESERVE, cpu_list_reserve),
    LIST(PUSH_BACK, cpu_list_push_back),
    LIST(POP_BACK, cpu_list_pop_back),
    LIST(GET_ITEM, cpu_list_get_item),
    LIST(SET_ITEM, cpu_list_set_item),
    LIST(LENGTH, cpu_list_length),
    LIST(STACK, cpu_list_stack),
    LIST(FROM_TENSOR, cpu_list_from_tensor),
    LIST(RESIZE, cpu_list_resize),
    LIST(SCATTER, cpu_list_scatter),
    LIST(CONCAT, cpu_list_concat),
    LIST(SPLIT, cpu_list_split),
    LIST(ADD, cpu_list_add),
    LIST(ZEROS_LIKE, cpu_list_zeros_like),
};

const cpu_op_info_t *cpu_op_info(const eddy_op_t *op) {
  return &k_ops[eddy_dialects_opcode(op)];
}

bool eddy_cpu_opcode_supported(eddy_opcode_t code, const char **out_reason) {
  const cpu_op_info_t *info =
      code > EDDY_OP_NONE && code < EDDY_OP_COUNT_ ? &k_ops[code] : NULL;
  bool ok = info && info->cls != CPU_OP_NONE;
  if (out_reason)
    *out_reason = info && !ok ? info->none : NULL;
  if (!ok)
    return false;
  // What each class needs from its entry.
  switch (info->cls) {
  case CPU_OP_POINTWISE:
    return info->elem != NULL;
  case CPU_OP_KERNEL:
  case CPU_OP_LIST:
    return info->kernel != NULL;
  default:
    return true;
  }
}

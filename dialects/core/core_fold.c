/// Folders of the core dialect, part 1: shared helpers, elementwise ops
/// (unary, binary, compare, logical, select, cast) and their algebraic
/// simplifications. The numeric semantics are docs/dialects/core.md's; the
/// scalar rules that are not plain C come from runtime/scalar.h, which the
/// runtime kernels share.
#include "dialects/core/core_internal.h"
#include "runtime/scalar.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/// ---- Helpers ---------------------------------------------------------------

bool eddy_core_shape_fits(const eddy_type_t *t) {
  if (!t || !eddy_ir_type_is_tensor(t) || !eddy_ir_type_is_static(t) ||
      t->rank > EDDY_CORE_MAX_RANK)
    return false;
  /* Zero-size dims count as 1: a tensor<0x2^40x2^40xf32> has no elements
     but its strides would still overflow. */
  int64_t p = 1;
  for (int32_t i = 0; i < t->rank; i++)
    if (!eddy_checked_mul_i64(p, t->dims[i] > 1 ? t->dims[i] : 1, &p))
      return false;
  return true;
}

/// The declared type of result i refined with what the shape function
/// derives from the current operand types. A fold may have made an operand
/// a static constant after shape-infer ran: without this the op would only
/// fold after another shape-infer, and the pipeline would need two runs.
static const eddy_type_t *core_refined_result_type(const eddy_fold_ctx_t *fc,
                                                   size_t i) {
  const eddy_op_t *op = fc->op;
  const eddy_type_t *declared = op->results[i].type;
  enum { MAX_OPERANDS = 16 };
  if (eddy_ir_type_is_static(declared) || !op->def || !op->def->infer ||
      op->num_operands > MAX_OPERANDS)
    return declared;
  const eddy_type_t *types[MAX_OPERANDS];
  for (uint32_t k = 0; k < op->num_operands; k++)
    types[k] = op->operands[k].value->type;
  eddy_infer_ctx_t ic = {
      .ctx = fc->ctx,
      .def = op->def,
      .operand_types = types,
      .num_operands = op->num_operands,
      .attrs = op->attrs,
      .num_attrs = op->num_attrs,
      .loc = op->loc,
      .op = op,
  };
  eddy_status_t st = op->def->infer(&ic);
  const eddy_type_t *t = declared;
  if (!st && i < ic.num_results) {
    const eddy_type_t *r = eddy_ir_type_refine(fc->ctx, declared,
                                               ic.results[i]);
    if (r)
      t = r;
  }
  eddy_status_destroy(st);
  free((void *)ic.results);
  return t;
}

const eddy_type_t *eddy_core_fold_result_type(const eddy_fold_ctx_t *fc,
                                              size_t i) {
  if (i >= fc->op->num_results)
    return NULL;
  const eddy_type_t *t = core_refined_result_type(fc, i);
  if (!eddy_core_shape_fits(t))
    return NULL;
  int64_t n = eddy_ir_type_num_elements(t);
  if (n < 0 || n > EDDY_CORE_FOLD_MAX_ELEMENTS)
    return NULL;
  return t;
}

int64_t eddy_core_wrap(int64_t v, eddy_dtype_t dt) {
  switch (dt) {
  case EDDY_DT_I1:
    return v & 1;
  case EDDY_DT_I8:
    return eddy_scalar_wrap_i8((uint64_t)v);
  case EDDY_DT_I32:
    return eddy_scalar_wrap_i32((uint64_t)v);
  default:
    return v;
  }
}

double eddy_core_elem_f64(const eddy_attr_t *a, int64_t i) {
  return eddy_ir_dense_attr_f64(a, a->u.dense.splat ? 0 : i);
}

int64_t eddy_core_elem_i64(const eddy_attr_t *a, int64_t i) {
  return eddy_ir_dense_attr_i64(a, a->u.dense.splat ? 0 : i);
}

void eddy_core_strides(const int64_t *dims, int32_t rank, int64_t *out) {
  int64_t s = 1;
  for (int32_t i = rank - 1; i >= 0; i--) {
    out[i] = s;
    s *= dims[i]; /* static shapes here have a checked element count */
  }
}

bool eddy_core_dims_equal(const eddy_type_t *t, const int64_t *dims,
                          int32_t rank) {
  if (!t || t->rank != rank)
    return false;
  for (int32_t i = 0; i < rank; i++)
    if (t->dims[i] != dims[i])
      return false;
  return true;
}

void eddy_core_iter_init(eddy_core_iter_t *it, const int64_t *dims,
                         int32_t rank) {
  it->rank = rank;
  for (int32_t i = 0; i < rank; i++) {
    it->dims[i] = dims[i];
    it->idx[i] = 0;
  }
  it->num = 0;
}

int32_t eddy_core_iter_add(eddy_core_iter_t *it, int64_t base,
                           const int64_t *strides) {
  int32_t k = it->num++;
  for (int32_t i = 0; i < it->rank; i++)
    it->strides[k][i] = strides[i];
  it->off[k] = base;
  return k;
}

int32_t eddy_core_iter_add_broadcast(eddy_core_iter_t *it, const int64_t *dims,
                                     int32_t rank) {
  int64_t own[EDDY_CORE_MAX_RANK], strides[EDDY_CORE_MAX_RANK];
  eddy_core_strides(dims, rank, own);
  int32_t lead = it->rank - rank;
  for (int32_t i = 0; i < it->rank; i++) {
    int32_t j = i - lead;
    strides[i] = (j < 0 || dims[j] == 1) ? 0 : own[j];
  }
  return eddy_core_iter_add(it, 0, strides);
}

void eddy_core_iter_next(eddy_core_iter_t *it) {
  for (int32_t i = it->rank - 1; i >= 0; i--) {
    for (int32_t k = 0; k < it->num; k++)
      it->off[k] += it->strides[k][i];
    if (++it->idx[i] < it->dims[i])
      return;
    for (int32_t k = 0; k < it->num; k++)
      it->off[k] -= it->strides[k][i] * it->dims[i];
    it->idx[i] = 0;
  }
}

const eddy_attr_t *eddy_core_fold_gather_elems(eddy_ctx_t *ctx,
                                               const eddy_type_t *rt,
                                               const eddy_attr_t *src,
                                               int64_t base,
                                               const int64_t *strides) {
  if (src->kind != EDDY_ATTR_DENSE || src->type->dtype != rt->dtype)
    return NULL;
  if (src->u.dense.splat)
    return eddy_ir_dense_splat_attr_get(ctx, rt, src->u.dense.data);
  size_t es = eddy_dtype_size(rt->dtype);
  int64_t n = eddy_ir_type_num_elements(rt);
  char *buf = malloc(n > 0 ? (size_t)n * es : 1);
  if (!buf)
    return NULL;
  const char *data = src->u.dense.data;
  eddy_core_iter_t it;
  eddy_core_iter_init(&it, rt->dims, rt->rank);
  eddy_core_iter_add(&it, base, strides);
  for (int64_t i = 0; i < n; i++, eddy_core_iter_next(&it))
    memcpy(buf + (size_t)i * es, data + (size_t)it.off[0] * es, es);
  const eddy_attr_t *a = eddy_ir_dense_attr_get(ctx, rt, buf, (size_t)n * es);
  free(buf);
  return a;
}

/// True when every element of the constant c satisfies pred.
static bool core_all_f64(const eddy_attr_t *c, bool (*pred)(double)) {
  int64_t n = c->u.dense.splat ? 1 : eddy_ir_type_num_elements(c->type);
  for (int64_t i = 0; i < n; i++)
    if (!pred(eddy_ir_dense_attr_f64(c, i)))
      return false;
  return true;
}

static bool core_all_i64(const eddy_attr_t *c, int64_t v) {
  int64_t n = c->u.dense.splat ? 1 : eddy_ir_type_num_elements(c->type);
  for (int64_t i = 0; i < n; i++)
    if (eddy_ir_dense_attr_i64(c, i) != v)
      return false;
  return true;
}

static bool core_is_neg_zero(double v) { return v == 0 && signbit(v); }
static bool core_is_pos_zero(double v) { return v == 0 && !signbit(v); }
static bool core_is_one(double v) { return v == 1; }

bool eddy_core_fold_to(eddy_fold_ctx_t *fc, eddy_value_t *v) {
  if (!v || v->type != fc->op->results[0].type)
    return false;
  fc->results[0].value = v;
  return true;
}

const eddy_attr_t *eddy_core_dense_from_f64(eddy_ctx_t *ctx,
                                            const eddy_type_t *rt, double *f,
                                            size_t n) {
  /* The attribute builder rounds a double to f16/bf16 once, as a literal
     should be; computed values go double -> f32 -> f16 like the kernels
     (docs/dialects/core.md), which differs for doubles just above an f16
     midpoint. */
  if (rt->dtype == EDDY_DT_F16 || rt->dtype == EDDY_DT_BF16)
    for (size_t k = 0; k < n; k++)
      f[k] = (double)(float)f[k];
  return eddy_ir_dense_attr_from_f64(ctx, rt, f, n);
}

/// Stores a computed result: doubles for float dtypes, int64s otherwise.
static bool core_fold_store(eddy_fold_ctx_t *fc, const eddy_type_t *rt,
                            double *f, const int64_t *i, int64_t n) {
  const eddy_attr_t *a =
      eddy_dtype_is_float(rt->dtype)
          ? eddy_core_dense_from_f64(fc->ctx, rt, f, (size_t)n)
          : eddy_ir_dense_attr_from_i64(fc->ctx, rt, i, (size_t)n);
  if (!a)
    return false;
  fc->results[0].attr = a;
  return true;
}

/// Buffers for n computed elements (at least one, so malloc never sees 0).
typedef struct core_out {
  double *f;
  int64_t *i;
} core_out_t;

static bool core_out_alloc(core_out_t *o, int64_t n) {
  size_t m = n > 0 ? (size_t)n : 1;
  o->f = malloc(m * sizeof(double));
  o->i = malloc(m * sizeof(int64_t));
  return o->f && o->i;
}

static void core_out_free(core_out_t *o) {
  free(o->f);
  free(o->i);
}

/// ---- Scalar semantics ------------------------------------------------------

/* Computed in double and int64: the rounding to the result dtype and the
   wraparound to its width come after. What is not plain C (floor division,
   NaN and signed zeros, float-to-int casts) is runtime/scalar.h's. */

static double core_unary_f(eddy_core_op_kind_t k, double x) {
  switch (k) {
  case EDDY_CORE_OP_NEG:
    return -x;
  case EDDY_CORE_OP_ABS:
    return fabs(x);
  case EDDY_CORE_OP_EXP:
    return exp(x);
  case EDDY_CORE_OP_LOG:
    return log(x);
  case EDDY_CORE_OP_LOG1P:
    return log1p(x);
  case EDDY_CORE_OP_TANH:
    return tanh(x);
  case EDDY_CORE_OP_SIGMOID:
    return 1.0 / (1.0 + exp(-x));
  case EDDY_CORE_OP_RELU:
    return eddy_scalar_relu_f64(x);
  case EDDY_CORE_OP_SQRT:
    return sqrt(x);
  case EDDY_CORE_OP_RSQRT:
    return 1.0 / sqrt(x);
  case EDDY_CORE_OP_SQUARE:
    return x * x;
  case EDDY_CORE_OP_FLOOR:
    return floor(x);
  case EDDY_CORE_OP_SIGN:
    return eddy_scalar_sign_f64(x);
  case EDDY_CORE_OP_SIN:
    return sin(x);
  case EDDY_CORE_OP_COS:
    return cos(x);
  case EDDY_CORE_OP_TAN:
    return tan(x);
  case EDDY_CORE_OP_ASIN:
    return asin(x);
  case EDDY_CORE_OP_ACOS:
    return acos(x);
  case EDDY_CORE_OP_ATAN:
    return atan(x);
  case EDDY_CORE_OP_SINH:
    return sinh(x);
  case EDDY_CORE_OP_COSH:
    return cosh(x);
  case EDDY_CORE_OP_ERF:
    return erf(x);
  case EDDY_CORE_OP_EXPM1:
    return expm1(x);
  case EDDY_CORE_OP_CEIL:
    return ceil(x);
  case EDDY_CORE_OP_ROUND:
    return eddy_scalar_round_f64(x);
  default:
    return NAN;
  }
}

/// Whether core_unary_i implements op k for dtype dt.
static bool core_unary_int_ok(eddy_core_op_kind_t k, eddy_dtype_t dt) {
  if (dt == EDDY_DT_I1)
    return k == EDDY_CORE_OP_NOT;
  return k == EDDY_CORE_OP_NEG || k == EDDY_CORE_OP_ABS ||
         k == EDDY_CORE_OP_RELU || k == EDDY_CORE_OP_SQUARE ||
         k == EDDY_CORE_OP_SIGN || k == EDDY_CORE_OP_BITNOT;
}

/// Integer unary ops on the value; the caller wraps to the dtype.
static int64_t core_unary_i(eddy_core_op_kind_t k, int64_t x) {
  switch (k) {
  case EDDY_CORE_OP_NEG:
    return (int64_t)(0 - (uint64_t)x);
  case EDDY_CORE_OP_ABS:
    return x < 0 ? (int64_t)(0 - (uint64_t)x) : x;
  case EDDY_CORE_OP_RELU:
    return x > 0 ? x : 0;
  case EDDY_CORE_OP_SQUARE:
    return (int64_t)((uint64_t)x * (uint64_t)x);
  case EDDY_CORE_OP_SIGN:
    return (x > 0) - (x < 0);
  case EDDY_CORE_OP_NOT:
    return !x;
  case EDDY_CORE_OP_BITNOT:
    return ~x;
  default:
    return 0;
  }
}

static double core_binary_f(eddy_core_op_kind_t k, double a, double b) {
  switch (k) {
  case EDDY_CORE_OP_ADD:
    return a + b;
  case EDDY_CORE_OP_SUB:
    return a - b;
  case EDDY_CORE_OP_MUL:
    return a * b;
  case EDDY_CORE_OP_DIV:
    return a / b;
  case EDDY_CORE_OP_POW:
    return pow(a, b);
  case EDDY_CORE_OP_MAXIMUM:
    return eddy_scalar_max_f64(a, b);
  case EDDY_CORE_OP_MINIMUM:
    return eddy_scalar_min_f64(a, b);
  case EDDY_CORE_OP_ATAN2:
    return atan2(a, b);
  case EDDY_CORE_OP_REM:
    return fmod(a, b);
  default:
    return NAN;
  }
}

/// Integer binary ops on the values of a dtype of `bits` bits; the caller
/// wraps to the dtype.
static int64_t core_binary_i(eddy_core_op_kind_t k, int64_t a, int64_t b,
                             int bits) {
  switch (k) {
  case EDDY_CORE_OP_ADD:
    return (int64_t)((uint64_t)a + (uint64_t)b);
  case EDDY_CORE_OP_SUB:
    return (int64_t)((uint64_t)a - (uint64_t)b);
  case EDDY_CORE_OP_MUL:
    return (int64_t)((uint64_t)a * (uint64_t)b);
  case EDDY_CORE_OP_DIV:
    return eddy_scalar_floordiv_i64(a, b);
  case EDDY_CORE_OP_MAXIMUM:
    return a > b ? a : b;
  case EDDY_CORE_OP_MINIMUM:
    return a < b ? a : b;
  case EDDY_CORE_OP_REM:
    return eddy_scalar_rem_i64(a, b);
  case EDDY_CORE_OP_AND:
    return a && b;
  case EDDY_CORE_OP_OR:
    return a || b;
  case EDDY_CORE_OP_BITAND:
    return a & b;
  case EDDY_CORE_OP_BITOR:
    return a | b;
  case EDDY_CORE_OP_BITXOR:
    return a ^ b;
  case EDDY_CORE_OP_SHIFT_LEFT:
    return eddy_scalar_shl_i64(a, b, bits);
  case EDDY_CORE_OP_SHIFT_RIGHT:
    return eddy_scalar_shr_i64(a, b, bits);
  default:
    return 0;
  }
}

/// Comparisons; for floats these are IEEE (NaN compares unequal to all).
static bool core_compare(eddy_core_op_kind_t k, double fa, double fb,
                         int64_t ia, int64_t ib, bool is_float) {
  switch (k) {
  case EDDY_CORE_OP_EQ:
    return is_float ? fa == fb : ia == ib;
  case EDDY_CORE_OP_NE:
    return is_float ? fa != fb : ia != ib;
  case EDDY_CORE_OP_LT:
    return is_float ? fa < fb : ia < ib;
  case EDDY_CORE_OP_LE:
    return is_float ? fa <= fb : ia <= ib;
  case EDDY_CORE_OP_GT:
    return is_float ? fa > fb : ia > ib;
  case EDDY_CORE_OP_GE:
    return is_float ? fa >= fb : ia >= ib;
  default:
    return false;
  }
}

/// Float to integer dtype: truncate toward zero, saturate at the dtype's
/// range, NaN gives 0; to i1: nonzero (NaN included) is true.
static int64_t core_f64_to_int(double x, eddy_dtype_t dt) {
  switch (dt) {
  case EDDY_DT_I1:
    return x != 0;
  case EDDY_DT_I8:
    return eddy_scalar_sat_i8(x);
  case EDDY_DT_I32:
    return eddy_scalar_sat_i32(x);
  default:
    return eddy_scalar_sat_i64(x);
  }
}

/// Integer (or i1) to a float dtype, rounded once to f32 for the narrow
/// dtypes so no value is rounded twice on the way to f32 (f16 and bf16 then
/// round from that f32).
static double core_int_to_f64(int64_t v, eddy_dtype_t dt) {
  if (dt == EDDY_DT_F64)
    return (double)v;
  return (double)(float)v;
}

/// ---- Elementwise folders ---------------------------------------------------

/// The shape of static constants a, b broadcast into out/rank.
static bool core_const_broadcast(const eddy_attr_t *a, const eddy_attr_t *b,
                                 int64_t *out, int32_t *rank) {
  const eddy_type_t *ta = a->type, *tb = b->type;
  if (!eddy_core_shape_fits(ta) || !eddy_core_shape_fits(tb))
    return false;
  *rank = ta->rank > tb->rank ? ta->rank : tb->rank;
  return eddy_core_broadcast_dims(ta->dims, ta->rank, tb->dims, tb->rank, out);
}

bool eddy_core_fold_unary(eddy_fold_ctx_t *fc) {
  eddy_op_t *op = fc->op;
  if (op->num_operands != 1 || op->num_results != 1)
    return false;
  eddy_core_op_kind_t k = eddy_core_op_kind(op->def);
  eddy_value_t *x = eddy_ir_op_operand(op, 0);
  /* neg(neg(y)) = y (also for ints: wraparound negation is an involution);
     not(not(y)) = y. */
  if ((k == EDDY_CORE_OP_NEG || k == EDDY_CORE_OP_NOT) && x->def &&
      x->def->def == op->def && x->def->num_operands == 1 &&
      eddy_core_fold_to(fc, eddy_ir_op_operand(x->def, 0)))
    return true;
  const eddy_attr_t *c = fc->operand_consts[0];
  const eddy_type_t *rt = eddy_core_fold_result_type(fc, 0);
  if (!c || !rt || c->type->dtype != rt->dtype ||
      !eddy_core_dims_equal(rt, c->type->dims, c->type->rank))
    return false;
  int64_t n = eddy_ir_type_num_elements(rt);
  bool is_float = eddy_dtype_is_float(rt->dtype);
  if (is_float ? k == EDDY_CORE_OP_BITNOT
               : !core_unary_int_ok(k, rt->dtype))
    return false; /* unverified IR: the shape function rejects it */
  core_out_t o;
  bool ok = core_out_alloc(&o, n);
  for (int64_t i = 0; ok && i < n; i++) {
    if (is_float)
      o.f[i] = core_unary_f(k, eddy_core_elem_f64(c, i));
    else
      o.i[i] =
          eddy_core_wrap(core_unary_i(k, eddy_core_elem_i64(c, i)), rt->dtype);
  }
  ok = ok && core_fold_store(fc, rt, o.f, o.i, n);
  core_out_free(&o);
  return ok;
}

/// Whether c (NULL when the operand is not constant) holds only the given
/// value: for floats as decided by want_f (signed zeros matter), for ints
/// equal to want_i.
static bool core_const_is(const eddy_attr_t *c, bool is_float,
                          bool (*want_f)(double), int64_t want_i) {
  if (!c)
    return false;
  return is_float ? core_all_f64(c, want_f) : core_all_i64(c, want_i);
}

/// Result 0 of a broadcasting op becomes its operand i. Equal types are not
/// enough when they are dynamic: add(x: tensor<*xf32>, c: tensor<1x1xf32>)
/// declared tensor<*xf32> is [1, 1] for a scalar x. So either the type is
/// static (then it is the result's shape) or every other operand is a
/// scalar, which cannot widen anything.
static bool core_fold_to_operand(eddy_fold_ctx_t *fc, uint32_t i) {
  eddy_value_t *v = eddy_ir_op_operand(fc->op, i);
  if (!eddy_ir_type_is_static(v->type))
    for (uint32_t j = 0; j < fc->op->num_operands; j++)
      if (j != i && !eddy_ir_type_is_scalar(fc->op->operands[j].value->type))
        return false;
  return eddy_core_fold_to(fc, v);
}

/// a and b are the same value or computed the same way by side-effect-free
/// ops (what cse would merge), up to a small depth. Lets and(x, x') fold in
/// the same canonicalize run that precedes cse, so that the default
/// pipeline reaches its fixpoint in one run.
static bool core_same_value(const eddy_value_t *a, const eddy_value_t *b,
                            int depth) {
  if (a == b)
    return true;
  const eddy_op_t *x = a->def, *y = b->def;
  if (depth <= 0 || !x || !y || x->def != y->def || !x->def ||
      !(x->def->traits & EDDY_TRAIT_PURE) || x->num_regions ||
      y->num_regions || a->index != b->index || a->type != b->type ||
      x->num_operands != y->num_operands || x->num_attrs != y->num_attrs ||
      x->num_results != y->num_results)
    return false;
  for (uint32_t i = 0; i < x->num_attrs; i++)
    if (x->attrs[i].name != y->attrs[i].name ||
        x->attrs[i].value != y->attrs[i].value)
      return false;
  for (uint32_t i = 0; i < x->num_results; i++)
    if (x->results[i].type != y->results[i].type)
      return false;
  for (uint32_t i = 0; i < x->num_operands; i++)
    if (!core_same_value(x->operands[i].value, y->operands[i].value,
                         depth - 1))
      return false;
  return true;
}

/// x+0, x-0, x*1, x/1 and friends, returning an operand unchanged. For
/// floats only the identities exact for every x (signed zeros included)
/// are used: x + -0.0, x - +0.0, x * 1, x / 1.
static bool core_simplify_binary(eddy_fold_ctx_t *fc, eddy_core_op_kind_t k) {
  eddy_value_t *a = eddy_ir_op_operand(fc->op, 0);
  eddy_value_t *b = eddy_ir_op_operand(fc->op, 1);
  const eddy_attr_t *ca = fc->operand_consts[0], *cb = fc->operand_consts[1];
  if ((k == EDDY_CORE_OP_AND || k == EDDY_CORE_OP_OR) &&
      core_same_value(a, b, 8))
    return eddy_core_fold_to(fc, a);
  if (!eddy_ir_type_is_tensor(a->type) || a->type->dtype == EDDY_DT_I1)
    return false;
  bool fl = eddy_dtype_is_float(a->type->dtype);
  switch (k) {
  case EDDY_CORE_OP_ADD:
    return (core_const_is(cb, fl, core_is_neg_zero, 0) &&
            core_fold_to_operand(fc, 0)) ||
           (core_const_is(ca, fl, core_is_neg_zero, 0) &&
            core_fold_to_operand(fc, 1));
  case EDDY_CORE_OP_SUB:
    return core_const_is(cb, fl, core_is_pos_zero, 0) &&
           core_fold_to_operand(fc, 0);
  case EDDY_CORE_OP_MUL:
    return (core_const_is(cb, fl, core_is_one, 1) &&
            core_fold_to_operand(fc, 0)) ||
           (core_const_is(ca, fl, core_is_one, 1) &&
            core_fold_to_operand(fc, 1));
  case EDDY_CORE_OP_DIV:
    return core_const_is(cb, fl, core_is_one, 1) &&
           core_fold_to_operand(fc, 0);
  default:
    return false;
  }
}

bool eddy_core_fold_binary(eddy_fold_ctx_t *fc) {
  eddy_op_t *op = fc->op;
  if (op->num_operands != 2 || op->num_results != 1)
    return false;
  eddy_core_op_kind_t k = eddy_core_op_kind(op->def);
  const eddy_attr_t *ca = fc->operand_consts[0], *cb = fc->operand_consts[1];
  if (!ca || !cb)
    return core_simplify_binary(fc, k);
  const eddy_type_t *rt = eddy_core_fold_result_type(fc, 0);
  eddy_dtype_t dt = ca->type->dtype;
  int64_t dims[EDDY_CORE_MAX_RANK];
  int32_t rank;
  if (!rt || dt != cb->type->dtype ||
      !core_const_broadcast(ca, cb, dims, &rank) ||
      !eddy_core_dims_equal(rt, dims, rank))
    return core_simplify_binary(fc, k);
  bool is_compare = k >= EDDY_CORE_OP_EQ && k <= EDDY_CORE_OP_GE;
  bool is_logical = k == EDDY_CORE_OP_AND || k == EDDY_CORE_OP_OR;
  bool is_float = eddy_dtype_is_float(dt);
  /* Guards for unverified IR, which the shape functions reject. */
  if (rt->dtype != (is_compare ? EDDY_DT_I1 : dt) ||
      ((k == EDDY_CORE_OP_POW || k == EDDY_CORE_OP_ATAN2) && !is_float) ||
      (k >= EDDY_CORE_OP_BITAND && k <= EDDY_CORE_OP_SHIFT_RIGHT &&
       (is_float || dt == EDDY_DT_I1)) ||
      (is_logical != (dt == EDDY_DT_I1) && !is_compare))
    return false;
  int64_t n = eddy_ir_type_num_elements(rt);
  core_out_t o;
  bool ok = core_out_alloc(&o, n);
  eddy_core_iter_t it;
  eddy_core_iter_init(&it, dims, rank);
  eddy_core_iter_add_broadcast(&it, ca->type->dims, ca->type->rank);
  eddy_core_iter_add_broadcast(&it, cb->type->dims, cb->type->rank);
  for (int64_t i = 0; ok && i < n; i++, eddy_core_iter_next(&it)) {
    double fa = 0, fb = 0;
    int64_t ia = 0, ib = 0;
    if (is_float) {
      fa = eddy_core_elem_f64(ca, it.off[0]);
      fb = eddy_core_elem_f64(cb, it.off[1]);
    } else {
      ia = eddy_core_elem_i64(ca, it.off[0]);
      ib = eddy_core_elem_i64(cb, it.off[1]);
    }
    if (is_compare)
      o.i[i] = core_compare(k, fa, fb, ia, ib, is_float);
    else if (is_float)
      o.f[i] = core_binary_f(k, fa, fb);
    else
      o.i[i] = eddy_core_wrap(
          core_binary_i(k, ia, ib, (int)eddy_dtype_size(dt) * 8), dt);
  }
  ok = ok && core_fold_store(fc, rt, o.f, o.i, n);
  core_out_free(&o);
  return ok;
}

bool eddy_core_fold_select(eddy_fold_ctx_t *fc) {
  eddy_op_t *op = fc->op;
  if (op->num_operands != 3 || op->num_results != 1)
    return false;
  const eddy_attr_t *cc = fc->operand_consts[0], *ca = fc->operand_consts[1],
                    *cb = fc->operand_consts[2];
  if (!cc)
    return false;
  const eddy_type_t *rt = eddy_core_fold_result_type(fc, 0);
  int64_t ab[EDDY_CORE_MAX_RANK], dims[EDDY_CORE_MAX_RANK];
  int32_t rank_ab = 0;
  bool all_const = ca && cb && rt && ca->type->dtype == cb->type->dtype &&
                   ca->type->dtype == rt->dtype &&
                   eddy_core_shape_fits(cc->type) &&
                   core_const_broadcast(ca, cb, ab, &rank_ab) &&
                   eddy_core_broadcast_dims(cc->type->dims, cc->type->rank, ab,
                                            rank_ab, dims);
  int32_t rank = rank_ab > cc->type->rank ? rank_ab : cc->type->rank;
  if (all_const && eddy_core_dims_equal(rt, dims, rank)) {
    int64_t n = eddy_ir_type_num_elements(rt);
    size_t es = eddy_dtype_size(rt->dtype);
    char *buf = malloc(n > 0 ? (size_t)n * es : 1);
    if (!buf)
      return false;
    eddy_core_iter_t it;
    eddy_core_iter_init(&it, dims, rank);
    eddy_core_iter_add_broadcast(&it, cc->type->dims, cc->type->rank);
    eddy_core_iter_add_broadcast(&it, ca->type->dims, ca->type->rank);
    eddy_core_iter_add_broadcast(&it, cb->type->dims, cb->type->rank);
    /* select moves elements without arithmetic: copy their bytes. */
    for (int64_t i = 0; i < n; i++, eddy_core_iter_next(&it)) {
      bool c = eddy_core_elem_i64(cc, it.off[0]) != 0;
      const eddy_attr_t *src = c ? ca : cb;
      int64_t off = src->u.dense.splat ? 0 : it.off[c ? 1 : 2];
      memcpy(buf + (size_t)i * es,
             (const char *)src->u.dense.data + (size_t)off * es, es);
    }
    fc->results[0].attr =
        eddy_ir_dense_attr_get(fc->ctx, rt, buf, (size_t)n * es);
    free(buf);
    return fc->results[0].attr != NULL;
  }
  /* A predicate that is the same everywhere picks one operand. An empty
     predicate has no element to read (the result is empty too, but may
     differ in shape from both operands: leave it). */
  if (eddy_ir_type_num_elements(cc->type) <= 0)
    return false;
  if (cc->u.dense.splat || core_all_i64(cc, eddy_core_elem_i64(cc, 0))) {
    bool c = eddy_core_elem_i64(cc, 0) != 0;
    return core_fold_to_operand(fc, c ? 1 : 2);
  }
  return false;
}

/// stop_gradient of a constant is the constant (it has no gradient); of
/// anything else it stays, for autodiff to see.
bool eddy_core_fold_stop_gradient(eddy_fold_ctx_t *fc) {
  const eddy_attr_t *c =
      fc->op->num_operands == 1 ? fc->operand_consts[0] : NULL;
  if (!c || c->type != eddy_core_fold_result_type(fc, 0))
    return false;
  fc->results[0].attr = c;
  return true;
}

bool eddy_core_fold_cast(eddy_fold_ctx_t *fc) {
  eddy_op_t *op = fc->op;
  if (op->num_operands != 1 || op->num_results != 1)
    return false;
  eddy_value_t *x = eddy_ir_op_operand(op, 0);
  if (eddy_core_fold_to(fc, x))
    return true;
  const eddy_attr_t *c = fc->operand_consts[0];
  const eddy_type_t *rt = eddy_core_fold_result_type(fc, 0);
  if (!c || !rt || !eddy_core_dims_equal(rt, c->type->dims, c->type->rank))
    return false;
  eddy_dtype_t from = c->type->dtype, to = rt->dtype;
  int64_t n = eddy_ir_type_num_elements(rt);
  core_out_t o;
  bool ok = core_out_alloc(&o, n);
  for (int64_t i = 0; ok && i < n; i++) {
    if (eddy_dtype_is_float(from)) {
      double v = eddy_core_elem_f64(c, i);
      if (eddy_dtype_is_float(to))
        o.f[i] = v; /* rounded to the target by the attribute builder */
      else
        o.i[i] = core_f64_to_int(v, to);
    } else {
      int64_t v = eddy_core_elem_i64(c, i);
      if (eddy_dtype_is_float(to))
        o.f[i] = core_int_to_f64(v, to);
      else
        o.i[i] = to == EDDY_DT_I1 ? v != 0 : eddy_core_wrap(v, to);
    }
  }
  ok = ok && core_fold_store(fc, rt, o.f, o.i, n);
  core_out_free(&o);
  return ok;
}

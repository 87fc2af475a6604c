/// legalize-tf: the rules for TensorFlow's indexing, scan and arg-reduction
/// ops: ReverseV2, Any, All, ArgMax, ArgMin, Cumsum, Cumprod, OneHot,
/// ConcatOffset (the gradient of ConcatV2), BroadcastArgs, BroadcastTo,
/// InvertPermutation, EuclideanNorm, the integer FloorMod and the DivNoNan
/// that the gradients of ConcatV2 and Cumprod hold, and a clear refusal of
/// the one-operand Where. They lower to core.reverse / argmax / argmin / cumsum
/// / cumprod where one op does the work, and to compositions of core ops
/// (iota, eq, select, reductions) where that costs nothing.
#include "lower/tf/tf_lower_internal.h"

#include "dialects/core/core.h"

#include <string.h>

#define MAXR 64

static const char *const INDEX_OPS[] = {
    "ReverseV2",     "Any",          "All",         "ArgMax",
    "ArgMin",        "Cumsum",       "Cumprod",     "OneHot",
    "ConcatOffset",  "BroadcastArgs", "BroadcastTo", "InvertPermutation",
    "EuclideanNorm", "Where",         "FloorMod",    "DivNoNan",
};

bool eddy_tfl_is_index_op(const char *t) {
  for (size_t i = 0; i < sizeof INDEX_OPS / sizeof INDEX_OPS[0]; i++)
    if (strcmp(t, INDEX_OPS[i]) == 0)
      return true;
  return false;
}

static eddy_value_t *in(eddy_tfl_t *z, const eddy_op_t *op, size_t i) {
  return eddy_tfl_get(z, eddy_ir_op_operand(op, i));
}

static void out1(eddy_tfl_t *z, const eddy_op_t *op, eddy_value_t *v) {
  eddy_tfl_set(z, &op->results[0], v);
}

static eddy_status_t bin(eddy_tfl_t *z, const eddy_op_t *op, const char *name,
                         eddy_value_t *a, eddy_value_t *b,
                         eddy_value_t **out) {
  eddy_value_t *ops[2] = {a, b};
  return eddy_tfl_build(z, op, name, ops, 2, NULL, 0, out);
}

static eddy_status_t sel(eddy_tfl_t *z, const eddy_op_t *op, eddy_value_t *c,
                         eddy_value_t *a, eddy_value_t *b,
                         eddy_value_t **out) {
  eddy_value_t *ops[3] = {c, a, b};
  return eddy_tfl_build(z, op, "core.select", ops, 3, NULL, 0, out);
}

static eddy_named_attr_t int_attr(eddy_tfl_t *z, const char *name,
                                  int64_t v) {
  return eddy_ir_named_attr(z->ctx, name,
                            eddy_ir_int_attr_get(z->ctx, v, EDDY_DT_I64));
}

static eddy_named_attr_t ints_attr(eddy_tfl_t *z, const char *name,
                                   const int64_t *v, size_t n) {
  return eddy_ir_named_attr(z->ctx, name,
                            eddy_ir_i64_array_attr_get(z->ctx, v, n));
}

static eddy_named_attr_t bool_attr(eddy_tfl_t *z, const char *name, bool v) {
  return eddy_ir_named_attr(z->ctx, name, eddy_ir_bool_attr_get(z->ctx, v));
}

static eddy_named_attr_t dtype_attr(eddy_tfl_t *z, eddy_dtype_t dt) {
  const char *s = eddy_dtype_name(dt);
  return eddy_ir_named_attr(z->ctx, "dtype",
                            eddy_ir_string_attr_get(z->ctx, s, strlen(s)));
}

/// An integer constant of dtype dt and shape [n] (rank 0 when n < 0).
static eddy_status_t const_ints(eddy_tfl_t *z, eddy_dtype_t dt,
                                const int64_t *v, int64_t n,
                                eddy_value_t **out) {
  const eddy_type_t *t =
      n < 0 ? eddy_ir_scalar_type_get(z->ctx, dt)
            : eddy_ir_tensor_type_get(z->ctx, dt, 1, &n);
  if (n == 0)
    return eddy_ir_build_constant(
        &z->b, eddy_ir_dense_attr_get(z->ctx, t, NULL, 0), out);
  return eddy_ir_build_constant(
      &z->b, eddy_ir_dense_attr_from_i64(z->ctx, t, v, n < 0 ? 1 : (size_t)n),
      out);
}

/// The single constant axis of operand i, normalized against rank.
static eddy_status_t const_axis(eddy_tfl_t *z, const eddy_op_t *op, size_t i,
                                int32_t rank, int64_t *out) {
  int64_t a = 0;
  if (eddy_tfl_const_ints(z, in(z, op, i), &a, 1) != 1)
    return eddy_tfl_error(op, "the axis must be a constant scalar");
  if (rank == EDDY_RANK_UNKNOWN)
    return eddy_tfl_error(op, "the operand's rank is unknown");
  if (!eddy_core_normalize_axis(a, rank, out))
    return eddy_tfl_error(op, "axis %lld is out of range for rank %d",
                          (long long)a, (int)rank);
  return NULL;
}

/// The constant axes of operand i (a scalar or a vector), normalized and
/// deduplicated as TensorFlow's reductions take them.
static eddy_status_t const_axes(eddy_tfl_t *z, const eddy_op_t *op, size_t i,
                                int32_t rank, int64_t *axes, size_t *n) {
  int64_t v[MAXR];
  int64_t k = eddy_tfl_const_ints(z, in(z, op, i), v, MAXR);
  if (k < 0)
    return eddy_tfl_error(op, "the axes must be a constant");
  if (rank == EDDY_RANK_UNKNOWN)
    return eddy_tfl_error(op, "the operand's rank is unknown");
  bool seen[MAXR] = {false};
  *n = 0;
  for (int64_t j = 0; j < k; j++) {
    int64_t a;
    if (!eddy_core_normalize_axis(v[j], rank, &a))
      return eddy_tfl_error(op, "axis %lld is out of range for rank %d",
                            (long long)v[j], (int)rank);
    if (!seen[a])
      axes[(*n)++] = a;
    seen[a] = true;
  }
  return NULL;
}

static eddy_status_t lower_reverse(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_value_t *x = in(z, op, 0), *r = NULL;
  int64_t axes[MAXR];
  size_t n = 0;
  EDDY_RETURN_IF_ERROR(const_axes(z, op, 1, x->type->rank, axes, &n));
  eddy_named_attr_t a = ints_attr(z, "axes", axes, n);
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.reverse", &x, 1, &a, 1, &r));
  out1(z, op, r);
  return NULL;
}

/// Any / All of booleans: the max / min of them as i8, compared with 0, so
/// that an empty reduction gives false / true as in TensorFlow.
static eddy_status_t lower_any_all(eddy_tfl_t *z, const eddy_op_t *op,
                                   bool any) {
  eddy_value_t *x = in(z, op, 0), *r = NULL, *zero = NULL;
  int64_t axes[MAXR];
  size_t n = 0;
  EDDY_RETURN_IF_ERROR(const_axes(z, op, 1, x->type->rank, axes, &n));
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, x, EDDY_DT_I8, &x));
  eddy_named_attr_t a[2] = {
      ints_attr(z, "axes", axes, n),
      bool_attr(z, "keepdims", eddy_ir_op_attr_bool(op, "keep_dims", false))};
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(
      z, op, any ? "core.reduce_max" : "core.reduce_min", &x, 1, a, 2, &r));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I8, 0, NULL, 0, &zero));
  EDDY_RETURN_IF_ERROR(bin(z, op, "core.gt", r, zero, &r));
  out1(z, op, r);
  return NULL;
}

static eddy_status_t lower_arg(eddy_tfl_t *z, const eddy_op_t *op, bool mx) {
  eddy_value_t *x = in(z, op, 0), *r = NULL;
  eddy_dtype_t dt = EDDY_DT_I64;
  eddy_tfl_attr_dtype(op, "output_type", &dt);
  if (dt != EDDY_DT_I32 && dt != EDDY_DT_I64)
    return eddy_tfl_error(op, "output_type must be int32 or int64");
  int64_t axis;
  EDDY_RETURN_IF_ERROR(const_axis(z, op, 1, x->type->rank, &axis));
  if (x->type->dtype == EDDY_DT_I1)
    EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, x, EDDY_DT_I8, &x));
  eddy_named_attr_t a[2] = {int_attr(z, "axis", axis), dtype_attr(z, dt)};
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, mx ? "core.argmax" : "core.argmin",
                                      &x, 1, a, 2, &r));
  out1(z, op, r);
  return NULL;
}

static eddy_status_t lower_cumulative(eddy_tfl_t *z, const eddy_op_t *op,
                                      bool prod) {
  eddy_value_t *x = in(z, op, 0), *r = NULL;
  int64_t axis;
  EDDY_RETURN_IF_ERROR(const_axis(z, op, 1, x->type->rank, &axis));
  eddy_named_attr_t a[3] = {
      int_attr(z, "axis", axis),
      bool_attr(z, "exclusive", eddy_ir_op_attr_bool(op, "exclusive", false)),
      bool_attr(z, "reverse", eddy_ir_op_attr_bool(op, "reverse", false))};
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, prod ? "core.cumprod" : "core.cumsum",
                                      &x, 1, a, 3, &r));
  out1(z, op, r);
  return NULL;
}

/// OneHot: eq(indices with a new dim at axis, iota over depth along that
/// dim), then select(on, off). An index outside [0, depth) matches nothing:
/// a row of off values, as in TensorFlow.
static eddy_status_t lower_one_hot(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_value_t *idx = in(z, op, 0), *on = in(z, op, 2), *off = in(z, op, 3);
  const eddy_type_t *it = idx->type;
  int64_t depth = 0;
  if (eddy_tfl_const_ints(z, in(z, op, 1), &depth, 1) != 1)
    return eddy_tfl_error(op, "depth must be a constant");
  if (depth < 0)
    return eddy_tfl_error(op, "depth %lld is negative", (long long)depth);
  if (it->rank == EDDY_RANK_UNKNOWN || it->rank >= MAXR)
    return eddy_tfl_error(op, "the indices need a known rank");
  int64_t axis = eddy_ir_op_attr_int(op, "axis", -1);
  int32_t r = it->rank;
  if (axis == -1)
    axis = r;
  if (axis < 0 || axis > r)
    return eddy_tfl_error(op, "axis %lld is out of range for indices of rank "
                              "%d",
                          (long long)axis, (int)r);
  if (!eddy_dtype_is_int(it->dtype))
    EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, idx, EDDY_DT_I64, &idx));
  // The indices with a dim of 1 at axis (one dynamic dim may be -1).
  int64_t dims[MAXR + 1];
  int ndyn = 0;
  for (int32_t i = 0, o = 0; i <= r; i++) {
    if (i == axis) {
      dims[i] = 1;
      continue;
    }
    dims[i] = it->dims[o] == EDDY_DIM_DYNAMIC ? -1 : it->dims[o];
    ndyn += dims[i] < 0;
    o++;
  }
  if (ndyn > 1)
    return eddy_tfl_error(op, "indices with more than one dynamic dimension "
                              "are not supported");
  eddy_value_t *ex = NULL, *io = NULL, *eq = NULL, *res = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, idx, dims, (size_t)r + 1, &ex));
  // iota of shape [depth, 1, ..., 1] (the dims after axis are 1).
  int64_t id[MAXR + 1];
  id[0] = depth;
  for (int32_t i = 1; i <= r - axis; i++)
    id[i] = 1;
  const eddy_type_t *iot = eddy_ir_tensor_type_get(
      z->ctx, idx->type->dtype, (int32_t)(r - axis + 1), id);
  eddy_named_attr_t da = int_attr(z, "dimension", 0);
  eddy_op_t *o = NULL;
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build_typed(z, op, "core.iota", NULL, 0, &da, 1, &iot, 1, &o));
  io = eddy_ir_op_result(o, 0);
  EDDY_RETURN_IF_ERROR(bin(z, op, "core.eq", ex, io, &eq));
  EDDY_RETURN_IF_ERROR(sel(z, op, eq, on, off, &res));
  out1(z, op, res);
  return NULL;
}

/// The static size of dim `axis` of the tensor whose (cast) core.shape v
/// is; -1 when unknown.
static int64_t shape_entry(eddy_tfl_t *z, eddy_value_t *v, int64_t axis) {
  int64_t s[MAXR];
  int64_t n = eddy_tfl_const_ints(z, v, s, MAXR);
  if (n > axis)
    return s[axis] < 0 ? -1 : s[axis];
  eddy_value_t *src = eddy_tfl_shape_source(v);
  if (src && src->type->rank > axis && src->type->dims[axis] >= 0)
    return src->type->dims[axis];
  return -1;
}

/// ConcatOffset(axis, s_0, ..., s_{n-1}): offset i is zero but at axis,
/// where it is s_0[axis] + ... + s_{i-1}[axis]. Constants when those dims
/// are known (also of tensors whose other dims are dynamic); otherwise
/// built from slices of the shapes.
static eddy_status_t lower_concat_offset(eddy_tfl_t *z, const eddy_op_t *op) {
  size_t n = op->num_operands - 1;
  int64_t axis = 0;
  if (eddy_tfl_const_ints(z, in(z, op, 0), &axis, 1) != 1)
    return eddy_tfl_error(op, "the concat dimension must be a constant");
  const eddy_type_t *st = in(z, op, 1)->type;
  if (st->rank != 1 || st->dims[0] < 0 || st->dims[0] > MAXR)
    return eddy_tfl_error(op, "the shapes must be vectors of known length");
  int64_t rank = st->dims[0];
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return eddy_tfl_error(op, "concat dimension %lld is out of range for rank "
                              "%lld",
                          (long long)axis, (long long)rank);
  eddy_dtype_t dt = st->dtype;
  int64_t off = 0;
  bool known = true;
  eddy_value_t *run = NULL; // the run-time offset once a size is unknown
  for (size_t i = 0; i < n; i++) {
    eddy_value_t *r = NULL;
    if (known) {
      int64_t v[MAXR] = {0};
      v[axis] = off;
      EDDY_RETURN_IF_ERROR(const_ints(z, dt, v, rank, &r));
    } else {
      // zeros, the running offset at axis, zeros
      int64_t zeros[MAXR] = {0};
      eddy_value_t *parts[3];
      size_t np = 0;
      if (axis > 0)
        EDDY_RETURN_IF_ERROR(const_ints(z, dt, zeros, axis, &parts[np++]));
      parts[np++] = run;
      if (rank - axis - 1 > 0)
        EDDY_RETURN_IF_ERROR(
            const_ints(z, dt, zeros, rank - axis - 1, &parts[np++]));
      eddy_named_attr_t a = int_attr(z, "axis", 0);
      EDDY_RETURN_IF_ERROR(
          eddy_tfl_build(z, op, "core.concat", parts, np, &a, 1, &r));
    }
    eddy_tfl_set(z, &op->results[i], r);
    if (i + 1 == n)
      break;
    eddy_value_t *s = in(z, op, i + 1);
    int64_t d = shape_entry(z, s, axis);
    if (known && d >= 0) {
      off += d;
      continue;
    }
    if (known) {
      EDDY_RETURN_IF_ERROR(const_ints(z, dt, &off, 1, &run));
      known = false;
    }
    eddy_value_t *piece = NULL;
    int64_t lo = axis, hi = axis + 1;
    eddy_named_attr_t a[2] = {ints_attr(z, "start", &lo, 1),
                              ints_attr(z, "limit", &hi, 1)};
    EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.slice", &s, 1, a, 2, &piece));
    EDDY_RETURN_IF_ERROR(bin(z, op, "core.add", run, piece, &run));
  }
  return NULL;
}

/// BroadcastArgs(s0, s1): numpy's broadcast of two shapes. Constant shapes
/// give a constant (incompatible ones are an error); otherwise, for shapes
/// of known lengths, the shorter is padded with 1s and each entry is the
/// other where it is 1.
static eddy_status_t lower_broadcast_args(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_value_t *s[2] = {in(z, op, 0), in(z, op, 1)};
  int64_t v[2][MAXR], n[2];
  eddy_dtype_t dt = s[0]->type->dtype;
  for (int k = 0; k < 2; k++)
    n[k] = eddy_tfl_const_ints(z, s[k], v[k], MAXR);
  if (n[0] >= 0 && n[1] >= 0) {
    int64_t rk = n[0] > n[1] ? n[0] : n[1], out[MAXR];
    for (int64_t i = 0; i < rk; i++) {
      int64_t j0 = i - (rk - n[0]), j1 = i - (rk - n[1]);
      int64_t a = j0 < 0 ? 1 : v[0][j0], b = j1 < 0 ? 1 : v[1][j1];
      if (a != b && a != 1 && b != 1)
        return eddy_tfl_error(op, "shapes are not broadcast-compatible: "
                                  "dimension %lld is %lld and %lld",
                              (long long)i, (long long)a, (long long)b);
      out[i] = a == 1 ? b : a;
    }
    eddy_value_t *r = NULL;
    EDDY_RETURN_IF_ERROR(const_ints(z, dt, out, rk, &r));
    out1(z, op, r);
    return NULL;
  }
  int64_t len[2];
  for (int k = 0; k < 2; k++) {
    const eddy_type_t *t = s[k]->type;
    if (t->rank != 1 || t->dims[0] < 0)
      return eddy_tfl_error(op, "the shapes must be vectors of known length");
    len[k] = t->dims[0];
  }
  int64_t rk = len[0] > len[1] ? len[0] : len[1];
  if (rk > MAXR)
    return eddy_tfl_error(op, "the shapes are too long");
  int64_t ones[MAXR];
  for (int64_t i = 0; i < rk; i++)
    ones[i] = 1;
  for (int k = 0; k < 2; k++) {
    if (len[k] == rk)
      continue;
    eddy_value_t *pad = NULL, *parts[2];
    EDDY_RETURN_IF_ERROR(const_ints(z, dt, ones, rk - len[k], &pad));
    parts[0] = pad;
    parts[1] = s[k];
    eddy_named_attr_t a = int_attr(z, "axis", 0);
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "core.concat", parts, 2, &a, 1, &s[k]));
  }
  eddy_value_t *one = NULL, *is1 = NULL, *r = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, dt, 0, NULL, 1, &one));
  EDDY_RETURN_IF_ERROR(bin(z, op, "core.eq", s[0], one, &is1));
  EDDY_RETURN_IF_ERROR(sel(z, op, is1, s[1], s[0], &r));
  out1(z, op, r);
  return NULL;
}

/// BroadcastTo(x, shape): core.broadcast_to of a constant shape; of the
/// shape of a tensor y (Shape(y), maybe through BroadcastArgs with a
/// constant), x broadcast against y with core ops; else the declared
/// result type when it is static.
static eddy_status_t lower_broadcast_to(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_value_t *x = in(z, op, 0), *shape = in(z, op, 1), *r = NULL;
  int64_t dims[MAXR];
  int64_t n = eddy_tfl_const_ints(z, shape, dims, MAXR);
  bool ok = n >= 0;
  for (int64_t i = 0; ok && i < n; i++)
    ok = dims[i] >= 0;
  if (!ok) {
    eddy_value_t *y = eddy_tfl_shape_source(shape);
    if (y) {
      EDDY_RETURN_IF_ERROR(eddy_tfl_broadcast_like(z, op, x, y, &r));
      out1(z, op, r);
      return NULL;
    }
    const eddy_type_t *t = op->results[0].type;
    if (!eddy_ir_type_is_static(t) || t->rank > MAXR)
      return eddy_tfl_error(op, "the target shape is neither a constant, nor "
                                "the shape of a tensor, nor known from the "
                                "result type");
    n = t->rank;
    for (int32_t i = 0; i < t->rank; i++)
      dims[i] = t->dims[i];
  }
  eddy_named_attr_t a = ints_attr(z, "shape", dims, (size_t)n);
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build(z, op, "core.broadcast_to", &x, 1, &a, 1, &r));
  out1(z, op, r);
  return NULL;
}

/// InvertPermutation(p): inv[p[j]] = j. A constant for a constant p (which
/// must be a permutation); otherwise inv[i] = sum_j (p[j] == i) * j.
static eddy_status_t lower_invert_permutation(eddy_tfl_t *z,
                                              const eddy_op_t *op) {
  eddy_value_t *p = in(z, op, 0), *r = NULL;
  const eddy_type_t *t = p->type;
  if (t->rank != 1 || t->dims[0] < 0)
    return eddy_tfl_error(op, "the permutation must be a vector of known "
                              "length");
  int64_t n = t->dims[0];
  int64_t v[MAXR];
  if (n <= MAXR && eddy_tfl_const_ints(z, p, v, MAXR) == n) {
    int64_t inv[MAXR];
    bool seen[MAXR] = {false};
    for (int64_t j = 0; j < n; j++) {
      if (v[j] < 0 || v[j] >= n || seen[v[j]])
        return eddy_tfl_error(op, "the operand is not a permutation of 0..%lld",
                              (long long)n - 1);
      seen[v[j]] = true;
      inv[v[j]] = j;
    }
    EDDY_RETURN_IF_ERROR(const_ints(z, t->dtype, inv, n, &r));
    out1(z, op, r);
    return NULL;
  }
  int64_t row[2] = {1, n}, sq[2] = {n, n};
  const eddy_type_t *it = eddy_ir_tensor_type_get(z->ctx, t->dtype, 2, sq);
  eddy_value_t *pr = NULL, *ii = NULL, *jj = NULL, *eq = NULL, *zero = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, p, row, 2, &pr));
  eddy_op_t *o = NULL;
  for (int d = 0; d < 2; d++) {
    eddy_named_attr_t da = int_attr(z, "dimension", d);
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build_typed(z, op, "core.iota", NULL, 0, &da, 1, &it, 1, &o));
    if (d)
      jj = eddy_ir_op_result(o, 0);
    else
      ii = eddy_ir_op_result(o, 0);
  }
  EDDY_RETURN_IF_ERROR(bin(z, op, "core.eq", pr, ii, &eq));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, t->dtype, 0, NULL, 0, &zero));
  EDDY_RETURN_IF_ERROR(sel(z, op, eq, jj, zero, &r));
  int64_t ax = 1;
  eddy_named_attr_t a = ints_attr(z, "axes", &ax, 1);
  eddy_value_t *sum = NULL;
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build(z, op, "core.reduce_sum", &r, 1, &a, 1, &sum));
  out1(z, op, sum);
  return NULL;
}

/// EuclideanNorm: sqrt(sum(x * x)) over the axes (floats).
static eddy_status_t lower_euclidean_norm(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_value_t *x = in(z, op, 0), *r = NULL;
  if (!eddy_dtype_is_float(x->type->dtype))
    return eddy_tfl_error(op, "only floating-point operands are supported");
  int64_t axes[MAXR];
  size_t n = 0;
  EDDY_RETURN_IF_ERROR(const_axes(z, op, 1, x->type->rank, axes, &n));
  eddy_value_t *sq = NULL, *sum = NULL;
  EDDY_RETURN_IF_ERROR(bin(z, op, "core.mul", x, x, &sq));
  eddy_named_attr_t a[2] = {
      ints_attr(z, "axes", axes, n),
      bool_attr(z, "keepdims", eddy_ir_op_attr_bool(op, "keep_dims", false))};
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build(z, op, "core.reduce_sum", &sq, 1, a, 2, &sum));
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.sqrt", &sum, 1, NULL, 0, &r));
  out1(z, op, r);
  return NULL;
}

/// FloorMod of integers (the gradient of ConcatV2 takes its axis modulo the
/// rank): x - floordiv(x, y) * y, the remainder with the sign of y.
static eddy_status_t lower_floor_mod(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_value_t *x = in(z, op, 0), *y = in(z, op, 1), *q = NULL, *p = NULL,
               *r = NULL;
  if (!eddy_dtype_is_int(x->type->dtype))
    return eddy_tfl_error(op, "only integer FloorMod is supported");
  EDDY_RETURN_IF_ERROR(bin(z, op, "core.div", x, y, &q));
  EDDY_RETURN_IF_ERROR(bin(z, op, "core.mul", q, y, &p));
  EDDY_RETURN_IF_ERROR(bin(z, op, "core.sub", x, p, &r));
  out1(z, op, r);
  return NULL;
}

/// DivNoNan (the gradient of Cumprod divides by the input with it): x / y,
/// and 0 where y is 0.
static eddy_status_t lower_div_no_nan(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_value_t *x = in(z, op, 0), *y = in(z, op, 1), *zero = NULL, *d = NULL,
               *c = NULL, *r = NULL;
  if (!eddy_dtype_is_float(x->type->dtype))
    return eddy_tfl_error(op, "only floating-point DivNoNan is supported");
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, x->type->dtype, 0, NULL, 0, &zero));
  EDDY_RETURN_IF_ERROR(bin(z, op, "core.div", x, y, &d));
  EDDY_RETURN_IF_ERROR(bin(z, op, "core.eq", y, zero, &c));
  EDDY_RETURN_IF_ERROR(sel(z, op, c, zero, d, &r));
  out1(z, op, r);
  return NULL;
}

eddy_status_t eddy_tfl_lower_index_op(eddy_tfl_t *z, const eddy_op_t *op,
                                      bool *handled) {
  const char *t = op->name->str + 3;
  *handled = true;
  if (strcmp(t, "ReverseV2") == 0)
    return lower_reverse(z, op);
  if (strcmp(t, "Any") == 0 || strcmp(t, "All") == 0)
    return lower_any_all(z, op, t[1] == 'n');
  if (strcmp(t, "ArgMax") == 0 || strcmp(t, "ArgMin") == 0)
    return lower_arg(z, op, strcmp(t, "ArgMax") == 0);
  if (strcmp(t, "Cumsum") == 0 || strcmp(t, "Cumprod") == 0)
    return lower_cumulative(z, op, strcmp(t, "Cumprod") == 0);
  if (strcmp(t, "OneHot") == 0)
    return lower_one_hot(z, op);
  if (strcmp(t, "ConcatOffset") == 0)
    return lower_concat_offset(z, op);
  if (strcmp(t, "BroadcastArgs") == 0)
    return lower_broadcast_args(z, op);
  if (strcmp(t, "BroadcastTo") == 0)
    return lower_broadcast_to(z, op);
  if (strcmp(t, "InvertPermutation") == 0)
    return lower_invert_permutation(z, op);
  if (strcmp(t, "EuclideanNorm") == 0)
    return lower_euclidean_norm(z, op);
  if (strcmp(t, "FloorMod") == 0)
    return lower_floor_mod(z, op);
  if (strcmp(t, "DivNoNan") == 0)
    return lower_div_no_nan(z, op);
  if (strcmp(t, "Where") == 0)
    return eddy_tfl_error(op, "Where with one operand (the coordinates of the "
                              "true elements) has a data-dependent result "
                              "size, which eddy does not support; "
                              "tf.where(c, x, y) with three operands is "
                              "supported");
  *handled = false;
  return NULL;
}

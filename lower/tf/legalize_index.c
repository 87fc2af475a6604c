/// legalize-tf: the rules for TensorFlow's indexing, scan and arg-reduction
/// ops: ReverseV2, Any, All, ArgMax, ArgMin, Cumsum, Cumprod, OneHot,
/// ConcatOffset (the gradient of ConcatV2), BroadcastArgs, BroadcastTo,
/// InvertPermutation, EuclideanNorm, L2Loss, GatherNd, ScatterNd, SparseToDense,
/// TensorScatterUpdate/Add and the segment reductions (legalize_scatter.c),
/// MatrixBandPart,
/// MatrixDiag, MatrixDiagPart and MatrixSetDiag in all three versions
/// (legalize_diag.c),
/// ReverseSequence,
/// GatherV2 with batch_dims,
/// TopKV2, Einsum (legalize_einsum.c), BatchMatMulV3, the softmax cross entropies
/// and the one-operand Where. (FloorMod, DivNoNan and
/// LogSoftmax, which the gradients of ConcatV2, Cumprod and the cross
/// entropies hold, are legalize_math.c's.) They lower to core.reverse / argmax / argmin / cumsum
/// / cumprod where one op does the work, and to compositions of core ops
/// (iota, eq, select, reductions) where that costs nothing.
#include "lower/tf/tf_lower_internal.h"

#include "dialects/core/core.h"

#include <math.h>
#include <string.h>

#define MAXR 64

static const char *const INDEX_OPS[] = {
    "ReverseV2",     "Any",          "All",         "ArgMax",
    "ArgMin",        "Cumsum",       "Cumprod",     "OneHot",
    "ConcatOffset",  "BroadcastArgs", "BroadcastTo", "InvertPermutation",
    "EuclideanNorm", "Where",
    "GatherNd",      "ScatterNd",     "SparseToDense", "TensorScatterUpdate",
    "TensorScatterAdd", "UnsortedSegmentSum", "TopKV2", "Einsum",
    "SegmentSum",    "SegmentMean",   "SegmentMax",  "SegmentMin",
    "SegmentProd",   "UnsortedSegmentMax", "UnsortedSegmentMin",
    "UnsortedSegmentProd", "MatrixBandPart", "ReverseSequence",
    "BatchMatMulV3", "SoftmaxCrossEntropyWithLogits",
    "SparseSoftmaxCrossEntropyWithLogits", "DynamicStitch",
    "ParallelDynamicStitch", "L2Loss", "MatrixDiag", "MatrixDiagV2",
    "MatrixDiagV3", "MatrixDiagPart", "MatrixDiagPartV2", "MatrixDiagPartV3",
    "MatrixSetDiag", "MatrixSetDiagV2", "MatrixSetDiagV3", "CumulativeLogsumexp", "Bucketize", "ListDiff", "LowerBound", "UpperBound",
    "InTopKV2", "DenseBincount",
};

void eddy_tfl_index_ops_each(void (*fn)(const char *name, void *user),
                             void *user) {
  for (size_t i = 0; i < sizeof INDEX_OPS / sizeof INDEX_OPS[0]; i++)
    fn(INDEX_OPS[i], user);
}

static eddy_named_attr_t dtype_attr(eddy_tfl_t *z, eddy_dtype_t dt) {
  const char *s = eddy_dtype_name(dt);
  return eddy_ir_named_attr(z->ctx, "dtype",
                            eddy_ir_string_attr_get(z->ctx, s, strlen(s)));
}

/// The single constant axis of operand i, normalized against rank.
static eddy_status_t const_axis(eddy_tfl_t *z, const eddy_op_t *op, size_t i,
                                int32_t rank, int64_t *out) {
  int64_t a = 0;
  if (eddy_tfl_const_ints(z, tfl_in(z, op, i), &a, 1) != 1)
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
  int64_t k = eddy_tfl_const_ints(z, tfl_in(z, op, i), v, MAXR);
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
  eddy_value_t *x = tfl_in(z, op, 0), *r = NULL;
  int64_t axes[MAXR];
  size_t n = 0;
  EDDY_RETURN_IF_ERROR(const_axes(z, op, 1, x->type->rank, axes, &n));
  eddy_named_attr_t a = eddy_tfl_ints_attr(z, "axes", axes, n);
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.reverse", &x, 1, &a, 1, &r));
  tfl_out1(z, op, r);
  return NULL;
}

/// Any / All of booleans: the max / min of them as i8, compared with 0, so
/// that an empty reduction gives false / true as in TensorFlow.
static eddy_status_t lower_any_all(eddy_tfl_t *z, const eddy_op_t *op,
                                   bool any) {
  eddy_value_t *x = tfl_in(z, op, 0), *r = NULL, *zero = NULL;
  int64_t axes[MAXR];
  size_t n = 0;
  EDDY_RETURN_IF_ERROR(const_axes(z, op, 1, x->type->rank, axes, &n));
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, x, EDDY_DT_I8, &x));
  eddy_named_attr_t a[2] = {
      eddy_tfl_ints_attr(z, "axes", axes, n),
      eddy_tfl_bool_attr(z, "keepdims", eddy_ir_op_attr_bool(op, "keep_dims", false))};
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(
      z, op, any ? "core.reduce_max" : "core.reduce_min", &x, 1, a, 2, &r));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I8, 0, NULL, 0, &zero));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.gt", r, zero, &r));
  tfl_out1(z, op, r);
  return NULL;
}

static eddy_status_t lower_arg(eddy_tfl_t *z, const eddy_op_t *op, bool mx) {
  eddy_value_t *x = tfl_in(z, op, 0), *r = NULL;
  eddy_dtype_t dt = EDDY_DT_I64;
  eddy_tfl_attr_dtype(op, "output_type", &dt);
  if (dt != EDDY_DT_I32 && dt != EDDY_DT_I64)
    return eddy_tfl_error(op, "output_type must be int32 or int64");
  int64_t axis;
  EDDY_RETURN_IF_ERROR(const_axis(z, op, 1, x->type->rank, &axis));
  if (x->type->dtype == EDDY_DT_I1)
    EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, x, EDDY_DT_I8, &x));
  eddy_named_attr_t a[2] = {eddy_tfl_int_attr(z, "axis", axis),
                            dtype_attr(z, dt)};
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, mx ? "core.argmax" : "core.argmin",
                                      &x, 1, a, 2, &r));
  tfl_out1(z, op, r);
  return NULL;
}

static eddy_status_t lower_cumulative(eddy_tfl_t *z, const eddy_op_t *op,
                                      bool prod) {
  eddy_value_t *x = tfl_in(z, op, 0), *r = NULL;
  int64_t axis;
  EDDY_RETURN_IF_ERROR(const_axis(z, op, 1, x->type->rank, &axis));
  eddy_named_attr_t a[3] = {
      eddy_tfl_int_attr(z, "axis", axis),
      eddy_tfl_bool_attr(z, "exclusive", eddy_ir_op_attr_bool(op, "exclusive", false)),
      eddy_tfl_bool_attr(z, "reverse", eddy_ir_op_attr_bool(op, "reverse", false))};
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, prod ? "core.cumprod" : "core.cumsum",
                                      &x, 1, a, 3, &r));
  tfl_out1(z, op, r);
  return NULL;
}


/// CumulativeLogsumexp(x, axis) {exclusive, reverse}: out[i] = log(sum over
/// the j before i (or after, reverse; i itself unless exclusive) of
/// exp(x[j])). Each i has its own maximum, as a scan would: x is spread to
/// [..., i, j, ...] with the js outside i's range masked to -inf, and a
/// log-sum-exp taken over j (n x n work for n along the axis). An empty
/// range gives -inf, as in TensorFlow.
static eddy_status_t lower_cumulative_logsumexp(eddy_tfl_t *z,
                                                const eddy_op_t *op) {
  eddy_value_t *x = tfl_in(z, op, 0);
  const eddy_type_t *xt = x->type;
  int64_t axis;
  EDDY_RETURN_IF_ERROR(const_axis(z, op, 1, xt->rank, &axis));
  if (xt->rank >= MAXR)
    return eddy_tfl_error(op, "rank %d is too large", (int)xt->rank);
  bool excl = eddy_ir_op_attr_bool(op, "exclusive", false);
  bool rev = eddy_ir_op_attr_bool(op, "reverse", false);
  int32_t r = xt->rank;
  // xe: x with a dim of 1 (i) inserted before axis (j = axis + 1).
  int64_t ed[MAXR + 1], ef[MAXR + 1];
  for (int32_t k = 0, o = 0; k <= r; k++) {
    if (k == axis) {
      ed[k] = 1;
      ef[k] = -1;
      continue;
    }
    ed[k] = xt->dims[o] < 0 ? -1 : xt->dims[o];
    ef[k] = o++;
  }
  eddy_value_t *xe = NULL, *pi = NULL, *pj = NULL, *in = NULL;
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_reshape_keep(z, op, x, ed, (size_t)r + 1, ef, &xe));
  // in[i, j]: j <= i (j < i exclusive; >=, > reverse), shaped
  // [1..., n, n, 1...].
  EDDY_RETURN_IF_ERROR(eddy_tfl_positions(z, op, x, (int32_t)axis, 0, &pi));
  EDDY_RETURN_IF_ERROR(eddy_tfl_positions(z, op, x, (int32_t)axis, 1, &pj));
  const char *cmp = rev ? (excl ? "core.gt" : "core.ge")
                        : (excl ? "core.lt" : "core.le");
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, cmp, pj, pi, &in));
  int64_t md[MAXR + 1], mf[MAXR + 1];
  int64_t n = xt->dims[axis] < 0 ? -1 : xt->dims[axis];
  for (int32_t k = 0; k <= r; k++) {
    md[k] = k == axis || k == axis + 1 ? n : 1;
    mf[k] = k == axis ? 0 : k == axis + 1 ? 1 : -1;
  }
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_reshape_keep(z, op, in, md, (size_t)r + 1, mf, &in));
  eddy_value_t *ninf = NULL, *zf = NULL, *masked = NULL, *m = NULL,
               *isinf = NULL, *m0 = NULL, *d = NULL, *e = NULL, *sum = NULL,
               *lg = NULL, *res = NULL, *mr = NULL;
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_splat(z, xt->dtype, 0, NULL, -(double)INFINITY, &ninf));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, xt->dtype, 0, NULL, 0, &zf));
  EDDY_RETURN_IF_ERROR(tfl_sel(z, op, in, xe, ninf, &masked));
  int64_t ja = axis + 1;
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_reduce(z, op, "core.reduce_max", masked, &ja, 1, true, &m));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.eq", m, ninf, &isinf));
  EDDY_RETURN_IF_ERROR(tfl_sel(z, op, isinf, zf, m, &m0));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.sub", masked, m0, &d));
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.exp", &d, 1, NULL, 0, &e));
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_reduce(z, op, "core.reduce_sum", e, &ja, 1, false, &sum));
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build(z, op, "core.log", &sum, 1, NULL, 0, &lg));
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_reduce(z, op, "core.reduce_sum", m0, &ja, 1, false, &mr));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.add", lg, mr, &res));
  tfl_out1(z, op, res);
  return NULL;
}

/// Bucketize(x) {boundaries}: the number of boundaries <= x, as i32 (the
/// boundaries are sorted): a sum over the boundaries of x >= b.
static eddy_status_t lower_bucketize(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_value_t *x = tfl_in(z, op, 0);
  const eddy_type_t *xt = x->type;
  const eddy_attr_t *ba = eddy_ir_op_attr(op, "boundaries");
  if (!ba || ba->kind != EDDY_ATTR_ARRAY)
    return eddy_tfl_error(op, "attribute 'boundaries' is missing or not a "
                              "list of floats");
  if (xt->rank == EDDY_RANK_UNKNOWN || xt->rank >= MAXR)
    return eddy_tfl_error(op, "the input needs a known rank");
  size_t nb = ba->u.array.len;
  eddy_value_t *cnt = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I32, 0, NULL, 0, &cnt));
  for (size_t i = 0; i < nb; i++) {
    const eddy_attr_t *b = ba->u.array.elems[i];
    double bv;
    if (b->kind == EDDY_ATTR_FLOAT)
      bv = b->u.f;
    else if (b->kind == EDDY_ATTR_INT)
      bv = (double)b->u.i;
    else
      return eddy_tfl_error(op, "boundary #%zu is not a number", i);
    eddy_value_t *bc = NULL, *ge = NULL, *gi = NULL;
    EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, xt->dtype, 0, NULL, bv, &bc));
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.ge", x, bc, &ge));
    EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, ge, EDDY_DT_I32, &gi));
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.add", cnt, gi, &cnt));
  }
  if (nb == 0) {
    eddy_value_t *zx = NULL, *zi = NULL;
    EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, xt->dtype, 0, NULL, 0, &zx));
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.mul", x, zx, &zi));
    EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, zi, EDDY_DT_I32, &cnt));
  }
  tfl_out1(z, op, cnt);
  return NULL;
}

/// LowerBound / UpperBound(sorted_inputs [B, N], values [B, M]) {out_type}
/// (tf.searchsorted): for each value, the number of elements of its row of
/// sorted_inputs below it (LowerBound) or not above it (UpperBound), the
/// index at which it would be inserted: a [B, M, N] comparison summed over
/// N, O(M N) per row (TensorFlow's kernel searches each row in O(M log N)).
static eddy_status_t lower_bound(eddy_tfl_t *z, const eddy_op_t *op,
                                 bool upper) {
  eddy_value_t *s = tfl_in(z, op, 0), *v = tfl_in(z, op, 1);
  if (s->type->rank != 2 || v->type->rank != 2)
    return eddy_tfl_error(op, "sorted_inputs and values must be matrices "
                              "[batch, n] and [batch, m]");
  eddy_dtype_t dt = EDDY_DT_I32;
  if (!eddy_tfl_attr_dtype(op, "out_type", &dt) ||
      (dt != EDDY_DT_I32 && dt != EDDY_DT_I64))
    return eddy_tfl_error(op, "out_type must be int32 or int64");
  const int64_t sd[3] = {s->type->dims[0], 1, s->type->dims[1]},
                vd[3] = {v->type->dims[0], v->type->dims[1], 1},
                sf[3] = {0, -1, 1}, vf[3] = {0, 1, -1}, axis = 2;
  eddy_value_t *s3 = NULL, *v3 = NULL, *c = NULL, *r = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape_keep(z, op, s, sd, 3, sf, &s3));
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape_keep(z, op, v, vd, 3, vf, &v3));
  EDDY_RETURN_IF_ERROR(
      tfl_bin(z, op, upper ? "core.le" : "core.lt", s3, v3, &c));
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, c, dt, &c));
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_reduce(z, op, "core.reduce_sum", c, &axis, 1, false, &r));
  tfl_out1(z, op, r);
  return NULL;
}

/// ListDiff(x, y) {out_idx}: the values of x not in y, in x's order, and
/// their positions in x. Constant operands only (TensorFlow's gradient of
/// Prod computes it of the reduced axes and range(rank)).
static eddy_status_t lower_list_diff(eddy_tfl_t *z, const eddy_op_t *op) {
  int64_t xv[MAXR * 4], yv[MAXR * 4], ov[MAXR * 4], iv[MAXR * 4];
  int64_t nx = eddy_tfl_const_ints(z, tfl_in(z, op, 0), xv, MAXR * 4);
  int64_t ny = eddy_tfl_const_ints(z, tfl_in(z, op, 1), yv, MAXR * 4);
  if (nx < 0 || ny < 0)
    return eddy_tfl_error(op, "x and y must be constant vectors (of at most "
                              "%d values)",
                          MAXR * 4);
  int64_t no = 0;
  for (int64_t i = 0; i < nx; i++) {
    bool found = false;
    for (int64_t j = 0; j < ny && !found; j++)
      found = xv[i] == yv[j];
    if (!found) {
      ov[no] = xv[i];
      iv[no++] = i;
    }
  }
  eddy_dtype_t idt = EDDY_DT_I32;
  (void)eddy_tfl_attr_dtype(op, "out_idx", &idt);
  eddy_value_t *o = NULL, *ix = NULL;
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_int_constant(z, tfl_in(z, op, 0)->type->dtype, ov, no, &o));
  EDDY_RETURN_IF_ERROR(eddy_tfl_int_constant(z, idt, iv, no, &ix));
  eddy_tfl_set(z, &op->results[0], o);
  eddy_tfl_set(z, &op->results[1], ix);
  return NULL;
}

/// OneHot: eq(indices with a new dim at axis, iota over depth along that
/// dim), then select(on, off). An index outside [0, depth) matches nothing:
/// a row of off values, as in TensorFlow.
static eddy_status_t lower_one_hot(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_value_t *idx = tfl_in(z, op, 0), *on = tfl_in(z, op, 2),
               *off = tfl_in(z, op, 3);
  const eddy_type_t *it = idx->type;
  int64_t depth = 0;
  if (eddy_tfl_const_ints(z, tfl_in(z, op, 1), &depth, 1) != 1)
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
  // The indices with a dim of 1 at axis (dynamic dims read at run time).
  int64_t dims[MAXR + 1], from[MAXR + 1];
  for (int32_t i = 0, o = 0; i <= r; i++) {
    if (i == axis) {
      dims[i] = 1;
      from[i] = -1;
      continue;
    }
    dims[i] = it->dims[o] == EDDY_DIM_DYNAMIC ? -1 : it->dims[o];
    from[i] = o++;
  }
  eddy_value_t *ex = NULL, *io = NULL, *eq = NULL, *res = NULL;
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_reshape_keep(z, op, idx, dims, (size_t)r + 1, from, &ex));
  // iota of shape [depth, 1, ..., 1] (the dims after axis are 1).
  int64_t id[MAXR + 1];
  id[0] = depth;
  for (int32_t i = 1; i <= r - axis; i++)
    id[i] = 1;
  const eddy_type_t *iot = eddy_ir_tensor_type_get(
      z->ctx, idx->type->dtype, (int32_t)(r - axis + 1), id);
  eddy_named_attr_t da = eddy_tfl_int_attr(z, "dimension", 0);
  eddy_op_t *o = NULL;
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build_typed(z, op, "core.iota", NULL, 0, &da, 1, &iot, 1, &o));
  io = eddy_ir_op_result(o, 0);
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.eq", ex, io, &eq));
  EDDY_RETURN_IF_ERROR(tfl_sel(z, op, eq, on, off, &res));
  tfl_out1(z, op, res);
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
  if (eddy_tfl_const_ints(z, tfl_in(z, op, 0), &axis, 1) != 1)
    return eddy_tfl_error(op, "the concat dimension must be a constant");
  const eddy_type_t *st = tfl_in(z, op, 1)->type;
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
      EDDY_RETURN_IF_ERROR(eddy_tfl_int_constant(z, dt, v, rank, &r));
    } else {
      // zeros, the running offset at axis, zeros
      int64_t zeros[MAXR] = {0};
      eddy_value_t *parts[3];
      size_t np = 0;
      if (axis > 0)
        EDDY_RETURN_IF_ERROR(eddy_tfl_int_constant(z, dt, zeros, axis, &parts[np++]));
      parts[np++] = run;
      if (rank - axis - 1 > 0)
        EDDY_RETURN_IF_ERROR(
            eddy_tfl_int_constant(z, dt, zeros, rank - axis - 1, &parts[np++]));
      eddy_named_attr_t a = eddy_tfl_int_attr(z, "axis", 0);
      EDDY_RETURN_IF_ERROR(
          eddy_tfl_build(z, op, "core.concat", parts, np, &a, 1, &r));
    }
    eddy_tfl_set(z, &op->results[i], r);
    if (i + 1 == n)
      break;
    eddy_value_t *s = tfl_in(z, op, i + 1);
    int64_t d = shape_entry(z, s, axis);
    if (known && d >= 0) {
      off += d;
      continue;
    }
    if (known) {
      EDDY_RETURN_IF_ERROR(eddy_tfl_int_constant(z, dt, &off, 1, &run));
      known = false;
    }
    eddy_value_t *piece = NULL;
    int64_t lo = axis, hi = axis + 1;
    eddy_named_attr_t a[2] = {eddy_tfl_ints_attr(z, "start", &lo, 1),
                              eddy_tfl_ints_attr(z, "limit", &hi, 1)};
    EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.slice", &s, 1, a, 2, &piece));
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.add", run, piece, &run));
  }
  return NULL;
}

/// BroadcastArgs(s0, s1): numpy's broadcast of two shapes. Constant shapes
/// give a constant (incompatible ones are an error); otherwise, for shapes
/// of known lengths, the shorter is padded with 1s and each entry is the
/// other where it is 1.
static eddy_status_t lower_broadcast_args(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_value_t *s[2] = {tfl_in(z, op, 0), tfl_in(z, op, 1)};
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
    EDDY_RETURN_IF_ERROR(eddy_tfl_int_constant(z, dt, out, rk, &r));
    tfl_out1(z, op, r);
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
    EDDY_RETURN_IF_ERROR(eddy_tfl_int_constant(z, dt, ones, rk - len[k], &pad));
    parts[0] = pad;
    parts[1] = s[k];
    eddy_named_attr_t a = eddy_tfl_int_attr(z, "axis", 0);
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "core.concat", parts, 2, &a, 1, &s[k]));
  }
  eddy_value_t *one = NULL, *is1 = NULL, *r = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, dt, 0, NULL, 1, &one));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.eq", s[0], one, &is1));
  EDDY_RETURN_IF_ERROR(tfl_sel(z, op, is1, s[1], s[0], &r));
  tfl_out1(z, op, r);
  return NULL;
}

/// BroadcastTo(x, shape): core.broadcast_to of a constant shape; of the
/// shape of a tensor y (Shape(y), maybe through BroadcastArgs with a
/// constant), x broadcast against y with core ops; else the declared
/// result type when it is static; else, for a run-time shape of known
/// length (one popped from a list in a loop's gradient), x broadcast
/// against a tensor of that shape.
static eddy_status_t lower_broadcast_to(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_value_t *x = tfl_in(z, op, 0), *shape = tfl_in(z, op, 1), *r = NULL;
  int64_t dims[MAXR];
  int64_t n = eddy_tfl_const_ints(z, shape, dims, MAXR);
  bool ok = n >= 0;
  for (int64_t i = 0; ok && i < n; i++)
    ok = dims[i] >= 0;
  if (!ok) {
    eddy_value_t *y = eddy_tfl_shape_source(shape);
    if (y) {
      EDDY_RETURN_IF_ERROR(eddy_tfl_broadcast_like(z, op, x, y, &r));
      tfl_out1(z, op, r);
      return NULL;
    }
    const eddy_type_t *t = op->results[0].type;
    eddy_status_t st = NULL;
    if ((!eddy_ir_type_is_static(t) || t->rank > MAXR) &&
        eddy_tfl_broadcast_to_run_time(z, op, x, shape, &r, &st)) {
      if (!st)
        tfl_out1(z, op, r);
      return st;
    }
    if (!eddy_ir_type_is_static(t) || t->rank > MAXR)
      return eddy_tfl_error(op, "the target shape is neither a constant, nor "
                                "the shape of a tensor, nor known from the "
                                "result type, nor of known length");
    n = t->rank;
    for (int32_t i = 0; i < t->rank; i++)
      dims[i] = t->dims[i];
  }
  eddy_named_attr_t a = eddy_tfl_ints_attr(z, "shape", dims, (size_t)n);
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build(z, op, "core.broadcast_to", &x, 1, &a, 1, &r));
  tfl_out1(z, op, r);
  return NULL;
}

/// InvertPermutation(p): inv[p[j]] = j. A constant for a constant p (which
/// must be a permutation); otherwise inv[i] = sum_j (p[j] == i) * j.
static eddy_status_t lower_invert_permutation(eddy_tfl_t *z,
                                              const eddy_op_t *op) {
  eddy_value_t *p = tfl_in(z, op, 0), *r = NULL;
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
    EDDY_RETURN_IF_ERROR(eddy_tfl_int_constant(z, t->dtype, inv, n, &r));
    tfl_out1(z, op, r);
    return NULL;
  }
  int64_t row[2] = {1, n}, sq[2] = {n, n};
  const eddy_type_t *it = eddy_ir_tensor_type_get(z->ctx, t->dtype, 2, sq);
  eddy_value_t *pr = NULL, *ii = NULL, *jj = NULL, *eq = NULL, *zero = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, p, row, 2, &pr));
  eddy_op_t *o = NULL;
  for (int d = 0; d < 2; d++) {
    eddy_named_attr_t da = eddy_tfl_int_attr(z, "dimension", d);
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build_typed(z, op, "core.iota", NULL, 0, &da, 1, &it, 1, &o));
    if (d)
      jj = eddy_ir_op_result(o, 0);
    else
      ii = eddy_ir_op_result(o, 0);
  }
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.eq", pr, ii, &eq));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, t->dtype, 0, NULL, 0, &zero));
  EDDY_RETURN_IF_ERROR(tfl_sel(z, op, eq, jj, zero, &r));
  int64_t ax = 1;
  eddy_named_attr_t a = eddy_tfl_ints_attr(z, "axes", &ax, 1);
  eddy_value_t *sum = NULL;
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build(z, op, "core.reduce_sum", &r, 1, &a, 1, &sum));
  tfl_out1(z, op, sum);
  return NULL;
}

/// EuclideanNorm: sqrt(sum(x * x)) over the axes (floats).
static eddy_status_t lower_euclidean_norm(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_value_t *x = tfl_in(z, op, 0), *r = NULL;
  if (!eddy_dtype_is_float(x->type->dtype))
    return eddy_tfl_error(op, "only floating-point operands are supported");
  int64_t axes[MAXR];
  size_t n = 0;
  EDDY_RETURN_IF_ERROR(const_axes(z, op, 1, x->type->rank, axes, &n));
  eddy_value_t *sq = NULL, *sum = NULL;
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.mul", x, x, &sq));
  eddy_named_attr_t a[2] = {
      eddy_tfl_ints_attr(z, "axes", axes, n),
      eddy_tfl_bool_attr(z, "keepdims", eddy_ir_op_attr_bool(op, "keep_dims", false))};
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build(z, op, "core.reduce_sum", &sq, 1, a, 2, &sum));
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.sqrt", &sum, 1, NULL, 0, &r));
  tfl_out1(z, op, r);
  return NULL;
}

/// L2Loss: sum(x * x) / 2 over every element (tf.nn.l2_loss;
/// tf.clip_by_global_norm sums them for the global norm).
static eddy_status_t lower_l2_loss(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_value_t *x = tfl_in(z, op, 0);
  const eddy_type_t *xt = x->type;
  if (!eddy_dtype_is_float(xt->dtype))
    return eddy_tfl_error(op, "only floating-point operands are supported");
  if (xt->kind != EDDY_TYPE_TENSOR || xt->rank == EDDY_RANK_UNKNOWN ||
      xt->rank > MAXR)
    return eddy_tfl_error(op, "the operand's rank is unknown");
  int64_t axes[MAXR];
  for (int32_t a = 0; a < xt->rank; a++)
    axes[a] = a;
  eddy_value_t *sq = NULL, *sum = NULL, *half = NULL, *r = NULL;
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.mul", x, x, &sq));
  EDDY_RETURN_IF_ERROR(eddy_tfl_reduce(z, op, "core.reduce_sum", sq, axes,
                                       (size_t)xt->rank, false, &sum));
  EDDY_RETURN_IF_ERROR(tfl_scalar_like(z, x, 0.5, &half));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.mul", sum, half, &r));
  tfl_out1(z, op, r);
  return NULL;
}

/// Where (one operand): the number of nonzero elements, a sum of x != 0 as
/// i64 over every axis, then core.where, which takes it as its row count.
static eddy_status_t lower_where(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_value_t *x = tfl_in(z, op, 0), *nz = x, *n = NULL, *r = NULL;
  int32_t rank = x->type->rank;
  if (rank == EDDY_RANK_UNKNOWN)
    return eddy_tfl_error(op, "the operand's rank is unknown");
  if (x->type->dtype != EDDY_DT_I1) {
    eddy_value_t *zero = NULL;
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_splat(z, x->type->dtype, 0, NULL, 0, &zero));
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.ne", x, zero, &nz));
  }
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, nz, EDDY_DT_I64, &nz));
  n = nz;
  if (rank > 0) {
    int64_t axes[MAXR];
    for (int32_t i = 0; i < rank; i++)
      axes[i] = i;
    eddy_named_attr_t a[2] = {eddy_tfl_ints_attr(z, "axes", axes, (size_t)rank),
                              eddy_tfl_bool_attr(z, "keepdims", false)};
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "core.reduce_sum", &nz, 1, a, 2, &n));
  }
  eddy_value_t *ops[2] = {x, n};
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.where", ops, 2, NULL, 0, &r));
  tfl_out1(z, op, r);
  return NULL;
}

/// The positions 0..d-1 along dim `axis` of x (d static or read at run
/// time), as an i64 tensor [d, 1] (k = 0: rows) or [1, d] (k = 1: columns).
eddy_status_t eddy_tfl_positions(eddy_tfl_t *z, const eddy_op_t *op,
                                 eddy_value_t *x, int32_t axis, int k,
                                 eddy_value_t **out) {
  int64_t d = x->type->dims[axis];
  eddy_value_t *zero = NULL, *one = NULL, *n = NULL, *r = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, 0, &zero));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, 1, &one));
  if (d >= 0)
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, (double)d, &n));
  else
    EDDY_RETURN_IF_ERROR(eddy_tfl_dim(z, op, x, axis, &n));
  eddy_value_t *rops[3] = {zero, n, one};
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build(z, op, "core.range", rops, 3, NULL, 0, &r));
  int64_t dims[2] = {1, 1}, from[2] = {0, 0};
  dims[k] = d < 0 ? -1 : d;
  return eddy_tfl_reshape_keep(z, op, r, dims, 2, from, out);
}

/// MatrixBandPart(x, lower, upper): x [..., M, N] with the elements outside
/// the band set to 0, element (i, j) kept when (lower < 0 or i - j <=
/// lower) and (upper < 0 or j - i <= upper); the bounds may be run-time
/// scalars. Keras' causal attention mask is MatrixBandPart(ones, -1, 0).
static eddy_status_t lower_band_part(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_value_t *x = tfl_in(z, op, 0);
  const eddy_type_t *xt = x->type;
  if (xt->kind != EDDY_TYPE_TENSOR || xt->rank == EDDY_RANK_UNKNOWN ||
      xt->rank < 2)
    return eddy_tfl_error(op, "the operand must have a known rank >= 2");
  eddy_value_t *bound[2] = {tfl_in(z, op, 1), tfl_in(z, op, 2)};
  for (int k = 0; k < 2; k++) {
    const eddy_type_t *bt = bound[k]->type;
    if (bt->kind != EDDY_TYPE_TENSOR || bt->rank != 0 ||
        eddy_dtype_is_float(bt->dtype))
      return eddy_tfl_error(op, "num_%s must be an integer scalar",
                            k ? "upper" : "lower");
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_cast(z, op, bound[k], EDDY_DT_I64, &bound[k]));
  }
  // i: [M, 1], j: [1, N] (i64).
  eddy_value_t *idx[2], *zero = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, 0, &zero));
  for (int k = 0; k < 2; k++)
    EDDY_RETURN_IF_ERROR(eddy_tfl_positions(z, op, x, xt->rank - 2 + k, k, &idx[k]));
  // keep = (lower < 0 | i - j <= lower) & (upper < 0 | j - i <= upper)
  eddy_value_t *keep = NULL;
  for (int k = 0; k < 2; k++) {
    eddy_value_t *diff = NULL, *neg = NULL, *in = NULL, *c = NULL;
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.sub", idx[k], idx[1 - k],
                                 &diff));
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.lt", bound[k], zero, &neg));
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.le", diff, bound[k], &in));
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.or", neg, in, &c));
    if (keep)
      EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.and", keep, c, &c));
    keep = c;
  }
  eddy_value_t *zx = NULL, *r = NULL;
  EDDY_RETURN_IF_ERROR(tfl_scalar_like(z, x, 0.0, &zx));
  EDDY_RETURN_IF_ERROR(tfl_sel(z, op, keep, x, zx, &r));
  tfl_out1(z, op, r);
  return NULL;
}

/// A dim of v as an i64 scalar: a constant when static, else core.dim.
static eddy_status_t dim_i64(eddy_tfl_t *z, const eddy_op_t *op,
                             eddy_value_t *v, int32_t k, eddy_value_t **out) {
  int64_t d = v->type->dims[k];
  if (d >= 0)
    return eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, (double)d, out);
  return eddy_tfl_dim(z, op, v, k, out);
}

/// ReverseSequence(x, lengths) {seq_dim, batch_dim}: along seq_dim, the
/// first lengths[b] elements of batch row b reversed, the others kept. x
/// is transposed to [batch, seq, rest...] and flattened to [B * T, rest...];
/// one core.gather at b * T + (t < len_b ? len_b - 1 - t : t), of shape
/// [B, T], gives [B, T, rest...], transposed back. A length above T is
/// reported by the gather (an index out of range), as TensorFlow reports it.
static eddy_status_t lower_reverse_sequence(eddy_tfl_t *z,
                                            const eddy_op_t *op) {
  eddy_value_t *x = tfl_in(z, op, 0), *lens = tfl_in(z, op, 1);
  const eddy_type_t *xt = x->type, *lt = lens->type;
  int64_t sd = eddy_ir_op_attr_int(op, "seq_dim", -1);
  int64_t bd = eddy_ir_op_attr_int(op, "batch_dim", 0);
  if (xt->kind != EDDY_TYPE_TENSOR || xt->rank == EDDY_RANK_UNKNOWN ||
      xt->rank < 2 || xt->rank > MAXR)
    return eddy_tfl_error(op, "the input must have a known rank >= 2");
  int32_t r = xt->rank;
  if (sd < 0 || sd >= r || bd < 0 || bd >= r || sd == bd)
    return eddy_tfl_error(op, "seq_dim %lld and batch_dim %lld must be two "
                              "different dims of the input (rank %d)",
                          (long long)sd, (long long)bd, (int)r);
  if (lt->kind != EDDY_TYPE_TENSOR || lt->rank != 1 ||
      eddy_dtype_is_float(lt->dtype))
    return eddy_tfl_error(op, "seq_lengths must be an integer vector");
  int64_t perm[MAXR], inv[MAXR];
  int32_t q = 0;
  perm[q++] = bd;
  perm[q++] = sd;
  for (int32_t i = 0; i < r; i++)
    if (i != bd && i != sd)
      perm[q++] = i;
  bool ident = true;
  for (int32_t i = 0; i < r; i++) {
    inv[perm[i]] = i;
    ident = ident && perm[i] == i;
  }
  eddy_value_t *xp = x;
  if (!ident) {
    eddy_named_attr_t a = eddy_tfl_ints_attr(z, "perm", perm, (size_t)r);
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "core.transpose", &x, 1, &a, 1, &xp));
  }
  // rev[b, t] = b * T + (t < len_b ? len_b - 1 - t : t), [B, T] (i64).
  eddy_value_t *B = NULL, *T = NULL, *zero = NULL, *one = NULL;
  EDDY_RETURN_IF_ERROR(dim_i64(z, op, xp, 0, &B));
  EDDY_RETURN_IF_ERROR(dim_i64(z, op, xp, 1, &T));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, 0, &zero));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, 1, &one));
  int64_t db = xp->type->dims[0] < 0 ? -1 : xp->type->dims[0];
  int64_t dt = xp->type->dims[1] < 0 ? -1 : xp->type->dims[1];
  eddy_value_t *bi = NULL, *ti = NULL, *l = NULL;
  eddy_value_t *rb[3] = {zero, B, one}, *rt[3] = {zero, T, one};
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.range", rb, 3, NULL, 0,
                                      &bi));
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.range", rt, 3, NULL, 0,
                                      &ti));
  int64_t col[2] = {db, 1}, row[2] = {1, dt}, f0[2] = {0, 0};
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape_keep(z, op, bi, col, 2, f0, &bi));
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape_keep(z, op, ti, row, 2, f0, &ti));
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, lens, EDDY_DT_I64, &l));
  int64_t lcol[2] = {lt->dims[0] < 0 ? -1 : lt->dims[0], 1};
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape_keep(z, op, l, lcol, 2, f0, &l));
  eddy_value_t *in = NULL, *lm1 = NULL, *back = NULL, *t2 = NULL, *base = NULL,
               *idx = NULL;
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.lt", ti, l, &in));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.sub", l, one, &lm1));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.sub", lm1, ti, &back));
  EDDY_RETURN_IF_ERROR(tfl_sel(z, op, in, back, ti, &t2));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.mul", bi, T, &base));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.add", base, t2, &idx));
  // xp flattened to [B * T, rest...].
  int64_t fd[MAXR];
  eddy_value_t *fv[MAXR] = {NULL}, *xf = NULL, *g = NULL;
  fd[0] = db >= 0 && dt >= 0 ? db * dt : -1;
  if (fd[0] < 0)
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.mul", B, T, &fv[0]));
  for (int32_t i = 2; i < r; i++) {
    fd[i - 1] = xp->type->dims[i] < 0 ? -1 : xp->type->dims[i];
    if (fd[i - 1] < 0)
      EDDY_RETURN_IF_ERROR(eddy_tfl_dim(z, op, xp, i, &fv[i - 1]));
  }
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_reshape_dyn(z, op, xp, fd, (size_t)r - 1, fv, &xf));
  eddy_named_attr_t a0 = eddy_tfl_int_attr(z, "axis", 0);
  eddy_value_t *gops[2] = {xf, idx};
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.gather", gops, 2, &a0, 1,
                                      &g));
  eddy_value_t *res = g;
  if (!ident) {
    eddy_named_attr_t a = eddy_tfl_ints_attr(z, "perm", inv, (size_t)r);
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "core.transpose", &g, 1, &a, 1, &res));
  }
  tfl_out1(z, op, res);
  return NULL;
}

/// GatherV2 with batch_dims b > 0: params [B..., pre..., A, post...],
/// indices [B..., I...]. The gathered axis is moved next to the batch dims,
/// params flattened to [prod(B) * A, pre..., post...], each index offset
/// by its batch row times A (an index outside [0, A) becomes -1, an
/// error), one core.gather, and the pre dims moved back in front of I.
/// Dynamic dims (a batch dim, A, the others) are read at run time.
static eddy_status_t lower_batch_gather(eddy_tfl_t *z, const eddy_op_t *op,
                                        int64_t nb) {
  eddy_value_t *p = tfl_in(z, op, 0), *idx = tfl_in(z, op, 1);
  const eddy_type_t *pt = p->type, *it = idx->type;
  int64_t axis = 0;
  if (eddy_tfl_const_ints(z, tfl_in(z, op, 2), &axis, 1) != 1)
    return eddy_tfl_error(op, "the axis is not a constant");
  if (pt->rank == EDDY_RANK_UNKNOWN || it->rank == EDDY_RANK_UNKNOWN)
    return eddy_tfl_error(op, "params and indices need known ranks");
  if (nb < 0)
    nb += it->rank;
  if (axis < 0)
    axis += pt->rank;
  if (nb < 0 || nb > it->rank || axis < nb || axis >= pt->rank)
    return eddy_tfl_error(op, "batch_dims %lld and axis %lld do not fit "
                              "params of rank %d and indices of rank %d",
                          (long long)nb, (long long)axis, (int)pt->rank,
                          (int)it->rank);
  // The batch dims' sizes: static where params or indices know them, else
  // read from params at run time.
  int64_t nbatch = 1, bd[MAXR];
  eddy_value_t *bv[MAXR] = {NULL}, *nbv = NULL;
  for (int64_t i = 0; i < nb; i++) {
    if (pt->dims[i] >= 0 && it->dims[i] >= 0 && pt->dims[i] != it->dims[i])
      return eddy_tfl_error(op, "batch dimension %lld differs: %lld and %lld",
                            (long long)i, (long long)pt->dims[i],
                            (long long)it->dims[i]);
    bd[i] = pt->dims[i] >= 0 ? pt->dims[i] : it->dims[i] >= 0 ? it->dims[i] : -1;
    if (bd[i] < 0) {
      nbatch = -1;
      EDDY_RETURN_IF_ERROR(eddy_tfl_dim(z, op, p, (int32_t)i, &bv[i]));
    } else {
      EDDY_RETURN_IF_ERROR(
          eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, (double)bd[i], &bv[i]));
      if (nbatch >= 0)
        nbatch *= bd[i];
    }
  }
  if (nbatch < 0) {
    nbv = bv[0];
    for (int64_t i = 1; i < nb; i++)
      EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.mul", nbv, bv[i], &nbv));
  }
  // params' = transpose(params) with axis right after the batch dims.
  int64_t perm[MAXR], fd[MAXR];
  int32_t pr = pt->rank, q = 0;
  for (int64_t i = 0; i < nb; i++)
    perm[q++] = i;
  perm[q++] = axis;
  for (int64_t i = nb; i < pr; i++)
    if (i != axis)
      perm[q++] = i;
  eddy_value_t *pp = p;
  bool ident = true;
  for (int32_t i = 0; i < pr; i++)
    ident = ident && perm[i] == i;
  if (!ident) {
    eddy_named_attr_t a = eddy_tfl_ints_attr(z, "perm", perm, (size_t)pr);
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "core.transpose", &p, 1, &a, 1, &pp));
  }
  // params' flattened to [prod(B) * A, pre..., post...].
  int64_t A = pt->dims[axis];
  eddy_value_t *ca = NULL, *fv[MAXR] = {NULL};
  EDDY_RETURN_IF_ERROR(dim_i64(z, op, pp, (int32_t)nb, &ca));
  int32_t fr = 0;
  fd[fr] = nbatch >= 0 && A >= 0 ? nbatch * A : -1;
  if (fd[fr] < 0) {
    if (!nbv)
      EDDY_RETURN_IF_ERROR(
          eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, (double)nbatch, &nbv));
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.mul", nbv, ca, &fv[fr]));
  }
  fr++;
  for (int32_t i = (int32_t)nb + 1; i < pr; i++) {
    int64_t d = pp->type->dims[i];
    fd[fr] = d < 0 ? -1 : d;
    if (d < 0)
      EDDY_RETURN_IF_ERROR(eddy_tfl_dim(z, op, pp, i, &fv[fr]));
    fr++;
  }
  eddy_value_t *flat = NULL;
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_reshape_dyn(z, op, pp, fd, (size_t)fr, fv, &flat));
  // Offsets: the batch row (iota over prod(B), reshaped to B + [1] * rest)
  // times A.
  eddy_value_t *ix = NULL, *row = NULL, *off = NULL, *li = NULL, *zero = NULL,
               *lim = NULL, *neg = NULL, *big = NULL, *bad = NULL, *m1 = NULL,
               *lin = NULL, *rows = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, idx, EDDY_DT_I64, &ix));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, 0, &zero));
  if (nbatch >= 0) {
    const eddy_type_t *iot =
        eddy_ir_tensor_type_get(z->ctx, EDDY_DT_I64, 1, &nbatch);
    eddy_named_attr_t da = eddy_tfl_int_attr(z, "dimension", 0);
    eddy_op_t *o = NULL;
    EDDY_RETURN_IF_ERROR(eddy_tfl_build_typed(z, op, "core.iota", NULL, 0, &da,
                                              1, &iot, 1, &o));
    rows = eddy_ir_op_result(o, 0);
  } else {
    eddy_value_t *one = NULL;
    EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, 1, &one));
    eddy_value_t *rops[3] = {zero, nbv, one};
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "core.range", rops, 3, NULL, 0, &rows));
  }
  int64_t rd[MAXR];
  eddy_value_t *rv[MAXR] = {NULL};
  for (int32_t i = 0; i < it->rank; i++) {
    rd[i] = i < nb ? bd[i] : 1;
    rv[i] = i < nb && bd[i] < 0 ? bv[i] : NULL;
  }
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_reshape_dyn(z, op, rows, rd, (size_t)it->rank, rv, &row));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.mul", row, ca, &off));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.add", ix, off, &li));
  lim = ca;
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.lt", ix, zero, &neg));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.ge", ix, lim, &big));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.or", neg, big, &bad));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, -1, &m1));
  EDDY_RETURN_IF_ERROR(tfl_sel(z, op, bad, m1, li, &lin));
  eddy_value_t *g = NULL, *ops[2] = {flat, lin};
  eddy_named_attr_t a0 = eddy_tfl_int_attr(z, "axis", 0);
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.gather", ops, 2, &a0, 1, &g));
  // g: [B..., I..., pre..., post...]; TensorFlow's order is
  // [B..., pre..., I..., post...].
  int32_t ni = it->rank - (int32_t)nb, npre = (int32_t)(axis - nb);
  if (npre > 0 && ni > 0) {
    int64_t gp[MAXR];
    int32_t gr = g->type->rank, w = 0;
    for (int32_t i = 0; i < nb; i++)
      gp[w++] = i;
    for (int32_t i = 0; i < npre; i++)
      gp[w++] = nb + ni + i;
    for (int32_t i = 0; i < ni; i++)
      gp[w++] = nb + i;
    for (int32_t i = (int32_t)nb + ni + npre; i < gr; i++)
      gp[w++] = i;
    eddy_named_attr_t a = eddy_tfl_ints_attr(z, "perm", gp, (size_t)gr);
    eddy_value_t *gt = NULL;
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "core.transpose", &g, 1, &a, 1, &gt));
    g = gt;
  }
  tfl_out1(z, op, g);
  return NULL;
}

/// ---- TopKV2, BatchMatMulV3 -----------------------------------------------

/// TopKV2(x, k): core.topk. A run-time k needs a static last dim C: the
/// whole row is sorted (k = C: descending, ties by index, as TensorFlow's
/// kernel) and its first k columns are gathered (core.range(0, k), which a k
/// outside [0, C] makes an error at run time).
static eddy_status_t lower_topk(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_value_t *x = tfl_in(z, op, 0), *idx = NULL, *kv = NULL;
  int64_t k = 0;
  const eddy_type_t *xt = x->type;
  if (eddy_tfl_const_ints(z, tfl_in(z, op, 1), &k, 1) != 1) {
    if (xt->rank == EDDY_RANK_UNKNOWN || xt->rank < 1 ||
        xt->dims[xt->rank - 1] < 0)
      return eddy_tfl_error(op, "a run-time k needs a static last dim");
    k = xt->dims[xt->rank - 1];
    kv = tfl_in(z, op, 1);
  }
  if (k < 0)
    return eddy_tfl_error(op, "k %lld is negative", (long long)k);
  eddy_dtype_t it = EDDY_DT_I32;
  eddy_tfl_attr_dtype(op, "index_type", &it);
  eddy_named_attr_t a = eddy_tfl_int_attr(z, "k", k);
  eddy_op_t *o = NULL;
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build_typed(z, op, "core.topk", &x, 1, &a, 1, NULL, 0, &o));
  eddy_value_t *v = eddy_ir_op_result(o, 0);
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_cast(z, op, eddy_ir_op_result(o, 1), it, &idx));
  if (kv) {
    eddy_value_t *zero = NULL, *one = NULL, *pos = NULL;
    EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, kv, EDDY_DT_I64, &kv));
    EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, kv, NULL, 0, &kv));
    EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, 0, &zero));
    EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, 1, &one));
    eddy_value_t *rops[3] = {zero, kv, one}, *gops[2];
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "core.range", rops, 3, NULL, 0, &pos));
    eddy_named_attr_t ga = eddy_tfl_int_attr(z, "axis", xt->rank - 1);
    gops[1] = pos;
    gops[0] = v;
    EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.gather", gops, 2, &ga, 1, &v));
    gops[0] = idx;
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "core.gather", gops, 2, &ga, 1, &idx));
  }
  eddy_tfl_set(z, &op->results[0], v);
  eddy_tfl_set(z, &op->results[1], idx);
  return NULL;
}

/// InTopKV2(predictions [B, C], targets [B], k): whether fewer than k
/// classes of row i predict more than its target does (ties at the boundary
/// count as in, as in TensorFlow); false for a target outside [0, C) and
/// for a row holding a non-finite prediction (TensorFlow's "cannot say").
static eddy_status_t lower_in_top_k(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_value_t *p = tfl_in(z, op, 0), *tg = NULL, *k = NULL, *pos = NULL,
               *hit = NULL, *zero = NULL, *t = NULL, *gt = NULL, *n = NULL,
               *r = NULL, *c = NULL, *ok = NULL, *fin = NULL, *one = NULL;
  if (p->type->rank != 2 || tfl_in(z, op, 1)->type->rank != 1)
    return eddy_tfl_error(op, "the predictions must be a matrix [batch, "
                              "classes] and the targets a vector");
  int64_t col[2] = {-1, 1}, ax = 1;
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, tfl_in(z, op, 1), EDDY_DT_I64, &tg));
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, tfl_in(z, op, 2), EDDY_DT_I64, &k));
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, k, NULL, 0, &k));
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, tg, col, 2, &tg));
  EDDY_RETURN_IF_ERROR(eddy_tfl_positions(z, op, p, 1, 1, &pos));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.eq", tg, pos, &hit));
  // The target's prediction: the row summed where it is selected.
  EDDY_RETURN_IF_ERROR(tfl_scalar_like(z, p, 0.0, &zero));
  EDDY_RETURN_IF_ERROR(tfl_sel(z, op, hit, p, zero, &t));
  EDDY_RETURN_IF_ERROR(eddy_tfl_reduce(z, op, "core.reduce_sum", t, &ax, 1,
                                       true, &t));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.gt", p, t, &gt));
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, gt, EDDY_DT_I64, &n));
  EDDY_RETURN_IF_ERROR(eddy_tfl_reduce(z, op, "core.reduce_sum", n, &ax, 1,
                                       false, &n));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.lt", n, k, &r));
  // A target in range (one class hit), in a row of finite predictions
  // (p - p is 0, NaN for infinities and NaNs).
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, hit, EDDY_DT_I64, &c));
  EDDY_RETURN_IF_ERROR(eddy_tfl_reduce(z, op, "core.reduce_sum", c, &ax, 1,
                                       false, &c));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.sub", p, p, &fin));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.ne", fin, zero, &fin));
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, fin, EDDY_DT_I64, &fin));
  EDDY_RETURN_IF_ERROR(eddy_tfl_reduce(z, op, "core.reduce_sum", fin, &ax, 1,
                                       false, &fin));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, 1, &one));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.eq", c, one, &ok));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.lt", fin, one, &fin));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.and", ok, fin, &ok));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.and", r, ok, &r));
  tfl_out1(z, op, r);
  return NULL;
}

/// BatchMatMulV3: BatchMatMulV2 with both operands cast to Tout first.
static eddy_status_t lower_bmm_v3(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_dtype_t dt;
  if (!eddy_tfl_attr_dtype(op, "Tout", &dt))
    return eddy_tfl_error(op, "attribute 'Tout' is not an eddy dtype");
  eddy_value_t *ops[2], *r = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, tfl_in(z, op, 0), dt, &ops[0]));
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, tfl_in(z, op, 1), dt, &ops[1]));
  eddy_named_attr_t a[2] = {
      eddy_tfl_bool_attr(z, "transpose_a", eddy_ir_op_attr_bool(op, "adj_x", false)),
      eddy_tfl_bool_attr(z, "transpose_b", eddy_ir_op_attr_bool(op, "adj_y", false))};
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.matmul", ops, 2, a, 2, &r));
  tfl_out1(z, op, r);
  return NULL;
}

/// ---- Softmax cross entropy -------------------------------------------------

/// log_softmax of x along its last axis, the max subtracted first.
static eddy_status_t log_softmax(eddy_tfl_t *z, const eddy_op_t *op,
                                 eddy_value_t *x, eddy_value_t **out) {
  if (x->type->rank == EDDY_RANK_UNKNOWN || x->type->rank < 1)
    return eddy_tfl_error(op, "the logits need a known rank >= 1");
  int64_t ax = x->type->rank - 1;
  eddy_named_attr_t a[2] = {eddy_tfl_ints_attr(z, "axes", &ax, 1),
                            eddy_tfl_bool_attr(z, "keepdims", true)};
  eddy_value_t *m = NULL, *sh = NULL, *e = NULL, *s = NULL, *l = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.reduce_max", &x, 1, a, 2, &m));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.sub", x, m, &sh));
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.exp", &sh, 1, NULL, 0, &e));
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.reduce_sum", &e, 1, a, 2, &s));
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.log", &s, 1, NULL, 0, &l));
  return tfl_bin(z, op, "core.sub", sh, l, out);
}

/// loss = -sum(labels * log_softmax(x)) per row, backprop = softmax(x) -
/// labels (labels broadcast against the logits).
static eddy_status_t lower_xent(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_value_t *x = tfl_in(z, op, 0), *lab = tfl_in(z, op, 1), *ls = NULL,
               *p = NULL, *s = NULL, *loss = NULL, *sm = NULL, *bp = NULL;
  if (x->type->rank != 2)
    return eddy_tfl_error(op, "the logits must be a matrix [batch, classes]");
  EDDY_RETURN_IF_ERROR(log_softmax(z, op, x, &ls));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.mul", lab, ls, &p));
  int64_t ax = 1;
  eddy_named_attr_t a = eddy_tfl_ints_attr(z, "axes", &ax, 1);
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.reduce_sum", &p, 1, &a, 1, &s));
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.neg", &s, 1, NULL, 0, &loss));
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.exp", &ls, 1, NULL, 0, &sm));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.sub", sm, lab, &bp));
  eddy_tfl_set(z, &op->results[0], loss);
  eddy_tfl_set(z, &op->results[1], bp);
  return NULL;
}

/// The sparse form: labels are class indices. loss = -log_softmax(x)[i,
/// labels[i]], backprop = softmax(x) - one_hot(labels); a label outside
/// [0, classes) gives NaN in its row (TensorFlow's GPU kernel does; its CPU
/// kernel reports an error). The number of classes may be dynamic.
static eddy_status_t lower_sparse_xent(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_value_t *x = tfl_in(z, op, 0), *lab = tfl_in(z, op, 1), *ls = NULL;
  const eddy_type_t *xt = x->type, *lt = lab->type;
  if (xt->rank != 2)
    return eddy_tfl_error(op, "the logits must be a matrix [batch, classes]");
  EDDY_RETURN_IF_ERROR(log_softmax(z, op, x, &ls));
  if (lt->rank != 1)
    return eddy_tfl_error(op, "the labels must be a vector");
  eddy_value_t *lr = NULL, *io = NULL, *hit = NULL, *zero = NULL, *one = NULL,
               *oh = NULL, *p = NULL, *s = NULL, *loss = NULL, *sm = NULL,
               *bp = NULL, *lz = NULL, *lc = NULL, *neg = NULL, *big = NULL,
               *bad = NULL, *nan = NULL, *badr = NULL;
  int64_t col[2] = {-1, 1};
  // The labels as i64 against the classes' positions [1, classes].
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, lab, EDDY_DT_I64, &lab));
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, lab, col, 2, &lr));
  EDDY_RETURN_IF_ERROR(eddy_tfl_positions(z, op, x, 1, 1, &io));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.eq", lr, io, &hit));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, xt->dtype, 0, NULL, 0, &zero));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, xt->dtype, 0, NULL, 1, &one));
  EDDY_RETURN_IF_ERROR(tfl_sel(z, op, hit, one, zero, &oh));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.mul", oh, ls, &p));
  int64_t ax = 1;
  eddy_named_attr_t a = eddy_tfl_ints_attr(z, "axes", &ax, 1);
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.reduce_sum", &p, 1, &a, 1, &s));
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.neg", &s, 1, NULL, 0, &loss));
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.exp", &ls, 1, NULL, 0, &sm));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.sub", sm, oh, &bp));
  // Labels out of range: NaN in the row.
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, 0, &lz));
  if (xt->dims[1] >= 0)
    EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL,
                                        (double)xt->dims[1], &lc));
  else
    EDDY_RETURN_IF_ERROR(eddy_tfl_dim(z, op, x, 1, &lc));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.lt", lab, lz, &neg));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.ge", lab, lc, &big));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.or", neg, big, &bad));
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_splat(z, xt->dtype, 0, NULL, __builtin_nan(""), &nan));
  eddy_value_t *loss2 = NULL, *bp2 = NULL;
  EDDY_RETURN_IF_ERROR(tfl_sel(z, op, bad, nan, loss, &loss2));
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, bad, col, 2, &badr));
  EDDY_RETURN_IF_ERROR(tfl_sel(z, op, badr, nan, bp, &bp2));
  eddy_tfl_set(z, &op->results[0], loss2);
  eddy_tfl_set(z, &op->results[1], bp2);
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
  if (strcmp(t, "CumulativeLogsumexp") == 0)
    return lower_cumulative_logsumexp(z, op);
  if (strcmp(t, "LowerBound") == 0 || strcmp(t, "UpperBound") == 0)
    return lower_bound(z, op, t[0] == 'U');
  if (strcmp(t, "Bucketize") == 0)
    return lower_bucketize(z, op);
  if (strcmp(t, "ListDiff") == 0)
    return lower_list_diff(z, op);
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
  if (strcmp(t, "L2Loss") == 0)
    return lower_l2_loss(z, op);
  if (strncmp(t, "Matrix", 6) == 0 && strstr(t, "Diag"))
    return eddy_tfl_lower_matrix_diag(z, op);
  if (strcmp(t, "GatherV2") == 0) {
    int64_t nb = eddy_ir_op_attr_int(op, "batch_dims", 0);
    if (nb != 0)
      return lower_batch_gather(z, op, nb);
    *handled = false; // legalize_shape.c's
    return NULL;
  }
  if (strcmp(t, "GatherNd") == 0)
    return eddy_tfl_lower_gather_nd(z, op);
  if (strcmp(t, "ScatterNd") == 0)
    return eddy_tfl_lower_scatter_nd(z, op);
  if (strcmp(t, "SparseToDense") == 0)
    return eddy_tfl_lower_sparse_to_dense(z, op);
  if (strcmp(t, "TensorScatterUpdate") == 0 ||
      strcmp(t, "TensorScatterAdd") == 0)
    return eddy_tfl_lower_tensor_scatter(z, op,
                                         strcmp(t, "TensorScatterAdd") == 0);
  if (strcmp(t, "UnsortedSegmentSum") == 0 || strcmp(t, "SegmentSum") == 0)
    return eddy_tfl_lower_segment(z, op, "sum", t[0] == 'S');
  if (strcmp(t, "MatrixBandPart") == 0)
    return lower_band_part(z, op);
  if (strcmp(t, "ReverseSequence") == 0)
    return lower_reverse_sequence(z, op);
  if (strcmp(t, "SegmentMean") == 0)
    return eddy_tfl_lower_segment(z, op, "mean", true);
  if (strcmp(t, "SegmentMax") == 0 || strcmp(t, "UnsortedSegmentMax") == 0)
    return eddy_tfl_lower_segment(z, op, "max", t[0] == 'S');
  if (strcmp(t, "SegmentMin") == 0 || strcmp(t, "UnsortedSegmentMin") == 0)
    return eddy_tfl_lower_segment(z, op, "min", t[0] == 'S');
  if (strcmp(t, "SegmentProd") == 0 || strcmp(t, "UnsortedSegmentProd") == 0)
    return eddy_tfl_lower_segment(z, op, "prod", t[0] == 'S');
  if (strcmp(t, "InTopKV2") == 0)
    return lower_in_top_k(z, op);
  if (strcmp(t, "DenseBincount") == 0)
    return eddy_tfl_lower_bincount(z, op);
  if (strcmp(t, "TopKV2") == 0)
    return lower_topk(z, op);
  if (strcmp(t, "Einsum") == 0)
    return eddy_tfl_lower_einsum(z, op);
  if (strcmp(t, "BatchMatMulV3") == 0)
    return lower_bmm_v3(z, op);
  if (strcmp(t, "SoftmaxCrossEntropyWithLogits") == 0)
    return lower_xent(z, op);
  if (strcmp(t, "SparseSoftmaxCrossEntropyWithLogits") == 0)
    return lower_sparse_xent(z, op);
  if (strcmp(t, "Where") == 0)
    return lower_where(z, op);
  if (strcmp(t, "DynamicStitch") == 0 ||
      strcmp(t, "ParallelDynamicStitch") == 0)
    return eddy_tfl_lower_dynamic_stitch(z, op);
  *handled = false;
  return NULL;
}

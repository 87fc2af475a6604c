/// legalize-tf: gathers and scatters on a flattened view (GatherNd,
/// ScatterNd, TensorScatterUpdate/Add) and the segment reductions
/// (Segment* and UnsortedSegment* of Sum, Max, Min, Prod; SegmentMean), and
/// DenseBincount.
/// The K indexed dims are linearized row-major, with strides and bounds
/// read at run time for dynamic dims; a scatter is core.scatter into their
/// product of rows. legalize_index.c dispatches to them.
#include "lower/tf/tf_lower_internal.h"

#include "dialects/core/core.h"

#include <stdlib.h>
#include <string.h>

#define MAXR 64

/// The linear index of each K-tuple along the last axis of `indices` into
/// the leading dims[0..K) (row-major), as i64, of shape indices[:-1]; -1
/// where a component is outside its dim, so that the gather or scatter
/// using it reports the index as out of range.
static eddy_status_t linearize_static(eddy_tfl_t *z, const eddy_op_t *op,
                                      eddy_value_t *indices,
                                      const int64_t *dims, int64_t k,
                                      eddy_value_t **out) {
  eddy_value_t *ix = NULL, *st = NULL, *prod = NULL, *lin = NULL, *lim = NULL,
               *zero = NULL, *neg = NULL, *big = NULL, *bad = NULL,
               *badi = NULL, *anyb = NULL, *z8 = NULL, *m1 = NULL;
  int64_t strides[MAXR], acc = 1;
  for (int64_t i = k - 1; i >= 0; i--) {
    strides[i] = acc;
    if (!eddy_checked_mul_i64(acc, dims[i], &acc))
      return eddy_tfl_error(op, "the indexed dims are too large");
  }
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, indices, EDDY_DT_I64, &ix));
  EDDY_RETURN_IF_ERROR(eddy_tfl_int_constant(z, EDDY_DT_I64, strides, k, &st));
  EDDY_RETURN_IF_ERROR(eddy_tfl_int_constant(z, EDDY_DT_I64, dims, k, &lim));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.mul", ix, st, &prod));
  int64_t last = ix->type->rank - 1;
  eddy_named_attr_t a = eddy_tfl_ints_attr(z, "axes", &last, 1);
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build(z, op, "core.reduce_sum", &prod, 1, &a, 1, &lin));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, 0, &zero));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.lt", ix, zero, &neg));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.ge", ix, lim, &big));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.or", neg, big, &bad));
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, bad, EDDY_DT_I8, &badi));
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build(z, op, "core.reduce_max", &badi, 1, &a, 1, &anyb));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I8, 0, NULL, 0, &z8));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.gt", anyb, z8, &anyb));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, -1, &m1));
  return tfl_sel(z, op, anyb, m1, lin, out);
}

/// Dim i of dims/dimv as an i64 scalar: the constant dims[i], or the
/// run-time value dimv[i] when dims[i] < 0.
static eddy_status_t nd_dim(eddy_tfl_t *z, const int64_t *dims,
                            eddy_value_t *const *dimv, int64_t i,
                            eddy_value_t **out) {
  if (dims[i] >= 0)
    return eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, (double)dims[i], out);
  *out = dimv[i];
  return NULL;
}

/// linearize_static where dims[i] < 0 is the run-time size dimv[i] (an i64
/// scalar): each component of the K-tuples times its run-time stride.
static eddy_status_t linearize(eddy_tfl_t *z, const eddy_op_t *op,
                               eddy_value_t *indices, const int64_t *dims,
                               eddy_value_t *const *dimv, int64_t k,
                               eddy_value_t **out) {
  bool stat = true;
  for (int64_t i = 0; i < k; i++)
    stat = stat && dims[i] >= 0;
  if (stat)
    return linearize_static(z, op, indices, dims, k, out);
  eddy_value_t *ix = NULL, *stride = NULL, *lin = NULL, *bad = NULL,
               *zero = NULL, *m1 = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, indices, EDDY_DT_I64, &ix));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, 0, &zero));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, 1, &stride));
  eddy_named_attr_t ax =
      eddy_tfl_int_attr(z, "axis", ix->type->rank - 1);
  for (int64_t i = k - 1; i >= 0; i--) {
    eddy_value_t *at = NULL, *c = NULL, *size = NULL, *term = NULL,
                 *neg = NULL, *big = NULL, *out_i = NULL;
    EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, (double)i,
                                        &at));
    eddy_value_t *gops[2] = {ix, at};
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "core.gather", gops, 2, &ax, 1, &c));
    EDDY_RETURN_IF_ERROR(nd_dim(z, dims, dimv, i, &size));
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.mul", c, stride, &term));
    if (lin)
      EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.add", lin, term, &lin));
    else
      lin = term;
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.lt", c, zero, &neg));
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.ge", c, size, &big));
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.or", neg, big, &out_i));
    if (bad)
      EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.or", bad, out_i, &bad));
    else
      bad = out_i;
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.mul", stride, size, &stride));
  }
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, -1, &m1));
  return tfl_sel(z, op, bad, m1, lin, out);
}

/// The product of dims[0..k) (dimv for dynamic ones): *n when all are
/// static, else -1 and *nv its run-time value.
static eddy_status_t nd_count(eddy_tfl_t *z, const eddy_op_t *op,
                              const int64_t *dims, eddy_value_t *const *dimv,
                              int64_t k, int64_t *n, eddy_value_t **nv) {
  *n = 1;
  *nv = NULL;
  bool stat = true;
  for (int64_t i = 0; i < k; i++) {
    stat = stat && dims[i] >= 0;
    if (stat && !eddy_checked_mul_i64(*n, dims[i], n))
      return eddy_tfl_error(op, "the indexed dims are too large");
  }
  if (stat)
    return NULL;
  *n = -1;
  for (int64_t i = 0; i < k; i++) {
    eddy_value_t *d = NULL;
    EDDY_RETURN_IF_ERROR(nd_dim(z, dims, dimv, i, &d));
    if (*nv)
      EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.mul", *nv, d, &d));
    *nv = d;
  }
  return NULL;
}

/// The static last dim K of indices and the product of dims[0..K).
static eddy_status_t nd_depth(const eddy_op_t *op, const eddy_type_t *it,
                              int64_t *k) {
  if (it->rank == EDDY_RANK_UNKNOWN || it->rank < 1 ||
      it->dims[it->rank - 1] < 0)
    return eddy_tfl_error(op, "the indices need a known rank and a static "
                              "last dimension");
  *k = it->dims[it->rank - 1];
  if (*k < 1 || *k > MAXR)
    return eddy_tfl_error(op, "an index depth of %lld is not supported",
                          (long long)*k);
  return NULL;
}

/// GatherNd(params, indices): params flattened over its first K dims,
/// gathered at the linearized indices (any of params' dims may be dynamic).
eddy_status_t eddy_tfl_lower_gather_nd(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_value_t *p = tfl_in(z, op, 0), *idx = tfl_in(z, op, 1), *lin = NULL,
               *flat = NULL, *r = NULL;
  int64_t k;
  EDDY_RETURN_IF_ERROR(nd_depth(op, idx->type, &k));
  const eddy_type_t *pt = p->type;
  if (pt->rank == EDDY_RANK_UNKNOWN || pt->rank < k)
    return eddy_tfl_error(op, "params need a known rank of at least the "
                              "index depth %lld",
                          (long long)k);
  int64_t dims[MAXR], fd[MAXR], n;
  eddy_value_t *dimv[MAXR] = {NULL}, *fv[MAXR] = {NULL}, *nv = NULL;
  for (int32_t i = 0; i < pt->rank; i++) {
    dims[i] = pt->dims[i] < 0 ? -1 : pt->dims[i];
    if (dims[i] < 0)
      EDDY_RETURN_IF_ERROR(eddy_tfl_dim(z, op, p, i, &dimv[i]));
  }
  EDDY_RETURN_IF_ERROR(nd_count(z, op, dims, dimv, k, &n, &nv));
  int32_t fr = 1;
  fd[0] = n;
  fv[0] = nv;
  for (int32_t i = (int32_t)k; i < pt->rank; i++, fr++) {
    fd[fr] = dims[i];
    fv[fr] = dimv[i];
  }
  EDDY_RETURN_IF_ERROR(linearize(z, op, idx, dims, dimv, k, &lin));
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape_dyn(z, op, p, fd, (size_t)fr, fv, &flat));
  eddy_value_t *ops[2] = {flat, lin};
  eddy_named_attr_t a = eddy_tfl_int_attr(z, "axis", 0);
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.gather", ops, 2, &a, 1, &r));
  tfl_out1(z, op, r);
  return NULL;
}

/// The updates scattered (added) into zeros of shape dims[0..rank) at the
/// K-tuples of indices; *out has that shape. A dim dims[i] < 0 is the
/// run-time size dimv[i] (an i64 scalar).
static eddy_status_t scatter_nd(eddy_tfl_t *z, const eddy_op_t *op,
                                eddy_value_t *idx, eddy_value_t *upd,
                                const int64_t *dims,
                                eddy_value_t *const *dimv, int32_t rank,
                                eddy_value_t **out) {
  int64_t k = 0;
  EDDY_RETURN_IF_ERROR(nd_depth(op, idx->type, &k));
  if (rank < k)
    return eddy_tfl_error(op, "the shape has fewer dims than the index depth");
  int64_t n, rd[MAXR];
  eddy_value_t *nv = NULL, *lin = NULL, *sc = NULL;
  for (int32_t i = 0; i < rank; i++)
    rd[i] = dims[i] < 0 ? -1 : dims[i];
  EDDY_RETURN_IF_ERROR(nd_count(z, op, rd, dimv, k, &n, &nv));
  EDDY_RETURN_IF_ERROR(linearize(z, op, idx, rd, dimv, k, &lin));
  eddy_named_attr_t a[2] = {
      eddy_tfl_int_attr(z, "axis", 0),
      eddy_tfl_int_attr(z, "size", n)};
  eddy_value_t *ops[3] = {lin, upd, nv};
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.scatter", ops,
                                      nv ? 3 : 2, a, 2, &sc));
  return eddy_tfl_reshape_dyn(z, op, sc, rd, (size_t)rank, dimv, out);
}

/// ScatterNd(indices, updates, shape): a constant shape, or the declared
/// result type's, with the dims it leaves dynamic read from the shape
/// operand.
eddy_status_t eddy_tfl_lower_scatter_nd(eddy_tfl_t *z, const eddy_op_t *op) {
  int64_t dims[MAXR];
  eddy_value_t *dimv[MAXR] = {NULL};
  int64_t n = eddy_tfl_const_ints(z, tfl_in(z, op, 2), dims, MAXR);
  if (n < 0) {
    const eddy_type_t *t = op->results[0].type;
    if (t->rank == EDDY_RANK_UNKNOWN || t->rank > MAXR)
      return eddy_tfl_error(op, "the shape is neither a constant nor known "
                                "from the result type");
    n = t->rank;
    for (int32_t i = 0; i < t->rank; i++) {
      dims[i] = t->dims[i];
      if (dims[i] >= 0)
        continue;
      EDDY_RETURN_IF_ERROR(
          eddy_tfl_element(z, op, tfl_in(z, op, 2), i, &dimv[i]));
      EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, dimv[i], EDDY_DT_I64,
                                         &dimv[i]));
    }
  }
  eddy_value_t *r = NULL;
  EDDY_RETURN_IF_ERROR(scatter_nd(z, op, tfl_in(z, op, 0), tfl_in(z, op, 1),
                                  dims, dimv, (int32_t)n, &r));
  tfl_out1(z, op, r);
  return NULL;
}

/// The updates scattered as in scatter_nd where some index lands, `other`
/// (of the result's shape, or a scalar) elsewhere: a scatter of ones tells
/// which elements an index reached.
static eddy_status_t scatter_or(eddy_tfl_t *z, const eddy_op_t *op,
                                eddy_value_t *idx, eddy_value_t *upd,
                                const int64_t *dims, eddy_value_t *const *dimv,
                                int32_t rank, eddy_value_t *other,
                                eddy_value_t **out) {
  eddy_value_t *sc = NULL, *one = NULL, *ones = NULL, *cnt = NULL,
               *zero = NULL, *hit = NULL;
  EDDY_RETURN_IF_ERROR(scatter_nd(z, op, idx, upd, dims, dimv, rank, &sc));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I32, 0, NULL, 1, &one));
  EDDY_RETURN_IF_ERROR(eddy_tfl_broadcast_like(z, op, one, upd, &ones));
  EDDY_RETURN_IF_ERROR(scatter_nd(z, op, idx, ones, dims, dimv, rank, &cnt));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I32, 0, NULL, 0, &zero));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.gt", cnt, zero, &hit));
  return tfl_sel(z, op, hit, sc, other, out);
}

/// TensorScatterUpdate / TensorScatterAdd(tensor, indices, updates): the
/// updates scattered as in ScatterNd, then added to the tensor, or put in
/// place of its elements where some update lands (duplicate indices are
/// summed; TensorFlow leaves their order unspecified).
eddy_status_t eddy_tfl_lower_tensor_scatter(eddy_tfl_t *z, const eddy_op_t *op,
                                            bool add){
  eddy_value_t *t = tfl_in(z, op, 0), *idx = tfl_in(z, op, 1),
               *upd = tfl_in(z, op, 2);
  const eddy_type_t *tt = t->type;
  if (tt->rank == EDDY_RANK_UNKNOWN || tt->rank > MAXR)
    return eddy_tfl_error(op, "the tensor's rank is unknown");
  eddy_value_t *dimv[MAXR] = {NULL};
  for (int32_t i = 0; i < tt->rank; i++)
    if (tt->dims[i] < 0)
      EDDY_RETURN_IF_ERROR(eddy_tfl_dim(z, op, t, i, &dimv[i]));
  eddy_value_t *sc = NULL, *r = NULL;
  if (!add) {
    EDDY_RETURN_IF_ERROR(
        scatter_or(z, op, idx, upd, tt->dims, dimv, tt->rank, t, &r));
    tfl_out1(z, op, r);
    return NULL;
  }
  EDDY_RETURN_IF_ERROR(
      scatter_nd(z, op, idx, upd, tt->dims, dimv, tt->rank, &sc));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.add", t, sc, &r));
  tfl_out1(z, op, r);
  return NULL;
}

/// SparseToDense(indices, output_shape, values, default_value)
/// (tf.sparse.to_dense): the values (a vector, or a scalar for every
/// index) scattered as in ScatterNd into a tensor of output_shape, a
/// vector of known length whose elements are read at run time where the
/// result type leaves a dim dynamic, and default_value where no index
/// lands. Indices [N, R], or [N] or a scalar for a 1-D output. An index
/// out of range is a run-time error of the scatter, as in ScatterNd;
/// repeated indices are summed (TensorFlow, with validate_indices,
/// reports them).
eddy_status_t eddy_tfl_lower_sparse_to_dense(eddy_tfl_t *z,
                                             const eddy_op_t *op) {
  eddy_value_t *idx = tfl_in(z, op, 0), *shape = tfl_in(z, op, 1),
               *vals = tfl_in(z, op, 2), *dflt = tfl_in(z, op, 3);
  const eddy_type_t *st = shape->type, *it = idx->type, *vt = vals->type,
                    *rt = op->results[0].type;
  if (st->kind != EDDY_TYPE_TENSOR || st->rank != 1 || st->dims[0] < 0 ||
      st->dims[0] > MAXR || eddy_dtype_is_float(st->dtype))
    return eddy_tfl_error(op, "output_shape must be an integer vector of "
                              "known length");
  int32_t rank = (int32_t)st->dims[0];
  if (it->kind != EDDY_TYPE_TENSOR || it->rank == EDDY_RANK_UNKNOWN ||
      it->rank > 2 || (it->rank < 2 && rank != 1))
    return eddy_tfl_error(op, "sparse_indices must be [N, %d] (or [N] or a "
                              "scalar for a 1-D output)",
                          rank);
  if (vt->kind != EDDY_TYPE_TENSOR || vt->rank == EDDY_RANK_UNKNOWN ||
      vt->rank > 1 || vt->dtype == EDDY_DT_I1)
    return eddy_tfl_error(op, "sparse_values must be a numeric scalar or "
                              "vector");
  if (it->rank < 2) {
    const int64_t col[2] = {-1, 1};
    EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, idx, col, 2, &idx));
  }
  int64_t dims[MAXR];
  eddy_value_t *dimv[MAXR] = {NULL};
  bool typed = rt->kind == EDDY_TYPE_TENSOR && rt->rank == rank;
  for (int32_t i = 0; i < rank; i++) {
    dims[i] = typed ? rt->dims[i] : EDDY_DIM_DYNAMIC;
    if (dims[i] >= 0)
      continue;
    EDDY_RETURN_IF_ERROR(eddy_tfl_element(z, op, shape, i, &dimv[i]));
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_cast(z, op, dimv[i], EDDY_DT_I64, &dimv[i]));
  }
  if (vt->rank == 0) {
    // One value for every index: broadcast like the indices' first column.
    eddy_value_t *at = NULL, *c = NULL, *gops[2] = {idx, NULL};
    eddy_named_attr_t ax = eddy_tfl_int_attr(z, "axis", 1);
    EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, 0, &at));
    gops[1] = at;
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "core.gather", gops, 2, &ax, 1, &c));
    EDDY_RETURN_IF_ERROR(eddy_tfl_broadcast_like(z, op, vals, c, &vals));
  }
  eddy_value_t *r = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, dflt, vt->dtype, &dflt));
  EDDY_RETURN_IF_ERROR(
      scatter_or(z, op, idx, vals, dims, dimv, rank, dflt, &r));
  tfl_out1(z, op, r);
  return NULL;
}

/// The number of segments of a sorted segment op (SegmentSum, ...): the
/// last id + 1, a constant when the ids are (*num >= 0), else a run-time
/// i64 scalar (*numv; the largest id + 1: TensorFlow requires sorted ids).
static eddy_status_t sorted_segment_count(eddy_tfl_t *z, const eddy_op_t *op,
                                          eddy_value_t *ids, int64_t *num,
                                          eddy_value_t **numv) {
  int64_t v[1024];
  int64_t n = eddy_tfl_const_ints(z, ids, v, 1024);
  *num = -1;
  *numv = NULL;
  if (n >= 0) {
    int64_t m = -1;
    for (int64_t i = 0; i < n; i++) {
      if (v[i] < 0 || (i > 0 && v[i] < v[i - 1]))
        return eddy_tfl_error(op, "segment ids must be sorted and >= 0, id "
                                  "#%lld is %lld",
                              (long long)i, (long long)v[i]);
      m = v[i];
    }
    *num = m + 1;
    return NULL;
  }
  eddy_value_t *m = NULL, *one = NULL;
  int64_t ax = 0;
  eddy_named_attr_t a[2] = {eddy_tfl_ints_attr(z, "axes", &ax, 1),
                            eddy_tfl_bool_attr(z, "keepdims", false)};
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.reduce_max", &ids, 1, a, 2,
                                      &m));
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, m, EDDY_DT_I64, &m));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, 1, &one));
  return tfl_bin(z, op, "core.add", m, one, numv);
}

/// data's rows (over the dims of ids, which may be negative: dropped)
/// added into num rows (numv: a run-time count when num < 0) with
/// core.scatter; an id >= the count is an error.
static eddy_status_t scatter_segments(eddy_tfl_t *z, const eddy_op_t *op,
                                      eddy_value_t *data, eddy_value_t *ids,
                                      int64_t num, eddy_value_t *numv,
                                      eddy_value_t **out) {
  const eddy_type_t *it = ids->type, *dt = data->type;
  if (it->rank == EDDY_RANK_UNKNOWN || dt->rank == EDDY_RANK_UNKNOWN ||
      it->rank > dt->rank)
    return eddy_tfl_error(op, "segment ids and data need known ranks, the "
                              "ids' at most the data's");
  // The ids' mask with a 1 for each data dim past them (their dynamic
  // dims, any number, kept from the ids).
  int64_t bd[MAXR], from[MAXR];
  for (int32_t i = 0; i < dt->rank; i++) {
    bd[i] = i < it->rank ? (it->dims[i] < 0 ? -1 : it->dims[i]) : 1;
    from[i] = i < it->rank ? i : -1;
  }
  eddy_value_t *zi = NULL, *neg = NULL, *negb = NULL, *zd = NULL,
               *d2 = NULL, *i2 = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, it->dtype, 0, NULL, 0, &zi));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.lt", ids, zi, &neg));
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape_keep(z, op, neg, bd,
                                             (size_t)dt->rank, from, &negb));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, dt->dtype, 0, NULL, 0, &zd));
  EDDY_RETURN_IF_ERROR(tfl_sel(z, op, negb, zd, data, &d2));
  EDDY_RETURN_IF_ERROR(tfl_sel(z, op, neg, zi, ids, &i2));
  eddy_named_attr_t a[2] = {eddy_tfl_int_attr(z, "axis", 0),
                            eddy_tfl_int_attr(z, "size", numv ? -1 : num)};
  eddy_value_t *ops[3] = {i2, d2, numv};
  return eddy_tfl_build(z, op, "core.scatter", ops, numv ? 3 : 2, a, 2, out);
}

/// The largest (hi) or lowest finite value of dtype dt, as a double.
static bool dtype_extreme(eddy_dtype_t dt, bool hi, double *out) {
  double m;
  switch (dt) {
  case EDDY_DT_F16: m = 65504.0; break;
  case EDDY_DT_BF16: m = 3.3895313892515355e38; break;
  case EDDY_DT_F32: m = 3.4028234663852886e38; break;
  case EDDY_DT_F64: m = 1.7976931348623157e308; break;
  case EDDY_DT_I8: *out = hi ? 127.0 : -128.0; return true;
  case EDDY_DT_I32: *out = hi ? 2147483647.0 : -2147483648.0; return true;
  default: return false;
  }
  *out = hi ? m : -m;
  return true;
}

/// Segment reductions by a mask (ids 1-D, [N]; data [N, p...]):
/// mask[k, j] = ids[j] == k for k in [0, num), the data broadcast to
/// [num, N, p...] with the reduction's identity where the mask is false,
/// reduced over N. kind: "max", "min", "prod" or "mean". Empty segments
/// get `empty` (TensorFlow: 0 for the sorted ops, the identity for the
/// unsorted ones; mean: 0). Ids outside [0, num) match no segment.
static eddy_status_t masked_segments(eddy_tfl_t *z, const eddy_op_t *op,
                                     const char *kind, eddy_value_t *data,
                                     eddy_value_t *ids, int64_t num,
                                     eddy_value_t *numv, bool zero_empty,
                                     eddy_value_t **out) {
  const eddy_type_t *it = ids->type, *dt = data->type;
  if (it->kind != EDDY_TYPE_TENSOR || it->rank != 1 ||
      dt->kind != EDDY_TYPE_TENSOR || dt->rank == EDDY_RANK_UNKNOWN ||
      dt->rank < 1 || dt->rank >= MAXR)
    return eddy_tfl_error(op, "segment ids must be a vector and the data of "
                              "known rank >= 1");
  bool mean = strcmp(kind, "mean") == 0, prod = strcmp(kind, "prod") == 0;
  bool max = strcmp(kind, "max") == 0;
  double ident = mean ? 0.0 : prod ? 1.0 : 0.0;
  if (!mean && !prod && !dtype_extreme(dt->dtype, !max, &ident))
    return eddy_tfl_error(op, "data of dtype %s is not supported",
                          eddy_dtype_name(dt->dtype));
  int32_t r = dt->rank;
  // seg: [num, 1] of ids' dtype.
  eddy_value_t *seg = NULL, *zero = NULL, *one = NULL, *lim = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, it->dtype, 0, NULL, 0, &zero));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, it->dtype, 0, NULL, 1, &one));
  if (numv)
    EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, numv, it->dtype, &lim));
  else
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_splat(z, it->dtype, 0, NULL, (double)num, &lim));
  eddy_value_t *rops[3] = {zero, lim, one};
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.range", rops, 3, NULL, 0,
                                      &seg));
  int64_t sd[2] = {numv ? -1 : num, 1}, sf[2] = {0, 1};
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape_keep(z, op, seg, sd, 2, sf, &seg));
  // ids: [1, N]; mask: [num, N, 1...] (rank r + 1).
  int64_t idd[2] = {1, it->dims[0] < 0 ? -1 : it->dims[0]}, idf[2] = {0, 0};
  eddy_value_t *idr = NULL, *mask = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape_keep(z, op, ids, idd, 2, idf, &idr));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.eq", seg, idr, &mask));
  int64_t md[MAXR], mf[MAXR], xd[MAXR], xf[MAXR];
  md[0] = sd[0];
  mf[0] = 0;
  md[1] = idd[1];
  mf[1] = 1;
  xd[0] = 1;
  xf[0] = 0;
  for (int32_t i = 0; i < r; i++) {
    xd[i + 1] = dt->dims[i] < 0 ? -1 : dt->dims[i];
    xf[i + 1] = i;
    if (i > 0) {
      md[i + 1] = 1;
      mf[i + 1] = 0;
    }
  }
  eddy_value_t *maskb = NULL, *xb = NULL, *id = NULL, *sel = NULL, *red = NULL;
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_reshape_keep(z, op, mask, md, (size_t)r + 1, mf, &maskb));
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_reshape_keep(z, op, data, xd, (size_t)r + 1, xf, &xb));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, dt->dtype, 0, NULL, ident, &id));
  EDDY_RETURN_IF_ERROR(tfl_sel(z, op, maskb, xb, id, &sel));
  int64_t ax = 1;
  const char *rn = mean ? "core.reduce_sum"
                   : prod ? "core.reduce_prod"
                   : max  ? "core.reduce_max"
                          : "core.reduce_min";
  EDDY_RETURN_IF_ERROR(eddy_tfl_reduce(z, op, rn, sel, &ax, 1, false, &red));
  if (!mean && !zero_empty) {
    *out = red;
    return NULL;
  }
  // The count of each segment's rows, [num, 1...] (rank r).
  eddy_value_t *cnt = NULL, *cf = NULL, *zd = NULL, *hit = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, maskb, dt->dtype, &cf));
  EDDY_RETURN_IF_ERROR(eddy_tfl_reduce(z, op, "core.reduce_sum", cf, &ax, 1,
                                       false, &cnt));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, dt->dtype, 0, NULL, 0, &zd));
  if (mean) {
    eddy_value_t *onef = NULL, *den = NULL;
    EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, dt->dtype, 0, NULL, 1, &onef));
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.maximum", cnt, onef, &den));
    return tfl_bin(z, op, "core.div", red, den, out);
  }
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.gt", cnt, zd, &hit));
  return tfl_sel(z, op, hit, red, zd, out);
}

/// The segment reductions. kind "sum": UnsortedSegmentSum(data, ids,
/// num_segments), data's rows (over the dims of ids) added into
/// num_segments rows, a negative id dropping its row, as in TensorFlow (it
/// adds zeros at row 0), an id >= num_segments an error; SegmentSum the
/// same with sorted 1-D ids, last id + 1 rows (num_segments of
/// UnsortedSegmentSum may be a run-time scalar). Otherwise ("mean", "max",
/// "min", "prod"): SegmentMean / Max / Min / Prod (sorted 1-D ids) and
/// UnsortedSegmentMax / Min / Prod (1-D ids, constant num_segments).
eddy_status_t eddy_tfl_lower_segment(eddy_tfl_t *z, const eddy_op_t *op,
                                     const char *kind, bool sorted){
  eddy_value_t *data = tfl_in(z, op, 0), *ids = tfl_in(z, op, 1);
  int64_t num = 0;
  eddy_value_t *numv = NULL, *r = NULL;
  if (sorted)
    EDDY_RETURN_IF_ERROR(sorted_segment_count(z, op, ids, &num, &numv));
  else if (eddy_tfl_const_ints(z, tfl_in(z, op, 2), &num, 1) == 1) {
    if (num < 0)
      return eddy_tfl_error(op, "num_segments is %lld", (long long)num);
  } else if (strcmp(kind, "sum") == 0 && tfl_in(z, op, 2)->type->rank == 0) {
    // A run-time count (the gradient of a gather with batch dims on a
    // dynamic batch: the batch size times the gathered dim).
    num = -1;
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_cast(z, op, tfl_in(z, op, 2), EDDY_DT_I64, &numv));
  } else
    return eddy_tfl_error(op, "num_segments must be a constant >= 0");
  if (strcmp(kind, "sum") == 0)
    EDDY_RETURN_IF_ERROR(scatter_segments(z, op, data, ids, num, numv, &r));
  else
    EDDY_RETURN_IF_ERROR(masked_segments(z, op, kind, data, ids, num, numv,
                                         sorted && strcmp(kind, "prod") != 0,
                                         &r));
  tfl_out1(z, op, r);
  return NULL;
}


/// DenseBincount(input [N] or [B, N], size, weights, binary_output): out[v]
/// (out[b, v]) sums the weights (1 without weights: an empty weights
/// operand) of the entries equal to v, for v in [0, size); binary_output
/// gives 1 where any entry is v. A one-hot comparison of the entries with
/// the positions [size], summed over N. Entries outside [0, size) count
/// nowhere (TensorFlow ignores those >= size and reports negative ones).
eddy_status_t eddy_tfl_lower_bincount(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_value_t *x = tfl_in(z, op, 0), *size = tfl_in(z, op, 1),
               *w = tfl_in(z, op, 2), *pos = NULL, *hit = NULL, *v = NULL,
               *zero = NULL;
  eddy_dtype_t dt;
  if (!eddy_tfl_attr_dtype(op, "T", &dt))
    return eddy_tfl_error(op, "attribute 'T' is not an eddy dtype");
  const eddy_type_t *xt = x->type;
  if (xt->rank != 1 && xt->rank != 2)
    return eddy_tfl_error(op, "the input must have rank 1 or 2");
  int64_t n = 0, rank = xt->rank;
  // The positions 0..size-1, a constant when size is one.
  if (eddy_tfl_const_ints(z, size, &n, 1) == 1) {
    if (n < 0 || n > ((int64_t)1 << 24))
      return eddy_tfl_error(op, "size %lld is out of range", (long long)n);
    int64_t *p = malloc((size_t)(n ? n : 1) * sizeof *p);
    if (!p)
      return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
    for (int64_t i = 0; i < n; i++)
      p[i] = i;
    eddy_status_t st = eddy_tfl_int_constant(z, EDDY_DT_I64, p, n, &pos);
    free(p);
    EDDY_RETURN_IF_ERROR(st);
  } else {
    eddy_value_t *s = NULL, *z0 = NULL, *one = NULL;
    EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, size, EDDY_DT_I64, &s));
    EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, s, NULL, 0, &s));
    EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, 0, &z0));
    EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, 1, &one));
    eddy_value_t *ops[3] = {z0, s, one};
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "core.range", ops, 3, NULL, 0, &pos));
  }
  // hit [..., N, size]: entry == position.
  int64_t d0 = xt->dims[0] < 0 ? -1 : xt->dims[0];
  int64_t d1 = rank == 2 && xt->dims[1] >= 0 ? xt->dims[1] : -1;
  int64_t xd[2] = {d0, 1}, xd2[3] = {d0, d1, 1};
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, x, EDDY_DT_I64, &v));
  if (rank == 1)
    EDDY_RETURN_IF_ERROR(eddy_tfl_reshape_keep(
        z, op, v, xd, 2, (const int64_t[]){0, -1}, &v));
  else
    EDDY_RETURN_IF_ERROR(eddy_tfl_reshape_keep(
        z, op, v, xd2, 3, (const int64_t[]){0, 1, -1}, &v));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.eq", v, pos, &hit));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, dt, 0, NULL, 0.0, &zero));
  bool weighted = !(w->type->kind == EDDY_TYPE_TENSOR && w->type->rank >= 1 &&
                    eddy_ir_type_num_elements(w->type) == 0);
  bool binary = eddy_ir_op_attr_bool(op, "binary_output", false);
  eddy_value_t *c = NULL;
  if (weighted && !binary) {
    eddy_value_t *wv = NULL;
    if (w->type->rank != rank)
      return eddy_tfl_error(op, "the weights must have the input's shape");
    EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, w, dt, &wv));
    if (rank == 1)
      EDDY_RETURN_IF_ERROR(eddy_tfl_reshape_keep(
          z, op, wv, xd, 2, (const int64_t[]){0, -1}, &wv));
    else
      EDDY_RETURN_IF_ERROR(eddy_tfl_reshape_keep(
          z, op, wv, xd2, 3, (const int64_t[]){0, 1, -1}, &wv));
    EDDY_RETURN_IF_ERROR(tfl_sel(z, op, hit, wv, zero, &c));
  } else {
    EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, hit, dt, &c));
  }
  int64_t ax = rank - 1;
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_reduce(z, op, "core.reduce_sum", c, &ax, 1, false, &c));
  if (binary) {
    eddy_value_t *one = NULL, *gt = NULL;
    EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, dt, 0, NULL, 1.0, &one));
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.gt", c, zero, &gt));
    EDDY_RETURN_IF_ERROR(tfl_sel(z, op, gt, one, zero, &c));
  }
  tfl_out1(z, op, c);
  return NULL;
}

/// legalize-tf: ops whose result sizes depend on the data: Unique,
/// UniqueWithCounts (and their V2 forms on a vector, axis [] or [0]),
/// DynamicPartition; and HistogramFixedWidth, which counts values per bin.
///
/// Unique(x), x a vector of n values: eq[i, j] = x[i] == x[j] or i == j (so
/// that a NaN, equal to nothing, is a value of its own, as TensorFlow's
/// hash map makes it; -0.0 and 0.0 are one value). x[i] comes first when
/// no j < i has eq[i, j]; y = x gathered at the firsts (core.where, their
/// count a sum); the position in y of a first is the exclusive cumsum of
/// the firsts; idx[i] = the position of the first j with eq[i, j], a sum
/// over the row where eq meets the firsts (exactly one j). count[k] is the
/// row sum of eq at the k-th first. Cost: n x n comparisons.
///
/// DynamicPartition(data, partitions): the partitions and the data's rows
/// (the dims of partitions flattened) as lists; the count of each
/// partition is a core.scatter of ones at the partitions, sized
/// num_partitions, which reports a partition outside [0, num_partitions)
/// at run time (constant partitions are checked now); output k gathers the
/// rows at core.where(partitions == k).
///
/// HistogramFixedWidth(values, [lo, hi], nbins): TensorFlow's kernel's
/// arithmetic: (max(v, lo) - lo) in the values' dtype, divided in f64 by
/// (hi - lo) / nbins, capped at nbins - 1 and truncated; the counts are a
/// core.scatter of ones at the bins, sized nbins (a run-time nbins makes a
/// run-time size). A NaN value or hi <= lo gives bin -1, and a run-time
/// nbins <= 0 size -1, which the scatter reports at run time (TensorFlow
/// refuses them).
#include "lower/tf/tf_lower_internal.h"

#include <stdlib.h>
#include <string.h>

#define MAXR EDDY_TFL_MAX_RANK
/// The most constant partitions checked at compile time.
#define MAX_CONST_PARTS 4096

static const char *const UNIQUE_OPS[] = {
    "Unique",           "UniqueV2",
    "UniqueWithCounts", "UniqueWithCountsV2",
    "DynamicPartition", "HistogramFixedWidth",
};

void eddy_tfl_unique_ops_each(void (*fn)(const char *name, void *user),
                              void *user) {
  for (size_t i = 0; i < sizeof UNIQUE_OPS / sizeof UNIQUE_OPS[0]; i++)
    fn(UNIQUE_OPS[i], user);
}

/// core.reduce_sum of x over `axis`, the axis dropped.
static eddy_status_t sum_axis(eddy_tfl_t *z, const eddy_op_t *op,
                              eddy_value_t *x, int64_t axis,
                              eddy_value_t **out) {
  eddy_named_attr_t a[2] = {eddy_tfl_ints_attr(z, "axes", &axis, 1),
                            eddy_tfl_bool_attr(z, "keepdims", false)};
  return eddy_tfl_build(z, op, "core.reduce_sum", &x, 1, a, 2, out);
}

/// core.gather of x along axis 0 at idx.
static eddy_status_t gather0(eddy_tfl_t *z, const eddy_op_t *op,
                             eddy_value_t *x, eddy_value_t *idx,
                             eddy_value_t **out) {
  eddy_value_t *ops[2] = {x, idx};
  eddy_named_attr_t a = eddy_tfl_int_attr(z, "axis", 0);
  return eddy_tfl_build(z, op, "core.gather", ops, 2, &a, 1, out);
}

/// The positions of the true elements of the vector mask (an i64 vector of
/// run-time length).
static eddy_status_t where1(eddy_tfl_t *z, const eddy_op_t *op,
                            eddy_value_t *mask, eddy_value_t *count,
                            eddy_value_t **out) {
  eddy_value_t *ops[2] = {mask, count}, *w = NULL;
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build(z, op, "core.where", ops, 2, NULL, 0, &w));
  int64_t flat = -1;
  return eddy_tfl_reshape(z, op, w, &flat, 1, out);
}

/// The V2 forms take an axis operand: [] or [0] (or [-1]) on a vector is
/// the V1 op.
static eddy_status_t check_unique_axis(eddy_tfl_t *z, const eddy_op_t *op) {
  int64_t ax[2] = {0, 0};
  int64_t k = eddy_tfl_const_ints(z, tfl_in(z, op, 1), ax, 2);
  if (k < 0)
    return eddy_tfl_error(op, "axis must be a constant");
  if (k > 1 || (k == 1 && ax[0] != 0 && ax[0] != -1))
    return eddy_tfl_error(op, "only axis [] or [0] of a vector is supported");
  return NULL;
}

static eddy_status_t lower_unique(eddy_tfl_t *z, const eddy_op_t *op, bool v2,
                                  bool counts) {
  eddy_value_t *x = tfl_in(z, op, 0);
  const eddy_type_t *xt = x->type;
  if (v2)
    EDDY_RETURN_IF_ERROR(check_unique_axis(z, op));
  if (xt->kind != EDDY_TYPE_TENSOR || xt->rank != 1)
    return eddy_tfl_error(op, "x must be a vector (tensor of rank 1)");
  if (!eddy_dtype_is_int(xt->dtype) && !eddy_dtype_is_float(xt->dtype))
    return eddy_tfl_error(op, "x must hold numbers");
  eddy_dtype_t idt = EDDY_DT_I32;
  (void)eddy_tfl_attr_dtype(op, "out_idx", &idt);
  if (idt != EDDY_DT_I32 && idt != EDDY_DT_I64)
    return eddy_tfl_error(op, "out_idx must be int32 or int64");
  // Rows i ([n, 1]) against columns j ([1, n]).
  int64_t col[2] = {-1, 1}, row[2] = {1, -1};
  eddy_value_t *pi = NULL, *pj = NULL, *xi = NULL, *xj = NULL, *same = NULL,
               *diag = NULL, *eq = NULL, *before = NULL, *dup = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_positions(z, op, x, 0, 0, &pi));
  EDDY_RETURN_IF_ERROR(eddy_tfl_positions(z, op, x, 0, 1, &pj));
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, x, col, 2, &xi));
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, x, row, 2, &xj));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.eq", xi, xj, &same));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.eq", pi, pj, &diag));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.or", same, diag, &eq));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.lt", pj, pi, &before));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.and", eq, before, &dup));
  // first[i]: no equal value before i.
  eddy_value_t *ndup = NULL, *zero = NULL, *first = NULL, *fi = NULL, *u = NULL,
               *pos = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, dup, EDDY_DT_I64, &dup));
  EDDY_RETURN_IF_ERROR(sum_axis(z, op, dup, 1, &ndup));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, 0, &zero));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.eq", ndup, zero, &first));
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, first, EDDY_DT_I64, &fi));
  EDDY_RETURN_IF_ERROR(sum_axis(z, op, fi, 0, &u));
  eddy_named_attr_t ca[2] = {eddy_tfl_int_attr(z, "axis", 0),
                             eddy_tfl_bool_attr(z, "exclusive", true)};
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build(z, op, "core.cumsum", &fi, 1, ca, 2, &pos));
  // idx[i] = pos[j] at the one j with eq[i, j] and first[j].
  eddy_value_t *firstj = NULL, *posj = NULL, *hit = NULL, *part = NULL,
               *idx = NULL, *where = NULL, *y = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, first, row, 2, &firstj));
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, pos, row, 2, &posj));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.and", eq, firstj, &hit));
  EDDY_RETURN_IF_ERROR(tfl_sel(z, op, hit, posj, zero, &part));
  EDDY_RETURN_IF_ERROR(sum_axis(z, op, part, 1, &idx));
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, idx, idt, &idx));
  EDDY_RETURN_IF_ERROR(where1(z, op, first, u, &where));
  EDDY_RETURN_IF_ERROR(gather0(z, op, x, where, &y));
  eddy_tfl_set(z, &op->results[0], y);
  eddy_tfl_set(z, &op->results[1], idx);
  if (counts) {
    eddy_value_t *eqn = NULL, *per = NULL, *cnt = NULL;
    EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, eq, idt, &eqn));
    EDDY_RETURN_IF_ERROR(sum_axis(z, op, eqn, 1, &per));
    EDDY_RETURN_IF_ERROR(gather0(z, op, per, where, &cnt));
    eddy_tfl_set(z, &op->results[2], cnt);
  }
  return NULL;
}

/// x with its first k dims collapsed into one (k = 0: a new dim of 1).
static eddy_status_t collapse_lead(eddy_tfl_t *z, const eddy_op_t *op,
                                   eddy_value_t *x, int32_t k,
                                   eddy_value_t **out) {
  const eddy_type_t *t = x->type;
  int32_t tr = t->rank - k;
  int64_t dims[MAXR + 1], rows = 1;
  eddy_value_t *dimv[MAXR + 1] = {NULL};
  int ndyn = 0;
  for (int32_t i = 0; i < k; i++)
    rows = t->dims[i] < 0 || rows < 0 ? -1 : rows * t->dims[i];
  dims[0] = rows;
  ndyn += rows < 0;
  for (int32_t j = 0; j < tr; j++) {
    dims[1 + j] = t->dims[k + j];
    ndyn += dims[1 + j] < 0;
  }
  if (ndyn > 1) {
    // Every dynamic dim needs its run-time size.
    for (int32_t j = 0; j < tr; j++)
      if (dims[1 + j] < 0)
        EDDY_RETURN_IF_ERROR(eddy_tfl_dim(z, op, x, k + j, &dimv[1 + j]));
    for (int32_t i = 0; i < k; i++) {
      eddy_value_t *di = NULL;
      EDDY_RETURN_IF_ERROR(eddy_tfl_dim(z, op, x, i, &di));
      if (dimv[0])
        EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.mul", dimv[0], di, &dimv[0]));
      else
        dimv[0] = di;
    }
  }
  return eddy_tfl_reshape_dyn(z, op, x, dims, (size_t)tr + 1, dimv, out);
}

static eddy_status_t lower_dynamic_partition(eddy_tfl_t *z,
                                             const eddy_op_t *op) {
  eddy_value_t *data = tfl_in(z, op, 0), *p = tfl_in(z, op, 1);
  const eddy_type_t *dt = data->type, *pt = p->type;
  int64_t np = eddy_ir_op_attr_int(op, "num_partitions", -1);
  if (np < 1 || np != (int64_t)op->num_results)
    return eddy_tfl_error(op,
                          "num_partitions (%lld) must be positive and "
                          "the number of outputs (%u)",
                          (long long)np, (unsigned)op->num_results);
  if (pt->kind != EDDY_TYPE_TENSOR || pt->rank == EDDY_RANK_UNKNOWN ||
      (pt->dtype != EDDY_DT_I32 && pt->dtype != EDDY_DT_I64))
    return eddy_tfl_error(op, "partitions must be an integer tensor of known "
                              "rank");
  if (dt->kind != EDDY_TYPE_TENSOR || dt->rank == EDDY_RANK_UNKNOWN ||
      dt->rank < pt->rank || dt->rank - pt->rank > MAXR)
    return eddy_tfl_error(op,
                          "data must be a tensor of known rank at least "
                          "that of partitions (%d)",
                          (int)pt->rank);
  for (int32_t i = 0; i < pt->rank; i++)
    if (pt->dims[i] >= 0 && dt->dims[i] >= 0 && pt->dims[i] != dt->dims[i])
      return eddy_tfl_error(op,
                            "dimension %d of data (%lld) and of "
                            "partitions (%lld) differ",
                            (int)i, (long long)dt->dims[i],
                            (long long)pt->dims[i]);
  int64_t *cv = malloc(MAX_CONST_PARTS * sizeof *cv);
  if (!cv)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  int64_t nc = eddy_tfl_const_ints(z, p, cv, MAX_CONST_PARTS);
  for (int64_t i = 0; i < nc; i++)
    if (cv[i] < 0 || cv[i] >= np) {
      int64_t bad = cv[i];
      free(cv);
      return eddy_tfl_error(op, "partition %lld (at %lld) is not in [0, %lld)",
                            (long long)bad, (long long)i, (long long)np);
    }
  free(cv);
  eddy_value_t *pf = NULL, *rows = NULL, *one = NULL, *ones = NULL,
               *counts = NULL;
  int64_t flat = -1;
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, p, &flat, 1, &pf));
  EDDY_RETURN_IF_ERROR(collapse_lead(z, op, data, pt->rank, &rows));
  // counts[k] = the number of rows in partition k; a partition outside
  // [0, num_partitions) is a run-time error of the scatter.
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, 1, &one));
  EDDY_RETURN_IF_ERROR(eddy_tfl_broadcast_like(z, op, one, pf, &ones));
  eddy_value_t *sops[2] = {pf, ones};
  eddy_named_attr_t sa[2] = {eddy_tfl_int_attr(z, "axis", 0),
                             eddy_tfl_int_attr(z, "size", np)};
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build(z, op, "core.scatter", sops, 2, sa, 2, &counts));
  for (int64_t k = 0; k < np; k++) {
    eddy_value_t *kv = NULL, *kp = NULL, *mask = NULL, *cnt = NULL,
                 *where = NULL, *r = NULL;
    EDDY_RETURN_IF_ERROR(eddy_tfl_int_constant(z, EDDY_DT_I64, &k, -1, &kv));
    EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, kv, pt->dtype, &kp));
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.eq", pf, kp, &mask));
    EDDY_RETURN_IF_ERROR(gather0(z, op, counts, kv, &cnt));
    EDDY_RETURN_IF_ERROR(where1(z, op, mask, cnt, &where));
    EDDY_RETURN_IF_ERROR(gather0(z, op, rows, where, &r));
    eddy_tfl_set(z, &op->results[k], r);
  }
  return NULL;
}

static eddy_status_t lower_histogram(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_value_t *v = tfl_in(z, op, 0), *range = tfl_in(z, op, 1),
               *nb = tfl_in(z, op, 2);
  const eddy_type_t *vt = v->type, *rt = range->type, *nt = nb->type;
  eddy_dtype_t odt = EDDY_DT_I32;
  (void)eddy_tfl_attr_dtype(op, "dtype", &odt);
  if (odt != EDDY_DT_I32 && odt != EDDY_DT_I64)
    return eddy_tfl_error(op, "dtype must be int32 or int64");
  if (vt->kind != EDDY_TYPE_TENSOR || vt->rank == EDDY_RANK_UNKNOWN ||
      (!eddy_dtype_is_int(vt->dtype) && !eddy_dtype_is_float(vt->dtype)))
    return eddy_tfl_error(op, "values must be a numeric tensor of known rank");
  if (rt->kind != EDDY_TYPE_TENSOR || rt->dtype != vt->dtype || rt->rank != 1 ||
      rt->dims[0] != 2)
    return eddy_tfl_error(op, "value_range must be a vector of 2 values of "
                              "the values' dtype");
  if (nt->kind != EDDY_TYPE_TENSOR || nt->rank != 0 ||
      (nt->dtype != EDDY_DT_I32 && nt->dtype != EDDY_DT_I64))
    return eddy_tfl_error(op, "nbins must be an int32 or int64 scalar");
  int64_t nbc = -1;
  bool known = eddy_tfl_const_ints(z, nb, &nbc, 1) == 1;
  if (known && nbc <= 0)
    return eddy_tfl_error(op, "nbins (%lld) must be positive", (long long)nbc);
  eddy_value_t *flatv = NULL, *lo = NULL, *hi = NULL;
  int64_t flat = -1;
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, v, &flat, 1, &flatv));
  EDDY_RETURN_IF_ERROR(eddy_tfl_element(z, op, range, 0, &lo));
  EDDY_RETURN_IF_ERROR(eddy_tfl_element(z, op, range, 1, &hi));
  // step = (hi - lo) / nbins in f64; q = (max(v, lo) - lo) / step.
  eddy_value_t *width = NULL, *nbf = NULL, *step = NULL, *clip = NULL,
               *off = NULL, *q = NULL, *top = NULL, *one = NULL, *bin = NULL;
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.sub", hi, lo, &width));
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, width, EDDY_DT_F64, &width));
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, nb, EDDY_DT_F64, &nbf));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.div", width, nbf, &step));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.maximum", flatv, lo, &clip));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.sub", clip, lo, &off));
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, off, EDDY_DT_F64, &off));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.div", off, step, &q));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_F64, 0, NULL, 1, &one));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.sub", nbf, one, &top));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.minimum", q, top, &q));
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, q, EDDY_DT_I64, &bin));
  // A NaN value, or hi <= lo, has no bin: -1, refused by the scatter.
  eddy_value_t *ok = NULL, *pos = NULL, *zero = NULL, *neg = NULL;
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.eq", flatv, flatv, &ok));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_F64, 0, NULL, 0, &zero));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.gt", step, zero, &pos));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.and", ok, pos, &ok));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, -1, &neg));
  EDDY_RETURN_IF_ERROR(tfl_sel(z, op, ok, bin, neg, &bin));
  // A run-time nbins <= 0 (TensorFlow refuses it) becomes a negative size,
  // which the scatter reports at run time.
  if (!known) {
    eddy_value_t *z0 = NULL, *m1 = NULL, *npos = NULL;
    EDDY_RETURN_IF_ERROR(tfl_scalar_like(z, nb, 0, &z0));
    EDDY_RETURN_IF_ERROR(tfl_scalar_like(z, nb, -1, &m1));
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.gt", nb, z0, &npos));
    EDDY_RETURN_IF_ERROR(tfl_sel(z, op, npos, nb, m1, &nb));
  }
  eddy_value_t *uone = NULL, *ones = NULL, *r = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, odt, 0, NULL, 1, &uone));
  EDDY_RETURN_IF_ERROR(eddy_tfl_broadcast_like(z, op, uone, bin, &ones));
  eddy_value_t *sops[3] = {bin, ones, nb};
  eddy_named_attr_t sa[2] = {eddy_tfl_int_attr(z, "axis", 0),
                             eddy_tfl_int_attr(z, "size", known ? nbc : -1)};
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build(z, op, "core.scatter", sops, known ? 2 : 3, sa, 2, &r));
  tfl_out1(z, op, r);
  return NULL;
}

eddy_status_t eddy_tfl_lower_unique_op(eddy_tfl_t *z, const eddy_op_t *op,
                                       bool *handled) {
  const char *t = op->name->str + 3;
  size_t i = 0;
  while (i < sizeof UNIQUE_OPS / sizeof UNIQUE_OPS[0] &&
         strcmp(t, UNIQUE_OPS[i]) != 0)
    i++;
  *handled = i < sizeof UNIQUE_OPS / sizeof UNIQUE_OPS[0];
  if (!*handled)
    return NULL;
  // UNIQUE_OPS: Unique, UniqueV2, UniqueWithCounts, UniqueWithCountsV2,
  // DynamicPartition, HistogramFixedWidth.
  if (i < 4)
    return lower_unique(z, op, i % 2 == 1, i >= 2);
  if (i == 4)
    return lower_dynamic_partition(z, op);
  return lower_histogram(z, op);
}

/// legalize-tf: the ops of a CTC speech or OCR model's decoding step,
/// CTCGreedyDecoder (tf.nn.ctc_greedy_decoder) and SparseToDense
/// (tf.sparse.to_dense of its result), with core ops.
///
/// CTCGreedyDecoder(inputs [T, B, C], sequence_length [B]) takes the best
/// class of each step t < sequence_length[b] (the first among equals:
/// core.argmax), drops the blank class (blank_index, or C - 1 for -1) and,
/// with merge_repeated, a class equal to the previous step's (a blank
/// between two equal classes keeps both, as TensorFlow's kernel does: it
/// compares with the previous step's best class, blank or not). The kept
/// steps, batch-major, are its sparse result: indices [N, 2] = (b, k) with
/// k the step's place in its row (an exclusive cumsum), values [N] the
/// classes, shape [B, longest row]; core.where finds them, so N is known at
/// run time only. log_probability [B, 1] is minus the sum of the steps'
/// best logits.
///
/// SparseToDense(indices, output_shape, values, default_value) writes each
/// value at its index of a tensor of output_shape (a run-time shape of
/// known length) filled with default_value: row-major flat positions, a
/// core.scatter of the values and one of ones (which positions were
/// written), and a select.
#include "lower/tf/tf_lower_internal.h"

#include <string.h>

#define TRY EDDY_RETURN_IF_ERROR

static const char *const SPARSE_OPS[] = {"CTCGreedyDecoder", "SparseToDense"};

void eddy_tfl_sparse_ops_each(void (*fn)(const char *name, void *user),
                              void *user) {
  for (size_t i = 0; i < sizeof SPARSE_OPS / sizeof SPARSE_OPS[0]; i++)
    fn(SPARSE_OPS[i], user);
}

static eddy_status_t i64c(eddy_tfl_t *z, double v, eddy_value_t **out) {
  return eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, v, out);
}

/// Column k of a [N, R] i64 matrix: [N].
static eddy_status_t column(eddy_tfl_t *z, const eddy_op_t *op, eddy_value_t *m,
                            int64_t k, eddy_value_t **out) {
  eddy_value_t *ops[2] = {m, NULL};
  TRY(i64c(z, (double)k, &ops[1]));
  eddy_named_attr_t ax = eddy_tfl_int_attr(z, "axis", 1);
  return eddy_tfl_build(z, op, "core.gather", ops, 2, &ax, 1, out);
}

/// x as a column [N, 1].
static eddy_status_t as_column(eddy_tfl_t *z, const eddy_op_t *op,
                               eddy_value_t *x, eddy_value_t **out) {
  const int64_t dims[2] = {-1, 1};
  return eddy_tfl_reshape(z, op, x, dims, 2, out);
}

static eddy_status_t lower_ctc_greedy(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_value_t *x = tfl_in(z, op, 0), *len = tfl_in(z, op, 1);
  const eddy_type_t *xt = x->type, *lt = len->type;
  if (xt->kind != EDDY_TYPE_TENSOR || xt->rank != 3 ||
      !eddy_dtype_is_float(xt->dtype))
    return eddy_tfl_error(op, "inputs must be a float tensor [max_time, "
                              "batch, num_classes]");
  if (lt->kind != EDDY_TYPE_TENSOR || lt->rank != 1 ||
      eddy_dtype_is_float(lt->dtype))
    return eddy_tfl_error(op, "sequence_length must be an integer vector "
                              "[batch]");
  bool merge = eddy_ir_op_attr_bool(op, "merge_repeated", false);
  int64_t blank_attr = eddy_ir_op_attr_int(op, "blank_index", -1);
  if (xt->dims[2] >= 0 &&
      (blank_attr >= xt->dims[2] || blank_attr < -xt->dims[2]))
    return eddy_tfl_error(op,
                          "blank_index %lld is out of range for %lld "
                          "classes",
                          (long long)blank_attr, (long long)xt->dims[2]);
  // The best class of each step and its logit: [T, B].
  eddy_value_t *c = NULL, *best = NULL, *blank = NULL;
  eddy_named_attr_t am[2] = {
      eddy_tfl_int_attr(z, "axis", 2),
      eddy_ir_named_attr(z->ctx, "dtype",
                         eddy_ir_string_attr_get(z->ctx, "i64", 3))};
  TRY(eddy_tfl_build(z, op, "core.argmax", &x, 1, am, 2, &c));
  const int64_t cls_axis = 2;
  TRY(eddy_tfl_reduce(z, op, "core.reduce_max", x, &cls_axis, 1, false, &best));
  TRY(i64c(z, (double)blank_attr, &blank));
  if (blank_attr < 0) {
    eddy_value_t *classes = NULL;
    TRY(eddy_tfl_dim(z, op, x, 2, &classes));
    TRY(tfl_bin(z, op, "core.add", classes, blank, &blank));
  }
  // Steps t as a column [T, 1]; those within each row's length.
  eddy_value_t *steps = NULL, *zero = NULL, *one = NULL, *t = NULL,
               *tcol = NULL, *len64 = NULL, *valid = NULL;
  TRY(eddy_tfl_dim(z, op, x, 0, &steps));
  TRY(i64c(z, 0, &zero));
  TRY(i64c(z, 1, &one));
  eddy_value_t *rops[3] = {zero, steps, one};
  TRY(eddy_tfl_build(z, op, "core.range", rops, 3, NULL, 0, &t));
  TRY(as_column(z, op, t, &tcol));
  TRY(eddy_tfl_cast(z, op, len, EDDY_DT_I64, &len64));
  TRY(tfl_bin(z, op, "core.lt", tcol, len64, &valid));
  // Kept: within the length, not blank, not a repeat of the step before.
  eddy_value_t *keep = NULL;
  TRY(tfl_bin(z, op, "core.ne", c, blank, &keep));
  TRY(tfl_bin(z, op, "core.and", keep, valid, &keep));
  if (merge) {
    eddy_value_t *before = NULL, *prev = NULL, *same = NULL, *later = NULL,
                 *rep = NULL;
    TRY(tfl_bin(z, op, "core.sub", t, one, &before));
    TRY(tfl_bin(z, op, "core.maximum", before, zero, &before));
    eddy_value_t *gops[2] = {c, before};
    eddy_named_attr_t ax0 = eddy_tfl_int_attr(z, "axis", 0);
    TRY(eddy_tfl_build(z, op, "core.gather", gops, 2, &ax0, 1, &prev));
    TRY(tfl_bin(z, op, "core.eq", c, prev, &same));
    TRY(tfl_bin(z, op, "core.gt", tcol, zero, &later));
    TRY(tfl_bin(z, op, "core.and", same, later, &rep));
    TRY(eddy_tfl_build(z, op, "core.not", &rep, 1, NULL, 0, &rep));
    TRY(tfl_bin(z, op, "core.and", keep, rep, &keep));
  }
  // Batch-major [B, T]: the kept steps' coordinates, places and classes.
  const int64_t perm[2] = {1, 0}, both[2] = {0, 1}, row = 1, col0 = 0;
  eddy_value_t *kb = NULL, *cb = NULL, *ki = NULL, *n = NULL, *w = NULL,
               *place = NULL;
  TRY(eddy_tfl_transpose(z, op, keep, perm, 2, &kb));
  TRY(eddy_tfl_transpose(z, op, c, perm, 2, &cb));
  TRY(eddy_tfl_cast(z, op, kb, EDDY_DT_I64, &ki));
  TRY(eddy_tfl_reduce(z, op, "core.reduce_sum", ki, both, 2, false, &n));
  eddy_value_t *wops[2] = {kb, n};
  TRY(eddy_tfl_build(z, op, "core.where", wops, 2, NULL, 0, &w));
  eddy_named_attr_t cs[3] = {eddy_tfl_int_attr(z, "axis", 1),
                             eddy_tfl_bool_attr(z, "exclusive", true),
                             eddy_tfl_bool_attr(z, "reverse", false)};
  TRY(eddy_tfl_build(z, op, "core.cumsum", &ki, 1, cs, 3, &place));
  eddy_value_t *wb = NULL, *wt = NULL, *flat = NULL, *k = NULL, *vals = NULL;
  TRY(column(z, op, w, 0, &wb));
  TRY(column(z, op, w, 1, &wt));
  TRY(tfl_bin(z, op, "core.mul", wb, steps, &flat));
  TRY(tfl_bin(z, op, "core.add", flat, wt, &flat));
  const int64_t all = -1;
  TRY(eddy_tfl_reshape(z, op, place, &all, 1, &place));
  TRY(eddy_tfl_reshape(z, op, cb, &all, 1, &cb));
  eddy_named_attr_t ax0 = eddy_tfl_int_attr(z, "axis", 0);
  eddy_value_t *g1[2] = {place, flat}, *g2[2] = {cb, flat};
  TRY(eddy_tfl_build(z, op, "core.gather", g1, 2, &ax0, 1, &k));
  TRY(eddy_tfl_build(z, op, "core.gather", g2, 2, &ax0, 1, &vals));
  eddy_value_t *cat[2] = {NULL, NULL}, *indices = NULL;
  TRY(as_column(z, op, wb, &cat[0]));
  TRY(as_column(z, op, k, &cat[1]));
  eddy_named_attr_t ax1 = eddy_tfl_int_attr(z, "axis", 1);
  TRY(eddy_tfl_build(z, op, "core.concat", cat, 2, &ax1, 1, &indices));
  // The dense shape [B, longest row] (0 for no rows).
  eddy_value_t *lens = NULL, *longest = NULL, *batch = NULL, *shape = NULL;
  TRY(eddy_tfl_reduce(z, op, "core.reduce_sum", ki, &row, 1, false, &lens));
  TRY(eddy_tfl_reduce(z, op, "core.reduce_max", lens, &col0, 1, false,
                      &longest));
  TRY(tfl_bin(z, op, "core.maximum", longest, zero, &longest));
  TRY(eddy_tfl_dim(z, op, x, 1, &batch));
  const int64_t one_dim = 1;
  TRY(eddy_tfl_reshape(z, op, batch, &one_dim, 1, &cat[0]));
  TRY(eddy_tfl_reshape(z, op, longest, &one_dim, 1, &cat[1]));
  TRY(eddy_tfl_build(z, op, "core.concat", cat, 2, &ax0, 1, &shape));
  // log_probability: minus the sum of the best logits of the valid steps.
  eddy_value_t *fz = NULL, *lp = NULL;
  TRY(tfl_scalar_like(z, best, 0.0, &fz));
  TRY(tfl_sel(z, op, valid, best, fz, &lp));
  TRY(eddy_tfl_reduce(z, op, "core.reduce_sum", lp, &col0, 1, false, &lp));
  TRY(eddy_tfl_build(z, op, "core.neg", &lp, 1, NULL, 0, &lp));
  TRY(as_column(z, op, lp, &lp));
  eddy_tfl_set(z, &op->results[0], indices);
  eddy_tfl_set(z, &op->results[1], vals);
  eddy_tfl_set(z, &op->results[2], shape);
  eddy_tfl_set(z, &op->results[3], lp);
  return NULL;
}

static eddy_status_t lower_sparse_to_dense(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_value_t *idx = tfl_in(z, op, 0), *shape = tfl_in(z, op, 1),
               *vals = tfl_in(z, op, 2), *dflt = tfl_in(z, op, 3);
  const eddy_type_t *st = shape->type, *it = idx->type, *vt = vals->type;
  if (st->kind != EDDY_TYPE_TENSOR || st->rank != 1 || st->dims[0] < 0 ||
      st->dims[0] > EDDY_TFL_MAX_RANK || eddy_dtype_is_float(st->dtype))
    return eddy_tfl_error(op, "output_shape must be an integer vector of "
                              "known length");
  int64_t rank = st->dims[0];
  if (it->kind != EDDY_TYPE_TENSOR || it->rank > 2 ||
      it->rank == EDDY_RANK_UNKNOWN ||
      (it->rank == 2 && it->dims[1] >= 0 && it->dims[1] != rank) ||
      (it->rank < 2 && rank != 1))
    return eddy_tfl_error(op,
                          "sparse_indices must be [N, %lld] (or [N] or "
                          "a scalar for a 1-D output)",
                          (long long)rank);
  if (vt->kind != EDDY_TYPE_TENSOR || vt->rank > 1 ||
      vt->rank == EDDY_RANK_UNKNOWN || vt->dtype == EDDY_DT_I1)
    return eddy_tfl_error(op, "sparse_values must be a numeric scalar or "
                              "vector");
  // The output's dims, and each index's row-major flat position.
  eddy_value_t *dimv[EDDY_TFL_MAX_RANK] = {NULL}, *flat = NULL, *stride = NULL,
               *total = NULL;
  for (int64_t i = 0; i < rank; i++) {
    TRY(eddy_tfl_element(z, op, shape, i, &dimv[i]));
    TRY(eddy_tfl_cast(z, op, dimv[i], EDDY_DT_I64, &dimv[i]));
  }
  eddy_value_t *ix = NULL;
  TRY(eddy_tfl_cast(z, op, idx, EDDY_DT_I64, &ix));
  const int64_t col_dims[2] = {-1, rank};
  TRY(eddy_tfl_reshape(z, op, ix, col_dims, 2, &ix));
  TRY(i64c(z, 1, &stride));
  for (int64_t i = rank - 1; i >= 0; i--) {
    eddy_value_t *ci = NULL, *term = NULL;
    TRY(column(z, op, ix, i, &ci));
    TRY(tfl_bin(z, op, "core.mul", ci, stride, &term));
    if (flat)
      TRY(tfl_bin(z, op, "core.add", flat, term, &flat));
    else
      flat = term;
    TRY(tfl_bin(z, op, "core.mul", stride, dimv[i], &stride));
  }
  total = stride;
  // Scatter the values and ones; the written positions take the values.
  eddy_value_t *v = NULL, *ones = NULL, *written = NULL, *hit = NULL,
               *dense = NULL, *zero_i = NULL;
  TRY(eddy_tfl_broadcast_like(z, op, vals, flat, &v));
  TRY(eddy_tfl_splat(z, EDDY_DT_I32, 0, NULL, 1, &ones));
  TRY(eddy_tfl_broadcast_like(z, op, ones, flat, &ones));
  eddy_named_attr_t sa[2] = {eddy_tfl_int_attr(z, "axis", 0),
                             eddy_tfl_int_attr(z, "size", -1)};
  eddy_value_t *s1[3] = {flat, v, total}, *s2[3] = {flat, ones, total};
  TRY(eddy_tfl_build(z, op, "core.scatter", s1, 3, sa, 2, &written));
  TRY(eddy_tfl_build(z, op, "core.scatter", s2, 3, sa, 2, &hit));
  TRY(eddy_tfl_splat(z, EDDY_DT_I32, 0, NULL, 0, &zero_i));
  TRY(tfl_bin(z, op, "core.gt", hit, zero_i, &hit));
  TRY(eddy_tfl_cast(z, op, dflt, vt->dtype, &dflt));
  TRY(tfl_sel(z, op, hit, written, dflt, &dense));
  // To the output's shape: dims the result type knows static, the others
  // read from output_shape.
  const eddy_type_t *rt = op->results[0].type;
  int64_t dims[EDDY_TFL_MAX_RANK];
  bool typed = rt->kind == EDDY_TYPE_TENSOR && rt->rank == rank;
  for (int64_t i = 0; i < rank; i++) {
    dims[i] = typed && rt->dims[i] >= 0 ? rt->dims[i] : -1;
    if (dims[i] >= 0)
      dimv[i] = NULL;
  }
  TRY(eddy_tfl_reshape_dyn(z, op, dense, dims, (size_t)rank, dimv, &dense));
  tfl_out1(z, op, dense);
  return NULL;
}

eddy_status_t eddy_tfl_lower_sparse_op(eddy_tfl_t *z, const eddy_op_t *op,
                                       bool *handled) {
  const char *t = op->name->str + 3;
  *handled = true;
  if (strcmp(t, "CTCGreedyDecoder") == 0)
    return lower_ctc_greedy(z, op);
  if (strcmp(t, "SparseToDense") == 0)
    return lower_sparse_to_dense(z, op);
  *handled = false;
  return NULL;
}

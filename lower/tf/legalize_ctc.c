/// legalize-tf: CTCGreedyDecoder (tf.nn.ctc_greedy_decoder), the decoding
/// step of a CTC speech or OCR model, with core ops (tf.sparse.to_dense of
/// its result is SparseToDense, legalize_scatter.c).
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
#include "lower/tf/tf_lower_internal.h"

#include <string.h>

#define TRY EDDY_RETURN_IF_ERROR

void eddy_tfl_ctc_ops_each(void (*fn)(const char *name, void *user),
                           void *user) {
  fn("CTCGreedyDecoder", user);
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

eddy_status_t eddy_tfl_lower_ctc_op(eddy_tfl_t *z, const eddy_op_t *op,
                                    bool *handled) {
  *handled = strcmp(op->name->str + 3, "CTCGreedyDecoder") == 0;
  return *handled ? lower_ctc_greedy(z, op) : NULL;
}

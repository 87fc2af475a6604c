/// legalize-tf: RaggedTensorToTensor (RaggedTensor.to_tensor), a ragged
/// tensor of one ragged dimension given by its row splits, padded into a
/// dense one with core ops.
///
/// With splits s [R + 1] (row r holds values[s[r] .. s[r + 1])), the
/// result is [R, W, inner...]: element (r, j) is values[s[r] + j] where j <
/// s[r + 1] - s[r], the default elsewhere. R is the row count and W the
/// longest row, or what the shape operand (a constant or a run-time
/// vector; TensorFlow's gradient of the op passes one) gives where it is
/// not -1: longer rows are cut, more rows are all default, as TensorFlow
/// does. One core.gather reads every element from the values with the
/// default appended as one more row, which the positions past a row's end
/// read, so even empty values gather in range.
#include "lower/tf/tf_lower_internal.h"

#include <string.h>

#define TRY EDDY_RETURN_IF_ERROR

void eddy_tfl_ragged_ops_each(void (*fn)(const char *name, void *user),
                              void *user) {
  fn("RaggedTensorToTensor", user);
}

static eddy_status_t i64c(eddy_tfl_t *z, double v, eddy_value_t **out) {
  return eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, v, out);
}

static eddy_status_t gather0(eddy_tfl_t *z, const eddy_op_t *op,
                             eddy_value_t *v, eddy_value_t *idx,
                             eddy_value_t **out) {
  eddy_value_t *ops[2] = {v, idx};
  eddy_named_attr_t ax = eddy_tfl_int_attr(z, "axis", 0);
  return eddy_tfl_build(z, op, "core.gather", ops, 2, &ax, 1, out);
}

static eddy_status_t range(eddy_tfl_t *z, const eddy_op_t *op, eddy_value_t *lo,
                           eddy_value_t *hi, eddy_value_t **out) {
  eddy_value_t *one = NULL;
  TRY(i64c(z, 1, &one));
  eddy_value_t *ops[3] = {lo, hi, one};
  return eddy_tfl_build(z, op, "core.range", ops, 3, NULL, 0, out);
}

/// The partition types must be one ROW_SPLITS.
static eddy_status_t check_partitions(const eddy_op_t *op) {
  const eddy_attr_t *a = eddy_ir_op_attr(op, "row_partition_types");
  const eddy_attr_t *e = a && a->kind == EDDY_ATTR_ARRAY && a->u.array.len == 1
                             ? a->u.array.elems[0]
                             : NULL;
  if (!e || e->kind != EDDY_ATTR_STRING ||
      strcmp(e->u.str.data, "ROW_SPLITS") != 0 || op->num_operands != 4)
    return eddy_tfl_error(op, "only one ragged dimension given by its row "
                              "splits (row_partition_types [\"ROW_SPLITS\"]) "
                              "is supported");
  return NULL;
}

static eddy_status_t lower_to_tensor(eddy_tfl_t *z, const eddy_op_t *op) {
  TRY(check_partitions(op));
  eddy_value_t *shape = tfl_in(z, op, 0), *vals = tfl_in(z, op, 1),
               *dflt = tfl_in(z, op, 2), *splits = tfl_in(z, op, 3);
  const eddy_type_t *vt = vals->type, *spt = splits->type;
  if (vt->kind != EDDY_TYPE_TENSOR || vt->rank < 1 ||
      vt->rank > EDDY_TFL_MAX_RANK - 1)
    return eddy_tfl_error(op, "the values must have a known rank of 1 or "
                              "more");
  for (int32_t i = 1; i < vt->rank; i++)
    if (vt->dims[i] < 0)
      return eddy_tfl_error(op, "the values' inner dims must be static");
  if (spt->kind != EDDY_TYPE_TENSOR || spt->rank != 1 ||
      eddy_dtype_is_float(spt->dtype))
    return eddy_tfl_error(op, "the row splits must be an integer vector");
  // The shape: a scalar (none given), or a vector of one dim per result
  // dim, -1 where inferred, a constant or known at run time.
  const eddy_type_t *sht = shape->type;
  int32_t rank = vt->rank + 1;
  bool given = !(sht->kind == EDDY_TYPE_TENSOR && sht->rank == 0);
  if (given && (sht->kind != EDDY_TYPE_TENSOR || sht->rank != 1 ||
                sht->dims[0] != rank || eddy_dtype_is_float(sht->dtype)))
    return eddy_tfl_error(op,
                          "the shape must be a scalar or an integer "
                          "vector of %d dims (-1 where inferred)",
                          rank);
  int64_t want[EDDY_TFL_MAX_RANK];
  if (given && eddy_tfl_const_ints(z, shape, want, EDDY_TFL_MAX_RANK) == rank)
    for (int32_t i = 2; i < rank; i++)
      if (want[i] >= 0 && want[i] != vt->dims[i - 1])
        return eddy_tfl_error(op,
                              "the shape's dim %d (%lld) must be -1 or "
                              "the values' (%lld)",
                              i, (long long)want[i],
                              (long long)vt->dims[i - 1]);
  // Row starts and lengths, one more empty row after the last (the rows
  // past it, where the shape asks for more, read it), and the result's
  // rows and width: the shape's where it gives them (>= 0), else the row
  // count and the longest row.
  eddy_value_t *s = NULL, *nsplit = NULL, *zero = NULL, *one = NULL,
               *rows = NULL, *idx = NULL, *starts = NULL, *ends = NULL,
               *lens = NULL, *width = NULL, *out_rows = NULL;
  TRY(eddy_tfl_cast(z, op, splits, EDDY_DT_I64, &s));
  TRY(eddy_tfl_dim(z, op, s, 0, &nsplit));
  TRY(i64c(z, 0, &zero));
  TRY(i64c(z, 1, &one));
  TRY(tfl_bin(z, op, "core.sub", nsplit, one, &rows));
  TRY(tfl_bin(z, op, "core.maximum", rows, zero, &rows));
  TRY(range(z, op, zero, rows, &idx));
  TRY(gather0(z, op, s, idx, &starts));
  TRY(tfl_bin(z, op, "core.add", idx, one, &idx));
  TRY(gather0(z, op, s, idx, &ends));
  TRY(tfl_bin(z, op, "core.sub", ends, starts, &lens));
  const int64_t axis = 0, one_dim = 1;
  TRY(eddy_tfl_reduce(z, op, "core.reduce_max", lens, &axis, 1, false, &width));
  TRY(tfl_bin(z, op, "core.maximum", width, zero, &width));
  out_rows = rows;
  for (int k = 0; given && k < 2; k++) {
    eddy_value_t *d = NULL, *pos = NULL;
    TRY(eddy_tfl_element(z, op, shape, k, &d));
    TRY(eddy_tfl_cast(z, op, d, EDDY_DT_I64, &d));
    TRY(tfl_bin(z, op, "core.ge", d, zero, &pos));
    TRY(tfl_sel(z, op, pos, d, k ? width : rows, k ? &width : &out_rows));
  }
  eddy_value_t *zrow = NULL, *cat[2];
  eddy_named_attr_t ax0 = eddy_tfl_int_attr(z, "axis", 0);
  TRY(eddy_tfl_reshape(z, op, zero, &one_dim, 1, &zrow));
  cat[0] = starts, cat[1] = zrow;
  TRY(eddy_tfl_build(z, op, "core.concat", cat, 2, &ax0, 1, &starts));
  cat[0] = lens;
  TRY(eddy_tfl_build(z, op, "core.concat", cat, 2, &ax0, 1, &lens));
  TRY(range(z, op, zero, out_rows, &idx));
  TRY(tfl_bin(z, op, "core.minimum", idx, rows, &idx));
  TRY(gather0(z, op, starts, idx, &starts));
  TRY(gather0(z, op, lens, idx, &lens));
  // Positions [R, W]: starts + j where j < the row's length, else the
  // appended default row.
  eddy_value_t *j = NULL, *pos = NULL, *inside = NULL, *count = NULL,
               *ext = NULL, *drow = NULL, *r = NULL;
  const int64_t row_dims[2] = {1, -1}, col_dims[2] = {-1, 1};
  TRY(range(z, op, zero, width, &j));
  TRY(eddy_tfl_reshape(z, op, j, row_dims, 2, &j));
  TRY(eddy_tfl_reshape(z, op, starts, col_dims, 2, &starts));
  TRY(eddy_tfl_reshape(z, op, lens, col_dims, 2, &lens));
  TRY(tfl_bin(z, op, "core.add", starts, j, &pos));
  TRY(tfl_bin(z, op, "core.lt", j, lens, &inside));
  TRY(eddy_tfl_dim(z, op, vals, 0, &count));
  TRY(tfl_sel(z, op, inside, pos, count, &pos));
  // The default, broadcast to one row [1, inner...], after the values.
  int64_t ddims[EDDY_TFL_MAX_RANK];
  ddims[0] = 1;
  for (int32_t i = 1; i < vt->rank; i++)
    ddims[i] = vt->dims[i];
  TRY(eddy_tfl_cast(z, op, dflt, vt->dtype, &dflt));
  if (dflt->type->kind != EDDY_TYPE_TENSOR ||
      dflt->type->rank == EDDY_RANK_UNKNOWN || dflt->type->rank > vt->rank - 1)
    return eddy_tfl_error(op, "the default must broadcast to the values' "
                              "inner dims");
  eddy_named_attr_t sa =
      eddy_tfl_ints_attr(z, "shape", ddims, (size_t)vt->rank);
  TRY(eddy_tfl_build(z, op, "core.broadcast_to", &dflt, 1, &sa, 1, &drow));
  cat[0] = vals, cat[1] = drow;
  TRY(eddy_tfl_build(z, op, "core.concat", cat, 2, &ax0, 1, &ext));
  TRY(gather0(z, op, ext, pos, &r));
  tfl_out1(z, op, r);
  return NULL;
}

eddy_status_t eddy_tfl_lower_ragged_op(eddy_tfl_t *z, const eddy_op_t *op,
                                       bool *handled) {
  *handled = strcmp(op->name->str + 3, "RaggedTensorToTensor") == 0;
  return *handled ? lower_to_tensor(z, op) : NULL;
}

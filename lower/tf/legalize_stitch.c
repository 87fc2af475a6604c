/// legalize-tf: DynamicStitch and ParallelDynamicStitch.
///
/// DynamicStitch(indices_0..N-1, data_0..N-1) builds
/// merged[indices_m[i...], ...] = data_m[i..., ...]: the result has
/// max(indices) + 1 rows (0 when there are no indices), each the slice of
/// data at the last position (m, then i in row-major order) whose index
/// names it, as TensorFlow's documentation says; a row no index names is
/// zeros (TensorFlow leaves it unspecified). TensorFlow's gradients of
/// reductions over tensors of unknown shape stitch the reduced shape this
/// way (DynamicStitch([range(rank), axes], [shape, ones])).
///
/// The indices and the data are flattened to one list of positions: with
/// constant indices the result is a core.gather of the data's rows (plus a
/// row of zeros) at the winning position of each output row, of static
/// size; otherwise each data row whose index comes again later is zeroed
/// (an n x n comparison of the n indices) and the rows are added into
/// max + 1 rows by core.scatter, which reports an index < 0 at run time.
/// ParallelDynamicStitch, whose order among duplicates is unspecified,
/// lowers the same way. The number of rows of a run-time stitch is static
/// when the declared type knows it, or for TensorFlow's reduced shape
/// (reduced_shape_rows), which the Reshape of a reduction's gradient in a
/// loop needs as its rank.
#include "lower/tf/tf_lower_internal.h"

#include <stdlib.h>
#include <string.h>

#define MAXR EDDY_TFL_MAX_RANK
/// The most constant indices resolved at compile time.
#define MAX_CONST_INDICES 4096

/// The shape the inputs give: trailing dims (the data's dims after those
/// of its indices, one rank for all), merged where one input knows a dim.
typedef struct stitch_shape {
  int32_t rank;       ///< of the trailing dims
  int64_t dims[MAXR]; ///< -1 when dynamic in every input
  eddy_dtype_t dtype;
} stitch_shape_t;

static eddy_status_t check_inputs(eddy_tfl_t *z, const eddy_op_t *op,
                                  size_t n, stitch_shape_t *s) {
  for (size_t m = 0; m < n; m++) {
    const eddy_type_t *it = tfl_in(z, op, m)->type,
                      *dt = tfl_in(z, op, n + m)->type;
    if (it->kind != EDDY_TYPE_TENSOR || it->rank == EDDY_RANK_UNKNOWN ||
        (it->dtype != EDDY_DT_I32 && it->dtype != EDDY_DT_I64))
      return eddy_tfl_error(op, "indices #%zu must be an integer tensor of "
                                "known rank",
                            m);
    if (dt->kind != EDDY_TYPE_TENSOR || dt->rank == EDDY_RANK_UNKNOWN ||
        dt->rank < it->rank || dt->rank - it->rank > MAXR)
      return eddy_tfl_error(op, "data #%zu must be a tensor of known rank at "
                                "least that of indices #%zu (%d)",
                            m, m, (int)it->rank);
    for (int32_t i = 0; i < it->rank; i++) {
      int64_t a = it->dims[i], b = dt->dims[i];
      if (a >= 0 && b >= 0 && a != b)
        return eddy_tfl_error(op, "dimension %d of indices #%zu (%lld) and "
                                  "of data #%zu (%lld) differ",
                              (int)i, m, (long long)a, m, (long long)b);
    }
    int32_t tr = dt->rank - it->rank;
    if (m == 0) {
      s->rank = tr;
      s->dtype = dt->dtype;
      for (int32_t j = 0; j < tr; j++)
        s->dims[j] = -1;
    }
    if (tr != s->rank || dt->dtype != s->dtype)
      return eddy_tfl_error(op, "data #%zu does not match data #0 past the "
                                "dims of their indices",
                            m);
    for (int32_t j = 0; j < tr; j++) {
      int64_t d = dt->dims[it->rank + j];
      if (d < 0)
        continue;
      if (s->dims[j] >= 0 && s->dims[j] != d)
        return eddy_tfl_error(op, "data #%zu does not match data #0 past the "
                                  "dims of their indices",
                              m);
      s->dims[j] = d;
    }
  }
  return NULL;
}

/// data #m as [rows, trailing...]: its index dims collapsed into one.
static eddy_status_t data_rows(eddy_tfl_t *z, const eddy_op_t *op, size_t n,
                               size_t m, const stitch_shape_t *s,
                               eddy_value_t **out) {
  eddy_value_t *d = tfl_in(z, op, n + m);
  int32_t k = tfl_in(z, op, m)->type->rank;
  if (k == 1) {
    *out = d;
    return NULL;
  }
  int64_t dims[MAXR + 1], rows = 1;
  eddy_value_t *dimv[MAXR + 1] = {NULL}, *rv = NULL;
  int ndyn = 0;
  for (int32_t i = 0; i < k; i++)
    rows = d->type->dims[i] < 0 || rows < 0 ? -1 : rows * d->type->dims[i];
  dims[0] = rows;
  ndyn += rows < 0;
  for (int32_t j = 0; j < s->rank; j++) {
    dims[1 + j] = d->type->dims[k + j];
    ndyn += dims[1 + j] < 0;
  }
  if (ndyn > 1) {
    // Every dynamic dim needs its run-time size.
    for (int32_t j = 0; j < s->rank; j++)
      if (dims[1 + j] < 0)
        EDDY_RETURN_IF_ERROR(eddy_tfl_dim(z, op, d, k + j, &dimv[1 + j]));
    if (rows < 0) {
      for (int32_t i = 0; i < k; i++) {
        eddy_value_t *di = NULL;
        EDDY_RETURN_IF_ERROR(eddy_tfl_dim(z, op, d, i, &di));
        if (rv)
          EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.mul", rv, di, &rv));
        else
          rv = di;
      }
      dimv[0] = rv;
    }
  }
  return eddy_tfl_reshape_dyn(z, op, d, dims, (size_t)s->rank + 1, dimv, out);
}

/// All indices and data rows, concatenated: *idx [n], *rows [n, trailing].
static eddy_status_t flatten(eddy_tfl_t *z, const eddy_op_t *op, size_t n,
                             const stitch_shape_t *s, eddy_value_t **idx,
                             eddy_value_t **rows) {
  eddy_value_t **is = calloc(2 * n, sizeof *is);
  if (!is)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  eddy_value_t **ds = is + n;
  eddy_status_t st = NULL;
  int64_t flat = -1;
  for (size_t m = 0; m < n && !st; m++) {
    st = eddy_tfl_reshape(z, op, tfl_in(z, op, m), &flat, 1, &is[m]);
    if (!st)
      st = eddy_tfl_cast(z, op, is[m], EDDY_DT_I64, &is[m]);
    if (!st)
      st = data_rows(z, op, n, m, s, &ds[m]);
  }
  eddy_named_attr_t a = eddy_tfl_int_attr(z, "axis", 0);
  if (!st && n == 1) {
    *idx = is[0];
    *rows = ds[0];
  } else if (!st) {
    st = eddy_tfl_build(z, op, "core.concat", is, n, &a, 1, idx);
    if (!st)
      st = eddy_tfl_build(z, op, "core.concat", ds, n, &a, 1, rows);
  }
  free(is);
  return st;
}

/// rows (of static trailing dims) with a zero row appended, gathered at
/// win[0..size).
static eddy_status_t gather_winners(eddy_tfl_t *z, const eddy_op_t *op,
                                    eddy_value_t *rows, const int64_t *win,
                                    int64_t size, eddy_value_t **out) {
  const eddy_type_t *rt = rows->type;
  int64_t zd[MAXR + 1];
  eddy_value_t *zero = NULL, *ext = NULL, *idx = NULL;
  zd[0] = 1;
  for (int32_t j = 1; j < rt->rank; j++)
    zd[j] = rt->dims[j];
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, rt->dtype, rt->rank, zd, 0.0, &zero));
  eddy_value_t *parts[2] = {rows, zero};
  eddy_named_attr_t a = eddy_tfl_int_attr(z, "axis", 0);
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build(z, op, "core.concat", parts, 2, &a, 1, &ext));
  const eddy_type_t *it = eddy_ir_tensor_type_get(z->ctx, EDDY_DT_I64, 1,
                                                  &size);
  const eddy_attr_t *c =
      size == 0 ? eddy_ir_dense_attr_get(z->ctx, it, NULL, 0)
                : eddy_ir_dense_attr_from_i64(z->ctx, it, win, (size_t)size);
  EDDY_RETURN_IF_ERROR(eddy_ir_build_constant(&z->b, c, &idx));
  eddy_value_t *ops[2] = {ext, idx};
  return eddy_tfl_build(z, op, "core.gather", ops, 2, &a, 1, out);
}

/// Constant indices: the winner of each output row is known now. Returns
/// NULL with *done false when the indices are not all constants or the
/// data's trailing dims are not static.
static eddy_status_t stitch_const(eddy_tfl_t *z, const eddy_op_t *op,
                                  size_t n, eddy_value_t *rows, bool *done,
                                  eddy_value_t **out) {
  *done = false;
  for (int32_t j = 1; j < rows->type->rank; j++)
    if (rows->type->dims[j] < 0)
      return NULL;
  int64_t *v = malloc(2 * MAX_CONST_INDICES * sizeof *v);
  if (!v)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  int64_t *win = v + MAX_CONST_INDICES, total = 0, size = 0;
  for (size_t m = 0; m < n; m++) {
    int64_t k = eddy_tfl_const_ints(z, tfl_in(z, op, m), v + total,
                                    (size_t)(MAX_CONST_INDICES - total));
    if (k < 0) {
      free(v);
      return NULL;
    }
    for (int64_t i = total; i < total + k; i++) {
      if (v[i] < 0 || v[i] >= MAX_CONST_INDICES) {
        int64_t bad = v[i];
        free(v);
        return eddy_tfl_error(op, "index %lld of indices #%zu is %s",
                              (long long)(i - total), m,
                              bad < 0 ? "negative" : "too large");
      }
      if (v[i] + 1 > size)
        size = v[i] + 1;
    }
    total += k;
  }
  for (int64_t r = 0; r < size; r++)
    win[r] = total; // the zero row
  for (int64_t i = 0; i < total; i++)
    win[v[i]] = i;
  eddy_status_t st = gather_winners(z, op, rows, win, size, out);
  free(v);
  *done = st == NULL;
  return st;
}

/// Run-time indices: rows whose index comes again later are zeroed, then
/// all are added into max(idx) + 1 rows.
static eddy_status_t stitch_dynamic(eddy_tfl_t *z, const eddy_op_t *op,
                                    eddy_value_t *idx, eddy_value_t *rows,
                                    eddy_value_t **out) {
  eddy_value_t *n = NULL, *zero = NULL, *one = NULL, *pos = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_dim(z, op, idx, 0, &n));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, 0, &zero));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, 1, &one));
  eddy_value_t *rops[3] = {zero, n, one};
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build(z, op, "core.range", rops, 3, NULL, 0, &pos));
  int64_t col[2] = {-1, 1}, row[2] = {1, -1};
  eddy_value_t *pc = NULL, *pr = NULL, *ic = NULL, *ir = NULL, *later = NULL,
               *same = NULL, *dup = NULL, *cnt = NULL, *keep = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, pos, col, 2, &pc));
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, pos, row, 2, &pr));
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, idx, col, 2, &ic));
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, idx, row, 2, &ir));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.gt", pr, pc, &later));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.eq", ir, ic, &same));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.and", later, same, &dup));
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, dup, EDDY_DT_I32, &dup));
  int64_t ax = 1;
  eddy_named_attr_t ra = eddy_tfl_ints_attr(z, "axes", &ax, 1);
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build(z, op, "core.reduce_sum", &dup, 1, &ra, 1, &cnt));
  eddy_value_t *z32 = NULL, *zr = NULL, *kept = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I32, 0, NULL, 0, &z32));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.eq", cnt, z32, &keep));
  const eddy_type_t *rt = rows->type;
  int64_t kd[MAXR + 1];
  kd[0] = -1;
  for (int32_t j = 1; j < rt->rank; j++)
    kd[j] = 1;
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, keep, kd, (size_t)rt->rank,
                                        &keep));
  EDDY_RETURN_IF_ERROR(tfl_scalar_like(z, rows, 0.0, &zr));
  EDDY_RETURN_IF_ERROR(tfl_sel(z, op, keep, rows, zr, &kept));
  // max(idx) + 1, 0 when there are none: idx with -1 appended, reduced.
  int64_t m1 = -1, one1 = 1;
  const eddy_type_t *vt = eddy_ir_tensor_type_get(z->ctx, EDDY_DT_I64, 1,
                                                  &one1);
  eddy_value_t *neg = NULL, *ext = NULL, *mx = NULL, *size = NULL;
  EDDY_RETURN_IF_ERROR(eddy_ir_build_constant(
      &z->b, eddy_ir_dense_attr_from_i64(z->ctx, vt, &m1, 1), &neg));
  eddy_value_t *parts[2] = {idx, neg};
  eddy_named_attr_t a0 = eddy_tfl_int_attr(z, "axis", 0);
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build(z, op, "core.concat", parts, 2, &a0, 1, &ext));
  int64_t ax0 = 0;
  eddy_named_attr_t ma = eddy_tfl_ints_attr(z, "axes", &ax0, 1);
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build(z, op, "core.reduce_max", &ext, 1, &ma, 1, &mx));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.add", mx, one, &size));
  eddy_value_t *sops[3] = {idx, kept, size};
  eddy_named_attr_t sa[2] = {
      eddy_tfl_int_attr(z, "axis", 0),
      eddy_tfl_int_attr(z, "size", -1)};
  return eddy_tfl_build(z, op, "core.scatter", sops, 3, sa, 2, out);
}

/// The source op that defines v, seen through Identity and df.after (a
/// value waiting on a control input); NULL for an argument.
static const eddy_op_t *source_def(eddy_value_t *v) {
  for (int i = 0; i < 16 && v->def; i++) {
    if (!eddy_ir_op_is(v->def, "tf.Identity") &&
        !eddy_ir_op_is(v->def, "df.after"))
      return v->def;
    v = eddy_ir_op_operand(v->def, 0);
  }
  return v->def;
}

/// TensorFlow's reduced shape (the gradient of a reduction over a tensor of
/// unknown rank): DynamicStitch([Range(0, k, 1), FloorMod(axes, k), ...],
/// [shape, ones, ...]) with one k, a rank popped from a list where the
/// reduction is in a loop. Range names every position of [0, k) and
/// FloorMod by k > 0 only positions of [0, k) (a rank k = 0 comes with no
/// axes), so the result has exactly k rows; and k is the length of data #0,
/// whose rows Range's k indices name (other lengths fail at run time).
/// Returns that length when this holds and the length is static, else -1.
static int64_t reduced_shape_rows(eddy_tfl_t *z, const eddy_op_t *op,
                                  size_t n) {
  const eddy_op_t *range = source_def(eddy_ir_op_operand(op, 0));
  const eddy_type_t *dt = tfl_in(z, op, n)->type;
  if (n < 2 || !tfl_is(range, "tf.Range") || range->num_operands != 3 ||
      dt->kind != EDDY_TYPE_TENSOR || dt->rank != 1 || dt->dims[0] < 0)
    return -1;
  int64_t start = -1, delta = -1;
  if (eddy_tfl_const_ints(z, tfl_in(z, range, 0), &start, 1) != 1 ||
      eddy_tfl_const_ints(z, tfl_in(z, range, 2), &delta, 1) != 1 ||
      start != 0 || delta != 1)
    return -1;
  eddy_value_t *k = tfl_in(z, range, 1);
  for (size_t m = 1; m < n; m++) {
    const eddy_op_t *mod = source_def(eddy_ir_op_operand(op, m));
    if (!tfl_is(mod, "tf.FloorMod") || mod->num_operands != 2 ||
        tfl_in(z, mod, 1) != k)
      return -1;
  }
  return dt->dims[0];
}

eddy_status_t eddy_tfl_lower_dynamic_stitch(eddy_tfl_t *z,
                                            const eddy_op_t *op) {
  size_t n = op->num_operands / 2;
  if (op->num_operands % 2 || n == 0)
    return eddy_tfl_error(op, "takes N indices and N data tensors, the node "
                              "has %u inputs",
                          (unsigned)op->num_operands);
  int64_t attr_n = eddy_ir_op_attr_int(op, "N", (int64_t)n);
  if (attr_n != (int64_t)n)
    return eddy_tfl_error(op, "N is %lld, the node has %zu indices",
                          (long long)attr_n, n);
  stitch_shape_t s = {0};
  EDDY_RETURN_IF_ERROR(check_inputs(z, op, n, &s));
  eddy_value_t *idx = NULL, *rows = NULL, *r = NULL;
  EDDY_RETURN_IF_ERROR(flatten(z, op, n, &s, &idx, &rows));
  bool done = false;
  EDDY_RETURN_IF_ERROR(stitch_const(z, op, n, rows, &done, &r));
  if (!done)
    EDDY_RETURN_IF_ERROR(stitch_dynamic(z, op, idx, rows, &r));
  // The declared result type may know the number of rows (TensorFlow's
  // shape inference does when the indices' sizes are known), or the
  // indices are TensorFlow's reduced shape, as long as data #0. The
  // reshape checks the count at run time.
  const eddy_type_t *dt = op->results[0].type;
  int64_t nrows = -1;
  if (r->type->dims[0] < 0) {
    if (dt->kind == EDDY_TYPE_TENSOR && dt->rank == r->type->rank)
      nrows = dt->dims[0];
    if (nrows < 0)
      nrows = reduced_shape_rows(z, op, n);
  }
  if (nrows >= 0) {
    int64_t dims[MAXR + 1], from[MAXR + 1];
    for (int32_t j = 0; j < r->type->rank; j++) {
      dims[j] = j == 0 ? nrows : r->type->dims[j];
      from[j] = j;
    }
    EDDY_RETURN_IF_ERROR(eddy_tfl_reshape_keep(
        z, op, r, dims, (size_t)r->type->rank, from, &r));
  }
  tfl_out1(z, op, r);
  return NULL;
}

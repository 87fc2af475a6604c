/// legalize-tf: the rules for TensorFlow's diagonal ops MatrixDiag,
/// MatrixDiagPart and MatrixSetDiag in their three versions. V1 takes the
/// main diagonal; V2 a band of diagonals k = [lo, hi] (d = column - row),
/// with num_rows, num_cols and a padding value, each diagonal of the band
/// packed from the left; V3 the same with the `align` attribute, which
/// packs the superdiagonals (d >= 0) and the subdiagonals each from the
/// left or the right (RIGHT_LEFT by default). TensorFlow's gradients of the
/// three are each other, so they come in gradient graphs too.
///
/// The main diagonal alone lowers to iota compares and selects, which also
/// take a length known at run time only (tf.eye of a dynamic batch). Any
/// other band, of matrices whose last two dims are static, lowers to one
/// core.gather with a constant table of flat positions (along the matrix's
/// last two dims, or along the diagonals' flattened band) and a core.select
/// of the positions that read nothing (the padding value, or the input of
/// MatrixSetDiag): the tables are computed here, as TensorFlow's kernels
/// find each element's source. Their gradients are scatters and selects.
#include "lower/tf/tf_lower_internal.h"

#include <stdlib.h>
#include <string.h>

#define MAXR EDDY_TFL_MAX_RANK

/// The band of a diagonal op and how it is packed.
typedef struct diag_band {
  int64_t lo, hi;   ///< k = [lo, hi], lo <= hi
  bool super_right; ///< superdiagonals (d >= 0) packed from the right
  bool sub_right;   ///< subdiagonals packed from the right
} diag_band_t;

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/// The version of op t: 2 or 3 for a name ending in V2 / V3, else 1.
static int diag_version(const char *t) {
  size_t n = strlen(t);
  if (n > 2 && t[n - 2] == 'V' && (t[n - 1] == '2' || t[n - 1] == '3'))
    return t[n - 1] - '0';
  return 1;
}

/// The band k of operand ki (V2, V3; V1 has k = 0) and the align attribute
/// (V3; V2 packs every diagonal from the left, LEFT_LEFT).
static eddy_status_t read_band(eddy_tfl_t *z, const eddy_op_t *op, int version,
                               size_t ki, diag_band_t *b) {
  memset(b, 0, sizeof *b);
  if (version == 1)
    return NULL;
  int64_t k[2];
  int64_t n = eddy_tfl_const_ints(z, tfl_in(z, op, ki), k, 2);
  if (n != 1 && n != 2)
    return eddy_tfl_error(op, "k must be a constant: a scalar or the band "
                              "[lo, hi]");
  b->lo = k[0];
  b->hi = n == 2 ? k[1] : k[0];
  if (b->lo > b->hi)
    return eddy_tfl_error(op,
                          "k = [%lld, %lld]: the lower diagonal must not "
                          "be above the upper",
                          (long long)b->lo, (long long)b->hi);
  if (version == 2)
    return NULL;
  const eddy_attr_t *a = eddy_ir_op_attr(op, "align");
  const char *s =
      a && a->kind == EDDY_ATTR_STRING ? a->u.str.data : "RIGHT_LEFT";
  static const char *const aligns[4] = {"LEFT_LEFT", "LEFT_RIGHT", "RIGHT_LEFT",
                                        "RIGHT_RIGHT"};
  for (int i = 0; i < 4; i++)
    if (strcmp(s, aligns[i]) == 0) {
      b->super_right = i >= 2;
      b->sub_right = i % 2 == 1;
      return NULL;
    }
  return eddy_tfl_error(op,
                        "align \"%s\" is not supported (RIGHT_LEFT, "
                        "LEFT_RIGHT, LEFT_LEFT or RIGHT_RIGHT)",
                        s);
}

/// ---- The main diagonal ---------------------------------------------------

/// select(on_diagonal, d[..., i], other): the diagonal d [..., M] as a
/// column [..., M, 1], broadcast along the rows where on_diagonal ([M, N]:
/// i == j) holds, other elsewhere.
static eddy_status_t select_diagonal(eddy_tfl_t *z, const eddy_op_t *op,
                                     eddy_value_t *on_diagonal, eddy_value_t *d,
                                     eddy_value_t *other, eddy_value_t **out) {
  const eddy_type_t *dt = d->type;
  int64_t dims[MAXR], from[MAXR];
  for (int32_t a = 0; a < dt->rank; a++) {
    dims[a] = dt->dims[a] < 0 ? -1 : dt->dims[a];
    from[a] = a;
  }
  dims[dt->rank] = 1;
  from[dt->rank] = 0;
  eddy_value_t *col = NULL;
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_reshape_keep(z, op, d, dims, (size_t)dt->rank + 1, from, &col));
  return tfl_sel(z, op, on_diagonal, col, other, out);
}

/// i == j over the last two dims of x, as [M, N] (i1).
static eddy_status_t on_main(eddy_tfl_t *z, const eddy_op_t *op,
                             eddy_value_t *x, int32_t row_axis,
                             int32_t col_axis, eddy_value_t **out) {
  eddy_value_t *i = NULL, *j = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_positions(z, op, x, row_axis, 0, &i));
  EDDY_RETURN_IF_ERROR(eddy_tfl_positions(z, op, x, col_axis, 1, &j));
  return tfl_bin(z, op, "core.eq", i, j, out);
}

/// The main diagonal d [..., M] as [..., M, M], padding elsewhere:
/// select(i == j, d[..., i], padding).
static eddy_status_t main_diag(eddy_tfl_t *z, const eddy_op_t *op,
                               eddy_value_t *d, eddy_value_t *pad,
                               eddy_value_t **out) {
  eddy_value_t *eq = NULL;
  int32_t last = d->type->rank - 1;
  EDDY_RETURN_IF_ERROR(on_main(z, op, d, last, last, &eq));
  return select_diagonal(z, op, eq, d, pad, out);
}

/// x[..., i, i] for i < min(M, N): the sum of select(i == j, x, 0) over the
/// longer of the last two axes (both static, or equal by their types).
static eddy_status_t main_part(eddy_tfl_t *z, const eddy_op_t *op,
                               eddy_value_t *x, eddy_value_t **out) {
  const eddy_type_t *xt = x->type;
  int64_t m = xt->dims[xt->rank - 2], n = xt->dims[xt->rank - 1];
  if ((m < 0 || n < 0) && m != n)
    return eddy_tfl_error(op, "the last two dims must be static (or the "
                              "same dynamic dim)");
  eddy_value_t *eq = NULL, *zx = NULL, *sel = NULL;
  EDDY_RETURN_IF_ERROR(on_main(z, op, x, xt->rank - 2, xt->rank - 1, &eq));
  EDDY_RETURN_IF_ERROR(tfl_scalar_like(z, x, 0.0, &zx));
  EDDY_RETURN_IF_ERROR(tfl_sel(z, op, eq, x, zx, &sel));
  int64_t axis = m > n ? xt->rank - 2 : xt->rank - 1;
  return eddy_tfl_reduce(z, op, "core.reduce_sum", sel, &axis, 1, false, out);
}

/// x [..., M, M] with its main diagonal replaced by d:
/// select(i == j, d[..., i], x).
static eddy_status_t main_set(eddy_tfl_t *z, const eddy_op_t *op,
                              eddy_value_t *x, eddy_value_t *d,
                              eddy_value_t **out) {
  const eddy_type_t *xt = x->type;
  eddy_value_t *eq = NULL;
  EDDY_RETURN_IF_ERROR(on_main(z, op, x, xt->rank - 2, xt->rank - 1, &eq));
  return select_diagonal(z, op, eq, d, x, out);
}

/// ---- Bands of static matrices ------------------------------------------

/// The length of diagonal d of an m x n matrix.
static int64_t diag_len(int64_t d, int64_t m, int64_t n) {
  return min64(m + min64(d, 0), n - max64(d, 0));
}

/// Where diagonal d starts in its row of len entries of the packed band.
static int64_t diag_offset(const diag_band_t *b, int64_t d, int64_t m,
                           int64_t n, int64_t len) {
  bool right = d >= 0 ? b->super_right : b->sub_right;
  return right ? len - diag_len(d, m, n) : 0;
}

/// For entry (i, t) of the packed band [hi - lo + 1, len] (row i holds
/// diagonal hi - i), its flat position r * n + c in the m x n matrix, or -1
/// where it holds padding.
static void band_from_matrix(const diag_band_t *b, int64_t m, int64_t n,
                             int64_t len, int64_t *idx) {
  for (int64_t i = 0; i <= b->hi - b->lo; i++) {
    int64_t d = b->hi - i, off = diag_offset(b, d, m, n, len);
    for (int64_t t = 0; t < len; t++) {
      int64_t r = t + max64(-d, 0) - off, c = t + max64(d, 0) - off;
      idx[i * len + t] = r >= 0 && r < m && c >= 0 && c < n ? r * n + c : -1;
    }
  }
}

/// For entry (r, c) of the m x n matrix, its flat position in the packed
/// band [hi - lo + 1, len], or -1 where it is off the band.
static void matrix_from_band(const diag_band_t *b, int64_t m, int64_t n,
                             int64_t len, int64_t *idx) {
  for (int64_t r = 0; r < m; r++)
    for (int64_t c = 0; c < n; c++) {
      int64_t d = c - r, v = -1;
      if (d >= b->lo && d <= b->hi) {
        int64_t t = c - max64(d, 0) + diag_offset(b, d, m, n, len);
        if (t >= 0 && t < len)
          v = (b->hi - d) * len + t;
      }
      idx[r * n + c] = v;
    }
}

/// v [..., a, b] as [..., a * b] (a and b static; the dims before kept).
static eddy_status_t flatten_last2(eddy_tfl_t *z, const eddy_op_t *op,
                                   eddy_value_t *v, eddy_value_t **out) {
  const eddy_type_t *t = v->type;
  int64_t dims[MAXR], from[MAXR];
  int32_t r = t->rank;
  for (int32_t a = 0; a < r - 2; a++) {
    dims[a] = t->dims[a] < 0 ? -1 : t->dims[a];
    from[a] = a;
  }
  dims[r - 2] = t->dims[r - 2] * t->dims[r - 1];
  from[r - 2] = 0;
  return eddy_tfl_reshape_keep(z, op, v, dims, (size_t)r - 1, from, out);
}

/// select(idx >= 0, gather(flat, max(idx, 0)), other) along flat's last
/// axis ([..., F]): idx is a table of dims[0..rank) (rank 1 or 2) whose -1
/// entries take other (a scalar, or of the result's shape [..., dims]).
static eddy_status_t gather_or(eddy_tfl_t *z, const eddy_op_t *op,
                               eddy_value_t *flat, const int64_t *idx,
                               const int64_t *dims, size_t rank,
                               eddy_value_t *other, eddy_value_t **out) {
  int64_t count = 1, f = flat->type->dims[flat->type->rank - 1];
  for (size_t k = 0; k < rank; k++)
    count *= dims[k];
  int64_t *clamped = malloc((size_t)(count ? count : 1) * sizeof *clamped);
  if (!clamped)
    return eddy_tfl_error(op, "out of memory for a table of %lld positions",
                          (long long)count);
  bool any = false;
  for (int64_t i = 0; i < count; i++) {
    clamped[i] = idx[i] < 0 ? 0 : idx[i];
    any |= idx[i] >= 0;
  }
  eddy_value_t *pos = NULL, *raw = NULL, *zero = NULL, *mask = NULL, *g = NULL;
  eddy_status_t st = NULL;
  if (!any || f <= 0) {
    // The callers refuse empty matrices and diagonals, which read nothing.
    free(clamped);
    return eddy_tfl_error(op, "a band that reads no element is not "
                              "supported");
  }
  st = eddy_tfl_int_constant(z, EDDY_DT_I32, clamped, count, &pos);
  free(clamped);
  EDDY_RETURN_IF_ERROR(st);
  EDDY_RETURN_IF_ERROR(eddy_tfl_int_constant(z, EDDY_DT_I32, idx, count, &raw));
  if (rank == 2) {
    EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, pos, dims, 2, &pos));
    EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, raw, dims, 2, &raw));
  }
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I32, 0, NULL, 0, &zero));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.ge", raw, zero, &mask));
  eddy_value_t *gops[2] = {flat, pos};
  eddy_named_attr_t axis = eddy_tfl_int_attr(z, "axis", flat->type->rank - 1);
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build(z, op, "core.gather", gops, 2, &axis, 1, &g));
  return tfl_sel(z, op, mask, g, other, out);
}

/// The static m x n of the last two dims of t (what), each >= 1 and m * n
/// within the i32 positions of the tables.
static eddy_status_t static_matrix(const eddy_op_t *op, const eddy_type_t *t,
                                   int32_t min_rank, const char *what,
                                   const diag_band_t *b, int64_t *m,
                                   int64_t *n) {
  if (t->kind != EDDY_TYPE_TENSOR || t->rank == EDDY_RANK_UNKNOWN ||
      t->rank < min_rank || t->rank > MAXR)
    return eddy_tfl_error(op, "the %s must have a known rank >= %d", what,
                          (int)min_rank);
  *m = t->dims[t->rank - 2];
  *n = t->dims[t->rank - 1];
  if (*m < 1 || *n < 1)
    return eddy_tfl_error(op,
                          "the diagonals k = [%lld, %lld] need the last "
                          "two dims of the %s static and >= 1 (only the "
                          "main diagonal takes others)",
                          (long long)b->lo, (long long)b->hi, what);
  if (*m > INT32_MAX / *n)
    return eddy_tfl_error(op,
                          "the %s's matrices have too many elements "
                          "(%lld x %lld)",
                          what, (long long)*m, (long long)*n);
  return NULL;
}

/// k must name diagonals of an m x n matrix, as TensorFlow requires.
static eddy_status_t band_in_matrix(const eddy_op_t *op, const diag_band_t *b,
                                    int64_t m, int64_t n) {
  int64_t k[2] = {b->lo, b->hi};
  for (int i = 0; i < 2; i++)
    if (k[i] != 0 && (k[i] <= -m || k[i] >= n))
      return eddy_tfl_error(op,
                            "diagonal %lld is outside the %lld x %lld "
                            "matrices (-%lld < k < %lld)",
                            (long long)k[i], (long long)m, (long long)n,
                            (long long)m, (long long)n);
  return NULL;
}

/// The packed band's row length for an m x n matrix (TensorFlow's
/// max_diag_len).
static int64_t band_len(const diag_band_t *b, int64_t m, int64_t n) {
  return min64(m + min64(b->hi, 0), n + min64(-b->lo, 0));
}

/// MatrixDiagPart of band b: x [..., M, N] → [..., D, L] (D = hi - lo + 1
/// diagonals; [..., L] for one), padding where a diagonal is shorter.
static eddy_status_t band_part(eddy_tfl_t *z, const eddy_op_t *op,
                               const diag_band_t *b, eddy_value_t *x,
                               eddy_value_t *pad, eddy_value_t **out) {
  int64_t m, n;
  EDDY_RETURN_IF_ERROR(static_matrix(op, x->type, 2, "input", b, &m, &n));
  EDDY_RETURN_IF_ERROR(band_in_matrix(op, b, m, n));
  int64_t nd = b->hi - b->lo + 1, len = band_len(b, m, n);
  int64_t dims[2] = {nd, len};
  int64_t *idx = malloc((size_t)(nd * len) * sizeof *idx);
  if (!idx)
    return eddy_tfl_error(op, "out of memory");
  band_from_matrix(b, m, n, len, idx);
  eddy_value_t *flat = NULL;
  eddy_status_t st = flatten_last2(z, op, x, &flat);
  if (!st)
    st = nd == 1 ? gather_or(z, op, flat, idx, &dims[1], 1, pad, out)
                 : gather_or(z, op, flat, idx, dims, 2, pad, out);
  free(idx);
  return st;
}

/// The rows and columns of MatrixDiag's result: num_rows and num_cols
/// (-1: the fewest that hold the band, square when both are -1), one of
/// which must be that fewest, as TensorFlow requires.
static eddy_status_t diag_size(const eddy_op_t *op, const diag_band_t *b,
                               int64_t len, int64_t *rows, int64_t *cols) {
  int64_t min_rows = len - min64(b->hi, 0), min_cols = len + max64(b->lo, 0);
  if (*rows == -1 && *cols == -1)
    *rows = *cols = max64(min_rows, min_cols);
  else if (*rows == -1)
    *rows = min_rows;
  else if (*cols == -1)
    *cols = min_cols;
  if (*rows != min_rows && *cols != min_cols)
    return eddy_tfl_error(op,
                          "num_rows %lld and num_cols %lld: one of them "
                          "must be the fewest that hold the diagonals "
                          "(%lld rows, %lld columns)",
                          (long long)*rows, (long long)*cols,
                          (long long)min_rows, (long long)min_cols);
  if (*rows < 1 || *cols < 1)
    return eddy_tfl_error(op,
                          "num_rows and num_cols must be >= 1 for the "
                          "diagonals k = [%lld, %lld]",
                          (long long)b->lo, (long long)b->hi);
  return NULL;
}

/// The m x n matrices of the packed band d ([..., D, len], or [..., len]
/// for one diagonal) with other (a scalar, or of the result's shape)
/// off the band.
static eddy_status_t band_matrix(eddy_tfl_t *z, const eddy_op_t *op,
                                 const diag_band_t *b, eddy_value_t *d,
                                 int64_t m, int64_t n, int64_t len,
                                 eddy_value_t *other, eddy_value_t **out) {
  int64_t dims[2] = {m, n};
  int64_t *idx = malloc((size_t)(m * n) * sizeof *idx);
  if (!idx)
    return eddy_tfl_error(op, "out of memory");
  matrix_from_band(b, m, n, len, idx);
  eddy_value_t *flat = d;
  eddy_status_t st = b->hi > b->lo ? flatten_last2(z, op, d, &flat) : NULL;
  if (!st)
    st = gather_or(z, op, flat, idx, dims, 2, other, out);
  free(idx);
  return st;
}

/// MatrixDiag of band b: d [..., D, L] (or [..., L]) → [..., rows, cols],
/// padding off the band.
static eddy_status_t band_diag(eddy_tfl_t *z, const eddy_op_t *op,
                               const diag_band_t *b, eddy_value_t *d,
                               int64_t rows, int64_t cols, eddy_value_t *pad,
                               eddy_value_t **out) {
  const eddy_type_t *dt = d->type;
  int64_t nd = b->hi - b->lo + 1;
  int32_t min_rank = nd == 1 ? 1 : 2;
  if (dt->kind != EDDY_TYPE_TENSOR || dt->rank == EDDY_RANK_UNKNOWN ||
      dt->rank < min_rank || dt->rank > MAXR)
    return eddy_tfl_error(op, "the diagonal must have a known rank >= %d",
                          (int)min_rank);
  int64_t len = dt->dims[dt->rank - 1];
  if (len < 1 || (nd > 1 && dt->dims[dt->rank - 2] != nd))
    return eddy_tfl_error(op,
                          "the diagonals k = [%lld, %lld] must have a "
                          "static length >= 1%s",
                          (long long)b->lo, (long long)b->hi,
                          nd > 1 ? " and one row per diagonal" : "");
  EDDY_RETURN_IF_ERROR(diag_size(op, b, len, &rows, &cols));
  if (rows > INT32_MAX / cols || nd > INT32_MAX / len)
    return eddy_tfl_error(op, "the result has too many elements");
  return band_matrix(z, op, b, d, rows, cols, len, pad, out);
}

/// MatrixSetDiag of band b: x [..., M, N] with the band replaced by d
/// [..., D, L] (or [..., L]).
static eddy_status_t band_set(eddy_tfl_t *z, const eddy_op_t *op,
                              const diag_band_t *b, eddy_value_t *x,
                              eddy_value_t *d, eddy_value_t **out) {
  int64_t m, n;
  EDDY_RETURN_IF_ERROR(static_matrix(op, x->type, 2, "input", b, &m, &n));
  EDDY_RETURN_IF_ERROR(band_in_matrix(op, b, m, n));
  int64_t nd = b->hi - b->lo + 1, len = band_len(b, m, n);
  const eddy_type_t *dt = d->type;
  int32_t want = x->type->rank - (nd == 1 ? 1 : 0);
  if (dt->kind != EDDY_TYPE_TENSOR || dt->rank != want ||
      dt->dims[want - 1] != len || (nd > 1 && dt->dims[want - 2] != nd))
    return eddy_tfl_error(op,
                          "the diagonals k = [%lld, %lld] of %lld x %lld "
                          "matrices must be [..., %s%lld] (static)",
                          (long long)b->lo, (long long)b->hi, (long long)m,
                          (long long)n, nd > 1 ? "D, " : "", (long long)len);
  return band_matrix(z, op, b, d, m, n, len, x, out);
}

/// ---- The ops ---------------------------------------------------------------

/// A scalar padding value (operand i; zero for V1, which has none).
static eddy_status_t padding(eddy_tfl_t *z, const eddy_op_t *op, int version,
                             size_t i, eddy_value_t *like, eddy_value_t **out) {
  if (version == 1)
    return tfl_scalar_like(z, like, 0.0, out);
  *out = tfl_in(z, op, i);
  if ((*out)->type->kind != EDDY_TYPE_TENSOR || (*out)->type->rank != 0)
    return eddy_tfl_error(op, "padding_value must be a scalar");
  return NULL;
}

/// num_rows / num_cols (operand i of V2 and V3): a constant; -1 for V1.
static eddy_status_t num_dim(eddy_tfl_t *z, const eddy_op_t *op, int version,
                             size_t i, int64_t *out) {
  *out = -1;
  if (version == 1)
    return NULL;
  if (eddy_tfl_const_ints(z, tfl_in(z, op, i), out, 1) != 1)
    return eddy_tfl_error(op, "num_%s must be a constant scalar",
                          i == 2 ? "rows" : "cols");
  return NULL;
}

/// True when the last two dims of t are the same (static, or the same
/// dynamic dim by the type).
static bool square(const eddy_type_t *t) {
  return t->dims[t->rank - 2] == t->dims[t->rank - 1];
}

eddy_status_t eddy_tfl_lower_matrix_diag(eddy_tfl_t *z, const eddy_op_t *op) {
  const char *t = op->name->str + 3;
  int version = diag_version(t);
  diag_band_t b;
  eddy_value_t *x = tfl_in(z, op, 0), *r = NULL, *pad = NULL;
  const eddy_type_t *xt = x->type;
  bool set = strncmp(t, "MatrixSetDiag", 13) == 0;
  EDDY_RETURN_IF_ERROR(read_band(z, op, version, set ? 2 : 1, &b));
  bool main_only = b.lo == 0 && b.hi == 0;
  if (strncmp(t, "MatrixDiagPart", 14) == 0) {
    if (xt->kind != EDDY_TYPE_TENSOR || xt->rank == EDDY_RANK_UNKNOWN ||
        xt->rank < 2)
      return eddy_tfl_error(op, "the input must have a known rank >= 2");
    EDDY_RETURN_IF_ERROR(padding(z, op, version, 2, x, &pad));
    EDDY_RETURN_IF_ERROR(main_only ? main_part(z, op, x, &r)
                                   : band_part(z, op, &b, x, pad, &r));
  } else if (set) {
    eddy_value_t *d = tfl_in(z, op, 1);
    if (xt->kind != EDDY_TYPE_TENSOR || xt->rank == EDDY_RANK_UNKNOWN ||
        xt->rank < 2 || xt->rank > MAXR)
      return eddy_tfl_error(op, "the input must have a known rank >= 2");
    if (main_only && square(xt) && d->type->rank == xt->rank - 1)
      EDDY_RETURN_IF_ERROR(main_set(z, op, x, d, &r));
    else
      EDDY_RETURN_IF_ERROR(band_set(z, op, &b, x, d, &r));
  } else {
    int64_t rows, cols;
    EDDY_RETURN_IF_ERROR(num_dim(z, op, version, 2, &rows));
    EDDY_RETURN_IF_ERROR(num_dim(z, op, version, 3, &cols));
    EDDY_RETURN_IF_ERROR(padding(z, op, version, 4, x, &pad));
    if (xt->kind != EDDY_TYPE_TENSOR || xt->rank == EDDY_RANK_UNKNOWN ||
        xt->rank < 1 || xt->rank >= MAXR)
      return eddy_tfl_error(op, "the diagonal must have a known rank >= 1");
    int64_t len = xt->dims[xt->rank - 1];
    bool as_len = (rows == -1 || (len >= 0 && rows == len)) &&
                  (cols == -1 || (len >= 0 && cols == len));
    if (main_only && as_len)
      EDDY_RETURN_IF_ERROR(main_diag(z, op, x, pad, &r));
    else
      EDDY_RETURN_IF_ERROR(band_diag(z, op, &b, x, rows, cols, pad, &r));
  }
  tfl_out1(z, op, r);
  return NULL;
}

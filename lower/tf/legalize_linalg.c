/// legalize-tf: dense linear algebra, as XLA's expanders do it: each op is
/// a ctl.while over the matrix size n whose body is core ops on the whole
/// batch, so the evaluator, both backends, the dataflow interpreter and
/// autodiff take them with no core op of their own.
///
/// - Cholesky: left-looking, one column per iteration (the column less the
///   products of the rows found so far, divided by the square root of its
///   diagonal entry). Only the lower triangle of the input is read, as in
///   TensorFlow; the upper triangle of the result is zero. A matrix with a
///   pivot that is not positive (not positive definite) gives NaN in the
///   whole lower triangle of its factor, as TensorFlow's kernel does.
/// - MatrixTriangularSolve (lower, adjoint): substitution, one row of the
///   solution per iteration (downward for a lower matrix, upward for an
///   upper one; the adjoint transposes the named triangle). Only that
///   triangle is read; the batch dims of the matrix and the right-hand
///   side broadcast, as in TensorFlow 2. A zero on the diagonal divides by
///   zero (inf or NaN), as in TensorFlow.
/// - MatrixSolve, MatrixInverse (adjoint): Gauss-Jordan elimination with
///   partial pivoting (the row of the largest magnitude at or below the
///   diagonal, the first among equals), the identity as the right-hand
///   side for the inverse. A matrix with a zero pivot (singular) gives NaN
///   in every element of its result, where TensorFlow reports an error.
/// - MatrixDeterminant, LogMatrixDeterminant: the same elimination below
///   the diagonal; the product of the pivots and the sign of the row
///   swaps (sign and the sum of log |pivot|). A singular matrix gives 0
///   (sign 0, log|det| -inf), as in TensorFlow.
///
/// Each iteration costs O(n^2) (O(n k) for k right-hand sides) per matrix,
/// so a factorization or solve is O(n^3) work in n iterations: meant for
/// the small matrices of filters and likelihoods, not for large ones.
/// Autodiff differentiates the loops (TensorFlow's own gradients of these
/// ops are the same ops, MatMul and MatrixBandPart, imported as such).
#include "lower/tf/tf_lower_internal.h"

#include <math.h>
#include <string.h>

static const char *const LINALG_OPS[] = {
    "Cholesky",      "MatrixTriangularSolve", "MatrixSolve",
    "MatrixInverse", "MatrixDeterminant",     "LogMatrixDeterminant",
};

void eddy_tfl_linalg_ops_each(void (*fn)(const char *name, void *user),
                              void *user) {
  for (size_t i = 0; i < sizeof LINALG_OPS / sizeof LINALG_OPS[0]; i++)
    fn(LINALG_OPS[i], user);
}

#define TRY EDDY_RETURN_IF_ERROR
#define MAXR EDDY_TFL_MAX_RANK
/// Loop values of the largest loop below (the counter not included).
#define LA_MAX_VALS 8

/// The matrix operand of the op being lowered and what every loop over its
/// size reads.
typedef struct la {
  eddy_tfl_t *z;
  const eddy_op_t *op;
  eddy_value_t *a;  ///< the matrix [..., n, n], square
  int32_t r;        ///< its rank (>= 2)
  int64_t n;        ///< n, or -1 when known at run time only
  eddy_value_t *nv; ///< n as an i64 scalar
  eddy_value_t *ri; ///< row index [n, 1] (i64)
  eddy_value_t *ci; ///< column index [1, n] (i64)
} la_t;

static eddy_status_t un(la_t *l, const char *name, eddy_value_t *x,
                        eddy_value_t **out) {
  return eddy_tfl_build(l->z, l->op, name, &x, 1, NULL, 0, out);
}

static eddy_status_t bin(la_t *l, const char *name, eddy_value_t *a,
                         eddy_value_t *b, eddy_value_t **out) {
  return tfl_bin(l->z, l->op, name, a, b, out);
}

static eddy_status_t sel(la_t *l, eddy_value_t *c, eddy_value_t *a,
                         eddy_value_t *b, eddy_value_t **out) {
  return tfl_sel(l->z, l->op, c, a, b, out);
}

/// A scalar constant x of the dtype of v.
static eddy_status_t k(la_t *l, eddy_value_t *v, double x, eddy_value_t **out) {
  return tfl_scalar_like(l->z, v, x, out);
}

/// The entries of axis `axis` of x at the indices idx (an i64 vector: j1,
/// [j], keeps the axis as a dim of 1).
static eddy_status_t take(la_t *l, eddy_value_t *x, eddy_value_t *idx,
                          int32_t axis, eddy_value_t **out) {
  eddy_value_t *ops[2] = {x, idx};
  eddy_named_attr_t a = eddy_tfl_int_attr(l->z, "axis", axis);
  return eddy_tfl_build(l->z, l->op, "core.gather", ops, 2, &a, 1, out);
}

/// The reduction `name` of x over its last-but-one axis (rows: -2) or last
/// (-1), or both (0), with keepdims.
static eddy_status_t reduce(la_t *l, const char *name, eddy_value_t *x,
                            int which, eddy_value_t **out) {
  int32_t r = x->type->rank;
  int64_t axes[2] = {which == -1 ? r - 1 : r - 2, r - 1};
  return eddy_tfl_reduce(l->z, l->op, name, x, axes, which == 0 ? 2 : 1, true,
                         out);
}

/// Zeros of x's run-time shape (x itself when `zeros`) reduced to
/// [..., 1, 1] (x's batch dims).
static eddy_status_t zeros11(la_t *l, eddy_value_t *x, bool zeros,
                             eddy_value_t **out) {
  eddy_value_t *zero = NULL, *zx = x;
  if (!zeros) {
    TRY(k(l, x, 0, &zero));
    TRY(eddy_tfl_broadcast_like(l->z, l->op, zero, x, &zx));
  }
  return reduce(l, "core.reduce_sum", zx, 0, out);
}

/// The row and column indices, [n, 1] and [1, n] (i64): core.iota for a
/// static n, else one core.range(0, n) reshaped.
static eddy_status_t index_vecs(la_t *l) {
  eddy_value_t **outs[2] = {&l->ri, &l->ci};
  if (l->n >= 0) {
    for (int dim = 0; dim < 2; dim++) {
      int64_t dims[2] = {dim == 0 ? l->n : 1, dim == 0 ? 1 : l->n};
      const eddy_type_t *t =
          eddy_ir_tensor_type_get(l->z->ctx, EDDY_DT_I64, 2, dims);
      eddy_named_attr_t da = eddy_tfl_int_attr(l->z, "dimension", dim);
      eddy_op_t *o = NULL;
      TRY(eddy_tfl_build_typed(l->z, l->op, "core.iota", NULL, 0, &da, 1, &t, 1,
                               &o));
      *outs[dim] = eddy_ir_op_result(o, 0);
    }
    return NULL;
  }
  eddy_value_t *zero = NULL, *one = NULL, *rg = NULL;
  TRY(eddy_tfl_splat(l->z, EDDY_DT_I64, 0, NULL, 0, &zero));
  TRY(eddy_tfl_splat(l->z, EDDY_DT_I64, 0, NULL, 1, &one));
  eddy_value_t *rops[3] = {zero, l->nv, one};
  TRY(eddy_tfl_build(l->z, l->op, "core.range", rops, 3, NULL, 0, &rg));
  for (int dim = 0; dim < 2; dim++) {
    int64_t dims[2] = {dim == 0 ? -1 : 1, dim == 0 ? 1 : -1};
    TRY(eddy_tfl_reshape(l->z, l->op, rg, dims, 2, outs[dim]));
  }
  return NULL;
}

/// v with dims pos[0..np) of the values want (static >= 0, else the
/// run-time want_v), checked: a static mismatch is an error naming `what`,
/// a dynamic one a run-time error of the reshape that gives v those dims.
static eddy_status_t conform(la_t *l, eddy_value_t *v, const char *what,
                             const int32_t *pos, const int64_t *want,
                             eddy_value_t *const *want_v, int np,
                             eddy_value_t **out) {
  const eddy_type_t *t = v->type;
  bool need = false;
  int64_t dims[MAXR];
  eddy_value_t *dimv[MAXR] = {NULL};
  for (int32_t d = 0; d < t->rank; d++)
    dims[d] = t->dims[d];
  for (int i = 0; i < np; i++) {
    int64_t have = t->dims[pos[i]];
    if (have >= 0 && want[i] >= 0 && have != want[i])
      return eddy_tfl_error(l->op,
                            "dimension %d of the %s is %lld, expected %lld",
                            pos[i], what, (long long)have, (long long)want[i]);
    if (have >= 0 && want[i] >= 0)
      continue;
    need = true;
    dims[pos[i]] = want[i];
    dimv[pos[i]] = want[i] >= 0 ? NULL : want_v[i];
  }
  if (!need) {
    *out = v;
    return NULL;
  }
  for (int32_t d = 0; d < t->rank; d++)
    if (dims[d] < 0 && !dimv[d])
      TRY(eddy_tfl_dim(l->z, l->op, v, d, &dimv[d]));
  return eddy_tfl_reshape_dyn(l->z, l->op, v, dims, (size_t)t->rank, dimv, out);
}

/// Reads the matrix operand x: a float tensor of known rank >= 2, square
/// (a dynamic size is checked at run time); sets up l.
static eddy_status_t la_init(la_t *l, eddy_tfl_t *z, const eddy_op_t *op,
                             eddy_value_t *x) {
  memset(l, 0, sizeof *l);
  l->z = z;
  l->op = op;
  const eddy_type_t *t = x->type;
  if (t->kind != EDDY_TYPE_TENSOR || !eddy_dtype_is_float(t->dtype))
    return eddy_tfl_error(op, "the matrix must be a float tensor, not %s",
                          t->kind == EDDY_TYPE_TENSOR
                              ? eddy_dtype_name(t->dtype)
                              : "a list or token");
  if (t->rank == EDDY_RANK_UNKNOWN)
    return eddy_tfl_error(op, "the matrix's rank is unknown");
  if (t->rank < 2)
    return eddy_tfl_error(op, "the matrix must have rank 2 or more, not %d",
                          t->rank);
  if (t->rank > MAXR)
    return eddy_tfl_error(op, "the matrix's rank %d is above %d", t->rank,
                          MAXR);
  l->r = t->rank;
  int64_t rows = t->dims[l->r - 2], cols = t->dims[l->r - 1];
  if (rows >= 0 && cols >= 0 && rows != cols)
    return eddy_tfl_error(op, "the matrix must be square, not %lld x %lld",
                          (long long)rows, (long long)cols);
  l->n = cols >= 0 ? cols : rows;
  if (l->n >= 0) {
    TRY(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, (double)l->n, &l->nv));
  } else {
    TRY(eddy_tfl_dim(z, op, x, l->r - 1, &l->nv));
    // The rows must be as many as the columns.
    int32_t pos = l->r - 2;
    int64_t want = -1;
    TRY(conform(l, x, "matrix", &pos, &want, &l->nv, 1, &x));
  }
  if (rows < 0 && cols >= 0) {
    int32_t pos = l->r - 2;
    TRY(conform(l, x, "matrix", &pos, &l->n, NULL, 1, &x));
  }
  if (cols < 0 && rows >= 0) {
    int32_t pos = l->r - 1;
    TRY(conform(l, x, "matrix", &pos, &l->n, NULL, 1, &x));
  }
  l->a = x;
  return index_vecs(l);
}

/// x with its last two dims swapped.
static eddy_status_t transpose2(la_t *l, eddy_value_t *x, eddy_value_t **out) {
  int64_t perm[MAXR];
  int32_t r = x->type->rank;
  for (int32_t i = 0; i < r; i++)
    perm[i] = i;
  perm[r - 2] = r - 1;
  perm[r - 1] = r - 2;
  eddy_named_attr_t a = eddy_tfl_ints_attr(l->z, "perm", perm, (size_t)r);
  return eddy_tfl_build(l->z, l->op, "core.transpose", &x, 1, &a, 1, out);
}

/// ---- The loop over n -------------------------------------------------------

/// One iteration: the loop values vals[0..nv) at index j (an i64 scalar;
/// j1 the same as a [1] vector) give next[0..nv).
typedef eddy_status_t (*la_body_t)(la_t *l, eddy_value_t *j, eddy_value_t *j1,
                                   eddy_value_t *const *vals,
                                   eddy_value_t **next, void *user);

/// Rounds of the loop's types: a value whose yielded type is more general
/// than its initial one (a dim the body broadcasts to a dynamic size) is
/// built again with the general type.
#define LA_MAX_ROUNDS 4

/// A ctl.while over j = 0..n-1 (down: n-1..0) of the loop values
/// inits[0..nv); out[0..nv) are their final values.
static eddy_status_t la_loop(la_t *l, bool down, eddy_value_t *const *inits,
                             size_t nv, la_body_t body, void *user,
                             eddy_value_t **out) {
  eddy_tfl_t *z = l->z;
  if (l->n == 0) { // no iteration (and no argmax over an empty axis)
    for (size_t i = 0; i < nv; i++)
      out[i] = inits[i];
    return NULL;
  }
  eddy_value_t *ops[LA_MAX_VALS + 1];
  const eddy_type_t *types[LA_MAX_VALS + 1];
  if (nv > LA_MAX_VALS)
    return eddy_tfl_error(l->op, "internal: too many loop values");
  TRY(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, 0, &ops[0]));
  types[0] = ops[0]->type;
  for (size_t i = 0; i < nv; i++) {
    ops[i + 1] = inits[i];
    types[i + 1] = inits[i]->type;
  }
  eddy_named_attr_t pa = eddy_tfl_int_attr(z, "parallel_iterations", 1);
  eddy_op_state_t st = {.name = "ctl.while",
                        .operands = ops,
                        .num_operands = nv + 1,
                        .attrs = &pa,
                        .num_attrs = 1,
                        .result_types = types,
                        .num_results = nv + 1,
                        .num_regions = 2,
                        .loc = l->op->loc};
  eddy_status_t s = NULL;
  eddy_op_t *w = NULL;
  for (int round = 0; !s; round++) {
    z->b.loc = l->op->loc;
    TRY(eddy_ir_build(&z->b, &st, &w));
    eddy_block_t *cb = eddy_ir_region_add_block(&w->regions[0]);
    eddy_block_t *bb = eddy_ir_region_add_block(&w->regions[1]);
    for (size_t i = 0; i <= nv; i++) {
      eddy_ir_block_add_arg(cb, types[i]);
      eddy_ir_block_add_arg(bb, types[i]);
    }
    eddy_builder_t saved = z->b;
    eddy_value_t *c = NULL, *next[LA_MAX_VALS + 1] = {NULL};
    eddy_op_t *term = NULL;
    eddy_ir_builder_set_end(&z->b, cb);
    s = bin(l, "core.lt", cb->args[0], l->nv, &c);
    if (!s)
      s = eddy_tfl_build_typed(z, l->op, "ctl.condition", &c, 1, NULL, 0, NULL,
                               0, &term);
    eddy_ir_builder_set_end(&z->b, bb);
    eddy_value_t *t = bb->args[0], *j = t, *one = NULL, *j1 = NULL;
    if (!s)
      s = eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, 1, &one);
    if (!s && down) { // j = n - 1 - t
      eddy_value_t *m = NULL;
      s = bin(l, "core.sub", l->nv, one, &m);
      if (!s)
        s = bin(l, "core.sub", m, t, &j);
    }
    int64_t d1 = 1;
    if (!s)
      s = eddy_tfl_reshape(z, l->op, j, &d1, 1, &j1);
    if (!s)
      s = bin(l, "core.add", t, one, &next[0]);
    if (!s)
      s = body(l, j, j1, &bb->args[1], &next[1], user);
    if (!s)
      s = eddy_tfl_build_typed(z, l->op, "ctl.yield", next, nv + 1, NULL, 0,
                               NULL, 0, &term);
    z->b = saved;
    if (s || round + 1 >= LA_MAX_ROUNDS)
      break;
    bool stable = true;
    for (size_t i = 1; i <= nv; i++) {
      const eddy_type_t *g =
          eddy_ir_type_generalize(z->ctx, types[i], next[i]->type);
      if (!g)
        return eddy_tfl_error(l->op,
                              "internal: loop value %zu changes its "
                              "dtype",
                              i);
      stable = stable && g == types[i];
      types[i] = g;
    }
    if (stable)
      break;
    eddy_ir_op_erase(w);
    w = NULL;
  }
  if (s)
    return s;
  for (size_t i = 0; i < nv; i++)
    out[i] = eddy_ir_op_result(w, (uint32_t)i + 1);
  return NULL;
}

/// ---- Cholesky --------------------------------------------------------------

/// Loop values: L (the columns before j found, the others zero) and bad
/// ([..., 1, 1]: a pivot was not positive).
static eddy_status_t chol_body(la_t *l, eddy_value_t *j, eddy_value_t *j1,
                               eddy_value_t *const *vals, eddy_value_t **next,
                               void *user) {
  (void)user;
  eddy_value_t *L = vals[0], *bad = vals[1];
  int32_t r = l->r;
  eddy_value_t *acol = NULL, *lrow = NULL, *p = NULL, *s = NULL, *v = NULL,
               *vjj = NULL, *zero = NULL, *one = NULL, *pos = NULL, *vs = NULL,
               *d = NULL, *q = NULL, *below = NULL, *diag = NULL, *dz = NULL,
               *col = NULL, *isj = NULL, *npos = NULL;
  // Column j of A less sum_k L[i, k] L[j, k] over the columns k < j.
  TRY(take(l, l->a, j1, r - 1, &acol));         // [..., n, 1]
  TRY(take(l, L, j1, r - 2, &lrow));            // [..., 1, n]
  TRY(bin(l, "core.mul", L, lrow, &p));         // [..., n, n]
  TRY(reduce(l, "core.reduce_sum", p, -1, &s)); // [..., n, 1]
  TRY(bin(l, "core.sub", acol, s, &v));
  TRY(take(l, v, j1, r - 2, &vjj)); // [..., 1, 1]
  TRY(k(l, v, 0, &zero));
  TRY(k(l, v, 1, &one));
  TRY(bin(l, "core.gt", vjj, zero, &pos));
  TRY(sel(l, pos, vjj, one, &vs)); // no square root of a bad pivot
  TRY(un(l, "core.sqrt", vs, &d));
  TRY(bin(l, "core.div", v, d, &q));
  TRY(bin(l, "core.gt", l->ri, j, &below));
  TRY(bin(l, "core.eq", l->ri, j, &diag));
  TRY(sel(l, diag, d, zero, &dz));
  TRY(sel(l, below, q, dz, &col));
  TRY(bin(l, "core.eq", l->ci, j, &isj));
  TRY(sel(l, isj, col, L, &next[0]));
  TRY(un(l, "core.not", pos, &npos));
  return bin(l, "core.or", bad, npos, &next[1]);
}

static eddy_status_t lower_cholesky(eddy_tfl_t *z, const eddy_op_t *op) {
  la_t l;
  TRY(la_init(&l, z, op, tfl_in(z, op, 0)));
  eddy_value_t *zero = NULL, *L0 = NULL, *z11 = NULL, *bad0 = NULL;
  TRY(k(&l, l.a, 0, &zero));
  TRY(eddy_tfl_broadcast_like(z, op, zero, l.a, &L0));
  TRY(zeros11(&l, L0, true, &z11));
  TRY(bin(&l, "core.ne", z11, z11, &bad0));
  eddy_value_t *inits[2] = {L0, bad0}, *res[2] = {NULL};
  TRY(la_loop(&l, false, inits, 2, chol_body, NULL, res));
  // A failed factorization: NaN in the lower triangle.
  eddy_value_t *nan = NULL, *lower = NULL, *fill = NULL, *out = NULL;
  TRY(k(&l, l.a, NAN, &nan));
  TRY(bin(&l, "core.le", l.ci, l.ri, &lower));
  TRY(sel(&l, lower, nan, zero, &fill));
  TRY(sel(&l, res[1], fill, res[0], &out));
  tfl_out1(z, op, out);
  return NULL;
}

/// ---- MatrixTriangularSolve -------------------------------------------------

typedef struct tri {
  eddy_value_t *am; ///< the matrix, its other triangle zero (transposed
                    ///< for the adjoint)
  eddy_value_t *b;  ///< the right-hand side
} tri_t;

/// Loop value: X (the rows solved so far, the others zero).
static eddy_status_t tri_body(la_t *l, eddy_value_t *j, eddy_value_t *j1,
                              eddy_value_t *const *vals, eddy_value_t **next,
                              void *user) {
  tri_t *t = user;
  eddy_value_t *X = vals[0], *arow = NULL, *bj = NULL, *s = NULL, *ajj = NULL,
               *num = NULL, *xj = NULL, *isj = NULL;
  eddy_value_t *mm[2] = {NULL, X};
  TRY(take(l, t->am, j1, l->r - 2, &arow));          // [..A, 1, n]
  TRY(take(l, t->b, j1, t->b->type->rank - 2, &bj)); // [..B, 1, k]
  mm[0] = arow;
  TRY(eddy_tfl_build(l->z, l->op, "core.matmul", mm, 2, NULL, 0, &s));
  TRY(take(l, arow, j1, l->r - 1, &ajj)); // [..A, 1, 1]
  TRY(bin(l, "core.sub", bj, s, &num));
  TRY(bin(l, "core.div", num, ajj, &xj));
  TRY(bin(l, "core.eq", l->ri, j, &isj));
  return sel(l, isj, xj, X, &next[0]);
}

/// True when a's batch dims broadcast to b's without changing them: each
/// is static and 1 or equal to b's (b's rank at least a's).
static bool batch_within(const eddy_type_t *a, const eddy_type_t *b) {
  int32_t na = a->rank - 2, nb = b->rank - 2;
  if (na > nb)
    return false;
  for (int32_t i = 0; i < na; i++) {
    int64_t da = a->dims[i], db = b->dims[nb - na + i];
    if (da != 1 && (da < 0 || da != db))
      return false;
  }
  return true;
}

static eddy_status_t lower_triangular_solve(eddy_tfl_t *z,
                                            const eddy_op_t *op) {
  la_t l;
  TRY(la_init(&l, z, op, tfl_in(z, op, 0)));
  bool lower = eddy_ir_op_attr_bool(op, "lower", true);
  bool adjoint = eddy_ir_op_attr_bool(op, "adjoint", false);
  eddy_value_t *b = tfl_in(z, op, 1);
  const eddy_type_t *bt = b->type;
  if (bt->kind != EDDY_TYPE_TENSOR || bt->dtype != l.a->type->dtype ||
      bt->rank == EDDY_RANK_UNKNOWN || bt->rank < 2 || bt->rank > MAXR)
    return eddy_tfl_error(op, "the right-hand side must be a tensor of the "
                              "matrix's dtype and of known rank >= 2");
  int32_t pos = bt->rank - 2;
  TRY(conform(&l, b, "right-hand side", &pos, &l.n, &l.nv, 1, &b));
  tri_t t = {NULL, b};
  eddy_value_t *tri = NULL, *zero = NULL;
  TRY(bin(&l, lower ? "core.le" : "core.ge", l.ci, l.ri, &tri));
  TRY(k(&l, l.a, 0, &zero));
  TRY(sel(&l, tri, l.a, zero, &t.am));
  if (adjoint) {
    TRY(transpose2(&l, t.am, &t.am));
    lower = !lower;
  }
  // X starts as zeros of the right-hand side's shape, with the batch dims
  // of both (TensorFlow 2 broadcasts them).
  eddy_value_t *x0 = NULL;
  TRY(eddy_tfl_broadcast_like(z, op, zero, b, &x0));
  if (!batch_within(l.a->type, bt)) {
    eddy_value_t *za = NULL;
    TRY(zeros11(&l, l.a, false, &za));
    TRY(bin(&l, "core.add", x0, za, &x0));
  }
  eddy_value_t *x = NULL;
  TRY(la_loop(&l, !lower, &x0, 1, tri_body, &t, &x));
  tfl_out1(z, op, x);
  return NULL;
}

/// ---- Gauss-Jordan elimination with partial pivoting ------------------------

enum { GE_SOLVE, GE_DET, GE_LOGDET };

/// The pivot row of column j of m ([..., n, m]) at or below row j: the
/// largest magnitude, the first among equals (core.argmax; a NaN counts as
/// the largest), as [..., 1, 1] i64.
static eddy_status_t pivot_row(la_t *l, eddy_value_t *cj, eddy_value_t *j,
                               eddy_value_t **out) {
  int32_t r = l->r;
  eddy_value_t *ab = NULL, *geq = NULL, *m1 = NULL, *cand = NULL, *p = NULL;
  TRY(un(l, "core.abs", cj, &ab));
  TRY(bin(l, "core.ge", l->ri, j, &geq));
  TRY(k(l, cj, -1, &m1));
  TRY(sel(l, geq, ab, m1, &cand)); // [..., n, 1]
  eddy_named_attr_t a[2] = {
      eddy_tfl_int_attr(l->z, "axis", r - 2),
      eddy_ir_named_attr(l->z->ctx, "dtype",
                         eddy_ir_string_attr_get(l->z->ctx, "i64", 3))};
  TRY(eddy_tfl_build(l->z, l->op, "core.argmax", &cand, 1, a, 2, &p));
  int64_t dims[MAXR], from[MAXR];
  for (int32_t i = 0; i < r; i++) {
    dims[i] = i < r - 2 ? cand->type->dims[i] : 1;
    from[i] = i;
  }
  return eddy_tfl_reshape_keep(l->z, l->op, p, dims, (size_t)r, from, out);
}

/// Loop values: M = [A | B] (the matrix being reduced beside the
/// right-hand sides, GE_SOLVE; A alone otherwise), the accumulators
/// (GE_DET: det; GE_LOGDET: sign, log |det|; [..., 1, 1]) and bad
/// ([..., 1, 1]: a zero pivot).
static eddy_status_t ge_body(la_t *l, eddy_value_t *j, eddy_value_t *j1,
                             eddy_value_t *const *vals, eddy_value_t **next,
                             void *user) {
  int mode = *(const int *)user;
  int32_t r = l->r;
  eddy_value_t *M = vals[0], *cj = NULL, *p = NULL, *isp = NULL, *isj = NULL;
  TRY(take(l, M, j1, r - 1, &cj)); // [..., n, 1]
  TRY(pivot_row(l, cj, j, &p));
  TRY(bin(l, "core.eq", l->ri, p, &isp)); // [..., n, 1]
  TRY(bin(l, "core.eq", l->ri, j, &isj)); // [n, 1]
  // Rows j and p swapped: rp is row p, the pivot row.
  eddy_value_t *zero = NULL, *one = NULL, *rj = NULL, *mp = NULL, *rp = NULL,
               *t = NULL, *m1 = NULL;
  TRY(k(l, M, 0, &zero));
  TRY(k(l, M, 1, &one));
  TRY(take(l, M, j1, r - 2, &rj));
  TRY(sel(l, isp, M, zero, &mp));
  TRY(reduce(l, "core.reduce_sum", mp, -2, &rp)); // [..., 1, m]
  TRY(sel(l, isp, rj, M, &t));
  TRY(sel(l, isj, rp, t, &m1));
  eddy_value_t *piv = NULL, *isz = NULL, *ps = NULL, *elim = NULL, *cj1 = NULL,
               *f = NULL, *rn = NULL, *fr = NULL, *m2 = NULL;
  TRY(take(l, rp, j1, r - 1, &piv)); // [..., 1, 1]
  TRY(bin(l, "core.eq", piv, zero, &isz));
  TRY(sel(l, isz, one, piv, &ps)); // a zero pivot divides nothing
  // The multipliers: column j after the swap, on the rows eliminated
  // (all but j to solve; below j for a determinant).
  TRY(bin(l, mode == GE_SOLVE ? "core.ne" : "core.gt", l->ri, j, &elim));
  TRY(take(l, m1, j1, r - 1, &cj1));
  TRY(sel(l, elim, cj1, zero, &f));
  TRY(bin(l, "core.div", rp, ps, &rn));
  TRY(bin(l, "core.mul", f, rn, &fr));
  TRY(bin(l, "core.sub", m1, fr, &m2));
  TRY(sel(l, isj, rn, m2, &next[0]));
  size_t a = 1;
  if (mode != GE_SOLVE) {
    // A swap (p != j) flips the sign.
    eddy_value_t *sw = NULL, *mone = NULL, *sg = NULL, *u = NULL;
    TRY(bin(l, "core.ne", p, j, &sw));
    TRY(k(l, piv, -1, &mone));
    TRY(sel(l, sw, mone, one, &sg));
    if (mode == GE_DET) {
      TRY(bin(l, "core.mul", vals[a], piv, &u));
      TRY(bin(l, "core.mul", u, sg, &next[a]));
      a++;
    } else {
      eddy_value_t *sp = NULL, *ap = NULL, *lg = NULL;
      TRY(un(l, "core.sign", piv, &sp));
      TRY(bin(l, "core.mul", vals[a], sp, &u));
      TRY(bin(l, "core.mul", u, sg, &next[a]));
      TRY(un(l, "core.abs", piv, &ap));
      TRY(un(l, "core.log", ap, &lg));
      TRY(bin(l, "core.add", vals[a + 1], lg, &next[a + 1]));
      a += 2;
    }
  }
  return bin(l, "core.or", vals[a], isz, &next[a]);
}

/// Runs the elimination on m (l->a, or [l->a | B] for GE_SOLVE); res[]
/// gets the final loop values.
static eddy_status_t ge_run(la_t *l, int mode, eddy_value_t *m,
                            eddy_value_t **res) {
  eddy_value_t *inits[LA_MAX_VALS], *z11 = NULL, *one = NULL, *acc = NULL;
  size_t nv = 0;
  inits[nv++] = m;
  TRY(zeros11(l, l->a, false, &z11));
  TRY(k(l, z11, 1, &one));
  if (mode != GE_SOLVE) {
    TRY(bin(l, "core.add", z11, one, &acc)); // det or sign 1
    inits[nv++] = acc;
  }
  if (mode == GE_LOGDET)
    inits[nv++] = z11;                            // log |det| 0
  TRY(bin(l, "core.ne", z11, z11, &inits[nv++])); // no zero pivot yet
  return la_loop(l, false, inits, nv, ge_body, &mode, res);
}

static eddy_status_t lower_solve(eddy_tfl_t *z, const eddy_op_t *op,
                                 bool inverse) {
  la_t l;
  TRY(la_init(&l, z, op, tfl_in(z, op, 0)));
  if (eddy_ir_op_attr_bool(op, "adjoint", false))
    TRY(transpose2(&l, l.a, &l.a));
  eddy_value_t *mb = NULL;
  if (inverse) {
    // The identity, broadcast to the matrix's shape.
    eddy_value_t *eq = NULL, *id = NULL;
    TRY(bin(&l, "core.eq", l.ri, l.ci, &eq));
    TRY(eddy_tfl_cast(z, op, eq, l.a->type->dtype, &id));
    TRY(eddy_tfl_broadcast_like(z, op, id, l.a, &mb));
  } else {
    // MatrixSolve takes the matrix's batch dims and n rows exactly.
    mb = tfl_in(z, op, 1);
    const eddy_type_t *bt = mb->type;
    if (bt->kind != EDDY_TYPE_TENSOR || bt->dtype != l.a->type->dtype ||
        bt->rank != l.r)
      return eddy_tfl_error(op, "the right-hand side must be a tensor of the "
                                "matrix's dtype and rank");
    int32_t pos[MAXR];
    int64_t want[MAXR];
    eddy_value_t *wv[MAXR] = {NULL};
    for (int32_t i = 0; i < l.r - 1; i++) {
      pos[i] = i;
      want[i] = l.a->type->dims[i];
      if (want[i] < 0)
        TRY(eddy_tfl_dim(z, op, l.a, i, &wv[i]));
    }
    TRY(conform(&l, mb, "right-hand side", pos, want, wv, l.r - 1, &mb));
  }
  // [A | B], reduced to [I | X]; X is its columns n .. n + k.
  eddy_value_t *cat[2] = {l.a, mb}, *m = NULL, *res[2] = {NULL}, *cols = NULL,
               *x = NULL, *nan = NULL;
  eddy_named_attr_t ax = eddy_tfl_int_attr(z, "axis", l.r - 1);
  TRY(eddy_tfl_build(z, op, "core.concat", cat, 2, &ax, 1, &m));
  TRY(ge_run(&l, GE_SOLVE, m, res));
  int64_t kk = mb->type->dims[l.r - 1];
  if (l.n >= 0 && kk >= 0) {
    const eddy_type_t *it =
        eddy_ir_tensor_type_get(z->ctx, EDDY_DT_I64, 1, &kk);
    eddy_named_attr_t da = eddy_tfl_int_attr(z, "dimension", 0);
    eddy_op_t *o = NULL;
    TRY(eddy_tfl_build_typed(z, op, "core.iota", NULL, 0, &da, 1, &it, 1, &o));
    TRY(bin(&l, "core.add", eddy_ir_op_result(o, 0), l.nv, &cols));
  } else {
    eddy_value_t *kv = NULL, *end = NULL, *one = NULL;
    TRY(eddy_tfl_dim(z, op, mb, l.r - 1, &kv));
    TRY(bin(&l, "core.add", l.nv, kv, &end));
    TRY(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, 1, &one));
    eddy_value_t *rops[3] = {l.nv, end, one};
    TRY(eddy_tfl_build(z, op, "core.range", rops, 3, NULL, 0, &cols));
  }
  TRY(take(&l, res[0], cols, l.r - 1, &x));
  // A zero pivot (singular): NaN everywhere.
  TRY(k(&l, x, NAN, &nan));
  TRY(sel(&l, res[1], nan, x, &x));
  tfl_out1(z, op, x);
  return NULL;
}

/// v ([..., 1, 1]) without its last two dims.
static eddy_status_t drop11(la_t *l, eddy_value_t *v, eddy_value_t **out) {
  int32_t r = v->type->rank;
  int64_t axes[2] = {r - 2, r - 1};
  return eddy_tfl_reduce(l->z, l->op, "core.reduce_sum", v, axes, 2, false,
                         out);
}

static eddy_status_t lower_determinant(eddy_tfl_t *z, const eddy_op_t *op,
                                       bool log) {
  la_t l;
  TRY(la_init(&l, z, op, tfl_in(z, op, 0)));
  eddy_value_t *res[4] = {NULL}, *a = NULL, *b = NULL;
  TRY(ge_run(&l, log ? GE_LOGDET : GE_DET, l.a, res));
  TRY(drop11(&l, res[1], &a));
  if (!log) {
    tfl_out1(z, op, a);
    return NULL;
  }
  TRY(drop11(&l, res[2], &b));
  eddy_tfl_set(z, &op->results[0], a);
  eddy_tfl_set(z, &op->results[1], b);
  return NULL;
}

eddy_status_t eddy_tfl_lower_linalg_op(eddy_tfl_t *z, const eddy_op_t *op,
                                       bool *handled) {
  const char *t = op->name->str + 3;
  *handled = true;
  if (strcmp(t, "Cholesky") == 0)
    return lower_cholesky(z, op);
  if (strcmp(t, "MatrixTriangularSolve") == 0)
    return lower_triangular_solve(z, op);
  if (strcmp(t, "MatrixSolve") == 0)
    return lower_solve(z, op, false);
  if (strcmp(t, "MatrixInverse") == 0)
    return lower_solve(z, op, true);
  if (strcmp(t, "MatrixDeterminant") == 0)
    return lower_determinant(z, op, false);
  if (strcmp(t, "LogMatrixDeterminant") == 0)
    return lower_determinant(z, op, true);
  *handled = false;
  return NULL;
}

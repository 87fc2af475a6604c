/// legalize-tf: shape and data-movement ops. core's shape ops take their
/// shapes as attributes, so TensorFlow's shape operands must be known when
/// lowering: constants, or values that fold to constants (a Shape of a
/// tensor of static type folds through core.shape). Where they are not, the
/// op's declared result type is used when it is static enough; otherwise
/// the op is reported as needing a static shape. Reshapes are the
/// exception: core.reshape takes run-time dims as operands, so ExpandDims,
/// Squeeze, Pack, Unpack and Reshape take any number of dynamic dims and
/// need only a rank.
#include "lower/tf/tf_lower_internal.h"

#include <stdlib.h>
#include <string.h>

#define MAXR 64

const char *const eddy_tfl_shape_ops[] = {
    "Reshape", "Shape", "ShapeN", "Size", "Rank", "Fill", "Empty", "ZerosLike", "OnesLike",
    "Tile", "Pack", "Unpack", "ConcatV2", "Split", "ExpandDims", "Squeeze",
    "StridedSlice", "StridedSliceGrad", "Range", "GatherV2", "Transpose",
    "Slice", "BroadcastGradientArgs", "Pad", "PadV2", "MirrorPad",
    "MirrorPadGrad", NULL,
};

static eddy_status_t const_i64(eddy_tfl_t *z, eddy_dtype_t dt, int32_t rank,
                               const int64_t *dims, const int64_t *vals,
                               size_t n, eddy_value_t **out) {
  const eddy_type_t *t = eddy_ir_tensor_type_get(z->ctx, dt, rank, dims);
  return eddy_ir_build_constant(
      &z->b, eddy_ir_dense_attr_from_i64(z->ctx, t, vals, n), out);
}

static eddy_status_t attr_op(eddy_tfl_t *z, const eddy_op_t *op,
                             const char *name, eddy_value_t *x,
                             const char *attr, const int64_t *v, size_t n,
                             eddy_value_t **out) {
  eddy_named_attr_t a = eddy_ir_named_attr(
      z->ctx, attr, eddy_ir_i64_array_attr_get(z->ctx, v, n));
  return eddy_tfl_build(z, op, name, &x, 1, &a, 1, out);
}

/// x broadcast to the run-time shape of y, with core ops only:
/// select(y == y || y != y, x, x) (true everywhere, NaN included).
static eddy_status_t broadcast_like(eddy_tfl_t *z, const eddy_op_t *op,
                                    eddy_value_t *x, eddy_value_t *y,
                                    eddy_value_t **out) {
  eddy_value_t *e = NULL, *n = NULL, *t = NULL, *ops[3] = {y, y, NULL};
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.eq", ops, 2, NULL, 0, &e));
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.ne", ops, 2, NULL, 0, &n));
  ops[0] = e;
  ops[1] = n;
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.or", ops, 2, NULL, 0, &t));
  ops[0] = t;
  ops[1] = x;
  ops[2] = x;
  return eddy_tfl_build(z, op, "core.select", ops, 3, NULL, 0, out);
}

/// When v is the (cast) core.shape of a tensor, that tensor.
static eddy_value_t *shape_source(eddy_value_t *v) {
  if (v->def && eddy_ir_op_is(v->def, "core.cast"))
    v = eddy_ir_op_operand(v->def, 0);
  if (v->def && eddy_ir_op_is(v->def, "core.shape"))
    return eddy_ir_op_operand(v->def, 0);
  return NULL;
}

/// x has rank r and only dims of size 1.
static bool all_ones(const eddy_type_t *t, int32_t r) {
  if (t->kind != EDDY_TYPE_TENSOR || t->rank > r || t->rank < 0)
    return false;
  for (int32_t i = 0; i < t->rank; i++)
    if (t->dims[i] != 1)
      return false;
  return true;
}

/// Entry i of the 1-D integer tensor s, as a scalar.
static eddy_status_t element(eddy_tfl_t *z, const eddy_op_t *op,
                             eddy_value_t *s, int64_t i, eddy_value_t **out) {
  int64_t lo = i, hi = i + 1, st = 1;
  eddy_named_attr_t a[3] = {
      eddy_ir_named_attr(z->ctx, "start",
                         eddy_ir_i64_array_attr_get(z->ctx, &lo, 1)),
      eddy_ir_named_attr(z->ctx, "limit",
                         eddy_ir_i64_array_attr_get(z->ctx, &hi, 1)),
      eddy_ir_named_attr(z->ctx, "strides",
                         eddy_ir_i64_array_attr_get(z->ctx, &st, 1))};
  eddy_value_t *r = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.slice", &s, 1, a, 3, &r));
  return eddy_tfl_reshape(z, op, r, NULL, 0, out);
}

/// Reshape to a shape known only at run time: its length (the result's
/// rank) must be known; dims the result type knows are static, the others
/// come from the shape operand (or from the dims of the tensor it is the
/// Shape of).
static eddy_status_t reshape_run_time(eddy_tfl_t *z, const eddy_op_t *op,
                                      eddy_value_t *x, eddy_value_t *s,
                                      eddy_value_t **out) {
  const eddy_type_t *st = s->type, *rt = op->results[0].type;
  int64_t n = -1;
  if (st->kind == EDDY_TYPE_TENSOR && st->rank == 1 && st->dims[0] >= 0)
    n = st->dims[0];
  else if (rt->kind == EDDY_TYPE_TENSOR && rt->rank != EDDY_RANK_UNKNOWN)
    n = rt->rank;
  if (n < 0 || n > MAXR)
    return eddy_tfl_error(op, "the result's rank is unknown: the new shape "
                              "is not a constant and its length is not "
                              "known");
  if (st->kind != EDDY_TYPE_TENSOR || eddy_dtype_is_float(st->dtype))
    return eddy_tfl_error(op, "the new shape is not an integer tensor");
  bool typed = rt->kind == EDDY_TYPE_TENSOR && rt->rank == n;
  eddy_value_t *src = shape_source(s);
  if (src && (src->type->rank != n))
    src = NULL;
  int64_t dims[MAXR];
  eddy_value_t *dimv[MAXR] = {NULL};
  for (int64_t i = 0; i < n; i++) {
    dims[i] = typed ? rt->dims[i] : EDDY_DIM_DYNAMIC;
    if (dims[i] >= 0)
      continue;
    dims[i] = -1;
    if (src)
      EDDY_RETURN_IF_ERROR(eddy_tfl_dim(z, op, src, i, &dimv[i]));
    else
      EDDY_RETURN_IF_ERROR(element(z, op, s, i, &dimv[i]));
  }
  return eddy_tfl_reshape_dyn(z, op, x, dims, (size_t)n, dimv, out);
}

static eddy_status_t lower_reshape(eddy_tfl_t *z, const eddy_op_t *op) {
  int64_t dims[MAXR];
  int64_t n = eddy_tfl_const_ints(z, tfl_in(z, op, 1), dims, MAXR);
  eddy_value_t *r = NULL;
  if (n < 0)
    EDDY_RETURN_IF_ERROR(
        reshape_run_time(z, op, tfl_in(z, op, 0), tfl_in(z, op, 1), &r));
  else
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_reshape(z, op, tfl_in(z, op, 0), dims, (size_t)n, &r));
  tfl_out1(z, op, r);
  return NULL;
}

/// ShapeN(x_0, ..., x_{N-1}): the Shape of each (the gradient of a concat
/// of tensors whose shapes are known at run time only).
static eddy_status_t lower_shape_n(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_dtype_t dt = EDDY_DT_I32;
  eddy_tfl_attr_dtype(op, "out_type", &dt);
  if (op->num_results != op->num_operands)
    return eddy_tfl_error(op, "has %u operands and %u results",
                          (unsigned)op->num_operands,
                          (unsigned)op->num_results);
  for (uint32_t i = 0; i < op->num_operands; i++) {
    eddy_value_t *x = tfl_in(z, op, i), *r = NULL;
    if (x->type->kind != EDDY_TYPE_TENSOR)
      return eddy_tfl_error(op, "operand #%u is not a tensor", (unsigned)i);
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "core.shape", &x, 1, NULL, 0, &r));
    EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, r, dt, &r));
    eddy_tfl_set(z, &op->results[i], r);
  }
  return NULL;
}

static eddy_status_t lower_shape(eddy_tfl_t *z, const eddy_op_t *op,
                                 const char *t) {
  eddy_dtype_t dt = EDDY_DT_I32;
  eddy_tfl_attr_dtype(op, "out_type", &dt);
  eddy_value_t *x = tfl_in(z, op, 0), *r = NULL;
  if (x->type->kind != EDDY_TYPE_TENSOR)
    return eddy_tfl_error(op, "the operand is not a tensor");
  if (strcmp(t, "Rank") == 0) {
    if (x->type->rank == EDDY_RANK_UNKNOWN)
      return eddy_tfl_error(op, "the operand's rank is unknown");
    int64_t rk = x->type->rank;
    EDDY_RETURN_IF_ERROR(const_i64(z, EDDY_DT_I32, 0, NULL, &rk, 1, &r));
    tfl_out1(z, op, r);
    return NULL;
  }
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.shape", &x, 1, NULL, 0, &r));
  if (strcmp(t, "Size") == 0) {
    int64_t ax = 0;
    EDDY_RETURN_IF_ERROR(attr_op(z, op, "core.reduce_prod", r, "axes", &ax, 1,
                                 &r));
  }
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, r, dt, &r));
  tfl_out1(z, op, r);
  return NULL;
}

/// The static shape an op must produce: from a constant operand, else from
/// the declared result type.
static bool target_shape(eddy_tfl_t *z, const eddy_op_t *op,
                         eddy_value_t *shape, int64_t *dims, size_t *rank) {
  int64_t n = shape ? eddy_tfl_const_ints(z, shape, dims, MAXR) : -1;
  if (n >= 0) {
    for (int64_t i = 0; i < n; i++)
      if (dims[i] < 0)
        return false;
    *rank = (size_t)n;
    return true;
  }
  const eddy_type_t *t = op->results[0].type;
  if (!eddy_ir_type_is_static(t) || t->rank > MAXR)
    return false;
  for (int32_t i = 0; i < t->rank; i++)
    dims[i] = t->dims[i];
  *rank = (size_t)t->rank;
  return true;
}

/// s is a 1-D integer tensor of known length (at most MAXR).
static bool known_length(const eddy_type_t *st) {
  return st->kind == EDDY_TYPE_TENSOR && st->rank == 1 && st->dims[0] >= 0 &&
         st->dims[0] <= MAXR && !eddy_dtype_is_float(st->dtype);
}

/// A tensor of the run-time shape s (known_length): a core.range of
/// prod(s) elements reshaped to s, dims the result type of op knows
/// static.
static eddy_status_t shape_grid(eddy_tfl_t *z, const eddy_op_t *op,
                                eddy_value_t *s, eddy_value_t **out) {
  const eddy_type_t *rt = op->results[0].type;
  int64_t n = s->type->dims[0], dims[MAXR];
  bool typed = rt->kind == EDDY_TYPE_TENSOR && rt->rank == n;
  eddy_value_t *dv[MAXR] = {NULL}, *count = NULL, *zero = NULL, *one = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, 1, &count));
  for (int64_t i = 0; i < n; i++) {
    eddy_value_t *d = NULL;
    EDDY_RETURN_IF_ERROR(element(z, op, s, i, &d));
    EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, d, EDDY_DT_I64, &d));
    dims[i] = typed ? rt->dims[i] : EDDY_DIM_DYNAMIC;
    if (dims[i] < 0) {
      dims[i] = -1;
      dv[i] = d;
    }
    eddy_value_t *ops[2] = {count, d};
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "core.mul", ops, 2, NULL, 0, &count));
  }
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, 0, &zero));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, 1, &one));
  eddy_value_t *rops[3] = {zero, count, one}, *grid = NULL;
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build(z, op, "core.range", rops, 3, NULL, 0, &grid));
  return eddy_tfl_reshape_dyn(z, op, grid, dims, (size_t)n, dv, out);
}

/// Fill(s, v) with s known only at run time (its length known): v broadcast
/// like a shape_grid of s. Keras builds the zero states of its RNN layers
/// this way, zeros([Shape(x)[0], units]), for an input of dynamic batch.
static eddy_status_t fill_run_time(eddy_tfl_t *z, const eddy_op_t *op,
                                   eddy_value_t *s, eddy_value_t *v,
                                   eddy_value_t **out) {
  if (!known_length(s->type))
    return eddy_tfl_error(op, "the shape to fill is not a constant, and its "
                              "length is not known");
  eddy_value_t *grid = NULL;
  EDDY_RETURN_IF_ERROR(shape_grid(z, op, s, &grid));
  return broadcast_like(z, op, v, grid, out);
}

bool eddy_tfl_broadcast_to_run_time(eddy_tfl_t *z, const eddy_op_t *op,
                                    eddy_value_t *x, eddy_value_t *s,
                                    eddy_value_t **out,
                                    eddy_status_t *status) {
  *status = NULL;
  if (!known_length(s->type))
    return false;
  eddy_value_t *grid = NULL;
  *status = shape_grid(z, op, s, &grid);
  if (!*status)
    *status = broadcast_like(z, op, x, grid, out);
  return true;
}

/// Fill(shape, value); Empty(shape) is a Fill with zeros of its dtype (its
/// elements are unspecified in TensorFlow).
static eddy_status_t lower_fill(eddy_tfl_t *z, const eddy_op_t *op,
                                bool empty) {
  int64_t dims[MAXR];
  size_t rank = 0;
  eddy_value_t *r = NULL, *v = NULL, *shape = tfl_in(z, op, 0);
  if (empty) {
    eddy_dtype_t dt;
    if (!eddy_tfl_attr_dtype(op, "dtype", &dt))
      return eddy_tfl_error(op, "attribute 'dtype' is not an eddy dtype");
    EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, dt, 0, NULL, 0.0, &v));
  } else {
    v = tfl_in(z, op, 1);
  }
  if (!target_shape(z, op, shape, dims, &rank)) {
    eddy_value_t *y = shape_source(shape);
    if (y)
      EDDY_RETURN_IF_ERROR(broadcast_like(z, op, v, y, &r));
    else
      EDDY_RETURN_IF_ERROR(fill_run_time(z, op, shape, v, &r));
    tfl_out1(z, op, r);
    return NULL;
  }
  EDDY_RETURN_IF_ERROR(
      attr_op(z, op, "core.broadcast_to", v, "shape", dims, rank, &r));
  tfl_out1(z, op, r);
  return NULL;
}

static eddy_status_t lower_like(eddy_tfl_t *z, const eddy_op_t *op,
                                double x) {
  eddy_value_t *v = tfl_in(z, op, 0), *r = NULL;
  if (v->type->kind == EDDY_TYPE_LIST && x == 0.0) {
    // TensorFlow's ZerosLike of a TensorList (or of an Optional, a list of
    // at most one item): zeros like each item, lists of lists included.
    eddy_op_t *o = NULL;
    EDDY_RETURN_IF_ERROR(eddy_tfl_build_typed(z, op, "tl.zeros_like", &v, 1,
                                              NULL, 0, &v->type, 1, &o));
    tfl_out1(z, op, eddy_ir_op_result(o, 0));
    return NULL;
  }
  if (v->type->kind == EDDY_TYPE_LIST &&
      v->type->elem->kind == EDDY_TYPE_TENSOR) {
    // A list of ones like each element: stack, ones, unstack (the
    // elements must all be set and of one shape).
    eddy_value_t *st = NULL, *zs = NULL, *c = NULL;
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "tl.stack", &v, 1, NULL, 0, &st));
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_splat(z, st->type->dtype, 0, NULL, x, &c));
    EDDY_RETURN_IF_ERROR(broadcast_like(z, op, c, st, &zs));
    eddy_op_t *o = NULL;
    EDDY_RETURN_IF_ERROR(eddy_tfl_build_typed(z, op, "tl.from_tensor", &zs,
                                              1, NULL, 0, &v->type, 1, &o));
    tfl_out1(z, op, eddy_ir_op_result(o, 0));
    return NULL;
  }
  if (v->type->kind == EDDY_TYPE_LIST)
    return eddy_tfl_error(op, "OnesLike of a list of lists or of an "
                              "Optional holding a list is not supported");
  if (v->type->kind != EDDY_TYPE_TENSOR)
    return eddy_tfl_error(op, "only tensors are supported");
  if (eddy_ir_type_is_static(v->type)) {
    EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, v->type->dtype, v->type->rank,
                                        v->type->dims, x, &r));
    tfl_out1(z, op, r);
    return NULL;
  }
  eddy_value_t *c = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, v->type->dtype, 0, NULL, x, &c));
  EDDY_RETURN_IF_ERROR(broadcast_like(z, op, c, v, &r));
  tfl_out1(z, op, r);
  return NULL;
}

/// Tile(x, m) with multiples known at run time only (their number and x's
/// rank n known): x reshaped to [1, x0, 1, x1, ...] is broadcast against a
/// tensor of shape [m0, 1, m1, 1, ...] (a core.range of m0 * m1 * ...
/// elements, reshaped), then reshaped to [m0 * x0, m1 * x1, ...].
static eddy_status_t tile_run_time(eddy_tfl_t *z, const eddy_op_t *op,
                                   eddy_value_t *x, eddy_value_t *m,
                                   eddy_value_t **out) {
  const eddy_type_t *mt = m->type, *xt = x->type;
  if (mt->kind != EDDY_TYPE_TENSOR || mt->rank != 1 || mt->dims[0] < 0 ||
      eddy_dtype_is_float(mt->dtype) || xt->kind != EDDY_TYPE_TENSOR ||
      xt->rank != mt->dims[0] || xt->rank > MAXR / 2)
    return eddy_tfl_error(op, "the multiples are not a constant, and their "
                              "number or the operand's rank is not known");
  int64_t n = xt->rank;
  if (n == 0) {
    *out = x;
    return NULL;
  }
  eddy_value_t *mi[MAXR / 2], *count = NULL, *zero = NULL, *one = NULL;
  for (int64_t i = 0; i < n; i++) {
    EDDY_RETURN_IF_ERROR(element(z, op, m, i, &mi[i]));
    EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, mi[i], EDDY_DT_I64, &mi[i]));
    if (i == 0) {
      count = mi[0];
      continue;
    }
    eddy_value_t *ops[2] = {count, mi[i]};
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "core.mul", ops, 2, NULL, 0, &count));
  }
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, 0, &zero));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, 1, &one));
  eddy_value_t *rops[3] = {zero, count, one}, *grid = NULL, *xr = NULL;
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build(z, op, "core.range", rops, 3, NULL, 0, &grid));
  int64_t gd[MAXR], xd[MAXR], from[MAXR], fd[MAXR / 2];
  eddy_value_t *gv[MAXR] = {NULL}, *fv[MAXR / 2] = {NULL};
  for (int64_t i = 0; i < n; i++) {
    gd[2 * i] = -1;
    gv[2 * i] = mi[i];
    gd[2 * i + 1] = 1;
    xd[2 * i] = 1;
    xd[2 * i + 1] = xt->dims[i];
    from[2 * i] = from[2 * i + 1] = i;
    eddy_value_t *xi = NULL;
    EDDY_RETURN_IF_ERROR(eddy_tfl_dim(z, op, x, i, &xi));
    eddy_value_t *ops[2] = {mi[i], xi};
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "core.mul", ops, 2, NULL, 0, &fv[i]));
    fd[i] = -1;
  }
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_reshape_dyn(z, op, grid, gd, (size_t)(2 * n), gv, &grid));
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_reshape_keep(z, op, x, xd, (size_t)(2 * n), from, &xr));
  EDDY_RETURN_IF_ERROR(broadcast_like(z, op, xr, grid, &xr));
  return eddy_tfl_reshape_dyn(z, op, xr, fd, (size_t)n, fv, out);
}

static eddy_status_t lower_tile(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_value_t *x = tfl_in(z, op, 0), *r = x;
  int64_t m[MAXR];
  int64_t n = eddy_tfl_const_ints(z, tfl_in(z, op, 1), m, MAXR);
  if (n < 0) {
    // Tile(x, Shape(y)) with x all ones: x broadcast like y (gradients of
    // reductions build this).
    eddy_value_t *y = shape_source(tfl_in(z, op, 1));
    if (y && all_ones(x->type, y->type->rank == EDDY_RANK_UNKNOWN
                                   ? x->type->rank
                                   : y->type->rank))
      EDDY_RETURN_IF_ERROR(broadcast_like(z, op, x, y, &r));
    else
      EDDY_RETURN_IF_ERROR(tile_run_time(z, op, x, tfl_in(z, op, 1), &r));
    tfl_out1(z, op, r);
    return NULL;
  }
  bool ident = true;
  for (int64_t i = 0; i < n; i++)
    ident = ident && m[i] == 1;
  if (ident) {
    tfl_out1(z, op, x);
    return NULL;
  }
  if (x->type->rank != n || n > MAXR / 2)
    return eddy_tfl_error(op, "the operand has rank %d and there are %d "
                              "multiples",
                          (int)x->type->rank, (int)n);
  if (!eddy_ir_type_is_static(x->type)) {
    // Dims known at run time only: as for run-time multiples.
    EDDY_RETURN_IF_ERROR(tile_run_time(z, op, x, tfl_in(z, op, 1), &r));
    tfl_out1(z, op, r);
    return NULL;
  }
  int64_t inter[MAXR], big[MAXR], fin[MAXR];
  for (int64_t i = 0; i < n; i++) {
    inter[2 * i] = 1;
    inter[2 * i + 1] = x->type->dims[i];
    big[2 * i] = m[i];
    big[2 * i + 1] = x->type->dims[i];
    if (m[i] < 0 || !eddy_checked_mul_i64(m[i], x->type->dims[i], &fin[i]))
      return eddy_tfl_error(op, "multiple %lld is out of range",
                            (long long)m[i]);
  }
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, r, inter, (size_t)(2 * n), &r));
  EDDY_RETURN_IF_ERROR(
      attr_op(z, op, "core.broadcast_to", r, "shape", big, (size_t)(2 * n), &r));
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, r, fin, (size_t)n, &r));
  tfl_out1(z, op, r);
  return NULL;
}

/// v with a new dim of size 1 at axis (in [-rank-1, rank]).
static eddy_status_t expand(eddy_tfl_t *z, const eddy_op_t *op,
                            eddy_value_t *v, int64_t axis,
                            eddy_value_t **out) {
  int64_t dims[MAXR + 1], from[MAXR + 1];
  if (!tfl_dims_of(v->type, dims) || v->type->rank >= MAXR)
    return eddy_tfl_error(op, "the operand's rank is unknown");
  int64_t r = v->type->rank;
  if (axis < 0)
    axis += r + 1;
  if (axis < 0 || axis > r)
    return eddy_tfl_error(op, "axis %lld is out of range", (long long)axis);
  for (int64_t i = 0; i <= r; i++)
    from[i] = i < axis ? i : i - 1;
  memmove(dims + axis + 1, dims + axis, (size_t)(r - axis) * sizeof(*dims));
  dims[axis] = 1;
  return eddy_tfl_reshape_keep(z, op, v, dims, (size_t)r + 1, from, out);
}

static eddy_status_t lower_pack(eddy_tfl_t *z, const eddy_op_t *op) {
  if (op->num_operands > 0 && tfl_in(z, op, 0)->type->kind == EDDY_TYPE_LIST)
    return eddy_tfl_lower_list_pack(z, op);
  int64_t axis = eddy_ir_op_attr_int(op, "axis", 0);
  eddy_value_t *vals[256];
  size_t n = 0;
  for (uint32_t i = 0; i < op->num_operands && n < 256; i++) {
    eddy_value_t *v = tfl_in(z, op, i);
    if (v->type->kind == EDDY_TYPE_TOKEN)
      continue;
    EDDY_RETURN_IF_ERROR(expand(z, op, v, axis, &vals[n++]));
  }
  if (n == 0)
    return eddy_tfl_error(op, "nothing to pack");
  eddy_value_t *r = vals[0];
  if (n > 1) {
    int64_t rk = vals[0]->type->rank;
    eddy_named_attr_t a = eddy_ir_named_attr(
        z->ctx, "axis",
        eddy_ir_int_attr_get(z->ctx, axis < 0 ? axis + rk : axis,
                             EDDY_DT_I64));
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "core.concat", vals, n, &a, 1, &r));
  }
  tfl_out1(z, op, r);
  return NULL;
}

static eddy_status_t lower_unpack(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_value_t *x = tfl_in(z, op, 0);
  if (x->type->kind == EDDY_TYPE_LIST)
    return eddy_tfl_lower_list_unpack(z, op);
  int64_t axis = eddy_ir_op_attr_int(op, "axis", 0);
  int64_t num = op->num_results;
  int64_t dims[MAXR], from[MAXR];
  if (!tfl_dims_of(x->type, dims))
    return eddy_tfl_error(op, "the operand's rank is unknown");
  int64_t rk = x->type->rank;
  if (axis < 0)
    axis += rk;
  if (axis < 0 || axis >= rk)
    return eddy_tfl_error(op, "axis out of range");
  eddy_named_attr_t a[2] = {
      eddy_ir_named_attr(z->ctx, "axis",
                         eddy_ir_int_attr_get(z->ctx, axis, EDDY_DT_I64)),
      eddy_ir_named_attr(z->ctx, "num_splits",
                         eddy_ir_int_attr_get(z->ctx, num, EDDY_DT_I64))};
  eddy_op_t *s = NULL;
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build_typed(z, op, "core.split", &x, 1, a, 2, NULL, 0, &s));
  memmove(dims + axis, dims + axis + 1, (size_t)(rk - axis - 1) * sizeof(*dims));
  for (int64_t i = 0; i + 1 < rk; i++)
    from[i] = i < axis ? i : i + 1;
  for (int64_t i = 0; i < num && (uint32_t)i < s->num_results; i++) {
    eddy_value_t *r = NULL;
    EDDY_RETURN_IF_ERROR(eddy_tfl_reshape_keep(z, op, eddy_ir_op_result(s, i),
                                               dims, (size_t)rk - 1, from,
                                               &r));
    eddy_tfl_set(z, &op->results[i], r);
  }
  return NULL;
}

static eddy_status_t lower_concat(eddy_tfl_t *z, const eddy_op_t *op) {
  size_t n = op->num_operands - 1;
  int64_t axis = 0;
  if (eddy_tfl_const_ints(z, tfl_in(z, op, n), &axis, 1) != 1)
    return eddy_tfl_error(op, "the axis is not a constant");
  eddy_value_t *vals[256];
  size_t k = 0;
  for (size_t i = 0; i < n && k < 256; i++)
    vals[k++] = tfl_in(z, op, i);
  eddy_named_attr_t a = eddy_ir_named_attr(
      z->ctx, "axis", eddy_ir_int_attr_get(z->ctx, axis, EDDY_DT_I64));
  eddy_value_t *r = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.concat", vals, k, &a, 1, &r));
  tfl_out1(z, op, r);
  return NULL;
}

static eddy_status_t lower_split(eddy_tfl_t *z, const eddy_op_t *op) {
  int64_t axis = 0;
  if (eddy_tfl_const_ints(z, tfl_in(z, op, 0), &axis, 1) != 1)
    return eddy_tfl_error(op, "the axis is not a constant");
  eddy_value_t *x = tfl_in(z, op, 1);
  eddy_named_attr_t a[2] = {
      eddy_ir_named_attr(z->ctx, "axis",
                         eddy_ir_int_attr_get(z->ctx, axis, EDDY_DT_I64)),
      eddy_ir_named_attr(
          z->ctx, "num_splits",
          eddy_ir_int_attr_get(z->ctx, op->num_results, EDDY_DT_I64))};
  eddy_op_t *s = NULL;
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build_typed(z, op, "core.split", &x, 1, a, 2, NULL, 0, &s));
  for (uint32_t i = 0; i < op->num_results && i < s->num_results; i++)
    eddy_tfl_set(z, &op->results[i], eddy_ir_op_result(s, i));
  return NULL;
}

static eddy_status_t lower_squeeze(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_value_t *x = tfl_in(z, op, 0), *r = NULL;
  int64_t dims[MAXR], out[MAXR], sq[MAXR], from[MAXR];
  if (!tfl_dims_of(x->type, dims))
    return eddy_tfl_error(op, "the operand's rank is unknown");
  int64_t rk = x->type->rank;
  int64_t ns = eddy_ir_attr_as_i64_array(eddy_ir_op_attr(op, "squeeze_dims"),
                                         sq, MAXR);
  bool drop[MAXR] = {0};
  if (ns <= 0) {
    for (int64_t i = 0; i < rk; i++)
      drop[i] = dims[i] == 1;
  } else {
    for (int64_t i = 0; i < ns; i++) {
      int64_t a = sq[i] < 0 ? sq[i] + rk : sq[i];
      if (a < 0 || a >= rk)
        return eddy_tfl_error(op, "squeeze dimension out of range");
      drop[a] = true;
    }
  }
  size_t n = 0;
  for (int64_t i = 0; i < rk; i++)
    if (!drop[i]) {
      from[n] = i;
      out[n++] = dims[i];
    }
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape_keep(z, op, x, out, n, from, &r));
  tfl_out1(z, op, r);
  return NULL;
}

static eddy_status_t lower_expand_dims(eddy_tfl_t *z, const eddy_op_t *op) {
  int64_t axis = 0;
  if (eddy_tfl_const_ints(z, tfl_in(z, op, 1), &axis, 1) != 1)
    return eddy_tfl_error(op, "the axis is not a constant");
  eddy_value_t *r = NULL;
  EDDY_RETURN_IF_ERROR(expand(z, op, tfl_in(z, op, 0), axis, &r));
  tfl_out1(z, op, r);
  return NULL;
}

static eddy_status_t lower_range(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_dtype_t dt = EDDY_DT_I32;
  eddy_tfl_attr_dtype(op, "Tidx", &dt);
  const eddy_attr_t *a[3];
  for (int i = 0; i < 3; i++) {
    a[i] = eddy_tfl_const(z, tfl_in(z, op, (size_t)i));
    if (!a[i])
      return eddy_tfl_lower_range_dynamic(z, op);
  }
  double st = eddy_ir_dense_attr_f64(a[0], 0);
  double lim = eddy_ir_dense_attr_f64(a[1], 0);
  double dl = eddy_ir_dense_attr_f64(a[2], 0);
  if (dl == 0)
    return eddy_tfl_error(op, "delta is 0");
  double cnt = (lim - st) / dl;
  int64_t n = cnt <= 0 ? 0 : (int64_t)cnt + ((double)(int64_t)cnt < cnt);
  if (n > ((int64_t)1 << 24))
    return eddy_tfl_error(op, "the range is too long to be a constant");
  double *v = calloc((size_t)n + 1, sizeof(*v));
  if (!v)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  for (int64_t i = 0; i < n; i++)
    v[i] = st + (double)i * dl;
  const eddy_type_t *t = eddy_ir_tensor_type_get(z->ctx, dt, 1, &n);
  eddy_value_t *r = NULL;
  eddy_status_t s = n == 0 ? eddy_ir_build_constant(
                                 &z->b,
                                 eddy_ir_dense_attr_get(z->ctx, t, v, 0), &r)
                           : eddy_ir_build_constant(
                                 &z->b,
                                 eddy_ir_dense_attr_from_f64(z->ctx, t, v,
                                                             (size_t)n),
                                 &r);
  free(v);
  EDDY_RETURN_IF_ERROR(s);
  tfl_out1(z, op, r);
  return NULL;
}

static eddy_status_t lower_gather(eddy_tfl_t *z, const eddy_op_t *op) {
  int64_t axis = 0;
  if (eddy_tfl_const_ints(z, tfl_in(z, op, 2), &axis, 1) != 1)
    return eddy_tfl_error(op, "the axis is not a constant");
  if (eddy_ir_op_attr_int(op, "batch_dims", 0) != 0)
    return eddy_tfl_error(op, "batch_dims is not supported");
  eddy_value_t *ops[2] = {tfl_in(z, op, 0), tfl_in(z, op, 1)}, *r = NULL;
  eddy_named_attr_t a = eddy_ir_named_attr(
      z->ctx, "axis", eddy_ir_int_attr_get(z->ctx, axis, EDDY_DT_I64));
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.gather", ops, 2, &a, 1, &r));
  tfl_out1(z, op, r);
  return NULL;
}

static eddy_status_t lower_transpose(eddy_tfl_t *z, const eddy_op_t *op) {
  int64_t perm[MAXR];
  int64_t n = eddy_tfl_const_ints(z, tfl_in(z, op, 1), perm, MAXR);
  if (n < 0)
    return eddy_tfl_error(op, "the permutation is not a constant");
  eddy_value_t *r = NULL;
  EDDY_RETURN_IF_ERROR(attr_op(z, op, "core.transpose", tfl_in(z, op, 0),
                               "perm", perm, (size_t)n, &r));
  tfl_out1(z, op, r);
  return NULL;
}

/// BroadcastGradientArgs(s0, s1) of constant shapes: the axes each input
/// was broadcast along, as constants. Of shapes known at run time only,
/// the axes are not made: each output must be the axes of a Sum, which
/// eddy_tfl_sum_broadcast lowers from the shapes themselves.
static eddy_status_t lower_bga(eddy_tfl_t *z, const eddy_op_t *op) {
  int64_t s[2][MAXR], n[2], red[2][MAXR], nr[2] = {0, 0};
  for (int k = 0; k < 2; k++)
    n[k] = eddy_tfl_const_ints(z, tfl_in(z, op, (size_t)k), s[k], MAXR);
  if (n[0] < 0 || n[1] < 0) {
    for (uint32_t k = 0; k < 2; k++)
      for (eddy_use_t *u = op->results[k].uses; u; u = u->next)
        if (!eddy_ir_op_is(u->owner, "tf.Sum") || u->index != 1)
          return eddy_tfl_error(
              op, "the shapes are not constants, and output %u is read "
                  "by node '%s', which is not a Sum over these axes",
              k,
              u->owner->loc && u->owner->loc->file
                  ? u->owner->loc->file->str
                  : "?");
    eddy_tfl_set(z, &op->results[0], NULL);
    eddy_tfl_set(z, &op->results[1], NULL);
    return NULL;
  }
  int64_t rk = n[0] > n[1] ? n[0] : n[1];
  for (int64_t i = 0; i < rk; i++) {
    int64_t d[2];
    for (int k = 0; k < 2; k++) {
      int64_t j = i - (rk - n[k]);
      d[k] = j < 0 ? 1 : s[k][j];
    }
    if (d[0] != d[1] && d[0] != 1 && d[1] != 1)
      return eddy_tfl_error(op, "the shapes are not broadcast-compatible");
    for (int k = 0; k < 2; k++)
      if (d[k] == 1 && (d[1 - k] != 1 || i - (rk - n[k]) < 0))
        red[k][nr[k]++] = i;
  }
  eddy_dtype_t dt = EDDY_DT_I32;
  eddy_tfl_attr_dtype(op, "T", &dt);
  for (int k = 0; k < 2; k++) {
    eddy_value_t *r = NULL;
    int64_t len = nr[k];
    EDDY_RETURN_IF_ERROR(const_i64(z, dt, 1, &len, red[k], (size_t)len, &r));
    eddy_tfl_set(z, &op->results[k], r);
  }
  return NULL;
}

eddy_status_t eddy_tfl_lower_shape_op(eddy_tfl_t *z, const eddy_op_t *op,
                                      bool *handled) {
  const char *t = op->name->str + 3;
  *handled = true;
  if (strcmp(t, "Reshape") == 0)
    return lower_reshape(z, op);
  if (strcmp(t, "Shape") == 0 || strcmp(t, "Size") == 0 ||
      strcmp(t, "Rank") == 0)
    return lower_shape(z, op, t);
  if (strcmp(t, "ShapeN") == 0)
    return lower_shape_n(z, op);
  if (strcmp(t, "Fill") == 0 || strcmp(t, "Empty") == 0)
    return lower_fill(z, op, t[0] == 'E');
  if (strcmp(t, "ZerosLike") == 0)
    return lower_like(z, op, 0.0);
  if (strcmp(t, "OnesLike") == 0)
    return lower_like(z, op, 1.0);
  if (strcmp(t, "Tile") == 0)
    return lower_tile(z, op);
  if (strcmp(t, "Pack") == 0)
    return lower_pack(z, op);
  if (strcmp(t, "Unpack") == 0)
    return lower_unpack(z, op);
  if (strcmp(t, "ConcatV2") == 0)
    return lower_concat(z, op);
  if (strcmp(t, "Split") == 0)
    return lower_split(z, op);
  if (strcmp(t, "ExpandDims") == 0)
    return lower_expand_dims(z, op);
  if (strcmp(t, "Squeeze") == 0)
    return lower_squeeze(z, op);
  if (strcmp(t, "StridedSlice") == 0)
    return eddy_tfl_lower_strided_slice(z, op);
  if (strcmp(t, "StridedSliceGrad") == 0)
    return eddy_tfl_lower_strided_slice_grad(z, op);
  if (strcmp(t, "Range") == 0)
    return lower_range(z, op);
  if (strcmp(t, "GatherV2") == 0)
    return lower_gather(z, op);
  if (strcmp(t, "Transpose") == 0)
    return lower_transpose(z, op);
  if (strcmp(t, "Slice") == 0)
    return eddy_tfl_lower_slice(z, op);
  if (strcmp(t, "Pad") == 0 || strcmp(t, "PadV2") == 0)
    return eddy_tfl_lower_pad(z, op);
  if (strcmp(t, "MirrorPad") == 0 || strcmp(t, "MirrorPadGrad") == 0)
    return eddy_tfl_lower_mirror_pad(z, op);
  if (strcmp(t, "BroadcastGradientArgs") == 0)
    return lower_bga(z, op);
  *handled = false;
  return NULL;
}

eddy_value_t *eddy_tfl_shape_source(eddy_value_t *v) { return shape_source(v); }

eddy_status_t eddy_tfl_shape_grid(eddy_tfl_t *z, const eddy_op_t *op,
                                  eddy_value_t *s, eddy_value_t **out) {
  if (!known_length(s->type))
    return eddy_tfl_error(op, "the shape (operand 0) must be a 1-D integer "
                              "tensor of known length");
  return shape_grid(z, op, s, out);
}

eddy_status_t eddy_tfl_element(eddy_tfl_t *z, const eddy_op_t *op,
                               eddy_value_t *s, int64_t i,
                               eddy_value_t **out) {
  return element(z, op, s, i, out);
}

eddy_status_t eddy_tfl_broadcast_like(eddy_tfl_t *z, const eddy_op_t *op,
                                      eddy_value_t *x, eddy_value_t *y,
                                      eddy_value_t **out) {
  return broadcast_like(z, op, x, y, out);
}

eddy_status_t eddy_tfl_reduce(eddy_tfl_t *z, const eddy_op_t *op,
                              const char *name, eddy_value_t *x,
                              const int64_t *axes, size_t n, bool keep,
                              eddy_value_t **out) {
  // Without keepdims, two or more dynamic dims left: reduce with keepdims
  // and drop the reduced dims with a reshape that names the kept ones, so
  // that autodiff can put the reduced dims back.
  const eddy_type_t *t = x->type;
  int64_t dims[MAXR], from[MAXR];
  size_t nk = 0, ndyn = 0;
  bool reshape = !keep && t->kind == EDDY_TYPE_TENSOR &&
                 t->rank != EDDY_RANK_UNKNOWN && t->rank <= MAXR;
  for (int32_t i = 0; reshape && i < t->rank; i++) {
    bool reduced = false;
    for (size_t k = 0; k < n; k++)
      reduced = reduced || axes[k] == i || axes[k] + t->rank == i;
    if (reduced)
      continue;
    ndyn += t->dims[i] < 0;
    dims[nk] = t->dims[i];
    from[nk++] = i;
  }
  reshape = reshape && ndyn >= 2;
  eddy_named_attr_t a[2] = {
      eddy_ir_named_attr(z->ctx, "axes",
                         eddy_ir_i64_array_attr_get(z->ctx, axes, n)),
      eddy_ir_named_attr(z->ctx, "keepdims",
                         eddy_ir_bool_attr_get(z->ctx, keep || reshape))};
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, name, &x, 1, a, 2, out));
  if (reshape)
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_reshape_keep(z, op, *out, dims, nk, from, out));
  return NULL;
}

/// core.reduce_sum of x over axes[0..n).
static eddy_status_t sum_axes(eddy_tfl_t *z, const eddy_op_t *op,
                              eddy_value_t *x, const int64_t *axes, size_t n,
                              bool keep, eddy_value_t **out) {
  return eddy_tfl_reduce(z, op, "core.reduce_sum", x, axes, n, keep, out);
}

/// ctl.if(c) { reduce_sum(x, [axis], keepdims) } else { x }, built at z's
/// insertion point.
static eddy_status_t sum_axis_if(eddy_tfl_t *z, const eddy_op_t *op,
                                 eddy_value_t *c, eddy_value_t *x,
                                 int64_t axis, eddy_value_t **out) {
  int64_t d[MAXR];
  for (int32_t i = 0; i < x->type->rank; i++)
    d[i] = x->type->dims[i];
  d[axis] = EDDY_DIM_DYNAMIC;
  const eddy_type_t *t =
      eddy_ir_tensor_type_get(z->ctx, x->type->dtype, x->type->rank, d);
  eddy_op_state_t s = {.name = "ctl.if",
                       .operands = &c,
                       .num_operands = 1,
                       .result_types = &t,
                       .num_results = 1,
                       .num_regions = 2,
                       .loc = op->loc};
  eddy_op_t *ifop = NULL, *y = NULL;
  z->b.loc = op->loc;
  EDDY_RETURN_IF_ERROR(eddy_ir_build(&z->b, &s, &ifop));
  eddy_builder_t saved = z->b;
  eddy_value_t *r = NULL;
  eddy_ir_builder_set_end(&z->b, eddy_ir_region_add_block(&ifop->regions[0]));
  eddy_status_t st = sum_axes(z, op, x, &axis, 1, true, &r);
  if (!st)
    st = eddy_tfl_build_typed(z, op, "ctl.yield", &r, 1, NULL, 0, NULL, 0, &y);
  if (!st) {
    eddy_ir_builder_set_end(&z->b,
                            eddy_ir_region_add_block(&ifop->regions[1]));
    st = eddy_tfl_build_typed(z, op, "ctl.yield", &x, 1, NULL, 0, NULL, 0, &y);
  }
  z->b = saved;
  *out = eddy_ir_op_result(ifop, 0);
  return st;
}

/// The shape a BroadcastGradientArgs input gives: its length, its static
/// dims (-1 where known at run time only), and where to read the others:
/// the tensor it is the Shape of, or the shape vector itself (a constant,
/// or a run-time vector of known length: a shape pushed on a stack in a
/// loop and popped in its gradient).
typedef struct bcast_shape {
  int32_t rank;
  int64_t dims[MAXR];
  eddy_value_t *of;  ///< the tensor it is the Shape of, or NULL
  eddy_value_t *vec; ///< else the shape vector
} bcast_shape_t;

static bool bcast_shape(eddy_tfl_t *z, eddy_value_t *s, bcast_shape_t *out) {
  eddy_value_t *t = shape_source(s);
  out->of = t;
  out->vec = s;
  if (t) {
    if (t->type->kind != EDDY_TYPE_TENSOR ||
        t->type->rank == EDDY_RANK_UNKNOWN || t->type->rank > MAXR)
      return false;
    out->rank = t->type->rank;
    for (int32_t i = 0; i < out->rank; i++)
      out->dims[i] = t->type->dims[i];
    return true;
  }
  int64_t n = eddy_tfl_const_ints(z, s, out->dims, MAXR);
  if (n >= 0) {
    out->rank = (int32_t)n;
    return true;
  }
  const eddy_type_t *st = s->type;
  if (st->kind != EDDY_TYPE_TENSOR || st->rank != 1 || st->dims[0] < 0 ||
      st->dims[0] > MAXR || eddy_dtype_is_float(st->dtype))
    return false;
  out->rank = (int32_t)st->dims[0];
  for (int32_t i = 0; i < out->rank; i++)
    out->dims[i] = EDDY_DIM_DYNAMIC;
  return true;
}

eddy_status_t eddy_tfl_sum_broadcast(eddy_tfl_t *z, const eddy_op_t *op,
                                     const eddy_op_t *bga, uint32_t k,
                                     eddy_value_t **out) {
  bool keep = eddy_ir_op_attr_bool(op, "keep_dims", false);
  eddy_value_t *x = tfl_in(z, op, 0);
  bcast_shape_t bs;
  const eddy_type_t *xt = x->type;
  if (!bcast_shape(z, eddy_tfl_get(z, eddy_ir_op_operand(bga, k)), &bs) ||
      xt->kind != EDDY_TYPE_TENSOR || xt->rank == EDDY_RANK_UNKNOWN ||
      xt->rank < bs.rank || xt->rank > MAXR)
    return eddy_tfl_error(
        op, "the axes are BroadcastGradientArgs of shapes known at run time "
            "only, and input %u of node '%s' is neither the Shape of a "
            "tensor of known rank nor a shape vector of known length that "
            "the summed tensor broadcasts to",
        k, bga->loc && bga->loc->file ? bga->loc->file->str : "?");
  // Without keep_dims the sum's rank depends on the shapes; the result here
  // has t's rank, which only a Reshape (to t's shape) may read.
  for (eddy_use_t *u = op->results[0].uses; u && !keep; u = u->next)
    if (!eddy_ir_op_is(u->owner, "tf.Reshape") || u->index != 0)
      return eddy_tfl_error(
          op, "the axes are BroadcastGradientArgs of shapes known at run "
              "time only, and the sum is read by node '%s', not only by a "
              "Reshape",
          u->owner->loc && u->owner->loc->file ? u->owner->loc->file->str
                                               : "?");
  // The broadcast of the two shapes may cover only x's leading dims: the
  // gradients of batched matrix ops (MatrixTriangularSolve) broadcast the
  // batch shapes, s[:-2], and sum the matrices' gradients over them.
  bcast_shape_t other;
  int64_t span = xt->rank;
  if (bcast_shape(z, eddy_tfl_get(z, eddy_ir_op_operand(bga, 1 - k)),
                  &other)) {
    int64_t bl = other.rank > bs.rank ? other.rank : bs.rank;
    if (bl <= span)
      span = bl;
  }
  int64_t lead = span - bs.rank, axes[MAXR];
  for (int64_t i = 0; i < lead; i++)
    axes[i] = i;
  if (lead > 0)
    EDDY_RETURN_IF_ERROR(sum_axes(z, op, x, axes, (size_t)lead, keep, &x));
  int64_t off = keep ? lead : 0;
  for (int32_t i = 0; i < bs.rank; i++) {
    int64_t sd = bs.dims[i], vd = x->type->dims[i + off];
    if (vd == 1 || (sd >= 0 && sd != 1))
      continue; // nothing to sum, or the dims agree
    int64_t axis = i + off;
    if (sd == 1) {
      EDDY_RETURN_IF_ERROR(sum_axes(z, op, x, &axis, 1, true, &x));
      continue;
    }
    // The dim is known at run time only: summed when it is 1.
    eddy_value_t *d = NULL, *one = NULL, *c = NULL;
    if (bs.of) {
      EDDY_RETURN_IF_ERROR(eddy_tfl_dim(z, op, bs.of, i, &d));
    } else {
      EDDY_RETURN_IF_ERROR(element(z, op, bs.vec, i, &d));
      EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, d, EDDY_DT_I64, &d));
    }
    EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, 1, &one));
    eddy_value_t *ops[2] = {d, one};
    EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.eq", ops, 2, NULL, 0, &c));
    EDDY_RETURN_IF_ERROR(sum_axis_if(z, op, c, x, axis, &x));
  }
  *out = x;
  return NULL;
}

/// Shape functions of the core dialect, part 1: shared helpers, numpy
/// broadcasting, elementwise ops, cast, matmul and reductions. The
/// data-movement ops are in core_shape_data.c.
///
/// Shape functions also enforce the dtype rules, because they run whenever
/// an op is built without result types and again from the verifier.
#include "dialects/core/core_internal.h"
#include "dialects/dialects_internal.h"

#include <stdio.h>
#include <string.h>

/// ---- Public helpers --------------------------------------------------------

bool eddy_core_broadcast_dims(const int64_t *a, int32_t rank_a,
                              const int64_t *b, int32_t rank_b, int64_t *out) {
  int32_t rank = rank_a > rank_b ? rank_a : rank_b;
  for (int32_t i = 0; i < rank; i++) {
    /* Align at the right: missing leading dims act as 1. */
    int32_t ia = i - (rank - rank_a), ib = i - (rank - rank_b);
    int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da == db || db == 1)
      out[i] = da;
    else if (da == 1)
      out[i] = db;
    else if (da == EDDY_DIM_DYNAMIC)
      out[i] = db; /* must be db (or 1) at run time; the result is db */
    else if (db == EDDY_DIM_DYNAMIC)
      out[i] = da;
    else
      return false;
  }
  return true;
}

const eddy_type_t *eddy_core_broadcast_type(eddy_ctx_t *ctx,
                                            const eddy_type_t *a,
                                            const eddy_type_t *b,
                                            eddy_dtype_t dt) {
  if (!eddy_ir_type_is_tensor(a) || !eddy_ir_type_is_tensor(b))
    return NULL;
  if (a->rank == EDDY_RANK_UNKNOWN || b->rank == EDDY_RANK_UNKNOWN)
    return eddy_ir_tensor_type_get(ctx, dt, EDDY_RANK_UNKNOWN, NULL);
  if (a->rank > EDDY_CORE_MAX_RANK || b->rank > EDDY_CORE_MAX_RANK)
    return NULL;
  int64_t dims[EDDY_CORE_MAX_RANK];
  if (!eddy_core_broadcast_dims(a->dims, a->rank, b->dims, b->rank, dims))
    return NULL;
  int32_t rank = a->rank > b->rank ? a->rank : b->rank;
  return eddy_ir_tensor_type_get(ctx, dt, rank, dims);
}

bool eddy_core_normalize_axis(int64_t axis, int64_t rank, int64_t *out) {
  if (axis < -rank || axis >= rank)
    return false;
  *out = axis < 0 ? axis + rank : axis;
  return true;
}

/// ---- Internal helpers ------------------------------------------------------

const char *eddy_core_ints_str(char *buf, size_t cap, const int64_t *v,
                               int32_t n) {
  size_t len = (size_t)snprintf(buf, cap, "[");
  for (int32_t i = 0; i < n && len < cap; i++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%lld", i ? ", " : "",
                            (long long)v[i]);
  if (len < cap)
    snprintf(buf + len, cap - len, "]");
  return buf;
}

void eddy_core_push(eddy_infer_ctx_t *ic, eddy_dtype_t dt, int32_t rank,
                    const int64_t *dims) {
  eddy_ir_infer_push(ic, eddy_ir_tensor_type_get(ic->ctx, dt, rank, dims));
}

eddy_status_t eddy_core_check_operands(eddy_infer_ctx_t *ic) {
  const eddy_op_def_t *d = ic->def;
  if (d->num_operands == EDDY_VARIADIC) {
    if (ic->num_operands < (size_t)d->min_operands)
      return eddy_ir_infer_error(
          ic, "expected at least %d operand%s, got %zu", d->min_operands,
          d->min_operands == 1 ? "" : "s", ic->num_operands);
  } else if (ic->num_operands != (size_t)d->num_operands) {
    return eddy_ir_infer_error(ic, "expected %d operand%s, got %zu",
                               d->num_operands, d->num_operands == 1 ? "" : "s",
                               ic->num_operands);
  }
  for (size_t i = 0; i < ic->num_operands; i++) {
    const eddy_type_t *t = ic->operand_types[i];
    if (!t)
      return eddy_ir_infer_error(ic, "operand #%zu has no type", i);
    if (!eddy_ir_type_is_tensor(t)) {
      eddy_tt_t tt = {0};
      eddy_status_t st = eddy_ir_infer_error(
          ic, "operand #%zu must be a tensor, got %s", i, eddy_tt(&tt, t));
      eddy_tt_free(&tt);
      return st;
    }
    if (t->rank > EDDY_CORE_MAX_RANK)
      return eddy_ir_infer_error(ic,
                                 "operand #%zu has rank %d, above the "
                                 "supported maximum %d",
                                 i, (int)t->rank, EDDY_CORE_MAX_RANK);
  }
  return NULL;
}

static unsigned core_dtype_class(eddy_dtype_t dt) {
  if (eddy_dtype_is_float(dt))
    return EDDY_CORE_DT_FLOAT;
  if (eddy_dtype_is_int(dt))
    return EDDY_CORE_DT_INT;
  return EDDY_CORE_DT_BOOL;
}

static const char *core_class_name(unsigned classes) {
  switch (classes) {
  case EDDY_CORE_DT_FLOAT:
    return "a float dtype (f16, bf16, f32, f64)";
  case EDDY_CORE_DT_INT:
    return "an integer dtype (i8, i32, i64)";
  case EDDY_CORE_DT_BOOL:
    return "dtype i1";
  case EDDY_CORE_DT_NUMERIC:
    return "a numeric dtype (f16, bf16, f32, f64, i8, i32, i64)";
  default:
    return "a tensor dtype";
  }
}

eddy_status_t eddy_core_check_dtype(eddy_infer_ctx_t *ic, size_t i,
                                    unsigned classes) {
  const eddy_type_t *t = ic->operand_types[i];
  if (core_dtype_class(t->dtype) & classes)
    return NULL;
  eddy_tt_t tt = {0};
  eddy_status_t st =
      eddy_ir_infer_error(ic, "operand #%zu must have %s, got %s", i,
                          core_class_name(classes), eddy_tt(&tt, t));
  eddy_tt_free(&tt);
  return st;
}

eddy_status_t eddy_core_check_same_dtype(eddy_infer_ctx_t *ic, size_t i,
                                         size_t j) {
  const eddy_type_t *a = ic->operand_types[i], *b = ic->operand_types[j];
  if (a->dtype == b->dtype)
    return NULL;
  eddy_tt_t tt = {0};
  eddy_status_t st = eddy_ir_infer_error(
      ic, "operands must have the same dtype, got %s and %s", eddy_tt(&tt, a),
      eddy_tt(&tt, b));
  eddy_tt_free(&tt);
  return st;
}

eddy_status_t eddy_core_attr_int(eddy_infer_ctx_t *ic, const char *name,
                                 bool optional, int64_t dflt, int64_t *out) {
  const eddy_attr_t *a = eddy_ir_infer_attr(ic, name);
  if (!a) {
    if (optional) {
      *out = dflt;
      return NULL;
    }
    return eddy_ir_infer_error(ic, "requires attribute '%s' (integer)", name);
  }
  if (a->kind != EDDY_ATTR_INT)
    return eddy_ir_infer_error(ic, "attribute '%s' must be an integer", name);
  *out = a->u.i;
  return NULL;
}

eddy_status_t eddy_core_attr_ints(eddy_infer_ctx_t *ic, const char *name,
                                  bool optional, int64_t *out,
                                  int32_t *out_len) {
  const eddy_attr_t *a = eddy_ir_infer_attr(ic, name);
  if (!a) {
    if (optional) {
      *out_len = -1;
      return NULL;
    }
    return eddy_ir_infer_error(ic,
                               "requires attribute '%s' (array of "
                               "integers)",
                               name);
  }
  int64_t n = eddy_ir_attr_as_i64_array(a, out, EDDY_CORE_MAX_RANK);
  if (n < 0)
    return eddy_ir_infer_error(ic,
                               "attribute '%s' must be an array of "
                               "integers",
                               name);
  if (n > EDDY_CORE_MAX_RANK)
    return eddy_ir_infer_error(ic,
                               "attribute '%s' has %lld entries, above "
                               "the supported maximum %d",
                               name, (long long)n, EDDY_CORE_MAX_RANK);
  *out_len = (int32_t)n;
  return NULL;
}

eddy_status_t eddy_core_attr_bool(eddy_infer_ctx_t *ic, const char *name,
                                  bool dflt, bool *out) {
  const eddy_attr_t *a = eddy_ir_infer_attr(ic, name);
  if (!a) {
    *out = dflt;
    return NULL;
  }
  if (a->kind != EDDY_ATTR_BOOL)
    return eddy_ir_infer_error(ic, "attribute '%s' must be a bool", name);
  *out = a->u.b;
  return NULL;
}

/// Broadcasts a and b into *out (dtype dt); the error names the op and
/// both types.
static eddy_status_t core_broadcast2(eddy_infer_ctx_t *ic, const eddy_type_t *a,
                                     const eddy_type_t *b, eddy_dtype_t dt,
                                     const eddy_type_t **out) {
  *out = eddy_core_broadcast_type(ic->ctx, a, b, dt);
  if (*out)
    return NULL;
  eddy_tt_t tt = {0};
  eddy_status_t st =
      eddy_ir_infer_error(ic, "operands have incompatible shapes %s and %s",
                          eddy_tt(&tt, a), eddy_tt(&tt, b));
  eddy_tt_free(&tt);
  return st;
}

eddy_status_t eddy_core_axis_error(const eddy_infer_ctx_t *ic, const char *what,
                                   int64_t axis, const eddy_type_t *t) {
  eddy_tt_t tt = {0};
  eddy_status_t st =
      eddy_ir_infer_error(ic, "%s %lld is out of range for %s", what,
                          (long long)axis, eddy_tt(&tt, t));
  eddy_tt_free(&tt);
  return st;
}

/// ---- Constant --------------------------------------------------------------

eddy_status_t eddy_core_infer_constant(eddy_infer_ctx_t *ic) {
  EDDY_RETURN_IF_ERROR(eddy_core_check_operands(ic));
  const eddy_attr_t *v = eddy_ir_infer_attr(ic, "value");
  if (!v || v->kind != EDDY_ATTR_DENSE || !v->type)
    return eddy_ir_infer_error(ic, "requires a dense 'value' attribute");
  eddy_ir_infer_push(ic, v->type);
  return NULL;
}

eddy_status_t eddy_core_verify_dynamic_dim0(const eddy_op_t *op,
                                            int32_t rank, const char *what) {
  const eddy_type_t *t = op->results[0].type;
  if (eddy_ir_type_is_tensor(t) && t->rank == rank &&
      t->dims[0] != EDDY_DIM_DYNAMIC) {
    eddy_tt_t tt = {0};
    eddy_status_t st = eddy_ir_op_error(
        op, "result must be tensor<?x...>: %s is known at run time only, "
            "got %s",
        what, eddy_tt(&tt, t));
    eddy_tt_free(&tt);
    return st;
  }
  return NULL;
}

eddy_status_t eddy_core_verify_range(const eddy_op_t *op) {
  return eddy_core_verify_dynamic_dim0(op, 1, "the length");
}

eddy_status_t eddy_core_verify_iota(const eddy_op_t *op) {
  if (op->num_results != 1)
    return eddy_ir_op_error(op, "must have one result");
  const eddy_type_t *t = op->results[0].type;
  const eddy_attr_t *d = eddy_ir_op_attr(op, "dimension");
  eddy_tt_t tt = {0};
  eddy_status_t st = NULL;
  int64_t axis;
  if (!eddy_ir_type_is_tensor(t) || !eddy_ir_type_is_static(t))
    st = eddy_ir_op_error(op, "result must be a static tensor, got %s",
                          eddy_tt(&tt, t));
  else if (t->dtype == EDDY_DT_I1)
    st = eddy_ir_op_error(op, "result must have a numeric dtype, got %s",
                          eddy_tt(&tt, t));
  else if (!d || d->kind != EDDY_ATTR_INT)
    st = eddy_ir_op_error(op, "requires attribute 'dimension' (integer)");
  else if (!eddy_core_normalize_axis(d->u.i, t->rank, &axis))
    st = eddy_ir_op_error(op, "dimension %lld is out of range for %s",
                          (long long)d->u.i, eddy_tt(&tt, t));
  eddy_tt_free(&tt);
  return st;
}

/// ---- Elementwise -----------------------------------------------------------

static eddy_status_t core_infer_unary(eddy_infer_ctx_t *ic, unsigned classes) {
  EDDY_RETURN_IF_ERROR(eddy_core_check_operands(ic));
  EDDY_RETURN_IF_ERROR(eddy_core_check_dtype(ic, 0, classes));
  eddy_ir_infer_push(ic, ic->operand_types[0]);
  return NULL;
}

eddy_status_t eddy_core_infer_unary_float(eddy_infer_ctx_t *ic) {
  return core_infer_unary(ic, EDDY_CORE_DT_FLOAT);
}

eddy_status_t eddy_core_infer_unary_numeric(eddy_infer_ctx_t *ic) {
  return core_infer_unary(ic, EDDY_CORE_DT_NUMERIC);
}

eddy_status_t eddy_core_infer_identity(eddy_infer_ctx_t *ic) {
  return core_infer_unary(ic, EDDY_CORE_DT_ANY);
}

eddy_status_t eddy_core_infer_logical_not(eddy_infer_ctx_t *ic) {
  return core_infer_unary(ic, EDDY_CORE_DT_BOOL);
}

eddy_status_t eddy_core_infer_unary_int(eddy_infer_ctx_t *ic) {
  return core_infer_unary(ic, EDDY_CORE_DT_INT);
}

/// Binary elementwise op: both operands in `classes`, same dtype, shapes
/// broadcast; the result has dtype `result_dt` (or the operands' when
/// result_dt is EDDY_DT_COUNT_).
static eddy_status_t core_infer_binary(eddy_infer_ctx_t *ic, unsigned classes,
                                       eddy_dtype_t result_dt) {
  EDDY_RETURN_IF_ERROR(eddy_core_check_operands(ic));
  EDDY_RETURN_IF_ERROR(eddy_core_check_dtype(ic, 0, classes));
  EDDY_RETURN_IF_ERROR(eddy_core_check_dtype(ic, 1, classes));
  EDDY_RETURN_IF_ERROR(eddy_core_check_same_dtype(ic, 0, 1));
  const eddy_type_t *a = ic->operand_types[0], *b = ic->operand_types[1];
  eddy_dtype_t dt = result_dt == EDDY_DT_COUNT_ ? a->dtype : result_dt;
  const eddy_type_t *r;
  EDDY_RETURN_IF_ERROR(core_broadcast2(ic, a, b, dt, &r));
  eddy_ir_infer_push(ic, r);
  return NULL;
}

eddy_status_t eddy_core_infer_binary_float(eddy_infer_ctx_t *ic) {
  return core_infer_binary(ic, EDDY_CORE_DT_FLOAT, EDDY_DT_COUNT_);
}

eddy_status_t eddy_core_infer_binary_numeric(eddy_infer_ctx_t *ic) {
  return core_infer_binary(ic, EDDY_CORE_DT_NUMERIC, EDDY_DT_COUNT_);
}

eddy_status_t eddy_core_infer_binary_int(eddy_infer_ctx_t *ic) {
  return core_infer_binary(ic, EDDY_CORE_DT_INT, EDDY_DT_COUNT_);
}

eddy_status_t eddy_core_infer_compare(eddy_infer_ctx_t *ic) {
  return core_infer_binary(ic, EDDY_CORE_DT_ANY, EDDY_DT_I1);
}

eddy_status_t eddy_core_infer_logical_binary(eddy_infer_ctx_t *ic) {
  return core_infer_binary(ic, EDDY_CORE_DT_BOOL, EDDY_DT_COUNT_);
}

eddy_status_t eddy_core_infer_select(eddy_infer_ctx_t *ic) {
  EDDY_RETURN_IF_ERROR(eddy_core_check_operands(ic));
  EDDY_RETURN_IF_ERROR(eddy_core_check_dtype(ic, 0, EDDY_CORE_DT_BOOL));
  EDDY_RETURN_IF_ERROR(eddy_core_check_same_dtype(ic, 1, 2));
  const eddy_type_t *c = ic->operand_types[0], *a = ic->operand_types[1],
                    *b = ic->operand_types[2];
  const eddy_type_t *ab, *r;
  EDDY_RETURN_IF_ERROR(core_broadcast2(ic, a, b, a->dtype, &ab));
  if (!eddy_core_broadcast_type(ic->ctx, c, ab, a->dtype)) {
    /* Name the branch that clashes with the predicate, not the merged
       shape, so the message shows types the user wrote. */
    const eddy_type_t *other =
        eddy_core_broadcast_type(ic->ctx, c, a, a->dtype) ? b : a;
    EDDY_RETURN_IF_ERROR(core_broadcast2(ic, c, other, a->dtype, &r));
  }
  EDDY_RETURN_IF_ERROR(core_broadcast2(ic, c, ab, a->dtype, &r));
  eddy_ir_infer_push(ic, r);
  return NULL;
}

eddy_status_t eddy_core_infer_cast(eddy_infer_ctx_t *ic) {
  EDDY_RETURN_IF_ERROR(eddy_core_check_operands(ic));
  const eddy_attr_t *a = eddy_ir_infer_attr(ic, "dtype");
  if (!a || a->kind != EDDY_ATTR_STRING)
    return eddy_ir_infer_error(ic, "requires attribute 'dtype' (string)");
  eddy_dtype_t dt;
  if (!eddy_dtype_from_name(a->u.str.data, a->u.str.len, &dt))
    return eddy_ir_infer_error(ic, "unknown dtype \"%.*s\"", (int)a->u.str.len,
                               a->u.str.data);
  eddy_ir_infer_push(
      ic, eddy_ir_type_with_dtype(ic->ctx, ic->operand_types[0], dt));
  return NULL;
}

/// ---- Matmul ----------------------------------------------------------------

eddy_status_t eddy_core_infer_matmul(eddy_infer_ctx_t *ic) {
  EDDY_RETURN_IF_ERROR(eddy_core_check_operands(ic));
  EDDY_RETURN_IF_ERROR(eddy_core_check_dtype(ic, 0, EDDY_CORE_DT_NUMERIC));
  EDDY_RETURN_IF_ERROR(eddy_core_check_dtype(ic, 1, EDDY_CORE_DT_NUMERIC));
  EDDY_RETURN_IF_ERROR(eddy_core_check_same_dtype(ic, 0, 1));
  bool ta = false, tb = false;
  EDDY_RETURN_IF_ERROR(eddy_core_attr_bool(ic, "transpose_a", false, &ta));
  EDDY_RETURN_IF_ERROR(eddy_core_attr_bool(ic, "transpose_b", false, &tb));
  const eddy_type_t *a = ic->operand_types[0], *b = ic->operand_types[1];
  for (int k = 0; k < 2; k++) {
    const eddy_type_t *t = k ? b : a;
    if (t->rank != EDDY_RANK_UNKNOWN && t->rank < 2) {
      eddy_tt_t tt = {0};
      eddy_status_t st = eddy_ir_infer_error(
          ic, "operand #%d must have rank >= 2, got %s", k, eddy_tt(&tt, t));
      eddy_tt_free(&tt);
      return st;
    }
  }
  if (a->rank == EDDY_RANK_UNKNOWN || b->rank == EDDY_RANK_UNKNOWN) {
    /* Batch dims broadcast, so the result rank is unknown too. */
    eddy_core_push(ic, a->dtype, EDDY_RANK_UNKNOWN, NULL);
    return NULL;
  }
  int32_t ra = a->rank, rb = b->rank;
  int64_t m = a->dims[ra - (ta ? 1 : 2)], ka = a->dims[ra - (ta ? 2 : 1)];
  int64_t kb = b->dims[rb - (tb ? 1 : 2)], n = b->dims[rb - (tb ? 2 : 1)];
  int64_t dims[EDDY_CORE_MAX_RANK];
  eddy_tt_t tt = {0};
  eddy_status_t st = NULL;
  if (ka != EDDY_DIM_DYNAMIC && kb != EDDY_DIM_DYNAMIC && ka != kb)
    st = eddy_ir_infer_error(
        ic, "contracting dimensions %lld and %lld do not match (%s and %s)",
        (long long)ka, (long long)kb, eddy_tt(&tt, a), eddy_tt(&tt, b));
  else if (!eddy_core_broadcast_dims(a->dims, ra - 2, b->dims, rb - 2, dims))
    st = eddy_ir_infer_error(ic,
                             "batch dimensions of %s and %s are not "
                             "broadcast-compatible",
                             eddy_tt(&tt, a), eddy_tt(&tt, b));
  eddy_tt_free(&tt);
  if (st)
    return st;
  int32_t batch = (ra > rb ? ra : rb) - 2;
  dims[batch] = m;
  dims[batch + 1] = n;
  eddy_core_push(ic, a->dtype, batch + 2, dims);
  return NULL;
}

/// ---- Reductions ------------------------------------------------------------

eddy_status_t eddy_core_infer_reduce(eddy_infer_ctx_t *ic) {
  EDDY_RETURN_IF_ERROR(eddy_core_check_operands(ic));
  EDDY_RETURN_IF_ERROR(eddy_core_check_dtype(ic, 0, EDDY_CORE_DT_NUMERIC));
  int64_t axes[EDDY_CORE_MAX_RANK];
  int32_t naxes;
  bool keep = false;
  EDDY_RETURN_IF_ERROR(eddy_core_attr_ints(ic, "axes", false, axes, &naxes));
  EDDY_RETURN_IF_ERROR(eddy_core_attr_bool(ic, "keepdims", false, &keep));
  const eddy_type_t *x = ic->operand_types[0];
  if (x->rank == EDDY_RANK_UNKNOWN) {
    eddy_core_push(ic, x->dtype, EDDY_RANK_UNKNOWN, NULL);
    return NULL;
  }
  bool reduced[EDDY_CORE_MAX_RANK] = {false};
  for (int32_t i = 0; i < naxes; i++) {
    int64_t ax;
    if (!eddy_core_normalize_axis(axes[i], x->rank, &ax))
      return eddy_core_axis_error(ic, "axis", axes[i], x);
    if (reduced[ax])
      return eddy_ir_infer_error(ic, "axes name dimension %lld more than once",
                                 (long long)ax);
    reduced[ax] = true;
  }
  int64_t dims[EDDY_CORE_MAX_RANK];
  int32_t rank = 0;
  for (int32_t i = 0; i < x->rank; i++) {
    if (!reduced[i])
      dims[rank++] = x->dims[i];
    else if (keep)
      dims[rank++] = 1;
  }
  eddy_core_push(ic, x->dtype, rank, dims);
  return NULL;
}

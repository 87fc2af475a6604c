/// Shape functions of the core dialect, part 2: data movement (reshape,
/// transpose, broadcast_to, concat, split, slice, gather, pad) and shape
/// queries (shape, dim).
#include "dialects/core/core_internal.h"
#include "dialects/dialects_internal.h"

#include <string.h>

/// Error naming a type and an integer list: fmt holds "%s" for the type,
/// then "%s" for the list.
static eddy_status_t core_error_type_ints(const eddy_infer_ctx_t *ic,
                                          const char *fmt, const eddy_type_t *t,
                                          const int64_t *v, int32_t n)
    __attribute__((format(printf, 2, 0)));

static eddy_status_t core_error_type_ints(const eddy_infer_ctx_t *ic,
                                          const char *fmt, const eddy_type_t *t,
                                          const int64_t *v, int32_t n) {
  char ints[EDDY_CORE_INTS_CAP];
  eddy_tt_t tt = {0};
  eddy_status_t st = eddy_ir_infer_error(
      ic, fmt, eddy_tt(&tt, t), eddy_core_ints_str(ints, sizeof(ints), v, n));
  eddy_tt_free(&tt);
  return st;
}

/// ---- reshape ---------------------------------------------------------------

eddy_status_t eddy_core_infer_reshape(eddy_infer_ctx_t *ic) {
  EDDY_RETURN_IF_ERROR(eddy_core_check_operands(ic));
  const eddy_type_t *x = ic->operand_types[0];
  int64_t shape[EDDY_CORE_MAX_RANK];
  int32_t n;
  EDDY_RETURN_IF_ERROR(eddy_core_attr_ints(ic, "shape", false, shape, &n));
  int32_t infer_at = -1, num_unknown = 0;
  int64_t known = 1; /* product of the entries other than -1 */
  for (int32_t i = 0; i < n; i++) {
    if (shape[i] == -1) {
      infer_at = i;
      num_unknown++;
    } else if (shape[i] < 0) {
      return eddy_ir_infer_error(ic, "shape entry %lld is negative",
                                 (long long)shape[i]);
    } else if (!eddy_checked_mul_i64(known, shape[i], &known)) {
      return eddy_ir_infer_error(ic, "shape has too many elements");
    }
  }
  /* Run-time dims: one integer scalar per -1 entry, in order. */
  size_t num_dims = ic->num_operands - 1;
  if (num_dims == 0 && num_unknown > 1)
    return eddy_ir_infer_error(ic, "shape may contain -1 only once (or "
                                   "give one dim operand per -1)");
  if (num_dims > 0 && num_dims != (size_t)num_unknown)
    return eddy_ir_infer_error(ic, "shape has %d entries -1 but %zu dim "
                                   "operands are given",
                               (int)num_unknown, num_dims);
  for (size_t k = 1; k < ic->num_operands; k++) {
    const eddy_type_t *t = ic->operand_types[k];
    if ((t->rank != 0 && t->rank != EDDY_RANK_UNKNOWN) ||
        (t->dtype != EDDY_DT_I32 && t->dtype != EDDY_DT_I64)) {
      eddy_tt_t tt = {0};
      eddy_status_t st = eddy_ir_infer_error(
          ic, "dim operand #%zu must be an i32 or i64 scalar, got %s", k,
          eddy_tt(&tt, t));
      eddy_tt_free(&tt);
      return st;
    }
  }
  int64_t count = eddy_ir_type_num_elements(x);
  if (eddy_ir_type_is_static(x) && count < 0)
    return eddy_ir_infer_error(ic, "operand has too many elements");
  int64_t dims[EDDY_CORE_MAX_RANK];
  memcpy(dims, shape, (size_t)n * sizeof(int64_t));
  for (int32_t i = 0; i < n; i++)
    if (dims[i] == -1)
      dims[i] = EDDY_DIM_DYNAMIC;
  /* A dim operand that is a constant (>= 0) is known (a -1 there is
     inferred at run time). */
  for (int32_t i = 0, k = 1; ic->op && num_dims > 0 && i < n; i++) {
    if (shape[i] != -1)
      continue;
    const eddy_value_t *v = ic->op->operands[k++].value;
    const eddy_attr_t *c =
        v->def && eddy_ir_op_has_trait(v->def, EDDY_TRAIT_CONSTANT)
            ? eddy_ir_op_attr(v->def, "value")
            : NULL;
    if (c && c->kind == EDDY_ATTR_DENSE && eddy_ir_dense_attr_i64(c, 0) >= 0) {
      dims[i] = eddy_ir_dense_attr_i64(c, 0);
      shape[i] = dims[i];
      num_unknown--;
      if (!eddy_checked_mul_i64(known, dims[i], &known))
        return eddy_ir_infer_error(ic, "shape has too many elements");
    }
  }
  infer_at = -1;
  for (int32_t i = 0; i < n; i++)
    if (shape[i] == -1)
      infer_at = i;
  if (count >= 0 && num_unknown <= 1) {
    if (infer_at >= 0) {
      if (known == 0 || count % known != 0)
        return core_error_type_ints(
            ic, "cannot reshape %s into %s (-1 cannot be inferred)", x, shape,
            n);
      dims[infer_at] = count / known;
    } else if (known != count) {
      return core_error_type_ints(
          ic, "cannot reshape %s into %s (element counts differ)", x, shape, n);
    }
  } else if (count >= 0 && known != 0 && count % known != 0) {
    return core_error_type_ints(
        ic, "cannot reshape %s into %s (element counts differ)", x, shape, n);
  }
  eddy_core_push(ic, x->dtype, n, dims);
  return NULL;
}

/// ---- transpose -------------------------------------------------------------

eddy_status_t eddy_core_infer_transpose(eddy_infer_ctx_t *ic) {
  EDDY_RETURN_IF_ERROR(eddy_core_check_operands(ic));
  const eddy_type_t *x = ic->operand_types[0];
  int64_t perm[EDDY_CORE_MAX_RANK];
  int32_t n;
  EDDY_RETURN_IF_ERROR(eddy_core_attr_ints(ic, "perm", false, perm, &n));
  if (x->rank != EDDY_RANK_UNKNOWN && x->rank != n)
    return core_error_type_ints(
        ic, "perm for %s must have one entry per dimension, got %s", x, perm,
        n);
  bool seen[EDDY_CORE_MAX_RANK] = {false};
  for (int32_t i = 0; i < n; i++) {
    if (perm[i] < 0 || perm[i] >= n || seen[perm[i]]) {
      char ints[EDDY_CORE_INTS_CAP];
      return eddy_ir_infer_error(
          ic, "perm %s is not a permutation",
          eddy_core_ints_str(ints, sizeof(ints), perm, n));
    }
    seen[perm[i]] = true;
  }
  int64_t dims[EDDY_CORE_MAX_RANK];
  for (int32_t i = 0; i < n; i++)
    dims[i] =
        x->rank == EDDY_RANK_UNKNOWN ? EDDY_DIM_DYNAMIC : x->dims[perm[i]];
  eddy_core_push(ic, x->dtype, n, dims);
  return NULL;
}

/// ---- broadcast_to ----------------------------------------------------------

eddy_status_t eddy_core_infer_broadcast_to(eddy_infer_ctx_t *ic) {
  EDDY_RETURN_IF_ERROR(eddy_core_check_operands(ic));
  const eddy_type_t *x = ic->operand_types[0];
  int64_t shape[EDDY_CORE_MAX_RANK];
  int32_t n;
  EDDY_RETURN_IF_ERROR(eddy_core_attr_ints(ic, "shape", false, shape, &n));
  for (int32_t i = 0; i < n; i++)
    if (shape[i] < 0)
      return eddy_ir_infer_error(ic, "shape entry %lld is negative",
                                 (long long)shape[i]);
  if (x->rank != EDDY_RANK_UNKNOWN) {
    bool ok = x->rank <= n;
    for (int32_t i = 0; ok && i < x->rank; i++) {
      int64_t d = x->dims[i], t = shape[n - x->rank + i];
      ok = d == 1 || d == t || d == EDDY_DIM_DYNAMIC;
    }
    if (!ok)
      return core_error_type_ints(ic, "cannot broadcast %s to shape %s", x,
                                  shape, n);
  }
  eddy_core_push(ic, x->dtype, n, shape);
  return NULL;
}

/// ---- concat ----------------------------------------------------------------

eddy_status_t eddy_core_infer_concat(eddy_infer_ctx_t *ic) {
  EDDY_RETURN_IF_ERROR(eddy_core_check_operands(ic));
  int64_t axis;
  EDDY_RETURN_IF_ERROR(eddy_core_attr_int(ic, "axis", false, 0, &axis));
  const eddy_type_t *first = ic->operand_types[0];
  const eddy_type_t *ranked = NULL; /* first ranked operand */
  for (size_t i = 0; i < ic->num_operands; i++) {
    const eddy_type_t *t = ic->operand_types[i];
    if (t->dtype != first->dtype)
      return eddy_core_check_same_dtype(ic, 0, i);
    if (t->rank == EDDY_RANK_UNKNOWN)
      continue;
    if (ranked && ranked->rank != t->rank) {
      eddy_tt_t tt = {0};
      eddy_status_t st = eddy_ir_infer_error(
          ic, "operands must have the same rank, got %s and %s",
          eddy_tt(&tt, ranked), eddy_tt(&tt, t));
      eddy_tt_free(&tt);
      return st;
    }
    if (!ranked)
      ranked = t;
  }
  if (!ranked) {
    eddy_core_push(ic, first->dtype, EDDY_RANK_UNKNOWN, NULL);
    return NULL;
  }
  int32_t rank = ranked->rank;
  int64_t ax;
  if (!eddy_core_normalize_axis(axis, rank, &ax))
    return eddy_core_axis_error(ic, "axis", axis, ranked);
  int64_t dims[EDDY_CORE_MAX_RANK];
  const eddy_type_t *owner[EDDY_CORE_MAX_RANK]; /* who fixed dims[i] */
  for (int32_t i = 0; i < rank; i++) {
    dims[i] = EDDY_DIM_DYNAMIC;
    owner[i] = ranked;
  }
  int64_t sum = 0;
  bool sum_known = true;
  for (size_t k = 0; k < ic->num_operands; k++) {
    const eddy_type_t *t = ic->operand_types[k];
    if (t->rank == EDDY_RANK_UNKNOWN) {
      sum_known = false;
      continue;
    }
    for (int32_t i = 0; i < rank; i++) {
      int64_t d = t->dims[i];
      if (i == ax) {
        if (d == EDDY_DIM_DYNAMIC)
          sum_known = false;
        else if (sum_known && !eddy_checked_add_i64(sum, d, &sum))
          return eddy_ir_infer_error(ic, "concatenated dimension overflows");
        continue;
      }
      if (d == EDDY_DIM_DYNAMIC)
        continue;
      if (dims[i] != EDDY_DIM_DYNAMIC && dims[i] != d) {
        eddy_tt_t tt = {0};
        eddy_status_t st = eddy_ir_infer_error(
            ic, "operands have incompatible shapes %s and %s at dimension %d",
            eddy_tt(&tt, owner[i]), eddy_tt(&tt, t), (int)i);
        eddy_tt_free(&tt);
        return st;
      }
      dims[i] = d;
      owner[i] = t;
    }
  }
  dims[ax] = sum_known ? sum : EDDY_DIM_DYNAMIC;
  eddy_core_push(ic, first->dtype, rank, dims);
  return NULL;
}

/// ---- split -----------------------------------------------------------------

/// More results than this are refused: each is an SSA value in the IR.
#define CORE_MAX_SPLITS 65536

eddy_status_t eddy_core_infer_split(eddy_infer_ctx_t *ic) {
  EDDY_RETURN_IF_ERROR(eddy_core_check_operands(ic));
  int64_t axis, num;
  EDDY_RETURN_IF_ERROR(eddy_core_attr_int(ic, "axis", false, 0, &axis));
  EDDY_RETURN_IF_ERROR(eddy_core_attr_int(ic, "num_splits", false, 0, &num));
  if (num < 1 || num > CORE_MAX_SPLITS)
    return eddy_ir_infer_error(ic, "num_splits must be in [1, %d], got %lld",
                               CORE_MAX_SPLITS, (long long)num);
  const eddy_type_t *x = ic->operand_types[0];
  const eddy_type_t *part = x;
  if (x->rank != EDDY_RANK_UNKNOWN) {
    int64_t ax;
    if (!eddy_core_normalize_axis(axis, x->rank, &ax))
      return eddy_core_axis_error(ic, "axis", axis, x);
    int64_t dims[EDDY_CORE_MAX_RANK];
    memcpy(dims, x->dims, (size_t)x->rank * sizeof(int64_t));
    if (dims[ax] != EDDY_DIM_DYNAMIC) {
      if (dims[ax] % num != 0) {
        eddy_tt_t tt = {0};
        eddy_status_t st = eddy_ir_infer_error(
            ic,
            "dimension %lld of %s (size %lld) is not divisible by "
            "num_splits %lld",
            (long long)ax, eddy_tt(&tt, x), (long long)dims[ax],
            (long long)num);
        eddy_tt_free(&tt);
        return st;
      }
      dims[ax] /= num;
    }
    part = eddy_ir_tensor_type_get(ic->ctx, x->dtype, x->rank, dims);
  }
  for (int64_t k = 0; k < num; k++)
    eddy_ir_infer_push(ic, part);
  return NULL;
}

/// ---- slice -----------------------------------------------------------------

eddy_status_t eddy_core_infer_slice(eddy_infer_ctx_t *ic) {
  EDDY_RETURN_IF_ERROR(eddy_core_check_operands(ic));
  const eddy_type_t *x = ic->operand_types[0];
  int64_t start[EDDY_CORE_MAX_RANK], limit[EDDY_CORE_MAX_RANK],
      strides[EDDY_CORE_MAX_RANK];
  int32_t ns, nl, nst;
  EDDY_RETURN_IF_ERROR(eddy_core_attr_ints(ic, "start", false, start, &ns));
  EDDY_RETURN_IF_ERROR(eddy_core_attr_ints(ic, "limit", false, limit, &nl));
  EDDY_RETURN_IF_ERROR(eddy_core_attr_ints(ic, "strides", true, strides, &nst));
  if (nst < 0) {
    nst = ns;
    for (int32_t i = 0; i < ns; i++)
      strides[i] = 1;
  }
  if (nl != ns || nst != ns)
    return eddy_ir_infer_error(ic,
                               "start, limit and strides must have the "
                               "same length, got %d, %d and %d",
                               (int)ns, (int)nl, (int)nst);
  if (x->rank != EDDY_RANK_UNKNOWN && x->rank != ns)
    return core_error_type_ints(
        ic, "start for %s must have one entry per dimension, got %s", x, start,
        ns);
  int64_t dims[EDDY_CORE_MAX_RANK];
  for (int32_t i = 0; i < ns; i++) {
    int64_t d = x->rank == EDDY_RANK_UNKNOWN ? EDDY_DIM_DYNAMIC : x->dims[i];
    if (strides[i] < 1)
      return eddy_ir_infer_error(ic,
                                 "stride %lld of dimension %d must be "
                                 ">= 1",
                                 (long long)strides[i], (int)i);
    if (start[i] < 0 || start[i] > limit[i] ||
        (d != EDDY_DIM_DYNAMIC && limit[i] > d)) {
      eddy_tt_t tt = {0};
      eddy_status_t st = eddy_ir_infer_error(
          ic,
          "slice [%lld, %lld) of dimension %d is out of range for %s "
          "(need 0 <= start <= limit <= size)",
          (long long)start[i], (long long)limit[i], (int)i, eddy_tt(&tt, x));
      eddy_tt_free(&tt);
      return st;
    }
    /* ceil((limit - start) / stride) without overflow. */
    int64_t len = limit[i] - start[i];
    dims[i] = len / strides[i] + (len % strides[i] != 0);
  }
  eddy_core_push(ic, x->dtype, ns, dims);
  return NULL;
}

/// ---- gather ----------------------------------------------------------------

eddy_status_t eddy_core_infer_gather(eddy_infer_ctx_t *ic) {
  EDDY_RETURN_IF_ERROR(eddy_core_check_operands(ic));
  EDDY_RETURN_IF_ERROR(eddy_core_check_dtype(ic, 1, EDDY_CORE_DT_INT));
  int64_t axis;
  EDDY_RETURN_IF_ERROR(eddy_core_attr_int(ic, "axis", false, 0, &axis));
  const eddy_type_t *p = ic->operand_types[0], *idx = ic->operand_types[1];
  int64_t ax = 0;
  if (p->rank != EDDY_RANK_UNKNOWN &&
      !eddy_core_normalize_axis(axis, p->rank, &ax))
    return eddy_core_axis_error(ic, "axis", axis, p);
  if (p->rank == EDDY_RANK_UNKNOWN || idx->rank == EDDY_RANK_UNKNOWN) {
    eddy_core_push(ic, p->dtype, EDDY_RANK_UNKNOWN, NULL);
    return NULL;
  }
  int32_t rank = p->rank - 1 + idx->rank;
  if (rank > EDDY_CORE_MAX_RANK)
    return eddy_ir_infer_error(ic,
                               "result rank %d is above the supported "
                               "maximum %d",
                               (int)rank, EDDY_CORE_MAX_RANK);
  int64_t dims[EDDY_CORE_MAX_RANK];
  int32_t r = 0;
  for (int32_t i = 0; i < ax; i++)
    dims[r++] = p->dims[i];
  for (int32_t i = 0; i < idx->rank; i++)
    dims[r++] = idx->dims[i];
  for (int32_t i = (int32_t)ax + 1; i < p->rank; i++)
    dims[r++] = p->dims[i];
  eddy_core_push(ic, p->dtype, rank, dims);
  return NULL;
}

/// ---- pad -------------------------------------------------------------------

eddy_status_t eddy_core_infer_pad(eddy_infer_ctx_t *ic) {
  EDDY_RETURN_IF_ERROR(eddy_core_check_operands(ic));
  const eddy_type_t *x = ic->operand_types[0], *v = ic->operand_types[1];
  if (v->dtype != x->dtype || (v->rank != 0 && v->rank != EDDY_RANK_UNKNOWN)) {
    eddy_tt_t tt = {0};
    eddy_status_t st = eddy_ir_infer_error(
        ic,
        "padding value must be a scalar of the operand's dtype, got %s "
        "for %s",
        eddy_tt(&tt, v), eddy_tt(&tt, x));
    eddy_tt_free(&tt);
    return st;
  }
  int64_t low[EDDY_CORE_MAX_RANK], high[EDDY_CORE_MAX_RANK];
  int32_t nl, nh;
  EDDY_RETURN_IF_ERROR(eddy_core_attr_ints(ic, "low", false, low, &nl));
  EDDY_RETURN_IF_ERROR(eddy_core_attr_ints(ic, "high", false, high, &nh));
  if (nl != nh)
    return eddy_ir_infer_error(ic,
                               "low and high must have the same length, "
                               "got %d and %d",
                               (int)nl, (int)nh);
  if (x->rank != EDDY_RANK_UNKNOWN && x->rank != nl)
    return core_error_type_ints(
        ic, "low for %s must have one entry per dimension, got %s", x, low, nl);
  int64_t dims[EDDY_CORE_MAX_RANK];
  for (int32_t i = 0; i < nl; i++) {
    if (low[i] < 0 || high[i] < 0)
      return eddy_ir_infer_error(ic,
                                 "padding of dimension %d must be "
                                 "non-negative, got low %lld and high "
                                 "%lld",
                                 (int)i, (long long)low[i], (long long)high[i]);
    // Below 2^62 in all (the largest dim IR text takes), so that a
    // run-time dim plus the padding cannot overflow either.
    int64_t pad;
    if (!eddy_checked_add_i64(low[i], high[i], &pad) || pad >= (int64_t)1 << 62)
      return eddy_ir_infer_error(ic,
                                 "padding of dimension %d is too large: low "
                                 "%lld and high %lld (2^62 in all at most)",
                                 (int)i, (long long)low[i], (long long)high[i]);
    int64_t d = x->rank == EDDY_RANK_UNKNOWN ? EDDY_DIM_DYNAMIC : x->dims[i];
    if (d != EDDY_DIM_DYNAMIC && !eddy_checked_add_i64(d, pad, &d))
      return eddy_ir_infer_error(ic, "padded dimension %d overflows", (int)i);
    dims[i] = d;
  }
  eddy_core_push(ic, x->dtype, nl, dims);
  return NULL;
}

/// ---- shape, dim ------------------------------------------------------------

eddy_status_t eddy_core_infer_shape(eddy_infer_ctx_t *ic) {
  EDDY_RETURN_IF_ERROR(eddy_core_check_operands(ic));
  const eddy_type_t *x = ic->operand_types[0];
  int64_t n = x->rank == EDDY_RANK_UNKNOWN ? EDDY_DIM_DYNAMIC : x->rank;
  eddy_core_push(ic, EDDY_DT_I64, 1, &n);
  return NULL;
}

eddy_status_t eddy_core_infer_dim(eddy_infer_ctx_t *ic) {
  EDDY_RETURN_IF_ERROR(eddy_core_check_operands(ic));
  int64_t index, ax;
  EDDY_RETURN_IF_ERROR(eddy_core_attr_int(ic, "index", false, 0, &index));
  const eddy_type_t *x = ic->operand_types[0];
  if (x->rank != EDDY_RANK_UNKNOWN &&
      !eddy_core_normalize_axis(index, x->rank, &ax))
    return eddy_core_axis_error(ic, "index", index, x);
  eddy_core_push(ic, EDDY_DT_I64, 0, NULL);
  return NULL;
}

/// core.range(start, limit, delta): three numeric scalars of one dtype;
/// the result is tensor<?xT> (its length is a run-time value).
eddy_status_t eddy_core_infer_range(eddy_infer_ctx_t *ic) {
  EDDY_RETURN_IF_ERROR(eddy_core_check_operands(ic));
  static const char *const names[3] = {"start", "limit", "delta"};
  for (size_t i = 0; i < 3; i++) {
    const eddy_type_t *t = ic->operand_types[i];
    if (t->rank != 0)
      return eddy_ir_infer_error(ic, "%s must be a scalar", names[i]);
    EDDY_RETURN_IF_ERROR(eddy_core_check_dtype(ic, i, EDDY_CORE_DT_NUMERIC));
    if (i > 0)
      EDDY_RETURN_IF_ERROR(eddy_core_check_same_dtype(ic, 0, i));
  }
  int64_t n = EDDY_DIM_DYNAMIC;
  eddy_core_push(ic, ic->operand_types[0]->dtype, 1, &n);
  return NULL;
}

/// Shape functions and folders of the core ops that index along an axis:
/// reverse, argmax / argmin and the scans cumsum / cumprod; and of scatter,
/// topk and where (semantics in docs/dialects/core.md).
#include "dialects/core/core_internal.h"
#include "dialects/dialects_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/// ---- reverse ---------------------------------------------------------------

eddy_status_t eddy_core_infer_reverse(eddy_infer_ctx_t *ic) {
  EDDY_RETURN_IF_ERROR(eddy_core_check_operands(ic));
  const eddy_type_t *x = ic->operand_types[0];
  int64_t axes[EDDY_CORE_MAX_RANK];
  int32_t n;
  EDDY_RETURN_IF_ERROR(eddy_core_attr_ints(ic, "axes", false, axes, &n));
  if (x->rank != EDDY_RANK_UNKNOWN) {
    bool seen[EDDY_CORE_MAX_RANK] = {false};
    for (int32_t i = 0; i < n; i++) {
      int64_t a;
      if (!eddy_core_normalize_axis(axes[i], x->rank, &a))
        return eddy_core_axis_error(ic, "axis", axes[i], x);
      if (seen[a])
        return eddy_ir_infer_error(ic, "axes name dimension %lld more than once",
                                   (long long)a);
      seen[a] = true;
    }
  }
  eddy_ir_infer_push(ic, x);
  return NULL;
}

/// ---- argmax / argmin -------------------------------------------------------

/// The index dtype named by the `dtype` attribute (i32 or i64).
static eddy_status_t arg_dtype(eddy_infer_ctx_t *ic, eddy_dtype_t *out) {
  const eddy_attr_t *a = eddy_ir_infer_attr(ic, "dtype");
  if (!a || a->kind != EDDY_ATTR_STRING)
    return eddy_ir_infer_error(ic, "requires attribute 'dtype' (string)");
  if (!eddy_dtype_from_name(a->u.str.data, a->u.str.len, out) ||
      (*out != EDDY_DT_I32 && *out != EDDY_DT_I64))
    return eddy_ir_infer_error(ic, "dtype must be i32 or i64, got \"%.*s\"",
                               (int)a->u.str.len, a->u.str.data);
  return NULL;
}

eddy_status_t eddy_core_infer_arg(eddy_infer_ctx_t *ic) {
  EDDY_RETURN_IF_ERROR(eddy_core_check_operands(ic));
  EDDY_RETURN_IF_ERROR(eddy_core_check_dtype(ic, 0, EDDY_CORE_DT_NUMERIC));
  eddy_dtype_t dt;
  EDDY_RETURN_IF_ERROR(arg_dtype(ic, &dt));
  int64_t axis;
  EDDY_RETURN_IF_ERROR(eddy_core_attr_int(ic, "axis", false, 0, &axis));
  const eddy_type_t *x = ic->operand_types[0];
  if (x->rank == EDDY_RANK_UNKNOWN) {
    eddy_core_push(ic, dt, EDDY_RANK_UNKNOWN, NULL);
    return NULL;
  }
  int64_t ax;
  if (!eddy_core_normalize_axis(axis, x->rank, &ax))
    return eddy_core_axis_error(ic, "axis", axis, x);
  if (x->dims[ax] == 0)
    return eddy_ir_infer_error(ic, "the reduced dimension %lld is empty",
                               (long long)ax);
  int64_t dims[EDDY_CORE_MAX_RANK];
  int32_t r = 0;
  for (int32_t i = 0; i < x->rank; i++)
    if (i != ax)
      dims[r++] = x->dims[i];
  eddy_core_push(ic, dt, r, dims);
  return NULL;
}

/// ---- cumsum / cumprod ------------------------------------------------------

eddy_status_t eddy_core_infer_cumulative(eddy_infer_ctx_t *ic) {
  EDDY_RETURN_IF_ERROR(eddy_core_check_operands(ic));
  EDDY_RETURN_IF_ERROR(eddy_core_check_dtype(ic, 0, EDDY_CORE_DT_NUMERIC));
  int64_t axis;
  bool b;
  EDDY_RETURN_IF_ERROR(eddy_core_attr_int(ic, "axis", false, 0, &axis));
  EDDY_RETURN_IF_ERROR(eddy_core_attr_bool(ic, "exclusive", false, &b));
  EDDY_RETURN_IF_ERROR(eddy_core_attr_bool(ic, "reverse", false, &b));
  const eddy_type_t *x = ic->operand_types[0];
  int64_t ax;
  if (x->rank != EDDY_RANK_UNKNOWN &&
      !eddy_core_normalize_axis(axis, x->rank, &ax))
    return eddy_core_axis_error(ic, "axis", axis, x);
  eddy_ir_infer_push(ic, x);
  return NULL;
}

/// ---- scatter ---------------------------------------------------------------

/// scatter(indices, updates[, size]) {axis, size}: updates is
/// pre + indices.shape + post (pre of `axis` dims); the result pre + [size]
/// + post, zeros plus each update added at its index. `size` -1 takes the
/// size from the third operand, an integer scalar, at run time.
eddy_status_t eddy_core_infer_scatter(eddy_infer_ctx_t *ic) {
  EDDY_RETURN_IF_ERROR(eddy_core_check_operands(ic));
  EDDY_RETURN_IF_ERROR(eddy_core_check_dtype(ic, 0, EDDY_CORE_DT_INT));
  EDDY_RETURN_IF_ERROR(eddy_core_check_dtype(ic, 1, EDDY_CORE_DT_NUMERIC));
  int64_t axis, size;
  EDDY_RETURN_IF_ERROR(eddy_core_attr_int(ic, "axis", false, 0, &axis));
  EDDY_RETURN_IF_ERROR(eddy_core_attr_int(ic, "size", false, 0, &size));
  if (size < -1)
    return eddy_ir_infer_error(ic, "size %lld is negative", (long long)size);
  if (ic->num_operands != (size == -1 ? 3u : 2u))
    return eddy_ir_infer_error(ic,
                               "takes a size operand exactly when size is "
                               "-1, got size %lld and %zu operands",
                               (long long)size, ic->num_operands);
  if (size == -1) {
    const eddy_type_t *t = ic->operand_types[2];
    if ((t->rank != 0 && t->rank != EDDY_RANK_UNKNOWN) ||
        (t->dtype != EDDY_DT_I32 && t->dtype != EDDY_DT_I64)) {
      eddy_tt_t tt = {0};
      eddy_status_t st = eddy_ir_infer_error(
          ic, "the size operand must be an i32 or i64 scalar, got %s",
          eddy_tt(&tt, t));
      eddy_tt_free(&tt);
      return st;
    }
    /* A constant size operand (>= 0) is known. */
    const eddy_value_t *v = ic->op ? ic->op->operands[2].value : NULL;
    const eddy_attr_t *c =
        v && v->def && eddy_ir_op_has_trait(v->def, EDDY_TRAIT_CONSTANT)
            ? eddy_ir_op_attr(v->def, "value")
            : NULL;
    size = EDDY_DIM_DYNAMIC;
    if (c && c->kind == EDDY_ATTR_DENSE && eddy_ir_dense_attr_i64(c, 0) >= 0)
      size = eddy_ir_dense_attr_i64(c, 0);
  }
  const eddy_type_t *idx = ic->operand_types[0], *u = ic->operand_types[1];
  if (idx->rank == EDDY_RANK_UNKNOWN || u->rank == EDDY_RANK_UNKNOWN)
    return eddy_ir_infer_error(ic, "the indices and updates need known ranks");
  if (axis < 0 || axis > (int64_t)u->rank - idx->rank)
    return eddy_ir_infer_error(
        ic, "axis %lld and indices of rank %d do not fit updates of rank %d",
        (long long)axis, (int)idx->rank, (int)u->rank);
  for (int32_t i = 0; i < idx->rank; i++) {
    int64_t a = idx->dims[i], b = u->dims[axis + i];
    if (a != b && a != EDDY_DIM_DYNAMIC && b != EDDY_DIM_DYNAMIC)
      return eddy_ir_infer_error(ic,
                                 "dimension %d of the indices (%lld) and "
                                 "dimension %lld of the updates (%lld) differ",
                                 (int)i, (long long)a, (long long)(axis + i),
                                 (long long)b);
  }
  int64_t dims[EDDY_CORE_MAX_RANK];
  int32_t r = 0;
  for (int32_t i = 0; i < axis; i++)
    dims[r++] = u->dims[i];
  dims[r++] = size;
  for (int32_t i = (int32_t)axis + idx->rank; i < u->rank; i++)
    dims[r++] = u->dims[i];
  eddy_core_push(ic, u->dtype, r, dims);
  return NULL;
}

/// ---- topk ------------------------------------------------------------------

/// topk(x) {k}: the k largest along the last dim, and their indices (i32).
eddy_status_t eddy_core_infer_topk(eddy_infer_ctx_t *ic) {
  EDDY_RETURN_IF_ERROR(eddy_core_check_operands(ic));
  EDDY_RETURN_IF_ERROR(eddy_core_check_dtype(ic, 0, EDDY_CORE_DT_NUMERIC));
  int64_t k;
  EDDY_RETURN_IF_ERROR(eddy_core_attr_int(ic, "k", false, 0, &k));
  const eddy_type_t *x = ic->operand_types[0];
  if (k < 0)
    return eddy_ir_infer_error(ic, "k %lld is negative", (long long)k);
  if (x->rank == EDDY_RANK_UNKNOWN)
    return eddy_ir_infer_error(ic, "the operand's rank must be known");
  if (x->rank < 1)
    return eddy_ir_infer_error(ic, "the operand must have rank >= 1");
  int64_t n = x->dims[x->rank - 1];
  if (n != EDDY_DIM_DYNAMIC && n < k)
    return eddy_ir_infer_error(ic, "the last dimension (%lld) is smaller than "
                                   "k (%lld)",
                               (long long)n, (long long)k);
  int64_t dims[EDDY_CORE_MAX_RANK];
  for (int32_t i = 0; i < x->rank; i++)
    dims[i] = x->dims[i];
  dims[x->rank - 1] = k;
  eddy_core_push(ic, x->dtype, x->rank, dims);
  eddy_core_push(ic, EDDY_DT_I32, x->rank, dims);
  return NULL;
}

/// ---- where ----------------------------------------------------------------

/// where(x, n): x of known rank r and any dtype, n an i64 scalar (the
/// number of nonzero elements of x); the result tensor<?xrxi64>, one row of
/// coordinates per nonzero element.
eddy_status_t eddy_core_infer_where(eddy_infer_ctx_t *ic) {
  EDDY_RETURN_IF_ERROR(eddy_core_check_operands(ic));
  const eddy_type_t *x = ic->operand_types[0], *n = ic->operand_types[1];
  if (x->rank == EDDY_RANK_UNKNOWN)
    return eddy_ir_infer_error(ic, "the operand's rank must be known");
  if (n->rank != 0 || n->dtype != EDDY_DT_I64)
    return eddy_ir_infer_error(ic, "the count (operand 1) must be an i64 "
                                   "scalar");
  int64_t dims[2] = {EDDY_DIM_DYNAMIC, x->rank};
  eddy_core_push(ic, EDDY_DT_I64, 2, dims);
  return NULL;
}

eddy_status_t eddy_core_verify_where(const eddy_op_t *op) {
  return eddy_core_verify_dynamic_dim0(op, 2, "its row count");
}

/// ---- Folders ---------------------------------------------------------------

/// The single operand's constant and the result's foldable type (same
/// dtype unless any_dtype).
static bool fold_one(eddy_fold_ctx_t *fc, bool any_dtype,
                     const eddy_attr_t **c, const eddy_type_t **rt) {
  if (fc->op->num_operands != 1 || fc->op->num_results != 1)
    return false;
  *c = fc->operand_consts[0];
  *rt = eddy_core_fold_result_type(fc, 0);
  return *c && *rt && (any_dtype || (*c)->type->dtype == (*rt)->dtype) &&
         eddy_core_shape_fits((*c)->type) &&
         eddy_ir_type_num_elements((*c)->type) <= EDDY_CORE_FOLD_MAX_WORK;
}

/// The axis attribute normalized against rank; false when out of range.
static bool fold_axis(const eddy_op_t *op, int32_t rank, int64_t *out) {
  return eddy_core_normalize_axis(eddy_ir_op_attr_int(op, "axis", 0), rank,
                                  out);
}

/// outer x n x inner: the sizes around and along axis of a static shape.
static void split_dims(const eddy_type_t *t, int64_t ax, int64_t *outer,
                       int64_t *n, int64_t *inner) {
  *outer = 1;
  *inner = 1;
  for (int32_t i = 0; i < t->rank; i++) {
    if (i < ax)
      *outer *= t->dims[i];
    else if (i > ax)
      *inner *= t->dims[i];
  }
  *n = t->dims[ax];
}

bool eddy_core_fold_reverse(eddy_fold_ctx_t *fc) {
  const eddy_attr_t *c;
  const eddy_type_t *rt;
  eddy_value_t *x = eddy_ir_op_operand(fc->op, 0);
  const eddy_attr_t *aa = eddy_ir_op_attr(fc->op, "axes");
  int64_t axes[EDDY_CORE_MAX_RANK];
  int64_t na = aa ? eddy_ir_attr_as_i64_array(aa, axes, EDDY_CORE_MAX_RANK) : -1;
  if (na < 0 || na > EDDY_CORE_MAX_RANK)
    return false;
  // Reversing nothing, or only dims of size 1, moves nothing.
  bool ident = x->type->rank != EDDY_RANK_UNKNOWN;
  for (int64_t i = 0; ident && i < na; i++) {
    int64_t a;
    ident = eddy_core_normalize_axis(axes[i], x->type->rank, &a) &&
            x->type->dims[a] == 1;
  }
  if (ident && eddy_core_fold_to(fc, x))
    return true;
  if (!fold_one(fc, false, &c, &rt) || c->type->rank != rt->rank)
    return false;
  int64_t strides[EDDY_CORE_MAX_RANK], base = 0;
  eddy_core_strides(c->type->dims, c->type->rank, strides);
  for (int64_t i = 0; i < na; i++) {
    int64_t a;
    if (!eddy_core_normalize_axis(axes[i], c->type->rank, &a))
      return false;
    if (c->type->dims[a] > 0)
      base += (c->type->dims[a] - 1) * strides[a];
    strides[a] = -strides[a];
  }
  fc->results[0].attr =
      eddy_core_fold_gather_elems(fc->ctx, rt, c, base, strides);
  return fc->results[0].attr != NULL;
}

/// True when a beats the best so far b (NaN beats everything but NaN; the
/// first of equals is kept).
static bool arg_better_f(double a, double b, bool mx) {
  if (isnan(b))
    return false;
  if (isnan(a))
    return true;
  return mx ? a > b : a < b;
}

bool eddy_core_fold_arg(eddy_fold_ctx_t *fc) {
  const eddy_attr_t *c;
  const eddy_type_t *rt;
  if (!fold_one(fc, true, &c, &rt))
    return false;
  int64_t ax;
  if (!fold_axis(fc->op, c->type->rank, &ax) || c->type->dims[ax] == 0)
    return false;
  bool mx = eddy_core_op_kind(fc->op->def) == EDDY_CORE_OP_ARGMAX;
  bool fl = eddy_dtype_is_float(c->type->dtype);
  int64_t outer, n, inner;
  split_dims(c->type, ax, &outer, &n, &inner);
  int64_t count = outer * inner;
  if (count == 0)
    return false;
  int64_t *out = malloc((size_t)count * sizeof(*out));
  if (!out)
    return false;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      int64_t best = 0, base = o * n * inner + i;
      for (int64_t k = 1; k < n; k++) {
        int64_t p = base + k * inner, q = base + best * inner;
        bool better =
            fl ? arg_better_f(eddy_core_elem_f64(c, p),
                              eddy_core_elem_f64(c, q), mx)
               : (mx ? eddy_core_elem_i64(c, p) > eddy_core_elem_i64(c, q)
                     : eddy_core_elem_i64(c, p) < eddy_core_elem_i64(c, q));
        if (better)
          best = k;
      }
      out[o * inner + i] = best;
    }
  fc->results[0].attr =
      eddy_ir_dense_attr_from_i64(fc->ctx, rt, out, (size_t)count);
  free(out);
  return fc->results[0].attr != NULL;
}

bool eddy_core_fold_cumulative(eddy_fold_ctx_t *fc) {
  const eddy_attr_t *c;
  const eddy_type_t *rt;
  if (!fold_one(fc, false, &c, &rt))
    return false;
  int64_t ax;
  if (!fold_axis(fc->op, c->type->rank, &ax))
    return false;
  bool prod = eddy_core_op_kind(fc->op->def) == EDDY_CORE_OP_CUMPROD;
  bool excl = eddy_ir_op_attr_bool(fc->op, "exclusive", false);
  bool rev = eddy_ir_op_attr_bool(fc->op, "reverse", false);
  bool fl = eddy_dtype_is_float(c->type->dtype);
  eddy_dtype_t dt = c->type->dtype;
  int64_t outer, n, inner;
  split_dims(c->type, ax, &outer, &n, &inner);
  int64_t count = outer * n * inner;
  if (count == 0)
    return false;
  double *f = fl ? malloc((size_t)count * sizeof(*f)) : NULL;
  int64_t *iv = fl ? NULL : malloc((size_t)count * sizeof(*iv));
  if (!f && !iv)
    return false;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      double fa = prod ? 1.0 : 0.0;
      uint64_t ia = prod ? 1 : 0;
      for (int64_t s = 0; s < n; s++) {
        int64_t k = rev ? n - 1 - s : s;
        int64_t p = o * n * inner + k * inner + i;
        if (excl) {
          if (fl)
            f[p] = fa;
          else
            iv[p] = eddy_core_wrap((int64_t)ia, dt);
        }
        if (fl) {
          double x = eddy_core_elem_f64(c, p);
          fa = prod ? fa * x : fa + x;
        } else {
          uint64_t x = (uint64_t)eddy_core_elem_i64(c, p);
          ia = prod ? ia * x : ia + x;
        }
        if (!excl) {
          if (fl)
            f[p] = fa;
          else
            iv[p] = eddy_core_wrap((int64_t)ia, dt);
        }
      }
    }
  fc->results[0].attr =
      fl ? eddy_core_dense_from_f64(fc->ctx, rt, f, (size_t)count)
         : eddy_ir_dense_attr_from_i64(fc->ctx, rt, iv, (size_t)count);
  free(f);
  free(iv);
  return fc->results[0].attr != NULL;
}

/// gather of constant params at constant indices (shape computations of
/// TensorFlow's gradients gather from constant shapes); an index out of
/// range is left to the kernel's run-time error.
bool eddy_core_fold_gather(eddy_fold_ctx_t *fc) {
  if (fc->op->num_operands != 2 || fc->op->num_results != 1)
    return false;
  const eddy_attr_t *p = fc->operand_consts[0], *ix = fc->operand_consts[1];
  const eddy_type_t *rt = eddy_core_fold_result_type(fc, 0);
  if (!p || !ix || !rt || p->type->dtype != rt->dtype ||
      !eddy_core_shape_fits(p->type) || p->type->rank < 1)
    return false;
  int64_t ax;
  if (!fold_axis(fc->op, p->type->rank, &ax))
    return false;
  int64_t outer, n, inner;
  split_dims(p->type, ax, &outer, &n, &inner);
  int64_t ni = eddy_ir_type_num_elements(ix->type);
  int64_t count = eddy_ir_type_num_elements(rt);
  if (count != outer * ni * inner || count == 0)
    return false;
  for (int64_t j = 0; j < ni; j++) {
    int64_t v = eddy_core_elem_i64(ix, j);
    if (v < 0 || v >= n)
      return false;
  }
  size_t es = eddy_dtype_size(rt->dtype);
  char *buf = malloc((size_t)count * es);
  if (!buf)
    return false;
  const char *data = p->u.dense.data;
  for (int64_t o = 0, w = 0; o < outer; o++)
    for (int64_t j = 0; j < ni; j++) {
      int64_t v = eddy_core_elem_i64(ix, j);
      for (int64_t i = 0; i < inner; i++, w++) {
        int64_t from = p->u.dense.splat ? 0 : (o * n + v) * inner + i;
        memcpy(buf + (size_t)w * es, data + (size_t)from * es, es);
      }
    }
  fc->results[0].attr =
      eddy_ir_dense_attr_get(fc->ctx, rt, buf, (size_t)count * es);
  free(buf);
  return fc->results[0].attr != NULL;
}

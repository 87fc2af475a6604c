/// Folders of the core dialect, part 2: reductions, matmul, data movement
/// (reshape, transpose, broadcast_to, concat, split, slice, pad) and shape
/// queries. Data movement copies element bytes, so it is exact for every
/// dtype; arithmetic follows core_fold.c.
#include "dialects/core/core_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/// An integer-array attribute of the op; -1 when absent or malformed.
static int32_t core_op_ints(const eddy_op_t *op, const char *name,
                            int64_t *out) {
  const eddy_attr_t *a = eddy_ir_op_attr(op, name);
  if (!a)
    return -1;
  int64_t n = eddy_ir_attr_as_i64_array(a, out, EDDY_CORE_MAX_RANK);
  return n < 0 || n > EDDY_CORE_MAX_RANK ? -1 : (int32_t)n;
}

/// The single operand's constant and the single result's foldable type.
static bool core_fold_one(eddy_fold_ctx_t *fc, const eddy_attr_t **c,
                          const eddy_type_t **rt) {
  if (fc->op->num_operands < 1 || fc->op->num_results != 1)
    return false;
  *c = fc->operand_consts[0];
  *rt = eddy_core_fold_result_type(fc, 0);
  return *c && *rt && (*c)->type->dtype == (*rt)->dtype &&
         eddy_core_shape_fits((*c)->type);
}

/// The identities of reduce_max / reduce_min over an integer dtype.
static int64_t core_int_min(eddy_dtype_t dt) {
  return dt == EDDY_DT_I8    ? INT8_MIN
         : dt == EDDY_DT_I32 ? INT32_MIN
                             : INT64_MIN;
}

static int64_t core_int_max(eddy_dtype_t dt) {
  return dt == EDDY_DT_I8    ? INT8_MAX
         : dt == EDDY_DT_I32 ? INT32_MAX
                             : INT64_MAX;
}

/// ---- Reductions ------------------------------------------------------------

bool eddy_core_fold_reduce(eddy_fold_ctx_t *fc) {
  const eddy_attr_t *c;
  const eddy_type_t *rt;
  if (!core_fold_one(fc, &c, &rt))
    return false;
  eddy_core_op_kind_t k = eddy_core_op_kind(fc->op->def);
  const eddy_type_t *xt = c->type;
  int64_t axes[EDDY_CORE_MAX_RANK];
  int32_t naxes = core_op_ints(fc->op, "axes", axes);
  bool keep = eddy_ir_op_attr_bool(fc->op, "keepdims", false);
  if (naxes < 0)
    return false;
  bool reduced[EDDY_CORE_MAX_RANK] = {false};
  for (int32_t i = 0; i < naxes; i++) {
    int64_t ax;
    if (!eddy_core_normalize_axis(axes[i], xt->rank, &ax) || reduced[ax])
      return false;
    reduced[ax] = true;
  }
  int64_t in_n = eddy_ir_type_num_elements(xt);
  if (in_n < 0 || in_n > EDDY_CORE_FOLD_MAX_WORK)
    return false;
  /* Output dims with and without the kept 1s, and the output stride of
     each input dim (0 where reduced). */
  int64_t odims[EDDY_CORE_MAX_RANK], ostrides[EDDY_CORE_MAX_RANK];
  int32_t orank = 0;
  int64_t count = 1;
  for (int32_t i = 0; i < xt->rank; i++) {
    if (!reduced[i])
      odims[orank++] = xt->dims[i];
    else {
      count *= xt->dims[i];
      if (keep)
        odims[orank++] = 1;
    }
  }
  if (!eddy_core_dims_equal(rt, odims, orank))
    return false;
  int64_t s = 1;
  for (int32_t i = xt->rank - 1; i >= 0; i--) {
    ostrides[i] = reduced[i] ? 0 : s;
    if (!reduced[i])
      s *= xt->dims[i];
  }
  int64_t out_n = eddy_ir_type_num_elements(rt);
  bool is_float = eddy_dtype_is_float(xt->dtype);
  size_t m = out_n > 0 ? (size_t)out_n : 1;
  double *f = malloc(m * sizeof(double));
  int64_t *iv = malloc(m * sizeof(int64_t));
  bool ok = f && iv;
  for (int64_t o = 0; ok && o < out_n; o++) {
    switch (k) {
    case EDDY_CORE_OP_REDUCE_PROD:
      f[o] = 1, iv[o] = 1;
      break;
    case EDDY_CORE_OP_REDUCE_MAX:
      f[o] = -INFINITY, iv[o] = core_int_min(xt->dtype);
      break;
    case EDDY_CORE_OP_REDUCE_MIN:
      f[o] = INFINITY, iv[o] = core_int_max(xt->dtype);
      break;
    default:
      f[o] = 0, iv[o] = 0;
      break;
    }
  }
  eddy_core_iter_t it;
  eddy_core_iter_init(&it, xt->dims, xt->rank);
  eddy_core_iter_add(&it, 0, ostrides);
  for (int64_t i = 0; ok && i < in_n; i++, eddy_core_iter_next(&it)) {
    int64_t o = it.off[0];
    if (is_float) {
      double v = eddy_core_elem_f64(c, i);
      switch (k) {
      case EDDY_CORE_OP_REDUCE_PROD:
        f[o] *= v;
        break;
      case EDDY_CORE_OP_REDUCE_MAX:
        /* NaN wins, as in numpy; +0 > -0 as in core.maximum. */
        if (!isnan(f[o]) &&
            (isnan(v) || v > f[o] || (v == f[o] && !signbit(v))))
          f[o] = v;
        break;
      case EDDY_CORE_OP_REDUCE_MIN:
        if (!isnan(f[o]) && (isnan(v) || v < f[o] || (v == f[o] && signbit(v))))
          f[o] = v;
        break;
      default:
        f[o] += v;
        break;
      }
    } else {
      int64_t v = eddy_core_elem_i64(c, i);
      switch (k) {
      case EDDY_CORE_OP_REDUCE_PROD:
        iv[o] = (int64_t)((uint64_t)iv[o] * (uint64_t)v);
        break;
      case EDDY_CORE_OP_REDUCE_MAX:
        iv[o] = v > iv[o] ? v : iv[o];
        break;
      case EDDY_CORE_OP_REDUCE_MIN:
        iv[o] = v < iv[o] ? v : iv[o];
        break;
      default:
        iv[o] = (int64_t)((uint64_t)iv[o] + (uint64_t)v);
        break;
      }
    }
  }
  for (int64_t o = 0; ok && o < out_n; o++) {
    if (is_float) {
      if (k == EDDY_CORE_OP_REDUCE_MEAN)
        f[o] /= (double)count; /* 0 / 0 is NaN for an empty reduction */
    } else {
      iv[o] = eddy_core_wrap(iv[o], xt->dtype);
      if (k == EDDY_CORE_OP_REDUCE_MEAN) {
        /* Truncating division, as TensorFlow's Mean on integers; an empty
           mean is 0. */
        iv[o] = count ? iv[o] / count : 0;
      }
    }
  }
  const eddy_attr_t *a = NULL;
  if (ok)
    a = is_float ? eddy_core_dense_from_f64(fc->ctx, rt, f, (size_t)out_n)
                 : eddy_ir_dense_attr_from_i64(fc->ctx, rt, iv, (size_t)out_n);
  free(f);
  free(iv);
  fc->results[0].attr = a;
  return a != NULL;
}

/// ---- Matmul ----------------------------------------------------------------

bool eddy_core_fold_matmul(eddy_fold_ctx_t *fc) {
  if (fc->op->num_operands != 2 || fc->op->num_results != 1)
    return false;
  const eddy_attr_t *ca = fc->operand_consts[0], *cb = fc->operand_consts[1];
  const eddy_type_t *rt = eddy_core_fold_result_type(fc, 0);
  if (!ca || !cb || !rt || ca->type->dtype != rt->dtype ||
      cb->type->dtype != rt->dtype)
    return false;
  const eddy_type_t *ta = ca->type, *tb = cb->type;
  int32_t ra = ta->rank, rb = tb->rank;
  if (ra < 2 || rb < 2 || !eddy_core_shape_fits(ta) ||
      !eddy_core_shape_fits(tb))
    return false;
  bool tra = eddy_ir_op_attr_bool(fc->op, "transpose_a", false);
  bool trb = eddy_ir_op_attr_bool(fc->op, "transpose_b", false);
  int64_t sa[EDDY_CORE_MAX_RANK], sb[EDDY_CORE_MAX_RANK];
  eddy_core_strides(ta->dims, ra, sa);
  eddy_core_strides(tb->dims, rb, sb);
  /* a[.., i, k] and b[.., k, j] as strides, transposes folded in. */
  int64_t m = ta->dims[ra - (tra ? 1 : 2)], kk = ta->dims[ra - (tra ? 2 : 1)];
  int64_t kb = tb->dims[rb - (trb ? 1 : 2)], n = tb->dims[rb - (trb ? 2 : 1)];
  int64_t sai = sa[ra - (tra ? 1 : 2)], sak = sa[ra - (tra ? 2 : 1)];
  int64_t sbk = sb[rb - (trb ? 1 : 2)], sbj = sb[rb - (trb ? 2 : 1)];
  if (kk != kb)
    return false;
  int64_t dims[EDDY_CORE_MAX_RANK];
  if (!eddy_core_broadcast_dims(ta->dims, ra - 2, tb->dims, rb - 2, dims))
    return false;
  int32_t batch = (ra > rb ? ra : rb) - 2;
  dims[batch] = m;
  dims[batch + 1] = n;
  if (!eddy_core_dims_equal(rt, dims, batch + 2))
    return false;
  int64_t out_n = eddy_ir_type_num_elements(rt), work;
  if (!eddy_checked_mul_i64(out_n, kk, &work) || work > EDDY_CORE_FOLD_MAX_WORK)
    return false;
  /* Batch strides of each operand: its own strides, 0 where it broadcasts. */
  int64_t bsa[EDDY_CORE_MAX_RANK], bsb[EDDY_CORE_MAX_RANK];
  for (int32_t i = 0; i < batch; i++) {
    int32_t ja = i - (batch - (ra - 2)), jb = i - (batch - (rb - 2));
    bsa[i] = (ja < 0 || ta->dims[ja] == 1) ? 0 : sa[ja];
    bsb[i] = (jb < 0 || tb->dims[jb] == 1) ? 0 : sb[jb];
  }
  int64_t nbatch = out_n > 0 ? out_n / (m * n) : 0; /* rt fits: no overflow */
  bool is_float = eddy_dtype_is_float(rt->dtype);
  size_t cap = out_n > 0 ? (size_t)out_n : 1;
  double *f = malloc(cap * sizeof(double));
  int64_t *iv = malloc(cap * sizeof(int64_t));
  bool ok = f && iv;
  eddy_core_iter_t it;
  eddy_core_iter_init(&it, dims, batch);
  eddy_core_iter_add(&it, 0, bsa);
  eddy_core_iter_add(&it, 0, bsb);
  int64_t o = 0;
  for (int64_t bi = 0; ok && bi < nbatch; bi++, eddy_core_iter_next(&it)) {
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++, o++) {
        double acc = 0;
        uint64_t iacc = 0;
        for (int64_t k = 0; k < kk; k++) {
          int64_t pa = it.off[0] + i * sai + k * sak;
          int64_t pb = it.off[1] + k * sbk + j * sbj;
          if (is_float)
            acc += eddy_core_elem_f64(ca, pa) * eddy_core_elem_f64(cb, pb);
          else
            iacc += (uint64_t)eddy_core_elem_i64(ca, pa) *
                    (uint64_t)eddy_core_elem_i64(cb, pb);
        }
        f[o] = acc;
        iv[o] = eddy_core_wrap((int64_t)iacc, rt->dtype);
      }
  }
  const eddy_attr_t *a = NULL;
  if (ok)
    a = is_float ? eddy_core_dense_from_f64(fc->ctx, rt, f, (size_t)out_n)
                 : eddy_ir_dense_attr_from_i64(fc->ctx, rt, iv, (size_t)out_n);
  free(f);
  free(iv);
  fc->results[0].attr = a;
  return a != NULL;
}

/// ---- Data movement ---------------------------------------------------------

/// v is core.dim(x) {index = i}.
static bool is_dim_of(eddy_value_t *v, eddy_value_t *x, int32_t i) {
  const eddy_op_t *d = v->def;
  if (!d || eddy_dialects_opcode(d) != EDDY_OP_CORE_DIM ||
      eddy_ir_op_operand(d, 0) != x)
    return false;
  int64_t k = eddy_ir_op_attr_int(d, "index", -1);
  return k == i || k + x->type->rank == i;
}

bool eddy_core_fold_reshape(eddy_fold_ctx_t *fc) {
  if (fc->op->num_operands < 1 || fc->op->num_results != 1)
    return false;
  eddy_value_t *x = eddy_ir_op_operand(fc->op, 0);
  int64_t shape[EDDY_CORE_MAX_RANK];
  int32_t n = core_op_ints(fc->op, "shape", shape);
  /* Same type is only the identity when each entry is the operand's dim
     (or the one -1, or a dim operand that is core.dim of that dim): a
     declared result type may be less refined than the shape attribute. */
  if (n >= 0 && x->type->rank == n) {
    bool same = true;
    uint32_t k = 1;
    for (int32_t i = 0; i < n && same; i++) {
      if (shape[i] != -1)
        same = shape[i] == x->type->dims[i];
      else if (fc->op->num_operands > 1)
        same = k < fc->op->num_operands &&
               is_dim_of(eddy_ir_op_operand(fc->op, k++), x, i);
    }
    if (same && eddy_core_fold_to(fc, x))
      return true;
  }
  const eddy_attr_t *c;
  const eddy_type_t *rt;
  if (!core_fold_one(fc, &c, &rt) ||
      eddy_ir_type_num_elements(rt) != eddy_ir_type_num_elements(c->type))
    return false;
  /* Row-major data does not move. */
  fc->results[0].attr =
      c->u.dense.splat
          ? eddy_ir_dense_splat_attr_get(fc->ctx, rt, c->u.dense.data)
          : eddy_ir_dense_attr_get(fc->ctx, rt, c->u.dense.data,
                                   c->u.dense.nbytes);
  return fc->results[0].attr != NULL;
}

bool eddy_core_fold_transpose(eddy_fold_ctx_t *fc) {
  if (fc->op->num_operands != 1 || fc->op->num_results != 1)
    return false;
  int64_t perm[EDDY_CORE_MAX_RANK];
  int32_t n = core_op_ints(fc->op, "perm", perm);
  if (n < 0)
    return false;
  bool identity = true;
  for (int32_t i = 0; i < n; i++)
    identity = identity && perm[i] == i;
  if (identity && eddy_core_fold_to(fc, eddy_ir_op_operand(fc->op, 0)))
    return true;
  const eddy_attr_t *c;
  const eddy_type_t *rt;
  if (!core_fold_one(fc, &c, &rt) || c->type->rank != n)
    return false;
  int64_t in_strides[EDDY_CORE_MAX_RANK], strides[EDDY_CORE_MAX_RANK],
      dims[EDDY_CORE_MAX_RANK];
  eddy_core_strides(c->type->dims, n, in_strides);
  for (int32_t i = 0; i < n; i++) {
    if (perm[i] < 0 || perm[i] >= n)
      return false;
    dims[i] = c->type->dims[perm[i]];
    strides[i] = in_strides[perm[i]];
  }
  if (!eddy_core_dims_equal(rt, dims, n))
    return false;
  fc->results[0].attr = eddy_core_fold_gather_elems(fc->ctx, rt, c, 0, strides);
  return fc->results[0].attr != NULL;
}

bool eddy_core_fold_broadcast_to(eddy_fold_ctx_t *fc) {
  if (fc->op->num_operands != 1 || fc->op->num_results != 1)
    return false;
  eddy_value_t *x = eddy_ir_op_operand(fc->op, 0);
  int64_t shape[EDDY_CORE_MAX_RANK];
  int32_t n = core_op_ints(fc->op, "shape", shape);
  if (n < 0)
    return false;
  /* The operand must already have the target shape: a dynamic dim could be
     1 at run time and still broadcast. */
  if (eddy_core_dims_equal(x->type, shape, n) && eddy_core_fold_to(fc, x))
    return true;
  const eddy_attr_t *c;
  const eddy_type_t *rt;
  if (!core_fold_one(fc, &c, &rt) || !eddy_core_dims_equal(rt, shape, n) ||
      c->type->rank > n)
    return false;
  for (int32_t i = 0; i < c->type->rank; i++) {
    int64_t d = c->type->dims[i];
    if (d != 1 && d != shape[n - c->type->rank + i])
      return false;
  }
  eddy_core_iter_t it;
  eddy_core_iter_init(&it, shape, n);
  eddy_core_iter_add_broadcast(&it, c->type->dims, c->type->rank);
  fc->results[0].attr =
      eddy_core_fold_gather_elems(fc->ctx, rt, c, 0, it.strides[0]);
  return fc->results[0].attr != NULL;
}

/// Copies count elements of src starting at element off (a splat repeats).
static void core_copy_elems(char *dst, const eddy_attr_t *src, int64_t off,
                            int64_t count, size_t es) {
  const char *data = src->u.dense.data;
  if (src->u.dense.splat) {
    for (int64_t i = 0; i < count; i++)
      memcpy(dst + (size_t)i * es, data, es);
  } else if (count > 0) {
    memcpy(dst, data + (size_t)off * es, (size_t)count * es);
  }
}

bool eddy_core_fold_concat(eddy_fold_ctx_t *fc) {
  eddy_op_t *op = fc->op;
  if (op->num_operands < 1 || op->num_results != 1)
    return false;
  if (op->num_operands == 1 && eddy_core_fold_to(fc, eddy_ir_op_operand(op, 0)))
    return true;
  const eddy_type_t *rt = eddy_core_fold_result_type(fc, 0);
  if (!rt || rt->rank < 1)
    return false;
  int64_t ax;
  if (!eddy_core_normalize_axis(eddy_ir_op_attr_int(op, "axis", 0), rt->rank,
                                &ax))
    return false;
  int64_t sum = 0;
  for (uint32_t k = 0; k < op->num_operands; k++) {
    const eddy_attr_t *c = fc->operand_consts[k];
    if (!c || c->type->dtype != rt->dtype || c->type->rank != rt->rank ||
        !eddy_core_shape_fits(c->type))
      return false;
    for (int32_t i = 0; i < rt->rank; i++)
      if (i != ax && c->type->dims[i] != rt->dims[i])
        return false;
    if (!eddy_checked_add_i64(sum, c->type->dims[ax], &sum))
      return false;
  }
  if (sum != rt->dims[ax])
    return false;
  int64_t inner = 1, outer = 1;
  for (int32_t i = 0; i < rt->rank; i++) {
    if (i < ax)
      outer *= rt->dims[i];
    else if (i > ax)
      inner *= rt->dims[i];
  }
  size_t es = eddy_dtype_size(rt->dtype);
  int64_t total = eddy_ir_type_num_elements(rt);
  char *buf = malloc(total > 0 ? (size_t)total * es : 1);
  if (!buf)
    return false;
  char *p = buf;
  for (int64_t o = 0; o < outer; o++)
    for (uint32_t k = 0; k < op->num_operands; k++) {
      const eddy_attr_t *c = fc->operand_consts[k];
      int64_t chunk = c->type->dims[ax] * inner;
      core_copy_elems(p, c, o * chunk, chunk, es);
      p += (size_t)chunk * es;
    }
  fc->results[0].attr =
      eddy_ir_dense_attr_get(fc->ctx, rt, buf, (size_t)total * es);
  free(buf);
  return fc->results[0].attr != NULL;
}

bool eddy_core_fold_split(eddy_fold_ctx_t *fc) {
  eddy_op_t *op = fc->op;
  if (op->num_operands != 1 || op->num_results < 1)
    return false;
  eddy_value_t *x = eddy_ir_op_operand(op, 0);
  if (op->num_results == 1 && eddy_core_fold_to(fc, x))
    return true;
  const eddy_attr_t *c = fc->operand_consts[0];
  if (!c || c->type->rank < 1 || !eddy_core_shape_fits(c->type))
    return false;
  const eddy_type_t *xt = c->type;
  int64_t ax;
  if (!eddy_core_normalize_axis(eddy_ir_op_attr_int(op, "axis", 0), xt->rank,
                                &ax))
    return false;
  int64_t num = op->num_results;
  if (xt->dims[ax] % num != 0)
    return false;
  int64_t part = xt->dims[ax] / num;
  int64_t dims[EDDY_CORE_MAX_RANK], strides[EDDY_CORE_MAX_RANK];
  memcpy(dims, xt->dims, (size_t)xt->rank * sizeof(int64_t));
  dims[ax] = part;
  eddy_core_strides(xt->dims, xt->rank, strides);
  /* All results or none: a half-folded split helps no one. */
  for (int64_t k = 0; k < num; k++) {
    const eddy_type_t *rt = eddy_core_fold_result_type(fc, (size_t)k);
    if (!rt || rt->dtype != xt->dtype ||
        !eddy_core_dims_equal(rt, dims, xt->rank))
      return false;
  }
  for (int64_t k = 0; k < num; k++) {
    const eddy_type_t *rt = eddy_core_fold_result_type(fc, (size_t)k);
    fc->results[k].attr = eddy_core_fold_gather_elems(
        fc->ctx, rt, c, k * part * strides[ax], strides);
    if (!fc->results[k].attr) {
      for (int64_t j = 0; j <= k; j++)
        fc->results[j].attr = NULL;
      return false;
    }
  }
  return true;
}

bool eddy_core_fold_slice(eddy_fold_ctx_t *fc) {
  const eddy_attr_t *c;
  const eddy_type_t *rt;
  if (!core_fold_one(fc, &c, &rt))
    return false;
  const eddy_type_t *xt = c->type;
  int64_t start[EDDY_CORE_MAX_RANK], limit[EDDY_CORE_MAX_RANK],
      step[EDDY_CORE_MAX_RANK];
  int32_t ns = core_op_ints(fc->op, "start", start);
  int32_t nl = core_op_ints(fc->op, "limit", limit);
  int32_t nst = core_op_ints(fc->op, "strides", step);
  if (!eddy_ir_op_attr(fc->op, "strides")) {
    nst = ns;
    for (int32_t i = 0; i < ns; i++)
      step[i] = 1;
  }
  if (ns != xt->rank || nl != ns || nst != ns)
    return false;
  int64_t in_strides[EDDY_CORE_MAX_RANK], strides[EDDY_CORE_MAX_RANK],
      dims[EDDY_CORE_MAX_RANK];
  eddy_core_strides(xt->dims, xt->rank, in_strides);
  int64_t base = 0;
  for (int32_t i = 0; i < ns; i++) {
    if (step[i] < 1 || start[i] < 0 || start[i] > limit[i] ||
        limit[i] > xt->dims[i])
      return false;
    int64_t len = limit[i] - start[i];
    dims[i] = len / step[i] + (len % step[i] != 0);
    base += start[i] * in_strides[i];
    strides[i] = step[i] * in_strides[i];
  }
  if (!eddy_core_dims_equal(rt, dims, ns))
    return false;
  fc->results[0].attr =
      eddy_core_fold_gather_elems(fc->ctx, rt, c, base, strides);
  return fc->results[0].attr != NULL;
}

bool eddy_core_fold_pad(eddy_fold_ctx_t *fc) {
  const eddy_attr_t *c, *v = fc->operand_consts[1];
  const eddy_type_t *rt;
  if (fc->op->num_operands != 2 || !core_fold_one(fc, &c, &rt) || !v ||
      v->type->dtype != rt->dtype || eddy_ir_type_num_elements(v->type) != 1)
    return false;
  const eddy_type_t *xt = c->type;
  int64_t low[EDDY_CORE_MAX_RANK], high[EDDY_CORE_MAX_RANK];
  int64_t dims[EDDY_CORE_MAX_RANK], in_strides[EDDY_CORE_MAX_RANK];
  if (core_op_ints(fc->op, "low", low) != xt->rank ||
      core_op_ints(fc->op, "high", high) != xt->rank)
    return false;
  for (int32_t i = 0; i < xt->rank; i++) {
    if (low[i] < 0 || high[i] < 0)
      return false;
    if (!eddy_checked_add_i64(xt->dims[i], low[i], &dims[i]) ||
        !eddy_checked_add_i64(dims[i], high[i], &dims[i]) ||
        dims[i] != rt->dims[i])
      return false;
  }
  if (!eddy_core_dims_equal(rt, dims, xt->rank))
    return false;
  eddy_core_strides(xt->dims, xt->rank, in_strides);
  size_t es = eddy_dtype_size(rt->dtype);
  int64_t n = eddy_ir_type_num_elements(rt);
  char *buf = malloc(n > 0 ? (size_t)n * es : 1);
  if (!buf)
    return false;
  eddy_core_iter_t it;
  eddy_core_iter_init(&it, dims, xt->rank);
  for (int64_t i = 0; i < n; i++, eddy_core_iter_next(&it)) {
    int64_t off = 0;
    bool inside = true;
    for (int32_t j = 0; j < xt->rank && inside; j++) {
      int64_t p = it.idx[j] - low[j];
      inside = p >= 0 && p < xt->dims[j];
      off += p * in_strides[j];
    }
    if (inside)
      core_copy_elems(buf + (size_t)i * es, c, off, 1, es);
    else
      memcpy(buf + (size_t)i * es, v->u.dense.data, es);
  }
  fc->results[0].attr =
      eddy_ir_dense_attr_get(fc->ctx, rt, buf, (size_t)n * es);
  free(buf);
  return fc->results[0].attr != NULL;
}

/// ---- Shape queries ---------------------------------------------------------

bool eddy_core_fold_shape(eddy_fold_ctx_t *fc) {
  if (fc->op->num_operands != 1 || fc->op->num_results != 1)
    return false;
  const eddy_type_t *xt = eddy_ir_op_operand(fc->op, 0)->type;
  const eddy_type_t *rt = eddy_core_fold_result_type(fc, 0);
  if (!rt || rt->dtype != EDDY_DT_I64 || !eddy_ir_type_is_tensor(xt) ||
      !eddy_ir_type_is_static(xt) || rt->rank != 1 || rt->dims[0] != xt->rank)
    return false;
  int64_t one = 0;
  fc->results[0].attr = eddy_ir_dense_attr_from_i64(
      fc->ctx, rt, xt->rank ? xt->dims : &one, (size_t)xt->rank);
  return fc->results[0].attr != NULL;
}

bool eddy_core_fold_dim(eddy_fold_ctx_t *fc) {
  if (fc->op->num_operands != 1 || fc->op->num_results != 1)
    return false;
  const eddy_type_t *xt = eddy_ir_op_operand(fc->op, 0)->type;
  const eddy_type_t *rt = eddy_core_fold_result_type(fc, 0);
  int64_t ax;
  /* Only that one dim needs to be static. */
  if (!rt || rt->dtype != EDDY_DT_I64 || rt->rank != 0 ||
      !eddy_ir_type_is_tensor(xt) || xt->rank == EDDY_RANK_UNKNOWN ||
      !eddy_core_normalize_axis(eddy_ir_op_attr_int(fc->op, "index", 0),
                                xt->rank, &ax) ||
      xt->dims[ax] == EDDY_DIM_DYNAMIC)
    return false;
  fc->results[0].attr =
      eddy_ir_dense_attr_from_i64(fc->ctx, rt, &xt->dims[ax], 1);
  return fc->results[0].attr != NULL;
}

/// Gradient rules of data movement whose shapes may be known only at run
/// time: concat, split, slice, pad and gather. Where a dimension is dynamic
/// the adjoint is routed with index runs (core.iota or core.range) and
/// core.gather / core.scatter instead of static slices and pads.
#include "autodiff/ad_internal.h"

#include "dialects/core/core.h"

#include <stdlib.h>
#include <string.h>

#define TRY EDDY_RETURN_IF_ERROR
#define MAXR EDDY_CORE_MAX_RANK

static eddy_value_t *operand(eddy_op_t *op, size_t i) {
  return eddy_ir_op_operand(op, i);
}

static eddy_value_t *result(eddy_op_t *op, size_t i) {
  return eddy_ir_op_result(op, i);
}

static eddy_status_t bin(ad_scope_t *s, const char *name, eddy_value_t *a,
                         eddy_value_t *b, eddy_value_t **out) {
  return ad_bin(s, name, a, b, out);
}

/// Operand i may need an adjoint (activity analysis).
static bool act(ad_scope_t *s, eddy_op_t *op, size_t i) {
  return ad_active(s->ad, operand(op, i));
}

static bool all_static(eddy_op_t *op) {
  for (uint32_t k = 0; k < op->num_operands; k++) {
    const eddy_type_t *t = operand(op, k)->type;
    if (!eddy_ir_type_is_static(t) || t->rank > MAXR)
      return false;
  }
  return true;
}

/// The i64 indices off + stride * [0, len): len static (lenv NULL) gives
/// `core.iota` (times stride, plus off), a static vector; a run-time len
/// gives `core.range(off, off + len, 1)` (stride 1). off is offc, plus offv
/// when not NULL (an i64 scalar).
static eddy_status_t index_run(ad_scope_t *s, int64_t offc, eddy_value_t *offv,
                               int64_t stride, int64_t lenc, eddy_value_t *lenv,
                               eddy_value_t **out) {
  ad_t *ad = s->ad;
  eddy_value_t *off = offv, *c = NULL;
  if (offc != 0 || (!offv && lenv)) {
    TRY(ad_scalar(s, EDDY_DT_I64, (double)offc, &c));
    if (offv)
      TRY(bin(s, "core.add", offv, c, &off));
    else
      off = c;
  }
  if (lenv) {
    eddy_value_t *lim = NULL, *one = NULL;
    if (offv || offc != 0)
      TRY(bin(s, "core.add", off, lenv, &lim));
    else
      lim = lenv;
    TRY(ad_scalar(s, EDDY_DT_I64, 1.0, &one));
    eddy_value_t *ops[3] = {off, lim, one};
    return ad_emit(s, "core.range", ops, 3, NULL, 0, out);
  }
  const eddy_type_t *it =
      eddy_ir_tensor_type_get(ad->ctx, EDDY_DT_I64, 1, &lenc);
  eddy_named_attr_t da = eddy_ir_named_attr(
      ad->ctx, "dimension", eddy_ir_int_attr_get(ad->ctx, 0, EDDY_DT_I64));
  eddy_op_t *iota = NULL;
  TRY(ad_emit_typed(s, "core.iota", NULL, 0, &da, 1, &it, 1, &iota));
  eddy_value_t *r = result(iota, 0);
  if (stride != 1) {
    eddy_value_t *k = NULL;
    TRY(ad_scalar(s, EDDY_DT_I64, (double)stride, &k));
    TRY(bin(s, "core.mul", r, k, &r));
  }
  if (off)
    TRY(bin(s, "core.add", r, off, &r));
  *out = r;
  return NULL;
}

/// v gathered along axis at idx.
static eddy_status_t gather_at(ad_scope_t *s, eddy_value_t *v, int64_t axis,
                               eddy_value_t *idx, eddy_value_t **out) {
  eddy_named_attr_t a = eddy_ir_named_attr(
      s->ad->ctx, "axis", eddy_ir_int_attr_get(s->ad->ctx, axis, EDDY_DT_I64));
  eddy_value_t *ops[2] = {v, idx};
  return ad_emit(s, "core.gather", ops, 2, &a, 1, out);
}

/// updates scattered (added) along axis at idx into zeros of size n (an
/// i64 scalar visible in s; NULL: the static size nc).
static eddy_status_t scatter_at(ad_scope_t *s, eddy_value_t *upd, int64_t axis,
                                eddy_value_t *idx, int64_t nc, eddy_value_t *n,
                                eddy_value_t **out) {
  ad_t *ad = s->ad;
  eddy_named_attr_t a[2] = {
      eddy_ir_named_attr(ad->ctx, "axis",
                         eddy_ir_int_attr_get(ad->ctx, axis, EDDY_DT_I64)),
      eddy_ir_named_attr(
          ad->ctx, "size",
          eddy_ir_int_attr_get(ad->ctx, n ? -1 : nc, EDDY_DT_I64))};
  eddy_value_t *ops[3] = {idx, upd, n};
  return ad_emit(s, "core.scatter", ops, n ? 3 : 2, a, 2, out);
}

/// concat with dynamic shapes: each operand's adjoint is the incoming one
/// gathered along the axis at its run of indices, whose offset and length
/// are static or read with core.dim.
static eddy_status_t concat_dyn(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g,
                                int64_t axis) {
  int64_t offc = 0;
  eddy_value_t *offv = NULL;
  for (uint32_t k = 0; k < op->num_operands; k++) {
    eddy_value_t *x = operand(op, k);
    int32_t rank = x->type->rank;
    int64_t ax;
    if (rank == EDDY_RANK_UNKNOWN || rank > MAXR)
      return eddy_ir_op_error(op, "autodiff needs ranked operands");
    if (!eddy_core_normalize_axis(axis, rank, &ax))
      return eddy_ir_op_error(op, "autodiff: bad axis");
    bool later = k + 1 < op->num_operands, active = act(s, op, k);
    int64_t lenc = x->type->dims[ax];
    eddy_value_t *lenv = NULL;
    if (lenc == EDDY_DIM_DYNAMIC && (active || later))
      TRY(ad_fwd_dim(s, x, ax, &lenv));
    if (active) {
      eddy_value_t *idx = NULL, *r = NULL;
      TRY(index_run(s, offc, offv, 1, lenc, lenv, &idx));
      TRY(gather_at(s, g[0], ax, idx, &r));
      TRY(ad_adj_add(s, x, r));
    }
    if (!later)
      break;
    if (!lenv)
      offc += lenc;
    else if (offv)
      TRY(bin(s, "core.add", offv, lenv, &offv));
    else
      offv = lenv;
  }
  return NULL;
}

eddy_status_t ad_rule_concat(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  int64_t axis = eddy_ir_op_attr_int(op, "axis", 0);
  if (!all_static(op))
    return concat_dyn(s, op, g, axis);
  int64_t off = 0;
  for (uint32_t k = 0; k < op->num_operands; k++) {
    eddy_value_t *x = operand(op, k);
    int32_t rank = x->type->rank;
    int64_t ax;
    if (!eddy_core_normalize_axis(axis, rank, &ax))
      return eddy_ir_op_error(op, "autodiff: bad axis");
    int64_t start[MAXR], limit[MAXR];
    for (int32_t i = 0; i < rank; i++) {
      start[i] = i == ax ? off : 0;
      limit[i] = i == ax ? off + x->type->dims[i] : x->type->dims[i];
    }
    off += x->type->dims[ax];
    eddy_named_attr_t a[2];
    ad_attr_i64s(s->ad, "start", start, (size_t)rank, &a[0]);
    ad_attr_i64s(s->ad, "limit", limit, (size_t)rank, &a[1]);
    eddy_value_t *r = NULL;
    TRY(ad_emit(s, "core.slice", &g[0], 1, a, 2, &r));
    TRY(ad_adj_add(s, x, r));
  }
  return NULL;
}

eddy_status_t ad_rule_split(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  eddy_value_t **parts = calloc(op->num_results, sizeof(*parts));
  if (!parts)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  eddy_status_t st = NULL;
  for (uint32_t k = 0; k < op->num_results && !st; k++) {
    parts[k] = g[k];
    if (!parts[k])
      st = ad_zeros_like_fwd(s, result(op, k), &parts[k]);
  }
  eddy_named_attr_t a = eddy_ir_named_attr(
      s->ad->ctx, "axis",
      eddy_ir_int_attr_get(s->ad->ctx, eddy_ir_op_attr_int(op, "axis", 0),
                           EDDY_DT_I64));
  eddy_value_t *r = NULL;
  if (!st)
    st = ad_emit(s, "core.concat", parts, op->num_results, &a, 1, &r);
  free(parts);
  TRY(st);
  return ad_adj_add(s, operand(op, 0), r);
}

/// Spreads g along axis i so that element k lands at k * stride: a unit
/// axis is inserted after i, padded to `stride`, and merged back; the tail
/// past the operand is cut. cur holds g's dims and is updated.
static eddy_status_t unstride(ad_scope_t *s, eddy_value_t *g, int32_t rank,
                              int32_t i, int64_t stride, int64_t avail,
                              int64_t *cur, eddy_value_t *zero,
                              eddy_value_t **out) {
  ad_t *ad = s->ad;
  int64_t shp[MAXR], lo[MAXR], hi[MAXR];
  int32_t k = 0;
  for (int32_t d = 0; d < rank; d++) {
    shp[k] = cur[d];
    lo[k] = hi[k] = 0;
    k++;
    if (d == i) {
      shp[k] = 1;
      lo[k] = 0;
      hi[k] = stride - 1;
      k++;
    }
  }
  eddy_named_attr_t a[2];
  eddy_value_t *r = NULL;
  ad_attr_i64s(ad, "shape", shp, (size_t)k, &a[0]);
  TRY(ad_emit(s, "core.reshape", &g, 1, a, 1, &r));
  ad_attr_i64s(ad, "low", lo, (size_t)k, &a[0]);
  ad_attr_i64s(ad, "high", hi, (size_t)k, &a[1]);
  eddy_value_t *ops[2] = {r, zero};
  TRY(ad_emit(s, "core.pad", ops, 2, a, 2, &r));
  cur[i] *= stride;
  ad_attr_i64s(ad, "shape", cur, (size_t)rank, &a[0]);
  TRY(ad_emit(s, "core.reshape", &r, 1, a, 1, &r));
  if (cur[i] > avail) {
    int64_t st[MAXR], li[MAXR];
    for (int32_t d = 0; d < rank; d++) {
      st[d] = 0;
      li[d] = d == i ? avail : cur[d];
    }
    cur[i] = avail;
    ad_attr_i64s(ad, "start", st, (size_t)rank, &a[0]);
    ad_attr_i64s(ad, "limit", li, (size_t)rank, &a[1]);
    TRY(ad_emit(s, "core.slice", &r, 1, a, 2, &r));
  }
  *out = r;
  return NULL;
}

/// The gradient of a slice: g padded back with zeros (strides spread it
/// first). Along a dynamic dim of the operand, g is scattered at the
/// sliced indices start + stride * k into zeros of the run-time size.
eddy_status_t ad_rule_slice(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  eddy_value_t *x = operand(op, 0);
  if (x->type->rank == EDDY_RANK_UNKNOWN || x->type->rank > MAXR)
    return eddy_ir_op_error(op, "autodiff needs a ranked operand");
  const eddy_type_t *gt = result(op, 0)->type;
  int32_t rank = x->type->rank;
  if (!eddy_ir_type_is_static(gt) || rank + 1 > MAXR)
    return eddy_ir_op_error(op, "autodiff needs a static slice result");
  bool dyn = !eddy_ir_type_is_static(x->type);
  int64_t start[MAXR], strides[MAXR], low[MAXR], high[MAXR], cur[MAXR];
  eddy_ir_attr_as_i64_array(eddy_ir_op_attr(op, "start"), start, MAXR);
  const eddy_attr_t *sa = eddy_ir_op_attr(op, "strides");
  for (int32_t i = 0; i < rank; i++) {
    strides[i] = 1;
    cur[i] = gt->dims[i];
  }
  if (sa)
    eddy_ir_attr_as_i64_array(sa, strides, MAXR);
  eddy_value_t *zero = NULL, *r = g[0];
  TRY(ad_scalar(s, x->type->dtype, 0.0, &zero));
  const int64_t *xd = x->type->dims;
  for (int32_t i = 0; i < rank; i++)
    if (strides[i] > 1 && cur[i] > 0 && xd[i] != EDDY_DIM_DYNAMIC)
      TRY(unstride(s, r, rank, i, strides[i], xd[i] - start[i], cur, zero, &r));
  bool padded = false;
  for (int32_t i = 0; i < rank; i++) {
    bool d = xd[i] == EDDY_DIM_DYNAMIC;
    low[i] = d ? 0 : start[i];
    high[i] = d ? 0 : xd[i] - start[i] - cur[i];
    padded = padded || low[i] || high[i];
  }
  if (!dyn || padded) {
    eddy_named_attr_t a[2];
    ad_attr_i64s(s->ad, "low", low, (size_t)rank, &a[0]);
    ad_attr_i64s(s->ad, "high", high, (size_t)rank, &a[1]);
    eddy_value_t *ops[2] = {r, zero};
    TRY(ad_emit(s, "core.pad", ops, 2, a, 2, &r));
  }
  for (int32_t i = 0; i < rank; i++) {
    if (xd[i] != EDDY_DIM_DYNAMIC)
      continue;
    eddy_value_t *idx = NULL, *n = NULL;
    TRY(index_run(s, start[i], NULL, strides[i], cur[i], NULL, &idx));
    TRY(ad_fwd_dim(s, x, i, &n));
    TRY(scatter_at(s, r, i, idx, 0, n, &r));
  }
  return ad_adj_add(s, x, r);
}

/// The gradient of a pad: the slice of g that x fills (with dynamic dims,
/// g gathered at [low, low + dim) along each padded axis); the padding
/// value gets the rest.
eddy_status_t ad_rule_pad(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  eddy_value_t *x = operand(op, 0);
  if (x->type->rank == EDDY_RANK_UNKNOWN || x->type->rank > MAXR)
    return eddy_ir_op_error(op, "autodiff needs a ranked operand");
  int32_t rank = x->type->rank;
  int64_t low[MAXR], high[MAXR], start[MAXR], limit[MAXR];
  eddy_ir_attr_as_i64_array(eddy_ir_op_attr(op, "low"), low, MAXR);
  eddy_ir_attr_as_i64_array(eddy_ir_op_attr(op, "high"), high, MAXR);
  eddy_value_t *gx = g[0], *all = NULL, *in = NULL, *gv = NULL;
  if (eddy_ir_type_is_static(x->type)) {
    for (int32_t i = 0; i < rank; i++) {
      start[i] = low[i];
      limit[i] = low[i] + x->type->dims[i];
    }
    eddy_named_attr_t a[2];
    ad_attr_i64s(s->ad, "start", start, (size_t)rank, &a[0]);
    ad_attr_i64s(s->ad, "limit", limit, (size_t)rank, &a[1]);
    TRY(ad_emit(s, "core.slice", &g[0], 1, a, 2, &gx));
  } else {
    for (int32_t i = 0; i < rank; i++) {
      if (low[i] == 0 && high[i] == 0)
        continue;
      int64_t d = x->type->dims[i];
      eddy_value_t *n = NULL, *idx = NULL;
      if (d == EDDY_DIM_DYNAMIC)
        TRY(ad_fwd_dim(s, x, i, &n));
      TRY(index_run(s, low[i], NULL, 1, d, n, &idx));
      TRY(gather_at(s, gx, i, idx, &gx));
    }
  }
  TRY(ad_adj_add(s, x, gx));
  if (!ad_is_diff(operand(op, 1)->type))
    return NULL;
  /* The padding value's gradient: everything outside the slice. */
  int64_t axes[MAXR];
  for (int32_t i = 0; i < rank; i++)
    axes[i] = i;
  eddy_named_attr_t ra;
  ad_attr_i64s(s->ad, "axes", axes, (size_t)rank, &ra);
  TRY(ad_emit(s, "core.reduce_sum", &g[0], 1, &ra, 1, &all));
  TRY(ad_emit(s, "core.reduce_sum", &gx, 1, &ra, 1, &in));
  TRY(bin(s, "core.sub", all, in, &gv));
  return ad_adj_add_reduced(s, operand(op, 1), gv);
}

/// gather: scatter-add back, as a one-hot matrix product
/// onehot(indices, N)^T @ g when params are static (N = params.shape[axis]),
/// as a core.scatter otherwise.
eddy_status_t ad_rule_gather(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  ad_t *ad = s->ad;
  eddy_value_t *params = operand(op, 0), *indices = operand(op, 1);
  if (!ad_is_diff(params->type))
    return NULL;
  const eddy_type_t *pt = params->type, *it = indices->type;
  if (pt->rank == EDDY_RANK_UNKNOWN || it->rank == EDDY_RANK_UNKNOWN ||
      pt->rank + it->rank > MAXR)
    return eddy_ir_op_error(op, "autodiff needs ranked operands");
  int64_t axis;
  if (!eddy_core_normalize_axis(eddy_ir_op_attr_int(op, "axis", 0), pt->rank,
                                &axis))
    return eddy_ir_op_error(op, "autodiff: bad axis");
  int64_t n = pt->dims[axis], rest = 1;
  bool dyn = n == EDDY_DIM_DYNAMIC;
  for (int32_t i = 0; i < pt->rank; i++)
    if (i != axis && (pt->dims[i] == EDDY_DIM_DYNAMIC ||
                      !eddy_checked_mul_i64(rest, pt->dims[i], &rest)))
      dyn = true;
  /* The number of indices: the rows of g below, which -1 cannot infer
     when the other dims hold no elements (an empty batch). */
  int64_t ni = 1;
  for (int32_t i = 0; i < it->rank && ni >= 0; i++)
    if (it->dims[i] == EDDY_DIM_DYNAMIC ||
        !eddy_checked_mul_i64(ni, it->dims[i], &ni))
      ni = -1;
  if (rest == 0 && ni < 0)
    dyn = true;
  if (dyn) {
    /* Dynamic params: a scatter-add into zeros of the params' size along
       the axis (read with core.dim when dynamic). */
    eddy_value_t *idx = NULL, *size = NULL, *r = NULL;
    TRY(ad_fwd(s, indices, &idx));
    if (n == EDDY_DIM_DYNAMIC)
      TRY(ad_fwd_dim(s, params, axis, &size));
    TRY(scatter_at(s, g[0], axis, idx, n, size, &r));
    return ad_adj_add(s, params, r);
  }
  int32_t q = it->rank, gr = pt->rank - 1 + q;
  /* g: params[:axis] + indices + params[axis+1:] -> indices first. */
  int64_t perm[MAXR];
  int32_t k = 0;
  for (int32_t i = 0; i < q; i++)
    perm[k++] = axis + i;
  for (int32_t i = 0; i < axis; i++)
    perm[k++] = i;
  for (int32_t i = (int32_t)axis + q; i < gr; i++)
    perm[k++] = i;
  eddy_value_t *gt = g[0];
  if (axis > 0) {
    eddy_named_attr_t a;
    ad_attr_i64s(ad, "perm", perm, (size_t)gr, &a);
    TRY(ad_emit(s, "core.transpose", &gt, 1, &a, 1, &gt));
  }
  int64_t shp[2] = {rest == 0 ? ni : -1, rest};
  eddy_named_attr_t a;
  ad_attr_i64s(ad, "shape", shp, 2, &a);
  eddy_value_t *g2 = NULL, *idx = NULL, *idx2 = NULL, *oh = NULL, *ohf = NULL,
               *gp = NULL;
  TRY(ad_emit(s, "core.reshape", &gt, 1, &a, 1, &g2));
  TRY(ad_fwd(s, indices, &idx));
  int64_t ishp[2] = {-1, 1};
  ad_attr_i64s(ad, "shape", ishp, 2, &a);
  TRY(ad_emit(s, "core.reshape", &idx, 1, &a, 1, &idx2));
  int64_t iota_dims[2] = {1, n};
  const eddy_type_t *iota_t =
      eddy_ir_tensor_type_get(ad->ctx, it->dtype, 2, iota_dims);
  eddy_named_attr_t da = eddy_ir_named_attr(
      ad->ctx, "dimension", eddy_ir_int_attr_get(ad->ctx, 1, EDDY_DT_I64));
  eddy_op_t *iota = NULL;
  TRY(ad_emit_typed(s, "core.iota", NULL, 0, &da, 1, &iota_t, 1, &iota));
  TRY(bin(s, "core.eq", idx2, eddy_ir_op_result(iota, 0), &oh));
  const char *dt = eddy_dtype_name(pt->dtype);
  eddy_named_attr_t ca = eddy_ir_named_attr(
      ad->ctx, "dtype", eddy_ir_string_attr_get(ad->ctx, dt, strlen(dt)));
  TRY(ad_emit(s, "core.cast", &oh, 1, &ca, 1, &ohf));
  TRY(ad_matmul(s, ohf, g2, true, false, &gp));
  /* [N, rest] -> [N] + params[:axis] + params[axis+1:] -> params order. */
  int64_t dims[MAXR];
  k = 0;
  dims[k++] = n;
  for (int32_t i = 0; i < pt->rank; i++)
    if (i != axis)
      dims[k++] = pt->dims[i];
  ad_attr_i64s(ad, "shape", dims, (size_t)pt->rank, &a);
  TRY(ad_emit(s, "core.reshape", &gp, 1, &a, 1, &gp));
  if (axis > 0) {
    int64_t back[MAXR];
    for (int32_t j = 0; j < pt->rank; j++)
      back[j] = j < axis ? j + 1 : (j == axis ? 0 : j);
    ad_attr_i64s(ad, "perm", back, (size_t)pt->rank, &a);
    TRY(ad_emit(s, "core.transpose", &gp, 1, &a, 1, &gp));
  }
  return ad_adj_add(s, params, gp);
}

/// legalize-tf: the builders the op rules share (tf_lower_internal.h):
/// the value map from source to translated values, op builders that name
/// the source node in their errors, casts, reshapes, constants and the
/// reading of constant operands and attributes.
#include "lower/tf/tf_lower_internal.h"

#include "dialects/dialects.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define TFL_MAX_FOLD_DEPTH 16

eddy_value_t *eddy_tfl_get(eddy_tfl_t *z, eddy_value_t *v) {
  eddy_value_t *r = eddy_ptrmap_get(&z->map, v);
  return r ? r : v;
}

void eddy_tfl_set(eddy_tfl_t *z, eddy_value_t *src, eddy_value_t *dst) {
  eddy_ptrmap_put(&z->map, src, dst ? dst : &z->none);
}

eddy_status_t eddy_tfl_error(const eddy_op_t *src, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  eddy_buf_t loc;
  eddy_buf_init(&loc);
  eddy_ir_loc_format(src->loc, &loc);
  eddy_status_t st = eddy_status_create_at(EDDY_ERR_UNSUPPORTED, loc.data,
                                           "%s: %s",
                                           src->name->str, msg);
  eddy_buf_destroy(&loc);
  return st;
}

eddy_status_t eddy_tfl_wrap_error(const eddy_op_t *src, eddy_status_t st) {
  if (!st)
    return NULL;
  eddy_status_t w = eddy_tfl_error(src, "%s", eddy_status_message(st));
  eddy_status_destroy(st);
  return w;
}

eddy_status_t eddy_tfl_build(eddy_tfl_t *z, const eddy_op_t *src,
                             const char *name, eddy_value_t *const *operands,
                             size_t n, const eddy_named_attr_t *attrs,
                             size_t na, eddy_value_t **out) {
  z->b.loc = src->loc;
  return eddy_tfl_wrap_error(src, eddy_ir_build_simple(&z->b, name, operands, n, attrs,
                                              na, out));
}

eddy_status_t eddy_tfl_build_typed(eddy_tfl_t *z, const eddy_op_t *src,
                                   const char *name,
                                   eddy_value_t *const *operands, size_t n,
                                   const eddy_named_attr_t *attrs, size_t na,
                                   const eddy_type_t *const *types,
                                   size_t ntypes, eddy_op_t **out_op) {
  eddy_op_state_t st = {.name = name,
                        .operands = operands,
                        .num_operands = n,
                        .attrs = attrs,
                        .num_attrs = na,
                        .result_types = types,
                        .num_results = ntypes,
                        .loc = src->loc};
  z->b.loc = src->loc;
  return eddy_tfl_wrap_error(src, eddy_ir_build(&z->b, &st, out_op));
}

static const eddy_attr_t *const_rec(eddy_value_t *v, int depth) {
  eddy_op_t *d = v->def;
  if (!d || depth > TFL_MAX_FOLD_DEPTH)
    return NULL;
  if (eddy_ir_op_is(d, "df.after")) // a pivoted constant
    return const_rec(eddy_ir_op_operand(d, 0), depth + 1);
  if (eddy_ir_op_has_trait(d, EDDY_TRAIT_CONSTANT)) {
    const eddy_attr_t *a = eddy_ir_op_attr(d, "value");
    return a && a->kind == EDDY_ATTR_DENSE ? a : NULL;
  }
  if (!d->def->fold || d->num_regions || d->num_operands > 16)
    return NULL;
  const eddy_attr_t *ops[16] = {0};
  for (uint32_t i = 0; i < d->num_operands; i++)
    ops[i] = const_rec(eddy_ir_op_operand(d, i), depth + 1);
  eddy_fold_result_t *res = calloc(d->num_results + 1, sizeof(*res));
  if (!res)
    return NULL;
  eddy_fold_ctx_t fc = {
      .ctx = d->ctx, .op = d, .operand_consts = ops, .results = res};
  const eddy_attr_t *out = NULL;
  if (d->def->fold(&fc)) {
    eddy_fold_result_t *r = &res[v->index];
    if (r->attr && r->attr->kind == EDDY_ATTR_DENSE)
      out = r->attr;
    else if (r->value && r->value != v)
      out = const_rec(r->value, depth + 1);
  }
  free(res);
  return out;
}

const eddy_attr_t *eddy_tfl_const(eddy_tfl_t *z, eddy_value_t *v) {
  (void)z;
  if (!v || v->type->kind != EDDY_TYPE_TENSOR)
    return NULL;
  return const_rec(v, 0);
}

int64_t eddy_tfl_const_ints(eddy_tfl_t *z, eddy_value_t *v, int64_t *out,
                            size_t cap) {
  const eddy_attr_t *a = eddy_tfl_const(z, v);
  if (!a || eddy_dtype_is_float(a->type->dtype))
    return -1;
  int64_t n = eddy_ir_type_num_elements(a->type);
  if (n < 0 || (uint64_t)n > cap)
    return -1;
  for (int64_t i = 0; i < n; i++)
    out[i] = eddy_ir_dense_attr_i64(a, i);
  return n;
}

eddy_status_t eddy_tfl_splat(eddy_tfl_t *z, eddy_dtype_t dt, int32_t rank,
                             const int64_t *dims, double x,
                             eddy_value_t **out) {
  const eddy_type_t *t = eddy_ir_tensor_type_get(z->ctx, dt, rank, dims);
  const eddy_attr_t *a = eddy_ir_dense_attr_from_f64(z->ctx, t, &x, 1);
  return eddy_ir_build_constant(&z->b, a, out);
}

eddy_status_t eddy_tfl_cast(eddy_tfl_t *z, const eddy_op_t *src,
                            eddy_value_t *v, eddy_dtype_t dt,
                            eddy_value_t **out) {
  if (v->type->kind == EDDY_TYPE_TENSOR && v->type->dtype == dt) {
    *out = v;
    return NULL;
  }
  const char *name = eddy_dtype_name(dt);
  eddy_named_attr_t a = eddy_ir_named_attr(
      z->ctx, "dtype", eddy_ir_string_attr_get(z->ctx, name, strlen(name)));
  return eddy_tfl_build(z, src, "core.cast", &v, 1, &a, 1, out);
}

eddy_status_t eddy_tfl_reshape(eddy_tfl_t *z, const eddy_op_t *src,
                               eddy_value_t *v, const int64_t *dims,
                               size_t rank, eddy_value_t **out) {
  eddy_named_attr_t a = eddy_ir_named_attr(
      z->ctx, "shape", eddy_ir_i64_array_attr_get(z->ctx, dims, rank));
  return eddy_tfl_build(z, src, "core.reshape", &v, 1, &a, 1, out);
}

eddy_status_t eddy_tfl_dim(eddy_tfl_t *z, const eddy_op_t *src,
                           eddy_value_t *v, int64_t k, eddy_value_t **out) {
  eddy_named_attr_t a = eddy_ir_named_attr(
      z->ctx, "index", eddy_ir_int_attr_get(z->ctx, k, EDDY_DT_I64));
  return eddy_tfl_build(z, src, "core.dim", &v, 1, &a, 1, out);
}

eddy_status_t eddy_tfl_int_constant(eddy_tfl_t *z, eddy_dtype_t dt,
                                    const int64_t *v, int64_t n,
                                    eddy_value_t **out) {
  const eddy_type_t *t =
      n < 0 ? eddy_ir_scalar_type_get(z->ctx, dt)
            : eddy_ir_tensor_type_get(z->ctx, dt, 1, &n);
  if (n == 0)
    return eddy_ir_build_constant(
        &z->b, eddy_ir_dense_attr_get(z->ctx, t, NULL, 0), out);
  return eddy_ir_build_constant(
      &z->b, eddy_ir_dense_attr_from_i64(z->ctx, t, v, n < 0 ? 1 : (size_t)n),
      out);
}

eddy_status_t eddy_tfl_transpose(eddy_tfl_t *z, const eddy_op_t *src,
                                 eddy_value_t *v, const int64_t *perm,
                                 size_t n, eddy_value_t **out) {
  eddy_named_attr_t a = eddy_tfl_ints_attr(z, "perm", perm, n);
  return eddy_tfl_build(z, src, "core.transpose", &v, 1, &a, 1, out);
}

eddy_status_t eddy_tfl_reshape_dyn(eddy_tfl_t *z, const eddy_op_t *src,
                                   eddy_value_t *v, const int64_t *dims,
                                   size_t rank, eddy_value_t *const *dimv,
                                   eddy_value_t **out) {
  int64_t d[EDDY_TFL_MAX_RANK];
  eddy_value_t *ops[EDDY_TFL_MAX_RANK + 1] = {v};
  size_t ndyn = 0;
  if (rank > EDDY_TFL_MAX_RANK)
    return eddy_tfl_error(src, "rank %zu is above %d", rank,
                          EDDY_TFL_MAX_RANK);
  for (size_t i = 0; i < rank; i++) {
    d[i] = dims[i] < 0 ? -1 : dims[i];
    if (d[i] < 0)
      ops[++ndyn] = dimv ? dimv[i] : NULL;
  }
  if (ndyn == 0 || (ndyn == 1 && !ops[1]))
    return eddy_tfl_reshape(z, src, v, d, rank, out);
  for (size_t k = 1; k <= ndyn; k++)
    if (!ops[k])
      return eddy_tfl_error(src, "internal: a dynamic dimension has no "
                                 "run-time value");
  eddy_named_attr_t a = eddy_ir_named_attr(
      z->ctx, "shape", eddy_ir_i64_array_attr_get(z->ctx, d, rank));
  return eddy_tfl_build(z, src, "core.reshape", ops, ndyn + 1, &a, 1, out);
}

eddy_status_t eddy_tfl_reshape_keep(eddy_tfl_t *z, const eddy_op_t *src,
                                    eddy_value_t *v, const int64_t *dims,
                                    size_t rank, const int64_t *from,
                                    eddy_value_t **out) {
  eddy_value_t *dimv[EDDY_TFL_MAX_RANK] = {NULL};
  size_t ndyn = 0;
  if (rank > EDDY_TFL_MAX_RANK)
    return eddy_tfl_error(src, "rank %zu is above %d", rank,
                          EDDY_TFL_MAX_RANK);
  for (size_t i = 0; i < rank; i++)
    ndyn += dims[i] < 0;
  // A dynamic dim of v that is dropped (Squeeze) must be 1 at run time:
  // with dim operands a wrong size is an error rather than absorbed into
  // an inferred dim.
  bool dropped = false;
  for (int32_t k = 0; v->type->kind == EDDY_TYPE_TENSOR && k < v->type->rank;
       k++) {
    bool kept = false;
    for (size_t i = 0; i < rank && !kept; i++)
      kept = dims[i] < 0 && from[i] == k;
    dropped = dropped || (v->type->dims[k] < 0 && !kept);
  }
  if (ndyn == 1 && dropped)
    ndyn = 2;
  for (size_t i = 0; ndyn > 1 && i < rank; i++)
    if (dims[i] < 0)
      EDDY_RETURN_IF_ERROR(eddy_tfl_dim(z, src, v, from[i], &dimv[i]));
  return eddy_tfl_reshape_dyn(z, src, v, dims, rank, dimv, out);
}

bool eddy_tfl_attr_dtype(const eddy_op_t *src, const char *name,
                         eddy_dtype_t *out) {
  const eddy_attr_t *a = eddy_ir_op_attr(src, name);
  return a && a->kind == EDDY_ATTR_STRING &&
         eddy_dtype_from_name(a->u.str.data, a->u.str.len, out);
}


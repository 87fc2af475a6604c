/// The evaluator's op handlers for core and tl: each converts the op's
/// attributes and calls its kernel in runtime/kernels.h. No op is computed
/// here: the kernels are the single implementation.
#include "runtime/eval/eval_internal.h"

#include "dialects/core/core.h"

#include <stdlib.h>
#include <string.h>

#define UNUSED_HANDLER_ARGS                                                    \
  (void)s;                                                                     \
  (void)f;                                                                     \
  (void)h

/// Operand i as a tensor (eval_op has checked the kinds).
#define TENSOR(i) (&operands[(i)]->tensor)

/// Wraps a kernel call: its status located at op.
#define RT(call) EDDY_RETURN_IF_ERROR(eddy_eval_op_rt_error(op, (call)))

/// ---- Attributes -------------------------------------------------------------

/// An array-of-integers attribute with one entry per dimension at most.
/// *out_n = -1 when absent and optional.
static eddy_status_t attr_ints(const eddy_op_t *op, const char *name,
                               bool optional, int64_t *out, int32_t *out_n) {
  *out_n = -1;
  const eddy_attr_t *a = eddy_ir_op_attr(op, name);
  if (!a) {
    if (optional)
      return NULL;
    return eddy_eval_op_error(op, EDDY_ERR_INVALID_ARGUMENT,
                              "requires attribute '%s'", name);
  }
  int64_t n = eddy_ir_attr_as_i64_array(a, out, EDDY_RT_MAX_RANK);
  if (n < 0)
    return eddy_eval_op_error(op, EDDY_ERR_INVALID_ARGUMENT,
                              "attribute '%s' must be an array of integers",
                              name);
  if (n > EDDY_RT_MAX_RANK)
    return eddy_eval_op_error(op, EDDY_ERR_UNSUPPORTED,
                              "attribute '%s' has %lld entries; the runtime "
                              "supports at most %d dimensions",
                              name, (long long)n, EDDY_RT_MAX_RANK);
  *out_n = (int32_t)n;
  return NULL;
}

static eddy_status_t attr_int(const eddy_op_t *op, const char *name,
                              int64_t *out) {
  const eddy_attr_t *a = eddy_ir_op_attr(op, name);
  if (!a || a->kind != EDDY_ATTR_INT)
    return eddy_eval_op_error(op, EDDY_ERR_INVALID_ARGUMENT,
                              "requires integer attribute '%s'", name);
  *out = a->u.i;
  return NULL;
}

/// The dims of a declared static tensor type (iota).
static eddy_status_t static_dims(const eddy_op_t *op, const eddy_type_t *t) {
  if (!eddy_ir_type_is_static(t))
    return eddy_eval_op_error(op, EDDY_ERR_INVALID_ARGUMENT,
                              "needs a static result type");
  if (t->rank > EDDY_RT_MAX_RANK)
    return eddy_eval_op_error(op, EDDY_ERR_UNSUPPORTED,
                              "has rank %d; the runtime supports at most %d",
                              t->rank, EDDY_RT_MAX_RANK);
  return NULL;
}

/// Nesting depth (0: a list of tensors), dtype and element shape of the
/// innermost tensors of a declared list type.
static eddy_status_t list_elem(const eddy_op_t *op, const eddy_type_t *lt,
                               int32_t *out_depth, int32_t *out_dtype,
                               eddy_rt_elem_shape_t *out_shape) {
  if (!lt || lt->kind != EDDY_TYPE_LIST || !lt->elem)
    return eddy_eval_op_error(op, EDDY_ERR_INTERNAL,
                              "expected a TensorList type");
  const eddy_type_t *e = lt->elem;
  int32_t depth = 0;
  while (e->kind == EDDY_TYPE_LIST && e->elem) {
    if (++depth > EDDY_RT_MAX_LIST_DEPTH)
      return eddy_eval_op_error(op, EDDY_ERR_UNSUPPORTED,
                                "lists nested more than %d deep exceed the "
                                "runtime's limit",
                                EDDY_RT_MAX_LIST_DEPTH);
    e = e->elem;
  }
  if (e->kind != EDDY_TYPE_TENSOR)
    return eddy_eval_op_error(op, EDDY_ERR_INTERNAL,
                              "expected a TensorList of tensors");
  *out_depth = depth;
  *out_dtype = (int32_t)e->dtype;
  if (!eddy_rt_elem_shape_make(e->rank, e->dims, out_shape))
    return eddy_eval_op_error(op, EDDY_ERR_UNSUPPORTED,
                              "list elements of rank %d exceed the runtime's "
                              "limit of %d",
                              e->rank, EDDY_RT_MAX_RANK);
  return NULL;
}

static eddy_status_t put_tensor(eddy_eval_value_t *out, eddy_rt_tensor_t *t) {
  *out = eddy_eval_value_from_tensor(t);
  return NULL;
}

static eddy_status_t put_list(eddy_eval_value_t *out, eddy_rt_list_t *l) {
  *out = eddy_eval_value_from_list(l);
  return NULL;
}

/// ---- core: creation -----------------------------------------------------------

/// The dense attribute as a new owned tensor.
static eddy_status_t materialize(eval_state_t *s, const eddy_op_t *op,
                                 const eddy_attr_t *a, eddy_rt_tensor_t *out) {
  const eddy_type_t *t = a->type;
  EDDY_RETURN_IF_ERROR(static_dims(op, t));
  size_t elem = eddy_dtype_size(t->dtype);
  eddy_rt_tensor_t view = eddy_rt_tensor_empty();
  if (a->u.dense.splat || t->rank == 0) {
    if (a->u.dense.nbytes < elem)
      return eddy_eval_op_error(op, EDDY_ERR_INTERNAL, "malformed constant");
    RT(eddy_rt_tensor_wrap((int32_t)t->dtype, 0, NULL,
                           (void *)a->u.dense.data, &view));
    if (t->rank == 0)
      RT(eddy_rt_copy(s->rt, &view, out));
    else
      RT(eddy_rt_broadcast_to(s->rt, &view, t->dims, t->rank, out));
    return NULL;
  }
  int64_t n = eddy_ir_type_num_elements(t), bytes = 0;
  if (n < 0 || !eddy_checked_mul_i64(n, (int64_t)elem, &bytes) ||
      (uint64_t)bytes != a->u.dense.nbytes)
    return eddy_eval_op_error(op, EDDY_ERR_INTERNAL, "malformed constant");
  RT(eddy_rt_tensor_wrap((int32_t)t->dtype, t->rank, t->dims,
                         (void *)a->u.dense.data, &view));
  RT(eddy_rt_copy(s->rt, &view, out));
  return NULL;
}

/// Constants are materialized once per run and shared after that (tensors
/// whose buffer has several references are never written).
static eddy_status_t h_constant(eval_state_t *s, eval_frame_t *f,
                                const eval_handler_t *h, const eddy_op_t *op,
                                const eddy_eval_value_t *const *operands,
                                eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  (void)operands;
  eddy_rt_tensor_t *cached = eddy_ptrmap_get(&s->consts, op);
  if (!cached) {
    const eddy_attr_t *a = eddy_ir_op_attr(op, "value");
    if (!a || a->kind != EDDY_ATTR_DENSE)
      return eddy_eval_op_error(op, EDDY_ERR_INVALID_ARGUMENT,
                                "requires a dense attribute 'value'");
    eddy_rt_tensor_t t = eddy_rt_tensor_empty();
    EDDY_RETURN_IF_ERROR(materialize(s, op, a, &t));
    cached = malloc(sizeof(*cached));
    if (!cached) {
      eddy_rt_tensor_release(&t);
      return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
    }
    *cached = t;
    eddy_ptrmap_put(&s->consts, op, cached);
  }
  eddy_rt_tensor_t t;
  eddy_rt_tensor_share(cached, &t);
  return put_tensor(&out[0], &t);
}

static eddy_status_t h_iota(eval_state_t *s, eval_frame_t *f,
                            const eval_handler_t *h, const eddy_op_t *op,
                            const eddy_eval_value_t *const *operands,
                            eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  (void)operands;
  const eddy_type_t *t = op->results[0].type;
  EDDY_RETURN_IF_ERROR(static_dims(op, t));
  int64_t dim = 0;
  EDDY_RETURN_IF_ERROR(attr_int(op, "dimension", &dim));
  eddy_rt_tensor_t r = eddy_rt_tensor_empty();
  RT(eddy_rt_iota(s->rt, (int32_t)t->dtype, t->rank, t->dims, dim, &r));
  return put_tensor(&out[0], &r);
}

/// ---- core: elementwise ----------------------------------------------------------

static eddy_status_t h_unary(eval_state_t *s, eval_frame_t *f,
                             const eval_handler_t *h, const eddy_op_t *op,
                             const eddy_eval_value_t *const *operands,
                             eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  eddy_rt_tensor_t r = eddy_rt_tensor_empty();
  RT(eddy_rt_unary(s->rt, (eddy_rt_unary_op_t)h->code, TENSOR(0), &r));
  return put_tensor(&out[0], &r);
}

/// The operand itself, its buffer shared (stop_gradient).
static eddy_status_t h_identity(eval_state_t *s, eval_frame_t *f,
                                const eval_handler_t *h, const eddy_op_t *op,
                                const eddy_eval_value_t *const *operands,
                                eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  eddy_rt_tensor_t t;
  eddy_rt_tensor_share(TENSOR(0), &t);
  return put_tensor(&out[0], &t);
}

static eddy_status_t h_binary(eval_state_t *s, eval_frame_t *f,
                              const eval_handler_t *h, const eddy_op_t *op,
                              const eddy_eval_value_t *const *operands,
                              eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  eddy_rt_tensor_t r = eddy_rt_tensor_empty();
  RT(eddy_rt_binary(s->rt, (eddy_rt_binary_op_t)h->code, TENSOR(0),
                    TENSOR(1), &r));
  return put_tensor(&out[0], &r);
}

static eddy_status_t h_compare(eval_state_t *s, eval_frame_t *f,
                               const eval_handler_t *h, const eddy_op_t *op,
                               const eddy_eval_value_t *const *operands,
                               eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  eddy_rt_tensor_t r = eddy_rt_tensor_empty();
  RT(eddy_rt_compare(s->rt, (eddy_rt_compare_op_t)h->code, TENSOR(0),
                     TENSOR(1), &r));
  return put_tensor(&out[0], &r);
}

static eddy_status_t h_logical(eval_state_t *s, eval_frame_t *f,
                               const eval_handler_t *h, const eddy_op_t *op,
                               const eddy_eval_value_t *const *operands,
                               eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  eddy_rt_tensor_t r = eddy_rt_tensor_empty();
  RT(eddy_rt_logical(s->rt, (eddy_rt_logical_op_t)h->code, TENSOR(0),
                     TENSOR(1), &r));
  return put_tensor(&out[0], &r);
}

static eddy_status_t h_not(eval_state_t *s, eval_frame_t *f,
                           const eval_handler_t *h, const eddy_op_t *op,
                           const eddy_eval_value_t *const *operands,
                           eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  eddy_rt_tensor_t r = eddy_rt_tensor_empty();
  RT(eddy_rt_logical_not(s->rt, TENSOR(0), &r));
  return put_tensor(&out[0], &r);
}

static eddy_status_t h_select(eval_state_t *s, eval_frame_t *f,
                              const eval_handler_t *h, const eddy_op_t *op,
                              const eddy_eval_value_t *const *operands,
                              eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  eddy_rt_tensor_t r = eddy_rt_tensor_empty();
  RT(eddy_rt_select(s->rt, TENSOR(0), TENSOR(1), TENSOR(2), &r));
  return put_tensor(&out[0], &r);
}

static eddy_status_t h_cast(eval_state_t *s, eval_frame_t *f,
                            const eval_handler_t *h, const eddy_op_t *op,
                            const eddy_eval_value_t *const *operands,
                            eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  const eddy_attr_t *a = eddy_ir_op_attr(op, "dtype");
  eddy_dtype_t dt;
  if (!a || a->kind != EDDY_ATTR_STRING ||
      !eddy_dtype_from_name(a->u.str.data, a->u.str.len, &dt))
    return eddy_eval_op_error(op, EDDY_ERR_INVALID_ARGUMENT,
                              "requires a dtype name in attribute 'dtype'");
  eddy_rt_tensor_t r = eddy_rt_tensor_empty();
  RT(eddy_rt_cast(s->rt, TENSOR(0), (int32_t)dt, &r));
  return put_tensor(&out[0], &r);
}

/// ---- core: linear algebra and reductions -------------------------------------------

static eddy_status_t h_matmul(eval_state_t *s, eval_frame_t *f,
                              const eval_handler_t *h, const eddy_op_t *op,
                              const eddy_eval_value_t *const *operands,
                              eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  bool ta = eddy_ir_op_attr_bool(op, "transpose_a", false);
  bool tb = eddy_ir_op_attr_bool(op, "transpose_b", false);
  eddy_rt_tensor_t r = eddy_rt_tensor_empty();
  RT(eddy_rt_matmul(s->rt, TENSOR(0), TENSOR(1), ta, tb, &r));
  return put_tensor(&out[0], &r);
}

static eddy_status_t h_reduce(eval_state_t *s, eval_frame_t *f,
                              const eval_handler_t *h, const eddy_op_t *op,
                              const eddy_eval_value_t *const *operands,
                              eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  int64_t axes[EDDY_RT_MAX_RANK];
  int32_t n = 0;
  EDDY_RETURN_IF_ERROR(attr_ints(op, "axes", false, axes, &n));
  bool keep = eddy_ir_op_attr_bool(op, "keepdims", false);
  eddy_rt_tensor_t r = eddy_rt_tensor_empty();
  RT(eddy_rt_reduce(s->rt, (eddy_rt_reduce_op_t)h->code, TENSOR(0), axes, n,
                    keep, &r));
  return put_tensor(&out[0], &r);
}

/// ---- core: shape manipulation --------------------------------------------------------

static eddy_status_t h_reshape(eval_state_t *s, eval_frame_t *f,
                               const eval_handler_t *h, const eddy_op_t *op,
                               const eddy_eval_value_t *const *operands,
                               eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  int64_t shape[EDDY_RT_MAX_RANK];
  int32_t n = 0;
  EDDY_RETURN_IF_ERROR(attr_ints(op, "shape", false, shape, &n));
  // Dim operands: the -1 entries, in order (a -1 value is still inferred).
  for (int32_t i = 0, k = 1; op->num_operands > 1 && i < n; i++) {
    if (shape[i] != -1)
      continue;
    if ((uint32_t)k >= op->num_operands || eddy_rt_tensor_numel(TENSOR(k)) != 1)
      return eddy_ir_op_error(op, "expects one scalar dim operand per -1 "
                                  "entry of 'shape'");
    shape[i] = eddy_rt_tensor_get_i64(TENSOR(k), 0);
    k++;
  }
  eddy_rt_tensor_t r = eddy_rt_tensor_empty();
  RT(eddy_rt_reshape(s->rt, TENSOR(0), shape, n, &r));
  return put_tensor(&out[0], &r);
}

static eddy_status_t h_transpose(eval_state_t *s, eval_frame_t *f,
                                 const eval_handler_t *h, const eddy_op_t *op,
                                 const eddy_eval_value_t *const *operands,
                                 eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  int64_t perm[EDDY_RT_MAX_RANK];
  int32_t n = 0;
  EDDY_RETURN_IF_ERROR(attr_ints(op, "perm", false, perm, &n));
  eddy_rt_tensor_t r = eddy_rt_tensor_empty();
  RT(eddy_rt_transpose(s->rt, TENSOR(0), perm, n, &r));
  return put_tensor(&out[0], &r);
}

static eddy_status_t h_broadcast_to(eval_state_t *s, eval_frame_t *f,
                                    const eval_handler_t *h,
                                    const eddy_op_t *op,
                                    const eddy_eval_value_t *const *operands,
                                    eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  int64_t shape[EDDY_RT_MAX_RANK];
  int32_t n = 0;
  EDDY_RETURN_IF_ERROR(attr_ints(op, "shape", false, shape, &n));
  eddy_rt_tensor_t r = eddy_rt_tensor_empty();
  RT(eddy_rt_broadcast_to(s->rt, TENSOR(0), shape, n, &r));
  return put_tensor(&out[0], &r);
}

static eddy_status_t h_concat(eval_state_t *s, eval_frame_t *f,
                              const eval_handler_t *h, const eddy_op_t *op,
                              const eddy_eval_value_t *const *operands,
                              eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  int64_t axis = 0;
  EDDY_RETURN_IF_ERROR(attr_int(op, "axis", &axis));
  uint32_t n = op->num_operands;
  if (n == 0 || n > INT32_MAX)
    return eddy_eval_op_error(op, EDDY_ERR_INVALID_ARGUMENT,
                              "needs at least one operand");
  const eddy_rt_tensor_t **xs = malloc(n * sizeof(*xs));
  if (!xs)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  for (uint32_t i = 0; i < n; i++)
    xs[i] = TENSOR(i);
  eddy_rt_tensor_t r = eddy_rt_tensor_empty();
  eddy_status_t st = eddy_eval_op_rt_error(
      op, eddy_rt_concat(s->rt, xs, (int32_t)n, axis, &r));
  free(xs);
  EDDY_RETURN_IF_ERROR(st);
  return put_tensor(&out[0], &r);
}

static eddy_status_t h_split(eval_state_t *s, eval_frame_t *f,
                             const eval_handler_t *h, const eddy_op_t *op,
                             const eddy_eval_value_t *const *operands,
                             eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  int64_t axis = 0, parts = 0;
  EDDY_RETURN_IF_ERROR(attr_int(op, "axis", &axis));
  EDDY_RETURN_IF_ERROR(attr_int(op, "num_splits", &parts));
  if (parts != (int64_t)op->num_results || parts < 1)
    return eddy_eval_op_error(op, EDDY_ERR_INVALID_ARGUMENT,
                              "num_splits %lld does not match its %u results",
                              (long long)parts, op->num_results);
  eddy_rt_tensor_t *rs = malloc((size_t)parts * sizeof(*rs));
  if (!rs)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  eddy_status_t st = eddy_eval_op_rt_error(
      op, eddy_rt_split(s->rt, TENSOR(0), axis, (int32_t)parts, rs));
  for (int64_t i = 0; i < parts && !st; i++)
    out[i] = eddy_eval_value_from_tensor(&rs[i]);
  free(rs);
  return st;
}

static eddy_status_t h_slice(eval_state_t *s, eval_frame_t *f,
                             const eval_handler_t *h, const eddy_op_t *op,
                             const eddy_eval_value_t *const *operands,
                             eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  int64_t start[EDDY_RT_MAX_RANK], limit[EDDY_RT_MAX_RANK],
      strides[EDDY_RT_MAX_RANK];
  int32_t ns = 0, nl = 0, nst = 0;
  EDDY_RETURN_IF_ERROR(attr_ints(op, "start", false, start, &ns));
  EDDY_RETURN_IF_ERROR(attr_ints(op, "limit", false, limit, &nl));
  EDDY_RETURN_IF_ERROR(attr_ints(op, "strides", true, strides, &nst));
  if (nl != ns || (nst >= 0 && nst != ns))
    return eddy_eval_op_error(op, EDDY_ERR_INVALID_ARGUMENT,
                              "start, limit and strides differ in length");
  eddy_rt_tensor_t r = eddy_rt_tensor_empty();
  RT(eddy_rt_slice(s->rt, TENSOR(0), start, limit, nst >= 0 ? strides : NULL,
                   ns, &r));
  return put_tensor(&out[0], &r);
}

static eddy_status_t h_gather(eval_state_t *s, eval_frame_t *f,
                              const eval_handler_t *h, const eddy_op_t *op,
                              const eddy_eval_value_t *const *operands,
                              eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  int64_t axis = 0;
  EDDY_RETURN_IF_ERROR(attr_int(op, "axis", &axis));
  eddy_rt_tensor_t r = eddy_rt_tensor_empty();
  RT(eddy_rt_gather(s->rt, TENSOR(0), TENSOR(1), axis, &r));
  return put_tensor(&out[0], &r);
}

static eddy_status_t h_pad(eval_state_t *s, eval_frame_t *f,
                           const eval_handler_t *h, const eddy_op_t *op,
                           const eddy_eval_value_t *const *operands,
                           eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  int64_t low[EDDY_RT_MAX_RANK], high[EDDY_RT_MAX_RANK];
  int32_t nlow = 0, nhigh = 0;
  EDDY_RETURN_IF_ERROR(attr_ints(op, "low", false, low, &nlow));
  EDDY_RETURN_IF_ERROR(attr_ints(op, "high", false, high, &nhigh));
  if (nlow != nhigh)
    return eddy_eval_op_error(op, EDDY_ERR_INVALID_ARGUMENT,
                              "low and high differ in length");
  eddy_rt_tensor_t r = eddy_rt_tensor_empty();
  RT(eddy_rt_pad(s->rt, TENSOR(0), TENSOR(1), low, high, nlow, &r));
  return put_tensor(&out[0], &r);
}

static eddy_status_t h_shape(eval_state_t *s, eval_frame_t *f,
                             const eval_handler_t *h, const eddy_op_t *op,
                             const eddy_eval_value_t *const *operands,
                             eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  eddy_rt_tensor_t r = eddy_rt_tensor_empty();
  RT(eddy_rt_shape(s->rt, TENSOR(0), &r));
  return put_tensor(&out[0], &r);
}

static eddy_status_t h_dim(eval_state_t *s, eval_frame_t *f,
                           const eval_handler_t *h, const eddy_op_t *op,
                           const eddy_eval_value_t *const *operands,
                           eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  int64_t index = 0;
  EDDY_RETURN_IF_ERROR(attr_int(op, "index", &index));
  eddy_rt_tensor_t r = eddy_rt_tensor_empty();
  RT(eddy_rt_dim(s->rt, TENSOR(0), index, &r));
  return put_tensor(&out[0], &r);
}

static eddy_status_t h_range(eval_state_t *s, eval_frame_t *f,
                             const eval_handler_t *h, const eddy_op_t *op,
                             const eddy_eval_value_t *const *operands,
                             eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  eddy_rt_tensor_t r = eddy_rt_tensor_empty();
  RT(eddy_rt_range(s->rt, TENSOR(0), TENSOR(1), TENSOR(2), &r));
  return put_tensor(&out[0], &r);
}

/// ---- tl --------------------------------------------------------------------------

static eddy_status_t h_tl_empty(eval_state_t *s, eval_frame_t *f,
                                const eval_handler_t *h, const eddy_op_t *op,
                                const eddy_eval_value_t *const *operands,
                                eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  (void)operands;
  int32_t depth = 0, dt = 0;
  eddy_rt_elem_shape_t es;
  EDDY_RETURN_IF_ERROR(list_elem(op, op->results[0].type, &depth, &dt, &es));
  int64_t max = eddy_ir_op_attr_int(op, "max_elements", -1);
  eddy_rt_list_t *l = NULL;
  RT(eddy_rt_list_empty_nested(s->rt, depth, dt, &es, max, &l));
  return put_list(&out[0], l);
}

static eddy_status_t h_tl_reserve(eval_state_t *s, eval_frame_t *f,
                                  const eval_handler_t *h, const eddy_op_t *op,
                                  const eddy_eval_value_t *const *operands,
                                  eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  int32_t depth = 0, dt = 0;
  eddy_rt_elem_shape_t es;
  EDDY_RETURN_IF_ERROR(list_elem(op, op->results[0].type, &depth, &dt, &es));
  eddy_rt_list_t *l = NULL;
  RT(eddy_rt_list_reserve_nested(s->rt, depth, dt, &es, TENSOR(0), &l));
  return put_list(&out[0], l);
}

static eddy_status_t h_tl_push_back(eval_state_t *s, eval_frame_t *f,
                                    const eval_handler_t *h,
                                    const eddy_op_t *op,
                                    const eddy_eval_value_t *const *operands,
                                    eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  const eddy_eval_value_t *x = operands[1];
  eddy_rt_list_t *owned = NULL, *l = NULL;
  EDDY_RETURN_IF_ERROR(eddy_eval_take_list(s, f, op, 0, &owned));
  if (x->kind == EDDY_EVAL_LIST)
    RT(eddy_rt_list_push_back_list(s->rt, owned, x->list, &l));
  else
    RT(eddy_rt_list_push_back(s->rt, owned, &x->tensor, &l));
  return put_list(&out[0], l);
}

static eddy_status_t h_tl_pop_back(eval_state_t *s, eval_frame_t *f,
                                   const eval_handler_t *h,
                                   const eddy_op_t *op,
                                   const eddy_eval_value_t *const *operands,
                                   eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  (void)operands;
  eddy_rt_list_t *owned = NULL, *l = NULL;
  eddy_rt_tensor_t x = eddy_rt_tensor_empty();
  EDDY_RETURN_IF_ERROR(eddy_eval_take_list(s, f, op, 0, &owned));
  if (eddy_rt_list_depth(owned) > 0) {
    eddy_rt_list_t *item = NULL;
    RT(eddy_rt_list_pop_back_list(s->rt, owned, &l, &item));
    put_list(&out[0], l);
    return put_list(&out[1], item);
  }
  RT(eddy_rt_list_pop_back(s->rt, owned, &l, &x));
  put_list(&out[0], l);
  return put_tensor(&out[1], &x);
}

static eddy_status_t h_tl_get_item(eval_state_t *s, eval_frame_t *f,
                                   const eval_handler_t *h,
                                   const eddy_op_t *op,
                                   const eddy_eval_value_t *const *operands,
                                   eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  eddy_rt_tensor_t r = eddy_rt_tensor_empty();
  if (eddy_rt_list_depth(operands[0]->list) > 0) {
    eddy_rt_list_t *item = NULL;
    RT(eddy_rt_list_get_item_list(s->rt, operands[0]->list, TENSOR(1),
                                  &item));
    return put_list(&out[0], item);
  }
  RT(eddy_rt_list_get_item(s->rt, operands[0]->list, TENSOR(1), &r));
  return put_tensor(&out[0], &r);
}

static eddy_status_t h_tl_set_item(eval_state_t *s, eval_frame_t *f,
                                   const eval_handler_t *h,
                                   const eddy_op_t *op,
                                   const eddy_eval_value_t *const *operands,
                                   eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  const eddy_rt_tensor_t *index = TENSOR(1);
  const eddy_eval_value_t *x = operands[2];
  eddy_rt_list_t *owned = NULL, *l = NULL;
  EDDY_RETURN_IF_ERROR(eddy_eval_take_list(s, f, op, 0, &owned));
  if (x->kind == EDDY_EVAL_LIST)
    RT(eddy_rt_list_set_item_list(s->rt, owned, index, x->list, &l));
  else
    RT(eddy_rt_list_set_item(s->rt, owned, index, &x->tensor, &l));
  return put_list(&out[0], l);
}

static eddy_status_t h_tl_length(eval_state_t *s, eval_frame_t *f,
                                 const eval_handler_t *h, const eddy_op_t *op,
                                 const eddy_eval_value_t *const *operands,
                                 eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  eddy_rt_tensor_t r = eddy_rt_tensor_empty();
  RT(eddy_rt_list_length(s->rt, operands[0]->list, &r));
  return put_tensor(&out[0], &r);
}

static eddy_status_t h_tl_stack(eval_state_t *s, eval_frame_t *f,
                                const eval_handler_t *h, const eddy_op_t *op,
                                const eddy_eval_value_t *const *operands,
                                eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  eddy_rt_tensor_t r = eddy_rt_tensor_empty();
  RT(eddy_rt_list_stack(s->rt, operands[0]->list, &r));
  return put_tensor(&out[0], &r);
}

static eddy_status_t h_tl_from_tensor(eval_state_t *s, eval_frame_t *f,
                                      const eval_handler_t *h,
                                      const eddy_op_t *op,
                                      const eddy_eval_value_t *const *operands,
                                      eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  int32_t depth = 0, dt = 0;
  eddy_rt_elem_shape_t es;
  EDDY_RETURN_IF_ERROR(list_elem(op, op->results[0].type, &depth, &dt, &es));
  if (depth > 0)
    return eddy_eval_op_error(op, EDDY_ERR_INVALID_ARGUMENT,
                              "cannot unstack a tensor into a list of lists");
  eddy_rt_list_t *l = NULL;
  // The declared element shape becomes the list's (as TensorFlow's
  // element_shape input); the kernel checks the slices against it.
  RT(eddy_rt_list_from_tensor(s->rt, TENSOR(0), &es, &l));
  return put_list(&out[0], l);
}

static eddy_status_t h_tl_resize(eval_state_t *s, eval_frame_t *f,
                                 const eval_handler_t *h, const eddy_op_t *op,
                                 const eddy_eval_value_t *const *operands,
                                 eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  eddy_rt_list_t *owned = NULL, *l = NULL;
  EDDY_RETURN_IF_ERROR(eddy_eval_take_list(s, f, op, 0, &owned));
  RT(eddy_rt_list_resize(s->rt, owned, TENSOR(1), &l));
  return put_list(&out[0], l);
}

static eddy_status_t h_tl_scatter(eval_state_t *s, eval_frame_t *f,
                                  const eval_handler_t *h, const eddy_op_t *op,
                                  const eddy_eval_value_t *const *operands,
                                  eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  eddy_rt_list_t *owned = NULL, *l = NULL;
  EDDY_RETURN_IF_ERROR(eddy_eval_take_list(s, f, op, 0, &owned));
  RT(eddy_rt_list_scatter(s->rt, owned, TENSOR(1), TENSOR(2), &l));
  return put_list(&out[0], l);
}

static eddy_status_t h_tl_concat(eval_state_t *s, eval_frame_t *f,
                                 const eval_handler_t *h, const eddy_op_t *op,
                                 const eddy_eval_value_t *const *operands,
                                 eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  eddy_rt_tensor_t r = eddy_rt_tensor_empty(), n = eddy_rt_tensor_empty();
  RT(eddy_rt_list_concat(s->rt, operands[0]->list, &r, &n));
  put_tensor(&out[0], &r);
  return put_tensor(&out[1], &n);
}

static eddy_status_t h_tl_split(eval_state_t *s, eval_frame_t *f,
                                const eval_handler_t *h, const eddy_op_t *op,
                                const eddy_eval_value_t *const *operands,
                                eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  int32_t depth = 0, dt = 0;
  eddy_rt_elem_shape_t es;
  EDDY_RETURN_IF_ERROR(list_elem(op, op->results[0].type, &depth, &dt, &es));
  if (depth > 0)
    return eddy_eval_op_error(op, EDDY_ERR_INVALID_ARGUMENT,
                              "cannot split a tensor into a list of lists");
  eddy_rt_list_t *l = NULL;
  RT(eddy_rt_list_split(s->rt, TENSOR(0), TENSOR(1), &es, &l));
  return put_list(&out[0], l);
}

static eddy_status_t h_tl_add(eval_state_t *s, eval_frame_t *f,
                              const eval_handler_t *h, const eddy_op_t *op,
                              const eddy_eval_value_t *const *operands,
                              eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  // Operand 1 is borrowed before operand 0 is taken: both may be one list.
  eddy_rt_list_t *other = operands[1]->list, *owned = NULL, *l = NULL;
  eddy_rt_list_retain(other);
  eddy_status_t est = eddy_eval_take_list(s, f, op, 0, &owned);
  if (est) {
    eddy_rt_list_release(other);
    return est;
  }
  eddy_rt_status_t rs = eddy_rt_list_add(s->rt, owned, other, &l);
  eddy_rt_list_release(other);
  if (rs)
    return eddy_eval_op_rt_error(op, rs);
  return put_list(&out[0], l);
}

static eddy_status_t h_tl_zeros_like(eval_state_t *s, eval_frame_t *f,
                                     const eval_handler_t *h,
                                     const eddy_op_t *op,
                                     const eddy_eval_value_t *const *operands,
                                     eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  eddy_rt_list_t *l = NULL;
  RT(eddy_rt_list_zeros_like(s->rt, operands[0]->list, &l));
  return put_list(&out[0], l);
}

/// ---- The table ------------------------------------------------------------------

static eddy_status_t h_reverse(eval_state_t *s, eval_frame_t *f,
                               const eval_handler_t *h, const eddy_op_t *op,
                               const eddy_eval_value_t *const *operands,
                               eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  int64_t axes[EDDY_RT_MAX_RANK];
  int32_t n = 0;
  EDDY_RETURN_IF_ERROR(attr_ints(op, "axes", false, axes, &n));
  eddy_rt_tensor_t r = eddy_rt_tensor_empty();
  RT(eddy_rt_reverse(s->rt, TENSOR(0), axes, n, &r));
  return put_tensor(&out[0], &r);
}

/// argmax (code 1) / argmin (code 0).
static eddy_status_t h_arg(eval_state_t *s, eval_frame_t *f,
                           const eval_handler_t *h, const eddy_op_t *op,
                           const eddy_eval_value_t *const *operands,
                           eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  int64_t axis = 0;
  EDDY_RETURN_IF_ERROR(attr_int(op, "axis", &axis));
  eddy_rt_tensor_t r = eddy_rt_tensor_empty();
  RT(eddy_rt_arg(s->rt, h->code != 0, TENSOR(0), axis,
                 (int32_t)op->results[0].type->dtype, &r));
  return put_tensor(&out[0], &r);
}

/// cumprod (code 1) / cumsum (code 0).
static eddy_status_t h_cumulative(eval_state_t *s, eval_frame_t *f,
                                  const eval_handler_t *h, const eddy_op_t *op,
                                  const eddy_eval_value_t *const *operands,
                                  eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  int64_t axis = 0;
  EDDY_RETURN_IF_ERROR(attr_int(op, "axis", &axis));
  eddy_rt_tensor_t r = eddy_rt_tensor_empty();
  RT(eddy_rt_cumulative(s->rt, h->code != 0, TENSOR(0), axis,
                        eddy_ir_op_attr_bool(op, "exclusive", false),
                        eddy_ir_op_attr_bool(op, "reverse", false), &r));
  return put_tensor(&out[0], &r);
}

static eddy_status_t h_scatter(eval_state_t *s, eval_frame_t *f,
                               const eval_handler_t *h, const eddy_op_t *op,
                               const eddy_eval_value_t *const *operands,
                               eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  int64_t axis = 0, size = 0;
  EDDY_RETURN_IF_ERROR(attr_int(op, "axis", &axis));
  EDDY_RETURN_IF_ERROR(attr_int(op, "size", &size));
  // size -1: the size operand, read at run time.
  if (size == -1) {
    if (op->num_operands != 3 || eddy_rt_tensor_numel(TENSOR(2)) != 1)
      return eddy_ir_op_error(op, "expects a scalar size operand when "
                                  "'size' is -1");
    size = eddy_rt_tensor_get_i64(TENSOR(2), 0);
  }
  eddy_rt_tensor_t r = eddy_rt_tensor_empty();
  RT(eddy_rt_scatter(s->rt, TENSOR(0), TENSOR(1), axis, size, &r));
  return put_tensor(&out[0], &r);
}

static eddy_status_t h_topk(eval_state_t *s, eval_frame_t *f,
                            const eval_handler_t *h, const eddy_op_t *op,
                            const eddy_eval_value_t *const *operands,
                            eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  int64_t k = 0;
  EDDY_RETURN_IF_ERROR(attr_int(op, "k", &k));
  eddy_rt_tensor_t rs[2];
  RT(eddy_rt_topk(s->rt, TENSOR(0), k, rs));
  out[0] = eddy_eval_value_from_tensor(&rs[0]);
  out[1] = eddy_eval_value_from_tensor(&rs[1]);
  return NULL;
}

static eddy_status_t h_where(eval_state_t *s, eval_frame_t *f,
                             const eval_handler_t *h, const eddy_op_t *op,
                             const eddy_eval_value_t *const *operands,
                             eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  eddy_rt_tensor_t r = eddy_rt_tensor_empty();
  RT(eddy_rt_where(s->rt, TENSOR(0), TENSOR(1), &r));
  return put_tensor(&out[0], &r);
}

/// The sliding-window ops; code is their eddy_rt_window_op_t.
static eddy_status_t h_window(eval_state_t *s, eval_frame_t *f,
                              const eval_handler_t *h, const eddy_op_t *op,
                              const eddy_eval_value_t *const *operands,
                              eddy_eval_value_t *out) {
  UNUSED_HANDLER_ARGS;
  eddy_core_window_t cw;
  if (!eddy_core_window_get(op, &cw))
    return eddy_eval_op_error(op, EDDY_ERR_INTERNAL,
                              "is not a sliding-window op");
  eddy_rt_window_t w;
  memcpy(w.size, cw.size, sizeof w.size);
  memcpy(w.strides, cw.strides, sizeof w.strides);
  memcpy(w.dilations, cw.dilations, sizeof w.dilations);
  memcpy(w.pads, cw.pads, sizeof w.pads);
  int64_t size[EDDY_RT_MAX_RANK] = {0, 0};
  int32_t n = 0;
  EDDY_RETURN_IF_ERROR(attr_ints(op, "input_size", true, size, &n));
  eddy_rt_tensor_t r = eddy_rt_tensor_empty();
  RT(eddy_rt_window(s->rt, (eddy_rt_window_op_t)h->code, TENSOR(0),
                    op->num_operands > 1 ? TENSOR(1) : NULL, &w, size, &r));
  return put_tensor(&out[0], &r);
}

/// Indexed by opcode: the handler of every core, ctl and tl op the evaluator
/// runs, and for the others the reason it does not (tests/unit/eval/
/// test_eval_table.c holds every opcode to one or the other).
static const eval_handler_t k_handlers[EDDY_OP_COUNT_] = {
    [EDDY_OP_CORE_CONSTANT] = {h_constant, 0},
    [EDDY_OP_CORE_IOTA] = {h_iota, 0},
    [EDDY_OP_CORE_NEG] = {h_unary, EDDY_RT_UNARY_NEG},
    [EDDY_OP_CORE_ABS] = {h_unary, EDDY_RT_UNARY_ABS},
    [EDDY_OP_CORE_EXP] = {h_unary, EDDY_RT_UNARY_EXP},
    [EDDY_OP_CORE_LOG] = {h_unary, EDDY_RT_UNARY_LOG},
    [EDDY_OP_CORE_LOG1P] = {h_unary, EDDY_RT_UNARY_LOG1P},
    [EDDY_OP_CORE_TANH] = {h_unary, EDDY_RT_UNARY_TANH},
    [EDDY_OP_CORE_SIGMOID] = {h_unary, EDDY_RT_UNARY_SIGMOID},
    [EDDY_OP_CORE_RELU] = {h_unary, EDDY_RT_UNARY_RELU},
    [EDDY_OP_CORE_SQRT] = {h_unary, EDDY_RT_UNARY_SQRT},
    [EDDY_OP_CORE_RSQRT] = {h_unary, EDDY_RT_UNARY_RSQRT},
    [EDDY_OP_CORE_SQUARE] = {h_unary, EDDY_RT_UNARY_SQUARE},
    [EDDY_OP_CORE_FLOOR] = {h_unary, EDDY_RT_UNARY_FLOOR},
    [EDDY_OP_CORE_SIGN] = {h_unary, EDDY_RT_UNARY_SIGN},
    [EDDY_OP_CORE_SIN] = {h_unary, EDDY_RT_UNARY_SIN},
    [EDDY_OP_CORE_COS] = {h_unary, EDDY_RT_UNARY_COS},
    [EDDY_OP_CORE_TAN] = {h_unary, EDDY_RT_UNARY_TAN},
    [EDDY_OP_CORE_ASIN] = {h_unary, EDDY_RT_UNARY_ASIN},
    [EDDY_OP_CORE_ACOS] = {h_unary, EDDY_RT_UNARY_ACOS},
    [EDDY_OP_CORE_ATAN] = {h_unary, EDDY_RT_UNARY_ATAN},
    [EDDY_OP_CORE_SINH] = {h_unary, EDDY_RT_UNARY_SINH},
    [EDDY_OP_CORE_COSH] = {h_unary, EDDY_RT_UNARY_COSH},
    [EDDY_OP_CORE_ERF] = {h_unary, EDDY_RT_UNARY_ERF},
    [EDDY_OP_CORE_EXPM1] = {h_unary, EDDY_RT_UNARY_EXPM1},
    [EDDY_OP_CORE_CEIL] = {h_unary, EDDY_RT_UNARY_CEIL},
    [EDDY_OP_CORE_ROUND] = {h_unary, EDDY_RT_UNARY_ROUND},
    [EDDY_OP_CORE_STOP_GRADIENT] = {h_identity, 0},
    [EDDY_OP_CORE_ADD] = {h_binary, EDDY_RT_BINARY_ADD},
    [EDDY_OP_CORE_SUB] = {h_binary, EDDY_RT_BINARY_SUB},
    [EDDY_OP_CORE_MUL] = {h_binary, EDDY_RT_BINARY_MUL},
    [EDDY_OP_CORE_DIV] = {h_binary, EDDY_RT_BINARY_DIV},
    [EDDY_OP_CORE_POW] = {h_binary, EDDY_RT_BINARY_POW},
    [EDDY_OP_CORE_MAXIMUM] = {h_binary, EDDY_RT_BINARY_MAXIMUM},
    [EDDY_OP_CORE_MINIMUM] = {h_binary, EDDY_RT_BINARY_MINIMUM},
    [EDDY_OP_CORE_ATAN2] = {h_binary, EDDY_RT_BINARY_ATAN2},
    [EDDY_OP_CORE_REM] = {h_binary, EDDY_RT_BINARY_REM},
    [EDDY_OP_CORE_EQ] = {h_compare, EDDY_RT_COMPARE_EQ},
    [EDDY_OP_CORE_NE] = {h_compare, EDDY_RT_COMPARE_NE},
    [EDDY_OP_CORE_LT] = {h_compare, EDDY_RT_COMPARE_LT},
    [EDDY_OP_CORE_LE] = {h_compare, EDDY_RT_COMPARE_LE},
    [EDDY_OP_CORE_GT] = {h_compare, EDDY_RT_COMPARE_GT},
    [EDDY_OP_CORE_GE] = {h_compare, EDDY_RT_COMPARE_GE},
    [EDDY_OP_CORE_AND] = {h_logical, EDDY_RT_LOGICAL_AND},
    [EDDY_OP_CORE_OR] = {h_logical, EDDY_RT_LOGICAL_OR},
    [EDDY_OP_CORE_NOT] = {h_not, 0},
    [EDDY_OP_CORE_BITAND] = {h_binary, EDDY_RT_BINARY_BITAND},
    [EDDY_OP_CORE_BITOR] = {h_binary, EDDY_RT_BINARY_BITOR},
    [EDDY_OP_CORE_BITXOR] = {h_binary, EDDY_RT_BINARY_BITXOR},
    [EDDY_OP_CORE_BITNOT] = {h_unary, EDDY_RT_UNARY_BITNOT},
    [EDDY_OP_CORE_SHIFT_LEFT] = {h_binary, EDDY_RT_BINARY_SHIFT_LEFT},
    [EDDY_OP_CORE_SHIFT_RIGHT] = {h_binary, EDDY_RT_BINARY_SHIFT_RIGHT},
    [EDDY_OP_CORE_SELECT] = {h_select, 0},
    [EDDY_OP_CORE_CAST] = {h_cast, 0},
    [EDDY_OP_CORE_MATMUL] = {h_matmul, 0},
    [EDDY_OP_CORE_REDUCE_SUM] = {h_reduce, EDDY_RT_REDUCE_SUM},
    [EDDY_OP_CORE_REDUCE_MEAN] = {h_reduce, EDDY_RT_REDUCE_MEAN},
    [EDDY_OP_CORE_REDUCE_MAX] = {h_reduce, EDDY_RT_REDUCE_MAX},
    [EDDY_OP_CORE_REDUCE_MIN] = {h_reduce, EDDY_RT_REDUCE_MIN},
    [EDDY_OP_CORE_REDUCE_PROD] = {h_reduce, EDDY_RT_REDUCE_PROD},
    [EDDY_OP_CORE_RESHAPE] = {h_reshape, 0},
    [EDDY_OP_CORE_TRANSPOSE] = {h_transpose, 0},
    [EDDY_OP_CORE_BROADCAST_TO] = {h_broadcast_to, 0},
    [EDDY_OP_CORE_CONCAT] = {h_concat, 0},
    [EDDY_OP_CORE_SPLIT] = {h_split, 0},
    [EDDY_OP_CORE_SLICE] = {h_slice, 0},
    [EDDY_OP_CORE_GATHER] = {h_gather, 0},
    [EDDY_OP_CORE_PAD] = {h_pad, 0},
    [EDDY_OP_CORE_SHAPE] = {h_shape, 0},
    [EDDY_OP_CORE_DIM] = {h_dim, 0},
    [EDDY_OP_CORE_RANGE] = {h_range, 0},
    [EDDY_OP_CORE_REVERSE] = {h_reverse, 0},
    [EDDY_OP_CORE_ARGMAX] = {h_arg, 1},
    [EDDY_OP_CORE_ARGMIN] = {h_arg, 0},
    [EDDY_OP_CORE_CUMSUM] = {h_cumulative, 0},
    [EDDY_OP_CORE_CUMPROD] = {h_cumulative, 1},
    [EDDY_OP_CORE_SCATTER] = {h_scatter, 0},
    [EDDY_OP_CORE_TOPK] = {h_topk, 0},
    [EDDY_OP_CORE_WHERE] = {h_where, 0},
    [EDDY_OP_CORE_CONV2D] = {h_window, EDDY_RT_CONV2D},
    [EDDY_OP_CORE_CONV2D_INPUT_GRAD] = {h_window, EDDY_RT_CONV2D_INPUT_GRAD},
    [EDDY_OP_CORE_CONV2D_FILTER_GRAD] = {h_window, EDDY_RT_CONV2D_FILTER_GRAD},
    [EDDY_OP_CORE_MAX_POOL] = {h_window, EDDY_RT_MAX_POOL},
    [EDDY_OP_CORE_AVG_POOL] = {h_window, EDDY_RT_AVG_POOL},
    [EDDY_OP_CORE_MAX_POOL_GRAD] = {h_window, EDDY_RT_MAX_POOL_GRAD},
    [EDDY_OP_CORE_AVG_POOL_GRAD] = {h_window, EDDY_RT_AVG_POOL_GRAD},
    [EDDY_OP_TL_EMPTY] = {h_tl_empty, 0},
    [EDDY_OP_TL_RESERVE] = {h_tl_reserve, 0},
    [EDDY_OP_TL_PUSH_BACK] = {h_tl_push_back, 0},
    [EDDY_OP_TL_POP_BACK] = {h_tl_pop_back, 0},
    [EDDY_OP_TL_GET_ITEM] = {h_tl_get_item, 0},
    [EDDY_OP_TL_SET_ITEM] = {h_tl_set_item, 0},
    [EDDY_OP_TL_LENGTH] = {h_tl_length, 0},
    [EDDY_OP_TL_STACK] = {h_tl_stack, 0},
    [EDDY_OP_TL_FROM_TENSOR] = {h_tl_from_tensor, 0},
    [EDDY_OP_TL_RESIZE] = {h_tl_resize, 0},
    [EDDY_OP_TL_SCATTER] = {h_tl_scatter, 0},
    [EDDY_OP_TL_CONCAT] = {h_tl_concat, 0},
    [EDDY_OP_TL_SPLIT] = {h_tl_split, 0},
    [EDDY_OP_TL_ADD] = {h_tl_add, 0},
    [EDDY_OP_TL_ZEROS_LIKE] = {h_tl_zeros_like, 0},
    [EDDY_OP_CTL_WHILE] = {eddy_eval_ctl_while, 0},
    [EDDY_OP_CTL_IF] = {eddy_eval_ctl_if, 0},
    [EDDY_OP_CTL_CALL] = {eddy_eval_ctl_call, 0},
    [EDDY_OP_CTL_YIELD] = {.none = "a terminator: the op holding its region "
                                   "reads its operands"},
    [EDDY_OP_CTL_CONDITION] = {.none = "a terminator: the op holding its "
                                       "region reads its operand"},
};

const eval_handler_t *eddy_eval_handler(const eddy_op_t *op) {
  const eval_handler_t *h = &k_handlers[eddy_dialects_opcode(op)];
  return h->fn ? h : NULL;
}

bool eddy_eval_opcode_supported(eddy_opcode_t code, const char **out_reason) {
  const eval_handler_t *h =
      code > EDDY_OP_NONE && code < EDDY_OP_COUNT_ ? &k_handlers[code] : NULL;
  if (out_reason)
    *out_reason = h && !h->fn ? h->none : NULL;
  return h && h->fn;
}

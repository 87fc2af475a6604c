/// v1 TensorFlow stacks and TensorArrays, run as TensorFlow's executor runs
/// them: stateful ops on a resource (a stack or an array) that a handle
/// value names. The handle is an EDDY_EVAL_RESOURCE value, an id in the
/// run's resource table; the resource's storage is a runtime TensorList
/// (runtime/kernels.h), mutated in place. The ops' side effects are ordered
/// only by their data and control (token) edges, as in TensorFlow; every
/// resource op runs under I->res_mu, so two never interleave.
///
/// The ops keep their tf names (lower/tf/v1_dataflow.c keeps them when a v1
/// graph is run as dataflow). Their data operands come first; trailing
/// !df.token operands are control edges.
#define _POSIX_C_SOURCE 200809L
#include "runtime/interp/interp_internal.h"

#include "runtime/kernels.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum res_op {
  R_STACK,
  R_STACK_PUSH,
  R_STACK_POP,
  R_STACK_CLOSE,
  R_TA,
  R_TA_WRITE,
  R_TA_READ,
  R_TA_GATHER,
  R_TA_SCATTER,
  R_TA_CONCAT,
  R_TA_SPLIT,
  R_TA_SIZE,
  R_TA_CLOSE,
  R_TA_GRAD,
} res_op_t;

static const struct {
  const char *name;
  res_op_t code;
  uint32_t num_data; ///< data operands (the rest are control tokens)
  uint32_t num_results; ///< TensorFlow's outputs (handle and flow...)
} k_res_ops[] = {
    {"tf.StackV2", R_STACK, 1, 1},
    {"tf.StackPushV2", R_STACK_PUSH, 2, 1},
    {"tf.StackPopV2", R_STACK_POP, 1, 1},
    {"tf.StackCloseV2", R_STACK_CLOSE, 1, 0},
    {"tf.TensorArrayV3", R_TA, 1, 2},
    {"tf.TensorArrayWriteV3", R_TA_WRITE, 4, 1},
    {"tf.TensorArrayReadV3", R_TA_READ, 3, 1},
    {"tf.TensorArrayGatherV3", R_TA_GATHER, 3, 1},
    {"tf.TensorArrayScatterV3", R_TA_SCATTER, 4, 1},
    {"tf.TensorArrayConcatV3", R_TA_CONCAT, 2, 2},
    {"tf.TensorArraySplitV3", R_TA_SPLIT, 4, 1},
    {"tf.TensorArraySizeV3", R_TA_SIZE, 2, 1},
    {"tf.TensorArrayCloseV3", R_TA_CLOSE, 1, 0},
    {"tf.TensorArrayGradV3", R_TA_GRAD, 2, 2},
};

int32_t interp_resource_op_code(const char *name) {
  for (size_t i = 0; i < sizeof k_res_ops / sizeof k_res_ops[0]; i++)
    if (strcmp(k_res_ops[i].name, name) == 0)
      return (int32_t)i;
  return -1;
}

uint32_t interp_resource_op_num_data(int32_t code) {
  return k_res_ops[code].num_data;
}

uint32_t interp_resource_op_num_results(int32_t code) {
  return k_res_ops[code].num_results;
}

/// One stack or TensorArray.
struct interp_res {
  bool is_stack;
  int32_t depth;        ///< stacks: 0 holds tensors, d > 0 lists of depth d - 1
  eddy_rt_list_t *list; ///< one reference, owned
  int32_t dtype;
  eddy_rt_elem_shape_t es;
  int64_t max_size;     ///< stacks: -1 unbounded
  bool dynamic_size;    ///< arrays: writes past the end grow it
  bool accumulate;      ///< gradient arrays: writes to one index add up
  bool identical;       ///< arrays: identical_element_shapes
  bool *written;        ///< arrays: per index
  size_t cap_written;
  struct {
    char *source;
    int64_t id;
  } *grads;             ///< arrays: TensorArrayGradV3 results by source
  size_t num_grads;
};

void interp_resources_free(interp_t *I) {
  for (size_t i = 0; i < I->num_res; i++) {
    interp_res_t *r = I->res[i];
    eddy_rt_list_release(r->list);
    free(r->written);
    for (size_t k = 0; k < r->num_grads; k++)
      free(r->grads[k].source);
    free(r->grads);
    free(r);
  }
  free(I->res);
  I->res = NULL;
  I->num_res = I->cap_res = 0;
}

static eddy_status_t res_error(const eddy_op_t *op, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static eddy_status_t res_error(const eddy_op_t *op, const char *fmt, ...) {
  eddy_buf_t b;
  eddy_buf_init(&b);
  interp_describe_op(op, &b);
  eddy_buf_puts(&b, ": ");
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  eddy_buf_puts(&b, msg);
  eddy_status_t st =
      eddy_status_create(EDDY_ERR_INVALID_ARGUMENT, "%s", b.data);
  eddy_buf_destroy(&b);
  return st;
}

/// The resource's list reference, for a kernel that consumes it and writes
/// the updated list back (in place: the table holds the only reference).
/// On error the list is gone and the resource holds none.
static eddy_rt_list_t *res_take(interp_res_t *r) {
  eddy_rt_list_t *l = r->list;
  r->list = NULL;
  return l;
}

static eddy_status_t res_oom(const eddy_op_t *op) {
  eddy_buf_t b;
  eddy_buf_init(&b);
  interp_describe_op(op, &b);
  eddy_status_t st = eddy_status_create(EDDY_ERR_RESOURCE, "%s: out of memory",
                                        b.data ? b.data : "");
  eddy_buf_destroy(&b);
  return st;
}

/// A new resource in the table, made by op; *out_id is its handle.
static eddy_status_t res_add(interp_t *I, const eddy_op_t *op,
                             interp_res_t **out_r, int64_t *out_id) {
  if (I->num_res == I->cap_res) {
    size_t nc = I->cap_res ? I->cap_res * 2 : 8;
    interp_res_t **nr = realloc(I->res, nc * sizeof(*nr));
    if (!nr)
      return res_oom(op);
    I->res = nr;
    I->cap_res = nc;
  }
  interp_res_t *r = calloc(1, sizeof(*r));
  if (!r)
    return res_oom(op);
  I->res[I->num_res] = r;
  *out_id = (int64_t)I->num_res++;
  *out_r = r;
  return NULL;
}

/// The resource a handle operand names, of the right kind.
static eddy_status_t res_get(interp_t *I, const eddy_op_t *op,
                             const eddy_eval_value_t *h, bool stack,
                             interp_res_t **out_r) {
  if (h->kind != EDDY_EVAL_RESOURCE || h->resource < 0 ||
      (size_t)h->resource >= I->num_res) {
    eddy_buf_t d;
    eddy_buf_init(&d);
    eddy_eval_value_describe(h, &d);
    eddy_status_t st = res_error(op, "operand #0 must be a %s handle, got %s",
                                 stack ? "stack" : "TensorArray", d.data);
    eddy_buf_destroy(&d);
    return st;
  }
  interp_res_t *r = I->res[h->resource];
  if (r->is_stack != stack)
    return res_error(op, "operand #0 is a %s handle, not a %s",
                     r->is_stack ? "stack" : "TensorArray",
                     stack ? "stack" : "TensorArray");
  if (!r->list)
    return res_error(op, "the %s is unusable after an earlier error",
                     stack ? "stack" : "TensorArray");
  *out_r = r;
  return NULL;
}

static eddy_status_t scalar_int(const eddy_op_t *op, const eddy_eval_value_t *v,
                                uint32_t k, int64_t *out) {
  if (v->kind != EDDY_EVAL_TENSOR || eddy_rt_tensor_numel(&v->tensor) != 1 ||
      (v->tensor.dtype != EDDY_RT_I32 && v->tensor.dtype != EDDY_RT_I64))
    return res_error(op, "operand #%u must be an i32 or i64 scalar", k);
  *out = eddy_rt_tensor_get_i64(&v->tensor, 0);
  return NULL;
}

static eddy_status_t tensor_operand(const eddy_op_t *op,
                                    const eddy_eval_value_t *v, uint32_t k) {
  if (v->kind != EDDY_EVAL_TENSOR)
    return res_error(op, "operand #%u must be a tensor", k);
  return NULL;
}

/// The element dtype and shape a stack or array is declared with: the
/// list type of the handle result, refined by an element_shape attribute.
static eddy_status_t declared_elem(const eddy_op_t *op, int32_t *out_dtype,
                                   eddy_rt_elem_shape_t *out_es) {
  const eddy_type_t *t = op->results[0].type;
  if (!t || t->kind != EDDY_TYPE_LIST || !t->elem ||
      t->elem->kind != EDDY_TYPE_TENSOR)
    return res_error(op, "the handle must be typed as a list of tensors");
  const eddy_type_t *e = t->elem;
  *out_dtype = (int32_t)e->dtype;
  if (!eddy_rt_elem_shape_make(e->rank, e->dims, out_es))
    return res_error(op, "elements of rank %d are not supported", e->rank);
  int64_t dims[EDDY_RT_MAX_RANK];
  int64_t rk = eddy_ir_attr_as_i64_array(eddy_ir_op_attr(op, "element_shape"),
                                         dims, EDDY_RT_MAX_RANK);
  if (rk >= 0 && rk <= EDDY_RT_MAX_RANK && out_es->rank < 0)
    eddy_rt_elem_shape_make((int32_t)rk, dims, out_es);
  return NULL;
}

static eddy_status_t flow_out(interp_t *I, const eddy_op_t *op,
                              eddy_eval_value_t *out) {
  eddy_rt_tensor_t t = eddy_rt_tensor_empty();
  eddy_rt_status_t rs = eddy_rt_tensor_create(I->rt, EDDY_RT_F32, 0, NULL,
                                              op->name->str, &t);
  if (rs)
    return eddy_eval_op_rt_error(op, rs);
  *out = eddy_eval_value_from_tensor(&t);
  return NULL;
}

static eddy_status_t make_array(interp_t *I, const eddy_op_t *op, int64_t n,
                                int32_t dtype, const eddy_rt_elem_shape_t *es,
                                interp_res_t **out_r, int64_t *out_id) {
  if (n < 0)
    return res_error(op, "a TensorArray of size %" PRId64, n);
  interp_res_t *r = NULL;
  EDDY_RETURN_IF_ERROR(res_add(I, op, &r, out_id));
  r->dtype = dtype;
  r->es = *es;
  r->written = calloc((size_t)n + 1, sizeof(bool));
  r->cap_written = (size_t)n + 1;
  if (!r->written)
    return res_oom(op);
  eddy_rt_tensor_t nt;
  eddy_rt_status_t rs = eddy_rt_tensor_wrap(EDDY_RT_I64, 0, NULL, &n, &nt);
  if (!rs)
    rs = eddy_rt_list_reserve(I->rt, dtype, es, &nt, &r->list);
  if (rs)
    return eddy_eval_op_rt_error(op, rs);
  *out_r = r;
  return NULL;
}

/// Writes x at index idx of array r: grows a dynamic array, adds to the
/// item of a gradient array already written, refuses a second write
/// elsewhere (as TensorFlow does).
static eddy_status_t array_write(interp_t *I, const eddy_op_t *op,
                                 interp_res_t *r, int64_t idx,
                                 const eddy_rt_tensor_t *x) {
  int64_t size = eddy_rt_list_size(r->list);
  if (idx < 0 || (idx >= size && !r->dynamic_size))
    return res_error(op, "index %" PRId64 " is out of range for a "
                         "TensorArray of size %" PRId64, idx, size);
  if (x->dtype != r->dtype)
    return res_error(op, "writes a %s value to a TensorArray of %s",
                     eddy_rt_dtype_name(x->dtype),
                     eddy_rt_dtype_name(r->dtype));
  eddy_rt_status_t rs = NULL;
  // Growing: the new items in between are zeros of x's shape (unwritten).
  while (!rs && eddy_rt_list_size(r->list) <= idx) {
    eddy_rt_tensor_t z = eddy_rt_tensor_empty();
    rs = eddy_rt_tensor_create(I->rt, x->dtype, x->rank, x->dims,
                               op->name->str, &z);
    if (!rs)
      rs = eddy_rt_list_push_back(I->rt, res_take(r), &z, &r->list);
    eddy_rt_tensor_release(&z);
  }
  if (rs)
    return eddy_eval_op_rt_error(op, rs);
  if ((size_t)idx >= r->cap_written) {
    size_t nc = (size_t)idx * 2 + 1;
    bool *nw = realloc(r->written, nc * sizeof(bool));
    if (!nw)
      return res_oom(op);
    memset(nw + r->cap_written, 0, (nc - r->cap_written) * sizeof(bool));
    r->written = nw;
    r->cap_written = nc;
  }
  eddy_rt_tensor_t it;
  rs = eddy_rt_tensor_wrap(EDDY_RT_I64, 0, NULL, &idx, &it);
  if (rs)
    return eddy_eval_op_rt_error(op, rs);
  eddy_rt_tensor_t sum = eddy_rt_tensor_empty();
  const eddy_rt_tensor_t *val = x;
  if (r->written[idx]) {
    if (!r->accumulate)
      return res_error(op, "index %" PRId64 " of the TensorArray was already "
                           "written", idx);
    eddy_rt_tensor_t cur = eddy_rt_tensor_empty();
    rs = eddy_rt_list_get_item(I->rt, r->list, &it, &cur);
    // TensorFlow adds gradient writes of one shape only (no broadcasting).
    bool same = !rs && cur.rank == x->rank;
    for (int32_t d = 0; same && d < x->rank; d++)
      same = cur.dims[d] == x->dims[d];
    if (!rs && !same) {
      char a[128], b[128];
      eddy_rt_shape_format(x->rank, x->dims, a, sizeof a);
      eddy_rt_shape_format(cur.rank, cur.dims, b, sizeof b);
      eddy_rt_tensor_release(&cur);
      return res_error(op,
                       "a write of shape %s to index %" PRId64 " of the "
                       "gradient TensorArray, which holds shape %s there "
                       "(writes to one index add up only when their shapes "
                       "are equal)",
                       a, idx, b);
    }
    if (!rs)
      rs = eddy_rt_binary(I->rt, EDDY_RT_BINARY_ADD, &cur, x, &sum);
    eddy_rt_tensor_release(&cur);
    val = &sum;
  }
  if (!rs)
    rs = eddy_rt_list_set_item(I->rt, res_take(r), &it, val, &r->list);
  eddy_rt_tensor_release(&sum);
  if (rs)
    return eddy_eval_op_rt_error(op, rs);
  r->written[idx] = true;
  return NULL;
}

static eddy_status_t exec_locked(interp_t *I, const interp_node_t *nd,
                                 const eddy_eval_value_t *const *in,
                                 eddy_eval_value_t *out) {
  const eddy_op_t *op = nd->op;
  interp_res_t *r = NULL;
  int64_t id = 0, n = 0;
  eddy_rt_status_t rs = NULL;
  switch (k_res_ops[nd->res_op].code) {
  case R_STACK: {
    // A stack of lists (a v1 gradient keeps a function call's Optionals,
    // lists of at most one item, on one) holds them by reference.
    const eddy_type_t *lt = op->results[0].type;
    int32_t depth = 0;
    while (lt && lt->kind == EDDY_TYPE_LIST && lt->elem &&
           lt->elem->kind == EDDY_TYPE_LIST) {
      lt = lt->elem;
      depth++;
    }
    if (!lt || lt->kind != EDDY_TYPE_LIST || !lt->elem ||
        lt->elem->kind != EDDY_TYPE_TENSOR)
      return res_error(op, "the handle must be typed as a list of tensors "
                           "or of lists");
    int32_t dt = (int32_t)lt->elem->dtype;
    EDDY_RETURN_IF_ERROR(scalar_int(op, in[0], 0, &n));
    EDDY_RETURN_IF_ERROR(res_add(I, op, &r, &id));
    r->is_stack = true;
    r->depth = depth;
    r->dtype = dt;
    r->es = eddy_rt_elem_shape_unknown();
    r->max_size = n;
    rs = eddy_rt_list_empty_nested(I->rt, depth, dt, &r->es, -1, &r->list);
    if (rs)
      return eddy_eval_op_rt_error(op, rs);
    out[0].kind = EDDY_EVAL_RESOURCE;
    out[0].resource = id;
    return NULL;
  }
  case R_STACK_PUSH:
    EDDY_RETURN_IF_ERROR(res_get(I, op, in[0], true, &r));
    if (r->max_size >= 0 && eddy_rt_list_size(r->list) >= r->max_size)
      return res_error(op, "the stack is full (max_size %" PRId64 ")",
                       r->max_size);
    if (r->depth > 0) {
      if (in[1]->kind != EDDY_EVAL_LIST)
        return res_error(op, "operand #1 must be a list (the stack holds "
                             "lists)");
      rs = eddy_rt_list_push_back_list(I->rt, res_take(r), in[1]->list,
                                       &r->list);
      if (rs)
        return eddy_eval_op_rt_error(op, rs);
      eddy_eval_value_share(in[1], &out[0]);
      return NULL;
    }
    EDDY_RETURN_IF_ERROR(tensor_operand(op, in[1], 1));
    if (in[1]->tensor.dtype != r->dtype)
      return res_error(op, "pushes a %s value onto a stack of %s",
                       eddy_rt_dtype_name(in[1]->tensor.dtype),
                       eddy_rt_dtype_name(r->dtype));
    rs = eddy_rt_list_push_back(I->rt, res_take(r), &in[1]->tensor, &r->list);
    if (rs)
      return eddy_eval_op_rt_error(op, rs);
    eddy_eval_value_share(in[1], &out[0]);
    return NULL;
  case R_STACK_POP: {
    EDDY_RETURN_IF_ERROR(res_get(I, op, in[0], true, &r));
    if (eddy_rt_list_size(r->list) == 0)
      return res_error(op, "pops an empty stack");
    if (r->depth > 0) {
      eddy_rt_list_t *item = NULL;
      rs = eddy_rt_list_pop_back_list(I->rt, res_take(r), &r->list, &item);
      if (rs)
        return eddy_eval_op_rt_error(op, rs);
      out[0] = eddy_eval_value_from_list(item);
      return NULL;
    }
    eddy_rt_tensor_t t = eddy_rt_tensor_empty();
    rs = eddy_rt_list_pop_back(I->rt, res_take(r), &r->list, &t);
    if (rs)
      return eddy_eval_op_rt_error(op, rs);
    out[0] = eddy_eval_value_from_tensor(&t);
    return NULL;
  }
  case R_STACK_CLOSE:
    return res_get(I, op, in[0], true, &r);
  case R_TA: {
    int32_t dt = 0;
    eddy_rt_elem_shape_t es;
    EDDY_RETURN_IF_ERROR(declared_elem(op, &dt, &es));
    EDDY_RETURN_IF_ERROR(scalar_int(op, in[0], 0, &n));
    EDDY_RETURN_IF_ERROR(make_array(I, op, n, dt, &es, &r, &id));
    r->dynamic_size = eddy_ir_op_attr_bool(op, "dynamic_size", false);
    r->identical =
        eddy_ir_op_attr_bool(op, "identical_element_shapes", false);
    out[0].kind = EDDY_EVAL_RESOURCE;
    out[0].resource = id;
    return flow_out(I, op, &out[1]);
  }
  case R_TA_WRITE:
    EDDY_RETURN_IF_ERROR(res_get(I, op, in[0], false, &r));
    EDDY_RETURN_IF_ERROR(scalar_int(op, in[1], 1, &n));
    EDDY_RETURN_IF_ERROR(tensor_operand(op, in[2], 2));
    EDDY_RETURN_IF_ERROR(array_write(I, op, r, n, &in[2]->tensor));
    return flow_out(I, op, &out[0]);
  case R_TA_READ: {
    EDDY_RETURN_IF_ERROR(res_get(I, op, in[0], false, &r));
    EDDY_RETURN_IF_ERROR(tensor_operand(op, in[1], 1));
    eddy_rt_tensor_t t = eddy_rt_tensor_empty();
    rs = eddy_rt_list_get_item(I->rt, r->list, &in[1]->tensor, &t);
    if (rs)
      return eddy_eval_op_rt_error(op, rs);
    out[0] = eddy_eval_value_from_tensor(&t);
    return NULL;
  }
  case R_TA_GATHER: {
    EDDY_RETURN_IF_ERROR(res_get(I, op, in[0], false, &r));
    EDDY_RETURN_IF_ERROR(tensor_operand(op, in[1], 1));
    const eddy_rt_tensor_t *ix = &in[1]->tensor;
    if (ix->rank != 1)
      return res_error(op, "operand #1 (indices) must have rank 1");
    // The whole array stacked, then the rows asked for (all of them in
    // order, the usual case, needs no gather).
    eddy_rt_tensor_t all = eddy_rt_tensor_empty(), g = eddy_rt_tensor_empty();
    rs = eddy_rt_list_stack(I->rt, r->list, &all);
    bool iota = !rs && ix->dims[0] == eddy_rt_list_size(r->list);
    for (int64_t i = 0; iota && i < ix->dims[0]; i++)
      iota = eddy_rt_tensor_get_i64(ix, i) == i;
    if (!rs && !iota)
      rs = eddy_rt_gather(I->rt, &all, ix, 0, &g);
    if (rs) {
      eddy_rt_tensor_release(&all);
      return eddy_eval_op_rt_error(op, rs);
    }
    if (iota) {
      out[0] = eddy_eval_value_from_tensor(&all);
    } else {
      eddy_rt_tensor_release(&all);
      out[0] = eddy_eval_value_from_tensor(&g);
    }
    return NULL;
  }
  case R_TA_SCATTER: {
    EDDY_RETURN_IF_ERROR(res_get(I, op, in[0], false, &r));
    EDDY_RETURN_IF_ERROR(tensor_operand(op, in[1], 1));
    EDDY_RETURN_IF_ERROR(tensor_operand(op, in[2], 2));
    const eddy_rt_tensor_t *ix = &in[1]->tensor, *x = &in[2]->tensor;
    if (ix->rank != 1 || x->rank < 1 || x->dims[0] != ix->dims[0])
      return res_error(op, "scatters %" PRId64 " indices and a value of %" PRId64
                           " rows",
                       ix->rank == 1 ? ix->dims[0] : -1,
                       x->rank >= 1 ? x->dims[0] : -1);
    eddy_rt_list_t *rows = NULL;
    rs = eddy_rt_list_from_tensor(I->rt, x, NULL, &rows);
    if (rs)
      return eddy_eval_op_rt_error(op, rs);
    eddy_status_t st = NULL;
    for (int64_t k = 0; k < ix->dims[0] && !st; k++) {
      eddy_rt_tensor_t kt, row = eddy_rt_tensor_empty();
      rs = eddy_rt_tensor_wrap(EDDY_RT_I64, 0, NULL, &k, &kt);
      if (!rs)
        rs = eddy_rt_list_get_item(I->rt, rows, &kt, &row);
      if (rs)
        st = eddy_eval_op_rt_error(op, rs);
      else
        st = array_write(I, op, r, eddy_rt_tensor_get_i64(ix, k), &row);
      eddy_rt_tensor_release(&row);
    }
    eddy_rt_list_release(rows);
    EDDY_RETURN_IF_ERROR(st);
    return flow_out(I, op, &out[0]);
  }
  case R_TA_CONCAT: {
    // The items joined along axis 0, and their first dims.
    EDDY_RETURN_IF_ERROR(res_get(I, op, in[0], false, &r));
    eddy_rt_tensor_t t = eddy_rt_tensor_empty(), lens = eddy_rt_tensor_empty();
    rs = eddy_rt_list_concat(I->rt, r->list, &t, &lens);
    if (rs)
      return eddy_eval_op_rt_error(op, rs);
    out[0] = eddy_eval_value_from_tensor(&t);
    out[1] = eddy_eval_value_from_tensor(&lens);
    return NULL;
  }
  case R_TA_SPLIT: {
    // Item k is the k-th slice of the value along axis 0, of lengths[k]
    // rows.
    EDDY_RETURN_IF_ERROR(res_get(I, op, in[0], false, &r));
    EDDY_RETURN_IF_ERROR(tensor_operand(op, in[1], 1));
    EDDY_RETURN_IF_ERROR(tensor_operand(op, in[2], 2));
    eddy_rt_list_t *parts = NULL;
    rs = eddy_rt_list_split(I->rt, &in[1]->tensor, &in[2]->tensor, NULL,
                            &parts);
    if (rs)
      return eddy_eval_op_rt_error(op, rs);
    eddy_status_t st = NULL;
    for (int64_t k = 0; k < eddy_rt_list_size(parts) && !st; k++) {
      eddy_rt_tensor_t kt, item = eddy_rt_tensor_empty();
      rs = eddy_rt_tensor_wrap(EDDY_RT_I64, 0, NULL, &k, &kt);
      if (!rs)
        rs = eddy_rt_list_get_item(I->rt, parts, &kt, &item);
      st = rs ? eddy_eval_op_rt_error(op, rs) : array_write(I, op, r, k, &item);
      eddy_rt_tensor_release(&item);
    }
    eddy_rt_list_release(parts);
    EDDY_RETURN_IF_ERROR(st);
    return flow_out(I, op, &out[0]);
  }
  case R_TA_SIZE: {
    EDDY_RETURN_IF_ERROR(res_get(I, op, in[0], false, &r));
    eddy_rt_tensor_t t = eddy_rt_tensor_empty();
    rs = eddy_rt_tensor_create(I->rt, EDDY_RT_I32, 0, NULL, op->name->str,
                               &t);
    if (rs)
      return eddy_eval_op_rt_error(op, rs);
    *(int32_t *)t.data = (int32_t)eddy_rt_list_size(r->list);
    out[0] = eddy_eval_value_from_tensor(&t);
    return NULL;
  }
  case R_TA_CLOSE:
    return res_get(I, op, in[0], false, &r);
  case R_TA_GRAD: {
    EDDY_RETURN_IF_ERROR(res_get(I, op, in[0], false, &r));
    const eddy_attr_t *src = eddy_ir_op_attr(op, "source");
    const char *s =
        src && src->kind == EDDY_ATTR_STRING ? src->u.str.data : "";
    for (size_t k = 0; k < r->num_grads; k++) {
      if (strcmp(r->grads[k].source, s) == 0) {
        out[0].kind = EDDY_EVAL_RESOURCE;
        out[0].resource = r->grads[k].id;
        return flow_out(I, op, &out[1]);
      }
    }
    // The gradient array: the forward one's size and element type; its
    // element shape is the forward one's, or, for an array of identical
    // element shapes, that of the forward's first item, so that items
    // never written read as zeros. The items of other arrays may differ in
    // shape (tf.TensorArray(infer_shape=False)), and so may their
    // gradients.
    eddy_rt_elem_shape_t es = r->es;
    if (es.rank < 0 && r->identical && eddy_rt_list_size(r->list) > 0 &&
        r->written[0]) {
      int64_t zero = 0;
      eddy_rt_tensor_t zt, first = eddy_rt_tensor_empty();
      if (!eddy_rt_tensor_wrap(EDDY_RT_I64, 0, NULL, &zero, &zt) &&
          !eddy_rt_list_get_item(I->rt, r->list, &zt, &first))
        eddy_rt_elem_shape_make(first.rank, first.dims, &es);
      eddy_rt_tensor_release(&first);
    }
    void *ng = realloc(r->grads, (r->num_grads + 1) * sizeof(*r->grads));
    if (!ng)
      return res_oom(op);
    r->grads = ng;
    char *copy = strdup(s);
    if (!copy)
      return res_oom(op);
    interp_res_t *g = NULL;
    int64_t fwd_id = in[0]->resource;
    eddy_status_t st = make_array(I, op, eddy_rt_list_size(r->list), r->dtype,
                                  &es, &g, &id);
    if (st) {
      free(copy);
      return st;
    }
    r = I->res[fwd_id]; // the table may have moved, not the resource
    // TensorFlow's gradient arrays have the forward array's size when they
    // are made and never grow (dynamic_size false); writes to one index add
    // up.
    g->dynamic_size = false;
    g->accumulate = true;
    r->grads[r->num_grads].source = copy;
    r->grads[r->num_grads].id = id;
    r->num_grads++;
    out[0].kind = EDDY_EVAL_RESOURCE;
    out[0].resource = id;
    return flow_out(I, op, &out[1]);
  }
  }
  return res_error(op, "not a resource op");
}

eddy_status_t interp_resource_exec(interp_t *I, const interp_node_t *nd,
                                   const eddy_eval_value_t *const *in,
                                   eddy_eval_value_t *out) {
  pthread_mutex_lock(&I->res_mu);
  eddy_status_t st = exec_locked(I, nd, in, out);
  pthread_mutex_unlock(&I->res_mu);
  const eddy_op_t *op = nd->op;
  for (uint32_t r = 0; r < nd->num_out && !st; r++) {
    if (out[r].kind == EDDY_EVAL_RESOURCE ||
        eddy_eval_value_matches(&out[r], op->results[r].type))
      continue;
    eddy_buf_t d;
    eddy_buf_init(&d);
    eddy_eval_value_describe(&out[r], &d);
    eddy_buf_puts(&d, " does not match the declared type ");
    eddy_ir_type_print(op->results[r].type, &d);
    st = res_error(op, "result #%u: %s", r, d.data);
    eddy_buf_destroy(&d);
  }
  if (st)
    for (uint32_t r = 0; r < nd->num_out; r++)
      eddy_eval_value_release(&out[r]);
  return st;
}

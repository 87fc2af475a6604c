/// The tl dialect: TensorList ops. Lists are values, so every op is PURE:
/// an op that "modifies" a list returns a new one and leaves its operand
/// as it was.
#include "dialects/tl/tl.h"
#include "dialects/dialects.h"

#include "dialects/dialects_internal.h"

#include <stdlib.h>
#include <string.h>

/// The most dims first_dim_dynamic handles (the core dialect's limit).
#define EDDY_TL_MAX_RANK 64

const eddy_type_t *eddy_tl_stacked_type(eddy_ctx_t *ctx,
                                        const eddy_type_t *elem) {
  if (!elem || elem->kind != EDDY_TYPE_TENSOR)
    return NULL;
  if (elem->rank == EDDY_RANK_UNKNOWN)
    return eddy_ir_tensor_type_get(ctx, elem->dtype, EDDY_RANK_UNKNOWN, NULL);
  if (elem->rank >= INT32_MAX)
    return NULL;
  int64_t small[8];
  int32_t rank = elem->rank + 1;
  int64_t *dims = small;
  if (rank > 8) {
    dims = malloc((size_t)rank * sizeof(*dims));
    if (!dims)
      return NULL;
  }
  dims[0] = EDDY_DIM_DYNAMIC;
  if (elem->rank > 0)
    memcpy(dims + 1, elem->dims, (size_t)elem->rank * sizeof(*dims));
  const eddy_type_t *t = eddy_ir_tensor_type_get(ctx, elem->dtype, rank, dims);
  if (dims != small)
    free(dims);
  return t;
}

const eddy_type_t *eddy_tl_unstacked_type(eddy_ctx_t *ctx,
                                          const eddy_type_t *t) {
  if (!t || t->kind != EDDY_TYPE_TENSOR || t->rank == 0)
    return NULL;
  const eddy_type_t *elem;
  if (t->rank == EDDY_RANK_UNKNOWN)
    elem = eddy_ir_tensor_type_get(ctx, t->dtype, EDDY_RANK_UNKNOWN, NULL);
  else
    elem = eddy_ir_tensor_type_get(ctx, t->dtype, t->rank - 1, t->dims + 1);
  return eddy_ir_list_type_get(ctx, elem);
}

/// ---- Shape functions ----

/// Operand #i as a list type, or an inference error.
static eddy_status_t infer_list(eddy_infer_ctx_t *ic, size_t i,
                                const eddy_type_t **out) {
  if (ic->num_operands <= i)
    return eddy_ir_infer_error(ic,
                               "expects a list as operand #%zu, found "
                               "%zu operands",
                               i, ic->num_operands);
  const eddy_type_t *t = ic->operand_types[i];
  if (!t || t->kind != EDDY_TYPE_LIST) {
    eddy_tt_t tt = {0};
    eddy_status_t st = eddy_ir_infer_error(
        ic, "operand #%zu must be a !tl.list, found %s", i, eddy_tt(&tt, t));
    eddy_tt_free(&tt);
    return st;
  }
  *out = t;
  return NULL;
}

/// push_back, set_item: the list type passes through.
static eddy_status_t infer_same_list(eddy_infer_ctx_t *ic) {
  const eddy_type_t *l = NULL;
  EDDY_RETURN_IF_ERROR(infer_list(ic, 0, &l));
  eddy_ir_infer_push(ic, l);
  return NULL;
}

static eddy_status_t infer_pop_back(eddy_infer_ctx_t *ic) {
  const eddy_type_t *l = NULL;
  EDDY_RETURN_IF_ERROR(infer_list(ic, 0, &l));
  eddy_ir_infer_push(ic, l);
  eddy_ir_infer_push(ic, l->elem);
  return NULL;
}

static eddy_status_t infer_get_item(eddy_infer_ctx_t *ic) {
  const eddy_type_t *l = NULL;
  EDDY_RETURN_IF_ERROR(infer_list(ic, 0, &l));
  eddy_ir_infer_push(ic, l->elem);
  return NULL;
}

static eddy_status_t infer_length(eddy_infer_ctx_t *ic) {
  const eddy_type_t *l;
  EDDY_RETURN_IF_ERROR(infer_list(ic, 0, &l));
  eddy_ir_infer_push(ic, eddy_ir_scalar_type_get(ic->ctx, EDDY_DT_I64));
  return NULL;
}

static eddy_status_t infer_stack(eddy_infer_ctx_t *ic) {
  const eddy_type_t *l = NULL;
  EDDY_RETURN_IF_ERROR(infer_list(ic, 0, &l));
  if (l->elem->kind == EDDY_TYPE_LIST)
    return eddy_ir_infer_error(ic, "cannot stack a list of lists: only a "
                                   "list of tensors stacks into a tensor");
  const eddy_type_t *t = eddy_tl_stacked_type(ic->ctx, l->elem);
  if (!t)
    return eddy_ir_infer_error(ic, "cannot stack elements of this rank");
  eddy_ir_infer_push(ic, t);
  return NULL;
}

static eddy_status_t infer_from_tensor(eddy_infer_ctx_t *ic) {
  if (ic->num_operands < 1)
    return eddy_ir_infer_error(ic, "expects a tensor operand");
  const eddy_type_t *x = ic->operand_types[0];
  const eddy_type_t *l = eddy_tl_unstacked_type(ic->ctx, x);
  if (!l) {
    eddy_tt_t tt = {0};
    eddy_status_t st = eddy_ir_infer_error(
        ic, "operand must be a tensor of rank >= 1, found %s", eddy_tt(&tt, x));
    eddy_tt_free(&tt);
    return st;
  }
  eddy_ir_infer_push(ic, l);
  return NULL;
}

/// t with its first dim made `?` (unranked stays unranked); NULL when t is
/// not a tensor of rank >= 1.
static const eddy_type_t *first_dim_dynamic(eddy_ctx_t *ctx,
                                            const eddy_type_t *t) {
  if (!t || t->kind != EDDY_TYPE_TENSOR || t->rank == 0)
    return NULL;
  if (t->rank == EDDY_RANK_UNKNOWN)
    return t;
  int64_t dims[EDDY_TL_MAX_RANK];
  if (t->rank > EDDY_TL_MAX_RANK)
    return NULL;
  memcpy(dims, t->dims, (size_t)t->rank * sizeof(*dims));
  dims[0] = EDDY_DIM_DYNAMIC;
  return eddy_ir_tensor_type_get(ctx, t->dtype, t->rank, dims);
}

static eddy_status_t infer_concat(eddy_infer_ctx_t *ic) {
  const eddy_type_t *l = NULL;
  EDDY_RETURN_IF_ERROR(infer_list(ic, 0, &l));
  const eddy_type_t *t = first_dim_dynamic(ic->ctx, l->elem);
  if (!t)
    return eddy_ir_infer_error(ic, "only a list of tensors of rank >= 1 "
                                   "concatenates");
  int64_t q = EDDY_DIM_DYNAMIC;
  eddy_ir_infer_push(ic, t);
  eddy_ir_infer_push(ic, eddy_ir_tensor_type_get(ic->ctx, EDDY_DT_I64, 1, &q));
  return NULL;
}

static eddy_status_t infer_split(eddy_infer_ctx_t *ic) {
  if (ic->num_operands != 2)
    return eddy_ir_infer_error(ic, "expects a tensor and lengths");
  const eddy_type_t *t = first_dim_dynamic(ic->ctx, ic->operand_types[0]);
  if (!t) {
    eddy_tt_t tt = {0};
    eddy_status_t st = eddy_ir_infer_error(
        ic, "operand must be a tensor of rank >= 1, found %s",
        eddy_tt(&tt, ic->operand_types[0]));
    eddy_tt_free(&tt);
    return st;
  }
  eddy_ir_infer_push(ic, eddy_ir_list_type_get(ic->ctx, t));
  return NULL;
}

/// ---- Verifiers ----

static eddy_status_t type_error(const eddy_op_t *op, const char *fmt,
                                const eddy_type_t *a, const eddy_type_t *b) {
  eddy_tt_t tt = {0};
  const char *sa = eddy_tt(&tt, a);
  const char *sb = b ? eddy_tt(&tt, b) : "";
  eddy_status_t st = eddy_ir_op_error(op, fmt, sa, sb);
  eddy_tt_free(&tt);
  return st;
}

static eddy_status_t expect_list(const eddy_op_t *op, uint32_t i) {
  const eddy_type_t *t = op->operands[i].value->type;
  if (t->kind != EDDY_TYPE_LIST)
    return type_error(op,
                      i == 0 ? "operand #0 must be a !tl.list, found %s%s"
                             : "list operand must be a !tl.list, found %s%s",
                      t, NULL);
  return NULL;
}

static eddy_status_t expect_index(const eddy_op_t *op, uint32_t i,
                                  const char *what) {
  const eddy_type_t *t = op->operands[i].value->type;
  if (!eddy_dialects_is_index_type(t)) {
    eddy_tt_t tt = {0};
    eddy_status_t st =
        eddy_ir_op_error(op, "%s must be a scalar integer tensor, found %s",
                         what, eddy_tt(&tt, t));
    eddy_tt_free(&tt);
    return st;
  }
  return NULL;
}

/// The element operand #i must fit the list's element type.
static eddy_status_t expect_element(const eddy_op_t *op, uint32_t i) {
  const eddy_type_t *elem = op->operands[0].value->type->elem;
  const eddy_type_t *x = op->operands[i].value->type;
  if (!eddy_ir_type_is_compatible(x, elem))
    return type_error(op,
                      "element has type %s, incompatible with the list's "
                      "element type %s",
                      x, elem);
  return NULL;
}

static eddy_status_t expect_list_result(const eddy_op_t *op) {
  const eddy_type_t *t = op->results[0].type;
  if (t->kind != EDDY_TYPE_LIST)
    return type_error(op, "result must be a !tl.list, found %s%s", t, NULL);
  return NULL;
}

static eddy_status_t verify_empty(const eddy_op_t *op) {
  EDDY_RETURN_IF_ERROR(expect_list_result(op));
  const eddy_attr_t *m = eddy_ir_op_attr(op, "max_elements");
  if (m && m->u.i < 0)
    return eddy_ir_op_error(op,
                            "max_elements must be non-negative, found "
                            "%lld",
                            (long long)m->u.i);
  return NULL;
}

static eddy_status_t verify_reserve(const eddy_op_t *op) {
  EDDY_RETURN_IF_ERROR(expect_index(op, 0, "size"));
  return expect_list_result(op);
}

static eddy_status_t verify_push_back(const eddy_op_t *op) {
  EDDY_RETURN_IF_ERROR(expect_list(op, 0));
  return expect_element(op, 1);
}

static eddy_status_t verify_list_only(const eddy_op_t *op) {
  return expect_list(op, 0);
}

static eddy_status_t verify_get_item(const eddy_op_t *op) {
  EDDY_RETURN_IF_ERROR(expect_list(op, 0));
  return expect_index(op, 1, "index");
}

static eddy_status_t verify_set_item(const eddy_op_t *op) {
  EDDY_RETURN_IF_ERROR(expect_list(op, 0));
  EDDY_RETURN_IF_ERROR(expect_index(op, 1, "index"));
  return expect_element(op, 2);
}

static eddy_status_t verify_resize(const eddy_op_t *op) {
  EDDY_RETURN_IF_ERROR(expect_list(op, 0));
  return expect_index(op, 1, "size");
}

/// scatter: a list of tensors, a 1-D integer index vector, and a tensor
/// whose slices along axis 0 fit the element type.
static eddy_status_t verify_scatter(const eddy_op_t *op) {
  EDDY_RETURN_IF_ERROR(expect_list(op, 0));
  const eddy_type_t *lt = op->operands[0].value->type;
  if (lt->elem->kind != EDDY_TYPE_TENSOR)
    return eddy_ir_op_error(op, "cannot scatter into a list of lists");
  const eddy_type_t *ix = op->operands[1].value->type;
  if (!eddy_ir_type_is_tensor(ix) || ix->rank != 1 ||
      !eddy_dtype_is_int(ix->dtype))
    return type_error(op, "indices must be a 1-D integer tensor, found %s%s",
                      ix, NULL);
  const eddy_type_t *x = op->operands[2].value->type;
  const eddy_type_t *rows = eddy_tl_unstacked_type(op->ctx, x);
  if (!rows)
    return type_error(op,
                      "the scattered operand must be a tensor of rank >= 1, "
                      "found %s%s",
                      x, NULL);
  if (!eddy_ir_type_is_compatible(rows->elem, lt->elem))
    return type_error(op,
                      "rows of type %s are incompatible with the list's "
                      "element type %s",
                      rows->elem, lt->elem);
  if (x->rank >= 1 && x->dims[0] != EDDY_DIM_DYNAMIC &&
      ix->dims[0] != EDDY_DIM_DYNAMIC && x->dims[0] != ix->dims[0])
    return eddy_ir_op_error(op,
                            "%lld indices for %lld rows: expected one index "
                            "per row",
                            (long long)ix->dims[0], (long long)x->dims[0]);
  return NULL;
}

/// add: two lists of one type up to refinement; the result has that type.
static eddy_status_t verify_add(const eddy_op_t *op) {
  EDDY_RETURN_IF_ERROR(expect_list(op, 0));
  EDDY_RETURN_IF_ERROR(expect_list(op, 1));
  const eddy_type_t *a = op->operands[0].value->type;
  const eddy_type_t *b = op->operands[1].value->type;
  if (!eddy_ir_type_is_compatible(a, b))
    return type_error(op, "cannot add lists of types %s and %s", a, b);
  const eddy_type_t *r = op->results[0].type;
  if (!eddy_ir_type_is_compatible(r, a))
    return type_error(op, "result has type %s, incompatible with the "
                          "operands' %s", r, a);
  return NULL;
}

/// zeros_like: a list; the result has its type up to refinement.
static eddy_status_t verify_zeros_like(const eddy_op_t *op) {
  EDDY_RETURN_IF_ERROR(expect_list(op, 0));
  const eddy_type_t *l = op->operands[0].value->type;
  const eddy_type_t *r = op->results[0].type;
  if (!eddy_ir_type_is_compatible(r, l))
    return type_error(op, "result has type %s, incompatible with the "
                          "operand's %s", r, l);
  return NULL;
}

static eddy_status_t verify_split(const eddy_op_t *op) {
  const eddy_type_t *ix = op->operands[1].value->type;
  if (!eddy_ir_type_is_tensor(ix) || ix->rank != 1 ||
      !eddy_dtype_is_int(ix->dtype))
    return type_error(op, "lengths must be a 1-D integer tensor, found %s%s",
                      ix, NULL);
  return expect_list_result(op);
}

static const eddy_attr_spec_t empty_attrs[] = {
    {"max_elements", EDDY_ATTR_INT, true},
    {NULL, EDDY_ATTR_INT, false},
};

#define TL_OP(E, NAME, NOPS, NRES, VERIFY, INFER)                              \
  {                                                                            \
    .name = "tl." NAME, .num_operands = NOPS, .num_results = NRES,             \
    .num_regions = 0, .traits = EDDY_TRAIT_PURE, .verify = VERIFY,             \
    .infer = INFER, .opcode = EDDY_OP_TL_##E,                                  \
  }

static const eddy_op_def_t tl_ops[] = {
    {
        .name = "tl.empty",
        .num_operands = 0,
        .num_results = 1,
        .num_regions = 0,
        .traits = EDDY_TRAIT_PURE,
        .attrs = empty_attrs,
        .verify = verify_empty,
        .opcode = EDDY_OP_TL_EMPTY,
    },
    TL_OP(RESERVE, "reserve", 1, 1, verify_reserve, NULL),
    TL_OP(PUSH_BACK, "push_back", 2, 1, verify_push_back, infer_same_list),
    TL_OP(POP_BACK, "pop_back", 1, 2, verify_list_only, infer_pop_back),
    TL_OP(GET_ITEM, "get_item", 2, 1, verify_get_item, infer_get_item),
    TL_OP(SET_ITEM, "set_item", 3, 1, verify_set_item, infer_same_list),
    TL_OP(LENGTH, "length", 1, 1, verify_list_only, infer_length),
    TL_OP(STACK, "stack", 1, 1, verify_list_only, infer_stack),
    TL_OP(FROM_TENSOR, "from_tensor", 1, 1, NULL, infer_from_tensor),
    TL_OP(RESIZE, "resize", 2, 1, verify_resize, infer_same_list),
    TL_OP(SCATTER, "scatter", 3, 1, verify_scatter, infer_same_list),
    TL_OP(CONCAT, "concat", 1, 2, verify_list_only, infer_concat),
    TL_OP(SPLIT, "split", 2, 1, verify_split, infer_split),
    TL_OP(ADD, "add", 2, 1, verify_add, infer_same_list),
    TL_OP(ZEROS_LIKE, "zeros_like", 1, 1, verify_zeros_like, infer_same_list),
};

const eddy_dialect_t eddy_tl_dialect = {
    .name = "tl",
    .ops = tl_ops,
    .num_ops = sizeof(tl_ops) / sizeof(tl_ops[0]),
    .allow_unknown_ops = false,
};

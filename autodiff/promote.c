/// Promotion to f64 for the gradient checker: a copy of a function (and of
/// the functions it calls) in which every f16, bf16 and f32 type is f64, so
/// that finite differences of a TensorFlow model, which computes in f32, are
/// accurate enough to check its gradient against.
#include "autodiff/ad.h"

#include <stdlib.h>
#include <string.h>

static bool is_low_float(eddy_dtype_t dt) {
  return eddy_dtype_is_float(dt) && dt != EDDY_DT_F64;
}

double eddy_ad_dtype_epsilon(eddy_dtype_t dt) {
  switch (dt) {
  case EDDY_DT_F16:
    return 0x1p-10;
  case EDDY_DT_BF16:
    return 0x1p-7;
  case EDDY_DT_F32:
    return 0x1p-23;
  case EDDY_DT_F64:
    return 0x1p-52;
  default:
    return 0.0;
  }
}

/// The module op around func (func.func ops live in its one block).
static eddy_module_t module_of(const eddy_op_t *func) {
  eddy_module_t m = {.ctx = func->ctx, .op = eddy_ir_op_parent_op(func)};
  return m;
}

/// The type with every tensor of a low-precision float dtype made f64,
/// through list elements and function signatures.
static const eddy_type_t *promote_type(eddy_ctx_t *ctx, const eddy_type_t *t) {
  switch (t->kind) {
  case EDDY_TYPE_TENSOR:
    return is_low_float(t->dtype)
               ? eddy_ir_tensor_type_get(ctx, EDDY_DT_F64, t->rank, t->dims)
               : t;
  case EDDY_TYPE_LIST: {
    const eddy_type_t *e = promote_type(ctx, t->elem);
    return e == t->elem ? t : eddy_ir_list_type_get(ctx, e);
  }
  case EDDY_TYPE_FUNC: {
    size_t n = (size_t)t->num_inputs + t->num_outputs;
    const eddy_type_t **v = malloc((n ? n : 1) * sizeof(*v));
    if (!v)
      return NULL;
    for (uint32_t i = 0; i < t->num_inputs; i++)
      v[i] = promote_type(ctx, t->inputs[i]);
    for (uint32_t i = 0; i < t->num_outputs; i++)
      v[t->num_inputs + i] = promote_type(ctx, t->outputs[i]);
    const eddy_type_t *r = eddy_ir_func_type_get(
        ctx, v, t->num_inputs, v + t->num_inputs, t->num_outputs);
    free(v);
    return r;
  }
  default:
    return t;
  }
}

/// The attribute with its low-precision float contents made f64: dense
/// constants, float numbers, types, arrays of those, and the dtype name of
/// a cast (`dtype_name`). NULL on out of memory.
static const eddy_attr_t *promote_attr(eddy_ctx_t *ctx, const eddy_attr_t *a,
                                       bool dtype_name) {
  switch (a->kind) {
  case EDDY_ATTR_FLOAT:
    return is_low_float(a->dtype)
               ? eddy_ir_float_attr_get(ctx, a->u.f, EDDY_DT_F64)
               : a;
  case EDDY_ATTR_TYPE:
    return eddy_ir_type_attr_get(ctx, promote_type(ctx, a->type));
  case EDDY_ATTR_STRING: {
    eddy_dtype_t dt;
    if (dtype_name && eddy_dtype_from_name(a->u.str.data, a->u.str.len, &dt) &&
        is_low_float(dt))
      return eddy_ir_string_attr_get(ctx, "f64", 3);
    return a;
  }
  case EDDY_ATTR_DENSE: {
    if (!is_low_float(a->type->dtype))
      return a;
    int64_t n = a->u.dense.splat ? 1 : eddy_ir_type_num_elements(a->type);
    double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof(*v));
    if (!v)
      return NULL;
    for (int64_t i = 0; i < n; i++)
      v[i] = eddy_ir_dense_attr_f64(a, i);
    const eddy_attr_t *r = eddy_ir_dense_attr_from_f64(
        ctx, promote_type(ctx, a->type), v, (size_t)n);
    free(v);
    return r;
  }
  case EDDY_ATTR_ARRAY: {
    size_t n = a->u.array.len;
    const eddy_attr_t **v = malloc((n ? n : 1) * sizeof(*v));
    if (!v)
      return NULL;
    bool same = true;
    for (size_t i = 0; i < n; i++) {
      v[i] = promote_attr(ctx, a->u.array.elems[i], false);
      if (!v[i]) {
        free(v);
        return NULL;
      }
      same = same && v[i] == a->u.array.elems[i];
    }
    const eddy_attr_t *r = same ? a : eddy_ir_array_attr_get(ctx, v, n);
    free(v);
    return r;
  }
  default:
    return a;
  }
}

static eddy_walk_result_t promote_op(eddy_op_t *op, void *user) {
  bool *oom = user;
  eddy_ctx_t *ctx = op->ctx;
  for (uint32_t i = 0; i < op->num_results; i++)
    eddy_ir_value_set_type(&op->results[i],
                           promote_type(ctx, op->results[i].type));
  for (uint32_t r = 0; r < op->num_regions; r++)
    for (eddy_block_t *b = op->regions[r].first; b; b = b->next)
      for (uint32_t i = 0; i < b->num_args; i++)
        eddy_ir_value_set_type(b->args[i], promote_type(ctx, b->args[i]->type));
  /* Replacing attributes reorders nothing (the list stays sorted by name),
     so walking it by index while setting is safe. */
  for (uint32_t i = 0; i < op->num_attrs; i++) {
    const char *name = op->attrs[i].name->str;
    const eddy_attr_t *a = op->attrs[i].value;
    const eddy_attr_t *p = promote_attr(ctx, a, strcmp(name, "dtype") == 0);
    if (!p) {
      *oom = true;
      return EDDY_WALK_INTERRUPT;
    }
    if (p != a)
      eddy_ir_op_set_attr(op, name, p);
  }
  return EDDY_WALK_ADVANCE;
}

/// Visits func and, through the symbols its ops name, every function it
/// reaches in its module, each once; records each in *seen.
typedef struct reach {
  eddy_module_t src;
  eddy_ptrmap_t seen;
  const eddy_op_t **funcs;
  size_t num, cap;
  bool oom;
} reach_t;

static void reach_add(reach_t *r, const eddy_op_t *f) {
  if (eddy_ptrmap_has(&r->seen, f))
    return;
  if (r->num == r->cap) {
    size_t cap = r->cap ? 2 * r->cap : 8;
    const eddy_op_t **v = realloc(r->funcs, cap * sizeof(*v));
    if (!v) {
      r->oom = true;
      return;
    }
    r->funcs = v;
    r->cap = cap;
  }
  eddy_ptrmap_put(&r->seen, f, (void *)f);
  r->funcs[r->num++] = f;
}

static eddy_walk_result_t reach_op(eddy_op_t *op, void *user) {
  reach_t *r = user;
  for (uint32_t i = 0; i < op->num_attrs; i++) {
    const eddy_attr_t *a = op->attrs[i].value;
    if (a->kind != EDDY_ATTR_SYMBOL || !r->src.op)
      continue;
    const eddy_op_t *f = eddy_ir_module_lookup_func(&r->src, a->u.str.data);
    if (f)
      reach_add(r, f);
  }
  return EDDY_WALK_ADVANCE;
}

/// func and the functions it calls, func first (r->funcs, malloc'ed).
static bool reach_all(const eddy_op_t *func, reach_t *r) {
  memset(r, 0, sizeof(*r));
  r->src = module_of(func);
  eddy_ptrmap_init(&r->seen);
  reach_add(r, func);
  for (size_t i = 0; i < r->num && !r->oom; i++)
    eddy_ir_walk_pre((eddy_op_t *)r->funcs[i], reach_op, r);
  eddy_ptrmap_destroy(&r->seen);
  return !r->oom;
}

typedef struct lowest {
  eddy_dtype_t dt;
} lowest_t;

/// Bigger epsilon: less precise.
static void lowest_see(lowest_t *l, const eddy_type_t *t) {
  while (t->kind == EDDY_TYPE_LIST)
    t = t->elem;
  if (t->kind == EDDY_TYPE_TENSOR && eddy_dtype_is_float(t->dtype) &&
      eddy_ad_dtype_epsilon(t->dtype) > eddy_ad_dtype_epsilon(l->dt))
    l->dt = t->dtype;
}

static eddy_walk_result_t lowest_op(eddy_op_t *op, void *user) {
  lowest_t *l = user;
  for (uint32_t i = 0; i < op->num_results; i++)
    lowest_see(l, op->results[i].type);
  for (uint32_t r = 0; r < op->num_regions; r++)
    for (eddy_block_t *b = op->regions[r].first; b; b = b->next)
      for (uint32_t i = 0; i < b->num_args; i++)
        lowest_see(l, b->args[i]->type);
  const eddy_attr_t *dt = eddy_ir_op_attr(op, "dtype");
  eddy_dtype_t cast_to;
  if (dt && dt->kind == EDDY_ATTR_STRING &&
      eddy_dtype_from_name(dt->u.str.data, dt->u.str.len, &cast_to))
    lowest_see(l, eddy_ir_scalar_type_get(op->ctx, cast_to));
  return EDDY_WALK_ADVANCE;
}

eddy_dtype_t eddy_ad_func_float_dtype(const eddy_op_t *func) {
  lowest_t l = {.dt = EDDY_DT_F64};
  reach_t r;
  bool ok = reach_all(func, &r);
  for (size_t i = 0; i < r.num; i++)
    eddy_ir_walk_pre((eddy_op_t *)r.funcs[i], lowest_op, &l);
  free(r.funcs);
  /* Out of memory: say f32, so that the caller promotes rather than trusts
     a program it could not look at. */
  return ok ? l.dt : EDDY_DT_F32;
}

/// Replaces each core.stop_gradient by its operand.
static eddy_walk_result_t strip_stop(eddy_op_t *op, void *user) {
  (void)user;
  if (eddy_dialects_opcode(op) != EDDY_OP_CORE_STOP_GRADIENT)
    return EDDY_WALK_ADVANCE;
  eddy_ir_value_replace_all_uses(&op->results[0], eddy_ir_op_operand(op, 0));
  eddy_ir_op_erase(op);
  return EDDY_WALK_ADVANCE;
}

static eddy_walk_result_t find_stop(eddy_op_t *op, void *user) {
  if (eddy_dialects_opcode(op) != EDDY_OP_CORE_STOP_GRADIENT)
    return EDDY_WALK_ADVANCE;
  *(bool *)user = true;
  return EDDY_WALK_INTERRUPT;
}

bool eddy_ad_reaches_stop_gradient(const eddy_op_t *func) {
  reach_t r;
  bool found = false;
  if (!reach_all(func, &r)) {
    free(r.funcs);
    return false;
  }
  for (size_t i = 0; i < r.num && !found; i++)
    eddy_ir_walk_pre((eddy_op_t *)r.funcs[i], find_stop, &found);
  free(r.funcs);
  return found;
}

eddy_status_t eddy_ad_promote_f64(const eddy_op_t *func, eddy_module_t *dst,
                                  eddy_op_t **out_func) {
  return eddy_ad_copy_for_check(func, dst, true, false, out_func);
}

eddy_status_t eddy_ad_copy_for_check(const eddy_op_t *func, eddy_module_t *dst,
                                     bool to_f64, bool without_stops,
                                     eddy_op_t **out_func) {
  *out_func = NULL;
  reach_t r;
  if (!reach_all(func, &r)) {
    free(r.funcs);
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  }
  eddy_status_t st = NULL;
  for (size_t i = 0; i < r.num && !st; i++) {
    const char *name = eddy_ir_func_name(r.funcs[i]);
    if (eddy_ir_module_lookup_func(dst, name)) {
      st = eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                              "promotion to f64: the module already has a "
                              "function @%s",
                              name);
      break;
    }
    eddy_ptrmap_t map;
    eddy_ptrmap_init(&map);
    eddy_op_t *copy = eddy_ir_op_clone(r.funcs[i], &map);
    eddy_ptrmap_destroy(&map);
    eddy_ir_op_append(copy, eddy_ir_module_body(dst));
    bool oom = false;
    if (without_stops)
      eddy_ir_walk_post(copy, strip_stop, NULL);
    if (to_f64)
      eddy_ir_walk_pre(copy, promote_op, &oom);
    if (oom)
      st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
    if (i == 0)
      *out_func = copy;
  }
  free(r.funcs);
  if (!st) {
    st = eddy_ir_verify_module(dst);
    if (st)
      eddy_status_append_note(st,
                              "in the %s of @%s made for the "
                              "gradient check",
                              to_f64 ? "f64 copy" : "copy",
                              eddy_ir_func_name(func));
  }
  if (st)
    *out_func = NULL;
  return st;
}

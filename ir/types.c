/// dtypes, half-precision conversions and interned types.
#include "ir/ir_internal.h"
#include "runtime/scalar.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- dtypes --------------------------------------------------------------- */

static const char *const eddy_dtype_names[EDDY_DT_COUNT_] = {
    [EDDY_DT_F16] = "f16", [EDDY_DT_BF16] = "bf16", [EDDY_DT_F32] = "f32",
    [EDDY_DT_F64] = "f64", [EDDY_DT_I1] = "i1",     [EDDY_DT_I8] = "i8",
    [EDDY_DT_I32] = "i32", [EDDY_DT_I64] = "i64",
};

static const size_t eddy_dtype_sizes[EDDY_DT_COUNT_] = {
    [EDDY_DT_F16] = 2, [EDDY_DT_BF16] = 2, [EDDY_DT_F32] = 4,
    [EDDY_DT_F64] = 8, [EDDY_DT_I1] = 1,   [EDDY_DT_I8] = 1,
    [EDDY_DT_I32] = 4, [EDDY_DT_I64] = 8,
};

const char *eddy_dtype_name(eddy_dtype_t dt) {
  return (unsigned)dt < EDDY_DT_COUNT_ ? eddy_dtype_names[dt] : "?";
}

bool eddy_dtype_from_name(const char *s, size_t len, eddy_dtype_t *out) {
  for (int i = 0; i < EDDY_DT_COUNT_; i++) {
    const char *n = eddy_dtype_names[i];
    if (strlen(n) == len && memcmp(n, s, len) == 0) {
      *out = (eddy_dtype_t)i;
      return true;
    }
  }
  return false;
}

size_t eddy_dtype_size(eddy_dtype_t dt) {
  assert((unsigned)dt < EDDY_DT_COUNT_);
  return eddy_dtype_sizes[dt];
}

bool eddy_dtype_is_float(eddy_dtype_t dt) {
  return dt == EDDY_DT_F16 || dt == EDDY_DT_BF16 || dt == EDDY_DT_F32 ||
         dt == EDDY_DT_F64;
}

bool eddy_dtype_is_int(eddy_dtype_t dt) {
  return dt == EDDY_DT_I8 || dt == EDDY_DT_I32 || dt == EDDY_DT_I64;
}

/* ---- Half precision ------------------------------------------------------- */

/* The rounding rules are the numeric contract's, in runtime/scalar.h. */

float eddy_f16_to_f32(uint16_t h) { return eddy_scalar_f16_to_f32(h); }

uint16_t eddy_f32_to_f16(float f) { return eddy_scalar_f32_to_f16(f); }

float eddy_bf16_to_f32(uint16_t h) { return eddy_scalar_bf16_to_f32(h); }

uint16_t eddy_f32_to_bf16(float f) { return eddy_scalar_f32_to_bf16(f); }

/* ---- Types ---------------------------------------------------------------- */

static bool eddy_type_eq(const void *item, const void *key) {
  const eddy_type_t *a = item, *b = key;
  if (a->kind != b->kind)
    return false;
  switch (a->kind) {
  case EDDY_TYPE_TENSOR:
    if (a->dtype != b->dtype || a->rank != b->rank)
      return false;
    for (int32_t i = 0; i < a->rank; i++)
      if (a->dims[i] != b->dims[i])
        return false;
    return true;
  case EDDY_TYPE_LIST:
    return a->elem == b->elem;
  case EDDY_TYPE_TOKEN:
    return true;
  case EDDY_TYPE_FUNC:
    if (a->num_inputs != b->num_inputs || a->num_outputs != b->num_outputs)
      return false;
    for (uint32_t i = 0; i < a->num_inputs; i++)
      if (a->inputs[i] != b->inputs[i])
        return false;
    for (uint32_t i = 0; i < a->num_outputs; i++)
      if (a->outputs[i] != b->outputs[i])
        return false;
    return true;
  }
  return false;
}

static uint64_t eddy_type_hash(const eddy_type_t *t) {
  uint64_t h = eddy_hash_combine(0x7e, (uint64_t)t->kind);
  switch (t->kind) {
  case EDDY_TYPE_TENSOR:
    h = eddy_hash_combine(h, (uint64_t)t->dtype);
    h = eddy_hash_combine(h, (uint64_t)(uint32_t)t->rank);
    for (int32_t i = 0; i < t->rank; i++)
      h = eddy_hash_combine(h, (uint64_t)t->dims[i]);
    break;
  case EDDY_TYPE_LIST:
    h = eddy_hash_combine(h, t->elem->hash);
    break;
  case EDDY_TYPE_TOKEN:
    break;
  case EDDY_TYPE_FUNC:
    h = eddy_hash_combine(h, t->num_inputs);
    for (uint32_t i = 0; i < t->num_inputs; i++)
      h = eddy_hash_combine(h, t->inputs[i]->hash);
    h = eddy_hash_combine(h, t->num_outputs);
    for (uint32_t i = 0; i < t->num_outputs; i++)
      h = eddy_hash_combine(h, t->outputs[i]->hash);
    break;
  }
  return h;
}

/// Returns the interned copy of key, copying its arrays into the arena.
static const eddy_type_t *eddy_type_intern(eddy_ctx_t *ctx,
                                           const eddy_type_t *key) {
  uint64_t h = eddy_type_hash(key);
  eddy_type_t *t = eddy_intern_find(&ctx->types, h, eddy_type_eq, key);
  if (t)
    return t;
  t = eddy_arena_alloc(ctx->arena, sizeof(*t));
  *t = *key;
  t->hash = h;
  if (key->kind == EDDY_TYPE_TENSOR && key->rank > 0)
    t->dims = eddy_arena_dup(ctx->arena, key->dims,
                             (size_t)key->rank * sizeof(int64_t));
  else if (key->kind == EDDY_TYPE_TENSOR)
    t->dims = NULL;
  if (key->kind == EDDY_TYPE_FUNC) {
    t->inputs = eddy_arena_dup(ctx->arena, key->inputs,
                               key->num_inputs * sizeof(eddy_type_t *));
    t->outputs = eddy_arena_dup(ctx->arena, key->outputs,
                                key->num_outputs * sizeof(eddy_type_t *));
  }
  eddy_intern_add(&ctx->types, h, t);
  return t;
}

const eddy_type_t *eddy_ir_tensor_type_get(eddy_ctx_t *ctx, eddy_dtype_t dt,
                                           int32_t rank, const int64_t *dims) {
  assert((unsigned)dt < EDDY_DT_COUNT_);
  assert(rank >= 0 || rank == EDDY_RANK_UNKNOWN);
  assert(rank <= 0 || dims);
  for (int32_t i = 0; i < rank; i++)
    assert(dims[i] >= 0 || dims[i] == EDDY_DIM_DYNAMIC);
  eddy_type_t key = {0};
  key.kind = EDDY_TYPE_TENSOR;
  key.dtype = dt;
  key.rank = rank;
  key.dims = rank > 0 ? dims : NULL;
  return eddy_type_intern(ctx, &key);
}

const eddy_type_t *eddy_ir_scalar_type_get(eddy_ctx_t *ctx, eddy_dtype_t dt) {
  return eddy_ir_tensor_type_get(ctx, dt, 0, NULL);
}

const eddy_type_t *eddy_ir_list_type_get(eddy_ctx_t *ctx,
                                         const eddy_type_t *elem) {
  assert(elem &&
         (elem->kind == EDDY_TYPE_TENSOR || elem->kind == EDDY_TYPE_LIST));
  eddy_type_t key = {0};
  key.kind = EDDY_TYPE_LIST;
  key.elem = elem;
  return eddy_type_intern(ctx, &key);
}

const eddy_type_t *eddy_ir_token_type_get(eddy_ctx_t *ctx) {
  eddy_type_t key = {0};
  key.kind = EDDY_TYPE_TOKEN;
  return eddy_type_intern(ctx, &key);
}

const eddy_type_t *eddy_ir_func_type_get(eddy_ctx_t *ctx,
                                         const eddy_type_t *const *inputs,
                                         size_t num_inputs,
                                         const eddy_type_t *const *outputs,
                                         size_t num_outputs) {
  assert(num_inputs <= UINT32_MAX && num_outputs <= UINT32_MAX);
  eddy_type_t key = {0};
  key.kind = EDDY_TYPE_FUNC;
  key.inputs = inputs;
  key.num_inputs = (uint32_t)num_inputs;
  key.outputs = outputs;
  key.num_outputs = (uint32_t)num_outputs;
  return eddy_type_intern(ctx, &key);
}

const eddy_type_t *eddy_ir_type_with_dtype(eddy_ctx_t *ctx,
                                           const eddy_type_t *t,
                                           eddy_dtype_t dt) {
  assert(t->kind == EDDY_TYPE_TENSOR);
  return eddy_ir_tensor_type_get(ctx, dt, t->rank, t->dims);
}

bool eddy_ir_type_is_tensor(const eddy_type_t *t) {
  return t && t->kind == EDDY_TYPE_TENSOR;
}

bool eddy_ir_type_is_scalar(const eddy_type_t *t) {
  return t && t->kind == EDDY_TYPE_TENSOR && t->rank == 0;
}

bool eddy_ir_type_is_static(const eddy_type_t *t) {
  if (!t || t->kind != EDDY_TYPE_TENSOR || t->rank == EDDY_RANK_UNKNOWN)
    return false;
  for (int32_t i = 0; i < t->rank; i++)
    if (t->dims[i] == EDDY_DIM_DYNAMIC)
      return false;
  return true;
}

int64_t eddy_ir_type_num_elements(const eddy_type_t *t) {
  if (!eddy_ir_type_is_static(t))
    return -1;
  /* a zero dim makes the count 0 even when the other dims overflow */
  for (int32_t i = 0; i < t->rank; i++)
    if (t->dims[i] == 0)
      return 0;
  int64_t n = 1;
  for (int32_t i = 0; i < t->rank; i++)
    if (!eddy_checked_mul_i64(n, t->dims[i], &n))
      return -1;
  return n;
}

bool eddy_ir_type_is_compatible(const eddy_type_t *a, const eddy_type_t *b) {
  if (a == b)
    return true;
  if (!a || !b || a->kind != b->kind)
    return false;
  switch (a->kind) {
  case EDDY_TYPE_TENSOR:
    if (a->dtype != b->dtype)
      return false;
    if (a->rank == EDDY_RANK_UNKNOWN || b->rank == EDDY_RANK_UNKNOWN)
      return true;
    if (a->rank != b->rank)
      return false;
    for (int32_t i = 0; i < a->rank; i++)
      if (a->dims[i] != b->dims[i] && a->dims[i] != EDDY_DIM_DYNAMIC &&
          b->dims[i] != EDDY_DIM_DYNAMIC)
        return false;
    return true;
  case EDDY_TYPE_LIST:
    return eddy_ir_type_is_compatible(a->elem, b->elem);
  case EDDY_TYPE_TOKEN:
    return true;
  case EDDY_TYPE_FUNC:
    if (a->num_inputs != b->num_inputs || a->num_outputs != b->num_outputs)
      return false;
    for (uint32_t i = 0; i < a->num_inputs; i++)
      if (!eddy_ir_type_is_compatible(a->inputs[i], b->inputs[i]))
        return false;
    for (uint32_t i = 0; i < a->num_outputs; i++)
      if (!eddy_ir_type_is_compatible(a->outputs[i], b->outputs[i]))
        return false;
    return true;
  }
  return false;
}

/// Scratch array of n elements: `small` when it fits, else malloc'd (free
/// with eddy_scratch_free). Keeps temporaries out of the context arena.
static void *eddy_scratch_get(void *small, size_t small_bytes, size_t n,
                              size_t elem) {
  if (n * elem <= small_bytes)
    return small;
  void *p = malloc(n * elem);
  if (!p) {
    fprintf(stderr, "eddy: out of memory (type scratch)\n");
    abort();
  }
  return p;
}

static void eddy_scratch_free(void *p, void *small) {
  if (p != small)
    free(p);
}

/// Refines or generalizes each element of two type lists into out; false
/// when one pair fails.
static bool eddy_type_map_list(
    eddy_ctx_t *ctx, const eddy_type_t *const *a, const eddy_type_t *const *b,
    uint32_t n, const eddy_type_t **out,
    const eddy_type_t *(*fn)(eddy_ctx_t *, const eddy_type_t *,
                             const eddy_type_t *)) {
  for (uint32_t i = 0; i < n; i++) {
    out[i] = fn(ctx, a[i], b[i]);
    if (!out[i])
      return false;
  }
  return true;
}

/// FUNC types combined element by element with fn (refine or generalize).
static const eddy_type_t *eddy_func_type_combine(
    eddy_ctx_t *ctx, const eddy_type_t *a, const eddy_type_t *b,
    const eddy_type_t *(*fn)(eddy_ctx_t *, const eddy_type_t *,
                             const eddy_type_t *)) {
  if (a->num_inputs != b->num_inputs || a->num_outputs != b->num_outputs)
    return NULL;
  size_t n = (size_t)a->num_inputs + a->num_outputs;
  const eddy_type_t *small[16];
  const eddy_type_t **tmp =
      eddy_scratch_get(small, sizeof(small), n, sizeof(eddy_type_t *));
  const eddy_type_t *r = NULL;
  if (eddy_type_map_list(ctx, a->inputs, b->inputs, a->num_inputs, tmp, fn) &&
      eddy_type_map_list(ctx, a->outputs, b->outputs, a->num_outputs,
                         tmp + a->num_inputs, fn))
    r = eddy_ir_func_type_get(ctx, tmp, a->num_inputs, tmp + a->num_inputs,
                              a->num_outputs);
  eddy_scratch_free(tmp, small);
  return r;
}

const eddy_type_t *eddy_ir_type_refine(eddy_ctx_t *ctx, const eddy_type_t *a,
                                       const eddy_type_t *b) {
  if (a == b)
    return a;
  if (!eddy_ir_type_is_compatible(a, b))
    return NULL;
  switch (a->kind) {
  case EDDY_TYPE_TENSOR: {
    if (a->rank == EDDY_RANK_UNKNOWN)
      return b;
    if (b->rank == EDDY_RANK_UNKNOWN)
      return a;
    if (a->rank == 0)
      return a;
    int64_t small[8];
    int64_t *dims =
        eddy_scratch_get(small, sizeof(small), (size_t)a->rank, sizeof(int64_t));
    for (int32_t i = 0; i < a->rank; i++)
      dims[i] = a->dims[i] == EDDY_DIM_DYNAMIC ? b->dims[i] : a->dims[i];
    const eddy_type_t *r = eddy_ir_tensor_type_get(ctx, a->dtype, a->rank, dims);
    eddy_scratch_free(dims, small);
    return r;
  }
  case EDDY_TYPE_LIST: {
    const eddy_type_t *e = eddy_ir_type_refine(ctx, a->elem, b->elem);
    return e ? eddy_ir_list_type_get(ctx, e) : NULL;
  }
  case EDDY_TYPE_TOKEN:
    return a;
  case EDDY_TYPE_FUNC:
    return eddy_func_type_combine(ctx, a, b, eddy_ir_type_refine);
  }
  return NULL;
}

const eddy_type_t *eddy_ir_type_generalize(eddy_ctx_t *ctx,
                                           const eddy_type_t *a,
                                           const eddy_type_t *b) {
  if (a == b)
    return a;
  if (!a || !b || a->kind != b->kind)
    return NULL;
  switch (a->kind) {
  case EDDY_TYPE_TENSOR: {
    if (a->dtype != b->dtype)
      return NULL;
    if (a->rank == EDDY_RANK_UNKNOWN || b->rank == EDDY_RANK_UNKNOWN ||
        a->rank != b->rank)
      return eddy_ir_tensor_type_get(ctx, a->dtype, EDDY_RANK_UNKNOWN, NULL);
    int64_t small[8];
    int64_t *dims =
        eddy_scratch_get(small, sizeof(small), (size_t)a->rank, sizeof(int64_t));
    for (int32_t i = 0; i < a->rank; i++)
      dims[i] = a->dims[i] == b->dims[i] ? a->dims[i] : EDDY_DIM_DYNAMIC;
    const eddy_type_t *r = eddy_ir_tensor_type_get(ctx, a->dtype, a->rank, dims);
    eddy_scratch_free(dims, small);
    return r;
  }
  case EDDY_TYPE_LIST: {
    const eddy_type_t *e = eddy_ir_type_generalize(ctx, a->elem, b->elem);
    return e ? eddy_ir_list_type_get(ctx, e) : NULL;
  }
  case EDDY_TYPE_TOKEN:
    return a;
  case EDDY_TYPE_FUNC:
    return eddy_func_type_combine(ctx, a, b, eddy_ir_type_generalize);
  }
  return NULL;
}

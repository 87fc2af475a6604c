/// The element shapes of v1 TensorArrays and stacks, from what is written
/// into them, for the graph that runs as dataflow (eddy_tf_legalize_dataflow).
///
/// TensorFlow records an unknown shape for TensorArrayReadV3 and StackPopV2
/// unless the array was made with a known element_shape, so an op after a
/// read (ExpandDims, Pack, Squeeze) cannot be lowered without its rank. In
/// that graph the arrays stay resource ops, so the list step of
/// shape-infer cannot see them; this step does the same over handles: the
/// handle values connected by the ops that pass a handle on (Enter,
/// Identity, Switch, Merge, NextIteration, Exit, df.after) and by
/// TensorArrayGradV3 (a gradient array holds elements of the forward
/// array's shape) form one web; the least refined type covering every
/// value written into the web (TensorArrayWriteV3, a row of
/// TensorArrayScatterV3, StackPushV2) is the type of every element read
/// from it (TensorArrayReadV3, StackPopV2, a row of TensorArrayGatherV3),
/// refined with what the read declares. Reads feed writes of other arrays,
/// so the step repeats until nothing changes.
///
/// Each round also gives the ops that forward a value (Enter, Identity,
/// Switch, NextIteration, Exit, df.after) their input's type and a Merge
/// the join of its inputs' types, refined with what they declare: a loop
/// value TensorFlow left unknown (shape_invariants None) whose next value
/// is such a read gets that read's shape, as TensorFlow's shape refiner
/// joins a Merge's inputs. Starting from the declared types (unknown where
/// TensorFlow says nothing) every round stays sound; other ops keep the
/// types the importer gave them (elementwise ops their input's).
#include "lower/tf/tf_lower_internal.h"

#include <stdlib.h>
#include <string.h>

/// Rounds at most: each one refines some value, which a tensor type can
/// only be a few times (a nest of loops takes a round per level).
#define AT_MAX_ROUNDS 64

typedef struct at_state {
  eddy_ctx_t *ctx;
  eddy_ptrmap_t index; ///< handle value -> 1 + its position
  int32_t *parent;     ///< union-find over handles
  const eddy_type_t **written;
  bool *no_join;
  size_t n, cap;
  bool oom;
} at_state_t;

static bool is_handle(const eddy_value_t *v) {
  return v->type->kind == EDDY_TYPE_LIST;
}

static int32_t at_id(at_state_t *s, eddy_value_t *v) {
  void *p = eddy_ptrmap_get(&s->index, v);
  if (p)
    return (int32_t)((uintptr_t)p - 1);
  if (s->n == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 64;
    int32_t *parent =
        cap > INT32_MAX ? NULL : realloc(s->parent, cap * sizeof *parent);
    if (!parent) {
      s->oom = true;
      return -1;
    }
    s->parent = parent;
    s->cap = cap;
  }
  s->parent[s->n] = (int32_t)s->n;
  eddy_ptrmap_put(&s->index, v, (void *)(uintptr_t)(s->n + 1));
  return (int32_t)s->n++;
}

static int32_t at_find(at_state_t *s, int32_t i) {
  while (s->parent[i] != i) {
    s->parent[i] = s->parent[s->parent[i]];
    i = s->parent[i];
  }
  return i;
}

static void at_union(at_state_t *s, eddy_value_t *a, eddy_value_t *b) {
  if (!is_handle(a) || !is_handle(b))
    return;
  int32_t x = at_id(s, a), y = at_id(s, b);
  if (x < 0 || y < 0)
    return;
  x = at_find(s, x);
  y = at_find(s, y);
  if (x != y)
    s->parent[x] = y;
}

/// Ops that pass a handle on unchanged (data operand 0 to every result).
static bool passes_handle(const eddy_op_t *op) {
  return tfl_is(op, "tf.Enter") || tfl_is(op, "tf.Identity") ||
         tfl_is(op, "tf.Exit") || tfl_is(op, "tf.NextIteration") ||
         tfl_is(op, "tf.Switch") || tfl_is(op, "tf.Merge") ||
         tfl_is(op, "df.after");
}

static void at_connect(at_state_t *s, eddy_block_t *b) {
  for (eddy_op_t *op = b->first; op; op = op->next) {
    if (passes_handle(op) && op->num_operands > 0) {
      eddy_value_t *h = eddy_ir_op_operand(op, 0);
      for (uint32_t i = 0; i < op->num_results; i++)
        at_union(s, h, &op->results[i]);
      if (tfl_is(op, "tf.Merge"))
        for (uint32_t i = 1; i < op->num_operands; i++)
          at_union(s, h, eddy_ir_op_operand(op, i));
    } else if (tfl_is(op, "tf.TensorArrayGradV3") && op->num_operands > 0 &&
               op->num_results > 0) {
      at_union(s, eddy_ir_op_operand(op, 0), &op->results[0]);
    }
    for (uint32_t r = 0; r < op->num_regions; r++)
      for (eddy_block_t *inner = op->regions[r].first; inner;
           inner = inner->next)
        at_connect(s, inner);
  }
}

/// The root of the web of op's handle operand 0; -1 when it has none.
static int32_t at_root(at_state_t *s, const eddy_op_t *op) {
  if (op->num_operands == 0)
    return -1;
  void *p = eddy_ptrmap_get(&s->index, eddy_ir_op_operand(op, 0));
  return p ? at_find(s, (int32_t)((uintptr_t)p - 1)) : -1;
}

/// t without its first dim (a row of a scattered tensor); NULL when t has
/// no rank.
static const eddy_type_t *row_type(eddy_ctx_t *ctx, const eddy_type_t *t) {
  if (t->kind != EDDY_TYPE_TENSOR || t->rank < 1)
    return NULL;
  return eddy_ir_tensor_type_get(ctx, t->dtype, t->rank - 1, t->dims + 1);
}

static void at_write(at_state_t *s, int32_t root, const eddy_type_t *t) {
  if (root < 0 || s->no_join[root])
    return;
  if (!t || t->kind != EDDY_TYPE_TENSOR) {
    s->no_join[root] = true;
    return;
  }
  const eddy_type_t *w = s->written[root];
  w = w ? eddy_ir_type_generalize(s->ctx, w, t) : t;
  if (!w)
    s->no_join[root] = true;
  s->written[root] = w;
}

static void at_writes(at_state_t *s, eddy_block_t *b) {
  for (eddy_op_t *op = b->first; op; op = op->next) {
    if (tfl_is(op, "tf.TensorArrayWriteV3") && op->num_operands >= 3)
      at_write(s, at_root(s, op), eddy_ir_op_operand(op, 2)->type);
    else if (tfl_is(op, "tf.TensorArrayScatterV3") && op->num_operands >= 3)
      at_write(s, at_root(s, op),
               row_type(s->ctx, eddy_ir_op_operand(op, 2)->type));
    else if (tfl_is(op, "tf.StackPushV2") && op->num_operands >= 2)
      at_write(s, at_root(s, op), eddy_ir_op_operand(op, 1)->type);
    for (uint32_t r = 0; r < op->num_regions; r++)
      for (eddy_block_t *inner = op->regions[r].first; inner;
           inner = inner->next)
        at_writes(s, inner);
  }
}

/// Refines result 0 of op to t; true when its type changed.
static bool at_refine(eddy_value_t *v, eddy_ctx_t *ctx, const eddy_type_t *t) {
  const eddy_type_t *r = eddy_ir_type_refine(ctx, v->type, t);
  if (!r || r == v->type)
    return false;
  eddy_ir_value_set_type(v, r);
  return true;
}

/// The type an op that forwards its data input gives its results: the
/// input's, for a Merge the join of its inputs'; NULL for other ops.
static const eddy_type_t *forwarded(at_state_t *s, const eddy_op_t *op) {
  if (!passes_handle(op) || op->num_operands == 0)
    return NULL;
  const eddy_type_t *t = eddy_ir_op_operand(op, 0)->type;
  for (uint32_t i = 1; t && tfl_is(op, "tf.Merge") && i < op->num_operands;
       i++) {
    const eddy_type_t *o = eddy_ir_op_operand(op, i)->type;
    t = o->kind == EDDY_TYPE_TOKEN ? t : eddy_ir_type_generalize(s->ctx, t, o);
  }
  return t && t->kind == EDDY_TYPE_TENSOR ? t : NULL;
}

static int64_t at_reads(at_state_t *s, eddy_block_t *b) {
  int64_t changed = 0;
  for (eddy_op_t *op = b->first; op; op = op->next) {
    const eddy_type_t *f = forwarded(s, op);
    for (uint32_t i = 0; f && i < op->num_results; i++)
      if (!(tfl_is(op, "tf.Merge") && i == 1)) // value_index
        changed += at_refine(&op->results[i], s->ctx, f);
    bool read =
        tfl_is(op, "tf.TensorArrayReadV3") || tfl_is(op, "tf.StackPopV2");
    bool gather = tfl_is(op, "tf.TensorArrayGatherV3");
    int32_t root = (read || gather) && op->num_results ? at_root(s, op) : -1;
    const eddy_type_t *w =
        root >= 0 && !s->no_join[root] ? s->written[root] : NULL;
    if (w && read) {
      changed += at_refine(&op->results[0], s->ctx, w);
    } else if (w && gather && w->rank >= 0 &&
               w->rank < EDDY_TFL_MAX_RANK) {
      int64_t dims[EDDY_TFL_MAX_RANK + 1];
      dims[0] = EDDY_DIM_DYNAMIC;
      if (w->rank > 0) // a scalar's dims may be NULL
        memcpy(dims + 1, w->dims, (size_t)w->rank * sizeof *dims);
      changed += at_refine(&op->results[0], s->ctx,
                           eddy_ir_tensor_type_get(s->ctx, w->dtype,
                                                   w->rank + 1, dims));
    }
    for (uint32_t r = 0; r < op->num_regions; r++)
      for (eddy_block_t *inner = op->regions[r].first; inner;
           inner = inner->next)
        changed += at_reads(s, inner);
  }
  return changed;
}

/// One round over func: *changed counts the reads refined.
static eddy_status_t at_round(eddy_ctx_t *ctx, eddy_block_t *entry,
                              int64_t *changed) {
  at_state_t s = {.ctx = ctx};
  eddy_ptrmap_init(&s.index);
  at_connect(&s, entry);
  *changed = 0;
  if (!s.oom) {
    s.written = calloc(s.n + 1, sizeof *s.written);
    s.no_join = calloc(s.n + 1, sizeof *s.no_join);
    if (s.written && s.no_join) {
      at_writes(&s, entry);
      *changed = at_reads(&s, entry);
    } else {
      s.oom = true;
    }
  }
  free(s.written);
  free(s.no_join);
  free(s.parent);
  eddy_ptrmap_destroy(&s.index);
  return s.oom ? eddy_status_create(EDDY_ERR_RESOURCE,
                                    "out of memory typing TensorArrays")
               : NULL;
}

eddy_status_t eddy_tfl_v1_array_types(eddy_module_t *m) {
  for (eddy_op_t *f = eddy_ir_module_body(m)->first; f; f = f->next) {
    eddy_block_t *entry =
        eddy_ir_op_is(f, "func.func") ? eddy_ir_func_entry(f) : NULL;
    if (!entry)
      continue;
    int64_t changed = 1;
    for (int round = 0; changed && round < AT_MAX_ROUNDS; round++)
      EDDY_RETURN_IF_ERROR(at_round(m->ctx, entry, &changed));
  }
  return NULL;
}

/// The element shapes of v1 TensorArrays and stacks, from what is written
/// into them, for the graph that runs as dataflow (eddy_tf_legalize_dataflow).
///
/// TensorFlow records an unknown shape for TensorArrayReadV3 and StackPopV2
/// unless the array was made with a known element_shape, so an op after a
/// read (ExpandDims, Pack, Squeeze) cannot be lowered without its rank. In
/// that graph the arrays stay resource ops, so the list step of
/// shape-infer cannot see them; this step does the same over handles: the
/// handle values connected by the ops that pass a handle on (Enter,
/// Identity, Switch, Merge, NextIteration, Exit, df.after) form one web;
/// the least refined type covering every value written into the web
/// (TensorArrayWriteV3, a row of TensorArrayScatterV3, StackPushV2) is the
/// type of every element read from it (TensorArrayReadV3, StackPopV2, a
/// row of TensorArrayGatherV3), refined with what the read declares. The
/// gradient arrays of one forward web (TensorArrayGradV3) form one web of
/// their own, whose items also have the shapes of the forward array's
/// (the gradient of item i has the shape of item i): its reads are refined
/// with the forward web's type too, while what the gradient writes (often
/// of a shape the graph does not record) says nothing about the forward
/// items. Reads feed writes of other arrays, so the step repeats until
/// nothing changes.
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
  /// TensorArrayGradV3 ops: [2i] the forward handle, [2i + 1] the gradient
  /// array's.
  eddy_value_t **grads;
  size_t ngrads, capgrads;
  /// When set (keep_dataflow legalization under way): a written value
  /// already translated counts with its translation's type.
  eddy_tfl_t *z;
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
         tfl_is(op, "tf.Switch") || tfl_is(op, "tf._SwitchN") ||
         tfl_is(op, "tf.Merge") || tfl_is(op, "df.after");
}

/// The df ops of the graph kept as dataflow that pass a handle on.
static bool df_passes_handle(const eddy_op_t *op) {
  return tfl_is(op, "df.enter") || tfl_is(op, "df.exit") ||
         tfl_is(op, "df.next_iteration") || tfl_is(op, "df.switch") ||
         tfl_is(op, "df.switch_n") || tfl_is(op, "df.merge");
}

static void at_connect(at_state_t *s, eddy_block_t *b) {
  for (eddy_op_t *op = b->first; op; op = op->next) {
    if ((passes_handle(op) || df_passes_handle(op)) &&
        op->num_operands > 0) {
      eddy_value_t *h = eddy_ir_op_operand(op, 0);
      for (uint32_t i = 0; i < op->num_results; i++)
        at_union(s, h, &op->results[i]);
      if (tfl_is(op, "tf.Merge") || tfl_is(op, "df.merge"))
        for (uint32_t i = 1; i < op->num_operands; i++)
          at_union(s, h, eddy_ir_op_operand(op, i));
    } else if (tfl_is(op, "tf.TensorArrayGradV3") && op->num_operands > 0 &&
               op->num_results > 0 && is_handle(eddy_ir_op_operand(op, 0)) &&
               is_handle(&op->results[0])) {
      if (s->ngrads == s->capgrads) {
        size_t cap = s->capgrads ? 2 * s->capgrads : 8;
        eddy_value_t **g = realloc(s->grads, 2 * cap * sizeof *g);
        if (!g) {
          s->oom = true;
          continue;
        }
        s->grads = g;
        s->capgrads = cap;
      }
      s->grads[2 * s->ngrads] = eddy_ir_op_operand(op, 0);
      s->grads[2 * s->ngrads + 1] = &op->results[0];
      s->ngrads++;
      if (at_id(s, eddy_ir_op_operand(op, 0)) < 0 ||
          at_id(s, &op->results[0]) < 0)
        s->oom = true;
    }
    for (uint32_t r = 0; r < op->num_regions; r++)
      for (eddy_block_t *inner = op->regions[r].first; inner;
           inner = inner->next)
        at_connect(s, inner);
  }
}

/// The gradient arrays of one forward web go into one web (two
/// TensorArrayGradV3 of one array and source are one array).
static void at_group_grads(at_state_t *s) {
  for (size_t i = 0; !s->oom && i < s->ngrads; i++)
    for (size_t j = 0; j < i; j++)
      if (at_find(s, at_id(s, s->grads[2 * i])) ==
          at_find(s, at_id(s, s->grads[2 * j])))
        at_union(s, s->grads[2 * i + 1], s->grads[2 * j + 1]);
}

/// The type of the items read from web `root`: what is written into it,
/// refined with the forward web's items for a web of gradient arrays (up
/// to `depth` more levels of gradients of gradient arrays); NULL when
/// unknown.
static const eddy_type_t *at_items(at_state_t *s, int32_t root, int depth) {
  const eddy_type_t *w = s->no_join[root] ? NULL : s->written[root];
  for (size_t i = 0; depth > 0 && i < s->ngrads; i++) {
    int32_t f = at_find(s, at_id(s, s->grads[2 * i]));
    if (f == root || at_find(s, at_id(s, s->grads[2 * i + 1])) != root)
      continue;
    const eddy_type_t *ft = at_items(s, f, depth - 1);
    const eddy_type_t *r = !ft ? w : w ? eddy_ir_type_refine(s->ctx, w, ft) : ft;
    if (r)
      w = r;
  }
  return w;
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

/// The type of operand i of op, a written value: its translation's when
/// there is one.
static const eddy_type_t *at_written(at_state_t *s, const eddy_op_t *op,
                                     uint32_t i) {
  eddy_value_t *v = eddy_ir_op_operand(op, i);
  eddy_value_t *t = s->z ? eddy_tfl_get(s->z, v) : NULL;
  return t && t != v && t != &s->z->none ? t->type : v->type;
}

static void at_writes(at_state_t *s, eddy_block_t *b) {
  for (eddy_op_t *op = b->first; op; op = op->next) {
    if (tfl_is(op, "tf.TensorArrayWriteV3") && op->num_operands >= 3)
      at_write(s, at_root(s, op), at_written(s, op, 2));
    else if (tfl_is(op, "tf.TensorArrayScatterV3") && op->num_operands >= 3)
      at_write(s, at_root(s, op), row_type(s->ctx, at_written(s, op, 2)));
    else if (tfl_is(op, "tf.StackPushV2") && op->num_operands >= 2)
      at_write(s, at_root(s, op), at_written(s, op, 1));
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

/// The type result 0 of a read op (TensorArrayReadV3, StackPopV2: an
/// item; TensorArrayGatherV3: items stacked) has from what is written into
/// its array; NULL for another op or when nothing is known.
static const eddy_type_t *at_read_type(at_state_t *s, const eddy_op_t *op) {
  bool read =
      tfl_is(op, "tf.TensorArrayReadV3") || tfl_is(op, "tf.StackPopV2");
  bool gather = tfl_is(op, "tf.TensorArrayGatherV3");
  int32_t root = (read || gather) && op->num_results ? at_root(s, op) : -1;
  const eddy_type_t *w = root >= 0 ? at_items(s, root, 4) : NULL;
  if (!w || read)
    return w;
  if (w->rank < 0 || w->rank >= EDDY_TFL_MAX_RANK)
    return NULL;
  int64_t dims[EDDY_TFL_MAX_RANK + 1];
  dims[0] = EDDY_DIM_DYNAMIC;
  if (w->rank > 0) // a scalar's dims may be NULL
    memcpy(dims + 1, w->dims, (size_t)w->rank * sizeof *dims);
  return eddy_ir_tensor_type_get(s->ctx, w->dtype, w->rank + 1, dims);
}

static int64_t at_reads(at_state_t *s, eddy_block_t *b) {
  int64_t changed = 0;
  for (eddy_op_t *op = b->first; op; op = op->next) {
    const eddy_type_t *f = forwarded(s, op);
    for (uint32_t i = 0; f && i < op->num_results; i++)
      if (!(tfl_is(op, "tf.Merge") && i == 1)) // value_index
        changed += at_refine(&op->results[i], s->ctx, f);
    const eddy_type_t *w = at_read_type(s, op);
    if (w)
      changed += at_refine(&op->results[0], s->ctx, w);
    for (uint32_t r = 0; r < op->num_regions; r++)
      for (eddy_block_t *inner = op->regions[r].first; inner;
           inner = inner->next)
        changed += at_reads(s, inner);
  }
  return changed;
}

/// The webs of block `entry` and what is written into them; false when
/// out of memory.
static bool at_build(at_state_t *s, eddy_block_t *entry) {
  eddy_ptrmap_init(&s->index);
  at_connect(s, entry);
  at_group_grads(s);
  if (!s->oom) {
    s->written = calloc(s->n + 1, sizeof *s->written);
    s->no_join = calloc(s->n + 1, sizeof *s->no_join);
    s->oom = !s->written || !s->no_join;
  }
  if (!s->oom)
    at_writes(s, entry);
  return !s->oom;
}

static void at_free(at_state_t *s) {
  free(s->written);
  free(s->no_join);
  free(s->parent);
  free(s->grads);
  eddy_ptrmap_destroy(&s->index);
}

/// One round over func: *changed counts the reads refined.
static eddy_status_t at_round(eddy_ctx_t *ctx, eddy_block_t *entry,
                              int64_t *changed) {
  at_state_t s = {.ctx = ctx};
  *changed = 0;
  if (at_build(&s, entry))
    *changed = at_reads(&s, entry);
  at_free(&s);
  return s.oom ? eddy_status_create(EDDY_ERR_RESOURCE,
                                    "out of memory typing TensorArrays")
               : NULL;
}

eddy_status_t eddy_tfl_v1_read_type(eddy_tfl_t *z, const eddy_op_t *op,
                                    const eddy_type_t **out) {
  *out = op->num_results ? op->results[0].type : NULL;
  if (!*out || !z->top)
    return NULL;
  at_state_t s = {.ctx = z->ctx, .z = z};
  const eddy_type_t *w = at_build(&s, (eddy_block_t *)z->top)
                             ? at_read_type(&s, op)
                             : NULL;
  const eddy_type_t *r = w ? eddy_ir_type_refine(z->ctx, *out, w) : NULL;
  if (r)
    *out = r;
  at_free(&s);
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

/// TensorList storage and the tl kernels.
///
/// A list is reference counted. Items are contiguous tensors stored
/// compactly: a buffer reference, a data pointer and the index of their
/// shape in a small per-list shape table (items of one list nearly always
/// share a few shapes). Copy-on-write: an op taking `owned_list` mutates in
/// place when it holds the only reference; otherwise it first copies the
/// item table (items keep sharing their buffers) and drops its reference to
/// the original.
///
/// Lists nest: a list of depth d > 0 holds lists of depth d - 1 (nested
/// loops accumulate into lists of lists). Such an item keeps one reference
/// to its list in `data`; dtype and element shape then describe the
/// innermost tensors.
#include "runtime/rt_internal.h"
#include "runtime/scalar.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>

#define RT_UNSET UINT32_MAX
/// The shape index of an item that is a list (held in rt_item_t.data).
#define RT_LIST_ITEM (UINT32_MAX - 1)
/// How many of the latest shapes a push compares against before adding a
/// new table entry (keeps pushes O(1) when every item has its own shape).
#define RT_SHAPE_LOOKBACK 4

typedef struct rt_item {
  eddy_rt_buffer_t *owner; // one reference; NULL when unset
  void *data;
  uint32_t shape; // index into shapes, RT_UNSET or RT_LIST_ITEM
} rt_item_t;

struct eddy_rt_list {
  _Atomic int64_t refs;
  eddy_rt_ctx_t *ctx;
  int32_t dtype;
  int32_t depth; // 0: items are tensors; d > 0: lists of depth d - 1
  eddy_rt_elem_shape_t elem;
  int64_t max_elements; // -1: unbounded
  int64_t size, cap;
  rt_item_t *items;
  eddy_rt_elem_shape_t *shapes;
  int64_t nshapes, shapes_cap;
};

/// ---- Element shapes ------------------------------------------------------------

eddy_rt_elem_shape_t eddy_rt_elem_shape_unknown(void) {
  eddy_rt_elem_shape_t s;
  memset(&s, 0, sizeof(s));
  s.rank = -1;
  return s;
}

bool eddy_rt_elem_shape_make(int32_t rank, const int64_t *dims,
                             eddy_rt_elem_shape_t *out_shape) {
  *out_shape = eddy_rt_elem_shape_unknown();
  if (rank < -1 || rank > EDDY_RT_MAX_RANK)
    return false;
  out_shape->rank = rank;
  for (int32_t i = 0; i < rank; i++)
    out_shape->dims[i] = dims[i] < 0 ? -1 : dims[i];
  return true;
}

static bool rt_elem_known(const eddy_rt_elem_shape_t *s) {
  if (s->rank < 0)
    return false;
  for (int32_t i = 0; i < s->rank; i++) {
    if (s->dims[i] < 0)
      return false;
  }
  return true;
}

char *rt_elem_str(const eddy_rt_elem_shape_t *s, char *buf) {
  if (s->rank < 0) {
    snprintf(buf, RT_SHAPE_BUF, "<unknown rank>");
    return buf;
  }
  size_t pos = (size_t)snprintf(buf, RT_SHAPE_BUF, "[");
  for (int32_t i = 0; i < s->rank && pos < RT_SHAPE_BUF; i++) {
    int n = s->dims[i] < 0
                ? snprintf(buf + pos, RT_SHAPE_BUF - pos, "%s?", i ? ", " : "")
                : snprintf(buf + pos, RT_SHAPE_BUF - pos, "%s%" PRId64,
                           i ? ", " : "", s->dims[i]);
    pos += n > 0 ? (size_t)n : 0;
  }
  if (pos < RT_SHAPE_BUF)
    snprintf(buf + pos, RT_SHAPE_BUF - pos, "]");
  return buf;
}

static bool rt_elem_matches(const eddy_rt_elem_shape_t *s, int32_t rank,
                            const int64_t *dims) {
  if (s->rank < 0)
    return true;
  if (s->rank != rank)
    return false;
  for (int32_t i = 0; i < rank; i++) {
    if (s->dims[i] >= 0 && s->dims[i] != dims[i])
      return false;
  }
  return true;
}

static eddy_rt_status_t rt_check_elem_shape(const char *op,
                                            const eddy_rt_elem_shape_t *s) {
  if (!s)
    return NULL;
  if (s->rank < -1 || s->rank > EDDY_RT_MAX_RANK)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "element shape has rank %d, expected -1..%d", (int)s->rank,
                  EDDY_RT_MAX_RANK);
  return NULL;
}

/// ---- Allocation and copy-on-write ------------------------------------------------

static eddy_rt_status_t rt_list_new(eddy_rt_ctx_t *ctx, const char *op,
                                    int32_t depth, int32_t dtype,
                                    const eddy_rt_elem_shape_t *elem,
                                    int64_t max_elements,
                                    eddy_rt_list_t **out_list) {
  *out_list = NULL;
  if (dtype < 0 || dtype >= EDDY_RT_DTYPE_COUNT_)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "element dtype %d is not a dtype", (int)dtype);
  if (depth < 0 || depth > EDDY_RT_MAX_LIST_DEPTH)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "list nesting depth %d is outside 0..%d", (int)depth,
                  EDDY_RT_MAX_LIST_DEPTH);
  EDDY_RT_RETURN_IF_ERROR(rt_check_elem_shape(op, elem));
  void *p;
  EDDY_RT_RETURN_IF_ERROR(
      eddy_rt_alloc(ctx, (int64_t)sizeof(eddy_rt_list_t), op, &p));
  eddy_rt_list_t *l = p;
  memset(l, 0, sizeof(*l));
  atomic_init(&l->refs, 1);
  l->ctx = ctx;
  l->dtype = dtype;
  l->depth = depth;
  l->elem = elem ? *elem : eddy_rt_elem_shape_unknown();
  for (int32_t i = 0; i < l->elem.rank; i++)
    l->elem.dims[i] = l->elem.dims[i] < 0 ? -1 : l->elem.dims[i];
  l->max_elements = max_elements < 0 ? -1 : max_elements;
  *out_list = l;
  return NULL;
}

// Grows a table of `esize`-byte entries to hold `need`, doubling.
static eddy_rt_status_t rt_grow(eddy_rt_ctx_t *ctx, const char *op,
                                void **table, int64_t *cap, int64_t used,
                                int64_t need, int64_t esize) {
  if (need <= *cap)
    return NULL;
  int64_t ncap = *cap < 4 ? 4 : *cap;
  while (ncap < need)
    ncap = ncap > INT64_MAX / 2 ? need : ncap * 2;
  if (ncap > INT64_MAX / esize)
    return rt_err(EDDY_RT_ERR_RESOURCE, op,
                  "list storage for %" PRId64 " entries overflows int64", need);
  void *p;
  EDDY_RT_RETURN_IF_ERROR(eddy_rt_alloc(ctx, ncap * esize, op, &p));
  if (used > 0)
    memcpy(p, *table, (size_t)(used * esize));
  eddy_rt_free(ctx, *table, *cap * esize);
  *table = p;
  *cap = ncap;
  return NULL;
}

static void rt_item_retain(const rt_item_t *it) {
  if (it->shape == RT_LIST_ITEM)
    eddy_rt_list_retain(it->data);
  else if (it->owner)
    eddy_rt_buffer_retain(it->owner);
}

static void rt_item_release(const rt_item_t *it) {
  if (it->shape == RT_LIST_ITEM)
    eddy_rt_list_release(it->data);
  else
    eddy_rt_buffer_release(it->owner);
}

static void rt_list_destroy(eddy_rt_list_t *l) {
  // Recursion into item lists is bounded by EDDY_RT_MAX_LIST_DEPTH.
  for (int64_t i = 0; i < l->size; i++)
    rt_item_release(&l->items[i]);
  eddy_rt_free(l->ctx, l->items, l->cap * (int64_t)sizeof(rt_item_t));
  eddy_rt_free(l->ctx, l->shapes,
               l->shapes_cap * (int64_t)sizeof(eddy_rt_elem_shape_t));
  eddy_rt_free(l->ctx, l, (int64_t)sizeof(eddy_rt_list_t));
}

void eddy_rt_list_retain(eddy_rt_list_t *list) {
  atomic_fetch_add_explicit(&list->refs, 1, memory_order_relaxed);
}

void eddy_rt_list_release(eddy_rt_list_t *list) {
  if (list &&
      atomic_fetch_sub_explicit(&list->refs, 1, memory_order_acq_rel) == 1)
    rt_list_destroy(list);
}

bool eddy_rt_list_is_unique(const eddy_rt_list_t *list) {
  return atomic_load_explicit(&((eddy_rt_list_t *)list)->refs,
                              memory_order_acquire) == 1;
}

int64_t eddy_rt_list_size(const eddy_rt_list_t *list) { return list->size; }
int32_t eddy_rt_list_dtype(const eddy_rt_list_t *list) { return list->dtype; }
int32_t eddy_rt_list_depth(const eddy_rt_list_t *list) { return list->depth; }
const eddy_rt_elem_shape_t *eddy_rt_list_elem_shape(const eddy_rt_list_t *list) {
  return &list->elem;
}
int64_t eddy_rt_list_max_elements(const eddy_rt_list_t *list) {
  return list->max_elements;
}

// Takes over *lp's reference and leaves in *lp a list only the caller
// references: the same one when it was unique, else a copy. On error *lp is
// released and NULL.
static eddy_rt_status_t rt_list_make_unique(const char *op,
                                            eddy_rt_list_t **lp) {
  eddy_rt_list_t *l = *lp;
  if (eddy_rt_list_is_unique(l))
    return NULL;
  eddy_rt_list_t *c;
  eddy_rt_status_t st =
      rt_list_new(l->ctx, op, l->depth, l->dtype, &l->elem, l->max_elements,
                  &c);
  if (!st)
    st = rt_grow(c->ctx, op, (void **)&c->items, &c->cap, 0, l->size,
                 (int64_t)sizeof(rt_item_t));
  if (!st)
    st = rt_grow(c->ctx, op, (void **)&c->shapes, &c->shapes_cap, 0,
                 l->nshapes, (int64_t)sizeof(eddy_rt_elem_shape_t));
  if (st) {
    if (c)
      rt_list_destroy(c);
    eddy_rt_list_release(l);
    *lp = NULL;
    return st;
  }
  if (l->size > 0)
    memcpy(c->items, l->items, (size_t)l->size * sizeof(rt_item_t));
  if (l->nshapes > 0)
    memcpy(c->shapes, l->shapes,
           (size_t)l->nshapes * sizeof(eddy_rt_elem_shape_t));
  c->size = l->size;
  c->nshapes = l->nshapes;
  for (int64_t i = 0; i < c->size; i++)
    rt_item_retain(&c->items[i]);
  eddy_rt_list_release(l);
  *lp = c;
  return NULL;
}

/// ---- Items ----------------------------------------------------------------------

static eddy_rt_status_t rt_shape_id(eddy_rt_list_t *l, const char *op,
                                    const eddy_rt_tensor_t *t,
                                    uint32_t *out_id) {
  for (int64_t k = l->nshapes - 1; k >= 0 && k >= l->nshapes - RT_SHAPE_LOOKBACK;
       k--) {
    const eddy_rt_elem_shape_t *s = &l->shapes[k];
    if (s->rank == t->rank &&
        memcmp(s->dims, t->dims, (size_t)t->rank * sizeof(int64_t)) == 0) {
      *out_id = (uint32_t)k;
      return NULL;
    }
  }
  if (l->nshapes >= (int64_t)RT_UNSET)
    return rt_err(EDDY_RT_ERR_RESOURCE, op, "too many distinct item shapes");
  EDDY_RT_RETURN_IF_ERROR(rt_grow(l->ctx, op, (void **)&l->shapes,
                                  &l->shapes_cap, l->nshapes, l->nshapes + 1,
                                  (int64_t)sizeof(eddy_rt_elem_shape_t)));
  eddy_rt_elem_shape_t *s = &l->shapes[l->nshapes];
  memset(s, 0, sizeof(*s));
  s->rank = t->rank;
  memcpy(s->dims, t->dims, (size_t)t->rank * sizeof(int64_t));
  *out_id = (uint32_t)l->nshapes++;
  return NULL;
}

// Checks x against the list's dtype and element shape.
static eddy_rt_status_t rt_check_item(const eddy_rt_list_t *l, const char *op,
                                      const eddy_rt_tensor_t *x) {
  EDDY_RT_RETURN_IF_ERROR(eddy_rt_tensor_validate(x, op, "the item"));
  if (x->dtype != l->dtype || !rt_elem_matches(&l->elem, x->rank, x->dims)) {
    char sx[RT_SHAPE_BUF], se[RT_SHAPE_BUF];
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "item is %s; the list holds %s%s", rt_type_str(x, sx),
                  eddy_rt_dtype_name(l->dtype), rt_elem_str(&l->elem, se));
  }
  return NULL;
}

// An item from x: shares x's buffer when x is owned and contiguous.
static eddy_rt_status_t rt_make_item(eddy_rt_list_t *l, const char *op,
                                     const eddy_rt_tensor_t *x,
                                     rt_item_t *out_item) {
  eddy_rt_tensor_t t;
  EDDY_RT_RETURN_IF_ERROR(rt_make_owned_contiguous(l->ctx, op, x, &t));
  uint32_t id;
  eddy_rt_status_t st = rt_shape_id(l, op, &t, &id);
  if (st) {
    eddy_rt_tensor_release(&t);
    return st;
  }
  out_item->owner = t.owner;
  out_item->data = t.data;
  out_item->shape = id;
  return NULL;
}

// A tensor for item i, taking one new reference (or zeros when unset and
// the element shape is fully known).
static eddy_rt_status_t rt_item_tensor(const eddy_rt_list_t *l, const char *op,
                                       int64_t i, eddy_rt_tensor_t *out_t) {
  const rt_item_t *it = &l->items[i];
  if (it->shape == RT_UNSET) {
    if (!rt_elem_known(&l->elem)) {
      char se[RT_SHAPE_BUF];
      return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                    "item %" PRId64 " was never set and the element shape %s "
                    "is not fully known, so it cannot be read as zeros",
                    i, rt_elem_str(&l->elem, se));
    }
    return eddy_rt_tensor_create(l->ctx, l->dtype, l->elem.rank, l->elem.dims,
                                 op, out_t);
  }
  const eddy_rt_elem_shape_t *s = &l->shapes[it->shape];
  *out_t = eddy_rt_tensor_empty();
  out_t->dtype = l->dtype;
  out_t->rank = s->rank;
  memcpy(out_t->dims, s->dims, (size_t)s->rank * sizeof(int64_t));
  rt_set_contiguous_strides(out_t);
  out_t->data = it->data;
  out_t->owner = it->owner;
  if (it->owner)
    eddy_rt_buffer_retain(it->owner);
  return NULL;
}

static eddy_rt_status_t rt_list_index(const eddy_rt_list_t *l, const char *op,
                                      const eddy_rt_tensor_t *index,
                                      int64_t *out_i) {
  int64_t i;
  EDDY_RT_RETURN_IF_ERROR(rt_read_index(index, op, "the index", &i));
  if (i < 0 || i >= l->size)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "index %" PRId64 " is out of range for a list of length %" PRId64
                  " (expected 0 <= index < %" PRId64 ")",
                  i, l->size, l->size);
  *out_i = i;
  return NULL;
}

// The tensor forms of the item kernels need a list whose items are tensors.
static eddy_rt_status_t rt_expect_tensors(const eddy_rt_list_t *l,
                                          const char *op) {
  if (l->depth == 0)
    return NULL;
  return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                "the list holds lists (of %s), not tensors",
                eddy_rt_dtype_name(l->dtype));
}

/// ---- tl kernels ----------------------------------------------------------------------

eddy_rt_status_t eddy_rt_list_empty(eddy_rt_ctx_t *ctx, int32_t dtype,
                                    const eddy_rt_elem_shape_t *elem_shape,
                                    int64_t max_elements,
                                    eddy_rt_list_t **out_list) {
  return rt_list_new(ctx, "tl.empty", 0, dtype, elem_shape, max_elements,
                     out_list);
}

eddy_rt_status_t eddy_rt_list_empty_nested(
    eddy_rt_ctx_t *ctx, int32_t depth, int32_t dtype,
    const eddy_rt_elem_shape_t *elem_shape, int64_t max_elements,
    eddy_rt_list_t **out_list) {
  return rt_list_new(ctx, "tl.empty", depth, dtype, elem_shape, max_elements,
                     out_list);
}

static eddy_rt_status_t rt_reserve(eddy_rt_ctx_t *ctx, int32_t depth,
                                   int32_t dtype,
                                   const eddy_rt_elem_shape_t *elem_shape,
                                   const eddy_rt_tensor_t *n,
                                   eddy_rt_list_t **out_list) {
  const char *op = "tl.reserve";
  *out_list = NULL;
  int64_t count;
  EDDY_RT_RETURN_IF_ERROR(rt_read_index(n, op, "the length", &count));
  if (count < 0)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "length is %" PRId64 ", expected >= 0", count);
  eddy_rt_list_t *l;
  EDDY_RT_RETURN_IF_ERROR(
      rt_list_new(ctx, op, depth, dtype, elem_shape, -1, &l));
  eddy_rt_status_t st = rt_grow(ctx, op, (void **)&l->items, &l->cap, 0, count,
                                (int64_t)sizeof(rt_item_t));
  if (st) {
    rt_list_destroy(l);
    return st;
  }
  for (int64_t i = 0; i < count; i++)
    l->items[i] = (rt_item_t){NULL, NULL, RT_UNSET};
  l->size = count;
  *out_list = l;
  return NULL;
}

eddy_rt_status_t eddy_rt_list_reserve(eddy_rt_ctx_t *ctx, int32_t dtype,
                                      const eddy_rt_elem_shape_t *elem_shape,
                                      const eddy_rt_tensor_t *n,
                                      eddy_rt_list_t **out_list) {
  return rt_reserve(ctx, 0, dtype, elem_shape, n, out_list);
}

eddy_rt_status_t eddy_rt_list_reserve_nested(
    eddy_rt_ctx_t *ctx, int32_t depth, int32_t dtype,
    const eddy_rt_elem_shape_t *elem_shape, const eddy_rt_tensor_t *n,
    eddy_rt_list_t **out_list) {
  return rt_reserve(ctx, depth, dtype, elem_shape, n, out_list);
}

eddy_rt_status_t eddy_rt_list_push_back(eddy_rt_ctx_t *ctx,
                                        eddy_rt_list_t *owned_list,
                                        const eddy_rt_tensor_t *x,
                                        eddy_rt_list_t **out_list) {
  const char *op = "tl.push_back";
  (void)ctx;
  *out_list = NULL;
  eddy_rt_list_t *l = owned_list;
  eddy_rt_status_t st = rt_expect_tensors(l, op);
  if (!st)
    st = rt_check_item(l, op, x);
  if (!st && l->max_elements >= 0 && l->size >= l->max_elements)
    st = rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                "the list is full: length %" PRId64 " reached max_elements %" PRId64,
                l->size, l->max_elements);
  if (st) {
    eddy_rt_list_release(l);
    return st;
  }
  EDDY_RT_RETURN_IF_ERROR(rt_list_make_unique(op, &l));
  rt_item_t item;
  st = rt_grow(l->ctx, op, (void **)&l->items, &l->cap, l->size, l->size + 1,
               (int64_t)sizeof(rt_item_t));
  if (!st)
    st = rt_make_item(l, op, x, &item);
  if (st) {
    eddy_rt_list_release(l);
    return st;
  }
  l->items[l->size++] = item;
  *out_list = l;
  return NULL;
}

eddy_rt_status_t eddy_rt_list_pop_back(eddy_rt_ctx_t *ctx,
                                       eddy_rt_list_t *owned_list,
                                       eddy_rt_list_t **out_list,
                                       eddy_rt_tensor_t *out_t) {
  const char *op = "tl.pop_back";
  (void)ctx;
  *out_list = NULL;
  *out_t = eddy_rt_tensor_empty();
  eddy_rt_list_t *l = owned_list;
  eddy_rt_status_t est = rt_expect_tensors(l, op);
  if (!est && l->size == 0)
    est = rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                 "cannot pop from an empty list");
  if (est) {
    eddy_rt_list_release(l);
    return est;
  }
  eddy_rt_status_t st = rt_item_tensor(l, op, l->size - 1, out_t);
  if (!st)
    st = rt_list_make_unique(op, &l);
  if (st) {
    eddy_rt_tensor_release(out_t);
    eddy_rt_list_release(l);
    return st;
  }
  l->size--;
  rt_item_release(&l->items[l->size]);
  *out_list = l;
  return NULL;
}

eddy_rt_status_t eddy_rt_list_get_item(eddy_rt_ctx_t *ctx,
                                       const eddy_rt_list_t *list,
                                       const eddy_rt_tensor_t *index,
                                       eddy_rt_tensor_t *out_t) {
  const char *op = "tl.get_item";
  (void)ctx;
  *out_t = eddy_rt_tensor_empty();
  EDDY_RT_RETURN_IF_ERROR(rt_expect_tensors(list, op));
  int64_t i = 0;
  EDDY_RT_RETURN_IF_ERROR(rt_list_index(list, op, index, &i));
  return rt_item_tensor(list, op, i, out_t);
}

eddy_rt_status_t eddy_rt_list_set_item(eddy_rt_ctx_t *ctx,
                                       eddy_rt_list_t *owned_list,
                                       const eddy_rt_tensor_t *index,
                                       const eddy_rt_tensor_t *x,
                                       eddy_rt_list_t **out_list) {
  const char *op = "tl.set_item";
  (void)ctx;
  *out_list = NULL;
  eddy_rt_list_t *l = owned_list;
  int64_t i = 0;
  eddy_rt_status_t st = rt_expect_tensors(l, op);
  if (!st)
    st = rt_list_index(l, op, index, &i);
  if (!st)
    st = rt_check_item(l, op, x);
  if (st) {
    eddy_rt_list_release(l);
    return st;
  }
  EDDY_RT_RETURN_IF_ERROR(rt_list_make_unique(op, &l));
  rt_item_t item;
  st = rt_make_item(l, op, x, &item);
  if (st) {
    eddy_rt_list_release(l);
    return st;
  }
  rt_item_release(&l->items[i]);
  l->items[i] = item;
  *out_list = l;
  return NULL;
}

eddy_rt_status_t eddy_rt_list_resize(eddy_rt_ctx_t *ctx,
                                     eddy_rt_list_t *owned_list,
                                     const eddy_rt_tensor_t *n,
                                     eddy_rt_list_t **out_list) {
  const char *op = "tl.resize";
  (void)ctx;
  *out_list = NULL;
  eddy_rt_list_t *l = owned_list;
  int64_t count = 0;
  eddy_rt_status_t st = rt_read_index(n, op, "the length", &count);
  if (!st && count < 0)
    st = rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                "length is %" PRId64 ", expected >= 0", count);
  if (!st && l->max_elements >= 0 && count > l->max_elements)
    st = rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                "length %" PRId64 " is past the list's max_elements %" PRId64,
                count, l->max_elements);
  if (st) {
    eddy_rt_list_release(l);
    return st;
  }
  if (count == l->size) {
    *out_list = l;
    return NULL;
  }
  EDDY_RT_RETURN_IF_ERROR(rt_list_make_unique(op, &l));
  st = rt_grow(l->ctx, op, (void **)&l->items, &l->cap, l->size, count,
               (int64_t)sizeof(rt_item_t));
  if (st) {
    eddy_rt_list_release(l);
    return st;
  }
  for (int64_t i = count; i < l->size; i++)
    rt_item_release(&l->items[i]);
  for (int64_t i = l->size; i < count; i++)
    l->items[i] = (rt_item_t){NULL, NULL, RT_UNSET};
  l->size = count;
  *out_list = l;
  return NULL;
}

eddy_rt_status_t eddy_rt_list_scatter(eddy_rt_ctx_t *ctx,
                                      eddy_rt_list_t *owned_list,
                                      const eddy_rt_tensor_t *indices,
                                      const eddy_rt_tensor_t *x,
                                      eddy_rt_list_t **out_list) {
  const char *op = "tl.scatter";
  *out_list = NULL;
  eddy_rt_list_t *l = owned_list;
  char sx[RT_SHAPE_BUF], si[RT_SHAPE_BUF];
  eddy_rt_status_t st = rt_expect_tensors(l, op);
  if (!st)
    st = rt_check_operand(indices, op, 1);
  if (!st)
    st = rt_check_operand(x, op, 2);
  if (!st && (indices->rank != 1 || eddy_rt_dtype_is_float(indices->dtype) ||
              indices->dtype == EDDY_RT_I1))
    st = rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                "indices must be a 1-D integer tensor, got %s",
                rt_type_str(indices, si));
  if (!st && (x->rank < 1 || x->dims[0] != indices->dims[0]))
    st = rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                "%" PRId64 " indices for the rows of %s: expected one index "
                "per row",
                indices->dims[0], rt_type_str(x, sx));
  int64_t n = st ? 0 : indices->dims[0], top = l->size;
  eddy_rt_tensor_t row = eddy_rt_tensor_empty();
  if (!st) {
    row.dtype = x->dtype;
    row.rank = x->rank - 1;
    memcpy(row.dims, x->dims + 1, (size_t)row.rank * sizeof(int64_t));
    if (row.dtype != l->dtype ||
        !rt_elem_matches(&l->elem, row.rank, row.dims)) {
      char se[RT_SHAPE_BUF];
      st = rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "rows of %s do not fit the list of %s%s",
                  rt_type_str(x, sx), eddy_rt_dtype_name(l->dtype),
                  rt_elem_str(&l->elem, se));
    }
  }
  for (int64_t k = 0; !st && k < n; k++) {
    int64_t i = rt_load_i64(indices->dtype, eddy_rt_tensor_elem_ptr(indices, k));
    if (i < 0)
      st = rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "index %" PRId64 " (at %" PRId64 ") is negative", i, k);
    else if (l->max_elements >= 0 && i >= l->max_elements)
      st = rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "index %" PRId64 " is past the list's max_elements %" PRId64,
                  i, l->max_elements);
    else if (i + 1 > top)
      top = i + 1;
  }
  if (st) {
    eddy_rt_list_release(l);
    return st;
  }
  EDDY_RT_RETURN_IF_ERROR(rt_list_make_unique(op, &l));
  eddy_rt_tensor_t whole = eddy_rt_tensor_empty();
  uint32_t id = 0;
  st = rt_grow(l->ctx, op, (void **)&l->items, &l->cap, l->size, top,
               (int64_t)sizeof(rt_item_t));
  if (!st && n > 0)
    st = rt_make_owned_contiguous(l->ctx, op, x, &whole);
  if (!st && n > 0)
    st = rt_shape_id(l, op, &row, &id);
  if (st) {
    eddy_rt_tensor_release(&whole);
    eddy_rt_list_release(l);
    return st;
  }
  for (int64_t i = l->size; i < top; i++)
    l->items[i] = (rt_item_t){NULL, NULL, RT_UNSET};
  l->size = top;
  int64_t slab = n > 0 ? eddy_rt_tensor_numel(&whole) / n : 0;
  size_t es = eddy_rt_dtype_size(x->dtype);
  for (int64_t k = 0; k < n; k++) {
    int64_t i = rt_load_i64(indices->dtype, eddy_rt_tensor_elem_ptr(indices, k));
    rt_item_release(&l->items[i]);
    eddy_rt_buffer_retain(whole.owner);
    l->items[i] = (rt_item_t){whole.owner,
                              (char *)whole.data + (size_t)(k * slab) * es, id};
  }
  eddy_rt_tensor_release(&whole);
  *out_list = l;
  return NULL;
}

eddy_rt_status_t eddy_rt_list_concat(eddy_rt_ctx_t *ctx,
                                     const eddy_rt_list_t *list,
                                     eddy_rt_tensor_t *out_t,
                                     eddy_rt_tensor_t *out_lengths) {
  const char *op = "tl.concat";
  const eddy_rt_list_t *l = list;
  *out_t = eddy_rt_tensor_empty();
  *out_lengths = eddy_rt_tensor_empty();
  EDDY_RT_RETURN_IF_ERROR(rt_expect_tensors(l, op));
  char sa[RT_SHAPE_BUF], sb[RT_SHAPE_BUF];
  int64_t n = l->size;
  // The shape of the result: [sum of first dims] + the common rest.
  int32_t rank = -1;
  int64_t rest[EDDY_RT_MAX_RANK], total = 0;
  eddy_rt_tensor_t *items = NULL;
  if (n > 0) {
    void *p;
    EDDY_RT_RETURN_IF_ERROR(eddy_rt_alloc(
        ctx, n * (int64_t)sizeof(eddy_rt_tensor_t), op, &p));
    items = p;
  }
  eddy_rt_status_t st = NULL;
  int64_t got = 0;
  for (; !st && got < n; got++) {
    st = rt_item_tensor(l, op, got, &items[got]);
    if (st)
      break;
    const eddy_rt_tensor_t *t = &items[got];
    if (t->rank < 1) {
      st = rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "item %" PRId64 " is a scalar; only items of rank >= 1 "
                  "concatenate",
                  got);
    } else if (rank < 0) {
      rank = t->rank;
      memcpy(rest, t->dims, (size_t)rank * sizeof(int64_t));
    } else if (t->rank != rank ||
               memcmp(rest + 1, t->dims + 1,
                      (size_t)(rank - 1) * sizeof(int64_t)) != 0) {
      rest[0] = -1;
      eddy_rt_elem_shape_t a, b;
      eddy_rt_elem_shape_make(rank, rest, &a);
      eddy_rt_elem_shape_make(t->rank, t->dims, &b);
      a.dims[0] = b.dims[0] = -1;
      st = rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "item %" PRId64 " has shape %s, item 0 %s: items must "
                  "agree in every dim but the first",
                  got, rt_elem_str(&b, sb), rt_elem_str(&a, sa));
    }
    if (!st)
      total += t->dims[0];
  }
  if (!st && n == 0) {
    const eddy_rt_elem_shape_t *e = &l->elem;
    bool known = e->rank >= 1;
    for (int32_t i = 1; known && i < e->rank; i++)
      known = e->dims[i] >= 0;
    if (!known)
      st = rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "cannot concatenate an empty list whose element shape %s "
                  "is not known past its first dim",
                  rt_elem_str(e, sa));
    else {
      rank = e->rank;
      memcpy(rest, e->dims, (size_t)rank * sizeof(int64_t));
    }
  }
  if (!st) {
    rest[0] = total;
    st = rt_alloc_tensor(ctx, op, l->dtype, rank, rest, out_t);
  }
  if (!st)
    st = rt_alloc_tensor(ctx, op, EDDY_RT_I64, 1, &n, out_lengths);
  if (!st) {
    char *dst = out_t->data;
    int64_t *lens = out_lengths->data;
    for (int64_t i = 0; i < n; i++) {
      size_t bytes = (size_t)eddy_rt_tensor_numel(&items[i]) *
                     eddy_rt_dtype_size(l->dtype);
      if (bytes > 0)
        memcpy(dst, items[i].data, bytes);
      dst += bytes;
      lens[i] = items[i].dims[0];
    }
  }
  for (int64_t i = 0; i < got && i < n; i++)
    eddy_rt_tensor_release(&items[i]);
  if (items)
    eddy_rt_free(ctx, items, n * (int64_t)sizeof(eddy_rt_tensor_t));
  if (st) {
    eddy_rt_tensor_release(out_t);
    eddy_rt_tensor_release(out_lengths);
  }
  return st;
}

eddy_rt_status_t eddy_rt_list_split(eddy_rt_ctx_t *ctx,
                                    const eddy_rt_tensor_t *x,
                                    const eddy_rt_tensor_t *lengths,
                                    const eddy_rt_elem_shape_t *elem_shape,
                                    eddy_rt_list_t **out_list) {
  const char *op = "tl.split";
  *out_list = NULL;
  EDDY_RT_RETURN_IF_ERROR(rt_check_operand(x, op, 0));
  EDDY_RT_RETURN_IF_ERROR(rt_check_operand(lengths, op, 1));
  EDDY_RT_RETURN_IF_ERROR(rt_check_elem_shape(op, elem_shape));
  char sx[RT_SHAPE_BUF], se[RT_SHAPE_BUF];
  if (x->rank < 1)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "operand 0 is a scalar; expected rank >= 1");
  if (lengths->rank != 1 || eddy_rt_dtype_is_float(lengths->dtype) ||
      lengths->dtype == EDDY_RT_I1)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "lengths must be a 1-D integer tensor, got %s",
                  rt_type_str(lengths, sx));
  int64_t n = lengths->dims[0], sum = 0;
  for (int64_t k = 0; k < n; k++) {
    int64_t v = rt_load_i64(lengths->dtype, eddy_rt_tensor_elem_ptr(lengths, k));
    if (v < 0 || v > x->dims[0] - sum)
      return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                    "length %" PRId64 " (at %" PRId64 ") is negative or "
                    "runs past the %" PRId64 " rows of %s",
                    v, k, x->dims[0], rt_type_str(x, sx));
    sum += v;
  }
  if (sum != x->dims[0])
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "the lengths sum to %" PRId64 ", not to the %" PRId64
                  " rows of %s",
                  sum, x->dims[0], rt_type_str(x, sx));
  eddy_rt_elem_shape_t own;
  eddy_rt_elem_shape_make(x->rank, x->dims, &own);
  own.dims[0] = -1;
  if (elem_shape && elem_shape->rank >= 0) {
    for (int64_t k = 0; k < n; k++) {
      int64_t dims[EDDY_RT_MAX_RANK];
      memcpy(dims, x->dims, (size_t)x->rank * sizeof(int64_t));
      dims[0] = rt_load_i64(lengths->dtype, eddy_rt_tensor_elem_ptr(lengths, k));
      if (!rt_elem_matches(elem_shape, x->rank, dims))
        return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                      "slice %" PRId64 " of %s has %" PRId64 " rows; the "
                      "list's element shape is %s",
                      k, rt_type_str(x, sx), dims[0],
                      rt_elem_str(elem_shape, se));
    }
  }
  eddy_rt_tensor_t whole;
  EDDY_RT_RETURN_IF_ERROR(rt_make_owned_contiguous(ctx, op, x, &whole));
  eddy_rt_list_t *l = NULL;
  eddy_rt_status_t st = rt_list_new(
      ctx, op, 0, x->dtype, elem_shape && elem_shape->rank >= 0 ? elem_shape
                                                                : &own,
      -1, &l);
  if (!st)
    st = rt_grow(ctx, op, (void **)&l->items, &l->cap, 0, n,
                 (int64_t)sizeof(rt_item_t));
  int64_t row = x->dims[0] > 0 ? eddy_rt_tensor_numel(&whole) / x->dims[0] : 0;
  size_t es = eddy_rt_dtype_size(x->dtype);
  int64_t at = 0;
  for (int64_t k = 0; !st && k < n; k++) {
    eddy_rt_tensor_t item = eddy_rt_tensor_empty();
    item.dtype = x->dtype;
    item.rank = x->rank;
    memcpy(item.dims, x->dims, (size_t)x->rank * sizeof(int64_t));
    item.dims[0] = rt_load_i64(lengths->dtype, eddy_rt_tensor_elem_ptr(lengths, k));
    uint32_t id = 0;
    st = rt_shape_id(l, op, &item, &id);
    if (st)
      break;
    eddy_rt_buffer_retain(whole.owner);
    l->items[k] = (rt_item_t){whole.owner,
                              (char *)whole.data + (size_t)(at * row) * es, id};
    l->size = k + 1;
    at += item.dims[0];
  }
  eddy_rt_tensor_release(&whole);
  if (st) {
    if (l)
      rt_list_destroy(l);
    return st;
  }
  *out_list = l;
  return NULL;
}

eddy_rt_status_t eddy_rt_list_length(eddy_rt_ctx_t *ctx,
                                     const eddy_rt_list_t *list,
                                     eddy_rt_tensor_t *out_t) {
  EDDY_RT_RETURN_IF_ERROR(
      rt_alloc_tensor(ctx, "tl.length", EDDY_RT_I64, 0, NULL, out_t));
  memcpy(out_t->data, &list->size, sizeof(int64_t));
  return NULL;
}

eddy_rt_status_t rt_list_stack_dims(const eddy_rt_list_t *list,
                                    int32_t *out_rank, int64_t *out_dims) {
  const char *op = "tl.stack";
  const eddy_rt_list_t *l = list;
  *out_rank = 0;
  if (l->depth > 0)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "cannot stack a list of lists (nesting depth %d): only a "
                  "list of tensors stacks into a tensor",
                  (int)l->depth + 1);
  char se[RT_SHAPE_BUF], si[RT_SHAPE_BUF], sj[RT_SHAPE_BUF];
  // The item shape: the first set item's, else the element shape.
  const eddy_rt_elem_shape_t *shape = NULL;
  int64_t first = -1;
  for (int64_t i = 0; i < l->size; i++) {
    uint32_t id = l->items[i].shape;
    if (id == RT_UNSET)
      continue;
    const eddy_rt_elem_shape_t *s = &l->shapes[id];
    if (!shape) {
      shape = s;
      first = i;
    } else if (s->rank != shape->rank ||
               memcmp(s->dims, shape->dims,
                      (size_t)s->rank * sizeof(int64_t)) != 0) {
      return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                    "items must all have one shape, but item %" PRId64
                    " has shape %s and item %" PRId64 " has shape %s",
                    first, rt_elem_str(shape, si), i, rt_elem_str(s, sj));
    }
  }
  if (!shape) {
    if (!rt_elem_known(&l->elem))
      return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                    "cannot stack a list of length %" PRId64
                    " with no set items: the element shape %s is not fully "
                    "known",
                    l->size, rt_elem_str(&l->elem, se));
    shape = &l->elem;
  }
  if (shape->rank + 1 > EDDY_RT_MAX_RANK)
    return rt_err(EDDY_RT_ERR_UNSUPPORTED, op,
                  "stacked rank %d is above the runtime's maximum %d",
                  (int)shape->rank + 1, EDDY_RT_MAX_RANK);
  *out_rank = shape->rank + 1;
  out_dims[0] = l->size;
  memcpy(out_dims + 1, shape->dims, (size_t)shape->rank * sizeof(int64_t));
  return NULL;
}

void rt_list_stack_fill(const eddy_rt_list_t *list, int32_t rank,
                        const int64_t *dims, void *out) {
  int64_t item_elems = 1;
  for (int32_t d = 1; d < rank; d++)
    item_elems = rt_mul_sat(item_elems, dims[d]);
  size_t bytes = (size_t)item_elems * eddy_rt_dtype_size(list->dtype);
  char *o = out;
  for (int64_t i = 0; i < list->size && bytes > 0; i++, o += bytes) {
    if (list->items[i].shape == RT_UNSET)
      memset(o, 0, bytes);
    else
      memmove(o, list->items[i].data, bytes); // out is the caller's buffer
  }
}

eddy_rt_status_t eddy_rt_list_stack(eddy_rt_ctx_t *ctx,
                                    const eddy_rt_list_t *list,
                                    eddy_rt_tensor_t *out_t) {
  *out_t = eddy_rt_tensor_empty();
  int32_t rank;
  int64_t dims[EDDY_RT_MAX_RANK];
  EDDY_RT_RETURN_IF_ERROR(rt_list_stack_dims(list, &rank, dims));
  EDDY_RT_RETURN_IF_ERROR(
      rt_alloc_tensor(ctx, "tl.stack", list->dtype, rank, dims, out_t));
  rt_list_stack_fill(list, rank, dims, out_t->data);
  return NULL;
}

eddy_rt_status_t eddy_rt_list_from_tensor(
    eddy_rt_ctx_t *ctx, const eddy_rt_tensor_t *x,
    const eddy_rt_elem_shape_t *elem_shape, eddy_rt_list_t **out_list) {
  const char *op = "tl.from_tensor";
  *out_list = NULL;
  EDDY_RT_RETURN_IF_ERROR(rt_check_operand(x, op, 0));
  EDDY_RT_RETURN_IF_ERROR(rt_check_elem_shape(op, elem_shape));
  char sx[RT_SHAPE_BUF], se[RT_SHAPE_BUF], sl[RT_SHAPE_BUF];
  if (x->rank < 1)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "operand 0 is a scalar; expected rank >= 1");
  eddy_rt_elem_shape_t own;
  eddy_rt_elem_shape_make(x->rank - 1, x->dims + 1, &own);
  if (elem_shape && !rt_elem_matches(elem_shape, x->rank - 1, x->dims + 1))
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "operand 0 of shape %s has items of shape %s; the list's "
                  "element shape is %s",
                  rt_shape_str(x, sx), rt_elem_str(&own, se),
                  rt_elem_str(elem_shape, sl));
  eddy_rt_tensor_t whole;
  EDDY_RT_RETURN_IF_ERROR(rt_make_owned_contiguous(ctx, op, x, &whole));
  eddy_rt_list_t *l;
  eddy_rt_status_t st =
      rt_list_new(ctx, op, 0, x->dtype, elem_shape ? elem_shape : &own, -1,
                  &l);
  int64_t n = x->dims[0];
  if (!st)
    st = rt_grow(ctx, op, (void **)&l->items, &l->cap, 0, n,
                 (int64_t)sizeof(rt_item_t));
  eddy_rt_tensor_t item0 = eddy_rt_tensor_empty();
  item0.dtype = x->dtype;
  item0.rank = x->rank - 1;
  memcpy(item0.dims, x->dims + 1, (size_t)item0.rank * sizeof(int64_t));
  uint32_t id = 0;
  if (!st)
    st = rt_shape_id(l, op, &item0, &id);
  if (st) {
    if (l)
      rt_list_destroy(l);
    eddy_rt_tensor_release(&whole);
    return st;
  }
  int64_t slab = n > 0 ? eddy_rt_tensor_numel(&whole) / n : 0;
  size_t es = eddy_rt_dtype_size(x->dtype);
  for (int64_t i = 0; i < n; i++) {
    eddy_rt_buffer_retain(whole.owner);
    l->items[i] = (rt_item_t){whole.owner,
                              (char *)whole.data + (size_t)(i * slab) * es, id};
  }
  l->size = n;
  eddy_rt_tensor_release(&whole);
  *out_list = l;
  return NULL;
}

/// ---- Lists of lists ------------------------------------------------------------

// Two element shapes that could describe the same tensors.
static bool rt_elem_compatible(const eddy_rt_elem_shape_t *a,
                               const eddy_rt_elem_shape_t *b) {
  if (a->rank < 0 || b->rank < 0)
    return true;
  if (a->rank != b->rank)
    return false;
  for (int32_t i = 0; i < a->rank; i++) {
    if (a->dims[i] >= 0 && b->dims[i] >= 0 && a->dims[i] != b->dims[i])
      return false;
  }
  return true;
}

// The list forms of the item kernels need a list whose items are lists of
// one less depth, of the same dtype and a compatible element shape (x may
// be NULL to check l alone).
static eddy_rt_status_t rt_check_list_item(const eddy_rt_list_t *l,
                                           const char *op,
                                           const eddy_rt_list_t *x) {
  if (l->depth == 0)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "the list holds %s tensors, not lists",
                  eddy_rt_dtype_name(l->dtype));
  if (!x)
    return NULL;
  if (x->depth != l->depth - 1 || x->dtype != l->dtype ||
      !rt_elem_compatible(&x->elem, &l->elem)) {
    char sx[RT_SHAPE_BUF], sl[RT_SHAPE_BUF];
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                  "item is a list of depth %d of %s%s; the list holds lists "
                  "of depth %d of %s%s",
                  (int)x->depth + 1, eddy_rt_dtype_name(x->dtype),
                  rt_elem_str(&x->elem, sx), (int)l->depth,
                  eddy_rt_dtype_name(l->dtype), rt_elem_str(&l->elem, sl));
  }
  return NULL;
}

// One new reference to the list item i; an unset item reads as a new empty
// list (the list analogue of zeros).
static eddy_rt_status_t rt_item_list(const eddy_rt_list_t *l, const char *op,
                                     int64_t i, eddy_rt_list_t **out_item) {
  const rt_item_t *it = &l->items[i];
  if (it->shape == RT_LIST_ITEM) {
    eddy_rt_list_retain(it->data);
    *out_item = it->data;
    return NULL;
  }
  return rt_list_new(l->ctx, op, l->depth - 1, l->dtype, &l->elem, -1,
                     out_item);
}

eddy_rt_status_t eddy_rt_list_push_back_list(eddy_rt_ctx_t *ctx,
                                             eddy_rt_list_t *owned_list,
                                             eddy_rt_list_t *x,
                                             eddy_rt_list_t **out_list) {
  const char *op = "tl.push_back";
  (void)ctx;
  *out_list = NULL;
  eddy_rt_list_t *l = owned_list;
  eddy_rt_status_t st = rt_check_list_item(l, op, x);
  if (!st && l->max_elements >= 0 && l->size >= l->max_elements)
    st = rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                "the list is full: length %" PRId64 " reached max_elements %" PRId64,
                l->size, l->max_elements);
  if (st) {
    eddy_rt_list_release(l);
    return st;
  }
  // Retained before the copy-on-write check: pushing a list onto itself
  // then copies, so a list never contains itself.
  eddy_rt_list_retain(x);
  st = rt_list_make_unique(op, &l);
  if (!st)
    st = rt_grow(l->ctx, op, (void **)&l->items, &l->cap, l->size,
                 l->size + 1, (int64_t)sizeof(rt_item_t));
  if (st) {
    eddy_rt_list_release(x);
    eddy_rt_list_release(l);
    return st;
  }
  l->items[l->size++] = (rt_item_t){NULL, x, RT_LIST_ITEM};
  *out_list = l;
  return NULL;
}

eddy_rt_status_t eddy_rt_list_pop_back_list(eddy_rt_ctx_t *ctx,
                                            eddy_rt_list_t *owned_list,
                                            eddy_rt_list_t **out_list,
                                            eddy_rt_list_t **out_item) {
  const char *op = "tl.pop_back";
  (void)ctx;
  *out_list = NULL;
  *out_item = NULL;
  eddy_rt_list_t *l = owned_list;
  eddy_rt_status_t st = rt_check_list_item(l, op, NULL);
  if (!st && l->size == 0)
    st = rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                "cannot pop from an empty list");
  if (!st)
    st = rt_item_list(l, op, l->size - 1, out_item);
  if (!st)
    st = rt_list_make_unique(op, &l);
  else
    eddy_rt_list_release(l);
  if (st) {
    eddy_rt_list_release(*out_item);
    *out_item = NULL;
    return st;
  }
  l->size--;
  rt_item_release(&l->items[l->size]);
  *out_list = l;
  return NULL;
}

eddy_rt_status_t eddy_rt_list_get_item_list(eddy_rt_ctx_t *ctx,
                                            const eddy_rt_list_t *list,
                                            const eddy_rt_tensor_t *index,
                                            eddy_rt_list_t **out_item) {
  const char *op = "tl.get_item";
  (void)ctx;
  *out_item = NULL;
  EDDY_RT_RETURN_IF_ERROR(rt_check_list_item(list, op, NULL));
  int64_t i = 0;
  EDDY_RT_RETURN_IF_ERROR(rt_list_index(list, op, index, &i));
  return rt_item_list(list, op, i, out_item);
}

eddy_rt_status_t eddy_rt_list_set_item_list(eddy_rt_ctx_t *ctx,
                                            eddy_rt_list_t *owned_list,
                                            const eddy_rt_tensor_t *index,
                                            eddy_rt_list_t *x,
                                            eddy_rt_list_t **out_list) {
  const char *op = "tl.set_item";
  (void)ctx;
  *out_list = NULL;
  eddy_rt_list_t *l = owned_list;
  int64_t i = 0;
  eddy_rt_status_t st = rt_check_list_item(l, op, x);
  if (!st)
    st = rt_list_index(l, op, index, &i);
  if (st) {
    eddy_rt_list_release(l);
    return st;
  }
  eddy_rt_list_retain(x); // before copy-on-write, as in push_back_list
  st = rt_list_make_unique(op, &l);
  if (st) {
    eddy_rt_list_release(x);
    return st;
  }
  rt_item_release(&l->items[i]);
  l->items[i] = (rt_item_t){NULL, x, RT_LIST_ITEM};
  *out_list = l;
  return NULL;
}

/// ---- tl.add -----------------------------------------------------------------

bool rt_list_sum_elems(int32_t dtype, int64_t n, const void *a, const void *b,
                       void *out) {
  for (int64_t k = 0; k < n; k++) {
    switch (dtype) {
    case EDDY_RT_F16:
      ((uint16_t *)out)[k] =
          eddy_scalar_f32_to_f16(eddy_scalar_f16_to_f32(((const uint16_t *)a)[k]) +
                                 eddy_scalar_f16_to_f32(((const uint16_t *)b)[k]));
      break;
    case EDDY_RT_BF16:
      ((uint16_t *)out)[k] = eddy_scalar_f32_to_bf16(
          eddy_scalar_bf16_to_f32(((const uint16_t *)a)[k]) +
          eddy_scalar_bf16_to_f32(((const uint16_t *)b)[k]));
      break;
    case EDDY_RT_F32:
      ((float *)out)[k] = ((const float *)a)[k] + ((const float *)b)[k];
      break;
    case EDDY_RT_F64:
      ((double *)out)[k] = ((const double *)a)[k] + ((const double *)b)[k];
      break;
    case EDDY_RT_I32:
      ((int32_t *)out)[k] =
          eddy_scalar_wrap_i32((uint64_t)((const int32_t *)a)[k] +
                               (uint64_t)((const int32_t *)b)[k]);
      break;
    case EDDY_RT_I64:
      ((int64_t *)out)[k] =
          eddy_scalar_wrap_i64((uint64_t)((const int64_t *)a)[k] +
                               (uint64_t)((const int64_t *)b)[k]);
      break;
    default:
      return false;
    }
  }
  return true;
}

// Item i of l becomes item i of `other` (l's unset): the item shares its
// buffer or list.
static eddy_rt_status_t rt_add_take(eddy_rt_list_t *l, const char *op,
                                    const eddy_rt_list_t *other, int64_t i) {
  const rt_item_t *it = &other->items[i];
  if (it->shape == RT_LIST_ITEM) {
    eddy_rt_list_retain(it->data);
    l->items[i] = *it;
    return NULL;
  }
  eddy_rt_tensor_t t;
  EDDY_RT_RETURN_IF_ERROR(rt_item_tensor(other, op, i, &t));
  eddy_rt_status_t st = rt_check_item(l, op, &t);
  rt_item_t item;
  if (!st)
    st = rt_make_item(l, op, &t, &item);
  eddy_rt_tensor_release(&t);
  if (!st)
    l->items[i] = item;
  return st;
}

// Item i of l (set, a tensor) becomes its sum with item i of other (set).
static eddy_rt_status_t rt_add_sum(eddy_rt_ctx_t *ctx, eddy_rt_list_t *l,
                                   const char *op,
                                   const eddy_rt_list_t *other, int64_t i) {
  eddy_rt_tensor_t a, b, r = eddy_rt_tensor_empty();
  EDDY_RT_RETURN_IF_ERROR(rt_item_tensor(l, op, i, &a));
  eddy_rt_status_t st = rt_item_tensor(other, op, i, &b);
  if (st) {
    eddy_rt_tensor_release(&a);
    return st;
  }
  if (a.rank != b.rank ||
      memcmp(a.dims, b.dims, (size_t)a.rank * sizeof(int64_t)) != 0) {
    char sa[RT_SHAPE_BUF], sb[RT_SHAPE_BUF];
    st = rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                "item %" PRId64 " is %s in one list and %s in the other: "
                "items set in both must have one shape",
                i, rt_type_str(&a, sa), rt_type_str(&b, sb));
  }
  if (!st)
    st = eddy_rt_tensor_create(ctx, l->dtype, a.rank, a.dims, op, &r);
  if (!st && !rt_list_sum_elems(l->dtype, eddy_rt_tensor_numel(&r), a.data,
                                b.data, r.data))
    st = rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                "cannot add items of %s (expected f16, bf16, f32, f64, i32 "
                "or i64)",
                eddy_rt_dtype_name(l->dtype));
  eddy_rt_tensor_release(&a);
  eddy_rt_tensor_release(&b);
  rt_item_t item;
  if (!st)
    st = rt_make_item(l, op, &r, &item);
  eddy_rt_tensor_release(&r);
  if (st)
    return st;
  rt_item_release(&l->items[i]);
  l->items[i] = item;
  return NULL;
}

eddy_rt_status_t eddy_rt_list_add(eddy_rt_ctx_t *ctx,
                                  eddy_rt_list_t *owned_list,
                                  const eddy_rt_list_t *other,
                                  eddy_rt_list_t **out_list) {
  const char *op = "tl.add";
  *out_list = NULL;
  eddy_rt_list_t *l = owned_list;
  eddy_rt_status_t st = NULL;
  if (l->depth != other->depth || l->dtype != other->dtype ||
      !rt_elem_compatible(&l->elem, &other->elem)) {
    char sa[RT_SHAPE_BUF], sb[RT_SHAPE_BUF];
    st = rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                "cannot add a list of depth %d of %s%s and one of depth %d "
                "of %s%s",
                (int)l->depth + 1, eddy_rt_dtype_name(l->dtype),
                rt_elem_str(&l->elem, sa), (int)other->depth + 1,
                eddy_rt_dtype_name(other->dtype),
                rt_elem_str(&other->elem, sb));
  } else if (l->size != other->size) {
    st = rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                "cannot add lists of lengths %" PRId64 " and %" PRId64
                ": item-wise sums need one length",
                l->size, other->size);
  }
  if (st) {
    eddy_rt_list_release(l);
    return st;
  }
  // other may be l itself: its reference keeps it alive through the copy.
  eddy_rt_list_retain((eddy_rt_list_t *)other);
  st = rt_list_make_unique(op, &l);
  for (int64_t i = 0; !st && i < l->size; i++) {
    rt_item_t *it = &l->items[i];
    if (other->items[i].shape == RT_UNSET)
      continue;
    if (it->shape == RT_UNSET) {
      st = rt_add_take(l, op, other, i);
    } else if (it->shape == RT_LIST_ITEM) {
      // Lists of lists add item by item, one level down.
      eddy_rt_list_t *sum = NULL;
      eddy_rt_list_t *mine = it->data;
      *it = (rt_item_t){NULL, NULL, RT_UNSET};
      st = eddy_rt_list_add(ctx, mine, other->items[i].data, &sum);
      if (!st)
        *it = (rt_item_t){NULL, sum, RT_LIST_ITEM};
    } else {
      st = rt_add_sum(ctx, l, op, other, i);
    }
  }
  eddy_rt_list_release((eddy_rt_list_t *)other);
  if (st) {
    eddy_rt_list_release(l);
    return st;
  }
  *out_list = l;
  return NULL;
}

/// ---- tl.zeros_like -----------------------------------------------------------

eddy_rt_status_t eddy_rt_list_zeros_like(eddy_rt_ctx_t *ctx,
                                         const eddy_rt_list_t *list,
                                         eddy_rt_list_t **out_list) {
  const char *op = "tl.zeros_like";
  *out_list = NULL;
  const eddy_rt_list_t *l = list;
  eddy_rt_list_t *z;
  EDDY_RT_RETURN_IF_ERROR(rt_list_new(ctx, op, l->depth, l->dtype, &l->elem,
                                      l->max_elements, &z));
  eddy_rt_status_t st = rt_grow(ctx, op, (void **)&z->items, &z->cap, 0,
                                l->size, (int64_t)sizeof(rt_item_t));
  for (int64_t i = 0; !st && i < l->size; i++) {
    const rt_item_t *it = &l->items[i];
    rt_item_t item = {NULL, NULL, RT_UNSET};
    if (it->shape == RT_LIST_ITEM) {
      eddy_rt_list_t *inner = NULL;
      st = eddy_rt_list_zeros_like(ctx, it->data, &inner);
      if (!st)
        item = (rt_item_t){NULL, inner, RT_LIST_ITEM};
    } else if (it->shape != RT_UNSET) {
      const eddy_rt_elem_shape_t *s = &l->shapes[it->shape];
      eddy_rt_tensor_t t;
      st = eddy_rt_tensor_create(ctx, l->dtype, s->rank, s->dims, op, &t);
      if (!st) {
        st = rt_make_item(z, op, &t, &item);
        eddy_rt_tensor_release(&t);
      }
    }
    if (!st)
      z->items[z->size++] = item;
  }
  if (st) {
    eddy_rt_list_release(z);
    return st;
  }
  *out_list = z;
  return NULL;
}

int eddy_rt_list_peek(const eddy_rt_list_t *list, int64_t i,
                      eddy_rt_tensor_t *out_t, eddy_rt_list_t **out_item) {
  *out_t = eddy_rt_tensor_empty();
  *out_item = NULL;
  if (i < 0 || i >= list->size || list->items[i].shape == RT_UNSET)
    return 0;
  if (list->items[i].shape == RT_LIST_ITEM) {
    eddy_rt_list_retain(list->items[i].data);
    *out_item = list->items[i].data;
    return 2;
  }
  eddy_rt_status_t st = rt_item_tensor(list, "tl.peek", i, out_t);
  if (st) { // cannot fail for a set item
    eddy_rt_status_destroy(st);
    return 0;
  }
  return 1;
}

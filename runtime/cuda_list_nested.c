/// TensorLists in device memory, the helpers that work on whole lists or on
/// lists of lists: tl.add, tl.zeros_like (both recurse through nested
/// lists), and the list forms of the item helpers for lists of depth > 0
/// (the accumulators of nested loops). Same signatures, value semantics and
/// messages as the host helpers (runtime/list.c, runtime/entry_nested.c).
/// The lists themselves, their items and device blocks are
/// runtime/cuda_list.c's (runtime/cuda_list_internal.h).
#include "runtime/cuda_internal.h"
#include "runtime/cuda_list_internal.h"
#include "runtime/eddyrt.h"
#include "runtime/rt_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/// ---- Checks ----------------------------------------------------------------

/// Two element shapes that could describe the same tensors.
static bool elem_compatible(const eddy_rt_elem_shape_t *a,
                            const eddy_rt_elem_shape_t *b) {
  if (a->rank < 0 || b->rank < 0)
    return true;
  if (a->rank != b->rank)
    return false;
  for (int32_t i = 0; i < a->rank; i++)
    if (a->dims[i] >= 0 && b->dims[i] >= 0 && a->dims[i] != b->dims[i])
      return false;
  return true;
}

/// The list forms of the item helpers need a list of lists; the item x
/// (NULL: none to check) must be a list of one less depth, of the same
/// dtype and a compatible element shape. False with the failure stored.
static bool expect_lists(const cl_list_t *l, const char *op, const cl_list_t *x,
                         int32_t *code, char *err, size_t errlen) {
  if (l->depth == 0) {
    rt_cl_fail(code, err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT, op,
               "the list holds %s tensors, not lists",
               eddy_rt_dtype_name(l->dtype));
    return false;
  }
  if (!x || (x->depth == l->depth - 1 && x->dtype == l->dtype &&
             elem_compatible(&x->elem, &l->elem)))
    return true;
  char sx[RT_SHAPE_BUF], sl[RT_SHAPE_BUF];
  rt_cl_fail(
      code, err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT, op,
      "item is a list of depth %d of %s%s; the list holds lists of depth %d "
      "of %s%s",
      (int)x->depth + 1, eddy_rt_dtype_name(x->dtype),
      rt_elem_str(&x->elem, sx), (int)l->depth, eddy_rt_dtype_name(l->dtype),
      rt_elem_str(&l->elem, sl));
  return false;
}

/// ---- tl.add ----------------------------------------------------------------

/// Copies item it (set) into host memory at dst; the stream is idle after.
static bool item_to_host(rt_cuda_thread_t *t, const char *op,
                         const cl_item_t *it, void *dst, size_t bytes,
                         int32_t *code, char *err, size_t errlen) {
  if (bytes == 0)
    return true;
  if (it->host) {
    if (!rt_cl_cu_ok(rt_cu.stream_wait_event(t->stream, it->event, 0),
                     "cuStreamWaitEvent", op, code, err, errlen) ||
        !rt_cl_cu_ok(rt_cu.stream_synchronize(t->stream), "cuStreamSynchronize",
                     op, code, err, errlen))
      return false;
    memcpy(dst, it->host, bytes);
    return true;
  }
  return rt_cl_cu_ok(rt_cu.memcpy_dtoh_async(dst, it->dev, bytes, t->stream),
                     "cuMemcpyDtoHAsync_v2", op, code, err, errlen) &&
         rt_cl_cu_ok(rt_cu.stream_synchronize(t->stream), "cuStreamSynchronize",
                     op, code, err, errlen);
}

/// The sum of items a and b (both set, of one shape) as a new item: both
/// come to host memory and are added there (rt_list_sum_elems), the sum is
/// copied back. A round trip, but only an item set in both lists takes it
/// (a TensorArray index read twice). NULL with the failure stored.
static cl_item_t *item_sum(rt_cuda_thread_t *t, const char *op, int32_t dtype,
                           int64_t i, const cl_item_t *a, const cl_item_t *b,
                           int32_t *code, char *err, size_t errlen) {
  char sa[RT_SHAPE_BUF], sb[RT_SHAPE_BUF];
  if (!rt_cl_same_dims(a->rank, a->dims, b->rank, b->dims))
    return rt_cl_fail(code, err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT, op,
                      "item %" PRId64 " is %s in one list and %s in the other: "
                      "items set in both must have one shape",
                      i, rt_spec_str(dtype, a->rank, a->dims, sa, sizeof sa),
                      rt_spec_str(dtype, b->rank, b->dims, sb, sizeof sb));
  size_t bytes = rt_cl_elem_bytes(dtype, a->rank, a->dims);
  void *ha = malloc(bytes ? bytes : 1), *hb = malloc(bytes ? bytes : 1);
  cl_item_t *it = NULL;
  if (!ha || !hb) {
    rt_cl_fail(code, err, errlen, EDDY_RT_ERR_RESOURCE, op, "out of memory");
    goto done;
  }
  if (!item_to_host(t, op, a, ha, bytes, code, err, errlen) ||
      !item_to_host(t, op, b, hb, bytes, code, err, errlen))
    goto done;
  int64_t n = 1;
  for (int32_t d = 0; d < a->rank; d++)
    n *= a->dims[d];
  if (!rt_list_sum_elems(dtype, n, ha, hb, ha)) {
    rt_cl_fail(
        code, err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT, op,
        "cannot add items of %s (expected f16, bf16, f32, f64, i32 or i64)",
        eddy_rt_dtype_name(dtype));
    goto done;
  }
  it = rt_cl_item_new(a->rank, a->dims);
  if (!it) {
    rt_cl_fail(code, err, errlen, EDDY_RT_ERR_RESOURCE, op, "out of memory");
    goto done;
  }
  if (bytes == 0)
    goto done;
  cu_result cr = rt_cu.mem_alloc(&it->dev, bytes);
  if (!rt_cl_alloc_ok(cr, it->dev != 0, bytes, "device memory", op, code, err,
                      errlen) ||
      !rt_cl_cu_ok(rt_cu.memcpy_htod_async(it->dev, ha, bytes, t->stream),
                   "cuMemcpyHtoDAsync_v2", op, code, err, errlen) ||
      !rt_cl_cu_ok(rt_cu.stream_synchronize(t->stream), "cuStreamSynchronize",
                   op, code, err, errlen)) {
    rt_cl_item_release(it);
    it = NULL;
  }
done:
  free(ha);
  free(hb);
  return it;
}

/// l (owned) plus other, item by item, as runtime/list.c's
/// eddy_rt_list_add. NULL with the failure stored and l released.
static cl_list_t *list_add(cl_list_t *l, const cl_list_t *other, int32_t *code,
                           char *err, size_t errlen) {
  const char *op = "tl.add";
  char sa[RT_SHAPE_BUF], sb[RT_SHAPE_BUF];
  if (l->depth != other->depth || l->dtype != other->dtype ||
      !elem_compatible(&l->elem, &other->elem)) {
    rt_cl_fail(
        code, err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT, op,
        "cannot add a list of depth %d of %s%s and one of depth %d of %s%s",
        (int)l->depth + 1, eddy_rt_dtype_name(l->dtype),
        rt_elem_str(&l->elem, sa), (int)other->depth + 1,
        eddy_rt_dtype_name(other->dtype), rt_elem_str(&other->elem, sb));
    rt_cl_list_release(l);
    return NULL;
  }
  if (l->size != other->size) {
    rt_cl_fail(code, err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT, op,
               "cannot add lists of lengths %" PRId64 " and %" PRId64
               ": item-wise sums need one length",
               l->size, other->size);
    rt_cl_list_release(l);
    return NULL;
  }
  // other may be l itself: its reference keeps it alive through the copy.
  rt_cl_list_retain((cl_list_t *)other);
  bool ok = rt_cl_make_unique(&l, op, code, err, errlen);
  rt_cuda_thread_t *t = NULL;
  for (int64_t i = 0; ok && i < l->size; i++) {
    if (l->depth > 0) {
      cl_list_t *o = other->lists[i], *mine = l->lists[i];
      if (!o)
        continue;
      rt_cl_list_retain(o);
      if (!mine) {
        l->lists[i] = o;
        continue;
      }
      l->lists[i] = list_add(mine, o, code, err, errlen);
      rt_cl_list_release(o);
      ok = l->lists[i] != NULL;
      continue;
    }
    cl_item_t *o = other->items[i], *mine = l->items[i];
    if (!o)
      continue;
    if (!mine) {
      rt_cl_item_retain(o);
      l->items[i] = o;
      continue;
    }
    ok = t || (t = rt_cl_device(op, code, err, errlen));
    cl_item_t *sum =
        ok ? item_sum(t, op, l->dtype, i, mine, o, code, err, errlen) : NULL;
    ok = sum != NULL;
    if (ok) {
      rt_cl_item_release(mine);
      l->items[i] = sum;
    }
  }
  rt_cl_list_release((cl_list_t *)other);
  if (!ok) {
    rt_cl_list_release(l);
    return NULL;
  }
  return l;
}

void *eddy_rt_entry_cuda_list_add(eddy_rt_ctx_t *rt, void *list, int32_t moved,
                                  const void *other, int32_t *code, char *err,
                                  size_t errlen) {
  cl_list_t *l = list;
  if (!l || !other)
    return NULL;
  (void)rt;
  if (!moved)
    rt_cl_list_retain(l);
  return list_add(l, other, code, err, errlen);
}

/// ---- tl.zeros_like ---------------------------------------------------------

/// A list like l whose set items are zeroed device blocks of their shapes.
/// NULL with the failure stored.
static cl_list_t *list_zeros_like(rt_cuda_thread_t *t, const cl_list_t *l,
                                  int32_t *code, char *err, size_t errlen) {
  const char *op = "tl.zeros_like";
  cl_list_t *z =
      rt_cl_list_new(l->depth, l->dtype, &l->elem, l->max_elements, false);
  if (!z || !rt_cl_list_grow(z, l->size)) {
    rt_cl_list_release(z);
    return rt_cl_fail(code, err, errlen, EDDY_RT_ERR_RESOURCE, op,
                      "out of memory");
  }
  for (int64_t i = 0; i < l->size; i++) {
    bool ok = true;
    if (l->depth > 0) {
      z->lists[i] = NULL;
      if (l->lists[i]) {
        z->lists[i] = list_zeros_like(t, l->lists[i], code, err, errlen);
        ok = z->lists[i] != NULL;
      }
    } else {
      z->items[i] = NULL;
      const cl_item_t *it = l->items[i];
      if (it) {
        size_t bytes = rt_cl_elem_bytes(l->dtype, it->rank, it->dims);
        cl_item_t *zi = rt_cl_item_new(it->rank, it->dims);
        ok = zi != NULL;
        if (!ok)
          rt_cl_fail(code, err, errlen, EDDY_RT_ERR_RESOURCE, op,
                     "out of memory");
        if (ok && bytes > 0) {
          cu_result r = rt_cu.mem_alloc(&zi->dev, bytes);
          ok = rt_cl_alloc_ok(r, zi->dev != 0, bytes, "device memory", op, code,
                              err, errlen) &&
               rt_cl_cu_ok(rt_cu.memset_d8_async(zi->dev, 0, bytes, t->stream),
                           "cuMemsetD8Async", op, code, err, errlen);
          t->list_busy = true;
        }
        if (ok)
          z->items[i] = zi;
        else
          rt_cl_item_release(zi);
      }
    }
    z->size = i + 1;
    if (!ok) {
      rt_cl_list_release(z);
      return NULL;
    }
  }
  return z;
}

void *eddy_rt_entry_cuda_list_zeros_like(eddy_rt_ctx_t *rt, const void *list,
                                         int32_t *code, char *err,
                                         size_t errlen) {
  (void)rt;
  if (!list)
    return NULL;
  rt_cuda_thread_t *t = rt_cl_device("tl.zeros_like", code, err, errlen);
  return t ? list_zeros_like(t, list, code, err, errlen) : NULL;
}

/// ---- Lists of lists --------------------------------------------------------

/// The list the op may consume (a new reference unless moved) for an op
/// that also takes a list item, or NULL (a moved list released) when either
/// is NULL: an earlier failure.
static cl_list_t *owned_with_item(void *list, int32_t moved, const void *item) {
  cl_list_t *l = list;
  if (!l)
    return NULL;
  if (!moved)
    rt_cl_list_retain(l);
  if (!item) {
    rt_cl_list_release(l);
    return NULL;
  }
  return l;
}

/// One new reference to the list item i of l; an unset item reads as a new
/// empty list (the list analogue of zeros). NULL with the failure stored.
static cl_list_t *item_list(const cl_list_t *l, const char *op, int64_t i,
                            int32_t *code, char *err, size_t errlen) {
  cl_list_t *it = l->lists[i];
  if (it) {
    rt_cl_list_retain(it);
    return it;
  }
  it = rt_cl_list_new(l->depth - 1, l->dtype, &l->elem, -1, false);
  return it ? it
            : rt_cl_fail(code, err, errlen, EDDY_RT_ERR_RESOURCE, op,
                         "out of memory");
}

void *eddy_rt_entry_cuda_list_empty_nested(eddy_rt_ctx_t *rt, int32_t depth,
                                           int32_t dtype, int32_t rank,
                                           const int64_t *dims,
                                           int64_t max_elements, int32_t *code,
                                           char *err, size_t errlen) {
  (void)rt;
  return rt_cl_empty_list(depth, dtype, rank, dims, max_elements, false, code,
                          err, errlen);
}

void *eddy_rt_entry_cuda_list_reserve_nested(eddy_rt_ctx_t *rt, int32_t depth,
                                             int32_t dtype, int32_t rank,
                                             const int64_t *dims, int64_t n,
                                             int32_t *code, char *err,
                                             size_t errlen) {
  (void)rt;
  return rt_cl_reserve_list(depth, dtype, rank, dims, n, code, err, errlen);
}

void *eddy_rt_entry_cuda_list_push_list(eddy_rt_ctx_t *rt, void *list,
                                        int32_t moved, void *item,
                                        int32_t *code, char *err,
                                        size_t errlen) {
  (void)rt;
  const char *op = "tl.push_back";
  cl_list_t *l = owned_with_item(list, moved, item), *x = item;
  if (!l)
    return NULL;
  if (!expect_lists(l, op, x, code, err, errlen) ||
      !rt_cl_check_room(l, op, code, err, errlen)) {
    rt_cl_list_release(l);
    return NULL;
  }
  // Retained before the copy-on-write check: pushing a list onto itself
  // then copies, so a list never contains itself.
  rt_cl_list_retain(x);
  if (!rt_cl_make_unique(&l, op, code, err, errlen)) {
    rt_cl_list_release(x);
    return NULL;
  }
  if (!rt_cl_list_grow(l, l->size + 1)) {
    rt_cl_list_release(x);
    rt_cl_list_release(l);
    return rt_cl_fail(code, err, errlen, EDDY_RT_ERR_RESOURCE, op,
                      "out of memory");
  }
  l->lists[l->size++] = x;
  return l;
}

void *eddy_rt_entry_cuda_list_pop_list(eddy_rt_ctx_t *rt, void *list,
                                       int32_t moved, void **out_item,
                                       int32_t *code, char *err,
                                       size_t errlen) {
  (void)rt;
  const char *op = "tl.pop_back";
  *out_item = NULL;
  cl_list_t *l = list;
  if (!l)
    return NULL;
  if (!moved)
    rt_cl_list_retain(l);
  bool ok = expect_lists(l, op, NULL, code, err, errlen);
  if (ok && l->size == 0) {
    rt_cl_fail(code, err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT, op,
               "cannot pop from an empty list");
    ok = false;
  }
  cl_list_t *it = ok ? item_list(l, op, l->size - 1, code, err, errlen) : NULL;
  if (!it) {
    rt_cl_list_release(l);
    return NULL;
  }
  if (!rt_cl_make_unique(&l, op, code, err, errlen)) {
    rt_cl_list_release(it);
    return NULL;
  }
  rt_cl_list_release(l->lists[--l->size]);
  *out_item = it;
  return l;
}

void *eddy_rt_entry_cuda_list_get_list(eddy_rt_ctx_t *rt, const void *list,
                                       int64_t index, int32_t *code, char *err,
                                       size_t errlen) {
  (void)rt;
  const char *op = "tl.get_item";
  const cl_list_t *l = list;
  if (!l || !expect_lists(l, op, NULL, code, err, errlen) ||
      !rt_cl_check_index(l, op, index, code, err, errlen))
    return NULL;
  return item_list(l, op, index, code, err, errlen);
}

void *eddy_rt_entry_cuda_list_set_list(eddy_rt_ctx_t *rt, void *list,
                                       int32_t moved, int64_t index, void *item,
                                       int32_t *code, char *err,
                                       size_t errlen) {
  (void)rt;
  const char *op = "tl.set_item";
  cl_list_t *l = owned_with_item(list, moved, item), *x = item;
  if (!l)
    return NULL;
  if (!expect_lists(l, op, x, code, err, errlen) ||
      !rt_cl_check_index(l, op, index, code, err, errlen)) {
    rt_cl_list_release(l);
    return NULL;
  }
  rt_cl_list_retain(x); // before copy-on-write, as in push_list
  if (!rt_cl_make_unique(&l, op, code, err, errlen)) {
    rt_cl_list_release(x);
    return NULL;
  }
  rt_cl_list_release(l->lists[index]);
  l->lists[index] = x;
  return l;
}

/// Entry helpers for lists of lists in compiled code (backend-cpu,
/// emit_list.c): the items of such a list are lists, held by reference
/// (runtime/list.c). Same conventions as the TensorList helpers of entry.c:
/// lists are opaque pointers, NULL means an earlier failure (passed on
/// silently), `code` is the entry's error slot (the first failure stores
/// -CODE there and writes its message to err), moved != 0 means the caller
/// gives up its reference to `list`.
#include "runtime/eddyrt.h"
#include "runtime/kernels.h"
#include "runtime/rt_internal.h"


/// The list the op may consume: a new reference unless moved.
static eddy_rt_list_t *owned(void *list, int32_t moved) {
  if (!moved)
    eddy_rt_list_retain(list);
  return list;
}

/// owned(list, moved) for an op that also takes the list item, or NULL
/// (with a moved list released) when either is NULL: an earlier failure.
static eddy_rt_list_t *owned_with_item(void *list, int32_t moved,
                                       const void *item) {
  if (!list)
    return NULL;
  eddy_rt_list_t *l = owned(list, moved);
  if (!item) {
    eddy_rt_list_release(l);
    return NULL;
  }
  return l;
}

/// The element shape of a list that op creates; false (the failure recorded)
/// when rank is out of range.
static bool elem_shape(const char *op, int32_t rank, const int64_t *dims,
                       eddy_rt_elem_shape_t *shape, int32_t *code, char *err,
                       size_t errlen) {
  if (eddy_rt_elem_shape_make(rank, dims, shape))
    return true;
  rt_entry_list_fail(eddy_rt_status_create(EDDY_RT_ERR_INTERNAL,
                                    "%s: bad element rank %d", op, rank),
              code, err, errlen);
  return false;
}

void *eddy_rt_entry_list_empty_nested(eddy_rt_ctx_t *rt, int32_t depth,
                                      int32_t dtype, int32_t rank,
                                      const int64_t *dims, int64_t max_elements,
                                      int32_t *code, char *err, size_t errlen) {
  eddy_rt_elem_shape_t shape;
  eddy_rt_list_t *l = NULL;
  if (!elem_shape("tl.empty", rank, dims, &shape, code, err, errlen))
    return NULL;
  eddy_rt_status_t st =
      eddy_rt_list_empty_nested(rt, depth, dtype, &shape, max_elements, &l);
  return st ? rt_entry_list_fail(st, code, err, errlen) : l;
}

void *eddy_rt_entry_list_reserve_nested(eddy_rt_ctx_t *rt, int32_t depth,
                                        int32_t dtype, int32_t rank,
                                        const int64_t *dims, int64_t n,
                                        int32_t *code, char *err,
                                        size_t errlen) {
  eddy_rt_elem_shape_t shape;
  eddy_rt_tensor_t nt;
  eddy_rt_list_t *l = NULL;
  if (!elem_shape("tl.reserve", rank, dims, &shape, code, err, errlen))
    return NULL;
  eddy_rt_status_t st = eddy_rt_tensor_wrap(EDDY_RT_I64, 0, NULL, &n, &nt);
  if (!st)
    st = eddy_rt_list_reserve_nested(rt, depth, dtype, &shape, &nt, &l);
  return st ? rt_entry_list_fail(st, code, err, errlen) : l;
}

void *eddy_rt_entry_list_push_list(eddy_rt_ctx_t *rt, void *list,
                                   int32_t moved, void *item, int32_t *code,
                                   char *err, size_t errlen) {
  eddy_rt_list_t *l = owned_with_item(list, moved, item);
  if (!l)
    return NULL;
  eddy_rt_list_t *out = NULL;
  eddy_rt_status_t st = eddy_rt_list_push_back_list(rt, l, item, &out);
  return st ? rt_entry_list_fail(st, code, err, errlen) : out;
}

void *eddy_rt_entry_list_pop_list(eddy_rt_ctx_t *rt, void *list, int32_t moved,
                                  void **out_item, int32_t *code, char *err,
                                  size_t errlen) {
  *out_item = NULL;
  if (!list)
    return NULL;
  eddy_rt_list_t *out = NULL, *item = NULL;
  eddy_rt_status_t st =
      eddy_rt_list_pop_back_list(rt, owned(list, moved), &out, &item);
  if (st)
    return rt_entry_list_fail(st, code, err, errlen);
  *out_item = item;
  return out;
}

void *eddy_rt_entry_list_get_list(eddy_rt_ctx_t *rt, const void *list,
                                  int64_t index, int32_t *code, char *err,
                                  size_t errlen) {
  if (!list)
    return NULL;
  eddy_rt_tensor_t it;
  eddy_rt_list_t *item = NULL;
  eddy_rt_status_t st = eddy_rt_tensor_wrap(EDDY_RT_I64, 0, NULL, &index, &it);
  if (!st)
    st = eddy_rt_list_get_item_list(rt, list, &it, &item);
  return st ? rt_entry_list_fail(st, code, err, errlen) : item;
}

void *eddy_rt_entry_list_set_list(eddy_rt_ctx_t *rt, void *list, int32_t moved,
                                  int64_t index, void *item, int32_t *code,
                                  char *err, size_t errlen) {
  eddy_rt_list_t *l = owned_with_item(list, moved, item);
  if (!l)
    return NULL;
  eddy_rt_tensor_t it;
  eddy_rt_list_t *out = NULL;
  eddy_rt_status_t st = eddy_rt_tensor_wrap(EDDY_RT_I64, 0, NULL, &index, &it);
  if (st) {
    eddy_rt_list_release(l);
    return rt_entry_list_fail(st, code, err, errlen);
  }
  st = eddy_rt_list_set_item_list(rt, l, &it, item, &out);
  return st ? rt_entry_list_fail(st, code, err, errlen) : out;
}

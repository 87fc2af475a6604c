/// libeddyrt's TensorLists in device memory, shared by runtime/cuda_list.c
/// (lists and items, their device blocks, the helpers of lists of tensors)
/// and runtime/cuda_list_nested.c (tl.add, tl.zeros_like, lists of lists).
/// Not installed; not an ABI.
///
/// The helpers follow the entry helpers' conventions: a failure is stored
/// in the entry's error slot (`code`, `err`, `errlen`; the first one wins)
/// with the message prefixed by the op's name (`op`).
#ifndef EDDY_RUNTIME_CUDA_LIST_INTERNAL_H
#define EDDY_RUNTIME_CUDA_LIST_INTERNAL_H

#include "runtime/cuda_internal.h"
#include "runtime/eddyrt.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/// ---- Lists and items -------------------------------------------------------

/// A tensor of a list of depth 0: a reference-counted host record of one
/// device block (or a slice of another item's block), written once and then
/// only read, so list copies share it.
typedef struct cl_item {
  _Atomic int64_t refs;
  struct cl_item *base; // owns the block this item is a slice of, or NULL
  cu_deviceptr dev;     // the data on the device; 0 when empty or swapped
  void *host;           // swap: the pinned copy (NULL when empty)
  void *event;          // swap: completes when host holds the data
  int32_t rank;
  int64_t dims[];
} cl_item_t;

/// A list: what generated code holds as an opaque pointer.
typedef struct cl_list {
  _Atomic int64_t refs;
  int32_t dtype;
  int32_t depth; // 0: items are tensors; d > 0: lists of depth d - 1
  bool swap;
  eddy_rt_elem_shape_t elem;
  int64_t max_elements; // -1: unbounded
  int64_t size, cap;
  cl_item_t **items;      // depth 0 (NULL entry: never set)
  struct cl_list **lists; // depth > 0, one reference each (NULL: never set)
} cl_list_t;

/// ---- Messages --------------------------------------------------------------

/// Stores the failure "OP: MESSAGE" in the entry's error slot (the first one
/// wins); returns NULL.
void *rt_cl_fail(int32_t *code, char *err, size_t errlen, eddy_rt_code_t c,
                 const char *op, const char *fmt, ...) EDDY_RT_PRINTF(6, 7);

/// Two shapes of (rank, dims) that are equal.
static inline bool rt_cl_same_dims(int32_t ra, const int64_t *a, int32_t rb,
                                   const int64_t *b) {
  return ra == rb && (ra == 0 || memcmp(a, b, (size_t)ra * sizeof *a) == 0);
}

/// ---- The device ------------------------------------------------------------

/// The thread's state when the helpers may use the device; else NULL with
/// the failure stored.
rt_cuda_thread_t *rt_cl_device(const char *op, int32_t *code, char *err,
                               size_t errlen);
/// False (the failure recorded for eddy_rt_entry_cuda_end and stored) when
/// the driver call `call` returned r.
bool rt_cl_cu_ok(cu_result r, const char *call, const char *op, int32_t *code,
                 char *err, size_t errlen);
/// False with the failure stored when allocating `bytes` of `what` returned
/// r, or returned no block (ok false). An allocation failure is the op's to
/// report (as for eddy_rt_entry_cuda_alloc), not recorded.
bool rt_cl_alloc_ok(cu_result r, bool ok, size_t bytes, const char *what,
                    const char *op, int32_t *code, char *err, size_t errlen);

/// ---- Items -----------------------------------------------------------------

/// A new item of (rank, dims) with no block and one reference; NULL when out
/// of memory.
cl_item_t *rt_cl_item_new(int32_t rank, const int64_t *dims);

static inline void rt_cl_item_retain(cl_item_t *it) {
  atomic_fetch_add_explicit(&it->refs, 1, memory_order_relaxed);
}

/// Drops a reference (it may be NULL); the last one frees the item and its
/// blocks, after the copies in flight that may use them.
void rt_cl_item_release(cl_item_t *it);

/// ---- Lists -----------------------------------------------------------------

/// Bytes of a tensor of dtype and (rank, dims) (dims known, checked by the
/// caller).
static inline size_t rt_cl_elem_bytes(int32_t dtype, int32_t rank,
                                      const int64_t *dims) {
  size_t n = eddy_rt_dtype_size(dtype);
  for (int32_t i = 0; i < rank; i++)
    n *= (size_t)dims[i];
  return n;
}

/// A new empty list with one reference (max_elements < 0: unbounded); NULL
/// when out of memory.
cl_list_t *rt_cl_list_new(int32_t depth, int32_t dtype,
                          const eddy_rt_elem_shape_t *elem,
                          int64_t max_elements, bool swap);
/// Room in l's table for `need` items (its size is unchanged); false when
/// out of memory.
bool rt_cl_list_grow(cl_list_t *l, int64_t need);

static inline void rt_cl_list_retain(cl_list_t *l) {
  atomic_fetch_add_explicit(&l->refs, 1, memory_order_relaxed);
}

/// Drops a reference (l may be NULL); the last one releases the items.
void rt_cl_list_release(cl_list_t *l);
/// Takes over *lp's reference and leaves in *lp a list only the caller
/// references (a copy of the item table when it was shared). False with
/// the failure stored and *lp released.
bool rt_cl_make_unique(cl_list_t **lp, const char *op, int32_t *code, char *err,
                       size_t errlen);

/// Room for one more item under max_elements. False with the failure stored.
bool rt_cl_check_room(const cl_list_t *l, const char *op, int32_t *code,
                      char *err, size_t errlen);
/// 0 <= index < l's length. False with the failure stored.
bool rt_cl_check_index(const cl_list_t *l, const char *op, int64_t index,
                       int32_t *code, char *err, size_t errlen);

/// tl.empty and tl.reserve of a list of `depth` (0: of tensors), with the
/// checks and messages of runtime/list.c; NULL with the failure stored.
void *rt_cl_empty_list(int32_t depth, int32_t dtype, int32_t rank,
                       const int64_t *dims, int64_t max_elements, bool swap,
                       int32_t *code, char *err, size_t errlen);
void *rt_cl_reserve_list(int32_t depth, int32_t dtype, int32_t rank,
                         const int64_t *dims, int64_t n, int32_t *code,
                         char *err, size_t errlen);

#endif

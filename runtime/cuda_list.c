/// TensorLists whose items live in CUDA device memory: the form of
/// runtime/entry.c's list helpers that code compiled with `--target=cuda`
/// calls. Same signatures, value semantics and messages as the host helpers
/// (runtime/list.c), but item data pointers are device pointers.
///
/// A list is a host struct: a reference count, the dtype and element shape,
/// and a table of item pointers (NULL: an item never set). Items are
/// reference-counted host records holding one device block each; they are
/// written once and then only read, so list copies share them
/// (copy-on-write of the table, as in runtime/list.c). tl.from_tensor makes
/// one block for the whole tensor and items that are slices of it.
///
/// Lists nest as runtime/list.c's do: a list of depth d > 0 (the
/// accumulators of nested loops) holds references to lists of depth d - 1
/// and has no device memory of its own; dtype and element shape describe
/// the innermost tensors, which the lists of depth 0 hold in device blocks.
///
/// Every copy runs on the calling thread's stream. A list made with swap
/// (while_v2's swap_memory) keeps its items in pinned host memory: a push
/// copies the item into a fresh device block on the stream, and a second
/// per-thread stream (the swap stream) waits for that copy and moves the
/// block to pinned memory, so the move overlaps with the kernels after the
/// push; a read makes the stream wait for the move and copies back.
///
/// Blocks are freed when their last reference goes. While list copies may
/// still be in flight (since the streams were last idle), a freed block
/// waits in the thread's pending list for an event recorded after its last
/// use; pending blocks are reclaimed by the next push, pop or get and by
/// eddy_rt_entry_cuda_end, which waits for both streams.
///
/// tl.add, tl.zeros_like and the helpers for lists of lists are in
/// runtime/cuda_list_nested.c; the structs and helpers both files use are
/// declared in runtime/cuda_list_internal.h.
#include "runtime/cuda_internal.h"
#include "runtime/cuda_list_internal.h"
#include "runtime/eddyrt.h"
#include "runtime/rt_internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/// A swap-out in flight (item set: its device block goes when its event
/// completes; one reference held), or blocks whose last use is in flight
/// (freed when `event`, owned, completes).
struct rt_cuda_pending {
  cl_item_t *item;
  cu_deviceptr dev;
  void *host;
  void *event;
};

/// ---- Messages --------------------------------------------------------------

void *rt_cl_fail(int32_t *code, char *err, size_t errlen, eddy_rt_code_t c,
                 const char *op, const char *fmt, ...) {
  char msg[RT_CUDA_MSG + 128];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return rt_entry_list_fail(eddy_rt_status_create(c, "%s: %s", op, msg), code,
                            err, errlen);
}

static bool elem_known(const eddy_rt_elem_shape_t *s) {
  if (s->rank < 0)
    return false;
  for (int32_t i = 0; i < s->rank; i++)
    if (s->dims[i] < 0)
      return false;
  return true;
}

static bool elem_matches(const eddy_rt_elem_shape_t *s, int32_t rank,
                         const int64_t *dims) {
  if (s->rank < 0)
    return true;
  if (s->rank != rank)
    return false;
  for (int32_t i = 0; i < rank; i++)
    if (s->dims[i] >= 0 && s->dims[i] != dims[i])
      return false;
  return true;
}

/// ---- The device ------------------------------------------------------------

rt_cuda_thread_t *rt_cl_device(const char *op, int32_t *code, char *err,
                               size_t errlen) {
  rt_cuda_thread_t *t = rt_cuda_thread();
  if (!t->stream)
    return rt_cl_fail(
        code, err, errlen, EDDY_RT_ERR_INTERNAL, op,
        "eddy_rt_entry_cuda_begin has not succeeded on this thread");
  if (t->code)
    return rt_cl_fail(code, err, errlen, (eddy_rt_code_t)t->code, op, "%s",
                      t->msg);
  return t;
}

bool rt_cl_cu_ok(cu_result r, const char *call, const char *op, int32_t *code,
                 char *err, size_t errlen) {
  if (r == CU_SUCCESS)
    return true;
  char text[256];
  rt_cuda_record_cu(call, NULL, r);
  rt_cl_fail(code, err, errlen,
             r == CU_ERROR_OUT_OF_MEMORY ? EDDY_RT_ERR_RESOURCE
                                         : EDDY_RT_ERR_INTERNAL,
             op, "%s: %s", call, rt_cuda_error_text(r, text, sizeof text));
  return false;
}

bool rt_cl_alloc_ok(cu_result r, bool ok, size_t bytes, const char *what,
                    const char *op, int32_t *code, char *err, size_t errlen) {
  if (r == CU_SUCCESS && ok)
    return true;
  char text[256];
  rt_cl_fail(code, err, errlen,
             r == CU_ERROR_OUT_OF_MEMORY ? EDDY_RT_ERR_RESOURCE
                                         : EDDY_RT_ERR_INTERNAL,
             op, "cannot allocate %zu bytes of %s: %s", bytes, what,
             r != CU_SUCCESS ? rt_cuda_error_text(r, text, sizeof text)
                             : "the driver returned NULL");
  return false;
}

/// ---- Items -----------------------------------------------------------------

cl_item_t *rt_cl_item_new(int32_t rank, const int64_t *dims) {
  cl_item_t *it = malloc(sizeof *it + (size_t)rank * sizeof(int64_t));
  if (!it)
    return NULL;
  atomic_init(&it->refs, 1);
  it->base = NULL;
  it->dev = 0;
  it->host = NULL;
  it->event = NULL;
  it->rank = rank;
  if (rank > 0)
    memcpy(it->dims, dims, (size_t)rank * sizeof(int64_t));
  return it;
}

static void item_free(cl_item_t *it);

void rt_cl_item_release(cl_item_t *it) {
  if (it && atomic_fetch_sub_explicit(&it->refs, 1, memory_order_acq_rel) == 1)
    item_free(it);
}

static bool pending_add(rt_cuda_thread_t *t, rt_cuda_pending_t p) {
  if (t->num_pending == t->pending_cap) {
    int64_t cap = t->pending_cap ? 2 * t->pending_cap : 16;
    rt_cuda_pending_t *a = realloc(t->pending, (size_t)cap * sizeof *a);
    if (!a)
      return false;
    t->pending = a;
    t->pending_cap = cap;
  }
  t->pending[t->num_pending++] = p;
  return true;
}

/// Frees the blocks now (also after an error, so that cleanup does not
/// leak); failures are recorded on a thread with a stream.
static void free_blocks(cu_deviceptr dev, void *host, void *event) {
  if (!rt_cuda_context_for_free())
    return;
  bool has_stream = rt_cuda_thread()->stream != NULL;
  cu_result r;
  if (dev && (r = rt_cu.mem_free(dev)) != CU_SUCCESS && has_stream)
    rt_cuda_record_cu("cuMemFree_v2", NULL, r);
  if (host && (r = rt_cu.mem_free_host(host)) != CU_SUCCESS && has_stream)
    rt_cuda_record_cu("cuMemFreeHost", NULL, r);
  if (event && (r = rt_cu.event_destroy(event)) != CU_SUCCESS && has_stream)
    rt_cuda_record_cu("cuEventDestroy_v2", NULL, r);
}

static void item_free(cl_item_t *it) {
  if (it->base) {
    rt_cl_item_release(it->base);
    free(it);
    return;
  }
  rt_cuda_thread_t *t = rt_cuda_thread();
  if ((it->dev || it->host) && t->stream && t->list_busy) {
    // Copies issued on the thread's streams may still use the blocks: free
    // them once the stream has passed this point. (A swap-out in flight
    // holds a reference, so it is done by now.)
    void *ev = NULL;
    if (rt_cu.event_create(&ev, CU_EVENT_DISABLE_TIMING) == CU_SUCCESS) {
      if (rt_cu.event_record(ev, t->stream) == CU_SUCCESS &&
          pending_add(t, (rt_cuda_pending_t){NULL, it->dev, it->host, ev})) {
        free_blocks(0, NULL, it->event);
        free(it);
        return;
      }
      rt_cu.event_destroy(ev);
    }
    // No event: wait for the streams instead.
    rt_cu.stream_synchronize(t->stream);
    if (t->swap_stream)
      rt_cu.stream_synchronize(t->swap_stream);
  }
  free_blocks(it->dev, it->host, it->event);
  free(it);
}

/// True when the pending entry's copies are done (or failed: its blocks go
/// anyway); wait: block until then.
static bool pending_done(const rt_cuda_pending_t *p, bool wait) {
  void *ev = p->item ? p->item->event : p->event;
  cu_result r = wait ? rt_cu.event_synchronize(ev) : rt_cu.event_query(ev);
  if (r == CU_ERROR_NOT_READY && !wait)
    return false;
  if (r != CU_SUCCESS)
    rt_cuda_record_cu(wait ? "cuEventSynchronize" : "cuEventQuery", NULL, r);
  return true;
}

static void pending_finish(rt_cuda_pending_t *p) {
  if (p->item) {
    // The swap-out is done: the device block is no longer needed.
    free_blocks(p->item->dev, NULL, NULL);
    p->item->dev = 0;
    rt_cl_item_release(p->item);
  } else {
    free_blocks(p->dev, p->host, p->event);
  }
}

/// Frees the pending blocks whose copies are done (wait: all of them).
static void reclaim(rt_cuda_thread_t *t, bool wait) {
  while (t->num_pending > 0) {
    int64_t n = t->num_pending, keep = 0;
    for (int64_t i = 0; i < n; i++) {
      rt_cuda_pending_t p = t->pending[i];
      if (!pending_done(&p, wait))
        t->pending[keep++] = p;
      else
        pending_finish(&p); // may append entries (a last reference went)
    }
    int64_t added = t->num_pending - n;
    if (added > 0)
      memmove(&t->pending[keep], &t->pending[n],
              (size_t)added * sizeof *t->pending);
    t->num_pending = keep + added;
    if (!wait || added == 0)
      return;
  }
}

/// A new item holding a copy of the device data src of (rank, dims),
/// `bytes` long; for a swap list the copy moves on to pinned memory. NULL
/// with the failure stored.
static cl_item_t *store(rt_cuda_thread_t *t, const char *op, bool swap,
                        const void *src, int32_t rank, const int64_t *dims,
                        size_t bytes, int32_t *code, char *err, size_t errlen) {
  cl_item_t *it = rt_cl_item_new(rank, dims);
  if (!it)
    return rt_cl_fail(code, err, errlen, EDDY_RT_ERR_RESOURCE, op,
                      "out of memory");
  if (bytes == 0)
    return it;
  cu_deviceptr dev = 0;
  cu_result r = rt_cu.mem_alloc(&dev, bytes);
  if (!rt_cl_alloc_ok(r, dev != 0, bytes, "device memory", op, code, err,
                      errlen)) {
    free(it);
    return NULL;
  }
  it->dev = dev;
  if (!rt_cl_cu_ok(rt_cu.memcpy_dtod_async(dev, (cu_deviceptr)(uintptr_t)src,
                                           bytes, t->stream),
                   "cuMemcpyDtoDAsync_v2", op, code, err, errlen)) {
    rt_cl_item_release(it);
    return NULL;
  }
  t->list_busy = true;
  if (!swap)
    return it;
  // Swap out: the swap stream waits for the copy, then moves the block to
  // pinned memory while the stream goes on with the kernels after the push.
  if (!t->swap_stream) {
    void *s = NULL;
    if (!rt_cl_cu_ok(rt_cu.stream_create(&s, CU_STREAM_NON_BLOCKING),
                     "cuStreamCreate", op, code, err, errlen)) {
      rt_cl_item_release(it);
      return NULL;
    }
    t->swap_stream = s;
  }
  void *host = NULL, *copied = NULL;
  r = rt_cu.mem_alloc_host(&host, bytes);
  if (!rt_cl_alloc_ok(r, host != NULL, bytes, "pinned host memory", op, code,
                      err, errlen)) {
    rt_cl_item_release(it);
    return NULL;
  }
  it->host = host;
  bool ok = rt_cl_cu_ok(rt_cu.event_create(&copied, CU_EVENT_DISABLE_TIMING),
                        "cuEventCreate", op, code, err, errlen);
  ok = ok && rt_cl_cu_ok(rt_cu.event_record(copied, t->stream), "cuEventRecord",
                         op, code, err, errlen);
  ok = ok && rt_cl_cu_ok(rt_cu.stream_wait_event(t->swap_stream, copied, 0),
                         "cuStreamWaitEvent", op, code, err, errlen);
  if (copied) // released by the driver once it has completed
    rt_cu.event_destroy(copied);
  ok =
      ok && rt_cl_cu_ok(rt_cu.event_create(&it->event, CU_EVENT_DISABLE_TIMING),
                        "cuEventCreate", op, code, err, errlen);
  ok = ok &&
       rt_cl_cu_ok(rt_cu.memcpy_dtoh_async(host, dev, bytes, t->swap_stream),
                   "cuMemcpyDtoHAsync_v2", op, code, err, errlen);
  ok = ok && rt_cl_cu_ok(rt_cu.event_record(it->event, t->swap_stream),
                         "cuEventRecord", op, code, err, errlen);
  if (!ok) {
    rt_cu.stream_synchronize(t->swap_stream);
    rt_cl_item_release(it);
    return NULL;
  }
  rt_cl_item_retain(it);
  if (!pending_add(t, (rt_cuda_pending_t){it, 0, NULL, NULL})) {
    rt_cuda_pending_t p = {it, 0, NULL, NULL};
    pending_done(&p, true);
    pending_finish(&p);
  }
  return it;
}

/// Copies item it (NULL: never set, read as zeros) into the device buffer
/// dst of `bytes`. False with the failure stored.
static bool load(rt_cuda_thread_t *t, const char *op, const cl_item_t *it,
                 void *dst, size_t bytes, int32_t *code, char *err,
                 size_t errlen) {
  if (bytes == 0)
    return true;
  cu_deviceptr d = (cu_deviceptr)(uintptr_t)dst;
  t->list_busy = true;
  if (!it)
    return rt_cl_cu_ok(rt_cu.memset_d8_async(d, 0, bytes, t->stream),
                       "cuMemsetD8Async", op, code, err, errlen);
  if (it->host)
    return rt_cl_cu_ok(rt_cu.stream_wait_event(t->stream, it->event, 0),
                       "cuStreamWaitEvent", op, code, err, errlen) &&
           rt_cl_cu_ok(rt_cu.memcpy_htod_async(d, it->host, bytes, t->stream),
                       "cuMemcpyHtoDAsync_v2", op, code, err, errlen);
  return rt_cl_cu_ok(rt_cu.memcpy_dtod_async(d, it->dev, bytes, t->stream),
                     "cuMemcpyDtoDAsync_v2", op, code, err, errlen);
}

/// ---- Lists -----------------------------------------------------------------

cl_list_t *rt_cl_list_new(int32_t depth, int32_t dtype,
                          const eddy_rt_elem_shape_t *elem,
                          int64_t max_elements, bool swap) {
  cl_list_t *l = calloc(1, sizeof *l);
  if (!l)
    return NULL;
  atomic_init(&l->refs, 1);
  l->dtype = dtype;
  l->depth = depth;
  l->swap = swap;
  l->elem = *elem;
  l->max_elements = max_elements < 0 ? -1 : max_elements;
  return l;
}

bool rt_cl_list_grow(cl_list_t *l, int64_t need) {
  if (need <= l->cap)
    return true;
  int64_t cap = l->cap < 4 ? 4 : l->cap;
  while (cap < need)
    cap = cap > INT64_MAX / 2 ? need : cap * 2;
  if ((uint64_t)cap > SIZE_MAX / sizeof(void *))
    return false;
  if (l->depth > 0) {
    cl_list_t **a = realloc(l->lists, (size_t)cap * sizeof *a);
    if (!a)
      return false;
    l->lists = a;
  } else {
    cl_item_t **a = realloc(l->items, (size_t)cap * sizeof *a);
    if (!a)
      return false;
    l->items = a;
  }
  l->cap = cap;
  return true;
}

void rt_cl_list_release(cl_list_t *l) {
  if (!l || atomic_fetch_sub_explicit(&l->refs, 1, memory_order_acq_rel) != 1)
    return;
  // Recursion into item lists is bounded by EDDY_RT_MAX_LIST_DEPTH.
  for (int64_t i = 0; i < l->size; i++) {
    if (l->depth > 0)
      rt_cl_list_release(l->lists[i]);
    else
      rt_cl_item_release(l->items[i]);
  }
  free(l->items);
  free(l->lists);
  free(l);
}

bool rt_cl_make_unique(cl_list_t **lp, const char *op, int32_t *code, char *err,
                       size_t errlen) {
  cl_list_t *l = *lp;
  if (atomic_load_explicit(&l->refs, memory_order_acquire) == 1)
    return true;
  cl_list_t *c =
      rt_cl_list_new(l->depth, l->dtype, &l->elem, l->max_elements, l->swap);
  if (!c || !rt_cl_list_grow(c, l->size)) {
    if (c)
      rt_cl_list_release(c);
    rt_cl_list_release(l);
    *lp = NULL;
    rt_cl_fail(code, err, errlen, EDDY_RT_ERR_RESOURCE, op, "out of memory");
    return false;
  }
  for (int64_t i = 0; i < l->size; i++) {
    if (l->depth > 0) {
      c->lists[i] = l->lists[i];
      if (c->lists[i])
        rt_cl_list_retain(c->lists[i]);
    } else {
      c->items[i] = l->items[i];
      if (c->items[i])
        rt_cl_item_retain(c->items[i]);
    }
  }
  c->size = l->size;
  rt_cl_list_release(l);
  *lp = c;
  return true;
}

/// The tensor forms of the item helpers need a list of tensors. False with
/// the failure stored.
static bool expect_tensors(const cl_list_t *l, const char *op, int32_t *code,
                           char *err, size_t errlen) {
  if (l->depth == 0)
    return true;
  rt_cl_fail(code, err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT, op,
             "the list holds lists (of %s), not tensors",
             eddy_rt_dtype_name(l->dtype));
  return false;
}

bool rt_cl_check_room(const cl_list_t *l, const char *op, int32_t *code,
                      char *err, size_t errlen) {
  if (l->max_elements < 0 || l->size < l->max_elements)
    return true;
  rt_cl_fail(code, err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT, op,
             "the list is full: length %" PRId64
             " reached max_elements %" PRId64,
             l->size, l->max_elements);
  return false;
}

/// The caller's item (dtype, rank, dims) at data, checked as the host's
/// push and set check it. False with the failure stored.
static bool check_item(const cl_list_t *l, const char *op, void *data,
                       int32_t dtype, int32_t rank, const int64_t *dims,
                       int32_t *code, char *err, size_t errlen) {
  eddy_rt_tensor_t x;
  eddy_rt_status_t st = eddy_rt_tensor_wrap(dtype, rank, dims, data, &x);
  if (st) {
    rt_entry_list_fail(st, code, err, errlen);
    return false;
  }
  if (!expect_tensors(l, op, code, err, errlen))
    return false;
  st = eddy_rt_tensor_validate(&x, op, "the item");
  if (!st && (x.dtype != l->dtype || !elem_matches(&l->elem, rank, dims))) {
    char sx[RT_SHAPE_BUF], se[RT_SHAPE_BUF];
    st = rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                "item is %s; the list holds %s%s", rt_type_str(&x, sx),
                eddy_rt_dtype_name(l->dtype), rt_elem_str(&l->elem, se));
  }
  if (st) {
    rt_entry_list_fail(st, code, err, errlen);
    return false;
  }
  return true;
}

/// The dims of what reading item i gives (an unset item reads as zeros of
/// the element shape), checked against the caller's (dtype, rank, dims).
/// False with the failure stored.
static bool check_read(const cl_list_t *l, const char *op, int64_t i,
                       int32_t dtype, int32_t rank, const int64_t *dims,
                       int32_t *code, char *err, size_t errlen) {
  const cl_item_t *it = l->items[i];
  char a[RT_SHAPE_BUF], b[RT_SHAPE_BUF];
  if (!it && !elem_known(&l->elem)) {
    rt_cl_fail(code, err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT, op,
               "item %" PRId64 " was never set and the element shape %s is not "
               "fully known, so it cannot be read as zeros",
               i, rt_elem_str(&l->elem, a));
    return false;
  }
  int32_t irank = it ? it->rank : l->elem.rank;
  const int64_t *idims = it ? it->dims : l->elem.dims;
  if (dtype != l->dtype || !rt_cl_same_dims(rank, dims, irank, idims)) {
    rt_cl_fail(code, err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT, op,
               "expected %s, got %s",
               rt_spec_str(dtype, rank, dims, a, sizeof a),
               rt_spec_str(l->dtype, irank, idims, b, sizeof b));
    return false;
  }
  return true;
}

bool rt_cl_check_index(const cl_list_t *l, const char *op, int64_t index,
                       int32_t *code, char *err, size_t errlen) {
  if (index >= 0 && index < l->size)
    return true;
  rt_cl_fail(code, err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT, op,
             "index %" PRId64 " is out of range for a list of length %" PRId64
             " (expected 0 <= index < %" PRId64 ")",
             index, l->size, l->size);
  return false;
}

/// ---- Entry helpers ---------------------------------------------------------

/// A new list of `depth` for tl.empty and tl.reserve (after the caller's
/// own checks), checked as runtime/list.c checks it; NULL with the failure
/// stored.
static cl_list_t *checked_list_new(const char *op, int32_t depth, int32_t dtype,
                                   const eddy_rt_elem_shape_t *shape,
                                   int64_t max_elements, bool swap,
                                   int32_t *code, char *err, size_t errlen) {
  if (dtype < 0 || dtype >= EDDY_RT_DTYPE_COUNT_)
    return rt_cl_fail(code, err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT, op,
                      "element dtype %d is not a dtype", (int)dtype);
  if (depth < 0 || depth > EDDY_RT_MAX_LIST_DEPTH)
    return rt_cl_fail(code, err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT, op,
                      "list nesting depth %d is outside 0..%d", (int)depth,
                      EDDY_RT_MAX_LIST_DEPTH);
  cl_list_t *l = rt_cl_list_new(depth, dtype, shape, max_elements, swap);
  return l ? l
           : rt_cl_fail(code, err, errlen, EDDY_RT_ERR_RESOURCE, op,
                        "out of memory");
}

void *rt_cl_empty_list(int32_t depth, int32_t dtype, int32_t rank,
                       const int64_t *dims, int64_t max_elements, bool swap,
                       int32_t *code, char *err, size_t errlen) {
  const char *op = "tl.empty";
  eddy_rt_elem_shape_t shape;
  if (!eddy_rt_elem_shape_make(rank, dims, &shape))
    return rt_cl_fail(code, err, errlen, EDDY_RT_ERR_INTERNAL, op,
                      "bad element rank %d", (int)rank);
  return checked_list_new(op, depth, dtype, &shape, max_elements, swap, code,
                          err, errlen);
}

void *rt_cl_reserve_list(int32_t depth, int32_t dtype, int32_t rank,
                         const int64_t *dims, int64_t n, int32_t *code,
                         char *err, size_t errlen) {
  const char *op = "tl.reserve";
  eddy_rt_elem_shape_t shape;
  if (!eddy_rt_elem_shape_make(rank, dims, &shape))
    return rt_cl_fail(code, err, errlen, EDDY_RT_ERR_INTERNAL, op,
                      "bad element rank %d", (int)rank);
  if (n < 0)
    return rt_cl_fail(code, err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT, op,
                      "length is %" PRId64 ", expected >= 0", n);
  cl_list_t *l =
      checked_list_new(op, depth, dtype, &shape, -1, false, code, err, errlen);
  if (!l)
    return NULL;
  if (!rt_cl_list_grow(l, n)) {
    rt_cl_list_release(l);
    return rt_cl_fail(code, err, errlen, EDDY_RT_ERR_RESOURCE, op,
                      "out of memory for a list of length %" PRId64, n);
  }
  for (int64_t i = 0; i < n; i++) {
    if (depth > 0)
      l->lists[i] = NULL;
    else
      l->items[i] = NULL;
  }
  l->size = n;
  return l;
}

void *eddy_rt_entry_cuda_list_empty(eddy_rt_ctx_t *rt, int32_t dtype,
                                    int32_t rank, const int64_t *dims,
                                    int64_t max_elements, int32_t *code,
                                    char *err, size_t errlen, int32_t swap) {
  (void)rt;
  return rt_cl_empty_list(0, dtype, rank, dims, max_elements, swap != 0, code,
                          err, errlen);
}

void *eddy_rt_entry_cuda_list_reserve(eddy_rt_ctx_t *rt, int32_t dtype,
                                      int32_t rank, const int64_t *dims,
                                      int64_t n, int32_t *code, char *err,
                                      size_t errlen) {
  (void)rt;
  return rt_cl_reserve_list(0, dtype, rank, dims, n, code, err, errlen);
}

void *eddy_rt_entry_cuda_list_from_tensor(eddy_rt_ctx_t *rt, void *data,
                                          int32_t dtype, int32_t rank,
                                          const int64_t *dims, int32_t *code,
                                          char *err, size_t errlen) {
  (void)rt;
  const char *op = "tl.from_tensor";
  eddy_rt_tensor_t x;
  eddy_rt_status_t st = eddy_rt_tensor_wrap(dtype, rank, dims, data, &x);
  if (!st)
    st = rt_check_operand(&x, op, 0);
  if (!st && rank < 1)
    st = rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                "operand 0 is a scalar; expected rank >= 1");
  if (st)
    return rt_entry_list_fail(st, code, err, errlen);
  rt_cuda_thread_t *t = rt_cl_device(op, code, err, errlen);
  if (!t)
    return NULL;
  eddy_rt_elem_shape_t shape;
  eddy_rt_elem_shape_make(rank - 1, dims + 1, &shape);
  int64_t n = dims[0];
  size_t slab = rt_cl_elem_bytes(dtype, rank - 1, dims + 1);
  cl_list_t *l = rt_cl_list_new(0, dtype, &shape, -1, false);
  if (!l || !rt_cl_list_grow(l, n)) {
    rt_cl_list_release(l);
    return rt_cl_fail(code, err, errlen, EDDY_RT_ERR_RESOURCE, op,
                      "out of memory for a list of length %" PRId64, n);
  }
  // One block for the whole tensor; the items are slices of it.
  cl_item_t *base = NULL;
  if (n > 0 && slab > 0) {
    base = store(t, op, false, data, rank, dims, slab * (size_t)n, code, err,
                 errlen);
    if (!base) {
      rt_cl_list_release(l);
      return NULL;
    }
  }
  for (int64_t i = 0; i < n; i++) {
    cl_item_t *it = rt_cl_item_new(rank - 1, dims + 1);
    if (!it) {
      rt_cl_item_release(base);
      rt_cl_list_release(l);
      return rt_cl_fail(code, err, errlen, EDDY_RT_ERR_RESOURCE, op,
                        "out of memory");
    }
    if (base) {
      rt_cl_item_retain(base);
      it->base = base;
      it->dev = base->dev + (cu_deviceptr)((size_t)i * slab);
    }
    l->items[l->size++] = it;
  }
  rt_cl_item_release(base);
  return l;
}

void *eddy_rt_entry_cuda_list_push(eddy_rt_ctx_t *rt, void *list, int32_t moved,
                                   void *data, int32_t dtype, int32_t rank,
                                   const int64_t *dims, int32_t *code,
                                   char *err, size_t errlen) {
  (void)rt;
  const char *op = "tl.push_back";
  cl_list_t *l = list;
  if (!l)
    return NULL;
  if (!moved)
    rt_cl_list_retain(l);
  rt_cuda_thread_t *t = NULL;
  bool ok = check_item(l, op, data, dtype, rank, dims, code, err, errlen) &&
            rt_cl_check_room(l, op, code, err, errlen);
  if (ok)
    ok = (t = rt_cl_device(op, code, err, errlen)) != NULL;
  if (!ok) {
    rt_cl_list_release(l);
    return NULL;
  }
  reclaim(t, false);
  if (!rt_cl_make_unique(&l, op, code, err, errlen))
    return NULL;
  cl_item_t *it = NULL;
  if (!rt_cl_list_grow(l, l->size + 1))
    rt_cl_fail(code, err, errlen, EDDY_RT_ERR_RESOURCE, op, "out of memory");
  else
    it = store(t, op, l->swap, data, rank, dims,
               rt_cl_elem_bytes(dtype, rank, dims), code, err, errlen);
  if (!it) {
    rt_cl_list_release(l);
    return NULL;
  }
  l->items[l->size++] = it;
  return l;
}

void *eddy_rt_entry_cuda_list_pop(eddy_rt_ctx_t *rt, void *list, int32_t moved,
                                  void *out_data, int32_t dtype, int32_t rank,
                                  const int64_t *dims, int32_t *code, char *err,
                                  size_t errlen) {
  (void)rt;
  const char *op = "tl.pop_back";
  cl_list_t *l = list;
  if (!l)
    return NULL;
  if (!moved)
    rt_cl_list_retain(l);
  rt_cuda_thread_t *t = NULL;
  bool ok = expect_tensors(l, op, code, err, errlen);
  if (ok && l->size == 0) {
    rt_cl_fail(code, err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT, op,
               "cannot pop from an empty list");
    ok = false;
  }
  ok = ok &&
       check_read(l, op, l->size - 1, dtype, rank, dims, code, err, errlen);
  ok = ok && (t = rt_cl_device(op, code, err, errlen)) != NULL;
  if (ok) {
    reclaim(t, false);
    ok = load(t, op, l->items[l->size - 1], out_data,
              rt_cl_elem_bytes(dtype, rank, dims), code, err, errlen);
  }
  if (!ok) {
    rt_cl_list_release(l);
    return NULL;
  }
  if (!rt_cl_make_unique(&l, op, code, err, errlen))
    return NULL;
  rt_cl_item_release(l->items[--l->size]);
  return l;
}

void eddy_rt_entry_cuda_list_get(eddy_rt_ctx_t *rt, const void *list,
                                 int64_t index, void *out_data, int32_t dtype,
                                 int32_t rank, const int64_t *dims,
                                 int32_t *code, char *err, size_t errlen) {
  (void)rt;
  const char *op = "tl.get_item";
  const cl_list_t *l = list;
  if (!l || !expect_tensors(l, op, code, err, errlen) ||
      !rt_cl_check_index(l, op, index, code, err, errlen) ||
      !check_read(l, op, index, dtype, rank, dims, code, err, errlen))
    return;
  rt_cuda_thread_t *t = rt_cl_device(op, code, err, errlen);
  if (!t)
    return;
  reclaim(t, false);
  load(t, op, l->items[index], out_data, rt_cl_elem_bytes(dtype, rank, dims),
       code, err, errlen);
}

void *eddy_rt_entry_cuda_list_set(eddy_rt_ctx_t *rt, void *list, int32_t moved,
                                  int64_t index, void *data, int32_t dtype,
                                  int32_t rank, const int64_t *dims,
                                  int32_t *code, char *err, size_t errlen) {
  (void)rt;
  const char *op = "tl.set_item";
  cl_list_t *l = list;
  if (!l)
    return NULL;
  if (!moved)
    rt_cl_list_retain(l);
  // The host helper wraps the item before it looks at the index.
  eddy_rt_tensor_t x;
  eddy_rt_status_t st = eddy_rt_tensor_wrap(dtype, rank, dims, data, &x);
  if (st) {
    rt_cl_list_release(l);
    return rt_entry_list_fail(st, code, err, errlen);
  }
  rt_cuda_thread_t *t = NULL;
  if (!expect_tensors(l, op, code, err, errlen) ||
      !rt_cl_check_index(l, op, index, code, err, errlen) ||
      !check_item(l, op, data, dtype, rank, dims, code, err, errlen) ||
      !(t = rt_cl_device(op, code, err, errlen))) {
    rt_cl_list_release(l);
    return NULL;
  }
  if (!rt_cl_make_unique(&l, op, code, err, errlen))
    return NULL;
  cl_item_t *it = store(t, op, l->swap, data, rank, dims,
                        rt_cl_elem_bytes(dtype, rank, dims), code, err, errlen);
  if (!it) {
    rt_cl_list_release(l);
    return NULL;
  }
  rt_cl_item_release(l->items[index]);
  l->items[index] = it;
  return l;
}

void *eddy_rt_entry_cuda_list_resize(eddy_rt_ctx_t *rt, void *list,
                                     int32_t moved, int64_t n, int32_t *code,
                                     char *err, size_t errlen) {
  (void)rt;
  const char *op = "tl.resize";
  cl_list_t *l = list;
  if (!l)
    return NULL;
  if (!moved)
    rt_cl_list_retain(l);
  if (n < 0 || (l->max_elements >= 0 && n > l->max_elements)) {
    int64_t mx = l->max_elements;
    rt_cl_list_release(l);
    if (n < 0)
      return rt_cl_fail(code, err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT, op,
                        "length is %" PRId64 ", expected >= 0", n);
    return rt_cl_fail(
        code, err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT, op,
        "length %" PRId64 " is past the list's max_elements %" PRId64, n, mx);
  }
  if (n == l->size)
    return l;
  if (!rt_cl_make_unique(&l, op, code, err, errlen))
    return NULL;
  if (!rt_cl_list_grow(l, n)) {
    rt_cl_list_release(l);
    return rt_cl_fail(code, err, errlen, EDDY_RT_ERR_RESOURCE, op,
                      "out of memory for a list of length %" PRId64, n);
  }
  for (int64_t i = n; i < l->size; i++) {
    if (l->depth > 0)
      rt_cl_list_release(l->lists[i]);
    else
      rt_cl_item_release(l->items[i]);
  }
  for (int64_t i = l->size; i < n; i++) {
    if (l->depth > 0)
      l->lists[i] = NULL;
    else
      l->items[i] = NULL;
  }
  l->size = n;
  return l;
}

void *eddy_rt_entry_cuda_list_scatter(eddy_rt_ctx_t *rt, void *list,
                                      int32_t moved, void *idx_data,
                                      int32_t idx_dtype, int64_t n, void *data,
                                      int32_t dtype, int32_t rank,
                                      const int64_t *dims, int32_t *code,
                                      char *err, size_t errlen) {
  (void)rt;
  const char *op = "tl.scatter";
  cl_list_t *l = list;
  if (!l)
    return NULL;
  if (!moved)
    rt_cl_list_retain(l);
  rt_cuda_thread_t *t = NULL;
  if (!expect_tensors(l, op, code, err, errlen) ||
      !(t = rt_cl_device(op, code, err, errlen))) {
    rt_cl_list_release(l);
    return NULL;
  }
  // The checks and messages of eddy_rt_list_scatter.
  eddy_rt_tensor_t x;
  eddy_rt_status_t st = eddy_rt_tensor_wrap(dtype, rank, dims, data, &x);
  if (st) {
    rt_cl_list_release(l);
    return rt_entry_list_fail(st, code, err, errlen);
  }
  char sx[RT_SHAPE_BUF], se[RT_SHAPE_BUF];
  if (rank < 1 || dims[0] != n || n < 0) {
    rt_cl_list_release(l);
    return rt_cl_fail(code, err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT, op,
                      "%" PRId64
                      " indices for the rows of %s: expected one index "
                      "per row",
                      n, rt_type_str(&x, sx));
  }
  if (dtype != l->dtype || !elem_matches(&l->elem, rank - 1, dims + 1)) {
    rt_cl_list_release(l);
    return rt_cl_fail(code, err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT, op,
                      "rows of %s do not fit the list of %s%s",
                      rt_type_str(&x, sx), eddy_rt_dtype_name(l->dtype),
                      rt_elem_str(&l->elem, se));
  }
  // The indices, read on the host.
  size_t isz = eddy_rt_dtype_size(idx_dtype);
  char *ix = n > 0 ? malloc((size_t)n * isz) : NULL;
  if (n > 0 && !ix) {
    rt_cl_list_release(l);
    return rt_cl_fail(code, err, errlen, EDDY_RT_ERR_RESOURCE, op,
                      "out of memory");
  }
  if (n > 0)
    eddy_rt_entry_cuda_to_host(ix, idx_data, n * (int64_t)isz);
  int64_t top = l->size;
  void *bad = NULL;
  if (n > 0 && !rt_cl_device(op, code, err, errlen))
    bad = l; // (the failure is stored)
  for (int64_t k = 0; !bad && k < n; k++) {
    int64_t i = rt_load_i64(idx_dtype, ix + (size_t)k * isz);
    if (i < 0 || (l->max_elements >= 0 && i >= l->max_elements)) {
      bad = l;
      if (i < 0)
        rt_cl_fail(code, err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT, op,
                   "index %" PRId64 " (at %" PRId64 ") is negative", i, k);
      else
        rt_cl_fail(code, err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT, op,
                   "index %" PRId64 " is past the list's max_elements %" PRId64,
                   i, l->max_elements);
    } else if (i + 1 > top) {
      top = i + 1;
    }
  }
  if (bad) {
    free(ix);
    rt_cl_list_release(l);
    return NULL;
  }
  if (!rt_cl_make_unique(&l, op, code, err, errlen)) {
    free(ix);
    return NULL;
  }
  if (!rt_cl_list_grow(l, top)) {
    free(ix);
    rt_cl_list_release(l);
    return rt_cl_fail(code, err, errlen, EDDY_RT_ERR_RESOURCE, op,
                      "out of memory for a list of length %" PRId64, top);
  }
  for (int64_t i = l->size; i < top; i++)
    l->items[i] = NULL;
  l->size = top;
  size_t slab = rt_cl_elem_bytes(dtype, rank - 1, dims + 1);
  for (int64_t k = 0; k < n; k++) {
    int64_t i = rt_load_i64(idx_dtype, ix + (size_t)k * isz);
    cl_item_t *it = store(t, op, l->swap, (char *)data + (size_t)k * slab,
                          rank - 1, dims + 1, slab, code, err, errlen);
    if (!it) {
      free(ix);
      rt_cl_list_release(l);
      return NULL;
    }
    rt_cl_item_release(l->items[i]);
    l->items[i] = it;
  }
  free(ix);
  return l;
}

/// The item shape of a stack of l: its first set item's, else the element
/// shape; false (failure recorded) when the items differ or no shape is
/// known.
static bool stack_item_shape(const cl_list_t *l, const char *op,
                             int32_t *out_rank, const int64_t **out_dims,
                             int32_t *code, char *err, size_t errlen) {
  char si[RT_SHAPE_BUF], sj[RT_SHAPE_BUF];
  if (l->depth > 0) {
    rt_cl_fail(
        code, err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT, op,
        "cannot stack a list of lists (nesting depth %d): only a list of "
        "tensors stacks into a tensor",
        (int)l->depth + 1);
    return false;
  }
  // The item shape: the first set item's, else the element shape.
  const cl_item_t *first = NULL;
  int64_t at = -1;
  for (int64_t i = 0; i < l->size; i++) {
    const cl_item_t *it = l->items[i];
    if (!it)
      continue;
    if (!first) {
      first = it;
      at = i;
    } else if (!rt_cl_same_dims(first->rank, first->dims, it->rank, it->dims)) {
      eddy_rt_elem_shape_t a, b;
      eddy_rt_elem_shape_make(first->rank, first->dims, &a);
      eddy_rt_elem_shape_make(it->rank, it->dims, &b);
      rt_cl_fail(code, err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT, op,
                 "items must all have one shape, but item %" PRId64
                 " has shape %s and item %" PRId64 " has shape %s",
                 at, rt_elem_str(&a, si), i, rt_elem_str(&b, sj));
      return false;
    }
  }
  if (!first && !elem_known(&l->elem)) {
    rt_cl_fail(code, err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT, op,
               "cannot stack a list of length %" PRId64
               " with no set items: the element shape %s is not fully known",
               l->size, rt_elem_str(&l->elem, si));
    return false;
  }
  *out_rank = first ? first->rank : l->elem.rank;
  *out_dims = first ? first->dims : l->elem.dims;
  return true;
}

void eddy_rt_entry_cuda_list_stack(eddy_rt_ctx_t *rt, const void *list,
                                   void *out_data, int32_t dtype, int32_t rank,
                                   const int64_t *dims, int32_t *code,
                                   char *err, size_t errlen) {
  (void)rt;
  const char *op = "tl.stack";
  const cl_list_t *l = list;
  if (!l)
    return;
  char si[RT_SHAPE_BUF], sj[RT_SHAPE_BUF];
  int32_t irank;
  const int64_t *idims;
  if (!stack_item_shape(l, op, &irank, &idims, code, err, errlen))
    return;
  if (irank + 1 > EDDY_RT_MAX_RANK) {
    rt_cl_fail(code, err, errlen, EDDY_RT_ERR_UNSUPPORTED, op,
               "stacked rank %d is above the runtime's maximum %d",
               (int)irank + 1, EDDY_RT_MAX_RANK);
    return;
  }
  int64_t sdims[EDDY_RT_MAX_RANK];
  sdims[0] = l->size;
  if (irank > 0)
    memcpy(sdims + 1, idims, (size_t)irank * sizeof(int64_t));
  if (dtype != l->dtype || !rt_cl_same_dims(rank, dims, irank + 1, sdims)) {
    rt_cl_fail(code, err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT, op,
               "expected %s, got %s",
               rt_spec_str(dtype, rank, dims, si, sizeof si),
               rt_spec_str(l->dtype, irank + 1, sdims, sj, sizeof sj));
    return;
  }
  if (l->size == 0)
    return;
  rt_cuda_thread_t *t = rt_cl_device(op, code, err, errlen);
  if (!t)
    return;
  size_t bytes = rt_cl_elem_bytes(dtype, irank, idims);
  for (int64_t i = 0; i < l->size; i++)
    if (!load(t, op, l->items[i], (char *)out_data + (size_t)i * bytes, bytes,
              code, err, errlen))
      return;
}

/// The shape of a concatenation of l's items ([sum of first dims] + the
/// common rest, in out_dims) and, when lens is not NULL, each item's first
/// dim; false with the failure stored (the checks of eddy_rt_list_concat).
static bool concat_shape(const cl_list_t *l, const char *op, int32_t *rank,
                         int64_t *out_dims, int64_t *lens, int32_t *code,
                         char *err, size_t errlen) {
  char sa[RT_SHAPE_BUF], sb[RT_SHAPE_BUF];
  if (!expect_tensors(l, op, code, err, errlen))
    return false;
  *rank = -1;
  int64_t total = 0;
  for (int64_t i = 0; i < l->size; i++) {
    const cl_item_t *it = l->items[i];
    int32_t r = it ? it->rank : l->elem.rank;
    const int64_t *d = it ? it->dims : l->elem.dims;
    if (!it && !elem_known(&l->elem)) {
      rt_cl_fail(code, err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT, op,
                 "item %" PRId64
                 " was never set and the element shape %s is not "
                 "fully known, so it cannot be read as zeros",
                 i, rt_elem_str(&l->elem, sa));
      return false;
    }
    if (r < 1) {
      rt_cl_fail(code, err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT, op,
                 "item %" PRId64 " is a scalar; only items of rank >= 1 "
                 "concatenate",
                 i);
      return false;
    }
    if (*rank < 0) {
      *rank = r;
      memcpy(out_dims, d, (size_t)r * sizeof(int64_t));
    } else if (r != *rank || memcmp(out_dims + 1, d + 1,
                                    (size_t)(r - 1) * sizeof(int64_t)) != 0) {
      eddy_rt_elem_shape_t a, b;
      eddy_rt_elem_shape_make(*rank, out_dims, &a);
      eddy_rt_elem_shape_make(r, d, &b);
      a.dims[0] = b.dims[0] = -1;
      rt_cl_fail(code, err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT, op,
                 "item %" PRId64
                 " has shape %s, item 0 %s: items must agree in "
                 "every dim but the first",
                 i, rt_elem_str(&b, sb), rt_elem_str(&a, sa));
      return false;
    }
    if (lens)
      lens[i] = d[0];
    total += d[0];
  }
  if (l->size == 0) {
    const eddy_rt_elem_shape_t *e = &l->elem;
    bool known = e->rank >= 1;
    for (int32_t i = 1; known && i < e->rank; i++)
      known = e->dims[i] >= 0;
    if (!known) {
      rt_cl_fail(
          code, err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT, op,
          "cannot concatenate an empty list whose element shape %s is not "
          "known past its first dim",
          rt_elem_str(e, sa));
      return false;
    }
    *rank = e->rank;
    memcpy(out_dims, e->dims, (size_t)e->rank * sizeof(int64_t));
  }
  out_dims[0] = total;
  return true;
}

void eddy_rt_entry_cuda_list_concat(eddy_rt_ctx_t *rt, const void *list,
                                    void *out_data, int32_t dtype,
                                    int32_t rank, const int64_t *dims,
                                    void *out_lengths, int32_t *code,
                                    char *err, size_t errlen) {
  (void)rt;
  const char *op = "tl.concat";
  const cl_list_t *l = list;
  if (!l)
    return;
  char si[RT_SHAPE_BUF], sj[RT_SHAPE_BUF];
  int64_t cdims[EDDY_RT_MAX_RANK];
  int64_t *lens = l->size > 0 ? malloc((size_t)l->size * sizeof(int64_t))
                              : NULL;
  int32_t crank;
  if (l->size > 0 && !lens) {
    rt_cl_fail(code, err, errlen, EDDY_RT_ERR_RESOURCE, op, "out of memory");
    return;
  }
  rt_cuda_thread_t *t = NULL;
  if (!concat_shape(l, op, &crank, cdims, lens, code, err, errlen) ||
      !(t = rt_cl_device(op, code, err, errlen))) {
    free(lens);
    return;
  }
  if (dtype != l->dtype || !rt_cl_same_dims(rank, dims, crank, cdims)) {
    rt_cl_fail(code, err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT, op,
               "expected %s, got %s",
               rt_spec_str(dtype, rank, dims, si, sizeof si),
               rt_spec_str(l->dtype, crank, cdims, sj, sizeof sj));
    free(lens);
    return;
  }
  size_t row = rt_cl_elem_bytes(dtype, crank - 1, cdims + 1), at = 0;
  for (int64_t i = 0; i < l->size; i++) {
    size_t bytes = row * (size_t)lens[i];
    if (!load(t, op, l->items[i], (char *)out_data + at, bytes, code, err,
              errlen)) {
      free(lens);
      return;
    }
    at += bytes;
  }
  if (l->size > 0)
    eddy_rt_entry_cuda_to_device(out_lengths, lens,
                                 l->size * (int64_t)sizeof(int64_t));
  free(lens);
}

void *eddy_rt_entry_cuda_list_split(eddy_rt_ctx_t *rt, void *data,
                                    int32_t dtype, int32_t rank,
                                    const int64_t *dims, void *len_data,
                                    int32_t len_dtype, int64_t n,
                                    int32_t erank, const int64_t *edims,
                                    int32_t *code, char *err, size_t errlen) {
  (void)rt;
  const char *op = "tl.split";
  char sx[RT_SHAPE_BUF], se[RT_SHAPE_BUF];
  eddy_rt_tensor_t x;
  eddy_rt_elem_shape_t es;
  eddy_rt_status_t st = eddy_rt_tensor_wrap(dtype, rank, dims, data, &x);
  if (st)
    return rt_entry_list_fail(st, code, err, errlen);
  if (!eddy_rt_elem_shape_make(erank, edims, &es))
    return rt_cl_fail(code, err, errlen, EDDY_RT_ERR_INTERNAL, op,
                      "bad element rank %d", (int)erank);
  if (rank < 1)
    return rt_cl_fail(code, err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT, op,
                      "operand 0 is a scalar; expected rank >= 1");
  rt_cuda_thread_t *t = rt_cl_device(op, code, err, errlen);
  if (!t)
    return NULL;
  size_t isz = eddy_rt_dtype_size(len_dtype);
  char *lh = n > 0 ? malloc((size_t)n * isz) : NULL;
  if (n > 0 && !lh)
    return rt_cl_fail(code, err, errlen, EDDY_RT_ERR_RESOURCE, op,
                      "out of memory");
  if (n > 0)
    eddy_rt_entry_cuda_to_host(lh, len_data, n * (int64_t)isz);
  if (n > 0 && !rt_cl_device(op, code, err, errlen)) {
    free(lh);
    return NULL;
  }
  int64_t sum = 0;
  for (int64_t k = 0; k < n; k++) {
    int64_t v = rt_load_i64(len_dtype, lh + (size_t)k * isz);
    if (v < 0 || v > dims[0] - sum) {
      free(lh);
      return rt_cl_fail(code, err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT, op,
                        "length %" PRId64 " (at %" PRId64
                        ") is negative or runs "
                        "past the %" PRId64 " rows of %s",
                        v, k, dims[0], rt_type_str(&x, sx));
    }
    int64_t idims[EDDY_RT_MAX_RANK];
    memcpy(idims, dims, (size_t)rank * sizeof(int64_t));
    idims[0] = v;
    if (es.rank >= 0 && !elem_matches(&es, rank, idims)) {
      free(lh);
      return rt_cl_fail(code, err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT, op,
                        "slice %" PRId64 " of %s has %" PRId64
                        " rows; the list's "
                        "element shape is %s",
                        k, rt_type_str(&x, sx), v, rt_elem_str(&es, se));
    }
    sum += v;
  }
  if (sum != dims[0]) {
    free(lh);
    return rt_cl_fail(code, err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT, op,
                      "the lengths sum to %" PRId64 ", not to the %" PRId64
                      " rows of %s",
                      sum, dims[0], rt_type_str(&x, sx));
  }
  cl_list_t *l = rt_cl_list_new(0, dtype, &es, -1, false);
  if (!l || !rt_cl_list_grow(l, n)) {
    free(lh);
    rt_cl_list_release(l);
    return rt_cl_fail(code, err, errlen, EDDY_RT_ERR_RESOURCE, op,
                      "out of memory for a list of length %" PRId64, n);
  }
  size_t row = rt_cl_elem_bytes(dtype, rank - 1, dims + 1), at = 0;
  for (int64_t k = 0; k < n; k++) {
    int64_t idims[EDDY_RT_MAX_RANK];
    memcpy(idims, dims, (size_t)rank * sizeof(int64_t));
    idims[0] = rt_load_i64(len_dtype, lh + (size_t)k * isz);
    size_t bytes = row * (size_t)idims[0];
    cl_item_t *it = store(t, op, false, (char *)data + at, rank, idims, bytes,
                          code, err, errlen);
    if (!it) {
      free(lh);
      rt_cl_list_release(l);
      return NULL;
    }
    l->items[k] = it;
    l->size = k + 1;
    at += bytes;
  }
  free(lh);
  return l;
}

void eddy_rt_entry_cuda_list_dims(eddy_rt_ctx_t *rt, const void *list,
                                  int32_t what, int64_t index, int32_t rank,
                                  int64_t *out_dims, int32_t *code, char *err,
                                  size_t errlen) {
  (void)rt;
  for (int32_t i = 0; i < rank; i++)
    out_dims[i] = 0;
  const cl_list_t *l = list;
  if (!l)
    return;
  int32_t irank, skip = 0;
  const int64_t *idims;
  int64_t cdims[EDDY_RT_MAX_RANK];
  if (what == 2) {
    // A concatenation's shape (checked as tl.concat checks it).
    if (!concat_shape(l, "tl.concat", &irank, cdims, NULL, code, err, errlen))
      return;
    idims = cdims;
  } else if (what == 1) {
    // [size] + the item shape a stack has (checked as tl.stack checks it).
    if (!stack_item_shape(l, "tl.stack", &irank, &idims, code, err, errlen))
      return;
    out_dims[0] = l->size;
    skip = 1;
  } else if (index >= 0 || l->size > 0) {
    // Index -1 is the last item (pop_back); an unset item reads as zeros
    // of the element shape.
    int64_t at = index >= 0 ? index : l->size - 1;
    if (!expect_tensors(l, "tl.get_item", code, err, errlen) ||
        !rt_cl_check_index(l, "tl.get_item", at, code, err, errlen))
      return;
    const cl_item_t *it = l->items ? l->items[at] : NULL;
    irank = it ? it->rank : l->elem.rank;
    idims = it ? it->dims : l->elem.dims;
  } else {
    return; // popping an empty list: tl.pop_back reports it
  }
  // A rank that differs (or an unknown dim) is reported by the read itself.
  if (irank == rank - skip)
    for (int32_t i = 0; i < irank; i++)
      out_dims[i + skip] = idims[i] < 0 ? 0 : idims[i];
}

int64_t eddy_rt_entry_cuda_list_length(const void *list) {
  return list ? ((const cl_list_t *)list)->size : 0;
}

void eddy_rt_entry_cuda_list_retain(void *list) {
  if (list)
    rt_cl_list_retain(list);
}

void eddy_rt_entry_cuda_list_release(void *list) { rt_cl_list_release(list); }

/// ---- Thread hooks (runtime/cuda.c) -----------------------------------------

void rt_cuda_list_end(rt_cuda_thread_t *t) {
  if (t->swap_stream) {
    cu_result r = rt_cu.stream_synchronize(t->swap_stream);
    if (r != CU_SUCCESS)
      rt_cuda_record_cu("cuStreamSynchronize", "swap stream", r);
  }
  // After an error eddy_rt_entry_cuda_end does not wait for the stream;
  // blocks still in use must not be freed before it is idle.
  if (t->code && (t->list_busy || t->num_pending > 0))
    rt_cu.stream_synchronize(t->stream);
  t->list_busy = false;
  reclaim(t, true);
  free(t->pending);
  t->pending = NULL;
  t->pending_cap = 0;
}

void rt_cuda_list_thread_exit(rt_cuda_thread_t *t) {
  rt_cuda_list_end(t);
  if (t->swap_stream)
    rt_cu.stream_destroy(t->swap_stream);
  t->swap_stream = NULL;
}

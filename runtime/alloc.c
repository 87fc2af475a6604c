/// The runtime context (allocator hook, memory accounting and limit, thread
/// pool) and reference-counted buffers.
#include "runtime/rt_internal.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>

struct eddy_rt_ctx {
  eddy_rt_allocator_t allocator;
  _Atomic int64_t limit;  // 0 = unlimited
  _Atomic int64_t in_use; // bytes handed out and not yet freed
  _Atomic int64_t peak;
  eddy_rt_pool_t *pool; // NULL when single-threaded
};

// The buffer header sits in front of the data in one allocation, padded so
// that the data keeps the allocation's alignment.
struct eddy_rt_buffer {
  _Atomic int64_t refs;
  eddy_rt_ctx_t *ctx;
  int64_t size;       // data bytes
  int64_t alloc_size; // header + data, as passed to eddy_rt_alloc
};
#define RT_BUFFER_HEADER ((int64_t)EDDY_RT_ALIGN)
_Static_assert(sizeof(struct eddy_rt_buffer) <= EDDY_RT_ALIGN,
               "buffer header must fit in the alignment padding");

static void *rt_default_alloc(void *user, size_t size, size_t align) {
  (void)user;
  // aligned_alloc wants a size that is a multiple of the alignment.
  size_t rounded = (size + align - 1) / align * align;
  if (rounded < size)
    return NULL;
  return aligned_alloc(align, rounded ? rounded : align);
}

static void rt_default_free(void *user, void *ptr, size_t size) {
  (void)user;
  (void)size;
  free(ptr);
}

eddy_rt_ctx_options_t eddy_rt_ctx_options_default(void) {
  eddy_rt_ctx_options_t o;
  memset(&o, 0, sizeof(o));
  o.struct_size = (uint32_t)sizeof(o);
  o.num_threads = 1;
  return o;
}

eddy_rt_status_t eddy_rt_ctx_create(const eddy_rt_ctx_options_t *opts,
                                    eddy_rt_ctx_t **out_ctx) {
  *out_ctx = NULL;
  eddy_rt_ctx_options_t o = eddy_rt_ctx_options_default();
  if (opts) {
    if (opts->struct_size != sizeof(eddy_rt_ctx_options_t))
      return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, "eddy_rt_ctx_create",
                    "options struct_size is %" PRIu32 ", expected %zu (ABI "
                    "mismatch)",
                    opts->struct_size, sizeof(eddy_rt_ctx_options_t));
    o = *opts;
  }
  if (o.memory_limit < 0)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, "eddy_rt_ctx_create",
                  "memory limit is %" PRId64 ", expected >= 0 (0 = unlimited)",
                  o.memory_limit);
  if ((o.allocator.alloc == NULL) != (o.allocator.free == NULL))
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, "eddy_rt_ctx_create",
                  "allocator needs both alloc and free, or neither");
  eddy_rt_ctx_t *ctx = calloc(1, sizeof(*ctx));
  if (!ctx)
    return rt_err(EDDY_RT_ERR_RESOURCE, "eddy_rt_ctx_create", "out of memory");
  ctx->allocator = o.allocator;
  if (!ctx->allocator.alloc) {
    ctx->allocator.alloc = rt_default_alloc;
    ctx->allocator.free = rt_default_free;
    ctx->allocator.user = NULL;
  }
  atomic_init(&ctx->limit, o.memory_limit);
  atomic_init(&ctx->in_use, 0);
  atomic_init(&ctx->peak, 0);
  if (o.num_threads > 1) {
    eddy_rt_status_t st = eddy_rt_pool_create(o.num_threads, &ctx->pool);
    if (st) {
      free(ctx);
      return st;
    }
  }
  *out_ctx = ctx;
  return NULL;
}

void eddy_rt_ctx_destroy(eddy_rt_ctx_t *ctx) {
  if (!ctx)
    return;
  eddy_rt_pool_destroy(ctx->pool);
  free(ctx);
}

void eddy_rt_ctx_set_memory_limit(eddy_rt_ctx_t *ctx, int64_t bytes) {
  atomic_store(&ctx->limit, bytes < 0 ? 0 : bytes);
}

int64_t eddy_rt_ctx_memory_limit(const eddy_rt_ctx_t *ctx) {
  return atomic_load(&((eddy_rt_ctx_t *)ctx)->limit);
}

int64_t eddy_rt_ctx_bytes_in_use(const eddy_rt_ctx_t *ctx) {
  return atomic_load(&((eddy_rt_ctx_t *)ctx)->in_use);
}

int64_t eddy_rt_ctx_peak_bytes(const eddy_rt_ctx_t *ctx) {
  return atomic_load(&((eddy_rt_ctx_t *)ctx)->peak);
}

eddy_rt_pool_t *eddy_rt_ctx_pool(eddy_rt_ctx_t *ctx) { return ctx->pool; }

eddy_rt_status_t eddy_rt_alloc(eddy_rt_ctx_t *ctx, int64_t size,
                               const char *op, void **out_ptr) {
  *out_ptr = NULL;
  if (size < 0)
    return rt_err(EDDY_RT_ERR_INTERNAL, op, "negative allocation size %" PRId64,
                  size);
  if ((uint64_t)size > (uint64_t)SIZE_MAX)
    return rt_err(EDDY_RT_ERR_RESOURCE, op,
                  "allocation of %" PRId64 " bytes does not fit in memory",
                  size);
  // Reserve first so that concurrent allocations cannot both slip under the
  // limit.
  int64_t limit = atomic_load(&ctx->limit);
  int64_t old = atomic_load(&ctx->in_use);
  int64_t now;
  do {
    if (size > INT64_MAX - old || (limit > 0 && old + size > limit))
      return rt_err(EDDY_RT_ERR_RESOURCE, op,
                    "allocating %" PRId64 " bytes would exceed the memory "
                    "limit of %" PRId64 " bytes (%" PRId64 " bytes in use)",
                    size, limit, old);
    now = old + size;
  } while (!atomic_compare_exchange_weak(&ctx->in_use, &old, now));
  int64_t peak = atomic_load(&ctx->peak);
  while (now > peak && !atomic_compare_exchange_weak(&ctx->peak, &peak, now)) {
  }
  void *p = ctx->allocator.alloc(ctx->allocator.user, (size_t)size,
                                 EDDY_RT_ALIGN);
  if (!p) {
    atomic_fetch_sub(&ctx->in_use, size);
    return rt_err(EDDY_RT_ERR_RESOURCE, op,
                  "out of memory allocating %" PRId64 " bytes", size);
  }
  *out_ptr = p;
  return NULL;
}

void eddy_rt_free(eddy_rt_ctx_t *ctx, void *ptr, int64_t size) {
  if (!ptr)
    return;
  ctx->allocator.free(ctx->allocator.user, ptr, (size_t)size);
  atomic_fetch_sub(&ctx->in_use, size);
}

eddy_rt_status_t eddy_rt_buffer_create(eddy_rt_ctx_t *ctx, int64_t size,
                                       const char *op,
                                       eddy_rt_buffer_t **out_buf) {
  *out_buf = NULL;
  if (size < 0 || size > INT64_MAX - RT_BUFFER_HEADER)
    return rt_err(EDDY_RT_ERR_RESOURCE, op,
                  "buffer of %" PRId64 " bytes is too large", size);
  void *p;
  EDDY_RT_RETURN_IF_ERROR(eddy_rt_alloc(ctx, size + RT_BUFFER_HEADER, op, &p));
  eddy_rt_buffer_t *b = p;
  atomic_init(&b->refs, 1);
  b->ctx = ctx;
  b->size = size;
  b->alloc_size = size + RT_BUFFER_HEADER;
  *out_buf = b;
  return NULL;
}

void eddy_rt_buffer_retain(eddy_rt_buffer_t *buf) {
  atomic_fetch_add_explicit(&buf->refs, 1, memory_order_relaxed);
}

void eddy_rt_buffer_release(eddy_rt_buffer_t *buf) {
  if (!buf)
    return;
  if (atomic_fetch_sub_explicit(&buf->refs, 1, memory_order_acq_rel) == 1)
    eddy_rt_free(buf->ctx, buf, buf->alloc_size);
}

void *eddy_rt_buffer_data(const eddy_rt_buffer_t *buf) {
  return (char *)buf + RT_BUFFER_HEADER;
}

int64_t eddy_rt_buffer_size(const eddy_rt_buffer_t *buf) { return buf->size; }

bool eddy_rt_buffer_is_unique(const eddy_rt_buffer_t *buf) {
  return atomic_load_explicit(&((eddy_rt_buffer_t *)buf)->refs,
                              memory_order_acquire) == 1;
}

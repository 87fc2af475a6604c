/// The runtime context (allocator hook, memory accounting and limit, thread
/// pool, block cache) and reference-counted buffers.
///
/// The block cache: a freed block of at least RT_CACHE_MIN_BYTES is kept by
/// the context instead of going back to the allocator, and an allocation of
/// the same size takes it again (the one cached last, warm in the CPU's
/// caches). A TensorList's items are blocks of one size, so a loop that
/// pushes a thousand of them reuses the thousand of the previous call.
/// Compiled code and the interpreter allocate the same sizes at every call,
/// so in steady state a call touches no fresh pages (a fresh page costs a
/// fault and a clear). The cache holds at most as many bytes as the
/// context's peak use, and blocks of other sizes are given back before an
/// allocation would take the process past that peak: peak memory is what it
/// would be without it. The block given back is the smallest that settles
/// the excess, so that a few bytes over the peak in a loop's step cost a
/// step's block, not a call's large result.
// sched_getaffinity and CPU_COUNT (the cores of the default thread count).
#define _GNU_SOURCE
#include "runtime/rt_internal.h"

#include <sched.h>
#include <unistd.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define RT_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (size_t)(n))
#define RT_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (size_t)(n))
#else
#define RT_POISON(p, n) ((void)(p), (void)(n))
#define RT_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

/// Smaller blocks go straight back to the allocator (malloc keeps those).
#define RT_CACHE_MIN_BYTES (4 * 1024)
/// Sizes cached at once; a new size past these gives back the blocks of
/// the least recently cached size.
#define RT_CACHE_SIZES 64

/// The cached blocks of one size: a stack linked through the blocks' first
/// bytes (the rest of a cached block is poisoned under AddressSanitizer).
typedef struct rt_cached_size {
  int64_t size; // 0: an unused entry
  void *top;
  int64_t count;  // blocks in the stack
  uint64_t stamp; // when a block was last cached: the least recent goes first
} rt_cached_size_t;

struct eddy_rt_ctx {
  eddy_rt_allocator_t allocator;
  _Atomic int64_t limit;  // 0 = unlimited
  _Atomic int64_t in_use; // bytes handed out and not yet freed
  _Atomic int64_t peak;
  _Atomic int64_t max_iterations; // per loop and call; 0 = unlimited
  _Atomic int64_t timeout_ms;     // per call; 0 = unlimited
  _Atomic int cancelled;
  _Atomic bool flush_denormals; // compiled code's floating-point mode
  eddy_rt_pool_t *pool; // NULL when single-threaded
  pthread_mutex_t cache_lock; // guards the fields below
  bool cache_on;
  rt_cached_size_t cache[RT_CACHE_SIZES];
  int64_t cached_bytes;
  uint64_t clock;
};

/// Takes the top block of entry c, addressable again (cache_lock held).
static void *cache_pop(eddy_rt_ctx_t *ctx, rt_cached_size_t *c) {
  void *p = c->top;
  int64_t size = c->size;
  c->top = *(void **)p;
  c->count--;
  ctx->cached_bytes -= size;
  if (!c->top)
    c->size = 0;
  RT_UNPOISON(p, size);
  return p;
}

/// Gives one block of entry c back to the allocator (cache_lock held).
static void cache_drop_one(eddy_rt_ctx_t *ctx, rt_cached_size_t *c) {
  int64_t size = c->size;
  void *p = cache_pop(ctx, c);
  ctx->allocator.free(ctx->allocator.user, p, (size_t)size);
}

/// The entry of the least recently cached size, or NULL (cache_lock held).
static rt_cached_size_t *cache_oldest(eddy_rt_ctx_t *ctx) {
  rt_cached_size_t *o = NULL;
  for (int i = 0; i < RT_CACHE_SIZES; i++) {
    rt_cached_size_t *c = &ctx->cache[i];
    if (c->size && (!o || c->stamp < o->stamp))
      o = c;
  }
  return o;
}

/// The entry to give blocks back from when the cache holds `over` bytes
/// too many (cache_lock held): of the sizes whose blocks cover `over`, the
/// one that gives back the fewest bytes, so that the blocks that cost most
/// to fault in again stay (a loop's small per-step blocks go before a
/// call's large results); the largest size when no size covers it.
static rt_cached_size_t *cache_victim(eddy_rt_ctx_t *ctx, int64_t over) {
  rt_cached_size_t *fit = NULL, *largest = NULL;
  int64_t fit_bytes = 0;
  for (int i = 0; i < RT_CACHE_SIZES; i++) {
    rt_cached_size_t *c = &ctx->cache[i];
    if (!c->size)
      continue;
    int64_t blocks = (over + c->size - 1) / c->size;
    if (blocks <= c->count && (!fit || blocks * c->size < fit_bytes)) {
      fit = c;
      fit_bytes = blocks * c->size;
    }
    if (!largest || c->size > largest->size)
      largest = c;
  }
  return fit ? fit : largest;
}

/// The entry holding blocks of size (size 0: an unused entry), or NULL
/// (cache_lock held).
static rt_cached_size_t *cache_find(eddy_rt_ctx_t *ctx, int64_t size) {
  for (int i = 0; i < RT_CACHE_SIZES; i++)
    if (ctx->cache[i].size == size)
      return &ctx->cache[i];
  return NULL;
}

/// A cached block of exactly size bytes, or NULL. When there is none, gives
/// back cached blocks (cache_victim's) until the bytes in use
/// (in_use, this block included) and the cached ones together are within
/// the context's peak use: a fresh block is the only thing that adds to what
/// the context holds (caching or reusing a block moves bytes between in use
/// and cached).
static void *cache_take(eddy_rt_ctx_t *ctx, int64_t size, int64_t in_use) {
  if (size < RT_CACHE_MIN_BYTES)
    return NULL;
  pthread_mutex_lock(&ctx->cache_lock);
  void *p = NULL;
  rt_cached_size_t *c = cache_find(ctx, size);
  if (c) {
    p = cache_pop(ctx, c);
  } else {
    int64_t peak = atomic_load(&ctx->peak);
    while (ctx->cached_bytes && in_use + ctx->cached_bytes > peak)
      cache_drop_one(ctx, cache_victim(ctx, in_use + ctx->cached_bytes - peak));
  }
  pthread_mutex_unlock(&ctx->cache_lock);
  return p;
}

/// Keeps a freed block; false when it goes back to the allocator.
static bool cache_put(eddy_rt_ctx_t *ctx, void *ptr, int64_t size) {
  if (size < RT_CACHE_MIN_BYTES)
    return false;
  pthread_mutex_lock(&ctx->cache_lock);
  bool kept = false;
  if (ctx->cache_on) {
    rt_cached_size_t *c = cache_find(ctx, size);
    if (!c)
      c = cache_find(ctx, 0);
    if (!c) {
      // Every entry holds another size: the least recent one's blocks go.
      c = cache_oldest(ctx);
      while (c->size)
        cache_drop_one(ctx, c);
    }
    c->size = size;
    *(void **)ptr = c->top;
    c->top = ptr;
    c->count++;
    c->stamp = ++ctx->clock;
    ctx->cached_bytes += size;
    RT_POISON((char *)ptr + sizeof(void *), size - (int64_t)sizeof(void *));
    kept = true;
  }
  pthread_mutex_unlock(&ctx->cache_lock);
  return kept;
}

void eddy_rt_ctx_trim(eddy_rt_ctx_t *ctx) {
  pthread_mutex_lock(&ctx->cache_lock);
  for (int i = 0; i < RT_CACHE_SIZES; i++)
    while (ctx->cache[i].size)
      cache_drop_one(ctx, &ctx->cache[i]);
  pthread_mutex_unlock(&ctx->cache_lock);
}

void eddy_rt_ctx_set_block_cache(eddy_rt_ctx_t *ctx, bool on) {
  pthread_mutex_lock(&ctx->cache_lock);
  ctx->cache_on = on;
  pthread_mutex_unlock(&ctx->cache_lock);
  if (!on)
    eddy_rt_ctx_trim(ctx);
}

int64_t eddy_rt_ctx_cached_bytes(const eddy_rt_ctx_t *ctx) {
  eddy_rt_ctx_t *c = (eddy_rt_ctx_t *)ctx;
  pthread_mutex_lock(&c->cache_lock);
  int64_t n = c->cached_bytes;
  pthread_mutex_unlock(&c->cache_lock);
  return n;
}

// The buffer header sits in front of the data in one allocation, padded so
// that the data keeps the allocation's alignment.
struct eddy_rt_buffer {
  _Atomic int64_t refs;
  eddy_rt_ctx_t *ctx;
  int64_t size;       // data bytes
  int64_t alloc_size; // header + data (borrowed: the header), as allocated
  void *data;         // after the header, or the borrowed memory
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
  o.num_threads = 0;
  return o;
}

/// The threads of a context whose options ask for 0: EDDY_NUM_THREADS, else
/// the cores this process may run on.
static int32_t rt_default_threads(void) {
  const char *env = getenv("EDDY_NUM_THREADS");
  if (env && *env) {
    char *end;
    long v = strtol(env, &end, 10);
    if (*end == '\0' && v > 0 && v <= 1024)
      return (int32_t)v;
  }
#if defined(__linux__)
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    int c = CPU_COUNT(&set);
    if (c > 0)
      return c;
  }
#endif
  long c = sysconf(_SC_NPROCESSORS_ONLN);
  return c > 0 && c <= 1024 ? (int32_t)c : 1;
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
  if (pthread_mutex_init(&ctx->cache_lock, NULL) != 0) {
    free(ctx);
    return rt_err(EDDY_RT_ERR_RESOURCE, "eddy_rt_ctx_create",
                  "cannot create a mutex");
  }
  ctx->cache_on = getenv("EDDY_NO_BLOCK_CACHE") == NULL;
  atomic_init(&ctx->flush_denormals, getenv("EDDY_KEEP_DENORMALS") == NULL);
  if (o.num_threads <= 0)
    o.num_threads = rt_default_threads();
  if (o.num_threads > 1) {
    eddy_rt_status_t st = eddy_rt_pool_create(o.num_threads, &ctx->pool);
    if (st) {
      pthread_mutex_destroy(&ctx->cache_lock);
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
  eddy_rt_ctx_trim(ctx);
  pthread_mutex_destroy(&ctx->cache_lock);
  free(ctx);
}

void eddy_rt_ctx_set_memory_limit(eddy_rt_ctx_t *ctx, int64_t bytes) {
  atomic_store(&ctx->limit, bytes < 0 ? 0 : bytes);
}

int64_t eddy_rt_ctx_memory_limit(const eddy_rt_ctx_t *ctx) {
  return atomic_load(&((eddy_rt_ctx_t *)ctx)->limit);
}

void eddy_rt_ctx_set_max_iterations(eddy_rt_ctx_t *ctx, int64_t n) {
  atomic_store(&ctx->max_iterations, n < 0 ? 0 : n);
}

int64_t eddy_rt_ctx_max_iterations(const eddy_rt_ctx_t *ctx) {
  return atomic_load(&((eddy_rt_ctx_t *)ctx)->max_iterations);
}

void eddy_rt_ctx_set_timeout_ms(eddy_rt_ctx_t *ctx, int64_t ms) {
  atomic_store(&ctx->timeout_ms, ms < 0 ? 0 : ms);
}

int64_t eddy_rt_ctx_timeout_ms(const eddy_rt_ctx_t *ctx) {
  return atomic_load(&((eddy_rt_ctx_t *)ctx)->timeout_ms);
}

void eddy_rt_ctx_cancel(eddy_rt_ctx_t *ctx) {
  atomic_store(&ctx->cancelled, 1);
}

void eddy_rt_ctx_clear_cancel(eddy_rt_ctx_t *ctx) {
  atomic_store(&ctx->cancelled, 0);
}

bool eddy_rt_ctx_is_cancelled(const eddy_rt_ctx_t *ctx) {
  return atomic_load(&((eddy_rt_ctx_t *)ctx)->cancelled) != 0;
}

int64_t eddy_rt_ctx_bytes_in_use(const eddy_rt_ctx_t *ctx) {
  return atomic_load(&((eddy_rt_ctx_t *)ctx)->in_use);
}

int64_t eddy_rt_ctx_peak_bytes(const eddy_rt_ctx_t *ctx) {
  return atomic_load(&((eddy_rt_ctx_t *)ctx)->peak);
}

void eddy_rt_ctx_set_flush_denormals(eddy_rt_ctx_t *ctx, bool on) {
  atomic_store(&ctx->flush_denormals, on);
}

bool eddy_rt_ctx_flush_denormals(const eddy_rt_ctx_t *ctx) {
  return atomic_load(&((eddy_rt_ctx_t *)ctx)->flush_denormals);
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
  void *p = cache_take(ctx, size, now);
  if (!p)
    p = ctx->allocator.alloc(ctx->allocator.user, (size_t)size,
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
  if (!cache_put(ctx, ptr, size))
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
  b->data = (char *)b + RT_BUFFER_HEADER;
  *out_buf = b;
  return NULL;
}

eddy_rt_status_t eddy_rt_buffer_borrow(eddy_rt_ctx_t *ctx, void *data,
                                       int64_t size, const char *op,
                                       eddy_rt_buffer_t **out_buf) {
  *out_buf = NULL;
  void *p;
  EDDY_RT_RETURN_IF_ERROR(eddy_rt_alloc(ctx, RT_BUFFER_HEADER, op, &p));
  eddy_rt_buffer_t *b = p;
  atomic_init(&b->refs, 1);
  b->ctx = ctx;
  b->size = size;
  b->alloc_size = RT_BUFFER_HEADER;
  b->data = data;
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

void *eddy_rt_buffer_data(const eddy_rt_buffer_t *buf) { return buf->data; }

int64_t eddy_rt_buffer_size(const eddy_rt_buffer_t *buf) { return buf->size; }

bool eddy_rt_buffer_is_unique(const eddy_rt_buffer_t *buf) {
  // Borrowed memory is never the runtime's to write.
  return buf->data == (const char *)buf + RT_BUFFER_HEADER &&
         atomic_load_explicit(&((eddy_rt_buffer_t *)buf)->refs,
                              memory_order_acquire) == 1;
}

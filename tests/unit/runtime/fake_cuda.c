/// A fake CUDA driver (libcuda) for the tests of runtime/cuda.c, built as a
/// shared library and loaded by libeddyrt through EDDY_CUDA_DRIVER. It
/// implements the driver calls libeddyrt uses over host memory: device
/// memory is malloc'd, copies are memcpy, streams and the context are
/// checked handles. Tests reach its state through the fake_cuda_* functions
/// (with dlsym on the same library).
///
/// Module images are text: "FAKECUBIN" followed by kernel names separated by
/// spaces. Launching kernel "scale2" doubles n floats at a device pointer
/// (params[0] points to the pointer, params[1] to n as int64); other kernels
/// do nothing. Every launch is recorded.
///
/// For running compiled host code (whose images are real fatbins) there are
/// two more knobs: fake_cuda_accept_any_image makes any other image a module
/// that has every kernel asked of it, and fake_cuda_script_predicates makes
/// one-byte device-to-host copies (a loop's predicate) read 1 for a given
/// number of copies and 0 after that, so a compiled loop runs a chosen
/// number of iterations although the fake kernels compute nothing.
///
/// Device and pinned host blocks carry a tag, so that freeing one with the
/// other's call fails. Events complete when recorded,
/// unless fake_cuda_hold_events is on: then they complete only when waited
/// for (cuEventSynchronize, or cuStreamSynchronize of their stream), so
/// tests can see work that waits for them.
///
/// Environment, read by cuInit and cuDeviceGetCount: FAKE_CUDA_INIT_RESULT
/// (cuInit returns it), FAKE_CUDA_DEVICES (the device count, default 1).
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_OUT_OF_MEMORY 2
#define CUDA_ERROR_NOT_INITIALIZED 3
#define CUDA_ERROR_INVALID_DEVICE 101
#define CUDA_ERROR_INVALID_IMAGE 200
#define CUDA_ERROR_INVALID_CONTEXT 201
#define CUDA_ERROR_INVALID_HANDLE 400
#define CUDA_ERROR_NOT_FOUND 500
#define CUDA_ERROR_NOT_READY 600

// The driver API (only what libeddyrt resolves).
CUresult cuGetErrorName(CUresult r, const char **out);
CUresult cuGetErrorString(CUresult r, const char **out);
CUresult cuInit(unsigned flags);
CUresult cuDeviceGetCount(int *count);
CUresult cuDeviceGet(int *dev, int ordinal);
CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev);
CUresult cuCtxSetCurrent(void *ctx);
CUresult cuStreamCreate(void **stream, unsigned flags);
CUresult cuStreamDestroy_v2(void *stream);
CUresult cuStreamSynchronize(void *stream);
CUresult cuStreamWaitEvent(void *stream, void *event, unsigned flags);
CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes);
CUresult cuMemFree_v2(CUdeviceptr dptr);
CUresult cuMemAllocHost_v2(void **pp, size_t bytes);
CUresult cuMemFreeHost(void *p);
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                              void *stream);
CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t n,
                         void *stream);
CUresult cuEventCreate(void **event, unsigned flags);
CUresult cuEventRecord(void *event, void *stream);
CUresult cuEventQuery(void *event);
CUresult cuEventSynchronize(void *event);
CUresult cuEventDestroy_v2(void *event);
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t bytes,
                              void *stream);
CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes,
                              void *stream);
CUresult cuModuleLoadData(void **module, const void *image);
CUresult cuModuleGetFunction(void **fn, void *module, const char *name);
CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned smem,
                        void *stream, void **params, void **extra);

// Test knobs.
/// A counter: "init_calls", "module_loads", "live_allocs", "live_streams",
/// "launches", "copies" (all kinds), "dtod_copies", "htod_copies",
/// "dtoh_copies", "memsets", "live_host_allocs" (pinned), "host_allocs"
/// (pinned, ever), "live_events", "stream_waits"; -1 for an unknown name.
long fake_cuda_stat(const char *what);
/// While on, recorded events stay incomplete until waited for.
void fake_cuda_hold_events(int on);
void fake_cuda_accept_any_image(int on);
void fake_cuda_script_predicates(long true_count);
/// The stream of the last cuMemcpyDtoHAsync_v2.
void *fake_cuda_last_dtoh_stream(void);
/// What the next calls return: launches (until reset to 0), allocations
/// (until reset), the next stream synchronization only (an asynchronous
/// kernel failure).
void fake_cuda_fail_launch(int result);
void fake_cuda_fail_alloc(int result);
void fake_cuda_fail_alloc_host(int result);
void fake_cuda_fail_next_sync(int result);
/// The last launch: kernel name, grid and block dims, shared memory, stream,
/// params and extra as passed.
void fake_cuda_last_launch(char *name, size_t namelen, long long *dims6,
                           unsigned *smem, void **stream, void ***params,
                           void ***extra);

#define STREAM_MAGIC 0x5354524dU

typedef struct fake_stream {
  unsigned magic;
  void *ctx;
} fake_stream_t;

typedef struct fake_func {
  struct fake_func *next;
  char name[64];
} fake_func_t;

typedef struct fake_module {
  struct fake_module *next;
  fake_func_t *funcs;
  int any; // an image not in the fake format: every kernel name exists
} fake_module_t;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_context_token; // the primary context is &g_context_token
static int g_initialized;
static long g_init_calls, g_module_loads, g_live_allocs, g_live_streams,
    g_launches, g_copies, g_dtod, g_htod, g_dtoh, g_memsets, g_live_host,
    g_host_allocs, g_live_events, g_stream_waits;
static int g_fail_launch, g_fail_alloc, g_fail_alloc_host, g_fail_next_sync;
static int g_hold_events, g_any_image;
static long g_true_predicates = -1; // < 0: predicate copies are not scripted
static void *g_last_dtoh_stream;

#define EVENT_MAGIC 0x45564e54U

typedef struct fake_event {
  unsigned magic;
  int done;
  void *stream; // where it was last recorded
  struct fake_event *next, *prev;
} fake_event_t;

static fake_event_t *g_events; // live events (under g_lock)

#define TAG_DEVICE 0x44455643U
#define TAG_HOST 0x484f5354U
/// Blocks start 16 bytes after a tag.
#define TAG_SIZE 16
static fake_module_t *g_modules; // kept until the process ends
static struct {
  char name[64];
  long long dims[6];
  unsigned smem;
  void *stream, **params, **extra;
} g_last;

static _Thread_local void *t_current; // this thread's current context

static const struct {
  CUresult r;
  const char *name, *text;
} k_errors[] = {
    {0, "CUDA_SUCCESS", "no error"},
    {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {200, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered"},
    {719, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
};

static CUresult lookup_error(CUresult r, int which, const char **out) {
  for (size_t i = 0; i < sizeof k_errors / sizeof k_errors[0]; i++) {
    if (k_errors[i].r == r) {
      *out = which ? k_errors[i].text : k_errors[i].name;
      return CUDA_SUCCESS;
    }
  }
  *out = NULL;
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorName(CUresult r, const char **out) {
  return lookup_error(r, 0, out);
}

CUresult cuGetErrorString(CUresult r, const char **out) {
  return lookup_error(r, 1, out);
}

CUresult cuInit(unsigned flags) {
  pthread_mutex_lock(&g_lock);
  g_init_calls++;
  pthread_mutex_unlock(&g_lock);
  const char *e = getenv("FAKE_CUDA_INIT_RESULT");
  if (flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (e && atoi(e) != 0)
    return atoi(e);
  g_initialized = 1;
  return CUDA_SUCCESS;
}

static int device_count(void) {
  const char *e = getenv("FAKE_CUDA_DEVICES");
  return e ? atoi(e) : 1;
}

CUresult cuDeviceGetCount(int *count) {
  if (!g_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  *count = device_count();
  return CUDA_SUCCESS;
}

CUresult cuDeviceGet(int *dev, int ordinal) {
  if (!g_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (ordinal < 0 || ordinal >= device_count())
    return CUDA_ERROR_INVALID_DEVICE;
  *dev = ordinal;
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) {
  if (!g_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (dev < 0 || dev >= device_count())
    return CUDA_ERROR_INVALID_DEVICE;
  *ctx = &g_context_token;
  return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(void *ctx) {
  if (ctx && ctx != &g_context_token)
    return CUDA_ERROR_INVALID_CONTEXT;
  t_current = ctx;
  return CUDA_SUCCESS;
}

/// Calls that need the primary context current on the calling thread.
static CUresult need_context(void) {
  return t_current == &g_context_token ? CUDA_SUCCESS
                                       : CUDA_ERROR_INVALID_CONTEXT;
}

static CUresult check_stream(void *stream) {
  fake_stream_t *s = stream;
  if (!s || s->magic != STREAM_MAGIC)
    return CUDA_ERROR_INVALID_HANDLE;
  return need_context();
}

CUresult cuStreamCreate(void **stream, unsigned flags) {
  CUresult r = need_context();
  if (r)
    return r;
  if (flags > 1)
    return CUDA_ERROR_INVALID_VALUE;
  fake_stream_t *s = malloc(sizeof *s);
  if (!s)
    return CUDA_ERROR_OUT_OF_MEMORY;
  s->magic = STREAM_MAGIC;
  s->ctx = t_current;
  pthread_mutex_lock(&g_lock);
  g_live_streams++;
  pthread_mutex_unlock(&g_lock);
  *stream = s;
  return CUDA_SUCCESS;
}

CUresult cuStreamDestroy_v2(void *stream) {
  CUresult r = check_stream(stream);
  if (r)
    return r;
  fake_stream_t *s = stream;
  s->magic = 0;
  free(s);
  pthread_mutex_lock(&g_lock);
  g_live_streams--;
  pthread_mutex_unlock(&g_lock);
  return CUDA_SUCCESS;
}

CUresult cuStreamSynchronize(void *stream) {
  CUresult r = check_stream(stream);
  if (r)
    return r;
  pthread_mutex_lock(&g_lock);
  r = g_fail_next_sync;
  g_fail_next_sync = 0;
  for (fake_event_t *e = g_events; e; e = e->next)
    if (e->stream == stream)
      e->done = 1;
  pthread_mutex_unlock(&g_lock);
  return r;
}

static char *tagged_alloc(size_t bytes, unsigned tag) {
  char *p = malloc(TAG_SIZE + bytes);
  if (!p)
    return NULL;
  memcpy(p, &tag, sizeof tag);
  return p + TAG_SIZE;
}

/// False when p is not a live block with this tag.
static int tagged_free(char *p, unsigned tag) {
  unsigned have;
  memcpy(&have, p - TAG_SIZE, sizeof have);
  if (have != tag)
    return 0;
  free(p - TAG_SIZE);
  return 1;
}

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes) {
  CUresult r = need_context();
  if (r)
    return r;
  if (bytes == 0)
    return CUDA_ERROR_INVALID_VALUE; // as the real driver
  pthread_mutex_lock(&g_lock);
  r = g_fail_alloc;
  pthread_mutex_unlock(&g_lock);
  if (r)
    return r;
  char *p = tagged_alloc(bytes, TAG_DEVICE);
  if (!p)
    return CUDA_ERROR_OUT_OF_MEMORY;
  pthread_mutex_lock(&g_lock);
  g_live_allocs++;
  pthread_mutex_unlock(&g_lock);
  *dptr = (CUdeviceptr)(uintptr_t)p;
  return CUDA_SUCCESS;
}

CUresult cuMemFree_v2(CUdeviceptr dptr) {
  CUresult r = need_context();
  if (r)
    return r;
  if (!dptr || !tagged_free((char *)(uintptr_t)dptr, TAG_DEVICE))
    return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&g_lock);
  g_live_allocs--;
  pthread_mutex_unlock(&g_lock);
  return CUDA_SUCCESS;
}

CUresult cuMemAllocHost_v2(void **pp, size_t bytes) {
  CUresult r = need_context();
  if (r)
    return r;
  if (bytes == 0)
    return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&g_lock);
  r = g_fail_alloc_host;
  pthread_mutex_unlock(&g_lock);
  if (r)
    return r;
  char *p = tagged_alloc(bytes, TAG_HOST);
  if (!p)
    return CUDA_ERROR_OUT_OF_MEMORY;
  pthread_mutex_lock(&g_lock);
  g_live_host++;
  g_host_allocs++;
  pthread_mutex_unlock(&g_lock);
  *pp = p;
  return CUDA_SUCCESS;
}

CUresult cuMemFreeHost(void *p) {
  CUresult r = need_context();
  if (r)
    return r;
  if (!p || !tagged_free(p, TAG_HOST))
    return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&g_lock);
  g_live_host--;
  pthread_mutex_unlock(&g_lock);
  return CUDA_SUCCESS;
}

static CUresult count_copy(long *kind) {
  pthread_mutex_lock(&g_lock);
  g_copies++;
  (*kind)++;
  pthread_mutex_unlock(&g_lock);
  return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                              void *stream) {
  CUresult r = check_stream(stream);
  if (r)
    return r;
  if (bytes && (!dst || !src))
    return CUDA_ERROR_INVALID_VALUE;
  memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
  return count_copy(&g_dtod);
}

CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t n,
                         void *stream) {
  CUresult r = check_stream(stream);
  if (r)
    return r;
  if (n && !dst)
    return CUDA_ERROR_INVALID_VALUE;
  memset((void *)(uintptr_t)dst, value, n);
  pthread_mutex_lock(&g_lock);
  g_memsets++;
  pthread_mutex_unlock(&g_lock);
  return CUDA_SUCCESS;
}

static CUresult check_event(void *event) {
  fake_event_t *e = event;
  if (!e || e->magic != EVENT_MAGIC)
    return CUDA_ERROR_INVALID_HANDLE;
  return need_context();
}

CUresult cuEventCreate(void **event, unsigned flags) {
  CUresult r = need_context();
  if (r)
    return r;
  if (flags > 0xf)
    return CUDA_ERROR_INVALID_VALUE;
  fake_event_t *e = calloc(1, sizeof *e);
  if (!e)
    return CUDA_ERROR_OUT_OF_MEMORY;
  e->magic = EVENT_MAGIC;
  e->done = 1; // an event never recorded counts as complete
  pthread_mutex_lock(&g_lock);
  e->next = g_events;
  if (g_events)
    g_events->prev = e;
  g_events = e;
  g_live_events++;
  pthread_mutex_unlock(&g_lock);
  *event = e;
  return CUDA_SUCCESS;
}

CUresult cuEventRecord(void *event, void *stream) {
  CUresult r = check_event(event);
  if (!r)
    r = check_stream(stream);
  if (r)
    return r;
  fake_event_t *e = event;
  pthread_mutex_lock(&g_lock);
  e->stream = stream;
  e->done = !g_hold_events;
  pthread_mutex_unlock(&g_lock);
  return CUDA_SUCCESS;
}

CUresult cuEventQuery(void *event) {
  CUresult r = check_event(event);
  if (r)
    return r;
  pthread_mutex_lock(&g_lock);
  int done = ((fake_event_t *)event)->done;
  pthread_mutex_unlock(&g_lock);
  return done ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult cuEventSynchronize(void *event) {
  CUresult r = check_event(event);
  if (r)
    return r;
  pthread_mutex_lock(&g_lock);
  ((fake_event_t *)event)->done = 1;
  pthread_mutex_unlock(&g_lock);
  return CUDA_SUCCESS;
}

CUresult cuEventDestroy_v2(void *event) {
  CUresult r = check_event(event);
  if (r)
    return r;
  fake_event_t *e = event;
  pthread_mutex_lock(&g_lock);
  if (e->prev)
    e->prev->next = e->next;
  else
    g_events = e->next;
  if (e->next)
    e->next->prev = e->prev;
  g_live_events--;
  pthread_mutex_unlock(&g_lock);
  e->magic = 0;
  free(e);
  return CUDA_SUCCESS;
}

CUresult cuStreamWaitEvent(void *stream, void *event, unsigned flags) {
  CUresult r = check_stream(stream);
  if (!r)
    r = check_event(event);
  if (r)
    return r;
  if (flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  // Work is done when it is issued here, so the wait is over at once: the
  // event's work is complete as far as this stream is concerned.
  pthread_mutex_lock(&g_lock);
  g_stream_waits++;
  pthread_mutex_unlock(&g_lock);
  return CUDA_SUCCESS;
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t bytes,
                              void *stream) {
  CUresult r = check_stream(stream);
  if (r)
    return r;
  memcpy((void *)(uintptr_t)dst, src, bytes);
  return count_copy(&g_htod);
}

CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes,
                              void *stream) {
  CUresult r = check_stream(stream);
  if (r)
    return r;
  memcpy(dst, (const void *)(uintptr_t)src, bytes);
  pthread_mutex_lock(&g_lock);
  if (bytes == 1 && g_true_predicates >= 0) {
    *(unsigned char *)dst = g_true_predicates > 0;
    if (g_true_predicates > 0)
      g_true_predicates--;
  }
  g_last_dtoh_stream = stream;
  pthread_mutex_unlock(&g_lock);
  return count_copy(&g_dtoh);
}

CUresult cuModuleLoadData(void **module, const void *image) {
  CUresult r = need_context();
  if (r)
    return r;
  const char *s = image;
  pthread_mutex_lock(&g_lock);
  int any = g_any_image;
  pthread_mutex_unlock(&g_lock);
  bool fake = strncmp(s, "FAKECUBIN", 9) == 0;
  if (!fake && !any)
    return CUDA_ERROR_INVALID_IMAGE;
  fake_module_t *m = calloc(1, sizeof *m);
  if (!m)
    return CUDA_ERROR_OUT_OF_MEMORY;
  m->any = !fake;
  s = fake ? s + 9 : "";
  while (*s) {
    while (*s == ' ')
      s++;
    size_t n = strcspn(s, " ");
    if (n == 0)
      break;
    fake_func_t *f = calloc(1, sizeof *f);
    if (!f || n >= sizeof f->name) {
      free(f);
      while (m->funcs) {
        f = m->funcs;
        m->funcs = f->next;
        free(f);
      }
      free(m);
      return CUDA_ERROR_INVALID_IMAGE;
    }
    memcpy(f->name, s, n);
    f->next = m->funcs;
    m->funcs = f;
    s += n;
  }
  pthread_mutex_lock(&g_lock);
  m->next = g_modules;
  g_modules = m;
  g_module_loads++;
  pthread_mutex_unlock(&g_lock);
  *module = m;
  return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(void **fn, void *module, const char *name) {
  CUresult r = need_context();
  if (r)
    return r;
  fake_module_t *m = module;
  if (!m)
    return CUDA_ERROR_INVALID_HANDLE;
  pthread_mutex_lock(&g_lock);
  fake_func_t *f = m->funcs;
  while (f && strcmp(f->name, name) != 0)
    f = f->next;
  if (!f && m->any && (f = calloc(1, sizeof *f))) {
    snprintf(f->name, sizeof f->name, "%s", name);
    f->next = m->funcs;
    m->funcs = f;
  }
  pthread_mutex_unlock(&g_lock);
  if (!f)
    return m->any ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_NOT_FOUND;
  *fn = f;
  return CUDA_SUCCESS;
}

CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned smem,
                        void *stream, void **params, void **extra) {
  CUresult r = check_stream(stream);
  if (r)
    return r;
  fake_func_t *f = fn;
  if (!f)
    return CUDA_ERROR_INVALID_HANDLE;
  if (!gx || !gy || !gz || !bx || !by || !bz || bx * by * bz > 1024)
    return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&g_lock);
  r = g_fail_launch;
  if (!r) {
    g_launches++;
    memcpy(g_last.name, f->name, sizeof g_last.name);
    long long d[6] = {gx, gy, gz, bx, by, bz};
    memcpy(g_last.dims, d, sizeof d);
    g_last.smem = smem;
    g_last.stream = stream;
    g_last.params = params;
    g_last.extra = extra;
  }
  pthread_mutex_unlock(&g_lock);
  if (r)
    return r;
  if (strcmp(f->name, "scale2") == 0) {
    float *x = *(float **)params[0];
    int64_t n = *(const int64_t *)params[1];
    for (int64_t i = 0; i < n; i++)
      x[i] *= 2.0f;
  }
  return CUDA_SUCCESS;
}

long fake_cuda_stat(const char *what) {
  pthread_mutex_lock(&g_lock);
  long v = -1;
  if (strcmp(what, "init_calls") == 0)
    v = g_init_calls;
  else if (strcmp(what, "module_loads") == 0)
    v = g_module_loads;
  else if (strcmp(what, "live_allocs") == 0)
    v = g_live_allocs;
  else if (strcmp(what, "live_streams") == 0)
    v = g_live_streams;
  else if (strcmp(what, "launches") == 0)
    v = g_launches;
  else if (strcmp(what, "copies") == 0)
    v = g_copies;
  else if (strcmp(what, "dtod_copies") == 0)
    v = g_dtod;
  else if (strcmp(what, "htod_copies") == 0)
    v = g_htod;
  else if (strcmp(what, "dtoh_copies") == 0)
    v = g_dtoh;
  else if (strcmp(what, "memsets") == 0)
    v = g_memsets;
  else if (strcmp(what, "live_host_allocs") == 0)
    v = g_live_host;
  else if (strcmp(what, "host_allocs") == 0)
    v = g_host_allocs;
  else if (strcmp(what, "live_events") == 0)
    v = g_live_events;
  else if (strcmp(what, "stream_waits") == 0)
    v = g_stream_waits;
  pthread_mutex_unlock(&g_lock);
  return v;
}

void fake_cuda_fail_launch(int result) {
  pthread_mutex_lock(&g_lock);
  g_fail_launch = result;
  pthread_mutex_unlock(&g_lock);
}

void fake_cuda_fail_alloc(int result) {
  pthread_mutex_lock(&g_lock);
  g_fail_alloc = result;
  pthread_mutex_unlock(&g_lock);
}

void fake_cuda_fail_alloc_host(int result) {
  pthread_mutex_lock(&g_lock);
  g_fail_alloc_host = result;
  pthread_mutex_unlock(&g_lock);
}

void fake_cuda_accept_any_image(int on) {
  pthread_mutex_lock(&g_lock);
  g_any_image = on;
  pthread_mutex_unlock(&g_lock);
}

void fake_cuda_script_predicates(long true_count) {
  pthread_mutex_lock(&g_lock);
  g_true_predicates = true_count;
  pthread_mutex_unlock(&g_lock);
}

void fake_cuda_hold_events(int on) {
  pthread_mutex_lock(&g_lock);
  g_hold_events = on;
  pthread_mutex_unlock(&g_lock);
}

void *fake_cuda_last_dtoh_stream(void) {
  pthread_mutex_lock(&g_lock);
  void *s = g_last_dtoh_stream;
  pthread_mutex_unlock(&g_lock);
  return s;
}

void fake_cuda_fail_next_sync(int result) {
  pthread_mutex_lock(&g_lock);
  g_fail_next_sync = result;
  pthread_mutex_unlock(&g_lock);
}

void fake_cuda_last_launch(char *name, size_t namelen, long long *dims6,
                           unsigned *smem, void **stream, void ***params,
                           void ***extra) {
  pthread_mutex_lock(&g_lock);
  if (namelen) {
    strncpy(name, g_last.name, namelen - 1);
    name[namelen - 1] = '\0';
  }
  memcpy(dims6, g_last.dims, sizeof g_last.dims);
  *smem = g_last.smem;
  *stream = g_last.stream;
  *params = g_last.params;
  *extra = g_last.extra;
  pthread_mutex_unlock(&g_lock);
}

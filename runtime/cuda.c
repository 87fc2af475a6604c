/// The CUDA layer of libeddyrt: everything code compiled with
/// `--target=cuda` does with the CUDA driver and cuBLAS. Neither is linked:
/// both are loaded with dlopen on first use, so a program built for CUDA
/// links and starts on a machine without a GPU and gets a status that says
/// so. The few driver and cuBLAS types needed are declared here and, for
/// the driver, in runtime/cuda_internal.h, shared with runtime/cuda_list.c
/// (CUresult and cublasStatus_t are ints, handles opaque pointers,
/// CUdeviceptr a 64-bit unsigned integer).
///
/// State: the driver, the device and its primary context are process-wide
/// (loaded once, under pthread_once); each thread has its own stream, its
/// own cuBLAS handle and its own error record (the first failure since
/// eddy_rt_entry_cuda_begin, reported by eddy_rt_entry_cuda_end). Modules
/// and their functions are cached for the life of the process.
#include "runtime/cuda_internal.h"
#include "runtime/eddyrt.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/// ---- Driver and cuBLAS declarations ----------------------------------------

typedef int cublas_status; // cublasStatus_t

#define CUBLAS_OP_N 0
#define CUBLAS_OP_T 1
#define CUBLAS_STATUS_ALLOC_FAILED 3
// cublasMath_t: FP32 arithmetic, or TF32 tensor-core products.
#define CUBLAS_DEFAULT_MATH 0
#define CUBLAS_TF32_TENSOR_OP_MATH 3

rt_cuda_driver_t rt_cu; // declared in runtime/cuda_internal.h

static struct {
  cublas_status (*create)(void **handle);
  cublas_status (*destroy)(void *handle);
  cublas_status (*set_stream)(void *handle, void *stream);
  cublas_status (*set_math_mode)(void *handle, int mode);
  cublas_status (*sgemm)(void *handle, int transa, int transb, int m, int n,
                         int k, const float *alpha, const float *a, int lda,
                         const float *b, int ldb, const float *beta, float *c,
                         int ldc);
} blas;

typedef struct sym {
  const char *name;
  void *slot; // the address of a function pointer in cu or blas
} sym_t;

/// Resolves every symbol of syms into its slot; the first missing name on
/// failure.
static const char *resolve(void *lib, const sym_t *syms, size_t n) {
  for (size_t i = 0; i < n; i++) {
    void *p = dlsym(lib, syms[i].name);
    if (!p)
      return syms[i].name;
    // POSIX guarantees that a data pointer from dlsym holds a function.
    memcpy(syms[i].slot, &p, sizeof p);
  }
  return NULL;
}

/// ---- Process state ---------------------------------------------------------

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static bool g_ok;                  // the driver, device and context are ready
static char g_fail[RT_CUDA_MSG];   // why not ("no CUDA device: ...")
static void *g_primary;            // the device's primary context
static pthread_key_t g_thread_key; // runs thread_exit for threads with a stream

static pthread_once_t g_blas_once = PTHREAD_ONCE_INIT;
static bool g_blas_ok;
static char g_blas_fail[RT_CUDA_MSG];

/// A kernel of a cached module; what mgpuModuleGetFunction returns.
typedef struct cuda_func {
  struct cuda_func *next;
  void *fn; // CUfunction
  char name[];
} cuda_func_t;

/// A loaded module; what mgpuModuleLoad returns. The cache key is the
/// image's address, size and bytes: a JIT-compiled program's image may come
/// back at the address of an earlier program's that was freed.
typedef struct cuda_module {
  struct cuda_module *next;
  const void *data; // the image it was loaded from
  size_t size;
  void *copy;       // the image's bytes when loaded (compared on a hit)
  void *module;     // CUmodule
  cuda_func_t *funcs;
} cuda_module_t;

static pthread_mutex_t g_modules_lock = PTHREAD_MUTEX_INITIALIZER;
static cuda_module_t *g_modules;

/// ---- Thread state ----------------------------------------------------------

static _Thread_local rt_cuda_thread_t t_cuda;

rt_cuda_thread_t *rt_cuda_thread(void) { return &t_cuda; }

bool rt_cuda_context_for_free(void) {
  if (!g_ok)
    return false;
  if (!t_cuda.stream)
    rt_cu.ctx_set_current(g_primary);
  return true;
}

const char *rt_cuda_error_text(cu_result r, char *buf, size_t size) {
  const char *name = NULL, *str = NULL;
  if (rt_cu.get_error_name && rt_cu.get_error_name(r, &name) != CU_SUCCESS)
    name = NULL;
  if (rt_cu.get_error_string && rt_cu.get_error_string(r, &str) != CU_SUCCESS)
    str = NULL;
  if (name && str)
    snprintf(buf, size, "%s (%s)", name, str);
  else if (name)
    snprintf(buf, size, "%s", name);
  else
    snprintf(buf, size, "CUDA error %d", r);
  return buf;
}

static const char *cublas_status_name(cublas_status s) {
  switch (s) {
  case 0:
    return "CUBLAS_STATUS_SUCCESS";
  case 1:
    return "CUBLAS_STATUS_NOT_INITIALIZED";
  case 3:
    return "CUBLAS_STATUS_ALLOC_FAILED";
  case 7:
    return "CUBLAS_STATUS_INVALID_VALUE";
  case 8:
    return "CUBLAS_STATUS_ARCH_MISMATCH";
  case 11:
    return "CUBLAS_STATUS_MAPPING_ERROR";
  case 13:
    return "CUBLAS_STATUS_EXECUTION_FAILED";
  case 14:
    return "CUBLAS_STATUS_INTERNAL_ERROR";
  case 15:
    return "CUBLAS_STATUS_NOT_SUPPORTED";
  case 16:
    return "CUBLAS_STATUS_LICENSE_ERROR";
  default:
    return NULL;
  }
}

/// "CUBLAS_STATUS_EXECUTION_FAILED" (or "cuBLAS status 42") into buf.
static const char *cublas_status_text(cublas_status s, char *buf, size_t size) {
  const char *name = cublas_status_name(s);
  if (name)
    snprintf(buf, size, "%s", name);
  else
    snprintf(buf, size, "cuBLAS status %d", s);
  return buf;
}

static void write_err(char *err, size_t errlen, const char *fmt, ...)
    EDDY_RT_PRINTF(3, 4);

static void write_err(char *err, size_t errlen, const char *fmt, ...) {
  if (!err || !errlen)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
}

void rt_cuda_record(int32_t code, const char *fmt, ...) {
  rt_cuda_thread_t *t = &t_cuda;
  if (t->code)
    return;
  t->code = code;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(t->msg, sizeof t->msg, fmt, ap);
  va_end(ap);
}

void rt_cuda_record_cu(const char *call, const char *what, cu_result r) {
  char text[256];
  rt_cuda_error_text(r, text, sizeof text);
  rt_cuda_record(r == CU_ERROR_OUT_OF_MEMORY ? EDDY_RT_ERR_RESOURCE
                                             : EDDY_RT_ERR_INTERNAL,
                 "%s%s%s%s: %s", call, what ? "(" : "", what ? what : "",
                 what ? ")" : "", text);
}

/// A driver call that waits for the stream reports failures of earlier
/// asynchronous work too: name the last kernel launched.
void rt_cuda_record_sync(const char *call, cu_result r) {
  char text[256];
  rt_cuda_error_text(r, text, sizeof text);
  const char *k = t_cuda.last_kernel;
  rt_cuda_record(r == CU_ERROR_OUT_OF_MEMORY ? EDDY_RT_ERR_RESOURCE
                                             : EDDY_RT_ERR_INTERNAL,
                 "%s%s%s%s: %s", call, k ? " after cuLaunchKernel(" : "",
                 k ? k : "", k ? ")" : "", text);
}

rt_cuda_thread_t *rt_cuda_active(void) {
  rt_cuda_thread_t *t = &t_cuda;
  return t->stream && !t->code ? t : NULL;
}

/// pthread key destructor: a thread that had a stream exits.
static void thread_exit(void *arg) {
  rt_cuda_thread_t *t = arg;
  rt_cu.ctx_set_current(g_primary);
  if (t->stream)
    rt_cuda_list_thread_exit(t);
  if (t->blas)
    blas.destroy(t->blas);
  if (t->stream)
    rt_cu.stream_destroy(t->stream);
  t->blas = NULL;
  t->stream = NULL;
}

/// ---- Loading ---------------------------------------------------------------

static void load_fail(const char *fmt, ...) EDDY_RT_PRINTF(1, 2);

static void load_fail(const char *fmt, ...) {
  int n = snprintf(g_fail, sizeof g_fail, "no CUDA device: ");
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_fail + n, sizeof g_fail - (size_t)n, fmt, ap);
  va_end(ap);
}

/// Once per process: the driver, the device, its primary context.
static void load_driver(void) {
  const char *path = getenv("EDDY_CUDA_DRIVER");
  if (!path || !*path)
    path = "libcuda.so.1";
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    load_fail("cannot load %s: %s", path, why ? why : "unknown reason");
    return;
  }
  const sym_t syms[] = {
      {"cuGetErrorName", &rt_cu.get_error_name},
      {"cuGetErrorString", &rt_cu.get_error_string},
      {"cuInit", &rt_cu.init},
      {"cuDeviceGetCount", &rt_cu.device_get_count},
      {"cuDeviceGet", &rt_cu.device_get},
      {"cuDevicePrimaryCtxRetain", &rt_cu.primary_ctx_retain},
      {"cuCtxSetCurrent", &rt_cu.ctx_set_current},
      {"cuStreamCreate", &rt_cu.stream_create},
      {"cuStreamDestroy_v2", &rt_cu.stream_destroy},
      {"cuStreamSynchronize", &rt_cu.stream_synchronize},
      {"cuStreamWaitEvent", &rt_cu.stream_wait_event},
      {"cuMemAlloc_v2", &rt_cu.mem_alloc},
      {"cuMemFree_v2", &rt_cu.mem_free},
      {"cuMemAllocHost_v2", &rt_cu.mem_alloc_host},
      {"cuMemFreeHost", &rt_cu.mem_free_host},
      {"cuMemcpyHtoDAsync_v2", &rt_cu.memcpy_htod_async},
      {"cuMemcpyDtoHAsync_v2", &rt_cu.memcpy_dtoh_async},
      {"cuMemcpyDtoDAsync_v2", &rt_cu.memcpy_dtod_async},
      {"cuMemsetD8Async", &rt_cu.memset_d8_async},
      {"cuEventCreate", &rt_cu.event_create},
      {"cuEventRecord", &rt_cu.event_record},
      {"cuEventQuery", &rt_cu.event_query},
      {"cuEventSynchronize", &rt_cu.event_synchronize},
      {"cuEventDestroy_v2", &rt_cu.event_destroy},
      {"cuModuleLoadData", &rt_cu.module_load_data},
      {"cuModuleGetFunction", &rt_cu.module_get_function},
      {"cuLaunchKernel", &rt_cu.launch_kernel},
  };
  const char *missing = resolve(lib, syms, sizeof syms / sizeof syms[0]);
  if (missing) {
    load_fail("%s has no %s (a driver older than CUDA 11?)", path, missing);
    memset(&rt_cu, 0, sizeof rt_cu);
    dlclose(lib);
    return;
  }
  // From here on the library stays loaded (its error names are used).
  char text[256];
  cu_result r = rt_cu.init(0);
  if (r != CU_SUCCESS) {
    load_fail("cuInit failed: %s", rt_cuda_error_text(r, text, sizeof text));
    return;
  }
  int ordinal = 0;
  const char *dev_env = getenv("EDDY_CUDA_DEVICE");
  if (dev_env && *dev_env) {
    char *end;
    long v = strtol(dev_env, &end, 10);
    if (*end || v < 0 || v > INT_MAX) {
      load_fail("EDDY_CUDA_DEVICE='%s' is not a device number (0, 1, ...)",
                dev_env);
      return;
    }
    ordinal = (int)v;
  }
  int count = 0;
  r = rt_cu.device_get_count(&count);
  if (r != CU_SUCCESS) {
    load_fail("cuDeviceGetCount failed: %s",
              rt_cuda_error_text(r, text, sizeof text));
    return;
  }
  if (ordinal >= count) {
    if (count == 0)
      load_fail("the driver reports no devices");
    else
      load_fail("device %d (EDDY_CUDA_DEVICE) does not exist: the driver "
                "reports %d device%s",
                ordinal, count, count == 1 ? "" : "s");
    return;
  }
  cu_device dev;
  r = rt_cu.device_get(&dev, ordinal);
  if (r != CU_SUCCESS) {
    load_fail("cuDeviceGet(%d) failed: %s", ordinal,
              rt_cuda_error_text(r, text, sizeof text));
    return;
  }
  r = rt_cu.primary_ctx_retain(&g_primary, dev);
  if (r != CU_SUCCESS) {
    load_fail("cuDevicePrimaryCtxRetain(device %d) failed: %s", ordinal,
              rt_cuda_error_text(r, text, sizeof text));
    return;
  }
  if (pthread_key_create(&g_thread_key, thread_exit) != 0) {
    load_fail("cannot create a thread key");
    return;
  }
  g_ok = true;
}

/// Once per process: cuBLAS.
static void load_cublas(void) {
  static const char *const names[] = {"libcublas.so.13", "libcublas.so.12",
                                      "libcublas.so.11", "libcublas.so"};
  const char *env = getenv("EDDY_CUBLAS");
  void *lib = NULL;
  const char *path = NULL;
  char why[256] = "";
  if (env && *env) {
    path = env;
    lib = dlopen(env, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char *e = dlerror();
      snprintf(g_blas_fail, sizeof g_blas_fail, "cannot load cuBLAS %s: %s",
               env, e ? e : "unknown reason");
      return;
    }
  } else {
    for (size_t i = 0; !lib && i < sizeof names / sizeof names[0]; i++) {
      path = names[i];
      lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
      const char *e = lib ? NULL : dlerror();
      if (e)
        snprintf(why, sizeof why, "%s", e);
    }
    if (!lib) {
      snprintf(g_blas_fail, sizeof g_blas_fail,
               "cannot load cuBLAS (tried libcublas.so.13, .so.12, .so.11, "
               ".so; set EDDY_CUBLAS to its path): %s",
               why);
      return;
    }
  }
  const sym_t syms[] = {
      {"cublasCreate_v2", &blas.create},
      {"cublasDestroy_v2", &blas.destroy},
      {"cublasSetStream_v2", &blas.set_stream},
      {"cublasSetMathMode", &blas.set_math_mode},
      {"cublasSgemm_v2", &blas.sgemm},
  };
  const char *missing = resolve(lib, syms, sizeof syms / sizeof syms[0]);
  if (missing) {
    snprintf(g_blas_fail, sizeof g_blas_fail, "cuBLAS %s has no %s", path,
             missing);
    memset(&blas, 0, sizeof blas);
    dlclose(lib);
    return;
  }
  g_blas_ok = true;
}

/// ---- Entry helpers ---------------------------------------------------------

int32_t eddy_rt_entry_cuda_begin(eddy_rt_ctx_t *rt, char *err, size_t errlen) {
  (void)rt;
  if (err && errlen)
    err[0] = '\0';
  pthread_once(&g_once, load_driver);
  if (!g_ok) {
    write_err(err, errlen, "%s", g_fail);
    return EDDY_RT_ERR_UNSUPPORTED;
  }
  rt_cuda_thread_t *t = &t_cuda;
  t->code = 0;
  t->msg[0] = '\0';
  t->last_kernel = NULL;
  char text[256];
  cu_result r = rt_cu.ctx_set_current(g_primary);
  if (r != CU_SUCCESS) {
    write_err(err, errlen, "cuCtxSetCurrent: %s",
              rt_cuda_error_text(r, text, sizeof text));
    return EDDY_RT_ERR_INTERNAL;
  }
  if (!t->stream) {
    void *s = NULL;
    r = rt_cu.stream_create(&s, CU_STREAM_NON_BLOCKING);
    if (r != CU_SUCCESS) {
      write_err(err, errlen, "cuStreamCreate: %s",
                rt_cuda_error_text(r, text, sizeof text));
      return r == CU_ERROR_OUT_OF_MEMORY ? EDDY_RT_ERR_RESOURCE
                                         : EDDY_RT_ERR_INTERNAL;
    }
    t->stream = s;
    pthread_setspecific(g_thread_key, t);
  }
  return EDDY_RT_OK;
}

void *eddy_rt_entry_cuda_alloc(eddy_rt_ctx_t *rt, int64_t bytes, char *err,
                               size_t errlen) {
  (void)rt;
  rt_cuda_thread_t *t = &t_cuda;
  if (!t->stream) {
    write_err(err, errlen,
              "cannot allocate %" PRId64 " bytes of device memory: "
              "eddy_rt_entry_cuda_begin has not succeeded on this thread",
              bytes);
    return NULL;
  }
  if (t->code) {
    write_err(err, errlen, "%s", t->msg);
    return NULL;
  }
  if (bytes < 0 || (uint64_t)bytes > (uint64_t)SIZE_MAX) {
    write_err(err, errlen,
              "cannot allocate %" PRId64 " bytes of device memory: invalid "
              "size",
              bytes);
    return NULL;
  }
  cu_deviceptr p = 0;
  // One byte for an empty buffer: a non-NULL pointer distinct from others.
  cu_result r = rt_cu.mem_alloc(&p, bytes ? (size_t)bytes : 1);
  if (r != CU_SUCCESS || !p) {
    char text[256];
    write_err(err, errlen,
              "cannot allocate %" PRId64 " bytes of device memory: %s", bytes,
              r != CU_SUCCESS ? rt_cuda_error_text(r, text, sizeof text)
                              : "the driver returned 0");
    return NULL;
  }
  return (void *)(uintptr_t)p;
}

void eddy_rt_entry_cuda_free(eddy_rt_ctx_t *rt, void *dptr, int64_t bytes) {
  (void)rt;
  (void)bytes;
  if (!dptr || !g_ok)
    return;
  // Frees even after an error (cleanup must not leak device memory); a
  // thread that never began needs the context made current first.
  if (!t_cuda.stream)
    rt_cu.ctx_set_current(g_primary);
  cu_result r = rt_cu.mem_free((cu_deviceptr)(uintptr_t)dptr);
  if (r != CU_SUCCESS && t_cuda.stream)
    rt_cuda_record_cu("cuMemFree_v2", NULL, r);
}

void eddy_rt_entry_cuda_to_device(void *dst, const void *src, int64_t bytes) {
  rt_cuda_thread_t *t = rt_cuda_active();
  if (!t || bytes <= 0)
    return;
  cu_result r = rt_cu.memcpy_htod_async((cu_deviceptr)(uintptr_t)dst, src,
                                        (size_t)bytes, t->stream);
  if (r != CU_SUCCESS)
    rt_cuda_record_cu("cuMemcpyHtoDAsync_v2", NULL, r);
}

void eddy_rt_entry_cuda_to_host(void *dst, const void *src, int64_t bytes) {
  if (bytes <= 0)
    return;
  rt_cuda_thread_t *t = rt_cuda_active();
  if (t) {
    cu_result r = rt_cu.memcpy_dtoh_async(dst, (cu_deviceptr)(uintptr_t)src,
                                          (size_t)bytes, t->stream);
    if (r != CU_SUCCESS) {
      rt_cuda_record_sync("cuMemcpyDtoHAsync_v2", r);
    } else {
      r = rt_cu.stream_synchronize(t->stream);
      if (r != CU_SUCCESS)
        rt_cuda_record_sync("cuStreamSynchronize", r);
    }
    if (!t->code)
      return;
  }
  memset(dst, 0, (size_t)bytes);
}

int32_t eddy_rt_entry_cuda_end(eddy_rt_ctx_t *rt, char *err, size_t errlen) {
  (void)rt;
  // err is left as it is when there is nothing to report: it may hold the
  // message of a run-time error the call already recorded (a list helper's),
  // which the caller reports after this.
  rt_cuda_thread_t *t = &t_cuda;
  if (!t->stream) {
    // Reading g_ok is safe only after pthread_once (another thread may be
    // loading the driver right now).
    pthread_once(&g_once, load_driver);
    if (!g_ok) {
      write_err(err, errlen, "%s", g_fail);
      return EDDY_RT_ERR_UNSUPPORTED;
    }
    write_err(err, errlen,
              "eddy_rt_entry_cuda_end: eddy_rt_entry_cuda_begin "
              "has not succeeded on this thread");
    return EDDY_RT_ERR_INTERNAL;
  }
  // Also after an error: the caller frees the buffers next, and work still
  // running may use them.
  cu_result r = rt_cu.stream_synchronize(t->stream);
  if (r != CU_SUCCESS && !t->code)
    rt_cuda_record_sync("cuStreamSynchronize", r);
  // TensorLists: the swap stream's copies, blocks waiting to be freed.
  rt_cuda_list_end(t);
  int32_t code = t->code;
  if (code)
    write_err(err, errlen, "%s", t->msg);
  t->code = 0;
  t->msg[0] = '\0';
  t->last_kernel = NULL;
  return code;
}

/// The thread's cuBLAS handle, bound to its stream; NULL (with the error
/// recorded) when cuBLAS cannot be used.
static void *thread_cublas(rt_cuda_thread_t *t) {
  if (t->blas)
    return t->blas;
  pthread_once(&g_blas_once, load_cublas);
  if (!g_blas_ok) {
    rt_cuda_record(EDDY_RT_ERR_UNSUPPORTED, "%s", g_blas_fail);
    return NULL;
  }
  void *h = NULL;
  char text[64];
  cublas_status s = blas.create(&h);
  if (s != 0) {
    rt_cuda_record(s == CUBLAS_STATUS_ALLOC_FAILED ? EDDY_RT_ERR_RESOURCE
                                                   : EDDY_RT_ERR_INTERNAL,
                   "cublasCreate_v2: %s",
                   cublas_status_text(s, text, sizeof text));
    return NULL;
  }
  s = blas.set_stream(h, t->stream);
  if (s != 0) {
    blas.destroy(h);
    rt_cuda_record(EDDY_RT_ERR_INTERNAL, "cublasSetStream_v2: %s",
                   cublas_status_text(s, text, sizeof text));
    return NULL;
  }
  t->blas = h;
  t->blas_math = CUBLAS_DEFAULT_MATH;
  return h;
}

void eddy_rt_entry_cuda_sgemm(eddy_rt_ctx_t *rt, int32_t flags, int64_t m,
                              int64_t n, int64_t k, const float *a, int64_t lda,
                              const float *b, int64_t ldb, float *c,
                              int64_t ldc) {
  int32_t trans = flags & (EDDY_RT_SGEMM_TRANS_A | EDDY_RT_SGEMM_TRANS_B);
  (void)rt;
  rt_cuda_thread_t *t = rt_cuda_active();
  if (!t || m <= 0 || n <= 0)
    return;
  if (k < 0)
    k = 0;
  // Leading dimensions of operands with no columns may be 0 in row-major
  // form; cuBLAS wants at least 1 (nothing is read through them).
  if (lda < 1)
    lda = 1;
  if (ldb < 1)
    ldb = 1;
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX || lda > INT_MAX ||
      ldb > INT_MAX || ldc > INT_MAX) {
    rt_cuda_record(EDDY_RT_ERR_UNSUPPORTED,
                   "cublasSgemm_v2: sizes m=%" PRId64 " n=%" PRId64
                   " k=%" PRId64 " (lda %" PRId64 ", ldb %" PRId64
                   ", ldc %" PRId64 ") do not fit in int",
                   m, n, k, lda, ldb, ldc);
    return;
  }
  void *h = thread_cublas(t);
  if (!h)
    return;
  int math = (flags & EDDY_RT_SGEMM_TF32) ? CUBLAS_TF32_TENSOR_OP_MATH
                                          : CUBLAS_DEFAULT_MATH;
  if (math != t->blas_math) {
    cublas_status s = blas.set_math_mode(h, math);
    if (s != 0) {
      char text[64];
      rt_cuda_record(EDDY_RT_ERR_INTERNAL, "cublasSetMathMode(%s): %s",
                     math == CUBLAS_DEFAULT_MATH ? "CUBLAS_DEFAULT_MATH"
                                                 : "CUBLAS_TF32_TENSOR_OP_MATH",
                     cublas_status_text(s, text, sizeof text));
      return;
    }
    t->blas_math = math;
  }
  // Row-major C (m x n, row stride ldc) is the column-major n x m matrix
  // C^T with leading dimension ldc, and likewise for A and B. So compute
  // C^T = op(B)^T op(A)^T in column-major form. A row-major B stored k x n
  // (trans & 2 clear) read column-major is already op(B)^T (n x k): no
  // transpose; stored n x k (trans & 2 set) it reads as op(B) itself
  // (k x n), so cuBLAS transposes it. The same holds for A.
  const float one = 1.0f, zero = 0.0f;
  int opb = (trans & 2) ? CUBLAS_OP_T : CUBLAS_OP_N;
  int opa = (trans & 1) ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublas_status s = blas.sgemm(h, opb, opa, (int)n, (int)m, (int)k, &one, b,
                               (int)ldb, a, (int)lda, &zero, c, (int)ldc);
  if (s != 0) {
    char text[64];
    rt_cuda_record(s == CUBLAS_STATUS_ALLOC_FAILED ? EDDY_RT_ERR_RESOURCE
                                                   : EDDY_RT_ERR_INTERNAL,
                   "cublasSgemm_v2(m=%" PRId64 ", n=%" PRId64 ", k=%" PRId64
                   ", trans=%d): %s",
                   m, n, k, (int)trans,
                   cublas_status_text(s, text, sizeof text));
  }
}

/// ---- MLIR's GPU runtime ABI ------------------------------------------------

void *mgpuModuleLoad(void *data, size_t gpuBlobSize) {
  if (!rt_cuda_active() || !data)
    return NULL;
  pthread_mutex_lock(&g_modules_lock);
  cuda_module_t *m = g_modules;
  while (m && !(m->data == data && m->size == gpuBlobSize &&
                memcmp(m->copy, data, gpuBlobSize) == 0))
    m = m->next;
  if (!m) {
    void *mod = NULL;
    cu_result r = rt_cu.module_load_data(&mod, data);
    if (r != CU_SUCCESS) {
      pthread_mutex_unlock(&g_modules_lock);
      rt_cuda_record_cu("cuModuleLoadData", NULL, r);
      return NULL;
    }
    m = calloc(1, sizeof *m);
    void *copy = m ? malloc(gpuBlobSize ? gpuBlobSize : 1) : NULL;
    if (!copy) {
      // The driver's module stays loaded; the next call loads it again.
      free(m);
      pthread_mutex_unlock(&g_modules_lock);
      rt_cuda_record(EDDY_RT_ERR_RESOURCE, "mgpuModuleLoad: out of memory");
      return NULL;
    }
    memcpy(copy, data, gpuBlobSize);
    m->copy = copy;
    m->size = gpuBlobSize;
    m->data = data;
    m->module = mod;
    m->next = g_modules;
    g_modules = m;
  }
  pthread_mutex_unlock(&g_modules_lock);
  return m;
}

void mgpuModuleUnload(void *module) { (void)module; }

void *mgpuModuleGetFunction(void *module, const char *name) {
  cuda_module_t *m = module;
  if (!rt_cuda_active() || !m || !name)
    return NULL;
  pthread_mutex_lock(&g_modules_lock);
  cuda_func_t *f = m->funcs;
  while (f && strcmp(f->name, name) != 0)
    f = f->next;
  if (!f) {
    void *fn = NULL;
    cu_result r = rt_cu.module_get_function(&fn, m->module, name);
    if (r != CU_SUCCESS) {
      pthread_mutex_unlock(&g_modules_lock);
      rt_cuda_record_cu("cuModuleGetFunction", name, r);
      return NULL;
    }
    size_t len = strlen(name);
    f = malloc(sizeof *f + len + 1);
    if (!f) {
      pthread_mutex_unlock(&g_modules_lock);
      rt_cuda_record(EDDY_RT_ERR_RESOURCE,
                     "mgpuModuleGetFunction(%s): out of memory", name);
      return NULL;
    }
    f->fn = fn;
    memcpy(f->name, name, len + 1);
    f->next = m->funcs;
    m->funcs = f;
  }
  pthread_mutex_unlock(&g_modules_lock);
  return f;
}

void *mgpuStreamCreate(void) { return t_cuda.stream; }

void mgpuStreamDestroy(void *stream) { (void)stream; }

void mgpuStreamSynchronize(void *stream) { (void)stream; }

void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, void *stream,
                      void **params, void **extra, size_t paramsCount) {
  (void)paramsCount;
  rt_cuda_thread_t *t = rt_cuda_active();
  cuda_func_t *f = function;
  if (!t || !f)
    return;
  intptr_t g[3] = {gridX, gridY, gridZ}, bl[3] = {blockX, blockY, blockZ};
  bool bad = smem < 0, empty = false;
  for (int i = 0; i < 3; i++) {
    if (g[i] == 0)
      empty = true;
    if (g[i] < 0 || (uintmax_t)g[i] > UINT_MAX || bl[i] <= 0 ||
        (uintmax_t)bl[i] > UINT_MAX)
      bad = true;
  }
  if (bad) {
    rt_cuda_record(EDDY_RT_ERR_INTERNAL,
                   "cuLaunchKernel(%s): grid %" PRIdPTR "x%" PRIdPTR
                   "x%" PRIdPTR ", block %" PRIdPTR "x%" PRIdPTR "x%" PRIdPTR
                   ", shared memory %" PRId32 " out of range",
                   f->name, gridX, gridY, gridZ, blockX, blockY, blockZ, smem);
    return;
  }
  // A grid with no blocks runs nothing (the driver would reject it).
  if (empty)
    return;
  cu_result r = rt_cu.launch_kernel(
      f->fn, (unsigned)gridX, (unsigned)gridY, (unsigned)gridZ,
      (unsigned)blockX, (unsigned)blockY, (unsigned)blockZ, (unsigned)smem,
      stream ? stream : t->stream, params, extra);
  if (r != CU_SUCCESS)
    rt_cuda_record_cu("cuLaunchKernel", f->name, r);
  else
    t->last_kernel = f->name;
}

/// A fake cuBLAS for the tests of runtime/cuda.c, built as a shared library
/// and loaded by libeddyrt through EDDY_CUBLAS. Device pointers of the fake
/// driver (tests/unit/runtime/fake_cuda.c) are host pointers, so sgemm runs
/// on the host, exactly as cuBLAS defines it: column-major,
/// C = alpha op(A) op(B) + beta C with op(A) m x k, op(B) k x n, C m x n, and
/// C not read when beta is 0. It checks the arguments as cuBLAS does
/// (CUBLAS_STATUS_INVALID_VALUE for bad sizes or leading dimensions), which
/// is how the tests check libeddyrt's row-major mapping. Unlike cuBLAS it
/// also refuses a handle with no stream bound, so that the tests see the
/// binding.
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef int cublasStatus_t;

#define CUBLAS_STATUS_SUCCESS 0
#define CUBLAS_STATUS_NOT_INITIALIZED 1
#define CUBLAS_STATUS_ALLOC_FAILED 3
#define CUBLAS_STATUS_INVALID_VALUE 7

cublasStatus_t cublasCreate_v2(void **handle);
cublasStatus_t cublasDestroy_v2(void *handle);
cublasStatus_t cublasSetStream_v2(void *handle, void *stream);
cublasStatus_t cublasSetMathMode(void *handle, int mode);
cublasStatus_t cublasSgemm_v2(void *handle, int transa, int transb, int m,
                              int n, int k, const float *alpha, const float *a,
                              int lda, const float *b, int ldb,
                              const float *beta, float *c, int ldc);

/// "live_handles", "sgemm_calls", "last_math_mode" (the handle's math mode
/// at the last sgemm); -1 for an unknown name.
long fake_cublas_stat(const char *what);
/// What sgemm returns from now on (0 to succeed again).
void fake_cublas_fail(int status);
/// The stream bound to the handle of the last sgemm.
void *fake_cublas_last_stream(void);

#define HANDLE_MAGIC 0x43424c53U

typedef struct fake_handle {
  unsigned magic;
  void *stream;
  int math_mode;
} fake_handle_t;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static long g_live_handles, g_sgemm_calls, g_last_math_mode = -1;
static int g_fail;
static void *g_last_stream;

cublasStatus_t cublasCreate_v2(void **handle) {
  fake_handle_t *h = calloc(1, sizeof *h);
  if (!h)
    return CUBLAS_STATUS_ALLOC_FAILED;
  h->magic = HANDLE_MAGIC;
  pthread_mutex_lock(&g_lock);
  g_live_handles++;
  pthread_mutex_unlock(&g_lock);
  *handle = h;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy_v2(void *handle) {
  fake_handle_t *h = handle;
  if (!h || h->magic != HANDLE_MAGIC)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  h->magic = 0;
  free(h);
  pthread_mutex_lock(&g_lock);
  g_live_handles--;
  pthread_mutex_unlock(&g_lock);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream_v2(void *handle, void *stream) {
  fake_handle_t *h = handle;
  if (!h || h->magic != HANDLE_MAGIC)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  h->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}

/// op(X)(i, j) of a column-major X with leading dimension ld.
/// cublasMath_t: DEFAULT 0, TENSOR_OP 1, PEDANTIC 2, TF32_TENSOR_OP 3, each
/// optionally with DISALLOW_REDUCED_PRECISION_REDUCTION (16).
cublasStatus_t cublasSetMathMode(void *handle, int mode) {
  fake_handle_t *h = handle;
  if (!h || h->magic != HANDLE_MAGIC)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if ((mode & ~16) < 0 || (mode & ~16) > 3)
    return CUBLAS_STATUS_INVALID_VALUE;
  h->math_mode = mode;
  return CUBLAS_STATUS_SUCCESS;
}

static float at(const float *x, int ld, int trans, int i, int j) {
  return trans ? x[(size_t)j + (size_t)i * (size_t)ld]
               : x[(size_t)i + (size_t)j * (size_t)ld];
}

static int max1(int v) { return v > 1 ? v : 1; }

cublasStatus_t cublasSgemm_v2(void *handle, int transa, int transb, int m,
                              int n, int k, const float *alpha, const float *a,
                              int lda, const float *b, int ldb,
                              const float *beta, float *c, int ldc) {
  fake_handle_t *h = handle;
  if (!h || h->magic != HANDLE_MAGIC || !h->stream)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  pthread_mutex_lock(&g_lock);
  int fail = g_fail;
  g_sgemm_calls++;
  g_last_stream = h->stream;
  g_last_math_mode = h->math_mode;
  pthread_mutex_unlock(&g_lock);
  if (fail)
    return fail;
  // transa/transb: 0 N, 1 T, 2 C (= T for real matrices).
  if (transa < 0 || transa > 2 || transb < 0 || transb > 2 || m < 0 || n < 0 ||
      k < 0 || !alpha || !beta)
    return CUBLAS_STATUS_INVALID_VALUE;
  int ta = transa != 0, tb = transb != 0;
  if (lda < max1(ta ? k : m) || ldb < max1(tb ? n : k) || ldc < max1(m))
    return CUBLAS_STATUS_INVALID_VALUE;
  for (int j = 0; j < n; j++) {
    for (int i = 0; i < m; i++) {
      float acc = 0.0f;
      for (int p = 0; p < k; p++)
        acc += at(a, lda, ta, i, p) * at(b, ldb, tb, p, j);
      float *out = &c[(size_t)i + (size_t)j * (size_t)ldc];
      *out = *beta == 0.0f ? *alpha * acc : *alpha * acc + *beta * *out;
    }
  }
  return CUBLAS_STATUS_SUCCESS;
}

long fake_cublas_stat(const char *what) {
  pthread_mutex_lock(&g_lock);
  long v = -1;
  if (strcmp(what, "live_handles") == 0)
    v = g_live_handles;
  else if (strcmp(what, "sgemm_calls") == 0)
    v = g_sgemm_calls;
  else if (strcmp(what, "last_math_mode") == 0)
    v = g_last_math_mode;
  pthread_mutex_unlock(&g_lock);
  return v;
}

void fake_cublas_fail(int status) {
  pthread_mutex_lock(&g_lock);
  g_fail = status;
  pthread_mutex_unlock(&g_lock);
}

void *fake_cublas_last_stream(void) {
  pthread_mutex_lock(&g_lock);
  void *s = g_last_stream;
  pthread_mutex_unlock(&g_lock);
  return s;
}

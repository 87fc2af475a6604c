/// runtime/cuda.c against a fake CUDA driver and a fake cuBLAS
/// (tests/unit/runtime/fake_cuda.c, fake_cublas.c: host memory, recorded
/// launches, injectable failures): memory and copies, the module cache,
/// launches and their failures, per-thread streams, and the row-major
/// mapping of eddy_rt_entry_cuda_sgemm onto column-major cuBLAS, checked
/// against eddy_rt_sgemm. The failures that happen while loading the driver
/// are in test_rt_cuda_nodev.c (they are remembered per process).
#define _POSIX_C_SOURCE 200809L // setenv

#include "tests/unit/runtime/cuda_test.h"

#include <pthread.h>

// The fakes' test knobs, found with dlsym on the libraries libeddyrt loads.
static long (*cuda_stat)(const char *what);
static void (*cuda_fail_launch)(int result);
static void (*cuda_fail_alloc)(int result);
static void (*cuda_fail_next_sync)(int result);
static void (*cuda_last_launch)(char *name, size_t namelen, long long *dims6,
                                unsigned *smem, void **stream, void ***params,
                                void ***extra);
static long (*cublas_stat)(const char *what);
static void (*cublas_fail)(int status);
static void *(*cublas_last_stream)(void);

/// eddy_rt_entry_cuda_end fails with code and a message containing want.
static void end_fails(int32_t code, const char *want) {
  int32_t got = eddy_rt_entry_cuda_end(NULL, g_err, sizeof g_err);
  if (got != code || !strstr(g_err, want))
    fail_msg("eddy_rt_entry_cuda_end: %d \"%s\", expected %d \"%s\"", got,
             g_err, code, want);
}

static void test_begin_twice(void **state) {
  (void)state;
  long streams = cuda_stat("live_streams");
  begin_ok();
  begin_ok();
  // One stream per thread, created on the thread's first begin.
  assert_true(cuda_stat("live_streams") <= streams + 1);
  assert_non_null(mgpuStreamCreate());
  assert_ptr_equal(mgpuStreamCreate(), mgpuStreamCreate());
  assert_int_equal(cuda_stat("init_calls"), 1);
  end_ok();
}

static void test_memory_round_trip(void **state) {
  (void)state;
  begin_ok();
  long allocs = cuda_stat("live_allocs");
  float host[1000], back[1000];
  for (int i = 0; i < 1000; i++)
    host[i] = (float)i * 0.5f - 7.0f;
  void *d = eddy_rt_entry_cuda_alloc(NULL, sizeof host, g_err, sizeof g_err);
  assert_non_null(d);
  // Empty buffers are valid and distinct.
  void *e1 = eddy_rt_entry_cuda_alloc(NULL, 0, g_err, sizeof g_err);
  void *e2 = eddy_rt_entry_cuda_alloc(NULL, 0, g_err, sizeof g_err);
  assert_non_null(e1);
  assert_non_null(e2);
  assert_ptr_not_equal(e1, e2);
  assert_int_equal(cuda_stat("live_allocs"), allocs + 3);
  eddy_rt_entry_cuda_to_device(d, host, sizeof host);
  memset(back, 0xff, sizeof back);
  eddy_rt_entry_cuda_to_host(back, d, sizeof back);
  assert_memory_equal(back, host, sizeof host);
  // A partial copy back leaves the rest alone.
  float few[4] = {9, 9, 9, 9};
  eddy_rt_entry_cuda_to_host(few, d, 3 * sizeof(float));
  assert_true(few[0] == -7.0f && few[2] == -6.0f && few[3] == 9.0f);
  eddy_rt_entry_cuda_free(NULL, d, sizeof host);
  eddy_rt_entry_cuda_free(NULL, e1, 0);
  eddy_rt_entry_cuda_free(NULL, e2, 0);
  eddy_rt_entry_cuda_free(NULL, NULL, 0);
  assert_int_equal(cuda_stat("live_allocs"), allocs);
  end_ok();
}

static void test_alloc_failures(void **state) {
  (void)state;
  begin_ok();
  cuda_fail_alloc(2);
  void *d = eddy_rt_entry_cuda_alloc(NULL, 4096, g_err, sizeof g_err);
  cuda_fail_alloc(0);
  assert_null(d);
  assert_string_equal(g_err, "cannot allocate 4096 bytes of device memory: "
                             "CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
  d = eddy_rt_entry_cuda_alloc(NULL, -5, g_err, sizeof g_err);
  assert_null(d);
  assert_non_null(strstr(g_err, "cannot allocate -5 bytes"));
  // An allocation failure is the caller's to report, not recorded.
  end_ok();
}

static const char k_image[] = "FAKECUBIN scale2 main_kernel_3 other";
static const char k_image2[] = "FAKECUBIN scale2";

static void test_module_cache(void **state) {
  (void)state;
  begin_ok();
  long loads = cuda_stat("module_loads");
  void *m1 = mgpuModuleLoad((void *)k_image, sizeof k_image);
  assert_non_null(m1);
  void *m2 = mgpuModuleLoad((void *)k_image, sizeof k_image);
  assert_ptr_equal(m1, m2);
  assert_int_equal(cuda_stat("module_loads"), loads + 1);
  mgpuModuleUnload(m1);
  // Still cached after the unload.
  assert_ptr_equal(mgpuModuleLoad((void *)k_image, sizeof k_image), m1);
  void *m3 = mgpuModuleLoad((void *)k_image2, sizeof k_image2);
  assert_non_null(m3);
  assert_ptr_not_equal(m3, m1);
  assert_int_equal(cuda_stat("module_loads"), loads + 2);
  void *f1 = mgpuModuleGetFunction(m1, "scale2");
  assert_non_null(f1);
  assert_ptr_equal(mgpuModuleGetFunction(m1, "scale2"), f1);
  void *f3 = mgpuModuleGetFunction(m3, "scale2");
  assert_non_null(f3);
  assert_ptr_not_equal(f3, f1);
  assert_non_null(mgpuModuleGetFunction(m1, "other"));
  // Another image at the same address (a JIT's memory reused after an
  // earlier program's was freed) is another module.
  static char reused[sizeof k_image > sizeof k_image2 ? sizeof k_image
                                                      : sizeof k_image2];
  memcpy(reused, k_image, sizeof k_image);
  void *r1 = mgpuModuleLoad(reused, sizeof k_image);
  assert_ptr_not_equal(r1, m3);
  memcpy(reused, k_image2, sizeof k_image2);
  void *r2 = mgpuModuleLoad(reused, sizeof k_image2);
  assert_non_null(r2);
  assert_ptr_not_equal(r2, r1);
  assert_int_equal(cuda_stat("module_loads"), loads + 4);
  end_ok();

  // A missing kernel is recorded and reported by end, naming it.
  begin_ok();
  assert_null(mgpuModuleGetFunction(m1, "nope"));
  end_fails(EDDY_RT_ERR_INTERNAL,
            "cuModuleGetFunction(nope): CUDA_ERROR_NOT_FOUND");
  // A bad image: the driver's error, and nothing cached.
  begin_ok();
  static const char bad[] = "ELF?";
  assert_null(mgpuModuleLoad((void *)bad, sizeof bad));
  end_fails(EDDY_RT_ERR_INTERNAL, "cuModuleLoadData: CUDA_ERROR_INVALID_IMAGE "
                                  "(device kernel image is invalid)");
  assert_int_equal(cuda_stat("module_loads"), loads + 4);
}

static void test_launch(void **state) {
  (void)state;
  begin_ok();
  float host[300];
  for (int i = 0; i < 300; i++)
    host[i] = (float)i;
  void *d = eddy_rt_entry_cuda_alloc(NULL, sizeof host, g_err, sizeof g_err);
  assert_non_null(d);
  eddy_rt_entry_cuda_to_device(d, host, sizeof host);
  void *m = mgpuModuleLoad((void *)k_image, sizeof k_image);
  void *f = mgpuModuleGetFunction(m, "scale2");
  void *s = mgpuStreamCreate();
  assert_non_null(f);
  assert_non_null(s);
  int64_t n = 300;
  void *params[2] = {&d, &n};
  long launches = cuda_stat("launches");
  mgpuLaunchKernel(f, 3, 2, 1, 128, 1, 1, 64, s, params, NULL, 2);
  mgpuStreamSynchronize(s);
  mgpuStreamDestroy(s);
  assert_int_equal(cuda_stat("launches"), launches + 1);
  char name[64];
  long long dims[6];
  unsigned smem;
  void *stream, **p, **extra;
  cuda_last_launch(name, sizeof name, dims, &smem, &stream, &p, &extra);
  assert_string_equal(name, "scale2");
  long long want[6] = {3, 2, 1, 128, 1, 1};
  assert_memory_equal(dims, want, sizeof want);
  assert_int_equal(smem, 64);
  assert_ptr_equal(stream, s);
  assert_ptr_equal(p, params);
  assert_null(extra);
  // The stream stays usable after mgpuStreamDestroy: it is the thread's.
  float back[300];
  eddy_rt_entry_cuda_to_host(back, d, sizeof back);
  for (int i = 0; i < 300; i++)
    assert_true(back[i] == 2.0f * (float)i);
  // A NULL stream means the thread's; a grid with no blocks runs nothing.
  mgpuLaunchKernel(f, 1, 1, 1, 32, 2, 1, 0, NULL, params, NULL, 2);
  cuda_last_launch(name, sizeof name, dims, &smem, &stream, &p, &extra);
  assert_ptr_equal(stream, s);
  assert_int_equal(dims[4], 2);
  mgpuLaunchKernel(f, 0, 1, 1, 32, 1, 1, 0, s, params, NULL, 2);
  assert_int_equal(cuda_stat("launches"), launches + 2);
  eddy_rt_entry_cuda_to_host(back, d, sizeof back);
  assert_true(back[299] == 4.0f * 299.0f);
  eddy_rt_entry_cuda_free(NULL, d, sizeof host);
  end_ok();
}

static void test_launch_failure(void **state) {
  (void)state;
  begin_ok();
  float host[16];
  for (int i = 0; i < 16; i++)
    host[i] = 1.0f;
  void *d = eddy_rt_entry_cuda_alloc(NULL, sizeof host, g_err, sizeof g_err);
  assert_non_null(d);
  eddy_rt_entry_cuda_to_device(d, host, sizeof host);
  void *m = mgpuModuleLoad((void *)k_image, sizeof k_image);
  void *f = mgpuModuleGetFunction(m, "main_kernel_3");
  assert_non_null(f);
  int64_t n = 16;
  void *params[2] = {&d, &n};
  long launches = cuda_stat("launches"), copies = cuda_stat("copies");
  long sgemms = cublas_stat("sgemm_calls");
  cuda_fail_launch(719);
  mgpuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, mgpuStreamCreate(), params, NULL,
                   2);
  cuda_fail_launch(0);
  // From here every helper does nothing: no launch, no copy, no sgemm, no
  // module lookups; copies back give zeros; allocation reports the error.
  mgpuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, mgpuStreamCreate(), params, NULL,
                   2);
  assert_null(mgpuModuleLoad((void *)k_image, sizeof k_image));
  assert_null(mgpuModuleGetFunction(m, "scale2"));
  eddy_rt_entry_cuda_to_device(d, host, sizeof host);
  float back[16];
  for (int i = 0; i < 16; i++)
    back[i] = 5.0f;
  eddy_rt_entry_cuda_to_host(back, d, sizeof back);
  for (int i = 0; i < 16; i++)
    assert_true(back[i] == 0.0f);
  eddy_rt_entry_cuda_sgemm(NULL, 0, 2, 2, 2, d, 2, d, 2, d, 2);
  char err[256];
  assert_null(eddy_rt_entry_cuda_alloc(NULL, 8, err, sizeof err));
  assert_non_null(strstr(err, "cuLaunchKernel(main_kernel_3)"));
  assert_int_equal(cuda_stat("launches"), launches);
  assert_int_equal(cuda_stat("copies"), copies);
  assert_int_equal(cublas_stat("sgemm_calls"), sgemms);
  // Cleanup still frees.
  long allocs = cuda_stat("live_allocs");
  eddy_rt_entry_cuda_free(NULL, d, sizeof host);
  assert_int_equal(cuda_stat("live_allocs"), allocs - 1);
  end_fails(EDDY_RT_ERR_INTERNAL,
            "cuLaunchKernel(main_kernel_3): CUDA_ERROR_LAUNCH_FAILED "
            "(unspecified launch failure)");
  // end cleared the record.
  end_ok();
  // A launch the driver cannot express is recorded without calling it.
  begin_ok();
  mgpuLaunchKernel(f, -1, 1, 1, 64, 1, 1, 0, NULL, params, NULL, 2);
  end_fails(EDDY_RT_ERR_INTERNAL, "cuLaunchKernel(main_kernel_3): grid -1x1x1");
  assert_int_equal(cuda_stat("launches"), launches);
}

static void test_async_failure(void **state) {
  (void)state;
  begin_ok();
  float x = 3.0f;
  void *d = eddy_rt_entry_cuda_alloc(NULL, sizeof x, g_err, sizeof g_err);
  assert_non_null(d);
  eddy_rt_entry_cuda_to_device(d, &x, sizeof x);
  void *m = mgpuModuleLoad((void *)k_image2, sizeof k_image2);
  void *f = mgpuModuleGetFunction(m, "scale2");
  int64_t n = 1;
  void *params[2] = {&d, &n};
  mgpuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL, 2);
  // The kernel "fails" on the device: the next wait reports it, naming the
  // last launch, and the copy back gives zeros.
  cuda_fail_next_sync(700);
  float back = 1.0f;
  eddy_rt_entry_cuda_to_host(&back, d, sizeof back);
  assert_true(back == 0.0f);
  end_fails(EDDY_RT_ERR_INTERNAL,
            "cuStreamSynchronize after cuLaunchKernel(scale2): "
            "CUDA_ERROR_ILLEGAL_ADDRESS");
  // Out of memory reported while waiting maps to EDDY_RT_ERR_RESOURCE.
  begin_ok();
  cuda_fail_next_sync(2);
  end_fails(EDDY_RT_ERR_RESOURCE, "cuStreamSynchronize: "
                                  "CUDA_ERROR_OUT_OF_MEMORY");
  begin_ok();
  eddy_rt_entry_cuda_free(NULL, d, sizeof x);
  end_ok();
}

/// Row-major reference vs device sgemm for one case.
static void sgemm_case(int32_t trans, int64_t m, int64_t n, int64_t k,
                       int64_t pad) {
  bool ta = trans & 1, tb = trans & 2;
  int64_t arows = ta ? k : m, acols = ta ? m : k;
  int64_t brows = tb ? n : k, bcols = tb ? k : n;
  int64_t lda = acols + pad, ldb = bcols + pad, ldc = n + pad;
  size_t asz = (size_t)(arows * lda + 1), bsz = (size_t)(brows * ldb + 1),
         csz = (size_t)(m * ldc);
  float *a = calloc(asz, sizeof(float)), *b = calloc(bsz, sizeof(float));
  float *want = calloc(csz, sizeof(float)), *got = calloc(csz, sizeof(float));
  assert_true(a && b && want && got);
  uint64_t s = (uint64_t)(m * 131 + n * 17 + k * 3 + trans);
  for (size_t i = 0; i < asz; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    a[i] = (float)((double)(s >> 40) / 8388608.0 - 1.0);
  }
  for (size_t i = 0; i < bsz; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    b[i] = (float)((double)(s >> 40) / 8388608.0 - 1.0);
  }
  for (size_t i = 0; i < csz; i++)
    want[i] = got[i] = 777.0f; // row padding must stay
  eddy_rt_sgemm(NULL, EDDY_RT_GEMM_PLAIN, trans, m, n, k, a, lda, b, ldb, want,
                ldc);
  void *da = eddy_rt_entry_cuda_alloc(NULL, (int64_t)(asz * sizeof(float)),
                                      g_err, sizeof g_err);
  void *db = eddy_rt_entry_cuda_alloc(NULL, (int64_t)(bsz * sizeof(float)),
                                      g_err, sizeof g_err);
  void *dc = eddy_rt_entry_cuda_alloc(NULL, (int64_t)(csz * sizeof(float)),
                                      g_err, sizeof g_err);
  assert_true(da && db && dc);
  eddy_rt_entry_cuda_to_device(da, a, (int64_t)(asz * sizeof(float)));
  eddy_rt_entry_cuda_to_device(db, b, (int64_t)(bsz * sizeof(float)));
  eddy_rt_entry_cuda_to_device(dc, got, (int64_t)(csz * sizeof(float)));
  eddy_rt_entry_cuda_sgemm(NULL, trans, m, n, k, da, lda, db, ldb, dc, ldc);
  eddy_rt_entry_cuda_to_host(got, dc, (int64_t)(csz * sizeof(float)));
  int32_t code = eddy_rt_entry_cuda_end(NULL, g_err, sizeof g_err);
  if (code)
    fail_msg("trans %d %lldx%lldx%lld: %s", trans, (long long)m, (long long)n,
             (long long)k, g_err);
  begin_ok();
  for (int64_t i = 0; i < m; i++) {
    for (int64_t j = 0; j < ldc; j++) {
      double w = want[i * ldc + j], g = got[i * ldc + j];
      if (!(fabs(w - g) <= 1e-5 * (double)(k + 1)))
        fail_msg("trans %d %lldx%lldx%lld pad %lld: c[%lld,%lld] = %.9g, "
                 "expected %.9g",
                 trans, (long long)m, (long long)n, (long long)k,
                 (long long)pad, (long long)i, (long long)j, g, w);
    }
  }
  eddy_rt_entry_cuda_free(NULL, da, 0);
  eddy_rt_entry_cuda_free(NULL, db, 0);
  eddy_rt_entry_cuda_free(NULL, dc, 0);
  free(a);
  free(b);
  free(want);
  free(got);
}

static void test_sgemm(void **state) {
  (void)state;
  begin_ok();
  long calls = cublas_stat("sgemm_calls");
  for (int32_t trans = 0; trans < 4; trans++) {
    sgemm_case(trans, 5, 7, 3, 0);
    sgemm_case(trans, 5, 7, 3, 2);
    sgemm_case(trans, 1, 9, 4, 1);
    sgemm_case(trans, 8, 3, 11, 3);
    sgemm_case(trans, 13, 1, 6, 0);
    sgemm_case(trans, 4, 6, 0, 1); // k = 0: zeros
  }
  assert_int_equal(cublas_stat("sgemm_calls"), calls + 24);
  // The handle is bound to this thread's stream.
  assert_ptr_equal(cublas_last_stream(), mgpuStreamCreate());
  // Empty m or n: nothing happens.
  eddy_rt_entry_cuda_sgemm(NULL, 0, 0, 5, 5, NULL, 5, NULL, 5, NULL, 5);
  assert_int_equal(cublas_stat("sgemm_calls"), calls + 24);
  end_ok();
}

static void test_sgemm_failure(void **state) {
  (void)state;
  begin_ok();
  void *d = eddy_rt_entry_cuda_alloc(NULL, 64, g_err, sizeof g_err);
  assert_non_null(d);
  cublas_fail(13);
  eddy_rt_entry_cuda_sgemm(NULL, 1, 2, 2, 2, d, 2, d, 2, d, 2);
  cublas_fail(0);
  eddy_rt_entry_cuda_free(NULL, d, 64);
  end_fails(EDDY_RT_ERR_INTERNAL, "cublasSgemm_v2(m=2, n=2, k=2, trans=1): "
                                  "CUBLAS_STATUS_EXECUTION_FAILED");
}

/// EDDY_RT_SGEMM_TF32 switches the thread's handle to TF32 tensor-core math
/// for that product only; the transposes in the same flags still apply.
static void test_sgemm_tf32(void **state) {
  (void)state;
  begin_ok();
  float x[4] = {1, 2, 3, 4}, back[4];
  void *d = eddy_rt_entry_cuda_alloc(NULL, sizeof x, g_err, sizeof g_err);
  void *c = eddy_rt_entry_cuda_alloc(NULL, sizeof x, g_err, sizeof g_err);
  assert_non_null(d);
  assert_non_null(c);
  eddy_rt_entry_cuda_to_device(d, x, sizeof x);
  // [[1,2],[3,4]] * [[1,2],[3,4]]^T = [[5,11],[11,25]]
  eddy_rt_entry_cuda_sgemm(NULL, EDDY_RT_SGEMM_TRANS_B | EDDY_RT_SGEMM_TF32, 2,
                           2, 2, d, 2, d, 2, c, 2);
  assert_int_equal(cublas_stat("last_math_mode"), 3); // TF32_TENSOR_OP
  eddy_rt_entry_cuda_to_host(back, c, sizeof back);
  assert_true(back[0] == 5.0f && back[1] == 11.0f && back[3] == 25.0f);
  eddy_rt_entry_cuda_sgemm(NULL, EDDY_RT_SGEMM_TRANS_B, 2, 2, 2, d, 2, d, 2, c,
                           2);
  assert_int_equal(cublas_stat("last_math_mode"), 0); // DEFAULT: FP32
  eddy_rt_entry_cuda_free(NULL, d, sizeof x);
  eddy_rt_entry_cuda_free(NULL, c, sizeof x);
  end_ok();
}

typedef struct thread_result {
  int32_t begin, end;
  void *stream;
  float back;
} thread_result_t;

static void *worker(void *arg) {
  thread_result_t *r = arg;
  char err[256];
  r->begin = eddy_rt_entry_cuda_begin(NULL, err, sizeof err);
  r->stream = mgpuStreamCreate();
  float x[4] = {1, 2, 3, 4};
  void *d = eddy_rt_entry_cuda_alloc(NULL, sizeof x, err, sizeof err);
  eddy_rt_entry_cuda_to_device(d, x, sizeof x);
  // 2x2 times 2x2 identity-ish: [[1,2],[3,4]] * [[1,2],[3,4]]^T: c00 = 5.
  void *c = eddy_rt_entry_cuda_alloc(NULL, sizeof x, err, sizeof err);
  eddy_rt_entry_cuda_sgemm(NULL, 2, 2, 2, 2, d, 2, d, 2, c, 2);
  eddy_rt_entry_cuda_to_host(&r->back, c, sizeof(float));
  eddy_rt_entry_cuda_free(NULL, d, sizeof x);
  eddy_rt_entry_cuda_free(NULL, c, sizeof x);
  r->end = eddy_rt_entry_cuda_end(NULL, err, sizeof err);
  return NULL;
}

/// A thread that never began gets nothing done, and says so.
static void *idle_worker(void *arg) {
  char *err = arg;
  float x = 4.0f;
  if (mgpuStreamCreate() || mgpuModuleLoad((void *)k_image, sizeof k_image))
    snprintf(err, 256, "unexpected stream or module");
  else if (eddy_rt_entry_cuda_alloc(NULL, 4, err, 256) == NULL)
    eddy_rt_entry_cuda_to_host(&x, &x, sizeof x); // zeroes x
  if (x != 0.0f)
    snprintf(err, 256, "to_host did not zero");
  char end_err[256];
  int32_t code = eddy_rt_entry_cuda_end(NULL, end_err, sizeof end_err);
  if (code != EDDY_RT_ERR_INTERNAL ||
      !strstr(end_err, "has not succeeded on this thread"))
    snprintf(err, 256, "end without begin gave code %d", code);
  return NULL;
}

static void test_threads(void **state) {
  (void)state;
  begin_ok();
  void *mine = mgpuStreamCreate();
  long streams = cuda_stat("live_streams");
  long handles = cublas_stat("live_handles");
  long allocs = cuda_stat("live_allocs");
  thread_result_t r[2];
  memset(r, 0, sizeof r);
  pthread_t th[2];
  for (int i = 0; i < 2; i++)
    assert_int_equal(pthread_create(&th[i], NULL, worker, &r[i]), 0);
  for (int i = 0; i < 2; i++)
    assert_int_equal(pthread_join(th[i], NULL), 0);
  for (int i = 0; i < 2; i++) {
    assert_int_equal(r[i].begin, 0);
    assert_int_equal(r[i].end, 0);
    assert_non_null(r[i].stream);
    assert_ptr_not_equal(r[i].stream, mine);
    assert_true(r[i].back == 5.0f);
  }
  // The threads' streams and cuBLAS handles went with them.
  assert_int_equal(cuda_stat("live_streams"), streams);
  assert_int_equal(cublas_stat("live_handles"), handles);
  assert_int_equal(cuda_stat("live_allocs"), allocs);

  char err[256] = "";
  pthread_t idle;
  assert_int_equal(pthread_create(&idle, NULL, idle_worker, err), 0);
  assert_int_equal(pthread_join(idle, NULL), 0);
  assert_non_null(strstr(err, "eddy_rt_entry_cuda_begin has not succeeded on "
                              "this thread"));
  end_ok();
}

int main(void) {
  void *cuda, *cublas;
  cuda_test_load_fakes(&cuda, &cublas);
  knob(cuda, "fake_cuda_stat", &cuda_stat);
  knob(cuda, "fake_cuda_fail_launch", &cuda_fail_launch);
  knob(cuda, "fake_cuda_fail_alloc", &cuda_fail_alloc);
  knob(cuda, "fake_cuda_fail_next_sync", &cuda_fail_next_sync);
  knob(cuda, "fake_cuda_last_launch", &cuda_last_launch);
  knob(cublas, "fake_cublas_stat", &cublas_stat);
  knob(cublas, "fake_cublas_fail", &cublas_fail);
  knob(cublas, "fake_cublas_last_stream", &cublas_last_stream);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_begin_twice),
      cmocka_unit_test(test_memory_round_trip),
      cmocka_unit_test(test_alloc_failures),
      cmocka_unit_test(test_module_cache),
      cmocka_unit_test(test_launch),
      cmocka_unit_test(test_launch_failure),
      cmocka_unit_test(test_async_failure),
      cmocka_unit_test(test_sgemm),
      cmocka_unit_test(test_sgemm_failure),
      cmocka_unit_test(test_sgemm_tf32),
      cmocka_unit_test(test_threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

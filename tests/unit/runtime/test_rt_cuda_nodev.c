/// runtime/cuda.c where the CUDA driver cannot be used: no libcuda, cuInit
/// failing, no such device, a bad EDDY_CUDA_DEVICE, no cuBLAS. The driver
/// is loaded once per process and a failure is remembered, so each case runs
/// in a child process (fork) that reports back through a pipe; the fake
/// driver (tests/unit/runtime/fake_cuda.c) plays the driver that loads.
#define _POSIX_C_SOURCE 200809L // setenv, fork

#include "tests/unit/runtime/rt_test.h"

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct report {
  int32_t begin[2]; ///< two calls of eddy_rt_entry_cuda_begin
  char begin_msg[2][512];
  int32_t end;
  char end_msg[512];
  int alloc_null, zeroed, mgpu_null;
  long init_calls; ///< cuInit calls in the fake, -1 without it
} report_t;

/// In the child: the environment, then the helpers.
static void child(const char *driver, const char *device, const char *init,
                  const char *cublas, bool sgemm, report_t *r) {
  setenv("EDDY_CUDA_DRIVER", driver, 1);
  if (device)
    setenv("EDDY_CUDA_DEVICE", device, 1);
  if (init)
    setenv("FAKE_CUDA_INIT_RESULT", init, 1);
  setenv("EDDY_CUBLAS", cublas ? cublas : EDDY_FAKE_CUBLAS, 1);
  for (int i = 0; i < 2; i++)
    r->begin[i] = eddy_rt_entry_cuda_begin(NULL, r->begin_msg[i], 512);
  char err[512];
  r->alloc_null = eddy_rt_entry_cuda_alloc(NULL, 16, err, sizeof err) == NULL;
  float x[2] = {1, 2}, y[2] = {3, 4};
  if (sgemm)
    eddy_rt_entry_cuda_sgemm(NULL, 0, 1, 1, 1, x, 1, x, 1, y, 1);
  eddy_rt_entry_cuda_to_host(y, x, sizeof y);
  r->zeroed = !sgemm && y[0] == 0.0f && y[1] == 0.0f;
  r->mgpu_null = mgpuStreamCreate() == NULL &&
                 mgpuModuleLoad((void *)"FAKECUBIN k", 12) == NULL;
  r->end = eddy_rt_entry_cuda_end(NULL, r->end_msg, sizeof r->end_msg);
  r->init_calls = -1;
  void *fake = strcmp(driver, EDDY_FAKE_CUDA) == 0
                   ? dlopen(EDDY_FAKE_CUDA, RTLD_NOW | RTLD_LOCAL)
                   : NULL;
  if (fake) {
    long (*stat)(const char *) = NULL;
    void *p = dlsym(fake, "fake_cuda_stat");
    memcpy(&stat, &p, sizeof p);
    if (stat)
      r->init_calls = stat("init_calls");
  }
}

static report_t run(const char *driver, const char *device, const char *init,
                    const char *cublas, bool sgemm) {
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    report_t r;
    memset(&r, 0, sizeof r);
    child(driver, device, init, cublas, sgemm, &r);
    ssize_t n = write(fds[1], &r, sizeof r);
    _exit(n == (ssize_t)sizeof r ? 0 : 1);
  }
  close(fds[1]);
  report_t r;
  memset(&r, 0, sizeof r);
  size_t got = 0;
  while (got < sizeof r) {
    ssize_t n = read(fds[0], (char *)&r + got, sizeof r - got);
    if (n <= 0)
      break;
    got += (size_t)n;
  }
  close(fds[0]);
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  assert_int_equal(got, sizeof r);
  return r;
}

static void expect_msg(const char *msg, const char *want) {
  if (!strstr(msg, want))
    fail_msg("message \"%s\" lacks \"%s\"", msg, want);
}

/// Both begins fail the same way with UNSUPPORTED; nothing else works.
static void expect_no_device(const report_t *r, const char *want) {
  for (int i = 0; i < 2; i++) {
    assert_int_equal(r->begin[i], EDDY_RT_ERR_UNSUPPORTED);
    assert_true(strncmp(r->begin_msg[i], "no CUDA device: ", 16) == 0);
    expect_msg(r->begin_msg[i], want);
  }
  assert_string_equal(r->begin_msg[0], r->begin_msg[1]);
  assert_true(r->alloc_null);
  assert_true(r->zeroed);
  assert_true(r->mgpu_null);
  assert_int_equal(r->end, EDDY_RT_ERR_UNSUPPORTED);
  assert_string_equal(r->end_msg, r->begin_msg[0]);
}

static void test_no_library(void **state) {
  (void)state;
  report_t r = run("/nonexistent/libcuda.so.1", NULL, NULL, NULL, false);
  expect_no_device(&r,
                   "no CUDA device: cannot load /nonexistent/libcuda.so.1: ");
}

static void test_init_fails(void **state) {
  (void)state;
  report_t r = run(EDDY_FAKE_CUDA, NULL, "100", NULL, false);
  expect_no_device(&r, "no CUDA device: cuInit failed: CUDA_ERROR_NO_DEVICE "
                       "(no CUDA-capable device is detected)");
  // Remembered: cuInit ran once for both begins.
  assert_int_equal(r.init_calls, 1);
}

static void test_no_such_device(void **state) {
  (void)state;
  report_t r = run(EDDY_FAKE_CUDA, "3", NULL, NULL, false);
  expect_no_device(&r, "device 3 (EDDY_CUDA_DEVICE) does not exist: the "
                       "driver reports 1 device");
  r = run(EDDY_FAKE_CUDA, "abc", NULL, NULL, false);
  expect_no_device(&r, "EDDY_CUDA_DEVICE='abc' is not a device number");
}

static void test_no_cublas(void **state) {
  (void)state;
  report_t r =
      run(EDDY_FAKE_CUDA, "0", NULL, "/nonexistent/libcublas.so", true);
  for (int i = 0; i < 2; i++)
    assert_int_equal(r.begin[i], 0);
  assert_false(r.alloc_null);
  assert_int_equal(r.end, EDDY_RT_ERR_UNSUPPORTED);
  expect_msg(r.end_msg, "cannot load cuBLAS /nonexistent/libcublas.so: ");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_no_library),
      cmocka_unit_test(test_init_fails),
      cmocka_unit_test(test_no_such_device),
      cmocka_unit_test(test_no_cublas),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

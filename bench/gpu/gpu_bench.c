/// GPU backend benchmarks (needs a CUDA device; docs/gpu.md). Each program
/// is JIT-compiled for the GPU (eddy_gpu_jit_create) and timed against a
/// reference measured in the same run on the same device:
///   chain  a fused elementwise chain (x = tanh(x*a + b) * c) on N floats,
///          iterated in a ctl.while: the time per iteration against a
///          device-to-device copy of the same bytes (cuMemcpyDtoD), i.e. the
///          fraction of the device's copy bandwidth the kernel reaches
///   loop   x = x*a + b on a scalar in a ctl.while: the time per iteration
///          (kernel launches plus the predicate's copy to the host)
/// Calls are timed with n iterations and with 0, and the difference divided
/// by n, so the copies of arguments and results do not count.
/// Without a device it prints "no CUDA device: ..." and exits 77.
/// Not a test: bench/gpu/run.sh builds and runs it.
#define _POSIX_C_SOURCE 200809L
#include "backend-gpu/gpu.h"
#include "dialects/dialects.h"
#include "ir/ir.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, eddy_status_t st) {
  fprintf(stderr, "%s: %s\n", what, st ? eddy_status_message(st) : "failed");
  exit(1);
}

/// The chain program on n floats, iterated arg1 times.
static void chain_text(char *buf, size_t size, int64_t n) {
  snprintf(
      buf, size,
      "module {\n"
      "  func.func @chain(%%x: tensor<%1$lldxf32>, %%n: tensor<i64>) -> "
      "tensor<%1$lldxf32> {\n"
      "    %%z = \"core.constant\"() {value = dense<0> : tensor<i64>} : () -> "
      "tensor<i64>\n"
      "    %%r:2 = \"ctl.while\"(%%z, %%x) ({\n"
      "    ^bb0(%%i: tensor<i64>, %%v: tensor<%1$lldxf32>):\n"
      "      %%c = \"core.lt\"(%%i, %%n) : (tensor<i64>, tensor<i64>) -> "
      "tensor<i1>\n"
      "      \"ctl.condition\"(%%c) : (tensor<i1>) -> ()\n"
      "    }, {\n"
      "    ^bb0(%%i: tensor<i64>, %%v: tensor<%1$lldxf32>):\n"
      "      %%one = \"core.constant\"() {value = dense<1> : tensor<i64>} : () "
      "-> tensor<i64>\n"
      "      %%i2 = \"core.add\"(%%i, %%one) : (tensor<i64>, tensor<i64>) -> "
      "tensor<i64>\n"
      "      %%a = \"core.constant\"() {value = dense<0.5> : "
      "tensor<%1$lldxf32>} : () -> tensor<%1$lldxf32>\n"
      "      %%b = \"core.constant\"() {value = dense<0.25> : "
      "tensor<%1$lldxf32>} : () -> tensor<%1$lldxf32>\n"
      "      %%s = \"core.constant\"() {value = dense<0.9> : "
      "tensor<%1$lldxf32>} : () -> tensor<%1$lldxf32>\n"
      "      %%m = \"core.mul\"(%%v, %%a) : (tensor<%1$lldxf32>, "
      "tensor<%1$lldxf32>) -> tensor<%1$lldxf32>\n"
      "      %%p = \"core.add\"(%%m, %%b) : (tensor<%1$lldxf32>, "
      "tensor<%1$lldxf32>) -> tensor<%1$lldxf32>\n"
      "      %%t = \"core.tanh\"(%%p) : (tensor<%1$lldxf32>) -> "
      "tensor<%1$lldxf32>\n"
      "      %%y = \"core.mul\"(%%t, %%s) : (tensor<%1$lldxf32>, "
      "tensor<%1$lldxf32>) -> tensor<%1$lldxf32>\n"
      "      \"ctl.yield\"(%%i2, %%y) : (tensor<i64>, tensor<%1$lldxf32>) -> "
      "()\n"
      "    }) : (tensor<i64>, tensor<%1$lldxf32>) -> (tensor<i64>, "
      "tensor<%1$lldxf32>)\n"
      "    \"func.return\"(%%r#1) : (tensor<%1$lldxf32>) -> ()\n"
      "  }\n"
      "}\n",
      (long long)n);
}

/// Times one call of the jitted entry with count = n (seconds).
static double time_call(eddy_cpu_jit_t *jit, eddy_rt_ctx_t *rt,
                        eddy_rt_tensor_t *x, int64_t n) {
  eddy_rt_tensor_t args[2], res[1];
  args[0] = *x;
  if (eddy_rt_tensor_create(rt, EDDY_RT_I64, 0, NULL, "bench", &args[1]))
    die("alloc", NULL);
  *(int64_t *)args[1].data = n;
  double t0 = now();
  eddy_status_t st = eddy_cpu_jit_run(jit, rt, args, res);
  double t = now() - t0;
  if (st) {
    if (strstr(eddy_status_message(st), "no CUDA device")) {
      printf("%s\n", eddy_status_message(st));
      exit(77);
    }
    die("run", st);
  }
  eddy_rt_tensor_release(&res[0]);
  eddy_rt_tensor_release(&args[1]);
  return t;
}

/// Median of k calls.
static double median_call(eddy_cpu_jit_t *jit, eddy_rt_ctx_t *rt,
                          eddy_rt_tensor_t *x, int64_t n, int k) {
  double t[16];
  for (int i = 0; i < k; i++)
    t[i] = time_call(jit, rt, x, n);
  for (int i = 1; i < k; i++)
    for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
      double s = t[j];
      t[j] = t[j - 1];
      t[j - 1] = s;
    }
  return t[k / 2];
}

static eddy_cpu_jit_t *jit_text(eddy_ctx_t *ctx, const char *text,
                                const char *entry) {
  eddy_module_t *m = NULL;
  eddy_status_t st = eddy_ir_parse_module(ctx, "bench", text, strlen(text), &m);
  if (st)
    die("parse", st);
  eddy_gpu_opts_t o = eddy_gpu_opts_default();
  o.prefix = "bench";
  eddy_cpu_jit_t *jit = NULL;
  st = eddy_gpu_jit_create(m, entry, &o, &jit);
  if (st)
    die("compile", st);
  eddy_ir_module_destroy(m);
  return jit;
}

/// The device-to-device copy bandwidth (bytes read + written per second)
/// for a buffer of `bytes`, through the driver directly.
static double copy_bandwidth(size_t bytes) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (!lib)
    return 0;
  int (*init)(unsigned) = (int (*)(unsigned))dlsym(lib, "cuInit");
  int (*get)(int *, int) = (int (*)(int *, int))dlsym(lib, "cuDeviceGet");
  int (*retain)(void **, int) =
      (int (*)(void **, int))dlsym(lib, "cuDevicePrimaryCtxRetain");
  int (*set)(void *) = (int (*)(void *))dlsym(lib, "cuCtxSetCurrent");
  int (*alloc)(uint64_t *, size_t) =
      (int (*)(uint64_t *, size_t))dlsym(lib, "cuMemAlloc_v2");
  int (*dtod)(uint64_t, uint64_t, size_t) =
      (int (*)(uint64_t, uint64_t, size_t))dlsym(lib, "cuMemcpyDtoD_v2");
  int (*sync)(void) = (int (*)(void))dlsym(lib, "cuCtxSynchronize");
  int (*mfree)(uint64_t) = (int (*)(uint64_t))dlsym(lib, "cuMemFree_v2");
  int dev;
  void *ctx;
  uint64_t a, b;
  if (!init || !get || !retain || !set || !alloc || !dtod || !sync ||
      !mfree || init(0) || get(&dev, 0) || retain(&ctx, dev) || set(ctx) ||
      alloc(&a, bytes) || alloc(&b, bytes))
    return 0;
  double best = 1e30;
  for (int i = 0; i < 10; i++) {
    sync();
    double t0 = now();
    dtod(b, a, bytes);
    sync();
    double t = now() - t0;
    best = t < best ? t : best;
  }
  mfree(a);
  mfree(b);
  return 2.0 * (double)bytes / best;
}

int main(void) {
  eddy_ctx_t *ctx = eddy_ir_ctx_create();
  eddy_dialects_register_all(ctx);
  eddy_rt_ctx_options_t ro = eddy_rt_ctx_options_default();
  eddy_rt_ctx_t *rt = NULL;
  if (eddy_rt_ctx_create(&ro, &rt))
    die("runtime context", NULL);
  // chain: 64M floats (256 MB read and 256 MB written per iteration).
  const int64_t n = (int64_t)1 << 26;
  char *text = malloc(1 << 16);
  chain_text(text, 1 << 16, n);
  eddy_cpu_jit_t *jit = jit_text(ctx, text, "chain");
  eddy_rt_tensor_t x;
  int64_t dims[1] = {n};
  if (eddy_rt_tensor_create(rt, EDDY_RT_F32, 1, dims, "bench", &x))
    die("alloc", NULL);
  for (int64_t i = 0; i < n; i++)
    ((float *)x.data)[i] = (float)(i % 1000) * 0.001f;
  time_call(jit, rt, &x, 2); // warm-up: module loads, first allocations
  printf("| benchmark | result |\n|---|---|\n");
  const int64_t iters = 50;
  double t0 = median_call(jit, rt, &x, 0, 5);
  double tn = median_call(jit, rt, &x, iters, 5);
  double per = (tn - t0) / (double)iters;
  double bw = 8.0 * (double)n / per;
  double copy = copy_bandwidth((size_t)n * 4);
  printf("| chain, 64M f32, per iteration | %.1f us, %.0f GB/s (%.2fx of "
         "the device's copy, %.0f GB/s) |\n",
         per * 1e6, bw * 1e-9, copy > 0 ? bw / copy : 0.0, copy * 1e-9);
  eddy_cpu_jit_destroy(jit);
  eddy_rt_tensor_release(&x);
  // loop: a scalar body; time per iteration.
  chain_text(text, 1 << 16, 1);
  jit = jit_text(ctx, text, "chain");
  int64_t one[1] = {1};
  if (eddy_rt_tensor_create(rt, EDDY_RT_F32, 1, one, "bench", &x))
    die("alloc", NULL);
  ((float *)x.data)[0] = 0.5f;
  time_call(jit, rt, &x, 2);
  const int64_t loop_iters = 10000;
  t0 = median_call(jit, rt, &x, 0, 5);
  tn = median_call(jit, rt, &x, loop_iters, 5);
  printf("| small-body loop, per iteration | %.2f us |\n",
         (tn - t0) / (double)loop_iters * 1e6);
  eddy_cpu_jit_destroy(jit);
  eddy_rt_tensor_release(&x);
  free(text);
  eddy_rt_ctx_destroy(rt);
  eddy_ir_ctx_destroy(ctx);
  return 0;
}

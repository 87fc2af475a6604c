/// CPU backend benchmarks (issue 5): each compiled program is JIT-compiled
/// in-process and timed against a reference measured in the same run:
///   loop    x = x*a + b run 1e8 times, vs the same loop in C (-O2)
///   chain   8 fused elementwise ops on 16M floats, vs a copy kernel's
///           memory bandwidth
///   matmul  256^3 and 1024^3 f32, one thread, vs cblas_sgemm (OpenBLAS)
///           (and eddy's tiled kernel, and the inline loop nest)
///   rnn     Elman RNN (hidden 256, batch 32, 100 steps), forward and
///           forward+backward (eddy_ad_grad): time per step, compiled vs
///           the reference evaluator
///   lstm    the same for an LSTM (hidden 256, batch 32, 100 steps)
///   classes n^3 matmuls for small n, inline loop nest vs runtime call (the
///           size-class threshold)
///   gemm    eddy_rt_sgemm's size classes (the RNN's 32x256x256 and
///           256x256x32, the LSTM's, up to 1024^3): eddy's tiled kernel per micro-kernel,
///           OpenBLAS on one thread and on all, and AUTO, interleaved;
///           medians (not in the default set: run `eddy_cpu_bench gemm`)
///   gemv    matrix-vector products of m x m, one loop step each (the
///           product, then tanh of the result as the next vector), on one
///           thread and on two, interleaved, with the pool's hand-off
///           time (not in the default set: run `eddy_cpu_bench gemv`)
/// Prints Markdown tables of ratios (bench/README.md keeps the latest).
/// Not a test: run `ninja eddy_cpu_bench && ./bench/eddy_cpu_bench [NAME...]`.
#define _POSIX_C_SOURCE 200809L
#include "autodiff/ad.h"
#include "backend-cpu/cpu.h"
#include "dialects/dialects.h"
#include "ir/ir.h"
#include "runtime/eval/eval.h"
#include "runtime/rt_internal.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef EDDY_BENCH_CBLAS
void cblas_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha,
                 const float *a, int lda, const float *b, int ldb, float beta,
                 float *c, int ldc);
void openblas_set_num_threads(int n);
int openblas_get_num_procs(void);
#endif

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/// An allocator hook that keeps freed blocks for reuse, so repeated calls do
/// not pay for fresh pages (what an application running a model in a loop
/// would do). The context's pool threads call it too, so it takes a lock.
typedef struct cache {
  pthread_mutex_t mu;
  void *ptr[8];
  size_t size[8];
} cache_t;

static void *cache_alloc(void *user, size_t size, size_t align) {
  cache_t *c = user;
  void *p = NULL;
  pthread_mutex_lock(&c->mu);
  for (int i = 0; i < 8 && !p; i++)
    if (c->ptr[i] && c->size[i] == size) {
      p = c->ptr[i];
      c->ptr[i] = NULL;
    }
  pthread_mutex_unlock(&c->mu);
  return p ? p : aligned_alloc(align, (size + align - 1) / align * align);
}

static void cache_free(void *user, void *ptr, size_t size) {
  cache_t *c = user;
  pthread_mutex_lock(&c->mu);
  for (int i = 0; i < 8; i++)
    if (!c->ptr[i]) {
      c->ptr[i] = ptr;
      c->size[i] = size;
      pthread_mutex_unlock(&c->mu);
      return;
    }
  pthread_mutex_unlock(&c->mu);
  free(ptr);
}

typedef struct bench {
  eddy_ctx_t *ctx;
  eddy_rt_ctx_t *rt;
  cache_t cache;
} bench_t;

static void die(eddy_status_t st) {
  if (st) {
    eddy_status_print(st, stderr);
    exit(1);
  }
}

/// JIT-compiles @f of text; reports the compile time.
static eddy_cpu_jit_t *jit(bench_t *b, const char *text, double *out_secs) {
  eddy_module_t *m = NULL;
  die(eddy_ir_parse_module(b->ctx, "bench.eddy", text, strlen(text), &m));
  die(eddy_ir_verify_module(m));
  eddy_cpu_jit_t *j = NULL;
  double t0 = now();
  die(eddy_cpu_jit_create(m, "f", NULL, &j));
  *out_secs = now() - t0;
  eddy_ir_module_destroy(m);
  return j;
}

/// Best time of `reps` calls.
static double time_calls(bench_t *b, eddy_cpu_jit_t *j,
                         const eddy_rt_tensor_t *args, int reps,
                         eddy_rt_tensor_t *out) {
  double best = 1e30;
  for (int r = 0; r < reps; r++) {
    eddy_rt_tensor_t res[1];
    double t0 = now();
    die(eddy_cpu_jit_run(j, b->rt, args, res));
    double t = now() - t0;
    if (t < best)
      best = t;
    if (r == reps - 1 && out)
      *out = res[0];
    else
      eddy_rt_tensor_release(&res[0]);
  }
  return best;
}

static void bench_loop(bench_t *b) {
  static const char text[] =
      "module {\nfunc.func @f(%arg0: tensor<f32>, %arg1: tensor<f32>, %arg2: "
      "tensor<f32>, %arg3: tensor<i64>) -> tensor<f32> {\n"
      "%0 = \"core.constant\"() {value = dense<0> : tensor<i64>} : () -> "
      "tensor<i64>\n"
      "%1:2 = \"ctl.while\"(%0, %arg0) ({\n"
      "^bb0(%arg4: tensor<i64>, %arg5: tensor<f32>):\n"
      "%2 = \"core.lt\"(%arg4, %arg3) : (tensor<i64>, tensor<i64>) -> "
      "tensor<i1>\n"
      "\"ctl.condition\"(%2) : (tensor<i1>) -> ()\n}, {\n"
      "^bb0(%arg6: tensor<i64>, %arg7: tensor<f32>):\n"
      "%3 = \"core.constant\"() {value = dense<1> : tensor<i64>} : () -> "
      "tensor<i64>\n"
      "%4 = \"core.add\"(%arg6, %3) : (tensor<i64>, tensor<i64>) -> "
      "tensor<i64>\n"
      "%5 = \"core.mul\"(%arg7, %arg1) : (tensor<f32>, tensor<f32>) -> "
      "tensor<f32>\n"
      "%6 = \"core.add\"(%5, %arg2) : (tensor<f32>, tensor<f32>) -> "
      "tensor<f32>\n"
      "\"ctl.yield\"(%4, %6) : (tensor<i64>, tensor<f32>) -> ()\n"
      "}) : (tensor<i64>, tensor<f32>) -> (tensor<i64>, tensor<f32>)\n"
      "\"func.return\"(%1#1) : (tensor<f32>) -> ()\n}\n}\n";
  double ct;
  eddy_cpu_jit_t *j = jit(b, text, &ct);
  float x = 0.5f, a = 0.999f, c = 0.001f;
  int64_t n = 100000000;
  eddy_rt_tensor_t args[4], out;
  eddy_rt_tensor_wrap(EDDY_RT_F32, 0, NULL, &x, &args[0]);
  eddy_rt_tensor_wrap(EDDY_RT_F32, 0, NULL, &a, &args[1]);
  eddy_rt_tensor_wrap(EDDY_RT_F32, 0, NULL, &c, &args[2]);
  eddy_rt_tensor_wrap(EDDY_RT_I64, 0, NULL, &n, &args[3]);
  double tc = time_calls(b, j, args, 3, &out);
  float got = *(float *)out.data;
  eddy_rt_tensor_release(&out);
  // The same loop in C; volatile inputs keep it from being folded.
  volatile float vx = x, va = a, vc = c;
  volatile int64_t vn = n;
  double best = 1e30;
  float want = 0;
  for (int r = 0; r < 3; r++) {
    double t0 = now();
    float y = vx, aa = va, cc = vc;
    for (int64_t i = 0, e = vn; i < e; i++)
      y = y * aa + cc;
    double t = now() - t0;
    want = y;
    if (t < best)
      best = t;
  }
  printf("| loop x = x*a + b, 1e8 iterations | %.3f s | C -O2: %.3f s | %.2fx "
         "(target <= 1.5x) | %.0f ms | %s |\n",
         tc, best, tc / best, ct * 1e3,
         got == want ? "same result" : "DIFFERS");
  eddy_cpu_jit_destroy(j);
}

static void bench_chain(bench_t *b) {
  const int64_t n = 16 * 1024 * 1024;
  char *text = malloc(8192);
  const char *T = "tensor<16777216xf32>";
  snprintf(text, 8192,
           "module {\nfunc.func @f(%%arg0: %s) -> %s {\n"
           "%%c0 = \"core.constant\"() {value = dense<1.5> : tensor<f32>} : () "
           "-> tensor<f32>\n"
           "%%c1 = \"core.constant\"() {value = dense<-0.25> : tensor<f32>} : "
           "() -> tensor<f32>\n"
           "%%0 = \"core.mul\"(%%arg0, %%c0) : (%s, tensor<f32>) -> %s\n"
           "%%1 = \"core.add\"(%%0, %%c1) : (%s, tensor<f32>) -> %s\n"
           "%%2 = \"core.maximum\"(%%1, %%c1) : (%s, tensor<f32>) -> %s\n"
           "%%3 = \"core.mul\"(%%2, %%arg0) : (%s, %s) -> %s\n"
           "%%4 = \"core.sub\"(%%3, %%c0) : (%s, tensor<f32>) -> %s\n"
           "%%5 = \"core.abs\"(%%4) : (%s) -> %s\n"
           "%%6 = \"core.minimum\"(%%5, %%c0) : (%s, tensor<f32>) -> %s\n"
           "%%7 = \"core.add\"(%%6, %%arg0) : (%s, %s) -> %s\n"
           "\"func.return\"(%%7) : (%s) -> ()\n}\n}\n",
           T, T, T, T, T, T, T, T, T, T, T, T, T, T, T, T, T, T, T, T, T);
  double ct;
  eddy_cpu_jit_t *j = jit(b, text, &ct);
  free(text);
  float *x = aligned_alloc(64, (size_t)n * 4),
        *y = aligned_alloc(64, (size_t)n * 4);
  for (int64_t i = 0; i < n; i++)
    x[i] = (float)(i % 1000) * 0.001f;
  eddy_rt_tensor_t args[1];
  eddy_rt_tensor_wrap(EDDY_RT_F32, 1, &n, x, &args[0]);
  double tc = time_calls(b, j, args, 5, NULL);
  double best = 1e30;
  for (int r = 0; r < 5; r++) {
    double t0 = now();
    for (int64_t i = 0; i < n; i++)
      y[i] = x[i];
    __asm__ volatile("" : : "r"(y) : "memory");
    double t = now() - t0;
    if (t < best)
      best = t;
  }
  double bytes = 2.0 * (double)n * 4.0;
  printf("| fused chain of 8 ops, 16M f32 | %.1f ms (%.1f GB/s) | copy kernel: "
         "%.1f ms (%.1f GB/s) | %.0f%% of copy bandwidth (target >= 70%%) | "
         "%.0f ms | |\n",
         tc * 1e3, bytes / tc * 1e-9, best * 1e3, bytes / best * 1e-9,
         100.0 * best / tc, ct * 1e3);
  free(x);
  free(y);
  eddy_cpu_jit_destroy(j);
}

/// The text of f(a: f32[m,k], b: f32[k,n]) = matmul(a, b).
static void matmul_text(char *text, size_t size, int64_t m, int64_t n,
                        int64_t k) {
  snprintf(text, size,
           "module {\nfunc.func @f(%%arg0: tensor<%lldx%lldxf32>, %%arg1: "
           "tensor<%lldx%lldxf32>) -> tensor<%lldx%lldxf32> {\n"
           "%%0 = \"core.matmul\"(%%arg0, %%arg1) : (tensor<%lldx%lldxf32>, "
           "tensor<%lldx%lldxf32>) -> tensor<%lldx%lldxf32>\n"
           "\"func.return\"(%%0) : (tensor<%lldx%lldxf32>) -> ()\n}\n}\n",
           (long long)m, (long long)k, (long long)k, (long long)n, (long long)m,
           (long long)n, (long long)m, (long long)k, (long long)k, (long long)n,
           (long long)m, (long long)n, (long long)m, (long long)n);
}

/// JIT-compiles the matmul with the given matmul_call_min (0: default).
static eddy_cpu_jit_t *jit_matmul(bench_t *b, int64_t n, int64_t call_min,
                                  double *out_secs) {
  char text[1024];
  matmul_text(text, sizeof text, n, n, n);
  eddy_module_t *m = NULL;
  die(eddy_ir_parse_module(b->ctx, "bench.eddy", text, strlen(text), &m));
  die(eddy_ir_verify_module(m));
  eddy_cpu_opts_t o = eddy_cpu_opts_default();
  o.matmul_call_min = call_min;
  eddy_cpu_jit_t *j = NULL;
  double t0 = now();
  die(eddy_cpu_jit_create(m, "f", &o, &j));
  *out_secs = now() - t0;
  eddy_ir_module_destroy(m);
  return j;
}

/// Best over 3 rounds of the mean time of `iters` calls.
static double time_mean(bench_t *b, eddy_cpu_jit_t *j,
                        const eddy_rt_tensor_t *args, int iters) {
  double best = 1e30;
  for (int r = 0; r < 3; r++) {
    double t0 = now();
    for (int i = 0; i < iters; i++) {
      eddy_rt_tensor_t res[1];
      die(eddy_cpu_jit_run(j, b->rt, args, res));
      eddy_rt_tensor_release(&res[0]);
    }
    double t = (now() - t0) / iters;
    if (t < best)
      best = t;
  }
  return best;
}

/// Best time of `reps` direct calls of eddy_rt_sgemm with impl.
static double time_sgemm(bench_t *b, int32_t impl, int64_t n, const float *a,
                         const float *bb, float *c, int reps) {
  double best = 1e30;
  for (int r = 0; r < reps; r++) {
    double t0 = now();
    eddy_rt_sgemm(b->rt, impl, 0, n, n, n, a, n, bb, n, c, n);
    double t = now() - t0;
    if (t < best)
      best = t;
  }
  return best;
}

/// n^3 f32: the compiled matmul (default size classes: a call of the
/// runtime's sgemm, i.e. OpenBLAS when libeddyrt has it), the inline loop
/// nest, eddy's tiled kernel called directly, and OpenBLAS called directly,
/// all on one thread in this run.
static void bench_matmul(bench_t *b, int64_t n) {
  double ct, cti;
  eddy_cpu_jit_t *j = jit_matmul(b, n, 0, &ct);
  eddy_cpu_jit_t *ji = jit_matmul(b, n, INT64_MAX, &cti);
  size_t bytes = (size_t)(n * n) * 4;
  float *a = aligned_alloc(64, bytes), *bb = aligned_alloc(64, bytes);
  float *c = aligned_alloc(64, bytes);
  for (int64_t i = 0; i < n * n; i++) {
    a[i] = (float)((i * 7) % 13) * 0.1f - 0.6f;
    bb[i] = (float)((i * 5) % 11) * 0.1f - 0.5f;
  }
  int64_t dims[2] = {n, n};
  eddy_rt_tensor_t args[2];
  eddy_rt_tensor_wrap(EDDY_RT_F32, 2, dims, a, &args[0]);
  eddy_rt_tensor_wrap(EDDY_RT_F32, 2, dims, bb, &args[1]);
  int reps = n <= 256 ? 10 : 3;
  double tc = time_calls(b, j, args, reps, NULL);
  double ti = time_calls(b, ji, args, n <= 256 ? reps : 1, NULL);
  double tt = time_sgemm(b, EDDY_RT_GEMM_TILED, n, a, bb, c, reps);
  double flops = 2.0 * (double)n * (double)n * (double)n;
#ifdef EDDY_BENCH_CBLAS
  double best = 1e30;
  for (int r = 0; r < reps; r++) {
    double t0 = now();
    cblas_sgemm(101 /* row major */, 111, 111, (int)n, (int)n, (int)n, 1.0f, a,
                (int)n, bb, (int)n, 0.0f, c, (int)n);
    double t = now() - t0;
    if (t < best)
      best = t;
  }
  // What the compiled matmul's call of eddy_rt_sgemm (AUTO) runs.
  eddy_rt_gemm_plan_t plan;
  eddy_rt_gemm_plan_get(&plan);
  bool auto_blas =
      (n * n * n <= plan.tiny_work || n * n * n > plan.small_work) &&
      plan.large == EDDY_RT_GEMM_BLAS;
  printf("| matmul %lld^3 f32, 1 thread (compiled: %s) | %.2f ms (%.0f "
         "GFLOP/s) | OpenBLAS: %.2f ms (%.0f GFLOP/s) | %.2fx of OpenBLAS "
         "(target >= 0.8x) | %.0f ms | |\n",
         (long long)n, auto_blas ? "OpenBLAS call" : "tiled kernel call",
         tc * 1e3, flops / tc * 1e-9, best * 1e3, flops / best * 1e-9,
         best / tc, ct * 1e3);
  printf("| same, eddy's tiled kernel (runtime/gemm.c, direct) | %.2f ms (%.0f "
         "GFLOP/s) | OpenBLAS | %.2fx of OpenBLAS | | |\n",
         tt * 1e3, flops / tt * 1e-9, best / tt);
  printf("| same, inline loop nest (exact f64 accumulation) | %.2f ms (%.0f "
         "GFLOP/s) | OpenBLAS | %.2fx of OpenBLAS | %.0f ms | |\n",
         ti * 1e3, flops / ti * 1e-9, best / ti, cti * 1e3);
#else
  printf("| matmul %lld^3 f32, 1 thread (compiled: tiled kernel) | %.2f ms "
         "(%.0f GFLOP/s) | OpenBLAS not found at build time | | %.0f ms | |\n",
         (long long)n, tc * 1e3, flops / tc * 1e-9, ct * 1e3);
  printf("| same, inline loop nest (exact f64 accumulation) | %.2f ms (%.0f "
         "GFLOP/s) | | | %.0f ms | |\n",
         ti * 1e3, flops / ti * 1e-9, cti * 1e3);
#endif
  free(a);
  free(bb);
  free(c);
  eddy_cpu_jit_destroy(j);
  eddy_cpu_jit_destroy(ji);
}

/// The size classes: n^3 f32 compiled as the inline loop nest and as a call
/// of the runtime's sgemm, per call (entry checks and result allocation
/// included, the same in both).
static void bench_matmul_classes(bench_t *b) {
  static const int64_t sizes[] = {4, 8, 16, 32, 48, 64, 96, 128};
  printf("\n| n (n^3 f32 matmul) | inline loop nest | runtime call | inline / "
         "call |\n|---|---|---|---|\n");
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    int64_t n = sizes[s];
    double ct;
    eddy_cpu_jit_t *ji = jit_matmul(b, n, INT64_MAX, &ct);
    eddy_cpu_jit_t *jc = jit_matmul(b, n, 1, &ct);
    float *a = malloc((size_t)(n * n) * 4), *bb = malloc((size_t)(n * n) * 4);
    for (int64_t i = 0; i < n * n; i++) {
      a[i] = (float)((i * 7) % 13) * 0.1f - 0.6f;
      bb[i] = (float)((i * 5) % 11) * 0.1f - 0.5f;
    }
    int64_t dims[2] = {n, n};
    eddy_rt_tensor_t args[2];
    eddy_rt_tensor_wrap(EDDY_RT_F32, 2, dims, a, &args[0]);
    eddy_rt_tensor_wrap(EDDY_RT_F32, 2, dims, bb, &args[1]);
    int iters = (int)(20000000 / (n * n * n) + 10);
    double ti = time_mean(b, ji, args, iters);
    double tc = time_mean(b, jc, args, iters);
    printf("| %lld | %.2f us | %.2f us | %.2f |\n", (long long)n, ti * 1e6,
           tc * 1e6, ti / tc);
    free(a);
    free(bb);
    eddy_cpu_jit_destroy(ji);
    eddy_cpu_jit_destroy(jc);
  }
}

/// One product of bench_gemm: C = op(A) op(B), m x n x k.
typedef struct gemm_shape {
  int64_t m, n, k;
  int32_t trans;
  const char *where; ///< where it comes from
} gemm_shape_t;

enum { GEMM_TILED512, GEMM_TILED2, GEMM_BLAS1, GEMM_BLASN, GEMM_AUTO, GEMM_N };

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

/// Mean time of one product over `calls` calls of implementation which.
static double gemm_sample(bench_t *b, int which, const gemm_shape_t *g,
                          int calls, const float *a, const float *bb,
                          float *c) {
  bool ta = g->trans & 1, tb = g->trans & 2;
  int64_t lda = ta ? g->m : g->k, ldb = tb ? g->k : g->n;
  double t0 = now();
  for (int i = 0; i < calls; i++) {
    switch (which) {
    case GEMM_TILED512:
    case GEMM_TILED2:
      rt_sgemm_tiled(b->rt,
                     which == GEMM_TILED512 ? EDDY_RT_ISA_AVX512
                                            : EDDY_RT_ISA_AVX2,
                     g->trans, g->m, g->n, g->k, a, lda, bb, ldb, c, g->n);
      break;
    case GEMM_AUTO:
      eddy_rt_sgemm(b->rt, EDDY_RT_GEMM_AUTO, g->trans, g->m, g->n, g->k, a,
                    lda, bb, ldb, c, g->n);
      break;
    default:
#ifdef EDDY_BENCH_CBLAS
      cblas_sgemm(101 /* row major */, ta ? 112 : 111, tb ? 112 : 111,
                  (int)g->m, (int)g->n, (int)g->k, 1.0f, a, (int)lda, bb,
                  (int)ldb, 0.0f, c, (int)g->n);
#endif
      break;
    }
  }
  return (now() - t0) / calls;
}

/// eddy_rt_sgemm's size classes: every implementation on the same operands,
/// interleaved sample by sample (so load from other processes falls on all
/// of them alike); the median per implementation and, in parentheses, the
/// spread: interquartile range / median (on a shared machine the slowest
/// samples are other processes' time slices).
static void bench_gemm(bench_t *b) {
  static const gemm_shape_t shapes[] = {
      {32, 256, 256, 0, "RNN step: x W, h U"},
      {256, 256, 32, 1, "RNN gradient: x^T dy"},
      {32, 256, 256, 2, "RNN gradient: dy U^T"},
      {32, 1024, 256, 0, "LSTM step: x W, h U"},
      {256, 1024, 32, 1, "LSTM gradient: x^T dz"},
      {32, 1024, 512, 0, "[x h] W in one product"},
      {64, 64, 64, 0, "map_fn item"},
      {256, 256, 256, 0, "cpu_bench target"},
      {1024, 1024, 1024, 0, "cpu_bench target"},
  };
  eddy_rt_gemm_plan_t plan;
  eddy_rt_gemm_plan_get(&plan);
  bool has512 = plan.cpu_isa >= EDDY_RT_ISA_AVX512;
  bool has2 = plan.cpu_isa >= EDDY_RT_ISA_AVX2;
  int procs = 1;
#ifdef EDDY_BENCH_CBLAS
  procs = openblas_get_num_procs();
#endif
  printf("\n| m x n x k (trans) | from | tiled avx512 | tiled avx2 | OpenBLAS "
         "1 thread | OpenBLAS %d threads | AUTO | AUTO ran |\n"
         "|---|---|---|---|---|---|---|---|\n",
         procs);
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    const gemm_shape_t *g = &shapes[s];
    size_t asz = (size_t)(g->m * g->k), bsz = (size_t)(g->k * g->n);
    float *a = malloc(asz * 4), *bb = malloc(bsz * 4);
    float *c = malloc((size_t)(g->m * g->n) * 4);
    for (size_t i = 0; i < asz; i++)
      a[i] = (float)((i * 7) % 13) * 0.1f - 0.6f;
    for (size_t i = 0; i < bsz; i++)
      bb[i] = (float)((i * 5) % 11) * 0.1f - 0.5f;
    double work = (double)g->m * (double)g->n * (double)g->k;
    // About 1 ms a sample, at least one call.
    int calls = (int)(1e-3 * 20e9 / work);
    calls = calls < 1 ? 1 : calls;
    int samples = work > 1e8 ? 7 : 41;
    double t[GEMM_N][41];
    int32_t ran = eddy_rt_sgemm(b->rt, EDDY_RT_GEMM_AUTO, g->trans, g->m, g->n,
                                g->k, a, g->trans & 1 ? g->m : g->k, bb,
                                g->trans & 2 ? g->k : g->n, c, g->n);
    for (int r = 0; r < samples; r++) {
      for (int w = 0; w < GEMM_N; w++) {
        if ((w == GEMM_TILED512 && !has512) || (w == GEMM_TILED2 && !has2))
          continue;
#ifdef EDDY_BENCH_CBLAS
        openblas_set_num_threads(w == GEMM_BLAS1 ? 1 : procs);
#endif
        t[w][r] = gemm_sample(b, w, g, calls, a, bb, c);
      }
    }
#ifdef EDDY_BENCH_CBLAS
    openblas_set_num_threads(1);
#endif
    printf("| %lldx%lldx%lld (%d) | %s |", (long long)g->m, (long long)g->n,
           (long long)g->k, g->trans, g->where);
    for (int w = 0; w < GEMM_N; w++) {
      if ((w == GEMM_TILED512 && !has512) || (w == GEMM_TILED2 && !has2)) {
        printf(" - |");
        continue;
      }
      qsort(t[w], (size_t)samples, sizeof(double), cmp_double);
      double med = t[w][samples / 2];
      printf(" %.1f us (%.0f%%) |", med * 1e6,
             (t[w][samples * 3 / 4] - t[w][samples / 4]) / med * 100);
    }
    printf(" %s |\n", ran == EDDY_RT_GEMM_BLAS ? "OpenBLAS" : "tiled");
    free(a);
    free(bb);
    free(c);
  }
}

/// Steps of x <- tanh(W x) with W m x m: the matrix-vector product through
/// eddy_rt_sgemm on ctx, then the map on the calling thread, as in a loop
/// body. Mean time of one step over `steps` steps.
static double gemv_steps(eddy_rt_ctx_t *ctx, int64_t m, int steps,
                         const float *w, float *x, float *y) {
  double t0 = now();
  for (int s = 0; s < steps; s++) {
    eddy_rt_sgemm(ctx, EDDY_RT_GEMM_AUTO, 0, m, 1, m, w, m, x, 1, y, 1);
    for (int64_t i = 0; i < m; i++)
      x[i] = tanhf(y[i]);
  }
  return (now() - t0) / steps;
}

/// Whether the matrix-vector products of a loop gain from the second core
/// (runtime/gemm.c's split rules): the medians of one-thread and
/// two-thread samples, interleaved, and the two-thread pool's hand-off time
/// after them (0: not measured recently, so near enough).
static void bench_gemv(void) {
  static const int64_t sizes[] = {256, 384, 512, 768, 1024, 2048};
  eddy_rt_ctx_t *ctx[2];
  for (int t = 0; t < 2; t++) {
    eddy_rt_ctx_options_t o = eddy_rt_ctx_options_default();
    o.num_threads = t + 1;
    if (eddy_rt_ctx_create(&o, &ctx[t])) {
      fprintf(stderr, "cannot create the runtime context\n");
      exit(1);
    }
  }
  printf("\n| m x m matrix-vector step | multiply-adds | 1 thread | 2 threads | "
         "2 / 1 | hand-off |\n|---|---|---|---|---|---|\n");
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    int64_t m = sizes[s];
    float *w = malloc(sizeof(float) * (size_t)(m * m));
    float *x = malloc(sizeof(float) * (size_t)m);
    float *y = malloc(sizeof(float) * (size_t)m);
    for (int64_t i = 0; i < m * m; i++)
      w[i] = ((float)((i * 7919) % 1000) * 1e-3f - 0.5f) / (float)m;
    for (int64_t i = 0; i < m; i++)
      x[i] = 0.1f;
    // About 2 ms a sample.
    int steps = (int)(2e-3 * 20e9 / (double)(m * m));
    steps = steps < 20 ? 20 : steps;
    enum { SAMPLES = 15 };
    double t[2][SAMPLES];
    for (int r = 0; r < SAMPLES; r++)
      for (int k = 0; k < 2; k++)
        t[k][r] = gemv_steps(ctx[k], m, steps, w, x, y);
    for (int k = 0; k < 2; k++)
      qsort(t[k], SAMPLES, sizeof(double), cmp_double);
    double t1 = t[0][SAMPLES / 2], t2 = t[1][SAMPLES / 2];
    printf("| %lld | %lld | %.2f us | %.2f us | %.2f | %lld ns |\n",
           (long long)m, (long long)(m * m), t1 * 1e6, t2 * 1e6, t2 / t1,
           (long long)rt_pool_handoff_ns(eddy_rt_ctx_pool(ctx[1])));
    free(w);
    free(x);
    free(y);
  }
  for (int t = 0; t < 2; t++)
    eddy_rt_ctx_destroy(ctx[t]);
}

/// The Elman RNN: h <- tanh(x_t W + h U + b) for t < 100, loss = sum(h).
static const char k_rnn[] =
    "module {\nfunc.func @rnn(%arg0: tensor<100x32x256xf32>, %arg1: "
    "tensor<256x256xf32>, %arg2: tensor<256x256xf32>, %arg3: tensor<256xf32>) "
    "-> tensor<f32> {\n"
    "%0 = \"core.constant\"() {value = dense<0.0> : tensor<32x256xf32>} : () "
    "-> tensor<32x256xf32>\n"
    "%1 = \"core.constant\"() {value = dense<0> : tensor<i64>} : () -> "
    "tensor<i64>\n"
    "%2:2 = \"ctl.while\"(%1, %0) ({\n"
    "^bb0(%arg4: tensor<i64>, %arg5: tensor<32x256xf32>):\n"
    "%3 = \"core.constant\"() {value = dense<100> : tensor<i64>} : () -> "
    "tensor<i64>\n"
    "%4 = \"core.lt\"(%arg4, %3) : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
    "\"ctl.condition\"(%4) : (tensor<i1>) -> ()\n"
    "}, {\n"
    "^bb0(%arg6: tensor<i64>, %arg7: tensor<32x256xf32>):\n"
    "%5 = \"core.gather\"(%arg0, %arg6) {axis = 0} : (tensor<100x32x256xf32>, "
    "tensor<i64>) -> tensor<32x256xf32>\n"
    "%6 = \"core.matmul\"(%5, %arg1) : (tensor<32x256xf32>, "
    "tensor<256x256xf32>) -> tensor<32x256xf32>\n"
    "%7 = \"core.matmul\"(%arg7, %arg2) : (tensor<32x256xf32>, "
    "tensor<256x256xf32>) -> tensor<32x256xf32>\n"
    "%8 = \"core.add\"(%6, %7) : (tensor<32x256xf32>, tensor<32x256xf32>) -> "
    "tensor<32x256xf32>\n"
    "%9 = \"core.add\"(%8, %arg3) : (tensor<32x256xf32>, tensor<256xf32>) -> "
    "tensor<32x256xf32>\n"
    "%10 = \"core.tanh\"(%9) : (tensor<32x256xf32>) -> tensor<32x256xf32>\n"
    "%11 = \"core.constant\"() {value = dense<1> : tensor<i64>} : () -> "
    "tensor<i64>\n"
    "%12 = \"core.add\"(%arg6, %11) : (tensor<i64>, tensor<i64>) -> "
    "tensor<i64>\n"
    "\"ctl.yield\"(%12, %10) : (tensor<i64>, tensor<32x256xf32>) -> ()\n"
    "}) : (tensor<i64>, tensor<32x256xf32>) -> (tensor<i64>, "
    "tensor<32x256xf32>)\n"
    "%13 = \"core.reduce_sum\"(%2#1) {axes = [0, 1]} : (tensor<32x256xf32>) -> "
    "tensor<f32>\n"
    "\"func.return\"(%13) : (tensor<f32>) -> ()\n}\n}\n";

/// The LSTM: gates = x_t Wx + h Wh + b (32x1024), split in four (i, f, o, g),
/// c <- sigmoid(f) c + sigmoid(i) tanh(g), h <- sigmoid(o) tanh(c), for
/// t < 100, loss = sum(h).
static const char k_lstm[] =
    "module {\nfunc.func @lstm(%arg0: tensor<100x32x256xf32>, %arg1: "
    "tensor<256x1024xf32>, %arg2: tensor<256x1024xf32>, %arg3: "
    "tensor<1024xf32>) -> tensor<f32> {\n"
    "%0 = \"core.constant\"() {value = dense<0.0> : tensor<32x256xf32>} : () "
    "-> tensor<32x256xf32>\n"
    "%1 = \"core.constant\"() {value = dense<0> : tensor<i64>} : () -> "
    "tensor<i64>\n"
    "%2:3 = \"ctl.while\"(%1, %0, %0) ({\n"
    "^bb0(%t: tensor<i64>, %h: tensor<32x256xf32>, %c: tensor<32x256xf32>):\n"
    "%n = \"core.constant\"() {value = dense<100> : tensor<i64>} : () -> "
    "tensor<i64>\n"
    "%p = \"core.lt\"(%t, %n) : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
    "\"ctl.condition\"(%p) : (tensor<i1>) -> ()\n"
    "}, {\n"
    "^bb0(%t2: tensor<i64>, %h2: tensor<32x256xf32>, %c2: "
    "tensor<32x256xf32>):\n"
    "%xt = \"core.gather\"(%arg0, %t2) {axis = 0} : "
    "(tensor<100x32x256xf32>, tensor<i64>) -> tensor<32x256xf32>\n"
    "%gx = \"core.matmul\"(%xt, %arg1) : (tensor<32x256xf32>, "
    "tensor<256x1024xf32>) -> tensor<32x1024xf32>\n"
    "%gh = \"core.matmul\"(%h2, %arg2) : (tensor<32x256xf32>, "
    "tensor<256x1024xf32>) -> tensor<32x1024xf32>\n"
    "%gs = \"core.add\"(%gx, %gh) : (tensor<32x1024xf32>, "
    "tensor<32x1024xf32>) -> tensor<32x1024xf32>\n"
    "%gb = \"core.add\"(%gs, %arg3) : (tensor<32x1024xf32>, "
    "tensor<1024xf32>) -> tensor<32x1024xf32>\n"
    "%q:4 = \"core.split\"(%gb) {axis = 1, num_splits = 4} : "
    "(tensor<32x1024xf32>) -> (tensor<32x256xf32>, tensor<32x256xf32>, "
    "tensor<32x256xf32>, tensor<32x256xf32>)\n"
    "%i = \"core.sigmoid\"(%q#0) : (tensor<32x256xf32>) -> "
    "tensor<32x256xf32>\n"
    "%f = \"core.sigmoid\"(%q#1) : (tensor<32x256xf32>) -> "
    "tensor<32x256xf32>\n"
    "%o = \"core.sigmoid\"(%q#2) : (tensor<32x256xf32>) -> "
    "tensor<32x256xf32>\n"
    "%g = \"core.tanh\"(%q#3) : (tensor<32x256xf32>) -> tensor<32x256xf32>\n"
    "%fc = \"core.mul\"(%f, %c2) : (tensor<32x256xf32>, tensor<32x256xf32>) "
    "-> tensor<32x256xf32>\n"
    "%ig = \"core.mul\"(%i, %g) : (tensor<32x256xf32>, tensor<32x256xf32>) "
    "-> tensor<32x256xf32>\n"
    "%cn = \"core.add\"(%fc, %ig) : (tensor<32x256xf32>, "
    "tensor<32x256xf32>) -> tensor<32x256xf32>\n"
    "%tc = \"core.tanh\"(%cn) : (tensor<32x256xf32>) -> tensor<32x256xf32>\n"
    "%hn = \"core.mul\"(%o, %tc) : (tensor<32x256xf32>, tensor<32x256xf32>) "
    "-> tensor<32x256xf32>\n"
    "%one = \"core.constant\"() {value = dense<1> : tensor<i64>} : () -> "
    "tensor<i64>\n"
    "%tn = \"core.add\"(%t2, %one) : (tensor<i64>, tensor<i64>) -> "
    "tensor<i64>\n"
    "\"ctl.yield\"(%tn, %hn, %cn) : (tensor<i64>, tensor<32x256xf32>, "
    "tensor<32x256xf32>) -> ()\n"
    "}) : (tensor<i64>, tensor<32x256xf32>, tensor<32x256xf32>) -> "
    "(tensor<i64>, tensor<32x256xf32>, tensor<32x256xf32>)\n"
    "%l = \"core.reduce_sum\"(%2#1) {axes = [0, 1]} : (tensor<32x256xf32>) "
    "-> tensor<f32>\n"
    "\"func.return\"(%l) : (tensor<f32>) -> ()\n}\n}\n";

/// Best time of `reps` evaluator runs of func.
static double time_eval(bench_t *b, const eddy_op_t *func,
                        const eddy_eval_value_t *args, size_t nargs,
                        size_t nres, int reps) {
  double best = 1e30;
  for (int r = 0; r < reps; r++) {
    eddy_eval_value_t res[8];
    double t0 = now();
    die(eddy_eval_func(b->rt, func, NULL, args, nargs, res, nres));
    double t = now() - t0;
    if (t < best)
      best = t;
    for (size_t i = 0; i < nres; i++)
      eddy_eval_value_release(&res[i]);
  }
  return best;
}

/// A recurrent network @entry(xs, W, U, b) -> loss and its gradient with
/// respect to W and U (eddy_ad_grad): time per step (100 steps), compiled
/// vs the reference evaluator.
static void bench_recurrent(bench_t *b, const char *label, const char *text,
                            const char *entry) {
  eddy_module_t *m = NULL;
  die(eddy_ir_parse_module(b->ctx, "rnn.eddy", text, strlen(text), &m));
  die(eddy_ir_verify_module(m));
  size_t wrt[2] = {1, 2};
  die(eddy_ad_grad(m, entry, wrt, 2, NULL, NULL));
  die(eddy_ir_verify_module(m));
  char gname[64];
  snprintf(gname, sizeof gname, "%s_grad", entry);
  eddy_op_t *fwd = eddy_ir_module_lookup_func(m, entry);
  eddy_op_t *bwd = eddy_ir_module_lookup_func(m, gname);
  const eddy_type_t *ft = eddy_ir_func_type(bwd);
  // Inputs: the four arguments and the seed (1.0), small random values.
  eddy_rt_tensor_t args[5];
  eddy_eval_value_t eargs[5];
  uint64_t seed = 7;
  for (uint32_t i = 0; i < ft->num_inputs && i < 5; i++) {
    const eddy_type_t *t = ft->inputs[i];
    if (eddy_rt_tensor_create(b->rt, (int32_t)t->dtype, t->rank, t->dims,
                              "bench", &args[i])) {
      fprintf(stderr, "out of memory\n");
      exit(1);
    }
    int64_t n = eddy_rt_tensor_numel(&args[i]);
    for (int64_t k = 0; k < n; k++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      double v = i == 4 ? 1.0 : ((double)(seed >> 40) / 16777216.0 - 0.5) * 0.1;
      eddy_rt_tensor_set_f64(&args[i], k, v);
    }
    eddy_rt_tensor_t copy;
    eddy_rt_tensor_share(&args[i], &copy);
    eargs[i] = eddy_eval_value_from_tensor(&copy);
  }
  double ctf, ctb;
  eddy_cpu_jit_t *jf = NULL, *jb = NULL;
  double t0 = now();
  die(eddy_cpu_jit_create(m, entry, NULL, &jf));
  ctf = now() - t0;
  t0 = now();
  die(eddy_cpu_jit_create(m, gname, NULL, &jb));
  ctb = now() - t0;
  double cf = 1e30, cb = 1e30;
  for (int r = 0; r < 3; r++) {
    eddy_rt_tensor_t res[3];
    t0 = now();
    die(eddy_cpu_jit_run(jf, b->rt, args, res));
    double t = now() - t0;
    cf = t < cf ? t : cf;
    eddy_rt_tensor_release(&res[0]);
    t0 = now();
    die(eddy_cpu_jit_run(jb, b->rt, args, res));
    t = now() - t0;
    cb = t < cb ? t : cb;
    for (int i = 0; i < 3; i++)
      eddy_rt_tensor_release(&res[i]);
  }
  double ef = time_eval(b, fwd, eargs, 4, 1, 1);
  double eb = time_eval(b, bwd, eargs, 5, 3, 1);
  printf("| %s, forward | %.3f ms/step | evaluator: %.3f ms/step | %.1fx "
         "faster | %.0f ms | |\n",
         label, cf * 10, ef * 10, ef / cf, ctf * 1e3);
  printf("| %s, forward+backward | %.3f ms/step | evaluator: %.3f ms/step | "
         "%.1fx faster | %.0f ms | |\n",
         label, cb * 10, eb * 10, eb / cb, ctb * 1e3);
  for (int i = 0; i < 5; i++) {
    eddy_rt_tensor_release(&args[i]);
    eddy_eval_value_release(&eargs[i]);
  }
  eddy_cpu_jit_destroy(jf);
  eddy_cpu_jit_destroy(jb);
  eddy_ir_module_destroy(m);
}

static bool wanted(int argc, char **argv, const char *name) {
  if (argc < 2)
    return true;
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], name) == 0)
      return true;
  return false;
}

int main(int argc, char **argv) {
#ifdef EDDY_BENCH_CBLAS
  // One thread for every OpenBLAS call, the compiled matmuls' included.
  openblas_set_num_threads(1);
#endif
  bench_t b;
  memset(&b, 0, sizeof b);
  pthread_mutex_init(&b.cache.mu, NULL);
  b.ctx = eddy_ir_ctx_create();
  eddy_dialects_register_all(b.ctx);
  eddy_rt_ctx_options_t o = eddy_rt_ctx_options_default();
  o.allocator.alloc = cache_alloc;
  o.allocator.free = cache_free;
  o.allocator.user = &b.cache;
  if (eddy_rt_ctx_create(&o, &b.rt)) {
    fprintf(stderr, "cannot create the runtime context\n");
    return 1;
  }
  eddy_rt_gemm_plan_t plan;
  eddy_rt_gemm_plan_get(&plan);
  printf("f32 matmul: CPU %s, tiled kernel %s, OpenBLAS core %s (%s); %s\n\n",
         eddy_rt_isa_name(plan.cpu_isa), eddy_rt_isa_name(plan.tiled_isa),
         plan.blas_core[0] ? plan.blas_core : "-",
         eddy_rt_isa_name(plan.blas_isa), plan.reason);
  printf("| benchmark | compiled | reference | ratio | JIT compile | note |\n");
  printf("|---|---|---|---|---|---|\n");
  if (wanted(argc, argv, "loop"))
    bench_loop(&b);
  if (wanted(argc, argv, "chain"))
    bench_chain(&b);
  if (wanted(argc, argv, "matmul")) {
    bench_matmul(&b, 256);
    bench_matmul(&b, 1024);
  }
  if (wanted(argc, argv, "rnn"))
    bench_recurrent(&b, "Elman RNN 256x32, 100 steps", k_rnn, "rnn");
  if (wanted(argc, argv, "lstm"))
    bench_recurrent(&b, "LSTM 256x32, 100 steps", k_lstm, "lstm");
  if (wanted(argc, argv, "classes"))
    bench_matmul_classes(&b);
  if (argc >= 2 && wanted(argc, argv, "gemm"))
    bench_gemm(&b);
  if (argc >= 2 && wanted(argc, argv, "gemv"))
    bench_gemv();
  eddy_rt_ctx_destroy(b.rt);
  for (int i = 0; i < 8; i++)
    free(b.cache.ptr[i]);
  pthread_mutex_destroy(&b.cache.mu);
  eddy_ir_ctx_destroy(b.ctx);
  return 0;
}

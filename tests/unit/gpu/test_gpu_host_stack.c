/// The GPU target's host code runs a loop of a million iterations on a
/// thread with a 256 KB stack: its stack use must not grow with the trip
/// count. Checked without a GPU: the host code is JIT-compiled for the CUDA
/// target and runs against the fake driver (tests/unit/runtime/fake_cuda.c),
/// whose kernels compute nothing and whose one-byte device-to-host copies
/// (the loop predicate) are scripted to read true a million times. Before
/// the host code released its kernel-argument arrays, the stack grew by
/// about a hundred bytes a launch and this thread overflowed after a few
/// thousand iterations. The same with the host code outlined into a
/// function per op (eddy_gpu_opts_t.outline_ops). Either way the kernels
/// are one GPU module, loaded once.
#define _POSIX_C_SOURCE 200809L

#include "backend-gpu/gpu.h"
#include "dialects/dialects.h"
#include "ir/ir.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/unit/gpu/fake_device.h"

#define TRIPS 1000000L
#define STACK_BYTES (256 * 1024)

/// A counted loop whose body is a fused elementwise chain: a counter
/// kernel, the chain's kernel and the predicate's kernel per iteration.
static const char k_loop[] =
    "module {\n"
    "  func.func @loop(%x: tensor<64xf32>, %n: tensor<i64>) -> "
    "tensor<64xf32> {\n"
    "    %z = \"core.constant\"() {value = dense<0> : tensor<i64>} : () -> "
    "tensor<i64>\n"
    "    %r:2 = \"ctl.while\"(%z, %x) ({\n"
    "    ^bb0(%i: tensor<i64>, %v: tensor<64xf32>):\n"
    "      %c = \"core.lt\"(%i, %n) : (tensor<i64>, tensor<i64>) -> "
    "tensor<i1>\n"
    "      \"ctl.condition\"(%c) : (tensor<i1>) -> ()\n"
    "    }, {\n"
    "    ^bb0(%i: tensor<i64>, %v: tensor<64xf32>):\n"
    "      %one = \"core.constant\"() {value = dense<1> : tensor<i64>} : () "
    "-> tensor<i64>\n"
    "      %i2 = \"core.add\"(%i, %one) : (tensor<i64>, tensor<i64>) -> "
    "tensor<i64>\n"
    "      %a = \"core.constant\"() {value = dense<0.5> : tensor<64xf32>} : "
    "() -> tensor<64xf32>\n"
    "      %m = \"core.mul\"(%v, %a) : (tensor<64xf32>, tensor<64xf32>) -> "
    "tensor<64xf32>\n"
    "      %t = \"core.tanh\"(%m) : (tensor<64xf32>) -> tensor<64xf32>\n"
    "      \"ctl.yield\"(%i2, %t) : (tensor<i64>, tensor<64xf32>) -> ()\n"
    "    }) : (tensor<i64>, tensor<64xf32>) -> (tensor<i64>, "
    "tensor<64xf32>)\n"
    "    \"func.return\"(%r#1) : (tensor<64xf32>) -> ()\n"
    "  }\n"
    "}\n";

typedef struct run {
  const eddy_cpu_jit_t *jit;
  eddy_rt_ctx_t *rt;
  eddy_rt_tensor_t args[2], result;
  int32_t code;
  char err[512];
} run_t;

static void *run_on_thread(void *arg) {
  run_t *r = arg;
  r->code = eddy_cpu_jit_entry(r->jit)(r->rt, r->args, &r->result, r->err,
                                        sizeof r->err);
  return NULL;
}

/// Compiles k_loop for the CUDA target with outline_ops (0: the default)
/// and runs TRIPS iterations on a thread with a STACK_BYTES stack against
/// the fake driver; the launches and device-to-host copies it made are
/// returned.
static void run_loop(void *cuda, size_t outline_ops, long *out_launches,
                     long *out_dtoh) {
  void (*script)(long);
  long (*stat)(const char *);
  knob(cuda, "fake_cuda_script_predicates", &script);
  knob(cuda, "fake_cuda_stat", &stat);
  eddy_gpu_opts_t g = eddy_gpu_opts_default();
  g.outline_ops = outline_ops;

  eddy_ctx_t *ctx = eddy_ir_ctx_create();
  assert_non_null(ctx);
  eddy_dialects_register_all(ctx);
  eddy_module_t *m = NULL;
  assert_null(eddy_ir_parse_module(ctx, "loop.eddy", k_loop,
                                   sizeof k_loop - 1, &m));
  assert_null(eddy_ir_verify_module(m));
  eddy_cpu_jit_t *jit = NULL;
  eddy_status_t st = eddy_gpu_jit_create(m, "loop", &g, &jit);
  if (st) {
    eddy_status_print(st, stderr);
    eddy_status_destroy(st);
    fail();
  }

  run_t r = {.jit = jit};
  assert_null(eddy_rt_ctx_create(NULL, &r.rt));
  int64_t d = 64, trips = TRIPS;
  assert_null(eddy_rt_tensor_create(r.rt, EDDY_RT_F32, 1, &d, "x", &r.args[0]));
  assert_null(eddy_rt_tensor_wrap(EDDY_RT_I64, 0, NULL, &trips, &r.args[1]));
  long launches = stat("launches"), dtoh = stat("dtoh_copies"),
       loads = stat("module_loads");
  script(TRIPS);
  pthread_attr_t attr;
  pthread_t th;
  assert_int_equal(pthread_attr_init(&attr), 0);
  assert_int_equal(pthread_attr_setstacksize(&attr, STACK_BYTES), 0);
  assert_int_equal(pthread_create(&th, &attr, run_on_thread, &r), 0);
  assert_int_equal(pthread_join(th, NULL), 0);
  pthread_attr_destroy(&attr);
  script(-1);
  if (r.code != 0)
    fail_msg("the loop failed: %d %s", r.code, r.err);
  *out_launches = stat("launches") - launches;
  *out_dtoh = stat("dtoh_copies") - dtoh;
  // The loop's kernels (the counter's, the chain's, the predicate's) are
  // one GPU module, loaded once.
  assert_int_equal(stat("module_loads") - loads, 1);

  eddy_rt_tensor_release(&r.result);
  eddy_rt_tensor_release(&r.args[0]);
  eddy_rt_ctx_destroy(r.rt);
  eddy_cpu_jit_destroy(jit);
  eddy_ir_module_destroy(m);
  eddy_ir_ctx_destroy(ctx);
}

/// The loop runs in constant stack, as one function and with its host code
/// split into a function per op (--outline-ops=1; each kernel stays
/// whole), and both make the same launches and predicate copies.
static void test_loop_host_code_uses_constant_stack(void **state) {
  (void)state;
  void *cuda, *cublas;
  fake_device_open(&cuda, &cublas);

  long launches, dtoh, split_launches, split_dtoh;
  run_loop(cuda, 0, &launches, &dtoh);
  // Every iteration launched its kernels and read its predicate.
  assert_true(launches >= 2 * TRIPS);
  assert_true(dtoh >= TRIPS + 1);
  run_loop(cuda, 1, &split_launches, &split_dtoh);
  assert_int_equal(split_launches, launches);
  assert_int_equal(split_dtoh, dtoh);
  dlclose(cuda);
  dlclose(cublas);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_loop_host_code_uses_constant_stack),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/// A run-time error of a CUDA list helper in compiled code keeps its
/// message: the call fails with the helper's text ("index 5 is out of range
/// for a list of length 2 ..."), located at the op, as on the CPU target.
/// Checked without a GPU: the host code is JIT-compiled for the CUDA target
/// and runs against the fake driver (tests/unit/runtime/fake_cuda.c). The
/// end of the call (eddy_rt_entry_cuda_end) used to clear the message, so
/// only "'tl.get_item' op: " was left.
#define _POSIX_C_SOURCE 200809L

#include "backend-gpu/gpu.h"
#include "dialects/dialects.h"
#include "ir/ir.h"

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

/// Item 0 of a list of two is set; item i is read.
static const char k_get[] =
    "module {\n"
    "  func.func @get(%i: tensor<i64>) -> tensor<4xf32> {\n"
    "    %n = \"core.constant\"() {value = dense<2> : tensor<i64>} : () -> "
    "tensor<i64>\n"
    "    %z = \"core.constant\"() {value = dense<0> : tensor<i64>} : () -> "
    "tensor<i64>\n"
    "    %x = \"core.constant\"() {value = dense<1.5> : tensor<4xf32>} : () "
    "-> tensor<4xf32>\n"
    "    %l = \"tl.reserve\"(%n) : (tensor<i64>) -> !tl.list<tensor<4xf32>>\n"
    "    %l2 = \"tl.set_item\"(%l, %z, %x) : (!tl.list<tensor<4xf32>>, "
    "tensor<i64>, tensor<4xf32>) -> !tl.list<tensor<4xf32>>\n"
    "    %y = \"tl.get_item\"(%l2, %i) : (!tl.list<tensor<4xf32>>, "
    "tensor<i64>) -> tensor<4xf32>\n"
    "    \"func.return\"(%y) : (tensor<4xf32>) -> ()\n"
    "  }\n"
    "}\n";

static void test_list_error_keeps_its_message(void **state) {
  (void)state;
  void *cuda, *cublas;
  fake_device_open(&cuda, &cublas);
  eddy_gpu_opts_t g = eddy_gpu_opts_default();

  eddy_ctx_t *ctx = eddy_ir_ctx_create();
  assert_non_null(ctx);
  eddy_dialects_register_all(ctx);
  eddy_module_t *m = NULL;
  assert_null(eddy_ir_parse_module(ctx, "get.eddy", k_get, sizeof k_get - 1,
                                   &m));
  assert_null(eddy_ir_verify_module(m));
  eddy_cpu_jit_t *jit = NULL;
  eddy_status_t st = eddy_gpu_jit_create(m, "get", &g, &jit);
  if (st) {
    eddy_status_print(st, stderr);
    eddy_status_destroy(st);
    fail();
  }
  eddy_rt_ctx_t *rt = NULL;
  assert_null(eddy_rt_ctx_create(NULL, &rt));
  int64_t index = 5;
  eddy_rt_tensor_t arg, res;
  assert_null(eddy_rt_tensor_wrap(EDDY_RT_I64, 0, NULL, &index, &arg));
  char err[512];
  int32_t code = eddy_cpu_jit_entry(jit)(rt, &arg, &res, err, sizeof err);
  assert_int_equal(code, EDDY_RT_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(err, "get.eddy:"));
  assert_non_null(strstr(err, "'tl.get_item' op: index 5 is out of range "
                              "for a list of length 2"));
  assert_null(res.data);
  // Within range, the call succeeds and clears nothing it should not.
  index = 0;
  code = eddy_cpu_jit_entry(jit)(rt, &arg, &res, err, sizeof err);
  if (code != 0)
    fail_msg("%d %s", code, err);
  eddy_rt_tensor_release(&res);
  assert_int_equal(eddy_rt_ctx_bytes_in_use(rt), 0);

  eddy_rt_ctx_destroy(rt);
  eddy_cpu_jit_destroy(jit);
  eddy_ir_module_destroy(m);
  eddy_ir_ctx_destroy(ctx);
  dlclose(cuda);
  dlclose(cublas);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_list_error_keeps_its_message),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

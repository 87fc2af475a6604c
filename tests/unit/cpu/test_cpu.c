/// Execution tests of the CPU backend: every program below is JIT-compiled
/// (fused and unfused) and run on pseudo-random inputs, and its results are
/// compared with the reference evaluator's: floats within a few ulp, ints
/// and bools exactly. Also: the entry's argument checks, unsupported input,
/// and object file emission.
#define _POSIX_C_SOURCE 200809L
#include "backend-cpu/cpu.h"
#include "dialects/dialects.h"
#include "ir/ir.h"
#include "runtime/eval/eval.h"

#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cpu_test_util.h"

typedef struct program {
  const char *name;
  const char *text; ///< one function @f
} program_t;

#define F "func.func @f"

static const program_t k_programs[] = {
    {"unary_f32",
     "module {\n" F "(%arg0: tensor<3x4xf32>) -> (tensor<3x4xf32>, "
     "tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) {\n"
     "%0 = \"core.exp\"(%arg0) : (tensor<3x4xf32>) -> tensor<3x4xf32>\n"
     "%1 = \"core.tanh\"(%0) : (tensor<3x4xf32>) -> tensor<3x4xf32>\n"
     "%2 = \"core.sigmoid\"(%arg0) : (tensor<3x4xf32>) -> tensor<3x4xf32>\n"
     "%3 = \"core.log1p\"(%2) : (tensor<3x4xf32>) -> tensor<3x4xf32>\n"
     "%4 = \"core.abs\"(%arg0) : (tensor<3x4xf32>) -> tensor<3x4xf32>\n"
     "%5 = \"core.sqrt\"(%4) : (tensor<3x4xf32>) -> tensor<3x4xf32>\n"
     "%6 = \"core.rsqrt\"(%5) : (tensor<3x4xf32>) -> tensor<3x4xf32>\n"
     "%7 = \"core.relu\"(%arg0) : (tensor<3x4xf32>) -> tensor<3x4xf32>\n"
     "%8 = \"core.sign\"(%arg0) : (tensor<3x4xf32>) -> tensor<3x4xf32>\n"
     "%9 = \"core.floor\"(%arg0) : (tensor<3x4xf32>) -> tensor<3x4xf32>\n"
     "%10 = \"core.add\"(%8, %9) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>\n"
     "%11 = \"core.log\"(%arg0) : (tensor<3x4xf32>) -> tensor<3x4xf32>\n"
     "%12 = \"core.square\"(%11) : (tensor<3x4xf32>) -> tensor<3x4xf32>\n"
     "%13 = \"core.neg\"(%12) : (tensor<3x4xf32>) -> tensor<3x4xf32>\n"
     "\"func.return\"(%1, %3, %10, %13) : (tensor<3x4xf32>, tensor<3x4xf32>, "
     "tensor<3x4xf32>, tensor<3x4xf32>) -> ()\n}\n}\n"},
    {"binary_broadcast",
     "module {\n" F "(%arg0: tensor<2x1x3xf32>, %arg1: tensor<4x1xf32>) -> "
     "(tensor<2x4x3xf32>, tensor<2x4x3xf32>) {\n"
     "%0 = \"core.add\"(%arg0, %arg1) : (tensor<2x1x3xf32>, tensor<4x1xf32>) -> tensor<2x4x3xf32>\n"
     "%1 = \"core.mul\"(%0, %arg1) : (tensor<2x4x3xf32>, tensor<4x1xf32>) -> tensor<2x4x3xf32>\n"
     "%2 = \"core.sub\"(%1, %arg0) : (tensor<2x4x3xf32>, tensor<2x1x3xf32>) -> tensor<2x4x3xf32>\n"
     "%3 = \"core.div\"(%2, %arg1) : (tensor<2x4x3xf32>, tensor<4x1xf32>) -> tensor<2x4x3xf32>\n"
     "%4 = \"core.maximum\"(%arg0, %arg1) : (tensor<2x1x3xf32>, tensor<4x1xf32>) -> tensor<2x4x3xf32>\n"
     "%5 = \"core.minimum\"(%4, %3) : (tensor<2x4x3xf32>, tensor<2x4x3xf32>) -> tensor<2x4x3xf32>\n"
     "%6 = \"core.pow\"(%arg0, %arg1) : (tensor<2x1x3xf32>, tensor<4x1xf32>) -> tensor<2x4x3xf32>\n"
     "\"func.return\"(%5, %6) : (tensor<2x4x3xf32>, tensor<2x4x3xf32>) -> ()\n}\n}\n"},
    {"int_ops",
     "module {\n" F "(%arg0: tensor<6xi32>, %arg1: tensor<6xi32>) -> "
     "(tensor<6xi32>, tensor<6xi32>, tensor<6xi8>, tensor<6xi32>) {\n"
     "%0 = \"core.div\"(%arg0, %arg1) : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>\n"
     "%1 = \"core.mul\"(%arg0, %arg1) : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>\n"
     "%2 = \"core.abs\"(%1) : (tensor<6xi32>) -> tensor<6xi32>\n"
     "%3 = \"core.sign\"(%0) : (tensor<6xi32>) -> tensor<6xi32>\n"
     "%4 = \"core.sub\"(%2, %3) : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>\n"
     "%5 = \"core.cast\"(%1) {dtype = \"i8\"} : (tensor<6xi32>) -> tensor<6xi8>\n"
     "%6 = \"core.relu\"(%arg0) : (tensor<6xi32>) -> tensor<6xi32>\n"
     "%7 = \"core.maximum\"(%6, %arg1) : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>\n"
     "\"func.return\"(%0, %4, %5, %7) : (tensor<6xi32>, tensor<6xi32>, "
     "tensor<6xi8>, tensor<6xi32>) -> ()\n}\n}\n"},
    {"compare_select_cast",
     "module {\n" F "(%arg0: tensor<5xf32>, %arg1: tensor<5xf32>) -> "
     "(tensor<5xf32>, tensor<5xi1>, tensor<5xi32>, tensor<5xf64>) {\n"
     "%0 = \"core.lt\"(%arg0, %arg1) : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xi1>\n"
     "%1 = \"core.ge\"(%arg0, %arg1) : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xi1>\n"
     "%2 = \"core.not\"(%1) : (tensor<5xi1>) -> tensor<5xi1>\n"
     "%3 = \"core.and\"(%0, %2) : (tensor<5xi1>, tensor<5xi1>) -> tensor<5xi1>\n"
     "%4 = \"core.select\"(%3, %arg0, %arg1) : (tensor<5xi1>, tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>\n"
     "%5 = \"core.constant\"() {value = dense<1.0e+10> : tensor<f32>} : () -> tensor<f32>\n"
     "%6 = \"core.mul\"(%arg0, %5) : (tensor<5xf32>, tensor<f32>) -> tensor<5xf32>\n"
     "%7 = \"core.cast\"(%6) {dtype = \"i32\"} : (tensor<5xf32>) -> tensor<5xi32>\n"
     "%8 = \"core.cast\"(%arg1) {dtype = \"f64\"} : (tensor<5xf32>) -> tensor<5xf64>\n"
     "%9 = \"core.eq\"(%0, %3) : (tensor<5xi1>, tensor<5xi1>) -> tensor<5xi1>\n"
     "\"func.return\"(%4, %9, %7, %8) : (tensor<5xf32>, tensor<5xi1>, "
     "tensor<5xi32>, tensor<5xf64>) -> ()\n}\n}\n"},
    {"reductions",
     "module {\n" F "(%arg0: tensor<3x4x5xf32>, %arg1: tensor<4x5xi32>) -> "
     "(tensor<4xf32>, tensor<3x1x1xf32>, tensor<5xf32>, tensor<f32>, "
     "tensor<4xi32>, tensor<5xi32>) {\n"
     "%0 = \"core.reduce_sum\"(%arg0) {axes = [0, 2]} : (tensor<3x4x5xf32>) -> tensor<4xf32>\n"
     "%1 = \"core.exp\"(%arg0) : (tensor<3x4x5xf32>) -> tensor<3x4x5xf32>\n"
     "%2 = \"core.reduce_mean\"(%1) {axes = [1, -1], keepdims = true} : (tensor<3x4x5xf32>) -> tensor<3x1x1xf32>\n"
     "%3 = \"core.reduce_max\"(%arg0) {axes = [0, 1]} : (tensor<3x4x5xf32>) -> tensor<5xf32>\n"
     "%4 = \"core.reduce_prod\"(%arg0) {axes = [0, 1, 2]} : (tensor<3x4x5xf32>) -> tensor<f32>\n"
     "%5 = \"core.reduce_min\"(%arg1) {axes = [1]} : (tensor<4x5xi32>) -> tensor<4xi32>\n"
     "%6 = \"core.reduce_mean\"(%arg1) {axes = [0]} : (tensor<4x5xi32>) -> tensor<5xi32>\n"
     "\"func.return\"(%0, %2, %3, %4, %5, %6) : (tensor<4xf32>, tensor<3x1x1xf32>, "
     "tensor<5xf32>, tensor<f32>, tensor<4xi32>, tensor<5xi32>) -> ()\n}\n}\n"},
    {"reduction_edges",
     // Empty axes and a zero-size dimension (identities: 0, NaN, -inf).
     "module {\n" F "(%arg0: tensor<0x3xf32>, %arg1: tensor<2x3xi32>) -> "
     "(tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x3xi32>, "
     "tensor<3xi32>) {\n"
     "%0 = \"core.reduce_sum\"(%arg0) {axes = [0]} : (tensor<0x3xf32>) -> tensor<3xf32>\n"
     "%1 = \"core.reduce_mean\"(%arg0) {axes = [0]} : (tensor<0x3xf32>) -> tensor<3xf32>\n"
     "%2 = \"core.reduce_max\"(%arg0) {axes = [0]} : (tensor<0x3xf32>) -> tensor<3xf32>\n"
     "%3 = \"core.reduce_prod\"(%arg1) {axes = []} : (tensor<2x3xi32>) -> tensor<2x3xi32>\n"
     "%4 = \"core.reduce_prod\"(%arg1) {axes = [0]} : (tensor<2x3xi32>) -> tensor<3xi32>\n"
     "\"func.return\"(%0, %1, %2, %3, %4) : (tensor<3xf32>, tensor<3xf32>, "
     "tensor<3xf32>, tensor<2x3xi32>, tensor<3xi32>) -> ()\n}\n}\n"},
    {"matmul",
     "module {\n" F "(%arg0: tensor<2x3x4xf32>, %arg1: tensor<5x4xf32>, "
     "%arg2: tensor<4x3xi32>, %arg3: tensor<3x4xf32>, %arg4: tensor<2x4x5xf32>) "
     "-> (tensor<2x3x5xf32>, tensor<3x3xi32>, tensor<2x3x5xf32>) {\n"
     "%3 = \"core.matmul\"(%arg3, %arg4) : (tensor<3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>\n"
     "%0 = \"core.matmul\"(%arg0, %arg1) {transpose_b = true} : (tensor<2x3x4xf32>, tensor<5x4xf32>) -> tensor<2x3x5xf32>\n"
     "%1 = \"core.tanh\"(%0) : (tensor<2x3x5xf32>) -> tensor<2x3x5xf32>\n"
     "%2 = \"core.matmul\"(%arg2, %arg2) {transpose_a = true} : (tensor<4x3xi32>, tensor<4x3xi32>) -> tensor<3x3xi32>\n"
     "\"func.return\"(%1, %2, %3) : (tensor<2x3x5xf32>, tensor<3x3xi32>, "
     "tensor<2x3x5xf32>) -> ()\n}\n}\n"},
    {"data_movement",
     "module {\n" F "(%arg0: tensor<2x3x4xf32>) -> (tensor<4x6xf32>, "
     "tensor<4x2x3xf32>, tensor<3xi64>, tensor<2x3xi32>, tensor<2x3xf32>) {\n"
     "%0 = \"core.neg\"(%arg0) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>\n"
     "%1 = \"core.reshape\"(%0) {shape = [4, -1]} : (tensor<2x3x4xf32>) -> tensor<4x6xf32>\n"
     "%2 = \"core.transpose\"(%arg0) {perm = [2, 0, 1]} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>\n"
     "%3 = \"core.shape\"(%arg0) : (tensor<2x3x4xf32>) -> tensor<3xi64>\n"
     "%4 = \"core.iota\"() {dimension = 1} : () -> tensor<2x3xi32>\n"
     "%5 = \"core.constant\"() {value = dense<[[1.5, -2.0, 3.0], [0.0, 0.5, 7.0]]> : tensor<2x3xf32>} : () -> tensor<2x3xf32>\n"
     "%6 = \"core.cast\"(%4) {dtype = \"f32\"} : (tensor<2x3xi32>) -> tensor<2x3xf32>\n"
     "%7 = \"core.mul\"(%5, %6) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>\n"
     "\"func.return\"(%1, %2, %3, %4, %7) : (tensor<4x6xf32>, tensor<4x2x3xf32>, "
     "tensor<3xi64>, tensor<2x3xi32>, tensor<2x3xf32>) -> ()\n}\n}\n"},
    {"slice_pad_concat_split_call",
     "module {\n"
     "func.func @g(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {\n"
     "%0 = \"core.tanh\"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32>\n"
     "\"func.return\"(%0) : (tensor<2x3xf32>) -> ()\n}\n"
     F "(%arg0: tensor<6x5xf32>, %arg1: tensor<f32>) -> (tensor<3x2xf32>, "
     "tensor<7x8xf32>, tensor<5x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {\n"
     "%0 = \"core.exp\"(%arg0) : (tensor<6x5xf32>) -> tensor<6x5xf32>\n"
     "%1 = \"core.slice\"(%0) {limit = [6, 5], start = [1, 1], strides = [2, 3]} : (tensor<6x5xf32>) -> tensor<3x2xf32>\n"
     "%2 = \"core.neg\"(%arg0) : (tensor<6x5xf32>) -> tensor<6x5xf32>\n"
     "%3 = \"core.pad\"(%2, %arg1) {high = [0, 2], low = [1, 1]} : (tensor<6x5xf32>, tensor<f32>) -> tensor<7x8xf32>\n"
     "%4 = \"core.slice\"(%arg0) {limit = [2, 3], start = [0, 0]} : (tensor<6x5xf32>) -> tensor<2x3xf32>\n"
     "%5 = \"core.slice\"(%arg0) {limit = [5, 3], start = [2, 0]} : (tensor<6x5xf32>) -> tensor<3x3xf32>\n"
     "%6 = \"core.concat\"(%4, %5) {axis = 0} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<5x3xf32>\n"
     "%7 = \"core.slice\"(%arg0) {limit = [2, 4], start = [0, 1]} : (tensor<6x5xf32>) -> tensor<2x3xf32>\n"
     "%8 = \"core.concat\"(%4, %7) {axis = 1} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>\n"
     "%9:2 = \"core.split\"(%8) {axis = 1, num_splits = 2} : (tensor<2x6xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)\n"
     "%10 = \"ctl.call\"(%9#1) {callee = @g} : (tensor<2x3xf32>) -> tensor<2x3xf32>\n"
     "\"func.return\"(%1, %3, %6, %9#0, %10) : (tensor<3x2xf32>, tensor<7x8xf32>, "
     "tensor<5x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> ()\n}\n}\n"},
    {"gather",
     "module {\n" F "(%arg0: tensor<5x3xf32>) -> (tensor<2x2x3xf32>, "
     "tensor<5x2xf32>) {\n"
     "%0 = \"core.constant\"() {value = dense<[[4, 0], [2, 2]]> : tensor<2x2xi32>} : () -> tensor<2x2xi32>\n"
     "%1 = \"core.gather\"(%arg0, %0) {axis = 0} : (tensor<5x3xf32>, tensor<2x2xi32>) -> tensor<2x2x3xf32>\n"
     "%2 = \"core.constant\"() {value = dense<[2, 1]> : tensor<2xi64>} : () -> tensor<2xi64>\n"
     "%3 = \"core.gather\"(%arg0, %2) {axis = -1} : (tensor<5x3xf32>, tensor<2xi64>) -> tensor<5x2xf32>\n"
     "\"func.return\"(%1, %3) : (tensor<2x2x3xf32>, tensor<5x2xf32>) -> ()\n}\n}\n"},
    {"big_values_reuse",
     // Tensors above the stack limit: with --no-fuse every intermediate
     // needs a heap block, and dead ones are reused by later values.
     "module {\n" F "(%arg0: tensor<32x64xf32>, %arg1: tensor<64x32xf32>) -> "
     "(tensor<32x32xf32>, tensor<32xf32>, tensor<32x64xf32>, "
     "tensor<32x64xf32>) {\n"
     "%0 = \"core.exp\"(%arg0) : (tensor<32x64xf32>) -> tensor<32x64xf32>\n"
     "%1 = \"core.mul\"(%0, %arg0) : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>\n"
     "%2 = \"core.tanh\"(%1) : (tensor<32x64xf32>) -> tensor<32x64xf32>\n"
     "%3 = \"core.matmul\"(%2, %arg1) : (tensor<32x64xf32>, tensor<64x32xf32>) -> tensor<32x32xf32>\n"
     "%4 = \"core.add\"(%3, %3) : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>\n"
     "%5 = \"core.neg\"(%2) : (tensor<32x64xf32>) -> tensor<32x64xf32>\n"
     "%6 = \"core.reduce_sum\"(%5) {axes = [1]} : (tensor<32x64xf32>) -> tensor<32xf32>\n"
     "%7 = \"core.sub\"(%0, %5) : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>\n"
     "%8 = \"core.sigmoid\"(%7) : (tensor<32x64xf32>) -> tensor<32x64xf32>\n"
     "%9 = \"core.exp\"(%arg1) : (tensor<64x32xf32>) -> tensor<64x32xf32>\n"
     "%10 = \"core.transpose\"(%9) {perm = [1, 0]} : (tensor<64x32xf32>) -> tensor<32x64xf32>\n"
     "%11 = \"core.neg\"(%10) : (tensor<32x64xf32>) -> tensor<32x64xf32>\n"
     "\"func.return\"(%4, %6, %8, %11) : (tensor<32x32xf32>, tensor<32xf32>, "
     "tensor<32x64xf32>, tensor<32x64xf32>) -> ()\n}\n}\n"},
    {"while_swap",
     // A loop that swaps two loop values each iteration and counts.
     "module {\n" F "(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>, %arg2: "
     "tensor<i64>) -> (tensor<3xf32>, tensor<3xf32>, tensor<i64>) {\n"
     "%0 = \"core.constant\"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>\n"
     "%1:3 = \"ctl.while\"(%0, %arg0, %arg1) ({\n"
     "^bb0(%arg3: tensor<i64>, %arg4: tensor<3xf32>, %arg5: tensor<3xf32>):\n"
     "%2 = \"core.lt\"(%arg3, %arg2) : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
     "\"ctl.condition\"(%2) : (tensor<i1>) -> ()\n"
     "}, {\n"
     "^bb0(%arg6: tensor<i64>, %arg7: tensor<3xf32>, %arg8: tensor<3xf32>):\n"
     "%3 = \"core.constant\"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>\n"
     "%4 = \"core.add\"(%arg6, %3) : (tensor<i64>, tensor<i64>) -> tensor<i64>\n"
     "%5 = \"core.constant\"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>\n"
     "%6 = \"core.mul\"(%arg7, %5) : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>\n"
     "%7 = \"core.add\"(%6, %arg8) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>\n"
     "\"ctl.yield\"(%4, %arg8, %7) : (tensor<i64>, tensor<3xf32>, tensor<3xf32>) -> ()\n"
     "}) : (tensor<i64>, tensor<3xf32>, tensor<3xf32>) -> (tensor<i64>, tensor<3xf32>, tensor<3xf32>)\n"
     "\"func.return\"(%1#1, %1#2, %1#0) : (tensor<3xf32>, tensor<3xf32>, tensor<i64>) -> ()\n}\n}\n"},
    {"while_max_iterations_nested_if",
     "module {\n" F "(%arg0: tensor<2xf32>) -> (tensor<2xf32>, tensor<i32>) {\n"
     "%0 = \"core.constant\"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>\n"
     "%1:2 = \"ctl.while\"(%0, %arg0) ({\n"
     "^bb0(%arg1: tensor<i32>, %arg2: tensor<2xf32>):\n"
     "%2 = \"core.constant\"() {value = dense<true> : tensor<i1>} : () -> tensor<i1>\n"
     "\"ctl.condition\"(%2) : (tensor<i1>) -> ()\n"
     "}, {\n"
     "^bb0(%arg3: tensor<i32>, %arg4: tensor<2xf32>):\n"
     "%3 = \"core.constant\"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>\n"
     "%4 = \"core.add\"(%arg3, %3) : (tensor<i32>, tensor<i32>) -> tensor<i32>\n"
     "%5 = \"core.reduce_sum\"(%arg4) {axes = [0]} : (tensor<2xf32>) -> tensor<f32>\n"
     "%6 = \"core.constant\"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>\n"
     "%7 = \"core.gt\"(%5, %6) : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
     "%8 = \"ctl.if\"(%7) ({\n"
     "%9 = \"core.constant\"() {value = dense<-0.75> : tensor<f32>} : () -> tensor<f32>\n"
     "%10 = \"core.mul\"(%arg4, %9) : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>\n"
     "\"ctl.yield\"(%10) : (tensor<2xf32>) -> ()\n"
     "}, {\n"
     "%11 = \"core.exp\"(%arg4) : (tensor<2xf32>) -> tensor<2xf32>\n"
     "\"ctl.yield\"(%11) : (tensor<2xf32>) -> ()\n"
     "}) : (tensor<i1>) -> tensor<2xf32>\n"
     "\"ctl.yield\"(%4, %8) : (tensor<i32>, tensor<2xf32>) -> ()\n"
     "}) {maximum_iterations = 7} : (tensor<i32>, tensor<2xf32>) -> (tensor<i32>, tensor<2xf32>)\n"
     "\"func.return\"(%1#1, %1#0) : (tensor<2xf32>, tensor<i32>) -> ()\n}\n}\n"},
    {"f64_f16_bool_args",
     "module {\n" F "(%arg0: tensor<4xf64>, %arg1: tensor<4xf16>, %arg2: "
     "tensor<4xi1>) -> (tensor<4xf64>, tensor<4xf16>, tensor<4xi1>) {\n"
     "%0 = \"core.exp\"(%arg0) : (tensor<4xf64>) -> tensor<4xf64>\n"
     "%1 = \"core.add\"(%arg1, %arg1) : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>\n"
     "%2 = \"core.tanh\"(%1) : (tensor<4xf16>) -> tensor<4xf16>\n"
     "%3 = \"core.cast\"(%arg0) {dtype = \"i1\"} : (tensor<4xf64>) -> tensor<4xi1>\n"
     "%4 = \"core.or\"(%3, %arg2) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>\n"
     "\"func.return\"(%0, %2, %4) : (tensor<4xf64>, tensor<4xf16>, tensor<4xi1>) -> ()\n}\n}\n"},
};

static uint64_t next_rand(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return *s >> 33;
}

/// A tensor of type t with values in a small range (floats in [-3, 3]).
static void make_input(fixture_t *f, const eddy_type_t *t, uint64_t *seed,
                       eddy_rt_tensor_t *out) {
  assert_null(eddy_rt_tensor_create(f->rt, (int32_t)t->dtype, t->rank, t->dims,
                                    "test", out));
  int64_t n = eddy_rt_tensor_numel(out);
  for (int64_t i = 0; i < n; i++) {
    int64_t r = (int64_t)(next_rand(seed) % 1000);
    if (eddy_dtype_is_float(t->dtype))
      eddy_rt_tensor_set_f64(out, i, (double)(r - 500) / 166.0);
    else if (t->dtype == EDDY_DT_I1)
      eddy_rt_tensor_set_i64(out, i, r & 1);
    else
      eddy_rt_tensor_set_i64(out, i, r % 21 - 10);
  }
}

/// Distance in units in the last place between two floats of dtype dt.
static double ulp_diff(double a, double b, eddy_dtype_t dt) {
  if (isnan(a) && isnan(b))
    return 0;
  if (a == b)
    return 0;
  if (isnan(a) || isnan(b) || isinf(a) || isinf(b))
    return INFINITY;
  int mant = dt == EDDY_DT_F64 ? 52 : dt == EDDY_DT_F32 ? 23
             : dt == EDDY_DT_F16 ? 10 : 7;
  double m = fmax(fabs(a), fabs(b));
  int ex;
  frexp(m, &ex);
  double ulp = ldexp(1.0, ex - 1 - mant);
  // Results near zero after cancellation: compare against a tiny absolute
  // tolerance instead.
  if (fabs(a - b) < 1e-6 && dt != EDDY_DT_F64)
    return 0;
  return fabs(a - b) / ulp;
}

static void compare(const char *prog, size_t k, const eddy_rt_tensor_t *want,
                    const eddy_rt_tensor_t *got) {
  assert_int_equal(want->dtype, got->dtype);
  assert_int_equal(want->rank, got->rank);
  for (int32_t d = 0; d < want->rank; d++)
    assert_int_equal(want->dims[d], got->dims[d]);
  int64_t n = eddy_rt_tensor_numel(want);
  // A sum that cancels (a matmul of values near 1 giving 0.09) turns a
  // last-ulp difference in its terms (libm vs the evaluator) into many ulp
  // of the small result: allow 16 ulp of the tensor's largest magnitude too.
  double scale = 0;
  for (int64_t i = 0; eddy_rt_dtype_is_float(want->dtype) && i < n; i++) {
    double a = fabs(eddy_rt_tensor_get_f64(want, i));
    if (isfinite(a) && a > scale)
      scale = a;
  }
  double eps = want->dtype == EDDY_RT_F64   ? 0x1p-52
               : want->dtype == EDDY_RT_F32 ? 0x1p-23
               : want->dtype == EDDY_RT_F16 ? 0x1p-10
                                            : 0x1p-7;
  for (int64_t i = 0; i < n; i++) {
    if (eddy_rt_dtype_is_float(want->dtype)) {
      double a = eddy_rt_tensor_get_f64(want, i);
      double b = eddy_rt_tensor_get_f64(got, i);
      double u = ulp_diff(a, b, (eddy_dtype_t)want->dtype);
      if (u > 8 && !(fabs(a - b) <= 16 * eps * scale)) {
        print_error("%s: result %zu element %lld: evaluator %.9g, compiled "
                    "%.9g (%g ulp)\n",
                    prog, k, (long long)i, a, b, u);
        fail();
      }
    } else {
      int64_t a = eddy_rt_tensor_get_i64(want, i);
      int64_t b = eddy_rt_tensor_get_i64(got, i);
      if (a != b) {
        print_error("%s: result %zu element %lld: evaluator %lld, compiled "
                    "%lld\n",
                    prog, k, (long long)i, (long long)a, (long long)b);
        fail();
      }
    }
  }
}

/// t with every dynamic dim set to n.
static const eddy_type_t *concrete(fixture_t *f, const eddy_type_t *t,
                                   int64_t n) {
  int64_t d[16];
  for (int32_t i = 0; i < t->rank; i++)
    d[i] = t->dims[i] < 0 ? n : t->dims[i];
  return eddy_ir_tensor_type_get(f->ctx, t->dtype, t->rank, d);
}

/// Runs p compiled (fused or not) and in the evaluator, `rounds` times on
/// fresh inputs drawn from seed, and compares the results. With sizes,
/// round r gives every dynamic dim of the arguments the size sizes[r].
static void run_program(fixture_t *f, const program_t *p, bool fuse,
                        uint64_t seed, const int64_t *sizes, size_t rounds) {
  eddy_module_t *m = parse(f, p->text);
  eddy_op_t *func = eddy_ir_module_lookup_func(m, "f");
  assert_non_null(func);
  const eddy_type_t *ft = eddy_ir_func_type(func);
  eddy_cpu_opts_t o = eddy_cpu_opts_default();
  o.fuse = fuse;
  o.opt_level = 2;
  eddy_cpu_jit_t *jit = NULL;
  expect_ok(eddy_cpu_jit_create(m, "f", &o, &jit));
  for (size_t round = 0; round < rounds; round++) {
    eddy_rt_tensor_t args[8], got[8];
    eddy_eval_value_t want[8];
    assert_true(ft->num_inputs <= 8 && ft->num_outputs <= 8);
    for (uint32_t i = 0; i < ft->num_inputs; i++) {
      const eddy_type_t *t = ft->inputs[i];
      make_input(f, sizes ? concrete(f, t, sizes[round]) : t, &seed, &args[i]);
    }
    expect_ok(
        run_evaluator(f, func, args, ft->num_inputs, want, ft->num_outputs));
    expect_ok(eddy_cpu_jit_run(jit, f->rt, args, got));
    for (uint32_t k = 0; k < ft->num_outputs; k++) {
      compare(p->name, k, &want[k].tensor, &got[k]);
      eddy_eval_value_release(&want[k]);
      eddy_rt_tensor_release(&got[k]);
    }
    for (uint32_t i = 0; i < ft->num_inputs; i++)
      eddy_rt_tensor_release(&args[i]);
  }
  eddy_cpu_jit_destroy(jit);
  eddy_ir_module_destroy(m);
}

static void test_programs_match_evaluator(void **state) {
  fixture_t *f = *state;
  for (size_t i = 0; i < sizeof k_programs / sizeof k_programs[0]; i++) {
    run_program(f, &k_programs[i], true, 42, NULL, 2);
    run_program(f, &k_programs[i], false, 42, NULL, 2);
  }
}

static void test_entry_checks_arguments(void **state) {
  fixture_t *f = *state;
  eddy_module_t *m = parse(f, k_programs[1].text);
  eddy_cpu_jit_t *jit = NULL;
  expect_ok(eddy_cpu_jit_create(m, "f", NULL, &jit));
  int64_t d0[3] = {2, 1, 3}, d1[2] = {4, 2};
  eddy_rt_tensor_t args[2], res[2];
  assert_null(eddy_rt_tensor_create(f->rt, EDDY_RT_F32, 3, d0, "t", &args[0]));
  assert_null(eddy_rt_tensor_create(f->rt, EDDY_RT_F32, 2, d1, "t", &args[1]));
  char err[256];
  int32_t rc = eddy_cpu_jit_entry(jit)(f->rt, args, res, err, sizeof err);
  assert_int_equal(rc, EDDY_RT_ERR_INVALID_ARGUMENT);
  assert_string_equal(err, "argument 1 'arg1': expected f32[4,1], got f32[4,2]");
  assert_null(res[0].data);
  eddy_rt_tensor_release(&args[1]);
  assert_null(eddy_rt_tensor_create(f->rt, EDDY_RT_I32, 2, d1, "t", &args[1]));
  rc = eddy_cpu_jit_entry(jit)(f->rt, args, res, err, sizeof err);
  assert_string_equal(err, "argument 1 'arg1': expected f32[4,1], got i32[4,2]");
  // A NULL context is refused, never dereferenced.
  rc = eddy_cpu_jit_entry(jit)(NULL, args, res, err, sizeof err);
  assert_int_equal(rc, EDDY_RT_ERR_INVALID_ARGUMENT);
  eddy_rt_tensor_release(&args[0]);
  eddy_rt_tensor_release(&args[1]);
  eddy_cpu_jit_destroy(jit);
  eddy_ir_module_destroy(m);
}

/// A loop that never ends stops at the context's budgets: the iteration
/// limit, the time limit, or a cancellation from another thread; each is
/// an error naming the loop, nothing leaked, and the context runs the next
/// call normally once the budget is lifted.
static const char k_forever[] =
    "func.func @f(%x: tensor<f32>) -> tensor<f32> {\n"
    "  %t = \"core.constant\"() {value = dense<true> : tensor<i1>} : () -> "
    "tensor<i1>\n"
    "  %one = \"core.constant\"() {value = dense<1.0> : tensor<f32>} : () -> "
    "tensor<f32>\n"
    "  %r = \"ctl.while\"(%x) ({\n"
    "  ^bb0(%a: tensor<f32>):\n"
    "    \"ctl.condition\"(%t) : (tensor<i1>) -> ()\n"
    "  }, {\n"
    "  ^bb0(%b: tensor<f32>):\n"
    "    %n = \"core.add\"(%b, %one) : (tensor<f32>, tensor<f32>) -> "
    "tensor<f32>\n"
    "    \"ctl.yield\"(%n) : (tensor<f32>) -> ()\n"
    "  }) : (tensor<f32>) -> tensor<f32>\n"
    "  \"func.return\"(%r) : (tensor<f32>) -> ()\n"
    "}\n";

static void *cancel_later(void *rt) {
  struct timespec ts = {0, 50 * 1000 * 1000};
  nanosleep(&ts, NULL);
  eddy_rt_ctx_cancel(rt);
  return NULL;
}

static void test_loop_budgets(void **state) {
  fixture_t *f = *state;
  eddy_module_t *m = parse(f, k_forever);
  eddy_cpu_jit_t *jit = NULL;
  expect_ok(eddy_cpu_jit_create(m, "f", NULL, &jit));
  eddy_rt_tensor_t arg, res;
  assert_null(eddy_rt_tensor_create(f->rt, EDDY_RT_F32, 0, NULL, "t", &arg));
  *(float *)arg.data = 0.0f;
  char err[256];
  eddy_rt_ctx_set_max_iterations(f->rt, 5000);
  int32_t rc = eddy_cpu_jit_entry(jit)(f->rt, &arg, &res, err, sizeof err);
  assert_int_equal(rc, EDDY_RT_ERR_RESOURCE);
  assert_non_null(strstr(err, "test.eddy:4:"));
  assert_non_null(strstr(err, "'ctl.while' op: did not finish within 5000 "
                              "iterations"));
  assert_null(res.data);
  // Cancelled from another thread while it runs.
  eddy_rt_ctx_set_max_iterations(f->rt, 0);
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, cancel_later, f->rt), 0);
  rc = eddy_cpu_jit_entry(jit)(f->rt, &arg, &res, err, sizeof err);
  pthread_join(th, NULL);
  assert_int_equal(rc, EDDY_RT_ERR_CANCELLED);
  assert_non_null(strstr(err, "'ctl.while' op: cancelled"));
  assert_true(eddy_rt_ctx_is_cancelled(f->rt));
  eddy_rt_ctx_clear_cancel(f->rt);
  // Past the time limit.
  eddy_rt_ctx_set_timeout_ms(f->rt, 30);
  rc = eddy_cpu_jit_entry(jit)(f->rt, &arg, &res, err, sizeof err);
  assert_int_equal(rc, EDDY_RT_ERR_CANCELLED);
  assert_non_null(strstr(err, "time limit of 30 ms"));
  eddy_rt_ctx_set_timeout_ms(f->rt, 0);
  eddy_rt_tensor_release(&arg);
  eddy_cpu_jit_destroy(jit);
  eddy_ir_module_destroy(m);
}

/// Scratch memory goes through the runtime context: past its memory limit
/// the call fails cleanly (results released, nothing leaked).
static void test_scratch_memory_limit(void **state) {
  fixture_t *f = *state;
  eddy_module_t *m = parse(
      f, "module {\n" F "(%arg0: tensor<1024xf32>) -> tensor<1024xf32> {\n"
         "%0 = \"core.exp\"(%arg0) : (tensor<1024xf32>) -> tensor<1024xf32>\n"
         "%1 = \"core.neg\"(%0) : (tensor<1024xf32>) -> tensor<1024xf32>\n"
         "\"func.return\"(%1) : (tensor<1024xf32>) -> ()\n}\n}\n");
  eddy_cpu_opts_t o = eddy_cpu_opts_default();
  o.fuse = false; // so that %0 needs a 4 KiB scratch buffer
  eddy_cpu_jit_t *jit = NULL;
  expect_ok(eddy_cpu_jit_create(m, "f", &o, &jit));
  int64_t n = 1024;
  eddy_rt_tensor_t arg, res;
  assert_null(eddy_rt_tensor_create(f->rt, EDDY_RT_F32, 1, &n, "t", &arg));
  int64_t before = eddy_rt_ctx_bytes_in_use(f->rt);
  eddy_rt_ctx_set_memory_limit(f->rt, before + 6000);
  char err[256];
  int32_t rc = eddy_cpu_jit_entry(jit)(f->rt, &arg, &res, err, sizeof err);
  assert_int_equal(rc, EDDY_RT_ERR_RESOURCE);
  assert_non_null(strstr(err, "memory limit"));
  assert_null(res.data);
  assert_int_equal(eddy_rt_ctx_bytes_in_use(f->rt), before);
  // With room for both it runs, and the scratch is given back.
  eddy_rt_ctx_set_memory_limit(f->rt, before + 9000);
  rc = eddy_cpu_jit_entry(jit)(f->rt, &arg, &res, err, sizeof err);
  assert_int_equal(rc, 0);
  // Only the result (the same size as the argument) is left.
  assert_int_equal(eddy_rt_ctx_bytes_in_use(f->rt), 2 * before);
  assert_true(eddy_rt_tensor_get_f64(&res, 0) == -1.0);
  eddy_rt_tensor_release(&res);
  eddy_rt_tensor_release(&arg);
  eddy_rt_ctx_set_memory_limit(f->rt, 0);
  eddy_cpu_jit_destroy(jit);
  eddy_ir_module_destroy(m);
}

/// A gather index out of range inside a loop: the loop stops, the call
/// returns an error naming the op, the index and the range, and nothing
/// leaks.
static void test_gather_out_of_range(void **state) {
  fixture_t *f = *state;
  eddy_module_t *m = parse(
      f, "module {\n" F "(%arg0: tensor<4xf32>, %arg1: tensor<i32>) -> "
         "tensor<f32> {\n"
         "%0 = \"core.constant\"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>\n"
         "%1 = \"core.constant\"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>\n"
         "%2:2 = \"ctl.while\"(%1, %0) ({\n"
         "^bb0(%arg2: tensor<i32>, %arg3: tensor<f32>):\n"
         "%3 = \"core.lt\"(%arg2, %arg1) : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
         "\"ctl.condition\"(%3) : (tensor<i1>) -> ()\n"
         "}, {\n"
         "^bb0(%arg4: tensor<i32>, %arg5: tensor<f32>):\n"
         "%4 = \"core.gather\"(%arg0, %arg4) {axis = 0} : (tensor<4xf32>, tensor<i32>) -> tensor<f32>\n"
         "%5 = \"core.add\"(%arg5, %4) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n"
         "%6 = \"core.constant\"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>\n"
         "%7 = \"core.add\"(%arg4, %6) : (tensor<i32>, tensor<i32>) -> tensor<i32>\n"
         "\"ctl.yield\"(%7, %5) : (tensor<i32>, tensor<f32>) -> ()\n"
         "}) : (tensor<i32>, tensor<f32>) -> (tensor<i32>, tensor<f32>)\n"
         "\"func.return\"(%2#1) : (tensor<f32>) -> ()\n}\n}\n");
  eddy_cpu_jit_t *jit = NULL;
  expect_ok(eddy_cpu_jit_create(m, "f", NULL, &jit));
  int64_t n = 4;
  float xs[4] = {1, 2, 3, 4};
  int32_t trips = 4;
  eddy_rt_tensor_t args[2], res;
  assert_null(eddy_rt_tensor_wrap(EDDY_RT_F32, 1, &n, xs, &args[0]));
  assert_null(eddy_rt_tensor_wrap(EDDY_RT_I32, 0, NULL, &trips, &args[1]));
  char err[256];
  assert_int_equal(eddy_cpu_jit_entry(jit)(f->rt, args, &res, err, sizeof err),
                   0);
  assert_true(eddy_rt_tensor_get_f64(&res, 0) == 10.0);
  eddy_rt_tensor_release(&res);
  trips = 1000000; // the loop must stop at the first bad index
  int32_t rc = eddy_cpu_jit_entry(jit)(f->rt, args, &res, err, sizeof err);
  assert_int_equal(rc, EDDY_RT_ERR_INVALID_ARGUMENT);
  assert_string_equal(err, "test.eddy:11:1: 'core.gather' op: index 4 is out "
                           "of range [0, 4)");
  assert_null(res.data);
  eddy_cpu_jit_destroy(jit);
  eddy_ir_module_destroy(m);
}

typedef struct thread_job {
  const eddy_cpu_jit_t *jit;
  eddy_rt_ctx_t *rt;
  float scale;
  int failures;
} thread_job_t;

/// Runs the compiled "while_swap" program many times with inputs of its own.
static void *thread_main(void *arg) {
  thread_job_t *job = arg;
  for (int it = 0; it < 200; it++) {
    float a[3], b[3];
    for (int i = 0; i < 3; i++) {
      a[i] = job->scale * (float)(i + 1);
      b[i] = -job->scale;
    }
    int64_t n = 3, trips = it % 5;
    eddy_rt_tensor_t args[3], res[3];
    eddy_rt_tensor_wrap(EDDY_RT_F32, 1, &n, a, &args[0]);
    eddy_rt_tensor_wrap(EDDY_RT_F32, 1, &n, b, &args[1]);
    eddy_rt_tensor_wrap(EDDY_RT_I64, 0, NULL, &trips, &args[2]);
    char err[128];
    if (eddy_cpu_jit_entry(job->jit)(job->rt, args, res, err, sizeof err)) {
      job->failures++;
      continue;
    }
    // Reference: the same recurrence in C.
    float x[3], y[3];
    memcpy(x, a, sizeof x);
    memcpy(y, b, sizeof y);
    for (int64_t t = 0; t < trips; t++)
      for (int i = 0; i < 3; i++) {
        float nx = y[i], ny = x[i] * 0.5f + y[i];
        x[i] = nx;
        y[i] = ny;
      }
    const float *rx = res[0].data, *ry = res[1].data;
    for (int i = 0; i < 3; i++)
      if (rx[i] != x[i] || ry[i] != y[i])
        job->failures++;
    if (*(int64_t *)res[2].data != trips)
      job->failures++;
    for (int i = 0; i < 3; i++)
      eddy_rt_tensor_release(&res[i]);
  }
  return NULL;
}

/// The generated entry shares no mutable state: calls from several threads
/// at once (one runtime context, which is thread-safe) give the results of
/// serial calls.
static void test_concurrent_calls(void **state) {
  fixture_t *f = *state;
  eddy_module_t *m = parse(f, k_programs[11].text);
  eddy_cpu_jit_t *jit = NULL;
  expect_ok(eddy_cpu_jit_create(m, "f", NULL, &jit));
  pthread_t th[4];
  thread_job_t jobs[4];
  for (int i = 0; i < 4; i++) {
    jobs[i] = (thread_job_t){jit, f->rt, 0.25f * (float)(i + 1), 0};
    assert_int_equal(pthread_create(&th[i], NULL, thread_main, &jobs[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    assert_int_equal(jobs[i].failures, 0);
  }
  eddy_cpu_jit_destroy(jit);
  eddy_ir_module_destroy(m);
}

static const char k_list_program[] =
    "module {\n" F "(%arg0: tensor<3xf32>, %arg1: tensor<i64>, %arg2: "
    "tensor<i64>) -> (tensor<3xf32>, tensor<i64>, tensor<3xf32>, tensor<i64>, "
    "tensor<i64>) {\n"
    "%0 = \"tl.empty\"() : () -> !tl.list<tensor<3xf32>>\n"
    "%1 = \"core.constant\"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>\n"
    "%2:3 = \"ctl.while\"(%1, %arg0, %0) ({\n"
    "^bb0(%arg3: tensor<i64>, %arg4: tensor<3xf32>, %arg5: !tl.list<tensor<3xf32>>):\n"
    "%3 = \"core.lt\"(%arg3, %arg1) : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
    "\"ctl.condition\"(%3) : (tensor<i1>) -> ()\n"
    "}, {\n"
    "^bb0(%arg6: tensor<i64>, %arg7: tensor<3xf32>, %arg8: !tl.list<tensor<3xf32>>):\n"
    "%4 = \"tl.push_back\"(%arg8, %arg7) : (!tl.list<tensor<3xf32>>, tensor<3xf32>) -> !tl.list<tensor<3xf32>>\n"
    "%5 = \"core.tanh\"(%arg7) : (tensor<3xf32>) -> tensor<3xf32>\n"
    "%6 = \"core.constant\"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>\n"
    "%7 = \"core.add\"(%arg6, %6) : (tensor<i64>, tensor<i64>) -> tensor<i64>\n"
    "\"ctl.yield\"(%7, %5, %4) : (tensor<i64>, tensor<3xf32>, !tl.list<tensor<3xf32>>) -> ()\n"
    "}) : (tensor<i64>, tensor<3xf32>, !tl.list<tensor<3xf32>>) -> (tensor<i64>, tensor<3xf32>, !tl.list<tensor<3xf32>>)\n"
    "%8 = \"tl.length\"(%2#2) : (!tl.list<tensor<3xf32>>) -> tensor<i64>\n"
    "%9 = \"core.constant\"() {value = dense<0.0> : tensor<3xf32>} : () -> tensor<3xf32>\n"
    "%10:3 = \"ctl.while\"(%1, %9, %2#2) ({\n"
    "^bb0(%arg9: tensor<i64>, %arg10: tensor<3xf32>, %arg11: !tl.list<tensor<3xf32>>):\n"
    "%11 = \"core.lt\"(%arg9, %arg2) : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
    "\"ctl.condition\"(%11) : (tensor<i1>) -> ()\n"
    "}, {\n"
    "^bb0(%arg12: tensor<i64>, %arg13: tensor<3xf32>, %arg14: !tl.list<tensor<3xf32>>):\n"
    "%12:2 = \"tl.pop_back\"(%arg14) : (!tl.list<tensor<3xf32>>) -> (!tl.list<tensor<3xf32>>, tensor<3xf32>)\n"
    "%13 = \"core.constant\"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>\n"
    "%14 = \"core.mul\"(%arg13, %13) : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>\n"
    "%15 = \"core.add\"(%14, %12#1) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>\n"
    "%16 = \"core.constant\"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>\n"
    "%17 = \"core.add\"(%arg12, %16) : (tensor<i64>, tensor<i64>) -> tensor<i64>\n"
    "\"ctl.yield\"(%17, %15, %12#0) : (tensor<i64>, tensor<3xf32>, !tl.list<tensor<3xf32>>) -> ()\n"
    "}) : (tensor<i64>, tensor<3xf32>, !tl.list<tensor<3xf32>>) -> (tensor<i64>, tensor<3xf32>, !tl.list<tensor<3xf32>>)\n"
    // A list used twice: both pushes see the same list (retain, copy on write).
    "%18 = \"tl.push_back\"(%0, %arg0) : (!tl.list<tensor<3xf32>>, tensor<3xf32>) -> !tl.list<tensor<3xf32>>\n"
    "%19 = \"tl.push_back\"(%0, %arg0) : (!tl.list<tensor<3xf32>>, tensor<3xf32>) -> !tl.list<tensor<3xf32>>\n"
    "%20 = \"tl.push_back\"(%19, %arg0) : (!tl.list<tensor<3xf32>>, tensor<3xf32>) -> !tl.list<tensor<3xf32>>\n"
    "%21 = \"tl.length\"(%18) : (!tl.list<tensor<3xf32>>) -> tensor<i64>\n"
    "%22 = \"tl.length\"(%20) : (!tl.list<tensor<3xf32>>) -> tensor<i64>\n"
    "%23 = \"core.add\"(%21, %22) : (tensor<i64>, tensor<i64>) -> tensor<i64>\n"
    "\"func.return\"(%2#1, %8, %10#1, %23, %10#0) : (tensor<3xf32>, tensor<i64>, "
    "tensor<3xf32>, tensor<i64>, tensor<i64>) -> ()\n}\n}\n";

/// TensorLists: a loop pushing, a loop popping, a shared list; compared with
/// the evaluator; popping more than was pushed is an error; nothing leaks
/// (the fixture checks that no runtime memory is left).
static void test_lists(void **state) {
  fixture_t *f = *state;
  eddy_module_t *m = parse(f, k_list_program);
  eddy_op_t *func = eddy_ir_module_lookup_func(m, "f");
  eddy_cpu_jit_t *jit = NULL;
  expect_ok(eddy_cpu_jit_create(m, "f", NULL, &jit));
  float x[3] = {0.5f, -1.0f, 2.0f};
  int64_t n3 = 3, pushes = 6, pops = 6;
  eddy_rt_tensor_t args[3], got[5];
  assert_null(eddy_rt_tensor_wrap(EDDY_RT_F32, 1, &n3, x, &args[0]));
  assert_null(eddy_rt_tensor_wrap(EDDY_RT_I64, 0, NULL, &pushes, &args[1]));
  assert_null(eddy_rt_tensor_wrap(EDDY_RT_I64, 0, NULL, &pops, &args[2]));
  eddy_eval_value_t want[5];
  expect_ok(run_evaluator(f, func, args, 3, want, 5));
  expect_ok(eddy_cpu_jit_run(jit, f->rt, args, got));
  for (int k = 0; k < 5; k++) {
    compare("lists", (size_t)k, &want[k].tensor, &got[k]);
    eddy_eval_value_release(&want[k]);
    eddy_rt_tensor_release(&got[k]);
  }
  pops = 7;
  char err[256];
  int32_t rc = eddy_cpu_jit_entry(jit)(f->rt, args, got, err, sizeof err);
  assert_int_equal(rc, EDDY_RT_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(err, "tl.pop_back"));
  assert_null(got[0].data);
  eddy_cpu_jit_destroy(jit);
  eddy_ir_module_destroy(m);
}

/// Programs with dynamic dims: every `?` of every argument is given the same
/// size n, for n = 0, 1, 3 and 5 (a loop below grows its value to n*n rows).
static const program_t k_dyn_programs[] = {
    {"dyn_chain_reduce",
     "module {\n" F "(%arg0: tensor<?x3xf32>, %arg1: tensor<3xf32>) -> "
     "(tensor<?x3xf32>, tensor<?xf32>, tensor<f32>, tensor<3xf32>, "
     "tensor<?x1xf32>) {\n"
     "%0 = \"core.mul\"(%arg0, %arg1) : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>\n"
     "%1 = \"core.tanh\"(%0) : (tensor<?x3xf32>) -> tensor<?x3xf32>\n"
     "%2 = \"core.reduce_sum\"(%1) {axes = [1]} : (tensor<?x3xf32>) -> tensor<?xf32>\n"
     "%3 = \"core.reduce_mean\"(%arg0) {axes = [0, 1]} : (tensor<?x3xf32>) -> tensor<f32>\n"
     "%4 = \"core.reduce_max\"(%arg0) {axes = [0]} : (tensor<?x3xf32>) -> tensor<3xf32>\n"
     "%5 = \"core.exp\"(%arg0) : (tensor<?x3xf32>) -> tensor<?x3xf32>\n"
     "%6 = \"core.reduce_min\"(%5) {axes = [1], keepdims = true} : (tensor<?x3xf32>) -> tensor<?x1xf32>\n"
     "\"func.return\"(%5, %2, %3, %4, %6) : (tensor<?x3xf32>, tensor<?xf32>, "
     "tensor<f32>, tensor<3xf32>, tensor<?x1xf32>) -> ()\n}\n}\n"},
    {"dyn_int_broadcast",
     "module {\n" F "(%arg0: tensor<?x1xi32>, %arg1: tensor<?xi32>) -> "
     "(tensor<?x?xi32>, tensor<?xi32>, tensor<?x?xi1>) {\n"
     "%0 = \"core.mul\"(%arg0, %arg1) : (tensor<?x1xi32>, tensor<?xi32>) -> tensor<?x?xi32>\n"
     "%1 = \"core.reduce_mean\"(%0) {axes = [0]} : (tensor<?x?xi32>) -> tensor<?xi32>\n"
     "%2 = \"core.gt\"(%0, %arg1) : (tensor<?x?xi32>, tensor<?xi32>) -> tensor<?x?xi1>\n"
     "\"func.return\"(%0, %1, %2) : (tensor<?x?xi32>, tensor<?xi32>, tensor<?x?xi1>) -> ()\n}\n}\n"},
    {"dyn_data_movement",
     "module {\n" F "(%arg0: tensor<?x4xf32>) -> (tensor<4x?xf32>, "
     "tensor<?xf32>, tensor<?x4xf32>, tensor<?x6xf32>, tensor<2xi64>, "
     "tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>) {\n"
     "%0 = \"core.transpose\"(%arg0) {perm = [1, 0]} : (tensor<?x4xf32>) -> tensor<4x?xf32>\n"
     "%1 = \"core.reshape\"(%arg0) {shape = [-1]} : (tensor<?x4xf32>) -> tensor<?xf32>\n"
     "%2 = \"core.concat\"(%arg0, %arg0) {axis = 0} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>\n"
     "%3 = \"core.constant\"() {value = dense<7.0> : tensor<f32>} : () -> tensor<f32>\n"
     "%4 = \"core.pad\"(%arg0, %3) {low = [1, 0], high = [0, 2]} : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x6xf32>\n"
     "%5 = \"core.shape\"(%0) : (tensor<4x?xf32>) -> tensor<2xi64>\n"
     "%6:2 = \"core.split\"(%arg0) {axis = 1, num_splits = 2} : (tensor<?x4xf32>) -> (tensor<?x2xf32>, tensor<?x2xf32>)\n"
     "%7 = \"core.reshape\"(%1) {shape = [-1, 2]} : (tensor<?xf32>) -> tensor<?x2xf32>\n"
     "\"func.return\"(%0, %1, %2, %4, %5, %6#0, %6#1, %7) : (tensor<4x?xf32>, "
     "tensor<?xf32>, tensor<?x4xf32>, tensor<?x6xf32>, tensor<2xi64>, "
     "tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>) -> ()\n}\n}\n"},
    {"dyn_matmul",
     "module {\n" F "(%arg0: tensor<?x3xf32>, %arg1: tensor<3x?xf32>, "
     "%arg2: tensor<2x?xi32>) -> (tensor<?x?xf32>, tensor<?x?xf32>, "
     "tensor<2x2xi32>) {\n"
     "%0 = \"core.matmul\"(%arg0, %arg1) : (tensor<?x3xf32>, tensor<3x?xf32>) -> tensor<?x?xf32>\n"
     "%1 = \"core.matmul\"(%arg1, %arg0) {transpose_a = true, transpose_b = true} : (tensor<3x?xf32>, tensor<?x3xf32>) -> tensor<?x?xf32>\n"
     "%2 = \"core.matmul\"(%arg2, %arg2) {transpose_b = true} : (tensor<2x?xi32>, tensor<2x?xi32>) -> tensor<2x2xi32>\n"
     "\"func.return\"(%0, %1, %2) : (tensor<?x?xf32>, tensor<?x?xf32>, tensor<2x2xi32>) -> ()\n}\n}\n"},
    {"dyn_growing_loop_and_if",
     "module {\n" F "(%arg0: tensor<?x2xf32>) -> (tensor<?x2xf32>, "
     "tensor<?x2xf32>, tensor<i64>) {\n"
     "%0 = \"core.constant\"() {value = dense<0.0> : tensor<0x2xf32>} : () -> tensor<0x2xf32>\n"
     "%1 = \"core.reshape\"(%0) {shape = [-1, 2]} : (tensor<0x2xf32>) -> tensor<?x2xf32>\n"
     "%2 = \"core.constant\"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>\n"
     "%3 = \"core.dim\"(%arg0) {index = 0} : (tensor<?x2xf32>) -> tensor<i64>\n"
     "%4:2 = \"ctl.while\"(%2, %1) ({\n"
     "^bb0(%arg1: tensor<i64>, %arg2: tensor<?x2xf32>):\n"
     "%5 = \"core.lt\"(%arg1, %3) : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
     "\"ctl.condition\"(%5) : (tensor<i1>) -> ()\n"
     "}, {\n"
     "^bb0(%arg3: tensor<i64>, %arg4: tensor<?x2xf32>):\n"
     "%6 = \"core.cast\"(%arg3) {dtype = \"f32\"} : (tensor<i64>) -> tensor<f32>\n"
     "%7 = \"core.add\"(%arg0, %6) : (tensor<?x2xf32>, tensor<f32>) -> tensor<?x2xf32>\n"
     "%8 = \"core.concat\"(%arg4, %7) {axis = 0} : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>\n"
     "%9 = \"core.constant\"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>\n"
     "%10 = \"core.add\"(%arg3, %9) : (tensor<i64>, tensor<i64>) -> tensor<i64>\n"
     "\"ctl.yield\"(%10, %8) : (tensor<i64>, tensor<?x2xf32>) -> ()\n"
     "}) : (tensor<i64>, tensor<?x2xf32>) -> (tensor<i64>, tensor<?x2xf32>)\n"
     "%11 = \"core.constant\"() {value = dense<2> : tensor<i64>} : () -> tensor<i64>\n"
     "%12 = \"core.gt\"(%3, %11) : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
     "%13 = \"ctl.if\"(%12) ({\n"
     "%14 = \"core.concat\"(%arg0, %arg0) {axis = 0} : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>\n"
     "\"ctl.yield\"(%14) : (tensor<?x2xf32>) -> ()\n"
     "}, {\n"
     "%15 = \"core.neg\"(%arg0) : (tensor<?x2xf32>) -> tensor<?x2xf32>\n"
     "\"ctl.yield\"(%15) : (tensor<?x2xf32>) -> ()\n"
     "}) : (tensor<i1>) -> tensor<?x2xf32>\n"
     "\"func.return\"(%4#1, %13, %4#0) : (tensor<?x2xf32>, tensor<?x2xf32>, tensor<i64>) -> ()\n}\n}\n"},
    {"dyn_list_stack_and_pop",
     "module {\n" F "(%arg0: tensor<?x3xf32>) -> (tensor<?x3xf32>, "
     "tensor<?x2x3xf32>, tensor<?x3xf32>) {\n"
     "%0 = \"tl.from_tensor\"(%arg0) : (tensor<?x3xf32>) -> !tl.list<tensor<3xf32>>\n"
     "%1 = \"tl.stack\"(%0) : (!tl.list<tensor<3xf32>>) -> tensor<?x3xf32>\n"
     "%2 = \"core.concat\"(%arg0, %arg0) {axis = 1} : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x6xf32>\n"
     "%3 = \"core.reshape\"(%2) {shape = [-1, 2, 3]} : (tensor<?x6xf32>) -> tensor<?x2x3xf32>\n"
     "%4 = \"tl.empty\"() : () -> !tl.list<tensor<?x3xf32>>\n"
     "%5 = \"tl.push_back\"(%4, %arg0) : (!tl.list<tensor<?x3xf32>>, tensor<?x3xf32>) -> !tl.list<tensor<?x3xf32>>\n"
     "%6:2 = \"tl.pop_back\"(%5) : (!tl.list<tensor<?x3xf32>>) -> (!tl.list<tensor<?x3xf32>>, tensor<?x3xf32>)\n"
     "\"func.return\"(%1, %3, %6#1) : (tensor<?x3xf32>, tensor<?x2x3xf32>, tensor<?x3xf32>) -> ()\n}\n}\n"},
};

static void test_dynamic_programs_match_evaluator(void **state) {
  fixture_t *f = *state;
  static const int64_t sizes[] = {0, 1, 3, 5};
  size_t n_sizes = sizeof sizes / sizeof sizes[0];
  for (size_t i = 0; i < sizeof k_dyn_programs / sizeof k_dyn_programs[0];
       i++) {
    run_program(f, &k_dyn_programs[i], true, 7, sizes, n_sizes);
    run_program(f, &k_dyn_programs[i], false, 7, sizes, n_sizes);
  }
}

static const char k_dyn_add[] =
    "module {\n" F "(%arg0: tensor<?xf32>, %arg1: tensor<?xf32>) -> "
    "tensor<?xf32> {\n"
    "%0 = \"core.add\"(%arg0, %arg1) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>\n"
    "%1 = \"core.exp\"(%0) : (tensor<?xf32>) -> tensor<?xf32>\n"
    "\"func.return\"(%1) : (tensor<?xf32>) -> ()\n}\n}\n";

/// Dynamic dims at entry: rank and static dims are checked, the message
/// shows `?`; operands whose sizes do not broadcast (3 and 5) are a
/// run-time error naming the op, with the results released and no memory
/// left behind.
static void test_dynamic_shape_errors(void **state) {
  fixture_t *f = *state;
  eddy_module_t *m = parse(f, k_dyn_add);
  eddy_cpu_jit_t *jit = NULL;
  expect_ok(eddy_cpu_jit_create(m, "f", NULL, &jit));
  int64_t d3 = 3, d5 = 5, d22[2] = {2, 2};
  eddy_rt_tensor_t args[2], res[1];
  assert_null(eddy_rt_tensor_create(f->rt, EDDY_RT_F32, 1, &d3, "t", &args[0]));
  assert_null(eddy_rt_tensor_create(f->rt, EDDY_RT_F32, 2, d22, "t", &args[1]));
  char err[256];
  int32_t rc = eddy_cpu_jit_entry(jit)(f->rt, args, res, err, sizeof err);
  assert_int_equal(rc, EDDY_RT_ERR_INVALID_ARGUMENT);
  assert_string_equal(err, "argument 1 'arg1': expected f32[?], got f32[2,2]");
  eddy_rt_tensor_release(&args[1]);
  assert_null(eddy_rt_tensor_create(f->rt, EDDY_RT_F32, 1, &d5, "t", &args[1]));
  int64_t before = eddy_rt_ctx_bytes_in_use(f->rt);
  rc = eddy_cpu_jit_entry(jit)(f->rt, args, res, err, sizeof err);
  assert_int_equal(rc, EDDY_RT_ERR_INVALID_ARGUMENT);
  assert_string_equal(err, "test.eddy:3:1: 'core.add' op: dimension 0 cannot "
                           "broadcast (3 and 5)");
  assert_null(res[0].data);
  assert_int_equal(eddy_rt_ctx_bytes_in_use(f->rt), before);
  // The evaluator refuses the same inputs.
  eddy_op_t *func = eddy_ir_module_lookup_func(m, "f");
  eddy_eval_value_t want[1];
  eddy_status_t st = run_evaluator(f, func, args, 2, want, 1);
  assert_non_null(st);
  eddy_status_destroy(st);
  // Size 1 broadcasts against 5.
  eddy_rt_tensor_release(&args[0]);
  int64_t d1 = 1;
  assert_null(eddy_rt_tensor_create(f->rt, EDDY_RT_F32, 1, &d1, "t", &args[0]));
  eddy_rt_tensor_set_f64(&args[0], 0, 0.0);
  for (int i = 0; i < 5; i++)
    eddy_rt_tensor_set_f64(&args[1], i, 0.0);
  rc = eddy_cpu_jit_entry(jit)(f->rt, args, res, err, sizeof err);
  assert_int_equal(rc, 0);
  assert_int_equal(res[0].rank, 1);
  assert_int_equal(res[0].dims[0], 5);
  assert_true(eddy_rt_tensor_get_f64(&res[0], 4) == 1.0);
  eddy_rt_tensor_release(&res[0]);
  eddy_rt_tensor_release(&args[0]);
  eddy_rt_tensor_release(&args[1]);
  eddy_cpu_jit_destroy(jit);
  eddy_ir_module_destroy(m);
}

/// A buffer of run-time size past the context's memory limit: the call
/// fails with the runtime's error and frees what it had allocated.
static void test_dynamic_memory_limit(void **state) {
  fixture_t *f = *state;
  eddy_module_t *m = parse(f, k_dyn_add);
  eddy_cpu_opts_t o = eddy_cpu_opts_default();
  o.fuse = false; // %0 gets a scratch buffer of the run-time size
  eddy_cpu_jit_t *jit = NULL;
  expect_ok(eddy_cpu_jit_create(m, "f", &o, &jit));
  int64_t n = 4096;
  eddy_rt_tensor_t args[2], res[1];
  assert_null(eddy_rt_tensor_create(f->rt, EDDY_RT_F32, 1, &n, "t", &args[0]));
  assert_null(eddy_rt_tensor_create(f->rt, EDDY_RT_F32, 1, &n, "t", &args[1]));
  int64_t before = eddy_rt_ctx_bytes_in_use(f->rt);
  eddy_rt_ctx_set_memory_limit(f->rt, before + 20000);
  char err[256];
  int32_t rc = eddy_cpu_jit_entry(jit)(f->rt, args, res, err, sizeof err);
  assert_int_equal(rc, EDDY_RT_ERR_RESOURCE);
  assert_non_null(strstr(err, "memory limit"));
  assert_null(res[0].data);
  assert_int_equal(eddy_rt_ctx_bytes_in_use(f->rt), before);
  eddy_rt_ctx_set_memory_limit(f->rt, before + 60000);
  rc = eddy_cpu_jit_entry(jit)(f->rt, args, res, err, sizeof err);
  assert_int_equal(rc, 0);
  // Only the result (the size of one argument) is left.
  assert_int_equal(eddy_rt_ctx_bytes_in_use(f->rt), before + before / 2);
  eddy_rt_tensor_release(&res[0]);
  eddy_rt_ctx_set_memory_limit(f->rt, 0);
  eddy_rt_tensor_release(&args[0]);
  eddy_rt_tensor_release(&args[1]);
  eddy_cpu_jit_destroy(jit);
  eddy_ir_module_destroy(m);
}

static void test_unranked_unsupported(void **state) {
  fixture_t *f = *state;
  eddy_module_t *m = parse(
      f, "module {\n" F "(%arg0: tensor<*xf32>) -> tensor<*xf32> {\n"
         "%0 = \"core.exp\"(%arg0) : (tensor<*xf32>) -> tensor<*xf32>\n"
         "\"func.return\"(%0) : (tensor<*xf32>) -> ()\n}\n}\n");
  eddy_buf_t out;
  eddy_buf_init(&out);
  eddy_status_t st = eddy_cpu_emit_mlir(m, "f", NULL, &out);
  assert_non_null(st);
  assert_int_equal(eddy_status_code(st), EDDY_ERR_UNSUPPORTED);
  assert_non_null(strstr(eddy_status_message(st), "ranked tensors"));
  eddy_status_destroy(st);
  st = eddy_cpu_emit_mlir(m, "nope", NULL, &out);
  assert_int_equal(eddy_status_code(st), EDDY_ERR_NOT_FOUND);
  eddy_status_destroy(st);
  eddy_buf_destroy(&out);
  eddy_ir_module_destroy(m);
}

static void test_object_file(void **state) {
  fixture_t *f = *state;
  eddy_module_t *m = parse(f, k_programs[11].text);
  char path[] = "/tmp/eddy_cpu_test_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  eddy_cpu_opts_t o = eddy_cpu_opts_default();
  o.prefix = "model";
  o.cpu = "x86-64-v2";
  expect_ok(eddy_cpu_compile_object(m, "f", &o, path));
  FILE *fp = fopen(path, "rb");
  assert_non_null(fp);
  unsigned char magic[4] = {0};
  assert_int_equal(fread(magic, 1, 4, fp), 4);
  fclose(fp);
  unlink(path);
  assert_memory_equal(magic, "\x7f" "ELF", 4);
  o.prefix = "not an identifier";
  eddy_status_t st = eddy_cpu_compile_object(m, "f", &o, path);
  assert_int_equal(eddy_status_code(st), EDDY_ERR_INVALID_ARGUMENT);
  eddy_status_destroy(st);
  eddy_ir_module_destroy(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_programs_match_evaluator, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_entry_checks_arguments, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_scratch_memory_limit, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_gather_out_of_range, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_concurrent_calls, setup, teardown),
      cmocka_unit_test_setup_teardown(test_lists, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dynamic_programs_match_evaluator,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_dynamic_shape_errors, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_dynamic_memory_limit, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_unranked_unsupported, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_object_file, setup, teardown),
      cmocka_unit_test_setup_teardown(test_loop_budgets, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

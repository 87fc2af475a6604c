/// Links two objects compiled from model.eddy, the recurrent cell @rnn and
/// its gradient @rnn_grad, and runs both:
///   eddy compile model.eddy --entry rnn --prefix rnn -o rnn.o --header rnn.h
///   eddy grad model.eddy --entry rnn --wrt arg0,arg1,arg2,arg3 -o grad.eddy
///   eddy compile grad.eddy --entry rnn_grad --prefix rnn_grad
///       -o rnn_grad.o --header rnn_grad.h
///   cc -I. -I<eddy>/runtime main.c rnn.o rnn_grad.o libeddy_rt.a -lm -lpthread
///   ./a.out X0 X1 X2 MAX_STEPS TOL
/// (or with CMake: two eddy_add_model calls, see CMakeLists.txt here). The
/// weights W, U, b are the constants below. It prints the results in the
/// format of `eddy run --preview all`, so the two can be compared.
#include "rnn.h"
#include "rnn_grad.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static float W[3][4] = {{0.5f, -0.25f, 0.125f, 0.75f},
                        {-0.5f, 0.25f, 1.0f, 0.0f},
                        {0.25f, 0.5f, -0.75f, 0.5f}};
static float U[4][4] = {{0.25f, 0.0f, 0.125f, -0.25f},
                        {0.0f, 0.5f, 0.0f, 0.125f},
                        {-0.125f, 0.0f, 0.25f, 0.0f},
                        {0.25f, -0.25f, 0.0f, 0.375f}};
static float B[1][4] = {{0.1f, -0.2f, 0.05f, 0.0f}};

/// A float as `eddy run` prints it: whole numbers as "2.0", the rest with the
/// fewest digits that read back as the same f32.
static void print_f32(float v) {
  if (isnan(v) || isinf(v)) {
    printf("%s", isnan(v) ? "nan" : v < 0 ? "-inf" : "inf");
    return;
  }
  double d = v;
  if (d == floor(d) && fabs(d) < 1e16) {
    printf("%.0f.0", d);
    return;
  }
  char text[64];
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(text, sizeof text, "%.*g", prec, d);
    if (strtof(text, NULL) == v)
      break;
  }
  printf("%s%s", text, strpbrk(text, ".e") ? "" : ".0");
}

/// One result in the format of `eddy run --preview all`:
///   result 0: f32[1, 4] = [0.96027, ...]
/// (results are contiguous; this example has only f32 and i64 ones).
static void print_result(int index, const eddy_rt_tensor_t *t) {
  printf("result %d: %s[", index, t->dtype == EDDY_RT_F32 ? "f32" : "i64");
  int64_t n = 1;
  for (int32_t i = 0; i < t->rank; i++) {
    printf("%s%" PRId64, i ? ", " : "", t->dims[i]);
    n *= t->dims[i];
  }
  printf("] = ");
  if (t->rank > 0)
    printf("[");
  for (int64_t i = 0; i < n; i++) {
    if (i)
      printf(", ");
    if (t->dtype == EDDY_RT_F32)
      print_f32(((const float *)t->data)[i]);
    else
      printf("%" PRId64, ((const int64_t *)t->data)[i]);
  }
  printf("%s\n", t->rank > 0 ? "]" : "");
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: %s X0 X1 X2 MAX_STEPS TOL\n", argv[0]);
    return 2;
  }
  float x[3] = {strtof(argv[1], NULL), strtof(argv[2], NULL),
                strtof(argv[3], NULL)};
  int64_t max_steps = strtoll(argv[4], NULL, 10);
  float tol = strtof(argv[5], NULL);

  eddy_rt_ctx_t *rt = NULL;
  eddy_rt_status_t rs = eddy_rt_ctx_create(NULL, &rt);
  if (rs) {
    fprintf(stderr, "%s\n", eddy_rt_status_message(rs));
    eddy_rt_status_destroy(rs);
    return 1;
  }
  // rnn(x, W, U, b, max_steps, tol) -> (h, steps)
  const int64_t xdims[2] = {1, 3}, wdims[2] = {3, 4}, udims[2] = {4, 4},
                bdims[2] = {1, 4};
  eddy_rt_tensor_t args[rnn_grad_NUM_ARGS];
  eddy_rt_tensor_wrap(EDDY_RT_F32, 2, xdims, x, &args[0]);
  eddy_rt_tensor_wrap(EDDY_RT_F32, 2, wdims, W, &args[1]);
  eddy_rt_tensor_wrap(EDDY_RT_F32, 2, udims, U, &args[2]);
  eddy_rt_tensor_wrap(EDDY_RT_F32, 2, bdims, B, &args[3]);
  eddy_rt_tensor_wrap(EDDY_RT_I64, 0, NULL, &max_steps, &args[4]);
  eddy_rt_tensor_wrap(EDDY_RT_F32, 0, NULL, &tol, &args[5]);

  char err[256];
  eddy_rt_tensor_t results[rnn_grad_NUM_RESULTS];
  int32_t rc = rnn_run(rt, args, results, err, sizeof err);
  if (rc != 0) {
    fprintf(stderr, "rnn: error: %s\n", err);
    eddy_rt_ctx_destroy(rt);
    return 1;
  }
  printf("rnn:\n");
  for (int i = 0; i < rnn_NUM_RESULTS; i++) {
    print_result(i, &results[i]);
    eddy_rt_tensor_release(&results[i]);
  }

  // rnn_grad(x, W, U, b, max_steps, tol, seed_h, seed_steps)
  //   -> (h, steps, dx, dW, dU, db)
  // With seed_h all ones, the gradients are those of sum(h); the seed of the
  // integer result is ignored.
  float seed_h[4] = {1, 1, 1, 1};
  int64_t seed_steps = 0;
  eddy_rt_tensor_wrap(EDDY_RT_F32, 2, bdims, seed_h, &args[6]);
  eddy_rt_tensor_wrap(EDDY_RT_I64, 0, NULL, &seed_steps, &args[7]);
  rc = rnn_grad_run(rt, args, results, err, sizeof err);
  if (rc != 0) {
    fprintf(stderr, "rnn_grad: error: %s\n", err);
    eddy_rt_ctx_destroy(rt);
    return 1;
  }
  printf("rnn_grad:\n");
  for (int i = 0; i < rnn_grad_NUM_RESULTS; i++) {
    print_result(i, &results[i]);
    eddy_rt_tensor_release(&results[i]);
  }

  // A wrong input is an error with a message, never a crash.
  const int64_t bad[2] = {3, 1};
  eddy_rt_tensor_wrap(EDDY_RT_F32, 2, bad, x, &args[0]);
  rc = rnn_run(rt, args, results, err, sizeof err);
  printf("wrong shape: %d: %s\n", (int)rc, err);
  eddy_rt_ctx_destroy(rt);
  return 0;
}

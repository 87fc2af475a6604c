/// Links the object compiled from model.eddy and runs it:
///   eddy compile model.eddy --entry rnn --prefix rnn -o rnn.o --header rnn.h
///   cc -I. -I<eddy>/runtime main.c rnn.o libeddy_rt.a -lm -lpthread
///   ./a.out X0 X1 X2 MAX_STEPS TOL
/// (or with CMake: eddy_add_model, see CMakeLists.txt here). It prints the
/// results in the format of `eddy run`, so the two can be compared.
#include "rnn.h"

#include <stdio.h>
#include <stdlib.h>

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
  const int64_t xdims[2] = {1, 3};
  eddy_rt_tensor_t args[rnn_NUM_ARGS], results[rnn_NUM_RESULTS];
  eddy_rt_tensor_wrap(EDDY_RT_F32, 2, xdims, x, &args[0]);
  eddy_rt_tensor_wrap(EDDY_RT_I64, 0, NULL, &max_steps, &args[1]);
  eddy_rt_tensor_wrap(EDDY_RT_F32, 0, NULL, &tol, &args[2]);

  char err[256];
  int32_t rc = rnn_run(rt, args, results, err, sizeof err);
  if (rc != 0) {
    fprintf(stderr, "error: %s\n", err);
    eddy_rt_ctx_destroy(rt);
    return 1;
  }
  const float *h = results[0].data;
  printf("result 0: f32[1, 4] = [%.9g, %.9g, %.9g, %.9g]\n", h[0], h[1], h[2],
         h[3]);
  printf("result 1: i64[] = %lld\n", (long long)*(int64_t *)results[1].data);
  for (int i = 0; i < rnn_NUM_RESULTS; i++)
    eddy_rt_tensor_release(&results[i]);

  // A wrong input is an error with a message, never a crash.
  const int64_t bad[2] = {3, 1};
  eddy_rt_tensor_wrap(EDDY_RT_F32, 2, bad, x, &args[0]);
  rc = rnn_run(rt, args, results, err, sizeof err);
  printf("wrong shape: %d: %s\n", rc, err);
  eddy_rt_ctx_destroy(rt);
  return 0;
}

/// Runs count_v2 (tests/fixtures/tf: a TensorFlow while_loop, 10 iterations
/// of v = v * 0.9 + 1) built by eddy_add_model from its GraphDef, and checks
/// it against the same loop in C.
#include "count.h"

#include <math.h>
#include <stdio.h>

int main(void) {
  eddy_rt_ctx_t *rt = NULL;
  eddy_rt_status_t rs = eddy_rt_ctx_create(NULL, &rt);
  if (rs) {
    fprintf(stderr, "%s\n", eddy_rt_status_message(rs));
    eddy_rt_status_destroy(rs);
    return 1;
  }
  float x[3] = {1, -2, 30};
  const int64_t dims[1] = {3};
  eddy_rt_tensor_t args[count_NUM_ARGS], results[count_NUM_RESULTS];
  eddy_rt_tensor_wrap(EDDY_RT_F32, 1, dims, x, &args[0]);
  char err[256] = "";
  int32_t rc = count_run(rt, args, results, err, sizeof err);
  if (rc != 0) {
    fprintf(stderr, "error: %s\n", err);
    eddy_rt_ctx_destroy(rt);
    return 1;
  }
  const float *y = results[0].data;
  int bad = 0;
  for (int i = 0; i < 3; i++) {
    float v = x[i];
    for (int k = 0; k < 10; k++)
      v = v * 0.9f + 1.0f;
    bad |= !(fabsf(y[i] - v) <= 1e-5f * (1 + fabsf(v)));
  }
  printf("count (GraphDef): [%g, %g, %g]%s\n", y[0], y[1], y[2],
         bad ? " MISMATCH" : "");
  eddy_rt_tensor_release(&results[0]);
  eddy_rt_ctx_destroy(rt);
  return bad;
}

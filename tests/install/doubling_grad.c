/// Runs the gradient of model.eddy's @doubling, built by eddy_add_model with
/// GRAD_WRT: doubling_grad(x, limit, seed_y, seed_n) returns y, n, dy/dx and
/// dy/dlimit. x = [1, 2, 3] with limit 100 is doubled 5 times, so y = 32 x,
/// the gradient of x is 32 * seed_y, and the limit (only compared with) has
/// none.
#ifdef EDDY_TEST_MODEL_HEADER
#include EDDY_TEST_MODEL_HEADER
#else
#include "doubling_grad.h"
#endif

#include <stdio.h>

int main(void) {
  eddy_rt_ctx_t *rt = NULL;
  eddy_rt_status_t rs = eddy_rt_ctx_create(NULL, &rt);
  if (rs) {
    fprintf(stderr, "%s\n", eddy_rt_status_message(rs));
    eddy_rt_status_destroy(rs);
    return 1;
  }
  float x[3] = {1, 2, 3}, limit = 100, seed[3] = {1, -0.5f, 2};
  int64_t seed_n = 0;
  const int64_t dims[1] = {3};
  eddy_rt_tensor_t args[doubling_grad_NUM_ARGS];
  eddy_rt_tensor_t results[doubling_grad_NUM_RESULTS];
  eddy_rt_tensor_wrap(EDDY_RT_F32, 1, dims, x, &args[0]);
  eddy_rt_tensor_wrap(EDDY_RT_F32, 0, NULL, &limit, &args[1]);
  eddy_rt_tensor_wrap(EDDY_RT_F32, 1, dims, seed, &args[2]);
  eddy_rt_tensor_wrap(EDDY_RT_I64, 0, NULL, &seed_n, &args[3]);
  char err[256] = "";
  int32_t rc = doubling_grad_run(rt, args, results, err, sizeof err);
  if (rc != 0) {
    fprintf(stderr, "error: %s\n", err);
    eddy_rt_ctx_destroy(rt);
    return 1;
  }
  const float *y = results[0].data, *dx = results[2].data,
              *dlimit = results[3].data;
  int64_t n = *(const int64_t *)results[1].data;
  printf("doubling_grad: y [%g, %g, %g] after %lld steps, dx [%g, %g, %g], "
         "dlimit %g\n",
         y[0], y[1], y[2], (long long)n, dx[0], dx[1], dx[2], dlimit[0]);
  int bad = !(doubling_grad_NUM_RESULTS == 4 && n == 5 && y[0] == 32 &&
              y[1] == 64 && y[2] == 96 && dx[0] == 32 && dx[1] == -16 &&
              dx[2] == 64 && dlimit[0] == 0);
  for (int i = 0; i < doubling_grad_NUM_RESULTS; i++)
    eddy_rt_tensor_release(&results[i]);
  eddy_rt_ctx_destroy(rt);
  if (bad)
    fprintf(stderr, "FAILED: unexpected results\n");
  return bad;
}

/// Runs the model of model.eddy compiled by an installed eddy (through
/// eddy_add_model, or by hand with pkg-config flags: see run.sh), checks its
/// results and its argument checking, and prints what it found. With
/// EDDY_TEST_NO_DEVICE (the model compiled for the GPU, run where the CUDA
/// driver cannot be loaded) the call must fail cleanly instead.
#include EDDY_TEST_MODEL_HEADER

#include <stdio.h>
#include <string.h>

int main(void) {
  eddy_rt_ctx_t *rt = NULL;
  eddy_rt_status_t rs = eddy_rt_ctx_create(NULL, &rt);
  if (rs) {
    fprintf(stderr, "%s\n", eddy_rt_status_message(rs));
    eddy_rt_status_destroy(rs);
    return 1;
  }
  float x[3] = {1, 2, 3}, limit = 100;
  const int64_t dims[1] = {3};
  eddy_rt_tensor_t args[doubling_NUM_ARGS], results[doubling_NUM_RESULTS];
  eddy_rt_tensor_wrap(EDDY_RT_F32, 1, dims, x, &args[0]);
  eddy_rt_tensor_wrap(EDDY_RT_F32, 0, NULL, &limit, &args[1]);
  char err[256] = "";
  int32_t rc = doubling_run(rt, args, results, err, sizeof err);
#ifdef EDDY_TEST_NO_DEVICE
  printf("doubling (cuda): %d: %s\n", rc, err);
  eddy_rt_ctx_destroy(rt);
  return !(rc == EDDY_RT_ERR_UNSUPPORTED && strstr(err, "no CUDA device: "));
#endif
  if (rc != 0) {
    fprintf(stderr, "error: %s\n", err);
    eddy_rt_ctx_destroy(rt);
    return 1;
  }
  const float *y = results[0].data;
  int64_t n = *(const int64_t *)results[1].data;
  printf("doubling: [%g, %g, %g] after %lld steps\n", y[0], y[1], y[2],
         (long long)n);
  int bad = !(y[0] == 32 && y[1] == 64 && y[2] == 96 && n == 5);
  for (int i = 0; i < doubling_NUM_RESULTS; i++)
    eddy_rt_tensor_release(&results[i]);

  // The check an application makes at start-up: the entry against
  // reference results, a report per result, as JSON too.
  float want_y[3] = {32, 64, 96};
  int64_t want_n = 5;
  eddy_rt_tensor_t refs[doubling_NUM_RESULTS];
  eddy_rt_tensor_wrap(EDDY_RT_F32, 1, dims, want_y, &refs[0]);
  eddy_rt_tensor_wrap(EDDY_RT_I64, 0, NULL, &want_n, &refs[1]);
  eddy_rt_compare_result_t rep[doubling_NUM_RESULTS];
  bool ok = false;
  rs = eddy_rt_compare_entry(rt, doubling_run, args, refs, doubling_NUM_RESULTS,
                             NULL, rep, &ok);
  char json[1024];
  eddy_rt_compare_json(rep, doubling_NUM_RESULTS, json, sizeof json);
  printf("compare: %s %s\n", ok ? "ok" : "MISMATCH", json);
  bad |= rs != NULL || !ok;
  eddy_rt_status_destroy(rs);

  // A wrong shape is an error status and a message.
  const int64_t short_dims[1] = {2};
  eddy_rt_tensor_wrap(EDDY_RT_F32, 1, short_dims, x, &args[0]);
  rc = doubling_run(rt, args, results, err, sizeof err);
  printf("wrong shape: %d: %s\n", rc, err);
  bad |= rc == 0 || !strstr(err, "expected f32[3], got f32[2]");
  printf("abi %u\n", eddy_rt_abi_version());
  eddy_rt_ctx_destroy(rt);
  if (bad)
    fprintf(stderr, "FAILED: unexpected results\n");
  return bad;
}

/// Links the gradient of model.eddy's RevNet compiled three ways and runs
/// each on the same network:
///   revnet_store       eddy grad (every block's intermediates stored)
///   revnet_checkpoint  eddy grad --loop-memory=checkpoint:4 (4 snapshots)
///   revnet_reversible  eddy grad --reversible (nothing stored per block)
///   ./revnet_example [DEPTH [WEIGHT_SCALE]]   (default 64, 1/64)
/// It prints, for each, the gradient's largest difference from the stored
/// one (relative to the largest gradient element) and the runtime context's
/// peak memory, and exits 1 when a difference exceeds 1e-4 (f32 with
/// weights of norm below 1; docs/autodiff.md measures the drift).
#include "revnet_checkpoint.h"
#include "revnet_reversible.h"
#include "revnet_store.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { ROWS = 128, HALF = 64, NUM_ARGS = 8, NUM_RESULTS = 8 };

typedef int32_t (*entry_fn)(eddy_rt_ctx_t *rt, const eddy_rt_tensor_t *args,
                            eddy_rt_tensor_t *results, char *err,
                            size_t errlen);

/// A fixed pseudo-random number in [-1, 1).
static float uniform(uint64_t *state) {
  *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (float)((double)(*state >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static float *fill(size_t n, float scale, uint64_t *state) {
  float *p = malloc(n * sizeof(*p));
  if (!p) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  for (size_t i = 0; i < n; i++)
    p[i] = scale * uniform(state);
  return p;
}

/// Runs one variant on its own context *rt (destroyed by the caller after
/// the results are released); results[] receive its outputs.
static int run(const char *name, entry_fn fn, const eddy_rt_tensor_t *args,
               eddy_rt_ctx_t **rt, eddy_rt_tensor_t *results,
               double *peak_mb) {
  eddy_rt_status_t rs = eddy_rt_ctx_create(NULL, rt);
  if (rs) {
    fprintf(stderr, "%s\n", eddy_rt_status_message(rs));
    eddy_rt_status_destroy(rs);
    return 1;
  }
  char err[512];
  int32_t rc = fn(*rt, args, results, err, sizeof err);
  *peak_mb = (double)eddy_rt_ctx_peak_bytes(*rt) / (1024.0 * 1024.0);
  if (rc != 0)
    fprintf(stderr, "%s: error: %s\n", name, err);
  return rc != 0;
}

/// The largest |a - b| over the gradients (results 2..7), relative to the
/// largest |a|.
static double difference(const eddy_rt_tensor_t *a, const eddy_rt_tensor_t *b) {
  double big = 0, diff = 0;
  for (int r = 2; r < NUM_RESULTS; r++) {
    int64_t n = eddy_rt_tensor_numel(&a[r]);
    for (int64_t i = 0; i < n; i++) {
      double x = eddy_rt_tensor_get_f64(&a[r], i);
      double y = eddy_rt_tensor_get_f64(&b[r], i);
      big = fmax(big, fabs(x));
      diff = fmax(diff, fabs(x - y));
    }
  }
  return big > 0 ? diff / big : diff;
}

int main(int argc, char **argv) {
  int64_t depth = argc > 1 ? strtoll(argv[1], NULL, 10) : 64;
  float scale = argc > 2 ? strtof(argv[2], NULL) : 1.0f / 64;
  if (depth < 0 || depth > 100000 || !(scale >= 0)) {
    fprintf(stderr, "usage: %s [DEPTH [WEIGHT_SCALE]]   (0 <= DEPTH <= "
                    "100000; weights uniform in +-WEIGHT_SCALE, default "
                    "1/64)\n",
            argv[0]);
    return 2;
  }
  uint64_t state = 42;
  /* Small residual functions (weights uniform in +-1/64 over 64 inputs:
     each block's Jacobian far below 1, as in a trained residual network):
     the inversion's rounding errors then stay small through the depth. */
  float *x1 = fill(ROWS * HALF, 1.0f, &state);
  float *x2 = fill(ROWS * HALF, 1.0f, &state);
  float *wf = fill((size_t)depth * HALF * HALF, scale, &state);
  float *bf = fill((size_t)depth * HALF, 0.1f, &state);
  float *wg = fill((size_t)depth * HALF * HALF, scale, &state);
  float *bg = fill((size_t)depth * HALF, 0.1f, &state);
  float *seed = fill(ROWS * HALF, 1.0f, &state);
  const int64_t xd[2] = {ROWS, HALF}, wd[3] = {depth, HALF, HALF},
                bd[2] = {depth, HALF};
  eddy_rt_tensor_t args[NUM_ARGS];
  eddy_rt_tensor_wrap(EDDY_RT_F32, 2, xd, x1, &args[0]);
  eddy_rt_tensor_wrap(EDDY_RT_F32, 2, xd, x2, &args[1]);
  eddy_rt_tensor_wrap(EDDY_RT_F32, 3, wd, wf, &args[2]);
  eddy_rt_tensor_wrap(EDDY_RT_F32, 2, bd, bf, &args[3]);
  eddy_rt_tensor_wrap(EDDY_RT_F32, 3, wd, wg, &args[4]);
  eddy_rt_tensor_wrap(EDDY_RT_F32, 2, bd, bg, &args[5]);
  /* Seeds: the gradients of <seed, y1> + <seed, y2>. */
  eddy_rt_tensor_wrap(EDDY_RT_F32, 2, xd, seed, &args[6]);
  eddy_rt_tensor_wrap(EDDY_RT_F32, 2, xd, seed, &args[7]);

  static const char *const names[3] = {"store", "checkpoint:4", "reversible"};
  const entry_fn fns[3] = {revnet_store_run, revnet_checkpoint_run,
                           revnet_reversible_run};
  eddy_rt_tensor_t results[3][NUM_RESULTS];
  eddy_rt_ctx_t *rts[3] = {NULL, NULL, NULL};
  double peak[3];
  int failed = 0, ran = 0;
  for (; ran < 3 && !failed; ran++)
    failed = run(names[ran], fns[ran], args, &rts[ran], results[ran],
                 &peak[ran]);
  if (!failed) {
    printf("RevNet gradient, depth %lld, batch %d, width 2x%d\n",
           (long long)depth, ROWS, HALF);
    for (int v = 0; v < 3; v++) {
      double d = v ? difference(results[0], results[v]) : 0.0;
      printf("  %-13s peak memory %8.2f MB, difference from store %.2g\n",
             names[v], peak[v], d);
      if (d > 1e-4) {
        fprintf(stderr, "%s: the gradient differs from store's by %.3g\n",
                names[v], d);
        failed = 1;
      }
    }
    for (int v = 0; v < 3; v++)
      for (int r = 0; r < NUM_RESULTS; r++)
        eddy_rt_tensor_release(&results[v][r]);
  }
  for (int v = 0; v < 3; v++)
    if (rts[v])
      eddy_rt_ctx_destroy(rts[v]);
  free(x1);
  free(x2);
  free(wf);
  free(bf);
  free(wg);
  free(bg);
  free(seed);
  return failed;
}

/// An application embedding a compiled model: the gradient of the example
/// RNN (examples/app/model.eddy, @rnn_grad) called many times in one
/// process.
///
///   eddy_embed rss CALLS [SAMPLES]
///     one thread, one runtime context, CALLS calls on 8 inputs in turn;
///     prints the resident set SAMPLES times ("rss CALL KIB") and fails
///     when it grew by more than 1 MiB after the first tenth of the calls,
///     when a result differs from the first call's on the same input, or
///     when the context holds memory afterwards.
///   eddy_embed threads THREADS CALLS [shared]
///     THREADS threads call the same entry at once, each with its own
///     runtime context (the rule of the generated header), CALLS calls
///     each; every result must equal, bit for bit, that of a serial call on
///     the same input (eddy_rt_compare_entry with a tolerance of 0). With
///     `shared`, the threads share one context (allowed too: a context is
///     thread-safe).
#define _POSIX_C_SOURCE 200809L
#include "embed_rnn_grad.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NUM_INPUTS 8

static const float k_w[3][4] = {{0.5f, -0.25f, 0.125f, 0.75f},
                                {-0.5f, 0.25f, 1.0f, 0.0f},
                                {0.25f, 0.5f, -0.75f, 0.5f}};
static const float k_u[4][4] = {{0.25f, 0.0f, 0.125f, -0.25f},
                                {0.0f, 0.5f, 0.0f, 0.125f},
                                {-0.125f, 0.0f, 0.25f, 0.0f},
                                {0.25f, -0.25f, 0.0f, 0.375f}};
static const float k_b[4] = {0.1f, -0.2f, 0.05f, 0.0f};

/// The arguments of one input: x varies with the input's index, so the
/// loop runs a different number of steps.
typedef struct input {
  float x[3], seed_h[4], tol;
  int64_t max_steps, seed_steps;
  eddy_rt_tensor_t args[rnn_grad_NUM_ARGS];
} input_t;

static void input_make(input_t *in, int k) {
  static const int64_t xd[2] = {1, 3}, wd[2] = {3, 4}, ud[2] = {4, 4},
                       bd[2] = {1, 4};
  for (int i = 0; i < 3; i++)
    in->x[i] = 0.25f * (float)(k + 1) * (i == 1 ? -1.0f : 1.0f);
  for (int i = 0; i < 4; i++)
    in->seed_h[i] = 1;
  in->tol = 1e-5f;
  in->max_steps = 20 + 10 * k;
  in->seed_steps = 0;
  eddy_rt_tensor_wrap(EDDY_RT_F32, 2, xd, in->x, &in->args[0]);
  eddy_rt_tensor_wrap(EDDY_RT_F32, 2, wd, (void *)k_w, &in->args[1]);
  eddy_rt_tensor_wrap(EDDY_RT_F32, 2, ud, (void *)k_u, &in->args[2]);
  eddy_rt_tensor_wrap(EDDY_RT_F32, 2, bd, (void *)k_b, &in->args[3]);
  eddy_rt_tensor_wrap(EDDY_RT_I64, 0, NULL, &in->max_steps, &in->args[4]);
  eddy_rt_tensor_wrap(EDDY_RT_F32, 0, NULL, &in->tol, &in->args[5]);
  eddy_rt_tensor_wrap(EDDY_RT_F32, 2, bd, in->seed_h, &in->args[6]);
  eddy_rt_tensor_wrap(EDDY_RT_I64, 0, NULL, &in->seed_steps, &in->args[7]);
}

static input_t g_in[NUM_INPUTS];
/// The results of a serial call per input: the references.
static eddy_rt_tensor_t g_ref[NUM_INPUTS][rnn_grad_NUM_RESULTS];

static eddy_rt_ctx_t *ctx_create(void) {
  eddy_rt_ctx_options_t o = eddy_rt_ctx_options_default();
  o.num_threads = 1;
  eddy_rt_ctx_t *rt = NULL;
  eddy_rt_status_t st = eddy_rt_ctx_create(&o, &rt);
  if (st) {
    fprintf(stderr, "embed: %s\n", eddy_rt_status_message(st));
    exit(1);
  }
  return rt;
}

/// Resident set in KiB (/proc/self/statm), 0 where it cannot be read.
static int64_t rss_kib(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  long long size = 0, resident = 0;
  if (!f)
    return 0;
  if (fscanf(f, "%lld %lld", &size, &resident) != 2)
    resident = 0;
  fclose(f);
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/// One call on input k, compared with the reference exactly; 0 when equal.
static int call_and_check(eddy_rt_ctx_t *rt, int k) {
  eddy_rt_compare_opts_t o = eddy_rt_compare_opts_default();
  o.rtol = 0;
  o.atol = 0;
  eddy_rt_compare_result_t rep[rnn_grad_NUM_RESULTS];
  bool ok = false;
  eddy_rt_status_t st =
      eddy_rt_compare_entry(rt, rnn_grad_run, g_in[k].args, g_ref[k],
                            rnn_grad_NUM_RESULTS, &o, rep, &ok);
  if (st || !ok) {
    char json[2048];
    eddy_rt_compare_json(rep, rnn_grad_NUM_RESULTS, json, sizeof json);
    fprintf(stderr, "embed: input %d: %s\n", k,
            st ? eddy_rt_status_message(st) : json);
    eddy_rt_status_destroy(st);
    return 1;
  }
  return 0;
}

static int run_rss(int64_t calls, int64_t samples) {
  eddy_rt_ctx_t *rt = ctx_create();
  int64_t every = calls / (samples > 0 ? samples : 1);
  if (every < 1)
    every = 1;
  int64_t warm = calls / 10, rss_warm = 0, rss_max = 0;
  int bad = 0;
  for (int64_t i = 0; i < calls && !bad; i++) {
    bad = call_and_check(rt, (int)(i % NUM_INPUTS));
    int64_t r = (i + 1) % every == 0 || i + 1 == warm ? rss_kib() : 0;
    if ((i + 1) % every == 0)
      printf("rss %" PRId64 " %" PRId64 "\n", i + 1, r);
    if (i + 1 == warm)
      rss_warm = r;
    if (i + 1 > warm && r > rss_max)
      rss_max = r;
  }
  int64_t in_use = eddy_rt_ctx_bytes_in_use(rt);
  printf("calls %" PRId64 ", rss after %" PRId64 " calls %" PRId64
         " KiB, highest after %" PRId64 " KiB, context bytes in use %" PRId64
         ", peak %" PRId64 "\n",
         calls, warm, rss_warm, rss_max, in_use, eddy_rt_ctx_peak_bytes(rt));
  eddy_rt_ctx_destroy(rt);
  if (bad)
    return 1;
  if (in_use != 0) {
    fprintf(stderr, "embed: the context holds %" PRId64 " bytes\n", in_use);
    return 1;
  }
  if (rss_warm > 0 && rss_max > rss_warm + 1024) {
    fprintf(stderr, "embed: the resident set grew from %" PRId64
                    " KiB to %" PRId64 " KiB\n",
            rss_warm, rss_max);
    return 1;
  }
  return 0;
}

typedef struct job {
  pthread_t th;
  eddy_rt_ctx_t *shared; ///< NULL: the thread makes its own context
  int index;
  int64_t calls;
  int failures;
} job_t;

static void *thread_main(void *arg) {
  job_t *job = arg;
  eddy_rt_ctx_t *rt = job->shared ? job->shared : ctx_create();
  for (int64_t i = 0; i < job->calls; i++)
    job->failures += call_and_check(rt, (int)((i + job->index) % NUM_INPUTS));
  if (!job->shared) {
    if (eddy_rt_ctx_bytes_in_use(rt) != 0)
      job->failures++;
    eddy_rt_ctx_destroy(rt);
  }
  return NULL;
}

static int run_threads(int n, int64_t calls, bool shared) {
  job_t jobs[64];
  if (n < 1 || n > 64)
    return fprintf(stderr, "embed: 1 to 64 threads\n"), 2;
  eddy_rt_ctx_t *rt = shared ? ctx_create() : NULL;
  for (int i = 0; i < n; i++) {
    jobs[i] = (job_t){.shared = rt, .index = i, .calls = calls};
    if (pthread_create(&jobs[i].th, NULL, thread_main, &jobs[i]) != 0)
      return fprintf(stderr, "embed: cannot start a thread\n"), 1;
  }
  int failures = 0;
  for (int i = 0; i < n; i++) {
    pthread_join(jobs[i].th, NULL);
    failures += jobs[i].failures;
  }
  if (rt) {
    failures += eddy_rt_ctx_bytes_in_use(rt) != 0;
    eddy_rt_ctx_destroy(rt);
  }
  printf("threads %d (%s), calls %" PRId64 " each: %d failures\n", n,
         shared ? "one context" : "a context each", calls, failures);
  return failures != 0;
}

int main(int argc, char **argv) {
  if (argc < 3 || (strcmp(argv[1], "rss") && strcmp(argv[1], "threads")) ||
      (!strcmp(argv[1], "threads") && argc < 4)) {
    fprintf(stderr, "usage: eddy_embed rss CALLS [SAMPLES] | "
                    "threads THREADS CALLS [shared]\n");
    return 2;
  }
  // The references: one serial call per input, on a context of their own.
  eddy_rt_ctx_t *ref_rt = ctx_create();
  for (int k = 0; k < NUM_INPUTS; k++) {
    input_make(&g_in[k], k);
    char err[256];
    if (rnn_grad_run(ref_rt, g_in[k].args, g_ref[k], err, sizeof err)) {
      fprintf(stderr, "embed: input %d: %s\n", k, err);
      return 1;
    }
  }
  int rc = !strcmp(argv[1], "rss")
               ? run_rss(strtoll(argv[2], NULL, 10),
                         argc > 3 ? strtoll(argv[3], NULL, 10) : 20)
               : run_threads(atoi(argv[2]), strtoll(argv[3], NULL, 10),
                             argc > 4 && !strcmp(argv[4], "shared"));
  for (int k = 0; k < NUM_INPUTS; k++)
    for (int r = 0; r < rnn_grad_NUM_RESULTS; r++)
      eddy_rt_tensor_release(&g_ref[k][r]);
  eddy_rt_ctx_destroy(ref_rt);
  return rc;
}

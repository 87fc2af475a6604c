/// Partitions of one program on threads of one process
/// (eddy_interp_run_local): each rank an interpreter with its own
/// rendezvous; a send encodes the value and puts the decoded copy into the
/// receiver's rendezvous, as a transport between processes would.
#define _POSIX_C_SOURCE 200809L
#include "runtime/interp/interp.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct local_run local_run_t;

typedef struct local_rank {
  local_run_t *run;
  int32_t rank;
  const eddy_op_t *func;
  eddy_interp_rendezvous_t *rv;
  eddy_status_t st;
  eddy_eval_value_t *results;
  size_t num_results;
  eddy_interp_traffic_t traffic;
  pthread_mutex_t mu; ///< traffic
} local_rank_t;

struct local_run {
  eddy_rt_ctx_t *rt;
  eddy_interp_opts_t opts;
  const eddy_eval_value_t *args;
  size_t num_args;
  local_rank_t *ranks;
  int32_t n;
  pthread_mutex_t mu;
  int32_t finished;
  bool *done;
};

static eddy_status_t local_send(void *user, int32_t to, const char *key,
                                const eddy_eval_value_t *v, bool dead) {
  local_rank_t *self = user;
  local_run_t *run = self->run;
  if (to < 0 || to >= run->n)
    return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                              "df.send to rank %d, but the run has %d", to,
                              run->n);
  eddy_buf_t b;
  eddy_buf_init(&b);
  eddy_status_t st = eddy_interp_value_encode(v, dead, &b);
  eddy_eval_value_t copy;
  bool cdead = false;
  if (!st)
    st = eddy_interp_value_decode(run->rt, b.data, b.len, &copy, &cdead);
  if (!st) {
    pthread_mutex_lock(&self->mu);
    self->traffic.messages++;
    self->traffic.bytes += (int64_t)b.len;
    pthread_mutex_unlock(&self->mu);
    eddy_interp_rendezvous_put(run->ranks[to].rv, key, &copy, cdead);
  }
  eddy_buf_destroy(&b);
  return st;
}

static void *rank_main(void *arg) {
  local_rank_t *r = arg;
  local_run_t *run = r->run;
  eddy_interp_opts_t o = run->opts;
  o.send = local_send;
  o.send_user = r;
  o.rendezvous = r->rv;
  size_t nres = eddy_ir_func_type(r->func)->num_outputs;
  r->results = calloc(nres + 1, sizeof(*r->results));
  r->num_results = nres;
  if (!r->results)
    r->st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  else
    r->st = eddy_interp_func(run->rt, r->func, &o, run->args, run->num_args,
                             r->results, nres, NULL);
  // Stop the others first (as the MPI transport sends ERROR before DONE):
  // a rank still waiting is then cancelled by this failure rather than
  // reporting a deadlock on the rank that failed.
  if (r->st) {
    for (int32_t k = 0; k < run->n; k++)
      if (k != r->rank)
        eddy_interp_rendezvous_fail(
            run->ranks[k].rv,
            eddy_status_create(EDDY_ERR_CANCELLED, "rank %d failed", r->rank));
  }
  // A rank whose peers have all finished will receive nothing more.
  pthread_mutex_lock(&run->mu);
  run->done[r->rank] = true;
  if (++run->finished == run->n - 1)
    for (int32_t k = 0; k < run->n; k++)
      if (!run->done[k])
        eddy_interp_rendezvous_close(run->ranks[k].rv);
  pthread_mutex_unlock(&run->mu);
  return NULL;
}

eddy_status_t eddy_interp_run_local(eddy_rt_ctx_t *rt,
                                    const eddy_op_t *const *funcs, int32_t n,
                                    const eddy_interp_opts_t *opts,
                                    const eddy_eval_value_t *args,
                                    size_t num_args,
                                    eddy_eval_value_t *out_results,
                                    size_t num_results,
                                    eddy_interp_traffic_t *out_traffic) {
  memset(out_results, 0, num_results * sizeof(*out_results));
  if (n < 1)
    return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT, "no ranks");
  if (eddy_ir_func_type(funcs[0])->num_outputs != num_results)
    return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                              "rank 0 returns %u values, room was given for "
                              "%zu",
                              eddy_ir_func_type(funcs[0])->num_outputs,
                              num_results);
  local_run_t run = {.rt = rt,
                     .opts = opts ? *opts : eddy_interp_opts_default(),
                     .args = args,
                     .num_args = num_args,
                     .ranks = calloc((size_t)n, sizeof(local_rank_t)),
                     .n = n};
  pthread_mutex_init(&run.mu, NULL);
  run.done = calloc((size_t)n, sizeof(bool));
  pthread_t *th = calloc((size_t)n, sizeof(*th));
  bool *started = calloc((size_t)n, sizeof(*started));
  eddy_status_t st = NULL;
  if (!run.ranks || !th || !started || !run.done)
    st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  for (int32_t k = 0; !st && k < n; k++) {
    local_rank_t *r = &run.ranks[k];
    r->run = &run;
    r->rank = k;
    r->func = funcs[k];
    pthread_mutex_init(&r->mu, NULL);
    if (!(r->rv = eddy_interp_rendezvous_create()))
      st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  }
  for (int32_t k = 0; !st && k < n; k++)
    started[k] = pthread_create(&th[k], NULL, rank_main, &run.ranks[k]) == 0;
  for (int32_t k = 0; !st && k < n; k++)
    if (started[k])
      pthread_join(th[k], NULL);
    else
      st = eddy_status_create(EDDY_ERR_RESOURCE, "cannot start rank %d", k);
  // The first real error (the others only say a rank failed).
  for (int32_t pass = 0; pass < 2 && !st && run.ranks; pass++)
    for (int32_t k = 0; k < n && !st; k++) {
      eddy_status_t e = run.ranks[k].st;
      if (e && (pass == 1 || eddy_status_code(e) != EDDY_ERR_CANCELLED))
        st = eddy_status_create(eddy_status_code(e), "rank %d: %s", k,
                                eddy_status_message(e));
    }
  for (int32_t k = 0; !st && k < n; k++) {
    eddy_buf_t b;
    eddy_buf_init(&b);
    if (eddy_interp_rendezvous_leftover(run.ranks[k].rv, &b))
      st = eddy_status_create(EDDY_ERR_INTERNAL,
                              "rank %d: a message was never received (key "
                              "%s)",
                              k, b.data);
    eddy_buf_destroy(&b);
  }
  if (!st)
    for (size_t i = 0; i < num_results; i++)
      eddy_eval_value_share(&run.ranks[0].results[i], &out_results[i]);
  for (int32_t k = 0; run.ranks && k < n; k++) {
    local_rank_t *r = &run.ranks[k];
    if (out_traffic)
      out_traffic[k] = r->traffic;
    for (size_t i = 0; r->results && i < r->num_results; i++)
      eddy_eval_value_release(&r->results[i]);
    free(r->results);
    eddy_status_destroy(r->st);
    eddy_interp_rendezvous_destroy(r->rv);
    if (r->run)
      pthread_mutex_destroy(&r->mu);
  }
  free(run.ranks);
  free(run.done);
  pthread_mutex_destroy(&run.mu);
  free(th);
  free(started);
  return st;
}

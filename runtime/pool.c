/// A small pthread pool with one operation, parallel-for. Tasks are claimed
/// one at a time under the pool mutex: tasks are coarse (thousands of
/// elements each), so the lock is cheap, and it keeps the protocol simple
/// enough to be obviously right.
#include "runtime/rt_internal.h"

#include <pthread.h>
#include <stdlib.h>

struct eddy_rt_pool {
  int32_t num_threads; // workers + the caller
  pthread_t *workers;
  int32_t num_workers;
  pthread_mutex_t mu;
  pthread_cond_t work_cv; // a job was posted, or shutdown
  pthread_cond_t done_cv; // the last task of a job finished
  pthread_mutex_t submit_mu; // one job at a time
  bool shutdown;
  // The current job; n == 0 when none.
  eddy_rt_task_fn fn;
  void *arg;
  int64_t n;
  int64_t next; // next task to claim
  int64_t done; // tasks finished
};

// Set on worker threads so that a parallel_for from inside a task runs
// serially instead of waiting on itself.
static _Thread_local const eddy_rt_pool_t *rt_pool_current_worker;

// Claims and runs tasks of the current job; called and returns with mu held.
static void rt_pool_drain(eddy_rt_pool_t *p) {
  while (p->n > 0 && p->next < p->n) {
    int64_t t = p->next++;
    eddy_rt_task_fn fn = p->fn;
    void *arg = p->arg;
    pthread_mutex_unlock(&p->mu);
    fn(arg, t);
    pthread_mutex_lock(&p->mu);
    if (++p->done == p->n)
      pthread_cond_broadcast(&p->done_cv);
  }
}

static void *rt_pool_worker(void *arg) {
  eddy_rt_pool_t *p = arg;
  rt_pool_current_worker = p;
  pthread_mutex_lock(&p->mu);
  for (;;) {
    while (!p->shutdown && !(p->n > 0 && p->next < p->n))
      pthread_cond_wait(&p->work_cv, &p->mu);
    if (p->shutdown)
      break;
    rt_pool_drain(p);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

eddy_rt_status_t eddy_rt_pool_create(int32_t num_threads,
                                     eddy_rt_pool_t **out_pool) {
  *out_pool = NULL;
  eddy_rt_pool_t *p = calloc(1, sizeof(*p));
  if (!p)
    return rt_err(EDDY_RT_ERR_RESOURCE, "eddy_rt_pool_create", "out of memory");
  p->num_threads = num_threads < 1 ? 1 : num_threads;
  pthread_mutex_init(&p->mu, NULL);
  pthread_mutex_init(&p->submit_mu, NULL);
  pthread_cond_init(&p->work_cv, NULL);
  pthread_cond_init(&p->done_cv, NULL);
  if (p->num_threads > 1) {
    p->workers = calloc((size_t)(p->num_threads - 1), sizeof(pthread_t));
    if (!p->workers) {
      eddy_rt_pool_destroy(p);
      return rt_err(EDDY_RT_ERR_RESOURCE, "eddy_rt_pool_create",
                    "out of memory");
    }
    for (int32_t i = 0; i < p->num_threads - 1; i++) {
      if (pthread_create(&p->workers[i], NULL, rt_pool_worker, p) != 0) {
        eddy_rt_pool_destroy(p);
        return rt_err(EDDY_RT_ERR_RESOURCE, "eddy_rt_pool_create",
                      "cannot start worker thread %d of %d", (int)i + 1,
                      (int)(num_threads - 1));
      }
      p->num_workers++;
    }
  }
  *out_pool = p;
  return NULL;
}

void eddy_rt_pool_destroy(eddy_rt_pool_t *pool) {
  if (!pool)
    return;
  pthread_mutex_lock(&pool->mu);
  pool->shutdown = true;
  pthread_cond_broadcast(&pool->work_cv);
  pthread_mutex_unlock(&pool->mu);
  for (int32_t i = 0; i < pool->num_workers; i++)
    pthread_join(pool->workers[i], NULL);
  free(pool->workers);
  pthread_cond_destroy(&pool->work_cv);
  pthread_cond_destroy(&pool->done_cv);
  pthread_mutex_destroy(&pool->mu);
  pthread_mutex_destroy(&pool->submit_mu);
  free(pool);
}

int32_t eddy_rt_pool_num_threads(const eddy_rt_pool_t *pool) {
  return pool ? pool->num_threads : 1;
}

void eddy_rt_pool_parallel_for(eddy_rt_pool_t *pool, int64_t n,
                               eddy_rt_task_fn fn, void *arg) {
  if (n <= 0)
    return;
  bool serial = !pool || pool->num_workers == 0 || n == 1 ||
                rt_pool_current_worker == pool ||
                pthread_mutex_trylock(&pool->submit_mu) != 0;
  if (serial) {
    for (int64_t t = 0; t < n; t++)
      fn(arg, t);
    return;
  }
  pthread_mutex_lock(&pool->mu);
  pool->fn = fn;
  pool->arg = arg;
  pool->n = n;
  pool->next = 0;
  pool->done = 0;
  pthread_cond_broadcast(&pool->work_cv);
  rt_pool_drain(pool);
  while (pool->done < pool->n)
    pthread_cond_wait(&pool->done_cv, &pool->mu);
  // No task can be claimed once n is 0, so nothing touches fn/arg after this.
  pool->n = 0;
  pool->fn = NULL;
  pool->arg = NULL;
  pthread_mutex_unlock(&pool->mu);
  pthread_mutex_unlock(&pool->submit_mu);
}

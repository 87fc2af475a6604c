/// A small pthread pool with one operation, parallel-for. Tasks are claimed
/// one at a time under the pool mutex: tasks are coarse (thousands of
/// elements each), so the lock is cheap, and it keeps the protocol simple
/// enough to be obviously right.
///
/// Compiled code calls it for every per-step matrix product of a loop (tens
/// of microseconds each), where waking a thread blocked in the kernel costs
/// about as much as the product. So an idle worker first spins for
/// RT_POOL_SPIN_NS, watching the job counter, before it blocks; the caller
/// waits for the last task the same way; and a job is signalled only when
/// some worker is blocked.
///
/// The pool also measures how long a spinning worker takes to claim a task
/// after the job is posted (rt_pool_handoff_ns): a cache line's round
/// trip between the two cores, which on a virtual machine depends on where
/// the host runs them and can change while a program runs.
// clock_gettime.
#define _POSIX_C_SOURCE 200809L
#include "runtime/rt_internal.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

/// How long an idle worker, or a caller waiting for the workers' tasks,
/// spins before it blocks: longer than the host code between the products
/// of one loop step, short enough to be invisible to an idle process.
#define RT_POOL_SPIN_NS 200000

struct eddy_rt_pool {
  int32_t num_threads; // workers + the caller
  pthread_t *workers;
  int32_t num_workers;
  pthread_mutex_t mu;
  pthread_cond_t work_cv; // a job was posted, or shutdown
  pthread_cond_t done_cv; // the last task of a job finished
  pthread_mutex_t submit_mu; // one job at a time
  bool shutdown;
  int32_t sleepers; // workers blocked on work_cv (under mu)
  bool waiting;     // the caller is blocked on done_cv (under mu)
  // Written under mu; read without it by spinning threads.
  atomic_uint_fast64_t jobs; // jobs posted so far
  atomic_bool stop;          // shutdown, for spinning workers
  atomic_int_fast64_t done;  // tasks of the current job finished
  // The current job; n == 0 when none.
  eddy_rt_task_fn fn;
  void *arg;
  uint64_t fp; // the caller's floating-point mode, for its tasks
  int64_t n;
  // The tasks not yet claimed, [lo, hi): the caller claims them from the
  // front, the workers from the back (rt_pool_drain).
  int64_t lo, hi;
  // Hand-off time: when the current job was posted, whether a spinning
  // worker has claimed one of its tasks yet (under mu), the running mean
  // of the time from post to that claim (ns) and when it was last measured.
  int64_t posted_ns;
  bool handoff_seen;
  atomic_int_fast64_t handoff_ns, handoff_at, handoff_count;
};

/// The weight of a new hand-off time in the running mean (1/8), and how
/// long a mean holds (ns) when nothing measures it again: a caller that
/// stops splitting work because hand-offs are slow then splits again
/// after this long, which measures them anew.
#define RT_POOL_HANDOFF_WEIGHT 8
#define RT_POOL_HANDOFF_HOLD_NS 50000000
/// Hand-offs measured since the last was forgotten before the mean counts
/// (one slow hand-off is not a far core).
#define RT_POOL_HANDOFF_MIN_COUNT 8
/// A hand-off counts as at most this long (ns): a worker preempted in its
/// spin now and then is not a far core.
#define RT_POOL_HANDOFF_CAP_NS 2000

// Set on worker threads so that a parallel_for from inside a task runs
// serially instead of waiting on itself.
static _Thread_local const eddy_rt_pool_t *rt_pool_current_worker;

static int64_t rt_pool_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/// One round of waiting in a spin: a pause instruction for the first rounds
/// (a few microseconds), then a yield of the core, so that a thread with
/// work (OpenBLAS's own workers, which a large product wakes) is not kept
/// from it by one that only waits.
static inline void rt_pool_relax(int round) {
  if (round < 256) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    return;
  }
  sched_yield();
}

// Claims and runs tasks of the current job; called and returns with mu held.
// The caller claims from the front, the workers from the back: with two
// threads, each then runs about the same half of a job's tasks at every
// call (the parts of a product split by columns are in column order), so
// the columns of a loop's accumulated product, or of its weights, stay in
// one core's cache from one step to the next, while a thread that falls
// behind still has its share taken by the other.
static void rt_pool_drain(eddy_rt_pool_t *p, bool from_back) {
  while (p->n > 0 && p->lo < p->hi) {
    int64_t t = from_back ? --p->hi : p->lo++;
    eddy_rt_task_fn fn = p->fn;
    void *arg = p->arg;
    // A task runs in its caller's floating-point mode (subnormals flushed
    // or not), whichever thread takes it: results do not depend on which.
    uint64_t mine = rt_fp_mode();
    bool other = ((p->fp ^ mine) & RT_FP_FLUSH) != 0;
    uint64_t theirs = (mine & ~RT_FP_FLUSH) | (p->fp & RT_FP_FLUSH);
    pthread_mutex_unlock(&p->mu);
    if (other)
      rt_fp_set_mode(theirs);
    fn(arg, t);
    if (other)
      rt_fp_set_mode((rt_fp_mode() & ~RT_FP_FLUSH) | (mine & RT_FP_FLUSH));
    pthread_mutex_lock(&p->mu);
    if (atomic_fetch_add(&p->done, 1) + 1 == p->n && p->waiting)
      pthread_cond_signal(&p->done_cv);
  }
}

static void *rt_pool_worker(void *arg) {
  eddy_rt_pool_t *p = arg;
  rt_pool_current_worker = p;
  pthread_mutex_lock(&p->mu);
  while (!p->shutdown) {
    if (p->n > 0 && p->lo < p->hi) {
      rt_pool_drain(p, true);
      continue;
    }
    // Idle: spin until a job is posted or the time is up, then block.
    uint_fast64_t seen = atomic_load(&p->jobs);
    pthread_mutex_unlock(&p->mu);
    int64_t until = rt_pool_now_ns() + RT_POOL_SPIN_NS;
    for (int i = 1; atomic_load_explicit(&p->jobs, memory_order_relaxed) ==
                        seen &&
                    !atomic_load_explicit(&p->stop, memory_order_relaxed);
         i++) {
      rt_pool_relax(i);
      if ((i < 256 ? i % 64 == 0 : true) && rt_pool_now_ns() > until)
        break;
    }
    pthread_mutex_lock(&p->mu);
    if (p->shutdown)
      continue;
    if (atomic_load(&p->jobs) != seen) {
      // Seen while spinning: the first such claim of a job times the
      // hand-off.
      if (p->n > 0 && p->lo < p->hi && !p->handoff_seen) {
        p->handoff_seen = true;
        int64_t now = rt_pool_now_ns(), d = now - p->posted_ns;
        int64_t m = atomic_load_explicit(&p->handoff_ns, memory_order_relaxed);
        int64_t at =
            atomic_load_explicit(&p->handoff_at, memory_order_relaxed);
        int64_t count =
            atomic_load_explicit(&p->handoff_count, memory_order_relaxed);
        if (now - at > RT_POOL_HANDOFF_HOLD_NS)
          m = count = 0; // too old to average with
        if (d > RT_POOL_HANDOFF_CAP_NS)
          d = RT_POOL_HANDOFF_CAP_NS;
        if (d > 0) {
          atomic_store_explicit(&p->handoff_ns,
                                m > 0 ? m + (d - m) / RT_POOL_HANDOFF_WEIGHT
                                      : d,
                                memory_order_relaxed);
          atomic_store_explicit(&p->handoff_count, count + 1,
                                memory_order_relaxed);
          atomic_store_explicit(&p->handoff_at, now, memory_order_relaxed);
        }
      }
      continue;
    }
    p->sleepers++;
    pthread_cond_wait(&p->work_cv, &p->mu);
    p->sleepers--;
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
  atomic_init(&p->jobs, 0);
  atomic_init(&p->stop, false);
  atomic_init(&p->done, 0);
  atomic_init(&p->handoff_ns, 0);
  atomic_init(&p->handoff_at, 0);
  atomic_init(&p->handoff_count, 0);
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
  atomic_store(&pool->stop, true);
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

int64_t rt_pool_handoff_ns(const eddy_rt_pool_t *pool) {
  if (!pool)
    return 0;
  eddy_rt_pool_t *p = (eddy_rt_pool_t *)pool;
  int64_t at = atomic_load_explicit(&p->handoff_at, memory_order_relaxed);
  if (rt_pool_now_ns() - at > RT_POOL_HANDOFF_HOLD_NS ||
      atomic_load_explicit(&p->handoff_count, memory_order_relaxed) <
          RT_POOL_HANDOFF_MIN_COUNT)
    return 0;
  return atomic_load_explicit(&p->handoff_ns, memory_order_relaxed);
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
  pool->fp = rt_fp_mode();
  pool->n = n;
  pool->lo = 0;
  pool->hi = n;
  pool->posted_ns = rt_pool_now_ns();
  pool->handoff_seen = false;
  atomic_store(&pool->done, 0);
  atomic_fetch_add(&pool->jobs, 1);
  if (pool->sleepers > 0)
    pthread_cond_broadcast(&pool->work_cv);
  rt_pool_drain(pool, false);
  if (atomic_load(&pool->done) < n) {
    // The workers' last tasks: spin, then block.
    pthread_mutex_unlock(&pool->mu);
    int64_t until = rt_pool_now_ns() + RT_POOL_SPIN_NS;
    for (int i = 1;
         atomic_load_explicit(&pool->done, memory_order_acquire) < n; i++) {
      rt_pool_relax(i);
      if ((i < 256 ? i % 64 == 0 : true) && rt_pool_now_ns() > until)
        break;
    }
    pthread_mutex_lock(&pool->mu);
    pool->waiting = true;
    while (atomic_load(&pool->done) < n)
      pthread_cond_wait(&pool->done_cv, &pool->mu);
    pool->waiting = false;
  }
  // No task can be claimed once n is 0, so nothing touches fn/arg after this.
  pool->n = 0;
  pool->fn = NULL;
  pool->arg = NULL;
  pthread_mutex_unlock(&pool->mu);
  pthread_mutex_unlock(&pool->submit_mu);
}

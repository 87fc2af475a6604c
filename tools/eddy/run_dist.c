/// `eddy run --mode=distributed`. Every rank reads the program and its
/// inputs, places and partitions it the same way (the pass is
/// deterministic), and runs its own partition in the dataflow interpreter.
///
/// Between processes the transport is MPI (Open MPI): one thread per rank
/// receives every message (MPI_Iprobe, with a short sleep when idle, so
/// that oversubscribed ranks leave the cores to the work) and puts it into
/// the interpreter's rendezvous; sends are MPI_Isend from the workers. All
/// MPI calls hold one mutex, so MPI_THREAD_SERIALIZED suffices. A rank that
/// finishes tells every other (DONE, after an ERROR with its message when it
/// failed); a rank whose peers are all done receives nothing more, and a
/// recv still waiting then is a deadlock naming the recv.
#define _POSIX_C_SOURCE 200809L
#include "tools/eddy/run_dist.h"

#include "dialects/tf/tf.h"
#include "lower/lower.h"
#include "lower/partition.h"
#include "runtime/interp/interp.h"
#include "tools/eddy/cli.h"
#include "tools/eddy/run_compiled.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef EDDY_HAVE_MPI
#include <mpi.h>
#endif

typedef struct dev_list {
  eddy_placement_rule_t *v;
  size_t n, cap;
  bool oom;
} dev_list_t;

static void add_device(void *user, const char *node, const char *device) {
  dev_list_t *d = user;
  int32_t r = eddy_placement_device_rank(device);
  if (r < 0)
    return;
  if (d->n == d->cap) {
    size_t nc = d->cap ? d->cap * 2 : 16;
    eddy_placement_rule_t *nv = realloc(d->v, nc * sizeof(*nv));
    if (!nv) {
      d->oom = true;
      return;
    }
    d->v = nv;
    d->cap = nc;
  }
  size_t len = strlen(node);
  char *copy = malloc(len + 1);
  if (!copy) {
    d->oom = true;
    return;
  }
  memcpy(copy, node, len + 1);
  d->v[d->n++] = (eddy_placement_rule_t){copy, r};
}

eddy_status_t eddy_cli_dist_partition(eddy_module_t *m, eddy_op_t *func,
                                      const char *graphdef,
                                      const char *placement, int32_t n,
                                      eddy_op_t **parts,
                                      eddy_partition_info_t *info) {
  EDDY_RETURN_IF_ERROR(eddy_lower_to_dataflow_func(func));
  EDDY_RETURN_IF_ERROR(eddy_ir_verify_op(func));
  eddy_placement_t p;
  eddy_placement_init(&p, n);
  eddy_status_t st = NULL;
  const char *pl = placement;
  if (pl && strncmp(pl, "random:", 7) == 0) {
    char *end = NULL;
    unsigned long long seed = strtoull(pl + 7, &end, 10);
    if (!pl[7] || *end)
      st = eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                              "--placement=random:SEED needs a number, got "
                              "'%s'",
                              pl + 7);
    else
      eddy_placement_random(func, seed, &p);
  } else {
    eddy_placement_rule_t *rules = NULL;
    size_t nrules = 0;
    dev_list_t dev = {0};
    if (pl)
      st = eddy_placement_rules_read(pl, &rules, &nrules);
    if (!st && graphdef)
      st = eddy_tf_graphdef_devices(graphdef, add_device, &dev);
    if (!st && dev.oom)
      st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
    if (!st)
      st = eddy_placement_compute(func, rules, nrules, dev.v, dev.n, n, &p);
    eddy_placement_rules_free(rules, nrules);
    eddy_placement_rules_free(dev.v, dev.n);
  }
  if (!st)
    st = eddy_partition_func(m, func, &p, parts, info);
  eddy_placement_destroy(&p);
  if (!st)
    st = eddy_ir_verify_module(m);
  return st;
}

static eddy_interp_opts_t interp_opts(const eddy_eval_opts_t *eval_opts,
                                      const eddy_cli_interp_opts_t *o) {
  eddy_interp_opts_t io = eddy_interp_opts_default();
  io.num_workers = o->workers;
  io.timeout_ms = o->timeout_ms;
  if (eval_opts->max_iterations > 0)
    io.max_iterations = eval_opts->max_iterations;
  return io;
}

static void print_traffic(int32_t rank, const eddy_interp_traffic_t *t,
                          const eddy_partition_info_t *info, double ms) {
  fprintf(stderr,
          "dist stats: rank %d: messages %" PRId64 ", bytes %" PRId64
          ", time %.3f ms",
          rank, t->messages, t->bytes, ms);
  if (info)
    fprintf(stderr,
            " (partition: sends %" PRId64 ", recvs %" PRId64
            ", machines %" PRId64 ", predicate sends %" PRId64 ")",
            info->sends, info->recvs, info->machines, info->predicate_sends);
  fputc('\n', stderr);
}

#ifdef EDDY_HAVE_MPI

enum { TAG_DATA = 1, TAG_ERROR = 2, TAG_DONE = 3 };

typedef struct mpi_link {
  pthread_mutex_t mu; ///< every MPI call
  int32_t rank, size;
  eddy_interp_rendezvous_t *rv;
  eddy_rt_ctx_t *rt;
  eddy_status_t remote_error; ///< the first ERROR received
  int32_t done;               ///< DONE received
  eddy_interp_traffic_t traffic;
} mpi_link_t;

static void nap(long *ns) {
  struct timespec ts = {0, *ns};
  nanosleep(&ts, NULL);
  *ns = *ns < 100000 ? *ns * 2 : 100000;
}

/// Sends len bytes without holding the lock while they travel.
static void mpi_send_bytes(mpi_link_t *L, int32_t to, int tag,
                           const void *data, size_t len) {
  MPI_Request req;
  pthread_mutex_lock(&L->mu);
  MPI_Isend(data, (int)len, MPI_BYTE, to, tag, MPI_COMM_WORLD, &req);
  pthread_mutex_unlock(&L->mu);
  long ns = 2000;
  for (;;) {
    int flag = 0;
    pthread_mutex_lock(&L->mu);
    MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
    pthread_mutex_unlock(&L->mu);
    if (flag)
      return;
    nap(&ns);
  }
}

static eddy_status_t mpi_send(void *user, int32_t to, const char *key,
                              const eddy_eval_value_t *v, bool dead) {
  mpi_link_t *L = user;
  if (to < 0 || to >= L->size)
    return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                              "df.send to rank %d, but the run has %d", to,
                              L->size);
  eddy_buf_t b;
  eddy_buf_init(&b);
  uint32_t klen = (uint32_t)strlen(key);
  eddy_buf_append(&b, (const char *)&klen, sizeof klen);
  eddy_buf_append(&b, key, klen);
  eddy_status_t st = eddy_interp_value_encode(v, dead, &b);
  if (!st && b.len > (size_t)INT32_MAX)
    st = eddy_status_create(EDDY_ERR_UNSUPPORTED,
                            "a message of %zu bytes is larger than MPI's "
                            "count allows",
                            b.len);
  if (!st) {
    mpi_send_bytes(L, to, TAG_DATA, b.data, b.len);
    pthread_mutex_lock(&L->mu);
    L->traffic.messages++;
    L->traffic.bytes += (int64_t)b.len;
    pthread_mutex_unlock(&L->mu);
  }
  eddy_buf_destroy(&b);
  return st;
}

static void mpi_dispatch(mpi_link_t *L, int src, int tag, char *data,
                         size_t len) {
  if (tag == TAG_DONE) {
    if (++L->done == L->size - 1)
      eddy_interp_rendezvous_close(L->rv);
    return;
  }
  if (tag == TAG_ERROR) {
    if (!L->remote_error)
      L->remote_error = eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                                           "rank %d: %.*s", src, (int)len,
                                           data);
    eddy_interp_rendezvous_fail(
        L->rv, eddy_status_create(EDDY_ERR_CANCELLED, "rank %d failed", src));
    return;
  }
  uint32_t klen = 0;
  eddy_status_t st = NULL;
  if (len < sizeof klen)
    st = eddy_status_create(EDDY_ERR_INVALID_ARGUMENT, "short message");
  else
    memcpy(&klen, data, sizeof klen);
  if (!st && len - sizeof klen < klen)
    st = eddy_status_create(EDDY_ERR_INVALID_ARGUMENT, "short message key");
  eddy_eval_value_t v;
  bool dead = false;
  if (!st) {
    char *key = data + sizeof klen;
    char *payload = key + klen;
    size_t plen = len - sizeof klen - klen;
    st = eddy_interp_value_decode(L->rt, payload, plen, &v, &dead);
    if (!st) {
      char saved = key[klen];
      key[klen] = 0; // payload already decoded
      eddy_interp_rendezvous_put(L->rv, key, &v, dead);
      key[klen] = saved;
    }
  }
  if (st)
    eddy_interp_rendezvous_fail(L->rv, st);
}

static void *mpi_receiver(void *arg) {
  mpi_link_t *L = arg;
  long ns = 2000;
  while (L->done < L->size - 1) {
    int flag = 0, count = 0;
    MPI_Status status;
    pthread_mutex_lock(&L->mu);
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
    char *data = NULL;
    if (flag) {
      MPI_Get_count(&status, MPI_BYTE, &count);
      data = malloc((size_t)count + 1);
      MPI_Recv(data ? data : (char[1]){0}, data ? count : 0, MPI_BYTE,
               status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
    }
    pthread_mutex_unlock(&L->mu);
    if (!flag) {
      nap(&ns);
      continue;
    }
    ns = 2000;
    if (!data) {
      eddy_interp_rendezvous_fail(
          L->rv, eddy_status_create(EDDY_ERR_RESOURCE, "out of memory"));
      continue;
    }
    mpi_dispatch(L, status.MPI_SOURCE, status.MPI_TAG, data, (size_t)count);
    free(data);
  }
  return NULL;
}

/// True when started by mpirun (Open MPI, or a PMI launcher).
static bool under_mpirun(void) {
  return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") ||
         getenv("PMIX_RANK");
}

static eddy_status_t run_mpi(eddy_rt_ctx_t *rt, eddy_module_t *m,
                             eddy_op_t *func, const char *graphdef,
                             const eddy_eval_opts_t *eval_opts,
                             const eddy_cli_interp_opts_t *o,
                             const eddy_eval_value_t *args, size_t nin,
                             eddy_eval_value_t *out_results, size_t nout,
                             bool *out_print) {
  int provided = 0;
  MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided);
  mpi_link_t L;
  memset(&L, 0, sizeof(L));
  pthread_mutex_init(&L.mu, NULL);
  MPI_Comm_rank(MPI_COMM_WORLD, &L.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &L.size);
  L.rt = rt;
  *out_print = L.rank == 0;
  eddy_status_t st = NULL;
  if (provided < MPI_THREAD_SERIALIZED)
    st = eddy_status_create(EDDY_ERR_UNSUPPORTED,
                            "the MPI library gives no thread support "
                            "(MPI_THREAD_SERIALIZED)");
  if (o->ranks > 0 && o->ranks != L.size && !st)
    st = eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                            "--ranks %d, but mpirun started %d", o->ranks,
                            L.size);
  eddy_op_t **parts = calloc((size_t)L.size, sizeof(*parts));
  eddy_partition_info_t info;
  if (!st && !parts)
    st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  if (!st)
    st = eddy_cli_dist_partition(m, func, graphdef, o->placement, L.size, parts, &info);
  L.rv = eddy_interp_rendezvous_create();
  pthread_t th;
  bool started = L.size > 1 && L.rv &&
                 pthread_create(&th, NULL, mpi_receiver, &L) == 0;
  eddy_interp_stats_t stats;
  double t0 = eddy_cli_now_ms(), ms = 0;
  if (!st) {
    eddy_interp_opts_t io = interp_opts(eval_opts, o);
    io.send = mpi_send;
    io.send_user = &L;
    io.rendezvous = L.rv;
    eddy_eval_value_t none[1];
    st = eddy_interp_func(rt, parts[L.rank], &io, args, nin,
                          L.rank == 0 ? out_results : none,
                          L.rank == 0 ? nout : 0, &stats);
    ms = eddy_cli_now_ms() - t0;
  }
  // Tell the others: the error first, then that this rank is done.
  if (st && eddy_status_code(st) != EDDY_ERR_CANCELLED) {
    const char *msg = eddy_status_message(st);
    for (int32_t k = 0; k < L.size; k++)
      if (k != L.rank)
        mpi_send_bytes(&L, k, TAG_ERROR, msg, strlen(msg));
  }
  for (int32_t k = 0; k < L.size; k++)
    if (k != L.rank)
      mpi_send_bytes(&L, k, TAG_DONE, "", 0);
  if (started)
    pthread_join(th, NULL);
  if (o->stats)
    print_traffic(L.rank, &L.traffic, st ? NULL : &info, ms);
  if (L.remote_error && (!st || eddy_status_code(st) == EDDY_ERR_CANCELLED)) {
    eddy_status_destroy(st);
    st = L.remote_error;
    L.remote_error = NULL;
  }
  if (!st && L.rv) {
    eddy_buf_t b;
    eddy_buf_init(&b);
    if (eddy_interp_rendezvous_leftover(L.rv, &b))
      st = eddy_status_create(EDDY_ERR_INTERNAL,
                              "rank %d: a message was never received (key "
                              "%s)",
                              L.rank, b.data);
    eddy_buf_destroy(&b);
  }
  eddy_status_destroy(L.remote_error);
  eddy_interp_rendezvous_destroy(L.rv);
  free(parts);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  pthread_mutex_destroy(&L.mu);
  return st;
}
#endif

eddy_status_t eddy_cli_run_dist(eddy_rt_ctx_t *rt, eddy_module_t *m,
                                eddy_op_t *func, const char *graphdef,
                                const eddy_eval_opts_t *eval_opts,
                                const eddy_cli_interp_opts_t *o,
                                const eddy_eval_value_t *args, size_t nin,
                                eddy_eval_value_t *out_results, size_t nout,
                                bool *out_print) {
  *out_print = true;
#ifdef EDDY_HAVE_MPI
  if (under_mpirun())
    return run_mpi(rt, m, func, graphdef, eval_opts, o, args, nin,
                   out_results, nout, out_print);
#else
  if (getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE"))
    return eddy_status_create(EDDY_ERR_UNSUPPORTED,
                              "this eddy was built without MPI (install "
                              "libopenmpi-dev and rebuild); --ranks N runs "
                              "the partitions on threads instead");
#endif
  int32_t n = o->ranks > 0 ? o->ranks : 1;
  eddy_op_t **parts = calloc((size_t)n, sizeof(*parts));
  eddy_interp_traffic_t *tr = calloc((size_t)n, sizeof(*tr));
  eddy_partition_info_t info;
  eddy_status_t st = parts && tr ? NULL
                                 : eddy_status_create(EDDY_ERR_RESOURCE,
                                                      "out of memory");
  if (!st)
    st = eddy_cli_dist_partition(m, func, graphdef, o->placement, n, parts, &info);
  double t0 = eddy_cli_now_ms();
  if (!st) {
    eddy_interp_opts_t io = interp_opts(eval_opts, o);
    st = eddy_interp_run_local(rt, (const eddy_op_t *const *)parts, n, &io,
                               args, nin, out_results, nout, tr);
  }
  if (!st && o->stats)
    for (int32_t k = 0; k < n; k++)
      print_traffic(k, &tr[k], k == 0 ? &info : NULL,
                    eddy_cli_now_ms() - t0);
  free(parts);
  free(tr);
  return st;
}

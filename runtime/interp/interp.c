/// The dataflow executor. Seed 004's rules, with TensorFlow's executor as the
/// model for the bookkeeping:
///
/// - A frame instance is one execution of a loop: created by the first
///   df.enter that reaches it (keyed by parent frame instance, parent
///   iteration and frame name), freed when all its iterations are done.
/// - An iteration holds one slot per value and one state per node. It is
///   created when a df.next_iteration of the previous one first fires (or
///   deferred while `parallel_iterations` are alive), and freed when it is
///   the oldest, nothing in it is ready or running, no child frame of it is
///   alive and every df.enter of the frame has delivered.
/// - A value arrives (slot set) and notifies its consumers in the same
///   iteration; a node with all its tagged inputs is ready. df.merge fires on
///   its first live input, or dead once all its inputs of that iteration
///   arrived dead. Dead values at df.next_iteration are dropped (that ends
///   a loop), dead values at df.exit are dropped too and, when the frame ends
///   with no live value through an exit, that exit delivers a dead value.
/// - Values of ops with no operands (constants) belong to no frame: computed
///   once before the run, read from every frame.
///
/// All bookkeeping (interp_frames.c) happens under one mutex; kernels run
/// outside it.
#define _POSIX_C_SOURCE 200809L
#include "runtime/interp/interp_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static eddy_status_t oom(void) {
  return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
}

/// ---- Running one node (outside the lock) ------------------------------------------

static slot_t *operand_slot(const interp_t *I, iter_t *it,
                            const interp_node_t *nd, uint32_t k) {
  uint32_t vi = nd->in[k];
  return I->g->value_free[vi] ? &I->free_vals[vi] : &it->slots[vi];
}

/// The operands that the node dequeued as item may move out of their
/// slots (nd->take): those it is the last reader of in its iteration, the
/// others having completed. Under I->mu.
static uint64_t item_takes(const interp_t *I, const item_t *item) {
  const interp_node_t *nd = &I->g->nodes[item->node];
  uint64_t take = 0;
  for (uint64_t m = nd->take; m; m &= m - 1) {
    uint32_t k = (uint32_t)__builtin_ctzll(m);
    if (item->it->slots[nd->in[k]].readers_left == 1)
      take |= (uint64_t)1 << k;
  }
  return take;
}

/// Operand k's value for the node to forward: moved out of its slot when
/// take says so, else shared. The slot stays set (only its value leaves),
/// so the bookkeeping sees the same arrivals.
static void operand_take(const interp_t *I, iter_t *it,
                         const interp_node_t *nd, uint64_t take, uint32_t k,
                         eddy_eval_value_t *out) {
  slot_t *s = operand_slot(I, it, nd, k);
  if (k < 64 && (take >> k & 1)) {
    *out = s->v;
    memset(&s->v, 0, sizeof(s->v));
  } else {
    eddy_eval_value_share(&s->v, out);
  }
}

static eddy_status_t node_error(const eddy_op_t *op, const char *msg) {
  eddy_buf_t b;
  eddy_buf_init(&b);
  interp_describe_op(op, &b);
  eddy_status_t st = eddy_status_create(EDDY_ERR_INVALID_ARGUMENT, "%s: %s",
                                        b.data, msg);
  eddy_buf_destroy(&b);
  return st;
}

/// Computes the outputs of one ready node: outs (zeroed) and dead flags.
static eddy_status_t exec_node(interp_t *I, eddy_eval_op_runner_t *es,
                               const item_t *item, const nstate_t *ns,
                               uint64_t take, eddy_eval_value_t *outs,
                               bool *dead) {
  const interp_node_t *nd = &I->g->nodes[item->node];
  if (ns->any_dead && nd->kind != IK_TRIGGER) { // dead in, dead out
    for (uint32_t r = 0; r < nd->num_out; r++)
      dead[r] = true;
    return NULL;
  }
  switch (nd->kind) {
  case IK_SWITCH: {
    const slot_t *p = operand_slot(I, item->it, nd, 1);
    if (p->v.kind != EDDY_EVAL_TENSOR || p->v.tensor.dtype != EDDY_RT_I1 ||
        eddy_rt_tensor_numel(&p->v.tensor) != 1)
      return node_error(nd->op, "predicate is not a single i1 value");
    bool pv = eddy_rt_tensor_get_i64(&p->v.tensor, 0) != 0;
    operand_take(I, item->it, nd, take, 0, &outs[pv ? 1 : 0]);
    dead[0] = pv;
    dead[1] = !pv;
    return NULL;
  }
  case IK_SWITCH_N: {
    // TensorFlow's _SwitchN: an index out of range takes the last output.
    const slot_t *p = operand_slot(I, item->it, nd, 1);
    if (p->v.kind != EDDY_EVAL_TENSOR || p->v.tensor.dtype != EDDY_RT_I32 ||
        eddy_rt_tensor_numel(&p->v.tensor) != 1)
      return node_error(nd->op, "index is not a single i32 value");
    int64_t k = eddy_rt_tensor_get_i64(&p->v.tensor, 0);
    if (k < 0 || k >= (int64_t)nd->num_out)
      k = (int64_t)nd->num_out - 1;
    operand_take(I, item->it, nd, take, 0, &outs[k]);
    for (uint32_t r = 0; r < nd->num_out; r++)
      dead[r] = r != (uint32_t)k;
    return NULL;
  }
  case IK_MERGE: {
    eddy_rt_tensor_t idx = eddy_rt_tensor_empty();
    eddy_rt_status_t rs =
        eddy_rt_tensor_create(I->rt, EDDY_RT_I32, 0, NULL, "df.merge", &idx);
    if (rs)
      return eddy_eval_op_rt_error(nd->op, rs);
    *(int32_t *)idx.data = ns->live_in;
    operand_take(I, item->it, nd, take, (uint32_t)ns->live_in, &outs[0]);
    outs[1] = eddy_eval_value_from_tensor(&idx);
    return NULL;
  }
  case IK_ENTER:
  case IK_EXIT:
  case IK_NEXT:
  case IK_FORWARD:
    operand_take(I, item->it, nd, take, 0, &outs[0]);
    return NULL;
  case IK_CONTROL:
  case IK_TRIGGER:
  case IK_FREE:
  case IK_SEND: // worker_main runs the transfers
  case IK_RECV:
    return NULL;
  case IK_NORMAL:
  case IK_RESOURCE:
    break;
  }
  eddy_eval_value_t *small[8];
  eddy_eval_value_t **in =
      nd->num_in <= 8 ? small : malloc(nd->num_in * sizeof(*in));
  if (!in)
    return oom();
  for (uint32_t k = 0; k < nd->num_in; k++)
    in[k] = &operand_slot(I, item->it, nd, k)->v;
  // A list whose last reader this op is goes to the kernel with the slot's
  // reference, so that tl.push_back and the other updates grow it in place
  // rather than copying its item table (docs/interpreter.md).
  eddy_status_t st =
      nd->kind == IK_RESOURCE
          ? interp_resource_exec(I, nd, (const eddy_eval_value_t *const *)in,
                                 outs)
          : eddy_eval_op_run_take(es, nd->op, in, take, outs);
  if (in != small)
    free(in);
  return st;
}

/// ---- Workers ------------------------------------------------------------------------

/// "root" or "while_1/:0/while_0/:2".
static void tag_format(const interp_t *I, const frame_t *f, int64_t n,
                       eddy_buf_t *out) {
  if (f->sid < 0) {
    eddy_buf_puts(out, "root");
    return;
  }
  if (f->parent && f->parent->sid >= 0) {
    tag_format(I, f->parent, f->parent_iter->n, out);
    eddy_buf_putc(out, '/');
  }
  eddy_buf_printf(out, "%s:%" PRId64, I->g->frames[f->sid].name, n);
}

static void trace_node(const interp_t *I, const item_t *item,
                       const nstate_t *ns, const bool *dead) {
  const interp_node_t *nd = &I->g->nodes[item->node];
  eddy_buf_t b;
  eddy_buf_init(&b);
  tag_format(I, item->f, item->it->n, &b);
  eddy_buf_printf(&b, " %s (", nd->op->name->str);
  eddy_ir_loc_format(nd->op->loc, &b);
  eddy_buf_puts(&b, "): ");
  bool all = true;
  for (uint32_t r = 1; r < nd->num_out; r++)
    all = all && dead[r] == dead[0];
  if (nd->num_out == 0)
    eddy_buf_puts(&b, "done");
  else if (all)
    eddy_buf_puts(&b, dead[0] ? "dead" : "live");
  else
    for (uint32_t r = 0; r < nd->num_out; r++)
      eddy_buf_printf(&b, "%s#%u %s", r ? ", " : "", r,
                      dead[r] ? "dead" : "live");
  if (nd->kind == IK_MERGE && !ns->any_dead)
    eddy_buf_printf(&b, " (input %d)", ns->live_in);
  I->opts.trace(I->opts.trace_user, b.data);
  eddy_buf_destroy(&b);
}

void interp_transfer_key(const interp_t *I, const interp_node_t *nd,
                         const frame_t *f, int64_t n, eddy_buf_t *out) {
  eddy_buf_printf(out, "%" PRId64 "@", nd->key);
  tag_format(I, f, n, out);
}

/// Nothing ready, nothing running, no recv waiting: the run is over.
static bool quiescent(const interp_t *I) {
  return I->q_len == 0 && I->running == 0 && I->recv_waiting == 0;
}

/// A df.send (outside the lock): the operand, live or dead, to its peer.
static eddy_status_t exec_send(interp_t *I, const item_t *item,
                               const nstate_t *ns, const char *key) {
  const interp_node_t *nd = &I->g->nodes[item->node];
  const slot_t *s = operand_slot(I, item->it, nd, 0);
  eddy_eval_value_t none;
  memset(&none, 0, sizeof(none));
  return I->opts.send(I->opts.send_user, nd->peer, key,
                      ns->any_dead ? &none : &s->v, ns->any_dead);
}

void interp_recv_arrived(interp_t *I, const item_t *item,
                         eddy_eval_value_t *owned, bool dead) {
  pthread_mutex_lock(&I->mu);
  I->recv_waiting--;
  I->stats.recvs++;
  if (I->opts.trace) {
    nstate_t ns = item->it->ns[item->node];
    trace_node(I, item, &ns, &dead);
  }
  interp_complete(I, item, owned, &dead);
  if (quiescent(I))
    I->stop = true;
  pthread_cond_broadcast(&I->cv);
  pthread_mutex_unlock(&I->mu);
}

static bool past_deadline(const interp_t *I) {
  if (!I->has_deadline)
    return false;
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec > I->deadline.tv_sec ||
         (now.tv_sec == I->deadline.tv_sec &&
          now.tv_nsec >= I->deadline.tv_nsec);
}

/// The run passed its time limit: fails it, naming a recv that waits for
/// its message when there is one (a distributed run whose peers are slow
/// or stuck waits there, with nothing in the queue). Called with I->mu
/// held; releases it for a moment (the rendezvous is locked first), after
/// the error is recorded, so that another rank's failure arriving then
/// does not take its place.
#define TIME_LIMIT_FMT "the run took longer than its time limit of %" PRId64 " ms%s"

static void time_out(interp_t *I) {
  eddy_status_t plain = eddy_status_create(EDDY_ERR_RESOURCE, TIME_LIMIT_FMT,
                                           I->opts.timeout_ms, "");
  interp_fail(I, plain);
  if (I->error != plain || I->recv_waiting == 0 || !I->opts.rendezvous)
    return;
  pthread_mutex_unlock(&I->mu);
  eddy_buf_t w;
  eddy_buf_init(&w);
  eddy_buf_puts(&w, "; ");
  bool named =
      interp_rendezvous_describe_waiting(I->opts.rendezvous, I, &w);
  pthread_mutex_lock(&I->mu);
  if (named && I->error == plain) { // only this function replaces it
    I->error = eddy_status_create(EDDY_ERR_RESOURCE, TIME_LIMIT_FMT,
                                  I->opts.timeout_ms, w.data);
    eddy_status_destroy(plain);
  }
  eddy_buf_destroy(&w);
}

static void worker_main(void *arg, int64_t task) {
  (void)task;
  interp_t *I = arg;
  pthread_mutex_lock(&I->mu);
  eddy_eval_op_runner_t *es = I->runners[I->next_worker++];
  while (!I->stop) {
    if (I->q_len == 0) {
      if (quiescent(I)) { // nothing ready, running or waiting: the end
        I->stop = true;
        pthread_cond_broadcast(&I->cv);
        break;
      }
      // Nothing ready: ops run on other workers, or recvs wait for their
      // messages. The time limit holds while waiting too.
      I->idle++;
      int rc = I->has_deadline
                   ? pthread_cond_timedwait(&I->cv, &I->mu, &I->deadline)
                   : pthread_cond_wait(&I->cv, &I->mu);
      I->idle--;
      if (rc == ETIMEDOUT && !I->stop) {
        time_out(I);
        break;
      }
      continue;
    }
    if (past_deadline(I)) {
      time_out(I);
      break;
    }
    item_t item = I->q[I->q_head];
    I->q_head = (I->q_head + 1) % I->q_cap;
    I->q_len--;
    I->running++;
    nstate_t ns = item.it->ns[item.node];
    const interp_node_t *nd = &I->g->nodes[item.node];
    uint64_t take = ns.any_dead ? 0 : item_takes(I, &item);
    eddy_buf_t key;
    eddy_buf_init(&key);
    if (nd->kind == IK_SEND || nd->kind == IK_RECV) {
      interp_transfer_key(I, nd, item.f, item.it->n, &key);
      if (nd->kind == IK_RECV)
        I->recv_waiting++;
    }
    pthread_mutex_unlock(&I->mu);

    eddy_eval_value_t small_out[4];
    bool small_dead[4];
    eddy_eval_value_t *outs =
        nd->num_out <= 4 ? small_out : calloc(nd->num_out, sizeof(*outs));
    bool *dead =
        nd->num_out <= 4 ? small_dead : calloc(nd->num_out, sizeof(*dead));
    eddy_status_t st = NULL;
    if (!outs || !dead) {
      st = oom();
    } else {
      memset(outs, 0, nd->num_out * sizeof(*outs));
      memset(dead, 0, nd->num_out * sizeof(*dead));
      if (nd->kind == IK_SEND)
        st = exec_send(I, &item, &ns, key.data);
      else if (nd->kind != IK_RECV)
        st = exec_node(I, es, &item, &ns, take, outs, dead);
    }
    bool waits = !st && nd->kind == IK_RECV &&
                 !interp_rendezvous_take(I->opts.rendezvous, key.data, I,
                                         &item, &outs[0], &dead[0]);
    eddy_buf_destroy(&key);

    pthread_mutex_lock(&I->mu);
    if (nd->kind == IK_RECV && !waits) {
      I->recv_waiting--;
      I->stats.recvs += !st;
    }
    if (nd->kind == IK_SEND && !st) {
      I->stats.sends++;
      I->stats.dead_sends += ns.any_dead;
    }
    if (waits) {
      // interp_recv_arrived completes it
    } else if (st) {
      interp_fail(I, st);
    } else {
      if (ns.any_dead && nd->kind != IK_TRIGGER && nd->kind != IK_SEND &&
          nd->kind != IK_RECV)
        I->stats.ops_dead++;
      else
        I->stats.ops_run++;
      if (I->opts.trace)
        trace_node(I, &item, &ns, dead);
      interp_complete(I, &item, outs, dead);
    }
    if (outs != small_out)
      free(outs);
    if (dead != small_dead)
      free(dead);
    I->running--;
    if (quiescent(I)) {
      I->stop = true;
      pthread_cond_broadcast(&I->cv);
    }
  }
  pthread_mutex_unlock(&I->mu);
}

/// ---- Deadlock diagnosis ------------------------------------------------------------

/// Finds a waiting node in f's iterations or their child frames.
static bool find_stuck(const interp_t *I, const frame_t *f, eddy_buf_t *out) {
  for (int64_t n = f->first; n <= f->last; n++) {
    const iter_t *it = f->ring[n % f->parallel];
    if (!it)
      continue;
    if (interp_describe_partial(I, f, it, out))
      return true;
    for (const frame_t *c = it->children; c; c = c->next_sibling)
      if (find_stuck(I, c, out))
        return true;
  }
  return false;
}

static eddy_status_t deadlock_error(const interp_t *I, uint32_t missing_ret) {
  eddy_buf_t b;
  eddy_buf_init(&b);
  if (!find_stuck(I, I->root, &b) && missing_ret == UINT32_MAX) {
    eddy_buf_puts(&b, "a loop frame never finished (an op in it waits for "
                      "inputs that never arrive)");
  } else if (!b.len) {
    const eddy_value_t *v = I->g->values[I->g->ret[missing_ret]];
    eddy_buf_printf(&b, "result #%u of @%s is never computed", missing_ret,
                    eddy_ir_func_name(I->g->func));
    if (v->def) {
      eddy_buf_puts(&b, ": ");
      interp_describe_op(v->def, &b);
      eddy_buf_puts(&b, " never runs");
    }
  }
  eddy_status_t st = eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                                        "deadlock: %s", b.data);
  eddy_buf_destroy(&b);
  return st;
}

/// ---- Entry point -------------------------------------------------------------------

eddy_interp_opts_t eddy_interp_opts_default(void) {
  eddy_interp_opts_t o;
  memset(&o, 0, sizeof(o));
  o.num_workers = 0;
  o.max_iterations = EDDY_EVAL_DEFAULT_MAX_ITERATIONS;
  o.timeout_ms = 0;
  return o;
}

/// Computes the values of the nodes with no operands, once.
static eddy_status_t compute_free(interp_t *I) {
  const interp_graph_t *g = I->g;
  eddy_eval_op_runner_t *es = I->runners[0];
  for (uint32_t i = 0; i < g->num_nodes; i++) {
    const interp_node_t *nd = &g->nodes[i];
    if (nd->kind != IK_FREE || !nd->has_kernel)
      continue;
    eddy_eval_value_t outs[8];
    if (nd->num_out > 8)
      return node_error(nd->op, "too many results for an op with no "
                                "operands");
    memset(outs, 0, sizeof(outs));
    EDDY_RETURN_IF_ERROR(eddy_eval_op_run(es, nd->op, NULL, outs));
    for (uint32_t r = 0; r < nd->num_out; r++) {
      I->free_vals[nd->out + r].v = outs[r];
      I->free_vals[nd->out + r].set = true;
    }
  }
  return NULL;
}

static eddy_status_t index_exits(interp_t *I) {
  const interp_graph_t *g = I->g;
  I->exit_start = calloc((size_t)g->num_frames + 1, sizeof(*I->exit_start));
  if (!I->exit_start)
    return oom();
  for (int32_t s = 0; s < g->num_frames; s++)
    I->exit_start[s + 1] = I->exit_start[s] + (uint32_t)g->frames[s].num_exits;
  I->exit_nodes = calloc(I->exit_start[g->num_frames] + 1, sizeof(uint32_t));
  if (!I->exit_nodes)
    return oom();
  for (uint32_t i = 0; i < g->num_nodes; i++) {
    const interp_node_t *nd = &g->nodes[i];
    if (nd->kind == IK_EXIT)
      I->exit_nodes[I->exit_start[nd->target_frame] + (uint32_t)nd->exit_index] = i;
  }
  return NULL;
}

/// Runs the graph to quiescence; the results are in the root iteration.
static eddy_status_t run(interp_t *I, const eddy_eval_value_t *args,
                         size_t num_args) {
  const interp_graph_t *g = I->g;
  EDDY_RETURN_IF_ERROR(index_exits(I));
  I->free_vals = calloc(g->num_values ? g->num_values : 1, sizeof(slot_t));
  I->runners = calloc((size_t)I->num_workers, sizeof(*I->runners));
  if (!I->free_vals || !I->runners)
    return oom();
  for (int32_t w = 0; w < I->num_workers; w++)
    if (!(I->runners[w] = eddy_eval_op_runner_create(I->rt, g->func)))
      return oom();
  EDDY_RETURN_IF_ERROR(compute_free(I));
  I->root = interp_frame_create(I, NULL, NULL, -1);
  if (!I->root)
    return NULL; // the error is in I->error
  iter_t *rit = I->root->ring[0];
  for (size_t i = 0; i < num_args && !I->error; i++) {
    eddy_eval_value_t v;
    eddy_eval_value_share(&args[i], &v);
    interp_deliver(I, I->root, rit, (uint32_t)i, &v, false);
  }
  for (uint32_t i = 0; i < g->num_nodes && !I->error; i++) {
    const interp_node_t *nd = &g->nodes[i];
    if (nd->kind != IK_FREE && nd->num_tagged == 0)
      interp_enqueue(I, i, I->root, rit);
  }
  if (I->error)
    return NULL;
  if (I->num_workers <= 1) {
    worker_main(I, 0);
    return NULL;
  }
  eddy_rt_pool_t *pool = NULL;
  eddy_rt_status_t rs = eddy_rt_pool_create(I->num_workers, &pool);
  if (rs)
    return eddy_eval_from_rt(rs);
  eddy_rt_pool_parallel_for(pool, I->num_workers, worker_main, I);
  eddy_rt_pool_destroy(pool);
  return NULL;
}

eddy_status_t eddy_interp_func(eddy_rt_ctx_t *rt, const eddy_op_t *func,
                               const eddy_interp_opts_t *opts,
                               const eddy_eval_value_t *args, size_t num_args,
                               eddy_eval_value_t *out_results,
                               size_t num_results,
                               eddy_interp_stats_t *out_stats) {
  memset(out_results, 0, num_results * sizeof(*out_results));
  if (out_stats)
    memset(out_stats, 0, sizeof(*out_stats));
  EDDY_RETURN_IF_ERROR(eddy_eval_check_args(func, args, num_args));
  const eddy_type_t *fty = eddy_ir_func_type(func);
  if (fty->num_outputs != num_results)
    return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                              "@%s returns %u values, room was given for %zu",
                              eddy_ir_func_name(func), fty->num_outputs,
                              num_results);
  interp_graph_t g;
  eddy_status_t st = interp_graph_build(func, &g);
  if (st) {
    interp_graph_destroy(&g);
    return st;
  }
  interp_t I;
  memset(&I, 0, sizeof(I));
  I.rt = rt;
  I.g = &g;
  I.opts = opts ? *opts : eddy_interp_opts_default();
  if (I.opts.max_iterations <= 0)
    I.opts.max_iterations = EDDY_EVAL_DEFAULT_MAX_ITERATIONS;
  I.num_workers = I.opts.num_workers;
  if (I.num_workers <= 0) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    I.num_workers = cores < 1 ? 1 : cores > 256 ? 256 : (int32_t)cores;
  }
  if (I.opts.timeout_ms > 0) {
    clock_gettime(CLOCK_MONOTONIC, &I.deadline);
    I.deadline.tv_sec += I.opts.timeout_ms / 1000;
    I.deadline.tv_nsec += (I.opts.timeout_ms % 1000) * 1000000L;
    if (I.deadline.tv_nsec >= 1000000000L) {
      I.deadline.tv_sec++;
      I.deadline.tv_nsec -= 1000000000L;
    }
    I.has_deadline = true;
  }
  pthread_mutex_init(&I.mu, NULL);
  pthread_mutex_init(&I.res_mu, NULL);
  // Waits with the time limit measure it on the deadline's clock.
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&I.cv, &ca);
  pthread_condattr_destroy(&ca);

  for (uint32_t i = 0; i < g.num_nodes && !st; i++) {
    const interp_node_t *nd = &g.nodes[i];
    if ((nd->kind == IK_SEND && !I.opts.send) ||
        (nd->kind == IK_RECV && !I.opts.rendezvous))
      st = node_error(nd->op, "a partition's transfer op runs only in a "
                              "distributed run (eddy run "
                              "--mode=distributed under mpirun)");
  }
  if (I.opts.rendezvous)
    interp_rendezvous_attach(I.opts.rendezvous, &I);
  if (!st)
    st = run(&I, args, num_args);
  if (I.opts.rendezvous)
    interp_rendezvous_detach(I.opts.rendezvous, &I);
  if (!st && I.error) {
    st = I.error;
    I.error = NULL;
  }
  // The results: every func.return operand live in the root iteration.
  iter_t *rit = I.root ? I.root->ring[0] : NULL;
  for (uint32_t i = 0; i < g.num_ret && !st; i++) {
    uint32_t vi = g.ret[i];
    const slot_t *s = g.value_free[vi] ? &I.free_vals[vi] : &rit->slots[vi];
    if (!s->set)
      st = deadlock_error(&I, i);
    else if (s->dead)
      st = eddy_status_create(
          EDDY_ERR_INVALID_ARGUMENT,
          "result #%u of @%s is dead: it comes from the untaken side of a "
          "df.switch",
          i, eddy_ir_func_name(func));
  }
  if (!st && rit && rit->children)
    st = deadlock_error(&I, UINT32_MAX);
  for (uint32_t i = 0; i < g.num_ret && i < num_results; i++) {
    if (st)
      break;
    uint32_t vi = g.ret[i];
    const slot_t *s = g.value_free[vi] ? &I.free_vals[vi] : &rit->slots[vi];
    eddy_eval_value_share(&s->v, &out_results[i]);
  }
  if (st)
    for (size_t i = 0; i < num_results; i++)
      eddy_eval_value_release(&out_results[i]);
  for (int32_t w = 0; I.runners && w < I.num_workers; w++) {
    eddy_eval_op_stats_t os = {0, 0};
    if (I.runners[w])
      eddy_eval_op_runner_stats(I.runners[w], &os);
    I.stats.list_copies += os.list_copies;
    I.stats.list_items_copied += os.list_items_copied;
  }
  if (out_stats)
    *out_stats = I.stats;

  if (I.root)
    interp_frame_free(&I, I.root);
  interp_iters_destroy(&I);
  if (I.free_vals)
    for (uint32_t v = 0; v < g.num_values; v++)
      eddy_eval_value_release(&I.free_vals[v].v);
  free(I.free_vals);
  if (I.runners)
    for (int32_t w = 0; w < I.num_workers; w++)
      eddy_eval_op_runner_destroy(I.runners[w]);
  free(I.runners);
  free(I.q);
  free(I.exit_nodes);
  free(I.exit_start);
  eddy_status_destroy(I.error);
  interp_resources_free(&I);
  pthread_cond_destroy(&I.cv);
  pthread_mutex_destroy(&I.res_mu);
  pthread_mutex_destroy(&I.mu);
  interp_graph_destroy(&g);
  return st;
}

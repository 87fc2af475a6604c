/// The executor's bookkeeping: frame instances, iterations, values
/// arriving in slots, nodes becoming ready, and what each df op does with
/// its outputs (the "Implementation of Control Flow in TensorFlow" note's
/// rules; interp.c describes the model). Every function here runs with
/// interp_t.mu held.
#define _POSIX_C_SOURCE 200809L
#include "runtime/interp/interp_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static eddy_status_t oom(void) {
  return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
}

void interp_fail(interp_t *I, eddy_status_t st) {
  if (!st)
    return;
  if (I->error)
    eddy_status_destroy(st);
  else
    I->error = st;
  I->stop = true;
  pthread_cond_broadcast(&I->cv);
}

void interp_frame_describe(const interp_t *I, const frame_t *f, int64_t n,
                           eddy_buf_t *out) {
  if (f->sid < 0) {
    eddy_buf_puts(out, "the function's root frame");
    return;
  }
  eddy_buf_printf(out, "frame '%s' iteration %" PRId64,
                  I->g->frames[f->sid].name, n);
  for (const frame_t *p = f->parent; p && p->sid >= 0; p = p->parent)
    eddy_buf_printf(out, " (in frame '%s')", I->g->frames[p->sid].name);
}

/// ---- Iterations and frames ---------------------------------------------------

static iter_t *iter_get(const frame_t *f, int64_t n) {
  if (n < f->first || n > f->last)
    return NULL;
  return f->ring[n % f->parallel];
}


/// Releases the values of it and keeps it for reuse (iterations of a loop
/// come and go at a high rate; their slot and node arrays are sized by the
/// graph, so any iteration can take them).
static void iter_free(interp_t *I, iter_t *it) {
  // Leaves every slot zeroed (a slot never set holds a zeroed value).
  for (uint32_t v = 0; v < I->g->num_values; v++) {
    slot_t *s = &it->slots[v];
    if (s->set) {
      eddy_eval_value_release(&s->v);
      s->set = s->dead = false;
    }
  }
  it->children = NULL;
  it->next_free = I->free_iters;
  I->free_iters = it;
  I->live_iters--;
}

void interp_iters_destroy(interp_t *I) {
  while (I->free_iters) {
    iter_t *it = I->free_iters;
    I->free_iters = it->next_free;
    free(it->slots);
    free(it->ns);
    free(it);
  }
}

/// Creates iteration n (== f->last + 1) and hands it the frame's constants.
static iter_t *iter_create(interp_t *I, frame_t *f, int64_t n) {
  const interp_graph_t *g = I->g;
  if (f->sid >= 0 && n > I->opts.max_iterations) {
    eddy_buf_t b;
    eddy_buf_init(&b);
    interp_frame_describe(I, f, n, &b);
    eddy_buf_printf(&b, ": the loop ran past the limit of %" PRId64
                        " iterations (--max-iterations); it is entered by ",
                    I->opts.max_iterations);
    interp_describe_op(g->frames[f->sid].enter, &b);
    interp_fail(I, eddy_status_create(EDDY_ERR_RESOURCE, "%s", b.data));
    eddy_buf_destroy(&b);
    return NULL;
  }
  iter_t *it = I->free_iters;
  if (it) {
    I->free_iters = it->next_free;
    it->outstanding = 0;
    it->next_free = NULL;
  } else {
    it = calloc(1, sizeof(*it));
    if (it) {
      it->slots =
          calloc(g->num_values ? g->num_values : 1, sizeof(*it->slots));
      it->ns = calloc(g->num_nodes ? g->num_nodes : 1, sizeof(*it->ns));
    }
    if (!it || !it->slots || !it->ns) {
      if (it) {
        free(it->slots);
        free(it->ns);
      }
      free(it);
      interp_fail(I, oom());
      return NULL;
    }
  }
  it->n = n;
  for (uint32_t i = 0; i < g->num_nodes; i++)
    it->ns[i] = (nstate_t){.pending = g->nodes[i].num_tagged, .live_in = -1};
  f->ring[n % f->parallel] = it;
  f->last = n;
  I->stats.iterations += f->sid >= 0;
  if (++I->live_iters > I->stats.max_live_iterations)
    I->stats.max_live_iterations = I->live_iters;
  for (size_t i = 0; i < f->num_consts; i++) {
    eddy_eval_value_t v;
    eddy_eval_value_share(&f->consts[i].v, &v);
    interp_deliver(I, f, it, f->consts[i].value, &v, f->consts[i].dead);
  }
  return it;
}

static bool held_push(held_t **arr, size_t *len, size_t *cap, uint32_t value,
                      eddy_eval_value_t *owned, bool dead) {
  if (*len == *cap) {
    size_t nc = *cap ? *cap * 2 : 4;
    held_t *na = realloc(*arr, nc * sizeof(*na));
    if (!na)
      return false;
    *arr = na;
    *cap = nc;
  }
  (*arr)[(*len)++] = (held_t){value, *owned, dead};
  memset(owned, 0, sizeof(*owned));
  return true;
}

void interp_frame_free(interp_t *I, frame_t *f) {
  for (int64_t n = f->first; n <= f->last; n++) {
    iter_t *it = f->ring[n % f->parallel];
    if (!it)
      continue;
    while (it->children) {
      frame_t *c = it->children;
      it->children = c->next_sibling;
      interp_frame_free(I, c);
    }
    iter_free(I, it);
  }
  for (size_t i = 0; i < f->num_consts; i++)
    eddy_eval_value_release(&f->consts[i].v);
  for (size_t i = 0; i < f->num_deferred; i++)
    eddy_eval_value_release(&f->deferred[i].v);
  free(f->consts);
  free(f->deferred);
  free(f->ring);
  free(f->exit_live);
  free(f);
  I->live_frames--;
}

frame_t *interp_frame_create(interp_t *I, frame_t *parent, iter_t *pit,
                             int32_t sid) {
  const interp_sframe_t *sf = sid >= 0 ? &I->g->frames[sid] : NULL;
  frame_t *f = calloc(1, sizeof(*f));
  if (!f) {
    interp_fail(I, oom());
    return NULL;
  }
  f->sid = sid;
  f->parent = parent;
  f->parent_iter = pit;
  int64_t p = sf ? sf->parallel : 1;
  f->parallel = p < 1 ? 1 : p > INTERP_MAX_PARALLEL ? INTERP_MAX_PARALLEL : p;
  f->first = 0;
  f->last = -1;
  f->ring = calloc((size_t)f->parallel, sizeof(*f->ring));
  f->enters_left = sf ? sf->num_enters : 0;
  f->exit_live = calloc(sf && sf->num_exits ? (size_t)sf->num_exits : 1,
                        sizeof(*f->exit_live));
  I->live_frames++;
  if (!f->ring || !f->exit_live) {
    interp_frame_free(I, f);
    interp_fail(I, oom());
    return NULL;
  }
  if (pit) {
    f->next_sibling = pit->children;
    pit->children = f;
    pit->outstanding++;
    I->stats.frames++;
  }
  if (I->live_frames > I->stats.max_live_frames)
    I->stats.max_live_frames = I->live_frames;
  if (!iter_create(I, f, 0))
    return NULL; // freed with its parent iteration
  return f;
}

static frame_t *child_frame(interp_t *I, frame_t *f, iter_t *it, int32_t sid) {
  for (frame_t *c = it->children; c; c = c->next_sibling)
    if (c->sid == sid)
      return c;
  return interp_frame_create(I, f, it, sid);
}

static void check_frame(interp_t *I, frame_t *f);

/// All iterations of f are done: dead values through the exits that passed
/// no live one, then f goes away.
static void frame_finish(interp_t *I, frame_t *f) {
  frame_t *parent = f->parent;
  iter_t *pit = f->parent_iter;
  const interp_sframe_t *sf = &I->g->frames[f->sid];
  for (int32_t e = 0; e < sf->num_exits; e++) {
    if (f->exit_live[e])
      continue;
    const interp_node_t *nd = &I->g->nodes[I->exit_nodes[I->exit_start[f->sid] + e]];
    eddy_eval_value_t none;
    memset(&none, 0, sizeof(none));
    interp_deliver(I, parent, pit, nd->out, &none, true);
  }
  for (frame_t **pp = &pit->children; *pp; pp = &(*pp)->next_sibling) {
    if (*pp == f) {
      *pp = f->next_sibling;
      break;
    }
  }
  pit->outstanding--;
  interp_frame_free(I, f);
  check_frame(I, parent);
}

/// Frees the done iterations of f from the oldest on, starts deferred ones,
/// and finishes f when nothing is left.
static void check_frame(interp_t *I, frame_t *f) {
  if (f->sid < 0)
    return;
  while (f->first <= f->last && !I->error) {
    iter_t *it = f->ring[f->first % f->parallel];
    if (it->outstanding > 0 || f->enters_left > 0)
      return;
    eddy_buf_t b;
    eddy_buf_init(&b);
    if (interp_describe_partial(I, f, it, &b)) {
      interp_fail(I, eddy_status_create(EDDY_ERR_INVALID_ARGUMENT, "deadlock: %s",
                                 b.data));
      eddy_buf_destroy(&b);
      return;
    }
    eddy_buf_destroy(&b);
    f->ring[f->first % f->parallel] = NULL;
    iter_free(I, it);
    f->first++;
    if (f->num_deferred > 0 && f->last + 1 - f->first < f->parallel) {
      iter_t *nit = iter_create(I, f, f->last + 1);
      if (!nit)
        return;
      size_t nd = f->num_deferred;
      f->num_deferred = 0;
      for (size_t i = 0; i < nd; i++)
        interp_deliver(I, f, nit, f->deferred[i].value, &f->deferred[i].v, false);
    }
  }
  if (f->first > f->last && f->num_deferred == 0 && f->enters_left == 0 &&
      !I->error)
    frame_finish(I, f);
}

/// ---- Values arriving -------------------------------------------------------------

void interp_enqueue(interp_t *I, uint32_t node, frame_t *f, iter_t *it) {
  if (I->q_len == I->q_cap) {
    size_t nc = I->q_cap ? I->q_cap * 2 : 64;
    item_t *nq = malloc(nc * sizeof(*nq));
    if (!nq) {
      interp_fail(I, oom());
      return;
    }
    for (size_t i = 0; i < I->q_len; i++)
      nq[i] = I->q[(I->q_head + i) % I->q_cap];
    free(I->q);
    I->q = nq;
    I->q_cap = nc;
    I->q_head = 0;
  }
  I->q[(I->q_head + I->q_len++) % I->q_cap] = (item_t){node, f, it};
  it->outstanding++;
  // Wake a worker only when one waits, this item is more than the worker
  // holding the lock takes next anyway, and it is worth a wake-up: cheap ops
  // (scalars, loop counters, predicates, the df ops) run on the worker that
  // made them ready, which any one worker can do for the whole graph.
  if (I->idle > 0 && I->q_len > 1 && I->g->nodes[node].expensive)
    pthread_cond_signal(&I->cv);
}

static void notify(interp_t *I, frame_t *f, iter_t *it, uint32_t node,
                   uint32_t operand, bool dead) {
  const interp_node_t *nd = &I->g->nodes[node];
  nstate_t *ns = &it->ns[node];
  if (nd->kind == IK_MERGE) {
    if (ns->fired && !dead && !ns->any_dead) {
      // TensorFlow forwards whichever live input came first: a race. Only
      // the branches of a Switch (or a loop's entry and back edge, which
      // arrive in different iterations) may feed one Merge.
      eddy_buf_t b;
      eddy_buf_init(&b);
      interp_describe_op(nd->op, &b);
      eddy_buf_printf(&b, ": inputs #%d and #%u are both live in ",
                      ns->live_in, operand);
      interp_frame_describe(I, f, it->n, &b);
      interp_fail(I, eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                                        "%s (a merge forwards one value: its "
                                        "inputs must come from the two "
                                        "branches of a switch)",
                                        b.data));
      eddy_buf_destroy(&b);
      return;
    }
    if (ns->fired)
      return;
    if (!dead) {
      ns->fired = true;
      ns->live_in = (int32_t)operand;
      interp_enqueue(I, node, f, it);
      return;
    }
    uint32_t need = it->n == 0 ? nd->merge_need0 : nd->merge_need_n;
    if (++ns->dead_in >= need) {
      ns->fired = true;
      ns->any_dead = true;
      interp_enqueue(I, node, f, it);
    }
    return;
  }
  if (dead)
    ns->any_dead = true;
  if (ns->pending > 0 && --ns->pending == 0)
    interp_enqueue(I, node, f, it);
}

/// Sets value vi in iteration it (taking *owned over) and notifies its
/// consumers.
void interp_deliver(interp_t *I, frame_t *f, iter_t *it, uint32_t vi,
                    eddy_eval_value_t *owned, bool dead) {
  slot_t *s = &it->slots[vi];
  if (s->set) {
    eddy_eval_value_release(owned);
    eddy_buf_t b;
    eddy_buf_init(&b);
    interp_frame_describe(I, f, it->n, &b);
    interp_fail(I, eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                               "a value arrived twice in %s (two live inputs "
                               "of a df.merge, or a malformed graph)",
                               b.data));
    eddy_buf_destroy(&b);
    return;
  }
  s->v = *owned;
  memset(owned, 0, sizeof(*owned));
  s->set = true;
  s->dead = dead;
  s->readers_left = I->g->readers[vi];
  const interp_graph_t *g = I->g;
  for (uint32_t u = g->use_start[vi]; u < g->use_start[vi + 1]; u++)
    notify(I, f, it, g->uses[u].node, g->uses[u].operand, dead);
}

/// Routes the outputs of a node that ran in (f, it); takes outs over.
void interp_complete(interp_t *I, const item_t *item, eddy_eval_value_t *outs,
                     const bool *dead) {
  const interp_node_t *nd = &I->g->nodes[item->node];
  frame_t *f = item->f;
  iter_t *it = item->it;
  // The node has read its operands: a later reader may take them.
  for (uint32_t k = 0; k < nd->num_in && k < 64; k++) {
    slot_t *s = &it->slots[nd->in[k]];
    if ((nd->reads >> k & 1) && !I->g->value_free[nd->in[k]] && s->set &&
        s->readers_left > 0)
      s->readers_left--;
  }
  switch (nd->kind) {
  case IK_ENTER: {
    frame_t *c = child_frame(I, f, it, nd->target_frame);
    if (!c) {
      eddy_eval_value_release(&outs[0]);
      break;
    }
    if (nd->is_constant) {
      for (int64_t n = c->first; n <= c->last; n++) {
        eddy_eval_value_t v;
        eddy_eval_value_share(&outs[0], &v);
        interp_deliver(I, c, iter_get(c, n), nd->out, &v, dead[0]);
      }
      if (!held_push(&c->consts, &c->num_consts, &c->cap_consts, nd->out,
                     &outs[0], dead[0])) {
        eddy_eval_value_release(&outs[0]);
        interp_fail(I, oom());
      }
    } else {
      iter_t *it0 = iter_get(c, 0);
      if (it0)
        interp_deliver(I, c, it0, nd->out, &outs[0], dead[0]);
      else
        eddy_eval_value_release(&outs[0]);
    }
    c->enters_left--;
    check_frame(I, c);
    break;
  }
  case IK_EXIT:
    if (dead[0]) {
      eddy_eval_value_release(&outs[0]);
    } else {
      f->exit_live[nd->exit_index] = true;
      interp_deliver(I, f->parent, f->parent_iter, nd->out, &outs[0], false);
    }
    break;
  case IK_NEXT: {
    if (dead[0]) { // the loop ended on this path
      eddy_eval_value_release(&outs[0]);
      break;
    }
    int64_t n1 = it->n + 1;
    iter_t *nit = iter_get(f, n1);
    if (!nit && n1 - f->first < f->parallel)
      nit = iter_create(I, f, n1);
    if (nit) {
      interp_deliver(I, f, nit, nd->out, &outs[0], false);
    } else if (!I->error &&
               !held_push(&f->deferred, &f->num_deferred, &f->cap_deferred,
                          nd->out, &outs[0], false)) {
      interp_fail(I, oom());
    }
    eddy_eval_value_release(&outs[0]);
    break;
  }
  default:
    for (uint32_t r = 0; r < nd->num_out; r++)
      interp_deliver(I, f, it, nd->out + r, &outs[r], dead[r]);
    break;
  }
  it->outstanding--;
  check_frame(I, f);
}

/// ---- Deadlock diagnosis ------------------------------------------------------------

/// Describes a node of iteration it of f that received some of its inputs
/// but not all, when there is one: once nothing in the iteration can run,
/// such a node waits forever (a deadlock).
bool interp_describe_partial(const interp_t *I, const frame_t *f,
                             const iter_t *it, eddy_buf_t *out) {
  const interp_graph_t *g = I->g;
  for (uint32_t i = 0; i < g->num_nodes; i++) {
    const interp_node_t *nd = &g->nodes[i];
    const nstate_t *ns = &it->ns[i];
    bool partial = nd->kind == IK_MERGE
                       ? !ns->fired && ns->dead_in > 0
                       : ns->pending > 0 && ns->pending < nd->num_tagged;
    if (!partial)
      continue;
    uint32_t k = 0;
    while (k < nd->num_in &&
           (g->value_free[nd->in[k]] || it->slots[nd->in[k]].set))
      k++;
    interp_describe_op(nd->op, out);
    eddy_buf_puts(out, " in ");
    interp_frame_describe(I, f, it->n, out);
    if (k < nd->num_in) {
      const eddy_value_t *v = g->values[nd->in[k]];
      eddy_buf_printf(out, " waits for operand #%u", k);
      if (v->def) {
        eddy_buf_puts(out, " (from ");
        interp_describe_op(v->def, out);
        eddy_buf_puts(out, ")");
      }
      eddy_buf_puts(out, ", which never arrives in this frame and "
                         "iteration");
    }
    return true;
  }
  return false;
}

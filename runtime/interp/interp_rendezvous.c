/// Sends and recvs of a distributed run: the rendezvous table where a
/// rank's messages wait for their df.recv (or a df.recv for its message),
/// and the byte form of a message. The transport is the caller's (MPI in
/// tools/eddy/run_dist.c, threads in tests); this file knows no transport.
///
/// Lock order: the table's mutex, then the interpreter's (a put completes a
/// waiting recv while holding the table). The interpreter never takes the
/// table's mutex while holding its own.
#define _POSIX_C_SOURCE 200809L
#include "runtime/interp/interp_internal.h"

#include "runtime/kernels.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define RV_BUCKETS 4096

typedef struct rv_entry {
  struct rv_entry *next;
  char *key;
  bool has_msg;
  eddy_eval_value_t v; ///< the message, when has_msg
  bool dead;
  item_t item;         ///< the waiting recv, when !has_msg
} rv_entry_t;

struct eddy_interp_rendezvous {
  pthread_mutex_t mu;
  rv_entry_t *b[RV_BUCKETS];
  interp_t *I;           ///< the run using it, or NULL
  eddy_status_t failed;  ///< a failure put before the run started
  bool closed;           ///< no more messages will come
};

/// The deadlock of a recv whose message can no longer come. Called with
/// I->mu held.
static void fail_waiting(interp_t *I, const item_t *item, const char *key) {
  eddy_buf_t b;
  eddy_buf_init(&b);
  const interp_node_t *nd = &I->g->nodes[item->node];
  interp_describe_op(nd->op, &b);
  eddy_buf_puts(&b, " in ");
  interp_frame_describe(I, item->f, item->it->n, &b);
  interp_fail(I, eddy_status_create(
                     EDDY_ERR_INVALID_ARGUMENT,
                     "deadlock: %s waits for message %s from rank %d, which "
                     "has finished without sending it",
                     b.data, key, (int)nd->peer));
  eddy_buf_destroy(&b);
}

void eddy_interp_rendezvous_close(eddy_interp_rendezvous_t *r) {
  pthread_mutex_lock(&r->mu);
  r->closed = true;
  for (size_t i = 0; i < RV_BUCKETS && r->I; i++)
    for (rv_entry_t *e = r->b[i]; e; e = e->next)
      if (!e->has_msg) {
        pthread_mutex_lock(&r->I->mu);
        fail_waiting(r->I, &e->item, e->key);
        pthread_mutex_unlock(&r->I->mu);
      }
  pthread_mutex_unlock(&r->mu);
}

static uint64_t hash_str(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

eddy_interp_rendezvous_t *eddy_interp_rendezvous_create(void) {
  eddy_interp_rendezvous_t *r = calloc(1, sizeof(*r));
  if (r)
    pthread_mutex_init(&r->mu, NULL);
  return r;
}

void eddy_interp_rendezvous_destroy(eddy_interp_rendezvous_t *r) {
  if (!r)
    return;
  for (size_t i = 0; i < RV_BUCKETS; i++) {
    while (r->b[i]) {
      rv_entry_t *e = r->b[i];
      r->b[i] = e->next;
      eddy_eval_value_release(&e->v);
      free(e->key);
      free(e);
    }
  }
  eddy_status_destroy(r->failed);
  pthread_mutex_destroy(&r->mu);
  free(r);
}

/// The entry of key (unlinked when unlink), or NULL.
static rv_entry_t *rv_find(eddy_interp_rendezvous_t *r, const char *key,
                           bool unlink) {
  rv_entry_t **pp = &r->b[hash_str(key) % RV_BUCKETS];
  for (; *pp; pp = &(*pp)->next) {
    rv_entry_t *e = *pp;
    if (strcmp(e->key, key) != 0)
      continue;
    if (unlink)
      *pp = e->next;
    return e;
  }
  return NULL;
}

static rv_entry_t *rv_add(eddy_interp_rendezvous_t *r, const char *key) {
  rv_entry_t *e = calloc(1, sizeof(*e));
  size_t n = strlen(key);
  if (!e || !(e->key = malloc(n + 1))) {
    free(e);
    return NULL;
  }
  memcpy(e->key, key, n + 1);
  size_t h = hash_str(key) % RV_BUCKETS;
  e->next = r->b[h];
  r->b[h] = e;
  return e;
}

void eddy_interp_rendezvous_put(eddy_interp_rendezvous_t *r, const char *key,
                                eddy_eval_value_t *owned, bool dead) {
  pthread_mutex_lock(&r->mu);
  rv_entry_t *e = rv_find(r, key, false);
  if (e && !e->has_msg) { // a recv waits: complete it
    rv_find(r, key, true);
    if (r->I)
      interp_recv_arrived(r->I, &e->item, owned, dead);
    else
      eddy_eval_value_release(owned);
    free(e->key);
    free(e);
  } else if (e) { // a second message for one key: a malformed partition
    eddy_eval_value_release(owned);
    if (r->I) {
      pthread_mutex_lock(&r->I->mu);
      interp_fail(r->I, eddy_status_create(EDDY_ERR_INTERNAL,
                                           "two messages for key '%s'", key));
      pthread_mutex_unlock(&r->I->mu);
    }
  } else if ((e = rv_add(r, key))) {
    e->has_msg = true;
    e->v = *owned;
    e->dead = dead;
    memset(owned, 0, sizeof(*owned));
  } else {
    eddy_eval_value_release(owned);
    if (r->I) {
      pthread_mutex_lock(&r->I->mu);
      interp_fail(r->I,
                  eddy_status_create(EDDY_ERR_RESOURCE, "out of memory"));
      pthread_mutex_unlock(&r->I->mu);
    }
  }
  pthread_mutex_unlock(&r->mu);
}

void eddy_interp_rendezvous_fail(eddy_interp_rendezvous_t *r,
                                 eddy_status_t st) {
  pthread_mutex_lock(&r->mu);
  if (r->I) {
    pthread_mutex_lock(&r->I->mu);
    interp_fail(r->I, st);
    pthread_mutex_unlock(&r->I->mu);
  } else if (!r->failed) {
    r->failed = st;
  } else {
    eddy_status_destroy(st);
  }
  pthread_mutex_unlock(&r->mu);
}

size_t eddy_interp_rendezvous_leftover(eddy_interp_rendezvous_t *r,
                                       eddy_buf_t *out) {
  size_t n = 0;
  pthread_mutex_lock(&r->mu);
  for (size_t i = 0; i < RV_BUCKETS; i++)
    for (rv_entry_t *e = r->b[i]; e; e = e->next)
      if (e->has_msg && n++ == 0 && out)
        eddy_buf_puts(out, e->key);
  pthread_mutex_unlock(&r->mu);
  return n;
}

bool interp_rendezvous_take(eddy_interp_rendezvous_t *r, const char *key,
                            interp_t *I, const item_t *item,
                            eddy_eval_value_t *out, bool *out_dead) {
  pthread_mutex_lock(&r->mu);
  rv_entry_t *e = rv_find(r, key, false);
  bool got = e && e->has_msg;
  if (got) {
    rv_find(r, key, true);
    *out = e->v;
    *out_dead = e->dead;
    free(e->key);
    free(e);
  } else if (!e && r->closed) {
    pthread_mutex_lock(&I->mu);
    fail_waiting(I, item, key);
    pthread_mutex_unlock(&I->mu);
  } else if (!e && (e = rv_add(r, key))) {
    e->item = *item;
  } else {
    pthread_mutex_lock(&I->mu);
    interp_fail(I, e ? eddy_status_create(EDDY_ERR_INTERNAL,
                                          "two recvs for key '%s'", key)
                     : eddy_status_create(EDDY_ERR_RESOURCE,
                                          "out of memory"));
    pthread_mutex_unlock(&I->mu);
  }
  pthread_mutex_unlock(&r->mu);
  return got;
}

bool interp_rendezvous_describe_waiting(eddy_interp_rendezvous_t *r,
                                        const interp_t *I, eddy_buf_t *out) {
  bool found = false;
  pthread_mutex_lock(&r->mu);
  // A waiting recv keeps its iteration and frames alive until its message
  // comes, which needs r->mu: they stay readable here.
  for (size_t i = 0; i < RV_BUCKETS && !found; i++)
    for (rv_entry_t *e = r->b[i]; e && !found; e = e->next) {
      if (e->has_msg)
        continue;
      const interp_node_t *nd = &I->g->nodes[e->item.node];
      interp_describe_op(nd->op, out);
      eddy_buf_puts(out, " in ");
      interp_frame_describe(I, e->item.f, e->item.it->n, out);
      eddy_buf_printf(out, " waits for message %s from rank %d", e->key,
                      (int)nd->peer);
      found = true;
    }
  pthread_mutex_unlock(&r->mu);
  return found;
}

void interp_rendezvous_attach(eddy_interp_rendezvous_t *r, interp_t *I) {
  pthread_mutex_lock(&r->mu);
  r->I = I;
  if (r->failed) {
    interp_fail(I, r->failed); // no worker runs yet
    r->failed = NULL;
  }
  pthread_mutex_unlock(&r->mu);
}

void interp_rendezvous_detach(eddy_interp_rendezvous_t *r, interp_t *I) {
  pthread_mutex_lock(&r->mu);
  if (r->I == I)
    r->I = NULL;
  for (size_t i = 0; i < RV_BUCKETS; i++) {
    rv_entry_t **pp = &r->b[i];
    while (*pp) {
      rv_entry_t *e = *pp;
      if (e->has_msg) {
        pp = &e->next;
        continue;
      }
      *pp = e->next;
      free(e->key);
      free(e);
    }
  }
  pthread_mutex_unlock(&r->mu);
}

/// ---- Messages as bytes ------------------------------------------------------------

enum { WIRE_NONE = 0, WIRE_TENSOR = 1, WIRE_LIST = 2, WIRE_UNSET = 3 };

static void put_u8(eddy_buf_t *b, uint8_t v) {
  eddy_buf_append(b, (const char *)&v, 1);
}

static void put_i64(eddy_buf_t *b, int64_t v) {
  eddy_buf_append(b, (const char *)&v, sizeof v);
}

static void encode_tensor(const eddy_rt_tensor_t *t, eddy_buf_t *out) {
  put_u8(out, WIRE_TENSOR);
  put_i64(out, t->dtype);
  put_i64(out, t->rank);
  for (int32_t i = 0; i < t->rank; i++)
    put_i64(out, t->dims[i]);
  size_t es = eddy_dtype_size((eddy_dtype_t)t->dtype);
  int64_t n = eddy_rt_tensor_numel(t);
  if (eddy_rt_tensor_is_contiguous(t)) {
    if (n > 0)
      eddy_buf_append(out, t->data, (size_t)n * es);
    return;
  }
  for (int64_t i = 0; i < n; i++)
    eddy_buf_append(out, eddy_rt_tensor_elem_ptr(t, i), es);
}

static void encode_list(const eddy_rt_list_t *l, eddy_buf_t *out) {
  put_u8(out, WIRE_LIST);
  const eddy_rt_elem_shape_t *es = eddy_rt_list_elem_shape(l);
  put_i64(out, eddy_rt_list_depth(l));
  put_i64(out, eddy_rt_list_dtype(l));
  put_i64(out, eddy_rt_list_max_elements(l));
  put_i64(out, es->rank);
  for (int32_t i = 0; i < es->rank; i++)
    put_i64(out, es->dims[i]);
  int64_t n = eddy_rt_list_size(l);
  put_i64(out, n);
  for (int64_t i = 0; i < n; i++) {
    eddy_rt_tensor_t t;
    eddy_rt_list_t *item = NULL;
    int k = eddy_rt_list_peek(l, i, &t, &item);
    if (k == 1)
      encode_tensor(&t, out);
    else if (k == 2)
      encode_list(item, out);
    else
      put_u8(out, WIRE_UNSET);
    eddy_rt_tensor_release(&t);
    eddy_rt_list_release(item);
  }
}

eddy_status_t eddy_interp_value_encode(const eddy_eval_value_t *v, bool dead,
                                       eddy_buf_t *out) {
  put_u8(out, dead ? 1 : 0);
  switch (dead ? EDDY_EVAL_NONE : v->kind) {
  case EDDY_EVAL_NONE:
    put_u8(out, WIRE_NONE);
    return NULL;
  case EDDY_EVAL_TENSOR:
    encode_tensor(&v->tensor, out);
    return NULL;
  case EDDY_EVAL_LIST:
    encode_list(v->list, out);
    return NULL;
  case EDDY_EVAL_RESOURCE:
    break;
  }
  return eddy_status_create(EDDY_ERR_UNSUPPORTED,
                            "a v1 stack or TensorArray handle cannot be sent "
                            "to another rank; place its ops on one rank");
}

typedef struct rd {
  const uint8_t *p, *end;
  eddy_rt_ctx_t *rt;
} rd_t;

static bool get_u8(rd_t *r, uint8_t *v) {
  if (r->p >= r->end)
    return false;
  *v = *r->p++;
  return true;
}

static bool get_i64(rd_t *r, int64_t *v) {
  if ((size_t)(r->end - r->p) < sizeof *v)
    return false;
  memcpy(v, r->p, sizeof *v);
  r->p += sizeof *v;
  return true;
}

static eddy_status_t malformed(const char *what) {
  return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                            "malformed message: %s", what);
}

static eddy_status_t decode_item(rd_t *r, uint8_t kind, int depth,
                                 eddy_eval_value_t *out);

static eddy_status_t decode_tensor(rd_t *r, eddy_eval_value_t *out) {
  int64_t dt, rank, dims[EDDY_RT_MAX_RANK];
  if (!get_i64(r, &dt) || !get_i64(r, &rank) || dt < 0 ||
      dt >= EDDY_RT_DTYPE_COUNT_ || rank < 0 || rank > EDDY_RT_MAX_RANK)
    return malformed("tensor header");
  for (int64_t i = 0; i < rank; i++)
    if (!get_i64(r, &dims[i]) || dims[i] < 0)
      return malformed("tensor dims");
  eddy_rt_tensor_t t = eddy_rt_tensor_empty();
  eddy_rt_status_t rs = eddy_rt_tensor_create(r->rt, (int32_t)dt,
                                              (int32_t)rank, dims, "df.recv",
                                              &t);
  if (rs)
    return eddy_eval_from_rt(rs);
  size_t nb = (size_t)eddy_rt_tensor_numel(&t) *
              eddy_dtype_size((eddy_dtype_t)dt);
  if ((size_t)(r->end - r->p) < nb) {
    eddy_rt_tensor_release(&t);
    return malformed("tensor data");
  }
  if (nb)
    memcpy(t.data, r->p, nb);
  r->p += nb;
  *out = eddy_eval_value_from_tensor(&t);
  return NULL;
}

static eddy_status_t decode_list(rd_t *r, int depth, eddy_eval_value_t *out) {
  int64_t ld, dt, maxe, rank, n;
  eddy_rt_elem_shape_t es = eddy_rt_elem_shape_unknown();
  if (depth > EDDY_RT_MAX_LIST_DEPTH || !get_i64(r, &ld) ||
      !get_i64(r, &dt) || !get_i64(r, &maxe) || !get_i64(r, &rank) ||
      rank < -1 || rank > EDDY_RT_MAX_RANK || ld < 0 ||
      ld > EDDY_RT_MAX_LIST_DEPTH || dt < 0 || dt >= EDDY_RT_DTYPE_COUNT_)
    return malformed("list header");
  es.rank = (int32_t)rank;
  for (int64_t i = 0; i < rank; i++)
    if (!get_i64(r, &es.dims[i]))
      return malformed("list element shape");
  if (!get_i64(r, &n) || n < 0 || n > r->end - r->p)
    return malformed("list length");
  eddy_rt_list_t *l = NULL;
  eddy_rt_status_t rs = eddy_rt_list_empty_nested(
      r->rt, (int32_t)ld, (int32_t)dt, &es, maxe, &l);
  eddy_rt_tensor_t len = eddy_rt_tensor_empty();
  if (!rs)
    rs = eddy_rt_tensor_create(r->rt, EDDY_RT_I64, 0, NULL, "df.recv", &len);
  if (!rs) {
    *(int64_t *)len.data = n;
    rs = eddy_rt_list_resize(r->rt, l, &len, &l);
  }
  eddy_status_t st = rs ? eddy_eval_from_rt(rs) : NULL;
  for (int64_t i = 0; !st && i < n; i++) {
    uint8_t kind;
    if (!get_u8(r, &kind)) {
      st = malformed("list item");
      break;
    }
    if (kind == WIRE_UNSET)
      continue;
    eddy_eval_value_t item;
    memset(&item, 0, sizeof(item));
    st = decode_item(r, kind, depth + 1, &item);
    if (st)
      break;
    *(int64_t *)len.data = i;
    if (item.kind == EDDY_EVAL_TENSOR)
      rs = eddy_rt_list_set_item(r->rt, l, &len, &item.tensor, &l);
    else
      rs = eddy_rt_list_set_item_list(r->rt, l, &len, item.list, &l);
    eddy_eval_value_release(&item);
    st = rs ? eddy_eval_from_rt(rs) : NULL;
  }
  eddy_rt_tensor_release(&len);
  if (st) {
    eddy_rt_list_release(l);
    return st;
  }
  *out = eddy_eval_value_from_list(l);
  return NULL;
}

static eddy_status_t decode_item(rd_t *r, uint8_t kind, int depth,
                                 eddy_eval_value_t *out) {
  if (kind == WIRE_TENSOR)
    return decode_tensor(r, out);
  if (kind == WIRE_LIST)
    return decode_list(r, depth, out);
  return malformed("value kind");
}

eddy_status_t eddy_interp_value_decode(eddy_rt_ctx_t *rt, const void *data,
                                       size_t len, eddy_eval_value_t *out,
                                       bool *out_dead) {
  memset(out, 0, sizeof(*out));
  rd_t r = {data, (const uint8_t *)data + len, rt};
  uint8_t dead, kind;
  if (!get_u8(&r, &dead) || !get_u8(&r, &kind))
    return malformed("header");
  *out_dead = dead != 0;
  eddy_status_t st = kind == WIRE_NONE ? NULL : decode_item(&r, kind, 0, out);
  if (!st && r.p != r.end) {
    eddy_eval_value_release(out);
    st = malformed("trailing bytes");
  }
  return st;
}

/// Arena, pointer map, byte buffer, checked arithmetic and hashing.
#include "ir/support.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Arena ---------------------------------------------------------------- */

enum {
  EDDY_ARENA_ALIGN = 16,
  EDDY_ARENA_FIRST_CHUNK = 4096,
  EDDY_ARENA_MAX_CHUNK = 1 << 20,
};

/// One block of memory; `data` follows the header, aligned.
typedef struct eddy_arena_chunk {
  struct eddy_arena_chunk *next; ///< next chunk in the arena's list
  size_t size;                   ///< usable bytes
  size_t used;
  _Alignas(16) unsigned char data[];
} eddy_arena_chunk_t;

struct eddy_arena {
  eddy_arena_chunk_t *head;  ///< allocations bump here; list of all chunks
  eddy_arena_chunk_t *first; ///< the initial chunk, kept by reset
  size_t next_size;          ///< size of the next regular chunk
  size_t bytes_used;
};

static eddy_arena_chunk_t *eddy_arena_chunk_new(size_t size) {
  if (size > SIZE_MAX - sizeof(eddy_arena_chunk_t))
    return NULL;
  eddy_arena_chunk_t *c = malloc(sizeof(eddy_arena_chunk_t) + size);
  if (!c)
    return NULL;
  c->next = NULL;
  c->size = size;
  c->used = 0;
  return c;
}

eddy_arena_t *eddy_arena_create(void) {
  eddy_arena_t *a = calloc(1, sizeof(*a));
  if (!a)
    return NULL;
  a->first = eddy_arena_chunk_new(EDDY_ARENA_FIRST_CHUNK);
  if (!a->first) {
    free(a);
    return NULL;
  }
  a->head = a->first;
  a->next_size = 2 * EDDY_ARENA_FIRST_CHUNK;
  return a;
}

void eddy_arena_destroy(eddy_arena_t *a) {
  if (!a)
    return;
  eddy_arena_chunk_t *c = a->head;
  while (c) {
    eddy_arena_chunk_t *next = c->next;
    free(c);
    c = next;
  }
  free(a);
}

void eddy_arena_reset(eddy_arena_t *a) {
  /* `first` may sit anywhere in the list (large chunks are linked behind
     the head), so scan the whole list. */
  eddy_arena_chunk_t *c = a->head;
  while (c) {
    eddy_arena_chunk_t *next = c->next;
    if (c != a->first)
      free(c);
    c = next;
  }
  a->head = a->first;
  a->first->next = NULL;
  a->first->used = 0;
  a->next_size = 2 * a->first->size;
  a->bytes_used = 0;
}

static void eddy_arena_oom(size_t size) {
  fprintf(stderr, "eddy: out of memory (arena allocation of %zu bytes)\n",
          size);
  abort();
}

void *eddy_arena_alloc(eddy_arena_t *a, size_t size) {
  if (size == 0)
    size = 1; /* distinct, valid pointers even for empty allocations */
  if (size > SIZE_MAX - EDDY_ARENA_ALIGN)
    eddy_arena_oom(size);
  size_t rounded = (size + EDDY_ARENA_ALIGN - 1) & ~(size_t)(EDDY_ARENA_ALIGN - 1);
  eddy_arena_chunk_t *c = a->head;
  if (c->size - c->used < rounded) {
    if (rounded > a->next_size / 4) {
      /* A large allocation gets a chunk of its own, linked behind the head
         so the head's free space stays usable. */
      eddy_arena_chunk_t *big = eddy_arena_chunk_new(rounded);
      if (!big)
        eddy_arena_oom(size);
      big->used = rounded;
      big->next = c->next;
      c->next = big;
      a->bytes_used += size;
      memset(big->data, 0, size);
      return big->data;
    }
    eddy_arena_chunk_t *n = eddy_arena_chunk_new(a->next_size);
    if (!n)
      eddy_arena_oom(size);
    if (a->next_size < EDDY_ARENA_MAX_CHUNK)
      a->next_size *= 2;
    n->next = a->head;
    a->head = n;
    c = n;
  }
  void *p = c->data + c->used;
  c->used += rounded;
  a->bytes_used += size;
  memset(p, 0, size);
  return p;
}

void *eddy_arena_dup(eddy_arena_t *a, const void *p, size_t n) {
  void *q = eddy_arena_alloc(a, n);
  if (n)
    memcpy(q, p, n);
  return q;
}

char *eddy_arena_strndup(eddy_arena_t *a, const char *s, size_t n) {
  if (n == SIZE_MAX)
    eddy_arena_oom(n);
  char *q = eddy_arena_alloc(a, n + 1);
  if (n)
    memcpy(q, s, n);
  q[n] = '\0';
  return q;
}

size_t eddy_arena_bytes_used(const eddy_arena_t *a) { return a->bytes_used; }

/* ---- Pointer map ---------------------------------------------------------- */

static size_t eddy_ptrmap_slot(const void *key, size_t cap) {
  uint64_t x = (uint64_t)(uintptr_t)key;
  /* pointers share low zero bits and high bits; mix them all */
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return (size_t)(x & (cap - 1));
}

void eddy_ptrmap_init(eddy_ptrmap_t *m) { memset(m, 0, sizeof(*m)); }

void eddy_ptrmap_destroy(eddy_ptrmap_t *m) {
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof(*m));
}

void eddy_ptrmap_clear(eddy_ptrmap_t *m) {
  if (m->cap)
    memset(m->keys, 0, m->cap * sizeof(void *));
  m->len = 0;
}

static void eddy_ptrmap_grow(eddy_ptrmap_t *m) {
  size_t cap = m->cap ? m->cap * 2 : 16;
  void **keys = calloc(cap, sizeof(void *));
  void **vals = calloc(cap, sizeof(void *));
  if (!keys || !vals) {
    fprintf(stderr, "eddy: out of memory (pointer map)\n");
    abort();
  }
  for (size_t i = 0; i < m->cap; i++) {
    if (!m->keys[i])
      continue;
    size_t j = eddy_ptrmap_slot(m->keys[i], cap);
    while (keys[j])
      j = (j + 1) & (cap - 1);
    keys[j] = m->keys[i];
    vals[j] = m->vals[i];
  }
  free(m->keys);
  free(m->vals);
  m->keys = keys;
  m->vals = vals;
  m->cap = cap;
}

void eddy_ptrmap_put(eddy_ptrmap_t *m, const void *key, void *val) {
  assert(key && "eddy_ptrmap keys must be non-NULL");
  if ((m->len + 1) * 4 > m->cap * 3)
    eddy_ptrmap_grow(m);
  size_t i = eddy_ptrmap_slot(key, m->cap);
  while (m->keys[i] && m->keys[i] != key)
    i = (i + 1) & (m->cap - 1);
  if (!m->keys[i]) {
    m->keys[i] = (void *)key;
    m->len++;
  }
  m->vals[i] = val;
}

static const size_t EDDY_PTRMAP_NONE = SIZE_MAX;

static size_t eddy_ptrmap_find(const eddy_ptrmap_t *m, const void *key) {
  if (!m->cap || !key)
    return EDDY_PTRMAP_NONE;
  size_t i = eddy_ptrmap_slot(key, m->cap);
  while (m->keys[i]) {
    if (m->keys[i] == key)
      return i;
    i = (i + 1) & (m->cap - 1);
  }
  return EDDY_PTRMAP_NONE;
}

void *eddy_ptrmap_get(const eddy_ptrmap_t *m, const void *key) {
  size_t i = eddy_ptrmap_find(m, key);
  return i == EDDY_PTRMAP_NONE ? NULL : m->vals[i];
}

bool eddy_ptrmap_has(const eddy_ptrmap_t *m, const void *key) {
  return eddy_ptrmap_find(m, key) != EDDY_PTRMAP_NONE;
}

/* ---- Byte buffer ---------------------------------------------------------- */

void eddy_buf_init(eddy_buf_t *b) { memset(b, 0, sizeof(*b)); }

void eddy_buf_destroy(eddy_buf_t *b) {
  free(b->data);
  memset(b, 0, sizeof(*b));
}

void eddy_buf_clear(eddy_buf_t *b) {
  b->len = 0;
  if (b->data)
    b->data[0] = '\0';
}

static void eddy_buf_reserve(eddy_buf_t *b, size_t extra) {
  if (extra > SIZE_MAX - b->len - 1) {
    fprintf(stderr, "eddy: buffer size overflow\n");
    abort();
  }
  size_t need = b->len + extra + 1;
  if (need <= b->cap)
    return;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < need)
    cap = cap > SIZE_MAX / 2 ? need : cap * 2;
  char *d = realloc(b->data, cap);
  if (!d) {
    fprintf(stderr, "eddy: out of memory (buffer)\n");
    abort();
  }
  b->data = d;
  b->cap = cap;
}

void eddy_buf_append(eddy_buf_t *b, const char *s, size_t n) {
  eddy_buf_reserve(b, n);
  if (n)
    memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = '\0';
}

void eddy_buf_puts(eddy_buf_t *b, const char *s) {
  eddy_buf_append(b, s, strlen(s));
}

void eddy_buf_putc(eddy_buf_t *b, char c) { eddy_buf_append(b, &c, 1); }

void eddy_buf_printf(eddy_buf_t *b, const char *fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n > 0) {
    eddy_buf_reserve(b, (size_t)n);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap2);
    b->len += (size_t)n;
  } else {
    eddy_buf_reserve(b, 0);
    b->data[b->len] = '\0';
  }
  va_end(ap2);
}

char *eddy_buf_take(eddy_buf_t *b) {
  if (!b->data) {
    eddy_buf_reserve(b, 0);
    b->data[0] = '\0';
  }
  char *s = b->data;
  memset(b, 0, sizeof(*b));
  return s;
}

/* ---- Checked arithmetic --------------------------------------------------- */

bool eddy_checked_mul_i64(int64_t a, int64_t b, int64_t *out) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    return false;
  *out = r;
  return true;
}

bool eddy_checked_add_i64(int64_t a, int64_t b, int64_t *out) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    return false;
  *out = r;
  return true;
}

/* ---- Hashing -------------------------------------------------------------- */

uint64_t eddy_hash_bytes(const void *p, size_t n, uint64_t seed) {
  const unsigned char *s = p;
  uint64_t h = 0xcbf29ce484222325ULL ^ seed;
  for (size_t i = 0; i < n; i++) {
    h ^= s[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

uint64_t eddy_hash_combine(uint64_t h, uint64_t v) {
  /* fold v in with a multiplicative mix so that order matters */
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ULL;
  return h;
}

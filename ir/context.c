/// The context: arenas, interned identifiers and locations, the dialect
/// registry and op lookup.
#include "ir/ir_internal.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Intern sets ---------------------------------------------------------- */

void *eddy_intern_find(const eddy_intern_set_t *s, uint64_t hash,
                       eddy_intern_eq_fn eq, const void *key) {
  if (!s->cap)
    return NULL;
  size_t i = (size_t)hash & (s->cap - 1);
  while (s->items[i]) {
    if (s->hashes[i] == hash && eq(s->items[i], key))
      return s->items[i];
    i = (i + 1) & (s->cap - 1);
  }
  return NULL;
}

static void eddy_intern_oom(void) {
  fprintf(stderr, "eddy: out of memory (intern table)\n");
  abort();
}

void eddy_intern_add(eddy_intern_set_t *s, uint64_t hash, void *item) {
  if ((s->len + 1) * 4 > s->cap * 3) {
    size_t cap = s->cap ? s->cap * 2 : 64;
    void **items = calloc(cap, sizeof(void *));
    uint64_t *hashes = calloc(cap, sizeof(uint64_t));
    if (!items || !hashes)
      eddy_intern_oom();
    for (size_t i = 0; i < s->cap; i++) {
      if (!s->items[i])
        continue;
      size_t j = (size_t)s->hashes[i] & (cap - 1);
      while (items[j])
        j = (j + 1) & (cap - 1);
      items[j] = s->items[i];
      hashes[j] = s->hashes[i];
    }
    free(s->items);
    free(s->hashes);
    s->items = items;
    s->hashes = hashes;
    s->cap = cap;
  }
  size_t i = (size_t)hash & (s->cap - 1);
  while (s->items[i])
    i = (i + 1) & (s->cap - 1);
  s->items[i] = item;
  s->hashes[i] = hash;
  s->len++;
}

void eddy_intern_destroy(eddy_intern_set_t *s) {
  free(s->items);
  free(s->hashes);
  memset(s, 0, sizeof(*s));
}

void **eddy_ir_arena_grow_ptrs(eddy_arena_t *a, void **old, uint32_t len,
                               uint32_t *cap, uint32_t need) {
  if (need <= *cap)
    return old;
  uint32_t ncap = *cap ? *cap : 4;
  while (ncap < need)
    ncap = ncap > UINT32_MAX / 2 ? need : ncap * 2;
  void **p = eddy_arena_alloc(a, (size_t)ncap * sizeof(void *));
  if (len)
    memcpy(p, old, (size_t)len * sizeof(void *));
  *cap = ncap;
  return p;
}

/* ---- Context -------------------------------------------------------------- */

eddy_ctx_t *eddy_ir_ctx_create(void) {
  eddy_ctx_t *ctx = calloc(1, sizeof(*ctx));
  if (!ctx)
    return NULL;
  ctx->arena = eddy_arena_create();
  if (!ctx->arena) {
    free(ctx);
    return NULL;
  }
  eddy_ptrmap_init(&ctx->op_map);
  eddy_ir_builtin_register(ctx);
  return ctx;
}

void eddy_ir_ctx_destroy(eddy_ctx_t *ctx) {
  if (!ctx)
    return;
  if (ctx->pass_state_destroy)
    ctx->pass_state_destroy(ctx->pass_state);
  /* newest first: a later extension may refer to an earlier one */
  for (size_t i = ctx->num_exts; i-- > 0;)
    if (ctx->exts[i].dtor)
      ctx->exts[i].dtor(ctx->exts[i].value);
  free(ctx->exts);
  eddy_intern_destroy(&ctx->idents);
  eddy_intern_destroy(&ctx->locs);
  eddy_intern_destroy(&ctx->types);
  eddy_intern_destroy(&ctx->attrs);
  eddy_ptrmap_destroy(&ctx->op_map);
  free(ctx->dialects);
  free(ctx->defs);
  eddy_arena_destroy(ctx->arena);
  free(ctx);
}

eddy_arena_t *eddy_ir_ctx_arena(eddy_ctx_t *ctx) { return ctx->arena; }

void *eddy_ir_ctx_get_ext(const eddy_ctx_t *ctx, const char *key) {
  for (size_t i = 0; i < ctx->num_exts; i++)
    if (strcmp(ctx->exts[i].key, key) == 0)
      return ctx->exts[i].value;
  return NULL;
}

void eddy_ir_ctx_set_ext(eddy_ctx_t *ctx, const char *key, void *value,
                         void (*dtor)(void *value)) {
  for (size_t i = 0; i < ctx->num_exts; i++) {
    if (strcmp(ctx->exts[i].key, key) != 0)
      continue;
    if (ctx->exts[i].dtor && ctx->exts[i].value != value)
      ctx->exts[i].dtor(ctx->exts[i].value);
    ctx->exts[i].value = value;
    ctx->exts[i].dtor = dtor;
    return;
  }
  if (ctx->num_exts == ctx->cap_exts) {
    size_t cap = ctx->cap_exts ? ctx->cap_exts * 2 : 4;
    struct eddy_ctx_ext *p = realloc(ctx->exts, cap * sizeof(*p));
    if (!p)
      eddy_intern_oom();
    ctx->exts = p;
    ctx->cap_exts = cap;
  }
  ctx->exts[ctx->num_exts].key = key;
  ctx->exts[ctx->num_exts].value = value;
  ctx->exts[ctx->num_exts].dtor = dtor;
  ctx->num_exts++;
}

/* ---- Identifiers ---------------------------------------------------------- */

typedef struct eddy_ident_key {
  const char *s;
  size_t len;
} eddy_ident_key_t;

static bool eddy_ident_eq(const void *item, const void *key) {
  const eddy_ident_t *id = item;
  const eddy_ident_key_t *k = key;
  return id->len == k->len && memcmp(id->str, k->s, k->len) == 0;
}

const eddy_ident_t *eddy_ir_ident_get(eddy_ctx_t *ctx, const char *s,
                                      size_t len) {
  uint64_t h = eddy_hash_bytes(s, len, 0x1d);
  eddy_ident_key_t key = {s, len};
  eddy_ident_t *id = eddy_intern_find(&ctx->idents, h, eddy_ident_eq, &key);
  if (id)
    return id;
  id = eddy_arena_alloc(ctx->arena, sizeof(*id));
  id->str = eddy_arena_strndup(ctx->arena, s, len);
  id->len = len;
  id->hash = h;
  eddy_intern_add(&ctx->idents, h, id);
  return id;
}

const eddy_ident_t *eddy_ir_ident_cstr(eddy_ctx_t *ctx, const char *s) {
  return eddy_ir_ident_get(ctx, s, strlen(s));
}

/* ---- Locations ------------------------------------------------------------ */

static bool eddy_loc_eq(const void *item, const void *key) {
  const eddy_loc_t *a = item, *b = key;
  return a->file == b->file && a->line == b->line && a->col == b->col;
}

static const eddy_loc_t *eddy_loc_intern(eddy_ctx_t *ctx,
                                         const eddy_ident_t *file,
                                         uint32_t line, uint32_t col) {
  eddy_loc_t key = {file, line, col};
  uint64_t h = eddy_hash_combine(file->hash, ((uint64_t)line << 32) | col);
  eddy_loc_t *loc = eddy_intern_find(&ctx->locs, h, eddy_loc_eq, &key);
  if (loc)
    return loc;
  loc = eddy_arena_alloc(ctx->arena, sizeof(*loc));
  *loc = key;
  eddy_intern_add(&ctx->locs, h, loc);
  return loc;
}

const eddy_loc_t *eddy_ir_loc_file(eddy_ctx_t *ctx, const char *file,
                                   uint32_t line, uint32_t col) {
  assert(line >= 1 && "file locations have a 1-based line");
  return eddy_loc_intern(ctx, eddy_ir_ident_cstr(ctx, file), line, col);
}

const eddy_loc_t *eddy_ir_loc_name(eddy_ctx_t *ctx, const char *name) {
  return eddy_loc_intern(ctx, eddy_ir_ident_cstr(ctx, name), 0, 0);
}

void eddy_ir_loc_format(const eddy_loc_t *loc, eddy_buf_t *out) {
  if (!loc)
    eddy_buf_puts(out, "<unknown>");
  else if (loc->line == 0)
    eddy_buf_printf(out, "node '%s'", loc->file->str);
  else
    eddy_buf_printf(out, "%s:%u:%u", loc->file->str, (unsigned)loc->line,
                    (unsigned)loc->col);
}

/* ---- Dialects and op lookup ----------------------------------------------- */

static void eddy_ctx_push_def(eddy_ctx_t *ctx, const eddy_op_def_t *def) {
  if (ctx->num_defs == ctx->cap_defs) {
    size_t cap = ctx->cap_defs ? ctx->cap_defs * 2 : 64;
    const eddy_op_def_t **d = realloc((void *)ctx->defs, cap * sizeof(*d));
    if (!d)
      eddy_intern_oom();
    ctx->defs = d;
    ctx->cap_defs = cap;
  }
  ctx->defs[ctx->num_defs++] = def;
}

void eddy_ir_ctx_register_dialect(eddy_ctx_t *ctx, const eddy_dialect_t *d) {
  for (size_t i = 0; i < ctx->num_dialects; i++)
    if (ctx->dialects[i] == d)
      return;
  if (ctx->num_dialects == ctx->cap_dialects) {
    size_t cap = ctx->cap_dialects ? ctx->cap_dialects * 2 : 8;
    const eddy_dialect_t **p =
        realloc((void *)ctx->dialects, cap * sizeof(*p));
    if (!p)
      eddy_intern_oom();
    ctx->dialects = p;
    ctx->cap_dialects = cap;
  }
  ctx->dialects[ctx->num_dialects++] = d;
  /* The tables are const (often in read-only memory), so `dialect` is set
     on an arena copy of each definition; ops point at the copies. */
  for (size_t i = 0; i < d->num_ops; i++) {
    eddy_op_def_t *copy = eddy_arena_dup(ctx->arena, &d->ops[i],
                                         sizeof(eddy_op_def_t));
    copy->dialect = d;
    const eddy_ident_t *name = eddy_ir_ident_cstr(ctx, copy->name);
    assert(!eddy_ptrmap_has(&ctx->op_map, name) && "op registered twice");
    eddy_ptrmap_put(&ctx->op_map, name, copy);
    eddy_ctx_push_def(ctx, copy);
  }
}

/// Permissive definition for an op of a dialect that allows unknown ops:
/// any operands, results and regions, no attribute list, no checks.
static const eddy_op_def_t *eddy_ctx_permissive_def(eddy_ctx_t *ctx,
                                                    const eddy_ident_t *name,
                                                    const eddy_dialect_t *d) {
  eddy_op_def_t *def = eddy_arena_alloc(ctx->arena, sizeof(*def));
  def->name = name->str;
  def->num_operands = EDDY_VARIADIC;
  def->min_operands = 0;
  def->num_results = EDDY_VARIADIC;
  def->num_regions = EDDY_VARIADIC;
  def->traits = 0;
  def->attrs = NULL;
  def->dialect = d;
  eddy_ptrmap_put(&ctx->op_map, name, def);
  return def;
}

const eddy_op_def_t *eddy_ir_ctx_lookup_op(eddy_ctx_t *ctx, const char *name,
                                           size_t len) {
  const eddy_ident_t *id = eddy_ir_ident_get(ctx, name, len);
  const eddy_op_def_t *def = eddy_ptrmap_get(&ctx->op_map, id);
  if (def)
    return def;
  const char *dot = memchr(name, '.', len);
  if (!dot || dot == name || dot + 1 == name + len)
    return NULL;
  size_t dlen = (size_t)(dot - name);
  for (size_t i = 0; i < ctx->num_dialects; i++) {
    const eddy_dialect_t *d = ctx->dialects[i];
    if (d->allow_unknown_ops && strlen(d->name) == dlen &&
        memcmp(d->name, name, dlen) == 0)
      return eddy_ctx_permissive_def(ctx, id, d);
  }
  return NULL;
}

void eddy_ir_ctx_each_op_def(eddy_ctx_t *ctx,
                             void (*fn)(const eddy_op_def_t *def, void *user),
                             void *user) {
  for (size_t i = 0; i < ctx->num_defs; i++)
    fn(ctx->defs[i], user);
}

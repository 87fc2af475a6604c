/// The pass registry (kept in the context's pass_state slot) and the pass
/// manager: pipelines, verification between passes, IR dumps, timing and
/// statistics.
#define _POSIX_C_SOURCE 200809L

#include "ir/pass.h"

#include "ir/ir_internal.h"

#include <assert.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/// ---- Registry -------------------------------------------------------------

typedef struct registry_entry {
  const eddy_pass_t *pass;
  struct registry_entry *next;
} registry_entry_t;

/// Kept in the context's pass_state slot (ir_internal.h). It lives in the
/// context arena, so it needs no destructor.
typedef struct pass_registry {
  registry_entry_t *first, *last;
} pass_registry_t;

static pass_registry_t *registry_get(eddy_ctx_t *ctx, bool create) {
  pass_registry_t *r = ctx->pass_state;
  if (!r && create) {
    r = eddy_arena_alloc(ctx->arena, sizeof *r);
    ctx->pass_state = r;
    ctx->pass_state_destroy = NULL;
  }
  return r;
}

void eddy_ir_pass_register(eddy_ctx_t *ctx, const eddy_pass_t *pass) {
  assert(pass && pass->name && pass->run);
  pass_registry_t *r = registry_get(ctx, true);
  for (registry_entry_t *e = r->first; e; e = e->next)
    if (e->pass == pass || strcmp(e->pass->name, pass->name) == 0)
      return;
  registry_entry_t *e = eddy_arena_alloc(ctx->arena, sizeof *e);
  e->pass = pass;
  if (r->last)
    r->last->next = e;
  else
    r->first = e;
  r->last = e;
}

const eddy_pass_t *eddy_ir_pass_lookup(eddy_ctx_t *ctx, const char *name,
                                       size_t len) {
  pass_registry_t *r = registry_get(ctx, false);
  if (!r)
    return NULL;
  for (registry_entry_t *e = r->first; e; e = e->next)
    if (strlen(e->pass->name) == len && memcmp(e->pass->name, name, len) == 0)
      return e->pass;
  return NULL;
}

void eddy_ir_pass_each(eddy_ctx_t *ctx,
                       void (*fn)(const eddy_pass_t *p, void *user),
                       void *user) {
  pass_registry_t *r = registry_get(ctx, false);
  if (!r)
    return;
  for (registry_entry_t *e = r->first; e; e = e->next)
    fn(e->pass, user);
}

/// ---- Pass manager -----------------------------------------------------------

typedef struct pm_stat {
  char *key; ///< "pass.stat", malloc'ed
  int64_t value;
} pm_stat_t;

struct eddy_pass_manager {
  eddy_ctx_t *ctx;
  eddy_pm_opts_t opts;
  const eddy_pass_t **passes;
  double *wall_ms; ///< per pipeline entry, of the last run
  size_t num_passes, cap_passes;
  pm_stat_t *stats; ///< in order of first report
  size_t num_stats, cap_stats;
};

struct eddy_pass_ctx {
  eddy_pass_manager_t *pm;
  const eddy_pass_t *pass;
  eddy_arena_t *scratch;
  bool changed;
};

void eddy_ir_pm_opts_default(eddy_pm_opts_t *o) {
  memset(o, 0, sizeof *o);
#ifdef EDDY_DEBUG
  o->verify_each = true;
#endif
}

eddy_pass_manager_t *eddy_ir_pm_create(eddy_ctx_t *ctx,
                                       const eddy_pm_opts_t *opts) {
  eddy_pass_manager_t *pm = calloc(1, sizeof *pm);
  if (!pm)
    return NULL;
  pm->ctx = ctx;
  if (opts)
    pm->opts = *opts;
  else
    eddy_ir_pm_opts_default(&pm->opts);
  return pm;
}

void eddy_ir_pm_destroy(eddy_pass_manager_t *pm) {
  if (!pm)
    return;
  for (size_t i = 0; i < pm->num_stats; i++)
    free(pm->stats[i].key);
  free(pm->stats);
  free(pm->passes);
  free(pm->wall_ms);
  free(pm);
}

/// Grows the pass arrays to hold n entries; false on out of memory.
static bool pm_reserve(eddy_pass_manager_t *pm, size_t n) {
  if (n <= pm->cap_passes)
    return true;
  size_t cap = pm->cap_passes ? pm->cap_passes : 8;
  while (cap < n)
    cap *= 2;
  const eddy_pass_t **p = realloc(pm->passes, cap * sizeof *p);
  if (!p)
    return false;
  pm->passes = p;
  double *w = realloc(pm->wall_ms, cap * sizeof *w);
  if (!w)
    return false;
  pm->wall_ms = w;
  pm->cap_passes = cap;
  return true;
}

void eddy_ir_pm_add(eddy_pass_manager_t *pm, const eddy_pass_t *pass) {
  assert(pass && pass->run);
  if (!pm_reserve(pm, pm->num_passes + 1))
    abort(); // out of memory, like the arena
  pm->wall_ms[pm->num_passes] = 0;
  pm->passes[pm->num_passes++] = pass;
}

static void append_known_pass(const eddy_pass_t *p, void *user) {
  eddy_buf_t *b = user;
  if (b->len)
    eddy_buf_puts(b, ", ");
  eddy_buf_puts(b, p->name);
}

static eddy_status_t unknown_pass(eddy_ctx_t *ctx, const char *name,
                                  size_t len) {
  eddy_buf_t known;
  eddy_buf_init(&known);
  eddy_ir_pass_each(ctx, append_known_pass, &known);
  eddy_status_t st = eddy_status_create(
      EDDY_ERR_INVALID_ARGUMENT, "unknown pass '%.*s' (known: %s)", (int)len,
      name, known.len ? known.data : "none");
  eddy_buf_destroy(&known);
  return st;
}

eddy_status_t eddy_ir_pm_add_pipeline(eddy_pass_manager_t *pm,
                                      const char *pipeline) {
  // Resolve every name before adding any, so a bad pipeline adds nothing.
  size_t first = pm->num_passes;
  size_t added = 0;
  const char *p = pipeline;
  bool any_text = false;
  for (const char *q = pipeline; *q; q++)
    if (!isspace((unsigned char)*q))
      any_text = true;
  if (!any_text)
    return NULL; // an empty pipeline runs nothing
  for (;;) {
    while (isspace((unsigned char)*p))
      p++;
    const char *start = p;
    while (*p && *p != ',')
      p++;
    const char *end = p;
    while (end > start && isspace((unsigned char)end[-1]))
      end--;
    size_t len = (size_t)(end - start);
    eddy_status_t st = NULL;
    const eddy_pass_t *pass = NULL;
    if (len == 0)
      st = eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                              "empty pass name in pipeline '%s'", pipeline);
    else if (!(pass = eddy_ir_pass_lookup(pm->ctx, start, len)))
      st = unknown_pass(pm->ctx, start, len);
    else if (!pm_reserve(pm, first + added + 1))
      st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
    if (st)
      return st; // num_passes was not advanced: nothing was added
    pm->wall_ms[first + added] = 0;
    pm->passes[first + added++] = pass;
    if (*p == '\0')
      break;
    p++; // the comma
  }
  pm->num_passes = first + added;
  return NULL;
}

eddy_arena_t *eddy_ir_pass_scratch(eddy_pass_ctx_t *pc) { return pc->scratch; }

eddy_ctx_t *eddy_ir_pass_ctx(eddy_pass_ctx_t *pc) { return pc->pm->ctx; }

void eddy_ir_pass_mark_changed(eddy_pass_ctx_t *pc) { pc->changed = true; }

void eddy_ir_pass_stat_add(eddy_pass_ctx_t *pc, const char *stat,
                           int64_t delta) {
  eddy_pass_manager_t *pm = pc->pm;
  size_t plen = strlen(pc->pass->name), slen = strlen(stat);
  for (size_t i = 0; i < pm->num_stats; i++) {
    const char *k = pm->stats[i].key;
    if (strncmp(k, pc->pass->name, plen) == 0 && k[plen] == '.' &&
        strcmp(k + plen + 1, stat) == 0) {
      pm->stats[i].value += delta;
      return;
    }
  }
  if (pm->num_stats == pm->cap_stats) {
    size_t cap = pm->cap_stats ? pm->cap_stats * 2 : 16;
    pm_stat_t *s = realloc(pm->stats, cap * sizeof *s);
    if (!s)
      return; // statistics are best effort
    pm->stats = s;
    pm->cap_stats = cap;
  }
  char *key = malloc(plen + slen + 2);
  if (!key)
    return;
  memcpy(key, pc->pass->name, plen);
  key[plen] = '.';
  memcpy(key + plen + 1, stat, slen + 1);
  pm->stats[pm->num_stats++] = (pm_stat_t){key, delta};
}

/// Copies st's notes into dst, one note per line.
static void copy_notes(eddy_status_t dst, eddy_status_t src) {
  const char *n = eddy_status_notes(src);
  while (n && *n) {
    const char *eol = strchr(n, '\n');
    size_t len = eol ? (size_t)(eol - n) : strlen(n);
    eddy_status_append_note(dst, "%.*s", (int)len, n);
    n += len + (eol ? 1 : 0);
  }
}

/// A new status "PREFIX: <message of st>" with st's code, location and
/// notes; destroys st.
static eddy_status_t wrap_status(eddy_status_t st, const char *prefix) {
  const char *loc = eddy_status_location(st);
  eddy_status_t w =
      loc ? eddy_status_create_at(eddy_status_code(st), loc, "%s: %s", prefix,
                                  eddy_status_message(st))
          : eddy_status_create(eddy_status_code(st), "%s: %s", prefix,
                               eddy_status_message(st));
  copy_notes(w, st);
  eddy_status_destroy(st);
  return w;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static FILE *pm_dump(const eddy_pass_manager_t *pm) {
  return pm->opts.dump ? pm->opts.dump : stderr;
}

static void dump_module(eddy_pass_manager_t *pm, const char *pass_name,
                        const eddy_module_t *m) {
  eddy_buf_t b;
  eddy_buf_init(&b);
  eddy_buf_printf(&b, "// -----// IR after %s //----- //\n", pass_name);
  eddy_print_opts_t po = {.locations = pm->opts.print_locations};
  eddy_ir_module_print(m, &po, &b);
  if (b.len && b.data[b.len - 1] != '\n')
    eddy_buf_putc(&b, '\n'); // the next dump or report starts a new line
  FILE *f = pm_dump(pm);
  fwrite(b.data, 1, b.len, f);
  fflush(f);
  eddy_buf_destroy(&b);
}

static void report_timing(eddy_pass_manager_t *pm, size_t ran) {
  FILE *f = pm_dump(pm);
  double total = 0;
  for (size_t i = 0; i < ran; i++)
    total += pm->wall_ms[i];
  fprintf(f, "===-- pass timing report --===\n");
  fprintf(f, "%12s %8s  %s\n", "wall (ms)", "%", "pass");
  for (size_t i = 0; i < ran; i++)
    fprintf(f, "%12.3f %7.1f%%  %s\n", pm->wall_ms[i],
            total > 0 ? 100.0 * pm->wall_ms[i] / total : 0.0,
            pm->passes[i]->name);
  fprintf(f, "%12.3f %7.1f%%  %s\n", total, 100.0, "total");
  fflush(f);
}

static void report_stats(eddy_pass_manager_t *pm) {
  FILE *f = pm_dump(pm);
  for (size_t i = 0; i < pm->num_stats; i++)
    fprintf(f, "%s = %lld\n", pm->stats[i].key,
            (long long)pm->stats[i].value);
  fflush(f);
}

eddy_status_t eddy_ir_pm_run(eddy_pass_manager_t *pm, eddy_module_t *m) {
  eddy_arena_t *scratch = eddy_arena_create();
  if (!scratch)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  eddy_status_t st = NULL;
  size_t ran = 0;
  for (size_t i = 0; i < pm->num_passes && !st; i++) {
    const eddy_pass_t *pass = pm->passes[i];
    eddy_pass_ctx_t pc = {.pm = pm, .pass = pass, .scratch = scratch};
    double t0 = now_ms();
    st = pass->run(&pc, m);
    pm->wall_ms[i] = now_ms() - t0;
    ran = i + 1;
    eddy_arena_reset(scratch);
    if (st) {
      char prefix[160];
      snprintf(prefix, sizeof prefix, "pass '%s'", pass->name);
      st = wrap_status(st, prefix);
      break;
    }
    if (pm->opts.verify_each) {
      st = eddy_ir_verify_module(m);
      if (st) {
        char prefix[192];
        snprintf(prefix, sizeof prefix,
                 "IR after pass '%s' fails verification", pass->name);
        st = wrap_status(st, prefix);
      }
    }
    // Dump even broken IR: it is what one wants to see when debugging.
    if (pm->opts.print_after_all ||
        (pm->opts.print_after && strcmp(pm->opts.print_after, pass->name) == 0))
      dump_module(pm, pass->name, m);
  }
  eddy_arena_destroy(scratch);
  if (pm->opts.time_passes)
    report_timing(pm, ran);
  if (pm->opts.stats)
    report_stats(pm);
  return st;
}

eddy_status_t eddy_ir_pm_run_pipeline(eddy_ctx_t *ctx, eddy_module_t *m,
                                      const char *pipeline,
                                      const eddy_pm_opts_t *opts) {
  eddy_pass_manager_t *pm = eddy_ir_pm_create(ctx, opts);
  if (!pm)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  eddy_status_t st = eddy_ir_pm_add_pipeline(pm, pipeline);
  if (!st)
    st = eddy_ir_pm_run(pm, m);
  if (!st)
    st = eddy_ir_verify_module(m);
  eddy_ir_pm_destroy(pm);
  return st;
}

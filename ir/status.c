/// eddy_status_t: an owned error with a code, a message, a location and notes.
#include "ir/status.h"

#include "ir/support.h"

#include <stdlib.h>
#include <string.h>

struct eddy_status_s {
  eddy_status_code_t code;
  char *message;
  char *loc; ///< NULL when none
  eddy_buf_t notes;
  bool is_static; ///< the fallback out-of-memory status; never freed
};

/// Returned when allocating a status fails: we must never return NULL for
/// an error, and we cannot allocate.
static struct eddy_status_s eddy_status_oom_ = {
    .code = EDDY_ERR_RESOURCE,
    .message = "out of memory",
    .loc = NULL,
    .notes = {NULL, 0, 0},
    .is_static = true,
};

static char *eddy_status_vformat(const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0)
    n = 0;
  char *s = malloc((size_t)n + 1);
  if (!s)
    return NULL;
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  return s;
}

static eddy_status_t eddy_status_make(eddy_status_code_t code,
                                      const char *loc, const char *fmt,
                                      va_list ap) {
  if (code == EDDY_OK)
    code = EDDY_ERR_INTERNAL; /* an error status must carry an error code */
  eddy_status_t st = calloc(1, sizeof(*st));
  if (!st)
    return &eddy_status_oom_;
  st->code = code;
  st->message = eddy_status_vformat(fmt, ap);
  if (loc) {
    size_t n = strlen(loc);
    st->loc = malloc(n + 1);
    if (st->loc)
      memcpy(st->loc, loc, n + 1);
  }
  if (!st->message || (loc && !st->loc)) {
    free(st->message);
    free(st->loc);
    free(st);
    return &eddy_status_oom_;
  }
  eddy_buf_init(&st->notes);
  return st;
}

eddy_status_t eddy_status_createv(eddy_status_code_t code, const char *fmt,
                                  va_list ap) {
  return eddy_status_make(code, NULL, fmt, ap);
}

eddy_status_t eddy_status_create(eddy_status_code_t code, const char *fmt,
                                 ...) {
  va_list ap;
  va_start(ap, fmt);
  eddy_status_t st = eddy_status_make(code, NULL, fmt, ap);
  va_end(ap);
  return st;
}

eddy_status_t eddy_status_create_at(eddy_status_code_t code, const char *loc,
                                    const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  eddy_status_t st = eddy_status_make(code, loc, fmt, ap);
  va_end(ap);
  return st;
}

void eddy_status_append_note(eddy_status_t st, const char *fmt, ...) {
  if (!st || st->is_static)
    return;
  va_list ap;
  va_start(ap, fmt);
  char *s = eddy_status_vformat(fmt, ap);
  va_end(ap);
  if (!s)
    return;
  eddy_buf_puts(&st->notes, s);
  size_t n = strlen(s);
  if (n == 0 || s[n - 1] != '\n')
    eddy_buf_putc(&st->notes, '\n');
  free(s);
}

void eddy_status_destroy(eddy_status_t st) {
  if (!st || st->is_static)
    return;
  free(st->message);
  free(st->loc);
  eddy_buf_destroy(&st->notes);
  free(st);
}

eddy_status_code_t eddy_status_code(eddy_status_t st) {
  return st ? st->code : EDDY_OK;
}

const char *eddy_status_message(eddy_status_t st) {
  return st ? st->message : "";
}

const char *eddy_status_location(eddy_status_t st) {
  return st ? st->loc : NULL;
}

const char *eddy_status_notes(eddy_status_t st) {
  return st && st->notes.data ? st->notes.data : "";
}

const char *eddy_status_code_name(eddy_status_code_t code) {
  switch (code) {
  case EDDY_OK:
    return "ok";
  case EDDY_ERR_INVALID_ARGUMENT:
    return "invalid argument";
  case EDDY_ERR_PARSE:
    return "parse error";
  case EDDY_ERR_VERIFY:
    return "verification failed";
  case EDDY_ERR_UNSUPPORTED:
    return "unsupported";
  case EDDY_ERR_NOT_FOUND:
    return "not found";
  case EDDY_ERR_IO:
    return "i/o error";
  case EDDY_ERR_RESOURCE:
    return "resource exhausted";
  case EDDY_ERR_INTERNAL:
    return "internal error";
  case EDDY_ERR_CANCELLED:
    return "cancelled";
  }
  return "unknown";
}

void eddy_status_print(eddy_status_t st, FILE *f) {
  if (!st)
    return;
  if (st->loc)
    fprintf(f, "%s: error: %s\n", st->loc, st->message);
  else
    fprintf(f, "error: %s\n", st->message);
  fputs(eddy_status_notes(st), f);
}

/// Diagnostics and token helpers of the textual IR parser (shared by
/// ir/parse.c and ir/parse_attr.c).
#include "ir/parse_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/// The source line shown under a diagnostic is cut to this many bytes
/// around the column.
#define EDDY_PARSE_NOTE_WIDTH 160

eddy_status_t eddy_parse_error(eddy_parser_t *p, eddy_srcpos_t at,
                               const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *msg = malloc(n > 0 ? (size_t)n + 1 : 1);
  if (!msg)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  va_start(ap, fmt);
  vsnprintf(msg, n > 0 ? (size_t)n + 1 : 1, fmt, ap);
  va_end(ap);
  eddy_buf_t loc;
  eddy_buf_init(&loc);
  eddy_buf_printf(&loc, "%s:%u:%u", p->filename, (unsigned)at.line,
                  (unsigned)at.col);
  eddy_status_t st = eddy_status_create_at(EDDY_ERR_PARSE, loc.data, "%s", msg);
  free(msg);
  eddy_buf_destroy(&loc);

  /* The source line (a window of it when long) and a caret under the
     column; tabs are kept so that the caret lines up. */
  const char *src = p->lx.src;
  size_t line_start = at.off - (at.col - 1), line_end = at.off;
  while (line_end < p->lx.len && src[line_end] != '\n')
    line_end++;
  while (line_end > at.off && src[line_end - 1] == '\r')
    line_end--;
  size_t from = line_start, to = line_end;
  if (to - from > EDDY_PARSE_NOTE_WIDTH) {
    if (at.off > from + EDDY_PARSE_NOTE_WIDTH / 2)
      from = at.off - EDDY_PARSE_NOTE_WIDTH / 2;
    if (to > from + EDDY_PARSE_NOTE_WIDTH)
      to = from + EDDY_PARSE_NOTE_WIDTH;
  }
  eddy_buf_t line, caret;
  eddy_buf_init(&line);
  eddy_buf_init(&caret);
  eddy_buf_append(&line, "", 0);
  for (size_t i = from; i < to; i++) {
    unsigned char c = (unsigned char)src[i];
    eddy_buf_putc(&line, (c < 0x20 && c != '\t') || c == 0x7F ? '?' : (char)c);
  }
  for (size_t i = from; i < at.off; i++) {
    unsigned char c = (unsigned char)src[i];
    if ((c & 0xC0) == 0x80)
      continue; /* a UTF-8 continuation byte takes no column on screen */
    eddy_buf_putc(&caret, c == '\t' ? '\t' : ' ');
  }
  eddy_buf_putc(&caret, '^');
  eddy_status_append_note(st, "%s", line.data);
  eddy_status_append_note(st, "%s", caret.data);
  eddy_buf_destroy(&line);
  eddy_buf_destroy(&caret);
  return st;
}

void eddy_parse_describe(const char *text, size_t len, eddy_buf_t *out) {
  enum { MAX = 40 };
  eddy_buf_putc(out, '\'');
  for (size_t i = 0; i < len && i < MAX; i++) {
    unsigned char c = (unsigned char)text[i];
    eddy_buf_putc(out, c < 0x20 || c == 0x7F ? '?' : (char)c);
  }
  if (len > MAX)
    eddy_buf_puts(out, "...");
  eddy_buf_putc(out, '\'');
}

eddy_status_t eddy_parse_expected(eddy_parser_t *p, const char *what) {
  if (p->tok.kind == EDDY_TOK_ERROR)
    return eddy_parse_error(p, p->lx.err_pos, "%s", p->lx.err_msg);
  if (p->tok.kind == EDDY_TOK_EOF)
    return eddy_parse_error(p, p->tok.pos, "expected %s, found end of file",
                            what);
  eddy_buf_t d;
  eddy_buf_init(&d);
  eddy_parse_describe(p->tok.text, p->tok.len, &d);
  eddy_status_t st =
      eddy_parse_error(p, p->tok.pos, "expected %s, found %s", what, d.data);
  eddy_buf_destroy(&d);
  return st;
}

void eddy_parse_advance(eddy_parser_t *p) { p->tok = eddy_lex_next(&p->lx); }

eddy_status_t eddy_parse_expect(eddy_parser_t *p, eddy_tok_kind_t kind,
                                const char *what) {
  if (p->tok.kind != kind)
    return eddy_parse_expected(p, what);
  eddy_parse_advance(p);
  return NULL;
}

bool eddy_parse_is_word(const eddy_parser_t *p, const char *word) {
  size_t n = strlen(word);
  return p->tok.kind == EDDY_TOK_BARE && p->tok.len == n &&
         memcmp(p->tok.text, word, n) == 0;
}

eddy_status_t eddy_parse_enter(eddy_parser_t *p) {
  if (p->depth >= EDDY_PARSE_MAX_DEPTH)
    return eddy_parse_error(p, p->tok.pos,
                            "nesting is too deep (the limit is %d levels)",
                            EDDY_PARSE_MAX_DEPTH);
  p->depth++;
  return NULL;
}

void eddy_parse_leave(eddy_parser_t *p) { p->depth--; }

void *eddy_parse_grow(eddy_parser_t *p, void *old, size_t elem, size_t len,
                      size_t *cap) {
  if (len < *cap)
    return old;
  size_t ncap = *cap ? *cap * 2 : 4;
  /* len is bounded by the input size, so this cannot overflow in practice;
     the check keeps that an invariant rather than a hope. */
  if (ncap > SIZE_MAX / elem) {
    fprintf(stderr, "eddy: parser array too large\n");
    abort();
  }
  void *p2 = eddy_arena_alloc(p->scratch, ncap * elem);
  if (len)
    memcpy(p2, old, len * elem);
  *cap = ncap;
  return p2;
}

char *eddy_parse_string_value(eddy_parser_t *p, const eddy_tok_t *tok,
                              size_t skip, size_t *out_len) {
  const char *text = tok->text + skip;
  size_t len = tok->len - skip;
  if (len == 0 || text[0] != '"') {
    *out_len = len;
    return eddy_arena_strndup(p->scratch, text, len);
  }
  eddy_buf_t b;
  eddy_buf_init(&b);
  eddy_lex_decode_string(text, len, &b);
  char *s = eddy_arena_strndup(p->scratch, b.data, b.len);
  *out_len = b.len;
  eddy_buf_destroy(&b);
  return s;
}


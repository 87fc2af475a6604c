/// The lexer of the textual IR, and the number and string conventions that
/// the printer and the parser share.
///
/// The lexer works on a byte range that may contain NUL bytes and need not
/// be NUL-terminated: every read is bounds-checked against the length.
#include "ir/lex.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void eddy_lex_init(eddy_lexer_t *lx, const char *src, size_t len) {
  memset(lx, 0, sizeof(*lx));
  lx->src = src;
  lx->len = len;
  lx->line = 1;
}

static bool eddy_lex_is_digit(char c) { return c >= '0' && c <= '9'; }

static bool eddy_lex_is_hex(char c) {
  return eddy_lex_is_digit(c) || (c >= 'a' && c <= 'f') ||
         (c >= 'A' && c <= 'F');
}

static bool eddy_lex_is_letter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool eddy_lex_is_bare_char(char c) {
  return eddy_lex_is_letter(c) || eddy_lex_is_digit(c) || c == '_' ||
         c == '$' || c == '.';
}

/// Characters of a value or block name after the sigil (MLIR's suffix-id).
static bool eddy_lex_is_suffix_char(char c) {
  return eddy_lex_is_bare_char(c) || c == '-';
}

bool eddy_lex_is_bare_ident(const char *s, size_t len) {
  if (len == 0 || !(eddy_lex_is_letter(s[0]) || s[0] == '_'))
    return false;
  for (size_t i = 1; i < len; i++)
    if (!eddy_lex_is_bare_char(s[i]))
      return false;
  return true;
}

eddy_srcpos_t eddy_lex_pos(const eddy_lexer_t *lx) {
  eddy_srcpos_t p = {lx->pos, lx->line, (uint32_t)(lx->pos - lx->line_start + 1)};
  return p;
}

void eddy_lex_reset(eddy_lexer_t *lx, eddy_srcpos_t pos) {
  lx->pos = pos.off;
  lx->line = pos.line;
  lx->line_start = pos.off - (pos.col - 1);
}

static int eddy_lex_peek(const eddy_lexer_t *lx, size_t ahead) {
  size_t i = lx->pos + ahead;
  return i < lx->len ? (unsigned char)lx->src[i] : -1;
}

void eddy_lex_skip_space(eddy_lexer_t *lx) {
  while (lx->pos < lx->len) {
    char c = lx->src[lx->pos];
    if (c == '\n') {
      lx->pos++;
      lx->line++;
      lx->line_start = lx->pos;
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      lx->pos++;
    } else if (c == '/' && eddy_lex_peek(lx, 1) == '/') {
      while (lx->pos < lx->len && lx->src[lx->pos] != '\n')
        lx->pos++;
    } else {
      break;
    }
  }
}

/// Makes an error token; `at` is the offset the message points at (on the
/// current line).
static eddy_tok_t eddy_lex_error(eddy_lexer_t *lx, eddy_tok_t tok, size_t at,
                                 const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static eddy_tok_t eddy_lex_error(eddy_lexer_t *lx, eddy_tok_t tok, size_t at,
                                 const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(lx->err_msg, sizeof(lx->err_msg), fmt, ap);
  va_end(ap);
  lx->err_pos.off = at;
  lx->err_pos.line = lx->line;
  lx->err_pos.col = (uint32_t)(at - lx->line_start + 1);
  tok.kind = EDDY_TOK_ERROR;
  tok.len = (at >= tok.pos.off ? at - tok.pos.off : 0);
  /* Resume after the offending byte so a caller that goes on cannot loop. */
  lx->pos = at < lx->len ? at + 1 : lx->len;
  return tok;
}

/// Describes byte c for a message: 'x' when printable, else '\XX'.
static void eddy_lex_describe_char(unsigned char c, char out[8]) {
  if (c >= 0x20 && c < 0x7F && c != '\'' && c != '\\')
    snprintf(out, 8, "'%c'", c);
  else
    snprintf(out, 8, "'\\%02X'", c);
}

static eddy_tok_t eddy_lex_string(eddy_lexer_t *lx, eddy_tok_t tok) {
  size_t i = lx->pos + 1; /* after the opening quote */
  while (i < lx->len) {
    char c = lx->src[i];
    if (c == '"') {
      lx->pos = i + 1;
      tok.len = lx->pos - tok.pos.off;
      return tok;
    }
    if (c == '\n' || c == '\r')
      break;
    if (c == '\\') {
      if (i + 1 >= lx->len)
        break;
      char e = lx->src[i + 1];
      if (e == '"' || e == '\\' || e == 'n' || e == 't') {
        i += 2;
        continue;
      }
      if (eddy_lex_is_hex(e) && i + 2 < lx->len &&
          eddy_lex_is_hex(lx->src[i + 2])) {
        i += 3;
        continue;
      }
      char d[8];
      eddy_lex_describe_char((unsigned char)e, d);
      return eddy_lex_error(lx, tok, i,
                            "invalid escape sequence in string: '\\' followed by %s",
                            d);
    }
    i++;
  }
  return eddy_lex_error(lx, tok, tok.pos.off, "unterminated string literal");
}

static eddy_tok_t eddy_lex_number(eddy_lexer_t *lx, eddy_tok_t tok) {
  size_t i = lx->pos;
  bool neg = lx->src[i] == '-';
  if (neg)
    i++;
  if (lx->src[i] == '0' && i + 1 < lx->len &&
      (lx->src[i + 1] == 'x' || lx->src[i + 1] == 'X')) {
    size_t start = i + 2, j = start;
    while (j < lx->len && eddy_lex_is_hex(lx->src[j]))
      j++;
    if (j == start)
      return eddy_lex_error(lx, tok, j, "expected hexadecimal digits after '0x'");
    if (neg)
      return eddy_lex_error(lx, tok, tok.pos.off,
                            "hexadecimal literals cannot be negative");
    lx->pos = j;
    tok.kind = EDDY_TOK_INT;
    tok.len = j - tok.pos.off;
    return tok;
  }
  while (i < lx->len && eddy_lex_is_digit(lx->src[i]))
    i++;
  tok.kind = EDDY_TOK_INT;
  if (i < lx->len && lx->src[i] == '.') {
    tok.kind = EDDY_TOK_FLOAT;
    i++;
    while (i < lx->len && eddy_lex_is_digit(lx->src[i]))
      i++;
    if (i < lx->len && (lx->src[i] == 'e' || lx->src[i] == 'E')) {
      size_t j = i + 1;
      if (j < lx->len && (lx->src[j] == '+' || lx->src[j] == '-'))
        j++;
      if (j < lx->len && eddy_lex_is_digit(lx->src[j])) {
        while (j < lx->len && eddy_lex_is_digit(lx->src[j]))
          j++;
        i = j;
      }
    }
  }
  lx->pos = i;
  tok.len = i - tok.pos.off;
  return tok;
}

/// A sigil (% ^ @ !) followed by a name.
static eddy_tok_t eddy_lex_sigil(eddy_lexer_t *lx, eddy_tok_t tok,
                                 eddy_tok_kind_t kind) {
  char sigil = lx->src[lx->pos];
  size_t i = lx->pos + 1;
  if (kind == EDDY_TOK_SYMBOL && i < lx->len && lx->src[i] == '"') {
    lx->pos = i;
    eddy_tok_t s = eddy_lex_string(lx, tok);
    if (s.kind == EDDY_TOK_ERROR)
      return s;
    tok.kind = kind;
    tok.len = lx->pos - tok.pos.off;
    return tok;
  }
  size_t start = i;
  if (kind == EDDY_TOK_BANG) {
    if (i < lx->len && (eddy_lex_is_letter(lx->src[i]) || lx->src[i] == '_'))
      while (i < lx->len && eddy_lex_is_bare_char(lx->src[i]))
        i++;
  } else if (kind == EDDY_TOK_SYMBOL) {
    if (i < lx->len && (eddy_lex_is_letter(lx->src[i]) || lx->src[i] == '_'))
      while (i < lx->len && eddy_lex_is_bare_char(lx->src[i]))
        i++;
  } else {
    while (i < lx->len && eddy_lex_is_suffix_char(lx->src[i]))
      i++;
  }
  if (i == start)
    return eddy_lex_error(lx, tok, i, "expected a name after '%c'", sigil);
  if (kind == EDDY_TOK_VALUE && i < lx->len && lx->src[i] == '#') {
    size_t j = i + 1;
    while (j < lx->len && eddy_lex_is_digit(lx->src[j]))
      j++;
    if (j == i + 1)
      return eddy_lex_error(lx, tok, j, "expected a result number after '#'");
    i = j;
  }
  lx->pos = i;
  tok.kind = kind;
  tok.len = i - tok.pos.off;
  return tok;
}

eddy_tok_t eddy_lex_next(eddy_lexer_t *lx) {
  eddy_lex_skip_space(lx);
  eddy_tok_t tok;
  tok.pos = eddy_lex_pos(lx);
  tok.text = lx->src + lx->pos;
  tok.len = 0;
  tok.kind = EDDY_TOK_EOF;
  if (lx->pos >= lx->len)
    return tok;
  char c = lx->src[lx->pos];
  eddy_tok_kind_t punct;
  switch (c) {
  case '(': punct = EDDY_TOK_LPAREN; goto one;
  case ')': punct = EDDY_TOK_RPAREN; goto one;
  case '{': punct = EDDY_TOK_LBRACE; goto one;
  case '}': punct = EDDY_TOK_RBRACE; goto one;
  case '[': punct = EDDY_TOK_LBRACKET; goto one;
  case ']': punct = EDDY_TOK_RBRACKET; goto one;
  case '<': punct = EDDY_TOK_LESS; goto one;
  case '>': punct = EDDY_TOK_GREATER; goto one;
  case ',': punct = EDDY_TOK_COMMA; goto one;
  case '=': punct = EDDY_TOK_EQUAL; goto one;
  case ':': punct = EDDY_TOK_COLON; goto one;
  case '"': {
    eddy_tok_t s = eddy_lex_string(lx, tok);
    if (s.kind != EDDY_TOK_ERROR)
      s.kind = EDDY_TOK_STRING;
    return s;
  }
  case '%': return eddy_lex_sigil(lx, tok, EDDY_TOK_VALUE);
  case '^': return eddy_lex_sigil(lx, tok, EDDY_TOK_BLOCK);
  case '@': return eddy_lex_sigil(lx, tok, EDDY_TOK_SYMBOL);
  case '!': return eddy_lex_sigil(lx, tok, EDDY_TOK_BANG);
  case '-':
    if (eddy_lex_peek(lx, 1) == '>') {
      lx->pos += 2;
      tok.kind = EDDY_TOK_ARROW;
      tok.len = 2;
      return tok;
    }
    if (lx->pos + 1 < lx->len && eddy_lex_is_digit(lx->src[lx->pos + 1]))
      return eddy_lex_number(lx, tok);
    break;
  default:
    if (eddy_lex_is_digit(c))
      return eddy_lex_number(lx, tok);
    if (eddy_lex_is_letter(c) || c == '_') {
      size_t i = lx->pos + 1;
      while (i < lx->len && eddy_lex_is_bare_char(lx->src[i]))
        i++;
      tok.kind = EDDY_TOK_BARE;
      tok.len = i - lx->pos;
      lx->pos = i;
      return tok;
    }
    break;
  }
  char d[8];
  eddy_lex_describe_char((unsigned char)c, d);
  return eddy_lex_error(lx, tok, lx->pos, "unexpected character %s", d);
one:
  lx->pos++;
  tok.kind = punct;
  tok.len = 1;
  return tok;
}

static int eddy_lex_hex_value(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  return c - 'A' + 10;
}

void eddy_lex_decode_string(const char *text, size_t len, eddy_buf_t *out) {
  /* text includes both quotes and lexed without error. */
  size_t end = len - 1;
  for (size_t i = 1; i < end; i++) {
    char c = text[i];
    if (c != '\\') {
      eddy_buf_putc(out, c);
      continue;
    }
    char e = text[++i];
    switch (e) {
    case '"': eddy_buf_putc(out, '"'); break;
    case '\\': eddy_buf_putc(out, '\\'); break;
    case 'n': eddy_buf_putc(out, '\n'); break;
    case 't': eddy_buf_putc(out, '\t'); break;
    default:
      eddy_buf_putc(out, (char)(eddy_lex_hex_value(e) * 16 +
                                eddy_lex_hex_value(text[i + 1])));
      i++;
      break;
    }
  }
  if (!out->data)
    eddy_buf_append(out, "", 0); /* an empty string still gets storage */
}

/// ---- Numbers and strings shared by printer and parser ----------------------

unsigned eddy_text_float_width(eddy_dtype_t dt) {
  switch (dt) {
  case EDDY_DT_F64: return 64;
  case EDDY_DT_F32: return 32;
  default: return 16;
  }
}

double eddy_text_round_to_dtype(double v, eddy_dtype_t dt) {
  switch (dt) {
  case EDDY_DT_F32: return (double)(float)v;
  case EDDY_DT_F16: return (double)eddy_f16_to_f32(eddy_f32_to_f16((float)v));
  case EDDY_DT_BF16:
    return (double)eddy_bf16_to_f32(eddy_f32_to_bf16((float)v));
  default: return v;
  }
}

uint64_t eddy_text_float_bits(double v, eddy_dtype_t dt) {
  switch (dt) {
  case EDDY_DT_F32: {
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    return u;
  }
  case EDDY_DT_F16: return eddy_f32_to_f16((float)v);
  case EDDY_DT_BF16: return eddy_f32_to_bf16((float)v);
  default: {
    uint64_t u;
    memcpy(&u, &v, sizeof(u));
    return u;
  }
  }
}

double eddy_text_float_from_bits(uint64_t bits, eddy_dtype_t dt) {
  switch (dt) {
  case EDDY_DT_F32: {
    uint32_t u = (uint32_t)bits;
    float f;
    memcpy(&f, &u, sizeof(f));
    return (double)f;
  }
  case EDDY_DT_F16: return (double)eddy_f16_to_f32((uint16_t)bits);
  case EDDY_DT_BF16: return (double)eddy_bf16_to_f32((uint16_t)bits);
  default: {
    double d;
    memcpy(&d, &bits, sizeof(d));
    return d;
  }
  }
}

/// True when text (a %e rendering) reads back as v in dtype dt.
static bool eddy_text_reads_back(const char *text, double v, eddy_dtype_t dt) {
  double r = eddy_text_round_to_dtype(strtod(text, NULL), dt);
  return r == v && signbit(r) == signbit(v);
}

void eddy_text_print_float(double v, eddy_dtype_t dt, eddy_buf_t *out) {
  if (!isfinite(v)) {
    unsigned w = eddy_text_float_width(dt);
    eddy_buf_printf(out, "0x%0*llX", (int)(w / 4),
                    (unsigned long long)eddy_text_float_bits(v, dt));
    return;
  }
  /* Find the fewest significant digits that read back exactly; 17 always
     do for a double, and the value is exact in dt. */
  char sci[40];
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(sci, sizeof(sci), "%.*e", prec - 1, v);
    if (eddy_text_reads_back(sci, v, dt))
      break;
  }
  /* Split "-d.ddde+XX" into sign, digits and decimal exponent. */
  const char *s = sci;
  bool neg = *s == '-';
  if (neg)
    s++;
  char digits[24];
  size_t nd = 0;
  for (; *s && *s != 'e'; s++)
    if (*s != '.' && nd < sizeof(digits) - 1)
      digits[nd++] = *s;
  int exp10 = (*s == 'e') ? atoi(s + 1) : 0;
  while (nd > 1 && digits[nd - 1] == '0')
    nd--;
  digits[nd] = '\0';
  if (neg)
    eddy_buf_putc(out, '-');
  if (exp10 >= -4 && exp10 <= 15) {
    if (exp10 < 0) {
      eddy_buf_puts(out, "0.");
      for (int i = -1; i > exp10; i--)
        eddy_buf_putc(out, '0');
      eddy_buf_append(out, digits, nd);
      return;
    }
    size_t int_digits = (size_t)exp10 + 1;
    for (size_t i = 0; i < int_digits; i++)
      eddy_buf_putc(out, i < nd ? digits[i] : '0');
    eddy_buf_putc(out, '.');
    if (nd > int_digits)
      eddy_buf_append(out, digits + int_digits, nd - int_digits);
    else
      eddy_buf_putc(out, '0');
    return;
  }
  eddy_buf_putc(out, digits[0]);
  eddy_buf_putc(out, '.');
  if (nd > 1)
    eddy_buf_append(out, digits + 1, nd - 1);
  else
    eddy_buf_putc(out, '0');
  eddy_buf_printf(out, "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
}

void eddy_text_print_string(const char *s, size_t len, eddy_buf_t *out) {
  eddy_buf_putc(out, '"');
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    switch (c) {
    case '"': eddy_buf_puts(out, "\\\""); break;
    case '\\': eddy_buf_puts(out, "\\\\"); break;
    case '\n': eddy_buf_puts(out, "\\n"); break;
    case '\t': eddy_buf_puts(out, "\\t"); break;
    default:
      if (c < 0x20 || c >= 0x7F)
        eddy_buf_printf(out, "\\%02X", c);
      else
        eddy_buf_putc(out, (char)c);
      break;
    }
  }
  eddy_buf_putc(out, '"');
}

bool eddy_text_is_isolated(const eddy_op_def_t *def, const char *name) {
  if (def && (def->traits & EDDY_TRAIT_ISOLATED))
    return true;
  return strcmp(name, "func.func") == 0 || strcmp(name, "builtin.module") == 0;
}

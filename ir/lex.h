/// Internals of the textual IR (ir/lex.c, ir/parse*.c, ir/print.c): the
/// lexer and the number conventions the printer and the parser must share so
/// that print(parse(text)) == text. Not a public API.
#ifndef EDDY_IR_LEX_H
#define EDDY_IR_LEX_H

#include "ir/ir.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum eddy_tok_kind {
  EDDY_TOK_EOF,
  EDDY_TOK_ERROR,    ///< lexical error; eddy_lexer_t.err_msg says what
  EDDY_TOK_BARE,     ///< module, func.func, tensor, f32, true, dense, loc
  EDDY_TOK_VALUE,    ///< %name or %name#N (the text includes '%')
  EDDY_TOK_BLOCK,    ///< ^bb0 (the text includes '^')
  EDDY_TOK_SYMBOL,   ///< @name or @"quoted" (the text includes '@')
  EDDY_TOK_BANG,     ///< !tl.list (the text includes '!')
  EDDY_TOK_INT,      ///< 12, -3, 0x7F800000
  EDDY_TOK_FLOAT,    ///< 1.5, -2.5e-08
  EDDY_TOK_STRING,   ///< "text" (the text includes the quotes, undecoded)
  EDDY_TOK_LPAREN,
  EDDY_TOK_RPAREN,
  EDDY_TOK_LBRACE,
  EDDY_TOK_RBRACE,
  EDDY_TOK_LBRACKET,
  EDDY_TOK_RBRACKET,
  EDDY_TOK_LESS,
  EDDY_TOK_GREATER,
  EDDY_TOK_COMMA,
  EDDY_TOK_EQUAL,
  EDDY_TOK_COLON,
  EDDY_TOK_ARROW,
} eddy_tok_kind_t;

/// A position in the source: byte offset and 1-based line and column (the
/// column counts bytes).
typedef struct eddy_srcpos {
  size_t off;
  uint32_t line, col;
} eddy_srcpos_t;

typedef struct eddy_tok {
  eddy_tok_kind_t kind;
  eddy_srcpos_t pos;
  const char *text; ///< into the source; not NUL-terminated
  size_t len;
} eddy_tok_t;

typedef struct eddy_lexer {
  const char *src; ///< may hold NUL bytes; not NUL-terminated
  size_t len;
  size_t pos;
  uint32_t line;
  size_t line_start; ///< offset of the first byte of the current line
  /// For an EDDY_TOK_ERROR token: the message and where it points.
  char err_msg[96];
  eddy_srcpos_t err_pos;
} eddy_lexer_t;

void eddy_lex_init(eddy_lexer_t *lx, const char *src, size_t len);
/// Lexes the next token, skipping whitespace and `//` comments.
eddy_tok_t eddy_lex_next(eddy_lexer_t *lx);
/// Skips whitespace and comments without lexing a token.
void eddy_lex_skip_space(eddy_lexer_t *lx);
/// The current position of the lexer (after skip_space: the next token's).
eddy_srcpos_t eddy_lex_pos(const eddy_lexer_t *lx);
/// Restarts lexing at `pos` (a position previously returned by the lexer).
void eddy_lex_reset(eddy_lexer_t *lx, eddy_srcpos_t pos);

/// Decodes the body of a string token (escapes resolved) into out, which the
/// caller has initialized. The token must have lexed without error.
void eddy_lex_decode_string(const char *text, size_t len, eddy_buf_t *out);
/// Characters allowed in a bare identifier after the first.
bool eddy_lex_is_bare_char(char c);
/// True when s[0..len) can be printed as a bare identifier.
bool eddy_lex_is_bare_ident(const char *s, size_t len);

/// ---- Shared number conventions ---------------------------------------------

/// v rounded to the nearest value of float dtype dt (the parser's rounding).
double eddy_text_round_to_dtype(double v, eddy_dtype_t dt);
/// The IEEE bit pattern of v (already a value of dt) in dt's width.
uint64_t eddy_text_float_bits(double v, eddy_dtype_t dt);
/// The value of a bit pattern in dt's width.
double eddy_text_float_from_bits(uint64_t bits, eddy_dtype_t dt);
/// Width in bits of a float dtype (16, 32 or 64).
unsigned eddy_text_float_width(eddy_dtype_t dt);
/// Appends the canonical text of a value of float dtype dt: the shortest
/// decimal that reads back to the same value (always with a '.' in the
/// mantissa) or, for non-finite values, the hex bit pattern.
void eddy_text_print_float(double v, eddy_dtype_t dt, eddy_buf_t *out);
/// Appends s as a quoted string literal with escapes.
void eddy_text_print_string(const char *s, size_t len, eddy_buf_t *out);
/// Ops whose regions start a fresh value-name scope (func.func,
/// builtin.module and ops with EDDY_TRAIT_ISOLATED).
bool eddy_text_is_isolated(const eddy_op_def_t *def, const char *name);

#endif

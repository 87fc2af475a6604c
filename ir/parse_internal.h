/// Internals of the textual IR parser, shared by ir/parse.c (module, ops,
/// regions, value names), ir/parse_attr.c (types, attributes) and
/// ir/parse_diag.c (diagnostics, token helpers). Not a public API.
#ifndef EDDY_IR_PARSE_INTERNAL_H
#define EDDY_IR_PARSE_INTERNAL_H

#include "ir/lex.h"

/// Bound on nesting (regions, arrays, dense brackets, nested types), so that
/// hostile input cannot exhaust the stack.
#define EDDY_PARSE_MAX_DEPTH 256
/// Bound on the rank of a tensor type.
#define EDDY_PARSE_MAX_RANK 256

typedef struct eddy_pscope eddy_pscope_t;

typedef struct eddy_parser {
  eddy_ctx_t *ctx;
  const char *filename;
  eddy_lexer_t lx;
  eddy_tok_t tok; ///< the current token (not yet consumed)
  /// Temporaries of this parse (name tables, operand lists); freed at the
  /// end, so that error paths need no cleanup.
  eddy_arena_t *scratch;
  unsigned depth;
  eddy_module_t *module;
  eddy_pscope_t *scope; ///< innermost value-name scope
  int64_t dims[EDDY_PARSE_MAX_RANK];
  int64_t dense_shape[EDDY_PARSE_MAX_DEPTH + 1];
} eddy_parser_t;

/// "file:line:col: error: MESSAGE" with the source line and a caret under
/// the column as notes.
eddy_status_t eddy_parse_error(eddy_parser_t *p, eddy_srcpos_t at,
                               const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/// The error for an unexpected current token: "expected WHAT, found TOKEN",
/// or the lexer's own message when the token is a lexical error.
eddy_status_t eddy_parse_expected(eddy_parser_t *p, const char *what);
/// Consumes the current token.
void eddy_parse_advance(eddy_parser_t *p);
/// Consumes a token of the given kind, else eddy_parse_expected(what).
eddy_status_t eddy_parse_expect(eddy_parser_t *p, eddy_tok_kind_t kind,
                                const char *what);
/// True when the current token is the bare identifier `word`.
bool eddy_parse_is_word(const eddy_parser_t *p, const char *word);
/// Enters one nesting level (error past EDDY_PARSE_MAX_DEPTH); leave undoes.
eddy_status_t eddy_parse_enter(eddy_parser_t *p);
void eddy_parse_leave(eddy_parser_t *p);
/// Appends a short printable rendering of a token's text, quoted, to out.
void eddy_parse_describe(const char *text, size_t len, eddy_buf_t *out);
/// Grows a scratch array of elem-sized entries to hold len + 1.
void *eddy_parse_grow(eddy_parser_t *p, void *old, size_t elem, size_t len,
                      size_t *cap);
/// Decodes the current STRING (or quoted SYMBOL, skip = 1) token into a
/// NUL-terminated scratch copy.
char *eddy_parse_string_value(eddy_parser_t *p, const eddy_tok_t *tok,
                              size_t skip, size_t *out_len);

/// Types and attributes (ir/parse_attr.c).
eddy_status_t eddy_parse_type(eddy_parser_t *p, const eddy_type_t **out);
/// "(" [type ("," type)*] ")" into a scratch array.
eddy_status_t eddy_parse_type_list(eddy_parser_t *p,
                                   const eddy_type_t ***out, size_t *out_n);
/// What follows "->": one type, or a parenthesized list.
eddy_status_t eddy_parse_result_types(eddy_parser_t *p,
                                      const eddy_type_t ***out,
                                      size_t *out_n);
eddy_status_t eddy_parse_attr(eddy_parser_t *p, const eddy_attr_t **out);
/// "{" [name "=" attr ("," ...)*] "}" into a scratch array; duplicate names
/// are an error.
eddy_status_t eddy_parse_attr_dict(eddy_parser_t *p, eddy_named_attr_t **out,
                                   size_t *out_n);

#endif

/// Parsing of types and attributes in the textual IR (the grammar is in
/// docs/ir.md). Every number is range-checked against its dtype and every
/// size derived from the input is checked for overflow.
#include "ir/parse_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- Types ---------------------------------------------------------------- */

/// 2^62: dims must stay below this so that products of a few of them with
/// element sizes are easy to check.
#define EDDY_PARSE_DIM_LIMIT ((int64_t)1 << 62)

static bool eddy_parse_is_digit(char c) { return c >= '0' && c <= '9'; }

/// The body of tensor<...> after '<', scanned byte by byte: dims such as
/// "4x?x" are not tokens.
static eddy_status_t eddy_parse_tensor_body(eddy_parser_t *p,
                                            const eddy_type_t **out) {
  eddy_lexer_t *lx = &p->lx;
  eddy_lex_skip_space(lx);
  const char *s = lx->src;
  int32_t rank = 0;
  bool unranked = false;
  if (lx->pos < lx->len && s[lx->pos] == '*') {
    lx->pos++;
    if (lx->pos >= lx->len || s[lx->pos] != 'x')
      return eddy_parse_error(p, eddy_lex_pos(lx), "expected 'x' after '*'");
    lx->pos++;
    unranked = true;
  } else {
    while (lx->pos < lx->len &&
           (eddy_parse_is_digit(s[lx->pos]) || s[lx->pos] == '?')) {
      eddy_srcpos_t at = eddy_lex_pos(lx);
      if (rank == EDDY_PARSE_MAX_RANK)
        return eddy_parse_error(p, at, "tensor rank exceeds the limit of %d",
                                EDDY_PARSE_MAX_RANK);
      int64_t dim = EDDY_DIM_DYNAMIC;
      if (s[lx->pos] == '?') {
        lx->pos++;
      } else {
        dim = 0;
        while (lx->pos < lx->len && eddy_parse_is_digit(s[lx->pos])) {
          int d = s[lx->pos] - '0';
          if (dim > (EDDY_PARSE_DIM_LIMIT - 1 - d) / 10)
            return eddy_parse_error(p, at,
                                    "dimension is too large (the limit is "
                                    "2^62 - 1)");
          dim = dim * 10 + d;
          lx->pos++;
        }
      }
      if (lx->pos >= lx->len || s[lx->pos] != 'x')
        return eddy_parse_error(p, eddy_lex_pos(lx),
                                "expected 'x' after a dimension");
      lx->pos++;
      p->dims[rank++] = dim;
    }
  }
  eddy_srcpos_t at = eddy_lex_pos(lx);
  size_t start = lx->pos;
  while (lx->pos < lx->len && eddy_lex_is_bare_char(s[lx->pos]) &&
         s[lx->pos] != '.')
    lx->pos++;
  if (lx->pos == start)
    return eddy_parse_error(p, at, "expected an element type");
  eddy_dtype_t dt;
  if (!eddy_dtype_from_name(s + start, lx->pos - start, &dt)) {
    eddy_buf_t d;
    eddy_buf_init(&d);
    eddy_parse_describe(s + start, lx->pos - start, &d);
    eddy_status_t st =
        eddy_parse_error(p, at, "unknown element type %s", d.data);
    eddy_buf_destroy(&d);
    return st;
  }
  eddy_parse_advance(p);
  EDDY_RETURN_IF_ERROR(
      eddy_parse_expect(p, EDDY_TOK_GREATER, "'>' to end the tensor type"));
  *out = unranked ? eddy_ir_tensor_type_get(p->ctx, dt, EDDY_RANK_UNKNOWN, NULL)
                  : eddy_ir_tensor_type_get(p->ctx, dt, rank, p->dims);
  return NULL;
}

eddy_status_t eddy_parse_type_list(eddy_parser_t *p,
                                   const eddy_type_t ***out, size_t *out_n) {
  const eddy_type_t **types = NULL;
  size_t n = 0, cap = 0;
  EDDY_RETURN_IF_ERROR(eddy_parse_expect(p, EDDY_TOK_LPAREN, "'('"));
  if (p->tok.kind != EDDY_TOK_RPAREN) {
    for (;;) {
      const eddy_type_t *t;
      EDDY_RETURN_IF_ERROR(eddy_parse_type(p, &t));
      types = eddy_parse_grow(p, types, sizeof(*types), n, &cap);
      types[n++] = t;
      if (p->tok.kind != EDDY_TOK_COMMA)
        break;
      eddy_parse_advance(p);
    }
  }
  EDDY_RETURN_IF_ERROR(eddy_parse_expect(p, EDDY_TOK_RPAREN, "')'"));
  *out = types;
  *out_n = n;
  return NULL;
}

eddy_status_t eddy_parse_result_types(eddy_parser_t *p,
                                      const eddy_type_t ***out,
                                      size_t *out_n) {
  if (p->tok.kind == EDDY_TOK_LPAREN)
    return eddy_parse_type_list(p, out, out_n);
  const eddy_type_t **types = eddy_arena_alloc(p->scratch, sizeof(*types));
  EDDY_RETURN_IF_ERROR(eddy_parse_type(p, &types[0]));
  *out = types;
  *out_n = 1;
  return NULL;
}

static eddy_status_t eddy_parse_type_inner(eddy_parser_t *p,
                                           const eddy_type_t **out) {
  eddy_tok_t tok = p->tok;
  if (eddy_parse_is_word(p, "tensor")) {
    eddy_parse_advance(p);
    if (p->tok.kind != EDDY_TOK_LESS)
      return eddy_parse_expected(p, "'<' after 'tensor'");
    return eddy_parse_tensor_body(p, out);
  }
  if (tok.kind == EDDY_TOK_BANG && tok.len == 8 &&
      memcmp(tok.text, "!tl.list", 8) == 0) {
    eddy_parse_advance(p);
    EDDY_RETURN_IF_ERROR(
        eddy_parse_expect(p, EDDY_TOK_LESS, "'<' after '!tl.list'"));
    eddy_srcpos_t at = p->tok.pos;
    const eddy_type_t *elem;
    EDDY_RETURN_IF_ERROR(eddy_parse_type(p, &elem));
    if (elem->kind != EDDY_TYPE_TENSOR && elem->kind != EDDY_TYPE_LIST)
      return eddy_parse_error(p, at,
                              "the element type of '!tl.list' must be a "
                              "tensor or list type");
    EDDY_RETURN_IF_ERROR(
        eddy_parse_expect(p, EDDY_TOK_GREATER, "'>' to end the list type"));
    *out = eddy_ir_list_type_get(p->ctx, elem);
    return NULL;
  }
  if (tok.kind == EDDY_TOK_BANG && tok.len == 9 &&
      memcmp(tok.text, "!df.token", 9) == 0) {
    eddy_parse_advance(p);
    *out = eddy_ir_token_type_get(p->ctx);
    return NULL;
  }
  if (tok.kind == EDDY_TOK_LPAREN) {
    const eddy_type_t **ins, **outs;
    size_t nin, nout;
    EDDY_RETURN_IF_ERROR(eddy_parse_type_list(p, &ins, &nin));
    EDDY_RETURN_IF_ERROR(eddy_parse_expect(p, EDDY_TOK_ARROW, "'->'"));
    EDDY_RETURN_IF_ERROR(eddy_parse_result_types(p, &outs, &nout));
    *out = eddy_ir_func_type_get(p->ctx, ins, nin, outs, nout);
    return NULL;
  }
  if (tok.kind == EDDY_TOK_BARE || tok.kind == EDDY_TOK_BANG) {
    eddy_buf_t d;
    eddy_buf_init(&d);
    eddy_parse_describe(tok.text, tok.len, &d);
    eddy_status_t st = eddy_parse_error(p, tok.pos, "unknown type %s", d.data);
    eddy_buf_destroy(&d);
    return st;
  }
  return eddy_parse_expected(p, "a type");
}

eddy_status_t eddy_parse_type(eddy_parser_t *p, const eddy_type_t **out) {
  EDDY_RETURN_IF_ERROR(eddy_parse_enter(p));
  EDDY_RETURN_IF_ERROR(eddy_parse_type_inner(p, out));
  eddy_parse_leave(p);
  return NULL;
}

/* ---- Numbers -------------------------------------------------------------- */

static bool eddy_parse_is_hex_tok(const eddy_tok_t *tok) {
  return tok->len > 2 && tok->text[0] == '0' &&
         (tok->text[1] == 'x' || tok->text[1] == 'X');
}

static int eddy_parse_hex_digit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  return c - 'A' + 10;
}

/// The value of a hex token; false when it does not fit in `bits` bits.
static bool eddy_parse_hex_bits(const eddy_tok_t *tok, unsigned bits,
                                uint64_t *out) {
  uint64_t v = 0;
  for (size_t i = 2; i < tok->len; i++) {
    if (v >> 60)
      return false;
    v = (v << 4) | (uint64_t)eddy_parse_hex_digit(tok->text[i]);
  }
  if (bits < 64 && (v >> bits) != 0)
    return false;
  *out = v;
  return true;
}

static eddy_status_t eddy_parse_range_error(eddy_parser_t *p,
                                            const eddy_tok_t *tok,
                                            const char *what,
                                            eddy_dtype_t dt) {
  eddy_buf_t d;
  eddy_buf_init(&d);
  eddy_parse_describe(tok->text, tok->len, &d);
  eddy_status_t st = eddy_parse_error(p, tok->pos, "%s %s is out of range for %s",
                                      what, d.data, eddy_dtype_name(dt));
  eddy_buf_destroy(&d);
  return st;
}

/// A decimal or hex integer token as a value of integer dtype dt
/// (range-checked).
static eddy_status_t eddy_parse_int_value(eddy_parser_t *p,
                                          const eddy_tok_t *tok,
                                          eddy_dtype_t dt, int64_t *out) {
  unsigned width = dt == EDDY_DT_I1 ? 1 : dt == EDDY_DT_I8 ? 8
                   : dt == EDDY_DT_I32 ? 32 : 64;
  if (eddy_parse_is_hex_tok(tok)) {
    /* A hex literal gives the bits of the value (two's complement). */
    uint64_t bits;
    if (!eddy_parse_hex_bits(tok, width, &bits))
      return eddy_parse_range_error(p, tok, "integer", dt);
    if (width < 64 && (bits >> (width - 1)) & 1)
      bits |= ~(uint64_t)0 << width;
    *out = (int64_t)bits;
    return NULL;
  }
  bool neg = tok->text[0] == '-';
  uint64_t mag = 0;
  for (size_t i = neg ? 1 : 0; i < tok->len; i++) {
    uint64_t d = (uint64_t)(tok->text[i] - '0');
    if (mag > (UINT64_MAX - d) / 10)
      return eddy_parse_range_error(p, tok, "integer", dt);
    mag = mag * 10 + d;
  }
  /* i1 accepts -1, 0 and 1 (true is all ones as a signed 1-bit value). */
  uint64_t max_pos = dt == EDDY_DT_I1 ? 1 : ((uint64_t)1 << (width - 1)) - 1;
  uint64_t max_neg = dt == EDDY_DT_I1 ? 1 : (uint64_t)1 << (width - 1);
  if (mag > (neg ? max_neg : max_pos))
    return eddy_parse_range_error(p, tok, "integer", dt);
  *out = neg ? (int64_t)(0 - mag) : (int64_t)mag;
  return NULL;
}

/// The value of a float literal or hex bit pattern token in float dtype dt.
static eddy_status_t eddy_parse_float_value(eddy_parser_t *p,
                                            const eddy_tok_t *tok,
                                            eddy_dtype_t dt, double *out) {
  if (tok->kind == EDDY_TOK_INT) {
    if (!eddy_parse_is_hex_tok(tok)) {
      eddy_buf_t d;
      eddy_buf_init(&d);
      eddy_parse_describe(tok->text, tok->len, &d);
      eddy_status_t st = eddy_parse_error(
          p, tok->pos,
          "integer literal %s where a %s value is expected; write it with a "
          "'.' (or as a hex bit pattern)",
          d.data, eddy_dtype_name(dt));
      eddy_buf_destroy(&d);
      return st;
    }
    uint64_t bits;
    if (!eddy_parse_hex_bits(tok, eddy_text_float_width(dt), &bits))
      return eddy_parse_range_error(p, tok, "bit pattern", dt);
    *out = eddy_text_float_from_bits(bits, dt);
    return NULL;
  }
  char *text = eddy_arena_strndup(p->scratch, tok->text, tok->len);
  double v = strtod(text, NULL);
  double r = eddy_text_round_to_dtype(v, dt);
  if (isinf(r))
    return eddy_parse_range_error(p, tok, "float", dt);
  *out = r;
  return NULL;
}

/* ---- Dense ---------------------------------------------------------------- */

/// A dense literal before its type is known: the element tokens in order
/// and the shape implied by the brackets.
typedef struct eddy_dense_lit {
  eddy_tok_t *elems;
  size_t n, cap;
  int rank;  ///< depth of the leaves; -1 until known
  int seen;  ///< depths reached so far; dense_shape[d] is -1 until a list
             ///< at depth d closes
} eddy_dense_lit_t;

static eddy_status_t eddy_parse_dense_shape_error(eddy_parser_t *p,
                                                  eddy_srcpos_t at) {
  return eddy_parse_error(p, at,
                          "dense literal is not rectangular: nested lists "
                          "must all have the same length and depth");
}

/// One element or nested list at nesting depth d.
static eddy_status_t eddy_parse_dense_item(eddy_parser_t *p,
                                           eddy_dense_lit_t *lit, int d) {
  eddy_tok_t tok = p->tok;
  if (tok.kind != EDDY_TOK_LBRACKET) {
    if (tok.kind != EDDY_TOK_INT && tok.kind != EDDY_TOK_FLOAT &&
        !eddy_parse_is_word(p, "true") && !eddy_parse_is_word(p, "false"))
      return eddy_parse_expected(p, "a dense element");
    if (lit->rank == -1)
      lit->rank = d;
    else if (lit->rank != d)
      return eddy_parse_dense_shape_error(p, tok.pos);
    lit->elems = eddy_parse_grow(p, lit->elems, sizeof(eddy_tok_t), lit->n,
                                 &lit->cap);
    lit->elems[lit->n++] = tok;
    eddy_parse_advance(p);
    return NULL;
  }
  if (lit->rank != -1 && d >= lit->rank)
    return eddy_parse_dense_shape_error(p, tok.pos);
  EDDY_RETURN_IF_ERROR(eddy_parse_enter(p));
  eddy_parse_advance(p);
  if (d == lit->seen) {
    p->dense_shape[d] = -1;
    lit->seen++;
  }
  int64_t count = 0;
  if (p->tok.kind != EDDY_TOK_RBRACKET) {
    for (;;) {
      EDDY_RETURN_IF_ERROR(eddy_parse_dense_item(p, lit, d + 1));
      count++;
      if (p->tok.kind != EDDY_TOK_COMMA)
        break;
      eddy_parse_advance(p);
    }
  }
  EDDY_RETURN_IF_ERROR(eddy_parse_expect(p, EDDY_TOK_RBRACKET, "',' or ']'"));
  eddy_parse_leave(p);
  /* The first list closed at each depth fixes the length of all lists at
     that depth; an empty list fixes the rank. */
  if (p->dense_shape[d] == -1)
    p->dense_shape[d] = count;
  else if (p->dense_shape[d] != count)
    return eddy_parse_dense_shape_error(p, tok.pos);
  if (count == 0) {
    if (lit->rank == -1)
      lit->rank = d + 1;
    else if (lit->rank != d + 1)
      return eddy_parse_dense_shape_error(p, tok.pos);
  }
  return NULL;
}

static void eddy_parse_store_le(unsigned char *dst, uint64_t v, size_t n) {
  for (size_t i = 0; i < n; i++)
    dst[i] = (unsigned char)(v >> (8 * i));
}

/// Converts one element token to dtype dt, stored little-endian at dst.
static eddy_status_t eddy_parse_dense_elem(eddy_parser_t *p,
                                           const eddy_tok_t *tok,
                                           eddy_dtype_t dt,
                                           unsigned char *dst) {
  bool is_bool = tok->kind == EDDY_TOK_BARE;
  if (dt == EDDY_DT_I1) {
    if (is_bool) {
      dst[0] = tok->len == 4; /* "true" */
      return NULL;
    }
    if (tok->kind == EDDY_TOK_INT) {
      int64_t v;
      EDDY_RETURN_IF_ERROR(eddy_parse_int_value(p, tok, dt, &v));
      dst[0] = v != 0;
      return NULL;
    }
  } else if (eddy_dtype_is_float(dt)) {
    if (!is_bool) {
      double v;
      EDDY_RETURN_IF_ERROR(eddy_parse_float_value(p, tok, dt, &v));
      eddy_parse_store_le(dst, eddy_text_float_bits(v, dt),
                          eddy_dtype_size(dt));
      return NULL;
    }
  } else if (tok->kind == EDDY_TOK_INT) {
    int64_t v;
    EDDY_RETURN_IF_ERROR(eddy_parse_int_value(p, tok, dt, &v));
    eddy_parse_store_le(dst, (uint64_t)v, eddy_dtype_size(dt));
    return NULL;
  }
  eddy_buf_t d;
  eddy_buf_init(&d);
  eddy_parse_describe(tok->text, tok->len, &d);
  eddy_status_t st = eddy_parse_error(p, tok->pos,
                                      "%s is not a valid element of type %s",
                                      d.data, eddy_dtype_name(dt));
  eddy_buf_destroy(&d);
  return st;
}

static void eddy_parse_print_shape(const int64_t *dims, int rank,
                                   eddy_buf_t *out) {
  eddy_buf_putc(out, '[');
  for (int i = 0; i < rank; i++)
    eddy_buf_printf(out, i ? ", %lld" : "%lld", (long long)dims[i]);
  eddy_buf_putc(out, ']');
}

/// dense<...> : tensor<...>; the current token is 'dense'.
static eddy_status_t eddy_parse_dense(eddy_parser_t *p,
                                      const eddy_attr_t **out) {
  eddy_srcpos_t start = p->tok.pos;
  eddy_parse_advance(p);
  EDDY_RETURN_IF_ERROR(
      eddy_parse_expect(p, EDDY_TOK_LESS, "'<' after 'dense'"));
  eddy_dense_lit_t lit = {NULL, 0, 0, -1, 0};
  bool empty = p->tok.kind == EDDY_TOK_GREATER;
  if (!empty)
    EDDY_RETURN_IF_ERROR(eddy_parse_dense_item(p, &lit, 0));
  EDDY_RETURN_IF_ERROR(
      eddy_parse_expect(p, EDDY_TOK_GREATER, "'>' to end the dense literal"));
  EDDY_RETURN_IF_ERROR(
      eddy_parse_expect(p, EDDY_TOK_COLON, "':' and the type of the dense "
                                           "attribute"));
  eddy_srcpos_t type_at = p->tok.pos;
  const eddy_type_t *type;
  EDDY_RETURN_IF_ERROR(eddy_parse_type(p, &type));
  eddy_buf_t tname;
  eddy_buf_init(&tname);
  eddy_ir_type_print(type, &tname);
  eddy_status_t st = NULL;
  int64_t need = eddy_ir_type_is_static(type) ? eddy_ir_type_num_elements(type)
                                              : -2;
  size_t esize = type->kind == EDDY_TYPE_TENSOR ? eddy_dtype_size(type->dtype)
                                                : 1;
  int64_t nbytes = 0;
  bool splat = !empty && lit.rank == 0;
  if (need == -2) {
    st = eddy_parse_error(p, type_at,
                          "a dense attribute needs a static tensor type, "
                          "found '%s'", tname.data);
  } else if (need < 0 || !eddy_checked_mul_i64(need, (int64_t)esize, &nbytes)) {
    st = eddy_parse_error(p, type_at, "type '%s' has too many elements",
                          tname.data);
  } else if (!splat && (int64_t)lit.n != need) {
    st = eddy_parse_error(p, start,
                          "dense attribute has %zu elements but type '%s' "
                          "needs %lld",
                          lit.n, tname.data, (long long)need);
  } else if (!splat && !empty &&
             (lit.rank != type->rank ||
              memcmp(p->dense_shape, type->dims,
                     (size_t)lit.rank * sizeof(int64_t)) != 0)) {
    eddy_buf_t have, want;
    eddy_buf_init(&have);
    eddy_buf_init(&want);
    eddy_parse_print_shape(p->dense_shape, lit.rank, &have);
    eddy_parse_print_shape(type->dims, type->rank, &want);
    st = eddy_parse_error(p, start,
                          "dense literal has shape %s but type '%s' has "
                          "shape %s",
                          have.data, tname.data, want.data);
    eddy_buf_destroy(&have);
    eddy_buf_destroy(&want);
  }
  eddy_buf_destroy(&tname);
  if (st)
    return st;
  if (need == 0) {
    *out = eddy_ir_dense_attr_get(p->ctx, type, "", 0);
    return NULL;
  }
  if (splat) {
    unsigned char elem[8] = {0};
    EDDY_RETURN_IF_ERROR(
        eddy_parse_dense_elem(p, &lit.elems[0], type->dtype, elem));
    *out = eddy_ir_dense_splat_attr_get(p->ctx, type, elem);
    return NULL;
  }
  unsigned char *data = eddy_arena_alloc(p->scratch, (size_t)nbytes);
  for (size_t i = 0; i < lit.n; i++)
    EDDY_RETURN_IF_ERROR(eddy_parse_dense_elem(p, &lit.elems[i], type->dtype,
                                               data + i * esize));
  *out = eddy_ir_dense_attr_get(p->ctx, type, data, (size_t)nbytes);
  return NULL;
}

/* ---- Attributes ----------------------------------------------------------- */

/// An optional ": dtype" after a number; *dt is left alone when absent.
static eddy_status_t eddy_parse_opt_dtype(eddy_parser_t *p, eddy_dtype_t *dt) {
  if (p->tok.kind != EDDY_TOK_COLON)
    return NULL;
  eddy_parse_advance(p);
  if (p->tok.kind != EDDY_TOK_BARE)
    return eddy_parse_expected(p, "a dtype");
  if (!eddy_dtype_from_name(p->tok.text, p->tok.len, dt)) {
    eddy_buf_t d;
    eddy_buf_init(&d);
    eddy_parse_describe(p->tok.text, p->tok.len, &d);
    eddy_status_t st = eddy_parse_error(p, p->tok.pos, "unknown dtype %s "
                                        "(expected f16, bf16, f32, f64, i1, "
                                        "i8, i32 or i64)", d.data);
    eddy_buf_destroy(&d);
    return st;
  }
  eddy_parse_advance(p);
  return NULL;
}

static eddy_status_t eddy_parse_array(eddy_parser_t *p,
                                      const eddy_attr_t **out) {
  EDDY_RETURN_IF_ERROR(eddy_parse_enter(p));
  eddy_parse_advance(p);
  const eddy_attr_t **elems = NULL;
  size_t n = 0, cap = 0;
  if (p->tok.kind != EDDY_TOK_RBRACKET) {
    for (;;) {
      const eddy_attr_t *a;
      EDDY_RETURN_IF_ERROR(eddy_parse_attr(p, &a));
      elems = eddy_parse_grow(p, elems, sizeof(*elems), n, &cap);
      elems[n++] = a;
      if (p->tok.kind != EDDY_TOK_COMMA)
        break;
      eddy_parse_advance(p);
    }
  }
  EDDY_RETURN_IF_ERROR(eddy_parse_expect(p, EDDY_TOK_RBRACKET, "',' or ']'"));
  eddy_parse_leave(p);
  *out = eddy_ir_array_attr_get(p->ctx, elems, n);
  return NULL;
}

eddy_status_t eddy_parse_attr(eddy_parser_t *p, const eddy_attr_t **out) {
  eddy_tok_t tok = p->tok;
  switch (tok.kind) {
  case EDDY_TOK_INT: {
    eddy_parse_advance(p);
    eddy_dtype_t dt = EDDY_DT_I64;
    EDDY_RETURN_IF_ERROR(eddy_parse_opt_dtype(p, &dt));
    if (eddy_dtype_is_float(dt)) {
      double v;
      EDDY_RETURN_IF_ERROR(eddy_parse_float_value(p, &tok, dt, &v));
      *out = eddy_ir_float_attr_get(p->ctx, v, dt);
      return NULL;
    }
    int64_t v;
    EDDY_RETURN_IF_ERROR(eddy_parse_int_value(p, &tok, dt, &v));
    *out = eddy_ir_int_attr_get(p->ctx, v, dt);
    return NULL;
  }
  case EDDY_TOK_FLOAT: {
    eddy_parse_advance(p);
    eddy_dtype_t dt = EDDY_DT_F64;
    eddy_srcpos_t dt_at = p->tok.pos;
    EDDY_RETURN_IF_ERROR(eddy_parse_opt_dtype(p, &dt));
    if (!eddy_dtype_is_float(dt))
      return eddy_parse_error(p, dt_at,
                              "a float literal cannot have integer type %s",
                              eddy_dtype_name(dt));
    double v;
    EDDY_RETURN_IF_ERROR(eddy_parse_float_value(p, &tok, dt, &v));
    *out = eddy_ir_float_attr_get(p->ctx, v, dt);
    return NULL;
  }
  case EDDY_TOK_STRING: {
    size_t len;
    char *s = eddy_parse_string_value(p, &tok, 0, &len);
    eddy_parse_advance(p);
    *out = eddy_ir_string_attr_get(p->ctx, s, len);
    return NULL;
  }
  case EDDY_TOK_SYMBOL: {
    size_t len;
    char *s = eddy_parse_string_value(p, &tok, 1, &len);
    eddy_parse_advance(p);
    *out = eddy_ir_symbol_attr_get(p->ctx, s, len);
    return NULL;
  }
  case EDDY_TOK_LBRACKET:
    return eddy_parse_array(p, out);
  case EDDY_TOK_BANG:
  case EDDY_TOK_LPAREN: {
    const eddy_type_t *t;
    EDDY_RETURN_IF_ERROR(eddy_parse_type(p, &t));
    *out = eddy_ir_type_attr_get(p->ctx, t);
    return NULL;
  }
  case EDDY_TOK_BARE:
    if (eddy_parse_is_word(p, "true") || eddy_parse_is_word(p, "false")) {
      eddy_parse_advance(p);
      *out = eddy_ir_bool_attr_get(p->ctx, tok.len == 4);
      return NULL;
    }
    if (eddy_parse_is_word(p, "dense"))
      return eddy_parse_dense(p, out);
    if (eddy_parse_is_word(p, "tensor")) {
      const eddy_type_t *t;
      EDDY_RETURN_IF_ERROR(eddy_parse_type(p, &t));
      *out = eddy_ir_type_attr_get(p->ctx, t);
      return NULL;
    }
    return eddy_parse_expected(p, "an attribute value");
  default:
    return eddy_parse_expected(p, "an attribute value");
  }
}

typedef struct eddy_parse_named {
  eddy_named_attr_t attr;
  eddy_srcpos_t pos;
} eddy_parse_named_t;

static int eddy_parse_named_cmp(const void *a, const void *b) {
  const eddy_parse_named_t *x = a, *y = b;
  int c = strcmp(x->attr.name->str, y->attr.name->str);
  if (c)
    return c;
  return x->pos.off < y->pos.off ? -1 : x->pos.off > y->pos.off;
}

eddy_status_t eddy_parse_attr_dict(eddy_parser_t *p, eddy_named_attr_t **out,
                                   size_t *out_n) {
  EDDY_RETURN_IF_ERROR(eddy_parse_expect(p, EDDY_TOK_LBRACE, "'{'"));
  eddy_parse_named_t *items = NULL;
  size_t n = 0, cap = 0;
  if (p->tok.kind != EDDY_TOK_RBRACE) {
    for (;;) {
      eddy_tok_t name = p->tok;
      const char *s;
      size_t len;
      if (name.kind == EDDY_TOK_BARE) {
        s = name.text;
        len = name.len;
      } else if (name.kind == EDDY_TOK_STRING) {
        s = eddy_parse_string_value(p, &name, 0, &len);
        if (memchr(s, '\0', len))
          return eddy_parse_error(p, name.pos,
                                  "an attribute name cannot contain a NUL "
                                  "byte");
      } else {
        return eddy_parse_expected(p, "an attribute name");
      }
      eddy_parse_advance(p);
      EDDY_RETURN_IF_ERROR(
          eddy_parse_expect(p, EDDY_TOK_EQUAL, "'=' after the attribute name"));
      const eddy_attr_t *value;
      EDDY_RETURN_IF_ERROR(eddy_parse_attr(p, &value));
      items = eddy_parse_grow(p, items, sizeof(*items), n, &cap);
      items[n].attr.name = eddy_ir_ident_get(p->ctx, s, len);
      items[n].attr.value = value;
      items[n].pos = name.pos;
      n++;
      if (p->tok.kind != EDDY_TOK_COMMA)
        break;
      eddy_parse_advance(p);
    }
  }
  EDDY_RETURN_IF_ERROR(eddy_parse_expect(p, EDDY_TOK_RBRACE, "',' or '}'"));
  /* Sorting finds duplicates in n log n; the op sorts its copy anyway. */
  if (n > 1)
    qsort(items, n, sizeof(*items), eddy_parse_named_cmp);
  for (size_t i = 1; i < n; i++)
    if (items[i].attr.name == items[i - 1].attr.name)
      return eddy_parse_error(p, items[i].pos, "duplicate attribute '%s'",
                              items[i].attr.name->str);
  eddy_named_attr_t *attrs =
      eddy_arena_alloc(p->scratch, (n ? n : 1) * sizeof(*attrs));
  for (size_t i = 0; i < n; i++)
    attrs[i] = items[i].attr;
  *out = attrs;
  *out_n = n;
  return NULL;
}

/// The parser of the textual IR: hand-written recursive descent over
/// ir/lex.c. Types and attributes are in ir/parse_attr.c, diagnostics in
/// ir/parse_diag.c; the grammar and the value-naming rules are in
/// docs/ir.md.
///
/// Value names. A name is visible in the region that defines it and in the
/// regions nested in it; isolated ops (func.func) start a fresh scope. A use
/// before the definition (the df.merge back edge) gets a placeholder value
/// whose uses move to the definition when it appears in a region where the
/// use can see it; one still unresolved when its scope ends is an undefined
/// value. The parser builds ops with eddy_ir_op_create and explicit result
/// types and does not verify: the caller runs the verifier.
#include "ir/parse_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Tokens ------------------------------------------------------------------ */

/// A decimal token as a uint32 (locations, result counts).
static eddy_status_t eddy_parse_u32(eddy_parser_t *p, const char *what,
                                    uint32_t *out) {
  eddy_tok_t t = p->tok;
  if (t.kind != EDDY_TOK_INT || t.text[0] == '-' ||
      (t.len > 1 && (t.text[1] == 'x' || t.text[1] == 'X')))
    return eddy_parse_expected(p, what);
  uint64_t v = 0;
  for (size_t i = 0; i < t.len; i++) {
    v = v * 10 + (uint64_t)(t.text[i] - '0');
    if (v > UINT32_MAX)
      return eddy_parse_error(p, t.pos, "%s is too large", what);
  }
  *out = (uint32_t)v;
  eddy_parse_advance(p);
  return NULL;
}

static const eddy_loc_t *eddy_parse_loc_at(eddy_parser_t *p,
                                           eddy_srcpos_t at) {
  return eddy_ir_loc_file(p->ctx, p->filename, at.line, at.col);
}

/// An optional trailing loc(...): loc("file":3:7), loc("name") or
/// loc(unknown). *loc is left alone when there is none.
static eddy_status_t eddy_parse_opt_loc(eddy_parser_t *p,
                                        const eddy_loc_t **loc) {
  if (!eddy_parse_is_word(p, "loc"))
    return NULL;
  eddy_parse_advance(p);
  EDDY_RETURN_IF_ERROR(
      eddy_parse_expect(p, EDDY_TOK_LPAREN, "'(' after 'loc'"));
  if (eddy_parse_is_word(p, "unknown")) {
    eddy_parse_advance(p);
    *loc = NULL;
  } else if (p->tok.kind == EDDY_TOK_STRING) {
    eddy_tok_t t = p->tok;
    size_t len;
    char *s = eddy_parse_string_value(p, &t, 0, &len);
    if (memchr(s, '\0', len))
      return eddy_parse_error(p, t.pos,
                              "a location cannot contain a NUL byte");
    eddy_parse_advance(p);
    if (p->tok.kind == EDDY_TOK_COLON) {
      eddy_parse_advance(p);
      uint32_t line, col;
      eddy_srcpos_t line_at = p->tok.pos;
      EDDY_RETURN_IF_ERROR(eddy_parse_u32(p, "a line number", &line));
      if (line == 0)
        return eddy_parse_error(p, line_at, "line numbers start at 1");
      EDDY_RETURN_IF_ERROR(eddy_parse_expect(p, EDDY_TOK_COLON,
                                             "':' and a column number"));
      EDDY_RETURN_IF_ERROR(eddy_parse_u32(p, "a column number", &col));
      *loc = eddy_ir_loc_file(p->ctx, s, line, col);
    } else {
      *loc = eddy_ir_loc_name(p->ctx, s);
    }
  } else {
    return eddy_parse_expected(p, "a location (a string or 'unknown')");
  }
  return eddy_parse_expect(p, EDDY_TOK_RPAREN, "')' to end the location");
}

/* ---- Value names ------------------------------------------------------------ */

typedef struct eddy_pname eddy_pname_t;

/// A region being parsed. Closed regions keep a parent link, so that a
/// forward reference made inside one can be resolved by a definition in the
/// nearest enclosing region still open.
/// A block label of a region ("^bb0"). Labels are unique per region only:
/// no op refers to a block, so nested regions reuse ^bb0 as the printer
/// writes them.
typedef struct eddy_plabel {
  const char *text;
  size_t len;
  struct eddy_plabel *next;
} eddy_plabel_t;

typedef struct eddy_pregion {
  struct eddy_pregion *parent;
  bool closed;
  eddy_pname_t *defs; ///< names defined here, undefined when it closes
  eddy_plabel_t *labels;
} eddy_pregion_t;

/// A use of a name not defined yet.
typedef struct eddy_pfwd {
  struct eddy_pfwd *next_for_name; ///< unresolved refs of the same name
  struct eddy_pfwd *next_in_scope; ///< every ref of the scope, in order
  uint32_t index;                  ///< the #N of the use
  eddy_value_t *placeholder;
  eddy_pregion_t *region; ///< region of the first use
  eddy_tok_t use;         ///< the first use
  bool resolved;
} eddy_pfwd_t;

struct eddy_pname {
  const char *text; ///< "%x" or "^bb0", into the source
  size_t len;
  uint64_t hash;
  eddy_pname_t *chain;
  bool defined;
  eddy_value_t **vals; ///< results of the group, or the one block argument
  uint32_t num_vals;
  eddy_pname_t *next_def;
  eddy_pfwd_t *fwds;
};

struct eddy_pscope {
  eddy_pscope_t *parent;
  eddy_pname_t **buckets;
  size_t num_buckets, count;
  eddy_pregion_t *region; ///< innermost open region
  eddy_pfwd_t *fwd_first, *fwd_last;
};

static void eddy_parse_region_open(eddy_parser_t *p) {
  eddy_pregion_t *r = eddy_arena_alloc(p->scratch, sizeof(*r));
  r->parent = p->scope->region;
  p->scope->region = r;
}

static void eddy_parse_region_close(eddy_parser_t *p) {
  eddy_pregion_t *r = p->scope->region;
  for (eddy_pname_t *n = r->defs; n; n = n->next_def) {
    n->defined = false;
    n->vals = NULL;
  }
  r->closed = true;
  p->scope->region = r->parent;
}

/// The open region a forward reference now belongs to.
static eddy_pregion_t *eddy_parse_effective(eddy_pregion_t *r) {
  while (r->closed)
    r = r->parent;
  return r;
}

static void eddy_parse_scope_push(eddy_parser_t *p) {
  eddy_pscope_t *sc = eddy_arena_alloc(p->scratch, sizeof(*sc));
  sc->parent = p->scope;
  sc->num_buckets = 64;
  sc->buckets =
      eddy_arena_alloc(p->scratch, sc->num_buckets * sizeof(*sc->buckets));
  p->scope = sc;
  eddy_parse_region_open(p);
}

/// Closes the scope; a forward reference still unresolved is a use of an
/// undefined value (reported at its first use, the earliest in the text).
static eddy_status_t eddy_parse_scope_pop(eddy_parser_t *p) {
  eddy_pscope_t *sc = p->scope;
  eddy_parse_region_close(p);
  p->scope = sc->parent;
  for (eddy_pfwd_t *f = sc->fwd_first; f; f = f->next_in_scope)
    if (!f->resolved)
      return eddy_parse_error(p, f->use.pos, "use of undefined value '%.*s'",
                              (int)f->use.len, f->use.text);
  return NULL;
}

static eddy_pname_t *eddy_parse_name(eddy_parser_t *p, const char *text,
                                     size_t len) {
  eddy_pscope_t *sc = p->scope;
  uint64_t h = eddy_hash_bytes(text, len, 0);
  size_t mask = sc->num_buckets - 1;
  for (eddy_pname_t *n = sc->buckets[h & mask]; n; n = n->chain)
    if (n->hash == h && n->len == len && memcmp(n->text, text, len) == 0)
      return n;
  if (sc->count >= sc->num_buckets * 2) {
    size_t nb = sc->num_buckets * 4;
    eddy_pname_t **b = eddy_arena_alloc(p->scratch, nb * sizeof(*b));
    for (size_t i = 0; i < sc->num_buckets; i++)
      for (eddy_pname_t *n = sc->buckets[i], *next; n; n = next) {
        next = n->chain;
        n->chain = b[n->hash & (nb - 1)];
        b[n->hash & (nb - 1)] = n;
      }
    sc->buckets = b;
    sc->num_buckets = nb;
    mask = nb - 1;
  }
  eddy_pname_t *n = eddy_arena_alloc(p->scratch, sizeof(*n));
  n->text = text;
  n->len = len;
  n->hash = h;
  n->chain = sc->buckets[h & mask];
  sc->buckets[h & mask] = n;
  sc->count++;
  return n;
}

static eddy_status_t eddy_parse_type_mismatch(eddy_parser_t *p,
                                              const eddy_tok_t *use,
                                              const eddy_type_t *want,
                                              const eddy_type_t *have) {
  eddy_buf_t w, h;
  eddy_buf_init(&w);
  eddy_buf_init(&h);
  eddy_ir_type_print(want, &w);
  eddy_ir_type_print(have, &h);
  eddy_status_t st = eddy_parse_error(
      p, use->pos, "use of value '%.*s' expects type '%s' but it has type '%s'",
      (int)use->len, use->text, w.data, h.data);
  eddy_buf_destroy(&w);
  eddy_buf_destroy(&h);
  return st;
}

static eddy_status_t eddy_parse_index_error(eddy_parser_t *p,
                                            const eddy_tok_t *use,
                                            uint32_t index,
                                            const eddy_pname_t *n) {
  return eddy_parse_error(p, use->pos,
                          "result number %u is out of range: '%.*s' has %u "
                          "value%s",
                          (unsigned)index, (int)n->len, n->text,
                          (unsigned)n->num_vals, n->num_vals == 1 ? "" : "s");
}

/// Binds a name token (%x or ^bb0) to vals in the current region and
/// resolves the forward references to it that can see this region.
static eddy_status_t eddy_parse_define(eddy_parser_t *p, const eddy_tok_t *tok,
                                       eddy_value_t **vals, uint32_t num_vals) {
  eddy_pname_t *n = eddy_parse_name(p, tok->text, tok->len);
  if (n->defined)
    return eddy_parse_error(p, tok->pos, "redefinition of %s '%.*s'",
                            tok->kind == EDDY_TOK_BLOCK ? "block" : "value",
                            (int)tok->len, tok->text);
  eddy_pregion_t *r = p->scope->region;
  n->defined = true;
  n->vals = vals;
  n->num_vals = num_vals;
  n->next_def = r->defs;
  r->defs = n;
  eddy_pfwd_t **link = &n->fwds;
  while (*link) {
    eddy_pfwd_t *f = *link;
    if (eddy_parse_effective(f->region) != r) {
      link = &f->next_for_name;
      continue;
    }
    if (f->index >= num_vals)
      return eddy_parse_index_error(p, &f->use, f->index, n);
    eddy_value_t *v = vals[f->index];
    if (v->type != f->placeholder->type)
      return eddy_parse_type_mismatch(p, &f->use, f->placeholder->type,
                                      v->type);
    eddy_ir_value_replace_all_uses(f->placeholder, v);
    f->resolved = true;
    *link = f->next_for_name;
  }
  return NULL;
}

/// Resolves a use (%x or %x#N) expected to have type `type`.
static eddy_status_t eddy_parse_use(eddy_parser_t *p, const eddy_tok_t *use,
                                    const eddy_type_t *type,
                                    eddy_value_t **out) {
  const char *hash = memchr(use->text, '#', use->len);
  size_t name_len = hash ? (size_t)(hash - use->text) : use->len;
  uint32_t index = 0;
  if (hash) {
    uint64_t v = 0;
    for (const char *c = hash + 1; c < use->text + use->len; c++) {
      v = v * 10 + (uint64_t)(*c - '0');
      if (v > UINT32_MAX)
        return eddy_parse_error(p, use->pos, "result number is too large");
    }
    index = (uint32_t)v;
  }
  eddy_pname_t *n = eddy_parse_name(p, use->text, name_len);
  if (n->defined) {
    if (index >= n->num_vals)
      return eddy_parse_index_error(p, use, index, n);
    eddy_value_t *v = n->vals[index];
    if (v->type != type)
      return eddy_parse_type_mismatch(p, use, type, v->type);
    *out = v;
    return NULL;
  }
  eddy_pregion_t *r = p->scope->region;
  for (eddy_pfwd_t *f = n->fwds; f; f = f->next_for_name) {
    if (f->index != index || eddy_parse_effective(f->region) != r)
      continue;
    if (f->placeholder->type != type) {
      eddy_buf_t a, b;
      eddy_buf_init(&a);
      eddy_buf_init(&b);
      eddy_ir_type_print(type, &a);
      eddy_ir_type_print(f->placeholder->type, &b);
      eddy_status_t st = eddy_parse_error(
          p, use->pos,
          "use of value '%.*s' expects type '%s' but an earlier use "
          "expects '%s'",
          (int)use->len, use->text, a.data, b.data);
      eddy_buf_destroy(&a);
      eddy_buf_destroy(&b);
      return st;
    }
    *out = f->placeholder;
    return NULL;
  }
  eddy_pfwd_t *f = eddy_arena_alloc(p->scratch, sizeof(*f));
  /* The placeholder lives with the IR: ops created in this parse point at
     it until the definition takes its uses over. */
  f->placeholder =
      eddy_arena_alloc(eddy_ir_ctx_arena(p->ctx), sizeof(eddy_value_t));
  f->placeholder->type = type;
  f->index = index;
  f->region = r;
  f->use = *use;
  f->next_for_name = n->fwds;
  n->fwds = f;
  eddy_pscope_t *sc = p->scope;
  if (sc->fwd_last)
    sc->fwd_last->next_in_scope = f;
  else
    sc->fwd_first = f;
  sc->fwd_last = f;
  *out = f->placeholder;
  return NULL;
}

/// Binds one value to a name token.
static eddy_status_t eddy_parse_define_one(eddy_parser_t *p,
                                           const eddy_tok_t *tok,
                                           eddy_value_t *v) {
  eddy_value_t **vals = eddy_arena_alloc(p->scratch, sizeof(*vals));
  vals[0] = v;
  return eddy_parse_define(p, tok, vals, 1);
}

/// A name token that defines something must not carry a result number.
static eddy_status_t eddy_parse_def_name(eddy_parser_t *p, const char *what,
                                         eddy_tok_t *out) {
  if (p->tok.kind != EDDY_TOK_VALUE)
    return eddy_parse_expected(p, what);
  if (memchr(p->tok.text, '#', p->tok.len))
    return eddy_parse_error(p, p->tok.pos,
                            "a defined name cannot have a result number "
                            "('#')");
  *out = p->tok;
  eddy_parse_advance(p);
  return NULL;
}

/* ---- Regions and blocks ------------------------------------------------------ */

static eddy_status_t eddy_parse_op(eddy_parser_t *p, eddy_block_t *block);

/// "^label" ["(" %arg ":" type, ... ")"] ":" starting a new block of r.
static eddy_status_t eddy_parse_block_header(eddy_parser_t *p,
                                             eddy_region_t *r,
                                             eddy_block_t **out) {
  eddy_tok_t label = p->tok;
  eddy_pregion_t *pr = p->scope->region;
  for (eddy_plabel_t *l = pr->labels; l; l = l->next)
    if (l->len == label.len && memcmp(l->text, label.text, label.len) == 0)
      return eddy_parse_error(p, label.pos, "redefinition of block '%.*s'",
                              (int)label.len, label.text);
  eddy_plabel_t *l = eddy_arena_alloc(p->scratch, sizeof(*l));
  l->text = label.text;
  l->len = label.len;
  l->next = pr->labels;
  pr->labels = l;
  eddy_parse_advance(p);
  eddy_block_t *b = eddy_ir_region_add_block(r);
  if (p->tok.kind == EDDY_TOK_LPAREN) {
    eddy_parse_advance(p);
    if (p->tok.kind != EDDY_TOK_RPAREN) {
      for (;;) {
        eddy_tok_t name;
        EDDY_RETURN_IF_ERROR(
            eddy_parse_def_name(p, "a block argument name", &name));
        EDDY_RETURN_IF_ERROR(eddy_parse_expect(
            p, EDDY_TOK_COLON, "':' after the block argument name"));
        const eddy_type_t *t;
        EDDY_RETURN_IF_ERROR(eddy_parse_type(p, &t));
        EDDY_RETURN_IF_ERROR(
            eddy_parse_define_one(p, &name, eddy_ir_block_add_arg(b, t)));
        if (p->tok.kind != EDDY_TOK_COMMA)
          break;
        eddy_parse_advance(p);
      }
    }
    EDDY_RETURN_IF_ERROR(eddy_parse_expect(
        p, EDDY_TOK_RPAREN, "')' to end the block argument list"));
  }
  EDDY_RETURN_IF_ERROR(
      eddy_parse_expect(p, EDDY_TOK_COLON, "':' after the block label"));
  *out = b;
  return NULL;
}

/// "{" blocks "}" into region r. entry, when given, is an existing entry
/// block (of a function or the module) that takes the first ops; arg_names
/// then name its arguments and the entry cannot have a label.
static eddy_status_t eddy_parse_region(eddy_parser_t *p, eddy_region_t *r,
                                       eddy_block_t *entry,
                                       const eddy_tok_t *arg_names) {
  EDDY_RETURN_IF_ERROR(eddy_parse_enter(p));
  EDDY_RETURN_IF_ERROR(
      eddy_parse_expect(p, EDDY_TOK_LBRACE, "'{' to begin a region"));
  eddy_parse_region_open(p);
  for (uint32_t i = 0; entry && arg_names && i < entry->num_args; i++)
    EDDY_RETURN_IF_ERROR(
        eddy_parse_define_one(p, &arg_names[i], entry->args[i]));
  eddy_block_t *block = entry;
  if (entry && p->tok.kind == EDDY_TOK_BLOCK)
    return eddy_parse_error(p, p->tok.pos,
                            "the entry block of a function or module cannot "
                            "have a label (function arguments are in the "
                            "signature)");
  if (!entry && p->tok.kind != EDDY_TOK_BLOCK &&
      p->tok.kind != EDDY_TOK_RBRACE)
    block = eddy_ir_region_add_block(r);
  while (p->tok.kind != EDDY_TOK_RBRACE) {
    if (p->tok.kind == EDDY_TOK_BLOCK) {
      EDDY_RETURN_IF_ERROR(eddy_parse_block_header(p, r, &block));
      continue;
    }
    if (p->tok.kind == EDDY_TOK_EOF || p->tok.kind == EDDY_TOK_ERROR)
      return eddy_parse_expected(p, "an operation or '}'");
    EDDY_RETURN_IF_ERROR(eddy_parse_op(p, block));
  }
  eddy_parse_advance(p);
  eddy_parse_region_close(p);
  eddy_parse_leave(p);
  return NULL;
}

/// Moves the blocks parsed into a holder op's region into the new op's
/// (empty) region. Regions are parsed before the op exists, because its
/// attributes and types follow them in the text; no IR function moves
/// blocks, and only the region links change.
static void eddy_parse_move_blocks(eddy_region_t *dst, eddy_region_t *src) {
  for (eddy_block_t *b = src->first; b; b = b->next)
    b->region = dst;
  dst->first = src->first;
  dst->last = src->last;
  src->first = src->last = NULL;
}

/* ---- Ops ----------------------------------------------------------------------- */

typedef struct eddy_presult {
  eddy_tok_t name;
  uint32_t count;
} eddy_presult_t;

static const eddy_type_t *const eddy_parse_no_types[1] = {NULL};

/// An unknown op name, reported with eddy_ir_op_create's own message.
static eddy_status_t eddy_parse_unknown_op(eddy_parser_t *p, const char *name,
                                           eddy_srcpos_t at) {
  eddy_op_state_t st = {0};
  st.name = name;
  st.result_types = eddy_parse_no_types;
  eddy_op_t *op = NULL;
  eddy_status_t err = eddy_ir_op_create(p->ctx, &st, &op);
  eddy_status_t out = eddy_parse_error(
      p, at, "%s", err ? eddy_status_message(err) : "unknown op");
  eddy_status_destroy(err);
  return out;
}

/// The func.func custom form; the current token is 'func.func'.
static eddy_status_t eddy_parse_func(eddy_parser_t *p, eddy_block_t *block,
                                     eddy_srcpos_t start) {
  if (!p->module || block != eddy_ir_module_body(p->module))
    return eddy_parse_error(p, start,
                            "'func.func' is only allowed at module level");
  eddy_parse_advance(p);
  eddy_tok_t sym = p->tok;
  if (sym.kind != EDDY_TOK_SYMBOL)
    return eddy_parse_expected(p, "the function name (@name)");
  size_t name_len;
  char *name = eddy_parse_string_value(p, &sym, 1, &name_len);
  if (name_len == 0 || memchr(name, '\0', name_len))
    return eddy_parse_error(p, sym.pos, "invalid function name");
  eddy_parse_advance(p);
  EDDY_RETURN_IF_ERROR(eddy_parse_expect(p, EDDY_TOK_LPAREN,
                                         "'(' to begin the argument list"));
  eddy_tok_t *arg_names = NULL;
  const eddy_type_t **ins = NULL;
  size_t nin = 0, cap_names = 0, cap_ins = 0;
  if (p->tok.kind != EDDY_TOK_RPAREN) {
    for (;;) {
      eddy_tok_t name_tok;
      EDDY_RETURN_IF_ERROR(
          eddy_parse_def_name(p, "an argument (%name: type)", &name_tok));
      EDDY_RETURN_IF_ERROR(eddy_parse_expect(
          p, EDDY_TOK_COLON, "':' after the argument name"));
      const eddy_type_t *t;
      EDDY_RETURN_IF_ERROR(eddy_parse_type(p, &t));
      arg_names = eddy_parse_grow(p, arg_names, sizeof(*arg_names), nin,
                                  &cap_names);
      ins = eddy_parse_grow(p, ins, sizeof(*ins), nin, &cap_ins);
      arg_names[nin] = name_tok;
      ins[nin++] = t;
      if (p->tok.kind != EDDY_TOK_COMMA)
        break;
      eddy_parse_advance(p);
    }
  }
  EDDY_RETURN_IF_ERROR(eddy_parse_expect(p, EDDY_TOK_RPAREN,
                                         "')' to end the argument list"));
  const eddy_type_t **outs = NULL;
  size_t nout = 0;
  if (p->tok.kind == EDDY_TOK_ARROW) {
    eddy_parse_advance(p);
    EDDY_RETURN_IF_ERROR(eddy_parse_result_types(p, &outs, &nout));
  }
  eddy_named_attr_t *attrs = NULL;
  size_t nattrs = 0;
  if (eddy_parse_is_word(p, "attributes")) {
    eddy_srcpos_t at = p->tok.pos;
    eddy_parse_advance(p);
    EDDY_RETURN_IF_ERROR(eddy_parse_attr_dict(p, &attrs, &nattrs));
    for (size_t i = 0; i < nattrs; i++)
      if (strcmp(attrs[i].name->str, "sym_name") == 0 ||
          strcmp(attrs[i].name->str, "function_type") == 0)
        return eddy_parse_error(p, at,
                                "'%s' is given by the function syntax, not "
                                "as an attribute",
                                attrs[i].name->str);
  }
  if (p->tok.kind != EDDY_TOK_LBRACE)
    return eddy_parse_expected(p, "'{' to begin the function body");
  if (eddy_ir_module_lookup_func(p->module, name))
    return eddy_parse_error(p, sym.pos, "redefinition of function '@%s'",
                            name);
  eddy_op_t *func;
  eddy_status_t err = eddy_ir_func_create(p->module, name, ins, nin, outs,
                                          nout, eddy_parse_loc_at(p, start),
                                          &func);
  if (err) {
    eddy_status_t st =
        eddy_parse_error(p, start, "%s", eddy_status_message(err));
    eddy_status_destroy(err);
    return st;
  }
  for (size_t i = 0; i < nattrs; i++)
    eddy_ir_op_set_attr(func, attrs[i].name->str, attrs[i].value);
  eddy_parse_scope_push(p);
  EDDY_RETURN_IF_ERROR(eddy_parse_region(p, &func->regions[0],
                                         eddy_ir_func_entry(func), arg_names));
  EDDY_RETURN_IF_ERROR(eddy_parse_scope_pop(p));
  const eddy_loc_t *loc = func->loc;
  EDDY_RETURN_IF_ERROR(eddy_parse_opt_loc(p, &loc));
  /* The trailing location comes after the body, which had to be parsed
     into the function already; no IR function sets a location. */
  func->loc = loc;
  return NULL;
}

/// Result names: %a, %b:2, ... "=" (the current token is the first name).
static eddy_status_t eddy_parse_result_names(eddy_parser_t *p,
                                             eddy_presult_t **out,
                                             size_t *out_n,
                                             uint64_t *out_total) {
  eddy_presult_t *groups = NULL;
  size_t n = 0, cap = 0;
  uint64_t total = 0;
  for (;;) {
    eddy_tok_t name;
    EDDY_RETURN_IF_ERROR(eddy_parse_def_name(p, "a result name", &name));
    uint32_t count = 1;
    if (p->tok.kind == EDDY_TOK_COLON) {
      eddy_parse_advance(p);
      eddy_srcpos_t at = p->tok.pos;
      EDDY_RETURN_IF_ERROR(eddy_parse_u32(p, "a result count", &count));
      if (count == 0)
        return eddy_parse_error(p, at, "a result group needs at least one "
                                       "result");
    }
    groups = eddy_parse_grow(p, groups, sizeof(*groups), n, &cap);
    groups[n].name = name;
    groups[n++].count = count;
    total += count;
    if (p->tok.kind != EDDY_TOK_COMMA)
      break;
    eddy_parse_advance(p);
  }
  EDDY_RETURN_IF_ERROR(
      eddy_parse_expect(p, EDDY_TOK_EQUAL, "'=' after the result names"));
  *out = groups;
  *out_n = n;
  *out_total = total;
  return NULL;
}

/// The generic form: "name"(operands) [(regions)] [{attrs}] : (T) -> R.
static eddy_status_t eddy_parse_generic_op(eddy_parser_t *p,
                                           eddy_block_t *block,
                                           eddy_srcpos_t start,
                                           const eddy_presult_t *groups,
                                           size_t ngroups, uint64_t nres) {
  eddy_tok_t name_tok = p->tok;
  size_t name_len;
  char *name = eddy_parse_string_value(p, &name_tok, 0, &name_len);
  if (name_len == 0 || memchr(name, '\0', name_len))
    return eddy_parse_error(p, name_tok.pos, "invalid operation name");
  const eddy_op_def_t *def = eddy_ir_ctx_lookup_op(p->ctx, name, name_len);
  if (!def)
    return eddy_parse_unknown_op(p, name, name_tok.pos);
  eddy_parse_advance(p);

  EDDY_RETURN_IF_ERROR(eddy_parse_expect(p, EDDY_TOK_LPAREN,
                                         "'(' to begin the operand list"));
  eddy_tok_t *refs = NULL;
  size_t nops = 0, cap_refs = 0;
  if (p->tok.kind != EDDY_TOK_RPAREN) {
    for (;;) {
      if (p->tok.kind != EDDY_TOK_VALUE)
        return eddy_parse_expected(p, "an operand (%name)");
      refs = eddy_parse_grow(p, refs, sizeof(*refs), nops, &cap_refs);
      refs[nops++] = p->tok;
      eddy_parse_advance(p);
      if (p->tok.kind != EDDY_TOK_COMMA)
        break;
      eddy_parse_advance(p);
    }
  }
  EDDY_RETURN_IF_ERROR(eddy_parse_expect(p, EDDY_TOK_RPAREN,
                                         "',' or ')' to end the operand list"));

  /* Regions are parsed into holder ops, moved once the op exists. */
  eddy_op_t **holders = NULL;
  size_t nregions = 0, cap_holders = 0;
  if (p->tok.kind == EDDY_TOK_LPAREN) {
    eddy_parse_advance(p);
    bool isolated = eddy_text_is_isolated(def, name);
    if (isolated)
      eddy_parse_scope_push(p);
    for (;;) {
      if (p->tok.kind != EDDY_TOK_LBRACE)
        return eddy_parse_expected(p, "'{' to begin a region");
      eddy_op_state_t hs = {0};
      hs.name = "builtin.module";
      hs.result_types = eddy_parse_no_types;
      hs.num_regions = 1;
      eddy_op_t *holder;
      eddy_status_t err = eddy_ir_op_create(p->ctx, &hs, &holder);
      if (err)
        return err; /* builtin.module is always registered */
      EDDY_RETURN_IF_ERROR(
          eddy_parse_region(p, &holder->regions[0], NULL, NULL));
      holders = eddy_parse_grow(p, holders, sizeof(*holders), nregions,
                                &cap_holders);
      holders[nregions++] = holder;
      if (p->tok.kind != EDDY_TOK_COMMA)
        break;
      eddy_parse_advance(p);
    }
    EDDY_RETURN_IF_ERROR(eddy_parse_expect(p, EDDY_TOK_RPAREN,
                                           "',' or ')' to end the region "
                                           "list"));
    if (isolated)
      EDDY_RETURN_IF_ERROR(eddy_parse_scope_pop(p));
  }

  eddy_named_attr_t *attrs = NULL;
  size_t nattrs = 0;
  if (p->tok.kind == EDDY_TOK_LBRACE)
    EDDY_RETURN_IF_ERROR(eddy_parse_attr_dict(p, &attrs, &nattrs));

  EDDY_RETURN_IF_ERROR(eddy_parse_expect(
      p, EDDY_TOK_COLON, "':' and the type signature of the op"));
  eddy_srcpos_t sig = p->tok.pos;
  const eddy_type_t **ins, **outs;
  size_t nin, nout;
  EDDY_RETURN_IF_ERROR(eddy_parse_type_list(p, &ins, &nin));
  EDDY_RETURN_IF_ERROR(eddy_parse_expect(p, EDDY_TOK_ARROW, "'->'"));
  EDDY_RETURN_IF_ERROR(eddy_parse_result_types(p, &outs, &nout));
  const eddy_loc_t *loc = eddy_parse_loc_at(p, start);
  EDDY_RETURN_IF_ERROR(eddy_parse_opt_loc(p, &loc));

  if (nin != nops)
    return eddy_parse_error(p, sig,
                            "op has %zu operand%s but its signature lists "
                            "%zu operand type%s",
                            nops, nops == 1 ? "" : "s", nin,
                            nin == 1 ? "" : "s");
  /* Results may go unnamed altogether; named, they must all be named. */
  if (ngroups && nres != nout)
    return eddy_parse_error(p, start,
                            "op defines %llu result%s but its signature "
                            "lists %zu result type%s",
                            (unsigned long long)nres, nres == 1 ? "" : "s",
                            nout, nout == 1 ? "" : "s");
  eddy_value_t **operands =
      eddy_arena_alloc(p->scratch, (nops ? nops : 1) * sizeof(*operands));
  for (size_t i = 0; i < nops; i++)
    EDDY_RETURN_IF_ERROR(eddy_parse_use(p, &refs[i], ins[i], &operands[i]));

  eddy_op_state_t st = {0};
  st.name = name;
  st.operands = operands;
  st.num_operands = nops;
  st.attrs = attrs;
  st.num_attrs = nattrs;
  st.result_types = nout ? outs : eddy_parse_no_types;
  st.num_results = nout;
  st.num_regions = nregions;
  st.loc = loc;
  eddy_op_t *op;
  eddy_status_t err = eddy_ir_op_create(p->ctx, &st, &op);
  if (err) {
    eddy_status_t e = eddy_parse_error(p, start, "%s", eddy_status_message(err));
    eddy_status_destroy(err);
    return e;
  }
  for (size_t i = 0; i < nregions; i++)
    eddy_parse_move_blocks(&op->regions[i], &holders[i]->regions[0]);
  eddy_ir_op_append(op, block);

  uint32_t base = 0;
  for (size_t g = 0; g < ngroups; g++) {
    uint32_t count = groups[g].count;
    eddy_value_t **vals = eddy_arena_alloc(p->scratch, count * sizeof(*vals));
    for (uint32_t i = 0; i < count; i++)
      vals[i] = &op->results[base + i];
    EDDY_RETURN_IF_ERROR(eddy_parse_define(p, &groups[g].name, vals, count));
    base += count;
  }
  return NULL;
}

static eddy_status_t eddy_parse_op(eddy_parser_t *p, eddy_block_t *block) {
  eddy_srcpos_t start = p->tok.pos;
  eddy_presult_t *groups = NULL;
  size_t ngroups = 0;
  uint64_t nres = 0;
  if (p->tok.kind == EDDY_TOK_VALUE)
    EDDY_RETURN_IF_ERROR(eddy_parse_result_names(p, &groups, &ngroups, &nres));
  if (p->tok.kind == EDDY_TOK_STRING)
    return eddy_parse_generic_op(p, block, start, groups, ngroups, nres);
  if (eddy_parse_is_word(p, "func.func")) {
    if (ngroups)
      return eddy_parse_error(p, start, "'func.func' has no results");
    return eddy_parse_func(p, block, start);
  }
  return eddy_parse_expected(p, "an operation (a quoted op name or "
                                "'func.func')");
}

/* ---- Modules ------------------------------------------------------------------ */

/// `module [attributes {..}] { ops } [loc]`, or bare ops forming an implicit
/// module (an empty input is an empty module).
static eddy_status_t eddy_parse_toplevel(eddy_parser_t *p) {
  eddy_parse_advance(p);
  eddy_srcpos_t start = p->tok.pos;
  if (!eddy_parse_is_word(p, "module")) {
    eddy_srcpos_t first = {0, 1, 1};
    p->module = eddy_ir_module_create(p->ctx, eddy_parse_loc_at(p, first));
    if (!p->module)
      return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
    eddy_parse_scope_push(p);
    eddy_block_t *body = eddy_ir_module_body(p->module);
    while (p->tok.kind != EDDY_TOK_EOF)
      EDDY_RETURN_IF_ERROR(eddy_parse_op(p, body));
    return eddy_parse_scope_pop(p);
  }
  p->module = eddy_ir_module_create(p->ctx, eddy_parse_loc_at(p, start));
  if (!p->module)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  eddy_op_t *mop = p->module->op;
  eddy_parse_advance(p);
  if (eddy_parse_is_word(p, "attributes")) {
    eddy_parse_advance(p);
    eddy_named_attr_t *attrs;
    size_t nattrs;
    EDDY_RETURN_IF_ERROR(eddy_parse_attr_dict(p, &attrs, &nattrs));
    for (size_t i = 0; i < nattrs; i++)
      eddy_ir_op_set_attr(mop, attrs[i].name->str, attrs[i].value);
  }
  if (p->tok.kind != EDDY_TOK_LBRACE)
    return eddy_parse_expected(p, "'{' to begin the module body");
  eddy_parse_scope_push(p);
  EDDY_RETURN_IF_ERROR(eddy_parse_region(
      p, &mop->regions[0], eddy_ir_module_body(p->module), NULL));
  EDDY_RETURN_IF_ERROR(eddy_parse_scope_pop(p));
  const eddy_loc_t *loc = mop->loc;
  EDDY_RETURN_IF_ERROR(eddy_parse_opt_loc(p, &loc));
  mop->loc = loc; /* as for functions: known only after the body */
  if (p->tok.kind != EDDY_TOK_EOF)
    return eddy_parse_expected(p, "end of file after the module");
  return NULL;
}

eddy_status_t eddy_ir_parse_module(eddy_ctx_t *ctx, const char *filename,
                                   const char *text, size_t len,
                                   eddy_module_t **out_module) {
  *out_module = NULL;
  eddy_parser_t *p = calloc(1, sizeof(*p));
  if (!p)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  p->ctx = ctx;
  p->filename = filename ? filename : "<input>";
  eddy_lex_init(&p->lx, text ? text : "", text ? len : 0);
  p->scratch = eddy_arena_create();
  if (!p->scratch) {
    free(p);
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  }
  eddy_status_t st = eddy_parse_toplevel(p);
  if (st) {
    if (p->module)
      eddy_ir_module_destroy(p->module);
  } else {
    *out_module = p->module;
  }
  eddy_arena_destroy(p->scratch);
  free(p);
  return st;
}

eddy_status_t eddy_ir_parse_file(eddy_ctx_t *ctx, const char *path,
                                 eddy_module_t **out_module) {
  *out_module = NULL;
  bool is_stdin = strcmp(path, "-") == 0;
  FILE *f = is_stdin ? stdin : fopen(path, "rb");
  if (!f)
    return eddy_status_create(EDDY_ERR_IO, "cannot open '%s': %s", path,
                              strerror(errno));
  eddy_buf_t text;
  eddy_buf_init(&text);
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
    eddy_buf_append(&text, chunk, n);
  int read_errno = ferror(f) ? (errno ? errno : EIO) : 0;
  if (!is_stdin)
    fclose(f);
  if (read_errno) {
    eddy_buf_destroy(&text);
    return eddy_status_create(EDDY_ERR_IO, "cannot read '%s': %s", path,
                              strerror(read_errno));
  }
  eddy_status_t st = eddy_ir_parse_module(ctx, is_stdin ? "<stdin>" : path,
                                          text.data, text.len, out_module);
  eddy_buf_destroy(&text);
  return st;
}

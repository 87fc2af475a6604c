/// legalize-tf, first step: the Optional outputs of an If that hold a value
/// of one type when one branch runs and of another when the other does.
///
/// The gradient of an If (cond_v2, the design the "Functional while_loop"
/// RFC builds on) needs the intermediates of the branch that ran: the
/// forward If returns them wrapped in Optionals, OptionalFromValue in the
/// branch that made them, OptionalNone in the other, and the gradient If,
/// on the same predicate, unwraps them with OptionalGetValue in the
/// matching branch. Both branches return as many Optionals as the branch
/// with the most intermediates: output N + i carries the then branch's
/// i-th intermediate or the else branch's, TensorFlow typing both as
/// variant. eddy types each value, so where the two branches' Optionals at
/// one output hold different types, the output is split in two, one per
/// branch: the then branch returns its Optional first and an OptionalNone
/// of the else type second, the else branch an OptionalNone of the then
/// type first and its own Optional second. The gradient If passes both
/// along: its then branch reads the first, its else branch the second.
/// An Optional of one type throughout is left as it is.
#include "lower/tf/tf_lower_internal.h"

#include <stdlib.h>
#include <string.h>

static bool is_if(const eddy_op_t *op) {
  return eddy_ir_op_is(op, "tf.If") || eddy_ir_op_is(op, "tf.StatelessIf");
}

/// The function a symbol attribute of op names, or NULL.
static eddy_op_t *callee(eddy_module_t *m, const eddy_op_t *op,
                         const char *attr) {
  const eddy_attr_t *a = eddy_ir_op_attr(op, attr);
  if (!a || a->kind != EDDY_ATTR_SYMBOL)
    return NULL;
  return eddy_ir_module_lookup_func(m, a->u.str.data);
}

typedef struct sym_count {
  const char *name;
  size_t n;
} sym_count_t;

static void count_attr(const eddy_attr_t *a, sym_count_t *c) {
  if (a->kind == EDDY_ATTR_ARRAY)
    for (size_t i = 0; i < a->u.array.len; i++)
      count_attr(a->u.array.elems[i], c);
  else if (a->kind == EDDY_ATTR_SYMBOL && strcmp(a->u.str.data, c->name) == 0)
    c->n++;
}

static eddy_walk_result_t count_walk(eddy_op_t *op, void *user) {
  for (uint32_t i = 0; i < op->num_attrs; i++)
    count_attr(op->attrs[i].value, user);
  return EDDY_WALK_ADVANCE;
}

/// How many symbol attributes of the module name func.
static size_t uses_of(eddy_module_t *m, const eddy_op_t *func) {
  sym_count_t c = {eddy_ir_func_name(func), 0};
  for (eddy_op_t *f = eddy_ir_module_body(m)->first; f; f = f->next)
    eddy_ir_walk_pre(f, count_walk, &c);
  return c.n;
}

/// The function `attr` of If u names, made u's own: when another node also
/// names it (grappler's specialized copies of a gradient's functions call
/// the same branches as the originals), u gets a copy `NAME.K` of it.
/// *copied says whether it did (the copy's Ifs are new ones).
static eddy_status_t own_branch(eddy_module_t *m, eddy_op_t *u,
                                const char *attr, eddy_op_t **out,
                                bool *copied) {
  eddy_op_t *f = callee(m, u, attr);
  *out = f;
  if (!f || uses_of(m, f) <= 1)
    return NULL;
  const char *base = eddy_ir_func_name(f);
  size_t cap = strlen(base) + 24;
  char *name = malloc(cap);
  if (!name)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  for (unsigned k = 1;; k++) {
    snprintf(name, cap, "%s.%u", base, k);
    if (!eddy_ir_module_lookup_func(m, name))
      break;
  }
  eddy_ptrmap_t map;
  eddy_ptrmap_init(&map);
  eddy_op_t *copy = eddy_ir_op_clone(f, &map);
  eddy_ptrmap_destroy(&map);
  eddy_ir_op_set_attr(copy, "sym_name",
                      eddy_ir_string_attr_get(m->ctx, name, strlen(name)));
  eddy_ir_op_insert_after(copy, f);
  eddy_ir_op_set_attr(u, attr,
                      eddy_ir_symbol_attr_get(m->ctx, name, strlen(name)));
  free(name);
  *out = copy;
  *copied = true;
  return NULL;
}

static eddy_status_t error_at(const eddy_op_t *op, const char *msg) {
  eddy_buf_t loc;
  eddy_buf_init(&loc);
  eddy_ir_loc_format(op->loc, &loc);
  eddy_status_t st =
      eddy_status_create_at(EDDY_ERR_UNSUPPORTED, loc.data, "%s", msg);
  eddy_buf_destroy(&loc);
  return st;
}

/// Appends an argument of type t to func (its entry block and its type).
static eddy_value_t *add_arg(eddy_ctx_t *ctx, eddy_op_t *func,
                             const eddy_type_t *t) {
  const eddy_type_t *ft = eddy_ir_func_type(func);
  const eddy_type_t **in = malloc((ft->num_inputs + 1) * sizeof(*in));
  if (!in)
    return NULL;
  memcpy(in, ft->inputs, ft->num_inputs * sizeof(*in));
  in[ft->num_inputs] = t;
  eddy_ir_func_set_type(func,
                        eddy_ir_func_type_get(ctx, in, ft->num_inputs + 1,
                                              ft->outputs, ft->num_outputs));
  free(in);
  return eddy_ir_block_add_arg(eddy_ir_func_entry(func), t);
}

/// An OptionalNone of type t, before func's return.
static eddy_status_t none_of(eddy_ctx_t *ctx, eddy_op_t *func,
                             const eddy_type_t *t, eddy_value_t **out) {
  eddy_op_t *ret = eddy_ir_block_terminator(eddy_ir_func_entry(func));
  eddy_builder_t bb;
  eddy_ir_builder_init(&bb, ctx);
  eddy_ir_builder_set_before(&bb, ret);
  eddy_op_t *op = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_make(&bb, "tf.OptionalNone", NULL, 0, NULL, 0,
                                     &t, 1, ret->loc, &op));
  *out = eddy_ir_op_result(op, 0);
  return NULL;
}

/// func returns `r_val` at r (NULL: unchanged) and appends `extra`.
static eddy_status_t set_results(eddy_ctx_t *ctx, eddy_op_t *func, uint32_t r,
                                 eddy_value_t *r_val, eddy_value_t *extra) {
  eddy_op_t *ret = eddy_ir_block_terminator(eddy_ir_func_entry(func));
  uint32_t n = ret->num_operands;
  eddy_value_t **vals = malloc((n + 1) * sizeof(*vals));
  const eddy_type_t **types = malloc((n + 1) * sizeof(*types));
  if (!vals || !types) {
    free(vals);
    free(types);
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  }
  for (uint32_t i = 0; i < n; i++)
    vals[i] = eddy_ir_op_operand(ret, i);
  if (r_val)
    vals[r] = r_val;
  vals[n] = extra;
  for (uint32_t i = 0; i <= n; i++)
    types[i] = vals[i]->type;
  eddy_ir_op_set_operands(ret, vals, n + 1);
  const eddy_type_t *ft = eddy_ir_func_type(func);
  eddy_ir_func_set_type(
      func,
      eddy_ir_func_type_get(ctx, ft->inputs, ft->num_inputs, types, n + 1));
  free(vals);
  free(types);
  return NULL;
}

/// u again, with one more result of type t (appended) and result r of type
/// rt; the uses of u's results move to the new op's.
static eddy_status_t grow_if(eddy_ctx_t *ctx, eddy_op_t *u, uint32_t r,
                             const eddy_type_t *rt, const eddy_type_t *t,
                             eddy_op_t **out) {
  uint32_t n = u->num_results;
  const eddy_type_t **types = malloc((n + 1) * sizeof(*types));
  eddy_value_t **ops = malloc((u->num_operands + 1) * sizeof(*ops));
  eddy_named_attr_t *attrs = malloc((u->num_attrs + 1) * sizeof(*attrs));
  eddy_status_t st = NULL;
  if (!types || !ops || !attrs)
    st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  for (uint32_t i = 0; !st && i < n; i++)
    types[i] = i == r ? rt : u->results[i].type;
  for (uint32_t i = 0; !st && i < u->num_operands; i++)
    ops[i] = eddy_ir_op_operand(u, i);
  for (uint32_t i = 0; !st && i < u->num_attrs; i++) {
    attrs[i] = u->attrs[i];
    const eddy_attr_t *a = attrs[i].value;
    // Tout names one dtype per result.
    if (strcmp(attrs[i].name->str, "Tout") == 0 && a->kind == EDDY_ATTR_ARRAY) {
      const eddy_attr_t **el = malloc((a->u.array.len + 1) * sizeof(*el));
      if (!el) {
        st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
        break;
      }
      memcpy(el, a->u.array.elems, a->u.array.len * sizeof(*el));
      el[a->u.array.len] = eddy_ir_string_attr_get(ctx, "variant", 7);
      attrs[i].value = eddy_ir_array_attr_get(ctx, el, a->u.array.len + 1);
      free(el);
    }
  }
  if (!st) {
    types[n] = t;
    eddy_builder_t bb;
    eddy_ir_builder_init(&bb, ctx);
    eddy_ir_builder_set_before(&bb, u);
    eddy_op_state_t s = {.name = u->name->str,
                         .operands = ops,
                         .num_operands = u->num_operands,
                         .attrs = attrs,
                         .num_attrs = u->num_attrs,
                         .result_types = types,
                         .num_results = n + 1,
                         .loc = u->loc};
    st = eddy_ir_build(&bb, &s, out);
  }
  if (!st) {
    for (uint32_t i = 0; i < n; i++)
      eddy_ir_value_replace_all_uses(&u->results[i], &(*out)->results[i]);
    eddy_ir_op_erase(u);
  }
  free(types);
  free(ops);
  free(attrs);
  return st;
}

/// The predicate without the Identity ops that pass it on.
static eddy_value_t *pred_of(const eddy_op_t *op) {
  eddy_value_t *v = eddy_ir_op_operand(op, 0);
  for (int i = 0; i < 64 && v->def && eddy_ir_op_is(v->def, "tf.Identity"); i++)
    v = eddy_ir_op_operand(v->def, 0);
  return v;
}

/// The gradient If `o` reads the split output through operand k: it gets
/// `second` as a new last operand; its else branch reads that instead (o
/// gets its own branches first where other nodes call them too).
static eddy_status_t pass_second(eddy_module_t *m, eddy_op_t *u, eddy_op_t *o,
                                 uint32_t k, eddy_value_t *second,
                                 bool *copied) {
  char msg[512];
  const char *un = u->loc && u->loc->file ? u->loc->file->str : "?";
  const char *on = o->loc && o->loc->file ? o->loc->file->str : "?";
  if (!is_if(o) || k == 0 || pred_of(o) != pred_of(u)) {
    snprintf(msg, sizeof msg,
             "an Optional output of If '%s' holds a value of one type from "
             "one branch and of another from the other; only an If on the "
             "same predicate (its gradient) can read it, and node '%s' "
             "does not",
             un, on);
    return error_at(o, msg);
  }
  eddy_op_t *fo = NULL, *go = NULL;
  if (callee(m, o, "then_branch") != callee(m, o, "else_branch")) {
    EDDY_RETURN_IF_ERROR(own_branch(m, o, "then_branch", &fo, copied));
    EDDY_RETURN_IF_ERROR(own_branch(m, o, "else_branch", &go, copied));
  }
  if (!fo || !go || fo == go || uses_of(m, fo) != 1 || uses_of(m, go) != 1) {
    snprintf(msg, sizeof msg,
             "the branches of If '%s' read an Optional whose type depends on "
             "the branch, so they must be two functions no other node calls",
             on);
    return error_at(o, msg);
  }
  uint32_t n = o->num_operands;
  eddy_value_t **ops = malloc((n + 1) * sizeof(*ops));
  if (!ops)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  for (uint32_t i = 0; i < n; i++)
    ops[i] = eddy_ir_op_operand(o, i);
  ops[n] = second;
  eddy_ir_op_set_operands(o, ops, n + 1);
  free(ops);
  eddy_value_t *unused = add_arg(m->ctx, fo, second->type);
  eddy_value_t *arg = add_arg(m->ctx, go, second->type);
  if (!unused || !arg)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  eddy_block_t *entry = eddy_ir_func_entry(go);
  eddy_ir_value_replace_all_uses(entry->args[k - 1], arg);
  // What the else branch gets out of it has the else type.
  for (eddy_use_t *use = arg->uses; use; use = use->next) {
    eddy_op_t *g = use->owner;
    if (eddy_ir_op_is(g, "tf.OptionalGetValue") && g->num_results == 1 &&
        second->type->kind == EDDY_TYPE_LIST)
      eddy_ir_value_set_type(&g->results[0], second->type->elem);
  }
  return NULL;
}

typedef struct reader_list {
  eddy_op_t **owner;
  uint32_t *index;
  size_t n, cap;
  bool oom;
} reader_list_t;

/// The ops reading v, looking through Identity.
static void collect_readers(eddy_value_t *v, reader_list_t *rd, int depth) {
  for (eddy_use_t *use = v->uses; use; use = use->next) {
    eddy_op_t *o = use->owner;
    if (eddy_ir_op_is(o, "tf.Identity") && depth < 16) {
      collect_readers(&o->results[0], rd, depth + 1);
      continue;
    }
    if (rd->n == rd->cap) {
      size_t nc = rd->cap ? 2 * rd->cap : 8;
      eddy_op_t **no = realloc(rd->owner, nc * sizeof(*no));
      if (no)
        rd->owner = no;
      uint32_t *ni = no ? realloc(rd->index, nc * sizeof(*ni)) : NULL;
      if (!ni) {
        rd->oom = true;
        return;
      }
      rd->index = ni;
      rd->cap = nc;
    }
    rd->owner[rd->n] = o;
    rd->index[rd->n++] = use->index;
  }
}

/// A ZerosLike of the split output (a second-order gradient's zero adjoint
/// of it, passed to the gradient If): a ZerosLike of `second` next to it,
/// which its readers get as they get `second`.
static eddy_status_t pass_zeros(eddy_module_t *m, eddy_op_t *u, eddy_op_t *z,
                                eddy_value_t *second, bool *copied) {
  eddy_builder_t bb;
  eddy_ir_builder_init(&bb, m->ctx);
  eddy_ir_builder_set_after(&bb, z);
  eddy_op_t *z2 = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_make(&bb, "tf.ZerosLike", &second, 1,
                                     z->attrs, z->num_attrs, &second->type, 1,
                                     z->loc, &z2));
  reader_list_t rd = {0};
  collect_readers(&z->results[0], &rd, 0);
  eddy_status_t st =
      rd.oom ? eddy_status_create(EDDY_ERR_RESOURCE, "out of memory") : NULL;
  for (size_t i = 0; !st && i < rd.n; i++)
    st = pass_second(m, u, rd.owner[i], rd.index[i], &z2->results[0], copied);
  free(rd.owner);
  free(rd.index);
  return st;
}

/// Splits output r of If u (then type a, else type b).
static eddy_status_t split(eddy_module_t *m, eddy_op_t **u, eddy_op_t *f,
                           eddy_op_t *g, uint32_t r, const eddy_type_t *a,
                           const eddy_type_t *b, bool *copied) {
  eddy_ctx_t *ctx = m->ctx;
  eddy_value_t *f_none = NULL, *g_none = NULL;
  eddy_op_t *gret = eddy_ir_block_terminator(eddy_ir_func_entry(g));
  eddy_value_t *g_own = eddy_ir_op_operand(gret, r);
  EDDY_RETURN_IF_ERROR(none_of(ctx, f, b, &f_none));
  EDDY_RETURN_IF_ERROR(none_of(ctx, g, a, &g_none));
  EDDY_RETURN_IF_ERROR(set_results(ctx, f, r, NULL, f_none));
  EDDY_RETURN_IF_ERROR(set_results(ctx, g, r, g_none, g_own));
  eddy_op_t *grown = NULL;
  EDDY_RETURN_IF_ERROR(grow_if(ctx, *u, r, a, b, &grown));
  *u = grown;
  eddy_value_t *second = &grown->results[grown->num_results - 1];
  eddy_value_t *first = &grown->results[r];
  // The readers (through the Identity ops of inlined calls), before their
  // operand lists change.
  reader_list_t rd = {0};
  collect_readers(first, &rd, 0);
  eddy_status_t st =
      rd.oom ? eddy_status_create(EDDY_ERR_RESOURCE, "out of memory") : NULL;
  for (size_t i = 0; !st && i < rd.n; i++) {
    eddy_op_t *o = rd.owner[i];
    if (eddy_ir_op_is(o, "tf.ZerosLike") && o->num_results == 1)
      st = pass_zeros(m, grown, o, second, copied);
    else
      st = pass_second(m, grown, o, rd.index[i], second, copied);
  }
  free(rd.owner);
  free(rd.index);
  return st;
}

typedef struct if_list {
  eddy_op_t **v;
  size_t n, cap;
  bool oom;
} if_list_t;

static eddy_walk_result_t collect_ifs(eddy_op_t *op, void *user) {
  if_list_t *l = user;
  if (!is_if(op))
    return EDDY_WALK_ADVANCE;
  if (l->n == l->cap) {
    size_t nc = l->cap ? 2 * l->cap : 16;
    eddy_op_t **nv = realloc(l->v, nc * sizeof(*nv));
    if (!nv) {
      l->oom = true;
      return EDDY_WALK_INTERRUPT;
    }
    l->v = nv;
    l->cap = nc;
  }
  l->v[l->n++] = op;
  return EDDY_WALK_ADVANCE;
}

/// One pass over the module's Ifs; *copied when a function was copied to
/// give an If its own branches (the copy holds Ifs the pass did not see).
static eddy_status_t split_pass(eddy_module_t *m, bool *copied) {
  if_list_t ifs = {0};
  for (eddy_op_t *f = eddy_ir_module_body(m)->first; f; f = f->next)
    eddy_ir_walk_pre(f, collect_ifs, &ifs);
  eddy_status_t st =
      ifs.oom ? eddy_status_create(EDDY_ERR_RESOURCE, "out of memory") : NULL;
  for (size_t i = 0; !st && !*copied && i < ifs.n; i++) {
    eddy_op_t *u = ifs.v[i];
    eddy_op_t *f = callee(m, u, "then_branch"),
              *g = callee(m, u, "else_branch");
    if (!f || !g || f == g)
      continue; // legalize-tf reports a missing function
    for (uint32_t r = 0; !st && !*copied && r < u->num_results; r++) {
      const eddy_type_t *ft = eddy_ir_func_type(f), *gt = eddy_ir_func_type(g);
      if (r >= ft->num_outputs || r >= gt->num_outputs)
        break;
      const eddy_type_t *a = ft->outputs[r], *b = gt->outputs[r];
      if (a->kind != EDDY_TYPE_LIST || b->kind != EDDY_TYPE_LIST ||
          eddy_ir_type_is_compatible(a, b))
        continue;
      st = own_branch(m, u, "then_branch", &f, copied);
      if (!st)
        st = own_branch(m, u, "else_branch", &g, copied);
      if (!st && !*copied)
        st = split(m, &u, f, g, r, a, b, copied);
    }
  }
  free(ifs.v);
  return st;
}

/// A Case whose branches return Optionals of different types at one
/// output is not split (an If's outputs are): the error names it rather
/// than letting the chain of ifs disagree on the output's type.
typedef struct case_check {
  eddy_module_t *m;
  eddy_status_t st;
} case_check_t;

static eddy_walk_result_t check_case(eddy_op_t *op, void *user) {
  case_check_t *c = user;
  if (!eddy_ir_op_is(op, "tf.Case") && !eddy_ir_op_is(op, "tf.StatelessCase"))
    return EDDY_WALK_ADVANCE;
  const eddy_attr_t *br = eddy_ir_op_attr(op, "branches");
  if (!br || br->kind != EDDY_ATTR_ARRAY)
    return EDDY_WALK_ADVANCE; // legalize-tf reports it
  for (uint32_t r = 0; r < op->num_results; r++) {
    const eddy_type_t *first = NULL;
    for (size_t i = 0; i < br->u.array.len; i++) {
      const eddy_attr_t *b = br->u.array.elems[i];
      eddy_op_t *f = b->kind == EDDY_ATTR_SYMBOL
                         ? eddy_ir_module_lookup_func(c->m, b->u.str.data)
                         : NULL;
      const eddy_type_t *ft = f ? eddy_ir_func_type(f) : NULL;
      if (!ft || r >= ft->num_outputs)
        continue;
      const eddy_type_t *t = ft->outputs[r];
      if (t->kind != EDDY_TYPE_LIST)
        break;
      if (!first) {
        first = t;
      } else if (!eddy_ir_type_is_compatible(first, t)) {
        char msg[256];
        snprintf(msg, sizeof msg,
                 "output #%u of this Case is an Optional holding a value of "
                 "one type in one branch and of another in branch %zu (only "
                 "an If's such outputs are split)",
                 r, i);
        c->st = error_at(op, msg);
        return EDDY_WALK_INTERRUPT;
      }
    }
  }
  return EDDY_WALK_ADVANCE;
}

eddy_status_t eddy_tfl_split_optionals(eddy_module_t *m) {
  case_check_t cc = {m, NULL};
  eddy_ir_walk_pre(m->op, check_case, &cc);
  if (cc.st)
    return cc.st;
  // Until no If needs a copy of its branches: a split output leaves both
  // branches agreeing, so an If already done is not split again.
  for (int round = 0; round < 4096; round++) {
    bool copied = false;
    EDDY_RETURN_IF_ERROR(split_pass(m, &copied));
    if (!copied)
      return NULL;
  }
  return eddy_status_create(EDDY_ERR_UNSUPPORTED,
                            "splitting the Optionals of Ifs copied their "
                            "branch functions more than 4096 times");
}

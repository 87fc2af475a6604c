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
/// An Optional of one type throughout is left as it is. Between the split If
/// and the gradient If, the two halves travel together through whatever
/// carries the value (nested conds, loop accumulators, gradient loops):
/// see "Following a split value to its readers" below.
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

/// The array attribute a with `extra` appended ("variant" to Tout or T, one
/// dtype per result; an empty shape to output_shapes); NULL on out of
/// memory.
static const eddy_attr_t *append_attr(eddy_ctx_t *ctx, const eddy_attr_t *a,
                                      const eddy_attr_t *extra) {
  const eddy_attr_t **el = malloc((a->u.array.len + 1) * sizeof(*el));
  if (!el)
    return NULL;
  memcpy(el, a->u.array.elems, a->u.array.len * sizeof(*el));
  el[a->u.array.len] = extra;
  const eddy_attr_t *r = eddy_ir_array_attr_get(ctx, el, a->u.array.len + 1);
  free(el);
  return r;
}

/// u again (an If, a Case or a While), with result r of type rt (r past the
/// results: none changed), the operand `extra_op` appended (NULL: none) and
/// a result of type t appended (NULL: none); the uses of u's results move
/// to the new op's.
static eddy_status_t grow_op(eddy_ctx_t *ctx, eddy_op_t *u, uint32_t r,
                             const eddy_type_t *rt, eddy_value_t *extra_op,
                             const eddy_type_t *t, eddy_op_t **out) {
  uint32_t n = u->num_results, no = u->num_operands;
  const eddy_type_t **types = malloc((n + 1) * sizeof(*types));
  eddy_value_t **ops = malloc((no + 1) * sizeof(*ops));
  eddy_named_attr_t *attrs = malloc((u->num_attrs + 1) * sizeof(*attrs));
  eddy_status_t st = NULL;
  if (!types || !ops || !attrs)
    st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  for (uint32_t i = 0; !st && i < n; i++)
    types[i] = i == r ? rt : u->results[i].type;
  for (uint32_t i = 0; !st && i < no; i++)
    ops[i] = eddy_ir_op_operand(u, i);
  for (uint32_t i = 0; !st && i < u->num_attrs; i++) {
    attrs[i] = u->attrs[i];
    const eddy_attr_t *a = attrs[i].value;
    const char *an = attrs[i].name->str;
    if (!t || a->kind != EDDY_ATTR_ARRAY)
      continue;
    // Tout (If, Case) and T (While) name one dtype per result.
    const eddy_attr_t *extra = NULL;
    if (strcmp(an, "Tout") == 0 || strcmp(an, "T") == 0)
      extra = eddy_ir_string_attr_get(ctx, "variant", 7);
    else if (strcmp(an, "output_shapes") == 0)
      extra = eddy_ir_array_attr_get(ctx, NULL, 0);
    if (extra && !(attrs[i].value = append_attr(ctx, a, extra)))
      st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  }
  if (!st) {
    if (extra_op)
      ops[no++] = extra_op;
    if (t)
      types[n] = t;
    eddy_builder_t bb;
    eddy_ir_builder_init(&bb, ctx);
    eddy_ir_builder_set_before(&bb, u);
    eddy_op_state_t s = {.name = u->name->str,
                         .operands = ops,
                         .num_operands = no,
                         .attrs = attrs,
                         .num_attrs = u->num_attrs,
                         .result_types = types,
                         .num_results = n + (t ? 1 : 0),
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

/// The op that names func in a symbol attribute (*attr: which), when
/// exactly one op does; NULL otherwise.
typedef struct caller_find {
  const char *name;
  eddy_op_t *op;
  const char *attr;
  size_t n;
} caller_find_t;

static void find_in_attr(const eddy_attr_t *a, eddy_op_t *op, const char *an,
                         caller_find_t *c) {
  if (a->kind == EDDY_ATTR_ARRAY) {
    for (size_t i = 0; i < a->u.array.len; i++)
      find_in_attr(a->u.array.elems[i], op, an, c);
  } else if (a->kind == EDDY_ATTR_SYMBOL &&
             strcmp(a->u.str.data, c->name) == 0) {
    c->n++;
    c->op = op;
    c->attr = an;
  }
}

static eddy_walk_result_t find_walk(eddy_op_t *op, void *user) {
  for (uint32_t i = 0; i < op->num_attrs; i++)
    find_in_attr(op->attrs[i].value, op, op->attrs[i].name->str, user);
  return EDDY_WALK_ADVANCE;
}

static eddy_op_t *sole_caller(eddy_module_t *m, const eddy_op_t *func,
                              const char **attr) {
  caller_find_t c = {eddy_ir_func_name(func), NULL, NULL, 0};
  for (eddy_op_t *f = eddy_ir_module_body(m)->first; f; f = f->next)
    eddy_ir_walk_pre(f, find_walk, &c);
  if (c.n != 1)
    return NULL;
  if (attr)
    *attr = c.attr;
  return c.op;
}

/// The function whose entry block holds the argument v, or NULL.
static eddy_op_t *func_of_arg(const eddy_value_t *v) {
  if (v->def || !v->block)
    return NULL;
  eddy_op_t *f = eddy_ir_block_parent_op(v->block);
  return f && eddy_ir_op_is(f, "func.func") ? f : NULL;
}

static bool is_while(const eddy_op_t *op) {
  return eddy_ir_op_is(op, "tf.While") ||
         eddy_ir_op_is(op, "tf.StatelessWhile");
}

static bool is_case(const eddy_op_t *op) {
  return eddy_ir_op_is(op, "tf.Case") || eddy_ir_op_is(op, "tf.StatelessCase");
}

static eddy_value_t *canon_item(eddy_module_t *m, eddy_value_t *l, int depth);

/// Branch b of If or Case c (NULL past the last or when not a function).
static eddy_op_t *branch_of(eddy_module_t *m, const eddy_op_t *c, size_t b) {
  if (is_if(c))
    return b < 2 ? callee(m, c, b == 0 ? "then_branch" : "else_branch") : NULL;
  const eddy_attr_t *br = eddy_ir_op_attr(c, "branches");
  if (!br || br->kind != EDDY_ATTR_ARRAY || b >= br->u.array.len)
    return NULL;
  const eddy_attr_t *a = br->u.array.elems[b];
  return a->kind == EDDY_ATTR_SYMBOL
             ? eddy_ir_module_lookup_func(m, a->u.str.data)
             : NULL;
}

static size_t num_branches(const eddy_op_t *c) {
  if (is_if(c))
    return 2;
  const eddy_attr_t *br = eddy_ir_op_attr(c, "branches");
  return br && br->kind == EDDY_ATTR_ARRAY ? br->u.array.len : 0;
}

/// What the one branch of If or Case c that returns something other than
/// an OptionalNone at result r returns; NULL when not exactly one does.
static eddy_value_t *branch_value(eddy_module_t *m, const eddy_op_t *c,
                                  uint32_t r) {
  eddy_value_t *only = NULL;
  for (size_t b = 0; b < num_branches(c); b++) {
    eddy_op_t *g = branch_of(m, c, b);
    if (!g)
      return NULL;
    eddy_op_t *ret = eddy_ir_block_terminator(eddy_ir_func_entry(g));
    if (r >= ret->num_operands)
      return NULL;
    eddy_value_t *x = eddy_ir_op_operand(ret, r);
    while (x->def && eddy_ir_op_is(x->def, "tf.Identity"))
      x = eddy_ir_op_operand(x->def, 0);
    if (x->def && eddy_ir_op_is(x->def, "tf.OptionalNone"))
      continue;
    if (only)
      return NULL;
    only = x;
  }
  return only;
}

/// Where a value comes from, looking through Identity, the arguments of If
/// and Case branches (to what the If passes), and lists: an item popped
/// from a loop's accumulator is the value the forward loop pushed. cond_v2
/// gives a gradient If, in a while_v2 gradient loop, the predicate its
/// forward If had, popped from an accumulator; this finds the forward one.
static eddy_value_t *canon(eddy_module_t *m, eddy_value_t *v, int depth) {
  for (int i = 0; v && i < 64 && depth < 64; i++) {
    if (v->def && eddy_ir_op_is(v->def, "tf.Identity")) {
      v = eddy_ir_op_operand(v->def, 0);
    } else if (v->def && eddy_ir_op_is(v->def, "tf.TensorListPopBack") &&
               v->index == 1) {
      eddy_value_t *c = canon_item(m, eddy_ir_op_operand(v->def, 0), depth + 1);
      return c ? c : v;
    } else if (v->def && eddy_ir_op_is(v->def, "tf.OptionalGetValue")) {
      // The value of an Optional made by OptionalFromValue (a predicate
      // computed in a branch is one of its intermediates).
      eddy_value_t *o = canon(m, eddy_ir_op_operand(v->def, 0), depth + 1);
      if (!o->def || !eddy_ir_op_is(o->def, "tf.OptionalFromValue"))
        return v;
      v = eddy_ir_op_operand(o->def, 0);
    } else if (v->def && (is_if(v->def) || is_case(v->def))) {
      // An Optional only one branch makes (the others return none).
      eddy_value_t *only = branch_value(m, v->def, v->index);
      if (!only)
        return v;
      v = only;
    } else if (!v->def) {
      eddy_op_t *f = func_of_arg(v);
      const char *attr = NULL;
      eddy_op_t *c = f ? sole_caller(m, f, &attr) : NULL;
      if (!c || !(is_if(c) || is_case(c)) || v->index + 1 >= c->num_operands)
        return v;
      v = eddy_ir_op_operand(c, v->index + 1);
    } else {
      return v;
    }
  }
  return v;
}

/// What the forward loop pushed onto the accumulator l that a gradient loop
/// pops: l followed through Identity, pops and While loop values back to
/// the forward While, whose body pushes the item; NULL when not found.
static eddy_value_t *canon_item(eddy_module_t *m, eddy_value_t *l, int depth) {
  for (int i = 0; l && i < 64 && depth < 64; i++) {
    eddy_op_t *d = l->def;
    if (d && (eddy_ir_op_is(d, "tf.Identity") ||
              (eddy_ir_op_is(d, "tf.TensorListPopBack") && l->index == 0))) {
      l = eddy_ir_op_operand(d, 0);
    } else if (!d) {
      eddy_op_t *f = func_of_arg(l);
      const char *attr = NULL;
      eddy_op_t *c = f ? sole_caller(m, f, &attr) : NULL;
      if (!c || l->index >= c->num_operands)
        return NULL;
      if (is_while(c) && strcmp(attr, "body") == 0)
        l = eddy_ir_op_operand(c, l->index);
      else if ((is_if(c) || is_case(c)) && l->index + 1 < c->num_operands)
        l = eddy_ir_op_operand(c, l->index + 1);
      else
        return NULL;
    } else if (is_while(d)) {
      // The body's pushes onto loop value j, before it returns it.
      eddy_op_t *body = callee(m, d, "body");
      if (!body)
        return NULL;
      eddy_op_t *ret = eddy_ir_block_terminator(eddy_ir_func_entry(body));
      if (l->index >= ret->num_operands)
        return NULL;
      eddy_value_t *x = eddy_ir_op_operand(ret, l->index);
      while (x && x->def && eddy_ir_op_is(x->def, "tf.Identity"))
        x = eddy_ir_op_operand(x->def, 0);
      if (!x || !x->def || !eddy_ir_op_is(x->def, "tf.TensorListPushBack"))
        return NULL;
      return canon(m, eddy_ir_op_operand(x->def, 1), depth + 1);
    } else {
      return NULL;
    }
  }
  return NULL;
}

/// Whether If o tests the predicate of If u (its gradient, in the same
/// function or popped from a loop's accumulator).
static bool same_pred(eddy_module_t *m, const eddy_op_t *o,
                      const eddy_op_t *u) {
  return is_if(o) && o->num_operands > 0 &&
         canon(m, pred_of(o), 0) == canon(m, pred_of(u), 0);
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
  if (!is_if(o) || k == 0 || !same_pred(m, o, u)) {
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
} reader_list_t;

/// ---- Following a split value to its readers ----
///
/// The split output's two halves travel together wherever the value goes
/// before the gradient If reads it: wrapped in another Optional by an
/// enclosing branch and returned by it (cond_v2 nests: the intermediates of
/// a cond in a cond are Optionals of Optionals), pushed onto a loop's
/// accumulator and popped in the gradient loop (while_v2), unwrapped and
/// passed into the branches of the enclosing gradient If. Each op on the
/// way gets a twin for the second half, each function and loop one more
/// argument or result, each accumulator a twin accumulator, until an If on
/// the split If's predicate takes the first half in its then branch and the
/// second in its else branch.

/// A loop value j of While `w` and the twin j2 added for it.
typedef struct loop_twin {
  eddy_op_t *w;
  uint32_t j, j2;
} loop_twin_t;

typedef struct follow {
  eddy_module_t *m;
  eddy_op_t *origin; ///< the split If
  bool *copied;
  loop_twin_t *twins;
  size_t num_twins, cap_twins;
} follow_t;

static eddy_status_t follow_value(follow_t *fw, eddy_value_t *v,
                                  eddy_value_t *v2, int depth);

static eddy_status_t unsupported_reader(follow_t *fw, const eddy_op_t *o,
                                        const char *why) {
  char msg[768];
  const char *un = fw->origin->loc && fw->origin->loc->file
                       ? fw->origin->loc->file->str
                       : "?";
  snprintf(msg, sizeof msg,
           "an Optional output of If '%s' holds a value of one type from one "
           "branch and of another from the other; it is followed to the If "
           "on the same predicate that reads it (its gradient), but %s",
           un, why);
  return error_at(o, msg);
}

static loop_twin_t *find_twin(follow_t *fw, const eddy_op_t *w, uint32_t j) {
  for (size_t i = 0; i < fw->num_twins; i++)
    if (fw->twins[i].w == w && fw->twins[i].j == j)
      return &fw->twins[i];
  return NULL;
}

/// The ops reading v and the operand each reads, without looking through
/// anything.
static eddy_status_t uses_of_value(eddy_value_t *v, reader_list_t *rd) {
  for (eddy_use_t *use = v->uses; use; use = use->next) {
    if (rd->n == rd->cap) {
      size_t nc = rd->cap ? 2 * rd->cap : 8;
      eddy_op_t **no = realloc(rd->owner, nc * sizeof(*no));
      if (no)
        rd->owner = no;
      uint32_t *ni = no ? realloc(rd->index, nc * sizeof(*ni)) : NULL;
      if (!ni)
        return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
      rd->index = ni;
      rd->cap = nc;
    }
    rd->owner[rd->n] = use->owner;
    rd->index[rd->n++] = use->index;
  }
  return NULL;
}

/// A twin of op o (same name, attributes and operands but operand k, which
/// is v2), after o, with result types types.
static eddy_status_t twin_op(follow_t *fw, eddy_op_t *o, uint32_t k,
                             eddy_value_t *v2, const eddy_type_t *const *types,
                             uint32_t nt, eddy_op_t **out) {
  eddy_value_t **ops = malloc((o->num_operands + 1) * sizeof(*ops));
  if (!ops)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  for (uint32_t i = 0; i < o->num_operands; i++)
    ops[i] = i == k ? v2 : eddy_ir_op_operand(o, i);
  eddy_builder_t bb;
  eddy_ir_builder_init(&bb, fw->m->ctx);
  eddy_ir_builder_set_after(&bb, o);
  eddy_status_t st =
      eddy_tfl_make(&bb, o->name->str, ops, o->num_operands, o->attrs,
                    o->num_attrs, types, nt, o->loc, out);
  free(ops);
  return st;
}

/// Adds loop value j2 to While w (its body and cond get an argument, the
/// body returns it unchanged until a twin sets what it returns), starting
/// from init. *w_out is the new While.
static eddy_status_t add_loop_value(follow_t *fw, eddy_op_t *w, uint32_t j,
                                    eddy_value_t *init, eddy_op_t **w_out,
                                    uint32_t *j2_out) {
  eddy_module_t *m = fw->m;
  eddy_op_t *body = callee(m, w, "body"), *cond = callee(m, w, "cond");
  if (!body || !cond || body == cond || uses_of(m, body) != 1 ||
      uses_of(m, cond) != 1)
    return unsupported_reader(
        fw, w,
        "the body and cond of this While must be functions no other "
        "node calls");
  eddy_value_t *ab = add_arg(m->ctx, body, init->type);
  eddy_value_t *ac = add_arg(m->ctx, cond, init->type);
  if (!ab || !ac)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  EDDY_RETURN_IF_ERROR(set_results(m->ctx, body, 0, NULL, ab));
  uint32_t j2 = w->num_results;
  eddy_op_t *nw = NULL;
  EDDY_RETURN_IF_ERROR(
      grow_op(m->ctx, w, UINT32_MAX, NULL, init, init->type, &nw));
  for (size_t i = 0; i < fw->num_twins; i++)
    if (fw->twins[i].w == w)
      fw->twins[i].w = nw;
  if (fw->num_twins == fw->cap_twins) {
    size_t nc = fw->cap_twins ? 2 * fw->cap_twins : 4;
    loop_twin_t *nt = realloc(fw->twins, nc * sizeof(*nt));
    if (!nt)
      return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
    fw->twins = nt;
    fw->cap_twins = nc;
  }
  fw->twins[fw->num_twins++] = (loop_twin_t){nw, j, j2};
  *w_out = nw;
  *j2_out = j2;
  return NULL;
}

/// The twin of the list l (an accumulator that v is pushed onto), holding
/// items of type t: a new empty list where l is made, or a new loop value
/// where l is a loop value of a While's body (*w_out and *j: that While
/// and l's loop value, whose results the caller follows).
static eddy_status_t twin_list(follow_t *fw, eddy_op_t *reader, eddy_value_t *l,
                               const eddy_type_t *t, eddy_value_t **out,
                               eddy_op_t **w_out, uint32_t *j_out) {
  eddy_ctx_t *ctx = fw->m->ctx;
  const eddy_type_t *lt = eddy_ir_list_type_get(ctx, t);
  *w_out = NULL;
  eddy_op_t *made = l->def;
  eddy_op_t *w = NULL;
  eddy_op_t *f = func_of_arg(l);
  const char *attr = NULL;
  if (f) {
    w = sole_caller(fw->m, f, &attr);
    if (!w || !is_while(w) || strcmp(attr, "body") != 0 ||
        l->index >= w->num_operands)
      return unsupported_reader(fw, reader,
                                "the list it is pushed onto is an argument "
                                "of a function other than a While's body");
    loop_twin_t *tw = find_twin(fw, w, l->index);
    if (tw) {
      *out = eddy_ir_func_entry(f)->args[tw->j2];
      return NULL;
    }
    made = eddy_ir_op_operand(w, l->index)->def;
  }
  if (!made || !(eddy_ir_op_is(made, "tf.EmptyTensorList") ||
                 eddy_ir_op_is(made, "tf.TensorListReserve")))
    return unsupported_reader(fw, reader,
                              "the list it is pushed onto is not made by "
                              "EmptyTensorList or TensorListReserve");
  eddy_op_t *e = NULL;
  EDDY_RETURN_IF_ERROR(twin_op(fw, made, UINT32_MAX, NULL, &lt, 1, &e));
  if (!w) {
    *out = &e->results[0];
    return NULL;
  }
  uint32_t j2;
  EDDY_RETURN_IF_ERROR(
      add_loop_value(fw, w, l->index, &e->results[0], w_out, &j2));
  *j_out = l->index;
  *out = eddy_ir_func_entry(f)->args[j2];
  return NULL;
}

/// The results j and j2 of While w, followed on.
static eddy_status_t follow_loop_results(follow_t *fw, eddy_op_t *w, uint32_t j,
                                         int depth) {
  loop_twin_t *tw = find_twin(fw, w, j);
  if (!tw)
    return NULL;
  w = tw->w;
  return follow_value(fw, &w->results[j], &w->results[tw->j2], depth + 1);
}

/// v (and v2) returned by function f at result k.
static eddy_status_t follow_return(follow_t *fw, eddy_op_t *ret, uint32_t k,
                                   eddy_value_t *v2, int depth) {
  eddy_module_t *m = fw->m;
  eddy_op_t *f = eddy_ir_op_parent_op(ret);
  const char *attr = NULL;
  eddy_op_t *c = f ? sole_caller(m, f, &attr) : NULL;
  if (c && is_while(c) && strcmp(attr, "body") == 0) {
    loop_twin_t *tw = find_twin(fw, c, k);
    if (!tw)
      return unsupported_reader(fw, ret,
                                "a loop body returns it as a loop value "
                                "that does not start as an accumulator");
    eddy_ir_op_set_operand(ret, tw->j2, v2);
    return NULL;
  }
  if (!c || !(is_if(c) || is_case(c)))
    return unsupported_reader(fw, ret,
                              "the function that returns it is not a branch "
                              "of one If or Case (or the body of one While)");
  // Every branch returns one more Optional: f its twin, the others none.
  for (size_t b = 0; b < num_branches(c); b++) {
    eddy_op_t *g = branch_of(m, c, b);
    if (!g || (g != f && uses_of(m, g) != 1))
      return unsupported_reader(fw, c,
                                "the branches of the If or Case that returns "
                                "it must be functions no other node calls");
    eddy_value_t *val = v2;
    if (g != f)
      EDDY_RETURN_IF_ERROR(none_of(m->ctx, g, v2->type, &val));
    EDDY_RETURN_IF_ERROR(set_results(m->ctx, g, 0, NULL, val));
  }
  eddy_op_t *nc = NULL;
  EDDY_RETURN_IF_ERROR(
      grow_op(m->ctx, c, UINT32_MAX, NULL, NULL, v2->type, &nc));
  *fw->copied = true; // the pass's list of Ifs holds the old op
  return follow_value(fw, &nc->results[k], &nc->results[nc->num_results - 1],
                      depth + 1);
}

/// v (and v2) passed to If or Case o as operand k, not on the split If's
/// predicate: each branch gets both and follows them.
static eddy_status_t follow_into_branches(follow_t *fw, eddy_op_t *o,
                                          uint32_t k, eddy_value_t *v2,
                                          int depth) {
  eddy_module_t *m = fw->m;
  size_t nb = num_branches(o);
  eddy_op_t *gs[64];
  if (nb > 64)
    return unsupported_reader(fw, o, "the Case has more than 64 branches");
  for (size_t b = 0; b < nb; b++) {
    if (is_if(o))
      EDDY_RETURN_IF_ERROR(own_branch(
          m, o, b == 0 ? "then_branch" : "else_branch", &gs[b], fw->copied));
    else
      gs[b] = branch_of(m, o, b);
    if (!gs[b] || uses_of(m, gs[b]) != 1)
      return unsupported_reader(fw, o,
                                "the branches of the If or Case it is passed "
                                "to must be functions no other node calls");
  }
  uint32_t n = o->num_operands;
  eddy_value_t **ops = malloc((n + 1) * sizeof(*ops));
  if (!ops)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  for (uint32_t i = 0; i < n; i++)
    ops[i] = eddy_ir_op_operand(o, i);
  ops[n] = v2;
  eddy_ir_op_set_operands(o, ops, n + 1);
  free(ops);
  for (size_t b = 0; b < nb; b++) {
    eddy_value_t *a2 = add_arg(m->ctx, gs[b], v2->type);
    if (!a2)
      return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
    eddy_block_t *entry = eddy_ir_func_entry(gs[b]);
    EDDY_RETURN_IF_ERROR(follow_value(fw, entry->args[k - 1], a2, depth + 1));
  }
  return NULL;
}

/// One reader o of v (operand k), with v2 the twin of v.
static eddy_status_t follow_reader(follow_t *fw, eddy_op_t *o, uint32_t k,
                                   eddy_value_t *v2, int depth) {
  eddy_module_t *m = fw->m;
  eddy_ctx_t *ctx = m->ctx;
  eddy_op_t *t = NULL;
  if (eddy_ir_op_is(o, "func.return"))
    return follow_return(fw, o, k, v2, depth);
  if ((eddy_ir_op_is(o, "tf.Identity") || eddy_ir_op_is(o, "tf.ZerosLike")) &&
      k == 0) {
    EDDY_RETURN_IF_ERROR(twin_op(fw, o, k, v2, &v2->type, 1, &t));
    return follow_value(fw, &o->results[0], &t->results[0], depth + 1);
  }
  if (eddy_ir_op_is(o, "tf.OptionalFromValue") && o->num_operands == 1) {
    const eddy_type_t *rt = eddy_ir_list_type_get(ctx, v2->type);
    EDDY_RETURN_IF_ERROR(twin_op(fw, o, k, v2, &rt, 1, &t));
    return follow_value(fw, &o->results[0], &t->results[0], depth + 1);
  }
  if (eddy_ir_op_is(o, "tf.OptionalGetValue") && o->num_results == 1 &&
      v2->type->kind == EDDY_TYPE_LIST) {
    EDDY_RETURN_IF_ERROR(twin_op(fw, o, k, v2, &v2->type->elem, 1, &t));
    return follow_value(fw, &o->results[0], &t->results[0], depth + 1);
  }
  if (eddy_ir_op_is(o, "tf.TensorListPopBack") && k == 0 &&
      v2->type->kind == EDDY_TYPE_LIST && o->num_results == 2) {
    const eddy_type_t *rt[2] = {v2->type, v2->type->elem};
    EDDY_RETURN_IF_ERROR(twin_op(fw, o, k, v2, rt, 2, &t));
    EDDY_RETURN_IF_ERROR(
        follow_value(fw, &o->results[0], &t->results[0], depth + 1));
    return follow_value(fw, &o->results[1], &t->results[1], depth + 1);
  }
  if (eddy_ir_op_is(o, "tf.TensorListPushBack") && k == 1) {
    eddy_value_t *l2 = NULL;
    eddy_op_t *w = NULL;
    uint32_t j = 0;
    EDDY_RETURN_IF_ERROR(
        twin_list(fw, o, eddy_ir_op_operand(o, 0), v2->type, &l2, &w, &j));
    eddy_value_t *ops[2] = {l2, v2};
    eddy_builder_t bb;
    eddy_ir_builder_init(&bb, ctx);
    eddy_ir_builder_set_after(&bb, o);
    EDDY_RETURN_IF_ERROR(eddy_tfl_make(&bb, o->name->str, ops, 2, o->attrs,
                                       o->num_attrs, &l2->type, 1, o->loc, &t));
    EDDY_RETURN_IF_ERROR(
        follow_value(fw, &o->results[0], &t->results[0], depth + 1));
    return w ? follow_loop_results(fw, w, j, depth) : NULL;
  }
  if (is_while(o)) {
    eddy_op_t *body = callee(m, o, "body");
    eddy_op_t *nw = NULL;
    uint32_t j2;
    EDDY_RETURN_IF_ERROR(add_loop_value(fw, o, k, v2, &nw, &j2));
    eddy_block_t *entry = eddy_ir_func_entry(body);
    EDDY_RETURN_IF_ERROR(
        follow_value(fw, entry->args[k], entry->args[j2], depth + 1));
    return follow_loop_results(fw, nw, k, depth);
  }
  if ((is_if(o) || is_case(o)) && k > 0) {
    if (same_pred(m, o, fw->origin))
      return pass_second(m, fw->origin, o, k, v2, fw->copied);
    return follow_into_branches(fw, o, k, v2, depth);
  }
  return unsupported_reader(fw, o,
                            "this node reads it (only Identity, ZerosLike, "
                            "OptionalFromValue, OptionalGetValue, "
                            "TensorListPushBack, TensorListPopBack, While, "
                            "If, Case and function returns are followed)");
}

static eddy_status_t follow_value(follow_t *fw, eddy_value_t *v,
                                  eddy_value_t *v2, int depth) {
  if (depth > 256)
    return unsupported_reader(fw, fw->origin,
                              "it passes through more than 256 nodes");
  reader_list_t rd = {0};
  eddy_status_t st = uses_of_value(v, &rd);
  for (size_t i = 0; !st && i < rd.n; i++)
    if (rd.owner[i] != v2->def) // the twin just made reads v too
      st = follow_reader(fw, rd.owner[i], rd.index[i], v2, depth);
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
  EDDY_RETURN_IF_ERROR(grow_op(ctx, *u, r, a, NULL, b, &grown));
  *u = grown;
  eddy_value_t *second = &grown->results[grown->num_results - 1];
  eddy_value_t *first = &grown->results[r];
  // Followed to the gradient If, which reads the halves in its branches.
  follow_t fw = {m, grown, copied, NULL, 0, 0};
  eddy_status_t st = follow_value(&fw, first, second, 0);
  free(fw.twins);
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
static eddy_status_t split_pass(eddy_module_t *m, bool *copied,
                                bool *split_any) {
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
      if (!st && !*copied) {
        *split_any = true;
        st = split(m, &u, f, g, r, a, b, copied);
      }
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

/// ---- The types of what carries the first half ----
///
/// A split output keeps the then branch's type, and the ops it reaches keep
/// the types the importer gave them, which may be the else branch's (a
/// value traced through nested conds takes one branch's type). Once the
/// halves are in place, the lists (Optionals) that carry a value on take
/// its type: an Identity, ZerosLike, OptionalFromValue, OptionalGetValue
/// or TensorListPopBack of a list the type its operand gives, the argument
/// of a function with one caller what the caller passes, a function's
/// result what it returns, the result of an If or Case what all its
/// branches return, a While's result its operand's. Only list types change.

static bool set_list_type(eddy_value_t *v, const eddy_type_t *t) {
  if (!t || v->type == t || v->type->kind != EDDY_TYPE_LIST ||
      t->kind != EDDY_TYPE_LIST)
    return false;
  eddy_ir_value_set_type(v, t);
  return true;
}

/// Argument j of func takes type t (and the function's type with it).
static bool set_arg_type(eddy_ctx_t *ctx, eddy_op_t *func, uint32_t j,
                         const eddy_type_t *t) {
  eddy_block_t *entry = eddy_ir_func_entry(func);
  const eddy_type_t *ft = eddy_ir_func_type(func);
  if (j >= entry->num_args || j >= ft->num_inputs ||
      !set_list_type(entry->args[j], t))
    return false;
  const eddy_type_t **in = malloc((ft->num_inputs + 1) * sizeof(*in));
  if (!in)
    return false;
  memcpy(in, ft->inputs, ft->num_inputs * sizeof(*in));
  in[j] = t;
  eddy_ir_func_set_type(func,
                        eddy_ir_func_type_get(ctx, in, ft->num_inputs,
                                              ft->outputs, ft->num_outputs));
  free(in);
  return true;
}

typedef struct retype {
  eddy_module_t *m;
  bool changed;
} retype_t;

static eddy_walk_result_t retype_walk(eddy_op_t *op, void *user) {
  retype_t *rt = user;
  eddy_module_t *m = rt->m;
  eddy_ctx_t *ctx = m->ctx;
  eddy_value_t *x = op->num_operands ? eddy_ir_op_operand(op, 0) : NULL;
  const eddy_type_t *xt = x ? x->type : NULL;
  bool list_of_lists =
      xt && xt->kind == EDDY_TYPE_LIST && xt->elem->kind == EDDY_TYPE_LIST;
  if ((eddy_ir_op_is(op, "tf.Identity") || eddy_ir_op_is(op, "tf.ZerosLike")) &&
      op->num_results == 1) {
    rt->changed |= set_list_type(&op->results[0], xt);
  } else if (eddy_ir_op_is(op, "tf.OptionalFromValue") &&
             op->num_results == 1 && xt && xt->kind == EDDY_TYPE_LIST) {
    rt->changed |=
        set_list_type(&op->results[0], eddy_ir_list_type_get(ctx, xt));
  } else if (eddy_ir_op_is(op, "tf.OptionalGetValue") && op->num_results == 1 &&
             list_of_lists) {
    rt->changed |= set_list_type(&op->results[0], xt->elem);
  } else if (eddy_ir_op_is(op, "tf.TensorListPopBack") &&
             op->num_results == 2 && list_of_lists) {
    rt->changed |= set_list_type(&op->results[0], xt);
    rt->changed |= set_list_type(&op->results[1], xt->elem);
  } else if (is_if(op) || is_case(op)) {
    size_t nb = num_branches(op);
    for (size_t b = 0; b < nb; b++) {
      eddy_op_t *g = branch_of(m, op, b);
      if (!g || uses_of(m, g) != 1)
        continue;
      for (uint32_t k = 1; k < op->num_operands; k++)
        rt->changed |=
            set_arg_type(ctx, g, k - 1, eddy_ir_op_operand(op, k)->type);
    }
    for (uint32_t r = 0; r < op->num_results; r++) {
      const eddy_type_t *t = NULL;
      bool agree = nb > 0;
      for (size_t b = 0; b < nb && agree; b++) {
        eddy_op_t *g = branch_of(m, op, b);
        const eddy_type_t *ft = g ? eddy_ir_func_type(g) : NULL;
        if (!ft || r >= ft->num_outputs)
          agree = false;
        else if (!t)
          t = ft->outputs[r];
        else if (t != ft->outputs[r])
          agree = false;
      }
      if (agree)
        rt->changed |= set_list_type(&op->results[r], t);
    }
  } else if (is_while(op)) {
    eddy_op_t *fs[2] = {callee(m, op, "body"), callee(m, op, "cond")};
    for (int i = 0; i < 2; i++)
      for (uint32_t k = 0;
           fs[i] && uses_of(m, fs[i]) == 1 && k < op->num_operands; k++)
        rt->changed |=
            set_arg_type(ctx, fs[i], k, eddy_ir_op_operand(op, k)->type);
    for (uint32_t k = 0; k < op->num_results && k < op->num_operands; k++)
      rt->changed |=
          set_list_type(&op->results[k], eddy_ir_op_operand(op, k)->type);
  } else if (eddy_ir_op_is(op, "func.return")) {
    eddy_op_t *f = eddy_ir_op_parent_op(op);
    const eddy_type_t *ft = f ? eddy_ir_func_type(f) : NULL;
    if (ft && ft->num_outputs == op->num_operands) {
      bool differ = false;
      for (uint32_t i = 0; i < op->num_operands; i++) {
        const eddy_type_t *t = eddy_ir_op_operand(op, i)->type;
        differ |= t != ft->outputs[i] && t->kind == EDDY_TYPE_LIST &&
                  ft->outputs[i]->kind == EDDY_TYPE_LIST;
      }
      if (differ) {
        const eddy_type_t **out = malloc((op->num_operands + 1) * sizeof(*out));
        if (out) {
          for (uint32_t i = 0; i < op->num_operands; i++) {
            const eddy_type_t *t = eddy_ir_op_operand(op, i)->type;
            out[i] = t->kind == EDDY_TYPE_LIST &&
                             ft->outputs[i]->kind == EDDY_TYPE_LIST
                         ? t
                         : ft->outputs[i];
          }
          eddy_ir_func_set_type(f, eddy_ir_func_type_get(ctx, ft->inputs,
                                                         ft->num_inputs, out,
                                                         op->num_operands));
          free(out);
          rt->changed = true;
        }
      }
    }
  }
  return EDDY_WALK_ADVANCE;
}

/// To a fixpoint; *changed when anything changed.
static void retype_lists(eddy_module_t *m, bool *changed) {
  for (int round = 0; round < 64; round++) {
    retype_t rt = {m, false};
    for (eddy_op_t *f = eddy_ir_module_body(m)->first; f; f = f->next)
      eddy_ir_walk_pre(f, retype_walk, &rt);
    if (!rt.changed)
      return;
    *changed = true;
  }
}

eddy_status_t eddy_tfl_split_optionals(eddy_module_t *m) {
  case_check_t cc = {m, NULL};
  eddy_ir_walk_pre(m->op, check_case, &cc);
  if (cc.st)
    return cc.st;
  // Until no If needs a copy of its branches: a split output leaves both
  // branches agreeing, so an If already done is not split again.
  bool split_any = false;
  for (int round = 0; round < 4096; round++) {
    bool copied = false;
    EDDY_RETURN_IF_ERROR(split_pass(m, &copied, &split_any));
    if (copied)
      continue;
    // The ops that carry a split output's first half take its type, which
    // may show another output to split.
    bool changed = false;
    if (split_any)
      retype_lists(m, &changed);
    if (!changed)
      return NULL;
  }
  return eddy_status_create(EDDY_ERR_UNSUPPORTED,
                            "splitting the Optionals of Ifs copied their "
                            "branch functions more than 4096 times");
}

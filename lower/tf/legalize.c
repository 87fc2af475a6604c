/// legalize-tf: the driver. Functions are translated op by op into core,
/// ctl and tl ops (legalize_ops.c has the per-op rules, legalize_build.c
/// the builders they share). Functional control flow is structural:
/// While/StatelessWhile become ctl.while and If/StatelessIf/Case ctl.if,
/// with the callee functions translated into the regions (callee arguments
/// bound to the region arguments or to the captured operands); calls are
/// inlined. The callees are then removed.
/// A loop is built in rounds until its values' types are stable, and a
/// graph kept as dataflow has its Merge types probed first (docs/import.md,
/// "Loop types to a fixpoint").
/// Control tokens (df.control, df.after, NoOp) are dropped: after
/// functionalize every remaining op is ordered by its data edges (the v1
/// stacks, the one stateful thing the fixtures use, are threaded as SSA
/// lists).
#include "lower/tf/tf_lower_internal.h"

#include "dialects/dialects.h"
#include "dialects/tf/tf.h"
#include "ir/passes/pass_util.h"

#include <stdlib.h>
#include <string.h>

#define TFL_MAX_CALL_DEPTH 64

static const char *node_name(const eddy_op_t *op) {
  return op->loc && op->loc->file ? op->loc->file->str : "?";
}

/// ---- Blocks and regions -----------------------------------------------------

static eddy_status_t translate_op(eddy_tfl_t *z, const eddy_op_t *op);

static bool is_functional(const char *t);

/// op reads a list whose element rank is not known yet, or holds regions
/// or calls that may.
static bool may_read_lists(eddy_tfl_t *z, const eddy_op_t *op) {
  if (op->num_regions > 0 || (strncmp(op->name->str, "tf.", 3) == 0 &&
                              is_functional(op->name->str + 3)))
    return true;
  for (uint32_t i = 0; i < op->num_operands; i++) {
    const eddy_type_t *t = eddy_tfl_get(z, eddy_ir_op_operand(op, i))->type;
    if (t->kind == EDDY_TYPE_LIST && t->elem->kind == EDDY_TYPE_TENSOR &&
        t->elem->rank == EDDY_RANK_UNKNOWN)
      return true;
  }
  return false;
}

/// Translates every op of src but its terminator at the insertion point;
/// *out_term is the source terminator (its operands still to be mapped).
/// In the function's own block, before an op that may read lists, the
/// lists built so far take the element type of the items written into
/// them (shape-infer's list step): a TensorArray or TensorList made with
/// an unknown element shape and written in one loop is read in the next
/// with the shape of what was written.
static eddy_status_t translate_block(eddy_tfl_t *z, const eddy_block_t *src,
                                     const eddy_op_t **out_term) {
  *out_term = NULL;
  for (const eddy_op_t *op = src->first; op; op = op->next) {
    if (eddy_ir_op_has_trait(op, EDDY_TRAIT_TERMINATOR) && !op->next) {
      *out_term = op;
      break;
    }
    if (src == z->top && z->func && may_read_lists(z, op)) {
      int64_t retyped = 0;
      EDDY_RETURN_IF_ERROR(
          eddy_passes_refine_list_types(z->ctx, z->func, &retyped));
    }
    EDDY_RETURN_IF_ERROR(translate_op(z, op));
  }
  return NULL;
}

/// The mapped operands of a terminator (dropped tokens skipped).
static size_t mapped_operands(eddy_tfl_t *z, const eddy_op_t *term,
                              eddy_value_t **vals) {
  size_t n = 0;
  for (uint32_t i = 0; i < term->num_operands; i++) {
    eddy_value_t *v = eddy_tfl_get(z, eddy_ir_op_operand(term, i));
    if (v != &z->none && v->type->kind != EDDY_TYPE_TOKEN)
      vals[n++] = v;
  }
  return n;
}

/// Translates the body of a function into the single block `dst` (at its
/// end), binding the function's arguments to args, and ends it with a
/// terminator `term_name` of the returned values ("ctl.yield",
/// "ctl.condition"). For "ctl.condition" the value is reshaped to a scalar
/// i1 when needed.
static eddy_status_t inline_func_into(eddy_tfl_t *z, const eddy_op_t *site,
                                      const eddy_op_t *func,
                                      eddy_value_t *const *args, size_t nargs,
                                      eddy_block_t *dst,
                                      const char *term_name) {
  eddy_block_t *entry = eddy_ir_func_entry(func);
  if (entry->num_args != nargs)
    return eddy_tfl_error(site, "function @%s takes %u arguments, given %zu",
                          eddy_ir_func_name(func), entry->num_args, nargs);
  for (size_t i = 0; i < nargs; i++)
    eddy_tfl_set(z, entry->args[i], args[i]);
  eddy_builder_t saved = z->b;
  eddy_ir_builder_set_end(&z->b, dst);
  const eddy_op_t *term = NULL;
  eddy_status_t st = translate_block(z, entry, &term);
  if (!st && !term)
    st = eddy_tfl_error(site, "function @%s has no terminator",
                        eddy_ir_func_name(func));
  if (!st) {
    eddy_value_t **vals = calloc(term->num_operands + 1, sizeof(*vals));
    if (!vals) {
      st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
    } else {
      size_t n = mapped_operands(z, term, vals);
      if (strcmp(term_name, "ctl.condition") == 0 && n == 1 &&
          !eddy_ir_type_is_scalar(vals[0]->type))
        st = eddy_tfl_reshape(z, site, vals[0], NULL, 0, &vals[0]);
      if (strcmp(term_name, "ctl.condition") == 0 && !st)
        st = eddy_tfl_cast(z, site, vals[0], EDDY_DT_I1, &vals[0]);
      if (!st) {
        eddy_op_t *t = NULL;
        st = eddy_tfl_build_typed(z, site, term_name, vals, n, NULL, 0, NULL,
                                  0, &t);
      }
      free(vals);
    }
  }
  z->b = saved;
  return st;
}

static eddy_status_t lookup_callee(eddy_tfl_t *z, const eddy_op_t *op,
                                   const char *attr, size_t idx,
                                   const eddy_op_t **out) {
  const eddy_attr_t *a = eddy_ir_op_attr(op, attr);
  if (a && a->kind == EDDY_ATTR_ARRAY)
    a = idx < a->u.array.len ? a->u.array.elems[idx] : NULL;
  if (!a || a->kind != EDDY_ATTR_SYMBOL)
    return eddy_tfl_error(op, "attribute '%s' names no function", attr);
  *out = eddy_ir_module_lookup_func(z->m, a->u.str.data);
  if (!*out)
    return eddy_tfl_error(op, "function @%s is not in the module",
                          a->u.str.data);
  eddy_ptrmap_put(&z->callees, *out, (void *)*out);
  return NULL;
}

/// The region argument type of loop value i in the first round: the
/// initial value's type, generalized with the type the source op declares
/// for it when that has a rank (a v1 Merge without a declared shape is
/// unranked: the rounds of build_while find its type instead).
static const eddy_type_t *loop_type(eddy_tfl_t *z, eddy_value_t *init,
                                    const eddy_type_t *declared) {
  // Lists keep the initial list's element type: TensorFlow types every
  // list as a variant, so the declared type says nothing, and list ops
  // (TensorListElementShape) need the element shape.
  if (init->type->kind == EDDY_TYPE_LIST)
    return init->type;
  if (declared->kind == EDDY_TYPE_TENSOR &&
      declared->rank == EDDY_RANK_UNKNOWN)
    return init->type;
  const eddy_type_t *g = eddy_ir_type_generalize(z->ctx, init->type, declared);
  return g ? g : init->type;
}

/// The loop type for the next round: the type so far generalized with what
/// the body yields (a dim that differs becomes `?`, a rank that differs
/// unknown), refined with the declared type where that says more (a shape
/// TensorFlow recorded holds in every iteration).
static const eddy_type_t *next_loop_type(eddy_tfl_t *z, const eddy_type_t *cur,
                                         const eddy_type_t *yielded,
                                         const eddy_type_t *declared) {
  if (cur->kind == EDDY_TYPE_LIST)
    return cur;
  const eddy_type_t *g = eddy_ir_type_generalize(z->ctx, cur, yielded);
  if (!g)
    return cur; // incompatible kinds or dtypes: the verifier reports it
  const eddy_type_t *r = eddy_ir_type_refine(z->ctx, g, declared);
  return r ? r : g;
}

/// Rounds of build_while before it gives up refining: each round makes at
/// least one loop value's type more general, which a rank-r tensor can
/// only be r + 2 times.
#define TFL_MAX_LOOP_ROUNDS 16

/// Builds a ctl.while over inits whose regions are filled by fill(). The
/// source op's results are mapped to the loop's. As TensorFlow's shape
/// refiner does over a v1 loop's Merge, the loop values start with the
/// initial values' types and are generalized with the types the body
/// yields until nothing changes: each round translates the regions again
/// with the new types.
typedef eddy_status_t (*fill_fn_t)(eddy_tfl_t *z, const eddy_op_t *src,
                                   eddy_block_t *cond, eddy_block_t *body,
                                   void *user);

static eddy_status_t build_while(eddy_tfl_t *z, const eddy_op_t *src,
                                 eddy_value_t **inits, size_t n,
                                 const eddy_type_t *const *declared,
                                 fill_fn_t fill, void *user) {
  const eddy_type_t **types = calloc(n + 1, sizeof(*types));
  if (!types)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  for (size_t i = 0; i < n; i++)
    types[i] = loop_type(z, inits[i], declared[i]);
  eddy_named_attr_t attrs[2];
  size_t na = 0;
  attrs[na++] = eddy_ir_named_attr(
      z->ctx, "parallel_iterations",
      eddy_ir_int_attr_get(
          z->ctx, eddy_ir_op_attr_int(src, "parallel_iterations", 10) > 0
                      ? eddy_ir_op_attr_int(src, "parallel_iterations", 10)
                      : 10,
          EDDY_DT_I64));
  eddy_op_state_t st = {.name = "ctl.while",
                        .operands = inits,
                        .num_operands = n,
                        .attrs = attrs,
                        .num_attrs = na,
                        .result_types = types,
                        .num_results = n,
                        .num_regions = 2,
                        .loc = src->loc};
  eddy_op_t *w = NULL;
  eddy_status_t s = NULL;
  for (int round = 0; !s; round++) {
    z->b.loc = src->loc;
    s = eddy_tfl_wrap_error(src, eddy_ir_build(&z->b, &st, &w));
    if (s)
      break;
    eddy_block_t *cb = eddy_ir_region_add_block(&w->regions[0]);
    eddy_block_t *bb = eddy_ir_region_add_block(&w->regions[1]);
    for (size_t i = 0; i < n; i++) {
      eddy_ir_block_add_arg(cb, types[i]);
      eddy_ir_block_add_arg(bb, types[i]);
    }
    s = fill(z, src, cb, bb, user);
    eddy_op_t *y = s ? NULL : eddy_ir_block_terminator(bb);
    if (!y || y->num_operands != n || round + 1 >= TFL_MAX_LOOP_ROUNDS)
      break;
    bool stable = true;
    for (size_t i = 0; i < n; i++) {
      const eddy_type_t *t = next_loop_type(
          z, types[i], eddy_ir_op_operand(y, (uint32_t)i)->type, declared[i]);
      stable = stable && t == types[i];
      types[i] = t;
    }
    if (stable)
      break;
    eddy_ir_op_erase(w);
    w = NULL;
  }
  if (!s) {
    size_t k = 0;
    for (uint32_t i = 0; i < src->num_results && k < n; i++) {
      if (src->results[i].type->kind == EDDY_TYPE_TOKEN)
        eddy_tfl_set(z, &src->results[i], NULL);
      else
        eddy_tfl_set(z, &src->results[i], eddy_ir_op_result(w, k++));
    }
  }
  free(types);
  return s;
}

typedef struct while_funcs {
  const eddy_op_t *cond, *body;
} while_funcs_t;

static eddy_status_t fill_from_funcs(eddy_tfl_t *z, const eddy_op_t *src,
                                     eddy_block_t *cb, eddy_block_t *bb,
                                     void *user) {
  while_funcs_t *wf = user;
  EDDY_RETURN_IF_ERROR(inline_func_into(z, src, wf->cond, cb->args,
                                        cb->num_args, cb, "ctl.condition"));
  return inline_func_into(z, src, wf->body, bb->args, bb->num_args, bb,
                          "ctl.yield");
}

static eddy_status_t mapped_inputs(eddy_tfl_t *z, const eddy_op_t *op,
                                   size_t first, eddy_value_t ***out,
                                   const eddy_type_t ***out_declared,
                                   size_t *out_n) {
  size_t cap = op->num_operands + 1;
  eddy_value_t **vals = calloc(cap, sizeof(*vals));
  const eddy_type_t **decl = calloc(cap, sizeof(*decl));
  if (!vals || !decl) {
    free(vals);
    free(decl);
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  }
  size_t n = 0;
  for (uint32_t i = (uint32_t)first; i < op->num_operands; i++) {
    eddy_value_t *v = eddy_tfl_get(z, eddy_ir_op_operand(op, i));
    if (v == &z->none || v->type->kind == EDDY_TYPE_TOKEN)
      continue;
    decl[n] = i - first < op->num_results ? op->results[i - first].type
                                          : v->type;
    vals[n++] = v;
  }
  *out = vals;
  *out_declared = decl;
  *out_n = n;
  return NULL;
}

static eddy_status_t lower_tf_while(eddy_tfl_t *z, const eddy_op_t *op) {
  while_funcs_t wf;
  EDDY_RETURN_IF_ERROR(lookup_callee(z, op, "cond", 0, &wf.cond));
  EDDY_RETURN_IF_ERROR(lookup_callee(z, op, "body", 0, &wf.body));
  eddy_value_t **vals = NULL;
  const eddy_type_t **decl = NULL;
  size_t n = 0;
  EDDY_RETURN_IF_ERROR(mapped_inputs(z, op, 0, &vals, &decl, &n));
  eddy_status_t st = build_while(z, op, vals, n, decl, fill_from_funcs, &wf);
  free(vals);
  free(decl);
  return st;
}

/// A predicate for ctl.if: TensorFlow's If takes any scalar (non-zero is
/// true).
static eddy_status_t to_pred(eddy_tfl_t *z, const eddy_op_t *src,
                             eddy_value_t *v, eddy_value_t **out) {
  if (!eddy_ir_type_is_scalar(v->type))
    EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, src, v, NULL, 0, &v));
  if (v->type->dtype == EDDY_DT_I1) {
    *out = v;
    return NULL;
  }
  eddy_value_t *zero = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, v->type->dtype, 0, NULL, 0, &zero));
  eddy_value_t *ops[2] = {v, zero};
  return eddy_tfl_build(z, src, "core.ne", ops, 2, NULL, 0, out);
}

/// Result types of an if: the source op's declared types, tokens left out.
static size_t if_result_types(const eddy_op_t *op, const eddy_type_t **types) {
  size_t n = 0;
  for (uint32_t i = 0; i < op->num_results; i++)
    if (op->results[i].type->kind != EDDY_TYPE_TOKEN)
      types[n++] = op->results[i].type;
  return n;
}

static void map_results(eddy_tfl_t *z, const eddy_op_t *src, eddy_op_t *dst) {
  size_t k = 0;
  for (uint32_t i = 0; i < src->num_results; i++) {
    if (src->results[i].type->kind == EDDY_TYPE_TOKEN || k >= dst->num_results)
      eddy_tfl_set(z, &src->results[i], NULL);
    else
      eddy_tfl_set(z, &src->results[i], eddy_ir_op_result(dst, k++));
  }
}

/// Each result of a translated ctl.if takes what its branches yield (the
/// join of the two), refined with its declared type: a graph whose conds
/// declare no shapes (a lowered tf.function) still has typed results, which
/// the rounds of a loop around the if need.
static void refine_if_results(eddy_tfl_t *z, eddy_op_t *ifop) {
  eddy_op_t *ty =
      eddy_ir_block_terminator(eddy_ir_region_entry(&ifop->regions[0]));
  eddy_op_t *ey =
      eddy_ir_block_terminator(eddy_ir_region_entry(&ifop->regions[1]));
  if (!ty || !ey || ty->num_operands != ifop->num_results ||
      ey->num_operands != ifop->num_results)
    return;
  for (uint32_t i = 0; i < ifop->num_results; i++) {
    const eddy_type_t *j =
        eddy_ir_type_generalize(z->ctx, eddy_ir_op_operand(ty, i)->type,
                                eddy_ir_op_operand(ey, i)->type);
    const eddy_type_t *r =
        j ? eddy_ir_type_refine(z->ctx, ifop->results[i].type, j) : NULL;
    if (r)
      eddy_ir_value_set_type(&ifop->results[i], r);
  }
}

/// Builds ctl.if(pred) with the branches given as functions of args.
static eddy_status_t build_if_funcs(eddy_tfl_t *z, const eddy_op_t *src,
                                    eddy_value_t *pred,
                                    const eddy_op_t *then_f,
                                    const eddy_op_t *else_f,
                                    eddy_value_t **args, size_t nargs,
                                    const eddy_type_t *const *types,
                                    size_t ntypes, eddy_op_t **out_if) {
  eddy_op_state_t st = {.name = "ctl.if",
                        .operands = &pred,
                        .num_operands = 1,
                        .result_types = types,
                        .num_results = ntypes,
                        .num_regions = 2,
                        .loc = src->loc};
  z->b.loc = src->loc;
  EDDY_RETURN_IF_ERROR(eddy_tfl_wrap_error(src, eddy_ir_build(&z->b, &st, out_if)));
  eddy_block_t *tb = eddy_ir_region_add_block(&(*out_if)->regions[0]);
  eddy_block_t *eb = eddy_ir_region_add_block(&(*out_if)->regions[1]);
  EDDY_RETURN_IF_ERROR(
      inline_func_into(z, src, then_f, args, nargs, tb, "ctl.yield"));
  EDDY_RETURN_IF_ERROR(
      inline_func_into(z, src, else_f, args, nargs, eb, "ctl.yield"));
  refine_if_results(z, *out_if);
  return NULL;
}

static eddy_status_t lower_tf_if(eddy_tfl_t *z, const eddy_op_t *op) {
  const eddy_op_t *tf = NULL, *ef = NULL;
  EDDY_RETURN_IF_ERROR(lookup_callee(z, op, "then_branch", 0, &tf));
  EDDY_RETURN_IF_ERROR(lookup_callee(z, op, "else_branch", 0, &ef));
  eddy_value_t *pred = NULL;
  EDDY_RETURN_IF_ERROR(
      to_pred(z, op, eddy_tfl_get(z, eddy_ir_op_operand(op, 0)), &pred));
  eddy_value_t **vals = NULL;
  const eddy_type_t **decl = NULL;
  size_t n = 0;
  EDDY_RETURN_IF_ERROR(mapped_inputs(z, op, 1, &vals, &decl, &n));
  const eddy_type_t **types = calloc(op->num_results + 1, sizeof(*types));
  eddy_status_t st = NULL;
  if (!types)
    st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  eddy_op_t *ifop = NULL;
  if (!st)
    st = build_if_funcs(z, op, pred, tf, ef, vals, n, types,
                        if_result_types(op, types), &ifop);
  if (!st)
    map_results(z, op, ifop);
  free(types);
  free(vals);
  free(decl);
  return st;
}

/// Case(index, args) {branches}: a chain of ctl.if, index == 0 first; an
/// index out of range runs the last branch (as TensorFlow does).
static eddy_status_t lower_tf_case(eddy_tfl_t *z, const eddy_op_t *op,
                                   size_t first) {
  const eddy_attr_t *br = eddy_ir_op_attr(op, "branches");
  if (!br || br->kind != EDDY_ATTR_ARRAY || br->u.array.len == 0)
    return eddy_tfl_error(op, "attribute 'branches' names no functions");
  size_t nb = br->u.array.len;
  eddy_value_t *idx = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(
      z, op, eddy_tfl_get(z, eddy_ir_op_operand(op, 0)), EDDY_DT_I32, &idx));
  if (!eddy_ir_type_is_scalar(idx->type))
    EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, idx, NULL, 0, &idx));
  eddy_value_t **vals = NULL;
  const eddy_type_t **decl = NULL;
  size_t n = 0;
  EDDY_RETURN_IF_ERROR(mapped_inputs(z, op, 1, &vals, &decl, &n));
  const eddy_type_t **types = calloc(op->num_results + 1, sizeof(*types));
  eddy_status_t st = types ? NULL
                           : eddy_status_create(EDDY_ERR_RESOURCE,
                                                "out of memory");
  size_t nt = types ? if_result_types(op, types) : 0;
  const eddy_op_t *last = NULL;
  if (!st)
    st = lookup_callee(z, op, "branches", nb - 1, &last);
  // Built from the last branch outwards is awkward with regions, so branch
  // i is "if index == i then f_i else <the rest>", the rest built inside
  // the else region.
  eddy_builder_t saved = z->b;
  eddy_op_t *outer = NULL;
  for (size_t i = first; !st && i + 1 < nb; i++) {
    const eddy_op_t *fi = NULL;
    st = lookup_callee(z, op, "branches", i, &fi);
    eddy_value_t *k = NULL, *pred = NULL;
    if (!st)
      st = eddy_tfl_splat(z, EDDY_DT_I32, 0, NULL, (double)i, &k);
    if (!st) {
      eddy_value_t *ops[2] = {idx, k};
      st = eddy_tfl_build(z, op, "core.eq", ops, 2, NULL, 0, &pred);
    }
    eddy_op_t *ifop = NULL;
    if (!st) {
      eddy_op_state_t s = {.name = "ctl.if",
                           .operands = &pred,
                           .num_operands = 1,
                           .result_types = types,
                           .num_results = nt,
                           .num_regions = 2,
                           .loc = op->loc};
      st = eddy_tfl_wrap_error(op, eddy_ir_build(&z->b, &s, &ifop));
    }
    if (!st) {
      eddy_block_t *tb = eddy_ir_region_add_block(&ifop->regions[0]);
      eddy_block_t *eb = eddy_ir_region_add_block(&ifop->regions[1]);
      st = inline_func_into(z, op, fi, vals, n, tb, "ctl.yield");
      if (!outer)
        outer = ifop;
      else {
        // The enclosing else region yields this if's results.
        eddy_op_t *y = NULL;
        eddy_value_t **rs = calloc(nt + 1, sizeof(*rs));
        for (size_t r = 0; rs && r < nt; r++)
          rs[r] = eddy_ir_op_result(ifop, r);
        if (!rs)
          st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
        if (!st)
          st = eddy_tfl_build_typed(z, op, "ctl.yield", rs, nt, NULL, 0,
                                    NULL, 0, &y);
        free(rs);
      }
      eddy_ir_builder_set_end(&z->b, eb);
    }
  }
  if (!st && !outer) {
    // One branch: just inline it.
    z->b = saved;
    st = eddy_tfl_error(op, "a Case with a single branch is not supported");
  } else if (!st) {
    st = inline_func_into(z, op, last, vals, n, z->b.block, "ctl.yield");
    z->b = saved;
    if (!st)
      map_results(z, op, outer);
  } else {
    z->b = saved;
  }
  free(types);
  free(vals);
  free(decl);
  return st;
}

/// PartitionedCall, StatefulPartitionedCall and direct calls: inlined.
static eddy_status_t lower_tf_call(eddy_tfl_t *z, const eddy_op_t *op,
                                   const char *attr) {
  const eddy_op_t *f = NULL;
  EDDY_RETURN_IF_ERROR(lookup_callee(z, op, attr, 0, &f));
  if (z->depth >= TFL_MAX_CALL_DEPTH)
    return eddy_tfl_error(op, "calls nest more than %d deep",
                          TFL_MAX_CALL_DEPTH);
  eddy_value_t **vals = NULL;
  const eddy_type_t **decl = NULL;
  size_t n = 0;
  EDDY_RETURN_IF_ERROR(mapped_inputs(z, op, 0, &vals, &decl, &n));
  eddy_block_t *entry = eddy_ir_func_entry(f);
  eddy_status_t st = NULL;
  if (entry->num_args != n)
    st = eddy_tfl_error(op, "function @%s takes %u arguments, given %zu",
                        eddy_ir_func_name(f), entry->num_args, n);
  for (size_t i = 0; !st && i < n; i++)
    eddy_tfl_set(z, entry->args[i], vals[i]);
  const eddy_op_t *term = NULL;
  z->depth++;
  if (!st)
    st = translate_block(z, entry, &term);
  z->depth--;
  if (!st && term) {
    size_t k = 0;
    for (uint32_t i = 0; i < op->num_results; i++) {
      if (op->results[i].type->kind == EDDY_TYPE_TOKEN ||
          k >= term->num_operands)
        eddy_tfl_set(z, &op->results[i], NULL);
      else
        eddy_tfl_set(z, &op->results[i],
                     eddy_tfl_get(z, eddy_ir_op_operand(term, k++)));
    }
  }
  free(vals);
  free(decl);
  return st;
}

/// ctl.while / ctl.if made by functionalize: their regions hold tf ops.
typedef struct ctl_regions {
  const eddy_op_t *src;
} ctl_regions_t;

static eddy_status_t translate_region_into(eddy_tfl_t *z, const eddy_op_t *src,
                                           const eddy_block_t *from,
                                           eddy_block_t *to,
                                           const char *term_name) {
  for (uint32_t i = 0; i < from->num_args && i < to->num_args; i++)
    eddy_tfl_set(z, from->args[i], to->args[i]);
  eddy_builder_t saved = z->b;
  eddy_ir_builder_set_end(&z->b, to);
  const eddy_op_t *term = NULL;
  eddy_status_t st = translate_block(z, from, &term);
  if (!st && term) {
    eddy_value_t **vals = calloc(term->num_operands + 1, sizeof(*vals));
    if (!vals) {
      st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
    } else {
      size_t n = mapped_operands(z, term, vals);
      if (strcmp(term_name, "ctl.condition") == 0 && n == 1)
        st = to_pred(z, src, vals[0], &vals[0]);
      eddy_op_t *t = NULL;
      if (!st)
        st = eddy_tfl_build_typed(z, src, term_name, vals, n, NULL, 0, NULL,
                                  0, &t);
      free(vals);
    }
  }
  z->b = saved;
  return st;
}

static eddy_status_t fill_from_regions(eddy_tfl_t *z, const eddy_op_t *src,
                                       eddy_block_t *cb, eddy_block_t *bb,
                                       void *user) {
  (void)user;
  EDDY_RETURN_IF_ERROR(translate_region_into(
      z, src, eddy_ir_region_entry(&src->regions[0]), cb, "ctl.condition"));
  return translate_region_into(z, src, eddy_ir_region_entry(&src->regions[1]),
                               bb, "ctl.yield");
}

static eddy_status_t lower_ctl_while(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_value_t **vals = NULL;
  const eddy_type_t **decl = NULL;
  size_t n = 0;
  EDDY_RETURN_IF_ERROR(mapped_inputs(z, op, 0, &vals, &decl, &n));
  eddy_status_t st = NULL;
  if (n != op->num_operands)
    st = eddy_tfl_error(op, "a loop value is a control token");
  if (!st)
    st = build_while(z, op, vals, n, decl, fill_from_regions, NULL);
  free(vals);
  free(decl);
  return st;
}

static eddy_status_t lower_ctl_if(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_value_t *pred = NULL;
  EDDY_RETURN_IF_ERROR(
      to_pred(z, op, eddy_tfl_get(z, eddy_ir_op_operand(op, 0)), &pred));
  const eddy_type_t **types = calloc(op->num_results + 1, sizeof(*types));
  if (!types)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  size_t nt = if_result_types(op, types);
  eddy_op_state_t s = {.name = "ctl.if",
                       .operands = &pred,
                       .num_operands = 1,
                       .result_types = types,
                       .num_results = nt,
                       .num_regions = 2,
                       .loc = op->loc};
  eddy_op_t *ifop = NULL;
  z->b.loc = op->loc;
  eddy_status_t st = eddy_tfl_wrap_error(op, eddy_ir_build(&z->b, &s, &ifop));
  free(types);
  if (st)
    return st;
  for (int r = 0; r < 2 && !st; r++) {
    eddy_block_t *b = eddy_ir_region_add_block(&ifop->regions[r]);
    st = translate_region_into(z, op, eddy_ir_region_entry(&op->regions[r]),
                               b, "ctl.yield");
  }
  if (!st) {
    refine_if_results(z, ifop);
    map_results(z, op, ifop);
  }
  return st;
}

/// keep_dataflow: the df ops that pass a value on (a Merge its forward
/// input, operand 0, the loop's initial value).
static bool df_forwards(const eddy_op_t *op) {
  static const char *const names[] = {"df.enter",  "df.exit",
                                      "df.switch", "df.switch_n",
                                      "df.merge",  "df.next_iteration"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (eddy_ir_op_is(op, names[i]))
      return true;
  return false;
}

/// keep_dataflow: a list passed on through frames and conds keeps the
/// element type its translation has. TensorFlow types every list as a
/// variant, so the importer's type of an Enter, Merge or Switch of a list
/// says nothing of its items (a lowered tf.function's loop over a
/// TensorListFromTensor reads rows of known shape), and an op on an item
/// read from it (a Squeeze, a StridedSlice) needs their rank. A Merge
/// takes the join of its inputs' but the back edge's (a loop's takes its
/// initial value's: the loop writes items of that type, which tl.push_back
/// and tl.set_item verify).
static void refine_forwarded_lists(eddy_ctx_t *ctx, eddy_op_t *c) {
  if (!df_forwards(c))
    return;
  const eddy_type_t *in = NULL;
  uint32_t n = eddy_ir_op_is(c, "df.merge") ? c->num_operands : 1;
  for (uint32_t k = 0; k < n && k < c->num_operands; k++) {
    eddy_value_t *v = eddy_ir_op_operand(c, k);
    if (v->def && eddy_ir_op_is(v->def, "df.next_iteration"))
      continue;
    in = in ? eddy_ir_type_generalize(ctx, in, v->type) : v->type;
    if (!in)
      return;
  }
  if (!in || in->kind != EDDY_TYPE_LIST)
    return;
  for (uint32_t i = 0; i < c->num_results; i++) {
    const eddy_type_t *t = c->results[i].type;
    const eddy_type_t *r =
        t->kind == EDDY_TYPE_LIST ? eddy_ir_type_refine(ctx, t, in) : NULL;
    if (r && r != t)
      eddy_ir_value_set_type(&c->results[i], r);
  }
}

/// Any other non-tf op is copied with its operands mapped.
static eddy_status_t copy_op(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_op_t *c = eddy_ir_op_clone(op, &z->map);
  if (z->keep_dataflow)
    refine_forwarded_lists(z->ctx, c);
  z->b.loc = op->loc;
  if (z->b.before)
    eddy_ir_op_insert_before(c, z->b.before);
  else
    eddy_ir_op_append(c, z->b.block);
  for (uint32_t i = 0; i < op->num_results; i++)
    eddy_tfl_set(z, &op->results[i], eddy_ir_op_result(c, i));
  return NULL;
}

/// The translated operands of op from `first` on, those of dropped nodes
/// (tokens mapped to z->none) left out, after its first ones kept as they
/// are; *n counts them. NULL when out of memory.
static eddy_value_t **kept_operands(eddy_tfl_t *z, const eddy_op_t *op,
                                    uint32_t first, size_t *n) {
  eddy_value_t **ins = calloc(op->num_operands + 1, sizeof(*ins));
  *n = 0;
  for (uint32_t i = 0; ins && i < op->num_operands; i++) {
    eddy_value_t *v = eddy_tfl_get(z, eddy_ir_op_operand(op, i));
    if (i < first || (v && v != &z->none))
      ins[(*n)++] = v;
  }
  return ins;
}

/// keep_dataflow: a tf.NoOp (or df.control) with control inputs waits for
/// them as a df.control token; one without is no token at all.
static eddy_status_t keep_noop(eddy_tfl_t *z, const eddy_op_t *op) {
  size_t n = 0;
  eddy_value_t **ins = kept_operands(z, op, 0, &n);
  if (!ins)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  eddy_status_t st = NULL;
  eddy_value_t *tok = NULL;
  if (n > 0) {
    const eddy_type_t *tt = eddy_ir_token_type_get(z->ctx);
    eddy_op_t *c = NULL;
    st = eddy_tfl_build_typed(z, op, "df.control", ins, n, NULL, 0, &tt, 1,
                              &c);
    if (!st)
      tok = eddy_ir_op_result(c, 0);
  }
  free(ins);
  for (uint32_t i = 0; !st && i < op->num_results; i++)
    eddy_tfl_set(z, &op->results[i], tok);
  return st;
}

/// keep_dataflow: a df.after waits for the tokens of the nodes that are
/// kept; the tokens of dropped ones (an Assert, a NoOp without inputs) are
/// left out, and with none left it is its data operand. It forwards that
/// operand, whose legalized type may be more refined than the imported one
/// (the value of an Optional).
static eddy_status_t keep_after(eddy_tfl_t *z, const eddy_op_t *op) {
  size_t n = 0;
  eddy_value_t **ins = kept_operands(z, op, 1, &n);
  if (!ins)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  eddy_status_t st = NULL;
  eddy_value_t *r = ins[0];
  if (n > 1) {
    const eddy_type_t *t = ins[0]->type;
    eddy_op_t *c = NULL;
    st = eddy_tfl_build_typed(z, op, "df.after", ins, n, NULL, 0, &t, 1, &c);
    r = st ? NULL : eddy_ir_op_result(c, 0);
  }
  free(ins);
  if (!st)
    eddy_tfl_set(z, &op->results[0], r);
  return st;
}

/// keep_dataflow: the ops a rule builds from constants alone. A constant
/// (an op with no operands) belongs to no frame, but an op whose operands
/// are all constants runs in the root frame of the dataflow graph, which an
/// op in a v1 loop frame cannot read (only a df.enter brings a value into a
/// frame); a loop the rule built (a ctl.while, lowered by to-dataflow
/// later) enters its initial values and the values its regions capture
/// from the frame they are in. So such an op reads one constant, and such a
/// loop each constant, through df.after(c, df.control(x)), x an operand of
/// the source op: they belong to its frame, as TensorFlow ties a loop's
/// constants to the loop by a control input.
typedef struct frame_fix {
  eddy_tfl_t *z;
  const eddy_op_t *src;
  eddy_ptrmap_t tied;   ///< constant -> its df.after
  eddy_value_t *anchor; ///< an operand of src, in its frame
  eddy_value_t *tok;    ///< df.control(anchor), made on first need
  eddy_op_t *region_op; ///< while walking its regions
  eddy_status_t st;
} frame_fix_t;

/// v is a constant: made by an op with no operands.
static bool ff_const(const eddy_value_t *v) {
  const eddy_op_t *d = v->def;
  return d && d->num_operands == 0 && d->num_regions == 0 &&
         v->type->kind != EDDY_TYPE_TOKEN;
}

/// Operand i of op read through df.after(v, tok), built once per v before
/// `before`.
static void ff_tie(frame_fix_t *f, eddy_op_t *op, uint32_t i,
                   eddy_op_t *before) {
  eddy_value_t *v = eddy_ir_op_operand(op, i);
  eddy_value_t *t = eddy_ptrmap_get(&f->tied, v);
  if (!t) {
    eddy_builder_t saved = f->z->b;
    eddy_ir_builder_set_before(&f->z->b, before);
    if (!f->tok) {
      const eddy_type_t *tt = eddy_ir_token_type_get(f->z->ctx);
      eddy_op_t *c = NULL;
      f->st = eddy_tfl_build_typed(f->z, f->src, "df.control", &f->anchor, 1,
                                   NULL, 0, &tt, 1, &c);
      if (!f->st)
        f->tok = eddy_ir_op_result(c, 0);
    }
    eddy_value_t *ops[2] = {v, f->tok};
    if (!f->st)
      f->st = eddy_tfl_build(f->z, f->src, "df.after", ops, 2, NULL, 0, &t);
    f->z->b = saved;
    if (f->st)
      return;
    eddy_ptrmap_put(&f->tied, v, t);
  }
  eddy_ir_op_set_operand(op, i, t);
}

/// Ties the constants a region of f->region_op captures from outside it.
static eddy_walk_result_t ff_captures(eddy_op_t *op, void *user) {
  frame_fix_t *f = user;
  for (uint32_t i = 0; i < op->num_operands && !f->st; i++) {
    eddy_value_t *v = eddy_ir_op_operand(op, i);
    if (ff_const(v) && !eddy_ir_op_is_ancestor(f->region_op, v->def))
      ff_tie(f, op, i, f->region_op);
  }
  return f->st ? EDDY_WALK_INTERRUPT : EDDY_WALK_ADVANCE;
}

/// Applies the rule above to the ops built for src, first .. end.
static eddy_status_t frame_constants(eddy_tfl_t *z, const eddy_op_t *src,
                                     eddy_op_t *first, eddy_op_t *end) {
  frame_fix_t f = {.z = z, .src = src};
  for (uint32_t i = 0; i < src->num_operands && !f.anchor; i++) {
    eddy_value_t *v = eddy_tfl_get(z, eddy_ir_op_operand(src, i));
    if (v != &z->none && v->type->kind != EDDY_TYPE_TOKEN && !ff_const(v))
      f.anchor = v;
  }
  if (!f.anchor)
    return NULL;
  eddy_ptrmap_init(&f.tied);
  for (eddy_op_t *o = first; o && o != end && !f.st; o = o->next) {
    if (o->num_regions > 0) {
      for (uint32_t i = 0; i < o->num_operands && !f.st; i++)
        if (ff_const(eddy_ir_op_operand(o, i)))
          ff_tie(&f, o, i, o);
      f.region_op = o;
      for (uint32_t r = 0; r < o->num_regions && !f.st; r++)
        for (eddy_block_t *b = o->regions[r].first; b && !f.st; b = b->next)
          for (eddy_op_t *n = b->first; n && !f.st; n = n->next)
            eddy_ir_walk_pre(n, ff_captures, &f);
      continue;
    }
    bool all = o->num_operands > 0 && !eddy_ir_op_is(o, "df.after");
    for (uint32_t i = 0; i < o->num_operands && all; i++)
      all = ff_const(eddy_ir_op_operand(o, i));
    if (all)
      ff_tie(&f, o, 0, o);
  }
  eddy_ptrmap_destroy(&f.tied);
  return f.st;
}

static eddy_status_t translate_op(eddy_tfl_t *z, const eddy_op_t *op) {
  const char *name = op->name->str;
  if (z->keep_dataflow) {
    bool kept = false;
    EDDY_RETURN_IF_ERROR(eddy_tfl_keep_dataflow_op(z, op, &kept));
    if (kept)
      return NULL;
    if (strcmp(name, "tf.NoOp") == 0 ||
        strcmp(name, "tf.ControlTrigger") == 0 ||
        strcmp(name, "tf.Assert") == 0)
      return keep_noop(z, op);
    if (strcmp(name, "df.control") == 0)
      return keep_noop(z, op); // tokens of dropped nodes left out
    if (strcmp(name, "df.after") == 0)
      return keep_after(z, op);
    if (strncmp(name, "df.", 3) == 0)
      return copy_op(z, op);
  }
  // tf.Assert is dropped as the other token ops: its condition is not
  // checked (as XLA's compilation of TensorFlow graphs does not either).
  if (strcmp(name, "df.control") == 0 || strcmp(name, "tf.NoOp") == 0 ||
      strcmp(name, "tf.ControlTrigger") == 0 ||
      strcmp(name, "tf.Assert") == 0) {
    for (uint32_t i = 0; i < op->num_results; i++)
      eddy_tfl_set(z, &op->results[i], NULL);
    return NULL;
  }
  if (strcmp(name, "df.after") == 0) {
    eddy_tfl_set(z, &op->results[0],
                 eddy_tfl_get(z, eddy_ir_op_operand(op, 0)));
    return NULL;
  }
  if (strcmp(name, "ctl.while") == 0)
    return lower_ctl_while(z, op);
  if (strcmp(name, "ctl.if") == 0)
    return lower_ctl_if(z, op);
  if (strncmp(name, "tf.", 3) != 0)
    return copy_op(z, op);
  const char *t = name + 3;
  if (strcmp(t, "While") == 0 || strcmp(t, "StatelessWhile") == 0)
    return lower_tf_while(z, op);
  if (strcmp(t, "If") == 0 || strcmp(t, "StatelessIf") == 0)
    return lower_tf_if(z, op);
  if (strcmp(t, "Case") == 0 || strcmp(t, "StatelessCase") == 0)
    return lower_tf_case(z, op, 0);
  if (strcmp(t, "PartitionedCall") == 0 ||
      strcmp(t, "StatefulPartitionedCall") == 0 ||
      strcmp(t, "LegacyCall") == 0)
    return lower_tf_call(z, op, "f");
  bool handled = false;
  eddy_op_t *mark = z->b.before ? z->b.before->prev : z->b.block->last;
  EDDY_RETURN_IF_ERROR(eddy_tfl_lower_op(z, op, &handled));
  if (!handled)
    return eddy_tfl_error(op, "no lowering for this op");
  if (!z->keep_dataflow)
    return NULL;
  eddy_op_t *first = mark ? mark->next : z->b.block->first;
  return frame_constants(z, op, first, z->b.before);
}

/// ---- Driver -------------------------------------------------------------------

static bool is_functional(const char *t) {
  static const char *const names[] = {
      "While",     "StatelessWhile",  "If",
      "StatelessIf", "Case",          "StatelessCase",
      "PartitionedCall", "StatefulPartitionedCall", "LegacyCall"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(t, names[i]) == 0)
      return true;
  return false;
}

typedef struct scan {
  eddy_module_t *m;
  eddy_ptrmap_t *callees;
  eddy_buf_t names;   ///< "Op\x01node\x01node\x02Op..." collected
  const char **ops;   ///< distinct unsupported op names
  eddy_buf_t *nodes;  ///< per op: its node names
  size_t n, cap;
} scan_t;

static void mark_callee_attr(scan_t *s, const eddy_attr_t *a) {
  if (!a)
    return;
  if (a->kind == EDDY_ATTR_ARRAY) {
    for (size_t i = 0; i < a->u.array.len; i++)
      mark_callee_attr(s, a->u.array.elems[i]);
  } else if (a->kind == EDDY_ATTR_SYMBOL) {
    eddy_op_t *f = eddy_ir_module_lookup_func(s->m, a->u.str.data);
    if (f)
      eddy_ptrmap_put(s->callees, f, f);
  }
}

static eddy_walk_result_t scan_op(eddy_op_t *op, void *user) {
  scan_t *s = user;
  const char *name = op->name->str;
  if (strncmp(name, "tf.", 3) != 0)
    return EDDY_WALK_ADVANCE;
  const char *t = name + 3;
  if (is_functional(t)) {
    for (uint32_t i = 0; i < op->num_attrs; i++)
      mark_callee_attr(s, op->attrs[i].value);
    return EDDY_WALK_ADVANCE;
  }
  if (eddy_tfl_is_supported(t))
    return EDDY_WALK_ADVANCE;
  size_t k = 0;
  while (k < s->n && strcmp(s->ops[k], t) != 0)
    k++;
  if (k == s->n) {
    if (s->n == s->cap) {
      size_t nc = s->cap ? s->cap * 2 : 8;
      const char **no = realloc(s->ops, nc * sizeof(*no));
      if (!no)
        return EDDY_WALK_INTERRUPT;
      s->ops = no;
      eddy_buf_t *nn = realloc(s->nodes, nc * sizeof(*nn));
      if (!nn)
        return EDDY_WALK_INTERRUPT;
      s->nodes = nn;
      s->cap = nc;
    }
    s->ops[s->n] = t;
    eddy_buf_init(&s->nodes[s->n]);
    s->n++;
  }
  // A node's name (GraphDef), or where the op is in an IR file.
  if (s->nodes[k].len)
    eddy_buf_puts(&s->nodes[k], ", ");
  if (op->loc && op->loc->line)
    eddy_ir_loc_format(op->loc, &s->nodes[k]);
  else
    eddy_buf_printf(&s->nodes[k], "'%s'", node_name(op));
  return EDDY_WALK_ADVANCE;
}

/// Every unsupported op with its nodes, in one error.
static eddy_status_t check_supported(eddy_module_t *m,
                                     eddy_ptrmap_t *callees) {
  scan_t s = {.m = m, .callees = callees};
  eddy_buf_init(&s.names);
  eddy_ir_walk_pre(m->op, scan_op, &s);
  eddy_status_t st = NULL;
  if (s.n) {
    eddy_buf_t msg;
    eddy_buf_init(&msg);
    for (size_t i = 0; i < s.n; i++)
      eddy_buf_printf(&msg, "%s%s (node%s %s)", i ? "; " : "", s.ops[i],
                      strchr(s.nodes[i].data, ',') ? "s" : "",
                      s.nodes[i].data);
    st = eddy_status_create(EDDY_ERR_UNSUPPORTED,
                            "unsupported TensorFlow ops: %s",
                            msg.data);
    eddy_buf_destroy(&msg);
  }
  for (size_t i = 0; i < s.n; i++)
    eddy_buf_destroy(&s.nodes[i]);
  free(s.nodes);
  free(s.ops);
  eddy_buf_destroy(&s.names);
  return st;
}

typedef struct names {
  const char **v;
  size_t n, cap;
} names_t;

static void add_name(const char *name, void *user) {
  names_t *s = user;
  if (s->n == s->cap) {
    size_t nc = s->cap ? 2 * s->cap : 256;
    const char **nv = realloc(s->v, nc * sizeof(*nv));
    if (!nv)
      return;
    s->v = nv;
    s->cap = nc;
  }
  s->v[s->n++] = name;
}

static int cmp_name(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void eddy_tf_supported_ops_each(void (*fn)(const char *name, void *user),
                                void *user) {
  // Ops the importer and functionalize consume before legalize-tf runs.
  static const char *const RAISED[] = {"Placeholder", "Enter",  "Exit",
                                       "LoopCond",    "Merge",  "Switch",
                                       "NextIteration", "_SwitchN"};
  names_t s = {0};
  for (size_t i = 0; i < sizeof RAISED / sizeof RAISED[0]; i++)
    add_name(RAISED[i], &s);
  eddy_tfl_supported_each(add_name, &s);
  qsort(s.v, s.n, sizeof(*s.v), cmp_name);
  for (size_t i = 0; i < s.n; i++)
    if (i == 0 || strcmp(s.v[i], s.v[i - 1]) != 0)
      fn(s.v[i], user);
  free(s.v);
}

/// Translates one function in place: the new ops are built before the old
/// ones, which are then erased; the function type takes the new result
/// types.
static eddy_status_t legalize_func(eddy_tfl_t *z, eddy_op_t *func) {
  eddy_block_t *entry = eddy_ir_func_entry(func);
  if (!entry || !entry->first)
    return NULL;
  eddy_op_t *first_old = entry->first;
  eddy_ir_builder_set_before(&z->b, first_old);
  z->func = func;
  z->top = entry;
  const eddy_op_t *term = NULL;
  EDDY_RETURN_IF_ERROR(translate_block(z, entry, &term));
  // keep_dataflow: a df.merge was copied before the df.next_iteration of
  // its back edge: point it at the copy.
  for (eddy_op_t *op = entry->first; z->keep_dataflow && op != first_old;
       op = op->next)
    for (uint32_t i = 0; i < op->num_operands; i++) {
      eddy_value_t *v = eddy_ir_op_operand(op, i);
      eddy_value_t *r = eddy_ptrmap_get(&z->map, v);
      if (r && r != v && r != &z->none)
        eddy_ir_op_set_operand(op, i, r);
    }
  if (!term || !eddy_ir_op_is(term, "func.return"))
    return eddy_ir_op_error(func, "the function does not end "
                                  "in func.return");
  eddy_value_t **vals = calloc(term->num_operands + 1, sizeof(*vals));
  const eddy_type_t **types = calloc(term->num_operands + 1, sizeof(*types));
  eddy_status_t st = NULL;
  if (!vals || !types)
    st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  size_t n = 0;
  if (!st) {
    n = mapped_operands(z, term, vals);
    for (size_t i = 0; i < n; i++)
      types[i] = vals[i]->type;
    eddy_op_t *ret = NULL;
    st = eddy_tfl_build_typed(z, term, "func.return", vals, n, NULL, 0, NULL,
                              0, &ret);
  }
  if (!st) {
    // Old ops: drop every operand first (v1 graphs have back edges), then
    // erase.
    for (eddy_op_t *op = first_old; op; op = op->next)
      eddy_ir_op_set_operands(op, NULL, 0);
    // Ops with regions first, the last first: their nested ops may use the
    // others, and the results of earlier ops with regions.
    eddy_op_t *last_old = first_old;
    while (last_old && last_old->next)
      last_old = last_old->next;
    for (eddy_op_t *op = last_old, *prev; op; op = prev) {
      prev = op == first_old ? NULL : op->prev;
      if (op->num_regions > 0) {
        if (op == first_old)
          first_old = op->next;
        eddy_ir_op_erase(op);
      }
    }
    while (first_old) {
      eddy_op_t *next = first_old->next;
      eddy_ir_op_erase(first_old);
      first_old = next;
    }
    const eddy_type_t *fty = eddy_ir_func_type(func);
    eddy_ir_func_set_type(func,
                          eddy_ir_func_type_get(z->ctx, fty->inputs,
                                                fty->num_inputs, types, n));
  }
  free(vals);
  free(types);
  return st;
}

static eddy_status_t legalize_module(eddy_module_t *m, bool keep_dataflow) {
  eddy_tfl_t z;
  memset(&z, 0, sizeof z);
  z.keep_dataflow = keep_dataflow;
  z.ctx = m->ctx;
  z.m = m;
  eddy_ir_builder_init(&z.b, z.ctx);
  eddy_ptrmap_init(&z.map);
  eddy_ptrmap_init(&z.callees);
  z.none.type = eddy_ir_token_type_get(z.ctx);
  eddy_status_t st = eddy_tfl_split_optionals(m);
  if (!st)
    st = check_supported(m, &z.callees);
  size_t nfuncs = 0;
  for (eddy_op_t *op = eddy_ir_module_body(m)->first; op; op = op->next)
    nfuncs++;
  eddy_op_t **funcs = calloc(nfuncs + 1, sizeof(*funcs));
  if (!st && !funcs)
    st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  size_t k = 0;
  for (eddy_op_t *op = eddy_ir_module_body(m)->first; !st && op;
       op = op->next)
    funcs[k++] = op;
  for (size_t i = 0; !st && i < k; i++) {
    if (!eddy_ir_op_is(funcs[i], "func.func") ||
        eddy_ptrmap_has(&z.callees, funcs[i]))
      continue;
    st = legalize_func(&z, funcs[i]);
  }
  // Callees are inlined everywhere they were used: remove them (their
  // bodies first, which may refer to each other only through symbols).
  for (size_t i = 0; !st && i < k; i++) {
    if (eddy_ptrmap_has(&z.callees, funcs[i])) {
      eddy_block_t *entry = eddy_ir_func_entry(funcs[i]);
      for (eddy_op_t *op = entry ? entry->first : NULL; op; op = op->next)
        eddy_ir_op_set_operands(op, NULL, 0);
      eddy_ir_op_erase(funcs[i]);
    }
  }
  free(funcs);
  eddy_ptrmap_destroy(&z.map);
  eddy_ptrmap_destroy(&z.callees);
  return st;
}

eddy_status_t eddy_tf_legalize(eddy_module_t *m) {
  return legalize_module(m, false);
}

/// ---- Merge types of the graph kept as dataflow --------------------------------

/// Rounds of probing at most (each makes some Merge type more general).
#define TFL_MAX_MERGE_ROUNDS 16

/// A tf.Merge or df.merge with a back edge.
static bool is_loop_merge(const eddy_op_t *op) {
  if (!eddy_ir_op_is(op, "tf.Merge") && !eddy_ir_op_is(op, "df.merge"))
    return false;
  for (uint32_t i = 0; i < op->num_operands; i++) {
    const eddy_op_t *d = eddy_ir_op_operand(op, i)->def;
    if (d && (eddy_ir_op_is(d, "tf.NextIteration") ||
              eddy_ir_op_is(d, "df.next_iteration")))
      return true;
  }
  return false;
}

/// The loop Merges of m, in order (functions in module order); their count
/// in *n, at most cap.
static size_t loop_merges(eddy_module_t *m, eddy_op_t **out, size_t cap) {
  size_t n = 0;
  for (eddy_op_t *f = eddy_ir_module_body(m)->first; f; f = f->next) {
    eddy_block_t *b =
        eddy_ir_op_is(f, "func.func") ? eddy_ir_func_entry(f) : NULL;
    for (eddy_op_t *op = b ? b->first : NULL; op; op = op->next)
      if (is_loop_merge(op)) {
        if (out && n < cap)
          out[n] = op;
        n++;
      }
  }
  return n;
}

/// The join of the types a legalized merge receives (a back edge's value
/// taken before its df.next_iteration, whose declared type is the
/// importer's); NULL when they do not join.
static const eddy_type_t *merge_join(eddy_ctx_t *ctx, const eddy_op_t *op) {
  const eddy_type_t *t = NULL;
  for (uint32_t i = 0; i < op->num_operands; i++) {
    eddy_value_t *v = eddy_ir_op_operand(op, i);
    if (v->def && eddy_ir_op_is(v->def, "df.next_iteration") &&
        v->def->num_operands > 0)
      v = eddy_ir_op_operand(v->def, 0);
    if (v->type->kind == EDDY_TYPE_TOKEN)
      continue;
    t = t ? eddy_ir_type_generalize(ctx, t, v->type) : v->type;
    if (!t)
      return NULL;
  }
  return t;
}

/// One probe: a copy of m whose loop Merges have the types `assume` is
/// legalized as dataflow; out[i] is what Merge i then receives. false when
/// the copy does not legalize (the real run reports why).
static bool probe_merges(eddy_module_t *m, const eddy_type_t **assume,
                         size_t n, const eddy_type_t **out) {
  eddy_module_t *cm = eddy_ir_module_create(m->ctx, m->op->loc);
  if (!cm)
    return false;
  eddy_ptrmap_t map;
  eddy_ptrmap_init(&map);
  for (eddy_op_t *f = eddy_ir_module_body(m)->first; f; f = f->next)
    eddy_ir_op_append(eddy_ir_op_clone(f, &map), eddy_ir_module_body(cm));
  eddy_ptrmap_destroy(&map);
  eddy_op_t **ms = calloc(n + 1, sizeof *ms);
  bool ok = ms && loop_merges(cm, ms, n) == n;
  for (size_t i = 0; ok && i < n; i++)
    eddy_ir_value_set_type(&ms[i]->results[0], assume[i]);
  eddy_status_t st = NULL;
  if (ok) {
    st = eddy_tfl_v1_array_types(cm);
    if (!st)
      st = eddy_tf_v1_to_dataflow(cm);
    if (!st)
      st = legalize_module(cm, true);
  }
  ok = ok && !st && loop_merges(cm, ms, n) == n;
  for (size_t i = 0; ok && i < n; i++) {
    out[i] = merge_join(m->ctx, ms[i]);
    ok = out[i] != NULL;
  }
  eddy_status_destroy(st);
  free(ms);
  eddy_ir_module_destroy(cm);
  return ok;
}

/// The types of the loop Merges of a v1 graph, as TensorFlow's shape
/// refiner finds them: each starts with the join of its inputs from
/// outside the loop (the Enters), a copy of the graph is legalized with
/// those types, and each type is generalized with what its back edge then
/// receives, until nothing changes. A Merge the graph declares unranked
/// (written without add_shapes) gets the rank and dims that hold in every
/// iteration; a declared shape is kept where it says more. When a copy
/// does not legalize, the types stay as imported.
static eddy_status_t v1_merge_types(eddy_module_t *m) {
  size_t n = loop_merges(m, NULL, 0);
  if (n == 0)
    return NULL;
  eddy_op_t **ms = calloc(n, sizeof *ms);
  const eddy_type_t **cur = calloc(n, sizeof *cur);
  const eddy_type_t **got = calloc(n, sizeof *got);
  if (!ms || !cur || !got) {
    free(ms);
    free(cur);
    free(got);
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  }
  loop_merges(m, ms, n);
  bool ok = true;
  for (size_t i = 0; i < n; i++) {
    const eddy_type_t *t = NULL;
    for (uint32_t k = 0; ok && k < ms[i]->num_operands; k++) {
      eddy_value_t *v = eddy_ir_op_operand(ms[i], k);
      if ((v->def && eddy_ir_op_is(v->def, "tf.NextIteration")) ||
          v->type->kind == EDDY_TYPE_TOKEN)
        continue;
      t = t ? eddy_ir_type_generalize(m->ctx, t, v->type) : v->type;
      ok = t != NULL;
    }
    const eddy_type_t *decl = ms[i]->results[0].type;
    cur[i] = t && eddy_ir_type_refine(m->ctx, decl, t)
                 ? eddy_ir_type_refine(m->ctx, decl, t)
                 : decl;
  }
  bool stable = false;
  for (int round = 0; ok && !stable && round < TFL_MAX_MERGE_ROUNDS;
       round++) {
    ok = probe_merges(m, cur, n, got);
    stable = true;
    for (size_t i = 0; ok && i < n; i++) {
      const eddy_type_t *g = eddy_ir_type_generalize(m->ctx, cur[i], got[i]);
      const eddy_type_t *r =
          g ? eddy_ir_type_refine(m->ctx, ms[i]->results[0].type, g) : NULL;
      ok = r != NULL;
      if (ok && r != cur[i]) {
        cur[i] = r;
        stable = false;
      }
    }
  }
  for (size_t i = 0; ok && stable && i < n; i++)
    eddy_ir_value_set_type(&ms[i]->results[0], cur[i]);
  free(ms);
  free(cur);
  free(got);
  return NULL;
}

/// Each Enter's result takes its operand's type where that says more (a
/// lowered tf.function's Enters declare no shapes, and an Enter passes its
/// value on unchanged), so that the Merges' first types have ranks.
static void v1_enter_types(eddy_module_t *m) {
  for (eddy_op_t *f = eddy_ir_module_body(m)->first; f; f = f->next) {
    eddy_block_t *b =
        eddy_ir_op_is(f, "func.func") ? eddy_ir_func_entry(f) : NULL;
    for (eddy_op_t *op = b ? b->first : NULL; op; op = op->next) {
      if (!eddy_ir_op_is(op, "tf.Enter") || op->num_operands < 1)
        continue;
      const eddy_type_t *r = eddy_ir_type_refine(
          m->ctx, op->results[0].type, eddy_ir_op_operand(op, 0)->type);
      if (r)
        eddy_ir_value_set_type(&op->results[0], r);
    }
  }
}

eddy_status_t eddy_tf_legalize_dataflow(eddy_module_t *m) {
  v1_enter_types(m);
  EDDY_RETURN_IF_ERROR(v1_merge_types(m));
  EDDY_RETURN_IF_ERROR(eddy_tfl_v1_array_types(m));
  EDDY_RETURN_IF_ERROR(eddy_tf_v1_to_dataflow(m));
  return legalize_module(m, true);
}

static eddy_status_t run_legalize(eddy_pass_ctx_t *pc, eddy_module_t *m) {
  eddy_ir_pass_mark_changed(pc);
  return eddy_tf_legalize(m);
}

static eddy_status_t run_functionalize(eddy_pass_ctx_t *pc, eddy_module_t *m) {
  eddy_ir_pass_mark_changed(pc);
  return eddy_tf_functionalize(m);
}

const eddy_pass_t eddy_tf_pass_legalize = {
    .name = "legalize-tf",
    .summary = "lower the tf dialect to core, ctl and tl (inlining the "
               "functions of While, If, Case and calls)",
    .run = run_legalize,
};

const eddy_pass_t eddy_tf_pass_functionalize = {
    .name = "functionalize",
    .summary = "raise v1 control flow (Enter/Merge/Switch/NextIteration/Exit) "
               "to ctl.while and ctl.if",
    .run = run_functionalize,
};

void eddy_tf_lower_passes_register(eddy_ctx_t *ctx) {
  eddy_tf_dialect_register(ctx);
  eddy_ir_pass_register(ctx, &eddy_tf_pass_functionalize);
  eddy_ir_pass_register(ctx, &eddy_tf_pass_legalize);
}

/// gemm-sink and scatter-sink: a loop's per-step sums as one op after the
/// loop (docs/passes.md).
///
/// The gradient of a recurrent loop sums each weight's gradient over the
/// steps into a loop value:
///
///   acc_{t+1} = core.add(acc_t, core.matmul(a_t, b_t) {transpose_a = true})
///   acc_{t+1} = core.add(acc_t, core.scatter(i_t, u_t[, size]) {axis = 0})
///
/// The first is a weight's gradient (gemm-sink), the second the gradient of
/// a gather, for example of the weights a loop reads by its counter
/// (scatter-sink): each step writes a dense tensor of acc's size, so the
/// loop costs steps x |acc|. Either way the loop returns acc_0 + the sum of
/// the per-step terms, which is one op of the stacked operands: A^T B, with
/// A and B the a_t and b_t stacked along their rows, or scatter(I, U) with
/// I and U the stacked i_t and u_t (a scatter sums the updates of equal
/// indices). The loop now pushes the operands to lists instead (a value
/// pushed for several sums is pushed once) and passes acc through; after
/// it, the lists are stacked (and, for the matmul, reshaped to [n*R, P] and
/// [n*R, Q]), the one op is built and added to acc's result.
///
/// This sums in another order: the per-step results are no longer rounded
/// and added one by one. It is done for f32, f16 and bf16 only, whose
/// matmul and scatter contracts already leave the order of their sums open
/// (and, for scatter-sink, for integers, whose sums are exact); f64 (whose
/// matmul sums in a fixed order) is left alone. The lists cost n times the
/// pushed values' elements of memory. Nothing the rewrite adds can fail
/// that the loop could not: the pushes and stacks are of static shapes, a
/// loop that runs zero times adds a product of zeros or a scatter of no
/// rows, and an index out of range is reported by the scatter after the
/// loop instead of in it.
#include "dialects/ctl/ctl.h"
#include "dialects/tl/tl.h"
#include "ir/passes/pass_util.h"
#include "ir/passes/passes.h"

#include <stdlib.h>

typedef enum ls_kind { LS_MATMUL, LS_SCATTER } ls_kind_t;

/// One matched accumulation: loop value `value` is summed by `add` of the
/// term `prod`, whose pushed operands are vals[ia] and vals[ib]; `size` is
/// a scatter's size operand, as a value defined before the loop (or NULL).
typedef struct ls_match {
  uint32_t value;
  eddy_op_t *add, *prod;
  bool acc_first; ///< add(acc, term) rather than add(term, acc)
  size_t ia, ib;
  eddy_value_t *size;
  int64_t size_attr;      ///< a scatter's `size` attribute
  const eddy_loc_t *loc; ///< the term's: the op after the loop reports it
} ls_match_t;

static bool ls_is_matrix(const eddy_type_t *t) {
  return eddy_ir_type_is_tensor(t) && eddy_ir_type_is_static(t) &&
         t->rank == 2 && eddy_ir_type_num_elements(t) > 0;
}

/// The dtypes whose sum may be reordered: floats whose matmul and scatter
/// contracts leave the order open, and (for kind LS_SCATTER) integers.
static bool ls_relaxed_dtype(eddy_dtype_t dt, ls_kind_t kind) {
  if (dt == EDDY_DT_F32 || dt == EDDY_DT_F16 || dt == EDDY_DT_BF16)
    return true;
  return kind == LS_SCATTER && dt != EDDY_DT_I1 && eddy_dtype_is_int(dt);
}

/// The term of the matmul kind (see the file comment) fits.
static bool ls_match_matmul(const eddy_op_t *loop, eddy_op_t *mm,
                            const eddy_type_t *t) {
  if (!eddy_ir_op_is(mm, "core.matmul") ||
      !eddy_ir_op_attr_bool(mm, "transpose_a", false) ||
      eddy_ir_op_attr_bool(mm, "transpose_b", false) || !ls_is_matrix(t))
    return false;
  eddy_value_t *a = mm->operands[0].value, *b = mm->operands[1].value;
  if (!ls_is_matrix(a->type) || !ls_is_matrix(b->type))
    return false;
  // A factor that does not change would be pushed n times for nothing.
  return !eddy_passes_loop_invariant_source(loop, a) &&
         !eddy_passes_loop_invariant_source(loop, b);
}

/// t is static but for its first dim (a list of such items concatenates).
static bool ls_static_rows(const eddy_type_t *t) {
  if (!eddy_ir_type_is_tensor(t) || t->rank < 1 ||
      t->dims[0] != EDDY_DIM_DYNAMIC)
    return false;
  for (int32_t d = 1; d < t->rank; d++)
    if (t->dims[d] == EDDY_DIM_DYNAMIC)
      return false;
  return true;
}

/// The term of the scatter kind fits: along axis 0, indices and updates
/// that change in the loop, both static (they are stacked after it) or
/// both static but for their rows (concatenated; an inner loop sunk before
/// leaves such a scatter in the loop around it), and a size that does not
/// change.
static bool ls_match_scatter(const eddy_op_t *loop, eddy_op_t *sc,
                             eddy_value_t **size) {
  if (!eddy_ir_op_is(sc, "core.scatter") ||
      eddy_ir_op_attr_int(sc, "axis", 0) != 0)
    return false;
  eddy_value_t *i = sc->operands[0].value, *u = sc->operands[1].value;
  bool stacked =
      eddy_ir_type_is_static(i->type) && eddy_ir_type_is_static(u->type);
  if ((!stacked && !(ls_static_rows(i->type) && ls_static_rows(u->type))) ||
      (eddy_passes_loop_invariant_source(loop, i) &&
       eddy_passes_loop_invariant_source(loop, u)))
    return false;
  *size = NULL;
  if (sc->num_operands == 3) {
    *size = eddy_passes_loop_invariant_source(loop, sc->operands[2].value);
    if (!*size)
      return false;
  }
  return true;
}

/// Loop value i of loop matches the pattern of kind (see the file comment).
static bool ls_match(const eddy_op_t *loop, uint32_t i, ls_kind_t kind,
                     ls_match_t *m) {
  eddy_block_t *cond = eddy_ctl_while_cond(loop);
  eddy_block_t *body = eddy_ctl_while_body(loop);
  if (!cond || !body || i >= cond->num_args || i >= body->num_args)
    return false;
  eddy_value_t *acc = body->args[i];
  eddy_op_t *yield = eddy_ir_block_terminator(body);
  eddy_value_t *y = yield->operands[i].value;
  eddy_op_t *add = y->def;
  if (eddy_ir_value_has_uses(cond->args[i]) ||
      eddy_ir_value_num_uses(acc) != 1 || eddy_ir_value_num_uses(y) != 1 ||
      !add || add->block != body || !eddy_ir_op_is(add, "core.add"))
    return false;
  bool acc_first = add->operands[0].value == acc;
  eddy_value_t *p = add->operands[acc_first ? 1 : 0].value;
  if (add->operands[acc_first ? 0 : 1].value != acc || p == acc)
    return false;
  eddy_op_t *prod = p->def;
  const eddy_type_t *t = acc->type;
  if (!prod || prod->block != body || eddy_ir_value_num_uses(p) != 1 ||
      !eddy_ir_type_is_tensor(t) || !ls_relaxed_dtype(t->dtype, kind) ||
      y->type != t || p->type != t)
    return false;
  eddy_value_t *size = NULL;
  if (kind == LS_MATMUL ? !ls_match_matmul(loop, prod, t)
                        : !ls_match_scatter(loop, prod, &size))
    return false;
  *m = (ls_match_t){.value = i,
                    .add = add,
                    .prod = prod,
                    .acc_first = acc_first,
                    .size = size,
                    .size_attr = eddy_ir_op_attr_int(prod, "size", 0),
                    .loc = prod->loc};
  return true;
}

/// Index of v in vals[0..*n), appended when absent.
static size_t ls_value_index(eddy_value_t **vals, size_t *n, eddy_value_t *v) {
  for (size_t i = 0; i < *n; i++)
    if (vals[i] == v)
      return i;
  vals[*n] = v;
  return (*n)++;
}

static eddy_status_t ls_build(eddy_builder_t *b, const char *name,
                              eddy_value_t *const *ops, size_t n,
                              const eddy_named_attr_t *attrs, size_t na,
                              const eddy_type_t *type, eddy_op_t **out) {
  eddy_op_state_t s = {.name = name,
                       .operands = ops,
                       .num_operands = n,
                       .attrs = attrs,
                       .num_attrs = na,
                       .result_types = type ? &type : NULL,
                       .num_results = 1};
  return eddy_ir_build(b, &s, out);
}

/// After the loop nl: the one term of match m, of the stacked (for a
/// matmul, flattened) lists, indexed as vals.
static eddy_status_t ls_term(eddy_builder_t *b, eddy_op_t *nl, ls_kind_t kind,
                             const ls_match_t *m, eddy_value_t **stk,
                             const eddy_type_t *type, eddy_value_t **out) {
  eddy_ctx_t *ctx = nl->ctx;
  eddy_op_t *op = NULL;
  if (kind == LS_SCATTER) {
    eddy_value_t *ops[3] = {stk[m->ia], stk[m->ib], m->size};
    eddy_named_attr_t at[2] = {
        eddy_ir_named_attr(ctx, "axis",
                           eddy_ir_int_attr_get(ctx, 0, EDDY_DT_I64)),
        eddy_ir_named_attr(
            ctx, "size", eddy_ir_int_attr_get(ctx, m->size_attr, EDDY_DT_I64))};
    EDDY_RETURN_IF_ERROR(ls_build(b, "core.scatter", ops, m->size ? 3 : 2, at,
                                  2, type, &op));
  } else {
    eddy_value_t *ops[2] = {stk[m->ia], stk[m->ib]};
    eddy_named_attr_t ta = eddy_ir_named_attr(ctx, "transpose_a",
                                              eddy_ir_bool_attr_get(ctx, true));
    EDDY_RETURN_IF_ERROR(ls_build(b, "core.matmul", ops, 2, &ta, 1, type, &op));
  }
  *out = &op->results[0];
  return NULL;
}

/// After the loop nl: list j stacked (concatenated when its items have
/// dynamic rows), and for a matmul's factor flattened to [n*R, P].
static eddy_status_t ls_stack(eddy_builder_t *b, eddy_op_t *nl,
                              ls_kind_t kind, eddy_value_t *list,
                              const eddy_type_t *vt, eddy_value_t **out) {
  eddy_ctx_t *ctx = nl->ctx;
  eddy_op_t *op = NULL;
  if (eddy_ir_type_is_static(vt)) {
    EDDY_RETURN_IF_ERROR(ls_build(b, "tl.stack", &list, 1, NULL, 0,
                                  eddy_tl_stacked_type(ctx, vt), &op));
  } else {
    eddy_op_state_t cs = {.name = "tl.concat",
                          .operands = &list,
                          .num_operands = 1,
                          .num_results = 2};
    EDDY_RETURN_IF_ERROR(eddy_ir_build(b, &cs, &op));
  }
  *out = &op->results[0];
  if (kind != LS_MATMUL)
    return NULL;
  int64_t shape[2] = {-1, vt->dims[1]};
  eddy_named_attr_t a = eddy_ir_named_attr(
      ctx, "shape", eddy_ir_i64_array_attr_get(ctx, shape, 2));
  EDDY_RETURN_IF_ERROR(ls_build(b, "core.reshape", out, 1, &a, 1, NULL, &op));
  *out = &op->results[0];
  return NULL;
}

/// Drops the k matched loop values of nl, which it now passes through
/// unread, so that a loop around nl sees the sum's own add again.
static eddy_status_t ls_drop_sums(eddy_op_t *nl, const ls_match_t *ms,
                                  size_t k) {
  uint32_t n = nl->num_operands;
  bool *keep = malloc(n);
  eddy_value_t **next = malloc(n * sizeof *next);
  if (!keep || !next) {
    free(keep);
    free(next);
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  }
  for (uint32_t i = 0; i < n; i++)
    keep[i] = true;
  for (size_t m = 0; m < k; m++)
    keep[ms[m].value] = false;
  eddy_op_t *yield = eddy_ir_block_terminator(eddy_ctl_while_body(nl));
  size_t kept = 0;
  for (uint32_t i = 0; i < n; i++)
    if (keep[i])
      next[kept++] = eddy_ir_op_operand(yield, i);
  eddy_ir_op_set_operands(yield, next, kept);
  eddy_op_t *out = NULL;
  eddy_status_t st = eddy_passes_rebuild_op(nl, keep, keep, keep, &out);
  free(keep);
  free(next);
  return st;
}

/// Rewrites the k matches of loop (values: the nv distinct pushed values).
static eddy_status_t ls_rewrite(eddy_op_t *loop, ls_kind_t kind,
                                ls_match_t *ms, size_t k, eddy_value_t **vals,
                                size_t nv) {
  eddy_ctx_t *ctx = loop->ctx;
  eddy_builder_t b;
  eddy_ir_builder_init(&b, ctx);
  eddy_ir_builder_set_before(&b, loop);
  b.loc = loop->loc;
  eddy_value_t **io = calloc(nv + loop->num_operands + 1, sizeof *io);
  if (!io)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  eddy_status_t st = NULL;
  for (size_t j = 0; j < nv && !st; j++) {
    eddy_op_t *op = NULL;
    st = ls_build(&b, "tl.empty", NULL, 0, NULL, 0,
                  eddy_ir_list_type_get(ctx, vals[j]->type), &op);
    if (!st)
      io[j] = &op->results[0];
  }
  uint32_t old = loop->num_operands;
  eddy_block_t *old_body = eddy_ctl_while_body(loop);
  eddy_op_t *nl = NULL;
  if (!st)
    st = eddy_passes_while_add_values(loop, io, nv, &nl);
  if (st) {
    free(io);
    return st;
  }
  // In the loop: push each value, pass the sums through unchanged. A
  // pushed loop value is now the new body's argument.
  eddy_block_t *body = eddy_ctl_while_body(nl);
  for (size_t j = 0; j < nv; j++)
    if (!vals[j]->def && vals[j]->block == old_body)
      vals[j] = body->args[vals[j]->index];
  eddy_op_t *yield = eddy_ir_block_terminator(body);
  eddy_ir_builder_set_before(&b, yield);
  for (uint32_t i = 0; i < old; i++)
    io[i] = yield->operands[i].value;
  for (size_t j = 0; j < nv && !st; j++) {
    eddy_value_t *ops[2] = {body->args[old + j], vals[j]};
    eddy_op_t *op = NULL;
    b.loc = vals[j]->def ? vals[j]->def->loc : nl->loc;
    st = ls_build(&b, "tl.push_back", ops, 2, NULL, 0, NULL, &op);
    if (!st)
      io[old + j] = &op->results[0];
  }
  for (size_t m = 0; m < k; m++)
    io[ms[m].value] = body->args[ms[m].value];
  if (!st) {
    eddy_ir_op_set_operands(yield, io, old + nv);
    for (size_t m = 0; m < k; m++) {
      eddy_ir_op_erase(ms[m].add);
      eddy_ir_op_erase(ms[m].prod);
    }
  }
  // After it: stack each list, one term per sum, added to the sum's init.
  eddy_ir_builder_set_after(&b, nl);
  b.loc = nl->loc;
  for (size_t j = 0; j < nv && !st; j++)
    st = ls_stack(&b, nl, kind, &nl->results[old + j], vals[j]->type, &io[j]);
  for (size_t m = 0; m < k && !st; m++) {
    // The loop now passes acc through: its result is its init.
    eddy_value_t *acc = &nl->results[ms[m].value], *term = NULL;
    eddy_value_t *init = eddy_ir_op_operand(nl, ms[m].value);
    eddy_op_t *sum = NULL;
    b.loc = ms[m].loc;
    st = ls_term(&b, nl, kind, &ms[m], io, acc->type, &term);
    if (st)
      break;
    // A sum that starts from zeros (a gradient's) is the term itself.
    if (eddy_passes_value_zero(init)) {
      eddy_ir_value_replace_all_uses(acc, term);
      continue;
    }
    eddy_value_t *sops[2] = {init, term};
    if (!ms[m].acc_first) {
      sops[0] = term;
      sops[1] = init;
    }
    st = ls_build(&b, "core.add", sops, 2, NULL, 0, acc->type, &sum);
    if (st)
      break;
    eddy_ir_value_replace_all_uses(acc, &sum->results[0]);
  }
  free(io);
  return st ? st : ls_drop_sums(nl, ms, k);
}

static eddy_status_t ls_loop(eddy_op_t *loop, ls_kind_t kind, int64_t *sunk) {
  size_t n = loop->num_operands;
  ls_match_t *ms = calloc(n ? n : 1, sizeof *ms);
  eddy_value_t **vals = calloc(2 * n + 1, sizeof *vals);
  if (!ms || !vals) {
    free(ms);
    free(vals);
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  }
  size_t k = 0, nv = 0;
  for (uint32_t i = 0; i < n; i++)
    if (ls_match(loop, i, kind, &ms[k])) {
      ms[k].ia = ls_value_index(vals, &nv, ms[k].prod->operands[0].value);
      ms[k].ib = ls_value_index(vals, &nv, ms[k].prod->operands[1].value);
      k++;
    }
  eddy_status_t st = k ? ls_rewrite(loop, kind, ms, k, vals, nv) : NULL;
  if (!st)
    *sunk += (int64_t)k;
  free(ms);
  free(vals);
  return st;
}

static eddy_status_t ls_run(eddy_pass_ctx_t *pc, eddy_module_t *m,
                            ls_kind_t kind, const char *stat) {
  // Inner loops first: a loop replaced here is never looked at again.
  eddy_op_t **loops = NULL;
  size_t n = 0;
  EDDY_RETURN_IF_ERROR(eddy_passes_collect_loops(m, &loops, &n));
  int64_t sunk = 0;
  eddy_status_t st = NULL;
  for (size_t i = 0; i < n && !st; i++)
    st = ls_loop(loops[i], kind, &sunk);
  free(loops);
  if (sunk) {
    eddy_ir_pass_stat_add(pc, stat, sunk);
    eddy_ir_pass_mark_changed(pc);
  }
  return st;
}

static eddy_status_t ls_run_gemm(eddy_pass_ctx_t *pc, eddy_module_t *m) {
  return ls_run(pc, m, LS_MATMUL, "sunk-matmuls");
}

static eddy_status_t ls_run_scatter(eddy_pass_ctx_t *pc, eddy_module_t *m) {
  return ls_run(pc, m, LS_SCATTER, "sunk-scatters");
}

const eddy_pass_t eddy_pass_gemm_sink = {
    .name = "gemm-sink",
    .summary = "sum a ctl.while's per-step matmul(a_t^T, b_t) accumulations "
               "as one matmul after the loop",
    .run = ls_run_gemm,
};

const eddy_pass_t eddy_pass_scatter_sink = {
    .name = "scatter-sink",
    .summary = "sum a ctl.while's per-step core.scatter accumulations (the "
               "gradients of gathers) as one scatter after the loop",
    .run = ls_run_scatter,
};

/// gemm-sink: a loop's sum of GEMMs as one GEMM after it (docs/passes.md).
///
/// The gradient of a recurrent loop sums each weight's gradient over the
/// steps, one small matmul per step into a loop value:
///
///   acc_{t+1} = core.add(acc_t, core.matmul(a_t, b_t) {transpose_a = true})
///
/// so the loop returns acc_0 + sum_t a_t^T b_t = acc_0 + A^T B, where A and
/// B stack the a_t and the b_t along their rows. The loop now pushes a_t
/// and b_t to two lists instead (a value pushed for several sums is pushed
/// once) and passes acc through; after it, the lists are stacked, reshaped
/// to [n*R, P] and [n*R, Q], multiplied once and added to acc's result.
///
/// This sums in another order: the per-step results are no longer rounded
/// and added one by one. It is done for f32, f16 and bf16 only, whose
/// matmul contract already leaves the order of its sums open, and the
/// result keeps the contract's kind of bound with K = n*R; f64 (whose
/// matmul sums in a fixed order) and integers are left alone. The lists
/// cost n*R*(P+Q) elements of memory. Nothing here can fail: the pushes
/// and stacks are of static shapes, and a loop that runs zero times adds a
/// product of zeros.
#include "dialects/ctl/ctl.h"
#include "dialects/tl/tl.h"
#include "ir/passes/pass_util.h"
#include "ir/passes/passes.h"

#include <stdlib.h>

/// One matched accumulation: loop value `value` is summed by `add` of the
/// product `mm` of a and b (the pushed values number ia and ib).
typedef struct gs_match {
  uint32_t value;
  eddy_op_t *add, *mm;
  bool acc_first; ///< add(acc, product) rather than add(product, acc)
  size_t ia, ib;
} gs_match_t;

static bool gs_is_matrix(const eddy_type_t *t) {
  return eddy_ir_type_is_tensor(t) && eddy_ir_type_is_static(t) &&
         t->rank == 2 && eddy_ir_type_num_elements(t) > 0;
}

/// The dtypes whose matmul contract leaves the summation order open.
static bool gs_relaxed_dtype(eddy_dtype_t dt) {
  return dt == EDDY_DT_F32 || dt == EDDY_DT_F16 || dt == EDDY_DT_BF16;
}

/// Loop value i of loop matches the pattern (see the file comment).
static bool gs_match(const eddy_op_t *loop, uint32_t i, gs_match_t *m) {
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
  eddy_op_t *mm = p->def;
  if (!mm || mm->block != body || !eddy_ir_op_is(mm, "core.matmul") ||
      eddy_ir_value_num_uses(p) != 1 ||
      !eddy_ir_op_attr_bool(mm, "transpose_a", false) ||
      eddy_ir_op_attr_bool(mm, "transpose_b", false))
    return false;
  const eddy_type_t *t = acc->type;
  if (!gs_is_matrix(t) || !gs_relaxed_dtype(t->dtype) || y->type != t ||
      p->type != t)
    return false;
  eddy_value_t *a = mm->operands[0].value, *b = mm->operands[1].value;
  if (!gs_is_matrix(a->type) || !gs_is_matrix(b->type))
    return false;
  // A factor that does not change would be pushed n times for nothing.
  if (eddy_passes_loop_invariant_source(loop, a) ||
      eddy_passes_loop_invariant_source(loop, b))
    return false;
  *m = (gs_match_t){.value = i, .add = add, .mm = mm, .acc_first = acc_first};
  return true;
}

/// Index of v in vals[0..*n), appended when absent.
static size_t gs_value_index(eddy_value_t **vals, size_t *n, eddy_value_t *v) {
  for (size_t i = 0; i < *n; i++)
    if (vals[i] == v)
      return i;
  vals[*n] = v;
  return (*n)++;
}

static eddy_status_t gs_build(eddy_builder_t *b, const char *name,
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

/// Rewrites the k matches of loop (values: the nv distinct pushed values).
static eddy_status_t gs_rewrite(eddy_op_t *loop, gs_match_t *ms, size_t k,
                                eddy_value_t **vals, size_t nv) {
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
    st = gs_build(&b, "tl.empty", NULL, 0, NULL, 0,
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
    st = gs_build(&b, "tl.push_back", ops, 2, NULL, 0, NULL, &op);
    if (!st)
      io[old + j] = &op->results[0];
  }
  for (size_t m = 0; m < k; m++)
    io[ms[m].value] = body->args[ms[m].value];
  if (!st) {
    eddy_ir_op_set_operands(yield, io, old + nv);
    for (size_t m = 0; m < k; m++) {
      eddy_ir_op_erase(ms[m].add);
      eddy_ir_op_erase(ms[m].mm);
    }
  }
  // After it: stack and flatten each list, one product per sum.
  eddy_ir_builder_set_after(&b, nl);
  for (size_t j = 0; j < nv && !st; j++) {
    const eddy_type_t *vt = vals[j]->type;
    eddy_value_t *res = &nl->results[old + j];
    eddy_op_t *stack = NULL, *flat = NULL;
    b.loc = nl->loc;
    st = gs_build(&b, "tl.stack", &res, 1, NULL, 0,
                  eddy_tl_stacked_type(ctx, vt), &stack);
    int64_t shape[2] = {-1, vt->dims[1]};
    eddy_named_attr_t a = eddy_ir_named_attr(
        ctx, "shape", eddy_ir_i64_array_attr_get(ctx, shape, 2));
    eddy_value_t *stacked = st ? NULL : &stack->results[0];
    if (!st)
      st = gs_build(&b, "core.reshape", &stacked, 1, &a, 1, NULL, &flat);
    if (!st)
      io[j] = &flat->results[0];
  }
  for (size_t m = 0; m < k && !st; m++) {
    eddy_value_t *acc = &nl->results[ms[m].value];
    eddy_value_t *ops[2] = {io[ms[m].ia], io[ms[m].ib]};
    eddy_named_attr_t ta = eddy_ir_named_attr(ctx, "transpose_a",
                                              eddy_ir_bool_attr_get(ctx, true));
    eddy_op_t *prod = NULL, *sum = NULL;
    st = gs_build(&b, "core.matmul", ops, 2, &ta, 1, acc->type, &prod);
    if (st)
      break;
    eddy_value_t *sops[2] = {acc, &prod->results[0]};
    if (!ms[m].acc_first) {
      sops[0] = &prod->results[0];
      sops[1] = acc;
    }
    st = gs_build(&b, "core.add", sops, 2, NULL, 0, acc->type, &sum);
    if (st)
      break;
    eddy_ir_value_replace_all_uses(acc, &sum->results[0]);
    eddy_ir_op_set_operand(sum, ms[m].acc_first ? 0 : 1, acc);
  }
  free(io);
  return st;
}

static eddy_status_t gs_loop(eddy_op_t *loop, int64_t *sunk) {
  size_t n = loop->num_operands;
  gs_match_t *ms = calloc(n ? n : 1, sizeof *ms);
  eddy_value_t **vals = calloc(2 * n + 1, sizeof *vals);
  if (!ms || !vals) {
    free(ms);
    free(vals);
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  }
  size_t k = 0, nv = 0;
  for (uint32_t i = 0; i < n; i++)
    if (gs_match(loop, i, &ms[k])) {
      ms[k].ia = gs_value_index(vals, &nv, ms[k].mm->operands[0].value);
      ms[k].ib = gs_value_index(vals, &nv, ms[k].mm->operands[1].value);
      k++;
    }
  eddy_status_t st = k ? gs_rewrite(loop, ms, k, vals, nv) : NULL;
  if (!st)
    *sunk += (int64_t)k;
  free(ms);
  free(vals);
  return st;
}

static eddy_status_t gs_run(eddy_pass_ctx_t *pc, eddy_module_t *m) {
  // Inner loops first: a loop replaced here is never looked at again.
  eddy_op_t **loops = NULL;
  size_t n = 0;
  EDDY_RETURN_IF_ERROR(eddy_passes_collect_loops(m, &loops, &n));
  int64_t sunk = 0;
  eddy_status_t st = NULL;
  for (size_t i = 0; i < n && !st; i++)
    st = gs_loop(loops[i], &sunk);
  free(loops);
  if (sunk) {
    eddy_ir_pass_stat_add(pc, "sunk-matmuls", sunk);
    eddy_ir_pass_mark_changed(pc);
  }
  return st;
}

const eddy_pass_t eddy_pass_gemm_sink = {
    .name = "gemm-sink",
    .summary = "sum a ctl.while's per-step matmul(a_t^T, b_t) accumulations "
               "as one matmul after the loop",
    .run = gs_run,
};

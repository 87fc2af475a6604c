/// gemm-hoist: loop-invariant GEMM hoisting for ctl.while (docs/passes.md).
///
/// A recurrent loop multiplies the row block of its input read at step t
/// by a weight that does not change:
///
///   x_t = core.gather(xs, t) {axis = 0}     (or tl.get_item(list, t))
///   y_t = core.matmul(x_t, W)
///
/// Those products do not depend on one another, so they are one matmul of
/// all of xs [T, ..., M, K] by W (broadcast over the batch: the rows of xs
/// are those of one [T*...*M, K] matrix), computed before the loop; the
/// loop reads row block t of it instead, with the same op (gather or
/// get_item) on the same index, so an index out of range fails as it did.
/// T small [M, K] x [K, N] products become one large one, which a BLAS runs
/// closer to its peak, in one call.
///
/// The hoisted ops cannot fail (every shape they depend on is static but
/// the leading one), because the loop may run zero times or stop before it
/// reads every row: the rows it never reads are then computed for nothing,
/// which is the price of the rewrite, paid only where the index is the
/// loop's counter (it reads one new row per iteration). Each element of the
/// product is the same K products summed as before, so only the order a
/// kernel sums them in can change (docs/dialects/core.md, core.matmul).
#include "dialects/ctl/ctl.h"
#include "dialects/tl/tl.h"
#include "ir/passes/pass_util.h"
#include "ir/passes/passes.h"

#include <stdlib.h>

/// One matched `matmul(read(rows, index), w)` in a loop body.
typedef struct gh_match {
  eddy_op_t *mm;       ///< the matmul
  eddy_op_t *read;     ///< the gather or get_item giving its operand #0
  eddy_value_t *rows;  ///< the invariant tensor whose rows are read, or NULL
  eddy_value_t *list;  ///< get_item: the invariant list read
  eddy_value_t *w;     ///< the invariant right operand
  bool transpose_b;
} gh_match_t;

static bool gh_is_static_tensor(const eddy_type_t *t) {
  return eddy_ir_type_is_tensor(t) && eddy_ir_type_is_static(t);
}

/// `read` yields x_t of type xt from rows: rows is [T, xt dims...] with
/// T static or not.
static bool gh_rows_fit(const eddy_type_t *rows, const eddy_type_t *xt) {
  if (!eddy_ir_type_is_tensor(rows) || rows->rank != xt->rank + 1 ||
      rows->dtype != xt->dtype)
    return false;
  for (int32_t d = 0; d < xt->rank; d++)
    if (rows->dims[d + 1] != xt->dims[d])
      return false;
  return true;
}

/// The hoisted product holds the loop's T products at once. It may be as
/// large as the rows it is computed from (N <= K), or, larger, up to this
/// many bytes; past that it raises peak memory by more than the input for
/// what the loop's per-step products, with their weight packed once per
/// loop (docs/cpu.md), do about as fast (bench/README.md: the LSTM of 1000
/// steps, a 131 MB product). A T known only at run time may be any size, so
/// a product larger than its rows is not hoisted then.
#define GH_MAX_GROWTH_BYTES ((int64_t)16 << 20)

/// The hoisted product of rows ([T, x dims...]) is small enough.
static bool gh_size_ok(const eddy_value_t *rows, const eddy_type_t *xt,
                       const eddy_type_t *rt) {
  int64_t xn = eddy_ir_type_num_elements(xt),
          rn = eddy_ir_type_num_elements(rt);
  if (rn <= xn || !rows)
    return true;
  if (rows->type->dims[0] == EDDY_DIM_DYNAMIC)
    return false;
  double bytes = (double)rows->type->dims[0] * (double)rn *
                 (double)eddy_dtype_size(rt->dtype);
  return bytes <= (double)GH_MAX_GROWTH_BYTES;
}

/// Matches mm against the pattern (see the file comment); fills *m.
static bool gh_match(const eddy_op_t *loop, eddy_op_t *mm, gh_match_t *m) {
  if (!eddy_ir_op_is(mm, "core.matmul") ||
      eddy_ir_op_attr_bool(mm, "transpose_a", false))
    return false;
  eddy_value_t *x = mm->operands[0].value;
  const eddy_type_t *xt = x->type, *rt = mm->results[0].type;
  eddy_value_t *w = eddy_passes_loop_invariant_source(
      loop, mm->operands[1].value);
  if (!w || !gh_is_static_tensor(w->type) || w->type->rank != 2 ||
      !gh_is_static_tensor(xt) || xt->rank < 2 || !gh_is_static_tensor(rt) ||
      rt->rank != xt->rank)
    return false;
  eddy_op_t *read = x->def;
  if (!read || read->block != mm->block)
    return false;
  *m = (gh_match_t){.mm = mm,
                    .read = read,
                    .w = w,
                    .transpose_b =
                        eddy_ir_op_attr_bool(mm, "transpose_b", false)};
  eddy_value_t *index = NULL;
  if (eddy_ir_op_is(read, "core.gather")) {
    const eddy_type_t *pt = read->operands[0].value->type;
    int64_t axis = eddy_ir_op_attr_int(read, "axis", -1);
    if (!eddy_ir_type_is_tensor(pt) || pt->rank < 1 ||
        (axis != 0 && axis != -(int64_t)pt->rank))
      return false;
    index = read->operands[1].value;
    if (!eddy_ir_type_is_scalar(index->type))
      return false;
    m->rows = eddy_passes_loop_invariant_source(loop, read->operands[0].value);
    if (!m->rows || !gh_rows_fit(m->rows->type, xt))
      return false;
  } else if (eddy_ir_op_is(read, "tl.get_item")) {
    index = read->operands[1].value;
    m->list = eddy_passes_loop_invariant_source(loop, read->operands[0].value);
    if (!m->list)
      return false;
    const eddy_type_t *elem = m->list->type->elem;
    // tl.stack of a list of a static element type cannot fail: every item
    // has that shape, and an unset one stacks as zeros, as get_item reads
    // it. A list made from a tensor is read from that tensor directly.
    if (m->list->def && eddy_ir_op_is(m->list->def, "tl.from_tensor") &&
        gh_rows_fit(m->list->def->operands[0].value->type, xt))
      m->rows = m->list->def->operands[0].value;
    else if (!elem || !gh_is_static_tensor(elem) || elem->rank != xt->rank ||
             elem->dtype != xt->dtype ||
             eddy_ir_type_num_elements(elem) != eddy_ir_type_num_elements(xt))
      return false;
    for (int32_t d = 0; !m->rows && d < xt->rank; d++)
      if (elem->dims[d] != xt->dims[d])
        return false;
  } else {
    return false;
  }
  return gh_size_ok(m->rows, xt, rt) &&
         eddy_passes_loop_counter(loop, eddy_passes_index_source(index));
}

static eddy_status_t gh_build(eddy_builder_t *b, const char *name,
                              eddy_value_t *const *ops, size_t n,
                              const eddy_named_attr_t *attrs, size_t na,
                              eddy_value_t **out) {
  return eddy_ir_build_simple(b, name, ops, n, attrs, na, out);
}

/// Rewrites one match: the product of all rows before the loop, a read of
/// row block t of it in place of the matmul.
static eddy_status_t gh_rewrite(eddy_op_t *loop, const gh_match_t *m) {
  eddy_ctx_t *ctx = loop->ctx;
  eddy_builder_t b;
  eddy_ir_builder_init(&b, ctx);
  eddy_ir_builder_set_before(&b, loop);
  b.loc = m->mm->loc;
  const eddy_type_t *rt = m->mm->results[0].type;
  eddy_value_t *rows = m->rows;
  if (!rows) {
    const eddy_type_t *st = eddy_tl_stacked_type(ctx, m->list->type->elem);
    eddy_op_state_t s = {.name = "tl.stack",
                         .operands = &m->list,
                         .num_operands = 1,
                         .result_types = &st,
                         .num_results = 1};
    eddy_op_t *op = NULL;
    EDDY_RETURN_IF_ERROR(eddy_ir_build(&b, &s, &op));
    rows = &op->results[0];
  }
  // [T, ..., M, K] x [K, N] -> [T, ..., M, N]: W broadcast over the batch,
  // the rows of xs laid out as those of one [T*...*M, K] matrix, which a
  // backend multiplies in one call.
  eddy_value_t *p3 = NULL;
  eddy_value_t *ops[2] = {rows, m->w};
  eddy_named_attr_t tb = eddy_ir_named_attr(
      ctx, "transpose_b", eddy_ir_bool_attr_get(ctx, true));
  EDDY_RETURN_IF_ERROR(
      gh_build(&b, "core.matmul", ops, 2, &tb, m->transpose_b ? 1 : 0, &p3));

  eddy_value_t *index = m->read->operands[1].value;
  eddy_op_t *read = NULL;
  if (m->list) {
    eddy_value_t *l2 = NULL;
    EDDY_RETURN_IF_ERROR(gh_build(&b, "tl.from_tensor", &p3, 1, NULL, 0, &l2));
    eddy_ir_builder_set_before(&b, m->mm);
    // The read that may fail keeps its location, so its error is the same.
    b.loc = m->read->loc;
    eddy_value_t *gops[2] = {l2, index};
    eddy_op_state_t s = {.name = "tl.get_item",
                         .operands = gops,
                         .num_operands = 2,
                         .result_types = &rt,
                         .num_results = 1};
    EDDY_RETURN_IF_ERROR(eddy_ir_build(&b, &s, &read));
  } else {
    eddy_ir_builder_set_before(&b, m->mm);
    b.loc = m->read->loc;
    eddy_value_t *gops[2] = {p3, index};
    eddy_named_attr_t ax =
        eddy_ir_named_attr(ctx, "axis", eddy_ir_int_attr_get(ctx, 0, EDDY_DT_I64));
    eddy_op_state_t s = {.name = "core.gather",
                         .operands = gops,
                         .num_operands = 2,
                         .attrs = &ax,
                         .num_attrs = 1,
                         .result_types = &rt,
                         .num_results = 1};
    EDDY_RETURN_IF_ERROR(eddy_ir_build(&b, &s, &read));
  }
  eddy_ir_value_replace_all_uses(&m->mm->results[0], &read->results[0]);
  eddy_ir_op_erase(m->mm);
  if (!eddy_passes_op_has_used_result(m->read))
    eddy_ir_op_erase(m->read);
  return NULL;
}

static eddy_status_t gh_loop(eddy_op_t *loop, int64_t *hoisted) {
  eddy_block_t *body = eddy_ctl_while_body(loop);
  if (!body)
    return NULL;
  for (eddy_op_t *op = body->first, *next; op; op = next) {
    next = op->next;
    gh_match_t m;
    if (!gh_match(loop, op, &m))
      continue;
    // The read goes when the matmul was its only use; the next op to
    // look at must not be it.
    if (next == m.read)
      next = next->next;
    EDDY_RETURN_IF_ERROR(gh_rewrite(loop, &m));
    (*hoisted)++;
  }
  return NULL;
}

static eddy_status_t gh_run(eddy_pass_ctx_t *pc, eddy_module_t *m) {
  // Inner loops first: an inner loop's product lands in the outer body,
  // where licm may take it further out.
  eddy_op_t **loops = NULL;
  size_t n = 0;
  EDDY_RETURN_IF_ERROR(eddy_passes_collect_loops(m, &loops, &n));
  int64_t hoisted = 0;
  eddy_status_t st = NULL;
  for (size_t i = 0; i < n && !st; i++)
    st = gh_loop(loops[i], &hoisted);
  free(loops);
  if (hoisted) {
    eddy_ir_pass_stat_add(pc, "hoisted-matmuls", hoisted);
    eddy_ir_pass_mark_changed(pc);
  }
  return st;
}

const eddy_pass_t eddy_pass_gemm_hoist = {
    .name = "gemm-hoist",
    .summary = "compute matmul(xs[t], W) for every t of a ctl.while at once, "
               "before the loop",
    .run = gh_run,
};

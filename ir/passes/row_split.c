/// row-split: a recurrent loop over the rows of a batch as independent
/// loops over blocks of rows (docs/passes.md).
///
/// In `for t: h = tanh(x[t] + h W)` (an RNN, an LSTM, a fixed-point
/// iteration on a batch), row r of every value the loop carries depends
/// only on row r of the values before it: a matmul `h W` with the rows on
/// the left and a weight that is the same for every row, elementwise ops,
/// rows read from an invariant `x[t]`. The loop is then the same loop run
/// on each block of rows on its own:
///
///   %h0_0 = core.slice(%h0) rows [0, B/2)      %h0_1 = ... rows [B/2, B)
///   %r_0 = ctl.while(%h0_0, ...) {rows B/2}    %r_1 = ctl.while(%h0_1, ...)
///   %r = core.concat(%r_0, %r_1) {axis = 0}
///
/// Each part computes what the whole loop computes for its rows, in the
/// same order, so the results are those of the loop (a matmul sums the same
/// products per element; only a kernel's order of summation may differ).
/// Values the loop carries that are not rows (counters, a weight passed
/// through) are computed by every part alike; the first part's are the
/// loop's results. The parts carry the discardable attribute
/// `row_split.part = [i, n]`: nothing reads or writes what another part
/// does, so a backend may run them at once, as the CPU target does on two
/// threads (docs/cpu.md, "Row-parallel loops"); everything else runs them
/// one after the other.
///
/// A loop is split when it is a top-level op of its function, every value
/// it carries with a static leading dimension B (the batch) that changes
/// between iterations is rows, its rows are only read by elementwise ops
/// (other operands broadcast from trailing dimensions, have a leading 1, or
/// are invariant [B, ...] values sliced alike), by split, slice and concat
/// along other axes, by a matmul as its left, untransposed operand, by list
/// ops that write or read them at an index the same in every part, and by
/// nested ctl.while ops that carry them as rows (a list it carries whose
/// items are [B, ...] blocks, starting empty and only stacked or measured
/// after the loop, is rows too: each part fills a list of its own, and the
/// parts' stacks are joined); its condition does not read them; every op in it is free of side effects; at least one such
/// matmul runs in it, so that a part has work worth a thread, and their
/// weights take at most RS_MAX_WEIGHT_BYTES; and B splits into parts of at
/// least RS_MIN_ROWS rows.
#include "dialects/ctl/ctl.h"
#include "dialects/dialects.h"
#include "ir/passes/pass_util.h"
#include "ir/passes/passes.h"

#include <stdio.h>
#include <stdlib.h>

/// The parts a loop becomes.
#define RS_PARTS 2
/// The fewest rows a part may have.
#define RS_MIN_ROWS 8
/// The most bytes of weights the row matmuls of a loop may read. Each part
/// reads every weight once per step for half the rows: twice the traffic
/// per multiply-add of one product on all the rows, whose columns a BLAS
/// splits between threads instead. Measured on a 2-core Xeon (2 MiB L2 per
/// core): a 256x256 f32 weight (256 KiB) runs 1.3x faster split, a
/// 256x1024 one (1 MiB) 1.2x slower (bench/README.md).
#define RS_MAX_WEIGHT_BYTES (256 * 1024)
/// The highest rank of a row value.
#define RS_MAX_RANK 8

typedef struct rs {
  eddy_ctx_t *ctx;
  eddy_ptrmap_t row; ///< value -> 1: its leading dimension is the rows
  eddy_ptrmap_t sum; ///< op -> 1: a part's share of a sum (rs_pick_sums)
  int64_t b;         ///< the rows
  int64_t matmuls;   ///< matmuls of rows by a weight
  int64_t weights;   ///< their weights' bytes
  /// The later top-level loop that takes lists of rows this one fills
  /// (rs_list_result_ok), NULL when none.
  eddy_op_t *next;
} rs_t;

static bool rs_is_row(const rs_t *s, const eddy_value_t *v) {
  return eddy_ptrmap_get(&s->row, v) != NULL;
}

static void rs_mark(rs_t *s, const eddy_value_t *v) {
  eddy_ptrmap_put(&s->row, v, (void *)1);
}

/// A static tensor of rank >= 1 whose leading dimension is the rows, or a
/// list of such tensors (one row block per item).
static bool rs_rows_type(const rs_t *s, const eddy_type_t *t) {
  if (t->kind == EDDY_TYPE_LIST)
    t = t->elem;
  return t && eddy_ir_type_is_tensor(t) && eddy_ir_type_is_static(t) &&
         t->rank >= 1 && t->rank <= RS_MAX_RANK && t->dims[0] == s->b;
}

/// A value that is not rows used where rows are (operand of an op whose
/// result has rank `rank`, or a yielded row value): it must be sliced
/// alike in each part.
static bool rs_needs_slice(const rs_t *s, const eddy_value_t *v, int32_t rank) {
  return !rs_is_row(s, v) && eddy_ir_type_is_tensor(v->type) &&
         v->type->rank == rank && rs_rows_type(s, v->type);
}

/// The rank of the rows an op writes: its result's, or, for a list, its
/// items'.
static int32_t rs_rank(const eddy_type_t *t) {
  return t->kind == EDDY_TYPE_LIST ? t->elem->rank : t->rank;
}

static bool rs_block(rs_t *s, const eddy_block_t *b);

/// op's `axis` attribute counted from the front (-1 when out of range).
static int64_t rs_axis(const eddy_op_t *op, int32_t rank) {
  int64_t a = eddy_ir_op_attr_int(op, "axis", -1 - rank);
  a = a < 0 ? a + rank : a;
  return a >= 0 && a < rank ? a : -1;
}

/// Whether any op under op's regions reads a row value.
static bool rs_regions_read_rows(const rs_t *s, const eddy_op_t *op) {
  for (uint32_t r = 0; r < op->num_regions; r++)
    for (const eddy_block_t *b = op->regions[r].first; b; b = b->next)
      for (const eddy_op_t *o = b->first; o; o = o->next) {
        for (uint32_t i = 0; i < o->num_operands; i++)
          if (rs_is_row(s, eddy_ir_op_operand(o, i)))
            return true;
        if (rs_regions_read_rows(s, o))
          return true;
      }
  return false;
}

/// Loop values of `loop` (top-level or nested) whose initial value is rows,
/// or, for the loop being split, those in `rows`: marks its block arguments
/// and results, checks both regions, and that the body yields rows (or a
/// value sliced alike) exactly where it carries them.
static bool rs_loop(rs_t *s, const eddy_op_t *loop, const bool *rows) {
  eddy_block_t *cond = eddy_ctl_while_cond(loop);
  eddy_block_t *body = eddy_ctl_while_body(loop);
  if (!cond || !body || cond->num_args != loop->num_operands ||
      body->num_args != loop->num_operands ||
      loop->num_results != loop->num_operands)
    return false;
  for (uint32_t i = 0; i < loop->num_operands; i++) {
    bool r = rows ? rows[i] : rs_is_row(s, eddy_ir_op_operand(loop, i));
    if (!r)
      continue;
    if (!rs_rows_type(s, loop->results[i].type))
      return false;
    rs_mark(s, cond->args[i]);
    rs_mark(s, body->args[i]);
    rs_mark(s, &loop->results[i]);
  }
  if (!rs_block(s, cond) || !rs_block(s, body))
    return false;
  const eddy_op_t *c = eddy_ir_block_terminator(cond);
  const eddy_op_t *y = eddy_ir_block_terminator(body);
  if (!c || !y || y->num_operands != loop->num_operands)
    return false;
  for (uint32_t i = 0; i < c->num_operands; i++)
    if (rs_is_row(s, eddy_ir_op_operand(c, i)))
      return false;
  for (uint32_t i = 0; i < y->num_operands; i++) {
    const eddy_value_t *v = eddy_ir_op_operand(y, i);
    bool carried = rs_is_row(s, body->args[i]);
    if (carried ? !rs_is_row(s, v) &&
                      !rs_needs_slice(s, v, rs_rank(body->args[i]->type))
                : rs_is_row(s, v))
      return false;
  }
  return true;
}

/// Checks the ops of b, marking the row values they define.
static bool rs_block(rs_t *s, const eddy_block_t *b) {
  for (const eddy_op_t *op = b->first; op; op = op->next) {
    if (eddy_ir_op_has_trait(op, EDDY_TRAIT_TERMINATOR))
      continue; // the loop's check
    bool reads = false;
    for (uint32_t i = 0; i < op->num_operands && !reads; i++)
      reads = rs_is_row(s, eddy_ir_op_operand(op, i));
    eddy_opcode_t code = eddy_dialects_opcode(op);
    // Every part runs the loop's other ops too.
    if (!eddy_passes_op_is_effect_free(op))
      return false;
    if (code == EDDY_OP_CTL_WHILE) {
      if (!rs_loop(s, op, NULL))
        return false;
      continue;
    }
    if (eddy_ptrmap_get(&s->sum, op)) {
      // A part's share of a sum over the rows: each operand is rows, or
      // sliced alike. (One that reads no rows would be counted once per
      // part.)
      if (!reads)
        return false;
      for (uint32_t i = 0; i < op->num_operands; i++) {
        const eddy_value_t *v = eddy_ir_op_operand(op, i);
        if (!rs_is_row(s, v) && !rs_needs_slice(s, v, v->type->rank))
          return false;
      }
      continue;
    }
    if (!reads) {
      if (rs_regions_read_rows(s, op))
        return false;
      continue; // the same in every part
    }
    const eddy_value_t *x = eddy_ir_op_operand(op, 0);
    if (code == EDDY_OP_TL_LENGTH)
      continue; // (as long in every part)
    if (code == EDDY_OP_TL_POP_BACK) {
      // The last row block of a list of them.
      if (op->num_results != 2 || !rs_rows_type(s, op->results[1].type))
        return false;
      rs_mark(s, &op->results[0]);
      rs_mark(s, &op->results[1]);
      continue;
    }
    if (code == EDDY_OP_TL_SET_ITEM || code == EDDY_OP_TL_PUSH_BACK ||
        code == EDDY_OP_TL_GET_ITEM) {
      // Rows written to or read from a list of rows at an index that is
      // the same in every part.
      if (!rs_is_row(s, x) || !rs_rows_type(s, op->results[0].type))
        return false;
      for (uint32_t i = 1; i < op->num_operands; i++) {
        const eddy_value_t *v = eddy_ir_op_operand(op, i);
        bool item = i + 1 == op->num_operands && code != EDDY_OP_TL_GET_ITEM;
        if (item ? !rs_is_row(s, v) && !rs_needs_slice(s, v, x->type->elem->rank)
                 : rs_is_row(s, v))
          return false;
      }
      rs_mark(s, &op->results[0]);
      continue;
    }
    if (op->num_regions || op->num_results < 1)
      return false;
    for (uint32_t r = 0; r < op->num_results; r++)
      if (!rs_rows_type(s, op->results[r].type))
        return false;
    const eddy_type_t *t = op->results[0].type;
    if (!eddy_ir_type_is_tensor(t))
      return false;
    if (code == EDDY_OP_CORE_MATMUL) {
      const eddy_value_t *w = eddy_ir_op_operand(op, 1);
      if (!rs_is_row(s, x) || rs_is_row(s, w) || x->type->rank != 2 ||
          t->rank != 2 || eddy_ir_op_attr_bool(op, "transpose_a", false) ||
          !eddy_ir_type_is_static(w->type))
        return false;
      s->matmuls++;
      s->weights += eddy_ir_type_num_elements(w->type) *
                    (int64_t)eddy_dtype_size(w->type->dtype);
    } else if (code == EDDY_OP_CORE_SPLIT) {
      // (Split along another axis: every part keeps the rows.)
      if (rs_axis(op, x->type->rank) == 0)
        return false;
    } else if (code == EDDY_OP_CORE_SLICE) {
      int64_t lim[RS_MAX_RANK], start[RS_MAX_RANK], st[RS_MAX_RANK];
      int32_t r = x->type->rank;
      if (eddy_ir_attr_as_i64_array(eddy_ir_op_attr(op, "start"), start,
                                    RS_MAX_RANK) != r ||
          eddy_ir_attr_as_i64_array(eddy_ir_op_attr(op, "limit"), lim,
                                    RS_MAX_RANK) != r ||
          start[0] != 0 || lim[0] != s->b)
        return false;
      const eddy_attr_t *sa = eddy_ir_op_attr(op, "strides");
      if (sa &&
          (eddy_ir_attr_as_i64_array(sa, st, RS_MAX_RANK) != r || st[0] != 1))
        return false;
    } else if (code == EDDY_OP_CORE_CONCAT ||
               eddy_ir_op_has_trait(op, EDDY_TRAIT_ELEMENTWISE)) {
      if (op->num_results != 1 ||
          (code == EDDY_OP_CORE_CONCAT && rs_axis(op, t->rank) == 0))
        return false;
      for (uint32_t i = 0; i < op->num_operands; i++) {
        const eddy_value_t *v = eddy_ir_op_operand(op, i);
        const eddy_type_t *vt = v->type;
        if (rs_is_row(s, v)) {
          if (vt->rank != t->rank)
            return false;
          continue;
        }
        // Broadcast along the rows (trailing dims, or a leading 1), or
        // invariant rows sliced alike.
        if (!eddy_ir_type_is_tensor(vt) || !eddy_ir_type_is_static(vt))
          return false;
        if (rs_needs_slice(s, v, t->rank) ||
            (code != EDDY_OP_CORE_CONCAT &&
             (vt->rank < t->rank || vt->dims[0] == 1)))
          continue;
        return false;
      }
    } else {
      return false;
    }
    for (uint32_t r = 0; r < op->num_results; r++)
      rs_mark(s, &op->results[r]);
  }
  return true;
}

/// The loop's list result r is read only by tl.stack (into [T, B, ...]),
/// tl.length, and as the initial value of a later top-level loop (s->next,
/// the same for all; the loop that pops what this one pushed): each part's
/// list is stacked, and the stacks joined, or goes to the same part of the
/// later loop, split with this one (rs_try).
static bool rs_list_result_ok(rs_t *s, const eddy_op_t *loop,
                              const eddy_value_t *r) {
  const eddy_type_t *e = r->type->elem;
  eddy_op_t *next = s->next;
  for (const eddy_use_t *u = r->uses; u; u = u->next) {
    eddy_opcode_t code = eddy_dialects_opcode(u->owner);
    if (code == EDDY_OP_TL_LENGTH)
      continue;
    if (code == EDDY_OP_CTL_WHILE && u->owner->block == loop->block &&
        (!next || next == u->owner)) {
      next = u->owner;
      continue;
    }
    if (code != EDDY_OP_TL_STACK || !e || !eddy_ir_type_is_tensor(e) ||
        e->rank < 1)
      return false;
    const eddy_type_t *t = u->owner->results[0].type;
    if (t->rank != e->rank + 1 || t->dims[1] != e->dims[0])
      return false;
  }
  s->next = next;
  return true;
}

/// v is a new empty list (tl.empty, tl.reserve).
static bool rs_empty_list(const eddy_value_t *v) {
  eddy_opcode_t code = v->def ? eddy_dialects_opcode(v->def) : EDDY_OP_NONE;
  return code == EDDY_OP_TL_EMPTY || code == EDDY_OP_TL_RESERVE;
}

/// The top-level loop's row values: those it carries with a static leading
/// dimension that changes between iterations, but for its sums. Sets s->b
/// when 0 (none found: 0). `from`, when not NULL, is the earlier loop
/// whose lists of rows (from_rows) this one starts from: each of those
/// must be rows here too.
static bool rs_pick_rows(rs_t *s, const eddy_op_t *loop, const bool *sums,
                         const eddy_op_t *from, const bool *from_rows,
                         bool *rows) {
  const eddy_block_t *body = eddy_ctl_while_body(loop);
  const eddy_op_t *y = body ? eddy_ir_block_terminator(body) : NULL;
  if (!y || y->num_operands != loop->num_operands)
    return false;
  bool any = false;
  for (uint32_t i = 0; i < loop->num_operands; i++) {
    const eddy_value_t *init = eddy_ir_op_operand(loop, i);
    const eddy_type_t *t = init->type;
    bool filled = from && init->def == from && from_rows[init - from->results];
    bool changes = eddy_ir_op_operand(y, i) != body->args[i];
    rows[i] = false;
    // A list of row blocks starts empty (each part gets one of its own),
    // or as the earlier loop's part left it, and is only stacked, measured
    // or given to a later loop after this one. (Each part starts from a
    // list of its own: a list that changes in the loop and that is not new
    // or the earlier loop's is refused.)
    if (t->kind == EDDY_TYPE_LIST) {
      bool own = rs_empty_list(init) || (from && init->def == from);
      if (!own && changes)
        return false;
      bool ok = (rs_empty_list(init) || filled) &&
                rs_list_result_ok(s, loop, &loop->results[i]);
      t = ok ? t->elem : NULL;
    }
    if (t && !sums[i] && eddy_ir_type_is_tensor(t) &&
        eddy_ir_type_is_static(t) && t->rank >= 1 && changes) {
      if (!s->b)
        s->b = t->dims[0];
      rows[i] = t->dims[0] == s->b;
    }
    if (filled && !rows[i])
      return false;
    any |= rows[i];
  }
  return any;
}

/// Loop values that sum over the rows: `acc + P`, with P a matmul with
/// transpose_a (its rows are the products' depth) or a reduce_sum whose
/// axes include 0, of a float dtype whose sums may be reassociated (f32,
/// f16, bf16), starting from zero. Value i's body argument is read only by
/// that top-level `core.add`, the add only by the yield (as value i), P
/// only by the add, and the condition does not read value i. Each part
/// then sums its own rows from zero, and the parts' sums are added after
/// the loops (docs/passes.md). Marks P in s->sum.
static void rs_pick_sums(rs_t *s, const eddy_op_t *loop, bool *sums) {
  const eddy_block_t *cond = eddy_ctl_while_cond(loop);
  const eddy_block_t *body = eddy_ctl_while_body(loop);
  const eddy_op_t *y = body ? eddy_ir_block_terminator(body) : NULL;
  for (uint32_t i = 0; i < loop->num_operands; i++) {
    sums[i] = false;
    if (!y || !cond || i >= body->num_args || i >= cond->num_args)
      continue;
    const eddy_value_t *a = body->args[i];
    const eddy_type_t *t = a->type;
    if (!eddy_ir_type_is_tensor(t) ||
        (t->dtype != EDDY_DT_F32 && t->dtype != EDDY_DT_F16 &&
         t->dtype != EDDY_DT_BF16) ||
        eddy_ir_value_num_uses(a) != 1 ||
        eddy_ir_value_has_uses(cond->args[i]) ||
        !eddy_passes_value_zero(eddy_ir_op_operand(loop, i)))
      continue;
    const eddy_op_t *add = a->uses->owner;
    if (add->block != body || eddy_dialects_opcode(add) != EDDY_OP_CORE_ADD ||
        add->num_operands != 2 || add->results[0].type != t)
      continue;
    const eddy_value_t *sum = &add->results[0];
    if (eddy_ir_value_num_uses(sum) != 1 || sum->uses->owner != y ||
        sum->uses->index != i)
      continue;
    const eddy_value_t *pv = eddy_ir_op_operand(add, a->uses->index ? 0 : 1);
    const eddy_op_t *p = pv->def;
    if (pv == a || !p || p->block != body || pv->type != t ||
        eddy_ir_value_num_uses(pv) != 1 || p->num_results != 1)
      continue;
    eddy_opcode_t code = eddy_dialects_opcode(p);
    if (code == EDDY_OP_CORE_MATMUL) {
      if (p->num_operands != 2 ||
          !eddy_ir_op_attr_bool(p, "transpose_a", false) ||
          eddy_ir_op_attr_bool(p, "transpose_b", false) ||
          eddy_ir_op_operand(p, 0)->type->rank != 2 ||
          eddy_ir_op_operand(p, 1)->type->rank != 2)
        continue;
    } else if (code == EDDY_OP_CORE_REDUCE_SUM) {
      int64_t axes[RS_MAX_RANK];
      const eddy_type_t *xt = eddy_ir_op_operand(p, 0)->type;
      int64_t n = eddy_ir_attr_as_i64_array(eddy_ir_op_attr(p, "axes"), axes,
                                            RS_MAX_RANK);
      bool rows = false;
      for (int64_t k = 0; k < n && k < RS_MAX_RANK; k++)
        rows |= axes[k] == 0 || axes[k] == -(int64_t)xt->rank;
      if (!rows)
        continue;
    } else {
      continue;
    }
    sums[i] = true;
    eddy_ptrmap_put(&s->sum, p, (void *)1);
  }
}

static const eddy_type_t *rs_part_type(rs_t *s, const eddy_type_t *t,
                                       int64_t n) {
  if (t->kind == EDDY_TYPE_LIST)
    return eddy_ir_list_type_get(s->ctx, rs_part_type(s, t->elem, n));
  int64_t dims[RS_MAX_RANK];
  for (int32_t d = 0; d < t->rank; d++)
    dims[d] = t->dims[d];
  dims[0] = n;
  return eddy_ir_tensor_type_get(s->ctx, t->dtype, t->rank, dims);
}

/// The uses in block b (of the part's copy; orig its original) of values
/// sliced alike.
static eddy_status_t rs_slice_uses(rs_t *s, const eddy_block_t *orig,
                                   eddy_block_t *copy, int64_t lo, int64_t n) {
  const eddy_op_t *o = orig->first;
  eddy_op_t *c = copy->first;
  for (; o && c; o = o->next, c = c->next) {
    for (uint32_t r = 0; r < o->num_regions; r++) {
      const eddy_block_t *ob = o->regions[r].first;
      eddy_block_t *cb = c->regions[r].first;
      for (; ob && cb; ob = ob->next, cb = cb->next)
        EDDY_RETURN_IF_ERROR(rs_slice_uses(s, ob, cb, lo, n));
    }
    // Which operands are rows where the value is not: those of an
    // elementwise op, a concat or a list write with a row result, of a
    // part's share of a sum, and the yield of a row loop value.
    int32_t rank = -1;
    const eddy_op_t *parent = eddy_ir_block_parent_op(orig);
    eddy_opcode_t code = eddy_dialects_opcode(o);
    bool yield = code == EDDY_OP_CTL_YIELD && parent &&
                 eddy_dialects_opcode(parent) == EDDY_OP_CTL_WHILE;
    bool row = o->num_results == 1 && rs_is_row(s, &o->results[0]);
    if (!yield && row &&
        (code == EDDY_OP_CORE_CONCAT || code == EDDY_OP_TL_SET_ITEM ||
         code == EDDY_OP_TL_PUSH_BACK ||
         eddy_ir_op_has_trait(o, EDDY_TRAIT_ELEMENTWISE)))
      rank = rs_rank(o->results[0].type);
    bool sum = eddy_ptrmap_get(&s->sum, o) != NULL;
    if (row && code == EDDY_OP_CORE_SLICE) {
      // Its rows are all of the part's.
      int64_t lim[RS_MAX_RANK];
      int64_t r = eddy_ir_attr_as_i64_array(eddy_ir_op_attr(o, "limit"), lim,
                                            RS_MAX_RANK);
      lim[0] = n;
      eddy_ir_op_set_attr(c, "limit",
                          eddy_ir_i64_array_attr_get(s->ctx, lim, r));
    }
    if (rank < 0 && !yield && !sum)
      continue;
    for (uint32_t i = 0; i < o->num_operands; i++) {
      const eddy_value_t *v = eddy_ir_op_operand(o, i);
      if (sum)
        rank = v->type->rank;
      if (yield) {
        if (!rs_is_row(s, orig->args[i]))
          continue;
        rank = rs_rank(orig->args[i]->type);
      }
      if (!rs_needs_slice(s, v, rank))
        continue;
      eddy_builder_t bld;
      eddy_ir_builder_init(&bld, s->ctx);
      eddy_ir_builder_set_before(&bld, c);
      bld.loc = c->loc;
      eddy_value_t *sl = NULL;
      EDDY_RETURN_IF_ERROR(
          eddy_passes_slice_rows(&bld, eddy_ir_op_operand(c, i), lo, n, &sl));
      eddy_ir_op_set_operand(c, i, sl);
    }
  }
  return NULL;
}

/// In the copy of one part (map: original -> copy), every row value of the
/// original has the part's n rows.
static void rs_retype(rs_t *s, eddy_ptrmap_t *map, int64_t n) {
  for (size_t i = 0; i < s->row.cap; i++) {
    const eddy_value_t *v = s->row.keys ? s->row.keys[i] : NULL;
    if (!v || !s->row.vals[i])
      continue;
    eddy_value_t *c = eddy_ptrmap_get(map, v);
    if (c)
      eddy_ir_value_set_type(c, rs_part_type(s, v->type, n));
  }
}

/// The uses of the loop's list result r (rs_list_result_ok): a stack
/// becomes the stacks of the parts' lists (result i of each part) joined
/// along the rows, a length the first part's.
static eddy_status_t rs_join_lists(rs_t *s, eddy_value_t *r,
                                   eddy_op_t *const *parts, uint32_t i,
                                   int64_t n) {
  while (r->uses) {
    eddy_op_t *user = r->uses->owner;
    if (eddy_dialects_opcode(user) == EDDY_OP_TL_LENGTH) {
      eddy_ir_op_set_operand(user, r->uses->index, &parts[0]->results[i]);
      continue;
    }
    // [T, B, ...] from [T, n, ...] of each part.
    const eddy_type_t *t = user->results[0].type;
    int64_t dims[RS_MAX_RANK + 1];
    for (int32_t d = 0; d < t->rank; d++)
      dims[d] = t->dims[d];
    dims[1] = n;
    const eddy_type_t *pt =
        eddy_ir_tensor_type_get(s->ctx, t->dtype, t->rank, dims);
    eddy_builder_t bld;
    eddy_ir_builder_init(&bld, s->ctx);
    eddy_ir_builder_set_before(&bld, user);
    bld.loc = user->loc;
    eddy_value_t *stacks[RS_PARTS];
    for (int p = 0; p < RS_PARTS; p++) {
      eddy_value_t *l = &parts[p]->results[i];
      eddy_op_state_t st = {.name = "tl.stack",
                            .operands = &l,
                            .num_operands = 1,
                            .result_types = &pt,
                            .num_results = 1};
      eddy_op_t *op = NULL;
      EDDY_RETURN_IF_ERROR(eddy_ir_build(&bld, &st, &op));
      stacks[p] = &op->results[0];
    }
    eddy_named_attr_t ax = eddy_ir_named_attr(
        s->ctx, "axis", eddy_ir_int_attr_get(s->ctx, 1, EDDY_DT_I64));
    eddy_op_state_t cs = {.name = "core.concat",
                          .operands = stacks,
                          .num_operands = RS_PARTS,
                          .attrs = &ax,
                          .num_attrs = 1,
                          .result_types = &t,
                          .num_results = 1};
    eddy_op_t *cat = NULL;
    EDDY_RETURN_IF_ERROR(eddy_ir_build(&bld, &cs, &cat));
    eddy_ir_value_replace_all_uses(&user->results[0], &cat->results[0]);
    eddy_ir_op_erase(user);
  }
  return NULL;
}

/// The op of `block` that is op or holds it.
static const eddy_op_t *rs_ancestor_in(const eddy_op_t *op,
                                       const eddy_block_t *block) {
  while (op && op->block && op->block != block)
    op = eddy_ir_block_parent_op(op->block);
  return op;
}

/// Replaces loop by RS_PARTS loops over its row blocks (left in parts).
/// `next`, when not NULL, holds the parts of the later loop that starts
/// from lists this one fills (s->next, already split): part p of it reads
/// part p's results.
static eddy_status_t rs_split(rs_t *s, eddy_op_t *loop, const bool *rows,
                              const bool *sums, eddy_op_t *const *next,
                              eddy_op_t **parts) {
  int64_t n = s->b / RS_PARTS;
  eddy_builder_t bld;
  eddy_ir_builder_init(&bld, s->ctx);
  for (int p = 0; p < RS_PARTS; p++) {
    eddy_ptrmap_t map;
    eddy_ptrmap_init(&map);
    eddy_op_t *c = eddy_ir_op_clone(loop, &map);
    eddy_ir_op_insert_before(c, loop);
    rs_retype(s, &map, n);
    eddy_ptrmap_destroy(&map);
    for (uint32_t r = 0; r < loop->num_regions; r++)
      EDDY_RETURN_IF_ERROR(rs_slice_uses(s, loop->regions[r].first,
                                         c->regions[r].first, p * n, n));
    // The initial rows, sliced before the first part (so that the parts
    // are next to one another).
    eddy_op_t *at = p ? parts[0] : c;
    eddy_ir_builder_set_before(&bld, at);
    bld.loc = loop->loc;
    for (uint32_t i = 0; i < loop->num_operands; i++) {
      eddy_value_t *init = eddy_ir_op_operand(loop, i), *sl = NULL;
      bool empty = rs_empty_list(init);
      if (!rows[i] && !empty)
        continue;
      if (init->type->kind == EDDY_TYPE_LIST && !empty)
        continue; // the earlier loop's part's list (its rs_split)
      if (empty) {
        // A new empty list of the part's own (of its row blocks for rows),
        // so that no two parts write one list.
        eddy_ptrmap_t none;
        eddy_ptrmap_init(&none);
        eddy_op_t *l = eddy_ir_op_clone(init->def, &none);
        eddy_ptrmap_destroy(&none);
        eddy_ir_op_insert_before(l, at);
        sl = &l->results[0];
        if (rows[i])
          eddy_ir_value_set_type(sl, rs_part_type(s, init->type, n));
      } else {
        EDDY_RETURN_IF_ERROR(eddy_passes_slice_rows(&bld, init, p * n, n, &sl));
      }
      eddy_ir_op_set_operand(c, i, sl);
    }
    int64_t part[2] = {p, RS_PARTS};
    eddy_ir_op_set_attr(c, "row_split.part",
                        eddy_ir_i64_array_attr_get(s->ctx, part, 2));
    parts[p] = c;
  }
  // The results: part p of the next loop reads part p's; after the loops,
  // rows concatenated, sums added, the rest the first part's.
  eddy_ir_builder_set_after(&bld, parts[RS_PARTS - 1]);
  bld.loc = loop->loc;
  for (uint32_t i = 0; i < loop->num_results; i++) {
    eddy_value_t *r = &loop->results[i];
    for (eddy_use_t *u = r->uses, *nu; next && u; u = nu) {
      nu = u->next;
      const eddy_op_t *top = rs_ancestor_in(u->owner, loop->block);
      for (int p = 0; p < RS_PARTS; p++)
        if (top == next[p])
          eddy_ir_op_set_operand(u->owner, u->index, &parts[p]->results[i]);
    }
    if (!eddy_ir_value_has_uses(r))
      continue;
    eddy_value_t *to = &parts[0]->results[i];
    if (sums[i]) {
      for (int p = 1; p < RS_PARTS; p++) {
        eddy_value_t *ops[2] = {to, &parts[p]->results[i]};
        EDDY_RETURN_IF_ERROR(
            eddy_ir_build_simple(&bld, "core.add", ops, 2, NULL, 0, &to));
        eddy_ir_builder_set_after(&bld, to->def);
      }
    } else if (rows[i] && r->type->kind == EDDY_TYPE_LIST) {
      EDDY_RETURN_IF_ERROR(rs_join_lists(s, r, parts, i, n));
      continue;
    }
    if (rows[i]) {
      eddy_value_t *ops[RS_PARTS];
      for (int p = 0; p < RS_PARTS; p++)
        ops[p] = &parts[p]->results[i];
      eddy_named_attr_t ax = eddy_ir_named_attr(
          s->ctx, "axis", eddy_ir_int_attr_get(s->ctx, 0, EDDY_DT_I64));
      EDDY_RETURN_IF_ERROR(eddy_ir_build_simple(&bld, "core.concat", ops,
                                                RS_PARTS, &ax, 1, &to));
      eddy_ir_builder_set_after(&bld, to->def);
    }
    eddy_ir_value_replace_all_uses(r, to);
  }
  // The loop goes, and with it the only reader of an empty list it started
  // from (the parts start from lists of their own).
  uint32_t nops = loop->num_operands;
  eddy_op_t **lists = calloc(nops + 1, sizeof *lists);
  if (!lists)
    return eddy_status_create(EDDY_ERR_RESOURCE, "row-split: out of memory");
  for (uint32_t i = 0; i < nops; i++)
    if (rs_empty_list(eddy_ir_op_operand(loop, i)))
      lists[i] = eddy_ir_op_operand(loop, i)->def;
  eddy_ir_op_erase(loop);
  for (uint32_t i = 0; i < nops; i++) {
    eddy_op_t *l = lists[i];
    if (!l || eddy_ir_value_has_uses(&l->results[0]))
      continue;
    for (uint32_t j = i; j < nops; j++) // (one list may start several)
      if (lists[j] == l)
        lists[j] = NULL;
    eddy_ir_op_erase(l);
  }
  free(lists);
  return NULL;
}

/// Whether loop splits (its values in rows and sums). `from`, when not
/// NULL, is the earlier loop whose lists of rows (from_rows) it starts
/// from, and s->b that loop's rows.
static bool rs_analyze(rs_t *s, const eddy_op_t *loop, const eddy_op_t *from,
                       const bool *from_rows, bool *rows, bool *sums) {
  rs_pick_sums(s, loop, sums);
  return rs_pick_rows(s, loop, sums, from, from_rows, rows) &&
         s->b % RS_PARTS == 0 && s->b / RS_PARTS >= RS_MIN_ROWS &&
         rs_loop(s, loop, rows) && s->matmuls > 0 &&
         s->weights <= RS_MAX_WEIGHT_BYTES;
}

/// One loop's analysis: rs_t and its rows and sums.
typedef struct rs_plan {
  rs_t s;
  bool *rows, *sums;
} rs_plan_t;

static eddy_status_t rs_plan_init(rs_plan_t *p, eddy_ctx_t *ctx,
                                  const eddy_op_t *loop) {
  p->s = (rs_t){.ctx = ctx};
  eddy_ptrmap_init(&p->s.row);
  eddy_ptrmap_init(&p->s.sum);
  p->rows = calloc(loop->num_operands + 1, sizeof *p->rows);
  p->sums = calloc(loop->num_operands + 1, sizeof *p->sums);
  if (!p->rows || !p->sums)
    return eddy_status_create(EDDY_ERR_RESOURCE, "row-split: out of memory");
  return NULL;
}

static void rs_plan_destroy(rs_plan_t *p) {
  free(p->rows);
  free(p->sums);
  eddy_ptrmap_destroy(&p->s.row);
  eddy_ptrmap_destroy(&p->s.sum);
}

/// Splits loop when it (and the later loop it gives lists of rows to, if
/// any) can be; *split counts the loops split.
static eddy_status_t rs_try(eddy_ctx_t *ctx, eddy_op_t *loop, int64_t *split) {
  rs_plan_t a, b = {0};
  eddy_status_t st = rs_plan_init(&a, ctx, loop);
  if (!st && rs_analyze(&a.s, loop, NULL, NULL, a.rows, a.sums)) {
    eddy_op_t *next = a.s.next;
    if (!next) {
      eddy_op_t *parts[RS_PARTS];
      st = rs_split(&a.s, loop, a.rows, a.sums, NULL, parts);
      *split += 1;
    } else if (!(st = rs_plan_init(&b, ctx, next))) {
      // The later loop first, its lists of rows still the whole loop's;
      // then this one, whose parts' lists go to its parts.
      b.s.b = a.s.b;
      if (rs_analyze(&b.s, next, loop, a.rows, b.rows, b.sums) && !b.s.next) {
        eddy_op_t *nparts[RS_PARTS], *parts[RS_PARTS];
        st = rs_split(&b.s, next, b.rows, b.sums, NULL, nparts);
        if (!st)
          st = rs_split(&a.s, loop, a.rows, a.sums, nparts, parts);
        *split += 2;
      }
    }
  }
  rs_plan_destroy(&a);
  rs_plan_destroy(&b); // (all zero when not initialized)
  return st;
}

static eddy_status_t rs_run(eddy_pass_ctx_t *pc, eddy_module_t *m) {
  int64_t split = 0;
  for (eddy_op_t *f = eddy_ir_module_body(m)->first; f; f = f->next) {
    if (!eddy_ir_op_is(f, "func.func"))
      continue;
    eddy_block_t *top = eddy_ir_func_entry(f);
    // (A split removes the loop and may remove a later one: the next op is
    // the one after the parts, found from the op before the loop.)
    for (eddy_op_t *op = top ? top->first : NULL; op; op = op->next) {
      if (eddy_dialects_opcode(op) != EDDY_OP_CTL_WHILE ||
          eddy_ir_op_attr(op, "row_split.part"))
        continue;
      eddy_op_t *prev = op->prev;
      int64_t before = split;
      EDDY_RETURN_IF_ERROR(rs_try(m->ctx, op, &split));
      if (split != before)
        op = prev ? prev : top->first;
    }
  }
  if (split) {
    eddy_ir_pass_stat_add(pc, "split-loops", split);
    eddy_ir_pass_mark_changed(pc);
  }
  return NULL;
}

const eddy_pass_t eddy_pass_row_split = {
    .name = "row-split",
    .summary = "run a ctl.while whose batch rows are independent as "
               "independent loops over blocks of rows",
    .run = rs_run,
};

/// canonicalize: constant folding and control-flow simplification, to a
/// fixpoint.
///
/// - ops with a folder are folded when their operands allow it; constant
///   results are materialized as core.constant right before the op;
/// - ctl.if with a constant predicate is replaced by its taken region;
/// - ctl.while whose condition is a constant false is replaced by its inits;
/// - a sign test of a value known non-negative (a loop counter, a dim) is
///   a constant;
/// - side-effect-free ops with unused results are removed.
/// Duplicate constants are left for cse.
#include "ir/passes/pass_util.h"
#include "ir/passes/passes.h"

/// Sweeps over a function stop after this many rounds even when something
/// still changes: folders that undo each other must not hang the compiler.
enum { CANON_MAX_ROUNDS = 10 };

typedef struct canon_state {
  eddy_pass_ctx_t *pc;
  eddy_ctx_t *ctx;
  bool changed;
} canon_state_t;

/// A scalar i1 constant: its truth value in *out.
static bool const_pred(const eddy_value_t *v, bool *out) {
  const eddy_attr_t *a = eddy_passes_value_const(v);
  if (!a || !a->type || a->type->kind != EDDY_TYPE_TENSOR ||
      eddy_ir_type_num_elements(a->type) != 1)
    return false;
  *out = eddy_ir_dense_attr_i64(a, 0) != 0;
  return true;
}

/// Folds op with its folder. Only results that are used are replaced, so a
/// fold never creates a constant nobody reads.
static eddy_status_t fold_op(canon_state_t *s, eddy_op_t *op) {
  if (!op->def || !op->def->fold || op->num_results == 0 ||
      eddy_ir_op_has_trait(op, EDDY_TRAIT_CONSTANT) ||
      !eddy_passes_op_has_used_result(op))
    return NULL;
  eddy_arena_t *arena = eddy_ir_pass_scratch(s->pc);
  const eddy_attr_t **consts =
      eddy_arena_alloc(arena, (op->num_operands + 1) * sizeof *consts);
  for (uint32_t i = 0; i < op->num_operands; i++)
    consts[i] = eddy_passes_value_const(op->operands[i].value);
  eddy_fold_result_t *res =
      eddy_arena_alloc(arena, op->num_results * sizeof *res);
  eddy_fold_ctx_t fc = {
      .ctx = s->ctx, .op = op, .operand_consts = consts, .results = res};
  if (!op->def->fold(&fc))
    return NULL;

  eddy_builder_t b;
  eddy_ir_builder_init(&b, s->ctx);
  eddy_ir_builder_set_before(&b, op);
  b.loc = op->loc;
  uint32_t replaced = 0;
  for (uint32_t i = 0; i < op->num_results; i++) {
    eddy_value_t *r = &op->results[i];
    if (!r->uses)
      continue;
    eddy_value_t *with = res[i].value;
    if (with && with->type != r->type)
      continue; // another type would change what the users see
    if (!with && res[i].attr) {
      // The constant's static type must describe the same value; it may
      // refine a dynamic result type.
      if (res[i].attr->kind != EDDY_ATTR_DENSE ||
          !eddy_ir_type_is_compatible(res[i].attr->type, r->type))
        continue;
      EDDY_RETURN_IF_ERROR(eddy_ir_build_constant(&b, res[i].attr, &with));
    }
    if (!with || with == r)
      continue;
    eddy_ir_value_replace_all_uses(r, with);
    replaced++;
  }
  if (replaced == 0)
    return NULL;
  eddy_ir_pass_stat_add(s->pc, "folded-ops", 1);
  s->changed = true;
  if (eddy_passes_op_is_dead(op))
    eddy_ir_op_erase(op);
  return NULL;
}

/// ctl.if on a constant: the taken region's ops move before the if, its
/// results become the yielded values.
static bool simplify_if(canon_state_t *s, eddy_op_t *op) {
  bool taken;
  if (op->num_operands < 1 || op->num_regions != 2 ||
      !const_pred(op->operands[0].value, &taken))
    return false;
  eddy_block_t *b = eddy_ir_region_entry(&op->regions[taken ? 0 : 1]);
  if (!b || b->next || b->num_args)
    return false;
  eddy_op_t *yield = eddy_ir_block_terminator(b);
  if (!yield || yield->num_operands != op->num_results)
    return false;
  while (b->first != yield)
    eddy_ir_op_move_before(b->first, op);
  for (uint32_t i = 0; i < op->num_results; i++)
    eddy_ir_value_replace_all_uses(&op->results[i],
                                   eddy_ir_op_operand(yield, i));
  eddy_ir_op_erase(op);
  eddy_ir_pass_stat_add(s->pc, "inlined-ifs", 1);
  s->changed = true;
  return true;
}

/// ctl.while whose condition is false before any iteration: the body never
/// runs and the results are the inits. The cond region still runs once, so
/// it must be free of side effects.
static bool simplify_while(canon_state_t *s, eddy_op_t *op) {
  if (op->num_regions != 2 || op->num_operands != op->num_results)
    return false;
  eddy_block_t *cond = eddy_ir_region_entry(&op->regions[0]);
  if (!cond || cond->next)
    return false;
  eddy_op_t *term = eddy_ir_block_terminator(cond);
  bool go_on;
  if (!term || term->num_operands < 1 ||
      !const_pred(term->operands[0].value, &go_on) || go_on)
    return false;
  for (eddy_op_t *o = cond->first; o != term; o = o->next)
    if (!eddy_passes_op_is_pure(o) || o->num_regions)
      return false;
  for (uint32_t i = 0; i < op->num_results; i++)
    eddy_ir_value_replace_all_uses(&op->results[i],
                                   eddy_ir_op_operand(op, i));
  eddy_ir_op_erase(op);
  eddy_ir_pass_stat_add(s->pc, "removed-loops", 1);
  s->changed = true;
  return true;
}

/// All elements of constant v are 0.
static bool const_zero(const eddy_value_t *v) {
  const eddy_attr_t *a = eddy_passes_value_const(v);
  if (!a || !a->type)
    return false;
  int64_t n = eddy_ir_type_num_elements(a->type);
  for (int64_t i = 0; i < (a->u.dense.splat ? 1 : n); i++)
    if (eddy_ir_dense_attr_i64(a, i) != 0)
      return false;
  return n > 0;
}

/// x < 0 (false) and x >= 0 (true), and 0 > x, 0 <= x, for an x known to
/// be non-negative: the test legalize-tf puts on a TensorFlow index that
/// may count from the end (x[t] with t a loop counter), whose select then
/// folds away.
static eddy_status_t fold_sign_test(canon_state_t *s, eddy_op_t *op,
                                    bool *out_done) {
  *out_done = false;
  bool lt = eddy_ir_op_is(op, "core.lt"), ge = eddy_ir_op_is(op, "core.ge"),
       gt = eddy_ir_op_is(op, "core.gt"), le = eddy_ir_op_is(op, "core.le");
  if (!(lt || ge || gt || le) || op->num_operands != 2 ||
      !op->results[0].uses || !eddy_ir_type_is_static(op->results[0].type))
    return NULL;
  // lt, ge: (x, 0); gt, le: (0, x).
  int xi = lt || ge ? 0 : 1;
  if (!const_zero(op->operands[1 - xi].value) ||
      !eddy_passes_value_nonneg(op->operands[xi].value))
    return NULL;
  const eddy_type_t *t = op->results[0].type;
  uint8_t truth = ge || le;
  const eddy_attr_t *a = eddy_ir_dense_splat_attr_get(s->ctx, t, &truth);
  eddy_builder_t b;
  eddy_ir_builder_init(&b, s->ctx);
  eddy_ir_builder_set_before(&b, op);
  b.loc = op->loc;
  eddy_value_t *c = NULL;
  EDDY_RETURN_IF_ERROR(eddy_ir_build_constant(&b, a, &c));
  eddy_ir_value_replace_all_uses(&op->results[0], c);
  eddy_ir_pass_stat_add(s->pc, "sign-tests", 1);
  s->changed = true;
  *out_done = true;
  return NULL;
}

static eddy_status_t canon_block(canon_state_t *s, eddy_block_t *b) {
  for (eddy_op_t *op = b->first, *next; op; op = next) {
    next = op->next;
    // Inner regions first, so their constants are known when this op is
    // simplified. Ops moved out of an inlined region land before `next`
    // and were already visited inside the region.
    for (uint32_t r = 0; r < op->num_regions; r++)
      for (eddy_block_t *ib = op->regions[r].first; ib; ib = ib->next)
        EDDY_RETURN_IF_ERROR(canon_block(s, ib));
    if (eddy_ir_op_is(op, "ctl.if")) {
      if (simplify_if(s, op))
        continue;
    } else if (eddy_ir_op_is(op, "ctl.while")) {
      if (simplify_while(s, op))
        continue;
    }
    bool done = false;
    EDDY_RETURN_IF_ERROR(fold_sign_test(s, op, &done));
    if (done)
      continue;
    EDDY_RETURN_IF_ERROR(fold_op(s, op));
  }
  return NULL;
}

static eddy_status_t canon_run(eddy_pass_ctx_t *pc, eddy_module_t *m) {
  canon_state_t s = {.pc = pc, .ctx = eddy_ir_pass_ctx(pc)};
  for (eddy_op_t *f = eddy_ir_module_body(m)->first; f; f = f->next) {
    for (int round = 0; round < CANON_MAX_ROUNDS; round++) {
      s.changed = false;
      for (uint32_t r = 0; r < f->num_regions; r++) {
        for (eddy_block_t *b = f->regions[r].first; b; b = b->next)
          EDDY_RETURN_IF_ERROR(canon_block(&s, b));
        int64_t erased = eddy_passes_erase_dead_in_region(&f->regions[r]);
        if (erased) {
          eddy_ir_pass_stat_add(pc, "erased-ops", erased);
          s.changed = true;
        }
      }
      if (!s.changed)
        break;
      eddy_ir_pass_mark_changed(pc);
    }
  }
  return NULL;
}

const eddy_pass_t eddy_pass_canonicalize = {
    .name = "canonicalize",
    .summary = "fold constants, inline constant ctl.if, drop never-entered "
               "ctl.while, remove dead pure ops (to a fixpoint)",
    .run = canon_run,
};

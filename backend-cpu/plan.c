/// The kernel plan (plan.h): decided from the IR alone, before the emitter
/// writes any code.
///
/// - Fusion: a pointwise op whose only use is an op that can read it
///   element by element (a pointwise op, or a kernel that reads each operand
///   element at most once per result element: reductions, reshape,
///   transpose...) in the same block is computed inside that op's kernel.
///   Chains become one loop nest with no intermediate buffers.
/// - Size classes: an f32 matmul whose M*N*K reaches the threshold is a
///   library call; smaller ones and other dtypes are loop nests.
/// - Memory: a value of the function body computed by a kernel and returned
///   once is written straight into its result tensor; every other top-level
///   value's buffer is free for reuse after the last op that reads it.
#include "backend-cpu/plan.h"

#include "backend-cpu/emit_internal.h"

#include <inttypes.h>
#include <string.h>

void cpu_mm_shape(const eddy_op_t *op, cpu_mm_shape_t *d) {
  const eddy_type_t *at = eddy_ir_op_operand(op, 0)->type;
  const eddy_type_t *bt = eddy_ir_op_operand(op, 1)->type;
  const eddy_type_t *rt = op->results[0].type;
  bool ta = eddy_ir_op_attr_bool(op, "transpose_a", false);
  d->m = rt->dims[rt->rank - 2];
  d->n = rt->dims[rt->rank - 1];
  d->k = ta ? at->dims[at->rank - 2] : at->dims[at->rank - 1];
  d->batch = 1;
  for (int32_t i = 0; i < rt->rank - 2; i++)
    d->batch *= rt->dims[i];
  d->rows_fold = rt->rank > 2 && at->rank == rt->rank && !ta;
  for (int32_t i = 0; d->rows_fold && i < bt->rank - 2; i++)
    d->rows_fold = bt->dims[i] == 1;
}

static int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r;
  return eddy_checked_mul_i64(a, b, &r) ? r : INT64_MAX;
}

/// a + b for a, b >= 0, saturated.
static int64_t sat_add(int64_t a, int64_t b) {
  return a > INT64_MAX - b ? INT64_MAX : a + b;
}

/// M*N*K of one library call (saturated), for a matmul of static type.
static int64_t mm_call_work(const eddy_op_t *op) {
  cpu_mm_shape_t d;
  cpu_mm_shape(op, &d);
  int64_t m = d.rows_fold ? sat_mul(d.m, d.batch) : d.m;
  return sat_mul(sat_mul(m, d.n), d.k);
}

static bool type_dynamic(const eddy_type_t *t) {
  return eddy_ir_type_is_tensor(t) && cpu_type_is_dynamic(t);
}

static bool op_dynamic(const eddy_op_t *op) {
  for (uint32_t i = 0; i < op->num_operands; i++)
    if (type_dynamic(eddy_ir_op_operand(op, i)->type))
      return true;
  return type_dynamic(op->results[0].type);
}

static bool can_fuse(const cpu_plan_t *p, const eddy_op_t *op) {
  if (!p->opts->fuse || !cpu_op_is_pointwise(op) || op->num_results != 1)
    return false;
  const eddy_value_t *r = &op->results[0];
  if (eddy_ir_value_num_uses(r) != 1)
    return false;
  const eddy_op_t *user = r->uses->owner;
  // The dim operands of a reshape are read on the host, from a buffer.
  if (eddy_dialects_opcode(user) == EDDY_OP_CORE_RESHAPE &&
      eddy_ir_op_operand(user, 0) != r)
    return false;
  return user->block == op->block && cpu_op_can_consume_fused(user);
}

static cpu_step_t *new_step(cpu_plan_t *p, const eddy_op_t *op,
                            cpu_step_kind_t kind) {
  cpu_step_t *s = eddy_arena_alloc(p->arena, sizeof *s);
  memset(s, 0, sizeof *s);
  s->kind = kind;
  eddy_ptrmap_put(&p->steps, op, s);
  return s;
}

static void plan_block(cpu_plan_t *p, const eddy_block_t *b);

/// True when some op under region r (regions included) other than a
/// tl.get_item, tl.length or tl.stack has list l as an operand, or yields
/// it elsewhere: an op that may write the list, or hand it to one that
/// does.
static bool list_touched(const eddy_region_t *r, const eddy_value_t *l) {
  for (const eddy_block_t *b = r->first; b; b = b->next)
    for (const eddy_op_t *op = b->first; op; op = op->next) {
      eddy_opcode_t code = eddy_dialects_opcode(op);
      bool reads = code == EDDY_OP_TL_GET_ITEM || code == EDDY_OP_TL_LENGTH ||
                   code == EDDY_OP_TL_STACK;
      // (A loop body passing its own loop value through is no use.)
      bool through = code == EDDY_OP_CTL_YIELD && !l->def && l->block == b;
      for (uint32_t i = 0; !reads && i < op->num_operands; i++)
        if (eddy_ir_op_operand(op, i) == l && !(through && i == l->index))
          return true;
      for (uint32_t k = 0; k < op->num_regions; k++)
        if (list_touched(&op->regions[k], l))
          return true;
    }
  return false;
}

/// A tl.get_item of a tensor in a ctl.while whose list no op of the loop
/// writes: a list from outside the loop, or a loop value the body passes
/// through unchanged, used by nothing but reads in the loop. The list then
/// holds the item, unchanged, for as long as the result is used (within an
/// iteration), so the result can be the item in place.
static bool reads_in_place(const eddy_op_t *op) {
  if (eddy_dialects_opcode(op) != EDDY_OP_TL_GET_ITEM ||
      op->results[0].type->kind == EDDY_TYPE_LIST ||
      type_dynamic(op->results[0].type))
    return false;
  const eddy_op_t *w = eddy_ir_op_parent_op(op);
  while (w && eddy_dialects_opcode(w) != EDDY_OP_CTL_WHILE)
    w = eddy_ir_op_parent_op(w);
  if (!w)
    return false;
  const eddy_value_t *l = eddy_ir_op_operand(op, 0);
  const eddy_block_t *cb = eddy_ir_region_entry(&w->regions[0]);
  const eddy_block_t *bb = eddy_ir_region_entry(&w->regions[1]);
  if (!l->def && (l->block == cb || l->block == bb)) {
    // A loop value: passed through unchanged, and read only, in both
    // regions.
    uint32_t k = l->index;
    const eddy_op_t *y = eddy_ir_block_terminator(bb);
    if (!y || k >= y->num_operands || eddy_ir_op_operand(y, k) != bb->args[k])
      return false;
    return !list_touched(&w->regions[0], cb->args[k]) &&
           !list_touched(&w->regions[1], bb->args[k]);
  }
  // A list from outside the loop (defined above it, or a loop value of an
  // enclosing loop): read only in the loop, and not one of its inits (a
  // loop value that may take over the list's reference and write it).
  const eddy_op_t *a = l->def ? eddy_ir_op_parent_op(l->def)
                              : eddy_ir_block_parent_op(l->block);
  for (; a; a = eddy_ir_op_parent_op(a))
    if (a == w)
      return false; // defined in the loop: it may change every iteration
  for (uint32_t i = 0; i < w->num_operands; i++)
    if (eddy_ir_op_operand(w, i) == l)
      return false;
  return !list_touched(&w->regions[0], l) && !list_touched(&w->regions[1], l);
}

/// tl.from_tensor of an entry argument or of a constant kept as a global,
/// in host memory: its items can share the data (an argument is the
/// caller's until the call returns, a global is read-only, and every list
/// is released before the call returns).
static bool borrows(const cpu_plan_t *p, const eddy_op_t *op) {
  if (eddy_dialects_opcode(op) != EDDY_OP_TL_FROM_TENSOR ||
      p->opts->form == EDDY_CPU_FORM_CUDA)
    return false;
  const eddy_value_t *x = eddy_ir_op_operand(op, 0);
  if (!x->def)
    return x->block == p->top;
  const cpu_step_t *s = cpu_plan_step(p, x->def);
  return s && s->kind == CPU_STEP_GLOBAL;
}

/// op is nested (at any depth) inside the regions of `outer`.
static bool op_within(const eddy_op_t *op, const eddy_op_t *outer) {
  for (; op; op = eddy_ir_op_parent_op(op))
    if (op == outer)
      return true;
  return false;
}

/// The outermost ctl.while around matmul op (inside its function) for the
/// whole of which its B operand keeps its data: B is defined outside the
/// loop, or is a loop value that the body passes through unchanged (as
/// TensorFlow's loops carry their weights), traced to the loop's operand.
/// NULL when there is none.
static const eddy_op_t *invariant_b_loop(const eddy_op_t *op) {
  const eddy_value_t *v = eddy_ir_op_operand(op, 1);
  const eddy_op_t *best = NULL;
  for (const eddy_op_t *w = eddy_ir_op_parent_op(op); w;
       w = eddy_ir_op_parent_op(w)) {
    bool is_while = cpu_op_info(w)->cls == CPU_OP_WHILE;
    if (!v->def && eddy_ir_block_parent_op(v->block) == w) {
      // A loop value of w (an argument of its cond or body).
      if (!is_while || w->num_regions < 2)
        break;
      const eddy_block_t *body = eddy_ir_region_entry(&w->regions[1]);
      const eddy_op_t *y = eddy_ir_block_terminator(body);
      uint32_t i = v->index;
      if (!y || i >= y->num_operands || i >= body->num_args ||
          i >= w->num_operands ||
          eddy_ir_op_operand(y, i) != body->args[i])
        break;
      best = w;
      v = eddy_ir_op_operand(w, i);
      continue;
    }
    const eddy_op_t *d = v->def ? v->def : eddy_ir_block_parent_op(v->block);
    if (d == w || (d && op_within(d, w)))
      break;
    if (is_while)
      best = w;
  }
  return best;
}

/// A core.gather of one row (a scalar index on axis 0, static types, a row
/// of the operand that exists) inside a ctl.while whose operand keeps its
/// data for the whole of that loop: defined outside it, or a loop value the
/// body passes through unchanged (a loop value that changes may be written
/// in place while the row is still read). Its result can then be the row
/// in place, after the index is checked.
static bool gather_row_in_place(const cpu_plan_t *p, const eddy_op_t *op) {
  if (p->opts->form != EDDY_CPU_FORM_HOST ||
      eddy_dialects_opcode(op) != EDDY_OP_CORE_GATHER)
    return false;
  const eddy_value_t *x = eddy_ir_op_operand(op, 0);
  const eddy_type_t *xt = x->type, *it = eddy_ir_op_operand(op, 1)->type;
  if (eddy_ir_op_attr_int(op, "axis", 0) != 0 || it->rank != 0 ||
      xt->rank < 1 || type_dynamic(xt) || xt->dims[0] < 1 ||
      type_dynamic(op->results[0].type))
    return false;
  // (A splat constant has no storage to point into.)
  const cpu_step_t *xs = x->def ? cpu_plan_step(p, x->def) : NULL;
  if (xs && xs->kind == CPU_STEP_SPLAT)
    return false;
  const eddy_op_t *w = eddy_ir_op_parent_op(op);
  while (w && cpu_op_info(w)->cls != CPU_OP_WHILE)
    w = eddy_ir_op_parent_op(w);
  if (!w || w->num_regions < 2)
    return false;
  const eddy_block_t *b = eddy_ir_region_entry(&w->regions[1]);
  if (!x->def && x->block == b) {
    const eddy_op_t *y = eddy_ir_block_terminator(b);
    return y && x->index < y->num_operands &&
           eddy_ir_op_operand(y, x->index) == x;
  }
  const eddy_op_t *d = x->def ? x->def : eddy_ir_block_parent_op(x->block);
  return d != w && !(d && op_within(d, w));
}

/// Gives LIBRARY step s of op a packed-B cache when its B is loop-invariant
/// (host form; one product per step, or a row-folded batch).
static void plan_gemm_cache(cpu_plan_t *p, const eddy_op_t *op,
                            cpu_step_t *s) {
  if (p->opts->form != EDDY_CPU_FORM_HOST)
    return;
  cpu_mm_shape_t d;
  cpu_mm_shape(op, &d);
  if (d.batch != 1 && !d.rows_fold)
    return;
  const eddy_op_t *w = invariant_b_loop(op);
  if (!w)
    return;
  const eddy_op_t **loops = eddy_arena_alloc(
      p->arena, sizeof(*loops) * (size_t)(p->num_gemm_caches + 1));
  if (!loops)
    return;
  if (p->num_gemm_caches)
    memcpy(loops, p->cache_loops, sizeof(*loops) * (size_t)p->num_gemm_caches);
  loops[p->num_gemm_caches++] = w;
  p->cache_loops = loops;
  s->gemm_cache = p->num_gemm_caches;
}

/// ---- Loop values written in place ------------------------------------------

/// The op of block b that is op or holds it, or NULL.
static const eddy_op_t *ancestor_in(const eddy_block_t *b,
                                    const eddy_op_t *op) {
  while (op && op->block != b)
    op = eddy_ir_op_parent_op(op);
  return op;
}

/// The steps of one loop body in the order they run.
typedef struct body_order {
  const cpu_plan_t *p;
  const eddy_block_t *b;
  eddy_ptrmap_t index; ///< op of b -> its position + 1
} body_order_t;

/// Where op (in b or nested in one of its ops) is computed: the position of
/// its op in b, or of the kernel a fused op is computed in; INTPTR_MAX for
/// the terminator.
static intptr_t runs_at(const body_order_t *o, const eddy_op_t *op) {
  const eddy_op_t *a = ancestor_in(o->b, op);
  for (;;) {
    const cpu_step_t *s = a ? cpu_plan_step(o->p, a) : NULL;
    if (!s || s->kind != CPU_STEP_FUSED || !s->into)
      break;
    a = ancestor_in(o->b, s->into);
  }
  if (!a || eddy_ir_op_has_trait(a, EDDY_TRAIT_TERMINATOR))
    return INTPTR_MAX;
  return (intptr_t)eddy_ptrmap_get(&o->index, a) - 1;
}

/// def's result can be written over the loop value arg (an argument of the
/// body o->b): nothing reads arg after def's step, and def's own step reads
/// it only element for element (a pointwise kernel, every op of which is
/// pointwise, reads each operand at the element it writes).
static bool can_overwrite(const body_order_t *o, const eddy_value_t *arg,
                          const eddy_op_t *def) {
  intptr_t at = runs_at(o, def);
  for (const eddy_use_t *u = arg->uses; u; u = u->next) {
    intptr_t r = runs_at(o, u->owner);
    if (r < at)
      continue;
    if (r > at || !cpu_op_is_pointwise(def) || !cpu_op_is_pointwise(u->owner))
      return false;
  }
  return true;
}

/// Yield operand k's single use there, defined in body b by a kernel or
/// library step with a static type: the op defining it, else NULL.
static const eddy_op_t *yielded_def(const cpu_plan_t *p, const eddy_block_t *b,
                                    const eddy_op_t *y, uint32_t k) {
  const eddy_value_t *v = eddy_ir_op_operand(y, k);
  if (!v->def || v->def->block != b || v->def->num_results != 1 ||
      v->type->kind == EDDY_TYPE_LIST || type_dynamic(v->type) ||
      k >= b->num_args || b->args[k]->type != v->type)
    return NULL;
  for (uint32_t j = 0; j < y->num_operands; j++)
    if (j != k && eddy_ir_op_operand(y, j) == v)
      return NULL;
  const cpu_step_t *s = cpu_plan_step(p, v->def);
  return s && !s->view &&
                 (s->kind == CPU_STEP_KERNEL || s->kind == CPU_STEP_LIBRARY)
             ? v->def
             : NULL;
}

/// def = core.add(arg, matmul) (either order), the matmul a library step of
/// the same type that nothing else reads and that does not read arg: the
/// matmul, else NULL.
static const eddy_op_t *accumulated_product(const cpu_plan_t *p,
                                            const eddy_op_t *def,
                                            const eddy_value_t *arg) {
  if (eddy_dialects_opcode(def) != EDDY_OP_CORE_ADD ||
      def->num_operands != 2 || def->results[0].type->dtype != EDDY_DT_F32)
    return NULL;
  uint32_t i = eddy_ir_op_operand(def, 0) == arg   ? 1
               : eddy_ir_op_operand(def, 1) == arg ? 0
                                                   : 2;
  if (i == 2)
    return NULL;
  const eddy_value_t *x = eddy_ir_op_operand(def, i);
  const eddy_op_t *m = x->def;
  const cpu_step_t *ms = m ? cpu_plan_step(p, m) : NULL;
  if (!ms || ms->kind != CPU_STEP_LIBRARY || m->block != def->block ||
      eddy_dialects_opcode(m) != EDDY_OP_CORE_MATMUL ||
      x->type != def->results[0].type || eddy_ir_value_num_uses(x) != 1 ||
      eddy_ir_op_operand(m, 0) == arg || eddy_ir_op_operand(m, 1) == arg)
    return NULL;
  return m;
}

/// Decides which values loop w's body writes straight into the loop's
/// buffers (cpu_plan_t.loop_out), and which of those are a product added to
/// the loop value (cpu_step_t.product). Host form only.
static void plan_loop_in_place(cpu_plan_t *p, const eddy_op_t *w) {
  if (p->opts->form != EDDY_CPU_FORM_HOST || w->num_regions < 2)
    return;
  const eddy_block_t *b = eddy_ir_region_entry(&w->regions[1]);
  const eddy_op_t *y = b ? eddy_ir_block_terminator(b) : NULL;
  if (!y)
    return;
  body_order_t o = {.p = p, .b = b};
  eddy_ptrmap_init(&o.index);
  intptr_t n = 0;
  for (const eddy_op_t *op = b->first; op; op = op->next)
    eddy_ptrmap_put(&o.index, op, (void *)(++n));
  // Accumulations first: fusing the product into the add moves where it
  // reads its operands, which the checks below must see.
  for (uint32_t k = 0; k < y->num_operands; k++) {
    const eddy_op_t *def = yielded_def(p, b, y, k);
    const eddy_op_t *m = def ? accumulated_product(p, def, b->args[k]) : NULL;
    if (!m)
      continue;
    cpu_step_t *ms = eddy_ptrmap_get(&p->steps, m);
    cpu_step_t *ds = eddy_ptrmap_get(&p->steps, def);
    ms->kind = CPU_STEP_FUSED;
    ms->into = def;
    ds->kind = CPU_STEP_LIBRARY;
    ds->product = m;
  }
  for (uint32_t k = 0; k < y->num_operands; k++) {
    const eddy_op_t *def = yielded_def(p, b, y, k);
    if (def && can_overwrite(&o, b->args[k], def))
      eddy_ptrmap_put(&p->loop_out, &def->results[0], (void *)(intptr_t)(k + 1));
  }
  // An accumulation whose add cannot write in place goes back to a product
  // and an add (which only moves the product's reads earlier).
  for (uint32_t k = 0; k < y->num_operands; k++) {
    const eddy_op_t *def = yielded_def(p, b, y, k);
    cpu_step_t *ds = def ? eddy_ptrmap_get(&p->steps, def) : NULL;
    if (!ds || !ds->product || cpu_plan_loop_out(p, &def->results[0]) >= 0)
      continue;
    cpu_step_t *ms = eddy_ptrmap_get(&p->steps, ds->product);
    ms->kind = CPU_STEP_LIBRARY;
    ms->into = NULL;
    ds->kind = CPU_STEP_KERNEL;
    ds->product = NULL;
  }
  eddy_ptrmap_destroy(&o.index);
}

static void plan_op(cpu_plan_t *p, const eddy_op_t *op) {
  const cpu_op_info_t *info = cpu_op_info(op);
  switch (info->cls) {
  case CPU_OP_NONE:
    new_step(p, op, CPU_STEP_UNSUPPORTED);
    return;
  case CPU_OP_CONSTANT: {
    const eddy_attr_t *v = eddy_ir_op_attr(op, "value");
    new_step(p, op,
             v && v->u.dense.splat ? CPU_STEP_SPLAT : CPU_STEP_GLOBAL);
    return;
  }
  case CPU_OP_POINTWISE:
    if (can_fuse(p, op)) {
      new_step(p, op, CPU_STEP_FUSED)->into = op->results[0].uses->owner;
      return;
    }
    new_step(p, op, CPU_STEP_KERNEL);
    return;
  case CPU_OP_KERNEL: {
    cpu_step_t *s = new_step(p, op, CPU_STEP_KERNEL);
    s->view = gather_row_in_place(p, op);
    if (eddy_dialects_opcode(op) != EDDY_OP_CORE_MATMUL ||
        op->results[0].type->dtype != EDDY_DT_F32)
      return;
    if (!op_dynamic(op)) {
      if (mm_call_work(op) >= cpu_matmul_call_min(p->opts)) {
        s->kind = CPU_STEP_LIBRARY;
        plan_gemm_cache(p, op, s);
      }
      return;
    }
    // `?` dims: the size class is chosen at run time, in host code, for
    // two matrices or one row-folded batch.
    const eddy_type_t *at = eddy_ir_op_operand(op, 0)->type;
    const eddy_type_t *bt = eddy_ir_op_operand(op, 1)->type;
    cpu_mm_shape_t d;
    cpu_mm_shape(op, &d);
    s->runtime_library = p->opts->form == EDDY_CPU_FORM_HOST &&
                         ((at->rank == 2 && bt->rank == 2) || d.rows_fold);
    return;
  }
  case CPU_OP_LIST:
  {
    cpu_step_t *s = new_step(p, op, CPU_STEP_LIST);
    s->borrow = borrows(p, op);
    s->view = reads_in_place(op) && p->opts->form == EDDY_CPU_FORM_HOST;
    return;
  }
  case CPU_OP_WHILE:
  case CPU_OP_IF:
    new_step(p, op,
             info->cls == CPU_OP_WHILE ? CPU_STEP_LOOP : CPU_STEP_BRANCH);
    for (uint32_t k = 0; k < op->num_regions; k++)
      plan_block(p, eddy_ir_region_entry(&op->regions[k]));
    if (info->cls == CPU_OP_WHILE)
      plan_loop_in_place(p, op);
    return;
  case CPU_OP_CALL: {
    new_step(p, op, CPU_STEP_INLINE);
    // Each callee is planned once: its ops' decisions do not depend on the
    // call site (a recursive call is refused when it is emitted).
    const eddy_attr_t *c = eddy_ir_op_attr(op, "callee");
    eddy_op_t *callee =
        c ? eddy_ir_module_lookup_func(p->module, c->u.str.data) : NULL;
    eddy_block_t *body = callee ? eddy_ir_func_entry(callee) : NULL;
    if (body && body->first && !eddy_ptrmap_get(&p->steps, body->first))
      plan_block(p, body);
    return;
  }
  }
}

static void plan_block(cpu_plan_t *p, const eddy_block_t *b) {
  for (const eddy_op_t *op = b->first; op; op = op->next)
    if (!eddy_ir_op_has_trait(op, EDDY_TRAIT_TERMINATOR))
      plan_op(p, op);
}

/// The top-level op (in p->top) containing op.
static const eddy_op_t *top_ancestor(const cpu_plan_t *p, const eddy_op_t *op) {
  while (op && op->block != p->top)
    op = eddy_ir_op_parent_op(op);
  return op;
}

/// Values returned once, computed by a kernel of the function body or
/// stacked from a list (tl.stack, whose items the runtime copies in after
/// checking the stacked dims against the result's), with a static type:
/// written straight into their result tensor. (Not in the CUDA form, where
/// results are device buffers copied back.)
static void plan_direct_results(cpu_plan_t *p) {
  if (p->opts->form == EDDY_CPU_FORM_CUDA)
    return;
  const eddy_op_t *ret = eddy_ir_block_terminator(p->top);
  for (uint32_t i = 0; ret && i < ret->num_operands; i++) {
    eddy_value_t *v = eddy_ir_op_operand(ret, i);
    bool once = true;
    for (uint32_t j = 0; j < ret->num_operands; j++)
      if (j != i && eddy_ir_op_operand(ret, j) == v)
        once = false;
    cpu_step_t *s = v->def ? eddy_ptrmap_get(&p->steps, v->def) : NULL;
    if (once && s && v->def->block == p->top && !type_dynamic(v->type) &&
        (s->kind == CPU_STEP_KERNEL || s->kind == CPU_STEP_LIBRARY ||
         (s->kind == CPU_STEP_LIST && eddy_ir_op_is(v->def, "tl.stack"))))
      eddy_ptrmap_put(&p->direct, v, (void *)(intptr_t)(i + 1));
  }
}

/// Liveness of the values of the function body (cpu_plan_t.last_use).
static void plan_liveness(cpu_plan_t *p) {
  eddy_ptrmap_t index;
  eddy_ptrmap_init(&index);
  size_t n = 0;
  for (const eddy_op_t *op = p->top->first; op; op = op->next)
    n++;
  const eddy_op_t **ops = eddy_arena_alloc(p->arena, sizeof(*ops) * (n + 1));
  intptr_t *eff = eddy_arena_alloc(p->arena, sizeof(*eff) * (n + 1));
  size_t i = 0;
  for (const eddy_op_t *op = p->top->first; op; op = op->next, i++) {
    ops[i] = op;
    eddy_ptrmap_put(&index, op, (void *)(intptr_t)(i + 1));
  }
  // Where each op is effectively computed: a fused op at its kernel's.
  for (size_t k = n; k-- > 0;) {
    eff[k] = (intptr_t)k;
    if (eddy_ir_op_has_trait(ops[k], EDDY_TRAIT_TERMINATOR))
      eff[k] = INT32_MAX;
    else if (cpu_plan_fused(p, ops[k])) {
      const eddy_op_t *user = top_ancestor(p, ops[k]->results[0].uses->owner);
      intptr_t j = (intptr_t)eddy_ptrmap_get(&index, user) - 1;
      if (j > (intptr_t)k)
        eff[k] = eff[j];
    }
  }
  for (size_t k = 0; k < n; k++)
    for (uint32_t r = 0; r < ops[k]->num_results; r++) {
      const eddy_value_t *v = &ops[k]->results[r];
      intptr_t last = (intptr_t)k;
      for (const eddy_use_t *u = v->uses; u; u = u->next) {
        const eddy_op_t *a = top_ancestor(p, u->owner);
        intptr_t j = a ? (intptr_t)eddy_ptrmap_get(&index, a) - 1 : INT32_MAX;
        intptr_t at = j >= 0 ? eff[j] : INT32_MAX;
        if (at > last)
          last = at;
      }
      eddy_ptrmap_put(&p->last_use, v, (void *)(last + 1));
    }
  eddy_ptrmap_destroy(&index);
}

/// Part i of n of a loop divided by rows (row_split.part), or -1.
static int64_t task_part(const eddy_op_t *op, int64_t *n) {
  int64_t a[2];
  if (!op || eddy_dialects_opcode(op) != EDDY_OP_CTL_WHILE ||
      eddy_ir_attr_as_i64_array(eddy_ir_op_attr(op, "row_split.part"), a, 2) !=
          2 ||
      a[1] < 2 || a[1] > CPU_MAX_TASKS || a[0] < 0 || a[0] >= a[1])
    return -1;
  *n = a[1];
  return a[0];
}

/// The entry's row-split loops, next to one another, run as tasks (host
/// form: the kernels forms have no host threads to give them).
static void plan_tasks(cpu_plan_t *p) {
  if (p->opts->form != EDDY_CPU_FORM_HOST)
    return;
  for (const eddy_op_t *op = p->top->first; op; op = op->next) {
    int64_t n = 0;
    if (task_part(op, &n) != 0)
      continue;
    const eddy_op_t *last = op;
    int64_t i = 1, m = 0;
    for (; i < n && task_part(last->next, &m) == i && m == n; i++)
      last = last->next;
    if (i < n)
      continue; // (not all the parts are there: they run one by one)
    i = 0;
    for (const eddy_op_t *q = op;; q = q->next, i++) {
      cpu_step_t *s = eddy_ptrmap_get(&p->steps, q);
      s->task = (int32_t)i + 1;
      s->num_tasks = (int32_t)n;
      if (q == last)
        break;
    }
    op = last;
  }
}

static bool type_dynamic_deep(const eddy_type_t *t) {
  if (t->kind == EDDY_TYPE_LIST)
    return t->elem && type_dynamic_deep(t->elem);
  return cpu_type_is_dynamic(t);
}

/// A walk of a function's ops, its regions' and its inlined callees'
/// (ctl.call, to CPU_MAX_INLINE_DEPTH), until `hit` says yes for one.
/// Each callee is walked once, however often it is called (a function
/// calling itself twice would otherwise be walked 2^depth times).
typedef struct op_scan {
  const eddy_module_t *m;
  bool (*hit)(const eddy_op_t *op);
  int depth;
  bool found;
  eddy_ptrmap_t seen; ///< callees walked
} op_scan_t;

static eddy_walk_result_t scan_op(eddy_op_t *op, void *user) {
  op_scan_t *s = user;
  s->found = s->found || s->hit(op);
  if (!s->found && cpu_op_info(op)->cls == CPU_OP_CALL &&
      s->depth < CPU_MAX_INLINE_DEPTH) {
    const eddy_attr_t *c = eddy_ir_op_attr(op, "callee");
    eddy_op_t *callee =
        c ? eddy_ir_module_lookup_func(s->m, c->u.str.data) : NULL;
    if (callee && !eddy_ptrmap_has(&s->seen, callee)) {
      eddy_ptrmap_put(&s->seen, callee, callee);
      s->depth++;
      eddy_ir_walk_pre(callee, scan_op, s);
      s->depth--;
    }
  }
  return s->found ? EDDY_WALK_INTERRUPT : EDDY_WALK_ADVANCE;
}

static bool scan_func(const eddy_module_t *m, const eddy_op_t *func,
                      bool (*hit)(const eddy_op_t *op)) {
  op_scan_t s = {m, hit, 0, false, {0}};
  eddy_ptrmap_init(&s.seen);
  eddy_ir_walk_pre((eddy_op_t *)func, scan_op, &s);
  eddy_ptrmap_destroy(&s.seen);
  return s.found;
}

/// op has a result or a region argument with dynamic dims.
static bool has_dynamic(const eddy_op_t *op) {
  for (uint32_t i = 0; i < op->num_results; i++)
    if (type_dynamic_deep(op->results[i].type))
      return true;
  for (uint32_t r = 0; r < op->num_regions; r++)
    for (const eddy_block_t *b = op->regions[r].first; b; b = b->next)
      for (uint32_t i = 0; i < b->num_args; i++)
        if (type_dynamic_deep(b->args[i]->type))
          return true;
  return false;
}

static bool is_fallible(const eddy_op_t *op) {
  return cpu_op_info(op)->fallible;
}

static bool func_dynamic(const eddy_module_t *m, const eddy_op_t *func) {
  const eddy_type_t *ft = eddy_ir_func_type(func);
  for (uint32_t i = 0; i < ft->num_inputs; i++)
    if (type_dynamic_deep(ft->inputs[i]))
      return true;
  for (uint32_t i = 0; i < ft->num_outputs; i++)
    if (type_dynamic_deep(ft->outputs[i]))
      return true;
  return scan_func(m, func, has_dynamic);
}

// ---- Row-parallel kernels -------------------------------------------------
//
// A run of kernel steps next to one another in a block (fused ops and
// splat constants between them belong to their kernels) whose results all
// have the same number R of rows (dim 0), where each kernel computes row r
// of its results from row r of what it reads, or from values it reads
// whole (broadcast along the rows: lower rank, or a dim 0 of 1). CPU_ROW_
// PARTS tasks then each run every kernel of the run on their block of
// rows, with one hand-off for the run: the tasks write disjoint rows, and
// a task reads another kernel's result of the run only at its own rows,
// which it computed itself. What one task reads whole, no task may write:
// a kernel's result is never read whole by the run, and a kernel that
// writes a loop value's buffer in place (cpu_plan_loop_out) writes one the
// run does not read whole.

typedef struct row_run {
  const eddy_block_t *block;
  int64_t rows;  ///< R
  int64_t work;  ///< elements weighted by their ops' cost
  int32_t count; ///< kernels
  const eddy_op_t *first;
  eddy_ptrmap_t members; ///< op -> 1
  eddy_ptrmap_t whole;   ///< arguments of the block read whole -> 1
} row_run_t;

/// The cost of one element of op: a polynomial or a library call for the
/// functions, a division or a root for a few others, one for the rest
/// (what the plan's split decision needs, not a timing).
static int64_t elem_cost(const eddy_op_t *op) {
  switch (eddy_dialects_opcode(op)) {
  case EDDY_OP_CORE_EXP:
  case EDDY_OP_CORE_EXPM1:
  case EDDY_OP_CORE_LOG:
  case EDDY_OP_CORE_LOG1P:
  case EDDY_OP_CORE_TANH:
  case EDDY_OP_CORE_SIGMOID:
  case EDDY_OP_CORE_SIN:
  case EDDY_OP_CORE_COS:
  case EDDY_OP_CORE_TAN:
  case EDDY_OP_CORE_ASIN:
  case EDDY_OP_CORE_ACOS:
  case EDDY_OP_CORE_ATAN:
  case EDDY_OP_CORE_ATAN2:
  case EDDY_OP_CORE_SINH:
  case EDDY_OP_CORE_COSH:
  case EDDY_OP_CORE_ERF:
  case EDDY_OP_CORE_POW:
    return 16;
  case EDDY_OP_CORE_DIV:
  case EDDY_OP_CORE_SQRT:
  case EDDY_OP_CORE_RSQRT:
    return 4;
  default:
    return 1;
  }
}

static bool is_static_tensor(const eddy_type_t *t) {
  return eddy_ir_type_is_tensor(t) && !cpu_type_is_dynamic(t);
}

/// Whether value v, read by a kernel of the run whose index has `rank`
/// dims (dim 0 the rows while by_rows), keeps the run's rows apart; adds
/// the work of the fused ops computing it (elems: the kernel's elements).
static bool rows_read(const cpu_plan_t *p, row_run_t *r, const eddy_value_t *v,
                      int32_t rank, bool by_rows, int64_t elems) {
  const eddy_type_t *t = v->type;
  if (!eddy_ir_type_is_tensor(t))
    return true; // (a list or a token: the run holds no list op)
  if (!is_static_tensor(t))
    return false;
  bool rowwise =
      by_rows && t->rank == rank && t->rank > 0 && t->dims[0] == r->rows;
  const eddy_op_t *d = v->def;
  const cpu_step_t *s = d ? cpu_plan_step(p, d) : NULL;
  if (s && s->kind == CPU_STEP_FUSED) {
    r->work = sat_add(r->work, sat_mul(elem_cost(d), elems));
    for (uint32_t i = 0; i < d->num_operands; i++)
      if (!rows_read(p, r, eddy_ir_op_operand(d, i), t->rank, rowwise, elems))
        return false;
    return true;
  }
  if (rowwise)
    return true; // row r at row r: a kernel's result of the run too
  if (d && eddy_ptrmap_get(&r->members, d))
    return false; // another task's rows
  if (!d && v->block == r->block)
    eddy_ptrmap_put(&r->whole, v, (void *)1);
  return true;
}

/// Whether op's kernel computes its rows from the same rows of what it
/// reads (with the run's R rows, or setting R when the run is empty);
/// adds its work to the run.
static bool row_kernel(const cpu_plan_t *p, row_run_t *r, const eddy_op_t *op) {
  const cpu_step_t *s = cpu_plan_step(p, op);
  if (!s || s->kind != CPU_STEP_KERNEL || s->view || s->product ||
      s->runtime_library || s->task)
    return false;
  const eddy_type_t *t = op->results[0].type;
  if (!is_static_tensor(t) || t->rank < 1)
    return false;
  int64_t rows = r->count ? r->rows : t->dims[0];
  for (uint32_t i = 0; i < op->num_results; i++) {
    const eddy_type_t *ti = op->results[i].type;
    if (!is_static_tensor(ti) || ti->rank != t->rank || ti->dims[0] != rows)
      return false;
  }
  int64_t saved_rows = r->rows, saved_work = r->work;
  r->rows = rows;
  int64_t elems = eddy_ir_type_num_elements(t);
  bool ok;
  if (cpu_op_is_pointwise(op) && op->num_results == 1) {
    r->work = sat_add(r->work, sat_mul(elem_cost(op), elems));
    ok = true;
    for (uint32_t i = 0; ok && i < op->num_operands; i++)
      ok = rows_read(p, r, eddy_ir_op_operand(op, i), t->rank, true, elems);
  } else if (eddy_dialects_opcode(op) == EDDY_OP_CORE_SPLIT ||
             eddy_dialects_opcode(op) == EDDY_OP_CORE_CONCAT) {
    // Along a later axis: row r of each part is part of row r (split), row
    // r of each operand is part of row r (concat). Each loop nest runs
    // over an operand's elements (concat) or a part's (split).
    int64_t axis = eddy_ir_op_attr_int(op, "axis", 0);
    if (axis < 0)
      axis += t->rank;
    ok = axis >= 1 && axis < t->rank;
    for (uint32_t i = 0; ok && i < op->num_operands; i++) {
      const eddy_value_t *in = eddy_ir_op_operand(op, i);
      ok = is_static_tensor(in->type) && in->type->rank == t->rank &&
           in->type->dims[0] == rows;
      int64_t in_elems = ok ? eddy_ir_type_num_elements(in->type) : 0;
      r->work = sat_add(r->work, in_elems);
      ok = ok && rows_read(p, r, in, t->rank, true, in_elems);
    }
  } else {
    ok = false;
  }
  if (!ok) {
    // (The run ends before op: what it marked read whole is dropped with
    // the run, when it is closed.)
    r->rows = saved_rows;
    r->work = saved_work;
  }
  return ok;
}

/// Whether a kernel of the run writes in place a loop value's buffer that
/// the run reads whole.
static bool row_run_overwrites(const cpu_plan_t *p, const row_run_t *r) {
  int32_t i = 0;
  for (const eddy_op_t *op = r->first; i < r->count; op = op->next) {
    if (!eddy_ptrmap_get(&r->members, op))
      continue;
    i++;
    for (uint32_t k = 0; k < op->num_results; k++) {
      int32_t pos = cpu_plan_loop_out(p, &op->results[k]);
      if (pos >= 0 && (uint32_t)pos < r->block->num_args &&
          eddy_ptrmap_get(&r->whole, r->block->args[pos]))
        return true;
    }
  }
  return false;
}

/// Marks the run's kernels when it is worth dividing, and starts a new run.
static void row_run_close(cpu_plan_t *p, row_run_t *r) {
  bool worth = r->count > 0 && r->work >= CPU_ROW_WORK &&
               r->rows / CPU_ROW_PARTS >= CPU_ROW_MIN_ROWS &&
               !row_run_overwrites(p, r);
  int32_t i = 0;
  for (const eddy_op_t *op = r->first; worth && i < r->count; op = op->next) {
    if (!eddy_ptrmap_get(&r->members, op))
      continue;
    cpu_step_t *s = eddy_ptrmap_get(&p->steps, op);
    s->row_kernel = ++i;
    s->num_row_kernels = r->count;
  }
  eddy_ptrmap_destroy(&r->members);
  eddy_ptrmap_destroy(&r->whole);
  const eddy_block_t *b = r->block;
  memset(r, 0, sizeof *r);
  r->block = b;
  eddy_ptrmap_init(&r->members);
  eddy_ptrmap_init(&r->whole);
}

static void plan_row_block(cpu_plan_t *p, const eddy_block_t *b);

/// The runs of row-parallel kernels in b and in the regions of its ops
/// (not in a row-split loop's parts, which already run at once, nor in
/// callees, planned once for every call site).
static void plan_row_block(cpu_plan_t *p, const eddy_block_t *b) {
  row_run_t r = {.block = b};
  eddy_ptrmap_init(&r.members);
  eddy_ptrmap_init(&r.whole);
  for (const eddy_op_t *op = b->first; op; op = op->next) {
    if (eddy_ir_op_has_trait(op, EDDY_TRAIT_TERMINATOR))
      break;
    const cpu_step_t *s = cpu_plan_step(p, op);
    if (s && (s->kind == CPU_STEP_FUSED || s->kind == CPU_STEP_SPLAT))
      continue; // computed where its kernel runs, or inline
    if (row_kernel(p, &r, op)) {
      if (!r.count)
        r.first = op;
      r.count++;
      eddy_ptrmap_put(&r.members, op, (void *)1);
      continue;
    }
    row_run_close(p, &r);
    if (row_kernel(p, &r, op)) { // the first of a new run
      r.first = op;
      r.count = 1;
      eddy_ptrmap_put(&r.members, op, (void *)1);
      continue;
    }
    if (s && s->task)
      continue;
    for (uint32_t k = 0; k < op->num_regions; k++)
      for (const eddy_block_t *in = op->regions[k].first; in; in = in->next)
        plan_row_block(p, in);
  }
  row_run_close(p, &r);
  eddy_ptrmap_destroy(&r.members);
  eddy_ptrmap_destroy(&r.whole);
}

/// Row-parallel kernels (host form; kernels of static shapes, in a
/// function that may have dynamic ones).
static void plan_rows(cpu_plan_t *p) {
  if (p->opts->form != EDDY_CPU_FORM_HOST)
    return;
  plan_row_block(p, p->top);
}

eddy_status_t cpu_plan_build(cpu_plan_t *p, const eddy_module_t *m,
                             const eddy_op_t *func,
                             const eddy_cpu_opts_t *opts) {
  memset(p, 0, sizeof *p);
  p->module = m;
  p->func = func;
  p->top = eddy_ir_func_entry(func);
  p->opts = opts;
  eddy_ptrmap_init(&p->steps);
  eddy_ptrmap_init(&p->last_use);
  eddy_ptrmap_init(&p->direct);
  eddy_ptrmap_init(&p->loop_out);
  p->arena = eddy_arena_create();
  if (!p->arena)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  p->dynamic = func_dynamic(m, func);
  p->fallible = p->dynamic || scan_func(m, func, is_fallible);
  plan_block(p, p->top);
  plan_tasks(p);
  plan_rows(p);
  plan_direct_results(p);
  plan_liveness(p);
  return NULL;
}

void cpu_plan_destroy(cpu_plan_t *p) {
  eddy_ptrmap_destroy(&p->steps);
  eddy_ptrmap_destroy(&p->last_use);
  eddy_ptrmap_destroy(&p->direct);
  eddy_ptrmap_destroy(&p->loop_out);
  if (p->arena)
    eddy_arena_destroy(p->arena);
  memset(p, 0, sizeof *p);
}

const cpu_step_t *cpu_plan_step(const cpu_plan_t *p, const eddy_op_t *op) {
  return eddy_ptrmap_get(&p->steps, op);
}

bool cpu_plan_fused(const cpu_plan_t *p, const eddy_op_t *op) {
  const cpu_step_t *s = cpu_plan_step(p, op);
  return s && s->kind == CPU_STEP_FUSED;
}

intptr_t cpu_plan_last_use(const cpu_plan_t *p, const eddy_value_t *v) {
  return (intptr_t)eddy_ptrmap_get(&p->last_use, v) - 1;
}

int32_t cpu_plan_direct(const cpu_plan_t *p, const eddy_value_t *v) {
  return (int32_t)((intptr_t)eddy_ptrmap_get(&p->direct, v) - 1);
}

int32_t cpu_plan_loop_out(const cpu_plan_t *p, const eddy_value_t *v) {
  return (int32_t)((intptr_t)eddy_ptrmap_get(&p->loop_out, v) - 1);
}

bool cpu_plan_reads_init(const cpu_plan_t *p, const eddy_op_t *loop,
                         uint32_t k) {
  // (Tensors in host memory only: the CUDA form keeps its copies until a
  // device has run it without them.)
  if (p->opts->form == EDDY_CPU_FORM_CUDA)
    return false;
  const eddy_block_t *b =
      loop->num_regions > 1 ? eddy_ir_region_entry(&loop->regions[1]) : NULL;
  const eddy_op_t *y = b ? eddy_ir_block_terminator(b) : NULL;
  if (!y || k >= y->num_operands || k >= b->num_args ||
      k >= loop->num_operands || eddy_ir_op_operand(y, k) != b->args[k])
    return false;
  const eddy_value_t *init = eddy_ir_op_operand(loop, k);
  const eddy_type_t *t = loop->results[k].type;
  if (eddy_ir_value_has_uses(&loop->results[k]) || init->type != t ||
      t->kind == EDDY_TYPE_LIST || type_dynamic(t))
    return false;
  const cpu_step_t *s = init->def ? cpu_plan_step(p, init->def) : NULL;
  return !init->def || (s && !s->view && s->kind != CPU_STEP_FUSED &&
                        s->kind != CPU_STEP_SPLAT);
}

/// ---- printing ---------------------------------------------------------------

/// Value names as the IR printer gives them in one function: results %N in
/// print order, block arguments %argN.
typedef struct plan_names {
  eddy_ptrmap_t names; ///< op or block argument -> (n << 1 | is_arg) + 1
  uint64_t next_result, next_arg;
} plan_names_t;

static void number_region(plan_names_t *nm, const eddy_region_t *r) {
  for (const eddy_block_t *b = r->first; b; b = b->next) {
    for (uint32_t i = 0; i < b->num_args; i++)
      eddy_ptrmap_put(&nm->names, b->args[i],
                      (void *)(uintptr_t)(((nm->next_arg++) << 1 | 1) + 1));
    for (const eddy_op_t *op = b->first; op; op = op->next) {
      if (op->num_results)
        eddy_ptrmap_put(&nm->names, op,
                        (void *)(uintptr_t)(((nm->next_result++) << 1) + 1));
      for (uint32_t k = 0; k < op->num_regions; k++)
        number_region(nm, &op->regions[k]);
    }
  }
}

typedef struct plan_printer {
  const cpu_plan_t *p;
  eddy_buf_t *out;
  plan_names_t *nm;
  /// Top-level op -> (intptr_t) its step number + 1 (for "last read by").
  eddy_ptrmap_t top_steps;
  eddy_ptrmap_t callees_shown;
  int counts[CPU_STEP_UNSUPPORTED + 1];
} plan_printer_t;

static void put_value(plan_printer_t *pp, const eddy_value_t *v) {
  uintptr_t tag =
      (uintptr_t)eddy_ptrmap_get(&pp->nm->names, v->def ? (const void *)v->def
                                                        : (const void *)v);
  if (!tag) {
    eddy_buf_puts(pp->out, "%?");
    return;
  }
  tag--;
  eddy_buf_printf(pp->out, "%%%s%" PRIu64, (tag & 1) ? "arg" : "",
                  (uint64_t)(tag >> 1));
  if (v->def && v->def->num_results > 1)
    eddy_buf_printf(pp->out, "#%u", (unsigned)v->index);
}

static void put_results(plan_printer_t *pp, const eddy_op_t *op) {
  if (!op->num_results)
    return;
  if (op->num_results == 1)
    put_value(pp, &op->results[0]);
  else {
    uintptr_t tag = (uintptr_t)eddy_ptrmap_get(&pp->nm->names, op);
    eddy_buf_printf(pp->out, "%%%" PRIu64 ":%u",
                    tag ? (uint64_t)((tag - 1) >> 1) : 0,
                    (unsigned)op->num_results);
  }
  eddy_buf_puts(pp->out, " = ");
}

static const char *kind_name(const cpu_plan_t *p, cpu_step_kind_t k) {
  switch (k) {
  case CPU_STEP_FUSED:
    return "fused";
  case CPU_STEP_SPLAT:
    return "splat";
  case CPU_STEP_GLOBAL:
    return "global";
  case CPU_STEP_KERNEL:
    return p->opts->form == EDDY_CPU_FORM_HOST ? "kernel" : "device kernel";
  case CPU_STEP_LIBRARY:
    return p->opts->form == EDDY_CPU_FORM_CUDA ? "library (cuBLAS)"
                                               : "library (sgemm)";
  case CPU_STEP_LIST:
    return "list call";
  case CPU_STEP_LOOP:
    return "host loop";
  case CPU_STEP_BRANCH:
    return "host branch";
  case CPU_STEP_INLINE:
    return "inline call";
  case CPU_STEP_UNSUPPORTED:
    break;
  }
  return "unsupported";
}

/// The ops fused into root (producers first) and the values the kernel
/// reads from memory, each once.
static void collect_kernel(const cpu_plan_t *p, const eddy_op_t *op,
                           const eddy_op_t **fused, size_t *nf,
                           const eddy_value_t **reads, size_t *nr,
                           size_t cap) {
  for (uint32_t i = 0; i < op->num_operands; i++) {
    const eddy_value_t *v = eddy_ir_op_operand(op, i);
    const cpu_step_t *s = v->def ? cpu_plan_step(p, v->def) : NULL;
    if (s && s->kind == CPU_STEP_FUSED && s->into == op) {
      collect_kernel(p, v->def, fused, nf, reads, nr, cap);
      if (*nf < cap)
        fused[(*nf)++] = v->def;
      continue;
    }
    if (s && s->kind == CPU_STEP_SPLAT)
      continue; // an inline constant
    bool seen = false;
    for (size_t k = 0; k < *nr; k++)
      seen = seen || reads[k] == v;
    if (!seen && *nr < cap)
      reads[(*nr)++] = v;
  }
}

static void indent(plan_printer_t *pp, int depth) {
  for (int i = 0; i < depth; i++)
    eddy_buf_puts(pp->out, "  ");
}

static int print_block(plan_printer_t *pp, const eddy_block_t *b, int depth,
                       const char *label, const char *prefix, int first);

/// op has a line of its own (fused ops and splats are shown where used).
static bool step_shown(const cpu_plan_t *p, const eddy_op_t *op) {
  const cpu_step_t *s = cpu_plan_step(p, op);
  return s && s->kind != CPU_STEP_FUSED && s->kind != CPU_STEP_SPLAT;
}

static void print_storage(plan_printer_t *pp, const eddy_value_t *v) {
  const eddy_type_t *t = v->type;
  eddy_buf_puts(pp->out, " ");
  put_value(pp, v);
  eddy_buf_puts(pp->out, " (");
  int32_t direct = cpu_plan_direct(pp->p, v);
  int32_t loop_out = cpu_plan_loop_out(pp->p, v);
  const cpu_step_t *ds = v->def ? cpu_plan_step(pp->p, v->def) : NULL;
  bool init =
      v->def && eddy_dialects_opcode(v->def) == EDDY_OP_CTL_WHILE &&
      cpu_plan_reads_init(pp->p, v->def, (uint32_t)(v - v->def->results));
  if (ds && ds->kind == CPU_STEP_KERNEL && ds->view)
    eddy_buf_puts(pp->out, "a row of its operand, no buffer");
  else if (init)
    eddy_buf_puts(pp->out, "the initial value's buffer");
  else if (direct >= 0)
    eddy_buf_printf(pp->out, "result #%d", (int)direct);
  else if (loop_out >= 0)
    eddy_buf_printf(pp->out, "loop value #%d, in place", (int)loop_out);
  else if (t->kind == EDDY_TYPE_LIST)
    eddy_buf_puts(pp->out, "list");
  else if (type_dynamic(t))
    eddy_buf_puts(pp->out, "dynamic");
  else
    eddy_buf_printf(pp->out, "buffer, %" PRId64 " B",
                    eddy_ir_type_num_elements(t) *
                        (int64_t)eddy_dtype_size(t->dtype));
  intptr_t last = v->def && v->def->block == pp->p->top
                      ? cpu_plan_last_use(pp->p, v)
                      : -1;
  if (last >= INT32_MAX)
    eddy_buf_puts(pp->out, ", returned");
  else if (last >= 0) {
    const eddy_op_t *o = pp->p->top->first;
    for (intptr_t k = 0; o && k < last; k++)
      o = o->next;
    intptr_t st = o ? (intptr_t)eddy_ptrmap_get(&pp->top_steps, o) - 1 : -1;
    if (st >= 0 && o != v->def)
      eddy_buf_printf(pp->out, ", free after step %d", (int)st);
    else if (o == v->def)
      eddy_buf_puts(pp->out, ", unread");
  }
  eddy_buf_puts(pp->out, ")");
}

static void print_step(plan_printer_t *pp, const eddy_op_t *op, int depth,
                       const char *prefix, int number) {
  const cpu_plan_t *p = pp->p;
  const cpu_step_t *s = cpu_plan_step(p, op);
  if (!s)
    return;
  pp->counts[s->kind]++;
  if (s->kind == CPU_STEP_FUSED || s->kind == CPU_STEP_SPLAT)
    return; // shown with the kernel that computes it / inline where read
  indent(pp, depth);
  eddy_buf_printf(pp->out, "step %s%d: %s ", prefix, number,
                  kind_name(p, s->kind));
  put_results(pp, op);
  eddy_buf_puts(pp->out, op->name->str);
  if (s->kind == CPU_STEP_LIBRARY) {
    cpu_mm_shape_t d;
    cpu_mm_shape(s->product ? s->product : op, &d);
    int64_t m = d.rows_fold ? d.m * d.batch : d.m;
    int64_t calls = d.rows_fold ? 1 : d.batch;
    eddy_buf_printf(pp->out, " [%" PRId64 "x%" PRId64 "x%" PRId64 "%s]", m,
                    d.n, d.k, calls > 1 ? ", per matrix of the batch" : "");
  }
  if (s->kind == CPU_STEP_INLINE) {
    const eddy_attr_t *c = eddy_ir_op_attr(op, "callee");
    eddy_buf_printf(pp->out, " @%s", c ? c->u.str.data : "?");
  }
  if (s->runtime_library)
    eddy_buf_puts(pp->out, " [sgemm above the threshold, at run time]");
  if (s->borrow)
    eddy_buf_puts(pp->out, " [shares its operand's data]");
  if (s->view)
    eddy_buf_puts(pp->out, s->kind == CPU_STEP_LIST ? " [the item in place]"
                                                    : " [the row in place]");
  if (s->product)
    eddy_buf_puts(pp->out, " [the product added in place]");
  if (s->task)
    eddy_buf_printf(pp->out, " [task %d of %d, run at once]", s->task,
                    s->num_tasks);
  if (s->row_kernel)
    eddy_buf_printf(pp->out,
                    " [by rows: kernel %d of %d, %d blocks of rows at once]",
                    s->row_kernel, s->num_row_kernels, CPU_ROW_PARTS);
  // (An accumulation's cache is its product's.)
  int32_t cache =
      s->product ? cpu_plan_step(p, s->product)->gemm_cache : s->gemm_cache;
  if (cache) {
    // Named by the loop that resets it.
    const eddy_op_t *w = p->cache_loops[cache - 1];
    eddy_buf_printf(pp->out, " [B packed once per loop: cache %d, reset by ",
                    (int)cache - 1);
    put_results(pp, w);
    eddy_buf_printf(pp->out, "%s]", w->name->str);
  }
  const eddy_op_t *fused[64];
  const eddy_value_t *reads[64];
  size_t nf = 0, nr = 0;
  collect_kernel(p, op, fused, &nf, reads, &nr, 64);
  if (nf) {
    eddy_buf_puts(pp->out, "\n");
    indent(pp, depth + 2);
    eddy_buf_puts(pp->out, "fuses");
    for (size_t k = 0; k < nf; k++) {
      eddy_buf_puts(pp->out, k ? ", " : " ");
      put_value(pp, &fused[k]->results[0]);
      eddy_buf_printf(pp->out, " %s", fused[k]->name->str);
    }
  }
  if (nr) {
    eddy_buf_puts(pp->out, "\n");
    indent(pp, depth + 2);
    eddy_buf_puts(pp->out, "reads");
    for (size_t k = 0; k < nr; k++) {
      eddy_buf_puts(pp->out, k ? ", " : " ");
      put_value(pp, reads[k]);
    }
  }
  if (op->num_results && s->kind != CPU_STEP_INLINE) {
    eddy_buf_puts(pp->out, "\n");
    indent(pp, depth + 2);
    eddy_buf_puts(pp->out, "writes");
    for (uint32_t r = 0; r < op->num_results; r++) {
      if (r)
        eddy_buf_puts(pp->out, ",");
      print_storage(pp, &op->results[r]);
    }
  }
  eddy_buf_puts(pp->out, "\n");
  if (s->kind == CPU_STEP_LOOP || s->kind == CPU_STEP_BRANCH) {
    static const char *const loop[] = {"cond", "body"};
    static const char *const branch[] = {"then", "else"};
    char inner[64];
    snprintf(inner, sizeof inner, "%s%d.", prefix, number);
    int n = 0;
    for (uint32_t k = 0; k < op->num_regions && k < 2; k++)
      n = print_block(pp, eddy_ir_region_entry(&op->regions[k]), depth + 1,
                      s->kind == CPU_STEP_LOOP ? loop[k] : branch[k], inner,
                      n);
  }
}

/// Prints the steps of b numbered prefix<first>, prefix<first+1>...;
/// returns the next number.
static int print_block(plan_printer_t *pp, const eddy_block_t *b, int depth,
                       const char *label, const char *prefix, int first) {
  indent(pp, depth);
  eddy_buf_printf(pp->out, "%s:\n", label);
  int n = first;
  for (const eddy_op_t *op = b->first; op; op = op->next) {
    if (eddy_ir_op_has_trait(op, EDDY_TRAIT_TERMINATOR))
      break;
    print_step(pp, op, depth + 1, prefix, n);
    if (step_shown(pp->p, op))
      n++;
  }
  return n;
}

/// Prints the function body of func with its own value names.
static void print_function(plan_printer_t *pp, const eddy_op_t *func,
                           const char *what) {
  plan_names_t nm = {{0}, 0, 0};
  eddy_ptrmap_init(&nm.names);
  number_region(&nm, &func->regions[0]);
  plan_names_t *outer = pp->nm;
  pp->nm = &nm;
  const eddy_attr_t *name = eddy_ir_op_attr(func, "sym_name");
  char label[256];
  snprintf(label, sizeof label, "%s @%s", what,
           name ? name->u.str.data : "?");
  print_block(pp, eddy_ir_func_entry(func), 0, label, "", 0);
  pp->nm = outer;
  eddy_ptrmap_destroy(&nm.names);
}

/// Adds the callees of the ctl.calls under b to the list (once each).
static void find_callees(plan_printer_t *pp, const eddy_block_t *b,
                         const eddy_op_t **list, size_t *n, size_t cap) {
  for (const eddy_op_t *op = b->first; op; op = op->next) {
    for (uint32_t k = 0; k < op->num_regions; k++)
      find_callees(pp, eddy_ir_region_entry(&op->regions[k]), list, n, cap);
    const cpu_step_t *s = cpu_plan_step(pp->p, op);
    if (!s || s->kind != CPU_STEP_INLINE)
      continue;
    const eddy_attr_t *c = eddy_ir_op_attr(op, "callee");
    const eddy_op_t *f =
        c ? eddy_ir_module_lookup_func(pp->p->module, c->u.str.data) : NULL;
    if (!f || eddy_ptrmap_get(&pp->callees_shown, f) || *n >= cap)
      continue;
    eddy_ptrmap_put(&pp->callees_shown, f, (void *)1);
    list[(*n)++] = f;
    find_callees(pp, eddy_ir_func_entry(f), list, n, cap);
  }
}

void cpu_plan_print(const cpu_plan_t *p, eddy_buf_t *out) {
  static const char *const forms[] = {"host", "kernels", "cuda"};
  plan_printer_t pp;
  memset(&pp, 0, sizeof pp);
  pp.p = p;
  pp.out = out;
  eddy_ptrmap_init(&pp.top_steps);
  eddy_ptrmap_init(&pp.callees_shown);
  eddy_buf_printf(out, "// kernel plan, form %s\n",
                  forms[p->opts->form <= EDDY_CPU_FORM_CUDA ? p->opts->form
                                                            : 0]);
  int n = 0;
  for (const eddy_op_t *op = p->top->first; op; op = op->next)
    if (step_shown(p, op))
      eddy_ptrmap_put(&pp.top_steps, op, (void *)(intptr_t)(++n));
  print_function(&pp, p->func, "entry");
  const eddy_op_t *callees[256];
  size_t nc = 0;
  eddy_ptrmap_put(&pp.callees_shown, p->func, (void *)1);
  find_callees(&pp, p->top, callees, &nc, 256);
  for (size_t i = 0; i < nc; i++)
    print_function(&pp, callees[i], "inlined");
  eddy_buf_printf(out,
                  "// kernels: %d (fused into them: %d ops), library calls: "
                  "%d, list calls: %d, loops: %d, branches: %d, inline "
                  "calls: %d, constants: %d\n",
                  pp.counts[CPU_STEP_KERNEL], pp.counts[CPU_STEP_FUSED],
                  pp.counts[CPU_STEP_LIBRARY], pp.counts[CPU_STEP_LIST],
                  pp.counts[CPU_STEP_LOOP], pp.counts[CPU_STEP_BRANCH],
                  pp.counts[CPU_STEP_INLINE],
                  pp.counts[CPU_STEP_GLOBAL] + pp.counts[CPU_STEP_SPLAT]);
  eddy_ptrmap_destroy(&pp.top_steps);
  eddy_ptrmap_destroy(&pp.callees_shown);
}

/// The first op of the plan the backend cannot compile, or NULL.
static const eddy_op_t *first_unsupported(const cpu_plan_t *p,
                                          const eddy_block_t *b) {
  for (const eddy_op_t *op = b->first; op; op = op->next) {
    const cpu_step_t *s = cpu_plan_step(p, op);
    if (s && s->kind == CPU_STEP_UNSUPPORTED)
      return op;
    for (uint32_t k = 0; k < op->num_regions; k++) {
      const eddy_op_t *u =
          first_unsupported(p, eddy_ir_region_entry(&op->regions[k]));
      if (u)
        return u;
    }
  }
  return NULL;
}

eddy_status_t eddy_cpu_emit_plan(const eddy_module_t *m, const char *entry,
                                 const eddy_cpu_opts_t *opts, eddy_buf_t *out) {
  eddy_cpu_opts_t dflt = eddy_cpu_opts_default();
  if (!opts)
    opts = &dflt;
  eddy_op_t *func;
  EDDY_RETURN_IF_ERROR(cpu_find_entry(m, entry, &func));
  cpu_plan_t p;
  eddy_status_t st = cpu_plan_build(&p, m, func, opts);
  const eddy_op_t *bad = st ? NULL : first_unsupported(&p, p.top);
  if (bad) {
    const char *why = cpu_op_info(bad)->none;
    st = cpu_unsupported(bad, "is not supported by the CPU backend%s%s",
                         why ? ": " : " yet", why ? why : "");
  }
  if (!st)
    cpu_plan_print(&p, out);
  cpu_plan_destroy(&p);
  return st;
}

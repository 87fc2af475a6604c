/// to-dataflow: ctl.while / ctl.if -> the df primitives, exactly as the
/// "Implementation of Control Flow in TensorFlow" note compiles tf.while_loop
/// and tf.cond.
///
/// while (n loop values, frame F):
///   enter_i = df.enter(init_i) {frame_name = F}     one per loop value
///   cap     = df.enter(v) {is_constant = true}      one per value captured
///   merge_i = df.merge(enter_i, next_i)             back edge from next_i
///   pred    = <cond ops on merge_i>
///   lc      = df.loop_cond(pred)
///   sw_i    = df.switch(merge_i, lc)
///   <body ops on sw_i#1 (true)>
///   next_i  = df.next_iteration(yield_i)
///   exit_i  = df.exit(sw_i#0)                       the loop's results
/// if (pred p):
///   sw_v = df.switch(v, p) per captured value v; then uses #1, else #0
///   merge_j = df.merge(else_j, then_j)              one per result
///
/// Ops with no operands (constants) inside a region belong to no frame, so
/// each of their uses goes through df.after(c, pivot), TensorFlow's control
/// pivot: a token from merge_0 (loop cond), sw_0#1 (loop body) or the
/// predicate's own switch (if branches). That gives them a tag and makes
/// them dead on the untaken side. Likewise a loop body reads each captured
/// value through df.after(cap, pivot): an op whose operands are all loop
/// invariants (TensorFlow's "free" ops, which its while_loop ties to the
/// pivot by a control input) would otherwise run in the iteration where the
/// cond is false, and a body value computed from invariants alone would
/// reach the next iteration's merge although the loop has ended. Regions are lowered innermost first; an
/// outer lowering then treats the inner df ops like any other op.
#include "lower/lower.h"

#include "dialects/ctl/ctl.h"
#include "dialects/df/df.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct lower_state {
  eddy_ctx_t *ctx;
  eddy_ptrmap_t names; ///< interned ident of each frame name in use -> 1
  int next_frame;
} lower_state_t;

static eddy_status_t oom(void) {
  return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
}

/// The op that defines v, or owns the block whose argument v is.
static eddy_op_t *value_owner(const eddy_value_t *v) {
  return v->def ? v->def : eddy_ir_block_parent_op(v->block);
}

/// True when v is defined inside op (by a nested op or as a block argument
/// of one of its regions).
static bool defined_inside(const eddy_op_t *op, const eddy_value_t *v) {
  eddy_op_t *d = value_owner(v);
  if (!d)
    return false;
  if (d == op) // op's own result is outside; its regions' arguments inside
    return !v->def;
  return eddy_ir_op_is_ancestor(op, d);
}

static eddy_status_t build(eddy_builder_t *b, const char *name,
                           eddy_value_t *const *operands, size_t n,
                           const eddy_type_t *const *types, size_t nres,
                           eddy_op_t **out_op) {
  eddy_op_state_t st = {
      .name = name,
      .operands = operands,
      .num_operands = n,
      .result_types = types,
      .num_results = types ? nres : 0,
  };
  return eddy_ir_build(b, &st, out_op);
}

static eddy_status_t build1(eddy_builder_t *b, const char *name,
                            eddy_value_t *const *operands, size_t n,
                            eddy_value_t **out_value) {
  return eddy_ir_build_simple(b, name, operands, n, NULL, 0, out_value);
}

/// Picks a frame name not used in the function yet.
static const char *fresh_frame_name(lower_state_t *s) {
  char buf[64];
  for (;;) {
    snprintf(buf, sizeof buf, "while_%d/", s->next_frame++);
    const eddy_ident_t *id = eddy_ir_ident_cstr(s->ctx, buf);
    if (!eddy_ptrmap_has(&s->names, id)) {
      eddy_ptrmap_put(&s->names, id, (void *)1);
      return id->str;
    }
  }
}

static eddy_walk_result_t collect_frame_name(eddy_op_t *op, void *user) {
  lower_state_t *s = user;
  if (eddy_ir_op_is(op, "df.enter")) {
    const eddy_attr_t *a = eddy_ir_op_attr(op, "frame_name");
    if (a && a->kind == EDDY_ATTR_STRING)
      eddy_ptrmap_put(&s->names,
                      eddy_ir_ident_get(s->ctx, a->u.str.data, a->u.str.len),
                      (void *)1);
  }
  return EDDY_WALK_ADVANCE;
}

/// ---- Captures and pivots ----------------------------------------------------

/// How values from outside a region get in: one df.enter (loops) or one
/// df.switch (ifs) per captured value, cached in `map`.
typedef struct capture {
  eddy_op_t *region_op;  ///< the ctl op being lowered
  eddy_builder_t *b;     ///< inserts before region_op
  eddy_ptrmap_t *map;    ///< captured value -> the op made for it
  const char *frame;     ///< loops: the frame name
  int64_t parallel;      ///< loops
  bool implicit_parallel; ///< loops: no parallel_iterations on the ctl.while
  eddy_value_t *pivot;   ///< loops: the region's token (see capture_operands)
  eddy_ptrmap_t *tied;   ///< loops: captured enter -> df.after(it, pivot)
  /// loops: tie every captured value (the body), not only those that enter
  /// an inner loop (the cond, whose every iteration runs to its end)
  bool tie_all;
  eddy_value_t *pred;    ///< ifs: the predicate
  unsigned branch;       ///< ifs: switch result to use (1 then, 0 else)
  eddy_status_t st;
} capture_t;

static eddy_value_t *capture_value(capture_t *c, eddy_value_t *v) {
  eddy_op_t *made = eddy_ptrmap_get(c->map, v);
  if (!made) {
    if (c->frame) {
      eddy_df_enter_attrs_t ea = {c->frame, true, c->parallel};
      eddy_value_t *r = NULL;
      c->st = eddy_df_build_enter(c->b, v, &ea, &r);
      if (c->st)
        return NULL;
      made = r->def;
      if (c->implicit_parallel)
        eddy_ir_op_remove_attr(made, "parallel_iterations");
    } else {
      eddy_value_t *ops[2] = {v, c->pred};
      c->st = build(c->b, "df.switch", ops, 2, NULL, 0, &made);
      if (c->st)
        return NULL;
    }
    eddy_ptrmap_put(c->map, v, made);
  }
  return eddy_ir_op_result(made, c->frame ? 0 : c->branch);
}

static eddy_walk_result_t capture_operands(eddy_op_t *op, void *user) {
  capture_t *c = user;
  for (uint32_t i = 0; i < op->num_operands; i++) {
    eddy_value_t *v = op->operands[i].value;
    if (defined_inside(c->region_op, v))
      continue;
    eddy_value_t *r = capture_value(c, v);
    if (!r)
      return EDDY_WALK_INTERRUPT;
    // The constant enter is live in every iteration, the last (dead) one
    // too, where an op reading only invariants would run although the loop
    // has ended (an inner loop entered from above would run with that value
    // live and the others dead, and never finish). Tied to this region's
    // token, the value dies with it.
    bool inner_enter = eddy_ir_op_is(op, "df.enter") &&
                       !eddy_ir_op_attr_bool(op, "is_constant", false);
    if (c->frame && c->pivot && (c->tie_all || inner_enter)) {
      eddy_value_t *tied = eddy_ptrmap_get(c->tied, r);
      if (!tied) {
        eddy_value_t *ai[2] = {r, c->pivot};
        c->st = build1(c->b, "df.after", ai, 2, &tied);
        if (c->st)
          return EDDY_WALK_INTERRUPT;
        eddy_ptrmap_put(c->tied, r, tied);
      }
      r = tied;
    }
    eddy_ir_op_set_operand(op, i, r);
  }
  return EDDY_WALK_ADVANCE;
}

/// Routes every use of c's results (except as df.after's data operand,
/// which is already tied to a frame) through df.after(result, token).
/// The builder must point right after c.
static eddy_status_t pivot_uses(eddy_builder_t *b, eddy_op_t *c,
                                eddy_value_t *token) {
  for (uint32_t r = 0; r < c->num_results; r++) {
    eddy_value_t *v = eddy_ir_op_result(c, r);
    size_t n = eddy_ir_value_num_uses(v);
    if (n == 0)
      continue;
    eddy_use_t **uses = malloc(n * sizeof(*uses));
    if (!uses)
      return oom();
    size_t k = 0;
    for (eddy_use_t *u = v->uses; u; u = u->next) {
      if (eddy_ir_op_is(u->owner, "df.after") && u->index == 0)
        continue;
      uses[k++] = u;
    }
    if (k > 0) {
      eddy_value_t *ops[2] = {v, token}, *after = NULL;
      eddy_status_t st = build1(b, "df.after", ops, 2, &after);
      if (st) {
        free(uses);
        return st;
      }
      for (size_t i = 0; i < k; i++)
        eddy_ir_op_set_operand(uses[i]->owner, uses[i]->index, after);
    }
    free(uses);
  }
  return NULL;
}

/// Moves the ops of block blk (all but its terminator) before `before`,
/// pivoting the uses of ops with no operands on `token`. Captured operands
/// must have been rewired already.
static eddy_status_t move_region_ops(eddy_block_t *blk, eddy_op_t *before,
                                     eddy_value_t *token) {
  eddy_op_t *term = eddy_ir_block_terminator(blk);
  eddy_op_t *op = blk->first;
  while (op && op != term) {
    eddy_op_t *next = op->next;
    eddy_ir_op_move_before(op, before);
    if (op->num_operands == 0 && op->num_regions == 0 && op->num_results > 0) {
      eddy_builder_t pb;
      eddy_ir_builder_init(&pb, op->ctx);
      eddy_ir_builder_set_before(&pb, before);
      pb.loc = op->loc;
      EDDY_RETURN_IF_ERROR(pivot_uses(&pb, op, token));
    }
    op = next;
  }
  return NULL;
}

/// Rewires captured operands of every op in blk (terminator included).
static eddy_status_t capture_block(capture_t *c, eddy_block_t *blk) {
  for (eddy_op_t *op = blk->first; op; op = op->next) {
    eddy_ir_walk_pre(op, capture_operands, c);
    if (c->st)
      return c->st;
  }
  return NULL;
}

/// ---- while ----------------------------------------------------------------------

/// A constant i64 scalar built at b.
static eddy_status_t const_i64(eddy_builder_t *b, int64_t v,
                               eddy_value_t **out_value) {
  const eddy_type_t *t = eddy_ir_scalar_type_get(b->ctx, EDDY_DT_I64);
  return eddy_ir_build_constant(
      b, eddy_ir_dense_attr_from_i64(b->ctx, t, &v, 1), out_value);
}

static eddy_status_t lower_while(lower_state_t *s, eddy_op_t *w) {
  size_t n = w->num_operands;
  eddy_block_t *cond = eddy_ctl_while_cond(w), *body = eddy_ctl_while_body(w);
  if (!cond || !body || cond->num_args != n || body->num_args != n)
    return eddy_ir_op_error(w, "malformed loop (verify it first)");
  const char *frame = fresh_frame_name(s);
  int64_t parallel = eddy_ir_op_attr_int(w, "parallel_iterations", 10);
  // Enters carry the attribute only when the loop does, so that
  // functionalize can give back exactly the loop's attributes.
  bool implicit = !eddy_ir_op_attr(w, "parallel_iterations");
  if (parallel <= 0)
    parallel = 10;
  const eddy_attr_t *max_attr = eddy_ir_op_attr(w, "maximum_iterations");
  bool counted = max_attr && max_attr->kind == EDDY_ATTR_INT;
  eddy_builder_t b;
  eddy_ir_builder_init(&b, s->ctx);
  eddy_ir_builder_set_before(&b, w);
  b.loc = w->loc;

  // One extra loop value counts iterations for maximum_iterations. A loop
  // with no loop values and no count gets a token as its loop value
  // instead: the frame, merge, switch and pivots need a value to carry.
  bool token_loop = n == 0 && !counted;
  size_t nv = n + (counted || token_loop ? 1 : 0);
  eddy_value_t **merge_out = calloc(nv, sizeof(*merge_out));
  eddy_op_t **merges = calloc(nv, sizeof(*merges));
  eddy_value_t **sw_true = calloc(nv, sizeof(*sw_true));
  eddy_value_t **sw_false = calloc(nv, sizeof(*sw_false));
  eddy_ptrmap_t caps, tied_cond, tied_body;
  eddy_ptrmap_init(&caps);
  eddy_ptrmap_init(&tied_cond);
  eddy_ptrmap_init(&tied_body);
  eddy_status_t st = NULL;
  if (!merge_out || !merges || !sw_true || !sw_false) {
    st = oom();
    goto done;
  }
  eddy_df_enter_attrs_t ea = {frame, false, parallel};
  for (size_t i = 0; i < nv && !st; i++) {
    eddy_value_t *init = NULL, *enter = NULL;
    if (i < n)
      init = eddy_ir_op_operand(w, i);
    else if (token_loop)
      st = build1(&b, "df.control", NULL, 0, &init);
    else
      st = const_i64(&b, 0, &init);
    if (!st)
      st = eddy_df_build_enter(&b, init, &ea, &enter);
    if (st)
      break;
    if (implicit)
      eddy_ir_op_remove_attr(enter->def, "parallel_iterations");
    const eddy_attr_t *swap = eddy_ir_op_attr(w, "swap_memory");
    if (swap && i < n)
      eddy_ir_op_set_attr(enter->def, "swap_memory", swap);
    // Merge types are the loop's declared types, not the init's.
    const eddy_type_t *types[2] = {
        i < n ? w->results[i].type : enter->type,
        eddy_ir_scalar_type_get(s->ctx, EDDY_DT_I32)};
    eddy_value_t *ins[2] = {enter, enter};
    st = build(&b, "df.merge", ins, 2, types, 2, &merges[i]);
    if (!st)
      merge_out[i] = eddy_ir_op_result(merges[i], 0);
  }
  if (st)
    goto done;

  // cond
  eddy_value_t *ctl_ins[1] = {merge_out[0]}, *cond_tok = NULL;
  if ((st = build1(&b, "df.control", ctl_ins, 1, &cond_tok)))
    goto done;
  // Captures first: the values built above are outside w too.
  capture_t cap = {.region_op = w, .b = &b, .map = &caps, .frame = frame,
                   .parallel = parallel, .implicit_parallel = implicit,
                   .tied = &tied_cond};
  cap.pivot = cond_tok;
  if ((st = capture_block(&cap, cond)))
    goto done;
  for (size_t i = 0; i < n; i++)
    eddy_ir_value_replace_all_uses(cond->args[i], merge_out[i]);
  if ((st = move_region_ops(cond, w, cond_tok)))
    goto done;
  eddy_op_t *cterm = eddy_ir_block_terminator(cond);
  if (!cterm || !eddy_ir_op_is(cterm, "ctl.condition") ||
      cterm->num_operands != 1) {
    st = eddy_ir_op_error(w, "cond region does not end in ctl.condition");
    goto done;
  }
  eddy_value_t *pred = eddy_ir_op_operand(cterm, 0);
  if (counted) {
    eddy_value_t *limit = NULL, *lim_after = NULL, *below = NULL;
    if ((st = const_i64(&b, max_attr->u.i, &limit)))
      goto done;
    eddy_value_t *ai[2] = {limit, cond_tok};
    if ((st = build1(&b, "df.after", ai, 2, &lim_after)))
      goto done;
    eddy_value_t *li[2] = {merge_out[n], lim_after};
    if ((st = build1(&b, "core.lt", li, 2, &below)))
      goto done;
    eddy_value_t *andi[2] = {below, pred};
    if ((st = build1(&b, "core.and", andi, 2, &pred)))
      goto done;
  }
  eddy_value_t *lc = NULL;
  if ((st = build1(&b, "df.loop_cond", &pred, 1, &lc)))
    goto done;
  for (size_t i = 0; i < nv; i++) {
    eddy_op_t *sw = NULL;
    eddy_value_t *si[2] = {merge_out[i], lc};
    if ((st = build(&b, "df.switch", si, 2, NULL, 0, &sw)))
      goto done;
    sw_false[i] = eddy_ir_op_result(sw, 0);
    sw_true[i] = eddy_ir_op_result(sw, 1);
  }

  // body
  eddy_value_t *body_tok = NULL;
  if ((st = build1(&b, "df.control", &sw_true[0], 1, &body_tok)))
    goto done;
  cap.pivot = body_tok;
  cap.tied = &tied_body;
  cap.tie_all = true;
  if ((st = capture_block(&cap, body)))
    goto done;
  for (size_t i = 0; i < n; i++)
    eddy_ir_value_replace_all_uses(body->args[i], sw_true[i]);
  if ((st = move_region_ops(body, w, body_tok)))
    goto done;
  eddy_op_t *yield = eddy_ir_block_terminator(body);
  if (!yield || !eddy_ir_op_is(yield, "ctl.yield") ||
      yield->num_operands != n) {
    st = eddy_ir_op_error(w, "body region does not end in a ctl.yield of "
                             "%zu values",
                          n);
    goto done;
  }
  for (size_t i = 0; i < nv; i++) {
    eddy_value_t *next_in = NULL, *next = NULL;
    if (i < n) {
      next_in = eddy_ir_op_operand(yield, i);
    } else if (token_loop) {
      next_in = body_tok; // the next iteration's token
    } else {
      eddy_value_t *one = NULL, *one_after = NULL;
      if ((st = const_i64(&b, 1, &one)))
        goto done;
      eddy_value_t *ai[2] = {one, body_tok};
      if ((st = build1(&b, "df.after", ai, 2, &one_after)))
        goto done;
      eddy_value_t *addi[2] = {sw_true[i], one_after};
      if ((st = build1(&b, "core.add", addi, 2, &next_in)))
        goto done;
    }
    if ((st = build1(&b, "df.next_iteration", &next_in, 1, &next)))
      goto done;
    eddy_ir_op_set_operand(merges[i], 1, next);
  }
  for (size_t i = 0; i < n; i++) {
    eddy_value_t *ex = NULL;
    if ((st = build1(&b, "df.exit", &sw_false[i], 1, &ex)))
      goto done;
    eddy_ir_value_replace_all_uses(eddy_ir_op_result(w, i), ex);
  }
  eddy_ir_op_erase(w);
done:
  eddy_ptrmap_destroy(&caps);
  eddy_ptrmap_destroy(&tied_cond);
  eddy_ptrmap_destroy(&tied_body);
  free(merge_out);
  free(merges);
  free(sw_true);
  free(sw_false);
  return st;
}

/// ---- if -------------------------------------------------------------------------

static eddy_status_t lower_if(lower_state_t *s, eddy_op_t *op) {
  eddy_block_t *then_b = eddy_ctl_if_then(op), *else_b = eddy_ctl_if_else(op);
  if (!then_b || !else_b || op->num_operands != 1)
    return eddy_ir_op_error(op, "malformed ctl.if (verify it first)");
  eddy_value_t *pred = eddy_ir_op_operand(op, 0);
  eddy_builder_t b;
  eddy_ir_builder_init(&b, s->ctx);
  eddy_ir_builder_set_before(&b, op);
  b.loc = op->loc;
  eddy_op_t *psw = NULL;
  eddy_value_t *pi[2] = {pred, pred}, *tok_t = NULL, *tok_f = NULL;
  EDDY_RETURN_IF_ERROR(build(&b, "df.switch", pi, 2, NULL, 0, &psw));
  eddy_value_t *pt = eddy_ir_op_result(psw, 1), *pf = eddy_ir_op_result(psw, 0);
  EDDY_RETURN_IF_ERROR(build1(&b, "df.control", &pt, 1, &tok_t));
  EDDY_RETURN_IF_ERROR(build1(&b, "df.control", &pf, 1, &tok_f));

  eddy_ptrmap_t caps;
  eddy_ptrmap_init(&caps);
  capture_t cap = {.region_op = op, .b = &b, .map = &caps, .pred = pred,
                   .branch = 1};
  eddy_status_t st = capture_block(&cap, then_b);
  if (!st)
    st = move_region_ops(then_b, op, tok_t);
  if (!st) {
    cap.branch = 0;
    st = capture_block(&cap, else_b);
  }
  if (!st)
    st = move_region_ops(else_b, op, tok_f);
  eddy_ptrmap_destroy(&caps);
  EDDY_RETURN_IF_ERROR(st);
  eddy_op_t *ty = eddy_ir_block_terminator(then_b);
  eddy_op_t *ey = eddy_ir_block_terminator(else_b);
  if (!ty || !ey || ty->num_operands != op->num_results ||
      ey->num_operands != op->num_results)
    return eddy_ir_op_error(op, "branches must end in ctl.yield of %u values",
                            op->num_results);
  for (uint32_t j = 0; j < op->num_results; j++) {
    const eddy_type_t *types[2] = {
        op->results[j].type, eddy_ir_scalar_type_get(s->ctx, EDDY_DT_I32)};
    eddy_value_t *ins[2] = {eddy_ir_op_operand(ey, j),
                            eddy_ir_op_operand(ty, j)};
    eddy_op_t *m = NULL;
    EDDY_RETURN_IF_ERROR(build(&b, "df.merge", ins, 2, types, 2, &m));
    eddy_ir_value_replace_all_uses(eddy_ir_op_result(op, j),
                                   eddy_ir_op_result(m, 0));
  }
  eddy_ir_op_erase(op);
  return NULL;
}

/// ---- Driver ---------------------------------------------------------------------

static eddy_status_t lower_block(lower_state_t *s, eddy_block_t *blk) {
  eddy_op_t *op = blk->first;
  while (op) {
    eddy_op_t *next = op->next;
    bool is_while = eddy_ir_op_is(op, "ctl.while");
    bool is_if = eddy_ir_op_is(op, "ctl.if");
    if (is_while || is_if) {
      for (uint32_t r = 0; r < op->num_regions; r++)
        for (eddy_block_t *ib = op->regions[r].first; ib; ib = ib->next)
          EDDY_RETURN_IF_ERROR(lower_block(s, ib));
      EDDY_RETURN_IF_ERROR(is_while ? lower_while(s, op) : lower_if(s, op));
    }
    op = next;
  }
  return NULL;
}

eddy_status_t eddy_lower_to_dataflow_func(eddy_op_t *func) {
  eddy_block_t *entry = eddy_ir_func_entry(func);
  if (!entry)
    return NULL;
  lower_state_t s = {.ctx = func->ctx};
  eddy_ptrmap_init(&s.names);
  eddy_ir_walk_pre(func, collect_frame_name, &s);
  eddy_status_t st = lower_block(&s, entry);
  eddy_ptrmap_destroy(&s.names);
  return st;
}

static eddy_status_t run_to_dataflow(eddy_pass_ctx_t *pc, eddy_module_t *m) {
  eddy_block_t *body = eddy_ir_module_body(m);
  for (eddy_op_t *op = body ? body->first : NULL; op; op = op->next) {
    if (!eddy_ir_op_is(op, "func.func"))
      continue;
    EDDY_RETURN_IF_ERROR(eddy_lower_to_dataflow_func(op));
    eddy_ir_pass_mark_changed(pc);
  }
  return NULL;
}

const eddy_pass_t eddy_lower_pass_to_dataflow = {
    .name = "to-dataflow",
    .summary = "lower ctl.while / ctl.if to the df dataflow primitives",
    .run = run_to_dataflow,
};

void eddy_lower_passes_register(eddy_ctx_t *ctx) {
  eddy_ir_pass_register(ctx, &eddy_lower_pass_to_dataflow);
}

/// functionalize, first step: v1 TensorArray gradients get SSA flows.
///
/// legalize-tf threads a TensorArray's list through its flow value (the
/// flow *is* the list). tf.gradients of v1 loops breaks that reading in
/// three ways, which this step rewrites at the tf level, before frames are
/// raised:
///
/// 1. The flow of a gradient array. `ta.grad()` returns the array with the
///    *forward* flow, `gradient_flow = Identity(flow)` after a control edge
///    on the TensorArrayGradV3: that df.after(flow, token(grad)) becomes the
///    grad op's own flow output (the new list).
/// 2. Look-ups. TensorArrayGradV3 of an array and `source` that already has
///    its gradient array returns that one. When the flow input already
///    carries the gradient array (traced back through Identity, df.after,
///    Enter, Merge, Switch, Exit, writes and sums of flows), the op is a
///    look-up: both its outputs become its flow input. The gradients of
///    several reads make one list each from the forward flow and are joined
///    by AddN, which legalize-tf adds element by element: TensorFlow's one
///    array, whose writes to an index add up.
/// 3. Creations inside a loop. The gradient of a TensorArrayReadV3 in a
///    loop makes the gradient array in every iteration of the backward
///    loop, writes one element, and sums the write's flow into a float
///    accumulator (`b_acc`: Merge(Enter(Const 0), NextIteration(AddV2(
///    Switch, flow))). The array is made once before the loop instead, as
///    the accumulator's initial value; inside, the op is a look-up of the
///    accumulator's current value (legalize-tf's AddV2 of lists keeps the
///    newer list).
///
/// Stacks that only order things: tf.gradients saves the forward write's
/// flow on a stack (`flow_out`) and pops it only for a control edge. Such a
/// stack (every pop read by control tokens alone, through Identity) is
/// removed: its value is never read and a flow pushed on it would need a
/// list of lists.
#include "lower/tf/tf_lower_internal.h"

#include <string.h>

/// Operand i of op, NULL when op has fewer (the tf dialect does not check
/// the arity of every op).
static eddy_value_t *arg(const eddy_op_t *op, uint32_t i) {
  return op && i < op->num_operands ? eddy_ir_op_operand(op, i) : NULL;
}

/// Result i of op, NULL when op has fewer.
static eddy_value_t *res(eddy_op_t *op, uint32_t i) {
  return op && i < op->num_results ? &op->results[i] : NULL;
}

/// A TensorArray: the TensorArrayV3 op and, for a gradient array, the
/// `source` attribute of the TensorArrayGradV3 that made it (NULL for the
/// forward array).
typedef struct ta_key {
  eddy_op_t *ta;
  const eddy_attr_t *source;
} ta_key_t;

static bool key_eq(ta_key_t a, ta_key_t b) {
  return a.ta && a.ta == b.ta && a.source == b.source;
}

/// Skips Identity, df.after and (when through_enter) Enter.
static eddy_value_t *skip_fwd(eddy_value_t *v, bool through_enter,
                              eddy_op_t **enter) {
  for (int i = 0; i < 256 && v->def && arg(v->def, 0); i++) {
    eddy_op_t *d = v->def;
    if (tfl_is(d, "tf.Identity") || tfl_is(d, "df.after")) {
      v = arg(d, 0);
    } else if (through_enter && tfl_is(d, "tf.Enter")) {
      if (enter && !*enter)
        *enter = d;
      v = arg(d, 0);
    } else {
      break;
    }
  }
  return v;
}

static const eddy_attr_t *grad_source(const eddy_op_t *g) {
  const eddy_attr_t *s = eddy_ir_op_attr(g, "source");
  return s;
}

/// The array a handle names.
static ta_key_t handle_key(eddy_value_t *h) {
  ta_key_t k = {0};
  for (int depth = 0; depth < 8; depth++) {
    h = skip_fwd(h, true, NULL);
    eddy_op_t *d = h->def;
    if (tfl_is(d, "tf.TensorArrayV3")) {
      k.ta = d;
      return k;
    }
    if (!tfl_is(d, "tf.TensorArrayGradV3") || !arg(d, 0))
      return (ta_key_t){0};
    if (!k.source)
      k.source = grad_source(d);
    h = arg(d, 0);
  }
  return (ta_key_t){0};
}

/// The array whose state a flow value carries; {0} when unknown. *steps
/// bounds the ops looked at, over all the operands of sums tried.
static ta_key_t flow_key_in(eddy_value_t *f, int depth, int *steps) {
  ta_key_t none = {0};
  for (; f && f->def && *steps > 0; --*steps) {
    eddy_op_t *d = f->def;
    if (tfl_is(d, "tf.Identity") || tfl_is(d, "df.after") ||
        tfl_is(d, "tf.Enter") || tfl_is(d, "tf.Exit") ||
        tfl_is(d, "tf.Switch") || tfl_is(d, "tf.Merge")) {
      f = arg(d, 0);
      continue;
    }
    if (tfl_is(d, "tf.TensorArrayV3"))
      return (ta_key_t){d, NULL};
    if (tfl_is(d, "tf.TensorArrayGradV3") && f == res(d, 1) && arg(d, 0)) {
      ta_key_t k = handle_key(arg(d, 0));
      if (k.ta && !k.source)
        k.source = grad_source(d);
      return k;
    }
    if ((tfl_is(d, "tf.TensorArrayWriteV3") ||
         tfl_is(d, "tf.TensorArrayScatterV3") ||
         tfl_is(d, "tf.TensorArraySplitV3")) &&
        arg(d, 0))
      return handle_key(arg(d, 0));
    // A sum of flows: an accumulator (AddV2), or the gradients of several
    // readers of one flow aggregated by tf.gradients (AddN). Any operand,
    // newest first, a few levels deep (each level tries them all).
    if ((tfl_is(d, "tf.AddV2") || tfl_is(d, "tf.Add") ||
         tfl_is(d, "tf.AddN")) &&
        d->num_operands >= 2 && depth < 8) {
      for (uint32_t k = d->num_operands; k-- > 0;) {
        eddy_value_t *o = arg(d, k);
        ta_key_t r = o->type->kind == EDDY_TYPE_TOKEN
                         ? none
                         : flow_key_in(o, depth + 1, steps);
        if (r.ta)
          return r;
      }
    }
    return none;
  }
  return none;
}

static ta_key_t flow_key(eddy_value_t *f) {
  int steps = 4096;
  return flow_key_in(f, 0, &steps);
}

/// Rule 1: df.after(flow_in, ..., token of g, ...) is g's flow output.
static void gradient_flow(eddy_op_t *g) {
  eddy_value_t *flow_in = eddy_ir_op_operand(g, 1);
  for (uint32_t r = 0; r < 2; r++)
    for (eddy_use_t *u = g->results[r].uses; u; u = u->next) {
      eddy_op_t *tok = u->owner;
      if (!tfl_is(tok, "df.control"))
        continue;
      for (eddy_use_t *w = tok->results[0].uses; w; w = w->next) {
        eddy_op_t *a = w->owner;
        if (tfl_is(a, "df.after") && w->index > 0 &&
            eddy_ir_op_operand(a, 0) == flow_in &&
            a->results[0].type == g->results[1].type)
          eddy_ir_value_replace_all_uses(&a->results[0], &g->results[1]);
      }
    }
}

/// Replaces g by `state`: both outputs become it (the handle: g's own
/// handle input, which legalize-tf never reads).
static void make_lookup(eddy_op_t *g, eddy_value_t *state) {
  eddy_ir_value_replace_all_uses(&g->results[0], eddy_ir_op_operand(g, 0));
  eddy_ir_value_replace_all_uses(&g->results[1], state);
  eddy_ir_op_erase(g);
}

/// The one TensorArrayWriteV3 on g's handle (control tokens aside), whose
/// flow is g's; NULL when g is used any other way.
static eddy_op_t *sole_write(eddy_op_t *g) {
  eddy_op_t *w = NULL;
  for (eddy_use_t *u = g->results[0].uses; u; u = u->next) {
    eddy_op_t *o = u->owner;
    if (tfl_is(o, "df.control"))
      continue;
    if (w || !tfl_is(o, "tf.TensorArrayWriteV3") || u->index != 0 ||
        o->num_operands != 4 || !res(o, 0))
      return NULL;
    w = o;
  }
  return w && skip_fwd(arg(w, 3), false, NULL) == res(g, 1) ? w : NULL;
}

/// True when op a comes before op b in their block.
static bool comes_before(const eddy_op_t *a, const eddy_op_t *b) {
  for (const eddy_op_t *o = a->next; o; o = o->next)
    if (o == b)
      return true;
  return false;
}

enum { MAX_READERS = 16 };

/// True when operand i of a and of b is one value (Identity and df.after
/// aside).
static bool same_source(const eddy_op_t *a, const eddy_op_t *b, uint32_t i) {
  return skip_fwd(arg(a, i), false, NULL) == skip_fwd(arg(b, i), false, NULL);
}

/// The creations of g's gradient array in one iteration whose writes are
/// summed: g alone, or, with several reads of the array in the loop, one
/// per read, their writes' flows the operands of an AddN (then *addn).
/// Each has one write; all take g's handle and flow. Returns how many, in
/// gs[] and ws[] in block order of the writes; 0 when the form differs.
static size_t summed_creations(eddy_op_t *g, eddy_op_t **gs, eddy_op_t **ws,
                               eddy_op_t **addn) {
  *addn = NULL;
  eddy_op_t *w = sole_write(g);
  if (!w)
    return 0;
  eddy_use_t *u = w->results[0].uses;
  if (!u || u->next || !tfl_is(u->owner, "tf.AddN")) {
    gs[0] = g;
    ws[0] = w;
    return 1;
  }
  eddy_op_t *sum = u->owner;
  if (sum->num_operands > MAX_READERS || !res(sum, 0))
    return 0;
  size_t n = 0;
  for (uint32_t k = 0; k < sum->num_operands; k++) {
    eddy_op_t *wk = arg(sum, k)->def, *gk = wk ? arg(wk, 0)->def : NULL;
    if (!tfl_is(wk, "tf.TensorArrayWriteV3") || arg(sum, k) != res(wk, 0) ||
        !tfl_is(gk, "tf.TensorArrayGradV3") || gk->num_operands != 2 ||
        !same_source(gk, g, 0) || !same_source(gk, g, 1) ||
        grad_source(gk) != grad_source(g) || sole_write(gk) != wk)
      return 0;
    size_t i = n++; // insertion by block order of the writes
    while (i > 0 && comes_before(wk, ws[i - 1])) {
      gs[i] = gs[i - 1];
      ws[i] = ws[i - 1];
      i--;
    }
    gs[i] = gk;
    ws[i] = wk;
  }
  *addn = sum;
  return n;
}

/// Rule 3: g is made inside a loop; finds the accumulator of the flow of
/// its write and makes the array once, before the loop, as the
/// accumulator's initial value, its items zeros like the forward array's
/// (EDDY_TFL_ZEROS_ATTR: the loop reads the forward array as it was before
/// the loop, so each item a gradient is written to is set). TensorFlow's
/// gradient arrays add the writes to one index up, and a loop reading an
/// index in several iterations (or with several reads, each making the
/// array) writes it more than once: each write becomes a write of the item
/// read plus the value. The writes of several reads are chained (each
/// creation a look-up of the previous write's flow) in place of their
/// AddN. *done tells.
static eddy_status_t hoist_creation(eddy_ctx_t *ctx, eddy_op_t *g, bool *done) {
  *done = false;
  if (g->num_operands != 2) // only the handle and the flow to map
    return NULL;
  eddy_op_t *he = NULL, *fe = NULL;
  eddy_value_t *h_out = skip_fwd(eddy_ir_op_operand(g, 0), true, &he);
  eddy_value_t *f_out = skip_fwd(eddy_ir_op_operand(g, 1), true, &fe);
  if (!he || !fe)
    return NULL;
  eddy_op_t *gs[MAX_READERS], *ws[MAX_READERS], *addn = NULL;
  size_t n = summed_creations(g, gs, ws, &addn);
  if (n == 0)
    return NULL;
  // The writes' sum goes into AddV2(switch, sum) of the accumulator.
  eddy_value_t *sum = addn ? res(addn, 0) : res(ws[0], 0);
  eddy_op_t *acc_enter = NULL, *sw = NULL;
  for (eddy_use_t *a = sum->uses; a && !acc_enter; a = a->next) {
    eddy_op_t *add = a->owner;
    if ((!tfl_is(add, "tf.AddV2") && !tfl_is(add, "tf.Add")) ||
        add->num_operands != 2 || !res(add, 0))
      continue;
    eddy_op_t *s = arg(add, 1 - a->index)->def;
    if (!tfl_is(s, "tf.Switch") || !arg(s, 0) || !res(s, 1))
      continue;
    eddy_op_t *m = arg(s, 0)->def;
    if (!tfl_is(m, "tf.Merge") || m->num_operands != 2)
      continue;
    eddy_op_t *e = arg(m, 0)->def;
    eddy_op_t *nx = arg(m, 1)->def;
    eddy_op_t *c = tfl_is(e, "tf.Enter") && arg(e, 0) ? arg(e, 0)->def : NULL;
    if (!tfl_is(nx, "tf.NextIteration") || !tfl_is(c, "tf.Const") ||
        arg(nx, 0) != &add->results[0] ||
        eddy_ir_op_attr(e, "frame_name") != eddy_ir_op_attr(fe, "frame_name"))
      continue;
    acc_enter = e;
    sw = s;
  }
  if (!acc_enter)
    return NULL;
  // The array, made once before the loop from the outer handle and flow,
  // its items zeros.
  eddy_ptrmap_t map;
  eddy_ptrmap_init(&map);
  eddy_ptrmap_put(&map, eddy_ir_op_operand(g, 0), h_out);
  eddy_ptrmap_put(&map, eddy_ir_op_operand(g, 1), f_out);
  eddy_op_t *g0 = eddy_ir_op_clone(g, &map);
  eddy_ptrmap_destroy(&map);
  eddy_ir_op_insert_before(g0, acc_enter);
  eddy_ir_op_set_attr(g0, EDDY_TFL_ZEROS_ATTR,
                      eddy_ir_bool_attr_get(ctx, true));
  eddy_ir_op_set_operand(acc_enter, 0, &g0->results[1]);
  eddy_builder_t bb;
  eddy_ir_builder_init(&bb, ctx);
  eddy_value_t *state = &sw->results[1];
  for (size_t k = 0; k < n; k++) {
    eddy_op_t *w = ws[k], *r = NULL, *add = NULL;
    eddy_value_t *v = arg(w, 2);
    eddy_named_attr_t da =
        eddy_ir_named_attr(ctx, "dtype", eddy_ir_op_attr(w, "T"));
    eddy_value_t *rops[3] = {arg(w, 0), arg(w, 1), arg(w, 3)};
    eddy_ir_builder_set_before(&bb, w);
    EDDY_RETURN_IF_ERROR(eddy_tfl_make(&bb, "tf.TensorArrayReadV3", rops, 3,
                                       &da, eddy_ir_op_attr(w, "T") ? 1 : 0,
                                       &v->type, 1, w->loc, &r));
    eddy_value_t *aops[2] = {res(r, 0), v};
    EDDY_RETURN_IF_ERROR(eddy_tfl_make(&bb, "tf.AddV2", aops, 2, NULL, 0,
                                       &v->type, 1, w->loc, &add));
    eddy_ir_op_set_operand(w, 2, res(add, 0));
    make_lookup(gs[k], state);
    state = res(w, 0);
  }
  if (addn) {
    eddy_ir_value_replace_all_uses(res(addn, 0), state);
    eddy_ir_op_erase(addn);
  }
  *done = true;
  return NULL;
}

static eddy_status_t in_loop_error(const eddy_op_t *g, const eddy_op_t *enter) {
  eddy_buf_t loc;
  eddy_buf_init(&loc);
  eddy_ir_loc_format(g->loc, &loc);
  const eddy_attr_t *f = eddy_ir_op_attr(enter, "frame_name");
  eddy_status_t st = eddy_status_create_at(
      EDDY_ERR_UNSUPPORTED, loc.data,
      "the TensorArray gradient is made inside loop frame '%.*s' and its "
      "writes do not go into a flow accumulator (b_acc) that could carry it "
      "from one iteration to the next",
      f && f->kind == EDDY_ATTR_STRING ? (int)f->u.str.len : 1,
      f && f->kind == EDDY_ATTR_STRING ? f->u.str.data : "?");
  eddy_buf_destroy(&loc);
  return st;
}

/// The flow operand of a TensorArray op that takes a handle and a flow.
static eddy_value_t *flow_operand(const eddy_op_t *op) {
  if (tfl_is(op, "tf.TensorArrayWriteV3") ||
      tfl_is(op, "tf.TensorArrayScatterV3") ||
      tfl_is(op, "tf.TensorArraySplitV3"))
    return arg(op, 3);
  if (tfl_is(op, "tf.TensorArrayConcatV3"))
    return arg(op, 1);
  if (tfl_is(op, "tf.TensorArrayReadV3") ||
      tfl_is(op, "tf.TensorArrayGatherV3"))
    return arg(op, 2);
  if (tfl_is(op, "tf.TensorArraySizeV3"))
    return arg(op, 1);
  return NULL;
}

static void describe_key(ta_key_t k, eddy_buf_t *out) {
  const eddy_loc_t *loc = k.ta->loc;
  eddy_buf_t where;
  eddy_buf_init(&where);
  eddy_ir_loc_format(loc, &where);
  if (k.source)
    eddy_buf_printf(out, "the gradient array (source \"%s\") of ",
                    k.source->u.str.data);
  eddy_buf_printf(out, "the TensorArray made at %s",
                  where.data ? where.data : "?");
  eddy_buf_destroy(&where);
}

/// legalize-tf reads an array's state from the flow and never the handle:
/// an op whose handle and flow name two different arrays would silently
/// act on the wrong one (e.g. a gradient array given the forward flow, when
/// its gradient_flow lacks the control edge on TensorArrayGradV3). Both
/// must trace to the same array where both can be traced. Checked after
/// rule 1 and before look-ups replace gradient handles.
static eddy_status_t check_handles_match_flows(eddy_block_t *b) {
  for (eddy_op_t *op = b->first; op; op = op->next) {
    eddy_value_t *flow = flow_operand(op);
    if (!flow || !arg(op, 0))
      continue;
    ta_key_t h = handle_key(arg(op, 0));
    ta_key_t f = flow_key(flow);
    if (!h.ta || !f.ta || (h.ta == f.ta && h.source == f.source))
      continue;
    eddy_buf_t hb, fb;
    eddy_buf_init(&hb);
    eddy_buf_init(&fb);
    describe_key(h, &hb);
    describe_key(f, &fb);
    eddy_status_t st = eddy_ir_op_error(
        op, "its handle names %s but its flow carries %s; this graph's "
            "TensorArray ops cannot be given SSA form",
        hb.data, fb.data);
    eddy_buf_destroy(&hb);
    eddy_buf_destroy(&fb);
    return st;
  }
  return NULL;
}

/// A scatter into a gradient array just made (the gradient of a gather):
/// TensorFlow adds the rows scattered to one index up (a gather that reads
/// an item twice), where tl.scatter keeps the last. The rows become their
/// sums per index, scattered to every index: UnsortedSegmentSum(rows,
/// indices, size) to Range(0, size); indices no row goes to get zeros.
static eddy_status_t sum_scatter_rows(eddy_ctx_t *ctx, eddy_op_t *sc) {
  eddy_op_t *g = skip_fwd(arg(sc, 0), false, NULL)->def;
  if (sc->num_operands != 4 || !tfl_is(g, "tf.TensorArrayGradV3") ||
      g->num_results != 2 || skip_fwd(arg(sc, 0), false, NULL) != res(g, 0) ||
      skip_fwd(arg(sc, 3), false, NULL) != res(g, 1))
    return NULL;
  eddy_value_t *h = arg(sc, 0), *idx = arg(sc, 1), *rows = arg(sc, 2);
  eddy_value_t *flow = arg(sc, 3);
  const eddy_type_t *i32 = eddy_ir_scalar_type_get(ctx, EDDY_DT_I32);
  const eddy_type_t *vi32 =
      eddy_ir_tensor_type_get(ctx, EDDY_DT_I32, 1, (int64_t[]){-1});
  const eddy_type_t *rt = rows->type;
  if (rt->kind == EDDY_TYPE_TENSOR && rt->rank >= 1) {
    int64_t dims[EDDY_TFL_MAX_RANK];
    for (int32_t i = 0; i < rt->rank && i < EDDY_TFL_MAX_RANK; i++)
      dims[i] = i ? rt->dims[i] : EDDY_DIM_DYNAMIC;
    rt = rt->rank <= EDDY_TFL_MAX_RANK
             ? eddy_ir_tensor_type_get(ctx, rt->dtype, rt->rank, dims)
             : eddy_ir_tensor_type_get(ctx, rt->dtype, EDDY_RANK_UNKNOWN, NULL);
  }
  eddy_builder_t bb;
  eddy_ir_builder_init(&bb, ctx);
  eddy_ir_builder_set_before(&bb, sc);
  eddy_op_t *size = NULL, *c0 = NULL, *c1 = NULL, *range = NULL, *sum = NULL;
  eddy_value_t *sops[2] = {h, flow};
  EDDY_RETURN_IF_ERROR(eddy_tfl_make(&bb, "tf.TensorArraySizeV3", sops, 2, NULL,
                                     0, &i32, 1, sc->loc, &size));
  int32_t zero = 0, one = 1;
  eddy_named_attr_t a0 = eddy_ir_named_attr(
      ctx, "value", eddy_ir_dense_attr_get(ctx, i32, &zero, sizeof zero));
  eddy_named_attr_t a1 = eddy_ir_named_attr(
      ctx, "value", eddy_ir_dense_attr_get(ctx, i32, &one, sizeof one));
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_make(&bb, "tf.Const", NULL, 0, &a0, 1, &i32, 1, sc->loc, &c0));
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_make(&bb, "tf.Const", NULL, 0, &a1, 1, &i32, 1, sc->loc, &c1));
  eddy_value_t *rops[3] = {res(c0, 0), res(size, 0), res(c1, 0)};
  EDDY_RETURN_IF_ERROR(eddy_tfl_make(&bb, "tf.Range", rops, 3, NULL, 0, &vi32,
                                     1, sc->loc, &range));
  eddy_value_t *uops[3] = {rows, idx, res(size, 0)};
  EDDY_RETURN_IF_ERROR(eddy_tfl_make(&bb, "tf.UnsortedSegmentSum", uops, 3,
                                     NULL, 0, &rt, 1, sc->loc, &sum));
  eddy_ir_op_set_operand(sc, 1, res(range, 0));
  eddy_ir_op_set_operand(sc, 2, res(sum, 0));
  return NULL;
}

/// Rules 1 to 3 for every TensorArrayGradV3 of block b.
static eddy_status_t rewrite_grads(eddy_ctx_t *ctx, eddy_block_t *b) {
  bool hoisted = false;
  for (eddy_op_t *op = b->first; op; op = op->next)
    if (tfl_is(op, "tf.TensorArrayGradV3") && op->num_operands >= 2 &&
        op->num_results == 2)
      gradient_flow(op);
  EDDY_RETURN_IF_ERROR(check_handles_match_flows(b));
  for (eddy_op_t *op = b->first; op; op = op->next)
    if (tfl_is(op, "tf.TensorArrayScatterV3"))
      EDDY_RETURN_IF_ERROR(sum_scatter_rows(ctx, op));
  for (eddy_op_t *op = b->first; op;) {
    eddy_op_t *next = op->next;
    if (!tfl_is(op, "tf.TensorArrayGradV3") || op->num_operands < 2 ||
        op->num_results != 2) {
      op = next;
      continue;
    }
    ta_key_t h = handle_key(eddy_ir_op_operand(op, 0));
    ta_key_t f = flow_key(eddy_ir_op_operand(op, 1));
    ta_key_t want = {h.ta, h.source ? h.source : grad_source(op)};
    if (h.ta && !h.source && key_eq(f, want)) {
      make_lookup(op, eddy_ir_op_operand(op, 1));
    } else if (h.ta && !h.source && key_eq(f, h)) {
      bool done = false;
      eddy_op_t *enter = NULL;
      skip_fwd(eddy_ir_op_operand(op, 0), true, &enter);
      // Erases op and the other creations it sums with: start over.
      EDDY_RETURN_IF_ERROR(hoist_creation(ctx, op, &done));
      // Made in every iteration, TensorFlow's array would live on across
      // them; without the accumulator it cannot be one list.
      if (!done && enter)
        return in_loop_error(op, enter);
      if (done) {
        hoisted = true;
        next = b->first;
      }
    }
    op = next;
  }
  // A chained creation reads the previous write's flow, which may come
  // later in the block.
  if (hoisted)
    eddy_tfl_block_sort(b);
  return NULL;
}

/// True when v is read only by control tokens (through Identity).
static bool only_tokens(eddy_value_t *v, int depth) {
  if (depth > 64)
    return false;
  for (eddy_use_t *u = v->uses; u; u = u->next) {
    eddy_op_t *o = u->owner;
    if (tfl_is(o, "df.control"))
      continue;
    if (tfl_is(o, "tf.Identity") && res(o, 0) &&
        only_tokens(res(o, 0), depth + 1))
      continue;
    return false;
  }
  return true;
}

/// The tokens reading v (through Identity) read `to` instead; the
/// Identities left unused go.
static void retarget_tokens(eddy_value_t *v, eddy_value_t *to) {
  eddy_use_t *u = v->uses;
  while (u) {
    eddy_use_t *next = u->next;
    eddy_op_t *o = u->owner;
    if (tfl_is(o, "df.control")) {
      eddy_ir_op_set_operand(o, u->index, to);
    } else if (tfl_is(o, "tf.Identity") && res(o, 0)) {
      retarget_tokens(&o->results[0], to);
      if (!eddy_ir_value_has_uses(&o->results[0]))
        eddy_ir_op_erase(o);
    }
    u = next;
  }
}

/// The pushes and pops of a stack (through its Enters and df.after).
static void stack_ops(eddy_value_t *v, eddy_op_t **ops, size_t *n, size_t cap,
                      bool *other, int depth) {
  for (eddy_use_t *u = v->uses; u; u = u->next) {
    eddy_op_t *o = u->owner;
    if (depth < 16 && u->index == 0 && res(o, 0) &&
        (tfl_is(o, "tf.Enter") || tfl_is(o, "df.after")))
      stack_ops(&o->results[0], ops, n, cap, other, depth + 1);
    else if (((tfl_is(o, "tf.StackPushV2") && arg(o, 1)) ||
              tfl_is(o, "tf.StackPopV2")) &&
             u->index == 0 && res(o, 0) && *n < cap)
      ops[(*n)++] = o;
    else if (!tfl_is(o, "tf.StackCloseV2") && !tfl_is(o, "df.control"))
      *other = true;
  }
}

static void drop_unread_stacks(eddy_block_t *b) {
  for (eddy_op_t *st = b->first; st; st = st->next) {
    if (!tfl_is(st, "tf.StackV2") || !res(st, 0))
      continue;
    eddy_op_t *ops[64];
    size_t n = 0;
    bool other = false, pops = false;
    stack_ops(&st->results[0], ops, &n, 64, &other, 0);
    if (other || n == 64)
      continue;
    bool unread = true;
    for (size_t i = 0; i < n && unread; i++)
      if (tfl_is(ops[i], "tf.StackPopV2")) {
        pops = true;
        unread = only_tokens(&ops[i]->results[0], 0);
      }
    if (!unread || !pops)
      continue;
    for (size_t i = 0; i < n; i++) {
      eddy_op_t *o = ops[i];
      if (tfl_is(o, "tf.StackPushV2"))
        retarget_tokens(&o->results[0], eddy_ir_op_operand(o, 1));
      else
        retarget_tokens(&o->results[0], eddy_ir_op_operand(o, 0));
      if (!eddy_ir_value_has_uses(&o->results[0]))
        eddy_ir_op_erase(o);
    }
  }
}

eddy_status_t eddy_tfl_thread_tensor_arrays(eddy_ctx_t *ctx, eddy_block_t *b) {
  bool any = false;
  for (eddy_op_t *op = b->first; op && !any; op = op->next)
    any = tfl_is(op, "tf.TensorArrayV3");
  if (!any)
    return NULL;
  eddy_tfl_mark_growing_writes(ctx, b);
  EDDY_RETURN_IF_ERROR(rewrite_grads(ctx, b));
  drop_unread_stacks(b);
  return NULL;
}

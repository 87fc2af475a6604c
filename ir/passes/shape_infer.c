/// shape-infer: refines result types from operand types, through control
/// flow and calls, to a fixpoint.
///
/// Each op with a shape function gets refine(declared, inferred) for every
/// result (an error when they conflict). ctl.while iterates: loop values
/// start at refine(declared, init) and are generalized with what the body
/// yields until nothing changes, so a value whose shape changes across
/// iterations gets dynamic dims. ctl.if results generalize the two yields;
/// ctl.call results come from the callee's signature; each function's
/// declared results are refined from its func.return. Functions are
/// repeated until no signature changes, so callees may follow callers.
/// Before each round, list element types are refined from the items written
/// into the lists (list_types.c).
#include "ir/passes/pass_util.h"
#include "ir/passes/passes.h"

#include <stdlib.h>

/// A loop needs at most about (rank + 2) rounds per loop value; past this
/// something oscillates, which is a bug in a shape function.
enum { SI_MAX_LOOP_ROUNDS = 32 };
/// Rounds that only refine list element types (a chain of lists each fed
/// from the one before).
enum { SI_MAX_LIST_ROUNDS = 16 };

typedef struct si_state {
  eddy_pass_ctx_t *pc;
  eddy_ctx_t *ctx;
  eddy_module_t *m;
  int64_t updates;
} si_state_t;

static const char *type_str(eddy_buf_t *b, const eddy_type_t *t) {
  eddy_buf_clear(b);
  eddy_ir_type_print(t, b);
  return b->data ? b->data : "";
}

static void set_type(si_state_t *s, eddy_value_t *v, const eddy_type_t *t) {
  if (v->type != t) {
    eddy_ir_value_set_type(v, t);
    s->updates++;
  }
}

/// Sets result i of op to refine(current, t); an error naming the op and
/// both types when they conflict.
static eddy_status_t refine_result(si_state_t *s, eddy_op_t *op, uint32_t i,
                                   const eddy_type_t *t, const char *what) {
  eddy_value_t *r = &op->results[i];
  const eddy_type_t *nt = eddy_ir_type_refine(s->ctx, r->type, t);
  if (!nt) {
    eddy_buf_t b1, b2;
    eddy_buf_init(&b1);
    eddy_buf_init(&b2);
    eddy_status_t st = eddy_ir_op_error(
        op, "result #%u is declared %s, incompatible with the %s type %s", i,
        type_str(&b1, r->type), what, type_str(&b2, t));
    eddy_buf_destroy(&b1);
    eddy_buf_destroy(&b2);
    return st;
  }
  set_type(s, r, nt);
  return NULL;
}

static eddy_status_t infer_block(si_state_t *s, eddy_block_t *b);

static eddy_status_t infer_regions(si_state_t *s, eddy_op_t *op) {
  for (uint32_t r = 0; r < op->num_regions; r++)
    for (eddy_block_t *b = op->regions[r].first; b; b = b->next)
      EDDY_RETURN_IF_ERROR(infer_block(s, b));
  return NULL;
}

/// An op with a shape function: rerun it on the current operand types.
static eddy_status_t infer_generic(si_state_t *s, eddy_op_t *op) {
  EDDY_RETURN_IF_ERROR(infer_regions(s, op));
  if (!op->def || !op->def->infer)
    return NULL;
  const eddy_type_t **types =
      eddy_arena_alloc(eddy_ir_pass_scratch(s->pc),
                       (op->num_operands + 1) * sizeof *types);
  for (uint32_t i = 0; i < op->num_operands; i++)
    types[i] = op->operands[i].value->type;
  eddy_infer_ctx_t ic = {
      .ctx = s->ctx,
      .def = op->def,
      .operand_types = types,
      .num_operands = op->num_operands,
      .attrs = op->attrs,
      .num_attrs = op->num_attrs,
      .loc = op->loc,
      .op = op,
  };
  eddy_status_t st = op->def->infer(&ic);
  if (!st && ic.num_results != op->num_results)
    st = eddy_ir_op_error(op, "shape function gives %zu results, op has %u",
                          ic.num_results, op->num_results);
  for (uint32_t i = 0; !st && i < op->num_results; i++)
    st = refine_result(s, op, i, ic.results[i], "inferred");
  free((void *)ic.results); // grown with realloc by eddy_ir_infer_push
  return st;
}

static eddy_op_t *region_terminator(eddy_op_t *op, uint32_t r) {
  eddy_block_t *b = eddy_ir_region_entry(&op->regions[r]);
  return b && !b->next ? eddy_ir_block_terminator(b) : NULL;
}

static eddy_status_t infer_if(si_state_t *s, eddy_op_t *op) {
  EDDY_RETURN_IF_ERROR(infer_regions(s, op));
  if (op->num_regions != 2)
    return NULL;
  eddy_op_t *yt = region_terminator(op, 0), *ye = region_terminator(op, 1);
  if (!yt || !ye || yt->num_operands != op->num_results ||
      ye->num_operands != op->num_results)
    return NULL; // malformed: the verifier reports it
  for (uint32_t i = 0; i < op->num_results; i++) {
    const eddy_type_t *a = eddy_ir_op_operand(yt, i)->type;
    const eddy_type_t *b = eddy_ir_op_operand(ye, i)->type;
    const eddy_type_t *g = eddy_ir_type_generalize(s->ctx, a, b);
    if (!g) {
      eddy_buf_t b1, b2;
      eddy_buf_init(&b1);
      eddy_buf_init(&b2);
      eddy_status_t st = eddy_ir_op_error(
          op, "result #%u: the then region yields %s, the else region %s", i,
          type_str(&b1, a), type_str(&b2, b));
      eddy_buf_destroy(&b1);
      eddy_buf_destroy(&b2);
      return st;
    }
    EDDY_RETURN_IF_ERROR(refine_result(s, op, i, g, "yielded"));
  }
  return NULL;
}

static eddy_status_t infer_call(si_state_t *s, eddy_op_t *op) {
  EDDY_RETURN_IF_ERROR(infer_generic(s, op));
  const eddy_attr_t *callee = eddy_ir_op_attr(op, "callee");
  if (!callee || callee->kind != EDDY_ATTR_SYMBOL)
    return NULL;
  eddy_op_t *f = eddy_ir_module_lookup_func(s->m, callee->u.str.data);
  const eddy_type_t *fty = f ? eddy_ir_func_type(f) : NULL;
  if (!fty || fty->num_outputs != op->num_results)
    return NULL; // the verifier reports a bad call
  for (uint32_t i = 0; i < op->num_results; i++)
    EDDY_RETURN_IF_ERROR(refine_result(s, op, i, fty->outputs[i], "callee's"));
  return NULL;
}

/// The values nested in a loop and their types, to restart each round from
/// the declared types (a type refined in one round may be too precise for
/// the next, more general, loop types).
typedef struct saved_types {
  eddy_value_t **values;
  const eddy_type_t **types;
  size_t len, cap;
  bool oom;
} saved_types_t;

static void save_value(saved_types_t *sv, eddy_value_t *v) {
  if (sv->len == sv->cap) {
    size_t cap = sv->cap ? sv->cap * 2 : 32;
    eddy_value_t **vs = realloc(sv->values, cap * sizeof *vs);
    if (vs)
      sv->values = vs;
    const eddy_type_t **ts = realloc(sv->types, cap * sizeof *ts);
    if (ts)
      sv->types = ts;
    if (!vs || !ts) {
      sv->oom = true;
      return;
    }
    sv->cap = cap;
  }
  sv->values[sv->len] = v;
  sv->types[sv->len++] = v->type;
}

static void save_region_values(saved_types_t *sv, eddy_op_t *op) {
  for (uint32_t r = 0; r < op->num_regions; r++)
    for (eddy_block_t *b = op->regions[r].first; b; b = b->next) {
      for (uint32_t i = 0; i < b->num_args; i++)
        save_value(sv, b->args[i]);
      for (eddy_op_t *o = b->first; o; o = o->next) {
        for (uint32_t i = 0; i < o->num_results; i++)
          save_value(sv, &o->results[i]);
        save_region_values(sv, o);
      }
    }
}

static eddy_status_t loop_type_error(eddy_op_t *op, uint32_t i,
                                     const char *what, const eddy_type_t *a,
                                     const eddy_type_t *b) {
  eddy_buf_t b1, b2;
  eddy_buf_init(&b1);
  eddy_buf_init(&b2);
  eddy_status_t st = eddy_ir_op_error(op, "loop value #%u: %s %s and %s", i,
                                      what, type_str(&b1, a),
                                      type_str(&b2, b));
  eddy_buf_destroy(&b1);
  eddy_buf_destroy(&b2);
  return st;
}

static eddy_status_t infer_while_rounds(si_state_t *s, eddy_op_t *op,
                                        eddy_block_t *cond, eddy_block_t *body,
                                        eddy_op_t *yield,
                                        const saved_types_t *sv,
                                        const eddy_type_t **cur) {
  uint32_t n = op->num_results;
  for (uint32_t i = 0; i < n; i++) {
    const eddy_type_t *init = eddy_ir_op_operand(op, i)->type;
    cur[i] = eddy_ir_type_refine(s->ctx, op->results[i].type, init);
    if (!cur[i])
      return loop_type_error(op, i, "the declared type and the initial value "
                             "are incompatible:", op->results[i].type, init);
  }
  for (int round = 0; round < SI_MAX_LOOP_ROUNDS; round++) {
    for (size_t k = 0; k < sv->len; k++)
      eddy_ir_value_set_type(sv->values[k], sv->types[k]);
    for (uint32_t i = 0; i < n; i++) {
      set_type(s, cond->args[i], cur[i]);
      set_type(s, body->args[i], cur[i]);
    }
    EDDY_RETURN_IF_ERROR(infer_block(s, cond));
    EDDY_RETURN_IF_ERROR(infer_block(s, body));
    bool stable = true;
    for (uint32_t i = 0; i < n; i++) {
      const eddy_type_t *y = eddy_ir_op_operand(yield, i)->type;
      const eddy_type_t *g = eddy_ir_type_generalize(s->ctx, cur[i], y);
      if (!g)
        return loop_type_error(op, i, "the body turns", cur[i], y);
      const eddy_type_t *nt = eddy_ir_type_refine(s->ctx, sv->types[i], g);
      if (!nt)
        return loop_type_error(op, i,
                               "the declared type and the type across "
                               "iterations are incompatible:",
                               sv->types[i], g);
      if (nt != cur[i])
        stable = false;
      cur[i] = nt;
    }
    if (stable)
      return NULL;
  }
  return eddy_ir_op_error(op, "shape inference found no fixpoint after %d "
                          "rounds", (int)SI_MAX_LOOP_ROUNDS);
}

static eddy_status_t infer_while(si_state_t *s, eddy_op_t *op) {
  uint32_t n = op->num_results;
  eddy_block_t *cond =
      op->num_regions == 2 ? eddy_ir_region_entry(&op->regions[0]) : NULL;
  eddy_block_t *body =
      op->num_regions == 2 ? eddy_ir_region_entry(&op->regions[1]) : NULL;
  eddy_op_t *yield = body && !body->next ? eddy_ir_block_terminator(body)
                                         : NULL;
  if (!cond || !body || cond->next || op->num_operands != n ||
      cond->num_args != n || body->num_args != n || !yield ||
      yield->num_operands != n)
    return infer_generic(s, op); // malformed: the verifier reports it
  saved_types_t sv = {0};
  // The cond block's arguments come first: sv.types[i] is the declared
  // type of loop value i.
  save_region_values(&sv, op);
  const eddy_type_t **cur =
      eddy_arena_alloc(eddy_ir_pass_scratch(s->pc), (n + 1) * sizeof *cur);
  eddy_status_t st =
      sv.oom ? eddy_status_create(EDDY_ERR_RESOURCE, "out of memory")
             : infer_while_rounds(s, op, cond, body, yield, &sv, cur);
  free(sv.values);
  free(sv.types);
  if (st)
    return st;
  for (uint32_t i = 0; i < n; i++)
    set_type(s, &op->results[i], cur[i]);
  return NULL;
}

static eddy_status_t infer_block(si_state_t *s, eddy_block_t *b) {
  for (eddy_op_t *op = b->first; op; op = op->next) {
    if (eddy_ir_op_is(op, "ctl.while"))
      EDDY_RETURN_IF_ERROR(infer_while(s, op));
    else if (eddy_ir_op_is(op, "ctl.if"))
      EDDY_RETURN_IF_ERROR(infer_if(s, op));
    else if (eddy_ir_op_is(op, "ctl.call"))
      EDDY_RETURN_IF_ERROR(infer_call(s, op));
    else
      EDDY_RETURN_IF_ERROR(infer_generic(s, op));
  }
  return NULL;
}

/// Refines the function's declared results from its func.return; true in
/// *changed when the signature changed.
static eddy_status_t update_signature(si_state_t *s, eddy_op_t *f,
                                      bool *changed) {
  const eddy_type_t *fty = eddy_ir_func_type(f);
  eddy_block_t *entry = eddy_ir_func_entry(f);
  eddy_op_t *ret = entry ? eddy_ir_block_terminator(entry) : NULL;
  if (!fty || !ret || !eddy_ir_op_is(ret, "func.return") ||
      ret->num_operands != fty->num_outputs || entry->next)
    return NULL; // the verifier reports it
  size_t n = fty->num_outputs;
  const eddy_type_t **outs = eddy_arena_alloc(eddy_ir_pass_scratch(s->pc),
                                              (n + 1) * sizeof *outs);
  bool differs = false;
  for (size_t i = 0; i < n; i++) {
    const eddy_type_t *t = eddy_ir_op_operand(ret, i)->type;
    outs[i] = eddy_ir_type_refine(s->ctx, fty->outputs[i], t);
    if (!outs[i]) {
      eddy_buf_t b1, b2;
      eddy_buf_init(&b1);
      eddy_buf_init(&b2);
      eddy_status_t st = eddy_ir_op_error(
          ret, "operand #%zu has type %s, incompatible with the declared "
               "result type %s of @%s",
          i, type_str(&b1, t), type_str(&b2, fty->outputs[i]),
          eddy_ir_func_name(f));
      eddy_buf_destroy(&b1);
      eddy_buf_destroy(&b2);
      return st;
    }
    differs |= outs[i] != fty->outputs[i];
  }
  if (differs) {
    eddy_ir_func_set_type(
        f, eddy_ir_func_type_get(s->ctx, fty->inputs, fty->num_inputs, outs,
                                 n));
    *changed = true;
  }
  return NULL;
}

static eddy_status_t shape_infer_run(eddy_pass_ctx_t *pc, eddy_module_t *m) {
  si_state_t s = {.pc = pc, .ctx = eddy_ir_pass_ctx(pc), .m = m};
  size_t num_funcs = 0;
  for (eddy_op_t *f = eddy_ir_module_body(m)->first; f; f = f->next)
    num_funcs++;
  // A refined signature can refine its callers: at most one round per
  // function along a call chain, plus one to see that nothing changed. A
  // refined list element type can refine the items written into another
  // list, and a type the inference refined can be an item written into a
  // list (an item list taken out of a list of lists, whose type the
  // inference after the list step refines): while either changes a type,
  // another round runs. Such rounds are counted apart (each refines some
  // type, so they end; the cap only guards against a bug).
  size_t list_rounds = 0;
  for (size_t round = 0; round <= num_funcs + list_rounds; round++) {
    bool changed = false, lists_changed = false;
    for (eddy_op_t *f = eddy_ir_module_body(m)->first; f; f = f->next) {
      if (!eddy_ir_op_is(f, "func.func"))
        continue;
      int64_t retyped = 0;
      EDDY_RETURN_IF_ERROR(eddy_passes_refine_list_types(s.ctx, f, &retyped));
      s.updates += retyped;
      lists_changed |= retyped > 0;
      int64_t before = s.updates;
      EDDY_RETURN_IF_ERROR(infer_regions(&s, f));
      lists_changed |= s.updates > before;
      EDDY_RETURN_IF_ERROR(update_signature(&s, f, &changed));
    }
    if (lists_changed && list_rounds < SI_MAX_LIST_ROUNDS) {
      list_rounds++;
      changed = true;
    }
    if (!changed)
      break;
  }
  if (s.updates) {
    eddy_ir_pass_stat_add(pc, "type-updates", s.updates);
    eddy_ir_pass_mark_changed(pc);
  }
  return NULL;
}

const eddy_pass_t eddy_pass_shape_infer = {
    .name = "shape-infer",
    .summary = "refine result types from operand types through ctl.while, "
               "ctl.if, ctl.call and function results",
    .run = shape_infer_run,
};

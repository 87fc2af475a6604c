/// The reference evaluator: frames of values, blocks run op by op, the ctl
/// ops (while as a C loop, if by branch, call by recursion), and the checks
/// of run-time values against the types the IR declares.
///
/// Ownership: every value in a frame holds one reference. Values cross
/// region borders by sharing (a new reference) and the frame that computed
/// them drops its own when the region ends, so a loop-carried TensorList is
/// held once when the next body starts and tl.push_back can grow it in place
/// (see eddy_eval_take_list).
#include "runtime/eval/eval_internal.h"

#include "dialects/ctl/ctl.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/// Helpers that format messages into stack buffers are kept out of line, so
/// that the recursive functions (eval_block, eval_op, the ctl handlers,
/// eval_function) keep small frames.
#define EVAL_COLD __attribute__((noinline, cold))

/// Regions and calls entered at once, and the stack the evaluator's
/// recursion may use (it takes a few hundred bytes per level, more under
/// sanitizers): past either, a deep program is an error, not a crash.
#define EVAL_MAX_NESTING 4096
#define EVAL_STACK_BUDGET ((uintptr_t)2 << 20)

/// Notes (enclosing iterations, branches, calls) kept on one error.
#define EVAL_MAX_NOTES 16

/// ---- Errors ---------------------------------------------------------------

static eddy_status_code_t code_from_rt(eddy_rt_code_t c) {
  switch (c) {
  case EDDY_RT_ERR_INVALID_ARGUMENT:
  case EDDY_RT_ERR_UNSUPPORTED:
  case EDDY_RT_ERR_NOT_FOUND:
  case EDDY_RT_ERR_IO:
  case EDDY_RT_ERR_RESOURCE:
  case EDDY_RT_ERR_INTERNAL:
  case EDDY_RT_ERR_CANCELLED:
    return (eddy_status_code_t)c;
  case EDDY_RT_OK:
    break;
  }
  return EDDY_ERR_INTERNAL;
}

eddy_status_t eddy_eval_from_rt(eddy_rt_status_t st) {
  if (!st)
    return NULL;
  eddy_status_t out = eddy_status_create(code_from_rt(eddy_rt_status_code(st)),
                                         "%s", eddy_rt_status_message(st));
  eddy_rt_status_destroy(st);
  return out;
}

static void loc_append(const eddy_op_t *op, eddy_buf_t *b) {
  eddy_ir_loc_format(op ? op->loc : NULL, b);
}

static eddy_status_t op_errorv(const eddy_op_t *op, eddy_status_code_t code,
                               const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  char *text = malloc(n > 0 ? (size_t)n + 1 : 1);
  if (!text)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  if (n > 0)
    vsnprintf(text, (size_t)n + 1, fmt, ap);
  else
    text[0] = '\0';
  eddy_buf_t where;
  eddy_buf_init(&where);
  if (op->loc)
    loc_append(op, &where);
  eddy_status_t st = eddy_status_create_at(code, op->loc ? where.data : NULL,
                                           "'%s' op %s", op->name->str, text);
  eddy_buf_destroy(&where);
  free(text);
  return st;
}

eddy_status_t eddy_eval_op_error(const eddy_op_t *op, eddy_status_code_t code,
                                 const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  eddy_status_t st = op_errorv(op, code, fmt, ap);
  va_end(ap);
  return st;
}

eddy_status_t eddy_eval_op_rt_error(const eddy_op_t *op,
                                    eddy_rt_status_t st) {
  if (!st)
    return NULL;
  // Kernel messages start with the op name, which the location prefix
  // already says.
  const char *msg = eddy_rt_status_message(st);
  size_t n = op->name->len;
  if (strncmp(msg, op->name->str, n) == 0 && msg[n] == ':' && msg[n + 1] == ' ')
    msg += n + 2;
  eddy_status_t out = eddy_eval_op_error(
      op, code_from_rt(eddy_rt_status_code(st)), "%s", msg);
  eddy_rt_status_destroy(st);
  return out;
}

/// Appends "WHAT at LOC" to an error passing out of a region of op.
static void note_at(eddy_status_t st, const eddy_op_t *op, const char *fmt,
                    ...) __attribute__((format(printf, 3, 4)));
static void note_at(eddy_status_t st, const eddy_op_t *op, const char *fmt,
                    ...) {
  // Deep recursion would add a note per level: keep the innermost ones.
  size_t lines = 0;
  for (const char *p = eddy_status_notes(st); *p; p++)
    lines += *p == '\n';
  if (lines >= EVAL_MAX_NOTES) {
    if (lines == EVAL_MAX_NOTES)
      eddy_status_append_note(st, "... (outer loops and calls omitted)");
    return;
  }
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *what = malloc(n > 0 ? (size_t)n + 1 : 1);
  if (!what)
    return;
  va_start(ap, fmt);
  vsnprintf(what, n > 0 ? (size_t)n + 1 : 1, fmt, ap);
  va_end(ap);
  eddy_buf_t where;
  eddy_buf_init(&where);
  loc_append(op, &where);
  eddy_status_append_note(st, "%s at %s", what, where.data);
  eddy_buf_destroy(&where);
  free(what);
}

static char *type_str(const eddy_type_t *t, char *buf, size_t size) {
  eddy_buf_t b;
  eddy_buf_init(&b);
  eddy_ir_type_print(t, &b);
  snprintf(buf, size, "%s", b.data ? b.data : "?");
  eddy_buf_destroy(&b);
  return buf;
}

static char *value_str(const eddy_eval_value_t *v, char *buf, size_t size) {
  eddy_buf_t b;
  eddy_buf_init(&b);
  eddy_eval_value_describe(v, &b);
  snprintf(buf, size, "%s", b.data ? b.data : "?");
  eddy_buf_destroy(&b);
  return buf;
}

/// ---- Frames ---------------------------------------------------------------

static void frame_init(eval_frame_t *f, eval_frame_t *parent) {
  memset(f, 0, sizeof(*f));
  f->parent = parent;
  eddy_ptrmap_init(&f->map);
}

static void frame_destroy(eval_frame_t *f) {
  for (size_t i = 0; i < f->len; i++)
    eddy_eval_value_release(&f->slots[i]);
  free(f->slots);
  eddy_ptrmap_destroy(&f->map);
}

/// Moves *owned into the frame as the value of v (zeroing *owned), also on
/// error.
static eddy_status_t frame_bind(eval_frame_t *f, const eddy_value_t *v,
                                eddy_eval_value_t *owned) {
  if (f->len == f->cap) {
    size_t cap = f->cap ? f->cap * 2 : 8;
    eddy_eval_value_t *slots = realloc(f->slots, cap * sizeof(*slots));
    if (!slots) {
      eddy_eval_value_release(owned);
      return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
    }
    f->slots = slots;
    f->cap = cap;
  }
  f->slots[f->len++] = *owned;
  memset(owned, 0, sizeof(*owned));
  eddy_ptrmap_put(&f->map, v, (void *)(uintptr_t)f->len);
  return NULL;
}

/// The slot holding v in f or an enclosing frame (NULL when none does);
/// *out_owner (may be NULL) is the frame that holds it.
static eddy_eval_value_t *frame_lookup(eval_frame_t *f, const eddy_value_t *v,
                                       eval_frame_t **out_owner) {
  for (; f; f = f->parent) {
    uintptr_t idx = (uintptr_t)eddy_ptrmap_get(&f->map, v);
    if (idx) {
      if (out_owner)
        *out_owner = f;
      return &f->slots[idx - 1];
    }
  }
  return NULL;
}

/// ---- Consuming TensorLists ---------------------------------------------------

/// The op of block b that is op or contains it.
static const eddy_op_t *ancestor_in_block(const eddy_op_t *op,
                                          const eddy_block_t *b) {
  while (op && op->block != b)
    op = eddy_ir_op_parent_op(op);
  return op;
}

static bool op_is_before(const eddy_op_t *a, const eddy_op_t *b) {
  for (const eddy_op_t *o = a->next; o; o = o->next) {
    if (o == b)
      return true;
  }
  return false;
}

/// True when operand i of op is the last use of its value in one execution
/// of the value's block: the value is defined in op's block, and every other
/// use sits in an op before op (uses nested in later ops count as later).
/// Values from enclosing blocks are never last: the next iteration of an
/// enclosing loop may read them again.
static bool is_last_use(const eddy_op_t *op, uint32_t i) {
  const eddy_value_t *v = op->operands[i].value;
  if (eddy_ir_value_block(v) != op->block)
    return false;
  for (const eddy_use_t *u = v->uses; u; u = u->next) {
    if (u->owner == op && u->index == i)
      continue;
    const eddy_op_t *a = ancestor_in_block(u->owner, op->block);
    if (!a || a == op || !op_is_before(a, op))
      return false;
  }
  return true;
}

eddy_status_t eddy_eval_take_list(eval_state_t *s, eval_frame_t *f,
                                  const eddy_op_t *op, uint32_t i,
                                  eddy_rt_list_t **out_list) {
  *out_list = NULL;
  const eddy_use_t *use = &op->operands[i];
  // Whether an operand is a last use depends only on the IR: cache it.
  uintptr_t known = (uintptr_t)eddy_ptrmap_get(&s->takes, use);
  if (!known) {
    known = is_last_use(op, i) ? 2 : 1;
    eddy_ptrmap_put(&s->takes, use, (void *)known);
  }
  eval_frame_t *owner = NULL;
  eddy_eval_value_t *slot = frame_lookup(f, use->value, &owner);
  if (!slot || slot->kind != EDDY_EVAL_LIST)
    return eddy_eval_op_error(op, EDDY_ERR_INTERNAL,
                              "operand #%u is not a computed TensorList", i);
  *out_list = slot->list;
  if (known == 2 && owner == f) {
    memset(slot, 0, sizeof(*slot));
  } else {
    eddy_rt_list_retain(slot->list);
  }
  if (!eddy_rt_list_is_unique(*out_list)) {
    s->list_copies++;
    s->list_items_copied += eddy_rt_list_size(*out_list);
  }
  return NULL;
}

/// ---- Ops ------------------------------------------------------------------

EVAL_COLD static eddy_status_t no_handler(const eddy_op_t *op) {
  const char *dialect =
      op->def && op->def->dialect ? op->def->dialect->name : "";
  if (strcmp(dialect, "df") == 0) {
    eddy_buf_t where;
    eddy_buf_init(&where);
    if (op->loc)
      loc_append(op, &where);
    eddy_status_t st = eddy_status_create_at(
        EDDY_ERR_UNSUPPORTED, op->loc ? where.data : NULL,
        "the evaluator runs structured IR; '%s' needs the dataflow "
        "interpreter",
        op->name->str);
    eddy_buf_destroy(&where);
    return st;
  }
  if (eddy_ir_op_has_trait(op, EDDY_TRAIT_TERMINATOR))
    return eddy_eval_op_error(op, EDDY_ERR_INTERNAL,
                              "is a terminator in the middle of a block");
  return eddy_eval_op_error(op, EDDY_ERR_UNSUPPORTED,
                            "the evaluator has no kernel for this op");
}

static eddy_eval_kind_t kind_of_type(const eddy_type_t *t) {
  if (t->kind == EDDY_TYPE_TENSOR)
    return EDDY_EVAL_TENSOR;
  if (t->kind == EDDY_TYPE_LIST)
    return EDDY_EVAL_LIST;
  return EDDY_EVAL_NONE;
}

/// A result that does not match its declared type. When the shape function,
/// given the operands' run-time shapes, agrees with the kernel, the IR
/// declared a type more refined than the program guarantees (the program's
/// error); when it does not, a kernel and its shape function disagree (a bug
/// in eddy).
EVAL_COLD static eddy_status_t result_mismatch(const eddy_op_t *op,
                                     const eddy_eval_value_t *const *operands,
                                     uint32_t i, const eddy_eval_value_t *v) {
  const eddy_type_t *declared = op->results[i].type;
  char want[256], got[256];
  type_str(declared, want, sizeof want);
  value_str(v, got, sizeof got);
  bool same_kind = v->kind == kind_of_type(declared);
  bool same_dtype =
      same_kind &&
      (v->kind == EDDY_EVAL_LIST
           ? eddy_eval_value_matches(v, declared) // depth and dtype
           : v->tensor.dtype == (int32_t)declared->dtype);
  if (!same_dtype)
    return eddy_eval_op_error(op, EDDY_ERR_INTERNAL,
                              "result #%u is %s, but the IR declares %s (a bug "
                              "in the evaluator or a kernel)",
                              i, got, want);
  if (!op->def || !op->def->infer)
    return eddy_eval_op_error(op, EDDY_ERR_INVALID_ARGUMENT,
                              "result #%u is %s at run time, but the IR "
                              "declares %s",
                              i, got, want);
  size_t n = op->num_operands;
  const eddy_type_t **types = calloc(n ? n : 1, sizeof(*types));
  if (!types)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  for (size_t j = 0; j < n; j++) {
    const eddy_value_t *ov = op->operands[j].value;
    const eddy_eval_value_t *rv = operands[j];
    if (ov->type->kind == EDDY_TYPE_TENSOR && rv->kind == EDDY_EVAL_TENSOR)
      types[j] = eddy_ir_tensor_type_get(op->ctx, (eddy_dtype_t)rv->tensor.dtype,
                                         rv->tensor.rank, rv->tensor.dims);
    else
      types[j] = ov->type;
  }
  eddy_infer_ctx_t ic;
  memset(&ic, 0, sizeof(ic));
  ic.ctx = op->ctx;
  ic.def = op->def;
  ic.operand_types = types;
  ic.num_operands = n;
  ic.attrs = op->attrs;
  ic.num_attrs = op->num_attrs;
  ic.loc = op->loc;
  ic.op = op;
  eddy_status_t ist = op->def->infer(&ic);
  bool agrees = !ist && ic.num_results > i &&
                eddy_eval_value_matches(v, ic.results[i]);
  char inferred[256] = "an error";
  if (!ist && ic.num_results > i)
    type_str(ic.results[i], inferred, sizeof inferred);
  eddy_status_destroy(ist);
  free(ic.results);
  free(types);
  if (agrees)
    return eddy_eval_op_error(
        op, EDDY_ERR_INVALID_ARGUMENT,
        "result #%u is %s for the operands' run-time shapes, but the IR "
        "declares %s",
        i, got, want);
  return eddy_eval_op_error(
      op, EDDY_ERR_INTERNAL,
      "result #%u is %s, which contradicts its declared type %s; the shape "
      "function gives %s for the run-time operands (a bug in eddy: the "
      "kernel and the shape function disagree)",
      i, got, want, inferred);
}

static eddy_status_t eval_op(eval_state_t *s, eval_frame_t *f,
                             const eddy_op_t *op) {
  const eval_handler_t *h = eddy_eval_handler(op);
  if (!h)
    return no_handler(op);
  uint32_t nin = op->num_operands, nout = op->num_results;
  // On the heap: a value holds a whole tensor descriptor, too big for the
  // frames of a recursion as deep as the program's nesting.
  const eddy_eval_value_t **in = calloc(nin + 1, sizeof(*in));
  eddy_eval_value_t *out = calloc(nout + 1, sizeof(*out));
  if (!in || !out) {
    free(in);
    free(out);
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  }
  eddy_status_t st = NULL;
  for (uint32_t i = 0; i < nin && !st; i++) {
    const eddy_value_t *v = op->operands[i].value;
    in[i] = frame_lookup(f, v, NULL);
    eddy_eval_kind_t want = kind_of_type(v->type);
    if (want == EDDY_EVAL_NONE)
      st = eddy_eval_op_error(op, EDDY_ERR_UNSUPPORTED,
                              "operand #%u is not a tensor or a TensorList; "
                              "the evaluator runs structured IR",
                              i);
    else if (!in[i] || in[i]->kind != want)
      st = eddy_eval_op_error(op, EDDY_ERR_INTERNAL,
                              "operand #%u has no computed value (is the IR "
                              "verified?)",
                              i);
  }
  if (!st)
    st = h->fn(s, f, h, op, in, out);
  for (uint32_t i = 0; i < nout && !st; i++) {
    if (!eddy_eval_value_matches(&out[i], op->results[i].type))
      st = result_mismatch(op, in, i, &out[i]);
  }
  for (uint32_t i = 0; i < nout; i++) {
    if (!st)
      st = frame_bind(f, &op->results[i], &out[i]);
    else
      eddy_eval_value_release(&out[i]);
  }
  free(in);
  free(out);
  return st;
}

/// Runs block b in a new frame below parent: binds its arguments to
/// owned_args[0..nargs) (moved, also on error), runs every op but the last,
/// which must be `term` with nout operands, and writes their values to
/// out[0..nout) (owned; zeroed on error). owner is the op whose region this
/// is, for messages.
static eddy_status_t eval_block(eval_state_t *s, eval_frame_t *parent,
                                const eddy_op_t *owner, const eddy_block_t *b,
                                eddy_eval_value_t *owned_args, size_t nargs,
                                const char *term, eddy_eval_value_t *out,
                                size_t nout) {
  if (nout)
    memset(out, 0, nout * sizeof(*out));
  uintptr_t here = (uintptr_t)__builtin_frame_address(0);
  uintptr_t used =
      here < s->stack_base ? s->stack_base - here : here - s->stack_base;
  if (s->nesting >= EVAL_MAX_NESTING || used > EVAL_STACK_BUDGET) {
    for (size_t i = 0; i < nargs; i++)
      eddy_eval_value_release(&owned_args[i]);
    return eddy_eval_op_error(owner, EDDY_ERR_RESOURCE,
                              "evaluation is nested too deeply (%d levels of "
                              "regions and calls, %zu KiB of stack)",
                              s->nesting, (size_t)(used >> 10));
  }
  s->nesting++;
  eval_frame_t f;
  frame_init(&f, parent);
  eddy_status_t st = NULL;
  if (!b || b->num_args != nargs)
    st = eddy_eval_op_error(owner, EDDY_ERR_INTERNAL,
                            "region block takes %u arguments, %zu given",
                            b ? b->num_args : 0, nargs);
  for (size_t i = 0; i < nargs; i++) {
    if (!st)
      st = frame_bind(&f, b->args[i], &owned_args[i]);
    else
      eddy_eval_value_release(&owned_args[i]);
  }
  const eddy_op_t *op = b ? b->first : NULL;
  for (; !st && op && op->next; op = op->next)
    st = eval_op(s, &f, op);
  if (!st) {
    if (!op || !eddy_ir_op_is(op, term) || op->num_operands != nout) {
      st = eddy_eval_op_error(owner, EDDY_ERR_INTERNAL,
                              "region does not end in '%s' with %zu values",
                              term, nout);
    } else {
      for (uint32_t i = 0; i < nout && !st; i++) {
        const eddy_eval_value_t *v =
            frame_lookup(&f, op->operands[i].value, NULL);
        if (!v || v->kind == EDDY_EVAL_NONE)
          st = eddy_eval_op_error(op, EDDY_ERR_INTERNAL,
                                  "operand #%u has no computed value", i);
        else
          eddy_eval_value_share(v, &out[i]);
      }
    }
  }
  if (st) {
    for (size_t i = 0; i < nout; i++)
      eddy_eval_value_release(&out[i]);
  }
  frame_destroy(&f);
  s->nesting--;
  return st;
}

/// ---- Control flow ---------------------------------------------------------

EVAL_COLD static eddy_status_t read_pred(const eddy_op_t *op, const eddy_eval_value_t *v,
                               const char *what, bool *out) {
  if (v->kind != EDDY_EVAL_TENSOR || v->tensor.dtype != EDDY_RT_I1 ||
      eddy_rt_tensor_numel(&v->tensor) != 1) {
    char got[256];
    return eddy_eval_op_error(op, EDDY_ERR_INVALID_ARGUMENT,
                              "%s must be a single i1 value, got %s", what,
                              value_str(v, got, sizeof got));
  }
  *out = eddy_rt_tensor_get_i64(&v->tensor, 0) != 0;
  return NULL;
}

/// The loop values must keep matching the loop's declared types.
EVAL_COLD static eddy_status_t check_loop_values(const eddy_op_t *op,
                                       const eddy_eval_value_t *vals,
                                       int64_t iter) {
  for (uint32_t i = 0; i < op->num_results; i++) {
    const eddy_type_t *t = op->results[i].type;
    if (eddy_eval_value_matches(&vals[i], t))
      continue;
    char want[256], got[256];
    type_str(t, want, sizeof want);
    value_str(&vals[i], got, sizeof got);
    if (iter < 0)
      return eddy_eval_op_error(op, EDDY_ERR_INVALID_ARGUMENT,
                                "initial value of loop value #%u is %s, but "
                                "the loop declares %s",
                                i, got, want);
    return eddy_eval_op_error(op, EDDY_ERR_INVALID_ARGUMENT,
                              "iteration %" PRId64 " yields %s for loop value "
                              "#%u, but the loop declares %s",
                              iter, got, i, want);
  }
  return NULL;
}

eddy_status_t eddy_eval_ctl_while(eval_state_t *s, eval_frame_t *f,
                                  const eval_handler_t *h,
                                  const eddy_op_t *op,
                                  const eddy_eval_value_t *const *operands,
                                  eddy_eval_value_t *results) {
  size_t n = op->num_operands;
  if (n != op->num_results || op->num_regions != 2)
    return eddy_eval_op_error(op, EDDY_ERR_INTERNAL, "malformed loop");
  const eddy_block_t *cond = eddy_ctl_while_cond(op);
  const eddy_block_t *body = eddy_ctl_while_body(op);
  const eddy_attr_t *max_attr = eddy_ir_op_attr(op, "maximum_iterations");
  bool has_max = max_attr && max_attr->kind == EDDY_ATTR_INT;
  int64_t max = has_max ? max_attr->u.i : 0;

  // carried: the current loop values; args: what a region gets (moved in).
  eddy_eval_value_t *carried = calloc(2 * n + 1, sizeof(*carried));
  if (!carried)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  eddy_eval_value_t *args = carried + n;
  for (size_t i = 0; i < n; i++)
    eddy_eval_value_share(operands[i], &carried[i]);
  eddy_status_t st = check_loop_values(op, carried, -1);
  for (int64_t iter = 0; !st; iter++) {
    for (size_t i = 0; i < n; i++)
      eddy_eval_value_share(&carried[i], &args[i]);
    eddy_eval_value_t pred;
    st = eval_block(s, f, op, cond, args, n, "ctl.condition", &pred, 1);
    if (st) {
      note_at(st, op,
              "in the condition of iteration %" PRId64 " of 'ctl.while'",
              iter);
      break;
    }
    bool more = false;
    st = read_pred(op, &pred, "the loop condition", &more);
    eddy_eval_value_release(&pred);
    // maximum_iterations is AND-ed with the condition, as in TensorFlow:
    // the condition still runs, and the loop stops without an error.
    if (st || !more || (has_max && iter >= max))
      break;
    if (iter >= s->opts.max_iterations) {
      st = eddy_eval_op_error(
          op, EDDY_ERR_RESOURCE,
          "did not finish within %" PRId64 " iterations (the evaluator's "
          "iteration limit, --max-iterations)",
          s->opts.max_iterations);
      break;
    }
    // The body takes the loop values over, so that a list it extends is
    // held once (see eddy_eval_take_list).
    for (size_t i = 0; i < n; i++) {
      args[i] = carried[i];
      memset(&carried[i], 0, sizeof(carried[i]));
    }
    st = eval_block(s, f, op, body, args, n, "ctl.yield", carried, n);
    if (st) {
      note_at(st, op, "in iteration %" PRId64 " of 'ctl.while'", iter);
      break;
    }
    st = check_loop_values(op, carried, iter);
  }
  for (size_t i = 0; i < n; i++) {
    if (!st)
      results[i] = carried[i];
    else
      eddy_eval_value_release(&carried[i]);
  }
  free(carried);
  return st;
}

eddy_status_t eddy_eval_ctl_if(eval_state_t *s, eval_frame_t *f,
                                  const eval_handler_t *h,
                               const eddy_op_t *op,
                               const eddy_eval_value_t *const *operands,
                               eddy_eval_value_t *results) {
  if (op->num_operands != 1 || op->num_regions != 2)
    return eddy_eval_op_error(op, EDDY_ERR_INTERNAL, "malformed conditional");
  bool pred = false;
  EDDY_RETURN_IF_ERROR(read_pred(op, operands[0], "the predicate", &pred));
  const eddy_block_t *b = pred ? eddy_ctl_if_then(op) : eddy_ctl_if_else(op);
  eddy_status_t st = eval_block(s, f, op, b, NULL, 0, "ctl.yield", results,
                                op->num_results);
  if (st)
    note_at(st, op, "in the %s branch of 'ctl.if'", pred ? "then" : "else");
  return st;
}

static const char *func_name(const eddy_op_t *func) {
  const char *n = eddy_ir_func_name(func);
  return n ? n : "?";
}

/// "@main -> @f -> @f -> ... -> @f": the entry, the calls on the stack, and
/// the call being made; long chains keep their ends.
static void format_chain(const eval_state_t *s, const char *callee,
                         eddy_buf_t *out) {
  int32_t total = s->call_depth + 2;
  for (int32_t k = 0; k < total; k++) {
    if (total > 10 && k == 4) {
      eddy_buf_printf(out, " -> ... (%d more) ...", total - 8);
      k = total - 4;
    }
    const char *name = k == 0                ? func_name(s->entry)
                       : k == total - 1      ? callee
                                             : eddy_ctl_call_callee(s->calls[k - 1]);
    eddy_buf_printf(out, "%s@%s", k ? " -> " : "", name ? name : "?");
  }
}

/// A function's results must match its declared result types.
EVAL_COLD static eddy_status_t check_func_results(const eddy_op_t *func,
                                                  const eddy_eval_value_t *out,
                                                  size_t nout) {
  const eddy_type_t *fty = eddy_ir_func_type(func);
  for (size_t i = 0; i < nout; i++) {
    if (eddy_eval_value_matches(&out[i], fty->outputs[i]))
      continue;
    char want[256], got[256];
    return eddy_eval_op_error(
        eddy_ir_block_terminator(eddy_ir_func_entry(func)),
        EDDY_ERR_INVALID_ARGUMENT,
        "@%s returns %s as result #%zu, but its type declares %s",
        func_name(func), value_str(&out[i], got, sizeof got), i,
        type_str(fty->outputs[i], want, sizeof want));
  }
  return NULL;
}

/// The arguments of a call must match the callee's declared types.
EVAL_COLD static eddy_status_t
check_call_args(const eddy_op_t *op, const char *callee_name,
                const eddy_type_t *fty,
                const eddy_eval_value_t *const *operands) {
  for (uint32_t i = 0; i < op->num_operands; i++) {
    if (eddy_eval_value_matches(operands[i], fty->inputs[i]))
      continue;
    char want[256], got[256];
    return eddy_eval_op_error(op, EDDY_ERR_INVALID_ARGUMENT,
                              "argument #%u of @%s is %s, but @%s declares %s",
                              i, callee_name,
                              value_str(operands[i], got, sizeof got),
                              callee_name,
                              type_str(fty->inputs[i], want, sizeof want));
  }
  return NULL;
}

/// Runs func on args (borrowed) into out[0..nout).
static eddy_status_t eval_function(eval_state_t *s, const eddy_op_t *func,
                                   const eddy_eval_value_t *const *args,
                                   size_t nargs, eddy_eval_value_t *out,
                                   size_t nout) {
  const eddy_block_t *entry = eddy_ir_func_entry(func);
  const eddy_type_t *fty = eddy_ir_func_type(func);
  if (!entry || !fty || fty->num_outputs != nout)
    return eddy_eval_op_error(func, EDDY_ERR_INTERNAL, "malformed function");
  eddy_eval_value_t *owned = calloc(nargs + 1, sizeof(*owned));
  if (!owned)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  for (size_t i = 0; i < nargs; i++)
    eddy_eval_value_share(args[i], &owned[i]);
  eddy_status_t st =
      eval_block(s, NULL, func, entry, owned, nargs, "func.return", out, nout);
  free(owned);
  if (!st)
    st = check_func_results(func, out, nout);
  if (st) {
    for (size_t i = 0; i < nout; i++)
      eddy_eval_value_release(&out[i]);
  }
  return st;
}

eddy_status_t eddy_eval_ctl_call(eval_state_t *s, eval_frame_t *f,
                                  const eval_handler_t *h,
                                 const eddy_op_t *op,
                                 const eddy_eval_value_t *const *operands,
                                 eddy_eval_value_t *results) {
  const char *callee_name = eddy_ctl_call_callee(op);
  const eddy_op_t *callee = eddy_ctl_call_resolve(op);
  if (!callee)
    return eddy_eval_op_error(op, EDDY_ERR_NOT_FOUND,
                              "calls @%s, which is not a function of the "
                              "module",
                              callee_name ? callee_name : "?");
  const eddy_type_t *fty = eddy_ir_func_type(callee);
  if (!fty || fty->num_inputs != op->num_operands ||
      fty->num_outputs != op->num_results)
    return eddy_eval_op_error(op, EDDY_ERR_INTERNAL,
                              "does not match the signature of @%s",
                              callee_name);
  EDDY_RETURN_IF_ERROR(check_call_args(op, callee_name, fty, operands));
  if (s->call_depth >= s->opts.max_call_depth) {
    eddy_buf_t chain;
    eddy_buf_init(&chain);
    format_chain(s, callee_name, &chain);
    eddy_status_t st = eddy_eval_op_error(
        op, EDDY_ERR_RESOURCE,
        "call depth limit of %d reached (--max-call-depth): %s",
        s->opts.max_call_depth, chain.data);
    eddy_buf_destroy(&chain);
    return st;
  }
  const eddy_op_t **calls =
      realloc(s->calls, ((size_t)s->call_depth + 1) * sizeof(*calls));
  if (!calls)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  s->calls = calls;
  s->calls[s->call_depth++] = op;
  eddy_status_t st = eval_function(s, callee, operands, op->num_operands,
                                   results, op->num_results);
  s->call_depth--;
  if (st)
    note_at(st, op, "in @%s called", callee_name);
  return st;
}

/// ---- Entry points -----------------------------------------------------------

eddy_eval_opts_t eddy_eval_opts_default(void) {
  eddy_eval_opts_t o;
  memset(&o, 0, sizeof(o));
  o.max_iterations = EDDY_EVAL_DEFAULT_MAX_ITERATIONS;
  o.max_call_depth = EDDY_EVAL_DEFAULT_MAX_CALL_DEPTH;
  return o;
}

eddy_status_t eddy_eval_check_args(const eddy_op_t *func,
                                   const eddy_eval_value_t *args,
                                   size_t num_args) {
  if (!eddy_ir_op_is(func, "func.func"))
    return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                              "'%s' is not a func.func", func->name->str);
  const eddy_type_t *fty = eddy_ir_func_type(func);
  const char *name = func_name(func);
  if (!fty)
    return eddy_eval_op_error(func, EDDY_ERR_INTERNAL, "has no function type");
  if (fty->num_inputs != num_args)
    return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                              "@%s takes %u argument%s, got %zu", name,
                              fty->num_inputs, fty->num_inputs == 1 ? "" : "s",
                              num_args);
  for (size_t i = 0; i < num_args; i++) {
    const eddy_eval_value_t *v = &args[i];
    const eddy_type_t *t = fty->inputs[i];
    char want[256], got[256], pos[32];
    const char *an = eddy_ir_func_arg_label(func, i, pos, sizeof pos);
    type_str(t, want, sizeof want);
    if (v->kind == EDDY_EVAL_TENSOR) {
      eddy_rt_status_t rs = eddy_rt_tensor_validate(&v->tensor, "input", "tensor");
      if (rs) {
        eddy_status_t st = eddy_status_create(
            EDDY_ERR_INVALID_ARGUMENT, "@%s: argument %zu '%s': %s", name,
            i, an, eddy_rt_status_message(rs));
        eddy_rt_status_destroy(rs);
        return st;
      }
    }
    if (!eddy_eval_value_matches(v, t))
      return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                                "@%s: argument %zu '%s': expected %s, got %s",
                                name, i, an, want, value_str(v, got, sizeof got));
  }
  return NULL;
}

void eddy_eval_state_destroy(eval_state_t *s) {
  for (size_t i = 0; i < s->consts.cap; i++) {
    if (!s->consts.keys[i])
      continue;
    eddy_rt_tensor_t *t = s->consts.vals[i];
    eddy_rt_tensor_release(t);
    free(t);
  }
  eddy_ptrmap_destroy(&s->consts);
  eddy_ptrmap_destroy(&s->takes);
  free(s->calls);
}

eddy_status_t eddy_eval_func(eddy_rt_ctx_t *rt, const eddy_op_t *func,
                             const eddy_eval_opts_t *opts,
                             const eddy_eval_value_t *args, size_t num_args,
                             eddy_eval_value_t *out_results,
                             size_t num_results) {
  if (num_results)
    memset(out_results, 0, num_results * sizeof(*out_results));
  EDDY_RETURN_IF_ERROR(eddy_eval_check_args(func, args, num_args));
  const eddy_type_t *fty = eddy_ir_func_type(func);
  if (fty->num_outputs != num_results)
    return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                              "@%s returns %u value%s, room was given for %zu",
                              func_name(func), fty->num_outputs,
                              fty->num_outputs == 1 ? "" : "s", num_results);
  eval_state_t s;
  memset(&s, 0, sizeof(s));
  s.rt = rt;
  s.opts = opts ? *opts : eddy_eval_opts_default();
  if (s.opts.max_iterations < 0 || s.opts.max_call_depth < 0)
    return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                              "evaluator limits must be >= 0 (max_iterations "
                              "%" PRId64 ", max_call_depth %d)",
                              s.opts.max_iterations, s.opts.max_call_depth);
  s.entry = func;
  s.stack_base = (uintptr_t)__builtin_frame_address(0);
  eddy_ptrmap_init(&s.consts);
  eddy_ptrmap_init(&s.takes);

  const eddy_eval_value_t *small[8] = {NULL};
  const eddy_eval_value_t **argp =
      num_args <= 8 ? small : malloc(num_args * sizeof(*argp));
  eddy_status_t st = NULL;
  if (!argp) {
    st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  } else {
    for (size_t i = 0; i < num_args; i++)
      argp[i] = &args[i];
    st = eval_function(&s, func, argp, num_args, out_results, num_results);
    if (argp != small)
      free(argp);
  }
  eddy_eval_state_destroy(&s);
  return st;
}

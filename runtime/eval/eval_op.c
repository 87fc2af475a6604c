/// Running one op outside eddy_eval_func (eval.h, "Running one op"): the
/// evaluator's handler for the op, called on operands the caller holds.
#include "runtime/eval/eval_internal.h"

#include <stdlib.h>
#include <string.h>

struct eddy_eval_op_runner {
  eval_state_t s;
};

bool eddy_eval_op_is_supported(const eddy_op_t *op) {
  return eddy_eval_handler(op) != NULL;
}

eddy_eval_op_runner_t *eddy_eval_op_runner_create(eddy_rt_ctx_t *rt,
                                                  const eddy_op_t *func) {
  eddy_eval_op_runner_t *r = calloc(1, sizeof(*r));
  if (!r)
    return NULL;
  r->s.rt = rt;
  r->s.opts = eddy_eval_opts_default();
  r->s.entry = func;
  eddy_ptrmap_init(&r->s.consts);
  eddy_ptrmap_init(&r->s.takes);
  return r;
}

void eddy_eval_op_runner_destroy(eddy_eval_op_runner_t *r) {
  if (!r)
    return;
  eddy_eval_state_destroy(&r->s);
  free(r);
}

static eddy_status_t oom(void) {
  return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
}

/// True when operand k's IR value is no other operand of op.
static bool sole_operand(const eddy_op_t *op, uint32_t k) {
  for (uint32_t j = 0; j < op->num_operands; j++)
    if (j != k && op->operands[j].value == op->operands[k].value)
      return false;
  return true;
}

static eddy_status_t op_run(eddy_eval_op_runner_t *r, const eddy_op_t *op,
                            const eddy_eval_value_t *const *operands,
                            eddy_eval_value_t *const *owned, uint64_t take,
                            eddy_eval_value_t *out_results) {
  eval_state_t *s = &r->s;
  uint32_t nout = op->num_results;
  if (nout)
    memset(out_results, 0, nout * sizeof(*out_results));
  // A stack or TensorArray handle (typed like a list in the IR) reaches
  // only the interpreter's resource ops; the kernels cannot take one.
  for (uint32_t k = 0; k < op->num_operands; k++)
    if (operands[k]->kind == EDDY_EVAL_RESOURCE)
      return eddy_eval_op_error(op, EDDY_ERR_INVALID_ARGUMENT,
                                "operand #%u is a stack or TensorArray "
                                "handle, which only the tf.Stack* and "
                                "tf.TensorArray* ops take",
                                k);
  const eval_handler_t *h = eddy_eval_handler(op);
  if (!h)
    return eddy_eval_op_error(op, EDDY_ERR_UNSUPPORTED,
                              "the evaluator has no kernel for this op");
  // The evaluator bounds its recursion (ctl.call) by the stack used since
  // this call.
  s->stack_base = (uintptr_t)__builtin_frame_address(0);
  // The handlers that consume a TensorList look it up in the frame by IR
  // value: give them a frame holding a reference of their own, so that the
  // caller's value stays intact (the kernel copies on write), or the
  // caller's own reference for a list it gives over (take).
  eval_frame_t f;
  memset(&f, 0, sizeof(f));
  eddy_ptrmap_init(&f.map);
  eddy_status_t st = NULL;
  uint32_t nin = op->num_operands;
  const eddy_eval_value_t *small[8];
  const eddy_eval_value_t **in = small;
  if (nin > 8 && !(in = malloc(nin * sizeof(*in))))
    return oom();
  if (nin)
    memcpy(in, operands, nin * sizeof(*in));
  for (uint32_t k = 0; k < nin && !st; k++) {
    if (operands[k]->kind != EDDY_EVAL_LIST ||
        eddy_ptrmap_has(&f.map, op->operands[k].value))
      continue;
    if (f.len == f.cap) {
      size_t nc = f.cap ? f.cap * 2 : 4;
      eddy_eval_value_t *ns = realloc(f.slots, nc * sizeof(*ns));
      if (!ns) {
        st = oom();
        break;
      }
      f.slots = ns;
      f.cap = nc;
    }
    if (owned && k < 64 && (take >> k & 1) && sole_operand(op, k)) {
      f.slots[f.len] = *owned[k];
      memset(owned[k], 0, sizeof(*owned[k]));
    } else {
      eddy_eval_value_share(operands[k], &f.slots[f.len]);
    }
    f.len++;
    eddy_ptrmap_put(&f.map, op->operands[k].value, (void *)(uintptr_t)f.len);
  }
  // Handlers read a moved list where the frame holds it (the caller's
  // value is zeroed; the frame's slots stay put once filled).
  for (uint32_t k = 0; owned && k < nin && k < 64 && !st; k++) {
    uintptr_t idx = (uintptr_t)eddy_ptrmap_get(&f.map, op->operands[k].value);
    if ((take >> k & 1) && idx)
      in[k] = &f.slots[idx - 1];
  }
  if (!st)
    st = h->fn(s, &f, h, op, in, out_results);
  if (in != small)
    free(in);
  for (size_t i = 0; i < f.len; i++)
    eddy_eval_value_release(&f.slots[i]);
  free(f.slots);
  eddy_ptrmap_destroy(&f.map);
  for (uint32_t i = 0; i < nout && !st; i++) {
    if (eddy_eval_value_matches(&out_results[i], op->results[i].type))
      continue;
    eddy_buf_t d;
    eddy_buf_init(&d);
    eddy_eval_value_describe(&out_results[i], &d);
    eddy_buf_puts(&d, " does not match the declared type ");
    eddy_ir_type_print(op->results[i].type, &d);
    st = eddy_eval_op_error(op, EDDY_ERR_INVALID_ARGUMENT, "result #%u: %s",
                            i, d.data);
    eddy_buf_destroy(&d);
  }
  if (st)
    for (uint32_t i = 0; i < nout; i++)
      eddy_eval_value_release(&out_results[i]);
  return st;
}

eddy_status_t eddy_eval_op_run(eddy_eval_op_runner_t *r, const eddy_op_t *op,
                               const eddy_eval_value_t *const *operands,
                               eddy_eval_value_t *out_results) {
  return op_run(r, op, operands, NULL, 0, out_results);
}

eddy_status_t eddy_eval_op_run_take(eddy_eval_op_runner_t *r,
                                    const eddy_op_t *op,
                                    eddy_eval_value_t *const *operands,
                                    uint64_t take,
                                    eddy_eval_value_t *out_results) {
  return op_run(r, op, (const eddy_eval_value_t *const *)operands, operands,
                take, out_results);
}

void eddy_eval_op_runner_stats(const eddy_eval_op_runner_t *r,
                               eddy_eval_op_stats_t *out_stats) {
  out_stats->list_copies = r->s.list_copies;
  out_stats->list_items_copied = r->s.list_items_copied;
}

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

eddy_status_t eddy_eval_op_run(eddy_eval_op_runner_t *r, const eddy_op_t *op,
                               const eddy_eval_value_t *const *operands,
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
  // caller's value stays intact (the kernel copies on write).
  eval_frame_t f;
  memset(&f, 0, sizeof(f));
  eddy_ptrmap_init(&f.map);
  eddy_status_t st = NULL;
  for (uint32_t k = 0; k < op->num_operands && !st; k++) {
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
    eddy_eval_value_share(operands[k], &f.slots[f.len++]);
    eddy_ptrmap_put(&f.map, op->operands[k].value, (void *)(uintptr_t)f.len);
  }
  if (!st)
    st = h->fn(s, &f, h, op, operands, out_results);
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

/// Fuzz target: autodiff. The input is IR text; a module that parses and
/// verifies has each of its functions (the first few) differentiated with
/// respect to every float argument, and that gradient again (second order);
/// the module with the gradients must verify. A refusal (an op without a
/// gradient, no float argument) is fine.
#include "tests/fuzz/fuzz.h"

#include "autodiff/ad.h"

#include <stdio.h>
#include <string.h>

/// Functions differentiated per input, bounding the time of one run.
#define FUZZ_GRAD_MAX_FUNCS 4
#define FUZZ_GRAD_MAX_WRT 64

/// Differentiates @name with respect to every float argument; true when
/// that worked (then the module must verify).
static bool differentiate(eddy_module_t *m, const char *name) {
  eddy_op_t *f = eddy_ir_module_lookup_func(m, name);
  if (!f)
    return false;
  size_t wrt[FUZZ_GRAD_MAX_WRT], nw = 0;
  eddy_status_t st = eddy_ad_parse_wrt("all", f, wrt, FUZZ_GRAD_MAX_WRT, &nw);
  if (!st)
    st = eddy_ad_grad(m, name, wrt, nw, NULL, NULL);
  if (st) {
    eddy_status_destroy(st);
    return false;
  }
  eddy_status_t vs = eddy_ir_verify_module(m);
  if (vs)
    eddy_fuzz_fail("@%s_grad does not verify: %s", name,
                   eddy_status_message(vs));
  return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  eddy_ctx_t *ctx = eddy_fuzz_ctx_create();
  if (!ctx)
    return 0;
  eddy_module_t *m = eddy_fuzz_parse(ctx, data, size);
  if (!m) {
    eddy_ir_ctx_destroy(ctx);
    return 0;
  }
  // The names first: every gradient is appended to the module.
  char names[FUZZ_GRAD_MAX_FUNCS][256];
  size_t n = 0;
  for (eddy_op_t *op = eddy_ir_module_body(m)->first;
       op && n < FUZZ_GRAD_MAX_FUNCS; op = op->next) {
    if (!eddy_ir_op_is(op, "func.func"))
      continue;
    const char *name = eddy_ir_func_name(op);
    if (!name || strlen(name) >= sizeof names[0])
      continue;
    strcpy(names[n++], name);
  }
  for (size_t i = 0; i < n; i++) {
    // The gradient, then the gradient of the gradient (second order).
    if (differentiate(m, names[i])) {
      char grad_name[sizeof names[0] + 8];
      snprintf(grad_name, sizeof grad_name, "%.255s_grad", names[i]);
      differentiate(m, grad_name);
    }
  }
  eddy_ir_module_destroy(m);
  eddy_ir_ctx_destroy(ctx);
  return 0;
}

/// Fuzz target: autodiff. The input is IR text; a module that parses and
/// verifies has each of its functions (the first few) differentiated with
/// respect to every float argument, and the module with the gradients must
/// verify. A refusal (an op without a gradient, no float argument) is fine.
#include "tests/fuzz/fuzz.h"

#include "autodiff/ad.h"

#include <string.h>

/// Functions differentiated per input, bounding the time of one run.
#define FUZZ_GRAD_MAX_FUNCS 4
#define FUZZ_GRAD_MAX_WRT 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  eddy_ctx_t *ctx = eddy_fuzz_ctx_create();
  if (!ctx)
    return 0;
  eddy_module_t *m = NULL;
  eddy_status_t st =
      eddy_ir_parse_module(ctx, "fuzz.eddy", (const char *)data, size, &m);
  if (!st)
    st = eddy_ir_verify_module(m);
  if (st) {
    eddy_fuzz_ignore(st);
    if (m)
      eddy_ir_module_destroy(m);
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
    eddy_op_t *f = eddy_ir_module_lookup_func(m, names[i]);
    size_t wrt[FUZZ_GRAD_MAX_WRT], nw = 0;
    st = eddy_ad_parse_wrt("all", f, wrt, FUZZ_GRAD_MAX_WRT, &nw);
    eddy_op_t *gf = NULL;
    if (!st)
      st = eddy_ad_grad(m, names[i], wrt, nw, NULL, &gf);
    if (!st) {
      eddy_status_t vs = eddy_ir_verify_module(m);
      if (vs)
        eddy_fuzz_fail("@%s_grad does not verify: %s", names[i],
                       eddy_status_message(vs));
    }
    eddy_fuzz_ignore(st);
  }
  eddy_ir_module_destroy(m);
  eddy_ir_ctx_destroy(ctx);
  return 0;
}

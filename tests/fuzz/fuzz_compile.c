/// Fuzz target: the CPU backend's emitter. The input is IR text; a module
/// that parses and verifies has each of its functions (the first few)
/// emitted as MLIR (eddy_cpu_emit_mlir, `eddy compile --emit=mlir`), and
/// emitted MLIR must parse and verify in MLIR, as the backend's compile step
/// parses it next. Nothing is lowered or run through LLVM: that would be
/// too slow for a fuzzer. UNSUPPORTED (an op or a dynamic shape the backend
/// does not compile) is fine.
#include "tests/fuzz/fuzz.h"

#include "backend-cpu/cpu.h"

#include <mlir-c/Diagnostics.h>
#include <mlir-c/IR.h>
#include <mlir-c/RegisterEverything.h>

#include <string.h>

/// Functions emitted per input, bounding the time of one run.
#define FUZZ_COMPILE_MAX_FUNCS 4

static void append_text(MlirStringRef s, void *user) {
  eddy_buf_append(user, s.data, s.length);
}

/// Collects MLIR's diagnostics, one per line, into an eddy_buf_t.
static MlirLogicalResult collect_diag(MlirDiagnostic d, void *user) {
  eddy_buf_puts(user, "\n  ");
  mlirDiagnosticPrint(d, append_text, user);
  return mlirLogicalResultSuccess();
}

/// One MLIR context for the whole run: registering every dialect costs
/// far more than a parse.
static MlirContext mlir_ctx(eddy_buf_t *diags) {
  static MlirContext ctx;
  static bool ready;
  static MlirDiagnosticHandlerID handler;
  static bool has_handler;
  if (!ready) {
    ctx = mlirContextCreateWithThreading(false);
    MlirDialectRegistry reg = mlirDialectRegistryCreate();
    mlirRegisterAllDialects(reg);
    mlirContextAppendDialectRegistry(ctx, reg);
    mlirDialectRegistryDestroy(reg);
    mlirContextLoadAllAvailableDialects(ctx);
    ready = true;
  }
  if (has_handler)
    mlirContextDetachDiagnosticHandler(ctx, handler);
  handler = mlirContextAttachDiagnosticHandler(ctx, collect_diag, diags, NULL);
  has_handler = true;
  return ctx;
}

static void check_emitted(const char *func, const eddy_buf_t *text) {
  eddy_buf_t diags;
  eddy_buf_init(&diags);
  MlirContext ctx = mlir_ctx(&diags);
  MlirModule mod = mlirModuleCreateParse(
      ctx, mlirStringRefCreate(text->data ? text->data : "", text->len));
  if (mlirModuleIsNull(mod))
    eddy_fuzz_fail("the MLIR emitted for @%s does not parse:%s\n--- "
                   "emitted:\n%s",
                   func, diags.data ? diags.data : "",
                   text->data ? text->data : "");
  mlirModuleDestroy(mod);
  eddy_buf_destroy(&diags);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  eddy_ctx_t *ctx = eddy_fuzz_ctx_create();
  if (!ctx)
    return 0;
  eddy_module_t *m = eddy_fuzz_parse(ctx, data, size);
  size_t n = 0;
  for (eddy_op_t *op = m ? eddy_ir_module_body(m)->first : NULL;
       op && n < FUZZ_COMPILE_MAX_FUNCS; op = op->next) {
    if (!eddy_ir_op_is(op, "func.func"))
      continue;
    n++;
    const char *name = eddy_ir_func_name(op);
    eddy_cpu_opts_t opts = eddy_cpu_opts_default();
    eddy_buf_t text;
    eddy_buf_init(&text);
    eddy_status_t es = eddy_cpu_emit_mlir(m, name, &opts, &text);
    if (!es)
      check_emitted(name, &text);
    eddy_fuzz_ignore(es);
    eddy_buf_destroy(&text);
  }
  if (m)
    eddy_ir_module_destroy(m);
  eddy_ir_ctx_destroy(ctx);
  return 0;
}

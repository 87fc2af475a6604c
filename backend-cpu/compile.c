/// The MLIR and LLVM half of the backend: parse the emitted MLIR text, lower
/// it to the LLVM dialect with upstream passes, then either translate it to
/// LLVM IR, optimize and write an object file, or JIT it with MLIR's
/// ExecutionEngine. All MlirLogicalResult / LLVM error conversions to
/// eddy_status_t happen in this file.
#include "backend-cpu/codegen.h"
#include "runtime/entry_abi.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/Diagnostics.h>
#include <mlir-c/ExecutionEngine.h>
#include <mlir-c/IR.h>
#include <mlir-c/Pass.h>
#include <mlir-c/RegisterEverything.h>
#include <mlir-c/Target/LLVMIR.h>

#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "backend-cpu/outline.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/// Every function of the runtime's ABI, by name, for the JIT.
#define JIT_SYM(fn, ret, params) {#fn, (void *)fn},
static const struct {
  const char *name;
  void *fn;
} k_jit_syms[] = {EDDY_RT_ENTRY_ABI(JIT_SYM) EDDY_RT_ENTRY_CUDA_ABI(JIT_SYM)
                      EDDY_RT_MGPU_ABI(JIT_SYM)};
#undef JIT_SYM

// runtime/eddyrt.h declares each function with the types that
// runtime/entry_abi.h gives it, from which the emitted declarations come.
#define ABI_CHECK(fn, ret, params)                                             \
  _Static_assert(__builtin_types_compatible_p(__typeof__(fn), ret params),     \
                 #fn " in runtime/eddyrt.h differs from runtime/entry_abi.h");
EDDY_RT_ENTRY_ABI(ABI_CHECK)
EDDY_RT_ENTRY_CUDA_ABI(ABI_CHECK)
EDDY_RT_MGPU_ABI(ABI_CHECK)
#undef ABI_CHECK

/// The lowering pipeline from func/scf/arith/math/memref to the LLVM
/// dialect. math ops without an LLVM intrinsic (tanh, log1p...) become libm
/// calls. The passes that rewrite with MLIR's greedy driver
/// (convert-math-to-libm, expand-strided-metadata) run while branches and
/// loops are still scf ops: that driver also merges identical blocks of a
/// CFG, and MLIR 19's merging can rewrite an operand of a merged block to
/// another block argument (a store into a branch's result then became a
/// store into the value the branch read: nested ctl.if results in a
/// function with dynamic shapes came out as garbage; fixed in MLIR 20,
/// tests/lit/cpu/branch-merge.test). convert-scf-to-cf comes after them;
/// canonicalize merges no blocks (its default since MLIR 19).
static const char k_pipeline[] =
    "builtin.module(convert-math-to-llvm,convert-math-to-libm,"
    "expand-strided-metadata,convert-scf-to-cf,canonicalize,cse,"
    "finalize-memref-to-llvm,convert-arith-to-llvm,convert-cf-to-llvm,"
    "convert-func-to-llvm,reconcile-unrealized-casts)";

/// MLIR's pass registry and LLVM's target registry are process-wide; they
/// are filled once.
static pthread_once_t g_init_once = PTHREAD_ONCE_INIT;

static void init_once(void) {
  mlirRegisterAllPasses();
  LLVMInitializeX86TargetInfo();
  LLVMInitializeX86Target();
  LLVMInitializeX86TargetMC();
  LLVMInitializeX86AsmPrinter();
}

static MlirStringRef sref(const char *s) {
  return mlirStringRefCreate(s, strlen(s));
}

static void diag_append(MlirStringRef s, void *user) {
  eddy_buf_append((eddy_buf_t *)user, s.data, s.length);
}

static MlirLogicalResult diag_handler(MlirDiagnostic d, void *user) {
  eddy_buf_t *b = user;
  if (b->len)
    eddy_buf_puts(b, "\n");
  mlirDiagnosticPrint(d, diag_append, b);
  return mlirLogicalResultSuccess();
}

typedef struct mlir_state {
  MlirContext ctx;
  MlirModule module;
  eddy_buf_t diags;
} mlir_state_t;

static void mlir_state_destroy(mlir_state_t *s) {
  if (!mlirModuleIsNull(s->module))
    mlirModuleDestroy(s->module);
  if (!mlirContextIsNull(s->ctx))
    mlirContextDestroy(s->ctx);
  eddy_buf_destroy(&s->diags);
}

static eddy_status_t mlir_fail(mlir_state_t *s, const char *what) {
  return eddy_status_create(EDDY_ERR_INTERNAL, "cpu backend: %s%s%s", what,
                            s->diags.len ? ":\n" : "",
                            s->diags.len ? s->diags.data : "");
}

/// Runs the textual pass pipeline on s's module.
static eddy_status_t run_pipeline(mlir_state_t *s, const char *pipeline) {
  MlirPassManager pm = mlirPassManagerCreate(s->ctx);
  MlirOpPassManager opm = mlirPassManagerGetAsOpPassManager(pm);
  eddy_buf_t perr;
  eddy_buf_init(&perr);
  MlirLogicalResult r =
      mlirParsePassPipeline(opm, sref(pipeline), diag_append, &perr);
  if (mlirLogicalResultIsFailure(r)) {
    mlirPassManagerDestroy(pm);
    eddy_status_t st = eddy_status_create(EDDY_ERR_INTERNAL,
                                          "cpu backend: bad pass pipeline: %s",
                                          perr.data ? perr.data : "");
    eddy_buf_destroy(&perr);
    return st;
  }
  eddy_buf_destroy(&perr);
  r = mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(s->module));
  mlirPassManagerDestroy(pm);
  if (mlirLogicalResultIsFailure(r))
    return mlir_fail(s, "lowering to the LLVM dialect failed");
  return NULL;
}

/// On a host with AVX-512, the CPU target's loops vectorize 16 floats wide,
/// not LLVM's default of 8 for Intel's server cores (kept from 512-bit
/// vectors for the clock slowdown of older ones): the inline exp and tanh
/// of eddy's elementwise kernels are bound by arithmetic, which two 512-bit
/// FMA units do twice as much of per instruction (the `nested` benchmark's
/// tanh steps on the Xeon of bench/README.md). Each function defined at the
/// top of module gets "prefer-vector-width"="512" (LLVM's passthrough
/// attribute), for the JIT and the object file alike.
static void prefer_wide_vectors(MlirModule module) {
  char *features = LLVMGetHostCPUFeatures();
  bool wide = features && strstr(features, "+avx512f");
  LLVMDisposeMessage(features);
  if (!wide)
    return;
  MlirContext ctx = mlirModuleGetContext(module);
  MlirAttribute pair =
      mlirAttributeParseGet(ctx, sref("[\"prefer-vector-width\", \"512\"]"));
  MlirStringRef name = sref("passthrough");
  for (MlirOperation op = mlirBlockGetFirstOperation(mlirModuleGetBody(module));
       !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
    MlirStringRef on = mlirIdentifierStr(mlirOperationGetName(op));
    if (on.length != 9 || memcmp(on.data, "llvm.func", 9) != 0 ||
        mlirBlockIsNull(mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0))))
      continue;
    MlirAttribute old = mlirOperationGetAttributeByName(op, name);
    intptr_t n = mlirAttributeIsNull(old) || !mlirAttributeIsAArray(old)
                     ? 0
                     : mlirArrayAttrGetNumElements(old);
    MlirAttribute *elems = malloc(sizeof(MlirAttribute) * (size_t)(n + 1));
    if (!elems)
      return;
    for (intptr_t i = 0; i < n; i++)
      elems[i] = mlirArrayAttrGetElement(old, i);
    elems[n] = pair;
    mlirOperationSetAttributeByName(op, name,
                                    mlirArrayAttrGet(ctx, n + 1, elems));
    free(elems);
  }
}

static MlirWalkResult mark_contract(MlirOperation op, void *user) {
  static const char *const ops[] = {"arith.mulf", "arith.addf", "arith.subf"};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (cpu_op_is(op, ops[i])) {
      mlirOperationSetInherentAttributeByName(op, cpu_sref("fastmath"),
                                              *(MlirAttribute *)user);
      break;
    }
  return MlirWalkResultAdvance;
}

/// eddy_cpu_opts_t.fp_contract: every floating-point multiply, add and
/// subtract carries arith's `contract` flag, which becomes LLVM's, so the
/// code generator may fuse a multiply into the add or subtract that reads
/// it (an FMA where the CPU has one).
static void allow_contraction(MlirModule m) {
  MlirAttribute contract = mlirAttributeParseGet(
      mlirModuleGetContext(m), cpu_sref("#arith.fastmath<contract>"));
  mlirOperationWalk(mlirModuleGetOperation(m), mark_contract, &contract,
                    MlirWalkPreOrder);
}

/// Emits, parses and lowers @entry to the LLVM dialect as cg says (NULL:
/// the CPU target's pipeline), calling cg's hooks.
static eddy_status_t lower(const eddy_module_t *m, const char *entry,
                           const eddy_cpu_opts_t *opts,
                           const eddy_cpu_codegen_t *cg, mlir_state_t *s) {
  pthread_once(&g_init_once, init_once);
  memset(s, 0, sizeof *s);
  eddy_buf_init(&s->diags);
  eddy_buf_t text;
  eddy_buf_init(&text);
  eddy_status_t st = eddy_cpu_emit_mlir(m, entry, opts, &text);
  if (st) {
    eddy_buf_destroy(&text);
    return st;
  }
  s->ctx = mlirContextCreateWithThreading(false);
  MlirDialectRegistry reg = mlirDialectRegistryCreate();
  mlirRegisterAllDialects(reg);
  mlirContextAppendDialectRegistry(s->ctx, reg);
  mlirDialectRegistryDestroy(reg);
  mlirRegisterAllLLVMTranslations(s->ctx);
  mlirContextAttachDiagnosticHandler(s->ctx, diag_handler, &s->diags, NULL);
  s->module =
      mlirModuleCreateParse(s->ctx, mlirStringRefCreate(text.data, text.len));
  eddy_buf_destroy(&text);
  if (mlirModuleIsNull(s->module))
    return mlir_fail(s, "the emitted MLIR does not parse");
  // The plan's tasks, each a function the pool runs.
  EDDY_RETURN_IF_ERROR(cpu_tasks_outline(s->module));
  if (opts->fp_contract)
    allow_contraction(s->module);
  // The program (the CUDA form: its host code, kernels kept whole), where
  // it is large: parts of a tenth of the threshold (2000 ops by default),
  // looking inside ops of more than four parts.
  if (opts->outline_ops != SIZE_MAX) {
    size_t fn = opts->outline_ops ? opts->outline_ops : EDDY_CPU_OUTLINE_OPS;
    size_t part = fn / 10 ? fn / 10 : 1;
    EDDY_RETURN_IF_ERROR(eddy_cpu_outline(s->module, fn, part, 4 * part,
                                          opts->form == EDDY_CPU_FORM_CUDA));
  }
  if (cg && cg->prelude) {
    EDDY_RETURN_IF_ERROR(run_pipeline(s, cg->prelude));
    if (cg->after_prelude)
      EDDY_RETURN_IF_ERROR(cg->after_prelude(s->module, cg->user));
  }
  EDDY_RETURN_IF_ERROR(
      run_pipeline(s, cg && cg->pipeline ? cg->pipeline : k_pipeline));
  if (!cg && !opts->cpu)
    prefer_wide_vectors(s->module);
  if (cg && cg->hook)
    EDDY_RETURN_IF_ERROR(cg->hook(s->module, cg->user));
  return NULL;
}

static eddy_status_t llvm_error(const char *what, char *msg) {
  eddy_status_t st =
      eddy_status_create(EDDY_ERR_INTERNAL, "cpu backend: %s: %s", what,
                         msg ? msg : "unknown error");
  LLVMDisposeMessage(msg);
  return st;
}

/// LLVM's C API cannot tell whether a CPU name is valid, and an unknown one
/// makes it abort ("64-bit code requested on a subtarget that doesn't
/// support it"), so names are checked against the x86-64 CPUs LLVM 19 knows.
static const char *const k_cpus[] = {
    "x86-64",
    "x86-64-v2",
    "x86-64-v3",
    "x86-64-v4",
    "core2",
    "nehalem",
    "westmere",
    "sandybridge",
    "ivybridge",
    "haswell",
    "broadwell",
    "skylake",
    "skylake-avx512",
    "cascadelake",
    "cooperlake",
    "cannonlake",
    "icelake-client",
    "icelake-server",
    "tigerlake",
    "rocketlake",
    "alderlake",
    "raptorlake",
    "meteorlake",
    "sapphirerapids",
    "graniterapids",
    "emeraldrapids",
    "btver2",
    "bdver4",
    "znver1",
    "znver2",
    "znver3",
    "znver4",
    "znver5",
    "knl",
    "knm",
    "goldmont",
    "tremont",
    "sierraforest",
    "grandridge",
    "arrowlake",
    "lunarlake",
    "pantherlake",
};

static eddy_status_t check_cpu(const char *cpu) {
  for (size_t i = 0; i < sizeof k_cpus / sizeof k_cpus[0]; i++)
    if (strcmp(k_cpus[i], cpu) == 0)
      return NULL;
  return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                            "unknown CPU '%s' for -march (try x86-64, "
                            "x86-64-v3, skylake-avx512, znver4, or omit it "
                            "for the host CPU)",
                            cpu);
}

eddy_status_t eddy_cpu_codegen(const eddy_module_t *m, const char *entry,
                               const eddy_cpu_opts_t *opts,
                               const eddy_cpu_codegen_t *cg,
                               const char *obj_path, eddy_buf_t *out_ir) {
  eddy_cpu_opts_t dflt = eddy_cpu_opts_default();
  if (!opts)
    opts = &dflt;
  if (opts->cpu)
    EDDY_RETURN_IF_ERROR(check_cpu(opts->cpu));
  mlir_state_t s;
  eddy_status_t st = lower(m, entry, opts, cg, &s);
  if (st || (!obj_path && !out_ir)) {
    mlir_state_destroy(&s);
    return st;
  }
  LLVMContextRef lctx = LLVMContextCreate();
  LLVMModuleRef lm =
      mlirTranslateModuleToLLVMIR(mlirModuleGetOperation(s.module), lctx);
  if (!lm) {
    st = mlir_fail(&s, "translation to LLVM IR failed");
    mlir_state_destroy(&s);
    LLVMContextDispose(lctx);
    return st;
  }
  const char *triple = "x86_64-pc-linux-gnu";
  LLVMTargetRef target;
  char *msg = NULL;
  char *host_cpu = NULL, *host_features = NULL;
  LLVMTargetMachineRef tm = NULL;
  if (LLVMGetTargetFromTriple(triple, &target, &msg)) {
    st = llvm_error("no x86-64 target", msg);
    goto done;
  }
  const char *cpu = opts->cpu, *features = "";
  if (!cpu) {
    host_cpu = LLVMGetHostCPUName();
    host_features = LLVMGetHostCPUFeatures();
    cpu = host_cpu;
    features = host_features;
  }
  LLVMCodeGenOptLevel lvl = opts->opt_level <= 0   ? LLVMCodeGenLevelNone
                            : opts->opt_level == 1 ? LLVMCodeGenLevelLess
                            : opts->opt_level == 2 ? LLVMCodeGenLevelDefault
                                                   : LLVMCodeGenLevelAggressive;
  tm = LLVMCreateTargetMachine(target, triple, cpu, features, lvl, LLVMRelocPIC,
                               LLVMCodeModelDefault);
  if (!tm) {
    st = eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                            "cpu backend: cannot target CPU '%s'", cpu);
    goto done;
  }
  LLVMSetTarget(lm, triple);
  LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
  char *layout = LLVMCopyStringRepOfTargetData(td);
  LLVMSetDataLayout(lm, layout);
  LLVMDisposeMessage(layout);
  LLVMDisposeTargetData(td);
  char passes[32];
  snprintf(passes, sizeof passes, "default<O%d>",
           opts->opt_level < 0   ? 0
           : opts->opt_level > 3 ? 3
                                 : opts->opt_level);
  LLVMPassBuilderOptionsRef pbo = LLVMCreatePassBuilderOptions();
  LLVMErrorRef err = LLVMRunPasses(lm, passes, tm, pbo);
  LLVMDisposePassBuilderOptions(pbo);
  if (err) {
    st = llvm_error("LLVM optimization failed", LLVMGetErrorMessage(err));
    goto done;
  }
  if (out_ir) {
    char *text = LLVMPrintModuleToString(lm);
    eddy_buf_puts(out_ir, text);
    LLVMDisposeMessage(text);
  }
  if (!obj_path)
    goto done;
  // EmitToFile takes a non-const path.
  size_t plen = strlen(obj_path);
  char *path = malloc(plen + 1);
  if (path)
    memcpy(path, obj_path, plen + 1);
  if (!path) {
    st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
    goto done;
  }
  if (LLVMTargetMachineEmitToFile(tm, lm, path, LLVMObjectFile, &msg)) {
    st = eddy_status_create(EDDY_ERR_IO, "cannot write object file '%s': %s",
                            obj_path, msg ? msg : "unknown error");
    LLVMDisposeMessage(msg);
  }
  free(path);
done:
  if (tm)
    LLVMDisposeTargetMachine(tm);
  LLVMDisposeMessage(host_cpu);
  LLVMDisposeMessage(host_features);
  LLVMDisposeModule(lm);
  LLVMContextDispose(lctx);
  mlir_state_destroy(&s);
  return st;
}

eddy_status_t eddy_cpu_compile_object(const eddy_module_t *m, const char *entry,
                                      const eddy_cpu_opts_t *opts,
                                      const char *obj_path) {
  return eddy_cpu_codegen(m, entry, opts, NULL, obj_path, NULL);
}

eddy_status_t eddy_cpu_emit_llvm_ir(const eddy_module_t *m, const char *entry,
                                    const eddy_cpu_opts_t *opts,
                                    eddy_buf_t *out) {
  return eddy_cpu_codegen(m, entry, opts, NULL, NULL, out);
}

/// ---- JIT

struct eddy_cpu_jit {
  MlirExecutionEngine ee;
  eddy_cpu_entry_fn_t fn;
  uint32_t num_results;
};

eddy_status_t eddy_cpu_jit_create(const eddy_module_t *m, const char *entry,
                                  const eddy_cpu_opts_t *opts,
                                  eddy_cpu_jit_t **out_jit) {
  return eddy_cpu_jit_create_with(m, entry, opts, NULL, out_jit);
}

eddy_status_t eddy_cpu_jit_create_with(const eddy_module_t *m,
                                       const char *entry,
                                       const eddy_cpu_opts_t *opts,
                                       const eddy_cpu_codegen_t *cg,
                                       eddy_cpu_jit_t **out_jit) {
  *out_jit = NULL;
  eddy_cpu_opts_t o = opts ? *opts : eddy_cpu_opts_default();
  mlir_state_t s;
  eddy_status_t st = lower(m, entry, &o, cg, &s);
  if (st) {
    mlir_state_destroy(&s);
    return st;
  }
  int lvl = o.opt_level < 0 ? 0 : o.opt_level > 3 ? 3 : o.opt_level;
  MlirExecutionEngine ee =
      mlirExecutionEngineCreate(s.module, lvl, 0, NULL, false);
  if (mlirExecutionEngineIsNull(ee)) {
    st = mlir_fail(&s, "JIT compilation failed");
    mlir_state_destroy(&s);
    return st;
  }
  // The runtime's functions (runtime/entry_abi.h) live in this process's
  // libeddyrt; symbols of the executable itself are not visible to the
  // JIT's dynamic lookup.
  for (size_t i = 0; i < sizeof k_jit_syms / sizeof k_jit_syms[0]; i++)
    mlirExecutionEngineRegisterSymbol(ee, sref(k_jit_syms[i].name),
                                      k_jit_syms[i].fn);
  eddy_buf_t name;
  eddy_buf_init(&name);
  eddy_buf_printf(&name, "%s_run", o.prefix ? o.prefix : entry);
  void *fn = mlirExecutionEngineLookup(ee, sref(name.data));
  eddy_buf_destroy(&name);
  mlir_state_destroy(&s);
  if (!fn) {
    mlirExecutionEngineDestroy(ee);
    return eddy_status_create(EDDY_ERR_INTERNAL,
                              "cpu backend: JIT lookup of the entry failed");
  }
  eddy_cpu_jit_t *j = calloc(1, sizeof *j);
  if (!j) {
    mlirExecutionEngineDestroy(ee);
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  }
  j->ee = ee;
  // Function and data pointers have the same representation on every
  // target LLVM's JIT supports.
  memcpy(&j->fn, &fn, sizeof fn);
  j->num_results =
      eddy_ir_func_type(eddy_ir_module_lookup_func(m, entry))->num_outputs;
  *out_jit = j;
  return NULL;
}

void eddy_cpu_jit_destroy(eddy_cpu_jit_t *jit) {
  if (!jit)
    return;
  mlirExecutionEngineDestroy(jit->ee);
  free(jit);
}

eddy_cpu_entry_fn_t eddy_cpu_jit_entry(const eddy_cpu_jit_t *jit) {
  return jit->fn;
}

eddy_status_t eddy_cpu_jit_run(const eddy_cpu_jit_t *jit, eddy_rt_ctx_t *rt,
                               const eddy_rt_tensor_t *args,
                               eddy_rt_tensor_t *results) {
  char err[1024];
  int32_t code = jit->fn(rt, args, results, err, sizeof err);
  if (code == 0)
    return NULL;
  return eddy_status_create((eddy_status_code_t)code, "%s", err);
}

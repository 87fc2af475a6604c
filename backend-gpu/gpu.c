/// The GPU target (gpu.h, docs/gpu.md): the pass pipeline from the CUDA
/// form to host LLVM code plus PTX, and the step from PTX to an embedded
/// fatbin (ptxas and fatbinary, run as child processes).
#define _POSIX_C_SOURCE 200809L
#include "backend-gpu/gpu.h"

#include "backend-cpu/codegen.h"
#include "backend-gpu/gpu_internal.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/Dialect/GPU.h>
#include <mlir-c/IR.h>

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/// The architectures ptxas is run for (and that tests check).
static const char *const k_archs[] = {"sm_80", "sm_90"};

eddy_gpu_opts_t eddy_gpu_opts_default(void) {
  eddy_gpu_opts_t o = {NULL, NULL, NULL, NULL, 3, true, 0, false, 0};
  return o;
}

eddy_status_t eddy_gpu_check_arch(const char *arch) {
  for (size_t i = 0; i < sizeof k_archs / sizeof k_archs[0]; i++)
    if (strcmp(arch, k_archs[i]) == 0)
      return NULL;
  return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                            "unknown GPU architecture '%s' (known: sm_80, "
                            "sm_90)",
                            arch);
}

static const char *arch_of(const eddy_gpu_opts_t *o) {
  return o->arch ? o->arch : "sm_90";
}

static const char *toolkit_of(const eddy_gpu_opts_t *o) {
  if (o->toolkit)
    return o->toolkit;
  const char *env = getenv("EDDY_CUDA_TOOLKIT");
  return env && *env ? env : EDDY_CUDA_TOOLKIT_DEFAULT;
}

const char *eddy_gpu_toolkit(const eddy_gpu_opts_t *opts) {
  eddy_gpu_opts_t dflt = eddy_gpu_opts_default();
  return toolkit_of(opts ? opts : &dflt);
}

static eddy_cpu_opts_t cpu_opts(const eddy_gpu_opts_t *o) {
  eddy_cpu_opts_t c = eddy_cpu_opts_default();
  c.prefix = o->prefix;
  c.cpu = o->cpu;
  c.opt_level = o->opt_level;
  c.fuse = o->fuse;
  c.matmul_call_min = o->matmul_call_min;
  c.matmul_tf32 = o->matmul_tf32;
  c.outline_ops = o->outline_ops;
  c.form = EDDY_CPU_FORM_CUDA;
  return c;
}

/// The pipeline from the CUDA form to the LLVM dialect with PTX attached to
/// each gpu.binary, in two stages. The prelude: each kernel's two nested
/// scf.parallel loops (blocks, and threads of a size the emitter chose for
/// it) are mapped to the grid and the block and outlined; then all kernels
/// are gathered into one gpu.module (merge_kernels.c). The rest: the kernels
/// are lowered to NVVM (math functions become libdevice calls, linked from
/// the toolkit) and written as PTX ISA 8.1, which allows a kernel 32764
/// bytes of parameters on sm_70 and later (earlier versions: 4352, which a
/// fused kernel of a few dozen dynamically shaped operands exceeds, as each
/// memref descriptor is 3 + 2 x rank words); the host code goes through
/// backend-cpu's pipeline, with gpu.launch_func lowered to calls of the GPU
/// runtime ABI (libeddyrt, runtime/cuda.c).
static const char k_prelude[] =
    "builtin.module(func.func(gpu-map-parallel-loops,"
    "convert-parallel-loops-to-gpu),lower-affine,gpu-kernel-outlining)";

static void build_pipeline(const eddy_gpu_opts_t *o, eddy_buf_t *out) {
  int lvl = o->opt_level < 0 ? 0 : o->opt_level > 3 ? 3 : o->opt_level;
  eddy_buf_printf(
      out,
      "builtin.module(nvvm-attach-target{chip=%s O=%d features=+ptx81},"
      "gpu.module(convert-scf-to-cf,convert-gpu-to-nvvm,canonicalize,cse,"
      "reconcile-unrealized-casts),"
      "convert-math-to-llvm,convert-math-to-libm,expand-strided-metadata,"
      "convert-scf-to-cf,canonicalize,cse,finalize-memref-to-llvm,"
      "convert-arith-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,"
      "gpu-to-llvm,reconcile-unrealized-casts,"
      "gpu-module-to-binary{format=isa toolkit=%s})",
      arch_of(o), lvl, toolkit_of(o));
}

/// ---- child processes -------------------------------------------------------

/// Runs argv[0] (a path) with its output in log; a failure is an error
/// naming the tool and quoting what it printed.
static eddy_status_t run_tool(char *const argv[], const char *log,
                              const char *what) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid;
  int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0)
    return eddy_status_create(EDDY_ERR_UNSUPPORTED,
                              "%s: cannot run '%s': %s (install the CUDA "
                              "toolkit or point --cuda-toolkit / "
                              "EDDY_CUDA_TOOLKIT at it)",
                              what, argv[0], strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return NULL;
  char text[2048] = "";
  FILE *f = fopen(log, "r");
  if (f) {
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
  }
  return eddy_status_create(EDDY_ERR_INTERNAL, "%s: %s failed:\n%s", what,
                            argv[0], text);
}

static eddy_status_t write_file(const char *path, const char *data,
                                size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, len, f) != len) {
    if (f)
      fclose(f);
    return eddy_status_create(EDDY_ERR_IO, "cannot write '%s': %s", path,
                              strerror(errno));
  }
  if (fclose(f) != 0)
    return eddy_status_create(EDDY_ERR_IO, "cannot write '%s': %s", path,
                              strerror(errno));
  return NULL;
}

static eddy_status_t read_file(const char *path, eddy_buf_t *out) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return eddy_status_create(EDDY_ERR_IO, "cannot read '%s': %s", path,
                              strerror(errno));
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
    eddy_buf_append(out, chunk, n);
  bool bad = ferror(f);
  fclose(f);
  if (bad)
    return eddy_status_create(EDDY_ERR_IO, "cannot read '%s'", path);
  return NULL;
}

/// PTX -> cubin for arch (ptxas) -> fatbin with the cubin and the PTX
/// (fatbinary), in the scratch directory dir; the fatbin is appended to out.
static eddy_status_t ptx_to_fatbin(const char *toolkit, const char *arch,
                                   const char *dir, const char *name,
                                   const char *ptx, size_t len,
                                   eddy_buf_t *out) {
  char ptx_path[4096], cubin[4096], fatbin[4096], log[4096], ptxas[4096],
      fatbinary[4096], what[256];
  snprintf(ptx_path, sizeof ptx_path, "%s/k.ptx", dir);
  snprintf(cubin, sizeof cubin, "%s/k.cubin", dir);
  snprintf(fatbin, sizeof fatbin, "%s/k.fatbin", dir);
  snprintf(log, sizeof log, "%s/log.txt", dir);
  snprintf(ptxas, sizeof ptxas, "%s/bin/ptxas", toolkit);
  snprintf(fatbinary, sizeof fatbinary, "%s/bin/fatbinary", toolkit);
  snprintf(what, sizeof what, "gpu backend: kernels of '%s' for %s", name,
           arch);
  EDDY_RETURN_IF_ERROR(write_file(ptx_path, ptx, len));
  char arch_flag[32];
  snprintf(arch_flag, sizeof arch_flag, "-arch=%s", arch);
  char *pargv[] = {ptxas, arch_flag, "-O3", ptx_path, "-o", cubin, NULL};
  EDDY_RETURN_IF_ERROR(run_tool(pargv, log, what));
  // "sm_90" -> 90.
  char create[4200], elf[4200], ptximg[4200];
  snprintf(create, sizeof create, "--create=%s", fatbin);
  snprintf(elf, sizeof elf, "--image3=kind=elf,sm=%s,file=%s", arch + 3,
           cubin);
  snprintf(ptximg, sizeof ptximg, "--image3=kind=ptx,sm=%s,file=%s", arch + 3,
           ptx_path);
  char *fargv[] = {fatbinary, "-64", create, elf, ptximg, NULL};
  EDDY_RETURN_IF_ERROR(run_tool(fargv, log, what));
  return read_file(fatbin, out);
}

/// ---- the hook on the lowered module ----------------------------------------

typedef struct gpu_hook {
  const eddy_gpu_opts_t *opts;
  eddy_buf_t *ptx_out; ///< emit_ptx: the PTX goes here, no fatbin is made
  eddy_status_t st;
} gpu_hook_t;

/// The numeric format of a fatbin object (MLIR's gpu::CompilationTarget),
/// read off a parsed attribute rather than hard-coded.
static uint32_t fatbin_format(MlirContext ctx) {
  MlirAttribute a =
      mlirAttributeParseGet(ctx, gpu_sref("#gpu.object<#nvvm.target, \"\">"));
  return mlirAttributeIsNull(a) ? 0 : mlirGPUObjectAttrGetFormat(a);
}

/// Replaces the PTX objects of one gpu.binary by fatbins.
static eddy_status_t rewrite_binary(gpu_hook_t *h, MlirOperation bin,
                                    const char *dir) {
  MlirAttribute objs =
      mlirOperationGetAttributeByName(bin, gpu_sref("objects"));
  MlirAttribute sym =
      mlirOperationGetAttributeByName(bin, gpu_sref("sym_name"));
  char name[256] = "?";
  if (!mlirAttributeIsNull(sym) && mlirAttributeIsAString(sym)) {
    MlirStringRef s = mlirStringAttrGetValue(sym);
    snprintf(name, sizeof name, "%.*s", (int)s.length, s.data);
  }
  if (mlirAttributeIsNull(objs) || !mlirAttributeIsAArray(objs))
    return eddy_status_create(EDDY_ERR_INTERNAL,
                              "gpu backend: gpu.binary @%s has no objects",
                              name);
  MlirContext ctx = mlirOperationGetContext(bin);
  intptr_t n = mlirArrayAttrGetNumElements(objs);
  MlirAttribute *fresh = calloc((size_t)n + 1, sizeof *fresh);
  if (!fresh)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  eddy_status_t st = NULL;
  uint32_t fmt = fatbin_format(ctx);
  for (intptr_t i = 0; !st && i < n; i++) {
    MlirAttribute o = mlirArrayAttrGetElement(objs, i);
    if (!mlirAttributeIsAGPUObjectAttr(o)) {
      st = eddy_status_create(EDDY_ERR_INTERNAL,
                              "gpu backend: gpu.binary @%s: not an object",
                              name);
      break;
    }
    MlirStringRef ptx = mlirGPUObjectAttrGetObject(o);
    size_t len = ptx.length;
    while (len && ptx.data[len - 1] == '\0')
      len--;
    if (h->ptx_out) {
      eddy_buf_printf(h->ptx_out, "// gpu.module @%s\n", name);
      eddy_buf_append(h->ptx_out, ptx.data, len);
      fresh[i] = o;
      continue;
    }
    eddy_buf_t fb;
    eddy_buf_init(&fb);
    st = ptx_to_fatbin(toolkit_of(h->opts), arch_of(h->opts), dir, name,
                       ptx.data, len, &fb);
    if (!st)
      fresh[i] = mlirGPUObjectAttrGet(
          ctx, mlirGPUObjectAttrGetTarget(o), fmt,
          mlirStringRefCreate(fb.data ? fb.data : "", fb.len),
          mlirAttributeGetNull());
    eddy_buf_destroy(&fb);
  }
  if (!st)
    mlirOperationSetAttributeByName(bin, gpu_sref("objects"),
                                    mlirArrayAttrGet(ctx, n, fresh));
  free(fresh);
  return st;
}

static eddy_status_t after_outlining(MlirModule module, void *user) {
  (void)user;
  gpu_merge_kernel_modules(module);
  return NULL;
}

static eddy_status_t after_lower(MlirModule module, void *user) {
  gpu_hook_t *h = user;
  // A scratch directory for ptxas and fatbinary (not needed for PTX).
  const char *tmp = getenv("TMPDIR");
  char tdir[4096];
  snprintf(tdir, sizeof tdir, "%s/eddy-gpu-XXXXXX",
           tmp && *tmp ? tmp : "/tmp");
  char *d = NULL;
  if (!h->ptx_out && !(d = mkdtemp(tdir)))
    return eddy_status_create(EDDY_ERR_IO,
                              "gpu backend: cannot make a scratch directory "
                              "'%s': %s",
                              tdir, strerror(errno));
  eddy_status_t st = gpu_bound_host_stack(module);
  MlirBlock body = mlirModuleGetBody(module);
  for (MlirOperation op = mlirBlockGetFirstOperation(body);
       !st && !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
    if (gpu_op_is(op, "gpu.binary"))
      st = rewrite_binary(h, op, d);
  }
  if (!h->ptx_out) {
    const char *files[] = {"k.ptx", "k.cubin", "k.fatbin", "log.txt"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
      char p[4200];
      snprintf(p, sizeof p, "%s/%s", d, files[i]);
      unlink(p);
    }
    rmdir(d);
  }
  return st;
}

/// Compiles @entry: to an object at obj_path, to PTX in ptx_out, or (jit)
/// in-process.
static eddy_status_t codegen(const eddy_module_t *m, const char *entry,
                             const eddy_gpu_opts_t *opts, const char *obj_path,
                             eddy_buf_t *ptx_out, eddy_cpu_jit_t **jit) {
  eddy_gpu_opts_t dflt = eddy_gpu_opts_default();
  if (!opts)
    opts = &dflt;
  EDDY_RETURN_IF_ERROR(eddy_gpu_check_arch(arch_of(opts)));
  eddy_cpu_opts_t c = cpu_opts(opts);
  eddy_buf_t pipe;
  eddy_buf_init(&pipe);
  build_pipeline(opts, &pipe);
  gpu_hook_t h = {opts, ptx_out, NULL};
  eddy_cpu_codegen_t cg = {k_prelude, after_outlining, pipe.data, after_lower,
                           &h};
  eddy_status_t st;
  if (jit)
    st = eddy_cpu_jit_create_with(m, entry, &c, &cg, jit);
  else // (emit_ptx: obj_path NULL, codegen stops after the hook)
    st = eddy_cpu_codegen(m, entry, &c, &cg, obj_path, NULL);
  eddy_buf_destroy(&pipe);
  return st;
}

eddy_status_t eddy_gpu_emit_mlir(const eddy_module_t *m, const char *entry,
                                 const eddy_gpu_opts_t *opts,
                                 eddy_buf_t *out) {
  eddy_gpu_opts_t dflt = eddy_gpu_opts_default();
  eddy_cpu_opts_t c = cpu_opts(opts ? opts : &dflt);
  return eddy_cpu_emit_mlir(m, entry, &c, out);
}

eddy_status_t eddy_gpu_emit_plan(const eddy_module_t *m, const char *entry,
                                 const eddy_gpu_opts_t *opts,
                                 eddy_buf_t *out) {
  eddy_gpu_opts_t dflt = eddy_gpu_opts_default();
  eddy_cpu_opts_t c = cpu_opts(opts ? opts : &dflt);
  return eddy_cpu_emit_plan(m, entry, &c, out);
}

eddy_status_t eddy_gpu_emit_ptx(const eddy_module_t *m, const char *entry,
                                const eddy_gpu_opts_t *opts, eddy_buf_t *out) {
  return codegen(m, entry, opts, NULL, out, NULL);
}

eddy_status_t eddy_gpu_emit_header(const eddy_module_t *m, const char *entry,
                                   const eddy_gpu_opts_t *opts,
                                   eddy_buf_t *out) {
  eddy_gpu_opts_t dflt = eddy_gpu_opts_default();
  eddy_cpu_opts_t c = cpu_opts(opts ? opts : &dflt);
  return eddy_cpu_emit_header(m, entry, &c, out);
}

eddy_status_t eddy_gpu_compile_object(const eddy_module_t *m,
                                      const char *entry,
                                      const eddy_gpu_opts_t *opts,
                                      const char *obj_path) {
  return codegen(m, entry, opts, obj_path, NULL, NULL);
}

eddy_status_t eddy_gpu_jit_create(const eddy_module_t *m, const char *entry,
                                  const eddy_gpu_opts_t *opts,
                                  eddy_cpu_jit_t **out_jit) {
  *out_jit = NULL;
  return codegen(m, entry, opts, NULL, NULL, out_jit);
}

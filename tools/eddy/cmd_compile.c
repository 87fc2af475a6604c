/// `eddy compile`: compile one entry function to an x86-64 object file and a
/// C header (backend-cpu), or print the MLIR the backend emits.
#include "backend-cpu/cpu.h"
#include "backend-gpu/gpu.h"
#include "ir/ir.h"
#include "ir/passes/passes.h"
#include "tools/eddy/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct compile_args {
  const char *input;
  const char *entry;
  const char *output; ///< the object file
  const char *header;
  const char *target; ///< "cpu" (default) or "cuda"
  const char *emit; ///< "mlir", "llvm", "ptx" or "plan": print that instead
  const char *precision; ///< --gpu-matmul-precision, or NULL
  const char *pipeline; ///< IR passes run before compiling
  bool help;
  eddy_cpu_opts_t cpu;
  eddy_gpu_opts_t gpu; ///< --target=cuda (prefix, -O, -march from cpu)
} compile_args_t;

static int print_help(void) {
  printf(
      "usage: eddy compile FILE --entry F -o F.o [--header F.h] [options]\n"
      "\n"
      "Compiles function @F of FILE to an x86-64 object file (for\n"
      "--target=cuda: host code with the GPU kernels embedded) that defines\n"
      "\n"
      "  int32_t PREFIX_run(eddy_rt_ctx_t *rt, const eddy_rt_tensor_t *args,\n"
      "                     eddy_rt_tensor_t *results, char *err, size_t "
      "errlen);\n"
      "\n"
      "and a C99 header declaring it. Link the object with libeddyrt.\n"
      "\n"
      "options:\n"
      "  --entry=F              the function to compile (required)\n"
      "  -o FILE                the object file to write\n"
      "  --header=FILE          the header to write\n"
      "  --prefix=NAME          symbol prefix (default: the entry's name)\n"
      "  --target=cpu|cuda      the backend (default cpu; cuda: NVIDIA GPUs,\n"
      "                         docs/gpu.md)\n"
      "  --gpu-arch=sm_80|sm_90 (cuda) the GPU architecture (default sm_90)\n"
      "  --gpu-matmul-precision=highest|tf32\n"
      "                         (cuda) cuBLAS products in FP32 arithmetic\n"
      "                         (highest, the default) or with inputs rounded\n"
      "                         to TF32 on tensor cores (faster, about 1e-3\n"
      "                         relative error; docs/gpu.md)\n"
      "  --cuda-toolkit=DIR     (cuda) the CUDA toolkit's root (ptxas,\n"
      "                         fatbinary, libdevice; default: $EDDY_CUDA_TOOLKIT\n"
      "                         or the one found when eddy was built)\n"
      "  -march=CPU, --march=CPU  LLVM CPU name (default: the host CPU)\n"
      "  -O0 .. -O3             LLVM optimization level (default -O3)\n"
      "  --passes=LIST          IR passes to run first (default: "
      EDDY_PASSES_COMPILE_PIPELINE_CPU ";\n"
      "                         cuda: " EDDY_PASSES_COMPILE_PIPELINE ";\n"
      "                         --passes= runs none; docs/passes.md)\n"
      "  --no-fuse              one loop nest per op (for debugging)\n"
      "  --libm-math            exp, expm1, log, tanh and sigmoid of\n"
      "                         f32/f16/bf16 as libm calls, not the inline\n"
      "                         approximations that vectorize (docs/cpu.md;\n"
      "                         the GPU target always calls libdevice)\n"
      "  --fp-contract=off|fast (cpu) fast lets multiplies and adds fuse\n"
      "                         into FMAs, as XLA's CPU backend does (one\n"
      "                         rounding; results then depend on the CPU;\n"
      "                         default off; docs/cpu.md, \"Numerics\")\n"
      "  --outline-ops=N        split a function of N MLIR ops or more into\n"
      "                         functions LLVM compiles in linear time\n"
      "                         (default 8000; cuda: the host code, a\n"
      "                         kernel counted as one op and kept whole;\n"
      "                         docs/cpu.md, \"Compile times\")\n"
      "  --emit=mlir|llvm|ptx|plan\n"
      "                         print the emitted MLIR, the optimized LLVM\n"
      "                         IR (cpu), the kernels' PTX (cuda) or the\n"
      "                         kernel plan (which ops form each kernel,\n"
      "                         what it reads and writes), to -o (or stdout)\n"
      "                         instead of compiling\n"
      "  -h, --help             show this help\n");
  return EDDY_CLI_EXIT_OK;
}

static int parse_args(int argc, char **argv, compile_args_t *a) {
  memset(a, 0, sizeof *a);
  a->cpu = eddy_cpu_opts_default();
  a->gpu = eddy_gpu_opts_default();
  a->pipeline = NULL; // the target's default
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i], *val = NULL;
    if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
      a->help = true;
    } else if (eddy_cli_flag_value(argc, argv, &i, "--entry", &val)) {
      if (!val)
        return eddy_cli_usage_error("compile", "flag '--entry' needs a value");
      a->entry = val;
    } else if (eddy_cli_flag_value(argc, argv, &i, "-o", &val) ||
               eddy_cli_flag_value(argc, argv, &i, "--output", &val)) {
      if (!val)
        return eddy_cli_usage_error("compile", "flag '-o' needs a value");
      a->output = val;
    } else if (eddy_cli_flag_value(argc, argv, &i, "--header", &val)) {
      if (!val)
        return eddy_cli_usage_error("compile", "flag '--header' needs a value");
      a->header = val;
    } else if (eddy_cli_flag_value(argc, argv, &i, "--prefix", &val)) {
      if (!val)
        return eddy_cli_usage_error("compile", "flag '--prefix' needs a value");
      a->cpu.prefix = val;
    } else if (eddy_cli_flag_value(argc, argv, &i, "--target", &val)) {
      if (!val || (strcmp(val, "cpu") != 0 && strcmp(val, "cuda") != 0))
        return eddy_cli_usage_error(
            "compile", "unknown target '%s' (known: cpu, cuda)",
            val ? val : "");
      a->target = val;
    } else if (eddy_cli_flag_value(argc, argv, &i, "--gpu-arch", &val)) {
      eddy_status_t st = val ? eddy_gpu_check_arch(val) : NULL;
      if (!val || st) {
        eddy_status_destroy(st);
        return eddy_cli_usage_error(
            "compile", "unknown --gpu-arch '%s' (known: sm_80, sm_90)",
            val ? val : "");
      }
      a->gpu.arch = val;
    } else if (eddy_cli_flag_value(argc, argv, &i, "--gpu-matmul-precision",
                                   &val)) {
      if (!eddy_cli_gpu_matmul_tf32(val, &a->gpu.matmul_tf32))
        return eddy_cli_usage_error("compile",
                                    "unknown --gpu-matmul-precision '%s' "
                                    "(known: highest, tf32)",
                                    val ? val : "");
      a->precision = val;
    } else if (eddy_cli_flag_value(argc, argv, &i, "--cuda-toolkit", &val)) {
      if (!val || !*val)
        return eddy_cli_usage_error("compile",
                                    "flag '--cuda-toolkit' needs a directory");
      a->gpu.toolkit = val;
    } else if (eddy_cli_flag_value(argc, argv, &i, "-march", &val) ||
               eddy_cli_flag_value(argc, argv, &i, "--march", &val)) {
      if (!val || !*val)
        return eddy_cli_usage_error("compile", "flag '-march' needs a value");
      a->cpu.cpu = val;
    } else if (eddy_cli_flag_value(argc, argv, &i, "--emit", &val)) {
      if (!val || (strcmp(val, "mlir") != 0 && strcmp(val, "llvm") != 0 &&
                   strcmp(val, "ptx") != 0 && strcmp(val, "plan") != 0))
        return eddy_cli_usage_error(
            "compile", "unknown --emit '%s' (known: mlir, llvm, ptx, plan)",
            val ? val : "");
      a->emit = val;
    } else if (eddy_cli_flag_value(argc, argv, &i, "--passes", &val)) {
      if (!val)
        return eddy_cli_usage_error("compile", "flag '--passes' needs a value");
      a->pipeline = val;
    } else if (strcmp(arg, "--no-fuse") == 0) {
      a->cpu.fuse = false;
    } else if (strcmp(arg, "--libm-math") == 0) {
      a->cpu.libm_math = true;
    } else if (eddy_cli_flag_value(argc, argv, &i, "--fp-contract", &val)) {
      if (!eddy_cli_fp_contract(val, &a->cpu.fp_contract))
        return eddy_cli_usage_error(
            "compile", "unknown --fp-contract '%s' (known: off, fast)",
            val ? val : "");
    } else if (eddy_cli_flag_value(argc, argv, &i, "--outline-ops", &val)) {
      if (!eddy_cli_outline_ops(val, &a->cpu.outline_ops))
        return eddy_cli_usage_error("compile", "--outline-ops needs a count "
                                               "of at least 1, not '%s'",
                                    val ? val : "");
    } else if (arg[0] == '-' && arg[1] == 'O' && arg[2] >= '0' &&
               arg[2] <= '3' && arg[3] == '\0') {
      a->cpu.opt_level = arg[2] - '0';
    } else if (arg[0] == '-' && arg[1] != '\0') {
      return eddy_cli_usage_error("compile", "unknown option '%s'", arg);
    } else if (!a->input) {
      a->input = arg;
    } else {
      return eddy_cli_usage_error("compile", "unexpected argument '%s'", arg);
    }
  }
  if (a->help)
    return EDDY_CLI_EXIT_OK;
  if (!a->input)
    return eddy_cli_usage_error("compile", "no input file");
  if (!a->entry)
    return eddy_cli_usage_error("compile", "--entry is required");
  if (!a->emit && !a->output)
    return eddy_cli_usage_error("compile", "-o is required");
  bool cuda = a->target && strcmp(a->target, "cuda") == 0;
  if (!cuda && (a->gpu.arch || a->gpu.toolkit || a->precision))
    return eddy_cli_usage_error("compile", "--gpu-arch, --cuda-toolkit and "
                                           "--gpu-matmul-precision need "
                                           "--target=cuda");
  if (cuda && a->cpu.fp_contract)
    return eddy_cli_usage_error("compile",
                                "--fp-contract=fast is for --target=cpu");
  if (a->emit && strcmp(a->emit, "ptx") == 0 && !cuda)
    return eddy_cli_usage_error("compile", "--emit=ptx needs --target=cuda");
  if (a->emit && strcmp(a->emit, "llvm") == 0 && cuda)
    return eddy_cli_usage_error("compile", "--emit=llvm is for --target=cpu "
                                           "(try --emit=ptx)");
  a->gpu.prefix = a->cpu.prefix;
  a->gpu.cpu = a->cpu.cpu;
  a->gpu.opt_level = a->cpu.opt_level;
  a->gpu.fuse = a->cpu.fuse;
  a->gpu.outline_ops = a->cpu.outline_ops;
  return EDDY_CLI_EXIT_OK;
}

static eddy_status_t run(eddy_ctx_t *ctx, const compile_args_t *a) {
  eddy_cli_register_all(ctx);
  eddy_module_t *m = NULL;
  EDDY_RETURN_IF_ERROR(eddy_ir_parse_file(ctx, a->input, &m));
  eddy_status_t st = eddy_ir_verify_module(m);
  bool cuda = a->target && strcmp(a->target, "cuda") == 0;
  const char *pipeline = a->pipeline ? a->pipeline
                         : cuda      ? EDDY_PASSES_COMPILE_PIPELINE
                                     : EDDY_PASSES_COMPILE_PIPELINE_CPU;
  if (!st)
    st = eddy_cli_run_passes(ctx, m, pipeline);
  eddy_buf_t out;
  eddy_buf_init(&out);
  if (!st && a->emit) {
    if (strcmp(a->emit, "mlir") == 0)
      st = cuda ? eddy_gpu_emit_mlir(m, a->entry, &a->gpu, &out)
                : eddy_cpu_emit_mlir(m, a->entry, &a->cpu, &out);
    else if (strcmp(a->emit, "plan") == 0)
      st = cuda ? eddy_gpu_emit_plan(m, a->entry, &a->gpu, &out)
                : eddy_cpu_emit_plan(m, a->entry, &a->cpu, &out);
    else if (strcmp(a->emit, "ptx") == 0)
      st = eddy_gpu_emit_ptx(m, a->entry, &a->gpu, &out);
    else
      st = eddy_cpu_emit_llvm_ir(m, a->entry, &a->cpu, &out);
    if (!st)
      st = eddy_cli_write_output(a->output, out.data, out.len);
  } else if (!st) {
    // The header first: it checks the entry and prefix cheaply.
    if (a->header)
      st = cuda ? eddy_gpu_emit_header(m, a->entry, &a->gpu, &out)
                : eddy_cpu_emit_header(m, a->entry, &a->cpu, &out);
    if (!st)
      st = cuda ? eddy_gpu_compile_object(m, a->entry, &a->gpu, a->output)
                : eddy_cpu_compile_object(m, a->entry, &a->cpu, a->output);
    if (!st && a->header)
      st = eddy_cli_write_output(a->header, out.data, out.len);
  }
  eddy_buf_destroy(&out);
  eddy_ir_module_destroy(m);
  return st;
}

int eddy_cli_compile_main(int argc, char **argv) {
  compile_args_t a;
  int rc = parse_args(argc, argv, &a);
  if (rc != EDDY_CLI_EXIT_OK)
    return rc;
  if (a.help)
    return print_help();
  eddy_ctx_t *ctx = eddy_ir_ctx_create();
  if (!ctx) {
    fprintf(stderr, "eddy compile: out of memory\n");
    return EDDY_CLI_EXIT_ERROR;
  }
  eddy_status_t st = run(ctx, &a);
  eddy_ir_ctx_destroy(ctx);
  return st ? eddy_cli_report(st) : EDDY_CLI_EXIT_OK;
}

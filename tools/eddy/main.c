/// eddy: the command-line driver. Dispatches to one subcommand per entry of
/// a table; each subcommand parses its own flags (tools/eddy/cmd_*.c).
#include "tools/eddy/cli.h"

#include <stdio.h>
#include <string.h>

/// Later subcommands (import, grad, compile, run, dot) are added here.
static const eddy_cli_cmd_t k_commands[] = {
    {"import", "read a TensorFlow GraphDef (.pb) and print it as IR",
     eddy_cli_import_main},
    {"compile", "compile a function to an x86-64 object file and a C header",
     eddy_cli_compile_main},
    {"grad", "add the reverse-mode gradient F_grad of a function F",
     eddy_cli_grad_main},
    {"opt", "parse IR, verify it, run a pass pipeline and print the result",
     eddy_cli_opt_main},
    {"run", "run a function on inputs (.npy files or scalars) and print the "
            "results",
     eddy_cli_run_main},
    {"dot", "write Graphviz dot of a function or of its dataflow lowering",
     eddy_cli_dot_main},
};

static const size_t k_num_commands = sizeof k_commands / sizeof k_commands[0];

static void print_help(FILE *f) {
  fprintf(f,
          "usage: eddy <command> [options] [args]\n"
          "       eddy --help | --version\n"
          "\n"
          "eddy compiles dataflow graphs with dynamic control flow.\n"
          "\n"
          "commands:\n");
  for (size_t i = 0; i < k_num_commands; i++)
    fprintf(f, "  %-10s %s\n", k_commands[i].name, k_commands[i].summary);
  fprintf(f, "\nRun 'eddy <command> --help' for the options of a command.\n");
}

static const eddy_cli_cmd_t *find_command(const char *name) {
  for (size_t i = 0; i < k_num_commands; i++)
    if (strcmp(k_commands[i].name, name) == 0)
      return &k_commands[i];
  return NULL;
}

static int unknown_command(const char *name) {
  fprintf(stderr, "eddy: unknown command '%s' (known:", name);
  for (size_t i = 0; i < k_num_commands; i++)
    fprintf(stderr, "%s %s", i ? "," : "", k_commands[i].name);
  fprintf(stderr, ")\nRun 'eddy --help' for usage.\n");
  return EDDY_CLI_EXIT_USAGE;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    print_help(stderr);
    return EDDY_CLI_EXIT_USAGE;
  }
  const char *first = argv[1];
  if (strcmp(first, "--help") == 0 || strcmp(first, "-h") == 0) {
    print_help(stdout);
    return EDDY_CLI_EXIT_OK;
  }
  if (strcmp(first, "--version") == 0) {
    printf("eddy %s\n", EDDY_VERSION);
    return EDDY_CLI_EXIT_OK;
  }
  // `eddy help CMD` is the same as `eddy CMD --help`.
  if (strcmp(first, "help") == 0) {
    if (argc < 3) {
      print_help(stdout);
      return EDDY_CLI_EXIT_OK;
    }
    const eddy_cli_cmd_t *cmd = find_command(argv[2]);
    if (!cmd)
      return unknown_command(argv[2]);
    char help_flag[] = "--help";
    char *sub_argv[] = {argv[2], help_flag, NULL};
    return cmd->main(2, sub_argv);
  }
  if (first[0] == '-') {
    fprintf(stderr,
            "eddy: unknown option '%s' (expected a command first)\n"
            "Run 'eddy --help' for usage.\n",
            first);
    return EDDY_CLI_EXIT_USAGE;
  }
  const eddy_cli_cmd_t *cmd = find_command(first);
  if (!cmd)
    return unknown_command(first);
  return cmd->main(argc - 1, argv + 1);
}

/// Helpers shared by the eddy subcommands: usage errors, status reporting,
/// flag matching and atomic output files.
#define _POSIX_C_SOURCE 200809L

#include "tools/eddy/cli.h"

#include "dialects/dialects.h"
#include "dialects/tf/tf.h"
#include "ir/pass.h"
#include "ir/passes/passes.h"
#include "lower/lower.h"
#include "lower/tf/tf_lower.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int eddy_cli_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "eddy %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\nRun 'eddy %s --help' for usage.\n", cmd);
  return EDDY_CLI_EXIT_USAGE;
}

int eddy_cli_report(eddy_status_t st) {
  eddy_status_print(st, stderr);
  eddy_status_destroy(st);
  return EDDY_CLI_EXIT_ERROR;
}

bool eddy_cli_gpu_matmul_tf32(const char *value, bool *out_tf32) {
  if (value && strcmp(value, "highest") == 0)
    *out_tf32 = false;
  else if (value && strcmp(value, "tf32") == 0)
    *out_tf32 = true;
  else
    return false;
  return true;
}

bool eddy_cli_fp_contract(const char *value, bool *out_contract) {
  if (value && strcmp(value, "off") == 0)
    *out_contract = false;
  else if (value && strcmp(value, "fast") == 0)
    *out_contract = true;
  else
    return false;
  return true;
}

bool eddy_cli_outline_ops(const char *value, size_t *out_ops) {
  int64_t n;
  if (!eddy_cli_parse_count(value, false, &n) || n < 1)
    return false;
  *out_ops = (size_t)n;
  return true;
}

bool eddy_cli_flag_value(int argc, char **argv, int *i, const char *flag,
                         const char **out_value) {
  const char *arg = argv[*i];
  size_t n = strlen(flag);
  if (strncmp(arg, flag, n) != 0)
    return false;
  if (arg[n] == '=') {
    *out_value = arg + n + 1;
    return true;
  }
  if (arg[n] != '\0')
    return false; // a longer flag that merely starts the same way
  if (*i + 1 < argc) {
    *i += 1;
    *out_value = argv[*i];
  } else {
    *out_value = NULL;
  }
  return true;
}

void eddy_cli_register_all(eddy_ctx_t *ctx) {
  eddy_dialects_register_all(ctx);
  eddy_tf_dialect_register(ctx);
  eddy_passes_register_all(ctx);
  eddy_lower_passes_register(ctx);
  eddy_tf_lower_passes_register(ctx);
}

int eddy_cli_render_and_write(const char *output, eddy_cli_render_fn_t render,
                              const void *args) {
  eddy_ctx_t *ctx = eddy_ir_ctx_create();
  if (!ctx)
    return eddy_cli_report(
        eddy_status_create(EDDY_ERR_RESOURCE, "out of memory"));
  eddy_buf_t out;
  eddy_buf_init(&out);
  eddy_status_t st = render(ctx, args, &out);
  if (!st) {
    if (out.len && out.data[out.len - 1] != '\n')
      eddy_buf_putc(&out, '\n'); // a text file ends with a newline
    st = eddy_cli_write_output(output, out.data ? out.data : "", out.len);
  }
  eddy_buf_destroy(&out);
  eddy_ir_ctx_destroy(ctx);
  return st ? eddy_cli_report(st) : EDDY_CLI_EXIT_OK;
}

eddy_status_t eddy_cli_write_output(const char *path, const char *data,
                                    size_t len) {
  if (!path || strcmp(path, "-") == 0) {
    if (len && fwrite(data, 1, len, stdout) != len)
      return eddy_status_create(EDDY_ERR_IO, "cannot write to stdout: %s",
                                strerror(errno));
    if (fflush(stdout) != 0)
      return eddy_status_create(EDDY_ERR_IO, "cannot write to stdout: %s",
                                strerror(errno));
    return NULL;
  }
  /* Devices, pipes and other non-regular files are written in place: renaming
     a temporary file over them would replace them (e.g. /dev/null). */
  struct stat sb;
  if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
    FILE *dev = fopen(path, "wb");
    if (!dev)
      return eddy_status_create(EDDY_ERR_IO, "cannot open '%s' for writing: %s",
                                path, strerror(errno));
    bool wrote = (len == 0 || fwrite(data, 1, len, dev) == len);
    if (fclose(dev) != 0 || !wrote)
      return eddy_status_create(EDDY_ERR_IO, "cannot write '%s': %s", path,
                                strerror(errno));
    return NULL;
  }
  size_t plen = strlen(path);
  char *tmp = malloc(plen + 5);
  if (!tmp)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  memcpy(tmp, path, plen);
  memcpy(tmp + plen, ".tmp", 5);
  FILE *f = fopen(tmp, "wb");
  if (!f) {
    eddy_status_t st = eddy_status_create(
        EDDY_ERR_IO, "cannot open '%s' for writing: %s", tmp, strerror(errno));
    free(tmp);
    return st;
  }
  bool ok = (len == 0 || fwrite(data, 1, len, f) == len);
  int saved = errno;
  if (fclose(f) != 0 && ok) {
    ok = false;
    saved = errno;
  }
  if (ok && rename(tmp, path) != 0) {
    ok = false;
    saved = errno;
  }
  if (!ok) {
    remove(tmp);
    free(tmp);
    return eddy_status_create(EDDY_ERR_IO, "cannot write '%s': %s", path,
                              strerror(saved));
  }
  free(tmp);
  return NULL;
}

eddy_status_t eddy_cli_run_passes(eddy_ctx_t *ctx, eddy_module_t *m,
                                  const char *pipeline) {
  eddy_cli_register_all(ctx);
  eddy_pm_opts_t po;
  eddy_ir_pm_opts_default(&po);
  po.dump = stderr;
  return eddy_ir_pm_run_pipeline(ctx, m, pipeline, &po);
}

bool eddy_cli_parse_count(const char *s, bool suffixes, int64_t *out) {
  if (!s || *s < '0' || *s > '9')
    return false;
  errno = 0;
  char *end = NULL;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || v > (unsigned long long)INT64_MAX)
    return false;
  int64_t mul = 1;
  if (suffixes && *end) {
    switch (*end) {
    case 'k': case 'K': mul = (int64_t)1 << 10; break;
    case 'm': case 'M': mul = (int64_t)1 << 20; break;
    case 'g': case 'G': mul = (int64_t)1 << 30; break;
    default: return false;
    }
    end++;
  }
  if (*end)
    return false;
  return eddy_checked_mul_i64((int64_t)v, mul, out);
}

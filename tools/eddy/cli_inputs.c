/// The --input flags of `eddy run` and `eddy grad`: NAME=VALUE, where NAME
/// names an argument of the function and VALUE is a scalar or a .npy file.
#define _POSIX_C_SOURCE 200809L

#include "runtime/npy.h"
#include "tools/eddy/cli.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

bool eddy_cli_input_parse(const char *text, eddy_cli_input_t *out) {
  const char *eq = text ? strchr(text, '=') : NULL;
  if (!eq || eq == text)
    return false;
  out->arg = text;
  out->name = text;
  out->name_len = (size_t)(eq - text);
  out->value = eq + 1;
  return true;
}

bool eddy_cli_is_graphdef(const char *path) {
  size_t n = strlen(path);
  return n > 3 && strcmp(path + n - 3, ".pb") == 0;
}

/// Numbers (and true/false/inf/nan) are scalars; anything else is a path.
static bool looks_like_scalar(const char *v) {
  const char *p = v;
  if (*p == '+' || *p == '-')
    p++;
  if ((*p >= '0' && *p <= '9') || (*p == '.' && p[1] >= '0' && p[1] <= '9'))
    return true;
  static const char *const words[] = {"true", "false", "inf", "infinity",
                                      "nan"};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
    if (strcmp(p, words[i]) == 0)
      return true;
  }
  return false;
}

static eddy_status_t input_error(const eddy_op_t *func, int64_t idx,
                                 eddy_status_t cause) {
  char pos[32];
  eddy_status_t st = eddy_status_create(
      eddy_status_code(cause), "@%s: argument %" PRId64 " '%s': %s",
      eddy_ir_func_name(func), idx,
      eddy_ir_func_arg_label(func, (size_t)idx, pos, sizeof pos),
      eddy_status_message(cause));
  eddy_status_destroy(cause);
  return st;
}

/// Loads one input value for argument idx of type t.
static eddy_status_t load_input(eddy_rt_ctx_t *rt, const eddy_op_t *fn,
                                int64_t idx,
                                const eddy_type_t *t, const char *value,
                                eddy_eval_value_t *out) {
  if (t->kind != EDDY_TYPE_TENSOR) {
    eddy_buf_t ty;
    eddy_buf_init(&ty);
    eddy_ir_type_print(t, &ty);
    eddy_status_t st = input_error(
        fn, idx,
        eddy_status_create(EDDY_ERR_UNSUPPORTED,
                           "only tensors can be given as inputs, the "
                           "argument is %s",
                           ty.data));
    eddy_buf_destroy(&ty);
    return st;
  }
  if (looks_like_scalar(value)) {
    eddy_status_t st = eddy_eval_scalar_from_text(rt, t->dtype, value, out);
    return st ? input_error(fn, idx, st) : NULL;
  }
  eddy_rt_tensor_t tensor = eddy_rt_tensor_empty();
  eddy_rt_status_t rs = eddy_rt_npy_read_file(rt, value, &tensor);
  if (rs) {
    eddy_status_t cause = eddy_status_create(
        (eddy_status_code_t)eddy_rt_status_code(rs), "%s",
        eddy_rt_status_message(rs));
    eddy_rt_status_destroy(rs);
    return input_error(fn, idx, cause);
  }
  *out = eddy_eval_value_from_tensor(&tensor);
  return NULL;
}

eddy_status_t eddy_cli_inputs_load(eddy_rt_ctx_t *rt,
                                   const eddy_cli_input_t *inputs, size_t num,
                                   const eddy_op_t *func, bool all_required,
                                   eddy_eval_value_t *vals) {
  const eddy_type_t *fty = eddy_ir_func_type(func);
  const char *fn = eddy_ir_func_name(func);
  size_t n = fty->num_inputs;
  const eddy_cli_input_t **given = calloc(n + 1, sizeof(*given));
  if (!given)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  eddy_status_t st = NULL;
  for (size_t i = 0; i < num && !st; i++) {
    const eddy_cli_input_t *in = &inputs[i];
    int64_t idx = eddy_ir_func_arg_index(func, in->name, in->name_len);
    if (idx < 0 || (uint64_t)idx >= n) {
      eddy_buf_t names;
      eddy_buf_init(&names);
      bool named = n > 0 && eddy_ir_func_arg_name(func, 0);
      for (size_t k = 0; named && k < n; k++)
        eddy_buf_printf(&names, "%s%s", k ? ", " : ": ",
                        eddy_ir_func_arg_name(func, k));
      if (!named && n == 1)
        eddy_buf_puts(&names, ": arg0");
      else if (!named && n > 1)
        eddy_buf_printf(&names, ": arg0 .. arg%zu", n - 1);
      st = eddy_status_create(
          EDDY_ERR_INVALID_ARGUMENT,
          "--input %s: @%s has no argument '%.*s' (it takes %zu argument%s%s;"
          " arguments are named by %s)",
          in->arg, fn, (int)in->name_len, in->name, n, n == 1 ? "" : "s",
          names.data ? names.data : "",
          named ? "these names or by position (arg0 ...)" : "position");
      eddy_buf_destroy(&names);
    } else if (given[idx]) {
      char pos[32];
      st = eddy_status_create(
          EDDY_ERR_INVALID_ARGUMENT,
          "argument %" PRId64 " '%s' is given twice (--input %s and --input "
          "%s)",
          idx, eddy_ir_func_arg_label(func, (size_t)idx, pos, sizeof pos), given[idx]->arg,
          in->arg);
    } else {
      given[idx] = in;
    }
  }
  for (size_t i = 0; i < n && !st && all_required; i++) {
    if (given[i])
      continue;
    eddy_buf_t ty;
    eddy_buf_init(&ty);
    eddy_ir_type_print(fty->inputs[i], &ty);
    char pos[32];
    const char *label = eddy_ir_func_arg_label(func, i, pos, sizeof pos);
    st = eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                            "@%s: argument %zu '%s' (%s) has no value; "
                            "give it with --input %s=VALUE",
                            fn, i, label, ty.data, label);
    eddy_buf_destroy(&ty);
  }
  for (size_t i = 0; i < n && !st; i++)
    if (given[i])
      st = load_input(rt, func, (int64_t)i, fty->inputs[i], given[i]->value,
                      &vals[i]);
  free(given);
  return st;
}

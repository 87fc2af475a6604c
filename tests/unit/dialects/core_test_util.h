/// Helpers shared by the core dialect unit tests: build values of a type
/// written as "2x?xf32" ("*xf32" unranked, "f32" scalar) and attributes
/// written as "axes=[1, -1]; keepdims=true; dtype=\"i32\"; axis=0".
#ifndef EDDY_TESTS_UNIT_DIALECTS_CORE_TEST_UTIL_H
#define EDDY_TESTS_UNIT_DIALECTS_CORE_TEST_UTIL_H

#include "dialects/dialects.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

typedef struct core_fx {
  eddy_ctx_t *ctx;
  eddy_module_t *m;
  eddy_block_t *entry; ///< values are block arguments of one function
} core_fx_t;

static inline core_fx_t *core_fx_create(void) {
  core_fx_t *f = calloc(1, sizeof(*f));
  f->ctx = eddy_ir_ctx_create();
  eddy_dialects_register_all(f->ctx);
  f->m = eddy_ir_module_create(f->ctx, NULL);
  eddy_op_t *fn = NULL;
  eddy_status_t st =
      eddy_ir_func_create(f->m, "f", NULL, 0, NULL, 0, NULL, &fn);
  if (st) {
    eddy_status_print(st, stderr);
    abort();
  }
  f->entry = eddy_ir_func_entry(fn);
  return f;
}

static inline void core_fx_destroy(core_fx_t *f) {
  eddy_ir_module_destroy(f->m);
  eddy_ir_ctx_destroy(f->ctx);
  free(f);
}

/// "2x?xf32", "*xi1", "f32"; NULL on malformed text.
static inline const eddy_type_t *core_ty(core_fx_t *f, const char *s) {
  int64_t dims[16];
  int32_t rank = 0;
  if (s[0] == '*' && s[1] == 'x') {
    rank = EDDY_RANK_UNKNOWN;
    s += 2;
  } else {
    while (strchr(s, 'x')) {
      if (*s == '?') {
        dims[rank++] = EDDY_DIM_DYNAMIC;
        s++;
      } else {
        dims[rank++] = strtoll(s, (char **)&s, 10);
      }
      if (*s != 'x')
        return NULL;
      s++;
    }
  }
  eddy_dtype_t dt;
  if (!eddy_dtype_from_name(s, strlen(s), &dt))
    return NULL;
  return eddy_ir_tensor_type_get(f->ctx, dt, rank, rank > 0 ? dims : NULL);
}

static inline eddy_value_t *core_arg(core_fx_t *f, const char *type) {
  const eddy_type_t *t = core_ty(f, type);
  if (!t)
    abort();
  return eddy_ir_block_add_arg(f->entry, t);
}

/// Parses "a=[1, 2]; b=3; c=true; d=\"s\"" into out (at most cap).
static inline size_t core_attrs(core_fx_t *f, const char *s,
                                eddy_named_attr_t *out, size_t cap) {
  size_t n = 0;
  while (s && *s && n < cap) {
    while (*s == ' ' || *s == ';')
      s++;
    if (!*s)
      break;
    const char *eq = strchr(s, '=');
    char name[64];
    size_t len = (size_t)(eq - s);
    memcpy(name, s, len);
    name[len] = '\0';
    s = eq + 1;
    const eddy_attr_t *a;
    if (*s == '[') {
      int64_t v[64];
      size_t k = 0;
      s++;
      while (*s != ']') {
        while (*s == ' ' || *s == ',')
          s++;
        if (*s == ']')
          break;
        v[k++] = strtoll(s, (char **)&s, 10);
      }
      s++;
      a = eddy_ir_i64_array_attr_get(f->ctx, v, k);
    } else if (*s == '"') {
      const char *e = strchr(s + 1, '"');
      a = eddy_ir_string_attr_get(f->ctx, s + 1, (size_t)(e - s - 1));
      s = e + 1;
    } else if (strncmp(s, "true", 4) == 0 || strncmp(s, "false", 5) == 0) {
      a = eddy_ir_bool_attr_get(f->ctx, *s == 't');
      s += *s == 't' ? 4 : 5;
    } else {
      a = eddy_ir_int_attr_get(f->ctx, strtoll(s, (char **)&s, 10),
                               EDDY_DT_I64);
    }
    out[n++] = eddy_ir_named_attr(f->ctx, name, a);
  }
  return n;
}

/// Creates op `name` on fresh arguments of the ';'-separated operand types
/// with inferred result types. Returns the op, or NULL with *out_st set.
static inline eddy_op_t *core_make(core_fx_t *f, const char *name,
                                   const char *operands, const char *attrs,
                                   eddy_status_t *out_st) {
  eddy_value_t *vals[16];
  size_t nv = 0;
  char buf[256];
  snprintf(buf, sizeof(buf), "%s", operands);
  for (char *p = strtok(buf, ";"); p; p = strtok(NULL, ";")) {
    while (*p == ' ')
      p++;
    vals[nv++] = core_arg(f, p);
  }
  eddy_named_attr_t na[16];
  size_t n = core_attrs(f, attrs, na, 16);
  eddy_op_state_t st = {
      .name = name,
      .operands = vals,
      .num_operands = nv,
      .attrs = na,
      .num_attrs = n,
  };
  eddy_op_t *op = NULL;
  *out_st = eddy_ir_op_create(f->ctx, &st, &op);
  return op;
}

/// The op's result types as "tensor<2xf32>, tensor<2xf32>" (caller frees).
static inline char *core_result_text(const eddy_op_t *op) {
  eddy_buf_t b;
  eddy_buf_init(&b);
  for (uint32_t i = 0; i < op->num_results; i++) {
    if (i)
      eddy_buf_puts(&b, ", ");
    eddy_ir_type_print(op->results[i].type, &b);
  }
  if (!b.data)
    eddy_buf_puts(&b, "");
  return eddy_buf_take(&b);
}

#endif

/// `eddy run --mode=compare` (see run_compare.h).
#define _POSIX_C_SOURCE 200809L

#include "tools/eddy/run_compare.h"

#include "tools/eddy/run_compiled.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum exec {
  X_EVAL,
  X_INTERP,
  X_CPU,
  X_KERNELS,
  X_CUDA,
  X_COUNT_
} exec_t;

static const char *const k_exec[X_COUNT_] = {"eval", "interp", "cpu",
                                             "kernels", "cuda"};

/// Parses a comma-separated list into order[]; the count, or -1 with a
/// message in why (256 bytes).
static int parse_list(const char *list, exec_t *order, char *why) {
  int n = 0;
  bool seen[X_COUNT_] = {false};
  const char *p = list;
  while (*p) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    int k = 0;
    while (k < X_COUNT_ &&
           !(strlen(k_exec[k]) == len && strncmp(p, k_exec[k], len) == 0))
      k++;
    if (k == X_COUNT_) {
      snprintf(why, 256,
               "unknown execution '%.*s' (known: eval, interp, cpu, "
               "kernels, cuda)",
               (int)len, p);
      return -1;
    }
    if (seen[k]) {
      snprintf(why, 256, "'%s' is listed twice", k_exec[k]);
      return -1;
    }
    seen[k] = true;
    order[n++] = (exec_t)k;
    p = end ? end + 1 : p + len;
  }
  if (n < 2) {
    snprintf(why, 256, "needs at least two executions, got '%s'", list);
    return -1;
  }
  return n;
}

bool eddy_cli_compare_list_valid(const char *list, char *why) {
  exec_t order[X_COUNT_];
  return parse_list(list, order, why) > 0;
}

/// ---- One result against the reference ------------------------------------

/// A tensor through eddy_rt_compare_tensor; a list by its structure only
/// (its measures are NaN: not measured, null in the JSON).
static eddy_rt_compare_result_t compare_values(const eddy_eval_value_t *ref,
                                               const eddy_eval_value_t *got,
                                               const eddy_cli_interp_opts_t *o,
                                               size_t num_ops) {
  eddy_rt_compare_result_t c = {.worst = -1};
  eddy_buf_t a, b;
  eddy_buf_init(&a);
  eddy_buf_init(&b);
  eddy_eval_value_describe(ref, &a);
  eddy_eval_value_describe(got, &b);
  c.same_type = strcmp(a.data, b.data) == 0;
  eddy_buf_destroy(&a);
  eddy_buf_destroy(&b);
  c.ok = c.same_type;
  if (!c.same_type)
    return c;
  if (ref->kind != EDDY_EVAL_TENSOR) {
    c.max_abs = c.max_rel = c.max_ulp = c.tolerance = NAN;
    return c;
  }
  eddy_rt_compare_opts_t co = eddy_rt_compare_opts_default();
  co.rtol = o->rtol;
  co.atol = o->atol;
  co.num_ops = (int64_t)num_ops;
  eddy_rt_status_t st =
      eddy_rt_compare_tensor(&ref->tensor, &got->tensor, &co, &c);
  if (st) { // results of eddy's own executions always validate
    c.ok = false;
    eddy_rt_status_destroy(st);
  }
  return c;
}

/// ---- The executions ----------------------------------------------------------

typedef struct run {
  exec_t x;
  eddy_status_t st;   ///< its error (owned), NULL when it ran
  bool skipped;       ///< does not apply (st says why)
  double ms;          ///< the call (compiled: without compiling)
  double compile_ms;  ///< compiled: the JIT compilation
  eddy_eval_value_t *vals;
  eddy_rt_compare_result_t *cmp; ///< per result, against the reference
} run_t;

static eddy_walk_result_t count_op(eddy_op_t *op, void *user) {
  (void)op;
  (*(size_t *)user)++;
  return EDDY_WALK_ADVANCE;
}

/// Whether a CUDA device answers (the driver loads and has a device).
static bool cuda_present(eddy_rt_ctx_t *rt) {
  char err[256];
  return eddy_rt_entry_cuda_begin(rt, err, sizeof err) == EDDY_RT_OK;
}

static void run_one(run_t *r, eddy_rt_ctx_t *rt, const eddy_module_t *m,
                    eddy_op_t *func, eddy_op_t *v1_func,
                    const eddy_eval_opts_t *eval_opts,
                    const eddy_cli_interp_opts_t *o,
                    const eddy_eval_value_t *args, size_t nin, size_t nout) {
  double t0 = eddy_cli_now_ms();
  if (r->x == X_EVAL) {
    r->st = eddy_eval_func(rt, func, eval_opts, args, nin, r->vals, nout);
    r->ms = eddy_cli_now_ms() - t0;
  } else if (r->x == X_INTERP) {
    r->st = eddy_cli_run_interp(rt, func, v1_func, eval_opts, o, args, nin,
                                r->vals, nout, &r->ms);
  } else {
    double run_ms = -1;
    r->st = eddy_cli_run_compiled(rt, m, func, k_exec[r->x], NULL, args, nin,
                                  r->vals, nout, &r->compile_ms, &run_ms);
    r->ms = run_ms;
    // Not applicable: the target cannot compile the program, or there is
    // no device (an error of the compilation, or the device check).
    r->skipped = r->st && eddy_status_code(r->st) == EDDY_ERR_UNSUPPORTED &&
                 (run_ms < 0 || r->x == X_CUDA);
  }
}

/// ---- Reports -------------------------------------------------------------

static void print_text(const run_t *runs, int n, size_t nout) {
  const run_t *ref = &runs[0];
  printf("compare reference: %s\n", k_exec[ref->x]);
  for (int i = 1; i < n; i++) {
    const run_t *r = &runs[i];
    if (r->st) {
      printf("compare %s: %s: %s\n", k_exec[r->x],
             r->skipped ? "skipped" : "error", eddy_status_message(r->st));
      continue;
    }
    for (size_t k = 0; k < nout; k++) {
      const eddy_rt_compare_result_t *c = &r->cmp[k];
      eddy_buf_t d;
      eddy_buf_init(&d);
      eddy_eval_value_describe(&ref->vals[k], &d);
      if (!c->same_type) {
        eddy_buf_t g;
        eddy_buf_init(&g);
        eddy_eval_value_describe(&r->vals[k], &g);
        printf("compare %s result %zu: MISMATCH: %s gives %s, %s %s\n",
               k_exec[r->x], k, k_exec[ref->x], d.data, k_exec[r->x], g.data);
        eddy_buf_destroy(&g);
      } else if (ref->vals[k].kind == EDDY_EVAL_TENSOR) {
        printf("compare %s result %zu: %s max_abs_diff %.9g max_rel_diff "
               "%.9g max_ulp %.9g (tolerance %.9g): %s\n",
               k_exec[r->x], k, d.data, c->max_abs, c->max_rel, c->max_ulp,
               c->tolerance, c->ok ? "ok" : "MISMATCH");
      } else {
        printf("compare %s result %zu: %s: ok\n", k_exec[r->x], k, d.data);
      }
      eddy_buf_destroy(&d);
    }
  }
  printf("compare time:");
  for (int i = 0; i < n; i++) {
    const run_t *r = &runs[i];
    if (r->ms < 0)
      printf("%s %s -", i ? "," : "", k_exec[r->x]);
    else
      printf("%s %s %.3f ms", i ? "," : "", k_exec[r->x], r->ms);
    if (r->x != X_EVAL && r->x != X_INTERP && r->compile_ms > 0)
      printf(" (compile %.3f ms)", r->compile_ms);
  }
  printf("\n");
}

static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      fprintf(f, "\\%c", ch);
    else if (ch < 0x20)
      fprintf(f, "\\u%04x", ch);
    else
      fputc(ch, f);
  }
  fputc('"', f);
}

/// A number, or null when it is not finite (JSON has no inf).
static void json_num(FILE *f, double x) {
  if (isfinite(x))
    fprintf(f, "%.9g", x);
  else
    fputs("null", f);
}

static eddy_status_t write_json(const char *path, const run_t *runs, int n,
                                size_t nout, bool agree) {
  FILE *f = fopen(path, "w");
  if (!f)
    return eddy_status_create(EDDY_ERR_IO, "--report %s: cannot write the file",
                              path);
  fprintf(f, "{\n  \"reference\": \"%s\",\n  \"agree\": %s,\n"
             "  \"executions\": [\n",
          k_exec[runs[0].x], agree ? "true" : "false");
  for (int i = 0; i < n; i++) {
    const run_t *r = &runs[i];
    fprintf(f, "    {\"name\": \"%s\", \"status\": \"%s\"", k_exec[r->x],
            !r->st ? "ok" : r->skipped ? "skipped" : "error");
    if (r->st) {
      fputs(", \"message\": ", f);
      json_str(f, eddy_status_message(r->st));
    }
    fputs(", \"time_ms\": ", f);
    json_num(f, r->ms >= 0 ? r->ms : NAN);
    if (r->x != X_EVAL && r->x != X_INTERP) {
      fputs(", \"compile_ms\": ", f);
      json_num(f, r->compile_ms);
    }
    if (i > 0 && !r->st) {
      size_t len = eddy_rt_compare_json(r->cmp, (int64_t)nout, NULL, 0);
      char *text = malloc(len + 1);
      if (!text) {
        fclose(f);
        return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
      }
      eddy_rt_compare_json(r->cmp, (int64_t)nout, text, len + 1);
      fprintf(f, ", \"results\": %s", text);
      free(text);
    }
    fprintf(f, "}%s\n", i + 1 < n ? "," : "");
  }
  fputs("  ]\n}\n", f);
  if (fclose(f) != 0)
    return eddy_status_create(EDDY_ERR_IO, "--report %s: cannot write the file",
                              path);
  return NULL;
}

eddy_status_t eddy_cli_run_compare(eddy_rt_ctx_t *rt, const eddy_module_t *m,
                                   eddy_op_t *func, eddy_op_t *v1_func,
                                   const eddy_eval_opts_t *eval_opts,
                                   const eddy_cli_interp_opts_t *o,
                                   const eddy_eval_value_t *args, size_t nin,
                                   eddy_eval_value_t *out_results, size_t nout,
                                   bool *out_differs) {
  *out_differs = false;
  exec_t order[X_COUNT_];
  int n = 0;
  if (o->compare) {
    char why[256];
    n = parse_list(o->compare, order, why);
    if (n < 0)
      return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT, "--compare: %s",
                                why);
  } else {
    for (int k = X_EVAL; k <= X_KERNELS; k++)
      order[n++] = (exec_t)k;
    if (cuda_present(rt))
      order[n++] = X_CUDA;
  }
  size_t num_ops = 0;
  eddy_ir_walk_pre(func, count_op, &num_ops);
  run_t runs[X_COUNT_];
  memset(runs, 0, sizeof runs);
  eddy_status_t st = NULL;
  for (int i = 0; i < n && !st; i++) {
    runs[i].x = order[i];
    runs[i].vals = calloc(nout + 1, sizeof(*runs[i].vals));
    runs[i].cmp = calloc(nout + 1, sizeof(*runs[i].cmp));
    if (!runs[i].vals || !runs[i].cmp)
      st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  }
  // The interpreter lowers func in place: it goes last.
  for (int pass = 0; pass < 2 && !st; pass++)
    for (int i = 0; i < n; i++)
      if ((runs[i].x == X_INTERP) == (pass == 1))
        run_one(&runs[i], rt, m, func, v1_func, eval_opts, o, args, nin, nout);
  if (!st && runs[0].st) {
    st = runs[0].st;
    runs[0].st = NULL;
  }
  int ran = 1;
  for (int i = 1; !st && i < n; i++) {
    run_t *r = &runs[i];
    if (r->st) {
      *out_differs = *out_differs || !r->skipped;
      continue;
    }
    ran++;
    for (size_t k = 0; k < nout; k++) {
      r->cmp[k] = compare_values(&runs[0].vals[k], &r->vals[k], o, num_ops);
      *out_differs = *out_differs || !r->cmp[k].ok;
    }
  }
  if (!st) {
    print_text(runs, n, nout);
    if (o->report)
      st = write_json(o->report, runs, n, nout, !*out_differs);
  }
  if (!st && ran < 2)
    st = eddy_status_create(EDDY_ERR_UNSUPPORTED,
                            "--mode=compare: only %s ran, nothing to compare "
                            "it with",
                            k_exec[runs[0].x]);
  for (int i = 0; i < n; i++) {
    for (size_t k = 0; runs[i].vals && k < nout; k++) {
      if (i == 0 && !st)
        out_results[k] = runs[i].vals[k]; // the reference's, handed over
      else
        eddy_eval_value_release(&runs[i].vals[k]);
    }
    free(runs[i].vals);
    free(runs[i].cmp);
    eddy_status_destroy(runs[i].st);
  }
  return st;
}

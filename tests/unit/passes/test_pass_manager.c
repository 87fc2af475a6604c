/// Pass manager: registry, pipeline parsing, error wrapping, verification
/// between passes, dumps, timing and statistics, a whole run in one call.
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dialects/dialects.h"
#include "ir/ir.h"
#include "ir/pass.h"
#include "ir/passes/passes.h"

/// Test passes. The count pass records its runs as a statistic.
static eddy_status_t count_run(eddy_pass_ctx_t *pc, eddy_module_t *m) {
  (void)m;
  eddy_ir_pass_stat_add(pc, "runs", 1);
  eddy_ir_pass_stat_add(pc, "twice", 2);
  // The scratch arena is usable and reset between passes.
  void *p = eddy_arena_alloc(eddy_ir_pass_scratch(pc), 64);
  assert_non_null(p);
  assert_non_null(eddy_ir_pass_ctx(pc));
  return NULL;
}

static eddy_status_t fail_run(eddy_pass_ctx_t *pc, eddy_module_t *m) {
  (void)pc;
  (void)m;
  return eddy_status_create(EDDY_ERR_UNSUPPORTED, "boom %d", 42);
}

/// Leaves a function without a terminator: the verifier must reject it.
static eddy_status_t break_run(eddy_pass_ctx_t *pc, eddy_module_t *m) {
  (void)pc;
  eddy_op_t *f = NULL;
  return eddy_ir_func_create(m, "broken", NULL, 0, NULL, 0, NULL, &f);
}

static const eddy_pass_t k_count = {"count", "counts its runs", count_run};
static const eddy_pass_t k_fail = {"fail", "always fails", fail_run};
static const eddy_pass_t k_break = {"break", "breaks the IR", break_run};

typedef struct fixture {
  eddy_ctx_t *ctx;
  eddy_module_t *m;
  char *dump_text;
  size_t dump_len;
  FILE *dump;
} fixture_t;

static int setup(void **state) {
  fixture_t *fx = calloc(1, sizeof *fx);
  fx->ctx = eddy_ir_ctx_create();
  eddy_dialects_register_all(fx->ctx);
  eddy_passes_register_all(fx->ctx);
  eddy_ir_pass_register(fx->ctx, &k_count);
  eddy_ir_pass_register(fx->ctx, &k_fail);
  eddy_ir_pass_register(fx->ctx, &k_break);
  fx->m = eddy_ir_module_create(fx->ctx, NULL);
  fx->dump = open_memstream(&fx->dump_text, &fx->dump_len);
  *state = fx;
  return 0;
}

static int teardown(void **state) {
  fixture_t *fx = *state;
  fclose(fx->dump);
  free(fx->dump_text);
  eddy_ir_module_destroy(fx->m);
  eddy_ir_ctx_destroy(fx->ctx);
  free(fx);
  return 0;
}

/// Options that write everything into the fixture's memory stream.
static eddy_pm_opts_t opts_for(fixture_t *fx) {
  eddy_pm_opts_t o;
  eddy_ir_pm_opts_default(&o);
  o.verify_each = true;
  o.dump = fx->dump;
  return o;
}

static const char *dump_text(fixture_t *fx) {
  fflush(fx->dump);
  return fx->dump_text ? fx->dump_text : "";
}

typedef struct names {
  char text[256];
} names_t;

static void collect_name(const eddy_pass_t *p, void *user) {
  names_t *n = user;
  strcat(n->text, p->name);
  strcat(n->text, " ");
}

static void test_registry(void **state) {
  fixture_t *fx = *state;
  // Registering twice is a no-op; order is registration order.
  eddy_passes_register_all(fx->ctx);
  eddy_ir_pass_register(fx->ctx, &k_count);
  names_t n = {{0}};
  eddy_ir_pass_each(fx->ctx, collect_name, &n);
  assert_string_equal(n.text,
                      "canonicalize cse dce shape-infer licm map-batch gemm-hoist gemm-sink scatter-sink row-split count fail break ");
  assert_ptr_equal(eddy_ir_pass_lookup(fx->ctx, "cse", 3), &eddy_pass_cse);
  assert_ptr_equal(eddy_ir_pass_lookup(fx->ctx, "csex", 3), &eddy_pass_cse);
  assert_null(eddy_ir_pass_lookup(fx->ctx, "cs", 2));
  assert_null(eddy_ir_pass_lookup(fx->ctx, "nope", 4));
}

static void test_pipeline_whitespace(void **state) {
  fixture_t *fx = *state;
  eddy_pm_opts_t o = opts_for(fx);
  o.stats = true;
  eddy_pass_manager_t *pm = eddy_ir_pm_create(fx->ctx, &o);
  assert_null(eddy_ir_pm_add_pipeline(pm, "  count ,\tcount,cse , dce"));
  assert_null(eddy_ir_pm_add_pipeline(pm, "")); // nothing
  assert_null(eddy_ir_pm_add_pipeline(pm, "  "));
  assert_null(eddy_ir_pm_run(pm, fx->m));
  eddy_ir_pm_destroy(pm);
  const char *d = dump_text(fx);
  assert_non_null(strstr(d, "count.runs = 2\n"));
  assert_non_null(strstr(d, "count.twice = 4\n"));
}

static void test_unknown_pass(void **state) {
  fixture_t *fx = *state;
  eddy_pm_opts_t o = opts_for(fx);
  o.stats = true;
  eddy_pass_manager_t *pm = eddy_ir_pm_create(fx->ctx, &o);
  eddy_status_t st = eddy_ir_pm_add_pipeline(pm, "count,bogus,cse");
  assert_non_null(st);
  assert_int_equal(eddy_status_code(st), EDDY_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(eddy_status_message(st), "unknown pass 'bogus'"));
  assert_non_null(strstr(eddy_status_message(st),
                         "(known: canonicalize, cse, dce, shape-infer, licm"));
  eddy_status_destroy(st);
  // A rejected pipeline adds nothing: count must not run.
  assert_null(eddy_ir_pm_run(pm, fx->m));
  assert_null(strstr(dump_text(fx), "count.runs"));
  eddy_ir_pm_destroy(pm);
}

static void test_empty_entry(void **state) {
  fixture_t *fx = *state;
  eddy_pass_manager_t *pm = eddy_ir_pm_create(fx->ctx, NULL);
  eddy_status_t st = eddy_ir_pm_add_pipeline(pm, "cse,,dce");
  assert_non_null(st);
  assert_non_null(strstr(eddy_status_message(st), "empty pass name"));
  eddy_status_destroy(st);
  st = eddy_ir_pm_add_pipeline(pm, "cse,");
  assert_non_null(st);
  eddy_status_destroy(st);
  eddy_ir_pm_destroy(pm);
}

static void test_error_wrapping(void **state) {
  fixture_t *fx = *state;
  eddy_pm_opts_t o = opts_for(fx);
  o.stats = true;
  eddy_pass_manager_t *pm = eddy_ir_pm_create(fx->ctx, &o);
  assert_null(eddy_ir_pm_add_pipeline(pm, "count,fail,count"));
  eddy_status_t st = eddy_ir_pm_run(pm, fx->m);
  assert_non_null(st);
  assert_int_equal(eddy_status_code(st), EDDY_ERR_UNSUPPORTED);
  assert_string_equal(eddy_status_message(st), "pass 'fail': boom 42");
  eddy_status_destroy(st);
  // The run stopped at the failing pass.
  assert_non_null(strstr(dump_text(fx), "count.runs = 1\n"));
  eddy_ir_pm_destroy(pm);
}

static void test_verify_each(void **state) {
  fixture_t *fx = *state;
  eddy_pm_opts_t o = opts_for(fx);
  eddy_pass_manager_t *pm = eddy_ir_pm_create(fx->ctx, &o);
  eddy_ir_pm_add(pm, &k_break);
  eddy_ir_pm_add(pm, &k_count);
  eddy_status_t st = eddy_ir_pm_run(pm, fx->m);
  assert_non_null(st);
  assert_non_null(strstr(eddy_status_message(st),
                         "IR after pass 'break' fails verification: "));
  eddy_status_destroy(st);
  eddy_ir_pm_destroy(pm);
}

static void test_no_verify_each(void **state) {
  fixture_t *fx = *state;
  eddy_pm_opts_t o = opts_for(fx);
  o.verify_each = false;
  eddy_pass_manager_t *pm = eddy_ir_pm_create(fx->ctx, &o);
  eddy_ir_pm_add(pm, &k_break);
  assert_null(eddy_ir_pm_run(pm, fx->m));
  eddy_ir_pm_destroy(pm);
  // The pass manager let the broken IR through; the verifier still sees it.
  eddy_status_t st = eddy_ir_verify_module(fx->m);
  assert_non_null(st);
  eddy_status_destroy(st);
}

static void test_print_after_and_timing(void **state) {
  fixture_t *fx = *state;
  eddy_pm_opts_t o = opts_for(fx);
  o.print_after = "cse";
  o.time_passes = true;
  eddy_pass_manager_t *pm = eddy_ir_pm_create(fx->ctx, &o);
  assert_null(eddy_ir_pm_add_pipeline(pm, "count,cse,dce"));
  assert_null(eddy_ir_pm_run(pm, fx->m));
  eddy_ir_pm_destroy(pm);
  const char *d = dump_text(fx);
  assert_non_null(strstr(d, "// -----// IR after cse //----- //\n"));
  assert_null(strstr(d, "IR after count"));
  assert_null(strstr(d, "IR after dce"));
  const char *table = strstr(d, "pass timing report");
  assert_non_null(table);
  assert_non_null(strstr(table, "count\n"));
  assert_non_null(strstr(table, "dce\n"));
  assert_non_null(strstr(table, "100.0%  total\n"));
}

static void test_print_after_all(void **state) {
  fixture_t *fx = *state;
  eddy_pm_opts_t o = opts_for(fx);
  o.print_after_all = true;
  eddy_pass_manager_t *pm = eddy_ir_pm_create(fx->ctx, &o);
  assert_null(eddy_ir_pm_add_pipeline(pm, "count,cse"));
  assert_null(eddy_ir_pm_run(pm, fx->m));
  eddy_ir_pm_destroy(pm);
  const char *d = dump_text(fx);
  const char *a = strstr(d, "// -----// IR after count //----- //\nmodule");
  const char *b = strstr(d, "// -----// IR after cse //----- //\nmodule");
  assert_non_null(a);
  assert_non_null(b);
  assert_true(a < b);
}

/// One call for a whole run: the pipeline's passes, then the verifier even
/// when verify_each is off; a bad pipeline runs nothing.
static void test_run_pipeline(void **state) {
  fixture_t *fx = *state;
  eddy_pm_opts_t o = opts_for(fx);
  o.stats = true;
  assert_null(eddy_ir_pm_run_pipeline(fx->ctx, fx->m, "count, count", &o));
  assert_non_null(strstr(dump_text(fx), "count.runs = 2\n"));
  eddy_status_t st = eddy_ir_pm_run_pipeline(fx->ctx, fx->m, "count,bogus", &o);
  assert_non_null(st);
  assert_non_null(strstr(eddy_status_message(st), "unknown pass 'bogus'"));
  eddy_status_destroy(st);
  assert_null(strstr(dump_text(fx), "count.runs = 1\n"));
  o.verify_each = false;
  o.stats = false;
  st = eddy_ir_pm_run_pipeline(fx->ctx, fx->m, "break", &o);
  assert_non_null(st);
  assert_null(strstr(eddy_status_message(st), "IR after pass"));
  eddy_status_destroy(st);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_registry, setup, teardown),
      cmocka_unit_test_setup_teardown(test_pipeline_whitespace, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_unknown_pass, setup, teardown),
      cmocka_unit_test_setup_teardown(test_empty_entry, setup, teardown),
      cmocka_unit_test_setup_teardown(test_error_wrapping, setup, teardown),
      cmocka_unit_test_setup_teardown(test_verify_each, setup, teardown),
      cmocka_unit_test_setup_teardown(test_no_verify_each, setup, teardown),
      cmocka_unit_test_setup_teardown(test_print_after_and_timing, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_print_after_all, setup, teardown),
      cmocka_unit_test_setup_teardown(test_run_pipeline, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

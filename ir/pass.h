/// Passes and the pass manager.
///
/// A pass is a named struct with a run function over a module. Passes are
/// registered in the context (no globals) and pipelines are explicit lists of
/// pass names.
#ifndef EDDY_IR_PASS_H
#define EDDY_IR_PASS_H

#include "ir/ir.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct eddy_pass_ctx eddy_pass_ctx_t;

typedef struct eddy_pass {
  const char *name;    ///< "cse"
  const char *summary; ///< one line for --help
  eddy_status_t (*run)(eddy_pass_ctx_t *pc, eddy_module_t *m);
} eddy_pass_t;

/// Scratch arena for the running pass, reset after the pass.
eddy_arena_t *eddy_ir_pass_scratch(eddy_pass_ctx_t *pc);
eddy_ctx_t *eddy_ir_pass_ctx(eddy_pass_ctx_t *pc);
/// Adds `delta` to the named statistic of the running pass (--stats).
void eddy_ir_pass_stat_add(eddy_pass_ctx_t *pc, const char *stat,
                           int64_t delta);
/// Records that the pass changed the IR (for --print-ir-after-change).
void eddy_ir_pass_mark_changed(eddy_pass_ctx_t *pc);

/// Registers a pass (the struct must outlive the context). Idempotent.
void eddy_ir_pass_register(eddy_ctx_t *ctx, const eddy_pass_t *pass);
/// NULL when no pass has that name.
const eddy_pass_t *eddy_ir_pass_lookup(eddy_ctx_t *ctx, const char *name,
                                       size_t len);
/// Calls fn for every registered pass, in registration order.
void eddy_ir_pass_each(eddy_ctx_t *ctx,
                       void (*fn)(const eddy_pass_t *p, void *user),
                       void *user);

typedef struct eddy_pass_manager eddy_pass_manager_t;

typedef struct eddy_pm_opts {
  bool verify_each;        ///< verify after every pass (default on in debug builds)
  bool print_after_all;    ///< print the module after each pass
  const char *print_after; ///< print after passes with this name (or NULL)
  bool time_passes;        ///< report wall time per pass at the end of run
  bool stats;              ///< report pass statistics at the end of run
  FILE *dump;              ///< where printing and reports go (stderr if NULL)
  bool print_locations;    ///< print loc(...) in IR dumps
} eddy_pm_opts_t;

/// Default options: verify_each on in debug builds, nothing printed.
void eddy_ir_pm_opts_default(eddy_pm_opts_t *o);
/// Owned.
eddy_pass_manager_t *eddy_ir_pm_create(eddy_ctx_t *ctx,
                                       const eddy_pm_opts_t *opts);
void eddy_ir_pm_destroy(eddy_pass_manager_t *pm);
void eddy_ir_pm_add(eddy_pass_manager_t *pm, const eddy_pass_t *pass);
/// Appends the passes of a comma-separated list ("canonicalize,cse,dce").
/// An unknown name is an error naming it and listing the known passes.
eddy_status_t eddy_ir_pm_add_pipeline(eddy_pass_manager_t *pm,
                                      const char *pipeline);
/// Runs every pass in order; stops at the first error, which names the
/// pass ("pass 'cse': ...").
eddy_status_t eddy_ir_pm_run(eddy_pass_manager_t *pm, eddy_module_t *m);
/// A pass manager of opts (NULL: the defaults) for one run: adds pipeline
/// (as eddy_ir_pm_add_pipeline), runs it on m, then verifies m whether or
/// not verify_each did. Returns the first error, or NULL.
eddy_status_t eddy_ir_pm_run_pipeline(eddy_ctx_t *ctx, eddy_module_t *m,
                                      const char *pipeline,
                                      const eddy_pm_opts_t *opts);

#ifdef __cplusplus
}
#endif
#endif

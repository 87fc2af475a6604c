/// TensorFlow fixtures compiled (tests of backend-cpu and backend-gpu): the
/// pipeline of eddy_add_model on a fixture's module, and a JIT-compiled run
/// of its @main on the fixture's inputs. Include after tf_fixtures.h.
#ifndef EDDY_TESTS_UNIT_COMMON_TF_COMPILED_H
#define EDDY_TESTS_UNIT_COMMON_TF_COMPILED_H

#include "backend-cpu/cpu.h"
#include "ir/passes/passes.h"
#include "lower/tf/tf_lower.h"

/// On a module of tf_fixture_open_legalized: shape-infer and canonicalize
/// (the rest of what eddy_add_model runs on a GraphDef), then the passes
/// `eddy compile` runs for the target (EDDY_PASSES_COMPILE_PIPELINE, or
/// EDDY_PASSES_COMPILE_PIPELINE_CPU when cpu); shape-infer gives
/// TensorFlow's lists of unknown element shape the element type of what is
/// written into them, which the backends need. The passes' statistics go to
/// stats when it is not NULL.
static inline eddy_status_t tf_fixture_prepare_stats(tf_fixture_run_t *r,
                                                     FILE *stats, bool cpu) {
  eddy_passes_register_all(r->ctx);
  eddy_pm_opts_t po;
  eddy_ir_pm_opts_default(&po);
  po.verify_each = true;
  po.stats = stats != NULL;
  po.dump = stats;
  eddy_pass_manager_t *pm = eddy_ir_pm_create(r->ctx, &po);
  if (!pm)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  eddy_status_t st = eddy_ir_pm_add_pipeline(
      pm, cpu ? "shape-infer,canonicalize," EDDY_PASSES_COMPILE_PIPELINE_CPU
              : "shape-infer,canonicalize," EDDY_PASSES_COMPILE_PIPELINE);
  if (!st)
    st = eddy_ir_pm_run(pm, r->m);
  eddy_ir_pm_destroy(pm);
  return st;
}

/// For the GPU target.
static inline eddy_status_t tf_fixture_prepare(tf_fixture_run_t *r) {
  return tf_fixture_prepare_stats(r, NULL, false);
}

/// JIT-compiles @main of r->m with o (prefix "fixture") and runs it on
/// r->args; the results go to r->res.
static inline eddy_status_t tf_fixture_run_jit(tf_fixture_run_t *r,
                                               eddy_cpu_opts_t o) {
  o.prefix = "fixture";
  eddy_cpu_jit_t *jit = NULL;
  EDDY_RETURN_IF_ERROR(eddy_cpu_jit_create(r->m, "main", &o, &jit));
  size_t nargs = r->mf.num_feeds, nres = r->mf.num_fetches;
  eddy_rt_tensor_t ts[2 * 64]; // tf_fixture_run_t holds 64 of each
  for (size_t i = 0; i < nargs; i++)
    ts[i] = r->args[i].tensor;
  eddy_status_t st = eddy_cpu_jit_run(jit, r->rt, ts, ts + nargs);
  for (size_t i = 0; !st && i < nres; i++)
    r->res[i] = eddy_eval_value_from_tensor(&ts[nargs + i]);
  eddy_cpu_jit_destroy(jit);
  return st;
}

#endif

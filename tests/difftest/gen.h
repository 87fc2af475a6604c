/// The random program generator of the three-way differential test
/// (docs/reliability.md, "Differential testing of the executions").
///
/// From a seed it builds one func.func of well-typed eddy IR whose every
/// op stays in its defined domain by construction, so that the evaluator,
/// the dataflow interpreter, compiled CPU code and the GPU target's kernels
/// form must all agree on it. The signature is fixed:
///
///   arg0: tensor<?xK x F>  x, its row count D dynamic (1 to 3 at run time)
///   arg1: tensor<F>        s
///   arg2: tensor<i32>      n, 0 to 3: trip counts come from it
///   arg3: tensor<F>        p, in [-1, 1]: predicates compare it
///   arg4..: static float tensors (0 to 2 of them)
///
/// F is f32 or now and then f64. Predicates are computed from p, n and
/// loop counters only (never from computed floats, whose last bits may
/// differ between executions), so every execution takes the same branches
/// and runs the same trip counts. Some loops read the row blocks of a
/// [T, B, K] tensor at their counter and multiply them by a fixed weight,
/// with independent iterations or a carried state (B up to 32 rows): the
/// patterns of the compile pipeline's passes. In smooth mode the program is
/// also differentiable everywhere with respect to its float arguments but p
/// (no abs, relu, maximum, minimum), for the finite-difference check.
#ifndef EDDY_TESTS_DIFFTEST_GEN_H
#define EDDY_TESTS_DIFFTEST_GEN_H

#include "ir/ir.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct dt_gen_opts {
  bool smooth; ///< only ops differentiable everywhere (for eddy_ad_check)
  int budget;  ///< about how many ops (default 40 when <= 0)
} dt_gen_opts_t;

/// The argument that predicates read: not differentiated.
enum { DT_ARG_PRED = 3 };

/// Builds @name from seed into m (whose context has the dialects). The
/// function verifies; an error is a bug of the generator.
eddy_status_t dt_generate(eddy_module_t *m, const char *name, uint64_t seed,
                          const dt_gen_opts_t *o);

/// splitmix64 (deterministic everywhere); also draws the inputs.
uint64_t dt_rng_next(uint64_t *state);

#endif

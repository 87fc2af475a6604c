/// The kernel plan of one entry function: which ops form each kernel, what
/// each kernel reads and writes, which values live in memory and for how
/// long, and where each step runs. It is built from the IR before any code
/// is written (plan.c); the emitter follows it, in every form
/// (docs/cpu.md, "The kernel plan"). `eddy compile --emit=plan` prints it.
#ifndef EDDY_BACKEND_CPU_PLAN_H
#define EDDY_BACKEND_CPU_PLAN_H

#include "backend-cpu/cpu.h"

#include <stdbool.h>
#include <stdint.h>

/// The most loops one group of row-split parts may run at once.
#define CPU_MAX_TASKS 64
/// Blocks of rows a run of row-parallel kernels is divided into (one task
/// each), the fewest rows a block gets, and the least work a run must have
/// to be divided (its elements, each weighted by the cost of the ops that
/// compute it, plan.c): below it the hand-off to another core costs about
/// what it saves (docs/cpu.md, "Row-parallel kernels").
#define CPU_ROW_PARTS 2
#define CPU_ROW_MIN_ROWS 8
#define CPU_ROW_WORK ((int64_t)1 << 18)

/// What an op becomes.
typedef enum cpu_step_kind {
  /// Computed inline, element by element, inside the kernel of the op that
  /// reads it (its only user, in the same block): no buffer.
  CPU_STEP_FUSED = 0,
  CPU_STEP_SPLAT,  ///< a splat constant: an inline constant where it is read
  CPU_STEP_GLOBAL, ///< a constant: a read-only global (CUDA: a device copy)
  /// Loop nests over the result's elements computing the op with the ops
  /// fused into it (in the GPU target's forms: parallel kernels).
  CPU_STEP_KERNEL,
  /// An f32 matmul large enough to call the runtime's sgemm (OpenBLAS or
  /// eddy's tiled kernel; cuBLAS in the CUDA form).
  CPU_STEP_LIBRARY,
  CPU_STEP_LIST,   ///< a TensorList op: a call of the runtime's list helpers
  CPU_STEP_LOOP,   ///< ctl.while: a host loop around its regions' steps
  CPU_STEP_BRANCH, ///< ctl.if: a host branch
  CPU_STEP_INLINE, ///< ctl.call: the callee's steps, inlined
  CPU_STEP_UNSUPPORTED, ///< the backend cannot compile the op (an error)
} cpu_step_kind_t;

/// The plan's entry for one op.
typedef struct cpu_step {
  cpu_step_kind_t kind;
  /// FUSED: the op whose kernel computes this one (transitively, the root).
  const eddy_op_t *into;
  /// KERNEL: a matmul with `?` dims whose f32 product calls sgemm when
  /// M*N*K reaches the threshold at run time (host code only).
  bool runtime_library;
  /// LIST (tl.from_tensor): the list's items share the operand's data, an
  /// argument of the entry or a constant, which nothing writes and which
  /// outlives every list of the call (host memory only).
  bool borrow;
  /// LIST (tl.get_item of a tensor inside a loop): the result is the item
  /// in place, not a copy: the list is the same, and nothing writes it, for
  /// the whole loop (host form only). KERNEL (core.gather of one row, a
  /// scalar index on axis 0, inside a loop): the result is that row of the
  /// operand in place, which nothing writes for the whole loop (host form).
  bool view;
  /// LIBRARY inside a loop whose B operand is defined outside it (host
  /// form, one product per step): index + 1 of the packed-B cache the
  /// product keeps B's packed copy in across iterations (0: none). The
  /// cache is reset on entering the outermost such loop (cpu_plan_t.
  /// cache_loops), where B's data may have changed.
  int32_t gemm_cache;
  /// LIBRARY of a core.add (host form, in a ctl.while body): the next value
  /// of a loop value, the loop value plus this f32 matmul (fused into the
  /// step), written in place (cpu_plan_loop_out): one sgemm that adds the
  /// product into the loop value's buffer (EDDY_RT_SGEMM_ACCUMULATE), as a
  /// loop's gradient accumulates dW += x^T dy. NULL otherwise.
  const eddy_op_t *product;
  /// LOOP of the entry's body (host form), a part of a loop the row-split
  /// pass divided by rows (`row_split.part = [i, n]`), next to its other
  /// parts: i + 1 of the n loops that run at once, each as one task of the
  /// runtime's pool (docs/cpu.md, "Row-parallel loops"); the first, i = 0,
  /// starts them. 0: not a task.
  int32_t task;
  int32_t num_tasks;
  /// KERNEL of a run of kernels next to one another in a block (host form)
  /// that each compute their result rows from the same rows of what they
  /// read (pointwise ops, splits along a later axis): i + 1 of the run's
  /// num_row_kernels kernels. The run is computed by CPU_ROW_PARTS tasks of
  /// the runtime's pool, each running every kernel of the run on its block
  /// of rows (docs/cpu.md, "Row-parallel kernels"); the first, i = 0,
  /// starts them. 0: not in such a run.
  int32_t row_kernel;
  int32_t num_row_kernels;
} cpu_step_t;

typedef struct cpu_plan {
  const eddy_module_t *module;
  const eddy_op_t *func;      ///< the entry function
  const eddy_block_t *top;    ///< its body
  const eddy_cpu_opts_t *opts;
  eddy_ptrmap_t steps;        ///< eddy_op_t * -> cpu_step_t *
  /// Values of `top`: value -> (intptr_t) index + 1 of the last top-level
  /// op that reads it (a use in a region counts at its top-level op, a use
  /// by a fused op where that op's kernel runs; INT32_MAX + 1: returned).
  eddy_ptrmap_t last_use;
  /// Values of `top` computed by a kernel or library step and returned
  /// once, with a static type: written straight into their result tensor.
  /// value -> (intptr_t) result index + 1.
  eddy_ptrmap_t direct;
  /// Values a ctl.while body computes (by a kernel or library step, static
  /// type) and yields once, written straight into the loop value's buffer
  /// (host form): the loop value is not read after that step, or only by
  /// the step's own pointwise kernel at the same element. value ->
  /// (intptr_t) its position in the yield + 1.
  eddy_ptrmap_t loop_out;
  /// Packed-B caches: cache i is reset on entering the ctl.while
  /// cache_loops[i] (see cpu_step_t.gemm_cache).
  const eddy_op_t **cache_loops;
  int32_t num_gemm_caches;
  /// Some value of the function (or of a callee it inlines) has dynamic
  /// dims: every op then runs behind the emitter's error gates (a run of
  /// row-parallel kernels behind one).
  bool dynamic;
  /// Some op can record a run-time error (a bad index, list misuse, a
  /// shape check of the dynamic case): the function gets the error slots.
  bool fallible;
  eddy_arena_t *arena;
} cpu_plan_t;

/// Builds the plan of func (an entry of m, verified) for opts.
eddy_status_t cpu_plan_build(cpu_plan_t *p, const eddy_module_t *m,
                             const eddy_op_t *func,
                             const eddy_cpu_opts_t *opts);
void cpu_plan_destroy(cpu_plan_t *p);

/// op's step (NULL for terminators and ops outside the plan).
const cpu_step_t *cpu_plan_step(const cpu_plan_t *p, const eddy_op_t *op);
/// op is computed inside its user's kernel.
bool cpu_plan_fused(const cpu_plan_t *p, const eddy_op_t *op);
/// The top-level index of the last op that reads top-level value v (see
/// cpu_plan_t.last_use), or -1 when v is not a value of `top`.
intptr_t cpu_plan_last_use(const cpu_plan_t *p, const eddy_value_t *v);
/// The entry's result v is written into directly, or -1.
int32_t cpu_plan_direct(const cpu_plan_t *p, const eddy_value_t *v);

/// The position in its loop's yield whose buffer body value v is written
/// into directly (cpu_plan_t.loop_out), or -1.
int32_t cpu_plan_loop_out(const cpu_plan_t *p, const eddy_value_t *v);

/// Loop value k of ctl.while `loop` has no buffer of its own: the loop
/// reads its initial value's. The body passes the value through unchanged
/// (TensorFlow's loops carry their weights and inputs so), nothing reads it
/// after the loop, and the initial value is a buffer of the same static
/// type (not fused, a splat, or a view). Nothing writes that buffer while
/// the loop runs: the initial value lives until the loop's end, and the
/// loop writes only the buffers of the values it changes. Host and kernels
/// forms.
bool cpu_plan_reads_init(const cpu_plan_t *p, const eddy_op_t *loop,
                         uint32_t k);

/// The static sizes of one matmul: M, N, K and the result's batch count.
typedef struct cpu_mm_shape {
  int64_t m, n, k;
  int64_t batch; ///< product of the result's batch dims
  /// One matrix B for the whole batch and A not transposed: the batch is
  /// one [batch*M, K] x [K, N] product (see emit_matmul.c).
  bool rows_fold;
} cpu_mm_shape_t;
void cpu_mm_shape(const eddy_op_t *op, cpu_mm_shape_t *d);

/// Appends the plan as text (`eddy compile --emit=plan`).
void cpu_plan_print(const cpu_plan_t *p, eddy_buf_t *out);

#endif

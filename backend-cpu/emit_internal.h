/// Internal interface of the MLIR text emitter (emit.c: functions, buffers
/// and control flow; emit_expr.c: per-element computations and kernels).
///
/// Every SSA name the emitter makes is `%tN` for a fresh N; functions return
/// the N. Every tensor value that is not fused gets one memref buffer,
/// allocated at function entry (shapes are static), so a value computed in a
/// loop body reuses its buffer across iterations.
#ifndef EDDY_BACKEND_CPU_EMIT_INTERNAL_H
#define EDDY_BACKEND_CPU_EMIT_INTERNAL_H

#include "backend-cpu/cpu.h"
#include "backend-cpu/plan.h"

#include <stdbool.h>
#include <stdint.h>

/// What a value of the eddy function became.
typedef struct cpu_val {
  int buf;                  ///< %tN of its memref, or -1 when not materialized
  bool fused;               ///< computed inline at its single use
  const eddy_attr_t *splat; ///< a splat core.constant: inline arith.constant
  /// Values of a type with dynamic dims have no fixed buffer: their data
  /// pointer and dims live in stack slots (promoted to registers by LLVM),
  /// and views are made from them where the value is read or written.
  int dslot; ///< memref<Rxindex> of the run-time dims, or -1
  int pslot; ///< memref<i64> of the data pointer, or -1
  int cslot; ///< memref<i64> of the bytes allocated (owned buffers), or -1
  /// A list item read in place (the plan's view): memref<i64> holding its
  /// address, from which buf is remade outside the gate it was read in.
  int vslot;
} cpu_val_t;

/// A scratch block from the runtime; blocks of dead top-level values are
/// reused by later buffers that fit.
typedef struct cpu_block {
  int ptr; ///< %tN of the pointer
  int64_t bytes;
  bool free;
} cpu_block_t;

/// Loop nests open at once (the deepest op nesting the emitter produces is
/// far below this; deeper is an internal error).
#define CPU_MAX_NESTS 64

typedef struct cpu_emit {
  eddy_ctx_t *ctx;
  const eddy_module_t *module;
  const eddy_cpu_opts_t *opts;
  int call_depth;     ///< ctl.call levels being inlined
  eddy_buf_t globals; ///< module-level declarations
  eddy_buf_t pro;     ///< allocations at function entry
  eddy_buf_t body;    ///< the computation
  eddy_buf_t epi;     ///< deallocations before return
  eddy_ptrmap_t vals; ///< eddy_value_t * -> cpu_val_t *
  /// Values computed in place: eddy_value_t * -> int * (the %tN of the
  /// memref they are written into: the result tensor's of a value returned
  /// directly, the loop value's of one a loop body writes in place).
  eddy_ptrmap_t direct;
  /// The dim symbols of dynamically shaped values (emit_shape.c):
  /// eddy_value_t * -> int[rank], and the last symbol given.
  eddy_ptrmap_t dim_syms;
  int last_sym;
  eddy_arena_t *arena;
  int next; ///< next fresh %tN
  int next_global;
  int64_t stack_bytes; ///< bytes of buffers placed on the stack so far
  cpu_block_t *heap;   ///< scratch blocks from eddy_rt_entry_alloc
  int num_heap;
  int last_block;    ///< heap index used by the last cpu_alloc_buf, or -1
  eddy_block_t *top; ///< the entry function's body
  /// What to emit: kernels, fusion, values written in place, liveness.
  const cpu_plan_t *plan;
  /// Values of `top` living in a heap block: value -> (intptr_t) index + 1.
  eddy_ptrmap_t value_block;
  int *list_slots; ///< every list slot, released on every exit
  int num_list_slots;
  int eflag_ptr; ///< %tN of the error slot as !llvm.ptr (lists)
  /// Run-time error channel (only when the function has ops that can fail,
  /// e.g. core.gather): %tN of memref<i32> holding the failing site (0 =
  /// none) and of memref<i64>s holding the offending index and the size.
  int eflag, eidx, esize;
  /// memref<i32>: the site of the tl op that ran last before an error (0 =
  /// none), whose location prefixes a list helper's message.
  int elist;
  /// memref<i64>s holding the call's loop budgets (the iteration limit and
  /// the deadline, eddy_rt_entry_max_iterations / _deadline), read in the
  /// prologue when the first loop is emitted; -1 before.
  int loop_limit, loop_deadline;
  int num_sites;
  int *site_globals; ///< global number of each site's "LOC: 'op' op" text
  bool *site_dims;   ///< per site: a shape check (else an index check)
  /// The function has values with dynamic dims: every op runs only while
  /// no run-time error has been recorded (shape checks come first).
  bool dyn;
  cpu_val_t **dyn_owned; ///< storage of dynamically shaped values, freed
  int num_dyn_owned;     ///< at every exit
  /// What the program's form changes (emit_target.c).
  const struct cpu_target *tgt;
  /// ---- kernels (targets with cpu_target_t.kernels) ----
  /// Open loop nests, innermost last: the rank each cpu_loops_open asked
  /// for and the closing braces it emitted (a kernel is one scf.parallel).
  int nest_rank[CPU_MAX_NESTS], nest_braces[CPU_MAX_NESTS];
  bool nest_kernel[CPU_MAX_NESTS];
  int num_nests;
  int kernel_depth; ///< > 0 inside a kernel (device code)
  /// The kernels' error record (gathers' index checks in the GPU target's
  /// forms): %tN of a memref<3xi64> tensor buffer holding site, index and
  /// size (site 0: none), copied to the host error channel after each
  /// kernel that can fail; -1 when the function has none.
  int krec;
  /// While a kernel is open (the kernels forms), the text before it; body
  /// then holds the kernel's. Host code the kernel needs (the dims and
  /// views of dynamically shaped values) is appended here, so that it runs
  /// before the kernel; the kernel's text follows when it closes.
  eddy_buf_t host;
  bool nest_error;  ///< loop nests opened and closed out of order (a bug)
  bool no_reuse;    ///< cpu_alloc_buf takes a new block (not a freed one)
  /// Host slots (cpu_alloc_slot): %tN -> 1. In the kernels forms, host code
  /// (outside kernels) may load and store only these, or where host_ok is
  /// set (a predicate read), and kernels anything but these; any other
  /// access is recorded in host_access (with the op being emitted) and fails
  /// the emission: in the CUDA form it would be a wrong address.
  eddy_ptrmap_t slots;
  bool host_ok, host_access;
  const eddy_op_t *cur_op, *host_access_op; ///< (NULL: the entry's code)
  /// Code run after the allocation check, before the body: constants and
  /// arguments copied to the device.
  eddy_buf_t init;
  /// %tN (!llvm.ptr) of the plan's packed-B caches, eddy_rt_gemm_cache_t
  /// each, on the stack; -1 when the plan has none.
  int gemm_caches;
  bool tasks_declared; ///< the task markers' declarations are written
  /// While a block of rows of a run of row-parallel kernels is emitted
  /// (rows): a kernel's loop nest opened at nest depth row_nest runs its
  /// dim 0 over [%t<row_lo>, %t<row_hi>) only.
  bool rows;
  int row_lo, row_hi, row_nest;
} cpu_emit_t;

/// The packed-B cache of the plan's LIBRARY step of op (an !llvm.ptr %tN),
/// or -1 when it has none (emit_matmul.c).
int cpu_gemm_cache(cpu_emit_t *e, const eddy_op_t *op);
/// Resets the packed-B caches that entering loop op resets.
void cpu_gemm_caches_reset(cpu_emit_t *e, const eddy_op_t *op);
/// Allocates the plan's packed-B caches in the prologue, released on every
/// exit.
void cpu_gemm_caches_open(cpu_emit_t *e);

/// ---- The target (emit_target.c) ----
/// What differs between the forms of the program (eddy_cpu_form_t): the
/// CPU target's, and the GPU target's kernels and CUDA forms. The emitter
/// asks its target (cpu_emit_t.tgt), never the form.
typedef struct cpu_target {
  const char *name;
  /// Loop nests over tensor elements, outside a kernel, are kernels: one
  /// scf.parallel over the element count, one element per iteration (else
  /// scf.for nests). Host code may then load and store only host slots,
  /// and kernels anything but those (checked while emitting).
  bool kernels;
  /// Tensors live in device memory, which host code cannot read: arguments
  /// and constants are copied in before the body, results and the
  /// predicates of loops and branches copied out (cpu_target_copy), and
  /// values with `?` dims own device storage.
  bool device_memory;
  /// The family of the runtime's helpers for tensor memory, f32 matmul and
  /// TensorList items: eddy_rt_entry_<mem>alloc, _<mem>sgemm,
  /// _<mem>list_*; "" (host memory) or "cuda_".
  const char *mem;
  /// The MLIR module's first line.
  const char *module_open;
} cpu_target_t;

/// The target of a form (the host's for an unknown one).
const cpu_target_t *cpu_target_for(eddy_cpu_form_t form);
/// Copies i64 %t<n> bytes between the host's memory at %t<src> and the
/// target's tensor memory at %t<dst> (to_device), or back; nothing where
/// tensors live in host memory.
void cpu_target_copy_n(cpu_emit_t *e, bool to_device, int dst, int src,
                       int n);
/// cpu_target_copy_n of a byte count known when compiling.
void cpu_target_copy(cpu_emit_t *e, bool to_device, int dst, int src,
                     int64_t bytes);

/// ctl.call is inlined up to this depth.
#define CPU_MAX_INLINE_DEPTH 32

/// Buffers of at most this many bytes are allocas, up to a total per call.
#define CPU_STACK_BUF_MAX 256
#define CPU_STACK_TOTAL_MAX 65536

/// Appends to the body.
void cpu_p(cpu_emit_t *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int cpu_fresh(cpu_emit_t *e);
/// %tN = arith.constant V : index
int cpu_index_const(cpu_emit_t *e, int64_t v);
/// Element type in memory ("i8" for i1) and in registers ("i1" for i1).
const char *cpu_stor_type(eddy_dtype_t dt);
const char *cpu_reg_type(eddy_dtype_t dt);
/// %tN = register v of dtype `from` converted as core.cast converts to `to`.
int cpu_emit_cast(cpu_emit_t *e, eddy_dtype_t from, eddy_dtype_t to, int v);
/// Appends "memref<4x5xf32>" / "memref<f32>".
void cpu_memref_type(const eddy_type_t *t, eddy_buf_t *out);
/// The func.func @entry of m, or NOT_FOUND.
eddy_status_t cpu_find_entry(const eddy_module_t *m, const char *entry,
                             eddy_op_t **out);
/// INVALID_ARGUMENT unless p is a C identifier.
eddy_status_t cpu_check_prefix(const char *p);

/// "memref<4x5xf32>" in the emitter's arena.
const char *cpu_mtype(cpu_emit_t *e, const eddy_type_t *t);
/// A fresh record for v (replacing an older one).
cpu_val_t *cpu_val_new(cpu_emit_t *e, const eddy_value_t *v);
/// dst_buf[i] = v[i] for every index of the static tensor type dt.
eddy_status_t cpu_copy_value(cpu_emit_t *e, eddy_value_t *v, int dst_buf,
                             const eddy_type_t *dt);
/// %tN = pointer to a constant i64 array of t's dims (null for a scalar).
int cpu_dims_ptr(cpu_emit_t *e, const eddy_type_t *t);
/// %tN = the aligned data pointer of memref buf (of static type t) as
/// !llvm.ptr.
int cpu_buf_ptr(cpu_emit_t *e, int buf, const eddy_type_t *t);

/// ---- dynamic shapes (emit_shape.c) ----
/// A ranked tensor type with at least one dynamic dim.
bool cpu_type_is_dynamic(const eddy_type_t *t);
/// Gives cv the slots of a dynamically shaped value (in the prologue; an
/// owned buffer is freed at every exit).
void cpu_dyn_init(cpu_emit_t *e, cpu_val_t *cv, const eddy_type_t *t,
                  bool owned);
/// Frees every owned dynamically shaped buffer (emitted at each exit).
void cpu_dyn_cleanup(cpu_emit_t *e);
/// A memref view of a dynamically shaped value (valid where it is made).
int cpu_dyn_view(cpu_emit_t *e, const cpu_val_t *cv, const eddy_type_t *t);
/// The run-time dims of v as index values (constants where static). With
/// check, the shape rules of fused producers are checked (run-time errors).
eddy_status_t cpu_dims(cpu_emit_t *e, eddy_value_t *v, bool check, int *out);
/// Whether dim i of a and dim j of b are `?` dims known to be equal at run
/// time wherever both are read (one flows from the other through
/// elementwise ops), so that neither a check nor a broadcast is needed.
bool cpu_dims_same(cpu_emit_t *e, eddy_value_t *a, int32_t i, eddy_value_t *b,
                   int32_t j);
/// The run-time dims of result r of op, computed from its operands' dims;
/// with check, incompatible operands record a run-time error.
eddy_status_t cpu_result_dims(cpu_emit_t *e, eddy_op_t *op, uint32_t r,
                              bool check, int *out);
/// The dims of the fused values of `?` dims that the kernel rooted at op
/// reads, computed once before the kernel, with their shape checks, and
/// kept in slots, so that reading each (in the kernel's innermost loop)
/// costs a slot load and not the dims of its whole fused subtree.
eddy_status_t cpu_fused_dims(cpu_emit_t *e, eddy_op_t *op);
/// Stores dims into cv's slot and grows its owned buffer to fit (a failed
/// allocation records the runtime's error). With op, a byte count that
/// overflows int64 is a run-time error naming op (nothing is allocated);
/// without, the allocator refuses it.
void cpu_dyn_reserve(cpu_emit_t *e, const cpu_val_t *cv, const eddy_type_t *t,
                     const int *dims, const eddy_op_t *op);
/// scf.if (no run-time error so far) { ... cpu_gate_close.
void cpu_gate_open(cpu_emit_t *e);
void cpu_gate_close(cpu_emit_t *e);
/// cpu_loops_open with index values as bounds.
void cpu_loops_open_v(cpu_emit_t *e, int32_t rank, const int *dims, int *idx);
/// A memref over the contiguous data at !llvm.ptr %t<ptr> with run-time
/// dims (index values).
int cpu_memref_from_ptr_v(cpu_emit_t *e, int ptr, const eddy_type_t *t,
                          const int *dims);
/// Registers a shape check of op: the message is "LOC: 'op' op: WHAT (A
/// and B)"; returns its site for cpu_fail_dims.
int cpu_dims_site(cpu_emit_t *e, const eddy_op_t *op, const char *what);
/// When i1 %t<cond> holds, records site with the index values a and b.
void cpu_fail_dims(cpu_emit_t *e, int cond, int site, int a, int b);
/// v copied into the dynamically shaped storage dst (dims, then data).
eddy_status_t cpu_dyn_assign(cpu_emit_t *e, eddy_value_t *v,
                             const cpu_val_t *dst, const eddy_type_t *t);

/// core.matmul with dynamic dims: one f64 (float) or wrapping (int)
/// accumulation per result element over k = 0..K-1, as the contract says.
eddy_status_t cpu_matmul_dyn(cpu_emit_t *e, eddy_op_t *op);
/// Storage src copied into storage dst (both of dynamic type t).
eddy_status_t cpu_dyn_copy(cpu_emit_t *e, const cpu_val_t *src,
                           const cpu_val_t *dst, const eddy_type_t *t);

/// ---- TensorLists (emit_list.c) ----
/// A list type whose elements are static tensors; otherwise UNSUPPORTED.
eddy_status_t cpu_check_list_type(const eddy_op_t *op, const eddy_type_t *t);
/// A new list slot, set to 0 in the prologue and released at every exit.
int cpu_list_slot(cpu_emit_t *e);
/// dst slot = the list of v (released first), moving v's reference when v's
/// only use is `user` in v's own block, else retaining it.
void cpu_list_assign(cpu_emit_t *e, eddy_value_t *v, const eddy_op_t *user,
                     int dst);
/// dst slot = a new reference to the list in slot src.
void cpu_list_copy_slot(cpu_emit_t *e, int src, int dst);
/// Emits a tl op (all of them; stack needs a static result type): the
/// checks and error site every list op needs, then its entry in the op
/// table, one of the cpu_list_<op> below.
eddy_status_t cpu_list_op(cpu_emit_t *e, eddy_op_t *op);
eddy_status_t cpu_list_empty(cpu_emit_t *e, eddy_op_t *op);
eddy_status_t cpu_list_reserve(cpu_emit_t *e, eddy_op_t *op);
eddy_status_t cpu_list_push_back(cpu_emit_t *e, eddy_op_t *op);
eddy_status_t cpu_list_pop_back(cpu_emit_t *e, eddy_op_t *op);
eddy_status_t cpu_list_get_item(cpu_emit_t *e, eddy_op_t *op);
eddy_status_t cpu_list_set_item(cpu_emit_t *e, eddy_op_t *op);
eddy_status_t cpu_list_length(cpu_emit_t *e, eddy_op_t *op);
eddy_status_t cpu_list_stack(cpu_emit_t *e, eddy_op_t *op);
eddy_status_t cpu_list_from_tensor(cpu_emit_t *e, eddy_op_t *op);
eddy_status_t cpu_list_resize(cpu_emit_t *e, eddy_op_t *op);
eddy_status_t cpu_list_scatter(cpu_emit_t *e, eddy_op_t *op);
eddy_status_t cpu_list_concat(cpu_emit_t *e, eddy_op_t *op);
eddy_status_t cpu_list_split(cpu_emit_t *e, eddy_op_t *op);
eddy_status_t cpu_list_add(cpu_emit_t *e, eddy_op_t *op);
eddy_status_t cpu_list_zeros_like(cpu_emit_t *e, eddy_op_t *op);
/// After the gate an op ran in: the memref of a list item or a row it read
/// in place (the plan's view), remade from its slot (the one made inside
/// the gate is out of scope there).
void cpu_view_rebind(cpu_emit_t *e, const eddy_op_t *op);
/// Releases every list slot (emitted fresh at each exit of the entry).
void cpu_list_cleanup(cpu_emit_t *e);

/// The value's record (NULL when never seen).
cpu_val_t *cpu_val_get(cpu_emit_t *e, const eddy_value_t *v);

/// An UNSUPPORTED status located at op: "LOC: error: 'NAME' op MESSAGE".
eddy_status_t cpu_unsupported(const eddy_op_t *op, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/// Checks that t is a ranked static tensor the backend handles.
eddy_status_t cpu_check_type(const eddy_op_t *op, const eddy_type_t *t);

/// A fresh buffer for static type t, allocated in the prologue (on the
/// stack when small) and freed in the epilogue; returns its %tN.
int cpu_alloc_buf(cpu_emit_t *e, const eddy_type_t *t);
/// A scalar slot of host memory (an alloca in the prologue) for values only
/// host code reads and writes: counters, predicates copied from the device.
int cpu_alloc_slot(cpu_emit_t *e, const eddy_type_t *t);
/// The rank-0 value v as a register value readable by host code: inline
/// for a splat constant, else a load (in the CUDA form: after copying the
/// element from device memory to a host slot).
eddy_status_t cpu_host_scalar(cpu_emit_t *e, eddy_value_t *v, int *out);
/// Stores 0 into the i64 scalar buffer slot in the prologue (slots that
/// hold pointers or sizes start out empty).
void cpu_zero_i64_in_prologue(cpu_emit_t *e, int slot);

/// The buffer an op writes result v into: the result tensor's memref when v
/// is returned directly, the loop value's when a loop body writes v in
/// place, else a fresh buffer.
int cpu_result_buf(cpu_emit_t *e, const eddy_value_t *v);

/// Appends s as the inside of an MLIR string literal (\XX escapes).
void cpu_put_mlir_string(eddy_buf_t *out, const char *s);
/// Registers op as a place that can fail at run time; returns its site
/// number (>= 1) for cpu_fail_if.
int cpu_error_site(cpu_emit_t *e, const eddy_op_t *op);
/// When the i1 %t<cond> holds and no error is recorded yet (the first one
/// stays), records site and the i64 values index and size for the message
/// "LOC: 'op' op: index I is out of range [0, SIZE)". The
/// caller keeps computing with a safe index; loops stop, and the function
/// returns the error at its end.
void cpu_fail_if(cpu_emit_t *e, int cond, int site, int index, int size);
/// ok && no run-time error so far (loops stop at the first error).
int cpu_and_no_error(cpu_emit_t *e, int ok);
/// In the GPU target's forms, after a kernel that can fail: the kernels'
/// error record copied into the host error channel (the first error stays).
void cpu_sync_kernel_error(cpu_emit_t *e);

/// ---- the function body (emit.c) and the entry function (emit_entry.c) ----
/// Emits the ops of b up to its terminator.
eddy_status_t cpu_emit_block(cpu_emit_t *e, eddy_block_t *b);
/// dst_buf (static type dt) = v where v's type has dynamic dims: its dims
/// are checked against dt first (a run-time error names `user`).
eddy_status_t cpu_copy_checked(cpu_emit_t *e, eddy_value_t *v,
                               const eddy_op_t *user, int dst_buf,
                               const eddy_type_t *dt);
/// A memref descriptor over the contiguous data at %t<d> (!llvm.ptr) with
/// t's static dims.
int cpu_memref_from_ptr(cpu_emit_t *e, int d, const eddy_type_t *t);

/// Opens one scf.for per dim (0..dims[i]) and writes the induction variables
/// to idx; cpu_loops_close closes rank of them. In the kernels forms the
/// outermost nest is instead one scf.parallel over the element count (a
/// GPU kernel, one element per iteration) whose index is unflattened.
void cpu_loops_open(cpu_emit_t *e, int32_t rank, const int64_t *dims, int *idx);
void cpu_loops_close(cpu_emit_t *e, int32_t rank);
/// cpu_loops_open as scf.for loops in every form: host code (calls of the
/// runtime per matrix of a batch); closed with cpu_loops_close.
void cpu_host_loops_open(cpu_emit_t *e, int32_t rank, const int64_t *dims,
                         int *idx);
/// Unflattens the row-major index n over the index values dims into idx.
void cpu_unflatten_v(cpu_emit_t *e, int n, int32_t rank, const int *dims,
                     int *idx);

/// Loads buf[idx] of type t, in register type (i1 truncated from i8).
int cpu_load(cpu_emit_t *e, int buf, const eddy_type_t *t, const int *idx);
/// Stores a register value to buf[idx].
void cpu_store(cpu_emit_t *e, int buf, const eddy_type_t *t, const int *idx,
               int val);
/// A splat constant's element as an arith.constant in register type.
int cpu_splat_const(cpu_emit_t *e, const eddy_attr_t *a);
/// Float value v of dtype from widened to "f32" or "f64" (exact; f16 and
/// bf16 through f32).
int cpu_float_widen(cpu_emit_t *e, eddy_dtype_t from, const char *to, int v);
/// Float value v of register type from ("f32" or "f64") rounded to dtype to:
/// f64 -> f32 -> f16/bf16, to nearest even, as runtime/scalar.h rounds
/// (tests/unit/runtime/test_scalar.c holds the emitted code to it).
int cpu_float_narrow(cpu_emit_t *e, const char *from, eddy_dtype_t to, int v);

/// ---- The op table (emit_expr.c) ----

/// How an op is emitted.
typedef enum cpu_op_class {
  CPU_OP_NONE = 0,  ///< not on its own (cpu_op_info_t.none says why)
  CPU_OP_CONSTANT,  ///< core.constant (emit.c)
  CPU_OP_POINTWISE, ///< elem computes one result element: fusable
  CPU_OP_KERNEL,    ///< kernel writes the result buffers
  CPU_OP_LIST,      ///< a TensorList op: kernel, after cpu_list_op's checks
  CPU_OP_WHILE,     ///< control flow (emit.c)
  CPU_OP_IF,
  CPU_OP_CALL,
} cpu_op_class_t;

typedef struct cpu_op_info cpu_op_info_t;

/// One element of a pointwise op: x holds the operands' elements at the
/// result index idx, dt is operand 0's dtype (the result's without
/// operands).
typedef eddy_status_t (*cpu_elem_fn)(cpu_emit_t *e, const eddy_op_t *op,
                                     const cpu_op_info_t *info, eddy_dtype_t dt,
                                     const int *x, const int *idx, int *out);
typedef eddy_status_t (*cpu_kernel_fn)(cpu_emit_t *e, eddy_op_t *op);

/// The CPU backend's entry for one opcode.
struct cpu_op_info {
  cpu_op_class_t cls;
  cpu_elem_fn elem;     ///< POINTWISE
  cpu_kernel_fn kernel; ///< KERNEL, LIST
  /// The arith/math op (or comparison predicate) for floats and for
  /// integers, where elem or kernel takes it from the table; NULL: none.
  const char *f, *i;
  /// A KERNEL that reads each operand element at most once per result
  /// element it writes, so a fused producer may be recomputed there.
  bool reads_once;
  /// May record a run-time error (bad index, list misuse): the function
  /// gets the error channel.
  bool fallible;
  const char *none; ///< NONE: why
};

/// op's entry (all zero, class NONE, for ops without an opcode).
const cpu_op_info_t *cpu_op_info(const eddy_op_t *op);

/// The value v at index idx (v's rank entries): a load, an inline constant,
/// or the fused computation of its defining op.
eddy_status_t cpu_expr(cpu_emit_t *e, eddy_value_t *v, const int *idx,
                       int *out);
/// True when op computes each result element from operand elements at the
/// broadcast index (so it can be fused and materialized with cpu_expr).
bool cpu_op_is_pointwise(const eddy_op_t *op);
/// True when op reads each element of its operands at most once per result
/// element it writes (a fused producer is recomputed there).
bool cpu_op_can_consume_fused(const eddy_op_t *op);
/// Computes result 0 of a pointwise op at idx.
eddy_status_t cpu_pointwise(cpu_emit_t *e, eddy_op_t *op, const int *idx,
                            int *out);
/// Emits a non-pointwise core op (reductions, matmul, reshape, transpose,
/// constants) writing its result buffer(s).
eddy_status_t cpu_kernel(cpu_emit_t *e, eddy_op_t *op);

/// core.gather as the plan's view (cpu_step_t.view): the index checked as
/// the gather kernel checks it, then the result is a memref over that row
/// of the operand (row 0 after a bad index, whose error the entry reports).
eddy_status_t cpu_gather_row_view(cpu_emit_t *e, eddy_op_t *op);

/// ---- matmul (emit_matmul.c) ----
/// f32 matmuls with M*N*K at least this call the runtime's sgemm by default
/// (eddy_cpu_opts_t.matmul_call_min; bench/README.md has the measurements).
#define CPU_MATMUL_CALL_MIN INT64_C(4096)
/// The threshold in effect for opts (NULL: the default).
int64_t cpu_matmul_call_min(const eddy_cpu_opts_t *opts);
/// Emits core.matmul into its result buffer: an inline loop nest, or for
/// large f32 ones calls of eddy_rt_entry_sgemm.
eddy_status_t cpu_matmul(cpu_emit_t *e, eddy_op_t *op);
/// The accumulation step `add` (cpu_step_t.product): one sgemm adding the
/// product into add's buffer, which holds the loop value it adds to.
eddy_status_t cpu_matmul_accumulate(cpu_emit_t *e, eddy_op_t *product,
                                    const eddy_op_t *add);
/// For an f32 core.matmul with `?` dims in host code (two matrices, or a
/// batch of A against one matrix B) whose operands and result are in
/// memory: opens `scf.if M*N*K >= threshold { sgemm call } else {` from the
/// run-time dims ad, bd, od (of a, b and the result) and returns true; the
/// caller emits the loop nest and closes the `}`. False (nothing opened)
/// otherwise.
bool cpu_matmul_dyn_call_open(cpu_emit_t *e, eddy_op_t *op, const int *ad,
                              const int *bd, const int *od);

#endif

/// The entry function PREFIX_run (see cpu.h and docs/cpu.md): the ABI
/// (tensor descriptors wrapped as memrefs, the argument checks and result
/// allocations of the libeddyrt entry helpers), the run-time error channel's
/// exit paths, and eddy_cpu_emit_mlir, which puts the module together. The
/// body's ops are emitted by emit.c.
#include "backend-cpu/emit_internal.h"
#include "runtime/entry_abi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/// The LLVM struct of eddy_rt_tensor_t (runtime/eddyrt.h).
#define TENSOR_T                                                               \
  "!llvm.struct<(i32, i32, i32, i32, ptr, ptr, array<16 x i64>, array<16 x "   \
  "i64>)>"

/// %tN: the "LOC: 'op' op" text of the run-time site number in %t<site>
/// (the first site's when it matches none).
static int site_message(cpu_emit_t *e, int site) {
  int msg = cpu_fresh(e);
  cpu_p(e, "%%t%d = llvm.mlir.addressof @__eddy_site%d : !llvm.ptr\n", msg,
        e->site_globals[0]);
  for (int i = 1; i < e->num_sites; i++) {
    int a = cpu_fresh(e), k = cpu_fresh(e), c = cpu_fresh(e), m = cpu_fresh(e);
    cpu_p(e, "%%t%d = llvm.mlir.addressof @__eddy_site%d : !llvm.ptr\n", a,
          e->site_globals[i]);
    cpu_p(e, "%%t%d = arith.constant %d : i32\n", k, i + 1);
    cpu_p(e, "%%t%d = arith.cmpi eq, %%t%d, %%t%d : i32\n", c, site, k);
    cpu_p(e, "%%t%d = arith.select %%t%d, %%t%d, %%t%d : !llvm.ptr\n", m, c, a,
          msg);
    msg = m;
  }
  return msg;
}

static const char *dims_global(cpu_emit_t *e, const eddy_type_t *t) {
  if (t->rank == 0)
    return NULL;
  int g = e->next_global++;
  eddy_buf_printf(&e->globals,
                  "llvm.mlir.global internal constant @__eddy_dims%d(dense<[",
                  g);
  for (int32_t i = 0; i < t->rank; i++)
    eddy_buf_printf(&e->globals, "%s%lld", i ? ", " : "",
                    (long long)t->dims[i]);
  eddy_buf_printf(&e->globals,
                  "]> : tensor<%dxi64>) {addr_space = 0 : i32} : "
                  "!llvm.array<%d x i64>\n",
                  t->rank, t->rank);
  char name[32];
  snprintf(name, sizeof name, "@__eddy_dims%d", g);
  return eddy_arena_strndup(e->arena, name, strlen(name));
}

int cpu_buf_ptr(cpu_emit_t *e, int buf, const eddy_type_t *t) {
  int i = cpu_fresh(e), j = cpu_fresh(e), p = cpu_fresh(e);
  cpu_p(e,
        "%%t%d = memref.extract_aligned_pointer_as_index %%t%d : %s -> "
        "index\n",
        i, buf, cpu_mtype(e, t));
  cpu_p(e, "%%t%d = arith.index_cast %%t%d : index to i64\n", j, i);
  cpu_p(e, "%%t%d = llvm.inttoptr %%t%d : i64 to !llvm.ptr\n", p, j);
  return p;
}

/// %tN = pointer to the dims array of t (null for a scalar).
int cpu_dims_ptr(cpu_emit_t *e, const eddy_type_t *t) {
  const char *g = dims_global(e, t);
  int p = cpu_fresh(e);
  if (g)
    cpu_p(e, "%%t%d = llvm.mlir.addressof %s : !llvm.ptr\n", p, g);
  else
    cpu_p(e, "%%t%d = llvm.mlir.zero : !llvm.ptr\n", p);
  return p;
}

/// The room for a memref descriptor's LLVM struct type.
enum { DESC_LEN = 128 };

/// Starts a memref descriptor of type t over the data at %t<d> (!llvm.ptr):
/// writes its LLVM struct type to desc and returns %tN, the struct with both
/// pointers and a zero offset set (sizes and strides not yet).
static int desc_begin(cpu_emit_t *e, int d, const eddy_type_t *t,
                      char desc[DESC_LEN]) {
  if (t->rank)
    snprintf(desc, DESC_LEN,
             "!llvm.struct<(ptr, ptr, i64, array<%d x i64>, array<%d x i64>)>",
             t->rank, t->rank);
  else
    snprintf(desc, DESC_LEN, "!llvm.struct<(ptr, ptr, i64)>");
  int cur = cpu_fresh(e);
  cpu_p(e, "%%t%d = llvm.mlir.undef : %s\n", cur, desc);
  int zero = cpu_fresh(e);
  cpu_p(e, "%%t%d = llvm.mlir.constant(0 : i64) : i64\n", zero);
  int a = cpu_fresh(e), b = cpu_fresh(e), c = cpu_fresh(e);
  cpu_p(e, "%%t%d = llvm.insertvalue %%t%d, %%t%d[0] : %s\n", a, d, cur, desc);
  cpu_p(e, "%%t%d = llvm.insertvalue %%t%d, %%t%d[1] : %s\n", b, d, a, desc);
  cpu_p(e, "%%t%d = llvm.insertvalue %%t%d, %%t%d[2] : %s\n", c, zero, b, desc);
  return c;
}

/// %tN = the finished descriptor %t<cur> (of type desc) as a memref of t.
static int desc_end(cpu_emit_t *e, int cur, const char *desc,
                    const eddy_type_t *t) {
  int m = cpu_fresh(e);
  cpu_p(e, "%%t%d = builtin.unrealized_conversion_cast %%t%d : %s to %s\n", m,
        cur, desc, cpu_mtype(e, t));
  return m;
}

/// A memref descriptor over the contiguous data at %t<ptr> (!llvm.ptr).
int cpu_memref_from_ptr(cpu_emit_t *e, int d, const eddy_type_t *t) {
  char desc[DESC_LEN];
  int cur = desc_begin(e, d, t, desc);
  int64_t stride = 1;
  for (int32_t i = t->rank - 1; i >= 0; i--) {
    int sz = cpu_fresh(e), st = cpu_fresh(e), x = cpu_fresh(e),
        y = cpu_fresh(e);
    cpu_p(e, "%%t%d = llvm.mlir.constant(%lld : i64) : i64\n", sz,
          (long long)t->dims[i]);
    cpu_p(e, "%%t%d = llvm.mlir.constant(%lld : i64) : i64\n", st,
          (long long)stride);
    cpu_p(e, "%%t%d = llvm.insertvalue %%t%d, %%t%d[3, %d] : %s\n", x, sz, cur,
          i, desc);
    cpu_p(e, "%%t%d = llvm.insertvalue %%t%d, %%t%d[4, %d] : %s\n", y, st, x, i,
          desc);
    cur = y;
    stride *= t->dims[i] ? t->dims[i] : 1;
  }
  return desc_end(e, cur, desc, t);
}

int cpu_memref_from_ptr_v(cpu_emit_t *e, int d, const eddy_type_t *t,
                          const int *dims) {
  char desc[DESC_LEN];
  int cur = desc_begin(e, d, t, desc);
  // Row-major strides; a 0 dim counts as 1 (nothing is addressed then).
  int stride = cpu_fresh(e);
  cpu_p(e, "%%t%d = llvm.mlir.constant(1 : i64) : i64\n", stride);
  for (int32_t i = t->rank - 1; i >= 0; i--) {
    int sz = cpu_fresh(e), x = cpu_fresh(e), y = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.index_cast %%t%d : index to i64\n", sz, dims[i]);
    cpu_p(e, "%%t%d = llvm.insertvalue %%t%d, %%t%d[3, %d] : %s\n", x, sz, cur,
          i, desc);
    cpu_p(e, "%%t%d = llvm.insertvalue %%t%d, %%t%d[4, %d] : %s\n", y, stride,
          x, i, desc);
    cur = y;
    if (i > 0) {
      int one = cpu_fresh(e), z = cpu_fresh(e), isz = cpu_fresh(e),
          f = cpu_fresh(e), ns = cpu_fresh(e);
      cpu_p(e, "%%t%d = llvm.mlir.constant(1 : i64) : i64\n", one);
      cpu_p(e, "%%t%d = llvm.mlir.constant(0 : i64) : i64\n", z);
      cpu_p(e, "%%t%d = llvm.icmp \"eq\" %%t%d, %%t%d : i64\n", isz, sz, z);
      cpu_p(e, "%%t%d = llvm.select %%t%d, %%t%d, %%t%d : i1, i64\n", f, isz,
            one, sz);
      cpu_p(e, "%%t%d = llvm.mul %%t%d, %%t%d : i64\n", ns, stride, f);
      stride = ns;
    }
  }
  return desc_end(e, cur, desc, t);
}

/// %tN = the data pointer of tensor `base[index]` (base: %args or %res);
/// *tp = %t of the tensor's address.
static int tensor_data(cpu_emit_t *e, const char *base, uint32_t index,
                       int *tp) {
  int p = cpu_fresh(e), dp = cpu_fresh(e), d = cpu_fresh(e);
  cpu_p(e, "%%t%d = llvm.getelementptr %s[%u] : (!llvm.ptr) -> !llvm.ptr, %s\n",
        p, base, index, TENSOR_T);
  cpu_p(e,
        "%%t%d = llvm.getelementptr %%t%d[0, 4] : (!llvm.ptr) -> "
        "!llvm.ptr, %s\n",
        dp, p, TENSOR_T);
  cpu_p(e, "%%t%d = llvm.load %%t%d : !llvm.ptr -> !llvm.ptr\n", d, dp);
  if (tp)
    *tp = p;
  return d;
}

/// A memref over the data of tensor `base[index]` (contiguous, checked).
static int wrap_tensor(cpu_emit_t *e, const char *base, uint32_t index,
                       const eddy_type_t *t) {
  return cpu_memref_from_ptr(e, tensor_data(e, base, index, NULL), t);
}

/// The bytes of static type t.
static int64_t type_bytes(const eddy_type_t *t) {
  return eddy_ir_type_num_elements(t) * (int64_t)eddy_dtype_size(t->dtype);
}

/// %tN = the bytes (i64) of a tensor of dtype t->dtype with the run-time
/// dims (index values; their product fits: it was allocated).
static int dyn_bytes(cpu_emit_t *e, const eddy_type_t *t, const int *dims) {
  int n = cpu_index_const(e, (int64_t)eddy_dtype_size(t->dtype));
  for (int32_t d = 0; d < t->rank; d++) {
    int m = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.muli %%t%d, %%t%d : index\n", m, n, dims[d]);
    n = m;
  }
  int b = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.index_cast %%t%d : index to i64\n", b, n);
  return b;
}

/// if (%tcode != 0) return %tcode; continues in a fresh block.
static void fail_if(cpu_emit_t *e, int code) {
  int z = cpu_fresh(e), c = cpu_fresh(e), next = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.constant 0 : i32\n", z);
  cpu_p(e, "%%t%d = arith.cmpi ne, %%t%d, %%t%d : i32\n", c, code, z);
  cpu_p(e, "cf.cond_br %%t%d, ^fail(%%t%d : i32), ^bb%d\n^bb%d:\n", c, code,
        next, next);
}

/// The runtime's functions, as runtime/entry_abi.h lists them: name,
/// return type and parameter types, as C text.
typedef struct abi_fn {
  const char *name, *ret, *params;
} abi_fn_t;
#define ABI_ROW(fn, ret, params) {#fn, #ret, #params},
static const abi_fn_t k_abi_host[] = {EDDY_RT_ENTRY_ABI(ABI_ROW)};
static const abi_fn_t k_abi_cuda[] = {EDDY_RT_ENTRY_CUDA_ABI(ABI_ROW)};
#undef ABI_ROW

/// The MLIR type of the C type in c[0..n) (surrounding blanks allowed):
/// a pointer is !llvm.ptr, the integers are i32 or i64 by their width on
/// x86-64; NULL for void and for a type the list must not use.
static const char *abi_mlir_type(const char *c, size_t n, bool *ok) {
  while (n && (*c == ' ' || *c == '('))
    c++, n--;
  while (n && (c[n - 1] == ' ' || c[n - 1] == ')'))
    n--;
  *ok = true;
  if (memchr(c, '*', n))
    return "!llvm.ptr";
  static const struct {
    const char *c, *mlir;
  } k_types[] = {{"int32_t", "i32"}, {"int64_t", "i64"}, {"size_t", "i64"},
                 {"intptr_t", "i64"}, {"void", NULL}};
  for (size_t i = 0; i < sizeof k_types / sizeof k_types[0]; i++)
    if (strlen(k_types[i].c) == n && memcmp(k_types[i].c, c, n) == 0)
      return k_types[i].mlir;
  *ok = false;
  return NULL;
}

/// `func.func private @f(...) -> r` for each function of the list.
static eddy_status_t abi_decls(eddy_buf_t *out, const abi_fn_t *fns,
                               size_t n) {
  for (size_t i = 0; i < n; i++) {
    bool ok = true;
    eddy_buf_printf(out, "func.func private @%s(", fns[i].name);
    const char *p = fns[i].params;
    for (int k = 0; *p; k++) {
      const char *end = strchr(p, ',');
      size_t len = end ? (size_t)(end - p) : strlen(p);
      const char *t = abi_mlir_type(p, len, &ok);
      if (!ok)
        break;
      if (t)
        eddy_buf_printf(out, "%s%s", k ? ", " : "", t);
      p += len + (end != NULL);
    }
    const char *r = ok ? abi_mlir_type(fns[i].ret, strlen(fns[i].ret), &ok)
                       : NULL;
    if (!ok)
      return eddy_status_create(EDDY_ERR_INTERNAL,
                                "runtime/entry_abi.h: %s has a type with no "
                                "MLIR form",
                                fns[i].name);
    eddy_buf_printf(out, ")%s%s\n", r ? " -> " : "", r ? r : "");
  }
  return NULL;
}

/// %tN = the status of allocating results[i] of type t with the dims at
/// %t<dp> (i64 array): 0, or the runtime's error code (message written).
static int alloc_result(cpu_emit_t *e, uint32_t i, const eddy_type_t *t,
                        int dp) {
  int ix = cpu_fresh(e), dt = cpu_fresh(e), rk = cpu_fresh(e),
      st = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.constant %u : i64\n", ix, i);
  cpu_p(e, "%%t%d = arith.constant %d : i32\n", dt, (int)t->dtype);
  cpu_p(e, "%%t%d = arith.constant %d : i32\n", rk, t->rank);
  cpu_p(e,
        "%%t%d = func.call @eddy_rt_entry_alloc_result(%%rt, %%res, %%t%d, "
        "%%t%d, %%t%d, %%t%d, %%err, %%errlen) : (!llvm.ptr, !llvm.ptr, "
        "i64, i32, i32, !llvm.ptr, !llvm.ptr, i64) -> i32\n",
        st, ix, dt, rk, dp);
  return st;
}

/// results[i] of dynamic type t = v: allocated with v's run-time dims at
/// the end of the function, then filled.
static eddy_status_t emit_dyn_result(cpu_emit_t *e, uint32_t i,
                                     eddy_value_t *v, const eddy_type_t *t) {
  int64_t r = t->rank;
  const eddy_type_t *dt = eddy_ir_tensor_type_get(e->ctx, EDDY_DT_I64, 1, &r);
  int slot = cpu_alloc_slot(e, dt);
  int dims[EDDY_RT_MAX_RANK];
  cpu_gate_open(e);
  EDDY_RETURN_IF_ERROR(cpu_dims(e, v, true, dims));
  cpu_gate_open(e);
  for (int32_t d = 0; d < t->rank; d++) {
    int k = cpu_index_const(e, d), x = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.index_cast %%t%d : index to i64\n", x, dims[d]);
    cpu_store(e, slot, dt, &k, x);
  }
  int st = alloc_result(e, i, t, cpu_buf_ptr(e, slot, dt));
  // A failure (the runtime wrote the message) goes to the error exit.
  const eddy_type_t *i32s = eddy_ir_scalar_type_get(e->ctx, EDDY_DT_I32);
  int z = cpu_fresh(e), neg = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.constant 0 : i32\n", z);
  cpu_p(e, "%%t%d = arith.subi %%t%d, %%t%d : i32\n", neg, z, st);
  cpu_store(e, e->eflag, i32s, NULL, neg);
  cpu_gate_close(e);
  cpu_gate_close(e);
  cpu_gate_open(e);
  for (int32_t d = 0; d < t->rank; d++) {
    int k = cpu_index_const(e, d), x = cpu_load(e, slot, dt, &k);
    dims[d] = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.index_cast %%t%d : i64 to index\n", dims[d], x);
  }
  int res = tensor_data(e, "%res", i, NULL);
  if (e->tgt->device_memory) {
    // Computed into device storage, then copied to the result tensor.
    cpu_val_t *tmp = eddy_arena_alloc(e->arena, sizeof *tmp);
    memset(tmp, 0, sizeof *tmp);
    cpu_dyn_init(e, tmp, t, true);
    EDDY_RETURN_IF_ERROR(cpu_dyn_assign(e, v, tmp, t));
    cpu_gate_open(e);
    int p = cpu_load(e, tmp->pslot, eddy_ir_scalar_type_get(e->ctx,
                                                            EDDY_DT_I64),
                     NULL);
    int src = cpu_fresh(e);
    cpu_p(e, "%%t%d = llvm.inttoptr %%t%d : i64 to !llvm.ptr\n", src, p);
    cpu_target_copy_n(e, false, res, src, dyn_bytes(e, t, dims));
    cpu_gate_close(e);
    cpu_gate_close(e);
    return NULL;
  }
  int view = cpu_memref_from_ptr_v(e, res, t, dims);
  int idx[EDDY_RT_MAX_RANK], x;
  cpu_loops_open_v(e, t->rank, dims, idx);
  EDDY_RETURN_IF_ERROR(cpu_expr(e, v, idx, &x));
  cpu_store(e, view, t, idx, x);
  cpu_loops_close(e, t->rank);
  cpu_gate_close(e);
  return NULL;
}

/// Binds entry argument i of dynamic type t: its data pointer and dims are
/// read from args[i] (already checked). CUDA form: the data is copied to
/// device storage of the argument's (owned, freed at every exit).
static void bind_dyn_arg(cpu_emit_t *e, eddy_value_t *arg, uint32_t i,
                         const eddy_type_t *t) {
  cpu_val_t *cv = cpu_val_new(e, arg);
  cpu_dyn_init(e, cv, t, e->tgt->device_memory);
  int64_t r = t->rank;
  const eddy_type_t *dt = eddy_ir_tensor_type_get(e->ctx, EDDY_DT_I64, 1, &r);
  const eddy_type_t *i64s = eddy_ir_scalar_type_get(e->ctx, EDDY_DT_I64);
  int tp, data = tensor_data(e, "%args", i, &tp), di = cpu_fresh(e);
  cpu_p(e, "%%t%d = llvm.ptrtoint %%t%d : !llvm.ptr to i64\n", di, data);
  cpu_store(e, cv->pslot, i64s, NULL, di);
  for (int32_t d = 0; d < t->rank; d++) {
    int gp = cpu_fresh(e), x = cpu_fresh(e), k = cpu_index_const(e, d);
    cpu_p(e,
          "%%t%d = llvm.getelementptr %%t%d[0, 6, %d] : (!llvm.ptr) -> "
          "!llvm.ptr, %s\n",
          gp, tp, d, TENSOR_T);
    cpu_p(e, "%%t%d = llvm.load %%t%d : !llvm.ptr -> i64\n", x, gp);
    cpu_store(e, cv->dslot, dt, &k, x);
  }
  if (!e->tgt->device_memory)
    return;
  int dims[EDDY_RT_MAX_RANK];
  for (int32_t d = 0; d < t->rank; d++) {
    int k = cpu_index_const(e, d), x = cpu_load(e, cv->dslot, dt, &k);
    dims[d] = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.index_cast %%t%d : i64 to index\n", dims[d], x);
  }
  // Device storage: pslot gives up the host pointer (reserve frees what it
  // holds); a failed allocation is recorded and the copy skipped.
  int z = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.constant 0 : i64\n", z);
  cpu_store(e, cv->pslot, i64s, NULL, z);
  cpu_dyn_reserve(e, cv, t, dims, NULL);
  cpu_gate_open(e);
  int p = cpu_load(e, cv->pslot, i64s, NULL), dev = cpu_fresh(e);
  cpu_p(e, "%%t%d = llvm.inttoptr %%t%d : i64 to !llvm.ptr\n", dev, p);
  cpu_target_copy_n(e, true, dev, data, dyn_bytes(e, t, dims));
  cpu_gate_close(e);
}

/// An error exit's cleanup: lists and dynamically shaped storage released,
/// buffers freed, the results released.
static void release_all(cpu_emit_t *e, uint32_t num_outputs) {
  cpu_list_cleanup(e);
  cpu_dyn_cleanup(e);
  eddy_buf_append(&e->body, e->epi.data ? e->epi.data : "", e->epi.len);
  int n = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.constant %u : i64\n", n, num_outputs);
  cpu_p(e,
        "func.call @eddy_rt_entry_release_results(%%res, %%t%d) : "
        "(!llvm.ptr, i64) -> ()\n",
        n);
}

static eddy_status_t emit_func(cpu_emit_t *e, eddy_op_t *func,
                               const char *prefix) {
  const eddy_type_t *ft = eddy_ir_func_type(func);
  eddy_block_t *entry = eddy_ir_func_entry(func);
  for (uint32_t i = 0; i < ft->num_inputs; i++)
    EDDY_RETURN_IF_ERROR(cpu_check_type(func, ft->inputs[i]));
  for (uint32_t i = 0; i < ft->num_outputs; i++)
    EDDY_RETURN_IF_ERROR(cpu_check_type(func, ft->outputs[i]));
  e->eflag = -1;
  e->elist = -1;
  cpu_gemm_caches_open(e);
  e->loop_limit = -1;
  e->loop_deadline = -1;
  e->krec = -1;
  e->dyn = e->plan->dynamic;
  if (e->plan->fallible) {
    const eddy_type_t *i32s = eddy_ir_scalar_type_get(e->ctx, EDDY_DT_I32);
    const eddy_type_t *i64s = eddy_ir_scalar_type_get(e->ctx, EDDY_DT_I64);
    e->eflag = cpu_alloc_slot(e, i32s);
    e->eidx = cpu_alloc_slot(e, i64s);
    e->esize = cpu_alloc_slot(e, i64s);
    e->elist = cpu_alloc_slot(e, i32s);
    eddy_buf_t body = e->body;
    e->body = e->pro;
    int z = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.constant 0 : i32\n", z);
    cpu_store(e, e->eflag, i32s, NULL, z);
    cpu_store(e, e->elist, i32s, NULL, z);
    // The list helpers record their failures through this pointer.
    e->eflag_ptr = cpu_buf_ptr(e, e->eflag, i32s);
    e->pro = e->body;
    e->body = body;
    if (e->tgt->kernels) {
      // The kernels' error record, a tensor buffer of its own, zeroed by a
      // one-element kernel before the body runs.
      int64_t three = 3;
      const eddy_type_t *rt =
          eddy_ir_tensor_type_get(e->ctx, EDDY_DT_I64, 1, &three);
      e->no_reuse = true;
      e->krec = cpu_alloc_buf(e, rt);
      e->no_reuse = false;
      body = e->body;
      e->body = e->init;
      cpu_loops_open(e, 0, NULL, NULL);
      int z64 = cpu_fresh(e);
      cpu_p(e, "%%t%d = arith.constant 0 : i64\n", z64);
      for (int k = 0; k < 3; k++) {
        int kk = cpu_index_const(e, k);
        cpu_store(e, e->krec, rt, &kk, z64);
      }
      cpu_loops_close(e, 0);
      e->init = e->body;
      e->body = body;
    }
  }
  int begin = cpu_fresh(e), na = cpu_fresh(e), nr = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.constant %u : i64\n", na, ft->num_inputs);
  cpu_p(e, "%%t%d = arith.constant %u : i64\n", nr, ft->num_outputs);
  cpu_p(e,
        "%%t%d = func.call @eddy_rt_entry_begin(%%rt, %%args, %%t%d, %%res, "
        "%%t%d, %%err, %%errlen) : (!llvm.ptr, !llvm.ptr, i64, !llvm.ptr, "
        "i64, !llvm.ptr, i64) -> i32\n",
        begin, na, nr);
  fail_if(e, begin);
  if (e->tgt->device_memory) {
    // The driver and the device: "no CUDA device: ..." where there is none.
    int c = cpu_fresh(e);
    cpu_p(e,
          "%%t%d = func.call @eddy_rt_entry_cuda_begin(%%rt, %%err, "
          "%%errlen) : (!llvm.ptr, !llvm.ptr, i64) -> i32\n",
          c);
    fail_if(e, c);
  }
  for (uint32_t i = 0; i < ft->num_inputs; i++) {
    const eddy_type_t *t = ft->inputs[i];
    int g = e->next_global++;
    // The name in entry-check messages: arg_names[i] (an imported graph's
    // Placeholder), else the position.
    char pos[32];
    eddy_buf_printf(&e->globals,
                    "llvm.mlir.global internal constant @__eddy_name%d(\"", g);
    cpu_put_mlir_string(&e->globals,
                        eddy_ir_func_arg_label(func, i, pos, sizeof pos));
    eddy_buf_puts(&e->globals, "\\00\") {addr_space = 0 : i32}\n");
    int dp = cpu_dims_ptr(e, t);
    int np = cpu_fresh(e), ix = cpu_fresh(e), dt = cpu_fresh(e),
        rk = cpu_fresh(e), st = cpu_fresh(e);
    cpu_p(e, "%%t%d = llvm.mlir.addressof @__eddy_name%d : !llvm.ptr\n", np, g);
    cpu_p(e, "%%t%d = arith.constant %u : i64\n", ix, i);
    cpu_p(e, "%%t%d = arith.constant %d : i32\n", dt, (int)t->dtype);
    cpu_p(e, "%%t%d = arith.constant %d : i32\n", rk, t->rank);
    cpu_p(e,
          "%%t%d = func.call @eddy_rt_entry_check_arg(%%args, %%t%d, %%t%d, "
          "%%t%d, %%t%d, %%t%d, %%err, %%errlen) : (!llvm.ptr, i64, "
          "!llvm.ptr, i32, i32, !llvm.ptr, !llvm.ptr, i64) -> i32\n",
          st, ix, np, dt, rk, dp);
    fail_if(e, st);
  }
  for (uint32_t i = 0; i < ft->num_outputs; i++) {
    const eddy_type_t *t = ft->outputs[i];
    if (cpu_type_is_dynamic(t))
      continue; // allocated at the end, with its run-time dims
    fail_if(e, alloc_result(e, i, t, cpu_dims_ptr(e, t)));
  }
  for (uint32_t i = 0; i < ft->num_inputs; i++) {
    const eddy_type_t *t = ft->inputs[i];
    if (cpu_type_is_dynamic(t))
      continue;
    int host = tensor_data(e, "%args", i, NULL);
    if (!e->tgt->device_memory) {
      cpu_val_new(e, entry->args[i])->buf = cpu_memref_from_ptr(e, host, t);
      continue;
    }
    // CUDA: a device copy, made before the body runs.
    int dev = cpu_alloc_buf(e, t);
    cpu_val_new(e, entry->args[i])->buf = dev;
    eddy_buf_t body = e->body;
    e->body = e->init;
    int dst = cpu_buf_ptr(e, dev, t);
    cpu_target_copy(e, true, dst, host, type_bytes(t));
    e->init = e->body;
    e->body = body;
  }
  // (CUDA: results are computed in device buffers and copied back.)
  int *outs = eddy_arena_alloc(e->arena, sizeof(int) * (ft->num_outputs + 1));
  for (uint32_t i = 0; i < ft->num_outputs; i++)
    outs[i] = cpu_type_is_dynamic(ft->outputs[i]) ? -1
              : e->tgt->device_memory ? cpu_alloc_buf(e, ft->outputs[i])
                        : wrap_tensor(e, "%res", i, ft->outputs[i]);
  // A value computed by an op directly in the function body and returned
  // once is computed straight into its result tensor: no buffer, no copy.
  eddy_op_t *ret = eddy_ir_block_terminator(entry);
  bool *direct =
      eddy_arena_alloc(e->arena, sizeof(bool) * (ft->num_outputs + 1));
  for (uint32_t i = 0; i < ft->num_outputs; i++) {
    eddy_value_t *v = eddy_ir_op_operand(ret, i);
    if (outs[i] >= 0 && cpu_plan_direct(e->plan, v) == (int32_t)i) {
      eddy_ptrmap_put(&e->direct, v, &outs[i]);
      direct[i] = true;
    }
  }
  e->top = entry;
  // The prologue (allocations) goes here: split the body.
  eddy_buf_t head = e->body;
  eddy_buf_init(&e->body);
  // Arguments with dynamic dims fill their slots (made in the prologue).
  for (uint32_t i = 0; i < ft->num_inputs; i++)
    if (cpu_type_is_dynamic(ft->inputs[i]))
      bind_dyn_arg(e, entry->args[i], i, ft->inputs[i]);
  eddy_status_t st = cpu_emit_block(e, entry);
  for (uint32_t i = 0; !st && i < ft->num_outputs; i++) {
    if (outs[i] < 0)
      st = emit_dyn_result(e, i, eddy_ir_op_operand(ret, i), ft->outputs[i]);
    else if (!direct[i])
      st = cpu_copy_checked(e, eddy_ir_op_operand(ret, i), ret, outs[i],
                        ft->outputs[i]);
  }
  if (!st && e->nest_error)
    st = eddy_status_create(EDDY_ERR_INTERNAL,
                            "cpu backend: loop nests opened and closed out "
                            "of order");
  if (!st && e->host_access) {
    const eddy_op_t *op = e->host_access_op ? e->host_access_op : func;
    eddy_buf_t loc;
    eddy_buf_init(&loc);
    eddy_ir_loc_format(op->loc, &loc);
    st = eddy_status_create(EDDY_ERR_INTERNAL,
                            "%s: cpu backend: '%s': host code would touch "
                            "device memory, or a kernel host memory (GPU "
                            "target)",
                            loc.data ? loc.data : "?", op->name->str);
    eddy_buf_destroy(&loc);
  }
  if (!st && e->tgt->device_memory) {
    // Results back to the host (each copy waits for the kernels before
    // it), then the first CUDA error of the call, if any.
    // (Results with `?` dims were copied by emit_dyn_result.)
    for (uint32_t i = 0; i < ft->num_outputs; i++)
      if (outs[i] >= 0) {
        int src = cpu_buf_ptr(e, outs[i], ft->outputs[i]);
        int dst = tensor_data(e, "%res", i, NULL);
        cpu_target_copy(e, false, dst, src, type_bytes(ft->outputs[i]));
      }
    int c = cpu_fresh(e), z = cpu_fresh(e), bad = cpu_fresh(e),
        next = cpu_fresh(e);
    cpu_p(e,
          "%%t%d = func.call @eddy_rt_entry_cuda_end(%%rt, %%err, %%errlen) "
          ": (!llvm.ptr, !llvm.ptr, i64) -> i32\n",
          c);
    cpu_p(e, "%%t%d = arith.constant 0 : i32\n", z);
    cpu_p(e, "%%t%d = arith.cmpi ne, %%t%d, %%t%d : i32\n", bad, c, z);
    cpu_p(e, "cf.cond_br %%t%d, ^cuerr(%%t%d : i32), ^bb%d\n^bb%d:\n", bad, c,
          next, next);
  }
  eddy_buf_t tail = e->body;
  e->body = head;
  if (!st) {
    eddy_buf_append(&e->body, e->pro.data ? e->pro.data : "", e->pro.len);
    if (e->num_heap) {
      // One branch for all scratch allocations: if any failed, free them
      // all (NULL is fine), release the results and report.
      int null = cpu_fresh(e), any = -1;
      cpu_p(e, "%%t%d = llvm.mlir.zero : !llvm.ptr\n", null);
      for (int i = 0; i < e->num_heap; i++) {
        int c = cpu_fresh(e);
        cpu_p(e, "%%t%d = llvm.icmp \"eq\" %%t%d, %%t%d : !llvm.ptr\n", c,
              e->heap[i].ptr, null);
        if (any >= 0) {
          int o = cpu_fresh(e);
          cpu_p(e, "%%t%d = arith.ori %%t%d, %%t%d : i1\n", o, any, c);
          c = o;
        }
        any = c;
      }
      int next = cpu_fresh(e);
      cpu_p(e, "cf.cond_br %%t%d, ^oom, ^bb%d\n^bb%d:\n", any, next, next);
    }
    eddy_buf_append(&e->body, e->init.data ? e->init.data : "", e->init.len);
    eddy_buf_append(&e->body, tail.data ? tail.data : "", tail.len);
    if (e->eflag >= 0) {
      int one = cpu_fresh(e);
      cpu_p(e, "%%t%d = arith.constant true\n", one);
      int ok = cpu_and_no_error(e, one), next = cpu_fresh(e);
      cpu_p(e, "cf.cond_br %%t%d, ^bb%d, ^rterr\n^bb%d:\n", ok, next, next);
    }
    cpu_list_cleanup(e);
    cpu_dyn_cleanup(e);
    eddy_buf_append(&e->body, e->epi.data ? e->epi.data : "", e->epi.len);
    int z = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.constant 0 : i32\nfunc.return %%t%d : i32\n", z, z);
    cpu_p(e, "^fail(%%code: i32):\nfunc.return %%code : i32\n");
    if (e->tgt->device_memory) {
      // A CUDA error: everything freed, the results released.
      cpu_p(e, "^cuerr(%%cucode: i32):\n");
      release_all(e, ft->num_outputs);
      cpu_p(e, "func.return %%cucode : i32\n");
    }
    if (e->eflag >= 0) {
      const eddy_type_t *i32s = eddy_ir_scalar_type_get(e->ctx, EDDY_DT_I32);
      const eddy_type_t *i64s = eddy_ir_scalar_type_get(e->ctx, EDDY_DT_I64);
      cpu_p(e, "^rterr:\n");
      int site = cpu_load(e, e->eflag, i32s, NULL);
      int idx = cpu_load(e, e->eidx, i64s, NULL);
      int size = cpu_load(e, e->esize, i64s, NULL);
      release_all(e, ft->num_outputs);
      // A negative slot: a runtime helper failed and wrote the message.
      int z0 = cpu_fresh(e), neg = cpu_fresh(e), nc = cpu_fresh(e);
      cpu_p(e, "%%t%d = arith.constant 0 : i32\n", z0);
      cpu_p(e, "%%t%d = arith.cmpi slt, %%t%d, %%t%d : i32\n", neg, site, z0);
      cpu_p(e, "%%t%d = arith.subi %%t%d, %%t%d : i32\n", nc, z0, site);
      cpu_p(e, "cf.cond_br %%t%d, ^rtlist, ^rtfmt\n^rtlist:\n", neg);
      if (e->num_sites > 0) {
        // Its message gets the location of the tl op that ran last.
        int ls = cpu_load(e, e->elist, i32s, NULL);
        int where = site_message(e, ls);
        int has = cpu_fresh(e), null = cpu_fresh(e), p = cpu_fresh(e);
        cpu_p(e, "%%t%d = arith.cmpi ne, %%t%d, %%t%d : i32\n", has, ls, z0);
        cpu_p(e, "%%t%d = llvm.mlir.zero : !llvm.ptr\n", null);
        cpu_p(e, "%%t%d = arith.select %%t%d, %%t%d, %%t%d : !llvm.ptr\n", p,
              has, where, null);
        cpu_p(e,
              "func.call @eddy_rt_entry_prefix_error(%%err, %%errlen, %%t%d) : "
              "(!llvm.ptr, i64, !llvm.ptr) -> ()\n",
              p);
      }
      cpu_p(e, "cf.br ^fail(%%t%d : i32)\n^rtfmt:\n", nc);
      if (e->num_sites == 0) {
        int c = cpu_fresh(e);
        cpu_p(e, "%%t%d = arith.constant %d : i32\nfunc.return %%t%d : i32\n",
              c, (int)EDDY_RT_ERR_INTERNAL, c);
      } else {
        int msg = site_message(e, site);
        // Shape checks and index checks format their messages differently.
        int kind = cpu_fresh(e);
        cpu_p(e, "%%t%d = arith.constant %s\n", kind,
              e->site_dims[0] ? "true" : "false");
        for (int i = 1; i < e->num_sites; i++) {
          int k = cpu_fresh(e), c = cpu_fresh(e), b = cpu_fresh(e),
              m = cpu_fresh(e);
          cpu_p(e, "%%t%d = arith.constant %d : i32\n", k, i + 1);
          cpu_p(e, "%%t%d = arith.cmpi eq, %%t%d, %%t%d : i32\n", c, site, k);
          cpu_p(e, "%%t%d = arith.constant %s\n", b,
                e->site_dims[i] ? "true" : "false");
          cpu_p(e, "%%t%d = arith.select %%t%d, %%t%d, %%t%d : i1\n", m, c, b,
                kind);
          kind = m;
        }
        int code = cpu_fresh(e), code2 = cpu_fresh(e);
        cpu_p(e, "cf.cond_br %%t%d, ^rtdims, ^rtindex\n^rtindex:\n", kind);
        cpu_p(e,
              "%%t%d = func.call @eddy_rt_entry_index_error(%%err, %%errlen, "
              "%%t%d, %%t%d, %%t%d) : (!llvm.ptr, i64, !llvm.ptr, i64, i64) "
              "-> i32\nfunc.return %%t%d : i32\n",
              code, msg, idx, size, code);
        cpu_p(e,
              "^rtdims:\n%%t%d = func.call @eddy_rt_entry_dims_error(%%err, "
              "%%errlen, %%t%d, %%t%d, %%t%d) : (!llvm.ptr, i64, !llvm.ptr, "
              "i64, i64) -> i32\nfunc.return %%t%d : i32\n",
              code2, msg, idx, size, code2);
      }
    }
    if (e->num_heap) {
      int code = cpu_fresh(e);
      cpu_p(e, "^oom:\n");
      release_all(e, ft->num_outputs);
      cpu_p(e, "%%t%d = arith.constant %d : i32\nfunc.return %%t%d : i32\n",
            code, (int)EDDY_RT_ERR_RESOURCE, code);
    }
  }
  eddy_buf_destroy(&tail);
  (void)prefix;
  return st;
}

eddy_cpu_opts_t eddy_cpu_opts_default(void) {
  eddy_cpu_opts_t o = {
      .opt_level = 3, .fuse = true, .form = EDDY_CPU_FORM_HOST};
  return o;
}

eddy_status_t cpu_find_entry(const eddy_module_t *m, const char *entry,
                             eddy_op_t **out) {
  *out = eddy_ir_module_lookup_func(m, entry);
  if (!*out)
    return eddy_status_create(EDDY_ERR_NOT_FOUND,
                              "no function named '@%s' in the module", entry);
  return NULL;
}

eddy_status_t cpu_check_prefix(const char *p) {
  bool ok = p[0] && !(p[0] >= '0' && p[0] <= '9');
  for (const char *c = p; ok && *c; c++)
    ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
         (*c >= '0' && *c <= '9') || *c == '_';
  if (!ok)
    return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                              "prefix '%s' is not a C identifier (use "
                              "--prefix NAME)",
                              p);
  return NULL;
}

eddy_status_t eddy_cpu_emit_mlir(const eddy_module_t *m, const char *entry,
                                 const eddy_cpu_opts_t *opts, eddy_buf_t *out) {
  eddy_cpu_opts_t dflt = eddy_cpu_opts_default();
  if (!opts)
    opts = &dflt;
  eddy_op_t *func;
  EDDY_RETURN_IF_ERROR(cpu_find_entry(m, entry, &func));
  const char *prefix = opts->prefix ? opts->prefix : entry;
  EDDY_RETURN_IF_ERROR(cpu_check_prefix(prefix));
  cpu_emit_t e;
  memset(&e, 0, sizeof e);
  e.ctx = m->ctx;
  e.module = m;
  e.opts = opts;
  e.tgt = cpu_target_for(opts->form);
  e.arena = eddy_arena_create();
  if (!e.arena)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  eddy_buf_init(&e.globals);
  eddy_buf_init(&e.pro);
  eddy_buf_init(&e.body);
  eddy_buf_init(&e.host);
  eddy_buf_init(&e.epi);
  eddy_buf_init(&e.init);
  eddy_ptrmap_init(&e.vals);
  eddy_ptrmap_init(&e.slots);
  eddy_ptrmap_init(&e.direct);
  eddy_ptrmap_init(&e.dim_syms);
  eddy_ptrmap_init(&e.value_block);
  cpu_plan_t plan;
  eddy_status_t st = cpu_plan_build(&plan, m, func, opts);
  e.plan = &plan;
  if (!st)
    st = emit_func(&e, func, prefix);
  cpu_plan_destroy(&plan);
  if (!st) {
    eddy_buf_puts(out, e.tgt->module_open);
    st = abi_decls(out, k_abi_host, sizeof k_abi_host / sizeof k_abi_host[0]);
    if (!st && e.tgt->device_memory)
      st = abi_decls(out, k_abi_cuda,
                     sizeof k_abi_cuda / sizeof k_abi_cuda[0]);
  }
  if (!st) {
    eddy_buf_append(out, e.globals.data ? e.globals.data : "", e.globals.len);
    // The host form: the body, and PREFIX_run around it, which sets the
    // context's floating-point mode (subnormals flushed, by default) for
    // the call and restores the caller's after it, whichever way the body
    // returns. (The GPU target's forms keep the device's arithmetic, which
    // this mode does not reach, and the kernels form stands in for it.)
    static const char *const sig =
        "(%rt: !llvm.ptr, %args: !llvm.ptr, %res: !llvm.ptr, %err: "
        "!llvm.ptr, %errlen: i64) -> i32";
    bool wrap = !e.tgt->kernels;
    if (wrap)
      eddy_buf_printf(out,
                      "func.func private @__eddy_%s_body%s attributes "
                      "{llvm.linkage = #llvm.linkage<internal>} {\n",
                      prefix, sig);
    else
      eddy_buf_printf(out, "func.func @%s_run%s {\n", prefix, sig);
    eddy_buf_append(out, e.body.data ? e.body.data : "", e.body.len);
    eddy_buf_puts(out, "}\n");
    if (wrap)
      eddy_buf_printf(
          out,
          "func.func @%s_run%s {\n"
          "%%fp = func.call @eddy_rt_entry_fp_enter(%%rt) : (!llvm.ptr) -> "
          "i64\n"
          "%%r = func.call @__eddy_%s_body(%%rt, %%args, %%res, %%err, "
          "%%errlen) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> "
          "i32\n"
          "func.call @eddy_rt_entry_fp_exit(%%fp) : (i64) -> ()\n"
          "func.return %%r : i32\n}\n",
          prefix, sig, prefix);
    eddy_buf_puts(out, "}\n");
  }
  eddy_ptrmap_destroy(&e.vals);
  eddy_ptrmap_destroy(&e.slots);
  eddy_ptrmap_destroy(&e.direct);
  eddy_ptrmap_destroy(&e.dim_syms);
  eddy_ptrmap_destroy(&e.value_block);
  eddy_buf_destroy(&e.globals);
  eddy_buf_destroy(&e.pro);
  eddy_buf_destroy(&e.body);
  eddy_buf_destroy(&e.host);
  eddy_buf_destroy(&e.epi);
  eddy_buf_destroy(&e.init);
  eddy_arena_destroy(e.arena);
  return st;
}

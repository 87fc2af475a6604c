/// eddy IR -> MLIR text: the function body's ops and control flow, on
/// memrefs (emit_entry.c emits the entry function around it: the ABI of
/// cpu.h, argument checks, results, the run-time error exits).
///
/// Bufferization is simple and static: every value that is not fused gets
/// one buffer allocated at function entry and freed at exit, so a value
/// defined in a loop body lives in the same buffer in every iteration; a
/// ctl.while keeps each loop value in one buffer (its results are those
/// buffers); a ctl.if writes its results into one buffer each from either
/// branch. Which ops are fused into which kernel, which results are written
/// in place and when a buffer dies are the kernel plan's (plan.h): the
/// emitter follows it.
#include "backend-cpu/emit_internal.h"
#include "backend-cpu/outline.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


void cpu_p(cpu_emit_t *e, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char small[256];
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  if (n >= 0 && (size_t)n < sizeof small) {
    eddy_buf_append(&e->body, small, (size_t)n);
  } else if (n >= 0) {
    char *big = malloc((size_t)n + 1);
    if (big) {
      vsnprintf(big, (size_t)n + 1, fmt, ap2);
      eddy_buf_append(&e->body, big, (size_t)n);
      free(big);
    }
  }
  va_end(ap2);
  va_end(ap);
}

int cpu_fresh(cpu_emit_t *e) { return e->next++; }

int cpu_index_const(cpu_emit_t *e, int64_t v) {
  int t = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.constant %lld : index\n", t, (long long)v);
  return t;
}

const char *cpu_stor_type(eddy_dtype_t dt) {
  switch (dt) {
  case EDDY_DT_F16:
    return "f16";
  case EDDY_DT_BF16:
    return "bf16";
  case EDDY_DT_F32:
    return "f32";
  case EDDY_DT_F64:
    return "f64";
  case EDDY_DT_I1:
    return "i8";
  case EDDY_DT_I8:
    return "i8";
  case EDDY_DT_I32:
    return "i32";
  default:
    return "i64";
  }
}

const char *cpu_reg_type(eddy_dtype_t dt) {
  return dt == EDDY_DT_I1 ? "i1" : cpu_stor_type(dt);
}

void cpu_memref_type(const eddy_type_t *t, eddy_buf_t *out) {
  eddy_buf_puts(out, "memref<");
  for (int32_t i = 0; i < t->rank; i++) {
    if (t->dims[i] < 0)
      eddy_buf_puts(out, "?x");
    else
      eddy_buf_printf(out, "%lldx", (long long)t->dims[i]);
  }
  eddy_buf_printf(out, "%s>", cpu_stor_type(t->dtype));
}

/// The memref type as a string in the emitter's arena.
const char *cpu_mtype(cpu_emit_t *e, const eddy_type_t *t) {
  eddy_buf_t b;
  eddy_buf_init(&b);
  cpu_memref_type(t, &b);
  char *s = eddy_arena_strndup(e->arena, b.data, b.len);
  eddy_buf_destroy(&b);
  return s;
}

cpu_val_t *cpu_val_get(cpu_emit_t *e, const eddy_value_t *v) {
  return eddy_ptrmap_get(&e->vals, v);
}

cpu_val_t *cpu_val_new(cpu_emit_t *e, const eddy_value_t *v) {
  cpu_val_t *cv = eddy_arena_alloc(e->arena, sizeof *cv);
  memset(cv, 0, sizeof *cv);
  cv->buf = cv->dslot = cv->pslot = cv->cslot = cv->vslot = -1;
  eddy_ptrmap_put(&e->vals, v, cv);
  return cv;
}

eddy_status_t cpu_unsupported(const eddy_op_t *op, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  eddy_buf_t loc;
  eddy_buf_init(&loc);
  eddy_ir_loc_format(op->loc, &loc);
  eddy_status_t st = eddy_status_create_at(EDDY_ERR_UNSUPPORTED, loc.data,
                                           "'%s' op %s", op->name->str, msg);
  eddy_buf_destroy(&loc);
  return st;
}

eddy_status_t cpu_check_type(const eddy_op_t *op, const eddy_type_t *t) {
  if (!eddy_ir_type_is_tensor(t))
    return cpu_unsupported(op, "uses a non-tensor value (TensorLists and "
                               "tokens are not supported by the CPU backend "
                               "yet)");
  if (t->rank < 0 || t->rank > EDDY_RT_MAX_RANK) {
    eddy_buf_t b;
    eddy_buf_init(&b);
    eddy_ir_type_print(t, &b);
    eddy_status_t st = cpu_unsupported(
        op,
        "has a value of type %s: the CPU backend needs ranked tensors of "
        "rank at most %d",
        b.data, EDDY_RT_MAX_RANK);
    eddy_buf_destroy(&b);
    return st;
  }
  if (cpu_type_is_dynamic(t))
    return NULL; // sizes are checked when the buffer is allocated
  int64_t bytes;
  if (eddy_ir_type_num_elements(t) < 0 ||
      !eddy_checked_mul_i64(eddy_ir_type_num_elements(t),
                            (int64_t)eddy_dtype_size(t->dtype), &bytes))
    return cpu_unsupported(op, "has a tensor too large to allocate");
  return NULL;
}

/// Records an open loop nest (see cpu_emit_t.nest_rank).
static void push_nest(cpu_emit_t *e, int32_t rank, int braces, bool kernel) {
  if (e->num_nests < CPU_MAX_NESTS) {
    e->nest_rank[e->num_nests] = rank;
    e->nest_braces[e->num_nests] = braces;
    e->nest_kernel[e->num_nests] = kernel;
  }
  e->num_nests++;
  if (kernel)
    e->kernel_depth++;
}

void cpu_unflatten_v(cpu_emit_t *e, int n, int32_t rank, const int *dims,
                     int *idx) {
  int rest = n;
  for (int32_t d = rank - 1; d >= 0; d--) {
    if (d == 0) {
      idx[d] = rest;
      break;
    }
    idx[d] = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.remui %%t%d, %%t%d : index\n", idx[d], rest,
          dims[d]);
    int q = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.divui %%t%d, %%t%d : index\n", q, rest, dims[d]);
    rest = q;
  }
}

/// One scf.for per dim; in a block of rows of a row-parallel run
/// (emit_row_run), a kernel's dim 0 over the block's rows only.
static void for_open(cpu_emit_t *e, int32_t rank, const int *dims, int *idx) {
  bool rows = e->rows && e->num_nests == e->row_nest;
  for (int32_t i = 0; i < rank; i++) {
    bool r = rows && i == 0;
    int lb = r ? e->row_lo : cpu_index_const(e, 0), st = cpu_index_const(e, 1);
    int ub = r ? e->row_hi : dims[i];
    idx[i] = cpu_fresh(e);
    cpu_p(e, "scf.for %%t%d = %%t%d to %%t%d step %%t%d {\n", idx[i], lb, ub,
          st);
  }
  push_nest(e, rank, rank, false);
}

/// Threads per block of a kernel over n elements (n < 0: not known when
/// compiling): 256, or for fewer elements the next multiple of the warp
/// size, so a small kernel does not start idle threads.
static int64_t block_size(int64_t n) {
  if (n < 0 || n >= 256)
    return 256;
  return n <= 32 ? 32 : (n + 31) / 32 * 32;
}

/// A kernel over the elements of dims (known_n: their count when static,
/// else -1): blocks of block_size threads, each thread one element (a
/// bounds check skips the last block's extra threads), its flat index
/// unflattened into idx. The GPU mapping makes the outer parallel loop the
/// grid and the inner one the block.
static void kernel_open(cpu_emit_t *e, int32_t rank, const int *dims,
                        int *idx, int64_t known_n) {
  e->host = e->body;
  eddy_buf_init(&e->body);
  int n = cpu_index_const(e, 1);
  for (int32_t i = 0; i < rank; i++) {
    int m = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.muli %%t%d, %%t%d : index\n", m, n, dims[i]);
    n = m;
  }
  int64_t bs = block_size(known_n);
  int bsv = cpu_index_const(e, bs), bm1 = cpu_index_const(e, bs - 1);
  int up = cpu_fresh(e), nb = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.addi %%t%d, %%t%d : index\n", up, n, bm1);
  cpu_p(e, "%%t%d = arith.divui %%t%d, %%t%d : index\n", nb, up, bsv);
  int lb = cpu_index_const(e, 0), st = cpu_index_const(e, 1);
  int b = cpu_fresh(e), t = cpu_fresh(e);
  cpu_p(e, "scf.parallel (%%t%d) = (%%t%d) to (%%t%d) step (%%t%d) {\n", b,
        lb, nb, st);
  cpu_p(e, "scf.parallel (%%t%d) = (%%t%d) to (%%t%d) step (%%t%d) {\n", t,
        lb, bsv, st);
  int base = cpu_fresh(e), flat = cpu_fresh(e), in = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.muli %%t%d, %%t%d : index\n", base, b, bsv);
  cpu_p(e, "%%t%d = arith.addi %%t%d, %%t%d : index\n", flat, base, t);
  cpu_p(e, "%%t%d = arith.cmpi ult, %%t%d, %%t%d : index\n", in, flat, n);
  cpu_p(e, "scf.if %%t%d {\n", in);
  cpu_unflatten_v(e, flat, rank, dims, idx);
  push_nest(e, rank, 3, true);
}

void cpu_loops_open_v(cpu_emit_t *e, int32_t rank, const int *dims, int *idx) {
  if (e->tgt->kernels && e->kernel_depth == 0)
    kernel_open(e, rank, dims, idx, -1);
  else
    for_open(e, rank, dims, idx);
}

void cpu_host_loops_open(cpu_emit_t *e, int32_t rank, const int64_t *dims,
                         int *idx) {
  int d[EDDY_RT_MAX_RANK];
  for (int32_t i = 0; i < rank; i++)
    d[i] = cpu_index_const(e, dims[i]);
  for_open(e, rank, d, idx);
}

void cpu_loops_open(cpu_emit_t *e, int32_t rank, const int64_t *dims,
                    int *idx) {
  int d[EDDY_RT_MAX_RANK];
  int64_t n = 1; // (static types are checked: the count fits)
  for (int32_t i = 0; i < rank; i++) {
    d[i] = cpu_index_const(e, dims[i]);
    n *= dims[i];
  }
  if (e->tgt->kernels && e->kernel_depth == 0)
    kernel_open(e, rank, d, idx, n);
  else
    for_open(e, rank, d, idx);
}

void cpu_loops_close(cpu_emit_t *e, int32_t rank) {
  // Closes the innermost nests until `rank` loops are closed (at least one
  // nest: a rank-0 nest is a kernel of one element in the kernels forms).
  int32_t left = rank;
  do {
    if (e->num_nests <= 0) {
      e->nest_error = true;
      return;
    }
    int k = --e->num_nests;
    if (k >= CPU_MAX_NESTS) {
      e->nest_error = true;
      continue;
    }
    for (int i = 0; i < e->nest_braces[k]; i++)
      cpu_p(e, "}\n");
    if (e->nest_kernel[k] && --e->kernel_depth == 0) {
      // The kernel closes: its text follows the host code before it.
      eddy_buf_append(&e->host, e->body.data ? e->body.data : "",
                      e->body.len);
      eddy_buf_destroy(&e->body);
      e->body = e->host;
      eddy_buf_init(&e->host);
    }
    left -= e->nest_rank[k];
  } while (left > 0);
}

static void print_index(cpu_emit_t *e, const int *idx, int32_t rank) {
  cpu_p(e, "[");
  for (int32_t i = 0; i < rank; i++)
    cpu_p(e, "%s%%t%d", i ? ", " : "", idx[i]);
  cpu_p(e, "]");
}

/// Records host code touching tensor memory in the kernels forms.
/// Records, in the kernels forms, host code touching tensor memory or a
/// kernel touching a host slot.
static void check_host_access(cpu_emit_t *e, int buf) {
  if (!e->tgt->kernels || e->host_ok || e->host_access)
    return;
  bool slot = eddy_ptrmap_get(&e->slots, (void *)(intptr_t)(buf + 1));
  if (slot != (e->kernel_depth == 0)) {
    e->host_access = true;
    e->host_access_op = e->cur_op;
  }
}

int cpu_load(cpu_emit_t *e, int buf, const eddy_type_t *t, const int *idx) {
  check_host_access(e, buf);
  int v = cpu_fresh(e);
  cpu_p(e, "%%t%d = memref.load %%t%d", v, buf);
  print_index(e, idx, t->rank);
  cpu_p(e, " : %s\n", cpu_mtype(e, t));
  if (t->dtype != EDDY_DT_I1)
    return v;
  int b = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.trunci %%t%d : i8 to i1\n", b, v);
  return b;
}

void cpu_store(cpu_emit_t *e, int buf, const eddy_type_t *t, const int *idx,
               int val) {
  check_host_access(e, buf);
  if (t->dtype == EDDY_DT_I1) {
    int b = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.extui %%t%d : i1 to i8\n", b, val);
    val = b;
  }
  cpu_p(e, "memref.store %%t%d, %%t%d", val, buf);
  print_index(e, idx, t->rank);
  cpu_p(e, " : %s\n", cpu_mtype(e, t));
}

eddy_status_t cpu_expr(cpu_emit_t *e, eddy_value_t *v, const int *idx,
                       int *out) {
  cpu_val_t *cv = cpu_val_get(e, v);
  if (!cv)
    return eddy_status_create(EDDY_ERR_INTERNAL,
                              "cpu backend: value used before its definition");
  if (cv->splat) {
    *out = cpu_splat_const(e, cv->splat);
    return NULL;
  }
  if (cv->fused)
    return cpu_pointwise(e, v->def, idx, out);
  if (cv->buf < 0 && cv->pslot >= 0) {
    *out = cpu_load(e, cpu_dyn_view(e, cv, v->type), v->type, idx);
    return NULL;
  }
  if (cv->buf < 0)
    return eddy_status_create(EDDY_ERR_INTERNAL,
                              "cpu backend: value has no buffer");
  *out = cpu_load(e, cv->buf, v->type, idx);
  return NULL;
}

int cpu_alloc_buf(cpu_emit_t *e, const eddy_type_t *t) {
  int b = cpu_fresh(e);
  const char *mt = cpu_mtype(e, t);
  // Small buffers (scalars above all: loop counters, conditions) go on the
  // stack, where LLVM promotes them to registers.
  int64_t bytes =
      eddy_ir_type_num_elements(t) * (int64_t)eddy_dtype_size(t->dtype);
  // (Not where kernels run: their threads cannot reach the host's stack.)
  if (!e->tgt->kernels && bytes <= CPU_STACK_BUF_MAX &&
      e->stack_bytes + bytes <= CPU_STACK_TOTAL_MAX) {
    e->stack_bytes += bytes;
    e->last_block = -1;
    eddy_buf_printf(&e->pro,
                    "%%t%d = memref.alloca() {alignment = 64 : i64} : %s\n", b,
                    mt);
    return b;
  }
  // A block of a dead value that is large enough (the smallest such).
  int best = -1;
  for (int i = 0; i < e->num_heap && !e->no_reuse; i++)
    if (e->heap[i].free && e->heap[i].bytes >= bytes &&
        (best < 0 || e->heap[i].bytes < e->heap[best].bytes))
      best = i;
  eddy_buf_t body = e->body;
  e->body = e->pro;
  if (best >= 0) {
    e->heap[best].free = false;
    b = cpu_memref_from_ptr(e, e->heap[best].ptr, t);
    e->pro = e->body;
    e->body = body;
    e->last_block = best;
    return b;
  }
  // Otherwise a new block from rt (its allocator hook and memory limit
  // apply); emit_func checks them all for NULL before running anything.
  // (The target's tensor memory.)
  const char *mem = e->tgt->mem;
  int nb = cpu_fresh(e), p = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.constant %lld : i64\n", nb, (long long)bytes);
  cpu_p(e,
        "%%t%d = func.call @eddy_rt_entry_%salloc(%%rt, %%t%d, %%err, "
        "%%errlen) : (!llvm.ptr, i64, !llvm.ptr, i64) -> !llvm.ptr\n",
        p, mem, nb);
  b = cpu_memref_from_ptr(e, p, t);
  e->pro = e->body;
  e->body = body;
  eddy_buf_printf(&e->epi,
                  "func.call @eddy_rt_entry_%sfree(%%rt, %%t%d, %%t%d) : "
                  "(!llvm.ptr, !llvm.ptr, i64) -> ()\n",
                  mem, p, nb);
  cpu_block_t *heap =
      eddy_arena_alloc(e->arena, sizeof(*heap) * (size_t)(e->num_heap + 1));
  if (e->num_heap)
    memcpy(heap, e->heap, sizeof(*heap) * (size_t)e->num_heap);
  heap[e->num_heap] = (cpu_block_t){p, bytes, false};
  e->heap = heap;
  e->last_block = e->num_heap++;
  return b;
}

int cpu_alloc_slot(cpu_emit_t *e, const eddy_type_t *t) {
  int b = cpu_fresh(e);
  eddy_ptrmap_put(&e->slots, (void *)(intptr_t)(b + 1), (void *)1);
  eddy_buf_printf(&e->pro, "%%t%d = memref.alloca() : %s\n", b,
                  cpu_mtype(e, t));
  return b;
}

eddy_status_t cpu_host_scalar(cpu_emit_t *e, eddy_value_t *v, int *out) {
  cpu_val_t *cv = cpu_val_get(e, v);
  if (!e->tgt->kernels || (cv && cv->splat))
    return cpu_expr(e, v, NULL, out);
  if (!cv || cv->buf < 0)
    return eddy_status_create(EDDY_ERR_INTERNAL,
                              "cpu backend: predicate not materialized");
  if (!e->tgt->device_memory) {
    e->host_ok = true; // (host memory in this form)
    *out = cpu_load(e, cv->buf, v->type, NULL);
    e->host_ok = false;
    return NULL;
  }
  // Copied from the device; the copy waits for the kernels before it.
  int slot = cpu_alloc_slot(e, v->type);
  int dst = cpu_buf_ptr(e, slot, v->type), src = cpu_buf_ptr(e, cv->buf, v->type);
  cpu_target_copy(e, false, dst, src, (int64_t)eddy_dtype_size(v->type->dtype));
  *out = cpu_load(e, slot, v->type, NULL);
  return NULL;
}

void cpu_zero_i64_in_prologue(cpu_emit_t *e, int slot) {
  eddy_buf_t body = e->body;
  e->body = e->pro;
  int z = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.constant 0 : i64\n", z);
  cpu_store(e, slot, eddy_ir_scalar_type_get(e->ctx, EDDY_DT_I64), NULL, z);
  e->pro = e->body;
  e->body = body;
}

/// dst_buf[i] = v[i] for every index.
eddy_status_t cpu_copy_value(cpu_emit_t *e, eddy_value_t *v, int dst_buf,
                             const eddy_type_t *dt) {
  int idx[EDDY_RT_MAX_RANK], x;
  cpu_loops_open(e, dt->rank, dt->dims, idx);
  EDDY_RETURN_IF_ERROR(cpu_expr(e, v, idx, &x));
  cpu_store(e, dst_buf, dt, idx, x);
  cpu_loops_close(e, dt->rank);
  return NULL;
}

static void copy_buf(cpu_emit_t *e, int src, int dst, const eddy_type_t *t) {
  int idx[EDDY_RT_MAX_RANK];
  cpu_loops_open(e, t->rank, t->dims, idx);
  int x = cpu_load(e, src, t, idx);
  cpu_store(e, dst, t, idx, x);
  cpu_loops_close(e, t->rank);
}

int cpu_result_buf(cpu_emit_t *e, const eddy_value_t *v) {
  const int *out = eddy_ptrmap_get(&e->direct, v);
  if (out)
    return *out;
  int b = cpu_alloc_buf(e, v->type);
  // Remember the block of a top-level value, to free it after its last use.
  if (e->last_block >= 0 && v->def && v->def->block == e->top)
    eddy_ptrmap_put(&e->value_block, v, (void *)(intptr_t)(e->last_block + 1));
  return b;
}

/// Frees the blocks of top-level values whose last use is top-level op k.
static void release_dead(cpu_emit_t *e, intptr_t k) {
  for (size_t i = 0; i < e->value_block.cap; i++) {
    const void *v = e->value_block.keys ? e->value_block.keys[i] : NULL;
    intptr_t blk = v ? (intptr_t)e->value_block.vals[i] : 0;
    if (!blk)
      continue;
    if (cpu_plan_last_use(e->plan, v) == k) {
      e->heap[blk - 1].free = true;
      e->value_block.vals[i] = NULL;
    }
  }
}

void cpu_put_mlir_string(eddy_buf_t *out, const char *s) {
  // MLIR string escapes: \XX for anything outside plain printable ASCII.
  for (const char *c = s ? s : ""; *c; c++) {
    unsigned char u = (unsigned char)*c;
    if (u < 32 || u >= 127 || u == '"' || u == '\\')
      eddy_buf_printf(out, "\\%02X", u);
    else
      eddy_buf_putc(out, (char)u);
  }
}

/// A global @__eddy_siteN holding "LOC: 'op.name' op"; returns N.
static int op_where_global(cpu_emit_t *e, const eddy_op_t *op) {
  int g = e->next_global++;
  eddy_buf_t loc;
  eddy_buf_init(&loc);
  eddy_ir_loc_format(op->loc, &loc);
  eddy_buf_printf(&e->globals,
                  "llvm.mlir.global internal constant @__eddy_site%d(\"", g);
  cpu_put_mlir_string(&e->globals, loc.data);
  eddy_buf_printf(&e->globals, ": '%s' op\\00\") {addr_space = 0 : i32}\n",
                  op->name->str);
  eddy_buf_destroy(&loc);
  return g;
}

int cpu_error_site(cpu_emit_t *e, const eddy_op_t *op) {
  int g = op_where_global(e, op);
  int *sites =
      eddy_arena_alloc(e->arena, sizeof(int) * (size_t)(e->num_sites + 1));
  if (e->num_sites)
    memcpy(sites, e->site_globals, sizeof(int) * (size_t)e->num_sites);
  bool *kinds =
      eddy_arena_alloc(e->arena, sizeof(bool) * (size_t)(e->num_sites + 1));
  if (e->num_sites && e->site_dims)
    memcpy(kinds, e->site_dims, sizeof(bool) * (size_t)e->num_sites);
  kinds[e->num_sites] = false;
  e->site_dims = kinds;
  sites[e->num_sites++] = g;
  e->site_globals = sites;
  return e->num_sites;
}

/// cpu_fail_if inside a kernel: the kernels' error record (any failing
/// thread may write it; each writes a failing index of the same site).
static void kernel_fail_if(cpu_emit_t *e, int cond, int site, int index,
                           int size) {
  int64_t three = 3;
  const eddy_type_t *rt = eddy_ir_tensor_type_get(e->ctx, EDDY_DT_I64, 1,
                                                  &three);
  int k0 = cpu_index_const(e, 0), k1 = cpu_index_const(e, 1),
      k2 = cpu_index_const(e, 2);
  int f = cpu_load(e, e->krec, rt, &k0);
  int z = cpu_fresh(e), none = cpu_fresh(e), c = cpu_fresh(e),
      s = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.constant 0 : i64\n", z);
  cpu_p(e, "%%t%d = arith.cmpi eq, %%t%d, %%t%d : i64\n", none, f, z);
  cpu_p(e, "%%t%d = arith.andi %%t%d, %%t%d : i1\n", c, cond, none);
  cpu_p(e, "scf.if %%t%d {\n", c);
  cpu_p(e, "%%t%d = arith.constant %d : i64\n", s, site);
  cpu_store(e, e->krec, rt, &k0, s);
  cpu_store(e, e->krec, rt, &k1, index);
  cpu_store(e, e->krec, rt, &k2, size);
  cpu_p(e, "}\n");
}

void cpu_sync_kernel_error(cpu_emit_t *e) {
  if (e->krec < 0 || e->eflag < 0)
    return;
  int64_t three = 3;
  const eddy_type_t *rt = eddy_ir_tensor_type_get(e->ctx, EDDY_DT_I64, 1,
                                                  &three);
  const eddy_type_t *i32s = eddy_ir_scalar_type_get(e->ctx, EDDY_DT_I32);
  const eddy_type_t *i64s = eddy_ir_scalar_type_get(e->ctx, EDDY_DT_I64);
  int rec = e->krec;
  if (e->tgt->device_memory) {
    // Copied to a host slot (waiting for the kernel).
    rec = cpu_alloc_slot(e, rt);
    int dst = cpu_buf_ptr(e, rec, rt), src = cpu_buf_ptr(e, e->krec, rt);
    cpu_target_copy(e, false, dst, src, 24);
  }
  e->host_ok = true; // (the kernels form reads host memory directly)
  int k0 = cpu_index_const(e, 0), k1 = cpu_index_const(e, 1),
      k2 = cpu_index_const(e, 2);
  int site = cpu_load(e, rec, rt, &k0), idx = cpu_load(e, rec, rt, &k1),
      size = cpu_load(e, rec, rt, &k2);
  e->host_ok = false;
  int z = cpu_fresh(e), some = cpu_fresh(e), s32 = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.constant 0 : i64\n", z);
  cpu_p(e, "%%t%d = arith.cmpi ne, %%t%d, %%t%d : i64\n", some, site, z);
  cpu_p(e, "scf.if %%t%d {\n", cpu_and_no_error(e, some));
  cpu_p(e, "%%t%d = arith.trunci %%t%d : i64 to i32\n", s32, site);
  cpu_store(e, e->eflag, i32s, NULL, s32);
  cpu_store(e, e->eidx, i64s, NULL, idx);
  cpu_store(e, e->esize, i64s, NULL, size);
  cpu_p(e, "}\n");
}

void cpu_fail_if(cpu_emit_t *e, int cond, int site, int index, int size) {
  if (e->tgt->kernels && e->kernel_depth > 0) {
    kernel_fail_if(e, cond, site, index, size);
    return;
  }
  const eddy_type_t *i32s = eddy_ir_scalar_type_get(e->ctx, EDDY_DT_I32);
  const eddy_type_t *i64s = eddy_ir_scalar_type_get(e->ctx, EDDY_DT_I64);
  // The first error recorded stays: a later failing check of the same
  // computation (one shape rule after another) does not replace it.
  cpu_p(e, "scf.if %%t%d {\n", cpu_and_no_error(e, cond));
  int c = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.constant %d : i32\n", c, site);
  cpu_store(e, e->eflag, i32s, NULL, c);
  cpu_store(e, e->eidx, i64s, NULL, index);
  cpu_store(e, e->esize, i64s, NULL, size);
  cpu_p(e, "}\n");
}

/// ok && no run-time error so far (loops stop at the first error).
int cpu_and_no_error(cpu_emit_t *e, int ok) {
  if (e->eflag < 0)
    return ok;
  const eddy_type_t *i32s = eddy_ir_scalar_type_get(e->ctx, EDDY_DT_I32);
  int f = cpu_load(e, e->eflag, i32s, NULL);
  int z = cpu_fresh(e), c = cpu_fresh(e), r = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.constant 0 : i32\n", z);
  cpu_p(e, "%%t%d = arith.cmpi eq, %%t%d, %%t%d : i32\n", c, f, z);
  cpu_p(e, "%%t%d = arith.andi %%t%d, %%t%d : i1\n", r, ok, c);
  return r;
}

/// ---- ops

static void bind(cpu_emit_t *e, const eddy_value_t *v, int buf) {
  cpu_val_new(e, v)->buf = buf;
}

/// v takes over the storage record rec (dynamically shaped loop values and
/// branch results).
static void bind_rec(cpu_emit_t *e, const eddy_value_t *v,
                     const cpu_val_t *rec) {
  *cpu_val_new(e, v) = *rec;
}

/// Storage for a value of dynamic type t that `user` writes: slots, and a
/// buffer allocated when the value is computed.
static cpu_val_t *dyn_storage(cpu_emit_t *e, const eddy_type_t *t) {
  cpu_val_t *rec = eddy_arena_alloc(e->arena, sizeof *rec);
  memset(rec, 0, sizeof *rec);
  rec->buf = rec->dslot = rec->pslot = rec->cslot = -1;
  cpu_dyn_init(e, rec, t, true);
  return rec;
}

/// dst_buf (static type dt) = v where v's type has dynamic dims: its dims
/// are checked against dt first (a run-time error names `user`).
eddy_status_t cpu_copy_checked(cpu_emit_t *e, eddy_value_t *v,
                                  const eddy_op_t *user, int dst_buf,
                                  const eddy_type_t *dt) {
  if (!e->dyn || !cpu_type_is_dynamic(v->type))
    return cpu_copy_value(e, v, dst_buf, dt);
  int dims[EDDY_RT_MAX_RANK];
  cpu_gate_open(e);
  EDDY_RETURN_IF_ERROR(cpu_dims(e, v, true, dims));
  for (int32_t d = 0; d < dt->rank; d++) {
    if (v->type->dims[d] >= 0)
      continue;
    int want = cpu_index_const(e, dt->dims[d]), c = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.cmpi ne, %%t%d, %%t%d : index\n", c, dims[d],
          want);
    char what[80];
    snprintf(what, sizeof what,
             "operand dimension %d differs from the static type (size and "
             "expected)",
             (int)d);
    cpu_fail_dims(e, c, cpu_dims_site(e, user, what), dims[d], want);
  }
  cpu_gate_close(e);
  cpu_gate_open(e);
  EDDY_RETURN_IF_ERROR(cpu_copy_value(e, v, dst_buf, dt));
  cpu_gate_close(e);
  return NULL;
}

static bool is_list(const eddy_type_t *t) { return t->kind == EDDY_TYPE_LIST; }

/// dst = v, for a loop value, branch result or init: a tensor copy, or for
/// a list a new reference (moved when v dies at `user`).
static eddy_status_t assign(cpu_emit_t *e, eddy_value_t *v,
                            const eddy_op_t *user, int dst,
                            const cpu_val_t *dyn, const eddy_type_t *t) {
  if (is_list(t)) {
    cpu_list_assign(e, v, user, dst);
    return NULL;
  }
  if (dyn)
    return cpu_dyn_assign(e, v, dyn, t);
  return cpu_copy_checked(e, v, user, dst, t);
}

/// In the prologue, once per function: the call's loop budgets, read into
/// e->loop_limit and e->loop_deadline.
static void read_loop_budgets(cpu_emit_t *e) {
  if (e->loop_limit >= 0)
    return;
  const eddy_type_t *i64s = eddy_ir_scalar_type_get(e->ctx, EDDY_DT_I64);
  e->loop_limit = cpu_alloc_slot(e, i64s);
  e->loop_deadline = cpu_alloc_slot(e, i64s);
  eddy_buf_t body = e->body;
  e->body = e->pro;
  int l = cpu_fresh(e), d = cpu_fresh(e);
  cpu_p(e,
        "%%t%d = func.call @eddy_rt_entry_max_iterations(%%rt) : "
        "(!llvm.ptr) -> i64\n",
        l);
  cpu_p(e,
        "%%t%d = func.call @eddy_rt_entry_deadline(%%rt) : (!llvm.ptr) -> "
        "i64\n",
        d);
  cpu_store(e, e->loop_limit, i64s, NULL, l);
  cpu_store(e, e->loop_deadline, i64s, NULL, d);
  e->pro = e->body;
  e->body = body;
}

/// Where loop op decides to run its body again (p) after `count` runs: the
/// call's budgets (docs/runtime.md): past the iteration limit, and every 64
/// iterations cancelled or past the deadline, the runtime records an error,
/// which stops every loop. Returns p && no error.
static int check_loop_budgets(cpu_emit_t *e, const eddy_op_t *op, int p,
                              int count) {
  if (e->eflag < 0)
    return p;
  read_loop_budgets(e);
  const eddy_type_t *i64s = eddy_ir_scalar_type_get(e->ctx, EDDY_DT_I64);
  int lim = cpu_load(e, e->loop_limit, i64s, NULL);
  int dl = cpu_load(e, e->loop_deadline, i64s, NULL);
  int over = cpu_fresh(e), one = cpu_fresh(e), next = cpu_fresh(e),
      mask = cpu_fresh(e), low = cpu_fresh(e), zero = cpu_fresh(e),
      tick = cpu_fresh(e), any = cpu_fresh(e), need = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.cmpi sge, %%t%d, %%t%d : i64\n", over, count, lim);
  cpu_p(e, "%%t%d = arith.constant 1 : i64\n", one);
  cpu_p(e, "%%t%d = arith.addi %%t%d, %%t%d : i64\n", next, count, one);
  cpu_p(e, "%%t%d = arith.constant 63 : i64\n", mask);
  cpu_p(e, "%%t%d = arith.andi %%t%d, %%t%d : i64\n", low, next, mask);
  cpu_p(e, "%%t%d = arith.constant 0 : i64\n", zero);
  cpu_p(e, "%%t%d = arith.cmpi eq, %%t%d, %%t%d : i64\n", tick, low, zero);
  cpu_p(e, "%%t%d = arith.ori %%t%d, %%t%d : i1\n", any, over, tick);
  cpu_p(e, "%%t%d = arith.andi %%t%d, %%t%d : i1\n", need, p, any);
  cpu_p(e, "scf.if %%t%d {\n", need);
  int where = cpu_fresh(e);
  cpu_p(e, "%%t%d = llvm.mlir.addressof @__eddy_site%d : !llvm.ptr\n", where,
        op_where_global(e, op));
  cpu_p(e,
        "func.call @eddy_rt_entry_loop_check(%%rt, %%t%d, %%t%d, %%t%d, "
        "%%t%d, %%t%d, %%err, %%errlen) : (!llvm.ptr, i64, i64, i64, "
        "!llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> ()\n",
        count, lim, dl, where, e->eflag_ptr);
  cpu_p(e, "}\n");
  return cpu_and_no_error(e, p);
}

/// The buffer of loop value k's initial value when the plan has the loop
/// read it (cpu_plan_reads_init), else -1.
static int pass_through_buf(cpu_emit_t *e, const eddy_op_t *op, uint32_t k) {
  if (!cpu_plan_reads_init(e->plan, op, k))
    return -1;
  const cpu_val_t *cv = cpu_val_get(e, eddy_ir_op_operand(op, k));
  return cv && cv->buf >= 0 ? cv->buf : -1;
}

static eddy_status_t emit_while(cpu_emit_t *e, eddy_op_t *op) {
  uint32_t n = op->num_results;
  eddy_block_t *cb = eddy_ir_region_entry(&op->regions[0]);
  eddy_block_t *bb = eddy_ir_region_entry(&op->regions[1]);
  int *bufs = eddy_arena_alloc(e->arena, sizeof(int) * (n + 1));
  cpu_val_t **dyn = eddy_arena_alloc(e->arena, sizeof(*dyn) * (n + 1));
  bool *shared = eddy_arena_alloc(e->arena, sizeof(bool) * (n + 1));
  for (uint32_t k = 0; k < n; k++) {
    const eddy_type_t *t = op->results[k].type;
    EDDY_RETURN_IF_ERROR(cpu_check_list_type(op, t));
    dyn[k] = NULL;
    shared[k] = false;
    int in = pass_through_buf(e, op, k);
    if (in >= 0) {
      shared[k] = true;
      bufs[k] = in;
      bind(e, &op->results[k], in);
      bind(e, cb->args[k], in);
      bind(e, bb->args[k], in);
      continue;
    }
    if (cpu_type_is_dynamic(t)) {
      // The loop value's buffer grows when an iteration needs more.
      dyn[k] = dyn_storage(e, t);
      bufs[k] = -1;
      bind_rec(e, &op->results[k], dyn[k]);
      bind_rec(e, cb->args[k], dyn[k]);
      bind_rec(e, bb->args[k], dyn[k]);
      continue;
    }
    bufs[k] =
        is_list(t) ? cpu_list_slot(e) : cpu_result_buf(e, &op->results[k]);
    bind(e, &op->results[k], bufs[k]);
    bind(e, cb->args[k], bufs[k]);
    bind(e, bb->args[k], bufs[k]);
  }
  for (uint32_t k = 0; k < n; k++)
    if (!shared[k])
      EDDY_RETURN_IF_ERROR(assign(e, eddy_ir_op_operand(op, k), op, bufs[k],
                                  dyn[k], op->results[k].type));
  // The body values the plan writes straight into the loop's buffers.
  eddy_op_t *y = eddy_ir_block_terminator(bb);
  for (uint32_t k = 0; k < n; k++) {
    eddy_value_t *v = eddy_ir_op_operand(y, k);
    if (bufs[k] >= 0 && cpu_plan_loop_out(e->plan, v) == (int32_t)k)
      eddy_ptrmap_put(&e->direct, v, &bufs[k]);
  }
  // Iterations run so far: for maximum_iterations, which stops the loop
  // (TensorFlow semantics), and for the call's loop budgets.
  int64_t max_it = eddy_ir_op_attr_int(op, "maximum_iterations", -1);
  const eddy_type_t *i64s = eddy_ir_scalar_type_get(e->ctx, EDDY_DT_I64);
  int counter = cpu_alloc_slot(e, i64s);
  int z = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.constant 0 : i64\n", z);
  cpu_store(e, counter, i64s, NULL, z);
  // B may hold other data than on the last entry (an outer iteration).
  cpu_gemm_caches_reset(e, op);
  cpu_p(e, "scf.while : () -> () {\n");
  EDDY_RETURN_IF_ERROR(cpu_emit_block(e, cb));
  eddy_op_t *cond = eddy_ir_block_terminator(cb);
  int p;
  EDDY_RETURN_IF_ERROR(
      cpu_host_scalar(e, eddy_ir_op_operand(cond, 0), &p));
  int count = cpu_load(e, counter, i64s, NULL);
  if (max_it >= 0) {
    int m = cpu_fresh(e), lt = cpu_fresh(e), both = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.constant %lld : i64\n", m, (long long)max_it);
    cpu_p(e, "%%t%d = arith.cmpi slt, %%t%d, %%t%d : i64\n", lt, count, m);
    cpu_p(e, "%%t%d = arith.andi %%t%d, %%t%d : i1\n", both, p, lt);
    p = both;
  }
  p = check_loop_budgets(e, op, p, count);
  cpu_p(e, "scf.condition(%%t%d)\n} do {\n", p);
  {
    int c = cpu_load(e, counter, i64s, NULL);
    int one = cpu_fresh(e), s = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.constant 1 : i64\n", one);
    cpu_p(e, "%%t%d = arith.addi %%t%d, %%t%d : i64\n", s, c, one);
    cpu_store(e, counter, i64s, NULL, s);
  }
  EDDY_RETURN_IF_ERROR(cpu_emit_block(e, bb));
  // A yield operand that is another loop value of this loop would be
  // overwritten before it is read (a swap): stage those through a temp.
  int *src = eddy_arena_alloc(e->arena, sizeof(int) * (n + 1));
  cpu_val_t **dsrc = eddy_arena_alloc(e->arena, sizeof(*dsrc) * (n + 1));
  for (uint32_t k = 0; k < n; k++) {
    eddy_value_t *v = eddy_ir_op_operand(y, k);
    src[k] = -1;
    dsrc[k] = NULL;
    if (v->block == bb && v->index != k) {
      if (dyn[k]) {
        dsrc[k] = dyn_storage(e, op->results[k].type);
        EDDY_RETURN_IF_ERROR(
            cpu_dyn_assign(e, v, dsrc[k], op->results[k].type));
        src[k] = 0;
      } else if (dyn[v->index]) {
        src[k] = cpu_alloc_buf(e, op->results[k].type);
        EDDY_RETURN_IF_ERROR(
            cpu_copy_checked(e, v, y, src[k], op->results[k].type));
      } else if (is_list(op->results[k].type)) {
        src[k] = cpu_list_slot(e);
        cpu_list_copy_slot(e, bufs[v->index], src[k]);
      } else {
        src[k] = cpu_alloc_buf(e, op->results[k].type);
        copy_buf(e, bufs[v->index], src[k], op->results[k].type);
      }
    }
  }
  for (uint32_t k = 0; k < n; k++) {
    eddy_value_t *v = eddy_ir_op_operand(y, k);
    if ((v->block == bb && v->index == k) ||
        (bufs[k] >= 0 && cpu_plan_loop_out(e->plan, v) == (int32_t)k))
      continue; // passes through unchanged, or written in place
    if (dsrc[k])
      EDDY_RETURN_IF_ERROR(cpu_dyn_copy(e, dsrc[k], dyn[k],
                                        op->results[k].type));
    else if (src[k] >= 0 && is_list(op->results[k].type))
      cpu_list_copy_slot(e, src[k], bufs[k]);
    else if (src[k] >= 0)
      copy_buf(e, src[k], bufs[k], op->results[k].type);
    else
      EDDY_RETURN_IF_ERROR(
          assign(e, v, y, bufs[k], dyn[k], op->results[k].type));
  }
  cpu_p(e, "scf.yield\n}\n");
  return NULL;
}

static eddy_status_t emit_branch(cpu_emit_t *e, eddy_op_t *op, eddy_region_t *r,
                                 const int *bufs, cpu_val_t *const *dyn) {
  eddy_block_t *b = eddy_ir_region_entry(r);
  EDDY_RETURN_IF_ERROR(cpu_emit_block(e, b));
  eddy_op_t *y = eddy_ir_block_terminator(b);
  for (uint32_t k = 0; k < op->num_results; k++)
    EDDY_RETURN_IF_ERROR(assign(e, eddy_ir_op_operand(y, k), y, bufs[k],
                                dyn[k], op->results[k].type));
  return NULL;
}

static eddy_status_t emit_if(cpu_emit_t *e, eddy_op_t *op) {
  uint32_t n = op->num_results;
  int *bufs = eddy_arena_alloc(e->arena, sizeof(int) * (n + 1));
  cpu_val_t **dyn = eddy_arena_alloc(e->arena, sizeof(*dyn) * (n + 1));
  for (uint32_t k = 0; k < n; k++) {
    const eddy_type_t *t = op->results[k].type;
    EDDY_RETURN_IF_ERROR(cpu_check_list_type(op, t));
    dyn[k] = cpu_type_is_dynamic(t) ? dyn_storage(e, t) : NULL;
    bufs[k] = dyn[k]          ? -1
              : is_list(t)    ? cpu_list_slot(e)
                              : cpu_result_buf(e, &op->results[k]);
  }
  int p;
  EDDY_RETURN_IF_ERROR(cpu_host_scalar(e, eddy_ir_op_operand(op, 0), &p));
  cpu_p(e, "scf.if %%t%d {\n", p);
  EDDY_RETURN_IF_ERROR(emit_branch(e, op, &op->regions[0], bufs, dyn));
  cpu_p(e, "} else {\n");
  EDDY_RETURN_IF_ERROR(emit_branch(e, op, &op->regions[1], bufs, dyn));
  cpu_p(e, "}\n");
  // Bound after the branches: inside them the results do not exist yet.
  for (uint32_t k = 0; k < n; k++) {
    if (dyn[k])
      bind_rec(e, &op->results[k], dyn[k]);
    else
      bind(e, &op->results[k], bufs[k]);
  }
  return NULL;
}

/// Binds parameter p of a callee to operand v of the ctl.call `call`. Where
/// v's type has `?` dims the parameter declares static, its run-time dims
/// are checked first (a run-time error names the call); a parameter with
/// `?` dims gets slots filled from v's buffer and static dims.
static eddy_status_t bind_call_arg(cpu_emit_t *e, const eddy_op_t *call,
                                   const char *callee, uint32_t i,
                                   eddy_value_t *v, eddy_value_t *p) {
  cpu_val_t *src = cpu_val_get(e, v);
  if (!src || src->fused)
    return eddy_status_create(EDDY_ERR_INTERNAL,
                              "cpu backend: call operand not materialized");
  const eddy_type_t *vt = v->type, *pt = p->type;
  bool vdyn = cpu_type_is_dynamic(vt), pdyn = cpu_type_is_dynamic(pt);
  if (!vdyn && !pdyn) {
    *cpu_val_new(e, p) = *src;
    return NULL;
  }
  if (!vdyn) {
    // A static operand: its buffer with constant dims in the slots.
    int buf = src->buf;
    if (buf < 0) {
      buf = cpu_alloc_buf(e, vt);
      EDDY_RETURN_IF_ERROR(cpu_copy_value(e, v, buf, vt));
    }
    cpu_val_t *cv = cpu_val_new(e, p);
    cpu_dyn_init(e, cv, pt, false);
    int64_t r = pt->rank;
    const eddy_type_t *dt =
        eddy_ir_tensor_type_get(e->ctx, EDDY_DT_I64, 1, &r);
    const eddy_type_t *i64s = eddy_ir_scalar_type_get(e->ctx, EDDY_DT_I64);
    for (int32_t d = 0; d < pt->rank; d++) {
      int k = cpu_index_const(e, d), x = cpu_fresh(e);
      cpu_p(e, "%%t%d = arith.constant %lld : i64\n", x,
            (long long)vt->dims[d]);
      cpu_store(e, cv->dslot, dt, &k, x);
    }
    int ptr = cpu_buf_ptr(e, buf, vt), pi = cpu_fresh(e);
    cpu_p(e, "%%t%d = llvm.ptrtoint %%t%d : !llvm.ptr to i64\n", pi, ptr);
    cpu_store(e, cv->pslot, i64s, NULL, pi);
    return NULL;
  }
  // An operand with `?` dims: each one the parameter declares static must
  // match at run time, as the evaluator requires.
  int dims[EDDY_RT_MAX_RANK];
  EDDY_RETURN_IF_ERROR(cpu_dims(e, v, false, dims));
  for (int32_t d = 0; d < pt->rank; d++) {
    if (vt->dims[d] >= 0 || pt->dims[d] < 0)
      continue;
    int want = cpu_index_const(e, pt->dims[d]), c = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.cmpi ne, %%t%d, %%t%d : index\n", c, dims[d],
          want);
    char what[160];
    snprintf(what, sizeof what,
             "argument #%u of @%s: dimension %d differs from the declared "
             "type (size and declared)",
             i, callee, (int)d);
    cpu_fail_dims(e, c, cpu_dims_site(e, call, what), dims[d], want);
  }
  cpu_val_t *cv = cpu_val_new(e, p);
  if (pdyn) {
    *cv = *src;
    return NULL;
  }
  // A static parameter: a view of the operand's data with its static dims
  // (the callee's ops run only when the check above passed).
  cv->buf = cpu_dyn_view(e, src, pt);
  return NULL;
}

/// ctl.call is inlined: the callee's body is emitted with its arguments
/// bound to the operands' buffers (recursion cannot be inlined).
static eddy_status_t emit_call(cpu_emit_t *e, eddy_op_t *op) {
  const eddy_attr_t *c = eddy_ir_op_attr(op, "callee");
  eddy_op_t *callee =
      c ? eddy_ir_module_lookup_func(e->module, c->u.str.data) : NULL;
  if (!callee)
    return cpu_unsupported(op, "calls an unknown function");
  if (e->call_depth >= CPU_MAX_INLINE_DEPTH)
    return cpu_unsupported(op,
                           "is nested more than %d calls deep (recursive "
                           "calls are not supported by the CPU backend)",
                           CPU_MAX_INLINE_DEPTH);
  for (uint32_t i = 0; i < op->num_operands; i++)
    if (is_list(eddy_ir_op_operand(op, i)->type))
      return cpu_unsupported(op, "passes a TensorList: not supported by the "
                                 "CPU backend yet");
  eddy_block_t *body = eddy_ir_func_entry(callee);
  for (uint32_t i = 0; i < op->num_operands && i < body->num_args; i++)
    EDDY_RETURN_IF_ERROR(bind_call_arg(e, op, c->u.str.data, i,
                                       eddy_ir_op_operand(op, i),
                                       body->args[i]));
  e->call_depth++;
  eddy_status_t st = cpu_emit_block(e, body);
  e->call_depth--;
  EDDY_RETURN_IF_ERROR(st);
  eddy_op_t *ret = eddy_ir_block_terminator(body);
  for (uint32_t k = 0; k < op->num_results; k++) {
    const eddy_type_t *t = op->results[k].type;
    if (cpu_type_is_dynamic(t)) {
      cpu_val_t *rec = dyn_storage(e, t);
      EDDY_RETURN_IF_ERROR(
          cpu_dyn_assign(e, eddy_ir_op_operand(ret, k), rec, t));
      bind_rec(e, &op->results[k], rec);
      continue;
    }
    int buf = cpu_result_buf(e, &op->results[k]);
    EDDY_RETURN_IF_ERROR(
        cpu_copy_checked(e, eddy_ir_op_operand(ret, k), op, buf, t));
    cpu_val_new(e, &op->results[k])->buf = buf;
  }
  return NULL;
}

static eddy_status_t emit_constant(cpu_emit_t *e, eddy_op_t *op) {
  const eddy_attr_t *v = eddy_ir_op_attr(op, "value");
  const eddy_type_t *t = op->results[0].type;
  cpu_val_t *cv = cpu_val_new(e, &op->results[0]);
  if (v->u.dense.splat) {
    cv->splat = v;
    return NULL;
  }
  // A read-only global holding the raw little-endian bytes (i1 as i8).
  int g = e->next_global++;
  const char *mt = cpu_mtype(e, t);
  eddy_buf_printf(&e->globals,
                  "memref.global \"private\" constant @__eddy_cst%d : %s = "
                  "dense<\"0x",
                  g, mt);
  const unsigned char *p = v->u.dense.data;
  for (size_t i = 0; i < v->u.dense.nbytes; i++)
    eddy_buf_printf(&e->globals, "%02X", p[i]);
  eddy_buf_printf(&e->globals, "\"> {alignment = 64 : i64}\n");
  if (!e->tgt->device_memory) {
    cv->buf = cpu_fresh(e);
    eddy_buf_printf(&e->pro,
                    "%%t%d = memref.get_global @__eddy_cst%d : %s\n", cv->buf,
                    g, mt);
    return NULL;
  }
  // CUDA: a device buffer of its own (a reused block would be overwritten
  // by the body), filled once before the body runs.
  e->no_reuse = true;
  cv->buf = cpu_alloc_buf(e, t);
  e->no_reuse = false;
  eddy_buf_t body = e->body;
  e->body = e->init;
  int h = cpu_fresh(e);
  cpu_p(e, "%%t%d = memref.get_global @__eddy_cst%d : %s\n", h, g, mt);
  int dst = cpu_buf_ptr(e, cv->buf, t), src = cpu_buf_ptr(e, h, t);
  cpu_target_copy(e, true, dst, src, (int64_t)v->u.dense.nbytes);
  e->init = e->body;
  e->body = body;
  return NULL;
}

/// The dynamically shaped values a kernel reads, each given a view once at
/// its top: every read in its loop nests then loads through that view
/// rather than making its own (about twenty lines of MLIR each). Beyond
/// CPU_KERNEL_VIEWS values, reads make their own.
enum { CPU_KERNEL_VIEWS = 32 };

typedef struct kernel_views {
  cpu_val_t *v[CPU_KERNEL_VIEWS];
  int n;
} kernel_views_t;

/// Views of the values op reads (through its fused operands too) that have
/// none, in kv; their buf is the view, valid inside the kernel's gate only
/// (as the results').
static void operand_views(cpu_emit_t *e, eddy_op_t *op, kernel_views_t *kv) {
  for (uint32_t i = 0; i < op->num_operands; i++) {
    eddy_value_t *v = eddy_ir_op_operand(op, i);
    cpu_val_t *cv = eddy_ir_type_is_tensor(v->type) ? cpu_val_get(e, v) : NULL;
    if (!cv || cv->splat)
      continue;
    if (cv->fused && v->def) {
      operand_views(e, v->def, kv);
      continue;
    }
    if (cv->pslot < 0 || cv->vslot >= 0 || cv->buf >= 0 ||
        kv->n == CPU_KERNEL_VIEWS)
      continue;
    cv->buf = cpu_dyn_view(e, cv, v->type);
    kv->v[kv->n++] = cv;
  }
}

/// A core op in a function with dynamic shapes: its result dims (and the
/// shape checks), then buffers for its dynamically shaped results, then the
/// op itself; each step runs only while no run-time error has been seen.
static eddy_status_t emit_core_dyn(cpu_emit_t *e, eddy_op_t *op) {
  uint32_t n = op->num_results;
  cpu_val_t **rv = eddy_arena_alloc(e->arena, sizeof(*rv) * (n + 1));
  for (uint32_t r = 0; r < n; r++) {
    const eddy_type_t *t = op->results[r].type;
    rv[r] = cpu_val_new(e, &op->results[r]);
    if (cpu_type_is_dynamic(t))
      cpu_dyn_init(e, rv[r], t, true);
    else
      rv[r]->buf = cpu_result_buf(e, &op->results[r]);
  }
  cpu_gate_open(e);
  EDDY_RETURN_IF_ERROR(cpu_fused_dims(e, op));
  int dims[EDDY_RT_MAX_RANK];
  for (uint32_t r = 0; r < n; r++)
    EDDY_RETURN_IF_ERROR(cpu_result_dims(e, op, r, true, dims));
  cpu_gate_open(e);
  for (uint32_t r = 0; r < n; r++) {
    const eddy_type_t *t = op->results[r].type;
    if (!cpu_type_is_dynamic(t))
      continue;
    EDDY_RETURN_IF_ERROR(cpu_result_dims(e, op, r, false, dims));
    cpu_dyn_reserve(e, rv[r], t, dims, op);
  }
  cpu_gate_close(e);
  cpu_gate_close(e);
  cpu_gate_open(e);
  // Views of the new buffers for the kernel (valid inside this gate only).
  for (uint32_t r = 0; r < n; r++)
    if (rv[r]->pslot >= 0)
      rv[r]->buf = cpu_dyn_view(e, rv[r], op->results[r].type);
  kernel_views_t kv = {.n = 0};
  operand_views(e, op, &kv);
  eddy_status_t st = NULL;
  if (cpu_op_is_pointwise(op) && n == 1) {
    const eddy_type_t *t = op->results[0].type;
    int idx[EDDY_RT_MAX_RANK], x;
    st = cpu_dims(e, &op->results[0], false, dims);
    if (!st) {
      cpu_loops_open_v(e, t->rank, dims, idx);
      st = cpu_pointwise(e, op, idx, &x);
      if (!st)
        cpu_store(e, rv[0]->buf, t, idx, x);
      cpu_loops_close(e, t->rank);
    }
  } else {
    st = cpu_kernel(e, op);
  }
  for (uint32_t r = 0; r < n; r++)
    if (rv[r]->pslot >= 0)
      rv[r]->buf = -1;
  for (int i = 0; i < kv.n; i++)
    kv.v[i]->buf = -1;
  cpu_gate_close(e);
  return st;
}

static eddy_status_t emit_op_static(cpu_emit_t *e, eddy_op_t *op);

/// The buffers of a kernel step's results (static types).
static void kernel_bufs(cpu_emit_t *e, eddy_op_t *op) {
  for (uint32_t i = 0; i < op->num_results; i++)
    cpu_val_new(e, &op->results[i])->buf = cpu_result_buf(e, &op->results[i]);
}

/// A kernel step's loop nests, writing its results' buffers (kernel_bufs).
static eddy_status_t kernel_loops(cpu_emit_t *e, eddy_op_t *op) {
  if (cpu_op_is_pointwise(op) && op->num_results == 1) {
    const eddy_type_t *t = op->results[0].type;
    int idx[EDDY_RT_MAX_RANK], x;
    cpu_loops_open(e, t->rank, t->dims, idx);
    EDDY_RETURN_IF_ERROR(cpu_pointwise(e, op, idx, &x));
    cpu_store(e, cpu_val_get(e, &op->results[0])->buf, t, idx, x);
    cpu_loops_close(e, t->rank);
    return NULL;
  }
  return cpu_kernel(e, op);
}

static eddy_status_t emit_op_any(cpu_emit_t *e, eddy_op_t *op);

static eddy_status_t emit_op(cpu_emit_t *e, eddy_op_t *op) {
  eddy_status_t st = emit_op_any(e, op);
  // A kernel that can fail (gather, scatter, where) records its error on
  // the device side in the kernels forms: copied to the host right after.
  const cpu_op_info_t *info = cpu_op_info(op);
  if (!st && e->tgt->kernels && info->cls == CPU_OP_KERNEL && info->fallible)
    cpu_sync_kernel_error(e);
  return st;
}

static eddy_status_t emit_op_any(cpu_emit_t *e, eddy_op_t *op) {
  e->cur_op = op;
  cpu_op_class_t cls = cpu_op_info(op)->cls;
  if (!e->dyn || cls == CPU_OP_CONSTANT)
    return emit_op_static(e, op);
  const cpu_step_t *step = cpu_plan_step(e->plan, op);
  bool whole = step && (step->product || step->view);
  if ((cls == CPU_OP_POINTWISE || cls == CPU_OP_KERNEL) && !whole) {
    for (uint32_t i = 0; i < op->num_results; i++)
      EDDY_RETURN_IF_ERROR(cpu_check_type(op, op->results[i].type));
    if (cpu_plan_fused(e->plan, op)) {
      cpu_val_new(e, &op->results[0])->fused = true;
      return NULL;
    }
    return emit_core_dyn(e, op);
  }
  // Loops, branches, calls, list ops, accumulations and rows read in place
  // run as a whole or not at all.
  cpu_gate_open(e);
  eddy_status_t st = emit_op_static(e, op);
  cpu_gate_close(e);
  if (!st && (cls == CPU_OP_LIST || whole))
    cpu_view_rebind(e, op);
  return st;
}

static eddy_status_t emit_op_static(cpu_emit_t *e, eddy_op_t *op) {
  cpu_op_class_t cls = cpu_op_info(op)->cls;
  if (cls == CPU_OP_LIST)
    return cpu_list_op(e, op);
  for (uint32_t i = 0; i < op->num_results; i++)
    EDDY_RETURN_IF_ERROR(cpu_check_list_type(op, op->results[i].type));
  if (cls != CPU_OP_WHILE && cls != CPU_OP_IF)
    for (uint32_t i = 0; i < op->num_results; i++)
      EDDY_RETURN_IF_ERROR(cpu_check_type(op, op->results[i].type));
  switch (cls) {
  case CPU_OP_WHILE:
    return emit_while(e, op);
  case CPU_OP_IF:
    return emit_if(e, op);
  case CPU_OP_CALL:
    return emit_call(e, op);
  case CPU_OP_CONSTANT:
    return emit_constant(e, op);
  case CPU_OP_POINTWISE:
  case CPU_OP_KERNEL:
    break;
  case CPU_OP_NONE:
  case CPU_OP_LIST:
    return cpu_unsupported(op, "is not supported by the CPU backend yet");
  }
  if (cpu_plan_fused(e->plan, op)) {
    // Computed by its user's step (a pointwise op in its kernel, a matmul
    // in the sgemm of an accumulation).
    cpu_val_new(e, &op->results[0])->fused = true;
    return NULL;
  }
  const cpu_step_t *step = cpu_plan_step(e->plan, op);
  if (step && step->view)
    return cpu_gather_row_view(e, op);
  if (step && step->product) {
    cpu_val_new(e, &op->results[0])->buf = cpu_result_buf(e, &op->results[0]);
    return cpu_matmul_accumulate(e, (eddy_op_t *)step->product, op);
  }
  kernel_bufs(e, op);
  return kernel_loops(e, op);
}

/// Task marker m (0: the group begins, 1: the next task, 2: the group
/// ends; k_cpu_task_marks), declared on first use.
static void task_mark(cpu_emit_t *e, int m) {
  if (!e->tasks_declared) {
    for (int i = 0; i < 3; i++)
      eddy_buf_printf(&e->globals, "func.func private @%s()\n",
                      k_cpu_task_marks[i]);
    e->tasks_declared = true;
  }
  cpu_p(e, "func.call @%s() : () -> ()\n", k_cpu_task_marks[m]);
}

/// The plan's tasks starting at op (loops run at once): each one's code
/// between marker calls, which compile.c turns into one task of the
/// runtime's pool each (cpu_tasks_outline). No buffer freed by one part is
/// reused before all are done: the parts run at the same time. Advances *k
/// to the last part's index and sets *last to that part.
static eddy_status_t emit_tasks(cpu_emit_t *e, eddy_op_t *op, intptr_t *k,
                                eddy_op_t **last) {
  const cpu_step_t *s = cpu_plan_step(e->plan, op);
  bool no_reuse = e->no_reuse;
  e->no_reuse = true;
  task_mark(e, 0);
  for (int32_t i = 0; i < s->num_tasks; i++, op = op->next, (*k)++) {
    if (i)
      task_mark(e, 1);
    EDDY_RETURN_IF_ERROR(emit_op(e, op));
  }
  task_mark(e, 2);
  e->no_reuse = no_reuse;
  (*k)--;
  *last = op ? op->prev : e->top->last;
  return NULL;
}

/// The plan's run of row-parallel kernels starting at op: the buffers of
/// their results (and the fused ops and constants between them, which
/// write no code), then for each block of rows every kernel's loop nest
/// over those rows, between marker calls that compile.c turns into one
/// task of the runtime's pool per block (cpu_tasks_outline). A task reads
/// its rows' bounds from memory its launch passes it, not as constants:
/// LLVM would unroll a loop over a constant few rows whole (six times the
/// code and three times the compile time of the LSTM's gates). Advances *k
/// to the last kernel's index and sets *last to it.
static eddy_status_t emit_row_run(cpu_emit_t *e, eddy_op_t *op, intptr_t *k,
                                  eddy_op_t **last) {
  int32_t n = cpu_plan_step(e->plan, op)->num_row_kernels;
  eddy_op_t *q = op;
  for (int32_t seen = 0;; q = q->next, (*k)++) {
    const cpu_step_t *s = cpu_plan_step(e->plan, q);
    if (!s || !s->row_kernel) {
      EDDY_RETURN_IF_ERROR(emit_op(e, q));
      continue;
    }
    e->cur_op = q;
    for (uint32_t i = 0; i < q->num_results; i++)
      EDDY_RETURN_IF_ERROR(cpu_check_type(q, q->results[i].type));
    kernel_bufs(e, q);
    if (++seen == n)
      break;
  }
  *last = q;
  // (A function with dynamic shapes runs each step only while no error has
  // been recorded: the run as one.)
  if (e->dyn)
    cpu_gate_open(e);
  int64_t rows = op->results[0].type->dims[0];
  int bounds = cpu_fresh(e);
  char bt[32];
  snprintf(bt, sizeof bt, "memref<%dxindex>", CPU_ROW_PARTS + 1);
  eddy_buf_printf(&e->pro, "%%t%d = memref.alloca() : %s\n", bounds, bt);
  for (int t = 0; t <= CPU_ROW_PARTS; t++) {
    int v = cpu_index_const(e, rows * t / CPU_ROW_PARTS);
    int i = cpu_index_const(e, t);
    cpu_p(e, "memref.store %%t%d, %%t%d[%%t%d] : %s\n", v, bounds, i, bt);
  }
  task_mark(e, 0);
  eddy_status_t st = NULL;
  for (int t = 0; t < CPU_ROW_PARTS && !st; t++) {
    if (t)
      task_mark(e, 1);
    int at[2];
    for (int j = 0; j < 2; j++) {
      int i = cpu_index_const(e, t + j);
      at[j] = cpu_fresh(e);
      cpu_p(e, "%%t%d = memref.load %%t%d[%%t%d] : %s\n", at[j], bounds, i, bt);
    }
    e->rows = true;
    e->row_lo = at[0];
    e->row_hi = at[1];
    e->row_nest = e->num_nests;
    for (q = op; !st; q = q->next) {
      const cpu_step_t *s = cpu_plan_step(e->plan, q);
      if (s && s->row_kernel) {
        e->cur_op = q;
        st = kernel_loops(e, q);
      }
      if (q == *last)
        break;
    }
    e->rows = false;
  }
  if (!st)
    task_mark(e, 2);
  if (e->dyn)
    cpu_gate_close(e);
  return st;
}

eddy_status_t cpu_emit_block(cpu_emit_t *e, eddy_block_t *b) {
  intptr_t k = 0;
  for (eddy_op_t *op = b->first; op; op = op->next, k++) {
    if (eddy_ir_op_has_trait(op, EDDY_TRAIT_TERMINATOR))
      break;
    const cpu_step_t *rs = cpu_plan_step(e->plan, op);
    if (rs && rs->row_kernel == 1) {
      intptr_t first = k;
      EDDY_RETURN_IF_ERROR(emit_row_run(e, op, &k, &op));
      for (intptr_t i = first; b == e->top && i <= k; i++)
        release_dead(e, i);
      continue;
    }
    const cpu_step_t *s = b == e->top ? rs : NULL;
    if (s && s->task == 1) {
      intptr_t first = k;
      EDDY_RETURN_IF_ERROR(emit_tasks(e, op, &k, &op));
      for (intptr_t i = first; i <= k; i++)
        release_dead(e, i);
      continue;
    }
    EDDY_RETURN_IF_ERROR(emit_op(e, op));
    if (b == e->top)
      release_dead(e, k);
  }
  return NULL;
}


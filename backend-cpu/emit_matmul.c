/// core.matmul in compiled code, in two size classes (docs/cpu.md, "matmul"):
///
/// - small: an inline loop nest. For each result row, a row of accumulators
///   gets acc[j] += a[i,k] * b[k,j] for k = 0..K-1, the loop over j
///   vectorized by LLVM; floats accumulate in f64 in order, so the result is
///   the evaluator's, bit for bit (ints wrap).
/// - large f32 (M*N*K of a call at least eddy_cpu_opts_t.matmul_call_min):
///   one call of eddy_rt_entry_sgemm_batch for a batch of matrices (the
///   runtime divides it among the threads), or one of eddy_rt_entry_sgemm
///   for the whole batch when B is one matrix and A not transposed, or per
///   matrix where the batch does not fit either (runtime/gemm.c:
///   OpenBLAS when libeddyrt has it, else eddy's tiled kernel), which
///   accumulates in f32 in an unspecified order, as the relaxed contract for
///   f32 matmul allows (docs/dialects/core.md).
///
/// Both classes here take static sizes (cpu_mm_shape); a matmul with `?` dims
/// is an inline loop nest over its run-time sizes (cpu_matmul_dyn,
/// emit_shape.c), which in host code, for f32, is the else branch of a
/// run-time test that calls sgemm above the same threshold
/// (cpu_matmul_dyn_call_open); so is a small matmul in the GPU target's
/// kernels forms (one accumulator per element; large f32 ones call cuBLAS
/// there).
#include "backend-cpu/emit_internal.h"

#include <string.h>

static int mm_op2(cpu_emit_t *e, const char *name, int a, int b,
                  const char *ty) {
  int t = cpu_fresh(e);
  cpu_p(e, "%%t%d = %s %%t%d, %%t%d : %s\n", t, name, a, b, ty);
  return t;
}

static int mm_zero(cpu_emit_t *e, const char *ty, bool fl) {
  int t = cpu_fresh(e);
  if (strcmp(ty, "i1") == 0)
    cpu_p(e, "%%t%d = arith.constant false\n", t);
  else
    cpu_p(e, "%%t%d = arith.constant %s : %s\n", t, fl ? "0.0" : "0", ty);
  return t;
}

static int mm_i64(cpu_emit_t *e, int64_t v) {
  int t = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.constant %lld : i64\n", t, (long long)v);
  return t;
}

/// One matrix B for the whole batch (its batch dims, if any, all 1) and A
/// not transposed, with A's batch dims those of the result: A's matrices
/// are the consecutive row blocks of one [batch*M, K] matrix and C's those
/// of one [batch*M, N], so one product does the whole batch (gemm-hoist
/// makes such matmuls: docs/passes.md). (cpu_mm_shape's rows_fold.)
static bool mm_rows_fold(const eddy_op_t *op) {
  cpu_mm_shape_t d;
  cpu_mm_shape(op, &d);
  return d.rows_fold;
}

/// Index of a matmul operand from the result's batch index (numpy
/// broadcasting of batch dims, aligned at the right) and its two matrix
/// indices.
static void mm_index(cpu_emit_t *e, const eddy_type_t *ot,
                     const eddy_type_t *rt, const int *oidx, int row, int col,
                     int *idx) {
  for (int32_t j = 0; j < ot->rank - 2; j++) {
    int32_t rj = j + (rt->rank - ot->rank);
    idx[j] = ot->dims[j] == 1 && rt->dims[rj] != 1 ? cpu_index_const(e, 0)
                                                   : oidx[rj];
  }
  idx[ot->rank - 2] = row;
  idx[ot->rank - 1] = col;
}

/// The inline kernel (small matmuls, and every dtype but f32 above the
/// threshold).
static eddy_status_t mm_inline(cpu_emit_t *e, eddy_op_t *op) {
  eddy_value_t *a = eddy_ir_op_operand(op, 0), *b = eddy_ir_op_operand(op, 1);
  const eddy_type_t *at = a->type, *bt = b->type, *rt = op->results[0].type;
  cpu_val_t *rv = cpu_val_get(e, &op->results[0]);
  bool ta = eddy_ir_op_attr_bool(op, "transpose_a", false);
  int32_t r = rt->rank;
  cpu_mm_shape_t d;
  cpu_mm_shape(op, &d);
  int64_t n = d.n, k = d.k;
  eddy_dtype_t dt = rt->dtype;
  bool fl = eddy_dtype_is_float(dt);
  eddy_dtype_t acc_dt = fl ? EDDY_DT_F64 : dt;
  const char *acc_t = cpu_reg_type(acc_dt);
  const eddy_type_t *acc_ty = eddy_ir_tensor_type_get(e->ctx, acc_dt, 1, &n);
  int acc = cpu_alloc_buf(e, acc_ty);
  // transpose_b: b is copied transposed into a scratch buffer first (K*N
  // moves against M*N*K multiply-adds), so the inner loop reads rows.
  bool tb = eddy_ir_op_attr_bool(op, "transpose_b", false);
  const eddy_type_t *bty = bt;
  int bbuf = -1;
  if (tb) {
    int64_t dd[EDDY_RT_MAX_RANK];
    memcpy(dd, bt->dims, sizeof(int64_t) * (size_t)bt->rank);
    dd[bt->rank - 2] = bt->dims[bt->rank - 1];
    dd[bt->rank - 1] = bt->dims[bt->rank - 2];
    bty = eddy_ir_tensor_type_get(e->ctx, bt->dtype, bt->rank, dd);
    bbuf = cpu_alloc_buf(e, bty);
    int tidx[EDDY_RT_MAX_RANK], sidx[EDDY_RT_MAX_RANK], v;
    cpu_loops_open(e, bty->rank, bty->dims, tidx);
    memcpy(sidx, tidx, sizeof(int) * (size_t)bty->rank);
    sidx[bty->rank - 2] = tidx[bty->rank - 1];
    sidx[bty->rank - 1] = tidx[bty->rank - 2];
    EDDY_RETURN_IF_ERROR(cpu_expr(e, b, sidx, &v));
    cpu_store(e, bbuf, bty, tidx, v);
    cpu_loops_close(e, bty->rank);
  }
  int oidx[EDDY_RT_MAX_RANK], j[1];
  cpu_loops_open(e, r - 1, rt->dims, oidx);
  cpu_loops_open(e, 1, &n, j);
  cpu_store(e, acc, acc_ty, j, mm_zero(e, acc_t, fl));
  cpu_loops_close(e, 1);
  int kv[1];
  cpu_loops_open(e, 1, &k, kv);
  int aidx[EDDY_RT_MAX_RANK], bidx[EDDY_RT_MAX_RANK], x, y;
  mm_index(e, at, rt, oidx, ta ? kv[0] : oidx[r - 2], ta ? oidx[r - 2] : kv[0],
           aidx);
  EDDY_RETURN_IF_ERROR(cpu_expr(e, a, aidx, &x));
  if (fl && dt != EDDY_DT_F64)
    x = cpu_float_widen(e, dt, "f64", x);
  cpu_loops_open(e, 1, &n, j);
  mm_index(e, bty, rt, oidx, kv[0], j[0], bidx);
  if (tb)
    y = cpu_load(e, bbuf, bty, bidx);
  else
    EDDY_RETURN_IF_ERROR(cpu_expr(e, b, bidx, &y));
  if (fl && dt != EDDY_DT_F64)
    y = cpu_float_widen(e, dt, "f64", y);
  int cur = cpu_load(e, acc, acc_ty, j);
  int p = mm_op2(e, fl ? "arith.mulf" : "arith.muli", x, y, acc_t);
  cpu_store(e, acc, acc_ty, j,
            mm_op2(e, fl ? "arith.addf" : "arith.addi", cur, p, acc_t));
  cpu_loops_close(e, 2);
  cpu_loops_open(e, 1, &n, j);
  int v = cpu_load(e, acc, acc_ty, j);
  if (fl)
    v = cpu_float_narrow(e, "f64", dt, v);
  oidx[r - 1] = j[0];
  cpu_store(e, rv->buf, rt, oidx, v);
  cpu_loops_close(e, 1 + (r - 1));
  return NULL;
}

/// %tN = the data pointer of buffer buf (static type t) as an i64.
static int mm_buf_addr(cpu_emit_t *e, int buf, const eddy_type_t *t) {
  int i = cpu_fresh(e), j = cpu_fresh(e);
  cpu_p(e,
        "%%t%d = memref.extract_aligned_pointer_as_index %%t%d : %s -> "
        "index\n",
        i, buf, cpu_mtype(e, t));
  cpu_p(e, "%%t%d = arith.index_cast %%t%d : index to i64\n", j, i);
  return j;
}

/// The buffer of operand x (a value that is not materialized, such as a
/// splat constant, is copied into a fresh one first).
static eddy_status_t mm_operand_buf(cpu_emit_t *e, const eddy_op_t *op,
                                    eddy_value_t *x, int *out) {
  EDDY_RETURN_IF_ERROR(cpu_check_type(op, x->type));
  int buf = cpu_val_get(e, x)->buf;
  if (buf < 0) {
    buf = cpu_alloc_buf(e, x->type);
    EDDY_RETURN_IF_ERROR(cpu_copy_value(e, x, buf, x->type));
  }
  *out = buf;
  return NULL;
}

/// !llvm.ptr from an i64 address.
static int mm_ptr(cpu_emit_t *e, int addr) {
  int p = cpu_fresh(e);
  cpu_p(e, "%%t%d = llvm.inttoptr %%t%d : i64 to !llvm.ptr\n", p, addr);
  return p;
}

/// !llvm.ptr to the matrix of operand type ot at the result's batch index
/// oidx (broadcast batch dims read matrix 0), from the i64 base address.
static int mm_matrix_ptr(cpu_emit_t *e, int base, const eddy_type_t *ot,
                         const eddy_type_t *rt, const int *oidx) {
  int64_t stride = ot->dims[ot->rank - 1] * ot->dims[ot->rank - 2];
  int off = -1;
  for (int32_t j = ot->rank - 3; j >= 0; j--) {
    int32_t rj = j + (rt->rank - ot->rank);
    if (ot->dims[j] != 1) {
      int ix = cpu_fresh(e);
      cpu_p(e, "%%t%d = arith.index_cast %%t%d : index to i64\n", ix,
            oidx[rj]);
      int term = mm_op2(e, "arith.muli", ix, mm_i64(e, stride * 4), "i64");
      off = off < 0 ? term : mm_op2(e, "arith.addi", off, term, "i64");
    }
    stride *= ot->dims[j];
  }
  return mm_ptr(e, off < 0 ? base
                          : mm_op2(e, "arith.addi", base, off, "i64"));
}

/// The distance in elements between the matrices of operand type ot for
/// consecutive matrices of the result rt, when it is one number: 0 when ot
/// has one matrix (its batch dims all 1), a matrix's size when its batch
/// dims are the result's. False for a partial broadcast ([2, 1] against
/// [2, 3]), which the loop of calls handles.
static bool mm_batch_stride(const eddy_type_t *ot, const eddy_type_t *rt,
                            int64_t *stride) {
  bool one = true, same = true;
  for (int32_t j = 0; j < rt->rank - 2; j++) {
    int32_t oj = j - (rt->rank - ot->rank);
    int64_t od = oj >= 0 ? ot->dims[oj] : 1;
    one &= od == 1;
    same &= od == rt->dims[j];
  }
  *stride = one ? 0 : ot->dims[ot->rank - 1] * ot->dims[ot->rank - 2];
  return one || same;
}

/// The runtime call (large f32): eddy_rt_entry_sgemm once per matrix of the
/// result's batch (once in all when mm_rows_fold; one
/// eddy_rt_entry_sgemm_batch call for a batch mm_batch_stride fits), into
/// buffer cbuf,
/// transposes passed on as flags; `accumulate` adds the product to what
/// cbuf holds.
static eddy_status_t mm_call(cpu_emit_t *e, eddy_op_t *op, int cbuf,
                             bool accumulate) {
  eddy_value_t *a = eddy_ir_op_operand(op, 0), *b = eddy_ir_op_operand(op, 1);
  const eddy_type_t *at = a->type, *bt = b->type, *rt = op->results[0].type;
  bool ta = eddy_ir_op_attr_bool(op, "transpose_a", false);
  bool tb = eddy_ir_op_attr_bool(op, "transpose_b", false);
  cpu_mm_shape_t d;
  cpu_mm_shape(op, &d);
  int abuf, bbuf;
  EDDY_RETURN_IF_ERROR(mm_operand_buf(e, op, a, &abuf));
  EDDY_RETURN_IF_ERROR(mm_operand_buf(e, op, b, &bbuf));
  int abase = mm_buf_addr(e, abuf, at), bbase = mm_buf_addr(e, bbuf, bt);
  int cbase = mm_buf_addr(e, cbuf, rt);
  int flags = cpu_fresh(e);
  bool tf32 = e->tgt->device_memory && e->opts->matmul_tf32;
  cpu_p(e, "%%t%d = arith.constant %d : i32\n", flags,
        (ta ? EDDY_RT_SGEMM_TRANS_A : 0) | (tb ? EDDY_RT_SGEMM_TRANS_B : 0) |
            (tf32 ? EDDY_RT_SGEMM_TF32 : 0) |
            (accumulate ? EDDY_RT_SGEMM_ACCUMULATE : 0));
  bool fold = mm_rows_fold(op);
  int m = mm_i64(e, fold ? d.batch * d.m : d.m), n = mm_i64(e, d.n),
      k = mm_i64(e, d.k);
  int lda = mm_i64(e, at->dims[at->rank - 1]);
  int ldb = mm_i64(e, bt->dims[bt->rank - 1]);
  int32_t loops = fold ? 0 : rt->rank - 2;
  int64_t sa, sb;
  const cpu_step_t *step = cpu_plan_step(e->plan, op);
  if (!fold && d.batch > 1 && !e->tgt->device_memory &&
      !(step && step->gemm_cache && e->gemm_caches >= 0) &&
      mm_batch_stride(at, rt, &sa) && mm_batch_stride(bt, rt, &sb)) {
    cpu_p(e,
          "func.call @eddy_rt_entry_sgemm_batch(%%rt, %%t%d, %%t%d, %%t%d, "
          "%%t%d, %%t%d, %%t%d, %%t%d, %%t%d, %%t%d, %%t%d, %%t%d, %%t%d, "
          "%%t%d, %%t%d) : (!llvm.ptr, i32, i64, i64, i64, i64, !llvm.ptr, "
          "i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64) -> ()\n",
          flags, mm_i64(e, d.batch), m, n, k, mm_ptr(e, abase), lda,
          mm_i64(e, sa), mm_ptr(e, bbase), ldb, mm_i64(e, sb), mm_ptr(e, cbase),
          n, mm_i64(e, d.m * d.n));
    return NULL;
  }
  int oidx[EDDY_RT_MAX_RANK];
  cpu_host_loops_open(e, loops, rt->dims, oidx);
  int pa = fold ? mm_ptr(e, abase) : mm_matrix_ptr(e, abase, at, rt, oidx);
  int pb = fold ? mm_ptr(e, bbase) : mm_matrix_ptr(e, bbase, bt, rt, oidx);
  int pc = fold ? mm_ptr(e, cbase) : mm_matrix_ptr(e, cbase, rt, rt, oidx);
  int cache = cpu_gemm_cache(e, op);
  if (cache >= 0)
    cpu_p(e,
          "func.call @eddy_rt_entry_sgemm_cached(%%rt, %%t%d, %%t%d, %%t%d, "
          "%%t%d, %%t%d, %%t%d, %%t%d, %%t%d, %%t%d, %%t%d, %%t%d) : "
          "(!llvm.ptr, !llvm.ptr, i32, i64, i64, i64, !llvm.ptr, i64, "
          "!llvm.ptr, i64, !llvm.ptr, i64) -> ()\n",
          cache, flags, m, n, k, pa, lda, pb, ldb, pc, n);
  else
    cpu_p(e,
          "func.call @eddy_rt_entry_%ssgemm(%%rt, %%t%d, %%t%d, %%t%d, %%t%d, "
          "%%t%d, %%t%d, %%t%d, %%t%d, %%t%d, %%t%d) : (!llvm.ptr, i32, i64, "
          "i64, i64, !llvm.ptr, i64, !llvm.ptr, i64, !llvm.ptr, i64) -> ()\n",
          e->tgt->mem, flags, m, n, k, pa, lda, pb, ldb, pc, n);
  cpu_loops_close(e, loops);
  return NULL;
}

/// Each cache is an eddy_rt_gemm_cache_t: 64 bytes.
#define CPU_GEMM_CACHE_BYTES 64

void cpu_gemm_caches_open(cpu_emit_t *e) {
  e->gemm_caches = -1;
  int32_t n = e->plan->num_gemm_caches;
  if (n <= 0)
    return;
  eddy_buf_t body = e->body;
  e->body = e->pro;
  int bytes = cpu_fresh(e), num = cpu_fresh(e), p = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.constant %d : i64\n", bytes,
        (int)n * CPU_GEMM_CACHE_BYTES);
  cpu_p(e, "%%t%d = arith.constant %d : i64\n", num, (int)n);
  cpu_p(e,
        "%%t%d = llvm.alloca %%t%d x i8 {alignment = 8 : i64} : (i64) -> "
        "!llvm.ptr\n",
        p, bytes);
  cpu_p(e,
        "func.call @eddy_rt_entry_gemm_caches_init(%%t%d, %%t%d) : "
        "(!llvm.ptr, i64) -> ()\n",
        p, num);
  e->pro = e->body;
  e->body = body;
  eddy_buf_printf(&e->epi,
                  "func.call @eddy_rt_entry_gemm_caches_release(%%rt, %%t%d, "
                  "%%t%d) : (!llvm.ptr, !llvm.ptr, i64) -> ()\n",
                  p, num);
  e->gemm_caches = p;
}

/// The address of cache i (0-based).
static int gemm_cache_ptr(cpu_emit_t *e, int32_t i) {
  int t = cpu_fresh(e);
  cpu_p(e,
        "%%t%d = llvm.getelementptr %%t%d[%d] : (!llvm.ptr) -> !llvm.ptr, "
        "i8\n",
        t, e->gemm_caches, (int)i * CPU_GEMM_CACHE_BYTES);
  return t;
}

int cpu_gemm_cache(cpu_emit_t *e, const eddy_op_t *op) {
  const cpu_step_t *s = cpu_plan_step(e->plan, op);
  if (!s || !s->gemm_cache || e->gemm_caches < 0)
    return -1;
  return gemm_cache_ptr(e, s->gemm_cache - 1);
}

void cpu_gemm_caches_reset(cpu_emit_t *e, const eddy_op_t *op) {
  if (e->gemm_caches < 0)
    return;
  for (int32_t i = 0; i < e->plan->num_gemm_caches; i++)
    if (e->plan->cache_loops[i] == op)
      cpu_p(e,
            "func.call @eddy_rt_entry_gemm_cache_reset(%%t%d) : (!llvm.ptr) "
            "-> ()\n",
            gemm_cache_ptr(e, i));
}

/// The data address (an i64) of a matmul operand or result with `?` dims
/// (or static) that is in memory, or -1 when it is computed inline.
static int mm_dyn_addr(cpu_emit_t *e, const eddy_value_t *v) {
  const cpu_val_t *cv = cpu_val_get(e, v);
  if (!cv || cv->fused || cv->splat)
    return -1;
  if (cv->buf >= 0)
    return mm_buf_addr(e, cv->buf, v->type);
  if (cv->pslot < 0)
    return -1;
  int p = cpu_fresh(e);
  cpu_p(e, "%%t%d = memref.load %%t%d[] : memref<i64>\n", p, cv->pslot);
  return p;
}

/// The index value %t<v> as an i64.
static int mm_index_i64(cpu_emit_t *e, int v) {
  int t = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.index_cast %%t%d : index to i64\n", t, v);
  return t;
}

bool cpu_matmul_dyn_call_open(cpu_emit_t *e, eddy_op_t *op, const int *ad,
                              const int *bd, const int *od) {
  eddy_value_t *a = eddy_ir_op_operand(op, 0), *b = eddy_ir_op_operand(op, 1);
  const eddy_type_t *at = a->type, *bt = b->type, *rt = op->results[0].type;
  const cpu_step_t *s = cpu_plan_step(e->plan, op);
  if (!s || !s->runtime_library)
    return false;
  int pa = mm_dyn_addr(e, a), pb = mm_dyn_addr(e, b),
      pc = mm_dyn_addr(e, &op->results[0]);
  if (pa < 0 || pb < 0 || pc < 0)
    return false;
  bool ta = eddy_ir_op_attr_bool(op, "transpose_a", false);
  bool tb = eddy_ir_op_attr_bool(op, "transpose_b", false);
  int32_t r = rt->rank;
  int m = od[r - 2];
  for (int32_t i = 0; i < r - 2; i++) // mm_rows_fold: the batch is rows
    m = mm_op2(e, "arith.muli", m, od[i], "index");
  int m64 = mm_index_i64(e, m), n64 = mm_index_i64(e, od[r - 1]);
  int k64 = mm_index_i64(e, ta ? ad[at->rank - 2] : ad[at->rank - 1]);
  int work = mm_op2(e, "arith.muli", mm_op2(e, "arith.muli", m64, n64, "i64"),
                    k64, "i64");
  int big = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.cmpi sge, %%t%d, %%t%d : i64\n", big, work,
        mm_i64(e, cpu_matmul_call_min(e->opts)));
  cpu_p(e, "scf.if %%t%d {\n", big);
  int trans = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.constant %d : i32\n", trans,
        (ta ? 1 : 0) | (tb ? 2 : 0));
  int lda = mm_index_i64(e, ad[at->rank - 1]);
  int ldb = mm_index_i64(e, bd[bt->rank - 1]);
  cpu_p(e,
        "func.call @eddy_rt_entry_sgemm(%%rt, %%t%d, %%t%d, %%t%d, %%t%d, "
        "%%t%d, %%t%d, %%t%d, %%t%d, %%t%d, %%t%d) : (!llvm.ptr, i32, i64, "
        "i64, i64, !llvm.ptr, i64, !llvm.ptr, i64, !llvm.ptr, i64) -> ()\n",
        trans, m64, n64, k64, mm_ptr(e, pa), lda, mm_ptr(e, pb), ldb,
        mm_ptr(e, pc), n64);
  cpu_p(e, "} else {\n");
  return true;
}

int64_t cpu_matmul_call_min(const eddy_cpu_opts_t *opts) {
  return opts && opts->matmul_call_min > 0 ? opts->matmul_call_min
                                           : CPU_MATMUL_CALL_MIN;
}

eddy_status_t cpu_matmul(cpu_emit_t *e, eddy_op_t *op) {
  // The size class is the plan's (plan.c).
  const cpu_step_t *s = cpu_plan_step(e->plan, op);
  if (s && s->kind == CPU_STEP_LIBRARY)
    return mm_call(e, op, cpu_val_get(e, &op->results[0])->buf, false);
  // The kernels forms: one thread per result element, accumulating over k
  // in order (the inline nest shares a row of accumulators).
  if (e->tgt->kernels)
    return cpu_matmul_dyn(e, op);
  return mm_inline(e, op);
}

eddy_status_t cpu_matmul_accumulate(cpu_emit_t *e, eddy_op_t *product,
                                    const eddy_op_t *add) {
  return mm_call(e, product, cpu_val_get(e, &add->results[0])->buf, true);
}

/// The loop-nest kernels of the indexing, scan and selection ops: reverse,
/// argmax/argmin, cumsum/cumprod, scatter (a scatter-add), topk and where,
/// after
/// the numeric contract of docs/dialects/core.md.
#include "backend-cpu/emit_elem.h"

#include <string.h>

/// result[i] = x[i with i_a replaced by dim_a - 1 - i_a for a in axes].
eddy_status_t cpu_kernel_reverse(cpu_emit_t *e, eddy_op_t *op) {
  eddy_value_t *in = eddy_ir_op_operand(op, 0);
  const eddy_type_t *rt = op->results[0].type;
  int64_t axes[EDDY_RT_MAX_RANK];
  const eddy_attr_t *aa = eddy_ir_op_attr(op, "axes");
  int64_t na = aa ? eddy_ir_attr_as_i64_array(aa, axes, EDDY_RT_MAX_RANK) : -1;
  if (na < 0 || na > EDDY_RT_MAX_RANK)
    return cpu_unsupported(op, "needs an 'axes' array");
  bool rev[EDDY_RT_MAX_RANK] = {false};
  for (int64_t i = 0; i < na; i++)
    rev[axes[i] < 0 ? axes[i] + rt->rank : axes[i]] = true;
  int d[EDDY_RT_MAX_RANK], oidx[EDDY_RT_MAX_RANK], iidx[EDDY_RT_MAX_RANK], x;
  EDDY_RETURN_IF_ERROR(dims_v(e, in, d));
  EDDY_RETURN_IF_ERROR(loops_over(e, &op->results[0], oidx));
  int one = cpu_index_const(e, 1);
  for (int32_t j = 0; j < rt->rank; j++)
    iidx[j] = rev[j] ? op2(e, "arith.subi",
                           op2(e, "arith.subi", d[j], one, "index"), oidx[j],
                           "index")
                     : oidx[j];
  EDDY_RETURN_IF_ERROR(cpu_expr(e, in, iidx, &x));
  cpu_store(e, cpu_val_get(e, &op->results[0])->buf, rt, oidx, x);
  cpu_loops_close(e, rt->rank);
  return NULL;
}

/// argmax / argmin: one scan of the axis per result element carrying the
/// best value and its index (-1 before the first element, so an empty axis
/// reads nothing; infer_dims reports it). NaN beats all but NaN; the first
/// of equals is kept (runtime/k_index.c).
eddy_status_t cpu_kernel_arg(cpu_emit_t *e, eddy_op_t *op) {
  eddy_value_t *in = eddy_ir_op_operand(op, 0);
  const eddy_type_t *it = in->type, *rt = op->results[0].type;
  bool mx = eddy_dialects_opcode(op) == EDDY_OP_CORE_ARGMAX;
  int64_t axis = eddy_ir_op_attr_int(op, "axis", 0);
  if (axis < 0)
    axis += it->rank;
  eddy_dtype_t dt = it->dtype;
  bool fl = eddy_dtype_is_float(dt);
  const char *ty = cpu_reg_type(dt);
  int d[EDDY_RT_MAX_RANK], oidx[EDDY_RT_MAX_RANK], iidx[EDDY_RT_MAX_RANK];
  EDDY_RETURN_IF_ERROR(dims_v(e, in, d));
  EDDY_RETURN_IF_ERROR(loops_over(e, &op->results[0], oidx));
  int init = fl ? cpu_fresh(e) : iconst(e, ty, 0);
  if (fl)
    cpu_p(e, "%%t%d = arith.constant 0.0 : %s\n", init, ty);
  int mone = iconst(e, "i64", -1);
  int k = cpu_fresh(e), b = cpu_fresh(e), bi = cpu_fresh(e), res = cpu_fresh(e);
  cpu_p(e,
        "%%t%d:2 = scf.for %%t%d = %%t%d to %%t%d step %%t%d iter_args(%%t%d = "
        "%%t%d, %%t%d = %%t%d) -> (%s, i64) {\n",
        res, k, cpu_index_const(e, 0), d[axis], cpu_index_const(e, 1), b, init,
        bi, mone, ty);
  for (int32_t j = 0, o = 0; j < it->rank; j++)
    iidx[j] = j == axis ? k : oidx[o++];
  int x;
  EDDY_RETURN_IF_ERROR(cpu_expr(e, in, iidx, &x));
  int first = cmp(e, "arith.cmpi", "eq", bi, mone, "i64");
  int better;
  if (fl) {
    const char *ct = calc_type(dt);
    int xv = to_calc(e, dt, x), bv = to_calc(e, dt, b);
    int bord = cmp(e, "arith.cmpf", "ord", bv, bv, ct);
    int xnan = cmp(e, "arith.cmpf", "uno", xv, xv, ct);
    int gt = cmp(e, "arith.cmpf", mx ? "ogt" : "olt", xv, bv, ct);
    better = op2(e, "arith.andi", bord, op2(e, "arith.ori", xnan, gt, "i1"),
                 "i1");
  } else {
    better = cmp(e, "arith.cmpi", mx ? "sgt" : "slt", x, b, ty);
  }
  better = op2(e, "arith.ori", first, better, "i1");
  int ki = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.index_cast %%t%d : index to i64\n", ki, k);
  int nb = sel(e, better, x, b, ty), nbi = sel(e, better, ki, bi, "i64");
  cpu_p(e, "scf.yield %%t%d, %%t%d : %s, i64\n}\n", nb, nbi, ty);
  int r = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.addi %%t%d#1, %%t%d : i64\n", r, res,
        iconst(e, "i64", 0));
  if (rt->dtype != EDDY_DT_I64) {
    int t = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.trunci %%t%d : i64 to %s\n", t, r,
          cpu_reg_type(rt->dtype));
    r = t;
  }
  cpu_store(e, cpu_val_get(e, &op->results[0])->buf, rt, oidx, r);
  cpu_loops_close(e, rt->rank);
  return NULL;
}

/// cumsum / cumprod: one sequential scan of the axis per position of the
/// other dims; floats accumulate in f64 and round each output, integers
/// wrap (runtime/k_index.c).
eddy_status_t cpu_kernel_cumulative(cpu_emit_t *e, eddy_op_t *op) {
  eddy_value_t *in = eddy_ir_op_operand(op, 0);
  const eddy_type_t *rt = op->results[0].type;
  bool prod = eddy_dialects_opcode(op) == EDDY_OP_CORE_CUMPROD;
  bool excl = eddy_ir_op_attr_bool(op, "exclusive", false);
  bool rev = eddy_ir_op_attr_bool(op, "reverse", false);
  int64_t axis = eddy_ir_op_attr_int(op, "axis", 0);
  if (axis < 0)
    axis += rt->rank;
  eddy_dtype_t dt = rt->dtype;
  bool fl = eddy_dtype_is_float(dt);
  const char *acc_t = fl ? "f64" : cpu_reg_type(dt);
  int d[EDDY_RT_MAX_RANK], od[EDDY_RT_MAX_RANK], oidx[EDDY_RT_MAX_RANK],
      iidx[EDDY_RT_MAX_RANK];
  EDDY_RETURN_IF_ERROR(dims_v(e, in, d));
  int32_t no = 0;
  for (int32_t j = 0; j < rt->rank; j++)
    if (j != axis)
      od[no++] = d[j];
  cpu_loops_open_v(e, no, od, oidx);
  int init = fl ? fconst(e, "f64", prod ? 1.0 : 0.0)
                : iconst(e, acc_t, prod ? 1 : 0);
  int k = cpu_fresh(e), acc = cpu_fresh(e), res = cpu_fresh(e);
  cpu_p(e,
        "%%t%d = scf.for %%t%d = %%t%d to %%t%d step %%t%d iter_args(%%t%d = "
        "%%t%d) -> (%s) {\n",
        res, k, cpu_index_const(e, 0), d[axis], cpu_index_const(e, 1), acc,
        init, acc_t);
  int p = k;
  if (rev)
    p = op2(e, "arith.subi",
            op2(e, "arith.subi", d[axis], cpu_index_const(e, 1), "index"), k,
            "index");
  for (int32_t j = 0, o = 0; j < rt->rank; j++)
    iidx[j] = j == axis ? p : oidx[o++];
  int x;
  EDDY_RETURN_IF_ERROR(cpu_expr(e, in, iidx, &x));
  if (fl)
    x = cpu_float_widen(e, dt, "f64", x);
  const char *name = fl ? (prod ? "arith.mulf" : "arith.addf")
                        : (prod ? "arith.muli" : "arith.addi");
  int nx = op2(e, name, acc, x, acc_t);
  int v = excl ? acc : nx;
  if (fl)
    v = cpu_float_narrow(e, "f64", dt, v);
  cpu_store(e, cpu_val_get(e, &op->results[0])->buf, rt, iidx, v);
  cpu_p(e, "scf.yield %%t%d : %s\n}\n", nx, acc_t);
  (void)res;
  cpu_loops_close(e, no);
  return NULL;
}

/// scatter: the result zeroed, then each update added at its index. The
/// adds run in parallel over the dims before and after the indexed ones
/// (one thread per position in the GPU target's kernels form); each
/// position adds its updates in index order, so every result element sums
/// in runtime/k_index.c's order and floats round the same, and duplicate
/// indices do not race. An index outside [0, size) is a run-time error;
/// nothing is then written for it.
eddy_status_t cpu_kernel_scatter(cpu_emit_t *e, eddy_op_t *op) {
  eddy_value_t *indices = eddy_ir_op_operand(op, 0);
  eddy_value_t *updates = eddy_ir_op_operand(op, 1);
  const eddy_type_t *it = indices->type, *ut = updates->type;
  const eddy_type_t *rt = op->results[0].type;
  int64_t axis = eddy_ir_op_attr_int(op, "axis", 0);
  int buf = cpu_val_get(e, &op->results[0])->buf;
  eddy_dtype_t dt = rt->dtype;
  const char *ty = cpu_reg_type(dt);
  bool fl = eddy_dtype_is_float(dt);
  int site = cpu_error_site(e, op);
  int oidx[EDDY_RT_MAX_RANK], rd[EDDY_RT_MAX_RANK], sz;
  // The size: the result's dim at axis (given by the size operand, it was
  // read on the host, before the kernels).
  if (rt->dims[axis] < 0) {
    EDDY_RETURN_IF_ERROR(dims_v(e, &op->results[0], rd));
    sz = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.index_cast %%t%d : index to i64\n", sz, rd[axis]);
  } else {
    sz = iconst(e, "i64", rt->dims[axis]);
  }
  EDDY_RETURN_IF_ERROR(loops_over(e, &op->results[0], oidx));
  int zero;
  if (fl) {
    zero = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.constant 0.0 : %s\n", zero, ty);
  } else {
    zero = iconst(e, ty, 0);
  }
  cpu_store(e, buf, rt, oidx, zero);
  cpu_loops_close(e, rt->rank);
  // One parallel position per element of the dims before and after the
  // indexed ones; each adds its updates in index order, the evaluator's
  // order for every result element.
  int ud[EDDY_RT_MAX_RANK], uidx[EDDY_RT_MAX_RANK], pd[EDDY_RT_MAX_RANK],
      pidx[EDDY_RT_MAX_RANK];
  EDDY_RETURN_IF_ERROR(dims_v(e, updates, ud));
  int32_t np = 0;
  for (int32_t d = 0; d < ut->rank; d++)
    if (d < axis || d >= axis + it->rank)
      pd[np++] = ud[d];
  cpu_loops_open_v(e, np, pd, pidx);
  int c0 = cpu_index_const(e, 0), c1 = cpu_index_const(e, 1);
  for (int32_t d = 0, k = 0; d < ut->rank; d++) {
    if (d < axis || d >= axis + it->rank) {
      uidx[d] = pidx[k++];
      continue;
    }
    uidx[d] = cpu_fresh(e);
    cpu_p(e, "scf.for %%t%d = %%t%d to %%t%d step %%t%d {\n", uidx[d], c0,
          ud[d], c1);
  }
  int iv;
  EDDY_RETURN_IF_ERROR(cpu_expr(e, indices, uidx + axis, &iv));
  if (it->dtype != EDDY_DT_I64) {
    int t = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.extsi %%t%d : %s to i64\n", t, iv,
          cpu_reg_type(it->dtype));
    iv = t;
  }
  int bad = op2(e, "arith.ori",
                cmp(e, "arith.cmpi", "slt", iv, iconst(e, "i64", 0), "i64"),
                cmp(e, "arith.cmpi", "sge", iv, sz, "i64"), "i1");
  cpu_fail_if(e, bad, site, iv, sz);
  int good = op2(e, "arith.xori", bad, iconst(e, "i1", 1), "i1");
  cpu_p(e, "scf.if %%t%d {\n", good);
  int ix = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.index_cast %%t%d : i64 to index\n", ix, iv);
  int ridx[EDDY_RT_MAX_RANK], r = 0;
  for (int32_t d = 0; d < axis; d++)
    ridx[r++] = uidx[d];
  ridx[r++] = ix;
  for (int32_t d = (int32_t)axis + it->rank; d < ut->rank; d++)
    ridx[r++] = uidx[d];
  int x, cur = cpu_load(e, buf, rt, ridx), sum;
  EDDY_RETURN_IF_ERROR(cpu_expr(e, updates, uidx, &x));
  if (fl) {
    const char *ct = calc_type(dt);
    sum = from_calc(e, dt,
                    op2(e, "arith.addf", to_calc(e, dt, cur), to_calc(e, dt, x),
                        ct));
  } else {
    sum = op2(e, "arith.addi", cur, x, ty);
  }
  cpu_store(e, buf, rt, ridx, sum);
  cpu_p(e, "}\n");
  for (int32_t d = 0; d < it->rank; d++)
    cpu_p(e, "}\n");
  cpu_loops_close(e, np);
  return NULL;
}

/// Result i of the multi-result op %t<m> as a plain value (a select on a
/// true constant: bit-exact for every type).
static int part(cpu_emit_t *e, int m, int i, const char *ty) {
  int t = iconst(e, "i1", 1), v = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.select %%t%d, %%t%d#%d, %%t%d#%d : %s\n", v, t, m, i,
        m, i, ty);
  return v;
}

/// a before b in topk's order (larger first, NaN largest, then the lower
/// index); a and b in register type ty of dtype dt, ia and ib i64.
static int topk_before(cpu_emit_t *e, eddy_dtype_t dt, int a, int ia, int b,
                       int ib) {
  int ilt = cmp(e, "arith.cmpi", "slt", ia, ib, "i64");
  if (!eddy_dtype_is_float(dt)) {
    const char *ty = cpu_reg_type(dt);
    int gt = cmp(e, "arith.cmpi", "sgt", a, b, ty);
    int eq = cmp(e, "arith.cmpi", "eq", a, b, ty);
    return op2(e, "arith.ori", gt, op2(e, "arith.andi", eq, ilt, "i1"), "i1");
  }
  const char *ct = calc_type(dt);
  int av = to_calc(e, dt, a), bv = to_calc(e, dt, b);
  int na = cmp(e, "arith.cmpf", "uno", av, av, ct);
  int nb = cmp(e, "arith.cmpf", "uno", bv, bv, ct);
  int gt = cmp(e, "arith.cmpf", "ogt", av, bv, ct);
  int eq = cmp(e, "arith.cmpf", "oeq", av, bv, ct);
  int num = op2(e, "arith.ori", gt, op2(e, "arith.andi", eq, ilt, "i1"), "i1");
  int same = sel(e, na, ilt, num, "i1");
  int differ = op2(e, "arith.xori", na, nb, "i1");
  return sel(e, differ, na, same, "i1");
}

/// topk: per row, k selection passes over the last dim, each taking the
/// first element in topk's order that comes after the one taken before
/// (runtime/k_index.c does the same).
eddy_status_t cpu_kernel_topk(cpu_emit_t *e, eddy_op_t *op) {
  eddy_value_t *in = eddy_ir_op_operand(op, 0);
  const eddy_type_t *it = in->type;
  const eddy_type_t *vt = op->results[0].type, *xt = op->results[1].type;
  int64_t k = eddy_ir_op_attr_int(op, "k", 0);
  eddy_dtype_t dt = it->dtype;
  const char *ty = cpu_reg_type(dt);
  int32_t rk = it->rank;
  int d[EDDY_RT_MAX_RANK], oidx[EDDY_RT_MAX_RANK], xidx[EDDY_RT_MAX_RANK];
  EDDY_RETURN_IF_ERROR(dims_v(e, in, d));
  cpu_loops_open_v(e, rk - 1, d, oidx);
  int c0 = cpu_index_const(e, 0), c1 = cpu_index_const(e, 1);
  int init = eddy_dtype_is_float(dt) ? cpu_fresh(e) : iconst(e, ty, 0);
  if (eddy_dtype_is_float(dt))
    cpu_p(e, "%%t%d = arith.constant 0.0 : %s\n", init, ty);
  int mone = iconst(e, "i64", -1);
  int r = cpu_fresh(e), pv = cpu_fresh(e), pi = cpu_fresh(e), ro = cpu_fresh(e);
  cpu_p(e,
        "%%t%d:2 = scf.for %%t%d = %%t%d to %%t%d step %%t%d iter_args(%%t%d = "
        "%%t%d, %%t%d = %%t%d) -> (%s, i64) {\n",
        ro, r, c0, cpu_index_const(e, k), c1, pv, init, pi, mone, ty);
  int j = cpu_fresh(e), bv = cpu_fresh(e), bi = cpu_fresh(e), jo = cpu_fresh(e);
  cpu_p(e,
        "%%t%d:2 = scf.for %%t%d = %%t%d to %%t%d step %%t%d iter_args(%%t%d = "
        "%%t%d, %%t%d = %%t%d) -> (%s, i64) {\n",
        jo, j, c0, d[rk - 1], c1, bv, init, bi, mone, ty);
  for (int32_t i = 0; i + 1 < rk; i++)
    xidx[i] = oidx[i];
  xidx[rk - 1] = j;
  int x;
  EDDY_RETURN_IF_ERROR(cpu_expr(e, in, xidx, &x));
  int ji = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.index_cast %%t%d : index to i64\n", ji, j);
  int none_p = cmp(e, "arith.cmpi", "slt", pi, iconst(e, "i64", 0), "i64");
  int none_b = cmp(e, "arith.cmpi", "slt", bi, iconst(e, "i64", 0), "i64");
  int after = op2(e, "arith.ori", none_p, topk_before(e, dt, pv, pi, x, ji),
                  "i1");
  int better = op2(e, "arith.ori", none_b, topk_before(e, dt, x, ji, bv, bi),
                   "i1");
  int take = op2(e, "arith.andi", after, better, "i1");
  int nbv = sel(e, take, x, bv, ty), nbi = sel(e, take, ji, bi, "i64");
  cpu_p(e, "scf.yield %%t%d, %%t%d : %s, i64\n}\n", nbv, nbi, ty);
  int val = part(e, jo, 0, ty), vi = part(e, jo, 1, "i64");
  int vbuf = cpu_val_get(e, &op->results[0])->buf;
  int ibuf = cpu_val_get(e, &op->results[1])->buf;
  for (int32_t i = 0; i + 1 < rk; i++)
    xidx[i] = oidx[i];
  xidx[rk - 1] = r;
  cpu_store(e, vbuf, vt, xidx, val);
  int v32 = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.trunci %%t%d : i64 to i32\n", v32, vi);
  cpu_store(e, ibuf, xt, xidx, v32);
  cpu_p(e, "scf.yield %%t%d, %%t%d : %s, i64\n}\n", val, vi, ty);
  cpu_loops_close(e, rk - 1);
  return NULL;
}

/// where: one sequential scan of x in row-major order (one thread in the GPU
/// target's kernels form: each row's position is the count before it)
/// carrying the number of nonzero elements seen; each one writes its
/// coordinates to that row. The result has as many rows as the count
/// operand says (infer_dims): rows past it are not written, and a count
/// that differs is a run-time error.
eddy_status_t cpu_kernel_where(cpu_emit_t *e, eddy_op_t *op) {
  eddy_value_t *in = eddy_ir_op_operand(op, 0);
  const eddy_type_t *it = in->type, *rt = op->results[0].type;
  eddy_dtype_t dt = it->dtype;
  int32_t rk = it->rank;
  int d[EDDY_RT_MAX_RANK], rd[2], iidx[EDDY_RT_MAX_RANK];
  EDDY_RETURN_IF_ERROR(dims_v(e, in, d));
  EDDY_RETURN_IF_ERROR(cpu_dims(e, &op->results[0], false, rd));
  int buf = cpu_val_get(e, &op->results[0])->buf;
  int site = cpu_dims_site(e, op,
                           "the count operand is not the number of nonzero "
                           "elements (count and number)");
  cpu_loops_open(e, 0, NULL, NULL);
  int c0 = cpu_index_const(e, 0), c1 = cpu_index_const(e, 1);
  int total = c1;
  for (int32_t j = 0; j < rk; j++)
    total = op2(e, "arith.muli", total, d[j], "index");
  int i = cpu_fresh(e), c = cpu_fresh(e), res = cpu_fresh(e);
  cpu_p(e,
        "%%t%d = scf.for %%t%d = %%t%d to %%t%d step %%t%d iter_args(%%t%d = "
        "%%t%d) -> (index) {\n",
        res, i, c0, total, c1, c, c0);
  int rest = i;
  for (int32_t j = rk - 1; j >= 0; j--) {
    iidx[j] = op2(e, "arith.remui", rest, d[j], "index");
    rest = op2(e, "arith.divui", rest, d[j], "index");
  }
  int x, nz;
  EDDY_RETURN_IF_ERROR(cpu_expr(e, in, iidx, &x));
  if (eddy_dtype_is_float(dt)) {
    const char *ct = calc_type(dt);
    nz = cmp(e, "arith.cmpf", "une", to_calc(e, dt, x), fconst(e, ct, 0.0),
             ct);
  } else {
    const char *ty = cpu_reg_type(dt);
    nz = cmp(e, "arith.cmpi", "ne", x, iconst(e, ty, 0), ty);
  }
  int room = cmp(e, "arith.cmpi", "ult", c, rd[0], "index");
  cpu_p(e, "scf.if %%t%d {\n", op2(e, "arith.andi", nz, room, "i1"));
  for (int32_t j = 0; j < rk; j++) {
    int v = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.index_cast %%t%d : index to i64\n", v, iidx[j]);
    int oidx[2] = {c, cpu_index_const(e, j)};
    cpu_store(e, buf, rt, oidx, v);
  }
  cpu_p(e, "}\n");
  int next = sel(e, nz, op2(e, "arith.addi", c, c1, "index"), c, "index");
  cpu_p(e, "scf.yield %%t%d : index\n}\n", next);
  cpu_fail_dims(e, cmp(e, "arith.cmpi", "ne", res, rd[0], "index"), site,
                rd[0], res);
  cpu_loops_close(e, 0);
  return NULL;
}

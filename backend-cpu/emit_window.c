/// The loop-nest kernels of the sliding-window ops: conv2d, its input and
/// filter gradients, max_pool, avg_pool and their gradients. One result
/// element per iteration of the loops over the result (a GPU thread in the
/// kernels forms), each a sum (or max) in f64 over its taps in the order
/// of runtime/k_window.c, rounded once; taps in the padding are skipped
/// inside an scf.if, so nothing outside the operands is read.
#include "backend-cpu/emit_elem.h"

#include "dialects/core/core.h"

typedef struct win {
  cpu_emit_t *e;
  eddy_core_window_t w;
  eddy_dtype_t dt;
  int in[2];  ///< spatial size of the windowed input (index values)
  int out[2]; ///< window positions per spatial dim (index values)
  int c0, c1;
} win_t;

static int idx_op(win_t *c, const char *name, int a, int b) {
  return op2(c->e, name, a, b, "index");
}

static int kconst(win_t *c, int64_t v) { return cpu_index_const(c->e, v); }

static int and1(win_t *c, int a, int b) {
  return op2(c->e, "arith.andi", a, b, "i1");
}

/// 0 <= i < n.
static int in_range(win_t *c, int i, int n) {
  return and1(c, cmp(c->e, "arith.cmpi", "sge", i, c->c0, "index"),
              cmp(c->e, "arith.cmpi", "slt", i, n, "index"));
}

/// The input coordinate of tap t at position p along dim j, and whether it
/// is inside the input.
static int tap(win_t *c, int j, int p, int t, int *ok) {
  int i = idx_op(c, "arith.subi",
                 idx_op(c, "arith.addi",
                        idx_op(c, "arith.muli", p, kconst(c, c->w.strides[j])),
                        idx_op(c, "arith.muli", t,
                               kconst(c, c->w.dilations[j]))),
                 kconst(c, c->w.pads[2 * j]));
  *ok = in_range(c, i, c->in[j]);
  return i;
}

/// The position whose tap t reads input coordinate i along dim j, and
/// whether there is one.
static int position(win_t *c, int j, int i, int t, int *ok) {
  int q = idx_op(c, "arith.subi",
                 idx_op(c, "arith.addi", i, kconst(c, c->w.pads[2 * j])),
                 idx_op(c, "arith.muli", t, kconst(c, c->w.dilations[j])));
  int s = kconst(c, c->w.strides[j]);
  int p = idx_op(c, "arith.divsi", q, s);
  int whole = cmp(c->e, "arith.cmpi", "eq", idx_op(c, "arith.remsi", q, s),
                  c->c0, "index");
  *ok = and1(c, and1(c, cmp(c->e, "arith.cmpi", "sge", q, c->c0, "index"),
                     whole),
             cmp(c->e, "arith.cmpi", "slt", p, c->out[j], "index"));
  return p;
}

/// v (of the operands' dtype) as f64, and back.
static int to_f64(win_t *c, int v) {
  return c->dt == EDDY_DT_F64 ? v : cpu_float_widen(c->e, c->dt, "f64", v);
}

static int from_f64(win_t *c, int v) {
  return c->dt == EDDY_DT_F64 ? v : cpu_float_narrow(c->e, "f64", c->dt, v);
}

/// Opens `for %iv = 0 to n` carrying one f64 (init); *acc is the carried
/// value inside. Returns the loop's result id; close with for_close.
static int for_open(win_t *c, int n, int init, int *iv, int *acc) {
  int r = cpu_fresh(c->e);
  *iv = cpu_fresh(c->e);
  *acc = cpu_fresh(c->e);
  cpu_p(c->e,
        "%%t%d = scf.for %%t%d = %%t%d to %%t%d step %%t%d iter_args(%%t%d = "
        "%%t%d) -> (f64) {\n",
        r, *iv, c->c0, n, c->c1, *acc, init);
  return r;
}

static void yield_f64(win_t *c, int v) {
  cpu_p(c->e, "scf.yield %%t%d : f64\n", v);
}

static void for_close(win_t *c, int v) {
  yield_f64(c, v);
  cpu_p(c->e, "}\n");
}

/// Opens `scf.if ok -> f64`: the then branch. if_else yields the then
/// value and opens the else branch; if_close yields the else value.
static int if_open(win_t *c, int ok) {
  int r = cpu_fresh(c->e);
  cpu_p(c->e, "%%t%d = scf.if %%t%d -> (f64) {\n", r, ok);
  return r;
}

static void if_else(win_t *c, int v) {
  yield_f64(c, v);
  cpu_p(c->e, "} else {\n");
}

static void if_close(win_t *c, int v) { for_close(c, v); }

/// operand v at (i0, i1, i2, i3) as f64.
static eddy_status_t load(win_t *c, eddy_value_t *v, int i0, int i1, int i2,
                          int i3, int *out) {
  int idx[4] = {i0, i1, i2, i3}, x;
  EDDY_RETURN_IF_ERROR(cpu_expr(c->e, v, idx, &x));
  *out = to_f64(c, x);
  return NULL;
}

static int fadd(win_t *c, int a, int b) {
  return op2(c->e, "arith.addf", a, b, "f64");
}

/// acc + a * b.
static int fma_(win_t *c, int acc, int a, int b) {
  return fadd(c, acc, op2(c->e, "arith.mulf", a, b, "f64"));
}

/// The number of input elements the window at (p0, p1) covers, as f64.
static int count(win_t *c, int p0, int p1) {
  int n[2];
  for (int j = 0; j < 2; j++) {
    int lo = idx_op(c, "arith.subi",
                    idx_op(c, "arith.muli", j ? p1 : p0,
                           kconst(c, c->w.strides[j])),
                    kconst(c, c->w.pads[2 * j]));
    int hi = idx_op(c, "arith.addi", lo, kconst(c, c->w.size[j]));
    n[j] = idx_op(c, "arith.subi", idx_op(c, "arith.minsi", hi, c->in[j]),
                  idx_op(c, "arith.maxsi", lo, c->c0));
  }
  int i = cpu_fresh(c->e), f = cpu_fresh(c->e);
  cpu_p(c->e, "%%t%d = arith.index_cast %%t%d : index to i64\n", i,
        idx_op(c, "arith.muli", n[0], n[1]));
  cpu_p(c->e, "%%t%d = arith.sitofp %%t%d : i64 to f64\n", f, i);
  return f;
}

/// The maximum of x's window at (p0, p1) over channel ch of batch element
/// bn, the first in tap order replaced only by a strictly larger one, as
/// f64 (-inf when the window covers no input element), and its tap
/// (*t0_out, *t1_out; -1 when none).
static eddy_status_t window_max(win_t *c, eddy_value_t *x, int bn, int p0,
                                int p1, int ch, int *out, int *t0_out,
                                int *t1_out) {
  cpu_emit_t *e = c->e;
  int ninf = fconst(e, "f64", -INFINITY), no = iconst(e, "i1", 0);
  int m1 = kconst(c, -1);
  int r = cpu_fresh(e), t0 = cpu_fresh(e), best = cpu_fresh(e),
      any = cpu_fresh(e), b0 = cpu_fresh(e), b1 = cpu_fresh(e);
  cpu_p(e,
        "%%t%d:4 = scf.for %%t%d = %%t%d to %%t%d step %%t%d iter_args(%%t%d "
        "= %%t%d, %%t%d = %%t%d, %%t%d = %%t%d, %%t%d = %%t%d) -> (f64, i1, "
        "index, index) {\n",
        r, t0, c->c0, kconst(c, c->w.size[0]), c->c1, best, ninf, any, no, b0,
        m1, b1, m1);
  int ok0, i0 = tap(c, 0, p0, t0, &ok0);
  int r1 = cpu_fresh(e), t1 = cpu_fresh(e), best1 = cpu_fresh(e),
      any1 = cpu_fresh(e), c0 = cpu_fresh(e), c1 = cpu_fresh(e);
  cpu_p(e,
        "%%t%d:4 = scf.for %%t%d = %%t%d to %%t%d step %%t%d iter_args(%%t%d "
        "= %%t%d, %%t%d = %%t%d, %%t%d = %%t%d, %%t%d = %%t%d) -> (f64, i1, "
        "index, index) {\n",
        r1, t1, c->c0, kconst(c, c->w.size[1]), c->c1, best1, best, any1, any,
        c0, b0, c1, b1);
  int ok1, i1 = tap(c, 1, p1, t1, &ok1);
  int ok = and1(c, ok0, ok1);
  int v = if_open(c, ok);
  int xv;
  EDDY_RETURN_IF_ERROR(load(c, x, bn, i0, i1, ch, &xv));
  if_else(c, xv);
  if_close(c, best1);
  int yes = iconst(e, "i1", 1);
  int first = cmp(e, "arith.cmpi", "eq", any1, no, "i1");
  int gt = cmp(e, "arith.cmpf", "ogt", v, best1, "f64");
  int take = and1(c, ok, op2(e, "arith.ori", first, gt, "i1"));
  cpu_p(e, "scf.yield %%t%d, %%t%d, %%t%d, %%t%d : f64, i1, index, index\n",
        sel(e, take, v, best1, "f64"),
        sel(e, ok, yes, any1, "i1"), sel(e, take, t0, c0, "index"),
        sel(e, take, t1, c1, "index"));
  cpu_p(e, "}\n");
  cpu_p(e, "scf.yield %%t%d#0, %%t%d#1, %%t%d#2, %%t%d#3 : f64, i1, index, "
           "index\n}\n",
        r1, r1, r1, r1);
  int res = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.addf %%t%d#0, %%t%d : f64\n", res, r,
        fconst(e, "f64", 0.0));
  *out = res;
  *t0_out = cpu_fresh(e);
  *t1_out = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.addi %%t%d#2, %%t%d : index\n", *t0_out, r, c->c0);
  cpu_p(e, "%%t%d = arith.addi %%t%d#3, %%t%d : index\n", *t1_out, r, c->c0);
  return NULL;
}

eddy_status_t cpu_kernel_window(cpu_emit_t *e, eddy_op_t *op) {
  win_t c = {.e = e};
  if (!eddy_core_window_get(op, &c.w))
    return cpu_unsupported(op, "is not a sliding-window op");
  eddy_opcode_t code = eddy_dialects_opcode(op);
  eddy_value_t *a = eddy_ir_op_operand(op, 0);
  eddy_value_t *b = op->num_operands > 1 ? eddy_ir_op_operand(op, 1) : NULL;
  eddy_value_t *res = &op->results[0];
  c.dt = a->type->dtype;
  c.c0 = cpu_index_const(e, 0);
  c.c1 = cpu_index_const(e, 1);
  int da[4], db[4], dr[4];
  EDDY_RETURN_IF_ERROR(dims_v(e, a, da));
  if (b)
    EDDY_RETURN_IF_ERROR(dims_v(e, b, db));
  EDDY_RETURN_IF_ERROR(dims_v(e, res, dr));
  // The windowed input's spatial dims and the window positions: from the
  // input and the result, or from the result (an input gradient) and the
  // adjoint operand.
  const int *in = da, *out = dr;
  if (code == EDDY_OP_CORE_CONV2D_INPUT_GRAD ||
      code == EDDY_OP_CORE_AVG_POOL_GRAD) {
    in = dr;
    out = da;
  } else if (code == EDDY_OP_CORE_CONV2D_FILTER_GRAD ||
             code == EDDY_OP_CORE_MAX_POOL_GRAD) {
    out = db;
  }
  for (int j = 0; j < 2; j++) {
    c.in[j] = in[1 + j];
    c.out[j] = out[1 + j];
  }
  int o[4];
  EDDY_RETURN_IF_ERROR(loops_over(e, res, o));
  int zero = fconst(e, "f64", 0.0), result = zero;
  int k0, k1, acc0, acc1, acc2, ok0, ok1, r0, r1, r2, x, y;
  switch (code) {
  case EDDY_OP_CORE_CONV2D:
  case EDDY_OP_CORE_CONV2D_INPUT_GRAD: {
    bool fwd = code == EDDY_OP_CORE_CONV2D;
    r0 = for_open(&c, kconst(&c, c.w.size[0]), zero, &k0, &acc0);
    int i0 = fwd ? tap(&c, 0, o[1], k0, &ok0) : position(&c, 0, o[1], k0, &ok0);
    r1 = for_open(&c, kconst(&c, c.w.size[1]), acc0, &k1, &acc1);
    int i1 = fwd ? tap(&c, 1, o[2], k1, &ok1) : position(&c, 1, o[2], k1, &ok1);
    int v = if_open(&c, and1(&c, ok0, ok1));
    int ch;
    // forward: channels of x; input gradient: outputs of the filter.
    r2 = for_open(&c, fwd ? da[3] : db[3], acc1, &ch, &acc2);
    EDDY_RETURN_IF_ERROR(load(&c, a, o[0], i0, i1, ch, &x));
    EDDY_RETURN_IF_ERROR(fwd ? load(&c, b, k0, k1, ch, o[3], &y)
                             : load(&c, b, k0, k1, o[3], ch, &y));
    for_close(&c, fma_(&c, acc2, x, y));
    if_else(&c, r2);
    if_close(&c, acc1);
    for_close(&c, v);
    for_close(&c, r1);
    result = r0;
    break;
  }
  case EDDY_OP_CORE_CONV2D_FILTER_GRAD: {
    int n, p0, p1;
    r0 = for_open(&c, da[0], zero, &n, &acc0);
    r1 = for_open(&c, c.out[0], acc0, &p0, &acc1);
    int i0 = tap(&c, 0, p0, o[0], &ok0);
    r2 = for_open(&c, c.out[1], acc1, &p1, &acc2);
    int i1 = tap(&c, 1, p1, o[1], &ok1);
    int v = if_open(&c, and1(&c, ok0, ok1));
    EDDY_RETURN_IF_ERROR(load(&c, a, n, i0, i1, o[2], &x));
    EDDY_RETURN_IF_ERROR(load(&c, b, n, p0, p1, o[3], &y));
    if_else(&c, fma_(&c, acc2, x, y));
    if_close(&c, acc2);
    for_close(&c, v);
    for_close(&c, r2);
    for_close(&c, r1);
    result = r0;
    break;
  }
  case EDDY_OP_CORE_MAX_POOL: {
    int t0, t1;
    EDDY_RETURN_IF_ERROR(
        window_max(&c, a, o[0], o[1], o[2], o[3], &result, &t0, &t1));
    if (!b)
      break;
    // The element of b at the maximum's tap (0 when there is none).
    int any = cmp(e, "arith.cmpi", "sge", t0, c.c0, "index");
    int v = if_open(&c, any);
    int ok;
    int i0 = tap(&c, 0, o[1], t0, &ok), i1 = tap(&c, 1, o[2], t1, &ok);
    EDDY_RETURN_IF_ERROR(load(&c, b, o[0], i0, i1, o[3], &y));
    if_else(&c, y);
    if_close(&c, zero);
    result = v;
    break;
  }
  case EDDY_OP_CORE_AVG_POOL: {
    r0 = for_open(&c, kconst(&c, c.w.size[0]), zero, &k0, &acc0);
    int i0 = tap(&c, 0, o[1], k0, &ok0);
    r1 = for_open(&c, kconst(&c, c.w.size[1]), acc0, &k1, &acc1);
    int i1 = tap(&c, 1, o[2], k1, &ok1);
    int v = if_open(&c, and1(&c, ok0, ok1));
    EDDY_RETURN_IF_ERROR(load(&c, a, o[0], i0, i1, o[3], &x));
    if_else(&c, fadd(&c, acc1, x));
    if_close(&c, acc1);
    for_close(&c, v);
    for_close(&c, r1);
    result = op2(e, "arith.divf", r0, count(&c, o[1], o[2]), "f64");
    break;
  }
  case EDDY_OP_CORE_MAX_POOL_GRAD:
  case EDDY_OP_CORE_AVG_POOL_GRAD: {
    bool avg = code == EDDY_OP_CORE_AVG_POOL_GRAD;
    eddy_value_t *dy = avg ? a : b;
    r0 = for_open(&c, kconst(&c, c.w.size[0]), zero, &k0, &acc0);
    int p0 = position(&c, 0, o[1], k0, &ok0);
    r1 = for_open(&c, kconst(&c, c.w.size[1]), acc0, &k1, &acc1);
    int p1 = position(&c, 1, o[2], k1, &ok1);
    int v = if_open(&c, and1(&c, ok0, ok1));
    EDDY_RETURN_IF_ERROR(load(&c, dy, o[0], p0, p1, o[3], &y));
    if (avg) {
      if_else(&c, fadd(&c, acc1,
                       op2(e, "arith.divf", y, count(&c, p0, p1), "f64")));
    } else {
      int m, t0, t1;
      EDDY_RETURN_IF_ERROR(
          window_max(&c, a, o[0], p0, p1, o[3], &m, &t0, &t1));
      int hit = and1(&c, cmp(e, "arith.cmpi", "eq", t0, k0, "index"),
                     cmp(e, "arith.cmpi", "eq", t1, k1, "index"));
      if_else(&c, sel(e, hit, fadd(&c, acc1, y), acc1, "f64"));
    }
    if_close(&c, acc1);
    for_close(&c, v);
    for_close(&c, r1);
    result = r0;
    break;
  }
  default:
    return cpu_unsupported(op, "is not a sliding-window op");
  }
  cpu_store(e, cpu_val_get(e, res)->buf, res->type, o, from_f64(&c, result));
  cpu_loops_close(e, 4);
  return NULL;
}

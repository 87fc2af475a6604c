/// Dynamic shapes in compiled code. A value whose type has `?` dims keeps
/// its data pointer and dims in stack slots (LLVM promotes them to
/// registers); a memref view is made from them wherever the value is read
/// or written. Each op's result dims are computed at run time from its
/// operands' dims by the shape rules of docs/dialects/core.md; where the
/// rules can fail (broadcasting 3 against 5, a contraction mismatch, a
/// reshape of the wrong element count) the check records a run-time error
/// naming the op, and no later op runs (every op is gated on the error
/// slot), so nothing is read or written out of bounds. Buffers of
/// dynamically shaped values come from eddy_rt_entry_alloc where the value
/// is computed and grow when a later iteration needs more; they are freed
/// at every exit.
#include "backend-cpu/emit_internal.h"

#include "dialects/core/core.h"
#include "runtime/scalar.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/// A dim during shape computation: a compile-time constant (c >= 0) or an
/// index value (%t<v>), with its symbol s (0: none; below).
typedef struct dimv {
  int v;
  int64_t c;
  int s;
} dimv_t;

static dimv_t dconst(int64_t c) { return (dimv_t){.v = -1, .c = c}; }

static dimv_t dvar(int v) { return (dimv_t){.v = v, .c = -1}; }

bool cpu_type_is_dynamic(const eddy_type_t *t) {
  if (!eddy_ir_type_is_tensor(t) || t->rank < 0)
    return false;
  for (int32_t i = 0; i < t->rank; i++)
    if (t->dims[i] < 0)
      return true;
  return false;
}

static const eddy_type_t *i64s(cpu_emit_t *e) {
  return eddy_ir_scalar_type_get(e->ctx, EDDY_DT_I64);
}

void cpu_dyn_init(cpu_emit_t *e, cpu_val_t *cv, const eddy_type_t *t,
                  bool owned) {
  cv->buf = -1;
  int64_t r = t->rank;
  const eddy_type_t *it = eddy_ir_tensor_type_get(e->ctx, EDDY_DT_I64, 1, &r);
  // i64 slots hold the dims (index and i64 are the same width here).
  cv->dslot = cpu_alloc_slot(e, it);
  cv->pslot = cpu_alloc_slot(e, i64s(e));
  cpu_zero_i64_in_prologue(e, cv->pslot);
  cv->cslot = -1;
  if (!owned)
    return;
  cv->cslot = cpu_alloc_slot(e, i64s(e));
  cpu_zero_i64_in_prologue(e, cv->cslot);
  // Freed at every exit (cpu_dyn_cleanup).
  cpu_val_t **list = eddy_arena_alloc(
      e->arena, sizeof(*list) * (size_t)(e->num_dyn_owned + 1));
  if (e->num_dyn_owned)
    memcpy(list, e->dyn_owned, sizeof(*list) * (size_t)e->num_dyn_owned);
  list[e->num_dyn_owned++] = cv;
  e->dyn_owned = list;
}

void cpu_dyn_cleanup(cpu_emit_t *e) {
  for (int i = 0; i < e->num_dyn_owned; i++) {
    const cpu_val_t *cv = e->dyn_owned[i];
    int p = cpu_load(e, cv->pslot, i64s(e), NULL);
    int c = cpu_load(e, cv->cslot, i64s(e), NULL);
    int q = cpu_fresh(e);
    cpu_p(e, "%%t%d = llvm.inttoptr %%t%d : i64 to !llvm.ptr\n", q, p);
    cpu_p(e,
          "func.call @eddy_rt_entry_%sfree(%%rt, %%t%d, %%t%d) : (!llvm.ptr, "
          "!llvm.ptr, i64) -> ()\n",
          e->tgt->mem, q, c);
  }
}

static int to_i64(cpu_emit_t *e, int idx) {
  int t = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.index_cast %%t%d : index to i64\n", t, idx);
  return t;
}

static int to_index(cpu_emit_t *e, int v) {
  int t = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.index_cast %%t%d : i64 to index\n", t, v);
  return t;
}

/// The run-time dims stored in cv's slot (static dims of t as constants).
static void slot_dims(cpu_emit_t *e, const cpu_val_t *cv, const eddy_type_t *t,
                      dimv_t *out) {
  int64_t r = t->rank;
  const eddy_type_t *it = eddy_ir_tensor_type_get(e->ctx, EDDY_DT_I64, 1, &r);
  for (int32_t d = 0; d < t->rank; d++) {
    if (t->dims[d] >= 0) {
      out[d] = dconst(t->dims[d]);
      continue;
    }
    int i = cpu_index_const(e, d);
    out[d] = dvar(to_index(e, cpu_load(e, cv->dslot, it, &i)));
  }
}

/// ---- dim symbols --------------------------------------------------------
/// Each `?` dim of a value has a symbol, and two dims with the same symbol
/// are equal at run time wherever both are read. An elementwise op's result
/// dim takes the symbol its operands' dims share there (dims of 1 aside);
/// every other `?` dim gets a symbol of its own: function and block
/// arguments, results of other ops. So the `?` batch dim of a chain of
/// elementwise ops is one symbol, and broadcasting within the chain needs
/// no check, and no select (dim == 1 ? 0 : i) per read. Symbols are kept
/// per IR value: a ctl.call inlined twice, or a loop body run again, reads
/// a symbol only among the values of one instance, where it holds.

/// Chains of operands deeper than this that have no symbols yet get new
/// ones (a safe answer) rather than recursing further.
enum { DIM_SYMS_DEPTH = 64 };

static const int *dim_syms_at(cpu_emit_t *e, eddy_value_t *v, int depth) {
  const eddy_type_t *t = v->type;
  if (!eddy_ir_type_is_tensor(t) || t->rank <= 0)
    return NULL;
  const int *known = eddy_ptrmap_get(&e->dim_syms, v);
  if (known)
    return known;
  int *s = eddy_arena_alloc(e->arena, sizeof(int) * (size_t)t->rank);
  eddy_op_t *op = v->def;
  bool elementwise = op && depth < DIM_SYMS_DEPTH &&
                     eddy_ir_op_has_trait(op, EDDY_TRAIT_ELEMENTWISE);
  for (int32_t d = 0; d < t->rank; d++) {
    s[d] = 0;
    if (t->dims[d] >= 0)
      continue;
    for (uint32_t k = 0; elementwise && k < op->num_operands; k++) {
      eddy_value_t *o = eddy_ir_op_operand(op, k);
      int32_t j = d - (t->rank - o->type->rank);
      if (!eddy_ir_type_is_tensor(o->type) || o->type->rank < 0 || j < 0 ||
          o->type->dims[j] == 1)
        continue;
      const int *os =
          o->type->dims[j] < 0 ? dim_syms_at(e, o, depth + 1) : NULL;
      if (!os || !os[j] || (s[d] && s[d] != os[j])) {
        s[d] = 0;
        break;
      }
      s[d] = os[j];
    }
    if (!s[d])
      s[d] = ++e->last_sym;
  }
  eddy_ptrmap_put(&e->dim_syms, v, s);
  return s;
}

/// The symbols of v's dims (0 for a static one; NULL for a scalar).
static const int *dim_syms(cpu_emit_t *e, eddy_value_t *v) {
  return dim_syms_at(e, v, 0);
}

bool cpu_dims_same(cpu_emit_t *e, eddy_value_t *a, int32_t i, eddy_value_t *b,
                   int32_t j) {
  if (a->type->dims[i] >= 0 || b->type->dims[j] >= 0)
    return false;
  const int *sa = dim_syms(e, a), *sb = dim_syms(e, b);
  return sa && sb && sa[i] && sa[i] == sb[j];
}

static int dim_ssa(cpu_emit_t *e, dimv_t d) {
  return d.c >= 0 ? cpu_index_const(e, d.c) : d.v;
}

/// ---- host code asked for inside a kernel --------------------------------
/// A dynamically shaped value's view and dims are read from host slots. In
/// the GPU target's forms, where a kernel needs them, the reads are emitted
/// before the kernel (the slots do not change while it runs) and the kernel
/// uses the results.

typedef struct hoist {
  bool on;
  eddy_buf_t body;
  int depth;
} hoist_t;

static hoist_t hoist_begin(cpu_emit_t *e) {
  hoist_t h = {false, {0}, 0};
  if (!e->tgt->kernels || e->kernel_depth == 0)
    return h;
  h.on = true;
  h.body = e->body;
  h.depth = e->kernel_depth;
  eddy_buf_init(&e->body);
  e->kernel_depth = 0;
  return h;
}

static void hoist_end(cpu_emit_t *e, hoist_t *h) {
  if (!h->on)
    return;
  // The host code before the open kernel gets the hoisted text.
  eddy_buf_append(&e->host, e->body.data ? e->body.data : "", e->body.len);
  eddy_buf_destroy(&e->body);
  e->body = h->body;
  e->kernel_depth = h->depth;
}

static int dyn_view(cpu_emit_t *e, const cpu_val_t *cv, const eddy_type_t *t);

int cpu_dyn_view(cpu_emit_t *e, const cpu_val_t *cv, const eddy_type_t *t) {
  hoist_t h = hoist_begin(e);
  int v = dyn_view(e, cv, t);
  hoist_end(e, &h);
  return v;
}

static int dyn_view(cpu_emit_t *e, const cpu_val_t *cv, const eddy_type_t *t) {
  dimv_t dv[EDDY_RT_MAX_RANK];
  int dims[EDDY_RT_MAX_RANK];
  slot_dims(e, cv, t, dv);
  for (int32_t d = 0; d < t->rank; d++)
    dims[d] = dim_ssa(e, dv[d]);
  int p = cpu_load(e, cv->pslot, i64s(e), NULL);
  int q = cpu_fresh(e);
  cpu_p(e, "%%t%d = llvm.inttoptr %%t%d : i64 to !llvm.ptr\n", q, p);
  return cpu_memref_from_ptr_v(e, q, t, dims);
}

int cpu_dims_site(cpu_emit_t *e, const eddy_op_t *op, const char *what) {
  int g = e->next_global++;
  eddy_buf_t loc;
  eddy_buf_init(&loc);
  eddy_ir_loc_format(op->loc, &loc);
  char tail[256];
  snprintf(tail, sizeof tail, ": '%s' op: %s", op->name->str, what);
  eddy_buf_printf(&e->globals,
                  "llvm.mlir.global internal constant @__eddy_site%d(\"", g);
  cpu_put_mlir_string(&e->globals, loc.data);
  cpu_put_mlir_string(&e->globals, tail);
  eddy_buf_printf(&e->globals, "\\00\") {addr_space = 0 : i32}\n");
  eddy_buf_destroy(&loc);
  int n = e->num_sites + 1;
  int *sites = eddy_arena_alloc(e->arena, sizeof(int) * (size_t)n);
  bool *kinds = eddy_arena_alloc(e->arena, sizeof(bool) * (size_t)n);
  if (e->num_sites) {
    memcpy(sites, e->site_globals, sizeof(int) * (size_t)e->num_sites);
    if (e->site_dims)
      memcpy(kinds, e->site_dims, sizeof(bool) * (size_t)e->num_sites);
  }
  sites[e->num_sites] = g;
  kinds[e->num_sites] = true;
  e->site_globals = sites;
  e->site_dims = kinds;
  return ++e->num_sites;
}

void cpu_fail_dims(cpu_emit_t *e, int cond, int site, int a, int b) {
  // cpu_fail_if stores the values: convert where the scf.if opens.
  int ai = to_i64(e, a), bi = to_i64(e, b);
  cpu_fail_if(e, cond, site, ai, bi);
}

static int icmp(cpu_emit_t *e, const char *pred, int a, int b) {
  int t = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.cmpi %s, %%t%d, %%t%d : index\n", t, pred, a, b);
  return t;
}

static int ibin(cpu_emit_t *e, const char *op, int a, int b, const char *ty) {
  int t = cpu_fresh(e);
  cpu_p(e, "%%t%d = %s %%t%d, %%t%d : %s\n", t, op, a, b, ty);
  return t;
}

/// The check "a == b" of a shape rule (nothing when both are constants).
static void check_eq(cpu_emit_t *e, bool check, const eddy_op_t *op,
                     const char *what, dimv_t a, dimv_t b) {
  if (!check || (a.c >= 0 && b.c >= 0))
    return;
  int av = dim_ssa(e, a), bv = dim_ssa(e, b);
  cpu_fail_dims(e, icmp(e, "ne", av, bv), cpu_dims_site(e, op, what), av, bv);
}

static dimv_t dmul(cpu_emit_t *e, dimv_t a, dimv_t b) {
  if (a.c >= 0 && b.c >= 0)
    return dconst(a.c * b.c);
  return dvar(ibin(e, "arith.muli", dim_ssa(e, a), dim_ssa(e, b), "index"));
}

static dimv_t dadd(cpu_emit_t *e, dimv_t a, dimv_t b) {
  if (a.c >= 0 && b.c >= 0)
    return dconst(a.c + b.c);
  return dvar(ibin(e, "arith.addi", dim_ssa(e, a), dim_ssa(e, b), "index"));
}

static eddy_status_t vdims(cpu_emit_t *e, eddy_value_t *v, bool check,
                           dimv_t *out);

/// One dim of numpy broadcasting: *cur (so far) with o. Constants decide at
/// compile time; otherwise a select at run time, after a check (when check)
/// that fails with `what` unless one side is 1 or they are equal.
static void bcast_dim(cpu_emit_t *e, const eddy_op_t *op, bool check,
                      const char *what, dimv_t *cur, dimv_t o) {
  if (o.c == 1 || (o.s && o.s == cur->s))
    return;
  if (cur->c == 1 || (o.c >= 0 && o.c == cur->c)) {
    *cur = o;
    return;
  }
  // One side dynamic (or constants that differ, which the verifier lets
  // through only for less refined types): decide at run time.
  int cv = dim_ssa(e, *cur), ov = dim_ssa(e, o);
  int one = cpu_index_const(e, 1);
  int o1 = icmp(e, "eq", ov, one);
  if (check) {
    int c1 = icmp(e, "ne", cv, one), ne = icmp(e, "ne", cv, ov);
    int o_not1 = icmp(e, "ne", ov, one);
    int neither1 = ibin(e, "arith.andi", c1, o_not1, "i1");
    int bad = ibin(e, "arith.andi", neither1, ne, "i1");
    cpu_fail_dims(e, bad, cpu_dims_site(e, op, what), cv, ov);
  }
  int s = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.select %%t%d, %%t%d, %%t%d : index\n", s, o1, cv,
        ov);
  *cur = dvar(s);
}

/// numpy broadcasting of the operands' dims into out (rank r).
static eddy_status_t bcast_dims(cpu_emit_t *e, eddy_op_t *op, int32_t r,
                                bool check, dimv_t *out) {
  for (int32_t d = 0; d < r; d++)
    out[d] = dconst(1);
  for (uint32_t k = 0; k < op->num_operands; k++) {
    eddy_value_t *v = eddy_ir_op_operand(op, k);
    dimv_t od[EDDY_RT_MAX_RANK];
    EDDY_RETURN_IF_ERROR(vdims(e, v, check, od));
    int32_t off = r - v->type->rank;
    for (int32_t j = 0; j < v->type->rank; j++) {
      char what[64];
      snprintf(what, sizeof what, "dimension %d cannot broadcast",
               (int)(j + off));
      bcast_dim(e, op, check, what, &out[j + off], od[j]);
    }
  }
  return NULL;
}

static int64_t norm_axis(int64_t a, int32_t rank) {
  return a < 0 ? a + rank : a;
}

static bool is_reduce(eddy_opcode_t code) {
  switch (code) {
  case EDDY_OP_CORE_REDUCE_SUM:
  case EDDY_OP_CORE_REDUCE_MEAN:
  case EDDY_OP_CORE_REDUCE_MAX:
  case EDDY_OP_CORE_REDUCE_MIN:
  case EDDY_OP_CORE_REDUCE_PROD:
    return true;
  default:
    return false;
  }
}

/// An i32 / i64 scalar operand dv that gives a dim at run time (reshape's
/// dim operands, scatter's size), as an index. core.dim of a value is that
/// value's dim as the host knows it, with no read (*is_dim); any other
/// value is read on the host (on the GPU target, copied from the device).
static eddy_status_t host_dim_operand(cpu_emit_t *e, eddy_value_t *dv,
                                      bool *is_dim, dimv_t *out) {
  *is_dim = false;
  if (dv->def && eddy_dialects_opcode(dv->def) == EDDY_OP_CORE_DIM) {
    eddy_value_t *u = eddy_ir_op_operand(dv->def, 0);
    int64_t ix = eddy_ir_op_attr_int(dv->def, "index", 0);
    dimv_t ud[EDDY_RT_MAX_RANK];
    if (ix < 0)
      ix += u->type->rank;
    if (u->type->rank >= 0 && ix >= 0 && ix < u->type->rank) {
      EDDY_RETURN_IF_ERROR(vdims(e, u, false, ud));
      *out = ud[ix];
      *is_dim = true;
      return NULL;
    }
  }
  int x, i64 = cpu_fresh(e);
  EDDY_RETURN_IF_ERROR(cpu_host_scalar(e, dv, &x));
  if (dv->type->dtype == EDDY_DT_I64)
    i64 = x;
  else
    cpu_p(e, "%%t%d = arith.extsi %%t%d : %s to i64\n", i64, x,
          cpu_reg_type(dv->type->dtype));
  *out = dvar(to_index(e, i64));
  return NULL;
}

/// core.reshape with dim operands: entry d of `shape` is static, or the
/// next dim operand's value, read on the host; one of those values may be
/// -1, inferred from the element count `total` (as without dim operands).
static eddy_status_t reshape_dim_operands(cpu_emit_t *e, eddy_op_t *op,
                                          const int64_t *shape, dimv_t total,
                                          bool check, dimv_t *out) {
  const eddy_type_t *rt = op->results[0].type;
  int zero = cpu_index_const(e, 0), one = cpu_index_const(e, 1);
  int neg1 = cpu_index_const(e, -1);
  dimv_t other = dconst(1);
  int num_infer = cpu_index_const(e, 0), val[EDDY_RT_MAX_RANK];
  bool is_op[EDDY_RT_MAX_RANK] = {false};
  uint32_t k = 1;
  for (int32_t d = 0; d < rt->rank; d++) {
    if (shape[d] >= 0) {
      out[d] = dconst(shape[d]);
      other = dmul(e, other, out[d]);
      continue;
    }
    if (k >= op->num_operands)
      return cpu_unsupported(op, "needs one dim operand per -1 of 'shape'");
    bool is_dim;
    dimv_t dd;
    EDDY_RETURN_IF_ERROR(
        host_dim_operand(e, eddy_ir_op_operand(op, k++), &is_dim, &dd));
    if (is_dim) {
      out[d] = dd;
      other = dmul(e, other, out[d]);
      continue;
    }
    int v = dd.v;
    if (check) {
      int bad = icmp(e, "slt", v, neg1);
      cpu_fail_dims(e, bad,
                    cpu_dims_site(e, op, "a dim operand is below -1"), v,
                    neg1);
    }
    int is_inf = icmp(e, "eq", v, neg1), s = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.select %%t%d, %%t%d, %%t%d : index\n", s, is_inf,
          one, v);
    int c = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.select %%t%d, %%t%d, %%t%d : index\n", c, is_inf,
          one, zero);
    num_infer = ibin(e, "arith.addi", num_infer, c, "index");
    other = dmul(e, other, dvar(s));
    val[d] = v;
    is_op[d] = true;
  }
  int tv = dim_ssa(e, total), ov = dim_ssa(e, other);
  int oz = icmp(e, "eq", ov, zero), safe = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.select %%t%d, %%t%d, %%t%d : index\n", safe, oz,
        one, ov);
  int q = ibin(e, "arith.divui", tv, safe, "index");
  dimv_t prod = dconst(1);
  for (int32_t d = 0; d < rt->rank; d++) {
    if (!is_op[d]) {
      prod = dmul(e, prod, out[d]);
      continue;
    }
    int s = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.select %%t%d, %%t%d, %%t%d : index\n", s,
          icmp(e, "eq", val[d], neg1), q, val[d]);
    out[d] = dvar(s);
    prod = dmul(e, prod, out[d]);
  }
  if (check) {
    cpu_fail_dims(e, icmp(e, "ugt", num_infer, one),
                  cpu_dims_site(e, op, "the dim operands hold -1 more than "
                                       "once"),
                  num_infer, one);
    cpu_fail_dims(e,
                  ibin(e, "arith.andi", icmp(e, "eq", num_infer, one), oz,
                       "i1"),
                  cpu_dims_site(e, op, "cannot infer the -1 entry (the "
                                       "other entries multiply to 0)"),
                  tv, ov);
    check_eq(e, check, op, "element counts differ", total, prod);
  }
  return NULL;
}

/// The inferred dims of result r of op (before its declared type is
/// applied).
static int fcmp(cpu_emit_t *e, const char *pred, int a, int b,
                const char *ty) {
  int t = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.cmp%c %s, %%t%d, %%t%d : %s\n", t,
        ty[0] == 'f' ? 'f' : 'i', pred, a, b, ty);
  return t;
}

/// core.range's length, read from its scalars on the host: ceil(|(limit -
/// start) / delta|) in f32 (f64 for f64), or in i64 for integers, as
/// eddy_rt_range computes it; with check, delta 0 or pointing away from
/// limit fails.
static eddy_status_t range_dims(cpu_emit_t *e, eddy_op_t *op, bool check,
                                dimv_t *out) {
  eddy_dtype_t dt = eddy_ir_op_operand(op, 0)->type->dtype;
  eddy_dtype_t wt = !eddy_dtype_is_float(dt) ? EDDY_DT_I64
                    : dt == EDDY_DT_F64      ? EDDY_DT_F64
                                             : EDDY_DT_F32;
  bool fl = wt != EDDY_DT_I64;
  const char *ws = cpu_reg_type(wt);
  int v[3];
  for (uint32_t i = 0; i < 3; i++) {
    int x;
    EDDY_RETURN_IF_ERROR(cpu_host_scalar(e, eddy_ir_op_operand(op, i), &x));
    v[i] = cpu_emit_cast(e, dt, wt, x);
  }
  int s = v[0], l = v[1], d = v[2];
  int zero = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.constant %s : %s\n", zero, fl ? "0.0" : "0", ws);
  const char *gt = fl ? "ogt" : "sgt", *lt = fl ? "olt" : "slt";
  int up = fcmp(e, gt, d, zero, ws), down = fcmp(e, lt, d, zero, ws);
  int bad = fcmp(e, fl ? "une" : "ne", d, d, ws); // NaN (never for ints)
  int b0 = ibin(e, "arith.andi", up, fcmp(e, gt, s, l, ws), "i1");
  int b1 = ibin(e, "arith.andi", down, fcmp(e, lt, s, l, ws), "i1");
  int nonzero = ibin(e, "arith.ori", up, down, "i1");
  int one1 = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.constant true\n", one1);
  bad = ibin(e, "arith.ori", bad, ibin(e, "arith.xori", nonzero, one1, "i1"),
             "i1");
  bad = ibin(e, "arith.ori", bad, ibin(e, "arith.ori", b0, b1, "i1"), "i1");
  if (fl) {
    bad = ibin(e, "arith.ori", bad, fcmp(e, "uno", s, l, ws), "i1");
  }
  int n64 = cpu_fresh(e);
  if (fl) {
    int q = ibin(e, "arith.divf", ibin(e, "arith.subf", l, s, ws), d, ws);
    int a = cpu_fresh(e), c = cpu_fresh(e);
    cpu_p(e, "%%t%d = math.absf %%t%d : %s\n", a, q, ws);
    cpu_p(e, "%%t%d = math.ceil %%t%d : %s\n", c, a, ws);
    int safe = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.select %%t%d, %%t%d, %%t%d : %s\n", safe, bad,
          zero, c, ws);
    cpu_p(e, "%%t%d = arith.fptosi %%t%d : %s to i64\n", n64, safe, ws);
  } else {
    int span_up = ibin(e, "arith.subi", l, s, "i64");
    int span_dn = ibin(e, "arith.subi", s, l, "i64");
    int neg_d = ibin(e, "arith.subi", zero, d, "i64");
    int span = cpu_fresh(e), step = cpu_fresh(e), one = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.select %%t%d, %%t%d, %%t%d : i64\n", span, up,
          span_up, span_dn);
    cpu_p(e, "%%t%d = arith.constant 1 : i64\n", one);
    int st0 = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.select %%t%d, %%t%d, %%t%d : i64\n", st0, up, d,
          neg_d);
    cpu_p(e, "%%t%d = arith.select %%t%d, %%t%d, %%t%d : i64\n", step, bad,
          one, st0);
    int sp = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.select %%t%d, %%t%d, %%t%d : i64\n", sp, bad,
          zero, span);
    int q = ibin(e, "arith.divui", sp, step, "i64");
    int r = ibin(e, "arith.remui", sp, step, "i64");
    int rz = fcmp(e, "ne", r, zero, "i64");
    int inc = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.extui %%t%d : i1 to i64\n", inc, rz);
    cpu_p(e, "%%t%d = arith.addi %%t%d, %%t%d : i64\n", n64, q, inc);
  }
  if (check) {
    int si = s, li = l;
    if (fl) {
      si = cpu_fresh(e);
      li = cpu_fresh(e);
      cpu_p(e, "%%t%d = arith.fptosi %%t%d : %s to i64\n", si, s, ws);
      cpu_p(e, "%%t%d = arith.fptosi %%t%d : %s to i64\n", li, l, ws);
    }
    cpu_fail_dims(e, bad,
                  cpu_dims_site(e, op,
                                "delta must be nonzero and point from start "
                                "towards limit (start and limit)"),
                  to_index(e, si), to_index(e, li));
  }
  out[0] = dvar(to_index(e, n64));
  return NULL;
}

/// The window positions along spatial dim j of an input dim n
/// (eddy_scalar_window_out); a padded input shorter than the window fails.
static dimv_t window_dim(cpu_emit_t *e, const eddy_op_t *op, bool check,
                         const eddy_core_window_t *w, int j, dimv_t n) {
  int64_t lo = w->pads[2 * j], hi = w->pads[2 * j + 1];
  int64_t eff = (w->size[j] - 1) * w->dilations[j] + 1;
  if (n.c >= 0)
    return dconst(eddy_scalar_window_out(n.c, lo, hi, w->size[j],
                                         w->dilations[j], w->strides[j]));
  int span = ibin(e, "arith.addi", n.v, cpu_index_const(e, lo + hi), "index");
  int effv = cpu_index_const(e, eff);
  if (check)
    cpu_fail_dims(e, icmp(e, "slt", span, effv),
                  cpu_dims_site(e, op,
                                "the padded input is shorter than the window "
                                "(size and window)"),
                  span, effv);
  int q = ibin(e, "arith.divsi", ibin(e, "arith.subi", span, effv, "index"),
               cpu_index_const(e, w->strides[j]), "index");
  return dvar(ibin(e, "arith.addi", q, cpu_index_const(e, 1), "index"));
}

/// The result dims of a sliding-window op (core_window.c's rules).
static eddy_status_t window_dims(cpu_emit_t *e, eddy_op_t *op, bool check,
                                 const eddy_core_window_t *w, const dimv_t *id,
                                 dimv_t *out) {
  eddy_opcode_t code = eddy_dialects_opcode(op);
  const eddy_type_t *rt = op->results[0].type;
  dimv_t bd[EDDY_RT_MAX_RANK];
  if (op->num_operands > 1)
    EDDY_RETURN_IF_ERROR(vdims(e, eddy_ir_op_operand(op, 1), check, bd));
  for (int32_t d = 0; d < 4; d++)
    out[d] = dconst(rt->dims[d]);
  switch (code) {
  case EDDY_OP_CORE_CONV2D:
  case EDDY_OP_CORE_MAX_POOL:
  case EDDY_OP_CORE_AVG_POOL:
    out[0] = id[0];
    out[1] = window_dim(e, op, check, w, 0, id[1]);
    out[2] = window_dim(e, op, check, w, 1, id[2]);
    if (code == EDDY_OP_CORE_CONV2D)
      check_eq(e, check, op, "the input's channels and the filter's differ",
               id[3], bd[2]);
    else
      out[3] = id[3];
    break;
  case EDDY_OP_CORE_MAX_POOL_GRAD:
    for (int32_t d = 0; d < 4; d++)
      out[d] = id[d];
    check_eq(e, check, op, "the input's batch and the adjoint's differ",
             id[0], bd[0]);
    break;
  case EDDY_OP_CORE_CONV2D_FILTER_GRAD:
    check_eq(e, check, op, "the input's batch and the adjoint's differ",
             id[0], bd[0]);
    break;
  default: // the input gradients: the batch of the adjoint operand
    out[0] = id[0];
    break;
  }
  return NULL;
}

static eddy_status_t infer_dims(cpu_emit_t *e, eddy_op_t *op, uint32_t r,
                                bool check, dimv_t *out) {
  const eddy_type_t *rt = op->results[r].type;
  // Elementwise ops read operand 0's dims once, in bcast_dims: reading them
  // here too would, down a chain of fused ops, double the work (and the
  // code) at every level.
  if (eddy_ir_op_has_trait(op, EDDY_TRAIT_ELEMENTWISE))
    return bcast_dims(e, op, rt->rank, check, out);
  eddy_value_t *in = op->num_operands ? eddy_ir_op_operand(op, 0) : NULL;
  dimv_t id[EDDY_RT_MAX_RANK];
  if (in && eddy_ir_type_is_tensor(in->type))
    EDDY_RETURN_IF_ERROR(vdims(e, in, check, id));
  eddy_opcode_t code = eddy_dialects_opcode(op);
  if (code == EDDY_OP_CORE_BROADCAST_TO) {
    int32_t off = rt->rank - in->type->rank;
    for (int32_t d = 0; d < rt->rank; d++)
      out[d] = dconst(rt->dims[d]);
    for (int32_t j = 0; j < in->type->rank; j++)
      if (id[j].c < 0 && check) {
        int iv = id[j].v, one = cpu_index_const(e, 1);
        int want = cpu_index_const(e, rt->dims[j + off]);
        int bad = ibin(e, "arith.andi", icmp(e, "ne", iv, one),
                       icmp(e, "ne", iv, want), "i1");
        char what[64];
        snprintf(what, sizeof what, "dimension %d cannot broadcast",
                 (int)(j + off));
        cpu_fail_dims(e, bad, cpu_dims_site(e, op, what), iv, want);
      }
    return NULL;
  }
  if (is_reduce(code)) {
    bool keep = eddy_ir_op_attr_bool(op, "keepdims", false);
    bool red[EDDY_RT_MAX_RANK] = {false};
    int64_t axes[EDDY_RT_MAX_RANK];
    const eddy_attr_t *ax = eddy_ir_op_attr(op, "axes");
    int64_t na = ax ? eddy_ir_attr_as_i64_array(ax, axes, EDDY_RT_MAX_RANK) : 0;
    for (int64_t i = 0; i < na; i++)
      red[norm_axis(axes[i], in->type->rank)] = true;
    int32_t o = 0;
    for (int32_t d = 0; d < in->type->rank; d++) {
      if (!red[d])
        out[o++] = id[d];
      else if (keep)
        out[o++] = dconst(1);
    }
    return NULL;
  }
  if (code == EDDY_OP_CORE_TRANSPOSE) {
    int64_t perm[EDDY_RT_MAX_RANK];
    const eddy_attr_t *pa = eddy_ir_op_attr(op, "perm");
    if (!pa ||
        eddy_ir_attr_as_i64_array(pa, perm, EDDY_RT_MAX_RANK) != rt->rank)
      return cpu_unsupported(op, "needs a 'perm' of the result's rank");
    for (int32_t d = 0; d < rt->rank; d++)
      out[d] = id[norm_axis(perm[d], rt->rank)];
    return NULL;
  }
  if (code == EDDY_OP_CORE_RESHAPE) {
    int64_t shape[EDDY_RT_MAX_RANK];
    const eddy_attr_t *sa = eddy_ir_op_attr(op, "shape");
    if (!sa ||
        eddy_ir_attr_as_i64_array(sa, shape, EDDY_RT_MAX_RANK) != rt->rank)
      return cpu_unsupported(op, "needs a 'shape' of the result's rank");
    dimv_t total = dconst(1), other = dconst(1);
    for (int32_t d = 0; d < in->type->rank; d++)
      total = dmul(e, total, id[d]);
    if (op->num_operands > 1)
      return reshape_dim_operands(e, op, shape, total, check, out);
    int32_t infer = -1;
    for (int32_t d = 0; d < rt->rank; d++) {
      if (shape[d] < 0) {
        infer = d;
        continue;
      }
      out[d] = dconst(shape[d]);
      other = dmul(e, other, out[d]);
    }
    if (infer < 0) {
      check_eq(e, check, op, "element counts differ", total, other);
      return NULL;
    }
    if (total.c >= 0 && other.c > 0) {
      out[infer] = dconst(total.c / other.c);
      return NULL;
    }
    int tv = dim_ssa(e, total), ov = dim_ssa(e, other);
    int zero = cpu_index_const(e, 0), one = cpu_index_const(e, 1);
    int oz = icmp(e, "eq", ov, zero);
    int safe = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.select %%t%d, %%t%d, %%t%d : index\n", safe, oz,
          one, ov);
    int q = ibin(e, "arith.divui", tv, safe, "index");
    if (check) {
      int rem = ibin(e, "arith.remui", tv, safe, "index");
      int bad = ibin(e, "arith.ori", oz, icmp(e, "ne", rem, zero), "i1");
      cpu_fail_dims(e, bad,
                    cpu_dims_site(e, op,
                                  "cannot infer the -1 entry (element count "
                                  "and product of the other entries)"),
                    tv, ov);
    }
    out[infer] = dvar(q);
    return NULL;
  }
  if (code == EDDY_OP_CORE_MATMUL) {
    eddy_value_t *b = eddy_ir_op_operand(op, 1);
    dimv_t bd[EDDY_RT_MAX_RANK];
    EDDY_RETURN_IF_ERROR(vdims(e, b, check, bd));
    bool ta = eddy_ir_op_attr_bool(op, "transpose_a", false);
    bool tb = eddy_ir_op_attr_bool(op, "transpose_b", false);
    int32_t ar = in->type->rank, br = b->type->rank;
    dimv_t m = ta ? id[ar - 1] : id[ar - 2], ka = ta ? id[ar - 2] : id[ar - 1];
    dimv_t kb = tb ? bd[br - 1] : bd[br - 2], nn = tb ? bd[br - 2] : bd[br - 1];
    check_eq(e, check, op, "contracting dimensions do not match", ka, kb);
    // Batch dims: numpy broadcasting of a[:-2] and b[:-2].
    int32_t R = rt->rank;
    for (int32_t d = 0; d < R - 2; d++)
      out[d] = dconst(1);
    for (int pass = 0; pass < 2; pass++) {
      const dimv_t *od = pass ? bd : id;
      int32_t orank = (pass ? br : ar) - 2;
      for (int32_t j = 0; j < orank; j++)
        bcast_dim(e, op, check, "batch dimensions cannot broadcast",
                  &out[j + (R - 2 - orank)], od[j]);
    }
    out[R - 2] = m;
    out[R - 1] = nn;
    return NULL;
  }
  if (code == EDDY_OP_CORE_SLICE) {
    int64_t start[EDDY_RT_MAX_RANK], limit[EDDY_RT_MAX_RANK];
    int32_t k = in->type->rank;
    const eddy_attr_t *sa = eddy_ir_op_attr(op, "start");
    const eddy_attr_t *la = eddy_ir_op_attr(op, "limit");
    if (!sa || !la || eddy_ir_attr_as_i64_array(sa, start, k) != k ||
        eddy_ir_attr_as_i64_array(la, limit, k) != k)
      return cpu_unsupported(op, "needs 'start' and 'limit' per dimension");
    for (int32_t d = 0; d < rt->rank; d++) {
      out[d] = dconst(rt->dims[d]);
      if (id[d].c < 0 && check) {
        int lim = cpu_index_const(e, limit[d]);
        char what[80];
        snprintf(what, sizeof what,
                 "slice limit of dimension %d is past its size (limit and "
                 "size)",
                 (int)d);
        cpu_fail_dims(e, icmp(e, "ugt", lim, id[d].v),
                      cpu_dims_site(e, op, what), lim, id[d].v);
      }
    }
    return NULL;
  }
  if (code == EDDY_OP_CORE_PAD) {
    int64_t low[EDDY_RT_MAX_RANK], high[EDDY_RT_MAX_RANK];
    int32_t k = in->type->rank;
    const eddy_attr_t *lo = eddy_ir_op_attr(op, "low");
    const eddy_attr_t *hi = eddy_ir_op_attr(op, "high");
    if (!lo || !hi || eddy_ir_attr_as_i64_array(lo, low, k) != k ||
        eddy_ir_attr_as_i64_array(hi, high, k) != k)
      return cpu_unsupported(op, "needs 'low' and 'high' per dimension");
    for (int32_t d = 0; d < k; d++)
      out[d] = dadd(e, id[d], dconst(low[d] + high[d]));
    return NULL;
  }
  if (code == EDDY_OP_CORE_CONCAT) {
    int64_t axis = norm_axis(eddy_ir_op_attr_int(op, "axis", 0), rt->rank);
    for (int32_t d = 0; d < rt->rank; d++)
      out[d] = id[d];
    for (uint32_t k = 1; k < op->num_operands; k++) {
      dimv_t od[EDDY_RT_MAX_RANK];
      EDDY_RETURN_IF_ERROR(
          vdims(e, eddy_ir_op_operand(op, k), check, od));
      for (int32_t d = 0; d < rt->rank; d++) {
        if (d == axis) {
          out[d] = dadd(e, out[d], od[d]);
          continue;
        }
        char what[64];
        snprintf(what, sizeof what, "operands differ in dimension %d", (int)d);
        check_eq(e, check, op, what, out[d], od[d]);
        if (out[d].c < 0 && od[d].c >= 0)
          out[d] = od[d];
      }
    }
    return NULL;
  }
  if (code == EDDY_OP_CORE_SPLIT) {
    int64_t axis =
        norm_axis(eddy_ir_op_attr_int(op, "axis", 0), in->type->rank);
    int64_t parts = eddy_ir_op_attr_int(op, "num_splits", 1);
    for (int32_t d = 0; d < rt->rank; d++)
      out[d] = id[d];
    if (id[axis].c >= 0) {
      out[axis] = dconst(id[axis].c / parts);
      return NULL;
    }
    int pv = cpu_index_const(e, parts);
    if (check) {
      int rem = ibin(e, "arith.remui", id[axis].v, pv, "index");
      int z = cpu_index_const(e, 0);
      cpu_fail_dims(e, icmp(e, "ne", rem, z),
                    cpu_dims_site(e, op,
                                  "dimension not divisible by num_splits "
                                  "(size and num_splits)"),
                    id[axis].v, pv);
    }
    out[axis] = dvar(ibin(e, "arith.divui", id[axis].v, pv, "index"));
    return NULL;
  }
  if (code == EDDY_OP_CORE_GATHER) {
    eddy_value_t *ix = eddy_ir_op_operand(op, 1);
    dimv_t xd[EDDY_RT_MAX_RANK];
    EDDY_RETURN_IF_ERROR(vdims(e, ix, check, xd));
    int64_t axis =
        norm_axis(eddy_ir_op_attr_int(op, "axis", 0), in->type->rank);
    int32_t o = 0;
    for (int32_t d = 0; d < in->type->rank; d++) {
      if (d != axis) {
        out[o++] = id[d];
        continue;
      }
      for (int32_t j = 0; j < ix->type->rank; j++)
        out[o++] = xd[j];
    }
    return NULL;
  }
  if (code == EDDY_OP_CORE_RANGE)
    return range_dims(e, op, check, out);
  if (code == EDDY_OP_CORE_WHERE) {
    // One row per nonzero element: the count operand, read on the host.
    int n;
    EDDY_RETURN_IF_ERROR(cpu_host_scalar(e, eddy_ir_op_operand(op, 1), &n));
    int v = to_index(e, n);
    if (check) {
      int z = cpu_index_const(e, 0);
      cpu_fail_dims(e, icmp(e, "slt", v, z),
                    cpu_dims_site(e, op, "the count is negative (count and 0)"),
                    v, z);
    }
    out[0] = dvar(v);
    out[1] = dconst(in->type->rank);
    return NULL;
  }
  if (code == EDDY_OP_CORE_REVERSE || code == EDDY_OP_CORE_CUMSUM ||
      code == EDDY_OP_CORE_CUMPROD) {
    for (int32_t d = 0; d < rt->rank; d++)
      out[d] = id[d];
    return NULL;
  }
  if (code == EDDY_OP_CORE_TOPK) {
    int32_t rk = in->type->rank;
    int64_t k = eddy_ir_op_attr_int(op, "k", 0);
    for (int32_t d = 0; d + 1 < rk; d++)
      out[d] = id[d];
    out[rk - 1] = dconst(k);
    if (check && id[rk - 1].c < 0) {
      int kv = cpu_index_const(e, k);
      cpu_fail_dims(e, icmp(e, "ult", id[rk - 1].v, kv),
                    cpu_dims_site(e, op,
                                  "the last dimension is smaller than k "
                                  "(size and k)"),
                    id[rk - 1].v, kv);
    }
    return NULL;
  }
  if (code == EDDY_OP_CORE_SCATTER) {
    eddy_value_t *u = eddy_ir_op_operand(op, 1);
    dimv_t ud[EDDY_RT_MAX_RANK];
    EDDY_RETURN_IF_ERROR(vdims(e, u, check, ud));
    int64_t axis = eddy_ir_op_attr_int(op, "axis", 0);
    int32_t ir = in->type->rank, o = 0;
    for (int32_t d = 0; d < axis; d++)
      out[o++] = ud[d];
    int64_t size = eddy_ir_op_attr_int(op, "size", 0);
    out[o] = dconst(size);
    if (size < 0 && op->num_operands > 2) {
      // The size operand, read on the host; a negative one fails.
      bool is_dim;
      EDDY_RETURN_IF_ERROR(
          host_dim_operand(e, eddy_ir_op_operand(op, 2), &is_dim, &out[o]));
      if (check && !is_dim) {
        int z = cpu_index_const(e, 0);
        cpu_fail_dims(e, icmp(e, "slt", out[o].v, z),
                      cpu_dims_site(e, op,
                                    "the size operand is negative "
                                    "(size and minimum 0)"),
                      out[o].v, z);
      }
    }
    o++;
    for (int32_t d = (int32_t)axis + ir; d < u->type->rank; d++)
      out[o++] = ud[d];
    for (int32_t j = 0; j < ir; j++) {
      char what[80];
      snprintf(what, sizeof what,
               "dimension %d of the indices and of the updates differ", (int)j);
      check_eq(e, check, op, what, id[j], ud[axis + j]);
    }
    return NULL;
  }
  eddy_core_window_t win;
  if (eddy_core_window_get(op, &win))
    return window_dims(e, op, check, &win, id, out);
  if (code == EDDY_OP_CORE_ARGMAX || code == EDDY_OP_CORE_ARGMIN) {
    int64_t axis =
        norm_axis(eddy_ir_op_attr_int(op, "axis", 0), in->type->rank);
    int32_t o = 0;
    for (int32_t d = 0; d < in->type->rank; d++)
      if (d != axis)
        out[o++] = id[d];
    if (check && id[axis].c < 0) {
      int z = cpu_index_const(e, 0);
      cpu_fail_dims(e, icmp(e, "eq", id[axis].v, z),
                    cpu_dims_site(e, op,
                                  "the reduced dimension is empty (size and "
                                  "minimum 1)"),
                    id[axis].v, cpu_index_const(e, 1));
    }
    return NULL;
  }
  // Everything else has a static result (constants, iota, shape, dim) or
  // keeps its dims in slots (loops, branches, calls, lists).
  for (int32_t d = 0; d < rt->rank; d++) {
    if (rt->dims[d] < 0)
      return eddy_status_create(EDDY_ERR_INTERNAL,
                                "cpu backend: no run-time shape rule for '%s'",
                                op->name->str);
    out[d] = dconst(rt->dims[d]);
  }
  return NULL;
}

static eddy_status_t op_dims(cpu_emit_t *e, eddy_op_t *op, uint32_t r,
                             bool check, dimv_t *out) {
  const eddy_type_t *rt = op->results[r].type;
  bool all_static = eddy_ir_type_is_static(rt);
  for (uint32_t i = 0; all_static && i < op->num_operands; i++) {
    const eddy_type_t *t = eddy_ir_op_operand(op, i)->type;
    all_static = !eddy_ir_type_is_tensor(t) || eddy_ir_type_is_static(t);
  }
  if (all_static) {
    // A fused operand of static type may itself come from operands with
    // `?` dims (add(?x3, 4x3) -> 4x3): its checks run here, with ours.
    for (uint32_t i = 0; check && i < op->num_operands; i++) {
      eddy_value_t *v = eddy_ir_op_operand(op, i);
      cpu_val_t *cv = eddy_ir_type_is_tensor(v->type) ? cpu_val_get(e, v)
                                                      : NULL;
      dimv_t tmp[EDDY_RT_MAX_RANK];
      if (cv && cv->fused && v->def)
        EDDY_RETURN_IF_ERROR(op_dims(e, v->def, 0, true, tmp));
    }
    for (int32_t d = 0; d < rt->rank; d++)
      out[d] = dconst(rt->dims[d]);
    return NULL;
  }
  dimv_t inf[EDDY_RT_MAX_RANK];
  EDDY_RETURN_IF_ERROR(infer_dims(e, op, r, check, inf));
  // A static dim of the declared type must be what the operands give.
  for (int32_t d = 0; d < rt->rank; d++) {
    if (rt->dims[d] < 0) {
      out[d] = inf[d];
      continue;
    }
    out[d] = dconst(rt->dims[d]);
    if (inf[d].c < 0) {
      char what[80];
      snprintf(what, sizeof what,
               "result dimension %d differs from its type (computed and "
               "declared)",
               (int)d);
      check_eq(e, check, op, what, inf[d], out[d]);
    }
  }
  return NULL;
}

static eddy_status_t vdims(cpu_emit_t *e, eddy_value_t *v, bool check,
                           dimv_t *out) {
  const eddy_type_t *t = v->type;
  if (eddy_ir_type_is_static(t)) {
    // A fused producer of static type still checks its operands' `?`
    // dims against its type.
    cpu_val_t *fv = check ? cpu_val_get(e, v) : NULL;
    if (fv && fv->fused && v->def) {
      dimv_t tmp[EDDY_RT_MAX_RANK];
      EDDY_RETURN_IF_ERROR(op_dims(e, v->def, 0, true, tmp));
    }
    for (int32_t d = 0; d < t->rank; d++)
      out[d] = dconst(t->dims[d]);
    return NULL;
  }
  cpu_val_t *cv = cpu_val_get(e, v);
  if (cv && cv->dslot >= 0)
    slot_dims(e, cv, t, out);
  else if (cv && cv->fused)
    EDDY_RETURN_IF_ERROR(op_dims(e, v->def, 0, check, out));
  else
    return eddy_status_create(EDDY_ERR_INTERNAL,
                              "cpu backend: dims of a value before its "
                              "definition");
  const int *syms = dim_syms(e, v);
  for (int32_t d = 0; syms && d < t->rank; d++)
    out[d].s = out[d].c < 0 ? syms[d] : 0;
  return NULL;
}

eddy_status_t cpu_dims(cpu_emit_t *e, eddy_value_t *v, bool check, int *out) {
  dimv_t d[EDDY_RT_MAX_RANK];
  hoist_t h = hoist_begin(e);
  eddy_status_t st = vdims(e, v, check, d);
  for (int32_t i = 0; !st && i < v->type->rank; i++)
    out[i] = dim_ssa(e, d[i]);
  hoist_end(e, &h);
  return st;
}

eddy_status_t cpu_result_dims(cpu_emit_t *e, eddy_op_t *op, uint32_t r,
                              bool check, int *out) {
  dimv_t d[EDDY_RT_MAX_RANK];
  hoist_t h = hoist_begin(e);
  eddy_status_t st = op_dims(e, op, r, check, d);
  for (int32_t i = 0; !st && i < op->results[r].type->rank; i++)
    out[i] = dim_ssa(e, d[i]);
  hoist_end(e, &h);
  return st;
}

/// Post-order over op's fused operands: a fused value's dims are stored
/// after those of the fused values it reads, so each is computed from slots.
static eddy_status_t fused_dims(cpu_emit_t *e, eddy_op_t *op) {
  for (uint32_t i = 0; i < op->num_operands; i++) {
    eddy_value_t *v = eddy_ir_op_operand(op, i);
    cpu_val_t *cv =
        eddy_ir_type_is_tensor(v->type) ? cpu_val_get(e, v) : NULL;
    if (!cv || !cv->fused || !v->def)
      continue;
    EDDY_RETURN_IF_ERROR(fused_dims(e, v->def));
    if (!cpu_type_is_dynamic(v->type))
      continue;
    dimv_t d[EDDY_RT_MAX_RANK];
    EDDY_RETURN_IF_ERROR(op_dims(e, v->def, 0, true, d));
    int64_t r = v->type->rank;
    const eddy_type_t *it =
        eddy_ir_tensor_type_get(e->ctx, EDDY_DT_I64, 1, &r);
    if (cv->dslot < 0)
      cv->dslot = cpu_alloc_slot(e, it);
    for (int32_t k = 0; k < v->type->rank; k++) {
      int ix = cpu_index_const(e, k);
      cpu_store(e, cv->dslot, it, &ix, to_i64(e, dim_ssa(e, d[k])));
    }
  }
  return NULL;
}

eddy_status_t cpu_fused_dims(cpu_emit_t *e, eddy_op_t *op) {
  hoist_t h = hoist_begin(e);
  eddy_status_t st = fused_dims(e, op);
  hoist_end(e, &h);
  return st;
}

void cpu_dyn_reserve(cpu_emit_t *e, const cpu_val_t *cv, const eddy_type_t *t,
                     const int *dims, const eddy_op_t *op) {
  int64_t r = t->rank;
  const eddy_type_t *it = eddy_ir_tensor_type_get(e->ctx, EDDY_DT_I64, 1, &r);
  // bytes = itemsize * prod(dims), -1 when it does not fit in int64 (the
  // allocator refuses it). The static dims are multiplied in at compile
  // time, first; each `?` dim then checks the product so far.
  int64_t known = (int64_t)eddy_dtype_size(t->dtype);
  int dims64[EDDY_RT_MAX_RANK];
  for (int32_t d = 0; d < t->rank; d++) {
    int i = cpu_index_const(e, d);
    dims64[d] = to_i64(e, dims[d]);
    cpu_store(e, cv->dslot, it, &i, dims64[d]);
    int64_t c = t->dims[d];
    if (c >= 0 && known >= 0)
      known = c && known > INT64_MAX / c ? -1 : known * c;
  }
  int bytes = cpu_fresh(e), big = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.constant %" PRId64 " : i64\n", bytes,
        known < 0 ? (int64_t)-1 : known);
  cpu_p(e, "%%t%d = arith.constant %s\n", big, known < 0 ? "true" : "false");
  int zero = cpu_fresh(e), maxv = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.constant 0 : i64\n", zero);
  cpu_p(e, "%%t%d = arith.constant 9223372036854775807 : i64\n", maxv);
  if (known < 0 && op) {
    int isz = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.constant %zu : i64\n", isz,
          eddy_dtype_size(t->dtype));
    cpu_fail_if(e, big,
                cpu_dims_site(e, op,
                              "result size in bytes overflows int64 in its "
                              "static dimensions (its item size and -1)"),
                isz, bytes);
  }
  for (int32_t d = 0; known >= 0 && d < t->rank; d++) {
    if (t->dims[d] >= 0)
      continue;
    int dv = dims64[d];
    // bytes * dv overflows when dv != 0 and bytes > max / dv.
    int nz = cpu_fresh(e), one = cpu_fresh(e), safe = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.cmpi ne, %%t%d, %%t%d : i64\n", nz, dv, zero);
    cpu_p(e, "%%t%d = arith.constant 1 : i64\n", one);
    cpu_p(e, "%%t%d = arith.select %%t%d, %%t%d, %%t%d : i64\n", safe, nz, dv,
          one);
    int lim = ibin(e, "arith.divsi", maxv, safe, "i64");
    int over = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.cmpi sgt, %%t%d, %%t%d : i64\n", over, bytes, lim);
    if (op) {
      // Named at the op computing the value (the first overflow stays);
      // later dims only see `bytes` wrapped, after the error is recorded.
      char what[160];
      snprintf(what, sizeof what,
               "result size in bytes overflows int64 at dimension %d (bytes "
               "of the static dimensions and the dimensions before it, and "
               "its size)",
               (int)d);
      cpu_fail_if(e, over, cpu_dims_site(e, op, what), bytes, dv);
    }
    big = ibin(e, "arith.ori", big, over, "i1");
    bytes = ibin(e, "arith.muli", bytes, dv, "i64");
  }
  int m1 = cpu_fresh(e), nb = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.constant -1 : i64\n", m1);
  cpu_p(e, "%%t%d = arith.select %%t%d, %%t%d, %%t%d : i64\n", nb, big, m1,
        bytes);
  if (cv->cslot < 0)
    return;
  // Grow when the new shape needs more than the block holds (also when the
  // size overflowed: the allocator refuses -1).
  int cap = cpu_load(e, cv->cslot, i64s(e), NULL);
  int grow = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.cmpi ugt, %%t%d, %%t%d : i64\n", grow, nb, cap);
  if (op) {
    // The overflow is recorded above: nothing is allocated.
    int t1 = cpu_fresh(e), fits = cpu_fresh(e), g2 = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.constant true\n", t1);
    cpu_p(e, "%%t%d = arith.xori %%t%d, %%t%d : i1\n", fits, big, t1);
    cpu_p(e, "%%t%d = arith.andi %%t%d, %%t%d : i1\n", g2, grow, fits);
    grow = g2;
  }
  cpu_p(e, "scf.if %%t%d {\n", grow);
  int old = cpu_load(e, cv->pslot, i64s(e), NULL);
  int oldp = cpu_fresh(e), np = cpu_fresh(e);
  cpu_p(e, "%%t%d = llvm.inttoptr %%t%d : i64 to !llvm.ptr\n", oldp, old);
  // (The target's tensor memory.)
  const char *mem = e->tgt->mem;
  cpu_p(e,
        "func.call @eddy_rt_entry_%sfree(%%rt, %%t%d, %%t%d) : (!llvm.ptr, "
        "!llvm.ptr, i64) -> ()\n",
        mem, oldp, cap);
  cpu_p(e,
        "%%t%d = func.call @eddy_rt_entry_%salloc(%%rt, %%t%d, %%err, "
        "%%errlen) : (!llvm.ptr, i64, !llvm.ptr, i64) -> !llvm.ptr\n",
        np, mem, nb);
  int ni = cpu_fresh(e), null = cpu_fresh(e), isnull = cpu_fresh(e);
  cpu_p(e, "%%t%d = llvm.ptrtoint %%t%d : !llvm.ptr to i64\n", ni, np);
  cpu_p(e, "%%t%d = llvm.mlir.zero : !llvm.ptr\n", null);
  cpu_p(e, "%%t%d = llvm.icmp \"eq\" %%t%d, %%t%d : !llvm.ptr\n", isnull, np,
        null);
  cpu_store(e, cv->pslot, i64s(e), NULL, ni);
  int nc = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.select %%t%d, %%t%d, %%t%d : i64\n", nc, isnull,
        zero, nb);
  cpu_store(e, cv->cslot, i64s(e), NULL, nc);
  // A failed allocation: the runtime wrote its message; record its code.
  cpu_p(e, "scf.if %%t%d {\n", isnull);
  const eddy_type_t *i32t = eddy_ir_scalar_type_get(e->ctx, EDDY_DT_I32);
  int code = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.constant %d : i32\n", code,
        -(int)EDDY_RT_ERR_RESOURCE);
  cpu_store(e, e->eflag, i32t, NULL, code);
  cpu_p(e, "}\n}\n");
}

void cpu_gate_open(cpu_emit_t *e) {
  const eddy_type_t *i32t = eddy_ir_scalar_type_get(e->ctx, EDDY_DT_I32);
  int f = cpu_load(e, e->eflag, i32t, NULL);
  int z = cpu_fresh(e), c = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.constant 0 : i32\n", z);
  cpu_p(e, "%%t%d = arith.cmpi eq, %%t%d, %%t%d : i32\n", c, f, z);
  cpu_p(e, "scf.if %%t%d {\n", c);
}

void cpu_gate_close(cpu_emit_t *e) { cpu_p(e, "}\n"); }

eddy_status_t cpu_dyn_assign(cpu_emit_t *e, eddy_value_t *v,
                             const cpu_val_t *dst, const eddy_type_t *t) {
  int dims[EDDY_RT_MAX_RANK];
  cpu_gate_open(e);
  EDDY_RETURN_IF_ERROR(cpu_dims(e, v, true, dims));
  cpu_dyn_reserve(e, dst, t, dims, v->def);
  cpu_gate_close(e);
  cpu_gate_open(e);
  int view = cpu_dyn_view(e, dst, t);
  int idx[EDDY_RT_MAX_RANK], x;
  int d2[EDDY_RT_MAX_RANK];
  EDDY_RETURN_IF_ERROR(cpu_dims(e, v, false, d2));
  cpu_loops_open_v(e, t->rank, d2, idx);
  EDDY_RETURN_IF_ERROR(cpu_expr(e, v, idx, &x));
  cpu_store(e, view, t, idx, x);
  cpu_loops_close(e, t->rank);
  cpu_gate_close(e);
  return NULL;
}

eddy_status_t cpu_dyn_copy(cpu_emit_t *e, const cpu_val_t *src,
                           const cpu_val_t *dst, const eddy_type_t *t) {
  dimv_t dv[EDDY_RT_MAX_RANK];
  int dims[EDDY_RT_MAX_RANK];
  cpu_gate_open(e);
  slot_dims(e, src, t, dv);
  for (int32_t d = 0; d < t->rank; d++)
    dims[d] = dim_ssa(e, dv[d]);
  cpu_dyn_reserve(e, dst, t, dims, NULL);
  cpu_gate_close(e);
  cpu_gate_open(e);
  int from = cpu_dyn_view(e, src, t), to = cpu_dyn_view(e, dst, t);
  slot_dims(e, src, t, dv);
  for (int32_t d = 0; d < t->rank; d++)
    dims[d] = dim_ssa(e, dv[d]);
  int idx[EDDY_RT_MAX_RANK];
  cpu_loops_open_v(e, t->rank, dims, idx);
  cpu_store(e, to, t, idx, cpu_load(e, from, t, idx));
  cpu_loops_close(e, t->rank);
  cpu_gate_close(e);
  return NULL;
}

/// Index of a matmul operand v (rank >= 2) from the result's batch index:
/// numpy broadcasting of batch dims at run time (a dim of 1 reads index 0).
static void mm_dyn_index(cpu_emit_t *e, eddy_value_t *v, const int *vd,
                         int32_t rrank, const int *oidx, int row, int col,
                         int *idx) {
  int32_t r = v->type->rank;
  for (int32_t j = 0; j < r - 2; j++) {
    int oj = oidx[j + (rrank - r)];
    if (v->type->dims[j] == 1) {
      idx[j] = cpu_index_const(e, 0);
    } else if (v->type->dims[j] < 0) {
      int one = cpu_index_const(e, 1), zero = cpu_index_const(e, 0);
      int c = icmp(e, "eq", vd[j], one), s = cpu_fresh(e);
      cpu_p(e, "%%t%d = arith.select %%t%d, %%t%d, %%t%d : index\n", s, c,
            zero, oj);
      idx[j] = s;
    } else {
      idx[j] = oj;
    }
  }
  idx[r - 2] = row;
  idx[r - 1] = col;
}

eddy_status_t cpu_matmul_dyn(cpu_emit_t *e, eddy_op_t *op) {
  eddy_value_t *a = eddy_ir_op_operand(op, 0), *b = eddy_ir_op_operand(op, 1);
  const eddy_type_t *rt = op->results[0].type;
  bool ta = eddy_ir_op_attr_bool(op, "transpose_a", false);
  bool tb = eddy_ir_op_attr_bool(op, "transpose_b", false);
  int ad[EDDY_RT_MAX_RANK], bd[EDDY_RT_MAX_RANK], od[EDDY_RT_MAX_RANK];
  EDDY_RETURN_IF_ERROR(cpu_dims(e, a, false, ad));
  EDDY_RETURN_IF_ERROR(cpu_dims(e, b, false, bd));
  EDDY_RETURN_IF_ERROR(cpu_dims(e, &op->results[0], false, od));
  bool call = cpu_matmul_dyn_call_open(e, op, ad, bd, od);
  int32_t ar = a->type->rank, r = rt->rank;
  int k = ta ? ad[ar - 2] : ad[ar - 1];
  eddy_dtype_t dt = rt->dtype;
  bool fl = eddy_dtype_is_float(dt);
  // Floats accumulate in f64 in the order k = 0..K-1 (the contract), ints
  // wrap in their own type: results are those of the evaluator.
  const char *acc_t = fl ? "f64" : cpu_reg_type(dt);
  int oidx[EDDY_RT_MAX_RANK];
  cpu_loops_open_v(e, r, od, oidx);
  int init = cpu_fresh(e);
  if (fl)
    cpu_p(e, "%%t%d = arith.constant 0.0 : f64\n", init);
  else
    cpu_p(e, "%%t%d = arith.constant 0 : %s\n", init, acc_t);
  int lb = cpu_index_const(e, 0), st = cpu_index_const(e, 1);
  int kv = cpu_fresh(e), acc = cpu_fresh(e), res = cpu_fresh(e);
  cpu_p(e,
        "%%t%d = scf.for %%t%d = %%t%d to %%t%d step %%t%d iter_args(%%t%d = "
        "%%t%d) -> (%s) {\n",
        res, kv, lb, k, st, acc, init, acc_t);
  int aidx[EDDY_RT_MAX_RANK], bidx[EDDY_RT_MAX_RANK], x, y;
  mm_dyn_index(e, a, ad, r, oidx, ta ? kv : oidx[r - 2],
               ta ? oidx[r - 2] : kv, aidx);
  mm_dyn_index(e, b, bd, r, oidx, tb ? oidx[r - 1] : kv,
               tb ? kv : oidx[r - 1], bidx);
  EDDY_RETURN_IF_ERROR(cpu_expr(e, a, aidx, &x));
  EDDY_RETURN_IF_ERROR(cpu_expr(e, b, bidx, &y));
  if (fl && dt != EDDY_DT_F64) {
    x = cpu_float_widen(e, dt, "f64", x);
    y = cpu_float_widen(e, dt, "f64", y);
  }
  int p = ibin(e, fl ? "arith.mulf" : "arith.muli", x, y, acc_t);
  int s = ibin(e, fl ? "arith.addf" : "arith.addi", acc, p, acc_t);
  cpu_p(e, "scf.yield %%t%d : %s\n}\n", s, acc_t);
  int v = res;
  if (fl)
    v = cpu_float_narrow(e, "f64", dt, v);
  cpu_store(e, cpu_val_get(e, &op->results[0])->buf, rt, oidx, v);
  cpu_loops_close(e, r);
  if (call)
    cpu_p(e, "}\n");
  return NULL;
}

/// TensorLists in compiled code: each list value lives in a slot (a
/// memref<i64> on the host's stack holding an eddy_rt_list_t pointer) that
/// owns one reference.
/// The tl ops call libeddyrt through the eddy_rt_entry_list_* helpers
/// (runtime/entry.c). A list operand whose only use is the op, in the same
/// block, is moved (its slot cleared), so the runtime can grow the list in
/// place (a push in a loop is O(1), not a copy of the item table); other
/// operands are retained first. Failures (popping an empty list) go to the
/// entry's error channel. The items of a list of lists are lists: they live
/// in slots too and pass to the eddy_rt_entry_list_*_list helpers
/// (runtime/entry_nested.c) by reference.
#include "backend-cpu/emit_internal.h"

#include <string.h>

/// The helpers' family: eddy_rt_entry_list_* (host memory), or in the GPU
/// target's CUDA form eddy_rt_entry_cuda_list_* (items in device memory).
static const char *lf(const cpu_emit_t *e) {
  return e->tgt->device_memory ? "cuda_list" : "list";
}

static const eddy_type_t *i64_scalar(cpu_emit_t *e) {
  return eddy_ir_scalar_type_get(e->ctx, EDDY_DT_I64);
}

eddy_status_t cpu_check_list_type(const eddy_op_t *op, const eddy_type_t *t) {
  if (t->kind != EDDY_TYPE_LIST)
    return cpu_check_type(op, t);
  // A list of lists: its items are list slots; the innermost tensors must be
  // static.
  int depth = 0;
  while (t->elem->kind == EDDY_TYPE_LIST) {
    t = t->elem;
    if (++depth >= EDDY_RT_MAX_LIST_DEPTH)
      return cpu_unsupported(op, "nests TensorLists deeper than %d",
                             EDDY_RT_MAX_LIST_DEPTH);
  }
  return cpu_check_type(op, t->elem);
}

int cpu_list_slot(cpu_emit_t *e) {
  int s = cpu_alloc_slot(e, i64_scalar(e));
  cpu_zero_i64_in_prologue(e, s);
  int *slots =
      eddy_arena_alloc(e->arena, sizeof(int) * (size_t)(e->num_list_slots + 1));
  if (e->num_list_slots)
    memcpy(slots, e->list_slots, sizeof(int) * (size_t)e->num_list_slots);
  slots[e->num_list_slots++] = s;
  e->list_slots = slots;
  return s;
}

/// %tN = the pointer held in the i64 slot (a list slot, or the data slot
/// of a dynamically shaped value) as !llvm.ptr.
static int slot_load(cpu_emit_t *e, int slot) {
  int v = cpu_load(e, slot, i64_scalar(e), NULL);
  int p = cpu_fresh(e);
  cpu_p(e, "%%t%d = llvm.inttoptr %%t%d : i64 to !llvm.ptr\n", p, v);
  return p;
}

static void slot_clear(cpu_emit_t *e, int slot) {
  int z = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.constant 0 : i64\n", z);
  cpu_store(e, slot, i64_scalar(e), NULL, z);
}

/// func.call @eddy_rt_entry_<family>_<fn>(%t<p>) (retain, release).
static void call_void(cpu_emit_t *e, const char *fn, int p) {
  cpu_p(e, "func.call @eddy_rt_entry_%s_%s(%%t%d) : (!llvm.ptr) -> ()\n",
        lf(e), fn, p);
}

/// Stores an owned list pointer into slot, releasing what it held.
static void slot_set(cpu_emit_t *e, int slot, int p) {
  call_void(e, "release", slot_load(e, slot));
  int v = cpu_fresh(e);
  cpu_p(e, "%%t%d = llvm.ptrtoint %%t%d : !llvm.ptr to i64\n", v, p);
  cpu_store(e, slot, i64_scalar(e), NULL, v);
}

/// True when v's only use is `user` and it runs once per definition of v.
static bool can_move(const eddy_value_t *v, const eddy_op_t *user) {
  if (eddy_ir_value_num_uses(v) != 1 || v->uses->owner != user)
    return false;
  const eddy_block_t *def = v->def ? v->def->block : v->block;
  return user->block == def;
}

/// The list pointer of operand v for `user`: moved out of its slot when
/// possible (*moved = true), else borrowed (the helper retains it).
static int take(cpu_emit_t *e, eddy_value_t *v, const eddy_op_t *user,
                bool *moved) {
  int slot = cpu_val_get(e, v)->buf;
  int p = slot_load(e, slot);
  *moved = can_move(v, user);
  if (*moved)
    slot_clear(e, slot);
  return p;
}

void cpu_list_assign(cpu_emit_t *e, eddy_value_t *v, const eddy_op_t *user,
                     int dst) {
  bool moved;
  int p = take(e, v, user, &moved);
  if (!moved)
    call_void(e, "retain", p);
  slot_set(e, dst, p);
}

void cpu_list_copy_slot(cpu_emit_t *e, int src, int dst) {
  int p = slot_load(e, src);
  call_void(e, "retain", p);
  slot_set(e, dst, p);
}

void cpu_list_cleanup(cpu_emit_t *e) {
  for (int i = 0; i < e->num_list_slots; i++)
    call_void(e, "release", slot_load(e, e->list_slots[i]));
}

static bool is_list_type(const eddy_type_t *t) {
  return t->kind == EDDY_TYPE_LIST;
}

/// The innermost tensor type of list item type t and how many list levels
/// lie above it (0 when t is a tensor).
static const eddy_type_t *innermost(const eddy_type_t *t, int *depth) {
  *depth = 0;
  while (is_list_type(t)) {
    t = t->elem;
    ++*depth;
  }
  return t;
}

/// The constants describing an item type: dtype, rank, dims pointer.
static void item_args(cpu_emit_t *e, const eddy_type_t *t, int *dt, int *rk,
                      int *dp) {
  *dp = cpu_dims_ptr(e, t);
  *dt = cpu_fresh(e);
  *rk = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.constant %d : i32\n", *dt, (int)t->dtype);
  cpu_p(e, "%%t%d = arith.constant %d : i32\n", *rk, t->rank);
}

/// A fresh i64 array of rank entries on the stack; returns its !llvm.ptr
/// and (in *slot) its memref.
static int dims_array(cpu_emit_t *e, int32_t rank, int *slot) {
  int64_t r = rank ? rank : 1;
  const eddy_type_t *t = eddy_ir_tensor_type_get(e->ctx, EDDY_DT_I64, 1, &r);
  *slot = cpu_alloc_slot(e, t);
  return cpu_buf_ptr(e, *slot, t);
}

/// item_args for the tensor operand x: its run-time dims when its type has
/// dynamic dims.
static eddy_status_t item_args_of(cpu_emit_t *e, eddy_value_t *x, int *dt,
                                  int *rk, int *dp) {
  const eddy_type_t *t = x->type;
  item_args(e, t, dt, rk, dp);
  if (!cpu_type_is_dynamic(t))
    return NULL;
  int slot, d[EDDY_RT_MAX_RANK];
  int64_t r = t->rank;
  const eddy_type_t *at = eddy_ir_tensor_type_get(e->ctx, EDDY_DT_I64, 1, &r);
  *dp = dims_array(e, t->rank, &slot);
  EDDY_RETURN_IF_ERROR(cpu_dims(e, x, false, d));
  for (int32_t i = 0; i < t->rank; i++) {
    int k = cpu_index_const(e, i), v = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.index_cast %%t%d : index to i64\n", v, d[i]);
    cpu_store(e, slot, at, &k, v);
  }
  return NULL;
}

/// The dims of what a tl op reads from the list at %t<lp> (what 0: item
/// %t<idx>, what 1: the stack) into a fresh array; returns its pointer and
/// gives res (a dynamically shaped value) a buffer of those dims.
static int read_dims(cpu_emit_t *e, const cpu_val_t *res, const eddy_type_t *t,
                     int lp, int what, int idx) {
  int slot;
  int dp = dims_array(e, t->rank, &slot);
  int w = cpu_fresh(e), rk = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.constant %d : i32\n", w, what);
  cpu_p(e, "%%t%d = arith.constant %d : i32\n", rk, t->rank);
  cpu_p(e,
        "func.call @eddy_rt_entry_%s_dims(%%rt, %%t%d, %%t%d, %%t%d, "
        "%%t%d, %%t%d, %%t%d, %%err, %%errlen) : (!llvm.ptr, !llvm.ptr, i32, "
        "i64, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> ()\n",
        lf(e), lp, w, idx, rk, dp, e->eflag_ptr);
  int64_t r = t->rank;
  const eddy_type_t *at = eddy_ir_tensor_type_get(e->ctx, EDDY_DT_I64, 1, &r);
  int d[EDDY_RT_MAX_RANK];
  for (int32_t i = 0; i < t->rank; i++) {
    int k = cpu_index_const(e, i), v = cpu_load(e, slot, at, &k);
    d[i] = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.index_cast %%t%d : i64 to index\n", d[i], v);
  }
  cpu_dyn_reserve(e, res, t, d, NULL);
  return dp;
}

static int bool_const(cpu_emit_t *e, bool b) {
  int t = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.constant %d : i32\n", t, b ? 1 : 0);
  return t;
}

/// %t<p> = a new list from @eddy_rt_entry_list_<fn> (tl.empty: fn "empty",
/// n its max_elements; tl.reserve: "reserve", n its length), stored in slot
/// rs. Items of depth > 0 (lists) go through the _nested helper, which takes
/// the depth first.
static void new_list_call(cpu_emit_t *e, const char *fn, int depth, int p,
                          int dt, int rk, int dp, int n, int rs, int swap) {
  if (depth > 0) {
    int dv = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.constant %d : i32\n", dv, depth);
    cpu_p(e,
          "%%t%d = func.call @eddy_rt_entry_%s_%s_nested(%%rt, %%t%d, "
          "%%t%d, %%t%d, %%t%d, %%t%d, %%t%d, %%err, %%errlen) : (!llvm.ptr, "
          "i32, i32, i32, !llvm.ptr, i64, !llvm.ptr, !llvm.ptr, i64) -> "
          "!llvm.ptr\n",
          p, lf(e), fn, dv, dt, rk, dp, n, e->eflag_ptr);
  } else {
    cpu_p(e,
          "%%t%d = func.call @eddy_rt_entry_%s_%s(%%rt, %%t%d, %%t%d, "
          "%%t%d, %%t%d, %%t%d, %%err, %%errlen",
          p, lf(e), fn, dt, rk, dp, n, e->eflag_ptr);
    if (swap >= 0)
      cpu_p(e, ", %%t%d", swap);
    cpu_p(e,
          ") : (!llvm.ptr, i32, i32, !llvm.ptr, i64, !llvm.ptr, !llvm.ptr, "
          "i64%s) -> !llvm.ptr\n",
          swap >= 0 ? ", i32" : "");
  }
  slot_set(e, rs, p);
}

eddy_status_t cpu_list_empty(cpu_emit_t *e, eddy_op_t *op) {
  int depth;
  const eddy_type_t *elem = innermost(op->results[0].type->elem, &depth);
  int rs = cpu_list_slot(e);
  cpu_val_new(e, &op->results[0])->buf = rs;
  int dt, rk, dp;
  item_args(e, elem, &dt, &rk, &dp);
  int mx = cpu_fresh(e), p = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.constant %lld : i64\n", mx,
        (long long)eddy_ir_op_attr_int(op, "max_elements", -1));
  // CUDA: the helper's swap argument: whether the list is a loop value of
  // a ctl.while with swap_memory (its items go to pinned host memory).
  int swap = -1;
  if (e->tgt->device_memory) {
    bool sw = false;
    for (eddy_use_t *u = op->results[0].uses; u; u = u->next)
      sw = sw || (cpu_op_info(u->owner)->cls == CPU_OP_WHILE &&
                  eddy_ir_op_attr_bool(u->owner, "swap_memory", false));
    swap = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.constant %d : i32\n", swap, sw ? 1 : 0);
  }
  new_list_call(e, "empty", depth, p, dt, rk, dp, mx, rs, swap);
  return NULL;
}

/// %tN = pointer to the data of tensor operand x (a splat constant is
/// materialized first).
static eddy_status_t operand_ptr(cpu_emit_t *e, const eddy_op_t *op,
                                 eddy_value_t *x, int *out) {
  EDDY_RETURN_IF_ERROR(cpu_check_type(op, x->type));
  const cpu_val_t *xv = cpu_val_get(e, x);
  if (xv->buf < 0 && xv->pslot >= 0) { // dynamically shaped
    *out = slot_load(e, xv->pslot);
    return NULL;
  }
  int xbuf = xv->buf;
  if (xbuf < 0) {
    xbuf = cpu_alloc_buf(e, x->type);
    EDDY_RETURN_IF_ERROR(cpu_copy_value(e, x, xbuf, x->type));
  }
  *out = cpu_buf_ptr(e, xbuf, x->type);
  return NULL;
}

/// %tN = the scalar integer operand v as i64.
static eddy_status_t index_i64(cpu_emit_t *e, eddy_value_t *v, int *out) {
  int x;
  EDDY_RETURN_IF_ERROR(cpu_host_scalar(e, v, &x));
  if (v->type->dtype != EDDY_DT_I64) {
    int t = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.extsi %%t%d : %s to i64\n", t, x,
          cpu_reg_type(v->type->dtype));
    x = t;
  }
  *out = x;
  return NULL;
}

eddy_status_t cpu_list_reserve(cpu_emit_t *e, eddy_op_t *op) {
  int depth;
  const eddy_type_t *elem = innermost(op->results[0].type->elem, &depth);
  int n;
  EDDY_RETURN_IF_ERROR(index_i64(e, eddy_ir_op_operand(op, 0), &n));
  int rs = cpu_list_slot(e);
  cpu_val_new(e, &op->results[0])->buf = rs;
  int dt, rk, dp;
  item_args(e, elem, &dt, &rk, &dp);
  int p = cpu_fresh(e);
  new_list_call(e, "reserve", depth, p, dt, rk, dp, n, rs, -1);
  return NULL;
}

eddy_status_t cpu_list_from_tensor(cpu_emit_t *e, eddy_op_t *op) {
  eddy_value_t *x = eddy_ir_op_operand(op, 0);
  int data;
  EDDY_RETURN_IF_ERROR(operand_ptr(e, op, x, &data));
  int rs = cpu_list_slot(e);
  cpu_val_new(e, &op->results[0])->buf = rs;
  int dt, rk, dp;
  EDDY_RETURN_IF_ERROR(item_args_of(e, x, &dt, &rk, &dp));
  // The plan lends the list an argument's or a constant's data (no copy).
  const cpu_step_t *s = cpu_plan_step(e->plan, op);
  bool borrow = s && s->borrow;
  int p = cpu_fresh(e);
  cpu_p(e,
        "%%t%d = func.call @eddy_rt_entry_%s_%s(%%rt, %%t%d, "
        "%%t%d, %%t%d, %%t%d, %%t%d, %%err, %%errlen) : (!llvm.ptr, "
        "!llvm.ptr, i32, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> "
        "!llvm.ptr\n",
        p, lf(e), borrow ? "from_arg" : "from_tensor", data, dt, rk, dp,
        e->eflag_ptr);
  slot_set(e, rs, p);
  return NULL;
}

/// get_item of a list of lists: the item is a new reference in a new slot.
static eddy_status_t list_get_list(cpu_emit_t *e, eddy_op_t *op) {
  int idx;
  EDDY_RETURN_IF_ERROR(index_i64(e, eddy_ir_op_operand(op, 1), &idx));
  int rs = cpu_list_slot(e);
  int lp = slot_load(e, cpu_val_get(e, eddy_ir_op_operand(op, 0))->buf);
  int p = cpu_fresh(e);
  cpu_p(e,
        "%%t%d = func.call @eddy_rt_entry_%s_get_list(%%rt, %%t%d, %%t%d, "
        "%%t%d, %%err, %%errlen) : (!llvm.ptr, !llvm.ptr, i64, !llvm.ptr, "
        "!llvm.ptr, i64) -> !llvm.ptr\n",
        p, lf(e), lp, idx, e->eflag_ptr);
  slot_set(e, rs, p);
  cpu_val_new(e, &op->results[0])->buf = rs;
  return NULL;
}

/// set_item and push_back of a list item (borrowed from its slot: the outer
/// list takes its own reference).
static eddy_status_t list_put_list(cpu_emit_t *e, eddy_op_t *op, bool set) {
  eddy_value_t *l = eddy_ir_op_operand(op, 0);
  eddy_value_t *x = eddy_ir_op_operand(op, set ? 2 : 1);
  int idx = -1;
  if (set)
    EDDY_RETURN_IF_ERROR(index_i64(e, eddy_ir_op_operand(op, 1), &idx));
  int xp = slot_load(e, cpu_val_get(e, x)->buf);
  int rs = cpu_list_slot(e);
  bool moved;
  int lp = take(e, l, op, &moved);
  int mv = bool_const(e, moved);
  int p = cpu_fresh(e);
  if (set)
    cpu_p(e,
          "%%t%d = func.call @eddy_rt_entry_%s_set_list(%%rt, %%t%d, %%t%d, "
          "%%t%d, %%t%d, %%t%d, %%err, %%errlen) : (!llvm.ptr, !llvm.ptr, "
          "i32, i64, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> !llvm.ptr\n",
          p, lf(e), lp, mv, idx, xp, e->eflag_ptr);
  else
    cpu_p(e,
          "%%t%d = func.call @eddy_rt_entry_%s_push_list(%%rt, %%t%d, "
          "%%t%d, %%t%d, %%t%d, %%err, %%errlen) : (!llvm.ptr, !llvm.ptr, "
          "i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> !llvm.ptr\n",
          p, lf(e), lp, mv, xp, e->eflag_ptr);
  slot_set(e, rs, p);
  cpu_val_new(e, &op->results[0])->buf = rs;
  return NULL;
}

/// pop_back of a list of lists: the popped item goes straight into its slot
/// (released first: in a loop it holds the last iteration's item).
static eddy_status_t list_pop_list(cpu_emit_t *e, eddy_op_t *op) {
  eddy_value_t *l = eddy_ir_op_operand(op, 0);
  int is = cpu_list_slot(e);
  call_void(e, "release", slot_load(e, is));
  slot_clear(e, is);
  int ip = cpu_buf_ptr(e, is, i64_scalar(e));
  int rs = cpu_list_slot(e);
  bool moved;
  int lp = take(e, l, op, &moved);
  int mv = bool_const(e, moved);
  int p = cpu_fresh(e);
  cpu_p(e,
        "%%t%d = func.call @eddy_rt_entry_%s_pop_list(%%rt, %%t%d, %%t%d, "
        "%%t%d, %%t%d, %%err, %%errlen) : (!llvm.ptr, !llvm.ptr, i32, "
        "!llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> !llvm.ptr\n",
        p, lf(e), lp, mv, ip, e->eflag_ptr);
  slot_set(e, rs, p);
  cpu_val_new(e, &op->results[0])->buf = rs;
  cpu_val_new(e, &op->results[1])->buf = is;
  return NULL;
}

/// get_item and stack: a tensor copied out of a list that is only read.
/// get_item as the plan's view (plan.h, cpu_step_t.view): the result is a
/// memref over the item in the list; an unset item (zeros) is copied into
/// the result's buffer at %t<data> as usual.
static eddy_status_t read_in_place(cpu_emit_t *e, eddy_op_t *op, int lp,
                                   int idx, int data, int dt, int rk,
                                   int dp) {
  const eddy_type_t *xt = op->results[0].type;
  int p = cpu_fresh(e), z = cpu_fresh(e), none = cpu_fresh(e),
      q = cpu_fresh(e);
  cpu_p(e,
        "%%t%d = func.call @eddy_rt_entry_list_view(%%rt, %%t%d, %%t%d, "
        "%%t%d, %%t%d, %%t%d, %%t%d, %%err, %%errlen) : (!llvm.ptr, "
        "!llvm.ptr, i64, i32, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> "
        "!llvm.ptr\n",
        p, lp, idx, dt, rk, dp, e->eflag_ptr);
  cpu_p(e, "%%t%d = llvm.mlir.zero : !llvm.ptr\n", z);
  cpu_p(e, "%%t%d = llvm.icmp \"eq\" %%t%d, %%t%d : !llvm.ptr\n", none, p,
        z);
  cpu_p(e, "%%t%d = scf.if %%t%d -> (!llvm.ptr) {\n", q, none);
  cpu_p(e,
        "func.call @eddy_rt_entry_list_get(%%rt, %%t%d, %%t%d, %%t%d, "
        "%%t%d, %%t%d, %%t%d, %%t%d, %%err, %%errlen) : (!llvm.ptr, "
        "!llvm.ptr, i64, !llvm.ptr, i32, i32, !llvm.ptr, !llvm.ptr, "
        "!llvm.ptr, i64) -> ()\n",
        lp, idx, data, dt, rk, dp, e->eflag_ptr);
  cpu_p(e, "scf.yield %%t%d : !llvm.ptr\n} else {\n", data);
  cpu_p(e, "scf.yield %%t%d : !llvm.ptr\n}\n", p);
  cpu_val_t *cv = cpu_val_get(e, &op->results[0]);
  cv->buf = cpu_memref_from_ptr(e, q, xt);
  if (e->dyn) {
    // Inside a gate: the address goes to a slot for cpu_view_rebind.
    cv->vslot = cpu_alloc_slot(e, i64_scalar(e));
    int a = cpu_fresh(e);
    cpu_p(e, "%%t%d = llvm.ptrtoint %%t%d : !llvm.ptr to i64\n", a, q);
    cpu_store(e, cv->vslot, i64_scalar(e), NULL, a);
  }
  return NULL;
}

void cpu_view_rebind(cpu_emit_t *e, const eddy_op_t *op) {
  cpu_val_t *cv = op->num_results ? cpu_val_get(e, &op->results[0]) : NULL;
  if (!cv || cv->vslot < 0)
    return;
  int a = cpu_load(e, cv->vslot, i64_scalar(e), NULL), q = cpu_fresh(e);
  cpu_p(e, "%%t%d = llvm.inttoptr %%t%d : i64 to !llvm.ptr\n", q, a);
  cv->buf = cpu_memref_from_ptr(e, q, op->results[0].type);
}

static eddy_status_t list_read(cpu_emit_t *e, eddy_op_t *op, bool stack) {
  const eddy_type_t *xt = op->results[0].type;
  EDDY_RETURN_IF_ERROR(cpu_check_type(op, xt));
  int idx = -1;
  if (!stack)
    EDDY_RETURN_IF_ERROR(index_i64(e, eddy_ir_op_operand(op, 1), &idx));
  int lp = slot_load(e, cpu_val_get(e, eddy_ir_op_operand(op, 0))->buf);
  int dt, rk, dp, data;
  item_args(e, xt, &dt, &rk, &dp);
  if (cpu_type_is_dynamic(xt)) {
    // Dims from the list at run time, then a buffer of that size.
    cpu_val_t *rv = cpu_val_new(e, &op->results[0]);
    cpu_dyn_init(e, rv, xt, true);
    if (stack) {
      idx = cpu_fresh(e);
      cpu_p(e, "%%t%d = arith.constant 0 : i64\n", idx);
    }
    dp = read_dims(e, rv, xt, lp, stack ? 1 : 0, idx);
    data = slot_load(e, rv->pslot);
  } else {
    int xbuf = cpu_result_buf(e, &op->results[0]);
    cpu_val_new(e, &op->results[0])->buf = xbuf;
    data = cpu_buf_ptr(e, xbuf, xt);
  }
  const cpu_step_t *s = cpu_plan_step(e->plan, op);
  if (!stack && s && s->view)
    return read_in_place(e, op, lp, idx, data, dt, rk, dp);
  if (stack)
    cpu_p(e,
          "func.call @eddy_rt_entry_%s_stack(%%rt, %%t%d, %%t%d, %%t%d, "
          "%%t%d, %%t%d, %%t%d, %%err, %%errlen) : (!llvm.ptr, !llvm.ptr, "
          "!llvm.ptr, i32, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> ()\n",
          lf(e), lp, data, dt, rk, dp, e->eflag_ptr);
  else
    cpu_p(e,
          "func.call @eddy_rt_entry_%s_get(%%rt, %%t%d, %%t%d, %%t%d, "
          "%%t%d, %%t%d, %%t%d, %%t%d, %%err, %%errlen) : (!llvm.ptr, "
          "!llvm.ptr, i64, !llvm.ptr, i32, i32, !llvm.ptr, !llvm.ptr, "
          "!llvm.ptr, i64) -> ()\n",
          lf(e), lp, idx, data, dt, rk, dp, e->eflag_ptr);
  return NULL;
}

static eddy_status_t list_set(cpu_emit_t *e, eddy_op_t *op) {
  eddy_value_t *l = eddy_ir_op_operand(op, 0), *x = eddy_ir_op_operand(op, 2);
  int idx, data;
  EDDY_RETURN_IF_ERROR(index_i64(e, eddy_ir_op_operand(op, 1), &idx));
  EDDY_RETURN_IF_ERROR(operand_ptr(e, op, x, &data));
  int rs = cpu_list_slot(e);
  bool moved;
  int lp = take(e, l, op, &moved);
  int mv = bool_const(e, moved);
  int dt, rk, dp;
  EDDY_RETURN_IF_ERROR(item_args_of(e, x, &dt, &rk, &dp));
  int p = cpu_fresh(e);
  cpu_p(e,
        "%%t%d = func.call @eddy_rt_entry_%s_set(%%rt, %%t%d, %%t%d, "
        "%%t%d, %%t%d, %%t%d, %%t%d, %%t%d, %%t%d, %%err, %%errlen) : "
        "(!llvm.ptr, !llvm.ptr, i32, i64, !llvm.ptr, i32, i32, !llvm.ptr, "
        "!llvm.ptr, !llvm.ptr, i64) -> !llvm.ptr\n",
        p, lf(e), lp, mv, idx, data, dt, rk, dp, e->eflag_ptr);
  slot_set(e, rs, p);
  cpu_val_new(e, &op->results[0])->buf = rs;
  return NULL;
}

static eddy_status_t list_push(cpu_emit_t *e, eddy_op_t *op) {
  eddy_value_t *l = eddy_ir_op_operand(op, 0), *x = eddy_ir_op_operand(op, 1);
  int data;
  EDDY_RETURN_IF_ERROR(operand_ptr(e, op, x, &data));
  int rs = cpu_list_slot(e);
  bool moved;
  int lp = take(e, l, op, &moved);
  int mv = bool_const(e, moved);
  int dt, rk, dp;
  EDDY_RETURN_IF_ERROR(item_args_of(e, x, &dt, &rk, &dp));
  int p = cpu_fresh(e);
  cpu_p(e,
        "%%t%d = func.call @eddy_rt_entry_%s_push(%%rt, %%t%d, %%t%d, "
        "%%t%d, %%t%d, %%t%d, %%t%d, %%t%d, %%err, %%errlen) : (!llvm.ptr, "
        "!llvm.ptr, i32, !llvm.ptr, i32, i32, !llvm.ptr, !llvm.ptr, "
        "!llvm.ptr, i64) -> !llvm.ptr\n",
        p, lf(e), lp, mv, data, dt, rk, dp, e->eflag_ptr);
  slot_set(e, rs, p);
  cpu_val_new(e, &op->results[0])->buf = rs;
  return NULL;
}

static eddy_status_t list_pop(cpu_emit_t *e, eddy_op_t *op) {
  eddy_value_t *l = eddy_ir_op_operand(op, 0);
  const eddy_type_t *xt = op->results[1].type;
  EDDY_RETURN_IF_ERROR(cpu_check_type(op, xt));
  int dt, rk, dp, data;
  item_args(e, xt, &dt, &rk, &dp);
  if (cpu_type_is_dynamic(xt)) {
    // The last item's dims, read before the list is given away.
    cpu_val_t *rv = cpu_val_new(e, &op->results[1]);
    cpu_dyn_init(e, rv, xt, true);
    int lp0 = slot_load(e, cpu_val_get(e, l)->buf), last = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.constant -1 : i64\n", last);
    dp = read_dims(e, rv, xt, lp0, 0, last);
    data = slot_load(e, rv->pslot);
  } else {
    int xbuf = cpu_result_buf(e, &op->results[1]);
    cpu_val_new(e, &op->results[1])->buf = xbuf;
    data = cpu_buf_ptr(e, xbuf, xt);
  }
  int rs = cpu_list_slot(e);
  bool moved;
  int lp = take(e, l, op, &moved);
  int mv = bool_const(e, moved);
  int p = cpu_fresh(e);
  cpu_p(e,
        "%%t%d = func.call @eddy_rt_entry_%s_pop(%%rt, %%t%d, %%t%d, "
        "%%t%d, %%t%d, %%t%d, %%t%d, %%t%d, %%err, %%errlen) : (!llvm.ptr, "
        "!llvm.ptr, i32, !llvm.ptr, i32, i32, !llvm.ptr, !llvm.ptr, "
        "!llvm.ptr, i64) -> !llvm.ptr\n",
        p, lf(e), lp, mv, data, dt, rk, dp, e->eflag_ptr);
  slot_set(e, rs, p);
  cpu_val_new(e, &op->results[0])->buf = rs;
  return NULL;
}

eddy_status_t cpu_list_resize(cpu_emit_t *e, eddy_op_t *op) {
  eddy_value_t *l = eddy_ir_op_operand(op, 0);
  int n;
  EDDY_RETURN_IF_ERROR(index_i64(e, eddy_ir_op_operand(op, 1), &n));
  int rs = cpu_list_slot(e);
  bool moved;
  int lp = take(e, l, op, &moved);
  int mv = bool_const(e, moved);
  int p = cpu_fresh(e);
  cpu_p(e,
        "%%t%d = func.call @eddy_rt_entry_%s_resize(%%rt, %%t%d, %%t%d, "
        "%%t%d, %%t%d, %%err, %%errlen) : (!llvm.ptr, !llvm.ptr, i32, i64, "
        "!llvm.ptr, !llvm.ptr, i64) -> !llvm.ptr\n",
        p, lf(e), lp, mv, n, e->eflag_ptr);
  slot_set(e, rs, p);
  cpu_val_new(e, &op->results[0])->buf = rs;
  return NULL;
}

/// tl.add: operand 0 moved when it can be (the sum is then built in its
/// item table), operand 1 borrowed.
eddy_status_t cpu_list_add(cpu_emit_t *e, eddy_op_t *op) {
  eddy_value_t *a = eddy_ir_op_operand(op, 0), *b = eddy_ir_op_operand(op, 1);
  int bp = slot_load(e, cpu_val_get(e, b)->buf);
  int rs = cpu_list_slot(e);
  bool moved;
  int ap = take(e, a, op, &moved);
  int mv = bool_const(e, moved);
  int p = cpu_fresh(e);
  cpu_p(e,
        "%%t%d = func.call @eddy_rt_entry_%s_add(%%rt, %%t%d, %%t%d, %%t%d, "
        "%%t%d, %%err, %%errlen) : (!llvm.ptr, !llvm.ptr, i32, !llvm.ptr, "
        "!llvm.ptr, !llvm.ptr, i64) -> !llvm.ptr\n",
        p, lf(e), ap, mv, bp, e->eflag_ptr);
  slot_set(e, rs, p);
  cpu_val_new(e, &op->results[0])->buf = rs;
  return NULL;
}

/// tl.zeros_like: a new list from the borrowed operand.
eddy_status_t cpu_list_zeros_like(cpu_emit_t *e, eddy_op_t *op) {
  int lp = slot_load(e, cpu_val_get(e, eddy_ir_op_operand(op, 0))->buf);
  int rs = cpu_list_slot(e);
  int p = cpu_fresh(e);
  cpu_p(e,
        "%%t%d = func.call @eddy_rt_entry_%s_zeros_like(%%rt, %%t%d, %%t%d, "
        "%%err, %%errlen) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, "
        "i64) -> !llvm.ptr\n",
        p, lf(e), lp, e->eflag_ptr);
  slot_set(e, rs, p);
  cpu_val_new(e, &op->results[0])->buf = rs;
  return NULL;
}

eddy_status_t cpu_list_scatter(cpu_emit_t *e, eddy_op_t *op) {
  eddy_value_t *l = eddy_ir_op_operand(op, 0);
  eddy_value_t *ix = eddy_ir_op_operand(op, 1), *x = eddy_ir_op_operand(op, 2);
  int ip, data;
  EDDY_RETURN_IF_ERROR(operand_ptr(e, op, ix, &ip));
  EDDY_RETURN_IF_ERROR(operand_ptr(e, op, x, &data));
  int n = cpu_fresh(e);
  if (cpu_type_is_dynamic(ix->type)) {
    int d[EDDY_RT_MAX_RANK];
    EDDY_RETURN_IF_ERROR(cpu_dims(e, ix, false, d));
    cpu_p(e, "%%t%d = arith.index_cast %%t%d : index to i64\n", n, d[0]);
  } else {
    cpu_p(e, "%%t%d = arith.constant %lld : i64\n", n,
          (long long)ix->type->dims[0]);
  }
  int idt = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.constant %d : i32\n", idt, (int)ix->type->dtype);
  int dt, rk, dp;
  EDDY_RETURN_IF_ERROR(item_args_of(e, x, &dt, &rk, &dp));
  int rs = cpu_list_slot(e);
  bool moved;
  int lp = take(e, l, op, &moved);
  int mv = bool_const(e, moved);
  int p = cpu_fresh(e);
  cpu_p(e,
        "%%t%d = func.call @eddy_rt_entry_%s_scatter(%%rt, %%t%d, %%t%d, "
        "%%t%d, %%t%d, %%t%d, %%t%d, %%t%d, %%t%d, %%t%d, %%t%d, %%err, "
        "%%errlen) : (!llvm.ptr, !llvm.ptr, i32, !llvm.ptr, i32, i64, "
        "!llvm.ptr, i32, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> "
        "!llvm.ptr\n",
        p, lf(e), lp, mv, ip, idt, n, data, dt, rk, dp, e->eflag_ptr);
  slot_set(e, rs, p);
  cpu_val_new(e, &op->results[0])->buf = rs;
  return NULL;
}

/// The result r of op as a buffer pointer: a fresh buffer of the dims the
/// list helper `what` reads (read_dims) when its type is dynamic.
static int result_ptr(cpu_emit_t *e, eddy_op_t *op, uint32_t r, int lp,
                      int what, int *dp) {
  const eddy_type_t *xt = op->results[r].type;
  if (cpu_type_is_dynamic(xt)) {
    cpu_val_t *rv = cpu_val_new(e, &op->results[r]);
    cpu_dyn_init(e, rv, xt, true);
    int idx = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.constant 0 : i64\n", idx);
    *dp = read_dims(e, rv, xt, lp, what, idx);
    return slot_load(e, rv->pslot);
  }
  int xbuf = cpu_result_buf(e, &op->results[r]);
  cpu_val_new(e, &op->results[r])->buf = xbuf;
  return cpu_buf_ptr(e, xbuf, xt);
}

eddy_status_t cpu_list_concat(cpu_emit_t *e, eddy_op_t *op) {
  const eddy_type_t *xt = op->results[0].type, *nt = op->results[1].type;
  EDDY_RETURN_IF_ERROR(cpu_check_type(op, xt));
  EDDY_RETURN_IF_ERROR(cpu_check_type(op, nt));
  int lp = slot_load(e, cpu_val_get(e, eddy_ir_op_operand(op, 0))->buf);
  int dt, rk, dp;
  item_args(e, xt, &dt, &rk, &dp);
  int data = result_ptr(e, op, 0, lp, 2, &dp);
  // The lengths: one per item.
  int lens;
  if (cpu_type_is_dynamic(nt)) {
    cpu_val_t *nv = cpu_val_new(e, &op->results[1]);
    cpu_dyn_init(e, nv, nt, true);
    int n = cpu_fresh(e), d = cpu_fresh(e);
    cpu_p(e,
          "%%t%d = func.call @eddy_rt_entry_%s_length(%%t%d) : (!llvm.ptr) "
          "-> i64\n",
          n, lf(e), lp);
    cpu_p(e, "%%t%d = arith.index_cast %%t%d : i64 to index\n", d, n);
    cpu_dyn_reserve(e, nv, nt, &d, NULL);
    lens = slot_load(e, nv->pslot);
  } else {
    int nbuf = cpu_result_buf(e, &op->results[1]);
    cpu_val_new(e, &op->results[1])->buf = nbuf;
    lens = cpu_buf_ptr(e, nbuf, nt);
  }
  cpu_p(e,
        "func.call @eddy_rt_entry_%s_concat(%%rt, %%t%d, %%t%d, %%t%d, "
        "%%t%d, %%t%d, %%t%d, %%t%d, %%err, %%errlen) : (!llvm.ptr, "
        "!llvm.ptr, !llvm.ptr, i32, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, "
        "!llvm.ptr, i64) -> ()\n",
        lf(e), lp, data, dt, rk, dp, lens, e->eflag_ptr);
  return NULL;
}

eddy_status_t cpu_list_split(cpu_emit_t *e, eddy_op_t *op) {
  eddy_value_t *x = eddy_ir_op_operand(op, 0), *ln = eddy_ir_op_operand(op, 1);
  const eddy_type_t *elem = op->results[0].type->elem;
  if (elem->kind != EDDY_TYPE_TENSOR)
    return cpu_unsupported(op, "cannot split a tensor into a list of lists");
  int data, lptr;
  EDDY_RETURN_IF_ERROR(operand_ptr(e, op, x, &data));
  EDDY_RETURN_IF_ERROR(operand_ptr(e, op, ln, &lptr));
  int n = cpu_fresh(e);
  if (cpu_type_is_dynamic(ln->type)) {
    int d[EDDY_RT_MAX_RANK];
    EDDY_RETURN_IF_ERROR(cpu_dims(e, ln, false, d));
    cpu_p(e, "%%t%d = arith.index_cast %%t%d : index to i64\n", n, d[0]);
  } else {
    cpu_p(e, "%%t%d = arith.constant %lld : i64\n", n,
          (long long)ln->type->dims[0]);
  }
  int ldt = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.constant %d : i32\n", ldt, (int)ln->type->dtype);
  int dt, rk, dp, edt, erk, edp;
  EDDY_RETURN_IF_ERROR(item_args_of(e, x, &dt, &rk, &dp));
  item_args(e, elem, &edt, &erk, &edp);
  int rs = cpu_list_slot(e);
  cpu_val_new(e, &op->results[0])->buf = rs;
  int p = cpu_fresh(e);
  cpu_p(e,
        "%%t%d = func.call @eddy_rt_entry_%s_split(%%rt, %%t%d, %%t%d, "
        "%%t%d, %%t%d, %%t%d, %%t%d, %%t%d, %%t%d, %%t%d, %%t%d, %%err, "
        "%%errlen) : (!llvm.ptr, !llvm.ptr, i32, i32, !llvm.ptr, !llvm.ptr, "
        "i32, i64, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> !llvm.ptr\n",
        p, lf(e), data, dt, rk, dp, lptr, ldt, n, erk, edp, e->eflag_ptr);
  slot_set(e, rs, p);
  return NULL;
}

eddy_status_t cpu_list_length(cpu_emit_t *e, eddy_op_t *op) {
  const eddy_type_t *rt = op->results[0].type;
  int buf = cpu_result_buf(e, &op->results[0]);
  cpu_val_new(e, &op->results[0])->buf = buf;
  int lp = slot_load(e, cpu_val_get(e, eddy_ir_op_operand(op, 0))->buf);
  int n = cpu_fresh(e);
  cpu_p(e,
        "%%t%d = func.call @eddy_rt_entry_%s_length(%%t%d) : (!llvm.ptr) "
        "-> i64\n",
        n, lf(e), lp);
  // (In the GPU target's forms a one-element kernel stores it.)
  cpu_loops_open(e, 0, NULL, NULL);
  cpu_store(e, buf, rt, NULL, n);
  cpu_loops_close(e, 0);
  return NULL;
}

eddy_status_t cpu_list_op(cpu_emit_t *e, eddy_op_t *op) {
  for (uint32_t i = 0; i < op->num_results; i++)
    EDDY_RETURN_IF_ERROR(cpu_check_list_type(op, op->results[i].type));
  for (uint32_t i = 0; i < op->num_operands; i++)
    EDDY_RETURN_IF_ERROR(
        cpu_check_list_type(op, eddy_ir_op_operand(op, i)->type));
  if (e->eflag < 0)
    return eddy_status_create(EDDY_ERR_INTERNAL,
                              "cpu backend: list op without error channel");
  // While no error is recorded, this op is the one a failing list helper
  // gets blamed on (its location prefixes the helper's message).
  {
    const eddy_type_t *i32s = eddy_ir_scalar_type_get(e->ctx, EDDY_DT_I32);
    int site = cpu_error_site(e, op), c = cpu_fresh(e);
    cpu_gate_open(e);
    cpu_p(e, "%%t%d = arith.constant %d : i32\n", c, site);
    cpu_store(e, e->elist, i32s, NULL, c);
    cpu_gate_close(e);
  }
  return cpu_op_info(op)->kernel(e, op);
}

/// The tl ops that take or give an item read it as a tensor or, in a list
/// of lists, as a list.

eddy_status_t cpu_list_push_back(cpu_emit_t *e, eddy_op_t *op) {
  return is_list_type(eddy_ir_op_operand(op, 1)->type)
             ? list_put_list(e, op, false)
             : list_push(e, op);
}

eddy_status_t cpu_list_set_item(cpu_emit_t *e, eddy_op_t *op) {
  return is_list_type(eddy_ir_op_operand(op, 2)->type)
             ? list_put_list(e, op, true)
             : list_set(e, op);
}

eddy_status_t cpu_list_pop_back(cpu_emit_t *e, eddy_op_t *op) {
  return is_list_type(op->results[1].type) ? list_pop_list(e, op)
                                           : list_pop(e, op);
}

eddy_status_t cpu_list_get_item(cpu_emit_t *e, eddy_op_t *op) {
  return is_list_type(op->results[0].type) ? list_get_list(e, op)
                                           : list_read(e, op, false);
}

eddy_status_t cpu_list_stack(cpu_emit_t *e, eddy_op_t *op) {
  return list_read(e, op, true);
}

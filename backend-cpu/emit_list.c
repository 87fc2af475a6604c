/// TensorLists in compiled code: each list value lives in a slot (a
/// memref<i64> holding an eddy_rt_list_t pointer) that owns one reference.
/// The tl ops call libeddyrt through the eddy_rt_entry_list_* helpers
/// (runtime/entry.c). A list operand whose only use is the op, in the same
/// block, is moved (its slot cleared), so the runtime can grow the list in
/// place (a push in a loop is O(1), not a copy of the item table); other
/// operands are retained first. Failures (popping an empty list) go to the
/// entry's error channel.
#include "backend-cpu/emit_internal.h"

#include <string.h>

static const eddy_type_t *i64_scalar(cpu_emit_t *e) {
  return eddy_ir_scalar_type_get(e->ctx, EDDY_DT_I64);
}

eddy_status_t cpu_check_list_type(const eddy_op_t *op, const eddy_type_t *t) {
  if (t->kind != EDDY_TYPE_LIST)
    return cpu_check_type(op, t);
  if (!eddy_ir_type_is_static(t->elem))
    return cpu_unsupported(op, "has a TensorList of dynamically shaped items: "
                               "the CPU backend needs static item shapes");
  return cpu_check_type(op, t->elem);
}

int cpu_list_slot(cpu_emit_t *e) {
  int s = cpu_alloc_buf(e, i64_scalar(e));
  eddy_buf_t body = e->body;
  e->body = e->pro;
  int z = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.constant 0 : i64\n", z);
  cpu_store(e, s, i64_scalar(e), NULL, z);
  e->pro = e->body;
  e->body = body;
  int *slots =
      eddy_arena_alloc(e->arena, sizeof(int) * (size_t)(e->num_list_slots + 1));
  if (e->num_list_slots)
    memcpy(slots, e->list_slots, sizeof(int) * (size_t)e->num_list_slots);
  slots[e->num_list_slots++] = s;
  e->list_slots = slots;
  return s;
}

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

static void call_void(cpu_emit_t *e, const char *fn, int p) {
  cpu_p(e, "func.call @%s(%%t%d) : (!llvm.ptr) -> ()\n", fn, p);
}

/// Stores an owned list pointer into slot, releasing what it held.
static void slot_set(cpu_emit_t *e, int slot, int p) {
  call_void(e, "eddy_rt_entry_list_release", slot_load(e, slot));
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
    call_void(e, "eddy_rt_entry_list_retain", p);
  slot_set(e, dst, p);
}

void cpu_list_copy_slot(cpu_emit_t *e, int src, int dst) {
  int p = slot_load(e, src);
  call_void(e, "eddy_rt_entry_list_retain", p);
  slot_set(e, dst, p);
}

void cpu_list_cleanup(cpu_emit_t *e) {
  for (int i = 0; i < e->num_list_slots; i++)
    call_void(e, "eddy_rt_entry_list_release", slot_load(e, e->list_slots[i]));
}

/// %tN = the aligned data pointer of memref buf as !llvm.ptr.
static int buf_ptr(cpu_emit_t *e, int buf, const eddy_type_t *t) {
  int i = cpu_fresh(e), j = cpu_fresh(e), p = cpu_fresh(e);
  cpu_p(e,
        "%%t%d = memref.extract_aligned_pointer_as_index %%t%d : %s -> "
        "index\n",
        i, buf, cpu_mtype(e, t));
  cpu_p(e, "%%t%d = arith.index_cast %%t%d : index to i64\n", j, i);
  cpu_p(e, "%%t%d = llvm.inttoptr %%t%d : i64 to !llvm.ptr\n", p, j);
  return p;
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

static int bool_const(cpu_emit_t *e, bool b) {
  int t = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.constant %d : i32\n", t, b ? 1 : 0);
  return t;
}

static eddy_status_t list_empty(cpu_emit_t *e, eddy_op_t *op) {
  const eddy_type_t *elem = op->results[0].type->elem;
  int rs = cpu_list_slot(e);
  cpu_val_new(e, &op->results[0])->buf = rs;
  int dt, rk, dp;
  item_args(e, elem, &dt, &rk, &dp);
  int mx = cpu_fresh(e), p = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.constant %lld : i64\n", mx,
        (long long)eddy_ir_op_attr_int(op, "max_elements", -1));
  cpu_p(e,
        "%%t%d = func.call @eddy_rt_entry_list_empty(%%rt, %%t%d, %%t%d, "
        "%%t%d, %%t%d, %%t%d, %%err, %%errlen) : (!llvm.ptr, i32, i32, "
        "!llvm.ptr, i64, !llvm.ptr, !llvm.ptr, i64) -> !llvm.ptr\n",
        p, dt, rk, dp, mx, e->eflag_ptr);
  slot_set(e, rs, p);
  return NULL;
}

/// %tN = pointer to the data of tensor operand x (a splat constant is
/// materialized first).
static eddy_status_t operand_ptr(cpu_emit_t *e, const eddy_op_t *op,
                                 eddy_value_t *x, int *out) {
  EDDY_RETURN_IF_ERROR(cpu_check_type(op, x->type));
  int xbuf = cpu_val_get(e, x)->buf;
  if (xbuf < 0) {
    xbuf = cpu_alloc_buf(e, x->type);
    EDDY_RETURN_IF_ERROR(cpu_copy_value(e, x, xbuf, x->type));
  }
  *out = buf_ptr(e, xbuf, x->type);
  return NULL;
}

/// %tN = the scalar integer operand v as i64.
static eddy_status_t index_i64(cpu_emit_t *e, eddy_value_t *v, int *out) {
  int x;
  EDDY_RETURN_IF_ERROR(cpu_expr(e, v, NULL, &x));
  if (v->type->dtype != EDDY_DT_I64) {
    int t = cpu_fresh(e);
    cpu_p(e, "%%t%d = arith.extsi %%t%d : %s to i64\n", t, x,
          cpu_reg_type(v->type->dtype));
    x = t;
  }
  *out = x;
  return NULL;
}

static eddy_status_t list_reserve(cpu_emit_t *e, eddy_op_t *op) {
  const eddy_type_t *elem = op->results[0].type->elem;
  int n;
  EDDY_RETURN_IF_ERROR(index_i64(e, eddy_ir_op_operand(op, 0), &n));
  int rs = cpu_list_slot(e);
  cpu_val_new(e, &op->results[0])->buf = rs;
  int dt, rk, dp;
  item_args(e, elem, &dt, &rk, &dp);
  int p = cpu_fresh(e);
  cpu_p(e,
        "%%t%d = func.call @eddy_rt_entry_list_reserve(%%rt, %%t%d, %%t%d, "
        "%%t%d, %%t%d, %%t%d, %%err, %%errlen) : (!llvm.ptr, i32, i32, "
        "!llvm.ptr, i64, !llvm.ptr, !llvm.ptr, i64) -> !llvm.ptr\n",
        p, dt, rk, dp, n, e->eflag_ptr);
  slot_set(e, rs, p);
  return NULL;
}

static eddy_status_t list_from_tensor(cpu_emit_t *e, eddy_op_t *op) {
  eddy_value_t *x = eddy_ir_op_operand(op, 0);
  int data;
  EDDY_RETURN_IF_ERROR(operand_ptr(e, op, x, &data));
  int rs = cpu_list_slot(e);
  cpu_val_new(e, &op->results[0])->buf = rs;
  int dt, rk, dp;
  item_args(e, x->type, &dt, &rk, &dp);
  int p = cpu_fresh(e);
  cpu_p(e,
        "%%t%d = func.call @eddy_rt_entry_list_from_tensor(%%rt, %%t%d, "
        "%%t%d, %%t%d, %%t%d, %%t%d, %%err, %%errlen) : (!llvm.ptr, "
        "!llvm.ptr, i32, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> "
        "!llvm.ptr\n",
        p, data, dt, rk, dp, e->eflag_ptr);
  slot_set(e, rs, p);
  return NULL;
}

/// get_item and stack: a tensor copied out of a list that is only read.
static eddy_status_t list_read(cpu_emit_t *e, eddy_op_t *op, bool stack) {
  const eddy_type_t *xt = op->results[0].type;
  EDDY_RETURN_IF_ERROR(cpu_check_type(op, xt));
  int idx = -1;
  if (!stack)
    EDDY_RETURN_IF_ERROR(index_i64(e, eddy_ir_op_operand(op, 1), &idx));
  int xbuf = cpu_result_buf(e, &op->results[0]);
  cpu_val_new(e, &op->results[0])->buf = xbuf;
  int data = buf_ptr(e, xbuf, xt);
  int lp = slot_load(e, cpu_val_get(e, eddy_ir_op_operand(op, 0))->buf);
  int dt, rk, dp;
  item_args(e, xt, &dt, &rk, &dp);
  if (stack)
    cpu_p(e,
          "func.call @eddy_rt_entry_list_stack(%%rt, %%t%d, %%t%d, %%t%d, "
          "%%t%d, %%t%d, %%t%d, %%err, %%errlen) : (!llvm.ptr, !llvm.ptr, "
          "!llvm.ptr, i32, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> ()\n",
          lp, data, dt, rk, dp, e->eflag_ptr);
  else
    cpu_p(e,
          "func.call @eddy_rt_entry_list_get(%%rt, %%t%d, %%t%d, %%t%d, "
          "%%t%d, %%t%d, %%t%d, %%t%d, %%err, %%errlen) : (!llvm.ptr, "
          "!llvm.ptr, i64, !llvm.ptr, i32, i32, !llvm.ptr, !llvm.ptr, "
          "!llvm.ptr, i64) -> ()\n",
          lp, idx, data, dt, rk, dp, e->eflag_ptr);
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
  item_args(e, x->type, &dt, &rk, &dp);
  int p = cpu_fresh(e);
  cpu_p(e,
        "%%t%d = func.call @eddy_rt_entry_list_set(%%rt, %%t%d, %%t%d, "
        "%%t%d, %%t%d, %%t%d, %%t%d, %%t%d, %%t%d, %%err, %%errlen) : "
        "(!llvm.ptr, !llvm.ptr, i32, i64, !llvm.ptr, i32, i32, !llvm.ptr, "
        "!llvm.ptr, !llvm.ptr, i64) -> !llvm.ptr\n",
        p, lp, mv, idx, data, dt, rk, dp, e->eflag_ptr);
  slot_set(e, rs, p);
  cpu_val_new(e, &op->results[0])->buf = rs;
  return NULL;
}

static eddy_status_t list_push(cpu_emit_t *e, eddy_op_t *op) {
  eddy_value_t *l = eddy_ir_op_operand(op, 0), *x = eddy_ir_op_operand(op, 1);
  const eddy_type_t *xt = x->type;
  int data;
  EDDY_RETURN_IF_ERROR(operand_ptr(e, op, x, &data));
  int rs = cpu_list_slot(e);
  bool moved;
  int lp = take(e, l, op, &moved);
  int mv = bool_const(e, moved);
  int dt, rk, dp;
  item_args(e, xt, &dt, &rk, &dp);
  int p = cpu_fresh(e);
  cpu_p(e,
        "%%t%d = func.call @eddy_rt_entry_list_push(%%rt, %%t%d, %%t%d, "
        "%%t%d, %%t%d, %%t%d, %%t%d, %%t%d, %%err, %%errlen) : (!llvm.ptr, "
        "!llvm.ptr, i32, !llvm.ptr, i32, i32, !llvm.ptr, !llvm.ptr, "
        "!llvm.ptr, i64) -> !llvm.ptr\n",
        p, lp, mv, data, dt, rk, dp, e->eflag_ptr);
  slot_set(e, rs, p);
  cpu_val_new(e, &op->results[0])->buf = rs;
  return NULL;
}

static eddy_status_t list_pop(cpu_emit_t *e, eddy_op_t *op) {
  eddy_value_t *l = eddy_ir_op_operand(op, 0);
  const eddy_type_t *xt = op->results[1].type;
  EDDY_RETURN_IF_ERROR(cpu_check_type(op, xt));
  int xbuf = cpu_result_buf(e, &op->results[1]);
  cpu_val_new(e, &op->results[1])->buf = xbuf;
  int data = buf_ptr(e, xbuf, xt);
  int rs = cpu_list_slot(e);
  bool moved;
  int lp = take(e, l, op, &moved);
  int mv = bool_const(e, moved);
  int dt, rk, dp;
  item_args(e, xt, &dt, &rk, &dp);
  int p = cpu_fresh(e);
  cpu_p(e,
        "%%t%d = func.call @eddy_rt_entry_list_pop(%%rt, %%t%d, %%t%d, "
        "%%t%d, %%t%d, %%t%d, %%t%d, %%t%d, %%err, %%errlen) : (!llvm.ptr, "
        "!llvm.ptr, i32, !llvm.ptr, i32, i32, !llvm.ptr, !llvm.ptr, "
        "!llvm.ptr, i64) -> !llvm.ptr\n",
        p, lp, mv, data, dt, rk, dp, e->eflag_ptr);
  slot_set(e, rs, p);
  cpu_val_new(e, &op->results[0])->buf = rs;
  return NULL;
}

static eddy_status_t list_length(cpu_emit_t *e, eddy_op_t *op) {
  const eddy_type_t *rt = op->results[0].type;
  int buf = cpu_result_buf(e, &op->results[0]);
  cpu_val_new(e, &op->results[0])->buf = buf;
  int lp = slot_load(e, cpu_val_get(e, eddy_ir_op_operand(op, 0))->buf);
  int n = cpu_fresh(e);
  cpu_p(e,
        "%%t%d = func.call @eddy_rt_entry_list_length(%%t%d) : (!llvm.ptr) "
        "-> i64\n",
        n, lp);
  cpu_store(e, buf, rt, NULL, n);
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
  if (eddy_ir_op_is(op, "tl.empty"))
    return list_empty(e, op);
  if (eddy_ir_op_is(op, "tl.push_back"))
    return list_push(e, op);
  if (eddy_ir_op_is(op, "tl.pop_back"))
    return list_pop(e, op);
  if (eddy_ir_op_is(op, "tl.length"))
    return list_length(e, op);
  if (eddy_ir_op_is(op, "tl.reserve"))
    return list_reserve(e, op);
  if (eddy_ir_op_is(op, "tl.from_tensor"))
    return list_from_tensor(e, op);
  if (eddy_ir_op_is(op, "tl.get_item"))
    return list_read(e, op, false);
  if (eddy_ir_op_is(op, "tl.stack"))
    return list_read(e, op, true);
  if (eddy_ir_op_is(op, "tl.set_item"))
    return list_set(e, op);
  return cpu_unsupported(op, "is not supported by the CPU backend yet");
}

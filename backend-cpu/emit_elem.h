/// Small builders of arith/math text shared by the kernels of emit_expr.c
/// and emit_index.c (internal to backend-cpu): constants, one- and
/// two-operand ops, compares and selects, the f16/bf16 widening to the type
/// floats compute in, and the loop nest over a value's run-time dims.
#ifndef EDDY_BACKEND_CPU_EMIT_ELEM_H
#define EDDY_BACKEND_CPU_EMIT_ELEM_H

#include "backend-cpu/emit_internal.h"

#include <math.h>
#include <string.h>

/// f16 and bf16 compute in f32 (the contract rounds from f32 for them).
static inline bool is_half(eddy_dtype_t dt) {
  return dt == EDDY_DT_F16 || dt == EDDY_DT_BF16;
}

/// The type floats compute in.
static inline const char *calc_type(eddy_dtype_t dt) {
  return is_half(dt) ? "f32" : cpu_reg_type(dt);
}

/// A float constant in type ty ("f32"/"f64") from a double.
static inline int fconst(cpu_emit_t *e, const char *ty, double v) {
  int t = cpu_fresh(e);
  if (strcmp(ty, "f64") == 0) {
    uint64_t bits;
    memcpy(&bits, &v, 8);
    cpu_p(e, "%%t%d = arith.constant 0x%016llX : f64\n", t,
          (unsigned long long)bits);
  } else {
    float f = (float)v;
    uint32_t bits;
    memcpy(&bits, &f, 4);
    cpu_p(e, "%%t%d = arith.constant 0x%08X : f32\n", t, bits);
  }
  return t;
}

static inline int iconst(cpu_emit_t *e, const char *ty, int64_t v) {
  int t = cpu_fresh(e);
  if (strcmp(ty, "i1") == 0)
    cpu_p(e, "%%t%d = arith.constant %s\n", t, v ? "true" : "false");
  else
    cpu_p(e, "%%t%d = arith.constant %lld : %s\n", t, (long long)v, ty);
  return t;
}

static inline int op1(cpu_emit_t *e, const char *name, int a, const char *ty) {
  int t = cpu_fresh(e);
  cpu_p(e, "%%t%d = %s %%t%d : %s\n", t, name, a, ty);
  return t;
}

static inline int op2(cpu_emit_t *e, const char *name, int a, int b,
                      const char *ty) {
  int t = cpu_fresh(e);
  cpu_p(e, "%%t%d = %s %%t%d, %%t%d : %s\n", t, name, a, b, ty);
  return t;
}

static inline int cmp(cpu_emit_t *e, const char *kind, const char *pred,
                      int a, int b,
               const char *ty) {
  int t = cpu_fresh(e);
  cpu_p(e, "%%t%d = %s %s, %%t%d, %%t%d : %s\n", t, kind, pred, a, b, ty);
  return t;
}

static inline int sel(cpu_emit_t *e, int c, int a, int b, const char *ty) {
  int t = cpu_fresh(e);
  cpu_p(e, "%%t%d = arith.select %%t%d, %%t%d, %%t%d : %s\n", t, c, a, b, ty);
  return t;
}

static inline int to_calc(cpu_emit_t *e, eddy_dtype_t dt, int v) {
  return is_half(dt) ? cpu_float_widen(e, dt, "f32", v) : v;
}

static inline int from_calc(cpu_emit_t *e, eddy_dtype_t dt, int v) {
  return is_half(dt) ? cpu_float_narrow(e, "f32", dt, v) : v;
}

/// Opens the loop nest over v's run-time dims (static bounds when v's type
/// is static).
static inline eddy_status_t loops_over(cpu_emit_t *e, eddy_value_t *v,
                                       int *idx) {
  const eddy_type_t *t = v->type;
  if (!cpu_type_is_dynamic(t)) {
    cpu_loops_open(e, t->rank, t->dims, idx);
    return NULL;
  }
  int d[EDDY_RT_MAX_RANK];
  EDDY_RETURN_IF_ERROR(cpu_dims(e, v, false, d));
  cpu_loops_open_v(e, t->rank, d, idx);
  return NULL;
}

/// The run-time dims of v as index values (constants where static).
static inline eddy_status_t dims_v(cpu_emit_t *e, eddy_value_t *v, int *d) {
  if (cpu_type_is_dynamic(v->type))
    return cpu_dims(e, v, false, d);
  for (int32_t i = 0; i < v->type->rank; i++)
    d[i] = cpu_index_const(e, v->type->dims[i]);
  return NULL;
}

/// ---- f32 exp, expm1, log, tanh and sigmoid as inline arith ops
/// (emit_vmath.c): each takes and gives an f32 register value.

/// True where they replace the math ops for a value of dtype dt: f32 (and
/// f16/bf16, computed in f32) in the CPU target's host code, unless
/// eddy_cpu_opts_t.libm_math is set.
bool cpu_vmath_applies(const cpu_emit_t *e, eddy_dtype_t dt);
int cpu_vmath_exp(cpu_emit_t *e, int x);
int cpu_vmath_expm1(cpu_emit_t *e, int x);
int cpu_vmath_log(cpu_emit_t *e, int x);
int cpu_vmath_tanh(cpu_emit_t *e, int x);
int cpu_vmath_sigmoid(cpu_emit_t *e, int x);

/// The kernels of emit_index.c (their entries are in emit_expr.c's table).
eddy_status_t cpu_kernel_reverse(cpu_emit_t *e, eddy_op_t *op);
eddy_status_t cpu_kernel_arg(cpu_emit_t *e, eddy_op_t *op);
eddy_status_t cpu_kernel_cumulative(cpu_emit_t *e, eddy_op_t *op);
eddy_status_t cpu_kernel_scatter(cpu_emit_t *e, eddy_op_t *op);
eddy_status_t cpu_kernel_topk(cpu_emit_t *e, eddy_op_t *op);
eddy_status_t cpu_kernel_where(cpu_emit_t *e, eddy_op_t *op);
/// emit_window.c: conv2d and the pools, and their gradient ops.
eddy_status_t cpu_kernel_window(cpu_emit_t *e, eddy_op_t *op);

#endif

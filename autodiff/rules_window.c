/// Gradient rules of the sliding-window ops. conv2d, conv2d_input_grad and
/// conv2d_filter_grad are bilinear and each one's adjoints are the other
/// two (or conv2d itself), so the family is closed under differentiation to
/// any order; avg_pool and avg_pool_grad are linear and each other's
/// transpose; max_pool's gradient is max_pool_grad, whose gradient with
/// respect to its adjoint is the two-operand max_pool (the adjoint's
/// elements at the maxima), whose gradient is max_pool_grad again.
#include "autodiff/ad_internal.h"

#include "dialects/core/core.h"
#include "dialects/dialects.h"

#define TRY EDDY_RETURN_IF_ERROR

/// Emits `name`(a[, b]) with op's window (and size_name = size).
static eddy_status_t emit_window(ad_scope_t *s, eddy_op_t *op,
                                 const char *name, eddy_value_t *a,
                                 eddy_value_t *b, const char *size_name,
                                 const int64_t *size, eddy_value_t **out) {
  eddy_core_window_t w;
  eddy_core_window_get(op, &w);
  eddy_named_attr_t attrs[5];
  size_t na =
      eddy_core_window_attrs(s->ad->ctx, name, &w, size_name, size, attrs);
  eddy_value_t *ops[2] = {a, b};
  return ad_emit(s, name, ops, b ? 2 : 1, attrs, na, out);
}

/// The static spatial dims (1 and 2) of v's type, or an error at op.
static eddy_status_t spatial(eddy_op_t *op, const eddy_value_t *v,
                             int64_t *out) {
  const eddy_type_t *t = v->type;
  if (t->rank != 4 || t->dims[1] < 0 || t->dims[2] < 0)
    return eddy_ir_op_error(op, "autodiff needs the height and width of "
                                "operand %s static",
                            t->rank == 4 ? "of rank 4" : "(not rank 4)");
  out[0] = t->dims[1];
  out[1] = t->dims[2];
  return NULL;
}

/// The static kernel dims (0 and 1) of a filter-shaped value.
static void taps(const eddy_value_t *v, int64_t *out) {
  out[0] = v->type->dims[0];
  out[1] = v->type->dims[1];
}

eddy_status_t ad_rule_window(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g) {
  if (!g[0])
    return NULL;
  eddy_value_t *a0 = eddy_ir_op_operand(op, 0);
  eddy_value_t *a1 = op->num_operands > 1 ? eddy_ir_op_operand(op, 1) : NULL;
  bool act0 = ad_active(s->ad, a0), act1 = a1 && ad_active(s->ad, a1);
  eddy_value_t *x = NULL, *y = NULL, *r = NULL;
  int64_t hw[2], kk[2];
  switch (eddy_dialects_opcode(op)) {
  case EDDY_OP_CORE_CONV2D: // (x, w)
    if (act0) {
      TRY(spatial(op, a0, hw));
      TRY(ad_fwd(s, a1, &y));
      TRY(emit_window(s, op, "core.conv2d_input_grad", g[0], y, "input_size",
                      hw, &r));
      TRY(ad_adj_add(s, a0, r));
    }
    if (act1) {
      taps(a1, kk);
      TRY(ad_fwd(s, a0, &x));
      TRY(emit_window(s, op, "core.conv2d_filter_grad", x, g[0],
                      "filter_size", kk, &r));
      TRY(ad_adj_add(s, a1, r));
    }
    return NULL;
  case EDDY_OP_CORE_CONV2D_INPUT_GRAD: // (dy, w) -> dx
    if (act0) {
      TRY(ad_fwd(s, a1, &y));
      TRY(emit_window(s, op, "core.conv2d", g[0], y, NULL, NULL, &r));
      TRY(ad_adj_add(s, a0, r));
    }
    if (act1) {
      taps(a1, kk);
      TRY(ad_fwd(s, a0, &x));
      TRY(emit_window(s, op, "core.conv2d_filter_grad", g[0], x,
                      "filter_size", kk, &r));
      TRY(ad_adj_add(s, a1, r));
    }
    return NULL;
  case EDDY_OP_CORE_CONV2D_FILTER_GRAD: // (x, dy) -> dw
    if (act0) {
      TRY(spatial(op, a0, hw));
      TRY(ad_fwd(s, a1, &y));
      TRY(emit_window(s, op, "core.conv2d_input_grad", y, g[0], "input_size",
                      hw, &r));
      TRY(ad_adj_add(s, a0, r));
    }
    if (act1) {
      TRY(ad_fwd(s, a0, &x));
      TRY(emit_window(s, op, "core.conv2d", x, g[0], NULL, NULL, &r));
      TRY(ad_adj_add(s, a1, r));
    }
    return NULL;
  case EDDY_OP_CORE_MAX_POOL:
    // max_pool(x): x's maxima; max_pool(x, v): v's elements there, linear
    // in v, piecewise constant in x. Either way the adjoint goes to the
    // maxima's positions.
    if (a1 ? act1 : act0) {
      TRY(ad_fwd(s, a0, &x));
      TRY(emit_window(s, op, "core.max_pool_grad", x, g[0], NULL, NULL, &r));
      TRY(ad_adj_add(s, a1 ? a1 : a0, r));
    }
    return NULL;
  case EDDY_OP_CORE_AVG_POOL:
    if (act0) {
      TRY(spatial(op, a0, hw));
      TRY(emit_window(s, op, "core.avg_pool_grad", g[0], NULL, "input_size",
                      hw, &r));
      TRY(ad_adj_add(s, a0, r));
    }
    return NULL;
  case EDDY_OP_CORE_AVG_POOL_GRAD:
    if (act0) {
      TRY(emit_window(s, op, "core.avg_pool", g[0], NULL, NULL, NULL, &r));
      TRY(ad_adj_add(s, a0, r));
    }
    return NULL;
  case EDDY_OP_CORE_MAX_POOL_GRAD:
    // Piecewise constant in x (the maxima's positions); linear in dy, its
    // transpose reading the adjoint at the maxima: max_pool(x, g).
    if (act1) {
      TRY(ad_fwd(s, a0, &x));
      TRY(emit_window(s, op, "core.max_pool", x, g[0], NULL, NULL, &r));
      TRY(ad_adj_add(s, a1, r));
    }
    return NULL;
  default:
    return eddy_ir_op_error(op, "is not a sliding-window op");
  }
}

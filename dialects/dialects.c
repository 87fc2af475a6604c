/// Registration of eddy's dialects, and the helpers their verifiers share.
#include "dialects/dialects.h"

#include "dialects/dialects_internal.h"

#include <stdlib.h>

void eddy_dialects_register_all(eddy_ctx_t *ctx) {
  eddy_ir_ctx_register_dialect(ctx, &eddy_core_dialect);
  eddy_ir_ctx_register_dialect(ctx, &eddy_ctl_dialect);
  eddy_ir_ctx_register_dialect(ctx, &eddy_tl_dialect);
  eddy_ir_ctx_register_dialect(ctx, &eddy_df_dialect);
}

static const char *const eddy_dialects_opcode_names[EDDY_OP_COUNT_] = {
#define EDDY_OPCODE_CORE(e, n) [EDDY_OP_CORE_##e] = "core." n,
    EDDY_CORE_OP_LIST(EDDY_OPCODE_CORE)
#undef EDDY_OPCODE_CORE
#define EDDY_OPCODE_CTL(e, n) [EDDY_OP_CTL_##e] = "ctl." n,
    EDDY_CTL_OP_LIST(EDDY_OPCODE_CTL)
#undef EDDY_OPCODE_CTL
#define EDDY_OPCODE_TL(e, n) [EDDY_OP_TL_##e] = "tl." n,
    EDDY_TL_OP_LIST(EDDY_OPCODE_TL)
#undef EDDY_OPCODE_TL
};

const char *eddy_dialects_opcode_name(eddy_opcode_t code) {
  return code > EDDY_OP_NONE && code < EDDY_OP_COUNT_
             ? eddy_dialects_opcode_names[code]
             : "?";
}

const char *eddy_tt(eddy_tt_t *tt, const eddy_type_t *t) {
  if (!t)
    return "<null type>";
  if (tt->n >= (int)(sizeof(tt->text) / sizeof(tt->text[0])))
    return "?";
  eddy_buf_t b;
  eddy_buf_init(&b);
  eddy_ir_type_print(t, &b);
  char *s = eddy_buf_take(&b);
  eddy_buf_destroy(&b);
  if (!s)
    return "?";
  tt->text[tt->n++] = s;
  return s;
}

void eddy_tt_free(eddy_tt_t *tt) {
  for (int i = 0; i < tt->n; i++)
    free(tt->text[i]);
  tt->n = 0;
}

bool eddy_dialects_is_pred_type(const eddy_type_t *t) {
  return t && t->kind == EDDY_TYPE_TENSOR && t->dtype == EDDY_DT_I1 &&
         (t->rank == 0 || t->rank == EDDY_RANK_UNKNOWN);
}

bool eddy_dialects_is_index_type(const eddy_type_t *t) {
  return t && t->kind == EDDY_TYPE_TENSOR && eddy_dtype_is_int(t->dtype) &&
         (t->rank == 0 || t->rank == EDDY_RANK_UNKNOWN);
}

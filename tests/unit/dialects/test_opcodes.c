/// Opcodes: every core, ctl and tl op of the op lists is registered with
/// its opcode, and every registered op of those dialects has the opcode of
/// its name, so that the tables indexed by opcode (evaluator, autodiff, CPU
/// backend) see each op under one number. Ops of other dialects (df, tf,
/// builtin) have none.
#include "dialects/dialects.h"
#include "dialects/tf/tf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static void test_every_opcode_is_registered(void **state) {
  (void)state;
  eddy_ctx_t *ctx = eddy_ir_ctx_create();
  eddy_dialects_register_all(ctx);
  for (int c = EDDY_OP_NONE + 1; c < EDDY_OP_COUNT_; c++) {
    const char *name = eddy_dialects_opcode_name((eddy_opcode_t)c);
    const eddy_op_def_t *def = eddy_ir_ctx_lookup_op(ctx, name, strlen(name));
    if (!def)
      fail_msg("%s is in an op list but not in its dialect's table", name);
    if (def->opcode != c)
      fail_msg("%s is registered with opcode %d, not %d", name, def->opcode, c);
  }
  assert_string_equal(eddy_dialects_opcode_name(EDDY_OP_NONE), "?");
  assert_string_equal(eddy_dialects_opcode_name(EDDY_OP_COUNT_), "?");
  eddy_ir_ctx_destroy(ctx);
}

static void check_def(const eddy_op_def_t *def, void *user) {
  int *seen = user;
  const char *d = def->dialect->name;
  bool has =
      strcmp(d, "core") == 0 || strcmp(d, "ctl") == 0 || strcmp(d, "tl") == 0;
  if (!has) {
    if (def->opcode != EDDY_OP_NONE)
      fail_msg("%s has opcode %d", def->name, def->opcode);
    return;
  }
  if (def->opcode == EDDY_OP_NONE || def->opcode >= EDDY_OP_COUNT_)
    fail_msg("%s has no opcode (missing from its op list, or its table "
             "entry sets none)",
             def->name);
  const char *name = eddy_dialects_opcode_name((eddy_opcode_t)def->opcode);
  if (strcmp(name, def->name) != 0)
    fail_msg("%s has the opcode of %s", def->name, name);
  (*seen)++;
}

static void test_every_op_has_its_opcode(void **state) {
  (void)state;
  eddy_ctx_t *ctx = eddy_ir_ctx_create();
  eddy_dialects_register_all(ctx);
  eddy_tf_dialect_register(ctx);
  int seen = 0;
  eddy_ir_ctx_each_op_def(ctx, check_def, &seen);
  assert_int_equal(seen, EDDY_OP_COUNT_ - 1);
  eddy_ir_ctx_destroy(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_opcode_is_registered),
      cmocka_unit_test(test_every_op_has_its_opcode),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

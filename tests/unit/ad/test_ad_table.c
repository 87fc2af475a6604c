/// Autodiff's rule table: an entry for every core, ctl and tl opcode, a rule
/// or the reason for none. The ops without a rule are pinned down here, so
/// that a rule does not disappear unnoticed either.
#include "autodiff/ad.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tests/unit/common/opcode_table.h"

static void test_every_opcode_has_an_entry(void **state) {
  (void)state;
  check_opcode_table("autodiff", eddy_ad_opcode_has_rule);
  static const eddy_opcode_t unhandled[] = {
      EDDY_OP_CORE_CONSTANT, EDDY_OP_CORE_IOTA,  EDDY_OP_CORE_FLOOR,
      EDDY_OP_CORE_SIGN,     EDDY_OP_CORE_CEIL,  EDDY_OP_CORE_ROUND,
      EDDY_OP_CORE_EQ,       EDDY_OP_CORE_NE,
      EDDY_OP_CORE_LT,       EDDY_OP_CORE_LE,    EDDY_OP_CORE_GT,
      EDDY_OP_CORE_GE,       EDDY_OP_CORE_AND,   EDDY_OP_CORE_OR,
      EDDY_OP_CORE_NOT,      EDDY_OP_CORE_SHAPE, EDDY_OP_CORE_DIM,
      EDDY_OP_CORE_BITAND,   EDDY_OP_CORE_BITOR, EDDY_OP_CORE_BITXOR,
      EDDY_OP_CORE_BITNOT,   EDDY_OP_CORE_SHIFT_LEFT,
      EDDY_OP_CORE_SHIFT_RIGHT,
      EDDY_OP_CORE_RANGE,
      EDDY_OP_TL_EMPTY,      EDDY_OP_TL_RESERVE, EDDY_OP_TL_LENGTH,
      EDDY_OP_TL_ZEROS_LIKE,
      EDDY_OP_CTL_CALL,      EDDY_OP_CTL_YIELD,  EDDY_OP_CTL_CONDITION,
      EDDY_OP_CORE_ARGMAX,   EDDY_OP_CORE_ARGMIN, EDDY_OP_CORE_WHERE,
      EDDY_OP_CORE_STOP_GRADIENT, EDDY_OP_NONE};
  check_unhandled(eddy_ad_opcode_has_rule, unhandled);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_opcode_has_an_entry),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

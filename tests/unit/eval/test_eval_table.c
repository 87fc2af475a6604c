/// The evaluator's handler table: an entry for every core, ctl and tl
/// opcode, a handler for each but the terminators, which the op holding
/// their region reads.
#include "runtime/eval/eval.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tests/unit/common/opcode_table.h"

static void test_every_opcode_has_an_entry(void **state) {
  (void)state;
  check_opcode_table("the evaluator", eddy_eval_opcode_supported);
  static const eddy_opcode_t unhandled[] = {
      EDDY_OP_CTL_YIELD, EDDY_OP_CTL_CONDITION, EDDY_OP_NONE};
  check_unhandled(eddy_eval_opcode_supported, unhandled);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_opcode_has_an_entry),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

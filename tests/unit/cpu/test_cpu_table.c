/// The CPU backend's op table (which the GPU target shares): an entry for
/// every core, ctl and tl opcode, with what its class needs (a per-element
/// function for pointwise ops, a kernel for the others), except the
/// terminators, which the op holding their region emits.
#include "backend-cpu/cpu.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tests/unit/common/opcode_table.h"

static void test_every_opcode_has_an_entry(void **state) {
  (void)state;
  check_opcode_table("the CPU backend", eddy_cpu_opcode_supported);
  static const eddy_opcode_t unhandled[] = {
      EDDY_OP_CTL_YIELD, EDDY_OP_CTL_CONDITION, EDDY_OP_NONE};
  check_unhandled(eddy_cpu_opcode_supported, unhandled);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_opcode_has_an_entry),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

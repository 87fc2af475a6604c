/// What libeddyrt copies from the IR and cannot assert at compile time
/// (runtime/rt_ir.h asserts the numbering): the dtypes' names, sizes and
/// classes agree, dtype by dtype.
#include "ir/ir.h"
#include "runtime/rt_ir.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

static void test_dtypes_agree(void **state) {
  (void)state;
  for (int d = 0; d < EDDY_DT_COUNT_; d++) {
    eddy_dtype_t dt = (eddy_dtype_t)d;
    assert_string_equal(eddy_rt_dtype_name(d), eddy_dtype_name(dt));
    assert_int_equal(eddy_rt_dtype_size(d), eddy_dtype_size(dt));
    assert_int_equal(eddy_rt_dtype_is_float(d), eddy_dtype_is_float(dt));
    assert_int_equal(eddy_rt_dtype_is_int(d), eddy_dtype_is_int(dt));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dtypes_agree),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

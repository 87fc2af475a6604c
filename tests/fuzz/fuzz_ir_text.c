/// Fuzz target: eddy IR text. Parse and verify; a module that verifies is
/// printed, and its text must parse, verify and print the same again
/// (print(parse(text)) == text, ir/ir.h), with and without locations.
#include "tests/fuzz/fuzz.h"

#include <string.h>

/// Parses text and prints it into out; false when it does not parse and
/// verify (then *err holds why).
static bool round_trip(eddy_ctx_t *ctx, const char *text, size_t len,
                       bool locations, eddy_buf_t *out, eddy_status_t *err) {
  eddy_module_t *m = NULL;
  eddy_status_t st = eddy_ir_parse_module(ctx, "fuzz.eddy", text, len, &m);
  if (!st)
    st = eddy_ir_verify_module(m);
  if (!st) {
    eddy_print_opts_t po = {.locations = locations};
    eddy_ir_module_print(m, &po, out);
  }
  if (m)
    eddy_ir_module_destroy(m);
  *err = st;
  return st == NULL;
}

static void check_locations(const uint8_t *data, size_t size,
                            bool locations) {
  eddy_ctx_t *ctx = eddy_fuzz_ctx_create();
  if (!ctx)
    return;
  eddy_buf_t first, second;
  eddy_buf_init(&first);
  eddy_buf_init(&second);
  eddy_status_t st = NULL;
  if (round_trip(ctx, (const char *)data, size, locations, &first, &st)) {
    const char *text = first.data ? first.data : "";
    if (!round_trip(ctx, text, first.len, locations, &second, &st))
      eddy_fuzz_fail("the printed module does not parse back: %s\n--- "
                     "printed:\n%s",
                     eddy_status_message(st), text);
    if (first.len != second.len ||
        memcmp(text, second.data ? second.data : "", first.len) != 0)
      eddy_fuzz_fail("the reparsed module prints differently\n--- first:\n"
                     "%s\n--- second:\n%s",
                     text, second.data ? second.data : "");
  }
  eddy_fuzz_ignore(st);
  eddy_buf_destroy(&first);
  eddy_buf_destroy(&second);
  eddy_ir_ctx_destroy(ctx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  check_locations(data, size, false);
  check_locations(data, size, true);
  return 0;
}

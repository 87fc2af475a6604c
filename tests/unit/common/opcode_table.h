/// The completeness check every per-opcode table of eddy gets (the
/// evaluator's handlers, autodiff's rules, the CPU backend's op table): each
/// core, ctl and tl opcode has an entry that handles it or says why it does
/// not. An op added to its dialect's op list without its entry in one of
/// these tables fails the consumer's test, naming the op. Static inline, as
/// every tests/unit/*/test_*.c is built on its own; include after
/// <cmocka.h>.
#ifndef EDDY_TESTS_UNIT_COMMON_OPCODE_TABLE_H
#define EDDY_TESTS_UNIT_COMMON_OPCODE_TABLE_H

#include "dialects/dialects.h"

#include <stdio.h>
#include <string.h>

/// query(code, &reason) as eddy_eval_opcode_supported and its siblings:
/// true when handled, else reason says why (NULL: no entry). Fails listing
/// every opcode without an entry; returns how many are handled.
static inline int check_opcode_table(const char *who,
                                     bool (*query)(eddy_opcode_t,
                                                   const char **)) {
  int handled = 0, gaps = 0;
  for (int c = EDDY_OP_NONE + 1; c < EDDY_OP_COUNT_; c++) {
    const char *why = NULL;
    if (query((eddy_opcode_t)c, &why)) {
      handled++;
      continue;
    }
    if (why && *why)
      continue;
    fprintf(stderr,
            "%s has no entry for %s (a handler, or why there is none)\n", who,
            eddy_dialects_opcode_name((eddy_opcode_t)c));
    gaps++;
  }
  if (gaps)
    fail_msg("%s: %d opcode%s without an entry", who, gaps,
             gaps > 1 ? "s" : "");
  // Outside the opcodes: nothing is handled.
  const char *why = "";
  assert_false(query(EDDY_OP_NONE, &why));
  assert_null(why);
  assert_false(query(EDDY_OP_COUNT_, &why));
  return handled;
}

/// Checks that exactly the opcodes in `unhandled` (terminated by
/// EDDY_OP_NONE) are not handled.
static inline void check_unhandled(bool (*query)(eddy_opcode_t, const char **),
                                   const eddy_opcode_t *unhandled) {
  for (int c = EDDY_OP_NONE + 1; c < EDDY_OP_COUNT_; c++) {
    bool listed = false;
    for (const eddy_opcode_t *u = unhandled; *u != EDDY_OP_NONE; u++)
      listed = listed || *u == (eddy_opcode_t)c;
    if (query((eddy_opcode_t)c, NULL) == listed)
      fail_msg("%s is %s, expected %s",
               eddy_dialects_opcode_name((eddy_opcode_t)c),
               listed ? "handled" : "not handled",
               listed ? "not handled" : "handled");
  }
}

#endif

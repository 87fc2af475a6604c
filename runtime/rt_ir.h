/// Where the IR meets libeddyrt. runtime/eddyrt.h is the ABI header that
/// generated code includes, so it cannot include the IR: it copies the IR's
/// dtype and status-code numbering instead, and code on the IR side converts
/// with a cast. This header holds the copies to each other at compile time;
/// the evaluator and the CPU backend include it (through eval.h and cpu.h),
/// so a copy that drifts breaks their build.
#ifndef EDDY_RUNTIME_RT_IR_H
#define EDDY_RUNTIME_RT_IR_H

#include "dialects/core/core.h"
#include "ir/ir.h"
#include "runtime/eddyrt.h"

#define EDDY_RT_IR_SAME(rt, ir)                                                \
  _Static_assert((int)(rt) == (int)(ir), #rt " differs from " #ir)

EDDY_RT_IR_SAME(EDDY_RT_F16, EDDY_DT_F16);
EDDY_RT_IR_SAME(EDDY_RT_BF16, EDDY_DT_BF16);
EDDY_RT_IR_SAME(EDDY_RT_F32, EDDY_DT_F32);
EDDY_RT_IR_SAME(EDDY_RT_F64, EDDY_DT_F64);
EDDY_RT_IR_SAME(EDDY_RT_I1, EDDY_DT_I1);
EDDY_RT_IR_SAME(EDDY_RT_I8, EDDY_DT_I8);
EDDY_RT_IR_SAME(EDDY_RT_I32, EDDY_DT_I32);
EDDY_RT_IR_SAME(EDDY_RT_I64, EDDY_DT_I64);
EDDY_RT_IR_SAME(EDDY_RT_DTYPE_COUNT_, EDDY_DT_COUNT_);

// The runtime's codes are a subset of the IR's (no PARSE, no VERIFY), with
// the same numbers.
EDDY_RT_IR_SAME(EDDY_RT_OK, EDDY_OK);
EDDY_RT_IR_SAME(EDDY_RT_ERR_INVALID_ARGUMENT, EDDY_ERR_INVALID_ARGUMENT);
EDDY_RT_IR_SAME(EDDY_RT_ERR_UNSUPPORTED, EDDY_ERR_UNSUPPORTED);
EDDY_RT_IR_SAME(EDDY_RT_ERR_NOT_FOUND, EDDY_ERR_NOT_FOUND);
EDDY_RT_IR_SAME(EDDY_RT_ERR_IO, EDDY_ERR_IO);
EDDY_RT_IR_SAME(EDDY_RT_ERR_RESOURCE, EDDY_ERR_RESOURCE);
EDDY_RT_IR_SAME(EDDY_RT_ERR_INTERNAL, EDDY_ERR_INTERNAL);
EDDY_RT_IR_SAME(EDDY_RT_ERR_CANCELLED, EDDY_ERR_CANCELLED);

#undef EDDY_RT_IR_SAME

// Two limits, not one: the IR describes tensors of rank up to
// EDDY_CORE_MAX_RANK, the runtime (whose tensor descriptor is ABI) holds
// rank up to EDDY_RT_MAX_RANK; the evaluator and the backends report an op
// of higher rank as unsupported. Every runtime tensor has an IR type.
_Static_assert(EDDY_RT_MAX_RANK <= EDDY_CORE_MAX_RANK,
               "a runtime tensor's rank must fit the IR");

#endif

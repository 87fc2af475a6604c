/// libeddyrt: the runtime that generated code, the evaluator and the
/// dataflow interpreter link against. This header is an ABI: C99,
/// fixed-width types, versioned structs.
#ifndef EDDY_RUNTIME_EDDYRT_H
#define EDDY_RUNTIME_EDDYRT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Bumped whenever a struct or signature in this header changes.
#define EDDY_RT_ABI_VERSION 1u

/// The ABI version this library was built with.
uint32_t eddy_rt_abi_version(void);

#ifdef __cplusplus
}
#endif
#endif

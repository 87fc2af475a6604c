#include "runtime/eddyrt.h"

uint32_t eddy_rt_abi_version(void) { return EDDY_RT_ABI_VERSION; }

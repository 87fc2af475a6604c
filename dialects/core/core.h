/// Public helpers of the core dialect (tensor math): numpy broadcasting and
/// axis normalization, shared by the shape functions, lowerings and autodiff.
/// The op table itself is `eddy_core_dialect` in dialects/dialects.h.
#ifndef EDDY_DIALECTS_CORE_CORE_H
#define EDDY_DIALECTS_CORE_CORE_H

#include "ir/ir.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Largest rank the core shape functions and folders accept; higher ranks
/// are reported as errors.
#define EDDY_CORE_MAX_RANK 64

/// Numpy broadcasting of two ranked shapes (dims may be EDDY_DIM_DYNAMIC).
/// Shapes are aligned at the right; per dim: equal dims stay, a 1 takes the
/// other dim (so 1 vs dynamic is dynamic), dynamic vs n > 1 is n, dynamic vs
/// dynamic is dynamic. Writes max(rank_a, rank_b) dims to out (which may
/// alias neither input). Returns false when two static dims differ and
/// neither is 1.
bool eddy_core_broadcast_dims(const int64_t *a, int32_t rank_a,
                              const int64_t *b, int32_t rank_b, int64_t *out);

/// The broadcast of two tensor types, with dtype dt: unranked when either is
/// unranked. NULL when either is not a tensor, a rank exceeds
/// EDDY_CORE_MAX_RANK, or the shapes are incompatible.
const eddy_type_t *eddy_core_broadcast_type(eddy_ctx_t *ctx,
                                            const eddy_type_t *a,
                                            const eddy_type_t *b,
                                            eddy_dtype_t dt);

/// Maps an axis in [-rank, rank) to [0, rank) (negative axes count from the
/// end). Returns false when it is out of range.
bool eddy_core_normalize_axis(int64_t axis, int64_t rank, int64_t *out);

#ifdef __cplusplus
}
#endif
#endif

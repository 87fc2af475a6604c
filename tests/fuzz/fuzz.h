/// The fuzz targets of tests/fuzz: one entry point per input path, in
/// libFuzzer's form. Built with -DEDDY_FUZZ=ON (clang) each target links
/// libFuzzer's main; otherwise replay.c's main runs the files it is given
/// through the same function (docs/reliability.md).
#ifndef EDDY_TESTS_FUZZ_FUZZ_H
#define EDDY_TESTS_FUZZ_FUZZ_H

#include "ir/ir.h"

#include <stddef.h>
#include <stdint.h>

/// Runs one input. Returns 0; an input that eddy refuses is not a failure,
/// only a crash, a sanitizer report or an abort (a broken invariant, such
/// as a reparse that prints differently) is.
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/// A fuzz target's failed invariant: prints "fuzz: MESSAGE" and aborts.
void eddy_fuzz_fail(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

/// A new context with every dialect and pass registered (NULL on out of
/// memory).
eddy_ctx_t *eddy_fuzz_ctx_create(void);

/// Parses data as IR text and verifies it: the module, or NULL when it does
/// not parse or verify.
eddy_module_t *eddy_fuzz_parse(eddy_ctx_t *ctx, const uint8_t *data,
                               size_t size);

/// Destroys st, whatever it is (NULL included): refusals are expected.
void eddy_fuzz_ignore(eddy_status_t st);

/// splitmix64: the mutators' deterministic random numbers.
uint64_t eddy_fuzz_rng(uint64_t *state);

/// The target's mutator: changes the input in data (size bytes, room for
/// max_size) from seed; returns the new size, or 0 when it cannot (data is
/// not such an input, or the result would not fit). The graphdef target's
/// changes GraphDefs as graphs (graphdef_mutate.c), the IR text targets'
/// modules as IR (ir_mutate.c); without one, replay.c's default changes
/// bytes. libFuzzer calls a target's own through LLVMFuzzerCustomMutator
/// (fuzz_util.c), replay.c's --mutate=N without libFuzzer.
size_t eddy_fuzz_mutate(uint8_t *data, size_t size, size_t max_size,
                        uint64_t seed);

#endif

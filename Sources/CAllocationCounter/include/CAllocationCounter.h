// Counts heap allocations per thread by interposing malloc and
// friends in the process that links this target (tests and benchmarks only).
//
// Why: the audio thread must never allocate. A test reads the count on the I/O
// thread itself (from the processing callback) before and after N periods; any
// difference is an allocation on the real-time path. The counter is a plain
// thread-local, so reading it does not allocate either.
#ifndef CALLAUDIO_ALLOCATION_COUNTER_H
#define CALLAUDIO_ALLOCATION_COUNTER_H

#include <stdint.h>

/// Allocations (malloc, calloc, realloc, aligned allocations) made by the calling thread so far.
uint64_t callaudio_thread_allocation_count(void);

/// Whether the interposer is active in this process (1) or the C library's malloc is used directly (0):
/// allocates once, on the calling thread, to find out.
int callaudio_allocation_counter_active(void);

#endif

// Counts heap allocations, per thread and in total, by interposing malloc and
// friends in the process that links this target (tests and benchmarks only).
//
// Why: the audio thread must never allocate. A test reads the count on the I/O
// thread itself (from the processing callback) before and after N periods; any
// difference is an allocation on the real-time path. The counters are plain
// thread-locals and relaxed atomics, so reading them does not allocate either.
#ifndef CALLAUDIO_ALLOCATION_COUNTER_H
#define CALLAUDIO_ALLOCATION_COUNTER_H

#include <stdint.h>

/// Allocations (malloc, calloc, realloc, aligned allocations) made by the calling thread so far.
uint64_t callaudio_thread_allocation_count(void);

/// Allocations made by all threads so far.
uint64_t callaudio_total_allocation_count(void);

/// Whether the interposer is active in this process (1) or the C library's malloc is used directly (0).
int callaudio_allocation_counter_active(void);

#endif

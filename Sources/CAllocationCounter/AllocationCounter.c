// glibc exports its allocator under __libc_* names, so these definitions can
// count each call and forward to the real allocator without dlsym (which may
// itself allocate). Defined in the executable, they take precedence over libc's.
#include "CAllocationCounter.h"

#include <errno.h>
#include <stddef.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static _Thread_local uint64_t thread_count;

static inline void count_one(void) { thread_count++; }

void *malloc(size_t size) { count_one(); return __libc_malloc(size); }
void *calloc(size_t n, size_t size) { count_one(); return __libc_calloc(n, size); }
void *realloc(void *p, size_t size) { count_one(); return __libc_realloc(p, size); }
void free(void *p) { __libc_free(p); }
void *memalign(size_t alignment, size_t size) { count_one(); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { count_one(); return __libc_memalign(alignment, size); }

int posix_memalign(void **out, size_t alignment, size_t size) {
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
    count_one();
    void *p = __libc_memalign(alignment, size);
    if (p == NULL && size != 0) return ENOMEM;
    *out = p;
    return 0;
}

uint64_t callaudio_thread_allocation_count(void) { return thread_count; }

// Probes the interposer: an allocation made here must be counted. (The volatile pointer keeps
// the compiler from eliding the malloc/free pair.)
int callaudio_allocation_counter_active(void) {
    uint64_t before = thread_count;
    void *volatile p = malloc(1);
    free(p);
    return thread_count > before;
}

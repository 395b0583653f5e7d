/* Heap-call counter for LD_PRELOAD: replaces the C allocator's entry points (operator new reaches
 * them through malloc) and counts calls made while armed. The bench program finds
 * bench_heap_arm / bench_heap_disarm with dlsym, so it arms the counter around its measured loop
 * only; start-up, connecting and printing are not counted. */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

extern void* __libc_malloc(size_t size);
extern void* __libc_calloc(size_t count, size_t size);
extern void* __libc_realloc(void* ptr, size_t size);
extern void* __libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void* ptr);

static atomic_int armed;
static atomic_long allocations;
static atomic_long releases;

static void note_alloc(void) {
    if (atomic_load_explicit(&armed, memory_order_relaxed)) atomic_fetch_add(&allocations, 1);
}

void bench_heap_arm(void) {
    atomic_store(&allocations, 0);
    atomic_store(&releases, 0);
    atomic_store(&armed, 1);
}

void bench_heap_disarm(long* allocs, long* frees) {
    atomic_store(&armed, 0);
    *allocs = atomic_load(&allocations);
    *frees = atomic_load(&releases);
}

void* malloc(size_t size) {
    note_alloc();
    return __libc_malloc(size);
}

void* calloc(size_t count, size_t size) {
    note_alloc();
    return __libc_calloc(count, size);
}

void* realloc(void* ptr, size_t size) {
    note_alloc();
    return __libc_realloc(ptr, size);
}

void* memalign(size_t alignment, size_t size) {
    note_alloc();
    return __libc_memalign(alignment, size);
}

void* aligned_alloc(size_t alignment, size_t size) {
    note_alloc();
    return __libc_memalign(alignment, size);
}

int posix_memalign(void** out, size_t alignment, size_t size) {
    note_alloc();
    void* p = __libc_memalign(alignment, size);
    if (p == NULL) return ENOMEM;
    *out = p;
    return 0;
}

void free(void* ptr) {
    if (ptr != NULL && atomic_load_explicit(&armed, memory_order_relaxed)) {
        atomic_fetch_add(&releases, 1);
    }
    __libc_free(ptr);
}

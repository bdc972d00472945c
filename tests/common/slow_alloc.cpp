// A genuinely slower process on any x86-64 CPU, for the tests and benchmarks that need a slow
// side (a head the gate must catch): preloaded with LD_PRELOAD, it spins PG_SLOW_ALLOC_US
// microseconds of CPU time in every allocation of at least PG_SLOW_ALLOC_MIN_BYTES bytes (default
// 4096) before glibc serves it. Every tensor the model computes is such an allocation, so each
// forward step does real extra work whose cost is a fixed time, the same on Intel and AMD alike
// (a math library's instruction-set switch slows one vendor's CPUs and not the other's). The small allocations of start-up and bookkeeping are left alone.
//
// PG_FAIL_ALLOC_MIN_BYTES=N makes every allocation of at least N bytes fail instead, as on a
// machine without the memory: a head that can no longer run its own benchmark.
//
// Nothing here allocates or calls into libc beyond clock_gettime (the vDSO) and getenv (in the
// constructor, before any allocation is slowed).
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <ctime>

extern "C" {
void* __libc_malloc(size_t size);
void* __libc_calloc(size_t n, size_t size);
void* __libc_realloc(void* p, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
}

namespace {

long spin_ns = 0;           // 0 until the constructor has read the environment: nothing slowed
size_t min_bytes = 4096;
size_t fail_bytes = 0;      // 0: no allocation fails

long parse(const char* v, long fallback) {
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  return (end != nullptr && *end == '\0' && n >= 0) ? n : fallback;
}

__attribute__((constructor)) void read_settings() {
  min_bytes = static_cast<size_t>(parse(std::getenv("PG_SLOW_ALLOC_MIN_BYTES"), 4096));
  spin_ns = parse(std::getenv("PG_SLOW_ALLOC_US"), 0) * 1000;
  fail_bytes = static_cast<size_t>(parse(std::getenv("PG_FAIL_ALLOC_MIN_BYTES"), 0));
}

bool fails(size_t size) { return fail_bytes > 0 && size >= fail_bytes; }

long now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000L + t.tv_nsec;
}

// Busy work, not a sleep: the CPU is kept as busy as a slower kernel would keep it.
void spin(size_t size) {
  if (spin_ns <= 0 || size < min_bytes) return;
  const long until = now_ns() + spin_ns;
  while (now_ns() < until) {
  }
}

}  // namespace

extern "C" {

void* malloc(size_t size) {
  if (fails(size)) return nullptr;
  spin(size);
  return __libc_malloc(size);
}

void* calloc(size_t n, size_t size) {
  if (fails(n * size)) return nullptr;
  spin(n * size);
  return __libc_calloc(n, size);
}

void* realloc(void* p, size_t size) {
  if (fails(size)) return nullptr;
  spin(size);
  return __libc_realloc(p, size);
}

void* memalign(size_t alignment, size_t size) {
  if (fails(size)) return nullptr;
  spin(size);
  return __libc_memalign(alignment, size);
}

void* aligned_alloc(size_t alignment, size_t size) {
  if (fails(size)) return nullptr;
  spin(size);
  return __libc_memalign(alignment, size);
}

int posix_memalign(void** out, size_t alignment, size_t size) {
  // posix_memalign's own contract: a power of two that is a multiple of sizeof(void*).
  if (alignment % sizeof(void*) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
  if (fails(size)) return ENOMEM;
  spin(size);
  void* p = __libc_memalign(alignment, size);
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}

}  // extern "C"

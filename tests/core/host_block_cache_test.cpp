#include <doctest/doctest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <new>
#include <vector>

#include "runtime/host_block_cache.hpp"
#include "support/sanitizer.hpp"

using tileops::HostBlockCache;

TEST_CASE("large freed host blocks are reused for the same size") {
  HostBlockCache cache(std::size_t{64} << 20);
  void* a = cache.allocate(8 << 20, 64);
  CHECK(reinterpret_cast<std::uintptr_t>(a) % 64 == 0);
  cache.deallocate(a, 8 << 20, 64);
  CHECK(cache.cached_bytes() == (8u << 20));
  void* b = cache.allocate((8 << 20) - 100, 64);  // rounds to the same bucket
  CHECK(b == a);
  CHECK(cache.cached_bytes() == 0);
  cache.deallocate(b, (8 << 20) - 100, 64);
}

TEST_CASE("the host block cache keeps at most its capacity in large blocks, and small blocks apart from them") {
  HostBlockCache cache(std::size_t{3} << 20);
  void* a = cache.allocate(2 << 20, 64);
  void* b = cache.allocate(2 << 20, 64);
  cache.deallocate(a, 2 << 20, 64);
  cache.deallocate(b, 2 << 20, 64);  // would exceed 3 MiB: returned to the system
  CHECK(cache.cached_bytes() == (2u << 20));
  void* small = cache.allocate(4096, 64);
  cache.deallocate(small, 4096, 64);
  CHECK(cache.cached_bytes() == (2u << 20));
  CHECK(cache.cached_small_bytes() == 4096);
}

TEST_CASE("small host blocks are reused by size class on the same thread, aligned as asked") {
  HostBlockCache cache(0);
  void* a = cache.allocate(200, 64);  // class 256
  CHECK(reinterpret_cast<std::uintptr_t>(a) % 64 == 0);
  cache.deallocate(a, 200, 64);
  CHECK(cache.cached_small_bytes() == 256);
  CHECK(cache.allocate(129, 64) == a);  // the same class
  CHECK(cache.cached_small_bytes() == 0);
  void* other = cache.allocate(100, 64);  // class 128: a block of its own
  CHECK(other != a);
  void* wide = cache.allocate(8, 4096);   // the alignment sets the class
  CHECK(reinterpret_cast<std::uintptr_t>(wide) % 4096 == 0);
  cache.deallocate(a, 129, 64);
  cache.deallocate(other, 100, 64);
  cache.deallocate(wide, 8, 4096);
  CHECK(cache.cached_small_bytes() == 256 + 128 + 4096);
}

TEST_CASE("each shard of the small tier keeps at most its byte bound") {
  HostBlockCache cache(0);
  constexpr std::size_t block = HostBlockCache::kMaxSmallBytes;
  std::vector<void*> blocks;
  for (std::size_t i = 0; i < HostBlockCache::kShardSmallBytes / block + 4; ++i) blocks.push_back(cache.allocate(block, 64));
  for (void* p : blocks) cache.deallocate(p, block, 64);
  CHECK(cache.cached_small_bytes() == HostBlockCache::kShardSmallBytes);
}


TEST_CASE("when the system has no memory for a block, the cache gives its kept blocks back and tries again") {
#ifdef TILEOPS_TEST_UNDER_SANITIZER
  MESSAGE("skipped: an address-space limit cannot hold a sanitizer's shadow memory");
#else
  // In a child process limited to about 2.5 GiB more address space than it has: six 1 GiB
  // blocks of different sizes, each freed (and kept) before the next is asked for.
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    std::ifstream status("/proc/self/statm");
    std::size_t pages = 0;
    status >> pages;
    const rlim_t limit = pages * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) + (rlim_t{5} << 29);
    const rlimit bound{limit, limit};
    if (setrlimit(RLIMIT_AS, &bound) != 0) _exit(2);
    tileops::HostBlockCache cache(std::size_t{8} << 30);
    for (std::size_t i = 0; i < 6; ++i) {
      const std::size_t nbytes = (std::size_t{1} << 30) + i * (std::size_t{1} << 20);
      try {
        void* p = cache.allocate(nbytes, 64);
        cache.deallocate(p, nbytes, 64);
      } catch (const std::bad_alloc&) {
        _exit(1);
      }
    }
    _exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
#endif
}

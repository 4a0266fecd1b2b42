#include <doctest/doctest.h>

#include "runtime/host_block_cache.hpp"

using tileops::HostBlockCache;

TEST_CASE("large freed host blocks are reused for the same size") {
  HostBlockCache cache(std::size_t{64} << 20);
  void* a = cache.allocate(8 << 20, 64);
  CHECK(reinterpret_cast<std::uintptr_t>(a) % 64 == 0);
  cache.deallocate(a, 8 << 20);
  CHECK(cache.cached_bytes() == (8u << 20));
  void* b = cache.allocate((8 << 20) - 100, 64);  // rounds to the same bucket
  CHECK(b == a);
  CHECK(cache.cached_bytes() == 0);
  cache.deallocate(b, (8 << 20) - 100);
}

TEST_CASE("the host block cache keeps at most its capacity and never caches small blocks") {
  HostBlockCache cache(std::size_t{3} << 20);
  void* a = cache.allocate(2 << 20, 64);
  void* b = cache.allocate(2 << 20, 64);
  cache.deallocate(a, 2 << 20);
  cache.deallocate(b, 2 << 20);  // would exceed 3 MiB: returned to the system
  CHECK(cache.cached_bytes() == (2u << 20));
  void* small = cache.allocate(4096, 64);
  cache.deallocate(small, 4096);
  CHECK(cache.cached_bytes() == (2u << 20));
}

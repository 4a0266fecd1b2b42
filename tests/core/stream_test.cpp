// The current-stream API on device types without streams.
#include <doctest/doctest.h>

#include "tileops/errors.hpp"
#include "tileops/stream.hpp"

using namespace tileops;

TEST_CASE("the host's only stream is the default one, and a guard for another is refused") {
  CHECK(current_stream(Device::cpu()) == nullptr);
  {
    StreamGuard on(Device::cpu(), nullptr);
    CHECK(on.stream() == nullptr);
    CHECK(current_stream(Device::cpu()) == nullptr);
  }
  void* other = reinterpret_cast<void*>(0x10);
  CHECK_THROWS_WITH_AS(StreamGuard(Device::cpu(), other), doctest::Contains("device type 'cpu' has no streams"),
                       ValueError);
  CHECK(current_stream(Device::cpu()) == nullptr);
}

// Byte sizes in the call check: a tensor's traffic is counted in bytes without overflowing on
// the way, and an output whose inferred shape no tensor can have fails the check itself.
#include <doctest/doctest.h>

#include <cstdint>

#include "tileops/errors.hpp"
#include "tileops/ops/elementwise.hpp"
#include "tileops/ops/softmax.hpp"
#include "tileops/signature.hpp"

using namespace tileops;

TEST_CASE("the traffic of a tensor just below 2^63 bytes is its exact byte count") {
  // 2^61 float16 elements: 2^62 bytes, although 2^61 x 16 bits passes 2^63.
  const std::int64_t n = std::int64_t{1} << 61;
  SoftmaxFwdOp softmax;
  const Tensor x = Tensor::empty({n}, DType::float16, Device::meta());
  const Tensor y = softmax(x);
  CHECK(y.shape() == Shape{n});
  const SignatureCallPtr call = softmax.last_call();
  REQUIRE(call->traffic.size() == 2);
  for (const TensorTraffic& t : call->traffic) {
    CAPTURE(t.name);
    CHECK(t.bytes == std::int64_t{1} << 62);
  }
}

TEST_CASE("an inferred output past 2^63 elements fails the call check, naming the output and the shapes") {
  const std::int64_t n = std::int64_t{1} << 40;
  AddFwdOp add;
  const Tensor a = Tensor::empty({n, 1}, DType::float32, Device::meta());
  const Tensor b = Tensor::empty({1, n}, DType::float32, Device::meta());
  CHECK_THROWS_WITH_AS(add(a, b),
                       doctest::Contains("AddFwdOp: output 'output' [*broadcast(A, B)] has shape [1099511627776, "
                                         "1099511627776]: the product of its extents exceeds 9223372036854775807"),
                       ValueError);
  const Tensor c = Tensor::empty({n, 1, 0}, DType::float32, Device::meta());
  const Tensor d = Tensor::empty({1, n, 0}, DType::float32, Device::meta());
  CHECK_THROWS_WITH_AS(add(c, d), doctest::Contains("[1099511627776, 1099511627776, 0]: the product of its non-zero "
                                                     "extents exceeds 9223372036854775807"),
                       ValueError);
  CHECK_THROWS_AS(add.last_call(), RuntimeError);
}

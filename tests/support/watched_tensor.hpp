// A cpu tensor over memory whose release the test can observe: what the tests of handle
// ownership check.
#pragma once

#include <algorithm>
#include <initializer_list>
#include <memory>

#include "tileops/tensor.hpp"

namespace tileops::test {

// A float32 tensor [values.size()] holding `values`; `*released` becomes true when its memory
// is released, i.e. when the last handle owning the tensor (or a view of it) is gone.
inline Tensor watched_tensor(bool* released, std::initializer_list<float> values) {
  auto* data = new float[values.size()];
  std::copy(values.begin(), values.end(), data);
  auto storage = std::make_shared<Storage>(data, values.size() * sizeof(float), Device::cpu(), [released](void* p) {
    delete[] static_cast<float*>(p);
    *released = true;
  });
  const auto n = static_cast<std::int64_t>(values.size());
  return Tensor::from_storage(std::move(storage), {n}, {1}, 0, DType::float32);
}

}  // namespace tileops::test

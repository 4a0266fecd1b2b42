// Round-trips a view through DLPack 1.x and runs an op on it, with the installed headers only.
#include <tileops/dlpack.hpp>
#include <tileops/ops/elementwise.hpp>

#include <cstdio>
#include <vector>

int main() {
  const tileops::Tensor x = tileops::Tensor::from_doubles(std::vector<double>{-1, 2, -3, 4},
                                                          std::vector<std::int64_t>{4}, tileops::DType::float32);
  DLManagedTensorVersioned* exported = tileops::to_dlpack_versioned(x.slice(0, 1, 4));
  const tileops::Tensor y = tileops::ReluFwdOp()(tileops::from_dlpack(exported));
  std::printf("%g %g %g\n", y.get(0), y.get(1), y.get(2));
  return y.get(0) == 2 && y.get(1) == 0 && y.get(2) == 4 ? 0 : 1;
}

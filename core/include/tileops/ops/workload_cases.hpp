// An op's manifest workload rows as cases to run: what the in-tree numerics tests iterate, and
// what an application's tests of its own ops iterate (docs/writing-an-op.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tileops/export.hpp"
#include "tileops/tensor.hpp"
#include "tileops/value.hpp"

namespace tileops {

class OpClass;

// The inclusive bounds of an integer input's values (its manifest `range`).
struct ValueRange {
  std::int64_t low = 0;
  std::int64_t high = 0;
  friend bool operator==(const ValueRange&, const ValueRange&) = default;
};

// One instantiated case of a manifest workload row (one row expands into one case per entry of
// its dtype_cases).
struct WorkloadCase {
  std::string id;                                  // label-dtypes..., e.g. "llama-8b-prefill-float16"
  std::string label;
  ParamMap params;                                 // the construction parameters the row gives
  std::vector<std::optional<TensorSpec>> inputs;   // per signature input; nullopt: not passed
  std::vector<std::optional<ValueRange>> ranges;   // per signature input; nullopt: any value
};

// The cases of `cls`'s workload rows, in row order. With `index_cap` > 0 every index value
// above it is lowered to it (real-model rows scaled down for tests; parameters never change).
TILEOPS_API std::vector<WorkloadCase> workload_cases(const OpClass& cls, std::int64_t index_cap = 0);

}  // namespace tileops

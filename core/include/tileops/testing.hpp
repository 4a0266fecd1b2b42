// Helpers for checking kernels against the reference: random inputs and tolerant comparison.
// Used by the test suites and by `tileops run --check`.
#pragma once

#include <optional>
#include <vector>

#include "tileops/export.hpp"
#include "tileops/ops/workload_cases.hpp"
#include "tileops/tensor.hpp"

namespace tileops::testing {

// Random tensors for `specs` on `device`: floats uniform in [-1, 1), integers in [-3, 3],
// booleans at random; reproducible for a given seed. Absent specs give undefined tensors. On
// meta, the tensors have shapes and dtypes only: nothing is drawn or held on the host.
// Throws like Tensor::empty for a shape no tensor can have or memory the host cannot give.
TILEOPS_API std::vector<Tensor> random_tensors(const std::vector<std::optional<TensorSpec>>& specs,
                                               const Device& device, unsigned seed = 1234);

// Random inputs of a workload case, drawn as random_tensors draws them but for the integer
// inputs with a manifest range, whose values are uniform within it.
TILEOPS_API std::vector<Tensor> random_inputs(const WorkloadCase& c, const Device& device, unsigned seed = 1234);

// `params` (a workload case's) with each construction-time tensor given only by shape and
// dtype (a meta tensor) replaced by host values drawn as random_tensors draws them; other
// parameters as they are.
TILEOPS_API ParamMap random_construction_tensors(const ParamMap& params, unsigned seed = 4321);

// Deep copies on the same devices (undefined tensors stay undefined).
TILEOPS_API std::vector<Tensor> clone_all(const std::vector<Tensor>& tensors);

// Deep copies on the host, where the reference kernels run (undefined tensors stay undefined).
// Throws what the tensors' device runtimes throw when they cannot copy to the host.
TILEOPS_API std::vector<Tensor> host_copies(const std::vector<Tensor>& tensors);

// The relative tolerance of `dtype` against a reference computed in double precision:
// float32 1e-4, float16 2e-2, bfloat16 5e-2, float64 1e-9, integers and bool exact.
TILEOPS_API double tolerance(DType dtype);

struct Comparison {
  double max_abs = 0;
  double max_rel = 0;  // relative to max(1, rms(expected), |expected|)
  bool ok = true;      // same definedness, shape and dtype, and every element within tolerance
};

// Compares `actual` with `expected` element by element within tolerance(expected's dtype),
// relative to the larger of |expected| and the floor max(1, root mean square of the finite
// elements of expected): elements that cancel to near zero are held to the tensor's scale.
TILEOPS_API Comparison compare(const Tensor& actual, const Tensor& expected);

}  // namespace tileops::testing

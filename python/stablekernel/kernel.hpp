// The stable-ABI kernels: one boxed torch kernel per boundary operator, registered with torch's
// dispatcher through the stable C shim, calling tileops through the C API with lent DLTensors.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "registry.hpp"
#include "tileops/c_api.h"

namespace tileops_stable {

// What a boundary operator's schema passes and returns (tileops/torch.py, _Branch): its
// arguments are the op's inputs (`optional` per input: Tensor?), `out` when `has_out`, and the
// instance key; it returns the outputs listed in `returned` (manifest output indices).
struct BranchSpec {
  std::string name;  // the short operator name, "norm_rms_norm_fwd"
  std::vector<bool> optional;
  bool has_out = false;
  int n_outputs = 0;
  std::vector<int> returned;
};

// One tensor argument as a plan request sees it: absent, or its dtype (tileops name), extents
// and strides (borrowed for the request).
struct TensorFacts {
  bool present = false;
  const char* dtype = nullptr;
  int64_t ndim = 0;
  const int64_t* sizes = nullptr;
  const int64_t* strides = nullptr;
};

// Computes the plan of branch `branch` for op `key` and `facts` (inputs, then `out`) into
// `plan` (one entry per returned output). Returns "" on success, else the error text
// ("ValueError: ..."). Called without any registry lock; may take the GIL.
using PlanSource = std::string (*)(int branch, std::string_view key, const std::vector<TensorFacts>& facts,
                                   Plan* plan);

// The C API functions the kernels call, from the loaded libtileops.
struct TileopsApi {
  tileops_status* (*op_call)(tileops_op*, tileops_call*);
  int (*status_kind)(const tileops_status*);
  const char* (*status_message)(const tileops_status*);
  void (*status_free)(tileops_status*);
  const char* (*error_kind_name)(int);
  void (*tensor_free)(tileops_tensor*);
};

// Sets what every kernel uses: the C API, where plans come from on a miss, and the DLPack
// device code of torch's "cuda" device (kDLCUDA 2, or kDLROCM 10 on a ROCm torch).
void configure(const TileopsApi& api, PlanSource plans, int32_t cuda_dlpack_code);

// The number of kernel slots (trampolines); a process registers at most this many branches.
constexpr int kMaxBranches = 256;

// Adds `spec` to the branch table and registers its kernel for dispatch key `dispatch_key`
// ("CPU", "CUDA") of namespace "tileops" (the operator must be defined already). A spec
// registered for several keys is added once per call. Returns the branch index, or -1 with
// `*error` set when the table is full or torch refused (then the caller keeps its own kernel).
int register_branch(const BranchSpec& spec, const char* dispatch_key, std::string* error);

// Deletes the torch libraries the kernels were registered through, which unregisters every
// kernel of them, and empties the branch table (the caller registers other kernels instead).
void unregister_all();

}  // namespace tileops_stable

// The manifest loader and plan builder: the input is the text of one manifest file. Every entry
// that loads is compiled into a signature plan (as compile_manifest_entry compiles it); every workload case of a plan that compiles is
// constructed and checked as a call on meta tensors, its outputs inferred and its roofline
// evaluated. Any tileops::Error is a refusal; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "manifest/manifest_loader.hpp"
#include "signature/signature_plan.hpp"
#include "tileops/errors.hpp"
#include "tileops/signature.hpp"

namespace {

constexpr std::size_t kMaxCases = 8;

// Whether a meta tensor of `shape` and `dtype` has a byte size that fits in 63 bits. Larger
// tensors are the tensor layer's to refuse; the harness does not build them.
bool buildable(const tileops::Shape& shape, tileops::DType dtype) {
  std::int64_t bytes = static_cast<std::int64_t>(tileops::dtype_size(dtype));
  for (std::int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(bytes, d == 0 ? 1 : d, &bytes)) return false;
  }
  return true;
}

void check_case(const tileops::SignaturePlan& plan, const tileops::WorkloadCase& c) {
  std::vector<tileops::Tensor> inputs;
  for (const auto& spec : c.inputs) {
    if (!spec) {
      inputs.emplace_back();
      continue;
    }
    if (!buildable(spec->shape, spec->dtype)) return;
    inputs.push_back(tileops::Tensor::empty(spec->shape, spec->dtype, tileops::Device::meta()));
  }
  const tileops::ConstructionState state = plan.check_construction(c.params);
  const tileops::CallArgs args{inputs};
  tileops::CallCheck check;
  tileops::SignatureCall record;
  plan.check_call(state, args, check, record);
  const tileops::OpOutputs outputs = plan.make_outputs(check, args);
  plan.check_result(check, args, outputs);
  plan.eval_roofline(record);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const tileops::manifest::LoadedFile file = tileops::manifest::load_manifest_text(text, "fuzz.yaml");
  for (const auto& spec : file.specs) {
    try {
      const auto plan = tileops::SignaturePlan::from_yaml(text, spec.name, "fuzz.yaml");
      const std::vector<tileops::WorkloadCase> cases = plan->workload_cases();
      for (std::size_t i = 0; i < cases.size() && i < kMaxCases; ++i) {
        try {
          check_case(*plan, cases[i]);
        } catch (const tileops::Error&) {
        }
      }
    } catch (const tileops::Error&) {
    }
  }
  return 0;
}

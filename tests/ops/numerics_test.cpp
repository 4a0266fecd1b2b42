// Every op, every workload row of its manifest (indices capped so that CI runs them quickly)
// and every floating dtype its signature accepts: the op as it runs by default (the cpu
// plugin's kernels where they apply) against the reference target on the same inputs, with
// outputs poisoned beforehand and written inputs compared too.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "signature/signature_plan.hpp"
#include "tileops/backend.hpp"
#include "tileops/errors.hpp"
#include "tileops/ops/catalog.hpp"
#include "tileops/testing.hpp"

using namespace tileops;

namespace {

constexpr std::int64_t kIndexCap = 48;

// Parameters that size outputs on their own (no input carries them) are capped as well.
ParamMap scaled_params(const std::string& op, ParamMap params) {
  if (op == "AlibiFwdOp") {
    for (const char* name : {"seq_len", "num_heads"}) {
      if (const Value* v = params.find(name)) params.set(name, std::min<std::int64_t>(std::get<std::int64_t>(*v), kIndexCap));
    }
    params.set("device", Device::cpu());  // without a tensor input, the device is a parameter
  }
  return params;
}

// Large freed host blocks are reused by later allocations: filling a few with NaN makes
// outputs that a kernel forgets to write show up as mismatches.
void poison_host_memory() {
  for (std::int64_t n : {std::int64_t{1} << 18, std::int64_t{1} << 20}) {
    Tensor t = Tensor::empty({n}, DType::float32);
    std::fill_n(t.data<float>(), n, std::nanf(""));
  }
}

// The case's inputs with every floating input of dtype `from` given dtype `to` instead.
std::vector<std::optional<TensorSpec>> retyped(std::vector<std::optional<TensorSpec>> specs, DType from, DType to) {
  for (auto& s : specs) {
    if (s && s->dtype == from) s->dtype = to;
  }
  return specs;
}

struct Outcome {
  int compared = 0;
  int rejected = 0;
};

// Runs one (op, params, inputs) both ways and compares every output and every input.
void check_case(const OpCatalogEntry& entry, const std::string& id, const ParamMap& params,
                const std::vector<std::optional<TensorSpec>>& specs, Outcome& outcome) {
  std::unique_ptr<Op> fast = entry.make(params, {});
  std::unique_ptr<Op> reference = entry.make(params, std::string(REFERENCE));
  const std::vector<Tensor> inputs = testing::random_tensors(specs, Device::cpu());
  std::vector<Tensor> fast_inputs = testing::clone_all(inputs);
  std::vector<Tensor> ref_inputs = testing::clone_all(inputs);
  OpOutputs got;
  try {
    poison_host_memory();
    got = fast->call(CallArgs(fast_inputs));
  } catch (const TypeError&) {
    ++outcome.rejected;  // a dtype this op's signature does not accept
    return;
  }
  const OpOutputs want = reference->call(CallArgs(ref_inputs));
  ++outcome.compared;
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    const testing::Comparison c = testing::compare(got[i], want[i]);
    CHECK_MESSAGE(c.ok, id << ": output " << i << " differs from the reference: max abs " << c.max_abs
                            << ", max rel " << c.max_rel);
  }
  for (std::size_t i = 0; i < fast_inputs.size(); ++i) {
    const testing::Comparison c = testing::compare(fast_inputs[i], ref_inputs[i]);
    CHECK_MESSAGE(c.ok, id << ": input " << i << " after the call differs from the reference's");
  }
}

}  // namespace

TEST_CASE("every op on every workload row and floating dtype matches the reference kernels") {
  load_backends();
  const auto cap = [](std::string_view, std::int64_t v) { return std::min(v, kIndexCap); };
  for (const OpCatalogEntry& entry : op_catalog()) {
    CAPTURE(entry.name);
    Outcome outcome;
    for (const WorkloadCase& c : entry.op_class().plan().workload_cases(cap)) {
      const ParamMap params = scaled_params(entry.name, c.params);
      check_case(entry, c.id, params, c.inputs, outcome);
      for (DType to : {DType::float32, DType::float16, DType::bfloat16}) {
        for (DType from : {DType::float32, DType::float16, DType::bfloat16}) {
          if (from == to) continue;
          const auto specs = retyped(c.inputs, from, to);
          if (specs == c.inputs) continue;
          check_case(entry, c.id + " as " + std::string(dtype_name(to)), params, specs, outcome);
        }
      }
    }
    CHECK_MESSAGE(outcome.compared > 0, entry.name << ": no case ran");
  }
}

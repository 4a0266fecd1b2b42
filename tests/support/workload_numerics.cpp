#include "support/workload_numerics.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "signature/signature_plan.hpp"
#include "support/sanitizer.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/ops/catalog.hpp"
#include "tileops/testing.hpp"

namespace tileops::testing {
namespace {

constexpr std::int64_t kIndexCap = 48;

// Instrumented code runs an order of magnitude slower: there every workload row runs in its own
// dtype, and only an op's first row in the other floating dtypes as well.
#ifdef TILEOPS_TEST_UNDER_SANITIZER
constexpr bool kInstrumented = true;
#else
constexpr bool kInstrumented = false;
#endif

// Construction-time tensors take drawn values. Parameters that size outputs on their own (no input carries them) are capped as well, and
// an op without tensor inputs takes its device as a parameter.
ParamMap scaled_params(const std::string& op, ParamMap params, const Device& device) {
  params = testing::random_construction_tensors(params);
  if (op == "AlibiFwdOp") {
    for (const char* name : {"seq_len", "num_heads"}) {
      if (const Value* v = params.find(name))
        params.set(name, std::min<std::int64_t>(std::get<std::int64_t>(*v), kIndexCap));
    }
    params.set("device", device);
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

// The case with every floating input of dtype `from` given dtype `to` instead.
WorkloadCase retyped(WorkloadCase c, DType from, DType to) {
  for (auto& s : c.inputs) {
    if (s && s->dtype == from) s->dtype = to;
  }
  return c;
}

struct Outcome {
  int compared = 0;
  int rejected = 0;
};

std::vector<Tensor> copies_on(const std::vector<Tensor>& tensors, const Device& device) {
  std::vector<Tensor> out;
  for (const Tensor& t : tensors) out.push_back(t.defined() ? t.to(device).clone() : t);
  return out;
}

void check_case(const OpCatalogEntry& entry, const std::string& id, const WorkloadCase& c, const Device& device,
                Outcome& outcome) {
  std::unique_ptr<Op> fast = entry.make(scaled_params(entry.name, c.params, device), {});
  std::unique_ptr<Op> reference = entry.make(scaled_params(entry.name, c.params, Device::cpu()), std::string(REFERENCE));
  const std::vector<Tensor> inputs = random_inputs(c, Device::cpu());
  std::vector<Tensor> fast_inputs = copies_on(inputs, device);
  std::vector<Tensor> ref_inputs = clone_all(inputs);
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
    if (got[i].defined())
      CHECK_MESSAGE(got[i].device() == device, id << ": output " << i << " is on " << got[i].device());
    const Comparison c = compare(got[i], want[i]);
    CHECK_MESSAGE(c.ok, id << ": output " << i << " differs from the reference: max abs " << c.max_abs << ", max rel "
                           << c.max_rel);
  }
  for (std::size_t i = 0; i < fast_inputs.size(); ++i) {
    const Comparison c = compare(fast_inputs[i], ref_inputs[i]);
    CHECK_MESSAGE(c.ok, id << ": input " << i << " after the call differs from the reference's");
  }
}

}  // namespace

void check_workloads_against_reference(const Device& device, const std::set<std::string>& skip) {
  load_backends();
  const auto cap = [](std::string_view, std::int64_t v) { return std::min(v, kIndexCap); };
  for (const OpCatalogEntry& entry : op_catalog()) {
    if (skip.contains(entry.name)) continue;
    CAPTURE(entry.name);
    Outcome outcome;
    const std::vector<WorkloadCase> cases = signature_plan(entry.op_class()).workload_cases(cap);
    for (std::size_t row = 0; row < cases.size(); ++row) {
      const WorkloadCase& c = cases[row];
      check_case(entry, c.id, c, device, outcome);
      if (kInstrumented && row > 0) continue;
      for (DType to : {DType::float32, DType::float16, DType::bfloat16}) {
        for (DType from : {DType::float32, DType::float16, DType::bfloat16}) {
          if (from == to) continue;
          const WorkloadCase other = retyped(c, from, to);
          if (other.inputs == c.inputs) continue;
          check_case(entry, c.id + " as " + std::string(dtype_name(to)), other, device, outcome);
        }
      }
    }
    CHECK_MESSAGE(outcome.compared > 0, entry.name << ": no case ran");
  }
}

}  // namespace tileops::testing

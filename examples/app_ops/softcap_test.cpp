// The tests of SoftcapFwdOp, from its manifest's workload rows (scaled down): each case runs the
// op on random inputs and checks it against cap * tanh(x / cap) computed here in double.
// Returns 0 when every case passes. Usage: softcap_test
#include <cmath>
#include <iostream>
#include <vector>

#include "app/ops/softcap.hpp"
#include "tileops/errors.hpp"
#include "tileops/ops/workload_cases.hpp"
#include "tileops/testing.hpp"

namespace {

int run_cases() {
  // No manifest path: the generated code embeds manifests/softcap.yaml.
  int failures = 0;
  const auto cases = tileops::workload_cases(app::SoftcapFwdOp::op_class(), 64);
  for (const tileops::WorkloadCase& c : cases) {
    const auto params = app::SoftcapFwdParams::from(c.params);
    app::SoftcapFwdOp op(params.cap);
    const std::vector<tileops::Tensor> inputs = tileops::testing::random_tensors(c.inputs, tileops::Device::cpu());
    const tileops::Tensor y = op(inputs[0]);
    std::vector<double> want = inputs[0].to_doubles();
    for (double& v : want) v = params.cap * std::tanh(v / params.cap);
    const auto expected = tileops::Tensor::from_doubles(want, inputs[0].shape(), inputs[0].dtype());
    const tileops::testing::Comparison cmp = tileops::testing::compare(y, expected);
    std::cout << c.id << ": " << (cmp.ok ? "PASS" : "FAIL") << " (max abs " << cmp.max_abs << ")\n";
    if (!cmp.ok) ++failures;
  }
  if (cases.size() != 4) {
    std::cout << "expected 4 workload cases, got " << cases.size() << "\n";
    ++failures;
  }
  // The manifest's default and its rule hold for the generated constructor too.
  if (app::SoftcapFwdOp().cap() != 30.0) ++failures;
  try {
    app::SoftcapFwdOp bad(-1.0);
    std::cout << "cap = -1 was accepted\n";
    ++failures;
  } catch (const tileops::ValueError& e) {
    std::cout << "cap = -1 rejected: " << e.what() << "\n";
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main() {
  try {
    return run_cases();
  } catch (const tileops::Error& e) {
    std::cout << "error: " << e.what() << "\n";
    return 1;
  }
}

// A small application on the acme plugin: runs ops on acme devices and reports who served
// them. `acme_demo` checks what the plugin promises when the target is detected;
// `acme_demo --default-acme` checks a config whose default_target is acme. Exit 0 when every
// check holds, 1 otherwise.
#include <cmath>
#include <cstring>
#include <iostream>

#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/extend/plugin.hpp"
#include "tileops/ops/gemm.hpp"
#include "tileops/ops/rms_norm.hpp"
#include "tileops/ops/softmax.hpp"

using namespace tileops;

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
  std::cout << (ok ? "ok:   " : "FAIL: ") << what << "\n";
  if (!ok) ++failures;
}

Tensor ramp(std::vector<std::int64_t> shape, const Device& device) {
  std::vector<double> v(static_cast<std::size_t>(shape_numel(shape)));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = 0.25 * static_cast<double>(i % 7) - 0.5;
  return Tensor::from_doubles(v, shape, DType::float32).to(device);
}

}  // namespace

int main(int argc, char** argv) {
  const bool default_acme = argc > 1 && std::strcmp(argv[1], "--default-acme") == 0;
  load_backends();
  for (const PluginInfo& p : loaded_plugins()) std::cout << "plugin " << p.name << " " << p.version << "\n";
  for (const PluginLoadFailure& f : load_failures()) std::cout << "load failure " << f.path.string() << ": " << f.reason << "\n";
  const Device acme = Device::parse("acme:1");

  RMSNormFwdOp rms({8}, 1e-6);
  const Tensor y = rms(ramp({4, 8}, acme), ramp({8}, acme));
  expect(rms.serving_target() == "acme", "RMSNormFwdOp on acme:1 is served by target acme");
  expect(y.device() == acme, "its output lives on acme:1");
  RMSNormFwdOp reference({8}, 1e-6, std::string(REFERENCE));
  const Tensor want = reference(ramp({4, 8}, Device::cpu()), ramp({8}, Device::cpu()));
  double err = 0;
  for (std::int64_t i = 0; i < want.numel(); ++i) err = std::max(err, std::abs(y.get(i) - want.get(i)));
  expect(err < 1e-5, "it matches the reference kernel (max error " + std::to_string(err) + ")");

  GemmFwdOp gemm(false, true);
  gemm(ramp({3, 5}, acme), ramp({2, 5}, acme));
  expect(gemm.serving_target() == "acme", "GemmFwdOp on acme:1 is served by target acme");

  SoftmaxFwdOp softmax;
  try {
    softmax(ramp({2, 3}, acme));
    expect(false, "SoftmaxFwdOp on acme raises OpNotAvailableError");
  } catch (const OpNotAvailableError& e) {
    const std::string msg = e.what();
    expect(msg.find("SoftmaxFwdOp") != std::string::npos && msg.find("acme") != std::string::npos,
           std::string("SoftmaxFwdOp on acme raises OpNotAvailableError naming op and target: ") + e.what());
  }

  GemmFwdOp on_cpu(false, true);
  on_cpu(ramp({3, 5}, Device::cpu()), ramp({2, 5}, Device::cpu()));
  if (default_acme) {
    expect(on_cpu.serving_target() == "acme", "with default_target = acme, GemmFwdOp on cpu is served by acme");
  } else {
    expect(on_cpu.serving_target() == std::string(BUILTIN), "GemmFwdOp on cpu is served by the in-tree kernels");
  }
  GemmFwdOp forced(false, true, std::string(BUILTIN));
  forced(ramp({3, 5}, Device::cpu()), ramp({2, 5}, Device::cpu()));
  expect(forced.serving_target() == std::string(BUILTIN), "target builtin forces the in-tree kernels");

  std::cout << (failures == 0 ? "all checks passed" : std::to_string(failures) + " check(s) failed") << "\n";
  return failures == 0 ? 0 : 1;
}

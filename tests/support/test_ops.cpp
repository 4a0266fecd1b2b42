#include "support/test_ops.hpp"

#include <map>
#include <mutex>

#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/extend/op_class_builder.hpp"
#include "tileops/ops/param_access.hpp"

namespace tileops::test {
namespace {

constexpr const char* kTestManifest = R"yaml(
ScaleTestFwdOp:
  family: testing
  status: implemented
  signature:
    forall: {S: Shape, T: "DType[float32 | float16 | bfloat16]"}
    params:
      scale: {type: float, default: 1.0}
    inputs:
      x: {dtype: T, shape: "[*S]"}
      bias: {dtype: T, shape: "[*S]", optional: true}
    outputs:
      y: {dtype: T, shape: "[*S]"}
    shape_rules:
    - "scale > 0"
  workloads:
  - {S: [4], dtype_cases: [{T: float32}], label: tiny}
  - {S: [4], some: [bias], dtype_cases: [{T: float32}], label: tiny-bias}
  roofline:
    flops: "prod(S)"

OffsetTestFwdOp:
  family: testing
  status: implemented
  signature:
    forall: {N: Dim}
    params:
      offset: {dtype: float32, shape: "[N]"}
    inputs:
      x: {dtype: float32, shape: "[N]"}
    outputs:
      y: {dtype: float32, shape: "[N]"}
  workloads:
  - {N: 4, label: tiny}
  roofline:
    flops: "N"

FillTestFwdOp:
  family: testing
  status: implemented
  signature:
    params:
      n: {type: int}
      device: {type: "device | None", default: null}
    outputs:
      y: {dtype: float32, shape: "[n]"}
    shape_rules:
    - "n >= 0"
  workloads:
  - {n: 4, label: four}
  roofline:
    flops: "n"

ChainTestFwdOp:
  family: testing
  status: implemented
  signature:
    forall: {S: Shape, T: "DType[float32 | float16 | bfloat16]"}
    inputs:
      x: {dtype: T, shape: "[*S]"}
    outputs:
      y: {dtype: T, shape: "[*S]"}
  composition:
    kind: composite
    stages:
    - {name: first, op: ScaleTestFwdOp}
    - {name: second, op: ScaleTestFwdOp}
  workloads:
  - {S: [4], dtype_cases: [{T: float32}], label: tiny}
  roofline:
    flops: "2 * prod(S)"
)yaml";

struct FillCall final : CallSpec {
  std::int64_t n = 0;
  auto fields() const { return std::tie(n); }
};

class FillInterface : public KernelInterface {
 public:
  using Interface = FillInterface;
  using Request = FillCall;
  static constexpr std::string_view kName = "FillInterface";
  // Returns a new [call.n] float32 tensor of ones on call.device.
  virtual Tensor forward() = 0;
};

class FillReference final : public Kernel, public FillInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  static constexpr bool general = true;
  explicit FillReference(const FillCall& call) : call_(call) {}
  Tensor forward() override {
    Tensor y = Tensor::empty({call_.n}, DType::float32, *call_.device);
    y.fill(1.0);
    return y;
  }

 private:
  FillCall call_;
};

}  // namespace

std::shared_ptr<const SignaturePlan> test_plan(const std::string& op) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const SignaturePlan>> plans;
  std::lock_guard lock(mutex);
  auto& plan = plans[op];
  if (!plan) plan = SignaturePlan::from_yaml(kTestManifest, op);
  return plan;
}

Counters& counters() {
  static Counters c;
  return c;
}

Tensor ramp(std::int64_t n, DType dtype) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = static_cast<double>(i + 1);
  return Tensor::from_doubles(v, std::vector<std::int64_t>{n}, dtype);
}

Tensor scale_tensor(const Tensor& x, const Tensor& bias, double scale) {
  ++counters().runs;
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
  for (std::int64_t i = 0; i < x.numel(); ++i) y.set(i, x.get(i) * scale + (bias.defined() ? bias.get(i) : 0.0));
  return y;
}

Entry ScaleReference::entry_for(const ScaleCall& call) {
  const double scale = call.scale;
  return {Identity::of(std::make_tuple(call.dtype, scale)), [scale] {
            ++counters().builds;
            return std::make_shared<ScaleReference>(scale);
          }};
}

Tensor ScaleReference::forward(const Tensor& x, const Tensor& bias) { return scale_tensor(x, bias, scale_); }
Tensor ScaleShort::forward(const Tensor& x, const Tensor& bias) { return scale_tensor(x, bias, scale_); }

const OpClass& ScaleTestFwdOp::op_class() {
  static const OpClass cls = OpClass::define("ScaleTestFwdOp")
                                 .plan(test_plan("ScaleTestFwdOp"))
                                 .interface<ScaleInterface>("scale")
                                 .kernel_type<ScaleReference>("scale_reference")
                                 .build();
  return cls;
}

ScaleTestFwdOp::ScaleTestFwdOp(const OpClass& cls, double scale, Target target)
    : Op(cls, {{"scale", scale}}, std::move(target)), scale_(scale) {}

Tensor ScaleTestFwdOp::operator()(const Tensor& x, const Tensor& bias) {
  const std::array<Tensor, 2> inputs{x, bias};
  return call(CallArgs(inputs)).front();
}

OpOutputs ScaleTestFwdOp::forward(const CallArgs& args) {
  ++forward_runs;
  const Tensor x = args.inputs[0].contiguous();
  ScaleCall call;
  call.device = x.device();
  call.n = x.numel();
  call.dtype = x.dtype();
  call.scale = scale_;
  return {kernel_for<ScaleInterface>("scale", call).forward(x, args.inputs[1])};
}

const OpClass& ChainTestFwdOp::op_class() {
  static const OpClass cls = OpClass::define("ChainTestFwdOp")
                                 .plan(test_plan("ChainTestFwdOp"))
                                 .delegate("first", "ScaleTestFwdOp")
                                 .delegate("second", "ScaleTestFwdOp")
                                 .injected_parameter("first")
                                 .build();
  return cls;
}

ChainTestFwdOp::ChainTestFwdOp(Target target, std::shared_ptr<ScaleTestFwdOp> first) : Op(op_class(), {}, std::move(target)) {
  if (first) check_injected_parameter("first");
  first_ = &delegate_for<ScaleTestFwdOp>("first", Identity(), std::move(first), 2.0);
  second_ = &delegate_for<ScaleTestFwdOp>("second", Identity(), nullptr, 3.0);
}

Tensor ChainTestFwdOp::operator()(const Tensor& x) {
  const std::array<Tensor, 1> inputs{x};
  return call(CallArgs(inputs)).front();
}

OpOutputs ChainTestFwdOp::forward(const CallArgs& args) {
  ++forward_runs;
  Tensor h = (*first_)(args.inputs[0]);
  if (stray != nullptr) (*stray)(h);
  if (local_stray) ScaleTestFwdOp(3.0)(h);
  return {(*second_)(h)};
}

namespace {

struct OffsetCall final : CallSpec {
  std::int64_t n = 0;
  auto fields() const { return std::tie(n); }
};

class OffsetInterface : public KernelInterface {
 public:
  using Interface = OffsetInterface;
  using Request = OffsetCall;
  static constexpr std::string_view kName = "OffsetInterface";
  // Returns x + offset, a new tensor on x's device.
  virtual Tensor forward(const Tensor& x, const Tensor& offset) = 0;
};

class OffsetReference final : public Kernel, public OffsetInterface {
 public:
  static constexpr DeviceTypes devices{"cpu", "plain_t"};  // plain_t: host-memory test devices
  static constexpr bool general = true;
  explicit OffsetReference(const OffsetCall&) {}
  Tensor forward(const Tensor& x, const Tensor& offset) override {
    Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
    for (std::int64_t i = 0; i < x.numel(); ++i) y.set(i, x.get(i) + offset.get(i));
    return y;
  }
};

}  // namespace

const OpClass& OffsetTestFwdOp::op_class() {
  static const OpClass cls = OpClass::define("OffsetTestFwdOp")
                                 .plan(test_plan("OffsetTestFwdOp"))
                                 .interface<OffsetInterface>("offset")
                                 .kernel_type<OffsetReference>("offset_reference")
                                 .build();
  return cls;
}

namespace {
ParamMap offset_params(Tensor offset) {
  ParamMap params;
  params.set("offset", std::move(offset));
  return params;
}
}  // namespace

OffsetTestFwdOp::OffsetTestFwdOp(Tensor offset, Target target)
    : Op(op_class(), offset_params(std::move(offset)), std::move(target)) {}

Tensor OffsetTestFwdOp::operator()(const Tensor& x) {
  const std::array<Tensor, 1> inputs{x};
  return call(CallArgs(inputs)).front();
}

OpOutputs OffsetTestFwdOp::forward(const CallArgs& args) {
  seen_offset = std::get<Tensor>(call_params().at("offset"));
  const Tensor& x = args.inputs[0];
  OffsetCall call;
  call.device = x.device();
  call.n = x.numel();
  return {kernel_for<OffsetInterface>("offset", call).forward(x, seen_offset)};
}

const OpClass& FillTestFwdOp::op_class() {
  static const OpClass cls = OpClass::define("FillTestFwdOp")
                                 .plan(test_plan("FillTestFwdOp"))
                                 .interface<FillInterface>("fill")
                                 .kernel_type<FillReference>("fill_reference")
                                 .build();
  return cls;
}

FillTestFwdOp::FillTestFwdOp(std::int64_t n, std::optional<Device> device, Target target)
    : Op(op_class(), {{"n", n}, {"device", op_params::to_value(device)}}, std::move(target)),
      n_(n),
      device_(device) {}

Tensor FillTestFwdOp::operator()() { return call(CallArgs()).front(); }

OpOutputs FillTestFwdOp::forward(const CallArgs&) {
  ++forward_runs;
  FillCall call;
  call.device = device_;
  call.n = n_;
  return {kernel_for<FillInterface>("fill", call).forward()};
}

}  // namespace tileops::test

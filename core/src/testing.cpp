#include "tileops/testing.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace tileops::testing {

namespace {

std::vector<Tensor> random_values(const std::vector<std::optional<TensorSpec>>& specs,
                                  const std::vector<std::optional<ValueRange>>& ranges, const Device& device,
                                  unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> integer(-3, 3);
  std::vector<Tensor> out;
  for (std::size_t s = 0; s < specs.size(); ++s) {
    const auto& spec = specs[s];
    if (!spec) {
      out.emplace_back();
      continue;
    }
    if (device.is_meta()) {  // shapes and dtypes only: nothing to draw, and nothing held on the host
      out.push_back(Tensor::empty(spec->shape, spec->dtype, device));
      continue;
    }
    // The tensor first, so that a size the host cannot hold fails naming its own bytes; then the
    // values, drawn as doubles and converted in one pass.
    Tensor host = Tensor::empty(spec->shape, spec->dtype, Device::cpu());
    const Tensor values = Tensor::empty(spec->shape, DType::float64, Device::cpu());
    double* v = values.data<double>();
    const std::optional<ValueRange> range = s < ranges.size() && !is_floating(spec->dtype) ? ranges[s] : std::nullopt;
    std::uniform_int_distribution<std::int64_t> bounded(range ? range->low : 0, range ? range->high : 0);
    for (std::int64_t i = 0; i < values.numel(); ++i) {
      if (range) {
        v[i] = static_cast<double>(bounded(rng));
      } else {
        v[i] = is_floating(spec->dtype) ? real(rng) : spec->dtype == DType::bool_ ? (integer(rng) > 0) : integer(rng);
      }
    }
    host.copy_from(values);
    out.push_back(host.to(device));
  }
  return out;
}

}  // namespace

std::vector<Tensor> random_tensors(const std::vector<std::optional<TensorSpec>>& specs, const Device& device,
                                   unsigned seed) {
  return random_values(specs, {}, device, seed);
}

std::vector<Tensor> random_inputs(const WorkloadCase& c, const Device& device, unsigned seed) {
  return random_values(c.inputs, c.ranges, device, seed);
}

ParamMap random_construction_tensors(const ParamMap& params, unsigned seed) {
  ParamMap out;
  for (const auto& [name, value] : params.items()) {
    const Tensor* t = std::get_if<Tensor>(&value);
    if (t == nullptr || !t->defined() || !t->device().is_meta()) {
      out.set(name, value);
      continue;
    }
    out.set(name, random_values({TensorSpec{Device::cpu(), t->dtype(), t->shape()}}, {}, Device::cpu(), seed++).front());
  }
  return out;
}

std::vector<Tensor> clone_all(const std::vector<Tensor>& tensors) {
  std::vector<Tensor> out;
  for (const Tensor& t : tensors) out.push_back(t.defined() ? t.clone() : t);
  return out;
}

std::vector<Tensor> host_copies(const std::vector<Tensor>& tensors) {
  std::vector<Tensor> out;
  for (const Tensor& t : tensors) {
    if (!t.defined()) {
      out.push_back(t);
    } else {
      out.push_back(t.device().is_cpu() ? t.clone() : t.to(Device::cpu()));
    }
  }
  return out;
}

double tolerance(DType dtype) {
  switch (dtype) {
    case DType::float32: return 1e-4;
    case DType::float16: return 2e-2;
    case DType::bfloat16: return 5e-2;
    case DType::float64: return 1e-9;
    default: return 0.0;
  }
}

Comparison compare(const Tensor& actual, const Tensor& expected) {
  Comparison c;
  if (actual.defined() != expected.defined() ||
      (actual.defined() && (actual.shape() != expected.shape() || actual.dtype() != expected.dtype()))) {
    c.ok = false;
    return c;
  }
  if (!actual.defined()) return c;
  const double tol = tolerance(expected.dtype());
  const std::vector<double> a = actual.to_doubles();
  const std::vector<double> e = expected.to_doubles();
  // An element that a long sum cancelled to near zero carries the rounding error of the terms,
  // whose size the tensor's root mean square shows: it floors the scale.
  // Squares are taken relative to the largest finite magnitude, so that float64 values past
  // 1e154 cannot overflow the sum to infinity (which would accept any error).
  double largest = 0;
  for (double v : e) {
    if (std::isfinite(v)) largest = std::max(largest, std::abs(v));
  }
  double squares = 0;
  if (largest > 0) {
    for (double v : e) {
      if (std::isfinite(v)) squares += (v / largest) * (v / largest);
    }
  }
  const double rms = e.empty() ? 0.0 : largest * std::sqrt(squares / static_cast<double>(e.size()));
  const double floor = std::max(1.0, rms);
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double diff = std::abs(a[i] - e[i]);
    const double scale = std::max(floor, std::abs(e[i]));
    c.max_abs = std::max(c.max_abs, diff);
    c.max_rel = std::max(c.max_rel, diff / scale);
    if (diff > tol * scale || std::isnan(a[i]) != std::isnan(e[i])) c.ok = false;
  }
  return c;
}

}  // namespace tileops::testing

// The activations the reference kernels share, in double.
#pragma once

#include <cmath>
#include <numbers>

namespace tileops::ref {

// Both GELU forms are evaluated as x times a weight in (0, 1) computed without cancellation:
// Phi(x) as erfc(-x / sqrt(2)) / 2, and (1 + tanh(u)) / 2 as 1 / (1 + exp(-2u)). The textbook
// forms add 1 to nearly -1 for negative x: in double they lose digits as x falls and give 0
// from about x = -8.5 on (erf form), where the float32 result, about -1e-16, is far from
// underflow.
inline double gelu_erf(double x) { return x * 0.5 * std::erfc(-x * std::sqrt(0.5)); }

inline double gelu_tanh(double x) {
  const double u = std::sqrt(2.0 / std::numbers::pi) * (x + 0.044715 * x * x * x);
  return x / (1.0 + std::exp(-2.0 * u));
}

inline double silu(double x) { return x / (1.0 + std::exp(-x)); }

}  // namespace tileops::ref

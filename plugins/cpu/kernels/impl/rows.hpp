// The loop that row kernels share: writing one row while gathering a statistic of the next.
#pragma once

#include "impl/dispatch.hpp"

namespace tileops::cpu {
namespace {

// Calls write(j, lanes) for j = 0, W, 2W, ... over a row of n elements (lanes = W but for the
// last vector); with Gather, also folds step(acc, j, lanes) into two interleaved accumulators
// started at init, and returns combine(a0, a1). Row kernels read the next row this way while
// they write the current one, so that reading memory overlaps writing it instead of alternating
// with it, and every row's statistic comes from this same loop, whatever the split over threads.
template <bool Gather, class Write, class Step, class Combine>
[[gnu::always_inline]] inline Vf::R pipelined_row(int64_t n, Vf::R init, Write&& write, Step&& step,
                                                  Combine&& combine) {
  constexpr int64_t W = Vf::width;
  Vf::R a0 = init, a1 = init;
  int64_t j = 0;
  for (; j + 2 * W <= n; j += 2 * W) {
    if constexpr (Gather) {
      a0 = step(a0, j, W);
      a1 = step(a1, j + W, W);
    }
    write(j, W);
    write(j + W, W);
  }
  for (; j < n; j += W) {
    const int64_t lanes = lanes_left<Vf>(j, n);
    if constexpr (Gather) a0 = step(a0, j, lanes);
    write(j, lanes);
  }
  return combine(a0, a1);
}

constexpr auto kNoWrite = [](int64_t, int64_t) {};
constexpr auto kNoStep = [](Vf::R acc, int64_t, int64_t) { return acc; };
constexpr auto kAdd = [](Vf::R a, Vf::R b) { return Vf::add(a, b); };
constexpr auto kMax = [](Vf::R a, Vf::R b) { return Vf::max(a, b); };

}  // namespace
}  // namespace tileops::cpu

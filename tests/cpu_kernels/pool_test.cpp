// The cpu pooling kernels on raw buffers, for every ISA this CPU has: max and average windows
// against a direct computation in double (odd widths, vector tails, padding, dilation, a last
// window clipped by ceil_mode, the divisors), NaN kept by the max at every lane, and the
// refusal of windows the op's checks would never pass.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "support.hpp"

using namespace tileops;
using namespace tileops::cpu;
using namespace tileops::cpu::test;

namespace {

struct Shape2d {
  int64_t planes, h, w, out_h, out_w;
};

// out = floor((size + 2 p - d (k - 1) - 1) / s) + 1 (or ceil, dropping a last window that would
// start past the input and its leading padding), torch's rule.
int64_t windows(int64_t size, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  const int64_t span = size + 2 * p - d * (k - 1) - 1;
  int64_t n = static_cast<int64_t>(std::floor(static_cast<double>(span + (ceil_mode ? s - 1 : 0)) / static_cast<double>(s))) + 1;
  if (ceil_mode && (n - 1) * s >= size + p) --n;
  return n;
}

std::vector<double> direct(const Buffer& x, const Shape2d& s, const Pool2dWindow& win, bool max, bool include_pad,
                           int64_t divisor) {
  std::vector<double> y;
  for (int64_t p = 0; p < s.planes; ++p) {
    for (int64_t i = 0; i < s.out_h; ++i) {
      for (int64_t j = 0; j < s.out_w; ++j) {
        double acc = max ? -std::numeric_limits<double>::infinity() : 0.0;
        int64_t inside = 0;
        for (int64_t a = 0; a < win.kernel_h; ++a) {
          for (int64_t b = 0; b < win.kernel_w; ++b) {
            const int64_t r = i * win.stride_h - win.padding_h + a * win.dilation_h;
            const int64_t c = j * win.stride_w - win.padding_w + b * win.dilation_w;
            if (r < 0 || r >= s.h || c < 0 || c >= s.w) continue;
            const double v = x.get((p * s.h + r) * s.w + c);
            acc = max ? (std::isnan(v) || std::isnan(acc) ? std::numeric_limits<double>::quiet_NaN() : std::max(acc, v)) : acc + v;
            ++inside;
          }
        }
        if (!max) {
          const int64_t r0 = i * win.stride_h - win.padding_h, c0 = j * win.stride_w - win.padding_w;
          const int64_t padded = (std::min(r0 + win.kernel_h, s.h + win.padding_h) - r0) *
                                 (std::min(c0 + win.kernel_w, s.w + win.padding_w) - c0);
          acc /= static_cast<double>(divisor != 0 ? divisor : (include_pad ? padded : inside));
        }
        y.push_back(acc);
      }
    }
  }
  return y;
}

}  // namespace

TEST_CASE("max_pool2d and avg_pool2d match a direct computation for every dtype, ISA, odd width and window") {
  struct Case {
    int64_t h, w;
    Pool2dWindow win;
    bool ceil_mode;
  };
  const Case cases[] = {{9, 1, {3, 1, 2, 1, 1, 0, 1, 1}, false},   {7, 7, {3, 3, 2, 2, 1, 1, 1, 1}, true},
                        {11, 33, {3, 2, 2, 3, 1, 1, 2, 1}, true},  {6, 70, {2, 5, 1, 2, 1, 2, 1, 1}, true},
                        {7, 7, {7, 7, 7, 7, 0, 0, 1, 1}, false},   {5, 4097, {3, 3, 1, 1, 1, 1, 1, 1}, false}};
  for_each_isa([&](Isa) {
    for (DType dtype : kFloatTypes) {
      for (const Case& c : cases) {
        for (bool max : {true, false}) {
          if (!max && (c.win.dilation_h != 1 || c.win.dilation_w != 1)) continue;
          const Shape2d s{3, c.h, c.w, windows(c.h, c.win.kernel_h, c.win.stride_h, c.win.padding_h, c.win.dilation_h, c.ceil_mode),
                          windows(c.w, c.win.kernel_w, c.win.stride_w, c.win.padding_w, c.win.dilation_w, c.ceil_mode)};
          INFO(name_of(dtype), " h ", c.h, " w ", c.w, max ? " max" : " avg");
          const Buffer x = random_buffer(dtype, s.planes * s.h * s.w, -3.0, 3.0, 41);
          Buffer y(dtype, s.planes * s.out_h * s.out_w);
          if (max) {
            max_pool2d(dtype, s.planes, s.h, s.w, s.out_h, s.out_w, c.win, x.data(), y.data());
            check_close(y, direct(x, s, c.win, true, true, 0), 0.0, 0.0);  // the maximum is exact
          } else {
            for (int64_t divisor : {0, 5}) {
              for (bool include_pad : {true, false}) {
                avg_pool2d(dtype, s.planes, s.h, s.w, s.out_h, s.out_w, c.win, include_pad, divisor, x.data(), y.data());
                check_close(y, direct(x, s, c.win, false, include_pad, divisor), tolerance(dtype), 1.0);
              }
            }
          }
        }
      }
    }
  });
}

TEST_CASE("max_pool2d keeps a NaN at any lane of the vector row pass and in the column pass") {
  for_each_isa([](Isa) {
    for (int64_t nan_at : {0, 5, 17, 40}) {
      INFO("NaN at column ", nan_at);
      Buffer x(DType::float32, 4 * 41);
      for (int64_t i = 0; i < x.size(); ++i) x.set(i, static_cast<double>(i % 13));
      x.set(41 + nan_at, std::numeric_limits<double>::quiet_NaN());  // row 1
      Buffer y(DType::float32, 2 * 41);
      max_pool2d(DType::float32, 1, 4, 41, 2, 41, {2, 1, 2, 1, 0, 0, 1, 1}, x.data(), y.data());
      for (int64_t j = 0; j < 41; ++j) {
        CHECK(std::isnan(y.get(j)) == (j == nan_at));
        CHECK_FALSE(std::isnan(y.get(41 + j)));
      }
    }
  });
}

TEST_CASE("the pooling kernels refuse bad windows, outputs past the input, dilated averages and null buffers") {
  Buffer x(DType::float32, 16), y(DType::float32, 16);
  const Pool2dWindow ok{2, 2, 2, 2, 0, 0, 1, 1};
  CHECK_NOTHROW(max_pool2d(DType::float32, 1, 4, 4, 2, 2, ok, x.data(), y.data()));
  CHECK_THROWS_WITH_AS(max_pool2d(DType::float32, 1, 4, 4, 2, 2, {2, 2, 2, 2, 2, 0, 1, 1}, x.data(), y.data()),
                       doctest::Contains("padding along the height must lie in [0, 1], got 2"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(max_pool2d(DType::float32, 1, 4, 4, 2, 2, {2, 0, 2, 2, 0, 0, 1, 1}, x.data(), y.data()),
                       doctest::Contains("must be at least 1"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(max_pool2d(DType::float32, 1, 4, 4, 3, 2, ok, x.data(), y.data()),
                       doctest::Contains("start past the input"), std::invalid_argument);
  CHECK_THROWS_AS(max_pool2d(DType::float32, 1, 4, 4, 0, 2, ok, x.data(), y.data()), std::invalid_argument);
  CHECK_THROWS_WITH_AS(max_pool2d(DType::float32, 1, 0, 4, 1, 2, ok, x.data(), y.data()), doctest::Contains("start past the input"),
                       std::invalid_argument);
  const int64_t huge = std::numeric_limits<int64_t>::max();
  CHECK_THROWS_WITH_AS(max_pool2d(DType::float32, 1, 4, 4, 2, 1, {2, huge, 2, 1, 0, 0, 1, 1}, x.data(), y.data()),
                       doctest::Contains("the window along the width reaches past int64"), std::invalid_argument);
  CHECK_THROWS_AS(avg_pool2d(DType::float32, 1, 4, 4, 2, 2, {2, 2, 2, 2, 0, 0, 2, 1}, true, 0, x.data(), y.data()),
                  std::invalid_argument);
  CHECK_THROWS_AS(max_pool2d(DType::float32, 1, 4, 4, 2, 2, ok, nullptr, y.data()), std::invalid_argument);
  CHECK_THROWS_AS(max_pool2d(DType::int32, 1, 4, 4, 2, 2, ok, x.data(), y.data()), std::invalid_argument);
}

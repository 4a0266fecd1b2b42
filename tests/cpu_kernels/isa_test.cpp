#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "support.hpp"

using namespace tileops;
using namespace tileops::cpu;
using namespace tileops::cpu::test;

TEST_CASE("the portable kernels are always available and the best ISA is active by default") {
  const std::vector<Isa> isas = available_isas();
  REQUIRE_FALSE(isas.empty());
  CHECK(isas.front() == Isa::portable);
  CHECK(active_isa() == isas.back());
}

TEST_CASE("force_isa switches every kernel to that ISA until reset_isa") {
  struct Reset {
    ~Reset() { reset_isa(); }
  } reset;
  for (Isa isa : available_isas()) {
    force_isa(isa);
    CHECK(active_isa() == isa);
  }
  reset_isa();
  CHECK(active_isa() == available_isas().back());
}

TEST_CASE("force_isa refuses an ISA the CPU lacks") {
  const std::vector<Isa> isas = available_isas();
  for (Isa isa : {Isa::avx2, Isa::avx512, Isa::amx}) {
    if (std::find(isas.begin(), isas.end(), isa) == isas.end()) {
      CHECK_THROWS_WITH_AS(force_isa(isa), doctest::Contains(isa_name(isa).data()),
                           std::invalid_argument);
    }
  }
  CHECK(isa_name(Isa::avx512) == "avx512");
  CHECK(isa_name(Isa::amx) == "amx");
}

TEST_CASE("every ISA computes the same float32 rms_norm up to rounding") {
  const int64_t rows = 9, n = 777;
  const Buffer x = random_buffer(DType::float32, rows * n, -1.0, 1.0, 81);
  std::vector<Buffer> outputs;
  for_each_isa([&](Isa) {
    Buffer y(DType::float32, rows * n);
    rms_norm(DType::float32, rows, n, x.data(), nullptr, y.data(), 1e-6);
    outputs.push_back(y);
  });
  for (const Buffer& y : outputs) check_close(y, outputs.front().values(), 1e-6);
}

TEST_CASE("TILEOPS_CPU_THREADS sets the thread count") {
  const char* env = std::getenv("TILEOPS_CPU_THREADS");
  if (env != nullptr && std::atoi(env) > 0) {
    CHECK(thread_count() == std::atoi(env));
  } else {
    CHECK(thread_count() >= 1);
  }
}

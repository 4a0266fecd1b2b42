#include <doctest/doctest.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "kernel_table.hpp"
#include "support.hpp"

using namespace tileops;
using namespace tileops::cpu;
using namespace tileops::cpu::test;

// The instruction set active by default: the best available within TILEOPS_CPU_ISA's cap.
Isa default_isa() {
  const std::optional<Isa> cap = isa_cap(std::getenv("TILEOPS_CPU_ISA")).isa;
  Isa best = Isa::portable;
  for (Isa isa : available_isas()) {
    if (!cap || isa <= *cap) best = isa;
  }
  return best;
}

TEST_CASE("the portable kernels are always available and the best ISA within TILEOPS_CPU_ISA is active by default") {
  const std::vector<Isa> isas = available_isas();
  REQUIRE_FALSE(isas.empty());
  CHECK(isas.front() == Isa::portable);
  CHECK(active_isa() == default_isa());
  if (std::getenv("TILEOPS_CPU_ISA") == nullptr) CHECK(active_isa() == isas.back());
}

TEST_CASE("TILEOPS_CPU_ISA caps the instruction set at a name isa_name gives, and warns about any other value") {
  CHECK_FALSE(isa_cap(nullptr).isa.has_value());
  CHECK(isa_cap(nullptr).warning.empty());
  CHECK_FALSE(isa_cap("").isa.has_value());
  for (Isa isa : {Isa::portable, Isa::avx2, Isa::avx512, Isa::amx}) {
    const IsaCap cap = isa_cap(std::string(isa_name(isa)).c_str());
    CHECK(cap.isa == isa);
    CHECK(cap.warning.empty());
  }
  for (const char* bad : {"AVX512", "avx-512", "sse4", " amx"}) {
    const IsaCap cap = isa_cap(bad);
    CHECK_FALSE(cap.isa.has_value());
    CHECK(cap.warning.find("TILEOPS_CPU_ISA='" + std::string(bad) + "' names no instruction set") != std::string::npos);
    CHECK(cap.warning.find("portable, avx2, avx512, amx") != std::string::npos);
  }
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
  CHECK(active_isa() == default_isa());
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

// for_each_isa leaves amx out on this promise: outside the attention entries, which end the table,
// its kernels are avx512's.
TEST_CASE("the amx kernel table is avx512's but for the attention entries") {
  static_assert(offsetof(KernelTable, attention_decode_part) + sizeof(KernelTable::attention_decode_part) ==
                    sizeof(KernelTable),
                "the attention entries end the kernel table");
  const KernelTable& amx = amx_kernels();
  const KernelTable& avx512 = avx512_kernels();
  CHECK(amx.isa == Isa::amx);
  CHECK(avx512.isa == Isa::avx512);
  const std::size_t first = offsetof(KernelTable, rms_norm), end = offsetof(KernelTable, attention_pack);
  CHECK(std::memcmp(reinterpret_cast<const char*>(&amx) + first, reinterpret_cast<const char*>(&avx512) + first,
                    end - first) == 0);
  const bool own_prefill = amx.attention_rows != avx512.attention_rows;
  CHECK(own_prefill);
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

#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "cpu_kernels.hpp"
#include "kernel_table.hpp"
#include "thread_pool.hpp"

namespace tileops::cpu {
namespace {

// Every instruction set, from portable to the best.
constexpr Isa kIsas[] = {Isa::portable, Isa::avx2, Isa::avx512, Isa::amx};

// F16C from CPUID leaf 1 (clang's __builtin_cpu_supports has no name for it).
bool cpu_has_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
}

// AMX-TILE and AMX-BF16 (CPUID leaf 7: EDX bits 24 and 22), AVX-512 BF16 (leaf 7, subleaf 1:
// EAX bit 5), and Linux's leave to use the tile registers, which a process must ask for
// (arch_prctl ARCH_REQ_XCOMP_PERM for the tile data) before its first tile instruction: asked
// once, for the whole process.
bool cpu_has_amx() {
  static const bool usable = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0) return false;
    const bool tiles = (edx & (1u << 24)) != 0 && (edx & (1u << 22)) != 0;
    if (!tiles || eax < 1) return false;
    if (__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) == 0 || (eax & (1u << 5)) == 0) return false;
#if defined(__linux__)
    constexpr long kRequestPermission = 0x1023;  // ARCH_REQ_XCOMP_PERM
    constexpr long kTileData = 18;               // XFEATURE_XTILEDATA
    return syscall(SYS_arch_prctl, kRequestPermission, kTileData) == 0;
#else
    return false;
#endif
  }();
  return usable;
}

bool cpu_runs(Isa isa) {
  __builtin_cpu_init();
  switch (isa) {
    case Isa::portable:
      return true;
    case Isa::avx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && cpu_has_f16c();
    case Isa::avx512:
      return cpu_runs(Isa::avx2) && __builtin_cpu_supports("avx512f") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
             __builtin_cpu_supports("avx512dq");
    case Isa::amx:
      return cpu_runs(Isa::avx512) && cpu_has_amx();
  }
  return false;
}

const KernelTable& table_of(Isa isa) {
  switch (isa) {
    case Isa::amx:
      return amx_kernels();
    case Isa::avx512:
      return avx512_kernels();
    case Isa::avx2:
      return avx2_kernels();
    case Isa::portable:
      break;
  }
  return portable_kernels();
}

const KernelTable& detected_kernels() {
  static const KernelTable& best = []() -> const KernelTable& {
    const IsaCap cap = isa_cap(std::getenv("TILEOPS_CPU_ISA"));
    if (!cap.warning.empty()) warn(cap.warning);
    Isa chosen = Isa::portable;
    for (Isa isa : available_isas()) {
      if (!cap.isa || isa <= *cap.isa) chosen = isa;
    }
    return table_of(chosen);
  }();
  return best;
}

std::atomic<const KernelTable*> g_forced{nullptr};

}  // namespace

std::string_view isa_name(Isa isa) {
  switch (isa) {
    case Isa::portable:
      return "portable";
    case Isa::avx2:
      return "avx2";
    case Isa::avx512:
      return "avx512";
    case Isa::amx:
      return "amx";
  }
  return "unknown";
}

IsaCap isa_cap(const char* value) {
  if (value == nullptr || *value == '\0') return {};
  std::string names;
  for (Isa isa : kIsas) {
    if (isa_name(isa) == value) return {isa, {}};
    names += (names.empty() ? "" : ", ") + std::string(isa_name(isa));
  }
  return {std::nullopt, "TILEOPS_CPU_ISA='" + std::string(value) + "' names no instruction set: expected one of " +
                            names + "; using the best this CPU runs"};
}

std::vector<Isa> available_isas() {
  std::vector<Isa> isas;
  for (Isa isa : kIsas) {
    if (cpu_runs(isa)) isas.push_back(isa);
  }
  return isas;
}

Isa active_isa() { return active_kernels().isa; }

void force_isa(Isa isa) {
  if (!cpu_runs(isa)) {
    throw std::invalid_argument("force_isa: this CPU cannot run the " + std::string(isa_name(isa)) +
                                " kernels");
  }
  g_forced.store(&table_of(isa), std::memory_order_release);
}

void reset_isa() { g_forced.store(nullptr, std::memory_order_release); }

const KernelTable& active_kernels() {
  const KernelTable* forced = g_forced.load(std::memory_order_acquire);
  return forced != nullptr ? *forced : detected_kernels();
}

}  // namespace tileops::cpu

// The kernels compiled for the default target of the build: they run on any CPU.
#include "kernel_table.hpp"
#include "simd/portable.hpp"
// The kernels, built on the vector types above.
#include "impl/table.hpp"

namespace tileops::cpu {
namespace {
constexpr KernelTable kTable = table_for(Isa::portable);
}  // namespace

const KernelTable& portable_kernels() { return kTable; }
}  // namespace tileops::cpu

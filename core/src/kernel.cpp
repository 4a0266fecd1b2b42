#include "tileops/extend/kernel.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace tileops {

std::string demangle(const std::type_info& type) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), std::free);
  return status == 0 && name ? std::string(name.get()) : std::string(type.name());
}

KernelInterface::~KernelInterface() = default;

Kernel::~Kernel() = default;
void Kernel::request_tune() { tune_requested_ = true; }
std::optional<std::string> Kernel::config() const { return std::nullopt; }
std::vector<Kernel*> Kernel::sub_kernels() { return {}; }

}  // namespace tileops

#include "acme_runtime.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

namespace acme {

tileops::DeviceType AcmeRuntime::type() const { return tileops::DeviceType::intern("acme"); }

tileops::DeviceFacts AcmeRuntime::facts(int index) const {
  tileops::DeviceFacts f;
  f.arch = 1;
  f.sm_count = 8;
  f.name = "Acme Tensor Engine " + std::to_string(index);
  return f;
}

void* AcmeRuntime::allocate(std::size_t nbytes, int) {
  if (nbytes == 0) return nullptr;
  void* p = std::aligned_alloc(64, (nbytes + 63) / 64 * 64);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

void AcmeRuntime::deallocate(void* ptr, std::size_t, int) noexcept { std::free(ptr); }
void AcmeRuntime::copy_to_host(void* dst, const void* src, std::size_t n, int) { std::memmove(dst, src, n); }
void AcmeRuntime::copy_from_host(void* dst, const void* src, std::size_t n, int) { std::memmove(dst, src, n); }
void AcmeRuntime::copy_on_device(void* dst, const void* src, std::size_t n, int) { std::memmove(dst, src, n); }

}  // namespace acme

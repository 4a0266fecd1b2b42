// Which of 2^bits stripes the calling thread uses, so that threads touching one structure
// mostly write cache lines of their own.
#pragma once

#include <pthread.h>

#include <cstddef>
#include <cstdint>

namespace tileops {

// Thread ids are addresses of thread control blocks; the multiplication spreads their bits into
// the top `bits`, which pick the stripe.
template <unsigned bits>
std::size_t thread_stripe() {
  static_assert(bits > 0 && bits < 16);
  const auto id = static_cast<std::uint64_t>(pthread_self());
  return static_cast<std::size_t>((id * 0x9e3779b97f4a7c15ull) >> (64 - bits));
}

}  // namespace tileops

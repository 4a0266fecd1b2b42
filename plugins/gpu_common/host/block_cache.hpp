// Blocks of device memory the calling thread freed on a device's default stream, kept for its
// next allocations of the same size there.
//
// Stream order makes a block freed on a stream free for all work queued on that stream later, so
// handing it out again needs no pool operation. Each stream-ordered pool allocation and free costs
// device time (about 1.5 us per call on the H200, row_ops_harness): a tenth of an elementwise op
// over [2048, 4096]. Only the default stream is served: it is never destroyed, so a kept block can
// never reach a new stream that took a destroyed one's handle. Per thread, so keeping and taking
// lock nothing; bounded per thread (kKeptBlocks blocks, kKeptBytes bytes), the rest goes
// back to the pool. A thread's blocks return to the pool when it exits.
#pragma once

#include <cstddef>

namespace tileops::gpu::block_cache {

inline constexpr int kKeptBlocks = 4;
inline constexpr std::size_t kKeptBytes = std::size_t{1} << 30;

// A block of exactly `nbytes` on device `index` that this thread kept, now the caller's, or
// nullptr when it kept none.
void* take(std::size_t nbytes, int index) noexcept;

// Keeps `ptr`, `nbytes` on device `index` that the caller frees on the device's default stream,
// returning the oldest kept blocks to the pool to make room; false (nothing kept) when it is
// larger than kKeptBytes, and the caller frees it.
bool keep(void* ptr, std::size_t nbytes, int index) noexcept;

// Returns every block this thread keeps for device `index` to the pool (before an allocation
// that ran out of memory is retried).
void release(int index) noexcept;

}  // namespace tileops::gpu::block_cache

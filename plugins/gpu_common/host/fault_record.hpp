// What a kernel found wrong in indices it read from device memory (cache lengths, block-table
// entries, token ids): the host cannot check those without waiting for the device, so the kernel checks
// each index before it reads through it, skips what is out of range (never reading or writing
// outside a tensor), and records the first such fault here. The record lives in host memory
// mapped into the device (one per device, GpuRuntime::fault_record), so the host reads it
// without synchronising; GpuRuntime::raise_pending_fault turns it into a ValueError.
// Plain C++: included by the device code and by the host code.
#pragma once

#include <cstdint>

namespace tileops::gpu {

// The kernel that found the fault (named in the error).
enum class FaultSource : std::int32_t { none = 0, decode, paged_decode, cache_append, paged_cache_append, embedding, moe_experts };

// What was out of range.
enum class FaultKind : std::int32_t {
  none = 0,
  seqlen,       // cache_seqlens[row] = value, outside [low, high]
  block_table,  // block_table[row, column] = value, outside [low, high]
  id,           // ids[row] (the flat index) = value, outside [low, high]
  expert_id,    // topk_ids[row, column] = value, outside [low, high]
};

struct FaultRecord {
  // Set to 1 by the one thread that wins the right to fill the record.
  std::int32_t claimed;
  // Written last (after the fields below), so that a host that sees it set sees them too.
  std::int32_t kind;
  std::int32_t source;
  std::int32_t reserved;
  std::int64_t row, column, value, low, high;
};

}  // namespace tileops::gpu

// Appending new keys and values to a contiguous or paged KV cache: one thread per 16-byte chunk
// (or element) of a new token's [kv_heads, head_dim] row, each reading its sequence's length
// and, paged, its page, and checking them before it writes.
#include "../host/attention_launchers.hpp"
#include "launch.cuh"
#include "report_fault.cuh"

namespace tileops::gpu {
namespace {

constexpr int kThreads = 256;

// Where token t of sequence b goes, as a slot of the cache viewed as [slots, kv_heads *
// head_dim]; -1 when its length or page is out of range (recorded once, by the thread of the
// token's first chunk).
__device__ __forceinline__ std::int64_t append_slot(const CacheAppendArgs& a, std::int64_t b, std::int64_t t,
                                                     bool reporter) {
  const bool paged = a.block_table != nullptr;
  const std::int64_t n = a.seqlens[b];
  if (n < 0 || n + a.added > a.capacity) {
    if (reporter && t == 0) {
      report_fault(a.faults, paged ? FaultSource::paged_cache_append : FaultSource::cache_append, FaultKind::seqlen, b,
                   0, n, 0, a.capacity - a.added);
    }
    return -1;
  }
  const std::int64_t pos = n + t;
  if (!paged) return b * a.capacity + pos;
  const std::int64_t column = pos / a.block_size;
  const std::int64_t page = a.block_table[b * a.max_blocks + column];
  if (page < 0 || page >= a.num_blocks) {
    if (reporter) {
      report_fault(a.faults, FaultSource::paged_cache_append, FaultKind::block_table, b, column, page, 0,
                   a.num_blocks - 1);
    }
    return -1;
  }
  return page * a.block_size + pos % a.block_size;
}

__global__ void clear_writers_kernel(std::int32_t* writer, std::int64_t slots) {
  for (std::int64_t i = global_thread(); i < slots; i += grid_threads()) writer[i] = -1;
}

// Marks each paged slot with the last token, in (b, t) order, that writes it.
__global__ void mark_last_writer_kernel(CacheAppendArgs a, std::int32_t* writer) {
  const std::int64_t tokens = a.batch * a.added;
  for (std::int64_t i = global_thread(); i < tokens; i += grid_threads()) {
    const std::int64_t slot = append_slot(a, i / a.added, i % a.added, false);
    if (slot >= 0) atomicMax(writer + slot, static_cast<std::int32_t>(i));
  }
}

// kVec elements per thread; `writer` (paged only) keeps a slot for its last writer.
template <class T, int kVec>
__global__ void append_kernel(CacheAppendArgs a, const std::int32_t* writer) {
  const std::int64_t row = a.kv_heads * a.head_dim;
  const std::int64_t chunks = row / kVec;
  const std::int64_t total = a.batch * a.added * chunks;
  for (std::int64_t i = global_thread(); i < total; i += grid_threads()) {
    const std::int64_t token = i / chunks;
    const std::int64_t c = i - token * chunks;
    const std::int64_t slot = append_slot(a, token / a.added, token % a.added, c == 0);
    if (slot < 0 || (writer != nullptr && writer[slot] != token)) continue;
    const T* kn = static_cast<const T*>(a.k_new) + token * row + c * kVec;
    const T* vn = static_cast<const T*>(a.v_new) + token * row + c * kVec;
    T* kc = static_cast<T*>(a.k_cache) + slot * row + c * kVec;
    T* vc = static_cast<T*>(a.v_cache) + slot * row + c * kVec;
    if constexpr (kVec > 1) {
      store_pack<kVec>(kc, load_pack<kVec>(kn));
      store_pack<kVec>(vc, load_pack<kVec>(vn));
    } else {
      *kc = *kn;
      *vc = *vn;
    }
  }
}

}  // namespace

std::size_t cache_append_workspace_bytes(const CacheAppendArgs& a) {
  if (a.block_table == nullptr || a.batch * a.added == 0) return 0;
  return static_cast<std::size_t>(a.num_blocks * a.block_size) * sizeof(std::int32_t);
}

void launch_cache_append(const CacheAppendArgs& a, void* workspace, void* stream) {
  const std::int64_t tokens = a.batch * a.added;
  if (tokens == 0 || a.kv_heads * a.head_dim == 0) return;
  if (tokens > 0x7fffffff) throw ValueError("gpu kv cache append: " + std::to_string(tokens) + " tokens exceed int32");
  const NativeStream s = native_stream(stream);
  auto* writer = static_cast<std::int32_t*>(workspace);
  if (a.block_table != nullptr) {
    const std::int64_t slots = a.num_blocks * a.block_size;
    clear_writers_kernel<<<blocks_for(slots, kThreads), kThreads, 0, s>>>(writer, slots);
    mark_last_writer_kernel<<<blocks_for(tokens, kThreads), kThreads, 0, s>>>(a, writer);
  }
  with_float_type(a.dtype, "kv_cache_append", [&](auto tag) {
    using T = decltype(tag);
    constexpr int kVec = kVec16<T>;
    const std::int64_t row = a.kv_heads * a.head_dim;
    const bool vectors = row % kVec == 0 && aligned16(a.k_cache) && aligned16(a.v_cache) && aligned16(a.k_new) &&
                         aligned16(a.v_new);
    if (vectors) {
      append_kernel<T, kVec><<<blocks_for(tokens * (row / kVec), kThreads), kThreads, 0, s>>>(a, writer);
    } else {
      append_kernel<T, 1><<<blocks_for(tokens * row, kThreads), kThreads, 0, s>>>(a, writer);
    }
  });
  check_launch(a.block_table != nullptr ? "paged_kv_cache_append" : "kv_cache_append");
}

}  // namespace tileops::gpu

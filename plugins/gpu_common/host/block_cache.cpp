#include "block_cache.hpp"

#include <array>

#include "vendor_api.hpp"

namespace tileops::gpu::block_cache {
namespace {

struct Block {
  void* ptr;
  std::size_t bytes;
  int device;
};

void free_to_pool(const Block& b) noexcept {
  // Fails only once the process is tearing the runtime down, when nothing can use the memory.
  if (api::free_async(b.ptr, nullptr) != api::kSuccess) api::clear_last_error();
}

// Oldest first.
struct ThreadBlocks {
  std::array<Block, kKeptBlocks> blocks{};
  int count = 0;
  std::size_t bytes = 0;

  void remove(int i) {
    bytes -= blocks[static_cast<std::size_t>(i)].bytes;
    for (int j = i + 1; j < count; ++j) blocks[static_cast<std::size_t>(j - 1)] = blocks[static_cast<std::size_t>(j)];
    --count;
  }
  ~ThreadBlocks() {
    for (int i = 0; i < count; ++i) free_to_pool(blocks[static_cast<std::size_t>(i)]);
  }
};

thread_local ThreadBlocks t_blocks;

}  // namespace

void* take(std::size_t nbytes, int index) noexcept {
  ThreadBlocks& t = t_blocks;
  for (int i = t.count - 1; i >= 0; --i) {
    const Block& b = t.blocks[static_cast<std::size_t>(i)];
    if (b.bytes == nbytes && b.device == index) {
      void* ptr = b.ptr;
      t.remove(i);
      return ptr;
    }
  }
  return nullptr;
}

bool keep(void* ptr, std::size_t nbytes, int index) noexcept {
  if (nbytes > kKeptBytes) return false;
  ThreadBlocks& t = t_blocks;
  while (t.count == kKeptBlocks || t.bytes + nbytes > kKeptBytes) {
    free_to_pool(t.blocks[0]);
    t.remove(0);
  }
  t.blocks[static_cast<std::size_t>(t.count++)] = Block{ptr, nbytes, index};
  t.bytes += nbytes;
  return true;
}

void release(int index) noexcept {
  ThreadBlocks& t = t_blocks;
  for (int i = t.count - 1; i >= 0; --i) {
    if (t.blocks[static_cast<std::size_t>(i)].device == index) {
      free_to_pool(t.blocks[static_cast<std::size_t>(i)]);
      t.remove(i);
    }
  }
}

}  // namespace tileops::gpu::block_cache

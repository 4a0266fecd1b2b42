// The host-side interface of the shared attention kernels (../kernels/attention_*.cu,
// ../kernels/kv_cache_append.cu), with the rules of launchers.hpp: raw device pointers of the
// call's device, current device set, the stream as void*, nothing launched for empty work,
// RuntimeError when a launch fails and TypeError for a dtype without a body. Masks and scores
// are those of the attention interfaces (manifests/attention.yaml): scores scaled by sm_scale,
// capped by softcap (0: none), causal rows aligned to the bottom right, window_left keys left
// of the diagonal (-1: all).
#pragma once

#include <cstddef>
#include <cstdint>

#include "fault_record.hpp"
#include "tileops/dtype.hpp"

namespace tileops::gpu {

// Dense prefill: q, o contiguous [batch, seq_q, heads, head_dim]; k, v contiguous
// [batch, seq_kv, kv_heads, head_dim]; lse float32 [batch, heads, seq_q] or null.
struct AttentionArgs {
  const void* q;
  const void* k;
  const void* v;
  void* o;
  float* lse;
  std::int64_t batch, seq_q, seq_kv, heads, kv_heads, head_dim;
  float sm_scale;
  float softcap;
  std::int64_t window_left;
  bool causal;
  DType dtype;  // float32, float16 or bfloat16
  int warp_size;  // threads of a warp on the device (GpuRuntime::warp_size): the launch geometry
};
// Whether the tensor-core kernel (CUDA, compute capability `arch` >= 80) serves these
// arguments: float16 or bfloat16, head_dim 64 or 128, every pointer 16-byte aligned. The
// other calls take the portable kernel, which serves every even head_dim up to 256.
bool attention_uses_tensor_cores(const AttentionArgs& args, int arch);
void launch_attention(const AttentionArgs& args, int arch, void* stream);

// Decode: one query per sequence. q, o contiguous [batch, heads, head_dim]. Contiguous cache
// (block_table null): k, v [batch, capacity, kv_heads, head_dim]. Paged cache: k, v
// [num_blocks, block_size, kv_heads, head_dim], block_table [batch, max_blocks], capacity =
// max_blocks * block_size. seqlens [batch]. A length outside [0, capacity] or a table entry
// outside [0, num_blocks) that the kernel meets is recorded in `faults` and read through
// nowhere: the sequence counts as empty, or the page's keys as masked.
struct DecodeArgs {
  const void* q;
  const void* k;
  const void* v;
  void* o;
  const std::int32_t* seqlens;
  const std::int32_t* block_table;
  std::int64_t batch, heads, kv_heads, head_dim, capacity;
  std::int64_t max_blocks, block_size, num_blocks;
  float sm_scale;
  float softcap;
  std::int64_t window_left;
  DType dtype;  // float32, float16 or bfloat16
  FaultRecord* faults;
  int warp_size;  // threads of a warp on the device (GpuRuntime::warp_size): the launch geometry
};
// Whether the tensor-core decode kernel (CUDA, compute capability `arch` >= 80) serves these
// arguments: float16 or bfloat16, head_dim 64 or 128, q, k and v 16-byte aligned. The other
// calls take the CUDA-core kernel, which serves every even head_dim up to 256.
bool decode_uses_tensor_cores(const DecodeArgs& args, int arch);
// How many parts each sequence's keys are split into (flash-decoding), so that the grid fills
// a device of `sm_count` multiprocessors; 1 needs no workspace.
int decode_splits(const DecodeArgs& args, int sm_count, int arch);
// The device workspace launch_decode needs for `splits` parts (0 for one part).
std::size_t decode_workspace_bytes(const DecodeArgs& args, int splits);
// Launches the decode kernel and, for splits > 1, the merge of the parts (workspace of
// decode_workspace_bytes(args, splits)). Throws ValueError for a head_dim outside [1, 256] or a
// capacity past 2^31 - 1 positions; launches nothing for an empty batch.
void launch_decode(const DecodeArgs& args, int splits, void* workspace, int arch, void* stream);

// Appending `added` tokens per sequence: k_new, v_new contiguous [batch, added, kv_heads,
// head_dim] written after the seqlens[b] cached ones, into a contiguous cache (block_table
// null; [batch, capacity, kv_heads, head_dim]) or a paged one (as DecodeArgs). A sequence whose
// length leaves no room for the tokens is not written, nor is a token whose table entry is
// outside [0, num_blocks); either is recorded in `faults`. Where two tokens land on one paged
// slot, the later in (b, t) order is kept (a first pass marks each slot's last writer in a
// workspace of num_blocks * block_size int32).
struct CacheAppendArgs {
  void* k_cache;
  void* v_cache;
  const void* k_new;
  const void* v_new;
  const std::int32_t* seqlens;
  const std::int32_t* block_table;
  std::int64_t batch, added, kv_heads, head_dim, capacity;
  std::int64_t max_blocks, block_size, num_blocks;
  DType dtype;  // float32, float16 or bfloat16
  FaultRecord* faults;
};
// The device workspace launch_cache_append needs (0 for a contiguous cache).
std::size_t cache_append_workspace_bytes(const CacheAppendArgs& args);
void launch_cache_append(const CacheAppendArgs& args, void* workspace, void* stream);

}  // namespace tileops::gpu

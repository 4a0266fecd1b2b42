// Decode attention over a contiguous or paged KV cache, split along the keys ("flash-decoding"):
// a block serves one (sequence, KV head, group of up to kG query heads, part of the keys), so
// the group's heads share every key and value the block reads; its warps take keys in turn,
// each key row spread over a group of lanes that load it 16 bytes at a time, several keys in
// flight per lane. Each warp keeps an online softmax (running max, sum and weighted values per
// head); the warps merge theirs through shared memory, and, with several parts, a second
// kernel merges the parts by their log-sum-exp.
#include <cmath>
#include <mutex>

#include "async_copy.cuh"
#include "attention_decode.cuh"
#include "report_fault.cuh"

namespace tileops::gpu {
namespace {

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * kWarpSize;  // in device code; the host launches warp_threads(kWarps, ...)

template <class T, int kE, int kC>
struct RowChunks {
  float v[kC][kE];
};

// A key or value row's elements this lane holds, as loaded: chunk c covers elements
// (c * lanes + li) * kE .. + kE; those past head_dim (and all of an invalid row) are 0. Kept in
// the element type until used, so that several rows in flight cost few registers.
template <class T, int kE, int kC>
struct RawRow {
  Pack<T, kE> c[kC];
};

template <class T, int kE, int kC>
__device__ __forceinline__ void load_raw(const T* row, int li, int lanes, int d, bool valid, RawRow<T, kE, kC>& out) {
#pragma unroll
  for (int c = 0; c < kC; ++c) {
    const int e0 = (c * lanes + li) * kE;
    if (valid && e0 + kE <= d) {
      out.c[c] = load_pack<kE>(row + e0);
    } else {
#pragma unroll
      for (int e = 0; e < kE; ++e) out.c[c].v[e] = T{};
    }
  }
}

template <class T, int kE, int kC>
__device__ __forceinline__ void load_row(const T* row, int li, int lanes, int d, bool valid, RowChunks<T, kE, kC>& out) {
  RawRow<T, kE, kC> raw;
  load_raw<T, kE, kC>(row, li, lanes, d, valid, raw);
#pragma unroll
  for (int c = 0; c < kC; ++c)
#pragma unroll
    for (int e = 0; e < kE; ++e) out.v[c][e] = to_float(raw.c[c].v[e]);
}

// kLanes lanes hold a key row (a power of two up to the warp), kC chunks of kE elements each;
// kStages > 1 (16-byte chunks, one a lane, CUDA sm_80 and later) keeps that many iterations'
// loads in flight through shared memory.
template <class T, int kE, int kC, int kLanes, int kG, int kU, int kStages, bool kPaged>
__global__ void __launch_bounds__(kThreads) decode_kernel(DecodeParams p) {
  // Shared memory: the staging slots of the loads in flight, then the warps' merge.
  constexpr int kMaxD = 256;
  constexpr std::size_t kAccBytes = sizeof(float) * kWarps * kG * kMaxD;
  constexpr std::size_t kMergeBytes = kAccBytes + 2 * sizeof(float) * kWarps * kG;
  constexpr std::size_t kStageBytes = static_cast<std::size_t>(kStages) * kU * 2 * kThreads * 16;
  constexpr std::size_t kSmemBytes = kStages > 1 && kStageBytes > kMergeBytes ? kStageBytes : kMergeBytes;
  __shared__ Pack<float, 4> smem_chunks[kSmemBytes / 16];  // 16-byte aligned
  unsigned char* smem = reinterpret_cast<unsigned char*>(smem_chunks);
  let_dependent_grid_launch();
  const DecodeArgs& a = p.a;
  const int d = static_cast<int>(a.head_dim);
  const std::int64_t block = blockIdx.x;
  const int split = static_cast<int>(block % p.splits);
  const std::int64_t rest = block / p.splits;
  const int head_block = static_cast<int>(rest % (a.kv_heads * p.group_chunks));
  const std::int64_t b = rest / (a.kv_heads * p.group_chunks);
  const int kvh = head_block / p.group_chunks;
  const int g0 = (head_block % p.group_chunks) * kG;
  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  constexpr int lanes = kLanes;
  constexpr int rows = kWarpSize / kLanes;  // keys a warp reads at once
  const int sub = lane / lanes;
  const int li = lane % lanes;

  const KeyRange keys = key_range(a, b, split, p.splits, threadIdx.x == 0 && split == 0 && head_block == 0);
  const std::int64_t begin = keys.begin, end = keys.end;

  // The group's queries, scaled so that q . k is the score (in base 2 without a cap).
  const float q_scale = a.softcap > 0.f ? a.sm_scale : a.sm_scale * kLog2e;
  RowChunks<T, kE, kC> q[kG];
#pragma unroll
  for (int g = 0; g < kG; ++g) {
    const bool head = g0 + g < p.group;
    const T* row = static_cast<const T*>(a.q) + ((b * a.heads) + kvh * p.group + (head ? g0 + g : 0)) * d;
    load_row<T, kE, kC>(row, li, lanes, d, head, q[g]);
#pragma unroll
    for (int c = 0; c < kC; ++c)
#pragma unroll
      for (int e = 0; e < kE; ++e) q[g].v[c][e] *= q_scale;
  }

  float m[kG], l[kG];
  RowChunks<T, kE, kC> acc[kG];
#pragma unroll
  for (int g = 0; g < kG; ++g) {
    m[g] = kNegInf;
    l[g] = 0.f;
#pragma unroll
    for (int c = 0; c < kC; ++c)
#pragma unroll
      for (int e = 0; e < kE; ++e) acc[g].v[c][e] = 0.f;
  }

  const T* kbase = static_cast<const T*>(a.k);
  const T* vbase = static_cast<const T*>(a.v);
  const std::int64_t step = static_cast<std::int64_t>(kWarps) * rows;

  // The block-table entry of the page holding key position `pos` (paged caches; 0 past this
  // part's end, where nothing is read).
  const auto page_of = [&](std::int64_t pos) -> std::int64_t {
    if constexpr (!kPaged) return 0;
    const std::uint32_t column = p.block_size.quotient(static_cast<std::uint32_t>(pos));
    return pos < end ? a.block_table[b * a.max_blocks + column] : 0;
  };
  // The element offset of the row of key position `pos` in the cache, given page_of(pos);
  // `valid` turns false when the position is past this part's end or its page is out of range
  // (recorded).
  const auto locate = [&](std::int64_t pos, std::int64_t page, bool& valid) -> std::int64_t {
    valid = pos < end;
    std::int64_t slot = 0;
    if constexpr (kPaged) {
      const auto column = static_cast<std::int64_t>(p.block_size.quotient(static_cast<std::uint32_t>(pos)));
      if (page < 0 || page >= a.num_blocks) {
        if (li == 0) {
          report_fault(a.faults, FaultSource::paged_decode, FaultKind::block_table, b, column, page, 0,
                       a.num_blocks - 1);
        }
        valid = false;
      }
      slot = valid ? page * a.block_size + (pos - column * a.block_size) : 0;
    } else {
      slot = valid ? b * a.capacity + pos : 0;
    }
    return (slot * a.kv_heads + kvh) * d;
  };

  // Folds kU keys' rows into the online softmax of every head of the group.
  const auto fold = [&](const RawRow<T, kE, kC>(&kr)[kU], const RawRow<T, kE, kC>(&vr)[kU], const bool(&valid)[kU]) {
      // Every (key, head) dot product, then their sums over the row's lanes, all shuffles of a
      // step independent of each other.
      float s[kU][kG];
#pragma unroll
      for (int u = 0; u < kU; ++u) {
        float k_elems[kC][kE];
#pragma unroll
        for (int c = 0; c < kC; ++c)
#pragma unroll
          for (int e = 0; e < kE; ++e) k_elems[c][e] = to_float(kr[u].c[c].v[e]);
#pragma unroll
        for (int g = 0; g < kG; ++g) {
          float dot = 0.f;
#pragma unroll
          for (int c = 0; c < kC; ++c)
#pragma unroll
            for (int e = 0; e < kE; ++e) dot = fmaf(q[g].v[c][e], k_elems[c][e], dot);
          s[u][g] = dot;
        }
      }
#pragma unroll
      for (int mask = lanes / 2; mask > 0; mask /= 2)
#pragma unroll
        for (int u = 0; u < kU; ++u)
#pragma unroll
          for (int g = 0; g < kG; ++g) s[u][g] += shuffle_xor(s[u][g], mask);
#pragma unroll
      for (int g = 0; g < kG; ++g) {
        float tile_max = kNegInf;
#pragma unroll
        for (int u = 0; u < kU; ++u) {
          float x = s[u][g];
          if (a.softcap > 0.f) x = a.softcap * tanhf(x / a.softcap) * kLog2e;
          s[u][g] = valid[u] ? x : kNegInf;
          tile_max = fmaxf(tile_max, s[u][g]);
        }
        const float m_new = fmaxf(m[g], tile_max);
        const float scale = exp2_rel(m[g], m_new);
        m[g] = m_new;
        l[g] *= scale;
#pragma unroll
        for (int c = 0; c < kC; ++c)
#pragma unroll
          for (int e = 0; e < kE; ++e) acc[g].v[c][e] *= scale;
#pragma unroll
        for (int u = 0; u < kU; ++u) {
          const float pu = exp2_rel(s[u][g], m_new);
          l[g] += pu;
#pragma unroll
          for (int c = 0; c < kC; ++c)
#pragma unroll
            for (int e = 0; e < kE; ++e) acc[g].v[c][e] = fmaf(pu, to_float(vr[u].c[c].v[e]), acc[g].v[c][e]);
        }
      }
  };

  // The warp's keys: position base + sub + u * step of iteration (base - begin - warp * rows) /
  // (step * kU). The bound is the warp's, not the lane's: the score reduction shuffles across
  // the warp.
  const std::int64_t warp_begin = begin + warp * rows;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (kStages > 1) {
    // kStages iterations in flight: each lane copies its own chunks of the rows into its own
    // slots of shared memory (cp.async) and reads back only those, so no barrier is needed.
    const int iterations = warp_begin < end ? static_cast<int>((end - warp_begin + step * kU - 1) / (step * kU)) : 0;
    std::uint32_t valid_bits = 0;  // bit stage * kU + u
    const auto slot_of = [&](int stage, int u, int which) {
      return reinterpret_cast<Pack<T, kE>*>(smem) + ((stage * kU + u) * 2 + which) * kThreads + threadIdx.x;
    };
    const auto position = [&](int it, int u) {
      return warp_begin + sub + (static_cast<std::int64_t>(it) * kU + u) * step;
    };
    // The table entries of the next iteration to issue, read one issue ahead so that the
    // copies never wait for them.
    std::int64_t pages[kU];
    const auto read_pages = [&](int it) {
#pragma unroll
      for (int u = 0; u < kU; ++u) pages[u] = page_of(position(it, u));
    };
    const auto issue = [&](int it) {
      const int stage = it % kStages;
#pragma unroll
      for (int u = 0; u < kU; ++u) {
        bool valid = false;
        const std::int64_t offset = locate(position(it, u), pages[u], valid);
        const bool chunk = valid && li * kE + kE <= d;
        const std::int64_t at = chunk ? offset + li * kE : 0;
        copy16_async(slot_of(stage, u, 0), kbase + at, chunk);
        copy16_async(slot_of(stage, u, 1), vbase + at, chunk);
        const std::uint32_t bit = 1u << (stage * kU + u);
        valid_bits = valid ? valid_bits | bit : valid_bits & ~bit;
      }
    };
    read_pages(0);
#pragma unroll
    for (int it = 0; it < kStages - 1; ++it) {
      if (it < iterations) {
        issue(it);
        read_pages(it + 1);
      }
      commit_copies();
    }
    for (int it = 0; it < iterations; ++it) {
      if (it + kStages - 1 < iterations) {
        issue(it + kStages - 1);
        read_pages(it + kStages);
      }
      commit_copies();
      wait_copies<kStages - 1>();
      const int stage = it % kStages;
      RawRow<T, kE, kC> kr[kU], vr[kU];
      bool valid[kU];
#pragma unroll
      for (int u = 0; u < kU; ++u) {
        kr[u].c[0] = *slot_of(stage, u, 0);
        vr[u].c[0] = *slot_of(stage, u, 1);
        valid[u] = (valid_bits >> (stage * kU + u)) & 1u;
      }
      fold(kr, vr, valid);
    }
  } else
#endif
  {
    for (std::int64_t base = warp_begin; base < end; base += step * kU) {
      RawRow<T, kE, kC> kr[kU], vr[kU];
      bool valid[kU];
#pragma unroll
      for (int u = 0; u < kU; ++u) {
        const std::int64_t pos = base + sub + u * step;
        const std::int64_t offset = locate(pos, page_of(pos), valid[u]);
        load_raw<T, kE, kC>(kbase + offset, li, lanes, d, valid[u], kr[u]);
        load_raw<T, kE, kC>(vbase + offset, li, lanes, d, valid[u], vr[u]);
      }
      fold(kr, vr, valid);
    }
  }

  // Merge the warp's key rows (lanes li of every sub), then the warps.
#pragma unroll
  for (int g = 0; g < kG; ++g) {
#pragma unroll
    for (int mask = lanes; mask < kWarpSize; mask *= 2) {
      const float m_o = shuffle_xor(m[g], mask);
      const float l_o = shuffle_xor(l[g], mask);
      const float m_new = fmaxf(m[g], m_o);
      const float mine = exp2_rel(m[g], m_new), theirs = exp2_rel(m_o, m_new);
      l[g] = l[g] * mine + l_o * theirs;
#pragma unroll
      for (int c = 0; c < kC; ++c)
#pragma unroll
        for (int e = 0; e < kE; ++e) {
          const float other = shuffle_xor(acc[g].v[c][e], mask);
          acc[g].v[c][e] = acc[g].v[c][e] * mine + other * theirs;
        }
      m[g] = m_new;
    }
  }
  __syncthreads();  // the staging slots become the merge's scratch
  auto& s_acc = *reinterpret_cast<float(*)[kWarps][kG][kMaxD]>(smem);
  auto& s_m = *reinterpret_cast<float(*)[kWarps][kG]>(smem + kAccBytes);
  auto& s_l = *reinterpret_cast<float(*)[kWarps][kG]>(smem + kAccBytes + kWarps * kG * sizeof(float));
  if (sub == 0) {
#pragma unroll
    for (int g = 0; g < kG; ++g) {
#pragma unroll
      for (int c = 0; c < kC; ++c)
#pragma unroll
        for (int e = 0; e < kE; ++e) {
          const int i = (c * lanes + li) * kE + e;
          if (i < d) s_acc[warp][g][i] = acc[g].v[c][e];
        }
      if (li == 0) {
        s_m[warp][g] = m[g];
        s_l[warp][g] = l[g];
      }
    }
  }
  __syncthreads();
  store_merged<T>(p, b, kvh, g0, split, kWarps, kG, kMaxD, &s_acc[0][0][0], &s_m[0][0], &s_l[0][0]);
}

// The query heads a block serves: 1, 4 or 8 (a group of 2 or 3 takes 4).
int group_tile(std::int64_t group) { return group == 1 ? 1 : group <= 4 ? 4 : 8; }

// Iterations in flight for kU keys a lane: as many as 48 KiB of staging holds, at most 4, and
// none where the chunks are not 16 bytes or the device has no cp.async (HIP; CUDA takes the
// direct loads below sm_80 at run time inside the kernel).
template <class T, int kE, int kC, int kU>
constexpr int stages_for() {
#if defined(TILEOPS_GPU_HIP)
  return 1;
#else
  if (kE * sizeof(T) != 16 || kC != 1) return 1;
  return std::clamp(49152 / (kU * 2 * kThreads * 16), 1, 4);
#endif
}

template <class T, int kE, int kC, int kLanes, bool kPaged>
void launch_layout(const DecodeParams& p, unsigned blocks, NativeStream stream) {
  const int kg = group_tile(p.group);
  const unsigned threads = warp_threads(kWarps, p.a.warp_size);
  if (kg == 1) {
    decode_kernel<T, kE, kC, kLanes, 1, 4, stages_for<T, kE, kC, 4>(), kPaged><<<blocks, threads, 0, stream>>>(p);
  } else if (kg == 4) {
    decode_kernel<T, kE, kC, kLanes, 4, 4, stages_for<T, kE, kC, 4>(), kPaged><<<blocks, threads, 0, stream>>>(p);
  } else {
    decode_kernel<T, kE, kC, kLanes, 8, 2, stages_for<T, kE, kC, 2>(), kPaged><<<blocks, threads, 0, stream>>>(p);
  }
}

template <class T, bool kPaged>
void launch_typed(DecodeParams p, NativeStream stream) {
  constexpr int kVec = kVec16<T>;
  const int d = static_cast<int>(p.a.head_dim);
  const bool vectors = d % kVec == 0 && aligned16(p.a.q) && aligned16(p.a.k) && aligned16(p.a.v);
  const std::int64_t blocks = static_cast<std::int64_t>(p.splits) * p.a.batch * p.a.kv_heads * p.group_chunks;
  if (blocks > 0x7fffffff) throw ValueError("gpu decode attention: " + std::to_string(blocks) + " blocks exceed the grid");
  const auto grid = static_cast<unsigned>(blocks);
  const int chunks = d / kVec;
  if (vectors && chunks <= 8) {
    launch_layout<T, kVec, 1, 8, kPaged>(p, grid, stream);
  } else if (vectors && chunks <= 16) {
    launch_layout<T, kVec, 1, 16, kPaged>(p, grid, stream);
  } else if (vectors && chunks <= 32) {
    launch_layout<T, kVec, 1, 32, kPaged>(p, grid, stream);
  } else if constexpr (kVec == 4) {  // float32 rows of up to 256: two chunks a lane
    if (vectors) launch_layout<T, kVec, 2, 32, kPaged>(p, grid, stream);
    else launch_layout<T, 1, 8, 32, kPaged>(p, grid, stream);
  } else {
    launch_layout<T, 1, 8, 32, kPaged>(p, grid, stream);  // one element a chunk: 256 = 32 lanes x 8
  }
}

}  // namespace

bool decode_uses_tensor_cores(const DecodeArgs& a, int arch) {
  return attention_tensor_cores_serve(arch, a.dtype, a.head_dim, {a.q, a.k, a.v});
}

namespace {

// The query heads a block of the kernel that serves `a` takes.
int heads_per_block(const DecodeArgs& a, int arch) {
#if !defined(TILEOPS_GPU_HIP)
  if (decode_uses_tensor_cores(a, arch)) return decode_mma_heads();
#endif
  return group_tile(a.heads / a.kv_heads);
}

#if !defined(TILEOPS_GPU_HIP)
// Whether the current device runs the merge as a programmatic dependent: its loaded image built
// from compute_90 code or later, which waits for the decode grid (an image JIT-compiled from the
// compute_75 PTX does not, and must follow it in stream order). Read once per device (the
// first 64 remembered).
bool merge_waits_for_grid() {
  constexpr int kDevices = 64;
  static std::once_flag read[kDevices];
  static bool waits[kDevices];
  const auto read_device = [] {
    cudaFuncAttributes attributes{};
    check(cudaFuncGetAttributes(&attributes, merge_splits_kernel<float>), "reading a kernel's attributes");
    return attributes.ptxVersion >= 90;
  };
  int device = 0;
  check(cudaGetDevice(&device), "reading the current device");
  if (device < 0 || device >= kDevices) return read_device();
  std::call_once(read[device], [&] { waits[device] = read_device(); });
  return waits[device];
}
#endif

// The merge of the parts: where it can, as the decode kernel's programmatic dependent (see
// let_dependent_grid_launch), else a launch that follows it.
template <class T>
void launch_merge(const DecodeParams& p, NativeStream stream) {
  const auto blocks = static_cast<unsigned>(p.a.batch * p.a.heads);
#if !defined(TILEOPS_GPU_HIP)
  if (merge_waits_for_grid()) {
    cudaLaunchAttribute dependent{};
    dependent.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    dependent.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(blocks);
    config.blockDim = dim3(kMergeThreads);
    config.stream = stream;
    config.attrs = &dependent;
    config.numAttrs = 1;
    check(cudaLaunchKernelEx(&config, merge_splits_kernel<T>, p), "launching the decode merge");
    return;
  }
#endif
  merge_splits_kernel<T><<<blocks, kMergeThreads, 0, stream>>>(p);
}

}  // namespace

int decode_splits(const DecodeArgs& a, int sm_count, int arch) {
  const std::int64_t group = a.heads / a.kv_heads;
  const std::int64_t blocks = a.batch * a.kv_heads * ceil_div(group, heads_per_block(a, arch));
  // At most one wave, several blocks a multiprocessor of the CUDA-core kernel: a second, partial
  // wave costs more than the merge of more parts saves, and a wave at least half full already
  // draws the memory's bandwidth. Of the tensor-core kernel, whose stages keep two tiles of keys
  // and values in flight, one block a multiprocessor over a contiguous cache and two over a paged
  // one. On an H100 (bfloat16, 32/8 heads of 128) one block was faster than two for one sequence
  // at 4k and 32k (7%, 2%) and for 16 at 4k (8%), and two faster over pages (one sequence at 32k:
  // 11%), whose rows are looked up a tile ahead.
  int per_sm = 4;
#if !defined(TILEOPS_GPU_HIP)
  if (decode_uses_tensor_cores(a, arch)) per_sm = a.block_table != nullptr ? decode_mma_blocks_per_sm() : 1;
#endif
  const std::int64_t wanted = per_sm * static_cast<std::int64_t>(std::max(sm_count, 1));
  // A part of fewer than 128 keys costs more to merge than it saves.
  const std::int64_t most = std::clamp<std::int64_t>(a.capacity / 128, 1, kMaxSplits);
  return static_cast<int>(std::clamp<std::int64_t>(wanted / std::max<std::int64_t>(blocks, 1), 1, most));
}

std::size_t decode_workspace_bytes(const DecodeArgs& a, int splits) {
  if (splits <= 1) return 0;
  const auto rows = static_cast<std::size_t>(splits) * static_cast<std::size_t>(a.batch * a.heads);
  return rows * static_cast<std::size_t>(a.head_dim + 1) * sizeof(float);
}

void launch_decode(const DecodeArgs& a, int splits, void* workspace, int arch, void* stream) {
  if (a.batch == 0 || a.heads == 0) return;
  if (a.head_dim < 1 || a.head_dim > kMergeThreads) {
    throw ValueError("gpu decode attention: head_dim " + std::to_string(a.head_dim) + "; from 1 to " +
                     std::to_string(kMergeThreads) + " are served");
  }
  if (a.capacity > 0x7fffffff) {
    throw ValueError("gpu decode attention: a cache of " + std::to_string(a.capacity) +
                     " positions per sequence; at most 2^31 - 1 are served");
  }
  DecodeParams p{};
  p.a = a;
  p.group = static_cast<int>(a.heads / a.kv_heads);
  p.group_chunks = static_cast<int>(ceil_div(p.group, heads_per_block(a, arch)));
  p.splits = std::clamp(splits, 1, kMaxSplits);
  // Within the capacity checked above, so in [1, 2^31) where it divides anything.
  if (a.block_table != nullptr && a.block_size > 0 && a.block_size <= a.capacity) {
    p.block_size = FastDivisor(static_cast<std::uint32_t>(a.block_size));
  }
  if (p.splits > 1) {
    p.part_o = static_cast<float*>(workspace);
    p.part_lse = p.part_o + static_cast<std::int64_t>(p.splits) * a.batch * a.heads * a.head_dim;
  }
  const NativeStream s = native_stream(stream);
  with_float_type(a.dtype, "gqa_decode", [&](auto tag) {
    using T = decltype(tag);
#if !defined(TILEOPS_GPU_HIP)
    if (decode_uses_tensor_cores(a, arch)) launch_decode_mma(p, s);
    else
#endif
    if (a.block_table != nullptr) launch_typed<T, true>(p, s);
    else launch_typed<T, false>(p, s);
    if (p.splits > 1) launch_merge<T>(p, s);
  });
  check_launch(a.block_table != nullptr ? "gqa_paged_decode" : "gqa_decode");
}

}  // namespace tileops::gpu

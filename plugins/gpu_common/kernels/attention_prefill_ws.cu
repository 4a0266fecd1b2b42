// Dense prefill attention on Hopper, warp-specialised (sm_90a machine code only; other passes
// compile a body that traps, which the launcher never reaches), float16 and bfloat16, head dim
// 64 or 128. Persistent blocks of three warpgroups serve work tiles of 128 query rows of one
// (sequence, head): warpgroup 0 is the producer, one of its threads loading each tile's Q and
// its key tiles' K and V by TMA into a ring of two stages, running ahead into the block's next
// work tile, so that a tile's first loads hide under the previous tile's last products and
// store; warpgroups 1 and 2 are the consumers, 64 query rows each.
// A stage's K and V are released apart, K once the scores that read it are done and V once P V
// is: the next-but-one K tile then loads under the softmax instead of after the product.
// A consumer issues the scores of tile j + 1 and the product P_j V_j together and runs the
// softmax of tile j + 1 while P_j V_j is in flight; the two consumers take turns to issue their
// products (named barriers 1 and 2), so one's softmax overlaps the other's tensor-core work.
//
// TMA with 128-byte swizzling writes a box of 64 columns (128 bytes) by 128 rows as rows of
// 128 bytes whose 16-byte chunk c lands at chunk c ^ (row % 8) within each 1024-byte group of
// 8 rows (the swizzle XORs address bits 4-6 with bits 7-9, so panels start 1024-byte aligned):
// the panel layout of wgmma_sm90.cuh, so the wgmma descriptors of the cp.async kernel
// (attention_prefill_wgmma.cu) read these tiles unchanged.
#include "attention_prefill_ws.cuh"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <algorithm>
#include <string>

#include "attention_tile.cuh"
#include "launch.cuh"
#include "mma_sm80.cuh"
#include "wgmma_sm90.cuh"

namespace tileops::gpu {

namespace {

constexpr int kBr = 128;  // query rows per block
constexpr int kBc = 128;  // keys per tile
constexpr int kStages = 2;
constexpr int kThreads = 384;
constexpr int kPanelColumns = 64;  // a TMA box's columns: one 128-byte swizzle span

// The block's barriers in shared memory, after the tiles.
struct Barriers {
  std::uint64_t q_full;
  std::uint64_t q_empty;  // each consumer warp arrives once its last scores of a work tile are done
  std::uint64_t k_full[kStages];
  std::uint64_t v_full[kStages];
  // Each consumer warp arrives once it is done with the stage's K (its scores), or its V (P V).
  std::uint64_t k_empty[kStages];
  std::uint64_t v_empty[kStages];
};

#if defined(TILEOPS_HAS_WGMMA)
using namespace attention_tile;

constexpr int kConsumerWarps = 8;  // each arrives on a stage's empty barriers

// About 9 s at the H200's clock: a wait this long is a pipeline bug, which traps (the launch
// then fails) rather than hanging the device.
constexpr unsigned long long kWaitLimitCycles = 1ull << 34;

__device__ __forceinline__ void mbarrier_init(std::uint64_t* bar, unsigned arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(shared_address(bar)), "r"(arrivals) : "memory");
}

// The producer's arrival on a full barrier, announcing the bytes its TMA loads will complete.
__device__ __forceinline__ void mbarrier_expect_bytes(std::uint64_t* bar, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(shared_address(bar)), "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void mbarrier_arrive(std::uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(shared_address(bar)) : "memory");
}

// Waits until the barrier's phase of parity `parity` has completed. One asm block with its own
// trap: a trap the compiler sees in C++ costs the consumers their raised register budget
// (ptxas then spills), one inside the block does not.
__device__ __forceinline__ void mbarrier_wait(std::uint64_t* bar, std::uint32_t parity) {
  asm volatile(
      "{\n.reg .pred done;\n.reg .u64 start, waited;\nmov.u64 start, %%clock64;\n"
      "WAIT:\nmbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n@done bra READY;\n"
      "mov.u64 waited, %%clock64;\nsub.u64 waited, waited, start;\nsetp.gt.u64 done, waited, %2;\n@done trap;\n"
      "bra WAIT;\nREADY:\n}\n" ::"r"(shared_address(bar)),
      "r"(parity), "n"(kWaitLimitCycles)
      : "memory");
}

// Loads the box at coordinates (c0, c1, c2, c3) of `map` into shared memory at dst; the bytes
// count towards `bar`'s transaction.
__device__ __forceinline__ void tma_load(void* dst, const CUtensorMap& map, std::uint64_t* bar, int c0, int c1, int c2,
                                         int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], "
      "[%6];\n" ::"r"(shared_address(dst)),
      "l"(reinterpret_cast<std::uint64_t>(&map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(shared_address(bar))
      : "memory");
}

// Fetches a tensor map into the descriptor cache ahead of its first load.
__device__ __forceinline__ void prefetch_map(const CUtensorMap& map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(&map)) : "memory");
}

// Loads rows [row, row + 128) of head `head` of sequence `b` into a tile of kD / 64 panels.
template <class T, int kD>
__device__ __forceinline__ void tma_load_tile(T* tile, const CUtensorMap& map, std::uint64_t* bar, int head, int row,
                                              int b) {
#pragma unroll
  for (int panel = 0; panel < kD / kPanelColumns; ++panel) {
    tma_load(tile + panel * 128 * kPanelColumns, map, bar, panel * kPanelColumns, head, row, b);
  }
}

// Barriers 1 and 2 (0 is __syncthreads): consumer warpgroup g waits on 1 + g for its turn to
// issue, and the other consumer's arrival grants it.
__device__ __forceinline__ void wait_turn(int barrier) {
  asm volatile("bar.sync %0, 256;\n" ::"r"(barrier) : "memory");
}
__device__ __forceinline__ void grant_turn(int barrier) {
  asm volatile("bar.arrive %0, 256;\n" ::"r"(barrier) : "memory");
}

// The block's work: query tiles of kBr rows of a (sequence, head) pair, the heaviest (under a
// causal mask, the last) of every pair first, neighbouring pairs together (they share their
// keys under grouped queries). Persistent blocks deal them out in rounds of gridDim.x, every
// other round in reverse, so that a block given a heavy tile early gets a light one next.
struct WorkTiles {
  std::int64_t pairs, total;
  int q_tiles;

  __device__ std::int64_t at(int round) const {
    const std::int64_t in_round = round % 2 == 0 ? blockIdx.x : gridDim.x - 1 - blockIdx.x;
    return static_cast<std::int64_t>(round) * gridDim.x + in_round;
  }
  __device__ int rounds() const { return static_cast<int>((total + gridDim.x - 1) / gridDim.x); }
};

template <class T, int kD>
__device__ PrefillBlock<T, kD, kBr, kBc> work_block(const AttentionArgs& a, const WorkTiles& work, std::int64_t w) {
  return PrefillBlock<T, kD, kBr, kBc>(a, work.q_tiles - 1 - static_cast<int>(w / work.pairs), w % work.pairs);
}

__device__ __forceinline__ int key_tiles(int tile_begin, int tile_end) {
  return tile_end > tile_begin ? tile_end - tile_begin : 0;
}

// The producer thread: for each of the block's work tiles with keys, Q once the consumers have
// finished the previous tile's scores, then its key tiles through the ring, the block's key
// tile g into stage g % kStages, its K and its V each once the consumers have released that
// stage's previous K or V.
template <class T, int kD>
__device__ void produce(const AttentionArgs& a, const WorkTiles& work, const CUtensorMap& map_q,
                        const CUtensorMap& map_k, const CUtensorMap& map_v, Barriers& bars, T* s_q, T* s_k, T* s_v) {
  constexpr std::uint32_t kTileBytes = 128 * kD * sizeof(T);
  prefetch_map(map_q);
  prefetch_map(map_k);
  prefetch_map(map_v);
  int g = 0, q_loads = 0;
  for (int round = 0, rounds = work.rounds(); round < rounds; ++round) {
    const std::int64_t w = work.at(round);
    if (w >= work.total) continue;
    const auto block = work_block<T, kD>(a, work, w);
    const int tiles = key_tiles(block.tile_begin, block.tile_end);
    if (tiles == 0) continue;
    const int head = static_cast<int>(block.h), b = static_cast<int>(block.b);
    const int kv_head = static_cast<int>(block.h / (a.heads / a.kv_heads));
    if (q_loads > 0) mbarrier_wait(&bars.q_empty, (q_loads - 1) & 1);
    mbarrier_expect_bytes(&bars.q_full, kTileBytes);
    tma_load_tile<T, kD>(s_q, map_q, &bars.q_full, head, static_cast<int>(block.m0), b);
    ++q_loads;
    for (int i = 0; i < tiles; ++i, ++g) {
      const int stage = g % kStages;
      const std::uint32_t released = (g / kStages - 1) & 1;
      const int n0 = (block.tile_begin + i) * kBc;
      if (g >= kStages) mbarrier_wait(&bars.k_empty[stage], released);
      mbarrier_expect_bytes(&bars.k_full[stage], kTileBytes);
      tma_load_tile<T, kD>(s_k + stage * kBc * kD, map_k, &bars.k_full[stage], kv_head, n0, b);
      if (g >= kStages) mbarrier_wait(&bars.v_empty[stage], released);
      mbarrier_expect_bytes(&bars.v_full[stage], kTileBytes);
      tma_load_tile<T, kD>(s_v + stage * kBc * kD, map_v, &bars.v_full[stage], kv_head, n0, b);
    }
  }
}

// The descriptor `base` moved on by `elements` 16-bit elements (the start address sits in the
// low bits, counted in 16 bytes; shared memory is below 256 KiB, so the field cannot carry).
// Offsetting one descriptor keeps a single base live instead of one descriptor per step.
__device__ __forceinline__ std::uint64_t descriptor_at(std::uint64_t base, int elements) {
  return base + static_cast<std::uint64_t>(elements * 2 / 16);
}

// S = Q K^T for this warpgroup's 64 rows (descriptor q_rows) against the 128 keys of the key
// tile (descriptor k_tile), both K-major.
template <class T, int kD>
__device__ __forceinline__ void issue_scores(float (&s)[kBc / 8][4], std::uint64_t q_rows, std::uint64_t k_tile) {
#pragma unroll
  for (int ks = 0; ks < kD / 16; ++ks) {
    const int panel = ks / 4, column = (ks % 4) * 16;
    wgmma_m64n128k16_ss<T>(s, descriptor_at(q_rows, panel * kBr * 64 + column),
                           descriptor_at(k_tile, panel * kBc * 64 + column), ks > 0);
  }
  wgmma_commit();
}

// O += P V for the key tile whose probabilities p holds (descriptor v_tile, MN-major).
template <class T, int kD>
__device__ __forceinline__ void issue_values(float (&o)[kD / 8][4], const std::uint32_t (&p)[kBc / 16][4],
                                             std::uint64_t v_tile) {
#pragma unroll
  for (int kk = 0; kk < kBc / 16; ++kk) wgmma_m64k16_rs<T, kD>(o, p[kk], descriptor_at(v_tile, kk * 16 * 64), true);
  wgmma_commit();
}

// P's fragments: the score accumulator's layout, packed in pairs.
template <class T>
__device__ __forceinline__ void pack_probabilities(std::uint32_t (&p)[kBc / 16][4], const float (&s)[kBc / 8][4]) {
#pragma unroll
  for (int kk = 0; kk < kBc / 16; ++kk) {
    p[kk][0] = pack2<T>(s[2 * kk][0], s[2 * kk][1]);
    p[kk][1] = pack2<T>(s[2 * kk][2], s[2 * kk][3]);
    p[kk][2] = pack2<T>(s[2 * kk + 1][0], s[2 * kk + 1][1]);
    p[kk][3] = pack2<T>(s[2 * kk + 1][2], s[2 * kk + 1][3]);
  }
}

// One warp's release of a stage's K or V tile (`empty`), after its last wgmma reading the
// tile has completed.
__device__ __forceinline__ void release(std::uint64_t* empty) {
  if (threadIdx.x % 32 == 0) mbarrier_arrive(empty);
}
#endif

template <class T, int kD, bool kSoftcap>
__global__ void __launch_bounds__(kThreads, 1)
    prefill_ws_kernel(const __grid_constant__ CUtensorMap map_q, const __grid_constant__ CUtensorMap map_k,
                      const __grid_constant__ CUtensorMap map_v, AttentionArgs a) {
#if defined(TILEOPS_HAS_WGMMA)
  extern __shared__ unsigned char smem_raw[];
  // Swizzled tiles repeat every 1024 bytes and must start on such a boundary.
  T* s_q = reinterpret_cast<T*>((reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) & ~std::uintptr_t{1023});
  T* s_k = s_q + kBr * kD;            // kStages tiles of kBc x kD
  T* s_v = s_k + kStages * kBc * kD;  // kStages tiles of kBc x kD
  Barriers& bars = *reinterpret_cast<Barriers*>(s_v + kStages * kBc * kD);

  WorkTiles work;
  work.pairs = a.batch * a.heads;
  work.q_tiles = PrefillBlock<T, kD, kBr, kBc>::q_tiles(a);
  work.total = work.pairs * work.q_tiles;

  if (threadIdx.x == 0) {
    mbarrier_init(&bars.q_full, 1);
    mbarrier_init(&bars.q_empty, kConsumerWarps);
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(&bars.k_full[s], 1);
      mbarrier_init(&bars.v_full[s], 1);
      mbarrier_init(&bars.k_empty[s], kConsumerWarps);
      mbarrier_init(&bars.v_empty[s], kConsumerWarps);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  if (threadIdx.x < 128) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 24;\n" ::: "memory");
    if (threadIdx.x == 0) produce<T, kD>(a, work, map_q, map_k, map_v, bars, s_q, s_k, s_v);
    return;
  }
  asm volatile("setmaxnreg.inc.sync.aligned.u32 240;\n" ::: "memory");

  const int thread = threadIdx.x - 128;  // among the consumers
  const int group = thread / 128;        // the consumer warpgroup: rows 64 * group on
  const float scale = fold_scale<kSoftcap>(a);
  const int window = window_of(a);
  constexpr std::uint32_t kRowGroupBytes = 8 * 128, kPanelBytes = kBc * 128;
  const std::uint64_t q_rows = swizzled_descriptor(s_q + group * 64 * 64, 16, kRowGroupBytes);
  const std::uint64_t k_tiles = swizzled_descriptor(s_k, 16, kRowGroupBytes);
  const std::uint64_t v_tiles = swizzled_descriptor(s_v, kPanelBytes, kRowGroupBytes);
  // Turns: the consumers take turns to issue, warpgroup 0 first: each waits for its turn and
  // grants the other the next once it has issued. Warpgroup 1's grant before the block's first
  // turn opens it and warpgroup 0's wait after the last takes its last grant, so that every
  // bar.sync has exactly one matching bar.arrive.
  const int own_turn = 1 + group, other_turn = 2 - group;

  int g = 0, q_loads = 0;  // the block's key tiles and Q tiles consumed so far
  for (int round = 0, rounds = work.rounds(); round < rounds; ++round) {
    const std::int64_t w = work.at(round);
    if (w >= work.total) continue;
    const auto block = work_block<T, kD>(a, work, w);
    const int tiles = key_tiles(block.tile_begin, block.tile_end);
    // This thread's rows: row0 and row0 + 8 (the accumulator layout).
    const std::int64_t row0 = block.m0 + (thread / 32) * 16 + (thread % 32) / 4;
    float o[kD / 8][4];
    float m_run[2] = {kNegInf, kNegInf}, l_run[2] = {0.f, 0.f};
#pragma unroll
    for (int i = 0; i < kD / 8; ++i) o[i][0] = o[i][1] = o[i][2] = o[i][3] = 0.f;

    // Without key tiles nothing is loaded: the rows are written empty without waiting.
    if (tiles > 0) {
      // Scores capped (with a soft cap) and masked where the tile crosses a mask's edge (32-bit
      // offsets from the tile's first key: the launcher bounds the lengths).
      const auto mask = [&](float (&s)[kBc / 8][4], int tile) {
        const std::int64_t n0 = static_cast<std::int64_t>(tile) * kBc;
        const int keys_left = static_cast<int>(min_index(a.seq_kv - n0, kBc));
        const int diag0 = static_cast<int>(row0 + block.offset - n0);
        cap_and_mask<kSoftcap>(s, a, block.crosses_mask_edge(a, tile), keys_left, diag0, window);
      };
      float s[kBc / 8][4];
      std::uint32_t p[kBc / 16][4];
      // The block's first turn opened here rather than before the loop: a divergent branch
      // ahead of the accumulators' initialisation makes ptxas serialise every wgmma.
      if (group == 1 && q_loads == 0) grant_turn(other_turn);
      // Each consumer issues tiles + 1 times: scores alone, then scores with the previous
      // tile's values, then the last values alone.
      mbarrier_wait(&bars.q_full, q_loads & 1);
      mbarrier_wait(&bars.k_full[g % kStages], (g / kStages) & 1);
      wait_turn(own_turn);
      wgmma_fence();
      issue_scores<T, kD>(s, q_rows, descriptor_at(k_tiles, (g % kStages) * kBc * kD));
      grant_turn(other_turn);
      wgmma_wait<0>();
      fence_registers(s);
      release(&bars.k_empty[g % kStages]);
      if (tiles == 1) release(&bars.q_empty);
      mask(s, block.tile_begin);
      fold_into_softmax(s, scale, o, m_run, l_run);
      pack_probabilities<T>(p, s);

      for (int i = 1; i < tiles; ++i) {
        const int stage = (g + i) % kStages, prev = (g + i - 1) % kStages;
        mbarrier_wait(&bars.k_full[stage], ((g + i) / kStages) & 1);
        wait_turn(own_turn);
        fence_registers(o);
        wgmma_fence();
        issue_scores<T, kD>(s, q_rows, descriptor_at(k_tiles, stage * kBc * kD));
        mbarrier_wait(&bars.v_full[prev], ((g + i - 1) / kStages) & 1);
        issue_values<T, kD>(o, p, descriptor_at(v_tiles, prev * kBc * kD));
        grant_turn(other_turn);
        wgmma_wait<1>();  // the scores; P V may still run
        fence_registers(s);
        release(&bars.k_empty[stage]);
        if (i == tiles - 1) release(&bars.q_empty);
        mask(s, block.tile_begin + i);
        float factors[2];
        fold_scores(s, scale, m_run, l_run, factors);
        wgmma_wait<0>();
        fence_registers(o);
        release(&bars.v_empty[prev]);
        rescale_rows(o, factors);
        pack_probabilities<T>(p, s);
      }

      const int last = (g + tiles - 1) % kStages;
      mbarrier_wait(&bars.v_full[last], ((g + tiles - 1) / kStages) & 1);
      wait_turn(own_turn);
      fence_registers(o);
      wgmma_fence();
      issue_values<T, kD>(o, p, descriptor_at(v_tiles, last * kBc * kD));
      grant_turn(other_turn);
      wgmma_wait<0>();
      fence_registers(o);
      release(&bars.v_empty[last]);
      g += tiles;
      ++q_loads;
    }
    store_rows<T, kD>(a, block, row0, o, m_run, l_run);
  }
  if (group == 0 && q_loads > 0) wait_turn(own_turn);
#elif defined(__CUDA_ARCH__)
  __trap();  // the launcher runs this kernel on sm_90a machine code only
#endif
}

using EncodeTiled = PFN_cuTensorMapEncodeTiled_v12000;

// The driver's cuTensorMapEncodeTiled, resolved once through the runtime (the plugin does not
// link libcuda).
EncodeTiled encode_tiled() {
  static const EncodeTiled encode = [] {
    void* entry = nullptr;
    cudaDriverEntryPointQueryResult found{};
    check(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &entry, 12000, cudaEnableDefault, &found),
          "resolving the driver's cuTensorMapEncodeTiled");
    if (found != cudaDriverEntryPointSuccess || entry == nullptr) {
      throw RuntimeError("cuda: the driver has no cuTensorMapEncodeTiled (status " +
                         std::to_string(static_cast<int>(found)) + ")");
    }
    return reinterpret_cast<EncodeTiled>(entry);
  }();
  return encode;
}

// Byte strides of a contiguous [batch, seq, heads, head_dim] tensor of 16-bit elements, for
// its head, row and sequence dimensions.
struct Strides {
  std::uint64_t head, row, sequence;
};
Strides strides_of(std::int64_t seq, std::int64_t heads, std::int64_t head_dim) {
  const auto head = static_cast<std::uint64_t>(head_dim) * 2;
  return {head, head * heads, head * heads * seq};
}

// A map of `base` ([batch, seq, heads, head_dim] contiguous) whose box is one 64-column panel
// of 128 rows of one head, 128-byte swizzled; rows past the sequence read as zeros.
CUtensorMap tensor_map(const char* name, const void* base, DType dtype, std::int64_t batch, std::int64_t seq,
                       std::int64_t heads, std::int64_t head_dim) {
  const Strides st = strides_of(seq, heads, head_dim);
  const cuuint64_t dims[4] = {static_cast<cuuint64_t>(head_dim), static_cast<cuuint64_t>(heads),
                              static_cast<cuuint64_t>(seq), static_cast<cuuint64_t>(batch)};
  const cuuint64_t strides[3] = {st.head, st.row, st.sequence};
  const cuuint32_t box[4] = {kPanelColumns, 1, 128, 1};
  const cuuint32_t element_strides[4] = {1, 1, 1, 1};
  CUtensorMap map;
  const CUresult status =
      encode_tiled()(&map, dtype == DType::bfloat16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                     4, const_cast<void*>(base), dims, strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                     CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (status != CUDA_SUCCESS) {
    throw RuntimeError(std::string("cuda: encoding the TMA tensor map of ") + name +
                       " failed: CUresult " + std::to_string(static_cast<int>(status)));
  }
  return map;
}

// TMA takes a global address 16-byte aligned, strides that are multiples of 16 bytes below 2^40.
bool tma_strides_serve(std::int64_t seq, std::int64_t heads, std::int64_t head_dim) {
  const Strides st = strides_of(seq, heads, head_dim);
  constexpr std::uint64_t kLimit = std::uint64_t{1} << 40;
  return st.head % 16 == 0 && st.row % 16 == 0 && st.sequence % 16 == 0 && st.sequence < kLimit;
}

}  // namespace

bool attention_ws_built() {
#if defined(TILEOPS_CUDA_SM90A)
  return true;
#else
  return false;
#endif
}

bool attention_ws_serves(const AttentionArgs& a) {
  return attention_tensor_cores_serve(90, a.dtype, a.head_dim, {a.q, a.k, a.v, a.o}) && a.seq_kv > 0 &&
         tma_strides_serve(a.seq_q, a.heads, a.head_dim) && tma_strides_serve(a.seq_kv, a.kv_heads, a.head_dim);
}

void launch_attention_ws(const AttentionArgs& a, int sm_count, void* stream) {
  if (a.batch == 0 || a.seq_q == 0 || a.heads == 0) return;
  const CUtensorMap map_q = tensor_map("q", a.q, a.dtype, a.batch, a.seq_q, a.heads, a.head_dim);
  const CUtensorMap map_k = tensor_map("k", a.k, a.dtype, a.batch, a.seq_kv, a.kv_heads, a.head_dim);
  const CUtensorMap map_v = tensor_map("v", a.v, a.dtype, a.batch, a.seq_kv, a.kv_heads, a.head_dim);
  const auto launch = [&](auto type, auto d, auto softcap, unsigned grid, NativeStream s) {
    using T = decltype(type);
    constexpr int kD = decltype(d)::value;
    constexpr auto kernel = prefill_ws_kernel<T, kD, decltype(softcap)::value>;
    // The tiles, the barriers, and room to round the tiles' start up to 1024 bytes.
    constexpr int kSmem =
        (kBr + 2 * kStages * kBc) * kD * static_cast<int>(sizeof(T)) + static_cast<int>(sizeof(Barriers)) + 1024;
    allow_shared_memory<kernel, kSmem>();
    // One persistent block per multiprocessor (the shared memory admits one), or one per work
    // tile where there are fewer.
    const unsigned blocks = std::min(grid, static_cast<unsigned>(std::max(sm_count, 1)));
    kernel<<<blocks, kThreads, kSmem, s>>>(map_q, map_k, map_v, a);
  };
  attention_tile::launch_prefill<kBr>(a, stream, "gqa_attention_ws", launch);
}

}  // namespace tileops::gpu

// Mixture of experts: the router (one warp per token row) and the routed experts. The experts
// run in five steps over a workspace: count the routes per expert, scan the counts into
// offsets (and the groups' row tiles into tile starts), place each route in its expert's
// group, the two products, then each token's weighted sum. The products are either GEMVs
// (gate/up with the activation: one warp per intermediate column and expert, eight routes of
// the group at a time, so a weight row is read once per eight routes; down likewise) or, for
// float16 and bfloat16 batches of at least four routes per expert on CUDA sm_80 and later,
// grouped GEMMs on tensor cores over the same groups. Both keep act(gate) * up in float32.
#include "../host/moe_launchers.hpp"
#include "launch.cuh"
#include "report_fault.cuh"

#if !defined(TILEOPS_GPU_HIP)
#include <mutex>
#include <type_traits>

#include "mma_sm80.cuh"
#endif

namespace tileops::gpu {
namespace {

constexpr int kRouteMaxExperts = 4096;
constexpr int kRoutesPerPass = 8;    // routes one warp carries through a weight row
constexpr int kColumnsPerBlock = 4;  // warps of a GEMV block, one column each
constexpr int kThreads = 256;
constexpr int kTileRows = 128;       // routes of a tensor-core row tile

// --- the router ---

struct Pick {
  float value;
  int id;  // -1: nothing yet
};

// The better of two candidates: any over none, the larger value, the lower id among equals.
__device__ __forceinline__ Pick better(Pick a, Pick b) {
  if (a.id < 0) return b;
  if (b.id < 0) return a;
  if (b.value > a.value || (b.value == a.value && b.id < a.id)) return b;
  return a;
}

template <class T>
__global__ void moe_route_kernel(MoeRouteArgs a) {
  extern __shared__ float route_shared[];
  float* scores = route_shared;
  float* choice = route_shared + a.experts;
  const int lane = threadIdx.x;
  const T* row = static_cast<const T*>(a.logits) + blockIdx.x * a.experts;
  float top = -INFINITY;
  for (int e = lane; e < a.experts; e += kWarpSize) top = fmaxf(top, to_float(row[e]));
  top = warp_reduce(top, Max{});
  float sum = 0;
  for (int e = lane; e < a.experts; e += kWarpSize) {
    const float v = to_float(row[e]);
    const float s = a.sigmoid ? 1.0f / (1.0f + expf(-v)) : expf(v - top);
    scores[e] = s;
    sum += s;
  }
  sum = warp_reduce(sum, Add{});
  for (int e = lane; e < a.experts; e += kWarpSize) {
    if (!a.sigmoid) scores[e] /= sum;
    choice[e] = scores[e] + (a.bias ? a.bias[e] : 0.0f);
  }
  __syncthreads();  // the block is one warp
  float picked = 0;
  for (std::int64_t j = 0; j < a.top_k; ++j) {
    Pick best{0.0f, -1};
    for (int e = lane; e < a.experts; e += kWarpSize) {
      if (choice[e] != choice[e] && scores[e] < 0) continue;  // taken (marked NaN, score negated)
      best = better(best, Pick{choice[e], e});
    }
    for (int mask = kWarpSize / 2; mask > 0; mask /= 2) {
      best = better(best, Pick{shuffle_xor(best.value, mask), shuffle_xor(best.id, mask)});
    }
    const float score = scores[best.id];
    picked += score;
    __syncthreads();  // every lane has read the pick's score before it is marked taken
    if (lane == 0) {
      a.ids[blockIdx.x * a.top_k + j] = best.id;
      a.weights[blockIdx.x * a.top_k + j] = score;
      choice[best.id] = NAN;
      scores[best.id] = -1.0f - score;
    }
    __syncthreads();  // the block is one warp
  }
  const float factor = a.scale / (a.renormalize ? picked : 1.0f);
  for (std::int64_t j = lane; j < a.top_k; j += kWarpSize) a.weights[blockIdx.x * a.top_k + j] *= factor;
}

// --- the experts ---

// The workspace, carved in this order, each part 32-byte aligned so that eight floats of a
// row are one aligned pack.
struct ExpertsWorkspace {
  std::int32_t* offsets;     // [experts + 1]: group e is sorted[offsets[e], offsets[e + 1])
  std::int32_t* cursor;      // [experts]: counts, then the fill position of each group
  std::int32_t* tile_start;  // [experts + 1]: the tensor-core row tiles (kTileRows) before group e
  std::int32_t* sorted;      // [routes]: the routes (m * top_k + k) grouped by expert
  std::int32_t* slot_of;     // [routes]: a route's place in `sorted`, -1 for a refused id
  float* act;                // [routes, inter]: act(gate) * up, by place
  float* out;                // [routes, hidden]: the expert's output, by place
};

std::int64_t align_part(std::int64_t bytes) { return (bytes + 31) / 32 * 32; }

ExpertsWorkspace carve(void* base, std::int64_t routes, std::int64_t experts, std::int64_t hidden,
                       std::int64_t inter) {
  auto* p = static_cast<char*>(base);
  ExpertsWorkspace w{};
  w.offsets = reinterpret_cast<std::int32_t*>(p);
  p += align_part((experts + 1) * 4);
  w.cursor = reinterpret_cast<std::int32_t*>(p);
  p += align_part(experts * 4);
  w.tile_start = reinterpret_cast<std::int32_t*>(p);
  p += align_part((experts + 1) * 4);
  w.sorted = reinterpret_cast<std::int32_t*>(p);
  p += align_part(routes * 4);
  w.slot_of = reinterpret_cast<std::int32_t*>(p);
  p += align_part(routes * 4);
  w.act = reinterpret_cast<float*>(p);
  p += align_part(routes * inter * 4);
  w.out = reinterpret_cast<float*>(p);
  return w;
}

__global__ void zero_counts(std::int32_t* cursor, std::int64_t experts) {
  for (std::int64_t e = global_thread(); e < experts; e += grid_threads()) cursor[e] = 0;
}

__global__ void count_routes(MoeExpertsArgs a, ExpertsWorkspace w) {
  const std::int64_t routes = a.rows * a.top_k;
  for (std::int64_t r = global_thread(); r < routes; r += grid_threads()) {
    const std::int32_t e = a.ids[r];
    if (e < 0 || e >= a.experts) {
      report_fault(a.faults, FaultSource::moe_experts, FaultKind::expert_id, r / a.top_k, r % a.top_k, e, 0, a.experts - 1);
      continue;
    }
    atomicAdd(&w.cursor[e], 1);
  }
}

// The exclusive scan of `value` over the threads of the block, plus `carry`; `total` gets
// the block's sum. Every thread of the block calls it; `scratch` holds kMaxWarps values.
__device__ __forceinline__ std::int32_t block_exclusive_scan(std::int32_t value, std::int32_t carry, std::int32_t& total,
                                                             std::int32_t* scratch) {
  // Inclusive scan within the warp, then across the warps' totals.
  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  std::int32_t inclusive = value;
  for (int d = 1; d < kWarpSize; d *= 2) {
    const std::int32_t other = shuffle_from(inclusive, lane >= d ? lane - d : lane);
    if (lane >= d) inclusive += other;
  }
  if (lane == kWarpSize - 1) scratch[warp] = inclusive;
  __syncthreads();
  std::int32_t before = 0;
  for (int i = 0; i < warp; ++i) before += scratch[i];
  total = 0;
  const int warps = (blockDim.x + kWarpSize - 1) / kWarpSize;
  for (int i = 0; i < warps; ++i) total += scratch[i];
  __syncthreads();  // every warp has read the scratch before the next call writes it
  return carry + before + inclusive - value;
}

// One block: offsets = the exclusive scan of the counts, the counts becoming fill positions;
// tile_start = the exclusive scan of the row tiles of kTileRows routes each group needs.
__global__ void scan_counts(std::int64_t experts, ExpertsWorkspace w) {
  __shared__ std::int32_t scratch[kMaxWarps];
  std::int32_t carry = 0;
  std::int32_t tile_carry = 0;
  for (std::int64_t base = 0; base < experts; base += blockDim.x) {
    const std::int64_t e = base + threadIdx.x;
    const std::int32_t count = e < experts ? w.cursor[e] : 0;
    std::int32_t total = 0;
    const std::int32_t start = block_exclusive_scan(count, carry, total, scratch);
    std::int32_t tile_total = 0;
    const std::int32_t tile = block_exclusive_scan((count + kTileRows - 1) / kTileRows, tile_carry, tile_total, scratch);
    if (e < experts) {
      w.offsets[e] = start;
      w.cursor[e] = start;
      w.tile_start[e] = tile;
    }
    carry += total;
    tile_carry += tile_total;
  }
  if (threadIdx.x == 0) {
    w.offsets[experts] = carry;
    w.tile_start[experts] = tile_carry;
  }
}

__global__ void place_routes(MoeExpertsArgs a, ExpertsWorkspace w) {
  const std::int64_t routes = a.rows * a.top_k;
  for (std::int64_t r = global_thread(); r < routes; r += grid_threads()) {
    const std::int32_t e = a.ids[r];
    if (e < 0 || e >= a.experts) {
      w.slot_of[r] = -1;
      continue;
    }
    const std::int32_t slot = atomicAdd(&w.cursor[e], 1);
    w.sorted[slot] = static_cast<std::int32_t>(r);
    w.slot_of[r] = slot;
  }
}

__device__ __forceinline__ float silu(float v) { return v / (1.0f + expf(-v)); }
__device__ __forceinline__ float gelu_erf(float v) { return 0.5f * v * erfcf(-v * 0.70710678118654752f); }

// Adds the dot products of one weight row chunk (V elements at `w`) with the same chunk of
// each of `n` inputs, the q-th at in[q] (V elements each), into acc[q].
template <int V, class TW, class TI>
__device__ __forceinline__ void dot_chunk(const TW* w, const TI* const* in, int n, float (&acc)[kRoutesPerPass]) {
  const Pack<TW, V> wp = load_pack<V>(w);
  float wf[V];
#pragma unroll
  for (int i = 0; i < V; ++i) wf[i] = to_float(wp.v[i]);
#pragma unroll
  for (int q = 0; q < kRoutesPerPass; ++q) {
    if (q >= n) break;
    const Pack<TI, V> xp = load_pack<V>(in[q]);
#pragma unroll
    for (int i = 0; i < V; ++i) acc[q] += wf[i] * to_float(xp.v[i]);
  }
}

template <int V>
__device__ __forceinline__ void reduce_lanes(float (&acc)[kRoutesPerPass]) {
#pragma unroll
  for (int q = 0; q < kRoutesPerPass; ++q) acc[q] = warp_reduce(acc[q], Add{});
}

// act[slot, i] = act(gate) * up for the column i = blockIdx.x * kColumnsPerBlock + warp of
// expert blockIdx.y, over the expert's group.
template <class T, int V>
__global__ void gate_up_kernel(MoeExpertsArgs a, ExpertsWorkspace w) {
  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kColumnsPerBlock + warp;
  const std::int64_t e = blockIdx.y;
  const std::int32_t begin = w.offsets[e];
  const std::int32_t end = w.offsets[e + 1];
  if (warp >= kColumnsPerBlock || i >= a.inter || begin == end) return;
  const T* gate_row = static_cast<const T*>(a.w_gate_up) + (e * 2 * a.inter + i) * a.hidden;
  const T* up_row = gate_row + a.inter * a.hidden;
  const T* x = static_cast<const T*>(a.x);
  for (std::int32_t first = begin; first < end; first += kRoutesPerPass) {
    const int n = static_cast<int>(min(end - first, kRoutesPerPass));
    const T* rows[kRoutesPerPass];
#pragma unroll
    for (int q = 0; q < kRoutesPerPass; ++q) {
      rows[q] = x + (q < n ? static_cast<std::int64_t>(w.sorted[first + q]) / a.top_k : 0) * a.hidden;
    }
    float gate[kRoutesPerPass] = {};
    float up[kRoutesPerPass] = {};
    for (std::int64_t h = static_cast<std::int64_t>(lane) * V; h < a.hidden; h += kWarpSize * V) {
      const T* in[kRoutesPerPass];
#pragma unroll
      for (int q = 0; q < kRoutesPerPass; ++q) in[q] = rows[q] + h;
      dot_chunk<V>(gate_row + h, in, n, gate);
      dot_chunk<V>(up_row + h, in, n, up);
    }
    reduce_lanes<V>(gate);
    reduce_lanes<V>(up);
    if (lane < n) {
      float g = 0;
      float u = 0;
#pragma unroll
      for (int q = 0; q < kRoutesPerPass; ++q) {
        if (q == lane) {
          g = gate[q];
          u = up[q];
        }
      }
      w.act[static_cast<std::int64_t>(first + lane) * a.inter + i] = (a.gelu ? gelu_erf(g) : silu(g)) * u;
    }
  }
}

// out[slot, c] = w_down[e][c] . act[slot] for the column c = blockIdx.x * kColumnsPerBlock +
// warp of expert blockIdx.y, over the expert's group.
template <class T, int V>
__global__ void down_kernel(MoeExpertsArgs a, ExpertsWorkspace w) {
  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * kColumnsPerBlock + warp;
  const std::int64_t e = blockIdx.y;
  const std::int32_t begin = w.offsets[e];
  const std::int32_t end = w.offsets[e + 1];
  if (warp >= kColumnsPerBlock || c >= a.hidden || begin == end) return;
  const T* row = static_cast<const T*>(a.w_down) + (e * a.hidden + c) * a.inter;
  for (std::int32_t first = begin; first < end; first += kRoutesPerPass) {
    const int n = static_cast<int>(min(end - first, kRoutesPerPass));
    float acc[kRoutesPerPass] = {};
    for (std::int64_t k = static_cast<std::int64_t>(lane) * V; k < a.inter; k += kWarpSize * V) {
      const float* in[kRoutesPerPass];
#pragma unroll
      for (int q = 0; q < kRoutesPerPass; ++q) in[q] = w.act + static_cast<std::int64_t>(first + (q < n ? q : 0)) * a.inter + k;
      dot_chunk<V>(row + k, in, n, acc);
    }
    reduce_lanes<V>(acc);
    if (lane < n) {
      float v = 0;
#pragma unroll
      for (int q = 0; q < kRoutesPerPass; ++q) {
        if (q == lane) v = acc[q];
      }
      w.out[static_cast<std::int64_t>(first + lane) * a.hidden + c] = v;
    }
  }
}

template <class T>
__global__ void combine_kernel(MoeExpertsArgs a, ExpertsWorkspace w) {
  const std::int64_t total = a.rows * a.hidden;
  for (std::int64_t idx = global_thread(); idx < total; idx += grid_threads()) {
    const std::int64_t m = idx / a.hidden;
    const std::int64_t c = idx - m * a.hidden;
    float sum = 0;
    for (std::int64_t k = 0; k < a.top_k; ++k) {
      const std::int32_t slot = w.slot_of[m * a.top_k + k];
      if (slot >= 0) sum += a.weights[m * a.top_k + k] * w.out[static_cast<std::int64_t>(slot) * a.hidden + c];
    }
    static_cast<T*>(a.y)[idx] = store_as<T>(sum);
  }
}

// --- the grouped GEMMs on tensor cores (CUDA sm_80 and later) ---
//
// A block computes a tile of kTileRows routes of one expert's group (the linear row tile
// blockIdx.x mapped to its expert through tile_start; surplus blocks of the grid's upper
// bound exit) by a column tile (blockIdx.y), walking K in steps of kStepK with a kStages-deep
// cp.async pipeline. 8 warps, 2 along the rows (64 each, four m16 tiles) by 4 along the
// columns. Shared tiles keep 16-byte chunks XOR-swizzled by row so that ldmatrix and the
// float32 fragment reads hit distinct banks.
#if !defined(TILEOPS_GPU_HIP)

constexpr int kStepK = 64;
constexpr int kMmaThreads = 256;
constexpr int kGateColumns = 128;  // gate/up: 128 gate columns and the matching 128 up columns
constexpr int kDownColumns = 256;

// The shared memory of each GEMM's pipeline: kStages stages of an A tile and a B tile.
template <class T>
constexpr int kGateStageBytes = (kTileRows + 2 * kGateColumns) * kStepK * static_cast<int>(sizeof(T));
template <class T>
constexpr int kDownStageBytes = kTileRows * kStepK * 4 + kDownColumns * kStepK * static_cast<int>(sizeof(T));

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800

// The block's row tile: its expert's group rows [row0, row0 + rows), or rows 0 for a
// surplus block.
struct RowTile {
  std::int64_t expert;
  std::int32_t row0, rows;
};

__device__ __forceinline__ RowTile find_row_tile(std::int64_t experts, const ExpertsWorkspace& w) {
  const std::int32_t tile = static_cast<std::int32_t>(blockIdx.x);
  if (tile >= w.tile_start[experts]) return {0, 0, 0};
  // The last expert whose first tile is at or before this one (empty groups have no tiles).
  std::int64_t lo = 0, hi = experts;
  while (lo < hi) {
    const std::int64_t mid = (lo + hi + 1) / 2;
    if (w.tile_start[mid] <= tile) lo = mid;
    else hi = mid - 1;
  }
  const std::int32_t row0 = w.offsets[lo] + (tile - w.tile_start[lo]) * kTileRows;
  return {lo, row0, min(kTileRows, w.offsets[lo + 1] - row0)};
}

// Copies rows [0, kRows) of a kStepK-wide T tile, row r from base(r) + k0 when valid(r)
// (else zeros; base(0) must be valid), into a swizzled shared tile.
template <class T, int kRows, class Base, class Valid>
__device__ __forceinline__ void load_weight_tile(T* tile, std::int64_t k0, Base base, Valid valid) {
  constexpr int kChunks = kStepK / 8;
#pragma unroll
  for (int i = 0; i < kRows * kChunks / kMmaThreads; ++i) {
    const int idx = threadIdx.x + i * kMmaThreads;
    const int r = idx / kChunks, c = idx % kChunks;
    const bool ok = valid(r);
    copy16_async(tile + swizzled<kStepK>(r, c), (ok ? base(r) : base(0)) + k0 + c * 8, ok);
  }
}

// The B fragments of kSlices 16-column slices of a swizzled B tile, from column n, at K step
// ks of the stage: slice np's columns 0-7 in b[np][0..1], 8-15 in b[np][2..3].
template <int kSlices, class T>
__device__ __forceinline__ void load_b_slices(std::uint32_t (&b)[kSlices][4], const T* tile, int n, int ks) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int np = 0; np < kSlices; ++np) {
    const int key = n + np * 16 + (lane & 7) + ((lane >> 4) << 3);
    ldmatrix_x4(b[np], tile + swizzled<kStepK>(key, ks * 2 + ((lane >> 3) & 1)));
  }
}

// c[mi][j] += a[mi] b[j] for the warp's four m16 tiles and the n8 tiles of kSlices slices.
template <class T, int kSlices>
__device__ __forceinline__ void mma_slices(float (&c)[4][2 * kSlices][4], const std::uint32_t (&a)[4][4],
                                           const std::uint32_t (&b)[kSlices][4]) {
#pragma unroll
  for (int np = 0; np < kSlices; ++np) {
#pragma unroll
    for (int mi = 0; mi < 4; ++mi) {
      mma<T>(c[mi][2 * np], a[mi], b[np][0], b[np][1]);
      mma<T>(c[mi][2 * np + 1], a[mi], b[np][2], b[np][3]);
    }
  }
}

// Stage bookkeeping of the pipeline: before step kt, at most kStages - 2 later groups pending.
template <int kStages>
__device__ __forceinline__ void wait_stage() {
  wait_copies<kStages - 2>();
  __syncthreads();
}

#endif

// act[row0 + r, n0 + j] = act(gate) * up for the block's row tile and columns n0 = blockIdx.y
// * kGateColumns onward (those below inter); x rows gathered by token.
template <class T, int kStages>
__global__ void __launch_bounds__(kMmaThreads, 1) gate_up_mma_kernel(MoeExpertsArgs a, ExpertsWorkspace w) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  extern __shared__ __align__(128) unsigned char mma_smem[];
  const RowTile rt = find_row_tile(a.experts, w);
  if (rt.rows <= 0) return;
  constexpr int kStageElems = (kTileRows + 2 * kGateColumns) * kStepK;
  T* const smem = reinterpret_cast<T*>(mma_smem);
  const std::int64_t n0 = static_cast<std::int64_t>(blockIdx.y) * kGateColumns;
  const T* const x = static_cast<const T*>(a.x);
  const T* const gate = static_cast<const T*>(a.w_gate_up) + (rt.expert * 2 * a.inter + n0) * a.hidden;
  const T* const up = gate + a.inter * a.hidden;

  // This thread's A rows (threadIdx.x / 8 + 32 i), gathered once.
  constexpr int kChunks = kStepK / 8;
  constexpr int kRowsPerThread = kTileRows * kChunks / kMmaThreads;
  const T* a_rows[kRowsPerThread];
#pragma unroll
  for (int i = 0; i < kRowsPerThread; ++i) {
    const int r = threadIdx.x / kChunks + i * (kMmaThreads / kChunks);
    a_rows[i] = r < rt.rows ? x + static_cast<std::int64_t>(w.sorted[rt.row0 + r]) / a.top_k * a.hidden : nullptr;
  }
  const std::int64_t columns_left = a.inter - n0;
  const auto load_stage = [&](int stage, std::int64_t k0) {
    T* sa = smem + stage * kStageElems;
    T* sb = sa + kTileRows * kStepK;
    const int c = threadIdx.x % kChunks;
#pragma unroll
    for (int i = 0; i < kRowsPerThread; ++i) {
      const int r = threadIdx.x / kChunks + i * (kMmaThreads / kChunks);
      const bool ok = a_rows[i] != nullptr;
      copy16_async(sa + swizzled<kStepK>(r, c), (ok ? a_rows[i] : x) + k0 + c * 8, ok);
    }
    load_weight_tile<T, 2 * kGateColumns>(
        sb, k0,
        [&](int r) { return (r < kGateColumns ? gate + r * a.hidden : up + (r - kGateColumns) * a.hidden); },
        [&](int r) { return (r < kGateColumns ? r : r - kGateColumns) < columns_left; });
  };

  const int k_steps = static_cast<int>(a.hidden / kStepK);
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < k_steps) load_stage(s, static_cast<std::int64_t>(s) * kStepK);
    commit_copies();
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = warp / 4, wn = warp % 4;
  float acc_gate[4][4][4] = {};
  float acc_up[4][4][4] = {};
  for (int kt = 0; kt < k_steps; ++kt) {
    wait_stage<kStages>();
    const int next = kt + kStages - 1;
    if (next < k_steps) load_stage(next % kStages, static_cast<std::int64_t>(next) * kStepK);
    commit_copies();
    const T* sa = smem + (kt % kStages) * kStageElems;
    const T* sb = sa + kTileRows * kStepK;
#pragma unroll
    for (int ks = 0; ks < kStepK / 16; ++ks) {
      // Every fragment of the step first, so that the loads overlap one another.
      std::uint32_t af[4][4], gate_b[2][4], up_b[2][4];
#pragma unroll
      for (int mi = 0; mi < 4; ++mi) {
        ldmatrix_x4(af[mi], sa + swizzled<kStepK>(wm * 64 + mi * 16 + (lane & 15), ks * 2 + (lane >> 4)));
      }
      load_b_slices(gate_b, sb, wn * 32, ks);
      load_b_slices(up_b, sb, kGateColumns + wn * 32, ks);
      mma_slices<T>(acc_gate, af, gate_b);
      mma_slices<T>(acc_up, af, up_b);
    }
  }
  wait_copies<0>();

  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int mi = 0; mi < 4; ++mi) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int r = wm * 64 + mi * 16 + half * 8 + g;
      if (r >= rt.rows) continue;
      float* row = w.act + static_cast<std::int64_t>(rt.row0 + r) * a.inter + n0;
#pragma unroll
      for (int nj = 0; nj < 4; ++nj) {
        const int col = wn * 32 + nj * 8 + 2 * t;
        if (col >= columns_left) continue;
        float v[2];
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const float gv = acc_gate[mi][nj][2 * half + e];
          v[e] = (a.gelu ? gelu_erf(gv) : silu(gv)) * acc_up[mi][nj][2 * half + e];
        }
        *reinterpret_cast<float2*>(row + col) = make_float2(v[0], v[1]);
      }
    }
  }
#else
  __trap();  // the launcher runs this kernel on compute capability 8.0 and later only
#endif
}

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800

// The float element offset of float (row, col) in a kStepK-wide float32 tile: 4-float chunks
// XOR-swizzled by (row & 7) * 2, so that a fragment read's eight rows fall in distinct banks.
__device__ __forceinline__ int swizzled_f32(int row, int col) {
  return row * kStepK + (((col >> 2) ^ ((row & 7) << 1)) << 2) + (col & 3);
}

// Two floats rounded to T as a pair in one conversion, the first in the low half.
template <class T>
__device__ __forceinline__ std::uint32_t round_pair(float first, float second) {
  if constexpr (std::is_same_v<T, bf16>) {
    const __nv_bfloat162 pair = __floats2bfloat162_rn(first, second);
    return *reinterpret_cast<const std::uint32_t*>(&pair);
  } else {
    const __half2 pair = __floats2half2_rn(first, second);
    return *reinterpret_cast<const std::uint32_t*>(&pair);
  }
}

// The high part of a float pair rounded to T, and in `low` the remainder rounded to T.
template <class T>
__device__ __forceinline__ std::uint32_t split2(float2 v, std::uint32_t& low) {
  const std::uint32_t high = round_pair<T>(v.x, v.y);
  const T hx{static_cast<std::uint16_t>(high)}, hy{static_cast<std::uint16_t>(high >> 16)};
  low = round_pair<T>(v.x - to_float(hx), v.y - to_float(hy));
  return high;
}

#endif

// out[row0 + r, n0 + j] = w_down[e][n0 + j] . act[row0 + r] for the block's row tile and
// columns n0 = blockIdx.y * kDownColumns onward (those below hidden). The float32 act rows
// enter the MMAs as two T operands, high and low part, so the product keeps about 16 bits.
template <class T, int kStages>
__global__ void __launch_bounds__(kMmaThreads, 1) down_mma_kernel(MoeExpertsArgs a, ExpertsWorkspace w) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  extern __shared__ __align__(128) unsigned char mma_smem[];
  const RowTile rt = find_row_tile(a.experts, w);
  if (rt.rows <= 0) return;
  constexpr int kStageBytes = kDownStageBytes<T>;
  constexpr int kSlices = kDownColumns / 4 / 16;  // 16-column slices of a warp's tile
  const std::int64_t n0 = static_cast<std::int64_t>(blockIdx.y) * kDownColumns;
  const T* const weights = static_cast<const T*>(a.w_down) + (rt.expert * a.hidden + n0) * a.inter;
  const float* const act = w.act + static_cast<std::int64_t>(rt.row0) * a.inter;
  const std::int64_t columns_left = a.hidden - n0;
  const auto load_stage = [&](int stage, std::int64_t k0) {
    float* sa = reinterpret_cast<float*>(mma_smem + stage * kStageBytes);
    T* sb = reinterpret_cast<T*>(sa + kTileRows * kStepK);
    constexpr int kChunks = kStepK / 4;
    const int c = threadIdx.x % kChunks;
#pragma unroll
    for (int i = 0; i < kTileRows * kChunks / kMmaThreads; ++i) {
      const int r = threadIdx.x / kChunks + i * (kMmaThreads / kChunks);
      const bool ok = r < rt.rows;
      copy16_async(sa + swizzled_f32(r, c * 4), act + (ok ? r * a.inter : 0) + k0 + c * 4, ok);
    }
    load_weight_tile<T, kDownColumns>(
        sb, k0, [&](int r) { return weights + r * a.inter; }, [&](int r) { return r < columns_left; });
  };

  const int k_steps = static_cast<int>(a.inter / kStepK);
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < k_steps) load_stage(s, static_cast<std::int64_t>(s) * kStepK);
    commit_copies();
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = warp / 4, wn = warp % 4;
  const int g = lane >> 2, t = lane & 3;
  float acc[4][2 * kSlices][4] = {};
  for (int kt = 0; kt < k_steps; ++kt) {
    wait_stage<kStages>();
    const int next = kt + kStages - 1;
    if (next < k_steps) load_stage(next % kStages, static_cast<std::int64_t>(next) * kStepK);
    commit_copies();
    const float* sa = reinterpret_cast<const float*>(mma_smem + (kt % kStages) * kStageBytes);
    const T* sb = reinterpret_cast<const T*>(sa + kTileRows * kStepK);
#pragma unroll
    for (int ks = 0; ks < kStepK / 16; ++ks) {
      // The m16n8k16 A fragment: rows g and g + 8, columns 2t and 2t + 8 (pairs), read whole
      // before the split; one B fragment serves the high and the low part.
      float2 av[4][4];
#pragma unroll
      for (int mi = 0; mi < 4; ++mi) {
        const int r = wm * 64 + mi * 16 + g;
        const int k = ks * 16 + 2 * t;
        av[mi][0] = *reinterpret_cast<const float2*>(sa + swizzled_f32(r, k));
        av[mi][1] = *reinterpret_cast<const float2*>(sa + swizzled_f32(r + 8, k));
        av[mi][2] = *reinterpret_cast<const float2*>(sa + swizzled_f32(r, k + 8));
        av[mi][3] = *reinterpret_cast<const float2*>(sa + swizzled_f32(r + 8, k + 8));
      }
      std::uint32_t bf[kSlices][4];
      load_b_slices(bf, sb, wn * (kDownColumns / 4), ks);
      std::uint32_t hi[4][4], lo[4][4];
#pragma unroll
      for (int mi = 0; mi < 4; ++mi) {
#pragma unroll
        for (int j = 0; j < 4; ++j) hi[mi][j] = split2<T>(av[mi][j], lo[mi][j]);
      }
      mma_slices<T>(acc, hi, bf);
      mma_slices<T>(acc, lo, bf);
    }
  }
  wait_copies<0>();

#pragma unroll
  for (int mi = 0; mi < 4; ++mi) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int r = wm * 64 + mi * 16 + half * 8 + g;
      if (r >= rt.rows) continue;
      float* row = w.out + static_cast<std::int64_t>(rt.row0 + r) * a.hidden + n0;
#pragma unroll
      for (int nj = 0; nj < 2 * kSlices; ++nj) {
        const int col = wn * (kDownColumns / 4) + nj * 8 + 2 * t;
        if (col < columns_left) {
          *reinterpret_cast<float2*>(row + col) = make_float2(acc[mi][nj][2 * half], acc[mi][nj][2 * half + 1]);
        }
      }
    }
  }
#else
  __trap();  // the launcher runs this kernel on compute capability 8.0 and later only
#endif
}

#endif  // !TILEOPS_GPU_HIP

// With inter 0 only the down GEMV runs, writing the zeros of empty dot products.
template <class T, int V>
void launch_gemvs(const MoeExpertsArgs& a, const ExpertsWorkspace& w, NativeStream s) {
  if (a.inter > 0) {
    const dim3 gate_grid(static_cast<unsigned>(ceil_div(a.inter, kColumnsPerBlock)), static_cast<unsigned>(a.experts));
    gate_up_kernel<T, V><<<gate_grid, kColumnsPerBlock * kWarpSize, 0, s>>>(a, w);
  }
  const dim3 down_grid(static_cast<unsigned>(ceil_div(a.hidden, kColumnsPerBlock)), static_cast<unsigned>(a.experts));
  down_kernel<T, V><<<down_grid, kColumnsPerBlock * kWarpSize, 0, s>>>(a, w);
}

#if !defined(TILEOPS_GPU_HIP)

// Whether the current device runs the tensor-core kernels (compute capability 8.0 or later,
// and the loaded image built from sm_80+ code, not JIT-compiled from the compute_75 PTX in
// which they trap), and the most dynamic shared memory a block may opt into: read from the
// driver once per device (the first 64 remembered).
struct MmaDevice {
  bool runs_mma;
  int shared_bytes;
};
template <auto kKernel>
MmaDevice read_mma_device(int device) {
  int major = 0;
  MmaDevice f{};
  check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), "reading the compute capability");
  check(cudaDeviceGetAttribute(&f.shared_bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
        "reading the shared memory limit");
  cudaFuncAttributes attributes{};
  check(cudaFuncGetAttributes(&attributes, kKernel), "reading a kernel's attributes");
  f.runs_mma = major >= 8 && attributes.ptxVersion >= 80;
  return f;
}
MmaDevice mma_device() {
  constexpr int kDevices = 64;
  static std::once_flag read[kDevices];
  static MmaDevice facts[kDevices];
  constexpr auto kProbe = down_mma_kernel<bf16, 2>;
  int device = 0;
  check(cudaGetDevice(&device), "reading the current device");
  if (device < 0 || device >= kDevices) return read_mma_device<kProbe>(device);
  std::call_once(read[device], [device] { facts[device] = read_mma_device<kProbe>(device); });
  return facts[device];
}

// Both grids at their upper bound of row tiles, routes / kTileRows + experts (each group
// wastes less than one); surplus blocks exit.
unsigned mma_row_tiles(const MoeExpertsArgs& a) {
  return static_cast<unsigned>(ceil_div(a.rows * a.top_k, kTileRows) + a.experts);
}

template <class T, int kStages>
void launch_gate_up_mma(const MoeExpertsArgs& a, const ExpertsWorkspace& w, NativeStream s) {
  constexpr int kBytes = kStages * kGateStageBytes<T>;
  allow_shared_memory<gate_up_mma_kernel<T, kStages>, kBytes>();
  const dim3 grid(mma_row_tiles(a), static_cast<unsigned>(ceil_div(a.inter, kGateColumns)));
  gate_up_mma_kernel<T, kStages><<<grid, kMmaThreads, kBytes, s>>>(a, w);
}

template <class T, int kStages>
void launch_down_mma(const MoeExpertsArgs& a, const ExpertsWorkspace& w, NativeStream s) {
  constexpr int kBytes = kStages * kDownStageBytes<T>;
  allow_shared_memory<down_mma_kernel<T, kStages>, kBytes>();
  const dim3 grid(mma_row_tiles(a), static_cast<unsigned>(ceil_div(a.hidden, kDownColumns)));
  down_mma_kernel<T, kStages><<<grid, kMmaThreads, kBytes, s>>>(a, w);
}

template <class T, int kGateStages, int kDownStages>
void launch_mma_gemms(const MoeExpertsArgs& a, const ExpertsWorkspace& w, NativeStream s) {
  launch_gate_up_mma<T, kGateStages>(a, w, s);
  launch_down_mma<T, kDownStages>(a, w, s);
}

// The deepest pipelines the device's shared memory holds: 4 and 3 stages (192 KiB, sm_90),
// else 3 and 2 (144 and 128 KiB, sm_80). false when not even those fit.
template <class T>
bool launch_mma_for_device(const MoeExpertsArgs& a, const ExpertsWorkspace& w, NativeStream s, const MmaDevice& device) {
  if (device.shared_bytes >= std::max(4 * kGateStageBytes<T>, 3 * kDownStageBytes<T>)) {
    launch_mma_gemms<T, 4, 3>(a, w, s);
  } else if (device.shared_bytes >= std::max(3 * kGateStageBytes<T>, 2 * kDownStageBytes<T>)) {
    launch_mma_gemms<T, 3, 2>(a, w, s);
  } else {
    return false;
  }
  return true;
}

constexpr int kMmaRoutesPerExpert = 4;  // the average group from which tensor cores serve

// Whether the grouped GEMMs on tensor cores serve a call, by its shapes alone: float16 or
// bfloat16, hidden and inter multiples of kStepK, 16-byte aligned inputs, and on average at
// least kMmaRoutesPerExpert routes per expert. On an H200 (bench/gpu/moe_experts_harness.cu)
// the tensor cores won from about four routes per expert (Mixtral-8x7B at 32 tokens: 1.46 ms
// against the GEMVs' 3.42; DeepSeek-V2-Lite at 32 tokens, three per expert, even) and were 22
// to 32 times faster at 2048 tokens; below that the GEMVs, which read each weight row about
// once, keep decode.
bool mma_shapes(const MoeExpertsArgs& a, std::int64_t routes) {
  return (a.dtype == DType::bfloat16 || a.dtype == DType::float16) && a.inter > 0 && a.hidden % kStepK == 0 &&
         a.inter % kStepK == 0 && aligned16(a.x) && aligned16(a.w_gate_up) && aligned16(a.w_down) &&
         routes >= kMmaRoutesPerExpert * a.experts && ceil_div(a.inter, kGateColumns) <= 65535 &&
         ceil_div(a.hidden, kDownColumns) <= 65535;
}

// Runs the grouped GEMMs if the device is sm_80 or later with the shared memory they need;
// false (nothing launched) otherwise.
bool launch_mma(const MoeExpertsArgs& a, const ExpertsWorkspace& w, NativeStream s) {
  const MmaDevice device = mma_device();
  if (!device.runs_mma) return false;
  if (a.dtype == DType::bfloat16) return launch_mma_for_device<bf16>(a, w, s, device);
  return launch_mma_for_device<f16>(a, w, s, device);
}

#endif

// The experts after the checks: group the routes, run the two products (on tensor cores when
// `tensor_cores` and the device and shapes allow it, else the GEMVs), then the weighted sums.
void run_experts(const MoeExpertsArgs& a, NativeStream s, [[maybe_unused]] bool tensor_cores) {
  const std::int64_t routes = a.rows * a.top_k;
  const ExpertsWorkspace w = carve(a.workspace, routes, a.experts, a.hidden, a.inter);
  zero_counts<<<blocks_for(a.experts, kThreads), kThreads, 0, s>>>(w.cursor, a.experts);
  count_routes<<<blocks_for(routes, kThreads), kThreads, 0, s>>>(a, w);
  scan_counts<<<1, 1024, 0, s>>>(a.experts, w);
  place_routes<<<blocks_for(routes, kThreads), kThreads, 0, s>>>(a, w);
  bool ran_mma = false;
#if !defined(TILEOPS_GPU_HIP)
  ran_mma = tensor_cores && launch_mma(a, w, s);
#endif
  if (a.experts > 0 && !ran_mma) {
    with_float_type(a.dtype, "moe_experts", [&](auto tag) {
      using T = decltype(tag);
      constexpr int V = kVec16<T>;
      const bool vector = a.hidden % V == 0 && a.inter % V == 0 && aligned16(a.x) && aligned16(a.w_gate_up) &&
                          aligned16(a.w_down);
      if (vector) launch_gemvs<T, V>(a, w, s);
      else launch_gemvs<T, 1>(a, w, s);
    });
  }
  with_float_type(a.dtype, "moe_experts", [&](auto tag) {
    using T = decltype(tag);
    combine_kernel<T><<<blocks_for(a.rows * a.hidden, kThreads), kThreads, 0, s>>>(a, w);
  });
}

}  // namespace

void launch_moe_route(const MoeRouteArgs& a, void* stream) {
  if (a.rows == 0) return;
  if (a.experts > kRouteMaxExperts || a.top_k > a.experts) {
    throw ValueError("gpu kernel moe_route takes 1 to " + std::to_string(kRouteMaxExperts) +
                     " experts and top_k up to their number, not " + std::to_string(a.experts) + " and " +
                     std::to_string(a.top_k));
  }
  const NativeStream s = native_stream(stream);
  const std::size_t shared = static_cast<std::size_t>(2 * a.experts) * sizeof(float);
  with_float_type(a.dtype, "moe_route", [&](auto tag) {
    using T = decltype(tag);
    moe_route_kernel<T><<<static_cast<unsigned>(a.rows), kWarpSize, shared, s>>>(a);
  });
  check_launch("moe_route");
}

std::int64_t moe_experts_workspace_bytes(std::int64_t routes, std::int64_t experts, std::int64_t hidden,
                                         std::int64_t inter) {
  return 2 * align_part((experts + 1) * 4) + align_part(experts * 4) + 2 * align_part(routes * 4) + align_part(routes * inter * 4) +
         align_part(routes * hidden * 4);
}

void launch_moe_experts(const MoeExpertsArgs& a, void* stream) {
  if (a.rows == 0 || a.hidden == 0) return;
  if (a.experts > 65535) {
    throw ValueError("gpu kernel moe_experts takes at most 65535 experts, not " + std::to_string(a.experts));
  }
  const std::int64_t routes = a.rows * a.top_k;
  if (routes >= (std::int64_t{1} << 31)) {
    throw ValueError("gpu kernel moe_experts takes fewer than 2^31 routes (rows * top_k), not " +
                     std::to_string(routes));
  }
#if !defined(TILEOPS_GPU_HIP)
  const bool tensor_cores = mma_shapes(a, routes);
#else
  const bool tensor_cores = false;
#endif
  run_experts(a, native_stream(stream), tensor_cores);
  check_launch("moe_experts");
}

}  // namespace tileops::gpu

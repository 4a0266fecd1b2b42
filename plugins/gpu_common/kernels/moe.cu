// Mixture of experts: the router (one warp per token row) and the routed experts. The experts
// run in five steps over a workspace: count the routes per expert, scan the counts into
// offsets (and the groups' row tiles into tile starts), place each route in its expert's
// group (the first three in one block for the few routes of a decode step), the two products,
// then each token's weighted sum. The products are either GEMVs
// (gate/up with the activation: one warp per intermediate column and expert, eight routes of
// the group at a time, so a weight row is read once per eight routes, or one route at a time
// with more of the row in flight for a single token; down likewise) or, for
// float16 and bfloat16 batches of at least four routes per expert on CUDA sm_80 and later,
// grouped GEMMs on tensor cores over the same groups (moe_mma.cu, or moe_wgmma.cu on sm_90a when
// the caller asks for it). Both keep act(gate) * up in float32.
#include "../host/moe_launchers.hpp"
#include "launch.cuh"
#include "report_fault.cuh"

#include "moe_experts.cuh"
#if !defined(TILEOPS_GPU_HIP)
#include "moe_mma.cuh"
#include "moe_wgmma.cuh"
#endif

namespace tileops::gpu {
namespace {

constexpr int kRouteMaxExperts = 4096;
constexpr int kColumnsPerBlock = 4;  // warps of a GEMV block, one column each
constexpr int kThreads = 256;

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
  w.active = reinterpret_cast<std::int32_t*>(p);
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

// The grouping steps over items first, first + step, ...: a grid-stride loop in the kernels
// below, a block-stride loop in group_routes_in_one_block.
__device__ __forceinline__ void zero_counts_from(std::int32_t* cursor, std::int64_t experts, std::int64_t first,
                                                 std::int64_t step) {
  for (std::int64_t e = first; e < experts; e += step) cursor[e] = 0;
}

__device__ __forceinline__ void count_routes_from(const MoeExpertsArgs& a, const ExpertsWorkspace& w,
                                                  std::int64_t first, std::int64_t step) {
  const std::int64_t routes = a.rows * a.top_k;
  for (std::int64_t r = first; r < routes; r += step) {
    const std::int32_t e = a.ids[r];
    if (e < 0 || e >= a.experts) {
      report_fault(a.faults, FaultSource::moe_experts, FaultKind::expert_id, r / a.top_k, r % a.top_k, e, 0, a.experts - 1);
      continue;
    }
    atomicAdd(&w.cursor[e], 1);
  }
}

__global__ void zero_counts(std::int32_t* cursor, std::int64_t experts) {
  zero_counts_from(cursor, experts, global_thread(), grid_threads());
}

__global__ void count_routes(MoeExpertsArgs a, ExpertsWorkspace w) { count_routes_from(a, w, global_thread(), grid_threads()); }

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
// tile_start = the exclusive scan of the row tiles of kTileRows routes each group needs;
// active = the experts whose groups are not empty, so that the GEMVs launch blocks for those
// only (a decode step picks a few of many experts).
__device__ __forceinline__ void scan_counts_in_block(std::int64_t experts, const ExpertsWorkspace& w) {
  __shared__ std::int32_t scratch[kMaxWarps];
  std::int32_t carry = 0;
  std::int32_t tile_carry = 0;
  std::int32_t active_carry = 0;
  for (std::int64_t base = 0; base < experts; base += blockDim.x) {
    const std::int64_t e = base + threadIdx.x;
    const std::int32_t count = e < experts ? w.cursor[e] : 0;
    std::int32_t total = 0;
    const std::int32_t start = block_exclusive_scan(count, carry, total, scratch);
    std::int32_t tile_total = 0;
    const std::int32_t tile = block_exclusive_scan((count + kTileRows - 1) / kTileRows, tile_carry, tile_total, scratch);
    std::int32_t active_total = 0;
    const std::int32_t place = block_exclusive_scan(count > 0 ? 1 : 0, active_carry, active_total, scratch);
    if (e < experts) {
      w.offsets[e] = start;
      w.cursor[e] = start;
      w.tile_start[e] = tile;
      if (count > 0) w.active[1 + place] = static_cast<std::int32_t>(e);
    }
    carry += total;
    tile_carry += tile_total;
    active_carry += active_total;
  }
  if (threadIdx.x == 0) {
    w.offsets[experts] = carry;
    w.tile_start[experts] = tile_carry;
    w.active[0] = active_carry;
  }
}

__global__ void scan_counts(std::int64_t experts, ExpertsWorkspace w) { scan_counts_in_block(experts, w); }

__device__ __forceinline__ void place_routes_from(const MoeExpertsArgs& a, const ExpertsWorkspace& w,
                                                  std::int64_t first, std::int64_t step) {
  const std::int64_t routes = a.rows * a.top_k;
  for (std::int64_t r = first; r < routes; r += step) {
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

__global__ void place_routes(MoeExpertsArgs a, ExpertsWorkspace w) { place_routes_from(a, w, global_thread(), grid_threads()); }

// The four grouping steps in one block, for the few routes of a decode step, where each
// launch of the four would cost more than its work. __syncthreads orders the steps: the
// block's global writes before it are visible to the whole block after it.
constexpr std::int64_t kOneBlockRoutes = 1024;
constexpr int kOneBlockThreads = 1024;
__global__ void __launch_bounds__(kOneBlockThreads) group_routes_in_one_block(MoeExpertsArgs a, ExpertsWorkspace w) {
  zero_counts_from(w.cursor, a.experts, threadIdx.x, blockDim.x);
  __syncthreads();
  count_routes_from(a, w, threadIdx.x, blockDim.x);
  __syncthreads();
  scan_counts_in_block(a.experts, w);
  __syncthreads();
  place_routes_from(a, w, threadIdx.x, blockDim.x);
}


// Routes a GEMV warp carries through a weight row per pass (a batch of kR routes reads each
// weight once), and the chunks of the row it loads at once. Eight routes suit a group of
// several; a decode step of one token leaves at most one route per group, and a warp carrying
// one route has the registers to keep four chunks of its row in flight instead of one.
constexpr int kMaxRoutesPerPass = 8;
template <int kR>
constexpr int kChunksInFlight = kR == 1 ? 4 : 1;

// Adds the dot products of the V weights in `wp` with the same V elements of each of the first
// `n` inputs, the q-th at rows[q] + at, into acc[q].
template <int kR, int V, class TW, class TI>
__device__ __forceinline__ void dot_chunk(const Pack<TW, V>& wp, const TI* const (&rows)[kR], std::int64_t at, int n,
                                          float (&acc)[kR]) {
  float wf[V];
#pragma unroll
  for (int i = 0; i < V; ++i) wf[i] = to_float(wp.v[i]);
#pragma unroll
  for (int q = 0; q < kR; ++q) {
    if (q >= n) break;
    const Pack<TI, V> xp = load_pack<V>(rows[q] + at);
#pragma unroll
    for (int i = 0; i < V; ++i) acc[q] += wf[i] * to_float(xp.v[i]);
  }
}

template <int kR>
__device__ __forceinline__ void reduce_lanes(float (&acc)[kR]) {
#pragma unroll
  for (int q = 0; q < kR; ++q) acc[q] = warp_reduce(acc[q], Add{});
}

// The dot products of `length` weights at `row` with the first `n` inputs (rows[q], as long),
// reduced over the warp into acc[q] of every lane: each lane takes chunks of V elements
// kWarpSize * V apart, kChunksInFlight<kR> of them loaded before any is used.
template <int kR, int V, class TW, class TI>
__device__ __forceinline__ void warp_dots(const TW* row, const TI* const (&rows)[kR], std::int64_t length, int n,
                                          float (&acc)[kR]) {
  constexpr int kU = kChunksInFlight<kR>;
  constexpr std::int64_t kStride = static_cast<std::int64_t>(kWarpSize) * V;
  const int lane = threadIdx.x % kWarpSize;
  for (std::int64_t h = static_cast<std::int64_t>(lane) * V; h < length; h += kStride * kU) {
    Pack<TW, V> chunk[kU];
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      if (h + u * kStride < length) chunk[u] = load_pack<V>(row + h + u * kStride);
    }
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      if (h + u * kStride < length) dot_chunk<kR, V>(chunk[u], rows, h + u * kStride, n, acc);
    }
  }
  reduce_lanes(acc);
}

// The value lane `lane` (< kR) holds of acc: acc[lane].
template <int kR>
__device__ __forceinline__ float lane_value(const float (&acc)[kR], int lane) {
  float v = 0;
#pragma unroll
  for (int q = 0; q < kR; ++q) {
    if (q == lane) v = acc[q];
  }
  return v;
}

// act[slot, i] = act(gate) * up for the column i = blockIdx.x * kColumnsPerBlock + warp of
// the blockIdx.y-th expert some route picks, over the expert's group, kR routes a pass.
template <class T, int V, int kR>
__global__ void gate_up_kernel(MoeExpertsArgs a, ExpertsWorkspace w) {
  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kColumnsPerBlock + warp;
  if (static_cast<std::int32_t>(blockIdx.y) >= w.active[0]) return;
  const std::int64_t e = w.active[1 + blockIdx.y];
  const std::int32_t begin = w.offsets[e];
  const std::int32_t end = w.offsets[e + 1];
  if (warp >= kColumnsPerBlock || i >= a.inter || begin == end) return;
  const T* gate_row = static_cast<const T*>(a.w_gate_up) + (e * 2 * a.inter + i) * a.hidden;
  const T* up_row = gate_row + a.inter * a.hidden;
  const T* x = static_cast<const T*>(a.x);
  for (std::int32_t first = begin; first < end; first += kR) {
    const int n = static_cast<int>(min(end - first, kR));
    const T* rows[kR];
#pragma unroll
    for (int q = 0; q < kR; ++q) {
      rows[q] = x + (q < n ? static_cast<std::int64_t>(w.sorted[first + q]) / a.top_k : 0) * a.hidden;
    }
    float gate[kR] = {};
    float up[kR] = {};
    warp_dots<kR, V>(gate_row, rows, a.hidden, n, gate);
    warp_dots<kR, V>(up_row, rows, a.hidden, n, up);
    if (lane < n) {
      const float g = lane_value(gate, lane);
      w.act[static_cast<std::int64_t>(first + lane) * a.inter + i] = (a.gelu ? gelu_erf(g) : silu(g)) * lane_value(up, lane);
    }
  }
}

// out[slot, c] = w_down[e][c] . act[slot] for the column c = blockIdx.x * kColumnsPerBlock +
// warp of the blockIdx.y-th expert some route picks, over the expert's group, kR routes a pass.
template <class T, int V, int kR>
__global__ void down_kernel(MoeExpertsArgs a, ExpertsWorkspace w) {
  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * kColumnsPerBlock + warp;
  if (static_cast<std::int32_t>(blockIdx.y) >= w.active[0]) return;
  const std::int64_t e = w.active[1 + blockIdx.y];
  const std::int32_t begin = w.offsets[e];
  const std::int32_t end = w.offsets[e + 1];
  if (warp >= kColumnsPerBlock || c >= a.hidden || begin == end) return;
  const T* row = static_cast<const T*>(a.w_down) + (e * a.hidden + c) * a.inter;
  for (std::int32_t first = begin; first < end; first += kR) {
    const int n = static_cast<int>(min(end - first, kR));
    const float* rows[kR];
#pragma unroll
    for (int q = 0; q < kR; ++q) rows[q] = w.act + static_cast<std::int64_t>(first + (q < n ? q : 0)) * a.inter;
    float acc[kR] = {};
    warp_dots<kR, V>(row, rows, a.inter, n, acc);
    if (lane < n) w.out[static_cast<std::int64_t>(first + lane) * a.hidden + c] = lane_value(acc, lane);
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


// With inter 0 only the down GEMV runs, writing the zeros of empty dot products.
template <class T, int V, int kR>
void launch_gemvs_routes(const MoeExpertsArgs& a, const ExpertsWorkspace& w, NativeStream s) {
  // At most one expert per route has a group: blocks beyond the active experts exit at once.
  const auto experts = static_cast<unsigned>(std::clamp<std::int64_t>(a.rows * a.top_k, 1, a.experts));
  if (a.inter > 0) {
    const dim3 gate_grid(static_cast<unsigned>(ceil_div(a.inter, kColumnsPerBlock)), experts);
    gate_up_kernel<T, V, kR><<<gate_grid, warp_threads(kColumnsPerBlock, a.warp_size), 0, s>>>(a, w);
  }
  const dim3 down_grid(static_cast<unsigned>(ceil_div(a.hidden, kColumnsPerBlock)), experts);
  down_kernel<T, V, kR><<<down_grid, warp_threads(kColumnsPerBlock, a.warp_size), 0, s>>>(a, w);
}

// A token routes to an expert once, so a batch of one token leaves one route per group (a
// group of more, from repeated ids, still runs: one route a pass).
template <class T, int V>
void launch_gemvs(const MoeExpertsArgs& a, const ExpertsWorkspace& w, NativeStream s) {
  if (a.rows == 1) launch_gemvs_routes<T, V, 1>(a, w, s);
  else launch_gemvs_routes<T, V, kMaxRoutesPerPass>(a, w, s);
}


// The experts after the checks: group the routes, run the two products (on tensor cores when
// `tensor_cores` and the device and shapes allow it: wgmma when a.hopper and it serves, else
// mma.sync; otherwise the GEMVs), then the weighted sums.
void run_experts(const MoeExpertsArgs& a, NativeStream s, [[maybe_unused]] bool tensor_cores) {
  const std::int64_t routes = a.rows * a.top_k;
  const ExpertsWorkspace w = carve(a.workspace, routes, a.experts, a.hidden, a.inter);
  if (routes <= kOneBlockRoutes) {
    group_routes_in_one_block<<<1, kOneBlockThreads, 0, s>>>(a, w);
  } else {
    zero_counts<<<blocks_for(a.experts, kThreads), kThreads, 0, s>>>(w.cursor, a.experts);
    count_routes<<<blocks_for(routes, kThreads), kThreads, 0, s>>>(a, w);
    scan_counts<<<1, 1024, 0, s>>>(a.experts, w);
    place_routes<<<blocks_for(routes, kThreads), kThreads, 0, s>>>(a, w);
  }
  bool ran_mma = false;
#if !defined(TILEOPS_GPU_HIP)
  if (tensor_cores && a.hopper && moe_wgmma_serves()) {
    launch_moe_wgmma(a, w, s);
    ran_mma = true;
  } else {
    ran_mma = tensor_cores && launch_moe_mma(a, w, s);
  }
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
    moe_route_kernel<T><<<static_cast<unsigned>(a.rows), warp_threads(1, a.warp_size), shared, s>>>(a);
  });
  check_launch("moe_route");
}

std::int64_t moe_experts_workspace_bytes(std::int64_t routes, std::int64_t experts, std::int64_t hidden,
                                         std::int64_t inter) {
  return 3 * align_part((experts + 1) * 4) + align_part(experts * 4) + 2 * align_part(routes * 4) + align_part(routes * inter * 4) +
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
  const bool tensor_cores = moe_mma_shapes(a, routes);
#else
  const bool tensor_cores = false;
#endif
  run_experts(a, native_stream(stream), tensor_cores);
  check_launch("moe_experts");
}

}  // namespace tileops::gpu

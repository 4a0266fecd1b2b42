// The routed experts' two products as grouped GEMMs on Hopper's warpgroup MMA (sm_90a machine
// code only; other passes compile bodies that trap, which the launcher never reaches), over
// the routes moe.cu has grouped by expert, with the results of moe_mma.cu.
//
// A block computes a tile of kTileRows routes of one expert's group (find_row_tile) by a
// column tile (blockIdx.y): two warpgroups, 64 rows each, over the same B tile. All 256
// threads copy stages of kStepK along K with cp.async (the A rows are gathered token rows,
// which a TMA box cannot address), each fences its copies into the async proxy, and a block
// barrier opens the stage to the tensor cores. Shared tiles are 128-byte-swizzled panels
// (wgmma_sm90.cuh), one panel along K per stage.
//
// Operand layouts:
//   gate/up  A = x rows gathered by route: [routes, hidden], K (hidden) contiguous: K-major,
//               from shared memory.
//            B = w_gate_up[e]: [2 inter, hidden], a row per output column, K contiguous: K-major.
//   down     A = act: float32 [routes, inter], K contiguous; each thread reads its fragment,
//               splits it into a high and a low 16-bit part and feeds both from registers.
//            B = w_down[e]: [hidden, inter], a row per output column, K contiguous: K-major.
#include "moe_wgmma.cuh"

#include <mutex>

#include "moe_tile.cuh"
#include "wgmma_sm90.cuh"

namespace tileops::gpu {
namespace {

using namespace moe_tile;

constexpr int kWgThreads = 256;         // two warpgroups
constexpr int kWgGateColumns = 128;     // gate/up: 128 gate columns and the matching 128 up columns
constexpr int kWgDownColumns = 256;     // down: two products of 128 columns
constexpr int kGateWgStages = 4;
constexpr int kDownWgStages = 3;
constexpr int kAlignSlack = 1024;       // room to round the shared memory up to a swizzle period

template <class T>
constexpr int kGateWgStageBytes = (kTileRows + 2 * kWgGateColumns) * kStepK * static_cast<int>(sizeof(T));
template <class T>
constexpr int kDownWgStageBytes = kTileRows * kStepK * 4 + kWgDownColumns * kStepK * static_cast<int>(sizeof(T));
template <class T>
constexpr int kGateWgBytes = kGateWgStages * kGateWgStageBytes<T> + kAlignSlack;
template <class T>
constexpr int kDownWgBytes = kDownWgStages * kDownWgStageBytes<T> + kAlignSlack;

#if defined(TILEOPS_HAS_WGMMA)

constexpr std::uint32_t kRowGroupBytes = 8 * 128;  // 8 rows of a 64-column panel

// The block's shared memory from its first 1024-byte boundary, where swizzled panels start.
__device__ __forceinline__ unsigned char* aligned_shared(unsigned char* raw) {
  return reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(raw) + kAlignSlack - 1) &
                                          ~std::uintptr_t{kAlignSlack - 1});
}

// The descriptor of a K-major operand of rows [row, row + 64 or 128) at K column `column` (a
// multiple of 16) of a swizzled kStepK-wide tile; row a multiple of 8.
template <class T>
__device__ __forceinline__ std::uint64_t k_major(const T* tile, int row, int column) {
  return swizzled_descriptor(tile + row * kStepK + column, 16, kRowGroupBytes);
}

// Copies kRows rows of a kStepK-wide T tile, row r from base(r) + k0 when valid(r) (else
// zeros; base(0) must be valid), into a swizzled panel.
template <class T, int kRows, class Base, class Valid>
__device__ __forceinline__ void load_rows(T* tile, std::int64_t k0, Base base, Valid valid) {
  constexpr int kChunks = kStepK / 8;
#pragma unroll
  for (int i = 0; i < kRows * kChunks / kWgThreads; ++i) {
    const int idx = threadIdx.x + i * kWgThreads;
    const int r = idx / kChunks, c = idx % kChunks;
    const bool ok = valid(r);
    copy16_async(tile + swizzled_panel_offset<kRows>(r, c), (ok ? base(r) : base(0)) + k0 + c * 8, ok);
  }
}

// The K loop: load(slot, step) copies step `step` into stage `slot`; compute(slot) issues and
// commits one wgmma group over a stage. kInFlight groups (0 or 1) stay in flight past a step,
// so a stage is refilled kStages - 1 - kInFlight steps ahead, once no warpgroup reads it.
template <int kStages, int kInFlight, class Load, class Compute>
__device__ __forceinline__ void run_pipeline(int k_steps, Load load, Compute compute) {
  constexpr int kAhead = kStages - 1 - kInFlight;
  static_assert(kAhead >= 1, "the pipeline needs a stage to fill while one is read");
#pragma unroll
  for (int s = 0; s < kAhead; ++s) {
    if (s < k_steps) load(s, s);
    commit_copies();
  }
  for (int kt = 0; kt < k_steps; ++kt) {
    wait_copies<kAhead - 1>();
    fence_copies_for_wgmma();
    // Every thread's copies of step kt have landed, and every warpgroup has finished the group
    // that last read the stage refilled below (step kt - 1 - kInFlight).
    __syncthreads();
    const int next = kt + kAhead;
    if (next < k_steps) load(next % kStages, next);
    commit_copies();
    compute(kt % kStages);
    wgmma_wait<kInFlight>();
  }
  wgmma_wait<0>();
  wait_copies<0>();
}

#endif

// act[row0 + r, n0 + j] = act(gate) * up for the block's row tile and the columns n0 =
// blockIdx.y * kWgGateColumns onward (those below inter); x rows gathered by token.
template <class T>
__global__ void __launch_bounds__(kWgThreads, 1) gate_up_wgmma_kernel(MoeExpertsArgs a, ExpertsWorkspace w) {
#if defined(TILEOPS_HAS_WGMMA)
  extern __shared__ unsigned char wgmma_smem[];
  const RowTile rt = find_row_tile(a.experts, w);
  if (rt.rows <= 0) return;
  constexpr int kStageElems = (kTileRows + 2 * kWgGateColumns) * kStepK;
  T* const smem = reinterpret_cast<T*>(aligned_shared(wgmma_smem));
  const std::int64_t n0 = static_cast<std::int64_t>(blockIdx.y) * kWgGateColumns;
  const T* const x = static_cast<const T*>(a.x);
  const T* const gate = static_cast<const T*>(a.w_gate_up) + (rt.expert * 2 * a.inter + n0) * a.hidden;
  const T* const up = gate + a.inter * a.hidden;
  const std::int64_t columns_left = a.inter - n0;

  // This thread's A rows (threadIdx.x / 8 + 32 i), gathered once; past the group, none.
  constexpr int kChunks = kStepK / 8;
  constexpr int kRowsPerThread = kTileRows * kChunks / kWgThreads;
  const T* a_rows[kRowsPerThread];
#pragma unroll
  for (int i = 0; i < kRowsPerThread; ++i) {
    const int r = threadIdx.x / kChunks + i * (kWgThreads / kChunks);
    a_rows[i] = r < rt.rows ? x + static_cast<std::int64_t>(w.sorted[rt.row0 + r]) / a.top_k * a.hidden : nullptr;
  }
  const auto load = [&](int slot, int step) {
    T* const sa = smem + slot * kStageElems;
    T* const sb = sa + kTileRows * kStepK;
    const std::int64_t k0 = static_cast<std::int64_t>(step) * kStepK;
    const int c = threadIdx.x % kChunks;
#pragma unroll
    for (int i = 0; i < kRowsPerThread; ++i) {
      const int r = threadIdx.x / kChunks + i * (kWgThreads / kChunks);
      const bool ok = a_rows[i] != nullptr;
      copy16_async(sa + swizzled_panel_offset<kTileRows>(r, c), (ok ? a_rows[i] : x) + k0 + c * 8, ok);
    }
    // B rows 0-127 the gate columns, 128-255 the matching up columns.
    load_rows<T, 2 * kWgGateColumns>(
        sb, k0,
        [&](int r) { return r < kWgGateColumns ? gate + r * a.hidden : up + (r - kWgGateColumns) * a.hidden; },
        [&](int r) { return (r < kWgGateColumns ? r : r - kWgGateColumns) < columns_left; });
  };

  const int group = threadIdx.x / 128;  // the warpgroup: rows 64 * group on
  // One product over the 256 B rows: chunks 0-15 the gate columns, 16-31 the up columns.
  constexpr int kUp = kWgGateColumns / 8;
  float acc[2 * kUp][4] = {};
  const auto compute = [&](int slot) {
    const T* const sa = smem + slot * kStageElems;
    const T* const sb = sa + kTileRows * kStepK;
    fence_registers(acc);
    wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < kStepK / 16; ++ks) {
      wgmma_m64n256k16_ss<T>(acc, k_major(sa, group * 64, ks * 16), k_major(sb, 0, ks * 16), true);
    }
    wgmma_commit();
  };
  run_pipeline<kGateWgStages, 1>(static_cast<int>(a.hidden / kStepK), load, compute);
  fence_registers(acc);

  // The accumulator layout: in chunk j, rows g and g + 8 of the warp's 16, columns 8j + 2t, + 1.
  const int lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int r = (threadIdx.x / 32) * 16 + half * 8 + g;
    if (r >= rt.rows) continue;
    float* const row = w.act + static_cast<std::int64_t>(rt.row0 + r) * a.inter + n0;
#pragma unroll
    for (int j = 0; j < kWgGateColumns / 8; ++j) {
      const int col = j * 8 + 2 * t;
      if (col >= columns_left) continue;
      float v[2];
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const float gv = acc[j][2 * half + e];
        v[e] = (a.gelu ? gelu_erf(gv) : silu(gv)) * acc[kUp + j][2 * half + e];
      }
      *reinterpret_cast<float2*>(row + col) = make_float2(v[0], v[1]);
    }
  }
#elif defined(__CUDA_ARCH__)
  __trap();  // the launcher runs this kernel on sm_90a machine code only
#endif
}

// out[row0 + r, n0 + j] = w_down[e][n0 + j] . act[row0 + r] for the block's row tile and the
// columns n0 = blockIdx.y * kWgDownColumns onward (those below hidden). The float32 act rows
// enter as two T operands, high and low part, so the product keeps about 16 bits.
template <class T>
__global__ void __launch_bounds__(kWgThreads, 1) down_wgmma_kernel(MoeExpertsArgs a, ExpertsWorkspace w) {
#if defined(TILEOPS_HAS_WGMMA)
  extern __shared__ unsigned char wgmma_smem[];
  const RowTile rt = find_row_tile(a.experts, w);
  if (rt.rows <= 0) return;
  constexpr int kStageBytes = kDownWgStageBytes<T>;
  unsigned char* const smem = aligned_shared(wgmma_smem);
  const std::int64_t n0 = static_cast<std::int64_t>(blockIdx.y) * kWgDownColumns;
  const T* const weights = static_cast<const T*>(a.w_down) + (rt.expert * a.hidden + n0) * a.inter;
  const float* const act = w.act + static_cast<std::int64_t>(rt.row0) * a.inter;
  const std::int64_t columns_left = a.hidden - n0;
  const auto load = [&](int slot, int step) {
    float* const sa = reinterpret_cast<float*>(smem + slot * kStageBytes);
    T* const sb = reinterpret_cast<T*>(sa + kTileRows * kStepK);
    const std::int64_t k0 = static_cast<std::int64_t>(step) * kStepK;
    constexpr int kChunks = kStepK / 4;
    const int c = threadIdx.x % kChunks;
#pragma unroll
    for (int i = 0; i < kTileRows * kChunks / kWgThreads; ++i) {
      const int r = threadIdx.x / kChunks + i * (kWgThreads / kChunks);
      const bool ok = r < rt.rows;
      copy16_async(sa + swizzled_f32(r, c * 4), act + (ok ? r * a.inter : 0) + k0 + c * 4, ok);
    }
    load_rows<T, kWgDownColumns>(
        sb, k0, [&](int r) { return weights + r * a.inter; }, [&](int r) { return r < columns_left; });
  };

  const int lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
  const int r0 = (threadIdx.x / 32) * 16 + g;  // this thread's rows r0 and r0 + 8 of the tile
  float acc[2][kWgDownColumns / 2 / 8][4] = {};
  const auto compute = [&](int slot) {
    const float* const sa = reinterpret_cast<const float*>(smem + slot * kStageBytes);
    const T* const sb = reinterpret_cast<const T*>(sa + kTileRows * kStepK);
    // The A fragments of the stage's four K slices, before the fence: rows r0, r0 + 8 at
    // columns 2t and 2t + 8 of each slice, split.
    std::uint32_t high[kStepK / 16][4], low[kStepK / 16][4];
#pragma unroll
    for (int ks = 0; ks < kStepK / 16; ++ks) {
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const float2 v =
            *reinterpret_cast<const float2*>(sa + swizzled_f32(r0 + (j & 1) * 8, ks * 16 + 2 * t + (j >> 1) * 8));
        high[ks][j] = split2<T>(v, low[ks][j]);
      }
    }
    fence_registers(acc[0]);
    fence_registers(acc[1]);
    wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < kStepK / 16; ++ks) {
#pragma unroll
      for (int n = 0; n < 2; ++n) {
        const std::uint64_t bd = k_major(sb, n * 128, ks * 16);
        wgmma_m64k16_rs<T, 128, false>(acc[n], high[ks], bd, true);
        wgmma_m64k16_rs<T, 128, false>(acc[n], low[ks], bd, true);
      }
    }
    wgmma_commit();
  };
  // No group in flight past a step: the next step's fragments reuse the A registers.
  run_pipeline<kDownWgStages, 0>(static_cast<int>(a.inter / kStepK), load, compute);
  fence_registers(acc[0]);
  fence_registers(acc[1]);

#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int r = r0 + half * 8;
    if (r >= rt.rows) continue;
    float* const row = w.out + static_cast<std::int64_t>(rt.row0 + r) * a.hidden + n0;
#pragma unroll
    for (int n = 0; n < 2; ++n) {
#pragma unroll
      for (int j = 0; j < kWgDownColumns / 2 / 8; ++j) {
        const int col = n * 128 + j * 8 + 2 * t;
        if (col < columns_left) {
          *reinterpret_cast<float2*>(row + col) = make_float2(acc[n][j][2 * half], acc[n][j][2 * half + 1]);
        }
      }
    }
  }
#elif defined(__CUDA_ARCH__)
  __trap();  // the launcher runs this kernel on sm_90a machine code only
#endif
}

// Whether the device runs the sm_90a kernels: compute capability 9.0 (which loads the sm_90a
// machine code of a build that embeds it) with the pipelines' shared memory.
bool read_wgmma_device(int device) {
  int major = 0, minor = 0, shared = 0;
  check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), "reading the compute capability");
  check(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device), "reading the compute capability");
  check(cudaDeviceGetAttribute(&shared, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
        "reading the shared memory limit");
  return major == 9 && minor == 0 && shared >= std::max(kGateWgBytes<bf16>, kDownWgBytes<bf16>);
}

}  // namespace

bool moe_wgmma_built() {
#if defined(TILEOPS_CUDA_SM90A)
  return true;
#else
  return false;
#endif
}

// The first 64 devices' facts remembered.
bool moe_wgmma_serves() {
  if (!moe_wgmma_built()) return false;
  constexpr int kDevices = 64;
  static std::once_flag read[kDevices];
  static bool serves[kDevices];
  int device = 0;
  check(cudaGetDevice(&device), "reading the current device");
  if (device < 0 || device >= kDevices) return read_wgmma_device(device);
  std::call_once(read[device], [device] { serves[device] = read_wgmma_device(device); });
  return serves[device];
}

void launch_moe_wgmma(const MoeExpertsArgs& a, const ExpertsWorkspace& w, NativeStream s) {
  // Both grids at their upper bound of row tiles, routes / kTileRows + experts (each group
  // wastes less than one); surplus blocks exit.
  const auto row_tiles = static_cast<unsigned>(ceil_div(a.rows * a.top_k, kTileRows) + a.experts);
  const auto launch = [&](auto type) {
    using T = decltype(type);
    allow_shared_memory<gate_up_wgmma_kernel<T>, kGateWgBytes<T>>();
    allow_shared_memory<down_wgmma_kernel<T>, kDownWgBytes<T>>();
    const dim3 gate_grid(row_tiles, static_cast<unsigned>(ceil_div(a.inter, kWgGateColumns)));
    gate_up_wgmma_kernel<T><<<gate_grid, kWgThreads, kGateWgBytes<T>, s>>>(a, w);
    const dim3 down_grid(row_tiles, static_cast<unsigned>(ceil_div(a.hidden, kWgDownColumns)));
    down_wgmma_kernel<T><<<down_grid, kWgThreads, kDownWgBytes<T>, s>>>(a, w);
  };
  if (a.dtype == DType::bfloat16) launch(bf16{});
  else launch(f16{});
}

}  // namespace tileops::gpu

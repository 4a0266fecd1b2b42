// The routed experts' two products as grouped GEMMs on tensor cores (CUDA sm_80 and later),
// over the routes moe.cu has grouped by expert.
#include "moe_mma.cuh"

#include <mutex>

#include "mma_sm80.cuh"
#include "moe_tile.cuh"

namespace tileops::gpu {
namespace {

// --- the grouped GEMMs on tensor cores (CUDA sm_80 and later) ---
//
// A block computes a tile of kTileRows routes of one expert's group (the linear row tile
// blockIdx.x mapped to its expert through tile_start; surplus blocks of the grid's upper
// bound exit) by a column tile (blockIdx.y), walking K in steps of kStepK with a kStages-deep
// cp.async pipeline. 8 warps, 2 along the rows (64 each, four m16 tiles) by 4 along the
// columns. Shared tiles keep 16-byte chunks XOR-swizzled by row so that ldmatrix and the
// float32 fragment reads hit distinct banks.

using namespace moe_tile;

constexpr int kMmaThreads = 256;
constexpr int kGateColumns = 128;  // gate/up: 128 gate columns and the matching 128 up columns
constexpr int kDownColumns = 256;

// The shared memory of each GEMM's pipeline: kStages stages of an A tile and a B tile.
template <class T>
constexpr int kGateStageBytes = (kTileRows + 2 * kGateColumns) * kStepK * static_cast<int>(sizeof(T));
template <class T>
constexpr int kDownStageBytes = kTileRows * kStepK * 4 + kDownColumns * kStepK * static_cast<int>(sizeof(T));

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800

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

}  // namespace

constexpr int kMmaRoutesPerExpert = 4;  // the average group from which tensor cores serve

// Whether the grouped GEMMs on tensor cores serve a call, by its shapes alone: float16 or
// bfloat16, hidden and inter multiples of kStepK, 16-byte aligned inputs, and on average at
// least kMmaRoutesPerExpert routes per expert. On an H200 (bench/gpu/moe_experts_harness.cu)
// the tensor cores won from about four routes per expert (Mixtral-8x7B at 32 tokens: 1.46 ms
// against the GEMVs' 3.42; DeepSeek-V2-Lite at 32 tokens, three per expert, even) and were 22
// to 32 times faster at 2048 tokens; below that the GEMVs, which read each weight row about
// once, keep decode.
bool moe_mma_shapes(const MoeExpertsArgs& a, std::int64_t routes) {
  return (a.dtype == DType::bfloat16 || a.dtype == DType::float16) && a.inter > 0 && a.hidden % kStepK == 0 &&
         a.inter % kStepK == 0 && aligned16(a.x) && aligned16(a.w_gate_up) && aligned16(a.w_down) &&
         routes >= kMmaRoutesPerExpert * a.experts && ceil_div(a.inter, kGateColumns) <= 65535 &&
         ceil_div(a.hidden, kDownColumns) <= 65535;
}

// Runs the grouped GEMMs if the device is sm_80 or later with the shared memory they need;
// false (nothing launched) otherwise.
bool launch_moe_mma(const MoeExpertsArgs& a, const ExpertsWorkspace& w, NativeStream s) {
  const MmaDevice device = mma_device();
  if (!device.runs_mma) return false;
  if (a.dtype == DType::bfloat16) return launch_mma_for_device<bf16>(a, w, s, device);
  return launch_mma_for_device<f16>(a, w, s, device);
}

}  // namespace tileops::gpu

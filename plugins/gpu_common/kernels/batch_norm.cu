// Batch normalization of x viewed as [n, channels, inner]. Training: per-channel sums and sums
// of squares in double (split across blocks where the channels alone would leave the device
// idle), then a pass that combines the splits into the batch statistics, the running-statistics
// update and each channel's affine map, then the output pass y = (x - mean) * scale + bias.
// Channels-last x in 16-byte packs runs the three as one cooperative launch instead
// (train_channels_last_resident). Inference is the output pass alone, each thread deriving its
// channels' affine maps from the running statistics.
#include "../host/launchers.hpp"
#include "cooperative.cuh"
#include "launch.cuh"

namespace tileops::gpu {
namespace {

constexpr int kBatchNormThreads = 256;

// Batch rows a thread of the channels-last kernels loads before it uses any: loads in flight.
// At [16384, 4096] float16 on the H200, 8 rows beat 4 by 4% in the output pass and 5% in the
// statistics pass. 16 rows are slower (H100): the statistics pass alone took 230 registers and
// 0.0520 ms against 0.0495 ms, and the single launch, held to 128 registers for its two blocks a
// multiprocessor, spilled and took 0.1673 ms against 0.1484 ms.
constexpr int kRowsInFlight = 8;

struct Moments {
  double sum;
  double squares;
};

// What the output pass applies to one channel.
struct alignas(16) ChannelAffine {
  float mean;
  float scale;
  float bias;
  float unused;
};

// Plain sums of x and x * x from sums of d = x - shift and d * d over `count` values.
__device__ __forceinline__ Moments unshift(double shift, double sum, double squares, double count) {
  return {sum + count * shift, squares + 2.0 * shift * sum + count * shift * shift};
}

// Sums of d = x - shift and of d * d in float, with the shift the first value a thread reads
// (close to the values that follow, so that squares of large means do not swamp the
// variance), turned into plain sums of x and x * x in double before anything is combined.
struct ShiftedMoments {
  float shift = 0.0f;
  float sum = 0.0f;
  float squares = 0.0f;
  std::int64_t count = 0;
  __device__ void add(float v) {
    if (count == 0) shift = v;
    const float d = v - shift;
    sum += d;
    squares += d * d;
    ++count;
  }
  __device__ Moments plain() const { return unshift(shift, sum, squares, static_cast<double>(count)); }
};

// The channels-last statistics pass: a block is kChannelLanes groups of kVec adjacent channels
// (a warp reads 32 consecutive 16-byte packs of a row) by kRowLanes row lanes. With one row lane
// per block, 4096 float16 channels made 2 blocks per split, and the pass read at 47-69% of the
// copy rate on the H200 for want of blocks.
constexpr int kChannelLanes = 32;
constexpr int kRowLanes = 8;
constexpr int kLaneThreads = kChannelLanes * kRowLanes;
// Rows a lane sums in float before it adds them into its double sums.
constexpr std::int64_t kFoldRows = 256;

// A lane's float sums of d = x - shift and of d * d over a run of at most kFoldRows rows, added
// into its double sums at the run's end.
template <int kVec>
struct RunSums {
  float s[kVec] = {};
  float q[kVec] = {};
  template <class T>
  __device__ void add(const Pack<T, kVec>& in, const float (&shift)[kVec]) {
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      const float d = to_float(in.v[k]) - shift[k];
      s[k] += d;
      q[k] += d * d;
    }
  }
  __device__ void add_to(Moments* mine) const {
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      mine[k].sum += s[k];
      mine[k].squares += q[k];
    }
  }
};

// The rows of x one lane of the channels-last statistics pass reads: first, first + stride, ...
// below n. The rows are dealt round-robin to the gridDim.y * kRowLanes lanes of the splits, so
// that the whole grid reads them from the first to the last. Where the single launch keeps rows
// on chip, a lane keeps its first `kept` rows: together the grid's rows below kept * stride, the
// ones read longest before the output phase and the least likely still in L2 (keeping the last
// rows instead saved nothing: the L2 already served them).
struct LaneRows {
  std::int64_t first, stride, count;
  __device__ explicit LaneRows(std::int64_t n)
      : first(static_cast<std::int64_t>(blockIdx.y) * kRowLanes + threadIdx.y),
        stride(static_cast<std::int64_t>(gridDim.y) * kRowLanes),
        count(first < n ? (n - first + stride - 1) / stride : 0) {}
  // How many of the lane's rows it keeps.
  __device__ int kept(int kept_rows) const { return count < kept_rows ? static_cast<int>(count) : kept_rows; }
};

// x is [n, channels] (inner == 1): writes partial[blockIdx.y, c] for the channels of one tile of
// kChannelLanes packs, with the block's `lanes` as scratch, each lane over its LaneRows, shifted
// by the first value it reads. The last rows read last are what the grid leaves in L2 for the
// output pass. With kept_rows > 0, each lane's first kept_rows rows are also stored to
// kept[j * kLaneThreads + thread] (row first + j * stride), for the single launch's output phase
// to write from. The shift comes from the first batch of kUnroll loads rather than a load of its
// own before them: the pass alone over [16384, 4096] float16 in 16 splits then took 0.0490 ms
// against 0.0567 ms (H100, 93% of a read's rate against 81%).
template <class T, int kVec, int kUnroll = kRowsInFlight>
__device__ void tile_moments(const T* __restrict__ x, Moments* partial, std::int64_t n, std::int64_t channels,
                             std::int64_t tile, Moments (&lanes)[kRowLanes][kChannelLanes * kVec],
                             Pack<T, kVec>* kept, int kept_rows) {
  static_assert(kFoldRows % kUnroll == 0, "a run of float sums ends at a batch of loads");
  const std::int64_t groups = channels / kVec;
  const LaneRows rows(n);
  const std::int64_t g = tile * kChannelLanes + threadIdx.x;
  const int thread = threadIdx.y * kChannelLanes + threadIdx.x;
  // The lane's double sums live in its own slots of `lanes`, which keeps them out of registers.
  Moments* mine = &lanes[threadIdx.y][threadIdx.x * kVec];
  float shift[kVec];
#pragma unroll
  for (int k = 0; k < kVec; ++k) {
    shift[k] = 0.0f;
    mine[k] = Moments{0.0, 0.0};
  }
  const std::int64_t count = g < groups ? rows.count : 0;
  const int kept_here = rows.kept(kept_rows);
  const T* lane_x = x + rows.first * channels + g * kVec;
  const std::int64_t step = rows.stride * channels;
  RunSums<kVec> sums;
  for (std::int64_t j = 0; j < count; j += kUnroll) {
    Pack<T, kVec> in[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (j + u < count) in[u] = load_pack<kVec>(lane_x + (j + u) * step);
    }
    if (j == 0) {
#pragma unroll
      for (int k = 0; k < kVec; ++k) shift[k] = to_float(in[0].v[k]);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (j + u < count) {
        sums.add(in[u], shift);
        if (j + u < kept_here) kept[(j + u) * kLaneThreads + thread] = in[u];
      }
    }
    if ((j + kUnroll) % kFoldRows == 0) {
      sums.add_to(mine);
      sums = RunSums<kVec>{};
    }
  }
  sums.add_to(mine);
#pragma unroll
  for (int k = 0; k < kVec; ++k) mine[k] = unshift(shift[k], mine[k].sum, mine[k].squares, static_cast<double>(count));
  __syncthreads();
  for (int column = thread; column < kChannelLanes * kVec; column += kLaneThreads) {
    const std::int64_t c = tile * kChannelLanes * kVec + column;
    if (c < groups * kVec) {
      Moments m{0.0, 0.0};
#pragma unroll
      for (int lane = 0; lane < kRowLanes; ++lane) {
        m.sum += lanes[lane][column].sum;
        m.squares += lanes[lane][column].squares;
      }
      partial[blockIdx.y * channels + c] = m;
    }
  }
  __syncthreads();
}

// The statistics pass over every tile of channels.
template <class T, int kVec, int kUnroll = kRowsInFlight>
__global__ void __launch_bounds__(kLaneThreads)
    moments_channels_last(const T* __restrict__ x, Moments* __restrict__ partial, std::int64_t n,
                          std::int64_t channels) {
  __shared__ Moments lanes[kRowLanes][kChannelLanes * kVec];
  for (std::int64_t tile = blockIdx.x; tile * kChannelLanes < channels / kVec; tile += gridDim.x) {
    tile_moments<T, kVec, kUnroll>(x, partial, n, channels, tile, lanes, nullptr, 0);
  }
}

// inner > 1: one block per (channel, chunk of the batch) walks the chunk's runs of `inner`
// elements, in packs of kVec (inner % kVec == 0), tracking its (row, offset) position without
// dividing.
template <class T, int kVec>
__global__ void moments_rows(const T* __restrict__ x, Moments* __restrict__ partial, std::int64_t n,
                             std::int64_t channels, std::int64_t inner, std::int64_t chunk) {
  __shared__ double scratch[kMaxWarps];
  const std::int64_t packs = inner / kVec;
  const std::int64_t begin = blockIdx.y * chunk;
  const std::int64_t end = begin + chunk < n ? begin + chunk : n;
  const std::int64_t row_step = kBatchNormThreads / packs, pack_step = kBatchNormThreads % packs;
  for (std::int64_t c = blockIdx.x; c < channels; c += gridDim.x) {
    ShiftedMoments m;
    std::int64_t r = begin + threadIdx.x / packs, p = threadIdx.x % packs;
    while (r < end) {
      const Pack<T, kVec> in = load_pack<kVec>(x + (r * channels + c) * inner + p * kVec);
#pragma unroll
      for (int k = 0; k < kVec; ++k) m.add(to_float(in.v[k]));
      r += row_step;
      p += pack_step;
      if (p >= packs) {
        p -= packs;
        ++r;
      }
    }
    const Moments mine = m.plain();
    const double sum = block_reduce(mine.sum, Add{}, 0.0, scratch);
    const double squares = block_reduce(mine.squares, Add{}, 0.0, scratch);
    if (threadIdx.x == 0) partial[blockIdx.y * channels + c] = Moments{sum, squares};
  }
}

// Where the training pass records the batch statistics and what it derives the affine maps from.
struct TrainingOutputs {
  const float* weight;  // may be null
  const float* bias;    // may be null
  float* running_mean;
  float* running_var;
  float* batch_mean;
  float* batch_rstd;
  double eps;
  double momentum;
};

// Channel c's batch statistics from its sums over `count` values, recorded in `o` (with the
// running statistics updated) when `record`; returns the output pass's affine map for it.
__device__ ChannelAffine finish_channel(Moments total, double count, std::int64_t c, const TrainingOutputs& o,
                                        bool record) {
  const double mean = total.sum / count;
  const double var = fmax(total.squares / count - mean * mean, 0.0);
  const double rstd = 1.0 / sqrt(var + o.eps);
  if (record) {
    o.running_mean[c] = static_cast<float>((1.0 - o.momentum) * o.running_mean[c] + o.momentum * mean);
    o.running_var[c] =
        static_cast<float>((1.0 - o.momentum) * o.running_var[c] + o.momentum * var * count / (count - 1.0));
    o.batch_mean[c] = static_cast<float>(mean);
    o.batch_rstd[c] = static_cast<float>(rstd);
  }
  const double scale = o.weight != nullptr ? rstd * o.weight[c] : rstd;
  return ChannelAffine{static_cast<float>(mean), static_cast<float>(scale), o.bias != nullptr ? o.bias[c] : 0.0f,
                       0.0f};
}

// Combines the splits' sums into each channel's statistics: a block is kChannelLanes channels by
// kRowLanes lanes that take every kRowLanes-th split, summed in lane order.
__global__ void __launch_bounds__(kLaneThreads)
    finish_training(const Moments* __restrict__ partial, std::int64_t splits, std::int64_t channels, double count,
                    TrainingOutputs outputs, ChannelAffine* __restrict__ affine) {
  __shared__ Moments lanes[kRowLanes][kChannelLanes];
  for (std::int64_t tile = blockIdx.x; tile * kChannelLanes < channels; tile += gridDim.x) {
    const std::int64_t c = tile * kChannelLanes + threadIdx.x;
    Moments mine{0.0, 0.0};
    if (c < channels) {
      for (std::int64_t s = threadIdx.y; s < splits; s += kRowLanes) {
        mine.sum += partial[s * channels + c].sum;
        mine.squares += partial[s * channels + c].squares;
      }
    }
    lanes[threadIdx.y][threadIdx.x] = mine;
    __syncthreads();
    if (threadIdx.y == 0 && c < channels) {
      Moments total{0.0, 0.0};
#pragma unroll
      for (int lane = 0; lane < kRowLanes; ++lane) {
        total.sum += lanes[lane][threadIdx.x].sum;
        total.squares += lanes[lane][threadIdx.x].squares;
      }
      affine[c] = finish_channel(total, count, c, outputs, true);
    }
    __syncthreads();
  }
}

// Where the output pass takes each channel's affine map: the training pass's, or derived from the
// running statistics (inference) by each thread for its own channels, which saves a launch.
struct TrainedAffine {
  const ChannelAffine* affine;
  __device__ ChannelAffine operator()(std::int64_t c) const { return affine[c]; }
};
// Inference derives its maps in float: a thread derives kVec of them before its first row, and
// double square roots there made the 16-bit launch on the H100 1% slower at [16384, 4096] and 7% at
// [2048, 4096]. rsqrtf (within 2 ulp, as the row norms use it) gives 0 for an infinite variance,
// so the channel's output is its bias, and inf for 0.
struct RunningAffine {
  const float* weight;
  const float* bias;
  const float* running_mean;
  const float* running_var;
  float eps;
  __device__ ChannelAffine operator()(std::int64_t c) const {
    const float rstd = rsqrtf(running_var[c] + eps);
    const float scale = weight != nullptr ? rstd * weight[c] : rstd;
    return ChannelAffine{running_mean[c], scale, bias != nullptr ? bias[c] : 0.0f, 0.0f};
  }
};

template <class T>
__device__ __forceinline__ T apply(T v, const ChannelAffine& a) {
  return store_as<T>((to_float(v) - a.mean) * a.scale + a.bias);
}

// Batch rows one thread of apply_channels_last writes for its channels: at [16384, 4096] float16
// on the H200, 16 ran 6% faster than 64 (more blocks to spread) and 256 was 15% slower.
constexpr int kRowsPerThread = 16;

// inner == 1: x walks packs of channels, whose affine maps a thread keeps in registers for
// rows_per_thread rows, loading kUnroll rows before it writes any; blockIdx.y walks tiles of
// such rows from the last back, because the statistics pass read the last rows last: in training
// they are the part of x still in L2.
template <class T, int kVec, class Affine, int kUnroll = kRowsInFlight>
__global__ void apply_channels_last(const T* __restrict__ x, T* __restrict__ y, std::int64_t n, std::int64_t channels,
                                    Affine affine, std::int64_t rows_per_thread) {
  const std::int64_t packs = channels / kVec;
  const std::int64_t tiles = (n + rows_per_thread - 1) / rows_per_thread;
  for (std::int64_t p = global_thread(); p < packs; p += grid_threads()) {
    ChannelAffine a[kVec];
#pragma unroll
    for (int k = 0; k < kVec; ++k) a[k] = affine(p * kVec + k);
    for (std::int64_t tile = blockIdx.y; tile < tiles; tile += gridDim.y) {
      const std::int64_t r0 = (tiles - 1 - tile) * rows_per_thread;
      const std::int64_t r1 = r0 + rows_per_thread < n ? r0 + rows_per_thread : n;
      for (std::int64_t r = r0; r < r1; r += kUnroll) {
        Pack<T, kVec> in[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          if (r + u < r1) in[u] = load_pack_once<kVec>(x + (r + u) * channels + p * kVec);
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          if (r + u >= r1) break;
          Pack<T, kVec> out;
#pragma unroll
          for (int k = 0; k < kVec; ++k) out.v[k] = apply(in[u].v[k], a[k]);
          store_pack_once(y + (r + u) * channels + p * kVec, out);
        }
      }
    }
  }
}

// inner > 1: blockIdx.y walks the (batch, channel) runs, x walks packs of a run.
template <class T, int kVec, class Affine>
__global__ void apply_rows(const T* __restrict__ x, T* __restrict__ y, std::int64_t runs, std::int64_t channels,
                           std::int64_t inner, Affine affine) {
  const std::int64_t packs = inner / kVec;
  for (std::int64_t run = blockIdx.y; run < runs; run += gridDim.y) {
    const ChannelAffine a = affine(run % channels);
    for (std::int64_t p = global_thread(); p < packs; p += grid_threads()) {
      const Pack<T, kVec> in = load_pack<kVec>(x + run * inner + p * kVec);
      Pack<T, kVec> out;
#pragma unroll
      for (int k = 0; k < kVec; ++k) out.v[k] = apply(in.v[k], a);
      store_pack(y + run * inner + p * kVec, out);
    }
  }
}

// Training for channels-last x (inner == 1) in 16-byte packs as one launch whose blocks are all
// resident (a cooperative launch), in three phases parted by grid barriers: each block sums its
// share of the rows of one tile of channels (tile_moments, gridDim.x tiles by gridDim.y splits),
// keeping each lane's first kept_rows rows in the dynamic shared memory (kept_rows * kLaneThreads
// packs); split 0's block of each tile combines the splits into the batch statistics and the
// affine maps (`affine`, [channels]); then each thread writes the rows it kept, and the whole grid
// writes the other rows' outputs, each thread a fixed pack of channels down every row_lanes-th
// row, the last rows first (the statistics phase read them last, and the L2 may still hold
// them). One launch instead of three: at [16384, 4096] float16 on the H200, 0.1150 ms against
// 0.1235 ms, and 0.0239 ms against 0.0299 ms at [2048, 4096]. Keeping 16 rows a lane (the first
// 2048 rows there) against none, in one H200 run: 0.1124 ms against 0.1146 ms, and 0.0214 ms
// against 0.0243 ms at [2048, 4096]; 20 rows were slower (0.1175 ms: with the lanes' 32 KiB, the
// L1 kept too little room for the loads in flight), and keeping the last rows instead of the
// first saved nothing on an H100 (the L2 already served them). Slower as well: each block
// writing the rows it had read (0.1391 ms, H200) and loading the statistics phase's last
// 16-40 MiB with the L2's evict-last priority (H100: 0.1585-0.1640 ms against 0.1550 ms).
template <class T, int kVec, int kUnroll = kRowsInFlight>
__global__ void __launch_bounds__(kLaneThreads, 2)
    train_channels_last_resident(const T* __restrict__ x, T* __restrict__ y, Moments* partial,
                                 ChannelAffine* affine, std::int64_t n, std::int64_t channels,
                                 TrainingOutputs outputs, int kept_rows) {
  using P = Pack<T, kVec>;
  static_assert(sizeof(P) == 16, "16-byte packs");
  __shared__ Moments lanes[kRowLanes][kChannelLanes * kVec];
  extern __shared__ uint4 kept_storage[];
  P* kept = reinterpret_cast<P*>(kept_storage);
  tile_moments<T, kVec>(x, partial, n, channels, blockIdx.x, lanes, kept, kept_rows);
  grid_barrier();

  const std::int64_t groups = channels / kVec;
  const int thread = threadIdx.y * kChannelLanes + threadIdx.x;
  if (blockIdx.y == 0) {
    for (int column = thread; column < kChannelLanes * kVec; column += kLaneThreads) {
      const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * kChannelLanes * kVec + column;
      if (c < groups * kVec) {
        Moments total{0.0, 0.0};
        for (unsigned split = 0; split < gridDim.y; ++split) {
          total.sum += partial[split * channels + c].sum;
          total.squares += partial[split * channels + c].squares;
        }
        affine[c] = finish_channel(total, static_cast<double>(n), c, outputs, true);
      }
    }
  }
  grid_barrier();

  const LaneRows rows(n);
  const std::int64_t own = static_cast<std::int64_t>(blockIdx.x) * kChannelLanes + threadIdx.x;
  if (kept_rows > 0 && own < groups) {
    ChannelAffine a[kVec];
#pragma unroll
    for (int k = 0; k < kVec; ++k) a[k] = affine[own * kVec + k];
    const int kept_here = rows.kept(kept_rows);
    for (int j = 0; j < kept_here; ++j) {
      const P in = kept[j * kLaneThreads + thread];
      P result;
#pragma unroll
      for (int k = 0; k < kVec; ++k) result.v[k] = apply(in.v[k], a[k]);
      store_pack_once(y + (rows.first + j * rows.stride) * channels + own * kVec, result);
    }
  }

  // The other rows, [streamed_from, n). The planner gives every tile a block, so there are at
  // least kRowLanes threads per pack.
  const std::int64_t kept_below = static_cast<std::int64_t>(kept_rows) * rows.stride;
  const std::int64_t streamed_from = kept_below < n ? kept_below : n;
  const std::int64_t threads = static_cast<std::int64_t>(gridDim.x) * gridDim.y * kLaneThreads;
  const std::int64_t t = (static_cast<std::int64_t>(blockIdx.y) * gridDim.x + blockIdx.x) * kLaneThreads + thread;
  const std::int64_t row_lanes = threads / groups;
  if (t >= row_lanes * groups) return;
  const std::int64_t g = t % groups, r0 = streamed_from + t / groups;
  if (r0 >= n) return;
  ChannelAffine a[kVec];
#pragma unroll
  for (int k = 0; k < kVec; ++k) a[k] = affine[g * kVec + k];
  const T* in_column = x + g * kVec;
  T* out_column = y + g * kVec;
  for (std::int64_t i = (n - 1 - r0) / row_lanes; i >= 0; i -= kUnroll) {
    P in[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (i - u >= 0) in[u] = load_pack_once<kVec>(in_column + (r0 + (i - u) * row_lanes) * channels);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (i - u < 0) break;
      P result;
#pragma unroll
      for (int k = 0; k < kVec; ++k) result.v[k] = apply(in[u].v[k], a[k]);
      store_pack_once(out_column + (r0 + (i - u) * row_lanes) * channels, result);
    }
  }
}

// Dynamic shared memory of the single launch that keeps `rows` rows a thread.
std::size_t kept_bytes(int rows) { return static_cast<std::size_t>(rows) * kLaneThreads * 16; }

struct BatchNormPlan {
  int vec = 1;
  std::int64_t splits = 1;
  std::int64_t chunk = 0;  // batch rows per split
  bool one_launch = false;  // training as train_channels_last_resident
};

// The single launch for training: channels-last x in 16-byte packs, every tile of channels with
// at least one resident block; the splits then fill the device's resident blocks.
bool plan_one_launch(const BatchNormArgs& a, BatchNormPlan& p) {
  if (a.inner != 1 || a.n == 0 || p.vec * dtype_size(a.dtype) != 16) return false;
  const std::int64_t resident = static_cast<std::int64_t>(a.single_launch.blocks) * std::max(a.sm_count, 1);
  const std::int64_t tiles = ceil_div(a.channels / p.vec, kChannelLanes);
  if (tiles > resident) return false;
  p.one_launch = true;
  p.splits = std::min({resident / tiles, ceil_div(a.n, kRowLanes), std::int64_t{65535}});
  return true;
}

BatchNormPlan plan_batch_norm(const BatchNormArgs& a, bool training) {
  BatchNormPlan p;
  // No channels: nothing is launched, and there are no tiles to share the device among.
  if (a.channels == 0) return p;
  const std::int64_t wide = static_cast<std::int64_t>(16 / dtype_size(a.dtype));
  const std::int64_t along = a.inner == 1 ? a.channels : a.inner;
  if (along % wide == 0 && aligned16(a.x) && aligned16(a.y)) p.vec = static_cast<int>(wide);
  if (training && plan_one_launch(a, p)) return p;
  // About four blocks per multiprocessor. For the channels-last statistics pass alone, one wave
  // (two 256-thread blocks per multiprocessor, for their registers) reads faster: at [16384, 4096]
  // float16 on the H200, 16 splits read at 84% of the copy rate, 33 at 72%. But the whole training
  // op then took 0.132 ms instead of 0.123 ms, its output pass slower after the one-wave pass.
  const std::int64_t busy = 4 * std::max(a.sm_count, 1);
  const std::int64_t blocks = a.inner == 1 ? ceil_div(a.channels / p.vec, kChannelLanes) : a.channels;
  const std::int64_t min_rows = a.inner == 1 ? 64 : ceil_div(4096, a.inner);
  // Channels-last splits are also capped at 64: more write more partial sums than they save (at
  // [16384, 4096] float16, 64 splits are 4 MiB of them).
  const std::int64_t max_splits = a.inner == 1 ? std::min<std::int64_t>(ceil_div(a.n, min_rows), 64)
                                               : ceil_div(a.n, min_rows);
  if (blocks < busy && a.n > 0) p.splits = std::clamp<std::int64_t>(ceil_div(busy, blocks), 1, max_splits);
  p.splits = std::min<std::int64_t>(p.splits, 65535);
  p.chunk = std::max<std::int64_t>(ceil_div(a.n, p.splits), 1);
  p.splits = std::max<std::int64_t>(ceil_div(a.n, p.chunk), 1);
  return p;
}

std::size_t affine_bytes(const BatchNormArgs& a) {
  return static_cast<std::size_t>(a.channels) * sizeof(ChannelAffine);
}

template <class T, int kVec, class Affine>
void apply(const BatchNormArgs& a, Affine affine, NativeStream s) {
  const auto* x = static_cast<const T*>(a.x);
  auto* y = static_cast<T*>(a.y);
  const auto rows = [](std::int64_t r) { return static_cast<unsigned>(std::clamp<std::int64_t>(r, 1, 65535)); };
  if (a.inner == 1) {
    const dim3 grid(blocks_for(a.channels / kVec, kBatchNormThreads, 1 << 16), rows(ceil_div(a.n, kRowsPerThread)));
    apply_channels_last<T, kVec><<<grid, kBatchNormThreads, 0, s>>>(x, y, a.n, a.channels, affine, kRowsPerThread);
  } else {
    const dim3 grid(blocks_for(a.inner / kVec, kBatchNormThreads, 1 << 16), rows(a.n * a.channels));
    apply_rows<T, kVec><<<grid, kBatchNormThreads, 0, s>>>(x, y, a.n * a.channels, a.channels, a.inner, affine);
  }
}

template <class T, int kVec>
void run(const BatchNormArgs& a, const BatchNormPlan& p, bool training, void* workspace, NativeStream s) {
  if (!training) {
    apply<T, kVec>(a, RunningAffine{a.weight, a.bias, a.running_mean, a.running_var, static_cast<float>(a.eps)}, s);
    return;
  }
  const auto* x = static_cast<const T*>(a.x);
  auto* affine = static_cast<ChannelAffine*>(workspace);
  auto* partial = reinterpret_cast<Moments*>(static_cast<char*>(workspace) + affine_bytes(a));
  const TrainingOutputs outputs{a.weight,     a.bias,       a.running_mean, a.running_var,
                                a.batch_mean, a.batch_rstd, a.eps,          a.momentum};
  if constexpr (kVec * sizeof(T) == 16) {
    if (p.one_launch) {
      const dim3 grid(blocks_for(a.channels / kVec, kChannelLanes), static_cast<unsigned>(p.splits));
      launch_cooperative(train_channels_last_resident<T, kVec>, grid, dim3(kChannelLanes, kRowLanes),
                         kept_bytes(a.single_launch.kept_rows), s, x, static_cast<T*>(a.y), partial, affine, a.n,
                         a.channels, outputs, a.single_launch.kept_rows);
      return;
    }
  }
  if (a.inner == 1) {
    const dim3 grid(blocks_for(a.channels / kVec, kChannelLanes), static_cast<unsigned>(p.splits));
    moments_channels_last<T, kVec>
        <<<grid, dim3(kChannelLanes, kRowLanes), 0, s>>>(x, partial, a.n, a.channels);
  } else {
    const dim3 grid(blocks_for(a.channels, 1), static_cast<unsigned>(p.splits));
    moments_rows<T, kVec><<<grid, kBatchNormThreads, 0, s>>>(x, partial, a.n, a.channels, a.inner, p.chunk);
  }
  finish_training<<<blocks_for(a.channels, kChannelLanes), dim3(kChannelLanes, kRowLanes), 0, s>>>(
      partial, p.splits, a.channels, static_cast<double>(a.n) * static_cast<double>(a.inner), outputs, affine);
  apply<T, kVec>(a, TrainedAffine{affine}, s);
}

}  // namespace

BatchNormSingleLaunch batch_norm_single_launch(DType dtype, int kept_rows) {
  if (kept_rows < 0) throw ValueError("batch_norm: a single launch keeping " + std::to_string(kept_rows) + " rows");
  BatchNormSingleLaunch form;
  with_float_type(dtype, "batch_norm", [&](auto tag) {
    using T = decltype(tag);
    const auto kernel = train_channels_last_resident<T, kVec16<T>>;
    const auto blocks_keeping = [&](int rows) {
      return allow_dynamic_shared_memory(kernel, kept_bytes(rows))
                 ? resident_blocks_per_multiprocessor(kernel, kLaneThreads, kept_bytes(rows))
                 : 0;
    };
    const int plain = blocks_keeping(0);
    const int keeping = kept_rows > 0 ? blocks_keeping(kept_rows) : 0;
    form = keeping > 0 && keeping >= plain ? BatchNormSingleLaunch{keeping, kept_rows} : BatchNormSingleLaunch{plain, 0};
  });
  return form;
}

std::size_t batch_norm_training_workspace_bytes(const BatchNormArgs& args) {
  return affine_bytes(args) +
         static_cast<std::size_t>(plan_batch_norm(args, true).splits * args.channels) * sizeof(Moments);
}

void launch_batch_norm(const BatchNormArgs& a, bool training, void* workspace, void* stream) {
  if (a.channels == 0) return;
  if (a.n * a.inner == 0 && !training) return;
  const BatchNormPlan p = plan_batch_norm(a, training);
  with_float_type(a.dtype, "batch_norm", [&](auto tag) {
    using T = decltype(tag);
    if (p.vec == kVec16<T>) {
      run<T, kVec16<T>>(a, p, training, workspace, native_stream(stream));
    } else {
      run<T, 1>(a, p, training, workspace, native_stream(stream));
    }
  });
  check_launch("batch_norm");
}

}  // namespace tileops::gpu

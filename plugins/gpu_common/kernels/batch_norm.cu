// Batch normalization of x viewed as [n, channels, inner]. Training: per-channel sums and sums
// of squares in double (split across blocks where the channels alone would leave the device
// idle, combined in split order), then one thread per channel turns them into the batch
// statistics, the running-statistics update and the channel's affine map. Inference builds
// the affine map from the running statistics. Either way a last pass writes
// y = (x - mean) * scale + bias.
#include "../host/launchers.hpp"
#include "launch.cuh"

namespace tileops::gpu {
namespace {

constexpr int kBatchNormThreads = 256;

// Batch rows a thread of the channels-last kernels loads before it uses any: loads in flight.
// At [16384, 4096] float16 on the H200, 8 rows beat 4 by 4% in the output pass and 5% in the
// statistics pass.
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
  __device__ Moments plain() const {
    const double n = static_cast<double>(count), s = shift;
    return {sum + n * s, squares + 2.0 * s * sum + n * s * s};
  }
};

// x is [n, channels] (inner == 1): one thread per group of kVec adjacent channels walks its
// chunk of the batch, kUnroll rows at a time.
template <class T, int kVec, int kUnroll = kRowsInFlight>
__global__ void moments_channels_last(const T* __restrict__ x, Moments* __restrict__ partial, std::int64_t n,
                                      std::int64_t channels, std::int64_t chunk) {
  const std::int64_t groups = channels / kVec;
  const std::int64_t begin = blockIdx.y * chunk;
  const std::int64_t end = begin + chunk < n ? begin + chunk : n;
  for (std::int64_t g = global_thread(); g < groups; g += grid_threads()) {
    // The chunk's first row is every channel's shift (the plan gives every chunk a row).
    const Pack<T, kVec> first = load_pack<kVec>(x + begin * channels + g * kVec);
    float shift[kVec], sum[kVec], squares[kVec];
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      shift[k] = to_float(first.v[k]);
      sum[k] = squares[k] = 0.0f;
    }
    for (std::int64_t r = begin + 1; r < end; r += kUnroll) {
      Pack<T, kVec> in[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        if (r + u < end) in[u] = load_pack<kVec>(x + (r + u) * channels + g * kVec);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        if (r + u < end) {
#pragma unroll
          for (int k = 0; k < kVec; ++k) {
            const float d = to_float(in[u].v[k]) - shift[k];
            sum[k] += d;
            squares[k] += d * d;
          }
        }
      }
    }
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      const ShiftedMoments m{shift[k], sum[k], squares[k], end - begin};
      partial[blockIdx.y * channels + g * kVec + k] = m.plain();
    }
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

__global__ void finish_training(const Moments* __restrict__ partial, std::int64_t splits, std::int64_t channels,
                                double count, const float* __restrict__ weight, const float* __restrict__ bias,
                                float* __restrict__ running_mean, float* __restrict__ running_var,
                                float* __restrict__ batch_mean, float* __restrict__ batch_rstd, double eps,
                                double momentum, ChannelAffine* __restrict__ affine) {
  for (std::int64_t c = global_thread(); c < channels; c += grid_threads()) {
    double sum = 0.0, squares = 0.0;
    for (std::int64_t s = 0; s < splits; ++s) {
      sum += partial[s * channels + c].sum;
      squares += partial[s * channels + c].squares;
    }
    const double mean = sum / count;
    const double var = fmax(squares / count - mean * mean, 0.0);
    const double rstd = 1.0 / sqrt(var + eps);
    running_mean[c] = static_cast<float>((1.0 - momentum) * running_mean[c] + momentum * mean);
    running_var[c] = static_cast<float>((1.0 - momentum) * running_var[c] + momentum * var * count / (count - 1.0));
    batch_mean[c] = static_cast<float>(mean);
    batch_rstd[c] = static_cast<float>(rstd);
    const double scale = weight != nullptr ? rstd * weight[c] : rstd;
    affine[c] =
        ChannelAffine{static_cast<float>(mean), static_cast<float>(scale), bias != nullptr ? bias[c] : 0.0f, 0.0f};
  }
}

__global__ void affine_from_running(std::int64_t channels, const float* __restrict__ weight,
                                    const float* __restrict__ bias, const float* __restrict__ running_mean,
                                    const float* __restrict__ running_var, double eps,
                                    ChannelAffine* __restrict__ affine) {
  for (std::int64_t c = global_thread(); c < channels; c += grid_threads()) {
    const double rstd = 1.0 / sqrt(static_cast<double>(running_var[c]) + eps);
    const double scale = weight != nullptr ? rstd * weight[c] : rstd;
    affine[c] = ChannelAffine{running_mean[c], static_cast<float>(scale), bias != nullptr ? bias[c] : 0.0f, 0.0f};
  }
}

template <class T>
__device__ __forceinline__ T apply(T v, const ChannelAffine& a) {
  return store_as<T>((to_float(v) - a.mean) * a.scale + a.bias);
}

// Batch rows one thread of apply_channels_last writes for its channels: at [16384, 4096] float16
// on the H200, 16 ran 6% faster than 64 (more blocks to spread) and 256 was 15% slower.
constexpr int kRowsPerThread = 16;

// inner == 1: x walks packs of channels, whose affine maps a thread keeps in registers for
// rows_per_thread rows, loading kUnroll rows before it writes any; blockIdx.y walks tiles of
// such rows.
template <class T, int kVec, int kUnroll = kRowsInFlight>
__global__ void apply_channels_last(const T* __restrict__ x, T* __restrict__ y, std::int64_t n, std::int64_t channels,
                                    const ChannelAffine* __restrict__ affine, std::int64_t rows_per_thread) {
  const std::int64_t packs = channels / kVec;
  for (std::int64_t p = global_thread(); p < packs; p += grid_threads()) {
    ChannelAffine a[kVec];
#pragma unroll
    for (int k = 0; k < kVec; ++k) a[k] = affine[p * kVec + k];
    for (std::int64_t r0 = blockIdx.y * rows_per_thread; r0 < n; r0 += gridDim.y * rows_per_thread) {
      const std::int64_t r1 = r0 + rows_per_thread < n ? r0 + rows_per_thread : n;
      for (std::int64_t r = r0; r < r1; r += kUnroll) {
        Pack<T, kVec> in[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          if (r + u < r1) in[u] = load_pack<kVec>(x + (r + u) * channels + p * kVec);
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          if (r + u >= r1) break;
          Pack<T, kVec> out;
#pragma unroll
          for (int k = 0; k < kVec; ++k) out.v[k] = apply(in[u].v[k], a[k]);
          store_pack(y + (r + u) * channels + p * kVec, out);
        }
      }
    }
  }
}

// inner > 1: blockIdx.y walks the (batch, channel) runs, x walks packs of a run.
template <class T, int kVec>
__global__ void apply_rows(const T* __restrict__ x, T* __restrict__ y, std::int64_t runs, std::int64_t channels,
                           std::int64_t inner, const ChannelAffine* __restrict__ affine) {
  const std::int64_t packs = inner / kVec;
  for (std::int64_t run = blockIdx.y; run < runs; run += gridDim.y) {
    const ChannelAffine a = affine[run % channels];
    for (std::int64_t p = global_thread(); p < packs; p += grid_threads()) {
      const Pack<T, kVec> in = load_pack<kVec>(x + run * inner + p * kVec);
      Pack<T, kVec> out;
#pragma unroll
      for (int k = 0; k < kVec; ++k) out.v[k] = apply(in.v[k], a);
      store_pack(y + run * inner + p * kVec, out);
    }
  }
}

struct BatchNormPlan {
  int vec = 1;
  std::int64_t splits = 1;
  std::int64_t chunk = 0;  // batch rows per split
};

BatchNormPlan plan_batch_norm(const BatchNormArgs& a) {
  BatchNormPlan p;
  const std::int64_t wide = static_cast<std::int64_t>(16 / dtype_size(a.dtype));
  const std::int64_t along = a.inner == 1 ? a.channels : a.inner;
  if (along % wide == 0 && aligned16(a.x) && aligned16(a.y)) p.vec = static_cast<int>(wide);
  const std::int64_t busy = 4 * std::max(a.sm_count, 1);
  const std::int64_t blocks = a.inner == 1 ? ceil_div(a.channels / p.vec, kBatchNormThreads) : a.channels;
  const std::int64_t min_rows = a.inner == 1 ? 64 : ceil_div(4096, a.inner);
  // Channels-last splits are also capped at 64: more write more partial sums than they save. At
  // [16384, 4096] float16 on the H200, 64 splits of 256 rows (4 MiB of partial sums) read at 68% of
  // the copy rate, 256 splits of 64 rows (16 MiB) at 50%.
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

template <class T, int kVec>
void run(const BatchNormArgs& a, const BatchNormPlan& p, bool training, void* workspace, NativeStream s) {
  const auto* x = static_cast<const T*>(a.x);
  auto* y = static_cast<T*>(a.y);
  auto* affine = static_cast<ChannelAffine*>(workspace);
  const unsigned channel_blocks = blocks_for(a.channels, kBatchNormThreads);
  if (training) {
    auto* partial = reinterpret_cast<Moments*>(static_cast<char*>(workspace) + affine_bytes(a));
    if (a.inner == 1) {
      const dim3 grid(blocks_for(a.channels / kVec, kBatchNormThreads), static_cast<unsigned>(p.splits));
      moments_channels_last<T, kVec><<<grid, kBatchNormThreads, 0, s>>>(x, partial, a.n, a.channels, p.chunk);
    } else {
      const dim3 grid(blocks_for(a.channels, 1), static_cast<unsigned>(p.splits));
      moments_rows<T, kVec><<<grid, kBatchNormThreads, 0, s>>>(x, partial, a.n, a.channels, a.inner, p.chunk);
    }
    finish_training<<<channel_blocks, kBatchNormThreads, 0, s>>>(
        partial, p.splits, a.channels, static_cast<double>(a.n) * static_cast<double>(a.inner), a.weight, a.bias,
        a.running_mean, a.running_var, a.batch_mean, a.batch_rstd, a.eps, a.momentum, affine);
  } else {
    affine_from_running<<<channel_blocks, kBatchNormThreads, 0, s>>>(a.channels, a.weight, a.bias, a.running_mean,
                                                                     a.running_var, a.eps, affine);
  }
  const auto rows = [](std::int64_t r) { return static_cast<unsigned>(std::clamp<std::int64_t>(r, 1, 65535)); };
  if (a.inner == 1) {
    const dim3 grid(blocks_for(a.channels / kVec, kBatchNormThreads, 1 << 16), rows(ceil_div(a.n, kRowsPerThread)));
    apply_channels_last<T, kVec><<<grid, kBatchNormThreads, 0, s>>>(x, y, a.n, a.channels, affine, kRowsPerThread);
  } else {
    const dim3 grid(blocks_for(a.inner / kVec, kBatchNormThreads, 1 << 16), rows(a.n * a.channels));
    apply_rows<T, kVec><<<grid, kBatchNormThreads, 0, s>>>(x, y, a.n * a.channels, a.channels, a.inner, affine);
  }
}

}  // namespace

std::size_t batch_norm_workspace_bytes(const BatchNormArgs& args, bool training) {
  std::size_t bytes = affine_bytes(args);
  if (training) bytes += static_cast<std::size_t>(plan_batch_norm(args).splits * args.channels) * sizeof(Moments);
  return bytes;
}

void launch_batch_norm(const BatchNormArgs& a, bool training, void* workspace, void* stream) {
  if (a.channels == 0) return;
  if (a.n * a.inner == 0 && !training) return;
  const BatchNormPlan p = plan_batch_norm(a);
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

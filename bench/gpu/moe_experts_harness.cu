// A standalone check and timing of the routed experts (plugins/gpu_common/kernels/moe.cu,
// moe_mma.cu and moe_wgmma.cu) on one GPU: the GEMV path against the tensor-core paths, mma.sync
// and, on compute capability 9.0, wgmma (forced through moe.cu's internal run_experts, which this
// file compiles in), all against a float64 reference on small odd shapes, then the time of each
// path on Mixtral-8x7B and DeepSeek-V2-Lite prefill shapes and a sweep of token counts for the
// dispatch rule, each mma.sync product's time alone at both pipeline depths, both wgmma
// products' time, and the mma.sync ceiling of the device. Built as
// bench/gpu/moe_experts_harness by the CUDA build, or alone from the repository root (no
// library needed):
//   nvcc -std=c++20 -gencode=arch=compute_90a,code=sm_90a -DTILEOPS_CUDA_SM90A=1 -O2 -I core/include
//        -I <build>/core/include -I plugins/gpu_common/host bench/gpu/moe_experts_harness.cu -o moe_harness
// and run `moe_harness [small|large]` (default: everything).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../../plugins/gpu_common/kernels/moe.cu"
#include "../../plugins/gpu_common/kernels/moe_mma.cu"
#include "../../plugins/gpu_common/kernels/moe_wgmma.cu"

#include "harness_library.hpp"
#include "harness_timing.hpp"

namespace {

using tileops::DType;
using tileops::gpu::bf16;
using tileops::gpu::f16;
using tileops::gpu::MoeExpertsArgs;

using harness::cuda;

float bf16_to_float(std::uint16_t b) {
  std::uint32_t u = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
float half_to_float(std::uint16_t h) {
  __half_raw r;
  r.x = h;
  return __half2float(__half(r));
}

float to_f(DType t, std::uint16_t v) { return t == DType::bfloat16 ? bf16_to_float(v) : half_to_float(v); }

// Fills n 16-bit elements with uniform values in [-scale, scale), by a hash of the index.
__global__ void fill_random(std::uint16_t* p, std::int64_t n, float scale, std::uint32_t seed, bool bf) {
  for (std::int64_t i = tileops::gpu::global_thread(); i < n; i += tileops::gpu::grid_threads()) {
    std::uint32_t h = static_cast<std::uint32_t>(i) * 2654435761u ^ seed;
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    const float v = (static_cast<float>(h >> 8) * (1.0f / 16777216.0f) * 2.0f - 1.0f) * scale;
    p[i] = bf ? tileops::gpu::to_bf16(v).bits : tileops::gpu::to_f16(v).bits;
  }
}

struct Problem {
  DType dtype;
  std::int64_t rows, top_k, experts, hidden, inter;
  bool gelu;
};

struct Buffers {
  std::uint16_t *x, *w_gate_up, *w_down, *y;
  float* weights;
  std::int32_t* ids;
  void* workspace;
  tileops::gpu::FaultRecord* faults;
};

std::int64_t workspace_bytes(const Problem& p) {
  return tileops::gpu::moe_experts_workspace_bytes(p.rows * p.top_k, p.experts, p.hidden, p.inter);
}

Buffers allocate(const Problem& p) {
  Buffers b{};
  const std::int64_t routes = p.rows * p.top_k;
  cuda(cudaMalloc(&b.x, p.rows * p.hidden * 2), "x");
  cuda(cudaMalloc(&b.w_gate_up, p.experts * 2 * p.inter * p.hidden * 2), "w_gate_up");
  cuda(cudaMalloc(&b.w_down, p.experts * p.hidden * p.inter * 2), "w_down");
  cuda(cudaMalloc(&b.y, p.rows * p.hidden * 2), "y");
  cuda(cudaMalloc(&b.weights, routes * 4), "weights");
  cuda(cudaMalloc(&b.ids, routes * 4), "ids");
  cuda(cudaMalloc(&b.workspace, workspace_bytes(p)), "workspace");
  cuda(cudaMalloc(&b.faults, sizeof(tileops::gpu::FaultRecord)), "faults");
  cuda(cudaMemset(b.faults, 0, sizeof(tileops::gpu::FaultRecord)), "faults");
  const bool bf = p.dtype == DType::bfloat16;
  fill_random<<<1024, 256>>>(b.x, p.rows * p.hidden, 1.0f, 1, bf);
  fill_random<<<4096, 256>>>(b.w_gate_up, p.experts * 2 * p.inter * p.hidden, 1.0f / std::sqrt(float(p.hidden)), 2, bf);
  fill_random<<<4096, 256>>>(b.w_down, p.experts * p.hidden * p.inter, 1.0f / std::sqrt(float(p.inter)), 3, bf);
  cuda(cudaGetLastError(), "fill");
  return b;
}

void release(Buffers& b) {
  for (void* q : {static_cast<void*>(b.x), static_cast<void*>(b.w_gate_up), static_cast<void*>(b.w_down),
                  static_cast<void*>(b.y), static_cast<void*>(b.weights), static_cast<void*>(b.ids), b.workspace,
                  static_cast<void*>(b.faults)}) {
    cudaFree(q);
  }
}

// Random routing: top_k picks per row, distinct experts, weights summing to one.
void route_randomly(const Problem& p, const Buffers& b, std::mt19937& rng) {
  std::vector<std::int32_t> ids(p.rows * p.top_k);
  std::vector<float> weights(ids.size());
  std::vector<std::int32_t> order(p.experts);
  for (std::int64_t m = 0; m < p.rows; ++m) {
    for (std::int64_t e = 0; e < p.experts; ++e) order[e] = static_cast<std::int32_t>(e);
    float sum = 0;
    for (std::int64_t k = 0; k < p.top_k; ++k) {
      std::swap(order[k], order[k + rng() % (p.experts - k)]);
      ids[m * p.top_k + k] = order[k];
      weights[m * p.top_k + k] = 0.1f + static_cast<float>(rng() % 1000) / 1000.0f;
      sum += weights[m * p.top_k + k];
    }
    for (std::int64_t k = 0; k < p.top_k; ++k) weights[m * p.top_k + k] /= sum;
  }
  cuda(cudaMemcpy(b.ids, ids.data(), ids.size() * 4, cudaMemcpyHostToDevice), "ids");
  cuda(cudaMemcpy(b.weights, weights.data(), weights.size() * 4, cudaMemcpyHostToDevice), "weights");
}

// The products' paths: GEMVs, GEMMs on mma.sync, GEMMs on wgmma (compute capability 9.0).
enum class Path { gemv, mma, wgmma };

MoeExpertsArgs args_of(const Problem& p, const Buffers& b, Path path = Path::mma) {
  return {b.x,     b.weights, b.ids,     b.w_gate_up, b.w_down, b.y,        b.workspace,
          p.dtype, p.rows,    p.top_k,   p.experts,   p.hidden, p.inter,    p.gelu,
          b.faults, tileops::gpu::kWarpSize, path == Path::wgmma};
}

void run(const Problem& p, const Buffers& b, Path path) {
  tileops::gpu::run_experts(args_of(p, b, path), nullptr, path != Path::gemv);
  cuda(cudaGetLastError(), "launch");
}

// Whether this device runs the wgmma GEMMs (else the wgmma path runs mma.sync and is skipped).
bool has_wgmma() { return tileops::gpu::moe_wgmma_serves(); }

// The float32 expert outputs per route (out rows placed by slot_of), -inf for refused routes,
// and y, after one run of the path.
struct Result {
  std::vector<float> out;  // [routes, hidden]
  std::vector<float> y;    // [rows, hidden]
};

Result run_and_read(const Problem& p, const Buffers& b, Path path) {
  const std::int64_t routes = p.rows * p.top_k;
  cuda(cudaMemset(b.workspace, 0xff, workspace_bytes(p)), "poison");  // NaN floats
  cuda(cudaMemset(b.y, 0xff, p.rows * p.hidden * 2), "poison");
  run(p, b, path);
  cuda(cudaDeviceSynchronize(), "run");
  const auto w = tileops::gpu::carve(b.workspace, routes, p.experts, p.hidden, p.inter);
  std::vector<std::int32_t> slot_of(routes);
  std::vector<float> out_by_slot(routes * p.hidden);
  cuda(cudaMemcpy(slot_of.data(), w.slot_of, routes * 4, cudaMemcpyDeviceToHost), "slot_of");
  cuda(cudaMemcpy(out_by_slot.data(), w.out, out_by_slot.size() * 4, cudaMemcpyDeviceToHost), "out");
  Result r{std::vector<float>(routes * p.hidden, -INFINITY), std::vector<float>(p.rows * p.hidden)};
  for (std::int64_t q = 0; q < routes; ++q) {
    if (slot_of[q] < 0) continue;
    std::copy_n(out_by_slot.begin() + slot_of[q] * p.hidden, p.hidden, r.out.begin() + q * p.hidden);
  }
  std::vector<std::uint16_t> y(p.rows * p.hidden);
  cuda(cudaMemcpy(y.data(), b.y, y.size() * 2, cudaMemcpyDeviceToHost), "y");
  for (std::size_t i = 0; i < y.size(); ++i) r.y[i] = to_f(p.dtype, y[i]);
  return r;
}

// The largest per-element |got - want| / (|want| + floor), floor a thousandth of want's rms
// (so that elements near zero do not dominate), and the norm-wise ||got - want|| / ||want||;
// NaN or a mismatch in which routes exist counts as infinite.
struct Error {
  double max_rel, norm_rel;
};
Error compare(const std::vector<float>& got, const std::vector<float>& want) {
  double ss = 0, dd = 0;
  std::size_t n = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (std::isfinite(want[i])) {
      ss += double(want[i]) * want[i];
      ++n;
    }
  }
  const double floor = 1e-3 * std::sqrt(ss / std::max<std::size_t>(n, 1));
  double worst = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (std::isinf(want[i]) && want[i] < 0) {
      if (!(std::isinf(got[i]) && got[i] < 0)) worst = INFINITY;
      continue;
    }
    const double d = double(got[i]) - want[i];
    if (!std::isfinite(got[i])) worst = INFINITY;
    worst = std::max(worst, std::abs(d) / (std::abs(double(want[i])) + floor));
    dd += d * d;
  }
  return {worst, std::sqrt(dd / std::max(ss, 1e-300))};
}

// The float64 reference of the per-route outputs and y from the device's inputs.
Result reference(const Problem& p, const Buffers& b) {
  const std::int64_t routes = p.rows * p.top_k, H = p.hidden, I = p.inter;
  std::vector<std::uint16_t> x(p.rows * H), wgu(p.experts * 2 * I * H), wd(p.experts * H * I);
  std::vector<std::int32_t> ids(routes);
  std::vector<float> weights(routes);
  cuda(cudaMemcpy(x.data(), b.x, x.size() * 2, cudaMemcpyDeviceToHost), "x");
  cuda(cudaMemcpy(wgu.data(), b.w_gate_up, wgu.size() * 2, cudaMemcpyDeviceToHost), "w_gate_up");
  cuda(cudaMemcpy(wd.data(), b.w_down, wd.size() * 2, cudaMemcpyDeviceToHost), "w_down");
  cuda(cudaMemcpy(ids.data(), b.ids, routes * 4, cudaMemcpyDeviceToHost), "ids");
  cuda(cudaMemcpy(weights.data(), b.weights, routes * 4, cudaMemcpyDeviceToHost), "weights");
  Result r{std::vector<float>(routes * H, -INFINITY), std::vector<float>(p.rows * H)};
  std::vector<double> act(I), y(H);
  for (std::int64_t m = 0; m < p.rows; ++m) {
    std::fill(y.begin(), y.end(), 0.0);
    for (std::int64_t k = 0; k < p.top_k; ++k) {
      const std::int64_t q = m * p.top_k + k, e = ids[q];
      if (e < 0 || e >= p.experts) continue;
      for (std::int64_t i = 0; i < I; ++i) {
        double g = 0, u = 0;
        for (std::int64_t h = 0; h < H; ++h) {
          const double xv = to_f(p.dtype, x[m * H + h]);
          g += xv * to_f(p.dtype, wgu[(e * 2 * I + i) * H + h]);
          u += xv * to_f(p.dtype, wgu[(e * 2 * I + I + i) * H + h]);
        }
        const double a = p.gelu ? 0.5 * g * std::erfc(-g / std::sqrt(2.0)) : g / (1.0 + std::exp(-g));
        act[i] = a * u;
      }
      for (std::int64_t c = 0; c < H; ++c) {
        double o = 0;
        for (std::int64_t i = 0; i < I; ++i) o += to_f(p.dtype, wd[(e * H + c) * I + i]) * act[i];
        r.out[q * H + c] = static_cast<float>(o);
        y[c] += weights[q] * o;
      }
    }
    for (std::int64_t c = 0; c < H; ++c) r.y[m * H + c] = static_cast<float>(y[c]);
  }
  return r;
}

// Small odd groups: sizes `groups` (expert e gets groups[e] routes), plus `invalid` routes with
// an out-of-range id, shuffled over rows of top_k.
bool check_small(const Problem& p0, const std::vector<int>& groups, int invalid, std::mt19937& rng) {
  std::vector<std::int32_t> ids;
  for (std::size_t e = 0; e < groups.size(); ++e) ids.insert(ids.end(), groups[e], static_cast<std::int32_t>(e));
  ids.insert(ids.end(), invalid, static_cast<std::int32_t>(groups.size() + 3));
  while (ids.size() % p0.top_k != 0) ids.push_back(0);
  std::shuffle(ids.begin(), ids.end(), rng);
  Problem p = p0;
  p.rows = static_cast<std::int64_t>(ids.size()) / p.top_k;
  p.experts = static_cast<std::int64_t>(groups.size());
  Buffers b = allocate(p);
  std::vector<float> weights(ids.size());
  for (float& w : weights) w = 0.1f + static_cast<float>(rng() % 1000) / 1000.0f;
  cuda(cudaMemcpy(b.ids, ids.data(), ids.size() * 4, cudaMemcpyHostToDevice), "ids");
  cuda(cudaMemcpy(b.weights, weights.data(), weights.size() * 4, cudaMemcpyHostToDevice), "weights");
  const Result gemv = run_and_read(p, b, Path::gemv);
  const Result tc = run_and_read(p, b, Path::mma);
  const Result wg = has_wgmma() ? run_and_read(p, b, Path::wgmma) : tc;
  tileops::gpu::FaultRecord fault{};
  cuda(cudaMemcpy(&fault, b.faults, sizeof fault, cudaMemcpyDeviceToHost), "faults");
  const Result ref = reference(p, b);
  const Error tc_ref = compare(tc.out, ref.out), gemv_ref = compare(gemv.out, ref.out);
  const Error tc_gemv = compare(tc.out, gemv.out), y_ref = compare(tc.y, ref.y);
  const Error wg_ref = compare(wg.out, ref.out), wg_y_ref = compare(wg.y, ref.y);
  std::printf(
      "small %s%s E=%lld k=%lld H=%lld I=%lld routes=%zu invalid=%d fault=%d | out: tc/ref max %.2e norm %.2e, "
      "gemv/ref max %.2e norm %.2e, tc/gemv max %.2e | y tc/ref max %.2e norm %.2e | wgmma%s out/ref max %.2e "
      "norm %.2e, y/ref norm %.2e\n",
      p.dtype == DType::bfloat16 ? "bf16" : "f16", p.gelu ? " gelu" : "", (long long)p.experts, (long long)p.top_k,
      (long long)p.hidden, (long long)p.inter, ids.size(), invalid, fault.kind, tc_ref.max_rel, tc_ref.norm_rel,
      gemv_ref.max_rel, gemv_ref.norm_rel, tc_gemv.max_rel, y_ref.max_rel, y_ref.norm_rel,
      has_wgmma() ? "" : " (not served: mma.sync again)", wg_ref.max_rel, wg_ref.norm_rel, wg_y_ref.norm_rel);
  release(b);
  const bool fault_ok = invalid == 0 || fault.kind == static_cast<int>(tileops::gpu::FaultKind::expert_id);
  // Per element within 1% of the reference (elements near zero measured against a thousandth of
  // the rms), norm-wise float32-close; y is rounded to T.
  return tc_ref.max_rel < 1e-2 && tc_ref.norm_rel < 1e-4 && gemv_ref.max_rel < 1e-2 && y_ref.norm_rel < 1e-2 &&
         wg_ref.max_rel < 1e-2 && wg_ref.norm_rel < 1e-4 && wg_y_ref.norm_rel < 1e-2 && fault_ok;
}

// The median time of `reps` runs after `warmup` runs, in milliseconds.
double median_ms(const Problem& p, const Buffers& b, Path path, int warmup, int reps) {
  for (int i = 0; i < warmup; ++i) run(p, b, path);
  std::vector<double> times;
  cudaEvent_t start, stop;
  cuda(cudaEventCreate(&start), "event");
  cuda(cudaEventCreate(&stop), "event");
  for (int i = 0; i < reps; ++i) {
    cuda(cudaEventRecord(start), "record");
    run(p, b, path);
    cuda(cudaEventRecord(stop), "record");
    cuda(cudaEventSynchronize(stop), "sync");
    float ms = 0;
    cuda(cudaEventElapsedTime(&ms, start, stop), "elapsed");
    times.push_back(ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// The time of `reps` launches of `launch` (after two more), median, in milliseconds.
template <class F>
double median_launch_ms(F&& launch, int reps) {
  launch();
  launch();
  std::vector<double> times;
  cudaEvent_t start, stop;
  cuda(cudaEventCreate(&start), "event");
  cuda(cudaEventCreate(&stop), "event");
  for (int i = 0; i < reps; ++i) {
    cuda(cudaEventRecord(start), "record");
    launch();
    cuda(cudaEventRecord(stop), "record");
    cuda(cudaEventSynchronize(stop), "sync");
    float ms = 0;
    cuda(cudaEventElapsedTime(&ms, start, stop), "elapsed");
    times.push_back(ms);
  }
  cuda(cudaGetLastError(), "launch");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// The ceiling of mma.sync m16n8k16 bf16 on this device: every warp issues independent MMAs
// from registers, no memory traffic.
__global__ void mma_peak_kernel(float* sink, int iterations) {
  const std::uint32_t one = 0x3f803f80u;  // bf16 1.0 pairs
  std::uint32_t a[4] = {one, one, one, one ^ threadIdx.x};
  float c[8][4] = {};
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int j = 0; j < 8; ++j) tileops::gpu::mma<bf16>(c[j], a, one, one);
  }
  float sum = 0;
  for (auto& r : c) sum += r[0] + r[1] + r[2] + r[3];
  if (sum == 12345.0f) *sink = sum;
}

void mma_peak(const cudaDeviceProp& prop) {
  float* sink;
  cuda(cudaMalloc(&sink, 4), "sink");
  const int blocks = prop.multiProcessorCount * 4, iterations = 4096;
  const double ms = median_launch_ms([&] { mma_peak_kernel<<<blocks, 256>>>(sink, iterations); }, 5);
  const double flops = double(blocks) * 8 * iterations * 8 * 16 * 8 * 16 * 2;
  std::printf("mma.sync m16n8k16 bf16 ceiling: %.1f TFLOP/s\n", flops / (ms * 1e-3) / 1e12);
  cudaFree(sink);
}

double tflops(const Problem& p, double ms) {
  return static_cast<double>(p.rows * p.top_k) * 6.0 * p.inter * p.hidden / (ms * 1e-3) / 1e12;
}

// The large shape: the paths checked against each other, then timed; then the token sweep
// on the same weights.
void large(const char* name, Problem p, std::mt19937& rng, const std::vector<std::int64_t>& sweep) {
  Buffers b = allocate(p);
  route_randomly(p, b, rng);
  const bool wgmma = has_wgmma();
  const Result gemv = run_and_read(p, b, Path::gemv);
  const Result tc = run_and_read(p, b, Path::mma);
  const Result wg = wgmma ? run_and_read(p, b, Path::wgmma) : tc;
  const Error e_out = compare(tc.out, gemv.out), e_y = compare(tc.y, gemv.y);
  const Error w_out = compare(wg.out, gemv.out), w_y = compare(wg.y, gemv.y);
  const double t_tc = median_ms(p, b, Path::mma, 3, 20);
  const double t_wg = wgmma ? median_ms(p, b, Path::wgmma, 3, 20) : 0.0;
  const double t_gemv = median_ms(p, b, Path::gemv, 1, 5);
  std::printf("%s rows=%lld: mma.sync %.3f ms %.1f TFLOP/s | wgmma %.3f ms %.1f TFLOP/s | gemv %.3f ms %.1f TFLOP/s | "
              "mma/gemv out max %.2e norm %.2e, y max %.2e norm %.2e | wgmma/gemv out max %.2e norm %.2e, y max "
              "%.2e norm %.2e\n",
              name, (long long)p.rows, t_tc, tflops(p, t_tc), t_wg, wgmma ? tflops(p, t_wg) : 0.0, t_gemv,
              tflops(p, t_gemv), e_out.max_rel, e_out.norm_rel, e_y.max_rel, e_y.norm_rel, w_out.max_rel,
              w_out.norm_rel, w_y.max_rel, w_y.norm_rel);
  // Each product alone (the workspace holds the groups and act of the last run), and the
  // pipeline depths of sm_80 (3 and 2 stages) against those of sm_90 (4 and 3); then both
  // wgmma products.
  run(p, b, Path::mma);
  const MoeExpertsArgs a = args_of(p, b);
  const auto w = tileops::gpu::carve(b.workspace, p.rows * p.top_k, p.experts, p.hidden, p.inter);
  const double flops_gate = double(p.rows * p.top_k) * 4 * p.inter * p.hidden;
  const double g4 = median_launch_ms([&] { tileops::gpu::launch_gate_up_mma<bf16, 4>(a, w, nullptr); }, 20);
  const double g3 = median_launch_ms([&] { tileops::gpu::launch_gate_up_mma<bf16, 3>(a, w, nullptr); }, 20);
  const double d3 = median_launch_ms([&] { tileops::gpu::launch_down_mma<bf16, 3>(a, w, nullptr); }, 20);
  const double d2 = median_launch_ms([&] { tileops::gpu::launch_down_mma<bf16, 2>(a, w, nullptr); }, 20);
  std::printf("  %s gate/up: 4 stages %.3f ms (%.1f TFLOP/s), 3 stages %.3f ms | down: 3 stages %.3f ms (%.1f "
              "TFLOP/s useful), 2 stages %.3f ms\n",
              name, g4, flops_gate / (g4 * 1e-3) / 1e12, g3, d3, flops_gate / 2 / (d3 * 1e-3) / 1e12, d2);
  if (wgmma) {
    const double both = median_launch_ms([&] { tileops::gpu::launch_moe_wgmma(a, w, nullptr); }, 20);
    std::printf("  %s wgmma gate/up and down: %.3f ms (%.1f TFLOP/s useful) against mma.sync %.3f ms\n", name, both,
                1.5 * flops_gate / (both * 1e-3) / 1e12, g4 + d3);
  }
  const std::int64_t rows = p.rows;
  for (std::int64_t r : sweep) {
    p.rows = r;
    route_randomly(p, b, rng);
    const double a = median_ms(p, b, Path::mma, 2, 10), g = median_ms(p, b, Path::gemv, 2, 10);
    const double h = wgmma ? median_ms(p, b, Path::wgmma, 2, 10) : 0.0;
    const bool rule = tileops::gpu::moe_mma_shapes(args_of(p, b), r * p.top_k);
    std::printf("  sweep %s rows=%lld routes/expert=%.1f: mma.sync %.3f ms, wgmma %.3f ms, gemv %.3f ms, rule takes %s\n",
                name, (long long)r, double(r * p.top_k) / p.experts, a, h, g, rule ? "tensor cores" : "gemv");
  }
  p.rows = rows;
  release(b);
}

}  // namespace

// Arguments: "small" (the checks only), "large" (the large shapes without the sweep), none:
// everything.
int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "all";
  std::mt19937 rng(12345);
  cudaDeviceProp prop{};
  cuda(cudaGetDeviceProperties(&prop, 0), "properties");
  std::printf("device %s, sm_%d%d, wgmma GEMMs %s\n", prop.name, prop.major, prop.minor,
              has_wgmma() ? "served" : "not served");
  bool ok = true;
  try {
    // Column tiles partial in both GEMMs (inter 192 of 128-column tiles, hidden 320 of 256).
    if (mode == "all") mma_peak(prop);
    ok &= check_small({DType::bfloat16, 0, 2, 0, 320, 192, false}, {1, 3, 17, 130, 0}, 1, rng);
    ok &= check_small({DType::bfloat16, 0, 2, 0, 320, 192, true}, {130, 0, 1, 257, 3}, 0, rng);
    ok &= check_small({DType::float16, 0, 3, 0, 256, 128, false}, {17, 128, 129, 0, 1, 2}, 2, rng);
    ok &= check_small({DType::bfloat16, 0, 1, 0, 64, 64, false}, {1}, 1, rng);
    std::printf("small checks %s\n", ok ? "passed" : "FAILED");
    if (mode != "small") {
      const bool sweep = mode == "all";
      large("mixtral-8x7b", {DType::bfloat16, 2048, 2, 8, 4096, 14336, false}, rng,
            sweep ? std::vector<std::int64_t>{1, 16, 32, 33, 48, 64, 128, 256, 512, 1024} : std::vector<std::int64_t>{});
      large("deepseek-v2-lite", {DType::bfloat16, 2048, 6, 64, 2048, 1408, false}, rng,
            sweep ? std::vector<std::int64_t>{1, 16, 32, 64, 86, 96, 128, 256, 512, 1024} : std::vector<std::int64_t>{});
    }
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    return 1;
  }
  return ok ? 0 : 1;
}

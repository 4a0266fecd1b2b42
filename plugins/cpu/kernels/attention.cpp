#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "cpu_kernels.hpp"
#include "kernel_table.hpp"
#include "thread_pool.hpp"
#include "tileops/half.hpp"
#include "validate.hpp"

namespace tileops::cpu {
namespace {

// Query rows (positions times the group's heads) one prefill task takes: enough to reuse each
// packed key block many times, few enough that the tasks outnumber the threads.
constexpr int64_t kRowsPerTask = 128;

// Decode keys below which a sequence is not split over threads.
constexpr int64_t kMinSplitKeys = 256;

void check_heads(const char* kernel, int64_t heads, int64_t kv_heads, int64_t head_dim) {
  if (kv_heads < 1 || heads % kv_heads != 0) {
    throw std::invalid_argument(std::string(kernel) + ": heads " + std::to_string(heads) +
                                " is not a multiple of kv_heads " + std::to_string(kv_heads));
  }
  if (head_dim < 1 || head_dim > 256) {
    throw std::invalid_argument(std::string(kernel) + ": head_dim " + std::to_string(head_dim) +
                                " is outside [1, 256]");
  }
}

// Every length within [0, capacity - added], and every block-table entry of the pages holding
// positions [first, end) of a sequence within [0, num_pages); first and end per sequence from
// `touched`.
template <class Touched>
void check_cache_indices(const char* kernel, int64_t batch, const int32_t* seqlens, int64_t added,
                         const int32_t* table, int64_t max_blocks, int64_t block_size, int64_t num_pages,
                         Touched touched) {
  const int64_t capacity = table != nullptr ? checked_product(kernel, max_blocks, block_size) : block_size;
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t len = seqlens[b];
    if (len < 0 || len + added > capacity) {
      throw std::invalid_argument(std::string(kernel) + ": sequence " + std::to_string(b) + " has length " +
                                  std::to_string(len) + (added > 0 ? " and " + std::to_string(added) + " new tokens" : "") +
                                  ", beyond the " + std::to_string(capacity) + " positions of its cache");
    }
    const auto [first, end] = touched(len);
    if (table == nullptr || first >= end) continue;
    for (int64_t page = first / block_size; page <= (end - 1) / block_size; ++page) {
      const int64_t entry = table[b * max_blocks + page];
      if (entry < 0 || entry >= num_pages) {
        throw std::invalid_argument(std::string(kernel) + ": block_table[" + std::to_string(b) + ", " +
                                    std::to_string(page) + "] = " + std::to_string(entry) + " is outside [0, " +
                                    std::to_string(num_pages) + ")");
      }
    }
  }
}

// Combines the parts of every sequence of a decode into o; part p of sequence b holds one
// attention_part_floats block per key/value head.
template <class T>
void merge_parts(const DecodeArgs& a, int64_t parts, const float* part_data, T* o) {
  const int64_t group = a.heads / a.kv_heads, dp = attention_padded_dim(a.head_dim);
  const int64_t rows_p = attention_padded_rows(group), part_size = attention_part_floats(group, a.head_dim);
  const int64_t stride = a.kv_heads * part_size;  // between the parts of one sequence
  parallel_for(a.batch * a.kv_heads, parts * part_size * 4, [&](int64_t i0, int64_t i1) {
    std::vector<float> sum(static_cast<std::size_t>(a.head_dim));
    for (int64_t item = i0; item < i1; ++item) {
      const int64_t b = item / a.kv_heads, kvh = item % a.kv_heads;
      const float* first = part_data + b * parts * stride + kvh * part_size;
      for (int64_t g = 0; g < group; ++g) {
        float m = -std::numeric_limits<float>::infinity();
        for (int64_t p = 0; p < parts; ++p) m = std::max(m, first[p * stride + rows_p * dp + g]);
        std::fill(sum.begin(), sum.end(), 0.0f);
        float l = 0;
        if (m > -std::numeric_limits<float>::infinity()) {
          for (int64_t p = 0; p < parts; ++p) {
            const float* part = first + p * stride;
            const float w = std::exp(part[rows_p * dp + g] - m);
            l += w * part[rows_p * dp + rows_p + g];
            for (int64_t c = 0; c < a.head_dim; ++c) sum[c] += w * part[g * dp + c];
          }
        }
        const float inv = l > 0 ? 1.0f / l : 0.0f;
        T* out = o + (b * a.heads + kvh * group + g) * a.head_dim;
        for (int64_t c = 0; c < a.head_dim; ++c) out[c] = T(sum[c] * inv);
      }
    }
  });
}

}  // namespace

void attention(DType dtype, const AttentionArgs& args) {
  constexpr const char* kName = "attention";
  check_float_dtype(kName, dtype);
  check_sizes(kName, {args.batch, args.q_len, args.kv_len, args.heads, args.kv_heads, args.head_dim});
  check_heads(kName, args.heads, args.kv_heads, args.head_dim);
  if (args.window_left < -1) {
    throw std::invalid_argument(std::string(kName) + ": window_left " + std::to_string(args.window_left) + " is below -1");
  }
  const int64_t q_numel = checked_product(kName, checked_product(kName, args.batch, args.q_len),
                                          checked_product(kName, args.heads, args.head_dim));
  const int64_t kv_numel = checked_product(kName, checked_product(kName, args.batch, args.kv_len),
                                           checked_product(kName, args.kv_heads, args.head_dim));
  check_buffer(kName, "q", args.q, q_numel);
  check_buffer(kName, "k", args.k, kv_numel);
  check_buffer(kName, "v", args.v, kv_numel);
  check_buffer(kName, "o", args.o, q_numel);
  if (q_numel == 0) return;
  const int64_t group = args.heads / args.kv_heads;
  const int64_t block = std::max<int64_t>(1, kRowsPerTask / group);
  const int64_t blocks = (args.q_len + block - 1) / block;
  const int64_t key_blocks = (args.kv_len + kAttentionKeyBlock - 1) / kAttentionKeyBlock;
  const int64_t packed = attention_packed_floats(args.kv_len, args.head_dim);
  const KernelTable& kernels = active_kernels();
  const int64_t scratch_floats = attention_rows_scratch(block * group, args.head_dim);
  // Each key/value head's keys and values are packed once per sequence, then every query block
  // of its group reads them. The buffer stays with the calling thread for its next call; tasks
  // reach it through `packed_kv` (in a worker, the name would be the worker's own buffer).
  thread_local std::vector<float> pack;
  pack.resize(static_cast<std::size_t>(packed));
  float* const packed_kv = pack.data();
  for (int64_t b = 0; b < args.batch; ++b) {
    for (int64_t kvh = 0; kvh < args.kv_heads; ++kvh) {
      run_tasks(key_blocks, [&](int64_t kb) {
        kernels.attention_pack(dtype, args, b, kvh, kb, kb + 1, packed_kv, packed_kv + packed / 2);
      });
      // Later query blocks see more keys under a causal mask: they go first, so that the short
      // ones fill in at the end.
      run_tasks(blocks, [&](int64_t task) {
        thread_local std::vector<float> scratch;
        scratch.resize(static_cast<std::size_t>(scratch_floats));
        const int64_t i0 = (blocks - 1 - task) * block;
        kernels.attention_rows(dtype, args, b, kvh, i0, std::min(args.q_len, i0 + block), packed_kv,
                               packed_kv + packed / 2, scratch.data());
      });
    }
  }
}

void attention_decode(DType dtype, const DecodeArgs& args) {
  constexpr const char* kName = "attention_decode";
  check_float_dtype(kName, dtype);
  check_sizes(kName, {args.batch, args.heads, args.kv_heads, args.head_dim, args.max_blocks, args.block_size,
                      args.num_pages});
  check_heads(kName, args.heads, args.kv_heads, args.head_dim);
  if (args.window_left < -1) {
    throw std::invalid_argument(std::string(kName) + ": window_left " + std::to_string(args.window_left) + " is below -1");
  }
  const int64_t q_numel = checked_product(kName, args.batch, checked_product(kName, args.heads, args.head_dim));
  const int64_t cache_numel = checked_product(kName, checked_product(kName, args.num_pages, args.block_size),
                                              checked_product(kName, args.kv_heads, args.head_dim));
  check_buffer(kName, "q", args.q, q_numel);
  check_buffer(kName, "k", args.k, cache_numel);
  check_buffer(kName, "v", args.v, cache_numel);
  check_buffer(kName, "o", args.o, q_numel);
  check_buffer(kName, "seqlens", args.seqlens, args.batch);
  if (args.block_table == nullptr && args.num_pages < args.batch) {
    throw std::invalid_argument(std::string(kName) + ": a contiguous cache of " + std::to_string(args.num_pages) +
                                " sequences serves no batch of " + std::to_string(args.batch));
  }
  check_cache_indices(kName, args.batch, args.seqlens, 0, args.block_table, args.max_blocks, args.block_size,
                      args.num_pages, [](int64_t len) { return std::pair<int64_t, int64_t>{0, len}; });
  if (q_numel == 0) return;
  // The keys sequence b sees: [start(b), seqlens[b]).
  const auto start = [&](int64_t b) {
    return args.window_left >= 0 ? std::max<int64_t>(0, args.seqlens[b] - 1 - args.window_left) : int64_t{0};
  };
  int64_t longest = 0;
  for (int64_t b = 0; b < args.batch; ++b) longest = std::max<int64_t>(longest, args.seqlens[b] - start(b));
  const int64_t threads = thread_count();
  const int64_t parts = std::clamp<int64_t>((4 * threads + args.batch - 1) / args.batch, 1,
                                            std::max<int64_t>(1, longest / kMinSplitKeys));
  const int64_t group = args.heads / args.kv_heads;
  const int64_t part_floats = args.kv_heads * attention_part_floats(group, args.head_dim);
  const int64_t scratch_floats = attention_decode_scratch(args.kv_heads, group, args.head_dim);
  std::vector<float> part_data(static_cast<std::size_t>(args.batch * parts * part_floats));
  const KernelTable& kernels = active_kernels();
  run_tasks(args.batch * parts, [&](int64_t task) {
    thread_local std::vector<float> scratch;
    scratch.resize(static_cast<std::size_t>(scratch_floats));
    const int64_t part = task % parts, b = task / parts;
    const int64_t first = start(b), count = args.seqlens[b] - first;
    const int64_t chunk = (count + parts - 1) / parts;
    const int64_t j0 = first + std::min(count, part * chunk), j1 = first + std::min(count, (part + 1) * chunk);
    kernels.attention_decode_part(dtype, args, b, j0, j1, part_data.data() + task * part_floats, scratch.data());
  });
  switch (dtype) {
    case DType::float32:
      merge_parts(args, parts, part_data.data(), static_cast<float*>(args.o));
      break;
    case DType::float16:
      merge_parts(args, parts, part_data.data(), static_cast<Half*>(args.o));
      break;
    default:
      merge_parts(args, parts, part_data.data(), static_cast<BFloat16*>(args.o));
      break;
  }
}

void kv_cache_append(DType dtype, const CacheAppendArgs& args) {
  constexpr const char* kName = "kv_cache_append";
  check_sizes(kName, {args.batch, args.added, args.kv_heads, args.head_dim, args.max_blocks, args.block_size,
                      args.num_pages});
  const int64_t token = checked_product(kName, args.kv_heads, args.head_dim);
  const int64_t new_numel = checked_product(kName, checked_product(kName, args.batch, args.added), token);
  const int64_t cache_numel = checked_product(kName, checked_product(kName, args.num_pages, args.block_size), token);
  check_buffer(kName, "k_pages", args.k_pages, cache_numel);
  check_buffer(kName, "v_pages", args.v_pages, cache_numel);
  check_buffer(kName, "k_new", args.k_new, new_numel);
  check_buffer(kName, "v_new", args.v_new, new_numel);
  check_buffer(kName, "seqlens", args.seqlens, args.batch);
  if (args.block_table == nullptr && args.num_pages < args.batch) {
    throw std::invalid_argument(std::string(kName) + ": a contiguous cache of " + std::to_string(args.num_pages) +
                                " sequences serves no batch of " + std::to_string(args.batch));
  }
  check_cache_indices(kName, args.batch, args.seqlens, args.added, args.block_table, args.max_blocks, args.block_size,
                      args.num_pages, [&](int64_t len) { return std::pair<int64_t, int64_t>{len, len + args.added}; });
  if (new_numel == 0) return;
  const auto elem = static_cast<int64_t>(dtype_size(dtype));
  // Split over heads: each thread copies its heads' slice of every token, in (b, t) order, so
  // that a slot two tokens share ends with the later one.
  parallel_for(args.kv_heads, 2 * args.batch * args.added * args.head_dim * elem, [&](int64_t h0, int64_t h1) {
    const int64_t offset = h0 * args.head_dim * elem, bytes = (h1 - h0) * args.head_dim * elem;
    for (int64_t b = 0; b < args.batch; ++b) {
      for (int64_t t = 0; t < args.added; ++t) {
        const int64_t p = args.seqlens[b] + t;
        const int64_t page = args.block_table != nullptr ? args.block_table[b * args.max_blocks + p / args.block_size] : b;
        const int64_t dst = ((page * args.block_size + p % args.block_size) * token) * elem + offset;
        const int64_t src = ((b * args.added + t) * token) * elem + offset;
        std::memcpy(static_cast<char*>(args.k_pages) + dst, static_cast<const char*>(args.k_new) + src,
                    static_cast<std::size_t>(bytes));
        std::memcpy(static_cast<char*>(args.v_pages) + dst, static_cast<const char*>(args.v_new) + src,
                    static_cast<std::size_t>(bytes));
      }
    }
  });
}

}  // namespace tileops::cpu

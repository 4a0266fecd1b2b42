// Decode attention on tensor cores (CUDA sm_80 and later; TILEOPS_CUDA_KERNEL_SOURCES), float16
// and bfloat16, head dim 64 or 128, over a contiguous or paged cache. A block serves one
// (sequence, KV head, up to 16 of its query heads, part of the keys): the heads are the 16 rows
// of the MMAs, so one m16n8k16 does the work of 2048 multiply-adds where the CUDA-core kernel
// (attention_decode.cu) spends an instruction per 32. The block copies tiles of 64 keys and
// values into shared memory three tiles ahead (cp.async); each of its 4 warps scores 16 keys of
// a tile against the heads, folds them into its online softmax and accumulates P V; the warps
// merge through shared memory, and the parts as in attention_decode.cuh. Over a paged cache,
// one thread per key finds its row (block table, page, slot) a tile ahead, into shared memory,
// so that the sixteen threads copying a row's chunks do not each repeat that.
#include "attention_decode.cuh"
#include "attention_tile.cuh"
#include "mma_sm80.cuh"

namespace tileops::gpu {
namespace {

constexpr int kHeadRows = 16;  // query heads a block serves: the MMAs' rows
constexpr int kTile = 64;      // keys a stage holds
constexpr int kWarps = 4;      // each scores kTile / kWarps keys of a tile
constexpr int kThreads = kWarps * 32;
constexpr int kStages = 3;
constexpr int kRowStages = 2;  // tiles whose row offsets a paged kernel holds: issued, next

template <class T, int kD>
constexpr int shared_bytes() {
  return (kHeadRows * kD + 2 * kStages * kTile * kD) * static_cast<int>(sizeof(T)) +
         kRowStages * kTile * static_cast<int>(sizeof(std::int64_t)) + kStages * kTile;
}

template <class T, int kD, bool kPaged, bool kSoftcap>
__global__ void __launch_bounds__(kThreads, 2) decode_mma_kernel(DecodeParams p) {
  static_assert(kThreads % (kD / 8) == 0 && kTile % (kThreads / (kD / 8)) == 0, "threads tile the rows evenly");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  extern __shared__ __align__(128) unsigned char smem[];
  T* s_q = reinterpret_cast<T*>(smem);
  T* s_k = s_q + kHeadRows * kD;        // kStages tiles of kTile x kD
  T* s_v = s_k + kStages * kTile * kD;  // the same for the values
  // Paged: per tile (of kRowStages) and key, the element offset of its row, -1 for none.
  std::int64_t* s_row = reinterpret_cast<std::int64_t*>(s_v + kStages * kTile * kD);
  // Per stage and key: 1 where the key is past the part's end or on a page out of range.
  unsigned char* s_masked = reinterpret_cast<unsigned char*>(s_row + kRowStages * kTile);

  let_dependent_grid_launch();
  const DecodeArgs& a = p.a;
  const std::int64_t block = blockIdx.x;
  const int split = static_cast<int>(block % p.splits);
  const std::int64_t rest = block / p.splits;
  const int head_block = static_cast<int>(rest % (a.kv_heads * p.group_chunks));
  const std::int64_t b = rest / (a.kv_heads * p.group_chunks);
  const std::int64_t kvh = head_block / p.group_chunks;
  const int g0 = (head_block % p.group_chunks) * kHeadRows;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane >> 2, t = lane & 3;

  const KeyRange keys = key_range(a, b, split, p.splits, threadIdx.x == 0 && split == 0 && head_block == 0);
  const std::int64_t begin = keys.begin, end = keys.end;
  const int tiles = end > begin ? static_cast<int>((end - begin + kTile - 1) / kTile) : 0;

  constexpr int kChunks = kD / 8;  // 16-byte chunks a row
  const T* q = static_cast<const T*>(a.q) + (b * a.heads + kvh * p.group) * kD;
  for (int idx = threadIdx.x; idx < kHeadRows * kChunks; idx += kThreads) {
    const int r = idx / kChunks, c = idx % kChunks;
    const bool head = g0 + r < p.group;
    copy16_async(s_q + swizzled<kD>(r, c), q + (head ? (g0 + r) * kD + c * 8 : 0), head);
  }

  const T* kbase = static_cast<const T*>(a.k);
  const T* vbase = static_cast<const T*>(a.v);
  // A thread copies rows threadIdx.x / kChunks + j * kRowStep, j < kRowsEach, of every tile,
  // always chunk threadIdx.x % kChunks.
  constexpr int kRowStep = kThreads / kChunks;
  constexpr int kRowsEach = kTile / kRowStep;
  const int row0 = threadIdx.x / kChunks, chunk = threadIdx.x % kChunks;
  // Paged: thread r < kTile finds row r of tile i (its page read from the block table, checked
  // and reported when out of range) and stores its element offset, or -1 where nothing is read.
  // Published by the next barrier; read by issue(i).
  const auto locate_rows = [&](int i) {
    if constexpr (kPaged) {
      const int r = threadIdx.x;
      if (r >= kTile || i >= tiles) return;
      const std::int64_t pos = begin + static_cast<std::int64_t>(i) * kTile + r;
      std::int64_t at = -1;
      if (pos < end) {
        const auto column = static_cast<std::int64_t>(p.block_size.quotient(static_cast<std::uint32_t>(pos)));
        const std::int64_t page = a.block_table[b * a.max_blocks + column];
        if (page < 0 || page >= a.num_blocks) {
          report_fault(a.faults, FaultSource::paged_decode, FaultKind::block_table, b, column, page, 0,
                       a.num_blocks - 1);
        } else {
          at = ((page * a.block_size + (pos - column * a.block_size)) * a.kv_heads + kvh) * kD;
        }
      }
      s_row[(i % kRowStages) * kTile + r] = at;
    }
  };
  // Copies tile i's keys and values into stage i % kStages and marks the keys not to read.
  const auto issue = [&](int i) {
    const int stage = i % kStages;
    T* tk = s_k + stage * kTile * kD;
    T* tv = s_v + stage * kTile * kD;
#pragma unroll
    for (int j = 0; j < kRowsEach; ++j) {
      const int r = row0 + j * kRowStep;
      std::int64_t at = -1;
      if constexpr (kPaged) {
        at = s_row[(i % kRowStages) * kTile + r];
      } else {
        const std::int64_t pos = begin + static_cast<std::int64_t>(i) * kTile + r;
        if (pos < end) at = ((b * a.capacity + pos) * a.kv_heads + kvh) * kD;
      }
      const bool valid = at >= 0;
      const std::int64_t from = valid ? at + chunk * 8 : 0;
      copy16_async(tk + swizzled<kD>(r, chunk), kbase + from, valid);
      copy16_async(tv + swizzled<kD>(r, chunk), vbase + from, valid);
      if (chunk == 0) s_masked[stage * kTile + r] = valid ? 0 : 1;
    }
  };
  // Row offsets run one tile ahead of the copies: each locate_rows(i) is published by a barrier
  // before issue(i), and overwrites a buffer whose issue has passed a barrier since.
  locate_rows(0);
  __syncthreads();
#pragma unroll
  for (int i = 0; i < kStages - 1; ++i) {
    if (i < tiles) issue(i);
    locate_rows(i + 1);
    __syncthreads();
    commit_copies();  // the first group holds the queries too
  }

  const float scale = attention_tile::fold_scale<kSoftcap>(a);
  float o[kD / 8][4];
#pragma unroll
  for (int i = 0; i < kD / 8; ++i) o[i][0] = o[i][1] = o[i][2] = o[i][3] = 0.f;
  float m_run[2] = {kNegInf, kNegInf};  // this lane's heads: g and g + 8
  float l_run[2] = {0.f, 0.f};
  std::uint32_t qf[kD / 16][4];
  const int key0 = warp * 16;  // this warp's keys of a tile

  for (int i = 0; i < tiles; ++i) {
    if (i + kStages - 1 < tiles) issue(i + kStages - 1);
    locate_rows(i + kStages);
    commit_copies();
    wait_copies<kStages - 1>();
    __syncthreads();
    if (i == 0) {
#pragma unroll
      for (int ks = 0; ks < kD / 16; ++ks) ldmatrix_x4(qf[ks], s_q + swizzled<kD>(lane & 15, ks * 2 + (lane >> 4)));
    }
    const int stage = i % kStages;
    const T* tk = s_k + stage * kTile * kD;
    const T* tv = s_v + stage * kTile * kD;

    // S = Q K^T for the 16 heads and this warp's 16 keys.
    float s[2][4] = {{0.f, 0.f, 0.f, 0.f}, {0.f, 0.f, 0.f, 0.f}};
#pragma unroll
    for (int ks = 0; ks < kD / 16; ++ks) {
      std::uint32_t kf[4];
      ldmatrix_x4(kf, tk + swizzled<kD>(key0 + (lane & 7) + ((lane >> 4) << 3), ks * 2 + ((lane >> 3) & 1)));
      mma<T>(s[0], qf[ks], kf[0], kf[1]);
      mma<T>(s[1], qf[ks], kf[2], kf[3]);
    }
#pragma unroll
    for (int nt = 0; nt < 2; ++nt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const bool masked = s_masked[stage * kTile + key0 + nt * 8 + 2 * t + (e & 1)];
        s[nt][e] = masked ? kNegInf : attention_tile::fold_input<kSoftcap>(s[nt][e], a);
      }
    }
    attention_tile::fold_into_softmax(s, scale, o, m_run, l_run);  // a quad of lanes shares a head row
    // O += P V over this warp's 16 keys.
    const std::uint32_t pf[4] = {pack2<T>(s[0][0], s[0][1]), pack2<T>(s[0][2], s[0][3]), pack2<T>(s[1][0], s[1][1]),
                                 pack2<T>(s[1][2], s[1][3])};
#pragma unroll
    for (int dp = 0; dp < kD / 16; ++dp) {
      std::uint32_t vf[4];
      ldmatrix_x4_trans(vf, tv + swizzled<kD>(key0 + (lane & 7) + (((lane >> 3) & 1) << 3), dp * 2 + (lane >> 4)));
      mma<T>(o[2 * dp], pf, vf[0], vf[1]);
      mma<T>(o[2 * dp + 1], pf, vf[2], vf[3]);
    }
    __syncthreads();  // the stage is read: a later issue may fill it
  }
  wait_copies<0>();
  __syncthreads();

  // Merge the warps through shared memory: [kWarps][16][kD] partial outputs, then m and l.
  float* s_o = reinterpret_cast<float*>(smem);
  float* s_m = s_o + kWarps * kHeadRows * kD;
  float* s_l = s_m + kWarps * kHeadRows;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    float l = l_run[half];
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    const int row = g + 8 * half;
    float* out = s_o + (warp * kHeadRows + row) * kD;
#pragma unroll
    for (int d = 0; d < kD / 8; ++d) {
      out[d * 8 + 2 * t] = o[d][2 * half];
      out[d * 8 + 2 * t + 1] = o[d][2 * half + 1];
    }
    if (t == 0) {
      s_m[warp * kHeadRows + row] = m_run[half];
      s_l[warp * kHeadRows + row] = l;
    }
  }
  __syncthreads();
  store_merged<T>(p, b, kvh, g0, split, kWarps, kHeadRows, kD, s_o, s_m, s_l);
#elif defined(__CUDA_ARCH__)
  __trap();  // the launcher runs this kernel on compute capability 8.0 and later only
#endif
}

template <class T, int kD, bool kPaged, bool kSoftcap>
void launch_typed(const DecodeParams& p, unsigned blocks, NativeStream stream) {
  constexpr int kSmem = shared_bytes<T, kD>();
  static_assert(kSmem >= (kWarps * kHeadRows * (kD + 2)) * static_cast<int>(sizeof(float)), "the merge's scratch fits");
  allow_shared_memory<decode_mma_kernel<T, kD, kPaged, kSoftcap>, kSmem>();
  decode_mma_kernel<T, kD, kPaged, kSoftcap><<<blocks, kThreads, kSmem, stream>>>(p);
}

template <class T, bool kPaged>
void launch_for_type(const DecodeParams& p, unsigned blocks, NativeStream stream) {
  const bool softcap = p.a.softcap > 0.f;
  if (p.a.head_dim == 64) {
    softcap ? launch_typed<T, 64, kPaged, true>(p, blocks, stream) : launch_typed<T, 64, kPaged, false>(p, blocks, stream);
  } else {
    softcap ? launch_typed<T, 128, kPaged, true>(p, blocks, stream)
            : launch_typed<T, 128, kPaged, false>(p, blocks, stream);
  }
}

}  // namespace

int decode_mma_heads() { return kHeadRows; }

int decode_mma_blocks_per_sm() { return 2; }

void launch_decode_mma(const DecodeParams& p, NativeStream stream) {
  const std::int64_t blocks = static_cast<std::int64_t>(p.splits) * p.a.batch * p.a.kv_heads * p.group_chunks;
  if (blocks > 0x7fffffff) throw ValueError("gpu decode attention: " + std::to_string(blocks) + " blocks exceed the grid");
  const auto grid = static_cast<unsigned>(blocks);
  const bool paged = p.a.block_table != nullptr;
  if (p.a.dtype == DType::bfloat16) {
    paged ? launch_for_type<bf16, true>(p, grid, stream) : launch_for_type<bf16, false>(p, grid, stream);
  } else {
    paged ? launch_for_type<f16, true>(p, grid, stream) : launch_for_type<f16, false>(p, grid, stream);
  }
}

}  // namespace tileops::gpu

#include "fault_message.hpp"

#include "vendor.hpp"

namespace tileops::gpu {
namespace {

const char* kernel_name(FaultSource source) {
  switch (source) {
    case FaultSource::decode: return "gqa_decode";
    case FaultSource::paged_decode: return "gqa_paged_decode";
    case FaultSource::cache_append: return "kv_cache_append";
    case FaultSource::paged_cache_append: return "paged_kv_cache_append";
    case FaultSource::embedding: return "embedding";
    case FaultSource::moe_experts: return "moe_experts";
    case FaultSource::none: break;
  }
  return "unknown";
}

std::string range(const FaultRecord& f) {
  return "[" + std::to_string(f.low) + ", " + std::to_string(f.high) + "]";
}

}  // namespace

std::string describe_fault(const FaultRecord& f, const std::string& device) {
  std::string read;
  switch (static_cast<FaultKind>(f.kind)) {
    case FaultKind::seqlen: read = "cache_seqlens[" + std::to_string(f.row) + "]"; break;
    case FaultKind::block_table:
      read = "block_table[" + std::to_string(f.row) + ", " + std::to_string(f.column) + "]";
      break;
    case FaultKind::id: read = "ids[" + std::to_string(f.row) + "] (flat)"; break;
    case FaultKind::expert_id:
      read = "topk_ids[" + std::to_string(f.row) + ", " + std::to_string(f.column) + "]";
      break;
    case FaultKind::none: read = "an index"; break;
  }
  std::string consequence;
  switch (static_cast<FaultKind>(f.kind)) {
    case FaultKind::id:
      consequence = "; it read nothing through it and wrote zeros to that call's output row " + std::to_string(f.row);
      break;
    case FaultKind::expert_id:
      consequence = "; it read nothing through it and left that route out of token " + std::to_string(f.row) + "'s sum";
      break;
    default:
      consequence = "; it read and wrote nothing through it, and that call's results for sequence " +
                    std::to_string(f.row) + " are not valid";
  }
  return device + ": an earlier call's kernel " + kDeviceType + "_" + kernel_name(static_cast<FaultSource>(f.source)) +
         " read " + read + " = " + std::to_string(f.value) + ", outside " + range(f) + consequence;
}

}  // namespace tileops::gpu

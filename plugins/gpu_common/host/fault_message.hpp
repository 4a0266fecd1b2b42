// The text of the ValueError a recorded device fault (fault_record.hpp) becomes.
#pragma once

#include <string>

#include "fault_record.hpp"

namespace tileops::gpu {

// E.g. "cuda:0: an earlier call's kernel cuda_gqa_paged_decode read block_table[3, 7] = 9001,
// outside [0, 8191]; it read nothing through it, and that call's results for sequence 3 are
// not valid". `device` names the device ("cuda:0").
std::string describe_fault(const FaultRecord& fault, const std::string& device);

}  // namespace tileops::gpu

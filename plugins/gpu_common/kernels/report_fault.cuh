// Recording a fault in indices read from device memory (see ../host/fault_record.hpp).
#pragma once

#include "../device/portability.hpp"
#include "../host/fault_record.hpp"

namespace tileops::gpu {

// Records the fault unless one is already recorded; any thread may call it, any number of
// times. The fields are made visible to the host before `kind`, which the host polls.
__device__ __forceinline__ void report_fault(FaultRecord* record, FaultSource source, FaultKind kind, std::int64_t row,
                                             std::int64_t column, std::int64_t value, std::int64_t low,
                                             std::int64_t high) {
  if (record == nullptr || atomicCAS(&record->claimed, 0, 1) != 0) return;
  record->source = static_cast<std::int32_t>(source);
  record->row = row;
  record->column = column;
  record->value = value;
  record->low = low;
  record->high = high;
  __threadfence_system();
  atomicExch(&record->kind, static_cast<std::int32_t>(kind));
}

}  // namespace tileops::gpu

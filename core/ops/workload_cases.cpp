#include "tileops/ops/workload_cases.hpp"

#include <algorithm>

#include "signature/signature_plan.hpp"
#include "tileops/op_class.hpp"

namespace tileops {

std::vector<WorkloadCase> workload_cases(const OpClass& cls, std::int64_t index_cap) {
  if (index_cap <= 0) return signature_plan(cls).workload_cases();
  return signature_plan(cls).workload_cases([index_cap](std::string_view, std::int64_t v) { return std::min(v, index_cap); });
}

}  // namespace tileops

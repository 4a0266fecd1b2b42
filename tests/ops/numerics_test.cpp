// Every op, every workload row of its manifest (scaled) and every floating dtype its signature
// accepts: the op as it runs by default on the host (the cpu plugin's kernels where they
// apply) against the reference target on the same inputs.
#include <doctest/doctest.h>

#include "support/workload_numerics.hpp"

TEST_CASE("every op on every workload row and floating dtype matches the reference kernels") {
  tileops::testing::check_workloads_against_reference(tileops::Device::cpu());
}

// The numerical check that every workload row of the manifests drives: an op as it runs by
// default on one device against the reference target on the host, on the same random inputs.
#pragma once

#include <set>
#include <string>

#include "tileops/device.hpp"

namespace tileops::testing {

// For every op of the catalogue not in `skip`, every workload row (indices capped so that a
// test runs quickly) and every floating dtype its signature accepts: runs the op with inputs
// on `device` and the reference target with host copies of them, then compares every output
// and every (possibly written) input. Outputs the reference cannot have written are caught by
// poisoning freed host memory first. Fails the enclosing doctest case on any mismatch, and
// when an op ran no case at all.
void check_workloads_against_reference(const Device& device, const std::set<std::string>& skip = {});

}  // namespace tileops::testing

// How `run` and `bench` report which kernels served a call.
#pragma once

#include <nlohmann/json.hpp>

#include "tileops/op.hpp"

namespace tileops::cli {

// [{op, stage, interface, key[, config]}] for `op` and, recursively, its held sub-ops (stage
// null at the top; config when the kernel reports one). A target-served op reports its target
// name as the key.
nlohmann::json kernels_json(const Op& op, const std::string& stage = {});

// [{op, stage, calls, target_kernels}] for `op` and, recursively, its held sub-ops: each cache's
// {hits, misses, evictions, entries, capacity} (Op::cache_stats).
nlohmann::json caches_json(const Op& op, const std::string& stage = {});

// "rms_norm=cpu_rms_norm" items joined by ", " (stage-qualified for sub-ops).
std::string kernels_text(const nlohmann::json& kernels);

}  // namespace tileops::cli

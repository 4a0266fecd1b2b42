// JSON reports of the kernels an op instance built and of its caches: what `tileops run` and
// `bench` print and what the C API hands other languages.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "tileops/op.hpp"

namespace tileops::json {

// [{op, stage, interface, key[, config]}] for `op` and, recursively, its held sub-ops (stage
// null at the top; config when the kernel reports one). A target-served op reports its target
// name as the key.
nlohmann::json kernels_json(const Op& op, const std::string& stage = {});

// [{op, stage, calls, target_kernels}] for `op` and, recursively, its held sub-ops: each cache's
// {hits, misses, evictions, entries, capacity} (Op::cache_stats).
nlohmann::json caches_json(const Op& op, const std::string& stage = {});

}  // namespace tileops::json

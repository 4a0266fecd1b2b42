// JSON descriptions of ops, shared by `ops`, `run` and `bench`.
#pragma once

#include <nlohmann/json.hpp>

#include "tileops/ops/catalog.hpp"
#include "tileops/signature.hpp"

namespace tileops::cli {

// {name, family, params, inputs, outputs, compile_op_names, interfaces: [{name, type, kernels:
// [{key, plugin, devices, general, preferred_over}]}]} of one catalog entry.
nlohmann::json op_json(const OpCatalogEntry& entry);

// The fields of a call record: indices, branch_key, device, tensors, traffic, written,
// has_out, stages (op and device of each sub-call).
nlohmann::json record_json(const SignatureCall& record);

}  // namespace tileops::cli

// JSON descriptions of ops, shared by `ops`, `run` and `bench`.
#pragma once

#include <nlohmann/json.hpp>

#include "tileops/ops/catalog.hpp"
#include "tileops/signature.hpp"

namespace tileops::cli {

// {name, family, params, inputs, outputs, compile_op_names, interfaces: [{name, type, kernels:
// [{key, plugin, devices, general, preferred_over}]}]} of one catalog entry. Values are typed:
// a parameter's `default` is null for None (and for a `required` one), a number, a string or an
// array; an input's `optional` and `mutated` are true or the expression's text.
nlohmann::json op_json(const OpCatalogEntry& entry);

// The fields of a call record: indices, branch_key, device, tensors, traffic, written,
// has_out, stages (op and device of each sub-call).
nlohmann::json record_json(const SignatureCall& record);

}  // namespace tileops::cli

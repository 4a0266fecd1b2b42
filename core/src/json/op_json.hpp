// JSON descriptions of ops and call records: what `tileops ops`, `run` and `bench` print and
// what the C API hands other languages.
#pragma once

#include <nlohmann/json.hpp>

#include "tileops/ops/catalog.hpp"
#include "tileops/ops/workload_cases.hpp"
#include "tileops/signature.hpp"

namespace tileops::json {

// {name, family, status, params: [{name, type | dtype + shape, required, kw_only, default}], inputs, outputs, compile_op_names, boundary_operators,
// interfaces: [{name, type, kernels: [{key, plugin, class, devices, supported_archs, general,
// preferred_over}]}], delegates, targets} of one catalog entry. Values are typed: a
// parameter's `default` is null for None (and for a `required` one), a number, a string or an
// array; an input's `optional` and `mutated` are true or the expression's text. Each boundary
// operator is {name, written: [input names], out, null_outputs: [output names]}.
nlohmann::json op_json(const OpCatalogEntry& entry);

// {shape, dtype, device} of a tensor.
nlohmann::json tensor_spec_json(const TensorSpec& spec);

// {name: value} of `params`, each value typed as op_json's defaults are (a tensor as
// tensor_spec_json describes it).
nlohmann::json params_json(const ParamMap& params);

// [{id, label, params, inputs: [tensor_spec_json with the input's name (and, for an index input,
// the inclusive "range" of its values) | null, per manifest input]}] of the cases of `cls`'s
// workload rows (workload_cases, with `index_cap`).
nlohmann::json workloads_json(const OpClass& cls, std::int64_t index_cap);

// The fields of a call record: op, indices, branch_key, device, tensors, traffic, written,
// has_out, kernels (the keys that served the call itself) and stages (each stage's calls as
// records of their own).
nlohmann::json record_json(const SignatureCall& record);

}  // namespace tileops::json

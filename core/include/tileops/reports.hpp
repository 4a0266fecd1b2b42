// The library's reports as JSON text: what `tileops info`, `ops`, `plugins`, `targets` and `run`
// print, and the documents the C API's tileops_*_json functions return. Keys are described with
// each function; bytes that are not UTF-8 (a path, a plugin's message) are replaced.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tileops/export.hpp"
#include "tileops/op.hpp"

namespace tileops::reports {

// {version, config_file, default_target, log_level, config_search_path: [{path, exists}],
// plugin_path, devices, plugins, load_failures, targets}: the config in effect and the loaded
// backends. Loads the backends first.
TILEOPS_API std::string info();

// [op...] for every op of the catalog, each as op(name) gives it. Loads the backends first (their
// kernels and targets are part of each op's description).
TILEOPS_API std::string ops();

// {name, family, status, params: [{name, type | dtype + shape, required, kw_only, default}],
// inputs, outputs, compile_op_names, boundary_operators, interfaces: [{name, type, kernels}],
// delegates, targets} of catalog op `name`. A parameter's `default` is null for None (and for a
// required one), a number, a string or an array; an input's `optional` and `mutated` are true or
// the expression's text. Loads the backends first. Throws ValueError listing the known names when
// there is no such op.
TILEOPS_API std::string op(std::string_view name);

// [{id, label, params, inputs: [{name, shape, dtype, device[, range]} | null per input]}]: the
// cases of catalog op `name`'s workload rows (workload_cases), index values above `index_cap`
// lowered to it when `index_cap` > 0 (0 keeps the rows as written). Throws ValueError for an
// unknown op or a negative `index_cap`.
TILEOPS_API std::string workloads(std::string_view name, std::int64_t index_cap);

// {plugins: [{name, version, path, warnings}], load_failures: [{path, plugin, reason}],
// skipped: [{name, path, reason}]}: the plugins loaded, those that failed and those skipped.
// Loads the backends first.
TILEOPS_API std::string plugins();

// [{name, ops}]: the registered targets and the ops each serves. Loads the backends first.
TILEOPS_API std::string targets();

// {name, instance_key, target, serving_target, params, kernels: [{op, stage, interface, key,
// config}], caches: [{op, stage, calls, target_kernels}]}: an op instance, the kernels it and its
// held sub-ops built, and their caches' counters.
TILEOPS_API std::string op_instance(const Op& op);

// The record of `op`'s last completed call (op, indices, branch_key, device, tensors, traffic,
// written, has_out, kernels, stages) with its roofline {flops, bytes}. Throws RuntimeError before
// any call completed.
TILEOPS_API std::string last_call(const Op& op);

}  // namespace tileops::reports

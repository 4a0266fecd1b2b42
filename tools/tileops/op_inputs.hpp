// What `run` and `bench` share: parsing parameter and input specifications from the command
// line, making random inputs, comparing outputs, timing calls.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "tileops/ops/catalog.hpp"
#include "tileops/ops/workload_cases.hpp"
#include "tileops/tensor.hpp"

namespace tileops::cli {

// What `run` and `bench` need of an op's manifest signature, read from its public description
// (reports::op).
struct OpSignature {
  std::string op_name;
  std::vector<std::pair<std::string, std::string>> params;  // name, declared type ("tensor" for a tensor)
  std::vector<std::string> input_names;                     // call-time tensor inputs, in call order
  std::vector<std::string> output_names;
  bool has_call_time_tensor_input() const { return !input_names.empty(); }
};

// The signature of catalog entry `entry`.
OpSignature describe(const OpCatalogEntry& entry);

// Parses `text` as a value of manifest parameter `name` of `plan` by its declared type:
// "none" for None, "[2,3]" for lists, true/false, integers, floats, dtype and device names.
// Throws UsageError naming the parameter, its type and the text.
Value parse_param(const OpSignature& plan, const std::string& name, const std::string& text);

// Parses "name=value" assignments into a ParamMap (values through parse_param).
ParamMap parse_params(const OpSignature& plan, const std::vector<std::string>& assignments);

// Parses "name=SHAPE[:DTYPE]" (SHAPE "[2,4096]" or "2x4096"; DTYPE default float32) into one
// TensorSpec per signature input (nullopt for inputs not named). Throws UsageError for an
// unknown input name, a malformed shape or dtype, and a shape no tensor can have (a negative
// extent, more than 2^63 - 1 elements or bytes).
std::vector<std::optional<TensorSpec>> parse_inputs(const OpSignature& plan,
                                                    const std::vector<std::string>& assignments);

// The workload cases of `entry`, scaled when `cap` is given: every index value, and the
// seq_len parameter of ops that size their output by it, lowered to at most *cap. Throws
// UsageError (prefixed with `command`) for a cap that is not positive.
std::vector<WorkloadCase> scaled_cases(const OpCatalogEntry& entry, std::optional<std::int64_t> cap,
                                       const std::string& command);

// The case of `cases` (the workload cases of `plan`) whose id or label is `name` (a label picks
// its first dtype case). Throws UsageError listing the case ids when none matches.
WorkloadCase find_case(const std::vector<WorkloadCase>& cases, const OpSignature& plan, const std::string& name);

// The --device option ("cpu", "cuda:0", ...). Throws UsageError prefixed with `command`
// ("tileops run") when it names no device.
Device device_option(const boost::program_options::variables_map& vm, const std::string& command);

// The --target option, or no target when it was not given.
Target target_option(const boost::program_options::variables_map& vm);

// Median wall time in seconds of `repeat` calls of `fn` after `warmup` calls, synchronizing
// `device` after each.
double median_seconds(const std::function<void()>& fn, const Device& device, int warmup, int repeat);

}  // namespace tileops::cli

// Graph::to_json and Graph::from_json: format "tileops-graph", version 1.
//
//   {"format": "tileops-graph", "version": 1,
//    "inputs":    [{"device": "cpu", "dtype": "float32", "shape": [4, 8]}, ...],
//    "constants": [{"device": "cpu", "dtype": "float32", "shape": [8], "data": "<base64>"}, ...],
//    "values":    [{"input": 0}, {"constant": 0}, {"node": 0}, ...],
//    "nodes":     [{"op": "AddFwdOp", "operator": "tileops::...", "instance": "AddFwdOp#3",
//                   "inputs": [0, 1], "out": -1, "outputs": [2]}, ...],
//    "outputs":   [2]}
//
// A value comes from a graph input, a constant, or the node that first lists it among its
// outputs (a later node may list it again when its output aliases that value).
#include <boost/archive/iterators/base64_from_binary.hpp>
#include <boost/archive/iterators/binary_from_base64.hpp>
#include <boost/archive/iterators/transform_width.hpp>
#include <cstring>
#include <limits>
#include <optional>
#include <nlohmann/json.hpp>

#include "signature/signature_plan.hpp"
#include "tileops/errors.hpp"
#include "tileops/graph.hpp"
#include "tileops/ops/catalog.hpp"

namespace tileops {
namespace {

using nlohmann::json;

constexpr const char* kFormat = "tileops-graph";
constexpr int kVersion = 1;

std::string base64_encode(const std::byte* data, std::size_t n) {
  using namespace boost::archive::iterators;
  using Encoder = base64_from_binary<transform_width<const char*, 6, 8>>;
  const char* begin = reinterpret_cast<const char*>(data);
  std::string text(Encoder(begin), Encoder(begin + n));
  text.append((3 - n % 3) % 3, '=');
  return text;
}

[[noreturn]] void bad(const std::string& where, const std::string& what) {
  throw ValueError("Graph::from_json: " + where + ": " + what);
}

// Decodes exactly `expected` bytes into `out`.
void base64_decode(const std::string& where, const std::string& text, std::size_t expected, std::byte* out) {
  const std::size_t want_chars = (expected + 2) / 3 * 4;
  if (text.size() != want_chars) {
    bad(where, "expected " + std::to_string(want_chars) + " base64 characters for " + std::to_string(expected) +
                   " bytes, got " + std::to_string(text.size()));
  }
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool digit = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
    const bool padding = c == '=' && i >= text.size() - (3 - expected % 3) % 3;
    if (!digit && !padding) bad(where, "character " + std::to_string(i) + " is not base64");
  }
  if (expected == 0) return;
  using namespace boost::archive::iterators;
  using Decoder = transform_width<binary_from_base64<const char*>, 8, 6>;
  std::string padded = text;
  for (char& c : padded) {
    if (c == '=') c = 'A';  // decodes to zero bits past the data's end, dropped below
  }
  std::string bytes(Decoder(padded.data()), Decoder(padded.data() + padded.size()));
  std::memcpy(out, bytes.data(), expected);
}

json spec_json(const TensorSpec& s) {
  json shape = json::array();
  for (std::int64_t extent : s.shape) shape.push_back(extent);
  return {{"device", s.device.str()}, {"dtype", std::string(dtype_name(s.dtype))}, {"shape", std::move(shape)}};
}

const json& field(const json& object, const char* key, const std::string& where) {
  if (!object.is_object()) bad(where, "expected an object, got " + std::string(object.type_name()));
  auto it = object.find(key);
  if (it == object.end()) bad(where, "missing field '" + std::string(key) + "'");
  return *it;
}

// `v` for a message: a scalar as JSON text of at most 80 characters, a structure by its type
// alone (writing a nested value out whole would recurse as deep as it nests).
std::string shown(const json& v) {
  if (v.is_structured()) return std::string("an ") + v.type_name();
  std::string dumped = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (dumped.size() > 80) dumped = dumped.substr(0, 77) + "...";
  return dumped;
}

std::int64_t integer(const json& v, const std::string& where) {
  if (!v.is_number_integer()) bad(where, "expected an integer, got " + shown(v));
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    bad(where, "expected an integer within int64, got " + shown(v));
  }
  return v.get<std::int64_t>();
}

std::string text(const json& v, const std::string& where) {
  if (!v.is_string()) bad(where, "expected a string, got " + shown(v));
  return v.get<std::string>();
}

// The number of outputs the manifest declares for op `name`, or nullopt for an op the catalog
// does not hold (an application's op that has not registered one).
std::optional<std::size_t> declared_outputs(const std::vector<std::reference_wrapper<const OpCatalogEntry>>& catalog,
                                            const std::string& name) {
  for (const OpCatalogEntry& entry : catalog) {
    if (entry.name == name) return signature_plan(entry.op_class()).output_names().size();
  }
  return std::nullopt;
}

const json& array(const json& v, const std::string& where) {
  if (!v.is_array()) bad(where, "expected an array, got " + std::string(v.type_name()));
  return v;
}

TensorSpec parse_spec(const json& j, const std::string& where) {
  TensorSpec s;
  const std::string device = text(field(j, "device", where), where + ".device");
  const std::string dtype = text(field(j, "dtype", where), where + ".dtype");
  try {
    s.device = Device::parse(device);
    s.dtype = parse_dtype(dtype);
  } catch (const Error& e) {
    bad(where, e.what());
  }
  const json& dims = array(field(j, "shape", where), where + ".shape");
  std::int64_t numel = 1;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    const std::int64_t extent = integer(dims[d], where + ".shape[" + std::to_string(d) + "]");
    if (extent < 0) bad(where + ".shape", "extent " + std::to_string(extent) + " is negative");
    if (extent > 0 && numel > std::numeric_limits<std::int64_t>::max() / extent) {
      bad(where + ".shape", "the element count overflows int64");
    }
    numel *= extent;
    s.shape.push_back(extent);
  }
  const auto bytes_limit = static_cast<std::int64_t>(std::numeric_limits<std::int64_t>::max() / 8);
  if (numel > bytes_limit) bad(where + ".shape", "the tensor's size in bytes overflows int64");
  return s;
}

std::vector<int> id_list(const json& j, const std::string& where, int values, bool allow_absent) {
  std::vector<int> ids;
  const json& items = array(j, where);
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string at = where + "[" + std::to_string(i) + "]";
    const std::int64_t id = integer(items[i], at);
    if (id < (allow_absent ? -1 : 0) || id >= values) {
      bad(at, "value id " + std::to_string(id) + " is outside [" + (allow_absent ? "-1" : "0") + ", " +
                  std::to_string(values) + ")");
    }
    ids.push_back(static_cast<int>(id));
  }
  return ids;
}

}  // namespace

std::string Graph::to_json() const {
  json j;
  j["format"] = kFormat;
  j["version"] = kVersion;
  j["inputs"] = json::array();
  for (const TensorSpec& s : input_specs_) j["inputs"].push_back(spec_json(s));
  j["constants"] = json::array();
  for (const Tensor& c : constants_) {
    const Tensor host = c.to(Device::cpu()).contiguous();
    json item = spec_json(TensorSpec::of(c));
    item["data"] = base64_encode(static_cast<const std::byte*>(host.data_ptr()), host.nbytes());
    j["constants"].push_back(std::move(item));
  }
  std::vector<int> producer(value_sources_.size(), -1);
  for (std::size_t n = 0; n < nodes_.size(); ++n) {
    for (int id : nodes_[n].outputs) {
      if (id >= 0 && value_sources_[id] == kNodeOutput && producer[id] < 0) producer[id] = static_cast<int>(n);
    }
  }
  j["values"] = json::array();
  for (std::size_t id = 0; id < value_sources_.size(); ++id) {
    const int source = value_sources_[id];
    if (source >= 0) {
      j["values"].push_back({{"input", source}});
    } else if (source != kNodeOutput) {
      j["values"].push_back({{"constant", -1 - source}});
    } else {
      j["values"].push_back({{"node", producer[id]}});
    }
  }
  j["nodes"] = json::array();
  for (const Node& n : nodes_) {
    j["nodes"].push_back({{"op", n.op},
                          {"operator", n.operator_name},
                          {"instance", n.instance_key},
                          {"inputs", n.inputs},
                          {"out", n.out},
                          {"outputs", n.outputs}});
  }
  j["outputs"] = outputs_;
  return j.dump();
}

Graph Graph::from_json(std::string_view text_in) {
  // A graph file nests four levels deep; anything far deeper is refused while it is parsed, so
  // that neither the parse nor a later message or destructor recurses without bound.
  constexpr int kMaxDepth = 32;
  struct TooDeep {};
  json j;
  try {
    j = json::parse(text_in, [](int depth, json::parse_event_t, json&) {
      if (depth > kMaxDepth) throw TooDeep{};
      return true;
    });
  } catch (const TooDeep&) {
    bad("the text", "nests deeper than " + std::to_string(kMaxDepth) + " levels");
  } catch (const json::exception& e) {
    // parse_error, and out_of_range for a number beyond double's range (1e400)
    bad("the text", std::string("is not JSON: ") + e.what());
  }
  if (!j.is_object()) bad("the text", "expected a JSON object, got " + std::string(j.type_name()));
  if (text(field(j, "format", "graph"), "format") != kFormat) {
    bad("format", "expected \"" + std::string(kFormat) + "\", got " + shown(j["format"]));
  }
  if (integer(field(j, "version", "graph"), "version") != kVersion) {
    bad("version", "expected " + std::to_string(kVersion) + ", got " + shown(j["version"]));
  }
  Graph g;
  const json& inputs = array(field(j, "inputs", "graph"), "inputs");
  for (std::size_t i = 0; i < inputs.size(); ++i) g.input_specs_.push_back(parse_spec(inputs[i], "inputs[" + std::to_string(i) + "]"));

  const json& constants = array(field(j, "constants", "graph"), "constants");
  for (std::size_t i = 0; i < constants.size(); ++i) {
    const std::string where = "constants[" + std::to_string(i) + "]";
    const TensorSpec spec = parse_spec(constants[i], where);
    if (spec.device.is_meta()) bad(where + ".device", "a constant holds data, which a meta tensor cannot");
    const std::string data = text(field(constants[i], "data", where), where + ".data");
    // The data's length is checked before the tensor is allocated: a large shape with little
    // data is refused without allocating it.
    std::int64_t numel = 1;
    for (std::int64_t extent : spec.shape) numel *= extent;
    const auto nbytes = static_cast<std::size_t>(numel) * dtype_size(spec.dtype);
    if (data.size() != (nbytes + 2) / 3 * 4) {
      bad(where + ".data", "expected " + std::to_string((nbytes + 2) / 3 * 4) + " base64 characters for " +
                               std::to_string(nbytes) + " bytes, got " + std::to_string(data.size()));
    }
    Tensor host = Tensor::empty(spec.shape, spec.dtype, Device::cpu());
    base64_decode(where + ".data", data, host.nbytes(), static_cast<std::byte*>(host.data_ptr()));
    g.constants_.push_back(host.to(spec.device));
  }

  const json& values = array(field(j, "values", "graph"), "values");
  const json& nodes = array(field(j, "nodes", "graph"), "nodes");
  if (values.size() > static_cast<std::size_t>(std::numeric_limits<int>::max() / 2)) bad("values", "too many values");
  const int value_count = static_cast<int>(values.size());
  std::vector<int> producer(values.size(), -1);
  std::vector<bool> input_seen(g.input_specs_.size(), false), constant_seen(g.constants_.size(), false);
  for (std::size_t id = 0; id < values.size(); ++id) {
    const std::string where = "values[" + std::to_string(id) + "]";
    const json& v = values[id];
    if (!v.is_object() || v.size() != 1) bad(where, "expected one of {\"input\": i}, {\"constant\": i}, {\"node\": i}");
    const std::string kind = v.begin().key();
    const std::int64_t index = integer(v.begin().value(), where + "." + kind);
    const auto check_index = [&](std::size_t count, std::vector<bool>* seen) {
      if (index < 0 || static_cast<std::size_t>(index) >= count) {
        bad(where, kind + " " + std::to_string(index) + " is outside [0, " + std::to_string(count) + ")");
      }
      if (seen != nullptr) {
        if ((*seen)[index]) bad(where, kind + " " + std::to_string(index) + " is already value of another id");
        (*seen)[index] = true;
      }
    };
    if (kind == "input") {
      check_index(g.input_specs_.size(), &input_seen);
      g.value_sources_.push_back(static_cast<int>(index));
    } else if (kind == "constant") {
      check_index(g.constants_.size(), &constant_seen);
      g.value_sources_.push_back(-1 - static_cast<int>(index));
    } else if (kind == "node") {
      check_index(nodes.size(), nullptr);
      g.value_sources_.push_back(kNodeOutput);
      producer[id] = static_cast<int>(index);
    } else {
      bad(where, "unknown value source '" + kind + "'");
    }
  }
  for (std::size_t i = 0; i < input_seen.size(); ++i) {
    if (!input_seen[i]) bad("values", "input " + std::to_string(i) + " has no value id");
  }
  for (std::size_t i = 0; i < constant_seen.size(); ++i) {
    if (!constant_seen[i]) bad("values", "constant " + std::to_string(i) + " has no value id");
  }

  // Values are usable once produced: inputs and constants from the start, a node's outputs
  // from the next node on.
  std::vector<bool> ready(values.size(), false);
  for (std::size_t id = 0; id < values.size(); ++id) ready[id] = producer[id] < 0;
  const auto check_ready = [&](const std::vector<int>& ids, const std::string& where) {
    for (int id : ids) {
      if (id >= 0 && !ready[id]) bad(where, "value " + std::to_string(id) + " is used before a node produces it");
    }
  };
  const auto catalog = op_catalog();
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    const std::string where = "nodes[" + std::to_string(n) + "]";
    const json& item = nodes[n];
    Node node;
    node.op = text(field(item, "op", where), where + ".op");
    node.operator_name = text(field(item, "operator", where), where + ".operator");
    node.instance_key = text(field(item, "instance", where), where + ".instance");
    node.inputs = id_list(field(item, "inputs", where), where + ".inputs", value_count, true);
    const std::int64_t out = integer(field(item, "out", where), where + ".out");
    if (out < -1 || out >= value_count) {
      bad(where + ".out", "value id " + std::to_string(out) + " is outside [-1, " + std::to_string(value_count) + ")");
    }
    node.out = static_cast<int>(out);
    node.outputs = id_list(field(item, "outputs", where), where + ".outputs", value_count, true);
    if (const auto declared = declared_outputs(catalog, node.op); declared && node.outputs.size() > *declared) {
      bad(where + ".outputs", "lists " + std::to_string(node.outputs.size()) + " outputs, but " + node.op + " has " +
                                  std::to_string(*declared));
    }
    check_ready(node.inputs, where + ".inputs");
    check_ready({node.out}, where + ".out");
    for (int id : node.outputs) {
      if (id < 0 || ready[id]) continue;  // absent, or an alias of a value produced before
      if (producer[id] != static_cast<int>(n)) {
        bad(where + ".outputs", "value " + std::to_string(id) + " is produced by node " + std::to_string(producer[id]) +
                                    ", not by this one");
      }
      ready[id] = true;
    }
    g.nodes_.push_back(std::move(node));
  }
  for (std::size_t id = 0; id < values.size(); ++id) {
    if (!ready[id]) bad("values[" + std::to_string(id) + "]", "node " + std::to_string(producer[id]) + " does not produce it");
  }
  g.outputs_ = id_list(field(j, "outputs", "graph"), "outputs", value_count, false);
  return g;
}

}  // namespace tileops

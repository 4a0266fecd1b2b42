#include "tileops/signature.hpp"

namespace tileops {

const IndexValue* SignatureCall::index(std::string_view name) const {
  for (const IndexRecord& r : indices) {
    if (r.name == name) return &r.value;
  }
  return nullptr;
}

const TensorRecord* SignatureCall::tensor(std::string_view name) const {
  for (const TensorRecord& t : tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

const std::vector<SignatureCallPtr>& SignatureCall::stage_calls(std::string_view stage) const {
  static const std::vector<SignatureCallPtr> kNone;
  for (const StageRecord& s : stages) {
    if (s.stage == stage) return s.calls;
  }
  return kNone;
}

std::string SignatureCall::str() const {
  std::string s = std::string(op) + " call";
  s += "\n  device: " + (device ? device->str() : std::string("unknown"));
  if (!branch_key.empty()) s += "\n  branch: " + std::string(branch_key);
  s += "\n  indices:";
  for (const IndexRecord& r : indices) s += " " + std::string(r.name) + "=" + value_str(r.value);
  s += "\n  tensors:";
  for (const TensorRecord& t : tensors) {
    s += "\n    " + std::string(t.name) + ": " + std::string(dtype_name(t.dtype)) + shape_str(t.shape);
  }
  s += "\n  traffic:";
  for (const TensorTraffic& t : traffic) {
    s += "\n    " + std::string(t.name) + ": " + std::to_string(t.reads) + " read(s), " + std::to_string(t.writes) +
         " write(s) of " + std::to_string(t.bytes) + " bytes";
  }
  if (!written.empty()) {
    s += "\n  writes:";
    for (std::string_view w : written) s += " " + std::string(w);
  }
  if (has_out) s += "\n  out: passed";
  if (!kernels.empty()) {
    s += "\n  served by:";
    for (std::string_view k : kernels) s += " " + std::string(k);
  }
  for (const auto& [name, tensor] : metadata) s += "\n  metadata " + std::string(name) + ": " + tensor.str();
  for (const StageRecord& st : stages) {
    s += "\n  stage " + std::string(st.stage) + ": " + std::to_string(st.calls.size()) + " call(s)";
    for (const SignatureCallPtr& c : st.calls) {
      std::string sub = c->str();
      std::size_t pos = 0;
      while ((pos = sub.find('\n', pos)) != std::string::npos) {
        sub.insert(pos + 1, "    ");
        pos += 5;
      }
      s += "\n    " + sub;
    }
  }
  return s;
}

}  // namespace tileops

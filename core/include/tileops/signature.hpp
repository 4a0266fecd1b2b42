// The record of one call that passed its signature check (`op.last_call()`).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "tileops/device.hpp"
#include "tileops/dtype.hpp"
#include "tileops/export.hpp"
#include "tileops/shape.hpp"
#include "tileops/tensor.hpp"
#include "tileops/value.hpp"

namespace tileops {

// The shape and dtype of one tensor of the call, by its name in the signature.
struct TensorRecord {
  std::string_view name;  // points into the op class's signature plan, which lives forever
  Shape shape;
  DType dtype = DType::float32;
};

// How many times the call reads and writes one tensor (the manifest's effect rules), and its
// size in bytes.
struct TensorTraffic {
  std::string_view name;
  int reads = 0;
  int writes = 0;
  std::int64_t bytes = 0;
};

// A solved signature index (forall indices, parameters in index positions, let entries).
struct IndexRecord {
  std::string_view name;
  IndexValue value;
};

class SignatureCall;
using SignatureCallPtr = std::shared_ptr<const SignatureCall>;

// The calls that the sub-ops of a composite op completed under one stage, in completion order.
struct StageRecord {
  std::string_view stage;  // points into the op class's signature plan, which lives forever
  std::vector<SignatureCallPtr> calls;
};

// One call's record. Immutable once it becomes an op's last_call; `stages` is written before.
class TILEOPS_API SignatureCall {
 public:
  std::string_view op;                                   // the op class name
  boost::container::small_vector<IndexRecord, 8> indices;
  std::string_view branch_key;  // e.g. "trans_a=false,trans_b=true"; points into the plan like the names
  std::optional<Device> device;                           // the call device; nullopt: unknown
  boost::container::small_vector<TensorRecord, 6> tensors;  // inputs, construction tensors, outputs
  boost::container::small_vector<TensorTraffic, 6> traffic;
  boost::container::small_vector<std::string_view, 2> written;  // inputs this call writes
  bool has_out = false;                                   // the caller passed `out`
  std::vector<std::pair<std::string_view, Tensor>> metadata;  // metadata inputs (declare `values`)
  std::vector<StageRecord> stages;
  // What served this call itself, each once: the implementation keys kernel_for handed out, in
  // that order, or the target's name when a target's kernel ran. Empty when nothing ran (an
  // empty write, a meta call, a composite whose sub-ops did the work: see their stage records).
  // The views point into process-lifetime storage.
  boost::container::small_vector<std::string_view, 2> kernels;

  // The value of index `name`, or nullptr.
  const IndexValue* index(std::string_view name) const;
  // The record of tensor `name`, or nullptr when it is absent from this call.
  const TensorRecord* tensor(std::string_view name) const;
  // The calls filed under `stage` (empty when none).
  const std::vector<SignatureCallPtr>& stage_calls(std::string_view stage) const;
  // A multi-line human-readable dump.
  std::string str() const;
};

}  // namespace tileops

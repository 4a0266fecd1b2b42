// eval_roofline: the manifest's roofline formulas evaluated on a call record.
#include "signature/compiled_plan.hpp"

namespace tileops::detail {

RooflineFigures CompiledPlan::eval_roofline(const SignatureCall& record) const {
  if (record.op != spec_.name) {
    throw ValueError(message("cannot evaluate the roofline of a " + std::string(record.op) + " call"));
  }
  CheckState f;
  init_state(f);
  for (const IndexRecord& r : record.indices) {
    for (std::size_t s = 0; s < slots_.size(); ++s) {
      if (slots_[s].name == r.name) expr::assign_from_index_value(f.slots[s], r.value);
    }
  }
  for (std::size_t id = 0; id < tensors_.size(); ++id) {
    const TensorRecord* t = record.tensor(tensors_[id].name);
    f.present[id] = t != nullptr;
    if (t != nullptr) f.bytes[id] = shape_nbytes(t->shape, dtype_size(t->dtype), "the recorded tensor");
  }
  const auto eval = [&](const Expr& e, const char* field) {
    try {
      return expr::evaluate(e.root, f.env()).number();
    } catch (const expr::UnsetSlotError& err) {
      throw ValueError(message(std::string(field) + " '" + e.source + "' reads '" +
                               slots_[static_cast<std::size_t>(err.slot())].name + "', which the call does not record"));
    } catch (const ValueError& err) {
      throw ValueError(message(std::string(field) + " '" + e.source + "': " + err.what()));
    }
  };
  RooflineFigures r;
  r.flops = eval(flops_, "roofline.flops");
  if (bytes_) {
    r.bytes = eval(*bytes_, "roofline.bytes");
  } else {
    for (const TensorTraffic& t : record.traffic) r.bytes += static_cast<double>(t.reads + t.writes) * static_cast<double>(t.bytes);
  }
  return r;
}

}  // namespace tileops::detail

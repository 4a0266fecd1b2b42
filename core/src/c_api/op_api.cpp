// Op handles: construction by manifest name, the instance's facts and its last call as JSON.
#include <boost/container/small_vector.hpp>

#include "c_api/handles.hpp"
#include "signature/signature_plan.hpp"
#include "tileops/errors.hpp"
#include "tileops/ops/catalog.hpp"
#include "tileops/reports.hpp"

using namespace tileops;
using namespace tileops::c_api;

extern "C" {

tileops_status* tileops_op_create(const char* op_name, const tileops_params* params, const char* target,
                                  tileops_op** op) {
  return guarded([&] {
    require_pointer(op, "op");
    *op = nullptr;
    const OpCatalogEntry& entry = find_op(checked_string(op_name, "op_name"));
    const Target chosen = target == nullptr ? Target() : Target(std::string(checked_string(target, "target")));
    *op = new tileops_op{entry.make(params == nullptr ? ParamMap() : params->params, chosen)};
  });
}

void tileops_op_free(tileops_op* op) { delete op; }

tileops_status* tileops_op_instance_key(const tileops_op* op, const char** key) {
  return guarded([&] {
    require_pointer(key, "key");
    *key = nullptr;
    require_pointer(op, "op");
    *key = op->op->instance_key().c_str();
  });
}

tileops_status* tileops_op_boundary_operator(const tileops_op* op, const uint8_t* present, size_t num_inputs,
                                             int32_t out_passed, const char** name) {
  return guarded([&] {
    require_pointer(name, "name");
    *name = nullptr;
    require_pointer(op, "op");
    const std::size_t expected = signature_plan(op->op->op_class()).input_names().size();
    if (num_inputs != expected) {
      throw TypeError(op->op->name() + " takes " + std::to_string(expected) + " input presence flag(s), got " +
                      std::to_string(num_inputs));
    }
    if (num_inputs > 0) require_pointer(present, "present");
    boost::container::small_vector<bool, 8> flags(present, present + num_inputs);
    for (bool& f : flags) f = f != 0;
    *name = op->op->boundary_operator({flags.data(), flags.size()}, out_passed != 0).c_str();
  });
}

tileops_status* tileops_op_last_call_json(const tileops_op* op, char** json) {
  return guarded([&] {
    require_pointer(json, "json");
    *json = nullptr;
    require_pointer(op, "op");
    *json = owned_string(reports::last_call(*op->op));
  });
}

tileops_status* tileops_op_json(const tileops_op* op, char** json) {
  return guarded([&] {
    require_pointer(json, "json");
    *json = nullptr;
    require_pointer(op, "op");
    *json = owned_string(reports::op_instance(*op->op));
  });
}

}  // extern "C"

// Parameter maps: the typed values an op is constructed from.
#include <cmath>
#include <string>
#include <vector>

#include "c_api/handles.hpp"
#include "tileops/errors.hpp"

namespace tileops::c_api {
namespace {

// The most integers a list parameter may hold.
constexpr std::size_t kMaxListLength = std::size_t{1} << 20;

template <class MakeValue>
tileops_status* set_param(tileops_params* params, const char* name, MakeValue&& make) {
  return guarded([&] {
    require_pointer(params, "params");
    const std::string_view key = checked_string(name, "name");
    if (key.empty()) throw ValueError("a parameter name is empty");
    params->params.set(std::string(key), make());
  });
}

}  // namespace
}  // namespace tileops::c_api

using namespace tileops;
using namespace tileops::c_api;

extern "C" {

tileops_status* tileops_params_create(tileops_params** params) {
  return guarded([&] {
    require_pointer(params, "params");
    *params = new tileops_params{};
  });
}

void tileops_params_free(tileops_params* params) { delete params; }

tileops_status* tileops_params_set_none(tileops_params* params, const char* name) {
  return set_param(params, name, [] { return Value(); });
}

tileops_status* tileops_params_set_bool(tileops_params* params, const char* name, int32_t value) {
  return set_param(params, name, [&] {
    if (value != 0 && value != 1) {
      throw ValueError("parameter '" + std::string(name) + "': a bool is 0 or 1, not " + std::to_string(value));
    }
    return Value(value == 1);
  });
}

tileops_status* tileops_params_set_int(tileops_params* params, const char* name, int64_t value) {
  return set_param(params, name, [&] { return Value(std::int64_t{value}); });
}

tileops_status* tileops_params_set_float(tileops_params* params, const char* name, double value) {
  return set_param(params, name, [&] {
    if (std::isnan(value)) throw ValueError("parameter '" + std::string(name) + "' is NaN; expected a number");
    return Value(value);
  });
}

tileops_status* tileops_params_set_string(tileops_params* params, const char* name, const char* value) {
  return set_param(params, name, [&] { return Value(std::string(checked_string(value, "value"))); });
}

tileops_status* tileops_params_set_dtype(tileops_params* params, const char* name, const char* dtype) {
  return set_param(params, name, [&] { return Value(parse_dtype(checked_string(dtype, "dtype"))); });
}

tileops_status* tileops_params_set_device(tileops_params* params, const char* name, const char* device) {
  return set_param(params, name, [&] { return Value(Device::parse(checked_string(device, "device"))); });
}

tileops_status* tileops_params_set_int_list(tileops_params* params, const char* name, const int64_t* values,
                                            size_t count) {
  return set_param(params, name, [&] {
    if (count > kMaxListLength) {
      throw ValueError("parameter '" + std::string(name) + "': a list of " + std::to_string(count) +
                       " integers is longer than " + std::to_string(kMaxListLength) + ", the most a list parameter holds");
    }
    if (count > 0) require_pointer(values, "values");
    return Value(std::vector<std::int64_t>(values, values + count));
  });
}

tileops_status* tileops_params_set_tensor(tileops_params* params, const char* name, const tileops_tensor* tensor) {
  return set_param(params, name, [&] {
    require_pointer(tensor, "tensor");
    return Value(tensor->tensor);
  });
}

}  // extern "C"

// Resolution of the torch stable shim (shim.hpp) from the libtorch already in the process.
#include "shim.hpp"

#include <dlfcn.h>

#include <cstring>
#include <utility>
#include <vector>

namespace tileops_stable {

Shim shim;

namespace {

// (tileops dtype name, torch getter symbol, DLPack code, bits) of every dtype both take.
struct DtypeEntry {
  const char* name;
  const char* getter;
  uint8_t code;
  uint8_t bits;
  int32_t torch_code;  // filled by resolve()
};

// DLPack codes: kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4, kDLBool 6.
DtypeEntry dtypes[] = {
    {"bool", "aoti_torch_dtype_bool", 6, 8, -1},
    {"int8", "aoti_torch_dtype_int8", 0, 8, -1},
    {"uint8", "aoti_torch_dtype_uint8", 1, 8, -1},
    {"int16", "aoti_torch_dtype_int16", 0, 16, -1},
    {"int32", "aoti_torch_dtype_int32", 0, 32, -1},
    {"int64", "aoti_torch_dtype_int64", 0, 64, -1},
    {"float16", "aoti_torch_dtype_float16", 2, 16, -1},
    {"bfloat16", "aoti_torch_dtype_bfloat16", 4, 16, -1},
    {"float32", "aoti_torch_dtype_float32", 2, 32, -1},
    {"float64", "aoti_torch_dtype_float64", 2, 64, -1},
};

// Looks `name` up in `lib`, storing it in `*slot`; appends the name to `missing` when absent.
template <typename Fn>
void find(void* lib, const char* name, Fn* slot, std::vector<std::string>* missing) {
  void* address = lib == nullptr ? nullptr : dlsym(lib, name);
  *slot = reinterpret_cast<Fn>(address);
  if (address == nullptr && missing != nullptr) missing->push_back(name);
}

}  // namespace

std::string resolve(const char* cpu_path, const char* cuda_path) {
  // Resolved into a local table first: a refused torch leaves an earlier resolution in place.
  Shim found{};
  void* cpu = dlopen(cpu_path, RTLD_NOW | RTLD_NOLOAD);
  if (cpu == nullptr) return std::string("libtorch_cpu is not loaded from ") + cpu_path;
  std::vector<std::string> missing;
  find(cpu, "aoti_torch_library_init_impl", &found.library_init_impl, &missing);
  find(cpu, "torch_library_impl", &found.library_impl, &missing);
  find(cpu, "aoti_torch_delete_library_object", &found.delete_library, &missing);
  find(cpu, "aoti_torch_get_data_ptr", &found.get_data_ptr, &missing);
  find(cpu, "aoti_torch_get_sizes", &found.get_sizes, &missing);
  find(cpu, "aoti_torch_get_strides", &found.get_strides, &missing);
  find(cpu, "aoti_torch_get_dim", &found.get_dim, &missing);
  find(cpu, "aoti_torch_get_dtype", &found.get_dtype, &missing);
  find(cpu, "aoti_torch_get_device_type", &found.get_device_type, &missing);
  find(cpu, "aoti_torch_get_device_index", &found.get_device_index, &missing);
  find(cpu, "aoti_torch_empty_strided", &found.empty_strided, &missing);
  find(cpu, "aoti_torch_delete_tensor_object", &found.delete_tensor, &missing);
  find(cpu, "torch_string_c_str", &found.string_c_str, &missing);
  find(cpu, "torch_delete_string", &found.delete_string, &missing);
  find(cpu, "aoti_torch_device_type_cpu", &found.device_type_cpu, &missing);
  find(cpu, "aoti_torch_device_type_cuda", &found.device_type_cuda, &missing);
  find(cpu, "torch_delete_stable_ivalue", &found.delete_stable_ivalue, static_cast<std::vector<std::string>*>(nullptr));
  int32_t codes[sizeof dtypes / sizeof dtypes[0]];
  for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; ++i) {
    int32_t (*getter)() = nullptr;
    find(cpu, dtypes[i].getter, &getter, &missing);
    codes[i] = getter == nullptr ? -1 : getter();
  }
  if (cuda_path != nullptr && cuda_path[0] != '\0') {
    void* cuda = dlopen(cuda_path, RTLD_NOW | RTLD_NOLOAD);
    if (cuda == nullptr) return std::string("libtorch_cuda is not loaded from ") + cuda_path;
    find(cuda, "aoti_torch_get_current_cuda_stream", &found.current_cuda_stream, &missing);
  }
  if (missing.empty()) {
    shim = found;
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; ++i) dtypes[i].torch_code = codes[i];
    return "";
  }
  std::string text = "torch lacks the stable shim function(s):";
  for (const std::string& name : missing) text += " " + name;
  return text;
}

int32_t torch_dtype(const std::string& name) {
  for (const DtypeEntry& d : dtypes) {
    if (name == d.name) return d.torch_code;
  }
  return -1;
}

const char* dtype_name(int32_t dtype) {
  for (const DtypeEntry& d : dtypes) {
    if (d.torch_code == dtype && d.torch_code != -1) return d.name;
  }
  return nullptr;
}

bool dlpack_dtype(int32_t dtype, uint8_t* code, uint8_t* bits) {
  for (const DtypeEntry& d : dtypes) {
    if (d.torch_code == dtype && d.torch_code != -1) {
      *code = d.code;
      *bits = d.bits;
      return true;
    }
  }
  return false;
}

}  // namespace tileops_stable

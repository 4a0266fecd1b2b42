// The part of torch's stable C shim (torch >= 2.10) that the stable-ABI kernels call, reached
// through function pointers resolved at run time from the libtorch that the process has
// already loaded: nothing here is compiled or linked against torch. The declarations are
// written from the shim's documented signatures (torch/csrc/inductor/aoti_torch/c/shim.h,
// torch/csrc/stable/c/shim.h); every function returns 0 on success.
#pragma once

#include <cstdint>
#include <string>

namespace tileops_stable {

using TorchError = int32_t;
using StableIValue = uint64_t;
using TensorHandle = void*;   // AtenTensorHandle
using LibraryHandle = void*;  // TorchLibraryHandle
using StringHandle = void*;   // StringHandle (a std::string owned by libtorch)
using BoxedFn = void (*)(StableIValue* stack, uint64_t nargs, uint64_t nrets);

// torch's extension_build_version of 2.10.0: major in bits 56-63, minor in bits 48-55.
constexpr uint64_t kBuildVersion_2_10 = (uint64_t{2} << 56) | (uint64_t{10} << 48);

struct Shim {
  // libtorch_cpu
  TorchError (*library_init_impl)(const char* ns, const char* key, const char* file, uint32_t line,
                                  LibraryHandle* lib);
  TorchError (*library_impl)(LibraryHandle lib, const char* name, BoxedFn fn, uint64_t build_version);
  TorchError (*delete_library)(LibraryHandle lib);
  TorchError (*get_data_ptr)(TensorHandle t, void** data);
  TorchError (*get_sizes)(TensorHandle t, int64_t** sizes);      // borrowed from the handle
  TorchError (*get_strides)(TensorHandle t, int64_t** strides);  // likewise
  TorchError (*get_dim)(TensorHandle t, int64_t* dim);
  TorchError (*get_dtype)(TensorHandle t, int32_t* dtype);
  TorchError (*get_device_type)(TensorHandle t, int32_t* type);
  TorchError (*get_device_index)(TensorHandle t, int32_t* index);
  TorchError (*empty_strided)(int64_t ndim, const int64_t* sizes, const int64_t* strides, int32_t dtype,
                              int32_t device_type, int32_t device_index, TensorHandle* out);
  TorchError (*delete_tensor)(TensorHandle t);
  TorchError (*string_c_str)(StringHandle s, const char** data);
  TorchError (*delete_string)(StringHandle s);
  TorchError (*delete_stable_ivalue)(StableIValue* v);  // torch >= 2.13; NULL before
  int32_t (*device_type_cpu)();
  int32_t (*device_type_cuda)();
  // libtorch_cuda; NULL without it
  TorchError (*current_cuda_stream)(int32_t device_index, void** stream);
};

// The resolved shim; valid once resolve() succeeded.
extern Shim shim;

// Resolves every symbol of `shim` from the already-loaded libraries at `cpu_path` and (may be
// NULL or "") `cuda_path`, opened with RTLD_NOLOAD so that nothing new is loaded. Returns ""
// on success (`shim` then holds them), else a sentence naming what is missing (`shim` is left
// as it was).
std::string resolve(const char* cpu_path, const char* cuda_path);

// The torch dtype code of `name` ("float32", "bfloat16", ...) through the aoti_torch_dtype_*
// getters of the resolved library; -1 for a name it has no getter for. Needs resolve().
int32_t torch_dtype(const std::string& name);

// The tileops name of torch dtype code `dtype`, or NULL for one tileops does not take.
const char* dtype_name(int32_t dtype);

// The DLPack (code, bits) of torch dtype code `dtype`; false for a dtype tileops does not take.
bool dlpack_dtype(int32_t dtype, uint8_t* code, uint8_t* bits);

}  // namespace tileops_stable

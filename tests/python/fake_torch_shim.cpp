// A test double of the part of torch's stable C shim that tileops._stablekernel calls, so that
// test_stablekernel.py runs those kernels without torch >= 2.10: CPU float tensors in malloc'd
// memory, dtype and device codes of its own, kernels kept by name and called through
// fake_call(), and a count of live handles (tensors and strings) to check that a call, failed
// or not, leaves none behind. Written for the test; it shares nothing with torch.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>

namespace {
using Kernel = void (*)(uint64_t*, uint64_t, uint64_t);
struct FakeTensor {
  void* data;
  int64_t ndim;
  int64_t sizes[8];
  int64_t strides[8];
  int32_t dtype;
};
std::map<std::string, Kernel> kernels;
int live = 0;
int element_size(int32_t dtype) {
  switch (dtype) {
    case 4: case 7: return 8;
    case 3: case 6: return 4;
    case 2: case 5: case 15: return 2;
    default: return 1;
  }
}
}  // namespace

#define EXPORT extern "C" __attribute__((visibility("default")))

EXPORT int32_t aoti_torch_dtype_bool() { return 11; }
EXPORT int32_t aoti_torch_dtype_int8() { return 1; }
EXPORT int32_t aoti_torch_dtype_uint8() { return 0; }
EXPORT int32_t aoti_torch_dtype_int16() { return 2; }
EXPORT int32_t aoti_torch_dtype_int32() { return 3; }
EXPORT int32_t aoti_torch_dtype_int64() { return 4; }
EXPORT int32_t aoti_torch_dtype_float16() { return 5; }
EXPORT int32_t aoti_torch_dtype_bfloat16() { return 15; }
EXPORT int32_t aoti_torch_dtype_float32() { return 6; }
EXPORT int32_t aoti_torch_dtype_float64() { return 7; }
EXPORT int32_t aoti_torch_device_type_cpu() { return 0; }
EXPORT int32_t aoti_torch_device_type_cuda() { return 1; }
EXPORT int32_t aoti_torch_library_init_impl(const char*, const char*, const char*, uint32_t, void** lib) {
  *lib = &kernels;
  return 0;
}
EXPORT int32_t torch_library_impl(void*, const char* name, Kernel fn, uint64_t) {
  kernels[name] = fn;
  return 0;
}
EXPORT int32_t aoti_torch_delete_library_object(void*) { return 0; }
EXPORT int32_t aoti_torch_get_data_ptr(void* h, void** d) { *d = static_cast<FakeTensor*>(h)->data; return 0; }
EXPORT int32_t aoti_torch_get_sizes(void* h, int64_t** s) { *s = static_cast<FakeTensor*>(h)->sizes; return 0; }
EXPORT int32_t aoti_torch_get_strides(void* h, int64_t** s) { *s = static_cast<FakeTensor*>(h)->strides; return 0; }
EXPORT int32_t aoti_torch_get_dim(void* h, int64_t* d) { *d = static_cast<FakeTensor*>(h)->ndim; return 0; }
EXPORT int32_t aoti_torch_get_dtype(void* h, int32_t* d) { *d = static_cast<FakeTensor*>(h)->dtype; return 0; }
EXPORT int32_t aoti_torch_get_device_type(void*, int32_t* d) { *d = 0; return 0; }
EXPORT int32_t aoti_torch_get_device_index(void*, int32_t* d) { *d = -1; return 0; }  // as torch's CPU
EXPORT int32_t aoti_torch_empty_strided(int64_t ndim, const int64_t* sizes, const int64_t* strides, int32_t dtype,
                                        int32_t, int32_t, void** out) {
  if (ndim > 8) return 1;
  auto* t = new FakeTensor{};
  t->ndim = ndim;
  t->dtype = dtype;
  int64_t n = 1;
  for (int64_t i = 0; i < ndim; ++i) {
    t->sizes[i] = sizes[i];
    t->strides[i] = strides[i];
    n *= sizes[i];
  }
  t->data = calloc(n > 0 ? n : 1, element_size(dtype));
  ++live;
  *out = t;
  return 0;
}
EXPORT int32_t aoti_torch_delete_tensor_object(void* h) {
  free(static_cast<FakeTensor*>(h)->data);
  delete static_cast<FakeTensor*>(h);
  --live;
  return 0;
}
EXPORT int32_t torch_string_c_str(void* h, const char** d) { *d = static_cast<std::string*>(h)->c_str(); return 0; }
EXPORT int32_t torch_delete_string(void* h) {
  delete static_cast<std::string*>(h);
  --live;
  return 0;
}

// ---- What the test calls ----
// A new contiguous float32 tensor of `ndim` extents `sizes` holding a copy of `data`.
EXPORT void* fake_tensor(const float* data, int64_t ndim, const int64_t* sizes) {
  int64_t strides[8];
  int64_t step = 1;
  for (int64_t i = ndim - 1; i >= 0; --i) {
    strides[i] = step;
    step *= sizes[i];
  }
  void* h = nullptr;
  if (aoti_torch_empty_strided(ndim, sizes, strides, 6, 0, -1, &h) != 0) return nullptr;
  memcpy(static_cast<FakeTensor*>(h)->data, data, static_cast<size_t>(step) * 4);
  return h;
}
// `h` boxed as a present `Tensor?` argument: a heap word holding the handle (torch < 2.13's way).
EXPORT uint64_t fake_box(void* h) { return reinterpret_cast<uintptr_t>(new uint64_t(reinterpret_cast<uintptr_t>(h))); }
EXPORT void* fake_string(const char* s) {
  ++live;
  return new std::string(s);
}
EXPORT const float* fake_data(void* h) { return static_cast<const float*>(static_cast<FakeTensor*>(h)->data); }
EXPORT int64_t fake_size(void* h, int i) { return static_cast<FakeTensor*>(h)->sizes[i]; }
EXPORT int fake_live() { return live; }
// Calls the kernel registered as `name`; 0, or 1 with the exception's message in `error`.
EXPORT int fake_call(const char* name, uint64_t* stack, uint64_t nargs, uint64_t nrets, char* error, size_t size) {
  try {
    kernels.at(name)(stack, nargs, nrets);
    return 0;
  } catch (const std::exception& e) {
    strncpy(error, e.what(), size - 1);
    error[size - 1] = '\0';
    return 1;
  }
}

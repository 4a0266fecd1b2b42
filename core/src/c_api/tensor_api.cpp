// Tensor handles: DLPack in and out, new tensors, what a tensor is.
#include <cstring>
#include <string>

#include "c_api/dlpack_refs.hpp"
#include "c_api/handles.hpp"
#include "tileops/dtype.hpp"
#include "tileops/errors.hpp"

namespace tileops::c_api {
namespace {

// The most dimensions a tensor crossing the C API may have (DLPack imports' limit too).
constexpr std::int32_t kMaxRank = 64;

// `strides`, checked, as the elements a new tensor must span: 0 for an empty one.
std::int64_t span_of(ShapeView shape, ShapeView strides, DType dtype) {
  Tensor::check_view(shape, strides, 0, dtype, std::nullopt, "tileops_tensor_empty");
  if (shape_numel(shape) == 0) return 0;
  std::int64_t last = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) last += (shape[d] - 1) * strides[d];
  return last + 1;
}

}  // namespace
}  // namespace tileops::c_api

using namespace tileops;
using namespace tileops::c_api;

extern "C" {

tileops_status* tileops_tensor_from_dlpack(DLManagedTensor* managed, uint32_t flags, tileops_tensor** tensor) {
  return guarded([&] {
    if (tensor == nullptr) {
      release_ref({TILEOPS_REF_DLPACK, 0, managed});
      require_pointer(tensor, "tensor");
    }
    *tensor = nullptr;
    *tensor = new_tensor_handle(import_dlpack(managed, flags));
  });
}

tileops_status* tileops_tensor_from_dlpack_versioned(DLManagedTensorVersioned* managed, uint32_t flags,
                                                     tileops_tensor** tensor) {
  return guarded([&] {
    if (tensor == nullptr) {
      release_ref({TILEOPS_REF_DLPACK_VERSIONED, 0, managed});
      require_pointer(tensor, "tensor");
    }
    *tensor = nullptr;
    *tensor = new_tensor_handle(import_dlpack(managed, flags));
  });
}

tileops_status* tileops_tensor_to_dlpack(const tileops_tensor* tensor, uint32_t flags, DLManagedTensor** managed) {
  return guarded([&] {
    require_pointer(managed, "managed");
    *managed = nullptr;
    require_pointer(tensor, "tensor");
    *managed = export_dlpack(tensor->tensor, flags);
  });
}

tileops_status* tileops_tensor_to_dlpack_versioned(const tileops_tensor* tensor, uint32_t max_major, uint32_t max_minor,
                                                   uint32_t flags, DLManagedTensorVersioned** managed) {
  return guarded([&] {
    require_pointer(managed, "managed");
    *managed = nullptr;
    require_pointer(tensor, "tensor");
    *managed = export_dlpack_versioned(tensor->tensor, DLPackVersion{max_major, max_minor}, flags);
  });
}

tileops_status* tileops_tensor_empty(const int64_t* shape, const int64_t* strides, int32_t ndim, const char* dtype,
                                     const char* device, tileops_tensor** tensor) {
  return guarded([&] {
    require_pointer(tensor, "tensor");
    *tensor = nullptr;
    if (ndim < 0 || ndim > kMaxRank) {
      throw ValueError("tileops_tensor_empty: ndim " + std::to_string(ndim) + " is outside 0 to " + std::to_string(kMaxRank));
    }
    if (ndim > 0) require_pointer(shape, "shape");
    const DType type = parse_dtype(checked_string(dtype, "dtype"));
    const Device where = Device::parse(checked_string(device, "device"));
    const ShapeView extents(shape, static_cast<std::size_t>(ndim));
    if (strides == nullptr) {
      *tensor = new_tensor_handle(Tensor::empty(extents, type, where));
      return;
    }
    const ShapeView steps(strides, static_cast<std::size_t>(ndim));
    const std::int64_t span = span_of(extents, steps, type);
    *tensor = new_tensor_handle(Tensor::empty(Shape{span}, type, where).as_strided(extents, steps, 0));
  });
}

tileops_status* tileops_tensor_get_info(const tileops_tensor* tensor, tileops_tensor_info* info) {
  return guarded([&] {
    require_pointer(tensor, "tensor");
    require_pointer(info, "info");
    check_output_struct_size(info->struct_size, sizeof *info, "tileops_tensor_info");
    const Tensor& t = tensor->tensor;
    info->dtype = dtype_name(t.dtype()).data();
    info->ndim = static_cast<int32_t>(t.dim());
    info->shape = t.shape().data();
    info->strides = t.strides().data();
    info->device_type = tensor->device_type.c_str();
    info->device_index = t.device().index();
    info->data = t.data_ptr();
    info->read_only = t.storage() && t.storage()->read_only() ? 1 : 0;
  });
}

void tileops_tensor_free(tileops_tensor* tensor) { delete tensor; }

}  // extern "C"

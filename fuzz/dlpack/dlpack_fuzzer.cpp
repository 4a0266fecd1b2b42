// DLPack import: the input decodes into a DLManagedTensor (dtype, device, ndim, shape and
// strides arrays, byte_offset, and a data pointer that is null, inside a real heap buffer, or
// an arbitrary address). An accepted tensor whose byte range lies inside the buffer is read
// element by element (AddressSanitizer checks every read stays in the buffer) and exported
// back; the deleter must have run exactly once when the last view is gone, and never when the
// import was refused. Any tileops::Error is a refusal; anything else is a finding.
#include <fuzzer/FuzzedDataProvider.h>

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "tileops/dlpack.hpp"
#include "tileops/errors.hpp"

namespace {

constexpr std::size_t kMaxBuffer = 4096;
constexpr std::int64_t kMaxRead = 4096;

constexpr std::int64_t kExtents[] = {0, 1, 2, 3, 4, 7, 8, 64, 4096, std::int64_t{1} << 31, std::int64_t{1} << 32,
                                     std::int64_t{1} << 62, std::numeric_limits<std::int64_t>::max(),
                                     std::numeric_limits<std::int64_t>::min(), -1, -2};

std::int64_t extent(FuzzedDataProvider& in) {
  if (in.ConsumeBool()) return in.PickValueInArray(kExtents);
  return in.ConsumeIntegral<std::int64_t>();
}

DLDataType dtype(FuzzedDataProvider& in) {
  static constexpr DLDataType kValid[] = {{kDLFloat, 32, 1}, {kDLFloat, 16, 1}, {kDLFloat, 64, 1}, {kDLBfloat, 16, 1},
                                          {kDLInt, 8, 1},    {kDLInt, 32, 1},   {kDLInt, 64, 1},   {kDLUInt, 8, 1},
                                          {6, 8, 1}};
  if (in.ConsumeBool()) return in.PickValueInArray(kValid);
  DLDataType t{};
  t.code = in.ConsumeIntegral<std::uint8_t>();
  t.bits = in.ConsumeIntegral<std::uint8_t>();
  t.lanes = in.ConsumeIntegral<std::uint16_t>();
  return t;
}

DLDevice device(FuzzedDataProvider& in) {
  static constexpr std::int32_t kCodes[] = {kDLCPU, kDLCPU, kDLCPU, kDLCUDA, kDLROCM, kDLCUDAHost, kDLExtDev, 0, 99};
  const std::int32_t code = in.ConsumeBool() ? in.PickValueInArray(kCodes) : in.ConsumeIntegral<std::int32_t>();
  DLDevice d{};
  std::memcpy(&d.device_type, &code, sizeof code);
  static constexpr int kIds[] = {0, 0, 0, 1, -1, 7};
  d.device_id = in.ConsumeBool() ? in.PickValueInArray(kIds) : in.ConsumeIntegral<int>();
  return d;
}

struct Producer {
  int deletions = 0;
  DLManagedTensor managed{};
};

[[noreturn]] void broken(const char* what) {
  __builtin_printf("dlpack_fuzzer: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const std::size_t buffer_size = in.ConsumeIntegralInRange<std::size_t>(0, kMaxBuffer);
  const auto buffer = std::make_unique<std::uint8_t[]>(buffer_size);

  Producer producer;
  DLTensor& t = producer.managed.dl_tensor;
  t.dtype = dtype(in);
  t.device = device(in);
  t.ndim = in.ConsumeBool() ? in.ConsumeIntegralInRange<int>(-2, 9) : in.ConsumeIntegral<int>();
  // Arrays as long as ndim says, up to one past the largest ndim the importer may accept: a
  // longer ndim must be refused before either array is read.
  const std::size_t entries = t.ndim <= 0 ? 0 : std::min<std::size_t>(static_cast<std::size_t>(t.ndim), 65);
  std::vector<std::int64_t> shape(entries);
  std::vector<std::int64_t> strides(entries);
  for (auto& d : shape) d = in.ConsumeBool() ? in.ConsumeIntegralInRange<std::int64_t>(0, 8) : extent(in);
  const bool null_shape = in.ConsumeProbability<float>() < 0.05f;
  const bool null_strides = in.ConsumeBool();
  for (auto& s : strides) s = in.ConsumeBool() ? in.ConsumeIntegralInRange<std::int64_t>(0, 64) : extent(in);
  t.shape = null_shape ? nullptr : shape.data();
  t.strides = null_strides ? nullptr : strides.data();
  t.byte_offset = in.ConsumeBool() ? in.ConsumeIntegralInRange<std::uint64_t>(0, kMaxBuffer) : in.ConsumeIntegral<std::uint64_t>();
  const int where = in.ConsumeIntegralInRange(0, 9);
  std::uint8_t* begin = buffer.get();
  if (where == 0) {
    t.data = nullptr;
  } else if (where == 1) {
    t.data = reinterpret_cast<void*>(in.ConsumeIntegral<std::uintptr_t>());
  } else {
    t.data = begin + in.ConsumeIntegralInRange<std::size_t>(0, buffer_size);
  }
  producer.managed.manager_ctx = &producer;
  producer.managed.deleter = [](DLManagedTensor* self) { ++static_cast<Producer*>(self->manager_ctx)->deletions; };

  try {
    tileops::Tensor tensor = tileops::from_dlpack(&producer.managed);
    if (producer.deletions != 0) broken("the deleter ran while the tensor is alive");
    const auto first = reinterpret_cast<std::uintptr_t>(tensor.data_ptr());
    const auto lo = reinterpret_cast<std::uintptr_t>(begin);
    const std::size_t nbytes = tensor.storage()->nbytes();
    const bool inside = where >= 2 && first >= lo && first - lo <= buffer_size && nbytes <= buffer_size - (first - lo);
    if (inside && tensor.device().is_cpu() && tensor.numel() <= kMaxRead) {
      tensor.to_doubles();
      // The versioned export takes every dtype (the legacy one refuses bool).
      DLManagedTensorVersioned* exported = tileops::to_dlpack_versioned(tensor);
      const tileops::Tensor back = tileops::from_dlpack(exported);
      if (back.shape() != tensor.shape() || back.strides() != tensor.strides() || back.data_ptr() != tensor.data_ptr()) {
        broken("a round trip through to_dlpack_versioned changed the tensor");
      }
    }
    tensor = tileops::Tensor();
    if (producer.deletions != 1) broken("the deleter did not run exactly once after the last view");
  } catch (const tileops::Error&) {
    if (producer.deletions != 0) broken("the deleter ran although the import was refused");
  }
  return 0;
}

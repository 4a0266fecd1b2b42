#include "tileops/tensor.hpp"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "runtime/runtime_call.hpp"
#include "runtime/runtime_registry.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/cache_key.hpp"
#include "tileops/extend/device_runtime.hpp"

namespace tileops {

namespace {

void require_writable(const Tensor& t, const char* what) {
  if (t.storage() && t.storage()->read_only()) {
    throw ValueError(std::string("Tensor::") + what + ": " + t.str() +
                     " is read-only (imported from DLPack with DLPACK_FLAG_BITMASK_READ_ONLY)");
  }
}

void require_host(const Tensor& t, const char* what) {
  if (t.device().is_meta()) {
    throw RuntimeError(std::string("Tensor::") + what + " cannot read or write a meta tensor " + t.str() +
                       ": meta tensors carry no data");
  }
  if (!t.device().is_cpu()) {
    DeviceRuntime* rt = find_device_runtime(t.device().type());
    if (rt == nullptr || !rt->host_accessible()) {
      throw RuntimeError(std::string("Tensor::") + what + " needs host-accessible memory, but " + t.str() +
                         " is on " + t.device().str() + "; copy it with .to(Device::cpu()) first");
    }
  }
}

double load(const std::byte* p, DType dtype) {
  switch (dtype) {
    case DType::bool_: return *reinterpret_cast<const std::uint8_t*>(p) != 0 ? 1.0 : 0.0;
    case DType::int8: return *reinterpret_cast<const std::int8_t*>(p);
    case DType::uint8: return *reinterpret_cast<const std::uint8_t*>(p);
    case DType::int32: return *reinterpret_cast<const std::int32_t*>(p);
    case DType::int64: return static_cast<double>(*reinterpret_cast<const std::int64_t*>(p));
    case DType::float16: return Half::to_float(*reinterpret_cast<const std::uint16_t*>(p));
    case DType::bfloat16: return BFloat16::to_float(*reinterpret_cast<const std::uint16_t*>(p));
    case DType::float32: return *reinterpret_cast<const float*>(p);
    case DType::float64: return *reinterpret_cast<const double*>(p);
  }
  return 0;
}

void store(std::byte* p, DType dtype, double v) {
  switch (dtype) {
    case DType::bool_: *reinterpret_cast<std::uint8_t*>(p) = v != 0.0; break;
    case DType::int8: *reinterpret_cast<std::int8_t*>(p) = static_cast<std::int8_t>(v); break;
    case DType::uint8: *reinterpret_cast<std::uint8_t*>(p) = static_cast<std::uint8_t>(v); break;
    case DType::int32: *reinterpret_cast<std::int32_t*>(p) = static_cast<std::int32_t>(v); break;
    case DType::int64: *reinterpret_cast<std::int64_t*>(p) = static_cast<std::int64_t>(v); break;
    case DType::float16: *reinterpret_cast<std::uint16_t*>(p) = Half::from_float(static_cast<float>(v)); break;
    case DType::bfloat16:
      *reinterpret_cast<std::uint16_t*>(p) = BFloat16::from_float(static_cast<float>(v));
      break;
    case DType::float32: *reinterpret_cast<float*>(p) = static_cast<float>(v); break;
    case DType::float64: *reinterpret_cast<double*>(p) = v; break;
  }
}

// Element offset (in elements, from the storage base) of row-major linear index `i`.
std::int64_t element_offset(const Shape& shape, const Strides& strides, std::int64_t base, std::int64_t i) {
  std::int64_t off = base;
  for (std::size_t d = shape.size(); d-- > 0;) {
    const std::int64_t extent = shape[d];
    off += (i % extent) * strides[d];
    i /= extent;
  }
  return off;
}

// Calls fn(offset) for every element in row-major order, offsets as element_offset gives them,
// stepping through the strides once rather than dividing per element. It never steps past an
// axis's last index: an extent-1 axis may carry any stride, and one step along it would overflow.
template <class Fn>
void for_each_element_offset(const Shape& shape, const Strides& strides, std::int64_t base, Fn&& fn) {
  const std::size_t rank = shape.size();
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return;
  const std::int64_t inner = rank == 0 ? 1 : shape[rank - 1];
  const std::int64_t inner_stride = rank == 0 ? 0 : strides[rank - 1];
  std::vector<std::int64_t> index(rank, 0);
  std::int64_t off = base;
  for (;;) {
    for (std::int64_t k = 0; k < inner; ++k) fn(off + k * inner_stride);
    std::size_t d = rank == 0 ? 0 : rank - 1;
    for (;;) {
      if (d == 0) return;
      --d;
      if (index[d] + 1 < shape[d]) {
        ++index[d];
        off += strides[d];
        break;
      }
      off -= index[d] * strides[d];
      index[d] = 0;
    }
  }
}

std::int64_t normalize_axis(std::int64_t axis, std::int64_t rank, const char* what) {
  const std::int64_t lo = rank == 0 ? -1 : -rank;
  const std::int64_t hi = rank == 0 ? 1 : rank;
  if (axis < lo || axis >= hi) {
    throw ValueError(std::string("Tensor::") + what + ": axis " + std::to_string(axis) +
                     " is out of range for a tensor of rank " + std::to_string(rank) + " (expected [" +
                     std::to_string(lo) + ", " + std::to_string(hi) + "))");
  }
  return axis < 0 ? axis + std::max<std::int64_t>(rank, 1) : axis;
}

template <class F>
void with_element_type(DType dtype, F&& f) {
  switch (dtype) {
    case DType::bool_: f(std::uint8_t{}); break;
    case DType::int8: f(std::int8_t{}); break;
    case DType::uint8: f(std::uint8_t{}); break;
    case DType::int32: f(std::int32_t{}); break;
    case DType::int64: f(std::int64_t{}); break;
    case DType::float16: f(Half{}); break;
    case DType::bfloat16: f(BFloat16{}); break;
    case DType::float32: f(float{}); break;
    case DType::float64: f(double{}); break;
  }
}

template <class T>
double widen(T v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return static_cast<float>(v);
  } else {
    return static_cast<double>(v);
  }
}

// Converts n contiguous host elements between dtypes with the same rounding as set().
void convert_contiguous(const void* src, DType from, void* dst, DType to, std::int64_t n) {
  with_element_type(from, [&](auto src_tag) {
    using S = decltype(src_tag);
    const S* in = static_cast<const S*>(src);
    with_element_type(to, [&](auto dst_tag) {
      using D = decltype(dst_tag);
      D* out = static_cast<D*>(dst);
      for (std::int64_t i = 0; i < n; ++i) {
        const double v = widen(in[i]);
        if constexpr (std::is_same_v<D, Half> || std::is_same_v<D, BFloat16>) {
          out[i] = D(static_cast<float>(v));
        } else if constexpr (std::is_same_v<D, std::uint8_t>) {
          out[i] = to == DType::bool_ ? static_cast<std::uint8_t>(v != 0.0) : static_cast<std::uint8_t>(v);
        } else {
          out[i] = static_cast<D>(v);
        }
      }
    });
  });
}

// A host copy of the whole storage under `t`, viewed with t's shape, strides and offset.
Tensor host_mirror(const Tensor& t) {
  const Storage& dev = *t.storage();
  auto host = Storage::allocate(dev.nbytes(), Device::cpu());
  DeviceRuntime& rt = device_runtime(t.device().type());
  call_runtime(rt, "copy_to_host", [&] { rt.copy_to_host(host->data(), dev.data(), dev.nbytes(), t.device().index()); });
  return Tensor::from_storage(std::move(host), t.shape(), t.strides(), t.offset(), t.dtype());
}

}  // namespace

Storage::Storage(void* data, std::size_t nbytes, Device device, Deleter deleter)
    : data_(data), nbytes_(nbytes), device_(device), deleter_(std::move(deleter)) {}

Storage::Storage(void* data, std::size_t nbytes, Device device, std::shared_ptr<DeviceRuntime> runtime,
                 void* stream)
    : data_(data), nbytes_(nbytes), device_(device), runtime_(std::move(runtime)), stream_(stream) {}

std::shared_ptr<Storage> Storage::allocate(std::size_t nbytes, Device device) {
  std::shared_ptr<DeviceRuntime> rt = device_runtime_shared(device.type());
  void* stream = nullptr;
  void* p = call_runtime(*rt, "allocate", [&]() -> void* {
    stream = rt->current_stream(device.index());
    try {
      return rt->allocate_async(nbytes, device.index(), stream);
    } catch (const std::bad_alloc&) {
      throw OutOfMemoryError(device.str() + " cannot allocate " + std::to_string(nbytes) + " bytes: " +
                             runtime_fault_where(*rt, "allocate") + " ran out of memory");
    }
  });
  if (p == nullptr && nbytes > 0 && !device.is_meta()) {
    throw OutOfMemoryError("the " + std::string(device.type().name()) + " runtime returned no memory for " +
                           std::to_string(nbytes) + " bytes on " + device.str());
  }
  try {
    return std::make_shared<Storage>(p, nbytes, device, rt, stream);
  } catch (...) {
    rt->deallocate_async(p, nbytes, device.index(), stream);
    throw;
  }
}

Storage::~Storage() {
  if (runtime_) {
    if (data_ != nullptr) runtime_->deallocate_async(data_, nbytes_, device_.index(), stream_);
  } else if (deleter_) {
    deleter_(data_);  // foreign memory: its owner is told even when it holds no bytes
  }
}

Tensor::Tensor(std::unique_ptr<Impl> impl) : bits_(reinterpret_cast<std::uintptr_t>(impl.release())) {
  Impl& i = *ptr();
  i.contiguous = true;
  std::int64_t expected = 1;
  for (std::size_t d = i.shape.size(); d-- > 0;) {
    if (i.shape[d] == 1) continue;
    if (i.shape[d] == 0) break;
    if (i.strides[d] != expected) {
      i.contiguous = false;
      break;
    }
    expected *= i.shape[d];
  }
  std::size_t h = hash_combine(cache_key_hash(i.dtype), std::hash<Device>{}(i.device));
  h = hash_combine(h, i.contiguous ? 1 : 2);
  for (std::int64_t d : i.shape) h = hash_combine(h, static_cast<std::size_t>(d));
  i.facts_hash = h;
}

Tensor Tensor::empty(ShapeView shape, DType dtype, Device device) {
  const std::int64_t bytes = shape_nbytes(shape, dtype_size(dtype), "Tensor::empty: the new tensor");
  auto impl = std::make_unique<Impl>();
  impl->shape.assign(shape.begin(), shape.end());
  impl->strides = contiguous_strides(shape);
  impl->dtype = dtype;
  impl->device = device;
  if (!device.is_meta()) {
    impl->storage = Storage::allocate(static_cast<std::size_t>(bytes), device);
  }
  return Tensor(std::move(impl));
}

Tensor Tensor::zeros(ShapeView shape, DType dtype, Device device) {
  Tensor t = empty(shape, dtype, device);
  if (t.nbytes() == 0 || device.is_meta()) return t;
  if (device.is_cpu() || device_runtime(device.type()).host_accessible()) {
    std::memset(t.data_ptr(), 0, t.nbytes());
  } else {
    const Tensor zero = zeros(shape, dtype, Device::cpu());
    DeviceRuntime& rt = device_runtime(device.type());
    call_runtime(rt, "copy_from_host", [&] { rt.copy_from_host(t.data_ptr(), zero.data_ptr(), zero.nbytes(), device.index()); });
  }
  return t;
}

void Tensor::check_view(ShapeView shape, ShapeView strides, std::int64_t offset, DType dtype,
                        std::optional<std::size_t> storage_bytes, std::string_view what) {
  // Messages are built only on failure: as_strided runs on call paths.
  const auto where = [&] { return std::string(what) + ": shape " + shape_str(shape) + " with strides " + shape_str(strides); };
  if (shape.size() != strides.size()) throw ValueError(where() + " differ in rank");
  const std::size_t elem_size = dtype_size(dtype);
  if (!shape_fits(shape, elem_size)) throw_bad_shape(shape, std::string(what) + ": the view", elem_size);
  const auto elem = static_cast<std::int64_t>(elem_size);
  std::int64_t offset_bytes = 0;
  if (offset < 0 || !mul_fits(offset, elem, offset_bytes)) {
    throw ValueError(std::string(what) + ": offset " + std::to_string(offset) + " is not an element offset from 0 to " +
                     std::to_string(kMaxTensorBytes / elem));
  }
  for (std::int64_t s : strides) {
    if (s < 0) throw ValueError(where() + " has a negative stride; strides are at least 0");
  }
  if (shape_numel(shape) == 0) return;
  // The last element the view reaches, and the byte just past it.
  std::int64_t last = offset;
  bool fits = true;
  for (std::size_t d = 0; d < shape.size() && fits; ++d) {
    std::int64_t reach = 0;
    fits = mul_fits(shape[d] - 1, strides[d], reach) && add_fits(last, reach, last);
  }
  std::int64_t end = 0;
  fits = fits && add_fits(last, 1, end) && mul_fits(end, elem, end);
  if (!fits) {
    throw ValueError(where() + " from offset " + std::to_string(offset) + " reaches beyond " +
                     std::to_string(kMaxTensorBytes) + " bytes, the most a tensor may span");
  }
  if (storage_bytes && static_cast<std::uint64_t>(end) > *storage_bytes) {
    throw ValueError(where() + " from offset " + std::to_string(offset) + " reaches byte " + std::to_string(end) +
                     ", beyond the " + std::to_string(*storage_bytes) + " bytes of its storage");
  }
}

Tensor Tensor::from_storage(std::shared_ptr<Storage> storage, ShapeView shape,
                            ShapeView strides, std::int64_t offset, DType dtype) {
  if (!storage) throw ValueError("Tensor::from_storage: the storage is null");
  check_view(shape, strides, offset, dtype, storage->nbytes(), "Tensor::from_storage");
  auto impl = std::make_unique<Impl>();
  impl->device = storage->device();
  impl->storage = std::move(storage);
  impl->shape.assign(shape.begin(), shape.end());
  impl->strides.assign(strides.begin(), strides.end());
  impl->offset = offset;
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

Tensor Tensor::from_doubles(std::span<const double> values, ShapeView shape, DType dtype) {
  if (static_cast<std::int64_t>(values.size()) != shape_numel(shape)) {
    throw ValueError("Tensor::from_doubles: " + std::to_string(values.size()) + " values do not fill shape " +
                     shape_str(shape) + " (" + std::to_string(shape_numel(shape)) + " elements)");
  }
  Tensor t = empty(shape, dtype, Device::cpu());
  auto* base = static_cast<std::byte*>(t.data_ptr());
  for (std::size_t i = 0; i < values.size(); ++i) store(base + i * dtype_size(dtype), dtype, values[i]);
  return t;
}

void Tensor::throw_undefined() { throw RuntimeError("Tensor::access called on an undefined tensor"); }

const std::shared_ptr<Storage>& Tensor::storage() const { return impl().storage; }

std::int64_t Tensor::size(std::int64_t axis) const {
  const Impl& i = impl();
  if (i.shape.empty()) throw ValueError("Tensor::size: a rank-0 tensor has no axes");
  return i.shape[static_cast<std::size_t>(normalize_axis(axis, dim(), "size"))];
}

Tensor Tensor::contiguous() const { return is_contiguous() ? *this : clone(); }

Tensor Tensor::clone() const {
  Tensor out = empty(shape(), dtype(), device());
  if (!device().is_meta()) out.copy_from(*this);
  return out;
}

Tensor Tensor::to(const Device& device) const {
  if (device == this->device()) return *this;
  Tensor out = empty(shape(), dtype(), device);
  if (!device.is_meta()) out.copy_from(*this);
  return out;
}

Tensor Tensor::to(DType target) const {
  if (target == dtype()) return *this;
  if (device().is_meta()) return empty(shape(), target, device());
  Tensor out = empty(shape(), target, device());
  out.copy_from(*this);
  return out;
}

Tensor Tensor::view(ShapeView new_shape) const {
  if (!is_contiguous()) throw ValueError("Tensor::view needs a contiguous tensor; " + str() + " is not");
  if (shape_numel(new_shape, "Tensor::view: the view") != numel()) {
    throw ValueError("Tensor::view: shape " + shape_str(new_shape) + " does not hold the " +
                     std::to_string(numel()) + " elements of " + str());
  }
  auto impl = std::make_unique<Impl>(this->impl());
  impl->shape.assign(new_shape.begin(), new_shape.end());
  impl->strides = contiguous_strides(new_shape);
  return Tensor(std::move(impl));
}

Tensor Tensor::transpose(std::int64_t a, std::int64_t b) const {
  const auto ra = static_cast<std::size_t>(normalize_axis(a, dim(), "transpose"));
  const auto rb = static_cast<std::size_t>(normalize_axis(b, dim(), "transpose"));
  auto impl = std::make_unique<Impl>(this->impl());
  std::swap(impl->shape[ra], impl->shape[rb]);
  std::swap(impl->strides[ra], impl->strides[rb]);
  return Tensor(std::move(impl));
}

Tensor Tensor::slice(std::int64_t axis, std::int64_t start, std::int64_t stop, std::int64_t step) const {
  const auto ax = static_cast<std::size_t>(normalize_axis(axis, dim(), "slice"));
  const std::int64_t extent = shape()[ax];
  if (step <= 0) throw ValueError("Tensor::slice: step must be positive, got " + std::to_string(step));
  if (start < 0) start += extent;
  if (stop < 0) stop += extent;
  start = std::clamp<std::int64_t>(start, 0, extent);
  stop = std::clamp<std::int64_t>(stop, start, extent);
  auto impl = std::make_unique<Impl>(this->impl());
  const std::int64_t extent_out = stop == start ? 0 : (stop - start - 1) / step + 1;
  impl->offset = checked_add(impl->offset, checked_mul(start, impl->strides[ax], "Tensor::slice: offset"),
                             "Tensor::slice: offset");
  impl->shape[ax] = extent_out;
  if (extent_out > 1) impl->strides[ax] = checked_mul(impl->strides[ax], step, "Tensor::slice: stride");
  return Tensor(std::move(impl));
}

Tensor Tensor::as_strided(ShapeView new_shape, ShapeView new_strides,
                          std::int64_t new_offset) const {
  const auto& storage = impl().storage;
  check_view(new_shape, new_strides, new_offset, dtype(),
             storage ? std::optional<std::size_t>(storage->nbytes()) : std::nullopt, "Tensor::as_strided");
  auto impl = std::make_unique<Impl>(this->impl());
  impl->shape.assign(new_shape.begin(), new_shape.end());
  impl->strides.assign(new_strides.begin(), new_strides.end());
  impl->offset = new_offset;
  return Tensor(std::move(impl));
}

double Tensor::get(std::int64_t index) const {
  require_host(*this, "get");
  const Impl& i = impl();
  if (index < 0 || index >= numel()) {
    throw ValueError("Tensor::get: index " + std::to_string(index) + " is outside [0, " + std::to_string(numel()) + ")");
  }
  const std::int64_t off = element_offset(i.shape, i.strides, i.offset, index);
  return load(static_cast<const std::byte*>(i.storage->data()) + off * static_cast<std::int64_t>(dtype_size(i.dtype)),
              i.dtype);
}

void Tensor::set(std::int64_t index, double value) const {
  require_host(*this, "set");
  require_writable(*this, "set");
  const Impl& i = impl();
  if (index < 0 || index >= numel()) {
    throw ValueError("Tensor::set: index " + std::to_string(index) + " is outside [0, " + std::to_string(numel()) + ")");
  }
  const std::int64_t off = element_offset(i.shape, i.strides, i.offset, index);
  store(static_cast<std::byte*>(i.storage->data()) + off * static_cast<std::int64_t>(dtype_size(i.dtype)), i.dtype,
        value);
}

std::vector<double> Tensor::to_doubles() const {
  if (!device().is_cpu() && !device().is_meta()) {
    DeviceRuntime* rt = find_device_runtime(device().type());
    if (rt == nullptr || !rt->host_accessible()) return to(Device::cpu()).to_doubles();
  }
  if (numel() == 0) return {};
  require_host(*this, "to_doubles");
  const Impl& i = impl();
  const auto* data = static_cast<const std::byte*>(i.storage->data());
  const auto size = static_cast<std::int64_t>(dtype_size(i.dtype));
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(numel()));
  for_each_element_offset(i.shape, i.strides, i.offset,
                          [&](std::int64_t off) { out.push_back(load(data + off * size, i.dtype)); });
  return out;
}

void Tensor::fill(double value) const {
  require_host(*this, "fill");
  require_writable(*this, "fill");
  const Impl& i = impl();
  auto* data = static_cast<std::byte*>(i.storage->data());
  const auto size = static_cast<std::int64_t>(dtype_size(i.dtype));
  for_each_element_offset(i.shape, i.strides, i.offset, [&](std::int64_t off) { store(data + off * size, i.dtype, value); });
}

void Tensor::copy_from(const Tensor& src) const {
  require_writable(*this, "copy_from");
  if (src.shape() != shape()) {
    throw ValueError("Tensor::copy_from: source " + src.str() + " and destination " + str() + " differ in shape");
  }
  if (numel() == 0) return;
  const bool same_layout = src.dtype() == dtype() && src.is_contiguous() && is_contiguous();
  const bool dst_host = device().is_cpu() || device_runtime(device().type()).host_accessible();
  const bool src_host = src.device().is_cpu() || device_runtime(src.device().type()).host_accessible();
  if (same_layout) {
    if (dst_host && src_host) {
      std::memmove(data_ptr(), src.data_ptr(), nbytes());
    } else if (src.device() == device()) {
      DeviceRuntime& rt = device_runtime(device().type());
      call_runtime(rt, "copy_on_device", [&] { rt.copy_on_device(data_ptr(), src.data_ptr(), nbytes(), device().index()); });
    } else if (dst_host) {
      DeviceRuntime& rt = device_runtime(src.device().type());
      call_runtime(rt, "copy_to_host",
                   [&] { rt.copy_to_host(data_ptr(), src.data_ptr(), nbytes(), src.device().index()); });
    } else if (src_host) {
      DeviceRuntime& rt = device_runtime(device().type());
      call_runtime(rt, "copy_from_host", [&] { rt.copy_from_host(data_ptr(), src.data_ptr(), nbytes(), device().index()); });
    } else {
      if (src.device().type() == device().type()) {
        DeviceRuntime& rt = device_runtime(device().type());
        const bool copied = call_runtime(rt, "copy_between_devices", [&] {
          return rt.copy_between_devices(data_ptr(), device().index(), src.data_ptr(), src.device().index(), nbytes());
        });
        if (copied) return;
      }
      Tensor staged = src.to(Device::cpu());
      copy_from(staged);
    }
    return;
  }
  if (dst_host && src_host && src.is_contiguous() && is_contiguous()) {
    convert_contiguous(src.data_ptr(), src.dtype(), data_ptr(), dtype(), numel());
    return;
  }
  if (!dst_host && src.device() == device() && src.dtype() == dtype()) {
    const DeviceRuntime::StridedCopy copy{data_ptr(), src.data_ptr(), shape(), strides(), src.strides(),
                                          dtype_size(dtype())};
    DeviceRuntime& rt = device_runtime(device().type());
    if (call_runtime(rt, "copy_strided", [&] { return rt.copy_strided(copy, device().index()); })) return;
  }
  // Layout or dtype differ: convert element by element on the host, mirroring a device-side
  // tensor's whole storage so that its strides stay valid.
  const Tensor host_src = src_host ? src : host_mirror(src);
  const Tensor host_dst = dst_host ? *this : host_mirror(*this);
  for (std::int64_t k = 0; k < numel(); ++k) host_dst.set(k, host_src.get(k));
  if (!dst_host) {
    const Storage& dev = *storage();
    DeviceRuntime& rt = device_runtime(device().type());
    call_runtime(rt, "copy_from_host",
                 [&] { rt.copy_from_host(dev.data(), host_dst.storage()->data(), dev.nbytes(), device().index()); });
  }
}

std::string Tensor::str() const {
  if (!defined()) return "Tensor(undefined)";
  std::ostringstream os;
  os << "Tensor(" << dtype() << shape_str(shape()) << ", " << device() << ")";
  return os.str();
}

}  // namespace tileops

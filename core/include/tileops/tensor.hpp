// Tensors: a reference-counted handle to storage with a shape, strides, an offset, a dtype
// and a device.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tileops/device.hpp"
#include "tileops/dtype.hpp"
#include "tileops/export.hpp"
#include "tileops/half.hpp"
#include "tileops/shape.hpp"

namespace tileops {

// A block of device memory and the way to release it. Several tensors may view one storage.
class DeviceRuntime;

class TILEOPS_API Storage {
 public:
  using Deleter = std::function<void(void*)>;

  // Takes ownership of `data` (`nbytes` on `device`); `deleter` releases it, or nothing does
  // when it is empty (borrowed memory).
  Storage(void* data, std::size_t nbytes, Device device, Deleter deleter);
  // Memory from `runtime`'s allocate_async() on `stream` (allocate() when stream is nullptr),
  // released through its deallocate_async() on the same stream.
  Storage(void* data, std::size_t nbytes, Device device, std::shared_ptr<DeviceRuntime> runtime,
          void* stream = nullptr);
  // Allocates `nbytes` through the device's runtime, ordered on the calling thread's current
  // stream of that device. Throws OutOfMemoryError naming the device and the byte count when
  // the runtime has no memory for it (a std::bad_alloc of the runtime included).
  static std::shared_ptr<Storage> allocate(std::size_t nbytes, Device device);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  std::size_t nbytes() const { return nbytes_; }
  const Device& device() const { return device_; }

  // Memory its producer lent for reading only (a DLPack import flagged read-only): the call
  // check refuses an op call that would write it, and set(), fill() and copy_from() refuse it.
  bool read_only() const { return read_only_; }
  void set_read_only() { read_only_ = true; }

 private:
  void* data_;
  std::size_t nbytes_;
  Device device_;
  std::shared_ptr<DeviceRuntime> runtime_;
  void* stream_ = nullptr;  // the stream the runtime allocated on, and releases on
  Deleter deleter_;
  bool read_only_ = false;
};

// A tensor handle. Copying a Tensor copies the handle, not the data. A default-constructed
// Tensor is undefined: it stands for an absent optional tensor.
class TILEOPS_API Tensor {
 public:
  Tensor() = default;
  // A copy is an owning handle, also when `other` is borrowed (see borrowed()).
  Tensor(const Tensor& other) noexcept : bits_(other.bits_ & ~kBorrowed) { retain(); }
  Tensor& operator=(const Tensor& other) noexcept {
    Tensor copy(other);
    std::swap(bits_, copy.bits_);
    return *this;
  }
  // Moving transfers the handle as it is: a moved borrowed handle stays borrowed.
  Tensor(Tensor&& other) noexcept : bits_(std::exchange(other.bits_, 0)) {}
  Tensor& operator=(Tensor&& other) noexcept {
    if (this != &other) {
      release();
      bits_ = std::exchange(other.bits_, 0);
    }
    return *this;
  }
  ~Tensor() { release(); }

  // A handle to this tensor that holds no reference to it, so that making and dropping it
  // touches no reference count (the generated call operators pass their arguments so). It is
  // valid while this tensor object lives; every copy made of it is an ordinary owning handle,
  // so what a call keeps or returns of its arguments outlives the call.
  Tensor borrowed() const noexcept {
    Tensor lent;
    if (bits_ != 0) lent.bits_ = bits_ | kBorrowed;
    return lent;
  }
  // True for a handle made by borrowed() (or moved from one).
  bool is_borrowed() const noexcept { return (bits_ & kBorrowed) != 0; }

  // A new contiguous tensor with uninitialised contents. meta tensors get no storage. Throws
  // ValueError naming the shape and the limit when an extent is negative or the tensor would
  // span more than kMaxTensorBytes (see shape_nbytes), OutOfMemoryError naming the device and
  // the byte count when the device cannot provide the memory.
  static Tensor empty(ShapeView shape, DType dtype, Device device = Device::cpu());
  // A new contiguous tensor filled with zeros (any host-accessible or plugin device).
  static Tensor zeros(ShapeView shape, DType dtype, Device device = Device::cpu());
  // A view of existing memory; `storage` keeps it alive. Strides and offset are in elements.
  // Throws ValueError when the view fails check_view against the storage's bytes.
  static Tensor from_storage(std::shared_ptr<Storage> storage, ShapeView shape,
                             ShapeView strides, std::int64_t offset, DType dtype);
  // A new cpu tensor holding `values` converted to `dtype`.
  static Tensor from_doubles(std::span<const double> values, ShapeView shape,
                             DType dtype);

  // Throws ValueError naming `what` unless a view of `shape` with `strides` (in elements, each at
  // least 0) from element `offset` (at least 0) of `dtype` is one a tensor may have: its element
  // count and the bytes it reaches fit in kMaxTensorBytes, and, when `storage_bytes` is given,
  // every element it addresses lies inside that many bytes. from_storage and as_strided make
  // this check; importers make it before taking ownership of foreign memory.
  static void check_view(ShapeView shape, ShapeView strides, std::int64_t offset, DType dtype,
                         std::optional<std::size_t> storage_bytes, std::string_view what);

  bool defined() const { return bits_ != 0; }
  explicit operator bool() const { return defined(); }

  // The accessors throw RuntimeError on an undefined tensor.
  const Shape& shape() const;
  const Strides& strides() const;
  std::int64_t dim() const { return static_cast<std::int64_t>(shape().size()); }
  // Extent of axis `axis` (negative counts from the end).
  std::int64_t size(std::int64_t axis) const;
  std::int64_t offset() const;
  DType dtype() const;
  const Device& device() const;
  std::int64_t numel() const;
  std::size_t nbytes() const { return static_cast<std::size_t>(shape_nbytes(shape(), dtype_size(dtype()))); }
  const std::shared_ptr<Storage>& storage() const;

  // Address of the first element; nullptr for meta tensors and empty storage.
  void* data_ptr() const;
  template <typename T>
  T* data() const {
    return static_cast<T*>(data_ptr());
  }

  bool is_contiguous() const;
  // A hash of what a call's signature check reads of a tensor (dtype, device, shape and
  // contiguity): tensors equal in those have equal hashes. Computed when the tensor is made.
  std::size_t facts_hash() const;
  // This tensor when contiguous, else a contiguous copy on the same device.
  Tensor contiguous() const;
  // The same without touching reference counts on the fast path: returns *this when
  // contiguous, else stores a contiguous copy in `copy` and returns it.
  const Tensor& contiguous(Tensor& copy) const {
    if (is_contiguous()) return *this;
    copy = contiguous();
    return copy;
  }
  // A copy on `device` (this tensor when already there).
  Tensor to(const Device& device) const;
  // A copy converted to `dtype` on the same device (through the host for device memory);
  // this tensor when the dtype is already `dtype`.
  Tensor to(DType dtype) const;
  // A new tensor with the same contents, contiguous, on the same device.
  Tensor clone() const;

  // Views (no copy). Each throws ValueError for a view that check_view rejects.
  Tensor view(ShapeView shape) const;  // requires contiguity
  Tensor transpose(std::int64_t a, std::int64_t b) const;
  Tensor slice(std::int64_t axis, std::int64_t start, std::int64_t stop, std::int64_t step = 1) const;
  Tensor as_strided(ShapeView shape, ShapeView strides,
                    std::int64_t offset) const;

  // Element access for host-accessible tensors, converting through double. `index` is a
  // linear index in row-major order of the logical shape (strides are honoured). set, fill and
  // copy_from throw ValueError on read-only storage (Storage::read_only).
  double get(std::int64_t index) const;
  void set(std::int64_t index, double value) const;
  // All elements in row-major order.
  std::vector<double> to_doubles() const;
  // Sets every element to `value` (host-accessible tensors only).
  void fill(double value) const;
  // Copies `src` (same shape; any device or dtype conversions through the host) into this
  // tensor, honouring both tensors' strides.
  void copy_from(const Tensor& src) const;

  // True when both handles are the same tensor object (same view of the same storage).
  bool is_same(const Tensor& other) const { return ptr() == other.ptr(); }
  // An address identifying the tensor object (equal iff is_same); null when undefined.
  const void* identity() const { return ptr(); }
  // True when the two tensors' memory ranges overlap.
  bool shares_storage_with(const Tensor& other) const;

  // "Tensor(float32[2, 3], cpu)".
  std::string str() const;

 private:
  struct Impl;
  // Takes a new, filled Impl (and its one reference) and sets its derived fields.
  explicit Tensor(std::unique_ptr<Impl> impl);
  const Impl& impl() const;
  Impl* ptr() const noexcept { return reinterpret_cast<Impl*>(bits_ & ~kBorrowed); }
  void retain() const noexcept;
  void release() noexcept;
  [[noreturn]] static void throw_undefined();

  // The Impl's address, its low bit set when the handle is borrowed (holds no reference).
  static constexpr std::uintptr_t kBorrowed = 1;
  std::uintptr_t bits_ = 0;
};

// Defined here so that the accessors and checks every op call uses inline.
struct Tensor::Impl {
  // User-provided, so that `new Impl()` does not zero the inline shape buffers first.
  Impl() noexcept {}

  // The handles that own this Impl. A copied Impl (a new view) starts with its own count of 1.
  struct RefCount {
    std::atomic<std::int64_t> n{1};
    RefCount() = default;
    RefCount(const RefCount&) noexcept {}
    RefCount& operator=(const RefCount&) = delete;
  };
  RefCount refs;
  std::shared_ptr<Storage> storage;
  Shape shape;
  Strides strides;
  std::int64_t offset = 0;
  DType dtype = DType::float32;
  Device device = Device::cpu();
  // Derived from the fields above when the tensor is made (they never change after that).
  bool contiguous = true;
  std::size_t facts_hash = 0;
};

inline const Tensor::Impl& Tensor::impl() const {
  Impl* p = ptr();
  if (p == nullptr) throw_undefined();
  return *p;
}

inline void Tensor::retain() const noexcept {
  if (bits_ != 0) ptr()->refs.n.fetch_add(1, std::memory_order_relaxed);
}

inline void Tensor::release() noexcept {
  if (bits_ == 0 || is_borrowed()) return;
  // acq_rel: the last owner's delete happens after every other owner's last use.
  if (ptr()->refs.n.fetch_sub(1, std::memory_order_acq_rel) == 1) delete ptr();
  bits_ = 0;
}

inline void* Tensor::data_ptr() const {
  const Impl& i = impl();
  if (!i.storage || i.storage->data() == nullptr) return nullptr;
  return static_cast<std::byte*>(i.storage->data()) + i.offset * static_cast<std::int64_t>(dtype_size(i.dtype));
}

inline const Shape& Tensor::shape() const { return impl().shape; }
inline const Strides& Tensor::strides() const { return impl().strides; }
inline std::int64_t Tensor::offset() const { return impl().offset; }
inline DType Tensor::dtype() const { return impl().dtype; }
inline const Device& Tensor::device() const { return impl().device; }
inline std::int64_t Tensor::numel() const { return shape_numel(impl().shape); }

inline bool Tensor::is_contiguous() const { return impl().contiguous; }
inline std::size_t Tensor::facts_hash() const { return impl().facts_hash; }

inline bool Tensor::shares_storage_with(const Tensor& other) const {
  if (!defined() || !other.defined()) return false;
  const auto& a = impl().storage;
  const auto& b = other.impl().storage;
  if (!a || !b || a->data() == nullptr || b->data() == nullptr) return false;
  if (a == b) return numel() > 0 && other.numel() > 0;
  if (a->device() != b->device()) return false;
  const auto* a0 = static_cast<const std::byte*>(a->data());
  const auto* b0 = static_cast<const std::byte*>(b->data());
  return a0 < b0 + b->nbytes() && b0 < a0 + a->nbytes();
}

// A description of a tensor, never the tensor: what target builders receive.
struct TILEOPS_API TensorSpec {
  Device device = Device::cpu();
  DType dtype = DType::float32;
  Shape shape;

  static TensorSpec of(const Tensor& t) { return {t.device(), t.dtype(), t.shape()}; }
  friend bool operator==(const TensorSpec& a, const TensorSpec& b) {
    return a.device == b.device && a.dtype == b.dtype && a.shape == b.shape;
  }
};

}  // namespace tileops

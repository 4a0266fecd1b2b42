#include "nccl_provider.hpp"

#include <cstring>

#include "tileops/errors.hpp"
#include "tileops/extend/device_runtime.hpp"
#include "tileops/logging.hpp"

namespace tileops::nccl {
namespace {

DataType data_type(DType dtype) {
  switch (dtype) {
    case DType::int8: return kInt8;
    case DType::uint8: return kUint8;
    case DType::int32: return kInt32;
    case DType::int64: return kInt64;
    case DType::float16: return kFloat16;
    case DType::bfloat16: return kBfloat16;
    case DType::float32: return kFloat32;
    case DType::float64: return kFloat64;
    default:
      throw TypeError("nccl: collectives do not take " + std::string(dtype_name(dtype)) +
                      "; expected int8, uint8, int32, int64, float16, bfloat16, float32 or float64");
  }
}

RedOp red_op(Reduction reduce) { return reduce == Reduction::max ? kMax : kSum; }

// Makes `index` the current device of `runtime` for its lifetime, when it is not already.
class OnDevice {
 public:
  OnDevice(DeviceRuntime& runtime, int index) : runtime_(runtime), previous_(runtime.current_device()) {
    if (previous_ != index) runtime_.set_current_device(index);
  }
  ~OnDevice() {
    try {
      if (runtime_.current_device() != previous_) runtime_.set_current_device(previous_);
    } catch (const std::exception& e) {
      log_message(LogLevel::warn, std::string("nccl: restoring the current device failed: ") + e.what());
    }
  }
  OnDevice(const OnDevice&) = delete;
  OnDevice& operator=(const OnDevice&) = delete;

 private:
  DeviceRuntime& runtime_;
  int previous_;
};

// One rank's NCCL communicator.
class Backend final : public CommunicatorBackend {
 public:
  Backend(const Api& api, Comm comm, DeviceRuntime& runtime, int index)
      : api_(api), comm_(comm), runtime_(runtime), index_(index) {}
  ~Backend() override {
    if (const Result r = api_.comm_destroy(comm_); r != kSuccess) {
      log_message(LogLevel::warn, "nccl: " + failure(api_, "ncclCommDestroy", r));
    }
  }
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  void all_reduce(const void* send, void* recv, std::size_t count, DType dtype, Reduction reduce, void* stream) override {
    OnDevice on(runtime_, index_);
    check("ncclAllReduce", api_.all_reduce(send, recv, count, data_type(dtype), red_op(reduce), comm_, stream));
  }
  void all_gather(const void* send, void* recv, std::size_t count, DType dtype, void* stream) override {
    OnDevice on(runtime_, index_);
    check("ncclAllGather", api_.all_gather(send, recv, count, data_type(dtype), comm_, stream));
  }
  void reduce_scatter(const void* send, void* recv, std::size_t count, DType dtype, Reduction reduce,
                      void* stream) override {
    OnDevice on(runtime_, index_);
    check("ncclReduceScatter", api_.reduce_scatter(send, recv, count, data_type(dtype), red_op(reduce), comm_, stream));
  }

 private:
  void check(const char* call, Result r) const {
    if (r != kSuccess) throw RuntimeError("nccl: " + failure(api_, call, r));
  }

  const Api& api_;
  Comm comm_;
  DeviceRuntime& runtime_;
  int index_;
};

}  // namespace

Provider::Provider(std::string name, std::string device_type, LibrarySpec library)
    : name_(std::move(name)), device_type_(DeviceType::intern(device_type)), spec_(std::move(library)) {}

const Library& Provider::library() const {
  std::call_once(opened_, [this] {
    try {
      library_ = open_library(spec_);
    } catch (const RuntimeError& e) {
      failure_ = e.what();
    }
  });
  if (!library_) throw OpNotAvailableError(name_ + ": " + failure_);
  return *library_;
}

std::optional<std::string> Provider::unavailable() const {
  try {
    library();
    return std::nullopt;
  } catch (const OpNotAvailableError&) {
    return failure_;
  }
}

std::string Provider::description() const {
  if (const std::optional<std::string> why = unavailable()) return "unavailable: " + *why;
  return spec_.file + " " + library_->version + " (" + library_->path + ")";
}

CommunicatorId Provider::new_id() {
  const Library& lib = library();
  UniqueId id{};
  if (const Result r = lib.api.get_unique_id(&id); r != kSuccess) {
    throw RuntimeError(name_ + ": " + failure(lib.api, "ncclGetUniqueId", r));
  }
  CommunicatorId out;
  static_assert(sizeof(out.bytes) == sizeof(id.internal));
  std::memcpy(out.bytes.data(), id.internal, sizeof(id.internal));
  return out;
}

std::unique_ptr<CommunicatorBackend> Provider::join(int device_index, const CommunicatorId& id, int size, int rank) {
  const Library& lib = library();
  DeviceRuntime& runtime = device_runtime(device_type_);
  UniqueId native{};
  std::memcpy(native.internal, id.bytes.data(), sizeof(native.internal));
  Comm comm = nullptr;
  {
    OnDevice on(runtime, device_index);
    if (const Result r = lib.api.comm_init_rank(&comm, size, native, rank); r != kSuccess) {
      throw RuntimeError(name_ + ": joining as rank " + std::to_string(rank) + " of " + std::to_string(size) + " on " +
                         std::string(device_type_.name()) + ":" + std::to_string(device_index) + ": " +
                         failure(lib.api, "ncclCommInitRank", r));
    }
  }
  return std::make_unique<Backend>(lib.api, comm, runtime, device_index);
}

CommunicatorBackend& Provider::self(int device_index) {
  std::lock_guard lock(self_mutex_);
  std::unique_ptr<CommunicatorBackend>& slot = self_[device_index];
  if (!slot) slot = join(device_index, new_id(), 1, 0);
  return *slot;
}

}  // namespace tileops::nccl

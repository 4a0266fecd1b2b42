// Communicators: the groups of ranks the collective ops (AllReduceFwdOp, AllGatherFwdOp,
// ReduceScatterFwdOp) exchange tensors within. An op names its communicator by key.
//
// On GPUs a group is one process per device. Rank 0 asks for a new id, the application hands
// the id to every other rank itself (torch.distributed, MPI, a file), and each rank joins:
//
//   tileops::CommunicatorId id = rank == 0 ? tileops::Communicator::new_id(cuda) : receive();
//   auto comm = tileops::Communicator::join(tileops::Device::parse("cuda:0"), id, world, rank);
//   tileops::AllReduceFwdOp all_reduce(comm->key());
//   y = all_reduce(partial);                     // queued on cuda:0's current stream
//
// A device type's communicators come from the collective provider a plugin registered for it
// (the nccl plugin: NCCL for cuda, RCCL for hip). On the CPU, local_group() makes a group of
// ranks inside one process, each rank calling from a thread of its own.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tileops/device.hpp"
#include "tileops/export.hpp"

namespace tileops {

class CommunicatorBackend;

// The opaque id of a group of ranks; its bytes are what the application sends to each rank.
struct CommunicatorId {
  std::array<std::uint8_t, 128> bytes{};
};

// One rank's membership of a group. Registered under its key while it lives; destroy it only
// once no call using it is in flight.
class TILEOPS_API Communicator {
 public:
  // The key every op accepts for the group of the calling rank alone on the call device: all
  // reduce and gather copy, on any device.
  static constexpr std::string_view kSelf = "self";

  // The id of a new group on devices of `type`, from the collective provider registered for
  // it. Throws OpNotAvailableError when none is registered or its library cannot be loaded
  // (the message says where it looked).
  static CommunicatorId new_id(DeviceType type);
  // Joins the group `id` names as rank `rank` of `size`, on `device`. Every rank calls it with
  // the same id and size, each on its own device; it returns once all have joined. Throws
  // ValueError when size or rank is out of range (1 <= size <= 65536, 0 <= rank < size) or the
  // device is not one the runtime has, OpNotAvailableError as new_id, RuntimeError when the
  // provider fails to join.
  static std::shared_ptr<Communicator> join(const Device& device, const CommunicatorId& id, int size, int rank);
  // A group of `size` ranks (1 to 256) on the CPU inside this process: element r is rank r.
  // Each rank's collective calls must come from a thread of its own, as ranks in processes
  // would; a call waits for every rank's. Throws ValueError for a size out of range.
  static std::vector<std::shared_ptr<Communicator>> local_group(int size);
  // The live communicator registered under `key`. Throws ValueError naming the live keys when
  // none is (kSelf names no object: the ops handle it themselves).
  static std::shared_ptr<Communicator> find(std::string_view key);
  // The live communicator with id `id` (id() > 0). Throws ValueError when it was destroyed.
  static std::shared_ptr<Communicator> find(std::int64_t id);

  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  // "<provider>:<id>", e.g. "nccl:3" or "local:1"; unique in the process, never reused.
  const std::string& key() const { return key_; }
  std::int64_t id() const { return id_; }
  // The collective provider that made it: "local", "nccl", "rccl", ...
  const std::string& provider() const { return provider_; }
  const Device& device() const { return device_; }
  int size() const { return size_; }
  int rank() const { return rank_; }
  // What runs the collectives (tileops/extend/collectives.hpp): for kernel authors.
  CommunicatorBackend& backend() const { return *backend_; }

 private:
  Communicator(std::string provider, Device device, int size, int rank, std::unique_ptr<CommunicatorBackend> backend);
  static std::shared_ptr<Communicator> registered(std::string provider, Device device, int size, int rank,
                                                  std::unique_ptr<CommunicatorBackend> backend);

  std::int64_t id_;
  std::string provider_;
  std::string key_;
  Device device_;
  int size_;
  int rank_;
  std::unique_ptr<CommunicatorBackend> backend_;
};

}  // namespace tileops

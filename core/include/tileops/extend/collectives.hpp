// Collective providers: what a plugin registers to make communicators for a device type
// (Registrar::register_collective_provider), and the backend of one rank's communicator that
// the collective ops' kernels call.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tileops/communicator.hpp"
#include "tileops/device.hpp"
#include "tileops/dtype.hpp"
#include "tileops/export.hpp"

namespace tileops {

enum class Reduction : std::uint8_t { sum, max };

// One rank's end of a group. Each collective is queued on `stream` (the native stream of the
// communicator's device; nullptr on devices without streams) and every rank makes the same
// calls in the same order with the same counts and dtype. Buffers are on the communicator's
// device and hold `count` elements of `dtype` unless said otherwise. Failures throw
// RuntimeError naming the collective and the provider's reason.
class TILEOPS_API CommunicatorBackend {
 public:
  virtual ~CommunicatorBackend();
  // recv = the reduction of every rank's send; recv may be send.
  virtual void all_reduce(const void* send, void* recv, std::size_t count, DType dtype, Reduction reduce,
                          void* stream) = 0;
  // recv (size * count elements) = every rank's send in rank order.
  virtual void all_gather(const void* send, void* recv, std::size_t count, DType dtype, void* stream) = 0;
  // send holds size * count elements; recv = the reduction over the ranks of their send's
  // block `rank` (elements [rank * count, (rank + 1) * count)).
  virtual void reduce_scatter(const void* send, void* recv, std::size_t count, DType dtype, Reduction reduce,
                              void* stream) = 0;
};

// Makes the communicators of one device type. Registered once per device type.
class TILEOPS_API CollectiveProvider {
 public:
  virtual ~CollectiveProvider();
  // The provider's name: "nccl"; a communicator's key starts with it.
  virtual std::string name() const = 0;
  virtual DeviceType device_type() const = 0;
  // Why no communicator can be made (the library is missing: which names and places were
  // tried), or nullopt when new_id and join work.
  virtual std::optional<std::string> unavailable() const = 0;
  // The library serving the collectives, e.g. "libnccl.so.2 2.28.3 (/path)", when available.
  virtual std::string description() const = 0;
  virtual CommunicatorId new_id() = 0;
  // Joins as rank `rank` of `size` on device index `device_index`; blocks until every rank
  // joined. Arguments are checked by the caller (Communicator::join).
  virtual std::unique_ptr<CommunicatorBackend> join(int device_index, const CommunicatorId& id, int size,
                                                    int rank) = 0;
};

// The provider registered for `type`, or nullptr.
TILEOPS_API std::shared_ptr<CollectiveProvider> find_collective_provider(DeviceType type);
// Every registered provider, in device type name order.
TILEOPS_API std::vector<std::shared_ptr<CollectiveProvider>> collective_providers();

// For a collective kernel: the communicator with id `id` (a call spec's `communicator`), or
// nullptr for 0, "self". Throws ValueError, naming `op`, when it was destroyed or lives on
// another device than `call_device`.
TILEOPS_API std::shared_ptr<Communicator> communicator_for_call(std::int64_t id, const Device& call_device,
                                                                std::string_view op);

}  // namespace tileops

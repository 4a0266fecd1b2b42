// The collective provider of one device type over NCCL's C interface: "nccl" for cuda
// (libnccl.so.2), "rccl" for hip (librccl.so.1). The library is opened on first use.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "nccl_api.hpp"
#include "tileops/extend/collectives.hpp"

namespace tileops::nccl {

class Provider final : public CollectiveProvider {
 public:
  Provider(std::string name, std::string device_type, LibrarySpec library);

  std::string name() const override { return name_; }
  DeviceType device_type() const override { return device_type_; }
  std::optional<std::string> unavailable() const override;
  std::string description() const override;
  CommunicatorId new_id() override;
  std::unique_ptr<CommunicatorBackend> join(int device_index, const CommunicatorId& id, int size, int rank) override;

  // The group of this rank alone on device `device_index` ("self"), made on first use and kept.
  CommunicatorBackend& self(int device_index);

 private:
  // The library, opened once; throws OpNotAvailableError with the reason it cannot be.
  const Library& library() const;

  std::string name_;
  DeviceType device_type_;
  LibrarySpec spec_;
  mutable std::once_flag opened_;
  mutable std::optional<Library> library_;
  mutable std::string failure_;
  std::mutex self_mutex_;
  std::map<int, std::unique_ptr<CommunicatorBackend>> self_;
};

}  // namespace tileops::nccl

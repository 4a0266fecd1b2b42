// Communicator objects, the registry of live ones, and the collective providers by device type.
#include "tileops/communicator.hpp"

#include <atomic>
#include <map>
#include <mutex>
#include <shared_mutex>

#include "backend/registry.hpp"
#include "collectives/local_group.hpp"
#include "join.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/collectives.hpp"
#include "tileops/extend/device_runtime.hpp"

namespace tileops {
namespace {

constexpr int kMaxGroupSize = 65536;

struct ProviderSlot {
  std::shared_ptr<CollectiveProvider> provider;
  std::string owner;
};

// Providers by device type name, and the live communicators by id and by key. A lookup
// shares the mutex; registering and a communicator's end take it exclusively.
struct Registry {
  std::shared_mutex mutex;
  std::map<std::string, ProviderSlot, std::less<>> providers;
  std::map<std::int64_t, std::weak_ptr<Communicator>> by_id;
  std::map<std::string, std::int64_t, std::less<>> by_key;
};

Registry& registry() {
  static Registry* r = new Registry();  // outlives communicators that static objects hold
  return *r;
}

std::atomic<std::int64_t> next_id{1};

std::vector<std::string> live_keys(const Registry& r) {
  std::vector<std::string> keys;
  for (const auto& [key, id] : r.by_key) keys.push_back(key);
  return keys;
}

std::shared_ptr<CollectiveProvider> provider_for(DeviceType type) {
  std::shared_ptr<CollectiveProvider> provider = find_collective_provider(type);
  if (!provider) {
    throw OpNotAvailableError("no collective provider is registered for device type '" + std::string(type.name()) +
                              "' (the nccl plugin registers cuda and hip); " +
                              (type == DeviceType::cpu() ? "on the CPU, Communicator::local_group makes a group"
                                                         : "load it from the plugin path"));
  }
  if (const std::optional<std::string> why = provider->unavailable()) {
    throw OpNotAvailableError("collective provider '" + provider->name() + "' for " + std::string(type.name()) +
                              " cannot make communicators: " + *why);
  }
  return provider;
}

}  // namespace

CommunicatorBackend::~CommunicatorBackend() = default;
CollectiveProvider::~CollectiveProvider() = default;

std::shared_ptr<CollectiveProvider> find_collective_provider(DeviceType type) {
  Registry& r = registry();
  std::shared_lock lock(r.mutex);
  const auto it = r.providers.find(type.name());
  return it == r.providers.end() ? nullptr : it->second.provider;
}

std::vector<std::shared_ptr<CollectiveProvider>> collective_providers() {
  Registry& r = registry();
  std::shared_lock lock(r.mutex);
  std::vector<std::shared_ptr<CollectiveProvider>> all;
  for (const auto& [type, slot] : r.providers) all.push_back(slot.provider);
  return all;
}

namespace collectives {

void add_provider(const std::string& owner, std::shared_ptr<CollectiveProvider> provider) {
  Registry& r = registry();
  const std::string type(provider->device_type().name());
  std::unique_lock lock(r.mutex);
  const auto [it, inserted] = r.providers.try_emplace(type);
  if (!inserted) {
    throw BackendError("register_collective_provider: " + owner_phrase(owner) +
                       " cannot register a collective provider for device type '" + type + "': " +
                       owner_phrase(it->second.owner) + " registered one first (one provider per device type)");
  }
  it->second = {std::move(provider), owner};
}

void remove_provider(DeviceType type) noexcept {
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  r.providers.erase(std::string(type.name()));
}

}  // namespace collectives

Communicator::Communicator(std::string provider, Device device, int size, int rank,
                           std::unique_ptr<CommunicatorBackend> backend)
    : id_(next_id.fetch_add(1)),
      provider_(std::move(provider)),
      key_(provider_ + ":" + std::to_string(id_)),
      device_(device),
      size_(size),
      rank_(rank),
      backend_(std::move(backend)) {}

Communicator::~Communicator() {
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  r.by_id.erase(id_);
  r.by_key.erase(key_);
}

std::shared_ptr<Communicator> Communicator::registered(std::string provider, Device device, int size, int rank,
                                                       std::unique_ptr<CommunicatorBackend> backend) {
  std::shared_ptr<Communicator> comm(new Communicator(std::move(provider), device, size, rank, std::move(backend)));
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  r.by_id.emplace(comm->id_, comm);
  r.by_key.emplace(comm->key_, comm->id_);
  return comm;
}

CommunicatorId Communicator::new_id(DeviceType type) { return provider_for(type)->new_id(); }

std::shared_ptr<Communicator> Communicator::join(const Device& device, const CommunicatorId& id, int size, int rank) {
  if (size < 1 || size > kMaxGroupSize) {
    throw ValueError("Communicator::join: size must be from 1 to " + std::to_string(kMaxGroupSize) + ", not " +
                     std::to_string(size));
  }
  if (rank < 0 || rank >= size) {
    throw ValueError("Communicator::join: rank must be from 0 to size - 1 = " + std::to_string(size - 1) + ", not " +
                     std::to_string(rank));
  }
  if (device.is_cpu() || device.is_meta()) {
    throw ValueError("Communicator::join: " + device.str() +
                     " has no collective provider; on the CPU, Communicator::local_group makes a group");
  }
  const std::shared_ptr<CollectiveProvider> provider = provider_for(device.type());
  const int devices = device_runtime(device.type()).device_count();
  if (device.index() < 0 || device.index() >= devices) {
    throw ValueError("Communicator::join: " + device.str() + " is not a device of this process (" +
                     std::to_string(devices) + " " + std::string(device.type().name()) + " devices)");
  }
  std::unique_ptr<CommunicatorBackend> backend = provider->join(device.index(), id, size, rank);
  return registered(provider->name(), device, size, rank, std::move(backend));
}

std::vector<std::shared_ptr<Communicator>> Communicator::local_group(int size) {
  if (size < 1 || size > collectives::kMaxLocalRanks) {
    throw ValueError("Communicator::local_group: size must be from 1 to " +
                     std::to_string(collectives::kMaxLocalRanks) + ", not " + std::to_string(size));
  }
  const auto group = std::make_shared<collectives::LocalGroup>(size);
  std::vector<std::shared_ptr<Communicator>> ranks;
  for (int rank = 0; rank < size; ++rank) {
    ranks.push_back(registered("local", Device::cpu(), size, rank, collectives::local_rank(group, rank)));
  }
  return ranks;
}

std::shared_ptr<Communicator> Communicator::find(std::string_view key) {
  Registry& r = registry();
  std::shared_lock lock(r.mutex);
  const auto it = r.by_key.find(key);
  if (it != r.by_key.end()) {
    if (std::shared_ptr<Communicator> comm = r.by_id.at(it->second).lock()) return comm;
  }
  const std::vector<std::string> keys = live_keys(r);
  throw ValueError("no live communicator has the key '" + std::string(key) + "'; " +
                   (keys.empty() ? std::string("none is live") : "the live ones are " + tileops::join(keys)) +
                   ", and '" + std::string(kSelf) + "' is this rank alone");
}

std::shared_ptr<Communicator> Communicator::find(std::int64_t id) {
  Registry& r = registry();
  std::shared_lock lock(r.mutex);
  const auto it = r.by_id.find(id);
  if (it != r.by_id.end()) {
    if (std::shared_ptr<Communicator> comm = it->second.lock()) return comm;
  }
  throw ValueError("communicator " + std::to_string(id) + " was destroyed, or never existed");
}

std::shared_ptr<Communicator> communicator_for_call(std::int64_t id, const Device& call_device, std::string_view op) {
  if (id == 0) return nullptr;
  std::shared_ptr<Communicator> comm;
  try {
    comm = Communicator::find(id);
  } catch (const ValueError& e) {
    throw ValueError(std::string(op) + ": " + e.what());
  }
  if (!(comm->device() == call_device)) {
    throw ValueError(std::string(op) + ": communicator " + comm->key() + " is on " + comm->device().str() +
                     ", but the call is on " + call_device.str() + "; each rank calls on its communicator's device");
  }
  return comm;
}

}  // namespace tileops

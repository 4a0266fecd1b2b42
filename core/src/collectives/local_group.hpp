// Communicator::local_group's ranks: a group of threads of one process on the CPU, exchanging
// through each other's buffers.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "tileops/extend/collectives.hpp"

namespace tileops::collectives {

inline constexpr int kMaxLocalRanks = 256;

// The state the ranks of one local group share: each collective posts every rank's buffers,
// then meets twice (all posted; all done reading the others' buffers).
class LocalGroup {
 public:
  explicit LocalGroup(int size);

  int size() const { return size_; }
  // Posts rank `rank`'s buffers and waits until every rank posted; returns what they posted.
  // Throws RuntimeError when the rank is already inside a collective on another thread, or
  // when the group broke (a rank waited longer than the timeout, kTimeout, for the others).
  void meet(int rank, const void* send, const char* what);
  // The buffer rank r posted to the current collective.
  const void* posted(int r) const { return posted_[static_cast<std::size_t>(r)]; }
  // Waits until every rank finished reading the posted buffers, then leaves the collective.
  void leave(int rank, const char* what);

 private:
  void wait_for_all(std::unique_lock<std::mutex>& lock, int rank, const char* what);

  const int size_;
  std::mutex mutex_;
  std::condition_variable all_arrived_;
  std::uint64_t generation_ = 0;
  int arrived_ = 0;
  bool broken_ = false;
  std::vector<const void*> posted_;
  std::vector<bool> inside_;
};

// Rank `rank`'s backend over `group`.
std::unique_ptr<CommunicatorBackend> local_rank(std::shared_ptr<LocalGroup> group, int rank);

}  // namespace tileops::collectives

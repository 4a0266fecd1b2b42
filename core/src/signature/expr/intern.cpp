#include "signature/expr/intern.hpp"

#include <mutex>
#include <string>
#include <unordered_set>

namespace tileops::expr {

std::string_view intern(std::string_view s) {
  static std::mutex mutex;
  static std::unordered_set<std::string>* strings = new std::unordered_set<std::string>();
  std::lock_guard lock(mutex);
  return *strings->emplace(s).first;
}

}  // namespace tileops::expr

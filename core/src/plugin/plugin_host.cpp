#include <mutex>

#include "tileops/backend.hpp"
#include "tileops/config.hpp"

namespace tileops {

void load_backends() {
  static std::once_flag once;
  std::call_once(once, [] { (void)config(); });
}

}  // namespace tileops

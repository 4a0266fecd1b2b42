#include "op/device_capture.hpp"

#include "tileops/errors.hpp"

namespace tileops {

void refuse_in_capture(const std::string& who, const std::string& what) {
  throw RuntimeError(who + ": " + what +
                     " inside a device graph capture, where only cached kernels may run; make the same calls once "
                     "before capturing them");
}

}  // namespace tileops

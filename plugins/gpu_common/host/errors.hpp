// Turning a GPU runtime status (cudaError_t / hipError_t, success being 0) into a tileops
// error. The message is built only when there is an error.
#pragma once

#include <string>

namespace tileops::gpu {

// Throws RuntimeError "<vendor>: <what> failed: <error name> (<description>)".
[[noreturn]] void throw_status(int status, const std::string& what);

inline void check(int status, const char* what) {
  if (status != 0) throw_status(status, what);
}

// Throws when the last launch on this thread failed (e.g. a launch configuration the device
// refuses, or a kernel image for another architecture).
void check_launch(const char* kernel);

}  // namespace tileops::gpu

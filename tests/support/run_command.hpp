// Runs a command line through the shell and captures its exit status and standard output.
#pragma once

#include <array>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <sys/wait.h>

namespace tileops::test {

// The tileops program beside the running test binary (a build tree copied elsewhere, as for
// the GPU machine), else the one this build made.
inline std::string tileops_cli_path() {
  std::error_code ec;
  const std::filesystem::path beside = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path() / "tileops";
  if (!ec && std::filesystem::exists(beside, ec)) return beside.string();
  return TILEOPS_CLI_PATH;
}

struct CommandResult {
  int status = -1;
  std::string out;
};

inline CommandResult run_command(const std::string& command) {
  CommandResult r;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed for: " + command);
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  const int raw = pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

}  // namespace tileops::test

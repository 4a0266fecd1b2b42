#include "text_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

namespace tileops {
namespace {

std::string errno_text(int error) { return std::generic_category().message(error); }

std::string mode_type_name(mode_t mode) {
  if (S_ISDIR(mode)) return "directory";
  if (S_ISFIFO(mode)) return "FIFO";
  if (S_ISSOCK(mode)) return "socket";
  if (S_ISCHR(mode)) return "character device";
  if (S_ISBLK(mode)) return "block device";
  return "special file";
}

std::string size_text(std::size_t bytes) {
  if (bytes % (std::size_t{1} << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

// Closes the descriptor on every path out.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string file_type_name(std::filesystem::file_type type) {
  using std::filesystem::file_type;
  switch (type) {
    case file_type::regular: return "regular file";
    case file_type::directory: return "directory";
    case file_type::symlink: return "symbolic link";
    case file_type::block: return "block device";
    case file_type::character: return "character device";
    case file_type::fifo: return "FIFO";
    case file_type::socket: return "socket";
    case file_type::not_found: return "missing file";
    default: return "special file";
  }
}

std::string path_for_message(const std::filesystem::path& path) {
  const std::string& s = path.native();
  constexpr std::size_t kShown = 160;
  if (s.size() <= kShown) return s;
  return s.substr(0, kShown / 2) + "..." + s.substr(s.size() - kShown / 4) + " (" + std::to_string(s.size()) +
         " characters)";
}

TextFile read_text_file(const std::filesystem::path& path, std::size_t limit) {
  TextFile out;
  // The type is checked before opening, so that a FIFO or a device is never opened, and again on
  // the opened descriptor, in case the path changed in between.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int error = errno;
    struct stat link {};
    const bool dangling = error == ENOENT && ::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode);
    out.problem = "cannot be opened: " + (dangling ? "it is a symbolic link to a missing file" : errno_text(error));
    return out;
  }
  if (!S_ISREG(st.st_mode)) {
    out.problem = "is a " + mode_type_name(st.st_mode) + ", not a regular file";
    return out;
  }
  const Fd file{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)};
  if (file.fd < 0) {
    out.problem = "cannot be opened: " + errno_text(errno);
    return out;
  }
  if (::fstat(file.fd, &st) != 0) {
    out.problem = "cannot be examined: " + errno_text(errno);
    return out;
  }
  if (!S_ISREG(st.st_mode)) {
    out.problem = "became a " + mode_type_name(st.st_mode) + " while being opened, not a regular file";
    return out;
  }
  const int flags = ::fcntl(file.fd, F_GETFL);
  if (flags >= 0) ::fcntl(file.fd, F_SETFL, flags & ~O_NONBLOCK);
  char buffer[1 << 16];
  for (;;) {
    const std::size_t want = std::min(sizeof buffer, limit + 1 - out.text.size());
    const ssize_t n = ::read(file.fd, buffer, want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      out.text.clear();
      out.problem = "cannot be read: " + errno_text(errno);
      return out;
    }
    if (n == 0) break;
    out.text.append(buffer, static_cast<std::size_t>(n));
    if (out.text.size() > limit) {
      out.text.clear();
      out.problem = "is larger than the " + size_text(limit) + " limit";
      return out;
    }
  }
  return out;
}

}  // namespace tileops

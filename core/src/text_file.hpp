// Reading the text files the core takes from outside (config and manifest files): regular files
// only, bounded in size, never blocking on a FIFO or a device.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>


namespace tileops {

// The most bytes a config or manifest file may hold.
inline constexpr std::size_t kMaxTextFileBytes = std::size_t{16} << 20;

struct TextFile {
  std::string text;
  // Why the file was not read, as a predicate to put after its path ("is a directory, not a
  // regular file", "cannot be opened: Too many levels of symbolic links", "is larger than the
  // 16 MiB limit"); empty when it was read.
  std::string problem;
};

// Reads `path` whole when it names (through symbolic links) a regular file of at most `limit`
// bytes. Anything else is a problem: a missing file, a path the system rejects (too long, a
// symbolic link loop), a directory, FIFO, socket or device (never opened), a read error, a file
// longer than `limit` (at most limit + 1 bytes are read). Never throws for a problem of the file.
TextFile read_text_file(const std::filesystem::path& path, std::size_t limit = kMaxTextFileBytes);

// "directory", "FIFO", "character device", ... for a file type.
std::string file_type_name(std::filesystem::file_type type);

// `path` for an error message: as is, or its first and last characters around an ellipsis when
// it is longer than 160 characters.
std::string path_for_message(const std::filesystem::path& path);

}  // namespace tileops

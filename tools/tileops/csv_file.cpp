#include "csv_file.hpp"

#include <csv.h>

#include <cerrno>
#include <cstring>

#include "command.hpp"
#include "tileops/errors.hpp"

namespace tileops::cli {
namespace {

std::string reason() { return errno != 0 ? std::string(": ") + std::strerror(errno) : std::string(); }

}  // namespace

CsvFile::CsvFile(const std::string& path, const std::string& command) : path_(path), file_(std::fopen(path.c_str(), "w")) {
  if (file_ == nullptr) {
    throw UsageError(command + ": cannot open --csv file '" + path + "' for writing" + reason());
  }
}

CsvFile::~CsvFile() {
  if (file_ != nullptr) std::fclose(file_);
}

void CsvFile::write_row(const std::vector<std::string>& fields) {
  errno = 0;
  bool ok = true;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) ok = ok && std::fputc(',', file_) != EOF;
    ok = ok && csv_fwrite(file_, fields[i].data(), fields[i].size()) == 0;
  }
  ok = ok && std::fputc('\n', file_) != EOF && std::fflush(file_) == 0;
  if (!ok) throw RuntimeError("cannot write --csv file '" + path_ + "'" + reason());
}

void CsvFile::close() {
  errno = 0;
  const int status = std::fclose(file_);
  file_ = nullptr;
  if (status != 0) throw RuntimeError("cannot write --csv file '" + path_ + "'" + reason());
}

}  // namespace tileops::cli

// A CSV file written row by row through libcsv, which quotes every field (RFC 4180 style).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace tileops::cli {

class CsvFile {
 public:
  // Opens `path` for writing. Throws UsageError naming `command`, the path and the reason when
  // it cannot be opened.
  CsvFile(const std::string& path, const std::string& command);
  ~CsvFile();
  CsvFile(const CsvFile&) = delete;
  CsvFile& operator=(const CsvFile&) = delete;

  // Writes one row, each field quoted, and flushes it, so that an interrupted run keeps it.
  // Throws RuntimeError naming the path when the write fails.
  void write_row(const std::vector<std::string>& fields);
  // Closes the file; throws RuntimeError naming the path when the data could not be written.
  void close();

 private:
  std::string path_;
  std::FILE* file_;
};

}  // namespace tileops::cli

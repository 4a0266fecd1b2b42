// The subcommands of the `tileops` program. Each subcommand lives in its own file and adds
// itself to the table in main.cpp.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <boost/program_options.hpp>

namespace tileops::cli {

// Thrown for bad command-line arguments (an unknown or missing parameter, a config file or log
// level that cannot be used): printed as one line, exit status 2. `kind` names the error in
// --json output: "UsageError", or the library's error kind when the library refused the value.
struct UsageError : std::runtime_error {
  explicit UsageError(const std::string& what, std::string error_kind = "UsageError")
      : std::runtime_error(what), kind(std::move(error_kind)) {}
  std::string kind;
};

struct Command {
  const char* name;
  const char* summary;
  // Runs the subcommand with the arguments after its name; returns the exit status.
  int (*run)(const std::vector<std::string>& args);
};

// Parses `args` against `options` (and `positional`), printing help and returning false when
// --help was given. Throws UsageError for anything malformed.
bool parse_args(const std::string& command, const std::string& synopsis, const std::vector<std::string>& args,
                boost::program_options::options_description& options,
                boost::program_options::variables_map& vm,
                const boost::program_options::positional_options_description* positional = nullptr);

int run_info(const std::vector<std::string>& args);
int run_validate(const std::vector<std::string>& args);
int run_plugins(const std::vector<std::string>& args);
int run_targets(const std::vector<std::string>& args);
int run_ops(const std::vector<std::string>& args);
int run_run(const std::vector<std::string>& args);
int run_bench(const std::vector<std::string>& args);

}  // namespace tileops::cli

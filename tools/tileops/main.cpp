// `tileops`: inspect the library, its plugins and ops, validate manifests, run and benchmark
// ops. `tileops --help` lists the subcommands; `tileops help <command>` (or `tileops <command>
// --help`) describes one; `tileops --version` prints the version.
#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string_view>

#include <nlohmann/json.hpp>

#include "command.hpp"
#include "tileops/errors.hpp"
#include "tileops/version.hpp"

namespace {

using tileops::cli::Command;

const Command kCommands[] = {
    {"info", "print the version, the config in effect, the plugin path, the devices and the backends",
     tileops::cli::run_info},
    {"validate", "check manifest files (default: the built-in manifests); one line per problem", tileops::cli::run_validate},
    {"plugins", "list the plugins loaded, the load failures and the plugin files skipped", tileops::cli::run_plugins},
    {"targets", "list the registered targets and the ops each one builds", tileops::cli::run_targets},
    {"run", "run one op on random inputs and report target, kernels, record and roofline", tileops::cli::run_run},
    {"bench", "time the manifest workload rows: ms, GB/s, GFLOP/s and fraction of the roofline", tileops::cli::run_bench},
    {"ops", "describe the ops: signature, boundary operators, interfaces and kernel types", tileops::cli::run_ops},
};

// The options every command takes; they may also come before the command's name.
constexpr std::array<std::string_view, 4> kGlobalOptions{"--config", "--plugin-path", "--default-target", "--log-level"};

void print_usage(std::ostream& os) {
  os << "usage: tileops [global options] <command> [options]\n"
        "       tileops help <command> | --help | --version\n\ncommands:\n";
  for (const Command& c : kCommands) os << "  " << c.name << std::string(12 - std::strlen(c.name), ' ') << c.summary << "\n";
  os << "\nglobal options (before or after the command): --config FILE, --plugin-path DIRS,\n"
        "  --default-target NAME, --log-level LEVEL\n"
        "'tileops help <command>' describes a command's options.\n";
}

// Moves the global options given before the command's name (`--config F` or `--config=F`)
// into `globals`; returns the index of the first other argument.
int take_leading_globals(int argc, char** argv, std::vector<std::string>& globals) {
  int i = 1;
  while (i < argc) {
    const std::string_view arg = argv[i];
    const auto it = std::find_if(kGlobalOptions.begin(), kGlobalOptions.end(), [arg](std::string_view o) {
      return arg == o || (arg.starts_with(o) && arg.size() > o.size() && arg[o.size()] == '=');
    });
    if (it == kGlobalOptions.end()) break;
    globals.emplace_back(arg);
    if (arg == *it && i + 1 < argc) globals.emplace_back(argv[++i]);
    ++i;
  }
  return i;
}

const Command* find_command(const std::string& name) {
  for (const Command& c : kCommands) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

int unknown_command(const std::string& name) {
  std::cerr << "tileops: unknown command '" << name << "'; run 'tileops --help' for the list\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> globals;
  const int first = take_leading_globals(argc, argv, globals);
  if (first >= argc) {
    print_usage(std::cerr);
    return 2;
  }
  const std::string name = argv[first];
  if (name == "--version" || name == "-V") {
    std::cout << "tileops " << TILEOPS_VERSION_STRING << "\n";
    return 0;
  }
  std::vector<std::string> args(argv + first + 1, argv + argc);
  const Command* command = find_command(name);
  if (name == "help" && !args.empty()) {
    command = find_command(args.front());
    if (command == nullptr) return unknown_command(args.front());
    args = {"--help"};
  } else if (name == "--help" || name == "-h" || name == "help") {
    print_usage(std::cout);
    return 0;
  }
  if (command == nullptr) return unknown_command(name);
  args.insert(args.begin(), globals.begin(), globals.end());
  const std::string prefix = std::string("tileops ") + command->name + ": ";
  const bool json = std::find(args.begin(), args.end(), "--json") != args.end();
  // One line on stderr; with --json also {"error": {"kind", "message"}} on stdout.
  const auto report = [&](std::string_view kind, const std::string& message, int status) {
    std::cerr << message << "\n";
    if (json) std::cout << nlohmann::json{{"error", {{"kind", kind}, {"message", message}}}}.dump(2) << std::endl;
    return status;
  };
  // Usage errors exit 2; everything else that goes wrong (a library error, an exception of any
  // other kind, output that cannot be written) exits 1.
  try {
    const int status = command->run(args);
    errno = 0;
    std::cout.flush();
    const bool written = std::cout && std::fflush(stdout) == 0 && std::ferror(stdout) == 0;
    if (!written) {
      std::cerr << prefix << "cannot write the output to stdout"
                << (errno != 0 ? std::string(": ") + std::strerror(errno) : std::string()) << "\n";
      return 1;
    }
    return status;
  } catch (const tileops::cli::UsageError& e) {
    const std::string_view what = e.what();
    return report(e.kind, (what.starts_with(prefix) ? "" : prefix) + std::string(what), 2);
  } catch (const tileops::Error& e) {
    return report(tileops::error_kind(e), prefix + e.what(), 1);
  } catch (const std::bad_alloc&) {
    return report("OutOfMemoryError", prefix + "out of memory (std::bad_alloc)", 1);
  } catch (const std::exception& e) {
    return report("Error", prefix + "unexpected error: " + e.what(), 1);
  } catch (...) {
    return report("Error", prefix + "unexpected error: an exception that is not a std::exception", 1);
  }
}

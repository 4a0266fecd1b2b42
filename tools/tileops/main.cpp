// `tileops`: inspect the library, its plugins and ops, validate manifests, run and benchmark
// ops. `tileops --help` lists the subcommands; `tileops <command> --help` describes one.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "command.hpp"
#include "tileops/errors.hpp"

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

void print_usage(std::ostream& os) {
  os << "usage: tileops <command> [options]\n\ncommands:\n";
  for (const Command& c : kCommands) os << "  " << c.name << std::string(12 - std::strlen(c.name), ' ') << c.summary << "\n";
  os << "\n'tileops <command> --help' describes a command's options.\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    print_usage(std::cerr);
    return 2;
  }
  const std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    print_usage(std::cout);
    return 0;
  }
  std::vector<std::string> args(argv + 2, argv + argc);
  for (const Command& c : kCommands) {
    if (name != c.name) continue;
    // Usage errors exit 2; everything else that goes wrong (a library error, an exception of
    // any other kind, output that cannot be written) exits 1 with one line on stderr.
    try {
      const int status = c.run(args);
      errno = 0;
      std::cout.flush();
      const bool written = std::cout && std::fflush(stdout) == 0 && std::ferror(stdout) == 0;
      if (!written) {
        std::cerr << "tileops " << name << ": cannot write the output to stdout"
                  << (errno != 0 ? std::string(": ") + std::strerror(errno) : std::string()) << "\n";
        return 1;
      }
      return status;
    } catch (const tileops::cli::UsageError& e) {
      std::cerr << e.what() << "\n";
      return 2;
    } catch (const tileops::Error& e) {
      std::cerr << "tileops " << name << ": " << e.what() << "\n";
      return 1;
    } catch (const std::bad_alloc&) {
      std::cerr << "tileops " << name << ": out of memory (std::bad_alloc)\n";
      return 1;
    } catch (const std::exception& e) {
      std::cerr << "tileops " << name << ": unexpected error: " << e.what() << "\n";
      return 1;
    } catch (...) {
      std::cerr << "tileops " << name << ": unexpected error: an exception that is not a std::exception\n";
      return 1;
    }
  }
  std::cerr << "tileops: unknown command '" << name << "'; run 'tileops --help' for the list\n";
  return 2;
}

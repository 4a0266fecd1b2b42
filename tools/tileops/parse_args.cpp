#include <iostream>

#include "command.hpp"

namespace tileops::cli {
namespace po = boost::program_options;

bool parse_args(const std::string& command, const std::string& synopsis, const std::vector<std::string>& args,
                po::options_description& options, po::variables_map& vm,
                const po::positional_options_description* positional) {
  options.add_options()("help,h", "show this help and exit");
  // Without a positional description Boost ignores stray words; with an empty one it refuses them.
  const po::positional_options_description none;
  try {
    po::command_line_parser parser(args);
    parser.options(options);
    parser.positional(positional != nullptr ? *positional : none);
    po::store(parser.run(), vm);
    if (vm.count("help")) {
      std::cout << "usage: tileops " << command << " " << synopsis << "\n\n" << options << "\n";
      return false;
    }
    po::notify(vm);
  } catch (const po::too_many_positional_options_error&) {
    throw UsageError("tileops " + command + ": too many arguments; usage: tileops " + command + " " + synopsis);
  } catch (const po::error& e) {
    throw UsageError("tileops " + command + ": " + e.what());
  }
  return true;
}

}  // namespace tileops::cli

// Options every subcommand accepts; they override the config file and the environment.
#pragma once

#include <boost/program_options.hpp>

namespace tileops::cli {

// --config FILE, --plugin-path DIRS, --default-target NAME, --log-level LEVEL.
void add_common_options(boost::program_options::options_description& options);
// Loads the config (from --config when given), applies the flags on top and installs it as
// the process config. A --config file that does not exist and a bad --log-level throw
// UsageError of kind ConfigError; a malformed config throws ConfigError.
void apply_common_options(const boost::program_options::variables_map& vm);

}  // namespace tileops::cli

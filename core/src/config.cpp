#include "tileops/config.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>

#include <boost/program_options.hpp>

#include "text_file.hpp"
#include "tileops/errors.hpp"
#include "tileops/logging.hpp"

namespace tileops {
namespace po = boost::program_options;
namespace fs = std::filesystem;
namespace {

// The longest path the system accepts, and the longest target or plugin name taken.
constexpr std::size_t kMaxPathLength = 4096;
constexpr std::size_t kMaxNameLength = 256;

constexpr std::array<const char*, 7> kLogLevels = {"trace", "debug", "info", "warn", "error", "critical", "off"};

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, sep)) {
    part = trim(part);
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

// Where each key and each line of an INI file is, so that errors can name a line.
struct FileLines {
  std::vector<std::string> lines;
  std::map<std::string, int> line_of_key;

  explicit FileLines(const std::string& text) {
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
      lines.push_back(line);
      std::string content = trim(line.substr(0, line.find('#')));
      const auto eq = content.find('=');
      if (eq != std::string::npos) line_of_key.try_emplace(trim(content.substr(0, eq)), static_cast<int>(lines.size()));
    }
  }

  int line_of(const std::string& key) const {
    auto it = line_of_key.find(key);
    return it == line_of_key.end() ? 0 : it->second;
  }

  int line_containing(const std::string& text) const {
    const std::string needle = trim(text);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (!needle.empty() && lines[i].find(needle) != std::string::npos) return static_cast<int>(i + 1);
    }
    return 0;
  }
};

[[noreturn]] void fail(const fs::path& file, int line, const std::string& key, const std::string& reason) {
  std::string where = path_for_message(file);
  if (line > 0) where += ":" + std::to_string(line);
  if (!key.empty()) where += ": key '" + key + "'";
  throw ConfigError("config file " + where + ": " + reason);
}

// Accepts printable text only: a value with control characters was not meant.
void check_printable(const std::string& value, const std::string& origin) {
  for (char c : value) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      throw ConfigError(origin + ": the value contains the control character " +
                        std::to_string(static_cast<int>(static_cast<unsigned char>(c))) + "; expected printable text");
    }
  }
}

void check_path_entry(const std::string& entry, const std::string& origin) {
  if (entry.size() > kMaxPathLength) {
    throw ConfigError(origin + ": the entry " + path_for_message(entry) + " is longer than " +
                      std::to_string(kMaxPathLength) + " characters, the longest path the system accepts");
  }
}

std::vector<fs::path> resolve_paths(const std::string& value, const fs::path& base, const std::string& origin) {
  check_printable(value, origin);
  std::vector<fs::path> out;
  for (const std::string& entry : split(value, ':')) {
    check_path_entry(entry, origin);
    fs::path p(entry);
    out.push_back(p.is_relative() && !base.empty() ? (base / p).lexically_normal() : p);
  }
  return out;
}

void check_log_level(const std::string& level, const std::string& origin) {
  if (!is_log_level_name(level)) {
    throw ConfigError(origin + ": invalid log level '" + level +
                      "'; expected trace, debug, info, warn, error, critical or off");
  }
}

bool parse_flag(const std::string& text, const std::string& origin) {
  if (text == "true" || text == "1") return true;
  if (text == "false" || text == "0") return false;
  throw ConfigError(origin + ": invalid value '" + text + "'; expected true or false");
}

void check_target_name(const std::string& name, const std::string& origin) {
  const bool printable = std::all_of(name.begin(), name.end(), [](char c) { return c > 0x20 && c != 0x7f; });
  if (name.empty() || !printable || name.size() > kMaxNameLength) {
    throw ConfigError(origin + ": invalid target name '" + (name.size() > kMaxNameLength ? name.substr(0, 40) + "..." : name) +
                      "'; expected a non-empty name of at most " + std::to_string(kMaxNameLength) +
                      " printable ASCII characters without spaces");
  }
}

void check_plugin_name(const std::string& name, const std::string& origin) {
  const bool plain = std::all_of(name.begin(), name.end(), [](char c) { return c > 0x20 && c != 0x7f && c != '/'; });
  if (name.empty() || !plain || name.size() > kMaxNameLength) {
    throw ConfigError(origin + ": invalid plugin name '" + (name.size() > kMaxNameLength ? name.substr(0, 40) + "..." : name) +
                      "'; expected names like cuda (for libtileops_cuda.so), without spaces or '/'");
  }
}

std::vector<std::string> plugin_names(const std::string& value, const std::string& origin) {
  std::vector<std::string> names = split(value, ',');
  for (const std::string& name : names) check_plugin_name(name, origin);
  return names;
}

// The directory relative entries of an environment variable are relative to: the working
// directory, or none when it cannot be found (the entries then stay relative).
fs::path working_directory() {
  std::error_code ec;
  fs::path cwd = fs::current_path(ec);
  return ec ? fs::path() : cwd;
}

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

struct ProcessConfig {
  std::mutex mutex;
  std::optional<Config> value;
};

ProcessConfig& process_config() {
  static ProcessConfig c;
  return c;
}

}  // namespace

bool is_log_level_name(const std::string& name) {
  for (const char* level : kLogLevels) {
    if (name == level) return true;
  }
  return false;
}

Config parse_config_file(const fs::path& path) {
  const TextFile file = read_text_file(path);
  if (!file.problem.empty()) fail(path, 0, "", file.problem);
  std::istringstream in(file.text);
  const FileLines where(file.text);

  po::options_description keys;
  keys.add_options()("default_target", po::value<std::string>())("plugin_path", po::value<std::string>())(
      "manifest_path", po::value<std::string>())("log_level", po::value<std::string>())(
      "disable_plugins", po::value<std::string>())("allow_insecure_plugins", po::value<std::string>());
  po::variables_map vm;
  try {
    po::store(po::parse_config_file(in, keys, /*allow_unregistered=*/false), vm);
  } catch (const po::unknown_option& e) {
    const std::string key = e.get_option_name();
    fail(path, where.line_of(key), key,
         "unknown key; expected default_target, plugin_path, manifest_path, log_level, disable_plugins or "
         "allow_insecure_plugins");
  } catch (const po::multiple_occurrences& e) {
    const std::string key = e.get_option_name();
    fail(path, where.line_of(key), key, "given more than once; each key may appear once");
  } catch (const po::invalid_config_file_syntax& e) {
    const std::string token = e.tokens();
    fail(path, where.line_containing(token), "", "malformed line '" + trim(token) + "': expected 'key = value'");
  } catch (const po::error& e) {
    fail(path, 0, "", e.what());
  }

  Config c;
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec);
  c.file = ec ? path : absolute;
  const fs::path base = c.file->parent_path();
  auto origin = [&](const char* key) {
    return "config file " + path_for_message(path) + ":" + std::to_string(where.line_of(key)) + ": key '" + key + "'";
  };
  if (vm.count("default_target")) {
    const std::string v = trim(vm["default_target"].as<std::string>());
    check_target_name(v, origin("default_target"));
    c.default_target = v;
    c.default_target_origin = "config file " + path.string() + ":" + std::to_string(where.line_of("default_target"));
  }
  if (vm.count("plugin_path")) c.plugin_path = resolve_paths(vm["plugin_path"].as<std::string>(), base, origin("plugin_path"));
  if (vm.count("manifest_path")) {
    c.manifest_path = resolve_paths(vm["manifest_path"].as<std::string>(), base, origin("manifest_path"));
  }
  if (vm.count("log_level")) {
    c.log_level = trim(vm["log_level"].as<std::string>());
    check_log_level(c.log_level, origin("log_level"));
  }
  if (vm.count("disable_plugins")) c.disable_plugins = plugin_names(vm["disable_plugins"].as<std::string>(), origin("disable_plugins"));
  if (vm.count("allow_insecure_plugins")) {
    c.allow_insecure_plugins =
        parse_flag(trim(vm["allow_insecure_plugins"].as<std::string>()), origin("allow_insecure_plugins"));
  }
  return c;
}

std::optional<fs::path> find_config_file() {
  if (const char* explicit_path = env("TILEOPS_CONFIG")) {
    std::error_code ec;
    const fs::file_status status = fs::status(explicit_path, ec);
    if (status.type() == fs::file_type::not_found) {
      throw ConfigError("environment variable TILEOPS_CONFIG names '" + path_for_message(explicit_path) +
                        "', which does not exist; expected the path of a config file");
    }
    if (ec) {
      throw ConfigError("environment variable TILEOPS_CONFIG names '" + path_for_message(explicit_path) +
                        "', which cannot be examined: " + ec.message());
    }
    if (!fs::is_regular_file(status)) {
      throw ConfigError("environment variable TILEOPS_CONFIG names '" + path_for_message(explicit_path) + "', a " +
                        file_type_name(status.type()) + "; expected the path of a regular config file");
    }
    return fs::path(explicit_path);
  }
  // Relative directories in the XDG variables are ignored, as the XDG base directory rules say.
  const auto absolute_dir = [](const char* dir) { return dir != nullptr && fs::path(dir).is_absolute(); };
  std::vector<fs::path> candidates;
  if (const char* xdg_home = env("XDG_CONFIG_HOME"); absolute_dir(xdg_home)) {
    candidates.push_back(fs::path(xdg_home) / "tileops" / "tileops.conf");
  } else if (const char* home = env("HOME"); absolute_dir(home)) {
    candidates.push_back(fs::path(home) / ".config" / "tileops" / "tileops.conf");
  }
  for (const std::string& dir : split(env("XDG_CONFIG_DIRS") ? env("XDG_CONFIG_DIRS") : "/etc/xdg", ':')) {
    if (absolute_dir(dir.c_str())) candidates.push_back(fs::path(dir) / "tileops" / "tileops.conf");
  }
  candidates.emplace_back("/etc/tileops/tileops.conf");
  // A candidate that exists but is no regular file is reported rather than passed over: the
  // user meant it as their config.
  for (const fs::path& p : candidates) {
    std::error_code ec;
    const fs::file_status status = fs::status(p, ec);
    if (status.type() == fs::file_type::not_found) continue;
    if (ec) throw ConfigError("config file " + path_for_message(p) + " cannot be examined: " + ec.message());
    if (!fs::is_regular_file(status)) {
      throw ConfigError("config file " + path_for_message(p) + " is a " + file_type_name(status.type()) +
                        ", not a regular file; remove it or set TILEOPS_CONFIG to a config file");
    }
    return p;
  }
  return std::nullopt;
}

Config load_config(const std::optional<fs::path>& file) {
  Config c;
  if (auto path = file ? file : find_config_file()) c = parse_config_file(*path);
  if (const char* v = env("TILEOPS_DEFAULT_TARGET")) {
    check_target_name(v, "environment variable TILEOPS_DEFAULT_TARGET");
    c.default_target = std::string(v);
    c.default_target_origin = "environment variable TILEOPS_DEFAULT_TARGET";
  }
  if (const char* v = env("TILEOPS_PLUGIN_PATH")) {
    c.plugin_path = resolve_paths(v, working_directory(), "environment variable TILEOPS_PLUGIN_PATH");
  }
  if (const char* v = env("TILEOPS_MANIFEST_PATH")) {
    c.manifest_path = resolve_paths(v, working_directory(), "environment variable TILEOPS_MANIFEST_PATH");
  }
  if (const char* v = env("TILEOPS_LOG_LEVEL")) {
    check_log_level(v, "environment variable TILEOPS_LOG_LEVEL");
    c.log_level = v;
  }
  if (const char* v = env("TILEOPS_DISABLE_PLUGINS")) {
    c.disable_plugins = plugin_names(v, "environment variable TILEOPS_DISABLE_PLUGINS");
  }
  if (const char* v = env("TILEOPS_ALLOW_INSECURE_PLUGINS")) {
    c.allow_insecure_plugins = parse_flag(v, "environment variable TILEOPS_ALLOW_INSECURE_PLUGINS");
  }
  return c;
}

Config config() {
  ProcessConfig& pc = process_config();
  std::lock_guard lock(pc.mutex);
  if (!pc.value) pc.value = load_config();
  return *pc.value;
}

void set_config(Config c) {
  check_log_level(c.log_level, "set_config: log_level");
  if (c.default_target) check_target_name(*c.default_target, "set_config: default_target");
  if (!c.default_target) c.default_target_origin.clear();
  if (c.default_target && c.default_target_origin.empty()) c.default_target_origin = "set_config";
  for (const std::string& name : c.disable_plugins) check_plugin_name(name, "set_config: disable_plugins");
  for (const auto* paths : {&c.plugin_path, &c.manifest_path}) {
    const std::string origin = paths == &c.plugin_path ? "set_config: plugin_path" : "set_config: manifest_path";
    for (const fs::path& p : *paths) {
      check_printable(p.native(), origin);
      check_path_entry(p.native(), origin);
    }
  }
  ProcessConfig& pc = process_config();
  {
    std::lock_guard lock(pc.mutex);
    pc.value = std::move(c);
  }
  set_log_level(pc.value->log_level);
}

}  // namespace tileops

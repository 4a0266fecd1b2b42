#include "tileops/config.hpp"

#include <array>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include <boost/program_options.hpp>

#include "tileops/errors.hpp"
#include "tileops/logging.hpp"

namespace tileops {
namespace po = boost::program_options;
namespace fs = std::filesystem;
namespace {

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

  explicit FileLines(const fs::path& path) {
    std::ifstream in(path);
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
  std::string where = file.string();
  if (line > 0) where += ":" + std::to_string(line);
  if (!key.empty()) where += ": key '" + key + "'";
  throw ConfigError("config file " + where + ": " + reason);
}

std::vector<fs::path> resolve_paths(const std::string& value, const fs::path& base) {
  std::vector<fs::path> out;
  for (const std::string& entry : split(value, ':')) {
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
  if (name.empty() || name.find_first_of(" \t") != std::string::npos) {
    throw ConfigError(origin + ": invalid target name '" + name + "'; expected a non-empty name without spaces");
  }
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
  std::ifstream in(path);
  if (!in) fail(path, 0, "", "cannot be opened for reading");
  const FileLines where(path);

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
  c.file = fs::absolute(path);
  const fs::path base = c.file->parent_path();
  auto origin = [&](const char* key) { return "config file " + path.string() + ":" + std::to_string(where.line_of(key)) + ": key '" + key + "'"; };
  if (vm.count("default_target")) {
    const std::string v = trim(vm["default_target"].as<std::string>());
    check_target_name(v, origin("default_target"));
    c.default_target = v;
    c.default_target_origin = "config file " + path.string() + ":" + std::to_string(where.line_of("default_target"));
  }
  if (vm.count("plugin_path")) c.plugin_path = resolve_paths(vm["plugin_path"].as<std::string>(), base);
  if (vm.count("manifest_path")) c.manifest_path = resolve_paths(vm["manifest_path"].as<std::string>(), base);
  if (vm.count("log_level")) {
    c.log_level = trim(vm["log_level"].as<std::string>());
    check_log_level(c.log_level, origin("log_level"));
  }
  if (vm.count("disable_plugins")) c.disable_plugins = split(vm["disable_plugins"].as<std::string>(), ',');
  if (vm.count("allow_insecure_plugins")) {
    c.allow_insecure_plugins =
        parse_flag(trim(vm["allow_insecure_plugins"].as<std::string>()), origin("allow_insecure_plugins"));
  }
  return c;
}

std::optional<fs::path> find_config_file() {
  if (const char* explicit_path = env("TILEOPS_CONFIG")) {
    if (!fs::exists(explicit_path)) {
      throw ConfigError(std::string("TILEOPS_CONFIG names '") + explicit_path + "', which does not exist");
    }
    return fs::path(explicit_path);
  }
  std::vector<fs::path> candidates;
  if (const char* xdg_home = env("XDG_CONFIG_HOME")) {
    candidates.push_back(fs::path(xdg_home) / "tileops" / "tileops.conf");
  } else if (const char* home = env("HOME")) {
    candidates.push_back(fs::path(home) / ".config" / "tileops" / "tileops.conf");
  }
  for (const std::string& dir : split(env("XDG_CONFIG_DIRS") ? env("XDG_CONFIG_DIRS") : "/etc/xdg", ':')) {
    candidates.push_back(fs::path(dir) / "tileops" / "tileops.conf");
  }
  candidates.emplace_back("/etc/tileops/tileops.conf");
  for (const fs::path& p : candidates) {
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) return p;
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
  if (const char* v = env("TILEOPS_PLUGIN_PATH")) c.plugin_path = resolve_paths(v, fs::current_path());
  if (const char* v = env("TILEOPS_MANIFEST_PATH")) c.manifest_path = resolve_paths(v, fs::current_path());
  if (const char* v = env("TILEOPS_LOG_LEVEL")) {
    check_log_level(v, "environment variable TILEOPS_LOG_LEVEL");
    c.log_level = v;
  }
  if (const char* v = env("TILEOPS_DISABLE_PLUGINS")) c.disable_plugins = split(v, ',');
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
  ProcessConfig& pc = process_config();
  {
    std::lock_guard lock(pc.mutex);
    pc.value = std::move(c);
  }
  set_log_level(pc.value->log_level);
}

}  // namespace tileops

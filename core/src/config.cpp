#include "tileops/config.hpp"
#include "tileops/op.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>

#include "config_freeze.hpp"
#include "ini_text.hpp"
#include "text_file.hpp"
#include "tileops/errors.hpp"
#include "tileops/logging.hpp"

namespace tileops {
namespace fs = std::filesystem;
namespace {

// The longest path the system accepts, and the longest target or plugin name taken.
constexpr std::size_t kMaxPathLength = 4096;
constexpr std::size_t kMaxNameLength = 256;

constexpr std::array<const char*, 7> kLogLevels = {"trace", "debug", "info", "warn", "error", "critical", "off"};

constexpr std::array<const char*, 10> kKeys = {"default_target",      "plugin_path",
                                               "manifest_path",       "log_level",
                                               "disable_plugins",     "disable_kernels",
                                               "prefer_kernels",      "allow_insecure_plugins",
                                               "call_cache_capacity", "target_kernel_cache_capacity"};

// The sections whose keys are read: keys before any section header, and [tileops].
bool read_section(const std::string& section) { return section.empty() || section == "tileops"; }

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

// The level's canonical name; throws ConfigError naming `origin` for a name that is none.
std::string checked_log_level(const std::string& level, const std::string& origin) {
  if (auto name = canonical_log_level(level)) return *name;
  throw ConfigError(origin + ": invalid log level '" + level +
                    "'; expected trace, debug, info, warn (or warning), error, critical or off, in any case");
}

bool parse_flag(const std::string& text, const std::string& origin) {
  if (text == "true" || text == "1") return true;
  if (text == "false" || text == "0") return false;
  throw ConfigError(origin + ": invalid value '" + text + "'; expected true or false");
}

// A cache capacity: a decimal count from 1 to CacheCapacity::kMax.
std::size_t parse_capacity(const std::string& text, const std::string& origin) {
  const bool digits = !text.empty() && text.size() <= 7 && std::all_of(text.begin(), text.end(), [](char c) {
    return c >= '0' && c <= '9';
  });
  const std::size_t n = digits ? std::stoul(text) : 0;
  if (n < 1 || n > CacheCapacity::kMax) {
    throw ConfigError(origin + ": invalid cache capacity '" + (text.size() > 40 ? text.substr(0, 40) + "..." : text) +
                      "'; expected a whole number from 1 to " + std::to_string(CacheCapacity::kMax));
  }
  return n;
}

void check_capacity(std::size_t n, const std::string& origin) {
  if (n < 1 || n > CacheCapacity::kMax) {
    throw ConfigError(origin + ": invalid cache capacity " + std::to_string(n) + "; expected 1 to " +
                      std::to_string(CacheCapacity::kMax));
  }
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

void check_kernel_key(const std::string& key, const std::string& origin) {
  const bool plain =
      std::all_of(key.begin(), key.end(), [](char c) { return c > 0x20 && c != 0x7f && c != ',' && c != '='; });
  if (key.empty() || !plain || key.size() > kMaxNameLength) {
    throw ConfigError(origin + ": invalid kernel type key '" + (key.size() > kMaxNameLength ? key.substr(0, 40) + "..." : key) +
                      "'; expected keys like cpu_rms_norm, without spaces, ',' or '='");
  }
}

std::vector<std::string> kernel_keys(const std::string& value, const std::string& origin) {
  std::vector<std::string> keys = split(value, ',');
  for (const std::string& key : keys) check_kernel_key(key, origin);
  return keys;
}

void check_preferences(const std::vector<KernelPreference>& prefs, const std::string& origin) {
  for (std::size_t i = 0; i < prefs.size(); ++i) {
    const std::string& op = prefs[i].op;
    const bool identifier = std::all_of(op.begin(), op.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
    if (op.empty() || !identifier || op.size() > kMaxNameLength) {
      throw ConfigError(origin + ": invalid op class name '" + (op.size() > kMaxNameLength ? op.substr(0, 40) + "..." : op) +
                        "'; expected entries like RMSNormFwdOp=cpu_rms_norm");
    }
    check_kernel_key(prefs[i].key, origin);
    for (std::size_t j = 0; j < i; ++j) {
      if (prefs[j].op == op) {
        throw ConfigError(origin + ": " + op + " is named twice (=" + prefs[j].key + " and =" + prefs[i].key +
                          "); expected at most one preferred kernel type per op");
      }
    }
  }
}

// prefer_kernels' value: ','-separated Op=key entries.
std::vector<KernelPreference> kernel_preferences(const std::string& value, const std::string& origin) {
  std::vector<KernelPreference> prefs;
  for (const std::string& entry : split(value, ',')) {
    const auto eq = entry.find('=');
    if (eq == std::string::npos) {
      throw ConfigError(origin + ": invalid entry '" + (entry.size() > 80 ? entry.substr(0, 80) + "..." : entry) +
                        "'; expected Op=key entries like RMSNormFwdOp=cpu_rms_norm");
    }
    prefs.push_back({trim(entry.substr(0, eq)), trim(entry.substr(eq + 1))});
  }
  check_preferences(prefs, origin);
  return prefs;
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
  bool frozen = false;  // the keys read at loading (plugin_path, ...) were used: set_config may not change them
};

ProcessConfig& process_config() {
  static ProcessConfig c;
  return c;
}

}  // namespace

std::optional<std::string> canonical_log_level(const std::string& name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower == "warning") return "warn";
  for (const char* level : kLogLevels) {
    if (lower == level) return lower;
  }
  return std::nullopt;
}

bool is_log_level_name(const std::string& name) { return canonical_log_level(name).has_value(); }

Config parse_config_file(const fs::path& path) {
  const TextFile file = read_text_file(path);
  if (!file.problem.empty()) fail(path, 0, "", file.problem);
  const IniText ini = read_ini_text(file.text);
  if (!ini.problems.empty()) fail(path, ini.problems.front().line, ini.problems.front().key, ini.problems.front().reason);

  // The entry of each known key, checked against unknown keys and sections and against a key
  // given both before the sections and in [tileops].
  std::map<std::string, const IniEntry*> values;
  for (const IniEntry& e : ini.entries) {
    if (!read_section(e.section)) {
      fail(path, e.line, e.key, "in section [" + e.section + "], which is not read; put the keys under [tileops]");
    }
    if (std::find(kKeys.begin(), kKeys.end(), e.key) == kKeys.end()) {
      fail(path, e.line, e.key,
           "unknown key; expected default_target, plugin_path, manifest_path, log_level, disable_plugins, "
           "disable_kernels, prefer_kernels, allow_insecure_plugins, call_cache_capacity or "
           "target_kernel_cache_capacity");
    }
    const auto [it, fresh] = values.try_emplace(e.key, &e);
    if (!fresh) {
      fail(path, e.line, e.key,
           "given more than once (first on line " + std::to_string(it->second->line) + "); each key may appear once");
    }
  }

  Config c;
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec);
  c.file = ec ? path : absolute;
  const fs::path base = c.file->parent_path();
  const auto line = [&](const char* key) { return "config file " + path_for_message(path) + ":" + std::to_string(values.at(key)->line); };
  const auto origin = [&](const char* key) { return line(key) + ": key '" + key + "'"; };
  const auto value = [&](const char* key) -> const std::string* {
    auto it = values.find(key);
    return it == values.end() ? nullptr : &it->second->value;
  };
  if (const std::string* v = value("default_target")) {
    check_target_name(*v, origin("default_target"));
    c.default_target = *v;
    c.default_target_origin = "config file " + path.string() + ":" + std::to_string(values.at("default_target")->line);
  }
  if (const std::string* v = value("plugin_path")) c.plugin_path = resolve_paths(*v, base, origin("plugin_path"));
  if (const std::string* v = value("manifest_path")) c.manifest_path = resolve_paths(*v, base, origin("manifest_path"));
  if (const std::string* v = value("log_level")) c.log_level = checked_log_level(*v, origin("log_level"));
  if (const std::string* v = value("disable_plugins")) {
    c.disable_plugins = plugin_names(*v, origin("disable_plugins"));
    c.disable_plugins_origin = line("disable_plugins");
  }
  if (const std::string* v = value("disable_kernels")) {
    c.disable_kernels = kernel_keys(*v, origin("disable_kernels"));
    c.disable_kernels_origin = line("disable_kernels");
  }
  if (const std::string* v = value("prefer_kernels")) {
    c.prefer_kernels = kernel_preferences(*v, origin("prefer_kernels"));
    c.prefer_kernels_origin = line("prefer_kernels");
  }
  if (const std::string* v = value("allow_insecure_plugins")) {
    c.allow_insecure_plugins = parse_flag(*v, origin("allow_insecure_plugins"));
  }
  if (const std::string* v = value("call_cache_capacity")) {
    c.call_cache_capacity = parse_capacity(*v, origin("call_cache_capacity"));
  }
  if (const std::string* v = value("target_kernel_cache_capacity")) {
    c.target_kernel_cache_capacity = parse_capacity(*v, origin("target_kernel_cache_capacity"));
  }
  return c;
}

std::vector<fs::path> config_search_path() {
  if (const char* explicit_path = env("TILEOPS_CONFIG")) return {fs::path(explicit_path)};
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
  return candidates;
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
  const std::vector<fs::path> candidates = config_search_path();
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
  if (const char* v = env("TILEOPS_LOG_LEVEL")) c.log_level = checked_log_level(v, "environment variable TILEOPS_LOG_LEVEL");
  if (const char* v = env("TILEOPS_DISABLE_PLUGINS")) {
    c.disable_plugins = plugin_names(v, "environment variable TILEOPS_DISABLE_PLUGINS");
    c.disable_plugins_origin = "environment variable TILEOPS_DISABLE_PLUGINS";
  }
  if (const char* v = env("TILEOPS_DISABLE_KERNELS")) {
    c.disable_kernels = kernel_keys(v, "environment variable TILEOPS_DISABLE_KERNELS");
    c.disable_kernels_origin = "environment variable TILEOPS_DISABLE_KERNELS";
  }
  if (const char* v = env("TILEOPS_PREFER_KERNELS")) {
    c.prefer_kernels = kernel_preferences(v, "environment variable TILEOPS_PREFER_KERNELS");
    c.prefer_kernels_origin = "environment variable TILEOPS_PREFER_KERNELS";
  }
  if (const char* v = env("TILEOPS_ALLOW_INSECURE_PLUGINS")) {
    c.allow_insecure_plugins = parse_flag(v, "environment variable TILEOPS_ALLOW_INSECURE_PLUGINS");
  }
  if (const char* v = env("TILEOPS_CALL_CACHE_CAPACITY")) {
    c.call_cache_capacity = parse_capacity(v, "environment variable TILEOPS_CALL_CACHE_CAPACITY");
  }
  if (const char* v = env("TILEOPS_TARGET_KERNEL_CACHE_CAPACITY")) {
    c.target_kernel_cache_capacity = parse_capacity(v, "environment variable TILEOPS_TARGET_KERNEL_CACHE_CAPACITY");
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
  c.log_level = checked_log_level(c.log_level, "set_config: log_level");
  if (c.default_target) check_target_name(*c.default_target, "set_config: default_target");
  check_capacity(c.call_cache_capacity, "set_config: call_cache_capacity");
  check_capacity(c.target_kernel_cache_capacity, "set_config: target_kernel_cache_capacity");
  if (!c.default_target) c.default_target_origin.clear();
  if (c.default_target && c.default_target_origin.empty()) c.default_target_origin = "set_config";
  for (const std::string& name : c.disable_plugins) check_plugin_name(name, "set_config: disable_plugins");
  for (const std::string& key : c.disable_kernels) check_kernel_key(key, "set_config: disable_kernels");
  check_preferences(c.prefer_kernels, "set_config: prefer_kernels");
  // Each list's origin: kept when given, "set_config" when not, none for an empty list.
  for (auto [list_empty, origin] : {std::pair{c.disable_plugins.empty(), &c.disable_plugins_origin},
                                    std::pair{c.disable_kernels.empty(), &c.disable_kernels_origin},
                                    std::pair{c.prefer_kernels.empty(), &c.prefer_kernels_origin}}) {
    if (list_empty) {
      origin->clear();
    } else if (origin->empty()) {
      *origin = "set_config";
    }
  }
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
    if (pc.frozen) {
      const Config& now = pc.value ? *pc.value : c;
      std::string changed;
      const auto note = [&changed](bool differs, const char* key) {
        if (differs) changed += (changed.empty() ? "" : ", ") + std::string(key);
      };
      note(c.plugin_path != now.plugin_path, "plugin_path");
      note(c.manifest_path != now.manifest_path, "manifest_path");
      note(c.disable_plugins != now.disable_plugins, "disable_plugins");
      note(c.allow_insecure_plugins != now.allow_insecure_plugins, "allow_insecure_plugins");
      if (!changed.empty()) {
        throw ConfigError("set_config: " + changed + " cannot change once the backends and manifests are loaded (at "
                          "the first op or load_backends()); nothing was applied. Call set_config before the first "
                          "op; default_target and log_level may change at any time");
      }
    }
    pc.value = std::move(c);
  }
  set_log_level(pc.value->log_level);
}

void detail::freeze_load_time_config() {
  ProcessConfig& pc = process_config();
  std::lock_guard lock(pc.mutex);
  if (!pc.value) pc.value = load_config();
  pc.frozen = true;
}

}  // namespace tileops

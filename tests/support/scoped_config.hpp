// Replaces the process configuration for a scope.
#pragma once

#include <utility>

#include "tileops/config.hpp"

namespace tileops::test {

class ScopedConfig {
 public:
  explicit ScopedConfig(Config c) : saved_(config()) { set_config(std::move(c)); }
  ~ScopedConfig() { set_config(saved_); }
  ScopedConfig(const ScopedConfig&) = delete;
  ScopedConfig& operator=(const ScopedConfig&) = delete;

 private:
  Config saved_;
};

}  // namespace tileops::test

#include "json/op_report.hpp"

#include "tileops/extend/backend.hpp"

namespace tileops::json {
namespace {

// Appends report(sub, "<stage>.<sub stage>") for each sub-op `op` holds, in stage order.
void append_held(const Op& op, const std::string& stage,
                 nlohmann::json (*report)(const Op&, const std::string&), nlohmann::json& out) {
  const auto& stages = op.op_class().delegate_types();
  std::size_t i = 0;
  for (Op* sub : op.held_delegates()) {
    const std::string sub_stage = i < stages.size() ? stages[i].stage : std::string("?");
    for (auto& item : report(*sub, stage.empty() ? sub_stage : stage + "." + sub_stage)) out.push_back(std::move(item));
    ++i;
  }
}

}  // namespace

nlohmann::json kernels_json(const Op& op, const std::string& stage) {
  nlohmann::json out = nlohmann::json::array();
  const auto serving = op.serving_target();
  const bool target_serves = serving && !is_in_tree_target(*serving) && !op.op_class().interfaces().empty();
  if (target_serves) {
    out.push_back({{"op", op.name()}, {"stage", stage.empty() ? nlohmann::json(nullptr) : nlohmann::json(stage)},
                   {"interface", nullptr}, {"key", *serving}});
  } else {
    for (const InterfaceDecl& decl : op.op_class().interfaces()) {
      for (const BuiltEntry& e : op.built_entries(decl.name)) {
        nlohmann::json item = {{"op", op.name()},
                               {"stage", stage.empty() ? nlohmann::json(nullptr) : nlohmann::json(stage)},
                               {"interface", decl.name},
                               {"key", e.key}};
        if (e.kernel) {
          if (const auto config = e.kernel->config()) item["config"] = *config;
        }
        out.push_back(std::move(item));
      }
    }
  }
  append_held(op, stage, kernels_json, out);
  return out;
}

nlohmann::json caches_json(const Op& op, const std::string& stage) {
  const auto counters = [](const CacheCounters& c) {
    return nlohmann::json{
        {"hits", c.hits}, {"misses", c.misses}, {"evictions", c.evictions}, {"entries", c.entries}, {"capacity", c.capacity}};
  };
  const CacheStats stats = op.cache_stats();
  nlohmann::json out = nlohmann::json::array();
  out.push_back({{"op", op.name()},
                 {"stage", stage.empty() ? nlohmann::json(nullptr) : nlohmann::json(stage)},
                 {"calls", counters(stats.calls)},
                 {"target_kernels", counters(stats.target_kernels)},
                 {"entries", counters(stats.entries)}});
  append_held(op, stage, caches_json, out);
  return out;
}

}  // namespace tileops::json

// Compiles one OpSpec into a CompiledPlan, collecting every problem the static checks find
// at plan compilation: names and kinds, expressions, type families, let cycles, solvability of every
// index on every branch, effects, composition, dtype combos and workload rows.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "tileops/errors.hpp"
#include "signature/compiled_plan.hpp"
#include "signature/expr/ast.hpp"

namespace tileops::detail {

struct BuildResult {
  std::shared_ptr<CompiledPlan> plan;       // null when there are problems
  std::vector<ManifestProblem> problems;
};

// Builds the plan of `spec`. Never throws for a malformed spec: every problem is returned.
BuildResult build_plan(OpSpec spec);

class PlanBuilder {
 public:
  explicit PlanBuilder(OpSpec spec);
  BuildResult run();

  // Phases (plan_builder.cpp, shape_builder.cpp, branch_analysis.cpp, workload_check.cpp).
  void declare_names();
  void compile_lets();
  void check_families();
  void compile_tensors();
  void compile_rules_and_roofline();
  void check_effects_and_composition();
  void analyse_branches();
  void check_workloads();

  // Helpers.
  void problem(const std::string& field, const std::string& reason);
  // Compiles `source`; records a problem at `field` and returns nullopt on failure.
  std::optional<Expr> compile(const std::string& source, const std::string& field, const expr::CompileOptions& options = {});
  std::optional<Expr> compile_ast(const expr::Ast& ast, const std::string& source, const std::string& field);
  // A discriminant expression: Bool reading only finite parameters and presence.
  std::optional<Expr> compile_discriminant(const std::string& source, const std::string& field);
  // An input's `range`: a two-item list expression, on an input of one integer dtype or of a
  // DType index (`dtype_slot`, -1 for none) whose set holds integer dtypes only.
  std::optional<Expr> compile_range(const std::string& source, const std::string& dtype, int dtype_slot,
                                    const std::string& field);
  bool finite_param_slot(int slot) const;
  std::optional<ShapeDecl> compile_shape(const std::string& text, const std::string& field);
  std::optional<DTypeDecl> compile_dtype(const std::string& text, const std::string& field);
  int subject_id(const expr::Ast& ast, const std::string& field);
  // The slots a node reads on a branch whose known slots are those set in `f`: subexpressions
  // of and/or/conditionals that the known slots decide are skipped when they cannot matter.
  void collect_reads(const expr::Node& node, const CheckState& f, std::set<int>& out) const;

  std::shared_ptr<CompiledPlan> plan_;
  std::vector<ManifestProblem> problems_;
  std::vector<std::string> family_names_;
  std::vector<bool> family_ok_;
  std::vector<bool> family_used_;
};

}  // namespace tileops::detail

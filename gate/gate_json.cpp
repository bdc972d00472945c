#include "gate/gate_json.h"

#include <cmath>

#include "core/cell_key_io.h"
#include "core/environment_json.h"
#include "gate/report_text.h"

namespace pg::gate {
namespace {
nlohmann::json number_or_null(const std::optional<double>& v) {
  if (!v || !std::isfinite(*v)) return nullptr;
  return *v;
}
}  // namespace

nlohmann::json gate_to_json(const GateResult& r) {
  nlohmann::json cells = nlohmann::json::array();
  for (const auto& c : r.cells) {
    cells.push_back(
        {{"key", cell_key_to_json(c.key)},
         {"metric", c.metric},
         {"base_median", number_or_null(c.base_median)},
         {"head_median", number_or_null(c.head_median)},
         {"ratio", number_or_null(c.ratio)},
         {"ci_low", number_or_null(c.ci_low)},
         {"ci_high", number_or_null(c.ci_high)},
         {"p_value", number_or_null(c.p_value)},
         {"p_adjusted", number_or_null(c.p_adjusted)},
         {"verdict", to_string(c.verdict)},
         {"base_n", c.base_n},
         {"head_n", c.head_n},
         {"base_runs", c.base_runs},
         {"head_runs", c.head_runs},
         {"note", c.note.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.note)},
         {"ci_method", c.ci_method.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.ci_method)},
         {"runs_ratio", number_or_null(c.runs_ratio)},
         {"runs_p_adjusted", number_or_null(c.runs_p_adjusted)},
         {"mw_p_adjusted", number_or_null(c.mw_p_adjusted)},
         {"mann_whitney_p", number_or_null(c.mann_whitney_p)},
         {"test", c.test.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.test)},
         {"upper_bound", number_or_null(c.upper_bound)},
         {"runs_df", number_or_null(c.runs_df)},
         {"run_sd", number_or_null(c.run_sd)},
         {"rep_sd", number_or_null(c.rep_sd)},
         {"variance_source",
          c.variance_source.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.variance_source)},
         {"history_df", number_or_null(c.history_df)},
         {"history_runs", c.history_df ? nlohmann::json(c.history_runs) : nlohmann::json(nullptr)},
         {"history_commits",
          c.history_df ? nlohmann::json(c.history_commits) : nlohmann::json(nullptr)},
         {"mde", number_or_null(c.mde)},
         {"accepted_ratio", number_or_null(c.accepted_ratio)},
         {"ab_runs", c.test == "paired-t" ? nlohmann::json(c.ab_runs) : nlohmann::json(nullptr)},
         {"blocks", c.test == "paired-t" ? nlohmann::json(c.blocks) : nlohmann::json(nullptr)},
         {"pairs", c.test == "paired-t" ? nlohmann::json(c.pairs) : nlohmann::json(nullptr)},
         {"paired_unit",
          c.paired_unit.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.paired_unit)},
         {"paired_df", number_or_null(c.paired_df)},
         {"block_sd", number_or_null(c.block_sd)},
         {"ab_run_sd", number_or_null(c.ab_run_sd)}});
  }
  nlohmann::json metrics = nlohmann::json::array();
  for (const MetricSummary& m : r.metrics)
    metrics.push_back(
        {{"metric", m.metric},
         {"kind", m.exact ? "exact" : "tested"},
         {"min_effect", m.min_effect},
         {"tolerance_bytes",
          m.exact ? nlohmann::json(r.options.memory_tolerance_bytes) : nlohmann::json(nullptr)},
         {"cells", m.cells},
         {"mde", number_or_null(m.mde)},
         {"mde_all_cells", number_or_null(m.mde_all_cells)},
         {"underpowered", m.underpowered}});
  nlohmann::json counts = nlohmann::json::object();
  for (auto v : {CellVerdict::regression, CellVerdict::improvement, CellVerdict::unchanged,
                 CellVerdict::no_baseline, CellVerdict::incomparable, CellVerdict::accepted}) {
    counts[to_string(v)] = 0;
  }
  for (const auto& [v, n] : gate::report_text::count_verdicts(r)) counts[to_string(v)] = n;

  return {{"base", r.base},
          {"head", r.head},
          {"verdict", to_string(r.verdict)},
          {"alpha", r.options.alpha},
          {"min_effect", r.options.min_effect},
          {"correction", r.options.correction},
          {"cells", cells},
          {"metrics", metrics},
          {"counts", counts},
          {"warnings", r.warnings},
          {"base_runs", r.base_runs},
          {"head_runs", r.head_runs},
          {"env",
           {{"base", environment_to_json(r.base_env)}, {"head", environment_to_json(r.head_env)}}},
          {"mde", number_or_null(r.mde)},
          {"mde_all_cells", number_or_null(r.mde_all_cells)},
          {"power", r.options.power},
          {"underpowered", r.underpowered},
          {"require_power", r.options.require_power},
          {"drift_estimated", r.drift_estimated},
          {"design", r.design},
          {"ab_runs", r.design == "paired" ? nlohmann::json(r.ab_runs) : nlohmann::json(nullptr)},
          {"blocks", r.design == "paired" ? nlohmann::json(r.blocks) : nlohmann::json(nullptr)},
          {"pairs", r.design == "paired" ? nlohmann::json(r.pairs) : nlohmann::json(nullptr)},
          {"rule", r.rule.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.rule)},
          {"rules_out_min_effect", r.rules_out_min_effect},
          {"min_effect_source", r.options.min_effect_source},
          {"sequential",
           {{"look", r.options.look},
            {"max_looks", r.options.max_looks},
            {"alpha_per_look", r.alpha_per_look},
            {"next", to_string(r.next)},
            {"reason",
             r.next_reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.next_reason)}}},
          {"measured_seconds", r.measured_seconds},
          {"run_seconds", r.run_seconds}};
}

}  // namespace pg::gate

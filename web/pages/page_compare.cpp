#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "core/cell_label.h"
#include "web/pages/html.h"
#include "web/pages/pages.h"

namespace pg::web {

namespace {

std::string compare_form(const CommitCatalog& catalog, const std::string& base,
                         const std::string& head, const std::string& device) {
  std::string h = "<form class=\"filters card\" method=\"get\" action=\"/compare\">";
  h += "<label>base<input type=\"text\" name=\"base\" list=\"revs\" required value=\"" +
       html_escape(base) + "\" placeholder=\"SHA, prefix or branch\"></label>";
  h += "<label>head<input type=\"text\" name=\"head\" list=\"revs\" required value=\"" +
       html_escape(head) + "\" placeholder=\"SHA, prefix or branch\"></label>";
  if (catalog.devices.size() > 1 || !device.empty()) {
    h += "<label>device<select name=\"device\"><option value=\"\">all runs</option>";
    for (const auto& d : catalog.devices)
      h += "<option value=\"" + html_escape(d) + "\"" + (d == device ? " selected" : "") + ">" +
           html_escape(d) + "</option>";
    h += "</select></label>";
  }
  h += "<button type=\"submit\">Compare</button></form><datalist id=\"revs\">";
  for (const auto& [branch, sha] : catalog.branch_heads)
    h += "<option value=\"" + html_escape(branch) + "\" label=\"branch → " +
         html_escape(sha.substr(0, 10)) + "\"></option>";
  size_t n = 0;
  for (const auto& c : catalog.commits) {
    if (++n > 300) break;
    h += "<option value=\"" + html_escape(c.sha.substr(0, 12)) + "\" label=\"" +
         html_escape(c.subject + " · " + c.time) + "\"></option>";
  }
  return h + "</datalist>";
}

// Which metric a cell of the compare table is of, when it is not decode latency: " · memory".
std::string metric_suffix(const gate::CellComparison& c) {
  if (c.metric == "tpot_ms") return "";
  return c.metric == "peak_alloc_bytes" ? " · memory" : " · " + c.metric;
}

// A cell's value in its unit: "0.713 ms", "1.50 GiB".
std::string value_text(double v, const std::string& metric) {
  if (metric.find("bytes") == std::string::npos) return fmt_num(v) + " ms";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", v / (1024.0 * 1024 * 1024));
  return buf;
}

std::string num_cell(const std::optional<double>& v, const std::string& text,
                     const std::string& cls = "") {
  const std::string c = "num" + (cls.empty() ? "" : " " + cls);
  if (!v || !std::isfinite(*v)) return "<td class=\"" + c + "\" data-v=\"\">–</td>";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", *v);
  return "<td class=\"" + c + "\" data-v=\"" + buf + "\">" + text + "</td>";
}

}  // namespace

std::string render_compare_form(const CommitCatalog& catalog, const std::string& base,
                                const std::string& head, const std::string& device,
                                const std::string& error) {
  std::string h = "<h1>Compare two revisions</h1>";
  if (!error.empty()) h += "<div class=\"card error-box\">" + html_escape(error) + "</div>";
  h += compare_form(catalog, base, head, device);
  h +=
      "<p class=\"muted\">The same gate as <code>perfgate compare</code>: per cell, a one-sided "
      "t test on the run means of log tpot_ms (runs are the replicates) with its 95% interval, "
      "Holm correction across the cells; with one run a side, the pooled Mann-Whitney U and its "
      "Hodges-Lehmann interval, assuming no drift between runs; for the A/B runs of <code>perfgate "
      "ab</code>, the paired t test. The result names the test that decided.</p>";
  if (catalog.commits.size() >= 2) {
    const auto& head_c = catalog.commits[0];
    const auto& base_c = catalog.commits[1];
    h += "<p>Latest pair: <a href=\"/compare?base=" + url_encode(base_c.sha) +
         "&amp;head=" + url_encode(head_c.sha) + "\">" + html_escape(base_c.sha.substr(0, 10)) +
         " → " + html_escape(head_c.sha.substr(0, 10)) + "</a></p>";
  }
  PageFrame f{"Compare", "compare", "", {"common.js"}};
  return render_frame(f, h);
}

namespace {

// "+30.2% (+28.1 … +32.4)": the change and its interval in one unit.
std::string change_text(const gate::CellComparison& c) {
  if (!c.ratio) return "";
  std::string t = fmt_change(*c.ratio - 1.0);
  if (c.ci_low && c.ci_high) {
    char buf[64];
    std::snprintf(buf, sizeof buf, " <span class=\"muted small ci\">[%+.1f, %+.1f]</span>",
                  100.0 * (*c.ci_low - 1.0), 100.0 * (*c.ci_high - 1.0));
    t += buf;
  }
  return t;
}

// What the gate could have seen (docs/STATISTICS.md, "Minimum detectable effect"): said next to
// the verdict, and plainly when a pass could hide a slowdown of the gate's own min effect.
std::string power_text(const gate::GateResult& r) {
  const auto pct_or = [&r](const std::optional<double>& v) {
    return v ? fmt_change(*v)
             : std::string(r.drift_estimated ? "none (too few repetitions)"
                                             : "none (one run a side: no run-level variance)");
  };
  const std::string power = pct_setting(r.options.power);
  std::string h;
  const bool found = std::any_of(r.cells.begin(), r.cells.end(), [](const gate::CellComparison& c) {
    return c.verdict == gate::CellVerdict::regression && !gate::is_exact_gate_metric(c.metric);
  });
  if (r.underpowered && found) {
    // A gate that found a regression was not blind: say which cells it could not have seen.
    const std::vector<const gate::CellComparison*> unseen = gate::unseen_cells(r);
    if (!unseen.empty()) {
      constexpr size_t kListed = 10;
      h += "<div class=\"card unseen\" id=\"gate-unseen\"><b>The regressions found stand.</b> " +
           std::to_string(unseen.size()) + " unchanged cell" + (unseen.size() == 1 ? "" : "s") +
           " could not have shown a slowdown of the min effect (their minimum detectable effect "
           "at " +
           power +
           " power is above it), so \"unchanged\" there does not rule one out:<ul "
           "id=\"unseen-cells\">";
      for (size_t i = 0; i < unseen.size() && i < kListed; ++i) {
        const gate::CellComparison& c = *unseen[i];
        h += "<li>" +
             html_escape(c.key.model + " · " + cell_label(c.key, false) + metric_suffix(c)) +
             " <span class=\"muted small\">(" +
             (c.mde ? "MDE " + fmt_change(*c.mde) + " &gt; " +
                          pct_setting(r.options.min_effect_for(c.metric))
                    : std::string(c.test == "mann-whitney" ? "no MDE: one run a side"
                                                           : "no MDE: too few repetitions")) +
             ")</span></li>";
      }
      if (unseen.size() > kListed)
        h += "<li class=\"muted\">and " + std::to_string(unseen.size() - kListed) + " more</li>";
      h += "</ul>Measure more runs per side to see a slowdown there.</div>";
    }
  } else if (r.underpowered) {
    h += std::string(
             "<div class=\"card blind\" id=\"gate-blind\"><b>This gate was blind to its own "
             "min effect.</b> ") +
         (r.drift_estimated ? ""
                            : "With one run a side nothing measures the drift between runs, so "
                              "no power can be stated. ") +
         "It sees a slowdown of one cell from <b>" + pct_or(r.mde) + "</b> (with " + power +
         " power), larger than the min effect of " + pct_setting(r.options.min_effect) +
         ": a \"pass\" or \"unchanged\" here does not rule out a "
         "slowdown of that size. Measure more runs per side to see smaller changes.</div>";
  }
  h += "<p class=\"muted small\" id=\"gate-power\">Minimum detectable effect (" + power +
       " power): one cell " + pct_or(r.mde) + ", every cell alike " + pct_or(r.mde_all_cells) +
       " · min effect " + pct_setting(r.options.min_effect) + " (" +
       html_escape(r.options.min_effect_source) + ") · drift between runs " +
       (r.drift_estimated ? "estimated" : "not estimated (fewer than 2 runs a side)");
  if (r.options.max_looks > 1) {
    char buf[96];
    std::snprintf(buf, sizeof buf, " · look %d of %d, alpha %.3g per look · next: ", r.options.look,
                  r.options.max_looks, r.alpha_per_look);
    h += buf + html_escape(to_string(r.next));
  }
  if (r.measured_seconds > 0) {
    char buf[64];
    std::snprintf(buf, sizeof buf, " · %.1f s measured", r.measured_seconds);
    h += buf;
  }
  return h + "</p>";
}

// The cell's MDE, flagged when above the min effect, with the variance behind it on hover.
std::string mde_cell(const gate::CellComparison& c, double min_effect) {
  std::string title = "CI method: " + (c.ci_method.empty() ? std::string("-") : c.ci_method);
  if (c.runs_ratio) title += " · run-level ratio " + fmt_change(*c.runs_ratio - 1.0);
  char buf[96];
  if (c.run_sd) {
    std::snprintf(buf, sizeof buf, " · sd between runs %.2f%%", 100.0 * *c.run_sd);
    title += buf;
  }
  if (c.rep_sd) {
    std::snprintf(buf, sizeof buf, " · sd within a run %.2f%%", 100.0 * *c.rep_sd);
    title += buf;
  }
  const bool blind = c.mde && *c.mde > min_effect;
  std::string text = c.mde ? fmt_change(*c.mde) : "–";
  if (blind)
    text = "<span class=\"blind-cell\" title=\"above the min effect\">⚠ " + text + "</span>";
  std::optional<double> v;
  if (c.mde) v = 100.0 * *c.mde;
  std::string td = num_cell(v, text, "hide-narrow mde");
  return td.insert(3, " title=\"" + html_escape(title) + "\"");
}

// "One rule everywhere": the verdict a stored gate of this pair reached, under its own settings,
// and why this page's verdict may differ (docs/WEB.md, "Compare").
std::string stored_gate_box(const CompareView& v) {
  if (!v.stored) return "";
  const auto& g = *v.stored;
  const auto settings = nlohmann::json::parse(g.settings, nullptr, false);
  const auto result = nlohmann::json::parse(g.result, nullptr, false);
  const std::string page_verdict = to_string(v.result.verdict);
  std::string h = "<div class=\"card stored-gate\" id=\"stored-gate\"><p><b>Stored gate</b> #" +
                  std::to_string(g.id) + (g.ref.empty() ? "" : " on " + html_escape(g.ref)) + ", " +
                  html_escape(g.created_at) + " by " + html_escape(g.submitted_by) +
                  ": <span id=\"stored-verdict\" class=\"badge " +
                  html_escape(g.verdict == "regression" ? "fail" : g.verdict) + "\">" +
                  html_escape(g.verdict) + "</span> <span class=\"muted small\">(" +
                  html_escape(gate_settings_text(settings)) + ")</span></p>";
  const auto diffs = gate_settings_differences(settings, v.result.options);
  if (!diffs.empty()) {
    h += "<div id=\"settings-differ\"><p>This page decides under other settings than the stored "
         "gate, so the two verdicts may differ" +
         std::string(g.verdict == page_verdict ? " (here they agree)" : "") + ":</p><ul>";
    for (const auto& d : diffs) h += "<li>" + html_escape(d) + "</li>";
    h += "</ul><p class=\"muted small\">A larger min effect or a smaller alpha needs a larger, "
         "clearer change to call a regression; sequential looks test each look at alpha / looks. "
         "Open this page with the gate's settings (<code>?alpha=…&amp;min_effect=…</code>) to "
         "see its rule applied to the runs stored now.</p></div>";
  } else if (g.verdict != page_verdict) {
    const int then_base = result.value("base_runs", 0), then_head = result.value("head_runs", 0);
    h += "<p id=\"runs-differ\">Same settings, another verdict: the gate judged " +
         std::to_string(then_base) + " base and " + std::to_string(then_head) +
         " head runs; this page judges the " + std::to_string(v.result.base_runs) + " and " +
         std::to_string(v.result.head_runs) + " stored now" +
         (v.device.empty() ? "" : " on device " + html_escape(v.device)) + ".</p>";
  }
  return h + "</div>" + accept_box(g, v.acceptances);
}

std::string with_device(const CompareView& v, const std::string& device) {
  return "/compare?base=" + url_encode(v.info.base_spelled) +
         "&head=" + url_encode(v.info.head_spelled) +
         (device.empty() ? "" : "&device=" + url_encode(device));
}

std::string answer(const CompareView& v, const CommitCatalog& catalog) {
  const gate::GateResult& r = v.result;
  const std::string verdict = to_string(r.verdict);
  std::map<std::string, int> counts;
  std::set<CellKey> keys, regressed_keys;  // a cell regressed when any of its metrics did
  const gate::CellComparison* worst = nullptr;
  for (const auto& c : r.cells) {
    ++counts[to_string(c.verdict)];
    keys.insert(c.key);
    if (c.verdict == gate::CellVerdict::regression) regressed_keys.insert(c.key);
    if (c.verdict == gate::CellVerdict::regression && c.ratio &&
        (!worst || *c.ratio > *worst->ratio))
      worst = &c;  // of any metric
  }
  std::string h =
      "<div class=\"card answer\"><div class=\"verdict\"><span id=\"verdict\" "
      "class=\"badge big " +
      html_escape(verdict == "regression" ? "fail" : verdict) + "\">" + html_escape(verdict) +
      "</span><span id=\"verdict-summary\">";
  h += std::to_string(regressed_keys.size()) + " of " + std::to_string(keys.size()) + " cell" +
       (keys.size() == 1 ? "" : "s") + " regressed";
  if (worst)
    h += "; worst <b>" +
         html_escape(worst->key.model + " · " + cell_label(worst->key, false) +
                     metric_suffix(*worst)) +
         "</b> <span class=\"change regression\">" + fmt_change(*worst->ratio - 1.0) + "</span>";
  h += "</span></div><p class=\"muted small\">";
  bool first = true;
  for (const auto& [name, n] : counts) {
    h += std::string(first ? "" : " · ") + std::to_string(n) + " " + html_escape(name);
    first = false;
  }
  h +=
      " · alpha " + pct_setting(r.options.alpha, false) + " · min effect " +
      pct_setting(r.options.min_effect) + " · " + html_escape(r.options.correction) +
      " correction" +
      // The test that decided, in the gate's own words, as `perfgate compare` prints it.
      (r.rule.empty() ? ""
                      : " · <span id=\"gate-rule\">decided by " + html_escape(r.rule) + "</span>") +
      " · base " + commit_html(r.base, v.repo_url) + " (" + std::to_string(r.base_runs) +
      " runs) · head " + commit_html(r.head, v.repo_url) + " (" + std::to_string(r.head_runs) +
      " runs)</p>";
  if (!v.env_differences.empty()) {
    h += "<div class=\"env-diff\"><b>The environments differ</b>, so cells cannot be compared "
         "as they are:<ul>";
    for (const auto& d : v.env_differences) h += "<li class=\"mono\">" + html_escape(d) + "</li>";
    h += "</ul>";
    std::vector<std::string> choices = v.common_devices;
    if (choices.empty()) choices = catalog.devices;
    if (!choices.empty()) {
      h += "<p id=\"device-choice\">Compare on one device: ";
      for (const auto& d : choices)
        h += "<a class=\"button\" href=\"" + html_escape(with_device(v, d)) + "\">" +
             html_escape(d) + "</a> ";
      h += "</p>";
    }
    h += "</div>";
  } else if (!v.device.empty()) {
    h += "<p class=\"muted\">Runs of device <b>" + html_escape(v.device) +
         "</b> only · <a href=\"" + html_escape(with_device(v, "")) + "\">all runs</a></p>";
  }
  h += power_text(r);
  for (const auto& w : r.warnings) h += "<p>⚠ " + html_escape(w) + "</p>";
  // Notes once: the report's, then each distinct cell note with how many cells it concerns.
  std::map<std::string, int> cell_notes;
  for (const auto& c : r.cells)
    if (!c.note.empty()) ++cell_notes[c.note];
  std::string notes;
  for (const auto& n : v.info.notes) notes += "<li>" + html_escape(n) + "</li>";
  for (const auto& [n, k] : cell_notes)
    notes += "<li>" + html_escape(n) +
             (k > 1 ? " <span class=\"muted\">(" + std::to_string(k) + " cells)</span>" : "") +
             "</li>";
  if (!notes.empty()) h += "<ul class=\"notes muted\">" + notes + "</ul>";
  return h + "</div>";
}

// Base and head with their subjects and links, under the heading.
std::string commit_subjects(const CompareView& v) {
  auto line = [&](const char* side, const std::string& sha, const std::string& subject) {
    return std::string("<li><span class=\"muted\">") + side + "</span> " +
           commit_html(sha, v.repo_url) + " " + html_escape(subject) + "</li>";
  };
  return "<ul class=\"commits card\" id=\"commit-subjects\">" +
         line("base", v.result.base, v.base_subject) + line("head", v.result.head, v.head_subject) +
         "</ul>";
}

std::string run_links(const std::vector<int64_t>& ids) {
  std::string h;
  for (int64_t id : ids)
    h += "<a href=\"/runs/" + std::to_string(id) + "\">#" + std::to_string(id) + "</a> ";
  return h;
}

}  // namespace

std::string render_compare_page(const CompareView& v, const CommitCatalog& catalog,
                                const std::string& device, int64_t from_series) {
  const gate::GateResult& r = v.result;
  std::string h = "<h1>Compare <span class=\"mono\">" + html_escape(r.base.substr(0, 10)) +
                  "</span> → <span class=\"mono\">" + html_escape(r.head.substr(0, 10)) +
                  "</span></h1>";
  h += commit_subjects(v);
  h += answer(v, catalog);
  const std::string gate_box = stored_gate_box(v);
  h += gate_box;
  h +=
      "<div class=\"card scroll\"><table id=\"compare-table\" class=\"sortable\"><thead><tr>"
      "<th>cell</th><th class=\"hide-narrow\">device</th>"
      "<th class=\"num hide-narrow\">base median</th><th class=\"num hide-narrow\">head median</th>"
      "<th class=\"num\">change [95% CI]</th><th class=\"num hide-narrow\" title=\"minimum "
      "detectable effect of this cell\">MDE</th><th class=\"num hide-narrow\">p adj.</th>"
      "<th>verdict</th><th class=\"hide-narrow\">runs (base / head)</th></tr></thead><tbody>";
  for (size_t i = 0; i < r.cells.size(); ++i) {
    const gate::CellComparison& c = r.cells[i];
    const CellKey& k = c.key;
    const int64_t sid = i < v.series_ids.size() ? v.series_ids[i] : 0;
    const std::string label = html_escape(k.model + " · " + cell_label(k, false));
    // The metric on a line of its own, so that it adds no width to the table.
    const std::string metric = metric_suffix(c);
    // The cell the reader came from (a trend's or an alert's link), marked and scrolled to.
    h += std::string(sid && sid == from_series ? "<tr class=\"from\" data-from>" : "<tr>") +
         "<td class=\"cellname\" data-v=\"" + label + html_escape(metric) + "\">" +
         (sid ? "<a href=\"/series/" + std::to_string(sid) + "\" title=\"trend of this cell\">" +
                    label + "</a>"
              : label) +
         (metric.empty()
              ? ""
              : "<br><span class=\"muted small\">" + html_escape(metric.substr(4)) + "</span>") +
         "</td><td class=\"hide-narrow\">" + html_escape(k.device) + "</td>";
    h += num_cell(c.base_median, c.base_median ? value_text(*c.base_median, c.metric) : "",
                  "hide-narrow");
    h += num_cell(c.head_median, c.head_median ? value_text(*c.head_median, c.metric) : "",
                  "hide-narrow");
    std::optional<double> change;
    if (c.ratio) change = 100.0 * (*c.ratio - 1.0);
    h += num_cell(change, change_text(c));
    h += mde_cell(c, r.options.min_effect_for(c.metric));
    h += num_cell(c.p_adjusted, c.p_adjusted ? fmt_num(*c.p_adjusted) : "", "hide-narrow");
    const std::string cv = to_string(c.verdict);
    h += "<td data-v=\"" + html_escape(cv) + "\"><span class=\"badge " + html_escape(cv) + "\">" +
         html_escape(cv) + "</span></td><td class=\"hide-narrow small\">" +
         run_links(v.base_run_ids) + "/ " + run_links(v.head_run_ids) + "</td></tr>";
  }
  h += "</tbody></table></div>";
  h += render_compare_explanations(v);
  // One triage form a page: the stored gate's accept box brings it when there is one.
  h += render_regressed_cells(v, gate_box.find("id=\"triage-auth\"") == std::string::npos);
  h += "<details class=\"card\"><summary>Other revisions</summary>" +
       compare_form(catalog, v.info.base_spelled, v.info.head_spelled, device) + "</details>";
  const std::string q = "?base=" + url_encode(v.info.base_spelled) +
                        "&head=" + url_encode(v.info.head_spelled) +
                        (device.empty() ? "" : "&device=" + url_encode(device));
  PageFrame f{
      "Compare", "compare", "/api/v1/compare" + q, {"common.js", "compare.js", "triage.js"}};
  return render_frame(f, h);
}

}  // namespace pg::web

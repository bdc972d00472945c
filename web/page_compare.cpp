#include <cmath>

#include "web/html.h"
#include "web/json_util.h"
#include "web/pages.h"

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

std::string num_cell(const std::optional<double>& v, const std::string& text) {
  if (!v || !std::isfinite(*v)) return "<td class=\"num\" data-v=\"\">–</td>";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", *v);
  return std::string("<td class=\"num\" data-v=\"") + buf + "\">" + text + "</td>";
}

}  // namespace

std::string render_compare_form(const CommitCatalog& catalog, const std::string& base,
                                const std::string& head, const std::string& device,
                                const std::string& error) {
  std::string h = "<h1>Compare two revisions</h1>";
  if (!error.empty()) h += "<div class=\"card error-box\">" + html_escape(error) + "</div>";
  h += compare_form(catalog, base, head, device);
  h += "<p class=\"muted\">The same gate as <code>perfgate compare</code>: per-cell one-sided "
       "Mann-Whitney U on the tpot_ms repetitions, Hodges-Lehmann interval, Holm correction.</p>";
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

std::string render_compare_page(const CompareView& v, const CommitCatalog& catalog,
                                const std::string& device) {
  const GateResult& r = v.result;
  std::string h = "<h1>Compare <span class=\"mono\">" + html_escape(r.base.substr(0, 10)) +
                  "</span> → <span class=\"mono\">" + html_escape(r.head.substr(0, 10)) +
                  "</span></h1>";
  h += compare_form(catalog, v.info.base_spelled, v.info.head_spelled, device);
  const std::string verdict = to_string(r.verdict);
  std::map<std::string, int> counts;
  for (const auto& c : r.cells) ++counts[to_string(c.verdict)];
  h += "<div class=\"card\"><div class=\"verdict\">verdict <span id=\"verdict\" class=\"badge " +
       html_escape(verdict == "regression" ? "fail" : verdict) + "\">" + html_escape(verdict) +
       "</span>";
  for (const auto& [name, n] : counts)
    h += "<span class=\"muted\">" + std::to_string(n) + " " + html_escape(name) + "</span>";
  h += "</div><p class=\"muted\">alpha " + fmt_num(r.options.alpha) + " · min effect " +
       fmt_num(r.options.min_effect) + " · correction " + html_escape(r.options.correction) +
       " · base runs " + std::to_string(r.base_runs) + " · head runs " +
       std::to_string(r.head_runs) + "</p>";
  for (const auto& w : r.warnings) h += "<p>⚠ " + html_escape(w) + "</p>";
  for (const auto& n : v.info.notes) h += "<p class=\"muted\">" + html_escape(n) + "</p>";
  h += "</div>";

  h += "<div class=\"card scroll\"><table id=\"compare-table\" class=\"sortable\"><thead><tr>"
       "<th>model</th><th>dtype</th><th class=\"num\">batch</th><th class=\"num\">prompt</th>"
       "<th class=\"num\">gen</th><th>kv</th><th>attention</th><th>graphs</th><th>device</th>"
       "<th class=\"num\">base median</th><th class=\"num\">head median</th>"
       "<th class=\"num\">change</th><th class=\"num\">CI</th><th class=\"num\">p</th>"
       "<th class=\"num\">p adj.</th><th>verdict</th><th "
       "class=\"wrap\">note</th></tr></thead><tbody>";
  for (const auto& c : r.cells) {
    const CellKey& k = c.key;
    h += "<tr><td>" + html_escape(k.model) + "</td><td>" + html_escape(k.dtype) + "</td>";
    h += "<td class=\"num\" data-v=\"" + std::to_string(k.batch_size) + "\">" +
         std::to_string(k.batch_size) + "</td>";
    h += "<td class=\"num\" data-v=\"" + std::to_string(k.seq_len) + "\">" +
         std::to_string(k.seq_len) + "</td>";
    h += "<td class=\"num\" data-v=\"" + std::to_string(k.gen_tokens) + "\">" +
         std::to_string(k.gen_tokens) + "</td>";
    h += std::string("<td>") + (k.kv_cache ? "on" : "off") + "</td><td>" +
         html_escape(k.attention) + "</td><td>" + (k.cuda_graphs ? "on" : "off") + "</td><td>" +
         html_escape(k.device) + "</td>";
    h += num_cell(c.base_median, c.base_median ? fmt_num(*c.base_median) + " ms" : "");
    h += num_cell(c.head_median, c.head_median ? fmt_num(*c.head_median) + " ms" : "");
    std::optional<double> change;
    if (c.ratio) change = 100.0 * (*c.ratio - 1.0);
    h += num_cell(change, change ? (*change >= 0 ? "+" : "") + fmt_num(*change) + "%" : "");
    h += num_cell(c.ci_low,
                  c.ci_low && c.ci_high ? fmt_num(*c.ci_low) + "–" + fmt_num(*c.ci_high) : "");
    h += num_cell(c.p_value, c.p_value ? fmt_num(*c.p_value) : "");
    h += num_cell(c.p_adjusted, c.p_adjusted ? fmt_num(*c.p_adjusted) : "");
    const std::string cv = to_string(c.verdict);
    h += "<td data-v=\"" + html_escape(cv) + "\"><span class=\"badge " + html_escape(cv) + "\">" +
         html_escape(cv) + "</span></td><td class=\"wrap muted\">" + html_escape(c.note) +
         "</td></tr>";
  }
  h += "</tbody></table></div>";
  const std::string q =
      "?base=" + url_encode(v.info.base_spelled) + "&head=" + url_encode(v.info.head_spelled);
  PageFrame f{"Compare", "compare", "/api/v1/compare" + q, {"common.js", "compare.js"}};
  return render_frame(f, h);
}

}  // namespace pg::web

// The compare page's "Accepted slowdowns" card (docs/WEB.md "Accepting a slowdown"): what has
// been accepted for the stored gate's ref, and the form that accepts its regressions. The buttons
// are triage.js's; the server records who pressed them.
#include <fmt/format.h>

#include <algorithm>

#include "core/cell_label.h"
#include "web/pages/html.h"
#include "web/pages/pages.h"

namespace pg::web {
namespace {

std::string acceptance_item(const store::Store::Acceptance& a) {
  std::string cells;
  for (const store::Store::AcceptedCell& c : a.cells)
    cells += fmt::format("{}{} · {} {} {:+.1f}%", cells.empty() ? "" : "; ", c.key.model,
                         cell_label(c.key, false), c.metric, 100.0 * (c.ratio - 1.0));
  std::string h = "<li data-acceptance=\"" + std::to_string(a.id) + "\"" +
                  (a.revoked_by ? " class=\"revoked\"" : "") + "><b>#" + std::to_string(a.id) +
                  "</b> " + html_escape(cells) + " — accepted by <b>" + html_escape(a.author) +
                  "</b> (" + html_escape(a.via) + ") at " + html_escape(a.at) +
                  (a.gate_id ? " from gate #" + std::to_string(*a.gate_id) : "") + ": “" +
                  html_escape(a.reason) + "”";
  if (a.revoked_by)
    return h + " <span class=\"badge unchanged\">revoked</span> by " +
           html_escape(a.revoked_author) + " at " + html_escape(a.revoked_at) + ": “" +
           html_escape(a.revoked_reason) + "”</li>";
  return h +
         " <span class=\"badge accepted\">in force</span> <button type=\"button\" "
         "data-revoke=\"" +
         std::to_string(a.id) + "\">Revoke</button></li>";
}

}  // namespace

std::string accept_box(const store::Store::GateRecord& g,
                       const std::vector<store::Store::Acceptance>& of_ref) {
  if (g.ref.empty()) return "";
  std::string h = "<div class=\"card\" id=\"acceptances\"><h2>Accepted slowdowns of " +
                  html_escape(g.ref) + "</h2>";
  if (of_ref.empty()) {
    h += "<p class=\"muted\">None yet.</p>";
  } else {
    h += "<ul id=\"acceptance-list\">";
    for (const store::Store::Acceptance& a : of_ref) h += acceptance_item(a);
    h += "</ul>";
  }
  // Once this gate's regressions are accepted (and not revoked), there is nothing left to accept.
  const bool accepted = std::any_of(
      of_ref.begin(), of_ref.end(),
      [&](const store::Store::Acceptance& a) { return a.gate_id == g.id && !a.revoked_by; });
  if (g.verdict == "regression" && !accepted)
    h += "<form id=\"accept-form\" class=\"filters\" data-gate=\"" + std::to_string(g.id) +
         "\"><label>reason<input name=\"reason\" required maxlength=\"2000\" placeholder=\"why "
         "this slowdown is worth it\"></label><button type=\"submit\">Accept the regressions of "
         "gate #" +
         std::to_string(g.id) + " for " + html_escape(g.ref) + "</button></form>";
  h += "<p class=\"muted small\">The next gate of " + html_escape(g.ref) +
       " (<code>perfgate compare --acceptances … --ref " + html_escape(g.ref) +
       "</code>) tests each accepted cell against the base times the accepted slowdown: it "
       "passes at what was accepted and fails again when the head gets slower still. Accepting "
       "or revoking needs a credential that may triage.</p>";
  h += triage_auth_form();
  return h + "</div>";
}

}  // namespace pg::web

#include "gate/report_links.h"

#include <charconv>
#include <regex>

#include "common/errors.h"
#include "common/escape.h"
#include "core/cell_key_query.h"

namespace pg::gate::report_links {
namespace {

std::string base_of(const std::string& dashboard) {
  std::string b = dashboard;
  while (!b.empty() && b.back() == '/') b.pop_back();
  return b;
}

// The shortest text that reads back as the same double: 0.05, not 0.050000000000000003.
std::string number(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

// The min_effect setting's text (app/gate_settings.h's form): the number, then METRIC=NUMBER for
// each metric whose own differs. 'auto' goes as the number it chose, so the page applies the
// gate's rule rather than its own history's.
std::string min_effect_text(const GateOptions& o) {
  std::string t = number(o.min_effect);
  for (const auto& [metric, e] : o.metric_min_effect) t += "," + metric + "=" + number(e);
  return t;
}

}  // namespace

void check_dashboard_url(const std::string& url) {
  // Host: letters, digits, '.', '-', '_', or a bracketed IPv6 literal; then a port and a path of
  // URL characters that need no escaping in Markdown, HTML or a workflow command.
  static const std::regex re(
      R"(^https?://([A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\])(:[0-9]{1,5})?(/[A-Za-z0-9._~%!$&*+,;=:@/-]*)?$)");
  if (!std::regex_match(url, re))
    throw SettingError("dashboard_url",
                       "must be http(s)://HOST[:PORT][/PREFIX] without a query, fragment, space "
                       "or quote, got '" +
                           url + "'");
}

std::string compare_url(const std::string& dashboard, const GateResult& r) {
  const GateOptions defaults;
  std::string u =
      base_of(dashboard) + "/compare?base=" + url_encode(r.base) + "&head=" + url_encode(r.head);
  const GateOptions& o = r.options;
  if (o.alpha != defaults.alpha) u += "&alpha=" + url_encode(number(o.alpha));
  if (o.min_effect != defaults.min_effect || !o.metric_min_effect.empty() ||
      o.min_effect_source != defaults.min_effect_source)
    u += "&min_effect=" + url_encode(min_effect_text(o));
  if (o.metrics != defaults.metrics) {
    std::string m;
    for (const auto& name : o.metrics) m += (m.empty() ? "" : ",") + name;
    u += "&metrics=" + url_encode(m);
  }
  if (o.correction != defaults.correction) u += "&correction=" + url_encode(o.correction);
  return u;
}

std::string trend_url(const std::string& dashboard, const CellComparison& c) {
  return base_of(dashboard) + "/series?" + cell_key_query(c.key) +
         "&metric=" + url_encode(c.metric);
}

nlohmann::json to_json(const std::string& dashboard, const GateResult& r) {
  return {{"dashboard", base_of(dashboard)}, {"compare", compare_url(dashboard, r)}};
}

}  // namespace pg::gate::report_links

#include "web/pages/page_frame.h"

#include "web/http/assets.h"
#include "web/pages/html.h"

namespace pg::web {

std::string render_frame(const PageFrame& f, const std::string& body) {
  std::string h;
  h.reserve(body.size() + 2048);
  h += "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
       "<meta name=\"color-scheme\" content=\"light dark\">";
  h += "<title>" + html_escape(f.title) + " · perfgate</title>";
  h += "<link rel=\"icon\" href=\"" + html_escape(asset_url("favicon.svg")) + "\">";
  h += "<link rel=\"stylesheet\" href=\"" + html_escape(asset_url("style.css")) + "\">";
  for (const auto& s : f.scripts)
    h += "<script defer src=\"" + html_escape(asset_url(s)) + "\"></script>";
  h += "</head><body><header class=\"top\"><a class=\"brand\" href=\"/\">perfgate</a><nav>";
  auto nav = [&](const char* id, const char* href, const char* label) {
    h += std::string("<a href=\"") + href + "\"" + (f.nav == id ? " class=\"active\"" : "") + ">" +
         label + "</a>";
  };
  nav("overview", "/", "Overview");
  nav("regressions", "/regressions", "Regressions");
  nav("compare", "/compare", "Compare");
  nav("runs", "/runs", "Runs");
  h += "</nav>";
  if (!f.json_twin.empty())
    h += "<a class=\"twin mono\" href=\"" + html_escape(f.json_twin) + "\">JSON</a>";
  h += "</header><main>";
  h += body;
  h += "</main></body></html>\n";
  return h;
}

std::string render_error_page(int status, const std::string& reason) {
  PageFrame f{"Error " + std::to_string(status), "", "", {}};
  return render_frame(f, "<h1>" + std::to_string(status) + "</h1><div class=\"card error-box\">" +
                             html_escape(reason) +
                             "</div><p><a href=\"/\">Back to the overview</a></p>");
}

}  // namespace pg::web

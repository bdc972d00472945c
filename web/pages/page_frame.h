// The document around every page (head, navigation, assets) and the error page. Below the pages:
// it needs no view model, so the response helpers (http_util) can render an error page without
// depending on the pages.
#pragma once
#include <string>
#include <vector>

namespace pg::web {

struct PageFrame {
  std::string title;
  std::string nav;                   // "overview" | "compare" | "runs"
  std::string json_twin;             // URL of the page's JSON twin
  std::vector<std::string> scripts;  // asset names, loaded deferred in this order
};

// The document around a page body: head, navigation, assets.
std::string render_frame(const PageFrame& frame, const std::string& body);
std::string render_error_page(int status, const std::string& reason);

}  // namespace pg::web

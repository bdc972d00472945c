// Escaping for everything a page embeds. Commit subjects, branch names and environment strings come
// from pull requests and remote clients: each goes through exactly one of these on its way out.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "common/escape.h"

namespace pg::web {

// For HTML text and quoted attribute values: & < > " ' become entities.
using pg::html_escape;  // common/escape.h
// JSON to place inside <script type="application/json">: also escapes <, >, & and U+2028/U+2029
// as \uXXXX so no string can close the script element or break a JS parser.
std::string json_for_script(const nlohmann::json& j);
// Percent-encoding of one query-string component (RFC 3986 unreserved characters stay).
using pg::url_encode;  // common/escape.h

}  // namespace pg::web

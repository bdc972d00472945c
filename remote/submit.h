// Submitting (the `submit` and `token-file` settings): send a finished run (`perfgate run`) or a
// gate result (`perfgate compare`) to a remote `perfgate serve`. The local report or store is
// always written first; submitting is an extra copy, never the only one.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "common/errors.h"
#include "common/token_file.h"  // read_token_file: the one reader, shared with serve

namespace pg::remote {

struct SubmitTarget {
  std::string scheme_host_port;  // "http://ci-box:8080", what the HTTP client connects to
  std::string path;              // the URL's path plus the endpoint ("/api/v1/runs")
};

// Throws SettingError naming `setting` (marked, common/errors.h, or a flag cli/ spelled) unless
// `url` is http(s)://HOST[:PORT][/PREFIX].
SubmitTarget parse_submit_url(const std::string& url,
                              const std::string& setting = SettingError::setting("submit"),
                              const std::string& endpoint = "/api/v1/runs");

// POSTs a JSON document with a bearer token: `export_json` (what `perfgate export --format json`
// prints) to /api/v1/runs, or a compare JSON to /api/v1/gates.
// Returns the server's reply on 2xx; throws RuntimeFailure with the server's message otherwise.
std::string submit_run_json(const SubmitTarget& target, const std::string& token,
                            const std::string& export_json);

using QueryParams = std::vector<std::pair<std::string, std::string>>;
// GETs a JSON document from a perfgate serve (GET /api/v1/acceptances?ref=...), without a token:
// its reads need none. Returns the body on 2xx; throws RuntimeFailure as submit_run_json.
std::string get_json(const SubmitTarget& target, const QueryParams& query);

}  // namespace pg::remote

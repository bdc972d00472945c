#include "web/http/assets.h"
#include "web/routes/http_util.h"
#include "web/routes/routes.h"

namespace pg::web {

void register_static_routes(httplib::Server& http) {
  // Exact-name lookup in the embedded table: "../", "%2e%2e", "%00" simply name no asset.
  http.Get(R"(/static/(.+))", guarded([](const httplib::Request& req, httplib::Response& res) {
             const Asset* a = find_asset(req.matches[1].str());
             if (!a) throw HttpError(404, "no such asset");
             // A versioned URL (?v=hash) changes with the content: cache it for a year.
             const bool versioned = req.has_param("v") && req.get_param_value("v") == a->version;
             res.set_header("Cache-Control", versioned ? "public, max-age=31536000, immutable"
                                                       : "public, max-age=300");
             res.set_header("ETag", a->etag);
             res.set_header("Vary", "Accept-Encoding");
             if (req.get_header_value("If-None-Match") == a->etag) {
               res.status = 304;
               return;
             }
             const std::string type(a->content_type);
             if (client_accepts_gzip()) {
               res.set_header("Content-Encoding", "gzip");
               res.set_content(a->gzipped(), type.c_str());
             } else {
               res.set_content(a->body.data(), a->body.size(), type.c_str());
             }
           }));
  http.Get("/favicon.ico", [](const httplib::Request&, httplib::Response& res) {
    res.status = 301;
    res.set_header("Location", asset_url("favicon.svg"));
  });
}

}  // namespace pg::web

// Query parameters into the plain structs of web/views/models.h (web/routes/params.h).
#include "web/routes/params.h"

#include <charconv>
#include <cmath>

#include "web/routes/http_util.h"

namespace pg::web {

namespace {

std::optional<int> int_param(const httplib::Request& req, const char* name) {
  auto v = query_param(req, name, 32);
  if (!v) return std::nullopt;
  auto id = parse_id(*v);
  if (!id || *id > 1'000'000'000)
    throw HttpError(400, std::string("query parameter '") + name + "' must be a positive integer");
  return static_cast<int>(*id);
}

std::optional<double> number_param(const httplib::Request& req, const char* name) {
  auto v = query_param(req, name, 32);
  if (!v) return std::nullopt;
  double d = 0;
  auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), d);
  if (ec != std::errc() || p != v->data() + v->size() || !std::isfinite(d))
    throw HttpError(400, std::string("query parameter '") + name + "' must be a number");
  return d;
}

}  // namespace

OverviewFilter parse_overview_filter(const httplib::Request& req) {
  OverviewFilter f;
  f.model = query_param(req, "model");
  f.dtype = query_param(req, "dtype");
  f.device = query_param(req, "device");
  f.batch = int_param(req, "batch");
  f.prompt = int_param(req, "prompt");
  return f;
}

Metric metric_param(const httplib::Request& req) {
  auto v = query_param(req, "metric", 64);
  if (!v) return Metric::tpot_ms;
  auto m = parse_metric(*v);
  if (!m) {
    std::string names;
    for (const auto& i : all_metrics()) names += std::string(names.empty() ? "" : ", ") + i.name;
    throw HttpError(400, "unknown metric (expected one of " + names + ")");
  }
  return *m;
}

std::optional<std::string> branch_param(App& app, const httplib::Request& req, uint64_t gen) {
  auto b = query_param(req, "branch", 200);
  // Only stored branches: a made-up name would also cost a cached view per name.
  if (b && !app.branches(gen)->count(*b))
    throw HttpError(404, "no stored run was made on branch '" + *b + "'");
  return b;
}

CompareParams compare_params(const httplib::Request& req) {
  CompareParams p;
  p.alpha = number_param(req, "alpha");
  p.min_effect = query_param(req, "min_effect", 128);
  p.metrics = query_param(req, "metrics", 128);
  p.correction = query_param(req, "correction", 16);
  p.device = query_param(req, "device");
  return p;
}

}  // namespace pg::web

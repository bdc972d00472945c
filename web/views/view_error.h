// What a view model throws for a request it cannot answer: bad input (a malformed or ambiguous
// value, a setting out of range) or something that is not there (an unknown series, revision or
// branch). The views know no HTTP; the routes answer it as 400 or 404 (routes/http_util.h).
#pragma once
#include <stdexcept>
#include <string>

namespace pg::web {

struct ViewError : std::runtime_error {
  enum class Kind { bad_input, not_found };
  ViewError(Kind kind, const std::string& reason) : std::runtime_error(reason), kind(kind) {}
  static ViewError bad_input(const std::string& reason) { return {Kind::bad_input, reason}; }
  static ViewError not_found(const std::string& reason) { return {Kind::not_found, reason}; }
  Kind kind;
};

}  // namespace pg::web

// The TOML sweep file: a flat table whose keys are the flag names of `perfgate run`.
#include <fmt/format.h>

#include <toml++/toml.h>

#include "common/errors.h"
#include "runner/config_detail.h"

namespace pg::runner::detail {
namespace {

std::string type_name(toml::node_type t) {
  switch (t) {
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a floating-point number";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::table:
      return "a table";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    case toml::node_type::none:
      break;
  }
  return "nothing";
}

std::string expected_text(ValueKind kind) {
  switch (kind) {
    case ValueKind::int_list:
      return "an integer or an array of integers";
    case ValueKind::int_scalar:
      return "an integer";
    case ValueKind::string_list:
      return "a string or an array of strings";
    case ValueKind::string_scalar:
      return "a string";
    case ValueKind::onoff_list:
      return "\"on\"/\"off\", a boolean, or an array of them";
    case ValueKind::flag:
      return "a boolean";
    case ValueKind::number:
      return "a number";
  }
  return "a value";
}

class SweepFileReader {
 public:
  explicit SweepFileReader(std::string source_name) : source_(std::move(source_name)) {}

  std::string where(const toml::source_region& region, const std::string& key) const {
    return fmt::format("{}:{}: {}", source_, region.begin.line, key);
  }

  // One scalar TOML value of a setting to its text, or nothing if its type is wrong there.
  static bool scalar_text(const toml::node& node, ValueKind kind, std::string& out) {
    switch (kind) {
      case ValueKind::int_list:
      case ValueKind::int_scalar:
        if (auto v = node.value_exact<int64_t>()) return out = std::to_string(*v), true;
        return false;
      case ValueKind::string_list:
      case ValueKind::string_scalar:
        if (auto v = node.value_exact<std::string>()) return out = *v, true;
        return false;
      case ValueKind::onoff_list:
        if (auto v = node.value_exact<bool>()) return out = *v ? "on" : "off", true;
        if (auto v = node.value_exact<std::string>()) return out = *v, true;
        return false;
      case ValueKind::flag:
        if (auto v = node.value_exact<bool>()) return out = *v ? "true" : "false", true;
        return false;
      case ValueKind::number:
        if (auto v = node.value_exact<int64_t>()) return out = std::to_string(*v), true;
        if (auto v = node.value_exact<double>()) return out = fmt::format("{}", *v), true;
        return false;
    }
    return false;
  }

  static bool is_list(ValueKind kind) {
    return kind == ValueKind::int_list || kind == ValueKind::string_list ||
           kind == ValueKind::onoff_list;
  }

  RawSetting read(const std::string& key, const toml::node& node) const {
    const ValueKind kind = kind_of(key);
    RawSetting raw;
    raw.where = where(node.source(), key);
    raw.location = fmt::format("{}:{}", source_, node.source().begin.line);
    auto wrong_type = [&](const toml::node& n) {
      return UsageError(fmt::format("{}: expected {}, got {}", where(n.source(), key),
                                    expected_text(kind), type_name(n.type())));
    };
    if (const toml::array* arr = node.as_array(); arr && is_list(kind)) {
      if (arr->empty()) throw UsageError(raw.where + ": empty list");
      for (const toml::node& elem : *arr) {
        std::string text;
        if (!scalar_text(elem, kind, text)) throw wrong_type(elem);
        raw.items.push_back({text, where(elem.source(), key)});
      }
      return raw;
    }
    std::string text;
    if (!scalar_text(node, kind, text)) throw wrong_type(node);
    raw.items.push_back({text, raw.where});
    return raw;
  }

 private:
  std::string source_;
};

std::string unknown_key_message(const std::string& key) {
  std::string dashed = key;
  for (char& c : dashed)
    if (c == '_') c = '-';
  if (dashed != key && is_setting(dashed))
    return fmt::format("unknown key '{}' (did you mean '{}'?)", key, dashed);
  if (key == "config") return "unknown key 'config' (a sweep file cannot include another)";
  return fmt::format("unknown key '{}' (the keys are the flag names of `perfgate run`)", key);
}

}  // namespace

RawSettings read_toml_settings(const std::string& text, const std::string& source_name) {
  toml::table table;
  try {
    table = toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    throw UsageError(fmt::format("{}:{}: {}", source_name, e.source().begin.line, e.description()));
  }
  SweepFileReader reader(source_name);
  RawSettings settings;
  for (auto&& [key, node] : table) {
    const std::string name(key.str());
    if (!is_setting(name))
      throw UsageError(fmt::format("{}:{}: {}", source_name, key.source().begin.line,
                                   unknown_key_message(name)));
    settings[name] = reader.read(name, node);
  }
  return settings;
}

}  // namespace pg::runner::detail

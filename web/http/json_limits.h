// Limits on JSON documents that come from clients: nesting depth is checked on the raw text before
// any parse, because nlohmann::json's dump() and the pages' rendering recurse once per level (a
// config nested 70,000 deep overflowed the stack; one 20,000 deep made an 800 MB run page).
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace pg::web {

// Ingest refuses documents nested deeper than this (an export document needs fewer than 10).
inline constexpr size_t kMaxJsonDepth = 64;

// The byte offset where `json`'s nesting of arrays and objects first exceeds `max_depth`, or
// nullopt when it never does. Strings are skipped, so brackets inside them do not count; the text
// need not be valid JSON.
std::optional<size_t> json_too_deep_at(std::string_view json, size_t max_depth = kMaxJsonDepth);

// A stored JSON document for people to read: pretty-printed when it is small and shallow; shown
// as stored (cut at `max_bytes`, with a note) when it is too deep, too large or not JSON, so one
// hostile document cannot make a page huge or overflow the stack.
std::string json_for_display(const std::string& stored, size_t max_bytes = 64 * 1024);

// The stored config of a run as the JSON API may embed it: unchanged when it is at most
// kMaxJsonDepth deep and `max_bytes` long; otherwise a JSON string saying why it is left out.
std::string config_for_api(const std::string& stored, size_t max_bytes = 1u << 20);

}  // namespace pg::web

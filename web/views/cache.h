// Computed views (series, overview, compare) cached per database generation. The generation moves
// whenever any connection -- this server's ingest or a runner in another process -- commits, so a
// cached body is never served after the data under it changed.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace pg::web {

// The content types of the bodies the views compute.
inline constexpr const char* kJsonType = "application/json; charset=utf-8";
inline constexpr const char* kHtmlType = "text/html; charset=utf-8";

// A response body computed once and sent many times, with its validator and a gzip variant made on
// first demand.
class CachedBody {
 public:
  CachedBody(std::string body, std::string content_type);
  const std::string& body() const { return body_; }
  const std::string& content_type() const { return type_; }
  const std::string& etag() const { return etag_; }
  const std::string& gzipped() const;

 private:
  std::string body_, type_, etag_;
  mutable std::once_flag gz_once_;
  mutable std::string gz_;
};

// One slot per key; computing a slot is single-flight (concurrent requests for the same key wait
// for one computation), different keys compute in parallel.
template <class V>
class GenerationCache {
 public:
  explicit GenerationCache(size_t max_entries = 1024) : max_(max_entries) {}

  // The value when one computed for `generation` (or later) is kept; else nullptr, computing
  // nothing. For answers that are cached only once complete (the overview while views compute).
  std::shared_ptr<const V> peek(const std::string& key, uint64_t generation) {
    std::shared_ptr<Slot> slot;
    {
      std::lock_guard lk(m_);
      auto it = slots_.find(key);
      if (it == slots_.end()) return nullptr;
      slot = it->second;
    }
    std::lock_guard lk(slot->m);
    return slot->value && slot->generation >= generation ? slot->value : nullptr;
  }

  std::shared_ptr<const V> get(const std::string& key, uint64_t generation,
                               const std::function<std::shared_ptr<const V>()>& compute) {
    std::shared_ptr<Slot> slot;
    {
      std::lock_guard lk(m_);
      auto it = slots_.find(key);
      if (it == slots_.end()) {
        if (slots_.size() >= max_) evict(generation);
        it = slots_.emplace(key, std::make_shared<Slot>()).first;
      }
      slot = it->second;
    }
    std::lock_guard lk(slot->m);
    if (slot->value && slot->generation >= generation) return slot->value;
    slot->value = compute();
    slot->generation = generation;
    return slot->value;
  }

 private:
  struct Slot {
    std::mutex m;
    uint64_t generation = 0;
    std::shared_ptr<const V> value;
  };
  void evict(uint64_t generation) {  // called with m_ held
    std::erase_if(slots_, [&](const auto& kv) { return kv.second->generation < generation; });
    if (slots_.size() >= max_) slots_.clear();
  }
  std::mutex m_;
  std::unordered_map<std::string, std::shared_ptr<Slot>> slots_;
  size_t max_;
};

}  // namespace pg::web

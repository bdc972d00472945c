// The JSON-lines protocol an `--exec` benchmark prints on stdout (docs/PROTOCOL.md), read one
// line at a time and validated as it arrives: one set of rules for a one-shot run and for a
// worker (protocol 3), which answers perfgate's requests one line each. LibTorch-free and pure,
// so every rule is tested on hand-written lines.
#pragma once
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/profile.h"
#include "core/run.h"

namespace pg::exec {

// The newest version perfgate speaks and the oldest whose hello line it still accepts. Version 2
// adds the optional `profile` line, version 3 the worker mode (`perfgate ab`). A one-shot cell
// says version 2, the newest with nothing new for it, so that a helper of version 2 keeps
// working; a worker's cell says 3.
inline constexpr int kProtocolVersion = 3;
inline constexpr int kOneShotProtocolVersion = 2;
inline constexpr int kWorkerProtocolVersion = 3;
inline constexpr int kOldestProtocolVersion = 1;

// One-shot: the program prints all its lines and exits. Worker: stdin stays open, a `ready`
// line follows the hello, and every rep / profile / end line answers a request of perfgate's.
enum class ProtocolMode { one_shot, worker };

// Optional facts about the model, for MBU / MFU and the table; absent = those metrics are null.
struct ModelFacts {
  std::optional<std::string> display_name;
  std::optional<double> param_bytes;         // bytes of every parameter, as stored
  std::optional<double> flops_per_token;     // forward FLOPs of one token (prefill MFU)
  std::optional<double> kv_bytes_per_token;  // K and V of one token of one sequence, all layers
  std::optional<double> vocab;
  std::optional<double> context;  // longest prompt + generated tokens the model accepts
};

struct EngineInfo {
  int protocol = kProtocolVersion;  // the version the hello line declared
  std::string name;
  std::map<std::string, std::string> versions;
  ModelFacts model;
  // Worker mode: the hello line's "cells": "many" says the worker takes another cell line after
  // each end instead of exiting (docs/PROTOCOL.md, "Several cells in one worker").
  bool many_cells = false;
  bool operator==(const EngineInfo& o) const { return name == o.name && versions == o.versions; }
};

// A line that breaks the protocol; `line` is 1-based.
struct ProtocolError : std::runtime_error {
  ProtocolError(int line, const std::string& why)
      : std::runtime_error("stdout line " + std::to_string(line) + ": " + why), line(line) {}
  int line;
};

class ProtocolReader {
 public:
  // `profile_asked`: the cell asked for a profile (docs/PROTOCOL.md, "The profile line"); a
  // profile line is refused otherwise.
  // `reps`: one-shot, the repetitions to print; worker, the most perfgate may ask for.
  ProtocolReader(int reps, int gen_tokens, bool profile_asked = false,
                 ProtocolMode mode = ProtocolMode::one_shot)
      : reps_(reps), gen_tokens_(gen_tokens), profile_asked_(profile_asked), mode_(mode) {}

  // One stdout line. Blank lines are skipped; anything else must be a protocol line in its
  // place: hello first, then `reps` rep lines in order, then (protocol 2, when asked) at most
  // one profile line, then end (or oom / error at any point). A worker prints `ready` after its
  // hello, and each rep line, and the profile and end lines, only as the answer to a request
  // (asked_rep, asked_end). Throws ProtocolError.
  void feed(std::string_view line);

  // Worker mode: perfgate asked for the next repetition (number reps_seen()), or for the end;
  // the rep lines seen so far are then all there will be.
  void asked_rep();
  void asked_end();

  enum class State { want_hello, want_ready, want_rep, done };
  State state() const { return state_; }
  int lines() const { return line_no_; }
  size_t reps_seen() const { return samples_.prefill_ms.size(); }

  // Set once the `hello` line was read.
  const std::optional<EngineInfo>& engine() const { return engine_; }
  // Set when the benchmark reported its own failure (`oom` or `error` line).
  const std::optional<CellStatus>& reported_failure() const { return failure_; }
  const std::string& reported_reason() const { return failure_reason_; }
  // Complete once state() is done without a reported failure.
  const CellSamples& samples() const { return samples_; }
  const std::optional<double>& peak_alloc_bytes() const { return peak_alloc_bytes_; }
  // The profile line's record, when the benchmark printed one.
  const std::optional<CellProfile>& profile() const { return profile_; }
  // The protocol version the hello line declared (0 before it).
  int protocol() const { return protocol_; }

 private:
  int reps_, gen_tokens_;
  bool profile_asked_;
  ProtocolMode mode_;
  enum class Asked { nothing, rep, end };
  Asked asked_ = Asked::nothing;  // worker mode: the request an answer is due for
  int protocol_ = 0;
  std::optional<CellProfile> profile_;
  int line_no_ = 0;
  State state_ = State::want_hello;
  std::optional<EngineInfo> engine_;
  std::optional<CellStatus> failure_;
  std::string failure_reason_;
  CellSamples samples_;
  std::optional<double> peak_alloc_bytes_;
};

}  // namespace pg::exec

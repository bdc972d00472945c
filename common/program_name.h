// How the user started perfgate, for the commands perfgate prints for them to type next: a
// command that works as printed. main() records argv[0]; `perfgate` alone (found on PATH) stays
// `perfgate`, a path as typed (./build/perfgate, /opt/perfgate/bin/perfgate) stays that path.
#pragma once
#include <string>
#include <string_view>

namespace pg {

inline std::string& program_name_storage() {
  static std::string name = "perfgate";
  return name;
}

inline void set_program_name(std::string_view argv0) {
  // A bare name was found on PATH (or is the launcher's "perfgate"): print that name. perfgate
  // hands `run` to perfgate-runner with its own argv[0], so the runner prints what was typed.
  if (argv0.find('/') != std::string_view::npos) program_name_storage() = std::string(argv0);
}

inline const std::string& program_name() { return program_name_storage(); }

// `s` as one word of a POSIX shell command line: as it is when it needs no quoting.
inline std::string shell_word(const std::string& s) {
  const bool plain = !s.empty() && s.find_first_not_of(
                                       "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                       "0123456789_-./:=@%+,") == std::string::npos;
  if (plain) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace pg

// Protocol lines a test benchmark prints (docs/PROTOCOL.md): the hello line and repetition lines.
#pragma once
#include <string>

namespace pg::exec::testlines {

inline const char* kHello =
    R"({"type":"hello","protocol":1,"engine":"demo","versions":{"lib":"1.2"}})";

inline std::string rep(int i, const std::string& decode = "[1.5,1.25]",
                       const std::string& prefill = "3") {
  return R"({"type":"rep","rep":)" + std::to_string(i) + R"(,"prefill_ms":)" + prefill +
         R"(,"decode_ms":)" + decode + "}";
}

}  // namespace pg::exec::testlines

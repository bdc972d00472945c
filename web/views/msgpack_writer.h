// A MessagePack writer for the few types the view cache stores (arrays, strings, unsigned
// integers, doubles, booleans, nil), straight into a string: building an nlohmann::json tree first
// cost a tenth of a series view's computation. web/views/msgpack_reader.h reads it back.
#pragma once
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace pg::web {

class MsgpackWriter {
 public:
  void array(size_t n) {
    if (n < 16) return byte(0x90 | n);
    if (n <= 0xffff) return byte(0xdc), big_endian(n, 2);
    byte(0xdd), big_endian(n, 4);
  }
  void str(std::string_view s) {
    const size_t n = s.size();
    if (n < 32)
      byte(0xa0 | n);
    else if (n <= 0xff)
      byte(0xd9), big_endian(n, 1);
    else if (n <= 0xffff)
      byte(0xda), big_endian(n, 2);
    else
      byte(0xdb), big_endian(n, 4);
    out_.append(s);
  }
  void uint(uint64_t v) {
    if (v < 128) return byte(v);
    if (v <= 0xff) return byte(0xcc), big_endian(v, 1);
    if (v <= 0xffff) return byte(0xcd), big_endian(v, 2);
    if (v <= 0xffffffff) return byte(0xce), big_endian(v, 4);
    byte(0xcf), big_endian(v, 8);
  }
  void real(double d) { byte(0xcb), big_endian(std::bit_cast<uint64_t>(d), 8); }
  void boolean(bool b) { byte(b ? 0xc3 : 0xc2); }
  void nil() { byte(0xc0); }
  std::string take() { return std::move(out_); }

 private:
  void byte(uint64_t b) { out_.push_back(static_cast<char>(b)); }
  void big_endian(uint64_t v, int bytes) {
    for (int i = bytes - 1; i >= 0; --i) byte((v >> (8 * i)) & 0xff);
  }
  std::string out_;
};

}  // namespace pg::web

// The reader of web/views/msgpack_writer.h's MessagePack, for the view cache that every serve
// start-up reads (120 views of 1,000 points at 10,000 runs): straight into the view's fields,
// without the nlohmann::json tree that took most of a restart's time. It also reads what nlohmann's
// to_msgpack writes for the same values (float32 where a double fits, signed integers), which
// older stores may hold. Anything else, or a short buffer, throws MsgpackError: the caller
// recomputes the view.
#pragma once
#include <bit>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string_view>

namespace pg::web {

struct MsgpackError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class MsgpackReader {
 public:
  explicit MsgpackReader(std::string_view bytes) : in_(bytes) {}

  size_t array() {
    const uint8_t t = byte();
    if ((t & 0xf0) == 0x90) return t & 0x0f;
    if (t == 0xdc) return big_endian(2);
    if (t == 0xdd) return big_endian(4);
    throw MsgpackError("expected an array");
  }
  std::string_view str() {
    const uint8_t t = byte();
    size_t n;
    if ((t & 0xe0) == 0xa0)
      n = t & 0x1f;
    else if (t == 0xd9)
      n = big_endian(1);
    else if (t == 0xda)
      n = big_endian(2);
    else if (t == 0xdb)
      n = big_endian(4);
    else
      throw MsgpackError("expected a string");
    need(n);
    const std::string_view s = in_.substr(at_, n);
    at_ += n;
    return s;
  }
  int64_t integer() {
    const uint8_t t = byte();
    if (t < 0x80) return t;
    if (t >= 0xe0) return static_cast<int8_t>(t);
    switch (t) {
      case 0xcc:
        return static_cast<int64_t>(big_endian(1));
      case 0xcd:
        return static_cast<int64_t>(big_endian(2));
      case 0xce:
        return static_cast<int64_t>(big_endian(4));
      case 0xcf:
        return static_cast<int64_t>(big_endian(8));
      case 0xd0:
        return static_cast<int8_t>(big_endian(1));
      case 0xd1:
        return static_cast<int16_t>(big_endian(2));
      case 0xd2:
        return static_cast<int32_t>(big_endian(4));
      case 0xd3:
        return static_cast<int64_t>(big_endian(8));
      default:
        throw MsgpackError("expected an integer");
    }
  }
  size_t count() {
    const int64_t v = integer();
    if (v < 0) throw MsgpackError("expected a count");
    return static_cast<size_t>(v);
  }
  double real() {
    if (peek() == 0xcb) return ++at_, std::bit_cast<double>(big_endian(8));
    if (peek() == 0xca) return ++at_, std::bit_cast<float>(static_cast<uint32_t>(big_endian(4)));
    return static_cast<double>(integer());  // nlohmann writes whole doubles as they are
  }
  bool boolean() {
    const uint8_t t = byte();
    if (t == 0xc3 || t == 0xc2) return t == 0xc3;
    throw MsgpackError("expected a boolean");
  }
  bool nil() {  // consumes a nil and says so; leaves anything else
    if (peek() != 0xc0) return false;
    ++at_;
    return true;
  }
  bool done() const { return at_ == in_.size(); }

 private:
  void need(size_t n) const {
    if (in_.size() - at_ < n) throw MsgpackError("truncated");
  }
  uint8_t peek() const {
    need(1);
    return static_cast<uint8_t>(in_[at_]);
  }
  uint8_t byte() {
    const uint8_t b = peek();
    ++at_;
    return b;
  }
  uint64_t big_endian(int bytes) {
    need(static_cast<size_t>(bytes));
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<uint8_t>(in_[at_++]);
    return v;
  }
  std::string_view in_;
  size_t at_ = 0;
};

}  // namespace pg::web

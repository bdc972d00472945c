#include "runner/lm/safetensors.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/errors.h"

namespace pg::lm {

[[noreturn]] void fail_model_file(const std::string& path, const std::string& what) {
  throw UsageError("model file '" + path + "': " + what);
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

namespace {

// The safetensors reference implementation refuses headers above 100 MB; so do we, before
// allocating a buffer for a corrupt length.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

SafetensorsEntry parse_entry(const std::string& path, const std::string& name,
                             const nlohmann::json& j, uint64_t data_start, uint64_t data_size) {
  auto bad = [&](const std::string& why) {
    fail_model_file(path, "tensor '" + name + "': " + why);
  };
  if (!j.is_object()) bad("header entry is not an object");
  if (!j.contains("dtype") || !j["dtype"].is_string()) bad("missing string field 'dtype'");
  if (!j.contains("shape") || !j["shape"].is_array()) bad("missing array field 'shape'");
  if (!j.contains("data_offsets") || !j["data_offsets"].is_array() || j["data_offsets"].size() != 2)
    bad("missing field 'data_offsets' [begin, end]");
  SafetensorsEntry e;
  e.dtype = j["dtype"].get<std::string>();
  const int elem = safetensors_dtype_size(e.dtype);
  if (elem == 0) bad("unsupported dtype '" + e.dtype + "'");
  uint64_t numel = 1;
  for (const auto& d : j["shape"]) {
    if (!d.is_number_unsigned()) bad("shape entries must be non-negative integers");
    const auto dim = d.get<uint64_t>();
    // A wrapped product could match a tiny byte range and size a huge allocation later.
    if (dim > static_cast<uint64_t>(INT64_MAX) || __builtin_mul_overflow(numel, dim, &numel))
      bad("shape " + d.dump() + " is too large");
    e.shape.push_back(static_cast<int64_t>(dim));
  }
  for (const auto& o : j["data_offsets"])
    if (!o.is_number_unsigned()) bad("data_offsets must be non-negative integers");
  const auto begin = j["data_offsets"][0].get<uint64_t>();
  const auto end = j["data_offsets"][1].get<uint64_t>();
  if (end < begin) bad("data_offsets end before begin");
  e.offset = data_start + begin;
  e.nbytes = end - begin;
  uint64_t need = 0;
  if (__builtin_mul_overflow(numel, static_cast<uint64_t>(elem), &need))
    bad("shape " + shape_string(e.shape) + " is too large");
  if (e.nbytes != need)
    bad("data_offsets cover " + std::to_string(e.nbytes) + " bytes but " + e.dtype + " " +
        shape_string(e.shape) + " needs " + std::to_string(need));
  if (end > data_size)
    bad("file is truncated: the tensor's data ends at byte " + std::to_string(data_start + end) +
        " but the file has " + std::to_string(data_start + data_size) + " bytes");
  return e;
}

}  // namespace

int safetensors_dtype_size(const std::string& dtype) {
  static const std::map<std::string, int> sizes = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E4M3", 1}, {"F8_E5M2", 1},
      {"I16", 2},  {"U16", 2}, {"F16", 2}, {"BF16", 2},    {"I32", 4},
      {"U32", 4},  {"F32", 4}, {"I64", 8}, {"U64", 8},     {"F64", 8}};
  auto it = sizes.find(dtype);
  return it == sizes.end() ? 0 : it->second;
}

SafetensorsFile read_safetensors_header(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) fail_model_file(path, "no such file");
  const uint64_t file_size = std::filesystem::file_size(path, ec);
  if (ec) fail_model_file(path, "cannot read its size: " + ec.message());
  std::ifstream in(path, std::ios::binary);
  if (!in) fail_model_file(path, "cannot open it for reading");
  if (file_size < 8)
    fail_model_file(path, "file is truncated: shorter than the 8-byte header length");
  unsigned char len_bytes[8];
  in.read(reinterpret_cast<char*>(len_bytes), 8);
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | len_bytes[i];
  if (header_len > file_size - 8)
    fail_model_file(path, "bad header: its length " + std::to_string(header_len) +
                              " runs past the end of the file (" + std::to_string(file_size) +
                              " bytes)");
  if (header_len > kMaxHeaderBytes)
    fail_model_file(path, "bad header: length " + std::to_string(header_len) + " exceeds 100 MB");
  std::string text(header_len, '\0');
  in.read(text.data(), static_cast<std::streamsize>(header_len));
  if (!in) fail_model_file(path, "cannot read the header");

  nlohmann::json header;
  try {
    header = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // syntax, or a number out of range (1e400)
    fail_model_file(path, std::string("bad header: not valid JSON (") + e.what() + ")");
  }
  if (!header.is_object()) fail_model_file(path, "bad header: the JSON is not an object");

  SafetensorsFile f;
  f.path = path;
  const uint64_t data_start = 8 + header_len;
  const uint64_t data_size = file_size - data_start;
  for (const auto& [name, value] : header.items()) {
    if (name == "__metadata__") {
      if (!value.is_object()) fail_model_file(path, "bad header: '__metadata__' is not an object");
      for (const auto& [k, v] : value.items())
        f.metadata[k] = v.is_string() ? v.get<std::string>() : v.dump();
      continue;
    }
    f.tensors[name] = parse_entry(path, name, value, data_start, data_size);
  }
  return f;
}

void write_safetensors(const std::string& path, const std::map<std::string, SafetensorsBlob>& t,
                       const std::map<std::string, std::string>& metadata) {
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const auto& [name, blob] : t) {
    header[name] = {{"dtype", blob.dtype},
                    {"shape", blob.shape},
                    {"data_offsets", {offset, offset + blob.data.size()}}};
    offset += blob.data.size();
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the format aligns tensor data to 8 bytes
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw RuntimeFailure("cannot write '" + path + "'");
  uint64_t len = text.size();
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>((len >> (8 * i)) & 0xff));
  out << text;
  for (const auto& [name, blob] : t) out << blob.data;
  if (!out) throw RuntimeFailure("cannot write '" + path + "'");
}

}  // namespace pg::lm

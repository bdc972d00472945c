// The safetensors reader and the GPT-2 checkpoint loader: a happy path and every defect.
#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>

#include <fstream>

#include "common/errors.h"
#include "lm_test_util.h"
#include "runner/lm/checkpoint_load.h"
#include "runner/lm/measure.h"
#include "runner/lm/model_spec.h"

namespace pg::lm {
namespace {

using test::gpt2_blobs;
using test::small_gpt2;

at::Tensor as_tensor(const SafetensorsBlob& b) {
  auto t = at::empty(b.shape, at::kFloat);
  std::memcpy(t.data_ptr(), b.data.data(), b.data.size());
  return t;
}

// The UsageError's message, from both the inspector and the gate the sweep calls.
std::string usage_error(const std::string& path) {
  std::string message;
  try {
    resolve_model("file:" + path);
    ADD_FAILURE() << "resolve_model accepted " << path;
  } catch (const UsageError& e) {
    message = e.what();
  }
  CellKey key{"file:" + path, "fp32", 1, 4, 2, true, "math", false, "cpu"};
  EXPECT_THROW(lm::check_cell_supported(key), UsageError);
  EXPECT_NE(message.find(path), std::string::npos) << message;
  return message;
}

class LmSafetensors : public ::testing::Test {
 protected:
  test::TempDir dir;
  std::string path = dir.file("model.safetensors");
  std::map<std::string, std::string> n_head4 = {{"n_head", "4"}};
};

TEST_F(LmSafetensors, LoadsAHuggingFaceLayoutCheckpoint) {
  auto blobs = gpt2_blobs(small_gpt2());
  std::mt19937 rng(1);
  blobs["h.0.attn.bias"] = test::random_f32({1, 1, 32, 32}, rng);  // a buffer HF may save
  write_safetensors(path, blobs, n_head4);
  const auto cfg = resolve_model("file:" + path);
  EXPECT_EQ(cfg.family, Family::gpt2);
  EXPECT_EQ(cfg.n_layer, 2);
  EXPECT_EQ(cfg.n_head, 4);
  EXPECT_EQ(cfg.d_model, 64);
  EXPECT_EQ(cfg.d_ff, 256);
  EXPECT_EQ(cfg.vocab, 100);
  EXPECT_EQ(cfg.context, 32);

  c10::InferenceMode guard;
  auto m = load_gpt2_checkpoint(path, at::kFloat, at::kCPU);
  EXPECT_TRUE(at::equal(m.wte, as_tensor(blobs["wte.weight"])));
  // Conv1D [in, out] becomes at::linear's [out, in].
  EXPECT_TRUE(at::equal(m.layers[1].qkv_w, as_tensor(blobs["h.1.attn.c_attn.weight"]).t()));
  EXPECT_TRUE(at::equal(m.layers[0].fc2_w, as_tensor(blobs["h.0.mlp.c_proj.weight"]).t()));
  auto logits = forward(m, at::zeros({1, 6}, at::kLong), 0, nullptr, AttentionKind::math, false);
  EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{1, 6, 100}));

  auto half = load_gpt2_checkpoint(path, at::kHalf, at::kCPU);
  EXPECT_EQ(half.layers[0].qkv_w.scalar_type(), at::kHalf);
}

TEST_F(LmSafetensors, AcceptsTheTransformerPrefix) {
  write_safetensors(path, gpt2_blobs(small_gpt2(), "transformer."), n_head4);
  EXPECT_EQ(resolve_model("file:" + path).n_layer, 2);
}

TEST_F(LmSafetensors, HeadCountFromConfigJsonThenFromWidth) {
  write_safetensors(path, gpt2_blobs(small_gpt2()));
  EXPECT_EQ(resolve_model("file:" + path).n_head, 1);  // d_model 64 / 64
  std::ofstream(dir.file("config.json")) << R"({"n_head": 8, "layer_norm_epsilon": 1e-6})";
  const auto cfg = resolve_model("file:" + path);
  EXPECT_EQ(cfg.n_head, 8);
  EXPECT_DOUBLE_EQ(cfg.norm_eps, 1e-6);
  write_safetensors(path, gpt2_blobs(small_gpt2()), n_head4);  // metadata wins
  EXPECT_EQ(resolve_model("file:" + path).n_head, 4);
}

TEST_F(LmSafetensors, HeadCountThatDoesNotDivideWidth) {
  write_safetensors(path, gpt2_blobs(small_gpt2()), {{"n_head", "5"}});
  EXPECT_NE(usage_error(path).find("n_head"), std::string::npos);
}

TEST_F(LmSafetensors, MissingFile) {
  EXPECT_NE(usage_error(dir.file("absent.safetensors")).find("no such file"), std::string::npos);
}

TEST_F(LmSafetensors, TruncatedData) {
  write_safetensors(path, gpt2_blobs(small_gpt2()), n_head4);
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 100);
  const auto msg = usage_error(path);
  EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
  EXPECT_NE(msg.find("tensor '"), std::string::npos) << msg;  // names the tensor cut short
}

TEST_F(LmSafetensors, TruncatedInsideTheLengthField) {
  std::ofstream(path, std::ios::binary) << "abc";
  EXPECT_NE(usage_error(path).find("truncated"), std::string::npos);
}

TEST_F(LmSafetensors, HeaderLengthPastEndOfFile) {
  std::string bytes(8, '\0');
  bytes[0] = static_cast<char>(0xff);
  bytes[1] = static_cast<char>(0xff);
  std::ofstream(path, std::ios::binary) << bytes << "{}";
  EXPECT_NE(usage_error(path).find("runs past the end"), std::string::npos);
}

TEST_F(LmSafetensors, HeaderThatIsNotJson) {
  std::string header = "this is not json";
  std::string bytes(8, '\0');
  bytes[0] = static_cast<char>(header.size());
  std::ofstream(path, std::ios::binary) << bytes << header;
  EXPECT_NE(usage_error(path).find("not valid JSON"), std::string::npos);
}

TEST_F(LmSafetensors, OffsetsThatDoNotMatchTheShape) {
  std::string header =
      R"({"wte.weight": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 8]}})";
  std::string bytes(8, '\0');
  bytes[0] = static_cast<char>(header.size());
  std::ofstream(path, std::ios::binary) << bytes << header << std::string(8, '\0');
  const auto msg = usage_error(path);
  EXPECT_NE(msg.find("'wte.weight'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("needs 16"), std::string::npos) << msg;
}

// Found by the fuzz pass: a number JSON cannot hold (1e400) threw out_of_range past the
// parse_error handler (exit 4 instead of 2); a shape whose byte count wraps around 2^64 matched an
// empty data range.
TEST_F(LmSafetensors, NumbersOutOfRangeAndOverflowingShapesAreBadInput) {
  for (const std::string header :
       {R"({"wte.weight": {"dtype": "F32", "shape": [1e400], "data_offsets": [0, 0]}})",
        R"({"wte.weight": {"dtype": "F32", "shape": [4611686018427387904, 4], )"
        R"("data_offsets": [0, 0]}})",
        R"({"wte.weight": {"dtype": "F32", "shape": [9223372036854775808], )"
        R"("data_offsets": [0, 0]}})"}) {
    std::string bytes(8, '\0');
    bytes[0] = static_cast<char>(header.size());
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes << header;
    const auto msg = usage_error(path);
    EXPECT_TRUE(msg.find("not valid JSON") != std::string::npos ||
                msg.find("too large") != std::string::npos)
        << msg;
  }
}

TEST_F(LmSafetensors, UnknownTensor) {
  auto blobs = gpt2_blobs(small_gpt2());
  blobs["h.0.attn.rotary.weight"] = blobs["ln_f.bias"];
  write_safetensors(path, blobs, n_head4);
  const auto msg = usage_error(path);
  EXPECT_NE(msg.find("unknown tensor 'h.0.attn.rotary.weight'"), std::string::npos) << msg;
}

// A layer index sizes the model; one the header cannot back is refused at once (it used to run
// 25 s into bad_alloc for 1e9, and end in "stoll" beyond int64), naming the tensor.
TEST_F(LmSafetensors, LayerIndexBeyondTheHeaderIsRefusedBeforeAllocating) {
  for (const std::string index : {"1000000000", "99999999999999999999999"}) {
    auto blobs = gpt2_blobs(small_gpt2());
    const std::string name = "h." + index + ".ln_1.weight";
    blobs[name] = blobs["ln_f.bias"];
    write_safetensors(path, blobs, n_head4);
    const auto msg = usage_error(path);
    EXPECT_NE(msg.find("tensor '" + name + "': layer index " + index), std::string::npos) << msg;
  }
}

TEST_F(LmSafetensors, MissingTensor) {
  auto blobs = gpt2_blobs(small_gpt2(), "transformer.");
  blobs.erase("transformer.h.1.ln_2.bias");
  write_safetensors(path, blobs, n_head4);
  const auto msg = usage_error(path);
  EXPECT_NE(msg.find("missing tensor 'h.1.ln_2.bias'"), std::string::npos) << msg;
}

TEST_F(LmSafetensors, WrongShape) {
  auto blobs = gpt2_blobs(small_gpt2());
  std::mt19937 rng(3);
  blobs["h.1.attn.c_proj.weight"] = test::random_f32({64, 65}, rng);
  write_safetensors(path, blobs, n_head4);
  const auto msg = usage_error(path);
  EXPECT_NE(msg.find("tensor 'h.1.attn.c_proj.weight' has shape [64, 65], expected [64, 64]"),
            std::string::npos)
      << msg;
}

TEST_F(LmSafetensors, UnsupportedDtype) {
  auto blobs = gpt2_blobs(small_gpt2());
  blobs["ln_f.weight"].dtype = "I32";  // same byte size as F32
  write_safetensors(path, blobs, n_head4);
  auto msg = usage_error(path);
  EXPECT_NE(msg.find("'ln_f.weight' has dtype I32"), std::string::npos) << msg;
  blobs["ln_f.weight"].dtype = "Q4_K";
  write_safetensors(path, blobs, n_head4);
  msg = usage_error(path);
  EXPECT_NE(msg.find("'ln_f.weight': unsupported dtype 'Q4_K'"), std::string::npos) << msg;
}

TEST_F(LmSafetensors, ReadsBackWhatWasWritten) {
  std::mt19937 rng(5);
  std::map<std::string, SafetensorsBlob> t = {{"a", test::random_f32({3, 5}, rng)},
                                              {"b", test::random_f32({7}, rng)}};
  write_safetensors(path, t, {{"k", "v"}});
  const auto f = read_safetensors_header(path);
  EXPECT_EQ(f.metadata.at("k"), "v");
  EXPECT_EQ(f.tensors.at("a").shape, (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(f.tensors.at("a").offset % 8, 0u);  // data aligned after the padded header
  EXPECT_TRUE(at::equal(read_tensor(f, "b"), as_tensor(t["b"])));
}

}  // namespace
}  // namespace pg::lm

// The loader never trusts the file: each kind of damage is rejected with a message that
// names it, and nothing crashes.
#include <cmath>
#include <cstring>
#include <limits>

#include "attnlite/error.h"
#include "attnlite/model.h"
#include "attnlite/ops/kernels.h"
#include "attnlite/safetensors.h"
#include "attnlite/translate.h"
#include "file/json.h"
#include "fixture.h"
#include "st_writer.h"

using namespace attnlite;
using attnlite::test::StFile;
using attnlite::test::StTensor;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

SafeTensors parse(const std::vector<uint8_t>& b) { return SafeTensors::parse(b.data(), b.size()); }
std::shared_ptr<const Model> load_model(const std::vector<uint8_t>& b) { return Model::from_bytes(b.data(), b.size()); }

StFile shipped(const std::string& name) {
  return StFile::from(SafeTensors::load(attnlite::test::model_path(name)));
}

}  // namespace

TEST_CASE("safetensors: a well-formed file round-trips", "[loader]") {
  StFile f;
  f.tensors.emplace_back("a", attnlite::test::f32_tensor({2, 3}, 1.5f));
  f.metadata["k"] = "v";
  SafeTensors st = parse(f.bytes());
  REQUIRE(st.tensors().size() == 1);
  REQUIRE(st.get("a").shape == std::vector<int64_t>{2, 3});
  REQUIRE(st.f32("a") == std::vector<float>(6, 1.5f));
  REQUIRE(st.meta("k") == "v");
}

TEST_CASE("safetensors: zero-element tensors read as empty", "[loader]") {
  // Found by fuzz_loader: f32() of a [0, 3] tensor passed a null destination to memcpy.
  StFile f;
  f.tensors.emplace_back("z", attnlite::test::f32_tensor({0, 3}));
  StTensor i;
  i.dtype = "I64";
  i.shape = {0};
  f.tensors.emplace_back("i", i);
  SafeTensors st = parse(f.bytes());
  REQUIRE(st.get("z").numel == 0);
  REQUIRE(st.f32("z").empty());
  REQUIRE(st.f32("i").empty());
  REQUIRE(st.i64("i").empty());
  // The dtype is checked even when there is nothing to convert.
  REQUIRE_THROWS_WITH(st.i64("z"), Contains("tensor 'z' is F32, expected I64 or I32"));
  f.tensors.emplace_back("h", StTensor{"F16", {0}, {}});
  REQUIRE_THROWS_WITH(parse(f.bytes()).f32("h"), Contains("tensor 'h': cannot convert F16 to F32"));
}

TEST_CASE("safetensors: an empty tensor at the offset of another is no overlap", "[loader]") {
  // Whether the empty tensor sorted before or after its neighbour decided between accepting
  // and rejecting the same layout ("tensors 'b' and 'a' overlap"); it holds no bytes either way.
  for (const char* empty : {"a", "c"}) {
    INFO("empty tensor named " << empty);
    StFile f;
    f.tensors.emplace_back(empty, attnlite::test::f32_tensor({0}));
    f.tensors.emplace_back("b", attnlite::test::f32_tensor({4}));
    auto h = f.header();
    h[empty]["data_offsets"] = {0, 0};
    h["b"]["data_offsets"] = {0, 16};
    SafeTensors st = parse(StFile::assemble(h.dump(), f.data()));
    REQUIRE(st.f32(empty).empty());
    REQUIRE(st.f32("b") == std::vector<float>(4, 0.5f));
    h[empty]["data_offsets"] = {8, 8};  // inside b: still no shared byte
    REQUIRE(parse(StFile::assemble(h.dump(), f.data())).tensors().size() == 2);
  }
}

TEST_CASE("safetensors: hostile headers are rejected by name", "[loader]") {
  StFile f;
  f.tensors.emplace_back("a", attnlite::test::f32_tensor({4}));
  const auto good = f.bytes();
  const std::string hdr = f.header().dump();

  SECTION("truncated before the length field") {
    std::vector<uint8_t> b(good.begin(), good.begin() + 5);
    REQUIRE_THROWS_WITH(parse(b), Contains("truncated"));
  }
  SECTION("empty file") { REQUIRE_THROWS_WITH(parse({}), Contains("truncated")); }
  SECTION("header length beyond the file") {
    auto b = StFile::assemble(hdr, f.data(), hdr.size() + 1000);
    REQUIRE_THROWS_WITH(parse(b), Contains("exceeds the file"));
  }
  SECTION("a 100 MB header length") {
    auto b = StFile::assemble(hdr, f.data(), 100u << 20);
    REQUIRE_THROWS_WITH(parse(b), Contains("exceeds the limit"));
  }
  SECTION("length field of 2^64 - 1") {
    auto b = StFile::assemble(hdr, f.data(), UINT64_MAX - 1);
    REQUIRE_THROWS_WITH(parse(b), Contains("exceeds the limit"));
  }
  SECTION("files of other formats are named") {
    // The first bytes of real files (PNG and JPEG headers, a PyTorch zip checkpoint, the old
    // pickle format, a PDF, JSON, HTML), padded to 64 bytes: each is named, never taken for a
    // safetensors header length.
    const std::pair<std::string, const char*> files[] = {
        {std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16), "this looks like a PNG image, not a safetensors model file"},
        {std::string("\xff\xd8\xff\xe0\0\x10JFIF", 10), "this looks like a JPEG image"},
        {std::string("GIF89a\x08\0", 8), "this looks like a GIF image"},
        {std::string("RIFF\x24\x10\0\0WEBPVP8 ", 16), "this looks like a WebP image"},
        {std::string("PK\x03\x04\x14\0\0\0", 8), "this looks like a zip archive (PyTorch's .pt and .pth checkpoints are zip archives)"},
        {std::string("\x80\x02\x8a\x0al\xfc\x9c" "F", 8), "this looks like a Python pickle (an old-style PyTorch checkpoint)"},
        {"%PDF-1.7\n", "this looks like a PDF document"},
        {"{\"a\": {\"dtype\": \"F32\"}}", "this looks like a JSON text"},
        {"<!doctype html>", "this looks like an HTML or XML text"},
    };
    for (const auto& [start, message] : files) {
      std::vector<uint8_t> b(start.begin(), start.end());
      b.resize(64, ' ');
      REQUIRE_THROWS_WITH(parse(b), StartsWith(std::string("invalid safetensors file: ") + message));
    }
    // A truncated safetensors file keeps its own message, whatever its first bytes.
    auto b = StFile::assemble(hdr, f.data(), 0x0280);  // the low bytes \x80\x02 of a pickle
    REQUIRE_THROWS_WITH(parse(b), Contains("header length 640 exceeds the file"));
  }
  SECTION("malformed JSON") {
    REQUIRE_THROWS_WITH(parse(StFile::assemble("{\"a\": [1, 2", {})), Contains("malformed JSON"));
  }
  SECTION("header is not an object") {
    REQUIRE_THROWS_WITH(parse(StFile::assemble("[1,2,3]", {})), Contains("not an object"));
  }
  SECTION("unknown dtype") {
    auto h = f.header();
    h["a"]["dtype"] = "F128";
    REQUIRE_THROWS_WITH(parse(StFile::assemble(h.dump(), f.data())), Contains("unknown dtype 'F128'"));
  }
  SECTION("offsets outside the data") {
    auto h = f.header();
    h["a"]["data_offsets"] = {0, 400};
    REQUIRE_THROWS_WITH(parse(StFile::assemble(h.dump(), f.data())), Contains("outside the data section"));
  }
  SECTION("begin after end") {
    auto h = f.header();
    h["a"]["data_offsets"] = {8, 4};
    REQUIRE_THROWS_WITH(parse(StFile::assemble(h.dump(), f.data())), Contains("outside the data section"));
  }
  SECTION("negative offsets") {
    auto h = f.header();
    h["a"]["data_offsets"] = {-4, 12};
    REQUIRE_THROWS_WITH(parse(StFile::assemble(h.dump(), f.data())), Contains("non-negative integer"));
  }
  SECTION("bytes disagree with shape and dtype") {
    auto h = f.header();
    h["a"]["shape"] = {5};
    REQUIRE_THROWS_WITH(parse(StFile::assemble(h.dump(), f.data())), Contains("do not match shape and dtype"));
  }
  SECTION("overlapping tensors") {
    StFile g;
    g.tensors.emplace_back("a", attnlite::test::f32_tensor({4}));
    g.tensors.emplace_back("b", attnlite::test::f32_tensor({4}));
    auto h = g.header();
    h["b"]["data_offsets"] = {8, 24};
    auto data = g.data();
    REQUIRE_THROWS_WITH(parse(StFile::assemble(h.dump(), data)), Contains("overlap"));
  }
  SECTION("absurd shapes") {
    auto h = f.header();
    h["a"]["shape"] = {1u << 31, 1u << 31, 1u << 31};
    REQUIRE_THROWS_WITH(parse(StFile::assemble(h.dump(), f.data())), Contains("too large"));
  }
  SECTION("missing fields and wrong types") {
    auto h = f.header();
    h["a"].erase("shape");
    REQUIRE_THROWS_WITH(parse(StFile::assemble(h.dump(), f.data())), Contains("lacks dtype, shape or data_offsets"));
    h = f.header();
    h["__metadata__"] = {{"k", 3}};
    REQUIRE_THROWS_WITH(parse(StFile::assemble(h.dump(), f.data())), Contains("is not a string"));
  }
  SECTION("every truncation of a valid file fails cleanly") {
    for (size_t n = 0; n < good.size(); ++n) {
      std::vector<uint8_t> b(good.begin(), good.begin() + (long)n);
      REQUIRE_THROWS_AS(parse(b), Error);
    }
  }
}

TEST_CASE("Model: the shipped models load", "[loader]") {
  for (const char* name : {"transformer-d2l", "bahdanau-d2l"}) {
    auto m = Model::load(attnlite::test::model_path(name));
    REQUIRE(m->num_steps() == 10);
    REQUIRE(m->src_vocab().token(0) == "<unk>");
    REQUIRE(m->tgt_vocab().lookup("<eos>") == m->tgt_vocab().eos_id);
  }
}

// Weights in place: a mapped file (load), the caller's buffer (from_buffer) or the model's own
// copy of the bytes (from_bytes) is the weights; the three give the same translations.
TEST_CASE("Model: weights are used in place, not copied", "[loader]") {
  for (const char* name : {"transformer-fra", "transformer-d2l", "bahdanau-d2l"}) {
    INFO(name);
    const std::string path = attnlite::test::model_path(name);
    const std::vector<uint8_t> bytes = read_file(path);
    SafeTensors st = SafeTensors::load(path);
#if defined(__unix__) || defined(__APPLE__)
    CHECK(st.mapped());
#endif
    // The mapped image is the file.
    for (const TensorInfo& t : st.tensors()) {
      const SafeTensors ref = SafeTensors::view(bytes.data(), bytes.size());
      REQUIRE(std::memcmp(st.data(t), ref.data(ref.get(t.name)), t.nbytes) == 0);
    }
    auto mapped = Model::load(path);
    auto borrowed = Model::from_buffer(bytes.data(), bytes.size());
    auto copied = Model::from_bytes(bytes.data(), bytes.size());
    // Every tensor of these files lies at a float-aligned offset: nothing is copied. The
    // kernels derive their layouts: the Bahdanau model's GRU layers get the fused step's (2
    // encoder layers over embed 32 then hidden 32, 2 decoder layers over 32 + 32 then 32),
    // and with SIMD kernels every fp32 linear layer (a 2-D "*.weight" that is no embedding
    // table, and the recurrent layers' input weights) is packed in panels; the int8 model's
    // layers are read as stored. The Bahdanau model also gets its first layers' input
    // products of every embedding row (source and target vocabularies, 3 x 32 each) and the
    // decoder's first layer over the context alone (its W_ih columns, their fused layout).
    long packed = 0;
    if (std::string(mapped->kind_name()) == "bahdanau") {
      packed = ops::gru_packed_floats(32, 32) * 3 + ops::gru_packed_floats(64, 32);
      const long v_src = st.get("encoder.embedding.weight").shape[0];
      const long v_tgt = st.get("decoder.embedding.weight").shape[0];
      packed += (v_src + v_tgt) * 96 + 96 * 32 + ops::gru_packed_floats(32, 32);
    }
    if (ops::kernels().linear_pack)
      for (const TensorInfo& t : st.tensors()) {
        const std::string& n = t.name;
        if (t.dtype == DType::F32 && t.shape.size() == 2 && n.size() > 7 &&
            n.compare(n.size() - 7, 7, ".weight") == 0 && n.find("embedding") == std::string::npos)
          packed += ops::linear_packed_floats((int)t.shape[0], (int)t.shape[1]);
        // a recurrent layer's input weights: the linear layer of a sequence's input products
        if (t.dtype == DType::F32 && t.shape.size() == 2 && n.find(".weight_ih_l") != std::string::npos)
          packed += ops::linear_packed_floats((int)t.shape[0], (int)t.shape[1]);
      }
    if (std::string(name) != "transformer-fra" && ops::kernels().linear_pack) CHECK(packed > 0);
    for (const auto& m : {mapped, borrowed, copied}) {
      CHECK(m->copied_weight_bytes() == 0);
      CHECK(m->derived_weight_bytes() == (size_t)packed * sizeof(float));
      CHECK(m->weight_bytes() > 0);
    }
    CHECK(mapped->weight_bytes() == copied->weight_bytes());
    Translator a(mapped), b(borrowed), c(copied);
    for (const char* s : {"i'm home .", "he is calm ."}) {
      const std::string ta(a.translate(s).text);
      CHECK(ta == b.translate(s).text);
      CHECK(ta == c.translate(s).text);
    }
  }
}

TEST_CASE("Model: a directory given as the model file gets a message", "[loader]") {
#if defined(__unix__) || defined(__APPLE__)
  REQUIRE_THROWS_WITH(Model::load("/"), Contains("'/'") && Contains("is a directory"));
#endif
  REQUIRE_THROWS_WITH(Model::load("/no/such/dir/model.safetensors"), Contains("cannot open"));
}

TEST_CASE("Model: an F32 tensor at an unaligned offset is copied, with the same values", "[loader]") {
  // The same file at two places in a buffer: its data section (all F32, each tensor a multiple
  // of 4 bytes) float-aligned, then one byte further, where every tensor is misaligned.
  const auto good = shipped("transformer-d2l").bytes();
  uint64_t hlen = 0;
  for (int i = 7; i >= 0; --i) hlen = (hlen << 8) | good[i];
  std::vector<uint8_t> buf(good.size() + 8);
  size_t at = 0;
  while ((reinterpret_cast<uintptr_t>(buf.data()) + at + 8 + hlen) % 4) ++at;
  std::vector<uint8_t> buf2(buf.size());
  std::memcpy(buf.data() + at, good.data(), good.size());
  std::memcpy(buf2.data() + at + 1, good.data(), good.size());
  REQUIRE((reinterpret_cast<uintptr_t>(buf2.data()) % 4) == (reinterpret_cast<uintptr_t>(buf.data()) % 4));
  auto in_place = Model::from_buffer(buf.data() + at, good.size());
  auto copied = Model::from_buffer(buf2.data() + at + 1, good.size());
  CHECK(in_place->copied_weight_bytes() == 0);
  CHECK(copied->copied_weight_bytes() >= copied->weight_bytes());
  CHECK(copied->derived_weight_bytes() == in_place->derived_weight_bytes());
  Translator a(in_place), b(copied);
  const std::string ta(a.translate("i'm home .").text);
  CHECK(ta == b.translate("i'm home .").text);
}

TEST_CASE("Model: damaged model files are rejected by name", "[loader]") {
  StFile f = shipped("transformer-d2l");
  const std::string w = "decoder.dense.weight";

  SECTION("truncated model files") {
    const auto good = f.bytes();
    for (size_t n : {size_t(0), size_t(7), size_t(8), size_t(100), good.size() / 2, good.size() - 1}) {
      std::vector<uint8_t> b(good.begin(), good.begin() + (long)n);
      REQUIRE_THROWS_AS(load_model(b), Error);
    }
  }
  SECTION("missing tensor") {
    f.erase(w);
    REQUIRE_THROWS_WITH(load_model(f.bytes()), Contains("missing tensor '" + w + "'"));
  }
  SECTION("unexpected tensor") {
    f.tensors.emplace_back("decoder.extra.weight", attnlite::test::f32_tensor({2}));
    REQUIRE_THROWS_WITH(load_model(f.bytes()), Contains("unexpected tensor 'decoder.extra.weight'"));
  }
  SECTION("shape disagrees with the config") {
    auto* t = f.find(w);
    t->shape = {t->shape[1], t->shape[0]};
    REQUIRE_THROWS_WITH(load_model(f.bytes()), Contains("has shape") && Contains("expected"));
  }
  SECTION("config disagrees with the tensors") {
    auto c = nlohmann::json::parse(f.metadata["attnlite.config"]);
    c["num_hiddens"] = 64;
    c["ffn_num_hiddens"] = 64;
    f.metadata["attnlite.config"] = c.dump();
    REQUIRE_THROWS_WITH(load_model(f.bytes()), Contains("expected [") && Contains("from the config"));
  }
  SECTION("wrong dtype") {
    f.find(w)->dtype = "I32";
    REQUIRE_THROWS_WITH(load_model(f.bytes()), Contains("dtype I32, expected F32"));
  }
  SECTION("NaN and Inf weights") {
    for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
      StFile g = f;
      std::memcpy(g.find(w)->bytes.data() + 12, &bad, 4);
      REQUIRE_THROWS_WITH(load_model(g.bytes()), Contains(std::isnan(bad) ? "contains NaN at index 3" : "contains Inf at index 3"));
    }
  }
  SECTION("metadata problems") {
    StFile g = f;
    g.metadata.erase("attnlite.kind");
    REQUIRE_THROWS_WITH(load_model(g.bytes()), Contains("lacks 'attnlite.kind'"));
    g = f;
    g.metadata["attnlite.kind"] = "lstm-lm";
    REQUIRE_THROWS_WITH(load_model(g.bytes()), Contains("unknown model kind"));
    g = f;
    g.metadata["attnlite.config"] = "{not json";
    REQUIRE_THROWS_WITH(load_model(g.bytes()), Contains("not valid JSON"));
    g = f;
    auto c = nlohmann::json::parse(f.metadata["attnlite.config"]);
    c["num_heads"] = 5;
    g.metadata["attnlite.config"] = c.dump();
    REQUIRE_THROWS_WITH(load_model(g.bytes()), Contains("not a multiple of num_heads"));
    c["num_heads"] = -1;
    g.metadata["attnlite.config"] = c.dump();
    REQUIRE_THROWS_WITH(load_model(g.bytes()), Contains("outside"));
  }
  SECTION("vocabulary problems") {
    auto v = nlohmann::json::parse(f.metadata["attnlite.tgt_vocab"]);
    StFile g = f;
    auto v2 = v;
    v2.erase(v2.size() - 1);
    g.metadata["attnlite.tgt_vocab"] = v2.dump();
    REQUIRE_THROWS_WITH(load_model(g.bytes()), Contains("tokens but the config says"));
    g = f;
    v2 = v;
    v2[5] = v[6];
    g.metadata["attnlite.tgt_vocab"] = v2.dump();
    REQUIRE_THROWS_WITH(load_model(g.bytes()), Contains("appears twice"));
    g = f;
    v2 = v;
    v2[3] = "<notes>";  // <eos> gone
    g.metadata["attnlite.tgt_vocab"] = v2.dump();
    REQUIRE_THROWS_WITH(load_model(g.bytes()), Contains("lacks the reserved token '<eos>'"));
  }
  SECTION("the Bahdanau model's checks too") {
    StFile g = shipped("bahdanau-d2l");
    g.erase("decoder.rnn.weight_hh_l1");
    REQUIRE_THROWS_WITH(load_model(g.bytes()), Contains("missing tensor 'decoder.rnn.weight_hh_l1'"));
  }
  SECTION("a missing file names the path") {
    REQUIRE_THROWS_WITH(Model::load("/nonexistent/model.safetensors"), Contains("/nonexistent/model.safetensors"));
  }
}

TEST_CASE("Model: damaged language-model files are rejected by name", "[loader][lm]") {
  StFile f = StFile::from(SafeTensors::load(attnlite::test::fixture_path("lm_post_relu")));
  REQUIRE(load_model(f.bytes())->task() == Task::Generate);
  const std::string in = "layers.1.self_attn.in_proj_weight";
  auto config = [&](const char* key, const nlohmann::json& value) {
    StFile g = f;
    auto c = nlohmann::json::parse(f.metadata["attnlite.config"]);
    if (value.is_null()) c.erase(key); else c[key] = value;
    g.metadata["attnlite.config"] = c.dump();
    return g.bytes();
  };
  SECTION("in_proj of the wrong shape") {
    auto* t = f.find(in);
    t->shape = {t->shape[0] / 3, t->shape[1] * 3};  // (D, 3D): Q/K/V packed the wrong way
    REQUIRE_THROWS_WITH(load_model(f.bytes()), Contains(in) && Contains("has shape [16, 48]") && Contains("expected [48, 16]"));
  }
  SECTION("in_proj of two blocks only") {
    auto* t = f.find(in);
    t->shape = {32, 16};
    t->bytes.resize(32 * 16 * 4);
    REQUIRE_THROWS_WITH(load_model(f.bytes()), Contains(in) && Contains("expected [48, 16]"));
  }
  SECTION("in_proj_bias missing while the config has biases") {
    f.erase("layers.0.self_attn.in_proj_bias");
    REQUIRE_THROWS_WITH(load_model(f.bytes()), Contains("missing tensor 'layers.0.self_attn.in_proj_bias'"));
  }
  SECTION("biases present while the config says bias false") {
    REQUIRE_THROWS_WITH(load_model(config("bias", false)), Contains("unexpected tensor"));
  }
  SECTION("a layer missing") {
    REQUIRE_THROWS_WITH(load_model(config("num_layers", 3)), Contains("missing tensor 'layers.2."));
  }
  SECTION("bad config values") {
    REQUIRE_THROWS_WITH(load_model(config("activation", "swish")), Contains("'activation' must be"));
    REQUIRE_THROWS_WITH(load_model(config("activation", 3)), Contains("'activation' must be"));
    REQUIRE_THROWS_WITH(load_model(config("norm_first", "yes")), Contains("'norm_first' is not a boolean"));
    REQUIRE_THROWS_WITH(load_model(config("layer_norm_eps", 0)), Contains("'layer_norm_eps'"));
    REQUIRE_THROWS_WITH(load_model(config("layer_norm_eps", "1e-5")), Contains("'layer_norm_eps'"));
    REQUIRE_THROWS_WITH(load_model(config("num_heads", 3)), Contains("not a multiple of num_heads"));
    REQUIRE_THROWS_WITH(load_model(config("max_len", 0)), Contains("'max_len'"));
    REQUIRE_THROWS_WITH(load_model(config("max_len", 6000)), Contains("'max_len'"));
    // A context of one position holds <bos> and no word: no prompt could ever be read
    // (found by fuzz_loader: such a model loaded, then refused every prompt).
    REQUIRE_THROWS_WITH(load_model(config("max_len", 1)), "model config 'max_len' = 1 is outside [2, 4096]");
    REQUIRE_NOTHROW(load_model(config("max_len", 2)));
    REQUIRE_THROWS_WITH(load_model(config("d_model", 17)), Contains("not a multiple of num_heads"));
    REQUIRE_THROWS_WITH(load_model(config("d_model", 18)), Contains("has shape"));
    REQUIRE_THROWS_WITH(load_model(config("vocab_size", 24)), Contains("expected ["));
    REQUIRE_THROWS_WITH(load_model(config("dim_feedforward", nullptr)), Contains("lacks 'dim_feedforward'"));
  }
  SECTION("vocabulary") {
    StFile g = f;
    g.metadata.erase("attnlite.vocab");
    REQUIRE_THROWS_WITH(load_model(g.bytes()), Contains("lacks 'attnlite.vocab'"));
  }
  SECTION("int8 in_proj without its scale") {
    auto* t = f.find(in);
    t->dtype = "I8";
    t->bytes.resize(48 * 16);
    REQUIRE_THROWS_WITH(load_model(f.bytes()), Contains("missing tensor '" + in + "_scale'"));
  }
}

TEST_CASE("parse_json reads what nlohmann::json::parse reads, and refuses with its message",
          "[loader]") {
  const std::vector<std::string> texts = {
      "{\"a\": {\"dtype\": \"F32\", \"shape\": [2, 3], \"data_offsets\": [0, 24]}}",
      "  [1, -2.5e3, true, null, \"x\\u00e9\\ud83d\\ude00\", {}]  ", "\"caf\xc3\xa9\"", "{\"k\": 1, \"k\": 2}",
      "18446744073709551615", "-9223372036854775808", "1e400",
      // refused: cut short, text after the value, a comment, NaN, a lone surrogate, invalid
      // UTF-8, a control character, empty input, a trailing comma
      "{\"a\": [1, 2", "{} {}", "{} // c", "[NaN]", "\"\\ud800\"", "\"\xff\"", "\"a\x01\"", "", "[1,]",
      std::string(600, '[') + std::string(600, ']')};
  for (const std::string& t : texts) {
    CAPTURE(t);
    std::string want, got;
    nlohmann::json a, b;
    try {
      a = nlohmann::json::parse(t.begin(), t.end());
    } catch (const nlohmann::json::exception& e) {
      want = e.what();
    }
    try {
      b = parse_json(t.data(), t.size());
    } catch (const nlohmann::json::exception& e) {
      got = e.what();
    }
    CHECK(got == want);
    CHECK(a == b);
    if (want.empty()) CHECK(a.dump() == b.dump());
  }
  CHECK_THROWS_WITH(parse_json("{\"a\": [1, 2", 10),
                    Contains("parse error at line 1, column 11"));
}

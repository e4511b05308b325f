// safetensors reader: every field of the header is checked against the file before use.
#include "attnlite/safetensors.h"

#include <algorithm>
#include <cstring>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>

#include "attnlite/error.h"
#include "file/json.h"

#if defined(__unix__) || defined(__APPLE__)
#if !defined(__EMSCRIPTEN__)
#define ATTNLITE_HAVE_MMAP 1
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#endif
#endif
#ifndef ATTNLITE_HAVE_MMAP
#define ATTNLITE_HAVE_MMAP 0
#endif

namespace attnlite {

const char* dtype_name(DType d) {
  switch (d) {
    case DType::F32: return "F32";
    case DType::F16: return "F16";
    case DType::BF16: return "BF16";
    case DType::I64: return "I64";
    case DType::I32: return "I32";
    case DType::I8: return "I8";
    case DType::U8: return "U8";
  }
  return "?";
}

size_t dtype_size(DType d) {
  switch (d) {
    case DType::F32: case DType::I32: return 4;
    case DType::F16: case DType::BF16: return 2;
    case DType::I64: return 8;
    case DType::I8: case DType::U8: return 1;
  }
  return 0;
}

namespace {

bool parse_dtype(const std::string& s, DType* out) {
  static const std::pair<const char*, DType> table[] = {
      {"F32", DType::F32}, {"F16", DType::F16}, {"BF16", DType::BF16}, {"I64", DType::I64},
      {"I32", DType::I32}, {"I8", DType::I8},   {"U8", DType::U8}};
  for (auto& [n, d] : table)
    if (s == n) { *out = d; return true; }
  return false;
}

// safetensors stores every number little-endian, and the weights are used in place (mapped,
// not converted): on a big-endian machine each would be read wrong, so loading stops first.
#if defined(__BYTE_ORDER__) && defined(__ORDER_BIG_ENDIAN__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
constexpr bool kBigEndianHost = true;
#else
constexpr bool kBigEndianHost = false;
#endif

[[noreturn]] void bad(const std::string& what) { throw Error("invalid safetensors file: " + what); }

uint64_t as_u64(const nlohmann::json& v, const std::string& what) {
  if (!v.is_number_unsigned()) bad(what + " must be a non-negative integer");
  return v.get<uint64_t>();
}

// What a file that is no safetensors file looks like, from its first bytes (nullptr: unknown),
// so that a picture or a PyTorch checkpoint given as a model gets a message a person can act on.
const char* looks_like(const uint8_t* b, size_t n) {
  auto starts = [&](const char* magic, size_t len) { return n >= len && std::memcmp(b, magic, len) == 0; };
  if (starts("\x89PNG\r\n\x1a\n", 8)) return "a PNG image";
  if (starts("\xff\xd8\xff", 3)) return "a JPEG image";
  if (starts("GIF87a", 6) || starts("GIF89a", 6)) return "a GIF image";
  if (starts("RIFF", 4) && n >= 12 && std::memcmp(b + 8, "WEBP", 4) == 0) return "a WebP image";
  if (starts("%PDF", 4)) return "a PDF document";
  if (starts("PK\x03\x04", 4)) return "a zip archive (PyTorch's .pt and .pth checkpoints are zip archives)";
  if (starts("\x1f\x8b", 2)) return "a gzip file";
  if (n >= 2 && b[0] == 0x80 && b[1] >= 2 && b[1] <= 5) return "a Python pickle (an old-style PyTorch checkpoint)";
  if (starts("{", 1)) return "a JSON text";
  if (starts("<", 1)) return "an HTML or XML text";
  return nullptr;
}

}  // namespace

SafeTensors SafeTensors::parse(const uint8_t* bytes, size_t size) {
  return parse(std::vector<uint8_t>(bytes, bytes + size));
}

SafeTensors SafeTensors::parse(std::vector<uint8_t>&& file) {
  auto owned = std::make_shared<const std::vector<uint8_t>>(std::move(file));
  const uint8_t* bytes = owned->data();
  const size_t size = owned->size();
  return parse_image(std::move(owned), bytes, size);
}

SafeTensors SafeTensors::view(const uint8_t* bytes, size_t size, std::shared_ptr<const void> owner) {
  if (!bytes && size) throw Error("invalid safetensors file: null bytes");
  return parse_image(std::move(owner), bytes, size);
}

SafeTensors SafeTensors::parse_image(std::shared_ptr<const void> keep, const uint8_t* bytes,
                                     size_t size) {
  if (kBigEndianHost)
    throw Error("this machine is big-endian: safetensors model files are little-endian and attnlite "
                "uses their weights in place, so it runs on little-endian machines only (x86, Arm, "
                "RISC-V, WebAssembly)");
  if (size < 8) bad("truncated: " + std::to_string(size) + " bytes, the 8-byte header length is missing");
  uint64_t hlen = 0;
  for (int i = 7; i >= 0; --i) hlen = (hlen << 8) | bytes[i];
  if (hlen > kMaxHeaderBytes) {
    // No safetensors file starts like this (a truncated one still has a plausible length).
    if (const char* kind = looks_like(bytes, size))
      bad(std::string("this looks like ") + kind + ", not a safetensors model file");
    bad("header length " + std::to_string(hlen) + " exceeds the limit of " +
        std::to_string(kMaxHeaderBytes) + " bytes");
  }
  if (hlen > size - 8)
    bad("header length " + std::to_string(hlen) + " exceeds the file (" + std::to_string(size - 8) +
        " bytes after the length field)");
  if (hlen < 2) bad("header of " + std::to_string(hlen) + " bytes cannot hold a JSON object");

  nlohmann::json header;
  try {
    header = parse_json(bytes + 8, hlen);
  } catch (const nlohmann::json::exception& e) {
    bad(std::string("malformed JSON header: ") + e.what());
  }
  if (!header.is_object()) bad("the JSON header is not an object");

  SafeTensors st;
  const size_t data_size = size - 8 - hlen;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    const auto& v = it.value();
    if (name == "__metadata__") {
      if (!v.is_object()) bad("__metadata__ is not an object");
      for (auto m = v.begin(); m != v.end(); ++m) {
        if (!m.value().is_string()) bad("__metadata__ value for '" + m.key() + "' is not a string");
        st.metadata_[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    if (!v.is_object()) bad("entry '" + name + "' is not an object");
    TensorInfo t;
    t.name = name;
    auto dt = v.find("dtype"), sh = v.find("shape"), off = v.find("data_offsets");
    if (dt == v.end() || sh == v.end() || off == v.end())
      bad("tensor '" + name + "' lacks dtype, shape or data_offsets");
    if (!dt->is_string()) bad("tensor '" + name + "': dtype is not a string");
    if (!parse_dtype(dt->get<std::string>(), &t.dtype))
      bad("tensor '" + name + "': unknown dtype '" + dt->get<std::string>() + "'");
    if (!sh->is_array() || sh->size() > 8) bad("tensor '" + name + "': shape must be an array of at most 8 dims");
    uint64_t numel = 1;
    for (const auto& d : *sh) {
      uint64_t n = as_u64(d, "tensor '" + name + "': shape entry");
      if (n > (uint64_t(1) << 40) || (n && numel > (uint64_t(1) << 40) / n))
        bad("tensor '" + name + "': shape is too large");
      numel *= n;
      t.shape.push_back((int64_t)n);
    }
    if (!off->is_array() || off->size() != 2) bad("tensor '" + name + "': data_offsets must be [begin, end]");
    uint64_t b = as_u64((*off)[0], "tensor '" + name + "': data_offsets"),
             e = as_u64((*off)[1], "tensor '" + name + "': data_offsets");
    if (b > e || e > data_size)
      bad("tensor '" + name + "': data_offsets [" + std::to_string(b) + ", " + std::to_string(e) +
          "] outside the data section of " + std::to_string(data_size) + " bytes");
    if (e - b != numel * dtype_size(t.dtype))
      bad("tensor '" + name + "': " + std::to_string(e - b) + " bytes do not match shape and dtype (" +
          std::to_string(numel * dtype_size(t.dtype)) + " expected)");
    t.offset = b;
    t.nbytes = e - b;
    t.numel = (int64_t)numel;
    st.tensors_.push_back(std::move(t));
  }
  // No two tensors may share bytes. Empty tensors hold no bytes: writers may place them at the
  // offset where the next tensor starts, and the sort below must not make that an overlap.
  std::vector<const TensorInfo*> byoff;
  for (const auto& t : st.tensors_)
    if (t.nbytes) byoff.push_back(&t);
  std::sort(byoff.begin(), byoff.end(),
            [](const TensorInfo* a, const TensorInfo* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < byoff.size(); ++i)
    if (byoff[i - 1]->offset + byoff[i - 1]->nbytes > byoff[i]->offset)
      bad("tensors '" + byoff[i - 1]->name + "' and '" + byoff[i]->name + "' overlap");

  st.data_begin_ = 8 + hlen;
  st.keep_ = std::move(keep);
  st.base_ = bytes;
  return st;
}

// C stdio, not <fstream>: iostreams would bring the C++ locale machinery (about 1 MB) into
// every static program, the small core's included.
std::vector<uint8_t> read_file(const std::string& path) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) throw Error("cannot open '" + path + "'");
  std::vector<uint8_t> buf;
  uint8_t chunk[1 << 16];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, f.get())) > 0) buf.insert(buf.end(), chunk, chunk + n);
  if (std::ferror(f.get())) throw Error("cannot read '" + path + "'");
  return buf;
}

namespace {
#if ATTNLITE_HAVE_MMAP
// The whole of a regular file mapped read-only (null: not a regular file, or empty, or
// mmap refused: the caller reads it instead). The mapping lives as long as the pointer.
std::shared_ptr<const void> map_file(const std::string& path, size_t* size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("cannot open '" + path + "'");
  struct stat sb;
  const bool stated = ::fstat(fd, &sb) == 0;
  if (stated && S_ISDIR(sb.st_mode)) {
    ::close(fd);
    throw Error("cannot read '" + path + "': it is a directory, not a model file");
  }
  if (!stated || !S_ISREG(sb.st_mode) || sb.st_size <= 0 ||
      (uint64_t)sb.st_size > (uint64_t)std::numeric_limits<size_t>::max()) {
    ::close(fd);
    return nullptr;
  }
  const size_t n = (size_t)sb.st_size;
  void* p = ::mmap(nullptr, n, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);  // the mapping keeps the file
  if (p == MAP_FAILED) return nullptr;
  *size = n;
  return std::shared_ptr<const void>(p, [n](const void* q) { ::munmap(const_cast<void*>(q), n); });
}
#endif
}  // namespace

SafeTensors SafeTensors::load(const std::string& path) {
  std::shared_ptr<const void> mapping;
  size_t size = 0;
#if ATTNLITE_HAVE_MMAP
  mapping = map_file(path, &size);
#endif
  std::vector<uint8_t> file;
  if (!mapping) file = read_file(path);
  try {
    if (!mapping) return parse(std::move(file));
    const auto* bytes = static_cast<const uint8_t*>(mapping.get());
    SafeTensors st = view(bytes, size, std::move(mapping));
    st.mapped_ = true;
    return st;
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

void SafeTensors::release_pages(const void* p, size_t bytes) const {
#if ATTNLITE_HAVE_MMAP
  if (!mapped_ || !p || !bytes) return;
  const long page = ::sysconf(_SC_PAGESIZE);
  if (page <= 0) return;
  const uintptr_t a = reinterpret_cast<uintptr_t>(p), e = a + bytes;
  const uintptr_t first = (a + (uintptr_t)page - 1) / (uintptr_t)page * (uintptr_t)page;
  const uintptr_t last = e / (uintptr_t)page * (uintptr_t)page;
  if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
#else
  (void)p;
  (void)bytes;
#endif
}

const TensorInfo* SafeTensors::find(std::string_view name) const {
  for (const auto& t : tensors_)
    if (t.name == name) return &t;
  return nullptr;
}

const TensorInfo& SafeTensors::get(std::string_view name) const {
  const TensorInfo* t = find(name);
  if (!t) throw Error("missing tensor '" + std::string(name) + "'");
  return *t;
}

std::string SafeTensors::meta(const std::string& key) const {
  auto it = metadata_.find(key);
  if (it == metadata_.end()) throw Error("missing metadata '" + key + "'");
  return it->second;
}

void SafeTensors::copy_f32(const TensorInfo& t, float* dst) const {
  if (t.dtype == DType::F16 || t.dtype == DType::BF16)
    throw Error("tensor '" + t.name + "': cannot convert " + dtype_name(t.dtype) + " to F32");
  if (t.numel == 0) return;  // dst may be null (an empty vector's data()); memcpy forbids that
  const uint8_t* p = data(t);
  switch (t.dtype) {
    case DType::F32: std::memcpy(dst, p, t.nbytes); return;
    case DType::I64:
      for (int64_t i = 0; i < t.numel; ++i) { int64_t v; std::memcpy(&v, p + 8 * i, 8); dst[i] = (float)v; }
      return;
    case DType::I32:
      for (int64_t i = 0; i < t.numel; ++i) { int32_t v; std::memcpy(&v, p + 4 * i, 4); dst[i] = (float)v; }
      return;
    case DType::I8:
      for (int64_t i = 0; i < t.numel; ++i) dst[i] = (float)(int8_t)p[i];
      return;
    case DType::U8:
      for (int64_t i = 0; i < t.numel; ++i) dst[i] = (float)p[i];
      return;
    default: throw Error("tensor '" + t.name + "': cannot convert " + dtype_name(t.dtype) + " to F32");
  }
}

std::vector<float> SafeTensors::f32(std::string_view name) const {
  const TensorInfo& t = get(name);
  std::vector<float> v((size_t)t.numel);
  copy_f32(t, v.data());
  return v;
}

std::vector<int64_t> SafeTensors::i64(std::string_view name) const {
  const TensorInfo& t = get(name);
  if (t.dtype != DType::I64 && t.dtype != DType::I32)  // checked before the loop: empty tensors too
    throw Error("tensor '" + t.name + "' is " + dtype_name(t.dtype) + ", expected I64 or I32");
  std::vector<int64_t> v((size_t)t.numel);
  const uint8_t* p = data(t);
  for (int64_t i = 0; i < t.numel; ++i) {
    if (t.dtype == DType::I64) std::memcpy(&v[i], p + 8 * i, 8);
    else { int32_t x; std::memcpy(&x, p + 4 * i, 4); v[i] = x; }
  }
  return v;
}

}  // namespace attnlite

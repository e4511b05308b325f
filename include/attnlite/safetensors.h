// attnlite — safetensors reader that trusts nothing in the file.
//
// Layout: u64 little-endian header length N, N bytes of JSON
//   {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, ...,
//    "__metadata__": {"key": "value", ...}}
// then the data section; offsets are relative to its start.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace attnlite {

enum class DType { F32, F16, BF16, I64, I32, I8, U8 };

const char* dtype_name(DType);
size_t dtype_size(DType);

struct TensorInfo {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  size_t offset = 0;   // into the data section
  size_t nbytes = 0;
  int64_t numel = 0;
};

class SafeTensors {
 public:
  static constexpr size_t kMaxHeaderBytes = 16u << 20;  // 16 MiB of JSON is already absurd

  // Parses and validates a whole file image. Throws attnlite::Error naming the problem.
  static SafeTensors parse(const uint8_t* bytes, size_t size);  // copies the bytes
  static SafeTensors parse(std::vector<uint8_t>&& bytes);         // keeps them
  // Borrows the bytes: the caller keeps them alive and unchanged while this object, or a
  // model loaded from it, lives.
  // owner, when given, keeps the bytes alive instead (shared with whoever uses them in place).
  static SafeTensors view(const uint8_t* bytes, size_t size, std::shared_ptr<const void> owner = nullptr);
  // A file: mapped read-only where the platform has mmap (POSIX, a regular file), read into
  // memory otherwise. A mapped file must not be changed while it is in use: its pages are
  // the weights (a file truncated underneath raises SIGBUS, as for any mapped file).
  static SafeTensors load(const std::string& path);

  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const TensorInfo* find(std::string_view name) const;
  const TensorInfo& get(std::string_view name) const;  // throws if absent
  std::string meta(const std::string& key) const;      // throws if absent

  // Raw bytes of a tensor (no alignment guarantee).
  const uint8_t* data(const TensorInfo& t) const { return base_ + data_begin_ + t.offset; }
  // What keeps the file image alive (a copy, a mapping), shared by whoever uses tensors in
  // place; null for view().
  const std::shared_ptr<const void>& storage() const { return keep_; }
  bool mapped() const { return mapped_; }
  // The host will not read [p, p + bytes) of a mapped image in the usual course (a layout
  // derived from it replaces it): the whole pages inside go back to the file, out of the
  // process's resident memory, and are read from it again if ever touched. Nothing happens
  // to an image in memory (a copy, the caller's buffer) or where mmap is not used.
  void release_pages(const void* p, size_t bytes) const;
  // Copies (and converts integer dtypes) into dst of numel elements.
  void copy_f32(const TensorInfo& t, float* dst) const;
  std::vector<float> f32(std::string_view name) const;
  std::vector<int64_t> i64(std::string_view name) const;  // from I64 or I32

 private:
  std::vector<TensorInfo> tensors_;
  std::map<std::string, std::string> metadata_;
  // Validates the image at bytes (kept alive by keep) and indexes it.
  static SafeTensors parse_image(std::shared_ptr<const void> keep, const uint8_t* bytes, size_t size);
  std::shared_ptr<const void> keep_;  // owns the whole file image, unless borrowed
  const uint8_t* base_ = nullptr;     // its first byte
  size_t data_begin_ = 0;
  bool mapped_ = false;
};

// Reads a whole file; throws attnlite::Error naming the path on failure.
std::vector<uint8_t> read_file(const std::string& path);

}  // namespace attnlite

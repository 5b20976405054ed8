#include "common/npy.h"

#include "common/check.h"

#include <cstdio>
#include <filesystem>
#include <stdexcept>

namespace ladder {

std::string npy_header(const std::string& descr, const std::vector<int64_t>& shape) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) dict += std::to_string(shape[i]) + ", ";
  if (shape.size() > 1) dict.erase(dict.size() - 2);  // (n,) keeps its comma; (r, c) does not
  if (shape.size() == 1) dict.erase(dict.size() - 1);
  dict += "), }";
  // magic(6) + version(2) + header length(2) + dict + '\n', padded with spaces to a multiple of 64.
  size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  std::string h = "\x93NUMPY";
  h += '\x01';
  h += '\x00';
  uint16_t len = static_cast<uint16_t>(dict.size());
  h += static_cast<char>(len & 0xFF);
  h += static_cast<char>(len >> 8);
  return h + dict;
}

namespace {

void write_raw(const std::string& dir, const std::string& name, const std::string& descr,
               const void* data, size_t elem, const std::vector<int64_t>& shape) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::string path = dir + "/" + name + ".npy";
  // The directory was proven writable when --dump was parsed (require_writable_dir): a file that
  // cannot be written now (a full disk, a name taken by a directory) is a run-time error, exit 3.
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw std::runtime_error("--dump: cannot open " + path + " for writing");
  size_t count = 1;
  for (int64_t d : shape) count *= static_cast<size_t>(d);
  std::string h = npy_header(descr, shape);
  const bool written = std::fwrite(h.data(), 1, h.size(), f) == h.size() && std::fwrite(data, elem, count, f) == count;
  const bool closed = std::fclose(f) == 0;  // a buffered write can fail only here
  if (!written || !closed) throw std::runtime_error("--dump: could not write all of " + path);
}

}  // namespace

void require_writable_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::string probe = dir + "/.ladder_write_test";
  std::FILE* f = std::fopen(probe.c_str(), "wb");
  if (!f) throw UsageError("--dump: cannot write into directory '" + dir + "'");
  std::fclose(f);
  std::remove(probe.c_str());
}

void write_npy(const std::string& d, const std::string& n, const float* p,
               const std::vector<int64_t>& s) { write_raw(d, n, "<f4", p, 4, s); }
void write_npy(const std::string& d, const std::string& n, const double* p,
               const std::vector<int64_t>& s) { write_raw(d, n, "<f8", p, 8, s); }
void write_npy(const std::string& d, const std::string& n, const int32_t* p,
               const std::vector<int64_t>& s) { write_raw(d, n, "<i4", p, 4, s); }
void write_npy(const std::string& d, const std::string& n, const int64_t* p,
               const std::vector<int64_t>& s) { write_raw(d, n, "<i8", p, 8, s); }

}  // namespace ladder

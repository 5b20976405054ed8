// --dump DIR: inputs and GPU outputs as NumPy .npy files (format version 1.0, little-endian,
// C order), so NumPy or PyTorch can check a step from outside: np.load("DIR/r.npy").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ladder {

// Writes DIR/NAME.npy: the elements of `shape` (their product) from `data`, C order. Creates DIR if
// needed. Throws std::runtime_error (exit 3) if the file cannot be opened or written in full: the
// directory itself was checked when --dump was parsed (require_writable_dir, exit 2).
void write_npy(const std::string& dir, const std::string& name, const float* data,
               const std::vector<int64_t>& shape);
void write_npy(const std::string& dir, const std::string& name, const double* data,
               const std::vector<int64_t>& shape);
void write_npy(const std::string& dir, const std::string& name, const int32_t* data,
               const std::vector<int64_t>& shape);
void write_npy(const std::string& dir, const std::string& name, const int64_t* data,
               const std::vector<int64_t>& shape);

// Creates DIR if needed and proves a file can be written there; throws UsageError (exit 2) if not.
// The CLI calls it while parsing --dump, before anything runs, so a bad directory can never turn a
// verification failure (exit 1) into a usage error after the fact.
void require_writable_dir(const std::string& dir);

// The header the writer emits, exposed for tests: magic, version, length, dict padded to 64 bytes.
std::string npy_header(const std::string& descr, const std::vector<int64_t>& shape);

}  // namespace ladder

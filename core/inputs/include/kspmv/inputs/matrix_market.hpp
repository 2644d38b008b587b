// Matrix Market I/O (https://math.nist.gov/MatrixMarket/formats.html).
//
// Reads `coordinate` matrices with `real`, `integer` or `pattern` fields and
// `general`, `symmetric` or `skew-symmetric` symmetry (expanded on read;
// pattern entries become 1), plain or gzip-compressed (detected by content,
// not by name). `array` and `complex`/`hermitian` files are refused with
// UnsupportedError. Malformed input throws ParseError naming the file, the
// line and the problem. Duplicate entries are summed, explicit zeros kept.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kspmv/core/host_matrix.hpp"
#include "kspmv/core/progress.hpp"

namespace kspmv {

enum class NonFinitePolicy { Keep, Reject };

struct MatrixMarketReadOptions {
  NonFinitePolicy nonfinite = NonFinitePolicy::Keep;  // Reject: NaN/Inf is a ParseError
  // Limits for untrusted input (0: none beyond 32-bit indices): a size line
  // past them is a LimitError before anything is allocated.
  std::int64_t max_dimension = 0;  // rows and columns
  std::int64_t max_entries = 0;    // entries the size line announces
  ProgressFn progress;
};

struct MatrixMarketHeader {
  std::string object;    // "matrix"
  std::string format;    // "coordinate" | "array"
  std::string field;     // "real" | "integer" | "pattern" | ...
  std::string symmetry;  // "general" | "symmetric" | "skew-symmetric" | ...
  std::int64_t rows = 0, cols = 0, entries = 0;  // entries as stored in the file
};

// Reads a matrix from a file (.mtx or .mtx.gz).
template <class Scalar>
HostCsr<Scalar> read_matrix_market(const std::string& path,
                                   const MatrixMarketReadOptions& opts = {},
                                   MatrixMarketHeader* header = nullptr);

// Parses a matrix held in memory; `source` names it in error messages.
template <class Scalar>
HostCsr<Scalar> parse_matrix_market(std::string_view text, const std::string& source,
                                    const MatrixMarketReadOptions& opts = {},
                                    MatrixMarketHeader* header = nullptr);

// Writes `coordinate real general` with full precision (round-trips
// exactly). Compressed with gzip when the path ends in ".gz".
template <class Scalar>
void write_matrix_market(const std::string& path, const HostCsr<Scalar>& a,
                         const std::string& comment = "");

// Dense vectors as `matrix array real general` with one column.
std::vector<double> read_matrix_market_vector(const std::string& path);
template <class Scalar>
void write_matrix_market_vector(const std::string& path, const std::vector<Scalar>& v);

// Whole file contents, gunzipped when the content is gzip.
std::string read_file_maybe_gz(const std::string& path);
// Writes text, gzip-compressed when the path ends in ".gz".
void write_file_maybe_gz(const std::string& path, const std::string& text);

}  // namespace kspmv

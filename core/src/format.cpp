#include "kspmv/core/format.hpp"

#include "kspmv/core/error.hpp"

namespace kspmv {

const std::vector<FormatDescription>& known_formats() {
  static const std::vector<FormatDescription> formats = {
      {Format::Csr, "csr", "portable device CSR, a vector of lanes per row"},
      {Format::KkCrs, "kk-crs", "Kokkos Kernels CrsMatrix + KokkosSparse::spmv (baseline)"},
      {Format::Dia, "dia", "diagonals, column-major padded data, no column indices"},
      {Format::Ell, "ell", "ELLPACK, column-major padded to the longest row"},
      {Format::CsrScalar, "csr-scalar", "CSR, one thread per row"},
      {Format::CsrVector, "csr-vector", "CSR, 2..32 lanes per row, warp-shuffle reduction"},
      {Format::Coo, "coo", "sorted triplets, chunked segmented reduction (deterministic)"},
      {Format::Hyb, "hyb", "ELL for the typical row length + COO for the rest"},
      {Format::Pkt, "pkt", "partitioned packets, x cached in team scratch, 16-bit local indices", true},
      {Format::Ellr, "ellr", "ELLPACK-R: ELL plus row lengths, no padding loads"},
      {Format::Pellr, "pellr", "ELLPACK-R of rows sorted by length, 32-row slices of their own width"},
      {Format::Jad, "jad", "jagged diagonals of rows sorted by length, no padding"},
      {Format::CsrAdaptive, "csr-adaptive", "CSR with 1..256 lanes per row by ranges of length-sorted rows"},
      {Format::EvcHyb, "evc-hyb", "sub-ELL blocks per row length + adaptive vector CSR, one launch"},
      {Format::Ehyb, "ehyb", "graph-partitioned sliced ELL, x window in shared memory, 16-bit indices", true},
      {Format::Auto, "auto", "the performance model's pick for this matrix (kspmv info --predict)"},
  };
  return formats;
}

std::string known_format_names() {
  std::string s;
  for (const auto& f : known_formats()) s += (s.empty() ? "" : ", ") + std::string(f.name);
  return s;
}

const char* format_name(Format f) {
  for (const auto& d : known_formats())
    if (d.format == f) return d.name;
  return "unknown";
}

Format parse_format(const std::string& name) {
  for (const auto& d : known_formats())
    if (name == d.name) return d.format;
  throw InvalidArgumentError("unknown format '" + name + "'; known formats: " + known_format_names());
}

}  // namespace kspmv

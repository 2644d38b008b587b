// Format names: one spelling shared by the CLI, the benchmarks, the tests
// and the docs. An unknown name is an error that lists the known ones.
#pragma once

#include <string>
#include <vector>

namespace kspmv {

enum class Format {
  Csr,        // portable device CSR (TeamPolicy, vector lanes per row)
  KkCrs,      // Kokkos Kernels' CrsMatrix + KokkosSparse::spmv: the baseline
  Dia,        // diagonals (Bell & Garland)
  Ell,        // ELLPACK
  CsrScalar,  // CSR, a thread per row
  CsrVector,  // CSR, a group of lanes per row
  Coo,        // triplets, segmented reduction
  Hyb,        // ELL + COO
  Pkt,        // packets of partitioned rows, x cached in team scratch
  Ellr,       // ELLPACK-R: ELL + row lengths
  Pellr,      // ELLPACK-R of length-sorted rows, per-slice widths
  Jad,        // jagged diagonals of length-sorted rows
  CsrAdaptive,  // CSR, threads per row adapted to ranges of sorted rows
  EvcHyb,     // sub-ELL per row length + vector CSR for long rows
  Ehyb,       // graph-partitioned sliced ELL, x window in shared memory
  Auto,       // the performance model's pick for the matrix (pmf-model Alg. 1)
};

struct FormatDescription {
  Format format;
  const char* name;
  const char* summary;
  bool square_only = false;  // renumbers rows and columns alike
};

// Every format this build knows, in a stable order.
const std::vector<FormatDescription>& known_formats();
// "csr, kk-crs, ..." for messages.
std::string known_format_names();
const char* format_name(Format f);
// Throws InvalidArgumentError listing the known names.
Format parse_format(const std::string& name);

}  // namespace kspmv

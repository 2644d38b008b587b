// The formats kspmv knows, in one list, and their names: one spelling
// shared by the CLI, the benchmarks, the tests and the docs. An unknown
// name is an error that lists the known ones.
#pragma once

#include <string>
#include <vector>

namespace kspmv {

// Registering a format is one line here plus its own files (its header in
// formats/, its tuned kernel in backends/cuda/). Everything that
// enumerates formats expands this list: the Format enum, known_formats()
// (which the unit tests, the benchmark and the model iterate) and the
// run-time Matrix's conversion (formats/runtime). Columns:
//   X(Enum, "name", builder, square_only, "summary")
// builder: the format's conversion, called as builder<Scalar, ExecSpace>(
// const HostCsr<Scalar>&, const ConvertOptions&); only the run-time
// Matrix expands it. square_only: the format renumbers rows and columns
// alike. The model (kspmv/model/model.hpp) has a traffic estimate for
// each: a format without one is a compile error there.
#define KSPMV_FORMAT_LIST(X)                                                                                        \
  X(Csr, "csr", to_csr_device, false, "portable device CSR, a vector of lanes per row")                             \
  X(KkCrs, "kk-crs", to_kk_crs, false, "Kokkos Kernels CrsMatrix + KokkosSparse::spmv (baseline)")                 \
  X(Dia, "dia", to_dia, false, "diagonals, column-major padded data, no column indices")                            \
  X(Ell, "ell", to_ell, false, "ELLPACK, column-major padded to the longest row")                                   \
  X(CsrScalar, "csr-scalar", to_csr_scalar, false, "CSR, one thread per row")                                       \
  X(CsrVector, "csr-vector", to_csr_vector, false, "CSR, 2..32 lanes per row, warp-shuffle reduction")              \
  X(Coo, "coo", to_coo_device, false, "sorted triplets, chunked segmented reduction (deterministic)")               \
  X(Hyb, "hyb", to_hyb, false, "ELL for the typical row length + COO for the rest")                                 \
  X(Pkt, "pkt", to_pkt, true, "partitioned packets, x cached in team scratch, 16-bit local indices")                \
  X(Ellr, "ellr", to_ellr, false, "ELLPACK-R: ELL plus row lengths, no padding loads")                              \
  X(Pellr, "pellr", to_pellr, false, "ELLPACK-R of rows sorted by length, 32-row slices of their own width")         \
  X(Jad, "jad", to_jad, false, "jagged diagonals of rows sorted by length, no padding")                             \
  X(CsrAdaptive, "csr-adaptive", to_csr_adaptive, false, "CSR with 1..256 lanes per row by ranges of length-sorted rows") \
  X(CsrMerge, "csr-merge", to_csr_merge, false, "CSR split by merge path: equal rows + nonzeros per unit, deterministic fix-up") \
  X(EvcHyb, "evc-hyb", to_evc_hyb, false, "sub-ELL blocks per row length + adaptive vector CSR, one launch")         \
  X(Ehyb, "ehyb", to_ehyb, true, "graph-partitioned sliced ELL, x window in shared memory, 16-bit indices")

enum class Format {
#define KSPMV_FORMAT_ENUM(E, name, builder, square_only, summary) E,
  KSPMV_FORMAT_LIST(KSPMV_FORMAT_ENUM)
#undef KSPMV_FORMAT_ENUM
  // Not a storage format: the performance model's pick for the matrix
  // (pmf-model Algorithm 1), converted to that format.
  Auto,
};

struct FormatDescription {
  Format format;
  const char* name;
  const char* summary;
  bool square_only = false;  // renumbers rows and columns alike
};

// Every format this build knows, in the list's order, then auto.
const std::vector<FormatDescription>& known_formats();
// "csr, kk-crs, ..." for messages.
std::string known_format_names();
const char* format_name(Format f);
// Throws InvalidArgumentError listing the known names.
Format parse_format(const std::string& name);

}  // namespace kspmv

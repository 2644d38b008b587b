// Seeded, reproducible test and benchmark matrices.
//
// Every generator writes CSR directly, row by row, with exact reservations,
// so matrices of hundreds of millions of entries need no more memory than
// the result itself. A spec string names a generator and its arguments:
//
//   lap1d:N              3-point 1D Laplacian, N rows
//   lap2d:N  lap2d5:N    5-point 2D Laplacian on an N x N grid
//   lap2d9:N             9-point 2D Laplacian on an N x N grid
//   lap3d:N  lap3d7:N    7-point 3D Laplacian on an N x N x N grid
//   lap3d27:N            27-point 3D Laplacian on an N x N x N grid
//   dense:R[:C]          dense R x C (C defaults to R), random values
//   uniform:R:MIN:MAX    row lengths uniform in [MIN, MAX]
//   normal:R:MEAN:STD    row lengths ~ round(N(MEAN, STD)) clipped at 0
//   powerlaw:R:MEAN[:G]  row lengths with a power-law tail p(k) ~ k^-G
//                        (G > 2, default 2.5), mean about MEAN
//   rmat:S[:EF]          Graph500 Kronecker (R-MAT) graph, 2^S vertices,
//                        EF * 2^S edges drawn (default 16), duplicates summed
//   banded:N:H           full band of half-width H
//   blockdiag:N:B        dense B x B blocks on the diagonal
//   fem:MESH:p1|p2       FEM Laplacian on a gmsh tetrahedral mesh, options
//                        refine=R, order=natural|rcm|scrambled (core/fem.hpp)
//
// Options after the arguments, as key=value: seed=S (default 1) for every
// random generator; cols=C for uniform/normal/powerlaw (default R);
// a=, b=, c= and scramble=0|1 for rmat (defaults .57 .19 .19, 1).
// Laplacians hold the stencil's weights (2·dim or point count - 1 on the
// diagonal, -1 elsewhere); the others random values in [-1, 1).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kspmv/core/host_matrix.hpp"
#include "kspmv/core/progress.hpp"

namespace kspmv {

// A spec's ':'-separated fields, empty ones kept ("a::b" -> a, "", b).
std::vector<std::string> split_spec(const std::string& spec);
// True when `s` starts with a known generator name followed by ':'.
bool is_generator_spec(const std::string& s);
// One line per generator, for --help texts and error messages.
std::string generator_help();

template <class Scalar>
HostCsr<Scalar> generate(const std::string& spec, const ProgressFn& progress = {});

// The generators behind the specs.
enum class Stencil { Lap1d3, Lap2d5, Lap2d9, Lap3d7, Lap3d27 };
template <class Scalar>
HostCsr<Scalar> laplacian(Stencil s, std::int64_t n, const ProgressFn& progress = {});

enum class RowLengthLaw { Uniform, Normal, PowerLaw };
struct RowLengthDistribution {
  RowLengthLaw law = RowLengthLaw::Uniform;
  double p1 = 0, p2 = 0;  // uniform: min, max; normal: mean, std; power law: mean, exponent
};
template <class Scalar>
HostCsr<Scalar> random_rows(std::int64_t rows, std::int64_t cols, const RowLengthDistribution& d,
                            std::uint64_t seed, const ProgressFn& progress = {});

struct RmatParams {
  int scale = 16;
  double edge_factor = 16;
  double a = 0.57, b = 0.19, c = 0.19;  // d = 1 - a - b - c
  bool scramble = true;                 // random vertex relabelling, as Graph500
  std::uint64_t seed = 1;
};
template <class Scalar>
HostCsr<Scalar> rmat(const RmatParams& p, const ProgressFn& progress = {});

template <class Scalar>
HostCsr<Scalar> dense(std::int64_t rows, std::int64_t cols, std::uint64_t seed);
template <class Scalar>
HostCsr<Scalar> banded(std::int64_t n, std::int64_t half_width, std::uint64_t seed);
template <class Scalar>
HostCsr<Scalar> block_diagonal(std::int64_t n, std::int64_t block, std::uint64_t seed);

}  // namespace kspmv

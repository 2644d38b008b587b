// petsc_ksp: PETSc KSP solves with a kspmv matrix beside the plain AIJ
// matrix.
//
//   mpiexec -n 4 build/examples/petsc_ksp/petsc_ksp [-n 48 | -n_per_rank 192]
//       [-mesh FILE.msh] [-fem_refine 2] [-fem_box 40 | -fem_box_per_rank 60] [-fem_p1]
//       [-diag_format auto[,dia,pellr,...]] [-offdiag_format auto] [-scattered] [-mults 50]
//       [-kspmv_input aij|aijkokkos|aijcusparse] [-compare_types aijkokkos,aijcusparse]
//       [-solves 0] [-matrices SPEC,SPEC,...] [-csv FILE]
//       [-exchanges_too scatter,direct,direct_gpu_aware,direct_peer,direct_staged] [-diagonal_first_too]
//
// Two matrices, each distributed over the ranks in contiguous blocks of
// rows (PETSc's default split), or with -scattered in a random global
// numbering (each rank's rows then come from all over the matrix):
//   - the 7-point 3D Laplacian on an n^3 grid, each rank assembling its
//     own rows; or, for weak scaling, with -n_per_rank m on an
//     m x m x (m * ranks) grid: m^3 rows and about 7 m^3 nonzeros on every
//     rank (m = 192: 7.1M rows, 49.5M nonzeros a rank);
//   - an FEM matrix: the P2 (or P1) Laplacian stiffness matrix on a gmsh
//     tetrahedral mesh refined -fem_refine times, plus a small diagonal
//     shift (without boundary conditions it is singular). For brevity
//     every rank assembles the whole matrix (kspmv::fem_matrix) and
//     inserts its own rows;
//   - an FEM matrix that grows with the ranks: the same P2 (or P1)
//     stiffness matrix and shift on a structured box of unit cubes cut
//     into Kuhn's tetrahedra (kspmv::box_mesh), -fem_box m: m x m x m
//     cubes, -fem_box_per_rank m: m x m x (m * ranks), each rank
//     assembling its own rows from the slab of cubes that touches them
//     (kspmv::box_laplacian_rows; m = 60, P2: 1.8M rows and 50M
//     nonzeros a rank);
//   - -matrices: kspmv generator specs (lap3d27:100, powerlaw:2000000:15,
//     rmat:20:16, ...: the matrices of kspmv_perf's suites), each rank
//     generating the whole matrix and inserting its own rows; products
//     and times only (not all of them are SPD).
// For each: CG + Jacobi and GMRES + Jacobi with the AIJ matrix and with
// the kspmv matrix (kspmv::petsc::MatCreateKspmv on that AIJ matrix):
// iterations, solve time (-solves 0 skips them), and the time per MatMult
// (timed apart from the solves), and the kspmv matrix's again with each
// block fenced and timed (MatKspmvSetBlockTimings): its split into halo
// exchange, diagonal block and off-diagonal block. -diag_format takes a
// list: one kspmv matrix after another is made from the same AIJ matrix
// and timed (the solves use the first), so one run finds the best format
// for the rank's block. -csv FILE appends a row per timed matrix as soon
// as it is measured (rank 0 writes; a run stopped early keeps its rows).
//
// -kspmv_input picks the AIJ type the kspmv matrix is made from, and so
// its vectors' type: aij (host vectors, staged to kspmv's device when it
// has one), aijkokkos (VECKOKKOS) or aijcusparse (VECCUDA), whose device
// arrays kspmv reads and writes in place. The default is aijkokkos where
// kspmv runs on a device and PETSc has Kokkos, else aij. -compare_types
// times PETSc's own MatMult of other AIJ types beside them (MatConvert of
// the AIJ matrix, with vectors of the matching type), checking their
// products too. Exits with 1 if CG's iterations differ by more than one or
// the products differ by more than rounding.
#include <petscksp.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <numeric>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "kspmv/core/format.hpp"
#include "kspmv/core/host_matrix.hpp"
#include "kspmv/core/permutation.hpp"
#include "kspmv/core/random.hpp"
#include "kspmv/inputs/fem.hpp"
#include "kspmv/inputs/generators.hpp"
#include "kspmv/petsc/mat.hpp"

#ifndef KSPMV_EXAMPLE_MESH
#define KSPMV_EXAMPLE_MESH ""
#endif

namespace {

// Where kspmv runs on a device, PETSc's Kokkos matrices hand it device
// vectors.
#if defined(PETSC_HAVE_KOKKOS)
constexpr const char* kDefaultInput =
    std::is_same<Kokkos::DefaultExecutionSpace::memory_space, Kokkos::HostSpace>::value ? "aij" : "aijkokkos";
#else
constexpr const char* kDefaultInput = "aij";
#endif

struct Options {
  PetscInt n = 48;
  PetscInt n_per_rank = 0;
  char mesh[PETSC_MAX_PATH_LEN] = KSPMV_EXAMPLE_MESH;
  PetscInt fem_refine = 2;
  PetscInt fem_box = 0;
  PetscInt fem_box_per_rank = 0;
  PetscBool fem_p1 = PETSC_FALSE;
  char diag_format[256] = "auto";
  char offdiag_format[64] = "auto";
  PetscBool scattered = PETSC_FALSE;
  PetscInt mults = 50;
  PetscReal rtol = 1e-8;
  char input[64] = "";
  char compare[256] = "";
  char matrices[1024] = "";
  char csv[PETSC_MAX_PATH_LEN] = "";
  PetscBool diagonal_first_too = PETSC_FALSE;
  char exchanges_too[256] = "";
  PetscBool solves = PETSC_TRUE;
};

// PETSc's name of an AIJ type given as aij, aijkokkos, aijcusparse (or any
// MatType).
MatType aij_type(const std::string& t) {
  if (t == "aij") return MATAIJ;
  if (t == "aijkokkos") return MATAIJKOKKOS;
  if (t == "aijcusparse") return MATAIJCUSPARSE;
  if (t == "aijhipsparse") return MATAIJHIPSPARSE;
  return nullptr;
}

std::vector<std::string> split_list(const char* s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

// Waits for the device work PETSc or kspmv started (PETSc's device
// products are asynchronous): Kokkos' global fence synchronizes the whole
// device.
void device_sync() {
  if (Kokkos::is_initialized()) Kokkos::fence();
}

// A random numbering shared by every rank: new row i is old row new_to_old[i].
std::vector<kspmv::ordinal_t> random_numbering(PetscInt n) {
  std::vector<kspmv::ordinal_t> p(static_cast<std::size_t>(n));
  std::iota(p.begin(), p.end(), 0);
  kspmv::Rng rng(2024);
  for (std::size_t i = p.size(); i > 1; --i) std::swap(p[i - 1], p[rng.below(i)]);
  return p;
}

// An AIJ matrix of N rows whose row g (global, in the final numbering) is
// given by row(g, cols, vals); PETSc's default split of the rows.
template <class RowFn>
PetscErrorCode assemble(PetscInt N, RowFn&& row, Mat* out) {
  Mat A;
  PetscInt n = PETSC_DECIDE, hi = 0;
  std::vector<PetscInt> cols;
  std::vector<PetscScalar> vals;
  PetscFunctionBeginUser;
  PetscCall(PetscSplitOwnership(PETSC_COMM_WORLD, &n, &N));
  PetscCallMPI(MPI_Scan(&n, &hi, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
  const PetscInt lo = hi - n, clo = lo, chi = hi;  // square: columns split as the rows
  std::vector<PetscInt> dnnz(static_cast<std::size_t>(n)), onnz(static_cast<std::size_t>(n));
  for (PetscInt g = lo; g < hi; ++g) {
    row(g, cols, vals);
    for (PetscInt c : cols) ++(c >= clo && c < chi ? dnnz : onnz)[static_cast<std::size_t>(g - lo)];
  }
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, n, n, N, N, 0, dnnz.data(), 0, onnz.data(), &A));
  for (PetscInt g = lo; g < hi; ++g) {
    row(g, cols, vals);
    PetscCall(MatSetValues(A, 1, &g, static_cast<PetscInt>(cols.size()), cols.data(), vals.data(), INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  *out = A;
  PetscFunctionReturn(0);
}

// The 7-point Laplacian on an nx x ny x nz grid (6 on the diagonal, -1 to
// each neighbour), rows computed where they are owned.
PetscErrorCode laplacian3d(PetscInt nx, PetscInt ny, PetscInt nz, bool scattered, Mat* A) {
  PetscFunctionBeginUser;
  const PetscInt64 N64 = static_cast<PetscInt64>(nx) * ny * nz;
  PetscCheck(N64 <= std::numeric_limits<PetscInt>::max(), PETSC_COMM_WORLD, PETSC_ERR_INT_OVERFLOW,
             "lap3d: %" PetscInt64_FMT " rows do not fit PetscInt (build PETSc with 64-bit indices)", N64);
  const PetscInt N = static_cast<PetscInt>(N64), nxy = nx * ny;
  std::vector<kspmv::ordinal_t> new_to_old, old_to_new;
  if (scattered) {
    new_to_old = random_numbering(N);
    old_to_new = kspmv::inverse_permutation(new_to_old);
  }
  auto row = [&](PetscInt g, std::vector<PetscInt>& cols, std::vector<PetscScalar>& vals) {
    const PetscInt p = scattered ? new_to_old[static_cast<std::size_t>(g)] : g;
    const PetscInt i = p % nx, j = p / nx % ny, k = p / nxy;
    cols.clear();
    vals.clear();
    auto add = [&](PetscInt q, PetscScalar v) {
      cols.push_back(scattered ? old_to_new[static_cast<std::size_t>(q)] : q);
      vals.push_back(v);
    };
    if (k > 0) add(p - nxy, -1);
    if (j > 0) add(p - nx, -1);
    if (i > 0) add(p - 1, -1);
    add(p, 6);
    if (i < nx - 1) add(p + 1, -1);
    if (j < ny - 1) add(p + nx, -1);
    if (k < nz - 1) add(p + nxy, -1);
  };
  PetscCall(assemble(N, row, A));
  PetscFunctionReturn(0);
}

// A square host matrix every rank holds whole (in a random numbering with
// -scattered), each rank inserting its own rows.
PetscErrorCode from_host(const Options& o, kspmv::HostCsr<double> a, Mat* A) {
  PetscFunctionBeginUser;
  PetscCheck(a.nrows == a.ncols, PETSC_COMM_WORLD, PETSC_ERR_ARG_SIZ, "petsc_ksp: a %d x %d matrix is not square",
             static_cast<int>(a.nrows), static_cast<int>(a.ncols));
  if (o.scattered) a = kspmv::permute_symmetric(a, random_numbering(a.nrows));
  auto row = [&](PetscInt g, std::vector<PetscInt>& cols, std::vector<PetscScalar>& vals) {
    cols.assign(a.col_idx.begin() + a.row_ptr[g], a.col_idx.begin() + a.row_ptr[g + 1]);
    vals.assign(a.values.begin() + a.row_ptr[g], a.values.begin() + a.row_ptr[g + 1]);
  };
  PetscCall(assemble(a.nrows, row, A));
  PetscFunctionReturn(0);
}

// The FEM stiffness matrix + 1e-3 x its largest diagonal entry on the
// diagonal.
PetscErrorCode fem(const Options& o, Mat* A, std::string* name) {
  PetscFunctionBeginUser;
  kspmv::HostCsr<double> a;
  const std::string spec = std::string("fem:") + o.mesh + (o.fem_p1 ? ":p1" : ":p2") +
                           ":refine=" + std::to_string(o.fem_refine);
  try {
    a = kspmv::fem_matrix<double>(spec);
  } catch (const std::exception& e) {
    SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_FILE_READ, "%s: %s", spec.c_str(), e.what());
  }
  double dmax = 0;
  for (kspmv::ordinal_t i = 0; i < a.nrows; ++i)
    for (auto k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      if (a.col_idx[k] == i) dmax = std::max(dmax, std::abs(a.values[k]));
  for (kspmv::ordinal_t i = 0; i < a.nrows; ++i)
    for (auto k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      if (a.col_idx[k] == i) a.values[k] += 1e-3 * dmax;
  PetscCall(from_host(o, a, A));
  const char* base = std::strrchr(o.mesh, '/');
  *name = std::string("fem ") + (base ? base + 1 : o.mesh) + (o.fem_p1 ? " P1" : " P2") + " refine " +
          std::to_string(o.fem_refine);
  PetscFunctionReturn(0);
}

// The FEM stiffness matrix on a structured box of m x m x mz unit cubes
// (Kuhn's tetrahedra; degrees of freedom along the grid), each rank
// assembling only its own rows, + 1e-3 x the largest diagonal entry on
// the diagonal as fem() adds.
PetscErrorCode fem_box(PetscInt m, PetscInt mz, bool p1, Mat* A) {
  PetscFunctionBeginUser;
  const kspmv::FemElement e = p1 ? kspmv::FemElement::P1 : kspmv::FemElement::P2;
  std::int64_t N64 = 0;
  kspmv::HostCsr<double> rows;
  PetscInt n = PETSC_DECIDE, hi = 0, N = 0;
  try {
    N64 = kspmv::box_dofs(static_cast<kspmv::ordinal_t>(m), static_cast<kspmv::ordinal_t>(m),
                          static_cast<kspmv::ordinal_t>(mz), e);
  } catch (const std::exception& ex) {
    SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "fem box %" PetscInt_FMT "x%" PetscInt_FMT "x%" PetscInt_FMT ": %s",
            m, m, mz, ex.what());
  }
  PetscCheck(N64 <= std::numeric_limits<PetscInt>::max(), PETSC_COMM_WORLD, PETSC_ERR_INT_OVERFLOW,
             "fem box: %" PetscInt64_FMT " rows do not fit PetscInt (build PETSc with 64-bit indices)", N64);
  N = static_cast<PetscInt>(N64);
  // The rows assemble() will give this rank (PETSc's default split).
  PetscCall(PetscSplitOwnership(PETSC_COMM_WORLD, &n, &N));
  PetscCallMPI(MPI_Scan(&n, &hi, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
  const PetscInt lo = hi - n;
  int failed = 0, any_failed = 0;
  std::string why;
  try {
    rows = kspmv::box_laplacian_rows<double>(static_cast<kspmv::ordinal_t>(m), static_cast<kspmv::ordinal_t>(m),
                                             static_cast<kspmv::ordinal_t>(mz), e, lo, hi);
  } catch (const std::exception& ex) {
    failed = 1;
    why = ex.what();
  }
  PetscCallMPI(MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, PETSC_COMM_WORLD));
  PetscCheck(!any_failed, PETSC_COMM_WORLD, PETSC_ERR_LIB, "fem box: assembly failed on some rank%s%s",
             why.empty() ? "" : ": ", why.c_str());
  double dmax = 0, dmax_all = 0;
  for (kspmv::ordinal_t i = 0; i < rows.nrows; ++i)
    for (auto k = rows.row_ptr[i]; k < rows.row_ptr[i + 1]; ++k)
      if (rows.col_idx[k] == lo + i) dmax = std::max(dmax, std::abs(rows.values[k]));
  PetscCallMPI(MPI_Allreduce(&dmax, &dmax_all, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD));
  for (kspmv::ordinal_t i = 0; i < rows.nrows; ++i)
    for (auto k = rows.row_ptr[i]; k < rows.row_ptr[i + 1]; ++k)
      if (rows.col_idx[k] == lo + i) rows.values[k] += 1e-3 * dmax_all;
  auto row = [&](PetscInt g, std::vector<PetscInt>& cols, std::vector<PetscScalar>& vals) {
    const auto i = static_cast<std::size_t>(g - lo);
    cols.assign(rows.col_idx.begin() + rows.row_ptr[i], rows.col_idx.begin() + rows.row_ptr[i + 1]);
    vals.assign(rows.values.begin() + rows.row_ptr[i], rows.values.begin() + rows.row_ptr[i + 1]);
  };
  PetscCall(assemble(N, row, A));
  PetscFunctionReturn(0);
}

double max_over_ranks(double v) {
  double m = v;
  MPI_Allreduce(&v, &m, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
  return m;
}

struct Solve {
  PetscInt its = 0;
  KSPConvergedReason reason = KSP_CONVERGED_ITERATING;
  double seconds = 0;
};

PetscErrorCode solve(Mat M, KSPType type, Vec b, PetscReal rtol, Solve* s) {
  KSP ksp;
  PC pc;
  Vec x;
  PetscFunctionBeginUser;
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, M, M));
  PetscCall(KSPSetType(ksp, type));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  PetscCall(KSPSetTolerances(ksp, rtol, PETSC_DEFAULT, PETSC_DEFAULT, 10000));
  if (std::string(type) == KSPGMRES) PetscCall(KSPGMRESSetRestart(ksp, 50));
  PetscCall(VecDuplicate(b, &x));
  PetscCall(KSPSetUp(ksp));
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  const double t0 = MPI_Wtime();
  PetscCall(KSPSolve(ksp, b, x));
  s->seconds = max_over_ranks(MPI_Wtime() - t0);
  PetscCall(KSPGetIterationNumber(ksp, &s->its));
  PetscCall(KSPGetConvergedReason(ksp, &s->reason));
  PetscCall(VecDestroy(&x));
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(0);
}

// Seconds per MatMult over `mults` products (after two untimed ones),
// the slowest rank's.
PetscErrorCode time_mult(Mat M, Vec x, Vec y, PetscInt mults, double* per) {
  PetscFunctionBeginUser;
  for (int w = 0; w < 2; ++w) PetscCall(MatMult(M, x, y));
  device_sync();
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  const double t0 = MPI_Wtime();
  for (PetscInt r = 0; r < mults; ++r) PetscCall(MatMult(M, x, y));
  device_sync();
  *per = max_over_ranks((MPI_Wtime() - t0) / static_cast<double>(mults));
  PetscFunctionReturn(0);
}

// The formats of every rank's blocks, "csr" or "csr, csr-vector x3" style.
std::string rank_formats(kspmv::Format mine) {
  int size;
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  int f = static_cast<int>(mine);
  std::vector<int> all(static_cast<std::size_t>(size));
  MPI_Allgather(&f, 1, MPI_INT, all.data(), 1, MPI_INT, PETSC_COMM_WORLD);
  std::string s;
  for (std::size_t i = 0; i < all.size();) {
    std::size_t j = i;
    while (j < all.size() && all[j] == all[i]) ++j;
    if (!s.empty()) s += ", ";
    s += kspmv::format_name(static_cast<kspmv::Format>(all[i]));
    if (j - i > 1) s += " x" + std::to_string(j - i);
    i = j;
  }
  return s;
}

// Copies a vector's local values into another of another type (host
// arrays: set-up and checks only).
// A kspmv matrix's time per MatMult as it runs, then with each block fenced
// (MatKspmvSetBlockTimings), and those fenced products' split.
PetscErrorCode time_bare_and_fenced(Mat K, Vec x, Vec y, PetscInt mults, double* bare, double* fenced,
                                    kspmv::petsc::MultTimings* split) {
  PetscFunctionBeginUser;
  PetscCall(kspmv::petsc::MatKspmvResetTimings(K));
  PetscCall(time_mult(K, x, y, mults, bare));
  PetscCall(kspmv::petsc::MatKspmvSetBlockTimings(K, PETSC_TRUE));
  PetscCall(kspmv::petsc::MatKspmvResetTimings(K));
  PetscCall(time_mult(K, x, y, mults, fenced));
  PetscCall(kspmv::petsc::MatKspmvSetBlockTimings(K, PETSC_FALSE));
  PetscCall(kspmv::petsc::MatKspmvGetTimings(K, split));
  PetscFunctionReturn(0);
}

PetscErrorCode copy_values(Vec from, Vec to) {
  const PetscScalar* a = nullptr;
  PetscScalar* b = nullptr;
  PetscInt n = 0;
  PetscFunctionBeginUser;
  PetscCall(VecGetLocalSize(from, &n));
  PetscCall(VecGetArrayRead(from, &a));
  PetscCall(VecGetArrayWrite(to, &b));
  std::copy(a, a + n, b);
  PetscCall(VecRestoreArrayWrite(to, &b));
  PetscCall(VecRestoreArrayRead(from, &a));
  PetscFunctionReturn(0);
}

// max |y - ref| / max |ref| over all ranks (y and ref of any types).
PetscErrorCode relative_difference(Vec y, Vec ref, double* d) {
  const PetscScalar *a = nullptr, *b = nullptr;
  PetscInt n = 0;
  double num = 0, den = 0;
  PetscFunctionBeginUser;
  PetscCall(VecGetLocalSize(ref, &n));
  PetscCall(VecGetArrayRead(y, &a));
  PetscCall(VecGetArrayRead(ref, &b));
  for (PetscInt i = 0; i < n; ++i) {
    num = std::max(num, static_cast<double>(PetscAbsScalar(a[i] - b[i])));
    den = std::max(den, static_cast<double>(PetscAbsScalar(b[i])));
  }
  PetscCall(VecRestoreArrayRead(ref, &b));
  PetscCall(VecRestoreArrayRead(y, &a));
  num = max_over_ranks(num);
  den = max_over_ranks(den);
  *d = den > 0 ? num / den : num;
  PetscFunctionReturn(0);
}

// The AIJ matrix A as type `t` (A itself, referenced, for aij).
PetscErrorCode as_type(Mat A, const std::string& t, Mat* B) {
  PetscFunctionBeginUser;
  MatType mt = aij_type(t);
  PetscCheck(mt, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "unknown matrix type %s (aij, aijkokkos, aijcusparse, aijhipsparse)", t.c_str());
  if (t == "aij") {
    PetscCall(PetscObjectReference(reinterpret_cast<PetscObject>(A)));
    *B = A;
  } else {
    // A copy converted in place: PETSc's MatConvert from MATMPIAIJ with
    // MAT_INITIAL_MATRIX (3.24) retypes the source's blocks instead of the
    // new matrix's, which then runs MATAIJKOKKOS's MatMult on host blocks
    // (40 ms on lap3d 192^3, 2 ranks) or MATAIJCUSPARSE's with wrong results.
    PetscCall(MatDuplicate(A, MAT_COPY_VALUES, B));
    PetscCall(MatConvert(*B, mt, MAT_INPLACE_MATRIX, B));
  }
  PetscFunctionReturn(0);
}

// One row of -csv: appended by rank 0 as soon as a matrix is timed.
struct CsvRow {
  std::string matrix;
  PetscInt rows = 0, nonzeros = 0;
  int ranks = 0;
  std::string runner, diag_formats;
  double us = 0, fenced_us = 0, exchange_us = 0, diagonal_us = 0, offdiagonal_us = 0;
  double conversion_ms = 0, refresh_ms = 0;
  bool ok = true;
};

PetscErrorCode append_csv(const Options& o, const CsvRow& r) {
  PetscMPIInt rank;
  PetscFunctionBeginUser;
  if (!o.csv[0]) PetscFunctionReturn(0);
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  if (rank != 0) PetscFunctionReturn(0);
  FILE* f = std::fopen(o.csv, "a");
  PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "-csv %s: cannot open for appending", o.csv);
  std::fseek(f, 0, SEEK_END);
  if (std::ftell(f) == 0)
    std::fprintf(f, "matrix,rows,nonzeros,ranks,runner,diag_formats,us_per_mult,fenced_us,exchange_us,diagonal_us,"
                    "offdiagonal_us,conversion_ms,refresh_ms,check\n");
  std::string formats = r.diag_formats;
  std::replace(formats.begin(), formats.end(), ',', ';');
  std::fprintf(f, "\"%s\",%" PetscInt_FMT ",%" PetscInt_FMT ",%d,%s,%s,%.2f,%.2f,%.2f,%.2f,%.2f,%.3f,%.3f,%s\n",
               r.matrix.c_str(), r.rows, r.nonzeros, r.ranks, r.runner.c_str(), formats.c_str(), r.us, r.fenced_us,
               r.exchange_us, r.diagonal_us, r.offdiagonal_us, r.conversion_ms, r.refresh_ms, r.ok ? "ok" : "WRONG");
  std::fclose(f);
  PetscFunctionReturn(0);
}

// The kspmv matrix of one diagonal-block format made from Ain: its
// product checked against yref (Ain's of x), solves (when asked), time per
// MatMult unfenced and fenced (its split), one refresh; a -csv row.
PetscErrorCode run_format(const Options& o, Mat Ain, const std::string& name, kspmv::Format diag, kspmv::Format off,
                          Vec x, Vec yref, bool solves, double t_input, CsvRow row, bool* ok) {
  Mat K;
  Vec y, yk, b;
  kspmv::petsc::MultTimings t;
  kspmv::Format dgot, ogot;
  PetscFunctionBeginUser;
  const std::string input = o.input;
  PetscCall(kspmv::petsc::MatCreateKspmv(Ain, diag, off, kspmv::ConvertOptions{}, &K));
  PetscCall(kspmv::petsc::MatKspmvGetFormats(K, &dgot, &ogot));
  PetscCall(kspmv::petsc::MatKspmvGetTimings(K, &t));
  const std::string dfmt = rank_formats(dgot), ofmt = rank_formats(ogot);
  const double conversion = max_over_ranks(t.conversion);
  VecType vtype = nullptr;
  PetscCall(MatGetVecType(Ain, &vtype));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                        "  kspmv (%s): from %s (vectors %s), diagonal blocks %s, off-diagonal blocks %s; conversion %.3f s\n",
                        kspmv::format_name(diag), input.c_str(), vtype, dfmt.c_str(), ofmt.c_str(), conversion));

  // The products agree.
  PetscCall(VecDuplicate(yref, &y));
  PetscCall(VecDuplicate(yref, &yk));
  PetscCall(VecDuplicate(yref, &b));
  PetscCall(MatMult(K, x, yk));
  double nd = 0;
  PetscCall(relative_difference(yk, yref, &nd));
  const bool same = nd <= 1e-12;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "    MatMult: max |y_kspmv - y_%s| / max |y_%s| = %.2e %s\n", input.c_str(),
                        input.c_str(), nd, same ? "(ok)" : "(TOO LARGE)"));
  *ok = *ok && same;

  // Solves: b = A * ones.
  if (solves) {
    Vec ones;
    PetscCall(VecDuplicate(x, &ones));
    PetscCall(VecSet(ones, 1));
    PetscCall(MatMult(Ain, ones, b));
    PetscCall(VecDestroy(&ones));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "    %-16s %-11s %10s %12s\n", "solver", "matrix", "iterations", "solve [s]"));
    for (KSPType type : {KSPCG, KSPGMRES}) {
      Solve sa, sk;
      PetscCall(solve(Ain, type, b, o.rtol, &sa));
      PetscCall(solve(K, type, b, o.rtol, &sk));
      const std::string solver = std::string(type) + " + jacobi";
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "    %-16s %-11s %10" PetscInt_FMT " %12.4f%s\n", solver.c_str(), input.c_str(),
                            sa.its, sa.seconds, sa.reason > 0 ? "" : " (did not converge)"));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "    %-16s %-11s %10" PetscInt_FMT " %12.4f%s\n", solver.c_str(), "kspmv", sk.its,
                            sk.seconds, sk.reason > 0 ? "" : " (did not converge)"));
      if (std::string(type) == KSPCG && (sa.reason <= 0 || sk.reason <= 0 || std::abs(sa.its - sk.its) > 1)) {
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "    CG: the kspmv matrix's iterations differ from %s's by more than one\n",
                              input.c_str()));
        *ok = false;
      }
    }
  }

  // Time per MatMult, apart from the solves, then its split into the
  // exchange and the blocks: the same products with each block fenced and
  // timed (MatKspmvSetBlockTimings).
  double tk, tfenced;
  PetscCall(time_bare_and_fenced(K, x, y, o.mults, &tk, &tfenced, &t));
  const double m = static_cast<double>(std::max<PetscInt>(t.mults, 1));
  // A refresh with the values A holds (what a solver pays each Newton or
  // time step after re-assembling).
  PetscCall(kspmv::petsc::MatKspmvRefresh(K));
  kspmv::petsc::MultTimings tr;
  PetscCall(kspmv::petsc::MatKspmvGetTimings(K, &tr));
  const double refresh = max_over_ranks(tr.refresh);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                        "    set-up from %s's %s arrays: conversion %.2f ms = %.0f MatMults, refresh %.3f ms = %.1f MatMults\n",
                        input.c_str(), tr.device_input ? "device" : "host", 1e3 * conversion, conversion / tk,
                        1e3 * refresh, refresh / tk));
  row.runner = std::string("kspmv:") + kspmv::format_name(diag);  // as asked; diag_formats: what each rank holds
  row.diag_formats = dfmt;
  row.us = 1e6 * tk;
  row.fenced_us = 1e6 * tfenced;
  row.exchange_us = 1e6 * max_over_ranks(t.exchange / m);
  row.diagonal_us = 1e6 * max_over_ranks(t.diagonal / m);
  row.offdiagonal_us = 1e6 * max_over_ranks(t.offdiagonal / m);
  row.conversion_ms = 1e3 * conversion;
  row.refresh_ms = 1e3 * refresh;
  row.ok = same;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                        "    time per MatMult (%" PetscInt_FMT " products, slowest rank): %s %.1f us, kspmv %.1f us = %.2fx"
                        "  (blocks fenced: %.1f us = exchange %.1f, diagonal %.1f, off-diagonal %.1f us)\n",
                        o.mults, input.c_str(), 1e6 * t_input, row.us, t_input / tk, row.fenced_us, row.exchange_us,
                        row.diagonal_us, row.offdiagonal_us));
  PetscCall(append_csv(o, row));
  // The same products by the other exchanges asked for, each split with
  // its blocks fenced and checked against the default's product (the
  // direct exchanges sum a row's off-diagonal entries before adding them
  // to y, the scatter adds them one by one: equal within rounding).
  struct Variant {
    std::string label;
    kspmv::petsc::Exchange exchange;
    PetscBool diagonal_first;
  };
  std::vector<Variant> variants;
  if (row.ranks > 1) {
    for (const std::string& e : split_list(o.exchanges_too)) {
      if (e == "scatter") variants.push_back({"scatter", kspmv::petsc::Exchange::Scatter, PETSC_FALSE});
      else if (e == "direct") variants.push_back({"direct", kspmv::petsc::Exchange::Direct, PETSC_FALSE});
      else if (e == "direct_gpu_aware")
        variants.push_back({"direct_gpu_aware", kspmv::petsc::Exchange::DirectGpuAware, PETSC_FALSE});
      else if (e == "direct_peer")
        variants.push_back({"direct_peer", kspmv::petsc::Exchange::DirectPeer, PETSC_FALSE});
      else if (e == "direct_staged")
        variants.push_back({"direct_staged", kspmv::petsc::Exchange::DirectStaged, PETSC_FALSE});
      else SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-exchanges_too: unknown exchange '%s'", e.c_str());
    }
    if (o.diagonal_first_too)
      variants.push_back({"scatter-diagonal-first", kspmv::petsc::Exchange::Scatter, PETSC_TRUE});
  }
  kspmv::petsc::Exchange default_exchange;
  PetscCall(kspmv::petsc::MatKspmvGetExchange(K, &default_exchange));
  for (const Variant& v : variants) {
    double tv, tvf, diff = 0;
    kspmv::petsc::MultTimings tt;
    Vec yv;
    PetscCall(VecDuplicate(y, &yv));
    PetscCall(kspmv::petsc::MatKspmvSetExchange(K, v.exchange));
    PetscCall(kspmv::petsc::MatKspmvSetDiagonalFirst(K, v.diagonal_first));
    PetscCall(time_bare_and_fenced(K, x, yv, o.mults, &tv, &tvf, &tt));
    PetscCall(MatMult(K, x, yv));
    PetscCall(kspmv::petsc::MatKspmvSetExchange(K, default_exchange));
    PetscCall(kspmv::petsc::MatKspmvSetDiagonalFirst(K, PETSC_FALSE));
    PetscCall(MatMult(K, x, y));
    PetscCall(relative_difference(yv, y, &diff));
    PetscCall(VecDestroy(&yv));
    const double mv = static_cast<double>(std::max<PetscInt>(tt.mults, 1));
    CsvRow r = row;
    r.runner += ":" + v.label;
    r.us = 1e6 * tv;
    r.fenced_us = 1e6 * tvf;
    r.exchange_us = 1e6 * max_over_ranks(tt.exchange / mv);
    r.diagonal_us = 1e6 * max_over_ranks(tt.diagonal / mv);
    r.offdiagonal_us = 1e6 * max_over_ranks(tt.offdiagonal / mv);
    r.ok = row.ok && diff <= 1e-12;
    *ok = *ok && diff <= 1e-12;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                          "    exchange %s: %.1f us per MatMult = %.2fx the default's (blocks fenced: %.1f us = exchange "
                          "%.1f, diagonal %.1f, off-diagonal %.1f us; max |y - y_default| / max |y_default| = %.2e)\n",
                          v.label.c_str(), r.us, r.us / row.us, r.fenced_us, r.exchange_us, r.diagonal_us,
                          r.offdiagonal_us, diff));
    PetscCall(append_csv(o, r));
  }
  (void)name;
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&yk));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&K));
  PetscFunctionReturn(0);
}

PetscErrorCode run(const Options& o, Mat A, const std::string& name, bool* ok) {
  Mat Ain;
  Vec x, yref, y;
  PetscInt N, nnz = 0;
  MatInfo info;
  PetscMPIInt size;
  PetscFunctionBeginUser;
  std::vector<kspmv::Format> diags;
  kspmv::Format off;
  try {
    for (const std::string& f : split_list(o.diag_format)) diags.push_back(kspmv::parse_format(f));
    off = kspmv::parse_format(o.offdiag_format);
  } catch (const std::exception& e) {
    SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "%s", e.what());
  }
  PetscCheck(!diags.empty(), PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-diag_format names no format");
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(MatGetSize(A, &N, nullptr));
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &info));
  nnz = static_cast<PetscInt>(info.nz_used);
  // The kspmv matrices' input: A as -kspmv_input's type; its vectors are
  // the ones every product and solve below uses.
  const std::string input = o.input;
  PetscCall(as_type(A, input, &Ain));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n%s: %" PetscInt_FMT " rows, %" PetscInt_FMT " nonzeros, %s rows\n", name.c_str(),
                        N, nnz, o.scattered ? "scattered (random numbering)" : "contiguous"));
  CsvRow row;
  row.matrix = name;
  row.rows = N;
  row.nonzeros = nnz;
  row.ranks = size;

  // The reference product and the input type's own time per MatMult.
  PetscCall(MatCreateVecs(Ain, &x, &yref));
  PetscCall(VecDuplicate(yref, &y));
  PetscCall(VecSetRandom(x, nullptr));
  PetscCall(MatMult(Ain, x, yref));
  double ta;
  PetscCall(time_mult(Ain, x, y, o.mults, &ta));
  for (std::size_t i = 0; i < diags.size(); ++i)
    PetscCall(run_format(o, Ain, name, diags[i], off, x, yref, o.solves && i == 0, ta, row, ok));
  {
    CsvRow r = row;
    r.runner = input;
    r.us = 1e6 * ta;
    PetscCall(append_csv(o, r));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  time per MatMult (%" PetscInt_FMT " products, slowest rank):\n    %-12s %10.1f us\n",
                        o.mults, input.c_str(), 1e6 * ta));
  // PETSc's own products of other types, on the same x.
  for (const std::string& type : split_list(o.compare)) {
    if (type == input) continue;
    Mat B;
    Vec xb, yb;
    double tb, db;
    VecType vtype = nullptr;
    PetscCall(as_type(A, type, &B));
    PetscCall(MatCreateVecs(B, &xb, &yb));
    PetscCall(copy_values(x, xb));
    PetscCall(MatMult(B, xb, yb));
    PetscCall(relative_difference(yb, yref, &db));
    PetscCall(time_mult(B, xb, yb, o.mults, &tb));
    PetscCall(MatGetVecType(B, &vtype));
    const bool bsame = db <= 1e-12;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "    %-12s %10.1f us  (vectors %s; max |y - y_%s| / max |y_%s| = %.2e%s)\n",
                          type.c_str(), 1e6 * tb, vtype, input.c_str(), input.c_str(), db, bsame ? "" : " TOO LARGE"));
    *ok = *ok && bsame;
    CsvRow r = row;
    r.runner = type;
    r.us = 1e6 * tb;
    r.ok = bsame;
    PetscCall(append_csv(o, r));
    PetscCall(VecDestroy(&xb));
    PetscCall(VecDestroy(&yb));
    PetscCall(MatDestroy(&B));
  }
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&yref));
  PetscCall(MatDestroy(&Ain));
  PetscFunctionReturn(0);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  PetscMPIInt size;
  bool ok = true;
  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, nullptr,
                            "petsc_ksp: KSP solves with the AIJ matrix and with the kspmv matrix\n"));
  PetscOptionsBegin(PETSC_COMM_WORLD, nullptr, "petsc_ksp options", nullptr);
  PetscCall(PetscOptionsInt("-n", "3D Laplacian: grid points per side (0: none)", nullptr, o.n, &o.n, nullptr));
  PetscCall(PetscOptionsInt("-n_per_rank", "3D Laplacian for weak scaling: an m x m x (m * ranks) grid, m^3 rows a rank (replaces -n)",
                            nullptr, o.n_per_rank, &o.n_per_rank, nullptr));
  PetscCall(PetscOptionsString("-mesh", "FEM: gmsh MSH 2.2 tetrahedral mesh (empty: no FEM matrix)", nullptr, o.mesh, o.mesh,
                               sizeof(o.mesh), nullptr));
  PetscCall(PetscOptionsInt("-fem_refine", "FEM: uniform refinements of the mesh", nullptr, o.fem_refine, &o.fem_refine,
                            nullptr));
  PetscCall(PetscOptionsInt("-fem_box", "FEM on a structured box of m x m x m unit cubes (0: none)", nullptr, o.fem_box,
                            &o.fem_box, nullptr));
  PetscCall(PetscOptionsInt("-fem_box_per_rank", "FEM box for weak scaling: m x m x (m * ranks) cubes (replaces -fem_box)",
                            nullptr, o.fem_box_per_rank, &o.fem_box_per_rank, nullptr));
  PetscCall(PetscOptionsBool("-fem_p1", "FEM: P1 elements (default P2)", nullptr, o.fem_p1, &o.fem_p1, nullptr));
  PetscCall(PetscOptionsString("-diag_format", "kspmv format(s) of the diagonal blocks, comma-separated: each is timed", nullptr, o.diag_format,
                               o.diag_format, sizeof(o.diag_format), nullptr));
  PetscCall(PetscOptionsString("-offdiag_format", "kspmv format of the off-diagonal blocks", nullptr, o.offdiag_format,
                               o.offdiag_format, sizeof(o.offdiag_format), nullptr));
  PetscCall(PetscOptionsBool("-scattered", "random global numbering (each rank's rows from all over the matrix)", nullptr,
                             o.scattered, &o.scattered, nullptr));
  PetscCall(PetscOptionsInt("-mults", "MatMults timed per matrix", nullptr, o.mults, &o.mults, nullptr));
  PetscCall(PetscOptionsReal("-rtol", "KSP relative tolerance", nullptr, o.rtol, &o.rtol, nullptr));
  PetscCall(PetscStrncpy(o.input, kDefaultInput, sizeof(o.input)));
  PetscCall(PetscOptionsString("-kspmv_input", "AIJ type the kspmv matrix is made from, and whose vectors it takes (aij, aijkokkos, aijcusparse)",
                               nullptr, o.input, o.input, sizeof(o.input), nullptr));
  PetscCall(PetscOptionsString("-compare_types", "PETSc AIJ types whose MatMult is timed beside (comma-separated: aij,aijkokkos,aijcusparse)",
                               nullptr, o.compare, o.compare, sizeof(o.compare), nullptr));
  PetscCall(PetscOptionsBool("-solves", "run the KSP solves (CG, GMRES)", nullptr, o.solves, &o.solves, nullptr));
  PetscCall(PetscOptionsString("-matrices", "generated matrices, comma-separated kspmv specs (lap3d27:100,powerlaw:2000000:15,...)",
                               nullptr, o.matrices, o.matrices, sizeof(o.matrices), nullptr));
  PetscCall(PetscOptionsString("-csv", "append a row per timed matrix to this CSV file", nullptr, o.csv, o.csv, sizeof(o.csv),
                               nullptr));
  PetscCall(PetscOptionsBool("-diagonal_first_too",
                             "also time each kspmv matrix with PETSc's scatter and its diagonal block before the exchange",
                             nullptr, o.diagonal_first_too, &o.diagonal_first_too, nullptr));
  PetscCall(PetscOptionsString("-exchanges_too",
                               "also time each kspmv matrix with these halo exchanges (scatter,direct,direct_gpu_aware,direct_peer,direct_staged), "
                               "their products checked against the default's",
                               nullptr, o.exchanges_too, o.exchanges_too, sizeof(o.exchanges_too), nullptr));
  PetscOptionsEnd();
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "petsc_ksp: %d MPI ranks; kspmv diagonal blocks %s, off-diagonal blocks %s, input %s\n",
                        size, o.diag_format, o.offdiag_format, o.input));

  Mat A;
  if (o.n_per_rank > 0) {
    const PetscInt m = o.n_per_rank, nz = m * size;
    PetscCall(laplacian3d(m, m, nz, o.scattered, &A));
    PetscCall(run(o, A,
                  "lap3d " + std::to_string(m) + "x" + std::to_string(m) + "x" + std::to_string(nz) + " (" +
                      std::to_string(m) + "^3 rows a rank)",
                  &ok));
    PetscCall(MatDestroy(&A));
  } else if (o.n > 0) {
    PetscCall(laplacian3d(o.n, o.n, o.n, o.scattered, &A));
    PetscCall(run(o, A, "lap3d " + std::to_string(o.n) + "^3", &ok));
    PetscCall(MatDestroy(&A));
  }
  if (o.fem_box_per_rank > 0 || o.fem_box > 0) {
    PetscCheck(!o.scattered, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
               "-scattered applies to -n, -mesh and -matrices, not to the FEM box (each rank assembles its own slab)");
    const PetscInt m = o.fem_box_per_rank > 0 ? o.fem_box_per_rank : o.fem_box;
    const PetscInt mz = o.fem_box_per_rank > 0 ? m * size : m;
    PetscCall(fem_box(m, mz, o.fem_p1, &A));
    std::string name = std::string("fem box ") + (o.fem_p1 ? "P1 " : "P2 ") + std::to_string(m) + "x" + std::to_string(m) +
                       "x" + std::to_string(mz) + " cubes";
    if (o.fem_box_per_rank > 0) name += " (" + std::to_string(m) + "^3 cubes a rank)";
    PetscCall(run(o, A, name, &ok));
    PetscCall(MatDestroy(&A));
  }
  if (o.mesh[0]) {
    std::string name;
    PetscCall(fem(o, &A, &name));
    PetscCall(run(o, A, name, &ok));
    PetscCall(MatDestroy(&A));
  }
  // Generated matrices (kspmv's generator specs, as kspmv_perf's suites
  // name them): products and times only, no solves (not all are SPD).
  for (const std::string& spec : split_list(o.matrices)) {
    kspmv::HostCsr<double> a;
    try {
      a = kspmv::generate<double>(spec);
    } catch (const std::exception& e) {
      SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-matrices %s: %s", spec.c_str(), e.what());
    }
    PetscCall(from_host(o, std::move(a), &A));
    Options no_solves = o;
    no_solves.solves = PETSC_FALSE;
    PetscCall(run(no_solves, A, spec, &ok));
    PetscCall(MatDestroy(&A));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n%s\n", ok ? "check: ok" : "check: FAILED"));
  PetscCall(PetscFinalize());
  return ok ? 0 : 1;
}

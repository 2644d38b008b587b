// Helpers of the PETSc adapter's tests (run under mpiexec -n 1, 2, 4).
//
// Every rank builds the same global matrix (HostCsr) and inserts its own
// rows into a PETSc AIJ matrix; results are gathered to every rank and
// checked there against kspmv's host reference, so each rank reaches the
// same verdict and takes the same path through the collective calls.
#pragma once

#include <petscksp.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "kspmv/core/host_matrix.hpp"
#include "kspmv/core/permutation.hpp"
#include "kspmv/core/random.hpp"
#include "kspmv/core/reference.hpp"
#include "kspmv/petsc/mat.hpp"

namespace kspmv_petsc_test {

inline MPI_Comm comm() { return PETSC_COMM_WORLD; }
inline int rank() {
  int r = 0;
  MPI_Comm_rank(comm(), &r);
  return r;
}
inline int nranks() {
  int s = 1;
  MPI_Comm_size(comm(), &s);
  return s;
}

// A PETSc call inside a test: a failure fails the test (and returns from it).
#define KSPMV_PCALL(call)                                       \
  do {                                                          \
    const PetscErrorCode kspmv_ierr_ = (call);                  \
    ASSERT_EQ(kspmv_ierr_, 0) << #call << " returned an error"; \
  } while (0)

// While alive, PETSc errors are returned without a traceback on stderr
// (the tests that provoke errors).
struct QuietErrors {
  QuietErrors() { PetscPushErrorHandler(PetscReturnErrorHandler, nullptr); }
  ~QuietErrors() { PetscPopErrorHandler(); }
};

// The message of the last PETSc error raised on this rank.
inline std::string last_error_message(PetscErrorCode code) {
  const char* text = nullptr;
  char* specific = nullptr;
  PetscErrorMessage(code, &text, &specific);
  return std::string(text ? text : "") + ": " + (specific ? specific : "");
}

// Rows split as PETSc would (PETSC_DECIDE): this rank's count and first row.
inline void split_rows(PetscInt global, PetscInt* local, PetscInt* first) {
  PetscInt n = PETSC_DECIDE, N = global;
  PetscSplitOwnership(comm(), &n, &N);
  PetscInt end = 0;
  MPI_Scan(&n, &end, 1, MPIU_INT, MPI_SUM, comm());
  *local = n;
  *first = end - n;
}

// The AIJ matrix of `a`, each rank inserting its rows (PETSC_DECIDE
// layout; MATSEQAIJ on one rank unless `type` asks for another AIJ type).
inline PetscErrorCode make_aij(const kspmv::HostCsr<double>& a, Mat* out, MatType type = nullptr,
                               bool assemble = true) {
  PetscInt m, rstart, n, cstart;
  PetscFunctionBeginUser;
  split_rows(a.nrows, &m, &rstart);
  split_rows(a.ncols, &n, &cstart);
  std::vector<PetscInt> dnnz(static_cast<std::size_t>(m)), onnz(static_cast<std::size_t>(m));
  for (PetscInt i = 0; i < m; ++i)
    for (auto k = a.row_ptr[rstart + i]; k < a.row_ptr[rstart + i + 1]; ++k)
      ++(a.col_idx[k] >= cstart && a.col_idx[k] < cstart + n ? dnnz : onnz)[i];
  Mat A;
  PetscCall(MatCreate(comm(), &A));
  PetscCall(MatSetSizes(A, m, n, a.nrows, a.ncols));
  PetscCall(MatSetType(A, type ? type : MATAIJ));
  PetscCall(MatSeqAIJSetPreallocation(A, 0, dnnz.data()));
  PetscCall(MatMPIAIJSetPreallocation(A, 0, dnnz.data(), 0, onnz.data()));
  std::vector<PetscInt> cols;
  for (PetscInt i = 0; i < m; ++i) {
    const PetscInt g = rstart + i;
    const auto b = a.row_ptr[g], e = a.row_ptr[g + 1];
    cols.assign(a.col_idx.begin() + b, a.col_idx.begin() + e);
    PetscCall(MatSetValues(A, 1, &g, static_cast<PetscInt>(e - b), cols.data(), a.values.data() + b, INSERT_VALUES));
  }
  if (assemble) {
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  }
  *out = A;
  PetscFunctionReturn(0);
}

// Sets this rank's part of v from the global vector g.
inline PetscErrorCode set_from_global(Vec v, const std::vector<double>& g) {
  PetscInt lo, hi;
  PetscScalar* a;
  PetscFunctionBeginUser;
  PetscCall(VecGetOwnershipRange(v, &lo, &hi));
  PetscCall(VecGetArray(v, &a));
  for (PetscInt i = lo; i < hi; ++i) a[i - lo] = g[static_cast<std::size_t>(i)];
  PetscCall(VecRestoreArray(v, &a));
  PetscFunctionReturn(0);
}

// The whole of v on every rank.
inline PetscErrorCode gather(Vec v, std::vector<double>* out) {
  VecScatter ctx;
  Vec all;
  const PetscScalar* a;
  PetscInt n;
  PetscFunctionBeginUser;
  PetscCall(VecScatterCreateToAll(v, &ctx, &all));
  PetscCall(VecScatterBegin(ctx, v, all, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(ctx, v, all, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecGetSize(all, &n));
  PetscCall(VecGetArrayRead(all, &a));
  out->assign(a, a + n);
  PetscCall(VecRestoreArrayRead(all, &a));
  PetscCall(VecDestroy(&all));
  PetscCall(VecScatterDestroy(&ctx));
  PetscFunctionReturn(0);
}

inline std::vector<double> random_vector(std::size_t n, std::uint64_t seed) {
  kspmv::Rng rng(seed);
  std::vector<double> v(n);
  for (auto& x : v) x = 2 * rng.uniform() - 1;
  return v;
}

// A random numbering (the same on every rank): row i of the permuted
// matrix is row new_to_old[i] of the original, so each rank's contiguous
// block of rows comes from all over the original matrix.
inline std::vector<kspmv::ordinal_t> random_permutation(kspmv::ordinal_t n, std::uint64_t seed) {
  std::vector<kspmv::ordinal_t> p(static_cast<std::size_t>(n));
  std::iota(p.begin(), p.end(), 0);
  kspmv::Rng rng(seed);
  for (std::size_t i = p.size(); i > 1; --i) std::swap(p[i - 1], p[rng.below(i)]);
  return p;
}

}  // namespace kspmv_petsc_test

// The PETSc adapter (kspmv::petsc): the kspmv matrix's MatMult, MatMultAdd
// and MatGetDiagonal against the AIJ matrix's and the host reference for
// every format, on generated and real matrices, in contiguous and in
// scattered (randomly renumbered) row ownership; CG iterations against
// AIJ's; refresh; bad input.
#include <petscksp.h>

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "../test_support.hpp"
#include "kspmv/inputs/fem.hpp"
#include "kspmv/inputs/generators.hpp"
#include "kspmv/inputs/matrix_market.hpp"
#include "petsc_test_support.hpp"

namespace {

using namespace kspmv_petsc_test;
using kspmv::Format;
using kspmv::HostCsr;

struct NamedMatrix {
  std::string name;
  HostCsr<double> a;
  bool spd = false;
};

// Adds `shift` to every diagonal entry (all present in these matrices).
void shift_diagonal(HostCsr<double>& a, double shift) {
  for (kspmv::ordinal_t i = 0; i < a.nrows; ++i)
    for (auto k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      if (a.col_idx[k] == i) a.values[k] += shift;
}

// The FEM stiffness matrix (P2 on the tests' coarse gmsh mesh), shifted to
// be positive definite (it is singular: no boundary conditions).
HostCsr<double> fem_matrix() {
  auto a = kspmv::fem_matrix<double>("fem:" + kspmv_test::data_dir() + "/cube_sphere_hole_coarse.msh:p2");
  double dmax = 0;
  for (kspmv::ordinal_t i = 0; i < a.nrows; ++i)
    for (auto k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      if (a.col_idx[k] == i) dmax = std::max(dmax, std::abs(a.values[k]));
  shift_diagonal(a, 1e-2 * dmax);
  return a;
}

// Generated: a 3D Laplacian, the FEM matrix, random rows; real: two of the
// shared matrices (when ../shared/matrices or $KSPMV_SHARED_MATRICES is there).
const std::vector<NamedMatrix>& matrices() {
  static const std::vector<NamedMatrix> m = [] {
    std::vector<NamedMatrix> v;
    v.push_back({"lap3d:10", kspmv::generate<double>("lap3d:10"), true});
    v.push_back({"fem-p2", fem_matrix(), true});
    v.push_back({"uniform:1200:1:24", kspmv::generate<double>("uniform:1200:1:24:seed=5"), false});
    const std::string d = kspmv_test::shared_matrices_dir();
    if (!d.empty()) {
      v.push_back({"bcsstk13", kspmv::read_matrix_market<double>(d + "/bcsstk13.mtx.gz"), false});
      v.push_back({"dw2048", kspmv::read_matrix_market<double>(d + "/dw2048.mtx.gz"), false});
    }
    return v;
  }();
  return m;
}

enum class Ownership { Contiguous, Scattered };
const char* ownership_name(Ownership o) { return o == Ownership::Contiguous ? "contiguous" : "scattered"; }

HostCsr<double> numbered(const HostCsr<double>& a, Ownership o) {
  if (o == Ownership::Contiguous) return a;
  return kspmv::permute_symmetric(a, random_permutation(a.nrows, 1234));
}

// The formats the off-diagonal block takes, cycled through by the tests.
const std::vector<Format>& offdiag_formats() {
  static const std::vector<Format> f = {Format::Csr,   Format::CsrScalar, Format::CsrVector, Format::CsrAdaptive,
                                        Format::KkCrs, Format::Coo,       Format::Auto};
  return f;
}

// Options as kspmv's own format tests use: DIA and ELL take up to 64x
// padding, so they hold most blocks (they refuse the rest with PETSC_ERR_SUP).
kspmv::ConvertOptions options() {
  kspmv::ConvertOptions o;
  o.max_fill = kspmv_test::kTestMaxFill;
  return o;
}

bool may_refuse(Format f) { return f == Format::Dia || f == Format::Ell || f == Format::Ellr; }

// MatCreateKspmv, with the formats that may refuse a block for padding
// allowed to: *refused is set then (on every rank alike) and *K stays null.
::testing::AssertionResult create(Mat A, Format d, Format o, Mat* K, bool* refused,
                                  const kspmv::ConvertOptions& opt = options()) {
  *K = nullptr;
  *refused = false;
  PetscErrorCode ierr;
  {
    QuietErrors quiet;
    ierr = kspmv::petsc::MatCreateKspmv(A, d, o, opt, K);
  }
  if (ierr == 0) return ::testing::AssertionSuccess();
  const std::string msg = last_error_message(ierr);
  if (ierr == PETSC_ERR_SUP && may_refuse(d) && *K == nullptr) {
    *refused = true;
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "MatCreateKspmv(" << kspmv::format_name(d) << ", " << kspmv::format_name(o)
                                       << ") failed (" << ierr << "): " << msg;
}

// y = M x (and y1 = y0 + M x by MatMultAdd) checked against the reference
// for the global matrix `a`; the diagonal compared with the AIJ matrix's.
::testing::AssertionResult check_products(const HostCsr<double>& a, Mat M, Mat aij, std::uint64_t seed) {
  Vec x, y, y0, y1, d, daij;
  std::vector<double> gy, gy1, gd, gdaij;
  const auto gx = random_vector(static_cast<std::size_t>(a.ncols), seed);
  const auto gy0 = random_vector(static_cast<std::size_t>(a.nrows), seed + 1);
  if (MatCreateVecs(M, &x, &y) || VecDuplicate(y, &y0) || VecDuplicate(y, &y1) || VecDuplicate(y, &d) ||
      VecDuplicate(y, &daij) || set_from_global(x, gx) || set_from_global(y0, gy0) || VecSet(y, NAN) ||
      MatMult(M, x, y) || MatMultAdd(M, x, y0, y1) || gather(y, &gy) || gather(y1, &gy1) || MatGetDiagonal(M, d) ||
      MatGetDiagonal(aij, daij) || gather(d, &gd) || gather(daij, &gdaij) || VecDestroy(&x) || VecDestroy(&y) ||
      VecDestroy(&y0) || VecDestroy(&y1) || VecDestroy(&d) || VecDestroy(&daij))
    return ::testing::AssertionFailure() << "a PETSc call failed";
  const auto c = kspmv::check_spmv(a, 1.0, gx, 0.0, gy0, gy);
  if (!c.ok) return ::testing::AssertionFailure() << "MatMult: " << c.message;
  const auto c1 = kspmv::check_spmv(a, 1.0, gx, 1.0, gy0, gy1);
  if (!c1.ok) return ::testing::AssertionFailure() << "MatMultAdd: " << c1.message;
  if (gd != gdaij) return ::testing::AssertionFailure() << "MatGetDiagonal differs from the AIJ matrix's";
  // y = M^T x, x in the layout of M's rows.
  Vec xt, yt;
  std::vector<double> gyt;
  const auto gxt = random_vector(static_cast<std::size_t>(a.nrows), seed + 2);
  if (MatCreateVecs(M, &yt, &xt) || set_from_global(xt, gxt) || VecSet(yt, NAN) || MatMultTranspose(M, xt, yt) ||
      gather(yt, &gyt) || VecDestroy(&xt) || VecDestroy(&yt))
    return ::testing::AssertionFailure() << "a PETSc call of MatMultTranspose failed";
  const auto ct = kspmv::check_spmv(kspmv::transpose(a), 1.0, gxt, 0.0,
                                    std::vector<double>(static_cast<std::size_t>(a.ncols), 0.0), gyt);
  if (!ct.ok) return ::testing::AssertionFailure() << "MatMultTranspose: " << ct.message;
  return ::testing::AssertionSuccess();
}

std::string case_name(const NamedMatrix& m, Ownership o, Format d, Format off) {
  return m.name + " (" + ownership_name(o) + ", " + std::to_string(nranks()) + " ranks), diagonal " +
         kspmv::format_name(d) + ", off-diagonal " + kspmv::format_name(off);
}

// ---- MatMult against the reference and the AIJ matrix, every format ----

TEST(PetscMat, MultEveryFormatMatchesReference) {
  int n = 0, refused_count = 0;
  std::string refusals;
  for (const auto& m : matrices()) {
    for (Ownership o : {Ownership::Contiguous, Ownership::Scattered}) {
      const auto a = numbered(m.a, o);
      Mat A;
      KSPMV_PCALL(make_aij(a, &A));
      // The AIJ matrix itself passes the same check.
      EXPECT_TRUE(check_products(a, A, A, 11)) << m.name << " AIJ";
      for (const auto& desc : kspmv::known_formats()) {
        const Format off = offdiag_formats()[static_cast<std::size_t>(n++) % offdiag_formats().size()];
        Mat K;
        bool refused;
        ASSERT_TRUE(create(A, desc.format, off, &K, &refused)) << case_name(m, o, desc.format, off);
        if (refused) {
          ++refused_count;
          refusals += std::string(refusals.empty() ? "" : ", ") + kspmv::format_name(desc.format) + " on " + m.name +
                      " (" + ownership_name(o) + ")";
          continue;
        }
        EXPECT_TRUE(check_products(a, K, A, 11)) << case_name(m, o, desc.format, off);
        KSPMV_PCALL(MatDestroy(&K));
      }
      KSPMV_PCALL(MatDestroy(&A));
    }
  }
  if (rank() == 0) {
    std::printf("  %d (matrix, ordering, format) cases; %d refused for padding past max_fill %g: %s\n", n, refused_count,
                kspmv_test::kTestMaxFill, refusals.c_str());
    if (kspmv_test::shared_matrices_dir().empty())
      std::printf("  the shared real matrices were not found (set KSPMV_SHARED_MATRICES): bcsstk13 and dw2048 skipped\n");
  }
}

TEST(PetscMat, OffDiagonalFormatsOnScatteredRandomRows) {
  // Every off-diagonal format on the most irregular ghost pattern.
  const auto a = numbered(matrices()[2].a, Ownership::Scattered);
  Mat A;
  KSPMV_PCALL(make_aij(a, &A));
  for (Format off : offdiag_formats()) {
    Mat K;
    bool refused;
    ASSERT_TRUE(create(A, Format::Csr, off, &K, &refused));
    EXPECT_TRUE(check_products(a, K, A, 5)) << kspmv::format_name(off);
    KSPMV_PCALL(MatDestroy(&K));
  }
  KSPMV_PCALL(MatDestroy(&A));
}

// The off-diagonal block's auto: COO where few rows hold ghost columns (a
// CSR kernel would visit every row of the rank), CSR where most do.
TEST(PetscMat, OffDiagonalAutoFollowsTheGhostRows) {
  for (Ownership own : {Ownership::Contiguous, Ownership::Scattered}) {
    const auto a = numbered(kspmv::generate<double>("lap3d:12"), own);
    Mat A, K;
    KSPMV_PCALL(make_aij(a, &A, MATMPIAIJ));
    KSPMV_PCALL(kspmv::petsc::MatCreateKspmv(A, Format::Auto, Format::Auto, options(), &K));
    Format d, o;
    KSPMV_PCALL(kspmv::petsc::MatKspmvGetFormats(K, &d, &o));
    // With more than one rank: contiguous blocks of a 12^3 grid have ghost
    // columns in the rows of one or two planes of 144 (of 864 or more); in a
    // random numbering nearly every row has them.
    if (nranks() > 1) EXPECT_EQ(o, own == Ownership::Contiguous ? Format::Coo : Format::Csr) << ownership_name(own);
    EXPECT_TRUE(check_products(a, K, A, 21)) << ownership_name(own);
    KSPMV_PCALL(MatDestroy(&K));
    KSPMV_PCALL(MatDestroy(&A));
  }
}

TEST(PetscMat, DefaultsAndMpiAijOnOneRank) {
  // MatCreateKspmv(A, &K): auto for both blocks. And a MATMPIAIJ even on
  // one rank (no ghost columns there: an empty off-diagonal block, which
  // reports the format auto's rule gives a block with no entries).
  const auto& a = matrices()[0].a;
  Mat A, K;
  KSPMV_PCALL(make_aij(a, &A, MATMPIAIJ));
  KSPMV_PCALL(kspmv::petsc::MatCreateKspmv(A, &K));
  PetscBool is = PETSC_FALSE;
  KSPMV_PCALL(kspmv::petsc::MatIsKspmv(K, &is));
  EXPECT_TRUE(is);
  KSPMV_PCALL(kspmv::petsc::MatIsKspmv(A, &is));
  EXPECT_FALSE(is);
  Format d, o;
  KSPMV_PCALL(kspmv::petsc::MatKspmvGetFormats(K, &d, &o));
  EXPECT_NE(d, Format::Auto);  // the model's pick
  EXPECT_EQ(o, Format::Coo);
  EXPECT_TRUE(check_products(a, K, A, 3));
  kspmv::petsc::MultTimings t;
  KSPMV_PCALL(kspmv::petsc::MatKspmvGetTimings(K, &t));
  EXPECT_EQ(t.mults, 2);  // MatMult and MatMultAdd
  EXPECT_GT(t.total, 0);
  EXPECT_GE(t.total, t.diagonal + t.offdiagonal);
  KSPMV_PCALL(kspmv::petsc::MatKspmvResetTimings(K));
  KSPMV_PCALL(kspmv::petsc::MatKspmvGetTimings(K, &t));
  EXPECT_EQ(t.mults, 0);
  KSPMV_PCALL(MatView(K, PETSC_VIEWER_STDOUT_WORLD));
  KSPMV_PCALL(MatDestroy(&K));
  KSPMV_PCALL(MatDestroy(&A));
}

// PETSc's device AIJ types (built with Kokkos or CUDA): the kspmv matrix
// made from one takes its vectors (VECKOKKOS, VECCUDA), read and written
// in place on the device where kspmv runs there, the ghost values
// gathered into a device vector by PETSc's scatter.
std::vector<MatType> device_aij_types() {
  std::vector<MatType> t;
#if defined(PETSC_HAVE_KOKKOS)
  t.push_back(MATAIJKOKKOS);
#endif
#if defined(PETSC_HAVE_CUDA)
  t.push_back(MATAIJCUSPARSE);
#endif
  return t;
}

TEST(PetscMat, DeviceAijTypesAndTheirVectors) {
  const auto types = device_aij_types();
  if (types.empty()) GTEST_SKIP() << "PETSc has neither Kokkos nor CUDA";
  for (MatType type : types) {
    for (std::size_t i = 0; i < 3 && i < matrices().size(); ++i) {
      for (Ownership o : {Ownership::Contiguous, Ownership::Scattered}) {
        const auto& m = matrices()[i];
        const auto a = numbered(m.a, o);
        Mat A, K;
        bool refused;
        KSPMV_PCALL(make_aij(a, &A, type));
        ASSERT_TRUE(create(A, Format::Csr, Format::Csr, &K, &refused)) << type << " " << m.name;
        Vec x;
        VecType kt = nullptr, at = nullptr;
        KSPMV_PCALL(MatCreateVecs(K, &x, nullptr));
        KSPMV_PCALL(VecGetType(x, &kt));
        KSPMV_PCALL(MatGetVecType(A, &at));
        PetscBool same_family = PETSC_FALSE;
        KSPMV_PCALL(PetscStrbeginswith(kt, nranks() > 1 ? "mpi" : "seq", &same_family));
        EXPECT_TRUE(same_family && std::string(kt).find(at) != std::string::npos)
            << "K's vectors are " << kt << ", the AIJ matrix's " << at;
        KSPMV_PCALL(VecDestroy(&x));
        EXPECT_TRUE(check_products(a, K, A, 13)) << type << " " << m.name << " (" << ownership_name(o) << ")";
        KSPMV_PCALL(MatDestroy(&K));
        KSPMV_PCALL(MatDestroy(&A));
      }
    }
  }
}

PetscInt references(PetscObject o) {
  PetscInt r = -1;
  PetscObjectGetReference(o, &r);
  return r;
}

// Calls f quietly and checks its error code and that the message names `what`.
template <class F>
::testing::AssertionResult fails_with(F&& f, PetscErrorCode expected, const std::string& what) {
  PetscErrorCode ierr;
  {
    QuietErrors quiet;
    ierr = f();
  }
  const std::string msg = ierr ? last_error_message(ierr) : std::string();
  if (ierr != expected)
    return ::testing::AssertionFailure() << "error " << ierr << " (expected " << expected << "): " << msg;
  if (msg.find(what) == std::string::npos)
    return ::testing::AssertionFailure() << "the message does not say \"" << what << "\": " << msg;
  return ::testing::AssertionSuccess();
}

// The entries (i, i) of a, 0 where absent.
std::vector<double> host_diagonal(const HostCsr<double>& a) {
  std::vector<double> d(static_cast<std::size_t>(a.nrows), 0.0);
  for (kspmv::ordinal_t i = 0; i < a.nrows; ++i)
    for (auto k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      if (a.col_idx[k] == i) d[static_cast<std::size_t>(i)] = a.values[k];
  return d;
}

TEST(PetscMat, EmptyBlocksRanksAndRectangles) {
  // Shapes where a rank's blocks are empty: an anti-diagonal matrix (on two
  // or more ranks the outer ranks' rows couple only to other ranks: no
  // diagonal block), a matrix without entries, three rows (on four ranks
  // one rank owns none), and rectangular matrices (rows and columns laid
  // out differently, so a row's diagonal entry may sit in the off-diagonal
  // block: MatGetDiagonal against the host matrix's).
  kspmv::HostCoo<double> anti(10, 10);
  for (int i = 0; i < 10; ++i) anti.add(i, 9 - i, i + 1.0);
  std::vector<NamedMatrix> shapes = {
      {"anti-diagonal:10", kspmv::to_csr(anti), false},
      {"no entries", HostCsr<double>(12, 12), false},
      {"lap1d:3", kspmv::generate<double>("lap1d:3"), true},
      {"uniform:300:1:9 x 200", kspmv::generate<double>("uniform:300:1:9:cols=200:seed=2"), false},
      {"uniform:150:1:9 x 400", kspmv::generate<double>("uniform:150:1:9:cols=400:seed=3"), false}};
  for (const auto& m : shapes) {
    Mat A;
    KSPMV_PCALL(make_aij(m.a, &A));
    const bool square = m.a.nrows == m.a.ncols;
    for (Format d : {Format::Csr, Format::Coo, Format::Pellr, Format::Ehyb}) {
      if (!square && (d == Format::Ehyb)) continue;
      Mat K;
      bool refused;
      ASSERT_TRUE(create(A, d, Format::CsrVector, &K, &refused)) << m.name;
      if (square) {
        // kspmv's own exchange (the default): ranks that only send, only
        // receive, or own no row; and PETSc's scatter.
        EXPECT_TRUE(check_products(m.a, K, A, 31)) << m.name << ", " << kspmv::format_name(d);
        KSPMV_PCALL(kspmv::petsc::MatKspmvSetExchange(K, kspmv::petsc::Exchange::Scatter));
        EXPECT_TRUE(check_products(m.a, K, A, 35)) << m.name << ", " << kspmv::format_name(d) << ", PETSc's scatter";
      } else {
        // PETSc's MatGetDiagonal wants a square MPIAIJ matrix: the
        // products against the reference, the diagonal against the host's.
        Vec x, y, dv;
        std::vector<double> gy, gd;
        const auto gx = random_vector(static_cast<std::size_t>(m.a.ncols), 32);
        KSPMV_PCALL(MatCreateVecs(K, &x, &y));
        KSPMV_PCALL(VecDuplicate(y, &dv));
        KSPMV_PCALL(set_from_global(x, gx));
        for (auto e : {kspmv::petsc::Exchange::Scatter, kspmv::petsc::Exchange::Direct}) {
          KSPMV_PCALL(kspmv::petsc::MatKspmvSetExchange(K, e));
          KSPMV_PCALL(MatMult(K, x, y));
          KSPMV_PCALL(gather(y, &gy));
          const auto c = kspmv::check_spmv(m.a, 1.0, gx, 0.0, gy, gy);
          EXPECT_TRUE(c.ok) << m.name << ", " << kspmv::format_name(d) << ", exchange " << static_cast<int>(e) << ": "
                            << c.message;
        }
        KSPMV_PCALL(MatGetDiagonal(K, dv));
        KSPMV_PCALL(gather(dv, &gd));
        EXPECT_EQ(gd, host_diagonal(m.a)) << m.name;
        KSPMV_PCALL(VecDestroy(&x));
        KSPMV_PCALL(VecDestroy(&y));
        KSPMV_PCALL(VecDestroy(&dv));
      }
      KSPMV_PCALL(MatDestroy(&K));
    }
    // A rectangular diagonal block: the square-only formats refuse it (on
    // every rank), naming the format.
    if (!square) {
      Mat K = nullptr;
      EXPECT_TRUE(fails_with([&] { return kspmv::petsc::MatCreateKspmv(A, Format::Pkt, Format::Csr, options(), &K); },
                             PETSC_ERR_SUP, "pkt"));
      EXPECT_EQ(K, nullptr);
    }
    KSPMV_PCALL(MatDestroy(&A));
  }
}

// ---- KSP: CG + Jacobi takes as many iterations as with the AIJ matrix ----

PetscErrorCode cg_iterations(Mat M, Vec b, PetscInt* its, KSPConvergedReason* reason) {
  KSP ksp;
  PC pc;
  Vec x;
  PetscFunctionBeginUser;
  PetscCall(KSPCreate(comm(), &ksp));
  PetscCall(KSPSetOperators(ksp, M, M));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  PetscCall(KSPSetTolerances(ksp, 1e-8, PETSC_DEFAULT, PETSC_DEFAULT, 2000));
  PetscCall(VecDuplicate(b, &x));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetIterationNumber(ksp, its));
  PetscCall(KSPGetConvergedReason(ksp, reason));
  PetscCall(VecDestroy(&x));
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(0);
}

TEST(PetscKsp, CgJacobiIterationsMatchAij) {
  for (const auto& m : matrices()) {
    if (!m.spd) continue;
    for (Ownership o : {Ownership::Contiguous, Ownership::Scattered}) {
      const auto a = numbered(m.a, o);
      Mat A;
      Vec b;
      KSPMV_PCALL(make_aij(a, &A));
      KSPMV_PCALL(MatCreateVecs(A, nullptr, &b));
      KSPMV_PCALL(set_from_global(b, random_vector(static_cast<std::size_t>(a.nrows), 99)));
      PetscInt its_aij;
      KSPConvergedReason r_aij;
      KSPMV_PCALL(cg_iterations(A, b, &its_aij, &r_aij));
      ASSERT_GT(r_aij, 0) << m.name << ": CG with the AIJ matrix did not converge";
      for (const auto& desc : kspmv::known_formats()) {
        Mat K;
        bool refused;
        ASSERT_TRUE(create(A, desc.format, Format::Csr, &K, &refused));
        if (refused) continue;
        PetscInt its;
        KSPConvergedReason r;
        KSPMV_PCALL(cg_iterations(K, b, &its, &r));
        EXPECT_GT(r, 0) << case_name(m, o, desc.format, Format::Csr);
        EXPECT_LE(std::abs(its - its_aij), 1)
            << case_name(m, o, desc.format, Format::Csr) << ": " << its << " CG iterations, AIJ " << its_aij;
        KSPMV_PCALL(MatDestroy(&K));
      }
      if (rank() == 0) std::printf("  %s (%s): CG + Jacobi %d iterations with AIJ\n", m.name.c_str(), ownership_name(o), int(its_aij));
      KSPMV_PCALL(VecDestroy(&b));
      KSPMV_PCALL(MatDestroy(&A));
    }
  }
}

// ---- refresh: new values re-assembled into the AIJ matrix ----

// The same pattern, new values: row i scaled by 1 + (i mod 7) / 10, its
// diagonal raised by 1 (so Jacobi's diagonal changes too).
HostCsr<double> new_values(const HostCsr<double>& a) {
  auto b = a;
  for (kspmv::ordinal_t i = 0; i < b.nrows; ++i)
    for (auto k = b.row_ptr[i]; k < b.row_ptr[i + 1]; ++k) {
      b.values[k] *= 1 + (i % 7) / 10.0;
      if (b.col_idx[k] == i) b.values[k] += 1;
    }
  return b;
}

// Inserts b's values (the same pattern) into the assembled A and assembles.
PetscErrorCode reassemble(Mat A, const HostCsr<double>& b) {
  PetscInt lo, hi;
  std::vector<PetscInt> cols;
  PetscFunctionBeginUser;
  PetscCall(MatGetOwnershipRange(A, &lo, &hi));
  for (PetscInt g = lo; g < hi; ++g) {
    const auto s = b.row_ptr[g], e = b.row_ptr[g + 1];
    cols.assign(b.col_idx.begin() + s, b.col_idx.begin() + e);
    PetscCall(MatSetValues(A, 1, &g, static_cast<PetscInt>(e - s), cols.data(), b.values.data() + s, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

TEST(PetscMat, RefreshEveryFormat) {
  for (std::size_t mi : {std::size_t(1), std::size_t(2)}) {  // fem-p2, random rows
    const auto a = numbered(matrices()[mi].a, Ownership::Scattered);
    const auto b = new_values(a);
    int n = 0;
    for (const auto& desc : kspmv::known_formats()) {
      const Format off = offdiag_formats()[static_cast<std::size_t>(n++) % offdiag_formats().size()];
      Mat A, K;
      bool refused;
      KSPMV_PCALL(make_aij(a, &A));
      ASSERT_TRUE(create(A, desc.format, off, &K, &refused));
      if (!refused) {
        EXPECT_TRUE(check_products(a, K, A, 21)) << case_name(matrices()[mi], Ownership::Scattered, desc.format, off);
        KSPMV_PCALL(reassemble(A, b));
        KSPMV_PCALL(kspmv::petsc::MatKspmvRefresh(K));
        EXPECT_TRUE(check_products(b, K, A, 22))
            << "after refresh: " << case_name(matrices()[mi], Ownership::Scattered, desc.format, off);
        KSPMV_PCALL(MatDestroy(&K));
      }
      KSPMV_PCALL(MatDestroy(&A));
    }
  }
}

// PETSc's device matrices: built and refreshed from its device arrays
// where it keeps them there (MATAIJKOKKOS with kspmv on that device),
// from its host arrays otherwise; the same products and diagonal either way.
TEST(PetscMat, DeviceAijBuildsAndRefreshes) {
  const auto types = device_aij_types();
  if (types.empty()) GTEST_SKIP() << "PETSc has neither Kokkos nor CUDA";
  constexpr bool kspmv_on_host =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, Kokkos::DefaultExecutionSpace::memory_space>::accessible;
  for (MatType type : types) {
    for (std::size_t mi : {std::size_t(1), std::size_t(2)}) {  // fem-p2, random rows
      for (Ownership o : {Ownership::Contiguous, Ownership::Scattered}) {
        const auto a = numbered(matrices()[mi].a, o);
        const auto b = new_values(a);
        for (Format f : {Format::Auto, Format::Ell}) {
          const std::string what = std::string(type) + " " + case_name(matrices()[mi], o, f, Format::Csr);
          Mat A, K;
          bool refused;
          KSPMV_PCALL(make_aij(a, &A, type));
          ASSERT_TRUE(create(A, f, Format::Csr, &K, &refused)) << what;
          if (!refused) {
            EXPECT_TRUE(check_products(a, K, A, 31)) << what;
            kspmv::petsc::MultTimings t;
            KSPMV_PCALL(kspmv::petsc::MatKspmvGetTimings(K, &t));
            EXPECT_EQ(t.device_input, !kspmv_on_host && std::string(type).find("kokkos") != std::string::npos) << what;
            // Fenced and timed block by block, the same products.
            KSPMV_PCALL(kspmv::petsc::MatKspmvSetBlockTimings(K, PETSC_TRUE));
            KSPMV_PCALL(kspmv::petsc::MatKspmvResetTimings(K));
            EXPECT_TRUE(check_products(a, K, A, 33)) << "block timings on: " << what;
            KSPMV_PCALL(kspmv::petsc::MatKspmvGetTimings(K, &t));
            EXPECT_GT(t.mults, 0) << what;
            if (a.nrows > 0) EXPECT_GT(t.diagonal + t.offdiagonal, 0.0) << what;
            KSPMV_PCALL(kspmv::petsc::MatKspmvSetBlockTimings(K, PETSC_FALSE));
            KSPMV_PCALL(reassemble(A, b));
            KSPMV_PCALL(kspmv::petsc::MatKspmvRefresh(K));
            EXPECT_TRUE(check_products(b, K, A, 32)) << "after refresh: " << what;
            KSPMV_PCALL(kspmv::petsc::MatKspmvGetTimings(K, &t));
            EXPECT_GT(t.refresh, 0.0) << what;
            KSPMV_PCALL(MatDestroy(&K));
          }
          KSPMV_PCALL(MatDestroy(&A));
        }
      }
    }
  }
}

TEST(PetscKsp, RefreshReachesJacobi) {
  // A KSP set up with K, then new values refreshed into K: the next solve
  // sets Jacobi up again from the new diagonal, like AIJ's.
  const auto a = numbered(matrices()[1].a, Ownership::Scattered);
  const auto b2 = new_values(a);
  Mat A, K;
  Vec b, x;
  KSP ka, kk;
  KSPMV_PCALL(make_aij(a, &A));
  KSPMV_PCALL(kspmv::petsc::MatCreateKspmv(A, Format::Ehyb, Format::Csr, options(), &K));
  KSPMV_PCALL(MatCreateVecs(A, &x, &b));
  KSPMV_PCALL(set_from_global(b, random_vector(static_cast<std::size_t>(a.nrows), 7)));
  PetscInt its_a[2], its_k[2];
  for (auto [M, ksp] : {std::pair<Mat, KSP*>{A, &ka}, std::pair<Mat, KSP*>{K, &kk}}) {
    PC pc;
    KSPMV_PCALL(KSPCreate(comm(), ksp));
    KSPMV_PCALL(KSPSetOperators(*ksp, M, M));
    KSPMV_PCALL(KSPSetType(*ksp, KSPCG));
    KSPMV_PCALL(KSPGetPC(*ksp, &pc));
    KSPMV_PCALL(PCSetType(pc, PCJACOBI));
    KSPMV_PCALL(KSPSetTolerances(*ksp, 1e-8, PETSC_DEFAULT, PETSC_DEFAULT, 2000));
  }
  KSPMV_PCALL(KSPSolve(ka, b, x));
  KSPMV_PCALL(KSPGetIterationNumber(ka, &its_a[0]));
  KSPMV_PCALL(KSPSolve(kk, b, x));
  KSPMV_PCALL(KSPGetIterationNumber(kk, &its_k[0]));
  KSPMV_PCALL(reassemble(A, b2));
  KSPMV_PCALL(kspmv::petsc::MatKspmvRefresh(K));
  KSPMV_PCALL(KSPSolve(ka, b, x));
  KSPMV_PCALL(KSPGetIterationNumber(ka, &its_a[1]));
  KSPMV_PCALL(KSPSolve(kk, b, x));
  KSPMV_PCALL(KSPGetIterationNumber(kk, &its_k[1]));
  EXPECT_LE(std::abs(its_a[0] - its_k[0]), 1) << its_a[0] << " vs " << its_k[0];
  EXPECT_LE(std::abs(its_a[1] - its_k[1]), 1) << "after refresh: " << its_a[1] << " vs " << its_k[1];
  EXPECT_NE(its_a[0], its_a[1]) << "the new values should change the iteration count";
  KSPMV_PCALL(KSPDestroy(&ka));
  KSPMV_PCALL(KSPDestroy(&kk));
  KSPMV_PCALL(VecDestroy(&x));
  KSPMV_PCALL(VecDestroy(&b));
  KSPMV_PCALL(MatDestroy(&K));
  KSPMV_PCALL(MatDestroy(&A));
}

TEST(PetscMat, ScaleShiftAndDuplicate) {
  // MATSHELL's own MatScale and MatShift act on the kspmv matrix's
  // products and diagonal; MatDuplicate converts a matrix of its own, which
  // outlives the original.
  const auto a = numbered(matrices()[1].a, Ownership::Scattered);
  Mat A, K, K2;
  KSPMV_PCALL(make_aij(a, &A));
  KSPMV_PCALL(kspmv::petsc::MatCreateKspmv(A, Format::Pellr, Format::Coo, options(), &K));
  KSPMV_PCALL(MatDuplicate(K, MAT_COPY_VALUES, &K2));
  PetscBool is = PETSC_FALSE;
  KSPMV_PCALL(kspmv::petsc::MatIsKspmv(K2, &is));
  EXPECT_TRUE(is);
  EXPECT_TRUE(fails_with([&] { Mat M; return MatDuplicate(K, MAT_DO_NOT_COPY_VALUES, &M); }, PETSC_ERR_SUP, "MAT_COPY_VALUES"));
  KSPMV_PCALL(MatDestroy(&K));
  EXPECT_TRUE(check_products(a, K2, A, 41));
  // 2 A + 3 I, on the AIJ copy of the reference and on K2.
  auto b = a;
  for (auto& v : b.values) v *= 2;
  shift_diagonal(b, 3);
  KSPMV_PCALL(MatScale(K2, 2));
  KSPMV_PCALL(MatShift(K2, 3));
  KSPMV_PCALL(MatScale(A, 2));
  KSPMV_PCALL(MatShift(A, 3));
  EXPECT_TRUE(check_products(b, K2, A, 42));
  // A refresh takes new values for A; the scale and shift stay K2's.
  const auto c = new_values(a);
  auto d = c;
  for (auto& v : d.values) v *= 2;
  shift_diagonal(d, 3);
  Mat D;
  KSPMV_PCALL(reassemble(A, c));
  KSPMV_PCALL(kspmv::petsc::MatKspmvRefresh(K2));
  KSPMV_PCALL(make_aij(d, &D));
  EXPECT_TRUE(check_products(d, K2, D, 43));
  KSPMV_PCALL(MatDestroy(&D));
  KSPMV_PCALL(MatDestroy(&K2));
  KSPMV_PCALL(MatDestroy(&A));
}

// ---- bad input: a clear error, nothing created or changed ----

TEST(PetscErrors, NotAssembled) {
  Mat A, K = nullptr;
  KSPMV_PCALL(make_aij(matrices()[0].a, &A, nullptr, /*assemble=*/false));
  const PetscInt refs = references(reinterpret_cast<PetscObject>(A));
  EXPECT_TRUE(fails_with([&] { return kspmv::petsc::MatCreateKspmv(A, &K); }, PETSC_ERR_ARG_WRONGSTATE, "not assembled"));
  EXPECT_EQ(K, nullptr);
  EXPECT_EQ(references(reinterpret_cast<PetscObject>(A)), refs);
  KSPMV_PCALL(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  KSPMV_PCALL(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  KSPMV_PCALL(MatDestroy(&A));
}

TEST(PetscErrors, NotAij) {
  Mat D, K = nullptr, S;
  KSPMV_PCALL(MatCreateDense(comm(), PETSC_DECIDE, PETSC_DECIDE, 8, 8, nullptr, &D));
  KSPMV_PCALL(MatAssemblyBegin(D, MAT_FINAL_ASSEMBLY));
  KSPMV_PCALL(MatAssemblyEnd(D, MAT_FINAL_ASSEMBLY));
  EXPECT_TRUE(fails_with([&] { return kspmv::petsc::MatCreateKspmv(D, &K); }, PETSC_ERR_ARG_WRONG, "must be an AIJ matrix"));
  EXPECT_EQ(K, nullptr);
  // A kspmv matrix (a MATSHELL) is no AIJ matrix either.
  Mat A;
  KSPMV_PCALL(make_aij(matrices()[0].a, &A));
  KSPMV_PCALL(kspmv::petsc::MatCreateKspmv(A, Format::Csr, Format::Csr, options(), &S));
  EXPECT_TRUE(fails_with([&] { return kspmv::petsc::MatCreateKspmv(S, &K); }, PETSC_ERR_ARG_WRONG, "shell"));
  EXPECT_EQ(K, nullptr);
  // ...and refresh, timings, formats want a kspmv matrix.
  EXPECT_TRUE(fails_with([&] { return kspmv::petsc::MatKspmvRefresh(A); }, PETSC_ERR_ARG_WRONG, "not a kspmv matrix"));
  kspmv::petsc::MultTimings t;
  EXPECT_TRUE(fails_with([&] { return kspmv::petsc::MatKspmvGetTimings(D, &t); }, PETSC_ERR_ARG_WRONG, "not a kspmv matrix"));
  EXPECT_TRUE(fails_with([&] { return kspmv::petsc::MatKspmvSetBlockTimings(D, PETSC_TRUE); }, PETSC_ERR_ARG_WRONG,
                         "not a kspmv matrix"));
  KSPMV_PCALL(MatDestroy(&S));
  KSPMV_PCALL(MatDestroy(&A));
  KSPMV_PCALL(MatDestroy(&D));
}

// MatMult through PETSc's scatter with the diagonal block queued before the
// exchange gives the same products; the setting is per matrix and
// typed-checked.
TEST(PetscMat, DiagonalFirstGivesTheSameProducts) {
  for (Ownership own : {Ownership::Contiguous, Ownership::Scattered}) {
    const auto a = numbered(matrices()[1].a, own);
    Mat A, K;
    KSPMV_PCALL(make_aij(a, &A));
    KSPMV_PCALL(kspmv::petsc::MatCreateKspmv(A, Format::Pellr, Format::Auto, options(), &K));
    KSPMV_PCALL(kspmv::petsc::MatKspmvSetExchange(K, kspmv::petsc::Exchange::Scatter));
    KSPMV_PCALL(kspmv::petsc::MatKspmvSetDiagonalFirst(K, PETSC_TRUE));
    EXPECT_TRUE(check_products(a, K, A, 31)) << ownership_name(own);
    KSPMV_PCALL(kspmv::petsc::MatKspmvSetDiagonalFirst(K, PETSC_FALSE));
    EXPECT_TRUE(check_products(a, K, A, 32)) << ownership_name(own);
    // And set from the options database at creation.
    Mat K2;
    KSPMV_PCALL(PetscOptionsSetValue(nullptr, "-mat_kspmv_diagonal_first", "1"));
    KSPMV_PCALL(PetscOptionsSetValue(nullptr, "-mat_kspmv_exchange", "scatter"));
    KSPMV_PCALL(kspmv::petsc::MatCreateKspmv(A, Format::Csr, Format::Auto, options(), &K2));
    KSPMV_PCALL(PetscOptionsClearValue(nullptr, "-mat_kspmv_diagonal_first"));
    KSPMV_PCALL(PetscOptionsClearValue(nullptr, "-mat_kspmv_exchange"));
    EXPECT_TRUE(check_products(a, K2, A, 33)) << ownership_name(own);
    KSPMV_PCALL(MatDestroy(&K2));
    EXPECT_TRUE(fails_with([&] { return kspmv::petsc::MatKspmvSetDiagonalFirst(A, PETSC_TRUE); }, PETSC_ERR_ARG_WRONG,
                           "not a kspmv matrix"));
    KSPMV_PCALL(MatDestroy(&K));
    KSPMV_PCALL(MatDestroy(&A));
  }
}

// kspmv's own exchanges give PETSc's scatter's products: contiguous
// ownership (two neighbours) and scattered (ghosts from every rank), fenced
// blocks (the sends posted before the block), products in a row (the ghost
// buffer reused), switching between the exchanges (planned again), after a
// refresh, in a duplicate, and from the options database.
TEST(PetscMat, DirectExchangesGiveTheSameProducts) {
  using kspmv::petsc::Exchange;
  for (Ownership own : {Ownership::Contiguous, Ownership::Scattered}) {
    const auto a = numbered(matrices()[1].a, own);
    Mat A, K, D;
    KSPMV_PCALL(make_aij(a, &A));
    KSPMV_PCALL(kspmv::petsc::MatCreateKspmv(A, Format::Pellr, Format::Auto, options(), &K));
    Exchange e = Exchange::Scatter;
    KSPMV_PCALL(kspmv::petsc::MatKspmvGetExchange(K, &e));
    EXPECT_EQ(e, Exchange::Direct) << "the default";
    constexpr bool host_build = std::is_same<Kokkos::DefaultExecutionSpace::memory_space, Kokkos::HostSpace>::value;
    for (Exchange ex : {Exchange::Direct, Exchange::Scatter, Exchange::DirectGpuAware, Exchange::DirectStaged,
                        Exchange::DirectPeer, Exchange::Direct}) {
      Exchange before = Exchange::Scatter;
      KSPMV_PCALL(kspmv::petsc::MatKspmvGetExchange(K, &before));
      PetscErrorCode set = 0;
      {
        QuietErrors quiet;
        set = kspmv::petsc::MatKspmvSetExchange(K, ex);
      }
      if (set) {
        // A device build whose PETSc runs with -use_gpu_aware_mpi 0
        // refuses DirectGpuAware; a host build refuses DirectPeer.
        EXPECT_EQ(set, PETSC_ERR_SUP_SYS);
        EXPECT_TRUE(ex == Exchange::DirectGpuAware || (ex == Exchange::DirectPeer && host_build))
            << static_cast<int>(ex);
        KSPMV_PCALL(kspmv::petsc::MatKspmvGetExchange(K, &e));
        EXPECT_EQ(e, before) << "a refused exchange changes nothing";
        continue;
      }
      EXPECT_FALSE(ex == Exchange::DirectPeer && host_build) << "a host build has no device to map";
      if (ex == Exchange::DirectPeer) {
        // Where the ranks' GPUs cannot map each other's memory (each rank
        // sees one GPU, say) the first product fails on every rank with
        // PETSC_ERR_SUP_SYS and the next one plans again.
        Vec x, y;
        KSPMV_PCALL(MatCreateVecs(K, &x, &y));
        KSPMV_PCALL(VecSet(x, 1));
        PetscErrorCode mult = 0;
        {
          QuietErrors quiet;
          mult = MatMult(K, x, y);
        }
        KSPMV_PCALL(VecDestroy(&x));
        KSPMV_PCALL(VecDestroy(&y));
        if (mult) {
          EXPECT_EQ(mult, PETSC_ERR_SUP_SYS);
          std::printf("note: Exchange::DirectPeer cannot map the neighbours' memory here (%s): %s\n",
                      ownership_name(own), last_error_message(mult).c_str());
          continue;
        }
      }
      for (int seed = 41; seed < 43; ++seed)
        EXPECT_TRUE(check_products(a, K, A, seed)) << ownership_name(own) << ", exchange " << static_cast<int>(ex);
    }
    KSPMV_PCALL(kspmv::petsc::MatKspmvSetBlockTimings(K, PETSC_TRUE));
    EXPECT_TRUE(check_products(a, K, A, 44)) << ownership_name(own) << ", fenced blocks";
    KSPMV_PCALL(kspmv::petsc::MatKspmvSetBlockTimings(K, PETSC_FALSE));
    const auto b = new_values(a);
    KSPMV_PCALL(reassemble(A, b));
    KSPMV_PCALL(kspmv::petsc::MatKspmvRefresh(K));
    EXPECT_TRUE(check_products(b, K, A, 45)) << ownership_name(own) << ", refreshed";
    KSPMV_PCALL(kspmv::petsc::MatKspmvSetExchange(K, Exchange::Scatter));
    KSPMV_PCALL(MatDuplicate(K, MAT_COPY_VALUES, &D));
    KSPMV_PCALL(kspmv::petsc::MatKspmvGetExchange(D, &e));
    EXPECT_EQ(e, Exchange::Scatter) << "a duplicate works as K was set to";
    EXPECT_TRUE(check_products(b, D, A, 46)) << ownership_name(own) << ", duplicate";
    KSPMV_PCALL(MatDestroy(&D));
    // From the options database at creation, and a value it does not know.
    Mat K2 = nullptr;
    const struct {
      const char* name;
      Exchange exchange;
      std::uint64_t seed;
    } from_options[] = {{"scatter", Exchange::Scatter, 47}, {"direct_staged", Exchange::DirectStaged, 48}};
    for (const auto& o : from_options) {
      KSPMV_PCALL(PetscOptionsSetValue(nullptr, "-mat_kspmv_exchange", o.name));
      KSPMV_PCALL(kspmv::petsc::MatCreateKspmv(A, Format::Csr, Format::Auto, options(), &K2));
      KSPMV_PCALL(kspmv::petsc::MatKspmvGetExchange(K2, &e));
      EXPECT_EQ(e, o.exchange) << o.name;
      EXPECT_TRUE(check_products(b, K2, A, o.seed)) << ownership_name(own) << ", options database, " << o.name;
      KSPMV_PCALL(MatDestroy(&K2));
    }
    if (host_build) {
      KSPMV_PCALL(PetscOptionsSetValue(nullptr, "-mat_kspmv_exchange", "direct_peer"));
      EXPECT_TRUE(fails_with([&] { return kspmv::petsc::MatCreateKspmv(A, Format::Csr, Format::Auto, options(), &K2); },
                             PETSC_ERR_SUP_SYS, "DirectPeer"));
    }
    KSPMV_PCALL(PetscOptionsSetValue(nullptr, "-mat_kspmv_exchange", "sideways"));
    PetscErrorCode bad = 0;
    {
      QuietErrors quiet;
      bad = kspmv::petsc::MatCreateKspmv(A, Format::Csr, Format::Auto, options(), &K2);
    }
    KSPMV_PCALL(PetscOptionsClearValue(nullptr, "-mat_kspmv_exchange"));
    EXPECT_NE(bad, 0) << "-mat_kspmv_exchange sideways";
    EXPECT_TRUE(fails_with([&] { return kspmv::petsc::MatKspmvSetExchange(K, static_cast<Exchange>(7)); },
                           PETSC_ERR_ARG_OUTOFRANGE, "not an Exchange"));
    EXPECT_TRUE(fails_with([&] { return kspmv::petsc::MatKspmvSetExchange(A, Exchange::Direct); }, PETSC_ERR_ARG_WRONG,
                           "not a kspmv matrix"));
    KSPMV_PCALL(MatDestroy(&K));
    KSPMV_PCALL(MatDestroy(&A));
  }
}

TEST(PetscErrors, BadFormatsAndOptions) {
  Mat A, K = nullptr;
  KSPMV_PCALL(make_aij(matrices()[0].a, &A));
  const PetscInt refs = references(reinterpret_cast<PetscObject>(A));
  EXPECT_TRUE(fails_with([&] { return kspmv::petsc::MatCreateKspmv(A, Format::Csr, Format::Ehyb, options(), &K); },
                         PETSC_ERR_ARG_OUTOFRANGE, "off-diagonal block cannot be ehyb"));
  auto internal = options();
  internal.output_order = kspmv::OutputOrder::Internal;
  EXPECT_TRUE(fails_with([&] { return kspmv::petsc::MatCreateKspmv(A, Format::Pellr, Format::Csr, internal, &K); },
                         PETSC_ERR_ARG_WRONG, "OutputOrder::Caller"));
  EXPECT_EQ(K, nullptr);
  EXPECT_EQ(references(reinterpret_cast<PetscObject>(A)), refs);
  KSPMV_PCALL(MatDestroy(&A));
}

TEST(PetscErrors, FormatCannotHoldOnOneRankFailsEverywhere) {
  // Rows of a 1D Laplacian in the first half (DIA holds them: three
  // diagonals), random rows in the second (DIA refuses them at max_fill 3).
  // On two or more ranks only the second half's blocks are refused; every
  // rank returns the same error, naming the first rank that refused.
  const auto lap = kspmv::generate<double>("lap1d:800");
  const auto rnd = kspmv::generate<double>("uniform:800:4:12:seed=9");
  kspmv::HostCoo<double> coo(800, 800);
  for (kspmv::ordinal_t i = 0; i < 800; ++i) {
    const auto& src = i < 400 ? lap : rnd;
    for (auto k = src.row_ptr[i]; k < src.row_ptr[i + 1]; ++k) coo.add(i, src.col_idx[k], src.values[k]);
  }
  const auto a = kspmv::to_csr(coo);
  Mat A, K = nullptr;
  KSPMV_PCALL(make_aij(a, &A));
  kspmv::ConvertOptions opt;  // max_fill 3
  const PetscInt refs = references(reinterpret_cast<PetscObject>(A));
  EXPECT_TRUE(fails_with([&] { return kspmv::petsc::MatCreateKspmv(A, Format::Dia, Format::Csr, opt, &K); }, PETSC_ERR_SUP,
                         nranks() > 1 ? "on rank " + std::to_string(nranks() / 2) : std::string("dia")));
  EXPECT_EQ(K, nullptr);
  EXPECT_EQ(references(reinterpret_cast<PetscObject>(A)), refs);
  KSPMV_PCALL(MatDestroy(&A));
}

TEST(PetscErrors, VectorsOfTheWrongLayout) {
  const auto& a = matrices()[0].a;
  Mat A, K;
  KSPMV_PCALL(make_aij(a, &A));
  KSPMV_PCALL(kspmv::petsc::MatCreateKspmv(A, Format::Csr, Format::Csr, options(), &K));
  // One rank: a vector of another size; more (an even count): the same
  // size split differently, every rank's part one entry off (even ranks
  // one more, odd ranks one fewer).
  PetscInt n, N = a.nrows;
  KSPMV_PCALL(MatGetLocalSize(A, &n, nullptr));
  ASSERT_EQ(nranks() % 2 == 0 || nranks() == 1, true) << "run on 1 or an even number of ranks";
  if (nranks() == 1)
    ++N, ++n;
  else
    n += rank() % 2 == 0 ? 1 : -1;
  Vec good, bad, y;
  KSPMV_PCALL(MatCreateVecs(A, &good, &y));
  KSPMV_PCALL(VecCreateMPI(comm(), n, N, &bad));
  KSPMV_PCALL(VecSet(bad, 1));
  KSPMV_PCALL(VecSet(good, 1));
  KSPMV_PCALL(VecSet(y, 42));
  EXPECT_TRUE(fails_with([&] { return MatMult(K, bad, y); }, PETSC_ERR_ARG_SIZ, "Vec x"));
  EXPECT_TRUE(fails_with([&] { return MatMult(K, good, bad); }, PETSC_ERR_ARG_SIZ, "Vec y"));
    // (PETSc's MatMultAdd checks only the global size of x: the kspmv
  // matrix checks the local one.)
  EXPECT_TRUE(fails_with([&] { return MatMultAdd(K, bad, y, y); }, PETSC_ERR_ARG_SIZ, "Vec"));
  EXPECT_TRUE(fails_with([&] { return MatGetDiagonal(K, bad); }, PETSC_ERR_ARG_SIZ, "Vec"));
  // y untouched by the failed calls.
  PetscReal mn, mx;
  KSPMV_PCALL(VecMin(y, nullptr, &mn));
  KSPMV_PCALL(VecMax(y, nullptr, &mx));
  EXPECT_EQ(mn, 42);
  EXPECT_EQ(mx, 42);
  // The matrix still works.
  EXPECT_TRUE(check_products(a, K, A, 4));
  KSPMV_PCALL(VecDestroy(&good));
  KSPMV_PCALL(VecDestroy(&bad));
  KSPMV_PCALL(VecDestroy(&y));
  KSPMV_PCALL(MatDestroy(&K));
  KSPMV_PCALL(MatDestroy(&A));
}

TEST(PetscErrors, RefreshRefusesANewPatternAndKeepsTheOldValues) {
  const auto a = matrices()[2].a;  // random rows: entries missing in row 0
  Mat A, K;
  KSPMV_PCALL(make_aij(a, &A));
  KSPMV_PCALL(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  KSPMV_PCALL(kspmv::petsc::MatCreateKspmv(A, Format::Pellr, Format::Coo, options(), &K));
  // Unassembled (values set, no assembly): refused.
  PetscInt lo;
  KSPMV_PCALL(MatGetOwnershipRange(A, &lo, nullptr));
  const PetscScalar one = 1;
  const PetscInt c0 = a.col_idx[a.row_ptr[lo]];
  KSPMV_PCALL(MatSetValues(A, 1, &lo, 1, &c0, &one, ADD_VALUES));
  EXPECT_TRUE(fails_with([&] { return kspmv::petsc::MatKspmvRefresh(K); }, PETSC_ERR_ARG_WRONGSTATE, "not assembled"));
  KSPMV_PCALL(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  KSPMV_PCALL(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  // A new entry in the pattern: refused, K keeps its values (the old a).
  PetscInt missing = -1;
  for (kspmv::ordinal_t j = 0; j < a.ncols && missing < 0; ++j) {
    bool present = false;
    for (auto k = a.row_ptr[lo]; k < a.row_ptr[lo + 1]; ++k) present |= a.col_idx[k] == j;
    if (!present) missing = j;
  }
  ASSERT_GE(missing, 0);
  KSPMV_PCALL(MatSetValues(A, 1, &lo, 1, &missing, &one, INSERT_VALUES));
  KSPMV_PCALL(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  KSPMV_PCALL(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  EXPECT_TRUE(fails_with([&] { return kspmv::petsc::MatKspmvRefresh(K); }, PETSC_ERR_ARG_WRONGSTATE, "nonzero pattern changed"));
  Vec x, y;
  KSPMV_PCALL(MatCreateVecs(K, &x, &y));
  const auto gx = random_vector(static_cast<std::size_t>(a.ncols), 8);
  KSPMV_PCALL(set_from_global(x, gx));
  KSPMV_PCALL(MatMult(K, x, y));
  std::vector<double> gy;
  KSPMV_PCALL(gather(y, &gy));
  const auto c = kspmv::check_spmv(a, 1.0, gx, 0.0, std::vector<double>(gy.size()), gy);
  EXPECT_TRUE(c.ok) << c.message;
  KSPMV_PCALL(VecDestroy(&x));
  KSPMV_PCALL(VecDestroy(&y));
  KSPMV_PCALL(MatDestroy(&K));
  KSPMV_PCALL(MatDestroy(&A));
}

TEST(PetscErrors, RefreshWithoutValueMap) {
  Mat A, K;
  const auto& a = matrices()[0].a;
  KSPMV_PCALL(make_aij(a, &A));
  auto opt = options();
  opt.value_map = false;
  opt.transpose = kspmv::TransposeBuild::AtConversion;  // (a lazy transpose reads the values back through the map)
  KSPMV_PCALL(kspmv::petsc::MatCreateKspmv(A, Format::Ell, Format::Csr, opt, &K));
  EXPECT_TRUE(fails_with([&] { return kspmv::petsc::MatKspmvRefresh(K); }, PETSC_ERR_SUP, "value_map off"));
  EXPECT_TRUE(check_products(a, K, A, 6));
  KSPMV_PCALL(MatDestroy(&K));
  KSPMV_PCALL(MatDestroy(&A));
}

TEST(PetscErrors, MultTransposeWithoutTranspose) {
  // Blocks converted with ConvertOptions::transpose = Never keep no
  // transpose: MatMultTranspose is a clear error, MatMult still works.
  Mat A, K;
  Vec x, y;
  KSPMV_PCALL(make_aij(matrices()[2].a, &A));
  auto opt = options();
  opt.transpose = kspmv::TransposeBuild::Never;
  KSPMV_PCALL(kspmv::petsc::MatCreateKspmv(A, Format::Csr, Format::Csr, opt, &K));
  KSPMV_PCALL(MatCreateVecs(K, &x, &y));
  KSPMV_PCALL(VecSet(y, 1));
  EXPECT_TRUE(fails_with([&] { return MatMultTranspose(K, y, x); }, PETSC_ERR_SUP, "transpose"));
  // PETSc leaves an operation's input read-locked when the operation
  // fails (MatMultTranspose pushed y's lock and returned before popping
  // it), so MatMult gets vectors of its own.
  Vec x2, y2;
  KSPMV_PCALL(MatCreateVecs(K, &x2, &y2));
  KSPMV_PCALL(VecSet(x2, 1));
  KSPMV_PCALL(MatMult(K, x2, y2));
  KSPMV_PCALL(VecDestroy(&x2));
  KSPMV_PCALL(VecDestroy(&y2));
  KSPMV_PCALL(VecDestroy(&x));
  KSPMV_PCALL(VecDestroy(&y));
  KSPMV_PCALL(MatDestroy(&K));
  KSPMV_PCALL(MatDestroy(&A));
}

}  // namespace

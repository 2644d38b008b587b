// A Kokkos solver code switched to kspmv: Jacobi-preconditioned CG and
// BiCGStab on the device, inside a Newton-style outer loop that assembles
// new values into the same pattern every step.
//
// The matrix is the application's own KokkosSparse::CrsMatrix, assembled
// on the device. kspmv converts it once (Matrix::from_kokkos_kernels),
// refreshes it in place after each assembly (update_values) and applies it
// with kspmv::spmv, the call KokkosSparse::spmv users already make. The
// same solves run with Kokkos Kernels' spmv on the CrsMatrix itself and,
// on CUDA builds, cuSPARSE's CSR SpMV; the program prints iterations,
// residuals and time split into set-up, refresh and solve, and fails
// (exit 1) where the iterates of kspmv and Kokkos Kernels disagree beyond
// rounding.
//
//   kspmv_solve [SPEC] [--format F] [--steps N] [--tol T] [--maxit N] [--applies N]
//   SPEC: a kspmv generator spec (lap3d:40, fem:MESH.msh:p2, ...) or a
//   Matrix Market file; default lap3d:40. --applies: the SpMVs auto
//   weighs its set-up against (ConvertOptions::expected_applies; the
//   library's default otherwise): the SpMVs of all --steps solves, since
//   the matrix is converted once and refreshed at every step.
#include <KokkosSparse_CrsMatrix.hpp>
#include <KokkosSparse_spmv.hpp>
#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <kspmv/kspmv.hpp>

#if defined(KOKKOS_ENABLE_CUDA) && defined(KSPMV_SOLVE_CUSPARSE)
#include <cusparse.h>
#endif

namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;
using Vec = Kokkos::View<double*, Mem>;
using Crs = KokkosSparse::CrsMatrix<double, int, Kokkos::Device<Exec, Mem>, void, int>;

// ---- the application's side: its matrix, assembled on the device ----

// Step s of the outer loop: every entry scaled by 1 + 0.05 s, the diagonal
// raised by 1% more each step, from 1% at step 0 (an FEM Laplacian without
// boundary conditions is singular; raised, it is SPD, for CG); with skew > 0, entries right
// of the diagonal scaled by 1 + skew and left of it by 1 - skew (a
// convection-like nonsymmetric matrix for BiCGStab). The pattern never
// changes.
void assemble(const Crs& A, const Vec& base, int step, double skew) {
  const auto rows = A.graph.row_map;
  const auto cols = A.graph.entries;
  const auto vals = A.values;
  const double scale = 1 + 0.05 * step, lift = 1 + 0.01 * (step + 1);
  Kokkos::parallel_for(
      "solve::assemble", Kokkos::RangePolicy<Exec>(0, A.numRows()), KOKKOS_LAMBDA(const int i) {
        for (int k = rows(i); k < rows(i + 1); ++k) {
          const int j = cols(k);
          const double side = j > i ? 1 + skew : j < i ? 1 - skew : lift;
          vals(k) = base(k) * scale * side;
        }
      });
}

Vec inverse_diagonal(const Crs& A) {
  Vec d("solve::inv_diag", A.numRows());
  const auto rows = A.graph.row_map;
  const auto cols = A.graph.entries;
  const auto vals = A.values;
  Kokkos::parallel_for(
      "solve::inv_diag", Kokkos::RangePolicy<Exec>(0, A.numRows()), KOKKOS_LAMBDA(const int i) {
        double a = 0;
        for (int k = rows(i); k < rows(i + 1); ++k)
          if (cols(k) == i) a += vals(k);
        d(i) = a != 0 ? 1 / a : 1;
      });
  return d;
}

// ---- the solvers' vector work, fused ----
//
// Each kernel below does one step's vector work in one pass, with its
// dot products reduced in the same pass: the solver reads and writes each
// vector as few times as it can, so that the SpMV, the one part that
// differs between the operators, is a fair share of each iteration
// (BLAS-1 calls one at a time would move about 1.3x (CG) to 2x
// (BiCGStab) as many bytes).

// Several sums reduced in one pass (Kokkos 3.4 joins through volatile).
template <int N>
struct Sums {
  double v[N] = {};
  KOKKOS_INLINE_FUNCTION Sums& operator+=(const Sums& o) {
    for (int i = 0; i < N; ++i) v[i] += o.v[i];
    return *this;
  }
#if KOKKOS_VERSION < 40000
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile Sums& o) volatile {
    for (int i = 0; i < N; ++i) v[i] += o.v[i];
  }
#endif
};

using Range = Kokkos::RangePolicy<Exec>;

double dot(const Vec& a, const Vec& b) {
  double s = 0;
  Kokkos::parallel_reduce(
      "solve::dot", Range(0, a.extent(0)), KOKKOS_LAMBDA(const int i, double& acc) { acc += a(i) * b(i); }, s);
  return s;
}

// CG's update after q = A p: x += alpha p, r -= alpha q; returns r.r and
// r.z for z = dinv .* r (z not stored: the next direction takes it from r).
Sums<2> cg_update(double alpha, const Vec& p, const Vec& q, const Vec& dinv, const Vec& x, const Vec& r) {
  Sums<2> s;
  Kokkos::parallel_reduce(
      "solve::cg_update", Range(0, x.extent(0)),
      KOKKOS_LAMBDA(const int i, Sums<2>& acc) {
        x(i) += alpha * p(i);
        const double ri = r(i) - alpha * q(i);
        r(i) = ri;
        const double zi = dinv(i) * ri;
        acc.v[0] += ri * ri;
        acc.v[1] += ri * zi;
      },
      s);
  return s;
}

// p = dinv .* r + beta p
void cg_direction(double beta, const Vec& dinv, const Vec& r, const Vec& p) {
  Kokkos::parallel_for(
      "solve::cg_direction", Range(0, p.extent(0)), KOKKOS_LAMBDA(const int i) { p(i) = dinv(i) * r(i) + beta * p(i); });
}

// BiCGStab's direction: p = r + beta (p - omega v), ph = dinv .* p.
void bicg_direction(double beta, double omega, const Vec& r, const Vec& v, const Vec& dinv, const Vec& p, const Vec& ph) {
  Kokkos::parallel_for(
      "solve::bicg_direction", Range(0, p.extent(0)), KOKKOS_LAMBDA(const int i) {
        const double pi = r(i) + beta * (p(i) - omega * v(i));
        p(i) = pi;
        ph(i) = dinv(i) * pi;
      });
}

// s = r - alpha v, sh = dinv .* s
void bicg_half_step(double alpha, const Vec& r, const Vec& v, const Vec& dinv, const Vec& s, const Vec& sh) {
  Kokkos::parallel_for(
      "solve::bicg_half_step", Range(0, s.extent(0)), KOKKOS_LAMBDA(const int i) {
        const double si = r(i) - alpha * v(i);
        s(i) = si;
        sh(i) = dinv(i) * si;
      });
}

// x += alpha ph + omega sh, r = s - omega t; returns r.r, r0.r and r0.r0
// (the next step's residual, rho and breakdown test).
Sums<3> bicg_update(double alpha, double omega, const Vec& ph, const Vec& sh, const Vec& s, const Vec& t,
                    const Vec& r0, const Vec& x, const Vec& r) {
  Sums<3> out;
  Kokkos::parallel_reduce(
      "solve::bicg_update", Range(0, x.extent(0)),
      KOKKOS_LAMBDA(const int i, Sums<3>& acc) {
        x(i) += alpha * ph(i) + omega * sh(i);
        const double ri = s(i) - omega * t(i);
        r(i) = ri;
        acc.v[0] += ri * ri;
        acc.v[1] += r0(i) * ri;
        acc.v[2] += r0(i) * r0(i);
      },
      out);
  return out;
}

// t.t and t.s in one pass.
Sums<2> two_dots(const Vec& t, const Vec& s) {
  Sums<2> out;
  Kokkos::parallel_reduce(
      "solve::two_dots", Range(0, t.extent(0)),
      KOKKOS_LAMBDA(const int i, Sums<2>& acc) {
        acc.v[0] += t(i) * t(i);
        acc.v[1] += t(i) * s(i);
      },
      out);
  return out;
}

// ---- three operators for the same solver ----

struct KspmvOperator {
  const char* name = "kspmv";
  kspmv::Matrix<double> m;
  kspmv::SpmvHandle<double> handle;
  kspmv::Format format;
  kspmv::ConvertOptions options;
  KspmvOperator(kspmv::Format f, const kspmv::ConvertOptions& o) : format(f), options(o) {}
  void setup(const Crs& A) { m = kspmv::Matrix<double>::from_kokkos_kernels(A, format, options); }
  void refresh(const Crs& A) { m.update_values(Exec(), A.values); }
  void apply(const Vec& x, const Vec& y) { kspmv::spmv(Exec(), handle, "N", 1.0, m, x, 0.0, y); }
  std::string detail() const { return m.name(); }
};

struct KokkosKernelsOperator {
  const char* name = "kokkos-kernels";
  Crs A;
  void setup(const Crs& a) { A = a; }
  void refresh(const Crs&) {}  // it reads the application's values in place
  void apply(const Vec& x, const Vec& y) { KokkosSparse::spmv("N", 1.0, A, x, 0.0, y); }
  std::string detail() const { return "CrsMatrix"; }
};

#if defined(KOKKOS_ENABLE_CUDA) && defined(KSPMV_SOLVE_CUSPARSE)
void check(cusparseStatus_t s, const char* what) {
  if (s != CUSPARSE_STATUS_SUCCESS) {
    std::fprintf(stderr, "%s: %s\n", what, cusparseGetErrorString(s));
    std::exit(2);
  }
}
struct CusparseOperator {
  const char* name = "cusparse";
  cusparseHandle_t h = nullptr;
  cusparseSpMatDescr_t mat = nullptr;
  Kokkos::View<char*, Mem> buffer;
  Crs A;
  ~CusparseOperator() {
    if (mat) cusparseDestroySpMat(mat);
    if (h) cusparseDestroy(h);
  }
  // Its CSR descriptor on the application's arrays, and SpMV's buffer.
  void setup(const Crs& a) {
    A = a;
    check(cusparseCreate(&h), "cusparseCreate");
    check(cusparseSetStream(h, Exec().cuda_stream()), "cusparseSetStream");
    check(cusparseCreateCsr(&mat, A.numRows(), A.numCols(), A.nnz(), const_cast<int*>(A.graph.row_map.data()),
                            const_cast<int*>(A.graph.entries.data()), A.values.data(), CUSPARSE_INDEX_32I,
                            CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F),
          "cusparseCreateCsr");
    Vec x("x", A.numCols()), y("y", A.numRows());
    cusparseDnVecDescr_t vx, vy;
    check(cusparseCreateDnVec(&vx, x.extent(0), x.data(), CUDA_R_64F), "cusparseCreateDnVec");
    check(cusparseCreateDnVec(&vy, y.extent(0), y.data(), CUDA_R_64F), "cusparseCreateDnVec");
    double one = 1, zero = 0;
    std::size_t bytes = 0;
    check(cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat, vx, &zero, vy, CUDA_R_64F,
                                  CUSPARSE_SPMV_CSR_ALG1, &bytes),
          "cusparseSpMV_bufferSize");
    buffer = Kokkos::View<char*, Mem>("cusparse::buffer", bytes);
    check(cusparseSpMV_preprocess(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat, vx, &zero, vy, CUDA_R_64F,
                                  CUSPARSE_SPMV_CSR_ALG1, buffer.data()),
          "cusparseSpMV_preprocess");
    cusparseDestroyDnVec(vx);
    cusparseDestroyDnVec(vy);
  }
  // New values in the same arrays: the descriptor pointed at them again.
  void refresh(const Crs&) {
    check(cusparseCsrSetPointers(mat, const_cast<int*>(A.graph.row_map.data()), const_cast<int*>(A.graph.entries.data()),
                                 A.values.data()),
          "cusparseCsrSetPointers");
  }
  void apply(const Vec& x, const Vec& y) {
    cusparseDnVecDescr_t vx, vy;
    check(cusparseCreateDnVec(&vx, x.extent(0), x.data(), CUDA_R_64F), "cusparseCreateDnVec");
    check(cusparseCreateDnVec(&vy, y.extent(0), y.data(), CUDA_R_64F), "cusparseCreateDnVec");
    double one = 1, zero = 0;
    check(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat, vx, &zero, vy, CUDA_R_64F,
                       CUSPARSE_SPMV_CSR_ALG1, buffer.data()),
          "cusparseSpMV");
    cusparseDestroyDnVec(vx);
    cusparseDestroyDnVec(vy);
  }
  std::string detail() const { return "CSR ALG1"; }
};
#endif

// ---- the solvers: the same code for every operator ----

struct Solve {
  int iterations = 0;
  double relative_residual = 0;
  bool converged = false;
};

template <class Op>
Solve cg(Op& op, const Vec& dinv, const Vec& b, const Vec& x, double tol, int maxit) {
  const int n = b.extent(0);
  Vec r("r", n), p("p", n), q("q", n);
  Kokkos::deep_copy(x, 0.0);
  Kokkos::deep_copy(r, b);
  cg_direction(0.0, dinv, r, p);  // p = z = dinv .* r
  double rz = dot(r, p);
  const double bnorm = std::sqrt(dot(b, b));
  Solve s;
  s.relative_residual = 1;  // r = b
  for (s.iterations = 0; s.iterations < maxit && s.relative_residual > tol; ++s.iterations) {
    op.apply(p, q);
    const double alpha = rz / dot(p, q);
    const Sums<2> rr_rz = cg_update(alpha, p, q, dinv, x, r);
    s.relative_residual = std::sqrt(rr_rz.v[0]) / bnorm;
    const double rz_next = rr_rz.v[1];
    cg_direction(rz_next / rz, dinv, r, p);
    rz = rz_next;
  }
  s.converged = s.relative_residual <= tol;
  return s;
}

template <class Op>
Solve bicgstab(Op& op, const Vec& dinv, const Vec& b, const Vec& x, double tol, int maxit) {
  const int n = b.extent(0);
  Vec r("r", n), r0("r0", n), p("p", n), v("v", n), s_("s", n), t("t", n), ph("ph", n), sh("sh", n);
  Kokkos::deep_copy(x, 0.0);
  Kokkos::deep_copy(r, b);
  Kokkos::deep_copy(r0, b);
  const double bb = dot(b, b), bnorm = std::sqrt(bb);
  double rho = 1, alpha = 1, omega = 1;
  // r.r, r0.r and r0.r0 of the current residual (bicg_update's sums).
  double rr = bb, r0r = bb, r0r0 = bb;
  Kokkos::deep_copy(v, 0.0);
  Kokkos::deep_copy(p, 0.0);
  Solve s;
  // A breakdown (the residual orthogonal to the shadow residual, or a
  // vanishing step) restarts from the current residual instead of
  // dividing by zero.
  auto restart = [&] {
    Kokkos::deep_copy(r0, r);
    rho = alpha = omega = 1;
    Kokkos::deep_copy(v, 0.0);
    Kokkos::deep_copy(p, 0.0);
    r0r = r0r0 = rr;
  };
  for (s.iterations = 0; s.iterations < maxit; ++s.iterations) {
    s.relative_residual = std::sqrt(rr) / bnorm;
    if (s.relative_residual <= tol) break;
    double rho_next = r0r;
    if (!(std::abs(rho_next) > 1e-12 * std::sqrt(rr * r0r0))) {
      restart();
      rho_next = rr;
    }
    const double beta = (rho_next / rho) * (alpha / omega);
    rho = rho_next;
    bicg_direction(beta, omega, r, v, dinv, p, ph);
    op.apply(ph, v);
    const double r0v = dot(r0, v);
    if (!(std::abs(r0v) > 0) || !std::isfinite(r0v)) {
      restart();
      continue;
    }
    alpha = rho / r0v;
    bicg_half_step(alpha, r, v, dinv, s_, sh);
    op.apply(sh, t);
    const Sums<2> tt_ts = two_dots(t, s_);
    omega = tt_ts.v[0] > 0 ? tt_ts.v[1] / tt_ts.v[0] : 0;
    const Sums<3> next = bicg_update(alpha, omega, ph, sh, s_, t, r0, x, r);
    rr = next.v[0];
    r0r = next.v[1];
    r0r0 = next.v[2];
    if (omega == 0) restart();  // s is the new residual; the next step restarts
  }
  s.converged = s.relative_residual <= tol;
  return s;
}

struct Run {
  std::string name, detail;
  double setup_s = 0, refresh_s = 0, solve_s = 0;
  std::vector<Solve> solves;
  std::vector<std::vector<double>> solutions;
};

// The outer loop with one operator: set-up once, then each step the
// application assembles, the operator refreshes, CG (symmetric) or
// BiCGStab (skewed) solves A x = b.
template <class Op>
Run outer_loop(Op& op, const Crs& A, const Vec& base, const Vec& b, bool nonsymmetric, int steps, double tol,
               int maxit) {
  Run run;
  run.name = op.name;
  const double skew = nonsymmetric ? 0.3 : 0.0;
  assemble(A, base, 0, skew);
  Exec().fence();
  Kokkos::Timer t;
  op.setup(A);
  Exec().fence();
  run.setup_s = t.seconds();
  run.detail = op.detail();
  Vec x("x", A.numRows());
  for (int step = 0; step < steps; ++step) {
    if (step > 0) {
      assemble(A, base, step, skew);
      Exec().fence();
      t.reset();
      op.refresh(A);
      Exec().fence();
      run.refresh_s += t.seconds();
    }
    const Vec dinv = inverse_diagonal(A);
    Exec().fence();
    t.reset();
    run.solves.push_back(nonsymmetric ? bicgstab(op, dinv, b, x, tol, maxit) : cg(op, dinv, b, x, tol, maxit));
    Exec().fence();
    run.solve_s += t.seconds();
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
    run.solutions.emplace_back(h.data(), h.data() + h.extent(0));
  }
  return run;
}

double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0, n = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    d += (a[i] - b[i]) * (a[i] - b[i]);
    n += b[i] * b[i];
  }
  return n > 0 ? std::sqrt(d / n) : std::sqrt(d);
}

void print(const Run& r, const Run* reference) {
  std::printf("  %-15s %-24s set-up %9.3f ms  refresh %9.3f ms  solve %10.3f ms  total %10.3f ms",
              r.name.c_str(), r.detail.c_str(), r.setup_s * 1e3, r.refresh_s * 1e3, r.solve_s * 1e3,
              (r.setup_s + r.refresh_s + r.solve_s) * 1e3);
  if (reference && reference != &r)
    std::printf("  (%.2fx kokkos-kernels)",
                (reference->setup_s + reference->refresh_s + reference->solve_s) /
                    (r.setup_s + r.refresh_s + r.solve_s));
  std::printf("\n    iterations:");
  for (const auto& s : r.solves) std::printf(" %d%s", s.iterations, s.converged ? "" : "(not converged)");
  std::printf("   final residual %.2e\n", r.solves.empty() ? 0.0 : r.solves.back().relative_residual);
}

// kspmv's iterates against Kokkos Kernels': the same iteration counts
// (within one) and solutions within what the tolerance allows.
bool agree(const Run& a, const Run& ref, double tol) {
  bool ok = true;
  for (std::size_t s = 0; s < a.solves.size(); ++s) {
    const double diff = relative_difference(a.solutions[s], ref.solutions[s]);
    const int di = std::abs(a.solves[s].iterations - ref.solves[s].iterations);
    if (di > 1 || diff > 1e3 * tol || !a.solves[s].converged) {
      std::printf("    step %zu: %s %d iterations, kokkos-kernels %d, solutions differ by %.2e: DISAGREE\n", s,
                  a.name.c_str(), a.solves[s].iterations, ref.solves[s].iterations, diff);
      ok = false;
    }
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  std::string spec = "lap3d:40", format = "auto";
  int steps = 5, maxit = 2000;
  double tol = 1e-8;
  kspmv::ConvertOptions options;  // --applies: the run's SpMVs, for auto's choice
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--format") format = value();
    else if (a == "--steps") steps = std::atoi(value().c_str());
    else if (a == "--tol") tol = std::atof(value().c_str());
    else if (a == "--maxit") maxit = std::atoi(value().c_str());
    else if (a == "--applies") options.expected_applies = std::atof(value().c_str());
    else if (a.rfind("--kokkos", 0) == 0) continue;
    else if (a.rfind("-", 0) == 0) {
      std::fprintf(stderr, "unknown option %s\nusage: kspmv_solve [SPEC] [--format F] [--steps N] [--tol T] [--maxit N] [--applies N]\n",
                   a.c_str());
      return 2;
    } else spec = a;
  }
  if (steps < 1 || maxit < 1 || !(tol > 0)) {
    std::fprintf(stderr, "--steps and --maxit must be at least 1 and --tol positive\n");
    return 2;
  }
  bool all_agree = true;
  try {
    const kspmv::Format f = kspmv::parse_format(format);
    // The application's matrix: pattern and base values, on the device as
    // a CrsMatrix (as its assembly would leave it).
    const auto h = kspmv::is_generator_spec(spec) ? kspmv::generate<double>(spec)
                                                  : kspmv::read_matrix_market<double>(spec);
    if (h.nrows != h.ncols) throw kspmv::InvalidArgumentError("the solver needs a square matrix");
    const auto d = kspmv::upload_csr<double, Exec>(h);
    Kokkos::View<int*, Mem> rows("rows", h.nrows + 1), cols("cols", h.nnz());
    Vec vals("vals", h.nnz()), base("base", h.nnz());
    // The graph's offsets as an application builds them: each row's entry
    // count, then a prefix sum.
    const auto rp = d.row_ptr;
    Kokkos::parallel_scan(
        "solve::offsets", Kokkos::RangePolicy<Exec>(0, h.nrows), KOKKOS_LAMBDA(const int i, int& sum, const bool last) {
          if (last && i == 0) rows(0) = 0;
          sum += int(rp(i + 1) - rp(i));
          if (last) rows(i + 1) = sum;
        });
    Kokkos::deep_copy(cols, d.col_idx);
    Kokkos::deep_copy(base, d.values);
    const Crs A("A", h.nrows, h.ncols, static_cast<int>(h.nnz()), vals, rows, cols);
    Vec b("b", h.nrows);
    Kokkos::deep_copy(b, 1.0);
    std::printf("%s: %d rows, %lld nonzeros; %d outer steps, tolerance %.0e, on %s\n", spec.c_str(), h.nrows,
                static_cast<long long>(h.nnz()), steps, tol, Exec::name());
    for (bool nonsymmetric : {false, true}) {
      std::printf("%s (Jacobi), values reassembled every step%s:\n", nonsymmetric ? "BiCGStab" : "CG",
                  nonsymmetric ? ", skewed" : "");
      KokkosKernelsOperator kk;
      const Run ref = outer_loop(kk, A, base, b, nonsymmetric, steps, tol, maxit);
      KspmvOperator ks(f, options);
      const Run run = outer_loop(ks, A, base, b, nonsymmetric, steps, tol, maxit);
      print(run, &ref);
      print(ref, &ref);
      const bool ok = agree(run, ref, tol);
#if defined(KOKKOS_ENABLE_CUDA) && defined(KSPMV_SOLVE_CUSPARSE)
      CusparseOperator cu;
      print(outer_loop(cu, A, base, b, nonsymmetric, steps, tol, maxit), &ref);
#endif
      std::printf("    kspmv and kokkos-kernels iterates %s\n", ok ? "agree" : "DISAGREE");
      all_agree = all_agree && ok;
    }
  } catch (const kspmv::Error& e) {
    std::fprintf(stderr, "kspmv_solve: %s\n", e.what());
    return 2;
  }
  return all_agree ? 0 : 1;
}

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
// rounding, where a solution leaves |b - Ax| above 100 tol |b|, or where
// the solve that reads its state every iteration ends elsewhere than the
// one that reads it every --check-every.
//
//   kspmv_solve [SPEC] [--format F] [--steps N] [--tol T] [--maxit N] [--check-every N] [--applies N]
//   SPEC: a kspmv generator spec (lap3d:40, fem:MESH.msh:p2, ...) or a
//   Matrix Market file; default lap3d:40. --check-every: iterations the
//   host queues between reads of the solver's state (8). --applies: the
//   SpMVs auto weighs its set-up against (ConvertOptions::expected_applies;
//   the library's default otherwise): the SpMVs of all --steps solves,
//   since the matrix is converted once and refreshed at every step.
#include <KokkosSparse_CrsMatrix.hpp>
#include <KokkosSparse_spmv.hpp>
#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
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

// ---- the solvers' vector work, fused, and their scalars on the device ----
//
// Each kernel below does one step's vector work in one pass, with its
// dot products reduced in the same pass: the solver reads and writes each
// vector as few times as it can, so that the SpMV, the one part that
// differs between the operators, is a fair share of each iteration
// (BLAS-1 calls one at a time would move about 1.3x (CG) to 2x
// (BiCGStab) as many bytes).
//
// The host never waits for a dot product inside an iteration. Each
// reduction ends in its functor's `final`, which Kokkos runs once on the
// reduced value where the reduction ran (on a GPU, on the device): it
// turns the sums into the next step's scalars (alpha, beta, omega, the
// stopping test) in a small state view, which the next kernels read.
// So an iteration is the SpMVs and the vector passes and nothing else,
// and the host queues iteration after iteration; it reads the state every
// `check_every` iterations (--check-every). Once the residual is small
// enough the state stops: the updates leave x and r as they are, so the
// iterates, the count and the solution are the same whatever check_every
// is (the program checks it), and at most check_every - 1 iterations run
// idle at the end of a solve. (A scalar divided in every thread instead,
// or a kernel of one thread to make it, cost 5-8 us an iteration on a
// 545k-row mesh on an H200.)

// Several sums reduced in one pass.
template <int N>
struct Sums {
  double v[N] = {};
  KOKKOS_INLINE_FUNCTION Sums& operator+=(const Sums& o) {
    for (int i = 0; i < N; ++i) v[i] += o.v[i];
    return *this;
  }
};

// What a reduction functor declares for Kokkos: its value type, a zero,
// and the join (Kokkos 3.4 joins through volatile references).
template <class Value>
struct Reduction {
  using value_type = Value;
  KOKKOS_INLINE_FUNCTION void init(value_type& v) const { v = value_type(); }
  KOKKOS_INLINE_FUNCTION void join(value_type& a, const value_type& b) const { a += b; }
#if KOKKOS_VERSION < 40000
  KOKKOS_INLINE_FUNCTION void join(volatile value_type& a, const volatile value_type& b) const {
    value_type t = const_cast<const value_type&>(a);
    t += const_cast<const value_type&>(b);
    const_cast<value_type&>(a) = t;
  }
#endif
};

using Range = Kokkos::RangePolicy<Exec>;
template <class Value>
using Result = Kokkos::View<Value, Mem>;  // a reduction's result, on the device

double dot(const Vec& a, const Vec& b) {
  double s = 0;
  Kokkos::parallel_reduce(
      "solve::dot", Range(0, a.extent(0)), KOKKOS_LAMBDA(const int i, double& acc) { acc += a(i) * b(i); }, s);
  return s;
}

KOKKOS_INLINE_FUNCTION double magnitude(double v) { return v < 0 ? -v : v; }

// ---- CG ----

// CG's scalars. `stopped`: the relative residual is no longer above tol
// (converged, or not a number): from then on nothing changes.
struct CgState {
  double rz = 0;     // r.z of the current residual, z = dinv .* r
  double alpha = 0;  // this step's
  double beta = 0;   // the next direction's
  double rr = 0;     // r.r of the current residual
  int iterations = 0;
  int stopped = 0;
};
using CgState0 = Kokkos::View<CgState, Mem>;

// p.q after q = A p; final: alpha = r.z / p.q.
struct CgStep : Reduction<double> {
  CgState0 state;
  Vec p, q;
  KOKKOS_INLINE_FUNCTION void operator()(const int i, double& acc) const { acc += p(i) * q(i); }
  KOKKOS_INLINE_FUNCTION void final(double& pq) const {
    CgState& s = state();
    if (!s.stopped) s.alpha = s.rz / pq;
  }
};

// x += alpha p, r -= alpha q; r.r and r.z (z not stored: the direction
// takes it from r); final: the count, the residual, beta = new r.z / old
// r.z and the stopping test.
struct CgUpdate : Reduction<Sums<2>> {
  CgState0 state;
  Vec p, q, dinv, x, r;
  double bnorm, tol;
  KOKKOS_INLINE_FUNCTION void operator()(const int i, Sums<2>& acc) const {
    const CgState& s = state();
    double ri = r(i);
    if (!s.stopped) {
      x(i) += s.alpha * p(i);
      ri -= s.alpha * q(i);
      r(i) = ri;
    }
    const double zi = dinv(i) * ri;
    acc.v[0] += ri * ri;
    acc.v[1] += ri * zi;
  }
  KOKKOS_INLINE_FUNCTION void final(Sums<2>& t) const {
    CgState& s = state();
    if (s.stopped) return;
    ++s.iterations;
    s.rr = t.v[0];
    s.beta = t.v[1] / s.rz;
    s.rz = t.v[1];
    s.stopped = !(sqrt(s.rr) / bnorm > tol);
  }
};

// p = dinv .* r + beta p (beta from the state; none before the first step).
void cg_direction(const CgState0& state, bool first, const Vec& dinv, const Vec& r, const Vec& p) {
  Kokkos::parallel_for(
      "solve::cg_direction", Range(0, p.extent(0)), KOKKOS_LAMBDA(const int i) {
        const CgState& s = state();
        if (s.stopped) return;
        p(i) = dinv(i) * r(i) + (first ? 0.0 : s.beta * p(i));
      });
}

// ---- BiCGStab ----

// BiCGStab's scalars: those of the step under way and the last step's
// residual sums. A breakdown (the residual orthogonal to the shadow
// residual, or a vanishing step) restarts from the current residual
// instead of dividing by zero.
struct BicgState {
  double rho = 1, alpha = 1, omega = 1, beta = 0;
  double rr = 0, r0r = 0, r0r0 = 0;  // r.r, r0.r and r0.r0
  int iterations = 0;
  int stopped = 0;
  int broke = 0;         // this step's r0.v cannot be divided by: the rest of it is skipped
  int restart = 0;       // this step starts over: r0 = r, p = v = 0
  int restart_next = 0;  // the last step broke down
};
using BicgState0 = Kokkos::View<BicgState, Mem>;

// Between steps (the update's final, and the host before the first):
// tests the residual, then, where `may_start`, makes the next step's
// beta and rho and counts it.
KOKKOS_INLINE_FUNCTION void bicg_next_step(BicgState& s, bool may_start, double bnorm, double tol) {
  if (sqrt(s.rr) / bnorm <= tol) {
    s.stopped = 1;
    return;
  }
  if (!may_start) return;
  s.restart = 0;
  s.broke = 0;
  if (s.restart_next) {
    s.restart = 1;
    s.rho = s.alpha = s.omega = 1;
    s.r0r = s.r0r0 = s.rr;
  }
  s.restart_next = 0;
  double rho_next = s.r0r;
  if (!(magnitude(rho_next) > 1e-12 * sqrt(s.rr * s.r0r0))) {
    s.restart = 1;
    s.rho = s.alpha = s.omega = 1;
    s.r0r = s.r0r0 = s.rr;
    rho_next = s.rr;
  }
  s.beta = (rho_next / s.rho) * (s.alpha / s.omega);
  s.rho = rho_next;
  ++s.iterations;
}

// The direction: p = r + beta (p - omega v), ph = dinv .* p; on a restart
// r0 = r and p = r.
void bicg_direction(const BicgState0& state, const Vec& r, const Vec& v, const Vec& dinv, const Vec& r0, const Vec& p,
                    const Vec& ph) {
  Kokkos::parallel_for(
      "solve::bicg_direction", Range(0, p.extent(0)), KOKKOS_LAMBDA(const int i) {
        const BicgState& s = state();
        if (s.stopped) return;
        double pi = r(i);
        if (s.restart) r0(i) = pi;
        else pi += s.beta * (p(i) - s.omega * v(i));
        p(i) = pi;
        ph(i) = dinv(i) * pi;
      });
}

// r0.v after v = A ph; final: alpha = rho / r0.v, or a breakdown.
struct BicgAlpha : Reduction<double> {
  BicgState0 state;
  Vec r0, v;
  KOKKOS_INLINE_FUNCTION void operator()(const int i, double& acc) const { acc += r0(i) * v(i); }
  KOKKOS_INLINE_FUNCTION void final(double& r0v) const {
    BicgState& s = state();
    if (s.stopped) return;
    s.broke = !(magnitude(r0v) > 0 && magnitude(r0v) <= 1.7976931348623157e308);
    if (!s.broke) s.alpha = s.rho / r0v;
  }
};

// s = r - alpha v, sh = dinv .* s.
void bicg_half_step(const BicgState0& state, const Vec& r, const Vec& v, const Vec& dinv, const Vec& s_, const Vec& sh) {
  Kokkos::parallel_for(
      "solve::bicg_half_step", Range(0, s_.extent(0)), KOKKOS_LAMBDA(const int i) {
        const BicgState& s = state();
        if (s.stopped || s.broke) return;
        const double si = r(i) - s.alpha * v(i);
        s_(i) = si;
        sh(i) = dinv(i) * si;
      });
}

// t.t and t.s after t = A sh; final: omega = t.s / t.t (0 where t is 0).
struct BicgOmega : Reduction<Sums<2>> {
  BicgState0 state;
  Vec t, s_;
  KOKKOS_INLINE_FUNCTION void operator()(const int i, Sums<2>& acc) const {
    acc.v[0] += t(i) * t(i);
    acc.v[1] += t(i) * s_(i);
  }
  KOKKOS_INLINE_FUNCTION void final(Sums<2>& w) const {
    BicgState& s = state();
    if (s.stopped || s.broke) return;
    s.omega = w.v[0] > 0 ? w.v[1] / w.v[0] : 0;
  }
};

// x += alpha ph + omega sh, r = s - omega t; r.r, r0.r and r0.r0 (the
// next step's residual, rho and breakdown test); final: the step taken in
// (a breakdown, or omega 0, asks for a restart), then the next one made
// (bicg_next_step).
struct BicgUpdate : Reduction<Sums<3>> {
  BicgState0 state;
  Vec ph, sh, s_, t, r0, x, r;
  double bnorm, tol;
  bool may_start;
  KOKKOS_INLINE_FUNCTION void operator()(const int i, Sums<3>& acc) const {
    const BicgState& s = state();
    if (s.stopped || s.broke) return;
    x(i) += s.alpha * ph(i) + s.omega * sh(i);
    const double ri = s_(i) - s.omega * t(i);
    r(i) = ri;
    acc.v[0] += ri * ri;
    acc.v[1] += r0(i) * ri;
    acc.v[2] += r0(i) * r0(i);
  }
  KOKKOS_INLINE_FUNCTION void final(Sums<3>& n) const {
    BicgState& s = state();
    if (s.stopped) return;
    if (s.broke) {
      s.restart_next = 1;
    } else {
      s.rr = n.v[0];
      s.r0r = n.v[1];
      s.r0r0 = n.v[2];
      if (s.omega == 0) s.restart_next = 1;  // s is the new residual; the next step restarts
    }
    bicg_next_step(s, may_start, bnorm, tol);
  }
};

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
  // A dense-vector descriptor for each vector the solvers pass (CG's p
  // and q, BiCGStab's p-hat, v, s-hat and t; a later solve's vectors
  // where their addresses are new), made at its first apply and kept, as
  // a cuSPARSE user keeps them.
  std::vector<std::pair<const double*, cusparseDnVecDescr_t>> vectors;
  ~CusparseOperator() {
    for (auto& v : vectors) cusparseDestroyDnVec(v.second);
    if (mat) cusparseDestroySpMat(mat);
    if (h) cusparseDestroy(h);
  }
  cusparseDnVecDescr_t vector_of(const Vec& v) {
    for (const auto& d : vectors)
      if (d.first == v.data()) return d.second;
    cusparseDnVecDescr_t d;
    check(cusparseCreateDnVec(&d, v.extent(0), v.data(), CUDA_R_64F), "cusparseCreateDnVec");
    vectors.emplace_back(v.data(), d);
    return d;
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
    double one = 1, zero = 0;
    check(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat, vector_of(x), &zero, vector_of(y), CUDA_R_64F,
                       CUSPARSE_SPMV_CSR_ALG1, buffer.data()),
          "cusparseSpMV");
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

// Preconditioned CG from x = 0. The host queues check_every iterations at
// a time, then reads the state once.
template <class Op>
Solve cg(Op& op, const Vec& dinv, const Vec& b, const Vec& x, double tol, int maxit, int check_every) {
  const int n = b.extent(0);
  Vec r("r", n), p("p", n), q("q", n);
  Result<double> pq("solve::pq");
  Result<Sums<2>> sums("solve::cg_sums");
  CgState0 state("solve::cg_state");
  Kokkos::deep_copy(x, 0.0);
  Kokkos::deep_copy(r, b);
  const double bb = dot(b, b), bnorm = std::sqrt(bb);
  auto h = Kokkos::create_mirror_view(state);
  h().rr = bb;
  h().stopped = !(1.0 > tol) || n == 0;  // r = b: the relative residual is 1
  Kokkos::deep_copy(state, h);
  cg_direction(state, true, dinv, r, p);  // p = z = dinv .* r
  h().rz = dot(r, p);
  Kokkos::deep_copy(state, h);
  const CgStep step{{}, state, p, q};
  const CgUpdate update{{}, state, p, q, dinv, x, r, bnorm, tol};
  for (int queued = 0; queued < maxit && !h().stopped;) {
    for (const int last = std::min(maxit, queued + check_every); queued < last; ++queued) {
      op.apply(p, q);
      Kokkos::parallel_reduce("solve::cg_step", Range(0, n), step, pq);
      Kokkos::parallel_reduce("solve::cg_update", Range(0, n), update, sums);
      cg_direction(state, false, dinv, r, p);
    }
    Kokkos::deep_copy(h, state);  // the host's one wait in check_every iterations
  }
  Solve s;
  s.iterations = h().iterations;
  s.relative_residual = std::sqrt(h().rr) / bnorm;
  s.converged = s.relative_residual <= tol;
  return s;
}

// Preconditioned BiCGStab from x = 0, queued as CG is.
template <class Op>
Solve bicgstab(Op& op, const Vec& dinv, const Vec& b, const Vec& x, double tol, int maxit, int check_every) {
  const int n = b.extent(0);
  Vec r("r", n), r0("r0", n), p("p", n), v("v", n), s_("s", n), t("t", n), ph("ph", n), sh("sh", n);
  Result<double> r0v("solve::r0v");
  Result<Sums<2>> tt_ts("solve::tt_ts");
  Result<Sums<3>> next("solve::bicg_sums");
  BicgState0 state("solve::bicg_state");
  Kokkos::deep_copy(x, 0.0);
  Kokkos::deep_copy(r, b);
  Kokkos::deep_copy(r0, b);
  Kokkos::deep_copy(v, 0.0);
  Kokkos::deep_copy(p, 0.0);
  const double bb = dot(b, b), bnorm = std::sqrt(bb);
  auto h = Kokkos::create_mirror_view(state);
  h().rr = h().r0r = h().r0r0 = bb;
  if (n == 0) h().stopped = 1;
  else bicg_next_step(h(), maxit > 0, bnorm, tol);  // the first step, made on the host
  Kokkos::deep_copy(state, h);
  const BicgAlpha alpha{{}, state, r0, v};
  const BicgOmega omega{{}, state, t, s_};
  BicgUpdate update{{}, state, ph, sh, s_, t, r0, x, r, bnorm, tol, true};
  for (int queued = 0; queued < maxit && !h().stopped;) {
    for (const int last = std::min(maxit, queued + check_every); queued < last; ++queued) {
      bicg_direction(state, r, v, dinv, r0, p, ph);
      op.apply(ph, v);
      Kokkos::parallel_reduce("solve::bicg_alpha", Range(0, n), alpha, r0v);
      bicg_half_step(state, r, v, dinv, s_, sh);
      op.apply(sh, t);
      Kokkos::parallel_reduce("solve::bicg_omega", Range(0, n), omega, tt_ts);
      update.may_start = queued + 1 < maxit;
      Kokkos::parallel_reduce("solve::bicg_update", Range(0, n), update, next);
    }
    Kokkos::deep_copy(h, state);
  }
  Solve s;
  s.iterations = h().iterations;
  s.relative_residual = std::sqrt(h().rr) / bnorm;
  s.converged = s.relative_residual <= tol;
  return s;
}

struct Run {
  std::string name, detail;
  double setup_s = 0, refresh_s = 0, solve_s = 0;
  std::vector<Solve> solves;
  std::vector<std::vector<double>> solutions;
  std::vector<double> true_residuals;  // |b - A x| / |b| of each step's x, by Kokkos Kernels' spmv
  std::string check_note;              // what the solve checked every iteration gave, where asked
};

std::vector<double> to_host(const Vec& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  return std::vector<double>(h.data(), h.data() + h.extent(0));
}

// The outer loop with one operator: set-up once, then each step the
// application assembles, the operator refreshes, CG (symmetric) or
// BiCGStab (skewed) solves A x = b. With `check_intervals`, the first
// step's solve runs again, untimed, with the state read every iteration:
// its count and solution must be the same bits.
template <class Op>
Run outer_loop(Op& op, const Crs& A, const Vec& base, const Vec& b, bool nonsymmetric, int steps, double tol,
               int maxit, int check_every, bool check_intervals = false) {
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
  Vec x("x", A.numRows()), res("res", A.numRows());
  const double bnorm = std::sqrt(dot(b, b));
  const auto solve = [&](const Vec& dinv, const Vec& into, int every) {
    return nonsymmetric ? bicgstab(op, dinv, b, into, tol, maxit, every) : cg(op, dinv, b, into, tol, maxit, every);
  };
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
    run.solves.push_back(solve(dinv, x, check_every));
    Exec().fence();
    run.solve_s += t.seconds();
    run.solutions.push_back(to_host(x));
    Kokkos::deep_copy(res, b);
    KokkosSparse::spmv("N", -1.0, A, x, 1.0, res);
    run.true_residuals.push_back(std::sqrt(dot(res, res)) / bnorm);
    if (check_intervals && step == 0 && check_every != 1) {
      Vec x1("x1", A.numRows());
      const Solve once = solve(dinv, x1, 1);
      const bool same = once.iterations == run.solves[0].iterations && to_host(x1) == run.solutions[0];
      char note[160];
      std::snprintf(note, sizeof note, "the state read every iteration: %d iterations, %s", once.iterations,
                    same ? "the same iterates" : "OTHER ITERATES");
      run.check_note = same ? std::string(note) : std::string("DISAGREE: ") + note;
    }
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
  double worst = 0;
  for (double t : r.true_residuals) worst = std::max(worst, t);
  std::printf("   final residual %.2e, |b - Ax|/|b| at most %.2e\n",
              r.solves.empty() ? 0.0 : r.solves.back().relative_residual, worst);
  if (!r.check_note.empty()) std::printf("    first step again, %s\n", r.check_note.c_str());
}

// Each step converged, its x solves A x = b to about the tolerance
// (|b - Ax|, not the solver's own residual), and the solve that read its
// state every iteration gave the same iterates.
bool sound(const Run& r, double tol) {
  bool ok = r.check_note.rfind("DISAGREE", 0) != 0;
  for (std::size_t s = 0; s < r.solves.size(); ++s) {
    if (!r.solves[s].converged || !(r.true_residuals[s] <= 100 * tol)) {
      std::printf("    step %zu: %s %s, |b - Ax|/|b| %.2e: WRONG\n", s, r.name.c_str(),
                  r.solves[s].converged ? "converged" : "did not converge", r.true_residuals[s]);
      ok = false;
    }
  }
  return ok;
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
  int steps = 5, maxit = 2000, check_every = 8;
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
    else if (a == "--check-every") check_every = std::atoi(value().c_str());
    else if (a == "--applies") options.expected_applies = std::atof(value().c_str());
    else if (a.rfind("--kokkos", 0) == 0) continue;
    else if (a.rfind("-", 0) == 0) {
      std::fprintf(stderr, "unknown option %s\nusage: kspmv_solve [SPEC] [--format F] [--steps N] [--tol T] [--maxit N] [--check-every N] [--applies N]\n",
                   a.c_str());
      return 2;
    } else spec = a;
  }
  if (steps < 1 || maxit < 1 || check_every < 1 || !(tol > 0)) {
    std::fprintf(stderr, "--steps, --maxit and --check-every must be at least 1 and --tol positive\n");
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
      const Run ref = outer_loop(kk, A, base, b, nonsymmetric, steps, tol, maxit, check_every, true);
      KspmvOperator ks(f, options);
      const Run run = outer_loop(ks, A, base, b, nonsymmetric, steps, tol, maxit, check_every);
      print(run, &ref);
      print(ref, &ref);
      const bool ok = agree(run, ref, tol) && sound(run, tol) && sound(ref, tol);
#if defined(KOKKOS_ENABLE_CUDA) && defined(KSPMV_SOLVE_CUSPARSE)
      CusparseOperator cu;
      print(outer_loop(cu, A, base, b, nonsymmetric, steps, tol, maxit, check_every), &ref);
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

// Lab: throughput of the solver example's vector kernels, variants side by side.
#include <Kokkos_Core.hpp>
#include <cstdio>
using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;
using Vec = Kokkos::View<double*, Mem>;
using Range = Kokkos::RangePolicy<Exec>;
template <int N> struct Sums {
  double v[N] = {};
  KOKKOS_INLINE_FUNCTION Sums& operator+=(const Sums& o) { for (int i = 0; i < N; ++i) v[i] += o.v[i]; return *this; }
};
struct St { double rz = 1, beta = 0.5, rr = 0, alpha = 0.25; int its = 0, stopped = 0; };
using St0 = Kokkos::View<St, Mem>;
using S0 = Kokkos::View<double, Mem>;
template <int N> using Sums0 = Kokkos::View<Sums<N>, Mem>;

// a functor with final: update, then the state from the sums
struct UpdateFinal {
  using value_type = Sums<2>;
  St0 st; S0 pq; Vec p, q, dinv, x, r;
  KOKKOS_INLINE_FUNCTION void init(value_type& v) const { v.v[0] = v.v[1] = 0; }
  KOKKOS_INLINE_FUNCTION void join(value_type& a, const value_type& b) const { a += b; }
  KOKKOS_INLINE_FUNCTION void operator()(const int i, value_type& acc) const {
    const double alpha = st().alpha;
    x(i) += alpha * p(i);
    const double ri = r(i) - alpha * q(i);
    r(i) = ri;
    const double zi = dinv(i) * ri;
    acc.v[0] += ri * ri;
    acc.v[1] += ri * zi;
  }
  KOKKOS_INLINE_FUNCTION void final(value_type& v) const {
    St& s = st();
    s.beta = v.v[1] / s.rz; s.rz = v.v[1]; s.rr = v.v[0]; ++s.its;
  }
};
struct DotFinal {
  using value_type = double;
  St0 st; Vec a, b;
  KOKKOS_INLINE_FUNCTION void operator()(const int i, double& acc) const { acc += a(i) * b(i); }
  KOKKOS_INLINE_FUNCTION void final(double& v) const { st().alpha = st().rz / v; }
};

int main(int argc, char** argv) {
  Kokkos::ScopeGuard g(argc, argv);
  for (int n : {545412, 1000000, 8000000}) {
    Vec p("p", n), q("q", n), dinv("d", n), x("x", n), r("r", n);
    Kokkos::deep_copy(p, 1.0); Kokkos::deep_copy(q, 0.5); Kokkos::deep_copy(dinv, 0.25); Kokkos::deep_copy(r, 1.0);
    St0 st("st"); S0 pq("pq"); Sums0<2> sums("sums");
    { auto h = Kokkos::create_mirror_view(st); h() = St(); Kokkos::deep_copy(st, h); }
    Kokkos::deep_copy(pq, 4.0);
    const int reps = 50;
    auto time = [&](const char* name, auto&& f) {
      f(); Kokkos::fence();
      double best = 1e9;
      for (int t = 0; t < 3; ++t) {
        Kokkos::Timer tm;
        for (int k = 0; k < reps; ++k) f();
        Kokkos::fence();
        best = std::min(best, tm.seconds() / reps);
      }
      std::printf("n %8d  %-48s %8.1f us\n", n, name, best * 1e6);
    };
    time("update: alpha arg, sums to host", [&] {
      Sums<2> s; const double alpha = 1e-9;
      Kokkos::parallel_reduce("a", Range(0, n), KOKKOS_LAMBDA(const int i, Sums<2>& acc) {
        x(i) += alpha * p(i); const double ri = r(i) - alpha * q(i); r(i) = ri; const double zi = dinv(i) * ri;
        acc.v[0] += ri * ri; acc.v[1] += ri * zi; }, s); });
    time("update: alpha arg, sums into view", [&] {
      const double alpha = 1e-9;
      Kokkos::parallel_reduce("b", Range(0, n), KOKKOS_LAMBDA(const int i, Sums<2>& acc) {
        x(i) += alpha * p(i); const double ri = r(i) - alpha * q(i); r(i) = ri; const double zi = dinv(i) * ri;
        acc.v[0] += ri * ri; acc.v[1] += ri * zi; }, sums); });
    time("update: state view, rz/pq divided each element", [&] {
      Kokkos::parallel_reduce("c", Range(0, n), KOKKOS_LAMBDA(const int i, Sums<2>& acc) {
        const St& s = st(); double ri = r(i);
        if (!s.stopped) { const double alpha = s.rz / pq() * 1e-9; x(i) += alpha * p(i); ri -= alpha * q(i); r(i) = ri; }
        const double zi = dinv(i) * ri; acc.v[0] += ri * ri; acc.v[1] += ri * zi; }, sums); });
    time("update: state read once into a register copy", [&] {
      Kokkos::parallel_reduce("c2", Range(0, n), KOKKOS_LAMBDA(const int i, Sums<2>& acc) {
        const double alpha = st().alpha * 1e-9; x(i) += alpha * p(i); const double ri = r(i) - alpha * q(i); r(i) = ri;
        const double zi = dinv(i) * ri; acc.v[0] += ri * ri; acc.v[1] += ri * zi; }, sums); });
    time("update: functor with final (state from sums)", [&] {
      UpdateFinal f{st, pq, p, q, dinv, x, r};
      Kokkos::parallel_reduce("d", Range(0, n), f, sums); });
    time("direction: beta arg", [&] {
      const double beta = 0.5;
      Kokkos::parallel_for("e", Range(0, n), KOKKOS_LAMBDA(const int i) { p(i) = dinv(i) * r(i) + beta * p(i) * 1e-3; }); });
    time("direction: beta from state view", [&] {
      Kokkos::parallel_for("f", Range(0, n), KOKKOS_LAMBDA(const int i) {
        const St& s = st(); if (s.stopped) return; p(i) = dinv(i) * r(i) + s.beta * p(i) * 1e-3; }); });
    time("dot to host", [&] { double s = 0; Kokkos::parallel_reduce("g", Range(0, n), KOKKOS_LAMBDA(const int i, double& a) { a += p(i) * q(i); }, s); });
    time("dot into view", [&] { Kokkos::parallel_reduce("h", Range(0, n), KOKKOS_LAMBDA(const int i, double& a) { a += p(i) * q(i); }, pq); });
    time("dot functor with final into view", [&] { DotFinal f{st, p, q}; Kokkos::parallel_reduce("i", Range(0, n), f, pq); });
    time("one-thread kernel", [&] { Kokkos::parallel_for("j", Range(0, 1), KOKKOS_LAMBDA(const int) { st().its += 1; }); });
    // check final ran on the device
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), st);
    std::printf("n %8d  state after: its %d alpha %g beta %g rz %g rr %g\n", n, h().its, h().alpha, h().beta, h().rz, h().rr);
  }
  return 0;
}

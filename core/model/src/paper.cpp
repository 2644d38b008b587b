// The paper's equations (pmf-model §4, eqs. 21-50), term for term.
#include <cmath>

#include "traffic.hpp"

namespace kspmv {

using model_detail::kIndex;

namespace {
struct PaperTerms {
  double C, W, BS, CR, BWb, F, Fi, Ss, Si, B;
};
PaperTerms terms(int tau, const ModelHardware& hw) {
  PaperTerms t;
  t.C = hw.cores;
  t.W = hw.warp;
  t.BS = hw.block;
  t.CR = hw.memory_clock_ghz * 1e9;
  t.BWb = hw.bus_width_bits / 8.0;
  t.Fi = hw.core_clock_ghz * 1e9;
  t.F = tau == 8 ? t.Fi / 2 : t.Fi;  // F_d: half the single-precision rate
  t.Ss = tau;
  t.Si = kIndex;
  t.B = hw.pcie_gbs * 1e9;
  return t;
}
}  // namespace

double paper_coo(const RowLengthStats& s, int tau, const ModelHardware& hw, bool transfer) {
  const auto t = terms(tau, hw);
  const double N = double(s.nrows), NNZ = double(s.nnz);
  const double ct = NNZ / t.C * (2 * t.Si / (t.CR * t.Si) + 2 * t.Ss / (t.CR * t.Ss)) + NNZ / (t.C * t.F) +
                    N * t.W / t.C * std::ceil(s.mean / t.W) / t.F;  // eq. (29)
  const double dtt = ((t.Ss + 2 * t.Si) * NNZ + 2 * t.Ss * N) / t.B;  // eq. (25)
  return ct + (transfer ? dtt : 0);
}

double paper_csr(const RowLengthStats& s, int tau, const ModelHardware& hw, bool transfer) {
  const auto t = terms(tau, hw);
  const double N = double(s.nrows), NNZ = double(s.nnz), EQ = s.fractile_mean();
  const double ct = N / t.C *
                    ((std::ceil(t.Ss * EQ / t.BWb) + std::ceil(t.Si * EQ / t.BWb)) / t.CR + 2 / t.CR + EQ / t.CR +
                     EQ * (2 / t.F + 1 / t.Fi));  // eq. (36)
  const double dtt = ((t.Ss + t.Si) * NNZ + t.Si * (N + 1) + 2 * t.Ss * N) / t.B;  // eq. (31)
  return ct + (transfer ? dtt : 0);
}

double paper_ell(const RowLengthStats& s, int tau, const ModelHardware& hw, bool transfer) {
  const auto t = terms(tau, hw);
  const double N = double(s.nrows), K = double(s.max), EQ = s.fractile_mean(), P0 = s.prob_gt(0);
  const double ct = P0 * N / t.C *
                    ((std::ceil(t.Si * K / t.BWb) + std::ceil(t.Ss * K / t.BWb)) / t.CR +
                     t.Ss * std::max(0.0, K - t.BS) / (t.CR * t.Ss) + 2 / t.CR + 2 * EQ / t.F);  // eq. (42)
  const double dtt = (P0 * N * K * (t.Ss + t.Si) + t.Si * P0 * N + 2 * t.Ss * N) / t.B;  // eq. (38)
  return ct + (transfer ? dtt : 0);
}

double paper_hyb(const RowLengthStats& s, std::int64_t Kint, int tau, const ModelHardware& hw, bool transfer) {
  const auto t = terms(tau, hw);
  const double N = double(s.nrows), K = double(Kint), P0 = s.prob_gt(0), PK = s.prob_gt(Kint);
  const double coo_nnz = std::max(0.0, s.nnz_gt(Kint) - K * PK * N);
  const double ct_coo = coo_nnz / t.C * (4 / t.CR + 1 / t.F) +
                        PK * N * t.W / t.C * std::ceil(std::max(0.0, s.mean_gt(Kint) - K) / t.W) / t.F;  // eq. (46)
  const double ct_ell = P0 * N / t.C *
                        ((std::ceil(t.Si * K / t.BWb) + std::ceil(t.Ss * K / t.BWb)) / t.CR +
                         std::ceil(t.Ss * std::max(0.0, K - t.BS) / t.BWb) / t.CR + 2 / t.CR +
                         2 * s.mean_le(Kint) / t.F);  // eq. (47)
  const double dtt = (coo_nnz * (t.Ss + 2 * t.Si) + (t.Ss + t.Si) * P0 * N * K + t.Si * P0 * N + 2 * t.Ss * N) /
                     t.B;  // eq. (45)
  return ct_coo + ct_ell + (transfer ? dtt : 0);  // eq. (50)
}

std::int64_t paper_hyb_k(const RowLengthStats& s, int tau, const ModelHardware& hw, bool transfer) {
  std::int64_t best = static_cast<std::int64_t>(s.mean);
  double bt = 1e300;
  for (std::int64_t K = static_cast<std::int64_t>(s.mean); K <= s.max; ++K) {
    const double v = paper_hyb(s, K, tau, hw, transfer);
    if (v < bt) {
      bt = v;
      best = K;
    }
  }
  return best;
}

}  // namespace kspmv

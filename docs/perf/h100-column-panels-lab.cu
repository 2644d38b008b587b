// Column-panel lab (not part of the library): y = A x as P panels of
// consecutive columns, each a CSR of its own columns (full row offsets,
// global column indices), run with the library's csr-merge CUDA kernel and
// with cuSPARSE CSR ALG1 (beta 0 for the first panel, 1 after), against P = 1.
// Output: h100-column-panels-lab-2026-11-27.txt. Build (CUDA build tree
// build-cuda, Kokkos at /work/gpu/kokkos-install):
//   nvcc -O3 -std=c++17 -arch=sm_90 --extended-lambda --expt-relaxed-constexpr -Icore/include
//        -Icore/inputs/include -Ibackends/cuda/include -Ibuild-cuda/generated -I<kokkos>/include lab.cu -o lab
//        build-cuda/core/libkspmv_inputs.a build-cuda/core/libkspmv_core.a <kokkos>/lib/libkokkoscore.a
//        -lcusparse -lcuda -lz -lmetis -ldl
// Run: PANELS="1 2 3 4 6" ./lab SPEC...
#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kspmv/backends/cuda/csr_merge_cuda.hpp"
#include "kspmv/inputs/generators.hpp"
using namespace kspmv;
using namespace kspmv::cuda_tuned;
#include "h100-lab-util.cuh"  // CK, up, the batches timed (beside this file)

// 10 runs to warm up, then the median of 11 batches of 5.
template <class F>
double time_us(F&& f) {
  for (int i = 0; i < 10; ++i) f();
  CK(cudaDeviceSynchronize());
  return median_batch_us(f, 11, 5);
}
struct Panel {
  int n, nc;
  long nnz;
  int *rp, *ci;
  double* v;
  MergeUnits<double> mu;
  int nspan;
  int *srow, *sf, *sl;
};
Panel make_panel(const std::vector<int>& rp, const std::vector<int>& ci, const std::vector<double>& val, int n, int c0,
                 int c1, int sms) {
  std::vector<int> prp(n + 1, 0), pci;
  std::vector<double> pv;
  for (int i = 0; i < n; ++i) {
    for (int k = rp[i]; k < rp[i + 1]; ++k)
      if (ci[k] >= c0 && ci[k] < c1) {
        pci.push_back(ci[k]);
        pv.push_back(val[k]);
      }
    prp[i + 1] = int(pci.size());
  }
  Panel P;
  P.n = n;
  P.nc = c1 - c0;
  P.nnz = long(pci.size());
  const long items = long(n) + P.nnz;
  const long per_unit = merge_unit_items(items, sms, true, 0);
  const int units = int(merge_units(items, per_unit));
  const HostMergePlan plan = host_merge_plan(prp, n, P.nnz, per_unit, units);
  P.rp = up(prp);
  P.ci = up(pci);
  P.v = up(pv);
  double *h, *t;
  CK(cudaMalloc(&h, units * 8));
  CK(cudaMalloc(&t, units * 8));
  P.mu = MergeUnits<double>{n, units, int(per_unit), up(plan.unit_row), up(plan.unit_nz), P.rp, P.ci, P.v, h, t};
  P.nspan = int(plan.span_row.size());
  P.srow = up(plan.span_row);
  P.sf = up(plan.span_first);
  P.sl = up(plan.span_last);
  return P;
}
void free_panel(Panel& P) {
  for (void* p : {(void*)P.rp, (void*)P.ci, (void*)P.v, (void*)P.mu.unit_row, (void*)P.mu.unit_nz, (void*)P.mu.head,
                  (void*)P.mu.tail, (void*)P.srow, (void*)P.sf, (void*)P.sl})
    cudaFree(p);
}
int main(int argc, char** argv) {
  int sms;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const char* pl = getenv("PANELS") ? getenv("PANELS") : "1 2 3 4 6 8";
  for (int a = 1; a < argc; ++a) {
    const std::string spec = argv[a];
    HostCsr<double> m = kspmv::generate<double>(spec);
    const int n = m.nrows, nc = m.ncols;
    const long nnz = m.nnz();
    const LabProblem prob = lab_problem(m);
    const std::vector<int>&rp = prob.rp, &ci = prob.ci;
    const std::vector<double>&x = prob.x, &ref = prob.ref;
    double *d_x = up(x), *d_y;
    CK(cudaMalloc(&d_y, n * 8));
    printf("# %s rows %d nnz %ld\n", spec.c_str(), n, nnz);
    fflush(stdout);
    auto check = [&](const char* nm) {
      std::vector<double> y(n);
      CK(cudaMemcpy(y.data(), d_y, n * 8, cudaMemcpyDeviceToHost));
      double w = 0;
      for (int i = 0; i < n; ++i) {
        double e = std::fabs(y[i] - ref[i]) / std::max(1.0, std::fabs(ref[i]));
        if (!(e <= w)) w = std::isnan(e) ? 1e300 : e;
      }
      if (w > 1e-10) printf("  %s WRONG %g\n", nm, w);
    };
    cusparseHandle_t h;
    cusparseCreate(&h);
    char buf[256];
    snprintf(buf, sizeof buf, "%s", pl);
    std::vector<int> counts;
    for (char* t = strtok(buf, " "); t; t = strtok(nullptr, " ")) counts.push_back(atoi(t));
    for (int P : counts) {
      std::vector<Panel> ps;
      for (int p = 0; p < P; ++p)
        ps.push_back(make_panel(rp, ci, m.values, n, int(long(nc) * p / P), int(long(nc) * (p + 1) / P), sms));
      auto fm = [&] {
        for (int p = 0; p < P; ++p)
          csr_merge_spmv<double>(0, ps[p].mu, ps[p].nspan, ps[p].srow, ps[p].sf, ps[p].sl, 1.0, d_x, p == 0 ? 0.0 : 1.0,
                                 d_y);
      };
      CK(cudaMemset(d_y, 0xff, n * 8));
      fm();
      CK(cudaDeviceSynchronize());
      check("merge");
      const double tm = time_us(fm);
      // cuSPARSE ALG1 a panel (column indices kept global: x is the whole vector)
      std::vector<cusparseSpMatDescr_t> A(P);
      std::vector<void*> bufs(P);
      cusparseDnVecDescr_t vx, vy;
      cusparseCreateDnVec(&vx, nc, d_x, CUDA_R_64F);
      cusparseCreateDnVec(&vy, n, d_y, CUDA_R_64F);
      double one = 1, zero = 0;
      for (int p = 0; p < P; ++p) {
        cusparseCreateCsr(&A[p], n, nc, ps[p].nnz, ps[p].rp, ps[p].ci, ps[p].v, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                          CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F);
        size_t bs = 0;
        cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A[p], vx, &zero, vy, CUDA_R_64F,
                                CUSPARSE_SPMV_CSR_ALG1, &bs);
        CK(cudaMalloc(&bufs[p], std::max<size_t>(bs, 1)));
        cusparseSpMV_preprocess(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A[p], vx, &zero, vy, CUDA_R_64F,
                                CUSPARSE_SPMV_CSR_ALG1, bufs[p]);
      }
      auto fc = [&] {
        for (int p = 0; p < P; ++p)
          cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A[p], vx, p == 0 ? &zero : &one, vy, CUDA_R_64F,
                       CUSPARSE_SPMV_CSR_ALG1, bufs[p]);
      };
      CK(cudaMemset(d_y, 0xff, n * 8));
      fc();
      CK(cudaDeviceSynchronize());
      check("alg1");
      const double tc = time_us(fc);
      printf("%-24s panels %d  merge %9.2f us  alg1 %9.2f us\n", spec.c_str(), P, tm, tc);
      fflush(stdout);
      for (int p = 0; p < P; ++p) {
        cusparseDestroySpMat(A[p]);
        cudaFree(bufs[p]);
        free_panel(ps[p]);
      }
      cusparseDestroyDnVec(vx);
      cusparseDestroyDnVec(vy);
    }
    cusparseDestroy(h);
    cudaFree(d_x);
    cudaFree(d_y);
  }
}

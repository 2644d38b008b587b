// csr-merge kernel lab (not part of the library): times the library's
// csr-merge CUDA kernel, variants of it (h100-csr-merge-lab-variants.cuh,
// included as variants.cuh; h100-lab-util.cuh beside it) and cuSPARSE CSR ALG1/ALG2 on generated
// matrices in one process. Output: h100-csr-merge-lab-2026-11-26.txt,
// the first six runs built against cf61da3's headers (merge-v0 there is cf61da3's kernel),
// the last against 281f727's (this version: its default fix-up is 281f727's spanning_rows_kernel).
// Build (CUDA build tree build-cuda):
//   nvcc -O3 -std=c++17 -arch=sm_90 -Icore/include -Icore/inputs/include -Ibackends/cuda/include
//        -Ibuild-cuda/generated lab.cu -o lab build-cuda/core/libkspmv_inputs.a
//        build-cuda/core/libkspmv_core.a -lcusparse -lz -lmetis
// Run: CFGS="256x4 256x4s ..." ./lab SPEC...
#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kspmv/backends/cuda/csr_merge_cuda.hpp"
#include "kspmv/inputs/generators.hpp"

using namespace kspmv;
using namespace kspmv::cuda_tuned;
#include "h100-lab-util.cuh"  // CK, up, the batches timed

#include "variants.cuh"

// 20 runs to warm up, then the median of 15 batches of at least 1 ms.
template <class F>
double time_us(F&& f) {
  for (int i = 0; i < 20; ++i) f();
  CK(cudaDeviceSynchronize());
  const float ms = run_ms(f, 1);
  return median_batch_us(f, 15, std::max(5, int(1.0 / std::max(ms, 1e-3f))));
}

int main(int argc, char** argv) {
  const int unit_override = getenv("UNIT") ? atoi(getenv("UNIT")) : 0;
  for (int a = 1; a < argc; ++a) {
    const std::string spec = argv[a];
    HostCsr<double> m = kspmv::generate<double>(spec);
    const int n = m.nrows, nc = m.ncols;
    const long nnz = m.nnz();
    const LabProblem prob = lab_problem(m);
    const std::vector<int>&rp = prob.rp, &ci = prob.ci;
    const std::vector<double>&x = prob.x, &ref = prob.ref;
    const long items = long(n) + nnz;
    int sms;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    struct Units {
      MergeUnits<double> mu;
      int nspan;
      int *srow, *sf, *sl;
    };
    int *d_rp = up(rp), *d_ci = up(ci);
    double *d_v = up(m.values), *d_x = up(x), *d_y;
    CK(cudaMalloc(&d_y, n * sizeof(double)));
    auto make_units = [&](long per_unit) {
      const int units = int(merge_units(items, per_unit));
      const HostMergePlan plan = host_merge_plan(rp, n, nnz, per_unit, units);
      Units U;
      double *h, *t;
      CK(cudaMalloc(&h, units * sizeof(double)));
      CK(cudaMalloc(&t, units * sizeof(double)));
      U.mu = MergeUnits<double>{n, units, int(per_unit), up(plan.unit_row), up(plan.unit_nz), d_rp, d_ci, d_v, h, t};
      U.nspan = int(plan.span_row.size());
      U.srow = up(plan.span_row);
      U.sf = up(plan.span_first);
      U.sl = up(plan.span_last);
      return U;
    };
    auto free_units = [&](Units& U) {
      for (void* p : {(void*)U.mu.unit_row, (void*)U.mu.unit_nz, (void*)U.mu.head, (void*)U.mu.tail, (void*)U.srow,
                      (void*)U.sf, (void*)U.sl})
        cudaFree(p);
    };
    const long per_unit = merge_unit_items(items, sms, true, unit_override);
    Units U0 = make_units(per_unit);
    MergeUnits<double> mu = U0.mu;
    const int units = mu.units, nspan = U0.nspan;
    int maxlen = 0;
    for (int i = 0; i < n; ++i) maxlen = std::max(maxlen, rp[i + 1] - rp[i]);
    printf("# %s rows %d nnz %ld maxlen %d unit_items %ld units %d spans %d\n", spec.c_str(), n, nnz, maxlen,
           per_unit, units, nspan);

    auto check = [&](const char* name) {
      std::vector<double> y(n);
      CK(cudaMemcpy(y.data(), d_y, n * sizeof(double), cudaMemcpyDeviceToHost));
      double worst = 0;
      for (int i = 0; i < n; ++i) {
        double e = std::fabs(y[i] - ref[i]) / std::max(1.0, std::fabs(ref[i]));
        if (!(e <= worst)) worst = std::isnan(e) ? 1e300 : std::max(worst, e);
      }
      if (worst > 1e-10) printf("  %-14s WRONG rel err %g\n", name, worst);
      return worst <= 1e-10;
    };
    const double bytes = nnz * 12.0 + (n + 1) * 4.0 + n * 8.0 + nc * 8.0;
    auto report = [&](const char* name, double us) {
      printf("%-28s %-16s %10.2f us  %7.1f GB/s\n", spec.c_str(), name, us, bytes / us * 1e-3);
      fflush(stdout);
    };
    // cuSPARSE ALG1
    {
      cusparseHandle_t h;
      cusparseCreate(&h);
      cusparseSpMatDescr_t A;
      cusparseDnVecDescr_t vx, vy;
      cusparseCreateCsr(&A, n, nc, nnz, d_rp, d_ci, d_v, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                        CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F);
      cusparseCreateDnVec(&vx, nc, d_x, CUDA_R_64F);
      cusparseCreateDnVec(&vy, n, d_y, CUDA_R_64F);
      double one = 1, zero = 0;
      for (auto alg : {CUSPARSE_SPMV_CSR_ALG1, CUSPARSE_SPMV_CSR_ALG2}) {
        size_t bs = 0;
        cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, vx, &zero, vy, CUDA_R_64F, alg, &bs);
        void* buf;
        CK(cudaMalloc(&buf, std::max<size_t>(bs, 1)));
        cusparseSpMV_preprocess(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, vx, &zero, vy, CUDA_R_64F, alg, buf);
        auto f = [&] {
          cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, vx, &zero, vy, CUDA_R_64F, alg, buf);
        };
        CK(cudaMemset(d_y, 0xff, n * 8));
        f();
        CK(cudaDeviceSynchronize());
        const char* nm = alg == CUSPARSE_SPMV_CSR_ALG1 ? "cusparse-alg1" : "cusparse-alg2";
        check(nm);
        report(nm, time_us(f));
        cudaFree(buf);
      }
      cusparseDestroy(h);
    }
    run_variants(spec, mu, nspan, U0.srow, U0.sf, U0.sl, d_x, d_y, n, check, report);
    free_units(U0);
    // configurations: BLOCKxIPT[x] (x: x loads not allocated in L1)
    const char* cfgs = getenv("CFGS") ? getenv("CFGS") : "256x4 256x8";
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", cfgs);
    for (char* tok = strtok(buf, " "); tok; tok = strtok(nullptr, " ")) {
      int bl = 0, ipt = 0;
      sscanf(tok, "%dx%d", &bl, &ipt);
      const bool small = strchr(tok, 's') != nullptr;
      const char* ap = strchr(tok, 'a');
      const int abl = (ap ? atoi(ap + 1) : 0) | (strchr(tok, 'p') ? 8 : 0) | (strchr(tok, 'e') ? 16 : 0) |
                      (strchr(tok, 'E') ? 32 : 0);
      const bool stagey = strchr(tok, 'y') != nullptr;
      const bool nofix = strchr(tok, 'f') != nullptr;
      const bool look = strchr(tok, 'l') != nullptr;
      Launch2 L = look ? nullptr : pick2(bl, ipt, small, stagey);
      const bool lastarr = strchr(tok, 'z') != nullptr;
      Launch4 L4 = look ? (lastarr ? pick5(bl, ipt) : pick4(bl, ipt)) : nullptr;
      if (!L && !L4) continue;
      Units U = make_units(long(bl) * ipt);
      int* d_flag;
      CK(cudaMalloc(&d_flag, (U.mu.units + 1) * sizeof(int)));
      CK(cudaMemset(d_flag, 0, (U.mu.units + 1) * sizeof(int)));
      auto f = [&] {
        if (L4) {
          L4(U.mu, d_flag, d_x, d_y);
          return;
        }
        L(U.mu, d_x, d_y, abl);
        if (U.nspan > 0 && !nofix && strchr(tok, 'p'))
          launch_fixup_pdl(U.nspan, U.srow, U.sf, U.sl, U.mu.head, U.mu.tail, d_y);
        else if (U.nspan > 0 && !nofix)
          spanning_rows_kernel<double><<<blocks_for(long(U.nspan), 256), 256>>>(
              U.nspan, U.srow, U.sf, U.sl, U.mu.head, U.mu.tail, 1.0, 0.0, d_y);
      };
      CK(cudaMemset(d_y, 0xff, n * 8));
      f();
      CK(cudaDeviceSynchronize());
      std::string nm = std::string("v2-") + tok;
      if (!(abl & 7) && !nofix) {
        check(nm.c_str());
        std::vector<double> y1(n), y2(n);
        CK(cudaMemcpy(y1.data(), d_y, n * 8, cudaMemcpyDeviceToHost));
        for (int rep = 0; rep < 3; ++rep) {
          CK(cudaMemset(d_y, 0xff, n * 8));
          f();
          CK(cudaMemcpy(y2.data(), d_y, n * 8, cudaMemcpyDeviceToHost));
          if (memcmp(y1.data(), y2.data(), n * 8) != 0) printf("  %s NOT DETERMINISTIC\n", nm.c_str());
        }
      }
      report(nm.c_str(), time_us(f));
      free_units(U);
      cudaFree(d_flag);
    }
    for (void* p : {(void*)d_rp, (void*)d_ci, (void*)d_v, (void*)d_x, (void*)d_y}) cudaFree(p);
  }
  return 0;
}

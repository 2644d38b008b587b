// What the device labs in docs/perf share (h100-csr-merge-lab-harness.cu,
// h100-column-panels-lab.cu): a CUDA call checked, a host vector copied to
// a new device array. Not part of the library.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                    \
  do {                                                                           \
    cudaError_t e_ = (x);                                                        \
    if (e_ != cudaSuccess) {                                                     \
      fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      exit(1);                                                                   \
    }                                                                            \
  } while (0)

template <class T>
T* up(const std::vector<T>& v) {
  T* p;
  CK(cudaMalloc(&p, std::max<size_t>(1, v.size()) * sizeof(T)));
  CK(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return p;
}

// A merge path's partition made on the host (as csr-merge's conversion
// makes it on the device): where each unit of `per_unit` items starts
// (row, entry), and the rows crossing units with their first and last unit.
struct HostMergePlan {
  std::vector<int> unit_row, unit_nz, span_row, span_first, span_last;
};
inline HostMergePlan host_merge_plan(const std::vector<int>& rp, int n, long nnz, long per_unit, int units) {
  const long items = long(n) + nnz;
  HostMergePlan m;
  m.unit_row.resize(units + 1);
  m.unit_nz.resize(units + 1);
  for (int u = 0; u <= units; ++u) {
    const long du = std::min<long>(long(u) * per_unit, items);
    int lo = int(std::max<long>(0, du - nnz)), hi = int(std::min<long>(du, n));
    while (lo < hi) {
      const int mid = (lo + hi) / 2;
      if (rp[mid + 1] <= du - mid - 1)
        lo = mid + 1;
      else
        hi = mid;
    }
    m.unit_row[u] = lo;
    m.unit_nz[u] = int(du - lo);
  }
  for (int i = 0; i < n; ++i) {
    const long f = (long(i) + rp[i]) / per_unit, l = (long(i) + rp[i + 1]) / per_unit;
    if (f != l) {
      m.span_row.push_back(i);
      m.span_first.push_back(int(f));
      m.span_last.push_back(int(l));
    }
  }
  return m;
}

// A generated matrix's offsets and columns as int vectors, x (1 + (j % 7)
// / 8) and the reference y = A x on the host.
struct LabProblem {
  std::vector<int> rp, ci;
  std::vector<double> x, ref;
};
template <class Csr>
LabProblem lab_problem(const Csr& m) {
  LabProblem p;
  p.rp.assign(m.row_ptr.begin(), m.row_ptr.end());
  p.ci.assign(m.col_idx.begin(), m.col_idx.end());
  p.x.resize(m.ncols);
  p.ref.resize(m.nrows);
  for (int j = 0; j < m.ncols; ++j) p.x[j] = 1.0 + (j % 7) * 0.125;
  for (int i = 0; i < m.nrows; ++i) {
    double s = 0;
    for (int k = p.rp[i]; k < p.rp[i + 1]; ++k) s += m.values[k] * p.x[p.ci[k]];
    p.ref[i] = s;
  }
  return p;
}

// Milliseconds `reps` back-to-back runs of f take between two events.
template <class F>
float run_ms(F&& f, int reps) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  cudaEventRecord(a);
  for (int r = 0; r < reps; ++r) f();
  cudaEventRecord(b);
  cudaEventSynchronize(b);
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms;
}
// The median over `batches` batches of `reps` runs of one run's time, us.
template <class F>
double median_batch_us(F&& f, int batches, int reps) {
  std::vector<double> t;
  for (int s = 0; s < batches; ++s) t.push_back(run_ms(f, reps) * 1000.0 / reps);
  CK(cudaGetLastError());
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

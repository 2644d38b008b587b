// A PETSc matrix backed by kspmv.
//
//   Mat A;                         // assembled MATAIJ (MATSEQAIJ or MATMPIAIJ, or a subtype)
//   Mat K;
//   PetscCall(kspmv::petsc::MatCreateKspmv(A, &K));   // or (A, diag_format, offdiag_format, options, &K)
//   PetscCall(KSPSetOperators(ksp, K, K));   // CG, GMRES, Jacobi...
//   ...                                       // new values assembled into A, same pattern:
//   PetscCall(kspmv::petsc::MatKspmvRefresh(K));
//   PetscCall(MatDestroy(&K));
//
// K is a MATSHELL of A's sizes and layout. Each rank's rows are two kspmv
// matrices, as MATMPIAIJ splits them: the diagonal block (the columns the
// rank owns: square where rows and columns are laid out alike, so every
// format may hold it, PKT and EHYB included) and the off-diagonal block
// (the ghost columns, numbered by the ones used: a CSR-family format or
// COO, by default COO where few rows hold ghost columns). MatMult starts
// the halo exchange (a VecScatter from x to a ghost vector, PETSc's own),
// applies the diagonal block while it is in flight, then adds the
// off-diagonal block. K supports MatMult, MatGetDiagonal
// (for Jacobi), MatView, MatDuplicate (MAT_COPY_VALUES: converted again
// from the AIJ matrix's current values) and, as every MATSHELL does,
// MatMultAdd (MatMult, then VecAXPY), MatScale and MatShift, and
// MatMultTranspose (each block's kspmv transpose, built on the device at
// the first call; the ghost part added back through the reverse scatter).
// On a MATSEQAIJ (one rank) the whole matrix is the diagonal block.
//
// Vectors: K's vectors are of the AIJ matrix's vector type (MatCreateVecs
// on K gives them). Where kspmv runs on a device, device vectors are read
// and written in place: VECKOKKOS through VecGetKokkosView (from a
// MATAIJKOKKOS matrix), VECCUDA/VECHIP through VecGetArray*AndMemType
// (MATAIJCUSPARSE...); the halo arrives in a ghost vector of the same type
// (PETSc's scatter). Host vectors (MATAIJ) are copied to the device and
// back at every product.
//
// Streams: where PETSc has Kokkos (3.20 on), K's products run on PETSc's
// own Kokkos execution space, so that on VECKOKKOS vectors they are
// ordered with PETSc's vector work by the stream and neither side waits
// for the other (MatMult returns once its kernels are queued, like
// MATAIJKOKKOS's). Other device vectors are fenced around each product.
//
// Kokkos: kspmv runs on Kokkos' default execution space. If Kokkos is not
// initialized when the first K is created, it is initialized then (by
// PETSc, on PETSc's device, where PETSc has Kokkos) and finalized in
// PetscFinalize(); destroy every K before PetscFinalize().
//
// Errors follow PETSc's conventions: each function returns a
// PetscErrorCode (use PetscCall). kspmv's own errors (a format that cannot
// hold a block, an index overflow, memory) become PETSc errors carrying
// kspmv's message, on every rank of A's communicator (a block one rank
// cannot convert fails the call everywhere); on an error nothing is
// created or changed.
#pragma once

#include <petscmat.h>

#include "kspmv/core/format.hpp"
#include "kspmv/core/options.hpp"

namespace kspmv::petsc {

// Creates *out from the assembled AIJ matrix `aij` (collective on its
// communicator). The diagonal block is converted to `diag_format` (any
// format, or Format::Auto: the performance model's pick for this rank's
// block), the off-diagonal block to `offdiag_format` (csr, csr-scalar,
// csr-vector, csr-adaptive, kk-crs or coo; or Format::Auto: coo where few
// of the rank's rows hold ghost columns, as on a partitioned mesh, so the
// block's product touches only those rows; csr where most do). `options` go to both
// conversions; options.output_order must be OutputOrder::Caller, and
// options.value_map (on by default) is what MatKspmvRefresh() needs.
// K keeps a reference to `aij` (to re-read its values), released by
// MatDestroy(&K).
PetscErrorCode MatCreateKspmv(Mat aij, kspmv::Format diag_format, kspmv::Format offdiag_format,
                              const kspmv::ConvertOptions& options, Mat* out);
// The defaults: Format::Auto for both blocks, default options.
PetscErrorCode MatCreateKspmv(Mat aij, Mat* out);

// Re-reads the values of the AIJ matrix K was created from (re-assembled
// with the same nonzero pattern) into both blocks in place (kspmv's
// update_values: no conversion, no allocation beyond a device copy of the
// values where kspmv runs off the host). A changed pattern (PETSc's
// nonzero state, the blocks' entry counts or the ghost columns) or an
// unassembled AIJ matrix is an error, with K unchanged. Collective.
PetscErrorCode MatKspmvRefresh(Mat K);

// PETSC_TRUE when K was made by MatCreateKspmv.
PetscErrorCode MatIsKspmv(Mat K, PetscBool* flg);

// The formats the two blocks hold on this rank (Format::Auto resolved to
// the model's pick; an empty block reports the format asked for). Not
// collective.
PetscErrorCode MatKspmvGetFormats(Mat K, kspmv::Format* diag, kspmv::Format* offdiag);

// Seconds spent by this rank in K's MatMults (MatMultAdd's included) since creation
// or the last reset: the whole product, the halo exchange (the host's time
// in it: VecScatterBegin and VecScatterEnd, or the direct exchange's pack,
// posts and wait, which the diagonal block may hide), the diagonal block
// and the off-diagonal block. The blocks are
// timed where they are fenced: always on the host and with vectors that
// are not stream-ordered, and on PETSc's stream only with block timings on
// (MatKspmvSetBlockTimings), which fences each block (device time plus
// launch) at a cost of a few microseconds a product; otherwise they read 0
// and `total` is the host's time to queue the products. Not collective.
struct MultTimings {
  PetscInt mults = 0;
  double total = 0;
  double exchange = 0;
  double diagonal = 0;
  double offdiagonal = 0;
  double conversion = 0;  // both blocks' conversions (creation), seconds
  double refresh = 0;     // the last MatKspmvRefresh, seconds (fenced)
  // The blocks were read from PETSc's device arrays (MATAIJKOKKOS with
  // kspmv on that device): set-up and refresh with no trip through the host.
  bool device_input = false;
};
PetscErrorCode MatKspmvGetTimings(Mat K, MultTimings* t);
PetscErrorCode MatKspmvResetTimings(Mat K);
// Block timings on (PETSC_TRUE) or off (the default): see MultTimings.
// Not collective.
PetscErrorCode MatKspmvSetBlockTimings(Mat K, PetscBool on);
// The order of MatMult's work with Exchange::Scatter (below; the direct
// exchanges always pack first): PETSC_FALSE (the default) starts the halo
// exchange, applies the diagonal block while it is in flight, then the
// off-diagonal block; PETSC_TRUE queues the diagonal block first and then
// exchanges. PETSc's scatter waits for the stream before it hands the
// halo to MPI, so with an MPI that moves device buffers itself (CUDA-aware)
// the exchange barely overlaps either way and the diagonal block first
// saves a launch gap (1-5% a MatMult on 2-4 H200s); with an MPI that
// stages the halo through the host (-use_gpu_aware_mpi 0) keep the
// default, which overlaps that staging with the block. The options
// database's -mat_kspmv_diagonal_first sets it at creation. Not collective.
PetscErrorCode MatKspmvSetDiagonalFirst(Mat K, PetscBool on);

// How MatMult fetches the ghost values (the x entries of other ranks that
// the off-diagonal block reads):
//   Scatter: PETSc's VecScatter, in the order MatKspmvSetDiagonalFirst
//     sets.
//   Direct (the default): kspmv's own exchange. It packs the values the
//     neighbours read on a stream of its own at the device's highest
//     priority and queues the diagonal block behind the pack on PETSc's
//     stream; the off-diagonal block's rows with entries are applied on
//     that stream as soon as the ghost values are in, while the diagonal
//     block still runs, and only adding their sums into y waits for it.
//     The values move device to device where every rank that shares ghost
//     values is on one node and the GPUs map each other's memory (the
//     route DirectPeer names), else through the host (DirectStaged's).
//     The ranks choose together at the first product.
//   DirectPeer: the pack writes straight into each neighbour's ghost
//     buffer, mapped by CUDA IPC, ordered by interprocess events; MPI
//     carries only empty messages and the host never waits for the device.
//     An error (PETSC_ERR_SUP_SYS at the first product, on every rank)
//     where some rank cannot map its neighbours' memory; refused on a host
//     build.
//   DirectStaged: the pack is copied to pinned host memory on kspmv's
//     stream, the host waits for that alone and sends and receives with
//     MPI point to point; the ghost values go back on that stream. Works
//     with any MPI.
//   DirectGpuAware: the device buffers handed to MPI (a GPU-aware MPI:
//     PETSc's -use_gpu_aware_mpi on). Open MPI 4.1's CUDA path copies on
//     the legacy default stream, which waits for the diagonal block, so
//     this measured slower than the staged route (2 H200s).
// The direct exchanges are planned at the first product (collective, a
// few messages); MatMultTranspose goes through PETSc's scatter. On a host
// build Direct, DirectStaged and DirectGpuAware are the same.
// The options database's -mat_kspmv_exchange
// scatter|direct|direct_gpu_aware|direct_peer|direct_staged sets it at
// creation. Every rank must choose the same. Not collective; MatDestroy
// of a matrix whose exchange went device to device is collective, as
// PETSc's MatDestroy is.
enum class Exchange { Scatter, Direct, DirectGpuAware, DirectPeer, DirectStaged };
PetscErrorCode MatKspmvSetExchange(Mat K, Exchange e);
PetscErrorCode MatKspmvGetExchange(Mat K, Exchange* e);

}  // namespace kspmv::petsc

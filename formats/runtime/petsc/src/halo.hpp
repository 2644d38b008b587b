// kspmv::petsc's own halo exchange for MatMult (Exchange::Direct in
// kspmv/petsc/mat.hpp), beside PETSc's VecScatter.
//
// Why: PETSc's VecScatterBegin packs the ghost values on PETSc's stream and
// waits on the host for that stream before it hands the buffers to MPI. The
// diagonal block queued on the same stream either waits behind that (the
// exchange first) or makes the scatter wait for it (the diagonal block
// first), so a product pays the pack, the wait, MPI's posting and the
// unpack beside its blocks (38-54 us a MatMult on 2-4 H200s). Here the pack
// runs on a stream of kspmv's own at the device's highest priority, so its
// few blocks are scheduled ahead of the diagonal block queued right after
// it on PETSc's stream; the host waits for the pack alone, posts MPI's
// sends, and the values arrive straight in the ghost buffer (no unpack:
// the ghost columns are ordered by owner). The off-diagonal block's rows
// with entries are then applied on the same stream into a buffer of their
// own while the diagonal block still runs (mat.cpp), and only adding
// those sums into y waits for the block. The diagonal block runs through
// all of it.
//
// The halo is staged through pinned host buffers by copies on that stream
// (Exchange::Direct), or the device buffers go to a GPU-aware MPI
// (Exchange::DirectGpuAware). Staging is the default because it keeps all
// device work on kspmv's streams: Open MPI 4.1's CUDA path copies on the
// legacy default stream, which waits for PETSc's (blocking) stream and so
// for the diagonal block (measured on 2 H200s: 178 us a MatMult against
// 139 staged). On a host build both streams are the host and the same code
// runs, as on one stream.
#pragma once

#include <petscsys.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

// PETSc's own switch for device buffers in MPI (petsc/private/petscimpl.h;
// PetscInitialize sets it from -use_gpu_aware_mpi and its check of the
// MPI). Exchange::DirectGpuAware is refused where it is off.
PETSC_EXTERN PetscBool use_gpu_aware_mpi;

namespace kspmv::petsc::detail {

#if defined(KOKKOS_ENABLE_CUDA)
// A CUDA call's failure as a PETSc error (PETSc's own PetscCallCUDA needs a
// PETSc built with CUDA).
#define KSPMV_PETSC_CUDA(call)                                                                          \
  do {                                                                                                 \
    const cudaError_t kspmv_cuda_err_ = (call);                                                        \
    PetscCheck(kspmv_cuda_err_ == cudaSuccess, PETSC_COMM_SELF, PETSC_ERR_LIB, "kspmv matrix: %s: %s", #call, \
               cudaGetErrorString(kspmv_cuda_err_));                                                   \
  } while (0)
#endif

class HaloExchange {
 public:
  using Exec = Kokkos::DefaultExecutionSpace;
  using Space = Exec::memory_space;
  using Values = Kokkos::View<PetscScalar*, Space>;
  static constexpr bool kOnHost = std::is_same<Space, Kokkos::HostSpace>::value;
#if defined(KOKKOS_ENABLE_CUDA)
  using StageSpace = Kokkos::CudaHostPinnedSpace;
#else
  using StageSpace = Kokkos::HostSpace;
#endif
  using Staged = Kokkos::View<PetscScalar*, StageSpace>;

  HaloExchange() = default;
  HaloExchange(const HaloExchange&) = delete;
  HaloExchange& operator=(const HaloExchange&) = delete;
  ~HaloExchange() { release(); }

  // Planned, handing MPI device buffers or not.
  bool planned(bool device_buffers) const { return comm_ != MPI_COMM_NULL && device_buffers_ == device_buffers; }
  // The ghost values (column j of the off-diagonal block is ghost(j)),
  // valid after finish() for work queued on side() (join() orders another
  // stream after it).
  const Values& ghost() const { return ghost_; }

  // Collective over comm. garray: the ghost columns' global numbers,
  // ordered by owner (PETSc's MPIAIJ keeps them sorted); col_ranges: the
  // column ownership ranges (size + 1 entries), this rank's own
  // [cstart, cend). device_buffers: MPI gets the device buffers (a
  // GPU-aware MPI), else they are staged through pinned host buffers.
  PetscErrorCode plan(MPI_Comm comm, const std::vector<PetscInt>& garray, const PetscInt* col_ranges,
                      bool device_buffers) {
    PetscMPIInt size = 0, rank = 0;
    PetscFunctionBegin;
    release();
    PetscCallMPI(MPI_Comm_size(comm, &size));
    PetscCallMPI(MPI_Comm_rank(comm, &rank));
    const PetscInt cstart = col_ranges[rank], cend = col_ranges[rank + 1];
    // Ghosts per owner, each owner's a contiguous run of garray.
    std::vector<PetscMPIInt> recv_count(static_cast<std::size_t>(size), 0), send_count(recv_count.size(), 0);
    PetscMPIInt last_owner = 0;
    for (PetscInt g : garray) {
      const auto owner =
          static_cast<PetscMPIInt>(std::upper_bound(col_ranges, col_ranges + size + 1, g) - col_ranges - 1);
      PetscCheck(owner >= 0 && owner < size && owner != rank, PETSC_COMM_SELF, PETSC_ERR_PLIB,
                 "kspmv matrix: ghost column %" PetscInt_FMT " is not another rank's column", g);
      PetscCheck(owner >= last_owner, PETSC_COMM_SELF, PETSC_ERR_PLIB,
                 "kspmv matrix: the ghost columns are not ordered by owner");
      last_owner = owner;
      ++recv_count[static_cast<std::size_t>(owner)];
    }
    PetscCallMPI(MPI_Alltoall(recv_count.data(), 1, MPI_INT, send_count.data(), 1, MPI_INT, comm));
    // Each owner learns which of its columns a neighbour reads.
    std::vector<PetscMPIInt> recv_displ(recv_count.size() + 1, 0), send_displ(send_count.size() + 1, 0);
    for (std::size_t r = 0; r < recv_count.size(); ++r) {
      recv_displ[r + 1] = recv_displ[r] + recv_count[r];
      send_displ[r + 1] = send_displ[r] + send_count[r];
    }
    std::vector<PetscInt> wanted(static_cast<std::size_t>(send_displ.back()));
    PetscCallMPI(MPI_Alltoallv(garray.data(), recv_count.data(), recv_displ.data(), MPIU_INT, wanted.data(),
                               send_count.data(), send_displ.data(), MPIU_INT, comm));
    auto send_index = Kokkos::View<std::int64_t*, Space>(Kokkos::ViewAllocateWithoutInitializing("kspmv::petsc::halo_send_index"),
                                                         wanted.size());
    auto host_index = Kokkos::create_mirror_view(send_index);
    for (std::size_t i = 0; i < wanted.size(); ++i) {
      PetscCheck(wanted[i] >= cstart && wanted[i] < cend, PETSC_COMM_SELF, PETSC_ERR_PLIB,
                 "kspmv matrix: a neighbour asked for column %" PetscInt_FMT ", not this rank's", wanted[i]);
      host_index(i) = wanted[i] - cstart;
    }
    Kokkos::deep_copy(send_index, host_index);
    recvs_.clear();
    sends_.clear();
    for (PetscMPIInt r = 0; r < size; ++r) {
      const auto ur = static_cast<std::size_t>(r);
      if (recv_count[ur]) recvs_.push_back({r, recv_displ[ur], recv_count[ur]});
      if (send_count[ur]) sends_.push_back({r, send_displ[ur], send_count[ur]});
    }
    send_index_ = send_index;
    send_ = Values(Kokkos::ViewAllocateWithoutInitializing("kspmv::petsc::halo_send"), wanted.size());
    ghost_ = Values(Kokkos::ViewAllocateWithoutInitializing("kspmv::petsc::halo_ghost"), garray.size());
    device_buffers_ = device_buffers;
    staged_ = !kOnHost && !device_buffers;
    if (staged_) {
      send_staged_ = Staged(Kokkos::ViewAllocateWithoutInitializing("kspmv::petsc::halo_send_staged"), wanted.size());
      ghost_staged_ = Staged(Kokkos::ViewAllocateWithoutInitializing("kspmv::petsc::halo_ghost_staged"), garray.size());
    }
    requests_.assign(recvs_.size() + sends_.size(), MPI_REQUEST_NULL);
#if defined(KOKKOS_ENABLE_CUDA)
    int least = 0, greatest = 0;
    KSPMV_PETSC_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    KSPMV_PETSC_CUDA(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, greatest));
    KSPMV_PETSC_CUDA(cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming));
    KSPMV_PETSC_CUDA(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
    side_.emplace(stream_);
#else
    side_.emplace();
#endif
    // A communicator of its own: its messages never meet PETSc's.
    PetscCallMPI(MPI_Comm_dup(comm, &comm_));
    PetscFunctionReturn(0);
  }

  // Queues the pack of x's values that the neighbours read on the side
  // stream, after the work queued on `space` so far (x's producer and the
  // last product's off-diagonal block, which read the ghost buffer).
  // Returns before the pack has run.
  template <class XView>
  PetscErrorCode begin(const Exec& space, const XView& x) {
    PetscFunctionBegin;
#if defined(KOKKOS_ENABLE_CUDA)
    KSPMV_PETSC_CUDA(cudaEventRecord(ready_, space.cuda_stream()));
    KSPMV_PETSC_CUDA(cudaStreamWaitEvent(stream_, ready_, 0));
#else
    // (Without CUDA's events: the host waits. On a host build a no-op.)
    space.fence();
#endif
    const auto send = send_;
    const auto index = send_index_;
    Kokkos::parallel_for(
        "kspmv::petsc::halo_pack", Kokkos::RangePolicy<Exec>(*side_, 0, send.extent(0)),
        KOKKOS_LAMBDA(const std::int64_t i) { send(i) = x(index(i)); });
    if (staged_) Kokkos::deep_copy(*side_, send_staged_, send_);
    PetscFunctionReturn(0);
  }

  // Waits for the pack (the side stream alone), then posts the receives
  // (the ghost buffer is free: the last product's off-diagonal block ran
  // before the pack) and the sends.
  PetscErrorCode send() {
    PetscFunctionBegin;
    side_->fence();
    PetscScalar* into = staged_ ? ghost_staged_.data() : ghost_.data();
    for (std::size_t i = 0; i < recvs_.size(); ++i)
      PetscCallMPI(MPI_Irecv(into + recvs_[i].offset, recvs_[i].count, MPIU_SCALAR, recvs_[i].rank, kTag, comm_,
                             &requests_[i]));
    const PetscScalar* from = staged_ ? send_staged_.data() : send_.data();
    for (std::size_t i = 0; i < sends_.size(); ++i)
      PetscCallMPI(MPI_Isend(from + sends_[i].offset, sends_[i].count, MPIU_SCALAR, sends_[i].rank, kTag, comm_,
                             &requests_[recvs_.size() + i]));
    PetscFunctionReturn(0);
  }

  // Waits for every message; staged values are queued to the device on
  // the side stream, where the work that reads ghost() goes next.
  PetscErrorCode finish() {
    PetscFunctionBegin;
    PetscCallMPI(MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE));
    if (staged_) Kokkos::deep_copy(*side_, ghost_, ghost_staged_);
    PetscFunctionReturn(0);
  }

  // The stream for work on the ghost values beside the diagonal block (at
  // the device's highest priority).
  const Exec& side() const { return *side_; }

  // Work queued on `space` from now on follows what is queued on the side
  // stream so far.
  PetscErrorCode join(const Exec& space) {
    PetscFunctionBegin;
#if defined(KOKKOS_ENABLE_CUDA)
    KSPMV_PETSC_CUDA(cudaEventRecord(done_, stream_));
    KSPMV_PETSC_CUDA(cudaStreamWaitEvent(space.cuda_stream(), done_, 0));
#else
    (void)space;
    side_->fence();
#endif
    PetscFunctionReturn(0);
  }

 private:
  // Errors here cannot be reported (a destructor calls it).
  void release() {
    if (comm_ != MPI_COMM_NULL) (void)MPI_Comm_free(&comm_);
    comm_ = MPI_COMM_NULL;
    side_.reset();
#if defined(KOKKOS_ENABLE_CUDA)
    if (ready_) (void)cudaEventDestroy(ready_);
    if (done_) (void)cudaEventDestroy(done_);
    if (stream_) (void)cudaStreamDestroy(stream_);
    ready_ = done_ = nullptr;
    stream_ = nullptr;
#endif
  }

  struct Message {
    PetscMPIInt rank, offset, count;
  };
  static constexpr int kTag = 7401;
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::vector<Message> recvs_, sends_;
  std::vector<MPI_Request> requests_;
  Kokkos::View<std::int64_t*, Space> send_index_;
  Values send_, ghost_;
  Staged send_staged_, ghost_staged_;
  bool staged_ = false, device_buffers_ = false;
  std::optional<Exec> side_;
#if defined(KOKKOS_ENABLE_CUDA)
  cudaStream_t stream_ = nullptr;
  cudaEvent_t ready_ = nullptr, done_ = nullptr;
#endif
};

}  // namespace kspmv::petsc::detail

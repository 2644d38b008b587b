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
// The halo moves one of three ways (Route):
// - Peer (CUDA, every neighbour on this node): the pack kernel writes
//   straight into each neighbour's ghost buffer, mapped here by CUDA IPC,
//   over NVLink or PCIe. No host copy and no MPI in the data path: the
//   order between the ranks' streams is kept by interprocess events (the
//   writer's "sent", the reader's "consumed", so a pack never overwrites
//   ghost values a neighbour's off-diagonal block still reads), and MPI
//   carries only empty messages that say an event has been recorded (a
//   stream can wait only for a record already issued). The host never
//   waits for the device.
// - Staged: pinned host buffers, filled and drained by copies on that
//   stream, and MPI point to point between them. Works with any MPI.
// - GpuAware: the device buffers go to a GPU-aware MPI. Open MPI 4.1's
//   CUDA path copies on the legacy default stream, which waits for PETSc's
//   (blocking) stream and so for the diagonal block (measured on 2 H200s:
//   178 us a MatMult against 139 staged).
// On a host build both streams are the host and the Staged code runs, as
// on one stream.
#pragma once

#include <petscsys.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
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

// The Peer route: where the pack's entries [first, the next target's
// first) go, in a neighbour's ghost buffer. (At namespace scope: a device
// lambda cannot capture a class's private type.)
struct HaloTarget {
  PetscScalar* to;
  std::int64_t first;
};

class HaloExchange {
 public:
  // How the halo moves (see above). PeerElseStaged takes Peer where every
  // rank can (decided together at plan time), else Staged.
  enum class Route { Staged, GpuAware, Peer, PeerElseStaged };

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

  // Planned for this route.
  bool planned(Route asked) const { return comm_ != MPI_COMM_NULL && asked_ == asked; }
  // The route the plan took (Peer or Staged for PeerElseStaged).
  Route route() const { return route_; }
  // The ghost values (column j of the off-diagonal block is ghost(j)),
  // valid after finish() for work queued on side() (join() orders another
  // stream after it).
  const Values& ghost() const { return ghost_; }

  // Collective over comm. garray: the ghost columns' global numbers,
  // ordered by owner (PETSc's MPIAIJ keeps them sorted); col_ranges: the
  // column ownership ranges (size + 1 entries), this rank's own
  // [cstart, cend). A Peer route that some rank cannot take is an error
  // on every rank (PETSC_ERR_SUP_SYS), nothing kept.
  PetscErrorCode plan(MPI_Comm comm, const std::vector<PetscInt>& garray, const PetscInt* col_ranges, Route asked) {
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
    ghost_count_ = garray.size();
    asked_ = asked;
    route_ = asked == Route::GpuAware ? Route::GpuAware : Route::Staged;
#if defined(KOKKOS_ENABLE_CUDA)
    if (asked == Route::Peer || asked == Route::PeerElseStaged) {
      bool mapped = false;
      map_error_.clear();
      PetscCall(map_peers(&mapped));
      if (mapped) route_ = Route::Peer;
      if (!mapped && asked == Route::Peer) {
        release();
        SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP_SYS,
                "kspmv matrix: Exchange::DirectPeer needs every rank that shares ghost values on one node, with GPUs "
                "that map each other's memory (CUDA IPC); some cannot here (this rank: %s). Exchange::Direct falls "
                "back to host staging by itself",
                map_error_.empty() ? "no error; another rank failed" : map_error_.c_str());
      }
    }
#endif
    if (route_ != Route::Peer) {
      send_ = Values(Kokkos::ViewAllocateWithoutInitializing("kspmv::petsc::halo_send"), wanted.size());
      ghost_ = Values(Kokkos::ViewAllocateWithoutInitializing("kspmv::petsc::halo_ghost"), garray.size());
    }
    staged_ = !kOnHost && route_ == Route::Staged;
    if (staged_) {
      send_staged_ = Staged(Kokkos::ViewAllocateWithoutInitializing("kspmv::petsc::halo_send_staged"), wanted.size());
      ghost_staged_ = Staged(Kokkos::ViewAllocateWithoutInitializing("kspmv::petsc::halo_ghost_staged"), garray.size());
    }
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
    const auto index = send_index_;
#if defined(KOKKOS_ENABLE_CUDA)
    if (route_ == Route::Peer) {
      // Each neighbour's ghost buffer is free once its off-diagonal block
      // of the last product has read it: its "consumed" record, which its
      // empty message says has been issued.
      PetscCallMPI(MPI_Waitall(static_cast<int>(notes_.size()), notes_.data(), MPI_STATUSES_IGNORE));
      notes_.clear();
      for (std::size_t d = 0; d < sends_.size() && packs_ > 0; ++d) {
        PetscCallMPI(MPI_Recv(nullptr, 0, MPI_BYTE, sends_[d].rank, kTagConsumed, comm_, MPI_STATUS_IGNORE));
        KSPMV_PETSC_CUDA(cudaStreamWaitEvent(stream_, peers_[d].consumed, 0));
      }
      // One kernel writes every neighbour's values into its buffer (few
      // neighbours: each entry finds its own by a short scan).
      const auto targets = targets_;
      const auto ntargets = static_cast<int>(sends_.size());
      Kokkos::parallel_for(
          "kspmv::petsc::halo_pack_to_peers", Kokkos::RangePolicy<Exec>(*side_, 0, index.extent(0)),
          KOKKOS_LAMBDA(const std::int64_t i) {
            int d = 0;
            while (d + 1 < ntargets && targets(d + 1).first <= i) ++d;
            targets(d).to[i - targets(d).first] = x(index(i));
          });
      KSPMV_PETSC_CUDA(cudaEventRecord(sent_, stream_));
      for (const Message& m : sends_) {
        notes_.push_back(MPI_REQUEST_NULL);
        PetscCallMPI(MPI_Isend(nullptr, 0, MPI_BYTE, m.rank, kTagSent, comm_, &notes_.back()));
      }
      ++packs_;
      PetscFunctionReturn(0);
    }
#endif
    const auto send = send_;
    Kokkos::parallel_for(
        "kspmv::petsc::halo_pack", Kokkos::RangePolicy<Exec>(*side_, 0, send.extent(0)),
        KOKKOS_LAMBDA(const std::int64_t i) { send(i) = x(index(i)); });
    if (staged_) Kokkos::deep_copy(*side_, send_staged_, send_);
    PetscFunctionReturn(0);
  }

  // Waits for the pack (the side stream alone), then posts the receives
  // (the ghost buffer is free: the last product's off-diagonal block ran
  // before the pack) and the sends. (Nothing to do on the Peer route.)
  PetscErrorCode send() {
    PetscFunctionBegin;
    if (route_ == Route::Peer) PetscFunctionReturn(0);
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
#if defined(KOKKOS_ENABLE_CUDA)
    if (route_ == Route::Peer) {
      // The side stream waits for each neighbour's pack into this rank's
      // buffer, once its message says the "sent" record is issued.
      for (std::size_t r = 0; r < recvs_.size(); ++r) {
        PetscCallMPI(MPI_Recv(nullptr, 0, MPI_BYTE, recvs_[r].rank, kTagSent, comm_, MPI_STATUS_IGNORE));
        KSPMV_PETSC_CUDA(cudaStreamWaitEvent(stream_, sources_[r], 0));
      }
      PetscFunctionReturn(0);
    }
#endif
    PetscCallMPI(MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE));
    if (staged_) Kokkos::deep_copy(*side_, ghost_, ghost_staged_);
    PetscFunctionReturn(0);
  }

  // The stream for work on the ghost values beside the diagonal block (at
  // the device's highest priority).
  const Exec& side() const { return *side_; }

  // Work queued on `space` from now on follows what is queued on the side
  // stream so far, which must include every read of ghost() for this
  // product (on the Peer route the neighbours' next packs overwrite it
  // after this point).
  PetscErrorCode join(const Exec& space) {
    PetscFunctionBegin;
#if defined(KOKKOS_ENABLE_CUDA)
    KSPMV_PETSC_CUDA(cudaEventRecord(done_, stream_));
    KSPMV_PETSC_CUDA(cudaStreamWaitEvent(space.cuda_stream(), done_, 0));
    if (route_ == Route::Peer && !recvs_.empty()) {
      KSPMV_PETSC_CUDA(cudaEventRecord(consumed_, stream_));
      for (const Message& m : recvs_) {
        notes_.push_back(MPI_REQUEST_NULL);
        PetscCallMPI(MPI_Isend(nullptr, 0, MPI_BYTE, m.rank, kTagConsumed, comm_, &notes_.back()));
      }
    }
#else
    (void)space;
    side_->fence();
#endif
    PetscFunctionReturn(0);
  }

 private:
#if defined(KOKKOS_ENABLE_CUDA)
  // Collective: the Peer route's mappings. Every rank's neighbours on its
  // node and every mapping opened, or none kept on any rank (*mapped false).
  PetscErrorCode map_peers(bool* mapped) {
    PetscFunctionBegin;
    *mapped = false;
    // Every neighbour on this node?
    MPI_Comm node = MPI_COMM_NULL;
    MPI_Group all = MPI_GROUP_NULL, local = MPI_GROUP_NULL;
    PetscCallMPI(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    PetscCallMPI(MPI_Comm_group(comm_, &all));
    PetscCallMPI(MPI_Comm_group(node, &local));
    int ok = 1;
    for (const auto* list : {&sends_, &recvs_})
      for (const Message& m : *list) {
        int in_node = MPI_UNDEFINED;
        PetscCallMPI(MPI_Group_translate_ranks(all, 1, &m.rank, local, &in_node));
        if (in_node == MPI_UNDEFINED) {
          ok = 0;
          map_error_ = "a neighbour on another node";
        }
      }
    PetscCallMPI(MPI_Group_free(&local));
    PetscCallMPI(MPI_Group_free(&all));
    PetscCallMPI(MPI_Comm_free(&node));
    if (ok)
      ok = note(cudaEventCreateWithFlags(&sent_, cudaEventDisableTiming | cudaEventInterprocess)) &&
           note(cudaEventCreateWithFlags(&consumed_, cudaEventDisableTiming | cudaEventInterprocess));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm_));
    // A mapping fails (cudaErrorAlreadyMapped) where the importing process
    // already maps the allocation, or memory that once lay at its
    // addresses: a CUDA-aware MPI caches its mappings of device buffers,
    // freed ones too. A new buffer at other addresses is tried, the failed
    // ones kept until the end so that it cannot land on them.
    std::vector<void*> failed;
    for (int attempt = 0; ok && attempt < kMapAttempts; ++attempt) {
      if (attempt > 0) failed.push_back(ghost_raw_);
      ghost_raw_ = nullptr;
      PetscCall(exchange_mappings(&ok));
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm_));
      if (ok) break;
      close_mappings();
      ok = attempt + 1 < kMapAttempts;
    }
    if (!failed.empty()) PetscCallMPI(MPI_Barrier(comm_));  // every rank closed the failed ones
    for (void* f : failed) (void)cudaFree(f);
    if (ok) {
      ghost_ = Values(static_cast<PetscScalar*>(ghost_raw_), ghost_count_);
      route_ = Route::Peer;
      packs_ = 0;
      *mapped = true;
    } else {
      unmap_peers();
    }
    PetscFunctionReturn(0);
  }

  // A CUDA call's result; the first failure's name is kept for the message.
  bool note(cudaError_t e) {
    if (e != cudaSuccess && map_error_.empty()) map_error_ = cudaGetErrorName(e);
    (void)cudaGetLastError();
    return e == cudaSuccess;
  }

  // Collective: a new ghost buffer exported, the neighbours' buffers and
  // events opened. *ok false where this rank failed (what it opened is
  // kept for close_mappings).
  PetscErrorCode exchange_mappings(int* ok) {
    struct Export {
      cudaIpcMemHandle_t ghost;
      cudaIpcEventHandle_t event;  // the reader's "consumed"
      std::int64_t offset;         // where the writer's values go in the ghost buffer
    };
    PetscFunctionBegin;
    Export mine{};
    cudaIpcEventHandle_t sent_handle{}, consumed_handle{};
    // Whole 2 MiB pages: a mapping covers the whole allocation the buffer
    // lies in, and CUDA may place small buffers in one allocation.
    const std::size_t bytes = (ghost_count_ * sizeof(PetscScalar) / kMapGranule + 1) * kMapGranule;
    *ok = note(cudaMalloc(&ghost_raw_, bytes)) && note(cudaIpcGetMemHandle(&mine.ghost, ghost_raw_)) &&
          note(cudaIpcGetEventHandle(&sent_handle, sent_)) && note(cudaIpcGetEventHandle(&consumed_handle, consumed_));
    // Readers tell each writer where its values go and which event says
    // they were read; writers tell each reader which event says they were
    // written. (Sent whatever *ok is: the neighbours wait for them.)
    std::vector<Export> to_sources(recvs_.size(), mine), from_targets(sends_.size());
    std::vector<cudaIpcEventHandle_t> to_targets(sends_.size(), sent_handle), from_sources(recvs_.size());
    std::vector<MPI_Request> reqs(2 * (recvs_.size() + sends_.size()), MPI_REQUEST_NULL);
    std::size_t q = 0;
    for (std::size_t d = 0; d < sends_.size(); ++d)
      PetscCallMPI(MPI_Irecv(&from_targets[d], sizeof(Export), MPI_BYTE, sends_[d].rank, kTagMap, comm_, &reqs[q++]));
    for (std::size_t r = 0; r < recvs_.size(); ++r)
      PetscCallMPI(MPI_Irecv(&from_sources[r], sizeof(cudaIpcEventHandle_t), MPI_BYTE, recvs_[r].rank, kTagMap, comm_,
                             &reqs[q++]));
    for (std::size_t r = 0; r < recvs_.size(); ++r) {
      to_sources[r].event = consumed_handle;
      to_sources[r].offset = recvs_[r].offset;
      PetscCallMPI(MPI_Isend(&to_sources[r], sizeof(Export), MPI_BYTE, recvs_[r].rank, kTagMap, comm_, &reqs[q++]));
    }
    for (std::size_t d = 0; d < sends_.size(); ++d)
      PetscCallMPI(MPI_Isend(&to_targets[d], sizeof(cudaIpcEventHandle_t), MPI_BYTE, sends_[d].rank, kTagMap, comm_,
                             &reqs[q++]));
    PetscCallMPI(MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE));
    // Open what the neighbours exported.
    peers_.assign(sends_.size(), Peer{});
    sources_.assign(recvs_.size(), nullptr);
    auto host_targets = Kokkos::View<HaloTarget*, Kokkos::HostSpace>("kspmv::petsc::halo_targets", sends_.size());
    for (std::size_t d = 0; d < sends_.size() && *ok; ++d) {
      void* base = nullptr;
      *ok = note(cudaIpcOpenMemHandle(&base, from_targets[d].ghost, cudaIpcMemLazyEnablePeerAccess)) &&
            note(cudaIpcOpenEventHandle(&peers_[d].consumed, from_targets[d].event));
      peers_[d].base = base;
      host_targets(d) = {static_cast<PetscScalar*>(base) + from_targets[d].offset, sends_[d].offset};
    }
    for (std::size_t r = 0; r < recvs_.size() && *ok; ++r) *ok = note(cudaIpcOpenEventHandle(&sources_[r], from_sources[r]));
    if (*ok) {
      targets_ = Kokkos::View<HaloTarget*, Space>("kspmv::petsc::halo_targets", sends_.size());
      Kokkos::deep_copy(targets_, host_targets);
    }
    PetscFunctionReturn(0);
  }

  // What this rank opened of its neighbours', closed.
  void close_mappings() {
    for (Peer& p : peers_) {
      if (p.base) (void)cudaIpcCloseMemHandle(p.base);
      if (p.consumed) (void)cudaEventDestroy(p.consumed);
    }
    for (cudaEvent_t e : sources_)
      if (e) (void)cudaEventDestroy(e);
    peers_.clear();
    sources_.clear();
    (void)cudaGetLastError();
  }

  // Collective: every rank closes what it opened of its neighbours', then
  // frees what it exported once they have closed theirs (an exported
  // buffer freed while a neighbour maps it is undefined in CUDA). The last
  // product's "consumed" messages are drained first. Errors cannot be
  // reported (a destructor calls it).
  void unmap_peers() {
    int finalized = 0;
    (void)MPI_Finalized(&finalized);
    const bool talk = !finalized && comm_ != MPI_COMM_NULL;
    if (stream_) (void)cudaStreamSynchronize(stream_);
    if (talk) {
      (void)MPI_Waitall(static_cast<int>(notes_.size()), notes_.data(), MPI_STATUSES_IGNORE);
      if (route_ == Route::Peer && packs_ > 0)
        for (const Message& m : sends_)
          (void)MPI_Recv(nullptr, 0, MPI_BYTE, m.rank, kTagConsumed, comm_, MPI_STATUS_IGNORE);
    }
    notes_.clear();
    close_mappings();
    if (talk) (void)MPI_Barrier(comm_);
    ghost_ = Values();
    targets_ = Kokkos::View<HaloTarget*, Space>();
    if (ghost_raw_) (void)cudaFree(ghost_raw_);
    if (sent_) (void)cudaEventDestroy(sent_);
    if (consumed_) (void)cudaEventDestroy(consumed_);
    ghost_raw_ = nullptr;
    sent_ = consumed_ = nullptr;
    packs_ = 0;
    (void)cudaGetLastError();
  }
#endif

  // Errors here cannot be reported (a destructor calls it). Collective on
  // the Peer route.
  void release() {
#if defined(KOKKOS_ENABLE_CUDA)
    if (ghost_raw_ || sent_ || !peers_.empty()) unmap_peers();
#endif
    route_ = Route::Staged;
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
  static constexpr int kTag = 7401, kTagSent = 7402, kTagConsumed = 7403, kTagMap = 7404;
  static constexpr int kMapAttempts = 3;
  static constexpr std::size_t kMapGranule = std::size_t(2) << 20;
  MPI_Comm comm_ = MPI_COMM_NULL;
  Route asked_ = Route::Staged, route_ = Route::Staged;
  std::size_t ghost_count_ = 0;
  std::vector<Message> recvs_, sends_;
  std::vector<MPI_Request> requests_;
  Kokkos::View<std::int64_t*, Space> send_index_;
  Values send_, ghost_;
  Staged send_staged_, ghost_staged_;
  bool staged_ = false;
  std::optional<Exec> side_;
#if defined(KOKKOS_ENABLE_CUDA)
  cudaStream_t stream_ = nullptr;
  cudaEvent_t ready_ = nullptr, done_ = nullptr;
  // The Peer route. A neighbour this rank writes to: its ghost buffer
  // (mapped) and its "consumed" event (opened).
  struct Peer {
    void* base = nullptr;
    cudaEvent_t consumed = nullptr;
  };
  std::vector<Peer> peers_;                 // one per sends_ entry
  std::vector<cudaEvent_t> sources_;        // each recvs_ entry's "sent" event (opened)
  Kokkos::View<HaloTarget*, Space> targets_;    // one per sends_ entry
  void* ghost_raw_ = nullptr;               // this rank's ghost buffer, exported
  cudaEvent_t sent_ = nullptr, consumed_ = nullptr;  // this rank's, exported
  std::vector<MPI_Request> notes_;          // the empty messages in flight
  std::uint64_t packs_ = 0;                 // products packed since the plan
  std::string map_error_;                   // the first CUDA error of the last mapping, if any
#endif
};

}  // namespace kspmv::petsc::detail

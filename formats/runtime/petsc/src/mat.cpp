// kspmv::petsc: a MATSHELL whose rows are two kspmv matrices per rank (see
// kspmv/petsc/mat.hpp). Written against PETSc's public API only (3.18 on
// Debian; no private headers).
#include <petscconf.h>
#if defined(PETSC_HAVE_KOKKOS)
// Before any other PETSc header (petscvec_kokkos.hpp insists).
#include <petscvec_kokkos.hpp>
#if __has_include(<petsc_kokkos.hpp>)
#include <petsc_kokkos.hpp>  // PETSc's Kokkos execution space (3.20 on)
#define KSPMV_PETSC_HAS_EXEC_SPACE 1
#endif
#endif
#include "kspmv/petsc/mat.hpp"

#include <petscvec.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdint>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "kspmv/core/error.hpp"
#include "kspmv/core/host_matrix.hpp"
#include "kspmv/matrix.hpp"
#include "kspmv/spmv.hpp"
#include "halo.hpp"

namespace kspmv::petsc {
namespace {

static_assert(std::is_same<PetscScalar, double>::value || std::is_same<PetscScalar, float>::value,
              "kspmv's PETSc matrix needs a real PetscScalar (double or float); complex PETSc is not supported");

using Exec = Kokkos::DefaultExecutionSpace;
using Space = Exec::memory_space;
using KMatrix = kspmv::Matrix<PetscScalar, Exec>;
using DeviceVector = KMatrix::vector_type;
using ConstDeviceVector = KMatrix::const_vector_type;
using HostArray = Kokkos::View<PetscScalar*, Kokkos::LayoutLeft, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
using ConstHostArray =
    Kokkos::View<const PetscScalar*, Kokkos::LayoutLeft, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
// Where kspmv's vectors live on the host, PETSc's arrays are wrapped in
// place; elsewhere they are staged through device buffers.
constexpr bool kHostSpace = std::is_same<Space, Kokkos::HostSpace>::value;

constexpr const char* kComposedName = "MatKspmvGetContext_C";
// -mat_kspmv_exchange's values, in Exchange's order.
const char* const kExchangeNames[] = {"scatter", "direct", "direct_gpu_aware", "direct_peer", "direct_staged"};
constexpr PetscInt kExchanges = sizeof(kExchangeNames) / sizeof(kExchangeNames[0]);

// ---- errors: kspmv's exceptions as PETSc error codes ----

PetscErrorCode petsc_code(kspmv::ErrorCode c) {
  switch (c) {
    case kspmv::ErrorCode::InvalidArgument: return PETSC_ERR_ARG_WRONG;
    case kspmv::ErrorCode::Parse: return PETSC_ERR_FILE_UNEXPECTED;
    case kspmv::ErrorCode::Overflow: return PETSC_ERR_INT_OVERFLOW;
    case kspmv::ErrorCode::Unsupported: return PETSC_ERR_SUP;
    case kspmv::ErrorCode::FormatCannotHold: return PETSC_ERR_SUP;
    case kspmv::ErrorCode::Io: return PETSC_ERR_FILE_READ;
    case kspmv::ErrorCode::OutOfMemory: return PETSC_ERR_MEM;
    case kspmv::ErrorCode::Limit: return PETSC_ERR_ARG_OUTOFRANGE;
  }
  return PETSC_ERR_LIB;
}

// The first failure of this rank's local work (reading the blocks,
// converting them), kept until every rank has reached agree().
struct Status {
  PetscErrorCode code = 0;
  std::string message;
  void fail(PetscErrorCode c, const std::string& m) {
    if (!code) {
      code = c;
      message = m;
    }
  }
  template <class F>
  void run(const std::string& what, F&& f) noexcept {
    if (code) return;
    try {
      f();
    } catch (const kspmv::Error& e) {
      fail(petsc_code(e.code()), what + ": " + e.what());
    } catch (const std::bad_alloc&) {
      fail(PETSC_ERR_MEM, what + ": out of memory");
    } catch (const std::exception& e) {
      fail(PETSC_ERR_LIB, what + ": " + e.what());
    } catch (...) {
      fail(PETSC_ERR_LIB, what + ": unknown exception");
    }
  }
};

// Collective: when any rank failed, every rank returns the first failing
// rank's error (so no rank goes on to a collective call the others left).
PetscErrorCode agree(MPI_Comm comm, const Status& st) {
  PetscMPIInt rank, size;
  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscMPIInt mine = st.code ? rank : size, first = size;
  PetscCallMPI(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm));
  if (first == size) PetscFunctionReturn(0);
  int code = static_cast<int>(st.code);
  int len = static_cast<int>(st.message.size());
  PetscCallMPI(MPI_Bcast(&code, 1, MPI_INT, first, comm));
  PetscCallMPI(MPI_Bcast(&len, 1, MPI_INT, first, comm));
  std::string msg = rank == first ? st.message : std::string(static_cast<std::size_t>(len), ' ');
  if (len > 0) PetscCallMPI(MPI_Bcast(msg.data(), len, MPI_CHAR, first, comm));
  if (size > 1) msg = "on rank " + std::to_string(first) + ": " + msg;
  SETERRQ(comm, static_cast<PetscErrorCode>(code), "%s", msg.c_str());
}

// ---- Kokkos: initialized on first use if the program has not ----

bool g_kokkos_ours = false;

PetscErrorCode finalize_kokkos() {
  PetscFunctionBegin;
  if (g_kokkos_ours && Kokkos::is_initialized()) Kokkos::finalize();
  g_kokkos_ours = false;
  PetscFunctionReturn(0);
}

PetscErrorCode ensure_kokkos() {
  PetscFunctionBegin;
#if defined(PETSC_HAVE_KOKKOS)
  if (!Kokkos::is_initialized()) {
    // A PETSc with Kokkos initializes it itself on the device it uses
    // (rank % devices, -device_select...) and finalizes it in
    // PetscFinalize(): a Kokkos vector's creation asks it to.
    Vec v = nullptr;
    PetscCall(VecCreate(PETSC_COMM_SELF, &v));
    PetscCall(VecSetSizes(v, 1, PETSC_DECIDE));
    PetscCall(VecSetType(v, VECKOKKOS));
    PetscCall(VecDestroy(&v));
  }
#endif
  if (!Kokkos::is_initialized()) {
    Kokkos::initialize();
    g_kokkos_ours = true;
    PetscCall(PetscRegisterFinalize(finalize_kokkos));
  }
  PetscFunctionReturn(0);
}

// ---- the matrix ----

struct Block {
  KMatrix m;              // empty when the block has no entries
  PetscInt nrows = 0, ncols = 0, nnz = 0;
  DeviceVector staged;    // the values on the device, for refreshes off the host
};

struct Context {
  Mat aij = nullptr;      // referenced: MatKspmvRefresh re-reads its values
  bool mpi = false;       // MATMPIAIJ family (else MATSEQAIJ: all diagonal block)
  PetscInt rstart = 0, cstart = 0, cend = 0;
  kspmv::Format diag_asked = kspmv::Format::Auto, off_asked = kspmv::Format::Auto;
  kspmv::Format off_format = kspmv::Format::Csr;  // off_asked, auto resolved (offdiag_pick)
  kspmv::ConvertOptions options;    // MatDuplicate converts again with them
  Block diag, off;
  std::vector<PetscInt> garray;     // ghost column j of the off-diagonal block is global column garray[j]
  PetscObjectState nonzero_state = 0;
  // MatGetDiagonal: where row i's diagonal entry is: k >= 0 the diagonal
  // block's entry k, -(k + 2) the off-diagonal block's entry k, -1 none.
  std::vector<std::int64_t> diag_pos;
  std::vector<PetscScalar> diagonal;
  // Blocks read from PETSc's device arrays (MATSEQAIJKOKKOS): diag_pos on
  // the device too, and refreshes read the values there.
  // The diagonal then lives on the device (diagonal_device, gathered at
  // creation and every refresh) and crosses to `diagonal` only when
  // MatGetDiagonal asks: a refresh moves no row's worth of bytes.
  bool device_input = false;
  Kokkos::View<std::int64_t*, Space> diag_pos_device;
  DeviceVector diagonal_device;
  bool diagonal_stale = false;
  VecScatter scatter = nullptr;     // x -> ghost (MPI matrices)
  Vec ghost = nullptr;
  DeviceVector x_stage, g_stage, y_stage;  // only off the host
  MultTimings timings;
  bool block_timings = false;  // MatKspmvSetBlockTimings: fence and time each block
  bool diagonal_first = false;  // MatKspmvSetDiagonalFirst: the diagonal block before the exchange
  Exchange exchange = Exchange::Direct;  // MatKspmvSetExchange
  detail::HaloExchange halo;   // Exchange::Direct's plan and buffers, made at its first product
  // The off-diagonal block's rows that hold entries, compact (its row k is
  // local row off_rows(k); the same entries in the same order, so the same
  // refreshes): Exchange::Direct applies it on the exchange's stream while
  // the diagonal block runs, into off_partial, and adds that into y after.
  Block off_compact;
  Kokkos::View<PetscInt*, Space> off_rows, off_compact_ptr;
  DeviceVector off_partial;

  ~Context() {
    // Errors on the way out cannot be reported from a destructor.
    (void)VecScatterDestroy(&scatter);
    (void)VecDestroy(&ghost);
    (void)MatDestroy(&aij);
  }
};

// MatShellSetContextDestroy's callback takes the context (PETSc < 3.23) or
// a pointer to it (3.23 on: PetscCtxDestroyFn).
#if PETSC_VERSION_LT(3, 23, 0)
PetscErrorCode destroy_context(void* p) {
  PetscFunctionBegin;
  delete static_cast<Context*>(p);
  PetscFunctionReturn(0);
}
#else
PetscErrorCode destroy_context(void** p) {
  PetscFunctionBegin;
  delete static_cast<Context*>(*p);
  *p = nullptr;
  PetscFunctionReturn(0);
}
#endif

// PETSc's argument checks (PetscValidHeaderSpecific...) are private
// headers' macros; the same with the public API.
PetscErrorCode check_mat_arg(Mat A, const char* fn, int arg) {
  PetscClassId id = 0;
  PetscFunctionBegin;
  PetscCheck(A, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "%s: argument %d is a null Mat", fn, arg);
  PetscCall(PetscObjectGetClassId(reinterpret_cast<PetscObject>(A), &id));
  PetscCheck(id == MAT_CLASSID, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "%s: argument %d is not a Mat", fn, arg);
  PetscFunctionReturn(0);
}

// The composed function that marks a kspmv matrix and hands back its context.
PetscErrorCode get_context_composed(Mat K, Context** c) {
  PetscFunctionBegin;
  PetscCall(MatShellGetContext(K, c));
  PetscFunctionReturn(0);
}

PetscErrorCode get_context(Mat K, Context** c) {
  PetscErrorCode (*f)(Mat, Context**) = nullptr;
  PetscFunctionBegin;
  PetscCall(check_mat_arg(K, "kspmv::petsc", 1));
  PetscCall(PetscObjectQueryFunction(reinterpret_cast<PetscObject>(K), kComposedName, &f));
  PetscCheck(f, PetscObjectComm(reinterpret_cast<PetscObject>(K)), PETSC_ERR_ARG_WRONG,
             "not a kspmv matrix (made by kspmv::petsc::MatCreateKspmv)");
  PetscCall(f(K, c));
  PetscFunctionReturn(0);
}

// The AIJ matrix's type family, and that it is assembled.
PetscErrorCode check_aij(Mat aij, bool* mpi) {
  MatType type = nullptr;
  PetscBool seq = PETSC_FALSE, par = PETSC_FALSE, assembled = PETSC_FALSE;
  MPI_Comm comm = PetscObjectComm(reinterpret_cast<PetscObject>(aij));
  PetscFunctionBegin;
  PetscCall(MatGetType(aij, &type));
  PetscCheck(type, comm, PETSC_ERR_ARG_WRONGSTATE, "kspmv::petsc: the matrix has no type yet; it must be an assembled AIJ matrix");
  PetscCall(PetscStrbeginswith(type, MATSEQAIJ, &seq));
  PetscCall(PetscStrbeginswith(type, MATMPIAIJ, &par));
  PetscCheck(seq || par, comm, PETSC_ERR_ARG_WRONG,
             "kspmv::petsc: the matrix is of type %s; it must be an AIJ matrix (MATSEQAIJ, MATMPIAIJ or a subtype such as MATAIJKOKKOS)",
             type);
  PetscCall(MatAssembled(aij, &assembled));
  PetscCheck(assembled, comm, PETSC_ERR_ARG_WRONGSTATE,
             "kspmv::petsc: the AIJ matrix is not assembled (call MatAssemblyBegin/MatAssemblyEnd first)");
  *mpi = par;
  PetscFunctionReturn(0);
}

struct Blocks {
  Mat ad = nullptr, ao = nullptr;   // ao null on MATSEQAIJ
  const PetscInt* garray = nullptr;
  PetscInt nghost = 0;
};

PetscErrorCode get_blocks(Mat aij, bool mpi, Blocks* b) {
  PetscFunctionBegin;
  if (mpi) {
    PetscCall(MatMPIAIJGetSeqAIJ(aij, &b->ad, &b->ao, &b->garray));
    PetscCall(MatGetSize(b->ao, nullptr, &b->nghost));
  } else {
    b->ad = aij;
  }
  PetscFunctionReturn(0);
}

// Reads a sequential AIJ block's CSR arrays (PETSc's own, read in place)
// and hands them to `use(nrows, ncols, ia, ja, a)`.
template <class Use>
PetscErrorCode with_csr(Mat B, Use&& use) {
  const PetscInt *ia = nullptr, *ja = nullptr;
  const PetscScalar* a = nullptr;
  PetscInt n = 0, ncols = 0;
  PetscBool done = PETSC_FALSE;
  PetscFunctionBegin;
  PetscCall(MatGetSize(B, nullptr, &ncols));
  PetscCall(MatGetRowIJ(B, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_SUP, "kspmv::petsc: MatGetRowIJ cannot give this block's rows");
  PetscCall(MatSeqAIJGetArrayRead(B, &a));
  use(n, ncols, ia, ja, a);
  PetscCall(MatSeqAIJRestoreArrayRead(B, &a));
  PetscCall(MatRestoreRowIJ(B, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscFunctionReturn(0);
}

// A sequential AIJ block's CSR arrays where PETSc keeps them on the
// device kspmv runs on: MATSEQAIJKOKKOS's device views (its values synced
// there first), read in place. `found` is false where kspmv runs on the
// host or the block is another type (MATSEQAIJCUSPARSE's device CSR may
// hold compressed rows; its host arrays are read instead).
void sync_with_petsc();

struct DeviceArrays {
  PetscInt n = 0, ncols = 0, nnz = 0;
  const PetscInt *ia = nullptr, *ja = nullptr;
  PetscScalar* a = nullptr;
};
PetscErrorCode device_csr(Mat B, DeviceArrays* d, bool* found) {
  PetscBool kokkos = PETSC_FALSE;
  PetscMemType mtype = PETSC_MEMTYPE_HOST;
  PetscFunctionBegin;
  *found = false;
  if (kHostSpace) PetscFunctionReturn(0);
  PetscCall(PetscObjectTypeCompare(reinterpret_cast<PetscObject>(B), MATSEQAIJKOKKOS, &kokkos));
  if (!kokkos) PetscFunctionReturn(0);
  PetscCall(MatGetSize(B, &d->n, &d->ncols));
  PetscCall(MatSeqAIJGetCSRAndMemType(B, &d->ia, &d->ja, &d->a, &mtype));
  if (!PetscMemTypeDevice(mtype)) PetscFunctionReturn(0);
  sync_with_petsc();  // PETSc synced the values on its own stream
  Kokkos::View<const PetscInt*, Space, Kokkos::MemoryTraits<Kokkos::Unmanaged>> last(d->ia + d->n, 1);
  auto h = Kokkos::create_mirror_view(last);
  Kokkos::deep_copy(h, last);
  d->nnz = h(0);
  *found = true;
  PetscFunctionReturn(0);
}

kspmv::HostCsr<PetscScalar> to_host_csr(PetscInt n, PetscInt ncols, const PetscInt* ia, const PetscInt* ja,
                                        const PetscScalar* a, const char* which) {
  kspmv::HostCsr<PetscScalar> h;
  h.nrows = kspmv::checked_cast<kspmv::ordinal_t>(n, (std::string(which) + " rows").c_str());
  h.ncols = kspmv::checked_cast<kspmv::ordinal_t>(ncols, (std::string(which) + " columns").c_str());
  const std::int64_t nnz = ia[n];
  h.row_ptr.assign(ia, ia + n + 1);
  h.col_idx.resize(static_cast<std::size_t>(nnz));
  for (std::int64_t k = 0; k < nnz; ++k) h.col_idx[k] = static_cast<kspmv::ordinal_t>(ja[k]);
  h.values.assign(a, a + nnz);
  h.validate();  // PETSc's AIJ rows are sorted and merged; say so if one is not
  return h;
}

// Where each local row's diagonal entry (global column rstart + i) sits.
void find_diagonal(Context& c, const kspmv::HostCsr<PetscScalar>& d, const kspmv::HostCsr<PetscScalar>* o) {
  c.diag_pos.assign(static_cast<std::size_t>(d.nrows), -1);
  for (kspmv::ordinal_t i = 0; i < d.nrows; ++i) {
    const PetscInt g = c.rstart + i;
    if (g >= c.cstart && g < c.cend) {
      const auto first = d.col_idx.begin() + d.row_ptr[i], last = d.col_idx.begin() + d.row_ptr[i + 1];
      const auto it = std::lower_bound(first, last, static_cast<kspmv::ordinal_t>(g - c.cstart));
      if (it != last && *it == g - c.cstart) c.diag_pos[i] = it - d.col_idx.begin();
    } else if (o) {
      const auto gj = std::find(c.garray.begin(), c.garray.end(), g);
      if (gj == c.garray.end()) continue;
      const auto j = static_cast<kspmv::ordinal_t>(gj - c.garray.begin());
      for (auto k = o->row_ptr[i]; k < o->row_ptr[i + 1]; ++k)
        if (o->col_idx[k] == j) c.diag_pos[i] = -(k + 2);
    }
  }
}

void fill_diagonal(Context& c, const PetscScalar* dvals, const PetscScalar* ovals) {
  c.diagonal_stale = false;
  c.diagonal.assign(c.diag_pos.size(), PetscScalar(0));
  for (std::size_t i = 0; i < c.diag_pos.size(); ++i) {
    const auto p = c.diag_pos[i];
    if (p >= 0)
      c.diagonal[i] = dvals[p];
    else if (p < -1)
      c.diagonal[i] = ovals[-(p + 2)];
  }
}

// Before kspmv reads or writes a PETSc vector's device array: PETSc's own
// device work (a VecSet, a scatter, a product on PETSc's stream) may still
// be in flight on a stream other than kspmv's. A device-wide fence orders
// them (Kokkos::fence() synchronizes the whole device, whichever stream
// PETSc used); the fences after kspmv's kernels order the other way.
void sync_with_petsc() { Kokkos::fence(); }

// The execution space kspmv's products run on: PETSc's own Kokkos
// execution space where PETSc has Kokkos and has set it up (its stream),
// so that kspmv's kernels and PETSc's vector work on VECKOKKOS vectors are
// ordered by the stream alone, with no fence between them; else Kokkos'
// default instance.
Exec product_space() {
#if defined(KSPMV_PETSC_HAS_EXEC_SPACE)
  if constexpr (!kHostSpace)
    if (PetscKokkosExecutionSpacePtr) return PetscGetKokkosExecutionSpace();
#endif
  return Exec();
}

[[maybe_unused]] bool on_petsc_stream() {
#if defined(KSPMV_PETSC_HAS_EXEC_SPACE)
  if constexpr (!kHostSpace) return PetscKokkosExecutionSpacePtr != nullptr;
#endif
  return false;
}

// A kspmv vector over a PETSc vector's local values, with no copy where
// the vector lives where kspmv runs:
//   - kspmv on the host: the host array itself;
//   - kspmv on a device: a Kokkos vector's device view (VECKOKKOS:
//     VecGetKokkosView), or a CUDA/HIP vector's device array (VECCUDA...:
//     VecGetArray*AndMemType), in place;
//   - else (a host vector with kspmv on a device) a device copy staged
//     through `stage`.
class VecAccess {
 public:
  PetscErrorCode read(Vec v, DeviceVector& stage, ConstDeviceVector* out) {
    PetscInt n = 0;
    PetscFunctionBegin;
    v_ = v;
    write_ = false;
    PetscCall(VecGetLocalSize(v, &n));
    n_ = n;
    if constexpr (kHostSpace) {
      PetscCall(VecGetArrayRead(v, &ro_));
      *out = ConstDeviceVector(ro_, static_cast<std::size_t>(n));
      PetscFunctionReturn(0);
    }
#if defined(PETSC_HAVE_KOKKOS)
    PetscCall(is_kokkos(v));
    if (kokkos_) {
      PetscCall(VecGetKokkosView(v, &kro_));
      if (!on_petsc_stream()) sync_with_petsc();
      *out = ConstDeviceVector(kro_.data(), kro_.extent(0));
      PetscFunctionReturn(0);
    }
#endif
    PetscMemType mtype = PETSC_MEMTYPE_HOST;
    PetscCall(VecGetArrayReadAndMemType(v, &ro_, &mtype));
    memtype_ = true;
    if (PetscMemTypeDevice(mtype)) {
      sync_with_petsc();
      *out = ConstDeviceVector(ro_, static_cast<std::size_t>(n));
    } else {
      size(stage, n);
      Kokkos::deep_copy(stage, ConstHostArray(ro_, static_cast<std::size_t>(n)));
      *out = stage;
    }
    PetscFunctionReturn(0);
  }

  // keep: the old values are read (the off-diagonal block adds to them).
  PetscErrorCode write(Vec v, bool keep, DeviceVector& stage, DeviceVector* out) {
    PetscInt n = 0;
    PetscFunctionBegin;
    v_ = v;
    write_ = true;
    keep_ = keep;
    PetscCall(VecGetLocalSize(v, &n));
    n_ = n;
    if constexpr (kHostSpace) {
      PetscCall(VecGetArray(v, &rw_));
      *out = DeviceVector(rw_, static_cast<std::size_t>(n));
      PetscFunctionReturn(0);
    }
#if defined(PETSC_HAVE_KOKKOS)
    PetscCall(is_kokkos(v));
    if (kokkos_) {
      if (keep)
        PetscCall(VecGetKokkosView(v, &krw_));
      else
        PetscCall(VecGetKokkosViewWrite(v, &krw_));
      if (!on_petsc_stream()) sync_with_petsc();
      *out = DeviceVector(krw_.data(), krw_.extent(0));
      PetscFunctionReturn(0);
    }
#endif
    PetscMemType mtype = PETSC_MEMTYPE_HOST;
    if (keep)
      PetscCall(VecGetArrayAndMemType(v, &rw_, &mtype));
    else
      PetscCall(VecGetArrayWriteAndMemType(v, &rw_, &mtype));
    memtype_ = true;
    if (PetscMemTypeDevice(mtype)) {
      sync_with_petsc();
      *out = DeviceVector(rw_, static_cast<std::size_t>(n));
    } else {
      size(stage, n);
      if (keep) Kokkos::deep_copy(stage, HostArray(rw_, static_cast<std::size_t>(n)));
      stage_ = stage;
      staged_ = true;
      *out = stage;
    }
    PetscFunctionReturn(0);
  }

  // True where the vector's device array is ordered with kspmv's kernels by
  // PETSc's stream (a Kokkos vector, kspmv on PETSc's execution space): no
  // fence is needed after kspmv's kernels before it is handed back.
  bool stream_ordered() const {
#if defined(PETSC_HAVE_KOKKOS)
    if (kokkos_ && on_petsc_stream()) return true;
#endif
    return !v_;
  }

  // Call after the kernels that use the view have completed (fenced), or
  // where stream_ordered(), after they were queued.
  PetscErrorCode restore() {
    PetscFunctionBegin;
    if (!v_) PetscFunctionReturn(0);
#if defined(PETSC_HAVE_KOKKOS)
    if (kokkos_) {
      if (!write_)
        PetscCall(VecRestoreKokkosView(v_, &kro_));
      else if (keep_)
        PetscCall(VecRestoreKokkosView(v_, &krw_));
      else
        PetscCall(VecRestoreKokkosViewWrite(v_, &krw_));
      v_ = nullptr;
      PetscFunctionReturn(0);
    }
#endif
    if (write_ && staged_) Kokkos::deep_copy(HostArray(rw_, static_cast<std::size_t>(n_)), stage_);
    if (memtype_) {
      if (!write_)
        PetscCall(VecRestoreArrayReadAndMemType(v_, &ro_));
      else if (keep_)
        PetscCall(VecRestoreArrayAndMemType(v_, &rw_));
      else
        PetscCall(VecRestoreArrayWriteAndMemType(v_, &rw_));
    } else if (write_) {
      PetscCall(VecRestoreArray(v_, &rw_));
    } else {
      PetscCall(VecRestoreArrayRead(v_, &ro_));
    }
    v_ = nullptr;
    PetscFunctionReturn(0);
  }

 private:
  static void size(DeviceVector& stage, PetscInt n) {
    if (stage.extent(0) != static_cast<std::size_t>(n))
      stage = DeviceVector(Kokkos::ViewAllocateWithoutInitializing("kspmv::petsc::stage"), static_cast<std::size_t>(n));
  }
#if defined(PETSC_HAVE_KOKKOS)
  PetscErrorCode is_kokkos(Vec v) {
    PetscBool k = PETSC_FALSE;
    PetscFunctionBegin;
    PetscCall(PetscObjectTypeCompareAny(reinterpret_cast<PetscObject>(v), &k, VECSEQKOKKOS, VECMPIKOKKOS, VECKOKKOS, ""));
    kokkos_ = k;
    PetscFunctionReturn(0);
  }
  bool kokkos_ = false;
  Kokkos::View<const PetscScalar*, Space> kro_;
  Kokkos::View<PetscScalar*, Space> krw_;
#endif
  Vec v_ = nullptr;
  bool write_ = false, keep_ = false, memtype_ = false, staged_ = false;
  PetscInt n_ = 0;
  const PetscScalar* ro_ = nullptr;
  PetscScalar* rw_ = nullptr;
  DeviceVector stage_;
};

// An exchange this build and this MPI can run.
PetscErrorCode check_exchange(Exchange e, const char* who) {
  PetscFunctionBegin;
  PetscCheck(static_cast<int>(e) >= 0 && static_cast<int>(e) < kExchanges, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "%s: %d is not an Exchange", who, static_cast<int>(e));
  PetscCheck(e != Exchange::DirectPeer || !kHostSpace, PETSC_COMM_SELF, PETSC_ERR_SUP_SYS,
             "%s: Exchange::DirectPeer maps the neighbours' device memory (CUDA IPC), and this build runs on the host; "
             "use Exchange::Direct",
             who);
  PetscCheck(e != Exchange::DirectGpuAware || kHostSpace || use_gpu_aware_mpi, PETSC_COMM_SELF, PETSC_ERR_SUP_SYS,
             "%s: Exchange::DirectGpuAware hands device buffers to MPI, and PETSc runs with -use_gpu_aware_mpi 0 "
             "(an MPI that is not GPU-aware); use Exchange::Direct, which stages through host buffers",
             who);
  PetscFunctionReturn(0);
}

// How a direct exchange moves the halo (halo.hpp).
detail::HaloExchange::Route route_of(Exchange e) {
  using Route = detail::HaloExchange::Route;
  switch (e) {
    case Exchange::DirectGpuAware: return Route::GpuAware;
    case Exchange::DirectPeer: return Route::Peer;
    case Exchange::DirectStaged: return Route::Staged;
    default: return Route::PeerElseStaged;
  }
}

// A direct exchange's plan, from the ghost columns and the column
// ownership (collective: every rank plans at its first product).
PetscErrorCode plan_halo(Context& c) {
  const PetscInt* ranges = nullptr;
  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRangesColumn(c.aij, &ranges));
  PetscCall(c.halo.plan(PetscObjectComm(reinterpret_cast<PetscObject>(c.aij)), c.garray, ranges, route_of(c.exchange)));
  PetscFunctionReturn(0);
}

PetscErrorCode check_local_size(Vec v, PetscInt expected, const char* which) {
  PetscInt n = 0;
  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(v, &n));
  PetscCheck(n == expected, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ,
             "kspmv matrix: Vec %s has %" PetscInt_FMT " local entries where the matrix's layout has %" PetscInt_FMT, which,
             n, expected);
  PetscFunctionReturn(0);
}

// y = A x. On PETSc's stream with Kokkos vectors the blocks are queued
// and not waited for (the next PETSc operation on the stream follows
// them); with block timings on, or vectors that need it, each block is
// fenced (and timed).
//
// The exchange runs beside the diagonal block: by PETSc's scatter
// (Exchange::Scatter; the scatter first by default, or the block first),
// or by kspmv's own (the direct exchanges, halo.hpp: the pack queued on a
// high-priority stream, the block queued behind it on PETSc's, the host
// waiting for the pack alone before it posts MPI, and the compact
// off-diagonal block applied on that stream as soon as the ghost values
// are in; only adding its sums into y follows the diagonal block).
PetscErrorCode multiply(Context& c, Vec x, Vec y) {
  const Exec space = product_space();
  Kokkos::Timer total, t;
  VecAccess xa, ya, ga;
  ConstDeviceVector xv, gv;
  DeviceVector yv;
  Status st;
  PetscFunctionBegin;
  PetscCall(check_local_size(x, c.diag.ncols, "x"));
  PetscCall(check_local_size(y, c.diag.nrows, "y"));
  const bool direct = c.scatter && c.exchange != Exchange::Scatter;
  // (Collective, as MatMult is: at the first product, or the first after
  // the exchange changed.)
  if (direct && !c.halo.planned(route_of(c.exchange))) PetscCall(plan_halo(c));
  bool posted = false;  // Exchange::Direct: the sends are posted
  auto begin_exchange = [&]() -> PetscErrorCode {
    PetscFunctionBegin;
    t.reset();
    if (direct)
      PetscCall(c.halo.begin(space, xv));
    else if (c.scatter)
      PetscCall(VecScatterBegin(c.scatter, x, c.ghost, INSERT_VALUES, SCATTER_FORWARD));
    c.timings.exchange += t.seconds();
    PetscFunctionReturn(0);
  };
  auto post_sends = [&]() -> PetscErrorCode {
    PetscFunctionBegin;
    if (direct && !posted) {
      t.reset();
      PetscCall(c.halo.send());
      c.timings.exchange += t.seconds();
      posted = true;
    }
    PetscFunctionReturn(0);
  };
  // By default PETSc's scatter starts first and the diagonal block runs
  // while the ghost values are in flight; diagonal_first queues the block
  // first. kspmv's exchange packs first, then queues the block.
  if (!direct && !c.diagonal_first) PetscCall(begin_exchange());
  if (c.diag.m.empty()) {
    PetscCall(VecSet(y, 0));
    if (direct) {
      PetscCall(xa.read(x, c.x_stage, &xv));
      PetscCall(begin_exchange());
    }
  } else {
    PetscCall(xa.read(x, c.x_stage, &xv));
    PetscCall(ya.write(y, false, c.y_stage, &yv));
    const bool fence = c.block_timings || !xa.stream_ordered() || !ya.stream_ordered();
    if (direct) PetscCall(begin_exchange());
    // A fenced block would hold the sends back until it ends.
    if (fence) PetscCall(post_sends());
    t.reset();
    st.run("kspmv matrix, diagonal block", [&] {
      c.diag.m.apply(space, PetscScalar(1), xv, PetscScalar(0), yv);
      if (fence) space.fence();
    });
    if (fence) c.timings.diagonal += t.seconds();
  }
  PetscCall(post_sends());
  // (x was read by the pack, which send() waited for, or by the block.)
  PetscCall(xa.restore());
  if (!direct && c.diagonal_first) PetscCall(begin_exchange());
  if (c.scatter) {
    t.reset();
    if (direct)
      PetscCall(c.halo.finish());
    else
      PetscCall(VecScatterEnd(c.scatter, x, c.ghost, INSERT_VALUES, SCATTER_FORWARD));
    c.timings.exchange += t.seconds();
  }
  if (!c.off.m.empty() && !st.code) {
    if (c.diag.m.empty()) PetscCall(ya.write(y, true, c.y_stage, &yv));
    if (!direct) PetscCall(ga.read(c.ghost, c.g_stage, &gv));
    const bool fence = c.block_timings || !ga.stream_ordered() || !ya.stream_ordered();
    t.reset();
    if (direct) {
      // The rows with entries on the exchange's stream (the diagonal
      // block may still be running), then their sums added into y on
      // PETSc's stream after it.
      st.run("kspmv matrix, off-diagonal block", [&] {
        c.off_compact.m.apply(c.halo.side(), PetscScalar(1), ConstDeviceVector(c.halo.ghost()), PetscScalar(0),
                              c.off_partial);
      });
      PetscCall(c.halo.join(space));
      const auto rows = c.off_rows;
      const auto partial = c.off_partial;
      const auto out = yv;
      st.run("kspmv matrix, off-diagonal block", [&] {
        Kokkos::parallel_for(
            "kspmv::petsc::add_off_rows", Kokkos::RangePolicy<Exec>(space, 0, rows.extent(0)),
            KOKKOS_LAMBDA(const std::size_t k) { out(rows(k)) += partial(k); });
        if (fence) space.fence();
      });
    } else {
      st.run("kspmv matrix, off-diagonal block", [&] {
        c.off.m.apply(space, PetscScalar(1), gv, PetscScalar(1), yv);
        if (fence) space.fence();
      });
    }
    if (fence) c.timings.offdiagonal += t.seconds();
    PetscCall(ga.restore());
  }
  PetscCall(ya.restore());
  // (kspmv checks what it is handed: an error here is a bug, reported
  // on this rank.)
  PetscCheck(!st.code, PETSC_COMM_SELF, st.code, "%s", st.message.c_str());
  c.timings.total += total.seconds();
  ++c.timings.mults;
  PetscFunctionReturn(0);
}

// y = A^T x (x in the layout of A's rows, y in that of its columns): the
// diagonal block's transpose into y, the off-diagonal block's into the
// ghost vector, whose entries the scatter then adds, in reverse, to the
// ranks that own those columns. Both transposes are kspmv's (built on the
// device at the first call, refreshed with the blocks).
PetscErrorCode multiply_transpose(Context& c, Vec x, Vec y) {
  const Exec space = product_space();
  VecAccess xa, ya, ga;
  ConstDeviceVector xv;
  DeviceVector yv, gv;
  Status st;
  PetscFunctionBegin;
  PetscCall(check_local_size(x, c.diag.nrows, "x"));
  PetscCall(check_local_size(y, c.diag.ncols, "y"));
  // (No early return on a rank without entries: the scatter below is
  // collective.)
  PetscCall(xa.read(x, c.x_stage, &xv));
  if (c.diag.m.empty()) {
    PetscCall(VecSet(y, 0));
  } else {
    PetscCall(ya.write(y, false, c.y_stage, &yv));
    st.run("kspmv matrix, diagonal block transposed", [&] {
      kspmv::spmv(space, "T", PetscScalar(1), c.diag.m, xv, PetscScalar(0), yv);
      space.fence();
    });
    PetscCall(ya.restore());
  }
  if (c.scatter && !c.off.m.empty() && !st.code) {
    PetscCall(ga.write(c.ghost, false, c.g_stage, &gv));
    st.run("kspmv matrix, off-diagonal block transposed", [&] {
      kspmv::spmv(space, "T", PetscScalar(1), c.off.m, xv, PetscScalar(0), gv);
      space.fence();
    });
    PetscCall(ga.restore());
  }
  PetscCall(xa.restore());
  if (c.scatter) {
    // A failure on one rank stops every rank before the collective scatter.
    MPI_Comm comm;
    PetscCall(PetscObjectGetComm(reinterpret_cast<PetscObject>(x), &comm));
    PetscCall(agree(comm, st));
  }
  PetscCheck(!st.code, PETSC_COMM_SELF, st.code, "%s", st.message.c_str());
  if (c.scatter) {
    // Every rank takes part in the scatter, whether or not it has ghosts.
    if (c.off.m.empty()) PetscCall(VecSet(c.ghost, 0));
    PetscCall(VecScatterBegin(c.scatter, c.ghost, y, ADD_VALUES, SCATTER_REVERSE));
    PetscCall(VecScatterEnd(c.scatter, c.ghost, y, ADD_VALUES, SCATTER_REVERSE));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode mult_transpose_op(Mat K, Vec x, Vec y) {
  Context* c = nullptr;
  PetscFunctionBegin;
  PetscCall(MatShellGetContext(K, &c));
  PetscCall(multiply_transpose(*c, x, y));
  PetscFunctionReturn(0);
}

PetscErrorCode mult_op(Mat K, Vec x, Vec y) {
  Context* c = nullptr;
  PetscFunctionBegin;
  PetscCall(MatShellGetContext(K, &c));
  PetscCall(multiply(*c, x, y));
  PetscFunctionReturn(0);
}

void diagonal_on_host(Context& c);

PetscErrorCode get_diagonal_op(Mat K, Vec d) {
  Context* c = nullptr;
  PetscScalar* a = nullptr;
  PetscFunctionBegin;
  PetscCall(MatShellGetContext(K, &c));
  diagonal_on_host(*c);
  PetscCall(check_local_size(d, static_cast<PetscInt>(c->diagonal.size()), "d (the diagonal)"));
  PetscCall(VecGetArrayWrite(d, &a));
  std::copy(c->diagonal.begin(), c->diagonal.end(), a);
  PetscCall(VecRestoreArrayWrite(d, &a));
  PetscFunctionReturn(0);
}

std::string describe(const Block& b, kspmv::Format asked) {
  std::string s = std::to_string(b.nrows) + " x " + std::to_string(b.ncols) + ", " + std::to_string(b.nnz) + " nonzeros, ";
  if (b.m.empty()) return s + "empty (no kspmv matrix)";
  s += b.m.name();
  if (b.m.auto_picked()) s += " (auto: the model's pick)";
  else if (asked == kspmv::Format::Auto) s += " (auto: by the rows holding ghost columns)";
  else if (asked != b.m.format()) s += std::string(" (asked ") + kspmv::format_name(asked) + ")";
  return s;
}

PetscErrorCode view_op(Mat K, PetscViewer viewer) {
  Context* c = nullptr;
  PetscBool ascii = PETSC_FALSE;
  PetscMPIInt rank = 0;
  PetscFunctionBegin;
  PetscCall(MatShellGetContext(K, &c));
  PetscCall(PetscObjectTypeCompare(reinterpret_cast<PetscObject>(viewer), PETSCVIEWERASCII, &ascii));
  if (!ascii) PetscFunctionReturn(0);
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm(reinterpret_cast<PetscObject>(K)), &rank));
  PetscCall(PetscViewerASCIIPrintf(viewer, "kspmv matrix (MATSHELL over an AIJ matrix), Kokkos %s\n", Exec::name()));
  PetscCall(PetscViewerASCIIPushSynchronized(viewer));
  if (c->device_input)
    PetscCall(PetscViewerASCIISynchronizedPrintf(viewer, "  [%d] blocks read from PETSc's device arrays\n", rank));
  PetscCall(PetscViewerASCIISynchronizedPrintf(viewer, "  [%d] diagonal block: %s\n", rank, describe(c->diag, c->diag_asked).c_str()));
  if (c->mpi) {
    PetscCall(PetscViewerASCIISynchronizedPrintf(viewer, "  [%d] off-diagonal block: %s\n", rank,
                                                 describe(c->off, c->off_asked).c_str()));
    // (A direct exchange's route is known once planned, at the first product.)
    const char* route = "";
    if (c->exchange != Exchange::Scatter && c->halo.planned(route_of(c->exchange)))
      route = c->halo.route() == detail::HaloExchange::Route::Peer       ? " (device to device)"
              : c->halo.route() == detail::HaloExchange::Route::GpuAware ? " (device buffers to MPI)"
                                                                          : " (staged through the host)";
    PetscCall(PetscViewerASCIISynchronizedPrintf(viewer, "  [%d] halo exchange: %s%s\n", rank,
                                                 kExchangeNames[static_cast<int>(c->exchange)], route));
  }
  PetscCall(PetscViewerFlush(viewer));
  PetscCall(PetscViewerASCIIPopSynchronized(viewer));
  PetscFunctionReturn(0);
}

bool offdiag_format_allowed(kspmv::Format f) {
  switch (f) {
    case kspmv::Format::Auto:
    case kspmv::Format::Csr:
    case kspmv::Format::CsrScalar:
    case kspmv::Format::CsrVector:
    case kspmv::Format::CsrAdaptive:
    case kspmv::Format::KkCrs:
    case kspmv::Format::Coo: return true;
    default: return false;
  }
}

// The off-diagonal block's format for Format::Auto. Its rows are all of
// the rank's rows, but only those next to another rank's have entries (a
// few per cent on a partitioned mesh or grid). A CSR kernel visits every
// row (its offsets, and y read and written: about 20 bytes a row), COO
// only its entries (a row index beside each: about 16 bytes an entry and
// 16 a row it touches, y of the other rows untouched when beta is 1, as
// the block's product is). So COO where 4 nnz + 16 nonempty < 20 rows, a
// CSR where most rows hold ghost columns.
kspmv::Format offdiag_pick(kspmv::Format asked, PetscInt nrows, PetscInt nonempty, PetscInt nnz) {
  if (asked != kspmv::Format::Auto) return asked;
  const double coo_bytes = 4.0 * double(nnz) + 16.0 * double(nonempty), csr_bytes = 20.0 * double(nrows);
  return nrows > 0 && coo_bytes < csr_bytes ? kspmv::Format::Coo : kspmv::Format::Csr;
}

using DeviceIndices = Kokkos::View<const PetscInt*, Space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
using DeviceValues = Kokkos::View<const PetscScalar*, Space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// Where each local row's diagonal entry sits in the diagonal block's
// device CSR (-1: none), every row's diagonal column being among the
// block's columns (build_local_on_device checks).
void find_diagonal_on_device(Context& c, const DeviceArrays& d) {
  const DeviceIndices ia(d.ia, static_cast<std::size_t>(d.n) + 1), ja(d.ja, static_cast<std::size_t>(d.nnz));
  Kokkos::View<std::int64_t*, Space> pos(Kokkos::ViewAllocateWithoutInitializing("kspmv::petsc::diag_pos"),
                                          static_cast<std::size_t>(d.n));
  const PetscInt shift = c.rstart - c.cstart;
  Kokkos::parallel_for(
      "kspmv::petsc::find_diagonal", Kokkos::RangePolicy<Exec>(0, d.n), KOKKOS_LAMBDA(const PetscInt i) {
        const PetscInt want = i + shift;
        PetscInt lo = ia(i), hi = ia(i + 1);  // PETSc's rows are sorted
        while (lo < hi) {
          const PetscInt mid = lo + (hi - lo) / 2;
          if (ja(mid) < want) lo = mid + 1;
          else hi = mid;
        }
        pos(i) = lo < ia(i + 1) && ja(lo) == want ? std::int64_t(lo) : std::int64_t(-1);
      });
  c.diag_pos_device = pos;
}

// The diagonal's values from the diagonal block's device values, kept on
// the device until MatGetDiagonal asks (diagonal_on_host).
void fill_diagonal_on_device(Context& c, const DeviceValues& values) {
  const auto pos = c.diag_pos_device;
  if (c.diagonal_device.extent(0) != pos.extent(0))
    c.diagonal_device = DeviceVector(Kokkos::ViewAllocateWithoutInitializing("kspmv::petsc::diagonal"), pos.extent(0));
  const auto diag = c.diagonal_device;
  Kokkos::parallel_for(
      "kspmv::petsc::gather_diagonal", Kokkos::RangePolicy<Exec>(0, pos.extent(0)), KOKKOS_LAMBDA(const std::size_t i) {
        diag(i) = pos(i) >= 0 ? values(pos(i)) : PetscScalar(0);
      });
  c.diagonal_stale = true;
}

// The host copy of the diagonal MatGetDiagonal hands out, up to date.
void diagonal_on_host(Context& c) {
  if (!c.diagonal_stale) return;
  c.diagonal.resize(c.diagonal_device.extent(0));
  Kokkos::deep_copy(HostArray(c.diagonal.data(), c.diagonal.size()), c.diagonal_device);
  c.diagonal_stale = false;
}

// The compact off-diagonal block (Context::off_compact) from the rows'
// list and their offsets, the entries being the whole block's.
void set_off_compact(Context& c, Kokkos::View<PetscInt*, Space> rows, Kokkos::View<PetscInt*, Space> ptr, KMatrix m) {
  c.off_rows = rows;
  c.off_compact_ptr = ptr;
  c.off_compact.nrows = static_cast<PetscInt>(rows.extent(0));
  c.off_compact.ncols = c.off.ncols;
  c.off_compact.nnz = c.off.nnz;
  c.off_compact.m = std::move(m);
  c.off_partial = DeviceVector(Kokkos::ViewAllocateWithoutInitializing("kspmv::petsc::off_partial"), rows.extent(0));
}

// Every row of the compact block holds entries: the off-diagonal rule then
// picks CSR unless asked otherwise.
kspmv::Format off_compact_format(const Context& c, PetscInt rows) {
  return offdiag_pick(c.off_asked, rows, rows, c.off.nnz);
}

// The off-diagonal block's rows that hold entries.
std::vector<PetscInt> rows_with_entries(const kspmv::HostCsr<PetscScalar>& ho) {
  std::vector<PetscInt> rows;
  for (kspmv::ordinal_t i = 0; i < ho.nrows; ++i)
    if (ho.row_ptr[i + 1] > ho.row_ptr[i]) rows.push_back(static_cast<PetscInt>(i));
  return rows;
}

// The compact off-diagonal block from the host block, whose columns and
// values it takes over (the block itself is converted by then).
void build_off_compact(Context& c, kspmv::HostCsr<PetscScalar>&& ho, const std::vector<PetscInt>& rows,
                       const kspmv::ConvertOptions& opt) {
  kspmv::HostCsr<PetscScalar> hc(static_cast<kspmv::ordinal_t>(rows.size()), ho.ncols);
  hc.row_ptr.resize(rows.size() + 1);
  hc.row_ptr[0] = 0;
  for (std::size_t k = 0; k < rows.size(); ++k) hc.row_ptr[k + 1] = ho.row_ptr[static_cast<std::size_t>(rows[k]) + 1];
  hc.col_idx = std::move(ho.col_idx);
  hc.values = std::move(ho.values);
  Kokkos::View<PetscInt*, Space> drows(Kokkos::ViewAllocateWithoutInitializing("kspmv::petsc::off_rows"), rows.size());
  Kokkos::deep_copy(drows, Kokkos::View<const PetscInt*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                               rows.data(), rows.size()));
  auto m = KMatrix::convert(hc, off_compact_format(c, hc.nrows), opt);
  set_off_compact(c, drows, Kokkos::View<PetscInt*, Space>(), std::move(m));
}

void build_off_compact_on_device(Context& c, const DeviceArrays& o, const kspmv::ConvertOptions& opt);

// Both blocks from PETSc's device arrays (MATAIJKOKKOS) with no trip
// through the host: kspmv builds from device views, and a kernel finds the
// diagonal. `done` is false (nothing read) where a block is elsewhere or
// some row's diagonal column is off this rank's columns; build_local then
// reads the host arrays.
PetscErrorCode build_local_on_device(Context& c, const Blocks& b, const kspmv::ConvertOptions& opt, Status& st,
                                     bool* done) {
  DeviceArrays d, o;
  bool on_device = false, off_on_device = true;
  PetscFunctionBegin;
  *done = false;
  PetscCall(device_csr(b.ad, &d, &on_device));
  if (b.ao) PetscCall(device_csr(b.ao, &o, &off_on_device));
  if (!on_device || !off_on_device || c.rstart < c.cstart || c.rstart + d.n > c.cend) PetscFunctionReturn(0);
  *done = true;
  c.device_input = true;
  c.garray.assign(b.garray, b.garray + b.nghost);
  c.diag.nrows = d.n;
  c.diag.ncols = d.ncols;
  c.diag.nnz = d.nnz;
  c.off.nrows = b.ao ? o.n : d.n;
  c.off.ncols = b.ao ? o.ncols : 0;
  c.off.nnz = b.ao ? o.nnz : 0;
  st.run("diagonal entries", [&] {
    find_diagonal_on_device(c, d);
    fill_diagonal_on_device(c, DeviceValues(d.a, static_cast<std::size_t>(d.nnz)));
  });
  auto convert = [&](const DeviceArrays& a, kspmv::Format f) {
    return KMatrix::from_device_views(a.n, a.ncols, DeviceIndices(a.ia, static_cast<std::size_t>(a.n) + 1),
                                      DeviceIndices(a.ja, static_cast<std::size_t>(a.nnz)),
                                      DeviceValues(a.a, static_cast<std::size_t>(a.nnz)), f, opt);
  };
  // The compact block first: its rows are the count the block's auto needs.
  if (c.off.nnz > 0)
    st.run("off-diagonal block, its rows with entries", [&] { build_off_compact_on_device(c, o, opt); });
  c.off_format = offdiag_pick(c.off_asked, c.off.nrows, static_cast<PetscInt>(c.off_rows.extent(0)), c.off.nnz);
  const std::string dname = std::string("diagonal block (") + kspmv::format_name(c.diag_asked) + ")";
  const std::string oname = std::string("off-diagonal block (") + kspmv::format_name(c.off_format) + ")";
  if (c.diag.nnz > 0) st.run(dname, [&] { c.diag.m = convert(d, c.diag_asked); });
  if (c.off.nnz > 0) st.run(oname, [&] { c.off.m = convert(o, c.off_format); });
  c.timings.conversion =
      c.diag.m.conversion_seconds() + c.off.m.conversion_seconds() + c.off_compact.m.conversion_seconds();
  c.timings.device_input = true;
  PetscFunctionReturn(0);
}

// The compact off-diagonal block from PETSc's device arrays: a scan lists
// the rows with entries and their offsets; the columns and values are the
// block's own.
void build_off_compact_on_device(Context& c, const DeviceArrays& o, const kspmv::ConvertOptions& opt) {
  const DeviceIndices ia(o.ia, static_cast<std::size_t>(o.n) + 1);
  PetscInt nr = 0;
  Kokkos::parallel_reduce(
      "kspmv::petsc::off_rows_count", Kokkos::RangePolicy<Exec>(0, o.n),
      KOKKOS_LAMBDA(const PetscInt i, PetscInt& count) { count += ia(i + 1) > ia(i) ? 1 : 0; }, nr);
  Kokkos::View<PetscInt*, Space> rows(Kokkos::ViewAllocateWithoutInitializing("kspmv::petsc::off_rows"),
                                      static_cast<std::size_t>(nr));
  Kokkos::View<PetscInt*, Space> ptr(Kokkos::ViewAllocateWithoutInitializing("kspmv::petsc::off_compact_ptr"),
                                     static_cast<std::size_t>(nr) + 1);
  Kokkos::parallel_scan(
      "kspmv::petsc::off_rows", Kokkos::RangePolicy<Exec>(0, o.n),
      KOKKOS_LAMBDA(const PetscInt i, PetscInt& k, const bool final) {
        const bool has = ia(i + 1) > ia(i);
        if (final && has) {
          rows(k) = i;
          ptr(k) = ia(i);
        }
        k += has ? 1 : 0;
      });
  Kokkos::deep_copy(Kokkos::subview(ptr, static_cast<std::size_t>(nr)), o.nnz);
  auto m = KMatrix::from_device_views(nr, o.ncols, DeviceIndices(ptr.data(), static_cast<std::size_t>(nr) + 1),
                                      DeviceIndices(o.ja, static_cast<std::size_t>(o.nnz)),
                                      DeviceValues(o.a, static_cast<std::size_t>(o.nnz)), off_compact_format(c, nr), opt);
  set_off_compact(c, rows, ptr, std::move(m));
}

// Both blocks read and converted on this rank; failures land in `st`.
PetscErrorCode build_local(Context& c, const Blocks& b, const kspmv::ConvertOptions& opt, Status& st) {
  kspmv::HostCsr<PetscScalar> hd, ho;
  bool done = false;
  PetscFunctionBegin;
  PetscCall(build_local_on_device(c, b, opt, st, &done));
  if (done) PetscFunctionReturn(0);
  PetscCall(with_csr(b.ad, [&](PetscInt n, PetscInt nc, const PetscInt* ia, const PetscInt* ja, const PetscScalar* a) {
    st.run("diagonal block", [&] { hd = to_host_csr(n, nc, ia, ja, a, "diagonal block"); });
  }));
  if (b.ao) {
    PetscCall(with_csr(b.ao, [&](PetscInt n, PetscInt nc, const PetscInt* ia, const PetscInt* ja, const PetscScalar* a) {
      st.run("off-diagonal block", [&] { ho = to_host_csr(n, nc, ia, ja, a, "off-diagonal block"); });
    }));
  }
  st.run("diagonal entries", [&] {
    c.garray.assign(b.garray, b.garray + b.nghost);
    find_diagonal(c, hd, b.ao ? &ho : nullptr);
    fill_diagonal(c, hd.values.data(), ho.values.data());
  });
  c.diag.nrows = hd.nrows;
  c.diag.ncols = hd.ncols;
  c.diag.nnz = hd.nnz();
  c.off.nrows = b.ao ? ho.nrows : hd.nrows;
  c.off.ncols = b.ao ? ho.ncols : 0;
  c.off.nnz = b.ao ? ho.nnz() : 0;
  const auto off_rows = rows_with_entries(ho);
  c.off_format = offdiag_pick(c.off_asked, c.off.nrows, static_cast<PetscInt>(off_rows.size()), c.off.nnz);
  const std::string dname = std::string("diagonal block (") + kspmv::format_name(c.diag_asked) + ")";
  const std::string oname = std::string("off-diagonal block (") + kspmv::format_name(c.off_format) + ")";
  if (c.diag.nnz > 0) st.run(dname, [&] { c.diag.m = KMatrix::convert(hd, c.diag_asked, opt); });
  if (c.off.nnz > 0) st.run(oname, [&] { c.off.m = KMatrix::convert(ho, c.off_format, opt); });
  if (c.off.nnz > 0)
    st.run(oname + ", its rows with entries", [&] { build_off_compact(c, std::move(ho), off_rows, opt); });
  c.timings.conversion =
      c.diag.m.conversion_seconds() + c.off.m.conversion_seconds() + c.off_compact.m.conversion_seconds();
  PetscFunctionReturn(0);
}

// The sequential vector type of a family (MATMPIAIJ's vectors are VECMPI,
// MATMPIAIJKOKKOS's VECMPIKOKKOS...): the generic names (standard, kokkos,
// cuda...) on PETSC_COMM_SELF pick it themselves.
VecType seq_vec_type(VecType t) {
  const std::string s = t ? t : "";
  if (s == VECMPI || s == VECSEQ || s == VECSTANDARD) return VECSTANDARD;
#if defined(PETSC_HAVE_KOKKOS)
  if (s == VECMPIKOKKOS || s == VECSEQKOKKOS || s == VECKOKKOS) return VECKOKKOS;
#endif
#if defined(PETSC_HAVE_CUDA)
  if (s == VECMPICUDA || s == VECSEQCUDA || s == VECCUDA) return VECCUDA;
#endif
#if defined(PETSC_HAVE_HIP)
  if (s == VECMPIHIP || s == VECSEQHIP || s == VECHIP) return VECHIP;
#endif
  return VECSTANDARD;
}

// The ghost vector and the scatter that fills it from x (collective). The
// ghost vector is of the AIJ matrix's vector type (a device vector for
// MATAIJKOKKOS or MATAIJCUSPARSE), so on a device the halo arrives in
// device memory, PETSc's scatter moving it there, and the off-diagonal
// block reads it in place.
PetscErrorCode build_scatter(Context& c) {
  IS from = nullptr;
  Vec xt = nullptr;
  VecType vtype = nullptr;
  PetscFunctionBegin;
  PetscCall(MatCreateVecs(c.aij, &xt, nullptr));
  PetscCall(VecGetType(xt, &vtype));
  PetscCall(VecCreate(PETSC_COMM_SELF, &c.ghost));
  PetscCall(VecSetSizes(c.ghost, static_cast<PetscInt>(c.garray.size()), PETSC_DECIDE));
  PetscCall(VecSetType(c.ghost, seq_vec_type(vtype)));
  PetscCall(ISCreateGeneral(PETSC_COMM_SELF, static_cast<PetscInt>(c.garray.size()), c.garray.data(), PETSC_COPY_VALUES,
                            &from));
  PetscCall(VecScatterCreate(xt, from, c.ghost, nullptr, &c.scatter));
  PetscCall(VecDestroy(&xt));
  PetscCall(ISDestroy(&from));
  PetscFunctionReturn(0);
}

PetscErrorCode duplicate_op(Mat K, MatDuplicateOption op, Mat* M);

// The MATSHELL over the context; K takes the context over (destroying K
// destroys it) once it exists, else `c` keeps it.
PetscErrorCode make_shell(Mat aij, std::unique_ptr<Context>& c, Mat* out) {
  PetscInt m, n, M, N;
  VecType vtype = nullptr;
  Mat K = nullptr;
  PetscFunctionBegin;
  PetscCall(MatGetLocalSize(aij, &m, &n));
  PetscCall(MatGetSize(aij, &M, &N));
  PetscCall(MatGetVecType(aij, &vtype));
  PetscCall(MatCreateShell(PetscObjectComm(reinterpret_cast<PetscObject>(aij)), m, n, M, N, c.get(), &K));
  PetscErrorCode ierr = MatShellSetContextDestroy(K, destroy_context);
  if (ierr) {
    (void)MatDestroy(&K);
    PetscCall(ierr);
  }
  c.release();
  ierr = [&]() -> PetscErrorCode {
    PetscFunctionBegin;
    PetscCall(MatShellSetOperation(K, MATOP_MULT, reinterpret_cast<void (*)(void)>(mult_op)));
    // No MATOP_MULT_ADD: MATSHELL's own (MatMult, then VecAXPY) keeps
    // MatScale and MatShift, which an operation set here would bypass.
    PetscCall(MatShellSetOperation(K, MATOP_GET_DIAGONAL, reinterpret_cast<void (*)(void)>(get_diagonal_op)));
    PetscCall(MatShellSetOperation(K, MATOP_VIEW, reinterpret_cast<void (*)(void)>(view_op)));
    // (MATSHELL's own duplicate would share the context without owning it.)
    PetscCall(MatShellSetOperation(K, MATOP_DUPLICATE, reinterpret_cast<void (*)(void)>(duplicate_op)));
    PetscCall(MatShellSetOperation(K, MATOP_MULT_TRANSPOSE, reinterpret_cast<void (*)(void)>(mult_transpose_op)));
    PetscCall(MatShellSetVecType(K, vtype));
    PetscCall(PetscObjectComposeFunction(reinterpret_cast<PetscObject>(K), kComposedName, get_context_composed));
    PetscFunctionReturn(0);
  }();
  if (ierr) {
    (void)MatDestroy(&K);
    PetscCall(ierr);
  }
  *out = K;
  PetscFunctionReturn(0);
}

}  // namespace

PetscErrorCode MatCreateKspmv(Mat aij, kspmv::Format diag_format, kspmv::Format offdiag_format,
                              const kspmv::ConvertOptions& options, Mat* out) {
  bool mpi = false;
  Blocks b;
  PetscFunctionBegin;
  PetscCall(check_mat_arg(aij, "kspmv::petsc::MatCreateKspmv", 1));
  PetscCheck(out, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "kspmv::petsc::MatCreateKspmv: argument 5 (Mat*) is null");
  MPI_Comm comm = PetscObjectComm(reinterpret_cast<PetscObject>(aij));
  PetscCall(check_aij(aij, &mpi));
  PetscCheck(offdiag_format_allowed(offdiag_format), comm, PETSC_ERR_ARG_OUTOFRANGE,
             "kspmv::petsc: the off-diagonal block cannot be %s; it takes auto, csr, csr-scalar, csr-vector, "
             "csr-adaptive, kk-crs or coo",
             kspmv::format_name(offdiag_format));
  PetscCheck(options.output_order == kspmv::OutputOrder::Caller, comm, PETSC_ERR_ARG_WRONG,
             "kspmv::petsc: ConvertOptions::output_order must be OutputOrder::Caller (PETSc's vectors are in the "
             "matrix's row order)");
  PetscCall(ensure_kokkos());

  std::unique_ptr<Context> c;
  try {
    c = std::make_unique<Context>();
  } catch (const std::bad_alloc&) {
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_MEM, "kspmv::petsc: out of memory");
  }
  c->mpi = mpi;
  c->diag_asked = diag_format;
  c->off_asked = offdiag_format;
  c->options = options;
  {
    // The options database may set the order of MatMult's work for every
    // kspmv matrix: -mat_kspmv_diagonal_first (MatKspmvSetDiagonalFirst).
    PetscBool first = PETSC_FALSE, set = PETSC_FALSE;
    PetscCall(PetscOptionsGetBool(nullptr, nullptr, "-mat_kspmv_diagonal_first", &first, &set));
    if (set) c->diagonal_first = first == PETSC_TRUE;
    // -mat_kspmv_exchange NAME, one of kExchangeNames (MatKspmvSetExchange).
    PetscInt which = 0;
    PetscCall(PetscOptionsGetEList(nullptr, nullptr, "-mat_kspmv_exchange", kExchangeNames, kExchanges, &which, &set));
    if (set) PetscCall(check_exchange(static_cast<Exchange>(which), "-mat_kspmv_exchange"));
    if (set) c->exchange = static_cast<Exchange>(which);
  }
  PetscCall(MatGetOwnershipRange(aij, &c->rstart, nullptr));
  PetscCall(MatGetOwnershipRangeColumn(aij, &c->cstart, &c->cend));
  PetscCall(MatGetNonzeroState(aij, &c->nonzero_state));
  PetscCall(get_blocks(aij, mpi, &b));

  Status st;
  PetscCall(build_local(*c, b, options, st));
  PetscCall(agree(comm, st));

  PetscCall(PetscObjectReference(reinterpret_cast<PetscObject>(aij)));
  c->aij = aij;
  if (mpi) PetscCall(build_scatter(*c));
  PetscCall(make_shell(aij, c, out));
  PetscFunctionReturn(0);
}

namespace {

// MatDuplicate: a new kspmv matrix converted from the same AIJ matrix (its
// values now: where they changed without a refresh, the copy has the new
// ones) with the same formats and options.
PetscErrorCode duplicate_op(Mat K, MatDuplicateOption op, Mat* M) {
  Context* c = nullptr;
  PetscFunctionBegin;
  PetscCall(MatShellGetContext(K, &c));
  PetscCheck(op != MAT_DO_NOT_COPY_VALUES, PetscObjectComm(reinterpret_cast<PetscObject>(K)), PETSC_ERR_SUP,
             "kspmv matrix: its values come from its AIJ matrix; duplicate it with MAT_COPY_VALUES");
  PetscCall(MatCreateKspmv(c->aij, c->diag_asked, c->off_asked, c->options, M));
  // The copy works the way K was set to (not the options database's way).
  Context* copy = nullptr;
  PetscCall(MatShellGetContext(*M, &copy));
  copy->diagonal_first = c->diagonal_first;
  copy->exchange = c->exchange;
  PetscFunctionReturn(0);
}

}  // namespace

PetscErrorCode MatCreateKspmv(Mat aij, Mat* out) {
  PetscFunctionBegin;
  PetscCall(MatCreateKspmv(aij, kspmv::Format::Auto, kspmv::Format::Auto, kspmv::ConvertOptions{}, out));
  PetscFunctionReturn(0);
}

PetscErrorCode MatIsKspmv(Mat K, PetscBool* flg) {
  PetscErrorCode (*f)(Mat, Context**) = nullptr;
  PetscFunctionBegin;
  PetscCall(check_mat_arg(K, "kspmv::petsc::MatIsKspmv", 1));
  PetscCheck(flg, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "kspmv::petsc::MatIsKspmv: argument 2 is null");
  PetscCall(PetscObjectQueryFunction(reinterpret_cast<PetscObject>(K), kComposedName, &f));
  *flg = f ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(0);
}

PetscErrorCode MatKspmvGetFormats(Mat K, kspmv::Format* diag, kspmv::Format* offdiag) {
  Context* c = nullptr;
  PetscFunctionBegin;
  PetscCall(get_context(K, &c));
  if (diag) *diag = c->diag.m.empty() ? c->diag_asked : c->diag.m.format();
  if (offdiag) *offdiag = c->off.m.empty() ? c->off_format : c->off.m.format();
  PetscFunctionReturn(0);
}

namespace {
// One of K's settings or figures into *out (MatKspmvGetTimings, ...GetExchange).
template <class T>
PetscErrorCode get_field(Mat K, T Context::*which, T* out, const char* fn) {
  Context* c = nullptr;
  PetscFunctionBegin;
  PetscCall(get_context(K, &c));
  PetscCheck(out, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "kspmv::petsc::%s: argument 2 is null", fn);
  *out = c->*which;
  PetscFunctionReturn(0);
}
}  // namespace

PetscErrorCode MatKspmvGetTimings(Mat K, MultTimings* t) {
  PetscFunctionBegin;
  PetscCall(get_field(K, &Context::timings, t, "MatKspmvGetTimings"));
  PetscFunctionReturn(0);
}

namespace {
// One of K's per-matrix switches (MatKspmvSetBlockTimings, ...SetDiagonalFirst).
PetscErrorCode set_switch(Mat K, bool Context::*which, PetscBool on) {
  Context* c = nullptr;
  PetscFunctionBegin;
  PetscCall(get_context(K, &c));
  c->*which = on == PETSC_TRUE;
  PetscFunctionReturn(0);
}
}  // namespace

PetscErrorCode MatKspmvSetBlockTimings(Mat K, PetscBool on) {
  PetscFunctionBegin;
  PetscCall(set_switch(K, &Context::block_timings, on));
  PetscFunctionReturn(0);
}

PetscErrorCode MatKspmvSetDiagonalFirst(Mat K, PetscBool on) {
  PetscFunctionBegin;
  PetscCall(set_switch(K, &Context::diagonal_first, on));
  PetscFunctionReturn(0);
}

PetscErrorCode MatKspmvSetExchange(Mat K, Exchange e) {
  Context* c = nullptr;
  PetscFunctionBegin;
  PetscCall(get_context(K, &c));
  PetscCall(check_exchange(e, "MatKspmvSetExchange"));
  c->exchange = e;
  PetscFunctionReturn(0);
}

PetscErrorCode MatKspmvGetExchange(Mat K, Exchange* e) {
  PetscFunctionBegin;
  PetscCall(get_field(K, &Context::exchange, e, "MatKspmvGetExchange"));
  PetscFunctionReturn(0);
}

PetscErrorCode MatKspmvResetTimings(Mat K) {
  Context* c = nullptr;
  PetscFunctionBegin;
  PetscCall(get_context(K, &c));
  const MultTimings kept = c->timings;
  c->timings = MultTimings{};
  c->timings.conversion = kept.conversion;
  c->timings.refresh = kept.refresh;
  c->timings.device_input = kept.device_input;
  PetscFunctionReturn(0);
}

namespace {

// New values for one block, in its CSR order, into its kspmv matrix.
void refresh_block(Block& b, const PetscScalar* values) {
  if (b.m.empty()) return;
  Exec space;
  if constexpr (kHostSpace) {
    b.m.update_values(space, ConstDeviceVector(values, static_cast<std::size_t>(b.nnz)));
  } else {
    if (b.staged.extent(0) != static_cast<std::size_t>(b.nnz))
      b.staged = DeviceVector(Kokkos::ViewAllocateWithoutInitializing("kspmv::petsc::values"),
                              static_cast<std::size_t>(b.nnz));
    Kokkos::deep_copy(space, b.staged, ConstHostArray(values, static_cast<std::size_t>(b.nnz)));
    b.m.update_values(space, b.staged);
  }
  space.fence();
}

}  // namespace

PetscErrorCode MatKspmvRefresh(Mat K) {
  Context* c = nullptr;
  bool mpi = false;
  Blocks b;
  PetscObjectState state = 0;
  PetscInt dnnz = 0, onnz = 0;
  PetscFunctionBegin;
  PetscCall(get_context(K, &c));
  MPI_Comm comm = PetscObjectComm(reinterpret_cast<PetscObject>(K));
  PetscCall(check_aij(c->aij, &mpi));
  PetscCall(MatGetNonzeroState(c->aij, &state));
  PetscCheck(state == c->nonzero_state, comm, PETSC_ERR_ARG_WRONGSTATE,
             "kspmv::petsc: the AIJ matrix's nonzero pattern changed since MatCreateKspmv (nonzero state %" PetscInt64_FMT
             " -> %" PetscInt64_FMT "); MatKspmvRefresh takes new values only: create a new kspmv matrix",
             static_cast<PetscInt64>(c->nonzero_state), static_cast<PetscInt64>(state));
  PetscCall(get_blocks(c->aij, mpi, &b));

  // The same pattern on this rank (the nonzero state says so globally; the
  // counts and the ghost columns are checked too), and maps to refresh by.
  Status st;
  PetscCall(with_csr(b.ad, [&](PetscInt n, PetscInt, const PetscInt* ia, const PetscInt*, const PetscScalar*) {
    dnnz = ia[n];
  }));
  if (b.ao)
    PetscCall(with_csr(b.ao, [&](PetscInt n, PetscInt, const PetscInt* ia, const PetscInt*, const PetscScalar*) {
      onnz = ia[n];
    }));
  if (dnnz != c->diag.nnz || onnz != c->off.nnz || b.nghost != static_cast<PetscInt>(c->garray.size()) ||
      !std::equal(c->garray.begin(), c->garray.end(), b.garray))
    st.fail(PETSC_ERR_ARG_WRONGSTATE,
            "the AIJ matrix's blocks changed (entries " + std::to_string(c->diag.nnz) + " + " + std::to_string(c->off.nnz) +
                " -> " + std::to_string(dnnz) + " + " + std::to_string(onnz) + ", ghost columns " +
                std::to_string(c->garray.size()) + " -> " + std::to_string(b.nghost) +
                "); MatKspmvRefresh takes new values only: create a new kspmv matrix");
  for (const Block* blk : {&c->diag, &c->off, &c->off_compact})
    if (!blk->m.empty() && !blk->m.refreshable())
      st.fail(PETSC_ERR_SUP, std::string("the ") + (blk == &c->diag ? "diagonal" : "off-diagonal") + " block (" +
                                 blk->m.name() + ") was converted with ConvertOptions::value_map off and cannot be refreshed");
  PetscCall(agree(comm, st));

  Kokkos::Timer timer;
  // Values PETSc holds on the device (MATAIJKOKKOS) refresh from there.
  DeviceArrays d, o;
  bool on_device = false, off_on_device = true;
  if (c->device_input) {
    PetscCall(device_csr(b.ad, &d, &on_device));
    if (b.ao) PetscCall(device_csr(b.ao, &o, &off_on_device));
  }
  if (on_device && off_on_device) {
    Exec space;
    st.run("refresh of the diagonal block", [&] {
      if (!c->diag.m.empty()) c->diag.m.update_values(space, DeviceValues(d.a, static_cast<std::size_t>(d.nnz)));
    });
    st.run("refresh of the off-diagonal block", [&] {
      if (!c->off.m.empty()) c->off.m.update_values(space, DeviceValues(o.a, static_cast<std::size_t>(o.nnz)));
      if (!c->off_compact.m.empty())
        c->off_compact.m.update_values(space, DeviceValues(o.a, static_cast<std::size_t>(o.nnz)));
    });
    st.run("diagonal entries", [&] { fill_diagonal_on_device(*c, DeviceValues(d.a, static_cast<std::size_t>(d.nnz))); });
    space.fence();
    PetscCall(agree(comm, st));
    c->timings.refresh = timer.seconds();
    PetscCall(MatScale(K, 2));
    PetscCall(MatScale(K, 0.5));
    PetscFunctionReturn(0);
  }
  const PetscScalar *dv = nullptr, *ov = nullptr;
  PetscCall(MatSeqAIJGetArrayRead(b.ad, &dv));
  if (b.ao) PetscCall(MatSeqAIJGetArrayRead(b.ao, &ov));
  st.run("refresh of the diagonal block", [&] { refresh_block(c->diag, dv); });
  st.run("refresh of the off-diagonal block", [&] {
    refresh_block(c->off, ov);
    refresh_block(c->off_compact, ov);
  });
  fill_diagonal(*c, dv, ov);
  if (b.ao) PetscCall(MatSeqAIJRestoreArrayRead(b.ao, &ov));
  PetscCall(MatSeqAIJRestoreArrayRead(b.ad, &dv));
  PetscCall(agree(comm, st));
  c->timings.refresh = timer.seconds();
  // K's state moves on (as a re-assembled AIJ matrix's does), so a PC set
  // up from K (Jacobi's diagonal) is set up again at the next solve.
  // PetscObjectStateIncrease is in PETSc's private headers, MatScale by 1
  // returns before it counts, and MatAssemblyEnd on a MATSHELL drops the
  // user's MatScale/MatShift: scaling by 2 and back by 1/2 advances the
  // state and leaves the shell's factors exactly as they were (powers of
  // two).
  PetscCall(MatScale(K, 2));
  PetscCall(MatScale(K, 0.5));
  PetscFunctionReturn(0);
}

}  // namespace kspmv::petsc

#!/usr/bin/env bash
# Weak and strong scaling of the PETSc-hosted kspmv matrix on one node with
# several GPUs, one MPI rank per GPU, beside PETSc's own GPU matrix types:
# examples/petsc_ksp run at each rank count, its -csv rows collected.
#
#   scripts/petsc_scaling.sh PETSC_KSP OUT_DIR [RANK_COUNTS] [extra petsc_ksp options]
#
#   PETSC_KSP    the petsc_ksp binary of a CUDA build (PETSc with Kokkos)
#   OUT_DIR      where scaling.csv and one log per run go (appended as each
#                run ends, so a run stopped early keeps what it measured)
#   RANK_COUNTS  e.g. "1 2 4" (default: 1, then doubling up to the GPUs
#                nvidia-smi lists)
#
# Runs, each at every rank count (SCALING_RUNS picks some; sizes from
# LAP_PER_RANK, FEM_PER_RANK, LAP_STRONG, formats from LAP_FORMATS and
# FEM_FORMATS where set; SCALING_CSV names the CSV file):
#   weak   lap3d  -n_per_rank 192       (7.1M rows, 49.5M nonzeros a rank)
#   weak   FEM P2 -fem_box_per_rank 60  (1.8M rows, 50M nonzeros a rank)
#   strong lap3d  -n 256                (16.8M rows, 117M nonzeros in all)
# The diagonal blocks in several kspmv formats one after the other (auto
# and the likely best by hand), the off-diagonal blocks in csr; beside them
# MATAIJKOKKOS (the kspmv matrix's input) and MATAIJCUSPARSE. Products only
# (-solves 0). The kspmv matrix exchanges its halo its own way (the
# default, Exchange::Direct); pass -exchanges_too scatter (and
# -diagonal_first_too) to time PETSc's VecScatter beside it. Set MPIEXEC (default mpiexec) and MPIEXEC_FLAGS as your MPI
# needs; PETSC_OPTIONS passes PETSc options to every run (for an MPI that
# is not GPU-aware: -use_gpu_aware_mpi 0). Each rank sees one GPU
# (CUDA_VISIBLE_DEVICES from its node-local rank: Open MPI, MPICH or Slurm;
# ranks past the GPU count share them round robin). A CUDA-aware MPI that
# moves device buffers by CUDA IPC needs every GPU visible to every rank:
# KSPMV_SCALING_BIND=petsc leaves them all visible and PETSc (which sets
# up Kokkos for kspmv) takes GPU rank % GPUs.
set -uo pipefail
exe=${1:?petsc_ksp binary}
out=${2:?output folder}
gpus=$(nvidia-smi --list-gpus 2>/dev/null | wc -l)
export KSPMV_SCALING_GPUS=$((gpus > 0 ? gpus : 1))
counts=${3:-}
if [[ -z $counts ]]; then
  counts=1
  for ((r = 2; r <= gpus; r *= 2)); do counts+=" $r"; done
fi
shift $(($# < 3 ? $# : 3))
extra=("$@")
mkdir -p "$out"
csv=${SCALING_CSV:-$out/scaling.csv}
runs=" ${SCALING_RUNS:-weak-lap3d weak-fem-p2 strong-lap3d} "
mpiexec=${MPIEXEC:-mpiexec}
# shellcheck disable=SC2206
mpiflags=(${MPIEXEC_FLAGS:-})

# One GPU a rank: the node-local rank picks it.
bind=$out/bind_gpu.sh
cat >"$bind" <<'EOF'
#!/usr/bin/env bash
if [ "${KSPMV_SCALING_BIND:-}" != petsc ]; then
  local_rank=${OMPI_COMM_WORLD_LOCAL_RANK:-${MPI_LOCALRANKID:-${SLURM_LOCALID:-0}}}
  export CUDA_VISIBLE_DEVICES=$((local_rank % ${KSPMV_SCALING_GPUS:-1}))
fi
exec "$@"
EOF
chmod +x "$bind"

common=(-solves 0 -mults 200 -kspmv_input aijkokkos -compare_types aijcusparse -csv "$csv")
run() {  # name ranks options...
  local name=$1 np=$2
  shift 2
  [[ $runs == *" $name "* ]] || return 0
  local log=$out/$name-np$np.log
  echo "== $name, $np rank(s): $*" | tee "$log"
  local t0=$SECONDS
  "$mpiexec" -n "$np" "${mpiflags[@]}" "$bind" "$exe" -n 0 -mesh "" "$@" "${common[@]}" "${extra[@]}" >>"$log" 2>&1
  local rc=$?
  echo "   exit $rc after $((SECONDS - t0)) s" | tee -a "$log"
  grep -E "^(lap3d|fem)|kspmv \(|time per MatMult|aijkokkos|aijcusparse|TOO LARGE|check:|rror" "$log" | head -40
}

for np in $counts; do
  run weak-lap3d "$np" -n_per_rank "${LAP_PER_RANK:-192}" -diag_format "${LAP_FORMATS:-auto,dia,csr-vector}"
  run weak-fem-p2 "$np" -fem_box_per_rank "${FEM_PER_RANK:-60}" -diag_format "${FEM_FORMATS:-auto,pellr,ehyb}"
  run strong-lap3d "$np" -n "${LAP_STRONG:-256}" -diag_format "${LAP_FORMATS:-auto,dia}"
done
echo "== rows in $csv:"
cat "$csv"

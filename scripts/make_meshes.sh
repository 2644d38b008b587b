#!/usr/bin/env bash
# Meshes the benchmark geometries (perf_tests/meshes/*.geo) with gmsh into
# gzipped MSH 2.2 files, coarse enough to carry to a GPU node (about 1 MB
# each); the fem: generator refines them there (fem:MESH:p1|p2:refine=R).
#
#   scripts/make_meshes.sh OUTDIR      (needs gmsh: apt-get install gmsh)
#
# The sizes below are the ones perf_tests/suites/fem*.txt were written for:
# changing them changes every FEM matrix of the suite.
set -euo pipefail
out=${1:?usage: scripts/make_meshes.sh OUTDIR}
src="$(cd "$(dirname "$0")/../perf_tests/meshes" && pwd)"
command -v gmsh >/dev/null || { echo "make_meshes: gmsh not found (apt-get install gmsh)" >&2; exit 2; }
mkdir -p "$out"
for spec in cube-sphere-hole:0.05 bracket:0.04 pipe-tee:0.06; do
  name=${spec%%:*} h=${spec##*:}
  gmsh -3 -format msh22 -setnumber h "$h" "$src/$name.geo" -o "$out/$name.msh" > "$out/$name.log" 2>&1 ||
    { cat "$out/$name.log" >&2; exit 1; }
  gzip -9 -f "$out/$name.msh"
  echo "make_meshes: $out/$name.msh.gz (h = $h, $(grep -c . "$out/$name.log") log lines)"
done

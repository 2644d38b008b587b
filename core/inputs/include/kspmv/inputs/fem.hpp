// Finite-element matrices from unstructured tetrahedral meshes: the
// benchmark's "real FEM" matrices (perf_tests/meshes/*.geo, meshed by gmsh).
//
//   TetMesh m = read_gmsh("bracket.msh.gz");   // MSH 2.2 ASCII, plain or gzip
//   m = refine_uniform(m);                     // 8 children per tetrahedron
//   HostCsr<double> k = assemble_laplacian<double>(m, FemElement::P2);
//
// A mesh file small enough to carry is refined on the machine that runs
// the benchmark (Bey's red refinement, what `gmsh -refine` does), so one
// coarse gmsh mesh yields matrices from 10^5 to 10^8 nonzeros with the
// coarse mesh's unstructured connectivity.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kspmv/core/host_matrix.hpp"
#include "kspmv/core/progress.hpp"

namespace kspmv {

struct TetMesh {
  std::vector<std::array<double, 3>> nodes;
  std::vector<std::array<ordinal_t, 4>> tets;  // node numbers from 0
};

// Reads the 4-node tetrahedra (element type 4) of a gmsh MSH 2.2 ASCII file
// (gmsh -format msh22); other element types (points, lines, triangles)
// are skipped, node numbers may be sparse. Nodes used by no tetrahedron are
// dropped, so every mesh node is a degree of freedom. Errors (ParseError
// with file and line): MSH 4 or binary files, missing sections, references
// to unknown nodes, degenerate (zero-volume) tetrahedra, no tetrahedra.
TetMesh read_gmsh(const std::string& path);
// The same from text in memory; `source` names it in errors.
TetMesh parse_gmsh(std::string_view text, const std::string& source = "<msh>");

// Bey's red refinement: each tetrahedron -> 4 corner tetrahedra + 4 from
// its inner octahedron (cut along the diagonal between the midpoints of
// edges 0-2 and 1-3), edge midpoints shared by neighbours (the result is
// conforming). New nodes follow the old ones, in order of first use.
TetMesh refine_uniform(const TetMesh& m, const ProgressFn& progress = {});

// A structured mesh of the box [0, nx] x [0, ny] x [z0, z0 + nz] of unit
// cubes, each cut into Kuhn's six tetrahedra around its diagonal from
// (0,0,0) to (1,1,1) (conforming, every tetrahedron of volume 1/6). Node
// (i, j, k) is number i + (nx + 1) * (j + (ny + 1) * (k - z0)), so a slab
// of a larger box (z0 > 0) numbers its nodes in the larger box's order.
// For a matrix that grows with the problem the way a structured FEM code's
// does (the PETSc example's weak scaling assembles each rank's slab).
// InvalidArgumentError for a non-positive extent or more nodes than 32-bit
// numbers hold.
TetMesh box_mesh(ordinal_t nx, ordinal_t ny, ordinal_t nz, ordinal_t z0 = 0);

double tet_volume(const TetMesh& m, std::size_t t);  // signed
double mesh_volume(const TetMesh& m);                // sum of |volumes|

// Degrees of freedom: P1 one per node (node order); P2 one per node, then
// one per edge (edges in order of first use by the tetrahedra).
enum class FemElement { P1, P2 };

// Edge numbering: edges[e] = {a, b} (a < b) and tet_edges[t] = the edges
// of tetrahedron t in local order 01 02 03 12 13 23.
struct TetEdges {
  std::vector<std::array<ordinal_t, 2>> edges;
  std::vector<std::array<ordinal_t, 6>> tet_edges;
};
TetEdges number_edges(const TetMesh& m);

// The stiffness matrix of -Δu (∫ ∇φ_i·∇φ_j, no boundary conditions:
// symmetric, singular, rows sum to zero) assembled exactly (P2: the
// 4-point degree-2 rule, exact for its quadratic integrand).
template <class Scalar>
HostCsr<Scalar> assemble_laplacian(const TetMesh& m, FemElement e, const ProgressFn& progress = {});

// Rows [first, last) of the stiffness matrix (as assemble_laplacian's) on
// box_mesh(nx, ny, nz), with the degrees of freedom numbered along the
// box's grid: P1 the nodes, in box_mesh's order; P2 the points of the
// half-step grid, (2nx + 1) x (2ny + 1) x (2nz + 1), x fastest (under
// Kuhn's cut every such point is a node or the midpoint of exactly one
// edge). Assembled from the slab of cubes that touches those rows alone,
// in time and memory proportional to them: each rank of a distributed code
// builds its own rows of a matrix too large for one. The result has
// last - first rows, every degree of freedom as a column, columns sorted.
// InvalidArgumentError for a bad box or a range outside [0, dofs],
// OverflowError where the degrees of freedom pass 32-bit columns.
std::int64_t box_dofs(ordinal_t nx, ordinal_t ny, ordinal_t nz, FemElement e);
template <class Scalar>
HostCsr<Scalar> box_laplacian_rows(ordinal_t nx, ordinal_t ny, ordinal_t nz, FemElement e, std::int64_t first,
                                   std::int64_t last);

// The `fem:` generator spec: fem:MESH:p1|p2[:refine=R][:order=natural|rcm|
// scrambled][:seed=S]. MESH is a path, tried as given and then under
// $KSPMV_MESH_DIR, or box=NXxNYxNZ: the structured box of box_mesh, its
// degrees of freedom numbered along the grid (box_laplacian_rows; no
// refine). order=rcm: reverse Cuthill-McKee (a good order);
// scrambled: a seeded random symmetric permutation (the worst case for x
// locality); natural: the mesh's own numbering (default).
template <class Scalar>
HostCsr<Scalar> fem_matrix(const std::string& spec, const ProgressFn& progress = {});

}  // namespace kspmv

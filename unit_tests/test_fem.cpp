// FEM matrices from gmsh meshes: the MSH 2.2 reader and its errors, red
// refinement (volume kept, conforming, children of equal volume), and the
// assembled Laplacians checked against integrals known in closed form
// (constants in the kernel, u^T K u = ∫|∇u|² for linear and, with P2,
// quadratic u), plus the fem: spec and its node orders.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>

#include "kspmv/inputs/fem.hpp"
#include "kspmv/core/partition.hpp"
#include "test_support.hpp"

using namespace kspmv;

namespace {

std::string fixture() { return kspmv_test::data_dir() + "/cube_sphere_hole_coarse.msh"; }

// Named after the running test as well: CTest runs tests in parallel
// processes, and two tests writing one_tet.msh at once made one of them
// read a half-written file.
std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path =
      ::testing::TempDir() + ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" + name;
  std::ofstream(path) << text;
  return path;
}

// One tetrahedron of volume 1/6 and a point element that must be skipped.
const char* kOneTet =
    "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n5\n10 0 0 0\n20 1 0 0\n30 0 1 0\n40 0 0 1\n50 9 9 9\n$EndNodes\n"
    "$Elements\n2\n1 15 2 0 1 50\n2 4 2 0 1 10 20 30 40\n$EndElements\n";

// Faces (sorted node triples) -> how many tetrahedra share them.
std::map<std::array<ordinal_t, 3>, int> faces(const TetMesh& m) {
  std::map<std::array<ordinal_t, 3>, int> f;
  for (const auto& t : m.tets)
    for (int skip = 0; skip < 4; ++skip) {
      std::array<ordinal_t, 3> k{};
      for (int i = 0, j = 0; i < 4; ++i)
        if (i != skip) k[j++] = t[i];
      std::sort(k.begin(), k.end());
      ++f[k];
    }
  return f;
}

// u^T A u in long double.
long double energy(const HostCsr<double>& a, const std::vector<double>& u) {
  long double e = 0;
  for (ordinal_t i = 0; i < a.nrows; ++i)
    for (auto k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) e += (long double)u[i] * a.values[k] * u[a.col_idx[k]];
  return e;
}

// Values of u at the P2 degrees of freedom: nodes, then edge midpoints.
template <class F>
std::vector<double> p2_values(const TetMesh& m, F u) {
  std::vector<double> v;
  for (const auto& p : m.nodes) v.push_back(u(p));
  for (const auto& e : number_edges(m).edges) {
    const auto &a = m.nodes[e[0]], &b = m.nodes[e[1]];
    v.push_back(u(std::array<double, 3>{(a[0] + b[0]) / 2, (a[1] + b[1]) / 2, (a[2] + b[2]) / 2}));
  }
  return v;
}

}  // namespace

TEST(Fem, ReadsGmshTetrahedraAndSkipsOtherElements) {
  const TetMesh one = read_gmsh(write_temp("one_tet.msh", kOneTet));
  ASSERT_EQ(one.tets.size(), 1u);
  ASSERT_EQ(one.nodes.size(), 4u);  // the point element's node is dropped
  EXPECT_DOUBLE_EQ(std::fabs(tet_volume(one, 0)), 1.0 / 6);
  const TetMesh m = read_gmsh(fixture());
  EXPECT_EQ(m.nodes.size(), 363u);
  // The unit cube minus a sphere of radius 0.3, faceted: the facets lie
  // inside the sphere, so the mesh holds a little more than the exact volume.
  const double exact = 1 - 4.0 / 3 * M_PI * 0.027;
  EXPECT_GT(mesh_volume(m), exact);
  EXPECT_LT(mesh_volume(m), exact + 0.03);
  for (std::size_t t = 0; t < m.tets.size(); ++t) ASSERT_GT(std::fabs(tet_volume(m, t)), 0);
}

TEST(Fem, ReaderErrorsNameTheProblem) {
  auto fails_with = [](const std::string& text, const std::string& what) {
    const std::string path = write_temp("bad.msh", text);
    try {
      read_gmsh(path);
      ADD_FAILURE() << "no error for: " << what;
    } catch (const ParseError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  fails_with("$MeshFormat\n4.1 0 8\n$EndMeshFormat\n", "msh22");
  fails_with("$MeshFormat\n2.2 1 8\n$EndMeshFormat\n", "binary");
  fails_with("hello\n", "$MeshFormat");
  fails_with("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n99999999999\n1 0 0 0\n", "exceeds");
  fails_with("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n2\n1 0 0 0\n", "ends inside $Nodes");
  fails_with("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n1\n1 0 0 x\n$EndNodes\n", "malformed node");
  fails_with("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n2\n1 0 0 0\n1 1 0 0\n$EndNodes\n", "twice");
  const std::string nodes = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n4\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n$EndNodes\n";
  fails_with(nodes + "$Elements\n1\n1 4 0 1 2 3 7\n$EndElements\n", "unknown node 7");
  fails_with(nodes + "$Elements\n1\n1 2 0 1 2 3\n$EndElements\n", "no tetrahedra");
  fails_with(nodes + "$Elements\n1\n1 4 0 1 2 3\n$EndElements\n", "4 nodes");
  fails_with(nodes + "$Elements\n1\n1 4 0 1 2 3 3\n$EndElements\n", "zero volume");
  EXPECT_THROW(read_gmsh(::testing::TempDir() + "no_such.msh"), Error);
}

TEST(Fem, RedRefinementKeepsVolumeAndConformity) {
  const TetMesh one = read_gmsh(write_temp("one_tet.msh", kOneTet));
  const TetMesh r1 = refine_uniform(one);
  ASSERT_EQ(r1.tets.size(), 8u);
  ASSERT_EQ(r1.nodes.size(), 10u);  // 4 vertices + 6 midpoints
  for (std::size_t t = 0; t < 8; ++t) EXPECT_NEAR(std::fabs(tet_volume(r1, t)), 1.0 / 48, 1e-15) << t;

  const TetMesh m = read_gmsh(fixture());
  const TetMesh r = refine_uniform(m);
  EXPECT_EQ(r.tets.size(), 8 * m.tets.size());
  EXPECT_EQ(r.nodes.size(), m.nodes.size() + number_edges(m).edges.size());
  EXPECT_NEAR(mesh_volume(r), mesh_volume(m), 1e-12);
  // Conforming: no face is shared by more than two tetrahedra, and each
  // boundary face of the coarse mesh became exactly four.
  const auto fc = faces(m), fr = faces(r);
  int coarse_boundary = 0, fine_boundary = 0;
  for (const auto& [k, n] : fc) coarse_boundary += n == 1;
  for (const auto& [k, n] : fr) {
    ASSERT_LE(n, 2);
    fine_boundary += n == 1;
  }
  EXPECT_EQ(fine_boundary, 4 * coarse_boundary);
}

TEST(Fem, LaplacianIntegratesGradientsExactly) {
  TetMesh m = read_gmsh(fixture());
  m = refine_uniform(m);
  const double vol = mesh_volume(m);
  for (FemElement e : {FemElement::P1, FemElement::P2}) {
    const auto a = assemble_laplacian<double>(m, e);
    a.validate();
    const std::size_t ndof = e == FemElement::P1 ? m.nodes.size() : m.nodes.size() + number_edges(m).edges.size();
    ASSERT_EQ(static_cast<std::size_t>(a.nrows), ndof);
    // Symmetric, positive diagonal, rows summing to zero (constants are in
    // the kernel of the Laplacian without boundary conditions).
    std::map<std::pair<ordinal_t, ordinal_t>, double> entry;
    for (ordinal_t i = 0; i < a.nrows; ++i)
      for (auto k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) entry[{i, a.col_idx[k]}] = a.values[k];
    for (ordinal_t i = 0; i < a.nrows; ++i) {
      double sum = 0, diag = 0;
      for (auto k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
        const ordinal_t j = a.col_idx[k];
        ASSERT_EQ(entry.at({j, i}), a.values[k]);
        sum += a.values[k];
        if (j == i) diag = a.values[k];
      }
      ASSERT_GT(diag, 0) << i;
      ASSERT_NEAR(sum, 0, 1e-12 * diag) << i;
    }
    // u = 2x - y + 3z + 1: u^T K u = ∫|∇u|² = 14 · volume.
    auto lin = [](const std::array<double, 3>& p) { return 2 * p[0] - p[1] + 3 * p[2] + 1; };
    std::vector<double> u;
    if (e == FemElement::P1)
      for (const auto& p : m.nodes) u.push_back(lin(p));
    else
      u = p2_values(m, lin);
    EXPECT_NEAR(double(energy(a, u)), 14 * vol, 1e-10 * 14 * vol);
  }
  // P2 holds quadratics: u = x², ∫|∇u|² = ∫ 4x², per tetrahedron
  // vol/10 · (Σ x_i² + Σ_{i<j} x_i x_j).
  const auto a2 = assemble_laplacian<double>(m, FemElement::P2);
  long double exact = 0;
  for (std::size_t t = 0; t < m.tets.size(); ++t) {
    double x[4], sq = 0, cross = 0;
    for (int i = 0; i < 4; ++i) x[i] = m.nodes[m.tets[t][i]][0];
    for (int i = 0; i < 4; ++i) {
      sq += x[i] * x[i];
      for (int j = i + 1; j < 4; ++j) cross += x[i] * x[j];
    }
    exact += 4 * std::fabs(tet_volume(m, t)) / 10 * (sq + cross);
  }
  const auto u2 = p2_values(m, [](const std::array<double, 3>& p) { return p[0] * p[0]; });
  EXPECT_NEAR(double(energy(a2, u2)), double(exact), 1e-10 * double(exact));
}

TEST(Fem, SpecOrdersAreSymmetricPermutations) {
  const std::string base = "fem:" + fixture() + ":p1";
  const auto natural = generate<double>(base);
  const auto scrambled = generate<double>(base + ":order=scrambled:seed=3");
  const auto rcm = generate<double>(base + ":order=rcm");
  ASSERT_EQ(natural.nrows, 363);
  for (const auto* b : {&scrambled, &rcm}) {
    ASSERT_EQ(b->nrows, natural.nrows);
    ASSERT_EQ(b->nnz(), natural.nnz());
    b->validate();
  }
  // B = P A P^T for the RCM order: B(i, j) = A(p[i], p[j]).
  const auto p = reverse_cuthill_mckee(natural);
  std::map<std::pair<ordinal_t, ordinal_t>, double> a;
  for (ordinal_t i = 0; i < natural.nrows; ++i)
    for (auto k = natural.row_ptr[i]; k < natural.row_ptr[i + 1]; ++k) a[{i, natural.col_idx[k]}] = natural.values[k];
  for (ordinal_t i = 0; i < rcm.nrows; ++i)
    for (auto k = rcm.row_ptr[i]; k < rcm.row_ptr[i + 1]; ++k)
      ASSERT_EQ(rcm.values[k], a.at({p[i], p[rcm.col_idx[k]]}));
  // Bandwidth: RCM narrows it, scrambling widens it.
  auto bandwidth = [](const HostCsr<double>& m) {
    std::int64_t w = 0;
    for (ordinal_t i = 0; i < m.nrows; ++i)
      for (auto k = m.row_ptr[i]; k < m.row_ptr[i + 1]; ++k) w = std::max<std::int64_t>(w, std::abs(m.col_idx[k] - i));
    return w;
  };
  EXPECT_LT(bandwidth(rcm), bandwidth(natural));
  EXPECT_GT(bandwidth(scrambled), 2 * bandwidth(rcm));
  // Same seed, same matrix; another seed, another order.
  EXPECT_EQ(generate<double>(base + ":order=scrambled:seed=3").col_idx, scrambled.col_idx);
  EXPECT_NE(generate<double>(base + ":order=scrambled:seed=4").col_idx, scrambled.col_idx);
}

TEST(Fem, SpecErrors) {
  const std::string mesh = fixture();
  EXPECT_THROW(generate<double>("fem:" + mesh + ":p3"), ParseError);
  EXPECT_THROW(generate<double>("fem:" + mesh), ParseError);
  EXPECT_THROW(generate<double>("fem:" + mesh + ":p1:order=random"), ParseError);
  EXPECT_THROW(generate<double>("fem:" + mesh + ":p1:refine=9"), ParseError);
  EXPECT_THROW(generate<double>("fem:" + mesh + ":p1:colour=red"), ParseError);
  EXPECT_THROW(generate<double>("fem:/no/such/mesh.msh:p1"), IoError);
  EXPECT_TRUE(is_generator_spec("fem:x.msh:p1"));
  for (const char* bad : {"fem:box=3x2:p1", "fem:box=3x2x0:p1", "fem:box=3x-2x4:p2", "fem:box=3x2x4x5:p1", "fem:box=3x2x4:p2:refine=1",
                          "fem:box=axbxc:p1"})
    EXPECT_THROW(generate<double>(bad), ParseError) << bad;
}

// fem:box= is the box's stiffness matrix in grid order, or a symmetric
// permutation of it.
TEST(Fem, BoxSpecIsTheBoxInGridOrder) {
  for (FemElement e : {FemElement::P1, FemElement::P2}) {
    const std::string el = e == FemElement::P1 ? "p1" : "p2";
    const auto a = generate<double>("fem:box=3x2x4:" + el);
    const auto b = box_laplacian_rows<double>(3, 2, 4, e, 0, box_dofs(3, 2, 4, e));
    EXPECT_EQ(a.row_ptr, b.row_ptr);
    EXPECT_EQ(a.col_idx, b.col_idx);
    EXPECT_EQ(a.values, b.values);
    const auto s = generate<double>("fem:box=3x2x4:" + el + ":order=scrambled:seed=4");
    EXPECT_EQ(s.nrows, a.nrows);
    EXPECT_EQ(s.nnz(), a.nnz());
    EXPECT_NE(s.col_idx, a.col_idx);
  }
}

TEST(Fem, BoxMeshFillsTheBoxConformingly) {
  const TetMesh m = box_mesh(3, 2, 4, 5);
  ASSERT_EQ(m.nodes.size(), 4u * 3u * 5u);
  ASSERT_EQ(m.tets.size(), 6u * 3u * 2u * 4u);
  for (std::size_t t = 0; t < m.tets.size(); ++t) EXPECT_NEAR(std::fabs(tet_volume(m, t)), 1.0 / 6, 1e-15) << t;
  EXPECT_NEAR(mesh_volume(m), 24.0, 1e-12);
  for (const auto& p : m.nodes) {
    EXPECT_GE(p[2], 5.0);
    EXPECT_LE(p[2], 9.0);
  }
  EXPECT_EQ(m.nodes[1 + 4 * (2 + 3 * 1)], (std::array<double, 3>{1, 2, 6}));  // i + (nx+1)(j + (ny+1)(k - z0))
  // Conforming: each face inside the box is shared by two tetrahedra, each
  // unit square of the box's surface is cut into two faces of one.
  int boundary = 0;
  for (const auto& [k, n] : faces(m)) {
    ASSERT_LE(n, 2);
    boundary += n == 1;
  }
  EXPECT_EQ(boundary, 2 * 2 * (3 * 2 + 2 * 4 + 3 * 4));
  EXPECT_THROW(box_mesh(0, 1, 1), InvalidArgumentError);
  EXPECT_THROW(box_mesh(1, 1, -2), InvalidArgumentError);
  EXPECT_THROW(box_mesh(1, 1, 1, -1), InvalidArgumentError);
  EXPECT_THROW(box_mesh(70000, 70000, 1), InvalidArgumentError);
}

// The box's rows assembled slab by slab are the whole box's matrix, its
// degrees of freedom renumbered along the grid, whatever the split.
TEST(Fem, BoxRowsEqualTheWholeBoxInGridOrder) {
  const ordinal_t nx = 3, ny = 2, nz = 5;
  const TetMesh m = box_mesh(nx, ny, nz);
  for (FemElement e : {FemElement::P1, FemElement::P2}) {
    const auto whole = assemble_laplacian<double>(m, e);
    const std::int64_t s = e == FemElement::P1 ? 1 : 2, gx = s * nx + 1, gy = s * ny + 1;
    const std::int64_t n = box_dofs(nx, ny, nz, e);
    ASSERT_EQ(n, whole.nrows);
    // whole's dof -> grid point, from coordinates (doubled midpoints for P2).
    std::vector<std::int64_t> grid;
    for (const auto& p : m.nodes) grid.push_back(std::int64_t(s * p[0] + gx * (s * p[1] + gy * s * p[2])));
    if (e == FemElement::P2)
      for (const auto& ed : number_edges(m).edges) {
        const auto &a = m.nodes[ed[0]], &b = m.nodes[ed[1]];
        grid.push_back(std::int64_t(a[0] + b[0] + gx * (a[1] + b[1] + gy * (a[2] + b[2]))));
      }
    std::vector<std::map<std::int64_t, double>> expect(static_cast<std::size_t>(n));
    for (ordinal_t i = 0; i < whole.nrows; ++i)
      for (auto k = whole.row_ptr[i]; k < whole.row_ptr[i + 1]; ++k)
        expect[static_cast<std::size_t>(grid[i])][grid[whole.col_idx[k]]] = whole.values[k];
    const std::int64_t plane = gx * gy;
    // Splits mid-plane, on a plane boundary, one row, and the whole.
    for (const auto& cuts : std::vector<std::vector<std::int64_t>>{
             {0, n / 3, 2 * n / 3, n}, {0, 2 * plane, n}, {0, plane + 1, plane + 2, n}, {0, n}}) {
      for (std::size_t c = 0; c + 1 < cuts.size(); ++c) {
        const auto rows = box_laplacian_rows<double>(nx, ny, nz, e, cuts[c], cuts[c + 1]);
        rows.validate();
        ASSERT_EQ(rows.nrows, cuts[c + 1] - cuts[c]);
        ASSERT_EQ(rows.ncols, n);
        for (ordinal_t i = 0; i < rows.nrows; ++i) {
          const auto& want = expect[static_cast<std::size_t>(cuts[c] + i)];
          ASSERT_EQ(std::size_t(rows.row_length(i)), want.size()) << "row " << cuts[c] + i;
          for (auto k = rows.row_ptr[i]; k < rows.row_ptr[i + 1]; ++k) {
            const double w = want.at(rows.col_idx[k]);
            ASSERT_NEAR(rows.values[k], w, 1e-13 * (1 + std::fabs(w))) << "row " << cuts[c] + i;
          }
        }
      }
    }
    EXPECT_EQ(box_laplacian_rows<double>(nx, ny, nz, e, 7, 7).nrows, 0);
    EXPECT_THROW(box_laplacian_rows<double>(nx, ny, nz, e, 5, 4), InvalidArgumentError);
    EXPECT_THROW(box_laplacian_rows<double>(nx, ny, nz, e, 0, n + 1), InvalidArgumentError);
    EXPECT_THROW(box_laplacian_rows<double>(0, ny, nz, e, 0, 1), InvalidArgumentError);
  }
  EXPECT_THROW(box_laplacian_rows<double>(2000, 2000, 2000, FemElement::P2, 0, 1), OverflowError);
}

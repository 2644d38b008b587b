#include "kspmv/inputs/fem.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <charconv>
#include <cctype>
#include <fstream>
#include <limits>
#include <string_view>
#include <map>
#include <numeric>
#include <unordered_map>

#include "kspmv/core/error.hpp"
#include "kspmv/inputs/generators.hpp"
#include "kspmv/inputs/matrix_market.hpp"
#include "kspmv/core/partition.hpp"
#include "kspmv/core/permutation.hpp"
#include "kspmv/core/random.hpp"

namespace kspmv {

// ------------------------------------------------------------- reading --

namespace {

// Line-by-line cursor over the file's text, counting lines for errors.
class Lines {
 public:
  Lines(const std::string& path, std::string_view text) : path_(path), text_(text) {}
  bool next(std::string_view& line) {
    if (pos_ >= text_.size()) return false;
    const auto e = text_.find('\n', pos_);
    const std::size_t end = e == std::string::npos ? text_.size() : e;
    line = text_.substr(pos_, end - pos_);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos_ = end + 1;
    ++line_no_;
    return true;
  }
  [[noreturn]] void fail(const std::string& what) const { throw ParseError(path_, line_no_, what); }
  std::size_t remaining() const { return text_.size() - std::min(pos_, text_.size()); }

 private:
  const std::string& path_;
  std::string_view text_;
  std::size_t pos_ = 0;
  std::int64_t line_no_ = 0;
};

// Whitespace-separated numbers of one line.
class Fields {
 public:
  explicit Fields(std::string_view s) : s_(s) {}
  bool integer(std::int64_t& v) {
    skip();
    if (p_ >= s_.size()) return false;
    const char *b = s_.data() + p_, *end = s_.data() + s_.size();
    long long x = 0;
    const auto [e, ec] = std::from_chars(b, end, x);  // bounded: the text need not end in NUL
    if (ec != std::errc() || (e < end && *e != ' ' && *e != '\t')) return false;
    p_ += static_cast<std::size_t>(e - b);
    v = x;
    return true;
  }
  bool real(double& v) {
    skip();
    if (p_ >= s_.size()) return false;
    const std::string tok(s_.substr(p_, s_.find_first_of(" \t", p_) - p_));
    char* e = nullptr;
    v = std::strtod(tok.c_str(), &e);
    if (e != tok.c_str() + tok.size() || !std::isfinite(v)) return false;
    p_ += tok.size();
    return true;
  }

 private:
  void skip() {
    while (p_ < s_.size() && (s_[p_] == ' ' || s_[p_] == '\t')) ++p_;
  }
  std::string_view s_;
  std::size_t p_ = 0;
};

std::int64_t count_line(Lines& in, const char* what) {
  std::string_view line;
  std::int64_t n = -1;
  if (!in.next(line) || !Fields(line).integer(n) || n < 0) in.fail(std::string("expected the number of ") + what);
  // Each entry takes at least two characters of text: a count beyond that
  // is a corrupt or hostile header, not a reason to reserve memory.
  if (static_cast<std::uint64_t>(n) > in.remaining() / 2 + 1)
    in.fail(std::string("the ") + what + " count " + std::to_string(n) + " exceeds what the file can hold");
  return n;
}

void expect(Lines& in, const char* tag) {
  std::string_view line;
  if (!in.next(line) || line != tag) in.fail(std::string("expected ") + tag);
}

}  // namespace

double tet_volume(const TetMesh& m, std::size_t t) {
  const auto& p0 = m.nodes[m.tets[t][0]];
  double d[3][3];
  for (int v = 0; v < 3; ++v)
    for (int c = 0; c < 3; ++c) d[v][c] = m.nodes[m.tets[t][v + 1]][c] - p0[c];
  const double det = d[0][0] * (d[1][1] * d[2][2] - d[1][2] * d[2][1]) -
                     d[0][1] * (d[1][0] * d[2][2] - d[1][2] * d[2][0]) +
                     d[0][2] * (d[1][0] * d[2][1] - d[1][1] * d[2][0]);
  return det / 6;
}

double mesh_volume(const TetMesh& m) {
  double v = 0;
  for (std::size_t t = 0; t < m.tets.size(); ++t) v += std::fabs(tet_volume(m, t));
  return v;
}

TetMesh read_gmsh(const std::string& path) { return parse_gmsh(read_file_maybe_gz(path), path); }

TetMesh parse_gmsh(std::string_view text, const std::string& path) {
  Lines in(path, text);
  std::string_view line;
  expect(in, "$MeshFormat");
  if (!in.next(line)) in.fail("expected the format line");
  {
    Fields f(line);
    double version = 0;
    std::int64_t type = -1, size = 0;
    if (!f.real(version) || !f.integer(type) || !f.integer(size)) in.fail("malformed format line");
    if (version < 2 || version >= 3)
      in.fail("MSH " + std::string(line.substr(0, line.find(' '))) +
              " is not supported: write the mesh with gmsh -format msh22");
    if (type != 0) in.fail("binary MSH is not supported: write the mesh as ASCII (gmsh -format msh22, no -bin)");
  }
  expect(in, "$EndMeshFormat");
  // Skip sections before $Nodes (e.g. $PhysicalNames).
  while (in.next(line) && line != "$Nodes") {
  }
  if (line != "$Nodes") in.fail("no $Nodes section");
  const std::int64_t nnodes = count_line(in, "nodes");
  std::unordered_map<std::int64_t, ordinal_t> node_of_id;
  node_of_id.reserve(static_cast<std::size_t>(nnodes));
  std::vector<std::array<double, 3>> coords;
  coords.reserve(static_cast<std::size_t>(nnodes));
  for (std::int64_t i = 0; i < nnodes; ++i) {
    if (!in.next(line)) in.fail("the file ends inside $Nodes");
    Fields f(line);
    std::int64_t id = 0;
    std::array<double, 3> x{};
    if (!f.integer(id) || !f.real(x[0]) || !f.real(x[1]) || !f.real(x[2])) in.fail("malformed node line");
    if (!node_of_id.emplace(id, static_cast<ordinal_t>(coords.size())).second)
      in.fail("node " + std::to_string(id) + " appears twice");
    coords.push_back(x);
  }
  expect(in, "$EndNodes");
  while (in.next(line) && line != "$Elements") {
  }
  if (line != "$Elements") in.fail("no $Elements section");
  const std::int64_t nelem = count_line(in, "elements");
  std::vector<std::array<ordinal_t, 4>> tets;
  for (std::int64_t e = 0; e < nelem; ++e) {
    if (!in.next(line)) in.fail("the file ends inside $Elements");
    Fields f(line);
    std::int64_t id = 0, type = 0, ntags = 0;
    if (!f.integer(id) || !f.integer(type) || !f.integer(ntags) || ntags < 0) in.fail("malformed element line");
    if (type != 4) continue;  // only 4-node tetrahedra make the volume mesh
    for (std::int64_t k = 0, tag = 0; k < ntags; ++k)
      if (!f.integer(tag)) in.fail("malformed element tags");
    std::array<ordinal_t, 4> t{};
    for (auto& v : t) {
      std::int64_t nid = 0;
      if (!f.integer(nid)) in.fail("a tetrahedron needs 4 nodes");
      const auto it = node_of_id.find(nid);
      if (it == node_of_id.end()) in.fail("element " + std::to_string(id) + " uses unknown node " + std::to_string(nid));
      v = it->second;
    }
    tets.push_back(t);
  }
  expect(in, "$EndElements");
  if (tets.empty()) throw ParseError(path, 0, "the mesh has no tetrahedra (element type 4): mesh it in 3D (gmsh -3)");
  // Keep only the nodes the tetrahedra use, in their original order.
  std::vector<ordinal_t> renumber(coords.size(), -1);
  for (const auto& t : tets)
    for (ordinal_t v : t) renumber[v] = 0;
  TetMesh m;
  for (std::size_t i = 0; i < coords.size(); ++i)
    if (renumber[i] == 0) {
      renumber[i] = static_cast<ordinal_t>(m.nodes.size());
      m.nodes.push_back(coords[i]);
    }
  m.tets = std::move(tets);
  for (auto& t : m.tets)
    for (auto& v : t) v = renumber[v];
  for (std::size_t t = 0; t < m.tets.size(); ++t)
    if (!(std::fabs(tet_volume(m, t)) > 0))
      throw ParseError(path, 0, "tetrahedron " + std::to_string(t) + " (in file order) has zero volume");
  return m;
}

// --------------------------------------------------------------- edges --

namespace {
constexpr int kEdgeEnds[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
}

TetEdges number_edges(const TetMesh& m) {
  // Sort (edge key, slot) pairs, then number distinct keys in order of their
  // first slot, so numbering follows the tetrahedra's order.
  const std::size_t slots = m.tets.size() * 6;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> keys(slots);
  for (std::size_t t = 0; t < m.tets.size(); ++t)
    for (int e = 0; e < 6; ++e) {
      std::uint64_t a = static_cast<std::uint32_t>(m.tets[t][kEdgeEnds[e][0]]);
      std::uint64_t b = static_cast<std::uint32_t>(m.tets[t][kEdgeEnds[e][1]]);
      if (a > b) std::swap(a, b);
      keys[t * 6 + e] = {(a << 32) | b, t * 6 + e};
    }
  std::sort(keys.begin(), keys.end());
  // first slot of each distinct key -> edge in order of first slot
  std::vector<std::uint64_t> first_slot_of_group;
  std::vector<std::size_t> group_of(slots);
  for (std::size_t i = 0; i < slots; ++i) {
    if (i == 0 || keys[i].first != keys[i - 1].first) first_slot_of_group.push_back(keys[i].second);
    group_of[i] = first_slot_of_group.size() - 1;
  }
  std::vector<std::size_t> order(first_slot_of_group.size());
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::sort(order.begin(), order.end(),
            [&](std::size_t x, std::size_t y) { return first_slot_of_group[x] < first_slot_of_group[y]; });
  std::vector<ordinal_t> edge_of_group(order.size());
  for (std::size_t e = 0; e < order.size(); ++e) edge_of_group[order[e]] = static_cast<ordinal_t>(e);
  TetEdges r;
  r.edges.resize(order.size());
  r.tet_edges.resize(m.tets.size());
  for (std::size_t i = 0; i < slots; ++i) {
    const ordinal_t e = edge_of_group[group_of[i]];
    const std::uint64_t slot = keys[i].second;
    r.tet_edges[slot / 6][slot % 6] = e;
    r.edges[e] = {static_cast<ordinal_t>(keys[i].first >> 32), static_cast<ordinal_t>(keys[i].first & 0xffffffffu)};
  }
  return r;
}

TetMesh refine_uniform(const TetMesh& m, const ProgressFn& progress) {
  if (progress) progress("refining mesh", 0.0);
  const TetEdges te = number_edges(m);
  const std::int64_t nodes = static_cast<std::int64_t>(m.nodes.size() + te.edges.size());
  if (nodes > std::numeric_limits<ordinal_t>::max() || m.tets.size() * 8 > std::size_t(1) << 40)
    throw OverflowError("refine_uniform: the refined mesh would exceed 32-bit node numbers");
  TetMesh r;
  r.nodes = m.nodes;
  r.nodes.reserve(static_cast<std::size_t>(nodes));
  const ordinal_t base = static_cast<ordinal_t>(m.nodes.size());
  for (const auto& e : te.edges) {
    const auto &a = m.nodes[e[0]], &b = m.nodes[e[1]];
    r.nodes.push_back({(a[0] + b[0]) / 2, (a[1] + b[1]) / 2, (a[2] + b[2]) / 2});
  }
  r.tets.reserve(m.tets.size() * 8);
  for (std::size_t t = 0; t < m.tets.size(); ++t) {
    const auto& v = m.tets[t];
    const auto& ed = te.tet_edges[t];
    const ordinal_t x01 = base + ed[0], x02 = base + ed[1], x03 = base + ed[2], x12 = base + ed[3],
                    x13 = base + ed[4], x23 = base + ed[5];
    // corners
    r.tets.push_back({v[0], x01, x02, x03});
    r.tets.push_back({x01, v[1], x12, x13});
    r.tets.push_back({x02, x12, v[2], x23});
    r.tets.push_back({x03, x13, x23, v[3]});
    // the inner octahedron around the diagonal x02 - x13
    r.tets.push_back({x01, x02, x03, x13});
    r.tets.push_back({x01, x02, x12, x13});
    r.tets.push_back({x02, x03, x13, x23});
    r.tets.push_back({x02, x12, x13, x23});
    if (progress && (t & 0xfffff) == 0) progress("refining mesh", double(t) / double(m.tets.size()));
  }
  if (progress) progress("refining mesh", 1.0);
  return r;
}

// ----------------------------------------------------------------- box --

TetMesh box_mesh(ordinal_t nx, ordinal_t ny, ordinal_t nz, ordinal_t z0) {
  if (nx <= 0 || ny <= 0 || nz <= 0 || z0 < 0)
    throw InvalidArgumentError("box_mesh: extents must be positive and z0 non-negative (got " + std::to_string(nx) +
                               " x " + std::to_string(ny) + " x " + std::to_string(nz) + " from z0 " +
                               std::to_string(z0) + ")");
  const std::int64_t px = std::int64_t(nx) + 1, py = std::int64_t(ny) + 1, pz = std::int64_t(nz) + 1;
  if (px * py * pz > std::numeric_limits<ordinal_t>::max() || std::int64_t(z0) + nz > std::numeric_limits<ordinal_t>::max())
    throw InvalidArgumentError("box_mesh: more nodes than 32-bit numbers hold");
  TetMesh m;
  m.nodes.reserve(static_cast<std::size_t>(px * py * pz));
  for (std::int64_t k = 0; k < pz; ++k)
    for (std::int64_t j = 0; j < py; ++j)
      for (std::int64_t i = 0; i < px; ++i) m.nodes.push_back({double(i), double(j), double(z0 + k)});
  auto node = [&](std::int64_t i, std::int64_t j, std::int64_t k) {
    return static_cast<ordinal_t>(i + px * (j + py * k));
  };
  // Kuhn's cut: one tetrahedron per order of the three axes, walking from
  // the cube's (0,0,0) corner to its (1,1,1) corner one axis at a time.
  // Neighbouring cubes cut their shared face along the same diagonal, so
  // the mesh is conforming.
  constexpr int kAxisOrders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  m.tets.reserve(static_cast<std::size_t>(6) * nx * ny * nz);
  for (std::int64_t k = 0; k < nz; ++k)
    for (std::int64_t j = 0; j < ny; ++j)
      for (std::int64_t i = 0; i < nx; ++i)
        for (const auto& order : kAxisOrders) {
          std::int64_t c[3] = {i, j, k};
          std::array<ordinal_t, 4> t{};
          t[0] = node(c[0], c[1], c[2]);
          for (int s = 0; s < 3; ++s) {
            ++c[order[s]];
            t[s + 1] = node(c[0], c[1], c[2]);
          }
          m.tets.push_back(t);
        }
  return m;
}

// ------------------------------------------------------------ assembly --

namespace {

// Gradients of the barycentric coordinates of tetrahedron t and |volume|.
double barycentric_gradients(const TetMesh& m, std::size_t t, double g[4][3]) {
  const auto& p0 = m.nodes[m.tets[t][0]];
  double j[3][3];  // rows: edge vectors v_k - v_0
  for (int k = 0; k < 3; ++k)
    for (int c = 0; c < 3; ++c) j[k][c] = m.nodes[m.tets[t][k + 1]][c] - p0[c];
  const double det = j[0][0] * (j[1][1] * j[2][2] - j[1][2] * j[2][1]) -
                     j[0][1] * (j[1][0] * j[2][2] - j[1][2] * j[2][0]) +
                     j[0][2] * (j[1][0] * j[2][1] - j[1][1] * j[2][0]);
  // grad λ_{k+1} = (row k of J^{-T}) = cross products of the other two edges / det
  auto cross = [](const double* a, const double* b, double* o) {
    o[0] = a[1] * b[2] - a[2] * b[1];
    o[1] = a[2] * b[0] - a[0] * b[2];
    o[2] = a[0] * b[1] - a[1] * b[0];
  };
  cross(j[1], j[2], g[1]);
  cross(j[2], j[0], g[2]);
  cross(j[0], j[1], g[3]);
  for (int k = 1; k < 4; ++k)
    for (int c = 0; c < 3; ++c) g[k][c] /= det;
  for (int c = 0; c < 3; ++c) g[0][c] = -(g[1][c] + g[2][c] + g[3][c]);
  return std::fabs(det) / 6;
}

double dot3(const double* a, const double* b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

// Element matrix of ∫ ∇φ_a·∇φ_b: P1 4 x 4; P2 10 x 10 (vertices, then
// edges 01 02 03 12 13 23) by the 4-point degree-2 rule.
int element_matrix(const TetMesh& m, std::size_t t, FemElement e, double k[10][10]) {
  double g[4][3];
  const double vol = barycentric_gradients(m, t, g);
  if (e == FemElement::P1) {
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b) k[a][b] = vol * dot3(g[a], g[b]);
    return 4;
  }
  constexpr double qa = 0.5854101966249685, qb = 0.1381966011250105;
  for (int a = 0; a < 10; ++a)
    for (int b = 0; b < 10; ++b) k[a][b] = 0;
  for (int q = 0; q < 4; ++q) {
    double l[4] = {qb, qb, qb, qb};
    l[q] = qa;
    double grad[10][3];
    for (int i = 0; i < 4; ++i)
      for (int c = 0; c < 3; ++c) grad[i][c] = (4 * l[i] - 1) * g[i][c];
    for (int s = 0; s < 6; ++s) {
      const int i = kEdgeEnds[s][0], j = kEdgeEnds[s][1];
      for (int c = 0; c < 3; ++c) grad[4 + s][c] = 4 * (l[i] * g[j][c] + l[j] * g[i][c]);
    }
    for (int a = 0; a < 10; ++a)
      for (int b = a; b < 10; ++b) k[a][b] += vol / 4 * dot3(grad[a], grad[b]);
  }
  for (int a = 0; a < 10; ++a)
    for (int b = 0; b < a; ++b) k[a][b] = k[b][a];
  return 10;
}

}  // namespace

template <class Scalar>
HostCsr<Scalar> assemble_laplacian(const TetMesh& m, FemElement e, const ProgressFn& progress) {
  if (progress) progress("assembling", 0.0);
  const int nd = e == FemElement::P1 ? 4 : 10;
  TetEdges te;
  if (e == FemElement::P2) te = number_edges(m);
  const std::int64_t ndof = static_cast<std::int64_t>(m.nodes.size() + te.edges.size());
  if (ndof > std::numeric_limits<ordinal_t>::max())
    throw OverflowError("assemble_laplacian: more degrees of freedom than 32-bit rows");
  const std::size_t T = m.tets.size();
  auto dofs = [&](std::size_t t, ordinal_t* d) {
    for (int i = 0; i < 4; ++i) d[i] = m.tets[t][i];
    if (nd == 10)
      for (int s = 0; s < 6; ++s) d[4 + s] = static_cast<ordinal_t>(m.nodes.size()) + te.tet_edges[t][s];
  };
  // dof -> tetrahedra (counting sort)
  std::vector<std::int64_t> start(static_cast<std::size_t>(ndof) + 1, 0);
  ordinal_t d[10];
  for (std::size_t t = 0; t < T; ++t) {
    dofs(t, d);
    for (int i = 0; i < nd; ++i) ++start[static_cast<std::size_t>(d[i]) + 1];
  }
  std::partial_sum(start.begin(), start.end(), start.begin());
  std::vector<std::uint32_t> tet_of(static_cast<std::size_t>(start.back()));
  {
    std::vector<std::int64_t> fill(start.begin(), start.end() - 1);
    for (std::size_t t = 0; t < T; ++t) {
      dofs(t, d);
      for (int i = 0; i < nd; ++i) tet_of[static_cast<std::size_t>(fill[d[i]]++)] = static_cast<std::uint32_t>(t);
    }
  }
  // Pattern: each row's dofs from its tetrahedra, sorted and unique.
  HostCsr<Scalar> a(ndof, ndof);
  std::vector<ordinal_t> cols;
  for (std::int64_t r = 0; r < ndof; ++r) {
    cols.clear();
    for (auto k = start[r]; k < start[r + 1]; ++k) {
      dofs(tet_of[static_cast<std::size_t>(k)], d);
      cols.insert(cols.end(), d, d + nd);
    }
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    a.col_idx.insert(a.col_idx.end(), cols.begin(), cols.end());
    a.row_ptr[static_cast<std::size_t>(r) + 1] = static_cast<offset_t>(a.col_idx.size());
    if (progress && (r & 0x3ffff) == 0) progress("assembling (pattern)", 0.5 * double(r) / double(ndof));
  }
  // Values: element matrices summed into place (in double, then cast).
  std::vector<double> acc(a.col_idx.size(), 0.0);
  double k[10][10];
  for (std::size_t t = 0; t < T; ++t) {
    dofs(t, d);
    element_matrix(m, t, e, k);
    for (int i = 0; i < nd; ++i) {
      const auto b = a.col_idx.begin() + a.row_ptr[d[i]], en = a.col_idx.begin() + a.row_ptr[d[i] + 1];
      for (int j = 0; j < nd; ++j) acc[static_cast<std::size_t>(std::lower_bound(b, en, d[j]) - a.col_idx.begin())] += k[i][j];
    }
    if (progress && (t & 0xfffff) == 0) progress("assembling (values)", 0.5 + 0.5 * double(t) / double(T));
  }
  a.values.assign(acc.begin(), acc.end());
  if (progress) progress("assembling", 1.0);
  return a;
}

// ------------------------------------------------------- box by rows --

std::int64_t box_dofs(ordinal_t nx, ordinal_t ny, ordinal_t nz, FemElement e) {
  if (nx <= 0 || ny <= 0 || nz <= 0) throw InvalidArgumentError("box_dofs: extents must be positive");
  const std::int64_t s = e == FemElement::P1 ? 1 : 2;
  return (s * nx + 1) * (s * ny + 1) * (s * nz + 1);
}

template <class Scalar>
HostCsr<Scalar> box_laplacian_rows(ordinal_t nx, ordinal_t ny, ordinal_t nz, FemElement e, std::int64_t first,
                                   std::int64_t last) {
  const std::int64_t ndof = box_dofs(nx, ny, nz, e);
  if (ndof > std::numeric_limits<ordinal_t>::max())
    throw OverflowError("box_laplacian_rows: " + std::to_string(ndof) + " degrees of freedom do not fit 32-bit columns");
  if (first < 0 || last < first || last > ndof)
    throw InvalidArgumentError("box_laplacian_rows: rows [" + std::to_string(first) + ", " + std::to_string(last) +
                               ") outside the box's " + std::to_string(ndof));
  HostCsr<Scalar> out(last - first, ndof);
  if (first == last) return out;
  // Grid steps per cube (P2 numbers the half-step grid) and its planes.
  const std::int64_t s = e == FemElement::P1 ? 1 : 2;
  const std::int64_t gx = s * nx + 1, gy = s * ny + 1, plane = gx * gy;
  const std::int64_t z_first = first / plane, z_last = (last - 1) / plane;  // grid planes holding the rows
  // The cubes whose closure meets those planes: cube c spans planes s*c
  // to s*c + s.
  const std::int64_t c0 = std::max<std::int64_t>(0, (z_first + s - 1) / s - 1);
  const std::int64_t c_last = std::min<std::int64_t>(nz - 1, z_last / s);
  const TetMesh slab = box_mesh(nx, ny, static_cast<ordinal_t>(c_last - c0 + 1), static_cast<ordinal_t>(c0));
  const HostCsr<double> local = assemble_laplacian<double>(slab, e);
  // Local degree of freedom -> grid point: nodes by their coordinates
  // (integers), edges by the sum of their ends' (the midpoint, doubled).
  std::vector<std::int64_t> to_grid(static_cast<std::size_t>(local.nrows));
  auto grid = [&](std::int64_t x2, std::int64_t y2, std::int64_t z2) { return x2 + gx * (y2 + gy * z2); };
  const auto& p = slab.nodes;
  for (std::size_t n = 0; n < p.size(); ++n)
    to_grid[n] = grid(s * std::int64_t(p[n][0]), s * std::int64_t(p[n][1]), s * std::int64_t(p[n][2]));
  if (e == FemElement::P2) {
    const TetEdges te = number_edges(slab);  // the numbering assemble_laplacian used
    for (std::size_t k = 0; k < te.edges.size(); ++k) {
      const auto &a = p[te.edges[k][0]], &b = p[te.edges[k][1]];
      to_grid[p.size() + k] = grid(std::int64_t(a[0] + b[0]), std::int64_t(a[1] + b[1]), std::int64_t(a[2] + b[2]));
    }
  }
  // Rows in the range, in grid order: the slab's numbering is not the
  // grid's for P2, so place each row at its grid row.
  std::vector<ordinal_t> local_of(static_cast<std::size_t>(last - first), -1);
  for (ordinal_t r = 0; r < local.nrows; ++r) {
    const std::int64_t g = to_grid[static_cast<std::size_t>(r)];
    if (g >= first && g < last) local_of[static_cast<std::size_t>(g - first)] = r;
  }
  std::vector<std::pair<ordinal_t, Scalar>> row;
  for (std::int64_t i = 0; i < last - first; ++i) {
    const ordinal_t r = local_of[static_cast<std::size_t>(i)];
    if (r < 0)  // every grid point is a node or one edge's midpoint
      throw std::logic_error("box_laplacian_rows: grid row " + std::to_string(first + i) + " not in its slab");
    row.clear();
    for (auto k = local.row_ptr[r]; k < local.row_ptr[r + 1]; ++k)
      row.emplace_back(static_cast<ordinal_t>(to_grid[static_cast<std::size_t>(local.col_idx[k])]),
                       static_cast<Scalar>(local.values[k]));
    std::sort(row.begin(), row.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    for (const auto& [c, v] : row) {
      out.col_idx.push_back(c);
      out.values.push_back(v);
    }
    out.row_ptr[static_cast<std::size_t>(i) + 1] = static_cast<offset_t>(out.col_idx.size());
  }
  return out;
}

// ----------------------------------------------------------------- spec --

template <class Scalar>
HostCsr<Scalar> fem_matrix(const std::string& spec, const ProgressFn& progress) {
  const char* usage = "fem:MESH|box=NXxNYxNZ:p1|p2[:refine=R][:order=natural|rcm|scrambled][:seed=S]";
  const std::vector<std::string> parts = split_spec(spec);
  if (parts.size() < 3 || parts[0] != "fem") throw ParseError(spec, 0, std::string("usage: ") + usage);
  std::string path = parts[1];
  const std::string element = parts[2];
  if (element != "p1" && element != "p2") throw ParseError(spec, 0, "element must be p1 or p2; usage: " + std::string(usage));
  std::int64_t refine = 0;
  std::uint64_t seed = 1;
  std::string order = "natural";
  for (std::size_t i = 3; i < parts.size(); ++i) {
    const auto eq = parts[i].find('=');
    const std::string key = parts[i].substr(0, eq), value = eq == std::string::npos ? "" : parts[i].substr(eq + 1);
    char* end = nullptr;
    if (key == "refine") {
      refine = std::strtoll(value.c_str(), &end, 10);
      if (value.empty() || *end || refine < 0 || refine > 6)
        throw ParseError(spec, 0, "refine must be an integer in [0, 6]");
    } else if (key == "seed") {
      seed = std::strtoull(value.c_str(), &end, 10);
      if (value.empty() || *end) throw ParseError(spec, 0, "seed must be a non-negative integer");
    } else if (key == "order" && (value == "natural" || value == "rcm" || value == "scrambled")) {
      order = value;
    } else {
      throw ParseError(spec, 0, "unknown option '" + parts[i] + "'; usage: " + usage);
    }
  }
  const FemElement fe = element == "p1" ? FemElement::P1 : FemElement::P2;
  HostCsr<Scalar> a;
  if (path.rfind("box=", 0) == 0) {
    // The structured box of unit cubes (box_mesh), numbered along its grid.
    long long n[3] = {0, 0, 0};
    char extra = 0;
    if (std::sscanf(path.c_str() + 4, "%lldx%lldx%lld%c", &n[0], &n[1], &n[2], &extra) != 3 || n[0] <= 0 || n[1] <= 0 ||
        n[2] <= 0 || n[0] > (1 << 20) || n[1] > (1 << 20) || n[2] > (1 << 20))
      throw ParseError(spec, 0, "box=NXxNYxNZ takes three positive cube counts; usage: " + std::string(usage));
    if (refine > 0) throw ParseError(spec, 0, "refine does not apply to box= (ask for more cubes)");
    const auto nx = static_cast<ordinal_t>(n[0]), ny = static_cast<ordinal_t>(n[1]), nz = static_cast<ordinal_t>(n[2]);
    if (progress) progress("assembling the box", 0.0);
    a = box_laplacian_rows<Scalar>(nx, ny, nz, fe, 0, box_dofs(nx, ny, nz, fe));
    if (progress) progress("assembling the box", 1.0);
  } else {
    if (!std::ifstream(path).good())
      if (const char* dir = std::getenv("KSPMV_MESH_DIR"))
        if (std::ifstream(std::string(dir) + "/" + path).good()) path = std::string(dir) + "/" + path;
    if (!std::ifstream(path).good())
      throw IoError("fem: cannot open mesh '" + path + "' (as given, or under $KSPMV_MESH_DIR)");
    TetMesh m = read_gmsh(path);
    for (std::int64_t r = 0; r < refine; ++r) m = refine_uniform(m, progress);
    a = assemble_laplacian<Scalar>(m, fe, progress);
  }
  if (order == "natural") return a;
  std::vector<ordinal_t> p;
  if (order == "rcm") {
    if (progress) progress("ordering (RCM)", 0.0);
    p = reverse_cuthill_mckee(a);
  } else {
    p.resize(static_cast<std::size_t>(a.nrows));
    std::iota(p.begin(), p.end(), ordinal_t(0));
    Rng rng(seed);
    for (std::size_t i = p.size(); i > 1; --i) std::swap(p[i - 1], p[rng.below(i)]);
  }
  return permute_symmetric(a, p);
}

template HostCsr<float> assemble_laplacian(const TetMesh&, FemElement, const ProgressFn&);
template HostCsr<double> assemble_laplacian(const TetMesh&, FemElement, const ProgressFn&);
template HostCsr<float> fem_matrix(const std::string&, const ProgressFn&);
template HostCsr<float> box_laplacian_rows(ordinal_t, ordinal_t, ordinal_t, FemElement, std::int64_t, std::int64_t);
template HostCsr<double> box_laplacian_rows(ordinal_t, ordinal_t, ordinal_t, FemElement, std::int64_t, std::int64_t);
template HostCsr<double> fem_matrix(const std::string&, const ProgressFn&);

}  // namespace kspmv

#include "kspmv/inputs/generators.hpp"

#include "kspmv/inputs/fem.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <numeric>

#include "kspmv/core/random.hpp"

namespace kspmv {

namespace {

// Reports progress every `step` rows.
struct RowProgress {
  const ProgressFn& fn;
  const char* stage;
  std::int64_t total;
  void operator()(std::int64_t row) const {
    if (fn && total > 0 && (row & 0x3FFFF) == 0) fn(stage, double(row) / double(total));
  }
  void done() const {
    if (fn) fn(stage, 1.0);
  }
};

template <class Scalar>
Scalar random_value(Rng& rng) {
  return static_cast<Scalar>(2.0 * rng.uniform() - 1.0);
}

// Appends k distinct columns from [0, ncols), sorted, with random values.
template <class Scalar>
void append_random_row(Rng& rng, std::int64_t k, ordinal_t ncols, std::vector<ordinal_t>& scratch,
                       HostCsr<Scalar>& a) {
  if (k <= 0) return;
  if (k * 3 >= ncols) {
    // Selection sampling: one pass over the columns, exactly k chosen.
    std::int64_t need = k;
    for (ordinal_t j = 0; j < ncols && need > 0; ++j)
      if (static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(ncols - j))) < need) {
        a.col_idx.push_back(j);
        a.values.push_back(random_value<Scalar>(rng));
        --need;
      }
    return;
  }
  scratch.clear();
  while (static_cast<std::int64_t>(scratch.size()) < k) {
    const std::int64_t missing = k - static_cast<std::int64_t>(scratch.size());
    for (std::int64_t t = 0; t < missing; ++t)
      scratch.push_back(static_cast<ordinal_t>(rng.below(static_cast<std::uint64_t>(ncols))));
    std::sort(scratch.begin(), scratch.end());
    scratch.erase(std::unique(scratch.begin(), scratch.end()), scratch.end());
  }
  for (ordinal_t j : scratch) {
    a.col_idx.push_back(j);
    a.values.push_back(random_value<Scalar>(rng));
  }
}

struct Offset3 {
  int dx, dy, dz;
};

std::vector<Offset3> stencil_offsets(Stencil s) {
  std::vector<Offset3> o;
  auto full = [&](int dims) {
    for (int dz = (dims > 2 ? -1 : 0); dz <= (dims > 2 ? 1 : 0); ++dz)
      for (int dy = (dims > 1 ? -1 : 0); dy <= (dims > 1 ? 1 : 0); ++dy)
        for (int dx = -1; dx <= 1; ++dx) o.push_back({dx, dy, dz});
  };
  switch (s) {
    case Stencil::Lap1d3: full(1); break;
    case Stencil::Lap2d9: full(2); break;
    case Stencil::Lap3d27: full(3); break;
    case Stencil::Lap2d5: o = {{0, -1, 0}, {-1, 0, 0}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}}; break;
    case Stencil::Lap3d7:
      o = {{0, 0, -1}, {0, -1, 0}, {-1, 0, 0}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
      break;
  }
  return o;  // listed in increasing linear offset: columns come out sorted
}

}  // namespace

template <class Scalar>
HostCsr<Scalar> laplacian(Stencil s, std::int64_t n, const ProgressFn& progress) {
  if (n < 0) throw InvalidArgumentError("grid size must be non-negative");
  const int dims = (s == Stencil::Lap1d3) ? 1 : (s == Stencil::Lap2d5 || s == Stencil::Lap2d9) ? 2 : 3;
  const std::int64_t nx = n, ny = dims > 1 ? n : 1, nz = dims > 2 ? n : 1;
  const long double total = static_cast<long double>(nx) * ny * nz;
  if (total > std::numeric_limits<ordinal_t>::max())
    throw OverflowError("a " + std::to_string(dims) + "D grid of side " + std::to_string(n) +
                        " has more rows than 32-bit indices address");
  const std::int64_t rows = nx * ny * nz;
  const auto offs = stencil_offsets(s);
  const Scalar diag = static_cast<Scalar>(offs.size() - 1);
  HostCsr<Scalar> a(rows, rows);
  a.col_idx.reserve(static_cast<std::size_t>(rows) * offs.size());
  a.values.reserve(static_cast<std::size_t>(rows) * offs.size());
  RowProgress prog{progress, "generating", rows};
  std::int64_t row = 0;
  for (std::int64_t z = 0; z < nz; ++z)
    for (std::int64_t y = 0; y < ny; ++y)
      for (std::int64_t x = 0; x < nx; ++x, ++row) {
        for (const auto& o : offs) {
          const std::int64_t xx = x + o.dx, yy = y + o.dy, zz = z + o.dz;
          if (xx < 0 || xx >= nx || yy < 0 || yy >= ny || zz < 0 || zz >= nz) continue;
          a.col_idx.push_back(static_cast<ordinal_t>(xx + nx * (yy + ny * zz)));
          a.values.push_back((o.dx | o.dy | o.dz) == 0 ? diag : Scalar(-1));
        }
        a.row_ptr[row + 1] = static_cast<offset_t>(a.col_idx.size());
        prog(row);
      }
  prog.done();
  return a;
}

template <class Scalar>
HostCsr<Scalar> random_rows(std::int64_t rows, std::int64_t cols, const RowLengthDistribution& d,
                            std::uint64_t seed, const ProgressFn& progress) {
  HostCsr<Scalar> a(rows, cols);
  Rng rng(seed);
  // Pass 1: row lengths (so the arrays are reserved exactly once).
  std::vector<std::int64_t> len(static_cast<std::size_t>(a.nrows));
  const double xm = (d.law == RowLengthLaw::PowerLaw)
                        ? d.p1 * (d.p2 - 2.0) / (d.p2 - 1.0)  // Pareto scale for that mean
                        : 0.0;
  for (auto& k : len) {
    double v = 0;
    switch (d.law) {
      case RowLengthLaw::Uniform:
        v = d.p1 + static_cast<double>(rng.below(static_cast<std::uint64_t>(d.p2 - d.p1) + 1));
        break;
      case RowLengthLaw::Normal: v = std::round(d.p1 + d.p2 * rng.normal()); break;
      case RowLengthLaw::PowerLaw: {
        double u = rng.uniform();
        while (u <= 0.0) u = rng.uniform();
        // Pareto tail with density exponent G: shape G - 1.
        v = std::round(xm * std::pow(u, -1.0 / (d.p2 - 1.0)));
        break;
      }
    }
    k = static_cast<std::int64_t>(std::clamp(v, 0.0, static_cast<double>(a.ncols)));
  }
  const std::int64_t nnz = std::accumulate(len.begin(), len.end(), std::int64_t(0));
  a.col_idx.reserve(static_cast<std::size_t>(nnz));
  a.values.reserve(static_cast<std::size_t>(nnz));
  std::vector<ordinal_t> scratch;
  RowProgress prog{progress, "generating", rows};
  for (ordinal_t i = 0; i < a.nrows; ++i) {
    append_random_row(rng, len[i], a.ncols, scratch, a);
    a.row_ptr[i + 1] = static_cast<offset_t>(a.col_idx.size());
    prog(i);
  }
  prog.done();
  return a;
}

template <class Scalar>
HostCsr<Scalar> rmat(const RmatParams& p, const ProgressFn& progress) {
  if (p.scale < 0 || p.scale > 30)
    throw InvalidArgumentError("rmat scale must be in [0, 30], got " + std::to_string(p.scale));
  if (p.a < 0 || p.b < 0 || p.c < 0 || p.a + p.b + p.c > 1.0)
    throw InvalidArgumentError("rmat probabilities a, b, c must be >= 0 with a + b + c <= 1");
  if (p.edge_factor < 0) throw InvalidArgumentError("rmat edge factor must be >= 0");
  const std::int64_t n = std::int64_t(1) << p.scale;
  const std::int64_t edges = static_cast<std::int64_t>(p.edge_factor * static_cast<double>(n));
  HostCsr<Scalar> a(n, n);
  std::vector<ordinal_t> perm(static_cast<std::size_t>(n));
  std::iota(perm.begin(), perm.end(), 0);
  if (p.scramble) {
    Rng prng(p.seed ^ 0x5DEECE66Dull);
    for (std::int64_t i = n - 1; i > 0; --i)
      std::swap(perm[i], perm[prng.below(static_cast<std::uint64_t>(i + 1))]);
  }
  const double ab = p.a + p.b, abc = p.a + p.b + p.c;
  auto draw = [&](Rng& rng, ordinal_t& u, ordinal_t& v) {
    std::int64_t r = 0, c = 0;
    for (int bit = p.scale - 1; bit >= 0; --bit) {
      const double x = rng.uniform();
      if (x >= p.a) {
        if (x < ab) c |= std::int64_t(1) << bit;
        else if (x < abc) r |= std::int64_t(1) << bit;
        else { r |= std::int64_t(1) << bit; c |= std::int64_t(1) << bit; }
      }
    }
    u = perm[r];
    v = perm[c];
  };
  // Two passes over the same random stream: count, then place. No edge list
  // is ever held, so memory stays at the size of the result.
  {
    Rng rng(p.seed);
    for (std::int64_t e = 0; e < edges; ++e) {
      ordinal_t u, v;
      draw(rng, u, v);
      ++a.row_ptr[u + 1];
      if (progress && (e & 0xFFFFF) == 0) progress("counting edges", 0.5 * double(e) / double(edges));
    }
  }
  std::partial_sum(a.row_ptr.begin(), a.row_ptr.end(), a.row_ptr.begin());
  a.col_idx.resize(static_cast<std::size_t>(edges));
  a.values.resize(static_cast<std::size_t>(edges));
  {
    std::vector<offset_t> next(a.row_ptr.begin(), a.row_ptr.end() - 1);
    Rng rng(p.seed), vrng(p.seed + 0x9E3779B97F4A7C15ull);
    for (std::int64_t e = 0; e < edges; ++e) {
      ordinal_t u, v;
      draw(rng, u, v);
      const offset_t k = next[u]++;
      a.col_idx[k] = v;
      a.values[k] = random_value<Scalar>(vrng);
      if (progress && (e & 0xFFFFF) == 0) progress("placing edges", 0.5 + 0.5 * double(e) / double(edges));
    }
  }
  // Sort each row, sum duplicate edges, compact in place.
  std::vector<std::pair<ordinal_t, Scalar>> row;
  offset_t out = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const offset_t b = a.row_ptr[i], e = a.row_ptr[i + 1];
    row.clear();
    for (offset_t k = b; k < e; ++k) row.emplace_back(a.col_idx[k], a.values[k]);
    std::stable_sort(row.begin(), row.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    a.row_ptr[i] = out;
    for (std::size_t t = 0; t < row.size(); ++t) {
      if (t > 0 && row[t].first == row[t - 1].first) {
        a.values[out - 1] += row[t].second;
      } else {
        a.col_idx[out] = row[t].first;
        a.values[out] = row[t].second;
        ++out;
      }
    }
  }
  a.row_ptr[n] = out;
  a.col_idx.resize(static_cast<std::size_t>(out));
  a.values.resize(static_cast<std::size_t>(out));
  a.col_idx.shrink_to_fit();
  a.values.shrink_to_fit();
  if (progress) progress("placing edges", 1.0);
  return a;
}

namespace {
// Rows whose columns form one contiguous range [lo(i), hi(i)).
template <class Scalar, class Range>
HostCsr<Scalar> contiguous_rows(std::int64_t rows, std::int64_t cols, std::uint64_t seed, Range range) {
  HostCsr<Scalar> a(rows, cols);
  std::int64_t nnz = 0;
  for (std::int64_t i = 0; i < rows; ++i) {
    auto [lo, hi] = range(i);
    nnz += hi - lo;
  }
  a.col_idx.reserve(static_cast<std::size_t>(nnz));
  a.values.reserve(static_cast<std::size_t>(nnz));
  Rng rng(seed);
  for (std::int64_t i = 0; i < rows; ++i) {
    auto [lo, hi] = range(i);
    for (std::int64_t j = lo; j < hi; ++j) {
      a.col_idx.push_back(static_cast<ordinal_t>(j));
      a.values.push_back(random_value<Scalar>(rng));
    }
    a.row_ptr[i + 1] = static_cast<offset_t>(a.col_idx.size());
  }
  return a;
}
}  // namespace

template <class Scalar>
HostCsr<Scalar> dense(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  if (static_cast<long double>(rows) * cols > 4e9L)
    throw InvalidArgumentError("dense " + std::to_string(rows) + " x " + std::to_string(cols) +
                               " is too large to generate");
  return contiguous_rows<Scalar>(rows, cols, seed,
                                 [cols](std::int64_t) { return std::pair<std::int64_t, std::int64_t>(0, cols); });
}

template <class Scalar>
HostCsr<Scalar> banded(std::int64_t n, std::int64_t h, std::uint64_t seed) {
  if (h < 0) throw InvalidArgumentError("band half-width must be >= 0");
  return contiguous_rows<Scalar>(n, n, seed, [n, h](std::int64_t i) {
    return std::pair<std::int64_t, std::int64_t>(std::max<std::int64_t>(0, i - h), std::min(n, i + h + 1));
  });
}

template <class Scalar>
HostCsr<Scalar> block_diagonal(std::int64_t n, std::int64_t block, std::uint64_t seed) {
  if (block < 1) throw InvalidArgumentError("block size must be >= 1");
  return contiguous_rows<Scalar>(n, n, seed, [n, block](std::int64_t i) {
    const std::int64_t b = i / block * block;
    return std::pair<std::int64_t, std::int64_t>(b, std::min(n, b + block));
  });
}

// ------------------------------------------------------------ spec parsing --

namespace {

struct GeneratorInfo {
  const char* name;
  const char* usage;
  int min_args, max_args;
};

const std::array<GeneratorInfo, 14> kGenerators = {{
    {"lap1d", "lap1d:N (3-point 1D Laplacian)", 1, 1},
    {"lap2d", "lap2d:N (5-point 2D Laplacian, N x N grid)", 1, 1},
    {"lap2d5", "lap2d5:N (5-point 2D Laplacian, N x N grid)", 1, 1},
    {"lap2d9", "lap2d9:N (9-point 2D Laplacian, N x N grid)", 1, 1},
    {"lap3d", "lap3d:N (7-point 3D Laplacian, N^3 grid)", 1, 1},
    {"lap3d7", "lap3d7:N (7-point 3D Laplacian, N^3 grid)", 1, 1},
    {"lap3d27", "lap3d27:N (27-point 3D Laplacian, N^3 grid)", 1, 1},
    {"dense", "dense:ROWS[:COLS][:seed=S]", 1, 2},
    {"uniform", "uniform:ROWS:MIN:MAX[:cols=C][:seed=S] (row lengths uniform in [MIN, MAX])", 3, 3},
    {"normal", "normal:ROWS:MEAN:STD[:cols=C][:seed=S] (normally distributed row lengths)", 3, 3},
    {"powerlaw", "powerlaw:ROWS:MEAN[:EXPONENT][:cols=C][:seed=S] (power-law row lengths, exponent > 2, default 2.5)", 2, 3},
    {"rmat", "rmat:SCALE[:EDGEFACTOR][:a=A:b=B:c=C][:scramble=0|1][:seed=S] (Graph500 Kronecker graph)", 1, 2},
    {"banded", "banded:N:HALFWIDTH[:seed=S]", 2, 2},
    {"blockdiag", "blockdiag:N:BLOCK[:seed=S]", 2, 2},
}};

const GeneratorInfo* find_generator(const std::string& name) {
  for (const auto& g : kGenerators)
    if (name == g.name) return &g;
  return nullptr;
}

double parse_number(const std::string& spec, const std::string& tok) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(tok, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != tok.size() || tok.empty() || !std::isfinite(v))
    throw ParseError(spec, 0, "'" + tok + "' is not a number");
  return v;
}

std::int64_t parse_integer(const std::string& spec, const std::string& tok, const char* what) {
  const double v = parse_number(spec, tok);
  if (v != std::floor(v) || v < 0 || v > 9.0e15)
    throw ParseError(spec, 0, std::string(what) + " '" + tok + "' must be a non-negative integer");
  return static_cast<std::int64_t>(v);
}

}  // namespace

std::vector<std::string> split_spec(const std::string& spec) {
  std::vector<std::string> parts;
  for (std::size_t b = 0;;) {
    const auto e = spec.find(':', b);
    parts.push_back(spec.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) break;
    b = e + 1;
  }
  return parts;
}

bool is_generator_spec(const std::string& s) {
  if (s.rfind("fem:", 0) == 0) return true;
  const auto colon = s.find(':');
  return colon != std::string::npos && find_generator(s.substr(0, colon)) != nullptr;
}

std::string generator_help() {
  std::string h;
  for (const auto& g : kGenerators) h += std::string("  ") + g.usage + "\n";
  h += "  fem:MESH:p1|p2[:refine=R][:order=natural|rcm|scrambled][:seed=S] (FEM Laplacian on a gmsh MSH 2.2 "
       "tetrahedral mesh, or MESH box=NXxNYxNZ: a structured box of unit cubes)\n";
  return h;
}

template <class Scalar>
HostCsr<Scalar> generate(const std::string& spec, const ProgressFn& progress) {
  if (spec.rfind("fem:", 0) == 0) return fem_matrix<Scalar>(spec, progress);
  const std::vector<std::string> parts = split_spec(spec);
  const GeneratorInfo* g = find_generator(parts[0]);
  if (!g)
    throw InvalidArgumentError("unknown generator '" + parts[0] + "' in '" + spec +
                               "'; known generators:\n" + generator_help());
  std::vector<std::string> args;
  std::map<std::string, std::string> opts;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const auto eq = parts[i].find('=');
    if (eq == std::string::npos) {
      if (!opts.empty()) throw ParseError(spec, 0, "positional argument '" + parts[i] + "' after options");
      args.push_back(parts[i]);
    } else {
      opts[parts[i].substr(0, eq)] = parts[i].substr(eq + 1);
    }
  }
  if (static_cast<int>(args.size()) < g->min_args || static_cast<int>(args.size()) > g->max_args)
    throw ParseError(spec, 0, "wrong number of arguments; usage: " + std::string(g->usage));
  auto take_opt = [&](const char* key, const std::string& dflt) {
    auto it = opts.find(key);
    if (it == opts.end()) return dflt;
    std::string v = it->second;
    opts.erase(it);
    return v;
  };
  const std::uint64_t seed = static_cast<std::uint64_t>(parse_integer(spec, take_opt("seed", "1"), "seed"));
  auto I = [&](std::size_t k, const char* what) { return parse_integer(spec, args[k], what); };
  const std::string name = parts[0];
  auto check_no_opts_left = [&] {
    if (!opts.empty())
      throw ParseError(spec, 0, "unknown option '" + opts.begin()->first + "'; usage: " + g->usage);
  };

  if (name.rfind("lap", 0) == 0) {
    check_no_opts_left();
    Stencil s = Stencil::Lap3d7;
    if (name == "lap1d") s = Stencil::Lap1d3;
    else if (name == "lap2d" || name == "lap2d5") s = Stencil::Lap2d5;
    else if (name == "lap2d9") s = Stencil::Lap2d9;
    else if (name == "lap3d27") s = Stencil::Lap3d27;
    return laplacian<Scalar>(s, I(0, "grid size"), progress);
  }
  if (name == "dense") {
    check_no_opts_left();
    const auto r = I(0, "rows");
    return dense<Scalar>(r, args.size() > 1 ? I(1, "columns") : r, seed);
  }
  if (name == "uniform" || name == "normal" || name == "powerlaw") {
    const auto rows = I(0, "rows");
    const auto cols = parse_integer(spec, take_opt("cols", std::to_string(rows)), "cols");
    check_no_opts_left();
    RowLengthDistribution d;
    if (name == "uniform") {
      d.law = RowLengthLaw::Uniform;
      d.p1 = static_cast<double>(I(1, "MIN"));
      d.p2 = static_cast<double>(I(2, "MAX"));
      if (d.p2 < d.p1) throw ParseError(spec, 0, "MAX must be >= MIN");
    } else if (name == "normal") {
      d.law = RowLengthLaw::Normal;
      d.p1 = parse_number(spec, args[1]);
      d.p2 = parse_number(spec, args[2]);
      if (d.p1 < 0 || d.p2 < 0) throw ParseError(spec, 0, "MEAN and STD must be >= 0");
    } else {
      d.law = RowLengthLaw::PowerLaw;
      d.p1 = parse_number(spec, args[1]);
      d.p2 = args.size() > 2 ? parse_number(spec, args[2]) : 2.5;
      if (d.p1 <= 0) throw ParseError(spec, 0, "MEAN must be > 0");
      if (d.p2 <= 2.0) throw ParseError(spec, 0, "EXPONENT must be > 2 (the mean is infinite otherwise)");
    }
    return random_rows<Scalar>(rows, cols, d, seed, progress);
  }
  if (name == "rmat") {
    RmatParams p;
    p.scale = static_cast<int>(I(0, "scale"));
    if (args.size() > 1) p.edge_factor = parse_number(spec, args[1]);
    p.a = parse_number(spec, take_opt("a", "0.57"));
    p.b = parse_number(spec, take_opt("b", "0.19"));
    p.c = parse_number(spec, take_opt("c", "0.19"));
    const std::string sc = take_opt("scramble", "1");
    if (sc != "0" && sc != "1") throw ParseError(spec, 0, "scramble must be 0 or 1");
    p.scramble = sc == "1";
    p.seed = seed;
    check_no_opts_left();
    return rmat<Scalar>(p, progress);
  }
  check_no_opts_left();
  if (name == "banded") return banded<Scalar>(I(0, "N"), I(1, "half-width"), seed);
  return block_diagonal<Scalar>(I(0, "N"), I(1, "block size"), seed);
}

#define KSPMV_INSTANTIATE(S)                                                                     \
  template HostCsr<S> generate(const std::string&, const ProgressFn&);                           \
  template HostCsr<S> laplacian(Stencil, std::int64_t, const ProgressFn&);                       \
  template HostCsr<S> random_rows(std::int64_t, std::int64_t, const RowLengthDistribution&,      \
                                  std::uint64_t, const ProgressFn&);                             \
  template HostCsr<S> rmat(const RmatParams&, const ProgressFn&);                                \
  template HostCsr<S> dense(std::int64_t, std::int64_t, std::uint64_t);                          \
  template HostCsr<S> banded(std::int64_t, std::int64_t, std::uint64_t);                         \
  template HostCsr<S> block_diagonal(std::int64_t, std::int64_t, std::uint64_t);
KSPMV_INSTANTIATE(float)
KSPMV_INSTANTIATE(double)

}  // namespace kspmv

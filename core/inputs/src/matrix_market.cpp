#include "kspmv/inputs/matrix_market.hpp"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>

namespace kspmv {

// ----------------------------------------------------------------- files --

std::string read_file_maybe_gz(const std::string& path) {
  // gzopen reads plain files transparently, so one path serves both.
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw IoError(path + ": cannot open (" + std::strerror(errno) + ")");
  std::unique_ptr<gzFile_s, int (*)(gzFile)> guard(f, gzclose);
  gzbuffer(f, 1 << 20);
  std::string out;
  constexpr unsigned chunk = 1u << 24;
  for (;;) {
    const std::size_t old = out.size();
    out.resize(old + chunk);
    const int got = gzread(f, &out[old], chunk);
    if (got < 0) {
      int code = 0;
      const char* msg = gzerror(f, &code);
      throw ParseError(path, 0, std::string("gzip stream is corrupt: ") + msg);
    }
    out.resize(old + static_cast<std::size_t>(got));
    if (got == 0) break;
  }
  // A truncated gzip member reads as a short stream: zlib flags it here.
  int code = 0;
  const char* msg = gzerror(f, &code);
  if (code != Z_OK && code != Z_STREAM_END)
    throw ParseError(path, 0, std::string("gzip stream is truncated or corrupt: ") + msg);
  return out;
}

static bool ends_with(const std::string& s, const char* suffix) {
  const std::size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

void write_file_maybe_gz(const std::string& path, const std::string& text) {
  if (ends_with(path, ".gz")) {
    gzFile f = gzopen(path.c_str(), "wb6");
    if (!f) throw IoError(path + ": cannot open for writing (" + std::strerror(errno) + ")");
    std::size_t done = 0;
    while (done < text.size()) {
      const unsigned n = static_cast<unsigned>(std::min<std::size_t>(text.size() - done, 1u << 26));
      if (gzwrite(f, text.data() + done, n) != static_cast<int>(n)) {
        gzclose(f);
        throw IoError(path + ": write failed");
      }
      done += n;
    }
    if (gzclose(f) != Z_OK) throw IoError(path + ": close failed");
  } else {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) throw IoError(path + ": cannot open for writing (" + std::strerror(errno) + ")");
    const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    if (std::fclose(f) != 0 || !ok) throw IoError(path + ": write failed");
  }
}

// ---------------------------------------------------------------- parser --

namespace {

// Walks the text a line at a time, keeping the 1-based line number for
// error messages.
class LineCursor {
 public:
  LineCursor(std::string_view text, const std::string& source)
      : p_(text.data()), end_(text.data() + text.size()), source_(source) {}

  bool at_end() const { return p_ >= end_; }
  std::int64_t line() const { return line_; }
  const std::string& source() const { return source_; }

  // Advances to the next line; returns it without its line terminator.
  std::string_view next() {
    const char* nl = static_cast<const char*>(std::memchr(p_, '\n', end_ - p_));
    const char* e = nl ? nl : end_;
    std::string_view s(p_, static_cast<std::size_t>(e - p_));
    if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
    p_ = nl ? nl + 1 : end_;
    ++line_;
    return s;
  }
  double fraction(const char* begin, std::size_t size) const {
    return size ? double(p_ - begin) / double(size) : 1.0;
  }

  [[noreturn]] void fail(const std::string& problem) const {
    throw ParseError(source_, line_, problem);
  }

 private:
  const char* p_;
  const char* end_;
  std::string source_;
  std::int64_t line_ = 0;
};

inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

// Splits off the next whitespace-separated token; empty when none is left.
inline std::string_view next_token(std::string_view& s) {
  std::size_t i = 0;
  while (i < s.size() && is_space(s[i])) ++i;
  std::size_t j = i;
  while (j < s.size() && !is_space(s[j])) ++j;
  std::string_view tok = s.substr(i, j - i);
  s.remove_prefix(j);
  return tok;
}

inline bool is_blank(std::string_view s) {
  for (char c : s)
    if (!is_space(c)) return false;
  return true;
}

std::string quote(std::string_view tok) {
  std::string t(tok.substr(0, 40));
  if (tok.size() > 40) t += "...";
  return "'" + t + "'";
}

std::string lower(std::string_view s) {
  std::string r(s);
  for (auto& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

// A non-negative integer token (digits only).
std::int64_t parse_count(const LineCursor& cur, std::string_view tok, const char* what) {
  if (tok.empty()) cur.fail(std::string("missing ") + what);
  std::int64_t v = 0;
  auto r = std::from_chars(tok.data(), tok.data() + tok.size(), v);
  if (r.ec == std::errc::result_out_of_range)
    cur.fail(std::string(what) + " " + quote(tok) + " is too large");
  if (r.ec != std::errc() || r.ptr != tok.data() + tok.size())
    cur.fail(std::string(what) + " " + quote(tok) + " is not an integer");
  if (v < 0) cur.fail(std::string(what) + " " + quote(tok) + " is negative");
  return v;
}

template <class Scalar>
Scalar parse_value(const LineCursor& cur, std::string_view tok, bool integer_field,
                   NonFinitePolicy nonfinite) {
  if (tok.empty()) cur.fail("missing value");
  const char* b = tok.data();
  const char* e = tok.data() + tok.size();
  if (*b == '+' && e - b > 1 && b[1] != '-' && b[1] != '+') ++b;  // from_chars rejects '+'
  Scalar v{};
  if (integer_field) {
    std::int64_t iv = 0;
    auto r = std::from_chars(b, e, iv);
    if (r.ec == std::errc::result_out_of_range) cur.fail("integer value " + quote(tok) + " is too large");
    if (r.ec != std::errc() || r.ptr != e)
      cur.fail("value " + quote(tok) + " is not an integer (the file's field is 'integer')");
    return static_cast<Scalar>(iv);
  }
  auto r = std::from_chars(b, e, v);
  if (r.ec == std::errc::result_out_of_range)
    cur.fail("value " + quote(tok) + " is out of range for " +
             (sizeof(Scalar) == 4 ? "float" : "double"));
  if (r.ec != std::errc() || r.ptr != e) cur.fail("value " + quote(tok) + " is not a number");
  if (nonfinite == NonFinitePolicy::Reject && !std::isfinite(v))
    cur.fail("non-finite value " + quote(tok) + " (rejected: NonFinitePolicy::Reject)");
  return v;
}

// Reads the banner and the comment block, then the size line's tokens.
MatrixMarketHeader read_header(LineCursor& cur, std::string_view& size_line) {
  MatrixMarketHeader h;
  if (cur.at_end()) throw ParseError(cur.source(), 1, "empty file (no %%MatrixMarket banner)");
  std::string_view banner = cur.next();
  std::string_view rest = banner;
  std::string_view tag = next_token(rest);
  if (lower(tag) != "%%matrixmarket")
    cur.fail("missing %%MatrixMarket banner (found " + quote(banner) + ")");
  h.object = lower(next_token(rest));
  h.format = lower(next_token(rest));
  h.field = lower(next_token(rest));
  h.symmetry = lower(next_token(rest));
  if (h.object.empty() || h.format.empty() || h.field.empty() || h.symmetry.empty())
    cur.fail("banner must name object, format, field and symmetry");
  if (!is_blank(rest)) cur.fail("unexpected text after the banner's four words: " + quote(rest));
  if (h.object != "matrix") cur.fail("object " + quote(h.object) + " is not supported (only 'matrix')");
  if (h.format != "coordinate" && h.format != "array")
    cur.fail("format " + quote(h.format) + " is unknown (coordinate or array)");
  if (h.field == "complex" || h.symmetry == "hermitian")
    throw UnsupportedError(cur.source() + ":" + std::to_string(cur.line()) +
                           ": complex matrices are not supported");
  if (h.field != "real" && h.field != "integer" && h.field != "pattern" && h.field != "double")
    cur.fail("field " + quote(h.field) + " is unknown (real, integer, pattern, complex)");
  if (h.field == "double") h.field = "real";
  if (h.symmetry != "general" && h.symmetry != "symmetric" && h.symmetry != "skew-symmetric")
    cur.fail("symmetry " + quote(h.symmetry) + " is unknown (general, symmetric, skew-symmetric, hermitian)");
  if (h.field == "pattern" && h.symmetry == "skew-symmetric")
    cur.fail("a pattern matrix cannot be skew-symmetric");
  for (;;) {
    if (cur.at_end()) cur.fail("file ends before the size line");
    std::string_view l = cur.next();
    if (!l.empty() && l[0] == '%') continue;
    if (is_blank(l)) continue;
    size_line = l;
    return h;
  }
}

}  // namespace

template <class Scalar>
HostCsr<Scalar> parse_matrix_market(std::string_view text, const std::string& source,
                                    const MatrixMarketReadOptions& opts,
                                    MatrixMarketHeader* header_out) {
  LineCursor cur(text, source);
  std::string_view size_line;
  MatrixMarketHeader h = read_header(cur, size_line);
  if (h.format == "array")
    throw UnsupportedError(source + ": 'array' (dense) matrices are not supported; "
                           "use a coordinate file (vectors: read_matrix_market_vector)");
  {
    std::string_view s = size_line;
    h.rows = parse_count(cur, next_token(s), "row count");
    h.cols = parse_count(cur, next_token(s), "column count");
    h.entries = parse_count(cur, next_token(s), "entry count");
    if (!is_blank(s)) cur.fail("size line has more than three numbers: " + quote(size_line));
  }
  const std::string where = source + ":" + std::to_string(cur.line()) + ": ";
  if (h.rows > std::numeric_limits<ordinal_t>::max() || h.cols > std::numeric_limits<ordinal_t>::max())
    throw OverflowError(where + "matrix is " + std::to_string(h.rows) + " x " +
                        std::to_string(h.cols) + ", past the 32-bit index limit (" +
                        std::to_string(std::numeric_limits<ordinal_t>::max()) + ")");
  const bool symmetric = h.symmetry == "symmetric";
  const bool skew = h.symmetry == "skew-symmetric";
  if ((symmetric || skew) && h.rows != h.cols)
    cur.fail(h.symmetry + " matrix must be square, size line says " + std::to_string(h.rows) +
             " x " + std::to_string(h.cols));
  if (static_cast<long double>(h.entries) > static_cast<long double>(h.rows) * h.cols)
    cur.fail("size line announces " + std::to_string(h.entries) + " entries, more than a " +
             std::to_string(h.rows) + " x " + std::to_string(h.cols) + " matrix holds");
  if (opts.max_dimension > 0 && (h.rows > opts.max_dimension || h.cols > opts.max_dimension))
    throw LimitError(where + "matrix is " + std::to_string(h.rows) + " x " + std::to_string(h.cols) +
                     ", past the reader's limit of " + std::to_string(opts.max_dimension) + " rows or columns");
  if (opts.max_entries > 0 && h.entries > opts.max_entries)
    throw LimitError(where + "size line announces " + std::to_string(h.entries) +
                     " entries, past the reader's limit of " + std::to_string(opts.max_entries));
  if (header_out) *header_out = h;

  const bool pattern = h.field == "pattern";
  const bool integer_field = h.field == "integer";
  HostCoo<Scalar> coo(h.rows, h.cols);
  // Reserve for what the file can hold (an entry line takes >= 6 bytes), not
  // for what its size line claims: a lying size line must not allocate.
  const std::size_t can_hold = text.size() / 6 + 1;
  const std::size_t expect =
      std::min(static_cast<std::size_t>(h.entries), can_hold) * ((symmetric || skew) ? 2 : 1);
  coo.row.reserve(expect);
  coo.col.reserve(expect);
  coo.val.reserve(expect);

  std::int64_t first_lower = 0, first_upper = 0;  // lines, for the one-triangle rule
  std::int64_t read = 0;
  while (read < h.entries) {
    if (cur.at_end())
      throw ParseError(source, cur.line(),
                       "file is truncated: the size line announces " + std::to_string(h.entries) +
                           " entries, found " + std::to_string(read));
    std::string_view l = cur.next();
    if (is_blank(l)) continue;
    if (l[0] == '%') continue;
    std::string_view s = l;
    std::string_view ti = next_token(s), tj = next_token(s);
    const std::int64_t i = parse_count(cur, ti, "row index");
    const std::int64_t j = parse_count(cur, tj, "column index");
    if (i == 0 || j == 0)
      cur.fail("index 0 in (" + std::string(ti) + ", " + std::string(tj) +
               "): Matrix Market indices are 1-based");
    if (i > h.rows || j > h.cols)
      cur.fail("entry (" + std::string(ti) + ", " + std::string(tj) + ") is outside the " +
               std::to_string(h.rows) + " x " + std::to_string(h.cols) + " matrix");
    Scalar v = Scalar(1);
    if (!pattern) v = parse_value<Scalar>(cur, next_token(s), integer_field, opts.nonfinite);
    if (!is_blank(s))
      cur.fail("unexpected extra token " + quote(next_token(s)) + " (field is '" + h.field + "')");
    const ordinal_t r = static_cast<ordinal_t>(i - 1), c = static_cast<ordinal_t>(j - 1);
    coo.row.push_back(r);
    coo.col.push_back(c);
    coo.val.push_back(v);
    if (symmetric || skew) {
      if (r == c) {
        if (skew) cur.fail("skew-symmetric matrix stores a diagonal entry (" + std::string(ti) + ", " + std::string(tj) + ")");
      } else {
        std::int64_t& first = r > c ? first_lower : first_upper;
        if (!first) first = cur.line();
        if (first_lower && first_upper)
          cur.fail(h.symmetry + " file stores entries on both sides of the diagonal (lines " +
                   std::to_string(std::min(first_lower, first_upper)) + " and " +
                   std::to_string(std::max(first_lower, first_upper)) +
                   "); Matrix Market stores one triangle");
        coo.row.push_back(c);
        coo.col.push_back(r);
        coo.val.push_back(skew ? -v : v);
      }
    }
    ++read;
    if (opts.progress && (read & 0xFFFFF) == 0)
      opts.progress("reading", cur.fraction(text.data(), text.size()));
  }
  while (!cur.at_end()) {
    std::string_view l = cur.next();
    if (is_blank(l) || l[0] == '%') continue;
    cur.fail("more entries than the " + std::to_string(h.entries) + " the size line announces");
  }
  if (opts.progress) opts.progress("sorting", 1.0);
  return to_csr(coo);
}

template <class Scalar>
HostCsr<Scalar> read_matrix_market(const std::string& path, const MatrixMarketReadOptions& opts,
                                   MatrixMarketHeader* header) {
  const std::string text = read_file_maybe_gz(path);
  return parse_matrix_market<Scalar>(text, path, opts, header);
}

// ---------------------------------------------------------------- writer --

namespace {
template <class T>
void append_number(std::string& out, T v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip form
  out.append(buf, r.ptr);
}
}  // namespace

template <class Scalar>
void write_matrix_market(const std::string& path, const HostCsr<Scalar>& a,
                         const std::string& comment) {
  std::string out;
  out.reserve(static_cast<std::size_t>(a.nnz()) * 32 + 256);
  out += "%%MatrixMarket matrix coordinate real general\n";
  if (!comment.empty()) {
    std::size_t b = 0;
    while (b <= comment.size()) {
      std::size_t e = comment.find('\n', b);
      if (e == std::string::npos) e = comment.size();
      out += "% " + comment.substr(b, e - b) + "\n";
      b = e + 1;
    }
  }
  out += std::to_string(a.nrows) + " " + std::to_string(a.ncols) + " " + std::to_string(a.nnz()) + "\n";
  for (ordinal_t i = 0; i < a.nrows; ++i)
    for (offset_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      append_number(out, static_cast<std::int64_t>(i) + 1);
      out += ' ';
      append_number(out, static_cast<std::int64_t>(a.col_idx[k]) + 1);
      out += ' ';
      append_number(out, a.values[k]);
      out += '\n';
    }
  write_file_maybe_gz(path, out);
}

std::vector<double> read_matrix_market_vector(const std::string& path) {
  const std::string text = read_file_maybe_gz(path);
  LineCursor cur(text, path);
  std::string_view size_line;
  MatrixMarketHeader h = read_header(cur, size_line);
  if (h.format != "array")
    throw UnsupportedError(path + ": a vector must be a Matrix Market 'array' file (found '" +
                           h.format + "')");
  if (h.field == "pattern") cur.fail("a pattern file holds no vector values");
  if (h.symmetry != "general") cur.fail("a vector file must be 'general'");
  std::string_view s = size_line;
  h.rows = parse_count(cur, next_token(s), "row count");
  std::string_view tc = next_token(s);
  h.cols = tc.empty() ? 1 : parse_count(cur, tc, "column count");
  if (!is_blank(s)) cur.fail("size line has more than two numbers");
  if (h.cols != 1) cur.fail("a vector file must have exactly one column, found " + std::to_string(h.cols));
  std::vector<double> v;
  v.reserve(static_cast<std::size_t>(h.rows));
  while (static_cast<std::int64_t>(v.size()) < h.rows) {
    if (cur.at_end())
      throw ParseError(path, cur.line(), "file is truncated: expected " + std::to_string(h.rows) +
                                             " values, found " + std::to_string(v.size()));
    std::string_view l = cur.next();
    if (is_blank(l) || l[0] == '%') continue;
    std::string_view t = l;
    v.push_back(parse_value<double>(cur, next_token(t), h.field == "integer", NonFinitePolicy::Keep));
    if (!is_blank(t)) cur.fail("one value per line expected, found " + quote(l));
  }
  while (!cur.at_end()) {
    std::string_view l = cur.next();
    if (is_blank(l) || l[0] == '%') continue;
    cur.fail("more values than the " + std::to_string(h.rows) + " the size line announces");
  }
  return v;
}

template <class Scalar>
void write_matrix_market_vector(const std::string& path, const std::vector<Scalar>& v) {
  std::string out = "%%MatrixMarket matrix array real general\n";
  out += std::to_string(v.size()) + " 1\n";
  for (Scalar x : v) {
    append_number(out, x);
    out += '\n';
  }
  write_file_maybe_gz(path, out);
}

#define KSPMV_INSTANTIATE(S)                                                               \
  template HostCsr<S> read_matrix_market(const std::string&, const MatrixMarketReadOptions&, \
                                         MatrixMarketHeader*);                             \
  template HostCsr<S> parse_matrix_market(std::string_view, const std::string&,            \
                                          const MatrixMarketReadOptions&, MatrixMarketHeader*); \
  template void write_matrix_market(const std::string&, const HostCsr<S>&, const std::string&); \
  template void write_matrix_market_vector(const std::string&, const std::vector<S>&);
KSPMV_INSTANTIATE(float)
KSPMV_INSTANTIATE(double)

}  // namespace kspmv

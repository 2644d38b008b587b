// libFuzzer target: the gmsh MSH 2.2 reader, then P1 and P2 assembly on
// what it parsed. Any input may be rejected with a typed kspmv::Error;
// anything else (a crash, a sanitizer report, an untyped exception, an
// assembled matrix that is not canonical CSR) is a bug and aborts.
//
//   fuzz_gmsh fuzz/corpus/gmsh -max_total_time=60
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "kspmv/core/error.hpp"
#include "kspmv/inputs/fem.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const kspmv::TetMesh m = kspmv::parse_gmsh(text, "fuzz");
    if (m.tets.size() > 2000) return 0;
    for (kspmv::FemElement e : {kspmv::FemElement::P1, kspmv::FemElement::P2}) {
      const auto a = kspmv::assemble_laplacian<double>(m, e);
      a.validate();  // throws InvalidArgumentError: not a typed rejection of input, so abort
    }
    if (m.tets.size() <= 50 && kspmv::refine_uniform(m).tets.size() != 8 * m.tets.size()) {
      std::fprintf(stderr, "refinement did not give 8 children per tetrahedron\n");
      std::abort();
    }
  } catch (const kspmv::InvalidArgumentError& e) {
    std::fprintf(stderr, "assembled matrix is not canonical: %s\n", e.what());
    std::abort();
  } catch (const kspmv::Error&) {
    // rejected with a typed error: fine
  }
  return 0;
}

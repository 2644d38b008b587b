// A Kokkos Tools connector (KOKKOS_TOOLS_LIBS=libktimer.so, KTIMER_OUT=file):
// wall time of every kernel, deep copy and fence, summed under the stack of
// profile regions it ran in (Kokkos fences around kernels for a tool that
// does not ask otherwise, so each kernel's time is its own). What split
// auto's pattern figures into kernels and host work in
// h100-auto-figures-84730be-2026-11-26-split.txt.
// Build: g++ -O2 -shared -fPIC -o libktimer.so h100-auto-figures-connector.cpp
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>
using clk = std::chrono::steady_clock;
struct SpaceHandle { char name[64]; };
static std::vector<std::pair<std::string, clk::time_point>> regions;
static std::map<std::string, std::pair<double, long>> totals;
static std::vector<std::pair<std::string, clk::time_point>> open_ops;
static std::string path() { std::string p; for (auto& r : regions) { p += r.first; p += " > "; } return p; }
static void add(const std::string& k, double s) { auto& t = totals[k]; t.first += s; t.second++; }
static void begin(const std::string& what, uint64_t* id) { open_ops.push_back({path() + what, clk::now()}); *id = open_ops.size() - 1; }
static void end(uint64_t id) { auto& o = open_ops[id]; add(o.first, std::chrono::duration<double>(clk::now() - o.second).count()); if (id + 1 == open_ops.size()) open_ops.pop_back(); }
extern "C" {
void kokkosp_init_library(int, uint64_t, uint32_t, void*) {}
void kokkosp_finalize_library() {
  const char* f = std::getenv("KTIMER_OUT");
  FILE* o = f ? std::fopen(f, "w") : stderr;
  for (auto& t : totals) std::fprintf(o, "%10.3f ms %7ld  %s\n", t.second.first * 1e3, t.second.second, t.first.c_str());
  if (f) std::fclose(o);
}
void kokkosp_push_profile_region(const char* n) { regions.push_back({n, clk::now()}); }
void kokkosp_pop_profile_region() {
  if (regions.empty()) return;
  auto r = regions.back(); std::string p = path(); regions.pop_back();
  add("[region] " + p, std::chrono::duration<double>(clk::now() - r.second).count());
}
void kokkosp_begin_parallel_for(const char* n, uint32_t, uint64_t* id) { begin(std::string("for ") + n, id); }
void kokkosp_end_parallel_for(uint64_t id) { end(id); }
void kokkosp_begin_parallel_reduce(const char* n, uint32_t, uint64_t* id) { begin(std::string("reduce ") + n, id); }
void kokkosp_end_parallel_reduce(uint64_t id) { end(id); }
void kokkosp_begin_parallel_scan(const char* n, uint32_t, uint64_t* id) { begin(std::string("scan ") + n, id); }
void kokkosp_end_parallel_scan(uint64_t id) { end(id); }
static uint64_t copy_id;
void kokkosp_begin_deep_copy(SpaceHandle d, const char* dn, const void*, SpaceHandle s, const char* sn, const void*, uint64_t size) {
  char b[400]; std::snprintf(b, sizeof b, "copy %s<-%s %s<-%s (%s)", d.name, s.name, dn, sn, size > (1 << 20) ? "big" : "small");
  begin(b, &copy_id);
}
void kokkosp_end_deep_copy() { end(copy_id); }
void kokkosp_begin_fence(const char* n, uint32_t, uint64_t* id) { begin(std::string("fence ") + n, id); }
void kokkosp_end_fence(uint64_t id) { end(id); }
}

// Kokkos Tools connector: the split of h100-auto-trials-connector.cpp (per region path, wall
// time of kernels, copies, fences; gaps before allocations and after frees), and with
// KTRACE_OUT=FILE every event inside a "convert" region, timestamped (ms since load).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>
using clk = std::chrono::steady_clock;
struct SpaceHandle { char name[64]; };
struct Acc { double ops = 0, alloc = 0, freed = 0; long nops = 0, nalloc = 0, nfree = 0; };
static std::vector<std::pair<std::string, clk::time_point>> regions;
static std::map<std::string, std::pair<double, long>> region_total;
static std::map<std::string, Acc> acc;           // by region path
static std::map<std::string, std::pair<double, long>> kernels;  // by region path + name
static clk::time_point last_event = clk::now();
static bool after_free = false;
static std::string after_free_path;
static FILE* trace = nullptr;
static clk::time_point t0 = clk::now();
static void log_event(const char* kind, const std::string& what, uint64_t size = 0);
static std::string path() { std::string p; for (auto& r : regions) { p += r.first; p += " > "; } return p; }
static double since(clk::time_point t) { return std::chrono::duration<double>(clk::now() - t).count(); }
static void log_event(const char* kind, const std::string& what, uint64_t size) {
  if (!trace) return;
  std::string p = path();
  if (p.find("convert") == std::string::npos) return;
  std::fprintf(trace, "%10.3f %-6s %10llu %s | %s\n", since(t0) * 1e3, kind, (unsigned long long)size, what.c_str(), p.c_str());
}
static void touch() {
  if (after_free) { acc[after_free_path].freed += since(last_event); after_free = false; }
  last_event = clk::now();
}
static std::vector<std::pair<std::string, clk::time_point>> open_ops;
static void begin(const std::string& what, uint64_t* id) { touch(); log_event("begin", what); open_ops.push_back({what, clk::now()}); *id = open_ops.size() - 1; }
static void end(uint64_t id) {
  auto& o = open_ops[id]; double s = since(o.second); std::string p = path(); log_event("end", o.first);
  auto& a = acc[p]; a.ops += s; a.nops++;
  auto& k = kernels[p + o.first]; k.first += s; k.second++;
  if (id + 1 == open_ops.size()) open_ops.pop_back();
  last_event = clk::now();
}
extern "C" {
void kokkosp_init_library(int, uint64_t, uint32_t, void*) {
  const char* t = std::getenv("KTRACE_OUT");
  if (t) trace = std::fopen(t, "w");
}
void kokkosp_finalize_library() {
  const char* f = std::getenv("KTIMER_OUT");
  FILE* o = f ? std::fopen(f, "w") : stderr;
  std::fprintf(o, "# region: total, ops (kernels+copies+fences), alloc gaps, free gaps, other host\n");
  for (auto& [p, t] : region_total) {
    Acc a = acc[p];
    std::fprintf(o, "%9.3f ms x%-4ld ops %8.3f (%ld) alloc %7.3f (%ld) free %7.3f (%ld)  %s\n", t.first * 1e3, t.second,
                 a.ops * 1e3, a.nops, a.alloc * 1e3, a.nalloc, a.freed * 1e3, a.nfree, p.c_str());
  }
  std::fprintf(o, "# ops\n");
  for (auto& [k, t] : kernels) if (t.first > 1e-4) std::fprintf(o, "%9.3f ms %6ld  %s\n", t.first * 1e3, t.second, k.c_str());
  if (f) std::fclose(o);
  if (trace) std::fclose(trace);
}
void kokkosp_push_profile_region(const char* n) { touch(); regions.push_back({n, clk::now()}); log_event("push", n); }
void kokkosp_pop_profile_region() {
  touch();
  if (regions.empty()) return;
  std::string p = path(); auto r = regions.back(); regions.pop_back();
  auto& t = region_total[p]; t.first += since(r.second); t.second++;
}
void kokkosp_allocate_data(SpaceHandle h, const char* label, const void*, uint64_t size) {
  log_event("alloc", std::string(h.name) + " " + label, size);
  if (after_free) { acc[after_free_path].freed += since(last_event); after_free = false; last_event = clk::now(); }
  if (std::string(h.name) != "Host") { auto& a = acc[path()]; a.alloc += since(last_event); a.nalloc++; }
  last_event = clk::now();
}
void kokkosp_deallocate_data(SpaceHandle h, const char* label, const void*, uint64_t size) {
  log_event("free", std::string(h.name) + " " + label, size);
  touch();
  if (std::string(h.name) != "Host") { after_free = true; after_free_path = path(); acc[after_free_path].nfree++; }
}
void kokkosp_begin_parallel_for(const char* n, uint32_t, uint64_t* id) { begin(std::string("for ") + n, id); }
void kokkosp_end_parallel_for(uint64_t id) { end(id); }
void kokkosp_begin_parallel_reduce(const char* n, uint32_t, uint64_t* id) { begin(std::string("reduce ") + n, id); }
void kokkosp_end_parallel_reduce(uint64_t id) { end(id); }
void kokkosp_begin_parallel_scan(const char* n, uint32_t, uint64_t* id) { begin(std::string("scan ") + n, id); }
void kokkosp_end_parallel_scan(uint64_t id) { end(id); }
static uint64_t copy_id;
void kokkosp_begin_deep_copy(SpaceHandle d, const char*, const void*, SpaceHandle s, const char*, const void*, uint64_t size) {
  char b[200]; std::snprintf(b, sizeof b, "copy %s<-%s (%s)", d.name, s.name, size > (1 << 20) ? "big" : "small");
  begin(b, &copy_id);
}
void kokkosp_end_deep_copy() { end(copy_id); }
void kokkosp_begin_fence(const char* n, uint32_t, uint64_t* id) { begin(std::string("fence ") + n, id); }
void kokkosp_end_fence(uint64_t id) { end(id); }
}

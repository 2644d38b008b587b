// A Kokkos Tools connector (KOKKOS_TOOLS_LIBS=libtimeline.so, TIMELINE_OUT=file)
// that asks Kokkos for no fences of its own (requires_global_fencing =
// false), so a program runs as it does without a tool, and splits the host's
// wall time inside each profile region by what the host was doing: waiting
// in a fence (explicit, a reduction's result, a View's header copy), in a
// deep copy, in the gap that ends at an allocation's callback (cudaMalloc:
// the callback comes after it), in the gap that starts at a deallocation's
// callback (cudaFree: it waits for the device), launching kernels, and the
// rest (host work between calls). What split the set-up of the device-built
// formats into fixed costs and kernels in h200-setup-timeline-*.txt.
// Build: g++ -O2 -shared -fPIC -o libtimeline.so h200-setup-timeline-connector.cpp
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace {
using clk = std::chrono::steady_clock;
enum Kind { Fence, Copy, Alloc, Free, Launch, Host, Kinds };
const char* kind_name[Kinds] = {"fence", "deep_copy", "malloc", "free", "launch", "host"};

struct Totals {
  double wall = 0;
  long calls = 0;
  double ms[Kinds] = {};
  long n[Kinds] = {};
  std::map<std::string, std::pair<double, long>> fences;  // by name
  std::map<std::string, std::pair<double, long>> launches;  // by kernel
  std::map<std::string, std::pair<double, long>> mallocs;   // by label, with the bytes
};
struct Open {
  std::string name;
  clk::time_point begin;
};
std::vector<Open> regions;
std::map<std::string, Totals> totals;
clk::time_point last = clk::now();
Kind pending = Host;  // what the gap since `last` counts as, where its end does not say
std::string fence_name, kernel_name;
std::map<std::string, double> malloc_mb;  // by label, over the run
clk::time_point fence_begin, copy_begin;
bool in_fence = false, in_copy = false;

std::string path() {
  std::string p;
  for (auto& r : regions) {
    if (!p.empty()) p += " > ";
    p += r.name;
  }
  return p;
}
// Adds `ms` of `kind` to every open region (a nested region's time is also
// its parents').
void add(Kind kind, double ms) {
  std::string p;
  for (auto& r : regions) {
    if (!p.empty()) p += " > ";
    p += r.name;
    auto& t = totals[p];
    t.ms[kind] += ms;
    t.n[kind] += 1;
  }
}
// Adds `ms` to the named tally of every open region.
template <class Pick>
void add_named(const std::string& name, double ms, Pick pick) {
  std::string p;
  for (auto& r : regions) {
    if (!p.empty()) p += " > ";
    p += r.name;
    auto& v = pick(totals[p])[name];
    v.first += ms;
    v.second += 1;
  }
}
double since(clk::time_point t) { return std::chrono::duration<double, std::milli>(clk::now() - t).count(); }
// Closes the gap since the last event as `kind`.
void gap(Kind kind) {
  if (!in_fence && !in_copy) add(kind, since(last));
  last = clk::now();
}
clk::time_point kernel_begin;
void begin_kernel(const char* n) {
  gap(Host);
  pending = Launch;
  kernel_name = n;
  kernel_begin = clk::now();
}
void end_kernel() {
  if (pending == Launch) add_named(kernel_name, since(kernel_begin), [](Totals& t) -> auto& { return t.launches; });
  gap(pending);
  pending = Host;
}
}  // namespace

extern "C" {
struct SpaceHandle {
  char name[64];
};
struct Kokkos_Tools_ToolSettings {
  bool requires_global_fencing;
  bool padding[255];
};
void kokkosp_request_tool_settings(const uint32_t, Kokkos_Tools_ToolSettings* s) { s->requires_global_fencing = false; }
void kokkosp_init_library(int, uint64_t, uint32_t, void*) { last = clk::now(); }
void kokkosp_finalize_library() {
  const char* f = std::getenv("TIMELINE_OUT");
  FILE* o = f ? std::fopen(f, "w") : stderr;
  std::fprintf(o, "# region: calls, wall ms; then ms (count) of each kind of host time inside it\n");
  for (auto& [p, t] : totals) {
    if (t.calls == 0) continue;
    std::fprintf(o, "%9.3f ms x%-5ld", t.wall, t.calls);
    for (int k = 0; k < Kinds; ++k) std::fprintf(o, "  %s %.3f (%ld)", kind_name[k], t.ms[k], t.n[k]);
    std::fprintf(o, "  | %s\n", p.c_str());
    for (auto& [name, v] : t.fences) std::fprintf(o, "      fence %8.3f ms x%-5ld %s\n", v.first, v.second, name.c_str());
    for (auto& [name, v] : t.launches) std::fprintf(o, "      launch %8.3f ms x%-5ld %s\n", v.first, v.second, name.c_str());
    for (auto& [name, v] : t.mallocs)
      std::fprintf(o, "      malloc %8.3f ms x%-5ld %s (%.0f MB in the run)\n", v.first, v.second, name.c_str(), malloc_mb[name]);
  }
  if (f) std::fclose(o);
}
void kokkosp_push_profile_region(const char* n) {
  gap(pending);
  pending = Host;
  regions.push_back({n, clk::now()});
}
void kokkosp_pop_profile_region() {
  if (regions.empty()) return;
  gap(pending);
  pending = Host;
  auto& t = totals[path()];
  t.wall += since(regions.back().begin);
  t.calls += 1;
  regions.pop_back();
}
void kokkosp_begin_parallel_for(const char* n, uint32_t, uint64_t*) { begin_kernel(n); }
void kokkosp_end_parallel_for(uint64_t) { end_kernel(); }
void kokkosp_begin_parallel_reduce(const char* n, uint32_t, uint64_t*) { begin_kernel(n); }
void kokkosp_end_parallel_reduce(uint64_t) { end_kernel(); }
void kokkosp_begin_parallel_scan(const char* n, uint32_t, uint64_t*) { begin_kernel(n); }
void kokkosp_end_parallel_scan(uint64_t) { end_kernel(); }
void kokkosp_begin_fence(const char* n, uint32_t, uint64_t*) {
  gap(pending);
  pending = Host;
  if (in_fence) return;
  in_fence = true;
  fence_name = n;
  fence_begin = clk::now();
}
void kokkosp_end_fence(uint64_t) {
  if (!in_fence) return;
  in_fence = false;
  const double ms = since(fence_begin);
  if (!in_copy) {
    add(Fence, ms);
    std::string p;
    for (auto& r : regions) {
      if (!p.empty()) p += " > ";
      p += r.name;
      auto& f = totals[p].fences[fence_name];
      f.first += ms;
      f.second += 1;
    }
  }
  last = clk::now();
}
void kokkosp_allocate_data(SpaceHandle, const char* label, const void*, uint64_t bytes) {
  if (!in_fence && !in_copy) {
    add_named(label, since(last), [](Totals& t) -> auto& { return t.mallocs; });
    malloc_mb[label] += bytes / 1e6;
  }
  gap(Alloc);
  pending = Host;
}
void kokkosp_deallocate_data(SpaceHandle, const char*, const void*, uint64_t) { gap(pending); pending = Free; }
void kokkosp_begin_deep_copy(SpaceHandle, const char*, const void*, SpaceHandle, const char*, const void*, uint64_t) {
  gap(pending);
  pending = Host;
  if (in_copy) return;
  in_copy = true;
  copy_begin = clk::now();
}
void kokkosp_end_deep_copy() {
  if (!in_copy) return;
  in_copy = false;
  add(Copy, since(copy_begin));
  last = clk::now();
}
}

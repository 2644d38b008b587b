#include "kspmv/core/format.hpp"

#include "kspmv/core/error.hpp"

namespace kspmv {

const std::vector<FormatDescription>& known_formats() {
  static const std::vector<FormatDescription> formats = {
#define KSPMV_FORMAT_DESCRIPTION(E, name, builder, square_only, summary) {Format::E, name, summary, square_only},
      KSPMV_FORMAT_LIST(KSPMV_FORMAT_DESCRIPTION)
#undef KSPMV_FORMAT_DESCRIPTION
      {Format::Auto, "auto", "the performance model's pick for this matrix (kspmv info --predict)"},
  };
  return formats;
}

std::string known_format_names() {
  std::string s;
  for (const auto& f : known_formats()) s += (s.empty() ? "" : ", ") + std::string(f.name);
  return s;
}

const char* format_name(Format f) {
  for (const auto& d : known_formats())
    if (d.format == f) return d.name;
  return "unknown";
}

Format parse_format(const std::string& name) {
  for (const auto& d : known_formats())
    if (name == d.name) return d.format;
  throw InvalidArgumentError("unknown format '" + name + "'; known formats: " + known_format_names());
}

}  // namespace kspmv

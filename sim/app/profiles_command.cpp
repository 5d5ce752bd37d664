#include "sim/app/profiles_command.hpp"

#include "sim/config/schema.hpp"

#include <algorithm>
#include <filesystem>

#include "sim/scenario/errors.hpp"
#include "sim/scenario/keys.hpp"

namespace fs = std::filesystem;

namespace dtsim::sim {
namespace {

using Table = std::vector<std::vector<std::string>>;

// A value that passes the schema for a key the profile under test does not provide; never shown.
std::string stand_in(const KeySpec& k) {
  switch (k.type) {
    case ValueType::Quantity: return "1" + base_unit(k.dim);
    case ValueType::Int:
    case ValueType::Real: return "1";
    case ValueType::Bool: return "false";
    case ValueType::Choice: return k.choices.front();
    case ValueType::Text: return "-";
    case ValueType::IntList: return "";
  }
  return "";
}

std::string stand_in_section(const std::string& section) {
  std::string text = "[" + section + "]\nprofile =\n";
  for (const KeySpec& k : all_keys())
    if (k.section() == section && k.default_text.empty() && !k.optional) text += k.field() + " = " + stand_in(k) + "\n";
  return text;
}

std::string printf_string(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

std::string tflops(double flops) { return printf_string("%.1f", flops / 1e12); }

std::string power_text(double watts) { return watts > 0 ? printf_string("%.0f W", watts) : "-"; }

std::string price_text(const GpuSpec& g) {
  if (!g.has_price()) return "-";
  return printf_string("%g", g.price_low) + "-" + printf_string("%g", g.price_high) + " " + g.price_currency;
}

// Windows are set in binary units (4MiB), so they are shown that way.
std::string window_text(double bytes) {
  if (bytes <= 0) return "-";
  const double mib = bytes / (1024.0 * 1024.0);
  return mib >= 1 ? printf_string("%g MiB", mib) : printf_string("%g KiB", bytes / 1024.0);
}

std::string profile_name(const std::string& file) { return fs::path(file).stem().string(); }

void print_table(std::FILE* out, const Table& rows) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()), 0);
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(width[c] - row[c].size() + 2, ' ');
    }
    std::fprintf(out, "%s\n", line.c_str());
  }
}

Table gpu_table(const std::string& profile_dir) {
  Table rows = {{"PROFILE", "NAME", "FP32", "TF32", "BF16", "MEMORY", "IDLE", "BUSY", "PRICE/GPU-HOUR", "REGION"}};
  for (const std::string& file : profile_files(profile_dir, "gpu")) {
    const GpuSpec g = make_gpu_spec(load_profile("gpu", file, profile_dir));
    rows.push_back({profile_name(file), g.name, tflops(g.peak_fp32), tflops(g.peak_tf32), tflops(g.peak_bf16),
                    printf_string("%.0f GB", g.memory / 1e9), power_text(g.power_idle), power_text(g.power_busy),
                    price_text(g), g.price_region.empty() ? "-" : g.price_region});
  }
  return rows;
}

Table fabric_table(const std::string& profile_dir) {
  Table rows = {{"PROFILE", "NAME", "PROTOCOL", "GBIT/S", "LINK LATENCY", "SWITCH LATENCY", "EFFICIENCY", "TCP WINDOW"}};
  for (const std::string& file : profile_files(profile_dir, "fabric")) {
    const FabricSpec f = make_fabric_spec(load_profile("fabric", file, profile_dir));
    rows.push_back({profile_name(file), f.name, fabric_protocol_name(f.protocol),
                    printf_string("%g", f.bandwidth * 8 / 1e9), format_quantity(f.link_latency, Dimension::Time),
                    format_quantity(f.switch_latency, Dimension::Time), printf_string("%.2f", f.efficiency),
                    window_text(f.tcp_window)});
  }
  return rows;
}

// A framework profile's [sync] and [compute] values, as a run that names it takes them (a folder of profiles
// without framework/ has none to list).
Table framework_table(const std::string& profile_dir) {
  Table rows = {{"PROFILE", "NAME", "ZERO STAGE", "BUCKET", "OVERLAP", "OPTIMIZER KERNELS"}};
  std::error_code ec;
  if (!fs::is_directory(fs::path(profile_dir) / "framework", ec)) return rows;
  for (const std::string& file : profile_files(profile_dir, "framework")) {
    const Scenario s = load_profile("framework", file, profile_dir);
    rows.push_back({profile_name(file), s.text("framework.name"), s.text("sync.zero_stage"),
                    format_quantity(s.quantity("sync.bucket_size"), Dimension::Bytes),
                    s.boolean("sync.overlap") ? "yes" : "no", s.text("compute.optimizer_kernels")});
  }
  return rows;
}

}  // namespace

std::vector<std::string> profile_files(const std::string& profile_dir, const std::string& section) {
  const fs::path folder = fs::path(profile_dir) / section;
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    throw InputError("command line", "", "no profile folder '" + folder.string() + "'",
                     "give the network_profiles folder: dtsim profiles DIR, or set DTSIM_PROFILE_DIR");
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(folder, ec))
    if (entry.path().extension() == ".ini" && entry.is_regular_file(ec))  // a folder named x.ini is no profile
      files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

Scenario load_profile(const std::string& section, const std::string& file, const std::string& profile_dir) {
  // An absolute path is taken as a file, never as a name to look up in the folder.
  const std::string path = fs::absolute(file).string();
  std::string content = "[" + section + "]\nprofile = " + path + "\n";
  for (const char* other : {"gpu", "fabric"})
    if (section != other) content += stand_in_section(other);
  return parse_scenario(path, content, {}, profile_dir);
}

int command_profiles(const std::string& profile_dir, std::FILE* out) {
  // Both tables are built before anything is printed, so a broken profile leaves only the error.
  const Table gpus = gpu_table(profile_dir);
  const Table fabrics = fabric_table(profile_dir);
  const Table frameworks = framework_table(profile_dir);
  std::fprintf(out, "GPU profiles (%s/gpu), peak dense TFLOPS\n", profile_dir.c_str());
  print_table(out, gpus);
  std::fprintf(out, "\nFabric profiles (%s/fabric), bandwidth per port and direction\n", profile_dir.c_str());
  print_table(out, fabrics);
  if (frameworks.size() > 1) {
    std::fprintf(out, "\nFramework profiles (%s/framework), the [sync] and [compute] defaults a run takes from them\n",
                 profile_dir.c_str());
    print_table(out, frameworks);
  }
  return 0;
}

}  // namespace dtsim::sim

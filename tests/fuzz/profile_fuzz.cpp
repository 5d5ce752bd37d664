// Fuzz target: a GPU or fabric profile read the way a scenario reads it (Scenario::parse through
// sim/config/schema.hpp parse_scenario, which loads the file named by gpu.profile or fabric.profile) and
// turned into the hardware spec the simulator uses (make_gpu_spec, make_fabric_spec). The first byte picks
// the kind ('f': fabric, anything else: gpu); the rest is the profile file. As `dtsim profiles` does, the
// other section gets stand-in values. Bad input must be an InputError whose message is safe to print.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "sim/config/hardware_config.hpp"
#include "sim/config/schema.hpp"
#include "sim/scenario/errors.hpp"
#include "sim/scenario/units.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

using namespace dtsim::sim;
namespace fs = std::filesystem;

// A value that passes the schema, for every key of `section` that has no default.
std::string stand_in_section(const std::string& section) {
  std::string text = "[" + section + "]\nprofile =\n";
  for (const KeySpec& k : all_keys()) {
    if (k.section() != section || !k.default_text.empty() || k.optional) continue;
    std::string value = "1";
    if (k.type == ValueType::Quantity) value = "1" + base_unit(k.dim);
    if (k.type == ValueType::Choice) value = k.choices.front();
    if (k.type == ValueType::Text) value = "-";
    text += k.field() + " = " + value + "\n";
  }
  return text;
}

// One file per process, rewritten for every input (on /dev/shm when there is one, so that it stays in
// memory) and removed at exit.
struct ProfileFile {
  fs::path path;
  ProfileFile() {
    const fs::path dir = fs::is_directory("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    path = dir / ("dtsim_fuzz_profile_" + std::to_string(::getpid()) + ".ini");
  }
  ~ProfileFile() {
    std::error_code ec;
    fs::remove(path, ec);
  }
};

const fs::path& profile_file() {
  static const ProfileFile file;
  return file.path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool fabric = data[0] == 'f';
  const std::string section = fabric ? "fabric" : "gpu";
  {
    std::ofstream out(profile_file(), std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data + 1), static_cast<std::streamsize>(size - 1));
    if (!out) dtsim::fuzz::finding("cannot write " + profile_file().string());
  }
  const std::string scenario = "[" + section + "]\nprofile = " + profile_file().string() + "\n" +
                               stand_in_section(fabric ? "gpu" : "fabric");
  try {
    const Scenario s = parse_scenario("fuzz-profile.ini", scenario, {}, profile_file().parent_path().string());
    if (fabric)
      make_fabric_spec(s);
    else
      make_gpu_spec(s);
    dtsim::fuzz::last_outcome() = dtsim::fuzz::Outcome::Accepted;
  } catch (const InputError& e) {
    dtsim::fuzz::check_message(e.what(), [](std::string_view m) { return find_unprintable(m); });
    dtsim::fuzz::last_outcome() = dtsim::fuzz::Outcome::Refused;
  }
  return 0;
}

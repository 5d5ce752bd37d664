// The shipped hardware profiles: each loads through the scenario machinery, holds plausible values and has
// the fields its protocol needs; the new keys' cross-checks; closed-form sanity checks on units and prices.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "sim/config/hardware_config.hpp"
#include "sim/app/profiles_command.hpp"
#include "sim/scenario/keys.hpp"
#include "sim/config/schema.hpp"
#include "sim/scenario/scenario.hpp"

namespace dtsim::sim {
namespace {

namespace fs = std::filesystem;

const std::string kProfiles = std::string(DTSIM_SOURCE_DIR) + "/network_profiles";

// A scenario that names one shipped profile the way a user does (by name, found in the profile folder).
Scenario with_profile(const std::string& section, const std::string& name, const std::vector<std::string>& sets = {}) {
  return parse_scenario("test.ini", "[" + section + "]\nprofile = " + name + "\n", sets, kProfiles);
}

std::vector<std::string> names_in(const std::string& section) {
  std::vector<std::string> names;
  for (const std::string& file : profile_files(kProfiles, section)) names.push_back(fs::path(file).stem().string());
  return names;
}

std::map<std::string, FabricSpec> all_fabrics() {
  std::map<std::string, FabricSpec> out;
  for (const std::string& name : names_in("fabric")) out[name] = make_fabric_spec(with_profile("fabric", name));
  return out;
}

std::string error_of(const std::string& section, const std::string& name, const std::vector<std::string>& sets) {
  try {
    const Scenario s = with_profile(section, name, sets);
    if (section == "gpu") make_gpu_spec(s);
    else make_fabric_spec(s);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& haystack, const std::string& needle) { return haystack.find(needle) != std::string::npos; }

TEST(Profiles, TheRequestedProfilesShip) {
  const auto gpus = names_in("gpu");
  for (const char* name : {"v100-32gb", "a100-40gb", "a100-80gb", "h100-80gb", "h200-141gb"})
    EXPECT_NE(std::find(gpus.begin(), gpus.end(), name), gpus.end()) << name;
  const auto fabrics = names_in("fabric");
  for (const char* name : {"ib-hdr-200", "ib-ndr-400", "ib-xdr-800", "roce-100", "roce-200", "roce-400", "eth-10g-tcp",
                           "eth-25g-tcp", "eth-100g-tcp", "nvlink3-nvswitch", "nvlink4-nvswitch", "pcie4-x16",
                           "pcie5-x16", "wan-10g"})
    EXPECT_NE(std::find(fabrics.begin(), fabrics.end(), name), fabrics.end()) << name;
}

TEST(Profiles, EveryGpuProfileLoadsWithPlausibleValues) {
  for (const std::string& name : names_in("gpu")) {
    SCOPED_TRACE(name);
    const Scenario s = with_profile("gpu", name);
    const GpuSpec g = make_gpu_spec(s);
    EXPECT_FALSE(g.name.empty());
    EXPECT_GT(g.peak_fp32, 10e12);
    EXPECT_LE(g.peak_fp32, g.peak_tf32);  // tensor-core modes are never slower than FP32
    EXPECT_LT(g.peak_tf32, g.peak_bf16);
    EXPECT_LT(g.peak_bf16, 2e15);         // dense rates, not the 2:4-sparse ones
    EXPECT_GE(g.memory, 16e9);
    EXPECT_LE(g.memory, 200e9);
    EXPECT_GT(g.efficiency, 0.2);
    EXPECT_LE(g.efficiency, 0.7);
    // Every shipped profile states its power, from the file itself rather than a default.
    EXPECT_TRUE(g.has_power());
    EXPECT_EQ(s.origin("gpu.power_idle").file, kProfiles + "/gpu/" + name + ".ini");
    EXPECT_GT(g.power_idle, 20);
    EXPECT_LT(g.power_idle, g.power_busy / 4);
    EXPECT_GE(g.power_busy, 250);
    EXPECT_LE(g.power_busy, 1000);
    if (g.has_price()) {
      EXPECT_LE(g.price_low, g.price_high);
      EXPECT_EQ(g.price_currency, "CNY");
      EXPECT_FALSE(g.price_region.empty());
    }
  }
}

TEST(Profiles, EveryFabricProfileLoadsWithTheFieldsItsProtocolNeeds) {
  for (const std::string& name : names_in("fabric")) {
    SCOPED_TRACE(name);
    const Scenario s = with_profile("fabric", name);
    const FabricSpec f = make_fabric_spec(s);
    const std::string file = kProfiles + "/fabric/" + name + ".ini";
    EXPECT_FALSE(f.name.empty());
    EXPECT_EQ(s.origin("fabric.protocol").file, file) << "the protocol must be stated, not defaulted";
    EXPECT_GE(f.bandwidth, 1e9);  // 8 Gb/s .. 8 Tb/s
    EXPECT_LE(f.bandwidth, 1e12);
    EXPECT_GT(f.efficiency, 0.5);
    EXPECT_LE(f.efficiency, 1.0);
    const double one_way = 2 * f.link_latency + f.switch_latency;  // host, switch, host
    switch (f.protocol) {
      case FabricProtocol::Tcp:
      case FabricProtocol::Wan:
        EXPECT_EQ(s.origin("fabric.tcp_window").file, file);
        EXPECT_GE(f.tcp_window, 64 * 1024.0);
        EXPECT_GE(one_way, f.protocol == FabricProtocol::Wan ? 1e-3 : 10e-6);
        break;
      case FabricProtocol::Rdma:
      case FabricProtocol::Nvlink:
      case FabricProtocol::Pcie:
        EXPECT_EQ(f.tcp_window, 0.0);
        EXPECT_LT(one_way, 5e-6);
        break;
    }
  }
}

TEST(Profiles, UnitConversionsInClosedForm) {
  EXPECT_DOUBLE_EQ(parse_quantity("400Gbps", Dimension::Bandwidth), 50e9);
  EXPECT_DOUBLE_EQ(parse_quantity("300GB/s", Dimension::Bandwidth), 300e9);
  EXPECT_DOUBLE_EQ(parse_quantity("4MiB", Dimension::Bytes), 4194304.0);
  EXPECT_DOUBLE_EQ(parse_quantity("700W", Dimension::Power), 700.0);
  EXPECT_DOUBLE_EQ(parse_quantity("2.6ms", Dimension::Time), 2.6e-3);
  const auto fabrics = all_fabrics();
  EXPECT_DOUBLE_EQ(fabrics.at("ib-ndr-400").bandwidth, 50e9);
  EXPECT_DOUBLE_EQ(fabrics.at("ib-xdr-800").bandwidth, 100e9);
  EXPECT_DOUBLE_EQ(fabrics.at("eth-25g-tcp").bandwidth, 3.125e9);
}

TEST(Profiles, PriceMidpointsOfTheArticleRanges) {
  const std::map<std::string, double> midpoint = {
      {"a100-40gb", 16.0}, {"a100-80gb", 20.0}, {"h100-80gb", 32.5}, {"v100-32gb", 8.0}};
  for (const auto& [name, mid] : midpoint) {
    const GpuSpec g = make_gpu_spec(with_profile("gpu", name));
    EXPECT_TRUE(g.has_price()) << name;
    EXPECT_DOUBLE_EQ(g.price_mid(), mid) << name;
  }
  const GpuSpec h200 = make_gpu_spec(with_profile("gpu", "h200-141gb"));
  EXPECT_FALSE(h200.has_price());
  EXPECT_DOUBLE_EQ(h200.price_mid(), 0.0);
  EXPECT_TRUE(h200.price_currency.empty());
}

TEST(Profiles, IntraNodeBandwidthOrdering) {
  const auto f = all_fabrics();
  EXPECT_GT(f.at("nvlink4-nvswitch").bandwidth, f.at("nvlink3-nvswitch").bandwidth);
  EXPECT_GT(f.at("nvlink3-nvswitch").bandwidth, f.at("pcie5-x16").bandwidth);
  EXPECT_GT(f.at("pcie5-x16").bandwidth, f.at("pcie4-x16").bandwidth);
  // The same holds for what can actually be achieved.
  const auto achieved = [&](const char* n) { return f.at(n).bandwidth * f.at(n).efficiency; };
  EXPECT_GT(achieved("nvlink4-nvswitch"), achieved("nvlink3-nvswitch"));
  EXPECT_GT(achieved("nvlink3-nvswitch"), achieved("pcie5-x16"));
  EXPECT_GT(achieved("pcie5-x16"), achieved("pcie4-x16"));
  EXPECT_DOUBLE_EQ(f.at("nvlink3-nvswitch").bandwidth, 600e9 / 2);  // 600 GB/s total per A100
  EXPECT_DOUBLE_EQ(f.at("nvlink4-nvswitch").bandwidth, 900e9 / 2);  // 900 GB/s total per H100
}

TEST(Profiles, TcpWindowCapsAFlowAtWindowOverRoundTrip) {
  const FabricSpec wan = all_fabrics().at("wan-10g");
  const double route = 2 * wan.link_latency + wan.switch_latency;  // one way, 5.2 ms
  EXPECT_NEAR(route, 5.2e-3, 1e-12);
  EXPECT_NEAR(wan.window_rate_cap(route), 4194304.0 / 10.4e-3, 1e-3);
  EXPECT_LT(wan.window_rate_cap(route), wan.bandwidth);  // the window, not the line, limits one flow
  EXPECT_TRUE(std::isinf(all_fabrics().at("ib-hdr-200").window_rate_cap(route)));
}

TEST(Profiles, EveryProtocolChoiceHasAName) {
  const KeySpec* key = find_key("fabric.protocol");
  ASSERT_NE(key, nullptr);
  for (const std::string& choice : key->choices) EXPECT_EQ(fabric_protocol_name(parse_fabric_protocol(choice)), choice);
  EXPECT_THROW(parse_fabric_protocol("infiniband"), std::invalid_argument);
}

TEST(ProfileErrors, PricesComeAsACompleteRange) {
  EXPECT_TRUE(contains(error_of("gpu", "h200-141gb", {"gpu.price_low=10"}), "gpu.price_high"));
  EXPECT_TRUE(contains(error_of("gpu", "h200-141gb", {"gpu.price_low=10", "gpu.price_high=20"}), "gpu.price_currency"));
  EXPECT_TRUE(contains(error_of("gpu", "a100-40gb", {"gpu.price_low=30"}), "gpu.price_low: the price range runs from 30 down to"));
  EXPECT_TRUE(contains(error_of("gpu", "a100-40gb", {"gpu.price_low=-1"}), "out of range"));
  EXPECT_EQ(error_of("gpu", "h200-141gb", {"gpu.price_low=10", "gpu.price_high=20", "gpu.price_currency=USD"}), "");
}

TEST(ProfileErrors, PowerComesAsAPair) {
  EXPECT_TRUE(contains(error_of("gpu", "a100-40gb", {"gpu.power_idle=0W"}), "gpu.power_idle"));
  EXPECT_TRUE(contains(error_of("gpu", "a100-40gb", {"gpu.power_idle=500W"}), "gpu.power_idle: the idle power 500 W is above the busy power"));
  EXPECT_TRUE(contains(error_of("gpu", "a100-40gb", {"gpu.power_busy=400"}), "has no unit"));
}

TEST(ProfileErrors, TheTcpWindowBelongsToTcpFabricsOnly) {
  const std::string missing = error_of("fabric", "eth-25g-tcp", {"fabric.tcp_window=0B"});
  EXPECT_TRUE(contains(missing, "fabric.tcp_window")) << missing;
  EXPECT_TRUE(contains(missing, "protocol tcp needs fabric.tcp_window")) << missing;
  EXPECT_TRUE(contains(error_of("fabric", "ib-hdr-200", {"fabric.tcp_window=4MiB"}), "applies only to protocol tcp or wan"));
  EXPECT_TRUE(contains(error_of("fabric", "ib-hdr-200", {"fabric.protocol=tcp"}), "fabric.tcp_window"));
  EXPECT_TRUE(contains(error_of("fabric", "ib-hdr-200", {"fabric.protocol=infiniband"}), "not a valid choice"));
  EXPECT_EQ(error_of("fabric", "ib-hdr-200", {"fabric.protocol=tcp", "fabric.tcp_window=1MiB"}), "");
}

// Profiles written before power, price and protocol existed still load, as rdma with nothing known.
TEST(ProfileErrors, OlderProfilesWithoutTheNewKeysStillLoad) {
  const fs::path dir = fs::temp_directory_path() / ("dtsim_old_profiles_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "old-gpu.ini") << "[gpu]\nname = Old\npeak_fp32 = 1TFLOPS\npeak_tf32 = 2TFLOPS\n"
                                        "peak_bf16 = 4TFLOPS\nmemory = 8GB\nefficiency = 0.5\n";
  std::ofstream(dir / "old-fabric.ini") << "[fabric]\nname = Old\nbandwidth = 10Gbps\nlink_latency = 1us\n"
                                           "switch_latency = 100ns\nefficiency = 0.9\n";
  const Scenario s = parse_scenario("old.ini",
                                     "[gpu]\nprofile = " + (dir / "old-gpu.ini").string() + "\n[fabric]\nprofile = " +
                                         (dir / "old-fabric.ini").string() + "\n",
                                     {}, kProfiles);
  const GpuSpec g = make_gpu_spec(s);
  EXPECT_FALSE(g.has_power());
  EXPECT_FALSE(g.has_price());
  const FabricSpec f = make_fabric_spec(s);
  EXPECT_EQ(f.protocol, FabricProtocol::Rdma);
  EXPECT_EQ(f.tcp_window, 0.0);
  fs::remove_all(dir);
}

TEST(ProfileErrors, ABrokenProfileIsReportedWithItsFileAndLine) {
  const fs::path dir = fs::temp_directory_path() / ("dtsim_broken_profiles_" + std::to_string(::getpid()));
  fs::create_directories(dir / "fabric");
  std::ofstream(dir / "fabric" / "broken.ini") << "[fabric]\nname = Broken\nbandwidth = 10Gbs\n";
  try {
    load_profile("fabric", (dir / "fabric" / "broken.ini").string(), dir.string());
    ADD_FAILURE() << "a broken profile loaded";
  } catch (const InputError& e) {
    EXPECT_TRUE(contains(e.what(), "broken.ini:3")) << e.what();
    EXPECT_TRUE(contains(e.what(), "fabric.bandwidth")) << e.what();
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace dtsim::sim

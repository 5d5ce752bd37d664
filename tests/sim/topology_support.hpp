// Shared by the topology tests: scenarios with profiles written for the tests (an NVLink-like intra-node
// fabric, a WAN, a second GPU), and routes read in a child process (one SimGrid engine per process).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "sim/config/run_config.hpp"
#include "sim/world/build_platform.hpp"
#include "sim/config/schema.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/subprocess.hpp"

namespace dtsim::sim::testing {

inline const std::string kProfiles = std::string(DTSIM_SOURCE_DIR) + "/network_profiles";

// The shipped defaults the tests rely on: ib-hdr-200 (fabric) and a100-40gb (gpu).
struct Ib {
  static constexpr double bandwidth = 25e9, link = 0.6e-6, sw = 130e-9, efficiency = 0.96;
};
// test-nvlink.ini
struct NvLink {
  static constexpr double bandwidth = 300e9, link = 0.3e-6, sw = 100e-9, efficiency = 0.8;
};
// test-wan.ini
struct Wan {
  static constexpr double bandwidth = 1.25e9, link = 5e-3, sw = 20e-6, efficiency = 0.9;
};

// A folder of profiles made for the tests (until the shipped nvlink/pcie/wan profiles exist), removed at exit.
inline const std::string& test_profile_dir() {
  static const std::string dir = [] {
    const auto d = std::filesystem::temp_directory_path() / ("dtsim_topology_profiles_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    std::ofstream(d / "test-nvlink.ini") << "[fabric]\nname = test NVLink\nbandwidth = 300GB/s\nlink_latency = 0.3us\n"
                                            "switch_latency = 100ns\nefficiency = 0.8\nprotocol = nvlink\n";
    std::ofstream(d / "test-wan.ini") << "[fabric]\nname = test WAN\nbandwidth = 10Gbps\nlink_latency = 5ms\n"
                                         "switch_latency = 20us\nefficiency = 0.9\n";
    std::ofstream(d / "test-v100.ini") << "[gpu]\nname = test V100\npeak_fp32 = 15.7TFLOPS\npeak_tf32 = 15.7TFLOPS\n"
                                          "peak_bf16 = 125TFLOPS\nmemory = 32GB\nefficiency = 0.4\n";
    std::atexit([] { std::filesystem::remove_all(std::filesystem::temp_directory_path() /
                                                 ("dtsim_topology_profiles_" + std::to_string(::getpid()))); });
    return d.string();
  }();
  return dir;
}

inline std::string profile(const std::string& name) { return test_profile_dir() + "/" + name + ".ini"; }

inline RunConfig config_of(const std::string& text, const std::vector<std::string>& sets = {}) {
  return make_run_config(parse_scenario("topology_test.ini", text, sets, kProfiles));
}

// The message of the InputError that loading `text` raises ("" if none).
inline std::string config_error_of(const std::string& text, const std::vector<std::string>& sets = {}) {
  try {
    config_of(text, sets);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

inline bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Builds the platform of `config` in a child process, runs `probe` on it there and returns its JSON.
template <class Probe>
nlohmann::json in_platform(const RunConfig& config, Probe probe, int servers = 0) {
  const std::string out = dtsim::testing::run_in_child([&] {
    auto engine = create_engine({config.network_model, config.crosstraffic});
    const Platform p = build_platform(*engine, platform_spec(config), servers);
    nlohmann::json j = probe(*engine, p);
    return j.dump();
  });
  return nlohmann::json::parse(out);
}

// Starts every transfer (src, dst, bytes) at time 0 from one coordinator and returns when the last one ends.
// src and dst are ranks; an index ≥ the workers is server (index − workers) of the `servers` the platform adds.
inline double transfer_time(const RunConfig& config, const std::vector<std::tuple<int, int, double>>& transfers,
                            int servers = 0) {
  const auto j = in_platform(
      config,
      [&](sg4::Engine& engine, const Platform& p) {
        const auto host = [&](int i) { return i < p.num_workers() ? p.workers[i] : p.servers[i - p.num_workers()]; };
        sg4::Actor::create("coordinator", p.workers[0], [&] {
          std::vector<sg4::CommPtr> comms;
          for (const auto& [src, dst, bytes] : transfers)
            comms.push_back(sg4::Comm::sendto_async(host(src), host(dst), static_cast<uint64_t>(bytes)));
          sg4::Comm::wait_all(comms);
        });
        engine.run();
        return nlohmann::json(sg4::Engine::get_clock());
      },
      servers);
  return j.get<double>();
}

// A route as SimGrid computes it: link names in order and the latency.
inline nlohmann::json route_json(sg4::Host* from, sg4::Host* to) {
  std::vector<sg4::Link*> links;
  double latency = 0;
  from->route_to(to, links, &latency);
  nlohmann::json names = nlohmann::json::array();
  for (const sg4::Link* l : links) names.push_back(l->get_name());
  return {{"links", names}, {"latency", latency}};
}

// Routes between the given rank pairs of the platform.
inline nlohmann::json routes_between(const RunConfig& config, const std::vector<std::pair<int, int>>& pairs,
                                     int servers = 0) {
  return in_platform(
      config,
      [&](sg4::Engine&, const Platform& p) {
        nlohmann::json all = nlohmann::json::array();
        for (const auto& [a, b] : pairs) all.push_back(route_json(p.workers[a], p.workers[b]));
        return all;
      },
      servers);
}

inline size_t hops(const nlohmann::json& route) { return route["links"].size(); }

// Latency of a route of `links` links crossing `links − 1` switches on the InfiniBand test fabric.
inline double ib_route_latency(int links) { return links * Ib::link + (links - 1) * Ib::sw; }
// The two GPU ports of a route inside a node, or at its two ends.
inline double nvlink_ports_latency() { return 2 * NvLink::link + NvLink::sw; }

}  // namespace dtsim::sim::testing

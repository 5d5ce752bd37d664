// links.csv's ledger: the bytes dtsim's own transfers put on each link of the platform, and how busy that
// kept the link. A transfer is counted on every link of its SimGrid route, once it is delivered, with
// - its payload bytes (what summary.json's bytes_sent counts, so bytes injected by hosts add up to it);
// - its wire bytes (payload inflated by a modelled protocol's framing, what occupies the link), spread evenly
//   over the transfer's simulated duration into time windows, from which the mean and peak utilisation come
//   (a window's utilisation is capped at 1: even spreading misplaces the bytes of a transfer whose rate
//   changed, and the real link never carried more than its bandwidth).
// Counting our own transfers rather than reading SimGrid's link-load plugin keeps the bytes exact: the
// plugin integrates the solver's usage, which counts background traffic and a model's weights too.
#pragma once

#include <simgrid/s4u.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace dtsim::sim {

class LinkTraffic {
 public:
  // A delivered transfer from `from` to `to` over [start_s, end_s] (simulated seconds).
  void record(const simgrid::s4u::Host* from, const simgrid::s4u::Host* to, uint64_t payload_bytes,
              double wire_bytes, double start_s, double end_s);
  // The same for a finished SimGrid comm, from its own start and finish times; a comm that did not finish
  // (cancelled, failed) moved no counted bytes and is skipped.
  void record(const simgrid::s4u::CommPtr& comm, const simgrid::s4u::Host* from, const simgrid::s4u::Host* to,
              uint64_t payload_bytes, double wire_bytes);

  struct LinkRow {
    std::string link;
    std::string sharing;             // "shared", "split-duplex" or "fatpipe"
    double bandwidth_Bps = 0.0;
    int64_t transfers = 0;
    uint64_t bytes = 0;              // payload
    uint64_t injected_bytes = 0;     // payload of transfers whose first hop this is (leaving a host)
    double wire_bytes = 0.0;
    double mean_utilisation = 0.0;   // wire bytes / (bandwidth · run time)
    double peak_utilisation = 0.0;   // the busiest window's
    double window_s = 0.0;           // the windows' width
    bool utilisation_defined = true; // false on a fatpipe link, whose flows do not share its bandwidth
  };
  // Every link that carried a transfer, busiest (most payload bytes) first, then by name.
  std::vector<LinkRow> rows(double run_time_s) const;
  // The link whose mean utilisation was highest (utilisation defined), if any carried traffic.
  std::optional<LinkRow> busiest(double run_time_s) const;
  // The `top` links that carried the most payload (utilisation defined), each window's utilisation from
  // time 0 on (window k covers [k·window_s(), (k+1)·window_s())), for trace.json's counter tracks.
  struct Series {
    std::string link;
    std::vector<double> utilisation;
  };
  std::vector<Series> busiest_series(size_t top) const;
  double window_s() const { return window_s_; }
  uint64_t injected_bytes() const;  // summed over links: the payload bytes that left hosts
  // links.csv: one row per link of rows(), with the window the peak is taken over.
  std::string csv(double run_time_s) const;

  // The ledger of the run in progress, or null when links.csv was not asked for. Transfers are recorded
  // where the collectives and strategies deliver them; a scope makes a ledger the active one.
  static LinkTraffic* active();
  class Scope {
   public:
    explicit Scope(LinkTraffic* traffic);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    LinkTraffic* previous_;
  };

 private:
  // Each link's bytes per window are kept in at most kWindows windows of one width for the whole run; a
  // transfer past the last window doubles the width (pairs of windows merge), so memory stays bounded and
  // the windows are as fine as the run's length allows.
  static constexpr size_t kWindows = 512;
  // What rows() needs of a link is copied when it is first used: the engine, and its links, may be gone by
  // the time the ledger is written out.
  struct Usage {
    std::string name;
    std::string sharing;
    double bandwidth_Bps = 0.0;
    int64_t transfers = 0;
    uint64_t bytes = 0;
    uint64_t injected = 0;
    double wire = 0.0;
    std::vector<double> windows;  // wire bytes per window
  };
  struct PairHash {
    size_t operator()(const std::pair<const void*, const void*>& p) const {
      return std::hash<const void*>()(p.first) * 31 + std::hash<const void*>()(p.second);
    }
  };
  const std::vector<size_t>& route(const simgrid::s4u::Host* from, const simgrid::s4u::Host* to);
  void widen_until(double end_s);
  void spread(Usage& u, double wire, double start_s, double end_s);
  double window_utilisation(double wire_bytes, double bandwidth_Bps) const;

  std::vector<Usage> usage_;
  std::unordered_map<const simgrid::s4u::Link*, size_t> index_;
  std::unordered_map<std::pair<const void*, const void*>, std::vector<size_t>, PairHash> routes_;
  double window_s_ = 1e-6;
};

}  // namespace dtsim::sim

#include "sim/world/link_traffic.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace dtsim::sim {
namespace sg4 = simgrid::s4u;

namespace {

LinkTraffic* g_active = nullptr;

const char* sharing_name(sg4::Link::SharingPolicy p) {
  switch (p) {
    case sg4::Link::SharingPolicy::FATPIPE: return "fatpipe";
    case sg4::Link::SharingPolicy::SPLITDUPLEX: return "split-duplex";
    case sg4::Link::SharingPolicy::WIFI: return "wifi";
    case sg4::Link::SharingPolicy::NONLINEAR: return "nonlinear";
    case sg4::Link::SharingPolicy::SHARED: break;
  }
  return "shared";
}

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", v);
  return text;
}

}  // namespace

LinkTraffic* LinkTraffic::active() { return g_active; }

LinkTraffic::Scope::Scope(LinkTraffic* traffic) : previous_(g_active) { g_active = traffic; }
LinkTraffic::Scope::~Scope() { g_active = previous_; }

const std::vector<size_t>& LinkTraffic::route(const sg4::Host* from, const sg4::Host* to) {
  const auto key = std::make_pair(static_cast<const void*>(from), static_cast<const void*>(to));
  const auto it = routes_.find(key);
  if (it != routes_.end()) return it->second;
  std::vector<sg4::Link*> links;
  double latency = 0.0;
  from->route_to(to, links, &latency);
  std::vector<size_t> indices;
  for (const sg4::Link* link : links) {
    const auto [slot, added] = index_.emplace(link, usage_.size());
    if (added) {
      Usage u;
      u.name = link->get_name();
      u.sharing = sharing_name(link->get_sharing_policy());
      u.bandwidth_Bps = link->get_bandwidth();
      usage_.push_back(std::move(u));
    }
    indices.push_back(slot->second);
  }
  return routes_.emplace(key, std::move(indices)).first->second;
}

void LinkTraffic::widen_until(double end_s) {
  while (end_s >= window_s_ * static_cast<double>(kWindows)) {
    for (Usage& u : usage_) {
      for (size_t k = 0; 2 * k < u.windows.size(); ++k)
        u.windows[k] = u.windows[2 * k] + (2 * k + 1 < u.windows.size() ? u.windows[2 * k + 1] : 0.0);
      u.windows.resize((u.windows.size() + 1) / 2);
    }
    window_s_ *= 2.0;
  }
}

void LinkTraffic::spread(Usage& u, double wire, double start_s, double end_s) {
  if (u.windows.size() < kWindows) u.windows.resize(kWindows, 0.0);
  const auto window_of = [this](double t) {
    return std::min(kWindows - 1, static_cast<size_t>(std::max(0.0, std::floor(t / window_s_))));
  };
  const size_t first = window_of(start_s), last = window_of(end_s);
  if (end_s <= start_s || first == last) {
    u.windows[first] += wire;
    return;
  }
  const double rate = wire / (end_s - start_s);
  for (size_t k = first; k <= last; ++k) {
    const double lo = std::max(start_s, static_cast<double>(k) * window_s_);
    const double hi = std::min(end_s, static_cast<double>(k + 1) * window_s_);
    if (hi > lo) u.windows[k] += rate * (hi - lo);
  }
}

void LinkTraffic::record(const sg4::Host* from, const sg4::Host* to, uint64_t payload_bytes, double wire_bytes,
                         double start_s, double end_s) {
  if (from == nullptr || to == nullptr) return;
  end_s = std::max(end_s, start_s);
  widen_until(end_s);
  const std::vector<size_t>& links = route(from, to);
  for (size_t i = 0; i < links.size(); ++i) {
    Usage& u = usage_[links[i]];
    ++u.transfers;
    u.bytes += payload_bytes;
    if (i == 0) u.injected += payload_bytes;
    u.wire += wire_bytes;
    spread(u, wire_bytes, start_s, end_s);
  }
}

void LinkTraffic::record(const sg4::CommPtr& comm, const sg4::Host* from, const sg4::Host* to, uint64_t payload_bytes,
                         double wire_bytes) {
  if (comm == nullptr || comm->get_state() != sg4::Activity::State::FINISHED) return;
  record(from, to, payload_bytes, wire_bytes, comm->get_start_time(), comm->get_finish_time());
}

double LinkTraffic::window_utilisation(double wire_bytes, double bandwidth_Bps) const {
  // Max-min sharing never puts more than a link's bandwidth through it, but a transfer whose rate changed
  // while it lasted (others joined or left its links) is spread evenly here, which can fill a window past
  // its capacity by what it takes from its neighbours: such a window was full.
  return std::min(1.0, wire_bytes / (bandwidth_Bps * window_s_));
}

uint64_t LinkTraffic::injected_bytes() const {
  uint64_t sum = 0;
  for (const Usage& u : usage_) sum += u.injected;
  return sum;
}

std::vector<LinkTraffic::LinkRow> LinkTraffic::rows(double run_time_s) const {
  std::vector<LinkRow> out;
  for (const Usage& u : usage_) {
    if (u.transfers == 0) continue;
    LinkRow r;
    r.link = u.name;
    r.sharing = u.sharing;
    r.bandwidth_Bps = u.bandwidth_Bps;
    r.transfers = u.transfers;
    r.bytes = u.bytes;
    r.injected_bytes = u.injected;
    r.wire_bytes = u.wire;
    r.window_s = window_s_;
    r.utilisation_defined = u.sharing != "fatpipe" && r.bandwidth_Bps > 0.0;
    if (r.utilisation_defined) {
      if (run_time_s > 0.0) r.mean_utilisation = u.wire / (r.bandwidth_Bps * run_time_s);
      double busiest = 0.0;
      for (const double w : u.windows) busiest = std::max(busiest, w);
      r.peak_utilisation = window_utilisation(busiest, r.bandwidth_Bps);
    }
    out.push_back(std::move(r));
  }
  std::sort(out.begin(), out.end(), [](const LinkRow& a, const LinkRow& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.link < b.link;
  });
  return out;
}

std::optional<LinkTraffic::LinkRow> LinkTraffic::busiest(double run_time_s) const {
  std::optional<LinkRow> best;
  for (LinkRow& r : rows(run_time_s))
    if (r.utilisation_defined && (!best || r.mean_utilisation > best->mean_utilisation)) best = std::move(r);
  return best;
}

std::vector<LinkTraffic::Series> LinkTraffic::busiest_series(size_t top) const {
  std::vector<const Usage*> order;
  for (const Usage& u : usage_)
    if (u.transfers > 0 && u.sharing != "fatpipe" && u.bandwidth_Bps > 0.0) order.push_back(&u);
  std::sort(order.begin(), order.end(), [](const Usage* a, const Usage* b) {
    return a->bytes != b->bytes ? a->bytes > b->bytes : a->name < b->name;
  });
  if (order.size() > top) order.resize(top);
  std::vector<Series> out;
  for (const Usage* u : order) {
    Series s{u->name, {}};
    for (const double w : u->windows) s.utilisation.push_back(window_utilisation(w, u->bandwidth_Bps));
    while (!s.utilisation.empty() && s.utilisation.back() == 0.0) s.utilisation.pop_back();
    out.push_back(std::move(s));
  }
  return out;
}

std::string LinkTraffic::csv(double run_time_s) const {
  std::string text =
      "link,sharing,bandwidth_Bps,transfers,bytes,injected_bytes,wire_bytes,mean_utilisation,peak_utilisation,"
      "peak_window_s\n";
  for (const LinkRow& r : rows(run_time_s)) {
    text += r.link + "," + r.sharing + "," + number(r.bandwidth_Bps) + "," + std::to_string(r.transfers) + "," +
            std::to_string(r.bytes) + "," + std::to_string(r.injected_bytes) + "," + number(r.wire_bytes) + ",";
    // A fatpipe link's flows each get its full bandwidth: a utilisation of it would mean nothing.
    text += r.utilisation_defined ? number(r.mean_utilisation) + "," + number(r.peak_utilisation) : std::string(",");
    text += "," + number(window_s_) + "\n";
  }
  return text;
}

}  // namespace dtsim::sim

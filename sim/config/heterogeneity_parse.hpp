// The small languages of the [stragglers], [background] and [faults] keys. Each parser checks syntax,
// ranges and worker indices against `workers`, and throws ValueError (reason, hint) naming the offending item;
// make_heterogeneity_config turns that into an InputError at the key.
#pragma once

#include <string>
#include <vector>

#include "sim/config/heterogeneity_config.hpp"

namespace dtsim::sim {

// stragglers.slow_workers: "3, 8-11, 5:0.25" — ranks and ranges, each optionally ":factor"; items without a
// factor get `default_factor`. Ascending, no rank twice.
std::vector<SlowWorker> parse_slow_workers(const std::string& text, double default_factor, int workers);

// background.link_profile: "worker3: 0s 100%, 0.5s 50%, 1.5s 100%; all: 0s 80% every 2s" — items separated by
// ';', each "<targets>: <time> <level>, … [every <period>]". Targets: 'all', or ranks and ranges ("worker 3",
// "0-3", "2, 5"). Levels: "50%" or 0.5, in (0, 1]. A worker's link may appear in one item only.
std::vector<LinkProfile> parse_link_profiles(const std::string& text, int workers);

// background.flows: "worker0 -> worker3 from 1s to 2s at 5GB/s; 2 -> 1 for 500ms" — 'from' (default 0s),
// then 'to' or 'for' (default: forever), then 'at' a rate cap (default: none).
std::vector<BackgroundFlow> parse_background_flows(const std::string& text, int workers);

// faults.events: "worker 3 down at 10s up at 20s; link 5 down at 1s for 2s; node 1 down at 30s" — 'up at' or
// 'for' is optional (never back). Two events on the same target must not overlap. Node indices are checked
// against `workers` only (the platform checks them against its nodes).
std::vector<FaultEvent> parse_fault_events(const std::string& text, int workers);

}  // namespace dtsim::sim

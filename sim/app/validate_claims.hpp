// The claims `dtsim validate` checks: each is one statement of the seed article (shared/seed; validation notes
// §5), the runs that measure it (a shipped scenario plus --set overrides, repeated over seeds) and a check
// that turns the measured means and spreads into PASS or FAIL with the numbers and the margin.
//
// Every check compares an effect against a threshold that comes from the claim's wording (for example
// "recovers most of it" = at least half of the gap), with the seeds' noise taken off: an effect passes only
// when mean − 2·se (or |mean| + 2·se for an upper bound) is on the right side of the threshold, where se is
// the standard error of the mean over seeds and accuracy differences are paired seed by seed. The
// thresholds were written before the runs; docs/validation.md lists them and the measured values.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace dtsim::sim {

// One configuration of a claim, run once per seed.
struct ClaimRun {
  ClaimRun(std::string l, std::string file, std::vector<std::string> overrides = {},
           std::vector<std::string> quick_overrides = {})
      : label(std::move(l)), scenario(std::move(file)), sets(std::move(overrides)), quick(std::move(quick_overrides)) {}

  std::string label;                // e.g. "dense", "topk-no-ef"
  std::string scenario;             // a file under scenarios/
  std::vector<std::string> sets;    // key=value overrides
  std::vector<std::string> quick;   // this configuration's own overrides under --quick, after the claim's
};

// A metric of one configuration over its seeds.
struct Spread {
  double mean = 0.0;
  double sd = 0.0;  // sample standard deviation (0 with one seed)
  int runs = 0;
};

// What the runs of one configuration measured, each over the seeds.
struct Measured {
  Spread accuracy;   // final test accuracy, in points (0–100)
  Spread bytes;      // bytes sent over the network
  Spread staleness;  // async-ps: mean staleness of applied gradients (0 elsewhere)
  Spread time_s;     // simulated time
  std::vector<double> accuracy_by_seed;  // seed 1, 2, ...: configurations run the same seeds, so they pair
  int not_completed = 0;  // runs whose status was not completed (diverged, failed)
};

// The accuracy difference a − b seed by seed, over the seeds: runs with the same seed share their data order,
// initial weights and partition, so the paired spread is the noise of the difference itself.
Spread paired_accuracy_difference(const Measured& a, const Measured& b);

struct ClaimVerdict {
  bool pass = false;
  std::string numbers;  // what was measured, e.g. "dense 84.1±0.3, no EF 79.9±0.5, EF 83.7±0.2"
  std::string margin;   // the test and how far it passed or failed, e.g. "EF recovers 90 % ≥ 50 % (margin 40 points)"
};

struct Claim {
  std::string name;       // e.g. "topk-error-feedback"
  std::string statement;  // the article's claim, one line
  std::vector<ClaimRun> runs;
  std::vector<std::string> quick_sets;  // added to every run under --quick (a smaller version of the same claim)
  // Non-empty when dtsim does not reproduce the claim, with the reason (docs/validation.md says more). Its
  // FAIL is printed as such but is expected, so it does not fail `dtsim validate`; its PASS would mean the
  // documentation is out of date.
  std::string known_disagreement;
  // Seeds per configuration at full scale when --seeds is not given (--quick: 3). More than 3 where the
  // full-scale effect sits so close to its threshold that 3 seeds cannot tell them apart (docs/validation.md).
  int full_seeds = 3;
  std::function<ClaimVerdict(const std::map<std::string, Measured>&)> check;
};

// Every claim, in the order `dtsim validate` runs and prints them.
const std::vector<Claim>& claim_registry();

// mean ± sd over `values` (sd 0 for fewer than two).
Spread spread_of(const std::vector<double>& values);

}  // namespace dtsim::sim

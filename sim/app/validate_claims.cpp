#include "sim/app/validate_claims.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace dtsim::sim {
namespace {

// Fashion-MNIST cut to a fifth (12,000 training and 2,000 test images): the quick variants' data.
const std::vector<std::string> kQuickData = {"data.train_samples=12000", "data.test_samples=2000"};

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::string fmt(const char* format, double a) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, a);
  return buf;
}

// "84.12±0.31" (accuracy in points).
std::string points(const Spread& s) { return fmt("%.2f", s.mean) + "±" + fmt("%.2f", s.sd); }

// The spread of a difference of two independent means: sd = √(sd_a² + sd_b²).
Spread difference(const Spread& a, const Spread& b) {
  return {a.mean - b.mean, std::sqrt(a.sd * a.sd + b.sd * b.sd), std::min(a.runs, b.runs)};
}

Spread paired(const std::map<std::string, Measured>& m, const char* a, const char* b) {
  return paired_accuracy_difference(m.at(a), m.at(b));
}

// The standard error of a mean over `runs` seeds: sd/√runs.
double se(const Spread& s) { return s.runs > 1 ? s.sd / std::sqrt(static_cast<double>(s.runs)) : 0.0; }
double low(const Spread& s) { return s.mean - 2 * se(s); }
double high(const Spread& s) { return std::abs(s.mean) + 2 * se(s); }
// An effect that must exceed `threshold`: the lower end of its mean, mean − 2·se, is compared.
bool above(const Spread& effect, double threshold) { return low(effect) > threshold; }
// An effect that must stay below `threshold` in magnitude: |mean| + 2·se is compared.
bool within(const Spread& effect, double threshold) { return high(effect) <= threshold; }

std::string not_completed(const std::map<std::string, Measured>& m) {
  std::string out;
  for (const auto& [label, v] : m)
    if (v.not_completed > 0)
      out += (out.empty() ? "; " : ", ") + label + ": " + std::to_string(v.not_completed) + " run(s) not completed";
  return out;
}

// ---- the claims ------------------------------------------------------------------------------------------

// "Sync data parallel with a tuned learning rate matches single-machine accuracy."
Claim sync_matches_single() {
  Claim c;
  c.name = "sync-matches-single";
  c.statement = "synchronous data parallelism matches single-machine accuracy at the same global batch";
  c.runs = {{"single", "quickstart.ini", {"cluster.workers=1", "training.batch_per_worker=256"}},
            {"sync-8", "quickstart.ini", {}}};
  c.quick_sets = with(kQuickData, {"training.epochs=2"});
  c.check = [](const std::map<std::string, Measured>& m) {
    const Spread gap = paired(m, "single", "sync-8");
    return ClaimVerdict{within(gap, 1.0),
                        "single " + points(m.at("single").accuracy) + ", 8 workers " + points(m.at("sync-8").accuracy),
                        "|gap| + 2se = " + fmt("%.2f", high(gap)) + " ≤ 1 point"};
  };
  return c;
}

// "Async PS with slow nodes loses accuracy, and more of it as latency grows"; "a faster network reduces
// staleness and its accuracy loss". The first half is checked as stated. The second is not what dtsim shows:
// with every worker keeping one gradient in flight, the updates applied between a worker's pull and its
// push number N − 1 on average whatever the network (a counting argument), so the mean staleness in updates
// is the same on InfiniBand and a WAN, and the network changes how long the updates take. The check asserts
// that (documented in docs/validation.md as a disagreement with the article).
Claim async_latency() {
  Claim c;
  c.name = "async-staleness-by-network";
  c.statement = "asynchronous training with slow nodes loses accuracy against sync; its staleness (in updates) "
                "does not depend on the network, only its time does";
  const std::vector<std::string> async = {"training.strategy=async-ps"};
  c.runs = {{"sync", "sync_vs_async.ini", {}},
            {"async-ib", "sync_vs_async.ini", async},
            {"async-wan", "sync_vs_async.ini", with(async, {"fabric.profile=wan-10g"})}};
  // Quick: one epoch of the full data (a fifth of it gives sync only a dozen steps of 1024 samples).
  c.quick_sets = {"training.epochs=1"};
  c.check = [](const std::map<std::string, Measured>& m) {
    const Spread loss = paired(m, "sync", "async-ib");
    const Spread more = difference(m.at("async-wan").staleness, m.at("async-ib").staleness);
    const double slower = m.at("async-wan").time_s.mean / std::max(1e-12, m.at("async-ib").time_s.mean);
    const bool pass = above(loss, 0.0) && within(more, 0.5) && slower > 5.0;
    return ClaimVerdict{pass,
                        "accuracy sync " + points(m.at("sync").accuracy) + ", async IB " +
                            points(m.at("async-ib").accuracy) + ", async WAN " + points(m.at("async-wan").accuracy) +
                            "; mean staleness IB " + fmt("%.2f", m.at("async-ib").staleness.mean) + ", WAN " +
                            fmt("%.2f", m.at("async-wan").staleness.mean) + "; WAN takes " + fmt("%.1f", slower) +
                            "× the time",
                        "sync − async − 2se = " + fmt("%.2f", low(loss)) +
                            " > 0; |staleness gap| + 2se = " + fmt("%.2f", high(more)) +
                            " ≤ 0.5; time ratio > 5"};
  };
  return c;
}

// "Top-k without error feedback loses accuracy; with error feedback it recovers most of it."
Claim topk_error_feedback() {
  Claim c;
  c.name = "topk-error-feedback";
  c.statement = "top-k (1 %) without error feedback loses accuracy; error feedback recovers most of it";
  c.runs = {{"dense", "topk_error_feedback.ini", {"compression.kind=none", "compression.error_feedback=false"}},
            {"topk-no-ef", "topk_error_feedback.ini", {"compression.error_feedback=false"}},
            {"topk-ef", "topk_error_feedback.ini", {}}};
  c.quick_sets = with(kQuickData, {"training.epochs=2"});
  c.check = [](const std::map<std::string, Measured>& m) {
    const Spread& dense = m.at("dense").accuracy;
    const Spread loss = paired(m, "dense", "topk-no-ef");
    const Spread recovered = paired(m, "topk-ef", "topk-no-ef");
    const double share = loss.mean > 0 ? recovered.mean / loss.mean : 0.0;
    // The loss must be real (≥ 1 point beyond noise), and error feedback must win back at least half of it.
    const bool pass = above(loss, 1.0) && low(recovered) > 0.5 * loss.mean;
    return ClaimVerdict{pass,
                        "dense " + points(dense) + ", no EF " + points(m.at("topk-no-ef").accuracy) + ", EF " +
                            points(m.at("topk-ef").accuracy),
                        "loss − 2se = " + fmt("%.2f", low(loss)) + " > 1 point; EF recovers " +
                            fmt("%.0f", 100 * share) + " % ≥ 50 %"};
  };
  return c;
}

// "Non-IID FedAvg loses 3–8 points."
Claim noniid_fedavg() {
  Claim c;
  c.name = "noniid-fedavg-loss";
  c.statement = "FedAvg loses accuracy on label-skewed clients (Dirichlet 0.1) against IID clients";
  const std::vector<std::string> small = {"model.arch=mlp", "fl.local_epochs=1"};
  c.runs = {{"iid", "noniid_benchmark.ini", small},
            {"dirichlet-0.1", "noniid_benchmark.ini",
             with(small, {"data.partition=dirichlet", "data.dirichlet_alpha=0.1"})}};
  c.quick_sets = with(kQuickData, {"fl.rounds=10"});  // the full variant: the scenario's 50 rounds
  c.check = [](const std::map<std::string, Measured>& m) {
    const Spread loss = paired(m, "iid", "dirichlet-0.1");
    return ClaimVerdict{above(loss, 3.0),
                        "IID " + points(m.at("iid").accuracy) + ", Dirichlet(0.1) " +
                            points(m.at("dirichlet-0.1").accuracy),
                        "loss − 2se = " + fmt("%.2f", low(loss)) + " > 3 points"};
  };
  return c;
}

// "Local SGD with 2–5 local steps cuts communication with little loss."
Claim local_sgd() {
  Claim c;
  c.name = "local-sgd-communication";
  c.statement = "local SGD with H = 4 sends a quarter of the bytes and stays within 1 point of synchronous SGD";
  c.runs = {{"sync", "quickstart.ini", {}},
            {"local-4", "quickstart.ini", {"training.strategy=local", "local.local_steps=4"}}};
  c.quick_sets = kQuickData;  // the quickstart's 5 epochs: after 2, H = 4 has not caught up yet
  c.check = [](const std::map<std::string, Measured>& m) {
    const double ratio = m.at("sync").bytes.mean / std::max(1.0, m.at("local-4").bytes.mean);
    const Spread gap = paired(m, "sync", "local-4");
    const bool pass = ratio >= 3.5 && gap.mean + 2 * se(gap) <= 1.0;
    return ClaimVerdict{pass,
                        "sync " + points(m.at("sync").accuracy) + ", H = 4 " + points(m.at("local-4").accuracy) +
                            ", bytes ÷ " + fmt("%.2f", ratio),
                        "bytes ratio " + fmt("%.2f", ratio) + " ≥ 3.5; loss + 2se = " +
                            fmt("%.2f", gap.mean + 2 * se(gap)) + " ≤ 1 point"};
  };
  return c;
}

// "BF16 / FP16 mixed precision does not hurt accuracy."
Claim mixed_precision() {
  Claim c;
  c.name = "mixed-precision";
  c.statement = "BF16, and FP16 with dynamic loss scaling, train within 1 point of FP32";
  const auto all = [](const char* format) {
    return std::vector<std::string>{std::string("precision.weights=") + format,
                                    std::string("precision.activations=") + format,
                                    std::string("precision.gradients=") + format};
  };
  // The products' timing: bf16 tensor cores for bf16; fp16 keeps compute.math = fp32 (dtsim times no fp16
  // tensor-core mode), which changes the simulated time only, not the numbers.
  c.runs = {{"fp32", "quickstart.ini", {}},
            {"bf16", "quickstart.ini", with(all("bf16"), {"compute.math=bf16"})},
            {"fp16", "quickstart.ini", with(all("fp16"), {"precision.loss_scaling=dynamic"})}};
  // The quickstart's 5 epochs on the quick data: with 2 epochs (the first quick variant) the worst loss + 2se
  // read 1.02, the seeds' noise in still-moving runs rather than a precision effect (docs/validation.md).
  c.quick_sets = kQuickData;
  c.check = [](const std::map<std::string, Measured>& m) {
    const Spread bf16 = paired(m, "fp32", "bf16");
    const Spread fp16 = paired(m, "fp32", "fp16");
    const double worst = std::max(bf16.mean + 2 * se(bf16), fp16.mean + 2 * se(fp16));
    return ClaimVerdict{worst <= 1.0,
                        "fp32 " + points(m.at("fp32").accuracy) + ", bf16 " + points(m.at("bf16").accuracy) +
                            ", fp16 " + points(m.at("fp16").accuracy),
                        "worst loss + 2se = " + fmt("%.2f", worst) + " ≤ 1 point"};
  };
  return c;
}

}  // namespace

Spread paired_accuracy_difference(const Measured& a, const Measured& b) {
  std::vector<double> d;
  for (size_t i = 0; i < std::min(a.accuracy_by_seed.size(), b.accuracy_by_seed.size()); ++i)
    d.push_back(a.accuracy_by_seed[i] - b.accuracy_by_seed[i]);
  return spread_of(d);
}

Spread spread_of(const std::vector<double>& values) {
  Spread s;
  s.runs = static_cast<int>(values.size());
  if (values.empty()) return s;
  s.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  if (values.size() < 2) return s;
  double sq = 0;
  for (const double v : values) sq += (v - s.mean) * (v - s.mean);
  s.sd = std::sqrt(sq / static_cast<double>(values.size() - 1));
  return s;
}

const std::vector<Claim>& claim_registry() {
  static const std::vector<Claim> claims = [] {
    std::vector<Claim> all = {sync_matches_single(), async_latency(),  topk_error_feedback(),
                              noniid_fedavg(),       local_sgd(),      mixed_precision()};
    // A claim whose runs did not all complete says so in its numbers (a diverged run's accuracy still counts).
    for (Claim& c : all) {
      auto check = c.check;
      c.check = [check](const std::map<std::string, Measured>& m) {
        ClaimVerdict v = check(m);
        v.numbers += not_completed(m);
        return v;
      };
    }
    return all;
  }();
  return claims;
}

}  // namespace dtsim::sim

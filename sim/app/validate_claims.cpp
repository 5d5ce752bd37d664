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

// "Async PS with slow nodes loses accuracy": against synchronous training of the same heterogeneous cluster
// (a quarter of the GPUs at a third of the speed), for the same epochs.
Claim async_loses_accuracy() {
  Claim c;
  c.name = "async-slow-nodes-lose-accuracy";
  c.statement = "asynchronous training on a cluster with slow nodes loses accuracy against synchronous training";
  c.runs = {{"sync", "sync_vs_async.ini"}, {"async", "sync_vs_async.ini", {"training.strategy=async-ps"}}};
  // Quick: one epoch of the full data (a fifth of it gives sync only a dozen steps of 1024 samples).
  c.quick_sets = {"training.epochs=1"};
  c.check = [](const std::map<std::string, Measured>& m) {
    const Spread loss = paired(m, "sync", "async");
    return ClaimVerdict{above(loss, 0.0),
                        "sync " + points(m.at("sync").accuracy) + ", async " + points(m.at("async").accuracy) +
                            " (mean staleness " + fmt("%.2f", m.at("async").staleness.mean) + ")",
                        "loss − 2se = " + fmt("%.2f", low(loss)) + " > 0"};
  };
  return c;
}

// "Async PS loses more accuracy as latency grows"; "a faster network reduces staleness and its accuracy loss".
Claim network_staleness() {
  Claim c;
  c.name = "faster-network-less-staleness";
  c.statement = "a faster network reduces asynchronous staleness and its accuracy loss (InfiniBand against WAN)";
  const std::vector<std::string> async = {"training.strategy=async-ps"};
  c.runs = {{"async-ib", "sync_vs_async.ini", async},
            {"async-wan", "sync_vs_async.ini", with(async, {"fabric.profile=wan-10g"})}};
  c.quick_sets = {"training.epochs=1"};
  c.known_disagreement =
      "staleness counted in updates averages N - 1 on any network (each worker keeps one gradient in flight, "
      "so N - 1 others are applied between its pull and its push); the network changes how long updates take, "
      "not their order";
  c.check = [](const std::map<std::string, Measured>& m) {
    const Spread more = difference(m.at("async-wan").staleness, m.at("async-ib").staleness);
    const Spread loss = paired(m, "async-ib", "async-wan");
    const double slower = m.at("async-wan").time_s.mean / std::max(1e-12, m.at("async-ib").time_s.mean);
    return ClaimVerdict{above(more, 0.0) && above(loss, 0.0),
                        "mean staleness IB " + fmt("%.2f", m.at("async-ib").staleness.mean) + ", WAN " +
                            fmt("%.2f", m.at("async-wan").staleness.mean) + "; accuracy IB " +
                            points(m.at("async-ib").accuracy) + ", WAN " + points(m.at("async-wan").accuracy) +
                            "; WAN takes " + fmt("%.1f", slower) + "x the simulated time",
                        "WAN − IB staleness − 2se = " + fmt("%.2f", low(more)) + " > 0 and IB − WAN accuracy − 2se = " +
                            fmt("%.2f", low(loss)) + " > 0"};
  };
  return c;
}

// "Global batch growing from 256 to 8192 loses accuracy without LR scaling and warmup; linear or √k scaling
// with warmup recovers most of it."
Claim large_batch() {
  Claim c;
  c.name = "large-batch-scaling";
  c.statement = "a 32x larger batch loses accuracy at the small-batch rate; sqrt or linear scaling with warmup "
                "recovers most of it";
  // Quick: the same 32x on a fifth of the data, 64 against 2048 (a batch of 8192 would leave one step an epoch).
  const std::vector<std::string> warmup = {"training.warmup_epochs=2", "training.warmup_start_lr=base",
                                           "training.base_batch=256"};
  const std::vector<std::string> quick_large = {"training.batch_per_worker=256", "training.base_batch=64"};
  c.runs = {{"batch-256", "large_batch.ini", {"training.batch_per_worker=32"}, {"training.batch_per_worker=8"}},
            {"8192-unscaled", "large_batch.ini", {}, {"training.batch_per_worker=256"}},
            {"8192-sqrt", "large_batch.ini", with(warmup, {"training.lr_scaling=sqrt"}), quick_large},
            {"8192-linear", "large_batch.ini", with(warmup, {"training.lr_scaling=linear"}), quick_large}};
  c.quick_sets = kQuickData;
  c.known_disagreement =
      "without normalisation layers this MLP with momentum 0.9 diverges at the linearly scaled rate "
      "(32 x 0.05 = 1.6), and the square-root rate recovers only part of the gap or collapses on some seeds; "
      "the published recoveries are for ResNets with batch normalisation over 90 epochs (docs/validation.md)";
  c.check = [](const std::map<std::string, Measured>& m) {
    const Spread loss = paired(m, "batch-256", "8192-unscaled");
    const Spread sqrt_back = paired(m, "8192-sqrt", "8192-unscaled");
    const Spread linear_back = paired(m, "8192-linear", "8192-unscaled");
    const Spread& best = sqrt_back.mean >= linear_back.mean ? sqrt_back : linear_back;
    const double share = loss.mean > 0 ? best.mean / loss.mean : 0.0;
    const bool pass = above(loss, 1.0) && low(best) > 0.5 * loss.mean;
    return ClaimVerdict{pass,
                        "256 " + points(m.at("batch-256").accuracy) + ", 8192 unscaled " +
                            points(m.at("8192-unscaled").accuracy) + ", sqrt " + points(m.at("8192-sqrt").accuracy) +
                            ", linear " + points(m.at("8192-linear").accuracy),
                        "loss − 2se = " + fmt("%.2f", low(loss)) + " > 1 point; the better scaling recovers " +
                            fmt("%.0f", 100 * share) + " % ≥ 50 %"};
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
  // With 3 seeds the full loss (4.3 points) cannot be told from 3 (lower end 2.86 with the portable build, 2.80
  // with an earlier native one): the seeds' spread, not the effect, is what fails.
  c.full_seeds = 5;
  c.check = [](const std::map<std::string, Measured>& m) {
    const Spread loss = paired(m, "iid", "dirichlet-0.1");
    return ClaimVerdict{above(loss, 3.0),
                        "IID " + points(m.at("iid").accuracy) + ", Dirichlet(0.1) " +
                            points(m.at("dirichlet-0.1").accuracy),
                        "loss − 2se = " + fmt("%.2f", low(loss)) + " > 3 points"};
  };
  return c;
}

// "FedProx, SCAFFOLD and FedNova recover 1–4 points" of what Non-IID costs FedAvg.
Claim noniid_remedies() {
  Claim c;
  c.name = "noniid-remedies";
  c.statement = "on label-skewed clients (Dirichlet 0.1), FedProx, SCAFFOLD or FedNova recovers at least 1 point "
                "over FedAvg";
  const std::vector<std::string> skewed = {"model.arch=mlp", "fl.local_epochs=1", "data.partition=dirichlet",
                                           "data.dirichlet_alpha=0.1"};
  c.runs = {{"fedavg", "noniid_benchmark.ini", skewed},
            {"fedprox", "noniid_benchmark.ini", with(skewed, {"fl.algorithm=fedprox", "fl.prox_mu=0.01"})},
            {"scaffold", "noniid_benchmark.ini", with(skewed, {"fl.algorithm=scaffold"})},
            {"fednova", "noniid_benchmark.ini", with(skewed, {"fl.algorithm=fednova"})}};
  c.quick_sets = with(kQuickData, {"fl.rounds=10"});
  c.known_disagreement =
      "FedProx gains well under a point here and SCAFFOLD and FedNova lose, as NIID-Bench (Li et al. 2022) "
      "also finds no algorithm that beats FedAvg in every non-IID setting";
  c.check = [](const std::map<std::string, Measured>& m) {
    std::string best = "fedprox";
    for (const char* name : {"scaffold", "fednova"})
      if (paired(m, name, "fedavg").mean > paired(m, best.c_str(), "fedavg").mean) best = name;
    const Spread gain = paired(m, best.c_str(), "fedavg");
    return ClaimVerdict{above(gain, 1.0),
                        "FedAvg " + points(m.at("fedavg").accuracy) + ", FedProx " + points(m.at("fedprox").accuracy) +
                            ", SCAFFOLD " + points(m.at("scaffold").accuracy) + ", FedNova " +
                            points(m.at("fednova").accuracy),
                        "best (" + best + ") − FedAvg − 2se = " + fmt("%.2f", low(gain)) + " > 1 point"};
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
  // With 3 seeds an earlier native build's full loss (0.6 points) could not be told from 1 (upper end 1.02); the
  // portable build's 3 seeds pass (0.40 points, upper end 0.58), and 5 keep the test from resting on 3.
  c.full_seeds = 5;
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
    std::vector<Claim> all = {sync_matches_single(), async_loses_accuracy(), network_staleness(),
                              large_batch(),         topk_error_feedback(),  noniid_fedavg(),
                              noniid_remedies(),     local_sgd(),            mixed_precision()};
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

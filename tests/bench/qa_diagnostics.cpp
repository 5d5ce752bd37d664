// Small span-extraction problems that separate the skills the QA task needs (docs/qa.md, "What was measured"): the
// span transformer trained on fresh random batches with Adam, printing the exact match of every 100 steps.
//
//   dtsim_qa_diagnostics TASK STEPS LR BLOCKS [POSITIONS]
//
// TASK:
//   match        Q x SEP, then 21 random tokens holding x once: the answer is x's position (content matching).
//   neighbour    the same, the answer is the position after x (matching, then a neighbour).
//   facts        Q e a SEP, then five facts "e a v": the answer is the v of the fact matching both e and a, with a
//                fact sharing e, one sharing a and one sharing neither among the distractors.
//   facts-entity five facts with distinct entities and random attributes: the fact is chosen by its entity alone.
// POSITIONS: "learned" (the default), "rotary", or a number > 0: a learned table whose initialisation is overwritten
// with sinusoids of that amplitude.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "gpu/cpu_ops.hpp"
#include "models/random.hpp"
#include "models/transformer/span_transformer.hpp"

using dtsim::models::Rng;

namespace {

struct Batch {
  int seq = 0;
  std::vector<int32_t> tokens, lengths, starts, ends;
};

// Q x SEP, then distinct-from-x tokens with x at one place; the answer at x (+ offset).
void matching(Rng& rng, Batch& b, int batch, int offset) {
  const int S = b.seq;
  for (int i = 0; i < batch; ++i) {
    int32_t* t = &b.tokens[i * S];
    const int x = 4 + static_cast<int>(rng.below(60));
    t[0] = 1, t[1] = x, t[2] = 2;
    for (int p = 3; p < S; ++p) {
      int other;
      do other = 4 + static_cast<int>(rng.below(60));
      while (other == x);
      t[p] = other;
    }
    const int at = 3 + static_cast<int>(rng.below(S - 3 - offset));
    t[at] = x;
    b.lengths[i] = S;
    b.starts[i] = b.ends[i] = at + offset;
  }
}

// Q e a SEP, then five facts "e a v" in random order; the answer is the matching fact's v.
void facts(Rng& rng, Batch& b, int batch, bool entity_only) {
  const int S = b.seq;
  for (int i = 0; i < batch; ++i) {
    int32_t* t = &b.tokens[i * S];
    const int e = 10 + static_cast<int>(rng.below(16)), a = 30 + static_cast<int>(rng.below(8));
    int e2, a2;
    do e2 = 10 + static_cast<int>(rng.below(16));
    while (e2 == e);
    do a2 = 30 + static_cast<int>(rng.below(8));
    while (a2 == a);
    int fe[5] = {e, e, e2, e2, 10 + static_cast<int>(rng.below(16))};
    int fa[5] = {a, a2, a, a2, 30 + static_cast<int>(rng.below(8))};
    if (fe[4] == e && fa[4] == a) fa[4] = a2;
    if (entity_only) {
      for (int k = 0; k < 5; ++k) {  // five distinct entities, e first; any attributes
        fe[k] = 10 + (e - 10 + 3 * k) % 16;
        fa[k] = 30 + static_cast<int>(rng.below(8));
      }
    }
    int order[5] = {0, 1, 2, 3, 4};
    for (int k = 4; k > 0; --k) std::swap(order[k], order[rng.below(k + 1)]);
    t[0] = 1, t[1] = e, t[2] = a, t[3] = 2;
    for (int k = 0; k < 5; ++k) {
      const int p = 4 + 3 * k, f = order[k];
      t[p] = fe[f], t[p + 1] = fa[f], t[p + 2] = 50 + static_cast<int>(rng.below(64));
      if (f == 0) b.starts[i] = b.ends[i] = p + 2;
    }
    b.lengths[i] = S;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s match|neighbour|facts|facts-entity STEPS LR BLOCKS [learned|rotary|AMPLITUDE]\n",
                 argv[0]);
    return 2;
  }
  const std::string task = argv[1];
  const int steps = std::atoi(argv[2]);
  const float lr = static_cast<float>(std::atof(argv[3]));
  const std::string positions = argc > 5 ? argv[5] : "learned";
  const bool rotary = positions == "rotary";
  const double amplitude = rotary || positions == "learned" ? 0.0 : std::atof(positions.c_str());
  const bool fact_task = task == "facts" || task == "facts-entity";
  if (!fact_task && task != "match" && task != "neighbour") {
    std::fprintf(stderr, "unknown task '%s'\n", task.c_str());
    return 2;
  }
  dtsim::models::TransformerConfig c;
  c.vocab = 128, c.seq_len = fact_task ? 19 : 24, c.dim = 64, c.heads = 4, c.layers = std::atoi(argv[4]), c.ffn = 128;
  if (rotary) c.positions = dtsim::models::PositionEncoding::Rotary;
  const dtsim::models::SpanTransformer<float> model(c, {});
  std::vector<float> w(model.base_param_count()), g(w.size()), m(w.size(), 0.0f), v(w.size(), 0.0f);
  model.init_base(w.data(), 1);
  if (amplitude > 0) {
    float* wpe = w.data() + static_cast<size_t>(c.vocab) * c.dim;  // the position table follows the token table
    for (int p = 0; p < c.seq_len; ++p) {
      for (int i = 0; i < c.dim / 2; ++i) {
        const double f = std::pow(10000.0, -2.0 * i / c.dim);
        wpe[p * c.dim + 2 * i] = static_cast<float>(amplitude * std::sin(p * f));
        wpe[p * c.dim + 2 * i + 1] = static_cast<float>(amplitude * std::cos(p * f));
      }
    }
  }
  dtsim::gpu::CpuOps<float> ops;
  const int B = 32;
  auto ws = model.make_workspace(ops, B);
  Batch b;
  b.seq = c.seq_len;
  b.tokens.resize(static_cast<size_t>(B) * c.seq_len);
  b.lengths.resize(B), b.starts.resize(B), b.ends.resize(B);
  Rng rng(5);
  int exact = 0;
  for (int s = 1; s <= steps; ++s) {
    if (fact_task) facts(rng, b, B, task == "facts-entity");
    else matching(rng, b, B, task == "neighbour" ? 1 : 0);
    const dtsim::models::SpanBatch batch{B, b.tokens.data(), b.lengths.data(), b.starts.data(), b.ends.data()};
    exact += model.loss_and_gradient(ops, ws, w.data(), nullptr, batch, g.data()).exact;
    const float bc1 = 1 - std::pow(0.9f, static_cast<float>(s)), bc2 = 1 - std::pow(0.98f, static_cast<float>(s));
    ops.adam_update(w.data(), g.data(), m.data(), v.data(), w.size(), lr, 0.9f, 0.98f, 1e-8f, 0.0f, true, bc1, bc2);
    if (s % 100 == 0) {
      std::printf("step %d exact match %.3f\n", s, exact / (100.0 * B));
      exact = 0;
    }
  }
  return 0;
}

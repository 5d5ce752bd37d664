#include "models/qa/qa_task.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/portable_math.hpp"
#include "models/random.hpp"

namespace dtsim::models {
namespace {

constexpr int kQuestionTokens = 4;  // Q e a SEP
constexpr int kFactOverhead = 4;    // e a is ... ;

[[noreturn]] void reject(const std::string& field, const std::string& reason) {
  throw std::invalid_argument("QaTaskSpec." + field + ": " + reason);
}

// Index + 1 of the last positive weight: the longest value a domain can draw.
int max_value_length(const QaDomainSpec& d) {
  int longest = 0;
  for (size_t k = 0; k < d.value_length_weights.size(); ++k)
    if (d.value_length_weights[k] > 0) longest = static_cast<int>(k) + 1;
  return longest;
}

void validate_domain(const QaTaskSpec& s, const QaDomainSpec& d, const std::string& name) {
  if (d.min_facts < 2)
    reject(name + ".min_facts", "is " + std::to_string(d.min_facts) +
                                    "; a context needs the asked fact and at least one distractor, use >= 2");
  if (d.max_facts < d.min_facts)
    reject(name + ".max_facts", "is " + std::to_string(d.max_facts) + ", below min_facts " +
                                    std::to_string(d.min_facts) + "; raise max_facts or lower min_facts");
  // Pairs may not repeat, so a context cannot hold more facts than there are pairs.
  if (static_cast<int64_t>(d.max_facts) > static_cast<int64_t>(s.entities_per_domain) * s.attributes_per_domain)
    reject(name + ".max_facts", "is " + std::to_string(d.max_facts) + " but the domain has only " +
                                    std::to_string(s.entities_per_domain) + " x " +
                                    std::to_string(s.attributes_per_domain) +
                                    " distinct (entity, attribute) pairs; lower max_facts or raise the sizes");
  if (!(d.attribute_zipf >= 0) || !std::isfinite(d.attribute_zipf))
    reject(name + ".attribute_zipf", "must be finite and >= 0 (0 gives uniform attributes)");
  if (d.value_length_weights.empty())
    reject(name + ".value_length_weights", "is empty; give a weight for values of 1, 2, ... tokens, e.g. {1}");
  double total = 0;
  for (const double w : d.value_length_weights) {
    if (!(w >= 0) || !std::isfinite(w))
      reject(name + ".value_length_weights", "holds a weight that is negative or not finite; weights are >= 0");
    total += w;
  }
  if (!(total > 0)) reject(name + ".value_length_weights", "are all 0; give at least one length a positive weight");
  const int fact = kFactOverhead + max_value_length(d);
  // Two facts is the least a context can be, so a shorter seq_len is a problem of seq_len itself.
  const int least = kQuestionTokens + 2 * fact;
  if (s.seq_len < least)
    reject("seq_len", "is " + std::to_string(s.seq_len) + " but the question plus two " + name +
                          " facts of the longest value need " + std::to_string(least) +
                          " tokens; raise seq_len or shorten " + name + ".value_length_weights");
  const int64_t needed = kQuestionTokens + static_cast<int64_t>(d.max_facts) * fact;
  if (s.seq_len < needed)
    reject(name + ".max_facts", "is " + std::to_string(d.max_facts) + ": that many " + name +
                                    " facts of the longest value need seq_len >= " + std::to_string(needed) +
                                    " (have " + std::to_string(s.seq_len) + "); raise seq_len or lower " + name +
                                    ".max_facts");
}

// One draw of an index with probability ∝ weights[i], among the indices with allowed[i]; -1 when no allowed
// index has a positive weight.
int draw_weighted(Rng& rng, const std::vector<double>& weights, const std::vector<char>& allowed) {
  double total = 0;
  for (size_t i = 0; i < weights.size(); ++i)
    if (allowed[i]) total += weights[i];
  if (!(total > 0)) return -1;
  double u = rng.uniform() * total;
  int last = -1;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (!allowed[i] || !(weights[i] > 0)) continue;
    if (u < weights[i]) return static_cast<int>(i);
    u -= weights[i];
    last = static_cast<int>(i);
  }
  return last;  // u ran past the end by rounding
}

// Uniform among the indices with allowed[i]; -1 when there is none.
int draw_allowed(Rng& rng, const std::vector<char>& allowed) {
  std::vector<int> choices;
  for (size_t i = 0; i < allowed.size(); ++i)
    if (allowed[i]) choices.push_back(static_cast<int>(i));
  if (choices.empty()) return -1;
  return choices[rng.below(choices.size())];
}

struct Fact {
  int entity = 0;     // index within the domain
  int attribute = 0;  // index within the domain
  std::vector<int> value;
};

// The facts of one context, the asked one first (generation order, before the shuffle).
class ContextDraw {
 public:
  ContextDraw(const QaTaskSpec& s, const QaDomainSpec& d, Rng& rng)
      : entities_(s.entities_per_domain),
        attributes_(s.attributes_per_domain),
        rng_(rng),
        used_(static_cast<size_t>(entities_) * attributes_, 0),
        attribute_weights_(attributes_) {
    for (int a = 0; a < attributes_; ++a) attribute_weights_[a] = portable::pow(a + 1.0, -d.attribute_zipf);
  }

  void add(int e, int a) {
    used_[static_cast<size_t>(e) * attributes_ + a] = 1;
    facts_.push_back({e, a, {}});
  }
  bool used(int e, int a) const { return used_[static_cast<size_t>(e) * attributes_ + a] != 0; }

  int attribute_by_weight_for(int e) {
    std::vector<char> allowed(attributes_);
    for (int a = 0; a < attributes_; ++a) allowed[a] = !used(e, a);
    return draw_weighted(rng_, attribute_weights_, allowed);
  }
  int entity_without(int a) {
    std::vector<char> allowed(entities_);
    for (int e = 0; e < entities_; ++e) allowed[e] = !used(e, a);
    return draw_allowed(rng_, allowed);
  }
  // An entity with an attribute left, then one of its attributes by weight.
  void add_any() {
    std::vector<char> allowed(entities_);
    for (int e = 0; e < entities_; ++e)
      for (int a = 0; a < attributes_ && !allowed[e]; ++a) allowed[e] = !used(e, a);
    const int e = draw_allowed(rng_, allowed);
    add(e, attribute_by_weight_for(e));  // validation keeps max_facts <= entities · attributes
  }
  void add_same_entity(int e) {
    const int a = attribute_by_weight_for(e);
    if (a < 0) return add_any();
    add(e, a);
  }
  void add_same_attribute(int a) {
    const int e = entity_without(a);
    if (e < 0) return add_any();
    add(e, a);
  }

  std::vector<Fact>& facts() { return facts_; }

 private:
  int entities_, attributes_;
  Rng& rng_;
  std::vector<char> used_;
  std::vector<double> attribute_weights_;
  std::vector<Fact> facts_;
};

// Writes example `index` of `out` (its row of tokens is already PAD).
void generate_example(const QaTaskSpec& s, QaDomain domain, uint64_t seed, int index, QaDataset& out) {
  const QaDomainSpec& d = s.domain(domain);
  const QaDomainTokens tok = qa_domain_tokens(s, domain);
  Rng rng(seed, "qa-example", static_cast<uint64_t>(index));
  const int n = d.min_facts + static_cast<int>(rng.below(static_cast<uint64_t>(d.max_facts - d.min_facts + 1)));

  ContextDraw draw(s, d, rng);
  const int asked_entity = static_cast<int>(rng.below(static_cast<uint64_t>(s.entities_per_domain)));
  const int asked_attribute = draw.attribute_by_weight_for(asked_entity);
  draw.add(asked_entity, asked_attribute);
  if (n == 2) {
    if (rng.below(2) == 0)
      draw.add_same_entity(asked_entity);
    else
      draw.add_same_attribute(asked_attribute);
  } else {
    draw.add_same_entity(asked_entity);
    draw.add_same_attribute(asked_attribute);
    for (int k = 3; k < n; ++k) draw.add_any();
  }

  std::vector<Fact>& facts = draw.facts();
  const std::vector<char> all_lengths(d.value_length_weights.size(), 1);
  for (Fact& f : facts) {
    const int length = draw_weighted(rng, d.value_length_weights, all_lengths) + 1;
    for (int k = 0; k < length; ++k) f.value.push_back(static_cast<int>(rng.below(tok.values.count)));
  }
  // The asked fact is facts[0] until the shuffle; keep track of it through an index permutation.
  std::vector<int> order(facts.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = static_cast<int>(k);
  rng.shuffle(order);

  int32_t* row = out.tokens.data() + static_cast<size_t>(index) * s.seq_len;
  int pos = 0;
  row[pos++] = kQaQuestion;
  row[pos++] = tok.entities.first + asked_entity;
  row[pos++] = tok.attributes.first + asked_attribute;
  row[pos++] = kQaSep;
  for (const int k : order) {
    const Fact& f = facts[k];
    row[pos++] = tok.entities.first + f.entity;
    row[pos++] = tok.attributes.first + f.attribute;
    row[pos++] = kQaIs;
    if (k == 0) out.answer_start[index] = pos;
    for (const int v : f.value) row[pos++] = tok.values.first + v;
    if (k == 0) out.answer_end[index] = pos - 1;
    row[pos++] = kQaEnd;
  }
  out.lengths[index] = pos;  // validation guarantees pos <= seq_len
  out.domain[index] = domain;
}

void check_example(const QaDataset& data, int example) {
  if (example < 0 || example >= data.count)
    throw std::out_of_range("QA example " + std::to_string(example) + " outside [0, " +
                            std::to_string(data.count) + ")");
}

bool valid_span(const QaDataset& data, int example, int start, int end) {
  return start >= 0 && start <= end && end < data.lengths[example];
}

}  // namespace

const NameTable<QaDomain>& qa_domains() {
  static const NameTable<QaDomain> table{{QaDomain::Medical, "medical"}, {QaDomain::Finance, "finance"}};
  return table;
}

const char* to_string(QaDomain domain) { return qa_domains().name(domain); }

void validate_qa_task_spec(const QaTaskSpec& s) {
  if (s.seq_len < 1) reject("seq_len", "must be positive; the default is 48");
  if (s.entities_per_domain < 2)
    reject("entities_per_domain", "is " + std::to_string(s.entities_per_domain) +
                                      "; another entity must be able to share the asked attribute, use >= 2");
  if (s.attributes_per_domain < 2)
    reject("attributes_per_domain", "is " + std::to_string(s.attributes_per_domain) +
                                        "; the asked entity must be able to have another attribute, use >= 2");
  if (s.values_per_domain < 1)
    reject("values_per_domain", "is " + std::to_string(s.values_per_domain) + "; use >= 1");
  // The vocabulary must fit int32 token ids.
  const int64_t per_domain =
      static_cast<int64_t>(s.entities_per_domain) + s.attributes_per_domain + s.values_per_domain;
  if (kQaStructuralTokens + 2 * per_domain > std::numeric_limits<int32_t>::max())
    reject("values_per_domain", "with entities_per_domain and attributes_per_domain makes a vocabulary beyond 32-bit "
                                "token ids; lower the per-domain sizes");
  validate_domain(s, s.medical, "medical");
  validate_domain(s, s.finance, "finance");
}

QaDomainTokens qa_domain_tokens(const QaTaskSpec& s, QaDomain domain) {
  validate_qa_task_spec(s);
  const int32_t per_domain = s.entities_per_domain + s.attributes_per_domain + s.values_per_domain;
  const int32_t first = kQaStructuralTokens + (domain == QaDomain::Medical ? 0 : per_domain);
  QaDomainTokens t;
  t.entities = {first, s.entities_per_domain};
  t.attributes = {first + s.entities_per_domain, s.attributes_per_domain};
  t.values = {t.attributes.first + s.attributes_per_domain, s.values_per_domain};
  return t;
}

int qa_vocab_size(const QaTaskSpec& s) {
  validate_qa_task_spec(s);
  return kQaStructuralTokens + 2 * (s.entities_per_domain + s.attributes_per_domain + s.values_per_domain);
}

QaDataset make_qa_dataset(const QaTaskSpec& spec, double medical_fraction, int count, uint64_t seed) {
  validate_qa_task_spec(spec);
  if (!(medical_fraction >= 0 && medical_fraction <= 1))
    throw std::invalid_argument("medical_fraction must lie in [0, 1] (1: all medical, 0: all finance, 0.5: mixed)");
  if (count < 0) throw std::invalid_argument("count (examples) must be >= 0");
  QaDataset out;
  out.spec = spec;
  out.vocab_size = qa_vocab_size(spec);
  out.count = count;
  out.tokens.assign(static_cast<size_t>(count) * spec.seq_len, kQaPad);
  out.lengths.assign(count, 0);
  out.answer_start.assign(count, 0);
  out.answer_end.assign(count, 0);
  out.domain.assign(count, QaDomain::Medical);
  for (int i = 0; i < count; ++i) {
    // uniform() < 1 always and < 0 never, so the fractions 1 and 0 give one domain only.
    Rng pick(seed, "qa-domain", static_cast<uint64_t>(i));
    const QaDomain domain = pick.uniform() < medical_fraction ? QaDomain::Medical : QaDomain::Finance;
    generate_example(spec, domain, seed, i, out);
  }
  return out;
}

double qa_exact_match(const QaDataset& data, int example, int pred_start, int pred_end) {
  check_example(data, example);
  if (!valid_span(data, example, pred_start, pred_end)) return 0;
  const int32_t* row = data.example(example);
  const int gold_start = data.answer_start[example], gold_end = data.answer_end[example];
  if (pred_end - pred_start != gold_end - gold_start) return 0;
  return std::equal(row + pred_start, row + pred_end + 1, row + gold_start) ? 1 : 0;
}

double qa_token_f1(const QaDataset& data, int example, int pred_start, int pred_end) {
  check_example(data, example);
  if (!valid_span(data, example, pred_start, pred_end)) return 0;
  const int32_t* row = data.example(example);
  const int gold_start = data.answer_start[example], gold_end = data.answer_end[example];
  std::map<int32_t, int> gold_counts;
  for (int p = gold_start; p <= gold_end; ++p) ++gold_counts[row[p]];
  int common = 0;
  for (int p = pred_start; p <= pred_end; ++p) {
    auto it = gold_counts.find(row[p]);
    if (it != gold_counts.end() && it->second > 0) {
      --it->second;
      ++common;
    }
  }
  if (common == 0) return 0;
  const double precision = static_cast<double>(common) / (pred_end - pred_start + 1);
  const double recall = static_cast<double>(common) / (gold_end - gold_start + 1);
  return 2 * precision * recall / (precision + recall);
}

std::string qa_token_name(const QaTaskSpec& spec, int token) {
  const int vocab = qa_vocab_size(spec);
  if (token < 0 || token >= vocab)
    throw std::out_of_range("QA token " + std::to_string(token) + " outside the vocabulary [0, " +
                            std::to_string(vocab) + ")");
  static const char* const kStructural[kQaStructuralTokens] = {"PAD", "Q", "SEP", "is", ";"};
  if (token < kQaStructuralTokens) return kStructural[token];
  for (const QaDomain domain : {QaDomain::Medical, QaDomain::Finance}) {
    const QaDomainTokens t = qa_domain_tokens(spec, domain);
    const std::string letter = domain == QaDomain::Medical ? "m" : "f";
    if (t.entities.contains(token)) return letter + "E" + std::to_string(token - t.entities.first);
    if (t.attributes.contains(token)) return letter + "A" + std::to_string(token - t.attributes.first);
    if (t.values.contains(token)) return letter + "V" + std::to_string(token - t.values.first);
  }
  return "?";  // unreachable: the ranges cover [kQaStructuralTokens, vocab)
}

std::string qa_render(const QaDataset& data, int example) {
  check_example(data, example);
  const int32_t* row = data.example(example);
  std::string text = std::string(to_string(data.domain[example])) + ":";
  for (int p = 0; p < data.lengths[example]; ++p) {
    if (p == data.answer_start[example]) text += " [";
    text += " " + qa_token_name(data.spec, row[p]);
    if (p == data.answer_end[example]) text += " ]";
  }
  return text;
}

}  // namespace dtsim::models

// A seeded synthetic extractive question-answering task in two domains, "medical" and "finance", for
// fine-tuning one small transformer with LoRA at two sites whose data differ in vocabulary and in
// distribution; a "mixed" corpus of both pre-trains the shared base model.
//
// Every example is `seq_len` tokens: the question first, then the context, then PAD up to seq_len:
//
//   Q e* a* SEP   e a is v v ;   e a is v ;   ...   PAD PAD ...
//
// The context lists facts (entity, attribute, value), a value being 1 or more value tokens; the question asks
// the attribute a* of the entity e*, and exactly one fact of the context states it. The answer is the span of
// that fact's value tokens (inclusive start and end positions). The question comes first so that a causal
// decoder has read it by the time it reaches the context: each value token can then be scored as a start or
// an end knowing what was asked.
//
// Distractors make the task need both halves of the question: a context of n facts holds, besides the asked
// fact, one fact about e* with another attribute and one fact about another entity with attribute a* (with
// n = 2, one of the two, by a fair coin); the other n − 3 facts draw an entity uniformly (among those with an
// attribute left) and an attribute from the domain's attribute weights. No (entity, attribute) pair occurs
// twice in a context, so the answer is unique; the facts are shuffled, so its position is uniform among them.
//
// Token layout (kQaStructuralTokens shared tokens, then the medical and the finance ranges, disjoint):
//   0 PAD, 1 Q, 2 SEP, 3 "is", 4 ";"
//   medical: entities, attributes, values     finance: entities, attributes, values
// so vocab = 5 + 2·(entities + attributes + values), and one model reads both domains.
//
// Per domain (QaDomainSpec) the number of facts n is uniform in [min_facts, max_facts]; the asked attribute
// a*, and every attribute drawn by weight, has probability ∝ (a + 1)^−attribute_zipf (0: uniform); every
// value's length is drawn from value_length_weights and its tokens uniformly, with repeats, from the domain's
// values. Values are drawn per example, not fixed per (entity, attribute): the answer has to be read from the
// context, it cannot be memorised. The defaults make the domains differ in all three: medical contexts are
// shorter (2–5 facts) with uniform attributes and long values (drug names and doses, mean 2.3 tokens);
// finance contexts are longer (3–6 facts) with Zipf-skewed attributes (price and revenue are asked most) and
// short values (figures, mean 1.65 tokens).
//
// Each example i is generated from its own streams, Rng(seed, "qa-domain", i) for its domain and
// Rng(seed, "qa-example", i) for its content, so it is the same whatever `count` is, and a medical example of
// a mixed corpus equals example i of an all-medical corpus with the same seed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/name_table.hpp"

namespace dtsim::models {

enum class QaDomain { Medical, Finance };

// "medical" and "finance".
const NameTable<QaDomain>& qa_domains();
const char* to_string(QaDomain domain);

// The structural tokens, shared by both domains.
inline constexpr int32_t kQaPad = 0;
inline constexpr int32_t kQaQuestion = 1;  // "Q", the first token of every example
inline constexpr int32_t kQaSep = 2;       // ends the question
inline constexpr int32_t kQaIs = 3;        // "is", between a fact's attribute and its value
inline constexpr int32_t kQaEnd = 4;       // ";", ends a fact
inline constexpr int32_t kQaStructuralTokens = 5;

// How one domain's contexts are drawn. All weights are relative (they need not sum to 1).
struct QaDomainSpec {
  int min_facts = 2;  // facts per context, the asked one included, uniform in [min_facts, max_facts]; >= 2
  int max_facts = 5;
  double attribute_zipf = 0;  // attribute a in [0, attributes) has weight (a + 1)^−attribute_zipf; >= 0
  // Weight of a value of 1, 2, 3, ... tokens; the longest value is the last entry with a positive weight.
  std::vector<double> value_length_weights = {0.2, 0.3, 0.5};
};

struct QaTaskSpec {
  int seq_len = 48;  // tokens per example, padding included
  // The size of each domain's token ranges; the two domains have the same sizes but disjoint tokens.
  int entities_per_domain = 32;    // >= 2, so that another entity can share the asked attribute
  int attributes_per_domain = 12;  // >= 2, so that the asked entity can have another attribute
  int values_per_domain = 64;      // >= 1
  QaDomainSpec medical = {2, 5, 0.0, {0.2, 0.3, 0.5}};
  QaDomainSpec finance = {3, 6, 1.1, {0.5, 0.35, 0.15}};

  const QaDomainSpec& domain(QaDomain d) const { return d == QaDomain::Medical ? medical : finance; }
};

// Throws std::invalid_argument, naming the field ("QaTaskSpec.finance.max_facts: ...") and a fix, unless
// every size is positive and large enough (see QaTaskSpec), the weights are finite and >= 0 with a positive
// sum, 2 <= min_facts <= max_facts <= entities · attributes, and seq_len holds the question (4 tokens) plus
// max_facts facts of the longest value (4 + length tokens each) in both domains, so nothing is ever cut.
void validate_qa_task_spec(const QaTaskSpec& spec);

// A range of token ids [first, first + count).
struct QaTokenRange {
  int32_t first = 0;
  int32_t count = 0;
  bool contains(int32_t token) const { return token >= first && token < first + count; }
};

struct QaDomainTokens {
  QaTokenRange entities, attributes, values;
};

// The token ranges of one domain (validates the spec).
QaDomainTokens qa_domain_tokens(const QaTaskSpec& spec, QaDomain domain);
// kQaStructuralTokens + 2·(entities + attributes + values) (validates the spec).
int qa_vocab_size(const QaTaskSpec& spec);

struct QaDataset {
  QaTaskSpec spec;
  int vocab_size = 0;
  int count = 0;                       // examples
  std::vector<int32_t> tokens;         // count × spec.seq_len, row-major; kQaPad after each example's length
  std::vector<int32_t> lengths;        // valid (non-padding) tokens of each example, <= seq_len
  std::vector<int32_t> answer_start;   // position of the answer's first value token
  std::vector<int32_t> answer_end;     // position of its last value token (inclusive; >= answer_start)
  std::vector<QaDomain> domain;        // the domain each example was drawn from

  int seq_len() const { return spec.seq_len; }
  const int32_t* example(int i) const { return tokens.data() + static_cast<size_t>(i) * spec.seq_len; }
};

// `count` examples; each is medical with probability medical_fraction (1: all medical, 0: all finance, 0.5: a
// mixed pre-training corpus). Throws std::invalid_argument for an invalid spec, a fraction outside [0, 1] or
// a negative count.
QaDataset make_qa_dataset(const QaTaskSpec& spec, double medical_fraction, int count, uint64_t seed);

// SQuAD-style scores of a predicted span [pred_start, pred_end] (inclusive) of `example` against its gold
// span. Like SQuAD, which compares answer text, both compare token content, not positions: the same value
// tokens at another position score 1. Exact match: the two spans hold the same token sequence (1 or 0). Token
// F1: over the multisets of token ids in the two spans, with overlap c = Σ_t min(count_pred(t), count_gold(t)),
// precision P = c/|pred| and recall R = c/|gold|, F1 = 2PR/(P + R) (0 when c = 0). A span that is inverted
// (start > end) or leaves the example's valid tokens [0, length) scores 0 in both: it is no answer.
// std::out_of_range for an example index outside [0, count).
double qa_exact_match(const QaDataset& data, int example, int pred_start, int pred_end);
double qa_token_f1(const QaDataset& data, int example, int pred_start, int pred_end);

// A token's name for debugging: "PAD", "Q", "SEP", "is", ";", and for the domains' tokens a domain letter
// (m, f), a kind (E, A, V) and the index within the domain's range: "mE17", "fA3", "mV42". std::out_of_range
// outside [0, vocab).
std::string qa_token_name(const QaTaskSpec& spec, int token);
// One example as text: "medical: Q mE3 mA1 SEP mE9 mA1 is mV4 ; mE3 mA1 is [ mV20 mV5 ] ; ...", the answer in
// brackets and the padding left out.
std::string qa_render(const QaDataset& data, int example);

}  // namespace dtsim::models

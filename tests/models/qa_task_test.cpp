// The synthetic two-domain QA task: every example parsed back from its tokens (question, facts, the answer
// span), the distractors, padding, seeding, the domains' disjoint vocabularies and their distributions against
// the spec's closed forms, the domain mix, the SQuAD-style scores on hand-built spans, and spec validation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "models/qa/qa_task.hpp"

namespace dtsim::models {
namespace {

struct ParsedFact {
  int32_t entity = 0, attribute = 0;
  int value_start = 0, value_end = 0;  // inclusive positions
};

struct ParsedExample {
  int32_t entity = 0, attribute = 0;  // asked
  std::vector<ParsedFact> facts;
};

// Reads an example back from its tokens alone: "Q e a SEP" then "e a is v+ ;" until `length`, then PAD. Returns
// an empty string on success, else what is wrong.
std::string parse(const QaDataset& d, int i, ParsedExample& out) {
  const int32_t* row = d.example(i);
  const int length = d.lengths[i];
  if (length < 4 || length > d.seq_len()) return "length " + std::to_string(length);
  for (int p = length; p < d.seq_len(); ++p)
    if (row[p] != kQaPad) return "no PAD at " + std::to_string(p);
  const auto structural = [](int32_t t) { return t < kQaStructuralTokens; };
  if (row[0] != kQaQuestion || structural(row[1]) || structural(row[2]) || row[3] != kQaSep)
    return "bad question";
  out.entity = row[1];
  out.attribute = row[2];
  int p = 4;
  while (p < length) {
    if (p + 4 > length) return "truncated fact at " + std::to_string(p);
    ParsedFact f;
    f.entity = row[p];
    f.attribute = row[p + 1];
    if (structural(f.entity) || structural(f.attribute) || row[p + 2] != kQaIs)
      return "bad fact head at " + std::to_string(p);
    p += 3;
    f.value_start = p;
    while (p < length && !structural(row[p])) ++p;
    if (p == f.value_start || p == length || row[p] != kQaEnd) return "bad value at " + std::to_string(p);
    f.value_end = p - 1;
    ++p;
    out.facts.push_back(f);
  }
  return "";
}

// The index of the fact that states the asked pair; -1 if none does.
int asked_fact(const ParsedExample& e) {
  for (size_t k = 0; k < e.facts.size(); ++k)
    if (e.facts[k].entity == e.entity && e.facts[k].attribute == e.attribute) return static_cast<int>(k);
  return -1;
}

// Examples of one domain only, parsed.
std::vector<ParsedExample> parse_all(const QaDataset& d) {
  std::vector<ParsedExample> all(d.count);
  for (int i = 0; i < d.count; ++i) {
    const std::string error = parse(d, i, all[i]);
    EXPECT_EQ(error, "") << "example " << i << ": " << qa_render(d, i);
  }
  return all;
}

// 5 binomial standard errors of a frequency p over n trials.
double tolerance(double p, double n) { return 5 * std::sqrt(p * (1 - p) / n); }

TEST(QaTask, AnswerSpanIsTheValueOfTheAskedFact) {
  const QaTaskSpec spec;
  const QaDataset d = make_qa_dataset(spec, 0.5, 3000, 11);
  ASSERT_EQ(d.count, 3000);
  ASSERT_EQ(d.tokens.size(), 3000u * 48);
  for (int i = 0; i < d.count; ++i) {
    ParsedExample e;
    ASSERT_EQ(parse(d, i, e), "") << i;
    const int k = asked_fact(e);
    ASSERT_GE(k, 0) << "the question's pair is not in the context: " << qa_render(d, i);
    EXPECT_EQ(d.answer_start[i], e.facts[k].value_start) << qa_render(d, i);
    EXPECT_EQ(d.answer_end[i], e.facts[k].value_end) << qa_render(d, i);
    const QaDomainTokens tok = qa_domain_tokens(spec, d.domain[i]);
    for (int p = d.answer_start[i]; p <= d.answer_end[i]; ++p) ASSERT_TRUE(tok.values.contains(d.example(i)[p]));
    // The gold span scores 1 against itself.
    EXPECT_EQ(qa_exact_match(d, i, d.answer_start[i], d.answer_end[i]), 1.0);
    EXPECT_DOUBLE_EQ(qa_token_f1(d, i, d.answer_start[i], d.answer_end[i]), 1.0);
  }
}

TEST(QaTask, PairsAreUniqueAndBothKindsOfDistractorOccur) {
  const QaDataset d = make_qa_dataset(QaTaskSpec{}, 0.5, 3000, 12);
  const std::vector<ParsedExample> all = parse_all(d);
  int two_fact = 0, two_fact_same_entity = 0;
  for (int i = 0; i < d.count; ++i) {
    const ParsedExample& e = all[i];
    std::set<std::pair<int32_t, int32_t>> pairs;
    int same_entity = 0, same_attribute = 0;
    for (const ParsedFact& f : e.facts) {
      EXPECT_TRUE(pairs.insert({f.entity, f.attribute}).second) << "repeated pair: " << qa_render(d, i);
      same_entity += f.entity == e.entity && f.attribute != e.attribute;
      same_attribute += f.attribute == e.attribute && f.entity != e.entity;
    }
    if (e.facts.size() >= 3) {
      EXPECT_GE(same_entity, 1) << qa_render(d, i);
      EXPECT_GE(same_attribute, 1) << qa_render(d, i);
    } else {
      ASSERT_EQ(e.facts.size(), 2u);
      EXPECT_EQ(same_entity + same_attribute, 1) << qa_render(d, i);
      ++two_fact;
      two_fact_same_entity += same_entity;
    }
  }
  // Two-fact contexts take one kind or the other with a fair coin.
  ASSERT_GT(two_fact, 100);
  EXPECT_NEAR(static_cast<double>(two_fact_same_entity) / two_fact, 0.5, tolerance(0.5, two_fact));
}

TEST(QaTask, LengthsCountTheTokensAndPaddingFollows) {
  const QaDataset d = make_qa_dataset(QaTaskSpec{}, 0.5, 2000, 13);
  const std::vector<ParsedExample> all = parse_all(d);  // checks PAD after the length
  for (int i = 0; i < d.count; ++i) {
    int expected = 4;
    for (const ParsedFact& f : all[i].facts) expected += 4 + f.value_end - f.value_start + 1;
    EXPECT_EQ(d.lengths[i], expected);
    for (int p = 0; p < d.lengths[i]; ++p) ASSERT_NE(d.example(i)[p], kQaPad) << i;
  }
}

TEST(QaTask, TheLongestContextsFitExactlyAtTheSmallestValidSeqLen) {
  // Every value 3 tokens long: a fact is 7 tokens, so finance's 6 facts need 4 + 6·7 = 46 tokens.
  QaTaskSpec spec;
  spec.seq_len = 46;
  spec.medical.value_length_weights = {0, 0, 1};
  spec.finance.value_length_weights = {0, 0, 1};
  const QaDataset d = make_qa_dataset(spec, 0.0, 400, 14);
  int full = 0;
  for (int i = 0; i < d.count; ++i) {
    ParsedExample e;
    ASSERT_EQ(parse(d, i, e), "");
    EXPECT_EQ(d.lengths[i], 4 + 7 * static_cast<int>(e.facts.size()));
    full += d.lengths[i] == 46;
  }
  EXPECT_GT(full, 0);
  spec.seq_len = 45;
  EXPECT_THROW(make_qa_dataset(spec, 0.0, 1, 14), std::invalid_argument);
}

TEST(QaTask, SeededAndEachExampleIndependentOfTheCount) {
  const QaTaskSpec spec;
  const QaDataset a = make_qa_dataset(spec, 0.5, 200, 21), b = make_qa_dataset(spec, 0.5, 200, 21);
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_EQ(a.lengths, b.lengths);
  EXPECT_EQ(a.answer_start, b.answer_start);
  EXPECT_EQ(a.answer_end, b.answer_end);
  EXPECT_EQ(a.domain, b.domain);
  EXPECT_NE(make_qa_dataset(spec, 0.5, 200, 22).tokens, a.tokens);
  const QaDataset fewer = make_qa_dataset(spec, 0.5, 37, 21);
  for (int i = 0; i < fewer.count; ++i) {
    ASSERT_TRUE(std::equal(fewer.example(i), fewer.example(i) + 48, a.example(i))) << i;
    EXPECT_EQ(fewer.answer_start[i], a.answer_start[i]);
    EXPECT_EQ(fewer.domain[i], a.domain[i]);
  }
  // A medical example of the mixed corpus is example i of the all-medical corpus with the same seed.
  const QaDataset medical = make_qa_dataset(spec, 1.0, 200, 21);
  int compared = 0;
  for (int i = 0; i < a.count; ++i) {
    if (a.domain[i] != QaDomain::Medical) continue;
    ASSERT_TRUE(std::equal(a.example(i), a.example(i) + 48, medical.example(i))) << i;
    ++compared;
  }
  EXPECT_GT(compared, 50);
}

TEST(QaTask, DomainsUseDisjointVocabularies) {
  const QaTaskSpec spec;
  EXPECT_EQ(qa_vocab_size(spec), 5 + 2 * (32 + 12 + 64));
  std::set<int32_t> seen[2];
  const QaDataset d = make_qa_dataset(spec, 0.5, 3000, 31);
  for (int i = 0; i < d.count; ++i) {
    std::set<int32_t>& mine = seen[d.domain[i] == QaDomain::Medical ? 0 : 1];
    for (int p = 0; p < d.lengths[i]; ++p) {
      const int32_t t = d.example(i)[p];
      ASSERT_TRUE(t >= 0 && t < d.vocab_size);
      if (t >= kQaStructuralTokens) mine.insert(t);
    }
  }
  ASSERT_GT(seen[0].size(), 50u);
  ASSERT_GT(seen[1].size(), 50u);
  for (const int32_t t : seen[0]) EXPECT_EQ(seen[1].count(t), 0u) << qa_token_name(spec, t) << " in both domains";
  // The ranges themselves: disjoint, after the structural tokens, covering the vocabulary.
  const QaDomainTokens m = qa_domain_tokens(spec, QaDomain::Medical), f = qa_domain_tokens(spec, QaDomain::Finance);
  std::vector<int> owners(qa_vocab_size(spec), 0);
  for (const QaDomainTokens* tok : {&m, &f})
    for (const QaTokenRange* r : {&tok->entities, &tok->attributes, &tok->values})
      for (int32_t t = r->first; t < r->first + r->count; ++t) ++owners.at(t);
  for (int t = 0; t < qa_vocab_size(spec); ++t) EXPECT_EQ(owners[t], t < kQaStructuralTokens ? 0 : 1) << t;
  EXPECT_EQ(m.entities.count, 32);
  EXPECT_EQ(f.values.count, 64);
}

TEST(QaTask, FactCountsAreUniformOverEachDomainsRange) {
  // n uniform on {min..max}: each count has probability 1/m (m = max − min + 1), and the mean (min + max)/2
  // has standard error √((m² − 1)/12)/√N.
  const QaTaskSpec spec;
  const int n = 4000;
  double means[2];
  for (const QaDomain domain : {QaDomain::Medical, QaDomain::Finance}) {
    const QaDomainSpec& ds = spec.domain(domain);
    const QaDataset d = make_qa_dataset(spec, domain == QaDomain::Medical ? 1.0 : 0.0, n, 41);
    const std::vector<ParsedExample> all = parse_all(d);
    std::map<int, int> histogram;
    double total = 0;
    for (const ParsedExample& e : all) {
      ++histogram[static_cast<int>(e.facts.size())];
      total += e.facts.size();
    }
    const int m = ds.max_facts - ds.min_facts + 1;
    for (int facts = ds.min_facts; facts <= ds.max_facts; ++facts)
      EXPECT_NEAR(histogram[facts] / static_cast<double>(n), 1.0 / m, tolerance(1.0 / m, n)) << facts;
    EXPECT_EQ(static_cast<int>(histogram.size()), m) << to_string(domain);
    const double mean = total / n;
    EXPECT_NEAR(mean, (ds.min_facts + ds.max_facts) / 2.0, 5 * std::sqrt((m * m - 1) / 12.0 / n));
    means[domain == QaDomain::Medical ? 0 : 1] = mean;
  }
  // The defaults: medical 2–5 facts (mean 3.5), finance 3–6 (mean 4.5).
  EXPECT_GT(means[1] - means[0], 0.8);
}

TEST(QaTask, AskedAttributesAreUniformInMedicalAndZipfInFinance) {
  // P(a* = a) = (a + 1)^−s / Σ_b (b + 1)^−s with s = 0 (medical) and 1.1 (finance).
  const QaTaskSpec spec;
  const int n = 6000;
  double most_asked[2];
  for (const QaDomain domain : {QaDomain::Medical, QaDomain::Finance}) {
    const double s = domain == QaDomain::Medical ? 0.0 : 1.1;
    ASSERT_EQ(spec.domain(domain).attribute_zipf, s);
    const QaDataset d = make_qa_dataset(spec, domain == QaDomain::Medical ? 1.0 : 0.0, n, 51);
    const QaDomainTokens tok = qa_domain_tokens(spec, domain);
    std::vector<int> asked(12, 0);
    for (int i = 0; i < n; ++i) {
      const int32_t attribute = d.example(i)[2];
      ASSERT_TRUE(tok.attributes.contains(attribute));
      ++asked[attribute - tok.attributes.first];
    }
    double harmonic = 0;
    for (int a = 1; a <= 12; ++a) harmonic += std::pow(a, -s);
    for (int a = 0; a < 12; ++a) {
      const double p = std::pow(a + 1, -s) / harmonic;
      EXPECT_NEAR(asked[a] / static_cast<double>(n), p, tolerance(p, n)) << to_string(domain) << " attribute " << a;
    }
    most_asked[domain == QaDomain::Medical ? 0 : 1] = asked[0] / static_cast<double>(n);
  }
  EXPECT_GT(most_asked[1], 3 * most_asked[0]);
}

TEST(QaTask, ValueLengthsFollowEachDomainsWeights) {
  // Every fact's value length is an independent draw with P(k) = w_k / Σw: medical {0.2, 0.3, 0.5}, finance
  // {0.5, 0.35, 0.15}; checked over the answers alone and over all facts.
  const QaTaskSpec spec;
  const int n = 4000;
  for (const QaDomain domain : {QaDomain::Medical, QaDomain::Finance}) {
    const std::vector<double> p = domain == QaDomain::Medical ? std::vector<double>{0.2, 0.3, 0.5}
                                                               : std::vector<double>{0.5, 0.35, 0.15};
    const QaDataset d = make_qa_dataset(spec, domain == QaDomain::Medical ? 1.0 : 0.0, n, 61);
    const std::vector<ParsedExample> all = parse_all(d);
    std::vector<int> answers(3, 0), facts(3, 0);
    int fact_count = 0;
    for (int i = 0; i < n; ++i) {
      const int length = d.answer_end[i] - d.answer_start[i] + 1;
      ASSERT_TRUE(length >= 1 && length <= 3);
      ++answers[length - 1];
      for (const ParsedFact& f : all[i].facts) {
        ++facts.at(f.value_end - f.value_start);
        ++fact_count;
      }
    }
    for (int k = 0; k < 3; ++k) {
      EXPECT_NEAR(answers[k] / static_cast<double>(n), p[k], tolerance(p[k], n)) << to_string(domain) << k;
      EXPECT_NEAR(facts[k] / static_cast<double>(fact_count), p[k], tolerance(p[k], fact_count))
          << to_string(domain) << k;
    }
  }
}

TEST(QaTask, TheAskedFactIsAtAUniformPlaceInTheContext) {
  const QaDataset d = make_qa_dataset(QaTaskSpec{}, 0.0, 6000, 71);
  const std::vector<ParsedExample> all = parse_all(d);
  std::map<int, std::vector<int>> place;  // facts in context → how often the asked fact was at each place
  for (const ParsedExample& e : all) {
    std::vector<int>& counts = place[static_cast<int>(e.facts.size())];
    counts.resize(e.facts.size(), 0);
    ++counts[asked_fact(e)];
  }
  ASSERT_EQ(place.size(), 4u);  // finance: 3..6 facts
  for (const auto& [facts, counts] : place) {
    int total = 0;
    for (const int c : counts) total += c;
    for (int j = 0; j < facts; ++j)
      EXPECT_NEAR(counts[j] / static_cast<double>(total), 1.0 / facts, tolerance(1.0 / facts, total))
          << facts << " facts, place " << j;
  }
}

TEST(QaTask, MedicalFractionSetsTheDomainMix) {
  const QaTaskSpec spec;
  const int n = 5000;
  for (const double fraction : {0.0, 0.3, 0.5, 1.0}) {
    const QaDataset d = make_qa_dataset(spec, fraction, n, 81);
    int medical = 0;
    for (const QaDomain domain : d.domain) medical += domain == QaDomain::Medical;
    if (fraction == 0.0 || fraction == 1.0)
      EXPECT_EQ(medical, static_cast<int>(fraction * n));
    else
      EXPECT_NEAR(medical / static_cast<double>(n), fraction, tolerance(fraction, n));
  }
}

// One example written by hand: only its tokens, length and gold span matter to the scores.
QaDataset hand_built(const std::vector<int32_t>& tokens, int gold_start, int gold_end) {
  QaDataset d;
  d.vocab_size = qa_vocab_size(d.spec);
  d.count = 1;
  d.tokens = tokens;
  d.tokens.resize(d.spec.seq_len, kQaPad);
  d.lengths = {static_cast<int32_t>(tokens.size())};
  d.answer_start = {gold_start};
  d.answer_end = {gold_end};
  d.domain = {QaDomain::Medical};
  return d;
}

double f1_closed_form(double common, double predicted, double gold) {
  const double p = common / predicted, r = common / gold;
  return 2 * p * r / (p + r);
}

TEST(QaTask, ExactMatchAndTokenF1OnHandBuiltSpans) {
  const QaTokenRange v = qa_domain_tokens(QaTaskSpec{}, QaDomain::Medical).values;
  const int32_t a = v.first, b = v.first + 1, c = v.first + 2, x = v.first + 3;
  // Q e1 A SEP, then the gold fact's value [a b c] at 7..9, the same value at 14..16 and [a a b] at 21..23.
  const QaDataset d = hand_built({1, 5, 40, 2, 5, 40, 3, a, b, c, 4, 6, 40, 3, a, b, c, 4, 6, 41, 3, a, a, b, 4},
                                 7, 9);
  // Full overlap.
  EXPECT_EQ(qa_exact_match(d, 0, 7, 9), 1.0);
  EXPECT_DOUBLE_EQ(qa_token_f1(d, 0, 7, 9), 1.0);
  // The same tokens at another position: SQuAD compares content.
  EXPECT_EQ(qa_exact_match(d, 0, 14, 16), 1.0);
  EXPECT_DOUBLE_EQ(qa_token_f1(d, 0, 14, 16), 1.0);
  // A prefix [a b]: P = 1, R = 2/3.
  EXPECT_EQ(qa_exact_match(d, 0, 7, 8), 0.0);
  EXPECT_DOUBLE_EQ(qa_token_f1(d, 0, 7, 8), f1_closed_form(2, 2, 3));
  EXPECT_NEAR(qa_token_f1(d, 0, 7, 8), 0.8, 1e-12);
  // [b c ; 6]: two of four predicted tokens are in the gold span.
  EXPECT_DOUBLE_EQ(qa_token_f1(d, 0, 8, 11), f1_closed_form(2, 4, 3));
  // Multisets: [a a b] against [a b c] shares one a and one b.
  EXPECT_EQ(qa_exact_match(d, 0, 21, 23), 0.0);
  EXPECT_DOUBLE_EQ(qa_token_f1(d, 0, 21, 23), f1_closed_form(2, 3, 3));
  // No overlap: ";" and "6 41".
  EXPECT_EQ(qa_token_f1(d, 0, 10, 10), 0.0);
  EXPECT_EQ(qa_token_f1(d, 0, 18, 19), 0.0);
  // Inverted, negative, past the length (into the padding) or past seq_len: no answer.
  for (const auto& [start, end] : std::vector<std::pair<int, int>>{{9, 7}, {-1, 8}, {23, 25}, {30, 31}, {7, 48}}) {
    EXPECT_EQ(qa_exact_match(d, 0, start, end), 0.0) << start << ".." << end;
    EXPECT_EQ(qa_token_f1(d, 0, start, end), 0.0) << start << ".." << end;
  }
  // A gold value with a repeated token, [a a b] at 13..15: against itself, [a b] at 7..8 and [a a] at 13..14
  // (both P = 1, R = 2/3), and [x] at 20.
  const QaDataset repeated =
      hand_built({1, 5, 41, 2, 5, 40, 3, a, b, 4, 6, 41, 3, a, a, b, 4, 6, 42, 3, x, 4}, 13, 15);
  EXPECT_DOUBLE_EQ(qa_token_f1(repeated, 0, 13, 15), 1.0);
  EXPECT_DOUBLE_EQ(qa_token_f1(repeated, 0, 7, 8), f1_closed_form(2, 2, 3));
  EXPECT_DOUBLE_EQ(qa_token_f1(repeated, 0, 13, 14), f1_closed_form(2, 2, 3));
  EXPECT_EQ(qa_token_f1(repeated, 0, 20, 20), 0.0);
  EXPECT_THROW(qa_exact_match(d, 1, 7, 9), std::out_of_range);
  EXPECT_THROW(qa_token_f1(d, -1, 7, 9), std::out_of_range);
}

TEST(QaTask, TokenNamesAndRendering) {
  const QaTaskSpec spec;
  const QaDomainTokens m = qa_domain_tokens(spec, QaDomain::Medical), f = qa_domain_tokens(spec, QaDomain::Finance);
  EXPECT_EQ(qa_token_name(spec, kQaPad), "PAD");
  EXPECT_EQ(qa_token_name(spec, kQaQuestion), "Q");
  EXPECT_EQ(qa_token_name(spec, kQaSep), "SEP");
  EXPECT_EQ(qa_token_name(spec, kQaIs), "is");
  EXPECT_EQ(qa_token_name(spec, kQaEnd), ";");
  EXPECT_EQ(qa_token_name(spec, m.entities.first + 17), "mE17");
  EXPECT_EQ(qa_token_name(spec, f.attributes.first + 3), "fA3");
  EXPECT_EQ(qa_token_name(spec, f.values.first + 63), "fV63");
  EXPECT_THROW(qa_token_name(spec, qa_vocab_size(spec)), std::out_of_range);
  EXPECT_THROW(qa_token_name(spec, -1), std::out_of_range);
  EXPECT_STREQ(to_string(QaDomain::Finance), "finance");
  EXPECT_EQ(qa_domains().parse("medical"), QaDomain::Medical);

  const QaDataset d = hand_built({kQaQuestion, m.entities.first + 3, m.attributes.first + 1, kQaSep,
                                  m.entities.first + 3, m.attributes.first + 1, kQaIs, m.values.first + 20,
                                  m.values.first + 5, kQaEnd},
                                 7, 8);
  EXPECT_EQ(qa_render(d, 0), "medical: Q mE3 mA1 SEP mE3 mA1 is [ mV20 mV5 ] ;");
}

TEST(QaTask, RejectsInvalidSpecsNamingTheField) {
  const auto message = [](auto change, double fraction = 0.5, int count = 10) -> std::string {
    QaTaskSpec spec;
    change(spec);
    try {
      make_qa_dataset(spec, fraction, count, 1);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "accepted";
  };
  const auto expect_names = [](const std::string& what, const std::string& field) {
    EXPECT_NE(what.find(field), std::string::npos) << "expected '" << field << "' in: " << what;
  };
  // The question (4) plus two facts of 3-token values (7 each) need 18 tokens.
  expect_names(message([](QaTaskSpec& s) { s.seq_len = 17; }), "QaTaskSpec.seq_len");
  expect_names(message([](QaTaskSpec& s) { s.seq_len = 0; }), "QaTaskSpec.seq_len");
  // 39 tokens hold medical's 5 facts but not finance's 6 (46).
  expect_names(message([](QaTaskSpec& s) { s.seq_len = 40; }), "QaTaskSpec.finance.max_facts");
  expect_names(message([](QaTaskSpec& s) { s.entities_per_domain = 1; }), "QaTaskSpec.entities_per_domain");
  expect_names(message([](QaTaskSpec& s) { s.attributes_per_domain = 0; }), "QaTaskSpec.attributes_per_domain");
  expect_names(message([](QaTaskSpec& s) { s.values_per_domain = 0; }), "QaTaskSpec.values_per_domain");
  expect_names(message([](QaTaskSpec& s) { s.medical.min_facts = 1; }), "QaTaskSpec.medical.min_facts");
  expect_names(message([](QaTaskSpec& s) { s.finance.max_facts = 2; }), "QaTaskSpec.finance.max_facts");
  // 2 × 2 pairs cannot hold 5 distinct facts.
  expect_names(message([](QaTaskSpec& s) { s.entities_per_domain = s.attributes_per_domain = 2; }),
               "QaTaskSpec.medical.max_facts");
  expect_names(message([](QaTaskSpec& s) { s.finance.attribute_zipf = -1; }), "QaTaskSpec.finance.attribute_zipf");
  expect_names(message([](QaTaskSpec& s) { s.medical.attribute_zipf = NAN; }), "QaTaskSpec.medical.attribute_zipf");
  expect_names(message([](QaTaskSpec& s) { s.medical.value_length_weights = {}; }),
               "QaTaskSpec.medical.value_length_weights");
  expect_names(message([](QaTaskSpec& s) { s.finance.value_length_weights = {1, -0.5}; }),
               "QaTaskSpec.finance.value_length_weights");
  expect_names(message([](QaTaskSpec& s) { s.finance.value_length_weights = {0, 0}; }),
               "QaTaskSpec.finance.value_length_weights");
  const auto unchanged = [](QaTaskSpec&) {};
  expect_names(message(unchanged, 1.5), "medical_fraction");
  expect_names(message(unchanged, -0.1), "medical_fraction");
  expect_names(message(unchanged, NAN), "medical_fraction");
  expect_names(message(unchanged, 0.5, -1), "count");
  EXPECT_EQ(message(unchanged, 0.5, 0), "accepted");
  EXPECT_EQ(message(unchanged), "accepted");
  // A 4-token longest value: two facts need 4 + 2·8 = 20 tokens and finance's six 52, so 48 fails on finance.
  expect_names(message([](QaTaskSpec& s) { s.finance.value_length_weights = {1, 1, 1, 1}; }),
               "QaTaskSpec.finance.max_facts");
  EXPECT_THROW(qa_vocab_size([] {
                 QaTaskSpec s;
                 s.values_per_domain = -3;
                 return s;
               }()),
               std::invalid_argument);
}

}  // namespace
}  // namespace dtsim::models

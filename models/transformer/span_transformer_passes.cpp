// The span transformer's forward pass, span loss and backward pass (see span_transformer.hpp for the network).
// Every tensor lives in backend memory and every step is one of the backend's ops, except the span loss: it is
// 2 × seq_len values per sequence, computed on the host in double, which also keeps its masking of padded
// positions in one readable place.
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "gpu/portable_math.hpp"
#include "models/transformer/span_transformer.hpp"

namespace dtsim::models {

using gpu::Transpose;

namespace {

constexpr size_t kNone = static_cast<size_t>(-1);

// Block tensor entries (see kBlockTensors).
enum Entry { Ln1Gain = 0, Ln1Shift = 1, QWeight = 2, OWeight = 8, Ln2Gain = 10, Mlp1Weight = 12, Mlp2Weight = 14 };

template <class T>
ConstMatrixView<T> cview(const T* data, int rows, int cols) {
  return ConstMatrixView<T>(data, rows, cols);
}
template <class T>
MatrixView<T> view(T* data, int rows, int cols) {
  return MatrixView<T>{data, rows, cols};
}

// One projection y = x·W + b (+ s·(x·A)·B) of `rows` rows. W is in × out followed by b; an adapter is A (in × r)
// followed by B (r × out); `hidden` keeps x·A for the backward pass.
template <class T>
struct Projector {
  gpu::Ops<T>& ops;
  int rows;
  int rank;
  T scale;

  void forward(const T* w, int in, int out, const T* x, T* y, const T* adapter, T* hidden) const {
    ops.gemm(Transpose::No, Transpose::No, T(1), cview(x, rows, in), cview(w, in, out), T(0), view(y, rows, out));
    ops.add_row_vector(view(y, rows, out), w + static_cast<size_t>(in) * out);
    if (!adapter) return;
    const T* a = adapter;
    const T* b = adapter + static_cast<size_t>(in) * rank;
    ops.gemm(Transpose::No, Transpose::No, T(1), cview(x, rows, in), cview(a, in, rank), T(0),
             view(hidden, rows, rank));
    ops.gemm(Transpose::No, Transpose::No, scale, cview<T>(hidden, rows, rank), cview(b, rank, out), T(1),
             view(y, rows, out));
  }

  // Given dy, writes dx (times 1, added to dx when accumulate), the base gradient (dw: W then b; null when frozen)
  // and the adapter gradient (dadapter: A then B; null without an adapter). `dhidden` is rows × rank scratch.
  void backward(const T* w, int in, int out, const T* x, const T* dy, T* dx, bool accumulate, T* dw,
                const T* adapter, const T* hidden, T* dadapter, T* dhidden) const {
    if (dw) {
      ops.gemm(Transpose::Yes, Transpose::No, T(1), cview(x, rows, in), cview(dy, rows, out), T(0),
               view(dw, in, out));
      ops.column_sums(cview(dy, rows, out), T(0), dw + static_cast<size_t>(in) * out);
    }
    ops.gemm(Transpose::No, Transpose::Yes, T(1), cview(dy, rows, out), cview(w, in, out), accumulate ? T(1) : T(0),
             view(dx, rows, in));
    if (!adapter) return;
    const T* a = adapter;
    const T* b = adapter + static_cast<size_t>(in) * rank;
    T* da = dadapter;
    T* db = dadapter + static_cast<size_t>(in) * rank;
    // y += s·H·B with H = x·A:  dB = s·Hᵀ·dy,  dH = s·dy·Bᵀ,  dA = xᵀ·dH,  dx += dH·Aᵀ
    ops.gemm(Transpose::Yes, Transpose::No, scale, cview(hidden, rows, rank), cview(dy, rows, out), T(0),
             view(db, rank, out));
    ops.gemm(Transpose::No, Transpose::Yes, scale, cview(dy, rows, out), cview(b, rank, out), T(0),
             view(dhidden, rows, rank));
    ops.gemm(Transpose::Yes, Transpose::No, T(1), cview(x, rows, in), cview<T>(dhidden, rows, rank), T(0),
             view(da, in, rank));
    ops.gemm(Transpose::No, Transpose::Yes, T(1), cview<T>(dhidden, rows, rank), cview(a, in, rank), T(1),
             view(dx, rows, in));
  }
};

}  // namespace

template <class T>
size_t SpanTransformer<T>::workspace_values(int batch) const {
  const size_t n = static_cast<size_t>(batch) * config_.seq_len;
  const size_t d = config_.dim, f = config_.ffn;
  size_t per_block = 8 * n * d + static_cast<size_t>(batch) * config_.heads * config_.seq_len * config_.seq_len +
                     2 * n * f;
  for (int pi = 0; pi < kProjections; ++pi) {
    if (adapted(static_cast<Projection>(pi))) per_block += n * lora_.rank;
  }
  const size_t forward = n + n * d + config_.layers * per_block + n * d + 2 * n;
  const size_t backward = 6 * n * d + 2 * n * f + (lora_.enabled() ? n * lora_.rank : 0) + 2 * std::max(d, f) + 2 * n;
  return forward + backward;
}

template <class T>
TransformerWorkspace<T> SpanTransformer<T>::make_workspace(gpu::Ops<T>& ops, int max_batch) const {
  if (max_batch <= 0) throw std::invalid_argument("transformer workspace batch must be positive");
  const size_t n = static_cast<size_t>(max_batch) * config_.seq_len;
  const size_t d = config_.dim, f = config_.ffn;
  const size_t probs = static_cast<size_t>(max_batch) * config_.heads * config_.seq_len * config_.seq_len;
  TransformerWorkspace<T> ws;
  ws.max_batch = max_batch;
  ws.ids = gpu::Buffer<T>(ops, n);
  ws.embedded = gpu::Buffer<T>(ops, n * d);
  for (int b = 0; b < config_.layers; ++b) {
    typename TransformerWorkspace<T>::Block blk;
    for (gpu::Buffer<T>* buf : {&blk.ln1, &blk.q, &blk.k, &blk.v, &blk.attn, &blk.x_mid, &blk.ln2, &blk.x_out}) {
      *buf = gpu::Buffer<T>(ops, n * d);
    }
    blk.probs = gpu::Buffer<T>(ops, probs);
    blk.pre_gelu = gpu::Buffer<T>(ops, n * f);
    blk.gelu = gpu::Buffer<T>(ops, n * f);
    blk.lora_hidden.resize(kProjections);
    for (int pi = 0; pi < kProjections; ++pi) {
      if (adapted(static_cast<Projection>(pi))) blk.lora_hidden[pi] = gpu::Buffer<T>(ops, n * lora_.rank);
    }
    ws.blocks.push_back(std::move(blk));
  }
  ws.lnf = gpu::Buffer<T>(ops, n * d);
  ws.logits = gpu::Buffer<T>(ops, n * 2);
  for (gpu::Buffer<T>* buf : {&ws.dx, &ws.dx2, &ws.dh, &ws.dq, &ws.dk, &ws.dv}) *buf = gpu::Buffer<T>(ops, n * d);
  ws.dwide = gpu::Buffer<T>(ops, n * f);
  ws.dwide2 = gpu::Buffer<T>(ops, n * f);
  if (lora_.enabled()) ws.dlora = gpu::Buffer<T>(ops, n * lora_.rank);
  // A frozen model's layer-norm gain and shift gradients, which the op always writes, go here.
  ws.dparam_scratch = gpu::Buffer<T>(ops, 2 * std::max(d, f));
  ws.dlogits = gpu::Buffer<T>(ops, n * 2);
  return ws;
}

template <class T>
void SpanTransformer<T>::forward(gpu::Ops<T>& ops, TransformerWorkspace<T>& ws, const T* base, const T* adapters,
                                 const SpanBatch& batch, gpu::NumberFormat activations) const {
  if (batch.batch <= 0 || batch.batch > ws.max_batch) {
    throw std::invalid_argument("transformer batch " + std::to_string(batch.batch) + " outside the workspace's 1.." +
                                std::to_string(ws.max_batch));
  }
  if (lora_.enabled() && !adapters) throw std::invalid_argument("transformer with LoRA needs its adapters");
  const int S = config_.seq_len, d = config_.dim, f = config_.ffn, n = batch.batch * S;
  ws.batch = batch.batch;
  ws.lengths.assign(batch.lengths, batch.lengths + batch.batch);
  for (int b = 0; b < batch.batch; ++b) {
    if (ws.lengths[b] < 1 || ws.lengths[b] > S) {
      throw std::invalid_argument("sequence " + std::to_string(b) + " has length " + std::to_string(ws.lengths[b]) +
                                  ", outside 1.." + std::to_string(S));
    }
  }
  // Each stored activation as a GPU keeping it in `activations` would hold it.
  const auto store = [&ops, activations](gpu::Buffer<T>& x) {
    if (activations != gpu::NumberFormat::Fp32 && !x.empty()) ops.round_to_format(x.data(), x.size(), activations);
  };
  std::vector<T> ids(batch.tokens, batch.tokens + n);
  ops.upload(ws.ids.data(), ids.data(), ids.size());

  // x = wte[token] + wpe[position]: the position table is one row of seq_len × dim added to every sequence.
  ops.embedding_forward(ws.ids.data(), base + wte_, ws.embedded.data(), n, config_.vocab, d);
  const bool rotary = config_.positions == PositionEncoding::Rotary;
  if (!rotary) ops.add_row_vector(view(ws.embedded.data(), batch.batch, S * d), base + wpe_);
  store(ws.embedded);

  const Projector<T> proj{ops, n, lora_.rank, static_cast<T>(lora_.scale())};
  const gpu::AttentionShape shape{batch.batch, S, config_.heads, config_.head_dim(), config_.causal, ws.lengths.data()};
  const T eps = static_cast<T>(config_.ln_eps);
  const T* x = ws.embedded.data();
  for (int l = 0; l < config_.layers; ++l) {
    auto& blk = ws.blocks[l];
    const size_t* off = &block_offsets_[static_cast<size_t>(l) * kBlockTensors];
    auto adapter = [&](Projection p) -> const T* {
      const size_t a = adapter_offset(l, p);
      return a == kNone ? nullptr : adapters + a;
    };
    auto hidden = [&](Projection p) { return blk.lora_hidden[static_cast<int>(p)].data(); };
    // Attention branch: x_mid = x + O(Attention(Q(h), K(h), V(h))), h = LN1(x).
    ops.layer_norm_forward(x, base + off[Ln1Gain], base + off[Ln1Shift], blk.ln1.data(), n, d, eps);
    proj.forward(base + off[QWeight], d, d, blk.ln1.data(), blk.q.data(), adapter(Projection::Q),
                 hidden(Projection::Q));
    proj.forward(base + off[QWeight + 2], d, d, blk.ln1.data(), blk.k.data(), adapter(Projection::K),
                 hidden(Projection::K));
    proj.forward(base + off[QWeight + 4], d, d, blk.ln1.data(), blk.v.data(), adapter(Projection::V),
                 hidden(Projection::V));
    if (rotary) {  // the attention sees (and backward gets) the rotated q and k
      ops.rotary_embedding(shape, blk.q.data(), config_.rotary_base, false);
      ops.rotary_embedding(shape, blk.k.data(), config_.rotary_base, false);
    }
    for (gpu::Buffer<T>* x : {&blk.ln1, &blk.q, &blk.k, &blk.v}) store(*x);
    ops.attention_forward(shape, blk.q.data(), blk.k.data(), blk.v.data(), blk.probs.data(), blk.attn.data());
    store(blk.probs);
    store(blk.attn);
    proj.forward(base + off[OWeight], d, d, blk.attn.data(), blk.x_mid.data(), adapter(Projection::O),
                 hidden(Projection::O));
    ops.axpy(T(1), x, blk.x_mid.data(), static_cast<size_t>(n) * d);
    store(blk.x_mid);
    // MLP branch: x_out = x_mid + W2·GELU(W1·LN2(x_mid)).
    ops.layer_norm_forward(blk.x_mid.data(), base + off[Ln2Gain], base + off[Ln2Gain + 1], blk.ln2.data(), n, d, eps);
    proj.forward(base + off[Mlp1Weight], d, f, blk.ln2.data(), blk.pre_gelu.data(), adapter(Projection::Mlp1),
                 hidden(Projection::Mlp1));
    store(blk.ln2);
    store(blk.pre_gelu);
    ops.gelu_forward(blk.pre_gelu.data(), blk.gelu.data(), static_cast<size_t>(n) * f);
    store(blk.gelu);
    proj.forward(base + off[Mlp2Weight], f, d, blk.gelu.data(), blk.x_out.data(), adapter(Projection::Mlp2),
                 hidden(Projection::Mlp2));
    ops.axpy(T(1), blk.x_mid.data(), blk.x_out.data(), static_cast<size_t>(n) * d);
    store(blk.x_out);
    for (gpu::Buffer<T>& h : blk.lora_hidden) store(h);
    x = blk.x_out.data();
  }
  ops.layer_norm_forward(x, base + lnf_, base + lnf_ + d, ws.lnf.data(), n, d, eps);
  const Projector<T> head{ops, n, 0, T(0)};
  store(ws.lnf);
  head.forward(base + head_, d, 2, ws.lnf.data(), ws.logits.data(), nullptr, nullptr);
  store(ws.logits);
}

template <class T>
std::vector<T> SpanTransformer<T>::last_logits(gpu::Ops<T>& ops, TransformerWorkspace<T>& ws) const {
  const int S = config_.seq_len;
  std::vector<T> token_major(static_cast<size_t>(ws.batch) * S * 2);
  ops.download(token_major.data(), ws.logits.data(), token_major.size());
  std::vector<T> out(token_major.size());
  for (int b = 0; b < ws.batch; ++b) {
    for (int i = 0; i < S; ++i) {
      for (int which = 0; which < 2; ++which) {
        out[(static_cast<size_t>(b) * 2 + which) * S + i] = token_major[(static_cast<size_t>(b) * S + i) * 2 + which];
      }
    }
  }
  return out;
}

// Softmax cross-entropy of the start and of the end logits over each sequence's valid positions, and the decoded
// span. The gradient of the batch's mean loss, times grad_scale, goes to ws.dlogits (zero at padded positions).
template <class T>
SpanLoss SpanTransformer<T>::span_loss(gpu::Ops<T>& ops, TransformerWorkspace<T>& ws, const SpanBatch& batch,
                                       bool with_gradient, T grad_scale,
                                       std::vector<SpanPrediction>* predictions) const {
  const int S = config_.seq_len;
  const std::vector<T> logits = last_logits(ops, ws);
  std::vector<T> dlogits(with_gradient ? static_cast<size_t>(batch.batch) * S * 2 : 0, T(0));
  const bool has_answers = batch.answer_start && batch.answer_end;
  if (with_gradient && !has_answers) throw std::invalid_argument("a training batch needs its answer spans");
  SpanLoss result;
  if (predictions) predictions->assign(batch.batch, SpanPrediction{});
  for (int b = 0; b < batch.batch; ++b) {
    const int len = ws.lengths[b];
    const T* starts = &logits[static_cast<size_t>(b) * 2 * S];
    const T* ends = starts + S;
    // Decoding: the best valid pair start ≤ end < start + max_answer_tokens.
    SpanPrediction best;
    double best_score = -std::numeric_limits<double>::infinity();
    for (int i = 0; i < len; ++i) {
      for (int j = i; j < std::min(len, i + max_answer_tokens); ++j) {
        const double score = static_cast<double>(starts[i]) + ends[j];
        if (score > best_score) best_score = score, best = {i, j};
      }
    }
    if (predictions) (*predictions)[b] = best;
    if (!has_answers) continue;
    const int gold[2] = {batch.answer_start[b], batch.answer_end[b]};
    if (gold[0] < 0 || gold[1] < gold[0] || gold[1] >= len) {
      throw std::invalid_argument("sequence " + std::to_string(b) + " has answer span " + std::to_string(gold[0]) +
                                  ".." + std::to_string(gold[1]) + " outside its " + std::to_string(len) +
                                  " valid tokens");
    }
    if (best.start == gold[0] && best.end == gold[1]) ++result.exact;
    for (int which = 0; which < 2; ++which) {
      const T* z = which == 0 ? starts : ends;
      const double m = *std::max_element(z, z + len);
      double sum = 0.0;
      for (int i = 0; i < len; ++i) sum += portable::exp(static_cast<double>(z[i]) - m);
      result.loss += 0.5 * (m + portable::log(sum) - z[gold[which]]);
      if (!with_gradient) continue;
      // d(½·CE)/dz_i = ½·(softmax_i − [i = gold]), averaged over the batch.
      const double factor = 0.5 * static_cast<double>(grad_scale) / batch.batch;
      for (int i = 0; i < len; ++i) {
        const double p = portable::exp(static_cast<double>(z[i]) - m) / sum;
        dlogits[(static_cast<size_t>(b) * S + i) * 2 + which] =
            static_cast<T>(factor * (p - (i == gold[which] ? 1.0 : 0.0)));
      }
    }
  }
  if (with_gradient) ops.upload(ws.dlogits.data(), dlogits.data(), dlogits.size());
  return result;
}

template <class T>
void SpanTransformer<T>::backward(gpu::Ops<T>& ops, TransformerWorkspace<T>& ws, const T* base, const T* adapters,
                                  const SpanBatch& batch, T* grads, gpu::NumberFormat gradients) const {
  const int S = config_.seq_len, d = config_.dim, f = config_.ffn, n = batch.batch * S;
  const size_t nd = static_cast<size_t>(n) * d;
  const bool train_base = !lora_.enabled();
  // Where a base tensor's gradient goes: its place in `grads`, or nowhere when the base is frozen.
  auto dbase = [&](size_t offset) -> T* { return train_base ? grads + offset : nullptr; };
  // A layer norm's gain and shift gradients: into `grads`, or into scratch when frozen.
  auto dnorm = [&](size_t offset) -> T* { return train_base ? grads + offset : ws.dparam_scratch.data(); };
  const Projector<T> proj{ops, n, lora_.rank, static_cast<T>(lora_.scale())};
  const gpu::AttentionShape shape{batch.batch, S, config_.heads, config_.head_dim(), config_.causal, ws.lengths.data()};
  const T eps = static_cast<T>(config_.ln_eps);
  // Each backward output as a GPU keeping gradients in `gradients` would hold it (the first n rows are in use).
  const auto keep = [&ops, gradients](gpu::Buffer<T>& g, size_t count) {
    if (gradients != gpu::NumberFormat::Fp32) ops.round_to_format(g.data(), count, gradients);
  };
  const size_t nf = static_cast<size_t>(n) * f;

  // Head and final layer norm: dx = d(loss)/d(last block's output).
  const Projector<T> head{ops, n, 0, T(0)};
  head.backward(base + head_, d, 2, ws.lnf.data(), ws.dlogits.data(), ws.dh.data(), false, dbase(head_), nullptr,
                nullptr, nullptr, nullptr);
  const T* last = ws.blocks.back().x_out.data();
  T* dnorm_f = dnorm(lnf_);
  keep(ws.dh, nd);
  ops.layer_norm_backward(last, base + lnf_, ws.dh.data(), ws.dx.data(), dnorm_f, dnorm_f + d, n, d, eps);
  keep(ws.dx, nd);

  for (int l = config_.layers - 1; l >= 0; --l) {
    auto& blk = ws.blocks[l];
    const size_t* off = &block_offsets_[static_cast<size_t>(l) * kBlockTensors];
    const T* x_in = l == 0 ? ws.embedded.data() : ws.blocks[l - 1].x_out.data();
    auto adapter = [&](Projection p) -> const T* {
      const size_t a = adapter_offset(l, p);
      return a == kNone ? nullptr : adapters + a;
    };
    auto dadapter = [&](Projection p) -> T* {
      const size_t a = adapter_offset(l, p);
      return a == kNone ? nullptr : grads + a;
    };
    auto hidden = [&](Projection p) -> const T* { return blk.lora_hidden[static_cast<int>(p)].data(); };
    // MLP branch. ws.dx holds d(x_out); the residual passes it straight to x_mid.
    proj.backward(base + off[Mlp2Weight], f, d, blk.gelu.data(), ws.dx.data(), ws.dwide.data(), false,
                  dbase(off[Mlp2Weight]), adapter(Projection::Mlp2), hidden(Projection::Mlp2),
                  dadapter(Projection::Mlp2), ws.dlora.data());
    keep(ws.dwide, nf);
    ops.gelu_backward(blk.pre_gelu.data(), ws.dwide.data(), ws.dwide2.data(), nf);
    keep(ws.dwide2, nf);
    proj.backward(base + off[Mlp1Weight], d, f, blk.ln2.data(), ws.dwide2.data(), ws.dh.data(), false,
                  dbase(off[Mlp1Weight]), adapter(Projection::Mlp1), hidden(Projection::Mlp1),
                  dadapter(Projection::Mlp1), ws.dlora.data());
    keep(ws.dh, nd);
    T* dnorm2 = dnorm(off[Ln2Gain]);
    ops.layer_norm_backward(blk.x_mid.data(), base + off[Ln2Gain], ws.dh.data(), ws.dx2.data(), dnorm2,
                            train_base ? grads + off[Ln2Gain + 1] : dnorm2 + d, n, d, eps);
    ops.axpy(T(1), ws.dx.data(), ws.dx2.data(), nd);  // dx2 = d(x_mid)
    keep(ws.dx2, nd);
    // Attention branch.
    proj.backward(base + off[OWeight], d, d, blk.attn.data(), ws.dx2.data(), ws.dh.data(), false,
                  dbase(off[OWeight]), adapter(Projection::O), hidden(Projection::O), dadapter(Projection::O),
                  ws.dlora.data());
    keep(ws.dh, nd);
    ops.attention_backward(shape, blk.q.data(), blk.k.data(), blk.v.data(), blk.probs.data(), ws.dh.data(),
                           ws.dq.data(), ws.dk.data(), ws.dv.data());
    if (config_.positions == PositionEncoding::Rotary) {  // back through the rotation: turn by the opposite angles
      ops.rotary_embedding(shape, ws.dq.data(), config_.rotary_base, true);
      ops.rotary_embedding(shape, ws.dk.data(), config_.rotary_base, true);
    }
    for (gpu::Buffer<T>* g : {&ws.dq, &ws.dk, &ws.dv}) keep(*g, nd);
    const Projection qkv[3] = {Projection::Q, Projection::K, Projection::V};
    const T* dqkv[3] = {ws.dq.data(), ws.dk.data(), ws.dv.data()};
    for (int i = 0; i < 3; ++i) {
      proj.backward(base + off[QWeight + 2 * i], d, d, blk.ln1.data(), dqkv[i], ws.dh.data(), i > 0,
                    dbase(off[QWeight + 2 * i]), adapter(qkv[i]), hidden(qkv[i]), dadapter(qkv[i]), ws.dlora.data());
    }
    keep(ws.dh, nd);
    T* dnorm1 = dnorm(off[Ln1Gain]);
    ops.layer_norm_backward(x_in, base + off[Ln1Gain], ws.dh.data(), ws.dx.data(), dnorm1,
                            train_base ? grads + off[Ln1Shift] : dnorm1 + d, n, d, eps);
    ops.axpy(T(1), ws.dx2.data(), ws.dx.data(), nd);  // dx = d(x_in)
    keep(ws.dx, nd);
  }
  if (train_base) {
    // Embeddings: token rows by scatter-add, position rows summed over the batch.
    ops.embedding_backward(ws.ids.data(), ws.dx.data(), grads + wte_, n, config_.vocab, d);
    if (config_.positions == PositionEncoding::Learned) {
      ops.column_sums(cview<T>(ws.dx.data(), batch.batch, S * d), T(0), grads + wpe_);
    }
  }
  if (gradients != gpu::NumberFormat::Fp32) ops.round_to_format(grads, trained_param_count(), gradients);
}

template <class T>
SpanLoss SpanTransformer<T>::loss_and_gradient(gpu::Ops<T>& ops, TransformerWorkspace<T>& ws, const T* base,
                                               const T* adapters, const SpanBatch& batch, T* grads,
                                               const NumericsOptions& numerics) const {
  forward(ops, ws, base, adapters, batch, numerics.activations);
  const SpanLoss loss = span_loss(ops, ws, batch, true, static_cast<T>(numerics.loss_scale), nullptr);
  backward(ops, ws, base, adapters, batch, grads, numerics.gradients);
  return loss;
}

template <class T>
SpanLoss SpanTransformer<T>::evaluate(gpu::Ops<T>& ops, TransformerWorkspace<T>& ws, const T* base,
                                      const T* adapters, const SpanBatch& batch,
                                      std::vector<SpanPrediction>& predictions,
                                      gpu::NumberFormat activations) const {
  forward(ops, ws, base, adapters, batch, activations);
  return span_loss(ops, ws, batch, false, T(1), &predictions);
}

// The class itself is instantiated in span_transformer.cpp; these are the members defined here.
#define DTSIM_SPAN_TRANSFORMER_PASSES(T)                                                                        \
  template TransformerWorkspace<T> SpanTransformer<T>::make_workspace(gpu::Ops<T>&, int) const;                \
  template size_t SpanTransformer<T>::workspace_values(int) const;                                             \
  template std::vector<T> SpanTransformer<T>::last_logits(gpu::Ops<T>&, TransformerWorkspace<T>&) const;       \
  template SpanLoss SpanTransformer<T>::loss_and_gradient(gpu::Ops<T>&, TransformerWorkspace<T>&, const T*,    \
                                                          const T*, const SpanBatch&, T*,                      \
                                                          const NumericsOptions&) const;                       \
  template SpanLoss SpanTransformer<T>::evaluate(gpu::Ops<T>&, TransformerWorkspace<T>&, const T*, const T*,   \
                                                 const SpanBatch&, std::vector<SpanPrediction>&,               \
                                                 gpu::NumberFormat) const;
DTSIM_SPAN_TRANSFORMER_PASSES(float)
DTSIM_SPAN_TRANSFORMER_PASSES(double)
#undef DTSIM_SPAN_TRANSFORMER_PASSES

}  // namespace dtsim::models

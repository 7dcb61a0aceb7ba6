// ops_rnn.cc — RNN, GRU and LSTM, unrolled over the (static) sequence length.
//
// The input projection X W^T (+ biases) is one matmul over all time steps; each step then
// adds H R^T, applies the gate activations and updates the state. sequence_lens (constant
// or not) masks the steps past each batch entry's length: the state holds, Y is 0.
#include <algorithm>
#include <functional>

#include "frontend/lowering.h"

namespace edgec::onnx_frontend {
namespace {

using Outs = std::vector<Node*>;

struct Activation {
  std::string name;
  double alpha = 0, beta = 0;
};

Node* apply_activation(OpContext& ctx, const Activation& a, Node* x) {
  Graph& g = ctx.g;
  auto c = [&](double v) { return scalar(g, v, x); };
  const std::string& n = a.name;
  if (n == "Tanh") return g.unary(Op::Tanh, x);
  if (n == "Sigmoid") return g.unary(Op::Recip, g.binary(Op::Add, c(1), g.unary(Op::Exp, g.unary(Op::Neg, x))));
  if (n == "Relu") return g.binary(Op::Max, x, c(0));
  if (n == "Affine") return g.binary(Op::Add, g.binary(Op::Mul, x, c(a.alpha)), c(a.beta));
  if (n == "LeakyRelu") return g.where(g.binary(Op::CmpLt, x, c(0)), g.binary(Op::Mul, x, c(a.alpha)), x);
  if (n == "ThresholdedRelu") return g.where(g.binary(Op::CmpLt, c(a.alpha), x), x, c(0));
  if (n == "ScaledTanh") return g.binary(Op::Mul, c(a.alpha), g.unary(Op::Tanh, g.binary(Op::Mul, x, c(a.beta))));
  if (n == "HardSigmoid") {
    Node* lin = g.binary(Op::Add, g.binary(Op::Mul, x, c(a.alpha)), c(a.beta));
    return g.binary(Op::Min, g.binary(Op::Max, lin, c(0)), c(1));
  }
  if (n == "Elu") {
    Node* em1 = g.binary(Op::Sub, g.unary(Op::Exp, x), c(1));
    return g.where(g.binary(Op::CmpLt, x, c(0)), g.binary(Op::Mul, em1, c(a.alpha)), x);
  }
  if (n == "Softsign") return g.binary(Op::Div, x, g.binary(Op::Add, c(1), g.unary(Op::Abs, x)));
  if (n == "Softplus") return g.unary(Op::Log, g.binary(Op::Add, g.unary(Op::Exp, x), c(1)));
  ctx.fail("unsupported activation '" + n + "'");
}

// The node's activations, `per_dir` for each direction (defaults when absent).
std::vector<Activation> activations(OpContext& ctx, const std::vector<std::string>& defaults, int64_t dirs) {
  std::vector<Activation> acts;
  const auto* a = ctx.attr("activations");
  std::vector<std::string> names;
  if (a) {
    for (const auto& s : a->strings()) names.push_back(s);
  } else {
    for (int64_t d = 0; d < dirs; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  }
  if (names.size() != defaults.size() * size_t(dirs))
    ctx.fail("activations must list " + std::to_string(defaults.size() * size_t(dirs)) + " functions");
  std::vector<float> alphas = ctx.attr_floats("activation_alpha"), betas = ctx.attr_floats("activation_beta");
  size_t ai = 0, bi = 0;
  for (const std::string& raw : names) {
    Activation act;
    // Names are case-insensitive in practice (exporters write "tanh", "sigmoid").
    std::string n = raw;
    static const char* const known[] = {"Tanh", "Sigmoid", "Relu", "Affine", "LeakyRelu", "ThresholdedRelu",
                                        "ScaledTanh", "HardSigmoid", "Elu", "Softsign", "Softplus"};
    for (const char* k : known) {
      std::string lk = k, ln = n;
      std::transform(lk.begin(), lk.end(), lk.begin(), ::tolower);
      std::transform(ln.begin(), ln.end(), ln.begin(), ::tolower);
      if (lk == ln) n = k;
    }
    act.name = n;
    // Defaults from the ONNX operator docs; explicit alpha / beta values are consumed in order.
    bool has_alpha = n == "Affine" || n == "LeakyRelu" || n == "ThresholdedRelu" || n == "ScaledTanh" ||
                     n == "HardSigmoid" || n == "Elu";
    bool has_beta = n == "Affine" || n == "ScaledTanh" || n == "HardSigmoid";
    act.alpha = n == "LeakyRelu" ? 0.01 : n == "HardSigmoid" ? 0.2 : 1.0;
    act.beta = n == "HardSigmoid" ? 0.5 : 0.0;
    if (has_alpha && ai < alphas.size()) act.alpha = alphas[ai++];
    if (has_beta && bi < betas.size()) act.beta = betas[bi++];
    acts.push_back(act);
  }
  return acts;
}

struct RnnSetup {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1, gates = 1;
  bool batch_first = false;
  std::string direction;
  double clip = 0;
  Node* x = nullptr;     // (seq, batch, input)
  Node* lens = nullptr;  // (batch) int, or null
};

// transposed: W is (dirs, input, gates*hidden), as com.microsoft.DynamicQuantizeLSTM has it.
RnnSetup setup(OpContext& ctx, int64_t gates, bool transposed = false) {
  Graph& g = ctx.g;
  RnnSetup s;
  s.gates = gates;
  s.batch_first = ctx.attr_int("layout", 0) == 1;
  Node* x = ctx.input(0);
  if (x->shape.size() != 3) ctx.fail("X must be 3-D");
  if (s.batch_first) x = g.permute(x, {1, 0, 2});
  s.x = x;
  s.seq = x->shape[0], s.batch = x->shape[1], s.input = x->shape[2];
  // Every step is unrolled into the graph (a few nodes per step and direction): a longer
  // sequence is refused here, not unrolled until memory runs out (fuzz_onnx: an X reshaped
  // from a zero-size tensor to 4,194,308 steps took 8 GB in 14 s).
  constexpr int64_t kMaxSteps = int64_t{1} << 14;
  if (s.seq > kMaxSteps)
    ctx.fail("sequence length " + std::to_string(s.seq) + " exceeds the unrolling limit of " +
             std::to_string(kMaxSteps) + " steps");
  s.direction = ctx.attr_string("direction", "forward");
  if (s.direction != "forward" && s.direction != "reverse" && s.direction != "bidirectional")
    ctx.fail("unknown direction '" + s.direction + "'");
  s.dirs = s.direction == "bidirectional" ? 2 : 1;
  Node* w = ctx.input(1);
  const size_t in_dim = transposed ? 1 : 2, gate_dim = transposed ? 2 : 1;
  if (w->shape.size() != 3 || w->shape[0] != s.dirs || w->shape[in_dim] != s.input || w->shape[gate_dim] % gates)
    ctx.fail("W " + shape_str(w->shape) + " does not fit");
  s.hidden = w->shape[gate_dim] / gates;
  if (ctx.has_attr("hidden_size") && ctx.attr_int("hidden_size", 0) != s.hidden)
    ctx.fail("hidden_size does not match W");
  s.clip = ctx.attr_float("clip", 0.0f);
  if (Node* lens = ctx.optional_input(4)) {
    if (lens->shape != Shape{s.batch}) ctx.fail("sequence_lens must be (batch)");
    // Compared in 32 bits (the operator's type): a GPU has no 64-bit integer ALU to spare, and
    // Mesa 22.3's rusticl miscompiled `2L < (long)len` as always true.
    DType t = lens->dtype == DType::I64 ? DType::I64 : DType::I32;
    s.lens = g.reshape(g.cast(lens, t), {s.batch, 1});
  }
  return s;
}

// Slice d of a (dirs, ...) parameter, without the dirs dim.
Node* dir_slice(Graph& g, Node* p, int64_t d) {
  Shape s(p->shape.begin() + 1, p->shape.end());
  return g.reshape(strided_slice(g, p, 0, d, 1, 1), s);
}

// Rows [k*hidden, (k+1)*hidden) of a (gates*hidden, ...) matrix or (gates*hidden) vector.
Node* gate_rows(Graph& g, Node* p, int64_t k, int64_t hidden) { return strided_slice(g, p, 0, k * hidden, hidden, 1); }

// (batch, n) x (m, n)^T -> (batch, m)
Node* times_transposed(Graph& g, Node* a, Node* b) { return matmul(g, a, g.permute(b, {1, 0})); }

// (rows, n) times one direction's weights: (rows, gates*hidden) gate pre-activations.
using Product = std::function<Node*(Node* x)>;

// Runs the recurrence of one direction. step(t, x_proj per gate, h, extra state) returns the
// new state; the first entry of the state is h.
using Step = std::function<std::vector<Node*>(const std::vector<Node*>& xw, const std::vector<Node*>& state)>;

struct DirResult {
  std::vector<Node*> ys;  // per time step (batch, hidden), in time order
  std::vector<Node*> final_state;
};

DirResult run_direction(OpContext& ctx, const RnnSetup& s, const Product& times_w, Node* wb, bool reverse,
                        std::vector<Node*> state, const Step& step) {
  Graph& g = ctx.g;
  // X W^T + Wb for every step: (seq*batch, gates*hidden), split per gate.
  Node* xw = times_w(g.reshape(s.x, {s.seq * s.batch, s.input}));
  if (wb) xw = g.binary(Op::Add, xw, g.reshape(wb, {1, s.gates * s.hidden}));
  xw = g.reshape(xw, {s.seq, s.batch, s.gates * s.hidden});
  DirResult r;
  r.ys.assign(size_t(s.seq), nullptr);
  Node* zero = g.constant(0, s.x->dtype, {s.batch, s.hidden});
  for (int64_t i = 0; i < s.seq; ++i) {
    int64_t t = reverse ? s.seq - 1 - i : i;
    Node* xt = g.reshape(strided_slice(g, xw, 0, t, 1, 1), {s.batch, s.gates * s.hidden});
    std::vector<Node*> parts;
    for (int64_t k = 0; k < s.gates; ++k) parts.push_back(strided_slice(g, xt, 1, k * s.hidden, s.hidden, 1));
    std::vector<Node*> next = step(parts, state);
    Node* y = next[0];
    if (s.lens) {  // steps at or past the length keep the state and output 0
      Node* active = g.binary(Op::CmpLt, g.constant(double(t), s.lens->dtype), s.lens);  // (batch, 1)
      for (size_t j = 0; j < next.size(); ++j) next[j] = g.where(active, next[j], state[j]);
      y = g.where(active, y, zero);
    }
    r.ys[size_t(t)] = y;
    state = next;
  }
  r.final_state = state;
  return r;
}

Node* clip(Graph& g, const RnnSetup& s, Node* x) {
  if (s.clip <= 0) return x;
  return g.binary(Op::Min, g.binary(Op::Max, x, scalar(g, -s.clip, x)), scalar(g, s.clip, x));
}

// Initial state input i as (dirs, batch, hidden) sliced for direction d, or zeros.
Node* initial(OpContext& ctx, const RnnSetup& s, size_t i, int64_t d) {
  Node* h0 = ctx.optional_input(i);
  if (!h0) return ctx.g.constant(0, s.x->dtype, {s.batch, s.hidden});
  if (h0->shape.size() != 3) ctx.fail("initial state must be 3-D");
  if (s.batch_first) h0 = ctx.g.permute(h0, {1, 0, 2});
  if (h0->shape != Shape{s.dirs, s.batch, s.hidden}) ctx.fail("initial state " + shape_str(h0->shape) + " does not fit");
  return dir_slice(ctx.g, h0, d);
}

// Y (seq, dirs, batch, hidden) and the stacked final states (dirs, batch, hidden), in the
// node's layout.
Outs assemble(OpContext& ctx, const RnnSetup& s, const std::vector<DirResult>& dirs, size_t num_states) {
  Graph& g = ctx.g;
  Outs outs;
  if (ctx.output_used(0)) {
    std::vector<Node*> steps;
    for (int64_t t = 0; t < s.seq; ++t) {
      std::vector<Node*> per_dir;
      for (const DirResult& r : dirs) per_dir.push_back(g.reshape(r.ys[size_t(t)], {1, 1, s.batch, s.hidden}));
      steps.push_back(concat(g, per_dir, 1));
    }
    Node* y = concat(g, steps, 0);  // (seq, dirs, batch, hidden)
    if (s.batch_first) y = g.permute(y, {2, 0, 1, 3});
    outs.push_back(y);
  } else {
    outs.push_back(nullptr);
  }
  for (size_t k = 0; k < num_states; ++k) {
    if (!ctx.output_used(1 + k)) {
      outs.push_back(nullptr);
      continue;
    }
    std::vector<Node*> per_dir;
    for (const DirResult& r : dirs) per_dir.push_back(g.reshape(r.final_state[k], {1, s.batch, s.hidden}));
    Node* h = concat(g, per_dir, 0);
    if (s.batch_first) h = g.permute(h, {1, 0, 2});
    outs.push_back(h);
  }
  return outs;
}

// Bias input 3 (dirs, 2*gates*hidden) for direction d split into (Wb, Rb), or nulls.
std::pair<Node*, Node*> biases(OpContext& ctx, const RnnSetup& s, int64_t d) {
  Node* b = ctx.optional_input(3);
  if (!b) return {nullptr, nullptr};
  if (b->shape != Shape{s.dirs, 2 * s.gates * s.hidden}) ctx.fail("B " + shape_str(b->shape) + " does not fit");
  Node* bd = dir_slice(ctx.g, b, d);
  return {strided_slice(ctx.g, bd, 0, 0, s.gates * s.hidden, 1),
          strided_slice(ctx.g, bd, 0, s.gates * s.hidden, s.gates * s.hidden, 1)};
}

Node* check_r(OpContext& ctx, const RnnSetup& s, bool transposed = false) {
  Node* r = ctx.input(2);
  Shape want = transposed ? Shape{s.dirs, s.hidden, s.gates * s.hidden} : Shape{s.dirs, s.gates * s.hidden, s.hidden};
  if (r->shape != want) ctx.fail("R " + shape_str(r->shape) + " does not fit");
  return r;
}

// Direction d's float weights (gates*hidden, n), applied transposed.
Product float_product(Graph& g, Node* weights, int64_t d) {
  Node* w = dir_slice(g, weights, d);
  return [&g, w](Node* x) { return times_transposed(g, x, w); };
}

Outs lower_rnn(OpContext& ctx) {
  Graph& g = ctx.g;
  RnnSetup s = setup(ctx, 1);
  Node* r_all = check_r(ctx, s);
  auto acts = activations(ctx, {"Tanh"}, s.dirs);
  std::vector<DirResult> results;
  for (int64_t d = 0; d < s.dirs; ++d) {
    Node* r = dir_slice(g, r_all, d);
    auto [wb, rb] = biases(ctx, s, d);
    Node* b = wb ? g.binary(Op::Add, wb, rb) : nullptr;
    const Activation& f = acts[size_t(d)];
    Step step = [&](const std::vector<Node*>& xw, const std::vector<Node*>& st) {
      Node* pre = g.binary(Op::Add, xw[0], times_transposed(g, st[0], r));
      return std::vector<Node*>{apply_activation(ctx, f, clip(g, s, pre))};
    };
    bool reverse = s.direction == "reverse" || d == 1;
    results.push_back(run_direction(ctx, s, float_product(g, ctx.input(1), d), b, reverse, {initial(ctx, s, 5, d)}, step));
  }
  return assemble(ctx, s, results, 1);
}

// Gate order z, r, h.
Outs lower_gru(OpContext& ctx) {
  Graph& g = ctx.g;
  RnnSetup s = setup(ctx, 3);
  Node* r_all = check_r(ctx, s);
  auto acts = activations(ctx, {"Sigmoid", "Tanh"}, s.dirs);
  bool linear_before_reset = ctx.attr_int("linear_before_reset", 0) != 0;
  std::vector<DirResult> results;
  for (int64_t d = 0; d < s.dirs; ++d) {
    Node* r = dir_slice(g, r_all, d);
    // The recurrent products of the gates that read h itself (z, r; h's too with
    // linear_before_reset) as one product, as the LSTM's: a step is then one product kernel
    // and one for the gates, not a product kernel per gate (PLCMOS's bidirectional GRUs over
    // 194 steps: 3 kernels a step and direction, 2328 in all).
    const int64_t shared_gates = linear_before_reset ? 3 : 2;
    Node* r_shared = strided_slice(g, r, 0, 0, shared_gates * s.hidden, 1);
    Node* rh = gate_rows(g, r, 2, s.hidden);
    auto [wb, rb] = biases(ctx, s, d);
    Node *rbz = nullptr, *rbr = nullptr, *rbh = nullptr;
    if (rb) rbz = gate_rows(g, rb, 0, s.hidden), rbr = gate_rows(g, rb, 1, s.hidden), rbh = gate_rows(g, rb, 2, s.hidden);
    const Activation &f = acts[size_t(2 * d)], &gact = acts[size_t(2 * d + 1)];
    auto add = [&](Node* a, Node* b) { return b ? g.binary(Op::Add, a, b) : a; };
    Step step = [&](const std::vector<Node*>& xw, const std::vector<Node*>& st) {
      Node* h = st[0];
      Node* hr = times_transposed(g, h, r_shared);  // (batch, shared_gates * hidden)
      auto hr_gate = [&](int64_t k) { return strided_slice(g, hr, 1, k * s.hidden, s.hidden, 1); };
      Node* z = apply_activation(ctx, f, clip(g, s, add(add(xw[0], hr_gate(0)), rbz)));
      Node* rt = apply_activation(ctx, f, clip(g, s, add(add(xw[1], hr_gate(1)), rbr)));
      Node* hh;
      if (linear_before_reset) hh = g.binary(Op::Add, xw[2], g.binary(Op::Mul, rt, add(hr_gate(2), rbh)));
      else hh = add(g.binary(Op::Add, xw[2], times_transposed(g, g.binary(Op::Mul, rt, h), rh)), rbh);
      hh = apply_activation(ctx, gact, clip(g, s, hh));
      // (1 - z) * hh + z * h
      Node* next = g.binary(Op::Add, g.binary(Op::Mul, g.binary(Op::Sub, scalar(g, 1, z), z), hh), g.binary(Op::Mul, z, h));
      return std::vector<Node*>{next};
    };
    bool reverse = s.direction == "reverse" || d == 1;
    results.push_back(run_direction(ctx, s, float_product(g, ctx.input(1), d), wb, reverse, {initial(ctx, s, 5, d)}, step));
  }
  return assemble(ctx, s, results, 1);
}

// Gate order i, o, f, c; peepholes P (dirs, 3*hidden) in order i, o, f. products(d) gives
// direction d's input and recurrent products.
Outs lstm(OpContext& ctx, const RnnSetup& s, const std::function<std::pair<Product, Product>(int64_t d)>& products) {
  Graph& g = ctx.g;
  auto acts = activations(ctx, {"Sigmoid", "Tanh", "Tanh"}, s.dirs);
  bool input_forget = ctx.attr_int("input_forget", 0) != 0;
  Node* p_all = ctx.optional_input(7);
  if (p_all && p_all->shape != Shape{s.dirs, 3 * s.hidden}) ctx.fail("P " + shape_str(p_all->shape) + " does not fit");
  std::vector<DirResult> results;
  for (int64_t d = 0; d < s.dirs; ++d) {
    auto [times_w, times_r] = products(d);
    Node* b = nullptr;
    auto [wb, rb] = biases(ctx, s, d);
    if (wb) b = g.binary(Op::Add, wb, rb);
    Node *pi = nullptr, *po = nullptr, *pf = nullptr;
    if (p_all) {
      Node* p = dir_slice(g, p_all, d);
      pi = gate_rows(g, p, 0, s.hidden), po = gate_rows(g, p, 1, s.hidden), pf = gate_rows(g, p, 2, s.hidden);
    }
    const Activation &f = acts[size_t(3 * d)], &gact = acts[size_t(3 * d + 1)], &hact = acts[size_t(3 * d + 2)];
    Step step = [&](const std::vector<Node*>& xw, const std::vector<Node*>& st) {
      Node *h = st[0], *c = st[1];
      Node* hr_all = times_r(h);  // (batch, 4*hidden)
      auto gate = [&](int64_t k) { return g.binary(Op::Add, xw[size_t(k)], strided_slice(g, hr_all, 1, k * s.hidden, s.hidden, 1)); };
      auto peep = [&](Node* pre, Node* p, Node* cell) { return p ? g.binary(Op::Add, pre, g.binary(Op::Mul, p, cell)) : pre; };
      Node* it = apply_activation(ctx, f, clip(g, s, peep(gate(0), pi, c)));
      Node* ft = input_forget ? g.binary(Op::Sub, scalar(g, 1, it), it) : apply_activation(ctx, f, clip(g, s, peep(gate(2), pf, c)));
      Node* ct = apply_activation(ctx, gact, clip(g, s, gate(3)));
      Node* cnext = g.binary(Op::Add, g.binary(Op::Mul, ft, c), g.binary(Op::Mul, it, ct));
      Node* ot = apply_activation(ctx, f, clip(g, s, peep(gate(1), po, cnext)));
      Node* hnext = g.binary(Op::Mul, ot, apply_activation(ctx, hact, cnext));
      return std::vector<Node*>{hnext, cnext};
    };
    bool reverse = s.direction == "reverse" || d == 1;
    results.push_back(run_direction(ctx, s, times_w, b, reverse, {initial(ctx, s, 5, d), initial(ctx, s, 6, d)}, step));
  }
  return assemble(ctx, s, results, 2);
}

Outs lower_lstm(OpContext& ctx) {
  RnnSetup s = setup(ctx, 4);
  Node* r_all = check_r(ctx, s);
  return lstm(ctx, s, [&](int64_t d) {
    return std::pair{float_product(ctx.g, ctx.input(1), d), float_product(ctx.g, r_all, d)};
  });
}

// com.microsoft.DynamicQuantizeLSTM: an LSTM with 8-bit weights W (dirs, input, 4*hidden) and
// R (dirs, hidden, 4*hidden), scales and zero points per direction (dirs) or per column
// (dirs, 4*hidden) in inputs 8-11. onnxruntime (rnn_helpers.cc ComputeGemm) quantizes each
// product's float operand to uint8 as DynamicQuantizeLinear does, over all of it (X once for
// all steps, h once per step), takes the int32 product less the zero points and scales it by
// x_scale * w_scale in float32.
Outs lower_dynamic_quantize_lstm(OpContext& ctx) {
  Graph& g = ctx.g;
  RnnSetup s = setup(ctx, 4, true);
  Node* r_all = check_r(ctx, s, true);
  auto product = [&](Node* weights, size_t scale_input, int64_t d) -> Product {
    Node *scale = ctx.input(scale_input), *zp = ctx.input(scale_input + 1);
    const char* what = scale_input == 8 ? "W" : "R";
    for (Node* p : {scale, zp})
      if (p->shape != Shape{s.dirs} && p->shape != Shape{s.dirs, 4 * s.hidden})
        ctx.fail(std::string(what) + "'s scale / zero point " + shape_str(p->shape) + " must be (" +
                 std::to_string(s.dirs) + ") or (" + std::to_string(s.dirs) + ", " + std::to_string(4 * s.hidden) + ")");
    if (scale->dtype != DType::F32) ctx.fail(std::string(what) + "'s scale must be float32");
    if ((weights->dtype != DType::I8 && weights->dtype != DType::U8) || zp->dtype != weights->dtype)
      ctx.fail(std::string(what) + " and its zero point must both be int8 or uint8");
    // (n, 4*hidden) and its zero point and scale, broadcasting along the columns
    Node* w = dir_slice(g, weights, d);
    Node* w_zp = zp->shape.size() == 2 ? dir_slice(g, zp, d) : g.reshape(dir_slice(g, zp, d), {});
    Node* w_scale = g.reshape(dir_slice(g, scale, d), {1, scale->shape.size() == 2 ? 4 * s.hidden : 1});
    return [&ctx, w, w_zp, w_scale](Node* x) {
      DynamicQuantized q = dynamic_quantize_u8(ctx.g, x);
      Node* acc = ctx.g.cast(integer_matmul(ctx, q.y, q.zero_point, w, w_zp), DType::F32);
      return ctx.g.binary(Op::Mul, acc, ctx.g.binary(Op::Mul, q.scale, w_scale));
    };
  };
  if (ctx.input(0)->dtype != DType::F32) ctx.fail("X must be float32");
  return lstm(ctx, s, [&](int64_t d) { return std::pair{product(ctx.input(1), 8, d), product(r_all, 10, d)}; });
}

}  // namespace

void add_rnn_ops(OpTable& t) {
  t["RNN"] = lower_rnn;
  t["GRU"] = lower_gru;
  t["LSTM"] = lower_lstm;
  t["com.microsoft.DynamicQuantizeLSTM"] = lower_dynamic_quantize_lstm;
}

}  // namespace edgec::onnx_frontend

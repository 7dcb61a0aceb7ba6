#include "schedule/schedule.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace edgec {

int Schedule::buffer_of(const Node* n) const {
  return n->id < static_cast<int>(node_buffer.size()) ? node_buffer[n->id] : -1;
}

Shape ScheduledBuffer::stored_shape() const {
  if (layout.empty()) return shape;
  Shape s;
  for (int64_t d : layout) s.push_back(shape[d]);
  return s;
}

namespace {

// An elementwise value that several kernels (or several index contexts of one kernel) would
// compute is recomputed in each of them unless its fused subtree exceeds this many ops.
// Consumers that compute it at the same element of the same kernel (the cubic weight
// polynomial's three reads of its argument) share one computation and cost nothing.
constexpr int kMaxRecomputedOps = 6;
// An Expand (a broadcast) of a value whose last few ops are cheap (no division, no
// transcendental) and read only there may recompute those ops for every repeat, storing the
// shared values below them instead, where that stores fewer values in all: GridSample's 16
// bicubic tap combinations (flat index, weight product, validity: 48 broadcast values) are
// 2-3 ops each over 24 per-dim taps (ops_grid_sample.cc).
constexpr int kMaxRepeatedHeadOps = 3;

bool is_leaf(const Node* n) { return n->op == Op::Input || n->op == Op::Weight || n->op == Op::Const; }

// Views that read each source element at most once: a reduce seen through them is
// still computed once per element, so it may share a kernel with them.
bool reads_each_once(Op op) { return is_movement(op) && op != Op::Expand && op != Op::Window; }

bool merges_channels_with_space(const Shape& from, const Shape& to);  // below, with the layouts

// Whether the Reshape r is (N, C, H*W) -> (N, C, H, W) of (N, H*W, C) tokens transposed
// (Permute (0, 2, 1)): PVTv2's and SegFormer's MLP handing its first Linear layer's result to
// a depthwise conv (x.transpose(1, 2).view(B, C, H, W)). choose_channels_last stores it
// channels-last: in the tokens' own order.
bool splits_tokens_into_rows(const Node* r) {
  if (r->op != Op::Reshape || r->shape.size() != 4 || r->srcs.empty()) return false;
  const Node* t = r->srcs[0];
  return t->op == Op::Permute && t->axes == std::vector<int64_t>{0, 2, 1} && t->shape.size() == 3 &&
         t->shape[0] == r->shape[0] && t->shape[1] == r->shape[1];
}

class Scheduler {
 public:
  explicit Scheduler(const Graph& g) : graph_(g), live_(g.live_nodes()) {
    int max_id = 0;
    for (const Node* n : live_) max_id = std::max(max_id, n->id);
    // A graph input that no output depends on is not live, but still gets a buffer.
    for (const GraphInput& in : g.inputs()) max_id = std::max(max_id, in.node->id);
    realized_.assign(max_id + 1, false);
    uses_.assign(max_id + 1, 0);
    consumer_.assign(max_id + 1, nullptr);
    consumers_.assign(max_id + 1, {});
    for (const Node* n : live_)
      for (const Node* s : n->srcs) {
        uses_[s->id]++;
        consumer_[s->id] = n;
        if (consumers_[s->id].empty() || consumers_[s->id].back() != n) consumers_[s->id].push_back(n);
      }
  }

  Schedule run() {
    mark_required();
    // Walking a kernel can discover reduces that cannot share it; realize those and
    // walk again until nothing changes.
    while (split_kernels()) {
    }
    return build();
  }

 private:
  void realize(const Node* n) {
    if (n->op != Op::Const) realized_[n->id] = true;
  }

  int fused_op_count(const Node* n, std::set<const Node*>& seen) const {
    if (is_leaf(n) || realized_[n->id] || !seen.insert(n).second) return 0;
    int count = is_movement(n->op) ? 0 : 1;
    for (const Node* s : n->srcs) count += fused_op_count(s, seen);
    return count;
  }

  void mark_required() {
    std::vector<const Node*> expand_sources;  // broadcast values that may be recomputed per repeat
    for (const GraphInput& in : graph_.inputs()) realize(in.node);
    for (const Node* n : live_)
      if (n->realize) realize(n);
    // A Const output still needs a kernel that fills the caller's buffer.
    for (const GraphOutput& out : graph_.outputs()) realized_[out.node->id] = true;
    for (const Node* n : live_) {
      if (n->op == Op::Input || n->op == Op::Weight) realize(n);
      if (is_reduce(n->op)) {
        // The reduce's kernel ends after the elementwise ops (and the views that read
        // each element once) that alone consume it.
        const Node* tail = n;
        // A conv's result is not carried through views that scramble its channels (a
        // reshape that splits the channel dim, with a permutation: an SSD head's (N, A*K,
        // H, W) -> (N, H*W*A, K)): the kernel would loop over the scrambled shape with
        // div/mod index math and lose the conv's register tile over the channels (3 GFLOP/s
        // instead of 40-80). The tail stops before such a run of views; a copy kernel
        // applies them. Views that keep the channel dim whole stay fused (ViT's patch
        // embedding (N, D, H, W) -> (N, H*W, D): its tile runs over all H*W pixels).
        const bool conv = is_conv_sum(n);
        const Node* before_views = nullptr;  // the tail before the current run of views
        bool run_permutes = false, run_reshapes = false;  // run_reshapes: one splits the channels
        bool permuted = false;                            // the tail is past a Permute of the reduce
        while (!realized_[tail->id]) {
          if (uses_[tail->id] != 1) {
            // Several elementwise consumers that meet again (x * sigmoid(x), GELU): the
            // whole diamond is the epilogue, x computed once per element.
            const Node* exit = elementwise_diamond_exit(tail);
            if (!exit) break;
            tail = exit;
            before_views = nullptr;
            run_permutes = run_reshapes = false;
            continue;
          }
          const Node* consumer = single_consumer(tail);
          if (!consumer) break;
          // Not through a Pad: the padded copy would be a bigger buffer and one more pass.
          bool view = reads_each_once(consumer->op) && consumer->op != Op::Pad;
          if (!(is_elementwise(consumer->op) || view)) break;
          // Nor into a permutation that only a realized Pad reads (a padded channels-last copy, ops_nn.cc
          // channels_last_padded_spatial): the reduce would store its result permuted, in a
          // layout no kernel reads well; stored before it, it keeps its own.
          if (consumer->op == Op::Permute && only_padded_after(consumer)) break;
          // A widening cast is read with the consumer's loads: the narrow value is stored
          // (bf16 activations, half the bytes; the bf16 dot products load pairs of them).
          if (is_widening_cast(consumer)) break;
          // Nor through a reshape that cuts the innermost dim short (a matrix product's K split
          // in bf16 pairs): the kernel vectorizes that dim, and 2 lanes waste the vectors.
          // (Tokens split into rows are stored channels-last: their innermost dim stays C.)
          if (consumer->op == Op::Reshape && !consumer->shape.empty() && !tail->shape.empty() &&
              consumer->shape.back() < std::min<int64_t>(tail->shape.back(), 16) && !splits_tokens_into_rows(consumer))
            break;
          // Nor through a reshape that merges a matrix product's rows (Magika's (2048, 64) Dense
          // result read as (512, 256)): the kernel would loop over the merged rows with div/mod
          // index math, its register tile over the products' columns lost (14 GFLOP/s, 2x
          // onnxruntime's time). Stored as computed, row-major (a 2-D or 3-D value has no other
          // layout), its bytes are those of the merged shape, read through the view for free.
          // (Not past a Permute: attention's (S, H, D) heads merged into (S, H*D) kept their
          // tile along H*D, ViT-B/16's 0.70 ms against 0.80 stored as (S, H, D).)
          if (!conv && !permuted && n->op == Op::ReduceSum && consumer->op == Op::Reshape && tail->shape.size() <= 3 &&
              !tail->shape.empty() && !consumer->shape.empty() && !only_unit_dims_change(tail, consumer) &&
              consumer->shape.back() > tail->shape.back() && consumer->shape.back() % tail->shape.back() == 0)
            break;
          // Nor through a reshape that splits a matrix product's columns into pieces that are no
          // whole number of its weight's column blocks (MobileViT's qkv Linear, 360 columns ->
          // (3, heads 4, 30), then permuted to (3, heads, tokens, 30)): the kernel's vectors
          // along the 30 straddled the blocks (div/mod weight index, 13-22 GFLOP/s). Stored as
          // computed, the heads are read through the permuted view: mobilevit_xs's qkv
          // products 0.57 -> 0.13 ms (36 tokens) and 0.34 -> 0.06 ms (9 tokens).
          if (!conv && !permuted && n->op == Op::ReduceSum && consumer->op == Op::Reshape && !tail->shape.empty() &&
              !consumer->shape.empty() && consumer->shape.back() < tail->shape.back() &&
              tail->shape.back() % consumer->shape.back() == 0 && consumer->shape.back() % kColumnBlock != 0)
            break;
          // (The conv's own reshape of its sum to (N, M, H, W) does not count: it only drops
          // 1-dims. Without a bias a model's reshape after the conv is folded into it.)
          if (conv && !(tail == n && consumer->op == Op::Reshape && only_unit_dims_change(n, consumer))) {
            if (!view) {
              before_views = nullptr;
              run_permutes = run_reshapes = false;
            } else {
              if (!before_views) before_views = tail;
              run_permutes = run_permutes || consumer->op == Op::Permute;
              // The conv's channels: dim 1 of its (N, M, O...) result, or of the sum's (N, G,
              // M/G, O...) when a model's reshape was folded into the conv's own.
              const Shape& shape = before_views->shape;
              const int64_t channels = before_views == n && shape.size() > 2 ? shape[1] * shape[2]
                                       : shape.size() > 1                     ? shape[1]
                                                                              : 1;
              run_reshapes = run_reshapes || (consumer->op == Op::Reshape &&
                                              std::find(consumer->shape.begin(), consumer->shape.end(), channels) ==
                                                  consumer->shape.end());
              // A reshape that merges the channels with the pixels after them (a GroupNorm with
              // one group: (N, C, H, W) -> (N, 1, C*H*W), MobileViTv2; a Flatten) also hides
              // the channel dim in a flat one: 4 GFLOP/s. Stored before it as (N, C, H, W) (the
              // tile's transposed stores), the merged view of that buffer is a plain read.
              if (!run_permutes && before_views == tail && consumer->op == Op::Reshape &&
                  merges_channels_with_space(tail->shape, consumer->shape))
                break;
              // So does one that merges a padded conv's rows into a run of pixels ((N, C, H, W) ->
              // (N, C, H*W): PVTv2's depthwise conv back to tokens): its padding tests took
              // div/mod of the run for every tap, in vectors along the run (10 GFLOP/s). Stored
              // as (N, C, H, W) (channels-last), the token view of it reads plainly. An unpadded
              // conv (ViT's patch embedding) tests nothing and stays fused.
              if (!run_permutes && before_views == tail && consumer->op == Op::Reshape && reads_padding(n) &&
                  merges_rows(tail->shape, consumer->shape))
                break;
              if (run_permutes && run_reshapes) {
                // The copy kernel stores the end of the run of views, so that what reads it
                // (a Concat of several heads) reads a plain buffer, not the div/mod chain.
                const Node* end = consumer;
                while (uses_[end->id] == 1 && !realized_[end->id]) {
                  const Node* next = single_consumer(end);
                  if (!next || !reads_each_once(next->op) || next->op == Op::Pad) break;
                  end = next;
                }
                realize(end);
                tail = before_views;
                break;
              }
            }
          }
          permuted = permuted || consumer->op == Op::Permute;
          tail = consumer;
        }
        realize(tail);
      }
      // A data-dependent read needs its source in memory: no view or elementwise op of
      // the source can be fused through it. The index is an ordinary fused value.
      if (n->op == Op::Gather) realize(n->srcs[0]);
      // A spatial window (a k x k or strided conv, a pooling) reading its input through
      // views that scramble the layout (ShuffleNet's channel shuffle: reshape, transpose,
      // reshape) would redo the div/mod index math for every tap of every output (0.3
      // GFLOP/s depthwise convs): the scrambled input is stored once, by a copy kernel,
      // and the window reads it plainly. A 1x1 window reads each element once per output
      // row of channels and keeps reading through the views.
      if (n->op == Op::Window && spatial_window(n)) {
        const Node* x = n->srcs[0];
        if (x->op == Op::Pad && !realized_[x->id]) x = x->srcs[0];
        if (scrambled_view(x)) realize(x);
      }
      if (n->op == Op::Expand || n->op == Op::Window) {
        // A view that repeats elements would recompute its source for every repeat (a
        // widening cast may be: it is a load).
        const Node* src = n->srcs[0];
        while ((is_movement(src->op) || is_widening_cast(src)) && !realized_[src->id]) src = src->srcs[0];
        std::vector<const Node*> frontier;
        if (n->op == Op::Expand && !feeds_reduce(n) && repeated_head(src, frontier)) {
          if (std::find(expand_sources.begin(), expand_sources.end(), src) == expand_sources.end())
            expand_sources.push_back(src);  // decided below, with the others sharing its frontier
        } else if (!is_leaf(src)) {
          realize(src);
        }
      }
    }
    realize_expand_sources(expand_sources);
    // Producers first: once the first value over a scrambled view is stored, its consumers
    // read it plainly.
    for (const Node* n : live_)
      if (uses_[n->id] > 1 && !is_leaf(n) && !is_movement(n->op) && reads_scrambled_views(n)) realize(n);
    // Consumers first: where a node's consumers are decided, the contexts computing it are known.
    ComputeContexts contexts(realized_.size());
    std::vector<const Node*> stored_for_cost;
    for (auto it = live_.rbegin(); it != live_.rend(); ++it) {
      const Node* n = *it;
      if (realized_[n->id]) continue;
      const bool computed_again = contexts.of(n, consumers_[n->id], realized_).size() > 1;
      if (uses_[n->id] > 1 && !is_leaf(n) && !is_movement(n->op) && (computed_again || keeps_own_kernel(n))) {
        std::set<const Node*> seen;
        if (fused_op_count(n, seen) > kMaxRecomputedOps) {
          realize(n);
          stored_for_cost.push_back(n);
        }
      }
    }
    // Then producers first: a value whose cost was counted over producers that were stored
    // after it costs only its own ops above them (GridSample's floor of a stored reflected
    // coordinate: one op, not a kernel). Its consumers' counts include it again, so no
    // recomputed value exceeds kMaxRecomputedOps ops.
    for (auto it = stored_for_cost.rbegin(); it != stored_for_cost.rend(); ++it) {
      const Node* n = *it;
      realized_[n->id] = false;
      std::set<const Node*> seen;
      if (fused_op_count(n, seen) > kMaxRecomputedOps) realized_[n->id] = true;
    }
  }

  // Whether n, read by one kernel at one element, still keeps its own kernel: it computes a
  // reduce (a GRU gate's product, whose sigmoid two ops of one kernel read; fused, the kernel
  // would hold two reduces and split_kernels would store them instead) or reads through a Pad
  // into a kernel with a reduce (a Concat: stored, each piece is a kernel writing its slice;
  // fused, every element selects among the pieces: Basic Pitch's 18-piece CQT Concat, read
  // twice by a reduce, ran the model 6% slower). A kernel without one is cut at the pieces'
  // ends (split_at_part_boundaries) as where one op reads the Concat: PLCMOS's LeakyReLU
  // (three ops reading the conv) over a dilated conv's regions is then one pass, not two.
  bool keeps_own_kernel(const Node* n) const {
    std::set<const Node*> seen;
    std::optional<bool> into_reduce;  // feeds_reduce(n), asked at the first Pad
    std::function<bool(const Node*)> walk = [&](const Node* x) {
      if (is_leaf(x) || (x != n && realized_[x->id]) || !seen.insert(x).second) return false;
      if (is_reduce(x->op)) return true;
      if (x->op == Op::Pad) {
        if (!into_reduce) into_reduce = feeds_reduce(n);
        if (*into_reduce) return true;
      }
      for (const Node* src : x->srcs)
        if (walk(src)) return true;
      return false;
    };
    return walk(n);
  }

  // Where each unstored node is computed: one context per (kernel, element of the kernel's
  // loop that reads it). A consumer that is stored is a kernel of its own; an elementwise
  // consumer or a Gather (its index is read at the output's element) computes the node
  // where it is itself computed; a view or a reduce reads it at other elements, a context of
  // its own per context of that consumer. Only whether there are several matters, so each
  // set keeps at most two.
  class ComputeContexts {
   public:
    explicit ComputeContexts(size_t nodes) : sets_(nodes), next_token_(static_cast<int64_t>(nodes)) {}
    const std::set<int64_t>& of(const Node* n, const std::vector<const Node*>& consumers,
                                const std::vector<bool>& realized) {
      std::set<int64_t>& set = sets_[n->id];
      set.clear();
      for (const Node* c : consumers) {
        if (realized[c->id]) {
          add(set, c->id);
        } else if (is_elementwise(c->op) || c->op == Op::Gather) {
          for (int64_t x : sets_[c->id]) add(set, x);
        } else {
          for (int64_t x : sets_[c->id]) {
            auto [it, fresh] = tokens_.insert({{c->id, x}, next_token_});
            if (fresh) ++next_token_;
            add(set, it->second);
          }
        }
      }
      return set;
    }

   private:
    static void add(std::set<int64_t>& set, int64_t x) {
      if (set.size() < 2) set.insert(x);
    }
    std::vector<std::set<int64_t>> sets_;
    std::map<std::pair<int, int64_t>, int64_t> tokens_;
    int64_t next_token_;
  };

  // Whether a reduce reads n through values computed with it (a matrix product's broadcast
  // operand): a head recomputed there would run in its inner loop (Swin's scaled queries, 49
  // multiplies per element in place of 1). Unknown past 256 nodes: yes.
  bool feeds_reduce(const Node* n) const {
    std::set<const Node*> seen;
    std::vector<const Node*> open{n};
    while (!open.empty()) {
      const Node* x = open.back();
      open.pop_back();
      if (!seen.insert(x).second) continue;
      if (seen.size() > 256 || is_reduce(x->op)) return true;
      if (x != n && realized_[x->id]) continue;
      open.insert(open.end(), consumers_[x->id].begin(), consumers_[x->id].end());
    }
    return false;
  }

  // The ops an Expand may recompute per repeat: cheap, no division or transcendental.
  static bool cheap_op(Op op) {
    switch (op) {
      case Op::Add: case Op::Sub: case Op::Mul: case Op::Max: case Op::Min: case Op::Neg: case Op::Abs:
      case Op::CmpLt: case Op::CmpEq: case Op::And: case Op::Or: case Op::Xor: case Op::Not: case Op::Where:
      case Op::Cast:
        return true;
      default:
        return false;
    }
  }

  // Whether the broadcast value src may be recomputed for every repeat: it and the nodes it
  // alone reads (at most kMaxRepeatedHeadOps cheap elementwise ops, through views that read
  // each element once) end at stored values, leaves, and values that other nodes read too
  // (frontier: stored in its place).
  bool repeated_head(const Node* src, std::vector<const Node*>& frontier) const {
    frontier.clear();
    if (is_leaf(src) || realized_[src->id] || uses_[src->id] != 1 || !is_elementwise(src->op) || !cheap_op(src->op))
      return false;
    int ops = 0;
    std::set<const Node*> seen;
    std::vector<const Node*> open{src};
    while (!open.empty()) {
      const Node* x = open.back();
      open.pop_back();
      bool repeats = false;
      while (is_movement(x->op) && !realized_[x->id] && !x->srcs.empty()) {
        repeats = repeats || !reads_each_once(x->op);
        x = x->srcs[0];
      }
      if (is_leaf(x) || realized_[x->id] || !seen.insert(x).second) continue;
      if (repeats) return false;  // another broadcast inside: its own rule decides
      if (x == src || (uses_[x->id] == 1 && is_elementwise(x->op) && cheap_op(x->op) && ops < kMaxRepeatedHeadOps)) {
        if (++ops > kMaxRepeatedHeadOps) return false;
        open.insert(open.end(), x->srcs.begin(), x->srcs.end());
      } else if (uses_[x->id] > 1) {
        frontier.push_back(x);
      } else {
        return false;
      }
    }
    return true;
  }

  // The broadcast values whose heads may be recomputed per repeat, grouped by the frontier
  // nodes they share: a group stores its frontier where that is fewer values than its
  // broadcast values, else the values themselves (as every other broadcast source).
  void realize_expand_sources(const std::vector<const Node*>& sources) {
    std::vector<std::vector<const Node*>> frontiers(sources.size());
    std::vector<size_t> group(sources.size());
    for (size_t i = 0; i < sources.size(); ++i) group[i] = i;
    std::function<size_t(size_t)> find = [&](size_t i) { return group[i] == i ? i : group[i] = find(group[i]); };
    std::map<const Node*, size_t> first_reader;
    std::vector<bool> eligible(sources.size());
    for (size_t i = 0; i < sources.size(); ++i) {
      eligible[i] = repeated_head(sources[i], frontiers[i]);
      if (!eligible[i]) continue;
      for (const Node* f : frontiers[i]) {
        auto [it, fresh] = first_reader.insert({f, i});
        if (!fresh) group[find(i)] = find(it->second);
      }
    }
    std::map<size_t, std::pair<std::set<const Node*>, size_t>> groups;  // root -> (frontier, sources)
    for (size_t i = 0; i < sources.size(); ++i) {
      if (!eligible[i]) continue;
      auto& [frontier, count] = groups[find(i)];
      frontier.insert(frontiers[i].begin(), frontiers[i].end());
      ++count;
    }
    for (size_t i = 0; i < sources.size(); ++i) {
      if (!eligible[i]) {
        if (!is_leaf(sources[i])) realize(sources[i]);
        continue;
      }
      const auto& [frontier, count] = groups[find(i)];
      if (frontier.size() >= count) realize(sources[i]);
    }
    for (const auto& [root, g] : groups)
      if (g.first.size() < g.second)
        for (const Node* f : g.first) realize(f);
  }

  // Whether the reshape `to` of `from` only adds or drops 1-dims (affine, no div/mod).
  static bool only_unit_dims_change(const Node* from, const Node* to) {
    auto squeezed = [](const Shape& s) {
      Shape r;
      for (int64_t d : s)
        if (d != 1) r.push_back(d);
      return r;
    };
    return squeezed(from->shape) == squeezed(to->shape);
  }

  // Whether the conv whose products the reduce n sums reads a Pad (its taps test bounds).
  static bool reads_padding(const Node* n) {
    const Node* window = conv_window(n);
    return window && !window->srcs.empty() && window->srcs[0]->op == Op::Pad;
  }

  // Whether the reshape `from` (N, C, H, W) -> `to` (N, C, H*W) merges the rows (H > 1).
  static bool merges_rows(const Shape& from, const Shape& to) {
    return from.size() == 4 && from[2] > 1 && to == Shape{from[0], from[1], from[2] * from[3]};
  }

  // The Window whose products (with the weights) the reduce n sums, read through views; null
  // where n sums no conv's products.
  static const Node* conv_window(const Node* n) {
    if (n->op != Op::ReduceSum || n->srcs.empty()) return nullptr;
    std::vector<const Node*> open{n->srcs[0]};
    for (int steps = 0; !open.empty() && steps < 32; ++steps) {
      const Node* x = open.back();
      open.pop_back();
      if (x->op == Op::Window) return x;
      if (is_movement(x->op) || x->op == Op::Mul || is_widening_cast(x))
        for (const Node* s : x->srcs) open.push_back(s);
    }
    return nullptr;
  }

  // Whether the reduce n sums a conv's products.
  static bool is_conv_sum(const Node* n) { return conv_window(n) != nullptr; }

  static bool spatial_window(const Node* w) {
    for (int64_t k : w->kernel)
      if (k != 1) return true;
    for (int64_t s : w->stride)
      if (s != 1) return true;
    return false;
  }

  // Whether x is a chain of views, down to the first stored or computed value, that holds
  // both a permutation and a reshape that splits or merges dims: reading through it takes
  // div/mod index math.
  bool scrambled_view(const Node* x) const {
    bool permutes = false, reshapes = false;
    while (is_movement(x->op) && !realized_[x->id] && !x->srcs.empty()) {
      permutes = permutes || x->op == Op::Permute;
      reshapes = reshapes || (x->op == Op::Reshape && !only_unit_dims_change(x->srcs[0], x));
      x = x->srcs[0];
    }
    return permutes && reshapes;
  }

  // Whether computing n reads, through its fused elementwise ops (and a Concat's pads), a
  // chain of views whose index math takes div/mod: a permutation and a reshape that splits or
  // merges dims, or two such reshapes (a strided slice between them). A value with several
  // consumers is then stored once: Swin's patch merging (a Concat of four strided slices)
  // read by its LayerNorm's mean, variance and normalization redid the div/mod in each, at
  // 0.3-0.5 GFLOP/s (8% of the model).
  bool reads_scrambled_views(const Node* n) const {
    std::set<const Node*> seen;
    std::function<bool(const Node*)> walk = [&](const Node* x) {
      if (is_leaf(x) || (x != n && realized_[x->id]) || !seen.insert(x).second) return false;
      if (is_movement(x->op)) {
        int permutes = 0, reshapes = 0;
        for (const Node* v = x; is_movement(v->op) && !realized_[v->id] && !v->srcs.empty(); v = v->srcs[0]) {
          permutes += v->op == Op::Permute;
          reshapes += v->op == Op::Reshape && !only_unit_dims_change(v->srcs[0], v);
        }
        return (permutes > 0 && reshapes > 0) || reshapes > 1;
      }
      if (!is_elementwise(x->op)) return false;
      for (const Node* s : x->srcs)
        if (walk(s)) return true;
      return false;
    };
    return walk(n);
  }

  // A reduce that must have its own buffer is stored as the reshape that alone consumes it
  // and only drops or adds 1-dims (a conv's (N, 1, M, H, W, 1, 1, 1) sum as (N, M, H, W)):
  // the same bytes, in the shape its consumers and the layout choice know, and the same
  // affine index math (a reshape that merges dims would need div/mod).
  const Node* reshapes_of(const Node* n) const {
    auto squeezed = [](const Shape& s) {
      Shape r;
      for (int64_t d : s)
        if (d != 1) r.push_back(d);
      return r;
    };
    while (uses_[n->id] == 1 && !realized_[n->id]) {
      const Node* consumer = single_consumer(n);
      if (!consumer || consumer->op != Op::Reshape || realized_[consumer->id]) break;
      if (squeezed(consumer->shape) != squeezed(n->shape)) break;
      n = consumer;
    }
    return n;
  }

  // The nearest node where the elementwise consumers of x (and theirs) meet again: every
  // path from x runs through elementwise ops to it and nothing else leaves the region in
  // between (no other consumer, no realized node); null if there is none. What consumes
  // the exit does not matter (a SiLU read by a pooling and by an elementwise scaling).
  // Small regions only.
  const Node* elementwise_diamond_exit(const Node* x) const {
    constexpr size_t kMaxRegion = 16;
    for (const Node* c : consumers_[x->id])
      if (!is_elementwise(c->op)) return nullptr;
    // Candidates: the elementwise nodes downstream of x.
    std::set<const Node*> downstream;
    std::vector<const Node*> stack(consumers_[x->id].begin(), consumers_[x->id].end());
    while (!stack.empty()) {
      const Node* c = stack.back();
      stack.pop_back();
      if (!is_elementwise(c->op) || !downstream.insert(c).second) continue;
      if (downstream.size() > kMaxRegion) return nullptr;
      for (const Node* u : consumers_[c->id]) stack.push_back(u);
    }
    // Nodes are created after their sources: ids order the candidates nearest first.
    std::vector<const Node*> candidates(downstream.begin(), downstream.end());
    std::sort(candidates.begin(), candidates.end(), [](const Node* a, const Node* b) { return a->id < b->id; });
    for (const Node* exit : candidates) {
      // The region between x and this exit: reachable from x without passing the exit.
      std::set<const Node*> region;
      std::vector<const Node*> open(consumers_[x->id].begin(), consumers_[x->id].end());
      bool closed = true;
      while (!open.empty() && closed) {
        const Node* c = open.back();
        open.pop_back();
        if (c == exit || region.count(c)) continue;
        if (!downstream.count(c) || realized_[c->id] || consumers_[c->id].empty()) closed = false;
        region.insert(c);
        for (const Node* u : consumers_[c->id]) open.push_back(u);
      }
      if (closed) return exit;
    }
    return nullptr;
  }

  // Meaningful only where uses_ is 1.
  const Node* single_consumer(const Node* n) const { return consumer_[n->id]; }

  // Whether the view `n` and the views after it, each the only consumer of the one before,
  // end in a Pad that the frontend realizes (a padded copy; a Concat's pads are fused).
  bool only_padded_after(const Node* n) const {
    while (uses_[n->id] == 1 && !realized_[n->id]) {
      const Node* c = single_consumer(n);
      if (!c) return false;
      if (c->op == Op::Pad) return c->realize;
      if (!reads_each_once(c->op)) return false;
      n = c;
    }
    return false;
  }

  // Returns true if it realized another node.
  bool split_kernels() {
    bool changed = false;
    for (const Node* root : live_) {
      if (!realized_[root->id] || is_leaf(root)) continue;
      const Node* top_reduce = nullptr;
      std::set<std::tuple<const Node*, bool, bool>> seen;
      std::function<void(const Node*, bool, bool)> walk = [&](const Node* n, bool through_view, bool in_reduce) {
        if (n != root && realized_[n->id]) return;
        if (!seen.insert({n, through_view, in_reduce}).second) return;
        if (is_reduce(n->op)) {
          if (through_view || in_reduce || (top_reduce && top_reduce != n)) {
            realize(reshapes_of(n));
            changed = true;
            return;
          }
          top_reduce = n;
          walk(n->srcs[0], false, true);
          return;
        }
        bool repeats = is_movement(n->op) && !reads_each_once(n->op);
        for (const Node* s : n->srcs) walk(s, through_view || repeats, in_reduce);
      };
      walk(root, false, false);
    }
    return changed;
  }

  Schedule build() {
    Schedule s;
    s.node_buffer.assign(realized_.size(), -1);
    auto add_buffer = [&](const Node* n, BufferRole role, const std::string& name) {
      s.buffers.push_back({name, role, n->dtype, n->shape, n, -1, n->dtype, {}});
      return static_cast<int>(s.buffers.size()) - 1;
    };
    for (size_t i = 0; i < graph_.inputs().size(); ++i) {
      const GraphInput& in = graph_.inputs()[i];
      int b = add_buffer(in.node, BufferRole::Input, in.name);
      s.buffers[b].io_index = static_cast<int>(i);
      s.node_buffer[in.node->id] = b;
      s.inputs.push_back(b);
    }
    std::vector<std::pair<int, int>> pending_copies;  // (node id, output buffer)
    for (size_t i = 0; i < graph_.outputs().size(); ++i) {
      const GraphOutput& out = graph_.outputs()[i];
      int b = add_buffer(out.node, BufferRole::Output, out.name);
      s.buffers[b].io_index = static_cast<int>(i);
      s.outputs.push_back(b);
      // An output that is an input, a weight or already another output is copied.
      if (out.node->op == Op::Input || out.node->op == Op::Weight || s.node_buffer[out.node->id] >= 0)
        pending_copies.push_back({out.node->id, b});
      else
        s.node_buffer[out.node->id] = b;
    }
    for (const Node* n : live_) {
      if (!realized_[n->id] || s.node_buffer[n->id] >= 0) continue;
      std::string name = n->name.empty() ? std::string(op_name(n->op)) + "_" + std::to_string(n->id) : n->name;
      s.node_buffer[n->id] = add_buffer(n, n->op == Op::Weight ? BufferRole::Weight : BufferRole::Intermediate, name);
    }
    for (const Node* n : live_) {
      if (!realized_[n->id] || n->op == Op::Input || n->op == Op::Weight) continue;
      ScheduledKernel k;
      k.root = n;
      k.output = s.node_buffer[n->id];
      std::set<const Node*> seen;
      std::function<void(const Node*)> collect = [&](const Node* x) {
        if (!seen.insert(x).second) return;
        if (x != n && realized_[x->id]) {
          int b = s.node_buffer[x->id];
          if (std::find(k.inputs.begin(), k.inputs.end(), b) == k.inputs.end()) k.inputs.push_back(b);
          return;
        }
        for (const Node* src : x->srcs) collect(src);
      };
      collect(n);
      k.name = "k" + std::to_string(s.kernels.size()) + "_" + s.buffers[k.output].name;
      for (char& c : k.name)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
      s.steps.push_back({Step::Kind::Kernel, static_cast<int>(s.kernels.size())});
      s.kernels.push_back(std::move(k));
    }
    for (auto [node_id, dst] : pending_copies) {
      s.steps.push_back({Step::Kind::Copy, static_cast<int>(s.copies.size())});
      s.copies.push_back({s.node_buffer[node_id], dst});
    }
    return s;
  }

  const Graph& graph_;
  std::vector<Node*> live_;
  std::vector<bool> realized_;
  std::vector<int> uses_;           // edges from live consumers
  std::vector<const Node*> consumer_;  // the last consumer seen
  std::vector<std::vector<const Node*>> consumers_;  // every live consumer, once
};

// Whether the kernel's result is, through elementwise ops only, a permutation of
// (N, H, W, C) values back to (N, C, H, W): the end of a ConvNeXt block, its second Linear
// layer's result (and the residual) seen through torchvision's permute; or tokens split into
// rows (splits_tokens_into_rows).
bool permuted_to_nchw(const Schedule& s, const ScheduledKernel& k) {
  std::set<const Node*> seen;
  std::function<bool(const Node*)> walk = [&](const Node* n) {
    if (!seen.insert(n).second || (n != k.root && s.buffer_of(n) >= 0)) return false;
    if (n->op == Op::Permute) return n->axes == std::vector<int64_t>{0, 3, 1, 2};
    if (n->op == Op::Reshape) return s.buffer_of(n->srcs[0]) < 0 && splits_tokens_into_rows(n);
    if (!is_elementwise(n->op)) return false;
    for (const Node* src : n->srcs)
      if (walk(src)) return true;
    return false;
  };
  return walk(k.root);
}

// Whether a Reshape from the (N, C, H, W) or (N, C, D, H, W) shape `from` to `to` puts the
// channels and some spatial dim (both of more than one element) into one dim of `to`: no dim
// boundary of `to` falls between C and the spatial dims (its prefix products skip N * C).
bool merges_channels_with_space(const Shape& from, const Shape& to) {
  if (from.size() < 4 || from.size() > 5 || from[1] <= 1) return false;
  int64_t spatial = 1;
  for (size_t i = 2; i < from.size(); ++i) spatial *= from[i];
  if (spatial <= 1) return false;
  const int64_t batch_and_channels = from[0] * from[1];
  int64_t prefix = 1;
  for (int64_t d : to) {
    if (prefix == batch_and_channels) return false;
    prefix *= d;
  }
  return prefix != batch_and_channels;
}

// Marks 4-D and 5-D intermediates channels-last (a 3-D conv's (N, C, D, H, W) as
// (N, D, H, W, C): stored channels-first, its kernels took vectors along the rows, every
// tap bounds-tested, 3-5 GFLOP/s in r3d_18): those a kernel with a window (conv, pooling) or a
// conv result (Winograd's output transform) computes, and those computed from channels-last
// data that a window reads (an elementwise op between two convs) or that are computed
// without a reduction (an int8 SiLU's table lookups after a conv, read by a pooling: in
// NCHW the kernel would transpose, gathering every load). Elsewhere a 4-D tensor's dim 1
// is no channel axis (attention heads), or its producer reads NCHW data (the model's
// input) and would gather what it now reads in rows.
void choose_channels_last(Schedule& s) {
  std::vector<bool> computed_by_window(s.buffers.size(), false), read_by_window(s.buffers.size(), false),
      computed_elementwise(s.buffers.size(), false);
  for (const ScheduledKernel& k : s.kernels) {
    bool has_window = false, has_reduce = false;
    std::set<std::pair<const Node*, bool>> seen;
    std::function<void(const Node*, bool)> walk = [&](const Node* n, bool under_window) {
      if (!seen.insert({n, under_window}).second) return;
      int b = s.buffer_of(n);
      if (n != k.root && b >= 0) {
        if (under_window) read_by_window[b] = true;
        return;
      }
      if (n->op == Op::Window) has_window = under_window = true;
      if (n->conv_result) has_window = true;
      if (is_reduce(n->op)) has_reduce = true;
      for (const Node* src : n->srcs) walk(src, under_window);
    };
    walk(k.root, false);
    if (has_window) computed_by_window[k.output] = true;
    if (!has_window && !has_reduce) computed_elementwise[k.output] = true;
  }
  // Buffers that only kernels writing a model output read (which is NCHW). An elementwise
  // result among them stays NCHW, so that the transposition from channels-last happens where
  // it is computed, not in its reader, which may write many more elements: DeepLabV3's final
  // bilinear upsample (21 classes, 16x16 -> 256x256) runs as two passes, and with the first
  // pass's 86 K results channels-last the second gathered each of its 1.4 M outputs 21
  // floats apart (0.6 GFLOP/s and 0.6 GB/s, a quarter of the model's time).
  std::vector<int> readers(s.buffers.size(), 0), output_readers(s.buffers.size(), 0);
  for (const ScheduledKernel& k : s.kernels)
    for (int in : std::set<int>(k.inputs.begin(), k.inputs.end())) {
      ++readers[in];
      if (s.buffers[k.output].role == BufferRole::Output) ++output_readers[in];
    }
  auto read_only_into_outputs = [&](int b) { return readers[b] > 0 && readers[b] == output_readers[b]; };
  // Buffers whose every reader views them through a Reshape that merges the channels with
  // the spatial dims (Flatten of conv features before a Linear layer): those readers read
  // in (C, H, W) order, so the buffer stays NCHW. Channels-last, the matrix product gathered
  // each of its reduced elements across channels (index c*HW + hw read at hw*C + c): AlexNet's
  // first Linear (9216 -> 4096) ran at 0.65 GFLOP/s, VGG11's at 0.97, 4.5x and 1.6x
  // onnxruntime. Its producer (here a pooling of a few thousand outputs) transposes instead.
  std::vector<int> flattening_readers(s.buffers.size(), 0);
  for (const ScheduledKernel& k : s.kernels) {
    std::set<int> flattened;
    std::set<const Node*> seen;
    std::function<void(const Node*)> walk = [&](const Node* n) {
      if (!seen.insert(n).second) return;
      if (n != k.root && s.buffer_of(n) >= 0) return;
      if (n->op == Op::Reshape && !n->srcs.empty()) {
        const Node* below = n->srcs[0];
        while (is_widening_cast(below) && s.buffer_of(below) < 0) below = below->srcs[0];
        const int b = s.buffer_of(below);
        if (b >= 0 && merges_channels_with_space(below->shape, n->shape)) flattened.insert(b);
      }
      for (const Node* src : n->srcs) walk(src);
    };
    walk(k.root);
    for (int b : flattened) ++flattening_readers[b];
  }
  auto read_only_flattened = [&](int b) { return readers[b] > 0 && readers[b] == flattening_readers[b]; };
  // A window result that the kernel stores through a permutation (ConvNeXt's and Swin's
  // (N, C, H, W) -> (N, H, W, C) before a LayerNorm) gets the layout that stores the
  // window's own dims channels-last, (N, H, W, C) of the window: for that permutation the
  // plain layout. (0, 2, 3, 1) on top of it would store (N, H, C, W): the LayerNorm and the
  // matrix product after it would then read the channels 56 floats apart (15-30 GFLOP/s
  // Linear layers instead of dense speed).
  //
  // Winograd's output transform computes its result as (N, H, W, C) already (Node::
  // conv_result) and permutes it to (N, C, H, W): there the permutation's source dims are
  // the window's (N, H, W, C) in order. (Read as (N, C, H, W), DenseNet's 3x3 conv results,
  // stored as they leave the transform because several Concats read them, were stored
  // (N, H, C, W): the Concats gathered channels 56 floats apart, 2 GFLOP/s.)
  auto permuted_window_layout = [&](const ScheduledKernel& k, std::vector<int64_t>& layout) {
    const Node* root = k.root;
    if (root->op != Op::Permute || root->axes.size() != 4 || root->srcs.empty() ||
        root->srcs[0]->shape.size() != 4)
      return false;
    const Node* below = root->srcs[0];
    while (is_movement(below->op) && !below->srcs.empty() && s.buffer_of(below) < 0) below = below->srcs[0];
    const std::vector<int64_t> window_nhwc =
        below->conv_result ? std::vector<int64_t>{0, 1, 2, 3} : std::vector<int64_t>{0, 2, 3, 1};
    layout.clear();
    for (int64_t window_dim : window_nhwc)
      for (size_t j = 0; j < root->axes.size(); ++j)
        if (root->axes[j] == window_dim) layout.push_back(static_cast<int64_t>(j));
    if (layout == std::vector<int64_t>{0, 1, 2, 3}) layout.clear();  // already channels-last
    return true;
  };
  auto eligible = [&](int b) {
    const ScheduledBuffer& buf = s.buffers[b];
    return buf.role == BufferRole::Intermediate && (buf.shape.size() == 4 || buf.shape.size() == 5) &&
           buf.shape[1] > 1 && !buf.node->realize;
  };
  // (N, C, S...) stored as (N, S..., C).
  auto channels_last = [](size_t rank) {
    std::vector<int64_t> layout{0};
    for (int64_t d = 2; d < int64_t(rank); ++d) layout.push_back(d);
    layout.push_back(1);
    return layout;
  };
  // Window results that the frontend realized in (N, H, W, C) order itself, their own
  // permute on top (a ConvTranspose's phases before their interleave, ops_nn.cc): no layout,
  // but channels-last data all the same. An elementwise reader (the interleave with its bias,
  // BatchNormalization and ReLU) stored NCHW gathered each vector of pixels from 4 phases
  // 24-96 floats apart: PP-OCRv4 det's head, 0.7-1.4 GFLOP/s, a tenth of the model's time.
  std::vector<bool> realized_channels_last(s.buffers.size(), false);
  for (const ScheduledKernel& k : s.kernels) {  // in order: producers before consumers
    std::vector<int64_t> permuted;
    if (computed_by_window[k.output] && s.buffers[k.output].node->realize && s.buffers[k.output].shape.size() == 4 &&
        permuted_window_layout(k, permuted) && permuted.empty())
      realized_channels_last[k.output] = true;
    if (!eligible(k.output) || read_only_flattened(k.output)) continue;
    bool from_channels_last = false;
    for (int in : k.inputs)
      from_channels_last = from_channels_last || !s.buffers[in].layout.empty() || realized_channels_last[in];
    if (computed_by_window[k.output] && permuted_window_layout(k, permuted)) {
      s.buffers[k.output].layout = permuted;
      continue;
    }
    // A value computed through a permutation of (N, H, W, C) data back to (N, C, H, W)
    // (the end of a ConvNeXt block: its Linear layers' result plus the residual) is stored
    // channels-last too: the kernel then reads and writes in the same order.
    if (computed_by_window[k.output] || permuted_to_nchw(s, k) ||
        (from_channels_last && (read_by_window[k.output] ||
                                (computed_elementwise[k.output] && !read_only_into_outputs(k.output)))))
      s.buffers[k.output].layout = channels_last(s.buffers[k.output].shape.size());
  }
}

// ---- row kernels (ScheduleOptions::fuse_row_reductions) ----

// The reduce that the realized node t computes, where t can be a row stage: the reduce
// itself, or elementwise ops over it whose other operands are constants or weights (the
// reciprocal of Softmax's sum; the epsilon of a LayerNorm exported op by op, an initializer).
// Null otherwise.
const Node* stage_reduce(const Schedule& s, const Node* t) {
  const Node* n = t;
  while (!is_reduce(n->op)) {
    if (!is_elementwise(n->op)) return nullptr;
    const Node* below = nullptr;
    for (const Node* src : n->srcs) {
      const Node* leaf = src;
      while (is_movement(leaf->op) && !leaf->srcs.empty()) leaf = leaf->srcs[0];
      const int leaf_buffer = s.buffer_of(leaf);
      if (leaf->op == Op::Const || (leaf_buffer >= 0 && s.buffers[leaf_buffer].role == BufferRole::Weight)) continue;
      if (below) return nullptr;
      below = src;
    }
    if (!below || below->shape != n->shape || s.buffer_of(below) >= 0) return nullptr;
    n = below;
  }
  return n;
}

// Whether the values below n (the kernel's own nodes, down to buffers) read the stages only
// as an Expand to `row_shape` reached through elementwise ops: at the element the kernel
// computes, with the row dim at 0. A kernel's own reduce disqualifies it.
bool reads_stages_broadcast(const Schedule& s, const Node* n, bool elementwise_path, const std::set<const Node*>& stages,
                            const Shape& row_shape, std::set<std::pair<const Node*, bool>>& seen) {
  if (!seen.insert({n, elementwise_path}).second) return true;
  for (const Node* src : n->srcs) {
    if (stages.count(src)) return false;  // read without the broadcast
    if (src->op == Op::Expand && stages.count(src->srcs[0])) {
      if (!elementwise_path || src->shape != row_shape) return false;
      continue;
    }
    if (s.buffer_of(src) >= 0 || src->op == Op::Const) continue;
    if (is_reduce(src->op)) return false;
    if (!reads_stages_broadcast(s, src, elementwise_path && is_elementwise(src->op), stages, row_shape, seen)) return false;
  }
  return true;
}

// Drops the kernels and buffers marked, renumbering the rest.
void remove_kernels_and_buffers(Schedule& s, const std::vector<bool>& gone_kernel, const std::vector<bool>& gone_buffer) {
  std::vector<int> buffer_id(s.buffers.size(), -1), kernel_id(s.kernels.size(), -1);
  std::vector<ScheduledBuffer> buffers;
  for (size_t b = 0; b < s.buffers.size(); ++b)
    if (!gone_buffer[b]) buffer_id[b] = static_cast<int>(buffers.size()), buffers.push_back(std::move(s.buffers[b]));
  std::vector<ScheduledKernel> kernels;
  for (size_t k = 0; k < s.kernels.size(); ++k) {
    if (gone_kernel[k]) continue;
    kernel_id[k] = static_cast<int>(kernels.size());
    kernels.push_back(std::move(s.kernels[k]));
    // Names number the kernels in queue order: "k<index>_<buffer>".
    std::string& name = kernels.back().name;
    const std::string old_prefix = "k" + std::to_string(k) + "_";
    if (name.rfind(old_prefix, 0) == 0) name = "k" + std::to_string(kernel_id[k]) + "_" + name.substr(old_prefix.size());
  }
  for (ScheduledKernel& k : kernels) {
    k.output = buffer_id[k.output];
    for (int& b : k.inputs) b = buffer_id[b];
  }
  for (ScheduledCopy& c : s.copies) c.src = buffer_id[c.src], c.dst = buffer_id[c.dst];
  for (int& b : s.inputs) b = buffer_id[b];
  for (int& b : s.outputs) b = buffer_id[b];
  for (int& b : s.node_buffer)
    if (b >= 0) b = buffer_id[b];
  std::vector<Step> steps;
  for (Step st : s.steps) {
    if (st.kind == Step::Kind::Kernel && (st.index = kernel_id[st.index]) < 0) continue;
    steps.push_back(st);
  }
  s.buffers = std::move(buffers);
  s.kernels = std::move(kernels);
  s.steps = std::move(steps);
}

// Whether axes are a, a + 1, ..., b.
bool consecutive(const std::vector<int64_t>& axes) {
  if (axes.empty()) return false;
  for (size_t i = 1; i < axes.size(); ++i)
    if (axes[i] != axes[i - 1] + 1) return false;
  return true;
}

// Merges into each elementwise kernel the reductions along its trailing dims that it reads
// broadcast along them (and those they read, a Softmax's max below its sum), where nothing
// else reads them: the kernel computes them per row as its row stages, and their buffers go.
void fuse_row_reductions(Schedule& s) {
  std::vector<int> producer(s.buffers.size(), -1);
  std::vector<std::set<int>> readers(s.buffers.size());
  for (size_t k = 0; k < s.kernels.size(); ++k) {
    producer[s.kernels[k].output] = static_cast<int>(k);
    for (int b : s.kernels[k].inputs) readers[b].insert(static_cast<int>(k));
  }
  std::vector<bool> gone_kernel(s.kernels.size(), false), gone_buffer(s.buffers.size(), false);
  for (size_t ki = 0; ki < s.kernels.size(); ++ki) {
    ScheduledKernel& k = s.kernels[ki];
    const Shape& row_shape = k.root->shape;
    if (gone_kernel[ki] || !s.buffers[k.output].layout.empty() || k.root->dtype != DType::F32) continue;
    // The stages: the reductions of the root's shape along the same axes, a run of
    // consecutive dims (LayerNorm over the last two, InstanceNorm's H and W), among the
    // buffers the kernel reads, and among those their kernels read.
    std::set<const Node*> stages;
    std::vector<int> stage_kernels;
    std::vector<int64_t> axes;
    std::vector<int> open = k.inputs;
    while (!open.empty()) {
      const int b = open.back();
      open.pop_back();
      const Node* t = s.buffers[b].node;
      const Node* r = stage_reduce(s, t);
      if (stages.count(t) || producer[b] < 0 || gone_kernel[producer[b]] || !r ||
          s.buffers[b].role != BufferRole::Intermediate || !consecutive(r->axes) || r->dtype != DType::F32 ||
          t->dtype != DType::F32 || r->srcs[0]->shape != row_shape || (!axes.empty() && r->axes != axes))
        continue;
      axes = r->axes;
      stages.insert(t);
      stage_kernels.push_back(producer[b]);
      open.insert(open.end(), s.kernels[producer[b]].inputs.begin(), s.kernels[producer[b]].inputs.end());
    }
    if (stages.empty()) continue;
    // Rows along the innermost dims only. Along another (Softmax over axis 1 of NCHW) a row's
    // elements lie a plane apart: one kernel running each vector of rows through all its
    // passes, the exps stored and read back, made the 4 KB-apart loads and stores alias (and
    // miss L1) and ran 2.2-2.7x slower than the three kernels ((1, 21, 128, 128) axis 1,
    // (4, 64, 1024) axis 1, x86_64), whose last one streams.
    bool innermost = true;
    for (size_t d = size_t(axes.back()) + 1; d < row_shape.size(); ++d) innermost = innermost && row_shape[d] == 1;
    if (!innermost) continue;
    bool fusable = true;
    for (int sk : stage_kernels)
      for (int reader : readers[s.kernels[sk].output])
        fusable = fusable && (reader == static_cast<int>(ki) ||
                              std::find(stage_kernels.begin(), stage_kernels.end(), reader) != stage_kernels.end());
    std::set<std::pair<const Node*, bool>> seen;
    fusable = fusable && is_elementwise(k.root->op) && reads_stages_broadcast(s, k.root, true, stages, row_shape, seen);
    for (int sk : stage_kernels) {
      const Node* r = stage_reduce(s, s.kernels[sk].root);
      std::set<std::pair<const Node*, bool>> seen_below;
      fusable = fusable && !stages.count(r->srcs[0]) &&
                reads_stages_broadcast(s, r, true, stages, row_shape, seen_below);
    }
    if (!fusable) continue;
    std::sort(stage_kernels.begin(), stage_kernels.end());  // producers first
    std::vector<int> inputs;
    for (int sk : stage_kernels) {
      k.row_stages.push_back(s.kernels[sk].root);
      inputs.insert(inputs.end(), s.kernels[sk].inputs.begin(), s.kernels[sk].inputs.end());
      gone_kernel[sk] = true;
      gone_buffer[s.kernels[sk].output] = true;
    }
    inputs.insert(inputs.end(), k.inputs.begin(), k.inputs.end());
    k.inputs.clear();
    for (int b : inputs)
      if (!gone_buffer[b] && std::find(k.inputs.begin(), k.inputs.end(), b) == k.inputs.end()) k.inputs.push_back(b);
    k.row_axis = static_cast<int>(axes.front());
  }
  remove_kernels_and_buffers(s, gone_kernel, gone_buffer);
}

}  // namespace

Schedule schedule_graph(const Graph& graph, const ScheduleOptions& options) {
  Schedule s = Scheduler(graph).run();
  for (ScheduledBuffer& b : s.buffers) {
    b.storage = b.dtype;
    if (options.f16_intermediates_in_f32 && b.role == BufferRole::Intermediate && b.dtype == DType::F16)
      b.storage = DType::F32;
  }
  if (options.channels_last) choose_channels_last(s);
  if (options.fuse_row_reductions) fuse_row_reductions(s);
  return s;
}

}  // namespace edgec

#include "codegen/symbolic.h"

#include <algorithm>
#include <numeric>

namespace edgec {

int64_t floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t floormod(int64_t a, int64_t b) { return a - floordiv(a, b) * b; }

namespace {

AtomRef make_atom(Atom::Kind kind, Index inner, int64_t divisor, int var, int64_t lo, int64_t hi) {
  auto a = std::make_shared<Atom>();
  a->kind = kind;
  a->var = var;
  a->divisor = divisor;
  a->lo = lo;
  a->hi = hi;
  if (kind == Atom::Kind::Var) {
    a->key = "v" + std::to_string(var);
  } else {
    a->key = "(" + inner.key() + (kind == Atom::Kind::Div ? ")/" : ")%") + std::to_string(divisor);
  }
  a->inner = std::move(inner);
  return a;
}

// gcd of all coefficients and the constant (0 for the zero index).
int64_t content_gcd(const Index& x) {
  int64_t g = std::abs(x.constant());
  for (const auto& [atom, coef] : x.terms()) g = std::gcd(g, std::abs(coef));
  return g;
}

// x / g for a g that divides every coefficient and the constant.
Index divide_exact(const Index& x, int64_t g) {
  Index out(x.constant() / g);
  for (const auto& [atom, coef] : x.terms()) {
    Index single = (atom->kind == Atom::Kind::Var) ? Index::var(atom->var, atom->hi + 1)
                   : (atom->kind == Atom::Kind::Div) ? atom->inner.floordiv(atom->divisor)
                                                     : atom->inner.mod(atom->divisor);
    out = out + single * (coef / g);
  }
  return out;
}

// Writes x as c*big + small with 0 <= small < c for the largest c that divides k and
// is a coefficient of x: then x/k == big/(k/c) and x%k == c*(big%(k/c)) + small.
// (128*i + 16*j + l) / 256 with 16*j + l < 128 is i/2: what a grouped reshape leaves.
bool split_below(const Index& x, int64_t k, int64_t& c_out, Index& big, Index& small) {
  std::vector<int64_t> coefs;
  for (const auto& [atom, coef] : x.terms())
    if (coef > 1 && coef < k && k % coef == 0) coefs.push_back(coef);
  std::sort(coefs.rbegin(), coefs.rend());
  for (int64_t c : coefs) {
    Index b(floordiv(x.constant(), c)), r(floormod(x.constant(), c));
    for (const auto& [atom, coef] : x.terms()) {
      Index single = (atom->kind == Atom::Kind::Var) ? Index::var(atom->var, atom->hi + 1)
                     : (atom->kind == Atom::Kind::Div) ? atom->inner.floordiv(atom->divisor)
                                                       : atom->inner.mod(atom->divisor);
      if (coef % c == 0) b = b + single * (coef / c);
      else r = r + single * coef;
    }
    if (r.min() >= 0 && r.max() < c) {
      c_out = c;
      big = b;
      small = r;
      return true;
    }
  }
  return false;
}

}  // namespace

Index Index::var(int id, int64_t extent) {
  Index x;
  if (extent <= 1) return x;  // a loop of one iteration is the constant 0
  x.terms_.push_back({make_atom(Atom::Kind::Var, Index(), 1, id, 0, extent - 1), 1});
  return x;
}

int64_t Index::min() const {
  int64_t m = constant_;
  for (const auto& [atom, coef] : terms_) m += coef > 0 ? coef * atom->lo : coef * atom->hi;
  return m;
}
int64_t Index::max() const {
  int64_t m = constant_;
  for (const auto& [atom, coef] : terms_) m += coef > 0 ? coef * atom->hi : coef * atom->lo;
  return m;
}

const std::string& Index::key() const {
  if (key_.empty()) {
    std::string k;
    for (const auto& [atom, coef] : terms_) {
      if (!k.empty()) k += "+";
      if (coef != 1) k += std::to_string(coef) + "*";
      k += atom->key;
    }
    if (constant_ != 0 || k.empty()) k += (k.empty() ? "" : "+") + std::to_string(constant_);
    key_ = k;
  }
  return key_;
}

void Index::add_term(const AtomRef& atom, int64_t coef) { terms_.push_back({atom, coef}); }

void Index::normalize() {
  std::sort(terms_.begin(), terms_.end(),
            [](const auto& a, const auto& b) { return a.first->key < b.first->key; });
  std::vector<std::pair<AtomRef, int64_t>> merged;
  for (auto& t : terms_) {
    if (!merged.empty() && merged.back().first->key == t.first->key) merged.back().second += t.second;
    else merged.push_back(t);
  }
  std::erase_if(merged, [](const auto& t) { return t.second == 0; });
  // This index but terms i and j (which a rule below folds into one).
  auto without = [&](size_t i, size_t j) {
    Index rest;
    rest.constant_ = constant_;
    for (size_t t = 0; t < merged.size(); ++t)
      if (t != i && t != j) rest.terms_.push_back(merged[t]);
    rest.normalize();
    return rest;
  };
  // c*k*(X/k) + c*(X%k) == c*X: undoes a split followed by a merge of the same dims.
  for (size_t i = 0; i < merged.size(); ++i) {
    const Atom& m = *merged[i].first;
    if (m.kind != Atom::Kind::Mod) continue;
    for (size_t j = 0; j < merged.size(); ++j) {
      const Atom& d = *merged[j].first;
      if (d.kind != Atom::Kind::Div || d.divisor != m.divisor || d.inner.key() != m.inner.key()) continue;
      if (merged[j].second != merged[i].second * m.divisor) continue;
      *this = without(i, j) + m.inner * merged[i].second;
      return;
    }
  }
  // c*a*((X/a)%m) + c*(X%a) == c*(X%(a*m)): a dim split in three and merged back (a
  // GroupNorm's (N, C, H, W) read as (N, groups, C/groups*H*W) left (X/W)%H next to X%W; the
  // rule above then folds the X/(H*W) that is left).
  for (size_t i = 0; i < merged.size(); ++i) {
    const Atom& outer = *merged[i].first;
    if (outer.kind != Atom::Kind::Mod || outer.inner.constant() != 0 || outer.inner.terms().size() != 1 ||
        outer.inner.terms()[0].second != 1 || outer.inner.terms()[0].first->kind != Atom::Kind::Div)
      continue;
    const Atom& quotient = *outer.inner.terms()[0].first;  // X/a
    for (size_t j = 0; j < merged.size(); ++j) {
      const Atom& low = *merged[j].first;  // X%a
      if (low.kind != Atom::Kind::Mod || low.divisor != quotient.divisor || low.inner.key() != quotient.inner.key() ||
          merged[i].second != merged[j].second * quotient.divisor)
        continue;
      *this = without(i, j) + low.inner.mod(quotient.divisor * outer.divisor) * merged[j].second;
      return;
    }
  }
  terms_ = std::move(merged);
  key_.clear();
}

Index operator+(const Index& a, const Index& b) {
  Index r = a;
  r.constant_ += b.constant_;
  for (const auto& t : b.terms_) r.add_term(t.first, t.second);
  r.normalize();
  return r;
}

Index operator-(const Index& a, const Index& b) { return a + b * -1; }

Index operator*(const Index& a, int64_t c) {
  if (c == 0) return Index(0);
  Index r;
  r.constant_ = a.constant_ * c;
  for (const auto& t : a.terms_) r.add_term(t.first, t.second * c);
  r.normalize();
  return r;
}

Index Index::floordiv(int64_t k) const {
  if (k == 1) return *this;
  if (is_constant()) return Index(edgec::floordiv(constant_, k));
  // Split into k*quotient + remainder, where the remainder keeps the terms whose
  // coefficients k does not divide.
  Index quotient(edgec::floordiv(constant_, k));
  Index rem(floormod(constant_, k));
  for (const auto& [atom, coef] : terms_) {
    if (coef % k == 0) quotient.add_term(atom, coef / k);
    else rem.add_term(atom, coef);
  }
  quotient.normalize();
  rem.normalize();
  int64_t qlo = edgec::floordiv(rem.min(), k), qhi = edgec::floordiv(rem.max(), k);
  if (qlo == qhi) return quotient + Index(qlo);
  // (g*R) / (g*m) == R / m
  int64_t g = std::gcd(content_gcd(rem), k);
  if (g > 1) return quotient + divide_exact(rem, g).floordiv(k / g);
  int64_t c;
  Index big, small;
  if (split_below(rem, k, c, big, small)) return quotient + big.floordiv(k / c);
  // (X / a) / k == X / (a*k)
  if (rem.constant_ == 0 && rem.terms_.size() == 1 && rem.terms_[0].second == 1 &&
      rem.terms_[0].first->kind == Atom::Kind::Div) {
    const Atom& inner = *rem.terms_[0].first;
    return quotient + inner.inner.floordiv(inner.divisor * k);
  }
  Index r = quotient;
  r.add_term(make_atom(Atom::Kind::Div, rem, k, 0, qlo, qhi), 1);
  r.normalize();
  return r;
}

Index Index::mod(int64_t k) const {
  if (k == 1) return Index(0);
  if (is_constant()) return Index(floormod(constant_, k));
  // Terms whose coefficients k divides vanish; the others keep their residue.
  Index rem(floormod(constant_, k));
  for (const auto& [atom, coef] : terms_) {
    int64_t c = floormod(coef, k);
    if (c != 0) rem.add_term(atom, c);
  }
  rem.normalize();
  // Prefer the original coefficients when they give a tighter range (e.g. -x).
  Index orig(floormod(constant_, k));
  for (const auto& [atom, coef] : terms_)
    if (coef % k != 0) orig.add_term(atom, coef);
  orig.normalize();
  for (const Index* r : {&rem, &orig}) {
    int64_t qlo = edgec::floordiv(r->min(), k), qhi = edgec::floordiv(r->max(), k);
    if (qlo == qhi) return *r - Index(qlo * k);
  }
  if (rem.is_constant()) return Index(floormod(rem.constant_, k));
  int64_t g = std::gcd(content_gcd(rem), k);
  if (g > 1) return divide_exact(rem, g).mod(k / g) * g;
  int64_t c;
  Index big, small;
  if (split_below(rem, k, c, big, small)) return big.mod(k / c) * c + small;
  // (X % a) % k == X % k when k divides a
  if (rem.constant_ == 0 && rem.terms_.size() == 1 && rem.terms_[0].second == 1 &&
      rem.terms_[0].first->kind == Atom::Kind::Mod && rem.terms_[0].first->divisor % k == 0) {
    return rem.terms_[0].first->inner.mod(k);
  }
  Index r;
  r.add_term(make_atom(Atom::Kind::Mod, rem, k, 0, 0, k - 1), 1);
  r.normalize();
  return r;
}

}  // namespace edgec

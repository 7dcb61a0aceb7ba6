// symbolic.h — integer index expressions and their simplification.
//
// Every index a kernel computes is kept in a normal form: a constant plus a sum of
// coefficient * atom, where an atom is a loop variable, a floor division or a floor
// modulo of another such sum by a positive constant. Ranges of loop variables are
// known, so div/mod can often be folded away: (i*B + j) / B == i and (i*B + j) % B == j
// when 0 <= j < B, which is what makes a reshape after a permute cost nothing.
// Arithmetic here has floor semantics; the back end emits floor division where an
// operand can be negative.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace edgec {

struct Atom;
using AtomRef = std::shared_ptr<const Atom>;

class Index {
 public:
  Index() = default;
  Index(int64_t c) : constant_(c) {}  // NOLINT: a constant is an index
  static Index var(int id, int64_t extent);  // loop variable in [0, extent)

  bool is_constant() const { return terms_.empty(); }
  int64_t constant() const { return constant_; }
  const std::vector<std::pair<AtomRef, int64_t>>& terms() const { return terms_; }
  int64_t min() const;
  int64_t max() const;
  const std::string& key() const;  // canonical text, equal for equal expressions

  friend Index operator+(const Index& a, const Index& b);
  friend Index operator-(const Index& a, const Index& b);
  friend Index operator*(const Index& a, int64_t c);
  Index floordiv(int64_t k) const;
  Index mod(int64_t k) const;

 private:
  void add_term(const AtomRef& atom, int64_t coef);
  void normalize();  // sort, merge, drop zeros, recombine div/mod pairs
  int64_t constant_ = 0;
  std::vector<std::pair<AtomRef, int64_t>> terms_;
  mutable std::string key_;
};

struct Atom {
  enum class Kind { Var, Div, Mod } kind;
  int var = 0;           // Var: id
  Index inner;           // Div/Mod: the dividend
  int64_t divisor = 1;   // Div/Mod
  int64_t lo = 0, hi = 0;  // inclusive range
  std::string key;
};

// lo <= index < hi; a kernel reads an element only where all its guards hold.
struct Guard {
  Index index;
  int64_t lo, hi;
  // Always true / always false given the ranges of the variables.
  bool always_true() const { return index.min() >= lo && index.max() < hi; }
  bool always_false() const { return index.max() < lo || index.min() >= hi; }
};

int64_t floordiv(int64_t a, int64_t b);
int64_t floormod(int64_t a, int64_t b);

}  // namespace edgec

// Index simplification: the folds that make views free, checked against brute force.
#include <doctest/doctest.h>

#include <functional>
#include <map>

#include "codegen/symbolic.h"

using edgec::Index;

namespace {
// Evaluates an index for concrete variable values, with floor semantics.
int64_t eval(const Index& x, const std::map<int, int64_t>& vars) {
  int64_t r = x.constant();
  for (const auto& [atom, coef] : x.terms()) {
    int64_t v = 0;
    if (atom->kind == edgec::Atom::Kind::Var) v = vars.at(atom->var);
    else if (atom->kind == edgec::Atom::Kind::Div) v = edgec::floordiv(eval(atom->inner, vars), atom->divisor);
    else v = edgec::floormod(eval(atom->inner, vars), atom->divisor);
    r += coef * v;
  }
  return r;
}
}  // namespace

TEST_CASE("split then merge of dims folds to the original variable") {
  Index i = Index::var(0, 4), j = Index::var(1, 6);
  Index flat = i * 6 + j;
  CHECK(flat.floordiv(6).key() == i.key());
  CHECK(flat.mod(6).key() == j.key());
  Index f = Index::var(2, 24);
  Index back = f.floordiv(6) * 6 + f.mod(6);
  CHECK(back.key() == f.key());
}

TEST_CASE("div and mod fold from variable ranges") {
  Index j = Index::var(0, 4);
  CHECK(j.floordiv(4).is_constant());
  CHECK(j.floordiv(4).constant() == 0);
  CHECK(j.mod(4).key() == j.key());
  CHECK((j + Index(8)).floordiv(4).key() == Index(2).key());
  // A remainder that can cross a multiple of the divisor must stay a div.
  CHECK(!(j + Index(2)).floordiv(4).is_constant());
}

TEST_CASE("ranges are conservative bounds") {
  Index i = Index::var(0, 5), j = Index::var(1, 3);
  Index x = i * 3 - j + Index(2);
  CHECK(x.min() == 0);
  CHECK(x.max() == 14);
  edgec::Guard g{x, 0, 15};
  CHECK(g.always_true());
  edgec::Guard h{x, 20, 30};
  CHECK(h.always_false());
}

TEST_CASE("simplified div/mod agree with brute force, also for negative dividends") {
  // Window of a padded input: idx = o*stride + k*dilation - pad, then reshaped.
  for (int64_t stride : {1, 2, 3})
    for (int64_t pad : {0, 1, 2})
      for (int64_t k : {2, 3, 4, 6}) {
        Index o = Index::var(0, 7), w = Index::var(1, 3);
        Index x = o * stride + w * 2 - Index(pad);
        Index d = x.floordiv(k), m = x.mod(k), dm = x.floordiv(k) * k + x.mod(k);
        Index nested = x.floordiv(k).floordiv(2), mm = x.mod(k * 2).mod(k);
        for (int64_t a = 0; a < 7; ++a)
          for (int64_t b = 0; b < 3; ++b) {
            std::map<int, int64_t> v{{0, a}, {1, b}};
            int64_t raw = a * stride + b * 2 - pad;
            CHECK(eval(d, v) == edgec::floordiv(raw, k));
            CHECK(eval(m, v) == edgec::floormod(raw, k));
            CHECK(eval(dm, v) == raw);
            CHECK(eval(nested, v) == edgec::floordiv(edgec::floordiv(raw, k), 2));
            CHECK(eval(mm, v) == edgec::floormod(raw, k));
          }
      }
}

TEST_CASE("common factors cancel") {
  Index i = Index::var(0, 100);
  Index x = i * 4 + Index(2);
  CHECK(x.floordiv(8).key() == (i * 2 + Index(1)).floordiv(4).key());
  CHECK(x.mod(2).is_constant());
  CHECK(x.mod(2).constant() == 0);
}

TEST_CASE("a sum below a coefficient that divides the divisor drops out (grouped reshapes)") {
  Index i = Index::var(0, 128), j = Index::var(1, 8), l = Index::var(2, 16);
  Index x = i * 128 + j * 16 + l;
  CHECK(x.floordiv(256).key() == i.floordiv(2).key());
  CHECK(x.mod(256).key() == (i.mod(2) * 128 + j * 16 + l).key());
  // And the weight index of a grouped conv collapses back to one variable.
  CHECK((x.floordiv(256) * 98 + i.mod(2) * 49).key() == (i * 49).key());
  for (int64_t a = 0; a < 128; a += 7)
    for (int64_t b = 0; b < 8; ++b)
      for (int64_t c = 0; c < 16; c += 5) {
        std::map<int, int64_t> v{{0, a}, {1, b}, {2, c}};
        int64_t raw = a * 128 + b * 16 + c;
        CHECK(eval(x.floordiv(256), v) == raw / 256);
        CHECK(eval(x.mod(256), v) == raw % 256);
        CHECK(eval(x.floordiv(64), v) == raw / 64);
        CHECK(eval(x.mod(48), v) == raw % 48);
      }
}

TEST_CASE("a dim split in three and merged back is one variable again (GroupNorm's grouped view)") {
  // (1, 256, 32, 32) read as (1, 32, 8192): element v of a group is at
  // 1024*(v/1024) + 32*((v/32)%32) + v%32 of it, which is v.
  Index v = Index::var(0, 8192);
  Index x = v.floordiv(1024) * 1024 + v.floordiv(32).mod(32) * 32 + v.mod(32);
  CHECK(x.key() == v.key());
  // Scaled, and next to other terms.
  Index g = Index::var(1, 32);
  CHECK((g * 8192 + x * 2).key() == (g * 8192 + v * 2).key());
  // Only the middle and low parts: X % (a*m).
  Index y = v.floordiv(32).mod(32) * 32 + v.mod(32);
  CHECK(y.key() == v.mod(1024).key());
  for (int64_t a = 0; a < 8192; a += 37) {
    std::map<int, int64_t> vals{{0, a}, {1, 3}};
    CHECK(eval(y, vals) == a % 1024);
    CHECK(eval(x, vals) == a);
  }
}

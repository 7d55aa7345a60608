//===- frontend/AST.h - the abstract syntax tree of a model ----------------===//
//
// What the parser recognised, before any meaning is given to names: a model
// is a list of parameters and `val` definitions; expressions are literals,
// names, `?`, arithmetic, ranges, applications (`Dirichlet(a, K)`,
// `Categorical(phi)(z)`, `phi(z)`), `.map` with a lambda, blocks, `if` and
// `match`. `for (x <- e) yield b` and placeholder arguments (`_.map(f)`) are
// desugared into Map and Lambda here, keeping the source spelling for
// --emit=ast.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Diagnostics.h"

namespace llvm { class raw_ostream; }

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ppc::ast {

enum class ExprKind : uint8_t {
  IntLit, FloatLit, Name, Unknown, Placeholder, Unary, Binary, Range,
  Apply, Map, Lambda, Block, If, Match,
};

struct Expr {
  ExprKind kind;
  SourceRange loc;
  explicit Expr(ExprKind k, SourceRange l) : kind(k), loc(l) {}
  virtual ~Expr() = default;
};
using ExprPtr = std::unique_ptr<Expr>;

struct IntLit : Expr {
  int64_t value = 0;
  bool longSuffix = false;
  IntLit(SourceRange l) : Expr(ExprKind::IntLit, l) {}
};

struct FloatLit : Expr {
  double value = 0;
  std::string text;
  FloatLit(SourceRange l) : Expr(ExprKind::FloatLit, l) {}
};

struct Name : Expr {
  std::string name;
  Name(SourceRange l, std::string n) : Expr(ExprKind::Name, l), name(std::move(n)) {}
};

/// `?`: a plate whose size comes from the data.
struct Unknown : Expr {
  Unknown(SourceRange l) : Expr(ExprKind::Unknown, l) {}
};

/// `_` outside a lambda binder; only valid inside a map argument, where it
/// is desugared.
struct Placeholder : Expr {
  Placeholder(SourceRange l) : Expr(ExprKind::Placeholder, l) {}
};

struct Unary : Expr {
  char op; // '-' or '+'
  ExprPtr operand;
  Unary(SourceRange l, char o, ExprPtr e) : Expr(ExprKind::Unary, l), op(o), operand(std::move(e)) {}
};

struct Binary : Expr {
  char op; // + - * /
  ExprPtr lhs, rhs;
  Binary(SourceRange l, char o, ExprPtr a, ExprPtr b)
      : Expr(ExprKind::Binary, l), op(o), lhs(std::move(a)), rhs(std::move(b)) {}
};

/// `lo until hi` or `lo to hi`.
struct Range : Expr {
  bool inclusive;
  ExprPtr lo, hi;
  Range(SourceRange l, bool incl, ExprPtr a, ExprPtr b)
      : Expr(ExprKind::Range, l), inclusive(incl), lo(std::move(a)), hi(std::move(b)) {}
};

/// `callee(args)`: a distribution, an application of a random-variable
/// expression to an index, or indexing a plate of variables.
struct Apply : Expr {
  ExprPtr callee;
  std::vector<ExprPtr> args;
  SourceRange lparen;
  Apply(SourceRange l, ExprPtr c) : Expr(ExprKind::Apply, l), callee(std::move(c)) {}
};

struct Lambda : Expr {
  std::string param;       ///< empty for `_ =>`
  SourceRange paramLoc;
  ExprPtr body;
  bool fromPlaceholder = false; ///< desugared from `_.map(...)`-style arguments
  Lambda(SourceRange l) : Expr(ExprKind::Lambda, l) {}
};

/// `receiver.method(fn)`; method is `map` for every valid model, but any
/// name parses so that the error can say what is accepted.
struct Map : Expr {
  enum class Spelling : uint8_t { Paren, Brace, For };
  ExprPtr receiver;
  std::string method;
  SourceRange methodLoc;
  ExprPtr fn; ///< a Lambda after desugaring; anything else is an error
  Spelling spelling = Spelling::Paren;
  Map(SourceRange l) : Expr(ExprKind::Map, l) {}
};

struct ValDef {
  std::string name;
  SourceRange nameLoc;
  SourceRange valLoc;
  std::string typeAnnotation; ///< optional `: T`
  SourceRange typeLoc;
  ExprPtr init;
};

/// `{ val a = ...; ...; result }`. Items keep their source order; only the
/// last may be an expression.
struct BlockItem {
  std::unique_ptr<ValDef> def; ///< set for `val` items
  ExprPtr expr;                ///< set for expression items
};

struct Block : Expr {
  std::vector<BlockItem> items;
  Block(SourceRange l) : Expr(ExprKind::Block, l) {}
};

struct If : Expr {
  ExprPtr cond, thenExpr, elseExpr;
  If(SourceRange l) : Expr(ExprKind::If, l) {}
};

struct MatchCase {
  std::optional<int64_t> value; ///< nullopt for `case _`
  SourceRange loc;
  ExprPtr body; ///< a Block
};

struct Match : Expr {
  ExprPtr scrutinee;
  std::vector<MatchCase> cases;
  Match(SourceRange l) : Expr(ExprKind::Match, l) {}
};

struct Param {
  std::string name;
  SourceRange nameLoc;
  std::string typeName;
  SourceRange typeLoc;
  ExprPtr defaultValue;
};

struct Model {
  std::string annotation; ///< "Model"
  SourceRange annotationLoc;
  std::string name;
  SourceRange nameLoc;
  std::vector<Param> params;
  std::vector<BlockItem> body;
};

template <typename T> constexpr ExprKind kindOf();
template <> constexpr ExprKind kindOf<IntLit>() { return ExprKind::IntLit; }
template <> constexpr ExprKind kindOf<FloatLit>() { return ExprKind::FloatLit; }
template <> constexpr ExprKind kindOf<Name>() { return ExprKind::Name; }
template <> constexpr ExprKind kindOf<Unknown>() { return ExprKind::Unknown; }
template <> constexpr ExprKind kindOf<Placeholder>() { return ExprKind::Placeholder; }
template <> constexpr ExprKind kindOf<Unary>() { return ExprKind::Unary; }
template <> constexpr ExprKind kindOf<Binary>() { return ExprKind::Binary; }
template <> constexpr ExprKind kindOf<Range>() { return ExprKind::Range; }
template <> constexpr ExprKind kindOf<Apply>() { return ExprKind::Apply; }
template <> constexpr ExprKind kindOf<Map>() { return ExprKind::Map; }
template <> constexpr ExprKind kindOf<Lambda>() { return ExprKind::Lambda; }
template <> constexpr ExprKind kindOf<Block>() { return ExprKind::Block; }
template <> constexpr ExprKind kindOf<If>() { return ExprKind::If; }
template <> constexpr ExprKind kindOf<Match>() { return ExprKind::Match; }


template <typename T> T *dyn(Expr *e) { return e && e->kind == kindOf<T>() ? static_cast<T *>(e) : nullptr; }
template <typename T> const T *dyn(const Expr *e) {
  return e && e->kind == kindOf<T>() ? static_cast<const T *>(e) : nullptr;
}
/// Prints the tree for --emit=ast: one node per line, indented, with
/// line:col of each node.
void print(const Model &m, llvm::raw_ostream &os);

} // namespace ppc::ast

#include "ir/Parser.h"

#include "ir/Builder.h"
#include "ir/IR.h"
#include "ir/StackGuard.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>

namespace ppc::ir {
namespace {

enum class Tok { Eof, Error, ValRef, SymRef, Ident, Int, Float, Punct };

struct Token {
  Tok kind = Tok::Eof;
  std::string_view text;
  SourceLoc loc;
};

class Lexer {
public:
  explicit Lexer(std::string_view text) : text_(text) {}

  Token next() {
    skipSpaceAndComments();
    Token t;
    t.loc = {line_, col_};
    if (pos_ >= text_.size())
      return t;
    size_t start = pos_;
    char c = text_[pos_];
    auto isNameChar = [](char ch) {
      return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.' || ch == '$';
    };
    if (c == '%' || c == '@') {
      advance();
      while (pos_ < text_.size() && isNameChar(text_[pos_]))
        advance();
      t.kind = pos_ - start > 1 ? (c == '%' ? Tok::ValRef : Tok::SymRef) : Tok::Error;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      // Op names may be dotted (gate.cases).
      while (pos_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' ||
              (text_[pos_] == '.' && pos_ + 1 < text_.size() &&
               std::isalpha(static_cast<unsigned char>(text_[pos_ + 1])))))
        advance();
      t.kind = Tok::Ident;
    } else if (std::isdigit(static_cast<unsigned char>(c)) ||
               (c == '-' && pos_ + 1 < text_.size() &&
                (std::isdigit(static_cast<unsigned char>(text_[pos_ + 1])) ||
                 text_.substr(pos_ + 1, 3) == "inf"))) {
      advance();
      if (text_.substr(pos_, 3) == "inf") {
        advance(); advance(); advance();
        t.kind = Tok::Float;
      } else {
        bool isFloat = false;
        while (pos_ < text_.size()) {
          char d = text_[pos_];
          if (std::isdigit(static_cast<unsigned char>(d))) {
            advance();
          } else if (d == '.' || d == 'e' || d == 'E') {
            isFloat = true;
            advance();
            if ((d == 'e' || d == 'E') && pos_ < text_.size() &&
                (text_[pos_] == '+' || text_[pos_] == '-'))
              advance();
          } else {
            break;
          }
        }
        t.kind = isFloat ? Tok::Float : Tok::Int;
      }
    } else if (std::string_view("(){}[]<>,:=?").find(c) != std::string_view::npos) {
      advance();
      t.kind = Tok::Punct;
    } else {
      advance();
      t.kind = Tok::Error;
    }
    t.text = text_.substr(start, pos_ - start);
    return t;
  }

private:
  void advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else if ((static_cast<unsigned char>(text_[pos_]) & 0xC0) != 0x80) {
      ++col_;
    }
    ++pos_;
  }
  void skipSpaceAndComments() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        advance();
      } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
        while (pos_ < text_.size() && text_[pos_] != '\n')
          advance();
      } else {
        break;
      }
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
  uint32_t line_ = 1, col_ = 1;
};

/// Recursive-descent parser; on the first error it stops (IR is machine
/// written, so one precise error is more useful than a cascade).
class Parser {
public:
  Parser(std::string_view text, DiagnosticEngine &diags) : lex_(text), diags_(diags) {
    tok_ = lex_.next();
  }

  std::unique_ptr<Module> run() {
    auto m = std::make_unique<Module>();
    module_ = m.get();
    builder_ = std::make_unique<Builder>(*m);
    if (!parseModule())
      return nullptr;
    return m;
  }

private:
  // ---- token helpers ----
  bool is(std::string_view text) const {
    return (tok_.kind == Tok::Punct || tok_.kind == Tok::Ident) && tok_.text == text;
  }
  void consume() { tok_ = lex_.next(); }
  bool fail(const std::string &msg) {
    if (!failed_)
      diags_.error(SourceRange(tok_.loc, std::max<uint32_t>(1, tok_.text.size())), msg);
    failed_ = true;
    return false;
  }
  std::string describe() const {
    if (tok_.kind == Tok::Eof)
      return "end of file";
    return "'" + std::string(tok_.text) + "'";
  }
  bool expect(std::string_view text) {
    if (!is(text))
      return fail("expected '" + std::string(text) + "', got " + describe());
    consume();
    return true;
  }

  // ---- module ----
  bool parseModule() {
    if (!is("model"))
      return fail("expected 'model', got " + describe());
    module_->loc = SourceRange(tok_.loc, 5);
    consume();
    if (tok_.kind != Tok::SymRef)
      return fail("expected the model name (@Name), got " + describe());
    module_->name = std::string(tok_.text.substr(1));
    consume();
    if (!expect("("))
      return false;
    while (!is(")")) {
      if (!module_->params.empty() && !expect(","))
        return false;
      if (!parseParam())
        return false;
    }
    consume();
    if (!expect("{"))
      return false;
    if (!parseOps(&module_->body))
      return false;
    if (!expect("}"))
      return false;
    if (is("messages")) {
      consume();
      if (!expect("{"))
        return false;
      module_->messages = std::make_unique<Region>();
      predeclareMessages();
      if (!parseOps(module_->messages.get()) || !expect("}"))
        return false;
      for (Value *v : forward_)
        if (!v->def && !v->loop) {
          failed_ = true;
          diags_.error("%" + v->name + " is declared in the messages but never defined");
          return false;
        }
    }
    if (is("schedule")) {
      consume();
      if (!expect("{"))
        return false;
      std::pair<const char *, std::unique_ptr<Region> *> parts[] = {{"init", &module_->initSchedule},
                                                                     {"iteration", &module_->iterationSchedule},
                                                                     {"final", &module_->finalSchedule}};
      for (auto &[label, slot] : parts) {
        if (!expect(label) || !expect("{"))
          return false;
        *slot = std::make_unique<Region>();
        if (!parseOps(slot->get()) || !expect("}"))
          return false;
      }
      if (!expect("}"))
        return false;
    }
    if (tok_.kind != Tok::Eof)
      return fail("expected end of file after the model, got " + describe());
    return true;
  }

  // Statements in `messages` may use values defined further down (the
  // statements form a cycle): declare every name they define first.
  void predeclareMessages() {
    Lexer ahead = lex_;
    Token prev = tok_, t = tok_;
    int depth = 0;
    while (t.kind != Tok::Eof) {
      Token next = ahead.next();
      if (t.kind == Tok::Punct && t.text == "{")
        ++depth;
      if (t.kind == Tok::Punct && t.text == "}" && depth-- == 0)
        break;
      bool defines = t.kind == Tok::ValRef && ((next.kind == Tok::Punct && next.text == "=") ||
                                                (prev.kind == Tok::Ident && prev.text == "for"));
      if (defines && !module_->lookup(t.text.substr(1))) {
        Value *v = module_->newValue(t.text.substr(1), Type());
        forward_.insert(v);
      }
      prev = t;
      t = next;
    }
  }

  /// A value for a definition: the forward declaration if there is one.
  Value *defineValue(std::string_view name, Type type) {
    Value *v = module_->lookup(name);
    if (v && forward_.count(v) && !v->def && !v->loop) {
      v->type = type;
      return v;
    }
    return module_->newValue(name, type);
  }

  bool parseParam() {
    if (tok_.kind != Tok::ValRef)
      return fail("expected a parameter (%name), got " + describe());
    Token nameTok = tok_;
    std::string name(tok_.text.substr(1));
    if (module_->lookup(name))
      return fail("redefinition of %" + name);
    consume();
    if (!expect(":"))
      return false;
    TypeKind kind;
    if (is("long"))
      kind = TypeKind::Long;
    else if (is("double"))
      kind = TypeKind::Double;
    else
      return fail("expected parameter type 'long' or 'double', got " + describe());
    consume();
    Param p;
    p.value = module_->newValue(name, Type::of(kind));
    p.loc = SourceRange(nameTok.loc, nameTok.text.size());
    if (is("=")) {
      consume();
      Operand lit;
      if (!parseLiteral(lit))
        return false;
      if (kind == TypeKind::Long && lit.kind != Operand::Kind::Int)
        return fail("default of a long parameter must be an integer");
      p.defaultValue = lit.literal();
    }
    module_->params.push_back(p);
    return true;
  }

  // ---- ops ----
  bool parseOps(Region *r) {
    if (stackExhausted())
      return fail("the IR is nested too deeply");
    Region *saved = builder_->insertionRegion();
    builder_->setInsertionRegion(r);
    while (!is("}") && tok_.kind != Tok::Eof && !is("case")) {
      if (!parseOp())
        return false;
    }
    builder_->setInsertionRegion(saved);
    return true;
  }

  bool parseOp() {
    SourceLoc start = tok_.loc;
    std::vector<Token> resultToks;
    if (tok_.kind == Tok::ValRef) {
      resultToks.push_back(tok_);
      consume();
      while (is(",")) {
        consume();
        if (tok_.kind != Tok::ValRef)
          return fail("expected a result name (%name), got " + describe());
        resultToks.push_back(tok_);
        consume();
      }
      if (!expect("="))
        return false;
    }
    for (const Token &t : resultToks)
      if (Value *v = module_->lookup(t.text.substr(1)); v && !(forward_.count(v) && !v->def && !v->loop)) {
        tok_ = t;
        return fail("redefinition of " + std::string(t.text));
      }
    if (tok_.kind != Tok::Ident)
      return fail("expected an operation, got " + describe());
    std::string_view opName = tok_.text;
    // An op is located at its first result (or its name): that is what
    // messages quote.
    SourceRange loc(start, resultToks.empty() ? std::max<uint32_t>(1, tok_.text.size())
                                              : std::max<uint32_t>(1, resultToks[0].text.size()));
    Token opTok = tok_;
    consume();
    auto requireResults = [&](size_t n) {
      if (resultToks.size() != n) {
        tok_ = opTok;
        return fail("'" + std::string(opName) + "' defines " + std::to_string(n) + " value" +
                    (n == 1 ? "" : "s") + "; got " + std::to_string(resultToks.size()));
      }
      return true;
    };
    auto name = [](const Token &t) { return t.text.substr(1); };

    if (opName == "plate") {
      if (!requireResults(1))
        return false;
      Op *op = builder_->create(OpKind::Plate, loc);
      if (is("?")) {
        consume();
        op->plateKind = Op::PlateKind::Data;
      } else {
        Operand lo, hi;
        if (!parseOperand(lo))
          return false;
        if (is("until"))
          op->plateKind = Op::PlateKind::Until;
        else if (is("to"))
          op->plateKind = Op::PlateKind::To;
        else
          return fail("expected 'until' or 'to', got " + describe());
        consume();
        if (!parseOperand(hi))
          return false;
        op->operands = {lo, hi};
      }
      builder_->addResult(op, name(resultToks[0]), Type::of(TypeKind::Plate));
      return true;
    }
    if (opName == "for") {
      if (!requireResults(0))
        return false;
      if (tok_.kind != Tok::ValRef)
        return fail("expected the loop index (%name), got " + describe());
      Token idxTok = tok_;
      if (Value *v = module_->lookup(idxTok.text.substr(1)); v && !(forward_.count(v) && !v->def && !v->loop))
        return fail("redefinition of " + std::string(idxTok.text));
      consume();
      if (!expect("in"))
        return false;
      Operand plate;
      if (!parseOperand(plate))
        return false;
      Op *op = builder_->createFor(plate, "", loc);
      if (Value *fwd = module_->lookup(idxTok.text.substr(1)); fwd && forward_.count(fwd) && !fwd->loop) {
        fwd->type = op->index->type;
        fwd->loop = op;
        op->index = fwd;
      } else {
        module_->rename(op->index, name(idxTok));
      }
      if (!expect("{") || !parseOps(op->regions[0].get()) || !expect("}"))
        return false;
      return true;
    }
    if (opName == "if") {
      Op *op = builder_->create(OpKind::If, loc);
      Operand cond;
      if (!parseOperand(cond))
        return false;
      op->operands.push_back(cond);
      Region *thenR = builder_->addRegion(op);
      Region *elseR = builder_->addRegion(op);
      if (!expect("{") || !parseOps(thenR) || !expect("}") || !expect("else") || !expect("{") ||
          !parseOps(elseR) || !expect("}"))
        return false;
      return addRegionResults(op, resultToks);
    }
    if (opName == "match") {
      Op *op = builder_->create(OpKind::Match, loc);
      Operand scrut;
      if (!parseOperand(scrut))
        return false;
      op->operands.push_back(scrut);
      if (!expect("{"))
        return false;
      while (is("case")) {
        consume();
        Region *r = builder_->addRegion(op);
        if (tok_.kind == Tok::Int) {
          int64_t v = 0;
          std::from_chars(tok_.text.data(), tok_.text.data() + tok_.text.size(), v);
          r->caseValue = v;
        } else if (!is("_")) {
          return fail("expected a case value or '_', got " + describe());
        }
        consume();
        if (!expect("{") || !parseOps(r) || !expect("}"))
          return false;
      }
      if (!expect("}"))
        return false;
      return addRegionResults(op, resultToks);
    }
    if (opName == "when") {
      if (!requireResults(0))
        return false;
      Op *op = builder_->create(OpKind::When, loc);
      Operand cases, which;
      if (!parseOperand(cases) || !expect("case") || !parseOperand(which))
        return false;
      op->operands = {cases, which};
      Region *body = builder_->addRegion(op);
      if (!expect("{") || !parseOps(body) || !expect("}"))
        return false;
      return true;
    }
    if (opName == "update") {
      if (!requireResults(0))
        return false;
      Op *op = builder_->create(OpKind::Update, loc);
      Operand stmt;
      if (!parseOperand(stmt))
        return false;
      if (!stmt.isValue() || !stmt.value->def ||
          (stmt.value->def->kind != OpKind::Msg && stmt.value->def->kind != OpKind::Marginal))
        return fail("'update' names a message or marginal statement");
      op->operands.push_back(stmt);
      if (is("streamed") || is("materialized")) {
        op->streamed = is("streamed");
        consume();
      }
      return true;
    }
    if (opName == "local" || opName == "fuse") {
      if (!requireResults(0))
        return false;
      Op *op = builder_->create(opName == "local" ? OpKind::Local : OpKind::Fuse, loc);
      Operand plate;
      if (!parseOperand(plate))
        return false;
      if (!plate.isValue() || plate.value->type.kind != TypeKind::Plate)
        return fail("'" + std::string(opName) + "' runs over a plate");
      op->operands.push_back(plate);
      if (op->kind == OpKind::Local) {
        if (!expect("iters"))
          return false;
        Operand n;
        if (!parseLiteral(n) || n.kind != Operand::Kind::Int || n.intValue < 1)
          return fail("'iters' takes a positive integer");
        op->iterations = n.intValue;
        if (is("tol")) {
          consume();
          Operand t;
          if (!parseLiteral(t) || t.literal() < 0)
            return fail("'tol' takes a non-negative number");
          op->tolerance = t.literal();
        }
        if (is("restart")) {
          op->restart = true;
          consume();
        }
        if (is("parallel")) {
          op->parallel = true;
          consume();
        }
      } else if (is("parallel")) {
        op->parallel = true;
        consume();
      }
      Region *body = builder_->addRegion(op);
      if (!expect("{") || !parseOps(body) || !expect("}"))
        return false;
      if (op->kind == OpKind::Local) {
        Region *after = builder_->addRegion(op);
        if (!expect("then") || !expect("{") || !parseOps(after) || !expect("}"))
          return false;
      }
      return true;
    }
    if (opName == "msg") {
      if (!requireResults(1))
        return false;
      Op *op = builder_->create(OpKind::Msg, loc);
      if (is("evidence")) {
        op->evidence = true;
        consume();
      }
      if (tok_.kind != Tok::Ident)
        return fail("expected a kernel name, got " + describe());
      op->kernel = std::string(tok_.text);
      consume();
      if (!expect("(") || !parseAnnotatedOperands(*op, ")") || !expect(")") || !expect("to"))
        return false;
      Operand target;
      if (!parseOperand(target))
        return false;
      op->target = target;
      if (is("case")) {
        consume();
        Operand which;
        if (!parseOperand(which))
          return false;
        op->targetCase = which;
      }
      while (is("when")) {
        consume();
        Operand cond, which;
        if (!parseOperand(cond) || !expect("case") || !parseOperand(which))
          return false;
        op->gates.emplace_back(cond, which);
      }
      Type t;
      if (!expect(":") || !parseType(t))
        return false;
      addMessageResult(op, name(resultToks[0]), t);
      return true;
    }
    if (opName == "marginal" || opName == "marginal.back" || opName == "marginal.given") {
      if (!requireResults(1))
        return false;
      Op *op = builder_->create(OpKind::Marginal, loc);
      op->backward = opName == "marginal.back";
      op->given = opName == "marginal.given";
      Operand var;
      if (!parseOperand(var))
        return false;
      op->operands.push_back(var);
      op->deps.push_back(DepKind::Plain);
      if (!expect("(") || !parseAnnotatedOperands(*op, ")") || !expect(")"))
        return false;
      Type t;
      if (!expect(":") || !parseType(t))
        return false;
      addMessageResult(op, name(resultToks[0]), t);
      // A chain's marginal (all the elements of a chain) is over every plate of its variable.
      if (var.isValue() && var.indices.size() < var.value->dims.size())
        op->results[0]->dims = var.value->dims;
      return true;
    }
    if (opName == "yield") {
      if (!requireResults(0))
        return false;
      Op *op = builder_->create(OpKind::Yield, loc);
      if (tok_.kind == Tok::ValRef) {
        for (;;) {
          Operand o;
          if (!parseOperand(o))
            return false;
          op->operands.push_back(o);
          if (!is(","))
            break;
          consume();
        }
      }
      return true;
    }

    // Call-style ops: deterministic arithmetic and random variables.
    Op *op;
    if (auto k = callOpFromName(opName)) {
      op = builder_->create(*k, loc);
      op->observed = *k == OpKind::Data;
    } else if (auto fam = familyFromIRName(opName)) {
      op = builder_->create(OpKind::Random, loc);
      op->family = *fam;
    } else {
      tok_ = opTok;
      return fail("unknown operation '" + std::string(opName) + "'");
    }
    if (!requireResults(1))
      return false;
    if (!expect("("))
      return false;
    while (!is(")")) {
      if (!op->operands.empty() && !expect(","))
        return false;
      Operand o;
      SourceRange where(tok_.loc, std::max<uint32_t>(1, tok_.text.size()));
      if (!parseOperand(o))
        return false;
      op->operands.push_back(o);
      op->operandLocs.push_back(where);
    }
    consume();
    while (op->isRandom() && op->operands.size() < familySpec(op->family).params.size() &&
           defaultArgument(op->family, op->operands.size())) {
      op->operands.push_back(Operand::ofFloat(*defaultArgument(op->family, op->operands.size())));
      op->operandLocs.push_back(op->loc);
    }
    if (is("observed")) {
      if (!op->isRandom() && op->kind != OpKind::GateExit)
        return fail("only random variables can be observed");
      op->observed = true;
      consume();
    }
    if (is("given")) {
      if (!op->isRandom() || op->observed)
        return fail("only latent random variables can be given (held at a saved posterior)");
      op->given = true;
      consume();
    }
    if (!expect(":"))
      return false;
    Type t;
    if (!parseType(t))
      return false;
    Value *result = builder_->addResult(op, name(resultToks[0]), t);
    // Clone arrays have one more dimension: the cases.
    if ((op->kind == OpKind::GateEnter || op->kind == OpKind::GateEnterPartial) && !op->operands.empty() &&
        op->operands[0].isValue())
      result->dims.push_back(op->operands[0].value);
    return true;
  }

  bool parseAnnotatedOperands(Op &op, std::string_view close) {
    while (!is(close)) {
      if (op.operands.size() > (op.kind == OpKind::Marginal ? 1u : 0u) && !expect(","))
        return false;
      DepKind kind = DepKind::Plain;
      for (DepKind k : {DepKind::Required, DepKind::Trigger, DepKind::Fresh})
        if (is(depKindName(k))) {
          kind = k;
          consume();
        }
      Operand o;
      if (!parseOperand(o))
        return false;
      op.operands.push_back(o);
      op.deps.push_back(kind);
    }
    return true;
  }

  void addMessageResult(Op *op, std::string_view name, Type t) {
    Value *v = defineValue(name, t);
    v->def = op;
    v->dims = enclosingPlates(op->parentRegion);
    op->results.push_back(v);
  }

  // The results of if/match take the type and dims of the first branch's yield.
  bool addRegionResults(Op *op, const std::vector<Token> &resultToks) {
    Op *yield = op->regions.empty() ? nullptr : op->regions[0]->terminator();
    size_t n = yield ? yield->operands.size() : 0;
    if (n != resultToks.size()) {
      diags_.error(op->loc, "'" + std::string(op->name()) + "' defines " +
                                std::to_string(resultToks.size()) +
                                " values but its first branch yields " + std::to_string(n));
      failed_ = true;
      return false;
    }
    for (size_t i = 0; i < n; ++i) {
      const Operand &y = yield->operands[i];
      if (!y.isValue()) {
        diags_.error(yield->loc, "yield operands must be values");
        failed_ = true;
        return false;
      }
      Value *v = module_->newValue(resultToks[i].text.substr(1), y.value->type);
      v->def = op;
      v->dims = y.value->dims;
      op->results.push_back(v);
    }
    return true;
  }

  bool parseLiteral(Operand &o) {
    if (tok_.kind == Tok::Int) {
      int64_t v = 0;
      auto [p, ec] = std::from_chars(tok_.text.data(), tok_.text.data() + tok_.text.size(), v);
      if (ec != std::errc() || p != tok_.text.data() + tok_.text.size())
        return fail("integer literal out of range: " + std::string(tok_.text));
      o = Operand::ofInt(v);
      consume();
      return true;
    }
    if (tok_.kind == Tok::Float || (tok_.kind == Tok::Ident && (tok_.text == "inf" || tok_.text == "nan"))) {
      double v = 0;
      if (tok_.text == "inf" || tok_.text == "+inf")
        v = std::numeric_limits<double>::infinity();
      else if (tok_.text == "-inf")
        v = -std::numeric_limits<double>::infinity();
      else if (tok_.text == "nan")
        v = std::numeric_limits<double>::quiet_NaN();
      else {
        auto [p, ec] = std::from_chars(tok_.text.data(), tok_.text.data() + tok_.text.size(), v);
        if (ec != std::errc() || p != tok_.text.data() + tok_.text.size())
          return fail("malformed number " + std::string(tok_.text));
      }
      o = Operand::ofFloat(v);
      consume();
      return true;
    }
    return fail("expected a number, got " + describe());
  }

  bool parseOperand(Operand &o) {
    if (stackExhausted())
      return fail("the IR is nested too deeply");
    if (tok_.kind != Tok::ValRef)
      return parseLiteral(o);
    Value *v = module_->lookup(tok_.text.substr(1));
    if (!v)
      return fail("use of undefined value " + std::string(tok_.text));
    consume();
    o = Operand::ofValue(v);
    while (is("[")) {
      consume();
      Operand idx;
      if (!parseOperand(idx))
        return false;
      o.indices.push_back(std::move(idx));
      if (!expect("]"))
        return false;
    }
    return true;
  }

  bool parseType(Type &t) {
    if (tok_.kind != Tok::Ident)
      return fail("expected a type, got " + describe());
    static const TypeKind kinds[] = {TypeKind::Long, TypeKind::Double, TypeKind::Simplex, TypeKind::Unit,
                                     TypeKind::Cat, TypeKind::Bool, TypeKind::Positive, TypeKind::Count,
                                     TypeKind::Real, TypeKind::Vector, TypeKind::PDMatrix, TypeKind::Cases};
    for (TypeKind k : kinds) {
      if (tok_.text != typeKeyword(k))
        continue;
      t = Type::of(k);
      consume();
      if (t.hasDim()) {
        if (!expect("<"))
          return false;
        if (tok_.kind == Tok::Int) {
          Operand lit;
          if (!parseLiteral(lit))
            return false;
          t.dim = Dim::of(lit.intValue);
        } else if (tok_.kind == Tok::ValRef) {
          Value *v = module_->lookup(tok_.text.substr(1));
          if (!v)
            return fail("use of undefined value " + std::string(tok_.text));
          t.dim = Dim::of(v);
          consume();
        } else {
          return fail("expected a dimension, got " + describe());
        }
        if (!expect(">"))
          return false;
      }
      return true;
    }
    return fail("unknown type '" + std::string(tok_.text) + "'");
  }

  Lexer lex_;
  DiagnosticEngine &diags_;
  Token tok_;
  Module *module_ = nullptr;
  std::unique_ptr<Builder> builder_;
  std::set<Value *> forward_; ///< names declared ahead in `messages`
  bool failed_ = false;
};

} // namespace

std::unique_ptr<Module> parseModule(std::string_view text, DiagnosticEngine &diags) {
  return Parser(text, diags).run();
}

} // namespace ppc::ir

//===- frontend/Parser.cpp - ANTLR front end and AST construction ----------===//
//
// Source text -> UTF-8 check -> ANTLR lexer -> TokenFilter (Scala newline
// rule, bracket tracking) -> ANTLR parser (SLL first, full LL on failure) ->
// AST. All ANTLR types stay in this file.
//
//===----------------------------------------------------------------------===//
#include "frontend/Parser.h"

#include "ir/StackGuard.h"
#include "ir/Diagnostics.h"

#include "ModelLexer.h"
#include "ModelParser.h"
#include "antlr4-runtime.h"

#include <charconv>
#include <deque>
#include <set>

using namespace antlr4;
using ppcgrammar::ModelLexer;
using ppcgrammar::ModelParser;

namespace ppc {
namespace {

SourceLoc locOf(const Token *t) {
  return {static_cast<uint32_t>(t->getLine()), static_cast<uint32_t>(t->getCharPositionInLine() + 1)};
}

SourceRange rangeOf(const Token *t) {
  if (t->getType() == Token::EOF)
    return SourceRange(locOf(t), 1);
  size_t width = t->getStopIndex() >= t->getStartIndex() ? t->getStopIndex() - t->getStartIndex() + 1 : 1;
  return SourceRange(locOf(t), static_cast<uint32_t>(width));
}

SourceRange rangeOf(tree::TerminalNode *n) { return rangeOf(n->getSymbol()); }

/// The source range of a parse-tree node: from its first token, on one line.
SourceRange rangeOf(ParserRuleContext *ctx) {
  const Token *start = ctx->getStart(), *stop = ctx->getStop();
  if (!stop || stop->getLine() != start->getLine() || stop->getStopIndex() < start->getStartIndex())
    return rangeOf(start);
  return SourceRange(locOf(start), static_cast<uint32_t>(stop->getStopIndex() - start->getStartIndex() + 1));
}

std::string describeToken(const Token *t) {
  switch (t->getType()) {
  case Token::EOF: return "end of file";
  case ModelLexer::NL: return "newline";
  default: break;
  }
  std::string text = t->getText();
  if (text.size() > 40)
    text = text.substr(0, 40) + "...";
  std::string shown;
  for (unsigned char c : text) {
    if (c < 0x20 || c == 0x7F) {
      char buf[12];
      snprintf(buf, sizeof buf, "U+%04X", c);
      shown += buf;
    } else {
      shown += static_cast<char>(c);
    }
  }
  return "'" + shown + "'";
}

//===----------------------------------------------------------------------===//
// Token filter: Scala's newline rule and structural checks
//===----------------------------------------------------------------------===//

bool canEndStatement(size_t type) {
  switch (type) {
  case ModelLexer::ID: case ModelLexer::INT: case ModelLexer::FLOAT: case ModelLexer::RPAREN:
  case ModelLexer::RBRACE: case ModelLexer::QUESTION: case ModelLexer::UNDERSCORE:
    return true;
  default:
    return false;
  }
}

bool canBeginStatement(size_t type) {
  switch (type) {
  case ModelLexer::VAL: case ModelLexer::ID: case ModelLexer::INT: case ModelLexer::FLOAT:
  case ModelLexer::LPAREN: case ModelLexer::LBRACE: case ModelLexer::MINUS: case ModelLexer::PLUS:
  case ModelLexer::IF: case ModelLexer::FOR: case ModelLexer::QUESTION: case ModelLexer::UNDERSCORE:
  case ModelLexer::AT:
    return true;
  default:
    return false;
  }
}

/// Sits between the lexer and the parser. Keeps a newline only where it
/// separates statements: the previous token can end a statement, the next
/// can begin one, and the innermost bracket is not a parenthesis. Reports
/// characters the language does not have, unterminated comments and
/// unclosed brackets.
class TokenFilter : public TokenSource {
public:
  TokenFilter(ModelLexer &lexer, DiagnosticEngine &diags) : lexer_(lexer), diags_(diags) {}

  std::unique_ptr<Token> nextToken() override {
    for (;;) {
      std::unique_ptr<Token> t = lexer_.nextToken();
      size_t type = t->getType();
      if (type == ModelLexer::NL) {
        if (!pendingNewline_)
          pendingNewline_ = std::move(t);
        continue;
      }
      if (type == ModelLexer::ERROR_CHAR) {
        diags_.error(rangeOf(t.get()), "unexpected character " + describeToken(t.get()));
        errorLines_.insert(t->getLine());
        continue;
      }
      if (type == ModelLexer::STAR && prevType_ == ModelLexer::SLASH &&
          t->getStartIndex() == prevStop_ + 1) {
        diags_.error(SourceRange(prevLoc_, 2), "unterminated comment: '/*' without a matching '*/'");
        unclosedReported_ = true;
        firstStructuralError_ = std::min(firstStructuralError_, t->getStartIndex() - 1); // at the '/'
        // Everything after an unterminated comment is comment text.
        while (lexer_.nextToken()->getType() != Token::EOF) {
        }
        return eof();
      }
      // Newlines count inside braces but not inside parentheses; what matters
      // is the bracket around the newline, i.e. before this token.
      bool parenContext = !brackets_.empty() && brackets_.back().first == ModelLexer::LPAREN;
      if (type == ModelLexer::LPAREN || type == ModelLexer::LBRACE) {
        brackets_.push_back({type, rangeOf(t.get())});
      } else if (type == ModelLexer::RPAREN || type == ModelLexer::RBRACE) {
        size_t open = type == ModelLexer::RPAREN ? ModelLexer::LPAREN : ModelLexer::LBRACE;
        bool opened = false;
        for (const auto &b : brackets_)
          opened = opened || b.first == open;
        if (!opened) {
          // `f(a))`: a closing bracket that nothing opened.
          diags_.error(rangeOf(t.get()), "unmatched " + describeToken(t.get()) + ": no '" +
                                             (open == ModelLexer::LPAREN ? "(" : "{") + "' is open here");
          structuralError(t.get());
        } else {
          if (brackets_.back().first != open) {
            // `f(a }`: say which bracket is unclosed, and close it here.
            auto [other, where] = brackets_.back();
            diags_.error(where, std::string("unclosed '") + (other == ModelLexer::LPAREN ? "(" : "{") +
                                    "': expected '" + (other == ModelLexer::LPAREN ? ")" : "}") + "' before " +
                                    describeToken(t.get()) + " at line " + std::to_string(t->getLine()));
            // Take the closer as a typo for the right one: it closes the top.
            structuralError(t.get());
          }
          brackets_.pop_back();
        }
      } else if (type == Token::EOF) {
        if (!brackets_.empty() && !unclosedReported_ && firstStructuralError_ == SIZE_MAX) {
          auto [open, where] = brackets_.back();
          diags_.error(where, std::string("unclosed '") + (open == ModelLexer::LPAREN ? "(" : "{") +
                                  "': no matching '" + (open == ModelLexer::LPAREN ? ")" : "}") +
                                  "' before the end of the file");
          unclosedReported_ = true;
          structuralError(t.get());
        }
      }
      // Scala accepts a newline after `if (cond)` and before the `{` of a
      // method's block argument (`xs.map` newline `{ x => ... }`).
      bool continuation = afterIfCondition_ || (type == ModelLexer::LBRACE && prevType_ == ModelLexer::ID &&
                                                prevPrevType_ == ModelLexer::DOT);
      trackIfCondition(type);
      std::unique_ptr<Token> nl = std::move(pendingNewline_);
      pendingNewline_.reset();
      remember(t.get());
      if (nl && !parenContext && !continuation && canEndStatement(prevEmittedType_) && canBeginStatement(type)) {
        queued_ = std::move(t);
        prevEmittedType_ = ModelLexer::NL;
        return nl;
      }
      prevEmittedType_ = type;
      return t;
    }
  }

  /// Returns the token held back behind a newline, if any.
  std::unique_ptr<Token> takeQueued() {
    if (queued_)
      prevEmittedType_ = queued_->getType();
    return std::move(queued_);
  }

  bool reportedUnclosed() const { return unclosedReported_; }
  /// True if a parser error at `t` would repeat what the filter said: it is at
  /// or after a bracket or comment error (the parser's complaints there are
  /// consequences), or on a line with a bad character.
  bool explains(const Token *t) const {
    return t->getStartIndex() >= firstStructuralError_ || errorLines_.count(t->getLine()) != 0;
  }

  size_t getLine() const override { return lexer_.getLine(); }
  size_t getCharPositionInLine() override { return lexer_.getCharPositionInLine(); }
  CharStream *getInputStream() override { return lexer_.getInputStream(); }
  std::string getSourceName() override { return lexer_.getSourceName(); }
  TokenFactory<CommonToken> *getTokenFactory() override { return lexer_.getTokenFactory(); }

private:
  // Finds the `)` that closes an `if (` condition.
  void trackIfCondition(size_t type) {
    afterIfCondition_ = false;
    if (type == ModelLexer::LPAREN && prevType_ == ModelLexer::IF) {
      ifDepths_.push_back(brackets_.size());
    } else if (type == ModelLexer::RPAREN && !ifDepths_.empty() && ifDepths_.back() == brackets_.size() + 1) {
      ifDepths_.pop_back();
      afterIfCondition_ = true;
    }
  }
  void structuralError(const Token *t) {
    firstStructuralError_ = std::min(firstStructuralError_, t->getStartIndex());
  }
  void remember(const Token *t) {
    prevPrevType_ = prevType_;
    prevType_ = t->getType();
    prevStop_ = t->getStopIndex();
    prevLoc_ = locOf(t);
  }
  std::unique_ptr<Token> eof() {
    auto t = std::make_unique<CommonToken>(Token::EOF);
    t->setLine(lexer_.getLine());
    t->setCharPositionInLine(lexer_.getCharPositionInLine());
    return t;
  }

  ModelLexer &lexer_;
  DiagnosticEngine &diags_;
  std::unique_ptr<Token> pendingNewline_, queued_;
  std::vector<std::pair<size_t, SourceRange>> brackets_;
  size_t prevType_ = 0, prevPrevType_ = 0, prevStop_ = 0, prevEmittedType_ = 0;
  std::vector<size_t> ifDepths_; ///< bracket depth inside each open `if (`
  bool afterIfCondition_ = false;
  SourceLoc prevLoc_;
  bool unclosedReported_ = false;
  size_t firstStructuralError_ = SIZE_MAX;
  std::set<size_t> errorLines_;
};

/// Presents TokenFilter's output, including held-back tokens, as one source.
class FilteredSource : public TokenSource {
public:
  explicit FilteredSource(TokenFilter &f) : f_(f) {}
  std::unique_ptr<Token> nextToken() override {
    if (auto q = f_.takeQueued())
      return q;
    return f_.nextToken();
  }
  size_t getLine() const override { return f_.getLine(); }
  size_t getCharPositionInLine() override { return f_.getCharPositionInLine(); }
  CharStream *getInputStream() override { return f_.getInputStream(); }
  std::string getSourceName() override { return f_.getSourceName(); }
  TokenFactory<CommonToken> *getTokenFactory() override { return f_.getTokenFactory(); }

private:
  TokenFilter &f_;
};

//===----------------------------------------------------------------------===//
// Syntax errors
//===----------------------------------------------------------------------===//

struct TooManyErrors {};

class SyntaxErrorListener : public BaseErrorListener {
public:
  SyntaxErrorListener(DiagnosticEngine &diags, const TokenFilter &filter) : diags_(diags), filter_(filter) {}

  void syntaxError(Recognizer *recognizer, Token *offending, size_t line, size_t col,
                   const std::string &msg, std::exception_ptr) override {
    ++count_;
    if (!offending) {
      diags_.error(SourceRange({uint32_t(line), uint32_t(col + 1)}), msg);
      return;
    }
    // The filter already said which bracket is unclosed; the parser's
    // complaint at the end of the file adds nothing.
    if ((offending->getType() == Token::EOF && filter_.reportedUnclosed()) || filter_.explains(offending))
      return;
    // ANTLR's recovery often complains again right after an error: keep the
    // first complaint of a line and of the next few tokens.
    if (reported_ && (offending->getLine() == lastLine_ || offending->getTokenIndex() <= lastToken_ + 3))
      return;
    reported_ = true;
    lastLine_ = offending->getLine();
    lastToken_ = offending->getTokenIndex();
    std::string message = "unexpected " + describeToken(offending);
    auto *parser = dynamic_cast<Parser *>(recognizer);
    const Token *previous = nullptr;
    if (parser && offending->getTokenIndex() > 0)
      previous = parser->getTokenStream()->get(offending->getTokenIndex() - 1);
    bool separatorFits = false;
    if (parser) {
      misc::IntervalSet expected = parser->getExpectedTokens();
      separatorFits = expected.contains(size_t(ModelLexer::SEMI)) || expected.contains(size_t(ModelLexer::NL)) ||
                      expected.contains(size_t(ModelLexer::RBRACE));
    }
    if (separatorFits && previous && previous->getLine() == offending->getLine() &&
        canEndStatement(previous->getType()) && canBeginStatement(offending->getType())) {
      message += "; separate statements with ';' or a newline";
    } else if (msg.rfind("missing ", 0) == 0) {
      // "missing X at Y"
      size_t at = msg.rfind(" at ");
      message = "expected " + msg.substr(8, at == std::string::npos ? std::string::npos : at - 8) +
                " before " + describeToken(offending);
    } else if (parser) {
      std::string expected = describeExpected(*parser);
      if (!expected.empty())
        message += "; expected " + expected;
    }
    diags_.error(rangeOf(offending), message);
    if (diags_.tooManyErrors())
      throw TooManyErrors();
  }

  unsigned count() const { return count_; }

private:
  static std::string describeExpected(Parser &parser) {
    misc::IntervalSet set = parser.getExpectedTokens();
    const dfa::Vocabulary &vocab = parser.getVocabulary();
    std::vector<std::string> names;
    bool expression = set.contains(size_t(ModelLexer::ID)) && set.contains(size_t(ModelLexer::INT));
    if (expression)
      names.push_back("an expression");
    for (size_t t : set.toList()) {
      if (expression && (t == ModelLexer::ID || t == ModelLexer::INT || t == ModelLexer::FLOAT ||
                         t == ModelLexer::LPAREN || t == ModelLexer::LBRACE || t == ModelLexer::MINUS ||
                         t == ModelLexer::PLUS || t == ModelLexer::QUESTION || t == ModelLexer::UNDERSCORE ||
                         t == ModelLexer::IF || t == ModelLexer::FOR))
        continue;
      if (t == ModelLexer::NL || t == ModelLexer::SEMI) {
        if (std::find(names.begin(), names.end(), "';' or a newline") == names.end())
          names.push_back("';' or a newline");
        continue;
      }
      if (t == Token::EOF)
        names.push_back("end of file");
      else if (t == ModelLexer::ID)
        names.push_back("a name");
      else if (t == ModelLexer::INT)
        names.push_back("an integer");
      else if (t == ModelLexer::FLOAT)
        names.push_back("a number");
      else
        names.push_back(vocab.getDisplayName(t));
    }
    if (names.empty() || names.size() > 6)
      return "";
    std::string out;
    for (size_t i = 0; i < names.size(); ++i) {
      if (i)
        out += i + 1 == names.size() ? " or " : ", ";
      out += names[i];
    }
    return out;
  }

  DiagnosticEngine &diags_;
  const TokenFilter &filter_;
  unsigned count_ = 0;
  bool reported_ = false;
  size_t lastLine_ = 0, lastToken_ = 0;
};

/// The generated parser with a stack check on every rule entry.
class GuardedParser : public ModelParser {
public:
  using ModelParser::ModelParser;
  void enterRule(ParserRuleContext *ctx, size_t state, size_t rule) override {
    if (stackExhausted())
      throw NestingTooDeep();
    ModelParser::enterRule(ctx, state, rule);
  }
  void enterRecursionRule(ParserRuleContext *ctx, size_t state, size_t rule, int prec) override {
    if (stackExhausted())
      throw NestingTooDeep();
    ModelParser::enterRecursionRule(ctx, state, rule, prec);
  }
};

//===----------------------------------------------------------------------===//
// Parse tree -> AST
//===----------------------------------------------------------------------===//

class ASTBuilder {
public:
  explicit ASTBuilder(DiagnosticEngine &diags) : diags_(diags) {}

  std::unique_ptr<ast::Model> model(ModelParser::ModelContext *ctx) {
    auto m = std::make_unique<ast::Model>();
    m->annotation = ctx->ID(0)->getText();
    m->annotationLoc = SourceRange(locOf(ctx->AT()->getSymbol()), 1 + m->annotation.size());
    if (m->annotation != "Model")
      diags_.error(m->annotationLoc, "unknown annotation '@" + m->annotation + "'; a model is declared with '@Model class Name(...)'");
    m->name = ctx->ID(1)->getText();
    m->nameLoc = rangeOf(ctx->ID(1));
    if (auto *pl = ctx->paramList())
      for (auto *p : pl->param()) {
        ast::Param param;
        param.name = p->ID(0)->getText();
        param.nameLoc = rangeOf(p->ID(0));
        param.typeName = p->ID(1)->getText();
        param.typeLoc = rangeOf(p->ID(1));
        if (p->expr())
          param.defaultValue = expr(p->expr());
        m->params.push_back(std::move(param));
      }
    m->body = statements(ctx->statements());
    for (const ast::BlockItem &item : m->body)
      if (item.expr)
        diags_.error(item.expr->loc, "expected a 'val' definition; the body of a model is a list of 'val name = expression'");
    return m;
  }

private:
  static void guard(ParserRuleContext *) {
    if (stackExhausted())
      throw NestingTooDeep();
  }

  std::vector<ast::BlockItem> statements(ModelParser::StatementsContext *ctx) {
    std::vector<ast::BlockItem> items;
    for (auto *item : ctx->blockItem()) {
      ast::BlockItem out;
      if (auto *v = item->valDef()) {
        auto def = std::make_unique<ast::ValDef>();
        def->name = v->ID(0)->getText();
        def->nameLoc = rangeOf(v->ID(0));
        def->valLoc = rangeOf(v->VAL());
        if (v->ID().size() > 1) {
          def->typeAnnotation = v->ID(1)->getText();
          def->typeLoc = rangeOf(v->ID(1));
        }
        def->init = expr(v->expr());
        out.def = std::move(def);
      } else {
        out.expr = expr(item->expr());
      }
      items.push_back(std::move(out));
    }
    return items;
  }

  ast::ExprPtr block(ModelParser::StatementsContext *ctx, SourceRange loc) {
    auto b = std::make_unique<ast::Block>(loc);
    b->items = statements(ctx);
    return b;
  }

  ast::ExprPtr expr(ModelParser::ExprContext *ctx) {
    guard(ctx);
    if (auto *c = dynamic_cast<ModelParser::IfExprContext *>(ctx)) {
      auto e = std::make_unique<ast::If>(rangeOf(c->IF()));
      e->cond = expr(c->expr(0));
      e->thenExpr = expr(c->expr(1));
      e->elseExpr = expr(c->expr(2));
      return e;
    }
    if (auto *c = dynamic_cast<ModelParser::ForExprContext *>(ctx)) {
      auto m = std::make_unique<ast::Map>(rangeOf(c->FOR()));
      m->spelling = ast::Map::Spelling::For;
      m->method = "map";
      m->methodLoc = rangeOf(c->FOR());
      m->receiver = expr(c->expr(0));
      m->fn = lambda(c->binder, expr(c->expr(1)));
      return m;
    }
    if (auto *c = dynamic_cast<ModelParser::LambdaExprContext *>(ctx))
      return lambda(c->lambda()->binder, expr(c->lambda()->expr()));
    auto *c = static_cast<ModelParser::MatchOrInfixContext *>(ctx);
    ast::ExprPtr scrutinee = infix(c->infixExpr());
    if (!c->MATCH())
      return scrutinee;
    auto m = std::make_unique<ast::Match>(rangeOf(c->MATCH()));
    m->scrutinee = std::move(scrutinee);
    for (auto *cc : c->caseClause()) {
      ast::MatchCase mc;
      mc.loc = rangeOf(cc->CASE());
      if (cc->pattern->getType() == ModelLexer::INT) {
        auto lit = intLiteral(cc->pattern);
        mc.value = lit ? lit->value : 0;
      }
      mc.body = block(cc->statements(), rangeOf(cc->ARROW()));
      m->cases.push_back(std::move(mc));
    }
    return m;
  }

  ast::ExprPtr lambda(Token *binder, ast::ExprPtr body) {
    auto fn = std::make_unique<ast::Lambda>(rangeOf(binder));
    if (binder->getType() == ModelLexer::ID)
      fn->param = binder->getText();
    fn->paramLoc = rangeOf(binder);
    fn->body = std::move(body);
    return fn;
  }

  ast::ExprPtr infix(ModelParser::InfixExprContext *ctx) {
    guard(ctx);
    if (auto *c = dynamic_cast<ModelParser::PrefixContext *>(ctx))
      return prefix(c->prefixExpr());
    if (auto *c = dynamic_cast<ModelParser::MulDivContext *>(ctx))
      return std::make_unique<ast::Binary>(rangeOf(c->op), c->op->getText()[0], infix(c->infixExpr(0)),
                                           infix(c->infixExpr(1)));
    if (auto *c = dynamic_cast<ModelParser::AddSubContext *>(ctx))
      return std::make_unique<ast::Binary>(rangeOf(c->op), c->op->getText()[0], infix(c->infixExpr(0)),
                                           infix(c->infixExpr(1)));
    auto *c = static_cast<ModelParser::RangeContext *>(ctx);
    return std::make_unique<ast::Range>(rangeOf(c->op), c->op->getType() == ModelLexer::TO,
                                        infix(c->infixExpr(0)), infix(c->infixExpr(1)));
  }

  ast::ExprPtr prefix(ModelParser::PrefixExprContext *ctx) {
    guard(ctx);
    if (ctx->op)
      return std::make_unique<ast::Unary>(rangeOf(ctx->op), ctx->op->getText()[0], prefix(ctx->prefixExpr()));
    return postfix(ctx->postfixExpr());
  }

  ast::ExprPtr postfix(ModelParser::PostfixExprContext *ctx) {
    guard(ctx);
    if (auto *c = dynamic_cast<ModelParser::AtomContext *>(ctx))
      return primary(c->primary());
    if (auto *c = dynamic_cast<ModelParser::MethodCallContext *>(ctx)) {
      auto m = std::make_unique<ast::Map>(rangeOf(c->DOT()));
      m->receiver = postfix(c->postfixExpr());
      m->method = c->ID()->getText();
      m->methodLoc = rangeOf(c->ID());
      m->fn = mapArgument(expr(c->expr()));
      return m;
    }
    if (auto *c = dynamic_cast<ModelParser::MethodBlockContext *>(ctx)) {
      auto m = std::make_unique<ast::Map>(rangeOf(c->DOT()));
      m->spelling = ast::Map::Spelling::Brace;
      m->receiver = postfix(c->postfixExpr());
      m->method = c->ID(0)->getText();
      m->methodLoc = rangeOf(c->ID(0));
      m->fn = lambda(c->binder, block(c->statements(), rangeOf(c->ARROW())));
      return m;
    }
    auto *c = static_cast<ModelParser::ApplyContext *>(ctx);
    auto a = std::make_unique<ast::Apply>(rangeOf(c->postfixExpr()), postfix(c->postfixExpr()));
    a->lparen = rangeOf(c->LPAREN());
    for (auto *e : c->expr())
      a->args.push_back(expr(e));
    return a;
  }

  // `_.map(f)`, `_ + 1`: an argument with a placeholder is a lambda of one
  // fresh parameter (Scala's rule, for the innermost enclosing argument).
  ast::ExprPtr mapArgument(ast::ExprPtr arg) {
    if (arg->kind == ast::ExprKind::Lambda)
      return arg;
    std::vector<ast::ExprPtr *> holes;
    findPlaceholders(arg, holes);
    if (holes.empty())
      return arg;
    std::string param = "_$" + std::to_string(++placeholderCount_);
    for (size_t i = 0; i < holes.size(); ++i) {
      if (i > 0) {
        diags_.error((*holes[i])->loc, "only one '_' placeholder is allowed in a map argument; name the lambda parameter instead (x => ...)");
        continue;
      }
      SourceRange loc = (*holes[i])->loc;
      *holes[i] = std::make_unique<ast::Name>(loc, param);
    }
    auto fn = std::make_unique<ast::Lambda>(arg->loc);
    fn->param = param;
    fn->paramLoc = arg->loc;
    fn->fromPlaceholder = true;
    fn->body = std::move(arg);
    return fn;
  }

  void findPlaceholders(ast::ExprPtr &e, std::vector<ast::ExprPtr *> &out) {
    if (!e)
      return;
    switch (e->kind) {
    case ast::ExprKind::Placeholder: out.push_back(&e); return;
    case ast::ExprKind::Unary: findPlaceholders(static_cast<ast::Unary &>(*e).operand, out); return;
    case ast::ExprKind::Binary: {
      auto &b = static_cast<ast::Binary &>(*e);
      findPlaceholders(b.lhs, out);
      findPlaceholders(b.rhs, out);
      return;
    }
    case ast::ExprKind::Range: {
      auto &r = static_cast<ast::Range &>(*e);
      findPlaceholders(r.lo, out);
      findPlaceholders(r.hi, out);
      return;
    }
    case ast::ExprKind::Apply: {
      auto &a = static_cast<ast::Apply &>(*e);
      findPlaceholders(a.callee, out);
      for (auto &arg : a.args)
        findPlaceholders(arg, out);
      return;
    }
    case ast::ExprKind::Map: findPlaceholders(static_cast<ast::Map &>(*e).receiver, out); return;
    default: return; // lambdas, blocks, if and match scope their own placeholders
    }
  }

  std::unique_ptr<ast::IntLit> intLiteral(Token *t) {
    auto lit = std::make_unique<ast::IntLit>(rangeOf(t));
    std::string text = t->getText();
    if (!text.empty() && (text.back() == 'L' || text.back() == 'l')) {
      lit->longSuffix = true;
      text.pop_back();
    }
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), lit->value);
    if (ec != std::errc() || p != text.data() + text.size())
      diags_.error(lit->loc, "integer literal " + t->getText() + " is too large");
    else if (lit->value > (int64_t(1) << 53)) // sizes and indices are exact in a double up to 2^53
      diags_.error(lit->loc, "integer literal " + t->getText() +
                                 " is beyond 2^53 (9007199254740992), where ppc's sizes and indices stop being exact");
    return lit;
  }

  ast::ExprPtr primary(ModelParser::PrimaryContext *ctx) {
    guard(ctx);
    if (auto *c = dynamic_cast<ModelParser::IntLitContext *>(ctx))
      return intLiteral(c->INT()->getSymbol());
    if (auto *c = dynamic_cast<ModelParser::FloatLitContext *>(ctx)) {
      auto lit = std::make_unique<ast::FloatLit>(rangeOf(c->FLOAT()));
      lit->text = c->FLOAT()->getText();
      std::string text = lit->text;
      if (!text.empty() && std::string("dDfF").find(text.back()) != std::string::npos)
        text.pop_back();
      if (text[0] == '.')
        text = "0" + text;
      auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), lit->value);
      if (ec != std::errc() || p != text.data() + text.size())
        diags_.error(lit->loc, "floating-point literal " + lit->text + " is out of range");
      return lit;
    }
    if (auto *c = dynamic_cast<ModelParser::NameContext *>(ctx))
      return std::make_unique<ast::Name>(rangeOf(c->ID()), c->ID()->getText());
    if (auto *c = dynamic_cast<ModelParser::UnknownSizeContext *>(ctx))
      return std::make_unique<ast::Unknown>(rangeOf(c->QUESTION()));
    if (auto *c = dynamic_cast<ModelParser::PlaceholderContext *>(ctx))
      return std::make_unique<ast::Placeholder>(rangeOf(c->UNDERSCORE()));
    if (auto *c = dynamic_cast<ModelParser::ParenContext *>(ctx))
      return expr(c->expr());
    auto *c = static_cast<ModelParser::BlockContext *>(ctx);
    return block(c->statements(), rangeOf(c->LBRACE()));
  }

  DiagnosticEngine &diags_;
  unsigned placeholderCount_ = 0;
};

} // namespace

bool checkUtf8(std::string_view s, DiagnosticEngine &diags) {
  uint32_t line = 1, col = 1;
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      len = 1;
      cp = c;
    } else if ((c >> 5) == 0x6) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c >> 4) == 0xE) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c >> 3) == 0x1E) {
      len = 4;
      cp = c & 0x07;
    }
    bool ok = len != 0 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k) {
      unsigned char cc = static_cast<unsigned char>(s[i + k]);
      ok = (cc >> 6) == 0x2;
      cp = (cp << 6) | (cc & 0x3F);
    }
    // Reject overlong forms, surrogates and values beyond U+10FFFF.
    if (ok && ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
               (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF))
      ok = false;
    if (!ok) {
      char hex[8];
      snprintf(hex, sizeof hex, "0x%02X", c);
      diags.error(SourceRange({line, col}), std::string("invalid UTF-8 (byte ") + hex +
                                                "); model files must be UTF-8 text");
      return false;
    }
    if (c == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
    i += len;
  }
  return true;
}

std::unique_ptr<ast::Model> parseModel(std::string_view source, DiagnosticEngine &diags) {
  if (!checkUtf8(source, diags))
    return nullptr;
  ANTLRInputStream input(source.data(), source.size());
  ModelLexer lexer(&input);
  lexer.removeErrorListeners();
  TokenFilter filter(lexer, diags);
  FilteredSource source2(filter);
  CommonTokenStream tokens(&source2);
  tokens.fill();
  // Nothing but comments and blank lines.
  if (tokens.size() == 0 || tokens.get(0)->getType() == Token::EOF) {
    if (!diags.hasErrors())
      diags.error(SourceRange({1, 1}), "empty model: expected '@Model class Name(parameters) { ... }'");
    return nullptr;
  }
  unsigned lexErrors = diags.errorCount();

  GuardedParser parser(&tokens);
  parser.removeErrorListeners();
  SyntaxErrorListener listener(diags, filter);
  ModelParser::ModelContext *tree = nullptr;
  try {
    // Fast path: SLL prediction, bail out at the first error...
    parser.getInterpreter<atn::ParserATNSimulator>()->setPredictionMode(atn::PredictionMode::SLL);
    parser.setErrorHandler(std::make_shared<BailErrorStrategy>());
    try {
      tree = parser.model();
    } catch (ParseCancellationException &) {
      // ...then full LL with error recovery, to report every error.
      tokens.seek(0);
      parser.reset();
      parser.addErrorListener(&listener);
      parser.setErrorHandler(std::make_shared<DefaultErrorStrategy>());
      parser.getInterpreter<atn::ParserATNSimulator>()->setPredictionMode(atn::PredictionMode::LL);
      tree = parser.model();
    }
  } catch (NestingTooDeep &) {
    Token *t = parser.getCurrentToken();
    diags.error(t ? rangeOf(t) : SourceRange(), "the model is nested too deeply to compile");
    return nullptr;
  } catch (TooManyErrors &) {
    return nullptr;
  }
  if (listener.count() || diags.errorCount() != lexErrors || lexErrors || !tree)
    return nullptr;

  try {
    ASTBuilder builder(diags);
    auto model = builder.model(tree);
    if (diags.hasErrors())
      return nullptr;
    return model;
  } catch (NestingTooDeep &) {
    diags.error("the model is nested too deeply to compile");
    return nullptr;
  }
}

} // namespace ppc

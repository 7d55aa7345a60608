//===- codegen/plan/KernelCalls.cpp - runtime kernel calls ------------------===//
//
// Kernel calls are marshalled from the kernel's calling pattern in the
// catalogue (runtime/Catalogue.h, KernelPattern): the pattern names, for each
// kernel parameter, which factor argument supplies it and in what form. The
// pattern is checked against the kernel's C signature.
//
//===----------------------------------------------------------------------===//
#include "codegen/plan/PlanEdits.h"
#include "codegen/plan/PlanBuilder.h"

#include "runtime/Symbols.h"

#include <cmath>
#include <sstream>

namespace ppc::codegen::lowering {


std::optional<KernelRole> roleOf(std::string_view kernel) {
  for (const FamilySpec &fs : allFamilies()) {
    const FactorOperators &ops = factorOperators(fs.family);
    for (size_t a = 0; a < ops.toArgument.size(); ++a)
      if (ops.toArgument[a].kernel == kernel || ops.toArgument[a].observedKernel == kernel)
        return KernelRole{fs.family, KernelRole::Message, int(a)};
    if (ops.elboKernel == kernel || ops.observedElboKernel == kernel)
      return KernelRole{fs.family, KernelRole::Elbo, 0};
  }
  for (const FamilySpec &fs : allFamilies())
    if (entropyKernel(fs.family) == kernel)
      return KernelRole{fs.family, KernelRole::Entropy, 0};
  return std::nullopt;
}

/// The statistics of a constant as the parent of parameter `param` of a
/// `family` factor (point mass: the constant operators). A vector
/// constant is c in each of `dimension` components, a matrix one c I.
std::vector<double> PlanBuilder::pointMass(Family family, int param, double c, int64_t dimension) {
  // The statistics of c as a variable of the parameter's (first) conjugate family.
  const FamilySpec &fs = familySpec(family);
  Family parent = fs.params[param - 1].parents.empty() ? Family::Gaussian : fs.params[param - 1].parents[0];
  if (wholeRowsOperand(family) == param - 1 && parent == Family::MvGaussian) {
    // Rows read whole (a vector chain's transition matrix): c I, row by row.
    std::vector<double> rows;
    for (int64_t d = 0; d < dimension; ++d) {
      std::vector<double> row = factorEntry(parent).pointMass(0.0, dimension);
      row[size_t(d)] = c;
      row[size_t(dimension + d * dimension + d)] = c * c;
      rows.insert(rows.end(), row.begin(), row.end());
    }
    return rows;
  }
  return factorEntry(parent).pointMass(c, dimension);
}

/// Builds the call of `kernel` with the factor's arguments `args` (indexed
/// by argument, nullopt for the target), the gate weight, and the
/// destination row (messages).
std::optional<Stmt> PlanBuilder::marshal(std::string_view kernel, const KernelRole &role,
                            const std::vector<std::optional<Source>> &args, ExprId gateWeight, ExprId repl,
                            std::optional<std::pair<int32_t, ExprId>> dst, SourceRange where,
                            bool *replUsed) {
  if (replUsed)
    *replUsed = false;
  const rt::RuntimeSymbol *sym = rt::findRuntimeKernel(kernel);
  const std::string_view pattern = callingPattern(kernel);
  if (!sym || pattern.empty()) {
    fail(where, "the code generator has no calling pattern for kernel " + std::string(kernel));
    return std::nullopt;
  }
  Stmt call;
  call.kind = Stmt::Kind::Call;
  call.kernel = sym;
  auto argOf = [&](char digit) -> const Source * {
    size_t i = size_t(digit - '0');
    if (i >= args.size() || !args[i]) {
      fail(where, "internal: kernel " + std::string(kernel) + " reads argument " + std::to_string(i) +
                      ", which the statement does not have");
      return nullptr;
    }
    return &*args[i];
  };
  auto dimensionOf = [&](char digit) -> int64_t {
    size_t i = size_t(digit - '0');
    if (i < args.size() && args[i])
      return args[i]->dimension;
    if (role.kind == KernelRole::Message && int(i) == role.target && dst)
      return targetDimension_;
    fail(where, "internal: no dimension for argument " + std::to_string(i) + " of " + std::string(kernel));
    return 1;
  };
  std::istringstream in{std::string(pattern)};
  std::string tok;
  while (in >> tok && ok_) {
    Arg a;
    char c = tok[0];
    switch (c) {
    case '1':
      a.kind = Arg::Kind::Int;
      a.expr = p_.intConst(1);
      break;
    case '0':
      a.kind = Arg::Kind::Null;
      break;
    case 'D':
      a.kind = Arg::Kind::Int;
      a.expr = p_.intConst(dimensionOf(tok[1]));
      break;
    case 'P':
      if (position_ == kNoExpr) {
        fail(where, "internal: kernel " + std::string(kernel) + " reads its element's position outside a message");
        return std::nullopt;
      }
      a.kind = Arg::Kind::Int;
      a.expr = position_;
      break;
    case 'w':
      a.kind = Arg::Kind::Double;
      a.expr = times(gateWeight, repl) == kNoExpr ? p_.doubleConst(1) : times(gateWeight, repl);
      break;
    case 'd':
      a.kind = Arg::Kind::Pointer;
      a.buffer = dst->first;
      a.expr = dst->second;
      break;
    case 'W': {
      ExprId w = role.kind == KernelRole::Message ? times(gateWeight, repl) : repl;
      if (replUsed)
        *replUsed = true;
      if (w == kNoExpr) {
        a.kind = Arg::Kind::Null;
      } else {
        a.kind = Arg::Kind::TempPointer;
        a.expr = w;
      }
      break;
    }
    default: {
      const Source *s = argOf(tok[1]);
      if (!s)
        return std::nullopt;
      int argIndex = tok[1] - '0';
      if (c == 'Q' && (s->kind != Source::Latent || isDeterministicFamily(p_.posteriors[s->posterior].family))) {
        a.kind = Arg::Kind::Null; // not a posterior (a constant, or a value computed forward): the kernel reads its S<i>
      } else if (c == 'S' || c == 'N' || c == 'Q') {
        if (s->kind == Source::Latent) {
          const Posterior &post = p_.posteriors[s->posterior];
          a.kind = Arg::Kind::Pointer;
          a.buffer = c == 'S' ? post.stats : post.eta; // N, Q: natural parameters
          a.expr = p_.mul(s->element, p_.intConst(post.width));
          noteRead(s->posterior, where);
        } else if (s->kind == Source::Data && c == 'S' && argIndex > 0 && ir::isKnownInput(s->data)) {
          // A known input: a constant per element, as its point mass.
          const FamilySpec &fs = familySpec(role.family);
          const ParamSpec &param = fs.params[size_t(argIndex - 1)];
          Family parent = param.parents.empty() ? Family::Gaussian : param.parents[0];
          int64_t width = 0;
          a.kind = Arg::Kind::Pointer;
          a.buffer = pointMassBuffer(s->data, parent, dimensionOf('0'), width);
          a.expr = p_.mul(s->element, p_.intConst(width));
        } else if (s->kind == Source::Constant && c == 'S' && argIndex > 0) {
          a.kind = Arg::Kind::Pointer;
          a.buffer = constantBuffer(pointMass(role.family, argIndex, s->value, dimensionOf('0')));
          a.expr = p_.intConst(0);
        } else {
          fail(where, "the code generator cannot pass " + std::string(s->kind == Source::Data ? "data" : "a constant") +
                          " as argument " + std::to_string(argIndex) + " of " + std::string(kernel));
          return std::nullopt;
        }
      } else if (c == 'M' || c == 'm') { // a vector's row: full statistics or known values
        bool known = s->kind == Source::Data && ir::isKnownInput(s->data);
        if (s->kind != Source::Latent && !known) {
          fail(where, "the code generator cannot pass a constant vector as argument " + std::to_string(argIndex) +
                          " of " + std::string(kernel));
          return std::nullopt;
        }
        if (c == 'm') {
          a.kind = Arg::Kind::Int;
          a.expr = p_.intConst(known ? 0 : 1);
        } else if (known) {
          a.kind = Arg::Kind::Pointer;
          a.buffer = dataBuffer(s->data, Data::Double);
          a.expr = p_.mul(s->element, p_.intConst(s->dimension));
        } else {
          const Posterior &post = p_.posteriors[s->posterior];
          a.kind = Arg::Kind::Pointer;
          a.buffer = post.stats;
          a.expr = p_.mul(s->element, p_.intConst(post.width));
          noteRead(s->posterior, where);
        }
      } else if (c == 'V') {
        a.kind = Arg::Kind::Double;
        if (s->kind == Source::Constant) {
          a.expr = p_.doubleConst(s->value);
        } else if (s->kind == Source::Latent) {
          const Posterior &post = p_.posteriors[s->posterior];
          a.expr = p_.loadDouble(post.stats, p_.mul(s->element, p_.intConst(post.width)));
          noteRead(s->posterior, where);
        } else {
          a.expr = p_.loadDouble(dataBuffer(s->data, Data::Double), s->element);
        }
      } else if (c == 'X' || c == 'I') {
        if (s->kind != Source::Data) {
          fail(where, "internal: kernel " + std::string(kernel) + " expects data for argument " +
                          std::to_string(argIndex));
          return std::nullopt;
        }
        a.kind = Arg::Kind::Pointer;
        a.buffer = dataBuffer(s->data, c == 'X' ? Data::Double : Data::Int);
        a.expr = s->element;
        if (s->data->type.kind == ir::TypeKind::Vector) // a row of `dimension` components
          a.expr = p_.mul(s->element, p_.intConst(s->dimension));
      } else if (c == 'C') { // a constant's value
        if (s->kind != Source::Constant) {
          fail(where, "internal: kernel " + std::string(kernel) + " expects a constant for argument " +
                          std::to_string(argIndex));
          return std::nullopt;
        }
        a.kind = Arg::Kind::Double;
        a.expr = p_.doubleConst(s->value);
      } else if (c == 'A') {
        if (s->kind != Source::Constant) {
          fail(where, "internal: kernel " + std::string(kernel) + " expects a constant for argument " +
                          std::to_string(argIndex));
          return std::nullopt;
        }
        a.kind = Arg::Kind::Pointer;
        a.buffer = constantBuffer(std::vector<double>(size_t(dimensionOf('0')), s->value));
        a.expr = p_.intConst(0);
      } else {
        fail(where, "internal: bad calling pattern token " + tok);
        return std::nullopt;
      }
    }
    }
    call.args.push_back(a);
  }
  // The pattern must match the kernel's C signature.
  std::string_view sig = sym->signature.substr(1);
  bool match = sig.size() == call.args.size();
  for (size_t i = 0; match && i < sig.size(); ++i) {
    Arg::Kind k = call.args[i].kind;
    char want = k == Arg::Kind::Int ? 'l' : k == Arg::Kind::Double ? 'd' : 'p';
    match = sig[i] == want;
  }
  if (!match) {
    fail(where, "internal: calling pattern of " + std::string(kernel) + " does not match its signature " +
                    std::string(sym->signature));
    return std::nullopt;
  }
  return call;
}

/// A call of the runtime kernel `kernel` (its result discarded).
Stmt PlanBuilder::kernelCall(std::string_view kernel, std::vector<Arg> args, std::string note) {
  return edit::kernelCall(kernel, std::move(args), std::move(note));
}

Arg PlanBuilder::exprArg(Arg::Kind kind, ExprId e) {
  Arg a;
  a.kind = kind;
  a.expr = e;
  return a;
}

Arg PlanBuilder::intArg(int64_t v) {
  Arg a;
  a.kind = Arg::Kind::Int;
  a.expr = p_.intConst(v);
  return a;
}

Arg PlanBuilder::doubleArg(double v) {
  Arg a;
  a.kind = Arg::Kind::Double;
  a.expr = p_.doubleConst(v);
  return a;
}

Arg PlanBuilder::ptrArg(int32_t buffer, ExprId index) {
  Arg a;
  a.kind = Arg::Kind::Pointer;
  a.buffer = buffer;
  a.expr = index;
  return a;
}

} // namespace ppc::codegen::lowering

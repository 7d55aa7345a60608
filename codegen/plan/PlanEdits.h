//===- codegen/plan/PlanEdits.h - building blocks of plan statements -----===//
//
// What the lowering and the plan transformations make again and again: kernel
// calls, arguments, zero-fills, buffers, and the test that an index is the
// row of a loop's element.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/plan/Plan.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ppc::codegen::edit {

/// A call of the runtime kernel `kernel`, its result discarded.
Stmt kernelCall(std::string_view kernel, std::vector<Arg> args, std::string note);
/// buffer[index .. index + count) = 0.
Stmt zeroFill(int32_t buffer, ExprId index, int64_t count);
/// `for var < bound { body }`.
Stmt loopOver(int32_t var, ExprId bound, std::vector<Stmt> body = {});
/// A loop over a new variable of the plan, `bound` iterations (an empty body).
Stmt freshLoop(Plan &p, int64_t bound);
/// `for g < 1 { exit loop if flag[0] < 0.5 }`: the statements added to its
/// body run only while the switch `flag` (one double) is on.
Stmt whileSwitchedOn(Plan &p, int32_t flag, std::string note);
Arg intArg(ExprId e);
Arg doubleArg(ExprId e);
/// &buffer[index].
Arg pointerArg(int32_t buffer, ExprId index);
/// A new buffer of `size` doubles (filled with `values` when given: bound
/// data); returns its index.
int32_t addBuffer(Plan &p, std::string name, int64_t size, bool memo = false, std::vector<double> values = {});
/// The memo of X^T X over all the rows of the data matrix `X` (n x D):
/// 1 + D*D doubles, a flag then the table (runtime/factors/InnerProduct.cpp
/// fills it at its first use), one per matrix, shared by whatever reads it.
int32_t dataGram(Plan &p, int32_t X, int64_t D);
/// The width of the row of loop variable `var`'s element that `index` names
/// (var * width, or var: 1); none if it names no such row.
std::optional<int64_t> elementRowWidth(const Plan &p, ExprId index, int32_t var);
/// index == var * width (width 1: var): the row of width `width` of the
/// element of loop variable `var`.
bool isElementRow(const Plan &p, ExprId index, int32_t var, int64_t width);
/// The row an inner loop's element names: index == (base + var) * width,
/// base free of var (an outer loop's offset; kNoExpr: index == var * width).
struct ElementRow {
  ExprId base = kNoExpr;
  int64_t width = 0;
};
std::optional<ElementRow> elementRow(const Plan &p, ExprId index, int32_t var);
/// e is loop variable `var`.
bool isLoopVar(const Plan &p, ExprId e, int32_t var);
/// base where e == base + var (base free of var; may add expressions).
std::optional<ExprId> offsetOf(Plan &p, ExprId e, int32_t var);
/// (idx, base) where e == idx[base + var] * width, idx bound data: the row
/// of a table that datum var of a loop chooses (LDA's token's word).
std::optional<std::pair<int32_t, ExprId>> gatheredRow(Plan &p, ExprId e, int32_t var, int64_t width);

} // namespace ppc::codegen::edit

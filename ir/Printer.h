//===- ir/Printer.h - textual Model IR -------------------------------------===//
#pragma once

#include <string>

namespace llvm { class raw_ostream; }

namespace ppc::ir {
class Module;
struct Operand;
struct Type;

/// Prints the module in the textual form that ir/Parser.h reads back; print,
/// parse and print again gives byte-identical text.
void print(const Module &m, llvm::raw_ostream &os);
std::string toString(const Module &m);
std::string toString(const Operand &o);
std::string toString(const Type &t);
/// Shortest text of `v` that reads back as the same double and as a float
/// literal (always has a '.', an exponent, or is inf/nan).
std::string formatDouble(double v);
} // namespace ppc::ir

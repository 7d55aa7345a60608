//===- tools/Repl.h - `ppc repl` --------------------------------------------===//
#pragma once

namespace ppc {
/// `ppc repl [MODEL]`: argv[0] is "repl". Returns the exit code.
int replMain(int argc, char **argv);
} // namespace ppc

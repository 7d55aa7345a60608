//===- passes/Passes.h - constructors of every pass ------------------------===//
#pragma once

#include "passes/PassManager.h"

namespace ppc::passes {
std::unique_ptr<Pass> createVerifyPass();
std::unique_ptr<Pass> createGatePass();
std::unique_ptr<Pass> createMessagesPass();
} // namespace ppc::passes

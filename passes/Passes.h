//===- passes/Passes.h - constructors of every pass ------------------------===//
#pragma once

#include "passes/PassManager.h"

namespace ppc::passes {
std::unique_ptr<Pass> createVerifyPass();
std::unique_ptr<Pass> createGatePass();
std::unique_ptr<Pass> createMatchPass();
std::unique_ptr<Pass> createMessagesPass();
std::unique_ptr<Pass> createSchedulePass();
std::unique_ptr<Pass> createDeadCodePass();
std::unique_ptr<Pass> createLocalSchedulePass();
std::unique_ptr<Pass> createFusionPass();
std::unique_ptr<Pass> createPrintGlobalLocalPass();
std::unique_ptr<Pass> createPrintDepsPass();
std::unique_ptr<Pass> createPrintDepsDotPass();
} // namespace ppc::passes

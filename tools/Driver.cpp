#include "tools/Driver.h"

#include "frontend/AST.h"
#include "frontend/Lowering.h"
#include "frontend/Parser.h"
#include "ir/StackGuard.h"
#include "ir/Diagnostics.h"
#include "ir/IR.h"
#include "ir/Verifier.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <sys/stat.h>

namespace ppc {

std::optional<std::string> readFile(const std::string &path, std::string &error) {
  if (path == "-") {
    std::ostringstream ss;
    ss << std::cin.rdbuf();
    return ss.str();
  }
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    error = "cannot read '" + path + "': " + std::strerror(errno);
    return std::nullopt;
  }
  if (S_ISDIR(st.st_mode)) {
    error = "cannot read '" + path + "': it is a directory";
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot read '" + path + "': " + std::strerror(errno);
    return std::nullopt;
  }
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

bool parseParamFlags(const std::vector<std::string> &flags, std::map<std::string, std::string> &out,
                     std::string &error) {
  for (const std::string &f : flags) {
    size_t eq = f.find('=');
    if (eq == std::string::npos || eq == 0) {
      error = "-p expects NAME=VALUE; got '" + f + "'";
      return false;
    }
    std::string name = f.substr(0, eq);
    if (out.count(name)) {
      error = "parameter '" + name + "' is given twice (-p " + name + "=" + out[name] + " and -p " + f + ")";
      return false;
    }
    out[name] = f.substr(eq + 1);
  }
  return true;
}

std::unique_ptr<ir::Module> compileModel(const std::string &source, DiagnosticEngine &diags,
                                         std::unique_ptr<ast::Model> *astOut, bool stopAfterAST) {
  std::unique_ptr<ir::Module> module;
  std::unique_ptr<ast::Model> model = parseModel(source, diags);
  if (!model)
    return nullptr;
  if (!stopAfterAST) {
    module = lowerModel(*model, diags);
    if (module && !ir::verify(*module, diags)) {
      diags.error("internal compiler error: the front end produced invalid IR (please report this model)");
      module.reset();
    }
  }
  if (astOut)
    *astOut = std::move(model);
  return module;
}

int runTool(const std::function<int()> &body) {
  int code = 1;
  runWithLargeStack(kToolStackBytes, [&] { code = body(); });
  return code;
}

} // namespace ppc

//===- codegen/exec/StreamCheckpoint.cpp - a stochastic run's state file --===//
#include "codegen/exec/StreamCheckpoint.h"

#include "codegen/exec/Checkpoint.h"
#include "codegen/exec/JsonFields.h"

#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace ppc::codegen {

std::string encodeStreamState(const StreamState &state, const NamedBuffers &effective) {
  nlohmann::json head;
  head["step"] = state.step;
  head["offsets"] = state.offsets;
  const rt::RunSummary &sm = state.summary;
  head["elbo"] = sm.elbo;
  head["time"] = sm.time;
  head["rho"] = sm.stochastic->rho;
  nlohmann::json points = nlohmann::json::array();
  for (const auto &p : sm.stochastic->heldout)
    points.push_back({p.step, p.seconds, p.perObservation});
  head["heldout"] = points;
  std::string blob;
  nlohmann::json entries = nlohmann::json::array();
  for (const NamedBuffers *group : {&state.globals, &effective})
    for (const auto &[name, values] : *group) {
      entries.push_back({group == &state.globals ? "global" : "effective", name, values.size()});
      if (!values.empty())
        blob.append(reinterpret_cast<const char *>(values.data()), values.size() * sizeof(double));
    }
  head["buffers"] = entries;
  const std::string text = head.dump();
  std::string bytes = std::to_string(text.size()) + "\n" + text + blob;
  const uint64_t sum = checkpointChecksum(bytes);
  bytes.append(reinterpret_cast<const char *>(&sum), sizeof sum);
  return bytes;
}

void decodeStreamState(const std::string &file, const std::string &path, const std::string &dir, StreamState &state,
                       NamedBuffers &effective) {
  uint64_t sum = 0;
  const bool whole = file.size() >= sizeof sum;
  if (whole)
    std::memcpy(&sum, file.data() + file.size() - sizeof sum, sizeof sum);
  if (!whole || sum != checkpointChecksum(std::string_view(file).substr(0, file.size() - sizeof sum)))
    throw std::runtime_error(damagedCheckpoint(path, dir));
  const std::string bytes = file.substr(0, file.size() - sizeof sum);
  // Past the checksum, the numbers are still checked: a file this ppc did
  // not write may carry a matching one.
  const std::string truncated = "'" + path + "' is truncated";
  const size_t nl = bytes.find('\n');
  if (nl == std::string::npos || nl == 0 || nl > 20 || bytes.find_first_not_of("0123456789") != nl)
    throw std::runtime_error("'" + path + "' is not a ppc state file");
  const uint64_t headSize = std::stoull(bytes.substr(0, nl));
  if (headSize > bytes.size() - nl - 1)
    throw std::runtime_error(truncated);
  const nlohmann::json head = nlohmann::json::parse(bytes.substr(nl + 1, headSize));
  size_t at = nl + 1 + headSize;
  state.step = integerAt<int64_t>(head, "step");
  if (state.step < 0)
    throw std::out_of_range("'step' is negative");
  state.offsets.clear();
  if (!head.at("offsets").is_object())
    throw std::out_of_range("'offsets' is not an object");
  for (const auto &[name, offset] : head.at("offsets").items())
    state.offsets[name] = integerValue<int64_t>(offset, "an offset");
  rt::RunSummary &sm = state.summary;
  sm.elbo = head.at("elbo").get<std::vector<double>>();
  sm.time = head.at("time").get<std::vector<double>>();
  sm.iterations = state.step;
  sm.stochastic->rho = head.at("rho").get<std::vector<double>>();
  sm.stochastic->steps = state.step;
  sm.stochastic->heldout.clear();
  for (const auto &p : head.at("heldout"))
    sm.stochastic->heldout.push_back(
        {integerValue<int64_t>(p.at(0), "a held-out step"), p.at(1).get<double>(), p.at(2).get<double>()});
  for (const auto &e : head.at("buffers")) {
    const size_t count = integerValue<size_t>(e.at(2), "a buffer's length");
    if (count > (bytes.size() - at) / sizeof(double))
      throw std::runtime_error(truncated);
    std::vector<double> values(count);
    if (count) // an empty vector's data() may be null
      std::memcpy(values.data(), bytes.data() + at, count * sizeof(double));
    at += count * sizeof(double);
    (e.at(0).get<std::string>() == "global" ? state.globals : effective)[e.at(1).get<std::string>()] =
        std::move(values);
  }
  if (at != bytes.size())
    throw std::runtime_error("'" + path + "' has bytes past its buffers");
}

} // namespace ppc::codegen

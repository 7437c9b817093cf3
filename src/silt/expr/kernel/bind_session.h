#pragma once

#include <memory>

namespace silt::expr {

// Work shared between the expressions of one select list (or one job step).
// Expressions bound with the same session share the results of common
// subexpressions within a batch: every get_json_object call over the same
// input value (the seed's get_json_object(e.payload, '$.x') list) parses each
// document once per row for all of their paths, not once per call.
//
// Thread safety: all expressions bound with one session must be evaluated
// on the same thread. Ownership: the bound expressions keep what they share
// alive, so the session may be destroyed once binding is done.
class BindSession {
 public:
  BindSession();
  ~BindSession();
  BindSession(const BindSession&) = delete;
  BindSession& operator=(const BindSession&) = delete;

  // Internal to the expression module (bind_session_internal.h).
  struct State;
  State& state() { return *state_; }

 private:
  std::unique_ptr<State> state_;
};

}  // namespace silt::expr

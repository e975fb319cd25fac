#include <doctest/doctest.h>

#include "ps/client/barrier_rejoin.h"
#include "ps/client/client.h"

using namespace paddle::ps;
using Action = RejoinDecision::Action;

TEST_CASE("how a restarted worker settles its dead self's last barrier, by every server's answer") {
  const std::vector<std::string> eps{"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"};
  struct Case {
    const char* what;
    std::vector<BarrierState> states;
    Action action;
    uint64_t completed;
  };
  const Case cases[] = {
      {"it reached no barrier", {{7, false}, {7, false}, {7, false}}, Action::kNone, 7},
      {"it waits at every server's next barrier", {{7, true}, {7, true}, {7, true}}, Action::kAwait, 8},
      {"one server completed it, the others wait for another worker", {{8, false}, {7, true}, {7, true}}, Action::kAwait, 8},
      {"it reached two servers of three, none completed", {{7, true}, {7, false}, {7, true}}, Action::kDrop, 7},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    const RejoinDecision d = decide_rejoin(c.states, eps);
    CHECK(d.action == c.action);
    CHECK(d.completed == c.completed);
  }
  CHECK_THROWS_WITH_AS(decide_rejoin({{8, false}, {7, false}, {8, false}}, eps),
                       "REJOIN: parameter server 127.0.0.1:1 has completed 8 barrier(s) but 127.0.0.1:2 has completed 7 "
                       "and this worker's dead self never reached its next: its last barrier applied its step on some "
                       "servers only, so the step cannot be redone alone",
                       PsError);
  CHECK_THROWS_AS(decide_rejoin({{9, false}, {7, true}}, {"a", "b"}), PsError);  // two apart
}

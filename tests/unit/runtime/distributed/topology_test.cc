#include <doctest/doctest.h>

#include "runtime/distributed/topology.h"

using namespace paddle::runtime;

namespace {

std::string error_of(const Environment& env) {
  try {
    topology_from_environment(env);
  } catch (const TopologyError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("no distributed variables: one local trainer") {
  Topology t = topology_from_environment({{"HOME", "/root"}});
  CHECK(t.kind == JobKind::kSingle);
  CHECK(t.trainer_num == 1);
  CHECK(t.is_first_worker());
}

TEST_CASE("the launcher's collective variables") {
  Topology t = topology_from_environment({{"PADDLE_TRAINER_ID", "1"},
                                          {"PADDLE_TRAINERS_NUM", "2"},
                                          {"PADDLE_TRAINER_ENDPOINTS", "127.0.0.1:6070,127.0.0.1:6071"},
                                          {"PADDLE_CURRENT_ENDPOINT", "127.0.0.1:6071"}});
  CHECK(t.kind == JobKind::kCollective);
  CHECK(t.trainer_id == 1);
  CHECK(t.trainer_num == 2);
  CHECK(t.trainer_endpoints.size() == 2);
  CHECK(t.is_worker());
  CHECK_FALSE(t.is_first_worker());
}

TEST_CASE("inconsistent or incomplete collective variables are named") {
  Environment env{{"PADDLE_TRAINER_ID", "1"},
                  {"PADDLE_TRAINERS_NUM", "2"},
                  {"PADDLE_TRAINER_ENDPOINTS", "127.0.0.1:6070,127.0.0.1:6071"},
                  {"PADDLE_CURRENT_ENDPOINT", "127.0.0.1:6070"}};
  CHECK(error_of(env).find("PADDLE_CURRENT_ENDPOINT=127.0.0.1:6070 is not entry 1") != std::string::npos);
  env["PADDLE_TRAINERS_NUM"] = "3";
  CHECK(error_of(env).find("lists 2 endpoints but PADDLE_TRAINERS_NUM=3") != std::string::npos);
  env["PADDLE_TRAINERS_NUM"] = "two";
  CHECK(error_of(env).find("PADDLE_TRAINERS_NUM='two'") != std::string::npos);
  env.erase("PADDLE_TRAINERS_NUM");
  CHECK(error_of(env).find("PADDLE_TRAINERS_NUM is not set") != std::string::npos);
  CHECK(error_of({{"PADDLE_TRAINER_ID", "2"}, {"PADDLE_TRAINERS_NUM", "2"},
                  {"PADDLE_TRAINER_ENDPOINTS", "a:1,b:2"}, {"PADDLE_CURRENT_ENDPOINT", "b:2"}})
            .find("PADDLE_TRAINER_ID=2 is out of range") != std::string::npos);
}

TEST_CASE("style 1: TRAINING_ROLE and PADDLE_PSERVERS_IP_PORT_LIST") {
  Environment server{{"TRAINING_ROLE", "PSERVER"},
                     {"PADDLE_PSERVERS_IP_PORT_LIST", "127.0.0.1:6170,127.0.0.1:6171"},
                     {"POD_IP", "127.0.0.1"},
                     {"PADDLE_PORT", "6171"},
                     {"PADDLE_TRAINERS_NUM", "2"}};
  Topology s = topology_from_environment(server);
  CHECK(s.kind == JobKind::kParameterServer);
  CHECK(s.is_server());
  CHECK(s.server_index == 1);
  CHECK(s.trainer_num == 2);
  Environment trainer{{"TRAINING_ROLE", "TRAINER"},
                      {"PADDLE_PSERVERS_IP_PORT_LIST", "127.0.0.1:6170,127.0.0.1:6171"},
                      {"PADDLE_TRAINERS_NUM", "2"},
                      {"PADDLE_TRAINER_ID", "1"}};
  Topology t = topology_from_environment(trainer);
  CHECK(t.is_worker());
  CHECK(t.trainer_id == 1);
  CHECK(t.server_endpoints.size() == 2);
  server["PADDLE_PORT"] = "6172";
  CHECK(error_of(server).find("POD_IP:PADDLE_PORT gives 127.0.0.1:6172, which is not in PADDLE_PSERVERS_IP_PORT_LIST") !=
        std::string::npos);
  trainer["PADDLE_PSERVERS_IP_PORT_LIST"] = "127.0.0.1:6170,127.0.0.1";
  CHECK(error_of(trainer).find("PADDLE_PSERVERS_IP_PORT_LIST: '127.0.0.1' is not an ip:port endpoint") !=
        std::string::npos);
  trainer["PADDLE_PSERVERS_IP_PORT_LIST"] = ",";
  CHECK(error_of(trainer).find("PADDLE_PSERVERS_IP_PORT_LIST lists no parameter server") != std::string::npos);
  trainer["PADDLE_PSERVERS_IP_PORT_LIST"] = "127.0.0.1:6170";
  trainer["TRAINING_ROLE"] = "WORKER";
  CHECK(error_of(trainer).find("TRAINING_ROLE='WORKER' must be PSERVER or TRAINER") != std::string::npos);
}

TEST_CASE("style 2: PADDLE_PSERVER_IPS and PADDLE_PSERVER_PORT") {
  Topology s = topology_from_environment({{"PADDLE_TRAINING_ROLE", "PSERVER"},
                                          {"PADDLE_PSERVER_IPS", "10.0.0.1,10.0.0.2"},
                                          {"PADDLE_PSERVER_PORT", "6174"},
                                          {"PADDLE_TRAINERS", "2"},
                                          {"PADDLE_CURRENT_IP", "10.0.0.2"}});
  CHECK(s.server_endpoints == std::vector<std::string>{"10.0.0.1:6174", "10.0.0.2:6174"});
  CHECK(s.server_index == 1);
  Topology t = topology_from_environment({{"PADDLE_TRAINING_ROLE", "TRAINER"},
                                          {"PADDLE_PSERVER_IPS", "10.0.0.1,10.0.0.2"},
                                          {"PADDLE_PSERVER_PORT", "6174"},
                                          {"PADDLE_TRAINERS", "2"},
                                          {"PADDLE_TRAINER_ID", "0"}});
  CHECK(t.is_first_worker());
  CHECK(error_of({{"PADDLE_TRAINING_ROLE", "TRAINER"}, {"PADDLE_PSERVER_IPS", "10.0.0.1"}, {"PADDLE_PSERVER_PORT", "6174"},
                  {"PADDLE_TRAINER_ID", "0"}})
            .find("PADDLE_TRAINERS is not set") != std::string::npos);
}

TEST_CASE("style 3: PADDLE_PSERVER_ENDPOINTS, TRAINERS, TRAINER_ID") {
  Topology s = topology_from_environment({{"PADDLE_TRAINING_ROLE", "PSERVER"},
                                          {"PADDLE_PSERVER_ENDPOINTS", "10.0.0.1:6174,10.0.0.1:6175"},
                                          {"PADDLE_CURRENT_ENDPOINT", "10.0.0.1:6175"},
                                          {"TRAINERS", "4"}});
  CHECK(s.server_index == 1);
  CHECK(s.trainer_num == 4);
  Topology t = topology_from_environment({{"PADDLE_TRAINING_ROLE", "TRAINER"},
                                          {"PADDLE_PSERVER_ENDPOINTS", "10.0.0.1:6174"},
                                          {"TRAINERS", "4"},
                                          {"TRAINER_ID", "3"}});
  CHECK(t.trainer_id == 3);
  CHECK(error_of({{"PADDLE_TRAINING_ROLE", "TRAINER"}}).find("neither PADDLE_PSERVER_ENDPOINTS nor PADDLE_PSERVER_IPS") !=
        std::string::npos);
}

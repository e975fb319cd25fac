#include <doctest/doctest.h>

#include "common/error.h"
#include "common/job_token.h"

using namespace paddle::common;

TEST_CASE("a proof is RFC 2104's HMAC-SHA1 of the purpose and the challenge") {
  // RFC 2202, test case 1: key 0x0b x 20, data "Hi There".
  const JobToken token(std::string(20, '\x0b'));
  CHECK(token.prove("Hi", "There") == "b617318655057264e28bc0b6fb378c8ef146be00");
  // Test case 6: a key longer than a block is hashed first.
  const JobToken long_key(std::string(80, '\xaa'));
  CHECK(long_key.prove("Test Using Larger Than Block-Size Key -", "Hash Key First") ==
        "aa4ae5e15272d00e95705637ce8a3b55ed402112");
}

TEST_CASE("a proof holds for its token, purpose and challenge only") {
  const JobToken token = JobToken::generate();
  const std::string challenge = make_challenge();
  CHECK(challenge.size() == kChallengeSize);
  CHECK(challenge != make_challenge());
  const std::string proof = token.prove("paddle-store", challenge);
  CHECK(proof.size() == kProofSize);
  CHECK(token.verify("paddle-store", challenge, proof));
  CHECK_FALSE(token.verify("paddle-ps", challenge, proof));
  CHECK_FALSE(token.verify("paddle-store", make_challenge(), proof));
  CHECK_FALSE(JobToken::generate().verify("paddle-store", challenge, proof));
  CHECK_FALSE(token.verify("paddle-store", challenge, ""));
}

TEST_CASE("the token comes from PADDLE_JOB_TOKEN; PADDLE_REQUIRE_TOKEN=1 makes it necessary") {
  CHECK(JobToken::from_environment({{"PADDLE_JOB_TOKEN", "abc"}}, "x")->secret() == "abc");
  CHECK_FALSE(JobToken::from_environment({}, "x"));
  CHECK_THROWS_WITH_AS(JobToken::from_environment({{"PADDLE_REQUIRE_TOKEN", "1"}}, "rank 0"),
                       doctest::Contains("rank 0: PADDLE_REQUIRE_TOKEN=1 but PADDLE_JOB_TOKEN is not set"), ConfigError);
}

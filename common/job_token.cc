#include "common/job_token.h"

#include <boost/beast/core/detail/sha1.hpp>
#include <fmt/format.h>

#include <array>
#include <random>

#include "common/error.h"

namespace paddle::common {
namespace {

namespace sha1 = boost::beast::detail;

using Digest = std::array<unsigned char, sha1::sha1_context::digest_size>;

Digest sha1_of(std::string_view a, std::string_view b) {
  sha1::sha1_context context;
  sha1::init(context);
  // Beast's update copies even zero bytes, and an empty view's data() may be null.
  if (!a.empty()) sha1::update(context, a.data(), a.size());
  if (!b.empty()) sha1::update(context, b.data(), b.size());
  Digest digest;
  sha1::finish(context, digest.data());
  return digest;
}

// RFC 2104.
Digest hmac_sha1(std::string_view key, std::string_view message) {
  constexpr size_t kBlock = sha1::sha1_context::block_size;
  std::string block(kBlock, '\0');
  if (key.size() > kBlock) {
    const Digest hashed = sha1_of(key, {});
    std::copy(hashed.begin(), hashed.end(), block.begin());
  } else {
    std::copy(key.begin(), key.end(), block.begin());
  }
  std::string inner(kBlock, '\0'), outer(kBlock, '\0');
  for (size_t i = 0; i < kBlock; ++i) {
    inner[i] = static_cast<char>(block[i] ^ 0x36);
    outer[i] = static_cast<char>(block[i] ^ 0x5c);
  }
  const Digest inner_digest = sha1_of(inner, message);
  return sha1_of(outer, std::string_view(reinterpret_cast<const char*>(inner_digest.data()), inner_digest.size()));
}

std::string random_hex(size_t digits) {
  std::random_device random;
  std::string out;
  while (out.size() < digits) out += fmt::format("{:08x}", random());
  out.resize(digits);
  return out;
}

}  // namespace

std::optional<JobToken> JobToken::from_environment(const Environment& env, std::string_view who) {
  if (auto token = get_env(env, "PADDLE_JOB_TOKEN"); token && !token->empty()) return JobToken(*token);
  if (get_env(env, "PADDLE_REQUIRE_TOKEN").value_or("") == "1")
    throw ConfigError(fmt::format("{}: PADDLE_REQUIRE_TOKEN=1 but PADDLE_JOB_TOKEN is not set (the launcher sets it; "
                                  "by hand, give every process of the job the same one)",
                                  who));
  return std::nullopt;
}

JobToken JobToken::generate() { return JobToken(random_hex(48)); }

std::string JobToken::prove(std::string_view purpose, std::string_view challenge) const {
  const Digest mac = hmac_sha1(secret_, fmt::format("{} {}", purpose, challenge));
  std::string hex;
  for (unsigned char byte : mac) hex += fmt::format("{:02x}", byte);
  return hex;
}

bool JobToken::verify(std::string_view purpose, std::string_view challenge, std::string_view proof) const {
  const std::string expected = prove(purpose, challenge);
  if (proof.size() != expected.size()) return false;
  unsigned char difference = 0;
  for (size_t i = 0; i < expected.size(); ++i) difference |= static_cast<unsigned char>(expected[i] ^ proof[i]);
  return difference == 0;
}

std::string make_challenge() { return random_hex(kChallengeSize); }

}  // namespace paddle::common

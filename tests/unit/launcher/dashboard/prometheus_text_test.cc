#include "launcher/dashboard/prometheus_text.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

using namespace paddle::launcher;

TEST_CASE("a family is its HELP and TYPE lines, then one line per sample, labels in order") {
  PrometheusText out;
  out.family("paddle_loss", PrometheusText::Type::kGauge, "The loss.");
  out.sample({{"job", "default"}, {"rank", "0"}}, 0.25);
  out.sample({{"job", "default"}, {"rank", "1"}}, 3);
  out.family("paddle_launch_heartbeats_missed_total", PrometheusText::Type::kCounter, "Rounds missed.");
  out.sample({}, 7);
  CHECK(out.text() ==
        "# HELP paddle_loss The loss.\n"
        "# TYPE paddle_loss gauge\n"
        "paddle_loss{job=\"default\",rank=\"0\"} 0.25\n"
        "paddle_loss{job=\"default\",rank=\"1\"} 3\n"
        "# HELP paddle_launch_heartbeats_missed_total Rounds missed.\n"
        "# TYPE paddle_launch_heartbeats_missed_total counter\n"
        "paddle_launch_heartbeats_missed_total 7\n");
}

TEST_CASE("label values escape backslash, double quote and newline; HELP escapes backslash and newline") {
  CHECK(escape_label_value(R"(C:\jobs "a"
b)") == R"(C:\\jobs \"a\"\nb)");
  CHECK(escape_help("a \\ \"quoted\"\nline") == "a \\\\ \"quoted\"\\nline");
  PrometheusText out;
  out.family("paddle_step", PrometheusText::Type::kGauge, "two\nlines");
  out.sample({{"job", "x\"y"}}, 1);
  CHECK(out.text() == "# HELP paddle_step two\\nlines\n# TYPE paddle_step gauge\npaddle_step{job=\"x\\\"y\"} 1\n");
}

TEST_CASE("values: integers without a point, fractions exactly, NaN and infinities as Prometheus spells them") {
  PrometheusText out;
  out.family("m", PrometheusText::Type::kGauge, "h");
  out.sample({}, 1e6);
  out.sample({}, 0.1);
  out.sample({}, std::nan(""));
  out.sample({}, std::numeric_limits<double>::infinity());
  out.sample({}, -std::numeric_limits<double>::infinity());
  CHECK(out.text() == "# HELP m h\n# TYPE m gauge\nm 1000000\nm 0.1\nm NaN\nm +Inf\nm -Inf\n");
}

TEST_CASE("what Prometheus would refuse is a programming error, not a page") {
  PrometheusText out;
  CHECK_THROWS_AS(out.sample({}, 1), std::logic_error);  // no family yet
  CHECK_THROWS_AS(out.family("paddle-loss", PrometheusText::Type::kGauge, "h"), std::logic_error);
  out.family("paddle_loss", PrometheusText::Type::kGauge, "h");
  CHECK_THROWS_AS(out.family("paddle_loss", PrometheusText::Type::kGauge, "again"), std::logic_error);
  CHECK_THROWS_AS(out.sample({{"bad-label", "v"}}, 1), std::logic_error);
  CHECK_THROWS_AS(out.sample({{"__reserved", "v"}}, 1), std::logic_error);
}

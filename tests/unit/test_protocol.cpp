#include <catch2/catch.hpp>

#include <map>
#include <optional>
#include <string>

#include "rowpump/common/protocol/protocol.hpp"

using namespace rowpump;
using namespace rowpump::protocol;

namespace {

const std::string kToken = "0123456789ABCDEF-1-2A";
const std::string kReady = "42:" + kToken;

std::string ready_error(std::string_view message) {
    std::string error;
    CHECK_FALSE(parse_ready(message, error));
    return error;
}

std::string done_error(std::string_view message) {
    std::string error;
    CHECK_FALSE(parse_done(message, error));
    return error;
}

Done parsed_done(std::string_view message) {
    std::string error;
    auto done = parse_done(message, error);
    INFO(message << " -> " << error);
    REQUIRE(done);
    return *done;
}

using Values = std::vector<std::pair<std::string, std::string>>;

}  // namespace

TEST_CASE("keys carry the queue name as a hash tag", "[protocol]") {
    auto keys = keys_for("user_block_check");
    CHECK(keys.prefix == "rowpump:{user_block_check}:");
    CHECK(keys.ready == "rowpump:{user_block_check}:ready");
    CHECK(keys.done == "rowpump:{user_block_check}:done");
    CHECK(keys.bad == "rowpump:{user_block_check}:bad");
    CHECK(keys.workers == "rowpump:{user_block_check}:workers");
    CHECK(keys.meta == "rowpump:{user_block_check}:meta");
    CHECK(keys.stats == "rowpump:{user_block_check}:stats");
    CHECK(keys.processing("w-1") == "rowpump:{user_block_check}:processing:w-1");
    CHECK(keys.heartbeat("w-1") == "rowpump:{user_block_check}:heartbeat:w-1");
    CHECK(keys.shard_leader("eu") == "rowpump:{user_block_check}:leader:eu");
    CHECK(keys.shard_done("eu") == "rowpump:{user_block_check}:done:eu");
}

TEST_CASE("a shard's tokens start with its position and keep their shape", "[protocol]") {
    CHECK(shard_batch_prefix(0) == "00");
    CHECK(shard_batch_prefix(10) == "0A");
    CHECK(shard_batch_prefix(255) == "FF");
    for (std::size_t shard : {0u, 1u, 17u, 255u}) {
        const auto token = shard_batch_prefix(shard) + "0123456789ABC1-3-2A";
        CHECK(is_valid_token(token));
        CHECK(token_shard(token) == shard);
        CHECK(token_attempt(token) == 3);
    }
}

TEST_CASE("queue names and worker ids", "[protocol]") {
    for (const char* ok : {"q", "user_block_check", "a.b-c_1", "Q9", "-", "."}) {
        INFO(ok);
        CHECK(is_valid_name(ok));
    }
    for (const char* bad : {"", "a b", "a:b", "{q}", "a~b", "a/b", "é", "a*", "a\n"}) {
        INFO(bad);
        CHECK_FALSE(is_valid_name(bad));
    }
    CHECK(is_valid_name(std::string(64, 'x')));
    CHECK_FALSE(is_valid_name(std::string(65, 'x')));
}

TEST_CASE("value names", "[protocol]") {
    for (const char* ok : {"status", "_x", "A1", "a_b_9"}) {
        INFO(ok);
        CHECK(is_valid_value_name(ok));
    }
    for (const char* bad : {"", "1a", "a-b", "a.b", "a b", "a=b", "a$"}) {
        INFO(bad);
        CHECK_FALSE(is_valid_value_name(bad));
    }
    CHECK(is_valid_value_name(std::string(64, 'v')));
    CHECK_FALSE(is_valid_value_name(std::string(65, 'v')));
}

TEST_CASE("percent encoding escapes the message separators", "[protocol]") {
    CHECK(percent_encode("abcXYZ019-._~") == "abcXYZ019-._~");
    CHECK(percent_encode("a b") == "a%20b");
    CHECK(percent_encode("12:30") == "12%3A30");
    CHECK(percent_encode("100%") == "100%25");
    CHECK(percent_encode("k=v") == "k%3Dv");
    CHECK(percent_encode("é") == "%C3%A9");
    CHECK(percent_encode(std::string("\0\xff", 2)) == "%00%FF");
    CHECK(percent_encode("") == "");
}

TEST_CASE("percent decoding", "[protocol]") {
    CHECK(percent_decode("a%20b") == std::optional<std::string>("a b"));
    CHECK(percent_decode("%c3%a9") == std::optional<std::string>("é"));
    CHECK(percent_decode("a/b") == std::optional<std::string>("a/b"));
    CHECK(percent_decode("") == std::optional<std::string>(""));
    for (const char* bad : {"a b", "a:b", "a=b", "%", "%4", "a%4", "%G0", "%0G", "%%"}) {
        INFO(bad);
        CHECK_FALSE(percent_decode(bad));
    }
}

TEST_CASE("percent encoding round trips every byte", "[protocol]") {
    std::string all;
    for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
    auto encoded = percent_encode(all);
    CHECK(encoded.size() == 66 + 3 * 190);  // 66 unreserved bytes stay, the rest become %XX
    CHECK(encoded.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                    "0123456789-._~%") == std::string::npos);
    CHECK(percent_decode(encoded) == std::optional<std::string>(all));
    for (const char* raw : {" ", ":", "%", "=", "ünïcødé", "a b:c%d=e", "%41"}) {
        INFO(raw);
        CHECK(percent_decode(percent_encode(raw)) == std::optional<std::string>(raw));
    }
}

TEST_CASE("tokens", "[protocol]") {
    CHECK(is_valid_token(kToken));
    CHECK(is_valid_token("FFFFFFFFFFFFFFFF-123456789-00"));
    CHECK(token_attempt(kToken) == 1);
    CHECK(token_attempt("0000000000000000-12-AB") == 12);
    CHECK(token_attempt("FFFFFFFFFFFFFFFF-123456789-00") == 123456789);
    for (const char* bad : {
             "",
             "0123456789abcdef-1-2A",           // lower-case batch
             "0123456789ABCDE-1-2A",            // batch too short
             "0123456789ABCDEF1-2A",            // no dash after the batch
             "0123456789ABCDEF--2A",            // empty attempt
             "0123456789ABCDEF-0-2A",           // attempt 0
             "0123456789ABCDEF-01-2A",          // leading zero
             "0123456789ABCDEF-1234567890-2A",  // attempt longer than 9 digits
             "0123456789ABCDEF-1x-2A",          // attempt not a number
             "0123456789ABCDEF-1-",             // empty row
             "0123456789ABCDEF-1",              // no row
             "0123456789ABCDEF-1-2a",           // lower-case row
             "0123456789ABCDEF-1-2G",           // row not hex
             "0123456789ABCDEF-1-2A-3",         // extra part
             "G123456789ABCDEF-1-2A",           // batch not hex
         }) {
        INFO(bad);
        CHECK_FALSE(is_valid_token(bad));
    }
    CHECK(is_valid_token("0123456789ABCDEF-1-" + std::string(181, 'A')));  // 200 bytes
    CHECK_FALSE(is_valid_token("0123456789ABCDEF-1-" + std::string(182, 'A')));
}

TEST_CASE("ready messages", "[protocol]") {
    CHECK(format_ready("42", kToken) == kReady);
    CHECK(format_ready("a b:c", kToken) == "a%20b%3Ac:" + kToken);

    std::string error;
    auto task = parse_ready("a%20b%3Ac:0123456789ABCDEF-7-2A", error);
    REQUIRE(task);
    CHECK(task->id == "a b:c");
    CHECK(task->token == "0123456789ABCDEF-7-2A");
    CHECK(task->attempt == 7);

    for (const char* id : {"42", "é", "x:y", "%", " ", "="}) {
        auto round = parse_ready(format_ready(id, kToken), error);
        REQUIRE(round);
        CHECK(round->id == id);
        CHECK(round->token == kToken);
    }
}

TEST_CASE("ready messages carry a row's payload after the token", "[protocol][payload]") {
    const std::string binary("\x00\xff\x80 =:%", 7);
    const std::vector<std::string> names{"url", "owner_id", "note", "empty", "name", "data"};
    const std::vector<std::optional<std::string>> values{
        "https://example.com/a b?x=1", "42", std::nullopt, "", "Zoë 日本", binary};
    const auto message = format_ready("7", kToken, names, values);
    CHECK(message == "7:" + kToken +
                         " url=https%3A%2F%2Fexample.com%2Fa%20b%3Fx%3D1 owner_id=42 note empty= "
                         "name=Zo%C3%AB%20%E6%97%A5%E6%9C%AC data=%00%FF%80%20%3D%3A%25");
    std::string error;
    auto task = parse_ready(message, error);
    INFO(error);
    REQUIRE(task);
    CHECK(task->id == "7");
    CHECK(done_head(*task) == "7:" + kToken);
    REQUIRE(task->fields.size() == names.size());
    for (std::size_t i = 0; i < names.size(); ++i) CHECK(task->fields.at(names[i]) == values[i]);
    CHECK(task->fields.at("note") == std::nullopt);  // NULL is not ""
    CHECK(task->fields.at("empty") == std::optional<std::string>(""));
    CHECK(format_ready("7", kToken, {}, {}) == "7:" + kToken);
}

TEST_CASE("ready messages with fields", "[protocol]") {
    std::string error;
    const std::string message = kReady + " url=http%3A%2F%2Fx%20y owner= note timeout_ms=300";
    auto task = parse_ready(message, error);
    INFO(error);
    REQUIRE(task);
    CHECK(task->id == "42");
    CHECK(task->token == kToken);
    CHECK(task->message == message);
    using Fields = std::map<std::string, std::optional<std::string>>;
    CHECK(task->fields ==
          Fields{
              {"url", "http://x y"}, {"owner", ""}, {"note", std::nullopt}, {"timeout_ms", "300"}});
    CHECK(ready_message(*task) == message);  // what the processing list holds
    CHECK(done_head(*task) == kReady);

    // A done message names the task by id and token only: the dispatcher reads it as always.
    Done done;
    done.task = *task;
    done.verb = Verb::success;
    done.values = {{"status", "1"}};
    CHECK(format_done(done) == kReady + " ok status=1");
    CHECK(parsed_done(format_done(done)).task.token == kToken);

    // Without fields nothing changes.
    auto plain = parse_ready(kReady, error);
    REQUIRE(plain);
    CHECK(plain->fields.empty());
    CHECK(done_head(*plain) == kReady);

    CHECK(ready_error(kReady + " 1x=2") == "invalid field name '1x'");
    CHECK(ready_error(kReady + " =2") == "invalid field name ''");
    CHECK(ready_error(kReady + " a=1 a=2") == "field 'a' given twice");
    CHECK(ready_error(kReady + " a=%G0") == "invalid percent-encoding in field 'a'");
    CHECK(ready_error(kReady + " a=b=c") == "invalid percent-encoding in field 'a'");
    CHECK(ready_error(kReady + " ") == "invalid field name ''");
    CHECK(ready_error(kReady + " a=" + std::string(kMaxMessageBytes, 'x')) ==
          "message longer than 65536 bytes");
}

TEST_CASE("malformed ready messages", "[protocol]") {
    CHECK(ready_error("42") == "no ':' between id and token");
    CHECK(ready_error("") == "no ':' between id and token");
    CHECK(ready_error(":" + kToken) == "invalid id ''");
    CHECK(ready_error("a b:" + kToken) == "no ':' between id and token");  // "b:..." is a field
    CHECK(ready_error("a%2:" + kToken) == "invalid id 'a%2'");
    CHECK(ready_error("42:") == "invalid token ''");
    CHECK(ready_error("42:nope") == "invalid token 'nope'");
    CHECK(ready_error(kReady + ":") == "invalid id '" + kReady + "'");  // ':' is never raw in an id
}

TEST_CASE("done: ok with values", "[protocol]") {
    auto done = parsed_done(kReady + " ok status=2 note=a%20b empty=");
    CHECK(done.task.message == kReady);
    CHECK(done.task.id == "42");
    CHECK(done.task.token == kToken);
    CHECK(done.task.attempt == 1);
    CHECK(done.verb == Verb::success);
    CHECK(done.values == Values{{"status", "2"}, {"note", "a b"}, {"empty", ""}});
    CHECK(done.reason.empty());
    CHECK_FALSE(done.delay);

    CHECK(parsed_done(kReady + " ok").values.empty());
}

TEST_CASE("done: retry, fail and extend", "[protocol]") {
    auto retry = parsed_done(kReady + " retry reason=timed%20out delay=5s");
    CHECK(retry.verb == Verb::retry);
    CHECK(retry.reason == "timed out");
    REQUIRE(retry.delay);
    CHECK(retry.delay->count() == 5000);
    CHECK(retry.values.empty());

    auto bare_retry = parsed_done(kReady + " retry");
    CHECK(bare_retry.verb == Verb::retry);
    CHECK(bare_retry.reason.empty());
    CHECK_FALSE(bare_retry.delay);

    auto fail = parsed_done(kReady + " fail reason=bad%3Dinput");
    CHECK(fail.verb == Verb::fail);
    CHECK(fail.reason == "bad=input");

    auto extend = parsed_done(kReady + " extend lease=2m");
    CHECK(extend.verb == Verb::extend);
    CHECK(extend.lease.count() == 120000);
}

TEST_CASE("done: malformed messages", "[protocol]") {
    CHECK(done_error(kReady) == "expected '<id>:<token> <verb> ...'");
    CHECK(done_error("") == "expected '<id>:<token> <verb> ...'");
    CHECK(done_error("42 ok") == "no ':' between id and token");
    CHECK(done_error("42:bad ok") == "invalid token 'bad'");
    CHECK(done_error(kReady + " done") ==
          "unknown verb 'done' (expected ok, retry, fail or extend)");
    CHECK(done_error(kReady + " OK") == "unknown verb 'OK' (expected ok, retry, fail or extend)");
    CHECK(done_error(kReady + " ") == "unknown verb '' (expected ok, retry, fail or extend)");
    CHECK(done_error(kReady + " ok status") == "field 'status' is not name=value");
    CHECK(done_error(kReady + " ok  a=1") == "field '' is not name=value");
    CHECK(done_error(kReady + " ok a=1 ") == "field '' is not name=value");
    CHECK(done_error(kReady + " ok a=%ZZ") == "invalid percent-encoding in field 'a'");
    CHECK(done_error(kReady + " ok a=x:y") == "invalid percent-encoding in field 'a'");
    CHECK(done_error(kReady + " ok 1a=1") == "invalid value name '1a'");
    CHECK(done_error(kReady + " ok =1") == "invalid value name ''");
    CHECK(done_error(kReady + " ok a=1 a=2") == "value 'a' given twice");
    CHECK(done_error(kReady + " retry delay=soon") == "invalid duration 'soon' for 'delay'");
    CHECK(done_error(kReady + " retry status=1") == "unknown field 'status' for retry");
    CHECK(done_error(kReady + " fail delay=1s") == "unknown field 'delay' for fail");
    CHECK(done_error(kReady + " extend") == "extend needs lease=<duration>");
    CHECK(done_error(kReady + " extend lease=0s") == "lease must be positive");
    CHECK(done_error(kReady + " extend lease=x") == "invalid duration 'x' for 'lease'");
    CHECK(done_error(kReady + " extend lease=1s reason=x") == "unknown field 'reason' for extend");

    std::string big = kReady + " ok v=" + std::string(kMaxMessageBytes, 'a');
    CHECK(done_error(big) == "message longer than 65536 bytes");
}

TEST_CASE("done: format and parse round trip", "[protocol]") {
    Done ok;
    ok.task.message = format_ready("id with space", kToken);
    ok.verb = Verb::success;
    ok.values = {{"status", "2"}, {"note", "a b:c%d=e é"}};
    auto text = format_done(ok);
    CHECK(text == "id%20with%20space:" + kToken + " ok status=2 note=a%20b%3Ac%25d%3De%20%C3%A9");
    auto back = parsed_done(text);
    CHECK(back.task.id == "id with space");
    CHECK(back.verb == Verb::success);
    CHECK(back.values == ok.values);

    Done retry;
    retry.task.message = kReady;
    retry.verb = Verb::retry;
    retry.reason = "upstream said: 503 = busy";
    retry.delay = Millis(1500);
    CHECK(format_done(retry) ==
          kReady + " retry reason=upstream%20said%3A%20503%20%3D%20busy delay=1500ms");
    auto retry_back = parsed_done(format_done(retry));
    CHECK(retry_back.reason == retry.reason);
    CHECK(retry_back.delay == retry.delay);

    Done fail;
    fail.task.message = kReady;
    fail.verb = Verb::fail;
    CHECK(format_done(fail) == kReady + " fail");
    CHECK(parsed_done(format_done(fail)).verb == Verb::fail);

    Done extend;
    extend.task.message = kReady;
    extend.verb = Verb::extend;
    extend.lease = Millis(90000);
    CHECK(format_done(extend) == kReady + " extend lease=90s");
    CHECK(parsed_done(format_done(extend)).lease == Millis(90000));
}

TEST_CASE("verb names", "[protocol]") {
    CHECK(verb_name(Verb::success) == "ok");
    CHECK(verb_name(Verb::retry) == "retry");
    CHECK(verb_name(Verb::fail) == "fail");
    CHECK(verb_name(Verb::extend) == "extend");
}

TEST_CASE("the meta hash is written and read by the same schema", "[protocol]") {
    QueueMeta meta;
    meta.values = {"status", "checked_at"};
    meta.lease = Millis(60000);
    meta.table = "users";
    const auto fields = meta_fields(meta);
    CHECK(fields == std::vector<std::string>{"values", "status,checked_at", "lease", "1m", "table",
                                             "users", "protocol", "1"});
    const auto back = parse_meta(fields);
    CHECK(back.values == meta.values);
    CHECK(back.lease == meta.lease);
    CHECK(back.table == "users");
    CHECK(parse_meta({kMetaValues, ""}).values.empty());
    CHECK(parse_meta({kMetaValues, " a , b ,"}).values == std::vector<std::string>{"a", "b"});
}

TEST_CASE("a worker accepts a dispatcher of its own protocol version, or one that names none",
          "[protocol]") {
    CHECK(kProtocolVersion == 1);
    CHECK(protocol_mismatch(std::string("1")).empty());
    CHECK(protocol_mismatch(std::nullopt).empty());  // a dispatcher from before the field
    CHECK(protocol_mismatch(std::string("2"), 2).empty());
    CHECK(protocol_mismatch(std::string("999")) ==
          "the dispatcher speaks protocol version 999, this worker protocol version 1; run a "
          "worker and a dispatcher of the same protocol version (docs/upgrading.md); no task was "
          "taken");
    // A newer worker does not take tasks from a dispatcher that names no version either.
    CHECK(protocol_mismatch(std::nullopt, 2)
              .find("speaks protocol version 1, this worker "
                    "protocol version 2") != std::string::npos);
    for (const auto* text : {"", "01x", "1.0", " 1", "-1", "1234567890"}) {
        INFO(text);
        CHECK(protocol_mismatch(std::string(text)).find("unreadable protocol version") !=
              std::string::npos);
    }
    CHECK(protocol_mismatch(std::string("\x1b[2J") + std::string(500, 'x')).find("'\\x1B[2J") !=
          std::string::npos);
}

TEST_CASE("an ok carries exactly the values the queue declares", "[protocol]") {
    const std::vector<std::string> declared{"status", "checked_at"};
    CHECK(value_problem(parsed_done(kReady + " ok status=1 checked_at=2"), declared).empty());
    CHECK(value_problem(parsed_done(kReady + " ok status=1 checked_at=2 colour=red"), declared) ==
          "undeclared value 'colour' (queue declares: status, checked_at)");
    CHECK_THAT(value_problem(parsed_done(kReady + " ok status=1"), declared),
               Catch::Contains("value 'checked_at' is missing"));
    CHECK(value_problem(parsed_done(kReady + " retry"), declared).empty());
    CHECK(value_problem(parsed_done(kReady + " ok"), {}).empty());
}

TEST_CASE("clipping keeps UTF-8 whole and marks the cut", "[protocol]") {
    CHECK(clip_utf8("short", 10) == "short");
    CHECK(clip_utf8("0123456789abc", 10) == "0123456...");
    // "é" is two bytes: a cut inside it backs up to before it.
    CHECK(clip_utf8("012345\xC3\xA9xyz", 10) == "012345...");
    CHECK(clip_reason(std::string(2000, 'x')).size() == kMaxReasonBytes);
}

TEST_CASE("done messages carry the handler's milliseconds apart from the values", "[protocol]") {
    auto ok = parsed_done(kReady + " ok status=2 ms=1500");
    CHECK(ok.values == Values{{"status", "2"}});
    REQUIRE(ok.handler_ms);
    CHECK(ok.handler_ms->count() == 1500);
    CHECK(value_problem(ok, {"status"}).empty());
    CHECK(parsed_done(kReady + " retry reason=x ms=0").handler_ms == Millis(0));
    CHECK(parsed_done(kReady + " fail ms=7").handler_ms == Millis(7));
    // Old workers leave it out.
    CHECK_FALSE(parsed_done(kReady + " ok status=2").handler_ms);
    CHECK(done_error(kReady + " ok ms=-1") == "invalid handler milliseconds '-1' for 'ms'");
    CHECK(done_error(kReady + " ok ms=1.5") == "invalid handler milliseconds '1.5' for 'ms'");
    CHECK(done_error(kReady + " ok ms=") == "invalid handler milliseconds '' for 'ms'");
    CHECK(done_error(kReady + " ok ms=99999999999999") ==
          "invalid handler milliseconds '99999999999999' for 'ms'");
    CHECK(done_error(kReady + " ok ms=1 ms=2") == "field 'ms' given twice");
    CHECK(done_error(kReady + " extend lease=1s ms=5") == "unknown field 'ms' for extend");

    Done done = ok;
    CHECK(format_done(done) == kReady + " ok status=2 ms=1500");
    done.handler_ms.reset();
    CHECK(format_done(done) == kReady + " ok status=2");
}

TEST_CASE("a heartbeat's worker info is display text, bounded and escaped", "[protocol]") {
    WorkerInfo info{"web-1", "cpp", "0.1.0", 123, 10000};
    const auto text = format_worker_info(info);
    CHECK(text == "host=web-1;lang=cpp;version=0.1.0;done=123;ttl=10000");
    auto back = parse_worker_info(text);
    CHECK(back.host == "web-1");
    CHECK(back.lang == "cpp");
    CHECK(back.version == "0.1.0");
    CHECK(back.done == 123);
    CHECK(back.ttl_ms == 10000);

    // An older worker's value ("1", its id): nothing known.
    auto old = parse_worker_info("1");
    CHECK(old.host.empty());
    CHECK_FALSE(old.done);
    // Control bytes and invalid UTF-8 are escaped; separators inside values are encoded.
    auto odd = parse_worker_info("host=a%0Ab%1B%FF;lang=x%3By;done=-3;ttl=abc;junk;=;host2=z");
    CHECK(odd.host == "a\\nb\\x1B\\xFF");
    CHECK(odd.lang == "x;y");
    CHECK_FALSE(odd.done);
    CHECK_FALSE(odd.ttl_ms);
    // Long text is cut; a long value is read only so far.
    auto long_host = parse_worker_info("host=" + std::string(1000, 'h'));
    CHECK(long_host.host.size() <= kMaxWorkerInfoText + 20);
    CHECK(parse_worker_info(std::string(600, 'x') + ";lang=cpp").lang.empty());
}

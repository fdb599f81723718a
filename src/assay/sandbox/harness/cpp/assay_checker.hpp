// The test program's side in C++: a typed proxy that sends each call of the entry point
// to the candidate's process (frames on fd 5, replies on fd 6) and decodes the reply to
// the declared return type, and the verdict on fd 4. Built with assay.hpp (the codec)
// and the trusted test program; see ../proxies.py for how the source is put together.
// The code that does not depend on the entry point's types is assay_checker.cpp (a
// prebuilt object, as assay.cpp is).
#ifndef ASSAY_CHECKER_HPP
#define ASSAY_CHECKER_HPP
#include <cassert>
#include <ctime>
#include "assay.hpp"

namespace assay {
namespace checker {

constexpr int VERDICT = 4, CALLS = 5, REPLIES = 6;
extern size_t max_value_bytes;
extern long long calls;
extern double wall_ms, cpu_ms;

void send(int fd, const Json& frame);
// The candidate's next frame; DataError says why there is none (ended, too big, malformed).
Json receive(size_t limit);
const Json* field(const Json& j, const char* name);
std::string text_of(const Json& j, const char* name);
Json number(double value);
Json whole(long long value);
// The verdict ends the process: nothing the test does afterwards can change it.
[[noreturn]] void verdict(bool passed, std::vector<std::pair<std::string, Json>> fields);
[[noreturn]] void fail(const std::string& kind, const std::string& error_type, const std::string& message);
void add_time(const Json& reply);

template <class Main> int run_test(Main test_main) {
    if constexpr (std::is_invocable_v<Main>) return test_main();
    else { char name[] = "test"; char* argv[] = {name, nullptr}; return test_main(1, argv); }
}

// The handshake with the candidate's process, the go-ahead, the test (`test_main`), the verdict.
int main(int argc, char** argv, int (*test_main)());

}  // namespace checker

// The body of the entry point's proxy: one call frame out, one reply in, decoded as R.
template <class R, class... A> R proxy(const char* name, const A&... args) {
    using namespace checker;
    calls++;
    Json reply;
    try {
        std::vector<Json> encoded = {encode<std::decay_t<A>>(args)...};
        send(CALLS, object({{"args", list_of(std::move(encoded))}, {"kwargs", tag("$dict", list_of({}))}}));
        reply = receive(max_value_bytes);
    } catch (const std::exception& error) {
        fail("candidate_ended", "CandidateEnded", "calling " + std::string(name) + ": " + error.what());
    }
    add_time(reply);
    const Json* ok = field(reply, "ok");
    if (!ok || ok->kind != Json::Bool) fail("candidate_ended", "CandidateEnded", "the candidate sent malformed data");
    if (!ok->b)
        fail("candidate_error", text_of(reply, "error_type"), "calling " + std::string(name) + ": " + text_of(reply, "message"));
    if constexpr (std::is_void_v<R>) {
        return;
    } else {
        const Json* value = field(reply, "value");
        try {
            if (!value) throw DataError("the reply holds no value");
            return decode<std::decay_t<R>>(*value);
        } catch (const std::exception& error) {
            fail("candidate_error", "TypeError",
                 "the value " + std::string(name) + " returned does not decode as " + type_name<std::decay_t<R>>() + ": " + error.what());
        }
    }
}

}  // namespace assay

// The trusted test's assert(): the verdict names its line (the test's own, see #line).
extern "C" [[noreturn]] void assay_assertion_failed(const char* expression, const char* file, unsigned line);

#define ASSAY_CHECKER_MAIN(test_main)                                                           \
    extern "C" void __assert_fail(const char* expression, const char* file, unsigned line,      \
                                  const char*) noexcept {                                       \
        assay_assertion_failed(expression, file, line);                                         \
    }                                                                                           \
    int main(int argc, char** argv) {                                                           \
        return assay::checker::main(argc, argv, [] { return assay::checker::run_test(test_main); }); \
    }

#endif

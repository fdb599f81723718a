// The test program's side (see assay_checker.hpp) that does not depend on the entry
// point's types: compiled once per toolchain by the parent into an object every C++ test
// program is linked with (without it, the checker's job compiles this file itself).
#include "assay_checker.hpp"

namespace assay {
namespace checker {

size_t max_value_bytes = 64u * 1024 * 1024;
long long calls = 0;
double wall_ms = 0, cpu_ms = 0;

void send(int fd, const Json& frame) {
    if (!send_frame(fd, frame)) throw DataError("the candidate's process ended (its pipe is closed)");
}

namespace {

bool read_all(int fd, std::string& out, size_t size) {
    out.resize(size);
    size_t got = 0;
    while (got < size) {
        ssize_t n = ::read(fd, &out[got], size - got);
        if (n <= 0) return false;
        got += (size_t)n;
    }
    return true;
}

}  // namespace

// The candidate's next frame; DataError says why there is none (ended, too big, malformed).
Json receive(size_t limit) {
    std::string header, body;
    if (!read_all(REPLIES, header, 4)) throw DataError("the candidate's process ended during a call");
    size_t size = (size_t)(unsigned char)header[0] << 24 | (size_t)(unsigned char)header[1] << 16 |
                  (size_t)(unsigned char)header[2] << 8 | (size_t)(unsigned char)header[3];
    if (size > limit)
        throw DataError("the candidate's reply of " + std::to_string(size) + " bytes exceeds the " +
                        std::to_string(limit) + "-byte limit");
    if (!read_all(REPLIES, body, size)) throw DataError("the candidate's process ended inside a reply");
    Parser parser{body};
    Json frame = parser.value(0);
    parser.space();
    if (parser.at != body.size()) throw DataError("trailing data in frame");
    if (frame.kind != Json::Obj) throw DataError("the candidate sent a frame that is not an object");
    return frame;
}

const Json* field(const Json& j, const char* name) {
    if (j.kind != Json::Obj) return nullptr;
    for (const auto& entry : j.o) if (entry.first == name) return &entry.second;
    return nullptr;
}
std::string text_of(const Json& j, const char* name) {
    const Json* found = field(j, name);
    return found && found->kind == Json::Str ? found->s : std::string();
}

Json number(double value) { Json j; j.kind = Json::Float; j.f = value; return j; }
Json whole(long long value) { Json j; j.kind = Json::Int; j.i = value; return j; }

// The verdict ends the process: nothing the test does afterwards can change it.
[[noreturn]] void verdict(bool passed, std::vector<std::pair<std::string, Json>> fields) {
    std::cout.flush();
    std::fflush(stdout);
    Json time = object({{"wall_ms", number(wall_ms)}, {"cpu_ms", number(cpu_ms)}});
    std::vector<std::pair<std::string, Json>> all = {{"passed", flag(passed)}};
    if (!passed && !field(object(fields), "stage")) all.emplace_back("stage", text("test"));
    all.emplace_back("calls", whole(calls));
    all.emplace_back("time", time);
    for (auto& item : fields) all.push_back(std::move(item));
    try { send(VERDICT, object(std::move(all))); } catch (...) {}
    std::_Exit(0);
}

[[noreturn]] void fail(const std::string& kind, const std::string& error_type, const std::string& message) {
    verdict(false, {{"kind", text(kind)}, {"error_type", text(error_type)}, {"message", text(message)}});
}

void add_time(const Json& reply) {
    const Json* spent = field(reply, "time");
    if (!spent) return;
    for (auto [name, total] : {std::pair{"wall_ms", &wall_ms}, std::pair{"cpu_ms", &cpu_ms}}) {
        const Json* value = field(*spent, name);
        double amount = !value ? 0 : value->kind == Json::Float ? value->f : value->kind == Json::Int ? (double)value->i : 0;
        if (std::isfinite(amount) && amount >= 0) *total += amount;
    }
}

// The candidate's first frames: "compiled" (then the go-ahead), then "ready" or a load error.
void handshake() {
    try {
        Json first = receive(64u * 1024 * 1024);
        if (text_of(first, "event") == "compiled") {
            send(CALLS, object({{"event", text("run")}}));
            first = receive(64u * 1024 * 1024);
        }
        if (text_of(first, "event") == "ready") return;
        std::vector<std::pair<std::string, Json>> fields = {{"stage", text("load")}};
        for (const char* name : {"kind", "error_type", "message", "traceback"})
            fields.emplace_back(name, text(text_of(first, name)));
        verdict(false, std::move(fields));
    } catch (const std::exception& error) {
        verdict(false, {{"stage", text("load")}, {"kind", text("ended")},
                        {"message", text(std::string("the candidate's process ended before it was ready (") + error.what() + ")")}});
    }
}

int main(int argc, char** argv, int (*test_main)()) {
    if (argc > 1) max_value_bytes = (size_t)std::strtoull(argv[1], nullptr, 10);
    handshake();
    send(VERDICT, object({{"event", text("started")}}));  // the test's time starts now
    Json go_ahead;
    if (!read_frame(go_ahead)) std::_Exit(0);  // the parent gave up
    try {
        int code = test_main();
        if (code != 0) fail("exit", "SystemExit", "the test program's main returned " + std::to_string(code));
    } catch (const std::exception& error) {
        fail("exception", type_name_of(error), error.what());
    } catch (...) {
        fail("exception", "exception", "the test program threw a value that is not a std::exception");
    }
    verdict(true, {});
}

}  // namespace checker
}  // namespace assay

// The trusted test's assert(): the verdict names its line (the test's own, see #line).
extern "C" [[noreturn]] void assay_assertion_failed(const char* expression, const char* file, unsigned line) {
    if (std::strcmp(file, "test.cpp") == 0)
        assay::checker::verdict(false, {{"kind", assay::text("assertion")}, {"error_type", assay::text("AssertionError")},
                                        {"message", assay::text("")},
                                        {"line", assay::checker::whole(line)}, {"source", assay::text(expression)}});
    assay::checker::fail("assertion", "AssertionError", std::string(expression) + " (" + file + ":" + std::to_string(line) + ")");
}

// The harness's code that does not depend on the candidate's types (see assay.hpp):
// compiled once per toolchain by the parent (sandbox/_toolchains.py) into the object every
// C++ candidate and test program is linked with, so no job compiles it again, and none of
// the candidate's macros reach it. Without that object, a job compiles this file itself.
#include "assay.hpp"

namespace assay {

Json::Json() = default;
Json::Json(const Json& other) = default;
Json::Json(Json&& other) noexcept = default;
Json& Json::operator=(const Json& other) = default;
Json& Json::operator=(Json&& other) noexcept = default;
Json::~Json() = default;

// -- JSON text ------------------------------------------------------------------------
// (strchr finds the terminator too: a NUL byte is neither space nor digit)
void Parser::space() { while (at < t.size() && t[at] && std::strchr(" \t\r\n", t[at])) at++; }
char Parser::peek() const { if (at >= t.size()) throw DataError("truncated JSON"); return t[at]; }
char Parser::take() { char c = peek(); at++; return c; }
void Parser::literal(const char* word, Json::Kind kind, bool truth, Json& j) {
    if (t.compare(at, std::strlen(word), word) != 0) throw DataError("malformed JSON");
    at += std::strlen(word); j.kind = kind; j.b = truth;
}

Json Parser::value(int depth) {
    if (depth > 200) throw DataError("frame nested too deeply");
    space();
    Json j;
    char c = peek();
    if (c == '{') {
        j.kind = Json::Obj; at++; space();
        if (peek() == '}') { at++; return j; }
        for (;;) {
            space(); if (peek() != '"') throw DataError("malformed JSON object");
            std::string key = string(); space();
            if (take() != ':') throw DataError("malformed JSON object");
            j.o.emplace_back(key, value(depth + 1)); space();
            char next = take();
            if (next == '}') return j;
            if (next != ',') throw DataError("malformed JSON object");
        }
    }
    if (c == '[') {
        j.kind = Json::Arr; at++; space();
        if (peek() == ']') { at++; return j; }
        for (;;) {
            j.a.push_back(value(depth + 1)); space();
            char next = take();
            if (next == ']') return j;
            if (next != ',') throw DataError("malformed JSON array");
        }
    }
    if (c == '"') { j.kind = Json::Str; j.s = string(); return j; }
    if (c == 't') { literal("true", Json::Bool, true, j); return j; }
    if (c == 'f') { literal("false", Json::Bool, false, j); return j; }
    if (c == 'n') { literal("null", Json::Null, false, j); return j; }
    size_t start = at;
    while (at < t.size() && t[at] && std::strchr("+-0123456789.eE", t[at])) at++;
    std::string digits = t.substr(start, at - start);
    if (digits.empty()) throw DataError("malformed JSON value");
    try {
        if (digits.find_first_of(".eE") != std::string::npos) { j.kind = Json::Float; j.f = std::stod(digits); }
        else { j.kind = Json::Int; j.i = std::stoll(digits); }
    } catch (const std::logic_error&) { throw DataError("malformed JSON number " + digits.substr(0, 40)); }
    return j;
}
unsigned Parser::hex4() {
    if (at + 4 > t.size()) throw DataError("truncated JSON escape");
    std::string digits = t.substr(at, 4);
    if (digits.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) throw DataError("malformed JSON escape");
    at += 4;
    return (unsigned)std::stoul(digits, nullptr, 16);
}
std::string Parser::string() {
    std::string out; at++;
    for (;;) {
        char c = take();
        if (c == '"') return out;
        if (c != '\\') { out += c; continue; }
        char e = take();
        if (e == 'n') out += '\n'; else if (e == 't') out += '\t'; else if (e == 'r') out += '\r';
        else if (e == 'b') out += '\b'; else if (e == 'f') out += '\f';
        else if (e == 'u') {
            unsigned code = hex4();
            if (code >= 0xD800 && code < 0xDC00 && t.compare(at, 2, "\\u") == 0) {
                at += 2;
                unsigned low = hex4();
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
            }
            utf8(code, out);
        } else out += e;
    }
}
void Parser::utf8(unsigned code, std::string& out) {
    if (code < 0x80) out += char(code);
    else if (code < 0x800) { out += char(0xC0 | (code >> 6)); out += char(0x80 | (code & 0x3F)); }
    else if (code < 0x10000) { out += char(0xE0 | (code >> 12)); out += char(0x80 | ((code >> 6) & 0x3F)); out += char(0x80 | (code & 0x3F)); }
    else { out += char(0xF0 | (code >> 18)); out += char(0x80 | ((code >> 12) & 0x3F)); out += char(0x80 | ((code >> 6) & 0x3F)); out += char(0x80 | (code & 0x3F)); }
}

void write(const Json& j, std::string& out) {
    switch (j.kind) {
        case Json::Null: out += "null"; break;
        case Json::Bool: out += j.b ? "true" : "false"; break;
        case Json::Int: out += std::to_string(j.i); break;
        case Json::Float: {
            char buffer[32];
            std::snprintf(buffer, sizeof buffer, "%.17g", j.f);
            out += buffer;
            if (!std::strpbrk(buffer, ".eE")) out += ".0";  // 3.0 stays a float
            break;
        }
        case Json::Str:
            out += '"';
            for (unsigned char c : j.s) {
                if (c == '"' || c == '\\') { out += '\\'; out += char(c); }
                else if (c < 0x20) { char buffer[8]; std::snprintf(buffer, sizeof buffer, "\\u%04x", c); out += buffer; }
                else out += char(c);
            }
            out += '"';
            break;
        case Json::Arr:
            out += '[';
            for (size_t k = 0; k < j.a.size(); k++) { if (k) out += ','; write(j.a[k], out); }
            out += ']';
            break;
        case Json::Obj:
            out += '{';
            for (size_t k = 0; k < j.o.size(); k++) {
                if (k) out += ',';
                Json key; key.kind = Json::Str; key.s = j.o[k].first;
                write(key, out); out += ':'; write(j.o[k].second, out);
            }
            out += '}';
            break;
    }
}

// -- encoded values -----------------------------------------------------------------
Json tag(const std::string& name, Json body) {
    Json j; j.kind = Json::Obj; j.o.emplace_back(name, std::move(body)); return j;
}
const Json* tagged(const Json& j, const char* name) {
    return (j.kind == Json::Obj && j.o.size() == 1 && j.o[0].first == name) ? &j.o[0].second : nullptr;
}
std::string describe(const Json& j) {
    static const char* names[] = {"None", "a bool", "an int", "a float", "a string", "a list", "a tagged value"};
    if (j.kind == Json::Obj && j.o.size() == 1) return "a " + j.o[0].first.substr(1);
    return names[j.kind];
}

const std::vector<Json>& items(const Json& j) {
    if (j.kind == Json::Arr) return j.a;
    for (const char* name : {"$tuple", "$set", "$frozenset"})
        if (const Json* body = tagged(j, name)) return body->a;
    throw DataError("cannot pass " + describe(j) + " as a C++ sequence");
}

Json encode_integer(long double value, bool negative, unsigned long long magnitude) {
    if (magnitude < (1ULL << 53)) { Json j; j.kind = Json::Int; j.i = negative ? -(long long)magnitude : (long long)magnitude; return j; }
    std::ostringstream hex; hex << (negative ? "-" : "") << std::hex << magnitude;
    Json body; body.kind = Json::Str; body.s = hex.str();
    (void)value;
    return tag("$int", body);
}

Json list_of(std::vector<Json> items) { Json j; j.kind = Json::Arr; j.a = std::move(items); return j; }

namespace {

bool read_exactly(std::string& out, size_t size) {
    out.resize(size);
    size_t got = 0;
    while (got < size) {
        ssize_t n = ::read(3, &out[got], size - got);
        if (n <= 0) return false;
        got += (size_t)n;
    }
    return true;
}

}  // namespace

bool read_frame(Json& frame) {
    std::string header;
    if (!read_exactly(header, 4)) return false;
    uint32_t size = (uint32_t)(unsigned char)header[0] << 24 | (uint32_t)(unsigned char)header[1] << 16 |
                    (uint32_t)(unsigned char)header[2] << 8 | (uint32_t)(unsigned char)header[3];
    if (size > 64u * 1024 * 1024) return false;
    std::string body;
    if (!read_exactly(body, size)) return false;
    Parser parser{body};
    frame = parser.value(0);
    return true;
}

// One frame (4-byte big-endian length, then the JSON) on ``fd``; false if the pipe closed.
bool send_frame(int fd, const Json& frame) {
    std::string body;
    write(frame, body);
    uint32_t size = (uint32_t)body.size();
    std::string data = {char(size >> 24), char(size >> 16), char(size >> 8), char(size)};
    data += body;
    size_t sent = 0;
    while (sent < data.size()) {
        ssize_t n = ::write(fd, data.data() + sent, data.size() - sent);
        if (n <= 0) return false;
        sent += (size_t)n;
    }
    return true;
}

void write_frame(const Json& frame) {
    if (!send_frame(4, frame)) std::_Exit(70);
}

Json object(std::vector<std::pair<std::string, Json>> fields) { Json j; j.kind = Json::Obj; j.o = std::move(fields); return j; }
Json text(const std::string& s) { return Codec<std::string>::encode(s); }
Json flag(bool b) { return Codec<bool>::encode(b); }

std::string type_name_of(const std::exception& error) {
    int status = 0;
    char* name = abi::__cxa_demangle(typeid(error).name(), nullptr, nullptr, &status);
    std::string out = status == 0 ? name : typeid(error).name();
    std::free(name);
    return out;
}

Json failure(const std::string& type, const std::string& message) {
    return object({{"ok", flag(false)}, {"error_type", text(type)}, {"message", text(message)}, {"traceback", text("")}});
}

namespace {

// The reply's `time` field, the same in every language: the call alone (not decoding its
// arguments nor encoding its value), wall and this thread's CPU milliseconds.
struct Clock {
    timespec wall{}, cpu{};
    Clock() { ::clock_gettime(CLOCK_MONOTONIC, &wall); ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu); }
    static double since(clockid_t id, const timespec& start) {
        timespec now{};
        ::clock_gettime(id, &now);
        return double(now.tv_sec - start.tv_sec) * 1e3 + double(now.tv_nsec - start.tv_nsec) / 1e6;
    }
    Json elapsed() const {
        Json wall_ms, cpu_ms;
        wall_ms.kind = cpu_ms.kind = Json::Float;
        wall_ms.f = since(CLOCK_MONOTONIC, wall);
        cpu_ms.f = since(CLOCK_THREAD_CPUTIME_ID, cpu);
        Json out;
        out.kind = Json::Obj;
        out.o = {{"wall_ms", wall_ms}, {"cpu_ms", cpu_ms}};
        return out;
    }
};

}  // namespace

// Times the call alone into `spent` (also when it throws), then encodes its value.
Json timed(Call& call, Json& spent) {
    Clock clock;
    try {
        call.run();
    } catch (...) {
        spent = clock.elapsed();
        throw;
    }
    spent = clock.elapsed();
    return call.value();
}

int serve_calls(size_t arity, Function function, Answer answer) {
    write_frame(object({{"event", text("ready")}}));
    Json call;
    while (read_frame(call)) {
        Json reply, spent;
        const Json* args = nullptr;
        for (auto& field : call.o) if (field.first == "args") args = &field.second;
        if (!args || args->kind != Json::Arr) reply = failure("ProtocolError", "malformed call");
        else if (args->a.size() != arity)
            reply = failure("TypeError", "the function takes " + std::to_string(arity) + " arguments, got " + std::to_string(args->a.size()));
        else {
            try {
                reply = object({{"ok", flag(true)}, {"value", answer(function, args->a, spent)}});
            } catch (const DataError& error) {
                reply = failure("TypeError", error.what());
            } catch (const std::exception& error) {
                reply = failure(type_name_of(error), error.what());
            } catch (...) {
                reply = failure("exception", "a value that is not a std::exception was thrown");
            }
        }
        if (spent.kind != Json::Null) reply.o.emplace_back("time", spent);
        std::cout.flush();
        std::fflush(stdout);
        write_frame(reply);
    }
    return 0;
}

}  // namespace assay

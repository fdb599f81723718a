// C++ values <-> the tagged JSON codec (see ../codec.py and docs/code.md), and the
// candidate's call loop. Included before the candidate's code (g++ -include); decoding
// is driven by the function's parameter types through templates.
#ifndef ASSAY_HARNESS_HPP
#define ASSAY_HARNESS_HPP
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <unistd.h>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>
#include <cxxabi.h>
#include <time.h>

namespace assay {

struct Json {
    enum Kind { Null, Bool, Int, Float, Str, Arr, Obj } kind = Null;
    bool b = false;
    long long i = 0;
    double f = 0;
    std::string s;
    std::vector<Json> a;
    std::vector<std::pair<std::string, Json>> o;
};

struct DataError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// -- JSON text ------------------------------------------------------------------------
struct Parser {
    // bounds-checked throughout: a compiled checker parses the candidate's replies
    const std::string& t;
    size_t at = 0;
    // (strchr finds the terminator too: a NUL byte is neither space nor digit)
    void space() { while (at < t.size() && t[at] && std::strchr(" \t\r\n", t[at])) at++; }
    char peek() const { if (at >= t.size()) throw DataError("truncated JSON"); return t[at]; }
    char take() { char c = peek(); at++; return c; }
    void literal(const char* word, Json::Kind kind, bool truth, Json& j) {
        if (t.compare(at, std::strlen(word), word) != 0) throw DataError("malformed JSON");
        at += std::strlen(word); j.kind = kind; j.b = truth;
    }
    Json value(int depth) {
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
    unsigned hex4() {
        if (at + 4 > t.size()) throw DataError("truncated JSON escape");
        std::string digits = t.substr(at, 4);
        if (digits.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) throw DataError("malformed JSON escape");
        at += 4;
        return (unsigned)std::stoul(digits, nullptr, 16);
    }
    std::string string() {
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
    static void utf8(unsigned code, std::string& out) {
        if (code < 0x80) out += char(code);
        else if (code < 0x800) { out += char(0xC0 | (code >> 6)); out += char(0x80 | (code & 0x3F)); }
        else if (code < 0x10000) { out += char(0xE0 | (code >> 12)); out += char(0x80 | ((code >> 6) & 0x3F)); out += char(0x80 | (code & 0x3F)); }
        else { out += char(0xF0 | (code >> 18)); out += char(0x80 | ((code >> 12) & 0x3F)); out += char(0x80 | ((code >> 6) & 0x3F)); out += char(0x80 | (code & 0x3F)); }
    }
};

inline void write(const Json& j, std::string& out) {
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
inline Json tag(const std::string& name, Json body) {
    Json j; j.kind = Json::Obj; j.o.emplace_back(name, std::move(body)); return j;
}
inline const Json* tagged(const Json& j, const char* name) {
    return (j.kind == Json::Obj && j.o.size() == 1 && j.o[0].first == name) ? &j.o[0].second : nullptr;
}
inline std::string describe(const Json& j) {
    static const char* names[] = {"None", "a bool", "an int", "a float", "a string", "a list", "a tagged value"};
    if (j.kind == Json::Obj && j.o.size() == 1) return "a " + j.o[0].first.substr(1);
    return names[j.kind];
}
template <class T> std::string type_name() {
    int status = 0;
    char* name = abi::__cxa_demangle(typeid(T).name(), nullptr, nullptr, &status);
    std::string out = status == 0 ? name : typeid(T).name();
    std::free(name);
    return out;
}
template <class T> [[noreturn]] void mismatch(const Json& j) {
    throw DataError("cannot pass " + describe(j) + " as a C++ " + type_name<T>());
}
inline const std::vector<Json>& items(const Json& j) {
    if (j.kind == Json::Arr) return j.a;
    for (const char* name : {"$tuple", "$set", "$frozenset"})
        if (const Json* body = tagged(j, name)) return body->a;
    throw DataError("cannot pass " + describe(j) + " as a C++ sequence");
}

template <class T, class = void> struct Codec;

template <class T> T decode(const Json& j) { return Codec<T>::decode(j); }
template <class T> Json encode(const T& value) { return Codec<T>::encode(value); }

template <> struct Codec<bool> {
    static bool decode(const Json& j) { if (j.kind != Json::Bool) mismatch<bool>(j); return j.b; }
    static Json encode(bool v) { Json j; j.kind = Json::Bool; j.b = v; return j; }
};

inline Json encode_integer(long double value, bool negative, unsigned long long magnitude) {
    if (magnitude < (1ULL << 53)) { Json j; j.kind = Json::Int; j.i = negative ? -(long long)magnitude : (long long)magnitude; return j; }
    std::ostringstream hex; hex << (negative ? "-" : "") << std::hex << magnitude;
    Json body; body.kind = Json::Str; body.s = hex.str();
    (void)value;
    return tag("$int", body);
}

template <class T> struct Codec<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, char>>> {
    static T decode(const Json& j) {
        bool negative = false;
        unsigned long long magnitude = 0;
        if (j.kind == Json::Int) { negative = j.i < 0; magnitude = negative ? 0ULL - (unsigned long long)j.i : (unsigned long long)j.i; }
        else if (const Json* body = tagged(j, "$int")) {
            std::string text = body->s;
            negative = !text.empty() && text[0] == '-';
            if (negative) text = text.substr(1);
            if (text.size() > 16) throw DataError(text + " (hex) does not fit in a C++ " + type_name<T>());
            magnitude = std::stoull(text, nullptr, 16);
        } else mismatch<T>(j);
        bool fits = negative ? (std::is_signed_v<T> && magnitude <= (unsigned long long)std::numeric_limits<T>::max() + 1ULL)
                             : magnitude <= (unsigned long long)std::numeric_limits<T>::max();
        if (!fits) throw DataError("the integer does not fit in a C++ " + type_name<T>());
        return negative ? (T)(0LL - (long long)(magnitude - 1) - 1) : (T)magnitude;
    }
    static Json encode(T v) {
        bool negative = v < 0;
        unsigned long long magnitude = negative ? 0ULL - (unsigned long long)(long long)v : (unsigned long long)v;
        return encode_integer(0, negative, magnitude);
    }
};

template <class T> struct Codec<T, std::enable_if_t<std::is_floating_point_v<T>>> {
    // A float crosses as the double nearest its shortest decimal: 0.1f as 0.1, the value
    // its program meant, not its widening 0.100000001490116..., tagged $float32 so the
    // parent compares it at float32 precision.
    static double widened(T v) {
        if constexpr (std::is_same_v<T, float>) {
            if (!std::isfinite(v)) return (double)v;
            char buffer[32];
            for (int digits = 1; digits <= 9; ++digits) {
                std::snprintf(buffer, sizeof buffer, "%.*g", digits, (double)v);
                if (std::strtof(buffer, nullptr) == v) return std::strtod(buffer, nullptr);
            }
        }
        return (double)v;
    }
    static T decode(const Json& j) {
        if (j.kind == Json::Float) return (T)j.f;
        if (j.kind == Json::Int) return (T)j.i;
        if (const Json* body = tagged(j, "$float32")) {
            if (body->kind == Json::Float) return (T)body->f;
            if (body->kind == Json::Int) return (T)body->i;
            mismatch<T>(j);
        }
        if (const Json* body = tagged(j, "$float")) {
            if (body->s == "nan") return (T)NAN;
            return body->s == "inf" ? (T)INFINITY : (T)-INFINITY;
        }
        mismatch<T>(j);
    }
    static Json encode(T v) {
        double d = widened(v);
        Json body; body.kind = Json::Str;
        if (std::isnan(d)) { body.s = "nan"; return tag("$float", body); }
        if (std::isinf(d)) { body.s = d > 0 ? "inf" : "-inf"; return tag("$float", body); }
        Json j; j.kind = Json::Float; j.f = d;
        if constexpr (std::is_same_v<T, float>) return tag("$float32", j);
        return j;
    }
};

template <> struct Codec<char> {
    static char decode(const Json& j) {
        if (j.kind != Json::Str || j.s.size() != 1) throw DataError("a C++ char needs a one-character string");
        return j.s[0];
    }
    static Json encode(char c) { Json j; j.kind = Json::Str; j.s = std::string(1, c); return j; }
};

template <> struct Codec<std::string> {
    static std::string decode(const Json& j) { if (j.kind != Json::Str) mismatch<std::string>(j); return j.s; }
    static Json encode(const std::string& v) { Json j; j.kind = Json::Str; j.s = v; return j; }
};

template <> struct Codec<const char*> {
    static Json encode(const char* v) { return Codec<std::string>::encode(v ? v : ""); }
};

inline Json list_of(std::vector<Json> items) { Json j; j.kind = Json::Arr; j.a = std::move(items); return j; }

template <class T, class A> struct Codec<std::vector<T, A>> {
    static std::vector<T, A> decode(const Json& j) {
        std::vector<T, A> out;
        for (const Json& item : items(j)) out.push_back(assay::decode<T>(item));
        return out;
    }
    static Json encode(const std::vector<T, A>& v) {
        std::vector<Json> out;
        for (const auto& item : v) out.push_back(assay::encode<T>(item));  // vector<bool> too
        return list_of(std::move(out));
    }
};

template <class Set, class T> struct SetCodec {
    static Set decode(const Json& j) {
        Set out;
        for (const Json& item : items(j)) out.insert(assay::decode<T>(item));
        return out;
    }
    static Json encode(const Set& v) {
        std::vector<Json> out;
        for (const auto& item : v) out.push_back(assay::encode<T>(item));
        return tag("$set", list_of(std::move(out)));
    }
};
template <class T, class C, class A> struct Codec<std::set<T, C, A>> : SetCodec<std::set<T, C, A>, T> {};
template <class T, class H, class E, class A> struct Codec<std::unordered_set<T, H, E, A>> : SetCodec<std::unordered_set<T, H, E, A>, T> {};

template <class Map, class K, class V> struct MapCodec {
    static Map decode(const Json& j) {
        const Json* body = tagged(j, "$dict");
        if (!body) mismatch<Map>(j);
        Map out;
        for (const Json& pair : body->a) {
            if (pair.kind != Json::Arr || pair.a.size() != 2) throw DataError("malformed dict entry");
            out.emplace(assay::decode<K>(pair.a[0]), assay::decode<V>(pair.a[1]));
        }
        return out;
    }
    static Json encode(const Map& v) {
        std::vector<Json> out;
        for (const auto& [key, value] : v) out.push_back(list_of({assay::encode<K>(key), assay::encode<V>(value)}));
        return tag("$dict", list_of(std::move(out)));
    }
};
template <class K, class V, class C, class A> struct Codec<std::map<K, V, C, A>> : MapCodec<std::map<K, V, C, A>, K, V> {};
template <class K, class V, class H, class E, class A> struct Codec<std::unordered_map<K, V, H, E, A>> : MapCodec<std::unordered_map<K, V, H, E, A>, K, V> {};

template <class T> struct Codec<std::optional<T>> {
    static std::optional<T> decode(const Json& j) {
        if (j.kind == Json::Null) return std::nullopt;
        return assay::decode<T>(j);
    }
    static Json encode(const std::optional<T>& v) { return v ? assay::encode<T>(*v) : Json(); }
};

template <class... T> struct Codec<std::tuple<T...>> {
    static std::tuple<T...> decode(const Json& j) {
        const auto& list = items(j);
        if (list.size() != sizeof...(T)) throw DataError("a C++ tuple of " + std::to_string(sizeof...(T)) + " needs as many items");
        return unpack(list, std::index_sequence_for<T...>{});
    }
    template <size_t... I> static std::tuple<T...> unpack(const std::vector<Json>& list, std::index_sequence<I...>) {
        return std::tuple<T...>(assay::decode<T>(list[I])...);
    }
    static Json encode(const std::tuple<T...>& v) {
        std::vector<Json> out;
        std::apply([&](const auto&... item) { (out.push_back(assay::encode<std::decay_t<decltype(item)>>(item)), ...); }, v);
        return tag("$tuple", list_of(std::move(out)));
    }
};

template <class A, class B> struct Codec<std::pair<A, B>> {
    static std::pair<A, B> decode(const Json& j) {
        auto both = Codec<std::tuple<A, B>>::decode(j);
        return {std::get<0>(both), std::get<1>(both)};
    }
    static Json encode(const std::pair<A, B>& v) { return Codec<std::tuple<A, B>>::encode(std::tuple<A, B>(v.first, v.second)); }
};

// -- frames and the call loop ---------------------------------------------------------
inline bool read_exactly(std::string& out, size_t size) {
    out.resize(size);
    size_t got = 0;
    while (got < size) {
        ssize_t n = ::read(3, &out[got], size - got);
        if (n <= 0) return false;
        got += (size_t)n;
    }
    return true;
}

inline bool read_frame(Json& frame) {
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
inline bool send_frame(int fd, const Json& frame) {
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

inline void write_frame(const Json& frame) {
    if (!send_frame(4, frame)) std::_Exit(70);
}

inline Json object(std::vector<std::pair<std::string, Json>> fields) { Json j; j.kind = Json::Obj; j.o = std::move(fields); return j; }
inline Json text(const std::string& s) { return Codec<std::string>::encode(s); }
inline Json flag(bool b) { return Codec<bool>::encode(b); }

inline std::string type_name_of(const std::exception& error) {
    int status = 0;
    char* name = abi::__cxa_demangle(typeid(error).name(), nullptr, nullptr, &status);
    std::string out = status == 0 ? name : typeid(error).name();
    std::free(name);
    return out;
}

inline Json failure(const std::string& type, const std::string& message) {
    return object({{"ok", flag(false)}, {"error_type", text(type)}, {"message", text(message)}, {"traceback", text("")}});
}

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

// Decodes the arguments, times the call alone into `spent` (also when it throws), encodes.
template <class R, class... A, size_t... I>
Json invoke(R (*function)(A...), const std::vector<Json>& args, std::index_sequence<I...>, Json& spent) {
    std::tuple<std::decay_t<A>...> values(decode<std::decay_t<A>>(args[I])...);
    Clock clock;
    struct Stop {
        const Clock& clock;
        Json& spent;
        ~Stop() { if (spent.kind == Json::Null) spent = clock.elapsed(); }
    } stop{clock, spent};
    if constexpr (std::is_void_v<R>) {
        function(std::get<I>(values)...);
        spent = clock.elapsed();
        return Json();
    } else {
        auto result = function(std::get<I>(values)...);
        spent = clock.elapsed();
        return encode<std::decay_t<R>>(result);
    }
}

template <class R, class... A> int serve(R (*function)(A...)) {
    write_frame(object({{"event", text("ready")}}));
    Json call;
    while (read_frame(call)) {
        Json reply, spent;
        const Json* args = nullptr;
        for (auto& field : call.o) if (field.first == "args") args = &field.second;
        if (!args || args->kind != Json::Arr) reply = failure("ProtocolError", "malformed call");
        else if (args->a.size() != sizeof...(A))
            reply = failure("TypeError", "the function takes " + std::to_string(sizeof...(A)) + " arguments, got " + std::to_string(args->a.size()));
        else {
            try {
                Json value = invoke(function, args->a, std::index_sequence_for<A...>{}, spent);
                reply = object({{"ok", flag(true)}, {"value", value}});
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

#endif

// C++ values <-> the tagged JSON codec (see ../codec.py and docs/code.md), and the
// candidate's call loop. Included before the candidate's code (g++ -include): the codec's
// templates, driven by the function's parameter types, and the declarations of the rest,
// whose definitions (assay.cpp: JSON text, frames, the loop and its clock) are compiled
// once by the parent into an object every candidate is linked with.
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

    // defined in assay.cpp: no unit that uses a Json compiles its copies and destruction
    Json();
    Json(const Json& other);
    Json(Json&& other) noexcept;
    Json& operator=(const Json& other);
    Json& operator=(Json&& other) noexcept;
    ~Json();
};

struct DataError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// -- JSON text ------------------------------------------------------------------------
struct Parser {
    // bounds-checked throughout: a compiled checker parses the candidate's replies
    const std::string& t;
    size_t at = 0;
    void space();
    char peek() const;
    char take();
    void literal(const char* word, Json::Kind kind, bool truth, Json& j);
    Json value(int depth);
    unsigned hex4();
    std::string string();
    static void utf8(unsigned code, std::string& out);
};

void write(const Json& j, std::string& out);

// -- encoded values -----------------------------------------------------------------
Json tag(const std::string& name, Json body);
const Json* tagged(const Json& j, const char* name);
std::string describe(const Json& j);
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
const std::vector<Json>& items(const Json& j);

template <class T, class = void> struct Codec;

template <class T> T decode(const Json& j) { return Codec<T>::decode(j); }
template <class T> Json encode(const T& value) { return Codec<T>::encode(value); }

template <> struct Codec<bool> {
    static bool decode(const Json& j) { if (j.kind != Json::Bool) mismatch<bool>(j); return j.b; }
    static Json encode(bool v) { Json j; j.kind = Json::Bool; j.b = v; return j; }
};

Json encode_integer(long double value, bool negative, unsigned long long magnitude);

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

Json list_of(std::vector<Json> items);

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
bool read_frame(Json& frame);
// One frame (4-byte big-endian length, then the JSON) on ``fd``; false if the pipe closed.
bool send_frame(int fd, const Json& frame);
void write_frame(const Json& frame);

Json object(std::vector<std::pair<std::string, Json>> fields);
Json text(const std::string& s);
Json flag(bool b);
std::string type_name_of(const std::exception& error);
Json failure(const std::string& type, const std::string& message);

// One call of the entry point, its arguments decoded (a Bound, below): timed() runs it
// alone on the harness's clock, then encodes its value.
struct Call {
    virtual void run() = 0;
    virtual Json value() = 0;

  protected:
    ~Call() = default;
};
Json timed(Call& call, Json& spent);

// The call loop; `answer` decodes one call's arguments and returns timed()'s value.
using Function = void (*)();
using Answer = Json (*)(Function function, const std::vector<Json>& args, Json& spent);
int serve_calls(size_t arity, Function function, Answer answer);

template <class R, class... A> class Bound final : public Call {
  public:
    using Values = std::tuple<std::decay_t<A>...>;
    using Result = std::conditional_t<std::is_void_v<R>, bool, std::decay_t<R>>;

    static Json answer(Function function, const std::vector<Json>& args, Json& spent) {
        Bound bound(reinterpret_cast<R (*)(A...)>(function), decoded(args, std::index_sequence_for<A...>{}));
        return timed(bound, spent);
    }
    Bound(R (*function)(A...), Values values) : function_(function), values_(std::move(values)) {}
    void run() override { run(std::index_sequence_for<A...>{}); }
    Json value() override {
        if constexpr (std::is_void_v<R>) return Json();
        else return encode<Result>(*result_);
    }

  private:
    template <size_t... I> static Values decoded(const std::vector<Json>& args, std::index_sequence<I...>) {
        return Values(decode<std::decay_t<A>>(args[I])...);
    }
    template <size_t... I> void run(std::index_sequence<I...>) {
        if constexpr (std::is_void_v<R>) function_(std::get<I>(values_)...);
        else result_.emplace(function_(std::get<I>(values_)...));
    }
    R (*function_)(A...);
    Values values_;
    std::optional<Result> result_;
};

template <class R, class... A> int serve(R (*function)(A...)) {
    return serve_calls(sizeof...(A), reinterpret_cast<Function>(function), &Bound<R, A...>::answer);
}

}  // namespace assay

#endif

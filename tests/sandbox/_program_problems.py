"""HumanEval-X style problems in C++ and Java (prompt, a right and a wrong completion, the
test program in HumanEval-X's own format), one per kind of signature."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    name: str
    entry: str
    prompt: str
    right: str
    wrong: str
    test: str


CPP_HEAD = "#include<stdio.h>\n#include<vector>\n#include<string>\n#include<map>\n#include<math.h>\nusing namespace std;\n"
CPP = [
    Problem(
        "vector_of_float",
        "has_close_elements",
        "/*\nCheck if two numbers are closer than threshold.\n>>> has_close_elements({1.0, 2.0, 3.0}, 0.5)\nfalse\n*/\n"
        + CPP_HEAD
        + "bool has_close_elements(vector<float> numbers, float threshold){\n",
        "    for (size_t i=0;i<numbers.size();i++)\n    for (size_t j=i+1;j<numbers.size();j++)\n"
        "    if (fabs(numbers[i]-numbers[j])<threshold) return true;\n    return false;\n}\n",
        "    return true;\n}\n",
        "#undef NDEBUG\n#include<assert.h>\nint main(){\n"
        "    assert (has_close_elements({1.0, 2.0, 3.9, 4.0, 5.0, 2.2}, 0.3)==true);\n"
        "    assert (has_close_elements({1.0, 2.0, 3.9, 4.0, 5.0, 2.2}, 0.05) == false);\n}\n",
    ),
    Problem(
        "strings",
        "filter_by_prefix",
        CPP_HEAD + "vector<string> filter_by_prefix(vector<string> strings, string prefix){\n",
        "    vector<string> out;\n    for (auto& s : strings) if (s.rfind(prefix, 0) == 0) out.push_back(s);\n"
        "    return out;\n}\n",
        "    return strings;\n}\n",
        "#undef NDEBUG\n#include<assert.h>\nbool issame(vector<string> a,vector<string>b){\n"
        "    if (a.size()!=b.size()) return false;\n"
        "    for (int i=0;i<a.size();i++) if (a[i]!=b[i]) return false;\n    return true;\n}\n"
        'int main(){\n    assert (issame(filter_by_prefix({}, "john"),{}));\n'
        '    assert (issame(filter_by_prefix({"xxx", "asd", "xxy", "john doe", "xxxAAA", "xxx"}, "xxx") , '
        '{"xxx", "xxxAAA", "xxx"}));\n}\n',
    ),
    Problem(
        "map",
        "histogram",
        CPP_HEAD + "map<char,int> histogram(string test){\n",
        "    map<char,int> counts, out;\n    int most = 0;\n"
        "    for (char c : test) if (c != ' ') most = max(most, ++counts[c]);\n"
        "    for (auto& [c, n] : counts) if (n == most) out[c] = n;\n    return out;\n}\n",
        "    return {};\n}\n",
        "#undef NDEBUG\n#include<assert.h>\nbool issame(map<char,int> a,map<char,int> b){ return a == b; }\n"
        "int main(){\n    assert (issame(histogram(\"a b b a\") , {{'a',2},{'b',2}}));\n"
        "    assert (issame(histogram(\"b b b b a\") , {{'b',4}}));\n}\n",
    ),
    Problem(
        "float_tolerance",
        "truncate_number",
        CPP_HEAD + "float truncate_number(float number){\n",
        "    return number - int(number);\n}\n",
        "    return number;\n}\n",
        "#undef NDEBUG\n#include<assert.h>\nint main(){\n"
        "    assert (truncate_number(3.5) == 0.5);\n"
        "    assert (abs(truncate_number(1.33) - 0.33) < 1e-4);\n}\n",
    ),
    Problem(
        "helper_in_prompt",
        "decode_shift",
        CPP_HEAD
        + "string encode_shift(string s){\n    string out;\n"
        + "    for (char c : s) out += (char)(((c - 'a' + 5) % 26) + 'a');\n    return out;\n}\n"
        + "string decode_shift(string s){\n",
        "    string out;\n    for (char c : s) out += (char)(((c - 'a' + 21) % 26) + 'a');\n    return out;\n}\n",
        "    return s;\n}\n",
        "#undef NDEBUG\n#include<assert.h>\nint main(){\n"
        '    for (string s : {"abc", "hello", "zzz"}) assert (decode_shift(encode_shift(s)) == s);\n}\n',
    ),
    Problem(
        "pair",
        "sum_product",
        CPP_HEAD + "#include<utility>\npair<int,int> sum_product(vector<int> numbers){\n",
        "    int sum = 0, product = 1;\n    for (int n : numbers) { sum += n; product *= n; }\n"
        "    return {sum, product};\n}\n",
        "    return {0, 0};\n}\n",
        "#undef NDEBUG\n#include<assert.h>\nint main(){\n"
        "    assert (sum_product({}) == make_pair(0, 1));\n"
        "    assert (sum_product({3, 5, 7}) == make_pair(15, 105));\n}\n",
    ),
]

JAVA_HEAD = "import java.util.*;\nimport java.lang.*;\n\nclass Solution {\n"
JAVA = [
    Problem(
        "vector_of_float",
        "hasCloseElements",
        JAVA_HEAD + "    /**\n    Check if two numbers are closer than threshold.\n     */\n"
        "    public boolean hasCloseElements(List<Double> numbers, double threshold) {\n",
        "        for (int i = 0; i < numbers.size(); i++)\n"
        "            for (int j = i + 1; j < numbers.size(); j++)\n"
        "                if (Math.abs(numbers.get(i) - numbers.get(j)) < threshold) return true;\n"
        "        return false;\n    }\n}\n",
        "        return true;\n    }\n}\n",
        "public class Main {\n    public static void main(String[] args) {\n        Solution s = new Solution();\n"
        "        List<Boolean> correct = Arrays.asList(\n"
        "                !s.hasCloseElements(new ArrayList<>(Arrays.asList(1.0, 2.0, 3.9, 4.0, 5.0, 2.2)), 0.05),\n"
        "                s.hasCloseElements(new ArrayList<>(Arrays.asList(1.0, 2.0, 3.9, 4.0, 5.0, 2.2)), 0.3)\n"
        "        );\n        if (correct.contains(false)) {\n            throw new AssertionError();\n"
        "        }\n    }\n}\n",
    ),
    Problem(
        "strings",
        "filterByPrefix",
        JAVA_HEAD + "    public List<String> filterByPrefix(List<String> strings, String prefix) {\n",
        "        List<String> out = new ArrayList<>();\n"
        "        for (String s : strings) if (s.startsWith(prefix)) out.add(s);\n        return out;\n    }\n}\n",
        "        return strings;\n    }\n}\n",
        "public class Main {\n    public static void main(String[] args) {\n        Solution s = new Solution();\n"
        "        List<Boolean> correct = Arrays.asList(\n"
        '                s.filterByPrefix(new ArrayList<>(List.of()), "john").equals(List.of()),\n'
        '                s.filterByPrefix(new ArrayList<>(Arrays.asList("xxx", "asd", "xxy", "john doe", "xxxAAA", "xxx")), "xxx")'
        '.equals(Arrays.asList("xxx", "xxxAAA", "xxx"))\n'
        "        );\n        if (correct.contains(false)) {\n            throw new AssertionError();\n"
        "        }\n    }\n}\n",
    ),
    Problem(
        "map",
        "histogram",
        JAVA_HEAD + "    public Map<String, Integer> histogram(String test) {\n",
        "        Map<String, Integer> counts = new HashMap<>(), out = new HashMap<>();\n        int most = 0;\n"
        '        for (String c : test.split(" ")) if (!c.isEmpty()) most = Math.max(most, counts.merge(c, 1, Integer::sum));\n'
        "        for (var e : counts.entrySet()) if (e.getValue() == most) out.put(e.getKey(), most);\n"
        "        return out;\n    }\n}\n",
        "        return new HashMap<>();\n    }\n}\n",
        "public class Main {\n    public static void main(String[] args) {\n        Solution s = new Solution();\n"
        '        Map<String, Integer> map1 = new HashMap<>();\n        map1.put("a", 2);\n        map1.put("b", 2);\n'
        '        if (!s.histogram("a b b a").equals(map1)) {\n            throw new AssertionError("histogram");\n'
        "        }\n    }\n}\n",
    ),
    Problem(
        "float_tolerance",
        "truncateNumber",
        JAVA_HEAD + "    public double truncateNumber(double number) {\n",
        "        return number % 1.0;\n    }\n}\n",
        "        return number;\n    }\n}\n",
        "public class Main {\n    public static void main(String[] args) {\n        Solution s = new Solution();\n"
        "        List<Boolean> correct = Arrays.asList(\n"
        "                s.truncateNumber(3.5) == 0.5,\n"
        "                Math.abs(s.truncateNumber(1.33) - 0.33) < 1e-6\n"
        "        );\n        if (correct.contains(false)) {\n            throw new AssertionError();\n"
        "        }\n    }\n}\n",
    ),
    Problem(
        "helper_in_prompt",
        "decodeShift",
        JAVA_HEAD
        + "    public String encodeShift(String s) {\n        StringBuilder sb = new StringBuilder();\n"
        "        for (char ch : s.toCharArray()) sb.append((char) ('a' + ((ch + 5 - 'a') % 26)));\n"
        "        return sb.toString();\n    }\n\n    public String decodeShift(String s) {\n",
        "        StringBuilder sb = new StringBuilder();\n"
        "        for (char ch : s.toCharArray()) sb.append((char) ('a' + ((ch + 21 - 'a') % 26)));\n"
        "        return sb.toString();\n    }\n}\n",
        "        return s;\n    }\n}\n",
        "public class Main {\n    public static void main(String[] args) {\n        Solution s = new Solution();\n"
        '        for (String str : new String[] {"abc", "hello", "zzz"}) {\n'
        "            if (!s.decodeShift(s.encodeShift(str)).equals(str)) {\n"
        "                throw new AssertionError();\n            }\n        }\n    }\n}\n",
    ),
    Problem(
        "optional",
        "longest",
        JAVA_HEAD + "    public Optional<String> longest(List<String> strings) {\n",
        "        String best = null;\n        for (String s : strings) if (best == null || s.length() > best.length()) best = s;\n"
        "        return Optional.ofNullable(best);\n    }\n}\n",
        '        return Optional.of("x");\n    }\n}\n',
        "public class Main {\n    public static void main(String[] args) {\n        Solution s = new Solution();\n"
        "        List<Boolean> correct = Arrays.asList(\n"
        "                s.longest(new ArrayList<>(List.of())).isEmpty(),\n"
        '                Objects.equals(s.longest(new ArrayList<>(Arrays.asList("x", "yyy", "zz"))).get(), "yyy")\n'
        "        );\n        if (correct.contains(false)) {\n            throw new AssertionError();\n"
        "        }\n    }\n}\n",
    ),
]

PROBLEMS = {"cpp": CPP, "java": JAVA}

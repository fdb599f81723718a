"""Candidate programs in every compiled language, shared by the language tests."""

from __future__ import annotations

COMPILED = ["go", "java", "cpp", "typescript"]

# echo: every kind of value through the codec, each changed a little on the way back
ECHO = {
    "go": """package main

import "math/big"

type Point struct {
	X     int    `json:"x"`
	Label string `json:"label"`
	hidden int
}

func Echo(i int64, n *big.Int, f float64, s string, b bool, xs []int, m map[string][]float64,
	set map[int]struct{}, p Point, opt *int) (int64, *big.Int, float64, string, bool, []int,
	map[string][]float64, map[int]struct{}, Point, *int, []string) {
	var none []string
	return i + 1, n.Mul(n, big.NewInt(2)), f * 2, s + "!", !b, append(xs, len(xs)), m, set, p, opt, none
}
""",
    "java": """import java.math.BigInteger;
import java.util.*;

class Solution {
    record Point(int x, String label) {}

    public List<Object> echo(long i, BigInteger n, double f, String s, boolean b, List<Integer> xs,
                             Map<String, List<Double>> m, Set<Integer> set, Map<String, Object> p,
                             Optional<Integer> opt, int[] arr) {
        List<Integer> more = new ArrayList<>(xs);
        more.add(xs.size());
        return Arrays.asList(i + 1, n.multiply(BigInteger.TWO), f * 2, s + "!", !b, more, m, set,
                             new Point((Integer) p.get("x"), (String) p.get("label")), opt, arr);
    }
}
""",
    "cpp": """#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>
using namespace std;

tuple<long long, unsigned long long, double, string, bool, vector<int>, map<string, vector<double>>,
      set<int>, pair<int, string>, optional<int>, vector<string>>
echo(long long i, unsigned long long n, double f, const string& s, bool b, vector<int> xs,
     map<string, vector<double>> m, set<int> st, pair<int, string> p, optional<int> opt, vector<string> none) {
    xs.push_back((int)xs.size());
    return {i + 1, n * 2, f * 2, s + "!", !b, xs, m, st, p, opt, none};
}
""",
    "typescript": """function echo(i: number, n: bigint, f: number, s: string, b: boolean, xs: number[],
              m: Record<string, number[]>, set: Set<number>, p: { x: number; label: string },
              opt: number | null): unknown[] {
  return [i + 1, n * 2n, f * 2, s + '!', !b, [...xs, xs.length], m, set, p, opt, []];
}
""",
}
ECHO_ENTRY = {"go": "Echo", "java": "echo", "cpp": "echo", "typescript": "echo"}

# a function that fails at run time (an index out of range), and code that does not compile
RAISES = {
    "go": "package main\n\nfunc Pick(xs []int, i int) int {\n\treturn xs[i]\n}\n",
    "java": "import java.util.*;\nclass Solution {\n    int pick(List<Integer> xs, int i) { return xs.get(i); }\n}\n",
    "cpp": "#include <vector>\n#include <stdexcept>\nint pick(std::vector<int> xs, int i) { return xs.at(i); }\n",
    "typescript": "function pick(xs: number[], i: number): number {\n"
    "  if (i >= xs.length) throw new RangeError('index out of range');\n  return xs[i];\n}\n",
}
RAISES_ENTRY = {"go": "Pick", "java": "pick", "cpp": "pick", "typescript": "pick"}
RAISED_TYPE = {
    "go": "runtime.Error",
    "java": "IndexOutOfBoundsException",
    "cpp": "std::out_of_range",
    "typescript": "RangeError",
}
BROKEN = {
    "go": "package main\n\nfunc Pick(xs []int) int {\n\treturn undefinedName\n}\n",
    "java": "class Solution {\n    int pick(int x) { return undefinedName; }\n}\n",
    "cpp": "int pick(int x) {\n    return undefinedName;\n}\n",
    "typescript": "function pick(x: number): number {\n  return (x +;\n}\n",
}
BROKEN_MESSAGE = {
    "go": "solution.go:4:9: undefined: undefinedName",
    "java": "Solution.java:2: error: cannot find symbol",
    "cpp": "solution.cpp:2:12: error: ‘undefinedName’ was not declared",
    "typescript": "solution.ts(2,14): error TS1109: Expression expected.",
}

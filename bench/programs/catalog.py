"""The stdin/stdout benchmark's problems, as written by hand: a statement, test inputs
(fixed, or drawn from a seeded generator), a checker, a correct solution in Python and
C++ (some also in Java, Go or JavaScript) and wrong ones with the verdict each must get.

``make.py`` runs each problem's Python solution (ours, trusted, outside any sandbox) on
its inputs to write the expected outputs into ``problems/<name>.json``; the tests check
that every correct solution is accepted and every wrong one gets its verdict."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

CPP_HEAD = (
    "#include <iostream>\n#include <vector>\n#include <string>\n#include <algorithm>\nusing namespace std;\n"
)


@dataclass
class Problem:
    name: str
    statement: str
    inputs: Callable[[random.Random], list[str]]
    solutions: dict[str, str]  # file name -> code: correct.py is the reference
    expect: dict[str, str] = field(default_factory=dict)  # wrong solution -> verdict kind
    checker: str = "tokens"  # a built-in checker, or "program" (checker.py)
    checker_code: str = ""
    time_limit: float = 2.0


def ints(r: random.Random, n: int, low: int, high: int) -> str:
    return " ".join(str(r.randint(low, high)) for _ in range(n))


def lists(r: random.Random, sizes: list[int], low: int, high: int) -> list[str]:
    return [f"{n}\n{ints(r, n, low, high)}\n" for n in sizes]


PROBLEMS: list[Problem] = []


def problem(**kwargs: object) -> None:
    PROBLEMS.append(Problem(**kwargs))  # type: ignore[arg-type]


# -- 1-10: arithmetic and lists --------------------------------------------------------------
problem(
    name="sum_two",
    statement="Two integers a, b (|a|, |b| <= 10^18) on one line: print a + b.",
    inputs=lambda r: (
        ["1 2\n", "-5 5\n", "1000000000000000000 999999999999999999\n"]
        + [f"{r.randint(-(10**18), 10**18)} {r.randint(-(10**18), 10**18)}\n" for _ in range(3)]
    ),
    solutions={
        "correct.py": "a, b = map(int, input().split())\nprint(a + b)\n",
        "correct.cpp": CPP_HEAD
        + "int main() { __int128 a; long long x, y; cin >> x >> y; a = (__int128)x + y;\n"
        "  if (a < 0) { cout << '-'; a = -a; } string s; if (a == 0) s = \"0\";\n"
        "  while (a > 0) { s += char('0' + (int)(a % 10)); a /= 10; } reverse(s.begin(), s.end()); cout << s << endl; }\n",
        "correct.go": 'package main\nimport ("fmt"; "math/big")\nfunc main() { a, b := new(big.Int), new(big.Int); fmt.Scan(a, b); fmt.Println(a.Add(a, b)) }\n',
        "correct.js": "const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(BigInt);\nconsole.log((a + b).toString());\n",
        "wrong_int.cpp": CPP_HEAD + "int main() { int a, b; cin >> a >> b; cout << a + b << endl; }\n",
    },
    expect={"wrong_int.cpp": "wrong_answer"},
)
problem(
    name="sum_list",
    statement="n, then n integers (|x| <= 10^9, n <= 10^5): print their sum.",
    inputs=lambda r: lists(r, [1, 5, 1000, 30000], -(10**9), 10**9),
    solutions={
        "correct.py": "import sys\ndata = sys.stdin.read().split()\nprint(sum(map(int, data[1:])))\n",
        "correct.cpp": CPP_HEAD
        + "int main() { ios::sync_with_stdio(false); cin.tie(nullptr); int n; cin >> n; long long s = 0, x;\n"
        "  for (int i = 0; i < n; i++) { cin >> x; s += x; } cout << s << '\\n'; }\n",
        "correct.java": "import java.io.*;\nimport java.util.*;\npublic class Main { public static void main(String[] a) throws IOException {\n"
        "  StreamTokenizer t = new StreamTokenizer(new BufferedInputStream(System.in)); t.nextToken(); int n = (int) t.nval; long s = 0;\n"
        "  for (int i = 0; i < n; i++) { t.nextToken(); s += (long) t.nval; } System.out.println(s); } }\n",
        "wrong_int.cpp": CPP_HEAD
        + "int main() { int n; cin >> n; int s = 0, x; for (int i = 0; i < n; i++) { cin >> x; s += x; } cout << s << endl; }\n",
        "wrong_skip.py": "import sys\ndata = sys.stdin.read().split()\nprint(sum(map(int, data[2:])))\n",
    },
    expect={"wrong_int.cpp": "wrong_answer", "wrong_skip.py": "wrong_answer"},
)
problem(
    name="max_list",
    statement="n, then n integers: print the largest.",
    inputs=lambda r: lists(r, [1, 3, 50, 2000], -(10**9), 10**9) + ["3\n-5 -2 -9\n"],
    solutions={
        "correct.py": "import sys\nd = sys.stdin.read().split()\nprint(max(map(int, d[1:])))\n",
        "correct.cpp": CPP_HEAD
        + "int main() { int n; cin >> n; long long m, x; cin >> m; for (int i = 1; i < n; i++) { cin >> x; m = max(m, x); } cout << m << endl; }\n",
        "correct.go": 'package main\nimport ("bufio"; "fmt"; "os")\nfunc main() { in := bufio.NewReader(os.Stdin); var n int; fmt.Fscan(in, &n); var m, x int64; fmt.Fscan(in, &m)\n'
        "  for i := 1; i < n; i++ { fmt.Fscan(in, &x); if x > m { m = x } }; fmt.Println(m) }\n",
        "wrong_zero.py": "import sys\nd = sys.stdin.read().split()\nprint(max([0] + list(map(int, d[1:]))))\n",
    },
    expect={"wrong_zero.py": "wrong_answer"},
)
problem(
    name="reverse_words",
    statement="One line of words separated by single spaces: print them in reverse order.",
    inputs=lambda r: (
        ["hello world\n", "one\n", "the quick brown fox jumps\n"]
        + [" ".join(r.choice(["a", "bb", "ccc", "dd", "e"]) for _ in range(200)) + "\n"]
    ),
    solutions={
        "correct.py": "print(' '.join(input().split()[::-1]))\n",
        "correct.cpp": CPP_HEAD
        + "int main() { vector<string> w; string s; while (cin >> s) w.push_back(s); reverse(w.begin(), w.end());\n"
        '  for (size_t i = 0; i < w.size(); i++) cout << (i ? " " : "") << w[i]; cout << endl; }\n',
        "correct.js": "const w = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/);\nconsole.log(w.reverse().join(' '));\n",
        "wrong_chars.py": "print(input()[::-1])\n",
    },
    expect={"wrong_chars.py": "wrong_answer"},
    checker="exact",
)
problem(
    name="count_vowels",
    statement="One line of text: print how many of its letters are vowels (aeiou, either case).",
    inputs=lambda r: [
        "Hello World\n",
        "xyz\n",
        "AEIOU aeiou\n",
        "".join(r.choice("abcdeIOUxyz ") for _ in range(5000)) + "\n",
    ],
    solutions={
        "correct.py": "print(sum(c in 'aeiouAEIOU' for c in input()))\n",
        "correct.cpp": CPP_HEAD
        + 'int main() { string s; getline(cin, s); int n = 0; for (char c : s) n += string("aeiouAEIOU").find(c) != string::npos; cout << n << endl; }\n',
        "wrong_case.cpp": CPP_HEAD
        + 'int main() { string s; getline(cin, s); int n = 0; for (char c : s) n += string("aeiou").find(c) != string::npos; cout << n << endl; }\n',
    },
    expect={"wrong_case.cpp": "wrong_answer"},
)
problem(
    name="fizzbuzz",
    statement="n: print 1..n, with Fizz for multiples of 3, Buzz of 5, FizzBuzz of both.",
    inputs=lambda r: ["1\n", "15\n", "100\n", "30000\n"],
    solutions={
        "correct.py": "n = int(input())\nprint('\\n'.join('FizzBuzz' if i % 15 == 0 else 'Fizz' if i % 3 == 0 else 'Buzz' if i % 5 == 0 else str(i) for i in range(1, n + 1)))\n",
        "correct.cpp": CPP_HEAD
        + 'int main() { int n; cin >> n; for (int i = 1; i <= n; i++) { if (i % 15 == 0) cout << "FizzBuzz\\n"; else if (i % 3 == 0) cout << "Fizz\\n";\n'
        "  else if (i % 5 == 0) cout << \"Buzz\\n\"; else cout << i << '\\n'; } }\n",
        "correct.java": "import java.util.*;\npublic class Main { public static void main(String[] a) { int n = new Scanner(System.in).nextInt(); StringBuilder b = new StringBuilder();\n"
        '  for (int i = 1; i <= n; i++) b.append(i % 15 == 0 ? "FizzBuzz" : i % 3 == 0 ? "Fizz" : i % 5 == 0 ? "Buzz" : String.valueOf(i)).append(\'\\n\'); System.out.print(b); } }\n',
        "wrong_order.py": "n = int(input())\nfor i in range(1, n + 1):\n    print('Fizz' if i % 3 == 0 else 'Buzz' if i % 5 == 0 else 'FizzBuzz' if i % 15 == 0 else i)\n",
    },
    expect={"wrong_order.py": "wrong_answer"},
    checker="exact",
)
problem(
    name="fibonacci_mod",
    statement="n (0 <= n <= 10^6): print F(n) mod 10^9+7 (F(0)=0, F(1)=1).",
    inputs=lambda r: ["0\n", "1\n", "10\n", "1000000\n", f"{r.randint(1000, 10**6)}\n"],
    solutions={
        "correct.py": "n = int(input())\na, b = 0, 1\nfor _ in range(n):\n    a, b = b, (a + b) % 1000000007\nprint(a)\n",
        "correct.cpp": CPP_HEAD
        + "int main() { long long n, a = 0, b = 1; cin >> n; for (long long i = 0; i < n; i++) { long long c = (a + b) % 1000000007; a = b; b = c; } cout << a << endl; }\n",
        "correct.go": 'package main\nimport "fmt"\nfunc main() { var n int; fmt.Scan(&n); a, b := 0, 1; for i := 0; i < n; i++ { a, b = b, (a+b)%1000000007 }; fmt.Println(a) }\n',
        "wrong_slow.py": "import sys\nsys.setrecursionlimit(10000)\ndef f(n):\n    return n if n < 2 else (f(n - 1) + f(n - 2)) % 1000000007\nprint(f(int(input())))\n",
    },
    expect={"wrong_slow.py": "runtime_error"},  # deep recursion: RecursionError at n = 10^6... or before
)
problem(
    name="count_primes",
    statement="n (1 <= n <= 2*10^6): print how many primes are <= n.",
    inputs=lambda r: ["1\n", "2\n", "10\n", "100\n", "2000000\n"],
    solutions={
        "correct.py": "n = int(input())\ns = bytearray([1]) * (n + 1)\ns[0:2] = b'\\x00\\x00'[: n + 1]\nfor i in range(2, int(n ** 0.5) + 1):\n    if s[i]:\n        s[i * i :: i] = bytes(len(range(i * i, n + 1, i)))\nprint(sum(s))\n",
        "correct.cpp": CPP_HEAD
        + "int main() { int n; cin >> n; vector<bool> p(n + 1, true); int c = 0; for (int i = 2; i <= n; i++) if (p[i]) { c++; for (long long j = (long long)i * i; j <= n; j += i) p[j] = false; } cout << c << endl; }\n",
        "wrong_slow.cpp": CPP_HEAD
        + "int main() { int n; cin >> n; long long c = 0; for (int i = 2; i <= n; i++) { bool q = true; for (int d = 2; d < i; d++) if (i % d == 0) { q = false; } c += q; } cout << c << endl; }\n",
    },
    expect={"wrong_slow.cpp": "time_limit"},
    time_limit=1.0,
)
problem(
    name="gcd_lcm",
    statement="t, then t lines of a b (1 <= a, b <= 10^9): print gcd and lcm for each.",
    inputs=lambda r: (
        ["1\n4 6\n", "2\n1 1\n7 13\n"]
        + ["200\n" + "".join(f"{r.randint(1, 10**9)} {r.randint(1, 10**9)}\n" for _ in range(200))]
    ),
    solutions={
        "correct.py": "import math\nt = int(input())\nfor _ in range(t):\n    a, b = map(int, input().split())\n    g = math.gcd(a, b)\n    print(g, a // g * b)\n",
        "correct.cpp": CPP_HEAD
        + "long long g(long long a, long long b) { return b ? g(b, a % b) : a; }\nint main() { int t; cin >> t; while (t--) { long long a, b; cin >> a >> b; long long d = g(a, b); cout << d << ' ' << a / d * b << '\\n'; } }\n",
        "wrong_lcm.cpp": CPP_HEAD
        + "int g(int a, int b) { return b ? g(b, a % b) : a; }\nint main() { int t; cin >> t; while (t--) { int a, b; cin >> a >> b; int d = g(a, b); cout << d << ' ' << a * b / d << '\\n'; } }\n",
    },
    expect={"wrong_lcm.cpp": "wrong_answer"},
)
problem(
    name="sort_numbers",
    statement="n, then n integers: print them in ascending order.",
    inputs=lambda r: lists(r, [1, 7, 1000, 50000], -(10**6), 10**6),
    solutions={
        "correct.py": "import sys\nd = sys.stdin.read().split()\nprint(' '.join(map(str, sorted(map(int, d[1:])))))\n",
        "correct.cpp": CPP_HEAD
        + "int main() { ios::sync_with_stdio(false); int n; cin >> n; vector<int> v(n); for (auto& x : v) cin >> x; sort(v.begin(), v.end());\n"
        "  for (int i = 0; i < n; i++) cout << v[i] << (i + 1 < n ? ' ' : '\\n'); }\n",
        "correct.js": "const d = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\nconsole.log(d.slice(1).sort((a, b) => a - b).join(' '));\n",
        "wrong_lexical.js": "const d = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/);\nconsole.log(d.slice(1).sort().join(' '));\n",
    },
    expect={"wrong_lexical.js": "wrong_answer"},
)
# -- 11-15: case-insensitive and floats ----------------------------------------------------------
problem(
    name="palindrome",
    statement="One word: print YES if it reads the same backwards, else NO (any case).",
    inputs=lambda r: ["abba\n", "abc\n", "a\n", "racecar\n", "ab\n", "abca\n"],
    solutions={
        "correct.py": "s = input().strip()\nprint('yes' if s == s[::-1] else 'no')\n",
        "correct.cpp": CPP_HEAD
        + 'int main() { string s; cin >> s; string t(s.rbegin(), s.rend()); cout << (s == t ? "YES" : "NO") << endl; }\n',
        "wrong_first_last.py": "s = input().strip()\nprint('YES' if s[0] == s[-1] else 'NO')\n",
    },
    expect={"wrong_first_last.py": "wrong_answer"},
    checker="case_insensitive",
)
problem(
    name="mean",
    statement="n, then n integers: print their mean (within 1e-6).",
    inputs=lambda r: lists(r, [1, 3, 1000], -1000, 1000) + ["3\n1 2 2\n"],
    solutions={
        "correct.py": "import sys\nd = list(map(int, sys.stdin.read().split()))\nprint(sum(d[1:]) / d[0])\n",
        "correct.cpp": CPP_HEAD
        + '#include <cstdio>\nint main() { int n; cin >> n; double s = 0, x; for (int i = 0; i < n; i++) { cin >> x; s += x; } printf("%.9f\\n", s / n); }\n',
        "correct.java": "import java.util.*;\npublic class Main { public static void main(String[] a) { Scanner s = new Scanner(System.in); int n = s.nextInt(); double t = 0;\n"
        '  for (int i = 0; i < n; i++) t += s.nextInt(); System.out.printf("%.9f%n", t / n); } }\n',
        "wrong_integer.py": "import sys\nd = list(map(int, sys.stdin.read().split()))\nprint(sum(d[1:]) // d[0])\n",
    },
    expect={"wrong_integer.py": "wrong_answer"},
    checker="floats",
)
problem(
    name="circle_area",
    statement="A radius r (0 < r <= 1000, real): print the circle's area (within 1e-6 relative).",
    inputs=lambda r: ["1\n", "2.5\n", "1000\n", "0.001\n"],
    solutions={
        "correct.py": "import math\nr = float(input())\nprint(f'{math.pi * r * r:.10f}')\n",
        "correct.cpp": CPP_HEAD
        + '#include <cstdio>\n#include <cmath>\nint main() { double r; cin >> r; printf("%.10f\\n", M_PI * r * r); }\n',
        "correct.go": 'package main\nimport ("fmt"; "math")\nfunc main() { var r float64; fmt.Scan(&r); fmt.Printf("%.10f\\n", math.Pi*r*r) }\n',
        "wrong_pi.py": "r = float(input())\nprint(3.14 * r * r)\n",
    },
    expect={"wrong_pi.py": "wrong_answer"},
    checker="floats",
)
problem(
    name="square_root",
    statement="t, then t non-negative reals: print the square root of each, one per line (within 1e-6).",
    inputs=lambda r: (
        ["1\n4\n", "3\n2\n0\n1e6\n"] + ["100\n" + "".join(f"{r.uniform(0, 1e9):.3f}\n" for _ in range(100))]
    ),
    solutions={
        "correct.py": "import math, sys\nd = sys.stdin.read().split()\nprint('\\n'.join(f'{math.sqrt(float(x)):.9f}' for x in d[1:]))\n",
        "correct.cpp": CPP_HEAD
        + '#include <cstdio>\n#include <cmath>\nint main() { int t; cin >> t; while (t--) { double x; cin >> x; printf("%.9f\\n", sqrt(x)); } }\n',
        "wrong_rounded.cpp": CPP_HEAD
        + '#include <cstdio>\n#include <cmath>\nint main() { int t; cin >> t; while (t--) { double x; cin >> x; printf("%.2f\\n", sqrt(x)); } }\n',
    },
    expect={"wrong_rounded.cpp": "wrong_answer"},
    checker="floats",
)
problem(
    name="distance",
    statement="x1 y1 x2 y2 (reals): print the distance between the two points (within 1e-6).",
    inputs=lambda r: (
        ["0 0 3 4\n", "1 1 1 1\n", "-1.5 2 3.25 -7\n"]
        + [" ".join(f"{r.uniform(-1e4, 1e4):.4f}" for _ in range(4)) + "\n"]
    ),
    solutions={
        "correct.py": "import math\na, b, c, d = map(float, input().split())\nprint(math.hypot(c - a, d - b))\n",
        "correct.cpp": CPP_HEAD
        + '#include <cstdio>\n#include <cmath>\nint main() { double a, b, c, d; cin >> a >> b >> c >> d; printf("%.9f\\n", hypot(c - a, d - b)); }\n',
        "correct.js": "const [a, b, c, d] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\nconsole.log(Math.hypot(c - a, d - b).toFixed(9));\n",
        "wrong_manhattan.py": "a, b, c, d = map(float, input().split())\nprint(abs(c - a) + abs(d - b))\n",
    },
    expect={"wrong_manhattan.py": "wrong_answer"},
    checker="floats",
)
# -- 16-20: several right answers: a checker program --------------------------------------------
PAIR_CHECKER = """import sys

def main():
    data = open(sys.argv[1]).read().split()
    n, target = int(data[0]), int(data[1])
    a = list(map(int, data[2 : 2 + n]))
    expected = open(sys.argv[3]).read().split()
    got = open(sys.argv[2]).read().split()
    if len(got) != 2 or not all(t.lstrip("-").isdigit() for t in got):
        print("expected two integers", file=sys.stderr)
        return 1
    i, j = map(int, got)
    if expected == ["-1", "-1"]:
        if (i, j) == (-1, -1):
            return 0
        print("there is no such pair", file=sys.stderr)
        return 1
    if not (1 <= i < j <= n):
        print(f"indices {i} {j} out of order or range", file=sys.stderr)
        return 1
    if a[i - 1] + a[j - 1] != target:
        print(f"a[{i}] + a[{j}] = {a[i - 1] + a[j - 1]}, not {target}", file=sys.stderr)
        return 1
    return 0

sys.exit(main())
"""
problem(
    name="pair_sum",
    statement="n and a target, then n integers: print 1-based indices i < j with a_i + a_j = target (any such pair), or -1 -1.",
    inputs=lambda r: (
        ["4 9\n2 7 11 15\n", "3 100\n1 2 3\n", "6 10\n5 5 3 7 1 9\n"]
        + [f"2000 {r.randint(-50, 50)}\n{ints(r, 2000, -1000, 1000)}\n" for _ in range(2)]
    ),
    solutions={
        "correct.py": "import sys\nd = list(map(int, sys.stdin.read().split()))\nn, t, a = d[0], d[1], d[2:]\nseen = {}\nfor j, x in enumerate(a):\n"
        "    if t - x in seen:\n        print(seen[t - x] + 1, j + 1)\n        break\n    seen.setdefault(x, j)\nelse:\n    print(-1, -1)\n",
        "correct.cpp": CPP_HEAD
        + "int main() { int n; long long t; cin >> n >> t; vector<long long> a(n); for (auto& x : a) cin >> x;\n"
        "  for (int i = n - 1; i >= 0; i--) for (int j = i - 1; j >= 0; j--) if (a[i] + a[j] == t) { cout << j + 1 << ' ' << i + 1 << endl; return 0; }\n"
        '  cout << "-1 -1" << endl; }\n',
        "wrong_same_index.py": "import sys\nd = list(map(int, sys.stdin.read().split()))\nn, t, a = d[0], d[1], d[2:]\nfor i in range(n):\n    for j in range(n):\n"
        "        if a[i] + a[j] == t:\n            print(i + 1, j + 1)\n            sys.exit()\nprint(-1, -1)\n",
    },
    expect={"wrong_same_index.py": "wrong_answer"},
    checker="program",
    checker_code=PAIR_CHECKER,
)
DIVISOR_CHECKER = """import sys
n = int(open(sys.argv[1]).read())
answer = open(sys.argv[3]).read().split()
got = open(sys.argv[2]).read().split()
if len(got) != 1 or not got[0].lstrip("-").isdigit():
    sys.stderr.write("expected one integer\\n")
    sys.exit(1)
d = int(got[0])
if answer == ["-1"]:
    sys.exit(0 if d == -1 else 1)
if 1 < d < n and n % d == 0:
    sys.exit(0)
sys.stderr.write(f"{d} is not a proper divisor of {n}\\n")
sys.exit(1)
"""
problem(
    name="any_divisor",
    statement="n (2 <= n <= 10^12): print any divisor d with 1 < d < n, or -1 if n is prime.",
    inputs=lambda r: ["4\n", "7\n", "100\n", "999999000001\n", "1000000007\n", "600851475143\n"],
    solutions={
        "correct.py": "n = int(input())\nd = 2\nwhile d * d <= n:\n    if n % d == 0:\n        print(n // d)\n        break\n    d += 1\nelse:\n    print(-1)\n",
        "correct.cpp": CPP_HEAD
        + "int main() { long long n; cin >> n; for (long long d = 2; d * d <= n; d++) if (n % d == 0) { cout << d << endl; return 0; } cout << -1 << endl; }\n",
        "correct.java": "import java.util.*;\npublic class Main { public static void main(String[] x) { long n = new Scanner(System.in).nextLong();\n"
        "  for (long d = 2; d * d <= n; d++) if (n % d == 0) { System.out.println(d); return; } System.out.println(-1); } }\n",
        "wrong_one.cpp": CPP_HEAD
        + "int main() { long long n; cin >> n; for (long long d = 2; d * d <= n; d++) if (n % d == 0) { cout << d << endl; return 0; } cout << 1 << endl; }\n",
    },
    expect={"wrong_one.cpp": "wrong_answer"},
    checker="program",
    checker_code=DIVISOR_CHECKER,
)
DERANGEMENT_CHECKER = """#include <cstdio>
#include <vector>
int main(int argc, char** argv) {
    FILE* in = fopen(argv[1], "r"); FILE* out = fopen(argv[2], "r");
    int n; if (fscanf(in, "%d", &n) != 1) return 3;
    std::vector<int> seen(n + 1, 0);
    for (int i = 1; i <= n; i++) {
        int p; if (fscanf(out, "%d", &p) != 1) { fprintf(stderr, "wrong answer: only %d numbers\\n", i - 1); return 1; }
        if (p < 1 || p > n || seen[p]) { fprintf(stderr, "wrong answer: %d is not a new number of 1..%d\\n", p, n); return 1; }
        if (p == i) { fprintf(stderr, "wrong answer: position %d holds itself\\n", i); return 1; }
        seen[p] = 1;
    }
    int extra; if (fscanf(out, "%d", &extra) == 1) { fprintf(stderr, "wrong answer: more than %d numbers\\n", n); return 1; }
    fprintf(stderr, "ok\\n");
    return 0;
}
"""
problem(
    name="derangement",
    statement="n (2 <= n <= 10^5): print any permutation p of 1..n with p_i != i for every i.",
    inputs=lambda r: ["2\n", "3\n", "10\n", "100000\n"],
    solutions={
        "correct.py": "n = int(input())\nprint(' '.join(map(str, list(range(2, n + 1)) + [1])))\n",
        "correct.cpp": CPP_HEAD
        + "int main() { int n; cin >> n; for (int i = 1; i <= n; i++) cout << (i == n ? 1 : i + 1) << (i == n ? '\\n' : ' '); }\n",
        "correct.go": 'package main\nimport ("bufio"; "fmt"; "os")\nfunc main() { var n int; fmt.Scan(&n); w := bufio.NewWriter(os.Stdout); defer w.Flush()\n'
        '  fmt.Fprint(w, n); for i := 1; i < n; i++ { fmt.Fprint(w, " ", i) }; fmt.Fprintln(w) }\n',
        "wrong_identity.py": "n = int(input())\nprint(*range(1, n + 1))\n",
    },
    expect={"wrong_identity.py": "wrong_answer"},
    checker="program",
    checker_code=DERANGEMENT_CHECKER,
)
TOPO_CHECKER = """import sys
data = open(sys.argv[1]).read().split()
n, m = int(data[0]), int(data[1])
edges = [(int(data[2 + 2 * k]), int(data[3 + 2 * k])) for k in range(m)]
got = open(sys.argv[2]).read().split()
if sorted(got, key=lambda t: (len(t), t)) != [str(i) for i in range(1, n + 1)]:
    print("wrong answer: not a permutation of the vertices")
    sys.exit(1)
where = {int(v): k for k, v in enumerate(got)}
for u, v in edges:
    if where[u] > where[v]:
        print(f"wrong answer: edge {u}->{v} goes backwards")
        sys.exit(1)
sys.exit(0)
"""


def _dag(r: random.Random, n: int, m: int) -> str:
    order = list(range(1, n + 1))
    r.shuffle(order)
    edges = set()
    while len(edges) < m:
        a, b = sorted(r.sample(range(n), 2))
        edges.add((order[a], order[b]))
    return f"{n} {m}\n" + "".join(f"{u} {v}\n" for u, v in sorted(edges))


problem(
    name="topological_order",
    statement="A DAG: n m, then m edges u v: print any order of the vertices with every edge forward.",
    inputs=lambda r: [
        "3 2\n1 2\n2 3\n",
        "4 0\n",
        "5 4\n5 4\n4 3\n3 2\n2 1\n",
        _dag(r, 300, 1000),
        _dag(r, 2000, 5000),
    ],
    solutions={
        "correct.py": "import sys\nfrom collections import deque\nd = list(map(int, sys.stdin.read().split()))\nn, m = d[0], d[1]\nadj = [[] for _ in range(n + 1)]\nindeg = [0] * (n + 1)\n"
        "for k in range(m):\n    u, v = d[2 + 2 * k], d[3 + 2 * k]\n    adj[u].append(v)\n    indeg[v] += 1\nq = deque(i for i in range(1, n + 1) if indeg[i] == 0)\nout = []\n"
        "while q:\n    u = q.popleft()\n    out.append(u)\n    for v in adj[u]:\n        indeg[v] -= 1\n        if indeg[v] == 0:\n            q.append(v)\nprint(*out)\n",
        "correct.cpp": CPP_HEAD
        + "int main() { int n, m; cin >> n >> m; vector<vector<int>> g(n + 1); vector<int> in(n + 1), st, out;\n"
        "  for (int k = 0; k < m; k++) { int u, v; cin >> u >> v; g[u].push_back(v); in[v]++; }\n"
        "  for (int i = n; i >= 1; i--) if (!in[i]) st.push_back(i);\n"
        "  while (!st.empty()) { int u = st.back(); st.pop_back(); out.push_back(u); for (int v : g[u]) if (--in[v] == 0) st.push_back(v); }\n"
        "  for (size_t i = 0; i < out.size(); i++) cout << out[i] << (i + 1 < out.size() ? ' ' : '\\n'); }\n",
        "wrong_sorted.py": "n, m = map(int, input().split())\nprint(*range(1, n + 1))\n",
    },
    expect={"wrong_sorted.py": "wrong_answer"},
    checker="program",
    checker_code=TOPO_CHECKER,
)
# -- 21-31: classic tasks -------------------------------------------------------------------------
problem(
    name="word_frequency",
    statement="Text on one line: print the most frequent word (ties: the alphabetically first) and its count.",
    inputs=lambda r: (
        ["a b a\n", "x\n", "b a\n"]
        + [" ".join(r.choice(["pear", "fig", "kiwi", "lime", "date"]) for _ in range(3000)) + "\n"]
    ),
    solutions={
        "correct.py": "from collections import Counter\nc = Counter(input().split())\nw = min(c, key=lambda k: (-c[k], k))\nprint(w, c[w])\n",
        "correct.cpp": CPP_HEAD
        + "#include <map>\nint main() { map<string, int> c; string w; while (cin >> w) c[w]++; string b; int n = 0; for (auto& [k, v] : c) if (v > n) { b = k; n = v; } cout << b << ' ' << n << endl; }\n",
        "wrong_tie.py": "from collections import Counter\nc = Counter(input().split())\nw = max(c, key=lambda k: (c[k], k))\nprint(w, c[w])\n",
    },
    expect={"wrong_tie.py": "wrong_answer"},
)
problem(
    name="transpose",
    statement="r c, then an r x c matrix of integers: print its transpose.",
    inputs=lambda r: (
        ["1 1\n5\n", "2 3\n1 2 3\n4 5 6\n"]
        + ["40 30\n" + "".join(ints(r, 30, -99, 99) + "\n" for _ in range(40))]
    ),
    solutions={
        "correct.py": "r, c = map(int, input().split())\nm = [input().split() for _ in range(r)]\nfor j in range(c):\n    print(' '.join(m[i][j] for i in range(r)))\n",
        "correct.cpp": CPP_HEAD
        + "int main() { int r, c; cin >> r >> c; vector<vector<int>> m(r, vector<int>(c)); for (auto& row : m) for (auto& x : row) cin >> x;\n"
        "  for (int j = 0; j < c; j++) { for (int i = 0; i < r; i++) cout << m[i][j] << (i + 1 < r ? ' ' : '\\n'); } }\n",
        "wrong_same.py": "import sys\nr, c = map(int, input().split())\nprint(sys.stdin.read())\n",
    },
    expect={"wrong_same.py": "wrong_answer"},
    checker="exact",
)
problem(
    name="range_sums",
    statement="n q, n integers, then q queries l r (1-based, inclusive): print each range's sum.",
    inputs=lambda r: (
        ["3 2\n1 2 3\n1 3\n2 2\n"]
        + [
            f"20000 20000\n{ints(r, 20000, -(10**4), 10**4)}\n"
            + "".join(
                f"{a} {b}\n"
                for a, b in (sorted((r.randint(1, 20000), r.randint(1, 20000))) for _ in range(20000))
            )
        ]
    ),
    solutions={
        "correct.py": "import sys\nd = list(map(int, sys.stdin.buffer.read().split()))\nn, q = d[0], d[1]\np = [0]\nfor x in d[2 : 2 + n]:\n    p.append(p[-1] + x)\n"
        "o = d[2 + n :]\nprint('\\n'.join(str(p[o[2 * k + 1]] - p[o[2 * k] - 1]) for k in range(q)))\n",
        "correct.cpp": CPP_HEAD
        + "int main() { ios::sync_with_stdio(false); cin.tie(nullptr); int n, q; cin >> n >> q; vector<long long> p(n + 1);\n"
        "  for (int i = 1; i <= n; i++) { cin >> p[i]; p[i] += p[i - 1]; } while (q--) { int l, r; cin >> l >> r; cout << p[r] - p[l - 1] << '\\n'; } }\n",
        "wrong_slow.py": "import sys\nd = list(map(int, sys.stdin.read().split()))\nn, q = d[0], d[1]\na = d[2 : 2 + n]\no = d[2 + n :]\n"
        "for k in range(q):\n    print(sum(a[o[2 * k] - 1 : o[2 * k + 1]]))\n",
    },
    expect={"wrong_slow.py": "time_limit"},
    time_limit=1.0,
)
problem(
    name="lower_bound",
    statement="n q, a sorted list of n integers, then q values x: print the 0-based index of the first element >= x (n if none).",
    inputs=lambda r: (
        ["3 3\n1 3 5\n0\n3\n6\n", "1 1\n7\n7\n"]
        + [
            f"1000 1000\n{' '.join(map(str, sorted(r.randint(-(10**6), 10**6) for _ in range(1000))))}\n"
            + "".join(f"{r.randint(-(10**6), 10**6)}\n" for _ in range(1000))
        ]
    ),
    solutions={
        "correct.py": "import bisect, sys\nd = list(map(int, sys.stdin.read().split()))\nn, q = d[0], d[1]\na = d[2 : 2 + n]\nprint('\\n'.join(str(bisect.bisect_left(a, x)) for x in d[2 + n :]))\n",
        "correct.cpp": CPP_HEAD
        + "int main() { int n, q; cin >> n >> q; vector<int> a(n); for (auto& x : a) cin >> x; while (q--) { int x; cin >> x; cout << lower_bound(a.begin(), a.end(), x) - a.begin() << '\\n'; } }\n",
        "correct.go": 'package main\nimport ("bufio"; "fmt"; "os"; "sort")\nfunc main() { in := bufio.NewReader(os.Stdin); out := bufio.NewWriter(os.Stdout); defer out.Flush()\n'
        "  var n, q int; fmt.Fscan(in, &n, &q); a := make([]int, n); for i := range a { fmt.Fscan(in, &a[i]) }\n"
        "  for ; q > 0; q-- { var x int; fmt.Fscan(in, &x); fmt.Fprintln(out, sort.SearchInts(a, x)) } }\n",
        "wrong_upper.cpp": CPP_HEAD
        + "int main() { int n, q; cin >> n >> q; vector<int> a(n); for (auto& x : a) cin >> x; while (q--) { int x; cin >> x; cout << upper_bound(a.begin(), a.end(), x) - a.begin() << '\\n'; } }\n",
    },
    expect={"wrong_upper.cpp": "wrong_answer"},
)
problem(
    name="balanced_brackets",
    statement="t, then t lines of ()[]{}: print YES if balanced, else NO.",
    inputs=lambda r: (
        ["3\n()\n([)]\n{[]}\n", "2\n(\n)(\n"]
        + [
            "50\n"
            + "".join(
                "".join(r.choice("()[]") for _ in range(2 * r.randint(1, 20))) + "\n" for _ in range(50)
            )
        ]
    ),
    solutions={
        "correct.py": "t = int(input())\nfor _ in range(t):\n    s, st, ok = input().strip(), [], True\n    for c in s:\n        if c in '([{':\n            st.append(c)\n"
        "        elif not st or '([{'[')]}'.index(c)] != st.pop():\n            ok = False\n            break\n    print('YES' if ok and not st else 'NO')\n",
        "correct.cpp": CPP_HEAD
        + "int main() { int t; cin >> t; while (t--) { string s, st; cin >> s; bool ok = true; for (char c : s) { if (c == '(' || c == '[' || c == '{') st += c;\n"
        "  else { char o = c == ')' ? '(' : c == ']' ? '[' : '{'; if (st.empty() || st.back() != o) { ok = false; break; } st.pop_back(); } }\n"
        '  cout << (ok && st.empty() ? "YES" : "NO") << \'\\n\'; } }\n',
        "correct.js": "const l = require('fs').readFileSync(0, 'utf8').split('\\n'); const t = +l[0]; const out = [];\n"
        "for (let i = 1; i <= t; i++) { const st = []; let ok = true; for (const c of l[i].trim()) { if ('([{'.includes(c)) st.push(c);\n"
        "  else if (st.pop() !== '([{'[')]}'.indexOf(c)]) { ok = false; break; } } out.push(ok && !st.length ? 'YES' : 'NO'); }\nconsole.log(out.join('\\n'));\n",
        "wrong_count.py": "t = int(input())\nfor _ in range(t):\n    s = input().strip()\n    print('YES' if s.count('(') == s.count(')') and s.count('[') == s.count(']') and s.count('{') == s.count('}') else 'NO')\n",
    },
    expect={"wrong_count.py": "wrong_answer"},
)
problem(
    name="letter_counts",
    statement="One line of lowercase text: for each letter present, in order, print the letter and its count.",
    inputs=lambda r: [
        "hello\n",
        "a\n",
        "zzz yy x\n",
        "".join(r.choice("abcxyz ") for _ in range(10000)) + "\n",
    ],
    solutions={
        "correct.py": "from collections import Counter\nc = Counter(ch for ch in input() if ch.isalpha())\nfor k in sorted(c):\n    print(k, c[k])\n",
        "correct.cpp": CPP_HEAD
        + "int main() { string s; getline(cin, s); int c[26] = {0}; for (char ch : s) if (ch >= 'a' && ch <= 'z') c[ch - 'a']++; for (int i = 0; i < 26; i++) if (c[i]) cout << char('a' + i) << ' ' << c[i] << '\\n'; }\n",
        "wrong_space.py": "from collections import Counter\nc = Counter(input())\nfor k in sorted(c):\n    print(k, c[k])\n",
    },
    expect={"wrong_space.py": "wrong_answer"},
)
problem(
    name="digit_sum",
    statement="A non-negative integer of up to 10^5 digits: print the sum of its digits.",
    inputs=lambda r: [
        "0\n",
        "12345\n",
        "9" * 100000 + "\n",
        "".join(r.choice("0123456789") for _ in range(50000)) + "\n",
    ],
    solutions={
        "correct.py": "print(sum(map(int, input().strip())))\n",
        "correct.cpp": CPP_HEAD
        + "int main() { string s; cin >> s; long long t = 0; for (char c : s) t += c - '0'; cout << t << endl; }\n",
        "correct.java": "import java.io.*;\npublic class Main { public static void main(String[] a) throws IOException { String s = new BufferedReader(new InputStreamReader(System.in)).readLine().trim();\n"
        "  long t = 0; for (char c : s.toCharArray()) t += c - '0'; System.out.println(t); } }\n",
        "wrong_as_int.cpp": CPP_HEAD
        + "int main() { long long n; cin >> n; long long t = 0; while (n > 0) { t += n % 10; n /= 10; } cout << t << endl; }\n",
    },
    expect={"wrong_as_int.cpp": "wrong_answer"},
)
problem(
    name="power_mod",
    statement="a b m (0 <= a, b <= 10^18, 1 <= m <= 10^9): print a^b mod m.",
    inputs=lambda r: (
        ["2 10 1000\n", "0 0 7\n", "5 0 1\n"]
        + [f"{r.randint(0, 10**18)} {r.randint(0, 10**18)} {r.randint(1, 10**9)}\n" for _ in range(3)]
    ),
    solutions={
        "correct.py": "a, b, m = map(int, input().split())\nprint(pow(a, b, m))\n",
        "correct.cpp": CPP_HEAD
        + "int main() { unsigned long long a, b, m; cin >> a >> b >> m; unsigned long long r = 1 % m; a %= m; while (b) { if (b & 1) r = r * a % m; a = a * a % m; b >>= 1; } cout << r << endl; }\n",
        "correct.go": 'package main\nimport ("fmt"; "math/big")\nfunc main() { a, b, m := new(big.Int), new(big.Int), new(big.Int); fmt.Scan(a, b, m); fmt.Println(new(big.Int).Exp(a, b, m)) }\n',
        "wrong_overflow.cpp": CPP_HEAD
        + "int main() { long long a, b, m; cin >> a >> b >> m; long long r = 1; while (b) { if (b & 1) r = r * a % m; a = a * a % m; b >>= 1; } cout << r << endl; }\n",
    },
    expect={"wrong_overflow.cpp": "wrong_answer"},
)
problem(
    name="longest_increasing",
    statement="n, then n integers (n <= 10^5): print the length of the longest strictly increasing subsequence.",
    inputs=lambda r: ["1\n5\n", "6\n10 9 2 5 3 7\n", "5\n1 1 1 1 1\n"] + lists(r, [40000], 1, 10**9),
    solutions={
        "correct.py": "import bisect, sys\nd = list(map(int, sys.stdin.read().split()))\nt = []\nfor x in d[1:]:\n    i = bisect.bisect_left(t, x)\n    t[i : i + 1] = [x]\nprint(len(t))\n",
        "correct.cpp": CPP_HEAD
        + "int main() { int n; cin >> n; vector<int> t; for (int i = 0; i < n; i++) { int x; cin >> x; auto it = lower_bound(t.begin(), t.end(), x); if (it == t.end()) t.push_back(x); else *it = x; } cout << t.size() << endl; }\n",
        "wrong_quadratic.py": "import sys\nd = list(map(int, sys.stdin.read().split()))\na = d[1:]\nbest = [1] * len(a)\nfor i in range(len(a)):\n    for j in range(i):\n        if a[j] < a[i] and best[j] + 1 > best[i]:\n            best[i] = best[j] + 1\nprint(max(best))\n",
        "wrong_nonstrict.cpp": CPP_HEAD
        + "int main() { int n; cin >> n; vector<int> t; for (int i = 0; i < n; i++) { int x; cin >> x; auto it = upper_bound(t.begin(), t.end(), x); if (it == t.end()) t.push_back(x); else *it = x; } cout << t.size() << endl; }\n",
    },
    expect={"wrong_quadratic.py": "time_limit", "wrong_nonstrict.cpp": "wrong_answer"},
    time_limit=1.0,
)
problem(
    name="knapsack",
    statement="n W, then n lines weight value (n <= 100, W <= 10^4): print the best total value within weight W.",
    inputs=lambda r: (
        ["3 50\n10 60\n20 100\n30 120\n", "1 1\n2 5\n"]
        + ["100 10000\n" + "".join(f"{r.randint(1, 500)} {r.randint(1, 1000)}\n" for _ in range(100))]
    ),
    solutions={
        "correct.py": "import sys\nd = list(map(int, sys.stdin.read().split()))\nn, W = d[0], d[1]\nbest = [0] * (W + 1)\nfor k in range(n):\n    w, v = d[2 + 2 * k], d[3 + 2 * k]\n"
        "    for c in range(W, w - 1, -1):\n        if best[c - w] + v > best[c]:\n            best[c] = best[c - w] + v\nprint(best[W])\n",
        "correct.cpp": CPP_HEAD
        + "int main() { int n, W; cin >> n >> W; vector<long long> b(W + 1); while (n--) { int w; long long v; cin >> w >> v; for (int c = W; c >= w; c--) b[c] = max(b[c], b[c - w] + v); } cout << b[W] << endl; }\n",
        "wrong_greedy.py": "import sys\nd = list(map(int, sys.stdin.read().split()))\nn, W = d[0], d[1]\nitems = sorted(((d[3 + 2 * k] / d[2 + 2 * k], d[2 + 2 * k], d[3 + 2 * k]) for k in range(n)), reverse=True)\n"
        "total = 0\nfor _, w, v in items:\n    if w <= W:\n        W -= w\n        total += v\nprint(total)\n",
        "wrong_memory.cpp": CPP_HEAD
        + "int main() { int n, W; cin >> n >> W; vector<vector<long long>> t(n + 1, vector<long long>(W + 1));\n"
        "  vector<long long> big((size_t)W * 4000, 1); long long s = 0; for (size_t i = 0; i < big.size(); i += 512) s += big[i];\n"
        "  for (int i = 1; i <= n; i++) { int w; long long v; cin >> w >> v; for (int c = 0; c <= W; c++) t[i][c] = max(t[i - 1][c], c >= w ? t[i - 1][c - w] + v : 0); }\n"
        "  cout << t[n][W] + (s < 0) << endl; }\n",
    },
    expect={"wrong_greedy.py": "wrong_answer", "wrong_memory.cpp": "memory_limit"},
)
problem(
    name="grid_path",
    statement="r c, then a grid of . and # from S to T: print the fewest steps (up, down, left, right), or -1.",
    inputs=lambda r: ["1 3\nS.T\n", "3 3\nS#.\n##.\n..T\n", "3 4\nS..#\n.#..\n...T\n", _maze(r, 60, 80)],
    solutions={
        "correct.py": "import sys\nfrom collections import deque\nlines = sys.stdin.read().split()\nr, c = int(lines[0]), int(lines[1])\ng = lines[2 : 2 + r]\n"
        "s = next((i, j) for i in range(r) for j in range(c) if g[i][j] == 'S')\ndist = {s: 0}\nq = deque([s])\nwhile q:\n    i, j = q.popleft()\n"
        "    if g[i][j] == 'T':\n        print(dist[(i, j)])\n        break\n    for a, b in ((i + 1, j), (i - 1, j), (i, j + 1), (i, j - 1)):\n"
        "        if 0 <= a < r and 0 <= b < c and g[a][b] != '#' and (a, b) not in dist:\n            dist[(a, b)] = dist[(i, j)] + 1\n            q.append((a, b))\nelse:\n    print(-1)\n",
        "correct.cpp": CPP_HEAD
        + "#include <queue>\nint main() { int r, c; cin >> r >> c; vector<string> g(r); for (auto& s : g) cin >> s; vector<vector<int>> d(r, vector<int>(c, -1)); queue<pair<int, int>> q;\n"
        "  for (int i = 0; i < r; i++) for (int j = 0; j < c; j++) if (g[i][j] == 'S') { d[i][j] = 0; q.push({i, j}); }\n"
        "  int di[] = {1, -1, 0, 0}, dj[] = {0, 0, 1, -1};\n"
        "  while (!q.empty()) { auto [i, j] = q.front(); q.pop(); if (g[i][j] == 'T') { cout << d[i][j] << endl; return 0; }\n"
        "    for (int k = 0; k < 4; k++) { int a = i + di[k], b = j + dj[k]; if (a >= 0 && a < r && b >= 0 && b < c && g[a][b] != '#' && d[a][b] < 0) { d[a][b] = d[i][j] + 1; q.push({a, b}); } } }\n"
        "  cout << -1 << endl; }\n",
        "wrong_crash.py": "import sys\nlines = sys.stdin.read().split()\nr, c = int(lines[0]), int(lines[1])\ng = lines[2 : 2 + r]\nprint(g[r][c])\n",
    },
    expect={"wrong_crash.py": "runtime_error"},
)
problem(
    name="running_median",
    statement="n, then n integers: after each, print the median so far (the lower one of an even count).",
    inputs=lambda r: ["1\n5\n", "4\n1 2 3 4\n", "5\n5 1 4 2 3\n"] + lists(r, [20000], -(10**6), 10**6),
    solutions={
        "correct.py": "import heapq, sys\nd = list(map(int, sys.stdin.read().split()))\nlo, hi, out = [], [], []\nfor x in d[1:]:\n"
        "    if lo and x > -lo[0]:\n        heapq.heappush(hi, x)\n    else:\n        heapq.heappush(lo, -x)\n"
        "    if len(lo) > len(hi) + 1:\n        heapq.heappush(hi, -heapq.heappop(lo))\n    elif len(hi) > len(lo):\n        heapq.heappush(lo, -heapq.heappop(hi))\n"
        "    out.append(-lo[0])\nprint('\\n'.join(map(str, out)))\n",
        "correct.cpp": CPP_HEAD
        + "#include <queue>\nint main() { ios::sync_with_stdio(false); int n; cin >> n; priority_queue<int> lo; priority_queue<int, vector<int>, greater<int>> hi;\n"
        "  while (n--) { int x; cin >> x; if (!lo.empty() && x > lo.top()) hi.push(x); else lo.push(x);\n"
        "    if (lo.size() > hi.size() + 1) { hi.push(lo.top()); lo.pop(); } else if (hi.size() > lo.size()) { lo.push(hi.top()); hi.pop(); }\n"
        "    cout << lo.top() << '\\n'; } }\n",
        "wrong_upper.py": "import sys\nd = list(map(int, sys.stdin.read().split()))\nseen = []\nfor x in d[1:]:\n    seen.append(x)\n    s = sorted(seen)\n    print(s[len(s) // 2])\n",
    },
    expect={"wrong_upper.py": "wrong_answer"},
)
problem(
    name="caesar",
    statement="k, then one line of text: shift each letter k places forward (wrapping, keeping case); other characters stay.",
    inputs=lambda r: [
        "3\nabc xyz\n",
        "0\nHello, World!\n",
        "25\nThe Quick Brown Fox.\n",
        "13\n" + "".join(r.choice("abcXYZ .,!") for _ in range(3000)) + "\n",
    ],
    solutions={
        "correct.py": "k = int(input())\ns = input()\nprint(''.join(chr((ord(c) - b + k) % 26 + b) if c.isalpha() else c for c in s for b in [65 if c.isupper() else 97]))\n",
        "correct.cpp": CPP_HEAD
        + "int main() { int k; string s; cin >> k; getline(cin, s); getline(cin, s); for (char& c : s) { if (c >= 'a' && c <= 'z') c = 'a' + (c - 'a' + k) % 26; else if (c >= 'A' && c <= 'Z') c = 'A' + (c - 'A' + k) % 26; } cout << s << endl; }\n",
        "correct.js": "const [k, s] = require('fs').readFileSync(0, 'utf8').split('\\n');\nconsole.log([...s].map(c => { const b = c >= 'a' && c <= 'z' ? 97 : c >= 'A' && c <= 'Z' ? 65 : 0;\n"
        "  return b ? String.fromCharCode((c.charCodeAt(0) - b + +k) % 26 + b) : c; }).join(''));\n",
        "wrong_nowrap.py": "k = int(input())\ns = input()\nprint(''.join(chr(ord(c) + k) if c.isalpha() else c for c in s))\n",
    },
    expect={"wrong_nowrap.py": "wrong_answer"},
    checker="exact",
)
problem(
    name="matrix_multiply",
    statement="n, then two n x n integer matrices A and B (n <= 100): print A x B.",
    inputs=lambda r: ["1\n2\n3\n", "2\n1 2\n3 4\n5 6\n7 8\n", _matrices(r, 60)],
    solutions={
        "correct.py": "import sys\nd = list(map(int, sys.stdin.read().split()))\nn = d[0]\na = [d[1 + i * n : 1 + (i + 1) * n] for i in range(n)]\nb = [d[1 + n * n + i * n : 1 + n * n + (i + 1) * n] for i in range(n)]\n"
        "bt = list(zip(*b))\nfor row in a:\n    print(' '.join(str(sum(x * y for x, y in zip(row, col))) for col in bt))\n",
        "correct.cpp": CPP_HEAD
        + "int main() { int n; cin >> n; vector<vector<long long>> a(n, vector<long long>(n)), b = a; for (auto& r : a) for (auto& x : r) cin >> x; for (auto& r : b) for (auto& x : r) cin >> x;\n"
        "  for (int i = 0; i < n; i++) for (int j = 0; j < n; j++) { long long s = 0; for (int k = 0; k < n; k++) s += a[i][k] * b[k][j]; cout << s << (j + 1 < n ? ' ' : '\\n'); } }\n",
        "correct.java": "import java.util.*;\npublic class Main { public static void main(String[] x) { Scanner s = new Scanner(System.in); int n = s.nextInt(); long[][] a = new long[n][n], b = new long[n][n];\n"
        "  for (long[] r : a) for (int j = 0; j < n; j++) r[j] = s.nextLong(); for (long[] r : b) for (int j = 0; j < n; j++) r[j] = s.nextLong(); StringBuilder o = new StringBuilder();\n"
        "  for (int i = 0; i < n; i++) for (int j = 0; j < n; j++) { long t = 0; for (int k = 0; k < n; k++) t += a[i][k] * b[k][j]; o.append(t).append(j + 1 < n ? ' ' : '\\n'); } System.out.print(o); } }\n",
        "wrong_elementwise.py": "import sys\nd = list(map(int, sys.stdin.read().split()))\nn = d[0]\nfor i in range(n):\n    print(' '.join(str(d[1 + i * n + j] * d[1 + n * n + i * n + j]) for j in range(n)))\n",
    },
    expect={"wrong_elementwise.py": "wrong_answer"},
)
problem(
    name="bracket_depth",
    statement="A string of ( and ): print its maximum nesting depth, or -1 if it is not balanced.",
    inputs=lambda r: ["()\n", "(())()\n", ")(\n", "(" * 50000 + ")" * 50000 + "\n", "((\n"],
    solutions={
        "correct.py": "s = input().strip()\nd = m = 0\nfor c in s:\n    d += 1 if c == '(' else -1\n    if d < 0:\n        break\n    m = max(m, d)\nprint(m if d == 0 else -1)\n",
        "correct.cpp": CPP_HEAD
        + "int main() { string s; cin >> s; int d = 0, m = 0; for (char c : s) { d += c == '(' ? 1 : -1; if (d < 0) break; m = max(m, d); } cout << (d == 0 ? m : -1) << endl; }\n",
        "wrong_exit_code.cpp": CPP_HEAD
        + "int main() { string s; cin >> s; int d = 0, m = 0; for (char c : s) { d += c == '(' ? 1 : -1; if (d < 0) break; m = max(m, d); } cout << (d == 0 ? m : -1) << endl; return d; }\n",
    },
    expect={"wrong_exit_code.cpp": "runtime_error"},
)
problem(
    name="anagram_groups",
    statement="n, then n words: print the number of groups of words that are anagrams of each other.",
    inputs=lambda r: (
        ["3\nabc\nbca\nxyz\n", "1\na\n", "4\nab\nba\nab\nc\n"]
        + ["5000\n" + "".join("".join(r.sample("abcde", 3)) + "\n" for _ in range(5000))]
    ),
    solutions={
        "correct.py": "import sys\nd = sys.stdin.read().split()\nprint(len({''.join(sorted(w)) for w in d[1:]}))\n",
        "correct.cpp": CPP_HEAD
        + "#include <set>\nint main() { int n; cin >> n; set<string> g; while (n--) { string w; cin >> w; sort(w.begin(), w.end()); g.insert(w); } cout << g.size() << endl; }\n",
        "correct.go": 'package main\nimport ("bufio"; "fmt"; "os"; "sort"; "strings")\nfunc main() { in := bufio.NewReader(os.Stdin); var n int; fmt.Fscan(in, &n); g := map[string]bool{}\n'
        '  for i := 0; i < n; i++ { var w string; fmt.Fscan(in, &w); c := strings.Split(w, ""); sort.Strings(c); g[strings.Join(c, "")] = true }; fmt.Println(len(g)) }\n',
        "wrong_distinct.py": "import sys\nd = sys.stdin.read().split()\nprint(len(set(d[1:])))\n",
    },
    expect={"wrong_distinct.py": "wrong_answer"},
)


def _maze(r: random.Random, rows: int, cols: int) -> str:
    grid = [["#" if r.random() < 0.25 else "." for _ in range(cols)] for _ in range(rows)]
    grid[0][0], grid[rows - 1][cols - 1] = "S", "T"
    return f"{rows} {cols}\n" + "".join("".join(row) + "\n" for row in grid)


def _matrices(r: random.Random, n: int) -> str:
    rows = [ints(r, n, -100, 100) for _ in range(2 * n)]
    return f"{n}\n" + "\n".join(rows) + "\n"

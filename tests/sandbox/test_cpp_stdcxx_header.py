"""The second precompiled C++ header (``_toolchains.CPP_STDCXX_HEADER``): a candidate whose
first line includes <bits/stdc++.h> is compiled after a header that holds it already, so
g++ reads no standard header from source; any other candidate gets the plain one, so no
candidate sees a name it did not include."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from assay.sandbox import Call, SandboxPool, get_language
from assay.sandbox import _toolchains as toolchains
from assay.sandbox.harness import build

fixtures = sys.modules["assay_tests_sandbox_fixtures"]  # tests/_sandbox_fixtures.py

pytestmark = [
    pytest.mark.filterwarnings("ignore::assay.sandbox.SandboxIsolationWarning"),
    pytest.mark.toolchains,
]

CPP = get_language("cpp")
OPTIONS = {"cpp_header": "/h/assay.hpp", "cpp_header_stdcxx": "/h/assay_stdcxx.hpp"}
# std::bitset: declared by <bits/stdc++.h>, by no header assay.hpp includes
BITS = "int bits(int x) {\n    return (int)std::bitset<8>(x).count();\n}\n"


@pytest.mark.parametrize(
    ("code", "header"),
    [
        ("#include <bits/stdc++.h>\n" + BITS, "/h/assay_stdcxx.hpp"),
        ("\n  #  include<bits/stdc++.h>  \r\nint f();\n", "/h/assay_stdcxx.hpp"),
        ("#include <bits/stdc++.h>", "/h/assay_stdcxx.hpp"),
        # anything before it could change what the header declares: the plain header
        ("#define _GLIBCXX_DEBUG\n#include <bits/stdc++.h>\n", "/h/assay.hpp"),
        ("// a comment \\\n#include <bits/stdc++.h>\n", "/h/assay.hpp"),
        ("#include <bits/stdc++.h> \\\n#define X\n", "/h/assay.hpp"),
        ("#include <vector>\n#include <bits/stdc++.h>\n", "/h/assay.hpp"),
        ("#include <bits/stdc++.hpp>\n", "/h/assay.hpp"),
        (BITS, "/h/assay.hpp"),
    ],
)
def test_only_a_candidate_including_every_header_first_gets_the_header_holding_them(
    code: str, header: str
) -> None:
    assert build.cpp_candidate_header(code, OPTIONS) == header


def test_without_the_prebuilt_headers_the_source_header_is_read() -> None:
    header = build.cpp_candidate_header("#include <bits/stdc++.h>\n", {})
    assert header == str(Path(build.HERE) / "cpp" / "assay.hpp")


def test_the_parent_precompiles_both_headers_and_g_plus_plus_uses_the_second(tmp_path: Path) -> None:
    """g++ -H marks a precompiled header it used with '!'; -Winvalid-pch says why one was
    not (other flags, another compiler), which would mean reading every header again."""
    toolchains.prepare("cpp")
    options = json.loads(toolchains.compile_options(None, ""))  # in place, as rlimit sees it
    header = Path(options["cpp_header_stdcxx"])
    assert header.with_name(header.name + ".gch").is_file(), header
    assert Path(options["cpp_header"]).with_name("assay.hpp.gch").is_file()
    source = tmp_path / "solution.cpp"
    source.write_text("#include <bits/stdc++.h>\n" + BITS + "int main() { return bits(3) - 2; }\n")
    argv = [options["cxx"], *toolchains.CPP_FLAGS, "-Winvalid-pch", "-H", "-include", str(header)]
    done = subprocess.run(
        [*argv, "-o", str(tmp_path / "program"), str(source)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert f"! {header}.gch" in done.stderr.splitlines(), done.stderr[:2000]
    assert "invalid" not in done.stderr
    assert subprocess.run([str(tmp_path / "program")]).returncode == 0


@pytest.mark.parametrize("backend", fixtures.BACKENDS)
def test_a_candidate_sees_the_names_it_included_and_no_more(make_pool: Any, backend: str) -> None:
    pool: SandboxPool = make_pool(backend)
    included = pool.run_function(CPP, "#include <bits/stdc++.h>\n" + BITS, "bits", [Call((7,))], timeout=60)
    assert included.load_failure is None, included.load_failure
    assert included.outcomes[0].ok and included.outcomes[0].value == 3, included.outcomes[0]
    # the same code without the include does not compile: bitset is not declared
    bare = pool.run_function(CPP, BITS, "bits", [Call((7,))], timeout=60)
    assert bare.load_failure is not None and "bitset" in str(bare.load_failure), bare.load_failure


def test_a_library_without_the_header_keeps_the_plain_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(libc++ has no <bits/stdc++.h>.) Its precompile fails: assay.hpp's stays in use,
    and no candidate is handed a header that is not there."""
    monkeypatch.setenv("ASSAY_TOOLCHAIN_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(
        toolchains, "CPP_STDCXX_HEADER", '#include "assay.hpp"\n#include <no/such/header.h>\n'
    )
    monkeypatch.setattr(toolchains, "_prebuilt", {})
    monkeypatch.setattr(toolchains, "_prepared", set())
    toolchains.cache_root.cache_clear()
    try:
        toolchains.prepare("cpp")
        options = json.loads(toolchains.compile_options(None, ""))
    finally:
        toolchains.cache_root.cache_clear()
    assert options["cpp_header_stdcxx"] == ""
    assert Path(options["cpp_header"]).with_name("assay.hpp.gch").is_file()
    assert build.cpp_candidate_header("#include <bits/stdc++.h>\n", options) == options["cpp_header"]

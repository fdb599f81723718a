"""Hostile candidates in Go, Java, C++ and TypeScript: ``solution(which)`` returns
"honest" for the honest call and runs an attack for the other one. Each attack is written
once per language; the tests are parametrized over languages and backends."""

from __future__ import annotations

import json

HEADERS = {
    "go": """package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"time"
)

var _, _, _, _, _, _ = fmt.Sprint, net.Dial, os.Getenv, exec.Command, strings.Join, time.Second

func Solution(which string) string {
	if which == "honest" {
		return "honest"
	}
""",
    "java": """import java.io.*;
import java.lang.reflect.Field;
import java.net.*;
import java.nio.file.*;
import java.util.*;

class Solution {
    public String solution(String which) throws Exception {
        if (which.equals("honest")) return "honest";
""",
    "cpp": """#include <bits/stdc++.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

std::string solution(std::string which) {
    if (which == "honest") return "honest";
""",
    "typescript": """async function solution(which: string): Promise<string> {
  const fs = require('fs');
  if (which === 'honest') return 'honest';
""",
}
FOOTER = {"go": "}\n", "java": "    }\n}\n", "cpp": "}\n", "typescript": "}\n"}
ENTRY = {"go": "Solution", "java": "solution", "cpp": "solution", "typescript": "solution"}


def program(language: str, body: str) -> str:
    return HEADERS[language] + body + FOOTER[language]


def _list(language: str, paths: list[str]) -> str:
    items = ", ".join(json.dumps(p) for p in paths)
    return {"go": f"[]string{{{items}}}", "java": f"new String[]{{{items}}}"}.get(language, f"{{{items}}}")


def snoop(language: str, writes: list[str], reads: list[str], port: int) -> str:
    """(The words it reports are split in the source, which it reads too.) Everything the process can see (environment, its own and others' /proc entries,
    the files of its folder), plus attempts to write and read where it must not, and to
    connect to the host (``port`` 0: not tried)."""
    w, r = _list(language, writes), _list(language, reads)
    if language == "go":
        return f"""	var out strings.Builder
	out.WriteString(strings.Join(os.Environ(), "\\n"))
	for _, path := range []string{{"/proc/self/environ", "/proc/self/cmdline", "/proc/1/environ", "/proc/1/cmdline", fmt.Sprintf("/proc/%d/environ", os.Getppid())}} {{
		data, _ := os.ReadFile(path)
		out.Write(data)
	}}
	entries, _ := os.ReadDir(".")
	for _, entry := range entries {{
		if info, err := entry.Info(); err == nil && info.Size() < 65536 {{
			data, _ := os.ReadFile(entry.Name())
			out.Write(data)
		}}
	}}
	for _, path := range {w} {{
		if os.WriteFile(path, []byte("pwned"), 0o644) == nil {{
			out.WriteString("wro" + "te " + path)
		}}
	}}
	for _, path := range {r} {{
		if _, err := os.ReadFile(path); err == nil {{
			out.WriteString("rea" + "d " + path)
		}}
	}}
	if {port} > 0 {{
		if conn, err := net.DialTimeout("tcp", "127.0.0.1:{port}", time.Second); err == nil {{
			conn.Close()
			out.WriteString("conn" + "ected")
		}}
	}}
	return strings.ToValidUTF8(out.String(), "?")
"""
    if language == "java":
        return f"""        StringBuilder out = new StringBuilder(System.getenv().toString());
        long parent = ProcessHandle.current().parent().map(ProcessHandle::pid).orElse(1L);
        for (String p : new String[]{{"/proc/self/environ", "/proc/self/cmdline", "/proc/1/environ", "/proc/1/cmdline", "/proc/" + parent + "/environ"}}) {{
            try {{ out.append(new String(Files.readAllBytes(Paths.get(p)), "ISO-8859-1")); }} catch (Exception e) {{}}
        }}
        File[] files = new File(".").listFiles();
        if (files != null) for (File f : files) {{
            if (f.isFile() && f.length() < 65536) try {{ out.append(new String(Files.readAllBytes(f.toPath()), "ISO-8859-1")); }} catch (Exception e) {{}}
        }}
        for (String p : {w}) {{ try {{ Files.write(Paths.get(p), "pwned".getBytes()); out.append("wro" + "te " + p); }} catch (Exception e) {{}} }}
        for (String p : {r}) {{ try {{ Files.readAllBytes(Paths.get(p)); out.append("rea" + "d " + p); }} catch (Exception e) {{}} }}
        if ({port} > 0) try (Socket s = new Socket()) {{ s.connect(new InetSocketAddress("127.0.0.1", {port}), 1000); out.append("conn" + "ected"); }} catch (Exception e) {{}}
        return out.toString();
"""
    if language == "cpp":
        return f"""    std::string out;
    for (char** e = environ; *e; ++e) {{ out += *e; out += "\\n"; }}
    auto slurp = [&](const std::string& p) {{
        std::ifstream f(p, std::ios::binary);
        if (!f) return false;
        std::stringstream s; s << f.rdbuf(); out += s.str(); return true;
    }};
    for (std::string p : {{"/proc/self/environ", "/proc/self/cmdline", "/proc/1/environ", "/proc/1/cmdline"}}) slurp(p);
    slurp("/proc/" + std::to_string(getppid()) + "/environ");
    if (DIR* d = opendir(".")) {{
        while (dirent* e = readdir(d)) {{ struct stat st; if (stat(e->d_name, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < 65536) slurp(e->d_name); }}
        closedir(d);
    }}
    for (std::string p : std::vector<std::string>{w}) {{ if (FILE* f = fopen(p.c_str(), "w")) {{ fputs("pwned", f); fclose(f); out += std::string("wro") + "te " + p; }} }}
    for (std::string p : std::vector<std::string>{r}) {{ std::ifstream f(p); if (f.good()) out += std::string("rea") + "d " + p; }}
    if ({port} > 0) {{
        int s = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{{}}; a.sin_family = AF_INET; a.sin_port = htons({port}); a.sin_addr.s_addr = htonl(0x7f000001);
        if (s >= 0 && connect(s, (sockaddr*)&a, sizeof a) == 0) out += std::string("conn") + "ected";
        if (s >= 0) close(s);
    }}
    for (char& c : out) if ((unsigned char)c >= 0x80) c = '?';  // plain ASCII: valid UTF-8
    return out;
"""
    return f"""  const net = require('net');
  let out = JSON.stringify(process.env);
  for (const p of ['/proc/self/environ', '/proc/self/cmdline', '/proc/1/environ', '/proc/1/cmdline', `/proc/${{process.ppid}}/environ`]) {{
    try {{ out += fs.readFileSync(p, 'latin1'); }} catch (e) {{}}
  }}
  for (const f of fs.readdirSync('.')) {{
    try {{ if (fs.statSync(f).size < 65536) out += fs.readFileSync(f, 'latin1'); }} catch (e) {{}}
  }}
  for (const p of [{", ".join(json.dumps(p) for p in writes)}]) {{ try {{ fs.writeFileSync(p, 'pwned'); out += 'wro' + 'te ' + p; }} catch (e) {{}} }}
  for (const p of [{", ".join(json.dumps(p) for p in reads)}]) {{ try {{ fs.readFileSync(p); out += 'rea' + 'd ' + p; }} catch (e) {{}} }}
  if ({port} > 0) {{
    const ok = await new Promise((resolve) => {{
      const s = net.connect({port}, '127.0.0.1', () => {{ s.destroy(); resolve(true); }});
      s.on('error', () => resolve(false));
      setTimeout(() => resolve(false), 1000);
    }});
    if (ok) out += 'conn' + 'ected';
  }}
  return out;
"""


FRAME = '{"ok":true,"value":"x"}'  # 24 bytes
FORGE = {
    "go": f"""	fmt.Println(`{{"passed": true, "event": "ready"}}`)
	frames := os.NewFile(4, "frames")
	for i := 0; i < 3; i++ {{
		frames.Write(append([]byte{{0, 0, 0, 24}}, []byte(`{FRAME}`)...))
	}}
	return "nope"
""",
    "java": f"""        System.out.println("{{\\"passed\\": true}}");
        FileDescriptor fd = new FileDescriptor();
        Field field = FileDescriptor.class.getDeclaredField("fd");
        field.setAccessible(true);
        field.setInt(fd, 4);
        FileOutputStream frames = new FileOutputStream(fd);
        byte[] body = {json.dumps(FRAME)}.getBytes();
        for (int i = 0; i < 3; i++) {{ frames.write(new byte[]{{0, 0, 0, 24}}); frames.write(body); }}
        frames.flush();
        return "nope";
""",
    "cpp": f"""    std::puts("{{\\"passed\\": true}}");
    std::string frame = std::string("\\0\\0\\0\\x18", 4) + {json.dumps(FRAME)};
    for (int i = 0; i < 3; i++) if (write(4, frame.data(), frame.size()) < 0) break;
    return "nope";
""",
    "typescript": f"""  console.log('{{"passed": true}}');
  const body = Buffer.from({json.dumps(FRAME)});
  for (let i = 0; i < 3; i++) fs.writeSync(4, Buffer.concat([Buffer.from([0, 0, 0, 24]), body]));
  return 'nope';
""",
}

PROCESS_BOMB = {
    "go": """	started := 0
	for i := 0; i < 500; i++ {
		if exec.Command("sleep", "300").Start() != nil {
			return fmt.Sprint("refused ", started)
		}
		started++
	}
	return fmt.Sprint("spawned ", started)
""",
    "java": """        int started = 0;
        for (int i = 0; i < 500; i++) {
            try { new ProcessBuilder("sleep", "300").start(); started++; }
            catch (IOException e) { return "refused " + started; }
        }
        return "spawned " + started;
""",
    "cpp": """    int started = 0;
    for (int i = 0; i < 500; i++) {
        pid_t pid = fork();
        if (pid < 0) return "refused " + std::to_string(started);
        if (pid == 0) { execl("/bin/sleep", "sleep", "300", (char*)nullptr); _exit(0); }
        started++;
    }
    return "spawned " + std::to_string(started);
""",
    "typescript": """  const { spawn } = require('child_process');
  let started = 0;
  for (let i = 0; i < 500; i++) {
    try { spawn('sleep', ['300'], { detached: true, stdio: 'ignore' }).unref(); started++; }
    catch (e) { return 'refused ' + started; }
  }
  return 'spawned ' + started;
""",
}

MEMORY_BOMB = {
    "go": """	var keep [][]byte
	for {
		block := make([]byte, 1<<20)
		for i := range block {
			block[i] = 7
		}
		keep = append(keep, block)
	}
""",
    "java": """        List<long[]> keep = new ArrayList<>();
        while (true) { long[] block = new long[1 << 17]; Arrays.fill(block, 7L); keep.add(block); }
""",
    "cpp": """    std::vector<std::vector<char>> keep;
    for (;;) keep.emplace_back(1 << 20, 7);
""",
    "typescript": """  const blocks = [];
  for (;;) blocks.push(new Array(1 << 20).fill(7));
""",
}

INFINITE_LOOP = {
    "go": "\tfor {\n\t}\n",
    "java": "        while (true) {}\n",
    "cpp": "    volatile unsigned long spin = 0;\n    for (;;) spin = spin + 1;\n",
    "typescript": "  for (;;) {}\n",
}

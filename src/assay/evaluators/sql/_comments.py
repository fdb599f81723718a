"""Finds comments in SQL text, outside string literals and quoted names.

Comment truncation is the injection pattern that cuts off the rest of a query
(``name = 'admin'--' AND password = ...``). A SQL parser drops comments, so this
small lexer reads the raw text. It is a heuristic that raises a flag; it never
decides whether a query runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_DOLLAR_TAG = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)?\$")
_IDENTIFIER_CHAR = re.compile(r"[A-Za-z0-9_]")


@dataclass
class CommentScan:
    comment_count: int = 0
    unterminated_block: bool = False
    # A comment glued to a closing quote, or one that holds a quote: text cut off by a comment.
    truncation: bool = False
    comments: list[str] = field(default_factory=list)


def scan_comments(sql: str, dialect: str | None = None) -> CommentScan:
    return _Scanner(sql, dialect or "").run()


class _Scanner:
    def __init__(self, sql: str, dialect: str) -> None:
        self.sql = sql
        self.dialect = dialect.lower()
        self.index = 0
        self.string_ended_at = -1  # index just past the last closing quote of a string literal
        self.scan = CommentScan()

    def run(self) -> CommentScan:
        while self.index < len(self.sql):
            self._step()
        return self.scan

    def _step(self) -> None:
        sql, i = self.sql, self.index
        char, pair = sql[i], sql[i : i + 2]
        if pair == "--" or (char == "#" and self.dialect == "mysql"):
            self._line_comment(i)
        elif pair == "/*":
            self._block_comment(i)
        elif char == "'":
            self.index = self._skip_quoted(i, "'", backslash=self._backslash_escapes(i))
            self.string_ended_at = self.index
        elif char in '"`':
            self.index = self._skip_quoted(i, char, backslash=False)
        elif char == "[" and self.dialect in ("sqlite", "tsql"):
            end = sql.find("]", i + 1)
            self.index = len(sql) if end < 0 else end + 1
        elif char == "$" and self.dialect in ("postgres", "postgresql") and self._dollar_quote(i):
            pass
        else:
            self.index = i + 1

    def _backslash_escapes(self, quote_at: int) -> bool:
        if self.dialect == "mysql":
            return True
        prefix = self.sql[quote_at - 1 : quote_at]
        before = self.sql[quote_at - 2 : quote_at - 1]
        return prefix in ("E", "e") and not _IDENTIFIER_CHAR.match(before or " ")

    def _skip_quoted(self, start: int, quote: str, backslash: bool) -> int:
        i = start + 1
        while i < len(self.sql):
            char = self.sql[i]
            if backslash and char == "\\":
                i += 2
                continue
            if char == quote:
                if self.sql[i + 1 : i + 2] == quote:  # doubled quote is an escaped quote
                    i += 2
                    continue
                return i + 1
            i += 1
        return len(self.sql)

    def _dollar_quote(self, start: int) -> bool:
        if start > 0 and _IDENTIFIER_CHAR.match(self.sql[start - 1]):
            return False  # part of a name such as a$b
        tag = _DOLLAR_TAG.match(self.sql, start)
        if tag is None:
            return False
        end = self.sql.find(tag.group(0), tag.end())
        self.index = len(self.sql) if end < 0 else end + len(tag.group(0))
        self.string_ended_at = self.index
        return True

    def _line_comment(self, start: int) -> None:
        end = self.sql.find("\n", start)
        end = len(self.sql) if end < 0 else end
        self._record(start, self.sql[start:end])
        self.index = end

    def _block_comment(self, start: int) -> None:
        nested = self.dialect in ("postgres", "postgresql")
        depth, i = 0, start
        while i < len(self.sql):
            pair = self.sql[i : i + 2]
            if pair == "/*" and (nested or depth == 0):
                depth, i = depth + 1, i + 2
            elif pair == "*/":
                depth, i = depth - 1, i + 2
                if depth == 0:
                    break
            else:
                i += 1
        if depth > 0:
            self.scan.unterminated_block = True
            self.scan.truncation = True
        self._record(start, self.sql[start:i])
        self.index = i

    def _record(self, start: int, text: str) -> None:
        self.scan.comment_count += 1
        self.scan.comments.append(text)
        if start == self.string_ended_at or "'" in text:
            self.scan.truncation = True

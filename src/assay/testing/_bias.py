"""Injected judge biases for the fake server: a judge that favours the first answer shown
(position bias) or the longer one (verbosity bias), on a share of its pairwise verdicts.

Which verdicts are bent is drawn from a hash of the request and the seed, so one request
always gets one answer (a re-run, a cache check, any scheduling) and the share is exact
in expectation.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

__all__ = ["Bias"]

_A, _B = "[Answer A]:", "[Answer B]:"


@dataclass(frozen=True)
class Bias:
    position: float = 0.0  # share of pairwise verdicts turned to "A", whatever A is
    verbosity: float = 0.0  # share turned to the longer answer
    seed: int = 0

    def __post_init__(self) -> None:
        for name, share in (("position", self.position), ("verbosity", self.verbosity)):
            if not 0 <= share <= 1:
                raise ValueError(f"the injected {name} bias is a share in [0, 1], got {share}")

    def apply(self, prompt: str, reply: str) -> str:
        """``reply`` with its ``preference`` bent, when the prompt is a pairwise one."""
        if (not self.position and not self.verbosity) or _A not in prompt or _B not in prompt:
            return reply
        try:
            decoded = json.loads(reply)
        except ValueError:
            return reply
        if not isinstance(decoded, dict) or "preference" not in decoded:
            return reply
        draw = self._draw(prompt)
        if draw < self.position:
            decoded["preference"] = "A"
        elif draw < self.position + self.verbosity:
            answer_a, answer_b = _answers(prompt)
            decoded["preference"] = "A" if len(answer_a) >= len(answer_b) else "B"
        return json.dumps(decoded, ensure_ascii=False)

    def _draw(self, prompt: str) -> float:
        digest = hashlib.sha256(f"{self.seed}:{prompt}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64


def _answers(prompt: str) -> tuple[str, str]:
    after_a = prompt.split(_A, 1)[1]
    answer_a, after_b = after_a.split(_B, 1)
    return answer_a.split("***")[0].strip(), after_b.split("***")[0].strip()

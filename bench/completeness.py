"""Completeness scorer throughput on ~50-word input/output pairs, English and Chinese.

    .venv/bin/python bench/completeness.py [--items N] [--mastra DIR]

Prints items per second (best of 3 passes over N distinct pairs, after one warm-up call),
the first call's cost (lexicon and dictionary loading), and, with ``--mastra DIR`` (a
directory where ``npm install @mastra/evals @mastra/core`` was run), the same figures for
Mastra's reference scorer on the same pairs, plus both scorers' scores on seed 001's cases.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import tempfile
import time
from pathlib import Path

from assay.scorers import create_completeness_scorer

ENGLISH = """Photosynthesis converts light energy into chemical energy stored in glucose molecules.
Remote work gives employees flexibility but can make collaboration harder for distributed teams.
Renewable energy sources such as wind and solar have a lower environmental impact than coal.
A database index speeds up read queries but slows down writes and uses extra storage space.
Vaccines train the immune system to recognize pathogens without causing the disease itself.
Inflation reduces purchasing power when consumer prices rise faster than average wages.
Mitochondria produce most of the cell's supply of adenosine triphosphate through respiration.
Machine learning models need representative training data in order to generalize well.
Climate change increases the frequency of extreme weather events such as floods and droughts.
A balanced diet includes vegetables, whole grains, lean proteins and healthy fats every day.
The French Revolution transformed political power and the social structure of Europe.
Encryption protects sensitive information by making it unreadable without the right key.
The getUserName function reads the user_id from the session and queries the accounts table.
Interest rates set by central banks influence borrowing costs for households and companies.
Plate tectonics explains earthquakes, volcanoes and the slow drift of the continents.
Antibiotics kill bacteria or stop their growth but they do not work against viruses.
Supply chains became fragile when factories closed and shipping containers ran short.
Neural networks learn weights by backpropagating the gradient of a loss function.
Urban planners design public transit, housing density and green spaces for growing cities.
Caching frequently requested pages reduces latency and lowers the load on origin servers."""

CHINESE = """光合作用是植物利用光能把二氧化碳和水转化为葡萄糖和氧气的过程。
远程办公让员工更灵活，但也让团队协作和管理变得更加困难。
可再生能源如风能和太阳能的环境影响远低于煤炭和石油。
数据库索引能够加快查询速度，但会降低写入性能并占用额外存储空间。
疫苗训练免疫系统识别病原体，而不会让人真正患上疾病。
通货膨胀会在物价上涨快于工资增长时降低居民的购买力。
机器学习模型需要有代表性的训练数据才能很好地泛化。
气候变化增加了洪水和干旱等极端天气事件发生的频率。
中央银行设定的利率会影响家庭和企业的借贷成本。
缓存经常访问的页面可以降低延迟并减轻源服务器的负载。"""

SEED_CASES = [
    (
        "Explain the process of photosynthesis, including the inputs, outputs, and stages involved.",
        "Photosynthesis is the process by which plants turn light into chemical energy. Its inputs are "
        "carbon dioxide, water and sunlight; its outputs are glucose and oxygen. It runs in two stages: "
        "the light-dependent reactions and the Calvin cycle.",
    ),
    (
        "What are the benefits and drawbacks of remote work for both employees and employers?",
        "Remote work benefits employees through flexibility and no commute, and employers save on "
        "office space. The drawbacks: employees can feel isolated, and employers find collaboration "
        "harder to manage.",
    ),
    (
        "Compare renewable and non-renewable energy sources in terms of cost, environmental impact, "
        "and sustainability.",
        "Renewable energy sources such as solar and wind now cost less per megawatt-hour than "
        "non-renewable coal and gas. Their environmental impact is far lower, and their "
        "sustainability is far better: sun and wind do not run out, fossil fuels do.",
    ),
    (
        "What are the benefits and drawbacks of remote work for both employees and employers?",
        "Working from home gives employees flexibility and saves them the commute.",
    ),
    (
        "What are the benefits and drawbacks of remote work for both employees and employers?",
        "Photosynthesis converts sunlight into chemical energy stored in glucose.",
    ),
    (
        "请解释光合作用的过程，包括输入、输出和涉及的阶段。",
        "光合作用是植物利用光能把二氧化碳和水转化为葡萄糖和氧气的过程。输入是光、水和二氧化碳，"
        "输出是葡萄糖和氧气。它分为光反应和暗反应两个阶段。",
    ),
    ("请解释光合作用的过程，包括输入、输出和涉及的阶段。", "今天股市上涨，投资者情绪高涨。"),
]

MASTRA_SCRIPT = r"""
const { createRequire } = require('module');
const fs = require('fs');
const [dir, file, passes] = process.argv.slice(2);
const load = createRequire(dir.replace(/\/?$/, '/'));
const { createCompletenessScorer } = load('@mastra/evals/scorers/code');
const scorer = createCompletenessScorer();
const data = JSON.parse(fs.readFileSync(file, 'utf8'));
const score = (input, output) => scorer.run({
  input: { inputMessages: [{ role: 'user', content: input }] },
  output: [{ role: 'assistant', content: output }],
});
(async () => {
  let start = performance.now();
  await score('warm up', 'warm up');
  const first = (performance.now() - start) / 1000;
  const rates = {};
  for (const [language, pairs] of Object.entries(data.pairs)) {
    let best = 0;
    for (let pass = 0; pass < Number(passes); pass++) {
      start = performance.now();
      for (const [input, output] of pairs) await score(input, output);
      best = Math.max(best, pairs.length / ((performance.now() - start) / 1000));
    }
    rates[language] = best;
  }
  const seed = [];
  for (const [input, output] of data.seed) seed.push((await score(input, output)).score);
  console.log(JSON.stringify({ first, rates, seed }));
})();
"""


def make_pairs(
    corpus: str, count: int, size: int, rng: random.Random, chinese: bool
) -> list[tuple[str, str]]:
    """``count`` distinct (input, output) pairs of about ``size`` words (Chinese: 2 chars a word)."""
    sentences = corpus.splitlines()

    def text() -> str:
        chosen: list[str] = []
        while (len("".join(chosen)) / 2 if chinese else len(" ".join(chosen).split())) < size:
            chosen.append(rng.choice(sentences))
        if chinese:
            return "".join(chosen)[: size * 2]
        return " ".join(" ".join(chosen).split()[:size])

    return [(text(), text()) for _ in range(count)]


def measure(pairs: list[tuple[str, str]], passes: int = 3) -> float:
    scorer = create_completeness_scorer()
    best = 0.0
    for _ in range(passes):
        start = time.perf_counter()
        for question, answer in pairs:
            scorer.run(input=question, output=answer)
        best = max(best, len(pairs) / (time.perf_counter() - start))
    return best


def run_mastra(directory: Path, pairs: dict[str, list[tuple[str, str]]]) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as scratch:
        data = Path(scratch) / "pairs.json"
        data.write_text(json.dumps({"pairs": pairs, "seed": SEED_CASES}), encoding="utf-8")
        script = Path(scratch) / "mastra_completeness.cjs"
        script.write_text(MASTRA_SCRIPT, encoding="utf-8")
        done = subprocess.run(
            ["node", str(script), str(directory.resolve()), str(data), "3"],
            capture_output=True,
            text=True,
            check=True,
            timeout=3600,
        )
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--mastra", type=Path, help="a directory with @mastra/evals installed")
    args = parser.parse_args()

    rng = random.Random(2026)
    pairs = {
        "english": make_pairs(ENGLISH, args.items, 50, rng, chinese=False),
        "chinese": make_pairs(CHINESE, args.items, 50, rng, chinese=True),
    }
    start = time.perf_counter()
    create_completeness_scorer().run(input="首次调用 loads lexicons", output="and the jieba dictionary")
    first = time.perf_counter() - start
    print(f"assay completeness: first call {first:.2f} s (lemminflect lexicon, jieba dictionary)")
    for language, items in pairs.items():
        print(
            f"assay completeness, {language}, {len(items)} pairs of ~50 words: {measure(items):,.0f} items/s"
        )
    ours = [create_completeness_scorer().run(input=q, output=a).score for q, a in SEED_CASES]

    if args.mastra is None:
        print("seed 001 cases, assay:  " + " ".join(f"{s:.2f}" for s in ours))
        return
    mastra = run_mastra(args.mastra, pairs)
    rates = mastra["rates"]
    assert isinstance(rates, dict)
    print(f"mastra completeness: first call {mastra['first']:.2f} s")
    for language, rate in rates.items():
        print(
            f"mastra completeness, {language}, {len(pairs[language])} pairs of ~50 words: {rate:,.0f} items/s"
        )
    seed = mastra["seed"]
    assert isinstance(seed, list)
    print("seed 001 cases (full x3, partial, off-topic, Chinese full, Chinese off-topic):")
    print("  assay:  " + " ".join(f"{s:.2f}" for s in ours))
    print("  mastra: " + " ".join(f"{s:.2f}" for s in seed))


if __name__ == "__main__":
    main()

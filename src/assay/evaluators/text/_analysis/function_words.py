"""Words that carry no required content: closed-class function words and prompt framing.

A full answer to "What are the benefits of X?" says nothing about "what", "are" or "the",
and an answer to "Explain X" rarely says "explain"; counting them as required elements is
why the reference scores full answers about 0.6. These lists are closed classes
(determiners, pronouns, prepositions, conjunctions, auxiliaries, particles, question words),
plus the imperative verbs and fixed phrases that frame a request. Lemmas are listed, so
"is"/"was" are covered by "be" when a lemma is known.
"""

from __future__ import annotations

import regex

_ENGLISH = """
a an the this that these those such another other others each every either neither both all
any some no none many much more most less least few fewer fewest several enough own same
i me my mine myself we us our ours ourselves you your yours yourself yourselves he him his
himself she her hers herself it its itself they them their theirs themselves one ones
someone somebody something anyone anybody anything everyone everybody everything nobody
nothing whoever whatever whichever
what which who whom whose when where why how whether
be am is are was were been being have has had having do does did doing done
will would shall should can could may might must ought need dare
of in on at by for with from to into onto upon about above below under over between among
through during before after since until till against across along around behind beyond
within without toward towards via per than like unlike near off out up down past throughout
inside outside beside besides despite except regarding concerning including
and or but nor so yet because although though while whereas if unless then else also too
as just only even still already again ever never not very quite rather really
away forth
here there now thus hence therefore however moreover furthermore otherwise instead
etc eg ie vs
please thanks thank yes ok okay
don't doesn't didn't isn't aren't wasn't weren't won't wouldn't can't cannot couldn't
shouldn't mustn't hasn't haven't hadn't i'm i've i'd i'll you're you've you'd you'll
he's she's it's we're we've we'd we'll they're they've they'd they'll that's there's
what's who's let's
"""

# imperative verbs and nouns that frame a request rather than name its content
_ENGLISH_PROMPT = """
explain describe compare contrast discuss tell give provide summarize summarise outline
define show elaborate illustrate mention clarify identify enumerate write answer respond
know want like include involve consider example way thing aspect
"""

# fixed multiword function phrases, removed before tokenizing
_ENGLISH_PHRASES = (
    "in terms of",
    "as well as",
    "such as",
    "in order to",
    "with respect to",
    "with regard to",
    "in regard to",
    "according to",
    "in addition to",
    "as opposed to",
    "rather than",
    "so that",
    "as long as",
    "in case of",
    "on the other hand",
    "for example",
    "for instance",
    "in particular",
    "in general",
)

_CHINESE = """
的 地 得 之 了 着 过 吗 呢 吧 啊 呀 嘛 么 哦 哈 呗 啦
我 你 您 他 她 它 我们 你们 他们 她们 它们 咱们 自己 大家 别人 人家
这 那 这个 那个 这些 那些 这里 那里 这儿 那儿 这样 那样 这种 那种 此 其 其中 该 本 各 每 某
什么 怎么 怎样 怎么样 如何 哪 哪些 哪个 哪里 哪儿 为什么 为何 谁 多少 几 是否 是不是 有没有
是 有 在 会 能 能够 可以 可能 要 想 应该 应当 得以 需 须
和 与 及 以及 或 或者 还是 而 而且 并 并且 但 但是 可是 然而 不过 因为 所以 因此 如果 假如
虽然 尽管 即使 既 又 也 还 就 才 都 只 仅 仅仅 再 更 最 很 太 非常 十分 比较 特别 已经 正在 将 曾
对 对于 关于 从 向 往 把 被 给 跟 同 让 由 于 以 为 为了 按 按照 根据 通过 随着 除了 除
一个 一些 一种 个 些 种 等 等等 方面 各有 上 下 中 里 内 外 时 时候 之间
不 没 没有 别 请 谢谢
"""

# Korean words left after the particle is stripped ("무엇입니까" -> 무엇)
_KOREAN = """
무엇 어떻게 왜 언제 어디 누구 어느 무슨 어떤 이것 그것 저것 이 그 저 것 수 등 및 그리고 하지만 그러나
또는 또 더 가장 매우 아주 잘 안 못 있 없 하 되
"""

_CHINESE_PROMPT = """
解释 说明 描述 介绍 比较 对比 列出 列举 谈谈 讨论 总结 概述 阐述 告诉 给出 举例 简述
简要 详细 回答 包括 涉及 包含
"""

ENGLISH_FUNCTION_WORDS = frozenset(_ENGLISH.split())
ENGLISH_PROMPT_WORDS = frozenset(_ENGLISH_PROMPT.split())
CHINESE_FUNCTION_WORDS = frozenset(_CHINESE.split())
CHINESE_PROMPT_WORDS = frozenset(_CHINESE_PROMPT.split())
KOREAN_FUNCTION_WORDS = frozenset(_KOREAN.split())

ENGLISH_FUNCTION_PHRASES = regex.compile(
    r"\b(?:" + "|".join(p.replace(" ", r"\s+") for p in _ENGLISH_PHRASES) + r")\b",
    regex.IGNORECASE,
)


def is_english_function_word(word: str, lemmas: frozenset[str]) -> bool:
    """``word`` is folded; ``lemmas`` are its known lemmas (may be empty)."""
    if word in ENGLISH_FUNCTION_WORDS or word in ENGLISH_PROMPT_WORDS:
        return True
    return any(lemma in ENGLISH_FUNCTION_WORDS or lemma in ENGLISH_PROMPT_WORDS for lemma in lemmas)


def is_chinese_function_word(word: str) -> bool:
    return word in CHINESE_FUNCTION_WORDS or word in CHINESE_PROMPT_WORDS

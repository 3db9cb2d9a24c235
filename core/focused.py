"""Focused injection (SPEC §15): the scores and the cut-off of `memory.injection: "focused"`.

The rule is written out in docs/injection.md ("Focused injection"); this module holds its
steps F3–F7, the parts that differ from §5. The steps they share with §5 (the switch, the
candidates, lines, cost, budget, render, flags) stay in `core.injection`; `core.injection_focused`
applies these to each layer's candidates (F2–F8).

  F3. Terms ........ `content_terms` (`content_term`, `fold`), `entry_content_terms`
  F4. Keyword ...... `document_frequency`, `idf`, `keyword_score` (`weight_share`)
  F5. Relevance .... `lower_median` (the base), `semantic_lift`, `relevance`
  F6. Score ........ `adjusted` (`decay_adjust`)
  F7. Cut-off ...... `cut_off`, `nearest`, `passes`

`stored_forms` turns a content term back into the §5 terms it comes from, for a layer read
through its index (`core.injection_narrowed.Narrowed`).

Every function is plain and deterministic: sums run over sorted terms and every score is
rounded to 4 decimals, so the same store and message give the same bytes on every machine.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from .model import IMPORTANCE_RANK, Importance, Layer
from .relevance import STOP_WORDS, terms

# Words that carry no topic: §5's stop list, then pronouns, question words, auxiliaries and
# the commonest adverbs and quantifiers of English. A query's topic is what is left.
COMMON_WORDS = STOP_WORDS | frozenset(
    "about above after again against all also am any anyone anything been before being below between both "
    "can cannot could did do does doing done down during each else ever every few further get gets got had "
    "he her here hers him his how however just keep let like me might more most much must my myself "
    "no nor not now off once one only other ought ours out over own same she should some something still "
    "such than their theirs them themselves they those through too under until up us very what whatever "
    "when where whether which while who whom whose why would yes yet yours yourself "
    "ok okay please thanks want need use using used make made way thing things really per".split()
)

DIGITS = 4  # every score is rounded to this many decimals
IMPORTANCE_FACTOR: dict[str, float] = {Importance.HIGH: 1.25, Importance.NORMAL: 1.0, Importance.LOW: 0.8}  # F6: a nudge, never an override
# F6's factor of each importance rank (`IMPORTANCE_RANK`: an importance it does not name ranks as
# normal, and F6 weighs it as normal), and the highest: what a candidate of a rank can score at most
RANK_FACTOR: dict[int, float] = {IMPORTANCE_RANK[importance]: f for importance, f in IMPORTANCE_FACTOR.items()}
TOP_FACTOR = max(IMPORTANCE_FACTOR.values())
RELATIVE_CUT = 0.5  # F7: a candidate passes at half the best adjusted score or more ...
FLOOR = 0.2  # ... and with a relevance of at least this (keyword only, a message about nothing stored injects nothing)
NEAREST_LAYERS = (Layer.USER, Layer.PROJECT)  # F7: in these layers the closest in meaning passes too ...
NEAREST_LIFT = 0.1  # ... when its semantic lift is at least this (so, with the extra, a message about
# nothing stored may still send one memory per layer: ~120 tokens on the benchmark's)


def _is_letter_wide(ch: str) -> bool:
    import unicodedata

    return unicodedata.category(ch).startswith("L") and unicodedata.east_asian_width(ch) in ("W", "F")


def fold(term: str) -> str:
    """F3: an English plural folded to its singular, so "migrations" meets "migration": a
    lower-case ASCII word of 4 letters or more ending in `ies` ends in `y` instead, one
    ending in `sses` loses `es`, one ending in `s` (not `ss`, `us`, `is`) loses it."""
    if len(term) < 4 or not term.isascii() or not term.isalpha():
        return term
    if term.endswith("ies") and len(term) >= 5:
        return term[:-3] + "y"
    if term.endswith("sses"):
        return term[:-2]
    if term.endswith("s") and not term.endswith(("ss", "us", "is")):
        return term[:-1]
    return term


@lru_cache(maxsize=65536)
def content_term(t: str) -> str:
    """F3 for one of §5's terms: '' when it is left out (a common word, or one character that
    is not a wide letter), else the term folded. Few distinct terms, many memories: kept."""
    if t in COMMON_WORDS or (len(t) == 1 and not _is_letter_wide(t)):
        return ""
    return fold(t)


def stored_forms(t: str) -> frozenset[str]:
    """The §5 terms whose content term (`content_term`) is `t`: `t` itself and the plurals
    `fold` takes to it (`t`+s, `t`+es, `t` less its y + ies). An index of §5 terms finds the
    entries whose M holds `t` by these (F4's df from postings, without reading each entry)."""
    forms = (t, t + "s", t + "es", t[:-1] + "ies" if t.endswith("y") else t)
    return frozenset(x for x in forms if content_term(x) == t)


def content_terms(s: str) -> frozenset[str]:
    """F3: §5's `terms(s)` less the common words and the one-character terms that are not a
    wide letter (the `s` of "what's", the `x` of "x-axis"): they match nothing on their own;
    each plural folded (`fold`)."""
    return frozenset(map(content_term, terms(s))).difference(("",))


def entry_content_terms(text: str, section: str = "", name: str = "", description: str = "",
                        tags: Iterable[str] = ()) -> frozenset[str]:
    """M of F3: the content terms of the text, section, name, description and each tag."""
    out = set(content_terms(text))
    for part in (section, name, description, *tags):
        if part:
            out |= content_terms(part)
    return frozenset(out)


def idf(df: int, n: int) -> float:
    """F4: a term's weight from how many of the `n` candidates hold it (`df`): rare terms weigh
    more, a term held by none weighs most (ln(1 + (n - df + 0.5) / (df + 0.5)), never 0)."""
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def document_frequency(memories: Iterable[frozenset[str]], q: frozenset[str]) -> dict[str, int]:
    """F4's df: how many of the candidates' M hold each term of Q."""
    counts: Counter[str] = Counter()
    for m in memories:
        counts.update(q & m)
    return {t: counts.get(t, 0) for t in q}


def keyword_score(q: frozenset[str], m: frozenset[str], weight: dict[str, float]) -> float:
    """F4: the weighted share of the query's terms the memory holds, in [0, 1]."""
    shared = q & m
    if not shared:
        return 0.0
    return weight_share([weight[t] for t in sorted(shared)], math.fsum(weight[t] for t in sorted(q)))


def weight_share(held: Iterable[float], total: float) -> float:
    """F4's share: the sum of the weights of Q ∩ M (`held`) over `total`, the sum of Q's, rounded.
    `fsum` rounds the exact sum once, so the weights may come in any order."""
    return round(math.fsum(held) / total, DIGITS) if total else 0.0


def lower_median(values: Sequence[float]) -> float:
    """F5's base: element `(N − 1) // 2` of the sorted values (0 when there are none)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[(len(ordered) - 1) // 2]


def semantic_lift(semantic: float, base: float) -> float:
    """F5: how far a memory's semantic score rises above the store's typical one for this
    message (`base`, the lower median over the candidates), rescaled to [0, 1]."""
    if base >= 1.0 or semantic <= base:
        return 0.0
    return round((semantic - base) / (1.0 - base), DIGITS)


def relevance(keyword: float, lift: float) -> float:
    """F5: the keyword score, raised by the semantic lift into what it leaves: never below the
    keyword score, 1 for a memory holding every term of the message."""
    return round(keyword + (1.0 - keyword) * lift, DIGITS)


def decay_adjust(decay: float | None, pinned: bool) -> float:
    """F6: decay may halve a score at most, and a pinned memory does not decay."""
    if decay is None or pinned:
        return 1.0
    return 0.5 + 0.5 * decay


def adjusted(relevance_: float, importance: str, decay: float | None, pinned: bool) -> float:
    """F6: the relevance, nudged by importance and decay."""
    return round(relevance_ * IMPORTANCE_FACTOR.get(importance, 1.0) * decay_adjust(decay, pinned), DIGITS)


def cut_off(best: float) -> float:
    """F7: the adjusted score a candidate needs, relative to the best one of the message."""
    return round(RELATIVE_CUT * best, DIGITS)


def nearest(candidates: Iterable[tuple[int, float, float]]) -> int | None:
    """F7: of a user or project layer's (position, semantic, lift) in play and not pinned, the
    position of the highest semantic score (on a tie the lower position, the first in §5's
    order), when its lift is at least `NEAREST_LIFT`; else None. A paraphrase shares no word
    with the memory it needs, so its best chance is the layer's closest memory in meaning."""
    best: tuple[int, float, float] | None = None
    for pos, sem, lift in candidates:
        if best is None or sem > best[1] or (sem == best[1] and pos < best[0]):
            best = (pos, sem, lift)
    return best[0] if best is not None and best[2] >= NEAREST_LIFT else None


def passes(relevance_: float, adjusted_: float, cut: float, pinned: bool, nearest_: bool = False) -> bool:
    """F7: pinned memories always pass, and so does a layer's nearest in meaning (`nearest`);
    the others need some relevance of their own (the floor) and an adjusted score within
    reach of the best."""
    return pinned or nearest_ or (relevance_ >= FLOOR and adjusted_ >= cut)


@dataclass(frozen=True, slots=True)
class Why:
    """The parts of a candidate's focused score, as `preview --json` shows them (`why`)."""

    keyword: float
    semantic: float | None  # the §13 score; None without the semantic model
    lift: float
    relevance: float
    importance: str
    decay: float | None
    pinned: bool
    score: float  # the adjusted score the order and the cut-off use
    cut: float
    scope: str = "workspace"  # which candidates it was one of (SPEC §16 adds file scopes)
    nearest: bool = False  # F7: its layer's closest in meaning, passing whatever the cut

    def as_dict(self) -> dict[str, object]:
        return {"keyword": self.keyword, "semantic": self.semantic, "lift": self.lift,
                "relevance": self.relevance, "importance": self.importance,
                "importance_factor": IMPORTANCE_FACTOR.get(self.importance, 1.0), "decay": self.decay,
                "pinned": self.pinned, "score": self.score, "cut": self.cut, "scope": self.scope,
                "nearest": self.nearest}

    def summary(self) -> str:
        """One line for the TUI: what made the score."""
        parts = ["pinned"] if self.pinned else []
        parts.append(f"keyword {self.keyword:.2f}")
        if self.semantic is not None:
            parts.append(f"semantic {self.semantic:.2f} (lift {self.lift:.2f})")
        parts.append(f"relevance {self.relevance:.2f}")
        if self.importance in (Importance.HIGH, Importance.LOW):
            parts.append(f"importance {self.importance} ×{IMPORTANCE_FACTOR[self.importance]}")
        if self.decay is not None:
            parts.append(f"decay {self.decay:.2f}")
        parts.append(f"score {self.score:.2f} (cut {self.cut:.2f})")
        if self.nearest:
            parts.append("nearest in meaning")
        return " · ".join(parts)

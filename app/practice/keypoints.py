"""Key points of an open answer, pre-ticked for the candidate to confirm.

A key point is suggested when enough of its terms show up in the answer, compared after
normalisation (case, accents, Turkish ı), light stemming, stop words dropped, the
glossary's names of a concept taken as one another (bubble, bulle, 气泡), and quantities
read with their units (1.4 GB = 1400 MB). Measured on tests/practice/paraphrases.yaml by
``make bench-keypoints`` (README, Benchmarks).
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import cache
from typing import Any

from app.calculator.reading import ReadingError, dimension_of_unit, read_quantity
from app.calculator.units import UnitError
from app.i18n.terms import GLOSSARY_LANGUAGES, glossary, synonyms
from app.questions.search import normalise

# Pre-ticking: a key point is suggested when enough of its terms show up in the answer,
# compared after normalisation (case, accents, Turkish ı), light stemming, stop words
# dropped, the glossary's names of a concept taken as one another (bubble, bulle, 气泡),
# and quantities read with their units (1.4 GB = 1400 MB). The candidate confirms.
SUGGEST_SHARE = 0.35  # of a key point's terms, weighted by how specific they are to it
SUGGEST_MIN_TERMS = 2  # one shared term is a coincidence, not a key point
QUANTITY_WEIGHT = 2.0  # a number with its unit says more than a word
QUANTITY_TOLERANCE = 0.05  # 1 MiB and 1 MB are the same figure to a speaker
PAIR_WORDS = 0.5  # overlapping Chinese pairs: about half are words, half straddle two
SUGGEST_MAX_CHARS = 4000  # the answer box's maxlength, and what the step keeps of an answer

_LATIN = re.compile(r"[a-z0-9_]+(?:['’\-][a-z0-9_]+)*")
_HAN = re.compile(r"[\u4e00-\u9fff]+")
_QUANTITY = re.compile(
    r"(?<![^\W\u4e00-\u9fff])(?<![.,])"  # not inside a word (Chinese may run on)
    r"(\d{1,3}(?:[ \u00a0\u202f.,]\d{3})+(?:[.,]\d+)?|\d+(?:[.,]\d+)?)"
    r"(\s?)([^\W\d_]+(?:/[^\W\d_]+)?)(?![\w.]*\d)")
_FRENCH_ELISION = {"l", "d", "j", "n", "s", "c", "m", "t", "qu", "jusqu", "lorsqu", "puisqu"}

# Longest first; a stem keeps at least three letters. Turkish chains its suffixes, so they
# come off one after another, and a final ğ or b was a k or p before a vowel.
_SUFFIXES = {
    "en": ("izations", "ization", "ations", "ation", "ments", "ment", "ings", "ing", "ness",
           "ities", "ity", "ies", "ied", "ers", "er", "ed", "es", "ly", "s", "e"),
    "fr": ("issements", "issement", "ations", "ation", "ements", "ement", "atrices", "atrice",
           "ateurs", "ateur", "euses", "euse", "eurs", "eur", "iques", "ique", "ables", "able",
           "ives", "ive", "ites", "ite", "ees", "ee", "ions", "ion", "es", "er", "ez", "e", "s",
           "x"),
    "tr": ("larin", "lerin", "lari", "leri", "lar", "ler", "lik", "luk", "li", "lu", "dan",
           "den", "tan", "ten", "nin", "nun", "da", "de", "ta", "te", "yla", "yle", "la", "le",
           "ki", "si", "su", "yi", "yu", "ya", "ye", "in", "un", "mak", "mek", "ma", "me", "dir",
           "dur", "tir", "tur", "i", "u", "a", "e"),
}
_MIN_STEM = 3
_DOUBLED = re.compile(r"([b-df-hj-km-np-rtv-xz])\1$")  # running -> runn -> run
_MUTATED = {"g": "k", "b": "p"}  # Turkish aralığı -> aralık, kitabı -> kitap

_STOP = {
    "en": """a about above after again against all also although am an and any are around as
        at be because been before being below between both but by can cannot could did do does
        doing done down during each either else enough etc even every few for from further get
        gets given gives got had has have having he her here hers him his how however i if in
        into is it its itself just least less let like lot lots many may me might more most
        much must my no nor not now of off often on once one only or other others our out over
        own per quite rather really same say says she should since so some still such than that
        the their them then there these they thing things this those though through thus to
        too under until up upon us very was way we well were what when where whether which
        while who whom why will with within without would yet you your basically something
        isn aren wasn weren don doesn didn won wouldn shouldn couldn haven hasn
        actually roughly approximately example instance e.g i.e simply
        explains mentions names knows states proposes describes notes gives defines shows
        points places covers handles quantifies recomputes distinguishes reads lists says
        backs argues uses""",
    "fr": """a au aux avec ce ceci cela ces cet cette chaque comme comment dans de des donc dont
        du elle elles en entre est et etre eux il ils je la le les leur leurs lui ma mais me
        meme mes moi mon ne ni nos notre nous on ou par pas peu plus pour pourquoi qu quand que
        quel quelle quelles quels qui sa sans se ses si son sont sous sur ta te tes toi ton
        tous tout toute toutes tres tu un une unes uns vos votre vous y ca c d l j n s t m
        aussi alors ainsi apres avant bien car ici fait faire fois peut peuvent puis
        encore deja etait ont ete avoir sera serait seulement surtout environ exemple
        explique mentionne cite connait propose indique donne definit montre situe decrit
        signale dit nomme sait lit distingue souligne appuie traite quantifie recalcule
        liste""",
    "tr": """ve veya ile ama fakat ancak de da bu su o bir her hic cok az daha en gibi icin
        kadar sonra once ise mi mu ne neden nasil hangi yani cunku eger ki olarak olan olur
        oldugu var yok degil uzere ayrica sadece yalnizca bile hem ya zaten artik boyle
        soyle tum butun bazi baska diger kendi biz ben sen siz onlar bunu bunun buna sunu
        onu onun ona ornegin mesela kabaca yaklasik civari
        aciklar belirtir bilir soyler onerir tanimlar verir gosterir anar sayar ayirir
        konumlandirir destekler hesaplar ele alir okur""",
}
# Chinese: pairs holding a function character, and common function pairs.
_ZH_STOP_CHARS = set("的了是在和与把被这那个们我你他她它也都而及或吗呢吧啊么之其")
_ZH_STOP_PAIRS = {"因为", "所以", "如果", "可以", "需要", "然后", "而且", "以及", "已经", "还是",
                  "或者", "什么", "怎么", "这样", "因此", "只是", "没有", "不会", "自己", "就是",
                  "但是", "比如", "例如", "说明", "指出", "知道", "提出", "给出", "解释", "提到",
                  "能够", "大约", "左右", "基本", "一次", "一份", "一下"}
_STOP_WORDS = {lang: frozenset(words.split()) for lang, words in _STOP.items()}


def _stem(word: str, lang: str) -> str:
    """Light suffix stripping (English rules for Latin words in Chinese text)."""
    rules = "en" if lang not in _SUFFIXES else lang
    suffixes = _SUFFIXES[rules]
    stripped = True
    while stripped:
        stripped = False
        for suffix in suffixes:
            if word.endswith(suffix) and len(word) - len(suffix) >= _MIN_STEM:
                word, stripped = word[:-len(suffix)], rules == "tr"
                if rules == "en" and suffix in ("ing", "ed", "er", "ers"):
                    word = _DOUBLED.sub(r"\1", word)
                break
    if rules == "tr" and word[-1:] in _MUTATED:
        word = word[:-1] + _MUTATED[word[-1]]
    return word


def _word(token: str, lang: str) -> str | None:
    """A token as compared: joined across hyphens, without elision or Turkish suffix after
    an apostrophe, stemmed; None for stop words, lone letters and bare numbers."""
    token = token.replace("’", "'")
    if "'" in token:
        head, _, tail = token.partition("'")
        token = tail if head in _FRENCH_ELISION else head
    token = token.replace("-", "")
    stop = _STOP_WORDS.get("en" if lang == "zh" else lang, frozenset())
    if len(token) < 2 or token.isdigit() or token in stop:
        return None
    return _stem(token, lang)


@dataclass(frozen=True)
class _Terms:
    """What a text says: each term is the set of its equivalent forms (a stem, the ids of
    the concepts it names); quantities are (dimension, value in base units)."""

    terms: frozenset[frozenset[str]]
    quantities: frozenset[tuple[str, float]]
    pairs: frozenset[frozenset[str]]  # the terms that are Chinese character pairs
    words: frozenset[str]  # every stem, also those inside a concept's name


@cache
def _concept_names(lang: str) -> tuple[dict[tuple[str, ...], frozenset[str]],
                                       dict[str, frozenset[str]]]:
    """The glossaries' names of each concept, as stem sequences (Latin) and as Chinese
    strings, each mapped to the ids of the concepts it names."""
    latin: dict[tuple[str, ...], set[str]] = defaultdict(set)
    han: dict[str, set[str]] = defaultdict(set)
    for glossary_lang in GLOSSARY_LANGUAGES:
        for term in glossary(glossary_lang):
            concept = "§" + normalise(term.concept)
            for name in synonyms(normalise(term.concept)):
                if _HAN.search(name):
                    if len(name) >= 2:
                        han[name].add(concept)
                    continue
                words = tuple(w for t in _LATIN.findall(name) if (w := _word(t, lang)))
                if words and len("".join(words)) >= 3:
                    latin[words].add(concept)
    return ({k: frozenset(v) for k, v in latin.items()},
            {k: frozenset(v) for k, v in han.items()})


def _quantities(text: str, lang: str) -> tuple[str, set[tuple[str, float]]]:
    """Numbers with a unit, read as the page's language writes them, and the text
    without them."""
    found: set[tuple[str, float]] = set()

    def read(match: re.Match[str]) -> str:
        number, space, word = match.groups()
        if not space and word in ("B", "b"):  # 7B: a model's size, not seven bytes
            return match.group(0)
        # A Turkish unit takes case suffixes (4 dakikadan, 12 saatlik, 500 MB'ta); Chinese
        # writes on without a space (4 分钟降到).
        shortest = {"tr": 2, "zh": 1}.get(lang, len(word))
        for end in range(len(word), shortest - 1, -1):
            unit = word[:end]
            try:
                dimension = dimension_of_unit(unit)
                value = read_quantity(f"{number} {unit}", dimension, lang).value
            except (ReadingError, UnitError):
                continue
            found.add((dimension.name, value))
            return " " + word[end:]
        return match.group(0)

    return _QUANTITY.sub(read, text), found


def _terms(text: str, lang: str) -> _Terms:
    text, quantities = _quantities(text, lang)
    text = normalise(text)
    latin_names, han_names = _concept_names(lang)
    terms: set[frozenset[str]] = set()
    for name in sorted(han_names, key=len, reverse=True):
        if name in text:
            terms.add(han_names[name] | {name})
            text = text.replace(name, " ")
    words = [w for t in _LATIN.findall(text) if (w := _word(t, lang))]
    longest = max((len(k) for k in latin_names), default=1)
    i = 0
    while i < len(words):
        for size in range(min(longest, len(words) - i), 0, -1):
            concepts = latin_names.get(tuple(words[i:i + size]))
            if concepts:
                terms.add(concepts | ({words[i]} if size == 1 else set()))
                i += size
                break
        else:
            terms.add(frozenset({words[i]}))
            i += 1
    pairs = {frozenset({pair}) for run in _HAN.findall(text)
             for pair in (run[j:j + 2] for j in range(len(run) - 1))
             if pair not in _ZH_STOP_PAIRS and not _ZH_STOP_CHARS & set(pair)}
    return _Terms(frozenset(terms | pairs), frozenset(quantities), frozenset(pairs),
                  frozenset(words))


class _Said:
    """An answer's terms, for lookups: exact forms, and stems by their first letters so
    that a stem also matches a slightly longer or shorter one (reduc ~ reduct)."""

    def __init__(self, terms: _Terms):
        self.forms = {form for term in terms.terms for form in term} | terms.words
        self.by_start: dict[str, list[str]] = defaultdict(list)
        for form in self.forms:
            if len(form) >= 5 and not form.startswith("§"):
                self.by_start[form[:5]].append(form)
        self.quantities = terms.quantities

    def has(self, term: frozenset[str]) -> bool:
        if term & self.forms:
            return True
        return any(_close(form, other) for form in term if len(form) >= 5
                   for other in self.by_start.get(form[:5], ()))

    def has_quantity(self, quantity: tuple[str, float]) -> bool:
        dimension, value = quantity
        return any(d == dimension and abs(v - value) <= QUANTITY_TOLERANCE * abs(value)
                   for d, v in self.quantities)


def _close(a: str, b: str) -> bool:
    short, long = sorted((a, b), key=len)
    return long.startswith(short) and len(long) - len(short) <= 4


def suggested_ticks(answer: str, rubric: dict[str, str], lang: str | None = None
                    ) -> list[str]:
    """Key points whose terms show up in the answer: pre-ticked as a hint, to confirm.

    ``lang`` is the language of the rubric's texts (guessed from them when not given).
    A term counts for less when several key points share it; a key point is suggested
    when at least ``SUGGEST_SHARE`` of its weighted terms, and ``SUGGEST_MIN_TERMS`` of
    them, appear in the answer.
    """
    if lang is None:
        lang = "zh" if any(_HAN.search(text) for text in rubric.values()) else "en"
    points = {key: _terms(text, lang) for key, text in rubric.items()}
    share: Counter[Any] = Counter()
    for terms in points.values():
        share.update(terms.terms | terms.quantities)
    said = _Said(_terms(answer[:SUGGEST_MAX_CHARS], lang))
    ticked = []
    for key, terms in points.items():
        total = found = 0.0
        count = 0
        for item in terms.terms | terms.quantities:
            weight = math.log((len(points) + 1) / share[item])
            if item in terms.quantities:
                weight *= QUANTITY_WEIGHT
                hit = said.has_quantity(item)
            else:
                hit = said.has(item)
            total += weight * (PAIR_WORDS if item in terms.pairs else 1)
            if hit:
                found += weight
                count += 1
        if total and count >= SUGGEST_MIN_TERMS and found / total >= SUGGEST_SHARE:
            ticked.append(key)
    return ticked



"""Pre-ticked key points on open answers (suggested_ticks), and the paraphrase set that
bench/keypoints.py measures them on. Behaviour only: the figures are in the README."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from app.bank.checks import question_paths, read_question
from app.bank.schema import QuestionFile
from app.practice.keypoints import suggested_ticks
from app.questions.service import view

ROOT = Path(__file__).resolve().parents[2]
PARAPHRASES = Path(__file__).parent / "paraphrases.yaml"
LANGUAGES = ("en", "fr", "tr", "zh")


@pytest.fixture(scope="module")
def open_questions() -> dict[str, QuestionFile]:
    root = ROOT / "question_bank"
    found = {}
    for path in question_paths(root):
        question, _ = read_question(path, root)
        if question is not None and question.kind == "open":
            found[question.id] = question
    return found


@pytest.fixture(scope="module")
def paraphrases() -> dict:
    return yaml.safe_load(PARAPHRASES.read_text(encoding="utf-8"))


# ----------------------------------------------------------------------------- the set


def test_paraphrases_are_well_formed(paraphrases: dict, open_questions: dict) -> None:
    assert len(paraphrases) >= 10
    assert len({open_questions[qid].topic for qid in paraphrases if qid in open_questions}) >= 8
    for qid, by_lang in paraphrases.items():
        assert qid in open_questions, f"{qid}: not an open question of the bank"
        rubric = set(open_questions[qid].rubric)
        assert set(by_lang) == set(LANGUAGES), f"{qid}: languages {sorted(by_lang)}"
        for lang, answers in by_lang.items():
            where = f"{qid} ({lang})"
            assert len(answers) >= 3, where
            for item in answers:
                assert set(item) == {"answer", "covers"}, where
                assert isinstance(item["answer"], str) and item["answer"].strip(), where
                covers = item["covers"]
                assert isinstance(covers, list) and len(set(covers)) == len(covers), where
                assert set(covers) <= rubric, f"{where}: unknown keys {set(covers) - rubric}"
            sizes = sorted(len(item["covers"]) for item in answers)
            assert sizes[0] == 0, f"{where}: no off-topic answer (one that covers nothing)"
            assert sizes[-1] >= 3, f"{where}: no strong answer (most key points)"


def test_paraphrase_languages_match_their_text(paraphrases: dict) -> None:
    """Chinese answers are written in Chinese, the others are not."""
    for qid, by_lang in paraphrases.items():
        for lang, answers in by_lang.items():
            for item in answers:
                has_han = any("\u4e00" <= c <= "\u9fff" for c in item["answer"])
                assert has_han == (lang == "zh"), f"{qid} ({lang}): {item['answer'][:40]}"


# ----------------------------------------------------------------------------- detection


def test_a_glossary_synonym_counts_as_the_term() -> None:
    rubric = {
        "bubble": "Explique que la bulle vaut (p−1)/(m+p−1) du pas et qu'elle diminue quand on "
                  "augmente le nombre de micro-batches.",
        "memory": "Dit que 1F1B limite les activations stockées au nombre d'étages.",
        "balance": "Équilibre le temps de calcul entre les étages du pipeline.",
    }
    said = "Le bubble se réduit si on prend plus de micro-lots, il vaut (p−1)/(m+p−1) du pas."
    assert suggested_ticks(said, rubric, "fr") == ["bubble"]
    # Without the glossary's names, the same sentence shares too little with the key point.
    plain = "Le retard se réduit si on prend plus de morceaux, il vaut (p−1)/(m+p−1) du pas."
    assert suggested_ticks(plain, rubric, "fr") == []


def test_a_chinese_answer_may_name_a_concept_in_english() -> None:
    rubric = {
        "checkpoint": "定期保存检查点。",
        "data": "跳过尖峰附近的几百个 batch。",
        "lr": "重启时降低学习率。",
    }
    assert suggested_ticks("我会定期存 checkpoint", rubric, "zh") == ["checkpoint"]
    assert suggested_ticks("我会定期存日志", rubric, "zh") == []


@pytest.mark.parametrize(("lang", "rubric_text", "said", "right", "wrong"), [
    ("en", "Each rank sends 1.4 GB of gradients per step.", "about {} per rank", "1400 MB",
     "700 MB"),
    ("fr", "Chaque rang envoie 1,4 Go de gradients par pas.", "environ {} par rang", "1 400 Mo",
     "700 Mo"),
    ("tr", "Her rank adım başına 1,4 GB gradyan gönderir.", "rank başına {}", "1400 MB",
     "700 MB"),
    ("zh", "每个 rank 每步发送 1.4 GB 梯度。", "每个 rank 大约 {}", "1400 MB", "700 MB"),
    ("tr", "Eğitim her checkpoint'te 4 dakika bekler.", "eğitim {} bekliyor", "240 saniye",
     "24 saniye"),
])
def test_a_quantity_in_another_unit_counts(lang: str, rubric_text: str, said: str,
                                           right: str, wrong: str) -> None:
    """The figure decides: the same short answer with another number ticks nothing."""
    rubric = {"volume": rubric_text, "other": "Latency α, bandwidth β, NCCL ring."}
    assert suggested_ticks(said.format(right), rubric, lang) == ["volume"]
    assert suggested_ticks(said.format(wrong), rubric, lang) == []


def test_normalisation_and_stemming() -> None:
    rubric = {"reduction": "Réduit les gradients par un reduce-scatter, puis rassemble les "
                           "paramètres mis à jour.",
              "other": "Connaît la latence de l'anneau."}
    said = "ON RÉDUIT LE GRADIENT PAR REDUCE-SCATTER ET ON RASSEMBLE LE PARAMÈTRE À JOUR"
    assert suggested_ticks(said, rubric, "fr") == ["reduction"]
    turkish = {"comm": "İletişimi hesaplamayla örtüştürür.", "other": "Belleği ölçer."}
    assert suggested_ticks("ILETIŞIM hesaplama ile örtüşüyor", turkish, "tr") == ["comm"]


OFF_TOPIC = {
    "en": "I would tokenize the corpus with a byte-pair encoder, deduplicate the documents and "
          "watch the validation perplexity on a dashboard; the learning rate follows a cosine "
          "schedule.",
    "fr": "Je tokeniserais le corpus avec un encodeur BPE, je dédupliquerais les documents et je "
          "suivrais la perplexité de validation dans un tableau de bord ; le taux "
          "d'apprentissage suit un cosinus.",
    "tr": "Derlemi bir BPE kodlayıcıyla token'lara ayırır, belgeleri tekilleştirir ve doğrulama "
          "perplexity'sini bir panoda izlerdim; öğrenme oranı kosinüs şeklinde azalır.",
    "zh": "我会用 BPE 分词器处理语料，对文档去重，并在看板上观察验证集困惑度；"
          "学习率按余弦曲线下降。",
}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_an_off_topic_answer_ticks_nothing(lang: str, open_questions: dict) -> None:
    for qid, question in open_questions.items():
        if lang in question.translations:
            rubric = view(question, lang).texts.rubric
            assert suggested_ticks(OFF_TOPIC[lang], rubric, lang) == [], qid


def test_the_language_is_guessed_when_not_given() -> None:
    rubric = {"tail": "最后一个 bucket 在反向结束后才归约。", "other": "默认 25 MiB。"}
    said = "最后一个 bucket 要等反向结束后才能归约"
    assert suggested_ticks(said, rubric) == suggested_ticks(said, rubric, "zh") == ["tail"]
    assert suggested_ticks("", rubric) == []

"""Moodle's own import fixtures (tests/fixtures/moodle, see its README for where each comes
from and what Moodle's tests expect): what Ringside imports from each, field by field, and
what it refuses, with the line and Moodle's reason."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.admin.interop_import import (
    GRADE_LIST,
    gift_comment_tags,
    read_gift,
    read_moodle,
    to_question,
)
from tests.accounts.test_accounts import browser, make_user, sign_in
from tests.admin.test_interop_import import choices, en
from tests.admin.test_interop_import import imported as imported_payload

MOODLE = Path(__file__).parents[1] / "fixtures" / "moodle"


def imported(name: str):
    """{line: (question, notes)} and sorted [(line, message)] refused, as the preview sees
    them."""
    path = MOODLE / name
    return imported_payload(path.read_bytes(),
                            read_moodle if path.suffix == ".xml" else read_gift)


def grades_refused(grades: str) -> str:
    return (f"grades ({grades}) do not match Moodle's grade options, so Moodle refuses this "
            f"question too (the grades are {GRADE_LIST} and their negatives)")


def sum_refused(total: int) -> str:
    return (f"multiple-answer multichoice question's positive grades add up to {total}%, not "
            "100%, and Moodle refuses it too (the positive grades you have chosen do not add "
            "up to 100%)")


def no_full_marks(best: int) -> str:
    return (f"multichoice question has no correct answer: no choice is at 100% (the best is "
            f"{best}%), and Moodle refuses it too (one of the choices should be 100%, so that "
            "it is possible to get a full grade)")


def unsupported(kind: str) -> str:
    return f"unsupported question type '{kind}'"


DEFAULT_COMBINED = ("Moodle's default combined feedback is not kept: for any correct "
                    "response, for any partially correct response, for any incorrect response")
CATCH_ALL_KEPT = ("the catch-all answer '*' (any other answer) is kept as its feedback in the "
                  "explanation: 'Any other answer: …'")
TO_WRITE = "(to write: why the answer is right)"


def share_note(answer: str, percent: str, share: str) -> str:
    return (f"{percent} % on '{answer}': here a wrong choice ticked costs one correct choice's "
            f"share ({share} %)")


# ----------------------------------------------------------------------------- grades


def test_error_invalid_grades_is_refused_for_grade_033_like_moodle():
    drafts, refused = imported("error_invalid_grades.xml")
    assert drafts == {}
    assert refused == [(4, grades_refused("0.33"))]
    assert "33.33333%" in GRADE_LIST and "−" not in GRADE_LIST  # the list in Moodle's order


def test_error_invalid_fraction_sum_xml_refuses_200_60_and_no_full_marks():
    drafts, refused = imported("error_invalid_fraction_sum.xml")
    assert refused == [(4, sum_refused(200)), (53, sum_refused(60)), (151, no_full_marks(50))]
    valid, notes = drafts[102]
    assert valid.kind == "multi_choice"
    assert en(valid).title == "XML import: valid percentage answer weights"
    assert en(valid).prompt == "multichoice"
    assert choices(valid) == [("choice 1", True), ("choice 2", True), ("choice 3", False)]
    assert en(valid).choice_feedback == {}
    assert en(valid).explanation == TO_WRITE
    assert valid.tags == []
    assert notes == [share_note("choice 3", "−50", "50"), DEFAULT_COMBINED]


def test_error_invalid_fraction_sum_gift_refuses_200_and_60():
    drafts, refused = imported("error_invalid_fraction_sum.gift.txt")
    assert refused == [(2, sum_refused(200)), (9, sum_refused(60))]
    valid, notes = drafts[16]
    assert valid.kind == "multi_choice"
    assert en(valid).title == "gift import: valid percentage answer weights"
    assert choices(valid) == [("choice 1", False), ("choice 2", True), ("choice 3", False)]
    assert notes == [share_note("choice 1", "−50", "100"), share_note("choice 3", "−50", "100")]


# ----------------------------------------------------------------------------- GIFT


def test_gift_numerical_with_catch_all_as_moodle_parses_it():
    """Moodle's test input {#3:2~#Completely wrong}: answers 3 (100 %, tolerance 2) and
    '*' (0 %, "Completely wrong")."""
    drafts, _ = imported("giftformat_test_imports.gift")
    numeric, notes = drafts[39]
    assert numeric.kind == "numeric"
    assert en(numeric).title == "Q5"
    assert en(numeric).prompt == "What is a number from 1 to 5?"
    assert numeric.answer.calculator.name == "bind-a-calculator"
    assert numeric.answer.value == 3 and numeric.answer.unit is None
    assert (numeric.answer.tolerance.type, numeric.answer.tolerance.value) == ("absolute", 2.0)
    assert en(numeric).explanation == (
        "Imported without a calculator: the answer is 3 ± 2 (absolute tolerance). Bind it to "
        "a calculator before publishing.\n\nAny other answer: Completely wrong")
    assert en(numeric).guidance.model_answer == "3 ± 2"
    assert notes == [CATCH_ALL_KEPT]


def test_gift_numerical_as_moodle_exports_it():
    """Moodle's own export of that question: {#\\n\\t=%100%3:2#\\n\\t~#Completely wrong\\n}."""
    drafts, _ = imported("giftformat_test_exports.gift")
    numeric, notes = drafts[28]
    assert en(numeric).title == "Q5"
    assert numeric.answer.value == 3 and numeric.answer.tolerance.value == 2.0
    assert en(numeric).explanation.endswith("\n\nAny other answer: Completely wrong")
    assert notes == [CATCH_ALL_KEPT]


def test_gift_import_strings_of_moodles_tests():
    drafts, refused = imported("giftformat_test_imports.gift")
    assert refused == [(2, unsupported("essay")), (5, unsupported("matching")),
                       (42, unsupported("shortanswer")), (49, unsupported("shortanswer")),
                       (67, unsupported("essay")), (69, unsupported("essay")),
                       (81, unsupported("essay"))]
    assert sorted(drafts) == [14, 22, 31, 39, 57, 61, 64]

    single, notes = drafts[14]  # fractions 1, 0, 0
    assert single.kind == "single_choice" and en(single).title == "Q2"
    assert en(single).prompt == "What's between orange and green in the spectrum?"
    assert choices(single) == [("yellow", True), ("red", False), ("blue", False)]
    assert en(single).choice_feedback == {"b": "wrong, it's yellow", "c": "wrong, it's yellow"}
    assert en(single).explanation == 'Feedback on the correct answer "yellow": right; good!'
    assert notes == []

    multi, notes = drafts[22]  # fractions 0.5, -1, 0.5, -1
    assert multi.kind == "multi_choice" and en(multi).title == "colours"
    assert choices(multi) == [("yellow", True), ("red", False), ("off-beige", True),
                              ("blue", False)]
    assert en(multi).choice_feedback == {"b": "wrong", "d": "wrong"}
    assert en(multi).explanation == ('Feedback on the correct answer "yellow": right; good!\n\n'
                                     'Feedback on the correct answer "off-beige": right; good!')
    assert notes == [share_note("red", "−100", "50"), share_note("blue", "−100", "50")]

    tricky, notes = drafts[31]  # fractions 1, -0.5, -0.5
    assert choices(tricky) == [("yellow", True), ("red", False), ("blue", False)]
    assert notes == [share_note("red", "−50", "100"), share_note("blue", "−50", "100")]

    truefalse, notes = drafts[57]  # correct answer false
    assert truefalse.kind == "single_choice" and en(truefalse).title == "Q1"
    assert en(truefalse).prompt == "42 is the Absolute Answer to everything."
    assert choices(truefalse) == [("True", False), ("False", True)]
    assert en(truefalse).choice_feedback == {"a": "42 is the Ultimate Answer."}
    assert en(truefalse).explanation == ('Feedback on the correct answer "False": You gave the '
                                         'right answer.')
    for line in (61, 64):  # {T} and {TRUE}
        question, notes = drafts[line]
        assert en(question).title == "2-08 TSL" and en(question).prompt == "TSL is blablabla."
        assert choices(question) == [("True", True), ("False", False)]
        assert en(question).explanation == TO_WRITE and notes == []


def test_gift_export_strings_of_moodles_tests():
    drafts, refused = imported("giftformat_test_exports.gift")
    assert refused == [(2, unsupported("essay")), (5, unsupported("matching")),
                       (34, unsupported("shortanswer")), (41, unsupported("shortanswer")),
                       (52, unsupported("essay"))]
    assert sorted(drafts) == [14, 21, 28, 49, 56]
    html_feedback, _ = drafts[14]  # ~red#[html]wrong, it's yellow
    assert en(html_feedback).choice_feedback == {"b": "wrong, it's yellow",
                                                 "c": "wrong, it's yellow"}
    assert choices(drafts[21][0]) == [("yellow", True), ("red", False), ("blue", False)]
    truefalse, _ = drafts[49]  # {TRUE#[html]42 is the Ultimate Answer.#You gave the right answer.}
    assert choices(truefalse) == [("True", True), ("False", False)]
    assert en(truefalse).choice_feedback == {"b": "42 is the Ultimate Answer."}

    tagged, notes = drafts[56]  # // [id:myid] [tag:tag1] [tag:tag2]
    assert en(tagged).title == "True/false question"
    assert en(tagged).prompt == "The answer is true."
    assert tagged.tags == ["tag1", "tag2"]
    assert choices(tagged) == [("True", True), ("False", False)]
    assert en(tagged).choice_feedback == {"b": "This is the wrong answer."}
    assert en(tagged).explanation == ("You should have selected true.\n\nFeedback on the correct "
                                      'answer "True": This is the right answer.')
    assert notes == ["Moodle ID number 'myid' is not kept"]


@pytest.mark.parametrize(("idnumber", "tags", "comment"), [
    ("", [], ""),
    ("", [], "// A basic comment."),
    ("frog", [], "// A comment with [id:frog] <-- an idnumber."),
    ("", ["frog", "toad"], "// Look tags: [tag:frog] [tag:toad]."),
    ("four", ["add", "basic"], "// [tag:add] [tag:basic] [id:four]"),
    ("four", ["basic", "add"],
     "// [tag:  basic] Here is  \n// a [id:   four   ] que[tag:add   ]stion."),
    ("", [], "// Ceci n\\'est pas une [tag:\n\\ frog]."),
    ("i]d", [], "// [id:i\\]d]."),
    ("", ["t]ag"], "// [tag:t\\]ag]."),
], ids=["blank comment", "nothing in comment", "idnumber only", "tags only", "everything",
        "everything mixed up", "split over line", "escape ] idnumber", "escape ] tag"])
def test_gift_comment_tags_and_idnumber_as_moodle_extracts_them(idnumber, tags, comment):
    """Moodle's extract_idnumber_and_tags_from_comment cases (giftformat_test.php)."""
    assert gift_comment_tags(comment) == (idnumber, tags)


def test_questions_gift_txt():
    drafts, refused = imported("questions.gift.txt")
    # Moodle imports all 9; the essay, matching and short answer do not fit Ringside.
    assert refused == [(2, unsupported("essay")), (5, unsupported("matching")),
                       (34, unsupported("shortanswer"))]
    assert sorted(drafts) == [14, 22, 31, 41, 46, 49]
    numeric, _ = drafts[31]  # the block ends in a stray '";': Moodle writes "_____" there
    assert en(numeric).prompt == 'What is a number from 1 to 5? \\_\\_\\_\\_\\_ ";'
    assert numeric.answer.value == 3 and numeric.answer.tolerance.value == 2.0
    truefalse, notes = drafts[41]
    assert choices(truefalse) == [("True", False), ("False", True)]
    assert en(truefalse).explanation == (
        "This is, of course, a Hitchiker's Guide to the Galaxy reference.\n\n"
        'Feedback on the correct answer "False": You gave the right answer.')
    assert notes == []


def test_questions_in_category_gift_keeps_the_audio_link_and_the_category():
    drafts, refused = imported("questions_in_category.gift.txt")
    assert refused == [(5, unsupported("matching")), (22, unsupported("shortanswer"))]
    greeting, notes = drafts[14]
    assert greeting.kind == "single_choice" and en(greeting).title == "Greeting"
    # The audio stays reachable, so the question stays answerable.
    assert en(greeting).prompt == (
        "[Listen to this greeting:](http://demo.moodle.net/file.php/5/media/bonjour.mp3)\n\n"
        "What language is being spoken?")
    assert choices(greeting) == [("English", False), ("French", True), ("German", False),
                                 ("Spanish", False)]
    assert en(greeting).choice_feedback == {k: "Sorry, listen again." for k in "acd"}
    assert en(greeting).explanation == 'Feedback on the correct answer "French": Yes, well done!'
    assert greeting.tags == ["default-for-new-features"]
    category = ("from Moodle category '$course$/Default for New Features' (offered as tags: "
                "default-for-new-features)")
    assert notes == [category]
    acronym, notes = drafts[27]
    assert en(acronym).prompt == ("Moodle is an acronym for *Modular Object-Oriented Dynamic "
                                  "Learning Environment*.")  # the italic span
    assert choices(acronym) == [("True", True), ("False", False)]
    assert notes == [category]


# ----------------------------------------------------------------------------- Moodle XML


def test_multichoice_xml_lists_the_embedded_audio_and_the_flags():
    drafts, refused = imported("multichoice.xml")
    assert refused == []
    greeting, notes = drafts[12]
    assert greeting.kind == "single_choice" and en(greeting).title == "Greeting"
    assert en(greeting).prompt == "Listen to this greeting:\n\nWhat language is being spoken?"
    assert choices(greeting) == [("[image: British Flag] English", False),
                                 ("[image: French flag] French", True),
                                 ("[image: German flag] German", False),
                                 ("[image: Denmark flag] Danish", False)]
    assert en(greeting).choice_feedback == {k: "Sorry, listen again." for k in "acd"}
    assert en(greeting).explanation == ('Feedback on the correct answer "[image: French flag] '
                                        'French": Yes, well done!')
    assert greeting.tags == ["default-for-testhead", "multichoice"]
    assert notes == [
        "images are not imported (only their description is kept): flag-uk.jpg, "
        "flag-france.jpg, flag-german.jpg, flag-denmark.jpg",
        "the link to the embedded file 'bonjour.mp3' is lost (embedded files are not "
        "imported): check that the question can be answered without it",
        "from Moodle category '$course$/Default for testhead/Multichoice' (offered as tags: "
        "default-for-testhead, multichoice)"]


def test_truefalse_xml_two_questions_with_their_images_and_link():
    drafts, refused = imported("truefalse.xml")
    assert refused == [] and sorted(drafts) == [12, 40]
    false, notes = drafts[12]
    assert en(false).title == "Moodle acronym (False)"
    assert en(false).prompt == ("Moodle [image: Moodle logo] is an acronym for *Modular "
                                "Object-Oriented Dynamic Learning Education*.")
    assert choices(false) == [("True", False), ("False", True)]
    assert en(false).choice_feedback == {"a": "[image: Thumb down] Your answer is incorrect."}
    assert en(false).explanation == (
        "[image: Informations]For further information, see the [documentation about Moodle]"
        "(http://docs.moodle.org/en/About_Moodle).\n\n"
        'Feedback on the correct answer "False": [image: Thumb up] Your answer is correct.')
    assert notes == ["images are not imported (only their description is kept): logo.jpg, "
                     "infos.jpg, thumbdown.jpg, thumbup.jpg",
                     "from Moodle category '$course$/Default for testhead/TrueFalse' (offered "
                     "as tags: default-for-testhead, truefalse)"]
    true, _ = drafts[40]
    assert en(true).title == "Moodle acronym (True)"
    assert en(true).prompt.endswith("*Modular Object-Oriented Dynamic Learning Environment*.")
    assert choices(true) == [("True", True), ("False", False)]
    assert en(true).choice_feedback == {"b": "[image: thumb down] Your answer is incorrect."}


def test_old_image_tag_is_listed():
    drafts, refused = imported("sample_questions_with_old_image_tag.xml")
    assert refused == [(16, unsupported("cloze"))]
    mcq, notes = drafts[36]
    assert en(mcq).title == "mcq with image"
    assert en(mcq).prompt == ('This is a multichoice question with an image in the old "image" '
                              'field that was used in Moodle 1.9')
    assert choices(mcq) == [("wrong answer", False), ("another wrong answer", False),
                            ("right answer", True)]
    assert notes == ["the old <image> field 'moodle.png' is not imported",
                     "from Moodle category '$course$/Default for Test images in backup' "
                     "(offered as tags: default-for-test-images-in-backup)"]


@pytest.mark.parametrize("name", ["category_with_description.xml", "deprecated_category.xml",
                                  "export_category.xml"])
def test_a_category_becomes_tags_and_a_note(name):
    drafts, refused = imported(name)
    assert refused == []
    (question, notes), = drafts.values()
    assert en(question).title == "Alpha Question" and en(question).prompt == (
        "Testing Alpha Question")
    assert choices(question) == [("True", True), ("False", False)]
    assert question.tags == ["alpha"]
    assert notes == ["from Moodle category '$course$/Alpha' (offered as tags: alpha)"]


def test_idnumbers_with_html_characters_are_noted():
    drafts, _ = imported("html_chars_in_idnumbers.xml")
    _, notes = drafts[15]
    assert notes == ["Moodle ID number 'T & F' is not kept",
                     "from Moodle category '$course$/Alpha' (offered as tags: alpha)"]


@pytest.mark.parametrize(("name", "expected", "refused"), [
    ("nested_categories.xml", {37: ["delta", "epsilon", "zeta"]}, []),
    ("nested_categories_with_questions.xml",
     {15: ["iota"], 83: ["iota", "kappa"], 123: ["iota", "kappa", "lambda"],
      163: ["iota", "mu"]}, [(55, unsupported("essay"))]),
    ("old_format_file.xml", {11: ["pi"], 46: ["pi", "rho"]}, []),
    ("categories_reverse_order.xml", {}, [(14, unsupported("essay")),
                                          (51, unsupported("shortanswer"))]),
])
def test_the_category_tree_is_offered_as_tags(name, expected, refused):
    drafts, problems = imported(name)
    assert problems == refused
    assert {line: q.tags for line, (q, _) in drafts.items()} == expected
    for line, (_, notes) in drafts.items():
        assert notes[-1].startswith("from Moodle category '$"), line


def test_cloze_questions_are_refused_with_their_lines():
    assert imported("broken_cloze_questions.xml") == (
        {}, [(line, unsupported("cloze")) for line in (4, 20, 36, 52, 68)])
    assert imported("multianswer.xml") == ({}, [(12, unsupported("cloze"))])


def test_xml_import_strings_of_moodles_tests():
    drafts, refused = imported("xmlformat_test_imports.xml")
    assert refused == [(3, unsupported("description")), (21, unsupported("essay")),
                       (40, unsupported("essay")), (70, unsupported("matching")),
                       (131, sum_refused(200)),  # answers 2 and 4 at 100 % each
                       (223, unsupported("shortanswer")), (309, unsupported("cloze"))]
    assert sorted(drafts) == [188, 256, 282, 332]

    numeric, notes = drafts[188]
    assert en(numeric).title == "Numerical question"
    assert numeric.answer.value == 42 and numeric.answer.tolerance.value == 0.001
    assert en(numeric).explanation == (
        "General feedback: Think Hitch-hikers guide to the Galaxy.\n\n"
        "Imported without a calculator: the answer is 42 ± 0.001 (absolute tolerance). Bind it "
        "to a calculator before publishing.\n\n"
        "Feedback on the correct answer: Well done!\n\n"
        "Other answers in the imported file:\n- 13 ± 1 (0%): What were you thinking?!\n\n"
        "Any other answer: Completely wrong.")
    assert notes == [CATCH_ALL_KEPT, "1 other answer(s) are listed in the explanation: a named "
                     "mistake needs a calculator"]

    for line, extra in ((256, []), (282, ["Moodle ID number 'TestIdNum1' is not kept"])):
        truefalse, notes = drafts[line]
        assert en(truefalse).title == "True false question"
        assert choices(truefalse) == [("True", True), ("False", False)]
        assert en(truefalse).choice_feedback == {"b": "Doh!"}
        assert en(truefalse).explanation == ("General feedback: You should have chosen true.\n\n"
                                             'Feedback on the correct answer "True": Well done!')
        assert notes == extra

    with_file, notes = drafts[332]
    assert en(with_file).prompt == "This text file contains the word Moodle."
    assert notes == ["the link to the embedded file 'moodle.txt' is lost (embedded files are "
                     "not imported): check that the question can be answered without it"]


def test_hints_and_custom_combined_feedback():
    xml = (MOODLE / "xmlformat_test_imports.xml").read_text()
    # Moodle's multichoice test question, made valid (one answer at 100 %, single).
    question = xml[xml.index('  <question type="multichoice">'):]
    question = question[:question.index("</question>") + len("</question>")]
    question = (question.replace("<single>false</single>", "<single>true</single>")
                .replace('<answer fraction="100">\n      <text>4</text>',
                         '<answer fraction="0">\n      <text>4</text>')
                .replace("<p>Your answer is correct.</p>", "<p>Well <b>done</b>.</p>"))
    entries, _ = read_moodle(f"<quiz>\n{question}\n</quiz>".encode())
    draft, notes = to_question(entries[0], "collectives", "mid", "even", "test")
    assert choices(draft) == [("1", False), ("2", True), ("3", False), ("4", False)]
    assert en(draft).explanation == ("The even numbers are 2 and 4.\n\n"
                                     "For any correct response: Well **done**.")
    assert notes == ["2 hint(s) are not imported (Ringside shows no hints): 1. 'Hint 1.'; "
                     "2. 'Hint 2.'",
                     "Moodle's default combined feedback is not kept: for any partially "
                     "correct response, for any incorrect response"]


# ----------------------------------------------------------------------------- the preview


def test_the_preview_lists_each_drafts_notes(client, web_engine):
    admin = browser()
    sign_in(admin, make_user(web_engine, role="editor"))
    page = admin.post("/admin/import", follow_redirects=False, data={
        "csrf_token": admin.cookies.get("csrftoken"), "action": "preview",
        "topic": "collectives", "seniority": "mid"},
        files={"file": ("multichoice.xml", (MOODLE / "multichoice.xml").read_bytes(),
                        "application/xml")})
    assert page.status_code == 200
    notes = re.search(r'<ul class="muted import-notes">(.*?)</ul>', page.text, re.S).group(1)
    items = re.findall(r"<li>(.*?)</li>", notes, re.S)
    assert len(items) == 3
    assert items[1].startswith("the link to the embedded file &#39;bonjour.mp3&#39; is lost")
    grades = admin.post("/admin/import", follow_redirects=False, data={
        "csrf_token": admin.cookies.get("csrftoken"), "action": "preview",
        "topic": "collectives", "seniority": "mid"},
        files={"file": ("g.xml", (MOODLE / "error_invalid_grades.xml").read_bytes(),
                        "application/xml")})
    assert "line 4: grades (0.33) do not match Moodle&#39;s grade options" in grades.text

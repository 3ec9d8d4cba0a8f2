"""quire.retrieval.definition: "What is X?" finds the passage defining X before the one naming X most."""

import pytest

from quire.model import chunk_id
from quire.retrieval.definition import defined_terms, focus
from quire.retrieval.index import HybridIndex
from quire.retrieval.tokenize import Tokenizer


@pytest.mark.parametrize(
    "question,term",
    [
        ("What is SPECTER and how is it trained?", "SPECTER"),
        ("What are hard negatives?", "hard negatives"),
        ("What is the pitch attitude of an airplane?", "pitch attitude"),  # the airplane is not asked about
        ("What does AOA stand for?", "AOA"),
        ("Define stochastic gradient descent.", "stochastic gradient descent"),
        ("Was ist ein Homöomorphismus zwischen zwei topologischen Räumen?", "Homöomorphismus"),
        ("Was versteht man unter einer Überlagerung?", "einer Überlagerung"),
        ("Wie ist die Gauß-Krümmung einer regulären Fläche definiert?", "Gauß-Krümmung"),
        # "Wann heißt X Y?": Y is the term, after the subject, so nothing is cut
        ("Wann nennt man einen topologischen Raum kompakt?", "einen topologischen Raum kompakt"),
        # not definitional: scored exactly as before
        ("How is SPECTER trained?", None),
        ("On which GPU was the model trained?", None),
        ("Wie viele Knoten hat der Literaturgraph?", None),
    ],
)
def test_focus(question, term):
    assert focus(question) == term


@pytest.mark.parametrize(
    "language,text,terms",
    [
        ("en", "We propose SPECTER, a new method to generate document-level embeddings.", ["specter"]),
        ("en", "An airplane's nose-up or nose-down attitude is known as its ‘‘pitch attitude.’’", ["pitch", "attitud"]),
        ("en", "A topological space is a set together with a family of open subsets.", ["topolog", "space"]),
        ("en", "SPECTER: Document-level Representation Learning using Citation-informed Transformers",
         ["specter"]),
        ("en", "AOA stands for angle of attack.", ["aoa"]),
        ("de", "Eine Abbildung d heißt Metrik, wenn gilt:", ["metrik"]),
        ("de", "Ein topologischer Raum ist ein Paar (X, T) bestehend aus einer Menge X und T.", ["topolog", "raum"]),
        ("de", "Die Teilraumtopologie wird auch Spurtopologie genannt.", ["spurtopologi"]),
        # mentions, not definitions
        ("en", "We also include hard distractors as when training SPECTER (for hard negatives).", []),
        ("en", "SPECTER still outperforms a SciBERT model fine-tuned on the end tasks.", []),
        ("de", "Sei (X, T) ein topologischer Raum und x ein Punkt.", []),
    ],
)
def test_defined_terms(language, text, terms):
    assert defined_terms(text, Tokenizer(language)) == ["def:" + t for t in terms]


FILLER = {
    "en": [
        "Citation prediction asks which of two papers a query paper cites; we report MAP and nDCG.",
        "The co-view dataset holds about 30K papers, each with five co-viewed papers and 25 random ones.",
        "Table 2 lists the GLIMMER ablations; removing the abstract from the input costs the most.",
        "GLIMMER reaches a MAP of 83.8 on the co-view task and 84.5 on co-read.",
        "References: Devlin et al. 2019. BERT: pre-training of deep bidirectional transformers.",
    ],
    "de": [
        "Beispiel 3 Sei X = R mit der euklidischen Topologie und M = (a, b). Dann ist der Abschluss [a, b].",
        "Bemerkung 4 Jeder metrische Raum ist hausdorffsch, also auch jeder normierte Raum.",
        "Übungsaufgabe 2 Zeigen Sie, dass die Zariski-Topologie auf R nicht hausdorffsch ist.",
    ],
}

# (language, question, the passage that answers it, a passage that only names the term, more often)
CASES = [
    ("en", "What is GLIMMER and how is it trained?",
     "We propose GLIMMER, a new method to embed scientific documents: a Transformer language model "
     "trained on the citation graph. Unlike existing models, it needs no task-specific fine-tuning.",
     "We also include hard distractors as when training GLIMMER. We also consider training jointly on all "
     "task-specific training data in a multitask training process. GLIMMER still outperforms the fine-tuned "
     "baselines, further showing the versatility of GLIMMER embeddings."),
    ("en", "What is the pitch attitude of an airplane?",
     "An airplane's nose-up or nose-down attitude is known as its pitch attitude. It is set by the "
     "stabilizer and the elevators on the tail.",
     "The crew would use the control column and thrust levers to control the airplane's pitch attitude and "
     "airspeed; the airplane's pitch attitude is then held while the airplane climbs."),
    ("de", "Wann nennt man einen Raum kompakt?",
     "Definition 14 Ein Raum X heißt kompakt, wenn jede offene Überdeckung von X eine endliche "
     "Teilüberdeckung besitzt.",
     "Bemerkung 9 Jeder abgeschlossene Teilraum eines kompakten Raumes ist kompakt. Das Bild eines kompakten "
     "Raumes unter einer stetigen Abbildung ist kompakt, also ist jeder Quotient eines kompakten Raumes kompakt."),
]


def index_of(language, answer, mention):
    index = HybridIndex()
    texts = [mention, *FILLER[language], answer]
    index.add_chunks("doc", [chunk_id("doc", n) for n in range(len(texts))], texts, language=language)
    return index, chunk_id("doc", len(texts) - 1), chunk_id("doc", 0)


@pytest.mark.parametrize("language,question,answer,mention", CASES)
def test_definitional_question_searches_the_defining_passage_first(language, question, answer, mention):
    index, answer_id, mention_id = index_of(language, answer, mention)
    assert [h.id for h in index.search(question, k=2)] == [answer_id, mention_id]


@pytest.mark.parametrize("language,question,answer,mention", CASES)
def test_control_the_same_words_without_the_definitional_question_keep_bm25_order(language, question, answer, mention):
    # The words alone, as a plain query, still put the passage naming them most first: the field
    # changes the ranking only for a question asking what something is.
    index, answer_id, mention_id = index_of(language, answer, mention)
    words = " ".join(index.query_terms(question)[language])
    assert focus(words) is None
    assert index.search(words, k=1)[0].id == mention_id


def test_field_terms_do_not_count_as_matched_question_words():
    # relevance (the share of the question's words a passage holds) is about the words a person sees
    index, answer_id, _ = index_of("en", CASES[0][2], CASES[0][3])
    hit = next(h for h in index.search(CASES[0][1], k=5) if h.id == answer_id)
    assert hit.relevance == 1.0  # both words, and no more than both

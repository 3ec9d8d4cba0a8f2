"""Plain text, CSV, Markdown and HTML, from fixtures written to tmp_path."""

import pytest

from quire.extract import extract
from quire.extract.base import guess_encoding
from fixtures_docs import write

GERMAN = "Grüße aus Köln: Äpfel, Öl und Übermaß kosten 5 €."


@pytest.mark.parametrize(
    "data, encoding",
    [
        (GERMAN.encode("utf-8"), "utf-8"),
        (b"\xef\xbb\xbf" + GERMAN.encode("utf-8"), "utf-8"),
        (GERMAN.encode("utf-16"), "utf-16-le"),  # BOM
        (GERMAN.encode("utf-16-le"), "utf-16-le"),  # no BOM: zero high bytes
        (GERMAN.encode("utf-16-be"), "utf-16-be"),
        (GERMAN.encode("utf-32"), "utf-32-le"),
        (GERMAN.encode("cp1252"), "cp1252"),
        (GERMAN.encode("utf-8")[:-2], "utf-8"),  # file cut inside the euro sign
    ],
)
def test_text_encodings(tmp_path, data, encoding):
    path = write(tmp_path, "notes.txt", data)
    assert guess_encoding(data)[0] == encoding
    ex = extract(path.name, path.read_bytes())
    assert ex.kind == "text"
    assert ex.units[0].text.startswith("Grüße aus Köln: Äpfel, Öl und Übermaß")


def test_text_invalid_bytes_are_replaced_not_fatal():
    data = ("Überall " * 50).encode() + b"\xff" + " fine".encode()
    assert extract("a.txt", data).units[0].text.endswith("\ufffd fine")


def test_arabic_text_and_line_endings():
    ex = extract("ar.txt", "مرحبا بالعالم\r\nسطر ثان\r\n".encode())
    assert ex.units[0].text == "مرحبا بالعالم\nسطر ثان"


def test_csv_groups_of_twenty_with_header(tmp_path):
    rows = ["name;score"] + [f"student {i};{i}" for i in range(1, 46)]
    path = write(tmp_path, "grades.csv", "\n".join(rows).encode("cp1252"))
    ex = extract(path.name, path.read_bytes())
    assert ex.kind == "csv" and ex.meta["delimiter"] == ";"
    # Header is row 1, so data rows are 2..46.
    assert [u.location for u in ex.units] == [{"rows": [2, 21]}, {"rows": [22, 41]}, {"rows": [42, 46]}]
    assert all(u.prefix == "name | score\n" for u in ex.units)
    assert ex.units[0].text.split("\n")[0] == "student 1 | 1"
    assert ex.units[2].text.split("\n")[-1] == "student 45 | 45"


def test_csv_quoted_newlines_and_tabs(tmp_path):
    ex = extract("t.tsv", b'term\tmeaning\nOsmose\t"Diffusion durch\neine Membran"\n')
    assert ex.units[0].text == "Osmose | Diffusion durch eine Membran"
    assert ex.units[0].location == {"rows": [2, 2]}


MARKDOWN = """---
title: "Zellbiologie: Grundlagen"
author:
  - name: Ada Muster
    affiliation: Uni Köln
tags: [ignored, keys]
---
Intro before any heading.

# Setup

Read this first.

## Install

```bash
# not a heading
pip install quire
```

Setext Heading
==============

Under setext.
"""


def test_markdown_sections(tmp_path):
    path = write(tmp_path, "readme.md", MARKDOWN.encode())
    ex = extract(path.name, path.read_bytes())
    got = [(u.location, u.prefix, u.text) for u in ex.units]
    assert got == [
        ({"section": []}, "", "Zellbiologie: Grundlagen\nAda Muster\n\nIntro before any heading."),
        ({"section": ["Setup"]}, "[Section: Setup]\n", "Read this first."),
        ({"section": ["Setup", "Install"]}, "[Section: Setup > Install]\n", "# not a heading\npip install quire"),
        ({"section": ["Setext Heading"]}, "[Section: Setext Heading]\n", "Under setext."),
    ]
    assert ex.meta["title"] == "Zellbiologie: Grundlagen"


HTML = """<!doctype html><html><head><title>Zellbiologie</title><style>p{color:red}</style>
<script>var tracking = "secret";</script></head>
<body><header><a href="/">Site name</a></header><nav><a>Home</a><a>About</a></nav>
<main><article><header><h1>Die Zelle</h1></header>
<p>Zellen sind die kleinsten <b>Einheiten</b> des Lebens.</p>
<div hidden>versteckt</div><p style="display:none">unsichtbar</p><span aria-hidden="true">★</span>
<noscript>enable JS</noscript><template><p>template text</p></template>
<h2>Aufbau</h2><ul><li>Zellkern<li>Mitochondrien</ul>
<table><tr><th>Teil<th>Funktion<tr><td>Ribosom<td>Proteinsynthese</table>
<h3>Membran</h3><p>Die Membran trennt &amp; schützt.</p></article>
<aside>Anzeige</aside></main><footer>© 2024</footer></body></html>"""


def test_html_visible_main_text(tmp_path):
    path = write(tmp_path, "zelle.html", HTML.encode())
    ex = extract(path.name, path.read_bytes())
    assert ex.meta["title"] == "Zellbiologie"
    assert [(u.location, u.prefix) for u in ex.units] == [
        ({"section": ["Die Zelle"]}, "[Section: Die Zelle]\n"),
        ({"section": ["Die Zelle", "Aufbau"]}, "[Section: Die Zelle > Aufbau]\n"),
        ({"section": ["Die Zelle", "Aufbau", "Membran"]}, "[Section: Die Zelle > Aufbau > Membran]\n"),
    ]
    assert ex.units[0].text == "Zellen sind die kleinsten Einheiten des Lebens."
    assert ex.units[1].text == "Zellkern\nMitochondrien\n\nTeil | Funktion\nRibosom | Proteinsynthese"
    assert ex.units[2].text == "Die Membran trennt & schützt."
    everything = " ".join(u.text + u.prefix for u in ex.units)
    for hidden in ("secret", "Site name", "Home", "versteckt", "unsichtbar", "★", "enable JS", "template", "Anzeige", "© 2024", "color"):
        assert hidden not in everything


def test_html_declared_legacy_charset():
    data = '<meta charset="windows-1252"><p>Café für alle</p>'.encode("cp1252")
    assert extract("x.htm", data).units[0].text == "Café für alle"


# Markdown is indexed as rendered: (source, text of the one passage).
MARKDOWN_RENDERED = [
    ("See [the guide](http://x.org 'T') and ![logo](l.png).", "See the guide and logo."),
    ("**bold** _it_ ~~gone~~ `code *x*`", "bold it gone code *x*"),
    ("snake_case_name and 2 * 3 * 4", "snake_case_name and 2 * 3 * 4"),
    ("\\[not a link\\] \\*", "[not a link] *"),
    ("a &amp; b &copy; &nope;", "a & b © &nope;"),
    ("[ref link][r] and [r]\n\n[r]: http://x", "ref link and r"),
    ("Text<span>x</span> <!-- c -->", "Textx"),
    ("$E = mc^2$ and $5 or $6", "$E = mc^2$ and $5 or $6"),
    ("| a | b |\n|---|:-:|\n| c \\| d | **e** |", "a | b\nc | d | e"),
    ("+---+---+\n| a | b |\n| c | d |\n+===+===+\n| e | f |\n+---+---+", "a c | b d\ne | f"),
    ("> quoted\n> text\n\n- a\n- b\n  continued\n\n3. x\n4. y", "quoted\ntext\n\na\nb\ncontinued\n\n3. x\n4. y"),
    ("Inline^[a quick note] here, H~2~O and 2^10^.", "Inline [Note: a quick note] here, H2O and 210."),
    ("Hard  \nbreak\\\nend", "Hard\nbreak\nend"),
    ("<details>\n<summary>More</summary>\n\nHidden *md*\n</details>", "More\n\nHidden md"),
    ("[![badge](b.svg)](http://ci) <https://x.org/a_b>", "badge https://x.org/a_b"),
    ("```\n**kept** [as](written)\n```", "**kept** [as](written)"),
]


@pytest.mark.parametrize("source, text", MARKDOWN_RENDERED)
def test_markdown_rendered_text(source, text):
    assert [u.text for u in extract("n.md", source.encode()).units] == [text]


def test_markdown_footnotes_at_reference_or_where_defined():
    source = "# A\n\nClaim.[^1] More.[^1]\n\n[^1]: Source *here*.\n\n    Second para.\n\n[^x]: Orphan.\n\n# B\n\nEnd."
    ex = extract("n.md", source.encode())
    assert [(u.location["section"], u.text) for u in ex.units] == [
        (["A"], "Claim. [Note: Source here. Second para.] More.\n\n[Note: Orphan.]"),
        (["B"], "End."),
    ]


def test_markdown_pandoc_title_block_opens_the_first_passage():
    ex = extract("n.md", b"% My Title\n% Ann; Bob\n% 2024\n\n# One {#one}\n\nBody")
    assert [(u.location["section"], u.text) for u in ex.units] == [([], "My Title\nAnn, Bob\n2024"), (["One"], "Body")]
    assert ex.meta["title"] == "My Title"


# HTML whitespace follows block and inline semantics: (body, text of the one passage).
HTML_RENDERED = [
    ("<p>un<b>fair</b> and <i>just</i></p>", "unfair and just"),
    ("<p>a<br>b</p>", "a\nb"),
    ("<p>one</p><p>two</p>", "one\n\ntwo"),
    ("<div>x</div><div>y</div>", "x\ny"),
    ("<div>ascended<span class=\"lnum\">90</span></div>", "ascended 90"),
    ("<p>x<script>bad()</script>y <span hidden>no</span>z</p>", "xy z"),
    ("<p>a&nbsp;b <code>x  y</code></p>", "a\xa0b x y"),
    ("<pre>a\n    b</pre>", "a\n    b"),
    ("<p>a<![CDATA[ <b>c</b> ]]>d</p>", "a <b>c</b> d"),
    ("<![if !IE]><p>x</p><![endif]>", "x"),
    ("<p>a <![ b</p>", "a <![ b"),
    ("<ol start=\"3\"><li>a<li>b<ul><li>c</ul></ol>", "3. a\n4. b\nc"),
    ("<table><tr><th rowspan=2>2025<td>Jan<tr><td>Feb</table>", "2025 | Jan\n2025 | Feb"),
    ("<p>Area <math alttext=\"\\pi r^2\"><mi>π</mi><msup><mi>r</mi><mn>2</mn></msup></math>.</p>", "Area \\pi r^2."),
    ("<p><math><semantics><mi>x</mi><annotation encoding=\"application/x-tex\">x^2</annotation></semantics></math></p>", "x^2"),
    (
        "<p>Text<a href=\"#fn1\" class=\"footnote-ref\" role=\"doc-noteref\"><sup>1</sup></a>.</p>"
        "<section class=\"footnotes\"><ol><li id=\"fn1\"><p>The note.<a href=\"#fnref1\" role=\"doc-backlink\">↩︎</a></p></ol></section>",
        "Text [Note: The note.].",
    ),
]


@pytest.mark.parametrize("body, text", HTML_RENDERED)
def test_html_rendered_text(body, text):
    assert [u.text for u in extract("p.html", body.encode()).units] == [text]


def test_html_title_block_header_opens_the_first_passage():
    page = ('<header id="title-block-header"><h1 class="title">Zellen</h1><p class="author">Ada</p>'
            '<p class="date">2024</p></header><p>Body</p>')
    ex = extract("p.html", page.encode())
    assert [(u.location["section"], u.text) for u in ex.units] == [(["Zellen"], "Ada\n\n2024\n\nBody")]

"""The analyser's name (``ANALYSER``) pins its output: a store created under that name serves
its stored terms as the chunks' own (relevance reads them), so any change to what ``analyze``
returns must come with a new name and schema version. This test fails on such a change."""

from __future__ import annotations

import hashlib

from graphctx.text.lexical import ANALYSER, index_terms

SAMPLES = (
    "The Kafka topics' retention policies aren't set by default.",
    "Running runners ran; fishing for 3.14 and v2-beta, e-mail, naïve café, ÆON Straße",
    "근로기준법 제60조 연차 유급휴가는 1년간 80퍼센트 이상 출근한 근로자에게 준다",
    "東京都の人口は約1400万人である。北京和上海",
    "O'Neill's rock'n'roll, don't — won\u2019t; under_score 123abc ABC123 x",
    "",
)
# index_terms of every sample, one per line, SHA-256: pinned when ANALYSER was "lexical-1".
PINNED = {"lexical-1": "b962dfab0cf098155b1e4477d8179035a916bd3d41c29ae25d826a2325a80a7e"}


def test_the_analysers_output_is_the_one_its_name_pins() -> None:
    digest = hashlib.sha256("\n".join(index_terms(s) for s in SAMPLES).encode()).hexdigest()
    assert ANALYSER in PINNED, f"a new analyser name {ANALYSER!r}: pin its output here"
    assert digest == PINNED[ANALYSER], (
        "analyze's output changed: give it a new ANALYSER name and bump the SQLite"
        " SCHEMA_VERSION (stores created under the old name hold the old terms)"
    )

"""/rules/: the original rules page with its figures and worked examples, in both languages."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from rules import examples

SEED_HEADINGS = (
    "得点残高と5点チップ",
    "配牌と開始牌",
    "接続と端の数え方",
    "末端と配置内部のダブル",
    "分岐ダブルの枝を開く",
    "ドロー、上がり、ブロック",
    "次の開始権の競り",
    "対局時計",
    "自動進行のデジタル版",
)


def _rules(client: Client, language: str | None = None) -> str:
    if language:
        client.cookies["django_language"] = language
    response = client.get("/rules/")
    assert response.status_code == 200
    return response.content.decode()


def test_anyone_can_read_the_rules_in_japanese_first(client: Client) -> None:
    html = _rules(client)
    assert '<html lang="ja">' in html
    for heading in SEED_HEADINGS:
        assert f"<h2>{heading}</h2>" in html
    # The seed's own words, not a paraphrase.
    assert "最初のダブルだけが分岐ダブルです。" in html
    assert "ジョッキー自身の落札額だけに15点の支払い割引が付き" in html


def test_the_rules_in_english(client: Client) -> None:
    html = _rules(client, "en")
    assert '<html lang="en">' in html
    assert "<h2>Opening the spinner's branches</h2>" in html
    assert "Only the first double is the spinner" in html
    assert "分岐ダブル" not in html


def test_the_clock_is_explained_in_visible_text_before_anything_else(client: Client) -> None:
    html = _rules(client)
    glance = html.index("早わかり")
    assert html.index('data-testid="time-control"') > glance
    assert html.index('data-testid="time-control"') < html.index("得点残高と5点チップ</h2>")
    assert "各自2分（120秒）" in html
    assert "手番ごとに最初の10秒" in html
    # Visible text, not a tooltip that a touch screen cannot show.
    assert "title=" not in html.split('data-testid="time-control"')[1].split("</dl>")[0]


def test_the_time_control_is_the_platforms_clock(client: Client, settings: Any) -> None:
    settings.MATCH_MAIN_MS = 90_000
    settings.MATCH_DELAY_MS = 5_000
    html = _rules(client, "en")
    assert "1.5 min (90 s) per player" in html
    assert "5 s at the start of every decision" in html


def test_every_section_of_figures_is_drawn_as_boards(client: Client) -> None:
    html = _rules(client)
    figures = re.findall(r'data-figure="(\w+)-\d+"', html)
    assert figures.count("ends") == 4
    assert figures.count("doubles") == 3
    assert figures.count("branches") == 5
    assert html.count('<svg class="board__svg"') == 12
    # Drawn, not tapped: no position of a figure is a button.
    assert 'role="button"' not in html


def test_the_auction_examples_pay_with_the_jockey_discount(client: Client) -> None:
    html = _rules(client)
    auctions = re.findall(r'<ol class="rules-auction".*?</ol>', html, re.S)
    assert len(auctions) == 3
    # Jockey bids 20 and is accepted: it pays 20 − 15 = 5, the opponent receives only 5.
    assert "ジョッキーが20 − 15 = 5点を払い" in auctions[0]
    balances = [re.findall(r"ジョッキー (\d+)点 · 相手 (\d+)点", a)[-1] for a in auctions]
    assert balances == [("145", "155"), ("165", "135"), ("150", "150")]
    # The opponent's 15 accepted by the jockey: the opponent pays all 15.
    assert "相手が15点を払い" in auctions[1]
    # Declined: the jockey opens for free.
    assert "辞退：ジョッキーが無料で開始します" in auctions[2]


def test_the_block_and_clock_examples_are_the_rules_numbers(client: Client) -> None:
    html = _rules(client)
    assert re.findall(r'class="rules-block" data-owed="(\d+)"', html) == ["20", "15", "0"]
    for pips in (4, 18, 17, 6):
        assert f"目の合計 {pips}" in html
    assert re.findall(r'data-used="(\d+)"', html) == ["0", "3"]
    assert "持ち時間：120秒 → 120秒" in html and "持ち時間：120秒 → 117秒" in html


def test_a_figure_that_breaks_the_rules_is_refused() -> None:
    with pytest.raises(ValueError, match="does not fit"):
        examples.build_layout((((1, 4), None), ((2, 3), ((1, 4), "high"))))
    with pytest.raises(ValueError, match="not the opening tile"):
        examples.build_layout((((1, 4), None), ((2, 2), None)))
    # A branch of the spinner before both straight sides are taken is no legal position.
    with pytest.raises(ValueError, match="does not fit"):
        examples.build_layout((((1, 1), None), ((1, 5), ((1, 1), "branch_a"))))

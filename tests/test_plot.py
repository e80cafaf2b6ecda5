"""The two pictures of ``allpairs compare --plot``: files written whole, in the asked format, or not at all."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import datasets.synthetic
from allpairs.errors import OutputError, UsageError
from allpairs.report.chords_figure import MAX_CHORDS, chords_figure, chords_readable
from allpairs.report.clusters_figure import clusters_figure
from allpairs.report.plot import check_plot_path, chords_path, plot_chords, plot_comparison, plot_scurve
from allpairs.report.scurve_figure import scurve_figure
from allpairs.report import compare

# matplotlib is in the test extra: without it these tests fail rather than skip, except
# test_without_matplotlib_the_error_says_how_to_install_it, which needs none.

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def comparison():
    docs = datasets.synthetic.documents(n=300, seed=0)
    return compare(docs, 0.5, shingle="word:3", num_perm=48, bands=12, rows=4, seed=1, jobs=1)


def is_png(path) -> bool:
    data = path.read_bytes()
    return len(data) > len(PNG_SIGNATURE) and data.startswith(PNG_SIGNATURE)


def is_svg(path) -> bool:
    return ET.parse(path).getroot().tag.endswith("svg")


def test_the_fixture_has_both_kinds_of_candidate(comparison):
    # The chord picture draws verified and rejected candidates differently: both must occur.
    assert comparison.candidate_verified.any() and not comparison.candidate_verified.all()
    assert any(b.exact for b in comparison.bins)
    # ... and the picture draws what LSH missed: some pairs must be missed.
    assert comparison.missed > 0


def test_png_writes_the_scurve_and_the_chords_beside_it(comparison, tmp_path):
    written = plot_comparison(comparison, tmp_path / "out.png")
    assert written == [tmp_path / "out.png", tmp_path / "out-chords.png"]
    assert all(is_png(p) for p in written)
    assert sorted(os.listdir(tmp_path)) == ["out-chords.png", "out.png"]


def test_svg_pictures_parse_as_xml(comparison, tmp_path):
    written = plot_comparison(comparison, str(tmp_path / "out.SVG"))
    assert [p.name for p in written] == ["out.SVG", "out-chords.SVG"]
    assert all(is_svg(p) for p in written)


def test_each_picture_alone_writes_only_its_file(comparison, tmp_path):
    assert plot_scurve(comparison, tmp_path / "curve.svg") == tmp_path / "curve.svg"
    assert plot_chords(comparison, tmp_path / "chords.png") == tmp_path / "chords.png"
    assert is_svg(tmp_path / "curve.svg") and is_png(tmp_path / "chords.png")
    assert sorted(os.listdir(tmp_path)) == ["chords.png", "curve.svg"]


def test_pictures_are_readable_by_others_like_any_new_file(comparison, tmp_path):
    mask = os.umask(0o022)
    try:
        plot_scurve(comparison, tmp_path / "curve.png")
    finally:
        os.umask(mask)
    assert (tmp_path / "curve.png").stat().st_mode & 0o777 == 0o644


def test_chords_path_puts_chords_before_the_suffix(tmp_path):
    assert chords_path("out.png").name == "out-chords.png"
    assert chords_path(tmp_path / "a.b" / "run.1.svg") == tmp_path / "a.b" / "run.1-chords.svg"


@pytest.mark.parametrize("name, named", [("out.jpg", "'.jpg'"), ("out", "no suffix"), ("out.png.gz", "'.gz'")])
def test_an_unknown_suffix_is_a_usage_error_naming_it_and_the_choices(comparison, tmp_path, name, named):
    for draw in (plot_comparison, plot_scurve, plot_chords):
        with pytest.raises(UsageError) as e:
            draw(comparison, tmp_path / name)
        assert named in str(e.value) and ".png or .svg" in str(e.value)
    assert os.listdir(tmp_path) == []


def test_a_bad_target_is_refused_before_any_drawing(tmp_path):
    check_plot_path(tmp_path / "out.svg")
    with pytest.raises(UsageError, match="'.pdf'"):
        check_plot_path(tmp_path / "out.pdf")
    with pytest.raises(OutputError, match="does not exist"):
        check_plot_path(tmp_path / "no" / "out.png")
    (tmp_path / "out-chords.png").mkdir()
    with pytest.raises(OutputError, match="directory"):
        check_plot_path(tmp_path / "out.png")


def test_a_missing_directory_is_an_output_error(comparison, tmp_path):
    with pytest.raises(OutputError, match="does not exist"):
        plot_comparison(comparison, tmp_path / "no" / "out.png")


def test_a_directory_as_target_is_an_output_error(comparison, tmp_path):
    (tmp_path / "d.png").mkdir()
    with pytest.raises(OutputError, match="directory"):
        plot_scurve(comparison, tmp_path / "d.png")


def test_a_failure_while_drawing_leaves_nothing_and_keeps_old_files(comparison, tmp_path, monkeypatch):
    from matplotlib.figure import Figure

    (tmp_path / "out.png").write_bytes(b"old picture")
    real = Figure.savefig
    calls = []

    def second_fails(self, fname, *args, **kwargs):
        calls.append(fname)
        if len(calls) == 2:  # the chords, after the S-curve was rendered
            fname.write(b"half a picture")
            raise RuntimeError("disk full")
        return real(self, fname, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", second_fails)
    with pytest.raises(RuntimeError, match="disk full"):
        plot_comparison(comparison, tmp_path / "out.png")
    assert os.listdir(tmp_path) == ["out.png"]
    assert (tmp_path / "out.png").read_bytes() == b"old picture"


def test_without_matplotlib_the_error_says_how_to_install_it(comparison, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # import now raises ImportError
    with pytest.raises(UsageError, match=r"pip install .*\[plot\]'"):
        plot_comparison(comparison, tmp_path / "out.png")
    assert os.listdir(tmp_path) == []


def test_importing_the_library_loads_neither_matplotlib_nor_the_cli_toolkit():
    code = ("import sys, allpairs, allpairs.report.plot, allpairs.report; "
            "print(sorted(m for m in ('matplotlib', 'typer', 'rich') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_chords_are_capped_most_similar_first_and_the_title_says_how_many_were_left(comparison):
    total = len(comparison.candidate_similarity)
    fig = chords_figure(comparison, 10)
    title = fig.axes[0].get_title().replace("\n", " ")
    assert f"the 10 most similar drawn, {total - 10:,} less similar left out" in title
    drawn = [c for c in fig.axes[0].collections
             if c.__class__.__name__ == "LineCollection" and "missed" not in c.get_label()]
    assert sum(len(c.get_segments()) for c in drawn) == 10
    assert f"all {total:,} drawn" in chords_figure(comparison, MAX_CHORDS).axes[0].get_title().replace("\n", " ")


def test_a_comparison_without_any_pair_or_candidate_still_draws(tmp_path):
    empty = compare(["alpha beta gamma", "delta epsilon zeta", "eta theta iota"], 0.5, shingle="word:1",
                    num_perm=16, bands=4, rows=4, jobs=1)
    assert empty.exact_pairs == 0 and len(empty.candidate_similarity) == 0
    written = plot_comparison(empty, tmp_path / "empty.png")
    assert all(is_png(p) for p in written)


def test_directories_of_path_ids_are_marked_on_the_circle(comparison):
    # Ids as a directory reader gives them: three top-level directories, in path order.
    dirs = ["alpha", "beta", "gamma"]
    comparison_with_paths = type(comparison)(**{**comparison.__dict__,
                                                "ids": [f"{dirs[i * 3 // len(comparison.ids)]}/f{i}.txt"
                                                        for i in range(len(comparison.ids))]})
    labels = [t.get_text() for t in chords_figure(comparison_with_paths, MAX_CHORDS).axes[0].texts]
    assert labels == ["alpha/ (100)", "beta/ (100)", "gamma/ (100)"]


def legend_texts(fig) -> list[str]:
    return [t.get_text() for t in fig.axes[0].get_legend().get_texts()]


def with_path_ids(comparison):
    dirs = ["alpha", "beta", "gamma"]
    return type(comparison)(**{**comparison.__dict__, "ids": [f"{dirs[i * 3 // len(comparison.ids)]}/f{i}.txt"
                                                               for i in range(len(comparison.ids))]})


def test_the_chords_show_the_pairs_lsh_missed_dashed_and_counted_in_the_legend(comparison):
    fig = chords_figure(with_path_ids(comparison), MAX_CHORDS)
    missed = [c for c in fig.axes[0].collections if "missed" in (c.get_label() or "")]
    assert len(missed) == 1 and len(missed[0].get_segments()) == comparison.missed
    assert missed[0].get_linestyle()[0][1] is not None  # dashed
    assert f"J ≥ 0.5: missed by LSH ({comparison.missed:,} pairs of distinct sets)" in legend_texts(fig)
    title = fig.axes[0].get_title().replace("\n", " ")
    assert f"{comparison.missed:,} pairs of distinct sets with J ≥ 0.5 missed by LSH" in title


def test_the_chord_picture_counts_the_documents_the_table_counts(tmp_path):
    docs = ["alpha beta gamma delta", "alpha beta gamma delta epsilon", "", "zeta eta theta iota"]
    c = compare(docs, 0.5, shingle="word:1", num_perm=16, bands=8, rows=2, jobs=1)
    assert (c.documents, c.joined) == (4, 3)
    title = chords_figure(c, MAX_CHORDS).axes[0].get_title().replace("\n", " ")
    assert "3 documents joined (of 4 read)" in title
    from allpairs.report import render_table
    assert "4 documents, 1 skipped, 3 joined" in render_table(c)


def test_unreadable_circles_become_labelled_clusters_of_true_pairs(comparison, tmp_path):
    # 300 documents named by number, no directories: a hairball as chords.
    assert not chords_readable(comparison) and chords_readable(with_path_ids(comparison))
    fig = clusters_figure(comparison)
    title = fig.axes[0].get_title().replace("\n", " ")
    assert "largest clusters of pairs with J ≥ 0.5" in title and "would be unreadable" in title
    labels = {t.get_text() for t in fig.axes[0].texts}
    assert labels & set(map(str, comparison.ids)), "documents are labelled"
    assert any("missed" in t for t in legend_texts(fig))
    plot_chords(comparison, tmp_path / "c.png")
    assert is_png(tmp_path / "c.png")


def test_lines_input_draws_clusters_labelled_by_the_lines(tmp_path):
    from allpairs.corpus import read_lines

    f = tmp_path / "pw.txt"
    words = ["password", "password1", "password12", "passw0rd", "dragon", "dragon1", "dragons", "qwerty"]
    f.write_text("\n".join(words * 6 + [f"x{i}yz{i}" for i in range(60)]) + "\n")
    c = compare(read_lines(f), 0.6, num_perm=16, bands=8, rows=2, jobs=1)
    assert not chords_readable(c)
    labels = {t.get_text() for t in clusters_figure(c).axes[0].texts}
    assert "password1 ×6" in labels and "dragon ×6" in labels


def drawn_texts(fig):
    """Every text the renderer draws: titles, labels, legends, ticks of the axes that show them."""
    texts = list(fig.texts)
    for ax in fig.axes:
        texts += [*ax.texts, ax.title, ax._left_title, ax._right_title]
        if ax.get_legend() is not None:
            texts += [*ax.get_legend().get_texts(), ax.get_legend().get_title()]
        if ax.axison:
            for axis in (ax.xaxis, ax.yaxis):
                lo, hi = sorted(axis.get_view_interval())
                shown = [label for label, at in zip(axis.get_ticklabels(), axis.get_majorticklocs())
                         if lo - 1e-9 * (hi - lo) <= at <= hi + 1e-9 * (hi - lo)]  # ticks outside the view are not drawn
                texts += [axis.label, *shown, axis.get_offset_text()]
    return [t for t in texts if t.get_visible() and t.get_text()]


def texts_outside(fig) -> list[tuple[str, tuple]]:
    """The texts whose box, as the Agg renderer draws the figure, is not wholly inside the figure."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    inside = fig.bbox.padded(0.5)  # half a pixel of rounding
    titles = [ax.title for ax in fig.axes if ax.get_title()]
    out = []
    for t in drawn_texts(fig):
        box = t.get_window_extent(renderer)
        if not (inside.x0 <= box.x0 and box.x1 <= inside.x1 and inside.y0 <= box.y0 and box.y1 <= inside.y1):
            out.append((t.get_text(), tuple(round(v) for v in box.extents)))
        elif any(t is not title and box.overlaps(title.get_window_extent(renderer)) for title in titles):
            out.append((t.get_text(), "covers the title"))
    return out


def with_ids(comparison, ids):
    return type(comparison)(**{**comparison.__dict__, "ids": list(ids)})


@pytest.fixture(scope="module")
def small_comparison():
    docs = datasets.synthetic.documents(n=300, seed=0)[:30]
    return compare(docs, 0.5, shingle="word:3", num_perm=48, bands=12, rows=4, seed=1, jobs=1)


def test_every_text_of_every_picture_lies_within_the_figure(comparison, small_comparison, tmp_path):
    from allpairs.corpus import read_lines

    long_paths = with_ids(small_comparison, [f"/usr/lib/go/src/net/http/internal/testdata/f{i}.go"
                                             for i in range(len(small_comparison.ids))])
    f = tmp_path / "pw.txt"
    f.write_text("\n".join([f"a rather long line of text that goes on and on, number {i % 7}" for i in range(60)]
                           + [f"x{i}yz{i}" for i in range(60)]) + "\n")
    lines = compare(read_lines(f), 0.6, num_perm=16, bands=8, rows=2, jobs=1)
    # Two short runs at the top, whose names point up at the title, as six Go directories give.
    long_roots = type(comparison)(**{**comparison.__dict__, "roots": [
        f"/root/.cache/allpairs/go1.27.3/src/{'bytes' if i < 6 else 'strings' if i < 12 else 'math/rand'}"
        for i in range(len(comparison.ids))]})
    figures = {"S-curve": scurve_figure(comparison), "arcs": chords_figure(with_path_ids(comparison), MAX_CHORDS),
               "arcs of PATHs": chords_figure(long_roots, MAX_CHORDS),
               "labelled": chords_figure(long_paths, MAX_CHORDS), "clusters": clusters_figure(comparison),
               "lines": clusters_figure(lines)}
    for name, fig in figures.items():
        assert texts_outside(fig) == [], name


def test_long_ids_keep_their_end_where_they_differ_not_their_common_start(small_comparison):
    ids = [f"/usr/local/go/src/net/http/{name}.go" for name in ("server", "client", "transport", "request")]
    ids += [f"/usr/local/go/src/net/http/internal/testdata/file{i}.go" for i in range(len(small_comparison.ids) - 4)]
    labels = [t.get_text().split(" ×")[0] for t in chords_figure(with_ids(small_comparison, ids),
                                                                    MAX_CHORDS).axes[0].texts]
    assert labels[:4] == ["…/net/http/server.go", "…/net/http/client.go", "…/http/transport.go",
                          "…/net/http/request.go"]
    assert len(set(labels)) == len(labels), "two documents with the same label"
    assert all(len(label) <= 22 for label in labels)


def test_lines_that_differ_at_their_start_keep_their_start():
    from allpairs.report.draw import shortened

    tails = ["1 apple pie with a crust of butter and flour", "2 apple pie with a crust of butter and flour"]
    assert shortened(tails, 22) == ["1 apple pie with a cr…", "2 apple pie with a cr…"]
    heads = ["the same long beginning of a title, part 1", "the same long beginning of a title, part 2"]
    assert shortened(heads, 22) == ["…of a title, part 1", "…of a title, part 2"]
    assert shortened(["short", "x" * 30], 22) == ["short", "…" + "x" * 21]


def all_texts(fig) -> list[str]:
    ax = fig.axes[0]
    legend = [t.get_text() for t in ax.get_legend().get_texts()] if ax.get_legend() else []
    return [ax.get_title(), *legend, *(t.get_text() for t in ax.texts)]


def test_every_count_of_pairs_says_whether_it_counts_documents_or_distinct_sets(tmp_path):
    # Lines repeated 6 to 9 times: pairs of documents and pairs of distinct sets differ everywhere.
    from allpairs.corpus import read_lines

    f = tmp_path / "l.txt"
    f.write_text("\n".join([f"a rather long line of text that goes on and on, number {i % 7}" for i in range(60)]
                           + [f"x{i}yz{i}" for i in range(60)]) + "\n")
    c = compare(read_lines(f), 0.6, num_perm=18, bands=3, rows=6, seed=3, jobs=1)
    assert c.missed == 2 and c.exact_pairs != len(c.true_found) == 21
    pictures = {"S-curve": scurve_figure(c), "clusters": clusters_figure(c),
                "chords": chords_figure(with_ids(c, [f"d/{k // 40}/{k}" for k in range(len(c.ids))]), MAX_CHORDS)}
    unnamed = re.compile(r"\d (?:candidate )?pairs?\b(?! of (?:documents|distinct sets))")
    for name, fig in pictures.items():
        for text in all_texts(fig):  # a title's line may wrap inside "pairs of distinct sets"
            assert not unnamed.search(text.replace("\n", " ")), (name, text)
    title = pictures["S-curve"].axes[0].get_title().replace("\n", " ")
    assert f"{c.exact_pairs:,} pairs of documents with J ≥ 0.6, {c.lsh_pairs:,} found" in title
    clusters = " ".join(all_texts(pictures["clusters"])).replace("\n", " ")
    assert "60 documents (7 distinct sets), 21 pairs of distinct sets" in clusters
    assert "(60 of the 120 documents joined are in one)" in clusters
    assert "LSH missed 2 of the 21 pairs of distinct sets" in clusters
    chords = " ".join(all_texts(pictures["chords"])).replace("\n", " ")
    assert "J ≥ 0.6: missed by LSH (2 pairs of distinct sets)" in chords


def test_several_paths_are_grouped_on_the_circle_as_the_directories_of_one_root_are(tmp_path):
    # The same files, read as one root with --include and as three PATHs: the same arcs, named by
    # the directory (one root) or by the PATH as given (several).
    from allpairs.corpus import read_directory

    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()
    for d in ("bytes", "strings", "rand"):
        (tmp_path / "src" / d).mkdir(parents=True)
        for k in range(20):
            (tmp_path / "src" / d / f"f{k}.go").write_text(" ".join(words[k % 12:] + [d, str(k)]))
        (tmp_path / "src" / d / "notes.txt").write_text("left out by --include")
    one = compare(read_directory(tmp_path / "src", include=["*.go"]), 0.5, shingle="word:1", num_perm=16,
                  bands=8, rows=2, jobs=1)
    several = compare(read_directory([tmp_path / "src" / d for d in ("bytes", "rand", "strings")],
                                     include=["*.go"]), 0.5, shingle="word:1", num_perm=16, bands=8, rows=2, jobs=1)
    assert chords_readable(one) and chords_readable(several)
    arcs = [t.get_text() for t in chords_figure(one, MAX_CHORDS).axes[0].texts]
    assert arcs == ["bytes/ (20)", "rand/ (20)", "strings/ (20)"]
    arcs = [t.get_text() for t in chords_figure(several, MAX_CHORDS).axes[0].texts]
    assert arcs == ["…/src/bytes/ (20)", "…/src/rand/ (20)", "…/src/strings/ (20)"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="ab/ .x", max_size=40), min_size=1, max_size=6), st.integers(4, 30))
def test_shortened_labels_fit_and_are_a_start_or_an_end_of_the_text(texts, width):
    from allpairs.report.draw import shortened

    for text, short in zip(texts, shortened(texts, width), strict=True):
        assert len(short) <= width
        if len(text) <= width:
            assert short == text
        else:
            assert (short.endswith("…") and text.startswith(short[:-1])) or \
                   (short.startswith("…") and text.endswith(short[1:]) and len(short) > 1)


def pairs_and_triples_comparison(tmp_path):
    """Lines of many two-document clusters (a word and its plural) and a few larger ones."""
    from allpairs.corpus import read_lines

    import random

    rng = random.Random(7)
    bases = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(9)) for _ in range(33)]
    f = tmp_path / "words.txt"
    words = [w for base in bases[:30] for w in (base, base + "s")]
    words += [w for base in bases[30:] for w in (base, base + "x", base + "xy", base + "xyz")]
    f.write_text("\n".join(words) + "\n")
    return compare(read_lines(f), 0.6, num_perm=16, bands=8, rows=2, jobs=1)


def test_cluster_labels_are_level_and_clusters_of_two_share_one_panel(tmp_path):
    c = pairs_and_triples_comparison(tmp_path)
    fig = clusters_figure(c)
    ax = fig.axes[0]
    names = {line.strip() for line in (tmp_path / "words.txt").read_text().splitlines()}
    labels = [t for t in ax.texts if t.get_text() in names]
    assert len(labels) >= 3 * 4 + 14 * 2
    assert all(t.get_rotation() == 0 for t in labels), "no label is turned, so none is upside down"
    captions = [t.get_text() for t in ax.texts if "distinct set" in t.get_text()]
    assert not [t for t in captions if t.startswith("2 documents")], "no circle for a cluster of two"
    assert "30 clusters of two distinct sets, 14 shown" in captions
    assert texts_outside(fig) == []


def test_a_banding_that_predicts_every_bin_says_so_and_names_one_that_shows_the_curve(comparison):
    from allpairs.report.comparison import banding_notes, curve_banding, render_table

    flat = compare(datasets.synthetic.documents(n=300, seed=0), 0.5, shingle="word:3", num_perm=48, seed=1, jobs=1)
    assert min(b.predicted for b in flat.bins if b.exact) >= 0.99  # the default banding, chosen for recall at t
    b, r = curve_banding(0.5, 48)
    assert b * r <= 48 and abs((1 / b) ** (1 / r) - 0.5) < 0.05
    note = f"-b {b} -r {r}"
    assert any(note in line for line in banding_notes(flat)) and note in render_table(flat)
    fig = scurve_figure(flat)
    assert any(note in t.get_text() for t in fig.axes[0].texts)
    assert any(f"{b} bands × {r} rows" in t for t in legend_texts(fig)), "the suggested curve is drawn"
    assert texts_outside(fig) == []
    assert not any("-b" in line for line in banding_notes(comparison)), "12 × 4 shows the curve already"


def test_a_bin_far_below_the_curve_names_the_clusters_its_pairs_lie_in(comparison):
    from allpairs.report.comparison import Bin, banding_notes

    bins = [Bin(b.lo, b.hi, b.exact, b.found, b.predicted) for b in comparison.bins]
    low = next(b for b in bins if b.exact >= 20)
    low.found, low.predicted = low.exact // 2, 0.9  # far more than 3 standard errors below
    lines = banding_notes(type(comparison)(**{**comparison.__dict__, "bins": bins}))
    far = [line for line in lines if line.startswith(f"[{low.lo:.2f}")]
    assert far and "standard errors below" in far[0] and "cluster" in far[0] and "not independent" in far[0]
    assert not [line for line in banding_notes(comparison) if "standard errors below" in line]


@given(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30)), max_size=40))
def test_the_cluster_picture_groups_documents_as_the_naive_union_find_does(edges):
    from allpairs.pairs.clusters import linked_groups
    import naive

    left = np.array([a for a, _ in edges], np.int64)
    right = np.array([b for _, b in edges], np.int64)
    on_edge = sorted({v for edge in edges for v in edge})
    expected = naive.clusters(31, edges) + [[v] for v in on_edge if all(a == b for a, b in edges if v in (a, b))]
    got = sorted(linked_groups(left, right).values(), key=lambda g: (-len(g), g[0]))
    assert got == sorted(expected, key=lambda g: (-len(g), g[0]))
    assert all(root == members[0] for root, members in linked_groups(left, right).items())

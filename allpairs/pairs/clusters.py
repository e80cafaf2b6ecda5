"""Stage 6b: duplicate clusters, the connected components of the verified pairs.

Two documents are in one cluster when a chain of pairs that reached the
threshold links them (for containment, in either direction). Unlike
clustering LSH buckets, only verified pairs make a link. Components are taken
over distinct sets (identical documents share a set) and expanded to
documents; a document in no pair is in no cluster.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import BinaryIO, Callable, Iterator, Sequence

import numpy as np

from ._clusters_kernel import components, flatten, union_sets
from .._plural import count
from ..errors import UsageError, require_extra
from ..order import OrderedSets
from ..output.escape import csv_delimiter, csv_field, csv_line_end, json_field, tsv_field
from .result import FORMATS, Pairs, sequence_item
from .summary import SHOWN, Summarised


@dataclass(repr=False)
class Clusters(Summarised):
    """Clusters of two or more documents, largest first (ties: smallest first member), members ascending.

    ``clusters[c]`` is cluster ``c``'s list of ids (positions when there are no
    ``ids``), negative ``c`` counting from the end, ``clusters[a:b]`` a list of
    them; iteration gives them in order. :meth:`members` gives a cluster's
    positions, :meth:`to_pandas` the long form (id, cluster, cluster_size).
    Cluster ``c`` is ``docs[indptr[c]:indptr[c + 1]]`` (int32 document positions; int64 offsets).
    """

    indptr: np.ndarray
    docs: np.ndarray
    #: Each document's id, by position (``res.ids``), or None.
    ids: Sequence | None = None

    ID_COLUMNS = 0  # the summary's ids column is a list already quoted
    def __len__(self) -> int:
        return len(self.indptr) - 1

    def members(self, c: int) -> np.ndarray:
        """The positions of cluster ``c``'s documents, ascending (int32); negative ``c`` counts from the end,
        as ``clusters[c]`` does."""
        return sequence_item(c, len(self), self._members, "cluster", "clusters")

    def _members(self, c: int) -> np.ndarray:
        return self.docs[self.indptr[c]:self.indptr[c + 1]]

    def _named(self, c: int) -> list:
        docs = self._members(c).tolist()
        return docs if self.ids is None else [self.ids[d] for d in docs]

    def __getitem__(self, c):
        return sequence_item(c, len(self), self._named, "cluster", "clusters")

    def __iter__(self) -> Iterator[list]:
        return map(self._named, range(len(self)))

    def _summary(self) -> tuple[str, tuple[str, ...], list[tuple], int]:
        title = (f"Clusters: {count(len(self), 'cluster')} of {count(len(self.docs), 'document')}, "
                 f"the largest of {self.largest:,}")
        rows = []
        for c in range(min(len(self), SHOWN)):
            names = self[c]
            rows.append((c + 1, len(names), ", ".join(map(repr, names[:SHOWN])) + (", ..." if len(names) > SHOWN
                                                                                    else "")))
        return title, ("cluster", "size", "ids"), rows, len(self)

    def to_pandas(self, singletons: bool = False):
        """The long form as a pandas DataFrame: ``id`` (the position without ids), ``cluster`` (from 1,
        the largest first) and ``cluster_size`` per clustered document (see :meth:`rows`; ``singletons``
        needs the ids, to know every document). Needs pandas."""
        pandas = require_extra("pandas", "to_pandas")
        if singletons and self.ids is None:
            raise UsageError("singletons=True needs the ids, to know every document; take res.clusters of a join")
        doc, cluster, size = self.rows(len(self.ids) if self.ids is not None else 0, singletons)
        docs = doc.tolist()
        return pandas.DataFrame({"id": docs if self.ids is None else [self.ids[d] for d in docs],
                                 "cluster": cluster, "cluster_size": size})

    def to_series(self, singletons: bool = False, name: str = "cluster"):
        """Each document's cluster number as a pandas Series indexed by the documents' ids, to join back to
        the input in one call: ``df.join(res.clusters.to_series())`` for a join of ``df[column]``.

        A document in no cluster gets <NA> (a nullable Int64 column), or with
        ``singletons`` a number of its own after the clusters', in input order
        (as :meth:`rows`). Needs pandas and the ids (``res.clusters`` of a join).
        """
        pandas = require_extra("pandas", "to_series")
        if self.ids is None:
            raise UsageError("to_series needs the ids, to know every document; take res.clusters of a join")
        n = len(self.ids)
        doc, cluster, _ = self.rows(n, singletons)
        labels = pandas.array([pandas.NA] * n, dtype="Int64")
        labels[doc] = cluster
        return pandas.Series(labels, index=pandas.Index(list(self.ids)), name=name)

    @property
    def largest(self) -> int:
        """Documents in the largest cluster (0 when there is none)."""
        return int(self.indptr[1] - self.indptr[0]) if len(self) else 0

    def rows(self, n_docs: int, singletons: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The long form: each clustered document, its cluster's number and size (int64 arrays), by cluster.

        Clusters are numbered from 1 in their order (the largest first; ties:
        the one whose first document comes first), documents ascending within
        one, so the numbering is the same on every run. With ``singletons``,
        every other document of the ``n_docs`` follows as a cluster of its own
        (size 1), numbered on in input order.
        """
        sizes = np.diff(self.indptr)
        doc = self.docs.astype(np.int64)
        cluster = np.repeat(np.arange(1, len(self) + 1, dtype=np.int64), sizes)
        size = np.repeat(sizes, sizes).astype(np.int64)
        if singletons:
            alone = np.ones(n_docs, bool)
            alone[doc] = False
            rest = np.flatnonzero(alone)
            doc = np.concatenate([doc, rest])
            cluster = np.concatenate([cluster, len(self) + 1 + np.arange(len(rest), dtype=np.int64)])
            size = np.concatenate([size, np.ones(len(rest), np.int64)])
        return doc, cluster, size


def find_clusters(pairs: Pairs, ids: Sequence | None = None) -> Clusters:
    """The connected components with two or more documents of a self-join's pairs (named by ``ids``).

    Pairs kept on a MinHash estimate are refused: clusters are built from verified pairs only.
    """
    if pairs.estimated:
        raise UsageError("clusters are built from verified pairs only; drop {{verify=estimate}}", param="verify")
    if pairs.n_left is not None:
        raise UsageError("clusters are for a self-join; drop {{against}} or {{clusters=True}}", param="clusters")
    s = pairs.sets
    comp = components(s.num_sets, pairs.set_left, pairs.set_right)
    linked = pairs.group_ok.copy()  # documents of a set linked to nothing are alone unless identical ones pair
    linked[pairs.set_left] = True
    linked[pairs.set_right] = True
    return clusters_of(s, comp, linked, ids)


def linked_groups(left: np.ndarray, right: np.ndarray) -> dict[int, list[int]]:
    """The connected components of the graph with the edges ``left[k]`` -- ``right[k]`` (any ints, e.g.
    documents), by the union-find of :func:`find_clusters`: smallest member -> its members, ascending.
    Only nodes on an edge appear."""
    left, right = np.asarray(left, np.int64), np.asarray(right, np.int64)
    nodes, inverse = np.unique(np.concatenate([left, right]), return_inverse=True)
    ends = inverse.reshape(-1).astype(np.int32)
    comp = components(np.int64(len(nodes)), ends[:len(left)], ends[len(left):])
    groups: dict[int, list[int]] = {}
    for node, root in zip(nodes.tolist(), comp.tolist()):  # nodes ascending: each root is its smallest member
        groups.setdefault(nodes[root].item(), []).append(node)
    return groups


class SetUnion:
    """Union–find over the distinct sets as pairs stream past: memory in the sets, not in the pairs.

    :meth:`add` a block of pairs of distinct sets at a time; :meth:`clusters`
    gives what :func:`find_clusters` gives for all of them at once.
    """

    def __init__(self, sets: OrderedSets, group_ok: np.ndarray):
        self.sets = sets
        self.parent = np.arange(sets.num_sets, dtype=np.int32)
        self.linked = np.asarray(group_ok, np.bool_).copy()

    def add(self, left: np.ndarray, right: np.ndarray) -> None:
        union_sets(self.parent, left, right)
        self.linked[left] = True
        self.linked[right] = True

    def clusters(self, ids: Sequence | None = None) -> Clusters:
        return clusters_of(self.sets, flatten(self.parent), self.linked, ids)


def clusters_of(s: OrderedSets, comp: np.ndarray, linked: np.ndarray, ids: Sequence | None) -> Clusters:
    """The clusters of two or more documents, from each distinct set's component (``comp``, named by its
    smallest member) and whether its documents are linked to any (``linked``)."""
    doc = np.flatnonzero(s.doc_set >= 0)
    doc = doc[linked[s.doc_set[doc]]]
    label = comp[s.doc_set[doc]]
    size = np.bincount(label, minlength=s.num_sets)
    doc = doc[size[label] >= 2]
    label = label[size[label] >= 2]
    # Group the documents by cluster, ascending within; order clusters by size, then first member.
    by = np.lexsort((doc, label))
    doc, label = doc[by], label[by]
    starts = np.flatnonzero(np.concatenate([[True], label[1:] != label[:-1]])) if len(label) else np.empty(0, np.int64)
    ends = np.append(starts[1:], len(label)).astype(np.int64)
    lengths = ends - starts
    order = np.lexsort((doc[starts], -lengths)) if len(starts) else np.empty(0, np.int64)
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    cluster_of = np.repeat(np.arange(len(starts)), lengths)
    docs = doc[np.argsort(rank[cluster_of], kind="stable")]
    indptr = np.zeros(len(order) + 1, np.int64)
    np.cumsum(lengths[order], out=indptr[1:])
    return Clusters(indptr, docs.astype(np.int32), ids)


def write_cluster_table(clusters: Clusters, ids: Sequence[str], out: BinaryIO, fmt: str = "tsv", *,
                        columns: dict[str, Sequence[str]] | None = None, singletons: bool = False,
                        header: bool = True, progress: Callable[..., None] | None = None) -> int:
    """The long form, a table a user's table can join on: ``id, cluster, cluster_size`` and the carried
    ``columns`` of each document in a cluster (see :meth:`Clusters.rows`), in any table format; returns
    the rows written. ``progress(stage, done, total, detail)`` is told the rows written."""
    from ..output.tables import Column, carried, id_column, write_table  # here: a join that writes no table loads none

    doc, cluster, size = clusters.rows(len(ids), singletons)
    docs = doc.tolist()
    table = [id_column("id", ids, docs), Column("cluster", cluster, "int"),
             Column("cluster_size", size, "int"), *carried("", columns or {}, docs)]
    tick = None if progress is None else (lambda done, n: progress("write", done, n, f"{done:,} rows"))
    return write_table(out, fmt, table, header=header, progress=tick)


#: The wide form tells its progress every this many clusters.
CLUSTERS_TOLD = 1 << 14


def write_clusters(clusters: Clusters, ids: Sequence[str], out: BinaryIO, fmt: str = "tsv", *,
                   progress: Callable[..., None] | None = None) -> int:
    """The wide form: one line per cluster, its size, then its ids (TSV/CSV fields, or ``{"size", "ids"}``
    in JSON Lines); lines of varying width, so no header. ``progress(stage, done, total, detail)`` is told
    the clusters written."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown output format {fmt!r}; choose one of {', '.join(FORMATS)}")
    for c in range(len(clusters)):
        if progress is not None and c % CLUSTERS_TOLD == 0:
            progress("write", c, len(clusters), f"{c:,} clusters")
        names = [str(ids[d]) for d in clusters._members(c).tolist()]
        if fmt == "jsonl":
            line = '{"size": %d, "ids": [%s]}' % (len(names), ", ".join(json_field(n) for n in names))
        else:
            sep, esc = ("\t", tsv_field) if fmt == "tsv" else (csv_delimiter(), csv_field)
            line = sep.join([str(len(names))] + [esc(n) for n in names])
        out.write((line + (csv_line_end() if fmt == "csv" else "\n")).encode("utf-8", "surrogateescape"))
    if progress is not None:
        progress("write", len(clusters), len(clusters), f"{len(clusters):,} clusters")
    return len(clusters)

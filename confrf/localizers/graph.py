"""The forest's weight graph and its groups (connected components or Leiden communities).

Section "Clustering using the weights of LCP-RF" of the paper: the localizer
weights between the points indexed in a forest form a weighted graph
G_ij = w(X_i, X_j). It is built sparse from the leaf index (each row holds only
the point's leaf-mates), never as a dense n x n matrix, and symmetrised so that
the paper's bootstrap weights (which are not symmetric) give an undirected
graph too; with the honest weights (multiplicity 1) G is symmetric already.
"""

from __future__ import annotations

import random

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

from .._validation import as_float_matrix
from ..exceptions import InputError
from .forest import ForestLocalizer

#: graph groupings offered by ``groups=``
GRAPH_GROUPINGS = ("components", "leiden")


def weight_graph(localizer: ForestLocalizer, X: np.ndarray) -> sp.csr_matrix:
    """Sparse weighted graph of the forest weights between the indexed points.

    Parameters
    ----------
    localizer : ForestLocalizer
        Grown and indexed on exactly the rows ``X`` (in the same order).
    X : ndarray, shape (n, p)
        The indexed points.

    Returns
    -------
    scipy.sparse.csr_matrix, shape (n, n)
        (W + W^T) / 2 with W the QRF weights of every indexed point on the
        others; self-loops are dropped (they carry no grouping information).

    Examples
    --------
    >>> import numpy as np
    >>> from confrf.localizers import ForestLocalizer
    >>> from confrf.localizers.graph import weight_graph
    >>> X = np.r_[np.zeros((10, 1)), np.ones((10, 1))]; V = X[:, 0]
    >>> loc = ForestLocalizer(n_estimators=5, min_samples_leaf=2, random_state=0).grow(X, V).index(X, V)
    >>> G = weight_graph(loc, X)
    >>> bool(G[0, 1] > 0), bool(G[0, 15] > 0)
    (True, False)
    """
    X = as_float_matrix(X, "X")
    W = localizer.weights(X)
    if W.shape != (X.shape[0], X.shape[0]):
        raise InputError(
            f"the localizer indexes {W.shape[1]} points but X has {X.shape[0]} rows; "
            "index exactly the rows of X before building their graph."
        )
    G = ((W + W.T) * 0.5).tocsr()
    G = (G - sp.diags(G.diagonal())).tocsr()
    G.eliminate_zeros()
    return G


def cluster_graph(G: sp.spmatrix, method: str, *, resolution: float = 1.0, seed: int | None = None) -> np.ndarray:
    """Groups of the nodes of a symmetric weighted graph.

    Parameters
    ----------
    G : sparse matrix, shape (n, n)
        Symmetric non-negative weights (e.g. :func:`weight_graph`).
    method : {"components", "leiden"}
        ``"components"``: connected components (scipy). ``"leiden"``: Leiden
        communities maximising the generalised modularity with ``resolution``
        (igraph; ``pip install 'confrf[groups]'``).
    resolution : float
        Leiden's resolution gamma > 0 (Reichardt-Bornholdt modularity;
        1 is Newman's modularity, smaller values give fewer, larger groups).
    seed : int or None
        Seed of Leiden's random node order.

    Returns
    -------
    ndarray of int, shape (n,)
        Group of every node, 0 for the largest group, 1 for the next, ...

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from confrf.localizers.graph import cluster_graph
    >>> G = sp.csr_matrix(np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0.0]]))
    >>> cluster_graph(G, "components").tolist()
    [0, 0, 1]
    """
    G = sp.csr_matrix(G)
    if method == "components":
        _, labels = csgraph.connected_components(G, directed=False)
    elif method == "leiden":
        labels = _leiden(G, resolution, seed)
    else:
        raise InputError(f"unknown graph grouping {method!r}; choose one of {list(GRAPH_GROUPINGS)}.")
    return _by_size(np.asarray(labels))


def _leiden(G: sp.csr_matrix, resolution: float, seed: int | None) -> list[int]:
    try:
        import igraph
    except ImportError:
        raise InputError(
            "groups='leiden' needs the optional package igraph: pip install 'confrf[groups]' "
            "(or pip install igraph); or use groups='components' or your own group labels."
        ) from None
    n = G.shape[0]
    upper = sp.triu(G, k=1).tocoo()
    # a list of int pairs is igraph's fastest input (a numpy array is converted element by element)
    edges = list(zip(upper.row.tolist(), upper.col.tolist()))
    graph = igraph.Graph(n=n, edges=edges, edge_attrs={"weight": upper.data.tolist()})
    # igraph draws from a process-wide generator: seed a private one, then put Python's back
    igraph.set_random_number_generator(random.Random(seed))
    try:
        parts = graph.community_leiden(
            objective_function="modularity", weights="weight", resolution=float(resolution), n_iterations=-1
        )
    finally:
        igraph.set_random_number_generator(random)
    return list(parts.membership)


def _by_size(labels: np.ndarray) -> np.ndarray:
    """Relabel 0 = largest group, ties broken by first appearance (deterministic names)."""
    uniq, first, inv, counts = np.unique(labels, return_index=True, return_inverse=True, return_counts=True)
    order = np.lexsort((first, -counts))
    rank = np.empty(uniq.shape[0], dtype=np.int64)
    rank[order] = np.arange(uniq.shape[0])
    return rank[inv.ravel()]

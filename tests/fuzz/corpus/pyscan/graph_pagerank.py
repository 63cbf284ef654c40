"""Influence analysis of a random social graph with NetworkX.

PageRank, betweenness centrality, Louvain communities and connected components,
plus a maximum-weight matching. GPU port: nx-cugraph
(`NX_CUGRAPH_AUTOCONFIG=True python graph_pagerank.py`), then cuGraph;
max_weight_matching has no nx-cugraph implementation and stays on NetworkX.
"""
import random

import networkx as nx


def build_graph(n=1500, m=4, seed=0):
    """Scale-free graph with random positive edge weights."""
    g = nx.barabasi_albert_graph(n, m, seed=seed)
    rng = random.Random(seed)
    for u, v in g.edges():
        g[u][v]["weight"] = rng.uniform(0.1, 1.0)
    return g


def main():
    g = build_graph()

    pr = nx.pagerank(g, alpha=0.85, weight="weight")
    top = sorted(pr, key=pr.get, reverse=True)[:5]

    # unweighted betweenness, sampled on k sources (nx-cugraph: unweighted only)
    bc = nx.betweenness_centrality(g, k=150, seed=0)
    hub = max(bc, key=bc.get)

    communities = nx.community.louvain_communities(g, weight="weight", seed=0)
    modularity = nx.community.modularity(g, communities, weight="weight")
    n_components = nx.number_connected_components(g)

    # matching on the 120 highest-PageRank nodes: no nx-cugraph version
    core = g.subgraph(sorted(pr, key=pr.get, reverse=True)[:120])
    matching = nx.max_weight_matching(core, weight="weight")
    matched_weight = sum(core[u][v]["weight"] for u, v in matching)

    print(f"nodes={g.number_of_nodes()} edges={g.number_of_edges()} components={n_components}")
    print("top PageRank nodes:", ", ".join(f"{v}:{pr[v]:.4f}" for v in top))
    print(f"highest betweenness: node {hub} ({bc[hub]:.4f})")
    print(f"louvain: {len(communities)} communities, modularity {modularity:.3f}")
    print(f"max-weight matching on core: {len(matching)} pairs, weight {matched_weight:.2f}")


if __name__ == "__main__":
    main()

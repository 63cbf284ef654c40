"""Graph-network training for molecular property prediction (an ogbg-molhiv-like binary
task on synthetic molecules): each step draws a batch of molecules, featurizes and
batches them into one padded graph on the host, and runs one jitted loss-and-Adam step.

Imitates: google-deepmind/jraph:jraph/ogb_examples/train.py (the training loop: `graph,
label = next(reader)`, pad_graph_to_nearest_power_of_two(graph), then the jitted
value_and_grad step), with the reader's per-molecule featurization and jraph.batch /
jraph.pad_with_graphs written out in NumPy as the host-side data path.

The jitted step is a few hundred microseconds of GPU work on ~4000 nodes, while building
each batch is a Python loop over 128 molecules with a dozen small NumPy calls each,
several milliseconds per step, so the GPU waits on the host most of the time
(the copies are ~200 KB a step): gpu-starved.
"""
import os

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

N_MOLECULES = 3000
BATCH_GRAPHS = 128
N_STEPS = 500
N_ATOM_TYPES = 16
HIDDEN = 128
LR = 1e-3


def make_molecules(n, seed=0):
    """Synthetic molecules: integer atom and bond features like OGB's, a random tree of
    bonds plus a few ring closures, and a label that depends on the structure."""
    rng = np.random.default_rng(seed)
    mols = []
    for _ in range(n):
        n_atoms = int(rng.integers(12, 37))
        atoms = np.stack([rng.integers(0, N_ATOM_TYPES, n_atoms)] +
                         [rng.integers(0, 4, n_atoms) for _ in range(8)], axis=1)
        parent = np.array([rng.integers(0, i) for i in range(1, n_atoms)])
        rings = rng.integers(0, n_atoms, size=(n_atoms // 6, 2))
        src = np.concatenate([np.arange(1, n_atoms), rings[:, 0]])
        dst = np.concatenate([parent, rings[:, 1]])
        bonds = rng.integers(0, 4, size=(len(src), 3))
        label = int((atoms[:, 0] == 6).sum() + len(rings) > 3)
        mols.append((atoms, src, dst, bonds, label))
    return mols


def featurize(atoms, src, dst, bonds):
    """One molecule -> float node/edge features and directed edge lists (both directions)."""
    onehot = np.eye(N_ATOM_TYPES, dtype=np.float32)[atoms[:, 0]]
    degree = np.bincount(np.concatenate([src, dst]), minlength=len(atoms)).astype(np.float32)
    nodes = np.concatenate([onehot, atoms[:, 1:].astype(np.float32) / 3.0, degree[:, None] / 4.0], axis=1)
    bond_onehot = np.eye(4, dtype=np.float32)[bonds[:, 0]]
    edges = np.concatenate([bond_onehot, bonds[:, 1:].astype(np.float32) / 3.0], axis=1)
    return nodes, np.concatenate([edges, edges]), np.concatenate([src, dst]), np.concatenate([dst, src])


def nearest_bigger_power_of_two(x):
    y = 2
    while y < x:
        y *= 2
    return y


def batch_and_pad(mols, idx):
    """jraph.batch + pad_with_graphs: concatenate, offset the edge indices, add one padding
    graph that owns the padding nodes and edges."""
    nodes, edges, senders, receivers, n_node, n_edge, labels = [], [], [], [], [], [], []
    offset = 0
    for i in idx:
        atoms, src, dst, bonds, label = mols[i]
        nd, ed, s, r = featurize(atoms, src, dst, bonds)
        nodes.append(nd)
        edges.append(ed)
        senders.append(s + offset)
        receivers.append(r + offset)
        n_node.append(len(nd))
        n_edge.append(len(ed))
        labels.append(label)
        offset += len(nd)
    sum_n, sum_e = offset, sum(n_edge)
    pad_n = nearest_bigger_power_of_two(sum_n) + 1
    pad_e = nearest_bigger_power_of_two(sum_e)
    nodes = np.concatenate(nodes + [np.zeros((pad_n - sum_n, nodes[0].shape[1]), np.float32)])
    edges = np.concatenate(edges + [np.zeros((pad_e - sum_e, edges[0].shape[1]), np.float32)])
    senders = np.concatenate(senders + [np.full(pad_e - sum_e, sum_n)]).astype(np.int32)
    receivers = np.concatenate(receivers + [np.full(pad_e - sum_e, sum_n)]).astype(np.int32)
    n_node = np.array(n_node + [pad_n - sum_n], np.int32)
    n_edge = np.array(n_edge + [pad_e - sum_e], np.int32)
    node_graph = np.repeat(np.arange(len(n_node), dtype=np.int32), n_node)
    edge_graph = np.repeat(np.arange(len(n_edge), dtype=np.int32), n_edge)
    labels = np.array(labels + [0], np.int32)
    mask = np.ones(len(n_node), np.float32)
    mask[-1] = 0.0
    return dict(nodes=nodes, edges=edges, senders=senders, receivers=receivers,
                node_graph=node_graph, edge_graph=edge_graph, labels=labels, mask=mask)


def init_params(key, d_node, d_edge):
    def dense(k, din, dout):
        return {"w": jax.random.normal(k, (din, dout), jnp.float32) / np.sqrt(din), "b": jnp.zeros(dout)}
    ks = jax.random.split(key, 9)
    return {
        "emb_n": dense(ks[0], d_node, HIDDEN), "emb_e": dense(ks[1], d_edge, HIDDEN),
        "edge1": dense(ks[2], 4 * HIDDEN, HIDDEN), "edge2": dense(ks[3], HIDDEN, HIDDEN),
        "node1": dense(ks[4], 4 * HIDDEN, HIDDEN), "node2": dense(ks[5], HIDDEN, HIDDEN),
        "glob1": dense(ks[6], 3 * HIDDEN, HIDDEN), "glob2": dense(ks[7], HIDDEN, 2),
    }


def apply_dense(p, x):
    return x @ p["w"] + p["b"]


def graph_net(params, g, n_graphs):
    nodes = apply_dense(params["emb_n"], g["nodes"])
    edges = apply_dense(params["emb_e"], g["edges"])
    glob = jnp.zeros((n_graphs, HIDDEN))
    e_in = jnp.concatenate([edges, nodes[g["senders"]], nodes[g["receivers"]], glob[g["edge_graph"]]], axis=1)
    edges = apply_dense(params["edge2"], jax.nn.relu(apply_dense(params["edge1"], e_in)))
    n_nodes = nodes.shape[0]
    recv = jax.ops.segment_sum(edges, g["receivers"], n_nodes)
    sent = jax.ops.segment_sum(edges, g["senders"], n_nodes)
    n_in = jnp.concatenate([nodes, recv, sent, glob[g["node_graph"]]], axis=1)
    nodes = apply_dense(params["node2"], jax.nn.relu(apply_dense(params["node1"], n_in)))
    g_in = jnp.concatenate([jax.ops.segment_sum(nodes, g["node_graph"], n_graphs),
                            jax.ops.segment_sum(edges, g["edge_graph"], n_graphs), glob], axis=1)
    return apply_dense(params["glob2"], jax.nn.relu(apply_dense(params["glob1"], g_in)))


def loss_fn(params, g):
    logits = graph_net(params, g, g["mask"].shape[0])
    logp = jax.nn.log_softmax(logits)
    nll = -jnp.take_along_axis(logp, g["labels"][:, None], axis=1)[:, 0]
    acc = (jnp.argmax(logits, axis=1) == g["labels"]) * g["mask"]
    return jnp.sum(nll * g["mask"]) / jnp.sum(g["mask"]), jnp.sum(acc) / jnp.sum(g["mask"])


@jax.jit
def train_step(params, opt, g):
    (loss, acc), grads = jax.value_and_grad(loss_fn, has_aux=True)(params, g)
    m, v, t = opt
    t = t + 1
    m = jax.tree_util.tree_map(lambda a, b: 0.9 * a + 0.1 * b, m, grads)
    v = jax.tree_util.tree_map(lambda a, b: 0.999 * a + 0.001 * b * b, v, grads)
    params = jax.tree_util.tree_map(
        lambda p, a, b: p - LR * (a / (1 - 0.9 ** t)) / (jnp.sqrt(b / (1 - 0.999 ** t)) + 1e-8), params, m, v)
    return params, (m, v, t), loss, acc


def main():
    mols = make_molecules(N_MOLECULES)
    rng = np.random.default_rng(1)
    nd, ed, _, _ = featurize(*mols[0][:4])
    params = init_params(jax.random.PRNGKey(42), nd.shape[1], ed.shape[1])
    zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
    opt = (zeros, zeros, jnp.zeros((), jnp.float32))
    losses = []
    for step in range(N_STEPS):
        graph = batch_and_pad(mols, rng.integers(0, N_MOLECULES, BATCH_GRAPHS))
        params, opt, loss, acc = train_step(params, opt, graph)
        losses.append(loss)
    print("steps", N_STEPS, "final loss %.4f" % float(losses[-1]), "acc %.3f" % float(acc))


if __name__ == "__main__":
    main()

package io.blis.engine.autoscale;

import java.util.ArrayList;
import java.util.List;

/**
 * Nodes of one GPU type that autoscaled pools place their replicas on: one pool's own, or shared
 * by the pools of a GPU type (as Deployments share a Kubernetes node pool). A node is asked for
 * when a replica finds no room, is ready after the provisioning delay, and is released when its
 * last replica leaves (unless that would go below the minimum nodes).
 */
final class NodePool {

  /** A node asked for at a tick is ready. */
  record Ready(NodePool pool, int node) {}

  /** Where a node's readiness is scheduled (the engine's control-plane events). */
  interface Scheduler {
    void schedule(long atUs, Object event);
  }

  private static final class Node {
    final long requestedUs;
    boolean ready;
    int usedGpus;
    long releasedUs = -1;

    Node(long requestedUs, boolean ready) {
      this.requestedUs = requestedUs;
      this.ready = ready;
    }
  }

  private final int gpusPerNode;
  private final int maxNodes;
  private final int initialNodes;
  private final int minNodes;
  private final long provisioningUs;
  private final double costPerHour;
  private final List<Node> nodes = new ArrayList<>();
  /** Each member pool's reaction to a node becoming ready (it loads the replicas that waited for it). */
  private final List<java.util.function.IntConsumer> members = new ArrayList<>();
  /** (time, nodes alive) at every change, for a timeline of the node pool alone. */
  private final List<long[]> changes = new ArrayList<>();
  private boolean started;
  private int peak;

  /** A node pool as {@code cfg} describes it (its GPUs per node, node counts, delay and price). */
  NodePool(FleetConfig cfg) {
    this.gpusPerNode = cfg.gpusPerNode();
    this.maxNodes = cfg.maxNodes();
    this.initialNodes = cfg.initialNodes();
    this.minNodes = cfg.minNodes();
    this.provisioningUs = cfg.provisioningUs();
    this.costPerHour = cfg.nodeCostPerHour();
  }

  /** Whether a pool of {@code cfg} may share this node pool: the same node settings. */
  boolean fits(FleetConfig cfg) {
    return cfg.gpusPerNode() == gpusPerNode && cfg.maxNodes() == maxNodes && cfg.initialNodes() == initialNodes
        && cfg.minNodes() == minNodes && cfg.provisioningUs() == provisioningUs
        && Double.compare(cfg.nodeCostPerHour(), costPerHour) == 0;
  }

  void join(java.util.function.IntConsumer onNodeReady) {
    members.add(onNodeReady);
  }

  /** The initial nodes, ready at time 0 (once, whichever member starts first). */
  void start() {
    if (!started) {
      started = true;
      for (int n = 0; n < initialNodes; n++) {
        nodes.add(new Node(0, true));
      }
      changed(0);
    }
  }

  /** A live node with room for {@code gpus} more GPUs, ready ones first, or -1. */
  int withRoom(int gpus) {
    int best = -1;
    for (int n = 0; n < nodes.size(); n++) {
      Node node = nodes.get(n);
      if (node.releasedUs < 0 && gpusPerNode - node.usedGpus >= gpus
          && (best < 0 || (node.ready && !nodes.get(best).ready))) {
        best = n;
      }
    }
    return best;
  }

  /** A node ready at time 0 beyond the initial ones (for initial replicas that need it). */
  int addReady() {
    nodes.add(new Node(0, true));
    changed(0);
    return nodes.size() - 1;
  }

  /**
   * Asks for a new node at {@code nowUs}: ready at once without a provisioning delay, else when
   * {@link Ready} comes through {@code host}; -1 when the node pool is at its most nodes.
   */
  int add(Scheduler host, long nowUs) {
    if (alive() >= maxNodes) {
      return -1;
    }
    nodes.add(new Node(nowUs, provisioningUs == 0));
    int n = nodes.size() - 1;
    if (provisioningUs > 0) {
      host.schedule(nowUs + provisioningUs, new Ready(this, n));
    }
    changed(nowUs);
    return n;
  }

  boolean ready(int n) {
    return nodes.get(n).ready;
  }

  /** A replica of {@code gpus} GPUs placed on node {@code n}. */
  void take(int n, int gpus) {
    nodes.get(n).usedGpus += gpus;
    peak = Math.max(peak, alive());
  }

  /** A replica of {@code gpus} GPUs left node {@code n} at {@code nowUs}; an empty node goes unless at the minimum. */
  void free(int n, int gpus, long nowUs) {
    Node node = nodes.get(n);
    node.usedGpus -= gpus;
    if (node.usedGpus == 0 && alive() > minNodes) {
      node.releasedUs = nowUs;
      changed(nowUs);
    }
  }

  /** Node {@code r.node()} is ready: every member loads the replicas that waited for it. */
  void onReady(Ready r) {
    Node node = nodes.get(r.node());
    if (node.releasedUs >= 0) {
      return;
    }
    node.ready = true;
    for (java.util.function.IntConsumer m : members) {
      m.accept(r.node());
    }
  }

  /** Nodes held now. */
  int alive() {
    int n = 0;
    for (Node node : nodes) {
      if (node.releasedUs < 0) {
        n++;
      }
    }
    return n;
  }

  /** Nodes held at {@code atUs} (after the changes at that time). */
  int aliveAt(long atUs) {
    int n = 0;
    for (long[] c : changes) {
      if (c[0] > atUs) {
        break;
      }
      n = (int) c[1];
    }
    return n;
  }

  int peak() {
    return peak;
  }

  int gpusPerNode() {
    return gpusPerNode;
  }

  double costPerHour() {
    return costPerHour;
  }

  /** Hours of nodes held from asking for each to releasing it (or to {@code endUs}). */
  double nodeHours(long endUs) {
    double us = 0;
    for (Node node : nodes) {
      us += (node.releasedUs >= 0 ? node.releasedUs : endUs) - node.requestedUs;
    }
    return us / 3.6e9;
  }

  private void changed(long atUs) {
    long[] last = changes.isEmpty() ? null : changes.get(changes.size() - 1);
    if (last != null && last[0] == atUs) {
      last[1] = alive();
    } else {
      changes.add(new long[] {atUs, alive()});
    }
  }
}

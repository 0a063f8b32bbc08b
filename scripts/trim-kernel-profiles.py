#!/usr/bin/env python3
"""Writes the trimmed, gzipped copy of one GPU's public kernel profiles that the tests read
(blis-latency/src/test/resources/io/blis/latency/profile/<gpu>/): only the columns and rows that
`blis gpu-profile` uses (GEMM and element-wise medians at up to 128 and from 2,048 tokens; all-reduce
medians up to 1 MiB and from 16 MiB within one node), so the derived entry is the same as from the
full files. The profiles are Vidur's (microsoft/vidur, MIT; ../shared/reference/kernel-profiles).

Usage: python3 scripts/trim-kernel-profiles.py KERNEL_PROFILES_DIR GPU NETWORK_DIR OUT_DIR
e.g.   python3 scripts/trim-kernel-profiles.py ../shared/reference/kernel-profiles a100 a100_dgx \
           blis-latency/src/test/resources/io/blis/latency/profile/a100
Standard library only.
"""
import csv
import gzip
import io
import os
import sys

SHAPE = ["n_head", "n_kv_head", "n_embd", "n_expanded_embd", "vocab_size", "use_gated_mlp", "num_tokens",
         "num_tensor_parallel_workers"]
OPS = ["input_layernorm", "attn_pre_proj", "attn_rope", "attn_post_proj", "post_attention_layernorm",
       "mlp_up_proj", "mlp_act", "mlp_down_proj", "add"]


def write(path, header, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    with gzip.GzipFile(path, "wb", mtime=0) as f:
        f.write(buf.getvalue().encode())


def main(root, gpu, network, out):
    base = os.path.join(root, "compute", gpu)
    for org in sorted(os.listdir(base)):
        for model in sorted(os.listdir(os.path.join(base, org))):
            src = os.path.join(base, org, model, "mlp.csv")
            with open(src) as f:
                r = list(csv.DictReader(f))
            cols = [c for c in ["time_stats.%s.median" % o for o in OPS] if c in r[0]] + SHAPE
            rows = [[row[c] for c in cols] for row in r
                    if int(row["num_tokens"]) <= 128 or int(row["num_tokens"]) >= 2048]
            write(os.path.join(out, "compute", org, model, "mlp.csv.gz"), cols, rows)
    src = os.path.join(root, "network", network, "all_reduce.csv")
    with open(src) as f:
        r = list(csv.DictReader(f))
    cols = ["time_stats.all_reduce.median", "num_workers", "size", "devices_per_node"]
    rows = [[row[c] for c in cols] for row in r
            if row["devices_per_node"] == row["num_workers"]
            and (int(row["size"]) <= 1 << 20 or int(row["size"]) >= 16 << 20)]
    write(os.path.join(out, "network", "all_reduce.csv.gz"), cols, rows)


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    main(*sys.argv[1:])

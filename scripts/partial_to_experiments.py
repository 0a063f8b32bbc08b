#!/usr/bin/env python3
"""Turn the tier-B (or tier-C) runs of experiments_partial.json into an experiments.json-schema file.

Tier B (the inference-sim "trainval" runs) documents the server limits, the KV capacity and the
inference-perf profile, and records 7 summary metrics per stage (E2E mean/p90/p99, TTFT
mean/p90/p99, ITL by the sim-to-real definition). That is enough for `blis validate --mode
synthetic`, which regenerates the request stream from the profile.

Assumptions, because tier B does not record them (each one is printed in the output file):
- Prompt structure: 10 groups x 10 prompts, single turn: the effective defaults of the
  inference-perf build of the 16 fully specified runs of the same campaign, whose profiles carry
  the same unrecognised keys. (A build that honoured multi-turn would grow every user's context
  by ~700 tokens a round; the observed per-token times of stage 0 and stage 1 do not show that.)
- max_model_len: the model's max_position_embeddings (vLLM's default).
- CPU offload: 8 GiB (`--kv-offloading-size`) when the run records CPU KV blocks, as in the
  other runs of the campaign; "ambiguous" offload is taken as off.
- Where the two inference-sim testdata files disagree on KV blocks, the value the partial file
  lists first (roofline_goldendataset.json) is used.
- Request counts were not recorded, so the output has none (validate reports no count errors).

Tier C (sim-to-real evaluation runs on H100, A100-80GB and L40S) records even less: the GPU,
TP, max_num_batched_tokens, gpu_memory_utilization, CPU offload on/off and only the profile
NAME. With `--tier C` the profile is taken from the run of that name in experiments.json
(codegen, roleplay, general, reasoning) or tier B (general-lite, reasoning-lite), as the
ground-truth README presumes; max_num_seqs is 128 (every documented run of the campaign); KV
blocks are left to BLIS's memory-based sizing; runs whose observation covers only a prefix of
the requests are skipped.

Usage: python3 scripts/partial_to_experiments.py [--tier B|C] PARTIAL_JSON OUT_JSON
Trace and config paths in OUT_JSON are written relative to OUT_JSON's directory.
Standard library only.
"""
import json
import os
import sys

CPU_OFFLOAD_BYTES = 8 * 1024 ** 3


def stats(block):
    return {
        "e2e_ms": {k: block["e2e_ms"][k] for k in ("mean", "p90", "p99")},
        "ttft_ms": {k: block["ttft_ms"][k] for k in ("mean", "p90", "p99")},
    }


def profiles_by_name(partial_dir, data):
    """Workload name -> (data_as_written_in_profile-like dict, load stages) from tiers A and B."""
    out = {}
    with open(os.path.join(partial_dir, "experiments.json")) as f:
        for e in json.load(f)["experiments"]:
            w = e["workload"]
            out.setdefault(w["name"], (w["data"], w["load"]["stages"]))
    for r in data["tier_B_trainval"]:
        w = r["workload"]
        out.setdefault(w["name"], (w["data_as_written_in_profile"], w["load"]["stages"]))
    return out


def convert_b(run, partial_dir, out_dir):
    vllm = run["vllm"]
    offload = vllm.get("cpu_offload") is True and (vllm.get("cpu_kv_blocks") or 0) > 0
    w = run["workload"]
    return build(run, run["id"].replace("trainval:", ""), w["name"], w["api"],
                 w["data_as_written_in_profile"], w["load"]["stages"], vllm["max_num_seqs"],
                 [("kv_blocks_gpu", vllm["kv_blocks_gpu"]), ("cpu_offload", offload_block(offload))],
                 "converted by scripts/partial_to_experiments.py: 10x10 single-turn prompts, "
                 "max_model_len = max_position_embeddings, 8 GiB CPU offload when CPU KV "
                 "blocks are recorded, no request counts",
                 partial_dir, out_dir)


def convert_c(run, partial_dir, out_dir, profiles):
    name = run["workload"]["name"]
    if name not in profiles:
        raise SystemExit(f"{run['id']}: no documented profile named '{name}'")
    profile, stages = profiles[name]
    vllm = run["vllm"]
    return build(run, run["id"].replace("s2r-eval:", "c-"), name,
                 {"type": "completion", "streaming": True}, profile, stages, 128,
                 [("cpu_offload", offload_block(vllm.get("cpu_offload") is True)),
                  ("gpu_memory_utilization", vllm["gpu_memory_utilization"])],
                 "converted by scripts/partial_to_experiments.py --tier C: profile of the run named '"
                 + name + "' in tiers A/B, 10x10 single-turn prompts, max_num_seqs 128, KV blocks "
                 "sized by BLIS, max_model_len = max_position_embeddings, no request counts",
                 partial_dir, out_dir)


def offload_block(enabled):
    return {"enabled": enabled, "cpu_bytes": CPU_OFFLOAD_BYTES}


def build(run, exp_id, name, api, profile, load_stages, max_num_seqs, vllm_tail, assumptions,
          partial_dir, out_dir):
    """One experiment in the experiments.json schema; vllm_tail = (key, value) pairs after block_size."""
    config_path = os.path.join(partial_dir, run["model_config"])
    with open(config_path) as f:
        config = json.load(f)
    cfg = config.get("text_config", config)
    max_model_len = cfg.get("max_position_embeddings")
    if not isinstance(max_model_len, int):
        raise SystemExit(f"{config_path}: no integer max_position_embeddings")
    stages = []
    i = 0
    while f"stage_{i}" in run["observed"]:
        s = stats(run["observed"][f"stage_{i}"])
        s["stage"] = i
        stages.append(s)
        i += 1
    vllm = {
        "max_model_len": max_model_len,
        "max_num_batched_tokens": run["vllm"]["max_num_batched_tokens"],
        "max_num_seqs": max_num_seqs,
        "block_size": 16,
    }
    vllm.update(vllm_tail)
    return {
        "id": exp_id,
        "model": run["model"],
        "model_config": os.path.relpath(config_path, out_dir),
        "hardware": {"gpu": run["hardware"], "num_gpus": run["tp"]},
        "tp": run["tp"],
        "vllm": vllm,
        "workload": {
            "name": name,
            "api": api,
            "ignore_eos": True,
            "data": {
                "type": "shared_prefix",
                "num_groups": 10,
                "num_prompts_per_group": 10,
                "system_prompt_len": profile["system_prompt_len"],
                "question_len": profile["question_len"],
                "output_len": profile["output_len"],
            },
            "load": {
                "type": "constant",
                "stages": [
                    {"rate_rps": s["rate_rps"], "duration_s": s["duration_s"],
                     "num_requests": s["num_requests"]}
                    for s in load_stages
                ],
                "stage_interval_s": 1.0,
                "client_timeout_s": 300,
            },
        },
        # Same rule as the fully specified runs (failures are not recorded here).
        "status": {"saturated": run["observed"]["overall"]["ttft_ms"]["mean"] > 5000},
        "observed": {"overall": stats(run["observed"]["overall"]), "stages": stages},
        "assumptions": assumptions,
    }


def main():
    args = sys.argv[1:]
    tier = "B"
    if len(args) >= 2 and args[0] == "--tier":
        tier = args[1].upper()
        args = args[2:]
    if len(args) != 2 or tier not in ("B", "C"):
        raise SystemExit("usage: partial_to_experiments.py [--tier B|C] PARTIAL_JSON OUT_JSON")
    partial, out = args
    with open(partial) as f:
        data = json.load(f)
    partial_dir = os.path.dirname(os.path.abspath(partial))
    out_dir = os.path.dirname(os.path.abspath(out))
    os.makedirs(out_dir, exist_ok=True)  # e.g. target/ on a fresh clone
    if tier == "B":
        key = "tier_B_trainval"
        runs = [convert_b(r, partial_dir, out_dir) for r in data[key]]
    else:
        key = "tier_C_s2r_eval"
        profiles = profiles_by_name(partial_dir, data)
        runs = [convert_c(r, partial_dir, out_dir, profiles) for r in data[key]
                if r.get("observed_basis") == "full_run"]
    with open(out, "w") as f:
        json.dump({"source": os.path.basename(partial) + " " + key, "experiments": runs}, f, indent=1)
        f.write("\n")
    print(f"wrote {len(runs)} experiments to {out}")


if __name__ == "__main__":
    main()

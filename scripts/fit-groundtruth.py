#!/usr/bin/env python3
"""Closes the trace loop on the ground-truth deployments (README, "Learning coefficients from traces").

For each model of ../shared/groundtruth/experiments.json: replay one of its runs with the bundled
coefficients while exporting vLLM-style traces (10% of steps, with request snapshots), learn
coefficients back with `blis fit`, and validate that model's runs with the bundled and with the
fitted coefficients. Prints a Markdown table. Usage:
  ./mvnw -B -q -DskipTests package && python3 scripts/fit-groundtruth.py [blis.jar]
"""
import json, os, subprocess, sys, tempfile

JAR = sys.argv[1] if len(sys.argv) > 1 else "blis-cli/target/blis.jar"
GT = "../shared/groundtruth"
RUNS = {  # one non-saturated run per model to trace, and the id pattern of the model's runs
    "meta-llama/Llama-2-7b-hf": ("20260217-231439-llama-2-7b-tp1-general", "llama-2-7b-"),
    "meta-llama/Llama-2-70b-hf": ("20260217-203421-llama-2-70b-hf-tp4-codegen", "llama-2-70b"),
    "mistralai/Mixtral-8x7B-v0.1": ("20260218-130541-mixtral-8x7b-v0-1-tp2-general", "mixtral"),
}


def blis(*args):
    r = subprocess.run(["java", "-jar", JAR, *args], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("blis " + " ".join(args[:2]) + " failed: " + r.stderr.strip())
    return r.stdout


def validate(pattern, coefficients, out):
    args = ["validate", "--experiments", GT + "/experiments.json", "--only", pattern, "--out", out]
    if coefficients:
        args += ["--coefficients", coefficients]
    blis(*args)
    return {e["id"]: e for e in json.load(open(out))["experiments"] if not e["saturated"]}


experiments = {e["id"]: e for e in json.load(open(GT + "/experiments.json"))["experiments"]}
tmp = tempfile.mkdtemp()
print("| model | traced run | steps fitted | test MAPE | Pearson r | runs | mean-E2E APE bundled -> fitted (max change) |")
print("|---|---|---|---|---|---|---|")
for model, (run, pattern) in RUNS.items():
    e = experiments[run]
    v = e["vllm"]
    trace = os.path.join(tmp, run + ".jsonl.gz")
    blis("replay", "--trace", GT + "/" + e["per_request_trace"], "--experiments", GT + "/experiments.json",
         "--experiment", run, "--model", model, "--tp", str(e["tp"]), "--max-num-seqs", str(v["max_num_seqs"]),
         "--max-model-len", str(v["max_model_len"]), "--max-num-batched-tokens", str(v["max_num_batched_tokens"]),
         "--total-kv-blocks", str(v["kv_blocks_gpu"]), "--otel-out", trace, "--otel-step-sample-rate", "0.1",
         "--otel-request-snapshots")
    coeffs = os.path.join(tmp, run + ".yaml")
    report = os.path.join(tmp, run + ".report.json")
    blis("fit", "--traces", trace, "--model", model, "--tp", str(e["tp"]), "--out", coeffs, "--report", report)
    rep = json.load(open(report))
    base = validate(pattern, None, os.path.join(tmp, "base.json"))
    fitted = validate(pattern, coeffs, os.path.join(tmp, "fit.json"))
    pairs = [(base[i]["ape_pct"]["e2e_mean"], fitted[i]["ape_pct"]["e2e_mean"]) for i in sorted(base)]
    change = max(abs(b - f) for b, f in pairs)
    print("| %s | %s | %d | %.2f%% | %.4f | %d | %s (%.2f pp) |" % (
        model, run.split("-", 2)[2], rep["steps_with_batch"], rep["test_mape_pct"], rep["test_pearson_r"],
        len(pairs), ", ".join("%.1f -> %.1f" % p for p in pairs), change))

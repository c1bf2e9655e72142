#!/usr/bin/env python3
"""Loads msrag's MTEB result files with the mteb package and checks that the
scores it reads are the means in msrag's results.json.

    python3 -m venv $HOME/.cache/msrag/venv/mteb && $HOME/.cache/msrag/venv/mteb/bin/pip install mteb==2.26.24
    $HOME/.cache/msrag/venv/mteb/bin/python scripts/check_mteb_results.py OUT [OUT...]

OUT is the output directory of msrag eval (results.json and mteb/) or of a
suite (msrag bench: summary.json, one run directory each with its results.json
and mteb/, and mteb/ holding every run's files together). For every MTEB
directory found, the files are loaded twice, as mteb's tooling does:
mteb.ResultCache(cache_path=DIR).load_results() and mteb.load_results() with
MTEB_CACHE=DIR; both must give every configuration of every results.json that
belongs there, as model msrag/MODEL-CONFIG and task results.json's mteb.task,
with split results.json's split, and each score must equal results.json's mean
of the msrag metric it names (exactly: msrag writes unrounded values):

    ndcg_at_k <- ndcg_cut_k    map_at_k <- map_cut_k    recall_at_k <- recall_k
    precision_at_k <- P_k      mrr_at_k <- mrr_k        hit_rate_at_k <- cdr_k
    accuracy <- recall_1       main_score <- the metric results.json's mteb.main_score names

for k in MTEB's cutoffs (1, 3, 5, 10, 20, 100, 1000) up to results.json's k,
and nothing else. Each model_meta.json must validate as an mteb ModelMeta, and
a task MTEB knows must pass TaskResult.validate_and_filter_scores with the
split kept. Prints one line per file; exits 1 on any mismatch, 2 on bad input.
"""
import glob
import json
import math
import os
import sys
import warnings

CUTOFFS = (1, 3, 5, 10, 20, 100, 1000)
FAMILIES = {"ndcg_at_": "ndcg_cut_", "map_at_": "map_cut_", "recall_at_": "recall_",
            "precision_at_": "P_", "mrr_at_": "mrr_", "hit_rate_at_": "cdr_"}


def expected_scores(mean, k, main_score):
    """The MTEB scores one msrag configuration should have."""
    want = {}
    for mteb_prefix, msrag_prefix in FAMILIES.items():
        for c in CUTOFFS:
            if c <= k and msrag_prefix + str(c) in mean:
                want[mteb_prefix + str(c)] = mean[msrag_prefix + str(c)]
    if "recall_1" in mean:
        want["accuracy"] = mean["recall_1"]
    want["main_score"] = want[main_score]
    return want


def config_file_name(c):
    if c.get("run_file"):
        return os.path.splitext(os.path.basename(c["run_file"]))[0]
    return c["name"]


def safe(s):
    return "".join(ch if (ch.isascii() and (ch.isalnum() or ch in "._+=,-_")) else "-" for ch in s)


def expectations(results_files):
    """(model name, task) -> (split, expected scores, languages) for every configuration."""
    out = {}
    for path in results_files:
        with open(path, encoding="utf-8") as f:
            e = json.load(f)
        m = e.get("mteb")
        if not m:
            sys.exit("check_mteb_results: %s has no mteb block (written by an older msrag?)" % path)
        for c in e["configs"]:
            name = "msrag/%s-%s" % (safe(m.get("model") or e["model"]["name"]), config_file_name(c))
            key = (name, m["task"])
            if key in out:
                sys.exit("check_mteb_results: %s: model %s and task %s come twice" % (path, name, m["task"]))
            out[key] = (e["split"], expected_scores(c["results"]["mean"], e["k"], m["main_score"]), m["languages"], path)
    return out


def load_both(mteb_dir):
    """The results in mteb_dir as ResultCache.load_results and mteb.load_results read them."""
    import mteb
    got = []
    br = mteb.ResultCache(cache_path=mteb_dir).load_results(include_remote=False)
    got.append(("ResultCache.load_results", br))
    old = os.environ.get("MTEB_CACHE")
    os.environ["MTEB_CACHE"] = mteb_dir
    try:
        br2 = mteb.load_results(download_latest=False, validate_and_filter=False)
    finally:
        if old is None:
            del os.environ["MTEB_CACHE"]
        else:
            os.environ["MTEB_CACHE"] = old
    got.append(("mteb.load_results", br2))
    return got


def check_loaded(how, br, want):
    ok = True
    seen = set()
    for mr in br.model_results:
        for tr in mr.task_results:
            key = (mr.model_name, tr.task_name)
            if key not in want:
                print("%s: %s %s: not in any results.json" % (how, key[0], key[1]))
                ok = False
                continue
            seen.add(key)
            split, scores, langs, src = want[key]
            if list(tr.scores) != [split] or len(tr.scores[split]) != 1:
                print("%s: %s %s: splits %s, want [%s] with one subset" % (how, key[0], key[1], list(tr.scores), split))
                ok = False
                continue
            got = tr.scores[split][0]
            numeric = {k: v for k, v in got.items() if isinstance(v, float) or (isinstance(v, int) and not isinstance(v, bool))}
            bad = [k for k in sorted(set(numeric) | set(scores)) if k not in numeric or k not in scores or numeric[k] != scores[k]]
            if got.get("hf_subset") != "default" or got.get("languages") != langs:
                bad.append("hf_subset/languages")
            if not math.isclose(float(tr.get_score()), scores["main_score"], rel_tol=0, abs_tol=0):
                bad.append("get_score()")
            good = not bad
            ok = ok and good
            print("%-26s %-44s %-20s %3d scores  %s" % (how, key[0], key[1], len(numeric),
                                                        "equal to " + src if good else "MISMATCH " + ", ".join(bad[:8])))
    for key in sorted(set(want) - seen):
        print("%s: %s %s: in %s but not loaded" % (how, key[0], key[1], want[key][3]))
        ok = False
    return ok


def check_meta_and_tasks(mteb_dir):
    import mteb
    from mteb.models.model_meta import ModelMeta
    from mteb.results import TaskResult
    ok = True
    for meta_path in sorted(glob.glob(os.path.join(mteb_dir, "results", "*", "*", "model_meta.json"))):
        with open(meta_path, encoding="utf-8") as f:
            meta = ModelMeta.model_validate(json.load(f))
        for path in sorted(glob.glob(os.path.join(os.path.dirname(meta_path), "*.json"))):
            if path == meta_path:
                continue
            tr = TaskResult.from_disk(__import__("pathlib").Path(path))
            try:
                task = mteb.get_task(tr.task_name)
            except Exception:
                continue  # not one of MTEB's tasks (qmsum, a subset): nothing to validate against
            kept = tr.validate_and_filter_scores(task=task)
            if list(kept.scores) != list(tr.scores):
                print("%s: MTEB's %s keeps splits %s of %s" % (path, tr.task_name, list(kept.scores), list(tr.scores)))
                ok = False
        if meta.name is None:
            ok = False
    return ok


def targets(out):
    """(mteb dir, results.json files) pairs to check for one output directory."""
    if os.path.exists(os.path.join(out, "results.json")):
        return [(os.path.join(out, "mteb"), [os.path.join(out, "results.json")])]
    if os.path.exists(os.path.join(out, "summary.json")):
        runs = sorted(glob.glob(os.path.join(out, "*", "results.json")))
        pairs = [(os.path.join(out, "mteb"), runs)]
        pairs += [(os.path.join(os.path.dirname(r), "mteb"), [r]) for r in runs]
        return pairs
    sys.exit("check_mteb_results: %s holds neither results.json nor summary.json" % out)


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 2
    warnings.filterwarnings("ignore")
    import mteb
    print("mteb %s" % mteb.__version__)
    ok = True
    for out in sys.argv[1:]:
        for mteb_dir, results in targets(out):
            if not os.path.isdir(mteb_dir):
                print("%s: no MTEB directory" % mteb_dir)
                ok = False
                continue
            want = expectations(results)
            for how, br in load_both(mteb_dir):
                ok = check_loaded(how, br, want) and ok
            ok = check_meta_and_tasks(mteb_dir) and ok
    print("all MTEB files load and equal results.json" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

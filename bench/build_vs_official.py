# ruff: noqa: E501  (the measurement's command, in the docstring, has a long argument)
"""Recorded tests against CoderEval's official ones (issue 31, item 4).

For each CoderEval-Python project given (a checkout at its pinned commit), `codereval build
python` records calls from the project's own suite; the CoderEval tasks it reached are matched
by file and function name; the three released models' samples of those tasks are evaluated on
the recorded tests; each sample's verdict is set beside the official `is_pass`.

    python bench/build_vs_official.py --checkouts /work/checkouts --work /tmp/bvo \\
        --project cpburnz/python-sql-parameters="tests/ -o python_files=t_*.py" \\
        --project ynikitenko/lena --project pexip/os-python-cachetools

The measurement of docs/build.md (all 43 projects, the suite arguments and requirements each
needs; CHECKOUTS holds <owner>---<repo> clones, GOLD_RUN an `evaluate --reference --compat`
run of the official tests as bench/codereval_python_agreement.py makes it):

    .venv/bin/python bench/build_vs_official.py --checkouts CHECKOUTS --work /tmp/bvo \\
        --official-gold GOLD_RUN/gold.jsonl \\
        --project ynikitenko/lena \\
        --project zimeon/ocfl-py \\
        --project pexip/os-python-cachetools \\
        --project witten/borgmatic \\
        --project witten/atticmatic \\
        --project cpburnz/python-sql-parameters="tests/ -o python_files=t_*.py" \\
        --project bastikr/boolean \\
        --project kirankotari/shconfparser \\
        --project eykd/prestoplot \\
        --project bazaar-projects/docopt-ng \\
        --project MozillaSecurity/lithium \\
        --project burgerbecky/makeprojects \\
        --project scieloorg/packtools \\
        --project santoshphilip/eppy \\
        --project cloudmesh/cloudmesh-common \\
        --project skorokithakis/shortuuid \\
        --project champax/pysolbase="pysolbase_test" \\
        --project pexip/os-python-dateutil="dateutil/test" \\
        --project infobloxopen/infoblox-client="tests" \\
        --project turicas/rows="tests" \\
        --project scrolltech/apphelpers="tests" \\
        --project gopad/gopad-python="test" \\
        --project SEED-platform/py-seed="tests --ignore=tests/integration" \\
        --project awsteiner/o2sclpy="o2sclpy/test" \\
        --project sunpy/radiospectra="radiospectra" \\
        --requirement sunpy/radiospectra=pytest-doctestplus \\
        --requirement sunpy/radiospectra=pytest-astropy \\
        --project redhat-openstack/infrared="tests" \\
        --project pexip/os-zope="src/zope/interface" \\
        --own-requirements pexip/os-zope \\
        --project jaywink/federation="federation/tests" \\
        --requirement "jaywink/federation=-r dev-requirements.txt" \\
        --requirement jaywink/federation=freezegun \\
        --requirement jaywink/federation=arrow \\
        --requirement jaywink/federation=pytest-django \\
        --project neo4j/neo4j-python-driver="tests/unit/common" \\
        --project rak-n-rok/Krake="krake/tests" \\
        --project pre-commit/pre-commit="tests" \\
        --project SoftwareHeritage/swh-lister="swh/lister/arch" \\
        --project openstack/neutron-lib="neutron_lib/tests/unit/agent" \\
        --project openstack/cinder="cinder/tests/unit/image/test_glance.py cinder/tests/unit/api/test_api_validation.py" \\
        --project mozilla/relman-auto-nag="auto_nag/tests" \\
        --project ossobv/planb \\
        --project sipwise/repoapi \\
        --project ikus060/rdiffweb="rdiffweb/core" \\
        --project commandline/flashbake \\
        --project ufo-kit/concert="concert/tests/unit" \\
        --project ansible-security/ansible_collections.ibm.qradar="tests/unit" \\
        --project rougier/matplotlib \\
        --project mwatts15/rdflib

Prints, per project: the CoderEval tasks, those the suite reached (and why the others were not
built), and per model the 2x2 table (official first, then ours) with the agreement; then the
totals. Disagreements are classified: ours pass where the official test failed (recorded test
weaker, or the official test broken: a task with no official pass at all), ours fail where it
passed (recorded test stronger). Needs the projects' checkouts; nothing here is run in CI.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import tomllib
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared" / "data" / "codereval"
MODELS = ("ChatGPT", "CodeGen", "PanGu-Coder")


def codereval(*args: str) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("codereval")
    return subprocess.run([str(exe), *args], capture_output=True, text=True, check=False)


def official(model: str, project: str) -> list[dict]:
    path = SHARED / "results" / "python" / model / "Raw_Input.jsonl_out.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r for r in rows if r.get("project") == project]


def manifest_entry(project: str) -> dict:
    """The shipped manifest's entry: the pin the projects were prepared at, their Python and
    what their tests needed on the platform."""
    import codereval.data

    shipped = Path(codereval.data.__file__).parent / "codereval_python" / "projects.toml"
    return dict(tomllib.loads(shipped.read_text())["projects"].get(project, {}))


def run_project(project: str, pytest_args: str, args: argparse.Namespace) -> dict:
    fact = manifest_entry(project)
    slug = project.replace("/", "---")
    out = args.work / slug
    build = ["build", "python", str(args.checkouts / slug), "--commit", fact["commit"],
             "--out", str(out), "--name", project, "--python", fact["python"],
             "--include-weak"]  # fmt: skip
    # The manifest's requirements are what the official tests needed; a suite may need more
    # (--requirement), or the project's own installation instead (--own-requirements).
    own = project in args.own_requirements
    for requirement in [*([] if own else fact.get("requirements", [])), *args.extra[project]]:
        build += ["--requirement", requirement]
    if pytest_args:
        build += ["--pytest-args", pytest_args]
    started = time.monotonic()
    if not out.exists():
        done = codereval(*build)
        if done.returncode != 0:
            return {"project": project, "error": done.stderr.strip().splitlines()[-1]}
    built_seconds = time.monotonic() - started
    checks = {}
    for line in (out / "checks.jsonl").read_text().splitlines():
        row = json.loads(line)
        checks[(row["file_path"], row["function"].rsplit(".", 1)[-1])] = row
    records = json.loads((out / "records.json").read_text())["RECORDS"]
    by_place: dict[tuple[str, str], list[str]] = {}
    for record in records:
        by_place.setdefault((record["file_path"], record["name"]), []).append(record["_id"])
    result: dict = {"project": project, "seconds": built_seconds, "models": {}, "why": Counter()}
    tasks = official(MODELS[0], project)
    matched: dict[str, str] = {}
    # CoderEval's file paths are relative to the package's root: a src/ layout is a prefix.
    files = sorted({p for p, _ in [*checks, *by_place]})

    def place(path: str) -> str:
        return next((f for f in files if f == path or f.endswith("/" + path)), path)

    for task in tasks:
        key = (place(task["file_path"]), task["name"])
        ours = by_place.get(key, [])
        if len(ours) == 1:
            matched[task["_id"]] = ours[0]
        elif len(ours) > 1:
            result["why"]["ambiguous (several functions of that name in the file)"] += 1
        else:
            check = checks.get(key)
            result["why"][check["status"] if check else "not selected"] += 1
    result["tasks"], result["reached"] = len(tasks), len(matched)
    # Which official tests were broken is what gold validation of the official tests (in
    # --compat, issue 29) said; without it, a task no model passed once is taken as broken,
    # which also counts the merely hard tasks (most project-level ones) as broken.
    weak_tasks: set[str] = set()
    if args.official_gold:
        gold = {
            row["task_id"]: row["status"]
            for row in map(json.loads, args.official_gold.read_text().splitlines())
        }
        broken_tasks = {task for task, status in gold.items() if status == "broken"}
        weak_tasks = {task for task, status in gold.items() if status == "weak"}
    else:
        passed_somewhere = {
            r["_id"]
            for model in MODELS
            for r in official(model, project)
            if any(s.get("is_pass") for s in r["generate_results"])
        }
        broken_tasks = {r["_id"] for r in tasks} - passed_somewhere
    for model in MODELS:
        rows = {r["_id"]: r for r in official(model, project)}
        samples = args.work / f"{slug}-{model}.jsonl"
        samples.write_text("".join(
            json.dumps({"_id": ours, "generate_results": [
                s["generate_code"] for s in rows[theirs]["generate_results"]]}) + "\n"
            for theirs, ours in matched.items()
        ))  # fmt: skip
        run = args.work / f"{slug}-{model}-run"
        if matched:
            done = codereval("evaluate", "--prepared", str(out), "--samples", str(samples),
                             "--out", str(run), "--jobs", "2")  # fmt: skip
            if done.returncode != 0:
                result["models"][model] = {"error": done.stderr.strip().splitlines()[-1]}
                continue
        verdicts = {}
        if (run / "outcomes.jsonl").is_file():
            for line in (run / "outcomes.jsonl").read_text().splitlines():
                o = json.loads(line)
                verdicts[(o["task_id"], o["sample_index"])] = o["verdict"] == "passed"
        table: Counter[str] = Counter()
        status_of = {row["task_id"]: row["status"] for row in checks.values()}
        for theirs, ours in matched.items():
            generated = rows[theirs]["generate_results"]
            broken = (
                "official test broken: " if theirs in broken_tasks
                else "official test weak: " if theirs in weak_tasks
                else ""
            )  # fmt: skip
            # `build` leaves weak recorded tests out unless --include-weak (given here, to
            # see how they judge): the shipped benchmark is the rest.
            if status_of.get(ours) == "weak":
                broken = "recorded weak: " + broken
            for index, sample in enumerate(generated):
                mine = verdicts.get((ours, index))
                if mine is None:
                    table["not run"] += 1
                    continue
                theirs_pass = bool(sample.get("is_pass"))
                if mine == theirs_pass:
                    table[broken + ("both pass" if mine else "both fail")] += 1
                elif mine:
                    table[broken + "ours pass (recorded weaker)"] += 1
                else:
                    table[broken + "ours fail (recorded stronger)"] += 1
        result["models"][model] = dict(table)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkouts", type=Path, required=True)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--project", action="append", default=[],
                        help='owner/repo, or owner/repo="pytest args"')  # fmt: skip
    parser.add_argument("--requirement", action="append", default=[],
                        help="owner/repo=REQUIREMENT, another one its suite needs")
    parser.add_argument("--own-requirements", action="append", default=[],
                        help="owner/repo whose manifest requirements are left out (the "
                             "project is installed from its tree with what its files ask)")
    parser.add_argument("--official-gold", type=Path,
                        help="gold.jsonl of `evaluate --reference` on the official tests "
                             "(--compat): its broken tasks are the official tests that were "
                             "broken")  # fmt: skip
    args = parser.parse_args()
    args.extra = defaultdict(list)
    for spec in args.requirement:
        owner_repo, _, requirement = spec.partition("=")
        args.extra[owner_repo].append(requirement)
    args.work.mkdir(parents=True, exist_ok=True)
    totals: dict[str, Counter[str]] = {m: Counter() for m in MODELS}
    tasks = reached = 0
    for spec in args.project:
        project, _, pytest_args = spec.partition("=")
        result = run_project(project, pytest_args.strip('"'), args)
        print(json.dumps(result, default=dict))
        if "error" in result:
            continue
        tasks += result["tasks"]
        reached += result["reached"]
        for model in MODELS:
            totals[model].update(result["models"].get(model, {}))
    print(f"\nCoderEval tasks {tasks}, reached by the suites with recorded tests {reached}")
    # Narrowing down: every sample judged; the tasks whose official test works (gold validation
    # of it did not call it broken); of those, the ones whose official test is sound (not weak
    # either: a test that passes `return None` is no ground truth); of those, the ones whose
    # recorded test `build` ships by default (not weak).
    def tags(key: str) -> set[str]:
        # "recorded weak: official test broken: ours pass (...)" -> its prefixes
        return {part for part in key.split(": ")[:-1]}

    views = (
        ("all", lambda k: True),
        ("official works", lambda k: "official test broken" not in tags(k)),
        ("official sound", lambda k: not tags(k) & {"official test broken", "official test weak"}),
        ("+ recorded shipped", lambda k: not tags(k)),
    )
    print("agreement with the official is_pass, per model, over: " + "; ".join(
        name for name, _ in views))
    print(f"{'model':<12}" + "".join(f" {name:>20}" for name, _ in views))
    for model, table in totals.items():
        cells = []
        for _, keep in views:
            kept = {k: v for k, v in table.items() if k != "not run" and keep(k)}
            total = sum(kept.values())
            agree = sum(v for k, v in kept.items() if "both" in k)
            cells.append(f"{100 * agree / total:.2f}% of {total}" if total else "—")
        print(f"{model:<12}" + "".join(f" {cell:>20}" for cell in cells))
    for model, table in totals.items():
        rest = {k: v for k, v in table.items() if "both" not in k}
        print(f"{model} disagreements: {rest}")

if __name__ == "__main__":
    main()

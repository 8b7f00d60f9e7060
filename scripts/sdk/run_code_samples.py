"""Runs every code sample (`x-codeSamples`) of a served document against the server that
served it, as a partner who copies one would: curl with bash, Python with python3, TypeScript
pasted into a `.ts` file that is not a module (no `export`, no `"type": "module"`: top-level
`await` would not compile there), type-checked by tsc (strict, Node's types) and run by node.
Each must exit 0 and print the operation's success status and a request id of the documented
form; a sample that fails, or an operation without the three samples, fails the check. A keyed
operation's samples read the key from PARTNER_API_KEY, which the caller sets.

    run_code_samples.py DOCUMENT.json WORKDIR TSC [LANGUAGE]

WORKDIR: a folder inside scripts/node, made here (so that Node finds the pinned TypeScript
types); TSC: the pinned tsc; LANGUAGE: Shell, Python or TypeScript to run that one only."""

import json
import re
import subprocess
import sys
from pathlib import Path

document = json.loads(Path(sys.argv[1]).read_text())
work = Path(sys.argv[2])
tsc = sys.argv[3]
only = sys.argv[4] if len(sys.argv) > 4 else None
REQUEST_ID = re.compile(r"req_[0-9a-f]{32}")
LANGUAGES = ["Shell", "Python", "TypeScript"]
TSCONFIG = {
    "compilerOptions": {
        "strict": True,
        "target": "ES2022",
        "module": "NodeNext",
        "moduleResolution": "NodeNext",
        "lib": ["ES2022", "DOM"],
        "types": ["node"],
        "noEmitOnError": True,
        "outDir": "out",
    },
}

samples = []
for path, item in document["paths"].items():
    for method, operation in item.items():
        if not isinstance(operation, dict) or "responses" not in operation:
            continue
        given = operation.get("x-codeSamples") or []
        languages = [sample["lang"] for sample in given]
        if languages != LANGUAGES:
            sys.exit(f"FAIL: {method.upper()} {path}: samples in {languages}, expected {LANGUAGES}")
        success = next(status for status in operation["responses"] if status.startswith("2"))
        name = operation["operationId"]
        for sample in given:
            if only in (None, sample["lang"]):
                samples.append((name, method.upper(), path, success, sample))

# Removals last: the others' samples use the same example ids.
samples.sort(key=lambda sample: sample[1] == "DELETE")

# The TypeScript samples are type-checked together, each a script as pasted.
typescript = work / "typescript"
typescript.mkdir(parents=True)
files = []
for name, _, _, _, sample in samples:
    if sample["lang"] == "TypeScript":
        (typescript / f"{name}.ts").write_text(sample["source"])
        files.append(f"{name}.ts")
if files:
    (typescript / "tsconfig.json").write_text(json.dumps(dict(TSCONFIG, files=files), indent=2))
    subprocess.run([tsc, "--project", str(typescript / "tsconfig.json")], check=True, timeout=120)

for name, method, path, success, sample in samples:
    language = sample["lang"]
    if language == "Shell":
        command = ["bash", "-euo", "pipefail", "-c", sample["source"]]
    elif language == "Python":
        command = ["python3", "-c", sample["source"]]
    else:
        command = ["node", str(typescript / "out" / f"{name}.js")]
    run = subprocess.run(command, capture_output=True, text=True, timeout=30)
    output = run.stdout + run.stderr
    status_shown = re.search(rf"(^|\s){success}(\s|$)", run.stdout, re.MULTILINE)
    if run.returncode != 0 or not status_shown or not REQUEST_ID.search(run.stdout):
        sys.exit(
            f"FAIL: the {sample['label']} sample of {method} {path} (exit {run.returncode}) did "
            f"not show {success} and a request id:\n{sample['source']}\n--- it printed:\n{output}"
        )
    first = run.stdout.strip().splitlines()[0]
    print(f"ok: {method} {path}, {sample['label']}: {first}")
print(f"ok: {len(samples)} samples ran")

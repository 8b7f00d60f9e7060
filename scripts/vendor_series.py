"""The vendored crates' patch series (vendor/README.md): what `scripts/vendor-series` and
`scripts/vendor-rebase` share.

vendor/<crate>/ is the published crate's library sources (src/, Cargo.toml, README.md and its
licences) with the series vendor/patches/<crate>/NNNN-<name>.patch applied in order. A patch
file is a DEP-3 header (Description, Origin, Bug or Forwarded, Last-Update, and this project's
Test and Retire-When fields), a line `---`, then a unified diff against the crate's root.

A published crate is fetched by cargo itself (`cargo info <crate>@<version>` downloads the
.crate into cargo's cache, checked against the registry's checksum), so nothing here names a
registry or trusts a download cargo did not verify.
"""

import glob
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENDOR = os.path.join(ROOT, "vendor")
PATCHES = os.path.join(VENDOR, "patches")
CRATES = ("actix-http", "h2")
WORK = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")),
                    "vendor-series")


def say(message):
    print(message, flush=True)


def cargo_home():
    return os.environ.get("CARGO_HOME") or os.path.join(os.path.expanduser("~"), ".cargo")


def vendored_version(crate):
    """The version vendor/<crate>/Cargo.toml declares."""
    with open(os.path.join(VENDOR, crate, "Cargo.toml")) as manifest:
        for line in manifest:
            found = re.match(r'^version = "([^"]+)"', line)
            if found:
                return found.group(1)
    raise SystemExit(f"vendor/{crate}/Cargo.toml declares no version")


def resolve(crate, requirement):
    """The newest published version of `crate` matching `requirement` (`0.3` for the newest 0.3.x, `3.19.0` for that one), as
    cargo resolves it; cargo also downloads its .crate into its cache."""
    shown = subprocess.run(["cargo", "info", f"{crate}@{requirement}"], cwd=tempfile.gettempdir(),
                           capture_output=True, text=True)
    found = re.search(r"^version: (\S+)", shown.stdout, re.MULTILINE)
    if shown.returncode != 0 or not found:
        raise SystemExit(f"cargo info {crate}@{requirement} failed:\n{shown.stderr}")
    return found.group(1)


def crate_file(crate, version):
    """The published .crate of `crate` `version`, as cargo downloaded and checked it."""
    pattern = os.path.join(cargo_home(), "registry", "cache", "*", f"{crate}-{version}.crate")
    found = glob.glob(pattern)
    if not found:
        resolve(crate, version)
        found = glob.glob(pattern)
    if not found:
        raise SystemExit(f"cargo did not download {crate} {version} (looked for {pattern})")
    return found[0]


def published(crate, version):
    """A fresh folder with the published crate's files that vendor/ keeps (src/, Cargo.toml,
    README.md, licences), from the .crate cargo downloaded and checked."""
    target = os.path.join(WORK, "published", f"{crate}-{version}")
    shutil.rmtree(target, ignore_errors=True)
    os.makedirs(target)
    prefix = f"{crate}-{version}/"
    with tarfile.open(crate_file(crate, version)) as archive:
        for member in archive.getmembers():
            name = member.name[len(prefix):] if member.name.startswith(prefix) else None
            if not member.isfile() or not name or not kept(name):
                continue
            path = os.path.join(target, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with archive.extractfile(member) as source, open(path, "wb") as out:
                out.write(source.read())
    return target


def kept(name):
    """Whether vendor/ keeps a file of the published crate: its library sources, manifest,
    README and licences (tests, examples and benches stay out)."""
    return (name.startswith("src/") or name in ("Cargo.toml", "README.md")
            or name.startswith("LICENSE"))


def series(crate):
    """The crate's patches, in order."""
    return sorted(glob.glob(os.path.join(PATCHES, crate, "[0-9][0-9][0-9][0-9]-*.patch")))


def header(path):
    """A patch's DEP-3 header, as a dict of its fields (continuation lines joined)."""
    fields, current = {}, None
    with open(path) as patch:
        for line in patch:
            if line.rstrip("\n") == "---":
                break
            if line.startswith((" ", "\t")) and current:
                fields[current] += "\n" + line.strip()
            elif ":" in line:
                current, value = line.split(":", 1)
                fields[current] = value.strip()
    return fields


def apply_one(tree, patch, fuzz):
    """Applies `patch` to `tree` with GNU patch; returns (outcome, detail): `clean`, `offset`
    (context found elsewhere), `fuzz` (context lines ignored) or `failed`."""
    run = subprocess.run(["patch", "-p1", "--forward", "--no-backup-if-mismatch", "-r", "-",
                          f"--fuzz={fuzz}", "-i", patch], cwd=tree, capture_output=True,
                         text=True)
    output = run.stdout + run.stderr
    if run.returncode != 0:
        failed = re.findall(r"Hunk #\d+ FAILED at \d+", output)
        files = re.findall(r"^patching file (\S+)", output, re.MULTILINE)
        where = []
        current = None
        for line in output.splitlines():
            name = re.match(r"^patching file (\S+)", line)
            if name:
                current = name.group(1)
            elif "FAILED" in line and current:
                where.append(f"{current}: {line.strip()}")
        return "failed", "; ".join(where) or output.strip() or f"{len(failed)} hunks of {files}"
    if "with fuzz" in output:
        return "fuzz", "; ".join(l.strip() for l in output.splitlines() if "with fuzz" in l)
    if "offset" in output:
        return "offset", f"{output.count('offset')} hunks found elsewhere"
    return "clean", ""


def apply_series(crate, tree, fuzz=2, patches=None):
    """Applies the series to `tree`, every patch even after a failure (each is reported);
    returns [(name, outcome, detail)]."""
    results = []
    for patch in patches if patches is not None else series(crate):
        outcome, detail = apply_one(tree, patch, fuzz)
        results.append((os.path.basename(patch), outcome, detail))
    return results


def differences(left, right):
    """Files that differ between two trees, or exist in one only."""
    def files(top):
        found = set()
        for folder, _, names in os.walk(top):
            for name in names:
                found.add(os.path.relpath(os.path.join(folder, name), top))
        return found
    ours, theirs = files(left), files(right)
    changed = sorted(ours ^ theirs)
    for name in sorted(ours & theirs):
        with open(os.path.join(left, name), "rb") as a, open(os.path.join(right, name), "rb") as b:
            if a.read() != b.read():
                changed.append(name)
    return changed


def git(repo, *args, capture=False):
    run = subprocess.run(["git", "-c", "user.name=partner-api", "-c",
                          "user.email=partner-api@localhost", *args], cwd=repo, check=True,
                         capture_output=capture, text=True)
    return run.stdout if capture else None


def unpack(crate, repo):
    """A git repository at `repo`: the published crate as one commit, then one commit per
    patch, whose message is the patch's file name and header."""
    version = vendored_version(crate)
    if os.path.exists(repo):
        raise SystemExit(f"{repo} exists already")
    shutil.copytree(published(crate, version), repo)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", f"{crate} {version} as published")
    git(repo, "tag", "published")
    for patch in series(crate):
        outcome, detail = apply_one(repo, patch, 0)
        if outcome not in ("clean", "offset"):
            raise SystemExit(f"{os.path.basename(patch)} does not apply: {detail}")
        with open(patch) as text:
            head = text.read().split("\n---\n", 1)[0]
        name = os.path.basename(patch)[:-len(".patch")]
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"{name}\n\n{head}\n")
    say(f"{repo}: {crate} {version} and {len(series(crate))} patches as commits; edit them "
        f"(git rebase -i published), then: scripts/vendor-series pack {crate} {repo}")


def pack(crate, repo):
    """Writes vendor/patches/<crate>/ from the commits after `published` in `repo`, and
    vendor/<crate>/ from its last commit."""
    commits = git(repo, "rev-list", "--reverse", "published..HEAD", capture=True).split()
    folder = os.path.join(PATCHES, crate)
    for old in series(crate):
        os.remove(old)
    os.makedirs(folder, exist_ok=True)
    for commit in commits:
        message = git(repo, "log", "-1", "--format=%B", commit, capture=True)
        name, _, head = message.partition("\n")
        head = head.strip("\n")
        if not re.match(r"^\d{4}-[a-z0-9-]+$", name) or not head.startswith("Description:"):
            raise SystemExit(f"commit {commit[:10]}: its message must be `NNNN-name`, a blank "
                             f"line and the DEP-3 header (Description: ...)")
        diff = git(repo, "diff", "--no-color", "--no-renames", "--no-ext-diff", "-U3",
                   f"{commit}^", commit, capture=True)
        # Blob ids churn whenever an earlier patch changes; neither tool needs them.
        diff = "".join(line for line in diff.splitlines(keepends=True)
                       if not line.startswith("index "))
        with open(os.path.join(folder, f"{name}.patch"), "w") as out:
            out.write(f"{head}\n---\n{diff}")
    target = os.path.join(VENDOR, crate)
    shutil.rmtree(target)
    os.makedirs(target)
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=repo, check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", target], input=archive, check=True)
    say(f"wrote {len(commits)} patches to {os.path.relpath(folder, ROOT)} and "
        f"vendor/{crate} from {repo}")


def check(crates):
    """Each crate's series applied in order, exactly, to its published version gives
    vendor/<crate>; every patch carries the header's required fields and is listed in
    vendor/README.md, the series' index. Returns the failures."""
    failures = []
    for crate in crates:
        version = vendored_version(crate)
        tree = os.path.join(WORK, "check", crate)
        shutil.rmtree(tree, ignore_errors=True)
        shutil.copytree(published(crate, version), tree)
        patches = series(crate)
        for name, outcome, detail in apply_series(crate, tree, fuzz=0, patches=patches):
            if outcome not in ("clean", "offset"):
                failures.append(f"{crate}: {name} does not apply exactly: {detail}")
        for patch in patches:
            fields = header(patch)
            missing = [field for field in ("Description", "Origin", "Last-Update", "Test",
                                           "Retire-When") if not fields.get(field)]
            if not (fields.get("Bug") or fields.get("Forwarded")):
                missing.append("Bug or Forwarded")
            if missing:
                failures.append(f"{crate}: {os.path.basename(patch)} lacks {', '.join(missing)}")
        with open(os.path.join(VENDOR, "README.md")) as index:
            listed = index.read()
        for patch in patches:
            if f"`{os.path.basename(patch)[:-len('.patch')]}`" not in listed:
                failures.append(f"{crate}: vendor/README.md does not list "
                                f"{os.path.basename(patch)}")
        changed = differences(tree, os.path.join(VENDOR, crate))
        if changed:
            failures.append(f"{crate} {version}: the series does not give vendor/{crate}: "
                            f"{', '.join(changed[:10])}")
        say(f"{crate} {version}: {len(patches)} patches, "
            f"{'vendor/' + crate + ' is exactly the series applied' if not changed else 'DIFFERS'}")
    return failures


def changed_lines(crate):
    """Lines added and removed by the crate's series."""
    added = removed = 0
    for patch in series(crate):
        with open(patch) as text:
            body = text.read().split("\n---\n", 1)[1]
        for line in body.splitlines():
            if line.startswith("+") and not line.startswith("+++"):
                added += 1
            elif line.startswith("-") and not line.startswith("---"):
                removed += 1
    return added, removed


def main(argv):
    usage = ("usage: scripts/vendor-series check [CRATE...] | stat | unpack CRATE DIR | "
             "pack CRATE DIR | crate-file CRATE VERSION")
    if not argv:
        raise SystemExit(usage)
    command, rest = argv[0], argv[1:]
    if command == "check":
        failures = check(rest or CRATES)
        for failure in failures:
            say(f"FAILED: {failure}")
        return 1 if failures else 0
    if command == "stat":
        for crate in CRATES:
            added, removed = changed_lines(crate)
            say(f"{crate} {vendored_version(crate)}: {len(series(crate))} patches, "
                f"+{added} -{removed}")
        return 0
    if command == "crate-file" and len(rest) == 2:
        print(crate_file(*rest))
        return 0
    if command == "unpack" and len(rest) == 2:
        unpack(rest[0], os.path.abspath(rest[1]))
        return 0
    if command == "pack" and len(rest) == 2:
        pack(rest[0], os.path.abspath(rest[1]))
        return 0
    raise SystemExit(usage)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

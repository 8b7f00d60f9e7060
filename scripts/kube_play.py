"""Runs the base's Deployment (deploy/kubernetes/base/) with `podman kube play` and probes it
(called by scripts/check-kube, with its venv's Python for PyYAML, and the base as kustomize
rendered it: `kube_play.py target/k8s/base.yaml`; without an argument it reads
deploy/kubernetes/base/deployment.yaml, which the base renders unchanged).

The manifest is changed only where podman requires, each change named here:
  - one replica on the host's network, on free loopback ports (podman's pods have no Service
    or cluster network; host networking allows no port mappings, so the container's `ports`
    go and the probes name the admin port by number);
  - the image is the one scripts/build-image built (`partner-api:<version>`, local);
  - `optional: false`, Kubernetes' default, written out on the secret references (podman 4.3
    dereferences it unchecked and panics when it is absent);
  - the TLS Secret is a podman secret: a Secret manifest whose `data` holds the PEM text as
    it is (podman 4.3 reads `data` without base64-decoding it). The base has no other Secret
    (Redis is the `redis` component's, not run here: the service limits in process).
Every pod is taken down and every secret removed at the end; every wait is bounded.
"""

import json
import os
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.request

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "target", "image")
CONF = os.path.join(ROOT, "deploy", "container", "containers.conf")
MANIFEST = os.path.join(ROOT, "deploy", "kubernetes", "base", "deployment.yaml")


def say(message):
    print(f"check-kube: {message}", flush=True)


def fail(message):
    print(f"check-kube: FAILED: {message}", file=sys.stderr, flush=True)
    sys.exit(1)


def podman(*argv, check=True):
    return subprocess.run(
        ["podman", "--root", os.path.join(OUT, "storage"), "--runroot", os.path.join(OUT, "run"),
         "--storage-driver", "vfs", *argv],
        env=dict(os.environ, CONTAINERS_CONF=CONF), check=check, capture_output=True, text=True)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def get(url, context=None):
    try:
        with urllib.request.urlopen(url, timeout=3, context=context) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()
    except OSError:
        return None, ""


def adapted(deployment, api, admin, image):
    spec = deployment["spec"]
    spec["replicas"] = 1
    pod = spec["template"]["spec"]
    pod["hostNetwork"] = True
    container = pod["containers"][0]
    container["image"] = image
    container.pop("ports", None)
    for variable in container["env"]:
        if variable["name"] == "PARTNER_API_BIND":
            variable["value"] = f"127.0.0.1:{api}"
        elif variable["name"] == "PARTNER_API_ADMIN_BIND":
            variable["value"] = f"127.0.0.1:{admin}"
        elif variable["name"] == "PARTNER_API_PUBLIC_URL":
            variable["value"] = f"https://localhost:{api}"
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        container[probe]["httpGet"]["port"] = admin
    # podman 4.3 reads `optional` of a secret without checking it is there (it panics);
    # Kubernetes' default, false, is written out.
    for volume in pod["volumes"]:
        if "secret" in volume:
            volume["secret"]["optional"] = False
    for variable in container["env"]:
        if "secretKeyRef" in variable.get("valueFrom", {}):
            variable["valueFrom"]["secretKeyRef"]["optional"] = False
    return deployment


def main():
    version = next(line.split('"')[1] for line in open(os.path.join(ROOT, "Cargo.toml"))
                   if line.startswith("version = "))
    image = f"localhost/partner-api:{version}"
    if podman("image", "exists", image, check=False).returncode != 0:
        fail(f"{image} is not built: run scripts/build-image first")
    work = tempfile.mkdtemp(prefix="partner-api-check-kube-")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:P-256", "-nodes", "-days", "30", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
                    "-keyout", "key.pem", "-out", "cert.pem"],
                   cwd=work, check=True, capture_output=True)
    tls = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "partner-api-tls"},
           "type": "kubernetes.io/tls",
           "data": {"tls.crt": open(os.path.join(work, "cert.pem")).read(),
                    "tls.key": open(os.path.join(work, "key.pem")).read()}}
    api, admin = free_port(), free_port()
    manifest = sys.argv[1] if len(sys.argv) > 1 else MANIFEST
    deployment = next(doc for doc in yaml.safe_load_all(open(manifest))
                      if doc and doc["kind"] == "Deployment")
    play = os.path.join(work, "play.yaml")
    with open(play, "w") as out:
        yaml.safe_dump(adapted(deployment, api, admin, image), out)
    secrets = {"partner-api-tls": tls}
    try:
        for name, content in secrets.items():
            path = os.path.join(work, f"{name}.json")
            with open(path, "w") as out:
                json.dump(content, out)
            podman("secret", "rm", name, check=False)
            podman("secret", "create", name, path)
        podman("volume", "rm", "--force", "partner-api-tls", check=False)
        played = podman("kube", "play", play, check=False)
        if played.returncode != 0:
            fail(f"podman kube play: {played.stderr}")
        probe(api, admin, work)
    finally:
        podman("kube", "down", play, check=False)
        podman("volume", "rm", "--force", "partner-api-tls", check=False)
        for name in secrets:
            podman("secret", "rm", name, check=False)


def probe(api, admin, work):
    deadline = time.monotonic() + 30
    while get(f"http://127.0.0.1:{admin}/readyz")[0] != 200:
        if time.monotonic() > deadline:
            logs = podman("logs", "partner-api-pod-0-partner-api", check=False)
            fail(f"the pod is not ready within 30 s:\n{logs.stdout[-2000:]}{logs.stderr[-2000:]}")
        time.sleep(0.2)
    context = ssl.create_default_context(cafile=os.path.join(work, "cert.pem"))
    status, body = get(f"https://localhost:{api}/v1/ping", context)
    if status != 200 or '"pong":true' not in body.replace(" ", ""):
        fail(f"/v1/ping: {status} {body}")
    if get(f"http://127.0.0.1:{admin}/livez")[0] != 200:
        fail("/livez is not 200")
    state = json.loads(podman("inspect", "partner-api-pod-0-partner-api").stdout)[0]
    host = state["HostConfig"]
    added = host.get("CapAdd") or []
    kept = set(state.get("EffectiveCaps") or [])
    if not host.get("ReadonlyRootfs") or added or kept or \
            "no-new-privileges" not in (host.get("SecurityOpt") or []) or \
            state["Config"].get("User") != "65532:65532":
        fail(f"the restricted profile is not in force: read-only {host.get('ReadonlyRootfs')}, "
             f"added {added}, effective {sorted(kept)}, {host.get('SecurityOpt')}, "
             f"user {state['Config'].get('User')}")
    say("podman kube play: the Deployment runs (one replica, host network); /v1/ping over TLS "
        "from the Secret volume, /livez, /readyz; read-only root, no capabilities, no new "
        "privileges, uid 65532")
    say("passed")


if __name__ == "__main__":
    main()

# Shared by the scripts: installing the pinned tools and running a release server on loopback.
# Source it; it defines functions only.

# Installs the Node tools from scripts/node/package-lock.json (npm ci: exactly the lockfile),
# once: a stamp holds the lockfile's checksum, and a later call with the same lockfile does
# nothing.
install_node_tools() {
    local stamp=scripts/node/node_modules/.installed-from sum
    sum=$(sha256sum scripts/node/package-lock.json | cut -d' ' -f1)
    if [ "$(cat "$stamp" 2>/dev/null)" = "$sum" ]; then
        return 0
    fi
    echo "==> installing pinned Node tools: npm ci in scripts/node"
    (cd scripts/node && npm ci --no-audit --no-fund --loglevel=error)
    echo "$sum" >"$stamp"
}

# Installs the Python tools pinned in scripts/python/requirements.txt into target/tools-venv,
# once, in the same way.
install_python_tools() {
    local stamp=target/tools-venv/.installed-from sum
    sum=$(sha256sum scripts/python/requirements.txt | cut -d' ' -f1)
    if [ "$(cat "$stamp" 2>/dev/null)" = "$sum" ]; then
        return 0
    fi
    echo "==> installing pinned Python tools into target/tools-venv"
    python3 -m venv target/tools-venv
    target/tools-venv/bin/pip install --quiet --disable-pip-version-check \
        -r scripts/python/requirements.txt
    echo "$sum" >"$stamp"
}

# The release binary, wherever cargo puts it (CARGO_TARGET_DIR is honoured).
RELEASE_BINARY="${CARGO_TARGET_DIR:-target}/release/partner-api"

# A free TCP port on 127.0.0.1.
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_server LOG [ARGS...]: builds the release binary, starts it (or SERVER_BINARY, a
# server taking the same flags: the rehearsal example) on a free loopback port with ARGS, waits (at most 10 s) until it answers, and sets SERVER_PID and SERVER_URL.
# stop_server stops it by its PID; callers trap it on EXIT.
start_server() {
    local log=$1
    shift
    if [ "${PARTNER_API_PREBUILT:-}" != 1 ]; then
        echo "==> building the release binary"
        cargo build --release --locked --quiet
    fi
    local port
    port=$(free_port)
    # With a certificate the server speaks HTTPS; readiness is probed on loopback without
    # verifying it (the callers check the certificate themselves).
    local probe=()
    SERVER_URL="http://127.0.0.1:$port"
    if [[ " $* " == *" --tls-cert "* ]]; then
        SERVER_URL="https://localhost:$port"
        probe=(--insecure-localhost)
    fi
    # The admin listener on a free port (the default one may be taken), no shutdown delay
    # (nothing balances traffic to these servers), and the server's own URL as its public URL,
    # so that the documents it serves name it as their server (a client generated from them
    # reaches it by default) and doc_url points into it; a caller's own flags win.
    PARTNER_API_ADMIN_BIND="${PARTNER_API_ADMIN_BIND:-127.0.0.1:0}" \
        PARTNER_API_SHUTDOWN_DELAY_SECS="${PARTNER_API_SHUTDOWN_DELAY_SECS:-0}" \
        PARTNER_API_PUBLIC_URL="${PARTNER_API_PUBLIC_URL:-$SERVER_URL}" \
        "${SERVER_BINARY:-$RELEASE_BINARY}" --bind "127.0.0.1:$port" "$@" >"$log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 100); do
        if "$RELEASE_BINARY" healthcheck --url "$SERVER_URL" "${probe[@]}" --timeout 1 >/dev/null 2>&1; then
            echo "==> partner-api (pid $SERVER_PID) serving at $SERVER_URL, log in $log"
            return 0
        fi
        sleep 0.1
    done
    echo "the server did not answer within 10 s; its log:" >&2
    cat "$log" >&2
    return 1
}

stop_server() {
    if [ -n "${SERVER_PID:-}" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
        SERVER_PID=
    fi
}
